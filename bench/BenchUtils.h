//===- BenchUtils.h - References shared by the benchmarks ------*- C++ -*-===//

#ifndef FUSE_BENCH_BENCHUTILS_H
#define FUSE_BENCH_BENCHUTILS_H

#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdint>

namespace fuse::bench {

/// The rate of one instruction on whole registers: `kChains` independent
/// chains `acc = step(acc)` (enough to cover its latency on every pipe that
/// issues it), for about `seconds`, in FLOP/s at `flops` per instruction.
/// `init(i)` starts chain i; `add` and `first` take one value out at the
/// end, so that the chains' array never needs an address.
template <int kChains, typename Init, typename Step, typename Add,
          typename First>
double measureChainsPeak(double seconds, double flops, Init init, Step step,
                         Add add, First first) {
  constexpr int kSteps = 4096;
  decltype(init(0)) acc[kChains];
  for (int i = 0; i < kChains; ++i)
    acc[i] = init(i);
  auto start = std::chrono::steady_clock::now();
  std::chrono::duration<double> elapsed{0};
  int64_t rounds = 0;
  do {
    for (int s = 0; s < kSteps; ++s) {
      // Unrolled, so that the chains live in registers.
#pragma GCC unroll 24
      for (int i = 0; i < kChains; ++i)
        acc[i] = step(acc[i]);
    }
    ++rounds;
    elapsed = std::chrono::steady_clock::now() - start;
  } while (elapsed.count() < seconds);
  auto sum = acc[0];
  for (int i = 1; i < kChains; ++i)
    sum = add(sum, acc[i]);
  float total = first(sum);
  benchmark::DoNotOptimize(total);
  return flops * kChains * kSteps * double(rounds) / elapsed.count();
}

/// The core's multiply-add peak in FLOP/s (single precision, whole
/// registers of the widest FMA the build targets), measured for about
/// `seconds`; 0 on a host without FMA instructions.
double measureFmaPeak(double seconds);

} // namespace fuse::bench

#endif // FUSE_BENCH_BENCHUTILS_H
