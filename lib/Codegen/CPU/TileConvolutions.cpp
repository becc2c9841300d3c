//===- TileConvolutions.cpp - fuse-tile-convolutions ----------------------===//
//
// Applies the filter_gradient and direct_conv configs: filter gradients as
// products per image and tap, convolutions as loops over register tiles
// with their fill and consumer fused.
//
//===----------------------------------------------------------------------===//

#include "fuse/Codegen/Passes.h"

#include "PassDetail.h"

#include "ConvolutionTiling.h"
#include "LoweringStrategy.h"
#include "TileLoops.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "fuse-tile-convolutions"

namespace fuse {
#define GEN_PASS_DEF_FUSETILECONVOLUTIONS
#include "fuse/Codegen/Passes.h.inc"
} // namespace fuse

using namespace mlir;
using fuse::LoweringStrategy;

namespace {

/// Splits a convolution whose output rows are not a whole number of
/// fuse::convTileColumns into one over the whole tiles and one over the
/// rest, each a convolution on slices. Tiles must divide a convolution (see
/// chooseTileSizes): unsplit, a width of 26 would get tiles of 2 columns,
/// 4 accumulators instead of 16.
void splitConvolutionColumns(RewriterBase &rewriter,
                             linalg::Conv2DNhwcHwcfOp op, unsigned vectorBits) {
  if (!op.hasPureTensorSemantics() || op.hasDynamicShape())
    return;
  int64_t width =
      cast<RankedTensorType>(op.getDpsInits()[0].getType()).getDimSize(2);
  int64_t tile = fuse::convTileColumns(vectorBits);
  int64_t main = width / tile * tile;
  if (main == 0 || main == width)
    return;
  // n, oh, ow, f, kh, kw, c: split along ow.
  (void)fuse::splitWithFills(rewriter, op, {{2, main}});
}

struct TileConvolutionsPass
    : fuse::impl::FuseTileConvolutionsBase<TileConvolutionsPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    unsigned bits = fuse::resolveVectorBits(func, vectorBits);
    fuse::DropClonedConfigs listener;
    IRRewriter rewriter(&getContext(), &listener);
    SmallVector<linalg::Conv2DNhwcHwcfOp> convolutions;
    SmallVector<linalg::GenericOp> gradients;
    func.walk([&](Operation *op) {
      if (auto conv = dyn_cast<linalg::Conv2DNhwcHwcfOp>(op);
          conv && fuse::hasStrategy(op, LoweringStrategy::direct_conv))
        convolutions.push_back(conv);
      else if (auto generic = dyn_cast<linalg::GenericOp>(op);
               generic &&
               fuse::hasStrategy(op, LoweringStrategy::filter_gradient))
        gradients.push_back(generic);
    });
    // A filter gradient the rewrite refuses is tiled as it is. (A filter
    // gradient's rewrite erases the bias gradient beside it.)
    for (linalg::GenericOp gradient : gradients) {
      // kh, kw, c, f | n, oh, ow: register tiles of (c, f), groups of
      // images for the threads.
      auto config = fuse::LoweringConfigAttr::lookup(gradient);
      ArrayRef<int64_t> tile = config.getRegisters();
      if (failed(fuse::tileFilterGradient(rewriter, gradient, tile[2], tile[3],
                                          config.getDistribution()[4])))
        fuse::setLoweringConfig(gradient,
                                fuse::chooseTiledConfig(gradient, bits));
    }
    // The others, with a filter too large for L2, are split into whole
    // tiles; their parts get their configs when they are tiled.
    DominanceInfo dominance(func);
    for (linalg::Conv2DNhwcHwcfOp conv : convolutions) {
      // n, oh, ow, f, kh, kw, c: one tile per band of columns, blocks of
      // images for the threads.
      auto config = fuse::LoweringConfigAttr::lookup(conv);
      SmallVector<fuse::ConvTile> bands;
      for (ArrayRef<int64_t> tile : config.getRegisterTiles())
        bands.push_back({tile[0], tile[2], tile[3]});
      if (failed(fuse::tileConvolution(rewriter, conv, bands, dominance,
                                       config.getDistribution()[0]))) {
        LLVM_DEBUG(llvm::dbgs()
                   << "conv at " << conv.getLoc() << ": tiled in one pass\n");
        splitConvolutionColumns(rewriter, conv, bits);
      }
    }
  }
};

} // namespace
