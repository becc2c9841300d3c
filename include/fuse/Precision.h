//===- Precision.h - Mixed-precision policies -------------------*- C++ -*-===//
//
// Header only (no MLIR): shared by the dialect's verifier, the engine's
// overrides and fusec's --precision.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_PRECISION_H
#define FUSE_PRECISION_H

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>

namespace fuse {

/// The compute precision of a training step's contractions (`precision` on
/// `fuse.train_step`, `fusec --precision`, `TrainStepOverrides::precision`).
/// `BF16`: matmul, batch_matmul and convolution operands rounded to bf16,
/// products summed in f32; everything else, the parameters (master
/// weights) and the optimizer state f32.
enum class Precision : uint8_t { F32, BF16 };

/// "f32" or "bf16".
inline llvm::StringRef precisionName(Precision p) {
  return p == Precision::BF16 ? "bf16" : "f32";
}

/// The precision spelled `name` ("f32" or "bf16"), if any.
inline std::optional<Precision> parsePrecision(llvm::StringRef name) {
  if (name == "f32")
    return Precision::F32;
  if (name == "bf16")
    return Precision::BF16;
  return std::nullopt;
}

/// Where a bf16 step keeps the weights its products read between steps
/// (`master_weights` on `fuse.train_step`, `fusec --master-weights`,
/// `TrainStepOverrides::masterWeights`). `Copy` (the default): the f32
/// weight plus a bf16 copy rounded to nearest-even, written by the update.
/// `Split` (IPEX's split layout): the weight as its top 16 bits (a bf16,
/// the f32 value truncated, which the products read) and its low 16 bits,
/// the pair exactly the f32 value, no copy; inside the K-step loop of
/// `@<step>_steps` only (the step functions' arguments stay f32).
enum class MasterWeights : uint8_t { Copy, Split };

/// "copy" or "split".
inline llvm::StringRef masterWeightsName(MasterWeights m) {
  return m == MasterWeights::Split ? "split" : "copy";
}

/// The layout spelled `name` ("copy" or "split"), if any.
inline std::optional<MasterWeights> parseMasterWeights(llvm::StringRef name) {
  if (name == "copy")
    return MasterWeights::Copy;
  if (name == "split")
    return MasterWeights::Split;
  return std::nullopt;
}

} // namespace fuse

#endif // FUSE_PRECISION_H
