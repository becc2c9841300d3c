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

/// The height of the matmul micro-kernel: 12 rows x 2 registers of columns
/// keep 24 of AVX-512's 32 registers as accumulators. Packed panels of A have
/// this height, and the tile sizes of matmuls are chosen up to it.
constexpr int64_t kMicroKernelRows = 12;

/// The layout of a static matmul over (m, n, k) whose operands are stored
/// [m, k] or [k, m] (lhsTransposed), and [k, n] or [n, k] (rhsTransposed).
struct MatmulForm {
  bool lhsTransposed = false, rhsTransposed = false;
  int64_t m = 0, n = 0, k = 0;
};

/// The form of `op`, or nothing if it is dynamic or its maps are not those
/// of a plain or transposed matmul.
std::optional<MatmulForm> matchMatmul(mlir::linalg::MatmulOp op);

/// Rewrites `op` into cache blocks whose operands are packed into contiguous
/// panels (B's two registers of `vectorBits` wide, A's kMicroKernelRows
/// high), each block a smaller linalg.matmul, when its shape makes that pay.
/// The columns left over by whole panels, and the reduction left over by
/// whole blocks, become edge products on slices, returned for the caller to
/// tile. Fails, leaving `op` alone, when blocking would not pay.
mlir::FailureOr<llvm::SmallVector<mlir::linalg::MatmulOp>>
blockAndPackMatmul(mlir::RewriterBase &rewriter, mlir::linalg::MatmulOp op,
                   unsigned vectorBits);

} // namespace fuse

#endif // FUSE_LIB_TRANSFORMS_MATMULPACKING_H
