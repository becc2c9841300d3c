//===- PrecisionBench.cpp - bf16 against f32 products and steps -----------===//
//
// The seed shapes' matmuls with bf16 operands and f32 results against the
// same matmuls in f32, both compiled for the host in the same run; the
// reported figure is the ratio (bf16 GFLOP/s / f32 GFLOP/s), each from the
// fastest of its calls. The label says what the bf16 products are on this
// CPU: vdpbf16ps, or operands widened to f32 (without AVX512_BF16, or where
// LLVM's scheduling model has FMAs faster than vdpbf16ps), whose ratio is
// then the fallback's. Also the seed MLP
// and CNN training steps with `--precision bf16` against f32.
//
//===----------------------------------------------------------------------===//

#include "BenchUtils.h"

#include "fuse/Codegen/Passes.h"
#include "fuse/Engine.h"
#include "fuse/Trainer.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/TargetParser/Host.h"

#include <benchmark/benchmark.h>

#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <sstream>
#include <string>

using namespace fuse;

namespace {

bool hostHasBF16() {
  llvm::StringMap<bool> features = llvm::sys::getHostCPUFeatures();
  return features.lookup("avx512bf16") && features.lookup("avx512f");
}

/// What the host's bf16 products are: the compiler's own choice.
std::string hostLabel() {
  if (fuse::targetPairsBF16Products("", "", ""))
    return "AVX512_BF16: vdpbf16ps";
  return hostHasBF16() ? "AVX512_BF16, widened: LLVM's model of this CPU has "
                         "FMAs do more multiply-adds than vdpbf16ps"
                       : "no AVX512_BF16 on this CPU: widening fallback";
}

/// The fastest call of `body`, over about `seconds` after one warm-up call:
/// the machine may be shared, and the fastest call is the least disturbed.
template <typename Body> double secondsPerCall(Body body, double seconds) {
  body();
  double fastest = 1e30, elapsed = 0;
  auto start = std::chrono::steady_clock::now();
  do {
    auto before = std::chrono::steady_clock::now();
    body();
    auto after = std::chrono::steady_clock::now();
    fastest = std::min(fastest,
                       std::chrono::duration<double>(after - before).count());
    elapsed = std::chrono::duration<double>(after - start).count();
  } while (elapsed < seconds);
  return fastest;
}

struct Shape {
  int64_t m, n, k;
};

std::string type(int64_t rows, int64_t columns, const char *element) {
  return "tensor<" + std::to_string(rows) + "x" + std::to_string(columns) +
         "x" + element + ">";
}

#ifdef __AVX512BF16__
/// vdpbf16ps's own peak in FLOP/s (two multiply-adds per lane), measured
/// as measureFmaPeak measures the FMAs': 24 independent chains.
double measureDotPeak(double seconds) {
  __m512bh a = (__m512bh)_mm512_set1_epi32(0x3f803f80); // (1, 1)
  __m512bh b = (__m512bh)_mm512_set1_epi32(0x33d633d6); // (1e-7, 1e-7)
  return fuse::bench::measureChainsPeak<24>(
      seconds, 4.0 * 16, [](int i) { return _mm512_set1_ps(float(i)); },
      [&](__m512 acc) { return _mm512_dpbf16_ps(acc, a, b); },
      [](__m512 x, __m512 y) { return _mm512_add_ps(x, y); },
      [](__m512 sum) {
        // (Not _mm512_reduce_add_ps: GCC 12's header warns inside it.)
        alignas(64) float lanes[16];
        _mm512_store_ps(lanes, sum);
        return lanes[0];
      });
}
#endif

/// The instructions' own peaks, the reference of the matmuls' ratio: what
/// vdpbf16ps can give over f32 FMAs on this core (2x if both issue at the
/// same rate; 0.5x on Sapphire and Emerald Rapids).
void BM_BF16DotPeakReference(benchmark::State &state) {
#ifdef __AVX512BF16__
  double dot = 0, fma = 0;
  for (auto _ : state) {
    fma = fuse::bench::measureFmaPeak(0.05);
    dot = measureDotPeak(0.05);
  }
  state.counters["vdpbf16ps_GFLOP/s"] = dot / 1e9;
  state.counters["fma_GFLOP/s"] = fma / 1e9;
  state.counters["bf16/f32"] = fma > 0 ? dot / fma : 0;
  state.SetLabel(hostLabel());
#else
  state.SkipWithError("not built for a CPU with AVX512_BF16");
#endif
}
BENCHMARK(BM_BF16DotPeakReference);

/// One benchmark times both precisions, alternating, so that both see the
/// same machine state; the counters are each one's GFLOP/s and the ratio.
void BM_BF16Matmul(benchmark::State &state, Shape s) {
  std::string source;
  for (const char *element : {"f32", "bf16"})
    source += "func.func @mm_" + std::string(element) +
              "(%a: " + type(s.m, s.k, element) +
              ", %b: " + type(s.k, s.n, element) + ") -> " +
              type(s.m, s.n, "f32") + " {\n  %c = fuse.matmul %a, %b : (" +
              type(s.m, s.k, element) + ", " + type(s.k, s.n, element) +
              ") -> " + type(s.m, s.n, "f32") +
              "\n  return %c : " + type(s.m, s.n, "f32") + "\n}\n";
  EngineOptions options;
  options.diskCache = false;
  auto engine = llvm::cantFail(Engine::create(options));
  llvm::cantFail(engine->loadString(source));
  Function &f32 = llvm::cantFail(engine->lookup("mm_f32"));
  Function &bf16 = llvm::cantFail(engine->lookup("mm_bf16"));
  Tensor a = Tensor::uniform({s.m, s.k}, 1), b = Tensor::uniform({s.k, s.n}, 2);
  Tensor a16 = llvm::cantFail(convertFloatTensor(a, DType::BF16));
  Tensor b16 = llvm::cantFail(convertFloatTensor(b, DType::BF16));
  std::vector<Tensor> out = llvm::cantFail(f32.allocateResults({a, b}));
  double flops = 2.0 * s.m * s.n * s.k, t32 = 0, t16 = 0;
  for (auto _ : state) {
    t32 += secondsPerCall(
        [&] {
          llvm::cantFail(f32.callInto({a, b}, out));
        },
        0.05);
    t16 += secondsPerCall(
        [&] {
          llvm::cantFail(bf16.callInto({a16, b16}, out));
        },
        0.05);
  }
  state.counters["f32_GFLOP/s"] = flops * state.iterations() / t32 * 1e-9;
  state.counters["bf16_GFLOP/s"] = flops * state.iterations() / t16 * 1e-9;
  state.counters["bf16/f32"] = t32 / t16;
  state.SetLabel(hostLabel());
}

std::string readExample(const char *name) {
  std::ifstream file(std::string(FUSE_SOURCE_DIR "/examples/") + name);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

/// Seconds per training step of `example` at batch 64 with `precision`.
double stepSeconds(const char *example, Precision precision) {
  EngineOptions options;
  options.diskCache = false;
  options.trainStep.precision = precision;
  auto engine = llvm::cantFail(Engine::create(options));
  llvm::cantFail(engine->loadString(readExample(example)));
  Function &step = llvm::cantFail(engine->lookup("train"));
  std::vector<Tensor> args;
  for (const ArgumentInfo &arg : step.arguments()) {
    std::vector<int64_t> shape = arg.shape;
    for (int64_t &d : shape)
      if (d < 0)
        d = 64;
    if (arg.dtype == DType::F32)
      args.push_back(Tensor::uniform(shape, 3, -0.05f, 0.05f));
    else
      args.push_back(Tensor::zeros(arg.dtype, shape));
  }
  std::vector<Tensor> out = llvm::cantFail(step.allocateResults(args));
  return secondsPerCall([&] { llvm::cantFail(step.callInto(args, out)); }, 0.5);
}

void BM_BF16Step(benchmark::State &state, const char *example) {
  double t32 = 0, t16 = 0;
  for (auto _ : state) {
    t32 += stepSeconds(example, Precision::F32);
    t16 += stepSeconds(example, Precision::BF16);
  }
  state.counters["f32_ms"] = t32 / state.iterations() * 1e3;
  state.counters["bf16_ms"] = t16 / state.iterations() * 1e3;
  state.counters["bf16/f32"] = t32 / t16;
  state.SetLabel(hostLabel());
}

int registerAll() {
  // The seed MLP's products at batch 64 (forward, dW, dx) and the CNN's
  // dense layer.
  for (Shape s : {Shape{64, 128, 784}, Shape{784, 128, 64}, Shape{64, 784, 128},
                  Shape{64, 10, 128}, Shape{64, 128, 4608}})
    benchmark::RegisterBenchmark(("BM_BF16Matmul/" + std::to_string(s.m) + "x" +
                                  std::to_string(s.n) + "x" +
                                  std::to_string(s.k))
                                     .c_str(),
                                 BM_BF16Matmul, s)
        ->Iterations(5);
  for (const char *example : {"mlp.mlir", "cnn.mlir"})
    benchmark::RegisterBenchmark(
        ("BM_BF16Step/" + std::string(example)).c_str(), BM_BF16Step, example)
        ->Iterations(1)
        ->Unit(benchmark::kMillisecond);
  return 0;
}
int registered = registerAll();

} // namespace
