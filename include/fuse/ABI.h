//===- ABI.h - The contract between Fuse's compiler and runtime -*- C++ -*-===//
//
// Every name the compiler's passes write into a module and the runtime
// (engine, trainer, fit, fusec) reads back: attribute keys, symbols and the
// names of derived functions and arguments. Both sides spell them from here
// only, so a pass never includes a runtime header and the runtime never
// repeats a literal. Each entry says who produces it and who consumes it.
//
// Dependency-free on purpose: the dialect, the passes and the runtime all
// include it.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_ABI_H
#define FUSE_ABI_H

#include "llvm/ADT/StringRef.h"

#include <string>

namespace fuse::abi {

//===----------------------------------------------------------------------===//
// Argument and result attributes (verified by the fuse dialect)
//===----------------------------------------------------------------------===//

/// Result attribute `fuse.in_place = N`: the result is written into argument
/// N's buffer. Produced by fuse-expand-train-step (carried by
/// fuse-wrap-steps); consumed by fuse-distinct-results, fuse-in-place-results
/// and the engine's ResultInfo::inPlaceOf (Trainer's carried state).
constexpr llvm::StringLiteral kInPlaceAttrName = "fuse.in_place";

/// Argument attribute `fuse.per_step`: a batch input, different at every
/// step. Produced by fuse-expand-train-step; consumed by fuse-wrap-steps
/// (which stacks it) and the engine's ArgumentInfo::perStep.
constexpr llvm::StringLiteral kPerStepAttrName = "fuse.per_step";

/// Argument attribute `fuse.step_counter`: the tensor<i64> step number,
/// advanced by one per step. Produced by fuse-expand-train-step; consumed by
/// fuse-wrap-steps and the engine's ArgumentInfo::stepCounter (Trainer).
constexpr llvm::StringLiteral kStepCounterAttrName = "fuse.step_counter";

/// Argument and result attribute `fuse.stacked` of a K-step function: dim 0
/// counts the steps, the same K for all, set at run time (not specialized).
/// Produced by fuse-wrap-steps; consumed by fuse-specialize, the engine's
/// signature key and ArgumentInfo/ResultInfo::stacked (Trainer), and fusec's
/// --shape.
constexpr llvm::StringLiteral kStackedAttrName = "fuse.stacked";

/// Argument attributes of a K-step function whose weights are carried in
/// IPEX's split layout (`master_weights = "split"`): the weight's argument
/// holds its top halves (bf16, what the products read) and has
/// `fuse.split_halves = L`, L being the argument (appended after the step
/// function's) that holds its low 16 bits (i16) and has `fuse.low_half_of =
/// W`. Both are carried in place: the pair is the f32 weight, with no f32
/// copy. Produced by fuse-wrap-steps; consumed by the engine's
/// ArgumentInfo::lowHalf/highHalf (the Trainer holds the halves and joins
/// them where an f32 weight is read: checkpoints, evaluation).
constexpr llvm::StringLiteral kSplitHalvesAttrName = "fuse.split_halves";
constexpr llvm::StringLiteral kLowHalfOfAttrName = "fuse.low_half_of";

/// Argument attribute `fuse.init = #fuse.init<...>`: how training
/// initializes a parameter or optimizer state. Produced by the user and
/// fuse-expand-train-step; consumed by the engine's ArgumentInfo::init
/// (Trainer::initialize).
constexpr llvm::StringLiteral kInitAttrName = "fuse.init";

/// Function attribute `fuse.precision = "bf16"` (or "f32"): the step
/// function of a `fuse.train_step` with that `precision`. Produced by
/// fuse-expand-train-step; consumed by fuse-apply-precision-policy (which
/// rounds the step's contraction operands to bf16).
constexpr llvm::StringLiteral kPrecisionAttrName = "fuse.precision";

/// Function attribute `fuse.master_weights = "split"`: the bf16 step
/// function of a `fuse.train_step` with `master_weights = "split"`.
/// Produced by fuse-expand-train-step; consumed by
/// fuse-apply-precision-policy (which splits the weights the products read
/// into their top and low halves instead of casting them).
constexpr llvm::StringLiteral kMasterWeightsAttrName = "fuse.master_weights";

/// Argument attribute `fuse.class_labels = C`: integer class labels, each in
/// [0, C). Produced by fuse-mark-class-labels; consumed by the engine's
/// label check, fit and fusec train.
constexpr llvm::StringLiteral kClassLabelsAttrName = "fuse.class_labels";

//===----------------------------------------------------------------------===//
// Attributes of the lowered entry (llvm.func)
//===----------------------------------------------------------------------===//

/// The byte sizes (multiples of 64) of the trailing buffers for
/// intermediates, which the caller carves from one 64-byte-aligned
/// workspace in order, each at the end of the one before: a size 0 puts a
/// buffer at the same address as the next (the buffers of one slot, which
/// live at different times; see kWorkspaceSlotAttrName). Produced by
/// fuse-workspace, kept by fuse-bare-pointer-arguments; consumed by the
/// engine, which carves them from one workspace per specialization, and
/// `fusec export`.
constexpr llvm::StringLiteral kWorkspaceAttrName = "fuse.workspace";

/// Argument attribute `fuse.workspace_slot = N`: a workspace buffer that
/// shares its bytes with the other arguments of slot N (their lifetimes
/// are disjoint), so it is not noalias. Produced by fuse-workspace;
/// consumed by fuse-parallel-loops-to-openmp, which takes a slot's
/// arguments as one buffer when deciding which loops may run at once.
constexpr llvm::StringLiteral kWorkspaceSlotAttrName = "fuse.workspace_slot";

/// The (argument, dim) pairs of the trailing dynamic-size arguments, one per
/// size argument, in order. Produced by fuse-bare-pointer-arguments;
/// consumed by the engine, which passes the sizes after the buffers.
constexpr llvm::StringLiteral kDynamicSizesAttrName = "fuse.dynamic_sizes";

//===----------------------------------------------------------------------===//
// Symbols
//===----------------------------------------------------------------------===//

/// The name a specialization is compiled under, so that no user function
/// name can shadow a C library symbol in the JIT. Produced by the engine
/// (isolateAndSpecialize); consumed by fuse-mark-class-labels' caller and
/// the packed wrapper (Codegen).
constexpr llvm::StringLiteral kFunctionSymbol = "__fuse_function";

/// `void __fuse_entry(void **)`, the packed wrapper of kFunctionSymbol every
/// specialization is called through. Produced by Codegen's addPackedWrapper;
/// consumed by the engine's JIT lookup.
constexpr llvm::StringLiteral kEntrySymbol = "__fuse_entry";

/// `int64_t fuse_timer_start()` returns a time. Called by code
/// fuse-insert-timers instruments; defined by the JIT (lib/JIT/Profile.cpp).
constexpr llvm::StringLiteral kTimerStartSymbol = "fuse_timer_start";

/// `void fuse_timer_stop(int64_t start, const char *region)` adds the time
/// since start to region. Called by code fuse-insert-timers instruments;
/// defined by the JIT (lib/JIT/Profile.cpp).
constexpr llvm::StringLiteral kTimerStopSymbol = "fuse_timer_stop";

/// `int64_t fuse_all_reduce_start_f32(float *data, int64_t count, int32_t
/// kind)` starts replacing `count` floats with their sum (kind 0) or mean
/// (kind 1) over the ranks of the calling thread's communicator, in place,
/// and returns a handle for fuse_all_reduce_wait; the floats must not be
/// read or written until then. Without a communicator it leaves them.
/// Called by code convert-fuse-collectives lowers fuse.all_reduce to (one
/// call per bucket); defined by the JIT (lib/JIT/Collectives.cpp), which
/// forwards to the fuse::Communicator that fit installs.
constexpr llvm::StringLiteral kAllReduceStartF32Symbol =
    "fuse_all_reduce_start_f32";

/// `void fuse_all_reduce_wait(int64_t handle)` ends the collective
/// fuse_all_reduce_start_f32 started: its floats hold the result. Called
/// and defined as kAllReduceStartF32Symbol.
constexpr llvm::StringLiteral kAllReduceWaitSymbol = "fuse_all_reduce_wait";

/// `void fuse_all_reduce_progress()` lets the collectives in flight move on
/// (MPI progresses nonblocking collectives only inside its calls). Called
/// by code convert-fuse-collectives overlaps with a bucket in flight;
/// defined as kAllReduceStartF32Symbol.
constexpr llvm::StringLiteral kAllReduceProgressSymbol =
    "fuse_all_reduce_progress";

//===----------------------------------------------------------------------===//
// Derived functions and argument names
//===----------------------------------------------------------------------===//

/// `@<step>_steps`, K steps per call. Produced by fuse-wrap-steps; consumed
/// by Trainer and fusec train.
constexpr llvm::StringLiteral kStepsSuffix = "_steps";

/// `@<step>_eval`, (loss, correct) without an update. Produced by
/// fuse-derive-eval; consumed by fit's evaluation.
constexpr llvm::StringLiteral kEvalSuffix = "_eval";

/// `@<step>_predict`, the logits of the loss's cross-entropy from the
/// parameters and inputs (no labels, dropout off), then their softmax (the
/// class probabilities). Produced by fuse-derive-predict; consumed by fusec
/// sample (the logits), fuse::predict and fusec export.
constexpr llvm::StringLiteral kPredictSuffix = "_predict";

/// The name of the K-step function wrapping `step`.
inline std::string stepsFunctionName(llvm::StringRef step) {
  std::string name = step.str();
  return name.append(kStepsSuffix.data(), kStepsSuffix.size());
}

/// The name of the evaluation function derived from `step`.
inline std::string evalFunctionName(llvm::StringRef step) {
  std::string name = step.str();
  return name.append(kEvalSuffix.data(), kEvalSuffix.size());
}

/// The name of the prediction function derived from `step`.
inline std::string predictFunctionName(llvm::StringRef step) {
  std::string name = step.str();
  return name.append(kPredictSuffix.data(), kPredictSuffix.size());
}

/// The learning-rate argument of a step function (tensor<f32>). Named by
/// fuse-expand-train-step; set by name by fit (Trainer::setInput).
constexpr llvm::StringLiteral kLearningRateArgName = "lr";

/// The argument of a data-parallel step function (tensor<f32>, before
/// `lr`) weighting this rank's gradients in their sum across ranks: its
/// share of the global batch (1/N for equal shards). Named by
/// fuse-expand-train-step with data-parallel; set by fit before each call.
constexpr llvm::StringLiteral kReplicaWeightArgName = "replica_weight";

/// The argument of a data-parallel step function whose loss has dropout
/// (tensor<i64>, before `replica_weight`): the global batch's index of this
/// rank's first example, the rows' offset of every fuse.dropout, so that
/// each example draws the mask it would in one process. Named by
/// fuse-expand-train-step with data-parallel; set by fit before each call.
constexpr llvm::StringLiteral kExampleOffsetArgName = "example_offset";

/// The step-counter argument's name (see kStepCounterAttrName, by which the
/// runtime finds it). Named by fuse-expand-train-step.
constexpr llvm::StringLiteral kStepCounterArgName = "step";

//===----------------------------------------------------------------------===//
// Module attributes
//===----------------------------------------------------------------------===//

/// Module attribute `fuse.target = {triple = "...", cpu = "...", features =
/// "+f1,-f2,..."}`: the machine code is generated for, as llc's --mtriple,
/// --mcpu and --mattr, the features complete. Produced by the compile driver
/// (fuse::compileSpecialized, from CompileOptions::target, the host by
/// default) before the MLIR lowering; consumed by fuse-tile-and-vectorize
/// (its vector width) and the driver's TargetMachine.
constexpr llvm::StringLiteral kTargetAttrName = "fuse.target";
/// Its keys, each a string.
constexpr llvm::StringLiteral kTargetTripleKey = "triple";
constexpr llvm::StringLiteral kTargetCpuKey = "cpu";
constexpr llvm::StringLiteral kTargetFeaturesKey = "features";

} // namespace fuse::abi

#endif // FUSE_ABI_H
