//===- DotProductTiling.h - Matmuls of a few rows as dot products -*- C++ -*-=//
//
// Part of fuse-block-and-pack-matmuls: a matmul of a few rows against a
// transposed right-hand side, as a batch-1 backward pass computes dx = dy W^T.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_LIB_TRANSFORMS_DOTPRODUCTTILING_H
#define FUSE_LIB_TRANSFORMS_DOTPRODUCTTILING_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/PatternMatch.h"

namespace fuse {

/// The rows of B per tile when `op`, C[m, n] += A[m, k] * B[n, k] with A
/// stored [m, k] and a few rows m (1 to 3), is computed as dot products:
/// floats, k a whole number of registers, and at least 4 rows of B per tile
/// (fewer would wait on the FMAs' latency). Nothing for other matmuls.
std::optional<int64_t> dotProductTileRows(mlir::linalg::MatmulOp op,
                                          unsigned vectorBits);

/// Rewrites `op` (see dotProductTileRows) into loops over tiles of `rows`
/// rows of B, each a sum of dot products of A's rows and B's, both read
/// contiguously along k: a register of partial sums per (row of A, row of
/// B) accumulates one register of k at a time, then reduces across its
/// lanes. Packing B into panels instead, the micro-kernel's way, would cost
/// as much as the product when A has one row. Fails, leaving `op` alone, on
/// matmuls that are not a transposed product or that `rows` does not
/// divide.
mlir::LogicalResult tileAsDotProducts(mlir::RewriterBase &rewriter,
                                      mlir::linalg::MatmulOp op, int64_t rows,
                                      unsigned vectorBits);

} // namespace fuse

#endif // FUSE_LIB_TRANSFORMS_DOTPRODUCTTILING_H
