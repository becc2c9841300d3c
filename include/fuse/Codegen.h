//===- Codegen.h - LLVM dialect to native code ------------------*- C++ -*-===//
//
// The last steps after the MLIR pipeline: translate to LLVM IR, optimize at
// O3 for the host CPU (its TargetMachine, so the vectorizers have a cost
// model), and emit assembly or an object file.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_CODEGEN_H
#define FUSE_CODEGEN_H

#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"

#include <memory>
#include <string>

namespace llvm {
class LLVMContext;
class Module;
class PassInstrumentationCallbacks;
class TargetMachine;
namespace orc {
class JITTargetMachineBuilder;
} // namespace orc
} // namespace llvm

namespace mlir {
class ModuleOp;
} // namespace mlir

namespace fuse {

/// Registers the native target with LLVM (idempotent, thread-safe).
void initializeNativeTarget();

/// A builder of TargetMachines for the host CPU and its features.
llvm::Expected<llvm::orc::JITTargetMachineBuilder> hostMachineBuilder();

/// The host CPU's name and features, for cache keys.
std::string hostCpuDescription();

/// What code is generated for: an LLVM target triple, CPU name and feature
/// string ("+avx2,-avx512f,..."), as llc's --mtriple, --mcpu and --mattr.
struct TargetDescription {
  std::string triple;
  std::string cpu;
  std::string features;
};

/// The host's: the process triple, CPU and every feature it has or lacks
/// (as orc::JITTargetMachineBuilder::detectHost, so the same code).
TargetDescription hostTarget();

/// The host's target with `triple`, `cpu` and `mattr` given as llc takes
/// them (an empty one: the host's; a CPU other than the host's drops the
/// host's features). The CPU is checked against the target's list and the
/// features are expanded to the complete set the CPU and `mattr` imply.
llvm::Expected<TargetDescription> resolveTarget(llvm::StringRef triple,
                                                llvm::StringRef cpu,
                                                llvm::StringRef mattr);

/// A builder of TargetMachines for `target`, at O3.
llvm::Expected<llvm::orc::JITTargetMachineBuilder>
targetMachineBuilder(const TargetDescription &target);

/// Translates a module in the LLVM dialect to LLVM IR. An OpenMP region
/// with an `if` runs its outlined body directly, without a serialized
/// region, when the condition is false.
llvm::Expected<std::unique_ptr<llvm::Module>>
translateToLLVMIR(mlir::ModuleOp module, llvm::LLVMContext &context);

/// Adds `void <wrapper>(void **args)`, which calls `function` with
/// args[0..n) as its arguments: pointers as they are, integer arguments (the
/// sizes of dynamic memrefs) cast from the pointer-sized slot. One calling
/// convention for every specialization.
llvm::Error addPackedWrapper(llvm::Module &module, llvm::StringRef function,
                             llvm::StringRef wrapper);

/// Runs the O3 pipeline for `machine`; `callbacks`, when given, instrument
/// its passes (`--stats` times them).
llvm::Error
optimizeModule(llvm::Module &module, llvm::TargetMachine &machine,
               llvm::PassInstrumentationCallbacks *callbacks = nullptr);

enum class EmitKind { Assembly, Object };
/// Emits assembly or an object file for `machine`.
llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
emitMachineCode(llvm::Module &module, llvm::TargetMachine &machine,
                EmitKind kind);

} // namespace fuse

#endif // FUSE_CODEGEN_H
