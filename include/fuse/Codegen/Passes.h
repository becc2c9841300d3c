//===- Passes.h - Fuse codegen passes -----------------------------*- C++ -*-===//

#ifndef FUSE_CODEGEN_PASSES_H
#define FUSE_CODEGEN_PASSES_H

#include "mlir/Pass/Pass.h"

namespace mlir {
class ModuleOp;
namespace func {
class FuncOp;
} // namespace func
} // namespace mlir

namespace fuse {

#define GEN_PASS_DECL
#include "fuse/Codegen/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "fuse/Codegen/Passes.h.inc"

} // namespace fuse

#endif // FUSE_CODEGEN_PASSES_H
