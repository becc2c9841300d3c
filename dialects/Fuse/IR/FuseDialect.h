//===- FuseDialect.h - The fuse dialect -------------------------*- C++ -*-===//

#ifndef FUSE_DIALECT_FUSE_IR_FUSEDIALECT_H
#define FUSE_DIALECT_FUSE_IR_FUSEDIALECT_H

#include "mlir/IR/Dialect.h"

#include "Fuse/FuseOpsDialect.h.inc"

#endif // FUSE_DIALECT_FUSE_IR_FUSEDIALECT_H
