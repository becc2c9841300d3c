//===- Pipeline.cpp - The one Fuse pass pipeline --------------------------===//

#include "fuse/Pipeline.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void fuse::buildSimplifyPipeline(OpPassManager &pm) {
  // CSE can expose new folds (two identical constants become one operand
  // twice, so `x - x` folds), hence canonicalize on both sides.
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addPass(createCanonicalizerPass());
}
