//===- ImageLoopFusion.cpp - Fusing loops over a batch's images -----------===//

#include "ImageLoopFusion.h"

#include "fuse/Codegen/Passes.h"

#include "PassDetail.h"

#include "LoweringStrategy.h"
#include "TileLoops.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/TilingInterface.h"
#include "llvm/ADT/MapVector.h"

namespace fuse {
#define GEN_PASS_DEF_FUSEIMAGELOOPFUSION
#include "fuse/Codegen/Passes.h.inc"
} // namespace fuse

using namespace mlir;

void fuse::markImageLoop(scf::ForOp loop) {
  loop->setAttr(kImageLoopAttrName, UnitAttr::get(loop.getContext()));
}

Value fuse::storedImage(scf::ForOp loop, unsigned i) {
  auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
  auto insert = yield.getOperand(i).getDefiningOp<tensor::InsertSliceOp>();
  if (!insert || insert.getDest() != loop.getRegionIterArgs()[i] ||
      !insert.hasUnitStride() ||
      insert.getSourceType().getRank() != insert.getType().getRank())
    return {};
  SmallVector<OpFoldResult> offsets = insert.getMixedOffsets();
  SmallVector<OpFoldResult> sizes = insert.getMixedSizes();
  if (dyn_cast<Value>(offsets[0]) != loop.getInductionVar() ||
      getConstantIntValue(sizes[0]) != 1)
    return {};
  for (int64_t d = 1; d < insert.getType().getRank(); ++d)
    if (!isZeroInteger(offsets[d]) ||
        getConstantIntValue(sizes[d]) != insert.getType().getDimSize(d))
      return {};
  return insert.getSource();
}

namespace {

bool isImage(OpFoldResult offset, Value iv) {
  return dyn_cast<Value>(offset) == iv;
}

/// Whether `slice` reads one image of its source: the one at `iv`.
bool readsImage(tensor::ExtractSliceOp slice, Value iv) {
  return isImage(slice.getMixedOffsets()[0], iv) &&
         getConstantIntValue(slice.getMixedSizes()[0]) == 1;
}

bool sameConstant(Value a, Value b) {
  std::optional<int64_t> value = getConstantIntValue(a);
  return value && value == getConstantIntValue(b);
}

/// Whether `consumer` (after `producer` in its block) reads `producer`'s
/// results, each read one that `readsImage` accepts and of an image that
/// `producer` stores, and nothing between the two or before reads them.
bool readsStoredImages(scf::ForOp producer, Operation *consumer,
                       llvm::function_ref<bool(OpOperand &)> readsImage) {
  bool consumes = false;
  for (OpResult result : producer->getResults()) {
    for (OpOperand &use : result.getUses()) {
      Operation *user = use.getOwner();
      if (user == consumer || consumer->isProperAncestor(user)) {
        if (!readsImage(use) ||
            !fuse::storedImage(producer, result.getResultNumber()))
          return false;
        consumes = true;
        continue;
      }
      Operation *ancestor = consumer->getBlock()->findAncestorOpInBlock(*user);
      if (!ancestor || !consumer->isBeforeInBlock(ancestor))
        return false;
    }
  }
  return consumes;
}

/// Whether `consumer`, an image loop after `producer` in its block, can take
/// `producer`'s iterations into its own: it reads producer's results only as
/// images that producer stores, one at its own image, and nothing between
/// the two or before reads them.
bool canFuse(scf::ForOp producer, scf::ForOp consumer) {
  if (producer->getBlock() != consumer->getBlock() ||
      !producer->isBeforeInBlock(consumer) ||
      !sameConstant(producer.getLowerBound(), consumer.getLowerBound()) ||
      !sameConstant(producer.getUpperBound(), consumer.getUpperBound()) ||
      !sameConstant(producer.getStep(), consumer.getStep()))
    return false;
  Value iv = consumer.getInductionVar();
  return readsStoredImages(producer, consumer, [&](OpOperand &use) {
    auto slice = dyn_cast<tensor::ExtractSliceOp>(use.getOwner());
    return slice && readsImage(slice, iv);
  });
}

/// Whether `op` computes image n of its output from image n of each
/// operand that has images: its first loop is parallel and indexes only the
/// first dim of its output and of those operands.
bool computesImageByImage(linalg::LinalgOp op) {
  if (!op.hasPureTensorSemantics() || op.hasDynamicShape() ||
      op->getNumResults() != 1 || op.getNumDpsInits() != 1 ||
      op.getNumLoops() == 0 ||
      op.getIteratorTypesArray()[0] != utils::IteratorType::parallel)
    return false;
  AffineExpr image = getAffineDimExpr(0, op.getContext());
  for (OpOperand &operand : op->getOpOperands()) {
    AffineMap map = op.getMatchingIndexingMap(&operand);
    bool isInit = op.isDpsInit(&operand);
    if (!isInit && !map.isFunctionOfDim(0))
      continue;
    if (map.getNumResults() == 0 || map.getResult(0) != image)
      return false;
    for (AffineExpr result : map.getResults().drop_front())
      if (result.isFunctionOfDim(0))
        return false;
  }
  return true;
}

/// Whether `consumer`, a linalg op after `producer` in its block, can compute
/// each of its images in producer's iterations (see computesImageByImage):
/// it reads images that producer stores, as operands, and nothing between
/// the two or before reads them.
bool canFuse(scf::ForOp producer, linalg::LinalgOp consumer) {
  if (producer->getBlock() != consumer->getBlock() ||
      !producer->isBeforeInBlock(consumer) || !computesImageByImage(consumer) ||
      getConstantIntValue(producer.getLowerBound()) != 0 ||
      getConstantIntValue(producer.getStep()) != 1 ||
      getConstantIntValue(producer.getUpperBound()) !=
          consumer.getStaticLoopRanges()[0])
    return false;
  // The operand is indexed by the image in its first dim, not read whole.
  AffineExpr image = getAffineDimExpr(0, consumer.getContext());
  return readsStoredImages(producer, consumer, [&](OpOperand &use) {
    if (use.getOwner() != consumer || !consumer.isDpsInput(&use))
      return false;
    AffineMap map = consumer.getMatchingIndexingMap(&use);
    return map.getNumResults() > 0 && map.getResult(0) == image;
  });
}

/// Whether every use of `iterArg` in its loop's body, but `store`, is a
/// slice that only a linalg op's output takes, without reading it: then
/// those outputs can go to a buffer of one image instead.
bool onlyWrittenThrough(BlockArgument iterArg, Operation *store) {
  for (Operation *user : iterArg.getUsers()) {
    if (user == store)
      continue;
    auto slice = dyn_cast<tensor::ExtractSliceOp>(user);
    if (!slice || !slice.getType().hasStaticShape())
      return false;
    for (OpOperand &use : slice->getUses()) {
      auto writer = dyn_cast<linalg::LinalgOp>(use.getOwner());
      if (!writer || !writer.isDpsInit(&use) ||
          writer.payloadUsesValueFromOperand(&use))
        return false;
    }
  }
  return true;
}

/// The body that a consumer of `producer` adds to the fused iteration: from
/// the image and the consumer's carried tensors, what it yields.
using ConsumerBody = llvm::function_ref<FailureOr<SmallVector<Value>>(
    OpBuilder &, Location, Value, ValueRange)>;

/// One loop at `consumer` (a loop or an op after `producer`, taking
/// `consumerInits`), whose iteration runs `producer`'s body and then
/// `body`, which reads the images `producer`'s body has just stored through
/// slices of its results. Replaces both, unless `body` fails.
FailureOr<scf::ForOp> fuseInto(RewriterBase &rewriter, scf::ForOp producer,
                               Operation *consumer, ValueRange consumerInits,
                               ConsumerBody body) {
  unsigned count = producer.getNumRegionIterArgs();
  SmallVector<Value> inits(producer.getInitArgs());
  llvm::append_range(inits, consumerInits);
  SmallVector<Value> images(count);
  bool failedBody = false;
  rewriter.setInsertionPoint(consumer);
  auto fused = scf::ForOp::create(
      rewriter, consumer->getLoc(), producer.getLowerBound(),
      producer.getUpperBound(), producer.getStep(), inits,
      [&](OpBuilder &b, Location loc, Value iv, ValueRange carried) {
        IRMapping map;
        map.map(producer.getInductionVar(), iv);
        map.map(producer.getRegionIterArgs(), carried.take_front(count));
        for (Operation &op : producer.getBody()->without_terminator())
          b.clone(op, map);
        SmallVector<Value> yields;
        for (Value v : producer.getBody()->getTerminator()->getOperands())
          yields.push_back(map.lookupOrDefault(v));
        for (unsigned i = 0; i < count; ++i)
          if (Value image = fuse::storedImage(producer, i))
            images[i] = map.lookupOrDefault(image);
        FailureOr<SmallVector<Value>> consumed =
            body(b, loc, iv, carried.drop_front(count));
        if (failed(consumed)) {
          failedBody = true;
          yields.assign(carried.begin(), carried.end());
        } else {
          llvm::append_range(yields, *consumed);
        }
        scf::YieldOp::create(b, loc, yields);
      });
  if (failedBody) {
    rewriter.eraseOp(fused);
    return failure();
  }
  fuse::markImageLoop(fused);

  // The consumer's reads of an image take it from the producer's body.
  SmallVector<tensor::ExtractSliceOp> reads;
  fused.walk([&](tensor::ExtractSliceOp slice) {
    if (auto result = dyn_cast<OpResult>(slice.getSource());
        result && result.getOwner() == producer)
      reads.push_back(slice);
  });
  for (tensor::ExtractSliceOp slice : reads) {
    SmallVector<OpFoldResult> offsets = slice.getMixedOffsets();
    offsets[0] = rewriter.getIndexAttr(0);
    rewriter.setInsertionPoint(slice);
    rewriter.replaceOpWithNewOp<tensor::ExtractSliceOp>(
        slice, slice.getType(),
        images[cast<OpResult>(slice.getSource()).getResultNumber()], offsets,
        slice.getMixedSizes(), slice.getMixedStrides());
  }
  rewriter.replaceOp(producer, fused.getResults().take_front(count));
  rewriter.replaceOp(consumer, fused.getResults().drop_front(count));

  // A result that nothing reads any more is not stored: its images go to a
  // buffer of one image (the loop-carried tensor then goes to
  // canonicalization).
  auto yield = cast<scf::YieldOp>(fused.getBody()->getTerminator());
  for (unsigned i = 0; i < count; ++i) {
    BlockArgument iterArg = fused.getRegionIterArgs()[i];
    Operation *store = yield.getOperand(i).getDefiningOp();
    if (!images[i] || !fused.getResult(i).use_empty() || !store->hasOneUse() ||
        !onlyWrittenThrough(iterArg, store))
      continue;
    rewriter.modifyOpInPlace(yield, [&] { yield->setOperand(i, iterArg); });
    rewriter.eraseOp(store);
    for (Operation *user : llvm::make_early_inc_range(iterArg.getUsers())) {
      if (user == yield)
        continue;
      rewriter.setInsertionPoint(user);
      rewriter.replaceOpWithNewOp<bufferization::AllocTensorOp>(
          user, cast<RankedTensorType>(user->getResult(0).getType()),
          ValueRange{});
    }
  }
  return fused;
}

/// Computes image n of `consumer` in iteration n of `producer` (see
/// canFuse): its tile of one image, its output filled there if it was a
/// fill.
FailureOr<scf::ForOp> fuseOp(RewriterBase &rewriter, scf::ForOp producer,
                             linalg::LinalgOp consumer) {
  auto fill = consumer.getDpsInits()[0].getDefiningOp<linalg::FillOp>();
  Value init = fill ? fill.getDpsInits()[0] : consumer.getDpsInits()[0];
  // Output that each image overwrites gets its own buffer: an empty tensor
  // that another op's output shares (CSE merges them) would have to be
  // copied for the two loop-carried values.
  if (fill ||
      !consumer.payloadUsesValueFromOperand(consumer.getDpsInitOperand(0))) {
    rewriter.setInsertionPoint(consumer);
    init = bufferization::AllocTensorOp::create(
        rewriter, consumer.getLoc(), cast<RankedTensorType>(init.getType()),
        ValueRange{});
  }
  FailureOr<scf::ForOp> fused = fuseInto(
      rewriter, producer, consumer, init,
      [&](OpBuilder &b, Location loc, Value iv,
          ValueRange carried) -> FailureOr<SmallVector<Value>> {
        SmallVector<OpFoldResult> offsets(consumer.getNumLoops(),
                                          b.getIndexAttr(0));
        SmallVector<OpFoldResult> sizes = getAsIndexOpFoldResult(
            b.getContext(), consumer.getStaticLoopRanges());
        offsets[0] = iv;
        sizes[0] = b.getIndexAttr(1);
        FailureOr<TilingResult> tiled =
            cast<TilingInterface>(consumer.getOperation())
                .getTiledImplementation(b, offsets, sizes);
        if (failed(tiled) || tiled->tiledOps.size() != 1)
          return failure();
        auto tile = cast<linalg::LinalgOp>(tiled->tiledOps.front());
        OpOperand &tileInit = tile.getDpsInitsMutable()[0];
        auto slice = tileInit.get().getDefiningOp<tensor::ExtractSliceOp>();
        if (!slice)
          return failure();
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPoint(tile);
        Value dest = tensor::ExtractSliceOp::create(
            b, loc, carried[0], slice.getMixedOffsets(), slice.getMixedSizes(),
            slice.getMixedStrides());
        if (fill)
          dest =
              linalg::FillOp::create(b, loc, fill.value(), dest)->getResult(0);
        SmallVector<OpFoldResult> sliceOffsets = slice.getMixedOffsets(),
                                  sliceSizes = slice.getMixedSizes(),
                                  sliceStrides = slice.getMixedStrides();
        fuse::replaceOperand(tileInit, dest);
        b.setInsertionPointAfter(tile);
        return SmallVector<Value>{tensor::InsertSliceOp::create(
            b, loc, tile->getResult(0), carried[0], sliceOffsets, sliceSizes,
            sliceStrides)};
      });
  if (succeeded(fused) && fill && fill->use_empty())
    rewriter.eraseOp(fill);
  return fused;
}

/// Fuses `producer` into `consumer`, another image loop (see canFuse).
scf::ForOp fuseLoops(RewriterBase &rewriter, scf::ForOp producer,
                     scf::ForOp consumer) {
  return *fuseInto(
      rewriter, producer, consumer, consumer.getInitArgs(),
      [&](OpBuilder &b, Location loc, Value iv,
          ValueRange carried) -> FailureOr<SmallVector<Value>> {
        IRMapping map;
        map.map(consumer.getInductionVar(), iv);
        map.map(consumer.getRegionIterArgs(), carried);
        for (Operation &op : consumer.getBody()->without_terminator())
          b.clone(op, map);
        SmallVector<Value> yields;
        for (Value v : consumer.getBody()->getTerminator()->getOperands())
          yields.push_back(map.lookupOrDefault(v));
        return yields;
      });
}

/// One fusion into or of an image loop of `func`, if there is one.
bool fuseOnce(RewriterBase &rewriter, func::FuncOp func,
              llvm::DenseSet<Operation *> &unfusable) {
  SmallVector<scf::ForOp> loops;
  func.walk([&](scf::ForOp loop) {
    if (loop->hasAttr(fuse::kImageLoopAttrName))
      loops.push_back(loop);
  });
  for (scf::ForOp producer : loops) {
    for (scf::ForOp consumer : loops) {
      if (producer != consumer && canFuse(producer, consumer)) {
        fuseLoops(rewriter, producer, consumer);
        return true;
      }
    }
    for (Operation *user : producer->getUsers()) {
      auto op = dyn_cast<linalg::LinalgOp>(user);
      if (!op || unfusable.contains(op) || !canFuse(producer, op))
        continue;
      if (succeeded(fuseOp(rewriter, producer, op)))
        return true;
      unfusable.insert(op);
    }
  }
  return false;
}

/// The image loop around `op` whose induction variable is `index`, if any.
scf::ForOp imageLoopOf(Operation *op, Value index) {
  for (auto loop = op->getParentOfType<scf::ForOp>(); loop;
       loop = loop->getParentOfType<scf::ForOp>())
    if (loop.getInductionVar() == index)
      return loop->hasAttr(fuse::kImageLoopAttrName) ? loop : nullptr;
  return nullptr;
}

/// Recomputes `producer` (a linalg op that computes image by image) in each
/// image loop that reads its result, on the loop's image alone, instead of
/// for the batch before the loops, when every read of the result (directly
/// or through one collapse_shape that keeps the images apart) is an
/// extract_slice or a vector read of one image at an image loop's
/// iteration. The batch-sized result is then never stored, and each loop
/// reads its image from L2. Only for element-wise producers that read at
/// most half the bytes they write (a pool's gradient, which the two
/// gradients of the convolution before the pool read).
bool fuseProducer(RewriterBase &rewriter, linalg::LinalgOp producer) {
  if (producer->getNumResults() != 1 || !computesImageByImage(producer) ||
      producer.getNumParallelLoops() != producer.getNumLoops() ||
      producer.payloadUsesValueFromOperand(producer.getDpsInitOperand(0)))
    return false;
  auto bytes = [](Value v) -> std::optional<int64_t> {
    auto type = cast<RankedTensorType>(v.getType());
    if (!type.getElementType().isIntOrFloat())
      return std::nullopt;
    return type.getNumElements() *
           int64_t(llvm::divideCeil(type.getElementTypeBitWidth(), 8));
  };
  int64_t read = 0;
  for (Value input : producer.getDpsInputs()) {
    if (!isa<RankedTensorType>(input.getType()))
      continue;
    std::optional<int64_t> size = bytes(input);
    if (!size)
      return false;
    read += *size;
  }
  std::optional<int64_t> written = bytes(producer->getResult(0));
  if (!written || 2 * read > *written)
    return false;

  Value result = producer->getResult(0);
  tensor::CollapseShapeOp collapse;
  if (result.hasOneUse())
    if (auto c = dyn_cast<tensor::CollapseShapeOp>(*result.user_begin());
        c && c.getReassociationIndices().front() == ReassociationIndices{0}) {
      collapse = c;
      result = c.getResult();
    }
  int64_t images = producer.getStaticLoopRanges()[0];
  llvm::MapVector<scf::ForOp, SmallVector<Operation *>> readsByLoop;
  for (Operation *user : result.getUsers()) {
    scf::ForOp loop;
    if (auto slice = dyn_cast<tensor::ExtractSliceOp>(user)) {
      if (getConstantIntValue(slice.getMixedSizes()[0]) == 1)
        if (auto index = dyn_cast<Value>(slice.getMixedOffsets()[0]))
          loop = imageLoopOf(slice, index);
    } else if (auto transfer = dyn_cast<vector::TransferReadOp>(user)) {
      if (transfer.getPermutationMap().isMinorIdentity() &&
          transfer.getVectorType().getRank() <
              cast<ShapedType>(result.getType()).getRank())
        loop = imageLoopOf(transfer, transfer.getIndices()[0]);
    }
    if (!loop || getConstantIntValue(loop.getLowerBound()) != 0 ||
        getConstantIntValue(loop.getStep()) != 1 ||
        getConstantIntValue(loop.getUpperBound()) != images)
      return false;
    readsByLoop[loop].push_back(user);
  }
  if (readsByLoop.empty())
    return false;

  SmallVector<OpFoldResult> offsets(producer.getNumLoops(),
                                    rewriter.getIndexAttr(0));
  SmallVector<OpFoldResult> sizes = getAsIndexOpFoldResult(
      rewriter.getContext(), producer.getStaticLoopRanges());
  sizes[0] = rewriter.getIndexAttr(1);
  // (Should tiling fail for a later loop, the loops done so far keep their
  // per-image copy and the rest read the batch: still correct.)
  for (auto &[loop, reads] : readsByLoop) {
    rewriter.setInsertionPointToStart(loop.getBody());
    Location loc = producer.getLoc();
    offsets[0] = loop.getInductionVar();
    FailureOr<TilingResult> tiled =
        cast<TilingInterface>(producer.getOperation())
            .getTiledImplementation(rewriter, offsets, sizes);
    if (failed(tiled) || tiled->tiledOps.size() != 1)
      return false;
    // The image goes to a buffer of its own, not a slice of the batch.
    auto tile = cast<linalg::LinalgOp>(tiled->tiledOps.front());
    OpOperand &init = tile.getDpsInitsMutable()[0];
    rewriter.setInsertionPoint(tile);
    fuse::replaceOperand(init, bufferization::AllocTensorOp::create(
                                   rewriter, loc,
                                   cast<RankedTensorType>(init.get().getType()),
                                   ValueRange{}));
    rewriter.setInsertionPointAfter(tile);
    Value image = tile->getResult(0);
    if (collapse)
      image = tensor::CollapseShapeOp::create(
          rewriter, loc, image, collapse.getReassociationIndices());
    Value zero;
    for (Operation *user : reads) {
      rewriter.setInsertionPoint(user);
      if (auto slice = dyn_cast<tensor::ExtractSliceOp>(user)) {
        SmallVector<OpFoldResult> readOffsets = slice.getMixedOffsets();
        readOffsets[0] = rewriter.getIndexAttr(0);
        rewriter.replaceOpWithNewOp<tensor::ExtractSliceOp>(
            slice, slice.getType(), image, readOffsets, slice.getMixedSizes(),
            slice.getMixedStrides());
        continue;
      }
      auto transfer = cast<vector::TransferReadOp>(user);
      if (!zero) {
        OpBuilder::InsertionGuard guard(rewriter);
        rewriter.setInsertionPointAfterValue(image);
        zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
      }
      rewriter.modifyOpInPlace(transfer, [&] {
        transfer.getBaseMutable().assign(image);
        transfer.getIndicesMutable()[0].assign(zero);
      });
    }
  }
  if (collapse)
    rewriter.eraseOp(collapse);
  rewriter.eraseOp(producer);
  return true;
}

} // namespace

void fuse::fuseImageLoops(RewriterBase &rewriter, func::FuncOp func) {
  llvm::DenseSet<Operation *> unfusable;
  while (fuseOnce(rewriter, func, unfusable)) {
  }
  SmallVector<linalg::LinalgOp> producers;
  func.walk([&](linalg::LinalgOp op) {
    if (isa<func::FuncOp>(op->getParentOp()))
      producers.push_back(op);
  });
  for (linalg::LinalgOp producer : producers)
    (void)fuseProducer(rewriter, producer);
}

namespace {

struct ImageLoopFusionPass
    : fuse::impl::FuseImageLoopFusionBase<ImageLoopFusionPass> {
  void runOnOperation() override {
    // The per-image tiles get their configs when they are tiled.
    fuse::DropClonedConfigs listener;
    IRRewriter rewriter(&getContext(), &listener);
    fuse::fuseImageLoops(rewriter, getOperation());
  }
};

} // namespace
