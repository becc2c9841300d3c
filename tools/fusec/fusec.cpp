//===- fusec.cpp - The Fuse compiler driver -------------------------------===//
//
// Parses and verifies a .mlir file in the fuse dialect, runs the Fuse
// pipeline and prints the result.
//
//===----------------------------------------------------------------------===//

#include "fuse/Pipeline.h"
#include "fuse/Version.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/Timing.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace mlir;
namespace cl = llvm::cl;

namespace {
enum class Emit { Fuse };

cl::opt<std::string> inputFilename(cl::Positional,
                                   cl::desc("<input .mlir file>"),
                                   cl::init("-"));
cl::opt<std::string> outputFilename("o", cl::desc("Output file"),
                                    cl::value_desc("filename"), cl::init("-"));
cl::opt<Emit> emit("emit", cl::desc("What to emit"),
                   cl::values(clEnumValN(Emit::Fuse, "fuse",
                                         "the verified, simplified fuse IR")),
                   cl::init(Emit::Fuse));
} // namespace

static void printVersion(llvm::raw_ostream &os) {
  os << "fusec (Fuse) " << FUSE_VERSION << "\n  built with LLVM/MLIR "
     << LLVM_VERSION_STRING << "\n";
}

static LogicalResult compile(MLIRContext &context, llvm::SourceMgr &sourceMgr,
                             llvm::raw_ostream &os) {
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module)
    return failure();

  PassManager pm(&context);
  if (failed(applyPassManagerCLOptions(pm)))
    return failure();
  auto timing = std::make_unique<DefaultTimingManager>();
  applyDefaultTimingManagerCLOptions(*timing);
  if (timing->isEnabled())
    pm.enableTiming(std::move(timing));
  switch (emit) {
  case Emit::Fuse:
    fuse::buildSimplifyPipeline(pm);
    break;
  }
  if (failed(pm.run(*module)))
    return failure();
  module->print(os);
  return success();
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  registerAsmPrinterCLOptions();
  registerMLIRContextCLOptions();
  registerPassManagerCLOptions();
  registerDefaultTimingManagerCLOptions();
  cl::SetVersionPrinter(printVersion);
  cl::ParseCommandLineOptions(argc, argv, "fusec: the Fuse compiler\n");

  DialectRegistry registry;
  fuse::registerDialects(registry);
  MLIRContext context(registry);

  std::string error;
  std::unique_ptr<llvm::MemoryBuffer> input =
      openInputFile(inputFilename, &error);
  if (!input) {
    llvm::errs() << "fusec: error: " << error << "\n";
    return 1;
  }
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(input), llvm::SMLoc());
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);

  std::unique_ptr<llvm::ToolOutputFile> output =
      openOutputFile(outputFilename, &error);
  if (!output) {
    llvm::errs() << "fusec: error: " << error << "\n";
    return 1;
  }
  if (failed(compile(context, sourceMgr, output->os())))
    return 1;
  output->keep();
  return 0;
}
