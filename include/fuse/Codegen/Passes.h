//===- Passes.h - Fuse codegen passes ---------------------------*- C++ -*-===//

#ifndef FUSE_CODEGEN_PASSES_H
#define FUSE_CODEGEN_PASSES_H

#include "mlir/Pass/Pass.h"

namespace mlir {
class ModuleOp;
namespace func {
class FuncOp;
} // namespace func
} // namespace mlir

namespace fuse {

#define GEN_PASS_DECL
#include "fuse/Codegen/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "fuse/Codegen/Passes.h.inc"

/// The options of fuse-tile-and-vectorize.
struct TileAndVectorizeOptions {
  /// The vector register width in bits (0: the module's target's).
  unsigned vectorBits = 0;
  /// Winograd for the 3x3 convolutions that allow it.
  bool winograd = false;
};

/// Adds the CPU code generator to `pm`, a pass manager on func.func:
/// fuse-select-lowering-strategy, then the passes that apply its configs.
/// fuse-tile-and-vectorize and the compile pipeline both build it here.
void buildTileAndVectorizePipeline(mlir::OpPassManager &pm,
                                   const TileAndVectorizeOptions &options);

/// Registers the pipeline fuse-tile-and-vectorize (fuse-opt).
void registerTileAndVectorizePipeline();

} // namespace fuse

#endif // FUSE_CODEGEN_PASSES_H
