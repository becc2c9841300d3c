//===- fuse-opt.cpp - The mlir-opt of Fuse --------------------------------===//
//
// Parses, transforms and prints IR with the fuse dialect, every upstream
// dialect and pass, and Fuse's passes and pipelines. The lit suite runs it.
//
//===----------------------------------------------------------------------===//

#include "fuse/Pipeline.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::registerAllPasses();
  fuse::registerPassesAndPipelines();

  mlir::DialectRegistry registry;
  fuse::registerDialects(registry);
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "Fuse optimizer driver\n", registry));
}
