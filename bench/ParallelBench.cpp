//===- ParallelBench.cpp - Which parallel runtime: libomp or oneTBB -------===//
//
// The measurement behind the choice of the runtime that compiled code forks
// into (docs/performance.md, "Choosing the parallel runtime"): the time of
// one fork/join, and the speed-up of a region of a few microseconds of work
// split over the threads, with LLVM's OpenMP runtime (libomp, through the
// GOMP entry points it exports: this file is compiled with -fopenmp and
// linked against libomp, not libgomp) and with oneTBB's parallel_for in a
// task arena. The triad over 10M floats at 1 and 2 threads is the memory
// bandwidth reference of issue 25's optimizer targets.
//
//===----------------------------------------------------------------------===//

#include <benchmark/benchmark.h>
#include <omp.h>
#include <tbb/global_control.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <chrono>
#include <cstdint>
#include <vector>

namespace {

/// z = x * a + y over [begin, end).
void triad(float *z, const float *x, const float *y, int64_t begin,
           int64_t end) {
  for (int64_t i = begin; i < end; ++i)
    z[i] = x[i] * 1.5f + y[i];
}

/// Arrays for a triad of `n` floats, touched once so that pages are mapped.
struct Arrays {
  explicit Arrays(int64_t n) : x(n, 1.0f), y(n, 2.0f), z(n, 0.0f) {}
  std::vector<float> x, y, z;
};

/// One empty parallel region of `threads` threads (the fork/join alone).
void BM_ForkJoinOpenMP(benchmark::State &state) {
  int threads = int(state.range(0));
  for (auto _ : state) {
#pragma omp parallel num_threads(threads)
    benchmark::DoNotOptimize(omp_get_thread_num());
  }
}

void BM_ForkJoinTBB(benchmark::State &state) {
  int threads = int(state.range(0));
  tbb::task_arena arena(threads);
  for (auto _ : state)
    arena.execute([&] {
      tbb::parallel_for(
          0, threads, 1, [](int i) { benchmark::DoNotOptimize(i); },
          tbb::static_partitioner());
    });
}

/// A triad of `n` floats (L2-resident for the small sizes) split into
/// `threads` equal static chunks, the partition a compiled loop uses.
void BM_SplitTriadOpenMP(benchmark::State &state) {
  int64_t n = state.range(0);
  int threads = int(state.range(1));
  Arrays a(n);
  for (auto _ : state) {
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int t = 0; t < threads; ++t)
      triad(a.z.data(), a.x.data(), a.y.data(), n * t / threads,
            n * (t + 1) / threads);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * n * 12);
}

void BM_SplitTriadTBB(benchmark::State &state) {
  int64_t n = state.range(0);
  int threads = int(state.range(1));
  Arrays a(n);
  tbb::task_arena arena(threads);
  for (auto _ : state) {
    arena.execute([&] {
      tbb::parallel_for(
          0, threads, 1,
          [&](int t) {
            triad(a.z.data(), a.x.data(), a.y.data(), n * t / threads,
                  n * (t + 1) / threads);
          },
          tbb::static_partitioner());
    });
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * n * 12);
}

// Sizes: 1K floats (~0.2 us of work), 8K (~1.5 us), 64K (~12 us, L2), 10M
// (memory). Threads: 1 and 2 (this machine's cores); more threads than
// cores only measure oversubscription.
void splitArgs(benchmark::internal::Benchmark *b) {
  for (int64_t n : {1 << 10, 1 << 13, 1 << 16, 10000000})
    for (int64_t threads : {1, 2})
      b->Args({n, threads});
}

BENCHMARK(BM_ForkJoinOpenMP)->Arg(1)->Arg(2);
BENCHMARK(BM_ForkJoinTBB)->Arg(1)->Arg(2);
BENCHMARK(BM_SplitTriadOpenMP)->Apply(splitArgs);
BENCHMARK(BM_SplitTriadTBB)->Apply(splitArgs);

} // namespace

BENCHMARK_MAIN();
