//===- Checkpoint.h - Saving and restoring training -------------*- C++ -*-===//
//
// A checkpoint is a safetensors file (readable by Python's `safetensors`)
// holding every carried tensor of a Trainer (parameters and optimizer
// states, by name) and, in its metadata, the step counter and what the
// caller adds (the seed and batch size that fix the data order). It is
// written atomically: a crash leaves the previous checkpoint, never a
// broken one.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_CHECKPOINT_H
#define FUSE_CHECKPOINT_H

#include "fuse/Trainer.h"

#include <map>
#include <string>

namespace fuse {

using Metadata = std::map<std::string, std::string>;

/// Writes `trainer`'s carried tensors and step, with `metadata`, to `path`.
llvm::Error saveCheckpoint(const Trainer &trainer, llvm::StringRef path,
                           Metadata metadata = {});

/// Restores `trainer`'s carried tensors and step from a checkpoint of the
/// same model (the same names, dtypes and shapes, no more, no fewer) and
/// returns its metadata. On error the trainer is unchanged.
llvm::Expected<Metadata> loadCheckpoint(Trainer &trainer, llvm::StringRef path);

/// Sets the carried tensors a safetensors file holds (the weights of another
/// run, a checkpoint's parameters and states); the others keep their values
/// and the step stays. Every tensor in the file must fit one of the
/// trainer's. On error the trainer is unchanged.
llvm::Error loadWeights(Trainer &trainer, llvm::StringRef path);

/// Whether a file can be written at `path` (its directory exists and is
/// writable): training checks before it starts, not after an hour.
llvm::Error checkWritable(llvm::StringRef path);

} // namespace fuse

#endif // FUSE_CHECKPOINT_H
