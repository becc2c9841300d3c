//===- TileRegisters.cpp - fuse-tile-registers ----------------------------===//
//
// Tiles linalg ops by their configs' register level.
//
//===----------------------------------------------------------------------===//

#include "fuse/Codegen/Passes.h"

#include "PassDetail.h"

#include "LoweringStrategy.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
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
    for (linalg::LinalgOp op : ops) {
      // (The ops rewrites created have none yet.)
      fuse::LoweringConfigAttr config = fuse::getOrChooseTiledConfig(op, bits);
      if (!config)
        continue;
      // A banded matmul that could not be banded: one tile for all rows.
      SmallVector<ArrayRef<int64_t>> tiles = config.getRegisterTiles();
      ArrayRef<int64_t> sizes =
          tiles.size() == 1 ? tiles.front() : config.getVector();
      LLVM_DEBUG(llvm::dbgs() << op->getName() << " at " << op->getLoc() << ": "
                              << config << "\n");
      scf::SCFTilingOptions options;
      options.setTileSizes(getAsIndexOpFoldResult(context, sizes));
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
};

} // namespace
