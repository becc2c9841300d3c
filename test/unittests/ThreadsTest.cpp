//===- ThreadsTest.cpp - The same bits for any thread count ---------------===//
//
// Compiled code splits its work into pieces fixed by the shapes (the
// strategy's distribution level) and runs them on EngineOptions::threads
// threads. Training the seed MLP, the CNN and every optimizer gives bitwise
// the same losses, parameters and optimizer states for 1, 2, 3 and 4
// threads and for any K; worker threads compute in the caller's
// floating-point mode (denormals flushed); several callers of one engine
// at once, each call parallel inside, get what one caller gets. Every
// optimizer over many parameters of mixed shapes gives the same bits for
// any thread count, and the same as one op per parameter.
//
//===----------------------------------------------------------------------===//

#include "TestUtils.h"

#include "fuse/Trainer.h"

#include "llvm/ADT/STLExtras.h"

#include <cstdlib>
#include <cstring>
#include <thread>

using namespace fuse;
using namespace fuse::testing;

namespace {

/// What training leaves: every loss, then every carried tensor.
struct Training {
  std::vector<float> losses;
  std::vector<Tensor> states;
};

/// `steps` steps of `model`'s @train in calls of `k` steps on `threads`
/// threads, from the model's initializers (seed 1) and random batches of
/// `batch` examples (`inputShape` per example, labels below `classes`).
Training train(const std::string &model, unsigned threads, int64_t steps,
               int64_t k, int64_t batch, std::vector<int64_t> inputShape,
               int64_t classes, bool winograd = false) {
  EngineOptions options;
  options.threads = threads;
  options.winograd = winograd;
  auto engine = makeEngine(model, options);
  EXPECT_EQ(engine->threads(), threads);
  std::unique_ptr<Trainer> trainer = unwrap(Trainer::create(*engine, "train"));
  EXPECT_EQ(errorOf(trainer->initialize(1)), "");
  EXPECT_EQ(
      errorOf(trainer->setInput("lr", Tensor::fromValues<float>({}, {1e-3f}))),
      "");
  Training run;
  trainer->setCallback([&](const StepsReport &report) {
    llvm::append_range(run.losses, report.losses);
  });
  // Every step's batch, the same whatever K.
  std::vector<int64_t> allShape = {steps, batch};
  llvm::append_range(allShape, inputShape);
  Tensor all = randomTensor(allShape, 100, 0.0f, 1.0f);
  int64_t example = all.numElements() / (steps * batch);
  for (int64_t first = 0; first < steps; first += k) {
    int64_t count = std::min(k, steps - first);
    std::vector<int64_t> xShape = {count, batch};
    llvm::append_range(xShape, inputShape);
    Tensor x = Tensor::zeros(DType::F32, xShape);
    std::memcpy(x.data(), all.data<float>() + first * batch * example,
                size_t(count * batch * example) * sizeof(float));
    Tensor y = Tensor::zeros(DType::I32, {count, batch});
    for (int64_t i = 0; i < count * batch; ++i)
      y.data<int32_t>()[i] = int32_t((first * batch + i) * 7 % classes);
    EXPECT_EQ(errorOf(trainer->trainSteps({x, y})), "");
  }
  // Copies: a state is a view of the trainer's storage.
  for (const std::string &name : trainer->stateNames()) {
    Tensor state = unwrap(trainer->state(name));
    Tensor copy = Tensor::zeros(state.dtype(), state.shape());
    std::memcpy(copy.data(), state.data(),
                size_t(state.numElements()) * byteWidth(state.dtype()));
    run.states.push_back(std::move(copy));
  }
  return run;
}

bool sameBits(const Tensor &a, const Tensor &b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() &&
         std::memcmp(a.data(), b.data(),
                     size_t(a.numElements()) * byteWidth(a.dtype())) == 0;
}

void expectSameRuns(const Training &expected, const Training &actual,
                    const std::string &what) {
  ASSERT_EQ(expected.losses.size(), actual.losses.size()) << what;
  EXPECT_EQ(std::memcmp(expected.losses.data(), actual.losses.data(),
                        expected.losses.size() * sizeof(float)),
            0)
      << what << ": losses differ";
  ASSERT_EQ(expected.states.size(), actual.states.size()) << what;
  for (auto [i, state] : llvm::enumerate(expected.states))
    EXPECT_TRUE(sameBits(state, actual.states[i]))
        << what << ": state " << i << " differs";
}

TEST(Threads, SeedMlpSameBitsForAnyThreadCountAndK) {
  std::string model = seedTrainingModule();
  Training one = train(model, 1, 12, 4, 64, {28, 28}, 10);
  for (unsigned threads : {2u, 3u, 4u})
    expectSameRuns(one, train(model, threads, 12, 4, 64, {28, 28}, 10),
                   std::to_string(threads) + " threads");
  expectSameRuns(one, train(model, 2, 12, 1, 64, {28, 28}, 10),
                 "2 threads, K = 1");
  expectSameRuns(one, train(model, 3, 12, 5, 64, {28, 28}, 10),
                 "3 threads, K = 5");
}

TEST(Threads, CnnSameBitsForAnyThreadCount) {
  std::string model = readExample("cnn.mlir");
  Training one = train(model, 1, 4, 2, 16, {28, 28, 1}, 10);
  for (unsigned threads : {2u, 3u, 4u})
    expectSameRuns(one, train(model, threads, 4, 2, 16, {28, 28, 1}, 10),
                   std::to_string(threads) + " threads");
}

// Winograd's convolutions run as image loops (the forward one with the
// ReLU, pool and dropout fused in) shared by the threads in blocks of
// images; its filter gradient sums the 16 images in 8 groups of 2 (the
// strategy's, from the shape), partials added in group order.
TEST(Threads, CnnWinogradSameBitsForAnyThreadCount) {
  std::string model = readExample("cnn.mlir");
  Training one = train(model, 1, 4, 2, 16, {28, 28, 1}, 10, true);
  for (unsigned threads : {2u, 3u, 4u})
    expectSameRuns(one, train(model, threads, 4, 2, 16, {28, 28, 1}, 10, true),
                   std::to_string(threads) + " threads, Winograd");
}

/// A linear classifier large enough to be split (256 x 512 weights) with
/// one optimizer.
std::string linearModel(const std::string &optimizer,
                        const std::string &hyperparameters) {
  return R"mlir(
func.func @loss(%w: tensor<512x256xf32>, %b: tensor<256xf32>,
                %x: tensor<?x512xf32>, %y: tensor<?xi32>) -> tensor<f32> {
  %h = fuse.matmul %x, %w : (tensor<?x512xf32>, tensor<512x256xf32>) -> tensor<?x256xf32>
  %o = fuse.add %h, %b : (tensor<?x256xf32>, tensor<256xf32>) -> tensor<?x256xf32>
  %l = fuse.softmax_cross_entropy %o, %y : (tensor<?x256xf32>, tensor<?xi32>) -> tensor<f32>
  return %l : tensor<f32>
}
fuse.train_step @train {loss = @loss, params = array<i64: 0, 1>,
                        optimizer = ")mlir" +
         optimizer + R"mlir(", hyperparameters = )mlir" + hyperparameters +
         "}\n";
}

TEST(Threads, EveryOptimizerSameBitsForAnyThreadCount) {
  struct Case {
    const char *optimizer, *hyperparameters;
  };
  for (Case c :
       {Case{"sgd", "{}"}, Case{"sgd", "{momentum = 0.9 : f64, nesterov}"},
        Case{"adam", "{amsgrad}"},
        Case{"adam", "{weight_decay = 0.01 : f64, decoupled}"},
        Case{"adagrad", "{}"}, Case{"rmsprop", "{}"},
        Case{"lamb", "{weight_decay = 0.01 : f64}"}}) {
    std::string model = linearModel(c.optimizer, c.hyperparameters);
    std::string what = std::string(c.optimizer) + c.hyperparameters;
    Training one = train(model, 1, 6, 3, 32, {512}, 256);
    for (unsigned threads : {2u, 3u, 4u})
      expectSameRuns(one, train(model, threads, 6, 3, 32, {512}, 256),
                     what + ", " + std::to_string(threads) + " threads");
  }
}

/// Parameters of mixed shapes: split into several chunks or one, with
/// rows wider or narrower than a chunk, and innermost dims that the
/// register tile does not divide; some shapes repeat, so that their updates
/// (the same code) are laid end to end and split across them.
const std::vector<std::vector<int64_t>> kMixedShapes = {
    {64, 257}, {8192},  {10000},      {10},  {3, 5, 7}, {10000},
    {4099},    {10000}, {2, 3, 4096}, {128}, {64, 257}, {8192}};

std::string tensorType(const std::vector<int64_t> &shape) {
  std::string type = "tensor<";
  for (int64_t dim : shape)
    type += std::to_string(dim) + "x";
  return type + "f32>";
}

/// @multi updates every parameter of kMixedShapes with one `op` (states
/// per parameter: `states`); @single gives each parameter an op of its own.
/// Both return the parameters, then the states in the op's layout.
std::string updateModule(const std::string &op, const std::string &attrs,
                         unsigned states) {
  size_t n = kMixedShapes.size();
  std::string args = "%lr: tensor<f32>, %step: tensor<i64>";
  std::vector<std::string> types;
  for (const auto &shape : kMixedShapes)
    types.push_back(tensorType(shape));
  auto join = [](const std::vector<std::string> &items) {
    std::string out;
    for (const std::string &item : items)
      out += (out.empty() ? "" : ", ") + item;
    return out;
  };
  std::vector<std::string> p, g, s, pt, st, resultTypes;
  for (size_t i = 0; i < n; ++i) {
    p.push_back("%p" + std::to_string(i));
    g.push_back("%g" + std::to_string(i));
    pt.push_back(types[i]);
  }
  for (unsigned k = 0; k < states; ++k)
    for (size_t i = 0; i < n; ++i) {
      s.push_back("%s" + std::to_string(k) + "_" + std::to_string(i));
      st.push_back(types[i]);
    }
  for (size_t i = 0; i < n; ++i)
    args += ", " + p[i] + ": " + types[i];
  for (size_t i = 0; i < n; ++i)
    args += ", " + g[i] + ": " + types[i];
  for (size_t j = 0; j < s.size(); ++j)
    args += ", " + s[j] + ": " + st[j];
  resultTypes = pt;
  llvm::append_range(resultTypes, st);
  std::string signature = "(" + args + ") -> (" + join(resultTypes) + ")";
  size_t results = n * (1 + states);
  std::string multi = "func.func @multi" + signature +
                      " {\n  %r:" + std::to_string(results) + " = fuse." + op +
                      " %lr, %step params(" + join(p) + " : " + join(pt) +
                      ") grads(" + join(g) + " : " + join(pt) + ") states(" +
                      (s.empty() ? "" : join(s) + " : " + join(st)) + ") " +
                      attrs + " -> " + join(resultTypes) + "\n  return ";
  for (size_t j = 0; j < results; ++j)
    multi += (j ? ", %r#" : "%r#") + std::to_string(j);
  multi += " : " + join(resultTypes) + "\n}\n";
  std::string single = "func.func @single" + signature + " {\n";
  std::vector<std::string> newParams, newStates(s.size());
  for (size_t i = 0; i < n; ++i) {
    std::string r = "%r" + std::to_string(i);
    std::vector<std::string> own, ownTypes, outTypes = {types[i]};
    for (unsigned k = 0; k < states; ++k) {
      own.push_back(s[k * n + i]);
      ownTypes.push_back(types[i]);
      outTypes.push_back(types[i]);
      newStates[k * n + i] = r + "#" + std::to_string(1 + k);
    }
    newParams.push_back(r + "#0");
    single += "  " + r + ":" + std::to_string(1 + states) + " = fuse." + op +
              " %lr, %step params(" + p[i] + " : " + types[i] + ") grads(" +
              g[i] + " : " + types[i] + ") states(" +
              (own.empty() ? "" : join(own) + " : " + join(ownTypes)) + ") " +
              attrs + " -> " + join(outTypes) + "\n";
  }
  llvm::append_range(newParams, newStates);
  single += "  return " + join(newParams) + " : " + join(resultTypes) + "\n}\n";
  return multi + single;
}

// Every optimizer updating many parameters of mixed shapes in one op (its
// updates in chunks that the threads share, in one region) gives bitwise
// the same parameters and states for 1, 2, 3 and 4 threads, and the same
// as one op per parameter.
TEST(Threads, EveryOptimizerOverManyTensorsSameBits) {
  struct Case {
    const char *op, *attrs;
    unsigned states;
  };
  for (Case c :
       {Case{"sgd", "", 0}, Case{"sgd", "{momentum = 0.9 : f64, nesterov}", 1},
        Case{"adam", "{amsgrad}", 3},
        Case{"adam", "{weight_decay = 0.01 : f64, decoupled}", 2},
        Case{"adagrad", "", 1},
        Case{"rmsprop", "{centered, momentum = 0.9 : f64}", 3},
        Case{"lamb", "{weight_decay = 0.01 : f64}", 2}}) {
    std::string what = std::string(c.op) + c.attrs;
    std::string module = updateModule(c.op, c.attrs, c.states);
    std::vector<Tensor> args = {Tensor::fromValues<float>({}, {1e-2f}),
                                Tensor::fromValues<int64_t>({}, {3})};
    unsigned seed = 0;
    for (const auto &shape : kMixedShapes)
      args.push_back(randomTensor(shape, ++seed));
    for (const auto &shape : kMixedShapes)
      args.push_back(randomTensor(shape, ++seed));
    // Non-negative states: second moments and sums of squares.
    for (unsigned k = 0; k < c.states; ++k)
      for (const auto &shape : kMixedShapes)
        args.push_back(randomTensor(shape, ++seed, 0.0f, 1.0f));
    std::vector<Tensor> expected =
        unwrap(unwrap(makeEngine(module)->lookup("single")).call(args));
    for (unsigned threads : {1u, 2u, 3u, 4u}) {
      EngineOptions options;
      options.threads = threads;
      auto engine = makeEngine(module, options);
      std::vector<Tensor> out =
          unwrap(unwrap(engine->lookup("multi")).call(args));
      ASSERT_EQ(out.size(), expected.size()) << what;
      for (size_t j = 0; j < out.size(); ++j)
        EXPECT_TRUE(sameBits(out[j], expected[j]))
            << what << ", " << threads << " threads: result " << j
            << " differs from one op per parameter";
    }
  }
}

constexpr const char *kScale = R"mlir(
func.func @scale(%x: tensor<?x1024xf32>, %a: tensor<f32>) -> tensor<?x1024xf32> {
  %y = fuse.mul %x, %a : (tensor<?x1024xf32>, tensor<f32>) -> tensor<?x1024xf32>
  return %y : tensor<?x1024xf32>
}
)mlir";

// Tall products with a transposed operand (a transformer's gradients): the
// threads share BLIS's blocks of rows (each packs its own rows of A against
// one shared packed block of B), and their 2 rows left over by whole panels.
constexpr const char *kTallProducts = R"mlir(
func.func @products(%a: tensor<2048x512xf32>, %b: tensor<128x512xf32>,
                    %c: tensor<2048x128xf32>) -> (tensor<2048x128xf32>, tensor<512x128xf32>) {
  %x = fuse.matmul %a, %b {transpose_rhs} : (tensor<2048x512xf32>, tensor<128x512xf32>) -> tensor<2048x128xf32>
  %w = fuse.matmul %a, %c {transpose_lhs} : (tensor<2048x512xf32>, tensor<2048x128xf32>) -> tensor<512x128xf32>
  return %x, %w : tensor<2048x128xf32>, tensor<512x128xf32>
}
)mlir";

TEST(Threads, TallPackedProductsSameBitsForAnyThreadCount) {
  Tensor a = randomTensor({2048, 512}, 1, -1.0f, 1.0f);
  Tensor b = randomTensor({128, 512}, 2, -1.0f, 1.0f);
  Tensor c = randomTensor({2048, 128}, 3, -1.0f, 1.0f);
  std::vector<Tensor> first;
  for (unsigned threads : {1u, 2u, 3u, 4u}) {
    EngineOptions options;
    options.threads = threads;
    auto engine = makeEngine(kTallProducts, options);
    Function &f = unwrap(engine->lookup("products"));
    std::vector<Tensor> out = unwrap(f.call({a, b, c}));
    ASSERT_EQ(out.size(), 2u);
    if (first.empty()) {
      // Against sums in double, on rows of every block and the edge:
      // result[i, j] = sum over k of lhs(i, k) rhs(k, j).
      auto expectSums = [](const Tensor &result, const char *name,
                           std::initializer_list<int64_t> rows, int64_t depth,
                           auto lhs, auto rhs, double tolerance) {
        for (int64_t i : rows)
          for (int64_t j : {0, 17, 64, 127}) {
            double sum = 0;
            for (int64_t k = 0; k < depth; ++k)
              sum += double(lhs(i, k)) * rhs(k, j);
            EXPECT_NEAR(result.data<float>()[i * 128 + j], sum, tolerance)
                << name << "[" << i << ", " << j << "]";
          }
      };
      const float *pa = a.data<float>(), *pb = b.data<float>(),
                  *pc = c.data<float>();
      expectSums(
          out[0], "x", {0, 1, 185, 186, 1000, 2045, 2046, 2047}, 512,
          [&](int64_t i, int64_t k) { return pa[i * 512 + k]; },
          [&](int64_t k, int64_t j) { return pb[j * 512 + k]; }, 1e-3);
      expectSums(
          out[1], "w", {0, 5, 101, 102, 300, 509, 510, 511}, 2048,
          [&](int64_t i, int64_t k) { return pa[k * 512 + i]; },
          [&](int64_t k, int64_t j) { return pc[k * 128 + j]; }, 2e-3);
      first = std::move(out);
      continue;
    }
    for (size_t r = 0; r < 2; ++r)
      EXPECT_TRUE(sameBits(first[r], out[r]))
          << "result " << r << " on " << threads << " threads";
  }
}

// Every thread reads denormals as zero and flushes results to zero, as the
// caller does (EngineOptions::flushDenormals): a worker in its own default
// mode would return denormals where the caller's share returns zeros.
TEST(Threads, WorkersComputeInTheCallersFloatingPointMode) {
  Tensor x = Tensor::zeros(DType::F32, {256, 1024});
  for (int64_t i = 0; i < x.numElements(); ++i)
    x.data<float>()[i] = 1e-39f; // a denormal
  Tensor a = Tensor::fromValues<float>({}, {1.0f});
  for (unsigned threads : {1u, 2u, 4u}) {
    EngineOptions options;
    options.threads = threads;
    auto engine = makeEngine(kScale, options);
    Function &f = unwrap(engine->lookup("scale"));
    std::vector<Tensor> out = unwrap(f.call({x, a}));
    for (int64_t i = 0; i < out[0].numElements(); ++i)
      ASSERT_EQ(out[0].data<float>()[i], 0.0f)
          << threads << " threads, element " << i;
  }
}

// Four callers of one engine at once, each call split over threads, get
// what a single caller gets.
TEST(Threads, ConcurrentCallersGetTheSameResults) {
  EngineOptions options;
  options.threads = 2;
  auto engine = makeEngine(kScale, options);
  Function &f = unwrap(engine->lookup("scale"));
  Tensor a = Tensor::fromValues<float>({}, {3.0f});
  std::vector<Tensor> inputs, expected;
  for (unsigned caller = 0; caller < 4; ++caller) {
    inputs.push_back(randomTensor({512, 1024}, caller));
    expected.push_back(unwrap(f.call({inputs.back(), a}))[0]);
  }
  std::vector<std::string> failures(4);
  std::vector<std::thread> callers;
  for (unsigned caller = 0; caller < 4; ++caller)
    callers.emplace_back([&, caller] {
      for (int call = 0; call < 20; ++call) {
        llvm::Expected<std::vector<Tensor>> out = f.call({inputs[caller], a});
        if (!out) {
          failures[caller] = llvm::toString(out.takeError());
          return;
        }
        if (!sameBits((*out)[0], expected[caller])) {
          failures[caller] = "call " + std::to_string(call) + " differs";
          return;
        }
      }
    });
  for (std::thread &caller : callers)
    caller.join();
  for (unsigned caller = 0; caller < 4; ++caller)
    EXPECT_EQ(failures[caller], "") << "caller " << caller;
}

TEST(Threads, ThreadCountComesFromTheEnvironment) {
  const char *saved = std::getenv("FUSE_NUM_THREADS");
  std::string restore = saved ? saved : "";
  setenv("FUSE_NUM_THREADS", "3", 1);
  EXPECT_EQ(unwrap(Engine::create())->threads(), 3u);
  EngineOptions options;
  options.threads = 2; // the option wins
  EXPECT_EQ(unwrap(Engine::create(options))->threads(), 2u);
  for (const char *bad : {"0", "two", "-1", "99999"}) {
    setenv("FUSE_NUM_THREADS", bad, 1);
    std::string error = errorOf(Engine::create());
    EXPECT_NE(error.find("FUSE_NUM_THREADS"), std::string::npos) << bad;
  }
  if (saved)
    setenv("FUSE_NUM_THREADS", restore.c_str(), 1);
  else
    unsetenv("FUSE_NUM_THREADS");
  EXPECT_GE(unwrap(Engine::create())->threads(), 1u);
  options.threads = 5000;
  EXPECT_NE(errorOf(Engine::create(options)).find("EngineOptions::threads"),
            std::string::npos);
}

} // namespace
