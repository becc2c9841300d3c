//===- InitializerTest.cpp - fuse::Initializer and Trainer::initialize ----===//
//
// The initializers draw what Keras' do: bounds and moments of each scheme
// (Glorot and He fans of a matrix and of an HWIO filter, truncation at 2
// stddevs), exact constants, the same tensors for the same seed. The
// Trainer starts every parameter and optimizer state as its step function's
// `fuse.init` says.
//
//===----------------------------------------------------------------------===//

#include "TestUtils.h"

#include "fuse/Initializer.h"
#include "fuse/Trainer.h"

#include <algorithm>
#include <cmath>
#include <cstring>

using namespace fuse;
using namespace fuse::testing;

namespace {

using Kind = Initializer::Kind;

/// The stddev of a standard normal truncated at +-2.
constexpr double kTruncatedStddev = 0.87962566103423978;
/// Float rounding of a value at a bound.
constexpr double kSlack = 1 + 1e-6;

struct Moments {
  double mean = 0, stddev = 0, maxAbs = 0;
};

/// Sample mean, stddev and largest magnitude of a contiguous f32 tensor.
Moments moments(const Tensor &t) {
  const float *v = t.data<float>();
  int64_t n = t.numElements();
  Moments m;
  for (int64_t i = 0; i < n; ++i) {
    m.mean += v[i];
    m.maxAbs = std::max(m.maxAbs, std::fabs(double(v[i])));
  }
  m.mean /= double(n);
  double sq = 0;
  for (int64_t i = 0; i < n; ++i)
    sq += (v[i] - m.mean) * (v[i] - m.mean);
  m.stddev = std::sqrt(sq / double(n - 1));
  return m;
}

Tensor draw(Initializer init, llvm::ArrayRef<int64_t> shape, uint64_t seed = 1,
            DType dtype = DType::F32) {
  Tensor t = unwrap(init.create(dtype, shape, seed));
  EXPECT_EQ(t.dtype(), dtype);
  EXPECT_EQ(t.shape(), shape);
  return t;
}

bool sameBytes(const Tensor &a, const Tensor &b) {
  return a.numElements() == b.numElements() &&
         std::memcmp(a.data(), b.data(),
                     a.numElements() * byteWidth(a.dtype())) == 0;
}

TEST(Initializer, SameSeedSameTensorsOtherSeedOthers) {
  for (Initializer init :
       {Initializer{Kind::GlorotUniform, 0}, Initializer{Kind::Normal, 0.05},
        Initializer{Kind::HeNormal, 0}}) {
    Tensor a = draw(init, {64, 32}, 1);
    EXPECT_TRUE(sameBytes(a, draw(init, {64, 32}, 1))) << init.str();
    EXPECT_FALSE(sameBytes(a, draw(init, {64, 32}, 2))) << init.str();
  }
}

// limit = sqrt(6 / (784 + 128)): uniform in [-limit, limit], so mean 0 and
// variance limit^2 / 3 (over 100352 draws: within about 6 standard errors).
TEST(Initializer, GlorotUniformOfAMatrix) {
  double limit = std::sqrt(6.0 / 912);
  Moments m = moments(draw({Kind::GlorotUniform, 0}, {784, 128}));
  EXPECT_LE(m.maxAbs, limit * kSlack);
  EXPECT_GT(m.maxAbs, 0.999 * limit);
  EXPECT_NEAR(m.mean, 0, 0.01 * limit);
  EXPECT_NEAR(m.stddev * m.stddev, limit * limit / 3, 0.02 * limit * limit / 3);
}

// Normals truncated at 2 stddevs of sqrt(2 / fan) / 0.8796, whose stddev is
// then sqrt(2 / fan): fan_in for He, fan_in + fan_out for Glorot.
TEST(Initializer, TruncatedNormalsOfAMatrix) {
  struct Case {
    Kind kind;
    int64_t in, out;
    double fan;
  } cases[] = {{Kind::HeNormal, 784, 128, 784},
               {Kind::GlorotNormal, 256, 512, 768}};
  for (const Case &c : cases) {
    Initializer init{c.kind, 0};
    double expected = std::sqrt(2.0 / c.fan);
    double bound = 2 * expected / kTruncatedStddev;
    Moments m = moments(draw(init, {c.in, c.out}));
    EXPECT_LE(m.maxAbs, bound * kSlack) << init.str();
    EXPECT_GT(m.maxAbs, 0.99 * bound) << init.str();
    EXPECT_NEAR(m.mean, 0, 0.02 * expected) << init.str();
    EXPECT_NEAR(m.stddev, expected, 0.02 * expected) << init.str();
  }
}

// A [3, 3, 1, 32] filter: fan_in 3 * 3 * 1 = 9, fan_out 3 * 3 * 32 = 288.
TEST(Initializer, FansOfAFilter) {
  double glorot = std::sqrt(6.0 / (9 + 288));
  Moments m = moments(draw({Kind::GlorotUniform, 0}, {3, 3, 1, 32}));
  EXPECT_LE(m.maxAbs, glorot * kSlack);
  EXPECT_GT(m.maxAbs, 0.95 * glorot);
  double he = std::sqrt(6.0 / 9);
  m = moments(draw({Kind::HeUniform, 0}, {3, 3, 1, 32}));
  EXPECT_LE(m.maxAbs, he * kSlack);
  EXPECT_GT(m.maxAbs, 0.95 * he);
}

TEST(Initializer, ConstantsAreExact) {
  struct Case {
    Initializer init;
    float value;
  } cases[] = {{{Kind::Zeros, 0}, 0.0f},
               {{Kind::Ones, 0}, 1.0f},
               {{Kind::Constant, -2.5}, -2.5f},
               {{Kind::Constant, 0.1}, 0.1f}};
  for (const Case &c : cases) {
    Tensor t = draw(c.init, {5, 7});
    for (int64_t i = 0; i < t.numElements(); ++i)
      ASSERT_EQ(t.data<float>()[i], c.value) << c.init.str() << " at " << i;
  }
}

// Not truncated: among 100000 draws some lie beyond 3 stddevs.
TEST(Initializer, NormalHasItsStddev) {
  Moments m = moments(draw({Kind::Normal, 0.5}, {100000}));
  EXPECT_NEAR(m.mean, 0, 0.02 * 0.5);
  EXPECT_NEAR(m.stddev, 0.5, 0.02 * 0.5);
  EXPECT_GT(m.maxAbs, 3 * 0.5);
}

TEST(Initializer, UniformHasItsLimit) {
  Moments m = moments(draw({Kind::Uniform, 0.25}, {100000}));
  EXPECT_LE(m.maxAbs, 0.25 * kSlack);
  EXPECT_GT(m.maxAbs, 0.999 * 0.25);
  EXPECT_NEAR(m.stddev, 0.25 / std::sqrt(3.0), 0.02 * 0.25 / std::sqrt(3.0));
}

// f64 draws the same values, unrounded: f32 gets each of them rounded.
TEST(Initializer, F64DrawsTheSameValuesUnrounded) {
  for (Initializer init :
       {Initializer{Kind::GlorotUniform, 0}, Initializer{Kind::HeNormal, 0}}) {
    Tensor f = draw(init, {64, 32}, 5, DType::F32);
    Tensor d = draw(init, {64, 32}, 5, DType::F64);
    int64_t unrounded = 0;
    for (int64_t i = 0; i < d.numElements(); ++i) {
      double v = d.data<double>()[i];
      ASSERT_EQ(float(v), f.data<float>()[i]) << init.str() << " at " << i;
      unrounded += double(float(v)) != v;
    }
    EXPECT_GT(unrounded, 0) << init.str();
  }
}

TEST(Initializer, IntegerTensorsAreAnError) {
  Initializer init{Kind::GlorotUniform, 0};
  EXPECT_EQ(errorOf(init.create(DType::I32, {4, 4}, 0)),
            "cannot initialize a tensor of i32 (glorot_uniform): only f32 "
            "and f64");
}

TEST(Initializer, Spellings) {
  EXPECT_EQ((Initializer{Kind::Zeros, 0}).str(), "zeros");
  EXPECT_EQ((Initializer{Kind::Ones, 0}).str(), "ones");
  EXPECT_EQ((Initializer{Kind::Constant, 0.1}).str(),
            "constant, value = 1.000000e-01");
  EXPECT_EQ((Initializer{Kind::Uniform, 0.05}).str(),
            "uniform, limit = 5.000000e-02");
  EXPECT_EQ((Initializer{Kind::Normal, 0.5}).str(),
            "normal, stddev = 5.000000e-01");
  EXPECT_EQ((Initializer{Kind::GlorotUniform, 0}).str(), "glorot_uniform");
  EXPECT_EQ((Initializer{Kind::GlorotNormal, 0}).str(), "glorot_normal");
  EXPECT_EQ((Initializer{Kind::HeUniform, 0}).str(), "he_uniform");
  EXPECT_EQ((Initializer{Kind::HeNormal, 0}).str(), "he_normal");
}

/// An owning copy of the trainer's state `name` (state() is a view of a
/// buffer initialize() replaces).
Tensor stateCopy(const Trainer &trainer, llvm::StringRef name) {
  return unwrap(trainer.state(name)).contiguousCopy();
}

bool allEqual(const Tensor &t, float value) {
  for (int64_t i = 0; i < t.numElements(); ++i)
    if (t.data<float>()[i] != value)
      return false;
  return true;
}

// The seed MLP declares no initializer: Glorot-uniform weights, zero
// biases, zero Adam moments.
TEST(TrainerInitialize, SeedMlpStartsAsKeras) {
  auto engine = makeEngine(seedTrainingModule());
  std::unique_ptr<Trainer> trainer = unwrap(Trainer::create(*engine, "train"));
  double limit1 = std::sqrt(6.0 / (784 + 128));
  Moments w1 = moments(stateCopy(*trainer, "w1"));
  EXPECT_LE(w1.maxAbs, limit1 * kSlack);
  EXPECT_GT(w1.maxAbs, 0.99 * limit1);
  double limit2 = std::sqrt(6.0 / (128 + 10));
  Moments w2 = moments(stateCopy(*trainer, "w2"));
  EXPECT_LE(w2.maxAbs, limit2 * kSlack);
  EXPECT_GT(w2.maxAbs, 0.9 * limit2);
  EXPECT_TRUE(allEqual(stateCopy(*trainer, "b1"), 0));
  EXPECT_TRUE(allEqual(stateCopy(*trainer, "b2"), 0));
  int states = 0;
  for (const std::string &name : trainer->stateNames())
    if (llvm::StringRef(name).contains(".state")) {
      ++states;
      EXPECT_TRUE(allEqual(stateCopy(*trainer, name), 0)) << name;
    }
  EXPECT_EQ(states, 8);
}

TEST(TrainerInitialize, SameSeedSameParameters) {
  auto engine = makeEngine(seedTrainingModule());
  std::unique_ptr<Trainer> trainer = unwrap(Trainer::create(*engine, "train"));
  ASSERT_EQ(errorOf(trainer->initialize(7)), "");
  Tensor first = stateCopy(*trainer, "w1");
  ASSERT_EQ(errorOf(trainer->initialize(7)), "");
  EXPECT_TRUE(sameBytes(first, stateCopy(*trainer, "w1")));
  ASSERT_EQ(errorOf(trainer->initialize(8)), "");
  EXPECT_FALSE(sameBytes(first, stateCopy(*trainer, "w1")));
}

constexpr const char *kAdagradModule = R"mlir(
func.func @loss(%w: tensor<3x2xf32>, %b: tensor<2xf32> {fuse.init = #fuse.init<ones>},
                %x: tensor<?x3xf32>, %y: tensor<?xi32>) -> tensor<f32> {
  %h = fuse.matmul %x, %w : (tensor<?x3xf32>, tensor<3x2xf32>) -> tensor<?x2xf32>
  %o = fuse.add %h, %b : (tensor<?x2xf32>, tensor<2xf32>) -> tensor<?x2xf32>
  %l = fuse.softmax_cross_entropy %o, %y : (tensor<?x2xf32>, tensor<?xi32>) -> tensor<f32>
  return %l : tensor<f32>
}
fuse.train_step @train {loss = @loss, params = array<i64: 0, 1>, optimizer = "adagrad",
                        hyperparameters = {initial_accumulator_value = 0.1 : f64}}
)mlir";

// The step function's arguments report their initializers; the Trainer
// starts each from it: Adagrad's accumulators at 0.1, the declared ones.
TEST(TrainerInitialize, AdagradAccumulatorsStartAtTheirValue) {
  auto engine = makeEngine(kAdagradModule);
  llvm::ArrayRef<ArgumentInfo> args =
      unwrap(engine->lookup("train")).arguments();
  ASSERT_EQ(args.size(), 8u); // w, b, w.state0, b.state0, x, y, lr, step
  std::vector<std::pair<std::string, Kind>> kinds = {
      {"w", Kind::GlorotUniform},
      {"b", Kind::Ones},
      {"w.state0", Kind::Constant},
      {"b.state0", Kind::Constant}};
  for (size_t i = 0; i < kinds.size(); ++i) {
    EXPECT_EQ(args[i].name, kinds[i].first);
    ASSERT_TRUE(args[i].init.has_value()) << args[i].name;
    EXPECT_EQ(args[i].init->kind, kinds[i].second) << args[i].name;
  }
  EXPECT_EQ(args[2].init->scale, 0.1);
  for (size_t i = 4; i < args.size(); ++i)
    EXPECT_FALSE(args[i].init.has_value()) << args[i].name;

  std::unique_ptr<Trainer> trainer = unwrap(Trainer::create(*engine, "train"));
  EXPECT_TRUE(allEqual(stateCopy(*trainer, "w.state0"), 0.1f));
  EXPECT_TRUE(allEqual(stateCopy(*trainer, "b.state0"), 0.1f));
  EXPECT_TRUE(allEqual(stateCopy(*trainer, "b"), 1.0f));
  EXPECT_FALSE(allEqual(stateCopy(*trainer, "w"), 0.0f));
}

} // namespace
