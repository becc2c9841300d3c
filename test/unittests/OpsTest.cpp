//===- OpsTest.cpp - Every fuse op, JIT-compiled, against C++ references --===//
//
// Each test compiles small functions through the whole pipeline (specialized
// to the call's shapes), runs them and checks every element against a plain
// C++ reference computed in double precision from the same f32 inputs.
//
// Tolerances, |got - ref| <= atol + rtol * |ref| unless said otherwise:
//   - exact: integer ops, compare, select, constant, shape ops, neg, abs,
//     relu, max, min, max_pool2d, dropout (the reference does the same single
//     f32 multiply). NaN must match NaN and infinities must match exactly.
//   - f32 add sub mul div square sqrt rsqrt: rtol 1e-6 (a correctly rounded
//     result is within 6e-8; 1e-6 leaves room for a 1-2 ulp reciprocal).
//   - transcendental (exp log tanh sigmoid pow), lowered to polynomial
//     approximations: rtol 1e-5 plus atol 1e-6 (log near 1, tanh near 0).
//   - sums of n terms (reduce_sum/mean, matmul, conv2d, avg_pool2d,
//     mse_loss): (n + 2) * FLT_EPSILON * sum |term|, the classic bound of an
//     f32 sum in any order plus the rounding of each term; means divide it by
//     the count (plus one rounding). For n in the millions that bound is too
//     loose to notice a lost element (and sequential f32 sums really are off
//     by ~1e-3 there), so those tests use small integer-valued f32 inputs
//     whose sums are exact in any order, and expect exact results.
//   - softmax: 1e-5 relative plus (n + 2) * FLT_EPSILON relative for the sum
//     of n exponentials along the axis; log_softmax: 1e-5 relative plus
//     1e-6 + (n + 2) * FLT_EPSILON absolute; softmax_cross_entropy: that
//     log_softmax tolerance on the loss plus (N + 2) * FLT_EPSILON relative
//     for the batch mean.
//
//===----------------------------------------------------------------------===//

#include "TestUtils.h"

#include "Fuse/IR/DropoutRNG.h"

#include "llvm/ADT/STLExtras.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

using namespace fuse;
using namespace fuse::testing;

namespace {

using Shape = std::vector<int64_t>;

constexpr double kEps = FLT_EPSILON;
constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

// Tolerance families (see the file comment).
constexpr double kArithRtol = 1e-6;
constexpr double kMathRtol = 1e-5, kMathAtol = 1e-6;
constexpr double kSoftmaxRtol = 1e-5, kSoftmaxAtol = 1e-6;

//===----------------------------------------------------------------------===//
// Running code
//===----------------------------------------------------------------------===//

/// How 3x3 convolutions are computed: direct sums (the default) or
/// Winograd's transforms (EngineOptions::winograd).
enum class Conv { Direct, Winograd };

/// The tolerance of a convolution's sums in multiples of a direct sum's:
/// Winograd's transforms round differently, within 4 times.
double slackOf(Conv algorithm) { return algorithm == Conv::Winograd ? 4 : 1; }

const char *nameOf(Conv algorithm) {
  return algorithm == Conv::Winograd ? "winograd" : "direct";
}

/// A loaded module whose functions are called with errors reported as test
/// failures (and an empty result list) instead of aborting.
class Jit {
public:
  Jit(Conv algorithm, const std::string &source) : Jit(source, algorithm) {}
  explicit Jit(const std::string &source, Conv algorithm = Conv::Direct)
      : source_(source) {
    EngineOptions options;
    options.diskCache = false;
    options.winograd = algorithm == Conv::Winograd;
    // Sweeping shapes through one function is the point here, not a retrace.
    options.retraceWarningThreshold = 1000;
    llvm::Expected<std::unique_ptr<Engine>> engine = Engine::create(options);
    if (!engine) {
      ADD_FAILURE() << llvm::toString(engine.takeError());
      return;
    }
    engine_ = std::move(*engine);
    if (llvm::Error e = engine_->loadString(source)) {
      ADD_FAILURE() << llvm::toString(std::move(e)) << "\nin:\n" << source;
      engine_.reset();
    }
  }

  std::vector<Tensor> call(llvm::StringRef name, llvm::ArrayRef<Tensor> args) {
    if (!engine_)
      return {};
    llvm::Expected<Function &> f = engine_->lookup(name);
    if (!f) {
      ADD_FAILURE() << llvm::toString(f.takeError());
      return {};
    }
    llvm::Expected<std::vector<Tensor>> results = f->call(args);
    if (!results) {
      ADD_FAILURE() << "@" << name.str() << ": "
                    << llvm::toString(results.takeError()) << "\nin:\n"
                    << source_;
      return {};
    }
    return std::move(*results);
  }

  /// The error of a call expected to fail ("" if it succeeded).
  std::string error(llvm::StringRef name, llvm::ArrayRef<Tensor> args) {
    if (!engine_)
      return "";
    llvm::Expected<Function &> f = engine_->lookup(name);
    if (!f)
      return llvm::toString(f.takeError());
    return errorOf(f->call(args));
  }

private:
  std::string source_;
  std::unique_ptr<Engine> engine_;
};

//===----------------------------------------------------------------------===//
// Shapes and indices
//===----------------------------------------------------------------------===//

int64_t product(llvm::ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

/// Calls fn(index, linear) for every index of `shape` in row-major order.
template <typename Fn> void forEachIndex(llvm::ArrayRef<int64_t> shape, Fn fn) {
  int64_t n = product(shape);
  llvm::SmallVector<int64_t, 6> index(shape.size(), 0);
  for (int64_t i = 0; i < n; ++i) {
    fn(llvm::ArrayRef<int64_t>(index), i);
    for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
      if (++index[d] < shape[d])
        break;
      index[d] = 0;
    }
  }
}

/// The row-major offset into an operand of `shape` that NumPy broadcasting
/// reads for the result element at `index`.
int64_t broadcastOffset(llvm::ArrayRef<int64_t> index,
                        llvm::ArrayRef<int64_t> shape) {
  size_t lead = index.size() - shape.size();
  int64_t offset = 0;
  for (size_t d = 0; d < shape.size(); ++d)
    offset = offset * shape[d] + (shape[d] == 1 ? 0 : index[lead + d]);
  return offset;
}

Shape broadcastShapes(llvm::ArrayRef<int64_t> a, llvm::ArrayRef<int64_t> b) {
  size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t d = 0; d < rank; ++d) {
    int64_t x = d + a.size() >= rank ? a[d + a.size() - rank] : 1;
    int64_t y = d + b.size() >= rank ? b[d + b.size() - rank] : 1;
    out[d] = x == 1 ? y : x;
  }
  return out;
}

/// "tensor<?x3xf32>" for ({-1, 3}, "f32").
std::string tensorType(llvm::ArrayRef<int64_t> shape, llvm::StringRef element) {
  std::string s = "tensor<";
  for (int64_t d : shape)
    s += (d < 0 ? std::string("?") : std::to_string(d)) + "x";
  return s + element.str() + ">";
}

std::string shapeString(llvm::ArrayRef<int64_t> shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "]";
}

//===----------------------------------------------------------------------===//
// Inputs
//===----------------------------------------------------------------------===//

/// Uniform random integers in [lo, hi].
template <typename T>
Tensor randomInts(llvm::ArrayRef<int64_t> shape, unsigned seed, int64_t lo,
                  int64_t hi) {
  Tensor t = Tensor::empty(dtypeOf<T>(), shape);
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int64_t> dist(lo, hi);
  for (int64_t i = 0; i < t.numElements(); ++i)
    t.data<T>()[i] = static_cast<T>(dist(rng));
  return t;
}

/// A 0-d tensor.
template <typename T> Tensor scalarTensor(T value) {
  Tensor t = Tensor::empty(dtypeOf<T>(), {});
  t.data<T>()[0] = value;
  return t;
}

/// f32 values drawn from `values`.
Tensor choiceTensor(llvm::ArrayRef<int64_t> shape, unsigned seed,
                    llvm::ArrayRef<float> values) {
  Tensor t = Tensor::empty(DType::F32, shape);
  std::mt19937 rng(seed);
  std::uniform_int_distribution<size_t> dist(0, values.size() - 1);
  for (int64_t i = 0; i < t.numElements(); ++i)
    t.data<float>()[i] = values[dist(rng)];
  return t;
}

/// Element `linear` of a row-major tensor as a double (any dtype used here).
double valueAt(const Tensor &t, int64_t linear) {
  switch (t.dtype()) {
  case DType::F32:
    return t.data<float>()[linear];
  case DType::I32:
    return t.data<int32_t>()[linear];
  case DType::I64:
    return static_cast<double>(t.data<int64_t>()[linear]);
  case DType::I1:
    return t.data<uint8_t>()[linear];
  default:
    ADD_FAILURE() << "unexpected dtype " << dtypeName(t.dtype()).str();
    return 0;
  }
}

/// Element `linear` of a row-major integer tensor.
int64_t intAt(const Tensor &t, int64_t linear) {
  switch (t.dtype()) {
  case DType::I32:
    return t.data<int32_t>()[linear];
  case DType::I64:
    return t.data<int64_t>()[linear];
  case DType::I8:
    return t.data<int8_t>()[linear];
  case DType::I16:
    return t.data<int16_t>()[linear];
  case DType::I1:
    return t.data<uint8_t>()[linear];
  default:
    ADD_FAILURE() << "not an integer dtype: " << dtypeName(t.dtype()).str();
    return 0;
  }
}

//===----------------------------------------------------------------------===//
// Checks
//===----------------------------------------------------------------------===//

::testing::AssertionResult hasType(const Tensor &t, DType dtype,
                                   llvm::ArrayRef<int64_t> shape) {
  if (t.dtype() != dtype)
    return ::testing::AssertionFailure()
           << "dtype " << dtypeName(t.dtype()).str() << ", expected "
           << dtypeName(dtype).str();
  if (t.shape() != shape)
    return ::testing::AssertionFailure() << "shape " << shapeString(t.shape())
                                         << ", expected " << shapeString(shape);
  if (!t.isContiguous())
    return ::testing::AssertionFailure() << "result is not contiguous";
  return ::testing::AssertionSuccess();
}

/// Every element of the f32 tensor `got` against `ref` within `tol(i)`; NaN
/// must match NaN and an infinity must match exactly. Lists at most 8
/// mismatches.
::testing::AssertionResult allClose(const Tensor &got,
                                    llvm::ArrayRef<int64_t> shape,
                                    llvm::ArrayRef<double> ref,
                                    llvm::function_ref<double(int64_t)> tol) {
  if (::testing::AssertionResult r = hasType(got, DType::F32, shape); !r)
    return r;
  if (static_cast<int64_t>(ref.size()) != product(shape))
    return ::testing::AssertionFailure() << "bad reference size";
  int64_t bad = 0;
  std::ostringstream os;
  for (int64_t i = 0; i < static_cast<int64_t>(ref.size()); ++i) {
    double g = got.data<float>()[i], r = ref[i];
    bool ok;
    if (std::isnan(r))
      ok = std::isnan(g);
    else if (std::isinf(r))
      ok = g == r;
    else
      ok = !std::isnan(g) && std::abs(g - r) <= tol(i);
    if (!ok && bad++ < 8)
      os << "\n  [" << i << "] got " << g << ", expected " << r
         << " (tolerance " << tol(i) << ")";
  }
  if (bad)
    return ::testing::AssertionFailure()
           << bad << " of " << ref.size() << " elements differ:" << os.str();
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult allClose(const Tensor &got,
                                    llvm::ArrayRef<int64_t> shape,
                                    llvm::ArrayRef<double> ref, double rtol,
                                    double atol) {
  return allClose(got, shape, ref,
                  [&](int64_t i) { return atol + rtol * std::abs(ref[i]); });
}

::testing::AssertionResult allClose(const Tensor &got,
                                    llvm::ArrayRef<int64_t> shape,
                                    llvm::ArrayRef<double> ref,
                                    llvm::ArrayRef<double> tol) {
  return allClose(got, shape, ref, [&](int64_t i) { return tol[i]; });
}

/// Exact comparison of an integer (or i1) tensor.
::testing::AssertionResult allEqual(const Tensor &got, DType dtype,
                                    llvm::ArrayRef<int64_t> shape,
                                    llvm::ArrayRef<int64_t> ref) {
  if (::testing::AssertionResult r = hasType(got, dtype, shape); !r)
    return r;
  int64_t bad = 0;
  std::ostringstream os;
  for (int64_t i = 0; i < static_cast<int64_t>(ref.size()); ++i) {
    int64_t g = intAt(got, i);
    if (g != ref[i] && bad++ < 8)
      os << "\n  [" << i << "] got " << g << ", expected " << ref[i];
  }
  if (bad)
    return ::testing::AssertionFailure()
           << bad << " of " << ref.size() << " elements differ:" << os.str();
  return ::testing::AssertionSuccess();
}

/// The tolerance of an f32 sum of `n` terms whose magnitudes add up to
/// `absSum` (see the file comment).
double sumTol(int64_t n, double absSum) {
  return static_cast<double>(n + 2) * kEps * absSum;
}

/// f32 tensors of integers in [lo, hi]: their sums are exact in f32 while
/// every partial sum stays below 2^24 in magnitude.
Tensor integerValued(llvm::ArrayRef<int64_t> shape, unsigned seed, int lo,
                     int hi) {
  Tensor t = Tensor::empty(DType::F32, shape);
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> dist(lo, hi);
  for (int64_t i = 0; i < t.numElements(); ++i)
    t.data<float>()[i] = static_cast<float>(dist(rng));
  return t;
}

//===----------------------------------------------------------------------===//
// Constants
//===----------------------------------------------------------------------===//

TEST(OpsConstant, ConstantsAndFoldedConstants) {
  Jit jit(R"mlir(
func.func @consts(%x: tensor<?x4xf32>)
    -> (tensor<?x4xf32>, tensor<3xi32>, tensor<2x2xf32>, tensor<2xi64>) {
  %c = fuse.constant dense<[1.5, -2.0, 0.25, 3.0]> : tensor<4xf32>
  %y = fuse.add %x, %c : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  %i = fuse.constant dense<[7, -3, 2147483647]> : tensor<3xi32>
  %m = fuse.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %l = fuse.constant dense<[-5000000000, 1]> : tensor<2xi64>
  return %y, %i, %m, %l : tensor<?x4xf32>, tensor<3xi32>, tensor<2x2xf32>, tensor<2xi64>
}
// Everything here folds at compile time; the numbers must still be right.
func.func @folded() -> (tensor<3xf32>, tensor<2x3xf32>, tensor<f32>) {
  %c = fuse.constant dense<[0.5, 1.0, 2.0]> : tensor<3xf32>
  %e = fuse.exp %c : tensor<3xf32>
  %s = fuse.mul %e, %c : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %b = fuse.constant dense<[[1.0], [-1.0]]> : tensor<2x1xf32>
  %t = fuse.sub %c, %b : (tensor<3xf32>, tensor<2x1xf32>) -> tensor<2x3xf32>
  %r = fuse.reduce_sum %t {axes = array<i64: 0, 1>} : (tensor<2x3xf32>) -> tensor<f32>
  return %s, %t, %r : tensor<3xf32>, tensor<2x3xf32>, tensor<f32>
}
)mlir");
  Tensor x = randomTensor({3, 4}, 11);
  std::vector<Tensor> out = jit.call("consts", {x});
  ASSERT_EQ(out.size(), 4u);
  const float c[4] = {1.5f, -2.0f, 0.25f, 3.0f};
  std::vector<double> y;
  for (int64_t i = 0; i < 12; ++i)
    y.push_back(x.data<float>()[i] + c[i % 4]);
  EXPECT_TRUE(allClose(out[0], {3, 4}, y, kArithRtol, 0));
  EXPECT_TRUE(allEqual(out[1], DType::I32, {3}, {7, -3, 2147483647}));
  EXPECT_TRUE(allClose(out[2], {2, 2}, {1, 2, 3, 4}, 0, 0));
  EXPECT_TRUE(allEqual(out[3], DType::I64, {2}, {-5000000000LL, 1}));

  out = jit.call("folded", {});
  ASSERT_EQ(out.size(), 3u);
  EXPECT_TRUE(allClose(out[0], {3},
                       {0.5 * std::exp(0.5), std::exp(1.0), 2 * std::exp(2.0)},
                       kMathRtol, 0));
  EXPECT_TRUE(allClose(out[1], {2, 3}, {-0.5, 0, 1, 1.5, 2, 3}, 0, 0));
  EXPECT_TRUE(allClose(out[2], {}, {7.0}, 0, 0));
}

//===----------------------------------------------------------------------===//
// Unary element-wise ops
//===----------------------------------------------------------------------===//

struct UnaryCase {
  const char *name;
  float lo, hi; // the input range
  double (*ref)(double);
  double rtol, atol; // 0, 0: exact
};

double refNeg(double x) { return -x; }
double refAbs(double x) { return std::abs(x); }
double refSquare(double x) { return x * x; }
double refRelu(double x) { return std::isnan(x) ? x : std::max(x, 0.0); }
double refExp(double x) { return std::exp(x); }
double refLog(double x) { return std::log(x); }
double refSqrt(double x) { return std::sqrt(x); }
double refRsqrt(double x) { return 1.0 / std::sqrt(x); }
double refTanh(double x) { return std::tanh(x); }
double refSigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

const UnaryCase kUnaryCases[] = {
    {"neg", -10, 10, refNeg, 0, 0},
    {"abs", -10, 10, refAbs, 0, 0},
    {"square", -10, 10, refSquare, kArithRtol, 0},
    {"relu", -10, 10, refRelu, 0, 0},
    {"exp", -20, 20, refExp, kMathRtol, kMathAtol},
    {"log", 1e-3f, 100, refLog, kMathRtol, kMathAtol},
    {"sqrt", 0, 100, refSqrt, kArithRtol, 0},
    {"rsqrt", 1e-3f, 100, refRsqrt, kArithRtol, 0},
    {"tanh", -6, 6, refTanh, kMathRtol, kMathAtol},
    {"sigmoid", -20, 20, refSigmoid, kMathRtol, kMathAtol},
};

std::string unarySource(llvm::StringRef op, llvm::ArrayRef<int64_t> shape,
                        llvm::StringRef element = "f32") {
  std::string t = tensorType(shape, element);
  return "func.func @f(%x: " + t + ") -> " + t + " {\n  %y = fuse." + op.str() +
         " %x : " + t + "\n  return %y : " + t + "\n}\n";
}

void PrintTo(const UnaryCase &c, std::ostream *os) { *os << c.name; }

class OpsUnaryTest : public ::testing::TestWithParam<UnaryCase> {};

// Sizes 1, 7 and 1000003 through one function with a dynamic dim, then a
// 2-d static shape.
TEST_P(OpsUnaryTest, MatchesReference) {
  const UnaryCase &c = GetParam();
  Jit jit(unarySource(c.name, {-1}));
  unsigned seed = 100;
  for (int64_t n : {1, 7, 1000003}) {
    Tensor x = randomTensor({n}, ++seed, c.lo, c.hi);
    std::vector<Tensor> out = jit.call("f", {x});
    ASSERT_EQ(out.size(), 1u);
    std::vector<double> ref(n);
    for (int64_t i = 0; i < n; ++i)
      ref[i] = c.ref(x.data<float>()[i]);
    EXPECT_TRUE(allClose(out[0], {n}, ref, c.rtol, c.atol)) << "n = " << n;
  }
  Jit jit2(unarySource(c.name, {3, 5}));
  Tensor x = randomTensor({3, 5}, 7, c.lo, c.hi);
  std::vector<Tensor> out = jit2.call("f", {x});
  ASSERT_EQ(out.size(), 1u);
  std::vector<double> ref;
  for (int64_t i = 0; i < 15; ++i)
    ref.push_back(c.ref(x.data<float>()[i]));
  EXPECT_TRUE(allClose(out[0], {3, 5}, ref, c.rtol, c.atol));
}

INSTANTIATE_TEST_SUITE_P(Ops, OpsUnaryTest, ::testing::ValuesIn(kUnaryCases),
                         [](const ::testing::TestParamInfo<UnaryCase> &info) {
                           return std::string(info.param.name);
                         });

// Infinities, NaN, zeros, overflow and underflow. References are the f32
// libm functions.
TEST(OpsUnary, SpecialValues) {
  struct Special {
    const char *op;
    std::vector<float> inputs;
    float (*ref)(float);
    double rtol, atol;
  };
  const float big = 1e20f, tiny = 1e-10f;
  const Special cases[] = {
      {"neg", {0.f, -0.f, kInf, -kInf, kNaN}, [](float x) { return -x; }, 0, 0},
      {"abs",
       {-0.f, -kInf, kInf, kNaN},
       [](float x) { return std::abs(x); },
       0,
       0},
      {"square",
       {kInf, -kInf, big, kNaN, -3.f},
       [](float x) { return x * x; },
       kArithRtol,
       0},
      {"relu",
       {-kInf, kInf, -0.f, kNaN, -1e-30f},
       [](float x) { return std::isnan(x) ? x : std::max(x, 0.f); },
       0,
       0},
      {"exp",
       {0.f, 1.f, -kInf, kInf, kNaN, 88.f, -87.f, 89.f, -104.f, tiny},
       [](float x) { return std::exp(x); },
       kMathRtol,
       1e-44},
      {"log",
       {1.f, 2.718281828f, 0.f, -1.f, kInf, kNaN, FLT_MIN, FLT_MAX, 1 + 1e-6f},
       [](float x) { return std::log(x); },
       kMathRtol,
       kMathAtol},
      {"sqrt",
       {0.f, 4.f, 2.f, -1.f, kInf, kNaN, FLT_MIN},
       [](float x) { return std::sqrt(x); },
       kArithRtol,
       0},
      {"rsqrt",
       {4.f, 2.f, 0.f, kInf, -1.f, kNaN, FLT_MIN},
       [](float x) { return 1.f / std::sqrt(x); },
       kArithRtol,
       0},
      {"tanh",
       {0.f, tiny, -tiny, 0.5f, 10.f, -10.f, kInf, -kInf, kNaN},
       [](float x) { return std::tanh(x); },
       kMathRtol,
       0},
      {"sigmoid",
       {0.f, 100.f, -100.f, kInf, -kInf, kNaN, 30.f},
       [](float x) { return 1.f / (1.f + std::exp(-x)); },
       kMathRtol,
       1e-30},
  };
  for (const Special &c : cases) {
    SCOPED_TRACE(c.op);
    Jit jit(unarySource(c.op, {-1}));
    int64_t n = c.inputs.size();
    Tensor x = Tensor::fromValues<float>({n}, c.inputs);
    std::vector<Tensor> out = jit.call("f", {x});
    ASSERT_EQ(out.size(), 1u);
    std::vector<double> ref;
    for (float v : c.inputs)
      ref.push_back(c.ref(v));
    EXPECT_TRUE(allClose(out[0], {n}, ref, c.rtol, c.atol));
  }
}

//===----------------------------------------------------------------------===//
// Binary element-wise ops
//===----------------------------------------------------------------------===//

struct BinaryCase {
  const char *name;
  float lhsLo, lhsHi, rhsLo, rhsHi;
  double (*ref)(double, double);
  double rtol, atol;
};

double refAdd(double x, double y) { return x + y; }
double refSub(double x, double y) { return x - y; }
double refMul(double x, double y) { return x * y; }
double refDiv(double x, double y) { return x / y; }
double refMax(double x, double y) {
  return std::isnan(x) || std::isnan(y) ? NAN : std::max(x, y);
}
double refMin(double x, double y) {
  return std::isnan(x) || std::isnan(y) ? NAN : std::min(x, y);
}
double refPow(double x, double y) { return std::pow(x, y); }

// div's divisor is kept away from 0 by the test (|y| >= 0.25); pow's base is
// positive here (negative bases are in SpecialValues).
const BinaryCase kBinaryCases[] = {
    {"add", -2, 2, -2, 2, refAdd, kArithRtol, 0},
    {"sub", -2, 2, -2, 2, refSub, kArithRtol, 0},
    {"mul", -2, 2, -2, 2, refMul, kArithRtol, 0},
    {"div", -2, 2, 0.25f, 2, refDiv, kArithRtol, 0},
    {"max", -2, 2, -2, 2, refMax, 0, 0},
    {"min", -2, 2, -2, 2, refMin, 0, 0},
    {"pow", 0.05f, 3, -2, 2, refPow, kMathRtol, kMathAtol},
};

std::string binarySource(llvm::StringRef op, llvm::ArrayRef<int64_t> lhs,
                         llvm::ArrayRef<int64_t> rhs,
                         llvm::ArrayRef<int64_t> result,
                         llvm::StringRef element = "f32") {
  std::string l = tensorType(lhs, element), r = tensorType(rhs, element),
              o = tensorType(result, element);
  return "func.func @f(%x: " + l + ", %y: " + r + ") -> " + o +
         " {\n  %z = fuse." + op.str() + " %x, %y : (" + l + ", " + r +
         ") -> " + o + "\n  return %z : " + o + "\n}\n";
}

/// A random f32 tensor in [lo, hi); for div's divisor, random signs too.
Tensor binaryInput(const BinaryCase &c, bool rhs, llvm::ArrayRef<int64_t> shape,
                   unsigned seed) {
  Tensor t = randomTensor(shape, seed, rhs ? c.rhsLo : c.lhsLo,
                          rhs ? c.rhsHi : c.lhsHi);
  if (rhs && llvm::StringRef(c.name) == "div")
    for (int64_t i = 0; i < t.numElements(); i += 2)
      t.data<float>()[i] = -t.data<float>()[i];
  return t;
}

/// Checks `f(x, y)` for a broadcast pair of shapes.
void checkBinary(Jit &jit, const BinaryCase &c, llvm::ArrayRef<int64_t> xShape,
                 llvm::ArrayRef<int64_t> yShape, unsigned seed) {
  SCOPED_TRACE(shapeString(xShape) + " op " + shapeString(yShape));
  Tensor x = binaryInput(c, false, xShape, seed);
  Tensor y = binaryInput(c, true, yShape, seed + 1);
  std::vector<Tensor> out = jit.call("f", {x, y});
  ASSERT_EQ(out.size(), 1u);
  Shape shape = broadcastShapes(xShape, yShape);
  std::vector<double> ref(product(shape));
  forEachIndex(shape, [&](llvm::ArrayRef<int64_t> index, int64_t i) {
    ref[i] = c.ref(x.data<float>()[broadcastOffset(index, xShape)],
                   y.data<float>()[broadcastOffset(index, yShape)]);
  });
  EXPECT_TRUE(allClose(out[0], shape, ref, c.rtol, c.atol));
}

void PrintTo(const BinaryCase &c, std::ostream *os) { *os << c.name; }

class OpsBinaryTest : public ::testing::TestWithParam<BinaryCase> {};

// (?x1x4) op (3x1) -> (?x3x4) with batch 1 and 5.
TEST_P(OpsBinaryTest, BroadcastsRank3WithRank2) {
  const BinaryCase &c = GetParam();
  Jit jit(binarySource(c.name, {-1, 1, 4}, {3, 1}, {-1, 3, 4}));
  checkBinary(jit, c, {1, 1, 4}, {3, 1}, 10);
  checkBinary(jit, c, {5, 1, 4}, {3, 1}, 20);
}

// 0-d operands on either side, and both.
TEST_P(OpsBinaryTest, ScalarOperands) {
  const BinaryCase &c = GetParam();
  Jit lhs(binarySource(c.name, {-1, 4}, {}, {-1, 4}));
  checkBinary(lhs, c, {3, 4}, {}, 30);
  checkBinary(lhs, c, {1, 4}, {}, 40);
  Jit rhs(binarySource(c.name, {}, {-1, 4}, {-1, 4}));
  checkBinary(rhs, c, {}, {2, 4}, 50);
  Jit both(binarySource(c.name, {}, {}, {}));
  checkBinary(both, c, {}, {}, 60);
}

// Same-shape operands of 1, 7 and 1000003 elements.
TEST_P(OpsBinaryTest, OddSizes) {
  const BinaryCase &c = GetParam();
  Jit jit(binarySource(c.name, {-1}, {-1}, {-1}));
  for (int64_t n : {1, 7, 1000003})
    checkBinary(jit, c, {n}, {n}, 70 + n);
  // A size-1 dim stretching in both operands: (?x1) op (1x5).
  Jit outer(binarySource(c.name, {-1, 1}, {1, 5}, {-1, 5}));
  checkBinary(outer, c, {7, 1}, {1, 5}, 80);
}

INSTANTIATE_TEST_SUITE_P(Ops, OpsBinaryTest, ::testing::ValuesIn(kBinaryCases),
                         [](const ::testing::TestParamInfo<BinaryCase> &info) {
                           return std::string(info.param.name);
                         });

// NaN propagation of max/min, IEEE division by zero, pow's special cases.
TEST(OpsBinary, SpecialValues) {
  const std::vector<float> xs = {kNaN, 1.f, kNaN, -kInf, 3.f, -0.f, 2.f};
  const std::vector<float> ys = {1.f, kNaN, kNaN, 5.f, kInf, 0.f, -kInf};
  int64_t n = xs.size();
  Tensor x = Tensor::fromValues<float>({n}, xs);
  Tensor y = Tensor::fromValues<float>({n}, ys);
  for (const char *op : {"max", "min"}) {
    SCOPED_TRACE(op);
    Jit jit(binarySource(op, {n}, {n}, {n}));
    std::vector<Tensor> out = jit.call("f", {x, y});
    ASSERT_EQ(out.size(), 1u);
    std::vector<double> ref;
    for (int64_t i = 0; i < n; ++i)
      ref.push_back(std::string(op) == "max" ? refMax(xs[i], ys[i])
                                             : refMin(xs[i], ys[i]));
    EXPECT_TRUE(allClose(out[0], {n}, ref, 0, 0));
  }
  {
    SCOPED_TRACE("div");
    Tensor a = Tensor::fromValues<float>({4}, {1.f, -1.f, 0.f, kInf});
    Tensor b = Tensor::fromValues<float>({4}, {0.f, 0.f, 0.f, kInf});
    Jit jit(binarySource("div", {4}, {4}, {4}));
    std::vector<Tensor> out = jit.call("f", {a, b});
    ASSERT_EQ(out.size(), 1u);
    EXPECT_TRUE(allClose(out[0], {4}, {kInf, -kInf, NAN, NAN}, 0, 0));
  }
  {
    SCOPED_TRACE("pow");
    const std::vector<float> bases = {-2.f, -2.f, 0.f, 5.f, 4.f, 0.f, -8.f};
    const std::vector<float> exps = {3.f, 2.f, 0.f, 0.f, 0.5f, 2.f, -1.f};
    int64_t m = bases.size();
    Jit jit(binarySource("pow", {m}, {m}, {m}));
    std::vector<Tensor> out =
        jit.call("f", {Tensor::fromValues<float>({m}, bases),
                       Tensor::fromValues<float>({m}, exps)});
    ASSERT_EQ(out.size(), 1u);
    EXPECT_TRUE(allClose(out[0], {m}, {-8, 4, 1, 1, 2, 0, -0.125}, kMathRtol,
                         kMathAtol));
  }
}

//===----------------------------------------------------------------------===//
// Integer element-wise ops
//===----------------------------------------------------------------------===//

int64_t truncDiv(int64_t x, int64_t y) { return x / y; } // C++ truncates

template <typename T>
void checkIntBinary(const char *op, int64_t lo, int64_t hi) {
  const char *element = dtypeOf<T>() == DType::I32 ? "i32" : "i64";
  SCOPED_TRACE(std::string(op) + " " + element);
  Jit jit(binarySource(op, {-1, 1, 4}, {3, 1}, {-1, 3, 4}, element));
  for (int64_t batch : {1, 4}) {
    Shape xShape = {batch, 1, 4}, yShape = {3, 1};
    Tensor x = randomInts<T>(xShape, 1 + batch, lo, hi);
    Tensor y = randomInts<T>(yShape, 2 + batch, lo, hi);
    if (std::string(op) == "div")
      for (int64_t i = 0; i < 3; ++i)
        if (y.data<T>()[i] == 0)
          y.data<T>()[i] = -3;
    std::vector<Tensor> out = jit.call("f", {x, y});
    ASSERT_EQ(out.size(), 1u);
    Shape shape = {batch, 3, 4};
    std::vector<int64_t> ref(product(shape));
    forEachIndex(shape, [&](llvm::ArrayRef<int64_t> index, int64_t i) {
      int64_t a = x.data<T>()[broadcastOffset(index, xShape)];
      int64_t b = y.data<T>()[broadcastOffset(index, yShape)];
      std::string o = op;
      ref[i] = o == "add"   ? a + b
               : o == "sub" ? a - b
               : o == "mul" ? a * b
               : o == "div" ? truncDiv(a, b)
               : o == "max" ? std::max(a, b)
                            : std::min(a, b);
    });
    EXPECT_TRUE(allEqual(out[0], dtypeOf<T>(), shape, ref))
        << "batch " << batch;
  }
}

// Values are chosen so no result overflows; i64 values exceed 32 bits.
TEST(OpsInteger, BinaryI32) {
  for (const char *op : {"add", "sub", "max", "min"})
    checkIntBinary<int32_t>(op, -1000000000, 1000000000);
  for (const char *op : {"mul", "div"})
    checkIntBinary<int32_t>(op, -40000, 40000);
}

TEST(OpsInteger, BinaryI64) {
  for (const char *op : {"add", "sub", "max", "min"})
    checkIntBinary<int64_t>(op, -(1LL << 61), 1LL << 61);
  for (const char *op : {"mul", "div"})
    checkIntBinary<int64_t>(op, -(1LL << 31), 1LL << 31);
}

// Signed division truncates toward zero.
TEST(OpsInteger, DivisionIsSigned) {
  Jit jit(binarySource("div", {-1}, {-1}, {-1}, "i32"));
  std::vector<int32_t> xs = {7, -7, 7, -7, 1, -1, 2147483647, -2147483647};
  std::vector<int32_t> ys = {2, 2, -2, -2, 3, 3, 2, 1000};
  Tensor x = Tensor::fromValues<int32_t>({8}, xs);
  Tensor y = Tensor::fromValues<int32_t>({8}, ys);
  std::vector<Tensor> out = jit.call("f", {x, y});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(allEqual(out[0], DType::I32, {8},
                       {3, -3, -3, 3, 0, 0, 1073741823, -2147483}));
}

/// XLA's total integer division, as fuse.div defines it.
template <typename T> int64_t totalDiv(T a, T b) {
  if (b == 0)
    return -1;
  if (a == std::numeric_limits<T>::min() && b == -1)
    return a;
  return a / b;
}

/// Division by 0 and INT_MIN / -1 on every lane position of vectorized code
/// (and its scalar tail), at run time and folded from constants: the same
/// values, never a trap.
template <typename T> void checkTotalDivision(const char *element) {
  SCOPED_TRACE(element);
  constexpr T lo = std::numeric_limits<T>::min();
  constexpr T hi = std::numeric_limits<T>::max();
  const std::vector<std::pair<T, T>> special = {
      {7, 0},  {-7, 0},  {0, 0},   {lo, 0},  {hi, 0}, {lo, -1},
      {lo, 1}, {hi, -1}, {-1, -1}, {lo, lo}, {7, -2}, {-7, 2}};
  std::mt19937_64 rng(std::hash<std::string>()(element));
  std::uniform_int_distribution<int64_t> any(lo, hi);
  // 67 elements: the special pairs at shifting lanes among random ones.
  std::vector<int64_t> xs, ys, ref;
  for (int64_t i = 0; i < 67; ++i) {
    T a = static_cast<T>(any(rng)), b = static_cast<T>(any(rng) % 5);
    if (i % 3 == 0)
      std::tie(a, b) = special[(i / 3) % special.size()];
    xs.push_back(a);
    ys.push_back(b);
    ref.push_back(totalDiv<T>(a, b));
  }
  int64_t n = static_cast<int64_t>(xs.size());
  Tensor x = Tensor::empty(dtypeOf<T>(), {n}),
         y = Tensor::empty(dtypeOf<T>(), {n});
  for (int64_t i = 0; i < n; ++i) {
    x.data<T>()[i] = static_cast<T>(xs[i]);
    y.data<T>()[i] = static_cast<T>(ys[i]);
  }
  Jit run(binarySource("div", {-1}, {-1}, {-1}, element));
  std::vector<Tensor> out = run.call("f", {x, y});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(allEqual(out[0], dtypeOf<T>(), {n}, ref)) << "at run time";

  // The same division of constants folds; a constant 0 divisor of a run-time
  // dividend is lowered, not folded.
  auto literal = [](const std::vector<int64_t> &values) {
    std::string s;
    for (int64_t v : values)
      s += (s.empty() ? "" : ", ") + std::to_string(v);
    return "[" + s + "]";
  };
  std::string type = "tensor<" + std::to_string(n) + "x" + element + ">";
  std::string source =
      "func.func @folded() -> " + type + " {\n  %a = fuse.constant dense<" +
      literal(xs) + "> : " + type + "\n  %b = fuse.constant dense<" +
      literal(ys) + "> : " + type + "\n  %q = fuse.div %a, %b : (" + type +
      ", " + type + ") -> " + type + "\n  return %q : " + type +
      "\n}\nfunc.func @by_zero(%x: " + type + ") -> " + type +
      " {\n  %z = fuse.constant dense<0> : tensor<" + element +
      ">\n  %q = fuse.div %x, %z : (" + type + ", tensor<" + element +
      ">) -> " + type + "\n  return %q : " + type + "\n}\n";
  Jit folded(source);
  out = folded.call("folded", {});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(allEqual(out[0], dtypeOf<T>(), {n}, ref)) << "folded";
  out = folded.call("by_zero", {x});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(allEqual(out[0], dtypeOf<T>(), {n}, std::vector<int64_t>(n, -1)))
      << "by a constant 0";
}

// x / 0 is -1 and INT_MIN / -1 is INT_MIN, as in XLA.
TEST(OpsInteger, DivisionIsTotal) {
  checkTotalDivision<int8_t>("i8");
  checkTotalDivision<int16_t>("i16");
  checkTotalDivision<int32_t>("i32");
  checkTotalDivision<int64_t>("i64");
}

// i1 is signed too: 1 is -1, so x / 1 is x and x / 0 is -1 (true).
TEST(OpsInteger, DivisionOfI1) {
  Tensor x = Tensor::fromValues<bool>({4}, {false, true, false, true});
  Tensor y = Tensor::fromValues<bool>({4}, {false, false, true, true});
  Jit jit(binarySource("div", {4}, {4}, {4}, "i1"));
  std::vector<Tensor> out = jit.call("f", {x, y});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(allEqual(out[0], DType::I1, {4}, {1, 1, 0, 1}));
}

template <typename T>
void checkIntUnary(const char *op, int64_t lo, int64_t hi) {
  const char *element = dtypeOf<T>() == DType::I32 ? "i32" : "i64";
  SCOPED_TRACE(std::string(op) + " " + element);
  Jit jit(unarySource(op, {-1, 5}, element));
  Tensor x = randomInts<T>({7, 5}, 3, lo, hi);
  std::vector<Tensor> out = jit.call("f", {x});
  ASSERT_EQ(out.size(), 1u);
  std::vector<int64_t> ref;
  for (int64_t i = 0; i < 35; ++i) {
    int64_t v = x.data<T>()[i];
    std::string o = op;
    ref.push_back(o == "relu"  ? std::max<int64_t>(v, 0)
                  : o == "neg" ? -v
                  : o == "abs" ? std::abs(v)
                               : v * v);
  }
  EXPECT_TRUE(allEqual(out[0], dtypeOf<T>(), {7, 5}, ref));
}

TEST(OpsInteger, Unary) {
  for (const char *op : {"relu", "neg", "abs"}) {
    checkIntUnary<int32_t>(op, -2000000000, 2000000000);
    checkIntUnary<int64_t>(op, -(1LL << 62), 1LL << 62);
  }
  checkIntUnary<int32_t>("square", -46000, 46000);
  checkIntUnary<int64_t>("square", -(1LL << 31), 1LL << 31);
}

//===----------------------------------------------------------------------===//
// compare and select
//===----------------------------------------------------------------------===//

const char *const kPredicates[] = {"eq", "ne", "lt", "le", "gt", "ge"};

bool refCompare(llvm::StringRef p, double a, double b) {
  if (p == "eq")
    return a == b;
  if (p == "ne")
    return a != b; // true for NaN
  if (p == "lt")
    return a < b;
  if (p == "le")
    return a <= b;
  if (p == "gt")
    return a > b;
  return a >= b;
}

std::string compareSource(llvm::StringRef p, llvm::ArrayRef<int64_t> lhs,
                          llvm::ArrayRef<int64_t> rhs,
                          llvm::ArrayRef<int64_t> result,
                          llvm::StringRef element) {
  std::string l = tensorType(lhs, element), r = tensorType(rhs, element),
              o = tensorType(result, "i1");
  return "func.func @f(%x: " + l + ", %y: " + r + ") -> " + o +
         " {\n  %z = fuse.compare " + p.str() + ", %x, %y : (" + l + ", " + r +
         ") -> " + o + "\n  return %z : " + o + "\n}\n";
}

/// Runs compare `p` on x, y and checks the i1 result exactly.
void checkCompare(llvm::StringRef p, const Tensor &x, const Tensor &y,
                  llvm::StringRef element, llvm::ArrayRef<int64_t> xDecl,
                  llvm::ArrayRef<int64_t> yDecl) {
  SCOPED_TRACE(p.str() + " " + element.str());
  Shape shape = broadcastShapes(x.shape(), y.shape());
  Shape declShape = broadcastShapes(xDecl, yDecl);
  for (size_t d = 0; d < declShape.size(); ++d)
    if (d < xDecl.size() && xDecl[d] < 0)
      declShape[d] = -1;
  Jit jit(compareSource(p, xDecl, yDecl, declShape, element));
  std::vector<Tensor> out = jit.call("f", {x, y});
  ASSERT_EQ(out.size(), 1u);
  std::vector<int64_t> ref(product(shape));
  forEachIndex(shape, [&](llvm::ArrayRef<int64_t> index, int64_t i) {
    ref[i] = refCompare(p, valueAt(x, broadcastOffset(index, x.shape())),
                        valueAt(y, broadcastOffset(index, y.shape())));
  });
  EXPECT_TRUE(allEqual(out[0], DType::I1, shape, ref));
}

// f32 with ties, signed zeros, infinities and NaN; (?x6) against (6) and 0-d.
TEST(OpsCompare, FloatPredicates) {
  const float values[] = {-1.f, 0.f, -0.f, 0.5f, kInf, -kInf, kNaN};
  Tensor x = choiceTensor({9, 6}, 5, values);
  Tensor y = choiceTensor({6}, 6, values);
  for (const char *p : kPredicates) {
    checkCompare(p, x, y, "f32", {-1, 6}, {6});
    checkCompare(p, x, scalarTensor(0.5f), "f32", {-1, 6}, {});
    checkCompare(p, x, scalarTensor(kNaN), "f32", {-1, 6}, {});
  }
}

// Integers compare signed: -1 < 1 (an unsigned compare would say otherwise).
TEST(OpsCompare, IntegerPredicates) {
  Tensor x32 = randomInts<int32_t>({4, 5}, 7, -3, 3);
  Tensor y32 = randomInts<int32_t>({5}, 8, -3, 3);
  Tensor x64 = randomInts<int64_t>({4, 5}, 9, -3, 3);
  Tensor y64 = randomInts<int64_t>({4, 1}, 10, -3, 3);
  // Values that differ only above bit 31 must not compare equal.
  x64.data<int64_t>()[0] = (1LL << 40) + 1;
  y64.data<int64_t>()[0] = 1;
  for (const char *p : kPredicates) {
    checkCompare(p, x32, y32, "i32", {-1, 5}, {5});
    checkCompare(p, x64, y64, "i64", {-1, 5}, {-1, 1});
  }
}

TEST(OpsSelect, BroadcastsAllOperands) {
  // select(x > s, x, t) with a 0-d false value, and select(c, a, b) with a
  // (4) condition, (?x1) true value and (?x4) false value.
  Jit jit(R"mlir(
func.func @clamp(%x: tensor<?x4xf32>, %s: tensor<f32>, %t: tensor<f32>) -> tensor<?x4xf32> {
  %m = fuse.compare gt, %x, %s : (tensor<?x4xf32>, tensor<f32>) -> tensor<?x4xi1>
  %r = fuse.select %m, %x, %t : (tensor<?x4xi1>, tensor<?x4xf32>, tensor<f32>) -> tensor<?x4xf32>
  return %r : tensor<?x4xf32>
}
func.func @mixed(%c: tensor<4xi1>, %a: tensor<?x1xf32>, %b: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %r = fuse.select %c, %a, %b : (tensor<4xi1>, tensor<?x1xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  return %r : tensor<?x4xf32>
}
func.func @ints(%c: tensor<?x3xi1>, %a: tensor<?x3xi64>, %b: tensor<i64>) -> tensor<?x3xi64> {
  %r = fuse.select %c, %a, %b : (tensor<?x3xi1>, tensor<?x3xi64>, tensor<i64>) -> tensor<?x3xi64>
  return %r : tensor<?x3xi64>
}
)mlir");
  Tensor x = randomTensor({5, 4}, 21);
  std::vector<Tensor> out =
      jit.call("clamp", {x, scalarTensor(0.1f), scalarTensor(-7.f)});
  ASSERT_EQ(out.size(), 1u);
  std::vector<double> ref;
  for (int64_t i = 0; i < 20; ++i)
    ref.push_back(x.data<float>()[i] > 0.1f ? x.data<float>()[i] : -7.0);
  EXPECT_TRUE(allClose(out[0], {5, 4}, ref, 0, 0));

  Tensor c = Tensor::empty(DType::I1, {4});
  const uint8_t bits[4] = {1, 0, 0, 1};
  for (int i = 0; i < 4; ++i)
    c.data<uint8_t>()[i] = bits[i];
  Tensor a = randomTensor({3, 1}, 22);
  Tensor b = randomTensor({3, 4}, 23);
  out = jit.call("mixed", {c, a, b});
  ASSERT_EQ(out.size(), 1u);
  ref.clear();
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t j = 0; j < 4; ++j)
      ref.push_back(bits[j] ? a.data<float>()[i] : b.data<float>()[i * 4 + j]);
  EXPECT_TRUE(allClose(out[0], {3, 4}, ref, 0, 0));

  Tensor ci = Tensor::empty(DType::I1, {2, 3});
  for (int i = 0; i < 6; ++i)
    ci.data<uint8_t>()[i] = (i * 7) % 3 == 0;
  Tensor ai = randomInts<int64_t>({2, 3}, 24, -(1LL << 50), 1LL << 50);
  out = jit.call("ints", {ci, ai, scalarTensor<int64_t>(-(1LL << 40))});
  ASSERT_EQ(out.size(), 1u);
  std::vector<int64_t> iref;
  for (int i = 0; i < 6; ++i)
    iref.push_back(ci.data<uint8_t>()[i] ? ai.data<int64_t>()[i]
                                         : -(1LL << 40));
  EXPECT_TRUE(allEqual(out[0], DType::I64, {2, 3}, iref));
}

//===----------------------------------------------------------------------===//
// Shape ops
//===----------------------------------------------------------------------===//

/// The values of `t` as doubles, row-major.
std::vector<double> valuesOf(const Tensor &t) {
  std::vector<double> v;
  for (int64_t i = 0; i < t.numElements(); ++i)
    v.push_back(valueAt(t, i));
  return v;
}

TEST(OpsShape, Reshape) {
  Jit jit(R"mlir(
func.func @flatten(%x: tensor<?x3x4xf32>) -> tensor<?x12xf32> {
  %y = fuse.reshape %x : (tensor<?x3x4xf32>) -> tensor<?x12xf32>
  return %y : tensor<?x12xf32>
}
func.func @split(%x: tensor<?x6xf32>) -> tensor<2x?x3xf32> {
  %y = fuse.reshape %x : (tensor<?x6xf32>) -> tensor<2x?x3xf32>
  return %y : tensor<2x?x3xf32>
}
func.func @to_scalar(%x: tensor<1x1xf32>) -> tensor<f32> {
  %y = fuse.reshape %x : (tensor<1x1xf32>) -> tensor<f32>
  return %y : tensor<f32>
}
func.func @from_scalar(%x: tensor<f32>) -> tensor<1x1x1xf32> {
  %y = fuse.reshape %x : (tensor<f32>) -> tensor<1x1x1xf32>
  return %y : tensor<1x1x1xf32>
}
func.func @ints(%x: tensor<4x6xi32>) -> tensor<3x8xi32> {
  %y = fuse.reshape %x : (tensor<4x6xi32>) -> tensor<3x8xi32>
  return %y : tensor<3x8xi32>
}
)mlir");
  // Row-major reshapes keep the linear order of elements.
  Tensor x = randomTensor({5, 3, 4}, 31);
  std::vector<Tensor> out = jit.call("flatten", {x});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(allClose(out[0], {5, 12}, valuesOf(x), 0, 0));
  Tensor x1 = randomTensor({1, 3, 4}, 32);
  out = jit.call("flatten", {x1});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(allClose(out[0], {1, 12}, valuesOf(x1), 0, 0));

  Tensor s = randomTensor({4, 6}, 33);
  out = jit.call("split", {s});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(allClose(out[0], {2, 4, 3}, valuesOf(s), 0, 0));

  out = jit.call("to_scalar", {Tensor::fromValues<float>({1, 1}, {2.5f})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(allClose(out[0], {}, {2.5}, 0, 0));
  out = jit.call("from_scalar", {scalarTensor(-1.25f)});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(allClose(out[0], {1, 1, 1}, {-1.25}, 0, 0));

  Tensor xi = randomInts<int32_t>({4, 6}, 34, -100, 100);
  out = jit.call("ints", {xi});
  ASSERT_EQ(out.size(), 1u);
  std::vector<int64_t> iref;
  for (int64_t i = 0; i < 24; ++i)
    iref.push_back(xi.data<int32_t>()[i]);
  EXPECT_TRUE(allEqual(out[0], DType::I32, {3, 8}, iref));
}

TEST(OpsShape, Transpose) {
  Jit jit(R"mlir(
func.func @t2(%x: tensor<?x5xf32>) -> tensor<5x?xf32> {
  %y = fuse.transpose %x {permutation = array<i64: 1, 0>} : (tensor<?x5xf32>) -> tensor<5x?xf32>
  return %y : tensor<5x?xf32>
}
func.func @t3(%x: tensor<2x3x4xf32>) -> tensor<4x2x3xf32> {
  %y = fuse.transpose %x {permutation = array<i64: 2, 0, 1>} : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
  return %y : tensor<4x2x3xf32>
}
func.func @t4(%x: tensor<2x3x4x5xi64>) -> tensor<3x5x2x4xi64> {
  %y = fuse.transpose %x {permutation = array<i64: 1, 3, 0, 2>} : (tensor<2x3x4x5xi64>) -> tensor<3x5x2x4xi64>
  return %y : tensor<3x5x2x4xi64>
}
)mlir");
  auto transposeRef = [](const Tensor &x, llvm::ArrayRef<int64_t> perm) {
    Shape shape;
    for (int64_t p : perm)
      shape.push_back(x.shape()[p]);
    std::vector<double> ref(product(shape));
    forEachIndex(shape, [&](llvm::ArrayRef<int64_t> index, int64_t i) {
      Shape in(perm.size());
      for (size_t d = 0; d < perm.size(); ++d)
        in[perm[d]] = index[d];
      int64_t offset = 0;
      for (size_t d = 0; d < perm.size(); ++d)
        offset = offset * x.shape()[d] + in[d];
      ref[i] = valueAt(x, offset);
    });
    return std::make_pair(shape, ref);
  };
  for (int64_t rows : {1, 7}) {
    Tensor x = randomTensor({rows, 5}, 40 + rows);
    std::vector<Tensor> out = jit.call("t2", {x});
    ASSERT_EQ(out.size(), 1u);
    auto [shape, ref] = transposeRef(x, {1, 0});
    EXPECT_TRUE(allClose(out[0], shape, ref, 0, 0)) << rows << " rows";
  }
  Tensor x3 = randomTensor({2, 3, 4}, 43);
  std::vector<Tensor> out = jit.call("t3", {x3});
  ASSERT_EQ(out.size(), 1u);
  auto [shape3, ref3] = transposeRef(x3, {2, 0, 1});
  EXPECT_TRUE(allClose(out[0], shape3, ref3, 0, 0));

  Tensor x4 = randomInts<int64_t>({2, 3, 4, 5}, 44, -(1LL << 40), 1LL << 40);
  out = jit.call("t4", {x4});
  ASSERT_EQ(out.size(), 1u);
  Shape shape4 = {3, 5, 2, 4};
  std::vector<int64_t> ref4(product(shape4));
  forEachIndex(shape4, [&](llvm::ArrayRef<int64_t> i, int64_t linear) {
    ref4[linear] = x4.at<int64_t>({i[2], i[0], i[3], i[1]});
  });
  EXPECT_TRUE(allEqual(out[0], DType::I64, shape4, ref4));
}

TEST(OpsShape, BroadcastTo) {
  Jit jit(R"mlir(
func.func @rows(%x: tensor<1x4xf32>) -> tensor<2x3x4xf32> {
  %y = fuse.broadcast_to %x : (tensor<1x4xf32>) -> tensor<2x3x4xf32>
  return %y : tensor<2x3x4xf32>
}
func.func @cols(%x: tensor<?x1xf32>) -> tensor<?x5xf32> {
  %y = fuse.broadcast_to %x : (tensor<?x1xf32>) -> tensor<?x5xf32>
  return %y : tensor<?x5xf32>
}
func.func @scalar(%x: tensor<i32>) -> tensor<2x3xi32> {
  %y = fuse.broadcast_to %x : (tensor<i32>) -> tensor<2x3xi32>
  return %y : tensor<2x3xi32>
}
)mlir");
  auto check = [&](const char *fn, const Tensor &x, Shape shape) {
    SCOPED_TRACE(fn);
    std::vector<Tensor> out = jit.call(fn, {x});
    ASSERT_EQ(out.size(), 1u);
    std::vector<double> ref(product(shape));
    forEachIndex(shape, [&](llvm::ArrayRef<int64_t> index, int64_t i) {
      ref[i] = valueAt(x, broadcastOffset(index, x.shape()));
    });
    if (x.dtype() == DType::F32) {
      EXPECT_TRUE(allClose(out[0], shape, ref, 0, 0));
    } else {
      std::vector<int64_t> iref(ref.begin(), ref.end());
      EXPECT_TRUE(allEqual(out[0], x.dtype(), shape, iref));
    }
  };
  check("rows", randomTensor({1, 4}, 51), {2, 3, 4});
  check("cols", randomTensor({3, 1}, 52), {3, 5});
  check("scalar", scalarTensor<int32_t>(-42), {2, 3});
  // A dynamic result dim fed by an input dim of 1 is ambiguous: an error
  // naming the problem, not a guess.
  EXPECT_NE(jit.error("cols", {randomTensor({1, 1}, 53)})
                .find("cannot infer the size of dynamic result dim 0"),
            std::string::npos);
}

//===----------------------------------------------------------------------===//
// matmul and batch_matmul
//===----------------------------------------------------------------------===//

/// op(a) x op(b) for 2-d row-major a and b (or one batch of 3-d ones) with
/// per-element sum tolerances.
void matmulRef(const float *a, const float *b, int64_t m, int64_t n, int64_t k,
               bool ta, bool tb, double *out, double *tol) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double sum = 0, absSum = 0;
      for (int64_t p = 0; p < k; ++p) {
        double x = ta ? a[p * m + i] : a[i * k + p];
        double y = tb ? b[j * k + p] : b[p * n + j];
        sum += x * y;
        absSum += std::abs(x * y);
      }
      out[i * n + j] = sum;
      tol[i * n + j] = sumTol(k, absSum);
    }
}

std::string matmulSource(bool ta, bool tb) {
  std::string attrs;
  if (ta && tb)
    attrs = " {transpose_lhs, transpose_rhs}";
  else if (ta)
    attrs = " {transpose_lhs}";
  else if (tb)
    attrs = " {transpose_rhs}";
  return "func.func @f(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>) -> "
         "tensor<?x?xf32> {\n  %c = fuse.matmul %a, %b" +
         attrs +
         " : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>\n"
         "  return %c : tensor<?x?xf32>\n}\n";
}

void checkMatmul(Jit &jit, int64_t m, int64_t n, int64_t k, bool ta, bool tb,
                 unsigned seed) {
  SCOPED_TRACE("M=" + std::to_string(m) + " N=" + std::to_string(n) +
               " K=" + std::to_string(k) + (ta ? " transpose_lhs" : "") +
               (tb ? " transpose_rhs" : ""));
  Tensor a = randomTensor(ta ? Shape{k, m} : Shape{m, k}, seed);
  Tensor b = randomTensor(tb ? Shape{n, k} : Shape{k, n}, seed + 1);
  std::vector<Tensor> out = jit.call("f", {a, b});
  ASSERT_EQ(out.size(), 1u);
  std::vector<double> ref(m * n), tol(m * n);
  matmulRef(a.data<float>(), b.data<float>(), m, n, k, ta, tb, ref.data(),
            tol.data());
  EXPECT_TRUE(allClose(out[0], {m, n}, ref, tol));
}

using MatmulDims = std::tuple<int64_t, int64_t, int64_t>;

/// Each of `shapes` (M, N, K) with every combination of transposed operands.
void checkEveryLayout(std::initializer_list<MatmulDims> shapes, unsigned seed) {
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      Jit jit(matmulSource(ta, tb));
      for (auto [m, n, k] : shapes)
        checkMatmul(jit, m, n, k, ta, tb, seed += 2);
    }
}

// Every combination of M, N, K in {1, 7, 13}, plus a larger one.
TEST(OpsMatmul, OddSizes) {
  Jit jit(matmulSource(false, false));
  unsigned seed = 200;
  for (int64_t m : {1, 7, 13})
    for (int64_t n : {1, 7, 13})
      for (int64_t k : {1, 7, 13})
        checkMatmul(jit, m, n, k, false, false, seed += 2);
  checkMatmul(jit, 37, 129, 300, false, false, 300);
}

TEST(OpsMatmul, TransposeFlags) {
  checkEveryLayout(
      {{13, 7, 1}, {1, 13, 7}, {7, 1, 13}, {13, 13, 13}, {5, 3, 64}}, 400);
}

// Shapes that take the cache-blocked, packed path (a transposed rhs, or a
// large one): whole panels and blocks plus edges of every size left over,
// primes, blocks of A's rows (M > 256) and zero-sized dims.
TEST(OpsMatmul, BlockedAndPackedShapes) {
  checkEveryLayout({{64, 784, 128},
                    {37, 129, 300},
                    {13, 1009, 7},
                    {1009, 33, 1009},
                    {520, 64, 2048},
                    {1, 48, 1500},
                    {8, 32, 2048},
                    {0, 40, 300},
                    {40, 0, 300},
                    {40, 300, 0}},
                   600);
}

// Rows or columns without a divisor that fills half a tile (primes, 2 x a
// prime), or an odd number of registers of columns (48, 80), split into a
// product over whole tiles and edge products over the rest (18 columns stay
// whole: tiles of 18): every part, and every part's own zero fill, must
// land in its slice.
TEST(OpsMatmul, WholeTileSplits) {
  checkEveryLayout({{13, 37, 5},
                    {25, 1009, 3},
                    {29, 17, 64},
                    {14, 18, 9},
                    {26, 16, 7},
                    {12, 33, 1},
                    {4, 48, 9},
                    {20, 80, 33}},
                   900);
}

// Shapes of the batch-1 strategies: dot products for 1 to 3 rows against a
// transposed rhs (tiles of 16, 8, 5 and 13 rows of B, or declined: 17 rows
// of B, or K not a whole number of registers), rows of up to 24 registers
// of columns, and outer products (K = 1) whose tiles start from zeros.
TEST(OpsMatmul, FewRowsShapes) {
  checkEveryLayout({{1, 784, 128},
                    {2, 40, 64},
                    {3, 20, 32},
                    {1, 13, 32},
                    {1, 17, 32},
                    {1, 48, 100},
                    {1, 128, 784},
                    {4, 96, 50},
                    {784, 128, 1},
                    {5, 3, 1}},
                   800);
}

// Static shapes next to other ops (fusion with a bias add and relu).
TEST(OpsMatmul, StaticWithBiasAndRelu) {
  Jit jit(R"mlir(
func.func @f(%x: tensor<7x13xf32>, %w: tensor<13x5xf32>, %b: tensor<5xf32>) -> tensor<7x5xf32> {
  %y = fuse.matmul %x, %w : (tensor<7x13xf32>, tensor<13x5xf32>) -> tensor<7x5xf32>
  %z = fuse.add %y, %b : (tensor<7x5xf32>, tensor<5xf32>) -> tensor<7x5xf32>
  %r = fuse.relu %z : tensor<7x5xf32>
  return %r : tensor<7x5xf32>
}
)mlir");
  Tensor x = randomTensor({7, 13}, 61), w = randomTensor({13, 5}, 62),
         b = randomTensor({5}, 63);
  std::vector<Tensor> out = jit.call("f", {x, w, b});
  ASSERT_EQ(out.size(), 1u);
  std::vector<double> ref(35), tol(35);
  matmulRef(x.data<float>(), w.data<float>(), 7, 5, 13, false, false,
            ref.data(), tol.data());
  for (int64_t i = 0; i < 35; ++i) {
    ref[i] = std::max(0.0, ref[i] + b.data<float>()[i % 5]);
    tol[i] += kEps * std::abs(ref[i]);
  }
  EXPECT_TRUE(allClose(out[0], {7, 5}, ref, tol));
}

// A layer whose weight is tall (k = 784 >= 4 n) sums its reduction in the
// blocks its weight gradient's update is shared by (4 of 196 rows), each
// block's partial sum an FMA chain in k order from zero, then the partials
// in block order: exactly these bits, for a batch of 64 (the blocks on the
// threads) and for 7 of its rows (the blocks in turn): an example's outputs
// do not depend on its batch.
TEST(OpsMatmul, ReductionBlocksSumInBlockOrder) {
  Jit jit(R"mlir(
func.func @b64(%x: tensor<64x784xf32>, %w: tensor<784x128xf32>, %b: tensor<128xf32>) -> tensor<64x128xf32> {
  %y = fuse.matmul %x, %w : (tensor<64x784xf32>, tensor<784x128xf32>) -> tensor<64x128xf32>
  %z = fuse.add %y, %b : (tensor<64x128xf32>, tensor<128xf32>) -> tensor<64x128xf32>
  %r = fuse.relu %z : tensor<64x128xf32>
  return %r : tensor<64x128xf32>
}
func.func @b7(%x: tensor<7x784xf32>, %w: tensor<784x128xf32>, %b: tensor<128xf32>) -> tensor<7x128xf32> {
  %y = fuse.matmul %x, %w : (tensor<7x784xf32>, tensor<784x128xf32>) -> tensor<7x128xf32>
  %z = fuse.add %y, %b : (tensor<7x128xf32>, tensor<128xf32>) -> tensor<7x128xf32>
  %r = fuse.relu %z : tensor<7x128xf32>
  return %r : tensor<7x128xf32>
}
)mlir");
  constexpr int64_t m = 64, n = 128, k = 784, block = 196;
  Tensor x = randomTensor({m, k}, 71), w = randomTensor({k, n}, 72),
         b = randomTensor({n}, 73);
  const float *xp = x.data<float>(), *wp = w.data<float>(),
              *bp = b.data<float>();
  std::vector<float> expected(m * n);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      float total = 0;
      for (int64_t first = 0; first < k; first += block) {
        float partial = 0;
        for (int64_t l = first; l < first + block; ++l)
          partial = std::fma(xp[i * k + l], wp[l * n + j], partial);
        total = first == 0 ? partial : total + partial;
      }
      expected[i * n + j] = std::max(total + bp[j], 0.0f);
    }
  std::vector<Tensor> batch = jit.call("b64", {x, w, b});
  ASSERT_EQ(batch.size(), 1u);
  Tensor rows = Tensor::empty(DType::F32, {7, k});
  std::copy(xp + 20 * k, xp + 27 * k, rows.data<float>());
  std::vector<Tensor> few = jit.call("b7", {rows, w, b});
  ASSERT_EQ(few.size(), 1u);
  int64_t differ = 0;
  for (int64_t e = 0; e < m * n; ++e)
    differ += batch[0].data<float>()[e] != expected[e];
  EXPECT_EQ(differ, 0) << "of " << m * n << " outputs of the batch of 64";
  differ = 0;
  for (int64_t e = 0; e < 7 * n; ++e)
    differ += few[0].data<float>()[e] != expected[20 * n + e];
  EXPECT_EQ(differ, 0) << "of " << 7 * n << " outputs of the batch of 7";
}

// The bias add and ReLU read the product element for element, so they are
// fused into its register tiles (several row and column tiles here, the
// product's tile never stored whole), for both layouts of the lhs.
TEST(OpsMatmul, FusedConsumerTiles) {
  unsigned seed = 900;
  for (auto [m, n, k, ta] :
       {std::tuple<int64_t, int64_t, int64_t, bool>{24, 64, 50, true},
        {36, 96, 16, false},
        {1, 128, 40, false},
        // Two bands of rows: 60 in tiles of 12 and 4; 12 and 1.
        {64, 128, 30, false},
        {13, 32, 20, true}}) {
    SCOPED_TRACE("M=" + std::to_string(m) + " N=" + std::to_string(n) +
                 " K=" + std::to_string(k) + (ta ? " transpose_lhs" : ""));
    auto type = [](int64_t a, int64_t b) {
      return "tensor<" + std::to_string(a) + "x" + std::to_string(b) + "xf32>";
    };
    std::string xType = ta ? type(k, m) : type(m, k);
    std::string yType = type(m, n);
    std::string bType = "tensor<" + std::to_string(n) + "xf32>";
    Jit jit("func.func @f(%x: " + xType + ", %w: " + type(k, n) +
            ", %b: " + bType + ") -> " + yType + " {\n" +
            "  %y = fuse.matmul %x, %w" + (ta ? " {transpose_lhs}" : "") +
            " : (" + xType + ", " + type(k, n) + ") -> " + yType + "\n" +
            "  %z = fuse.add %y, %b : (" + yType + ", " + bType + ") -> " +
            yType + "\n  %r = fuse.relu %z : " + yType +
            "\n  return %r : " + yType + "\n}\n");
    Tensor x = randomTensor(ta ? Shape{k, m} : Shape{m, k}, seed++);
    Tensor w = randomTensor({k, n}, seed++), b = randomTensor({n}, seed++);
    std::vector<Tensor> out = jit.call("f", {x, w, b});
    ASSERT_EQ(out.size(), 1u);
    std::vector<double> ref(m * n), tol(m * n);
    matmulRef(x.data<float>(), w.data<float>(), m, n, k, ta, false, ref.data(),
              tol.data());
    for (int64_t i = 0; i < m * n; ++i) {
      ref[i] = std::max(0.0, ref[i] + b.data<float>()[i % n]);
      tol[i] += kEps * std::abs(ref[i]);
    }
    EXPECT_TRUE(allClose(out[0], {m, n}, ref, tol));
  }
}

std::string batchMatmulSource(bool ta, bool tb) {
  std::string attrs;
  if (ta && tb)
    attrs = " {transpose_lhs, transpose_rhs}";
  else if (ta)
    attrs = " {transpose_lhs}";
  else if (tb)
    attrs = " {transpose_rhs}";
  return "func.func @f(%a: tensor<?x?x?xf32>, %b: tensor<?x?x?xf32>) -> "
         "tensor<?x?x?xf32> {\n  %c = fuse.batch_matmul %a, %b" +
         attrs +
         " : (tensor<?x?x?xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?xf32>\n"
         "  return %c : tensor<?x?x?xf32>\n}\n";
}

/// Every lhs/rhs layout of batch_matmul on `shapes` (batch, m, n, k),
/// against the naive reference.
void checkBatchMatmuls(
    std::initializer_list<std::tuple<int64_t, int64_t, int64_t, int64_t>>
        shapes,
    unsigned seed) {
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      Jit jit(batchMatmulSource(ta, tb));
      for (auto [batch, m, n, k] : shapes) {
        SCOPED_TRACE("B=" + std::to_string(batch) + " M=" + std::to_string(m) +
                     " N=" + std::to_string(n) + " K=" + std::to_string(k) +
                     (ta ? " transpose_lhs" : "") +
                     (tb ? " transpose_rhs" : ""));
        Tensor a =
            randomTensor(ta ? Shape{batch, k, m} : Shape{batch, m, k}, ++seed);
        Tensor b =
            randomTensor(tb ? Shape{batch, n, k} : Shape{batch, k, n}, ++seed);
        std::vector<Tensor> out = jit.call("f", {a, b});
        ASSERT_EQ(out.size(), 1u);
        std::vector<double> ref(batch * m * n), tol(batch * m * n);
        for (int64_t i = 0; i < batch; ++i)
          matmulRef(a.data<float>() + i * m * k, b.data<float>() + i * k * n, m,
                    n, k, ta, tb, ref.data() + i * m * n,
                    tol.data() + i * m * n);
        EXPECT_TRUE(allClose(out[0], {batch, m, n}, ref, tol));
      }
    }
}

TEST(OpsBatchMatmul, BatchesAndTransposes) {
  checkBatchMatmuls({{1, 7, 13, 5}, {3, 13, 1, 7}, {4, 1, 7, 13}, {2, 7, 7, 1}},
                    500);
}

// Rows or columns without a divisor that fills half a tile (11 rows: 8 and
// 3; 37 columns: 32 and 5; 1009), or columns of an odd number of registers
// (48: 32 and 16), split into whole tiles and edges.
TEST(OpsBatchMatmul, WholeTileSplits) {
  checkBatchMatmuls({{2, 11, 37, 5},
                     {3, 13, 37, 9},
                     {1, 29, 1009, 3},
                     {2, 17, 16, 1},
                     {2, 9, 48, 5}},
                    550);
}

//===----------------------------------------------------------------------===//
// conv2d and pooling
//===----------------------------------------------------------------------===//

struct Window {
  int64_t kh, kw;
  int64_t strides[2] = {1, 1};
  int64_t padding[4] = {0, 0, 0, 0}; // top, bottom, left, right
  int64_t dilations[2] = {1, 1};

  int64_t outH(int64_t h) const {
    return (h + padding[0] + padding[1] - dilations[0] * (kh - 1) - 1) /
               strides[0] +
           1;
  }
  int64_t outW(int64_t w) const {
    return (w + padding[2] + padding[3] - dilations[1] * (kw - 1) - 1) /
               strides[1] +
           1;
  }
  std::string attrs(bool conv) const {
    auto arr = [](const int64_t *v, int n) {
      std::string s = "array<i64: ";
      for (int i = 0; i < n; ++i)
        s += (i ? ", " : "") + std::to_string(v[i]);
      return s + ">";
    };
    std::string s = "{";
    if (!conv) {
      int64_t w[2] = {kh, kw};
      s += "window = " + arr(w, 2) + ", ";
    }
    s += "strides = " + arr(strides, 2) + ", padding = " + arr(padding, 4);
    if (conv)
      s += ", dilations = " + arr(dilations, 2);
    return s + "}";
  }
  std::string describe() const {
    return "window " + std::to_string(kh) + "x" + std::to_string(kw) + " " +
           attrs(true);
  }
};

/// Conv2D (NHWC x HWIO) with per-element tolerances.
void conv2dRef(const Tensor &x, const Tensor &f, const Window &win,
               std::vector<double> &ref, std::vector<double> &tol,
               Shape &shape) {
  int64_t n = x.shape()[0], h = x.shape()[1], w = x.shape()[2],
          c = x.shape()[3], fo = f.shape()[3];
  int64_t oh = win.outH(h), ow = win.outW(w);
  shape = {n, oh, ow, fo};
  ref.assign(product(shape), 0);
  tol.assign(product(shape), 0);
  forEachIndex(shape, [&](llvm::ArrayRef<int64_t> o, int64_t linear) {
    double sum = 0, absSum = 0;
    for (int64_t i = 0; i < win.kh; ++i)
      for (int64_t j = 0; j < win.kw; ++j) {
        int64_t y =
            o[1] * win.strides[0] - win.padding[0] + i * win.dilations[0];
        int64_t z =
            o[2] * win.strides[1] - win.padding[2] + j * win.dilations[1];
        if (y < 0 || y >= h || z < 0 || z >= w)
          continue; // zero padding
        for (int64_t k = 0; k < c; ++k) {
          double p = double(x.at<float>({o[0], y, z, k})) *
                     f.at<float>({i, j, k, o[3]});
          sum += p;
          absSum += std::abs(p);
        }
      }
    ref[linear] = sum;
    tol[linear] = sumTol(win.kh * win.kw * c, absSum);
  });
}

/// `x` (NHWC) padded in H and W by `win.padding` with `value`.
Tensor padInput(const Tensor &x, const Window &win, float value) {
  int64_t n = x.shape()[0], h = x.shape()[1], w = x.shape()[2],
          c = x.shape()[3];
  Shape shape = {n, h + win.padding[0] + win.padding[1],
                 w + win.padding[2] + win.padding[3], c};
  Tensor p = Tensor::empty(DType::F32, shape);
  forEachIndex(shape, [&](llvm::ArrayRef<int64_t> i, int64_t linear) {
    int64_t y = i[1] - win.padding[0], z = i[2] - win.padding[2];
    bool inside = y >= 0 && y < h && z >= 0 && z < w;
    p.data<float>()[linear] = inside ? x.at<float>({i[0], y, z, i[3]}) : value;
  });
  return p;
}

/// `win` without padding.
Window unpadded(Window win) {
  std::fill(win.padding, win.padding + 4, 0);
  return win;
}

/// Checks conv2d against conv2dRef for each window. With `explicitPad`, the
/// compiled op has no padding and gets an input padded in C++ instead: that
/// checks the padded reference itself while padding does not compile.
void checkConv2D(const std::vector<Window> &windows, unsigned seed,
                 bool explicitPad = false) {
  for (const Window &win : windows) {
    SCOPED_TRACE(win.describe());
    const int64_t h = 9, w = 11, c = 3, fo = 5;
    Window op = explicitPad ? unpadded(win) : win;
    int64_t ih = explicitPad ? h + win.padding[0] + win.padding[1] : h;
    int64_t iw = explicitPad ? w + win.padding[2] + win.padding[3] : w;
    std::string in = tensorType({-1, ih, iw, c}, "f32");
    std::string ft = tensorType({win.kh, win.kw, c, fo}, "f32");
    std::string out = tensorType({-1, win.outH(h), win.outW(w), fo}, "f32");
    Jit jit("func.func @f(%x: " + in + ", %k: " + ft + ") -> " + out +
            " {\n  %y = fuse.conv2d %x, %k " + op.attrs(true) + " : (" + in +
            ", " + ft + ") -> " + out + "\n  return %y : " + out + "\n}\n");
    for (int64_t n : {1, 2}) {
      Tensor x = randomTensor({n, h, w, c}, ++seed);
      Tensor f = randomTensor({win.kh, win.kw, c, fo}, ++seed);
      std::vector<Tensor> results =
          jit.call("f", {explicitPad ? padInput(x, win, 0.f) : x, f});
      ASSERT_EQ(results.size(), 1u);
      std::vector<double> ref, tol;
      Shape shape;
      conv2dRef(x, f, win, ref, tol, shape);
      EXPECT_TRUE(allClose(results[0], shape, ref, tol)) << "batch " << n;
    }
  }
}

// A filter larger than half of L2 (3x3x64x256, 576 KiB) takes the path
// that splits the output's 28 columns into whole tiles (24) and the rest.
TEST(OpsConv2D, LargeFilterSplitColumns) {
  Jit jit(R"mlir(
func.func @f(%x: tensor<2x5x30x64xf32>, %k: tensor<3x3x64x256xf32>) -> tensor<2x3x28x256xf32> {
  %y = fuse.conv2d %x, %k : (tensor<2x5x30x64xf32>, tensor<3x3x64x256xf32>) -> tensor<2x3x28x256xf32>
  return %y : tensor<2x3x28x256xf32>
}
)mlir");
  Tensor x = randomTensor({2, 5, 30, 64}, 680),
         f = randomTensor({3, 3, 64, 256}, 681);
  std::vector<Tensor> results = jit.call("f", {x, f});
  ASSERT_EQ(results.size(), 1u);
  std::vector<double> ref, tol;
  Shape shape;
  conv2dRef(x, f, {3, 3}, ref, tol, shape);
  EXPECT_TRUE(allClose(results[0], shape, ref, tol));
}

TEST(OpsConv2D, StridesAndDilations) {
  std::vector<Window> windows;
  windows.push_back({3, 3});                               // valid
  windows.push_back({3, 3, {2, 2}});                       // stride 2
  windows.push_back({3, 2, {2, 3}});                       // uneven strides
  windows.push_back({3, 3, {1, 1}, {0, 0, 0, 0}, {2, 2}}); // dilation 2
  windows.push_back({2, 3, {2, 2}, {0, 0, 0, 0}, {2, 1}}); // both
  windows.push_back({1, 1});                               // pointwise
  checkConv2D(windows, 600);
}

// Padding bufferizes (tensor.pad -> memref.copy into a strided subview) to a
// call of the runtime function `memrefCopy`, which the JIT cannot resolve.
std::vector<Window> paddedConvWindows() {
  std::vector<Window> windows;
  windows.push_back({3, 3, {1, 1}, {1, 1, 1, 1}});         // "same"
  windows.push_back({3, 2, {1, 1}, {1, 2, 0, 1}});         // asymmetric
  windows.push_back({3, 3, {2, 1}, {1, 1, 1, 1}});         // stride 2, padded
  windows.push_back({3, 3, {1, 1}, {2, 2, 2, 2}, {2, 2}}); // dilation 2, same
  windows.push_back({2, 3, {2, 2}, {2, 1, 1, 2}, {2, 1}}); // all at once
  return windows;
}

TEST(OpsConv2D, Padding) { checkConv2D(paddedConvWindows(), 650); }

// The reference of Padding against unpadded conv2d on zero-padded inputs.
TEST(OpsConv2D, PaddedReferenceMatchesExplicitPadding) {
  checkConv2D(paddedConvWindows(), 650, /*explicitPad=*/true);
}

// The filter gradient of a single-channel input (a first layer's), whose
// 9 taps are the rows of one register tile, per image and output row
// (stride 1, at the seed CNN's width), and with stride 2 (per channel, as
// other filter gradients), against naive sums.
/// Whether `dw` is the 3x3 filter gradient of a unit-stride, unpadded
/// convolution of `x` with output gradient `g`: dW[i, j, c, f] = sum over
/// images and output pixels of x[b, y + i, z + j, c] * g[b, y, z, f].
::testing::AssertionResult checkFilterGradient(const Tensor &dw,
                                               const Tensor &x, const Tensor &g,
                                               double slack = 1) {
  int64_t n = g.shape()[0], oh = g.shape()[1], ow = g.shape()[2];
  Shape shape = {3, 3, x.shape()[3], g.shape()[3]};
  std::vector<double> ref(product(shape)), tol(product(shape));
  forEachIndex(shape, [&](llvm::ArrayRef<int64_t> i, int64_t linear) {
    double sum = 0, absSum = 0;
    for (int64_t b = 0; b < n; ++b)
      for (int64_t y = 0; y < oh; ++y)
        for (int64_t z = 0; z < ow; ++z) {
          double p = double(x.at<float>({b, y + i[0], z + i[1], i[2]})) *
                     g.at<float>({b, y, z, i[3]});
          sum += p;
          absSum += std::abs(p);
        }
    ref[linear] = sum;
    tol[linear] = slack * sumTol(n * oh * ow, absSum);
  });
  return allClose(dw, shape, ref, tol);
}

/// A filter gradient of a 3x3 filter at the given sizes, with the bias
/// gradient beside it (the sum of the same output gradient over images,
/// rows and columns) in both orders, against the naive sums; the filter
/// gradient with `slack` times the tolerance of a direct sum.
void checkFilterAndBiasGradients(int64_t n, int64_t h, int64_t w, int64_t c,
                                 int64_t fo, unsigned seed, Conv algorithm) {
  SCOPED_TRACE(nameOf(algorithm));
  double slack = slackOf(algorithm);
  for (bool biasFirst : {false, true}) {
    SCOPED_TRACE("C=" + std::to_string(c) + (biasFirst ? " bias first" : ""));
    const int64_t oh = h - 2, ow = w - 2;
    std::string xt = tensorType({n, h, w, c}, "f32"),
                gt = tensorType({n, oh, ow, fo}, "f32"),
                kt = tensorType({3, 3, c, fo}, "f32"),
                bt = tensorType({fo}, "f32");
    std::string filter = "  %r = fuse.conv2d_filter_grad %x, %g, %k : (" + xt +
                         ", " + gt + ", " + kt + ") -> " + kt + "\n";
    std::string bias = "  %db = fuse.reduce_sum %g {axes = array<i64: 0, "
                       "1, 2>} : (" +
                       gt + ") -> " + bt + "\n";
    Jit jit("func.func @f(%x: " + xt + ", %g: " + gt + ", %k: " + kt +
            ") -> (" + kt + ", " + bt + ") {\n" +
            (biasFirst ? bias + filter : filter + bias) +
            "  return %r, %db : " + kt + ", " + bt + "\n}\n");
    Tensor x = randomTensor({n, h, w, c}, ++seed),
           g = randomTensor({n, oh, ow, fo}, ++seed),
           k = randomTensor({3, 3, c, fo}, ++seed);
    std::vector<Tensor> out = jit.call("f", {x, g, k});
    ASSERT_EQ(out.size(), 2u);
    EXPECT_TRUE(checkFilterGradient(out[0], x, g, slack));
    std::vector<double> biasRef(fo), biasTol(fo);
    for (int64_t f = 0; f < fo; ++f) {
      double sum = 0, absSum = 0;
      for (int64_t b = 0; b < n; ++b)
        for (int64_t y = 0; y < oh; ++y)
          for (int64_t z = 0; z < ow; ++z) {
            sum += g.at<float>({b, y, z, f});
            absSum += std::abs(g.at<float>({b, y, z, f}));
          }
      biasRef[f] = sum;
      biasTol[f] = sumTol(n * oh * ow, absSum);
    }
    EXPECT_TRUE(allClose(out[1], {fo}, biasRef, biasTol));
  }
}

// Both direct filter-gradient paths (8 channels; 1 channel): one image loop
// computes the filter and bias gradients.
TEST(OpsConv2D, BiasGradientBesideFilterGradient) {
  checkFilterAndBiasGradients(3, 9, 11, 8, 16, 750, Conv::Direct);
  checkFilterAndBiasGradients(3, 9, 11, 1, 16, 760, Conv::Direct);
}

// Filter gradients of 3x3 filters with whole registers of channels and
// filters and an even output gradient are the transpose of Winograd's
// F(4x4, 3x3) when 4 divides the output gradient, else of F(2x2, 3x3)
// (WinogradConvolution.cpp), accumulated over the images, with the bias
// gradient in the same image loop: 16 channels x 32 filters over 3 images
// of 12 x 26 (F(2x2): 6 x 13 tiles, products whose reduction is the 78
// tiles; the strategy's 3 groups of one image, partials added after), and
// the seed CNN's 32 x 32 layer (F(4x4) on 24 x 24) over 2 images (one loop)
// and 4 (2 groups of 2). Their sums of transformed values round
// differently from a direct sum: the tolerance is 4 times a direct sum's.
TEST(OpsConv2D, WinogradFilterGradient) {
  for (Conv algorithm : {Conv::Direct, Conv::Winograd})
    checkFilterAndBiasGradients(3, 14, 28, 16, 32, 770, algorithm);
  for (Conv algorithm : {Conv::Direct, Conv::Winograd})
    checkFilterAndBiasGradients(2, 26, 26, 32, 32, 780, algorithm);
  for (Conv algorithm : {Conv::Direct, Conv::Winograd})
    checkFilterAndBiasGradients(4, 26, 26, 32, 32, 790, algorithm);
}

TEST(OpsConv2D, SingleChannelFilterGradient) {
  const int64_t n = 3, h = 28, w = 28, fo = 32;
  unsigned seed = 720;
  for (int64_t stride : {1, 2}) {
    SCOPED_TRACE("stride " + std::to_string(stride));
    const int64_t oh = (h - 3) / stride + 1, ow = (w - 3) / stride + 1;
    std::string xt = tensorType({n, h, w, 1}, "f32"),
                gt = tensorType({n, oh, ow, fo}, "f32"),
                kt = tensorType({3, 3, 1, fo}, "f32");
    std::string s = std::to_string(stride);
    Jit jit("func.func @filter(%x: " + xt + ", %g: " + gt + ", %k: " + kt +
            ") -> " + kt + " {\n  %r = fuse.conv2d_filter_grad %x, %g, %k " +
            "{strides = array<i64: " + s + ", " + s + ">} : (" + xt + ", " +
            gt + ", " + kt + ") -> " + kt + "\n  return %r : " + kt + "\n}\n");
    Tensor x = randomTensor({n, h, w, 1}, seed++),
           g = randomTensor({n, oh, ow, fo}, seed++),
           k = randomTensor({3, 3, 1, fo}, seed++);
    std::vector<Tensor> out = jit.call("filter", {x, g, k});
    ASSERT_EQ(out.size(), 1u);
    Shape shape = {3, 3, 1, fo};
    std::vector<double> ref(product(shape)), tol(product(shape));
    forEachIndex(shape, [&](llvm::ArrayRef<int64_t> i, int64_t linear) {
      double sum = 0, absSum = 0;
      for (int64_t b = 0; b < n; ++b)
        for (int64_t y = 0; y < oh; ++y)
          for (int64_t z = 0; z < ow; ++z) {
            double p = double(x.at<float>(
                           {b, y * stride + i[0], z * stride + i[1], 0})) *
                       g.at<float>({b, y, z, i[3]});
            sum += p;
            absSum += std::abs(p);
          }
      ref[linear] = sum;
      tol[linear] = sumTol(n * oh * ow, absSum);
    });
    EXPECT_TRUE(allClose(out[0], shape, ref, tol));
  }
}

// The gradients at sizes that take the code generator's other paths: a
// filter gradient whose output gradient does not fit in L2 (filter rows as
// the outermost loop; 3-wide output rows, so 4 images per tile), and output
// widths that are not a whole number of 8-column tiles (a convolution split
// in two, its edge 2 images per tile), against naive sums.
/// The naive input gradient of a 3x3 filter `k` for the output gradient
/// `g`, of `shape` (NHWC), and its tolerance: `slack` times a direct sum's.
void inputGradientReference(const Tensor &g, const Tensor &k,
                            llvm::ArrayRef<int64_t> shape, double slack,
                            std::vector<double> &ref,
                            std::vector<double> &tol) {
  const int64_t oh = g.shape()[1], ow = g.shape()[2], fo = g.shape()[3];
  ref.assign(product(shape), 0);
  tol.assign(product(shape), 0);
  forEachIndex(shape, [&](llvm::ArrayRef<int64_t> i, int64_t linear) {
    double sum = 0, absSum = 0;
    for (int64_t a = 0; a < 3; ++a)
      for (int64_t b = 0; b < 3; ++b) {
        int64_t y = i[1] - a, z = i[2] - b;
        if (y < 0 || y >= oh || z < 0 || z >= ow)
          continue;
        for (int64_t f = 0; f < fo; ++f) {
          double p = double(g.at<float>({i[0], y, z, f})) *
                     k.at<float>({a, b, i[3], f});
          sum += p;
          absSum += std::abs(p);
        }
      }
    ref[linear] = sum;
    tol[linear] = slack * sumTol(9 * fo, absSum);
  });
}

/// fuse.conv2d_input_grad of a 3x3 filter at the given sizes against the
/// naive reference, with `slack` times the tolerance of a direct sum.
void checkInputGradient(int64_t n, int64_t h, int64_t w, int64_t c, int64_t fo,
                        unsigned seed, Conv algorithm) {
  SCOPED_TRACE(nameOf(algorithm));
  double slack = slackOf(algorithm);
  const int64_t oh = h - 2, ow = w - 2;
  std::string xt = tensorType({n, h, w, c}, "f32"),
              gt = tensorType({n, oh, ow, fo}, "f32"),
              kt = tensorType({3, 3, c, fo}, "f32");
  Jit jit("func.func @input(%g: " + gt + ", %k: " + kt + ", %x: " + xt +
          ") -> " + xt + " {\n  %r = fuse.conv2d_input_grad %g, %k, %x : (" +
          gt + ", " + kt + ", " + xt + ") -> " + xt + "\n  return %r : " + xt +
          "\n}\n");
  Tensor x = randomTensor({n, h, w, c}, seed),
         g = randomTensor({n, oh, ow, fo}, seed + 1),
         k = randomTensor({3, 3, c, fo}, seed + 2);
  std::vector<Tensor> out = jit.call("input", {g, k, x});
  ASSERT_EQ(out.size(), 1u);
  Shape shape = {n, h, w, c};
  std::vector<double> ref, tol;
  inputGradientReference(g, k, shape, slack, ref, tol);
  EXPECT_TRUE(allClose(out[0], shape, ref, tol));
}

TEST(OpsConv2D, GradientsAtCodegenSizes) {
  const int64_t n = 4, h = 50, w = 29, c = 8, fo = 32, oh = h - 2, ow = w - 2;
  std::string xt = tensorType({n, h, w, c}, "f32"),
              gt = tensorType({n, oh, ow, fo}, "f32"),
              kt = tensorType({3, 3, c, fo}, "f32");
  Jit jit("func.func @filter(%x: " + xt + ", %g: " + gt + ", %k: " + kt +
          ") -> " + kt + " {\n  %r = fuse.conv2d_filter_grad %x, %g, %k : (" +
          xt + ", " + gt + ", " + kt + ") -> " + kt + "\n  return %r : " + kt +
          "\n}\n");
  Tensor x = randomTensor({n, h, w, c}, 700),
         g = randomTensor({n, oh, ow, fo}, 701),
         k = randomTensor({3, 3, c, fo}, 702);
  std::vector<Tensor> out = jit.call("filter", {x, g, k});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(checkFilterGradient(out[0], x, g));
  checkInputGradient(n, h, w, c, fo, 700, Conv::Direct);
}

/// The naive 3x3 convolution of `x` with `k` plus the bias `b`, and its
/// tolerance: `slack` times a direct sum's (4 for Winograd's transforms,
/// which add rounding).
void convBiasReference(const Tensor &x, const Tensor &k, const Tensor &b,
                       std::vector<double> &ref, std::vector<double> &tol,
                       double slack = 4) {
  const int64_t c = x.shape()[3];
  Shape shape = {x.shape()[0], x.shape()[1] - 2, x.shape()[2] - 2,
                 k.shape()[3]};
  ref.assign(product(shape), 0);
  tol.assign(product(shape), 0);
  forEachIndex(shape, [&](llvm::ArrayRef<int64_t> i, int64_t linear) {
    double acc = b.at<float>({i[3]}), absSum = std::abs(acc);
    for (int64_t p = 0; p < 3; ++p)
      for (int64_t q = 0; q < 3; ++q)
        for (int64_t ch = 0; ch < c; ++ch) {
          double t = double(x.at<float>({i[0], i[1] + p, i[2] + q, ch})) *
                     k.at<float>({p, q, ch, i[3]});
          acc += t;
          absSum += std::abs(t);
        }
    ref[linear] = acc;
    tol[linear] = slack * sumTol(9 * c + 1, absSum);
  });
}

/// conv2d + bias + ReLU at the given sizes against the naive reference, with
/// `slack` times the tolerance of a direct sum: in @fused the consumer is
/// the convolution's only user; in @shared the bias sum has two users, so
/// the sum alone is fused and the ReLU is a pass of its own; @plain has no
/// consumer.
void checkConvBiasRelu(int64_t n, int64_t h, int64_t w, int64_t c, int64_t fo,
                       unsigned seed, Conv algorithm) {
  SCOPED_TRACE(nameOf(algorithm));
  double slack = slackOf(algorithm);
  const int64_t oh = h - 2, ow = w - 2;
  std::string xt = tensorType({n, h, w, c}, "f32"),
              kt = tensorType({3, 3, c, fo}, "f32"),
              bt = tensorType({fo}, "f32"),
              yt = tensorType({n, oh, ow, fo}, "f32");
  std::string head = "(%x: " + xt + ", %k: " + kt + ", %b: " + bt + ")";
  std::string conv =
      "  %y = fuse.conv2d %x, %k : (" + xt + ", " + kt + ") -> " + yt + "\n";
  std::string body = conv + "  %s = fuse.add %y, %b : (" + yt + ", " + bt +
                     ") -> " + yt + "\n  %r = fuse.relu %s : " + yt + "\n";
  Jit jit("func.func @fused" + head + " -> " + yt + " {\n" + body +
          "  return %r : " + yt + "\n}\nfunc.func @shared" + head + " -> (" +
          yt + ", " + yt + ") {\n" + body + "  return %s, %r : " + yt + ", " +
          yt + "\n}\nfunc.func @plain(%x: " + xt + ", %k: " + kt + ") -> " +
          yt + " {\n" + conv + "  return %y : " + yt + "\n}\n");
  Tensor x = randomTensor({n, h, w, c}, seed),
         k = randomTensor({3, 3, c, fo}, seed + 1),
         b = randomTensor({fo}, seed + 2);
  Shape shape = {n, oh, ow, fo};
  std::vector<double> plain, plainTol, sum, tol;
  convBiasReference(x, k, Tensor::zeros(DType::F32, {fo}), plain, plainTol,
                    slack);
  convBiasReference(x, k, b, sum, tol, slack);
  std::vector<double> relu(sum);
  for (double &v : relu)
    v = std::max(0.0, v);
  std::vector<Tensor> fused = jit.call("fused", {x, k, b});
  ASSERT_EQ(fused.size(), 1u);
  EXPECT_TRUE(allClose(fused[0], shape, relu, tol));
  std::vector<Tensor> shared = jit.call("shared", {x, k, b});
  ASSERT_EQ(shared.size(), 2u);
  EXPECT_TRUE(allClose(shared[0], shape, sum, tol));
  EXPECT_TRUE(allClose(shared[1], shape, relu, tol));
  std::vector<Tensor> alone = jit.call("plain", {x, k});
  ASSERT_EQ(alone.size(), 1u);
  EXPECT_TRUE(allClose(alone[0], shape, plain, plainTol));
}

// fuse-tile-and-vectorize applies a convolution's element-wise consumer to
// each output tile (ConvolutionTiling.cpp), on the main tiles of 8 columns
// and on the edge tiles (27 = 24 + 3 columns, 4 images per edge tile).
TEST(OpsConv2D, FusedBiasReluAtCodegenSizes) {
  checkConvBiasRelu(4, 20, 29, 8, 32, 710, Conv::Direct);
}

// 3x3 convolutions with an even output and whole registers of channels and
// filters are computed as Winograd's F(4x4, 3x3) on the output's largest
// block whose sides 4 divides and F(2x2, 3x3) on the strips left
// (WinogradConvolution.cpp), the consumer applied per image: the forward
// pass with and without a consumer, and an input gradient (a convolution of
// the zero-padded output gradient), with 16, 32 and 48 channels. Outputs:
// 12 x 26 (a 12 x 24 block and a strip to its right), 24 x 24 and 8 x 8
// (one block), 26 x 26 (a block and strips to its right and below). In the
// 8 x 8 case the input's transform and the products have one type (as many
// channels as filters) and must still get two buffers. Their sums of
// transformed values round differently from a direct sum: the tolerance is
// 4 times a direct sum's.
TEST(OpsConv2D, Winograd) {
  for (Conv algorithm : {Conv::Direct, Conv::Winograd})
    checkConvBiasRelu(3, 14, 28, 16, 32, 720, algorithm);
  for (Conv algorithm : {Conv::Direct, Conv::Winograd})
    checkConvBiasRelu(2, 26, 26, 48, 32, 730, algorithm);
  for (Conv algorithm : {Conv::Direct, Conv::Winograd})
    checkConvBiasRelu(1, 10, 10, 16, 16, 735, algorithm);
  for (Conv algorithm : {Conv::Direct, Conv::Winograd})
    checkInputGradient(2, 26, 26, 16, 32, 740, algorithm);
}

// The seed CNN's backward pass from its second convolution into its first:
// the input gradient (Winograd, a 24 x 24 block and strips) masked by the
// ReLU, whose images the first convolution's filter gradient (1 channel)
// and bias gradient then read. fuse-tile-and-vectorize fuses the two image
// loops (ImageLoopFusion.cpp): the masked gradient passes image by image
// and is never stored. Against naive sums; the Winograd gradient's error
// (4 times a direct sum's) is carried into the sums that read it.
TEST(OpsConv2D, InputGradientIntoFilterGradient) {
  const int64_t n = 3, h = 26, w = 26, c = 16, fo = 32, oh = h - 2, ow = w - 2;
  std::string at = tensorType({n, h, w, c}, "f32"),
              mt = tensorType({n, h, w, c}, "i1"),
              gt = tensorType({n, oh, ow, fo}, "f32"),
              kt = tensorType({3, 3, c, fo}, "f32"),
              xt = tensorType({n, h + 2, w + 2, 1}, "f32"),
              k1t = tensorType({3, 3, 1, c}, "f32"),
              bt = tensorType({c}, "f32");
  Jit jit(Conv::Winograd,
          "func.func @chain(%g: " + gt + ", %k: " + kt + ", %a: " + at +
              ", %x: " + xt + ", %k1: " + k1t + ", %zero: tensor<f32>) -> (" +
              k1t + ", " + bt +
              ") {\n  %dx = fuse.conv2d_input_grad %g, %k, %a : (" + gt + ", " +
              kt + ", " + at + ") -> " + at +
              "\n  %m = fuse.compare gt, %a, %zero : (" + at +
              ", tensor<f32>) -> " + mt +
              "\n  %dz = fuse.select %m, %dx, %zero : (" + mt + ", " + at +
              ", tensor<f32>) -> " + at +
              "\n  %dw = fuse.conv2d_filter_grad %x, %dz, %k1 : (" + xt + ", " +
              at + ", " + k1t + ") -> " + k1t +
              "\n  %db = fuse.reduce_sum %dz {axes = array<i64: 0, 1, 2>} : (" +
              at + ") -> " + bt + "\n  return %dw, %db : " + k1t + ", " + bt +
              "\n}\n");
  Tensor g = randomTensor({n, oh, ow, fo}, 790),
         k = randomTensor({3, 3, c, fo}, 791),
         a = randomTensor({n, h, w, c}, 792),
         x = randomTensor({n, h + 2, w + 2, 1}, 793),
         k1 = randomTensor({3, 3, 1, c}, 794);
  Tensor zero = Tensor::zeros(DType::F32, {});
  std::vector<Tensor> out = jit.call("chain", {g, k, a, x, k1, zero});
  ASSERT_EQ(out.size(), 2u);
  // dz and the bound on its error, then the sums over it.
  Shape shape = {n, h, w, c};
  std::vector<double> dz, dzTol;
  inputGradientReference(g, k, shape, /*slack=*/4, dz, dzTol);
  forEachIndex(shape, [&](llvm::ArrayRef<int64_t> i, int64_t linear) {
    if (a.at<float>({i[0], i[1], i[2], i[3]}) <= 0)
      dz[linear] = dzTol[linear] = 0;
  });
  Shape dwShape = {3, 3, 1, c};
  std::vector<double> dw(product(dwShape)), dwTol(product(dwShape));
  std::vector<double> db(c), dbTol(c);
  forEachIndex(shape, [&](llvm::ArrayRef<int64_t> i, int64_t linear) {
    db[i[3]] += dz[linear];
    dbTol[i[3]] +=
        std::abs(dz[linear]) * (n * h * w + 2) * kEps + dzTol[linear];
    for (int64_t p = 0; p < 3; ++p)
      for (int64_t q = 0; q < 3; ++q) {
        double xv = x.at<float>({i[0], i[1] + p, i[2] + q, 0});
        dw[(p * 3 + q) * c + i[3]] += xv * dz[linear];
        dwTol[(p * 3 + q) * c + i[3]] +=
            std::abs(xv) *
            (std::abs(dz[linear]) * (n * h * w + 2) * kEps + dzTol[linear]);
      }
  });
  EXPECT_TRUE(allClose(out[0], dwShape, dw, dwTol));
  EXPECT_TRUE(allClose(out[1], {c}, db, dbTol));
}

/// The backward pass of conv -> bias -> relu -> 2x2 max pool at sizes that
/// take Winograd's paths, against naive sums: the pool keeps its argmax
/// (fuse.max_pool2d_indices, in the convolution's image loop), and its
/// gradient is computed anew in the image loops of both convolution
/// gradients. Windows whose two largest values, or whose maximum and 0, lie
/// within rounding of each other get weight 0, so that no gradient depends
/// on how f32 breaks a near tie.
TEST(OpsConv2D, WinogradMaxPoolGradients) {
  const int64_t n = 2, h = 14, w = 14, c = 16, fo = 32, oh = h - 2, ow = w - 2;
  std::string xt = tensorType({n, h, w, c}, "f32"),
              kt = tensorType({3, 3, c, fo}, "f32"),
              bt = tensorType({fo}, "f32"),
              yt = tensorType({n, oh, ow, fo}, "f32"),
              pt = tensorType({n, oh / 2, ow / 2, fo}, "f32");
  std::string args =
      "(%x: " + xt + ", %k: " + kt + ", %b: " + bt + ", %w: " + pt + ")";
  std::string types = xt + ", " + kt + ", " + bt + ", " + pt;
  Jit jit(Conv::Winograd,
          "func.func @loss" + args + " -> tensor<f32> {\n" +
              "  %y = fuse.conv2d %x, %k : (" + xt + ", " + kt + ") -> " + yt +
              "\n  %s = fuse.add %y, %b : (" + yt + ", " + bt + ") -> " + yt +
              "\n  %r = fuse.relu %s : " + yt +
              "\n  %p = fuse.max_pool2d %r {window = array<i64: 2, 2>} : (" +
              yt + ") -> " + pt + "\n  %m = fuse.mul %p, %w : (" + pt + ", " +
              pt + ") -> " + pt +
              "\n  %l = fuse.reduce_sum %m {axes = array<i64: 0, 1, "
              "2, 3>} : (" +
              pt + ") -> tensor<f32>\n  return %l : tensor<f32>\n}\n" +
              "func.func @vg" + args + " -> (tensor<f32>, " + xt + ", " + kt +
              ", " + bt +
              ") {\n  %r:4 = fuse.value_and_grad @loss(%x, %k, %b, %w) {wrt = "
              "array<i64: 0, 1, 2>} : (" +
              types + ") -> (tensor<f32>, " + xt + ", " + kt + ", " + bt +
              ")\n  return %r#0, %r#1, %r#2, %r#3 : tensor<f32>, " + xt + ", " +
              kt + ", " + bt + "\n}\n");
  Tensor x = randomTensor({n, h, w, c}, 810),
         k = randomTensor({3, 3, c, fo}, 811), b = randomTensor({fo}, 812),
         weight = randomTensor({n, oh / 2, ow / 2, fo}, 813);

  // The pre-activation and its tolerance.
  Shape shape = {n, oh, ow, fo};
  std::vector<double> pre, preTol;
  convBiasReference(x, k, b, pre, preTol);
  // Each window's first maximum receives its weight, if positive.
  Shape pooledShape = {n, oh / 2, ow / 2, fo};
  Tensor dy = Tensor::zeros(DType::F32, shape);
  double loss = 0, lossAbs = 0;
  int64_t masked = 0;
  forEachIndex(pooledShape, [&](llvm::ArrayRef<int64_t> i, int64_t linear) {
    int64_t best = -1, second = -1;
    double margin = 0;
    for (int64_t p = 0; p < 2; ++p)
      for (int64_t q = 0; q < 2; ++q) {
        int64_t at =
            ((i[0] * oh + 2 * i[1] + p) * ow + 2 * i[2] + q) * fo + i[3];
        margin = std::max(margin, 100 * preTol[at]);
        if (best < 0 || pre[at] > pre[best]) {
          second = best;
          best = at;
        } else if (second < 0 || pre[at] > pre[second]) {
          second = at;
        }
      }
    float &wv = weight.data<float>()[linear];
    if (pre[best] - pre[second] < margin || std::abs(pre[best]) < margin) {
      wv = 0;
      ++masked;
      return;
    }
    if (pre[best] <= 0)
      return;
    dy.data<float>()[best] = wv;
    loss += wv * pre[best];
    lossAbs += std::abs(wv * pre[best]);
  });
  ASSERT_LT(masked, product(pooledShape) / 10);

  std::vector<Tensor> out = jit.call("vg", {x, k, b, weight});
  ASSERT_EQ(out.size(), 4u);
  EXPECT_NEAR(out[0].data<float>()[0], loss,
              sumTol(product(pooledShape), lossAbs) + 1e-3 * lossAbs);
  // dx: the naive input gradient of dy.
  std::vector<double> dx, dxTol;
  inputGradientReference(dy, k, {n, h, w, c}, /*slack=*/4, dx, dxTol);
  EXPECT_TRUE(allClose(out[1], {n, h, w, c}, dx, dxTol));
  // dk and db: sums over the images and positions.
  EXPECT_TRUE(checkFilterGradient(out[2], x, dy, /*slack=*/4));
  std::vector<double> db(fo), dbTol(fo);
  for (int64_t f = 0; f < fo; ++f) {
    double sum = 0, absSum = 0;
    forEachIndex({n, oh, ow}, [&](llvm::ArrayRef<int64_t> i, int64_t) {
      double t = dy.at<float>({i[0], i[1], i[2], f});
      sum += t;
      absSum += std::abs(t);
    });
    db[f] = sum;
    dbTol[f] = sumTol(n * oh * ow, absSum);
  }
  EXPECT_TRUE(allClose(out[3], {fo}, db, dbTol));
}

// The seed CNN's second layer: a Winograd convolution with bias and ReLU,
// then a 2x2 max pool. fuse-tile-and-vectorize computes each image's pool
// in the convolution's image loop (ImageLoopFusion.cpp), on the image it
// has just computed; @both also returns the activation (as the seed CNN
// keeps it for its backward pass), @pooled only the pool. Against naive
// sums and maxima (the tolerance of the Winograd sums: 4 times a direct
// sum's).
TEST(OpsConv2D, WinogradThenMaxPool) {
  const int64_t n = 3, h = 14, w = 14, c = 16, fo = 32, oh = h - 2, ow = w - 2;
  std::string xt = tensorType({n, h, w, c}, "f32"),
              kt = tensorType({3, 3, c, fo}, "f32"),
              bt = tensorType({fo}, "f32"),
              yt = tensorType({n, oh, ow, fo}, "f32"),
              pt = tensorType({n, oh / 2, ow / 2, fo}, "f32");
  std::string head = "(%x: " + xt + ", %k: " + kt + ", %b: " + bt + ")";
  std::string body =
      "  %y = fuse.conv2d %x, %k : (" + xt + ", " + kt + ") -> " + yt +
      "\n  %s = fuse.add %y, %b : (" + yt + ", " + bt + ") -> " + yt +
      "\n  %r = fuse.relu %s : " + yt +
      "\n  %p = fuse.max_pool2d %r {window = array<i64: 2, 2>} : (" + yt +
      ") -> " + pt + "\n";
  Jit jit(Conv::Winograd, "func.func @both" + head + " -> (" + yt + ", " + pt +
                              ") {\n" + body + "  return %r, %p : " + yt +
                              ", " + pt + "\n}\nfunc.func @pooled" + head +
                              " -> " + pt + " {\n" + body +
                              "  return %p : " + pt + "\n}\n");
  Tensor x = randomTensor({n, h, w, c}, 800),
         k = randomTensor({3, 3, c, fo}, 801), b = randomTensor({fo}, 802);
  Shape shape = {n, oh, ow, fo};
  std::vector<double> relu, tol;
  convBiasReference(x, k, b, relu, tol);
  for (double &v : relu)
    v = std::max(0.0, v);
  Shape pooledShape = {n, oh / 2, ow / 2, fo};
  std::vector<double> pooled(product(pooledShape)),
      pooledTol(product(pooledShape));
  forEachIndex(pooledShape, [&](llvm::ArrayRef<int64_t> i, int64_t linear) {
    double best = -INFINITY, bestTol = 0;
    for (int64_t p = 0; p < 2; ++p)
      for (int64_t q = 0; q < 2; ++q) {
        int64_t at =
            ((i[0] * oh + 2 * i[1] + p) * ow + 2 * i[2] + q) * fo + i[3];
        best = std::max(best, relu[at]);
        bestTol = std::max(bestTol, tol[at]);
      }
    pooled[linear] = best;
    pooledTol[linear] = bestTol;
  });
  std::vector<Tensor> both = jit.call("both", {x, k, b});
  ASSERT_EQ(both.size(), 2u);
  EXPECT_TRUE(allClose(both[0], shape, relu, tol));
  EXPECT_TRUE(allClose(both[1], pooledShape, pooled, pooledTol));
  std::vector<Tensor> alone = jit.call("pooled", {x, k, b});
  ASSERT_EQ(alone.size(), 1u);
  EXPECT_TRUE(allClose(alone[0], pooledShape, pooled, pooledTol));
}

/// Max or average pooling; padding is skipped (avg divides by the number of
/// input elements in the window).
void poolRef(const Tensor &x, const Window &win, bool isMax,
             std::vector<double> &ref, std::vector<double> &tol, Shape &shape,
             std::vector<int64_t> *counts = nullptr) {
  int64_t n = x.shape()[0], h = x.shape()[1], w = x.shape()[2],
          c = x.shape()[3];
  shape = {n, win.outH(h), win.outW(w), c};
  ref.assign(product(shape), 0);
  tol.assign(product(shape), 0);
  if (counts)
    counts->assign(product(shape), 0);
  forEachIndex(shape, [&](llvm::ArrayRef<int64_t> o, int64_t linear) {
    double acc = isMax ? -INFINITY : 0, absSum = 0;
    int64_t count = 0;
    for (int64_t i = 0; i < win.kh; ++i)
      for (int64_t j = 0; j < win.kw; ++j) {
        int64_t y = o[1] * win.strides[0] - win.padding[0] + i;
        int64_t z = o[2] * win.strides[1] - win.padding[2] + j;
        if (y < 0 || y >= h || z < 0 || z >= w)
          continue;
        double v = x.at<float>({o[0], y, z, o[3]});
        acc = isMax ? std::max(acc, v) : acc + v;
        absSum += std::abs(v);
        ++count;
      }
    ref[linear] = isMax ? acc : acc / count;
    if (counts)
      (*counts)[linear] = count;
    tol[linear] =
        isMax ? 0
              : sumTol(count, absSum) / count + kEps * std::abs(acc / count);
  });
}

/// Checks both pools against poolRef for each window. With `explicitPad`,
/// the compiled op has no padding and gets an input padded in C++ (-inf for
/// max, 0 for avg, whose result is then rescaled from the window size to the
/// count of input elements): that checks the padded reference itself.
void checkPools(const std::vector<Window> &windows, float lo, float hi,
                bool explicitPad = false) {
  unsigned seed = 700;
  for (bool isMax : {true, false})
    for (const Window &win : windows) {
      SCOPED_TRACE(std::string(isMax ? "max_pool2d " : "avg_pool2d ") +
                   win.describe());
      const int64_t h = 7, w = 9, c = 3;
      Window op = explicitPad ? unpadded(win) : win;
      int64_t ih = explicitPad ? h + win.padding[0] + win.padding[1] : h;
      int64_t iw = explicitPad ? w + win.padding[2] + win.padding[3] : w;
      std::string in = tensorType({-1, ih, iw, c}, "f32");
      std::string out = tensorType({-1, win.outH(h), win.outW(w), c}, "f32");
      Jit jit("func.func @f(%x: " + in + ") -> " + out + " {\n  %y = fuse." +
              (isMax ? "max_pool2d" : "avg_pool2d") + " %x " + op.attrs(false) +
              " : (" + in + ") -> " + out + "\n  return %y : " + out + "\n}\n");
      for (int64_t n : {1, 3}) {
        Tensor x = randomTensor({n, h, w, c}, ++seed, lo, hi);
        Tensor arg = explicitPad ? padInput(x, win, isMax ? -kInf : 0.f) : x;
        std::vector<Tensor> results = jit.call("f", {arg});
        ASSERT_EQ(results.size(), 1u);
        std::vector<double> ref, tol;
        std::vector<int64_t> counts;
        Shape shape;
        poolRef(x, win, isMax, ref, tol, shape, &counts);
        if (explicitPad && !isMax)
          for (size_t i = 0; i < ref.size(); ++i) {
            double scale = double(counts[i]) / (win.kh * win.kw);
            ref[i] *= scale;
            tol[i] = tol[i] * scale + kEps * std::abs(ref[i]);
          }
        EXPECT_TRUE(allClose(results[0], shape, ref, tol)) << "batch " << n;
      }
    }
}

TEST(OpsPool, Unpadded) {
  std::vector<Window> windows;
  windows.push_back({2, 2, {2, 2}}); // the default strides, odd input sizes
  windows.push_back({3, 3, {1, 1}});
  windows.push_back({3, 2, {2, 3}});
  checkPools(windows, -1, 1);
}

// All-negative inputs: max must not see the padding (-inf, not 0), and avg
// must divide by the number of input elements (not the window size).
std::vector<Window> paddedPoolWindows() {
  std::vector<Window> windows;
  windows.push_back({3, 3, {1, 1}, {1, 1, 1, 1}});
  windows.push_back({3, 3, {2, 2}, {1, 1, 1, 1}});
  windows.push_back({2, 3, {1, 2}, {0, 1, 2, 0}});
  windows.push_back({4, 4, {3, 3}, {2, 2, 1, 2}});
  return windows;
}

TEST(OpsPool, PaddingIsExcluded) { checkPools(paddedPoolWindows(), -2, -1); }

// The reference of PaddingIsExcluded against the unpadded pools on inputs
// padded in C++.
TEST(OpsPool, PaddedReferenceMatchesExplicitPadding) {
  checkPools(paddedPoolWindows(), -2, -1, /*explicitPad=*/true);
}

TEST(OpsPool, DefaultStridesAreTheWindow) {
  Jit jit(R"mlir(
func.func @max(%x: tensor<?x6x4x2xf32>) -> tensor<?x3x2x2xf32> {
  %y = fuse.max_pool2d %x {window = array<i64: 2, 2>} : (tensor<?x6x4x2xf32>) -> tensor<?x3x2x2xf32>
  return %y : tensor<?x3x2x2xf32>
}
func.func @avg(%x: tensor<?x6x4x2xf32>) -> tensor<?x2x1x2xf32> {
  %y = fuse.avg_pool2d %x {window = array<i64: 3, 4>} : (tensor<?x6x4x2xf32>) -> tensor<?x2x1x2xf32>
  return %y : tensor<?x2x1x2xf32>
}
)mlir");
  Tensor x = randomTensor({2, 6, 4, 2}, 71);
  for (bool isMax : {true, false}) {
    Window win = isMax ? Window{2, 2, {2, 2}} : Window{3, 4, {3, 4}};
    std::vector<Tensor> out = jit.call(isMax ? "max" : "avg", {x});
    ASSERT_EQ(out.size(), 1u);
    std::vector<double> ref, tol;
    Shape shape;
    poolRef(x, win, isMax, ref, tol, shape);
    EXPECT_TRUE(allClose(out[0], shape, ref, tol)) << (isMax ? "max" : "avg");
  }
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

enum class Reduce { Sum, Mean, Max };

/// Reduces `x` over `axes`; `shape` is the result shape (with keepdims).
void reduceRef(const Tensor &x, llvm::ArrayRef<int64_t> axes, bool keepdims,
               Reduce kind, std::vector<double> &ref, std::vector<double> &tol,
               Shape &shape) {
  Shape in(x.shape().begin(), x.shape().end());
  Shape kept; // the result shape with keepdims
  int64_t count = 1;
  for (size_t d = 0; d < in.size(); ++d) {
    bool reduced = llvm::is_contained(axes, static_cast<int64_t>(d));
    kept.push_back(reduced ? 1 : in[d]);
    if (reduced)
      count *= in[d];
  }
  shape.clear();
  for (size_t d = 0; d < in.size(); ++d)
    if (keepdims || !llvm::is_contained(axes, static_cast<int64_t>(d)))
      shape.push_back(kept[d]);
  int64_t n = product(kept);
  std::vector<double> acc(n, kind == Reduce::Max ? -INFINITY : 0.0),
      absSum(n, 0.0);
  forEachIndex(in, [&](llvm::ArrayRef<int64_t> index, int64_t linear) {
    int64_t o = broadcastOffset(index, kept);
    double v = valueAt(x, linear);
    acc[o] = kind == Reduce::Max ? std::max(acc[o], v) : acc[o] + v;
    absSum[o] += std::abs(v);
  });
  ref.resize(n);
  tol.resize(n);
  for (int64_t i = 0; i < n; ++i) {
    ref[i] = kind == Reduce::Mean ? acc[i] / count : acc[i];
    tol[i] = kind == Reduce::Max ? 0 : sumTol(count, absSum[i]);
    if (kind == Reduce::Mean)
      tol[i] = tol[i] / count + kEps * std::abs(ref[i]);
  }
}

std::string reduceSource(llvm::StringRef op, llvm::ArrayRef<int64_t> in,
                         llvm::ArrayRef<int64_t> axes, bool keepdims,
                         llvm::StringRef element = "f32") {
  Shape out;
  for (size_t d = 0; d < in.size(); ++d) {
    bool reduced = llvm::is_contained(axes, static_cast<int64_t>(d));
    if (reduced && keepdims)
      out.push_back(1);
    else if (!reduced)
      out.push_back(in[d]);
  }
  std::string axesText = "array<i64: ";
  for (size_t i = 0; i < axes.size(); ++i)
    axesText += (i ? ", " : "") + std::to_string(axes[i]);
  axesText += ">";
  std::string t = tensorType(in, element), o = tensorType(out, element);
  return "func.func @f(%x: " + t + ") -> " + o + " {\n  %y = fuse." + op.str() +
         " %x {axes = " + axesText + (keepdims ? ", keepdims" : "") + "} : (" +
         t + ") -> " + o + "\n  return %y : " + o + "\n}\n";
}

TEST(OpsReduce, AxesAndKeepdims) {
  struct Case {
    Shape axes;
    bool keepdims;
  };
  const Case cases[] = {{{0}, false},       {{1}, false},     {{2}, true},
                        {{0, 2}, false},    {{2, 0}, true},   {{1, 2}, true},
                        {{0, 1, 2}, false}, {{0, 1, 2}, true}};
  unsigned seed = 800;
  for (auto [op, kind] :
       {std::pair<const char *, Reduce>{"reduce_sum", Reduce::Sum},
        {"reduce_mean", Reduce::Mean},
        {"reduce_max", Reduce::Max}})
    for (const Case &c : cases) {
      SCOPED_TRACE(std::string(op) + " axes " + shapeString(c.axes) +
                   (c.keepdims ? " keepdims" : ""));
      Jit jit(reduceSource(op, {-1, 5, 7}, c.axes, c.keepdims));
      for (int64_t n : {1, 4}) {
        Tensor x = randomTensor({n, 5, 7}, ++seed, -3, 1);
        std::vector<Tensor> out = jit.call("f", {x});
        ASSERT_EQ(out.size(), 1u);
        std::vector<double> ref, tol;
        Shape shape;
        reduceRef(x, c.axes, c.keepdims, kind, ref, tol, shape);
        EXPECT_TRUE(allClose(out[0], shape, ref, tol)) << "batch " << n;
      }
    }
}

TEST(OpsReduce, LargeAndOddSizes) {
  Jit jit(reduceSource("reduce_sum", {-1}, {0}, false));
  Jit mean(reduceSource("reduce_mean", {-1}, {0}, false));
  Jit max(reduceSource("reduce_max", {-1}, {0}, false));
  unsigned seed = 900;
  for (int64_t n : {1, 7, 1000003}) {
    SCOPED_TRACE("n = " + std::to_string(n));
    // Integers in [-8, 8]: every partial sum is exact, so one lost or
    // repeated element shows. Only the mean's division rounds.
    Tensor x = integerValued({n}, ++seed, -8, 8);
    for (auto [j, kind] : {std::pair<Jit *, Reduce>{&jit, Reduce::Sum},
                           {&mean, Reduce::Mean},
                           {&max, Reduce::Max}}) {
      std::vector<Tensor> out = j->call("f", {x});
      ASSERT_EQ(out.size(), 1u);
      std::vector<double> ref, tol;
      Shape shape;
      reduceRef(x, {0}, false, kind, ref, tol, shape);
      double rtol = kind == Reduce::Mean ? kEps : 0;
      EXPECT_TRUE(allClose(out[0], shape, ref, rtol, 0));
    }
    // Random reals, within the sum bound.
    Tensor r = randomTensor({n}, ++seed, -0.5f, 1.0f);
    std::vector<Tensor> out = jit.call("f", {r});
    ASSERT_EQ(out.size(), 1u);
    std::vector<double> ref, tol;
    Shape shape;
    reduceRef(r, {0}, false, Reduce::Sum, ref, tol, shape);
    EXPECT_TRUE(allClose(out[0], shape, ref, tol));
  }
}

// reduce_max of all-negative values and of -inf (the identity must be -inf).
TEST(OpsReduce, MaxOfNegatives) {
  Jit jit(reduceSource("reduce_max", {-1, 3}, {1}, false));
  Tensor x = Tensor::fromValues<float>(
      {3, 3}, {-5.f, -7.f, -6.f, -kInf, -kInf, -kInf, -1e30f, -kInf, -2e30f});
  std::vector<Tensor> out = jit.call("f", {x});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(allClose(out[0], {3}, {-5, -INFINITY, -1e30f}, 0, 0));
}

template <typename T> void checkIntReduce(const char *op, Reduce kind) {
  const char *element = dtypeOf<T>() == DType::I32 ? "i32" : "i64";
  SCOPED_TRACE(std::string(op) + " " + element);
  int64_t bound = dtypeOf<T>() == DType::I32 ? 100000 : (1LL << 50);
  Jit jit(reduceSource(op, {-1, 4, 3}, {0, 2}, false, element));
  Jit all(reduceSource(op, {-1, 4, 3}, {0, 1, 2}, true, element));
  Tensor x = randomInts<T>({5, 4, 3}, 11, -bound, bound);
  if (kind == Reduce::Max) // output 0 reduces only negative values
    for (int64_t i = 0; i < 5; ++i)
      for (int64_t k = 0; k < 3; ++k) {
        T &v = x.data<T>()[i * 12 + k];
        v = static_cast<T>(-std::abs(static_cast<int64_t>(v)) - 1);
      }
  for (bool keep : {false, true}) {
    std::vector<Tensor> out = (keep ? all : jit).call("f", {x});
    ASSERT_EQ(out.size(), 1u);
    Shape axes = keep ? Shape{0, 1, 2} : Shape{0, 2};
    Shape in = {5, 4, 3}, kept;
    for (int64_t d = 0; d < 3; ++d)
      kept.push_back(llvm::is_contained(axes, d) ? 1 : in[d]);
    std::vector<int64_t> ref(
        product(kept),
        kind == Reduce::Max ? std::numeric_limits<int64_t>::min() : 0);
    forEachIndex(in, [&](llvm::ArrayRef<int64_t> index, int64_t linear) {
      int64_t &r = ref[broadcastOffset(index, kept)];
      int64_t v = x.data<T>()[linear];
      r = kind == Reduce::Max ? std::max(r, v) : r + v;
    });
    Shape shape = keep ? Shape{1, 1, 1} : Shape{4};
    EXPECT_TRUE(allEqual(out[0], dtypeOf<T>(), shape, ref));
  }
}

TEST(OpsReduce, Integers) {
  checkIntReduce<int32_t>("reduce_sum", Reduce::Sum);
  checkIntReduce<int64_t>("reduce_sum", Reduce::Sum);
  checkIntReduce<int32_t>("reduce_max", Reduce::Max);
  checkIntReduce<int64_t>("reduce_max", Reduce::Max);
}

//===----------------------------------------------------------------------===//
// softmax, log_softmax and the losses
//===----------------------------------------------------------------------===//

/// softmax (or log_softmax) of `x` along `axis`.
std::vector<double> softmaxRef(const Tensor &x, int64_t axis, bool log) {
  Shape in(x.shape().begin(), x.shape().end()), kept = in;
  kept[axis] = 1;
  int64_t n = product(kept);
  std::vector<double> max(n, -INFINITY), sum(n, 0.0), ref(product(in));
  forEachIndex(in, [&](llvm::ArrayRef<int64_t> index, int64_t linear) {
    double &m = max[broadcastOffset(index, kept)];
    m = std::max(m, valueAt(x, linear));
  });
  forEachIndex(in, [&](llvm::ArrayRef<int64_t> index, int64_t linear) {
    int64_t o = broadcastOffset(index, kept);
    sum[o] += std::exp(valueAt(x, linear) - max[o]);
  });
  forEachIndex(in, [&](llvm::ArrayRef<int64_t> index, int64_t linear) {
    int64_t o = broadcastOffset(index, kept);
    double shifted = valueAt(x, linear) - max[o];
    ref[linear] = log ? shifted - std::log(sum[o]) : std::exp(shifted) / sum[o];
  });
  return ref;
}

/// The softmax-family tolerance (see the file comment) for a result `ref`
/// normalized over `n` elements.
double softmaxTol(double ref, int64_t n, bool log) {
  double sumError = static_cast<double>(n + 2) * kEps;
  if (log)
    return kSoftmaxRtol * std::abs(ref) + kSoftmaxAtol + sumError;
  return (kSoftmaxRtol + sumError) * std::abs(ref) + 1e-30;
}

std::string softmaxSource(llvm::StringRef op, llvm::StringRef attr,
                          llvm::ArrayRef<int64_t> shape) {
  std::string t = tensorType(shape, "f32");
  return "func.func @f(%x: " + t + ") -> " + t + " {\n  %y = fuse." + op.str() +
         " %x" + attr.str() + " : " + t + "\n  return %y : " + t + "\n}\n";
}

TEST(OpsSoftmax, Axes) {
  struct Case {
    const char *attr;
    Shape decl, shape;
    int64_t axis; // normalized
  };
  const Case cases[] = {
      {"", {-1, 10}, {5, 10}, 1},
      {"", {-1, 10}, {1, 10}, 1},
      {" {axis = 0}", {-1, 10}, {6, 10}, 0},
      {" {axis = -2}", {3, -1, 4}, {3, 7, 4}, 1},
      {" {axis = 2}", {2, 3, -1}, {2, 3, 1}, 2}, // a single class: 1 and 0
      {"", {-1, 1000}, {3, 1000}, 1},
      {" {axis = 0}", {-1, 6}, {257, 6}, 0},
  };
  unsigned seed = 1000;
  for (bool log : {false, true})
    for (const Case &c : cases) {
      std::string op = log ? "log_softmax" : "softmax";
      SCOPED_TRACE(op + c.attr + " " + shapeString(c.shape));
      Jit jit(softmaxSource(op, c.attr, c.decl));
      // Logits spread over +-8 and shifted by +-1000: a naive exp overflows.
      for (float shift : {0.f, 1000.f, -1000.f}) {
        Tensor x = randomTensor(c.shape, ++seed, -8, 8);
        for (int64_t i = 0; i < x.numElements(); ++i)
          x.data<float>()[i] += shift;
        std::vector<Tensor> out = jit.call("f", {x});
        ASSERT_EQ(out.size(), 1u);
        std::vector<double> ref = softmaxRef(x, c.axis, log);
        int64_t n = c.shape[c.axis];
        EXPECT_TRUE(
            allClose(out[0], c.shape, ref,
                     [&](int64_t i) { return softmaxTol(ref[i], n, log); }))
            << "shift " << shift;
      }
    }
}

// 1000003 elements along the axis, each 0 or -inf (a masked logit): the sum
// of the exponentials is the exact count of zeros, so a lost or repeated
// element shows.
TEST(OpsSoftmax, LongAxisCountsEveryElement) {
  const int64_t n = 1000003;
  for (bool log : {false, true}) {
    std::string op = log ? "log_softmax" : "softmax";
    SCOPED_TRACE(op);
    Jit jit(softmaxSource(op, "", {-1}));
    for (float level : {0.f, 1000.f}) {
      Tensor x = choiceTensor({n}, 1050, {level, -kInf});
      int64_t kept = 0;
      for (int64_t i = 0; i < n; ++i)
        kept += x.data<float>()[i] == level;
      std::vector<Tensor> out = jit.call("f", {x});
      ASSERT_EQ(out.size(), 1u);
      std::vector<double> ref(n);
      for (int64_t i = 0; i < n; ++i) {
        bool in = x.data<float>()[i] == level;
        ref[i] = log ? (in ? -std::log(double(kept)) : -INFINITY)
                     : (in ? 1.0 / kept : 0.0);
      }
      // One division (or log) rounding: 1e-6 relative.
      EXPECT_TRUE(allClose(out[0], {n}, ref, 1e-6, 0))
          << kept << " of " << n << " kept, level " << level;
    }
  }
}

template <typename L> void checkCrossEntropy(const char *labelType) {
  SCOPED_TRACE(labelType);
  std::string lt = tensorType({-1}, labelType);
  Jit jit("func.func @f(%x: tensor<?x?xf32>, %y: " + lt +
          ") -> tensor<f32> {\n  %l = fuse.softmax_cross_entropy %x, %y : "
          "(tensor<?x?xf32>, " +
          lt + ") -> tensor<f32>\n  return %l : tensor<f32>\n}\n");
  unsigned seed = 1100;
  for (auto [n, c] : {std::pair<int64_t, int64_t>{1, 10},
                      {7, 10},
                      {13, 3},
                      {5, 1},
                      {64, 1000}})
    for (float shift : {0.f, 1000.f}) {
      SCOPED_TRACE("N=" + std::to_string(n) + " C=" + std::to_string(c) +
                   " shift " + std::to_string(shift));
      Tensor x = randomTensor({n, c}, ++seed, -6, 6);
      for (int64_t i = 0; i < x.numElements(); ++i)
        x.data<float>()[i] += shift;
      Tensor y = randomInts<L>({n}, ++seed, 0, c - 1);
      std::vector<Tensor> out = jit.call("f", {x, y});
      ASSERT_EQ(out.size(), 1u);
      std::vector<double> logp = softmaxRef(x, 1, true);
      double loss = 0;
      for (int64_t i = 0; i < n; ++i)
        loss -= logp[i * c + y.data<L>()[i]];
      loss /= n;
      double tol = softmaxTol(loss, c, true) + (n + 2) * kEps * std::abs(loss);
      EXPECT_TRUE(allClose(out[0], {}, {loss}, {tol}));
    }
}

TEST(OpsLoss, SoftmaxCrossEntropy) {
  checkCrossEntropy<int32_t>("i32");
  checkCrossEntropy<int64_t>("i64");
}

TEST(OpsLoss, MseLoss) {
  Jit jit(R"mlir(
func.func @f(%p: tensor<?x10xf32>, %t: tensor<?x10xf32>) -> tensor<f32> {
  %l = fuse.mse_loss %p, %t : (tensor<?x10xf32>, tensor<?x10xf32>) -> tensor<f32>
  return %l : tensor<f32>
}
func.func @g(%p: tensor<2x3x?xf32>, %t: tensor<2x3x?xf32>) -> tensor<f32> {
  %l = fuse.mse_loss %p, %t : (tensor<2x3x?xf32>, tensor<2x3x?xf32>) -> tensor<f32>
  return %l : tensor<f32>
}
)mlir");
  unsigned seed = 1200;
  auto check = [&](const char *fn, Shape shape, bool exact = false) {
    SCOPED_TRACE(std::string(fn) + " " + shapeString(shape));
    Tensor p = exact ? integerValued(shape, ++seed, -1, 1)
                     : randomTensor(shape, ++seed, -2, 2);
    Tensor t = exact ? integerValued(shape, ++seed, -1, 1)
                     : randomTensor(shape, ++seed, -2, 2);
    std::vector<Tensor> out = jit.call(fn, {p, t});
    ASSERT_EQ(out.size(), 1u);
    int64_t n = product(shape);
    double sum = 0;
    for (int64_t i = 0; i < n; ++i) {
      double d = double(p.data<float>()[i]) - t.data<float>()[i];
      sum += d * d;
    }
    // Every term is non-negative, so sum |term| = sum. Integer differences
    // in [-2, 2] sum exactly; then only the division rounds.
    double tol = exact ? kEps * sum / n : sumTol(n, sum) / n + kEps * sum / n;
    EXPECT_TRUE(allClose(out[0], {}, {sum / n}, {tol}));
  };
  check("f", {1, 10});
  check("f", {7, 10});
  check("f", {100003, 10}, /*exact=*/true);
  check("g", {2, 3, 1});
  check("g", {2, 3, 13});
}

//===----------------------------------------------------------------------===//
// dropout
//===----------------------------------------------------------------------===//

std::string dropoutSource(llvm::ArrayRef<int64_t> shape, float rate,
                          int64_t seed) {
  std::string t = tensorType(shape, "f32");
  std::ostringstream rateText;
  rateText.precision(9);
  rateText << std::scientific << rate;
  return "func.func @f(%x: " + t + ", %step: tensor<i64>) -> " + t +
         " {\n  %y = fuse.dropout %x, %step {rate = " + rateText.str() +
         " : f32, seed = " + std::to_string(seed) + " : i64} : " + t +
         "\n  return %y : " + t + "\n}\n";
}

/// Checks the exact mask and scale of one call; returns the dropped count.
int64_t checkDropout(Jit &jit, const Tensor &x, int64_t step, float rate,
                     int64_t seed, std::vector<uint8_t> *mask = nullptr) {
  std::vector<Tensor> out = jit.call("f", {x, scalarTensor<int64_t>(step)});
  EXPECT_EQ(out.size(), 1u);
  if (out.size() != 1)
    return -1;
  uint64_t key = dropout::key(seed, step);
  float scale = dropout::scale(rate);
  int64_t n = x.numElements(), dropped = 0;
  std::vector<double> ref(n);
  if (mask)
    mask->assign(n, 0);
  for (int64_t i = 0; i < n; ++i) {
    bool keep = dropout::keep(key, static_cast<uint64_t>(i), rate);
    ref[i] = keep ? x.data<float>()[i] * scale : 0.0f;
    dropped += !keep;
    if (mask)
      (*mask)[i] = keep;
  }
  Shape shape(x.shape().begin(), x.shape().end());
  EXPECT_TRUE(allClose(out[0], shape, ref, 0, 0))
      << "step " << step << ", rate " << rate << ", seed " << seed;
  return dropped;
}

TEST(OpsDropout, MaskMatchesReferenceForTwoSteps) {
  const float rate = 0.2f;
  Jit jit(dropoutSource({-1, 128}, rate, 7));
  // Inputs away from 0, so a dropped element is distinguishable.
  Tensor x = randomTensor({64, 128}, 1300, 0.5f, 2.0f);
  std::vector<uint8_t> mask0, mask1;
  int64_t d0 = checkDropout(jit, x, 0, rate, 7, &mask0);
  int64_t d1 = checkDropout(jit, x, 12345, rate, 7, &mask1);
  // Different steps draw different masks...
  EXPECT_NE(mask0, mask1);
  // ...each dropping about `rate` of 8192 elements (sd 0.0044; 5 sd).
  for (int64_t d : {d0, d1})
    EXPECT_NEAR(double(d) / x.numElements(), rate, 0.022);
  // Batch 1 sees the first row of the same mask (the index is row-major).
  Tensor row = randomTensor({1, 128}, 1301, 0.5f, 2.0f);
  checkDropout(jit, row, 12345, rate, 7);
}

TEST(OpsDropout, RatesSeedsAndRanks) {
  // rank 3 (the row-major index across three dims), a step above 2^32,
  // another seed, and a large odd size for a tight fraction check.
  {
    Jit jit(dropoutSource({-1, 5, 7}, 0.5f, -3));
    Tensor x = randomTensor({3, 5, 7}, 1310, 0.5f, 2.0f);
    checkDropout(jit, x, (1LL << 40) + 5, 0.5f, -3);
    checkDropout(jit, x, 1, 0.5f, -3);
  }
  {
    const float rate = 0.3f;
    Jit jit(dropoutSource({-1}, rate, 123456789));
    Tensor x = randomTensor({1000003}, 1311, 0.5f, 2.0f);
    // sd of the fraction is 0.00046; allow 5 sd.
    int64_t d = checkDropout(jit, x, 77, rate, 123456789);
    EXPECT_NEAR(double(d) / x.numElements(), rate, 0.0023);
  }
  {
    // rate 0 keeps everything unscaled.
    Jit jit(dropoutSource({4, 4}, 0.0f, 1));
    Tensor x = randomTensor({4, 4}, 1312);
    EXPECT_EQ(checkDropout(jit, x, 3, 0.0f, 1), 0);
  }
}

//===----------------------------------------------------------------------===//
// Non-contiguous inputs
//===----------------------------------------------------------------------===//

TEST(OpsStrided, TransposedAndSlicedViews) {
  Jit jit(R"mlir(
func.func @ew(%x: tensor<?x5xf32>, %y: tensor<?x5xf32>) -> tensor<?x5xf32> {
  %e = fuse.exp %x : tensor<?x5xf32>
  %z = fuse.mul %e, %y : (tensor<?x5xf32>, tensor<?x5xf32>) -> tensor<?x5xf32>
  return %z : tensor<?x5xf32>
}
func.func @mm(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %c = fuse.matmul %a, %b : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  return %c : tensor<?x?xf32>
}
func.func @isum(%x: tensor<?x3xi64>) -> tensor<3xi64> {
  %s = fuse.reduce_sum %x {axes = array<i64: 0>} : (tensor<?x3xi64>) -> tensor<3xi64>
  return %s : tensor<3xi64>
}
)mlir");
  // A 4x5 view of the transpose of a row-major 5x4 buffer.
  Tensor base = randomTensor({5, 4}, 1400);
  Tensor xt = Tensor::view(base.data(), DType::F32, {4, 5}, {1, 4});
  // Every other row of an 8x5 buffer, and every other column of a 4x10 one.
  Tensor rows = randomTensor({8, 5}, 1401);
  Tensor ys = Tensor::view(rows.data(), DType::F32, {4, 5}, {10, 1});
  Tensor cols = randomTensor({4, 10}, 1402);
  Tensor yc = Tensor::view(cols.data(), DType::F32, {4, 5}, {10, 2});
  // Rows in reverse order (a negative stride).
  Tensor yr =
      Tensor::view(rows.data<float>() + 7 * 5, DType::F32, {4, 5}, {-5, 1});
  ASSERT_FALSE(xt.isContiguous());
  ASSERT_FALSE(ys.isContiguous());
  for (const Tensor *y : {&ys, &yc, &yr}) {
    std::vector<Tensor> out = jit.call("ew", {xt, *y});
    ASSERT_EQ(out.size(), 1u);
    std::vector<double> ref;
    for (int64_t i = 0; i < 4; ++i)
      for (int64_t j = 0; j < 5; ++j)
        ref.push_back(std::exp(double(xt.at<float>({i, j}))) *
                      y->at<float>({i, j}));
    EXPECT_TRUE(allClose(out[0], {4, 5}, ref, kMathRtol, kMathAtol))
        << "strides " << shapeString(y->strides());
  }
  // A broadcast view (stride 0) as an operand.
  Tensor one = randomTensor({5}, 1403);
  Tensor bcast = Tensor::view(one.data(), DType::F32, {3, 5}, {0, 1});
  std::vector<Tensor> out = jit.call("ew", {bcast, bcast});
  ASSERT_EQ(out.size(), 1u);
  std::vector<double> ref;
  for (int64_t i = 0; i < 15; ++i) {
    double v = one.data<float>()[i % 5];
    ref.push_back(std::exp(v) * v);
  }
  EXPECT_TRUE(allClose(out[0], {3, 5}, ref, kMathRtol, kMathAtol));

  // matmul of two transposed views: (5x4)^T-as-4x5 x (view of 7x5)^T.
  Tensor bBase = randomTensor({7, 5}, 1404);
  Tensor bt = Tensor::view(bBase.data(), DType::F32, {5, 7}, {1, 5});
  out = jit.call("mm", {xt, bt});
  ASSERT_EQ(out.size(), 1u);
  Tensor a = xt.contiguousCopy(), b = bt.contiguousCopy();
  std::vector<double> mref(28), mtol(28);
  matmulRef(a.data<float>(), b.data<float>(), 4, 7, 5, false, false,
            mref.data(), mtol.data());
  EXPECT_TRUE(allClose(out[0], {4, 7}, mref, mtol));
  // Views must not be modified.
  EXPECT_EQ(base.data<float>()[1], randomTensor({5, 4}, 1400).data<float>()[1]);

  // An integer column view: column 1 of a 6x4 i64 buffer viewed as 6x3 with
  // row stride 4 (skipping column 0).
  Tensor ibase = randomInts<int64_t>({6, 4}, 1405, -(1LL << 40), 1LL << 40);
  Tensor iv =
      Tensor::view(ibase.data<int64_t>() + 1, DType::I64, {6, 3}, {4, 1});
  out = jit.call("isum", {iv});
  ASSERT_EQ(out.size(), 1u);
  std::vector<int64_t> iref(3, 0);
  for (int64_t i = 0; i < 6; ++i)
    for (int64_t j = 0; j < 3; ++j)
      iref[j] += iv.at<int64_t>({i, j});
  EXPECT_TRUE(allEqual(out[0], DType::I64, {3}, iref));
}

//===----------------------------------------------------------------------===//
// Zero-sized dims
//===----------------------------------------------------------------------===//

TEST(OpsZeroSized, ElementwiseReductionsAndMatmul) {
  Jit jit(R"mlir(
func.func @exp(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %e = fuse.exp %x : tensor<?x4xf32>
  return %e : tensor<?x4xf32>
}
func.func @add(%x: tensor<?x4xf32>, %b: tensor<4xf32>) -> tensor<?x4xf32> {
  %y = fuse.add %x, %b : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  return %y : tensor<?x4xf32>
}
func.func @sum0(%x: tensor<?x4xf32>) -> tensor<4xf32> {
  %s = fuse.reduce_sum %x {axes = array<i64: 0>} : (tensor<?x4xf32>) -> tensor<4xf32>
  return %s : tensor<4xf32>
}
func.func @sum1(%x: tensor<?x4xf32>) -> tensor<?xf32> {
  %s = fuse.reduce_sum %x {axes = array<i64: 1>} : (tensor<?x4xf32>) -> tensor<?xf32>
  return %s : tensor<?xf32>
}
func.func @sumall(%x: tensor<?x4xi32>) -> tensor<i32> {
  %s = fuse.reduce_sum %x {axes = array<i64: 0, 1>} : (tensor<?x4xi32>) -> tensor<i32>
  return %s : tensor<i32>
}
func.func @mm(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %c = fuse.matmul %a, %b : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  return %c : tensor<?x?xf32>
}
)mlir");
  Tensor x = Tensor::empty(DType::F32, {0, 4});
  Tensor b = randomTensor({4}, 1500);
  // (Two results in one function would both be the same empty buffer: see
  // OpsResults.SameValueTwice.)
  std::vector<Tensor> out = jit.call("exp", {x});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(hasType(out[0], DType::F32, {0, 4}));
  out = jit.call("add", {x, b});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(hasType(out[0], DType::F32, {0, 4}));

  out = jit.call("sum0", {x});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(allClose(out[0], {4}, {0, 0, 0, 0}, 0, 0));
  out = jit.call("sum1", {x});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(hasType(out[0], DType::F32, {0}));
  out = jit.call("sumall", {Tensor::empty(DType::I32, {0, 4})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(allEqual(out[0], DType::I32, {}, {0}));

  // M = 0: an empty result.
  out = jit.call(
      "mm", {Tensor::empty(DType::F32, {0, 6}), randomTensor({6, 2}, 1501)});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(hasType(out[0], DType::F32, {0, 2}));
}

// A zero in a dim other than the first: convert-func-to-llvm's bare-pointer
// convention leaves `func.func` unconverted for memref<4x0xf32> (while
// memref<0x4xf32> converts), so translation to LLVM IR fails.
TEST(OpsZeroSized, TrailingZeroDims) {
  Jit jit(R"mlir(
func.func @ew(%x: tensor<4x?xf32>) -> tensor<4x?xf32> {
  %e = fuse.exp %x : tensor<4x?xf32>
  return %e : tensor<4x?xf32>
}
func.func @mm(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %c = fuse.matmul %a, %b : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  return %c : tensor<?x?xf32>
}
)mlir");
  std::vector<Tensor> out = jit.call("ew", {Tensor::empty(DType::F32, {4, 0})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(hasType(out[0], DType::F32, {4, 0}));
  // K = 0: a zero-filled M x N product.
  out = jit.call("mm", {Tensor::empty(DType::F32, {3, 0}),
                        Tensor::empty(DType::F32, {0, 5})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(allClose(out[0], {3, 5}, std::vector<double>(15, 0.0), 0, 0));
}

//===----------------------------------------------------------------------===//
// Several results
//===----------------------------------------------------------------------===//

// Distinct results computed by the same function.
TEST(OpsResults, SeveralResults) {
  Jit jit(R"mlir(
func.func @f(%x: tensor<?x3xf32>) -> (tensor<?x3xf32>, tensor<3xf32>, tensor<?x3xi1>) {
  %e = fuse.neg %x : tensor<?x3xf32>
  %s = fuse.reduce_max %x {axes = array<i64: 0>} : (tensor<?x3xf32>) -> tensor<3xf32>
  %z = fuse.constant dense<0.0> : tensor<f32>
  %m = fuse.compare ge, %x, %z : (tensor<?x3xf32>, tensor<f32>) -> tensor<?x3xi1>
  return %e, %s, %m : tensor<?x3xf32>, tensor<3xf32>, tensor<?x3xi1>
}
)mlir");
  Tensor x = randomTensor({4, 3}, 1600);
  std::vector<Tensor> out = jit.call("f", {x});
  ASSERT_EQ(out.size(), 3u);
  std::vector<double> neg, max(3, -INFINITY);
  std::vector<int64_t> ge;
  for (int64_t i = 0; i < 12; ++i) {
    double v = x.data<float>()[i];
    neg.push_back(-v);
    max[i % 3] = std::max(max[i % 3], v);
    ge.push_back(v >= 0);
  }
  EXPECT_TRUE(allClose(out[0], {4, 3}, neg, 0, 0));
  EXPECT_TRUE(allClose(out[1], {3}, max, 0, 0));
  EXPECT_TRUE(allEqual(out[2], DType::I1, {4, 3}, ge));
}

// `return %e, %e` (or two results that CSE into one value) bufferizes to one
// alloc returned twice, and buffer-results-to-out-params with
// hoist-static-allocs segfaults on that, killing the calling process.
TEST(OpsResults, SameValueTwice) {
  Jit jit(R"mlir(
func.func @f(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %e = fuse.exp %x : tensor<4xf32>
  return %e, %e : tensor<4xf32>, tensor<4xf32>
}
)mlir");
  Tensor x = randomTensor({4}, 1601);
  std::vector<Tensor> out = jit.call("f", {x});
  ASSERT_EQ(out.size(), 2u);
  std::vector<double> ref;
  for (int64_t i = 0; i < 4; ++i)
    ref.push_back(std::exp(double(x.data<float>()[i])));
  EXPECT_TRUE(allClose(out[0], {4}, ref, kMathRtol, kMathAtol));
  EXPECT_TRUE(allClose(out[1], {4}, ref, kMathRtol, kMathAtol));
  EXPECT_NE(out[0].data(), out[1].data());
}

} // namespace
