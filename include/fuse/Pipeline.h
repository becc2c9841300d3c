//===- Pipeline.h - The one Fuse pass pipeline ------------------*- C++ -*-===//
//
// Every pass chain Fuse runs is built here, and only here: `fusec`,
// `fuse-opt --fuse-simplify` and the library all call these functions.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_PIPELINE_H
#define FUSE_PIPELINE_H

namespace mlir {
class DialectRegistry;
class OpPassManager;
} // namespace mlir

namespace fuse {

/// Graph simplification: canonicalization (folds, algebraic identities) and
/// common-subexpression elimination, to a fixed point of both.
void buildSimplifyPipeline(mlir::OpPassManager &pm);

/// Registers the fuse dialect and every upstream dialect the pipeline
/// produces.
void registerDialects(mlir::DialectRegistry &registry);

/// Registers Fuse's passes and named pipelines for textual pipelines
/// (`fuse-opt`, `--pass-pipeline`).
void registerPassesAndPipelines();

} // namespace fuse

#endif // FUSE_PIPELINE_H
