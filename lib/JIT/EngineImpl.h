//===- EngineImpl.h - The engine's private state ---------------*- C++ -*-===//
//
// Engine::Impl and Function::Impl, shared by the files of the engine:
// Loader.cpp (modules, argument metadata), Specialization.cpp (compile,
// disk cache, link), Invoke.cpp (checks, argument packing, calls) and
// Engine.cpp (the public classes).
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_LIB_JIT_ENGINEIMPL_H
#define FUSE_LIB_JIT_ENGINEIMPL_H

#include "ObjectCache.h"
#include "SignatureCache.h"
#include "fuse/Engine.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/Support/SourceMgr.h"

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

namespace fuse {

using llvm::Error;
using llvm::Expected;

/// The MLIR element type of `dtype`.
mlir::Type mlirType(DType dtype, mlir::MLIRContext *context);
/// The dtype of an MLIR element type, if it has one.
std::optional<DType> dtypeOfType(mlir::Type type);
/// Identifies the compiler that is running (for the disk cache's key).
std::string compilerBuildIdentity();

/// A module holding only one function, specialized for a call, the specs
/// of its results (derived from the call, never read from a cache) and the
/// class count of each argument that is class labels (0: none).
struct Specialized {
  mlir::OwningOpRef<mlir::ModuleOp> module;
  std::vector<ResultSpec> results;
  std::vector<int64_t> classes;
};

struct LoadedModule {
  std::string source;
  std::string sourceHash;
  llvm::SourceMgr sourceMgr;
  mlir::OwningOpRef<mlir::ModuleOp> module;
};

//===----------------------------------------------------------------------===//
// Engine::Impl
//===----------------------------------------------------------------------===//

struct Engine::Impl {
  EngineOptions options;
  mlir::MLIRContext context;
  llvm::orc::JITTargetMachineBuilder machineBuilder;
  std::unique_ptr<llvm::orc::LLJIT> jit;
  std::optional<ObjectCache> diskCache;
  std::string cpu;
  std::string buildIdentity;
  /// The thread count of every call (options.threads resolved).
  unsigned threads = 1;
  /// Serializes everything that touches the MLIR context's IR or its
  /// diagnostic handlers (loading, specializing) and the JIT's dylibs.
  std::mutex contextMutex;
  /// Contexts of their own for lowering specializations outside
  /// contextMutex, so that two functions' MLIR lowerings run at once (fit's
  /// evaluation beside the step); one per compile running, kept for the
  /// next one.
  std::mutex compileContextsMutex;
  std::vector<std::unique_ptr<mlir::MLIRContext>> idleCompileContexts;
  /// Compiles running at once print their warnings and call the user's
  /// onCompiledIR in turn.
  std::mutex userOutputMutex;
  std::vector<std::unique_ptr<LoadedModule>> modules;
  llvm::StringMap<std::unique_ptr<Function>> functions;
  unsigned dylibCounter = 0;

  Impl(EngineOptions options, llvm::orc::JITTargetMachineBuilder builder)
      : options(std::move(options)),
        context(mlir::MLIRContext::Threading::DISABLED),
        machineBuilder(std::move(builder)) {}

  /// A context for one compile (an idle one, or a new one with every
  /// dialect loaded) and its return.
  std::unique_ptr<mlir::MLIRContext> acquireCompileContext();
  void releaseCompileContext(std::unique_ptr<mlir::MLIRContext> context);

  llvm::raw_ostream &warnings() {
    return options.warnings ? *options.warnings : llvm::errs();
  }
};

//===----------------------------------------------------------------------===//
// Function::Impl
//===----------------------------------------------------------------------===//

struct Function::Impl {
  Engine::Impl *engine;
  LoadedModule *module;
  std::string name;
  std::vector<std::string> argNames;
  llvm::SmallVector<mlir::RankedTensorType> argTypes;
  std::vector<ArgumentInfo> arguments;
  std::vector<ResultInfo> results;
  /// Per argument: `fuse.stacked` (dim 0 is the call's step count).
  llvm::SmallVector<bool> stacked;
  int firstStacked = -1;
  SignatureCache cache;
  /// Held through a build, taken before the engine's contextMutex: one
  /// build of this function at a time, while the context is free for
  /// another function's during code generation.
  std::mutex buildMutex;
  std::atomic<uint64_t> hits{0}, misses{0}, diskHits{0}, compileMicros{0};
  std::atomic<uint64_t> workspaceBytes{0}; ///< the largest specialization's
  std::atomic<bool> warnedRetrace{false};

  std::string describe(size_t i) const {
    return "argument '" + argNames[i] + "' (#" + std::to_string(i) + ") of '" +
           name + "'";
  }

  /// The number of steps of a call: dim 0 of the stacked arguments.
  int64_t steps(llvm::ArrayRef<Tensor> args) const {
    return firstStacked >= 0 ? args[firstStacked].shape()[0] : 0;
  }

  Error validate(llvm::ArrayRef<Tensor> args) const;
  Error validateSteps(llvm::ArrayRef<Tensor> args) const;
  /// Whether argument `i`'s byte size fits in 64 bits.
  Error checkSize(size_t i, const Tensor &arg) const;
  /// `onLowered`: see Function::prepare.
  Expected<const Specialization *>
  specialization(llvm::ArrayRef<Tensor> args,
                 const std::function<void()> &onLowered = nullptr);
  /// Called with `context` (engine->contextMutex) locked; compile()
  /// unlocks it once the specialized module is copied to a compile context
  /// of its own, and locks it again to return.
  Expected<std::unique_ptr<Specialization>>
  build(llvm::ArrayRef<Tensor> args, std::unique_lock<std::mutex> &context,
        const std::function<void()> &onLowered);
  Expected<Specialized> specialize(llvm::ArrayRef<Tensor> args,
                                   std::string &diagnostics);
  Expected<CachedObject> compile(Specialized &specialized,
                                 llvm::ArrayRef<Tensor> args,
                                 std::string &diagnostics,
                                 std::unique_lock<std::mutex> &context,
                                 const std::function<void()> &onLowered);
  bool fitsCall(const CachedObject &entry,
                llvm::ArrayRef<ResultSpec> results) const;
  Expected<Specialization::Entry>
  link(std::vector<std::unique_ptr<llvm::MemoryBuffer>> objects);
  /// Whether result `j` fits in memory (per step when stacked).
  Error checkResultSize(size_t j, const ResultSpec &result) const;
  /// The total of the workspace `buffers`, or an error when it exceeds
  /// maxTensorBytes().
  Expected<uint64_t> checkWorkspace(llvm::ArrayRef<uint64_t> buffers,
                                    const Signature &signature) const;
  void warnOnRetrace();
};

} // namespace fuse

#endif // FUSE_LIB_JIT_ENGINEIMPL_H
