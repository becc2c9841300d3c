//===- CompileStats.h - Where compile time goes -----------------*- C++ -*-===//
//
// The compile driver (fuse/Compiler.h) and the JIT record, when asked, the
// wall time of each phase of each compile: parse and differentiate (once per
// module), specialize, each MLIR pipeline phase and its passes, translation
// to LLVM IR, LLVM O3, machine code generation, the disk cache and JIT
// linking. `fusec --stats` prints them; EngineOptions::compileStats collects
// them for a library user.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_COMPILESTATS_H
#define FUSE_COMPILESTATS_H

#include "llvm/ADT/StringRef.h"

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace llvm {
class PassInstrumentationCallbacks;
class raw_ostream;
} // namespace llvm

namespace mlir {
class Operation;
class PassManager;
} // namespace mlir

namespace fuse {

/// Phase times, in the order they were recorded.
struct CompileStats {
  struct Phase {
    /// What was compiled: a module (its parse and differentiation) or one
    /// function for one signature.
    std::string unit;
    /// The phase (`mlir: simplify`, `llvm: O3`, ...) or, at depth 1, one
    /// MLIR pass of the phase above it.
    std::string name;
    /// 0: a phase; 1: a pass within the phase before it, its runs on every
    /// function summed.
    unsigned depth = 0;
    double seconds = 0;
  };
  std::vector<Phase> phases;
  /// What a compile did that changes the code, worth a user's eye (a
  /// gradient reduced across ranks before its update, which then no
  /// longer fuses into it), by unit, in order.
  std::vector<std::pair<std::string, std::string>> notes;

  /// Thread-safe: the engine's compiles of different functions overlap.
  void add(llvm::StringRef unit, llvm::StringRef name, double seconds,
           unsigned depth = 0);
  void note(llvm::StringRef unit, llvm::StringRef text);
  /// Wall seconds of the phases (depth 0) of `unit`; of every unit if empty.
  double total(llvm::StringRef unit = {}) const;
  /// Per unit, its phases with their seconds and share, then each phase
  /// summed over units; then the notes, if any.
  void print(llvm::raw_ostream &os) const;

private:
  mutable std::mutex mutex;
};

/// Times a scope as one phase of `unit` into `stats`; does nothing when
/// `stats` is null.
class PhaseTimer {
public:
  PhaseTimer(CompileStats *stats, llvm::StringRef unit, llvm::StringRef name);
  ~PhaseTimer() { stop(); }
  PhaseTimer(const PhaseTimer &) = delete;
  PhaseTimer &operator=(const PhaseTimer &) = delete;
  /// Records the time so far (once).
  void stop();

private:
  CompileStats *stats;
  std::string unit, name;
  std::chrono::steady_clock::time_point start;
};

/// Records each pass `pm` runs (its runs on every function summed; an
/// adaptor's nested passes, not the adaptor) into `stats` for `unit`, at
/// depth 1, when flush() is called after the run.
class PassTimesRecorder {
public:
  virtual ~PassTimesRecorder() = default;
  virtual void flush() = 0;
};
PassTimesRecorder &recordPassTimes(mlir::PassManager &pm, mlir::Operation *root,
                                   CompileStats &stats, llvm::StringRef unit);

/// Times the passes of an LLVM pass pipeline built with callbacks(): each
/// pass that runs no other pass, into `stats` for `unit` at depth 1, when
/// flush() is called after the run.
class LLVMPassTimes {
public:
  LLVMPassTimes(CompileStats &stats, llvm::StringRef unit);
  ~LLVMPassTimes();
  llvm::PassInstrumentationCallbacks &callbacks();
  void flush();

private:
  struct Impl;
  std::unique_ptr<Impl> impl;
};

} // namespace fuse

#endif // FUSE_COMPILESTATS_H
