//===- SeedMlpTest.cpp - The seed MLP against training in plain C++ -------===//
//
// examples/mlp.mlir trained for 200 Adam steps (dropout on) through the
// Trainer, 8 steps per call, against the same training written out by hand:
// forward, backward and Adam in double precision, with the dropout mask
// from Fuse/IR/DropoutRNG.h. Fuse computes in f32, so the two drift apart
// by rounding only: every loss (about 2.4 falling to 2.1) within 1e-4,
// every parameter (of order 0.1) within 1e-4. Measured: 2.5e-6 and 9.5e-6.
//
//===----------------------------------------------------------------------===//

#include "TestUtils.h"

#include "Fuse/IR/DropoutRNG.h"
#include "fuse/Trainer.h"

#include <cmath>

using namespace fuse;
using namespace fuse::testing;

namespace {

constexpr int64_t kIn = 784, kHidden = 128, kOut = 10, kBatch = 16;
constexpr int64_t kSteps = 200, kPerCall = 8;
constexpr double kLearningRate = 1e-3, kBeta1 = 0.9, kBeta2 = 0.999,
                 kEps = 1e-7;
constexpr float kDropout = 0.2f;
constexpr int64_t kDropoutSeed = 7;

using Vec = std::vector<double>;

/// The MLP and its Adam state in double precision.
struct Reference {
  Vec w1, b1, w2, b2;
  std::vector<Vec> m, v;

  std::vector<Vec *> params() { return {&w1, &b1, &w2, &b2}; }

  /// One training step on x [kBatch, kIn], y [kBatch]; returns the loss.
  double step(const float *x, const int32_t *y, int64_t step) {
    uint64_t key = dropout::key(kDropoutSeed, step);
    double scale = dropout::scale(kDropout);
    Vec h(kBatch * kHidden), d(kBatch * kHidden), o(kBatch * kOut);
    for (int64_t i = 0; i < kBatch; ++i)
      for (int64_t j = 0; j < kHidden; ++j) {
        double sum = b1[j];
        for (int64_t k = 0; k < kIn; ++k)
          sum += x[i * kIn + k] * w1[k * kHidden + j];
        h[i * kHidden + j] = sum;
        bool keep = dropout::keep(key, i * kHidden + j, kDropout);
        d[i * kHidden + j] = keep ? std::max(sum, 0.0) * scale : 0.0;
      }
    double loss = 0;
    Vec dO(kBatch * kOut);
    for (int64_t i = 0; i < kBatch; ++i) {
      double top = -INFINITY;
      for (int64_t c = 0; c < kOut; ++c) {
        double sum = b2[c];
        for (int64_t j = 0; j < kHidden; ++j)
          sum += d[i * kHidden + j] * w2[j * kOut + c];
        o[i * kOut + c] = sum;
        top = std::max(top, sum);
      }
      double z = 0;
      for (int64_t c = 0; c < kOut; ++c)
        z += std::exp(o[i * kOut + c] - top);
      loss += std::log(z) + top - o[i * kOut + y[i]];
      for (int64_t c = 0; c < kOut; ++c)
        dO[i * kOut + c] =
            (std::exp(o[i * kOut + c] - top) / z - (c == y[i] ? 1.0 : 0.0)) /
            kBatch;
    }
    // Backward.
    Vec gw1(w1.size(), 0), gb1(b1.size(), 0), gw2(w2.size(), 0),
        gb2(b2.size(), 0), dH(kBatch * kHidden);
    for (int64_t i = 0; i < kBatch; ++i) {
      for (int64_t c = 0; c < kOut; ++c)
        gb2[c] += dO[i * kOut + c];
      for (int64_t j = 0; j < kHidden; ++j) {
        double dd = 0;
        for (int64_t c = 0; c < kOut; ++c) {
          gw2[j * kOut + c] += d[i * kHidden + j] * dO[i * kOut + c];
          dd += dO[i * kOut + c] * w2[j * kOut + c];
        }
        bool keep = dropout::keep(key, i * kHidden + j, kDropout);
        dH[i * kHidden + j] = keep && h[i * kHidden + j] > 0 ? dd * scale : 0.0;
        gb1[j] += dH[i * kHidden + j];
      }
    }
    for (int64_t i = 0; i < kBatch; ++i)
      for (int64_t k = 0; k < kIn; ++k)
        for (int64_t j = 0; j < kHidden; ++j)
          gw1[k * kHidden + j] += x[i * kIn + k] * dH[i * kHidden + j];
    // Adam.
    std::vector<Vec *> ps = params();
    std::vector<const Vec *> gs = {&gw1, &gb1, &gw2, &gb2};
    double t = static_cast<double>(step + 1);
    double c1 = 1 - std::pow(kBeta1, t), c2 = 1 - std::pow(kBeta2, t);
    for (size_t p = 0; p < ps.size(); ++p)
      for (size_t e = 0; e < ps[p]->size(); ++e) {
        double g = (*gs[p])[e];
        double &mm = m[p][e], &vv = v[p][e];
        mm = kBeta1 * mm + (1 - kBeta1) * g;
        vv = kBeta2 * vv + (1 - kBeta2) * g * g;
        (*ps[p])[e] -=
            (kLearningRate / c1) * mm / (std::sqrt(vv) / std::sqrt(c2) + kEps);
      }
    return loss / kBatch;
  }
};

Vec toVec(const Tensor &t) {
  return Vec(t.data<float>(), t.data<float>() + t.numElements());
}

// Noise images whose label is the slightly brighter one of ten pixel bands:
// the model has something to learn, slowly enough that the loss stays far
// from 0 (where relative rounding would dominate).
void makeBatches(int64_t first, int64_t count, Tensor &x, Tensor &y) {
  x = randomTensor({count, kBatch, 28, 28}, 1000 + first, 0, 1);
  y = Tensor::empty(DType::I32, {count, kBatch});
  for (int64_t s = 0; s < count; ++s)
    for (int64_t i = 0; i < kBatch; ++i) {
      float *image = x.data<float>() + (s * kBatch + i) * kIn;
      int32_t label = (first + s + i) % kOut;
      for (int64_t k = label * 78; k < label * 78 + 78; ++k)
        image[k] += 0.1f;
      y.data<int32_t>()[s * kBatch + i] = label;
    }
}

TEST(SeedMlp, TwoHundredAdamStepsMatchPlainCxx) {
  auto engine = makeEngine(seedTrainingModule());
  std::unique_ptr<Trainer> trainer = unwrap(Trainer::create(*engine, "train"));
  float limit1 = std::sqrt(6.0f / (kIn + kHidden));
  float limit2 = std::sqrt(6.0f / (kHidden + kOut));
  Tensor w1 = randomTensor({kIn, kHidden}, 1, -limit1, limit1);
  Tensor w2 = randomTensor({kHidden, kOut}, 2, -limit2, limit2);
  ASSERT_FALSE(bool(trainer->setState("w1", w1)));
  ASSERT_FALSE(bool(trainer->setState("w2", w2)));
  ASSERT_FALSE(bool(trainer->setInput(
      "lr", Tensor::fromValues<float>({}, {float(kLearningRate)}))));

  Reference ref;
  ref.w1 = toVec(w1);
  ref.b1.assign(kHidden, 0);
  ref.w2 = toVec(w2);
  ref.b2.assign(kOut, 0);
  for (Vec *p : ref.params()) {
    ref.m.emplace_back(p->size(), 0);
    ref.v.emplace_back(p->size(), 0);
  }

  std::vector<float> losses;
  trainer->setCallback([&](const StepsReport &report) {
    llvm::append_range(losses, report.losses);
  });
  double maxLossError = 0;
  for (int64_t first = 0; first < kSteps; first += kPerCall) {
    Tensor x, y;
    makeBatches(first, kPerCall, x, y);
    ASSERT_EQ(errorOf(trainer->trainSteps({x, y})), "");
    for (int64_t s = 0; s < kPerCall; ++s) {
      double expected = ref.step(x.data<float>() + s * kBatch * kIn,
                                 y.data<int32_t>() + s * kBatch, first + s);
      double error = std::abs(losses[first + s] - expected);
      maxLossError = std::max(maxLossError, error);
      EXPECT_LT(error, 1e-4) << "loss of step " << first + s << ": "
                             << losses[first + s] << " vs " << expected;
    }
  }
  EXPECT_LT(losses.back(), 0.9 * losses.front()) << "the model learns";

  const char *names[] = {"w1", "b1", "w2", "b2"};
  std::vector<Vec *> params = ref.params();
  double maxParamError = 0;
  for (int p = 0; p < 4; ++p) {
    Tensor got = unwrap(trainer->state(names[p]));
    for (size_t e = 0; e < params[p]->size(); ++e)
      maxParamError = std::max(
          maxParamError, std::abs(got.data<float>()[e] - (*params[p])[e]));
  }
  EXPECT_LT(maxParamError, 1e-4);
  RecordProperty("max_loss_relative_error", std::to_string(maxLossError));
  RecordProperty("max_parameter_error", std::to_string(maxParamError));
  std::printf(
      "first loss %g, last %g, max loss error %.3g, max parameter error %.3g\n",
      losses.front(), losses.back(), maxLossError, maxParamError);
}

} // namespace
