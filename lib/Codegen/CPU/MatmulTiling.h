//===- MatmulTiling.h - Register tiles of unpacked matmuls ------*- C++ -*-===//
//
// Used by fuse-tile-matmuls and fuse-block-and-pack-matmuls: the register
// tiles of matmuls that are not cache-blocked, with the zero fill of their
// output and their element-wise consumer fused, and the split of awkward
// sizes into whole tiles and edges.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_LIB_TRANSFORMS_MATMULTILING_H
#define FUSE_LIB_TRANSFORMS_MATMULTILING_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/PatternMatch.h"

namespace fuse {

/// The rows of a batch_matmul's register tile, at most, for registers of
/// `vectorBits`: up to two registers of columns each, half the registers
/// as accumulators (8 rows with AVX-512, 4 with AVX2).
int64_t batchMatmulTileRows(unsigned vectorBits);

/// Splits a matmul whose columns, or a batch_matmul whose rows or columns,
/// have no divisor that fills at least half a tile (13 rows, 1009 columns:
/// tiles that divide them would be 1 x 1), or whose columns are an odd
/// number of registers (784: tiles one register wide, 49 of them), into a
/// product over whole tiles (rows of the tile's height, whole registers of
/// columns) and edge products over the rows and columns left, each a
/// product on slices,
/// returned for the caller to tile (splitWithFills: a fill of the output
/// becomes one per part). Fails, leaving `op` alone, when its sizes have
/// such divisors. (A matmul's rows are banded when it is tiled.)
mlir::FailureOr<llvm::SmallVector<mlir::linalg::LinalgOp>>
splitIntoWholeTiles(mlir::RewriterBase &rewriter, mlir::linalg::LinalgOp op,
                    unsigned vectorBits);

/// Tiles a matmul or batch_matmul whose output is a zero fill over its
/// output tiles (`sizes` but the last, for every loop but the reduction),
/// with the fill fused into each, then each tile along the reduction by the
/// last of `sizes`: a tile's accumulators start as zeros in registers
/// instead of a pass that fills the output in memory and a read of it.
/// Fails, leaving `op` alone, on other ops.
mlir::LogicalResult tileWithFusedFill(mlir::RewriterBase &rewriter,
                                      mlir::linalg::LinalgOp op,
                                      llvm::ArrayRef<int64_t> sizes);

/// The rows [begin, end) of a matmul's output, in register tiles of `rows`
/// x `columns`.
struct RowBand {
  int64_t begin, end, rows, columns;
};

/// Rewrites a matmul whose output is a zero fill and whose result only an
/// element-wise consumer reads (the optimizer's update of the weight it is
/// the gradient of, a bias add) into loops over output tiles, one nest per
/// band of rows (`bands` cover the rows in order): each tile is zeroed,
/// accumulated over the whole reduction and finished by the consumer's tile
/// while it is in registers and L1, so the product never reaches memory, and
/// the consumer does not read it back. The tile products are left for the
/// caller to tile along the reduction. With `distributedColumns` (not 0, a
/// multiple of every band's columns that divides them all), the nests run
/// in an scf.forall over blocks of that many columns, which the threads
/// share; with `distributedRows` instead (not 0, dividing the rows), over
/// blocks of that many rows, and `bands` then cover one block's rows. Either
/// way each output is computed as without it, by one thread, over the whole
/// reduction in the same order. Fails, leaving `op` alone, on other matmuls.
mlir::LogicalResult tileMatmulWithConsumer(mlir::RewriterBase &rewriter,
                                           mlir::linalg::MatmulOp op,
                                           llvm::ArrayRef<RowBand> bands,
                                           mlir::DominanceInfo &dominance,
                                           int64_t distributedColumns = 0,
                                           int64_t distributedRows = 0);

/// Rewrites a matmul (default indexing maps) whose output is a zero fill
/// into products over blocks of `block` reduction steps, each into a zero
/// fill of its own, then their sum in block order (((p0 + p1) + p2) ...),
/// an element-wise generic fused into the result's element-wise consumer
/// when there is one. With `distribute`, the blocks run in an scf.forall
/// that the threads share, so that a thread reads only its block's rows of
/// B (a layer's weight: the rows its update wrote); without, in an scf.for.
/// The sums are the same either way, and do not depend on the thread
/// count. Returns the block's product (whose only reader is an element-wise
/// copy into the block's partial sums) for the caller to tile, or fails,
/// leaving `op` alone.
mlir::FailureOr<mlir::linalg::MatmulOp>
splitReductionIntoBlocks(mlir::RewriterBase &rewriter,
                         mlir::linalg::MatmulOp op, int64_t block,
                         bool distribute, unsigned vectorBits);

} // namespace fuse

#endif // FUSE_LIB_TRANSFORMS_MATMULTILING_H
