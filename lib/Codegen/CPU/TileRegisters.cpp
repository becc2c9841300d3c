//===- TileRegisters.cpp - fuse-tile-registers ----------------------------===//
//
// Tiles linalg ops by their configs' register level. An element-wise op
// whose innermost loop its tile does not divide is first split at the last
// whole tile: every tile of the first part is static and unmasked, and the
// rest is one static tile, instead of a masked tile at every step.
//
//===----------------------------------------------------------------------===//

#include "fuse/Codegen/Passes.h"

#include "PassDetail.h"

#include "LoweringStrategy.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "fuse-tile-registers"

namespace fuse {
#define GEN_PASS_DEF_FUSETILEREGISTERS
#include "fuse/Codegen/Passes.h.inc"
} // namespace fuse

using namespace mlir;

namespace {

/// `op` in parts along its innermost loop: the whole tiles of `sizes`, then
/// the rest, when `op` is element-wise there and the tile does not divide
/// the loop; else `op` alone.
SmallVector<linalg::LinalgOp> splitPartialTile(RewriterBase &rewriter,
                                               linalg::LinalgOp op,
                                               ArrayRef<int64_t> sizes) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (ranges.empty() || !isa<linalg::GenericOp>(op.getOperation()) ||
      op.getIteratorTypesArray().back() != utils::IteratorType::parallel)
    return {op};
  int64_t range = ranges.back(), tile = sizes.back();
  if (tile <= 0 || range <= tile || range % tile == 0)
    return {op};
  rewriter.setInsertionPoint(op);
  auto [whole, rest] = linalg::splitOp(
      rewriter, cast<TilingInterface>(op.getOperation()), ranges.size() - 1,
      rewriter.getIndexAttr(range / tile * tile));
  if (!whole || !rest)
    return {op};
  LLVM_DEBUG(llvm::dbgs() << op->getName() << " at " << op->getLoc()
                          << ": split at " << range / tile * tile << "\n");
  return {cast<linalg::LinalgOp>(whole.getOperation()),
          cast<linalg::LinalgOp>(rest.getOperation())};
}

struct TileRegistersPass
    : fuse::impl::FuseTileRegistersBase<TileRegistersPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    MLIRContext *context = &getContext();
    unsigned bits = fuse::resolveVectorBits(func, vectorBits);
    // The tiles keep the op's config: its vector level sizes their masks.
    IRRewriter rewriter(context);
    SmallVector<linalg::LinalgOp> ops;
    func.walk([&](linalg::LinalgOp op) {
      if (op.hasPureTensorSemantics() && op.getNumLoops() > 0 &&
          !op.hasDynamicShape() && !fuse::isRegisterTile(op))
        ops.push_back(op);
    });
    for (linalg::LinalgOp whole : ops) {
      // (The ops rewrites created have none yet.)
      fuse::LoweringConfigAttr config =
          fuse::getOrChooseTiledConfig(whole, bits);
      if (!config)
        continue;
      // A banded matmul that could not be banded: one tile for all rows.
      SmallVector<ArrayRef<int64_t>> tiles = config.getRegisterTiles();
      ArrayRef<int64_t> sizes =
          tiles.size() == 1 ? tiles.front() : config.getVector();
      SmallVector<linalg::LinalgOp> parts = {whole};
      if (config.getStrategy() == fuse::LoweringStrategy::elementwise)
        parts = splitPartialTile(rewriter, whole, sizes);
      for (linalg::LinalgOp op : parts) {
        LLVM_DEBUG(llvm::dbgs() << op->getName() << " at " << op->getLoc()
                                << ": " << config << "\n");
        // The rest of a split is one tile.
        SmallVector<int64_t> partSizes(sizes);
        if (op != whole && op == parts.back())
          partSizes.back() = op.getStaticLoopRanges().back();
        scf::SCFTilingOptions options;
        options.setTileSizes(getAsIndexOpFoldResult(context, partSizes));
        options.setLoopType(scf::SCFTilingOptions::LoopType::ForOp);
        options.setInterchange(config.getInterchange());
        rewriter.setInsertionPoint(op);
        FailureOr<scf::SCFTilingResult> tiled = scf::tileUsingSCF(
            rewriter, cast<TilingInterface>(op.getOperation()), options);
        if (failed(tiled))
          continue;
        for (Operation *tile : tiled->tiledOps)
          fuse::setLoweringConfig(tile, config);
        rewriter.replaceOp(op, tiled->replacements);
      }
    }
  }
};

} // namespace
