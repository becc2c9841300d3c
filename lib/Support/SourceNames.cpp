//===- SourceNames.cpp - Source names of function arguments ---------------===//

#include "fuse/SourceNames.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/SourceMgr.h"

using namespace mlir;

/// The `%name` token at a file location, without the `%`.
static std::optional<std::string> nameAt(llvm::SourceMgr &sourceMgr,
                                         FileLineColLoc loc) {
  for (unsigned id = 1; id <= sourceMgr.getNumBuffers(); ++id) {
    const llvm::MemoryBuffer *buffer = sourceMgr.getMemoryBuffer(id);
    if (buffer->getBufferIdentifier() != loc.getFilename().getValue())
      continue;
    llvm::SMLoc at =
        sourceMgr.FindLocForLineAndColumn(id, loc.getLine(), loc.getColumn());
    if (!at.isValid() || *at.getPointer() != '%')
      return std::nullopt;
    llvm::StringRef rest(at.getPointer() + 1,
                         buffer->getBufferEnd() - at.getPointer() - 1);
    llvm::StringRef name = rest.take_while([](char c) {
      return llvm::isAlnum(c) || llvm::StringRef("_$.-").contains(c);
    });
    if (name.empty())
      return std::nullopt;
    return name.str();
  }
  return std::nullopt;
}

void fuse::nameArguments(ModuleOp module, llvm::SourceMgr &sourceMgr) {
  module.walk([&](func::FuncOp func) {
    if (func.isExternal())
      return;
    for (BlockArgument arg : func.getArguments()) {
      auto fileLoc = dyn_cast<FileLineColLoc>(arg.getLoc());
      if (!fileLoc)
        continue;
      if (std::optional<std::string> name = nameAt(sourceMgr, fileLoc))
        arg.setLoc(
            NameLoc::get(StringAttr::get(func.getContext(), *name), fileLoc));
    }
  });
}

std::string fuse::argumentName(func::FuncOp func, unsigned index) {
  if (!func.isExternal() && index < func.getNumArguments())
    if (auto name = dyn_cast<NameLoc>(func.getArgument(index).getLoc()))
      return name.getName().str();
  return "#" + std::to_string(index);
}

std::string fuse::describeArgument(func::FuncOp func, unsigned index) {
  std::string name = argumentName(func, index);
  std::string number = "#" + std::to_string(index);
  if (name == number)
    return "argument " + number;
  return "argument '" + name + "' (" + number + ")";
}
