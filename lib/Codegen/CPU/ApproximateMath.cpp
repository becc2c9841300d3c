//===- ApproximateMath.cpp - The fuse-approximate-math pass ---------------===//
//
// Transcendental math as polynomials, and, on targets without AVX512_BF16,
// bf16 conversions as integer arithmetic: both vectorize instead of calling
// a library function element by element.
//
//===----------------------------------------------------------------------===//

#include "fuse/Codegen/Passes.h"

#include "BF16DotProducts.h"
#include "PassDetail.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "fuse-approximate-math"

namespace fuse {
#define GEN_PASS_DEF_FUSEAPPROXIMATEMATH
#include "fuse/Codegen/Passes.h.inc"
} // namespace fuse

using namespace mlir;

namespace {
struct FuseApproximateMathPass
    : fuse::impl::FuseApproximateMathBase<FuseApproximateMathPass> {
  void runOnOperation() override {
    // Each function on its own: its target decides the bf16 rounding.
    SmallVector<Operation *> roots;
    if (isa<func::FuncOp>(getOperation()))
      roots.push_back(getOperation());
    else
      getOperation()->walk([&](func::FuncOp f) { roots.push_back(f); });
    if (roots.empty())
      roots.push_back(getOperation());
    for (Operation *root : roots) {
      RewritePatternSet patterns(&getContext());
      populateMathPolynomialApproximationPatterns(patterns);
      // Without AVX512_BF16 (vcvtneps2bf16), LLVM rounds each f32 to bf16
      // by a call to __truncsfbf2, one element at a time, even in a
      // vector: a bf16 cast, or a master weight's copy written by the
      // optimizer's update (whose vector constants the calls then spill),
      // cost about 3 ns per element. As shifts, adds and selects on the
      // bits (round to nearest even) it vectorizes.
      auto func = dyn_cast<func::FuncOp>(root);
      if (!func || !fuse::targetHasAVX512BF16(func)) {
        LLVM_DEBUG(llvm::dbgs()
                   << "bf16 conversions as integer arithmetic in "
                   << (func ? func.getSymName() : "the root") << "\n");
        arith::populateExpandBFloat16Patterns(patterns);
      }
      if (failed(applyPatternsGreedily(root, std::move(patterns),
                                       fuse::structuredRewriteConfig())))
        return signalPassFailure();
    }
  }
};
} // namespace
