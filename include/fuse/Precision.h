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

} // namespace fuse

#endif // FUSE_PRECISION_H
