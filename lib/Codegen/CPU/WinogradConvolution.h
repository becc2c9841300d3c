//===- WinogradConvolution.h - Winograd convolutions ------------*- C++ -*-===//
//
// fuse-winograd-convolution: 3x3 convolutions with unit strides, and
// their filter gradients, as Winograd's minimal filtering algorithms
// F(4x4, 3x3) and F(2x2, 3x3), one image at a time.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_LIB_TRANSFORMS_WINOGRADCONVOLUTION_H
#define FUSE_LIB_TRANSFORMS_WINOGRADCONVOLUTION_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/PatternMatch.h"

namespace fuse {

/// Rewrites `op`, a convolution with a 3x3 filter, unit strides and
/// dilations, an even number of output rows and columns, whole registers of
/// input channels and of filters, and a zero fill as its accumulator, as
/// Winograd's F(m x m, 3x3): m = 4 (36 multiplications per 4x4 output
/// tile, channel and filter instead of 144) on the output's largest block
/// whose sides 4 divides, m = 2 (16 instead of 36) on the strips of 2 left
/// below and to its right. The filter is transformed once; then per image,
/// its (m+2)^2 input tiles are transformed into V[tiles, positions, c]
/// (vectors along c), one linalg.matmul per position gives M[tiles,
/// positions, f], and the output transform writes each image's outputs,
/// which `op`'s element-wise consumer (if it is its only user) finishes
/// while they are in L2. The products are left for the caller to tile.
/// Fails, leaving `op` alone, on other convolutions and on images whose V
/// and M would not fit in L2.
mlir::LogicalResult tileWinogradConvolution(mlir::RewriterBase &rewriter,
                                            mlir::linalg::Conv2DNhwcHwcfOp op,
                                            unsigned vectorBits,
                                            mlir::DominanceInfo &dominance);

/// Rewrites a filter gradient's contraction (see tileFilterGradient) with
/// a 3x3 filter, unit strides and dilations, an output gradient of even
/// height and width, and whole registers of channels and filters, as the
/// transpose of F(m x m, 3x3) (m = winogradGradientTile: 4 when 4 divides
/// dY's height and width, else 2; no blocks): per image, X's (m+2)^2 tiles
/// are transformed into V[tiles, positions, c] and dY's m x m tiles into
/// D[tiles, positions, f], and one linalg.matmul per position accumulates
/// P[p] += V[:, p]^T D[:, p] (c x f) over the images; then dW = G^T P G.
/// The image loop also carries the bias gradient beside it, if any; with
/// `groupImages` dividing the batch into two or more groups (the config's
/// distribution level on n), the threads share the groups, each summing
/// its images into partials of P and db of its own, added in group order
/// (buildImageLoop): the same bits for any thread count. The products are
/// left for the caller to tile. Fails, leaving `op` alone, on other ops and
/// on images whose V and D would not fit in L2.
mlir::LogicalResult tileWinogradFilterGradient(mlir::RewriterBase &rewriter,
                                               mlir::linalg::GenericOp op,
                                               unsigned vectorBits,
                                               int64_t groupImages);

/// The output tile m of the F(m x m, 3x3) that tileWinogradFilterGradient
/// applies to an output gradient of `height` x `width`: 4, 2, or 0 (none,
/// an odd side), so that the strategy can weigh its work per image.
int64_t winogradGradientTile(int64_t height, int64_t width);

} // namespace fuse

#endif // FUSE_LIB_TRANSFORMS_WINOGRADCONVOLUTION_H
