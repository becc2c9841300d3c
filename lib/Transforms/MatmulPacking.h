//===- MatmulPacking.h - Cache blocking and packing of matmuls --*- C++ -*-===//
//
// Part of fuse-tile-and-vectorize: the loop nest around the register
// micro-kernel of a large matmul.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_LIB_TRANSFORMS_MATMULPACKING_H
#define FUSE_LIB_TRANSFORMS_MATMULPACKING_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/PatternMatch.h"

namespace fuse {

/// Rewrites `op` into cache blocks whose right-hand side is packed into
/// contiguous panels one or two registers of `vectorBits` wide, each block a
/// smaller linalg.matmul, when its shape makes that pay. The rows and
/// columns left over by whole panels, and the reduction left over by whole
/// blocks, become edge products on slices, returned for the caller to tile.
/// Fails, leaving `op` alone, when blocking would not pay.
mlir::FailureOr<llvm::SmallVector<mlir::linalg::MatmulOp>>
blockAndPackMatmul(mlir::RewriterBase &rewriter, mlir::linalg::MatmulOp op,
                   unsigned vectorBits);

} // namespace fuse

#endif // FUSE_LIB_TRANSFORMS_MATMULPACKING_H
