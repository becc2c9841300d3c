//===- Engine.h - Fuse's embeddable JIT -------------------------*- C++ -*-===//
//
// Load a module in the fuse dialect, look up a function, call it with
// tensors. The first call with a new signature (dtypes and shapes) compiles
// a specialization for it; later calls with that signature compile nothing,
// like tf.function's concrete functions and jax.jit. Compiled objects are
// also cached on disk across processes.
//
// All user errors are returned as llvm::Error; nothing aborts. An Engine and
// its Functions may be used from several threads at once.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_ENGINE_H
#define FUSE_ENGINE_H

#include "fuse/Initializer.h"
#include "fuse/LrSchedule.h"
#include "fuse/Tensor.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace fuse {

struct CompileStats;

struct EngineOptions {
  /// The on-disk object cache directory. Empty: $FUSE_CACHE_DIR, else
  /// $XDG_CACHE_HOME/fuse, else ~/.cache/fuse. FUSE_CACHE_DIR=off disables.
  std::string cacheDir;
  /// Whether to use the on-disk object cache at all.
  bool diskCache = true;
  /// A function specialized for more signatures than this warns once.
  unsigned retraceWarningThreshold = 8;
  /// Where warnings go; null means stderr.
  llvm::raw_ostream *warnings = nullptr;
  /// Fuse element-wise work and optimizer updates. False compiles op by op,
  /// one pass over memory per operation (the baseline fusion is measured
  /// against); results are the same.
  bool fusion = true;
  /// Compute eligible 3x3 convolutions with Winograd's algorithm: faster,
  /// but rounded differently from direct sums (docs/performance.md gives
  /// the measured error); off by default, as in oneDNN and PyTorch.
  bool winograd = false;
  /// Run compiled code with denormal floats flushed to zero (FTZ and DAZ),
  /// as XLA and TensorFlow do: values decaying towards zero (Adam's moments
  /// where a gradient stays 0) would otherwise slow every operation on them
  /// tenfold. The caller's floating-point mode is restored after each call.
  /// The code may rely on it (a bf16 step's ReLU masks), so it is compiled
  /// for this choice.
  bool flushDenormals = true;
  /// Threads each call of compiled code may use (0: $FUSE_NUM_THREADS, else
  /// the CPUs this process may run on). Results are bitwise the same for any
  /// count: how work is split is fixed by the shapes, never by the threads.
  /// Compiling uses as many: a function's code generation parts, and in
  /// fuse::fit the evaluation's compile beside the step's (1: one core).
  unsigned threads = 0;
  /// Generate a large function's code on several cores: cut between its
  /// loop nests into parts whose LLVM O3 and code generation run on threads
  /// (fuse/ParallelCodegen.h). The same loops, so the same results; false
  /// compiles each function as one.
  bool parallelCodegen = true;
  /// Time every operation of compiled code; fuse::profile() (fuse/Profile.h)
  /// reads the totals. Adds two timer calls per operation per call.
  bool profile = false;
  /// Debugging: when set, called with each compiled specialization's LLVM
  /// IR after O3 (function name, signature, IR text). A disk cache hit
  /// compiles nothing and calls nothing.
  std::function<void(llvm::StringRef function, llvm::StringRef signature,
                     llvm::StringRef ir)>
      onCompiledIR;
  /// When set, every load and compile adds the time of each of its phases
  /// (parse, differentiate, specialize, each MLIR phase and pass, LLVM O3,
  /// machine code, the disk cache, linking) to it (fuse/CompileStats.h).
  /// The caller keeps it alive as long as the engine and reads it between
  /// calls.
  CompileStats *compileStats = nullptr;
  /// Set on every `fuse.train_step` of each module loaded, replacing its
  /// own: the learning-rate schedule and gradient clipping (what `fusec
  /// train --lr-schedule`, `--clip-norm` and `--clip-value` set). They are
  /// compiled into the step functions; the disk cache tells them apart.
  TrainStepOverrides trainStep;
  /// Compile every `fuse.train_step` for data-parallel training: its step
  /// function takes a `replica_weight` and sums the weighted gradients of
  /// every rank (fuse.all_reduce) before the update, through the
  /// communicator fit installs (FitOptions::communicator). `fusec train`
  /// sets it when run as several MPI ranks. With one rank (or none) the
  /// sum is the rank's own gradient times its weight.
  bool dataParallel = false;
  /// With dataParallel: reduce the last layers' gradient buckets while the
  /// backward pass of the earlier layers runs (convert-fuse-collectives'
  /// overlap, as PyTorch's DDP). False reduces every bucket after the
  /// backward pass; the results are bitwise the same.
  bool overlapCollectives = true;
};

/// Per-function counters. Times in milliseconds.
struct FunctionStats {
  uint64_t signatures = 0; ///< specializations built (compiled or from disk)
  uint64_t hits = 0;       ///< calls served by an existing specialization
  uint64_t misses = 0;     ///< calls that had to build one
  uint64_t diskHits = 0;   ///< specializations loaded from the disk cache
  double compileMillis = 0;
  /// The largest workspace (intermediate buffers) of a specialization.
  uint64_t workspaceBytes = 0;
};

class Engine;

/// A declared argument of a function: its dtype, its shape (-1 for a dim
/// given at each call) and its role in training.
struct ArgumentInfo {
  std::string name; ///< the source name (`x` for `%x`)
  DType dtype;
  std::vector<int64_t> shape;
  bool perStep = false;     ///< `fuse.per_step`: a batch input of a step
  bool stepCounter = false; ///< `fuse.step_counter`: the step number
  /// `fuse.stacked`: dim 0 is the number of steps of the call (K). Not part
  /// of the signature: every K runs the same compiled code.
  bool stacked = false;
  /// `fuse.init`: how training initializes it (parameters, states).
  std::optional<Initializer> init;
  /// `fuse.class_labels = C`: integer class labels of a cross-entropy over
  /// C classes; every call checks each is in [0, C). 0 when not labels or
  /// when C is dynamic in the declaration: a call then checks against the
  /// C of its shapes. A label the check cannot see (computed from an
  /// argument) gives a NaN loss.
  int64_t classes = 0;
  /// `fuse.split_halves = L`: a weight of a K-step function in IPEX's split
  /// layout; this argument holds its top halves (bf16), argument L its low
  /// 16 bits (i16). The pair is the f32 weight (Trainer::state joins it).
  int lowHalf = -1;
  /// `fuse.low_half_of = W`: the low halves of argument W's weight.
  int highHalf = -1;
  /// The declared type, e.g. "tensor<?x28x28xf32>".
  std::string typeString() const;
};

/// A declared result of a function.
struct ResultInfo {
  DType dtype;
  std::vector<int64_t> shape;
  int inPlaceOf = -1;   ///< `fuse.in_place = N`: computed in argument N
  bool stacked = false; ///< `fuse.stacked`: one row per step of the call
};

/// A function of a loaded module. Owned by its Engine.
class Function {
public:
  llvm::StringRef name() const;
  size_t numArguments() const;
  size_t numResults() const;
  /// The source names of the arguments (`x` for `%x`).
  llvm::ArrayRef<std::string> argumentNames() const;
  llvm::ArrayRef<ArgumentInfo> arguments() const;
  llvm::ArrayRef<ResultInfo> results() const;

  /// Calls the function; results are new owning tensors, except results
  /// marked `fuse.in_place = N`: those are computed in argument N's buffer
  /// (which must be contiguous) and returned as views of it.
  llvm::Expected<std::vector<Tensor>> call(llvm::ArrayRef<Tensor> args);
  /// Calls the function writing into `results`, which must be contiguous and
  /// have the result dtypes and shapes. A result computed in place may be
  /// an empty Tensor() or its argument itself; any other buffer receives a
  /// copy. Allocates nothing on a cache hit.
  llvm::Error callInto(llvm::ArrayRef<Tensor> args,
                       llvm::ArrayRef<Tensor> results);
  /// The result dtypes and shapes for `args`, compiling if needed (views of
  /// their arguments for results computed in place).
  llvm::Expected<std::vector<Tensor>>
  allocateResults(llvm::ArrayRef<Tensor> args);

  /// Builds (compiles or loads) the specialization for `args`' signature
  /// without calling; only their dtypes and shapes matter. When it
  /// compiles, `onLowered` (if set) is called on this thread once the call
  /// is specialized and the engine's context is free for another function's
  /// compile: this one's MLIR lowering and code generation run in a context
  /// of their own, and another function's may overlap them.
  llvm::Error prepare(llvm::ArrayRef<Tensor> args,
                      const std::function<void()> &onLowered = nullptr);
  FunctionStats stats() const;

  struct Impl;
  explicit Function(std::unique_ptr<Impl> impl);
  ~Function();

private:
  std::unique_ptr<Impl> impl_;
};

class Engine {
public:
  static llvm::Expected<std::unique_ptr<Engine>>
  create(EngineOptions options = {});
  ~Engine();

  /// Parses and verifies a module; its functions become callable.
  llvm::Error loadFile(llvm::StringRef path);
  llvm::Error loadString(llvm::StringRef source,
                         llvm::StringRef bufferName = "<string>");

  /// A function of a loaded module.
  llvm::Expected<Function &> lookup(llvm::StringRef name);
  /// The names of every loaded function, sorted; those a module's
  /// `fuse.train_step` defines (the step and its `<name>_steps`) included.
  std::vector<std::string> functionNames() const;
  /// The threads each call may use (EngineOptions::threads resolved).
  unsigned threads() const;

  struct Impl;

private:
  explicit Engine(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

} // namespace fuse

#endif // FUSE_ENGINE_H
