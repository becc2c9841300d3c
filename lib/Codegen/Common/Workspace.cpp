//===- Workspace.cpp - The fuse-workspace pass ----------------------------===//
//
// Intermediate buffers come from the caller, so a call allocates nothing:
// each statically shaped allocation freed in its own block becomes a
// trailing pointer argument, which the engine points into one workspace it
// keeps per compiled function.
//
// Buffers whose lifetimes are disjoint share bytes (XLA's buffer
// assignment, IREE's packing, here by slots rather than free offsets): a
// slot holds one live buffer at a time, sized for its largest. Lifetimes
// are intervals in program order: from a buffer's first use to its last,
// where a use inside a loop (a K-step loop, a parallel loop, a tile loop)
// that does not hold the allocation counts as the whole loop, and a buffer
// allocated in a loop body lives within one iteration.
//
// Every buffer stays an argument of its own type (views of one i8 argument
// would hide them from MLIR's transfer hoisting, which gives up on views:
// the CNN step ran 0.7x). A buffer alone in its slot is noalias, as every
// buffer was before. LLVM's noalias holds for the whole call, so two
// arguments sharing bytes may not be noalias: a shared slot's arguments are
// not, and carry `fuse.workspace_slot = N` for the passes after this one
// that reason about buffers by argument. Since two buffers of one slot are
// never live at once, no loop touches two of them, and against every other
// (noalias) argument LLVM still knows them disjoint. The engine carves the
// arguments in order: a slot's buffers get sizes 0, ..., 0, S, so that all
// of them start at the slot's address.
//
// A buffer allocated in a loop body reuses its bytes every iteration, which
// is safe because it is freed before the iteration ends (not in a parallel
// loop, whose iterations run at once: each of those takes its buffer on its
// thread's stack). A buffer whose address escapes (a runtime call, an
// address taken as an integer) shares no slot.
//
//===----------------------------------------------------------------------===//

#include "Fuse/IR/FuseOps.h"
#include "fuse/ABI.h"
#include "fuse/Codegen/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "fuse-workspace"

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

/// A workspace buffer: its allocation, its size, and its lifetime as a
/// closed interval of program-order positions.
struct Buffer {
  memref::AllocOp alloc;
  memref::DeallocOp dealloc;
  int64_t bytes = 0;
  int64_t begin = 0, end = -1;
  /// Its address escapes: it shares no slot.
  bool pinned = false;
  unsigned slot = 0;
};

/// Program-order positions: each op's pre-order index and the last index
/// in its regions, so that an op with regions spans all it holds.
struct Positions {
  llvm::DenseMap<Operation *, std::pair<int64_t, int64_t>> span;
  explicit Positions(func::FuncOp func) {
    int64_t next = 0;
    std::function<void(Operation *)> visit = [&](Operation *op) {
      int64_t first = next++;
      for (Region &region : op->getRegions())
        for (Block &block : region)
          for (Operation &nested : block)
            visit(&nested);
      span[op] = {first, next - 1};
    };
    visit(func);
  }
};

/// Whether `op` may keep or hand out the address of its memref operand
/// beyond what its own span shows: a call, a pointer taken as an integer,
/// LLVM dialect ops, casts out of the memref world.
bool mayEscape(Operation *op) {
  return isa<CallOpInterface, memref::ExtractAlignedPointerAsIndexOp,
             UnrealizedConversionCastOp>(op) ||
         isa_and_nonnull<LLVM::LLVMDialect>(op->getDialect());
}

/// The lifetime of `buffer`: the span of every op in the allocation's block
/// that holds a use of it (through views, loop-carried values and the
/// results of ops that take it), so that a use in a nested loop covers
/// that whole loop. Sets `pinned` when the address may escape.
void computeLifetime(Buffer &buffer, const Positions &positions) {
  Block *block = buffer.alloc->getBlock();
  SmallVector<Value> worklist = {buffer.alloc.getResult()};
  llvm::DenseSet<Value> seen(worklist.begin(), worklist.end());
  auto follow = [&](Operation *op) {
    for (Value result : op->getResults())
      if (isa<BaseMemRefType>(result.getType()) && seen.insert(result).second)
        worklist.push_back(result);
  };
  int64_t begin = std::numeric_limits<int64_t>::max(), end = -1;
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    for (OpOperand &use : value.getUses()) {
      Operation *user = use.getOwner();
      if (user == buffer.dealloc.getOperation())
        continue;
      if (mayEscape(user))
        buffer.pinned = true;
      // Views, casts and anything else returning a memref may alias it; a
      // region's value yielded out aliases its parent's results.
      follow(user);
      if (user->hasTrait<OpTrait::IsTerminator>())
        if (Operation *parent = user->getParentOp())
          follow(parent);
      for (Region &region : user->getRegions())
        for (Block &nested : region)
          for (BlockArgument argument : nested.getArguments())
            if (isa<BaseMemRefType>(argument.getType()) &&
                seen.insert(argument).second)
              worklist.push_back(argument);
      Operation *top = block->findAncestorOpInBlock(*user);
      if (!top) {
        // Outside the allocation's block (only through a value yielded out
        // of it): live to the end of the function.
        buffer.pinned = true;
        continue;
      }
      auto [first, last] = positions.span.lookup(top);
      begin = std::min(begin, first);
      end = std::max(end, last);
    }
  }
  buffer.begin = begin;
  buffer.end = end;
}

bool overlaps(const Buffer &a, const Buffer &b) {
  if (a.end < a.begin || b.end < b.begin)
    return false;
  return a.begin <= b.end && b.begin <= a.end;
}

struct FuseWorkspacePass : fuse::impl::FuseWorkspaceBase<FuseWorkspacePass> {
  using FuseWorkspaceBase::FuseWorkspaceBase;

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

    SmallVector<Buffer> buffers;
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
      Buffer buffer;
      buffer.alloc = alloc;
      buffer.dealloc = dealloc;
      buffers.push_back(buffer);
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
    auto tooLarge = [&](memref::AllocOp alloc) {
      alloc.emitError("the workspace buffer of type ")
          << alloc.getType()
          << " makes the workspace too large: its size in bytes does not "
             "fit in 64 bits";
      signalPassFailure();
    };
    for (Buffer &buffer : buffers) {
      std::optional<int64_t> bytes =
          fuse::checkedByteSize(buffer.alloc.getType());
      std::optional<int64_t> aligned = bytes ? alignTo(*bytes) : std::nullopt;
      if (!aligned)
        return tooLarge(buffer.alloc);
      buffer.bytes = *aligned;
    }

    // Slots: the largest buffers first, each into the smallest slot whose
    // buffers all live at other times (every slot is at least as large,
    // its first buffer being larger), else a slot of its own.
    SmallVector<int64_t> slotBytes;
    SmallVector<SmallVector<unsigned>> slotBuffers;
    if (reuse) {
      Positions positions(func);
      for (Buffer &buffer : buffers)
        computeLifetime(buffer, positions);
    }
    SmallVector<unsigned> order =
        llvm::to_vector(llvm::seq<unsigned>(0, buffers.size()));
    llvm::stable_sort(order, [&](unsigned a, unsigned b) {
      return buffers[a].bytes > buffers[b].bytes;
    });
    for (unsigned index : order) {
      Buffer &buffer = buffers[index];
      std::optional<unsigned> best;
      if (reuse && !buffer.pinned)
        for (unsigned slot = 0; slot < slotBytes.size(); ++slot) {
          if (best && slotBytes[*best] <= slotBytes[slot])
            continue;
          if (llvm::any_of(slotBuffers[slot], [&](unsigned other) {
                return buffers[other].pinned ||
                       overlaps(buffer, buffers[other]);
              }))
            continue;
          best = slot;
        }
      if (!best) {
        best = slotBytes.size();
        slotBytes.push_back(buffer.bytes);
        slotBuffers.emplace_back();
      }
      buffer.slot = *best;
      slotBuffers[*best].push_back(index);
    }

    // The total the engine allocates, checked before anything changes.
    int64_t total = 0;
    for (auto [bytes, members] : llvm::zip(slotBytes, slotBuffers)) {
      std::optional<int64_t> sum = llvm::checkedAdd(total, bytes);
      if (!sum)
        return tooLarge(buffers[*llvm::min_element(members)].alloc);
      total = *sum;
    }

    // Arguments in the order of each slot's first allocation, as before
    // when nothing is shared.
    SmallVector<unsigned> slotOrder =
        llvm::to_vector(llvm::seq<unsigned>(0, slotBytes.size()));
    for (auto &members : slotBuffers)
      llvm::sort(members);
    llvm::sort(slotOrder, [&](unsigned a, unsigned b) {
      return slotBuffers[a].front() < slotBuffers[b].front();
    });
    DictionaryAttr attrs = DictionaryAttr::get(
        context, {NamedAttribute(noalias, UnitAttr::get(context))});
    SmallVector<int64_t> sizes;
    int64_t sharedSlots = 0;
    for (unsigned slot : slotOrder) {
      ArrayRef<unsigned> members = slotBuffers[slot];
      bool shared = members.size() > 1;
      DictionaryAttr slotAttrs = attrs;
      if (shared)
        slotAttrs = DictionaryAttr::get(
            context,
            {NamedAttribute(
                StringAttr::get(context, fuse::abi::kWorkspaceSlotAttrName),
                IntegerAttr::get(IntegerType::get(context, 64),
                                 sharedSlots++))});
      LLVM_DEBUG(llvm::dbgs()
                 << "fuse-workspace: slot of " << slotBytes[slot] << " bytes, "
                 << members.size() << " buffer(s)\n");
      for (auto [position, member] : llvm::enumerate(members)) {
        Buffer &buffer = buffers[member];
        LLVM_DEBUG(llvm::dbgs()
                   << "  " << buffer.alloc.getType() << " live ["
                   << buffer.begin << ", " << buffer.end << "]"
                   << (buffer.pinned ? " (address escapes)" : "") << "\n");
        unsigned index = func.getNumArguments();
        if (failed(func.insertArgument(index, buffer.alloc.getType(), slotAttrs,
                                       buffer.alloc.getLoc())))
          return signalPassFailure();
        // The slot's last buffer advances the engine's carving by the
        // slot's size; the others start where it does.
        sizes.push_back(position + 1 == members.size() ? slotBytes[slot] : 0);
        buffer.alloc.replaceAllUsesWith(func.getArgument(index));
        buffer.dealloc.erase();
        buffer.alloc.erase();
      }
    }
    func->setAttr(fuse::abi::kWorkspaceAttrName,
                  DenseI64ArrayAttr::get(context, sizes));
  }
};

} // namespace
