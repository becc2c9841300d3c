//===- FuseDialect.h - The fuse dialect -------------------------*- C++ -*-===//

#ifndef FUSE_DIALECT_FUSE_IR_FUSEDIALECT_H
#define FUSE_DIALECT_FUSE_IR_FUSEDIALECT_H

#include "mlir/IR/Dialect.h"
#include "mlir/IR/DialectRegistry.h"

#include "Fuse/FuseOpsDialect.h.inc"

namespace fuse {
/// The function result attribute `fuse.in_place = N`: the result is written
/// into argument N's buffer.
constexpr llvm::StringLiteral kInPlaceAttrName = "fuse.in_place";
/// The argument attribute `fuse.per_step` of a step function: a batch input,
/// different at every step (stacked when steps are wrapped).
constexpr llvm::StringLiteral kPerStepAttrName = "fuse.per_step";
/// The argument attribute `fuse.step_counter` of a step function: the
/// tensor<i64> step number, advanced by one per step.
constexpr llvm::StringLiteral kStepCounterAttrName = "fuse.step_counter";
/// The argument and result attribute `fuse.stacked` of a K-step function:
/// dim 0 counts the steps. It is the same for every stacked argument and
/// result, and set at run time: it is not specialized.
constexpr llvm::StringLiteral kStackedAttrName = "fuse.stacked";
/// The argument attribute `fuse.init = #fuse.init<...>`: how training
/// initializes a parameter or optimizer state.
constexpr llvm::StringLiteral kInitAttrName = "fuse.init";
/// The argument attribute `fuse.class_labels = C`: integer class labels,
/// each of which must be in [0, C); the engine checks them before a call.
constexpr llvm::StringLiteral kClassLabelsAttrName = "fuse.class_labels";

/// Registers the translation of the fuse dialect's attributes to LLVM IR:
/// its argument attributes describe how Fuse calls and trains a function,
/// and have no LLVM counterpart, so translation drops them (instead of
/// warning about each).
void registerFuseDialectTranslation(mlir::DialectRegistry &registry);
} // namespace fuse

#endif // FUSE_DIALECT_FUSE_IR_FUSEDIALECT_H
