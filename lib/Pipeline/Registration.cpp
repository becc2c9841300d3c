//===- Registration.cpp - Dialect, pass and pipeline registration ---------===//

#include "Fuse/IR/FuseDialect.h"
#include "fuse/Pipeline.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;

void fuse::registerDialects(DialectRegistry &registry) {
  registry.insert<FuseDialect, arith::ArithDialect, func::FuncDialect,
                  linalg::LinalgDialect, math::MathDialect, scf::SCFDialect,
                  tensor::TensorDialect>();
}

void fuse::registerPassesAndPipelines() {
  PassPipelineRegistration<>(
      "fuse-simplify",
      "Simplify a fuse graph: canonicalize (folds, identities) and CSE",
      [](OpPassManager &pm) { buildSimplifyPipeline(pm); });
}
