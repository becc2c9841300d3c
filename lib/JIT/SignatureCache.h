//===- SignatureCache.h - Compiled specializations by signature -*- C++ -*-===//

#ifndef FUSE_LIB_JIT_SIGNATURECACHE_H
#define FUSE_LIB_JIT_SIGNATURECACHE_H

#include "fuse/Tensor.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

#include <atomic>
#include <memory>
#include <shared_mutex>
#include <string>
#include <vector>

namespace fuse {

/// The dtype and shape of one result, and the argument it is computed in
/// (`fuse.in_place`), or -1.
struct ResultSpec {
  DType dtype;
  llvm::SmallVector<int64_t, 4> shape;
  int32_t inPlaceOf = -1;
  /// `fuse.stacked`: dim 0 is the call's step count (shape[0] is unused).
  bool stacked = false;
};

/// Which arguments are `fuse.stacked`: their dim 0 is not part of the
/// signature. Empty when none are.
using StackedMask = llvm::ArrayRef<bool>;

/// The dtypes and shapes of a call's arguments, flattened into one vector:
/// per argument its dtype, rank and dims, with kRuntimeDim for the dim 0 of
/// stacked arguments.
class Signature {
public:
  static constexpr int64_t kRuntimeDim = -1;
  static Signature of(llvm::ArrayRef<Tensor> args, StackedMask stacked = {});
  bool matches(llvm::ArrayRef<Tensor> args, StackedMask stacked = {}) const;
  bool operator==(const Signature &other) const { return key_ == other.key_; }
  size_t hash() const;
  /// "(tensor<64x784xf32>, tensor<?x64xi32>)".
  std::string str() const;
  /// The dims of argument `arg` (dtype and rank must match across the
  /// signatures compared).
  llvm::ArrayRef<int64_t> key() const { return key_; }

private:
  llvm::SmallVector<int64_t, 16> key_;
};

/// A function compiled for one signature: an entry taking the data
/// pointers of the arguments, of the results not computed in place, and of
/// its intermediate buffers (carved from one workspace), and the result
/// types.
struct Specialization {
  using Entry = void (*)(void **);
  Signature signature;
  Entry entry = nullptr;
  std::vector<ResultSpec> results;
  /// The sizes of the intermediate buffers (multiples of 64 bytes).
  std::vector<uint64_t> buffers;
  /// The trailing size arguments: (operand, dim) pairs, operands numbered
  /// over the arguments and then the results passed as out-parameters.
  std::vector<int64_t> dynamicSizes;
  uint64_t workspaceBytes = 0;
  /// Per argument: the class count its labels are checked against before
  /// each call (0: not class labels), marked on the specialized function.
  std::vector<int64_t> classes;

  /// A workspace to call with (holding every buffer, in order); give it
  /// back with releaseWorkspace. The one kept between calls makes
  /// steady-state calls allocation-free; callers running at the same time
  /// get their own.
  void *acquireWorkspace() const;
  void releaseWorkspace(void *workspace) const;
  ~Specialization();

private:
  mutable std::atomic<void *> spareWorkspace_{nullptr};
};

/// The specializations of one function. Lookups are lock-free for the most
/// recent signature and take a shared lock otherwise; inserts are exclusive.
class SignatureCache {
public:
  /// The specialization for `args`, or null.
  const Specialization *find(llvm::ArrayRef<Tensor> args,
                             StackedMask stacked = {}) const;
  /// Adds a specialization; returns the stored one.
  const Specialization *insert(std::unique_ptr<Specialization> spec);
  size_t size() const;
  /// Names the argument dims (and dtypes) that differ across the cached
  /// signatures, e.g. "x[0], y[0]".
  std::string changingDims(llvm::ArrayRef<std::string> argNames) const;

private:
  mutable std::shared_mutex mutex_;
  llvm::DenseMap<size_t, llvm::SmallVector<const Specialization *, 1>> byHash_;
  std::vector<std::unique_ptr<Specialization>> all_;
  mutable std::atomic<const Specialization *> last_{nullptr};
};

} // namespace fuse

#endif // FUSE_LIB_JIT_SIGNATURECACHE_H
