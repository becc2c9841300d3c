//===- ClassLabels.h - The engine's check of class labels -------*- C++ -*-===//
//
// Compiled cross-entropy gives NaN for a label outside [0, C) and cannot
// say which one it was; the engine names it instead, before the call, for
// every argument fuse-mark-class-labels marks: at load, and again on each
// specialization, where a class count that is dynamic in the declaration
// is known.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_LIB_JIT_CLASSLABELS_H
#define FUSE_LIB_JIT_CLASSLABELS_H

#include "fuse/Tensor.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Error.h"

#include <functional>
#include <vector>

namespace fuse {

/// Per argument of `function` in `module` (where fuse-mark-class-labels
/// ran), the class count of its labels (0: none).
std::vector<int64_t> classLabelCounts(mlir::ModuleOp module,
                                      llvm::StringRef function);

/// Checks each argument `args[i]` with `classes[i] > 0` (its contiguous
/// data at `pointers[i]`): an error naming it (`describe(i)`), the first
/// label outside [0, classes[i]), its position and value.
llvm::Error checkClassLabels(llvm::ArrayRef<Tensor> args,
                             llvm::ArrayRef<void *> pointers,
                             llvm::ArrayRef<int64_t> classes,
                             llvm::function_ref<std::string(size_t)> describe);

} // namespace fuse

#endif // FUSE_LIB_JIT_CLASSLABELS_H
