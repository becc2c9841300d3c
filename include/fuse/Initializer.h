//===- Initializer.h - How parameters start ---------------------*- C++ -*-===//
//
// The initializers a model declares with `fuse.init = #fuse.init<...>` (see
// the dialect reference), as Keras defines them. Values are drawn from a
// generator of our own over std::mt19937_64, so the same seed gives the same
// tensors on every platform and standard library.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_INITIALIZER_H
#define FUSE_INITIALIZER_H

#include "fuse/Tensor.h"

#include "llvm/Support/Error.h"

#include <string>

namespace fuse {

struct Initializer {
  enum class Kind {
    Zeros,
    Ones,
    Constant,
    Uniform,
    Normal,
    GlorotUniform,
    GlorotNormal,
    HeUniform,
    HeNormal
  };
  Kind kind = Kind::Zeros;
  /// Constant's value, uniform's limit, normal's stddev.
  double scale = 0;

  /// A new tensor of `shape` drawn with `seed`: f32 or f64 (zeros: any).
  llvm::Expected<Tensor> create(DType dtype, llvm::ArrayRef<int64_t> shape,
                                uint64_t seed) const;
  /// The attribute's spelling: `glorot_uniform`, `normal, stddev = 5.0e-02`.
  std::string str() const;
};

} // namespace fuse

#endif // FUSE_INITIALIZER_H
