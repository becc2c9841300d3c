//===- TrainBench.cpp - Training steps per call (step fusing) -------------===//
//
// The seed MLP's Adam training step through the Trainer, K steps per call
// of the K-step function: microseconds per step, and the share of time
// outside the steps' own computation, two ways, against references measured
// earlier in the same run for the same batch size:
//   overhead%: time per step at K over time per step at K = 256, minus 1
//     (the definition; it includes cache effects, and run-to-run
//     noise of a few percent);
//   call%: the time of a call of 0 steps (argument checks, dispatch, the
//     loop's setup: the fixed cost of a call) over the time of a call of K.
//
//===----------------------------------------------------------------------===//

#include "BenchUtils.h"

#include "fuse/Trainer.h"

#include "llvm/Support/MemoryBuffer.h"

#include <benchmark/benchmark.h>

#include <atomic>
#include <chrono>
#include <immintrin.h>
#include <map>
#include <thread>
#include <vector>

using namespace fuse;

namespace {

constexpr int64_t kMaxSteps = 256;

/// One engine for every configuration: each batch size compiles once, and
/// every K runs that same code.
Engine *seedEngine() {
  static std::unique_ptr<Engine> engine = [] {
    auto buffer =
        llvm::MemoryBuffer::getFile(FUSE_SOURCE_DIR "/examples/mlp.mlir");
    std::string source = buffer ? (*buffer)->getBuffer().str() : "";
    EngineOptions options;
    options.diskCache = false;
    std::unique_ptr<Engine> e = llvm::cantFail(Engine::create(options));
    llvm::cantFail(e->loadString(source, "mlp.mlir"));
    return e;
  }();
  return engine.get();
}

/// Seconds per step at K = kMaxSteps, and per call of K = 0, by batch size.
std::map<int64_t, double> &largestK() {
  static std::map<int64_t, double> map;
  return map;
}
std::map<int64_t, double> &emptyCall() {
  static std::map<int64_t, double> map;
  return map;
}

void BM_TrainSteps(benchmark::State &state) {
  int64_t batch = state.range(0), k = state.range(1);
  auto trainer = llvm::cantFail(Trainer::create(*seedEngine(), "train"));
  llvm::cantFail(
      trainer->setState("w1", Tensor::uniform({784, 128}, 1, -0.07f, 0.07f)));
  llvm::cantFail(
      trainer->setState("w2", Tensor::uniform({128, 10}, 2, -0.2f, 0.2f)));
  llvm::cantFail(
      trainer->setInput("lr", Tensor::fromValues<float>({}, {1e-3f})));
  Tensor x = Tensor::uniform({k, batch, 28, 28}, 3, 0, 1);
  Tensor y = Tensor::empty(DType::I32, {k, batch});
  for (int64_t i = 0; i < k * batch; ++i)
    y.data<int32_t>()[i] = static_cast<int32_t>(i % 10);
  // Compiles on the first call of each batch size.
  llvm::cantFail(trainer->trainSteps({x, y}));

  auto start = std::chrono::steady_clock::now();
  for (auto _ : state)
    if (llvm::Error e = trainer->trainSteps({x, y})) {
      state.SkipWithError(llvm::toString(std::move(e)).c_str());
      return;
    }
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  double perCall = seconds / state.iterations();
  if (k == 0) {
    emptyCall()[batch] = perCall;
    state.counters["us/call"] = perCall * 1e6;
    return;
  }
  double perStep = perCall / k;
  state.counters["us/step"] = perStep * 1e6;
  if (auto it = emptyCall().find(batch); it != emptyCall().end())
    state.counters["call%"] = it->second / perCall * 100;
  if (k == kMaxSteps) {
    largestK()[batch] = perStep;
    return;
  }
  if (auto it = largestK().find(batch); it != largestK().end())
    state.counters["overhead%"] = (perStep / it->second - 1) * 100;
}

/// The step function called once per step, for comparison.
void BM_TrainStepCalls(benchmark::State &state) {
  int64_t batch = state.range(0);
  Function &train = llvm::cantFail(seedEngine()->lookup("train"));
  std::vector<Tensor> args = {Tensor::uniform({784, 128}, 1, -0.07f, 0.07f),
                              Tensor::zeros(DType::F32, {128}),
                              Tensor::uniform({128, 10}, 2, -0.2f, 0.2f),
                              Tensor::zeros(DType::F32, {10})};
  for (int j = 0; j < 8; ++j)
    args.push_back(Tensor::zeros(DType::F32, args[j % 4].shape()));
  args.push_back(Tensor::uniform({batch, 28, 28}, 3, 0, 1));
  Tensor y = Tensor::empty(DType::I32, {batch});
  for (int64_t i = 0; i < batch; ++i)
    y.data<int32_t>()[i] = static_cast<int32_t>(i % 10);
  args.push_back(y);
  args.push_back(Tensor::fromValues<float>({}, {1e-3f}));
  args.push_back(Tensor::zeros(DType::I64, {}));
  std::vector<Tensor> results(train.numResults());
  results[0] = Tensor::zeros(DType::F32, {});
  llvm::cantFail(train.callInto(args, results));
  for (auto _ : state) {
    ++args.back().data<int64_t>()[0];
    llvm::cantFail(train.callInto(args, results));
  }
}
BENCHMARK(BM_TrainStepCalls)
    ->ArgName("batch")
    ->Arg(1)
    ->Arg(8)
    ->Arg(64)
    ->Arg(256);

/// The floor under a step: Adam alone over the seed's four parameters (the
/// same fused, in-place update the step ends with), gradients given.
void BM_SeedAdamUpdate(benchmark::State &state) {
  const std::vector<std::vector<int64_t>> shapes = {
      {784, 128}, {128}, {128, 10}, {10}};
  auto type = [](const std::vector<int64_t> &shape) {
    std::string text = "tensor<";
    for (int64_t d : shape)
      text += std::to_string(d) + "x";
    return text + "f32>";
  };
  std::string args, params, grads, states, types, stateTypes, results;
  for (int kind = 0; kind < 4; ++kind)
    for (int j = 0; j < 4; ++j) {
      std::string name =
          "%" + std::string("pgmv").substr(kind, 1) + std::to_string(j);
      args += ", " + name + ": " + type(shapes[j]);
      std::string &list = kind == 0 ? params : kind == 1 ? grads : states;
      list += (list.empty() ? "" : ", ") + name;
      if (kind >= 2)
        stateTypes += (stateTypes.empty() ? "" : ", ") + type(shapes[j]);
    }
  for (int j = 0; j < 4; ++j)
    types += (j ? ", " : "") + type(shapes[j]);
  // Argument order: lr, step, p0-3, g0-3, m0-3, v0-3.
  for (int j = 0; j < 12; ++j)
    results +=
        std::string(j ? ", " : "") + type(shapes[j % 4]) +
        " {fuse.in_place = " + std::to_string(j < 4 ? 2 + j : 2 + 4 + j) + "}";
  std::string source =
      "func.func @adam(%lr: tensor<f32>, %step: tensor<i64>" + args + ") -> (" +
      results + ") {\n  %r:12 = fuse.adam %lr, %step params(" + params + " : " +
      types + ") grads(" + grads + " : " + types + ") states(" + states +
      " : " + stateTypes + ") -> " + types + ", " + stateTypes +
      "\n  return %r#0, %r#1, %r#2, %r#3, %r#4, %r#5, %r#6, " +
      "%r#7, %r#8, %r#9, %r#10, %r#11 : " + types + ", " + stateTypes + "\n}\n";
  EngineOptions options;
  options.diskCache = false;
  auto engine = llvm::cantFail(Engine::create(options));
  llvm::cantFail(engine->loadString(source));
  Function &adam = llvm::cantFail(engine->lookup("adam"));
  std::vector<Tensor> inputs = {Tensor::fromValues<float>({}, {1e-3f}),
                                Tensor::zeros(DType::I64, {})};
  for (int kind = 0; kind < 4; ++kind)
    for (int j = 0; j < 4; ++j)
      inputs.push_back(
          kind == 2 || kind == 3
              ? Tensor::zeros(DType::F32, shapes[j])
              : Tensor::uniform(shapes[j], 10 * kind + j, -0.1f, 0.1f));
  std::vector<Tensor> out(12);
  llvm::cantFail(adam.callInto(inputs, out));
  for (auto _ : state) {
    ++inputs[1].data<int64_t>()[0];
    llvm::cantFail(adam.callInto(inputs, out));
  }
}
BENCHMARK(BM_SeedAdamUpdate);

/// The traffic floor under any step that keeps Adam's state in f32: a plain
/// loop that reads and writes the seed's parameters and both moments
/// (101,770 floats each, 1.2 MB: more than L2), with the moments' updates
/// but no square root or divide and no gradient array.
void BM_SeedStateStreamReference(benchmark::State &state) {
  constexpr int64_t n = 784 * 128 + 128 + 128 * 10 + 10;
  Tensor p = Tensor::uniform({n}, 1, -0.1f, 0.1f),
         m = Tensor::zeros(DType::F32, {n}), v = Tensor::zeros(DType::F32, {n});
  float *pp = p.data<float>(), *pm = m.data<float>(), *pv = v.data<float>();
  for (auto _ : state) {
    for (int64_t i = 0; i < n; ++i) {
      float g = pp[i] * 1e-3f;
      pm[i] = 0.9f * pm[i] + 0.1f * g;
      pv[i] = 0.999f * pv[i] + 0.001f * g * g;
      pp[i] -= 1e-3f * pm[i] * pv[i];
    }
    benchmark::ClobberMemory();
  }
  state.counters["GB/s"] =
      benchmark::Counter(6.0 * n * sizeof(float) * state.iterations(),
                         benchmark::Counter::kIsRate);
}
BENCHMARK(BM_SeedStateStreamReference);

} // namespace

/// The core's multiply-add peak in FLOP/s: 24 independent chains of FMAs on
/// whole registers, no memory traffic, for about `seconds`; 0 without FMA
/// instructions.
double fuse::bench::measureFmaPeak(double seconds) {
  // Independent chains that stay in registers: 24 of AVX-512's 32, 12 of
  // AVX2's 16 (24 there spilled, and the "peak" was a third low). Either
  // covers the FMA latency of two pipes, 4 cycles each.
#if defined(__AVX512F__)
  __m512 scale = _mm512_set1_ps(0.999999f), shift = _mm512_set1_ps(1e-6f);
  return measureChainsPeak<24>(
      seconds, 2.0 * 16, [](int i) { return _mm512_set1_ps(float(i)); },
      [&](__m512 a) { return _mm512_fmadd_ps(a, scale, shift); },
      [](__m512 a, __m512 b) { return _mm512_add_ps(a, b); },
      [](__m512 a) { return a[0]; });
#elif defined(__FMA__)
  __m256 scale = _mm256_set1_ps(0.999999f), shift = _mm256_set1_ps(1e-6f);
  return measureChainsPeak<12>(
      seconds, 2.0 * 8, [](int i) { return _mm256_set1_ps(float(i)); },
      [&](__m256 a) { return _mm256_fmadd_ps(a, scale, shift); },
      [](__m256 a, __m256 b) { return _mm256_add_ps(a, b); },
      [](__m256 a) { return a[0]; });
#else
  return 0;
#endif
}

namespace {

/// The core's multiply-add peak. "floor_us" is the time of the seed MLP's
/// products at batch 64 at that rate (26.2 MFLOP: both layers' forward
/// products and weight gradients, and the second layer's input gradient),
/// less than any of its steps can take on this core.
void BM_FmaPeakReference(benchmark::State &state) {
  double rate = 0;
  for (auto _ : state)
    rate = fuse::bench::measureFmaPeak(0.05);
  if (rate == 0) {
    state.SkipWithError("no FMA instructions on this host");
    return;
  }
  constexpr double kSeedProducts =
      2.0 * 64 * (784 * 128 + 128 * 10) * 2 + 2.0 * 64 * 128 * 10;
  state.counters["GFLOP/s"] = rate / 1e9;
  state.counters["floor_us"] = kSeedProducts / rate * 1e6;
}
BENCHMARK(BM_FmaPeakReference);

/// The multiply-add peak of `threads` threads running the FMA chains at
/// once, summed: the reference for the speed-up of FMA-bound steps (issue
/// 25's seed MLP at batch 64) over the threads. Two threads on two cores
/// give twice one thread's rate; two threads that share a core's FMA pipes
/// (SMT siblings, which a VM's vCPUs may be without saying so in `lscpu`)
/// give about one thread's, and no compiled step can beat that ratio.
void BM_FmaPeakThreads(benchmark::State &state) {
  int threads = int(state.range(0));
  double total = 0;
  for (auto _ : state) {
    std::vector<double> rates(threads, 0.0);
    std::atomic<int> ready{0};
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t)
      pool.emplace_back([&, t] {
        // Start together, so that the threads' chains overlap in time.
        ready.fetch_add(1);
        while (ready.load() < threads)
          ;
        rates[t] = fuse::bench::measureFmaPeak(0.2);
      });
    for (std::thread &thread : pool)
      thread.join();
    total = 0;
    for (double rate : rates)
      total += rate;
  }
  if (total == 0) {
    state.SkipWithError("no FMA instructions on this host");
    return;
  }
  state.counters["GFLOP/s"] = total / 1e9;
}
BENCHMARK(BM_FmaPeakThreads)->ArgName("threads")->Arg(1)->Arg(2)->Iterations(3);

void trainStepsArgs(benchmark::internal::Benchmark *b) {
  // The references first: a call of no step, then the largest K.
  for (int64_t batch : {1, 8, 64, 256}) {
    b->Args({batch, 0});
    for (int64_t k = kMaxSteps; k >= 1; k /= 2)
      b->Args({batch, k});
  }
}
BENCHMARK(BM_TrainSteps)->Apply(trainStepsArgs)->ArgNames({"batch", "K"});

} // namespace
