//===- Passes.h - Fuse transforms passes ------------------------*- C++ -*-===//

#ifndef FUSE_TRANSFORMS_PASSES_H
#define FUSE_TRANSFORMS_PASSES_H

#include "mlir/Pass/Pass.h"

namespace mlir {
class ModuleOp;
namespace func {
class FuncOp;
} // namespace func
} // namespace mlir

namespace fuse {

#define GEN_PASS_DECL
#include "fuse/Transforms/Passes.h.inc"

/// Retypes `func`'s arguments to `argTypes` and propagates the shapes through
/// its body (see the `fuse-specialize` pass). Emits a located error and fails
/// when a type is incompatible with the declared one or an op cannot be
/// specialized; the function is then left in an unspecified state.
mlir::LogicalResult specializeFunction(mlir::func::FuncOp func,
                                       mlir::TypeRange argTypes);

/// Erases every function of `module` but `name`, renames it to `symbol`
/// (unless empty), and specializes it to `argTypes`; then verifies the module.
/// This is how one entry is prepared for compilation.
mlir::FailureOr<mlir::func::FuncOp>
isolateAndSpecialize(mlir::ModuleOp module, llvm::StringRef name,
                     mlir::TypeRange argTypes, llvm::StringRef symbol = {});

#define GEN_PASS_REGISTRATION
#include "fuse/Transforms/Passes.h.inc"

} // namespace fuse

#endif // FUSE_TRANSFORMS_PASSES_H
