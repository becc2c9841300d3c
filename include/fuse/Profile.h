//===- Profile.h - Per-op time in compiled code -----------------*- C++ -*-===//
//
// With EngineOptions::profile, compiled code times each of its operations
// (the `fuse-insert-timers` pass); the totals accumulate here, process-wide,
// like XLA's HLO profile.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_PROFILE_H
#define FUSE_PROFILE_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <string>
#include <vector>

namespace fuse {

/// One timed region: an operation of compiled code.
struct ProfileEntry {
  /// The op, its result type and its source location, e.g.
  /// `linalg.matmul 64x128xf32 mlp.mlir:20:9`.
  std::string region;
  uint64_t calls = 0;
  double seconds = 0;
};

/// Every region's totals since the last reset, longest first.
std::vector<ProfileEntry> profile();
void resetProfile();

/// A table of `entries`: time, share of the timed total, calls, time per
/// call, region.
void printProfile(llvm::raw_ostream &os, llvm::ArrayRef<ProfileEntry> entries);

} // namespace fuse

#endif // FUSE_PROFILE_H
