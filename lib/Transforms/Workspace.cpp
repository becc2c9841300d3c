//===- Workspace.cpp - The fuse-workspace pass ----------------------------===//
//
// Intermediate buffers come from the caller, so a call allocates nothing:
// each statically shaped allocation freed in its own block becomes a new
// pointer argument, which the engine points into one workspace it keeps per
// compiled function. Every pointer argument is marked noalias: buffers the
// caller passes never overlap, and separate arguments (rather than views of
// one workspace argument) keep that knowledge for LLVM, as malloc'd buffers
// had it. Buffers therefore do not share bytes, even when their lifetimes
// are disjoint; a buffer allocated in a loop body reuses its own bytes every
// iteration, which is safe because it is freed before the iteration ends.
//
//===----------------------------------------------------------------------===//

#include "fuse/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace fuse {
#define GEN_PASS_DEF_FUSEWORKSPACE
#include "fuse/Passes.h.inc"
} // namespace fuse

using namespace mlir;

namespace {

constexpr int64_t kAlignment = 64;

int64_t alignTo(int64_t value) {
  return (value + kAlignment - 1) / kAlignment * kAlignment;
}

struct FuseWorkspacePass : fuse::impl::FuseWorkspaceBase<FuseWorkspacePass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    MLIRContext *context = &getContext();
    StringAttr noalias =
        StringAttr::get(context, LLVM::LLVMDialect::getNoAliasAttrName());
    for (unsigned i = 0; i < func.getNumArguments(); ++i)
      if (isa<MemRefType>(func.getArgument(i).getType()))
        func.setArgAttr(i, noalias, UnitAttr::get(context));

    SmallVector<std::pair<memref::AllocOp, memref::DeallocOp>> buffers;
    func.walk([&](memref::AllocOp alloc) {
      MemRefType type = alloc.getType();
      if (!type.hasStaticShape() || !type.getLayout().isIdentity() ||
          type.getMemorySpace() || !type.getElementType().isIntOrFloat())
        return;
      // Exactly one dealloc, in the same block; no other escape is possible
      // after buffer deallocation, which frees every buffer it owns.
      memref::DeallocOp dealloc;
      for (Operation *user : alloc->getUsers())
        if (auto d = dyn_cast<memref::DeallocOp>(user)) {
          if (dealloc || d->getBlock() != alloc->getBlock())
            return;
          dealloc = d;
        }
      if (dealloc)
        buffers.push_back({alloc, dealloc});
    });
    if (buffers.empty())
      return;

    SmallVector<int64_t> sizes;
    DictionaryAttr attrs = DictionaryAttr::get(
        context, {NamedAttribute(noalias, UnitAttr::get(context))});
    for (auto [alloc, dealloc] : buffers) {
      MemRefType type = alloc.getType();
      // Elements are stored in whole bytes (an i1 takes one).
      int64_t elementBytes =
          (type.getElementType().getIntOrFloatBitWidth() + 7) / 8;
      sizes.push_back(alignTo(type.getNumElements() * elementBytes));
      unsigned index = func.getNumArguments();
      if (failed(func.insertArgument(index, type, attrs, alloc.getLoc())))
        return signalPassFailure();
      alloc.replaceAllUsesWith(func.getArgument(index));
      dealloc.erase();
      alloc.erase();
    }
    func->setAttr(fuse::kWorkspaceAttrName,
                  DenseI64ArrayAttr::get(context, sizes));
  }
};

} // namespace
