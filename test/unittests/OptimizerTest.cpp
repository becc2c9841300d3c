//===- OptimizerTest.cpp - Optimizers against a double reference ----------===//
//
// Each optimizer configuration runs 200 steps on two parameters of odd shapes
// with random gradients and a learning rate that changes every step (a
// runtime operand: no recompilation), and is compared with the same update
// rules written here in double precision (PyTorch's documented semantics).
// Each configuration runs with f32 and with f64 parameters. Tolerance after
// 200 steps, for parameters and states: |f32 - reference| <= 2e-5 *
// (1 + |reference|) (f32 rounding compounds over the steps), and |f64 -
// reference| <= 1e-10 * (1 + |reference|): the per-step scalars (bias
// corrections, step sizes) are computed in f64 as PyTorch does, so an f64
// run matches the reference to rounding.
//
// The same 200 steps also run with the parameters and states updated in
// place (`fuse.in_place`) and with fusion off (op by op): both must give
// bitwise the same parameters and states as the fused run, since they
// perform the same operations in the same order. LAMB's unfused norms are
// sums in another order, so there the unfused run agrees to 1e-5 only.
//
//===----------------------------------------------------------------------===//

#include "TestUtils.h"

#include <cmath>
#include <cstring>
#include <sstream>

using namespace fuse;
using namespace fuse::testing;

namespace {

const std::vector<std::vector<int64_t>> kShapes = {{7, 13}, {1000}};

std::string type(const std::vector<int64_t> &shape, DType dtype) {
  std::string t = "tensor<";
  for (int64_t d : shape)
    t += std::to_string(d) + "x";
  return t + dtypeName(dtype).str() + ">";
}

/// `t` (f32) as `dtype`.
Tensor convert(const Tensor &t, DType dtype) {
  if (dtype == DType::F32)
    return t;
  std::vector<double> values(t.data<float>(),
                             t.data<float>() + t.numElements());
  return Tensor::fromValues<double>(t.shape(), values);
}

double element(const Tensor &t, size_t e) {
  return t.dtype() == DType::F32 ? t.data<float>()[e] : t.data<double>()[e];
}

/// `@step(lr, step, params..., grads..., states...)` returning the op's
/// results.
std::string stepFunction(const std::string &op, const std::string &attrs,
                         unsigned statesPerParam, DType dtype,
                         bool inPlace = false) {
  size_t n = kShapes.size();
  std::vector<std::string> names, types;
  auto add = [&](const std::string &prefix, size_t count) {
    std::vector<std::string> group;
    for (size_t i = 0; i < count; ++i) {
      names.push_back("%" + prefix + std::to_string(i));
      types.push_back(type(kShapes[i % n], dtype));
      group.push_back(names.back());
    }
    return group;
  };
  auto params = add("p", n), grads = add("g", n),
       states = add("s", n * statesPerParam);
  auto join = [](const std::vector<std::string> &xs) {
    std::string out;
    for (size_t i = 0; i < xs.size(); ++i)
      out += (i ? ", " : "") + xs[i];
    return out;
  };
  std::vector<std::string> paramTypes(types.begin(), types.begin() + n);
  std::vector<std::string> stateTypes(types.begin() + 2 * n, types.end());
  std::vector<std::string> resultTypes(paramTypes);
  resultTypes.insert(resultTypes.end(), stateTypes.begin(), stateTypes.end());
  std::ostringstream os;
  os << "func.func @step(%lr: tensor<f32>, %step: tensor<i64>";
  for (size_t i = 0; i < names.size(); ++i)
    os << ", " << names[i] << ": " << types[i];
  os << ") -> (";
  for (size_t j = 0; j < resultTypes.size(); ++j) {
    os << (j ? ", " : "") << resultTypes[j];
    // Parameter j is argument 2 + j; state k is argument 2 + 2n + k.
    if (inPlace)
      os << " {fuse.in_place = " << (j < n ? 2 + j : 2 + n + j) << "}";
  }
  os << ") {\n  %r:" << resultTypes.size() << " = fuse." << op
     << " %lr, %step params(" << join(params) << " : " << join(paramTypes)
     << ") grads(" << join(grads) << " : " << join(paramTypes) << ") states(";
  if (!states.empty())
    os << join(states) << " : " << join(stateTypes);
  os << ") " << attrs << " -> " << join(resultTypes) << "\n  return ";
  for (size_t i = 0; i < resultTypes.size(); ++i)
    os << (i ? ", " : "") << "%r#" << i;
  os << " : " << join(resultTypes) << "\n}\n";
  return os.str();
}

using Vec = std::vector<double>;

/// One reference update of parameter `p` with gradient `g` and states `s`.
using Reference = std::function<void(Vec &p, const Vec &g, std::vector<Vec> &s,
                                     double lr, int64_t step)>;

float learningRate(int64_t step) {
  return 0.01f * std::pow(0.99f, static_cast<float>(step));
}

std::vector<Tensor> gradients(int64_t step, DType dtype = DType::F32) {
  std::vector<Tensor> grads;
  for (size_t i = 0; i < kShapes.size(); ++i)
    grads.push_back(
        convert(randomTensor(kShapes[i], 1000 * step + i, -2, 2), dtype));
  return grads;
}

/// Runs 200 steps; returns the parameters then the states.
std::vector<Tensor> simulate(const std::string &op, const std::string &attrs,
                             unsigned statesPerParam, DType dtype, bool fusion,
                             bool inPlace) {
  SCOPED_TRACE(std::string(fusion ? "fused" : "unfused") +
               (inPlace ? ", in place" : ""));
  EngineOptions options;
  options.fusion = fusion;
  auto engine = makeEngine(
      stepFunction(op, attrs, statesPerParam, dtype, inPlace), options);
  Function &f = unwrap(engine->lookup("step"));
  size_t n = kShapes.size();
  std::vector<Tensor> params, states;
  for (size_t i = 0; i < n; ++i)
    params.push_back(convert(randomTensor(kShapes[i], 10 + i), dtype));
  for (unsigned k = 0; k < statesPerParam; ++k)
    for (size_t i = 0; i < n; ++i)
      states.push_back(Tensor::zeros(dtype, kShapes[i]));

  for (int64_t step = 0; step < 200; ++step) {
    std::vector<Tensor> args = {
        Tensor::fromValues<float>({}, {learningRate(step)}),
        Tensor::fromValues<int64_t>({}, {step})};
    args.insert(args.end(), params.begin(), params.end());
    std::vector<Tensor> grads = gradients(step, dtype);
    args.insert(args.end(), grads.begin(), grads.end());
    args.insert(args.end(), states.begin(), states.end());
    if (inPlace) {
      // Every result is in its argument: no result tensors at all.
      std::vector<Tensor> none(n * (1 + statesPerParam));
      EXPECT_FALSE(f.callInto(args, none));
      continue;
    }
    Tensor before = params[0].contiguousCopy();
    std::vector<Tensor> out = unwrap(f.call(args));
    EXPECT_EQ(std::memcmp(before.data(), params[0].data(),
                          before.numElements() * byteWidth(dtype)),
              0)
        << "an argument not marked in place was written";
    EXPECT_EQ(out.size(), n * (1 + statesPerParam));
    for (size_t i = 0; i < n; ++i)
      params[i] = out[i];
    for (size_t j = 0; j < states.size(); ++j)
      states[j] = out[n + j];
  }
  EXPECT_EQ(f.stats().signatures, 1u); // the changing lr never recompiled
  params.insert(params.end(), states.begin(), states.end());
  return params;
}

void expectBitwiseEqual(const std::vector<Tensor> &got,
                        const std::vector<Tensor> &want, const char *what) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t j = 0; j < got.size(); ++j)
    EXPECT_EQ(std::memcmp(got[j].data(), want[j].data(),
                          got[j].numElements() * byteWidth(got[j].dtype())),
              0)
        << what << ": tensor " << j << " differs";
}

void runIn(DType dtype, const std::string &op, const std::string &attrs,
           unsigned statesPerParam, const Reference &reference) {
  SCOPED_TRACE(dtypeName(dtype).str());
  size_t n = kShapes.size();
  std::vector<Tensor> fused = simulate(op, attrs, statesPerParam, dtype,
                                       /*fusion=*/true, /*inPlace=*/false);

  std::vector<Vec> refParams(n);
  std::vector<std::vector<Vec>> refStates(n, std::vector<Vec>(statesPerParam));
  for (size_t i = 0; i < n; ++i) {
    Tensor p = randomTensor(kShapes[i], 10 + i);
    refParams[i].assign(p.data<float>(), p.data<float>() + p.numElements());
    for (unsigned k = 0; k < statesPerParam; ++k)
      refStates[i][k].assign(p.numElements(), 0.0);
  }
  for (int64_t step = 0; step < 200; ++step) {
    std::vector<Tensor> grads = gradients(step);
    for (size_t i = 0; i < n; ++i) {
      Vec g(grads[i].data<float>(),
            grads[i].data<float>() + grads[i].numElements());
      reference(refParams[i], g, refStates[i], learningRate(step), step);
    }
  }
  auto check = [](const Tensor &got, const Vec &want, double tolerance,
                  const std::string &what) {
    double worst = 0;
    for (size_t e = 0; e < want.size(); ++e)
      worst = std::max(worst, std::abs(element(got, e) - want[e]) /
                                  (1 + std::abs(want[e])));
    EXPECT_LE(worst, tolerance) << what;
  };
  double tolerance = dtype == DType::F32 ? 2e-5 : 1e-10;
  for (size_t i = 0; i < n; ++i) {
    check(fused[i], refParams[i], tolerance, "parameter " + std::to_string(i));
    for (unsigned k = 0; k < statesPerParam; ++k)
      check(fused[n + k * n + i], refStates[i][k], tolerance,
            "state " + std::to_string(k) + " of parameter " +
                std::to_string(i));
  }

  expectBitwiseEqual(simulate(op, attrs, statesPerParam, dtype, true, true),
                     fused, "in place vs out of place");
  std::vector<Tensor> unfused =
      simulate(op, attrs, statesPerParam, dtype, /*fusion=*/false, false);
  if (op != "lamb") {
    expectBitwiseEqual(unfused, fused, "unfused vs fused");
    return;
  }
  for (size_t j = 0; j < fused.size(); ++j) {
    Vec want(fused[j].numElements());
    for (size_t e = 0; e < want.size(); ++e)
      want[e] = element(fused[j], e);
    check(unfused[j], want, dtype == DType::F32 ? 1e-5 : 1e-12,
          "unfused tensor " + std::to_string(j));
  }
}

void run(const std::string &op, const std::string &attrs,
         unsigned statesPerParam, const Reference &reference) {
  SCOPED_TRACE(op + " " + attrs);
  runIn(DType::F32, op, attrs, statesPerParam, reference);
  runIn(DType::F64, op, attrs, statesPerParam, reference);
}

Reference sgd(double momentum, double dampening, bool nesterov, double decay) {
  return [=](Vec &p, const Vec &grad, std::vector<Vec> &s, double lr,
             int64_t step) {
    for (size_t e = 0; e < p.size(); ++e) {
      double g = grad[e] + decay * p[e];
      if (momentum != 0) {
        double &buf = s[0][e];
        buf = step == 0 ? g : momentum * buf + (1 - dampening) * g;
        g = nesterov ? g + momentum * buf : buf;
      }
      p[e] -= lr * g;
    }
  };
}

Reference adam(double beta1, double beta2, double eps, double decay,
               bool amsgrad, bool decoupled) {
  return [=](Vec &p, const Vec &grad, std::vector<Vec> &s, double lr,
             int64_t step) {
    double t = static_cast<double>(step + 1);
    double c1 = 1 - std::pow(beta1, t), c2 = 1 - std::pow(beta2, t);
    for (size_t e = 0; e < p.size(); ++e) {
      double g = grad[e];
      if (decoupled)
        p[e] *= 1 - lr * decay;
      else
        g += decay * p[e];
      double &m = s[0][e], &v = s[1][e];
      m = beta1 * m + (1 - beta1) * g;
      v = beta2 * v + (1 - beta2) * g * g;
      double vhat = v;
      if (amsgrad)
        vhat = s[2][e] = std::max(s[2][e], v);
      p[e] -= (lr / c1) * m / (std::sqrt(vhat) / std::sqrt(c2) + eps);
    }
  };
}

Reference adagrad(double lrDecay, double eps, double decay) {
  return [=](Vec &p, const Vec &grad, std::vector<Vec> &s, double lr,
             int64_t step) {
    double clr = lr / (1 + step * lrDecay);
    for (size_t e = 0; e < p.size(); ++e) {
      double g = grad[e] + decay * p[e];
      s[0][e] += g * g;
      p[e] -= clr * g / (std::sqrt(s[0][e]) + eps);
    }
  };
}

Reference rmsprop(double alpha, double eps, double momentum, bool centered,
                  double decay) {
  return [=](Vec &p, const Vec &grad, std::vector<Vec> &s, double lr, int64_t) {
    for (size_t e = 0; e < p.size(); ++e) {
      double g = grad[e] + decay * p[e];
      size_t k = 0;
      double &square = s[k++][e];
      square = alpha * square + (1 - alpha) * g * g;
      double avg;
      if (centered) {
        double &mean = s[k++][e];
        mean = alpha * mean + (1 - alpha) * g;
        avg = std::sqrt(square - mean * mean) + eps;
      } else {
        avg = std::sqrt(square) + eps;
      }
      double delta = g / avg;
      if (momentum != 0) {
        double &buf = s[k++][e];
        buf = momentum * buf + delta;
        delta = buf;
      }
      p[e] -= lr * delta;
    }
  };
}

Reference lamb(double beta1, double beta2, double eps, double decay) {
  return [=](Vec &p, const Vec &grad, std::vector<Vec> &s, double lr,
             int64_t step) {
    double t = static_cast<double>(step + 1);
    double c1 = 1 - std::pow(beta1, t), c2 = 1 - std::pow(beta2, t);
    Vec u(p.size());
    double pNorm = 0, uNorm = 0;
    for (size_t e = 0; e < p.size(); ++e) {
      double g = grad[e];
      double &m = s[0][e], &v = s[1][e];
      m = beta1 * m + (1 - beta1) * g;
      v = beta2 * v + (1 - beta2) * g * g;
      u[e] = (m / c1) / (std::sqrt(v / c2) + eps) + decay * p[e];
      pNorm += p[e] * p[e];
      uNorm += u[e] * u[e];
    }
    pNorm = std::sqrt(pNorm);
    uNorm = std::sqrt(uNorm);
    double trust = pNorm > 0 && uNorm > 0 ? pNorm / uNorm : 1.0;
    for (size_t e = 0; e < p.size(); ++e)
      p[e] -= lr * trust * u[e];
  };
}

TEST(Optimizer, Lamb) {
  run("lamb", "", 2, lamb(0.9, 0.999, 1e-6, 0));
  run("lamb", "{weight_decay = 0.01 : f64, beta1 = 0.85 : f64}", 2,
      lamb(0.85, 0.999, 1e-6, 0.01));
}

TEST(Optimizer, Adagrad) {
  run("adagrad", "", 1, adagrad(0, 1e-10, 0));
  run("adagrad", "{lr_decay = 0.01 : f64, weight_decay = 0.001 : f64}", 1,
      adagrad(0.01, 1e-10, 0.001));
}

TEST(Optimizer, Rmsprop) {
  run("rmsprop", "", 1, rmsprop(0.99, 1e-8, 0, false, 0));
  run("rmsprop", "{centered}", 2, rmsprop(0.99, 1e-8, 0, true, 0));
  run("rmsprop", "{momentum = 0.9 : f64, weight_decay = 0.01 : f64}", 2,
      rmsprop(0.99, 1e-8, 0.9, false, 0.01));
  run("rmsprop", "{alpha = 0.9 : f64, centered, momentum = 0.5 : f64}", 3,
      rmsprop(0.9, 1e-8, 0.5, true, 0));
}

TEST(Optimizer, Sgd) {
  run("sgd", "", 0, sgd(0, 0, false, 0));
  run("sgd", "{weight_decay = 0.01 : f64}", 0, sgd(0, 0, false, 0.01));
  run("sgd", "{momentum = 0.9 : f64}", 1, sgd(0.9, 0, false, 0));
  run("sgd", "{momentum = 0.9 : f64, dampening = 0.1 : f64}", 1,
      sgd(0.9, 0.1, false, 0));
  run("sgd", "{momentum = 0.9 : f64, nesterov, weight_decay = 0.001 : f64}", 1,
      sgd(0.9, 0, true, 0.001));
}

TEST(Optimizer, Adam) {
  run("adam", "", 2, adam(0.9, 0.999, 1e-8, 0, false, false));
  run("adam", "{beta1 = 0.8 : f64, beta2 = 0.99 : f64, eps = 1.0e-6 : f64}", 2,
      adam(0.8, 0.99, 1e-6, 0, false, false));
  run("adam", "{weight_decay = 0.01 : f64}", 2,
      adam(0.9, 0.999, 1e-8, 0.01, false, false));
  run("adam", "{amsgrad}", 3, adam(0.9, 0.999, 1e-8, 0, true, false));
  run("adam", "{weight_decay = 0.01 : f64, decoupled}", 2,
      adam(0.9, 0.999, 1e-8, 0.01, false, true));
}

// The issue's reproducer: one step from p = m = v = 0 with g = 1 and
// beta2 = 0.9999. With 1 - beta2^t from betas rounded to f32 the step was
// -0.00100008; PyTorch gives -0.001 (to f32 rounding).
TEST(Optimizer, AdamBiasCorrectionInDouble) {
  for (DType dtype : {DType::F32, DType::F64}) {
    SCOPED_TRACE(dtypeName(dtype).str());
    std::string t = dtype == DType::F32 ? "tensor<1xf32>" : "tensor<1xf64>";
    auto engine = makeEngine(
        "func.func @f(%lr: tensor<f32>, %s: tensor<i64>, %p: " + t +
        ", %g: " + t + ", %m: " + t + ", %v: " + t + ") -> (" + t + ", " + t +
        ", " + t + ") {\n  %r:3 = fuse.adam %lr, %s params(%p : " + t +
        ") grads(%g : " + t + ") states(%m, %v : " + t + ", " + t +
        ") {beta2 = 0.9999 : f64} -> " + t + ", " + t + ", " + t +
        "\n  return %r#0, %r#1, %r#2 : " + t + ", " + t + ", " + t + "\n}\n");
    Function &f = unwrap(engine->lookup("f"));
    auto value = [&](double x) {
      return convert(Tensor::fromValues<float>({1}, {float(x)}), dtype);
    };
    std::vector<Tensor> out =
        unwrap(f.call({Tensor::fromValues<float>({}, {1e-3f}),
                       Tensor::fromValues<int64_t>({}, {0}), value(0), value(1),
                       value(0), value(0)}));
    // lr is an f32 operand: the reference uses the same rounded value. m
    // and v over their corrections are 1 and 1e-4 over 1e-4: the step is
    // lr / (1 + eps).
    double want = -double(1e-3f) / (1 + 1e-8);
    EXPECT_NEAR(element(out[0], 0), want,
                (dtype == DType::F32 ? 1e-6 : 1e-14) * std::abs(want));
  }
}

TEST(Optimizer, VerifierErrors) {
  auto engine = unwrap(Engine::create());
  std::string error = errorOf(engine->loadString(R"mlir(
func.func @f(%lr: tensor<f32>, %s: tensor<i64>, %p: tensor<4xf32>, %g: tensor<4xf32>) -> tensor<4xf32> {
  %r = fuse.adam %lr, %s params(%p : tensor<4xf32>) grads(%g : tensor<4xf32>) states() -> tensor<4xf32>
  return %r : tensor<4xf32>
})mlir"));
  EXPECT_NE(error.find("expects 2 state tensors per parameter (2), got 0"),
            std::string::npos)
      << error;
}

} // namespace
