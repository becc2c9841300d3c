//===- Passes.h - Fuse conversion passes ------------------------*- C++ -*-===//

#ifndef FUSE_CONVERSION_PASSES_H
#define FUSE_CONVERSION_PASSES_H

#include "mlir/Pass/Pass.h"

namespace mlir {
class ModuleOp;
namespace func {
class FuncOp;
} // namespace func
} // namespace mlir

namespace fuse {

#define GEN_PASS_DECL
#include "fuse/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "fuse/Conversion/Passes.h.inc"

} // namespace fuse

#endif // FUSE_CONVERSION_PASSES_H
