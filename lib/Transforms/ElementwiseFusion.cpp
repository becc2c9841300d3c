//===- ElementwiseFusion.cpp - The fuse-elementwise-fusion pass -----------===//

#include "fuse/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace fuse {
#define GEN_PASS_DEF_FUSEELEMENTWISEFUSION
#include "fuse/Passes.h.inc"
} // namespace fuse

using namespace mlir;

namespace {
struct FuseElementwiseFusionPass
    : fuse::impl::FuseElementwiseFusionBase<FuseElementwiseFusionPass> {
  void runOnOperation() override {
    MLIRContext *context = &getContext();
    RewritePatternSet patterns(context);
    // Fuse only what is computed once either way: a producer with one user,
    // read through a permutation (a producer read through a broadcast would
    // be recomputed for every element it is broadcast to).
    linalg::ControlFusionFn computedOnce = [](OpOperand *fused) {
      Operation *producer = fused->get().getDefiningOp();
      auto consumer = dyn_cast<linalg::LinalgOp>(fused->getOwner());
      return producer && producer->hasOneUse() && consumer &&
             consumer.getMatchingIndexingMap(fused).isPermutation();
    };
    linalg::populateElementwiseOpsFusionPatterns(patterns, computedOnce);
    linalg::populateEraseUnusedOperandsAndResultsPatterns(patterns);
    linalg::GenericOp::getCanonicalizationPatterns(patterns, context);
    tensor::EmptyOp::getCanonicalizationPatterns(patterns, context);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
