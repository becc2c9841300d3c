//===- SourceNames.h - Source names of function arguments -------*- C++ -*-===//
//
// The parser drops SSA names. Users expect errors to name `x` for `%x`, so
// right after parsing, each function argument's location is wrapped in a
// NameLoc carrying its source name.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_SOURCENAMES_H
#define FUSE_SOURCENAMES_H

#include <string>

namespace llvm {
class SourceMgr;
} // namespace llvm

namespace mlir {
class ModuleOp;
namespace func {
class FuncOp;
} // namespace func
} // namespace mlir

namespace fuse {

/// Records the source name of every function argument of `module`.
void nameArguments(mlir::ModuleOp module, llvm::SourceMgr &sourceMgr);

/// The source name of argument `index` ("x"), or "#index".
std::string argumentName(mlir::func::FuncOp func, unsigned index);

/// "argument 'x' (#4)", or "argument #4" for an unnamed argument.
std::string describeArgument(mlir::func::FuncOp func, unsigned index);

} // namespace fuse

#endif // FUSE_SOURCENAMES_H
