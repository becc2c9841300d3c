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

/// Whether bf16 x bf16 -> f32 products compiled for a target (an LLVM
/// triple, CPU and feature string; each empty: the host's) multiply bf16
/// pairs with vdpbf16ps: AVX512_BF16, and LLVM's scheduling model of the
/// CPU does not say FMAs on the operands widened to f32 do at least as many
/// multiply-adds per cycle. Else the operands are widened
/// (docs/codegen.md, "bf16 products").
bool targetPairsBF16Products(llvm::StringRef triple, llvm::StringRef cpu,
                             llvm::StringRef features);

} // namespace fuse

#endif // FUSE_CODEGEN_PASSES_H
