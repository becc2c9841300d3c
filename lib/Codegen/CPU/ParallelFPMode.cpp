//===- ParallelFPMode.cpp - The fuse-parallel-fp-mode pass ----------------===//
//
// Worker threads of an OpenMP parallel region take the caller's MXCSR for
// the region's duration, so a tile rounds the same whichever thread runs it.
//
//===----------------------------------------------------------------------===//

#include "fuse/Codegen/Passes.h"

#include "fuse/ABI.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/OpenMP/OpenMPDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/Debug.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/Triple.h"

#define DEBUG_TYPE "fuse-parallel-fp-mode"

namespace fuse {
#define GEN_PASS_DEF_FUSEPARALLELFPMODE
#include "fuse/Codegen/Passes.h.inc"
} // namespace fuse

using namespace mlir;

namespace {

/// Whether `module` is compiled for x86 (its fuse.target, else the host).
bool targetsX86(ModuleOp module) {
  std::string triple = llvm::sys::getProcessTriple();
  if (auto target =
          module->getAttrOfType<DictionaryAttr>(fuse::abi::kTargetAttrName))
    if (auto name = target.getAs<StringAttr>(fuse::abi::kTargetTripleKey))
      triple = name.str();
  return llvm::Triple(triple).isX86();
}

/// A one-i32 stack slot at `builder`'s point.
Value createSlot(OpBuilder &builder, Location loc) {
  auto ptrType = LLVM::LLVMPointerType::get(builder.getContext());
  Value one = LLVM::ConstantOp::create(builder, loc, builder.getI64Type(),
                                       builder.getI64IntegerAttr(1));
  return LLVM::AllocaOp::create(builder, loc, ptrType, builder.getI32Type(),
                                one, 4);
}

/// stmxcsr into `slot`, at `builder`'s point.
void storeMxcsr(OpBuilder &builder, Location loc, Value slot) {
  LLVM::CallIntrinsicOp::create(builder, loc,
                                builder.getStringAttr("llvm.x86.sse.stmxcsr"),
                                ValueRange{slot});
}

/// A one-i32 stack slot and stmxcsr into it, at `builder`'s point.
Value saveMxcsr(OpBuilder &builder, Location loc) {
  Value slot = createSlot(builder, loc);
  storeMxcsr(builder, loc, slot);
  return slot;
}

void loadMxcsr(OpBuilder &builder, Location loc, Value slot) {
  LLVM::CallIntrinsicOp::create(builder, loc,
                                builder.getStringAttr("llvm.x86.sse.ldmxcsr"),
                                ValueRange{slot});
}

struct FuseParallelFPModePass
    : fuse::impl::FuseParallelFPModeBase<FuseParallelFPModePass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (!targetsX86(module)) {
      LLVM_DEBUG(llvm::dbgs()
                 << "not x86: parallel regions left as they are\n");
      return;
    }
    // The caller's mode goes through one slot per function, in its entry
    // block: a static alloca. A slot beside each region would be a dynamic
    // alloca in a K-step loop, and parallel code generation, which cuts the
    // function between blocks, could put it in another part than the
    // region's fork (a pointer into the part's frame, which then stays in
    // its caller). A region nested in another keeps a slot of its own
    // beside it: the enclosing region's threads would share the one.
    DenseMap<Operation *, Value> slots;
    module.walk([&](omp::ParallelOp parallel) {
      Location loc = parallel.getLoc();
      Value caller;
      Operation *function = parallel->getParentOfType<FunctionOpInterface>();
      if (function && !parallel->getParentOfType<omp::ParallelOp>()) {
        Value &slot = slots[function];
        if (!slot) {
          Block &entry = function->getRegion(0).front();
          OpBuilder builder(&entry, entry.begin());
          slot = createSlot(builder, loc);
        }
        caller = slot;
      }
      OpBuilder builder(parallel);
      if (caller)
        storeMxcsr(builder, loc, caller);
      else
        caller = saveMxcsr(builder, loc);
      Block &body = parallel.getRegion().front();
      builder.setInsertionPointToStart(&body);
      Value own = saveMxcsr(builder, loc);
      loadMxcsr(builder, loc, caller);
      // Every exit of the region restores the thread's own mode.
      parallel.getRegion().walk([&](omp::TerminatorOp terminator) {
        if (terminator->getParentOp() != parallel)
          return;
        builder.setInsertionPoint(terminator);
        loadMxcsr(builder, loc, own);
      });
      LLVM_DEBUG(llvm::dbgs()
                 << "caller's MXCSR for the region at " << loc << "\n");
    });
  }
};

} // namespace
