//===- fuse-opt.cpp - The mlir-opt of Fuse --------------------------------===//
//
// Parses, transforms and prints IR with the fuse dialect, every upstream
// dialect and pass, and Fuse's passes and pipelines. The lit suite runs it.
//
//===----------------------------------------------------------------------===//

#include "fuse/Parse.h"
#include "fuse/Pipeline.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/thread.h"

/// MlirOptMain(argc, argv, ...) split open, as its header suggests, so that
/// the input is checked for nesting MLIR's parser cannot take before it is
/// parsed (fuse::findExcessiveNesting).
static mlir::LogicalResult run(llvm::StringRef inputFilename,
                               llvm::StringRef outputFilename,
                               mlir::DialectRegistry &registry) {
  mlir::MlirOptMainConfig config =
      mlir::MlirOptMainConfig::createFromCLOptions();
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
