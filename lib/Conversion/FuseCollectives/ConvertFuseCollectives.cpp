//===- ConvertFuseCollectives.cpp - The convert-fuse-collectives pass -----===//
//
// fuse.all_reduce -> buckets and runtime calls. The tensors of one
// all_reduce are packed, flattened and prescaled, into a few large f32
// buffers (buckets) in reverse operand order (a step's last gradients, the
// ones backward computes first, fill the first bucket); each bucket is
// reduced in place by the runtime (fuse/ABI.h): fuse_all_reduce_start_f32
// starts it and returns a handle, fuse_all_reduce_wait ends it. Few large
// calls rather than one per tensor: each MPI collective costs a latency of
// its own.
//
// Overlap (the `overlap` option, as PyTorch's DDP): a bucket starts right
// after the last of its tensors is computed and is waited for right before
// the first op that reads a result, so MPI reduces the last layers'
// gradients while the backward pass of the earlier layers runs; the
// computations of those layers' gradients, in between, call
// fuse_all_reduce_progress (MPI moves a nonblocking collective on only
// inside MPI calls). Without overlap the start and the wait both sit at the
// all_reduce. Either way the buckets, their contents and the calls that
// reduce them are the same: the results are bitwise equal.
//
// The packing stays in the fuse dialect (reshape, mul, concat, slice), so
// convert-fuse-to-linalg lowers and fuses it like any other op. A bucket
// is a memref the calls read and write: the packed tensor is materialized
// into it and the results read it back through a restrict to_tensor, which
// one-shot bufferization takes as that buffer.
//
//===----------------------------------------------------------------------===//

#include "fuse/ABI.h"
#include "fuse/Conversion/Passes.h"

#include "Fuse/IR/FuseDialect.h"
#include "Fuse/IR/FuseOps.h"
#include "fuse/SourceNames.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "convert-fuse-collectives"

namespace fuse {
#define GEN_PASS_DEF_CONVERTFUSECOLLECTIVES
#include "fuse/Conversion/Passes.h.inc"
} // namespace fuse

using namespace mlir;

namespace {

/// The runtime's collective entry points (fuse/ABI.h), declared in the
/// module if absent: `int64_t fuse_all_reduce_start_f32(float *, int64_t,
/// int32_t)`, `void fuse_all_reduce_wait(int64_t)` and `void
/// fuse_all_reduce_progress()`. Buckets of every size pass through one
/// declaration as a pointer (the bare-pointer calling convention lowers no
/// declaration of a dynamically sized memref).
struct Runtime {
  func::FuncOp start, wait, progress;
};

func::FuncOp declare(ModuleOp module, StringRef name, FunctionType type) {
  if (auto existing = module.lookupSymbol<func::FuncOp>(name))
    return existing;
  OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
  auto decl = func::FuncOp::create(b, module.getLoc(), name, type);
  decl.setPrivate();
  return decl;
}

Runtime declareRuntime(ModuleOp module) {
  MLIRContext *context = module.getContext();
  Builder b(context);
  Runtime runtime;
  runtime.progress = declare(module, fuse::abi::kAllReduceProgressSymbol,
                             FunctionType::get(context, {}, {}));
  runtime.wait = declare(module, fuse::abi::kAllReduceWaitSymbol,
                         FunctionType::get(context, {b.getI64Type()}, {}));
  runtime.start =
      declare(module, fuse::abi::kAllReduceStartF32Symbol,
              FunctionType::get(context,
                                {LLVM::LLVMPointerType::get(context),
                                 b.getI64Type(), b.getI32Type()},
                                {b.getI64Type()}));
  return runtime;
}

/// The op of `block` that is or holds `op`, or null when `op` is outside it.
Operation *inBlock(Block *block, Operation *op) {
  return op ? block->findAncestorOpInBlock(*op) : nullptr;
}

/// The buckets of `sizes` (elements per tensor): groups of operand indices
/// in reverse order, each holding at most `bucketElements` unless one
/// tensor alone is larger (a bucket of its own).
SmallVector<SmallVector<unsigned>> assignBuckets(ArrayRef<int64_t> sizes,
                                                 int64_t bucketElements) {
  SmallVector<SmallVector<unsigned>> buckets;
  int64_t filled = 0;
  for (unsigned i = sizes.size(); i-- > 0;) {
    if (buckets.empty() || (filled > 0 && filled + sizes[i] > bucketElements)) {
      buckets.emplace_back();
      filled = 0;
    }
    buckets.back().push_back(i);
    filled += sizes[i];
  }
  return buckets;
}

/// The op of `block` before which `bucket`'s reduced results are first
/// read: the earliest user of one of them, or the terminator.
Operation *firstUse(fuse::AllReduceOp op, ArrayRef<unsigned> bucket) {
  Block *block = op->getBlock();
  Operation *first = &block->back();
  for (unsigned i : bucket)
    for (Operation *user : op.getResult(i).getUsers())
      if (Operation *user_ = inBlock(block, user);
          user_ && user_->isBeforeInBlock(first))
        first = user_;
  return first;
}

/// The op of `op`'s block after which `bucket` can start: the last one
/// computing one of its tensors (or the prescale), and not before `after`
/// (the previous bucket's start, so that buckets start in order). Null: the
/// block's start.
Operation *lastDefinition(fuse::AllReduceOp op, ArrayRef<unsigned> bucket,
                          Operation *after) {
  Block *block = op->getBlock();
  Operation *last = after;
  auto consider = [&](Value value) {
    if (Operation *def = inBlock(block, value.getDefiningOp());
        def && (!last || last->isBeforeInBlock(def)))
      last = def;
  };
  for (unsigned i : bucket)
    consider(op.getInputs()[i]);
  if (Value prescale = op.getPrescale())
    consider(prescale);
  return last;
}

/// Calls fuse_all_reduce_progress after each op of `block` that computes
/// one of `inputs` while a bucket is in flight (between a start and its
/// wait), so that MPI moves the buckets on while backward computes the
/// next gradients. Returns how many it placed.
unsigned placeProgressCalls(Block *block, ValueRange inputs, Runtime runtime) {
  llvm::SmallPtrSet<Operation *, 16> definitions;
  for (Value input : inputs)
    if (Operation *def = inBlock(block, input.getDefiningOp()))
      definitions.insert(def);
  unsigned placed = 0;
  int inFlight = 0;
  for (Operation &o : llvm::make_early_inc_range(*block)) {
    if (auto call = dyn_cast<func::CallOp>(&o)) {
      if (call.getCallee() == runtime.start.getSymName())
        ++inFlight;
      else if (call.getCallee() == runtime.wait.getSymName())
        --inFlight;
    } else if (inFlight > 0 && definitions.contains(&o)) {
      OpBuilder b(o.getContext());
      b.setInsertionPointAfter(&o);
      func::CallOp::create(b, o.getLoc(), runtime.progress, ValueRange{});
      ++placed;
    }
  }
  return placed;
}

LogicalResult lower(fuse::AllReduceOp op, Runtime runtime,
                    int64_t bucketElements, bool overlap) {
  Location loc = op.getLoc();
  MLIRContext *context = op.getContext();
  Type f32 = Float32Type::get(context);
  SmallVector<int64_t> sizes;
  for (Value input : op.getInputs())
    sizes.push_back(cast<RankedTensorType>(input.getType()).getNumElements());
  SmallVector<Value> results(op.getNumResults());
  auto buckets = assignBuckets(sizes, bucketElements);
  Operation *previousStart = nullptr;
  for (auto [index, bucket] : llvm::enumerate(buckets)) {
    // With overlap, the bucket starts as soon as its last tensor is
    // computed and is waited for just before its first reader: the backward
    // work in between (the earlier layers') runs while MPI reduces it.
    // Without, both at the all_reduce: the same calls, buckets and sums.
    OpBuilder b(op);
    if (overlap) {
      if (Operation *last = lastDefinition(op, bucket, previousStart))
        b.setInsertionPointAfter(last);
      else
        b.setInsertionPointToStart(op->getBlock());
    }
    // Pack: each tensor flattened (and prescaled), one after another.
    SmallVector<Value> flat;
    int64_t total = 0;
    for (unsigned i : bucket) {
      Value input = op.getInputs()[i];
      if (Value prescale = op.getPrescale())
        input = fuse::MulOp::create(b, loc, input, prescale);
      auto flatType = RankedTensorType::get({sizes[i]}, f32);
      if (input.getType() != flatType)
        input = fuse::ReshapeOp::create(b, loc, flatType, input);
      flat.push_back(input);
      total += sizes[i];
    }
    auto bucketType = RankedTensorType::get({total}, f32);
    Value packed = flat.size() == 1
                       ? flat.front()
                       : fuse::ConcatOp::create(b, loc, bucketType, flat,
                                                b.getI64IntegerAttr(0))
                             .getResult();
    // The runtime reads and writes the bucket in place, from the start to
    // the end of the wait.
    auto memrefType = MemRefType::get({total}, f32);
    Value buffer =
        memref::AllocOp::create(b, loc, memrefType, b.getI64IntegerAttr(64));
    auto materialize = bufferization::MaterializeInDestinationOp::create(
        b, loc, TypeRange{}, packed, buffer);
    materialize.setRestrict(true);
    materialize.setWritable(true);
    Value address =
        memref::ExtractAlignedPointerAsIndexOp::create(b, loc, buffer);
    Value integer = arith::IndexCastOp::create(b, loc, b.getI64Type(), address);
    Value pointer =
        LLVM::IntToPtrOp::create(b, loc, runtime.start.getArgumentTypes()[0],
                                 integer, LLVM::DereferenceableAttr());
    Value count = arith::ConstantIntOp::create(b, loc, total, 64);
    Value kind = arith::ConstantIntOp::create(
        b, loc, static_cast<int64_t>(op.getKind()), 32);
    auto start = func::CallOp::create(b, loc, runtime.start,
                                      ValueRange{pointer, count, kind});
    previousStart = start;
    OpBuilder w(context);
    if (overlap)
      w.setInsertionPoint(firstUse(op, bucket));
    else
      w.setInsertionPointAfter(start);
    func::CallOp::create(w, loc, runtime.wait, start.getResult(0));
    Value reduced = bufferization::ToTensorOp::create(
        w, loc, bucketType, buffer, /*restrict=*/true, /*writable=*/false);
    // Unpack: each result a slice of the reduced bucket.
    int64_t offset = 0;
    for (unsigned i : bucket) {
      auto type = cast<RankedTensorType>(op.getResult(i).getType());
      Value slice = reduced;
      if (flat.size() > 1)
        slice = fuse::SliceOp::create(
            w, loc, RankedTensorType::get({sizes[i]}, f32), reduced,
            w.getDenseI64ArrayAttr({offset}), w.getDenseI64ArrayAttr({}));
      results[i] =
          slice.getType() == type
              ? slice
              : fuse::ReshapeOp::create(w, loc, type, slice).getResult();
      offset += sizes[i];
    }
    LLVM_DEBUG(llvm::dbgs()
               << "convert-fuse-collectives: bucket #" << index << " of "
               << bucket.size() << " tensors, " << total << " floats"
               << (overlap ? ", started after its last tensor" : "") << "\n");
  }
  if (overlap) {
    unsigned placed =
        placeProgressCalls(op->getBlock(), op.getInputs(), runtime);
    (void)placed;
    LLVM_DEBUG(llvm::dbgs() << "convert-fuse-collectives: " << placed
                            << " progress calls\n");
  }
  op.replaceAllUsesWith(results);
  op.erase();
  return success();
}

struct ConvertFuseCollectivesPass
    : fuse::impl::ConvertFuseCollectivesBase<ConvertFuseCollectivesPass> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (bucketBytes < 4) {
      module.emitError("convert-fuse-collectives: bucket-bytes must be at "
                       "least 4 (one f32), got ")
          << bucketBytes;
      return signalPassFailure();
    }
    SmallVector<fuse::AllReduceOp> ops;
    module.walk([&](fuse::AllReduceOp op) { ops.push_back(op); });
    if (ops.empty())
      return;
    Runtime runtime = declareRuntime(module);
    for (fuse::AllReduceOp op : ops)
      if (failed(lower(op, runtime, bucketBytes / 4, overlap)))
        return signalPassFailure();
  }
};

} // namespace

namespace {
/// The source name of the function argument `value` carries (through the
/// K-step loop's iteration arguments), or empty.
std::string argumentNameOf(Value value) {
  while (auto arg = dyn_cast<BlockArgument>(value)) {
    Operation *owner = arg.getOwner()->getParentOp();
    if (auto func = dyn_cast<func::FuncOp>(owner))
      return fuse::argumentName(func, arg.getArgNumber());
    auto loop = dyn_cast<scf::ForOp>(owner);
    if (!loop || arg.getArgNumber() < loop.getNumInductionVars())
      return {};
    value = loop.getInitArgs()[arg.getArgNumber() - loop.getNumInductionVars()];
  }
  return {};
}

/// The name of the parameter the reduced gradient `grad` updates: its
/// optimizer op's matching parameter (through clipping), or empty.
std::string parameterNameOf(Value grad) {
  for (OpOperand &use : grad.getUses()) {
    Operation *user = use.getOwner();
    if (auto clip = dyn_cast<fuse::ClipGradientsOp>(user))
      return parameterNameOf(clip->getResult(use.getOperandNumber()));
    auto optimizer = dyn_cast<fuse::OptimizerOpInterface>(user);
    if (!optimizer)
      continue;
    // Operands: lr, step, the n parameters, their n gradients, the states.
    unsigned n =
        (user->getNumOperands() - 2) / (2 + optimizer.getNumStatesPerParam());
    unsigned index = use.getOperandNumber();
    if (index < 2 + n || index >= 2 + 2 * n)
      continue;
    return argumentNameOf(user->getOperand(index - n));
  }
  return {};
}

std::string shapeOf(Value value) {
  auto type = cast<RankedTensorType>(value.getType());
  if (type.getRank() == 0)
    return "scalar";
  return llvm::join(
      llvm::map_range(type.getShape(),
                      [](int64_t d) { return std::to_string(d); }),
      "x");
}
} // namespace

std::vector<std::string> fuse::describeReducedGradients(ModuleOp module) {
  std::vector<std::string> lines;
  module.walk([&](fuse::AllReduceOp op) {
    SmallVector<std::string> unfused, others;
    // Gradients clipped by their global norm reach their update only once
    // every gradient is computed, reduced or not: no update fuses into
    // their matmul either way.
    bool clipped = llvm::any_of(op->getUsers(), [](Operation *user) {
      auto clip = dyn_cast<fuse::ClipGradientsOp>(user);
      return clip && clip.getClipNormAttr();
    });
    for (auto [input, result] : llvm::zip(op.getInputs(), op.getResults())) {
      std::string name = parameterNameOf(result);
      std::string text = (name.empty() ? std::string("a gradient") : name) +
                         " " + shapeOf(input);
      (!clipped && input.getDefiningOp<fuse::MatmulOp>() ? unfused : others)
          .push_back(text);
    }
    std::string line = "all-reduce: " + std::to_string(op.getNumResults()) +
                       " gradients reduced across ranks before their update";
    if (!unfused.empty())
      line += "; " + std::to_string(unfused.size()) +
              " no longer fused into the update (their matmul's): " +
              llvm::join(unfused, ", ");
    if (!others.empty())
      line += "; " + std::to_string(others.size()) +
              (clipped ? " clipped, unfused either way: " : " others: ") +
              llvm::join(others, ", ");
    lines.push_back(std::move(line));
  });
  return lines;
}
