//===- Passes.td - Fuse conversion passes ---------------------------------===//
//
// Conversions out of the fuse dialect: fuse ops and optimizer ops to
// linalg, tensor, arith and math.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_CONVERSION_PASSES_TD
#define FUSE_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertFuseToLinalg
    : Pass<"convert-fuse-to-linalg", "::mlir::func::FuncOp"> {
  let summary = "Lower fuse ops to linalg, tensor, arith and math";
  let description = [{
    Lowers every fuse op of a function with static shapes to tensor-level
    linalg (named contractions, convolutions and pools; `linalg.generic` for
    element-wise work, reductions, slices, gathers and iota), `tensor`,
    `arith`, `math` and, for `fuse.scatter_add`, an `scf.for` over its
    indices in row-major order.
    Broadcasting is expressed in indexing maps, never as a copy; softmax,
    log-softmax and cross-entropy subtract the row maximum before `exp`.
    A fuse op with a dynamic dimension is an error: run `fuse-specialize`
    first.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect", "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

def ConvertFuseOptimizersToLinalg
    : Pass<"convert-fuse-optimizers-to-linalg", "::mlir::func::FuncOp"> {
  let summary = "Expand optimizer ops into fused element-wise updates";
  let description = [{
    Replaces each optimizer op (`fuse.sgd`, `fuse.adam`, `fuse.adagrad`,
    `fuse.rmsprop`, `fuse.lamb`) by one `linalg.generic` per parameter
    (`max-group-size` above 1: per group of parameters of the same type,
    horizontal fusion), marked `fuse.optimizer_update`: it reads each
    gradient and takes each parameter and state as an `outs` operand, so
    every array is read once and written once, in place once bufferized,
    and no intermediate tensor exists. The CPU strategy splits each update
    into cache-sized chunks, and the updates' chunks share one parallel
    region (fuse-parallel-loops-to-openmp); a group of several parameters
    per loop holds more streams than registers (Adam: 4 arrays of 4
    vectors per parameter) and spills. Learning-rate and step-dependent
    scalars (bias corrections) are computed once per call, outside the
    loops. LAMB takes two passes: one reduction per parameter reads p, g
    and the moments and sums the squares of p and of its update direction
    (new moments and direction stay in registers; nothing is written), then
    one update per parameter (or group) recomputes them and writes p and
    the moments. The direction is never stored and no norm spans several
    parameters.

    With `fuse=false` the rule is expanded into one fuse op per arithmetic
    operation instead, as an eager framework runs it: the unfused baseline.
    Both forms perform the same operations in the same order; per-call
    scalars are computed in f64.

    First, `fuse.lr_schedule` becomes scalar arithmetic on the step counter
    (f64, rounded to f32 once), and `fuse.clip_gradients` one sum-of-squares
    reduction per gradient (the global norm and its scale in f64) and one
    element-wise pass per gradient that scales and clamps it, read by the
    updates; the same code in both forms.
  }];
  let options = [
    Option<"fuse", "fuse", "bool", /*default=*/"true",
           "Fuse each update into one loop nest (false: one op per operation)">,
    Option<"maxGroupSize", "max-group-size", "unsigned", /*default=*/"1",
           "Most parameters of one type updated by one loop nest">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect", "::mlir::tensor::TensorDialect"
  ];
}

def ConvertFuseCollectives
    : Pass<"convert-fuse-collectives", "::mlir::ModuleOp"> {
  let summary = "Pack fuse.all_reduce tensors into buckets the runtime reduces";
  let description = [{
    Replaces each `fuse.all_reduce` by buckets: its tensors, flattened and
    multiplied by its prescale (fuse ops, lowered and fused by
    `convert-fuse-to-linalg`), concatenated in reverse operand order into
    f32 buffers of about `bucket-bytes` each (a tensor larger than that is
    a bucket of its own). The runtime (`fuse/ABI.h`) reduces each bucket in
    place across the ranks: `fuse_all_reduce_start_f32(data, count, kind)`
    starts it (passed as its aligned pointer) and returns a handle,
    `fuse_all_reduce_wait(handle)` ends it. Each result is then a slice of
    its reduced bucket. The bucket is a `memref.alloc` written by
    `bufferization.materialize_in_destination` and read back through a
    `restrict` `bufferization.to_tensor`, so the calls sit between its
    writers and readers once bufferized (`fuse-workspace` then makes it a
    caller buffer). Reverse order puts a step's last gradients, which the
    backward pass computes first, in the first bucket.

    With `overlap` (the default), as PyTorch's DistributedDataParallel, a
    bucket starts right after the last of its tensors (in the all_reduce's
    block) is computed, buckets in order, and is waited for right before
    the first op reading one of its results: the backward pass of the
    earlier layers runs while the last layers' buckets are reduced. Each
    op computing one of the tensors while a bucket is in flight is followed
    by `fuse_all_reduce_progress()`, which lets MPI move the nonblocking
    collectives on. Without, the start and the wait sit together at the
    all_reduce. The buckets and the calls reducing them are the same
    either way: so are the results, bit for bit.

    Runs before `convert-fuse-to-linalg`; adds the callees' declarations
    to the module.
  }];
  let options = [
    Option<"bucketBytes", "bucket-bytes", "int64_t",
           /*default=*/"256 << 10", "Bytes of one bucket, about">,
    Option<"overlap", "overlap", "bool", /*default=*/"true",
           "Start each bucket after its last tensor and wait before its "
           "first reader (false: both at the all_reduce)">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::bufferization::BufferizationDialect",
    "::mlir::func::FuncDialect", "::mlir::LLVM::LLVMDialect",
    "::mlir::memref::MemRefDialect"
  ];
}

#endif // FUSE_CONVERSION_PASSES_TD
