//===- TileMatmuls.cpp - fuse-tile-matmuls --------------------------------===//
//
// The register tiles of matmuls and batch_matmuls, with their fill and
// element-wise consumer fused, from their configs' register level.
//
//===----------------------------------------------------------------------===//

#include "fuse/Codegen/Passes.h"

#include "PassDetail.h"

#include "LoweringStrategy.h"
#include "MatmulTiling.h"
#include "TileLoops.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "fuse-tile-matmuls"

namespace fuse {
#define GEN_PASS_DEF_FUSETILEMATMULS
#include "fuse/Codegen/Passes.h.inc"
} // namespace fuse

using namespace mlir;
using fuse::LoweringStrategy;

namespace {

struct TileMatmulsPass : fuse::impl::FuseTileMatmulsBase<TileMatmulsPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    unsigned bits = fuse::resolveVectorBits(func, vectorBits);
    // The tiles lose the product's config: fuse-tile-registers gives them
    // their own.
    fuse::DropClonedConfigs listener;
    IRRewriter rewriter(&getContext(), &listener);
    SmallVector<linalg::LinalgOp> products;
    func.walk([&](linalg::LinalgOp op) {
      if (isa<linalg::MatmulOp, linalg::BatchMatmulOp>(op) &&
          op.hasPureTensorSemantics() && !op.hasDynamicShape() &&
          !fuse::isRegisterTile(op))
        products.push_back(op);
    });
    DominanceInfo dominance(func);
    for (linalg::LinalgOp op : products) {
      // (A filter gradient's products were created without one.)
      fuse::LoweringConfigAttr config = fuse::getOrChooseTiledConfig(op, bits);
      if (config.getStrategy() != LoweringStrategy::matmul_tiles &&
          config.getStrategy() != LoweringStrategy::batch_matmul_tiles) {
        config = fuse::chooseTiledConfig(op, bits);
        fuse::setLoweringConfig(op, config);
      }
      // The vector level is one tile that divides the whole product; its
      // reduction step is the register tiles' (two, a bf16 pair, where the
      // strategy chose vdpbf16ps).
      SmallVector<int64_t> sizes(config.getVector());
      auto matmul = dyn_cast<linalg::MatmulOp>(op.getOperation());
      if (!matmul) {
        (void)fuse::tileWithFusedFill(rewriter, op, sizes);
        continue;
      }
      int64_t steps = config.getRegisterTiles().front().back();
      sizes.back() = steps;
      SmallVector<int64_t> ranges = op.getStaticLoopRanges();
      SmallVector<fuse::RowBand> bands = fuse::getRowBands(config, ranges[0]);
      int64_t rows = config.getDistribution()[0];
      int64_t columns = config.getDistribution()[1];
      // Blocks of the reduction: each block's product is tiled as a product
      // without consumer (its sum finishes it), in the bands of the whole.
      int64_t reduction = config.getDistribution()[2];
      auto tileBands = [&](linalg::LinalgOp product) {
        if (bands.size() == 1 ||
            llvm::is_contained(product.getStaticLoopRanges(), 0)) {
          (void)fuse::tileWithFusedFill(rewriter, product, sizes);
          return;
        }
        // One product per band, each tiled with its fill.
        SmallVector<linalg::LinalgOp> parts =
            fuse::splitWithFills(rewriter, product, {{0, bands[1].begin}});
        for (auto [part, band] : llvm::zip(parts, bands))
          (void)fuse::tileWithFusedFill(rewriter, part,
                                        {band.rows, band.columns, steps});
      };
      if (reduction != 0) {
        // The blocks go to the threads when each has enough work; their
        // sums are the same either way.
        bool distribute =
            fuse::isWorthDistributing(ranges[0] * ranges[1] * reduction);
        FailureOr<linalg::MatmulOp> blockProduct =
            fuse::splitReductionIntoBlocks(rewriter, matmul, reduction,
                                           distribute, bits);
        if (succeeded(blockProduct)) {
          LLVM_DEBUG(llvm::dbgs()
                     << "matmul at " << op.getLoc() << ": blocks of "
                     << reduction << " reduction steps"
                     << (distribute ? " for the threads" : "")
                     << ", summed in order\n");
          if (failed(fuse::tileMatmulWithConsumer(rewriter, *blockProduct,
                                                  bands, dominance)))
            tileBands(*blockProduct);
          continue;
        }
      }
      // Blocks of rows: the register tiles' bands cover each block (the
      // strategy chose blocks whose bands are the whole product's).
      if (rows != 0 &&
          succeeded(fuse::tileMatmulWithConsumer(
              rewriter, matmul, fuse::getRowBands(config, rows), dominance,
              /*distributedColumns=*/0, rows))) {
        LLVM_DEBUG(llvm::dbgs()
                   << "matmul at " << op.getLoc() << ": consumer fused, "
                   << bands.size() << " bands, threads' blocks of " << rows
                   << " rows\n");
        continue;
      }
      if (succeeded(fuse::tileMatmulWithConsumer(rewriter, matmul, bands,
                                                 dominance, columns))) {
        LLVM_DEBUG(llvm::dbgs()
                   << "matmul at " << op.getLoc() << ": consumer fused, "
                   << bands.size() << " bands, threads' blocks of " << columns
                   << " columns\n");
        continue;
      }
      // No consumer.
      tileBands(op);
    }
  }
};

} // namespace
