//===- Registration.cpp - Dialect, pass and pipeline registration ---------===//

#include "Fuse/IR/FuseDialect.h"
#include "fuse/Passes.h"
#include "fuse/Pipeline.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"

using namespace mlir;

namespace {
/// fuse::PipelineOptions as textual pipeline options.
struct NamedPipelineOptions : PassPipelineOptions<NamedPipelineOptions> {
  Option<bool> fusion{*this, "fusion",
                      llvm::cl::desc("Fuse element-wise work and optimizer "
                                     "updates (false: op by op)"),
                      llvm::cl::init(true)};
  Option<bool> profile{*this, "profile",
                       llvm::cl::desc("Time every operation (fuse-insert-"
                                      "timers)"),
                       llvm::cl::init(false)};
  Option<bool> winograd{*this, "winograd",
                        llvm::cl::desc("Winograd 3x3 convolutions (fuse-"
                                       "tile-and-vectorize's option)"),
                        llvm::cl::init(false)};
  Option<bool> overlapCollectives{
      *this, "overlap-collectives",
      llvm::cl::desc("Overlap gradient buckets' all-reduces with the "
                     "backward pass (convert-fuse-collectives' overlap)"),
      llvm::cl::init(true)};
  fuse::PipelineOptions get() const {
    fuse::PipelineOptions options;
    options.fusion = fusion;
    options.profile = profile;
    options.winograd = winograd;
    options.overlapCollectives = overlapCollectives;
    return options;
  }
};
} // namespace

void fuse::registerDialects(DialectRegistry &registry) {
  // The pipeline reaches most of upstream (bufferization, vector, memref,
  // LLVM, ...) and their external interface models; register all of it here,
  // in one translation unit.
  registry.insert<FuseDialect>();
  registerAllDialects(registry);
  registerAllExtensions(registry);
  registerAllToLLVMIRTranslations(registry);
  registerFuseDialectTranslation(registry);
}

void fuse::registerPassesAndPipelines() {
  registerFusePasses();
  PassPipelineRegistration<>(
      "fuse-simplify",
      "Simplify a fuse graph: canonicalize (folds, identities) and CSE",
      buildSimplifyPipeline);
  PassPipelineRegistration<NamedPipelineOptions>(
      "fuse-lower-to-linalg",
      "Lower fuse ops (static shapes) to tensor-level linalg",
      [](OpPassManager &pm, const NamedPipelineOptions &options) {
        buildLowerToLinalgPipeline(pm, options.get());
      });
  PassPipelineRegistration<NamedPipelineOptions>(
      "fuse-lower-to-llvm",
      "Bufferize tensor-level linalg and lower it to the LLVM dialect",
      [](OpPassManager &pm, const NamedPipelineOptions &options) {
        buildLowerToLLVMPipeline(pm, options.get());
      });
  PassPipelineRegistration<NamedPipelineOptions>(
      "fuse-pipeline",
      "The whole chain for a specialized module: differentiate, simplify, "
      "lower to linalg, lower to LLVM",
      [](OpPassManager &pm, const NamedPipelineOptions &options) {
        buildCompilePipeline(pm, options.get());
      });
}
