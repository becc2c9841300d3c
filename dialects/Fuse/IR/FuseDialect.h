//===- FuseDialect.h - The fuse dialect -------------------------*- C++ -*-===//

#ifndef FUSE_DIALECT_FUSE_IR_FUSEDIALECT_H
#define FUSE_DIALECT_FUSE_IR_FUSEDIALECT_H

#include "mlir/IR/Dialect.h"

#include "Fuse/FuseOpsDialect.h.inc"

namespace fuse {
/// The function result attribute `fuse.in_place = N`: the result is written
/// into argument N's buffer.
constexpr llvm::StringLiteral kInPlaceAttrName = "fuse.in_place";
} // namespace fuse

#endif // FUSE_DIALECT_FUSE_IR_FUSEDIALECT_H
