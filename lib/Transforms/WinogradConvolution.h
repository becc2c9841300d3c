//===- WinogradConvolution.h - Winograd F(2x2, 3x3) convolutions -*- C++
//-*-===//
//
// Part of fuse-tile-and-vectorize: 3x3 convolutions with unit strides as
// Winograd's minimal filtering algorithm F(2x2, 3x3), one image at a time.
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
/// Winograd's F(2x2, 3x3): 16 products of (tiles x channels) and (channels
/// x filters) instead of 36 multiplications per 2x2 output tile. The
/// filter is transformed once; then per image, its 4x4 input tiles are
/// transformed into V[tiles, 16, c] (vectors along c), 16 linalg.matmul
/// give M[tiles, 16, f], and the output transform writes each image's
/// outputs, which `op`'s element-wise consumer (if it is its only user)
/// finishes while they are in L2. The products are left for the caller to
/// tile. Fails, leaving `op` alone, on other convolutions.
mlir::LogicalResult tileWinogradConvolution(mlir::RewriterBase &rewriter,
                                            mlir::linalg::Conv2DNhwcHwcfOp op,
                                            unsigned vectorBits,
                                            mlir::DominanceInfo &dominance);

/// Rewrites a filter gradient's contraction (see tileFilterGradient) with
/// a 3x3 filter, unit strides and dilations, an output gradient of even
/// height and width, and whole registers of channels and filters, as the
/// transpose of F(2x2, 3x3): per image, X's 4x4 tiles are transformed into
/// V[tiles, 16, c] and dY's 2x2 tiles into D[tiles, 16, f], and 16
/// linalg.matmul accumulate P[p] += V[:, p]^T D[:, p] (c x f) over the
/// images; then dW = G^T P G. The image loop also carries the bias gradient
/// beside it, if any (buildImageLoop). The products are left for the
/// caller to tile. Fails, leaving `op` alone, on other ops.
mlir::LogicalResult tileWinogradFilterGradient(mlir::RewriterBase &rewriter,
                                               mlir::linalg::GenericOp op,
                                               unsigned vectorBits);

} // namespace fuse

#endif // FUSE_LIB_TRANSFORMS_WINOGRADCONVOLUTION_H
