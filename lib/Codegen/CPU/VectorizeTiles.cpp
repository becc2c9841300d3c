//===- VectorizeTiles.cpp - fuse-vectorize-tiles --------------------------===//
//
// Vectorizes every tile, static ones whole and partial ones with masks of
// their config's vector level, then folds the tensor slices and masks into
// the vector transfers.
//
//===----------------------------------------------------------------------===//

#include "fuse/Codegen/Passes.h"

#include "PassDetail.h"

#include "LoweringStrategy.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Affine/ViewLikeInterfaceUtils.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "fuse-vectorize-tiles"

namespace fuse {
#define GEN_PASS_DEF_FUSEVECTORIZETILES
#include "fuse/Codegen/Passes.h.inc"
} // namespace fuse

using namespace mlir;

namespace {

/// Whether `op` reads or writes i1 buffers: LLVM packs vectors of i1 into
/// bits in memory, while tensors of i1 use one byte per element, so such ops
/// stay scalar (an i1 value between fused ops never reaches memory).
bool touchesBooleanMemory(linalg::LinalgOp op) {
  return llvm::any_of(op->getOperandTypes(), [](Type type) {
    return getElementTypeOrSelf(type).isInteger(1);
  });
}

/// Reads a tile through its slice's source: `transfer_read(extract_slice(t))`
/// becomes `transfer_read(t)`. Only for a slice read and nothing else: a
/// slice that is also written (the tile of an `outs` operand, updated in
/// place) must be read through the slice, or bufferization sees a read of
/// the whole tensor after a write to part of it and copies the tensor.
struct FoldReadOnlySliceIntoTransferRead
    : OpRewritePattern<vector::TransferReadOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(vector::TransferReadOp read,
                                PatternRewriter &rewriter) const override {
    auto slice = read.getBase().getDefiningOp<tensor::ExtractSliceOp>();
    if (!slice || !slice->hasOneUse() || read.hasOutOfBoundsDim())
      return failure();
    // The vector runs along the source's dims only where the slice takes
    // every element: along a strided dim it would read the skipped ones.
    llvm::SmallBitVector dropped = slice.getDroppedDims();
    SmallVector<int64_t> sourceDim;
    for (unsigned d = 0; d < dropped.size(); ++d)
      if (!dropped.test(d))
        sourceDim.push_back(d);
    SmallVector<OpFoldResult> strides = slice.getMixedStrides();
    for (AffineExpr result : read.getPermutationMap().getResults())
      if (auto dim = dyn_cast<AffineDimExpr>(result);
          dim && !isOneInteger(strides[sourceDim[dim.getPosition()]]))
        return failure();
    SmallVector<Value> indices;
    affine::resolveIndicesIntoOpWithOffsetsAndStrides(
        rewriter, read.getLoc(), slice.getMixedOffsets(),
        slice.getMixedStrides(), slice.getDroppedDims(),
        getAsOpFoldResult(read.getIndices()), indices);
    rewriter.replaceOpWithNewOp<vector::TransferReadOp>(
        read, read.getVectorType(), slice.getSource(), indices,
        AffineMapAttr::get(expandDimsToRank(read.getPermutationMap(),
                                            slice.getSourceType().getRank(),
                                            slice.getDroppedDims())),
        read.getPadding(), read.getMask(), read.getInBoundsAttr());
    return success();
  }
};

/// Writes a tile straight into the tensor it is inserted into:
/// `insert_slice(transfer_write(v, t), x)` becomes `transfer_write(v, x)`
/// when the write covers all of `t`, whose old contents then do not matter.
struct FoldInsertSliceOfTransferWrite
    : OpRewritePattern<tensor::InsertSliceOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tensor::InsertSliceOp insert,
                                PatternRewriter &rewriter) const override {
    auto write = insert.getSource().getDefiningOp<vector::TransferWriteOp>();
    if (!write || !write->hasOneUse() || write.getMask() ||
        write.hasOutOfBoundsDim() ||
        !write.getPermutationMap().isMinorIdentity() ||
        insert.getSourceType().getRank() != insert.getType().getRank() ||
        !insert.hasUnitStride())
      return failure();
    // The vector covers the whole tile: leading tile dims of 1, trailing
    // dims equal to the vector's, written from index 0.
    auto tile = cast<RankedTensorType>(write.getBase().getType());
    ArrayRef<int64_t> vector = write.getVectorType().getShape();
    int64_t lead = tile.getRank() - static_cast<int64_t>(vector.size());
    for (int64_t d = 0; d < tile.getRank(); ++d)
      if (tile.getDimSize(d) != (d < lead ? 1 : vector[d - lead]))
        return failure();
    if (!llvm::all_of(write.getIndices(),
                      [](Value i) { return isZeroInteger(i); }))
      return failure();
    SmallVector<Value> indices = getValueOrCreateConstantIndexOp(
        rewriter, insert.getLoc(), insert.getMixedOffsets());
    rewriter.replaceOpWithNewOp<vector::TransferWriteOp>(
        insert, write.getVector(), insert.getDest(), indices,
        AffineMapAttr::get(AffineMap::getMinorIdentityMap(
            insert.getType().getRank(), vector.size(), getContext())),
        write.getInBoundsAttr());
    return success();
  }
};

struct VectorizeTilesPass
    : fuse::impl::FuseVectorizeTilesBase<VectorizeTilesPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    MLIRContext *context = &getContext();
    IRRewriter rewriter(context);

    // Decompose size-1 windows of conv/pool tiles into 1-D ops, and fold
    // the tiles' static sizes.
    {
      RewritePatternSet patterns(context);
      linalg::populateDecomposeConvolutionPatterns(patterns);
      affine::AffineMinOp::getCanonicalizationPatterns(patterns, context);
      tensor::ExtractSliceOp::getCanonicalizationPatterns(patterns, context);
      if (failed(applyPatternsGreedily(func, std::move(patterns),
                                       fuse::structuredRewriteConfig())))
        return signalPassFailure();
    }

    // Vectorize every tile: exactly when its shape is static, with masks
    // of its config's vector sizes when it is a partial tile.
    SmallVector<linalg::LinalgOp> tiles;
    func.walk([&](linalg::LinalgOp op) {
      if (op.hasPureTensorSemantics())
        tiles.push_back(op);
    });
    for (linalg::LinalgOp op : tiles) {
      SmallVector<int64_t> sizes;
      if (op.hasDynamicShape()) {
        fuse::LoweringConfigAttr config = fuse::LoweringConfigAttr::lookup(op);
        if (!config || config.getNumLoops() == 0)
          continue;
        sizes.assign(config.getVector().begin(), config.getVector().end());
      }
      fuse::setLoweringConfig(op, {});
      SmallVector<bool> scalable(sizes.size(), false);
      if (touchesBooleanMemory(op) ||
          failed(linalg::vectorizeOpPrecondition(op, sizes, scalable)))
        continue;
      rewriter.setInsertionPoint(op);
      // Contractions become vector.contract, which lowers to FMAs.
      FailureOr<linalg::VectorizationResult> vectorized = linalg::vectorize(
          rewriter, op, sizes, scalable, /*vectorizeNDExtract=*/false,
          /*flatten1DDepthwiseConv=*/false,
          /*assumeDynamicDimsMatchVecSizes=*/false,
          /*createNamedContraction=*/true);
      if (succeeded(vectorized))
        rewriter.replaceOp(op, vectorized->replacements);
      else
        LLVM_DEBUG(llvm::dbgs() << op->getName() << " at " << op.getLoc()
                                << ": not vectorized\n");
    }
    // The configs are spent: nothing after this pass reads them.
    func.walk([](Operation *op) { fuse::setLoweringConfig(op, {}); });

    // Fold the tensor slices into the vector transfers, and masks into the
    // masked transfers.
    RewritePatternSet patterns(context);
    vector::populateVectorMaskLoweringPatternsForSideEffectingOps(patterns);
    // Tiles of [1, ..., 1, n] become 1-D vectors, which every lowering takes.
    vector::populateCastAwayVectorLeadingOneDimPatterns(patterns);
    patterns
        .add<FoldReadOnlySliceIntoTransferRead, FoldInsertSliceOfTransferWrite>(
            context);
    vector::populateVectorTransferDropUnitDimsPatterns(patterns);
    vector::TransferReadOp::getCanonicalizationPatterns(patterns, context);
    vector::TransferWriteOp::getCanonicalizationPatterns(patterns, context);
    scf::ForOp::getCanonicalizationPatterns(patterns, context);
    if (failed(applyPatternsGreedily(func, std::move(patterns),
                                     fuse::structuredRewriteConfig())))
      signalPassFailure();
  }
};

} // namespace
