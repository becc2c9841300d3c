//===- Distribute.cpp - fuse-distribute -----------------------------------===//
//
// Splits linalg ops into the tiles their configs' distribution level names,
// as an scf.forall whose iterations the threads share (after bufferization,
// an scf.parallel, then OpenMP's worksharing loop). Each tile is computed
// whole by one thread, reductions included, and the tiles are fixed by the
// shapes: the bits do not depend on the thread count.
//
//===----------------------------------------------------------------------===//

#include "fuse/Codegen/Passes.h"

#include "LoweringStrategy.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "llvm/Support/Debug.h"
#include "llvm/Support/InterleavedRange.h"

#define DEBUG_TYPE "fuse-distribute"

namespace fuse {
#define GEN_PASS_DEF_FUSEDISTRIBUTE
#include "fuse/Codegen/Passes.h.inc"
} // namespace fuse

using namespace mlir;

namespace {

struct DistributePass : fuse::impl::FuseDistributeBase<DistributePass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    MLIRContext *context = &getContext();
    IRRewriter rewriter(context);
    SmallVector<linalg::LinalgOp> ops;
    func.walk([&](linalg::LinalgOp op) {
      auto config = fuse::LoweringConfigAttr::lookup(op);
      if (config && op.hasPureTensorSemantics() && !op.hasDynamicShape() &&
          llvm::any_of(config.getDistribution(),
                       [](int64_t size) { return size != 0; }))
        ops.push_back(op);
    });
    for (linalg::LinalgOp op : ops) {
      auto config = fuse::LoweringConfigAttr::lookup(op);
      ArrayRef<int64_t> sizes = config.getDistribution();
      LLVM_DEBUG(llvm::dbgs() << op->getName() << " at " << op->getLoc()
                              << ": distributed in tiles of ["
                              << llvm::interleaved(sizes) << "]\n");
      scf::SCFTilingOptions options;
      options.setTileSizes(getAsIndexOpFoldResult(context, sizes));
      options.setLoopType(scf::SCFTilingOptions::LoopType::ForallOp);
      rewriter.setInsertionPoint(op);
      FailureOr<scf::SCFTilingResult> tiled = scf::tileUsingSCF(
          rewriter, cast<TilingInterface>(op.getOperation()), options);
      if (failed(tiled)) {
        op.emitWarning("cannot distribute with ")
            << config << "; it runs on one thread";
        continue;
      }
      // The tiles take the other levels; they are not split again.
      SmallVector<int64_t> none(sizes.size(), 0);
      auto tileConfig = fuse::LoweringConfigAttr::get(
          context, config.getStrategy(), none, config.getCache(),
          config.getRegisters(), config.getVector(), config.getInterchange());
      for (Operation *tile : tiled->tiledOps)
        fuse::setLoweringConfig(tile, tileConfig);
      rewriter.replaceOp(op, tiled->replacements);
    }
  }
};

} // namespace
