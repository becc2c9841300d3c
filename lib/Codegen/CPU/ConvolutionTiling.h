//===- ConvolutionTiling.h - Register tiles of convolutions -----*- C++ -*-===//
//
// Used by fuse-tile-convolutions: the tiles of a 2-D convolution, and the
// loop nest that fuses the zero fill of its accumulator and its element-wise
// consumer into each tile.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_LIB_TRANSFORMS_CONVOLUTIONTILING_H
#define FUSE_LIB_TRANSFORMS_CONVOLUTIONTILING_H

#include "TileLoops.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/PatternMatch.h"

namespace fuse {

/// The largest divisor of `n` that is at most `cap` (1 when there is none).
int64_t largestDivisorAtMost(int64_t n, int64_t cap);

/// Output columns per convolution tile (rows of its micro-kernel) for
/// registers of `vectorBits`: with two registers of filters each, half the
/// registers as accumulators (8 columns with AVX-512, 4 with AVX2).
int64_t convTileColumns(unsigned vectorBits);

/// The output tile of a convolution's micro-kernel: images x 1 row x
/// columns x filters, whose reduction (filter rows, columns and channels)
/// runs one step at a time with the tile's accumulators in registers.
struct ConvTile {
  int64_t images, columns, filters;
};

/// The tile for an output of `batch` images, `width` columns and `filters`
/// filters, each dividing its dim: up to convTileColumns columns and two
/// registers (of `vectorBits`) of filters. Output rows narrower than that
/// (a filter gradient's, as wide as the filter) take several images per
/// tile instead, so that the micro-kernel keeps microKernelRows rows of
/// accumulators. A tile is its own tile.
ConvTile chooseConvTile(int64_t batch, int64_t width, int64_t filters,
                        unsigned vectorBits, int64_t lanes);

/// Rewrites `op`, whose accumulator is a linalg.fill and whose filter fits
/// in L2, into loops over its output tiles, one nest per band of columns:
/// with one band, all columns in its tiles; with two, the whole tiles of
/// the first band's width, then the columns left in the second's (the
/// config's register tiles, LoweringStrategy.cpp). Each tile zeroes its
/// accumulator, convolves, and applies `op`'s element-wise consumer, if it
/// is its only user, on the tile while it is in cache: the full-size
/// accumulator, its fill and the consumer's pass over memory are gone.
/// (Without a consumer, a tile zeroes and accumulates in its slice of the
/// output.) The tile convolutions are left for the caller to tile along
/// their reduction. Fails, leaving `op` alone, on other convolutions and
/// on tiles that do not divide their band. With `distributedImages` (the
/// config's distribution level; 0: none), the nests run in an scf.forall
/// over blocks of that many images, which the threads share; a block that
/// does not hold whole tiles of every band is not distributed.
mlir::LogicalResult tileConvolution(mlir::RewriterBase &rewriter,
                                    mlir::linalg::Conv2DNhwcHwcfOp op,
                                    llvm::ArrayRef<ConvTile> bands,
                                    mlir::DominanceInfo &dominance,
                                    int64_t distributedImages = 0);

/// Rewrites a filter gradient's contraction, as FuseToLinalg builds it
/// (loops kh, kw, c, f | n, oh, ow over X[n, oh*s + kh*d, ow*s' + kw*d', c]
/// and dY[n, oh, ow, f]), into loops over images, filter taps and register
/// tiles of `rows` channels x `columns` filters (the config's), each
/// accumulating over the output rows a linalg.matmul of a row of X (strided
/// by the stride, transposed) and a row of dY: X and dY are read in their
/// own layouts, one image (in L2) at a time. (A single-channel X takes the
/// filter taps as the tile's rows instead.) The products are left for the
/// caller to tile. `groupImages` splits the images as buildImageLoop does.
/// Fails, leaving `op` alone, on other ops and on tiles that do not divide
/// the channels and filters.
mlir::LogicalResult tileFilterGradient(mlir::RewriterBase &rewriter,
                                       mlir::linalg::GenericOp op, int64_t rows,
                                       int64_t columns, int64_t groupImages);

/// The strides and dilations of a filter gradient's contraction, as
/// FuseToLinalg builds it (see tileFilterGradient).
struct FilterGradientForm {
  int64_t strides[2], dilations[2];
};

/// The form of `op` if it is a filter gradient's contraction, or nothing.
std::optional<FilterGradientForm>
matchFilterGradient(mlir::linalg::GenericOp op);

/// The image loop of a filter gradient `op`, carrying `acc` (dW in the
/// layout `body` works on, defined before `op`) and, if `op` has a bias
/// gradient beside it (the sum of op's output gradient over images, rows
/// and columns, in op's block), db too: per image, `body` accumulates dW
/// and a copy of the bias gradient's sum over the image accumulates db,
/// while the image's output gradient is in L2 (unfused, the sum reads all
/// of it from memory once more). Built at the rewriter's insertion point,
/// or at the bias gradient if that follows `op`. Replaces the bias
/// gradient; returns dW.
///
/// With `groupImages` dividing the batch into two or more groups (the
/// config's distribution level on n; 0: one loop), an scf.forall over the
/// groups, which the threads share, sums each group's images into partials
/// of dW and db of its own (from zero, in the group's image loop, unmarked);
/// then the partials are added to `acc` and db in group order. The groups
/// are fixed by the shapes, so every thread count gives the same bits.
mlir::Value buildImageLoop(mlir::RewriterBase &rewriter,
                           mlir::linalg::GenericOp op, mlir::Value acc,
                           int64_t groupImages, TileLoopBody body);

/// Whether the filter of `op` does not fit in half of L2 (a filter
/// gradient's, whose "filter" is the output gradient): its tiles then keep
/// the filter rows as their outermost loop.
bool hasLargeFilter(mlir::linalg::Conv2DNhwcHwcfOp op);

} // namespace fuse

#endif // FUSE_LIB_TRANSFORMS_CONVOLUTIONTILING_H
