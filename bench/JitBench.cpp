//===- JitBench.cpp - JIT dispatch, element-wise and matmul speed ---------===//
//
// Each Fuse figure is reported with a reference measured in the same run:
//   dispatch: ns per cached call of a trivial function;
//   element-wise: GB/s of z = x * a + y, as a ratio to a STREAM-triad loop;
//   matmul: GFLOP/s as a ratio to single-threaded OpenBLAS sgemm.
//
//===----------------------------------------------------------------------===//

#include "fuse/Engine.h"

#include "llvm/Support/MemoryBuffer.h"

#include <benchmark/benchmark.h>
#include <cblas.h>

#include <chrono>
#include <map>
#include <memory>
#include <string>

using namespace fuse;

namespace {

/// Options for code compared with a single-threaded reference (OpenBLAS
/// runs on one thread, see BenchMain.cpp): one thread.
EngineOptions oneThread() {
  EngineOptions options;
  options.threads = 1;
  return options;
}

std::unique_ptr<Engine> makeEngine(const char *source,
                                   EngineOptions options = {}) {
  options.diskCache = false;
  auto engine = llvm::cantFail(Engine::create(options));
  llvm::cantFail(engine->loadString(source));
  return engine;
}

/// References measured earlier in the same run, by name.
std::map<std::string, double> &references() {
  static std::map<std::string, double> map;
  return map;
}

/// Runs `body` for every iteration of `state` and returns the rate of `work`
/// units (bytes, flops) per second over the timed loop.
template <typename Body>
double timedRate(benchmark::State &state, double work, Body body) {
  auto start = std::chrono::steady_clock::now();
  for (auto _ : state)
    body();
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  return seconds > 0 ? work * state.iterations() / seconds : 0;
}

/// Publishes a rate as `unit` (scaled by 1e-9) and, for a reference, records
/// it; for a Fuse figure, adds its ratio to the reference `against`.
void report(benchmark::State &state, const char *unit, double rate,
            const std::string &key, bool isReference) {
  state.counters[unit] = rate * 1e-9;
  if (isReference) {
    references()[key] = rate;
    return;
  }
  auto it = references().find(key);
  if (it != references().end() && it->second > 0)
    state.counters["ratio"] = rate / it->second;
}

//===----------------------------------------------------------------------===//
// Dispatch
//===----------------------------------------------------------------------===//

void BM_DispatchCachedCall(benchmark::State &state) {
  auto engine = makeEngine(R"mlir(
func.func @add(%x: tensor<1xf32>, %y: tensor<1xf32>) -> tensor<1xf32> {
  %z = fuse.add %x, %y : (tensor<1xf32>, tensor<1xf32>) -> tensor<1xf32>
  return %z : tensor<1xf32>
})mlir");
  Function &f = llvm::cantFail(engine->lookup("add"));
  Tensor x = Tensor::uniform({1}, 1), y = Tensor::uniform({1}, 2);
  std::vector<Tensor> out = llvm::cantFail(f.allocateResults({x, y}));
  double rate = timedRate(state, 1.0, [&] {
    llvm::cantFail(f.callInto({x, y}, out));
  });
  state.counters["ns/call"] = rate > 0 ? 1e9 / rate : 0;
}
BENCHMARK(BM_DispatchCachedCall);

//===----------------------------------------------------------------------===//
// Element-wise: z = x * a + y
//===----------------------------------------------------------------------===//

void BM_TriadReference(benchmark::State &state) {
  int64_t n = state.range(0);
  Tensor x = Tensor::uniform({n}, 1), y = Tensor::uniform({n}, 2),
         z = Tensor::uniform({n}, 3);
  float *px = x.data<float>(), *py = y.data<float>(), *pz = z.data<float>();
  const float a = 1.5f;
  double rate = timedRate(state, 3.0 * n * sizeof(float), [&] {
    for (int64_t i = 0; i < n; ++i)
      pz[i] = px[i] * a + py[i];
    benchmark::ClobberMemory();
  });
  report(state, "GB/s", rate, "triad/" + std::to_string(n), true);
}

void BM_FuseElementwise(benchmark::State &state) {
  int64_t n = state.range(0);
  auto engine = makeEngine(R"mlir(
func.func @triad(%x: tensor<?xf32>, %y: tensor<?xf32>, %a: tensor<f32>)
    -> tensor<?xf32> {
  %s = fuse.mul %x, %a : (tensor<?xf32>, tensor<f32>) -> tensor<?xf32>
  %z = fuse.add %s, %y : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  return %z : tensor<?xf32>
})mlir");
  Function &f = llvm::cantFail(engine->lookup("triad"));
  Tensor x = Tensor::uniform({n}, 1), y = Tensor::uniform({n}, 2),
         a = Tensor::uniform({}, 3);
  std::vector<Tensor> out = llvm::cantFail(f.allocateResults({x, y, a}));
  llvm::cantFail(f.callInto({x, y, a}, out)); // compile, fault pages in
  double rate = timedRate(state, 3.0 * n * sizeof(float), [&] {
    llvm::cantFail(f.callInto({x, y, a}, out));
  });
  report(state, "GB/s", rate, "triad/" + std::to_string(n), false);
}

//===----------------------------------------------------------------------===//
// Matmul
//===----------------------------------------------------------------------===//

/// A matmul, or with `batch` > 1 a batch_matmul of `batch` such products.
struct MatmulShape {
  int64_t m, n, k;
  bool transposeLhs, transposeRhs;
  int64_t batch = 1;
};

/// Operand and result shapes as stored.
struct MatmulOperands {
  llvm::SmallVector<int64_t> lhs, rhs, result;
};
MatmulOperands operandShapes(const MatmulShape &s) {
  MatmulOperands shapes = {
      s.transposeLhs ? llvm::SmallVector<int64_t>{s.k, s.m}
                     : llvm::SmallVector<int64_t>{s.m, s.k},
      s.transposeRhs ? llvm::SmallVector<int64_t>{s.n, s.k}
                     : llvm::SmallVector<int64_t>{s.k, s.n},
      {s.m, s.n}};
  if (s.batch > 1)
    for (auto *shape : {&shapes.lhs, &shapes.rhs, &shapes.result})
      shape->insert(shape->begin(), s.batch);
  return shapes;
}

std::string shapeName(const MatmulShape &s) {
  return (s.batch > 1 ? std::to_string(s.batch) + "x(" : "") +
         std::to_string(s.m) + "x" + std::to_string(s.n) + "x" +
         std::to_string(s.k) + (s.transposeLhs ? "_tl" : "") +
         (s.transposeRhs ? "_tr" : "") + (s.batch > 1 ? ")" : "");
}

double flops(const MatmulShape &s) { return 2.0 * s.batch * s.m * s.n * s.k; }

/// A batch runs as one sgemm per product, as frameworks without a batched
/// BLAS call do.
void BM_OpenBLASSgemm(benchmark::State &state, MatmulShape s) {
  MatmulOperands shapes = operandShapes(s);
  Tensor a = Tensor::uniform(shapes.lhs, 1), b = Tensor::uniform(shapes.rhs, 2);
  Tensor c = Tensor::zeros(DType::F32, shapes.result);
  int64_t lda = shapes.lhs.back(), ldb = shapes.rhs.back();
  double rate = timedRate(state, flops(s), [&] {
    for (int64_t i = 0; i < s.batch; ++i)
      cblas_sgemm(CblasRowMajor, s.transposeLhs ? CblasTrans : CblasNoTrans,
                  s.transposeRhs ? CblasTrans : CblasNoTrans, s.m, s.n, s.k,
                  1.0f, a.data<float>() + i * s.m * s.k, lda,
                  b.data<float>() + i * s.k * s.n, ldb, 0.0f,
                  c.data<float>() + i * s.m * s.n, s.n);
    benchmark::ClobberMemory();
  });
  report(state, "GFLOP/s", rate, shapeName(s), true);
}

void BM_FuseMatmul(benchmark::State &state, MatmulShape s) {
  MatmulOperands shapes = operandShapes(s);
  std::string attrs;
  if (s.transposeLhs || s.transposeRhs)
    attrs = std::string("{") + (s.transposeLhs ? "transpose_lhs" : "") +
            (s.transposeLhs && s.transposeRhs ? ", " : "") +
            (s.transposeRhs ? "transpose_rhs" : "") + "}";
  auto type = [](llvm::ArrayRef<int64_t> shape) {
    std::string text = "tensor<";
    for (int64_t d : shape)
      text += std::to_string(d) + "x";
    return text + "f32>";
  };
  std::string source =
      "func.func @mm(%a: " + type(shapes.lhs) + ", %b: " + type(shapes.rhs) +
      ") -> " + type(shapes.result) + " {\n  %c = fuse." +
      (s.batch > 1 ? "batch_matmul" : "matmul") + " %a, %b " + attrs + " : (" +
      type(shapes.lhs) + ", " + type(shapes.rhs) + ") -> " +
      type(shapes.result) + "\n  return %c : " + type(shapes.result) + "\n}\n";
  auto engine = makeEngine(source.c_str(), oneThread());
  Function &f = llvm::cantFail(engine->lookup("mm"));
  Tensor a = Tensor::uniform(shapes.lhs, 1), b = Tensor::uniform(shapes.rhs, 2);
  std::vector<Tensor> out = llvm::cantFail(f.allocateResults({a, b}));
  double rate = timedRate(state, flops(s), [&] {
    llvm::cantFail(f.callInto({a, b}, out));
  });
  report(state, "GFLOP/s", rate, shapeName(s), false);
}

//===----------------------------------------------------------------------===//
// conv2d and its gradients (the seed CNN's layers)
//===----------------------------------------------------------------------===//

/// A 3x3 stride-1 valid convolution of an NHWC batch with HWIO filters.
struct ConvShape {
  const char *name;
  int64_t n, h, w, c, f;
  int64_t oh() const { return h - 2; }
  int64_t ow() const { return w - 2; }
  double flops() const { return 2.0 * n * oh() * ow() * f * 9 * c; }
};

enum class ConvPass { Forward, InputGrad, FilterGrad };

/// OpenBLAS on the GEMM that im2col makes of the pass (the im2col itself not
/// timed): the speed of the same multiply-adds as one large sgemm.
void BM_OpenBLASConvGemm(benchmark::State &state, ConvShape s, ConvPass pass) {
  int64_t pixels = s.n * s.oh() * s.ow(), taps = 9 * s.c;
  // Forward: [pixels, taps] x [taps, f]; input grad: [pixels, f] x [f, taps];
  // filter grad: [taps, pixels] x [pixels, f].
  int64_t m = pass == ConvPass::FilterGrad ? taps : pixels;
  int64_t n = pass == ConvPass::InputGrad ? taps : s.f;
  int64_t k = pass == ConvPass::Forward     ? taps
              : pass == ConvPass::InputGrad ? s.f
                                            : pixels;
  Tensor a = Tensor::uniform({m, k}, 1), b = Tensor::uniform({k, n}, 2);
  Tensor c = Tensor::zeros(DType::F32, {m, n});
  double rate = timedRate(state, s.flops(), [&] {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f,
                a.data<float>(), k, b.data<float>(), n, 0.0f, c.data<float>(),
                n);
    benchmark::ClobberMemory();
  });
  report(state, "GFLOP/s", rate,
         std::string(s.name) + std::to_string(int(pass)), true);
}

void BM_FuseConv2d(benchmark::State &state, ConvShape s, ConvPass pass) {
  auto type = [](std::initializer_list<int64_t> dims) {
    std::string t = "tensor<";
    for (int64_t d : dims)
      t += std::to_string(d) + "x";
    return t + "f32>";
  };
  std::string x = type({s.n, s.h, s.w, s.c}), k = type({3, 3, s.c, s.f}),
              y = type({s.n, s.oh(), s.ow(), s.f});
  std::string body, args, result;
  std::vector<Tensor> in;
  if (pass == ConvPass::Forward) {
    args = "%x: " + x + ", %k: " + k;
    result = y;
    body = "fuse.conv2d %x, %k : (" + x + ", " + k + ") -> " + y;
    in = {Tensor::uniform({s.n, s.h, s.w, s.c}, 1),
          Tensor::uniform({3, 3, s.c, s.f}, 2)};
  } else if (pass == ConvPass::InputGrad) {
    args = "%g: " + y + ", %k: " + k + ", %x: " + x;
    result = x;
    body = "fuse.conv2d_input_grad %g, %k, %x : (" + y + ", " + k + ", " + x +
           ") -> " + x;
    in = {Tensor::uniform({s.n, s.oh(), s.ow(), s.f}, 1),
          Tensor::uniform({3, 3, s.c, s.f}, 2),
          Tensor::uniform({s.n, s.h, s.w, s.c}, 3)};
  } else {
    args = "%x: " + x + ", %g: " + y + ", %k: " + k;
    result = k;
    body = "fuse.conv2d_filter_grad %x, %g, %k : (" + x + ", " + y + ", " + k +
           ") -> " + k;
    in = {Tensor::uniform({s.n, s.h, s.w, s.c}, 1),
          Tensor::uniform({s.n, s.oh(), s.ow(), s.f}, 2),
          Tensor::uniform({3, 3, s.c, s.f}, 3)};
  }
  std::string source = "func.func @conv(" + args + ") -> " + result +
                       " {\n  %r = " + body + "\n  return %r : " + result +
                       "\n}\n";
  auto engine = makeEngine(source.c_str(), oneThread());
  Function &f = llvm::cantFail(engine->lookup("conv"));
  std::vector<Tensor> out = llvm::cantFail(f.allocateResults(in));
  double rate =
      timedRate(state, s.flops(), [&] { llvm::cantFail(f.callInto(in, out)); });
  report(state, "GFLOP/s", rate,
         std::string(s.name) + std::to_string(int(pass)), false);
}

const ConvShape kConvShapes[] = {
    {"cnn_conv1", 64, 28, 28, 1, 32},  // the seed CNN's first layer
    {"cnn_conv2", 64, 26, 26, 32, 32}, // its second: 2/3 of its FLOPs
};

//===----------------------------------------------------------------------===//
// The seed MLP: loss and gradients (forward + backward), one step
//===----------------------------------------------------------------------===//

void BM_MlpValueAndGrad(benchmark::State &state) {
  int64_t batch = state.range(0);
  auto buffer =
      llvm::MemoryBuffer::getFile(FUSE_SOURCE_DIR "/examples/mlp.mlir");
  if (!buffer) {
    state.SkipWithError("cannot read examples/mlp.mlir");
    return;
  }
  std::string source = (*buffer)->getBuffer().str() + R"mlir(
func.func @grads(%w1: tensor<784x128xf32>, %b1: tensor<128xf32>,
                 %w2: tensor<128x10xf32>, %b2: tensor<10xf32>,
                 %x: tensor<?x28x28xf32>, %y: tensor<?xi32>, %step: tensor<i64>)
    -> (tensor<f32>, tensor<784x128xf32>, tensor<128xf32>, tensor<128x10xf32>,
        tensor<10xf32>) {
  %l, %g1, %g2, %g3, %g4 = fuse.value_and_grad @loss(%w1, %b1, %w2, %b2, %x, %y, %step)
      {wrt = array<i64: 0, 1, 2, 3>}
      : (tensor<784x128xf32>, tensor<128xf32>, tensor<128x10xf32>,
         tensor<10xf32>, tensor<?x28x28xf32>, tensor<?xi32>, tensor<i64>)
      -> (tensor<f32>, tensor<784x128xf32>, tensor<128xf32>,
          tensor<128x10xf32>, tensor<10xf32>)
  return %l, %g1, %g2, %g3, %g4 : tensor<f32>, tensor<784x128xf32>,
      tensor<128xf32>, tensor<128x10xf32>, tensor<10xf32>
}
)mlir";
  auto engine = makeEngine(source.c_str());
  Function &f = llvm::cantFail(engine->lookup("grads"));
  Tensor labels = Tensor::empty(DType::I32, {batch});
  for (int64_t i = 0; i < batch; ++i)
    labels.data<int32_t>()[i] = static_cast<int32_t>(i % 10);
  Tensor step = Tensor::zeros(DType::I64, {});
  std::vector<Tensor> args = {Tensor::uniform({784, 128}, 1),
                              Tensor::uniform({128}, 2),
                              Tensor::uniform({128, 10}, 3),
                              Tensor::uniform({10}, 4),
                              Tensor::uniform({batch, 28, 28}, 5),
                              labels,
                              step};
  std::vector<Tensor> out = llvm::cantFail(f.allocateResults(args));
  double rate =
      timedRate(state, 1.0, [&] { llvm::cantFail(f.callInto(args, out)); });
  state.counters["us/step"] = rate > 0 ? 1e6 / rate : 0;
  state.counters["compile_ms"] = f.stats().compileMillis;
}
BENCHMARK(BM_MlpValueAndGrad)->Arg(1)->Arg(64)->Arg(256);

const MatmulShape kMatmulShapes[] = {
    {64, 128, 784, false, false},     // seed MLP layer 1, batch 64
    {64, 10, 128, false, false},      // layer 2
    {784, 128, 64, true, false},      // dW1 = x^T dy
    {64, 784, 128, false, true},      // dx = dy W^T-style
    {64, 784, 128, false, false},     // the same, W stored transposed
    {1, 128, 784, false, false},      // batch 1: layer 1
    {784, 128, 1, true, false},       // dW1
    {1, 784, 128, false, true},       // dx
    {256, 128, 784, false, false},    // batch 256: layer 1
    {784, 128, 256, true, false},     // dW1
    {256, 784, 128, false, true},     // dx
    {64, 128, 4608, false, false},    // seed CNN dense layer, batch 64
    {4608, 128, 64, true, false},     // its dW
    {64, 4608, 128, false, true},     // its dx
    {1024, 1024, 1024, false, false}, // square
    {1024, 1024, 1024, true, false},
    // Batched products, as attention computes them (heads x sequence).
    {128, 128, 64, false, false, 16}, // Q K^T-like
    {128, 64, 128, false, false, 16}, // P V
    {128, 128, 64, false, true, 16},  // Q K^T
    {64, 64, 64, false, false, 64},
    // The GPT example's MLP at batch 16 x T 128 (2,048 tokens, d 128).
    {2048, 512, 128, false, false}, // x W1
    {2048, 128, 512, false, false}, // h W2
    {512, 128, 2048, true, false},  // dW2 = h^T dy
    {2048, 512, 128, false, true},  // dh = dy W2^T
    {128, 512, 2048, true, false},  // dW1 = x^T du
    {2048, 128, 512, false, true},  // dx = du W1^T
    {128, 384, 2048, true, false},  // dWqkv
    {2048, 128, 384, false, true},  // dx = dqkv Wqkv^T
};

//===----------------------------------------------------------------------===//
// Optimizer step: effective GB/s (bytes that must move / time) vs triad
//===----------------------------------------------------------------------===//

/// `fuse.<op>` over `tensors` parameters totalling `total` f32 elements,
/// parameters and states updated in place, fused or (`fusion` false) op by
/// op. The unfused run records its rate; the fused run reports its ratio to
/// triad and its speed-up over the unfused run of the same configuration.
void BM_FuseOptimizer(benchmark::State &state, std::string op,
                      std::string attrs, unsigned statesPerParam, int64_t total,
                      int64_t tensors, bool fusion) {
  int64_t each = total / tensors;
  std::string t = "tensor<" + std::to_string(each) + "xf32>";
  std::string args, params, grads, states, types, stateTypes, results;
  auto list = [&](std::string &out, const std::string &prefix, int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
      std::string name = "%" + prefix + std::to_string(i);
      out += (out.empty() ? "" : ", ") + name;
      args += ", " + name + ": " + t;
    }
  };
  list(params, "p", tensors);
  list(grads, "g", tensors);
  list(states, "s", tensors * statesPerParam);
  for (int64_t i = 0; i < tensors; ++i)
    types += (i ? ", " : "") + t;
  for (int64_t i = 0; i < tensors * statesPerParam; ++i)
    stateTypes += (i ? ", " : "") + t;
  int64_t numResults = tensors * (1 + statesPerParam);
  // Parameter i is argument 2 + i, state k argument 2 + 2 * tensors + k.
  for (int64_t j = 0; j < numResults; ++j)
    results += (j ? ", " : "") + t + " {fuse.in_place = " +
               std::to_string(j < tensors ? 2 + j : 2 + tensors + j) + "}";
  std::string resultTypes =
      types + (stateTypes.empty() ? "" : ", " + stateTypes);
  std::string source = "func.func @step(%lr: tensor<f32>, %step: tensor<i64>" +
                       args + ") -> (" + results +
                       ") {\n  %r:" + std::to_string(numResults) + " = fuse." +
                       op + " %lr, %step params(" + params + " : " + types +
                       ") grads(" + grads + " : " + types + ") states(" +
                       (states.empty() ? "" : states + " : " + stateTypes) +
                       ") " + attrs + " -> " + resultTypes + "\n  return ";
  for (int64_t i = 0; i < numResults; ++i)
    source += (i ? ", %r#" : "%r#") + std::to_string(i);
  source += " : " + resultTypes + "\n}\n";
  EngineOptions options;
  options.fusion = fusion;
  auto engine = makeEngine(source.c_str(), options);
  Function &f = llvm::cantFail(engine->lookup("step"));
  std::vector<Tensor> in = {Tensor::fromValues<float>({}, {1e-3f}),
                            Tensor::fromValues<int64_t>({}, {3})};
  for (int64_t i = 0; i < tensors * (2 + statesPerParam); ++i)
    in.push_back(Tensor::uniform({each}, i));
  // Every result is computed in its argument: no result tensors.
  std::vector<Tensor> none(numResults);
  llvm::cantFail(f.callInto(in, none)); // compile, fault pages in
  // Read p, g and the states; write p and the states.
  double bytes = double(total) * 4 * (2 + 2 * statesPerParam + 1);
  double rate =
      timedRate(state, bytes, [&] { llvm::cantFail(f.callInto(in, none)); });
  std::string config =
      op + attrs + "/" + std::to_string(total) + "/" + std::to_string(tensors);
  if (!fusion) {
    report(state, "GB/s", rate, "unfused/" + config, true);
    return;
  }
  report(state, "GB/s", rate, "triad/10000000", false);
  auto unfused = references().find("unfused/" + config);
  if (unfused != references().end() && unfused->second > 0)
    state.counters["vs_unfused"] = rate / unfused->second;
}

/// Adam on a parameter whose gradient is element-wise in the backward pass
/// (a ReLU mask of the incoming gradient, as for a per-element scale): fused,
/// the mask is computed inside the update and the gradient never reaches
/// memory. `materialized` also returns the gradient, which forces it into
/// memory (a write and a read more per element): the update alone fused.
void BM_MaskedGradientAdam(benchmark::State &state, bool materialized) {
  const int64_t n = 10000000;
  std::string t = "tensor<" + std::to_string(n) + "xf32>";
  std::string source =
      "func.func @step(%lr: tensor<f32>, %step: tensor<i64>, %p: " + t +
      ", %x: " + t + ", %dy: " + t + ", %m: " + t + ", %v: " + t + ") -> (" +
      t + " {fuse.in_place = 2}, " + t + " {fuse.in_place = 5}, " + t +
      " {fuse.in_place = 6}" + (materialized ? ", " + t : "") +
      ") {\n"
      "  %zero = fuse.constant dense<0.0> : tensor<f32>\n"
      "  %c = fuse.compare gt, %x, %zero : (" +
      t + ", tensor<f32>) -> tensor<" + std::to_string(n) +
      "xi1>\n"
      "  %g = fuse.select %c, %dy, %zero : (tensor<" +
      std::to_string(n) + "xi1>, " + t + ", tensor<f32>) -> " + t +
      "\n"
      "  %r:3 = fuse.adam %lr, %step params(%p : " +
      t + ") grads(%g : " + t + ") states(%m, %v : " + t + ", " + t + ") -> " +
      t + ", " + t + ", " + t + "\n  return %r#0, %r#1, %r#2" +
      (materialized ? ", %g" : "") + " : " + t + ", " + t + ", " + t +
      (materialized ? ", " + t : "") + "\n}\n";
  auto engine = makeEngine(source.c_str());
  Function &f = llvm::cantFail(engine->lookup("step"));
  std::vector<Tensor> in = {Tensor::fromValues<float>({}, {1e-3f}),
                            Tensor::fromValues<int64_t>({}, {3})};
  for (unsigned i = 0; i < 5; ++i)
    in.push_back(Tensor::uniform({n}, i));
  std::vector<Tensor> out(materialized ? 4 : 3);
  if (materialized)
    out[3] = Tensor::empty(DType::F32, {n});
  llvm::cantFail(f.callInto(in, out));
  // Read p, x, dy, m, v; write p, m, v.
  double bytes = double(n) * 4 * 8;
  double rate =
      timedRate(state, bytes, [&] { llvm::cantFail(f.callInto(in, out)); });
  // Fused: "ratio" is the speed-up over the materialized gradient.
  report(state, "GB/s", rate, "masked-adam", materialized);
}

int registerAll() {
  benchmark::RegisterBenchmark("BM_TriadReference", BM_TriadReference)
      ->Arg(1 << 12)
      ->Arg(10000000);
  benchmark::RegisterBenchmark("BM_FuseElementwise", BM_FuseElementwise)
      ->Arg(1 << 12)
      ->Arg(10000000);
  struct Optimizer {
    const char *name, *op, *attrs;
    unsigned states;
  };
  for (const Optimizer &o :
       {Optimizer{"Adam", "adam", "", 2},
        Optimizer{"AdamW", "adam", "{decoupled, weight_decay = 0.01 : f64}", 2},
        Optimizer{"SgdMomentum", "sgd", "{momentum = 0.9 : f64}", 1},
        Optimizer{"Adagrad", "adagrad", "", 1},
        Optimizer{"Lamb", "lamb", "", 2}})
    for (int64_t total : {1000000, 10000000})
      for (int64_t tensors : {1, 100})
        for (bool fusion : {false, true}) {
          // Unfused, 100 parameters make thousands of ops, and one-shot
          // bufferization takes minutes on them: the baseline is measured
          // on one tensor.
          if (!fusion && tensors != 1)
            continue;
          benchmark::RegisterBenchmark(
              (std::string(fusion ? "BM_FuseOptimizer/" : "BM_Unfused/") +
               o.name + "/" + std::to_string(total) + "/" +
               std::to_string(tensors))
                  .c_str(),
              BM_FuseOptimizer, o.op, o.attrs, o.states, total, tensors,
              fusion);
        }
  benchmark::RegisterBenchmark("BM_MaskedGradientAdam/materialized",
                               BM_MaskedGradientAdam, true);
  benchmark::RegisterBenchmark("BM_MaskedGradientAdam/fused",
                               BM_MaskedGradientAdam, false);
  for (const ConvShape &s : kConvShapes)
    for (auto [pass, name] : {std::pair{ConvPass::Forward, "forward"},
                              {ConvPass::InputGrad, "input_grad"},
                              {ConvPass::FilterGrad, "filter_grad"}}) {
      // The first layer's input is the data: it has no input gradient.
      if (s.c == 1 && pass == ConvPass::InputGrad)
        continue;
      std::string suffix = std::string(s.name) + "/" + name;
      benchmark::RegisterBenchmark(("BM_OpenBLASConvGemm/" + suffix).c_str(),
                                   BM_OpenBLASConvGemm, s, pass);
      benchmark::RegisterBenchmark(("BM_FuseConv2d/" + suffix).c_str(),
                                   BM_FuseConv2d, s, pass);
    }
  for (const MatmulShape &s : kMatmulShapes) {
    benchmark::RegisterBenchmark(("BM_OpenBLASSgemm/" + shapeName(s)).c_str(),
                                 BM_OpenBLASSgemm, s);
    benchmark::RegisterBenchmark(("BM_FuseMatmul/" + shapeName(s)).c_str(),
                                 BM_FuseMatmul, s);
  }
  return 0;
}
int registered = registerAll();

} // namespace
