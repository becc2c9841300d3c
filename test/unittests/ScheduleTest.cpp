//===- ScheduleTest.cpp - Learning-rate schedules and gradient clipping ---===//
//
// Each schedule's compiled rate against its formula evaluated here, at every
// step of warmup and decay; a scheduled step function bitwise equal to the
// unscheduled one fed that rate, and its K-step companion bitwise equal to
// single steps. Clipping by global norm and by value against a host
// implementation over 50 SGD steps; the overrides of EngineOptions equal to
// the attributes; the parser of --lr-schedule.
//
//===----------------------------------------------------------------------===//

#include "TestUtils.h"

#include "fuse/LrSchedule.h"
#include "fuse/Trainer.h"

#include <algorithm>
#include <functional>

#include <cmath>
#include <cstring>

using namespace fuse;
using namespace fuse::testing;

namespace {

constexpr double kPi = 3.14159265358979323846;

/// A schedule as the attribute spells it, and its formula written here
/// from the documentation (independently of the compiler's).
struct ScheduleCase {
  const char *name;
  const char *attribute;
  std::function<double(int64_t)> factor;
};

double cosineFactor(int64_t t, int64_t warmup, int64_t decay, double min) {
  if (t < warmup)
    return double(t) / double(warmup);
  double progress = double(std::min(t - warmup, decay)) / double(decay);
  return min + (1 - min) * (0.5 * (1 + std::cos(kPi * progress)));
}

std::vector<ScheduleCase> scheduleCases() {
  return {
      {"constant", "#fuse.lr_schedule<constant>", [](int64_t) { return 1.0; }},
      {"warmup", "#fuse.lr_schedule<constant, warmup = 7>",
       [](int64_t t) { return t < 7 ? double(t) / 7 : 1.0; }},
      {"step", "#fuse.lr_schedule<step, decay_steps = 4, gamma = 0.5>",
       [](int64_t t) { return std::pow(0.5, double(t / 4)); }},
      {"exponential",
       "#fuse.lr_schedule<exponential, warmup = 3, decay_steps = 5, gamma = "
       "0.3>",
       [](int64_t t) {
         return t < 3 ? double(t) / 3 : std::pow(0.3, double(t - 3) / 5);
       }},
      {"cosine",
       "#fuse.lr_schedule<cosine, warmup = 5, decay_steps = 20, min = 0.1>",
       [](int64_t t) { return cosineFactor(t, 5, 20, 0.1); }},
      {"cosine_no_warmup", "#fuse.lr_schedule<cosine, decay_steps = 13>",
       [](int64_t t) { return cosineFactor(t, 0, 13, 0.0); }},
      {"linear",
       "#fuse.lr_schedule<linear, warmup = 2, decay_steps = 10, min = 0.25>",
       [](int64_t t) {
         if (t < 2)
           return double(t) / 2;
         return 1 - 0.75 * (double(std::min<int64_t>(t - 2, 10)) / 10);
       }},
  };
}

/// The rate the schedule gives at step `t` for the base rate `lr`: the
/// product in f64, rounded to f32 once.
float referenceRate(const ScheduleCase &c, float lr, int64_t t) {
  return float(double(lr) * c.factor(t));
}

class Schedules : public ::testing::TestWithParam<ScheduleCase> {};

// fuse.lr_schedule compiled alone: the rate at every step from 0 through
// the warmup, the decay and past its end (and at a step far beyond) is the
// formula's, bitwise.
TEST_P(Schedules, RateMatchesTheFormulaAtEveryStep) {
  const ScheduleCase &c = GetParam();
  std::string source = std::string(R"mlir(
func.func @rate(%lr: tensor<f32>, %step: tensor<i64>) -> tensor<f32> {
  %r = fuse.lr_schedule %lr, %step {schedule = )mlir") +
                       c.attribute + R"mlir(}
  return %r : tensor<f32>
}
)mlir";
  auto engine = makeEngine(source);
  Function &rate = unwrap(engine->lookup("rate"));
  const float lr = 0.037f;
  std::vector<int64_t> steps;
  for (int64_t t = 0; t < 40; ++t)
    steps.push_back(t);
  steps.push_back(1000003);
  for (int64_t t : steps) {
    std::vector<Tensor> out =
        unwrap(rate.call({Tensor::fromValues<float>({}, {lr}),
                          Tensor::fromValues<int64_t>({}, {t})}));
    float expected = referenceRate(c, lr, t);
    float got = out[0].data<float>()[0];
    EXPECT_EQ(std::memcmp(&got, &expected, sizeof(float)), 0)
        << c.name << " at step " << t << ": " << got << " vs " << expected;
  }
}

/// A dense layer with dropout (the step counter reaches the loss too),
/// trained by `optimizer` with `extra` attributes on its train_step; and the
/// same step without them.
std::string trainModule(llvm::StringRef optimizer, llvm::StringRef extra) {
  std::string attrs = extra.empty() ? "" : (", " + extra).str();
  return (R"mlir(
func.func @loss(%w: tensor<6x4xf32>, %b: tensor<4xf32>, %x: tensor<?x6xf32>,
                %y: tensor<?xi32>, %step: tensor<i64>) -> tensor<f32> {
  %h = fuse.matmul %x, %w : (tensor<?x6xf32>, tensor<6x4xf32>) -> tensor<?x4xf32>
  %o = fuse.add %h, %b : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  %d = fuse.dropout %o, %step {rate = 0.25 : f32, seed = 3 : i64} : tensor<?x4xf32>
  %l = fuse.softmax_cross_entropy %d, %y : (tensor<?x4xf32>, tensor<?xi32>) -> tensor<f32>
  return %l : tensor<f32>
}
fuse.train_step @train {loss = @loss, params = array<i64: 0, 1>, optimizer = ")mlir" +
          optimizer + R"mlir(", step_arg = 4)mlir" + attrs + R"mlir(}
fuse.train_step @plain {loss = @loss, params = array<i64: 0, 1>, optimizer = ")mlir" +
          optimizer + R"mlir(", step_arg = 4}
)mlir")
      .str();
}

using namespace fuse::testing::tiny;

constexpr float kRate = 0.05f;

/// `n` single calls of `fn` from `state`, each given the rate `rate(t)`.
std::vector<float> singleSteps(Function &fn, int64_t n,
                               std::vector<Tensor> &state,
                               const std::function<float(int64_t)> &rate) {
  std::vector<float> losses;
  for (int64_t t = 0; t < n; ++t) {
    std::vector<Tensor> args(state);
    llvm::append_range(
        args, std::vector<Tensor>{batchX(t), batchY(t),
                                  Tensor::fromValues<float>({}, {rate(t)}),
                                  Tensor::fromValues<int64_t>({}, {t})});
    losses.push_back(unwrap(fn.call(args))[0].data<float>()[0]);
  }
  return losses;
}

void expectSameBits(llvm::ArrayRef<Tensor> a, llvm::ArrayRef<Tensor> b,
                    const std::string &what) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t j = 0; j < a.size(); ++j)
    EXPECT_EQ(std::memcmp(a[j].data(), b[j].data(),
                          a[j].numElements() * byteWidth(a[j].dtype())),
              0)
        << what << ": tensor " << j;
}

// Adam under each schedule, 30 steps: the scheduled step function equals
// the unscheduled one fed the formula's rate at each step, bitwise (so the
// optimizer sees exactly that rate); and a Trainer calling the K-step
// function in chunks of 4 and 7 ends bitwise where single steps end, its
// losses the same.
TEST_P(Schedules, StepsSeeTheScheduledRateAndKStepsMatchSingleSteps) {
  const ScheduleCase &c = GetParam();
  const int64_t n = 30;
  auto engine = makeEngine(
      trainModule("adam", (llvm::Twine("lr_schedule = ") + c.attribute).str()));
  std::vector<Tensor> scheduled = initialState();
  std::vector<float> losses =
      singleSteps(unwrap(engine->lookup("train")), n, scheduled,
                  [](int64_t) { return kRate; });
  std::vector<Tensor> fed = initialState();
  std::vector<float> fedLosses =
      singleSteps(unwrap(engine->lookup("plain")), n, fed,
                  [&](int64_t t) { return referenceRate(c, kRate, t); });
  EXPECT_EQ(std::memcmp(losses.data(), fedLosses.data(), n * sizeof(float)), 0);
  expectSameBits(scheduled, fed, c.name);

  for (int64_t k : {4, 7}) {
    std::unique_ptr<Trainer> trainer =
        unwrap(Trainer::create(*engine, "train"));
    std::vector<Tensor> init = initialState();
    ASSERT_FALSE(bool(trainer->setState("w", init[0])));
    ASSERT_FALSE(bool(trainer->setState("b", init[1])));
    ASSERT_FALSE(
        bool(trainer->setInput("lr", Tensor::fromValues<float>({}, {kRate}))));
    std::vector<float> chunked;
    trainer->setCallback([&](const StepsReport &report) {
      llvm::append_range(chunked, report.losses);
    });
    for (int64_t first = 0; first < n; first += k) {
      int64_t count = std::min(k, n - first);
      ASSERT_EQ(errorOf(trainer->trainSteps({stack(first, count, batchX),
                                             stack(first, count, batchY)})),
                "");
    }
    ASSERT_EQ(chunked.size(), size_t(n));
    EXPECT_EQ(std::memcmp(chunked.data(), losses.data(), n * sizeof(float)), 0)
        << c.name << ", K = " << k;
    std::vector<Tensor> states;
    for (llvm::StringRef name : trainer->stateNames())
      states.push_back(unwrap(trainer->state(name)));
    expectSameBits(states, scheduled,
                   std::string(c.name) + ", K = " + std::to_string(k));
  }
}

INSTANTIATE_TEST_SUITE_P(
    All, Schedules, ::testing::ValuesIn(scheduleCases()),
    [](const ::testing::TestParamInfo<ScheduleCase> &info) {
      return std::string(info.param.name);
    });

// EngineOptions::trainStep sets the schedule and clipping on a module's
// train_steps: the same bits as the attributes written in the module. A
// constant schedule without warmup changes nothing.
TEST(ScheduleOverrides, MatchTheAttributes) {
  const int64_t n = 12;
  auto written = makeEngine(
      trainModule("adam", "lr_schedule = #fuse.lr_schedule<cosine, warmup = 3, "
                          "decay_steps = 8, min = 0.2>, clip_norm = 0.5 : f64, "
                          "clip_value = 0.05 : f64"));
  EngineOptions options;
  LrSchedule schedule;
  schedule.kind = LrScheduleKind::Cosine;
  schedule.warmup = 3;
  schedule.decaySteps = 8;
  schedule.min = 0.2;
  options.trainStep.lrSchedule = schedule;
  options.trainStep.clipNorm = 0.5;
  options.trainStep.clipValue = 0.05;
  auto overridden = makeEngine(trainModule("adam", ""), options);
  auto constant = [](int64_t) { return kRate; };
  std::vector<Tensor> a = initialState(), b = initialState(),
                      plain = initialState();
  std::vector<float> la =
      singleSteps(unwrap(written->lookup("train")), n, a, constant);
  std::vector<float> lb =
      singleSteps(unwrap(overridden->lookup("train")), n, b, constant);
  EXPECT_EQ(std::memcmp(la.data(), lb.data(), n * sizeof(float)), 0);
  expectSameBits(a, b, "overridden");
  // The override reached every train_step (@plain too), and it changes the
  // training: a test of the override that could not fail otherwise.
  std::vector<Tensor> c = initialState();
  singleSteps(unwrap(overridden->lookup("plain")), n, c, constant);
  expectSameBits(c, b, "@plain overridden");
  singleSteps(unwrap(written->lookup("plain")), n, plain, constant);
  EXPECT_NE(std::memcmp(plain[0].data(), a[0].data(), 24 * sizeof(float)), 0);

  auto identity = makeEngine(
      trainModule("sgd", "lr_schedule = #fuse.lr_schedule<constant>"));
  std::vector<Tensor> p = {randomTensor({6, 4}, 1), randomTensor({4}, 2)};
  std::vector<Tensor> q = {randomTensor({6, 4}, 1), randomTensor({4}, 2)};
  singleSteps(unwrap(identity->lookup("train")), n, p, constant);
  singleSteps(unwrap(identity->lookup("plain")), n, q, constant);
  expectSameBits(p, q, "constant schedule");
}

TEST(ScheduleOverrides, InvalidOnesAreErrors) {
  EngineOptions options;
  options.diskCache = false;
  LrSchedule schedule;
  schedule.kind = LrScheduleKind::Cosine;
  schedule.warmup = -1;
  schedule.decaySteps = 10;
  options.trainStep.lrSchedule = schedule;
  std::unique_ptr<Engine> engine = unwrap(Engine::create(options));
  EXPECT_EQ(errorOf(engine->loadString(trainModule("sgd", ""))),
            "invalid lr_schedule: warmup must be at least 0, got -1");
  options.trainStep.lrSchedule.reset();
  options.trainStep.clipNorm = 0;
  engine = unwrap(Engine::create(options));
  EXPECT_EQ(errorOf(engine->loadString(trainModule("sgd", ""))),
            "clip_norm must be a finite number above 0, got 0");
}

TEST(ScheduleParser, ParsesSpecsAndNamesTheOptionInErrors) {
  LrSchedule s =
      unwrap(parseLrSchedule("cosine:warmup=100,steps=5000,min=0.1"));
  EXPECT_EQ(s.kind, LrScheduleKind::Cosine);
  EXPECT_EQ(s.warmup, 100);
  EXPECT_EQ(s.decaySteps, 5000);
  EXPECT_EQ(s.min, 0.1);
  EXPECT_FALSE(s.gamma);
  s = unwrap(parseLrSchedule("step:decay_steps=30,gamma=0.5"));
  EXPECT_EQ(s.kind, LrScheduleKind::Step);
  EXPECT_EQ(s.decaySteps, 30);
  EXPECT_EQ(s.gamma, 0.5);
  s = unwrap(parseLrSchedule("constant"));
  EXPECT_EQ(s.kind, LrScheduleKind::Constant);
  EXPECT_EQ(errorOf(parseLrSchedule("cosine:warmup=-100,steps=5000")),
            "invalid --lr-schedule 'cosine:warmup=-100,steps=5000': warmup "
            "must be at least 0, got -100");
  EXPECT_EQ(errorOf(parseLrSchedule("onecycle")),
            "invalid --lr-schedule 'onecycle': unknown schedule 'onecycle' "
            "(constant, step, exponential, cosine or linear)");
  EXPECT_EQ(errorOf(parseLrSchedule("cosine:steps=10,gamma=0.5")),
            "invalid --lr-schedule 'cosine:steps=10,gamma=0.5': 'cosine' "
            "takes no gamma (step and exponential do)");
  EXPECT_EQ(errorOf(parseLrSchedule("cosine")),
            "invalid --lr-schedule 'cosine': 'cosine' needs decay_steps of at "
            "least 1, got 0");
  EXPECT_EQ(errorOf(parseLrSchedule("step:steps=ten")),
            "invalid --lr-schedule 'step:steps=ten': steps 'ten' is not an "
            "integer");
  EXPECT_EQ(errorOf(parseLrSchedule("step:steps=10,foo=1")),
            "invalid --lr-schedule 'step:steps=10,foo=1': unknown key 'foo' "
            "(warmup, steps, gamma, min)");
  EXPECT_EQ(errorOf(parseLrSchedule("linear:steps=10,min=2")),
            "invalid --lr-schedule 'linear:steps=10,min=2': min must be in "
            "[0, 1]");
}

//===----------------------------------------------------------------------===//
// Gradient clipping against a host implementation
//===----------------------------------------------------------------------===//

/// Linear regression, mean squared error, SGD: gradients easy to write on
/// the host.
constexpr const char *kRegression = R"mlir(
func.func @loss(%w: tensor<4x3xf32>, %b: tensor<3xf32>, %x: tensor<8x4xf32>,
                %y: tensor<8x3xf32>) -> tensor<f32> {
  %h = fuse.matmul %x, %w : (tensor<8x4xf32>, tensor<4x3xf32>) -> tensor<8x3xf32>
  %p = fuse.add %h, %b : (tensor<8x3xf32>, tensor<3xf32>) -> tensor<8x3xf32>
  %l = fuse.mse_loss %p, %y : (tensor<8x3xf32>, tensor<8x3xf32>) -> tensor<f32>
  return %l : tensor<f32>
}
)mlir";

struct ClipCase {
  const char *name;
  std::optional<double> clipNorm, clipValue;
};

class Clipping : public ::testing::TestWithParam<ClipCase> {};

// 50 SGD steps (lr 0.1) with clipping: parameters and losses within 1e-5
// (relative to their scale) of a double-precision host implementation of
// PyTorch's clip_grad_norm_ and clip_grad_value_; the clipping is active
// at most steps, so a step that ignored it would fail.
TEST_P(Clipping, MatchesAHostImplementationOver50Steps) {
  const ClipCase &c = GetParam();
  std::string attrs;
  if (c.clipNorm)
    attrs += ", clip_norm = " + std::to_string(*c.clipNorm) + " : f64";
  if (c.clipValue)
    attrs += ", clip_value = " + std::to_string(*c.clipValue) + " : f64";
  auto engine = makeEngine(
      std::string(kRegression) +
      "fuse.train_step @train {loss = @loss, params = array<i64: 0, 1>, "
      "optimizer = \"sgd\"" +
      attrs + "}\n");
  Function &train = unwrap(engine->lookup("train"));
  const float lr = 0.1f;
  Tensor w = randomTensor({4, 3}, 11), b = randomTensor({3}, 12);
  std::vector<double> hw(w.data<float>(), w.data<float>() + 12);
  std::vector<double> hb(b.data<float>(), b.data<float>() + 3);
  int clippedSteps = 0;
  for (int64_t t = 0; t < 50; ++t) {
    // Targets far from the start: large gradients, which the clip bounds.
    Tensor x = randomTensor({8, 4}, 200 + t);
    Tensor y = randomTensor({8, 3}, 300 + t, 2.0f, 6.0f);
    const float *xs = x.data<float>(), *ys = y.data<float>();
    // Host: d loss / d pred = 2 (pred - y) / 24.
    std::vector<double> gw(12, 0.0), gb(3, 0.0);
    double loss = 0;
    for (int r = 0; r < 8; ++r)
      for (int j = 0; j < 3; ++j) {
        double pred = hb[j];
        for (int i = 0; i < 4; ++i)
          pred += double(xs[r * 4 + i]) * hw[i * 3 + j];
        double diff = pred - double(ys[r * 3 + j]);
        loss += diff * diff / 24;
        double d = 2 * diff / 24;
        gb[j] += d;
        for (int i = 0; i < 4; ++i)
          gw[i * 3 + j] += double(xs[r * 4 + i]) * d;
      }
    if (c.clipNorm) {
      double sum = 0;
      for (double g : gw)
        sum += g * g;
      for (double g : gb)
        sum += g * g;
      double scale = std::min(1.0, *c.clipNorm / (std::sqrt(sum) + 1e-6));
      clippedSteps += scale < 1.0;
      for (double &g : gw)
        g *= scale;
      for (double &g : gb)
        g *= scale;
    }
    if (c.clipValue) {
      bool clamped = false;
      for (std::vector<double> *gs : {&gw, &gb})
        for (double &g : *gs) {
          clamped |= std::abs(g) > *c.clipValue;
          g = std::clamp(g, -*c.clipValue, *c.clipValue);
        }
      clippedSteps += clamped && !c.clipNorm;
    }
    for (int i = 0; i < 12; ++i)
      hw[i] -= double(lr) * gw[i];
    for (int j = 0; j < 3; ++j)
      hb[j] -= double(lr) * gb[j];

    std::vector<Tensor> out =
        unwrap(train.call({w, b, x, y, Tensor::fromValues<float>({}, {lr}),
                           Tensor::fromValues<int64_t>({}, {t})}));
    EXPECT_NEAR(out[0].data<float>()[0], loss, 1e-5 * std::max(1.0, loss))
        << c.name << ": loss of step " << t;
  }
  EXPECT_GE(clippedSteps, 25) << c.name;
  for (int i = 0; i < 12; ++i)
    EXPECT_NEAR(w.data<float>()[i], hw[i],
                1e-5 * std::max(1.0, std::abs(hw[i])))
        << c.name << ": w[" << i << "]";
  for (int j = 0; j < 3; ++j)
    EXPECT_NEAR(b.data<float>()[j], hb[j],
                1e-5 * std::max(1.0, std::abs(hb[j])))
        << c.name << ": b[" << j << "]";
}

INSTANTIATE_TEST_SUITE_P(All, Clipping,
                         ::testing::Values(ClipCase{"norm", 0.5, std::nullopt},
                                           ClipCase{"value", std::nullopt, 0.1},
                                           ClipCase{"norm_and_value", 1.0,
                                                    0.2}),
                         [](const ::testing::TestParamInfo<ClipCase> &info) {
                           return std::string(info.param.name);
                         });

// Fused and unfused (EngineOptions::fusion = false), clipping gives the
// same bits: one code path for both.
TEST(Clipping, FusedAndUnfusedAgreeBitwise) {
  std::string source =
      std::string(kRegression) +
      "fuse.train_step @train {loss = @loss, params = array<i64: 0, 1>, "
      "optimizer = \"adam\", clip_norm = 0.3 : f64, clip_value = 0.05 : f64}\n";
  EngineOptions unfused;
  unfused.fusion = false;
  auto a = makeEngine(source), b = makeEngine(source, unfused);
  std::vector<Tensor> sa = {randomTensor({4, 3}, 1), randomTensor({3}, 2)};
  for (int k = 0; k < 4; ++k) {
    std::vector<int64_t> shape =
        k % 2 ? std::vector<int64_t>{3} : std::vector<int64_t>{4, 3};
    sa.push_back(Tensor::zeros(DType::F32, shape));
  }
  std::vector<Tensor> sb;
  for (const Tensor &t : sa)
    sb.push_back(t.contiguousCopy());
  for (int64_t t = 0; t < 10; ++t) {
    std::vector<Tensor> tail = {randomTensor({8, 4}, 200 + t),
                                randomTensor({8, 3}, 300 + t, 2.0f, 6.0f),
                                Tensor::fromValues<float>({}, {0.01f}),
                                Tensor::fromValues<int64_t>({}, {t})};
    std::vector<Tensor> args(sa), argsB(sb);
    llvm::append_range(args, tail);
    llvm::append_range(argsB, tail);
    unwrap(unwrap(a->lookup("train")).call(args));
    unwrap(unwrap(b->lookup("train")).call(argsB));
  }
  expectSameBits(sa, sb, "fused vs unfused");
}

} // namespace
