//===- MatmulPacking.h - Cache blocking and packing of matmuls --*- C++ -*-===//
//
// Part of fuse-block-and-pack-matmuls: the loop nest around the register
// micro-kernel of a large matmul.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_LIB_TRANSFORMS_MATMULPACKING_H
#define FUSE_LIB_TRANSFORMS_MATMULPACKING_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/PatternMatch.h"

namespace fuse {

/// The height of the matmul micro-kernel for registers of `vectorBits`:
/// rows x 2 registers of columns keep 3/4 of the registers as accumulators,
/// the rest for a row of B and a broadcast of A. 12 rows use 24 of
/// AVX-512's 32 registers, 6 rows 12 of AVX2's 16 (BLIS's 6 x 16 Haswell
/// kernel; with 12 rows there, every step of the micro-kernel loaded and
/// stored its accumulators). Packed panels of A have this height, and the
/// tile sizes of matmuls are chosen up to it.
int64_t microKernelRows(unsigned vectorBits);

/// The layout of a static matmul over (m, n, k) whose operands are stored
/// [m, k] or [k, m] (lhsTransposed), and [k, n] or [n, k] (rhsTransposed).
struct MatmulForm {
  bool lhsTransposed = false, rhsTransposed = false;
  int64_t m = 0, n = 0, k = 0;
};

/// The form of `op`, or nothing if it is dynamic or its maps are not those
/// of a plain or transposed matmul.
std::optional<MatmulForm> matchMatmul(mlir::linalg::MatmulOp op);

/// Whether blocking and packing `op` pays (see blockAndPackMatmul): its B
/// is transposed (packed anyway), or larger than half of L2 with enough
/// rows of A to reuse each packed panel.
bool paysToBlockAndPack(mlir::linalg::MatmulOp op, unsigned vectorBits);

/// The cache blocks of a packed matmul: MC rows of A (whole panels of
/// microKernelRows), NC columns of B (whole panels of two registers), KC
/// steps of the reduction.
struct PackedBlocks {
  int64_t mc, nc, kc;
};

/// The blocks of `op` when blocking and packing pays (paysToBlockAndPack):
/// KC up to 256 steps (its panels of A in L1), NC up to 512 columns (B's
/// packed block in L2), MC up to 1024 rows, each dividing the part of its
/// dim that whole panels and blocks cover.
std::optional<PackedBlocks> choosePackedBlocks(mlir::linalg::MatmulOp op,
                                               unsigned vectorBits);

/// Rewrites `op` into cache blocks of `blocks` whose operands are packed
/// into contiguous panels (B's two registers of `vectorBits` wide, A's
/// microKernelRows high), each block a smaller linalg.matmul. The columns
/// left over by whole panels, and the reduction left over by whole blocks,
/// become edge products on slices, returned for the caller to tile. Fails,
/// leaving `op` alone, on other matmuls and on blocks that do not divide
/// their dims.
///
/// With `distributedColumns` (the config's distribution level; 0: none), a
/// multiple of B's panels that divides the whole panels' columns into two
/// or more blocks, the threads share those blocks: an scf.forall over
/// them, each running the nest over its columns (NC at most the block).
/// With `distributedRows` instead, a multiple of A's panels that divides
/// the whole panels' rows, the threads share the MC loop (as BLIS's `ic`
/// loop): MC becomes the block, B's packed block is shared by all of them
/// and each packs only its own rows of A. Neither changes any sum.
mlir::FailureOr<llvm::SmallVector<mlir::linalg::MatmulOp>>
blockAndPackMatmul(mlir::RewriterBase &rewriter, mlir::linalg::MatmulOp op,
                   const PackedBlocks &blocks, unsigned vectorBits,
                   int64_t distributedColumns = 0, int64_t distributedRows = 0);

} // namespace fuse

#endif // FUSE_LIB_TRANSFORMS_MATMULPACKING_H
