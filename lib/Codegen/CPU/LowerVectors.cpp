//===- LowerVectors.cpp - The fuse-lower-vectors pass ---------------------===//

#include "fuse/Codegen/Passes.h"

#include "BF16DotProducts.h"
#include "PassDetail.h"

#include "mlir/Conversion/VectorToSCF/VectorToSCF.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/Transforms/Hoisting.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorTransforms.h"
#include "mlir/IR/Dominance.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Transforms/CSE.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/LoopInvariantCodeMotionUtils.h"

#include <numeric>

namespace fuse {
#define GEN_PASS_DEF_FUSELOWERVECTORS
#include "fuse/Codegen/Passes.h.inc"
} // namespace fuse

using namespace mlir;

namespace {

/// A masked transfer_read whose map reads the source's dims out of order
/// (a transpose's tile) becomes a read in the source's order, which the
/// mask's shape already has, and a vector.transpose. VectorToSCF's
/// unrolling indexes the mask in the vector's order instead of the
/// source's, and upstream's permutation lowering takes only permutations
/// of the minor dims (a tile of a 4-d transpose drops a unit dim in
/// between): without this, a masked 4-d transposed tile lost rows.
struct InOrderMaskedTransposedRead : OpRewritePattern<vector::TransferReadOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(vector::TransferReadOp op,
                                PatternRewriter &rewriter) const override {
    AffineMap map = op.getPermutationMap();
    if (!op.getMask() || !map.isProjectedPermutation(
                             /*allowZeroInResults=*/false))
      return failure();
    SmallVector<unsigned> sources;
    for (AffineExpr e : map.getResults())
      sources.push_back(cast<AffineDimExpr>(e).getPosition());
    // Permutations of the minor dims are upstream's (unchanged code).
    SmallVector<unsigned> minorPermutation;
    if (llvm::is_sorted(sources) ||
        map.isPermutationOfMinorIdentityWithBroadcasting(minorPermutation))
      return failure();
    // order[i]: the vector dim read as the i-th source dim in order.
    SmallVector<int64_t> order(sources.size());
    std::iota(order.begin(), order.end(), 0);
    llvm::sort(order,
               [&](int64_t a, int64_t b) { return sources[a] < sources[b]; });
    VectorType type = op.getVectorType();
    SmallVector<int64_t> shape;
    SmallVector<bool> inBounds;
    SmallVector<AffineExpr> exprs;
    for (int64_t v : order) {
      shape.push_back(type.getDimSize(v));
      inBounds.push_back(op.isDimInBounds(v));
      exprs.push_back(rewriter.getAffineDimExpr(sources[v]));
    }
    AffineMap sorted =
        AffineMap::get(map.getNumDims(), 0, exprs, rewriter.getContext());
    auto read = vector::TransferReadOp::create(
        rewriter, op.getLoc(), VectorType::get(shape, type.getElementType()),
        op.getBase(), op.getIndices(), AffineMapAttr::get(sorted),
        op.getPadding(), op.getMask(), rewriter.getBoolArrayAttr(inBounds));
    // Vector dim i of the result is dim position(i) of the sorted read.
    SmallVector<int64_t> transpose(order.size());
    for (auto [position, v] : llvm::enumerate(order))
      transpose[v] = position;
    rewriter.replaceOpWithNewOp<vector::TransposeOp>(op, read, transpose);
    return success();
  }
};

/// Reduction steps per iteration of an unrolled register-tile loop.
constexpr uint64_t kReductionUnroll = 4;

/// Unrolls the innermost loops around a vector.contract, the reduction loops
/// of register tiles: a step of the 12 x 32 micro-kernel is 24 FMAs (12
/// cycles) and 14 loads and broadcasts, and the loop's own increments,
/// compare and branch would add 3 uops to its 38 on the 4-wide front end.
void unrollRegisterTileLoops(func::FuncOp func) {
  SmallVector<scf::ForOp> loops;
  func.walk([&](scf::ForOp loop) {
    Block *body = loop.getBody();
    if (!body->getOps<scf::ForOp>().empty() ||
        body->getOps<vector::ContractionOp>().empty())
      return;
    loops.push_back(loop);
  });
  for (scf::ForOp loop : loops)
    (void)loopUnrollByFactor(loop, kReductionUnroll);
}

struct FuseLowerVectorsPass
    : fuse::impl::FuseLowerVectorsBase<FuseLowerVectorsPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    MLIRContext *context = &getContext();
    // Transfers through subviews hide the buffer they touch; fold the views
    // so that accumulators can then stay in registers across reduction
    // loops.
    {
      RewritePatternSet patterns(context);
      memref::populateFoldMemRefAliasOpPatterns(patterns);
      // An optimization: where the folds do not reach a fixed point (some
      // broadcasting transfers through expand_shape), the views stay.
      (void)applyPatternsGreedily(func, std::move(patterns),
                                  fuse::structuredRewriteConfig());
    }
    // The folds compute a transfer's indices beside it, inside its loop,
    // once for the read and again for the write: hoisting needs them
    // invariant and the same values. (The micro-kernel of a packed matmul
    // reads its accumulators through a view made outside the reduction
    // loop; without this they went to memory on every step.)
    func.walk([](LoopLikeOpInterface loop) { moveLoopInvariantCode(loop); });
    {
      IRRewriter rewriter(context);
      DominanceInfo dominance(func);
      eliminateCommonSubExpressions(rewriter, dominance, func);
    }
    linalg::hoistRedundantVectorTransfers(func);
    // A register tile's fused fill writes zeros that the hoisted read of
    // its accumulators reads right back, and that its final write
    // overwrites: the read becomes the zeros, and the write goes. (The
    // forwarding sees through views but not through aliasing arguments:
    // the pipeline's buffers never alias, see fuse-workspace.)
    {
      IRRewriter rewriter(context);
      vector::transferOpflowOpt(rewriter, func);
    }
    unrollRegisterTileLoops(func);

    RewritePatternSet patterns(context);
    // bf16 pairs (tiles the strategy gave two reduction steps) before the
    // outer products, which widen them to f32.
    if (fuse::targetPairsBF16Products(func))
      fuse::populateBF16DotProductPatterns(patterns);
    vector::populateVectorContractLoweringPatterns(
        patterns, vector::VectorContractLowering::OuterProduct);
    vector::populateVectorOuterProductLoweringPatterns(patterns);
    vector::populateVectorTransferPermutationMapLoweringPatterns(patterns);
    patterns.add<InOrderMaskedTransposedRead>(context, /*benefit=*/2);
    // A row reduction becomes one vector.reduction per row.
    vector::populateVectorMultiReductionLoweringPatterns(
        patterns, vector::VectorMultiReductionLowering::InnerReduction);
    vector::populateVectorMaskOpLoweringPatterns(patterns);
    vector::populateVectorShapeCastLoweringPatterns(patterns);
    vector::populateVectorBroadcastLoweringPatterns(patterns);
    // 16x16 f32 blocks become AVX-512 shuffles; anything else one shuffle
    // of the flattened vector, which LLVM lowers to permutes.
    vector::populateVectorTransposeLoweringPatterns(
        patterns, vector::VectorTransposeLowering::Shuffle16x16,
        /*benefit=*/2);
    vector::populateVectorTransposeLoweringPatterns(
        patterns, vector::VectorTransposeLowering::Shuffle1D);
    vector::populateVectorTransferLoweringPatterns(patterns,
                                                   /*maxTransferRank=*/1);
    populateVectorToSCFConversionPatterns(
        patterns, VectorTransferToSCFOptions().enableFullUnroll());
    if (failed(applyPatternsGreedily(func, std::move(patterns),
                                     fuse::structuredRewriteConfig()))) {
      func.emitError("vector lowering did not converge");
      signalPassFailure();
    }
  }
};
} // namespace
