//===- MatmulTiling.cpp - Register tiles of unpacked matmuls --------------===//
//
// A matmul whose right-hand side stays in L2 unpacked is tiled into register
// tiles of its output, each accumulating over the whole reduction. Its zero
// fill, and its element-wise consumer when that is the only reader of the
// product, are fused into the tiles: for the weight gradient of a dense
// layer and the optimizer's update of that weight,
//
//   for i, j in tiles:
//     t = fill(0) of a tile-sized tensor
//     t = matmul(x^T[i, :], dy[:, j], t)
//     p[i, j], m[i, j], v[i, j] = update(t, p[i, j], m[i, j], v[i, j])
//
// and the gradient is never written to memory. Sizes without a divisor
// that fills at least half a tile (primes) are split first into a product
// over whole tiles and edge products.
//
//===----------------------------------------------------------------------===//

#include "MatmulTiling.h"

#include "ConvolutionTiling.h"
#include "LoweringStrategy.h"
#include "MatmulPacking.h"
#include "TileLoops.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StructuredOpsUtils.h"

using namespace mlir;

int64_t fuse::batchMatmulTileRows(unsigned vectorBits) {
  return vectorRegisters(vectorBits) / 4;
}

FailureOr<SmallVector<linalg::LinalgOp>>
fuse::splitIntoWholeTiles(RewriterBase &rewriter, linalg::LinalgOp op,
                          unsigned vectorBits) {
  if (!isa<linalg::MatmulOp, linalg::BatchMatmulOp>(op) ||
      !op.hasPureTensorSemantics() || op.hasDynamicShape())
    return failure();
  Type elementType = getElementTypeOrSelf(op.getDpsInits()[0].getType());
  if (!elementType.isIntOrFloat())
    return failure();
  bool batched = isa<linalg::BatchMatmulOp>(op);
  unsigned mDim = batched ? 1 : 0, nDim = mDim + 1;
  int64_t rowTile =
      batched ? batchMatmulTileRows(vectorBits) : microKernelRows(vectorBits);
  int64_t lanes = vectorLanes(elementType, vectorBits);
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (llvm::is_contained(ranges, 0))
    return failure();
  int64_t m = ranges[mDim], n = ranges[nDim];
  // Rows and columns whose best divisor leaves most of a tile unused:
  // whole tiles, then the rest. (A split product's consumer no longer fuses
  // into its tiles, so sizes with a fair divisor stay whole; a matmul's rows
  // are banded when it is tiled instead, which keeps its consumer.)
  int64_t mainM =
      batched && m > rowTile && largestDivisorAtMost(m, rowTile) < rowTile / 2
          ? m / rowTile * rowTile
          : m;
  int64_t mainN = n > lanes && n % lanes != 0 &&
                          largestDivisorAtMost(n, 2 * lanes) < lanes / 2
                      ? n / lanes * lanes
                      : n;
  // An odd number of registers of columns (784 = 49 x 16) would make every
  // tile one register wide, its 12 broadcasts serving 12 FMAs instead of
  // 24: whole tiles of two registers, then one register's edge.
  if (mainN == n && n > 2 * lanes && n % lanes == 0 && (n / lanes) % 2 == 1)
    mainN = n - lanes;
  if (mainM == m && mainN == n)
    return failure();
  SmallVector<SplitPoint> points;
  if (mainN < n)
    points.push_back({nDim, mainN});
  if (mainM < m)
    points.push_back({mDim, mainM});
  return splitWithFills(rewriter, op, points);
}

LogicalResult fuse::tileWithFusedFill(RewriterBase &rewriter,
                                      linalg::LinalgOp op,
                                      ArrayRef<int64_t> sizes) {
  if (!isa<linalg::MatmulOp, linalg::BatchMatmulOp>(op) ||
      !op.getDpsInits()[0].getDefiningOp<linalg::FillOp>() ||
      llvm::is_contained(op.getStaticLoopRanges(), 0))
    return failure();
  MLIRContext *context = op.getContext();
  SmallVector<int64_t> outer(sizes), inner(sizes.size(), 0);
  outer.back() = 0;
  inner.back() = sizes.back();
  scf::SCFTileAndFuseOptions options;
  options.tilingOptions.setTileSizes(getAsIndexOpFoldResult(context, outer));
  options.tilingOptions.setLoopType(scf::SCFTilingOptions::LoopType::ForOp);
  options.setFusionControlFn(
      [](tensor::ExtractSliceOp, OpResult producer, bool isDestination)
          -> std::optional<scf::SCFTileAndFuseOptions::ControlFnResult> {
        if (isDestination && isa<linalg::FillOp>(producer.getOwner()))
          return scf::SCFTileAndFuseOptions::ControlFnResult{};
        return std::nullopt;
      });
  rewriter.setInsertionPoint(op);
  FailureOr<scf::SCFTileAndFuseResult> fused =
      scf::tileConsumerAndFuseProducersUsingSCF(
          rewriter, cast<TilingInterface>(op.getOperation()), options);
  if (failed(fused))
    return failure();
  for (OpResult result : op->getResults())
    rewriter.replaceAllUsesWith(result, fused->replacements.lookup(result));
  rewriter.eraseOp(op);
  // The fill's tile is one register tile: one write of zeros (with K = 1,
  // the read of the accumulators folds into the zeros).
  for (Operation *fill : llvm::drop_begin(fused->tiledAndFusedOps))
    fuse::markRegisterTile(fill);
  auto tile = cast<TilingInterface>(fused->tiledAndFusedOps.front());
  scf::SCFTilingOptions reduction;
  reduction.setTileSizes(getAsIndexOpFoldResult(context, inner));
  reduction.setLoopType(scf::SCFTilingOptions::LoopType::ForOp);
  rewriter.setInsertionPoint(tile);
  FailureOr<scf::SCFTilingResult> tiled =
      scf::tileUsingSCF(rewriter, tile, reduction);
  if (failed(tiled))
    return success();
  rewriter.replaceOp(tile, tiled->replacements);
  return success();
}

LogicalResult fuse::tileMatmulWithConsumer(RewriterBase &rewriter,
                                           linalg::MatmulOp op,
                                           ArrayRef<RowBand> bands,
                                           DominanceInfo &dominance,
                                           int64_t distributedColumns,
                                           int64_t distributedRows) {
  if (!op.hasPureTensorSemantics() || op.hasDynamicShape())
    return failure();
  auto fill = op.getDpsInits()[0].getDefiningOp<linalg::FillOp>();
  linalg::GenericOp consumer;
  std::optional<unsigned> input = matchElementwiseConsumer(op, consumer);
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  // The rows the bands cover: one block's with blocks of rows, else all.
  int64_t rowBlock = distributedRows;
  if (rowBlock != 0 && (ranges[0] % rowBlock != 0 || rowBlock == ranges[0]))
    return failure();
  int64_t bandRows = rowBlock != 0 ? rowBlock : ranges[0];
  if (!fill || !input || llvm::is_contained(ranges, 0) || bands.empty() ||
      bands.front().begin != 0 || bands.back().end != bandRows ||
      llvm::any_of(bands, [&](const RowBand &band) {
        return (band.end - band.begin) % band.rows != 0 ||
               ranges[1] % band.columns != 0;
      }))
    return failure();
  // Blocks for the threads: every output the consumer writes is one [m, n]
  // tensor indexed as the product, so a block is a slice of each.
  bool slicesOutputs =
      llvm::all_of(consumer.getDpsInits(),
                   [&](Value init) {
                     auto type = dyn_cast<RankedTensorType>(init.getType());
                     return type && type.getShape() ==
                                        ArrayRef<int64_t>{ranges[0], ranges[1]};
                   }) &&
      llvm::all_of(consumer.getIndexingMapsArray(),
                   [&](AffineMap map) { return map.getNumDims() == 2; }) &&
      llvm::all_of(consumer.getDpsInitsMutable(), [&](OpOperand &init) {
        return consumer.getMatchingIndexingMap(&init).isIdentity();
      });
  if (rowBlock != 0 && !slicesOutputs)
    return failure();
  int64_t block = rowBlock != 0 ? 0 : distributedColumns;
  if (block != 0 &&
      (ranges[1] % block != 0 || block == ranges[1] || !slicesOutputs ||
       llvm::any_of(bands, [&](const RowBand &band) {
         return block % band.columns != 0;
       })))
    block = 0;

  Location loc = op.getLoc();
  rewriter.setInsertionPoint(fusedNestAnchor(op, consumer, dominance));
  auto producer = cast<TilingInterface>(op.getOperation());
  bool failedTile = false;
  SmallVector<Operation *> nests;
  // The nests of every band over columns [first, first + count) (all of
  // them without distribution) and rows from `firstRow` (0 if null),
  // carrying the consumer's outputs `outs`.
  auto buildNests = [&](OpBuilder &b, Value firstRow, Value first,
                        int64_t count, ValueRange outs) {
    // Each band's nest carries the consumer's outputs on from the last.
    SmallVector<Value> results(outs);
    for (const RowBand &band : bands) {
      results = buildTileLoop(
          b, loc, band.begin, band.end, band.rows, results,
          [&](OpBuilder &b, Value i, ValueRange outs) {
            if (firstRow)
              i = arith::AddIOp::create(b, loc, firstRow, i);
            return buildTileLoop(
                b, loc, 0, count, band.columns, outs,
                [&](OpBuilder &b, Value j, ValueRange outs) {
                  if (first)
                    j = arith::AddIOp::create(b, loc, first, j);
                  SmallVector<OpFoldResult> offsets = {i, j};
                  SmallVector<OpFoldResult> sizes = {
                      b.getIndexAttr(band.rows), b.getIndexAttr(band.columns)};
                  SmallVector<OpFoldResult> productOffsets(offsets);
                  productOffsets.push_back(b.getIndexAttr(0));
                  SmallVector<OpFoldResult> productSizes(sizes);
                  productSizes.push_back(b.getIndexAttr(ranges[2]));
                  FailureOr<SmallVector<Value>> next = buildFusedTile(
                      b, loc, producer, fill, productOffsets, productSizes,
                      consumer, *input, offsets, sizes, outs);
                  if (succeeded(next))
                    return *next;
                  failedTile = true;
                  return SmallVector<Value>(outs);
                });
          });
      nests.push_back(results.front().getDefiningOp());
    }
    return results;
  };
  SmallVector<Value> results;
  if (block == 0 && rowBlock == 0) {
    results = buildNests(rewriter, Value(), Value(), ranges[1],
                         consumer.getDpsInits());
  } else {
    // Each thread's block: the nests over its rows or columns of the shared
    // outputs.
    bool rows = rowBlock != 0;
    scf::ForallOp forall = buildBlockLoop(
        rewriter, loc, ranges[rows ? 0 : 1], rows ? rowBlock : block,
        /*dim=*/rows ? 0 : 1, consumer.getDpsInits(),
        [&](OpBuilder &b, Value first, ValueRange shared) {
          if (rows)
            return buildNests(b, first, Value(), ranges[1], shared);
          return buildNests(b, Value(), first, block, shared);
        });
    results.assign(forall->result_begin(), forall->result_end());
    if (failedTile) {
      rewriter.eraseOp(forall);
      return failure();
    }
    nests = {forall};
  }
  if (failedTile) {
    for (Operation *nest : llvm::reverse(nests))
      rewriter.eraseOp(nest);
    return failure();
  }
  rewriter.replaceOp(consumer, results);
  rewriter.eraseOp(op);
  // The fill is the product's own: the pass gives each product one.
  if (fill->use_empty())
    rewriter.eraseOp(fill);
  return success();
}

/// An element-wise copy of `source` into `dest` (same 2-D shape).
static linalg::GenericOp buildCopy(OpBuilder &b, Location loc, Value source,
                                   Value dest) {
  AffineMap identity = b.getMultiDimIdentityMap(2);
  return linalg::GenericOp::create(
      b, loc, TypeRange{dest.getType()}, source, dest,
      SmallVector<AffineMap>(2, identity),
      SmallVector<utils::IteratorType>(2, utils::IteratorType::parallel),
      [](OpBuilder &b, Location loc, ValueRange args) {
        linalg::YieldOp::create(b, loc, args[0]);
      });
}

FailureOr<linalg::MatmulOp>
fuse::splitReductionIntoBlocks(RewriterBase &rewriter, linalg::MatmulOp op,
                               int64_t block, bool distribute,
                               unsigned vectorBits) {
  if (!op.hasPureTensorSemantics() || op.hasDynamicShape() ||
      op.hasUserDefinedMaps() || block <= 0)
    return failure();
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  int64_t m = ranges[0], n = ranges[1], k = ranges[2];
  auto fill = op.getDpsInits()[0].getDefiningOp<linalg::FillOp>();
  auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
  Type element = resultType.getElementType();
  auto partialType = RankedTensorType::get({m, n}, element);
  if (!fill || !matchPattern(fill.value(), m_AnyZeroFloat()) || m == 0 ||
      n == 0 || k % block != 0 || k / block < 2 || resultType != partialType)
    return failure();
  int64_t blocks = k / block;
  Location loc = op.getLoc();
  Value lhs = op.getDpsInputs()[0], rhs = op.getDpsInputs()[1];
  auto index = [&](int64_t v) -> OpFoldResult {
    return rewriter.getIndexAttr(v);
  };
  SmallVector<OpFoldResult> unit(2, index(1));
  // Block `b`'s partial product, its rows [b m, b m + m) of `partials`.
  linalg::MatmulOp product;
  auto buildBlock =
      [&](OpBuilder &b, Value i,
          Value partials) -> std::pair<Value, SmallVector<OpFoldResult>> {
    Value first = arith::MulIOp::create(
        b, loc, i, arith::ConstantIndexOp::create(b, loc, block));
    // The block's columns of A, packed: read in place (a strided slice with
    // an offset known only in the loop), LLVM moved the tiles' broadcasts
    // of A ahead of their multiply-adds and spilled them.
    Value strided = tensor::ExtractSliceOp::create(
        b, loc, lhs, SmallVector<OpFoldResult>{index(0), first},
        SmallVector<OpFoldResult>{index(m), index(block)}, unit);
    linalg::GenericOp packed = buildCopy(
        b, loc, strided,
        tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{m, block}, element));
    setLoweringConfig(packed, chooseTiledConfig(packed, vectorBits));
    Value w = tensor::ExtractSliceOp::create(
        b, loc, rhs, SmallVector<OpFoldResult>{first, index(0)},
        SmallVector<OpFoldResult>{index(block), index(n)}, unit);
    // The product of a fresh zero fill, copied into the block's rows by an
    // element-wise consumer: tileMatmulWithConsumer then keeps each tile's
    // accumulators in registers and writes them once (accumulated in the
    // slice itself, LLVM kept them in memory).
    Value zeros =
        linalg::FillOp::create(b, loc, fill.value(),
                               ValueRange{tensor::EmptyOp::create(
                                   b, loc, ArrayRef<int64_t>{m, n}, element)})
            .getResult(0);
    product = linalg::MatmulOp::create(b, loc, partialType,
                                       ValueRange{packed.getResult(0), w},
                                       ValueRange{zeros});
    Value row = arith::MulIOp::create(
        b, loc, i, arith::ConstantIndexOp::create(b, loc, m));
    SmallVector<OpFoldResult> offsets = {row, index(0)};
    Value rows = tensor::ExtractSliceOp::create(
        b, loc, partialType, partials, offsets,
        SmallVector<OpFoldResult>{index(m), index(n)}, unit);
    return {buildCopy(b, loc, product.getResult(0), rows).getResult(0),
            offsets};
  };
  rewriter.setInsertionPoint(op);
  Value partials = tensor::EmptyOp::create(
      rewriter, loc, ArrayRef<int64_t>{blocks * m, n}, element);
  Value filled;
  SmallVector<OpFoldResult> sizes = {index(m), index(n)};
  if (distribute) {
    // The threads share the blocks.
    auto forall = scf::ForallOp::create(
        rewriter, loc, ArrayRef<OpFoldResult>{index(0)},
        ArrayRef<OpFoldResult>{index(blocks)}, ArrayRef<OpFoldResult>{index(1)},
        ValueRange{partials}, std::nullopt);
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPointToStart(forall.getBody());
    auto [result, offsets] =
        buildBlock(rewriter, forall.getInductionVars().front(),
                   forall.getRegionIterArgs().front());
    rewriter.setInsertionPointToStart(forall.getTerminator().getBody());
    tensor::ParallelInsertSliceOp::create(rewriter, loc, result,
                                          forall.getRegionIterArgs().front(),
                                          offsets, sizes, unit);
    filled = forall->getResult(0);
  } else {
    // Too little work for the threads: the same blocks, in turn.
    Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
    Value count = arith::ConstantIndexOp::create(rewriter, loc, blocks);
    Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
    auto loop = scf::ForOp::create(
        rewriter, loc, zero, count, one, ValueRange{partials},
        [&](OpBuilder &b, Location loc, Value i, ValueRange carried) {
          auto [result, offsets] = buildBlock(b, i, carried.front());
          Value next = tensor::InsertSliceOp::create(
              b, loc, result, carried.front(), offsets, sizes, unit);
          scf::YieldOp::create(b, loc, next);
        });
    filled = loop->getResult(0);
  }
  // The sum in block order, one element at a time.
  SmallVector<Value> parts;
  for (int64_t i = 0; i < blocks; ++i)
    parts.push_back(tensor::ExtractSliceOp::create(
        rewriter, loc, partialType, filled,
        SmallVector<OpFoldResult>{index(i * m), index(0)}, sizes, unit));
  Value init =
      tensor::EmptyOp::create(rewriter, loc, ArrayRef<int64_t>{m, n}, element);
  AffineMap identity = rewriter.getMultiDimIdentityMap(2);
  auto sum = linalg::GenericOp::create(
      rewriter, loc, TypeRange{partialType}, parts, ValueRange{init},
      SmallVector<AffineMap>(blocks + 1, identity),
      SmallVector<utils::IteratorType>(2, utils::IteratorType::parallel),
      [&](OpBuilder &b, Location loc, ValueRange args) {
        Value total = args[0];
        for (Value part : args.take_front(blocks).drop_front())
          total = arith::AddFOp::create(b, loc, total, part);
        linalg::YieldOp::create(b, loc, total);
      });
  Value result = sum.getResult(0);
  rewriter.replaceOp(op, result);
  if (fill->use_empty())
    rewriter.eraseOp(fill);
  // Into the element-wise consumer: the sum is read where the product was.
  linalg::GenericOp consumer;
  linalg::LinalgOp finished = sum;
  if (std::optional<unsigned> input = matchElementwiseConsumer(sum, consumer)) {
    OpOperand *operand = &consumer->getOpOperand(*input);
    if (linalg::areElementwiseOpsFusable(operand)) {
      // Where the consumer is: its other operands may come after the sum.
      rewriter.setInsertionPoint(consumer);
      FailureOr<linalg::ElementwiseOpFusionResult> fused =
          linalg::fuseElementwiseOps(rewriter, operand);
      if (succeeded(fused)) {
        for (auto [original, replacement] : fused->replacements)
          rewriter.replaceAllUsesExcept(original, replacement, fused->fusedOp);
        if (consumer->use_empty())
          rewriter.eraseOp(consumer);
        if (sum->use_empty())
          rewriter.eraseOp(sum);
        finished = cast<linalg::LinalgOp>(fused->fusedOp);
      }
    }
  }
  setLoweringConfig(finished, chooseTiledConfig(finished, vectorBits));
  return product;
}
