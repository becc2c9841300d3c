//===- ApproximateMath.cpp - The fuse-approximate-math pass ---------------===//

#include "fuse/Codegen/Passes.h"

#include "PassDetail.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace fuse {
#define GEN_PASS_DEF_FUSEAPPROXIMATEMATH
#include "fuse/Codegen/Passes.h.inc"
} // namespace fuse

using namespace mlir;

namespace {
struct FuseApproximateMathPass
    : fuse::impl::FuseApproximateMathBase<FuseApproximateMathPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateMathPolynomialApproximationPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns),
                                     fuse::structuredRewriteConfig())))
      signalPassFailure();
  }
};
} // namespace
