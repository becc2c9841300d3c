//===- BenchUtils.h - Helpers shared by the benchmark suites ----*- C++ -*-===//

#ifndef FUSE_BENCH_BENCHUTILS_H
#define FUSE_BENCH_BENCHUTILS_H

#include "fuse/Tensor.h"

#include <random>

namespace fuse::bench {

/// An f32 tensor of uniform random values in [lo, hi).
inline Tensor uniform(llvm::ArrayRef<int64_t> shape, unsigned seed,
                      float lo = -1.0f, float hi = 1.0f) {
  Tensor t = Tensor::empty(DType::F32, shape);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  for (int64_t i = 0; i < t.numElements(); ++i)
    t.data<float>()[i] = dist(rng);
  return t;
}

} // namespace fuse::bench

#endif // FUSE_BENCH_BENCHUTILS_H
