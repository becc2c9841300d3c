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
// iteration, which is safe because it is freed before the iteration ends
// (not in a parallel loop, whose iterations run at once: each of those
// takes its buffer on its thread's stack).
//
//===----------------------------------------------------------------------===//

#include "Fuse/IR/FuseOps.h"
#include "fuse/ABI.h"
#include "fuse/Codegen/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/Support/CheckedArithmetic.h"

namespace fuse {
#define GEN_PASS_DEF_FUSEWORKSPACE
#include "fuse/Codegen/Passes.h.inc"
} // namespace fuse

using namespace mlir;

namespace {

constexpr int64_t kAlignment = 64;

/// The largest buffer a parallel loop's iteration takes on its thread's
/// stack (libomp's worker stacks are 4 MiB by default); larger ones stay
/// allocations of their own.
constexpr int64_t kMaxThreadBufferBytes = 256 * 1024;

/// `value` rounded up to kAlignment, or nullopt past int64.
std::optional<int64_t> alignTo(int64_t value) {
  std::optional<int64_t> padded = llvm::checkedAdd(value, kAlignment - 1);
  if (!padded)
    return std::nullopt;
  return *padded / kAlignment * kAlignment;
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
    SmallVector<std::tuple<memref::AllocOp, memref::DeallocOp, Operation *>>
        threadBuffers;
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
      if (!dealloc)
        return;
      // An iteration of a parallel loop runs beside the others: one buffer
      // for all of them would be shared by the threads. Each iteration
      // takes its own on the stack instead (once per thread, after
      // fuse-parallel-loops-to-openmp takes it before each thread's loop).
      Operation *parallel = alloc->getParentOfType<scf::ParallelOp>();
      if (!parallel)
        parallel = alloc->getParentOfType<scf::ForallOp>();
      if (parallel) {
        std::optional<int64_t> bytes = fuse::checkedByteSize(type);
        if (bytes && *bytes <= kMaxThreadBufferBytes)
          threadBuffers.push_back({alloc, dealloc, parallel});
        return;
      }
      buffers.push_back({alloc, dealloc});
    });
    for (auto [alloc, dealloc, parallel] : threadBuffers) {
      Block &body = parallel->getRegion(0).front();
      OpBuilder builder(&body, body.begin());
      Value buffer = memref::AllocaOp::create(
          builder, alloc.getLoc(), alloc.getType(), ValueRange{},
          builder.getI64IntegerAttr(kAlignment));
      alloc.replaceAllUsesWith(buffer);
      dealloc.erase();
      alloc.erase();
    }
    if (buffers.empty())
      return;

    // Sizes first, every one checked (elements are stored in whole bytes,
    // an i1 takes one), so that a failure leaves the function untouched:
    // the engine adds them up, and a wrapped size would be a short buffer.
    SmallVector<int64_t> sizes;
    int64_t total = 0;
    for (auto [alloc, dealloc] : buffers) {
      std::optional<int64_t> bytes = fuse::checkedByteSize(alloc.getType());
      std::optional<int64_t> aligned = bytes ? alignTo(*bytes) : std::nullopt;
      std::optional<int64_t> sum =
          aligned ? llvm::checkedAdd(total, *aligned) : std::nullopt;
      if (!sum) {
        alloc.emitError("the workspace buffer of type ")
            << alloc.getType()
            << " makes the workspace too large: its size in bytes does not "
               "fit in 64 bits";
        return signalPassFailure();
      }
      sizes.push_back(*aligned);
      total = *sum;
    }
    DictionaryAttr attrs = DictionaryAttr::get(
        context, {NamedAttribute(noalias, UnitAttr::get(context))});
    for (auto [alloc, dealloc] : buffers) {
      MemRefType type = alloc.getType();
      unsigned index = func.getNumArguments();
      if (failed(func.insertArgument(index, type, attrs, alloc.getLoc())))
        return signalPassFailure();
      alloc.replaceAllUsesWith(func.getArgument(index));
      dealloc.erase();
      alloc.erase();
    }
    func->setAttr(fuse::abi::kWorkspaceAttrName,
                  DenseI64ArrayAttr::get(context, sizes));
  }
};

} // namespace
