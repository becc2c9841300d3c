//===- Commands.h - fusec's subcommands -------------------------*- C++ -*-===//

#ifndef FUSE_TOOLS_FUSEC_COMMANDS_H
#define FUSE_TOOLS_FUSEC_COMMANDS_H

#include "llvm/Support/CommandLine.h"

namespace fusec {

/// `fusec FILE.mlir --emit=...`: compile to a chosen level.
int compileMain();

/// `fusec run FILE.mlir --entry F --arg SPEC...`: JIT and call a function.
extern llvm::cl::SubCommand runCommand;
int runMain();

} // namespace fusec

#endif // FUSE_TOOLS_FUSEC_COMMANDS_H
