//===- DropoutRNG.h - fuse.dropout's counter-based mask ---------*- C++ -*-===//
//
// The mask of `fuse.dropout` is a pure function of (seed, step, element
// index): step s gets the same mask however steps are grouped into calls, and
// the backward pass recomputes it instead of saving it. The lowering emits
// exactly this arithmetic; tests use these functions as the reference.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_DIALECT_FUSE_IR_DROPOUTRNG_H
#define FUSE_DIALECT_FUSE_IR_DROPOUTRNG_H

#include <cstdint>

namespace fuse::dropout {

constexpr uint64_t kGolden = 0x9E3779B97F4A7C15ull;
constexpr uint64_t kMix1 = 0xBF58476D1CE4E5B9ull;
constexpr uint64_t kMix2 = 0x94D049BB133111EBull;
/// Each element draws 24 uniform bits.
constexpr int kBits = 24;

/// SplitMix64's finalizer: a bijective full-avalanche mix of 64 bits.
constexpr uint64_t mix(uint64_t z) {
  z += kGolden;
  z = (z ^ (z >> 30)) * kMix1;
  z = (z ^ (z >> 27)) * kMix2;
  return z ^ (z >> 31);
}

/// The per-step key.
constexpr uint64_t key(int64_t seed, int64_t step) {
  return mix(mix(static_cast<uint64_t>(seed)) ^ static_cast<uint64_t>(step));
}

/// Elements whose draw is below this are dropped.
constexpr uint64_t threshold(float rate) {
  return static_cast<uint64_t>(static_cast<double>(rate) *
                               static_cast<double>(1ull << kBits));
}

/// Whether element `index` (row-major) is kept.
constexpr bool keep(uint64_t stepKey, uint64_t index, float rate) {
  return (mix(stepKey ^ index) >> (64 - kBits)) >= threshold(rate);
}

/// The scale applied to kept elements.
constexpr float scale(float rate) { return 1.0f / (1.0f - rate); }

} // namespace fuse::dropout

#endif // FUSE_DIALECT_FUSE_IR_DROPOUTRNG_H
