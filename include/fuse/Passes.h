//===- Passes.h - Fuse's passes ---------------------------------*- C++ -*-===//

#ifndef FUSE_PASSES_H
#define FUSE_PASSES_H

#include "mlir/Pass/Pass.h"

namespace mlir::func {
class FuncOp;
} // namespace mlir::func

namespace fuse {

#define GEN_PASS_DECL
#include "fuse/Passes.h.inc"

/// Retypes `func`'s arguments to `argTypes` and propagates the shapes through
/// its body (see the `fuse-specialize` pass). Emits a located error and fails
/// when a type is incompatible with the declared one or an op cannot be
/// specialized; the function is then left in an unspecified state.
mlir::LogicalResult specializeFunction(mlir::func::FuncOp func,
                                       mlir::TypeRange argTypes);

#define GEN_PASS_REGISTRATION
#include "fuse/Passes.h.inc"

} // namespace fuse

#endif // FUSE_PASSES_H
