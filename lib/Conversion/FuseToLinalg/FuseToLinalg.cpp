//===- FuseToLinalg.cpp - The convert-fuse-to-linalg pass -----------------===//

#include "LoweringUtils.h"

#include "Fuse/IR/FuseDialect.h"
#include "Fuse/IR/FuseOps.h"
#include "fuse/Conversion/Passes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Transforms/DialectConversion.h"

namespace fuse {
#define GEN_PASS_DEF_CONVERTFUSETOLINALG
#include "fuse/Conversion/Passes.h.inc"
} // namespace fuse

using namespace mlir;

namespace {

bool isStatic(Type type) {
  auto shaped = dyn_cast<ShapedType>(type);
  return !shaped || shaped.hasStaticShape();
}

struct ConvertFuseToLinalgPass
    : fuse::impl::ConvertFuseToLinalgBase<ConvertFuseToLinalgPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    WalkResult dynamic = func.walk([](Operation *op) {
      if (!isa<fuse::FuseDialect>(op->getDialect()))
        return WalkResult::advance();
      // erf has an f32 approximation only (math.erf on f64 has no LLVM
      // lowering): refused here, with the way around it.
      bool usesErf = isa<fuse::ErfOp>(op);
      if (auto gelu = dyn_cast<fuse::GeluOp>(op))
        usesErf = !gelu.isTanh();
      if (usesErf && getElementTypeOrSelf(op->getResult(0).getType()).isF64()) {
        op->emitOpError("on f64 is not supported: erf is computed in f32; "
                        "cast the operand to f32 (fuse.cast), or use gelu's "
                        "tanh form");
        return WalkResult::interrupt();
      }
      if (llvm::all_of(op->getOperandTypes(), isStatic) &&
          llvm::all_of(op->getResultTypes(), isStatic))
        return WalkResult::advance();
      op->emitOpError("has dynamic dimensions; specialize the function to "
                      "concrete shapes first (fuse-specialize, or fusec "
                      "--shape)");
      return WalkResult::interrupt();
    });
    if (dynamic.wasInterrupted())
      return signalPassFailure();

    MLIRContext *context = &getContext();
    ConversionTarget target(*context);
    target.addIllegalDialect<fuse::FuseDialect>();
    // Attention stays whole until the code generator, which computes it in
    // blocks (fuse-tile-attention): in linalg it would be a T x S tensor.
    target.addLegalOp<fuse::AttentionOp, fuse::AttentionGradOp>();
    target.addLegalDialect<arith::ArithDialect, linalg::LinalgDialect,
                           math::MathDialect, scf::SCFDialect,
                           tensor::TensorDialect>();
    RewritePatternSet patterns(context);
    fuse::lowering::populateElementwiseLoweringPatterns(patterns);
    fuse::lowering::populateReductionLoweringPatterns(patterns);
    fuse::lowering::populateContractionLoweringPatterns(patterns);
    fuse::lowering::populateDropoutLoweringPatterns(patterns);
    fuse::lowering::populateIndexingLoweringPatterns(patterns);
    if (failed(applyPartialConversion(func, target, std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
