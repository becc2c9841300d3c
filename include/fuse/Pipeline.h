//===- Pipeline.h - The one Fuse pass pipeline ------------------*- C++ -*-===//
//
// Every MLIR pass chain Fuse runs is built here, and only here. The compile
// driver (fuse/Compiler.h), which the JIT and `fusec` call, runs them in
// order; `fuse-opt` registers them as named pipelines.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_PIPELINE_H
#define FUSE_PIPELINE_H

#include "mlir/IR/TypeRange.h"
#include "llvm/ADT/StringRef.h"

#include <functional>
#include <string>
#include <vector>

namespace mlir {
class DialectRegistry;
class OpPassManager;
} // namespace mlir

namespace fuse {

/// Choices that change the generated code (not its results).
struct PipelineOptions {
  /// Fuse element-wise work: each optimizer op into one update per parameter
  /// group, chains of element-wise ops into one loop nest. False lowers op
  /// by op, one pass over memory per operation (as eager frameworks run),
  /// the baseline fusion is measured against.
  bool fusion = true;
  /// Time every operation of the compiled code (fuse-insert-timers): a
  /// per-op profile, read with fuse::profile(). Costs two timer calls per
  /// operation.
  bool profile = false;
  /// The function name profile regions show (default: the symbol).
  std::string profileLabel;
  /// Compute the 3x3 convolutions that allow it (and their filter
  /// gradients) with Winograd's F(4x4, 3x3) / F(2x2, 3x3): 2-4x fewer
  /// multiply-adds, but sums rounded differently from a direct sum (a few
  /// ulps of the tile's largest term, and not 0 where the exact sum is 0).
  /// Off by default, as in oneDNN and PyTorch on CPUs: the direct sums
  /// match a reference to rounding, including exact zeros before a ReLU.
  bool winograd = false;
  /// Start each gradient bucket's all-reduce as soon as backward computes
  /// it, and wait for it before its first reader (convert-fuse-collectives'
  /// overlap); false: both at the fuse.all_reduce. Same results.
  bool overlapCollectives = true;
};

/// Choices of the whole-module rewrites (what the step functions compute).
struct DifferentiateOptions {
  /// Step functions sum their gradients across the ranks of a data-parallel
  /// run (fuse-expand-train-step's data-parallel option).
  bool dataParallel = false;
  /// The step functions' code runs with subnormals flushed to zero
  /// (EngineOptions::flushDenormals), which fuse-apply-precision-policy may
  /// assume (flushed-denormals: a ReLU's mask from its bf16 copy).
  bool flushedDenormals = true;
};

/// Whole-module rewrites that run once, before any specialization: training
/// steps defined (fuse.train_step -> step functions), automatic
/// differentiation (fuse.value_and_grad -> forward and backward ops), and a
/// K-step function derived from each step function (`@<name>_steps`).
void buildDifferentiatePipeline(mlir::OpPassManager &pm,
                                const DifferentiateOptions &options = {});

/// The specialization step for one entry of a differentiated module: the
/// other functions dropped, the entry renamed `symbol` (unless empty) and
/// specialized to `argTypes` (fuse::isolateAndSpecialize, as a pass), its
/// class-label arguments marked again.
void buildSpecializeEntryPipeline(mlir::OpPassManager &pm, llvm::StringRef name,
                                  mlir::TypeRange argTypes,
                                  llvm::StringRef symbol = {});

/// Graph simplification: canonicalization (folds, algebraic identities) and
/// common-subexpression elimination.
void buildSimplifyPipeline(mlir::OpPassManager &pm);

/// fuse (static shapes) -> tensor-level linalg: optimizer ops expanded
/// (convert-fuse-optimizers-to-linalg), then everything else lowered, with
/// element-wise fusion.
void buildLowerToLinalgPipeline(mlir::OpPassManager &pm,
                                const PipelineOptions &options = {});

/// Tensor-level linalg -> the LLVM dialect: bufferization (results become
/// out-parameters the caller allocates), loops, and LLVM conversion with
/// bare-pointer memref arguments.
void buildLowerToLLVMPipeline(mlir::OpPassManager &pm,
                              const PipelineOptions &options = {});

/// How far a compile goes: the output of each step of the driver
/// (fuse/Compiler.h). `fusec --emit` names them.
enum class Stage {
  Fuse,        ///< specialized and simplified fuse IR
  Linalg,      ///< tensor-level linalg
  LLVMDialect, ///< the MLIR LLVM dialect
  LLVMIR,      ///< LLVM IR, optimized at O3
  Assembly,    ///< assembly for the target
  Object,      ///< an object file for the target
};

/// The MLIR passes after specialization, up to `stage`: simplify, then
/// lower to linalg (Linalg and later), then to LLVM (LLVMDialect and later).
void buildSpecializedPipeline(mlir::OpPassManager &pm, Stage stage,
                              const PipelineOptions &options = {});

/// One named part of buildSpecializedPipeline, run as its own pass manager
/// by the compile driver, so that `--stats` times it (and `-mlir-timing`
/// reports it) apart.
struct PipelinePhase {
  std::string name;
  std::function<void(mlir::OpPassManager &)> build;
};

/// buildSpecializedPipeline's phases up to `stage`: simplify,
/// lower-to-linalg, tile-and-vectorize, bufferize, lower-loops,
/// convert-to-llvm.
std::vector<PipelinePhase>
specializedPipelinePhases(Stage stage, const PipelineOptions &options = {});

/// The whole MLIR chain (`fuse-opt --fuse-pipeline`): differentiate, then
/// buildSpecializedPipeline up to the LLVM dialect.
void buildCompilePipeline(mlir::OpPassManager &pm,
                          const PipelineOptions &options = {});

/// Registers the fuse dialect, every upstream dialect the pipeline produces,
/// their interface models and LLVM IR translations.
void registerDialects(mlir::DialectRegistry &registry);

/// Registers Fuse's passes and named pipelines for textual pipelines
/// (`fuse-opt`, `--pass-pipeline`).
void registerPassesAndPipelines();

} // namespace fuse

#endif // FUSE_PIPELINE_H
