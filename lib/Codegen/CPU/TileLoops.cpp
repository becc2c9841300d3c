//===- TileLoops.cpp - Loops over tiles and fused tiles -------------------===//

#include "TileLoops.h"

#include "LoweringStrategy.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/RegionUtils.h"

using namespace mlir;

int64_t fuse::vectorLanes(Type elementType, unsigned vectorBits) {
  return std::max<int64_t>(
      1,
      vectorBits / std::max<unsigned>(8, elementType.getIntOrFloatBitWidth()));
}

int64_t fuse::vectorRegisters(unsigned vectorBits) {
  return vectorBits >= 512 ? 32 : 16;
}

SmallVector<Value> fuse::buildTileLoop(OpBuilder &b, Location loc,
                                       int64_t lower, int64_t upper,
                                       int64_t step, ValueRange inits,
                                       TileLoopBodyN body) {
  auto index = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  auto loop = scf::ForOp::create(
      b, loc, index(lower), index(upper), index(step), inits,
      [&](OpBuilder &b, Location, Value iv, ValueRange args) {
        scf::YieldOp::create(b, loc, body(b, iv, args));
      });
  return SmallVector<Value>(loop.getResults());
}

Value fuse::buildTileLoop(OpBuilder &b, Location loc, int64_t lower,
                          int64_t upper, int64_t step, Value init,
                          TileLoopBody body) {
  return buildTileLoop(b, loc, lower, upper, step, ValueRange{init},
                       [&](OpBuilder &b, Value iv, ValueRange args) {
                         return SmallVector<Value>{body(b, iv, args[0])};
                       })
      .front();
}

Value fuse::paddingValue(tensor::PadOp pad) {
  Value value = pad.getConstantPaddingValue();
  if (!value || pad.getRegion().isAncestor(value.getParentRegion()))
    return {};
  return value;
}

void fuse::replaceOperand(OpOperand &operand, Value value) {
  Operation *slice = operand.get().getDefiningOp();
  operand.set(value);
  if (slice && slice->use_empty())
    slice->erase();
}

std::optional<unsigned>
fuse::matchElementwiseConsumer(Operation *producer,
                               linalg::GenericOp &consumer) {
  if (producer->getNumResults() != 1)
    return std::nullopt;
  Value result = producer->getResult(0);
  if (!result.hasOneUse())
    return std::nullopt;
  OpOperand &use = *result.use_begin();
  auto generic = dyn_cast<linalg::GenericOp>(use.getOwner());
  // In the producer's block: a consumer in a loop or a branch would be
  // computed as often as the producer instead.
  if (!generic || generic->getBlock() != producer->getBlock() ||
      !generic.hasPureTensorSemantics() || generic.hasDynamicShape() ||
      !generic.isDpsInput(&use) ||
      generic.getNumParallelLoops() != generic.getNumLoops() ||
      !generic.getMatchingIndexingMap(&use).isIdentity())
    return std::nullopt;
  ArrayRef<int64_t> shape = cast<ShapedType>(result.getType()).getShape();
  for (OpOperand &init : generic.getDpsInitsMutable())
    if (!generic.getMatchingIndexingMap(&init).isIdentity() ||
        cast<ShapedType>(init.get().getType()).getShape() != shape)
      return std::nullopt;
  consumer = generic;
  return use.getOperandNumber();
}

Operation *fuse::fusedNestAnchor(Operation *producer,
                                 linalg::GenericOp consumer,
                                 DominanceInfo &dominance) {
  if (!consumer)
    return producer;
  // Its operands, and the values its body captures (an optimizer's
  // per-call scalars).
  SetVector<Value> read(consumer->operand_begin(), consumer->operand_end());
  getUsedValuesDefinedAbove(consumer->getRegions(), read);
  for (Value value : read)
    if (value != producer->getResult(0) &&
        !dominance.properlyDominates(value, producer))
      return consumer;
  return producer;
}

FailureOr<SmallVector<Value>> fuse::buildFusedTile(
    OpBuilder &b, Location loc, TilingInterface producer, linalg::FillOp fill,
    ArrayRef<OpFoldResult> producerOffsets,
    ArrayRef<OpFoldResult> producerSizes, linalg::GenericOp consumer,
    unsigned consumerInput, ArrayRef<OpFoldResult> offsets,
    ArrayRef<OpFoldResult> sizes, ValueRange outs) {
  SmallVector<OpFoldResult> unit(offsets.size(), b.getIndexAttr(1));
  SmallVector<Value> outTiles;
  for (Value out : outs)
    outTiles.push_back(
        tensor::ExtractSliceOp::create(b, loc, out, offsets, sizes, unit));
  // The consumer's tile reads the accumulator in cache and writes the
  // outputs' tiles; without one, the producer accumulates in its tile.
  Value init = outTiles.front();
  if (consumer)
    init = tensor::EmptyOp::create(
        b, loc, sizes, getElementTypeOrSelf(producer->getResult(0).getType()));
  auto zero = linalg::FillOp::create(b, loc, fill.value(), init);
  markRegisterTile(zero);
  Value acc = zero->getResult(0);
  FailureOr<TilingResult> tiled =
      producer.getTiledImplementation(b, producerOffsets, producerSizes);
  if (failed(tiled))
    return failure();
  auto tile = cast<linalg::LinalgOp>(tiled->tiledOps.front());
  replaceOperand(tile.getDpsInitsMutable()[0], acc);
  SmallVector<Value> results = {tile->getResult(0)};
  if (consumer) {
    FailureOr<TilingResult> finished =
        cast<TilingInterface>(consumer.getOperation())
            .getTiledImplementation(b, offsets, sizes);
    if (failed(finished))
      return failure();
    auto finishing = cast<linalg::LinalgOp>(finished->tiledOps.front());
    // The tile reads the producer's tile, not a slice of its result, and
    // writes slices of the carried outputs.
    replaceOperand(finishing->getOpOperand(consumerInput), results.front());
    for (auto [operand, outTile] :
         llvm::zip(finishing.getDpsInitsMutable(), outTiles))
      replaceOperand(operand, outTile);
    results.assign(finishing->result_begin(), finishing->result_end());
  }
  SmallVector<Value> next;
  for (auto [result, out] : llvm::zip(results, outs))
    next.push_back(tensor::InsertSliceOp::create(b, loc, result, out, offsets,
                                                 sizes, unit));
  return next;
}

scf::ForallOp fuse::buildBlockLoop(RewriterBase &rewriter, Location loc,
                                   int64_t size, int64_t block, unsigned dim,
                                   ValueRange outs, BlockLoopBody body) {
  auto forall = scf::ForallOp::create(
      rewriter, loc, ArrayRef<OpFoldResult>{rewriter.getIndexAttr(0)},
      ArrayRef<OpFoldResult>{rewriter.getIndexAttr(size)},
      ArrayRef<OpFoldResult>{rewriter.getIndexAttr(block)}, outs, std::nullopt);
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPointToStart(forall.getBody());
  Value first = forall.getInductionVars().front();
  SmallVector<Value> results =
      body(rewriter, first, forall.getRegionIterArgs());
  // The block of each result, inserted where it belongs.
  SmallVector<Value> slices;
  SmallVector<SmallVector<OpFoldResult>> offsetsOf, sizesOf;
  for (Value result : results) {
    auto type = cast<RankedTensorType>(result.getType());
    SmallVector<OpFoldResult> offsets(type.getRank(), rewriter.getIndexAttr(0));
    offsets[dim] = first;
    SmallVector<OpFoldResult> sizes =
        getAsIndexOpFoldResult(rewriter.getContext(), type.getShape());
    sizes[dim] = rewriter.getIndexAttr(block);
    SmallVector<OpFoldResult> unit(type.getRank(), rewriter.getIndexAttr(1));
    slices.push_back(tensor::ExtractSliceOp::create(rewriter, loc, result,
                                                    offsets, sizes, unit));
    offsetsOf.push_back(std::move(offsets));
    sizesOf.push_back(std::move(sizes));
  }
  rewriter.setInsertionPointToStart(forall.getTerminator().getBody());
  for (auto [slice, shared, offsets, sizes] :
       llvm::zip(slices, forall.getRegionIterArgs(), offsetsOf, sizesOf))
    tensor::ParallelInsertSliceOp::create(
        rewriter, loc, slice, shared, offsets, sizes,
        SmallVector<OpFoldResult>(offsets.size(), rewriter.getIndexAttr(1)));
  return forall;
}

SmallVector<linalg::LinalgOp>
fuse::splitWithFills(RewriterBase &rewriter, linalg::LinalgOp op,
                     ArrayRef<SplitPoint> points) {
  auto fill = op.getDpsInits()[0].getDefiningOp<linalg::FillOp>();
  if (fill && fill->getResult(0).hasOneUse())
    rewriter.modifyOpInPlace(
        op, [&] { op.getDpsInitsMutable()[0].set(fill.getDpsInits()[0]); });
  else
    fill = {};
  // Each part, and whether its reduction starts at 0.
  SmallVector<std::pair<TilingInterface, bool>> parts = {
      {cast<TilingInterface>(op.getOperation()), true}};
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  for (SplitPoint point : points) {
    bool reduction = iterators[point.dim] == utils::IteratorType::reduction;
    SmallVector<std::pair<TilingInterface, bool>> next;
    for (auto [part, first] : parts) {
      rewriter.setInsertionPoint(part);
      auto [low, high] = linalg::splitOp(rewriter, part, point.dim,
                                         rewriter.getIndexAttr(point.position));
      assert(low && "a static linalg op on tensors always splits");
      next.push_back({low, first});
      if (high)
        next.push_back({high, first && !reduction});
    }
    parts = std::move(next);
  }
  SmallVector<linalg::LinalgOp> result;
  for (auto [part, first] : parts) {
    auto linalgPart = cast<linalg::LinalgOp>(part.getOperation());
    if (fill && first) {
      rewriter.setInsertionPoint(linalgPart);
      OpOperand &init = linalgPart.getDpsInitsMutable()[0];
      Value filled = linalg::FillOp::create(rewriter, fill.getLoc(),
                                            fill.getDpsInputs()[0], init.get())
                         ->getResult(0);
      rewriter.modifyOpInPlace(linalgPart, [&] { init.set(filled); });
    }
    result.push_back(linalgPart);
  }
  if (fill)
    rewriter.eraseOp(fill);
  return result;
}
