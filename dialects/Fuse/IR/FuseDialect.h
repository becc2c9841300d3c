//===- FuseDialect.h - The fuse dialect -------------------------*- C++ -*-===//

#ifndef FUSE_DIALECT_FUSE_IR_FUSEDIALECT_H
#define FUSE_DIALECT_FUSE_IR_FUSEDIALECT_H

#include "fuse/ABI.h"

#include "mlir/IR/Dialect.h"
#include "mlir/IR/DialectRegistry.h"

#include "Fuse/FuseOpsDialect.h.inc"

namespace fuse {
/// The argument and result attributes the dialect verifies: the calling and
/// training contract, spelled once in fuse/ABI.h (see there for each).
using abi::kClassLabelsAttrName;
using abi::kInitAttrName;
using abi::kInPlaceAttrName;
using abi::kLowHalfOfAttrName;
using abi::kPerStepAttrName;
using abi::kSplitHalvesAttrName;
using abi::kStackedAttrName;
using abi::kStepCounterAttrName;

/// The attributes the CPU code generator's passes set on ops for the passes
/// after them, verified by the dialect: `fuse.lowering_config`
/// (LoweringConfigAttr::kAttrName) holds a #fuse.lowering_config, and
/// `fuse.image_loop` is a unit attribute on the scf.for loops over a batch's
/// images that fuse-winograd-convolution and fuse-tile-convolutions build,
/// which fuse-image-loop-fusion fuses and unmarks. Neither reaches the
/// runtime.
constexpr llvm::StringLiteral kImageLoopAttrName = "fuse.image_loop";

/// `fuse.optimizer_update`, a unit attribute on the linalg.generic that
/// updates one parameter and its optimizer state in place: set by
/// convert-fuse-optimizers-to-linalg (kept by fuse-elementwise-fusion), read
/// by the CPU strategy, which splits it into cache-sized chunks for the
/// threads (docs/design.md, "Threads").
constexpr llvm::StringLiteral kOptimizerUpdateAttrName =
    "fuse.optimizer_update";

/// `fuse.materialize`, a unit attribute on an element-wise op whose result
/// is computed where the op stands and kept in memory, never recomputed in
/// its readers: set by fuse-apply-precision-policy on a ReLU's byte mask
/// (computed in the forward pass, read by the backward pass, so that the
/// f32 activation it is taken from need not live across the loss), carried
/// to its linalg.generic by convert-fuse-to-linalg, and kept by
/// fuse-elementwise-fusion, which never fuses the op into a reader.
constexpr llvm::StringLiteral kMaterializeAttrName = "fuse.materialize";

/// Registers the translation of the fuse dialect's attributes to LLVM IR:
/// its argument attributes describe how Fuse calls and trains a function,
/// and have no LLVM counterpart, so translation drops them (instead of
/// warning about each).
void registerFuseDialectTranslation(mlir::DialectRegistry &registry);
} // namespace fuse

#endif // FUSE_DIALECT_FUSE_IR_FUSEDIALECT_H
