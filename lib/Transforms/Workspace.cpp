//===- Workspace.cpp - The fuse-workspace pass ----------------------------===//
//
// Intermediate buffers live in one workspace the caller passes, so a call
// allocates nothing: each statically shaped allocation freed in its own
// block becomes a view at a fixed offset. Offsets are shared by buffers
// whose lifetimes do not overlap (first fit, largest first); a buffer
// allocated in a loop body reuses its slot every iteration, which is safe
// because it is freed before the iteration ends.
//
//===----------------------------------------------------------------------===//

#include "fuse/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace fuse {
#define GEN_PASS_DEF_FUSEWORKSPACE
#include "fuse/Passes.h.inc"
} // namespace fuse

using namespace mlir;

namespace {

constexpr int64_t kAlignment = 64;

struct Buffer {
  memref::AllocOp alloc;
  memref::DeallocOp dealloc;
  int64_t bytes;
  int64_t begin, end; // lifetime, in walk order
  int64_t offset = 0;
};

int64_t alignTo(int64_t value) {
  return (value + kAlignment - 1) / kAlignment * kAlignment;
}

struct FuseWorkspacePass : fuse::impl::FuseWorkspaceBase<FuseWorkspacePass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;

    llvm::DenseMap<Operation *, int64_t> order;
    func.walk<WalkOrder::PreOrder>(
        [&](Operation *op) { order[op] = order.size(); });

    SmallVector<Buffer> buffers;
    func.walk([&](memref::AllocOp alloc) {
      MemRefType type = alloc.getType();
      if (!type.hasStaticShape() || !type.getLayout().isIdentity() ||
          type.getMemorySpace() ||
          !type.getElementType().isIntOrIndexOrFloat() ||
          type.getElementType().isIndex())
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
      // Elements are stored in whole bytes (an i1 takes one).
      int64_t elementBytes =
          (type.getElementType().getIntOrFloatBitWidth() + 7) / 8;
      buffers.push_back({alloc, dealloc,
                         alignTo(type.getNumElements() * elementBytes),
                         order[alloc], order[dealloc]});
    });
    if (buffers.empty())
      return;

    // First fit, largest first, among buffers alive at the same time.
    SmallVector<Buffer *> bySize;
    for (Buffer &buffer : buffers)
      bySize.push_back(&buffer);
    llvm::stable_sort(bySize, [](Buffer *a, Buffer *b) {
      return a->bytes > b->bytes;
    });
    SmallVector<Buffer *> placed;
    int64_t total = 0;
    for (Buffer *buffer : bySize) {
      SmallVector<std::pair<int64_t, int64_t>> taken;
      for (Buffer *other : placed)
        if (other->begin <= buffer->end && buffer->begin <= other->end)
          taken.push_back({other->offset, other->offset + other->bytes});
      llvm::sort(taken);
      int64_t offset = 0;
      for (auto [begin, end] : taken) {
        if (offset + buffer->bytes <= begin)
          break;
        offset = std::max(offset, end);
      }
      buffer->offset = offset;
      total = std::max(total, offset + buffer->bytes);
      placed.push_back(buffer);
    }

    auto workspaceType =
        MemRefType::get({total}, IntegerType::get(&getContext(), 8));
    if (failed(func.insertArgument(func.getNumArguments(), workspaceType, {},
                                   func.getLoc())))
      return signalPassFailure();
    Value workspace = func.getArgument(func.getNumArguments() - 1);
    func->setAttr(fuse::kWorkspaceBytesAttrName,
                  IntegerAttr::get(IntegerType::get(&getContext(), 64), total));
    for (Buffer &buffer : buffers) {
      OpBuilder b(buffer.alloc);
      Value offset =
          arith::ConstantIndexOp::create(b, buffer.alloc.getLoc(),
                                         buffer.offset);
      Value view = memref::ViewOp::create(b, buffer.alloc.getLoc(),
                                          buffer.alloc.getType(), workspace,
                                          offset, ValueRange{});
      buffer.alloc.replaceAllUsesWith(view);
      buffer.dealloc.erase();
      buffer.alloc.erase();
    }
  }
};

} // namespace
