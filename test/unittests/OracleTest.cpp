//===- OracleTest.cpp - Randomized f64 oracle for VJPs and optimizers -----===//
//
// Every op with a VJP rule: `fuse.value_and_grad` of `reduce_sum(op(x...) *
// w)` is compiled in f32 with the default EngineOptions (the production
// pipeline: fusion, tiling, approximate math, denormals flushed) on random
// shapes (seeded, including size-1 dims and odd sizes) and random, partly
// hostile values (exact zeros at relu/abs kinks, exact ties in max, min,
// reduce_max and pool windows, logits of magnitude 1e3..1e4, tiny and huge
// magnitudes), and the loss and every gradient are compared with an
// independent f64 reference written from the ops' documented semantics
// (FuseOps.td, docs/autodiff.md), not from FuseVJP.cpp:
//   relu'(0) = abs'(0) = 0; max/min ties send the gradient to the left-hand
//   operand; reduce_max ties share it equally; a max-pool window's gradient
//   goes to its first maximum in row-major window order; avg_pool2d divides
//   by the number of input elements a window covers; dropout's mask is
//   DropoutRNG.h's.
// Every optimizer op, with random hyperparameters in their valid ranges, is
// checked step by step: each compiled step's parameters and states against
// one f64 reference step from the same (f32) inputs, for several steps.
//
// Tolerances. Each reference value carries a running first-order error
// bound `b` (struct R below), in units of kEps = FLT_EPSILON: an input is
// exact (b = 0); +, -, *, / add one rounding (|result|) to the propagated
// bounds of their operands; a sum of n terms adds (n - 1) * sum |term| (the
// classic bound of an f32 sum in any order, so blocked and vectorized sums
// pass); an approximated function adds its ulps below times |result|. A
// compiled value passes when |got - want| <= kSafety * kEps * b + kFloor.
// So the bound per op is derived from its math, e.g. tanh' = 1 - y^2 is
// allowed the absolute error that y's rounding causes, a sum of logits
// near 1e4 the error of the subtraction x - max.
//
//   primitive            ulps  why
//   + - * / sqrt         1     IEEE, correctly rounded (FMA only helps)
//   exp log tanh         kApproxUlps = 4: MLIR's polynomial approximations
//                        (fuse-approximate-math) state no bound (nor do
//                        docs/performance.md and ApproximateMath.cpp);
//                        about 1 ulp measured
//   sigmoid, pow         built from exp/log (R composes them)
//   optimizer constants  1: hyperparameters and per-call scalars (bias
//                        corrections, step sizes) are held in f32
//   rsqrt                kApproxUlps (may be lowered to an estimate plus a
//                        Newton step)
//   kSafety = 2          second-order terms the first-order bound drops
//   kFloor = 1e-36       denormals flush to zero (EngineOptions::
//                        flushDenormals): a result below FLT_MIN may be 0
//   Winograd convolutions (EngineOptions::winograd): the same sum bound
// Data movement (neg, abs, relu, select, max/min, shape ops, max_pool2d,
// dropout's mask) gets b = 0: exact.
//
// FUSE_ORACLE_VERBOSE=1 prints, per op, the largest error over its allowed
// error: at most ~0.4 today, so a bug (a wrong tie rule, a lost term, a
// missing factor) exceeds the bound while the rounding of a correct
// compilation stays well inside it. A case whose compiled result differs is
// a compiler bug: report it, never loosen its bound.
//
//===----------------------------------------------------------------------===//

#include "TestUtils.h"

#include "Fuse/IR/DropoutRNG.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

using namespace fuse;
using namespace fuse::testing;

namespace {

constexpr double kEps = FLT_EPSILON;
constexpr double kApproxUlps = 4;
constexpr double kSafety = 2;
constexpr double kFloor = 1e-36;

/// The fixed seeds: the test is deterministic, each seed a different draw of
/// shapes and values.
const unsigned kSeeds[] = {1, 2, 3, 4, 5};

//===----------------------------------------------------------------------===//
// Values with error bounds
//===----------------------------------------------------------------------===//

/// A reference value and a bound on the error of an f32 computation of it,
/// in units of kEps.
struct R {
  double v = 0, b = 0;
};
R exact(double v) { return {v, 0}; }
/// A constant the compiled code holds rounded to f32 (a hyperparameter).
R rounded(double v) { return {v, std::abs(v)}; }
R operator+(R x, R y) {
  double v = x.v + y.v;
  return {v, x.b + y.b + std::abs(v)};
}
R operator-(R x, R y) {
  double v = x.v - y.v;
  return {v, x.b + y.b + std::abs(v)};
}
R operator-(R x) { return {-x.v, x.b}; }
R operator*(R x, R y) {
  double v = x.v * y.v;
  return {v, x.b * std::abs(y.v) + y.b * std::abs(x.v) + x.b * y.b * kEps +
                 std::abs(v)};
}
R operator/(R x, R y) {
  double v = x.v / y.v;
  return {v, (x.b + std::abs(v) * y.b) / std::abs(y.v) + std::abs(v)};
}
/// f(x) with derivative `d` at x, approximated to `ulps`.
R apply(R x, double v, double d, double ulps) {
  return {v, std::abs(d) * x.b + ulps * std::abs(v)};
}
R exp(R x) {
  double v = std::exp(x.v);
  return apply(x, v, v, kApproxUlps);
}
R log(R x) { return apply(x, std::log(x.v), 1 / x.v, kApproxUlps); }
R tanh(R x) {
  double v = std::tanh(x.v);
  return apply(x, v, 1 - v * v, kApproxUlps);
}
R sqrt(R x) {
  double v = std::sqrt(x.v);
  return apply(x, v, v > 0 ? 0.5 / v : 0, 1);
}
R rsqrt(R x) {
  double v = 1 / std::sqrt(x.v);
  return apply(x, v, 0.5 * v / x.v, kApproxUlps);
}
R max(R x, R y) { return x.v >= y.v ? x : y; }
R min(R x, R y) { return x.v <= y.v ? x : y; }
/// x^y as exp(y log x) (its conditioning: |y log x| ulps of relative error).
R pow(R x, R y) { return exp(y * log(x)); }

/// A sum of terms in any order.
struct Sum {
  double v = 0, b = 0, abs = 0;
  int64_t n = 0;
  void add(R t) {
    v += t.v;
    b += t.b;
    abs += std::abs(t.v);
    ++n;
  }
  R get() const {
    return {v, b + static_cast<double>(n > 1 ? n - 1 : 0) * abs};
  }
};

using Vals = std::vector<double>;
using Refs = std::vector<R>;

Refs exactAll(const Vals &xs) {
  Refs r;
  for (double x : xs)
    r.push_back(exact(x));
  return r;
}

//===----------------------------------------------------------------------===//
// Shapes and random values
//===----------------------------------------------------------------------===//

using Shape = std::vector<int64_t>;

int64_t numel(const Shape &s) {
  int64_t n = 1;
  for (int64_t d : s)
    n *= d;
  return n;
}

Shape stridesOf(const Shape &s) {
  Shape st(s.size(), 1);
  for (int64_t d = static_cast<int64_t>(s.size()) - 2; d >= 0; --d)
    st[d] = st[d + 1] * s[d + 1];
  return st;
}

Shape unravel(int64_t flat, const Shape &s) {
  Shape idx(s.size());
  for (int64_t d = static_cast<int64_t>(s.size()) - 1; d >= 0; --d) {
    idx[d] = flat % s[d];
    flat /= s[d];
  }
  return idx;
}

std::string str(const Shape &s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i)
    out += (i ? "x" : "") + std::to_string(s[i]);
  return s.empty() ? "scalar" : out;
}

std::string typeOf(const Shape &s, const std::string &elt = "f32") {
  std::string t = "tensor<";
  for (int64_t d : s)
    t += std::to_string(d) + "x";
  return t + elt + ">";
}

std::string list(const Shape &xs) {
  std::string out;
  for (size_t i = 0; i < xs.size(); ++i)
    out += (i ? ", " : " ") + std::to_string(xs[i]);
  return out;
}

/// The flat index into `in` (broadcast to `out` NumPy-style) of `out`'s
/// element `flat`.
int64_t broadcastIndex(const Shape &out, const Shape &in, int64_t flat) {
  Shape idx = unravel(flat, out);
  Shape st = stridesOf(in);
  size_t offset = out.size() - in.size();
  int64_t r = 0;
  for (size_t d = 0; d < in.size(); ++d)
    r += (in[d] == 1 ? 0 : idx[d + offset]) * st[d];
  return r;
}

Shape broadcastShapes(const Shape &a, const Shape &b) {
  size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t d = 0; d < rank; ++d) {
    int64_t x = d + a.size() >= rank ? a[d + a.size() - rank] : 1;
    int64_t y = d + b.size() >= rank ? b[d + b.size() - rank] : 1;
    out[d] = std::max(x, y);
  }
  return out;
}

struct Rng {
  std::mt19937 gen;
  explicit Rng(unsigned seed) : gen(seed) {}
  int64_t integer(int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(gen);
  }
  double uniform(double lo, double hi) {
    return std::uniform_real_distribution<double>(lo, hi)(gen);
  }
  bool chance(double p) { return uniform(0, 1) < p; }
  double logUniform(double lo, double hi) {
    return std::exp(uniform(std::log(lo), std::log(hi)));
  }
  double sign() { return chance(0.5) ? 1.0 : -1.0; }
  template <typename T> const T &pick(const std::vector<T> &xs) {
    return xs[integer(0, xs.size() - 1)];
  }
  /// A dim: often 1 or odd.
  int64_t dim() { return pick<int64_t>({1, 1, 2, 3, 4, 5, 7, 8, 9, 16, 17}); }
  Shape shape(int64_t minRank, int64_t maxRank, int64_t maxElements = 1500) {
    Shape s;
    do {
      s.assign(integer(minRank, maxRank), 0);
      for (int64_t &d : s)
        d = dim();
    } while (numel(s) > maxElements);
    return s;
  }
};

/// How a tensor's values are drawn.
enum class Mix {
  Plain,    ///< U[-1, 1]
  Kinks,    ///< exact +-0, small integers (ties), tiny and large magnitudes
  Wide,     ///< exp's range: up to +-80
  Positive, ///< log-uniform in [1e-6, 1e6], and exactly 1
  Saturate, ///< tanh/sigmoid: saturated +-[10, 60] and exact 0
  Ties,     ///< multiples of 0.5 in [-1, 1]: many exact ties
  Divisor,  ///< bounded away from 0: +-[0.25, 4], +-[1e3, 1e5]
  Base,     ///< pow's base: [0.25, 3] and exactly 1
  Exponent, ///< pow's exponent: [-3, 3], exact 0 and small integers
};

float draw(Rng &rng, Mix mix) {
  double u = rng.uniform(0, 1);
  switch (mix) {
  case Mix::Plain:
    return rng.uniform(-1, 1);
  case Mix::Kinks:
    if (u < 0.15)
      return 0.0f;
    if (u < 0.25)
      return -0.0f;
    if (u < 0.4)
      return static_cast<float>(rng.integer(-2, 2));
    if (u < 0.47)
      return rng.sign() * rng.logUniform(1e-20, 1e-15);
    if (u < 0.54)
      return rng.sign() * rng.logUniform(1e3, 1e6);
    return rng.uniform(-2, 2);
  case Mix::Wide:
    if (u < 0.1)
      return 0.0f;
    return u < 0.55 ? rng.uniform(-80, 80) : rng.uniform(-1, 1);
  case Mix::Positive:
    if (u < 0.1)
      return 1.0f;
    return u < 0.8 ? rng.logUniform(1e-6, 1e6) : rng.uniform(0.5, 2);
  case Mix::Saturate:
    if (u < 0.1)
      return 0.0f;
    return u < 0.4 ? rng.sign() * rng.uniform(10, 60) : rng.uniform(-4, 4);
  case Mix::Ties:
    return 0.5f * static_cast<float>(rng.integer(-2, 2));
  case Mix::Divisor:
    return rng.sign() *
           (u < 0.8 ? rng.uniform(0.25, 4) : rng.uniform(1e3, 1e5));
  case Mix::Base:
    return u < 0.1 ? 1.0f : static_cast<float>(rng.uniform(0.25, 3));
  case Mix::Exponent:
    return u < 0.3 ? static_cast<float>(rng.integer(-2, 2))
                   : static_cast<float>(rng.uniform(-3, 3));
  }
  return 0;
}

std::vector<float> drawAll(Rng &rng, int64_t n, Mix mix) {
  std::vector<float> xs(n);
  for (float &x : xs)
    x = draw(rng, mix);
  return xs;
}

/// Logits of one of three kinds: moderate, spread over +-1e4 (softmax is
/// one-hot to f32 precision), or offset by ~1e3..1e4 with a small spread
/// (a naive exp overflows).
std::vector<float> drawLogits(Rng &rng, int64_t n, int kind) {
  std::vector<float> xs(n);
  double offset = rng.sign() * rng.uniform(1e3, 1e4);
  for (float &x : xs)
    x = kind == 0   ? rng.uniform(-5, 5)
        : kind == 1 ? rng.uniform(-1e4, 1e4)
                    : offset + rng.uniform(-10, 10);
  return xs;
}

//===----------------------------------------------------------------------===//
// Cases and the batch runner
//===----------------------------------------------------------------------===//

struct Arg {
  std::string name; ///< without the %
  std::string type;
  Tensor value;
  bool wrt = false;
};

/// One differentiated loss: its function body and the reference loss and
/// gradients (one per wrt argument, in argument order).
struct Case {
  std::string label;
  std::vector<Arg> args;
  std::string body; ///< MLIR defining %loss : tensor<f32>
  R loss;
  std::vector<Refs> grads;

  /// Adds an f32 argument; returns its values as doubles.
  Vals addF32(const std::string &name, const Shape &shape,
              const std::vector<float> &values, bool wrt) {
    args.push_back(
        {name, typeOf(shape), Tensor::fromValues<float>(shape, values), wrt});
    return Vals(values.begin(), values.end());
  }
  Vals addRandom(Rng &rng, const std::string &name, const Shape &shape, Mix mix,
                 bool wrt = true) {
    return addF32(name, shape, drawAll(rng, numel(shape), mix), wrt);
  }

  /// Appends `%loss = reduce_sum(%<y> * %w)` with a random weight w (not
  /// differentiated) of y's shape, sets the reference loss from `y` and
  /// returns w: the gradient of the loss with respect to y.
  Vals weightedLoss(Rng &rng, const std::string &y, const Shape &shape,
                    const Refs &ys) {
    Vals w = addRandom(rng, "w", shape, Mix::Plain, /*wrt=*/false);
    std::string t = typeOf(shape);
    std::ostringstream os;
    if (shape.empty()) {
      os << "%loss = fuse.mul %" << y << ", %w : (" << t << ", " << t << ") -> "
         << t << "\n";
    } else {
      Shape axes(shape.size());
      for (size_t d = 0; d < axes.size(); ++d)
        axes[d] = d;
      os << "%wy = fuse.mul %" << y << ", %w : (" << t << ", " << t << ") -> "
         << t
         << "\n%loss = fuse.reduce_sum %wy {axes = array<i64:" << list(axes)
         << ">} : (" << t << ") -> tensor<f32>\n";
    }
    body += os.str();
    Sum s;
    for (size_t i = 0; i < ys.size(); ++i)
      s.add(exact(w[i]) * ys[i]);
    loss = shape.empty() ? exact(w[0]) * ys[0] : s.get();
    return w;
  }
};

/// The largest |got - want| / allowed seen per label prefix (for tuning the
/// table; printed with FUSE_ORACLE_VERBOSE=1).
std::map<std::string, double> &worstRatios() {
  static std::map<std::string, double> worst;
  return worst;
}

void expectClose(const Case &c, const std::string &what, const Tensor &got,
                 const Refs &want, const Shape &shape) {
  ASSERT_EQ(got.numElements(), static_cast<int64_t>(want.size()))
      << c.label << ": " << what;
  Tensor g = got.contiguousCopy();
  int bad = 0;
  std::ostringstream report;
  double &worst = worstRatios()[c.label.substr(0, c.label.find(' '))];
  for (size_t e = 0; e < want.size(); ++e) {
    double x = g.data<float>()[e];
    double allowed = kSafety * kEps * want[e].b + kFloor;
    double diff = std::abs(x - want[e].v);
    if (std::isfinite(want[e].v))
      worst = std::max(worst, diff / allowed);
    if (diff <= allowed)
      continue;
    if (bad++ < 4)
      report << "\n  [" << list(unravel(e, shape)) << " ] got " << x << " want "
             << want[e].v << " allowed +-" << allowed;
  }
  EXPECT_EQ(bad, 0) << c.label << ": " << what << ", " << bad << " of "
                    << want.size() << " elements differ:" << report.str();
}

void printWorstRatios() {
  if (std::getenv("FUSE_ORACLE_VERBOSE"))
    for (auto &[label, ratio] : worstRatios())
      llvm::errs() << label << ": worst error / allowed = " << ratio << "\n";
  worstRatios().clear();
}

Shape shapeOf(const Tensor &t) {
  return Shape(t.shape().begin(), t.shape().end());
}

std::string moduleOf(const std::vector<Case> &cases) {
  std::ostringstream os;
  std::string allArgs, resultTypes, rets, calls;
  size_t numResults = 0;
  for (size_t k = 0; k < cases.size(); ++k) {
    const Case &c = cases[k];
    os << "func.func @l" << k << "(";
    std::string callArgs, argTypes, gradTypes, wrt;
    size_t grads = 0;
    for (size_t i = 0; i < c.args.size(); ++i) {
      const Arg &a = c.args[i];
      os << (i ? ", %" : "%") << a.name << ": " << a.type;
      std::string outer = "%a" + std::to_string(k) + "_" + std::to_string(i);
      allArgs += (allArgs.empty() ? "" : ", ") + outer + ": " + a.type;
      callArgs += (i ? ", " : "") + outer;
      argTypes += (i ? ", " : "") + a.type;
      if (a.wrt) {
        wrt += (grads++ ? ", " : " ") + std::to_string(i);
        gradTypes += ", " + a.type;
      }
    }
    os << ") -> tensor<f32> {\n" << c.body << "return %loss : tensor<f32>\n}\n";
    std::string r = "%r" + std::to_string(k);
    calls += r + ":" + std::to_string(grads + 1) + " = fuse.value_and_grad @l" +
             std::to_string(k) + "(" + callArgs + ") {wrt = array<i64:" + wrt +
             ">} : (" + argTypes + ") -> (tensor<f32>" + gradTypes + ")\n";
    for (size_t j = 0; j <= grads; ++j)
      rets += (numResults++ ? ", " : "") + r + "#" + std::to_string(j);
    resultTypes += (k ? ", " : "") + std::string("tensor<f32>") + gradTypes;
  }
  os << "func.func @all(" << allArgs << ") -> (" << resultTypes << ") {\n"
     << calls << "return " << rets << " : " << resultTypes << "\n}\n";
  return os.str();
}

llvm::Expected<std::vector<Tensor>>
compileAndCall(const std::vector<Case> &cases, EngineOptions options) {
  options.diskCache = false;
  auto engine = Engine::create(options);
  if (!engine)
    return engine.takeError();
  if (llvm::Error e = (*engine)->loadString(moduleOf(cases)))
    return std::move(e);
  auto f = (*engine)->lookup("all");
  if (!f)
    return f.takeError();
  std::vector<Tensor> args;
  for (const Case &c : cases)
    for (const Arg &a : c.args)
      args.push_back(a.value);
  return f->call(args);
}

/// Compiles all cases into one module (one compilation), calls it and
/// checks every loss and gradient. The options default to the production
/// path's. If the batch fails to compile or run,
/// each case is retried alone to name the one that fails.
void runCases(const std::vector<Case> &cases,
              const EngineOptions &options = {}) {
  llvm::Expected<std::vector<Tensor>> results = compileAndCall(cases, options);
  if (!results) {
    std::string batchError = llvm::toString(results.takeError());
    bool named = false;
    for (const Case &c : cases) {
      llvm::Expected<std::vector<Tensor>> alone = compileAndCall({c}, options);
      if (!alone) {
        named = true;
        ADD_FAILURE() << c.label << ": " << llvm::toString(alone.takeError())
                      << "\n"
                      << moduleOf({c});
      }
    }
    if (!named)
      ADD_FAILURE() << "the batch failed, each case alone passed: "
                    << batchError;
    return;
  }
  size_t r = 0;
  for (const Case &c : cases) {
    SCOPED_TRACE(moduleOf({c}));
    expectClose(c, "loss", (*results)[r++], {c.loss}, {});
    size_t g = 0;
    for (const Arg &a : c.args) {
      if (!a.wrt)
        continue;
      expectClose(c, "d loss / d %" + a.name, (*results)[r++], c.grads[g++],
                  shapeOf(a.value));
    }
  }
  printWorstRatios();
}

//===----------------------------------------------------------------------===//
// Element-wise unary ops
//===----------------------------------------------------------------------===//

struct UnarySpec {
  const char *name;
  Mix mix;
  std::function<R(R)> f;
  /// The derivative at x, from x and the forward result y (as computed).
  std::function<R(R x, R y)> derivative;
};

const std::vector<UnarySpec> &unarySpecs() {
  static const std::vector<UnarySpec> specs = {
      {"neg", Mix::Kinks, [](R x) { return -x; },
       [](R, R) { return exact(-1); }},
      {"abs", Mix::Kinks, [](R x) { return x.v < 0 ? -x : x; },
       [](R x, R) {
         return exact(x.v > 0 ? 1 : x.v < 0 ? -1 : 0);
       }},
      {"square", Mix::Kinks, [](R x) { return x * x; },
       [](R x, R) { return exact(2) * x; }},
      {"relu", Mix::Kinks, [](R x) { return x.v > 0 ? x : exact(0); },
       [](R x, R) { return exact(x.v > 0 ? 1 : 0); }},
      {"exp", Mix::Wide, [](R x) { return exp(x); }, [](R, R y) { return y; }},
      {"log", Mix::Positive, [](R x) { return log(x); },
       [](R x, R) { return exact(1) / x; }},
      {"sqrt", Mix::Positive, [](R x) { return sqrt(x); },
       [](R, R y) { return exact(1) / (exact(2) * y); }},
      {"rsqrt", Mix::Positive, [](R x) { return rsqrt(x); },
       [](R, R y) { return exact(-0.5) * (y * (y * y)); }},
      {"tanh", Mix::Saturate, [](R x) { return tanh(x); },
       [](R, R y) { return exact(1) - y * y; }},
      {"sigmoid", Mix::Saturate,
       [](R x) { return exact(1) / (exact(1) + exp(-x)); },
       [](R, R y) { return y * (exact(1) - y); }},
  };
  return specs;
}

Case unaryCase(Rng &rng, const UnarySpec &spec) {
  Case c;
  Shape s = rng.shape(0, 3);
  c.label = std::string(spec.name) + " " + str(s);
  Vals x = c.addRandom(rng, "x", s, spec.mix);
  c.body = "%y = fuse." + std::string(spec.name) + " %x : " + typeOf(s) + "\n";
  Refs y;
  for (double v : x)
    y.push_back(spec.f(exact(v)));
  Vals w = c.weightedLoss(rng, "y", s, y);
  Refs dx;
  for (size_t i = 0; i < x.size(); ++i)
    dx.push_back(exact(w[i]) * spec.derivative(exact(x[i]), y[i]));
  c.grads = {dx};
  return c;
}

TEST(Oracle, Unary) {
  for (unsigned seed : kSeeds) {
    Rng rng(seed);
    std::vector<Case> cases;
    for (const UnarySpec &spec : unarySpecs())
      for (int k = 0; k < 2; ++k)
        cases.push_back(unaryCase(rng, spec));
    runCases(cases);
  }
}

//===----------------------------------------------------------------------===//
// Element-wise binary ops and select, with broadcasting
//===----------------------------------------------------------------------===//

/// An operand shape that broadcasts to `out`: some leading dims dropped,
/// some dims 1.
Shape operandShape(Rng &rng, const Shape &out) {
  size_t drop = rng.chance(0.3) ? rng.integer(0, out.size()) : 0;
  Shape s(out.begin() + drop, out.end());
  for (int64_t &d : s)
    if (rng.chance(0.3))
      d = 1;
  return s;
}

struct BinarySpec {
  const char *name;
  Mix lhsMix, rhsMix;
  std::function<R(R, R)> f;
  /// d out / d lhs and d out / d rhs at (x, y), with the result `out`.
  std::function<R(R, R, R)> dl, dr;
};

const std::vector<BinarySpec> &binarySpecs() {
  static const std::vector<BinarySpec> specs = {
      {"add", Mix::Kinks, Mix::Kinks, [](R x, R y) { return x + y; },
       [](R, R, R) { return exact(1); }, [](R, R, R) { return exact(1); }},
      {"sub", Mix::Kinks, Mix::Kinks, [](R x, R y) { return x - y; },
       [](R, R, R) { return exact(1); }, [](R, R, R) { return exact(-1); }},
      {"mul", Mix::Kinks, Mix::Kinks, [](R x, R y) { return x * y; },
       [](R, R y, R) { return y; }, [](R x, R, R) { return x; }},
      {"div", Mix::Kinks, Mix::Divisor, [](R x, R y) { return x / y; },
       [](R, R y, R) { return exact(1) / y; },
       [](R, R y, R out) { return -(out / y); }},
      // Ties send the gradient to the left-hand operand.
      {"max", Mix::Ties, Mix::Ties, [](R x, R y) { return max(x, y); },
       [](R x, R y, R) { return exact(x.v >= y.v ? 1 : 0); },
       [](R x, R y, R) { return exact(x.v < y.v ? 1 : 0); }},
      {"min", Mix::Ties, Mix::Ties, [](R x, R y) { return min(x, y); },
       [](R x, R y, R) { return exact(x.v <= y.v ? 1 : 0); },
       [](R x, R y, R) { return exact(x.v > y.v ? 1 : 0); }},
      {"pow", Mix::Base, Mix::Exponent, [](R x, R y) { return pow(x, y); },
       [](R x, R y, R) { return y * pow(x, y - exact(1)); },
       [](R x, R, R out) { return out * log(x); }},
  };
  return specs;
}

/// Sums `term(i)` of every output element i into its operand element.
Refs unbroadcastSum(const Shape &out, const Shape &in,
                    const std::function<R(int64_t)> &term) {
  std::vector<Sum> sums(numel(in));
  for (int64_t i = 0; i < numel(out); ++i)
    sums[broadcastIndex(out, in, i)].add(term(i));
  Refs r;
  for (const Sum &s : sums)
    r.push_back(s.get());
  return r;
}

Case binaryCase(Rng &rng, const BinarySpec &spec) {
  Case c;
  Shape full = rng.shape(0, 4, 800);
  Shape ls = operandShape(rng, full), rs = operandShape(rng, full);
  Shape out = broadcastShapes(ls, rs);
  c.label = std::string(spec.name) + " " + str(ls) + " by " + str(rs);
  Vals x = c.addRandom(rng, "x", ls, spec.lhsMix);
  Vals y = c.addRandom(rng, "y", rs, spec.rhsMix);
  c.body = "%z = fuse." + std::string(spec.name) + " %x, %y : (" + typeOf(ls) +
           ", " + typeOf(rs) + ") -> " + typeOf(out) + "\n";
  Refs z;
  for (int64_t i = 0; i < numel(out); ++i)
    z.push_back(spec.f(exact(x[broadcastIndex(out, ls, i)]),
                       exact(y[broadcastIndex(out, rs, i)])));
  Vals w = c.weightedLoss(rng, "z", out, z);
  auto at = [&](int64_t i) {
    return std::make_pair(exact(x[broadcastIndex(out, ls, i)]),
                          exact(y[broadcastIndex(out, rs, i)]));
  };
  c.grads = {unbroadcastSum(out, ls,
                            [&](int64_t i) {
                              auto [a, b] = at(i);
                              return exact(w[i]) * spec.dl(a, b, z[i]);
                            }),
             unbroadcastSum(out, rs, [&](int64_t i) {
               auto [a, b] = at(i);
               return exact(w[i]) * spec.dr(a, b, z[i]);
             })};
  return c;
}

Case selectCase(Rng &rng) {
  Case c;
  Shape full = rng.shape(1, 4, 800);
  Shape cs = operandShape(rng, full), ts = operandShape(rng, full),
        fs = operandShape(rng, full);
  Shape out = broadcastShapes(broadcastShapes(cs, ts), fs);
  c.label = "select " + str(cs) + ", " + str(ts) + ", " + str(fs);
  std::vector<bool> condBits(numel(cs));
  Tensor ct = Tensor::empty(DType::I1, cs);
  for (int64_t i = 0; i < numel(cs); ++i)
    static_cast<uint8_t *>(ct.data())[i] = condBits[i] = rng.chance(0.5);
  c.args.push_back({"c", typeOf(cs, "i1"), ct, false});
  Vals t = c.addRandom(rng, "t", ts, Mix::Kinks);
  Vals f = c.addRandom(rng, "f", fs, Mix::Kinks);
  c.body = "%z = fuse.select %c, %t, %f : (" + typeOf(cs, "i1") + ", " +
           typeOf(ts) + ", " + typeOf(fs) + ") -> " + typeOf(out) + "\n";
  Refs z;
  for (int64_t i = 0; i < numel(out); ++i)
    z.push_back(exact(condBits[broadcastIndex(out, cs, i)]
                          ? t[broadcastIndex(out, ts, i)]
                          : f[broadcastIndex(out, fs, i)]));
  Vals w = c.weightedLoss(rng, "z", out, z);
  c.grads = {unbroadcastSum(out, ts,
                            [&](int64_t i) {
                              return exact(condBits[broadcastIndex(out, cs, i)]
                                               ? w[i]
                                               : 0);
                            }),
             unbroadcastSum(out, fs, [&](int64_t i) {
               return exact(condBits[broadcastIndex(out, cs, i)] ? 0 : w[i]);
             })};
  return c;
}

TEST(Oracle, BinaryAndSelect) {
  for (unsigned seed : kSeeds) {
    Rng rng(100 + seed);
    std::vector<Case> cases;
    for (const BinarySpec &spec : binarySpecs())
      for (int k = 0; k < 2; ++k)
        cases.push_back(binaryCase(rng, spec));
    for (int k = 0; k < 2; ++k)
      cases.push_back(selectCase(rng));
    runCases(cases);
  }
}

//===----------------------------------------------------------------------===//
// Shape ops
//===----------------------------------------------------------------------===//

Case reshapeCase(Rng &rng) {
  Case c;
  Shape s = rng.shape(1, 4);
  // The same elements, dims regrouped: split the count into random factors.
  int64_t n = numel(s);
  Shape t;
  int64_t rest = n;
  while (rest > 1 && t.size() < 3) {
    std::vector<int64_t> divisors;
    for (int64_t d = 1; d <= rest; ++d)
      if (rest % d == 0)
        divisors.push_back(d);
    int64_t d = rng.pick(divisors);
    t.push_back(d);
    rest /= d;
  }
  t.push_back(rest);
  if (rng.chance(0.3))
    t.insert(t.begin() + rng.integer(0, t.size()), 1);
  c.label = "reshape " + str(s) + " to " + str(t);
  Vals x = c.addRandom(rng, "x", s, Mix::Kinks);
  c.body = "%y = fuse.reshape %x : (" + typeOf(s) + ") -> " + typeOf(t) + "\n";
  Vals w = c.weightedLoss(rng, "y", t, exactAll(x));
  c.grads = {exactAll(w)};
  return c;
}

Case transposeCase(Rng &rng) {
  Case c;
  Shape s = rng.shape(1, 4);
  Shape perm(s.size());
  for (size_t d = 0; d < perm.size(); ++d)
    perm[d] = d;
  std::shuffle(perm.begin(), perm.end(), rng.gen);
  Shape t(s.size());
  for (size_t d = 0; d < t.size(); ++d)
    t[d] = s[perm[d]];
  c.label = "transpose " + str(s) + " by" + list(perm);
  Vals x = c.addRandom(rng, "x", s, Mix::Kinks);
  c.body = "%y = fuse.transpose %x {permutation = array<i64:" + list(perm) +
           ">} : (" + typeOf(s) + ") -> " + typeOf(t) + "\n";
  Shape st = stridesOf(s);
  auto source = [&](int64_t i) {
    Shape idx = unravel(i, t);
    int64_t r = 0;
    for (size_t d = 0; d < idx.size(); ++d)
      r += idx[d] * st[perm[d]];
    return r;
  };
  Refs y;
  for (int64_t i = 0; i < numel(t); ++i)
    y.push_back(exact(x[source(i)]));
  Vals w = c.weightedLoss(rng, "y", t, y);
  Refs dx(x.size());
  for (int64_t i = 0; i < numel(t); ++i)
    dx[source(i)] = exact(w[i]);
  c.grads = {dx};
  return c;
}

Case broadcastToCase(Rng &rng) {
  Case c;
  Shape out = rng.shape(1, 4, 800);
  Shape in = operandShape(rng, out);
  c.label = "broadcast_to " + str(in) + " to " + str(out);
  Vals x = c.addRandom(rng, "x", in, Mix::Kinks);
  c.body = "%y = fuse.broadcast_to %x : (" + typeOf(in) + ") -> " +
           typeOf(out) + "\n";
  Refs y;
  for (int64_t i = 0; i < numel(out); ++i)
    y.push_back(exact(x[broadcastIndex(out, in, i)]));
  Vals w = c.weightedLoss(rng, "y", out, y);
  c.grads = {unbroadcastSum(out, in, [&](int64_t i) { return exact(w[i]); })};
  return c;
}

Case expandDimsCase(Rng &rng) {
  Case c;
  Shape in = rng.shape(0, 3);
  int64_t k = rng.integer(1, 2);
  int64_t rank = in.size() + k;
  Shape all(rank);
  for (int64_t d = 0; d < rank; ++d)
    all[d] = d;
  std::shuffle(all.begin(), all.end(), rng.gen);
  Shape axes(all.begin(), all.begin() + k);
  std::sort(axes.begin(), axes.end());
  Shape out;
  size_t next = 0;
  for (int64_t d = 0; d < rank; ++d)
    out.push_back(std::count(axes.begin(), axes.end(), d) ? 1 : in[next++]);
  c.label = "expand_dims " + str(in) + " at" + list(axes);
  Vals x = c.addRandom(rng, "x", in, Mix::Kinks);
  c.body = "%y = fuse.expand_dims %x {axes = array<i64:" + list(axes) +
           ">} : (" + typeOf(in) + ") -> " + typeOf(out) + "\n";
  Vals w = c.weightedLoss(rng, "y", out, exactAll(x));
  c.grads = {exactAll(w)};
  return c;
}

TEST(Oracle, ShapeOps) {
  for (unsigned seed : kSeeds) {
    Rng rng(200 + seed);
    std::vector<Case> cases;
    for (int k = 0; k < 2; ++k) {
      cases.push_back(reshapeCase(rng));
      cases.push_back(transposeCase(rng));
      cases.push_back(broadcastToCase(rng));
      cases.push_back(expandDimsCase(rng));
    }
    runCases(cases);
  }
}

//===----------------------------------------------------------------------===//
// Contractions
//===----------------------------------------------------------------------===//

/// batch_matmul (batch > 0) or matmul (batch == 0) with every flag pair.
Case matmulCase(Rng &rng, int64_t batch, bool ta, bool tb, int64_t m = 0,
                int64_t k = 0, int64_t n = 0) {
  std::vector<int64_t> sizes = {1, 2, 3, 5, 8, 13, 17, 33};
  m = m ? m : rng.pick(sizes);
  k = k ? k : rng.pick(sizes);
  n = n ? n : rng.pick(sizes);
  int64_t bs = std::max<int64_t>(batch, 1);
  Shape as = ta ? Shape{k, m} : Shape{m, k};
  Shape bsh = tb ? Shape{n, k} : Shape{k, n};
  Shape cs = {m, n};
  if (batch) {
    as.insert(as.begin(), batch);
    bsh.insert(bsh.begin(), batch);
    cs.insert(cs.begin(), batch);
  }
  Case c;
  std::string op = batch ? "batch_matmul" : "matmul";
  c.label = op + " " + str(as) + " x " + str(bsh) + (ta ? " ta" : "") +
            (tb ? " tb" : "");
  Vals a = c.addRandom(rng, "a", as, Mix::Plain);
  Vals b = c.addRandom(rng, "b", bsh, Mix::Plain);
  std::string flags = ta && tb ? " {transpose_lhs, transpose_rhs}"
                      : ta     ? " {transpose_lhs}"
                      : tb     ? " {transpose_rhs}"
                               : "";
  c.body = "%y = fuse." + op + " %a, %b" + flags + " : (" + typeOf(as) + ", " +
           typeOf(bsh) + ") -> " + typeOf(cs) + "\n";
  auto A = [&](int64_t p, int64_t i, int64_t kk) {
    return p * m * k + (ta ? kk * m + i : i * k + kk);
  };
  auto B = [&](int64_t p, int64_t kk, int64_t j) {
    return p * k * n + (tb ? j * k + kk : kk * n + j);
  };
  Refs y(bs * m * n);
  for (int64_t p = 0; p < bs; ++p)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        Sum s;
        for (int64_t kk = 0; kk < k; ++kk)
          s.add(exact(a[A(p, i, kk)]) * exact(b[B(p, kk, j)]));
        y[(p * m + i) * n + j] = s.get();
      }
  Vals w = c.weightedLoss(rng, "y", cs, y);
  Refs da(a.size()), db(b.size());
  for (int64_t p = 0; p < bs; ++p) {
    for (int64_t i = 0; i < m; ++i)
      for (int64_t kk = 0; kk < k; ++kk) {
        Sum s;
        for (int64_t j = 0; j < n; ++j)
          s.add(exact(w[(p * m + i) * n + j]) * exact(b[B(p, kk, j)]));
        da[A(p, i, kk)] = s.get();
      }
    for (int64_t kk = 0; kk < k; ++kk)
      for (int64_t j = 0; j < n; ++j) {
        Sum s;
        for (int64_t i = 0; i < m; ++i)
          s.add(exact(a[A(p, i, kk)]) * exact(w[(p * m + i) * n + j]));
        db[B(p, kk, j)] = s.get();
      }
  }
  c.grads = {da, db};
  return c;
}

TEST(Oracle, Contractions) {
  for (unsigned seed : kSeeds) {
    Rng rng(300 + seed);
    std::vector<Case> cases;
    for (int flags = 0; flags < 4; ++flags) {
      cases.push_back(matmulCase(rng, 0, flags & 1, flags & 2));
      cases.push_back(matmulCase(rng, rng.integer(1, 3), flags & 1, flags & 2));
    }
    runCases(cases);
  }
  // A weight larger than half of L2: the packed, cache-blocked path.
  Rng rng(310);
  runCases({matmulCase(rng, 0, false, false, 7, 257, 256),
            matmulCase(rng, 0, false, true, 2, 300, 260)});
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

Case reduceCase(Rng &rng, const std::string &op) {
  Case c;
  Shape s = rng.shape(1, 4);
  Shape axes;
  for (size_t d = 0; d < s.size(); ++d)
    if (rng.chance(0.5))
      axes.push_back(d);
  if (axes.empty())
    axes.push_back(rng.integer(0, s.size() - 1));
  bool keep = rng.chance(0.5);
  Shape out, kept = s;
  for (size_t d = 0; d < s.size(); ++d) {
    bool reduced = std::count(axes.begin(), axes.end(), int64_t(d));
    if (reduced)
      kept[d] = 1;
    if (!reduced || keep)
      out.push_back(reduced ? 1 : s[d]);
  }
  c.label =
      op + " " + str(s) + " over" + list(axes) + (keep ? " keepdims" : "");
  Vals x =
      c.addRandom(rng, "x", s, op == "reduce_max" ? Mix::Ties : Mix::Kinks);
  c.body = "%y = fuse." + op + " %x {axes = array<i64:" + list(axes) + ">" +
           (keep ? ", keepdims" : "") + "} : (" + typeOf(s) + ") -> " +
           typeOf(out) + "\n";
  int64_t groups = numel(kept), count = numel(s) / groups;
  std::vector<Sum> sums(groups);
  std::vector<double> maxima(groups, -INFINITY);
  for (int64_t i = 0; i < numel(s); ++i) {
    int64_t g = broadcastIndex(s, kept, i);
    sums[g].add(exact(x[i]));
    maxima[g] = std::max(maxima[g], x[i]);
  }
  Refs y;
  for (int64_t g = 0; g < groups; ++g)
    y.push_back(op == "reduce_sum"    ? sums[g].get()
                : op == "reduce_mean" ? sums[g].get() / exact(count)
                                      : exact(maxima[g]));
  Vals w = c.weightedLoss(rng, "y", out, y);
  std::vector<int64_t> ties(groups, 0);
  for (int64_t i = 0; i < numel(s); ++i)
    ties[broadcastIndex(s, kept, i)] +=
        x[i] == maxima[broadcastIndex(s, kept, i)];
  Refs dx;
  for (int64_t i = 0; i < numel(s); ++i) {
    int64_t g = broadcastIndex(s, kept, i);
    if (op == "reduce_sum")
      dx.push_back(exact(w[g]));
    else if (op == "reduce_mean")
      dx.push_back(exact(w[g]) / exact(count));
    else // tied maxima share the gradient equally
      dx.push_back(x[i] == maxima[g] ? exact(w[g]) / exact(ties[g]) : exact(0));
  }
  c.grads = {dx};
  return c;
}

TEST(Oracle, Reductions) {
  for (unsigned seed : kSeeds) {
    Rng rng(400 + seed);
    std::vector<Case> cases;
    for (const char *op : {"reduce_sum", "reduce_mean", "reduce_max"})
      for (int k = 0; k < 3; ++k)
        cases.push_back(reduceCase(rng, op));
    runCases(cases);
  }
}

//===----------------------------------------------------------------------===//
// Softmax, log_softmax, cross-entropy, mse
//===----------------------------------------------------------------------===//

/// Along `axis` of `s`: for each lane, the flat indices of its elements.
std::vector<std::vector<int64_t>> lanes(const Shape &s, int64_t axis) {
  Shape st = stridesOf(s);
  std::vector<std::vector<int64_t>> out;
  for (int64_t i = 0; i < numel(s); ++i) {
    if (unravel(i, s)[axis] != 0)
      continue;
    std::vector<int64_t> lane;
    for (int64_t j = 0; j < s[axis]; ++j)
      lane.push_back(i + j * st[axis]);
    out.push_back(lane);
  }
  return out;
}

/// Stable softmax of one lane: y = exp(x - max) / sum, and log_softmax
/// (x - max) - log(sum).
void softmaxLane(const Vals &x, const std::vector<int64_t> &lane, Refs &y,
                 Refs &logY) {
  double m = -INFINITY;
  for (int64_t i : lane)
    m = std::max(m, x[i]);
  Sum s;
  Refs e;
  for (int64_t i : lane) {
    e.push_back(exp(exact(x[i]) - exact(m)));
    s.add(e.back());
  }
  R total = s.get();
  for (size_t j = 0; j < lane.size(); ++j) {
    y[lane[j]] = e[j] / total;
    logY[lane[j]] = (exact(x[lane[j]]) - exact(m)) - log(total);
  }
}

Case softmaxCase(Rng &rng, bool logSoftmax, int kind) {
  Case c;
  Shape s = rng.shape(1, 3);
  int64_t rank = s.size();
  int64_t axis = rng.integer(-rank, rank - 1);
  int64_t a = axis < 0 ? axis + rank : axis;
  std::string op = logSoftmax ? "log_softmax" : "softmax";
  c.label = op + " " + str(s) + " axis " + std::to_string(axis) + " logits " +
            std::to_string(kind);
  Vals x = c.addF32("x", s, drawLogits(rng, numel(s), kind), true);
  c.body = "%y = fuse." + op + " %x {axis = " + std::to_string(axis) +
           " : i64} : " + typeOf(s) + "\n";
  Refs y(x.size()), logY(x.size());
  auto ls = lanes(s, a);
  for (const auto &lane : ls)
    softmaxLane(x, lane, y, logY);
  Vals w = c.weightedLoss(rng, "y", s, logSoftmax ? logY : y);
  Refs dx(x.size());
  for (const auto &lane : ls) {
    // softmax: y (g - sum g y); log_softmax: g - softmax * sum g.
    Sum s;
    for (int64_t i : lane)
      s.add(logSoftmax ? exact(w[i]) : exact(w[i]) * y[i]);
    R total = s.get();
    for (int64_t i : lane)
      dx[i] = logSoftmax ? exact(w[i]) - y[i] * total
                         : y[i] * (exact(w[i]) - total);
  }
  c.grads = {dx};
  return c;
}

Case crossEntropyCase(Rng &rng, int kind, const std::string &labelType) {
  Case c;
  int64_t n = rng.pick<int64_t>({1, 2, 3, 7, 16, 33});
  int64_t classes = rng.pick<int64_t>({1, 2, 5, 10, 17});
  Shape s = {n, classes};
  c.label = "softmax_cross_entropy " + str(s) + " " + labelType + " logits " +
            std::to_string(kind);
  Vals x = c.addF32("x", s, drawLogits(rng, numel(s), kind), true);
  std::vector<int64_t> labels(n);
  for (int64_t &l : labels)
    l = rng.integer(0, classes - 1);
  Tensor lt = Tensor::empty(*parseDType(labelType), {n});
  for (int64_t i = 0; i < n; ++i) {
    if (labelType == "i8")
      lt.data<int8_t>()[i] = labels[i];
    else if (labelType == "i32")
      lt.data<int32_t>()[i] = labels[i];
    else
      lt.data<int64_t>()[i] = labels[i];
  }
  c.args.push_back({"labels", typeOf({n}, labelType), lt, false});
  c.body = "%y = fuse.softmax_cross_entropy %x, %labels : (" + typeOf(s) +
           ", " + typeOf({n}, labelType) + ") -> tensor<f32>\n";
  Refs y(x.size()), logY(x.size());
  Sum total;
  for (int64_t i = 0; i < n; ++i) {
    std::vector<int64_t> lane;
    for (int64_t j = 0; j < classes; ++j)
      lane.push_back(i * classes + j);
    softmaxLane(x, lane, y, logY);
    total.add(-logY[i * classes + labels[i]]);
  }
  R mean = total.get() / exact(n);
  Vals w = c.weightedLoss(rng, "y", {}, {mean});
  Refs dx(x.size());
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < classes; ++j) {
      R p = y[i * classes + j];
      R diff = j == labels[i] ? p - exact(1) : p;
      dx[i * classes + j] = exact(w[0]) * diff / exact(n);
    }
  c.grads = {dx};
  return c;
}

Case mseCase(Rng &rng) {
  Case c;
  Shape s = rng.shape(1, 3);
  c.label = "mse_loss " + str(s);
  Vals p = c.addRandom(rng, "p", s, Mix::Kinks);
  Vals t = c.addRandom(rng, "t", s, Mix::Kinks);
  c.body = "%y = fuse.mse_loss %p, %t : (" + typeOf(s) + ", " + typeOf(s) +
           ") -> tensor<f32>\n";
  Sum sum;
  for (size_t i = 0; i < p.size(); ++i) {
    R d = exact(p[i]) - exact(t[i]);
    sum.add(d * d);
  }
  R count = exact(static_cast<double>(p.size()));
  Vals w = c.weightedLoss(rng, "y", {}, {sum.get() / count});
  Refs dp, dt;
  for (size_t i = 0; i < p.size(); ++i) {
    R d = exact(2 * w[0]) * (exact(p[i]) - exact(t[i])) / count;
    dp.push_back(d);
    dt.push_back(-d);
  }
  c.grads = {dp, dt};
  return c;
}

Case dropoutCase(Rng &rng) {
  Case c;
  Shape s = rng.shape(1, 3);
  float rate = rng.pick<float>({0.0f, 0.25f, 0.5f, 0.75f});
  int64_t seed = rng.integer(0, 1000), step = rng.integer(0, 1 << 20);
  c.label = "dropout " + str(s) + " rate " + std::to_string(rate) + " seed " +
            std::to_string(seed) + " step " + std::to_string(step);
  Vals x = c.addRandom(rng, "x", s, Mix::Kinks);
  c.args.push_back(
      {"step", "tensor<i64>", Tensor::fromValues<int64_t>({}, {step}), false});
  std::ostringstream os;
  os << "%y = fuse.dropout %x, %step {rate = " << std::fixed << rate
     << " : f32, seed = " << seed << " : i64} : " << typeOf(s) << "\n";
  c.body = os.str();
  uint64_t key = dropout::key(seed, step);
  R scale = exact(dropout::scale(rate));
  Refs y;
  for (size_t i = 0; i < x.size(); ++i)
    y.push_back(dropout::keep(key, i, rate) ? exact(x[i]) * scale : exact(0));
  Vals w = c.weightedLoss(rng, "y", s, y);
  Refs dx;
  for (size_t i = 0; i < x.size(); ++i)
    dx.push_back(dropout::keep(key, i, rate) ? exact(w[i]) * scale : exact(0));
  c.grads = {dx};
  return c;
}

TEST(Oracle, NeuralNetworkOps) {
  for (unsigned seed : kSeeds) {
    Rng rng(500 + seed);
    std::vector<Case> cases;
    for (int kind = 0; kind < 3; ++kind) {
      cases.push_back(softmaxCase(rng, false, kind));
      cases.push_back(softmaxCase(rng, true, kind));
      cases.push_back(crossEntropyCase(
          rng, kind, rng.pick<std::string>({"i8", "i32", "i64"})));
    }
    cases.push_back(mseCase(rng));
    cases.push_back(dropoutCase(rng));
    cases.push_back(dropoutCase(rng));
    runCases(cases);
  }
}

//===----------------------------------------------------------------------===//
// Convolution and pooling
//===----------------------------------------------------------------------===//

struct Conv {
  int64_t n, h, w, c, kh, kw, f;
  Shape strides, padding, dilations;
  int64_t oh() const {
    return (h + padding[0] + padding[1] - dilations[0] * (kh - 1) - 1) /
               strides[0] +
           1;
  }
  int64_t ow() const {
    return (w + padding[2] + padding[3] - dilations[1] * (kw - 1) - 1) /
               strides[1] +
           1;
  }
};

Case convCase(Rng &rng, const Conv &p) {
  Case c;
  Shape xs = {p.n, p.h, p.w, p.c}, ks = {p.kh, p.kw, p.c, p.f};
  Shape ys = {p.n, p.oh(), p.ow(), p.f};
  c.label = "conv2d " + str(xs) + " filter " + str(ks) + " strides" +
            list(p.strides) + " padding" + list(p.padding) + " dilations" +
            list(p.dilations);
  Vals x = c.addRandom(rng, "x", xs, Mix::Plain);
  Vals k = c.addRandom(rng, "k", ks, Mix::Plain);
  c.body = "%y = fuse.conv2d %x, %k {strides = array<i64:" + list(p.strides) +
           ">, padding = array<i64:" + list(p.padding) +
           ">, dilations = array<i64:" + list(p.dilations) + ">} : (" +
           typeOf(xs) + ", " + typeOf(ks) + ") -> " + typeOf(ys) + "\n";
  // Each (output, tap, channel) triple with an in-bounds input element.
  auto forEachTerm =
      [&](const std::function<void(int64_t, int64_t, int64_t)> &visit) {
        for (int64_t b = 0; b < p.n; ++b)
          for (int64_t i = 0; i < p.oh(); ++i)
            for (int64_t j = 0; j < p.ow(); ++j)
              for (int64_t u = 0; u < p.kh; ++u)
                for (int64_t v = 0; v < p.kw; ++v) {
                  int64_t hi =
                      i * p.strides[0] + u * p.dilations[0] - p.padding[0];
                  int64_t wi =
                      j * p.strides[1] + v * p.dilations[1] - p.padding[2];
                  if (hi < 0 || hi >= p.h || wi < 0 || wi >= p.w)
                    continue;
                  for (int64_t ch = 0; ch < p.c; ++ch)
                    for (int64_t f = 0; f < p.f; ++f)
                      visit(((b * p.oh() + i) * p.ow() + j) * p.f + f,
                            ((b * p.h + hi) * p.w + wi) * p.c + ch,
                            ((u * p.kw + v) * p.c + ch) * p.f + f);
                }
      };
  std::vector<Sum> ysum(numel(ys)), dxs(x.size()), dks(k.size());
  forEachTerm([&](int64_t yi, int64_t xi, int64_t ki) {
    ysum[yi].add(exact(x[xi]) * exact(k[ki]));
  });
  Refs y;
  for (const Sum &s : ysum)
    y.push_back(s.get());
  Vals w = c.weightedLoss(rng, "y", ys, y);
  forEachTerm([&](int64_t yi, int64_t xi, int64_t ki) {
    dxs[xi].add(exact(w[yi]) * exact(k[ki]));
    dks[ki].add(exact(w[yi]) * exact(x[xi]));
  });
  Refs dx, dk;
  for (const Sum &s : dxs)
    dx.push_back(s.get());
  for (const Sum &s : dks)
    dk.push_back(s.get());
  c.grads = {dx, dk};
  return c;
}

Conv randomConv(Rng &rng) {
  while (true) {
    Conv p;
    p.n = rng.integer(1, 2);
    p.h = rng.integer(1, 9);
    p.w = rng.integer(1, 9);
    p.c = rng.pick<int64_t>({1, 2, 3, 8});
    p.f = rng.pick<int64_t>({1, 2, 4, 5, 8});
    p.kh = rng.integer(1, 3);
    p.kw = rng.integer(1, 3);
    p.strides = {rng.integer(1, 2), rng.integer(1, 3)};
    p.dilations = {rng.integer(1, 2), rng.integer(1, 2)};
    p.padding = {rng.integer(0, 2), rng.integer(0, 2), rng.integer(0, 2),
                 rng.integer(0, 2)};
    if (p.h + p.padding[0] + p.padding[1] >= p.dilations[0] * (p.kh - 1) + 1 &&
        p.w + p.padding[2] + p.padding[3] >= p.dilations[1] * (p.kw - 1) + 1)
      return p;
  }
}

struct Pool {
  int64_t n, h, w, c;
  Shape window, strides, padding;
  int64_t oh() const {
    return (h + padding[0] + padding[1] - window[0]) / strides[0] + 1;
  }
  int64_t ow() const {
    return (w + padding[2] + padding[3] - window[1]) / strides[1] + 1;
  }
};

Pool randomPool(Rng &rng) {
  while (true) {
    Pool p;
    p.n = rng.integer(1, 2);
    p.h = rng.integer(1, 9);
    p.w = rng.integer(1, 9);
    p.c = rng.pick<int64_t>({1, 3, 8});
    p.window = {rng.integer(1, 3), rng.integer(1, 3)};
    // Overlapping windows (stride < window) share elements.
    p.strides = {rng.integer(1, 3), rng.integer(1, 3)};
    p.padding = {
        rng.integer(0, p.window[0] - 1), rng.integer(0, p.window[0] - 1),
        rng.integer(0, p.window[1] - 1), rng.integer(0, p.window[1] - 1)};
    if (p.h + p.padding[0] + p.padding[1] >= p.window[0] &&
        p.w + p.padding[2] + p.padding[3] >= p.window[1])
      return p;
  }
}

/// max_pool2d or avg_pool2d, optionally of relu(x) (canonicalized to
/// relu(max_pool2d(x)) before differentiation).
Case poolCase(Rng &rng, const Pool &p, bool isMax, bool ofRelu = false) {
  Case c;
  Shape xs = {p.n, p.h, p.w, p.c}, ys = {p.n, p.oh(), p.ow(), p.c};
  std::string op = isMax ? "max_pool2d" : "avg_pool2d";
  c.label = op + (ofRelu ? "(relu) " : " ") + str(xs) + " window" +
            list(p.window) + " strides" + list(p.strides) + " padding" +
            list(p.padding);
  Vals x = c.addRandom(rng, "x", xs, isMax ? Mix::Ties : Mix::Kinks);
  std::string in = "%x";
  if (ofRelu) {
    c.body = "%r = fuse.relu %x : " + typeOf(xs) + "\n";
    in = "%r";
  }
  c.body += "%y = fuse." + op + " " + in +
            " {window = array<i64:" + list(p.window) +
            ">, strides = array<i64:" + list(p.strides) +
            ">, padding = array<i64:" + list(p.padding) + ">} : (" +
            typeOf(xs) + ") -> " + typeOf(ys) + "\n";
  Vals input = x;
  if (ofRelu)
    for (double &v : input)
      v = std::max(v, 0.0);
  // For each output, its window's in-bounds input elements in row-major
  // window order.
  auto window = [&](int64_t b, int64_t i, int64_t j, int64_t ch) {
    std::vector<int64_t> elems;
    for (int64_t u = 0; u < p.window[0]; ++u)
      for (int64_t v = 0; v < p.window[1]; ++v) {
        int64_t hi = i * p.strides[0] + u - p.padding[0];
        int64_t wi = j * p.strides[1] + v - p.padding[2];
        if (hi >= 0 && hi < p.h && wi >= 0 && wi < p.w)
          elems.push_back(((b * p.h + hi) * p.w + wi) * p.c + ch);
      }
    return elems;
  };
  Refs y;
  std::vector<std::vector<int64_t>> windows;
  for (int64_t b = 0; b < p.n; ++b)
    for (int64_t i = 0; i < p.oh(); ++i)
      for (int64_t j = 0; j < p.ow(); ++j)
        for (int64_t ch = 0; ch < p.c; ++ch) {
          windows.push_back(window(b, i, j, ch));
          const auto &elems = windows.back();
          if (isMax) {
            double m = -INFINITY;
            for (int64_t e : elems)
              m = std::max(m, input[e]);
            y.push_back(exact(m));
          } else {
            Sum s;
            for (int64_t e : elems)
              s.add(exact(input[e]));
            y.push_back(s.get() / exact(elems.size()));
          }
        }
  Vals w = c.weightedLoss(rng, "y", ys, y);
  std::vector<Sum> dxs(x.size());
  for (size_t o = 0; o < windows.size(); ++o) {
    const auto &elems = windows[o];
    if (isMax) {
      // The first maximum in row-major window order gets the gradient;
      // through relu, only if it is positive.
      for (int64_t e : elems)
        if (input[e] == y[o].v) {
          if (!ofRelu || x[e] > 0)
            dxs[e].add(exact(w[o]));
          break;
        }
    } else {
      for (int64_t e : elems)
        dxs[e].add(exact(w[o]) / exact(elems.size()));
    }
  }
  Refs dx;
  for (const Sum &s : dxs)
    dx.push_back(s.get());
  c.grads = {dx};
  return c;
}

TEST(Oracle, ConvolutionAndPooling) {
  for (unsigned seed : kSeeds) {
    Rng rng(600 + seed);
    std::vector<Case> cases;
    for (int k = 0; k < 3; ++k)
      cases.push_back(convCase(rng, randomConv(rng)));
    for (int k = 0; k < 3; ++k)
      cases.push_back(poolCase(rng, randomPool(rng), /*isMax=*/true));
    for (int k = 0; k < 2; ++k)
      cases.push_back(poolCase(rng, randomPool(rng), /*isMax=*/false));
    cases.push_back(poolCase(rng, randomPool(rng), true, /*ofRelu=*/true));
    runCases(cases);
  }
  // 3x3, whole registers of channels and filters, even output: with
  // EngineOptions::winograd (off by default), Winograd F(4x4, 3x3) for the
  // forward pass and the filter gradient; the same bound holds.
  Rng rng(610);
  Conv winograd{2, 8, 8, 8, 3, 3, 8, {1, 1}, {1, 1, 1, 1}, {1, 1}};
  EngineOptions options;
  options.winograd = true;
  runCases({convCase(rng, winograd), convCase(rng, winograd)}, options);
}

//===----------------------------------------------------------------------===//
// Optimizers, step by step
//===----------------------------------------------------------------------===//

/// One optimizer op: its attributes and the reference of one update of one
/// parameter (the states in the op's per-parameter order).
struct OptimizerConfig {
  std::string op, attrs;
  unsigned statesPerParam;
  double initialState = 0;
  std::vector<Shape> shapes;
  std::function<void(Refs &p, const Vals &g, std::vector<Refs> &s, float lr,
                     int64_t step)>
      reference;
};

std::string f64Attr(const std::string &name, double v) {
  std::ostringstream os;
  os.precision(17);
  os << name << " = " << std::scientific << v << " : f64";
  return os.str();
}

std::string joinAttrs(const std::vector<std::string> &attrs) {
  std::string out;
  for (const std::string &a : attrs)
    out += (out.empty() ? "{" : ", ") + a;
  return out.empty() ? "" : out + "}";
}

OptimizerConfig randomSgd(Rng &rng) {
  double momentum = rng.chance(0.25) ? 0 : rng.uniform(0.1, 0.99);
  bool nesterov = momentum > 0 && rng.chance(0.4);
  double dampening = nesterov || rng.chance(0.5) ? 0 : rng.uniform(0, 0.5);
  double decay = rng.chance(0.4) ? 0 : rng.uniform(0, 0.1);
  std::vector<std::string> attrs = {f64Attr("momentum", momentum),
                                    f64Attr("dampening", dampening),
                                    f64Attr("weight_decay", decay)};
  if (nesterov)
    attrs.push_back("nesterov");
  OptimizerConfig c{"sgd", joinAttrs(attrs), momentum != 0 ? 1u : 0u};
  c.reference = [=](Refs &p, const Vals &grad, std::vector<Refs> &s, float lr,
                    int64_t step) {
    for (size_t e = 0; e < p.size(); ++e) {
      R g = exact(grad[e]) + rounded(decay) * p[e];
      if (momentum != 0) {
        R &buf = s[0][e];
        buf = step == 0 ? g
                        : rounded(momentum) * buf + rounded(1 - dampening) * g;
        g = nesterov ? g + rounded(momentum) * buf : buf;
      }
      p[e] = p[e] - exact(lr) * g;
    }
  };
  return c;
}

OptimizerConfig randomAdam(Rng &rng) {
  double beta1 = rng.uniform(0.5, 0.99), beta2 = rng.uniform(0.9, 0.9999);
  double eps = rng.logUniform(1e-8, 1e-4);
  double decay = rng.chance(0.4) ? 0 : rng.uniform(0, 0.1);
  bool amsgrad = rng.chance(0.5), decoupled = rng.chance(0.5);
  std::vector<std::string> attrs = {
      f64Attr("beta1", beta1), f64Attr("beta2", beta2), f64Attr("eps", eps),
      f64Attr("weight_decay", decay)};
  if (amsgrad)
    attrs.push_back("amsgrad");
  if (decoupled)
    attrs.push_back("decoupled");
  OptimizerConfig c{"adam", joinAttrs(attrs), amsgrad ? 3u : 2u};
  c.reference = [=](Refs &p, const Vals &grad, std::vector<Refs> &s, float lr,
                    int64_t step) {
    double t = static_cast<double>(step + 1);
    double c1 = 1 - std::pow(beta1, t), c2 = 1 - std::pow(beta2, t);
    // The per-call scalars, computed in f64 and rounded once.
    R stepSize = rounded(double(lr) / c1), invC2 = rounded(1 / std::sqrt(c2));
    for (size_t e = 0; e < p.size(); ++e) {
      R g = exact(grad[e]);
      if (decoupled)
        p[e] = p[e] * (exact(1) - exact(lr) * rounded(decay));
      else
        g = g + rounded(decay) * p[e];
      R &m = s[0][e], &v = s[1][e];
      m = rounded(beta1) * m + rounded(1 - beta1) * g;
      v = rounded(beta2) * v + rounded(1 - beta2) * (g * g);
      R vhat = v;
      if (amsgrad)
        vhat = s[2][e] = max(s[2][e], v);
      p[e] = p[e] - stepSize * m / (sqrt(vhat) * invC2 + rounded(eps));
    }
  };
  return c;
}

OptimizerConfig randomAdagrad(Rng &rng) {
  double lrDecay = rng.chance(0.5) ? 0 : rng.uniform(0, 0.1);
  double initial = rng.chance(0.5) ? 0 : rng.uniform(0, 0.5);
  double eps = rng.logUniform(1e-10, 1e-4);
  double decay = rng.chance(0.4) ? 0 : rng.uniform(0, 0.1);
  OptimizerConfig c{
      "adagrad",
      joinAttrs({f64Attr("lr_decay", lrDecay),
                 f64Attr("initial_accumulator_value", initial),
                 f64Attr("eps", eps), f64Attr("weight_decay", decay)}),
      1u, initial};
  c.reference = [=](Refs &p, const Vals &grad, std::vector<Refs> &s, float lr,
                    int64_t step) {
    R clr = rounded(double(lr) / (1 + step * lrDecay));
    for (size_t e = 0; e < p.size(); ++e) {
      R g = exact(grad[e]) + rounded(decay) * p[e];
      s[0][e] = s[0][e] + g * g;
      p[e] = p[e] - clr * g / (sqrt(s[0][e]) + rounded(eps));
    }
  };
  return c;
}

OptimizerConfig randomRmsprop(Rng &rng) {
  double alpha = rng.uniform(0.8, 0.999), eps = rng.logUniform(1e-8, 1e-4);
  double momentum = rng.chance(0.5) ? 0 : rng.uniform(0.1, 0.95);
  bool centered = rng.chance(0.5);
  double decay = rng.chance(0.4) ? 0 : rng.uniform(0, 0.1);
  std::vector<std::string> attrs = {
      f64Attr("alpha", alpha), f64Attr("eps", eps),
      f64Attr("momentum", momentum), f64Attr("weight_decay", decay)};
  if (centered)
    attrs.push_back("centered");
  OptimizerConfig c{"rmsprop", joinAttrs(attrs),
                    1u + centered + (momentum != 0)};
  c.reference = [=](Refs &p, const Vals &grad, std::vector<Refs> &s, float lr,
                    int64_t) {
    for (size_t e = 0; e < p.size(); ++e) {
      R g = exact(grad[e]) + rounded(decay) * p[e];
      size_t k = 0;
      R &square = s[k++][e];
      square = rounded(alpha) * square + rounded(1 - alpha) * (g * g);
      R avg;
      if (centered) {
        R &mean = s[k++][e];
        mean = rounded(alpha) * mean + rounded(1 - alpha) * g;
        avg = sqrt(square - mean * mean) + rounded(eps);
      } else {
        avg = sqrt(square) + rounded(eps);
      }
      if (momentum != 0) {
        R &buf = s[k++][e];
        buf = rounded(momentum) * buf + g / avg;
        p[e] = p[e] - exact(lr) * buf;
      } else {
        p[e] = p[e] - exact(lr) * g / avg;
      }
    }
  };
  return c;
}

OptimizerConfig randomLamb(Rng &rng) {
  double beta1 = rng.uniform(0.5, 0.99), beta2 = rng.uniform(0.9, 0.9999);
  double eps = rng.logUniform(1e-8, 1e-4);
  double decay = rng.chance(0.4) ? 0 : rng.uniform(0, 0.1);
  OptimizerConfig c{
      "lamb",
      joinAttrs({f64Attr("beta1", beta1), f64Attr("beta2", beta2),
                 f64Attr("eps", eps), f64Attr("weight_decay", decay)}),
      2u};
  c.reference = [=](Refs &p, const Vals &grad, std::vector<Refs> &s, float lr,
                    int64_t step) {
    double t = static_cast<double>(step + 1);
    R invC1 = rounded(1 / (1 - std::pow(beta1, t)));
    R invC2 = rounded(1 / (1 - std::pow(beta2, t)));
    Refs u(p.size());
    Sum pNorm, uNorm;
    for (size_t e = 0; e < p.size(); ++e) {
      R g = exact(grad[e]);
      R &m = s[0][e], &v = s[1][e];
      m = rounded(beta1) * m + rounded(1 - beta1) * g;
      v = rounded(beta2) * v + rounded(1 - beta2) * (g * g);
      u[e] = (m * invC1) / (sqrt(v * invC2) + rounded(eps)) +
             rounded(decay) * p[e];
      pNorm.add(p[e] * p[e]);
      uNorm.add(u[e] * u[e]);
    }
    R pn = sqrt(pNorm.get()), un = sqrt(uNorm.get());
    R trust = pn.v > 0 && un.v > 0 ? pn / un : exact(1);
    R scale = exact(lr) * trust;
    for (size_t e = 0; e < p.size(); ++e)
      p[e] = p[e] - scale * u[e];
  };
  return c;
}

/// Gradients: mostly moderate, some exact zeros, some large or tiny (kept
/// above FLT_MIN when squared, so flushing denormals does not apply).
std::vector<float> drawGradient(Rng &rng, int64_t n) {
  std::vector<float> g(n);
  for (float &x : g) {
    double u = rng.uniform(0, 1);
    x = u < 0.1    ? 0.0f
        : u < 0.15 ? rng.sign() * rng.logUniform(1e2, 1e3)
        : u < 0.2  ? rng.sign() * rng.logUniform(1e-15, 1e-10)
                   : rng.uniform(-2, 2);
  }
  return g;
}

/// Runs every config's op in one function for `steps` steps, each compiled
/// step checked against one reference step from the same inputs.
void runOptimizers(Rng &rng, std::vector<OptimizerConfig> &configs, int steps) {
  std::ostringstream os;
  std::string args = "%lr: tensor<f32>, %step: tensor<i64>", results, rets, ops;
  size_t numArgs = 0, numResults = 0;
  for (size_t k = 0; k < configs.size(); ++k) {
    OptimizerConfig &c = configs[k];
    size_t n = c.shapes.size();
    std::vector<std::string> names[3], types[3];
    for (int group = 0; group < 3; ++group) {
      size_t count = group < 2 ? n : n * c.statesPerParam;
      for (size_t i = 0; i < count; ++i) {
        names[group].push_back("%v" + std::to_string(numArgs++));
        types[group].push_back(typeOf(c.shapes[i % n]));
        args += ", " + names[group].back() + ": " + types[group].back();
      }
    }
    auto join = [](const std::vector<std::string> &xs) {
      std::string out;
      for (size_t i = 0; i < xs.size(); ++i)
        out += (i ? ", " : "") + xs[i];
      return out;
    };
    std::vector<std::string> outTypes = types[0];
    outTypes.insert(outTypes.end(), types[2].begin(), types[2].end());
    std::string r = "%r" + std::to_string(k);
    ops += r + ":" + std::to_string(outTypes.size()) + " = fuse." + c.op +
           " %lr, %step params(" + join(names[0]) + " : " + join(types[0]) +
           ") grads(" + join(names[1]) + " : " + join(types[0]) + ") states(" +
           (names[2].empty() ? "" : join(names[2]) + " : " + join(types[2])) +
           ") " + c.attrs + " -> " + join(outTypes) + "\n";
    for (size_t j = 0; j < outTypes.size(); ++j) {
      rets += (numResults++ ? ", " : "") + r + "#" + std::to_string(j);
      results += (results.empty() ? "" : ", ") + outTypes[j];
    }
  }
  std::string source = "func.func @step(" + args + ") -> (" + results +
                       ") {\n" + ops + "return " + rets + " : " + results +
                       "\n}\n";
  SCOPED_TRACE(source);
  auto engine = makeEngine(source);
  Function &f = unwrap(engine->lookup("step"));

  // Parameters and states (f32, as the compiled code holds them).
  std::vector<std::vector<Vals>> params(configs.size()), states(configs.size());
  for (size_t k = 0; k < configs.size(); ++k) {
    for (const Shape &s : configs[k].shapes) {
      std::vector<float> p = drawAll(rng, numel(s), Mix::Plain);
      params[k].push_back(Vals(p.begin(), p.end()));
    }
    for (unsigned j = 0; j < configs[k].statesPerParam; ++j)
      for (const Shape &s : configs[k].shapes)
        states[k].push_back(Vals(numel(s), configs[k].initialState));
  }
  auto toTensor = [](const Vals &v, const Shape &s) {
    return Tensor::fromValues<float>(s, std::vector<float>(v.begin(), v.end()));
  };
  int64_t step0 = rng.integer(0, 3);
  for (int64_t step = step0; step < step0 + steps; ++step) {
    float lr = rng.logUniform(1e-4, 1e-1);
    std::vector<Tensor> callArgs = {Tensor::fromValues<float>({}, {lr}),
                                    Tensor::fromValues<int64_t>({}, {step})};
    std::vector<std::vector<Vals>> grads(configs.size());
    for (size_t k = 0; k < configs.size(); ++k) {
      const auto &shapes = configs[k].shapes;
      for (size_t i = 0; i < shapes.size(); ++i)
        callArgs.push_back(toTensor(params[k][i], shapes[i]));
      for (size_t i = 0; i < shapes.size(); ++i) {
        std::vector<float> g = drawGradient(rng, numel(shapes[i]));
        grads[k].push_back(Vals(g.begin(), g.end()));
        callArgs.push_back(toTensor(grads[k].back(), shapes[i]));
      }
      for (size_t j = 0; j < states[k].size(); ++j)
        callArgs.push_back(toTensor(states[k][j], shapes[j % shapes.size()]));
    }
    std::vector<Tensor> out = unwrap(f.call(callArgs));
    size_t r = 0;
    for (size_t k = 0; k < configs.size(); ++k) {
      OptimizerConfig &c = configs[k];
      size_t n = c.shapes.size();
      Case label;
      label.label = c.op + " " + c.attrs + " step " + std::to_string(step);
      std::vector<Refs> refP(n);
      for (size_t i = 0; i < n; ++i) {
        std::vector<Refs> s(c.statesPerParam);
        for (unsigned j = 0; j < c.statesPerParam; ++j)
          s[j] = exactAll(states[k][j * n + i]);
        refP[i] = exactAll(params[k][i]);
        c.reference(refP[i], grads[k][i], s, lr, step);
        for (unsigned j = 0; j < c.statesPerParam; ++j) {
          const Tensor &got = out[r + n + j * n + i];
          expectClose(label,
                      "state " + std::to_string(j) + " of parameter " +
                          std::to_string(i),
                      got, s[j], c.shapes[i]);
          Tensor cg = got.contiguousCopy();
          states[k][j * n + i] =
              Vals(cg.data<float>(), cg.data<float>() + cg.numElements());
        }
        Tensor cp = out[r + i].contiguousCopy();
        expectClose(label, "parameter " + std::to_string(i), cp, refP[i],
                    c.shapes[i]);
        params[k][i] =
            Vals(cp.data<float>(), cp.data<float>() + cp.numElements());
      }
      r += n * (1 + c.statesPerParam);
    }
  }
  printWorstRatios();
}

TEST(Oracle, Optimizers) {
  for (unsigned seed : kSeeds) {
    Rng rng(700 + seed);
    std::vector<OptimizerConfig> configs;
    for (int k = 0; k < 2; ++k) {
      configs.push_back(randomSgd(rng));
      configs.push_back(randomAdam(rng));
      configs.push_back(randomAdagrad(rng));
      configs.push_back(randomRmsprop(rng));
      configs.push_back(randomLamb(rng));
    }
    for (OptimizerConfig &c : configs)
      c.shapes = {rng.shape(1, 3, 600), rng.shape(0, 2, 600)};
    runOptimizers(rng, configs, /*steps=*/6);
  }
}

} // namespace
