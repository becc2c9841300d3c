//===- ConvertFuseCollectives.cpp - The convert-fuse-collectives pass -----===//
//
// fuse.all_reduce -> buckets and runtime calls. The tensors of one
// all_reduce are packed, flattened and prescaled, into a few large f32
// buffers (buckets) in reverse operand order (a step's last gradients, the
// ones backward computes first, fill the first bucket); each bucket is
// handed to the runtime's fuse_all_reduce_f32 (fuse/ABI.h) once, in place,
// and the results are slices of the reduced buckets. Few large calls rather
// than one per tensor: each MPI collective costs a latency of its own.
//
// The packing stays in the fuse dialect (reshape, mul, concat, slice), so
// convert-fuse-to-linalg lowers and fuses it like any other op. A bucket
// is a memref the call reads and writes: the packed tensor is materialized
// into it and the results read it back through a restrict to_tensor, which
// one-shot bufferization takes as that buffer.
//
//===----------------------------------------------------------------------===//

#include "fuse/ABI.h"
#include "fuse/Conversion/Passes.h"

#include "Fuse/IR/FuseDialect.h"
#include "Fuse/IR/FuseOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "convert-fuse-collectives"

namespace fuse {
#define GEN_PASS_DEF_CONVERTFUSECOLLECTIVES
#include "fuse/Conversion/Passes.h.inc"
} // namespace fuse

using namespace mlir;

namespace {

/// The runtime's `void fuse_all_reduce_f32(float *, int64_t, int32_t)`,
/// declared in `module` if absent. Buckets of every size pass through one
/// declaration as a pointer (the bare-pointer calling convention lowers no
/// declaration of a dynamically sized memref).
func::FuncOp declareAllReduce(ModuleOp module) {
  StringRef name = fuse::abi::kAllReduceF32Symbol;
  if (auto existing = module.lookupSymbol<func::FuncOp>(name))
    return existing;
  MLIRContext *context = module.getContext();
  OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
  auto type = FunctionType::get(
      context,
      {LLVM::LLVMPointerType::get(context), b.getI64Type(), b.getI32Type()},
      {});
  auto decl = func::FuncOp::create(b, module.getLoc(), name, type);
  decl.setPrivate();
  return decl;
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

LogicalResult lower(fuse::AllReduceOp op, func::FuncOp callee,
                    int64_t bucketElements) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  Type f32 = b.getF32Type();
  SmallVector<int64_t> sizes;
  for (Value input : op.getInputs())
    sizes.push_back(cast<RankedTensorType>(input.getType()).getNumElements());
  SmallVector<Value> results(op.getNumResults());
  auto buckets = assignBuckets(sizes, bucketElements);
  for (auto [index, bucket] : llvm::enumerate(buckets)) {
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
    // The call reads and writes the bucket in place.
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
        LLVM::IntToPtrOp::create(b, loc, callee.getArgumentTypes()[0], integer,
                                 LLVM::DereferenceableAttr());
    Value count = arith::ConstantIntOp::create(b, loc, total, 64);
    Value kind = arith::ConstantIntOp::create(
        b, loc, static_cast<int64_t>(op.getKind()), 32);
    func::CallOp::create(b, loc, callee, ValueRange{pointer, count, kind});
    Value reduced = bufferization::ToTensorOp::create(
        b, loc, bucketType, buffer, /*restrict=*/true, /*writable=*/false);
    // Unpack: each result a slice of the reduced bucket.
    int64_t offset = 0;
    for (unsigned i : bucket) {
      auto type = cast<RankedTensorType>(op.getResult(i).getType());
      Value slice = reduced;
      if (flat.size() > 1)
        slice = fuse::SliceOp::create(
            b, loc, RankedTensorType::get({sizes[i]}, f32), reduced,
            b.getDenseI64ArrayAttr({offset}), b.getDenseI64ArrayAttr({}));
      results[i] =
          slice.getType() == type
              ? slice
              : fuse::ReshapeOp::create(b, loc, type, slice).getResult();
      offset += sizes[i];
    }
    LLVM_DEBUG(llvm::dbgs()
               << "convert-fuse-collectives: bucket #" << index << " of "
               << bucket.size() << " tensors, " << total << " floats\n");
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
    func::FuncOp callee = declareAllReduce(module);
    for (fuse::AllReduceOp op : ops)
      if (failed(lower(op, callee, bucketBytes / 4)))
        return signalPassFailure();
  }
};

} // namespace
