//===- fuse-opt.cpp - The mlir-opt of Fuse --------------------------------===//
//
// Parses, transforms and prints IR with the fuse dialect, every upstream
// dialect and pass, and Fuse's passes and pipelines. The lit suite runs it.
//
//===----------------------------------------------------------------------===//

#include "Fuse/IR/FuseOps.h"
#include "fuse/Parse.h"
#include "fuse/Pipeline.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/thread.h"

namespace {
/// The check fuse::parseModule makes after parsing (every static tensor
/// type addressable), run first on each input as MlirOptMain has parsed it.
struct VerifyTensorSizesPass
    : mlir::PassWrapper<VerifyTensorSizesPass, mlir::OperationPass<>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(VerifyTensorSizesPass)
  llvm::StringRef getArgument() const override {
    return "fuse-verify-tensor-sizes";
  }
  llvm::StringRef getDescription() const override {
    return "Check that every static tensor type's byte size fits in int64";
  }
  void runOnOperation() override {
    if (mlir::failed(fuse::verifyTensorSizes(getOperation())))
      signalPassFailure();
    markAllAnalysesPreserved();
  }
};
} // namespace

/// MlirOptMain(argc, argv, ...) split open, as its header suggests, so that
/// the input is checked for nesting MLIR's parser cannot take before it is
/// parsed (fuse::findExcessiveNesting), and its types as loaded
/// (fuse::verifyTensorSizes) before any pass.
static mlir::LogicalResult run(llvm::StringRef inputFilename,
                               llvm::StringRef outputFilename,
                               mlir::DialectRegistry &registry) {
  mlir::MlirOptMainConfig config =
      mlir::MlirOptMainConfig::createFromCLOptions();
  mlir::MlirOptMainConfig requested = config;
  config.setPassPipelineSetupFn([requested](mlir::PassManager &pm) {
    pm.addPass(std::make_unique<VerifyTensorSizesPass>());
    return requested.setupPassPipeline(pm);
  });
  if (config.shouldShowDialects()) {
    llvm::outs() << "Available Dialects: ";
    llvm::interleave(registry.getDialectNames(), llvm::outs(), ",");
    llvm::outs() << "\n";
    return mlir::success();
  }
  if (config.shouldListPasses()) {
    mlir::printRegisteredPasses();
    return mlir::success();
  }
  std::string errorMessage;
  std::unique_ptr<llvm::MemoryBuffer> file =
      mlir::openInputFile(inputFilename, &errorMessage);
  if (!file) {
    llvm::errs() << errorMessage << "\n";
    return mlir::failure();
  }
  if (std::optional<size_t> at =
          fuse::findExcessiveNesting(file->getBuffer())) {
    llvm::SourceMgr sourceMgr;
    const char *where = file->getBufferStart() + *at;
    sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
    sourceMgr.PrintMessage(llvm::SMLoc::getFromPointer(where),
                           llvm::SourceMgr::DK_Error,
                           fuse::excessiveNestingMessage());
    return mlir::failure();
  }
  std::unique_ptr<llvm::ToolOutputFile> output =
      mlir::openOutputFile(outputFilename, &errorMessage);
  if (!output) {
    llvm::errs() << errorMessage << "\n";
    return mlir::failure();
  }
  if (mlir::failed(
          mlir::MlirOptMain(output->os(), std::move(file), registry, config)))
    return mlir::failure();
  output->keep();
  return mlir::success();
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  mlir::registerAllPasses();
  fuse::registerPassesAndPipelines();

  mlir::DialectRegistry registry;
  fuse::registerDialects(registry);
  auto [inputFilename, outputFilename] = mlir::registerAndParseCLIOptions(
      argc, argv, "Fuse optimizer driver\n", registry);
  // On a thread with the stack the parse is sized for (fuse/Parse.h),
  // whatever `ulimit -s` says.
  mlir::LogicalResult result = mlir::failure();
  llvm::thread worker(std::optional<unsigned>(fuse::kParseStackBytes), [&] {
    result = run(inputFilename, outputFilename, registry);
  });
  worker.join();
  return mlir::asMainReturnCode(result);
}
