//===- Commands.h - fusec's subcommands -------------------------*- C++ -*-===//

#ifndef FUSE_TOOLS_FUSEC_COMMANDS_H
#define FUSE_TOOLS_FUSEC_COMMANDS_H

#include "fuse/LrSchedule.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Error.h"

namespace fusec {

/// The category of fusec's own options: `--help` lists only these (the
/// LLVM and MLIR options stay accepted, unlisted).
llvm::cl::OptionCategory &category();

/// `--fusion` (every command): fuse element-wise work and optimizer updates;
/// `--fusion=false` compiles op by op, the baseline fusion is measured
/// against.
extern llvm::cl::opt<bool> fusion;

/// `--winograd` (every command): 3x3 convolutions with Winograd's algorithm.
extern llvm::cl::opt<bool> winograd;
/// `--threads N` (every command): threads of the compiled code's calls
/// (0: $FUSE_NUM_THREADS, else the CPUs the process may use). Results do
/// not depend on it; the emitted code does not either.
llvm::cl::opt<unsigned> &threads();

/// `--profile` (every command): time each operation of the compiled code
/// (fuse-insert-timers) and print the totals after running.
extern llvm::cl::opt<bool> profile;

/// `--precision bf16|f32` (every command): overrides each fuse.train_step's
/// `precision` (fuse/Precision.h); only step functions change.
extern llvm::cl::opt<std::string> precision;
/// `--master-weights copy|split` (every command): overrides each
/// fuse.train_step's `master_weights` (fuse/Precision.h).
extern llvm::cl::opt<std::string> masterWeights;
/// Sets `overrides.precision` and `overrides.masterWeights` from
/// --precision and --master-weights, if given; an error naming the option
/// for another spelling.
llvm::Error applyPrecision(fuse::TrainStepOverrides &overrides);
/// Sets `overrides.precision` and `overrides.masterWeights`, if any, on
/// every fuse.train_step of `module` (the commands that compile a module
/// without the engine).
void setPrecision(mlir::ModuleOp module,
                  const fuse::TrainStepOverrides &overrides);

/// `--stats` (every command): print where compile time went, per phase and
/// per MLIR pass of each compiled function (fuse/CompileStats.h).
llvm::cl::opt<bool> &stats();

/// A subcommand's exit code: 0 without `error`, else 1 after printing it as
/// `fusec <command>: error: ...`.
int exitCode(llvm::StringRef command, llvm::Error error);

/// `fusec FILE.mlir --emit=...`: compile to a chosen level.
int compileMain();

/// `fusec run FILE.mlir --entry F --arg SPEC...`: JIT and call a function.
extern llvm::cl::SubCommand runCommand;
int runMain();

/// `fusec train MODEL.mlir [--epochs N] ...`: train on an IDX image set.
extern llvm::cl::SubCommand trainCommand;
int trainMain();

/// `fusec sample MODEL.mlir --weights CKPT --prompt ...`: generate text.
extern llvm::cl::SubCommand sampleCommand;
int sampleMain();

/// `fusec predict MODEL.mlir --weights CKPT ...`: probabilities and labels.
extern llvm::cl::SubCommand predictCommand;
int predictMain();

/// `fusec evaluate MODEL.mlir --weights CKPT ...`: loss and metrics.
extern llvm::cl::SubCommand evaluateCommand;
int evaluateMain();

/// `fusec export MODEL.mlir --weights CKPT -o model.o`: an object file and
/// a C header, the weights inside.
extern llvm::cl::SubCommand exportCommand;
int exportMain();

/// `fusec summary MODEL.mlir`: parameters, their counts and FLOPs.
extern llvm::cl::SubCommand summaryCommand;
int summaryMain();

} // namespace fusec

#endif // FUSE_TOOLS_FUSEC_COMMANDS_H
