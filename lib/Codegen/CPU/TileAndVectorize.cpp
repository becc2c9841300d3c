//===- TileAndVectorize.cpp - The fuse-tile-and-vectorize pipeline --------===//
//
// The CPU code generator as strategy + apply, the way IREE's LLVMCPU back
// end is built: fuse-select-lowering-strategy sets a #fuse.lowering_config
// on each linalg op, then small passes apply it, in this order.
//
//===----------------------------------------------------------------------===//

#include "fuse/Codegen/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;

void fuse::buildTileAndVectorizePipeline(
    OpPassManager &pm, const TileAndVectorizeOptions &options) {
  // bf16 operands the target cannot multiply in pairs: widened once.
  pm.addPass(createFuseWidenBF16Operands());
  pm.addPass(
      createFuseSelectLoweringStrategy({options.vectorBits, options.winograd}));
  // Attention in blocks first: its tiles then take configs of their own.
  pm.addPass(createFuseTileAttention());
  // One fill per accumulating op, before a rewrite consumes a shared one.
  pm.addPass(createFuseSplitSharedFills());
  // Before the pads are decomposed: a padded input is padded image by image.
  pm.addPass(createFuseWinogradConvolution({options.vectorBits}));
  pm.addPass(createFuseDecomposePads());
  pm.addPass(createFuseBlockAndPackMatmuls({options.vectorBits}));
  pm.addPass(createFuseTileConvolutions({options.vectorBits}));
  pm.addPass(createFuseImageLoopFusion());
  pm.addPass(createFuseDistributeImageLoops());
  pm.addPass(createFuseSliceStridedInputs());
  // Products first, with their fills and consumers; then the rest.
  pm.addPass(createFuseTileMatmuls({options.vectorBits}));
  // The threads' tiles of what is left, each then tiled for registers.
  pm.addPass(createFuseDistribute());
  pm.addPass(createFuseTileRegisters({options.vectorBits}));
  pm.addPass(createFuseVectorizeTiles());
}

namespace {

struct TileAndVectorizePipelineOptions
    : PassPipelineOptions<TileAndVectorizePipelineOptions> {
  Option<unsigned> vectorBits{
      *this, "vector-bits",
      llvm::cl::desc("Vector register width in bits (0: the target's)"),
      llvm::cl::init(0)};
  Option<bool> winograd{
      *this, "winograd",
      llvm::cl::desc("Compute the 3x3 convolutions (and filter gradients) "
                     "that allow it with Winograd's F(4x4, 3x3) or "
                     "F(2x2, 3x3)"),
      llvm::cl::init(false)};
};

} // namespace

void fuse::registerTileAndVectorizePipeline() {
  PassPipelineRegistration<TileAndVectorizePipelineOptions>(
      "fuse-tile-and-vectorize",
      "The CPU code generator: fuse-select-lowering-strategy, then the "
      "passes that apply its configs, on each function",
      [](OpPassManager &pm, const TileAndVectorizePipelineOptions &options) {
        // On a module (--fuse-tile-and-vectorize) or inside a function's
        // pass manager (func.func(fuse-tile-and-vectorize{...})).
        OpPassManager &func =
            pm.getOpAnchorName() == func::FuncOp::getOperationName()
                ? pm
                : pm.nest<func::FuncOp>();
        buildTileAndVectorizePipeline(func,
                                      {options.vectorBits, options.winograd});
      });
}
