//===- DecomposeLayerNorm.cpp - The fuse-decompose-layer-norm pass --------===//

#include "Fuse/IR/FuseOps.h"
#include "fuse/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "fuse-decompose-layer-norm"

namespace fuse {
#define GEN_PASS_DEF_FUSEDECOMPOSELAYERNORM
#include "fuse/Transforms/Passes.h.inc"
} // namespace fuse

using namespace mlir;
using namespace fuse;

namespace {
struct FuseDecomposeLayerNormPass
    : fuse::impl::FuseDecomposeLayerNormBase<FuseDecomposeLayerNormPass> {
  void runOnOperation() override {
    SmallVector<LayerNormOp> ops;
    getOperation().walk([&](LayerNormOp op) { ops.push_back(op); });
    for (LayerNormOp op : ops) {
      LLVM_DEBUG(llvm::dbgs() << "decomposing " << op << "\n");
      OpBuilder b(op);
      op.replaceAllUsesWith(decomposeLayerNorm(b, op));
      op.erase();
    }
  }
};
} // namespace
