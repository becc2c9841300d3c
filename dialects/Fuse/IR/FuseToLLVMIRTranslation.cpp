//===- FuseToLLVMIRTranslation.cpp - fuse attributes in LLVM IR -----------===//
//
// A function reaching LLVM IR keeps the fuse attributes of its arguments
// (`fuse.init`, `fuse.per_step`, ...), which the JIT engine reads from the
// module. They mean nothing to LLVM; without this interface, translation
// warns about each one, printing the whole function.
//
//===----------------------------------------------------------------------===//

#include "FuseDialect.h"

#include "mlir/Target/LLVMIR/LLVMTranslationInterface.h"

using namespace mlir;

namespace {
/// The interface's defaults accept every attribute of the dialect; being
/// registered is all it takes.
struct FuseDialectLLVMIRTranslationInterface : LLVMTranslationDialectInterface {
  using LLVMTranslationDialectInterface::LLVMTranslationDialectInterface;
};
} // namespace

void fuse::registerFuseDialectTranslation(DialectRegistry &registry) {
  registry.insert<FuseDialect>();
  registry.addExtension(+[](MLIRContext *, FuseDialect *dialect) {
    dialect->addInterfaces<FuseDialectLLVMIRTranslationInterface>();
  });
}
