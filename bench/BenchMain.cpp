//===- BenchMain.cpp - Benchmark entry: a clean OpenBLAS reference --------===//
//
// This machine's environment sets OPENBLAS_CORETYPE=Haswell, which pins
// OpenBLAS to AVX2 kernels at half speed. OpenBLAS reads it when the library
// loads, before main, so the benchmark re-executes itself without it, with
// one OpenBLAS thread: the reference is single-threaded AVX-512 sgemm.
//
//===----------------------------------------------------------------------===//

#include <benchmark/benchmark.h>
#include <cblas.h>

#include <cstdlib>
#include <cstring>
#include <unistd.h>

int main(int argc, char **argv) {
  if (std::getenv("OPENBLAS_CORETYPE") ||
      !std::getenv("OPENBLAS_NUM_THREADS")) {
    unsetenv("OPENBLAS_CORETYPE");
    setenv("OPENBLAS_NUM_THREADS", "1", /*overwrite=*/1);
    execv("/proc/self/exe", argv);
    return 127;
  }
  benchmark::Initialize(&argc, argv);
  benchmark::AddCustomContext("openblas", openblas_get_config());
  benchmark::AddCustomContext("openblas_core", openblas_get_corename());
  if (benchmark::ReportUnrecognizedArguments(argc, argv))
    return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
