//===- Compiler.h - The one compile driver ----------------------*- C++ -*-===//
//
// The steps from a parsed module to code, in one place. The JIT (a call's
// specialization) and `fusec` (every --emit kind) both call these, so a
// function compiled for the same signature and options gets the same code:
//
//   at load       differentiateModule   differentiate (train steps, autodiff)
//   per entry     specializeEntry       isolate + specialize, class labels
//                 compileSpecialized    simplify -> linalg -> LLVM dialect
//                                       -> LLVM IR (O3) -> assembly / object
//
// The MLIR pass chains are built in fuse/Pipeline.h, the LLVM steps are in
// fuse/Codegen.h.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_COMPILER_H
#define FUSE_COMPILER_H

#include "fuse/Codegen.h"
#include "fuse/CompileStats.h"
#include "fuse/Pipeline.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace llvm::orc {
class JITTargetMachineBuilder;
} // namespace llvm::orc

namespace mlir {
class PassManager;
} // namespace mlir

namespace fuse {

/// Runs the whole-module rewrites (buildDifferentiatePipeline) once, on a
/// freshly parsed module.
mlir::LogicalResult
differentiateModule(mlir::ModuleOp module,
                    const DifferentiateOptions &options = {});

/// The specialization step: keeps only function `name` of `module` (renamed
/// `symbol` unless empty), specialized to `argTypes`, then marks its class
/// label arguments again (a dynamic class count may now be static).
/// Failures are reported to the context's diagnostic handler.
mlir::FailureOr<mlir::func::FuncOp>
specializeEntry(mlir::ModuleOp module, llvm::StringRef name,
                mlir::TypeRange argTypes, llvm::StringRef symbol = {});

struct CompileOptions {
  PipelineOptions pipeline;
  /// Where to stop; MLIR stages leave their result in the module.
  Stage stage = Stage::Object;
  /// When not empty, adds `void <packedEntry>(void **args)` calling the
  /// entry (addPackedWrapper) before O3, so the call inlines into it.
  std::string packedEntry;
  /// The target, recorded as the module attribute abi::kTargetAttrName
  /// (fuse-tile-and-vectorize's vector width) before the MLIR lowering;
  /// empty: the host (hostTarget()).
  std::optional<TargetDescription> target;
  /// Builds the TargetMachine, matching `target`; null: built from `target`.
  llvm::orc::JITTargetMachineBuilder *machine = nullptr;
  /// Adjusts each MLIR pass manager (one per pipeline phase) before it runs
  /// (fusec's timing and IR-printing flags).
  std::function<mlir::LogicalResult(mlir::PassManager &)> configure;
  /// Called with the LLVM IR after O3, before code generation (which may
  /// still change the IR); with parallelCodegen, once per part, in order
  /// (the parts then compile one after the other).
  std::function<void(llvm::Module &)> onOptimizedIR;
  /// Cut the entry's function into parts whose O3 and code generation run
  /// on several threads (fuse/ParallelCodegen.h); the result then has an
  /// object or assembly listing per part. The cut depends on the IR alone.
  bool parallelCodegen = false;
  /// The threads parallelCodegen uses at most; 0: the CPUs this process may
  /// run on.
  unsigned codegenThreads = 0;
  /// Verify the IR after every MLIR pass (a pass that breaks it is named)
  /// rather than once after the last (the default in release builds: it
  /// cost a third of the MLIR time).
#ifndef NDEBUG
  bool verifyEachPass = true;
#else
  bool verifyEachPass = false;
#endif
  /// When set, each phase's time (and each MLIR pass's) is added to it, for
  /// the unit `statsUnit` (`fusec --stats`, EngineOptions::compileStats).
  CompileStats *stats = nullptr;
  std::string statsUnit;
};

/// What a compile produced past the MLIR stages.
struct CompileResult {
  std::unique_ptr<llvm::LLVMContext> llvmContext;
  /// Stage::LLVMIR and later: the module after O3 (and, for Assembly and
  /// Object, after code generation); after lowerSpecialized alone, before
  /// O3.
  std::unique_ptr<llvm::Module> llvmModule;
  /// Stage::Assembly and Object: the emitted file of each part (one unless
  /// CompileOptions::parallelCodegen cut the function); the first holds the
  /// entry and the packed wrapper.
  std::vector<std::unique_ptr<llvm::MemoryBuffer>> code;
  /// The entry's symbol (lowerSpecialized's `entry`).
  std::string entry;
};

/// The error the driver returns when a pass fails; the pass's diagnostics
/// went to the context's handler.
class PassFailure : public llvm::ErrorInfo<PassFailure> {
public:
  static char ID;
  void log(llvm::raw_ostream &os) const override;
  std::error_code convertToErrorCode() const override;
};

/// The MLIR half of compileSpecialized: the pipeline up to
/// min(options.stage, Stage::LLVMDialect) then, for later stages, the
/// translation to LLVM IR (with the packed wrapper), not yet optimized, in
/// its own LLVMContext. The only half that uses the MLIR context.
llvm::Expected<CompileResult> lowerSpecialized(mlir::ModuleOp module,
                                               llvm::StringRef entry,
                                               const CompileOptions &options);

/// The LLVM half: O3, then code generation up to `options.stage`. Touches
/// nothing of the MLIR context, so compiles of different functions may run
/// it concurrently (the engine does, while another compile lowers).
llvm::Error generateCode(CompileResult &result, const CompileOptions &options);

/// Compiles a module specializeEntry prepared (or, for Stage::Fuse, any
/// differentiated module) up to `options.stage`. `entry` is the symbol of
/// its function, used for the packed wrapper.
llvm::Expected<CompileResult> compileSpecialized(mlir::ModuleOp module,
                                                 llvm::StringRef entry,
                                                 const CompileOptions &options);

/// specializeEntry, then compileSpecialized.
llvm::Expected<CompileResult> compileFunction(mlir::ModuleOp module,
                                              llvm::StringRef name,
                                              mlir::TypeRange argTypes,
                                              const CompileOptions &options,
                                              llvm::StringRef symbol = {});

} // namespace fuse

#endif // FUSE_COMPILER_H
