//===- TileLoops.h - Loops over tiles and fused tiles -----------*- C++ -*-===//
//
// Shared by the CPU strategy's apply passes: the scf.for loops that
// MatmulPacking.cpp, ConvolutionTiling.cpp and MatmulTiling.cpp build around
// their tiles, each threading the tensors the tiles are inserted into, the tile
// of a contraction with its zero fill and element-wise consumer fused, and the
// split of a contraction into parts over slices.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_LIB_TRANSFORMS_TILELOOPS_H
#define FUSE_LIB_TRANSFORMS_TILELOOPS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Dominance.h"
#include "mlir/Interfaces/TilingInterface.h"

namespace fuse {

/// Lanes of `elementType` (an integer or float; i1 counts as a byte) in a
/// register of `vectorBits` bits, at least 1.
int64_t vectorLanes(mlir::Type elementType, unsigned vectorBits);

/// The vector registers of an x86-64 target whose widest registers are
/// `vectorBits` wide: AVX-512's 32, else the 16 of AVX and SSE. (The
/// strategy takes AVX-512's width whenever the target has it.)
int64_t vectorRegisters(unsigned vectorBits);

/// The body of a tile loop: from the induction variable and the carried
/// tensor, the tensor for the next iteration.
using TileLoopBody = llvm::function_ref<mlir::Value(mlir::OpBuilder &,
                                                    mlir::Value, mlir::Value)>;

/// `for iv = lower to upper step step` carrying `init`; returns its result.
mlir::Value buildTileLoop(mlir::OpBuilder &b, mlir::Location loc, int64_t lower,
                          int64_t upper, int64_t step, mlir::Value init,
                          TileLoopBody body);

/// The body of a loop carrying several tensors.
using TileLoopBodyN = llvm::function_ref<llvm::SmallVector<mlir::Value>(
    mlir::OpBuilder &, mlir::Value, mlir::ValueRange)>;

/// `for iv = lower to upper step step` carrying `inits`; returns its
/// results.
llvm::SmallVector<mlir::Value> buildTileLoop(mlir::OpBuilder &b,
                                             mlir::Location loc, int64_t lower,
                                             int64_t upper, int64_t step,
                                             mlir::ValueRange inits,
                                             TileLoopBodyN body);

/// The constant that `pad` pads with, if it is defined outside the pad's
/// region (a fill of it can replace the pad), or null.
mlir::Value paddingValue(mlir::tensor::PadOp pad);

/// Sets `operand` of a tile that tiling made to `value`, and erases the
/// slice it read before if nothing else reads it (a slice of a result left
/// behind would keep the untiled op alive).
void replaceOperand(mlir::OpOperand &operand, mlir::Value value);

/// The element-wise consumer of `producer`'s only result: a generic in the
/// same block whose loops are all parallel, which reads the result element
/// for element and writes each of its outputs element for element, all of
/// the result's shape, so that its tile is exactly the producer's output
/// tile. Returns the number of the operand that reads the result, or
/// nothing.
std::optional<unsigned>
matchElementwiseConsumer(mlir::Operation *producer,
                         mlir::linalg::GenericOp &consumer);

/// Where a loop nest that replaces `producer` and its `consumer` (if any)
/// goes: at the producer, so that a profile charges the nest to it, unless
/// the consumer reads (or its body captures) values defined after the
/// producer.
mlir::Operation *fusedNestAnchor(mlir::Operation *producer,
                                 mlir::linalg::GenericOp consumer,
                                 mlir::DominanceInfo &dominance);

/// One output tile of `producer` (a contraction whose output is the zero
/// fill `fill`) at `offsets` x `sizes` of the output, the producer's tile
/// spanning `producerOffsets` x `producerSizes` of its loops: a tile-sized
/// accumulator is filled, accumulated by the producer's tile, and finished
/// by `consumer`'s tile (reading it as operand `consumerInput`), which
/// writes slices of `outs`, the tensors that replace its outputs. Without
/// a consumer, the producer accumulates in its tile of `outs[0]`. Returns
/// `outs` with the tiles inserted.
mlir::FailureOr<llvm::SmallVector<mlir::Value>>
buildFusedTile(mlir::OpBuilder &b, mlir::Location loc,
               mlir::TilingInterface producer, mlir::linalg::FillOp fill,
               llvm::ArrayRef<mlir::OpFoldResult> producerOffsets,
               llvm::ArrayRef<mlir::OpFoldResult> producerSizes,
               mlir::linalg::GenericOp consumer, unsigned consumerInput,
               llvm::ArrayRef<mlir::OpFoldResult> offsets,
               llvm::ArrayRef<mlir::OpFoldResult> sizes, mlir::ValueRange outs);

/// The body of the threads' loop over blocks: from the block's first index
/// and the shared tensors, the tensors with the block written.
using BlockLoopBody = llvm::function_ref<llvm::SmallVector<mlir::Value>(
    mlir::OpBuilder &, mlir::Value, mlir::ValueRange)>;

/// The threads' loop over blocks of `block` indices of dim `dim` of `outs`
/// (each `size` long there): an scf.forall from 0 to `size` step `block`
/// sharing `outs`, whose iteration runs `body` and inserts the block of
/// each tensor `body` returns (the block's slice along `dim`, whole along
/// the other dims) into its shared tensor. `body` may write only its block.
/// Returns the forall.
mlir::scf::ForallOp buildBlockLoop(mlir::RewriterBase &rewriter,
                                   mlir::Location loc, int64_t size,
                                   int64_t block, unsigned dim,
                                   mlir::ValueRange outs, BlockLoopBody body);

/// A split of an op's iteration space: a loop and the position it is split
/// at.
struct SplitPoint {
  unsigned dim;
  int64_t position;
};

/// Splits `op` (static, on tensors) at each of `points` in turn, every part
/// of one split split again at the next, with upstream linalg::splitOp, and
/// returns the parts in order, each an op like `op` on slices. A fill that
/// only `op` reads becomes one fill per part whose reduction starts at 0,
/// which the part's tiles can fuse; a part past a split of a reduction
/// accumulates onto the part before it.
llvm::SmallVector<mlir::linalg::LinalgOp>
splitWithFills(mlir::RewriterBase &rewriter, mlir::linalg::LinalgOp op,
               llvm::ArrayRef<SplitPoint> points);

} // namespace fuse

#endif // FUSE_LIB_TRANSFORMS_TILELOOPS_H
