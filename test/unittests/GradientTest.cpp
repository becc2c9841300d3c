//===- GradientTest.cpp - fuse.value_and_grad against finite differences --===//
//
// For each op with a VJP, a small loss `reduce_sum(op(x...) * w)` (w a fixed
// random weighting that is not differentiated, so every output element
// matters differently) and a wrapper calling fuse.value_and_grad on it are
// JIT-compiled; every gradient element is compared against central finite
// differences of the loss, computed by calling the loss function itself.
//
// Tolerances:
//   - f64 (most tests): step h = 1e-5, |grad - fd| <= 1e-6 * (1 + |fd|).
//     The truncation error of a central difference is ~h^2 |f'''| / 6 ~ 1e-11
//     and the rounding error ~1e-16 |loss| / h ~ 1e-11 for these moderate
//     inputs, so 1e-6 leaves a wide margin while catching any wrong rule
//     (a missing factor, a wrong sum over broadcast dims, a swapped operand).
//   - f32 (a few sanity tests of the f32 lowering): h = 1e-2 * max(1, |x|),
//     |grad - fd| <= 2e-2 * (1 + |fd|) (f32 rounding / h plus h^2 truncation).
//   - The loss returned by value_and_grad equals the loss function's value
//     to 1e-12 relative in f64 (1e-5 in f32).
// Inputs avoid kinks: relu/abs inputs satisfy |x| > 0.1, max/min operands
// differ by at least 0.2, log/sqrt/rsqrt/pow bases are in [0.5, 2].
//
//===----------------------------------------------------------------------===//

#include "TestUtils.h"

#include "Fuse/IR/DropoutRNG.h"

#include "llvm/Support/MemoryBuffer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

using namespace fuse;
using namespace fuse::testing;

namespace {

using Shape = std::vector<int64_t>;

//===----------------------------------------------------------------------===//
// Inputs
//===----------------------------------------------------------------------===//

/// Uniform values in [lo, hi) of dtype `dtype` (F32 or F64), at least
/// `margin` away from 0.
Tensor uniform(DType dtype, const Shape &shape, unsigned seed, double lo = -1,
               double hi = 1, double margin = 0) {
  Tensor t = Tensor::empty(dtype, shape);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  for (int64_t i = 0; i < t.numElements(); ++i) {
    double v;
    do
      v = dist(rng);
    while (std::abs(v) < margin);
    if (dtype == DType::F64)
      t.data<double>()[i] = v;
    else
      t.data<float>()[i] = static_cast<float>(v);
  }
  return t;
}

/// Values `k + frac` with integer k in [-2, 1] and frac in [fracLo, fracHi):
/// two tensors drawn with disjoint fraction ranges never come within
/// (gap between the ranges) of each other, however they broadcast.
Tensor gridded(DType dtype, const Shape &shape, unsigned seed, double fracLo,
               double fracHi) {
  Tensor t = Tensor::empty(dtype, shape);
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> k(-2, 1);
  std::uniform_real_distribution<double> frac(fracLo, fracHi);
  for (int64_t i = 0; i < t.numElements(); ++i) {
    double v = k(rng) + frac(rng);
    if (dtype == DType::F64)
      t.data<double>()[i] = v;
    else
      t.data<float>()[i] = static_cast<float>(v);
  }
  return t;
}

double get(const Tensor &t, int64_t i) {
  return t.dtype() == DType::F64 ? t.data<double>()[i]
                                 : static_cast<double>(t.data<float>()[i]);
}
void set(Tensor &t, int64_t i, double v) {
  if (t.dtype() == DType::F64)
    t.data<double>()[i] = v;
  else
    t.data<float>()[i] = static_cast<float>(v);
}

std::string dims(const Shape &shape) {
  std::string s;
  for (int64_t d : shape)
    s += (d < 0 ? std::string("?") : std::to_string(d)) + "x";
  return s;
}

/// "tensor<2x3x$T>" for a shape (-1 is a dynamic dim).
std::string ty(const Shape &shape) { return "tensor<" + dims(shape) + "$T>"; }

std::string replaceAll(std::string s, const std::string &from,
                       const std::string &to) {
  for (size_t pos = s.find(from); pos != std::string::npos;
       pos = s.find(from, pos + to.size()))
    s.replace(pos, from.size(), to);
  return s;
}

//===----------------------------------------------------------------------===//
// The harness
//===----------------------------------------------------------------------===//

struct Param {
  std::string name; ///< without the %
  std::string type; ///< MLIR type; $T is the float element type
  Tensor value;
  bool wrt = false;
};

/// `%loss = reduce_sum(v * w)` over all `rank` dims of `type`.
std::string weightedSum(const std::string &v, const std::string &type,
                        int64_t rank, const std::string &w = "%w") {
  std::ostringstream os;
  os << "%ws_p = fuse.mul " << v << ", " << w << " : (" << type << ", " << type
     << ") -> " << type << "\n";
  if (rank == 0) {
    os << "%loss = fuse.add %ws_p, %ws_p : (tensor<$T>, tensor<$T>) -> "
          "tensor<$T>\n";
    return os.str();
  }
  os << "%loss = fuse.reduce_sum %ws_p {axes = array<i64:";
  for (int64_t d = 0; d < rank; ++d)
    os << (d ? ", " : " ") << d;
  os << ">} : (" << type << ") -> tensor<$T>\n";
  return os.str();
}

/// The module: @loss(params) built from `body` (which defines %loss) and
/// @vg calling fuse.value_and_grad @loss on the wrt params.
std::string makeModule(const std::string &body,
                       const std::vector<Param> &params) {
  std::ostringstream os;
  std::string argList, callArgs, argTypes, gradTypes, rets;
  std::string wrt;
  int grads = 0;
  for (size_t i = 0; i < params.size(); ++i) {
    const Param &p = params[i];
    argList += (i ? ", %" : "%") + p.name + ": " + p.type;
    callArgs += (i ? ", %" : "%") + p.name;
    argTypes += (i ? ", " : "") + p.type;
    if (p.wrt) {
      wrt += (grads ? ", " : " ") + std::to_string(i);
      gradTypes += ", " + p.type;
      rets += ", %r#" + std::to_string(++grads);
    }
  }
  os << "func.func @loss(" << argList << ") -> tensor<$T> {\n"
     << body << "return %loss : tensor<$T>\n}\n";
  os << "func.func @vg(" << argList << ") -> (tensor<$T>" << gradTypes
     << ") {\n"
     << "%r:" << grads + 1 << " = fuse.value_and_grad @loss(" << callArgs
     << ") {wrt = array<i64:" << wrt << ">} : (" << argTypes
     << ") -> (tensor<$T>" << gradTypes << ")\n"
     << "return %r#0" << rets << " : tensor<$T>" << gradTypes << "\n}\n";
  return os.str();
}

std::vector<Tensor> argsOf(const std::vector<Param> &params) {
  std::vector<Tensor> args;
  for (const Param &p : params)
    args.push_back(p.value);
  return args;
}

/// Checks @vg's loss and gradients against @loss and its central finite
/// differences. `dtype` is F64 or F32 and picks the tolerances (see the file
/// comment). `prelude` holds functions the body calls.
void checkGradients(const std::string &body, std::vector<Param> params,
                    DType dtype = DType::F64, const std::string &prelude = "") {
  bool f64 = dtype == DType::F64;
  std::string source =
      replaceAll(prelude + makeModule(body, params), "$T", f64 ? "f64" : "f32");
  SCOPED_TRACE(source);
  EngineOptions options;
  options.diskCache = false;
  options.retraceWarningThreshold = 1000;
  std::unique_ptr<Engine> engine = unwrap(Engine::create(options));
  if (llvm::Error e = engine->loadString(source)) {
    ADD_FAILURE() << llvm::toString(std::move(e));
    return;
  }
  Function &loss = unwrap(engine->lookup("loss"));
  Function &vg = unwrap(engine->lookup("vg"));

  std::vector<Tensor> args = argsOf(params);
  auto lossAt = [&](const std::vector<Tensor> &a) -> double {
    llvm::Expected<std::vector<Tensor>> r = loss.call(a);
    if (!r) {
      ADD_FAILURE() << llvm::toString(r.takeError());
      return NAN;
    }
    return get((*r)[0], 0);
  };
  llvm::Expected<std::vector<Tensor>> results = vg.call(args);
  if (!results) {
    ADD_FAILURE() << llvm::toString(results.takeError());
    return;
  }
  double l0 = lossAt(args);
  EXPECT_NEAR(get((*results)[0], 0), l0,
              (f64 ? 1e-12 : 1e-5) * (1 + std::abs(l0)));

  double tol = f64 ? 1e-6 : 2e-2;
  size_t g = 1;
  for (size_t i = 0; i < params.size(); ++i) {
    if (!params[i].wrt)
      continue;
    const Tensor &grad = (*results)[g++];
    ASSERT_EQ(grad.shape(), params[i].value.shape()) << "%" << params[i].name;
    Tensor base = params[i].value.contiguousCopy();
    for (int64_t e = 0; e < base.numElements(); ++e) {
      double x = get(base, e);
      double h = f64 ? 1e-5 : 1e-2 * std::max(1.0, std::abs(x));
      std::vector<Tensor> a = args;
      Tensor plus = base.contiguousCopy(), minus = base.contiguousCopy();
      set(plus, e, x + h);
      set(minus, e, x - h);
      // The actual step after rounding to the element type.
      double step = get(plus, e) - get(minus, e);
      a[i] = plus;
      double lp = lossAt(a);
      a[i] = minus;
      double lm = lossAt(a);
      double fd = (lp - lm) / step;
      double got = get(grad.contiguousCopy(), e);
      EXPECT_NEAR(got, fd, tol * (1 + std::abs(fd)))
          << "d loss / d %" << params[i].name << "[" << e << "]";
    }
  }
}

Param weight(const Shape &shape, unsigned seed, DType dtype = DType::F64) {
  return {"w", ty(shape), uniform(dtype, shape, seed, -1, 1)};
}

//===----------------------------------------------------------------------===//
// Element-wise unary
//===----------------------------------------------------------------------===//

struct Unary {
  const char *op;
  double lo, hi, margin;
};

const Unary kUnary[] = {
    {"neg", -2, 2, 0},     {"abs", -2, 2, 0.1},  {"square", -2, 2, 0},
    {"relu", -2, 2, 0.1},  {"exp", -2, 2, 0},    {"log", 0.5, 2, 0},
    {"sqrt", 0.5, 2, 0},   {"rsqrt", 0.5, 2, 0}, {"tanh", -2, 2, 0},
    {"sigmoid", -3, 3, 0},
};

TEST(Gradient, Unary) {
  const Shape shapes[] = {{}, {5}, {2, 3}, {1, 2, 3}};
  unsigned seed = 1;
  for (const Unary &u : kUnary)
    for (const Shape &s : shapes) {
      SCOPED_TRACE(std::string(u.op) + " " + dims(s));
      std::string body = "%y = fuse." + std::string(u.op) + " %x : " + ty(s) +
                         "\n" + weightedSum("%y", ty(s), s.size());
      checkGradients(
          body, {{"x", ty(s),
                  uniform(DType::F64, s, ++seed, u.lo, u.hi, u.margin), true},
                 weight(s, ++seed)});
    }
}

TEST(Gradient, UnaryF32) {
  Shape s = {2, 3};
  unsigned seed = 100;
  for (const Unary &u : kUnary) {
    SCOPED_TRACE(u.op);
    std::string body = "%y = fuse." + std::string(u.op) + " %x : " + ty(s) +
                       "\n" + weightedSum("%y", ty(s), s.size());
    checkGradients(
        body,
        {{"x", ty(s),
          uniform(DType::F32, s, ++seed, u.lo, u.hi, std::max(u.margin, 0.1)),
          true},
         weight(s, ++seed, DType::F32)},
        DType::F32);
  }
}

//===----------------------------------------------------------------------===//
// Element-wise binary, with broadcasting
//===----------------------------------------------------------------------===//

struct BinaryShapes {
  Shape x, y, out;    // types (-1 dynamic)
  Shape xv, yv, outv; // values
};

const BinaryShapes kBinaryShapes[] = {
    {{2, 3}, {2, 3}, {2, 3}, {2, 3}, {2, 3}, {2, 3}},
    {{-1, 1, 4}, {3, 1}, {-1, 3, 4}, {2, 1, 4}, {3, 1}, {2, 3, 4}},
    {{4}, {}, {4}, {4}, {}, {4}},
    {{}, {2, 3}, {2, 3}, {}, {2, 3}, {2, 3}},
    {{1, 3}, {2, 1}, {2, 3}, {1, 3}, {2, 1}, {2, 3}},
};

TEST(Gradient, Binary) {
  unsigned seed = 200;
  for (const char *op : {"add", "sub", "mul", "div", "max", "min", "pow"})
    for (const BinaryShapes &s : kBinaryShapes) {
      SCOPED_TRACE(std::string(op) + " " + dims(s.x) + " " + dims(s.y));
      std::string o = op;
      Tensor x, y;
      if (o == "max" || o == "min") {
        // Operands differ by at least 0.2 however they broadcast.
        x = gridded(DType::F64, s.xv, ++seed, 0.05, 0.35);
        y = gridded(DType::F64, s.yv, ++seed, 0.55, 0.85);
      } else if (o == "pow") {
        x = uniform(DType::F64, s.xv, ++seed, 0.5, 2);
        y = uniform(DType::F64, s.yv, ++seed, -2, 2);
      } else if (o == "div") {
        x = uniform(DType::F64, s.xv, ++seed, -2, 2);
        y = uniform(DType::F64, s.yv, ++seed, -2, 2, 0.5);
      } else {
        x = uniform(DType::F64, s.xv, ++seed, -2, 2);
        y = uniform(DType::F64, s.yv, ++seed, -2, 2);
      }
      std::string body = "%z = fuse." + o + " %x, %y : (" + ty(s.x) + ", " +
                         ty(s.y) + ") -> " + ty(s.out) + "\n" +
                         weightedSum("%z", ty(s.out), s.out.size());
      checkGradients(body,
                     {{"x", ty(s.x), x, true},
                      {"y", ty(s.y), y, true},
                      {"w", ty(s.out), uniform(DType::F64, s.outv, ++seed)}});
    }
}

TEST(Gradient, BinaryF32) {
  unsigned seed = 300;
  const BinaryShapes &s = kBinaryShapes[1];
  for (const char *op : {"add", "sub", "mul", "div", "max", "min", "pow"}) {
    SCOPED_TRACE(op);
    std::string o = op;
    Tensor x = o == "max" || o == "min"
                   ? gridded(DType::F32, s.xv, ++seed, 0.05, 0.35)
                   : uniform(DType::F32, s.xv, ++seed, 0.5, 2);
    Tensor y = o == "max" || o == "min"
                   ? gridded(DType::F32, s.yv, ++seed, 0.55, 0.85)
                   : uniform(DType::F32, s.yv, ++seed, 0.5, 2);
    std::string body = "%z = fuse." + o + " %x, %y : (" + ty(s.x) + ", " +
                       ty(s.y) + ") -> " + ty(s.out) + "\n" +
                       weightedSum("%z", ty(s.out), s.out.size());
    checkGradients(body,
                   {{"x", ty(s.x), x, true},
                    {"y", ty(s.y), y, true},
                    {"w", ty(s.out), uniform(DType::F32, s.outv, ++seed)}},
                   DType::F32);
  }
}

/// select(c > 0, x, y) with a random condition computed in the loss.
TEST(Gradient, Select) {
  struct Case {
    Shape c, x, y;
  };
  const Case cases[] = {
      {{2, 3}, {2, 3}, {2, 3}}, {{2, 3}, {3}, {}}, {{2, 1}, {1, 3}, {2, 3}}};
  unsigned seed = 400;
  for (const Case &k : cases) {
    Shape out = {2, 3};
    std::string body = "%zero = fuse.constant dense<0.0> : tensor<$T>\n"
                       "%m = fuse.compare gt, %c, %zero : (" +
                       ty(k.c) + ", tensor<$T>) -> tensor<" + dims(k.c) +
                       "i1>\n"
                       "%s = fuse.select %m, %x, %y : (tensor<" +
                       dims(k.c) + "i1>, " + ty(k.x) + ", " + ty(k.y) +
                       ") -> " + ty(out) + "\n" + weightedSum("%s", ty(out), 2);
    checkGradients(body,
                   {{"c", ty(k.c), uniform(DType::F64, k.c, ++seed)},
                    {"x", ty(k.x), uniform(DType::F64, k.x, ++seed), true},
                    {"y", ty(k.y), uniform(DType::F64, k.y, ++seed), true},
                    weight(out, ++seed)});
  }
}

//===----------------------------------------------------------------------===//
// Shape ops
//===----------------------------------------------------------------------===//

TEST(Gradient, ShapeOps) {
  struct Case {
    std::string op; // the op text after "%y = ", with types
    Shape xType, xValue, outType, outValue;
  };
  const Case cases[] = {
      {"fuse.reshape %x : (tensor<2x3x4x$T>) -> tensor<6x4x$T>",
       {2, 3, 4},
       {2, 3, 4},
       {6, 4},
       {6, 4}},
      {"fuse.reshape %x : (tensor<?x6x$T>) -> tensor<?x2x3x$T>",
       {-1, 6},
       {2, 6},
       {-1, 2, 3},
       {2, 2, 3}},
      {"fuse.transpose %x {permutation = array<i64: 2, 0, 1>} : "
       "(tensor<2x3x4x$T>) -> tensor<4x2x3x$T>",
       {2, 3, 4},
       {2, 3, 4},
       {4, 2, 3},
       {4, 2, 3}},
      {"fuse.transpose %x {permutation = array<i64: 1, 0>} : "
       "(tensor<?x3x$T>) -> tensor<3x?x$T>",
       {-1, 3},
       {1, 3},
       {3, -1},
       {3, 1}},
      {"fuse.broadcast_to %x : (tensor<1x4x$T>) -> tensor<3x4x$T>",
       {1, 4},
       {1, 4},
       {3, 4},
       {3, 4}},
      {"fuse.broadcast_to %x : (tensor<3x1x$T>) -> tensor<2x3x4x$T>",
       {3, 1},
       {3, 1},
       {2, 3, 4},
       {2, 3, 4}},
      {"fuse.broadcast_to %x : (tensor<$T>) -> tensor<2x3x$T>",
       {},
       {},
       {2, 3},
       {2, 3}},
      {"fuse.expand_dims %x {axes = array<i64: 0, 2>} : (tensor<3x4x$T>) -> "
       "tensor<1x3x1x4x$T>",
       {3, 4},
       {3, 4},
       {1, 3, 1, 4},
       {1, 3, 1, 4}},
      {"fuse.expand_dims %x {axes = array<i64: 1>} : (tensor<?x$T>) -> "
       "tensor<?x1x$T>",
       {-1},
       {5},
       {-1, 1},
       {5, 1}},
  };
  unsigned seed = 500;
  for (const Case &k : cases) {
    SCOPED_TRACE(k.op);
    std::string body = "%y = " + k.op + "\n" +
                       weightedSum("%y", ty(k.outType), k.outType.size());
    checkGradients(
        body, {{"x", ty(k.xType), uniform(DType::F64, k.xValue, ++seed), true},
               {"w", ty(k.outType), uniform(DType::F64, k.outValue, ++seed)}});
  }
}

//===----------------------------------------------------------------------===//
// Contractions
//===----------------------------------------------------------------------===//

TEST(Gradient, Matmul) {
  unsigned seed = 600;
  for (int64_t m : {3, 1})
    for (bool tl : {false, true})
      for (bool tr : {false, true}) {
        int64_t k = 4, n = 2;
        Shape a = tl ? Shape{k, m} : Shape{m, k};
        Shape b = tr ? Shape{n, k} : Shape{k, n};
        Shape out = {m, n};
        std::string flags;
        if (tl || tr)
          flags = std::string(" {") + (tl ? "transpose_lhs" : "") +
                  (tl && tr ? ", " : "") + (tr ? "transpose_rhs" : "") + "}";
        std::string body = "%y = fuse.matmul %a, %b" + flags + " : (" + ty(a) +
                           ", " + ty(b) + ") -> " + ty(out) + "\n" +
                           weightedSum("%y", ty(out), 2);
        SCOPED_TRACE(body);
        checkGradients(body,
                       {{"a", ty(a), uniform(DType::F64, a, ++seed), true},
                        {"b", ty(b), uniform(DType::F64, b, ++seed), true},
                        weight(out, ++seed)});
      }
}

TEST(Gradient, BatchMatmul) {
  unsigned seed = 700;
  for (int64_t batch : {2, 1})
    for (bool tl : {false, true})
      for (bool tr : {false, true}) {
        int64_t m = 3, k = 4, n = 2;
        Shape a = tl ? Shape{batch, k, m} : Shape{batch, m, k};
        Shape b = tr ? Shape{batch, n, k} : Shape{batch, k, n};
        Shape out = {batch, m, n};
        std::string flags;
        if (tl || tr)
          flags = std::string(" {") + (tl ? "transpose_lhs" : "") +
                  (tl && tr ? ", " : "") + (tr ? "transpose_rhs" : "") + "}";
        std::string body = "%y = fuse.batch_matmul %a, %b" + flags + " : (" +
                           ty(a) + ", " + ty(b) + ") -> " + ty(out) + "\n" +
                           weightedSum("%y", ty(out), 3);
        SCOPED_TRACE(body);
        checkGradients(body,
                       {{"a", ty(a), uniform(DType::F64, a, ++seed), true},
                        {"b", ty(b), uniform(DType::F64, b, ++seed), true},
                        weight(out, ++seed)});
      }
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

void checkReduction(const char *op, const std::vector<int64_t> &axes, bool keep,
                    unsigned seed) {
  Shape in = {2, 3, 4};
  Shape out;
  for (int64_t d = 0; d < 3; ++d) {
    bool reduced = std::find(axes.begin(), axes.end(), d) != axes.end();
    if (!reduced)
      out.push_back(in[d]);
    else if (keep)
      out.push_back(1);
  }
  std::string axesText;
  for (size_t i = 0; i < axes.size(); ++i)
    axesText += (i ? ", " : " ") + std::to_string(axes[i]);
  std::string body = std::string("%y = fuse.") + op +
                     " %x {axes = array<i64:" + axesText + ">" +
                     (keep ? ", keepdims" : "") + "} : (" + ty(in) + ") -> " +
                     ty(out) + "\n" + weightedSum("%y", ty(out), out.size());
  SCOPED_TRACE(body);
  checkGradients(body,
                 {{"x", ty(in), uniform(DType::F64, in, seed, -2, 2), true},
                  weight(out, seed + 1)});
}

const std::vector<int64_t> kAxesList[] = {{1}, {0, 2}, {0, 1, 2}, {2}};

TEST(Gradient, Reductions) {
  unsigned seed = 800;
  for (const char *op : {"reduce_sum", "reduce_mean", "reduce_max"})
    for (const std::vector<int64_t> &axes : kAxesList)
      for (bool keep : {false, true}) {
        checkReduction(op, axes, keep, seed += 2);
      }
}

/// reduce_max shares the gradient equally among tied maxima (documented).
TEST(Gradient, ReduceMaxTies) {
  std::string source = R"(
func.func @loss(%x: tensor<2x4xf64>) -> tensor<f64> {
  %m = fuse.reduce_max %x {axes = array<i64: 1>} : (tensor<2x4xf64>) -> tensor<2xf64>
  %w = fuse.constant dense<[2.0, 3.0]> : tensor<2xf64>
  %p = fuse.mul %m, %w : (tensor<2xf64>, tensor<2xf64>) -> tensor<2xf64>
  %l = fuse.reduce_sum %p {axes = array<i64: 0>} : (tensor<2xf64>) -> tensor<f64>
  return %l : tensor<f64>
}
func.func @vg(%x: tensor<2x4xf64>) -> (tensor<f64>, tensor<2x4xf64>) {
  %r:2 = fuse.value_and_grad @loss(%x) {wrt = array<i64: 0>}
      : (tensor<2x4xf64>) -> (tensor<f64>, tensor<2x4xf64>)
  return %r#0, %r#1 : tensor<f64>, tensor<2x4xf64>
}
)";
  std::unique_ptr<Engine> engine = makeEngine(source);
  Function &vg = unwrap(engine->lookup("vg"));
  Tensor x = Tensor::fromValues<double>(
      {2, 4}, {1.0, 3.0, 3.0, 2.0, 5.0, 5.0, 5.0, -1.0});
  std::vector<Tensor> r = unwrap(vg.call({x}));
  EXPECT_EQ(r[0].data<double>()[0], 2 * 3.0 + 3 * 5.0);
  const double want[] = {0, 1, 1, 0, 1, 1, 1, 0};
  for (int i = 0; i < 8; ++i)
    EXPECT_DOUBLE_EQ(r[1].data<double>()[i], want[i]) << i;
}

/// max_pool2d sends each window's gradient to its first maximum (row-major
/// in the window), as TensorFlow, XLA and PyTorch do; overlapping windows
/// add theirs; a NaN is the maximum. A relu before the pool (which the
/// pipeline moves after it) still masks windows whose maximum is not
/// positive.
TEST(Gradient, MaxPoolTies) {
  std::string source = R"(
func.func @relu_pool(%x: tensor<1x4x4x1xf64>, %w: tensor<1x2x2x1xf64>) -> tensor<f64> {
  %r = fuse.relu %x : tensor<1x4x4x1xf64>
  %p = fuse.max_pool2d %r {window = array<i64: 2, 2>} : (tensor<1x4x4x1xf64>) -> tensor<1x2x2x1xf64>
  %s = fuse.mul %p, %w : (tensor<1x2x2x1xf64>, tensor<1x2x2x1xf64>) -> tensor<1x2x2x1xf64>
  %l = fuse.reduce_sum %s {axes = array<i64: 0, 1, 2, 3>} : (tensor<1x2x2x1xf64>) -> tensor<f64>
  return %l : tensor<f64>
}
func.func @overlapping(%x: tensor<1x3x3x1xf64>, %w: tensor<1x2x2x1xf64>) -> tensor<f64> {
  %p = fuse.max_pool2d %x {window = array<i64: 2, 2>, strides = array<i64: 1, 1>} : (tensor<1x3x3x1xf64>) -> tensor<1x2x2x1xf64>
  %s = fuse.mul %p, %w : (tensor<1x2x2x1xf64>, tensor<1x2x2x1xf64>) -> tensor<1x2x2x1xf64>
  %l = fuse.reduce_sum %s {axes = array<i64: 0, 1, 2, 3>} : (tensor<1x2x2x1xf64>) -> tensor<f64>
  return %l : tensor<f64>
}
func.func @nan_pool(%x: tensor<1x2x4x1xf64>, %w: tensor<1x1x2x1xf64>) -> tensor<f64> {
  %p = fuse.max_pool2d %x {window = array<i64: 2, 2>} : (tensor<1x2x4x1xf64>) -> tensor<1x1x2x1xf64>
  %s = fuse.mul %p, %w : (tensor<1x1x2x1xf64>, tensor<1x1x2x1xf64>) -> tensor<1x1x2x1xf64>
  %l = fuse.reduce_sum %s {axes = array<i64: 0, 1, 2, 3>} : (tensor<1x1x2x1xf64>) -> tensor<f64>
  return %l : tensor<f64>
}
func.func @vg3(%x: tensor<1x2x4x1xf64>, %w: tensor<1x1x2x1xf64>) -> (tensor<f64>, tensor<1x2x4x1xf64>) {
  %r:2 = fuse.value_and_grad @nan_pool(%x, %w) {wrt = array<i64: 0>}
      : (tensor<1x2x4x1xf64>, tensor<1x1x2x1xf64>) -> (tensor<f64>, tensor<1x2x4x1xf64>)
  return %r#0, %r#1 : tensor<f64>, tensor<1x2x4x1xf64>
}
func.func @vg1(%x: tensor<1x4x4x1xf64>, %w: tensor<1x2x2x1xf64>) -> (tensor<f64>, tensor<1x4x4x1xf64>) {
  %r:2 = fuse.value_and_grad @relu_pool(%x, %w) {wrt = array<i64: 0>}
      : (tensor<1x4x4x1xf64>, tensor<1x2x2x1xf64>) -> (tensor<f64>, tensor<1x4x4x1xf64>)
  return %r#0, %r#1 : tensor<f64>, tensor<1x4x4x1xf64>
}
func.func @vg2(%x: tensor<1x3x3x1xf64>, %w: tensor<1x2x2x1xf64>) -> (tensor<f64>, tensor<1x3x3x1xf64>) {
  %r:2 = fuse.value_and_grad @overlapping(%x, %w) {wrt = array<i64: 0>}
      : (tensor<1x3x3x1xf64>, tensor<1x2x2x1xf64>) -> (tensor<f64>, tensor<1x3x3x1xf64>)
  return %r#0, %r#1 : tensor<f64>, tensor<1x3x3x1xf64>
}
)";
  std::unique_ptr<Engine> engine = makeEngine(source);
  Tensor w = Tensor::fromValues<double>({1, 2, 2, 1}, {1, 2, 3, 4});
  {
    SCOPED_TRACE("relu_pool");
    Tensor x = Tensor::fromValues<double>(
        {1, 4, 4, 1}, {1, 3, 0, 0, 3, 2, 0, -1, 5, 5, -2, -3, 5, 5, -4, -2});
    std::vector<Tensor> r = unwrap(unwrap(engine->lookup("vg1")).call({x, w}));
    EXPECT_EQ(r[0].data<double>()[0], 3 * 1 + 5 * 3.0);
    const double want[16] = {0, 1, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0};
    for (int i = 0; i < 16; ++i)
      EXPECT_EQ(r[1].data<double>()[i], want[i]) << i;
  }
  {
    SCOPED_TRACE("overlapping");
    Tensor x =
        Tensor::fromValues<double>({1, 3, 3, 1}, {1, 2, 2, 2, 2, 0, 0, 2, 1});
    std::vector<Tensor> r = unwrap(unwrap(engine->lookup("vg2")).call({x, w}));
    EXPECT_EQ(r[0].data<double>()[0], 2.0 * (1 + 2 + 3 + 4));
    const double want[9] = {0, 1 + 2, 0, 3, 4, 0, 0, 0, 0};
    for (int i = 0; i < 9; ++i)
      EXPECT_EQ(r[1].data<double>()[i], want[i]) << i;
  }
  {
    // A window holding NaN pools to NaN (maximumf), and its gradient goes to
    // the NaN, as PyTorch's does.
    SCOPED_TRACE("nan");
    double nan = std::numeric_limits<double>::quiet_NaN();
    Tensor x =
        Tensor::fromValues<double>({1, 2, 4, 1}, {1, nan, 3, 2, 0, 5, 4, 1});
    Tensor v = Tensor::fromValues<double>({1, 1, 2, 1}, {2, 3});
    std::vector<Tensor> r = unwrap(unwrap(engine->lookup("vg3")).call({x, v}));
    EXPECT_TRUE(std::isnan(r[0].data<double>()[0]));
    const double want[8] = {0, 2, 0, 0, 0, 0, 3, 0};
    for (int i = 0; i < 8; ++i)
      EXPECT_EQ(r[1].data<double>()[i], want[i]) << i;
  }
}

//===----------------------------------------------------------------------===//
// Softmax and losses
//===----------------------------------------------------------------------===//

void checkSoftmax(const char *op, int64_t axis, unsigned seed) {
  Shape in = {2, 3, 4};
  std::string attr =
      axis == -1 ? "" : " {axis = " + std::to_string(axis) + " : i64}";
  std::string body = std::string("%y = fuse.") + op + " %x" + attr + " : " +
                     ty(in) + "\n" + weightedSum("%y", ty(in), 3);
  SCOPED_TRACE(body);
  checkGradients(body,
                 {{"x", ty(in), uniform(DType::F64, in, seed, -2, 2), true},
                  weight(in, seed + 1)});
}

/// Softmax and log_softmax along every axis.
TEST(Gradient, Softmax) {
  unsigned seed = 900;
  for (const char *op : {"softmax", "log_softmax"})
    for (int64_t axis : {0, 1, 2, -1})
      checkSoftmax(op, axis, seed += 2);
}

/// conv2d with respect to input and filter: strides, padding, dilations.
TEST(Gradient, Conv2D) {
  struct Case {
    Shape input, filter, output;
    const char *attrs;
  };
  const Case cases[] = {
      {{1, 5, 5, 2}, {3, 3, 2, 3}, {1, 3, 3, 3}, ""},
      {{2, 7, 6, 3},
       {3, 2, 3, 4},
       {2, 4, 3, 4},
       " {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 0>}"},
      {{1, 8, 8, 1},
       {2, 3, 1, 2},
       {1, 6, 4, 2},
       " {dilations = array<i64: 2, 2>, strides = array<i64: 1, 1>}"},
  };
  unsigned seed = 1200;
  for (const Case &c : cases) {
    std::string body = std::string("%c = fuse.conv2d %x, %k") + c.attrs +
                       " : (" + ty(c.input) + ", " + ty(c.filter) + ") -> " +
                       ty(c.output) + "\n" + weightedSum("%c", ty(c.output), 4);
    SCOPED_TRACE(body);
    checkGradients(
        body, {{"x", ty(c.input), uniform(DType::F64, c.input, ++seed), true},
               {"k", ty(c.filter), uniform(DType::F64, c.filter, ++seed), true},
               weight(c.output, ++seed)});
  }
}

/// max_pool2d and avg_pool2d with padding and strides (random inputs have no
/// ties, so the max-pool subgradient is the gradient).
TEST(Gradient, Pools) {
  struct Case {
    const char *op;
    Shape input, output;
    const char *attrs;
  };
  const Case cases[] = {
      {"max_pool2d",
       {1, 4, 4, 2},
       {1, 2, 2, 2},
       " {window = array<i64: 2, 2>}"},
      {"max_pool2d",
       {2, 5, 5, 1},
       {2, 3, 3, 1},
       " {window = array<i64: 3, 3>, strides = array<i64: 2, 2>, "
       "padding = array<i64: 1, 1, 1, 1>}"},
      {"avg_pool2d",
       {1, 4, 4, 2},
       {1, 2, 2, 2},
       " {window = array<i64: 2, 2>}"},
      {"avg_pool2d",
       {2, 5, 5, 1},
       {2, 3, 3, 1},
       " {window = array<i64: 3, 3>, strides = array<i64: 2, 2>, "
       "padding = array<i64: 1, 1, 1, 1>}"},
  };
  unsigned seed = 1300;
  for (const Case &c : cases) {
    std::string body = std::string("%p = fuse.") + c.op + " %x" + c.attrs +
                       " : (" + ty(c.input) + ") -> " + ty(c.output) + "\n" +
                       weightedSum("%p", ty(c.output), 4);
    SCOPED_TRACE(body);
    checkGradients(
        body, {{"x", ty(c.input), uniform(DType::F64, c.input, ++seed), true},
               weight(c.output, ++seed)});
  }
}

TEST(Gradient, SoftmaxCrossEntropy) {
  unsigned seed = 1000;
  for (int64_t n : {3, 1}) {
    Tensor labels = Tensor::empty(DType::I32, {n});
    std::mt19937 rng(++seed);
    for (int64_t i = 0; i < n; ++i)
      labels.data<int32_t>()[i] = static_cast<int32_t>(rng() % 5);
    // Scaled by a weight so the incoming gradient is not 1.
    std::string body =
        "%ce = fuse.softmax_cross_entropy %x, %y : (tensor<?x5x$T>, "
        "tensor<?xi32>) -> tensor<$T>\n" +
        weightedSum("%ce", "tensor<$T>", 0);
    checkGradients(body, {{"x", "tensor<?x5x$T>",
                           uniform(DType::F64, {n, 5}, ++seed, -2, 2), true},
                          {"y", "tensor<?xi32>", labels},
                          weight({}, ++seed)});
  }
}

TEST(Gradient, MseLoss) {
  unsigned seed = 1100;
  for (const Shape &s : {Shape{2, 3}, Shape{5}, Shape{1, 4}}) {
    std::string body = "%m = fuse.mse_loss %p, %t : (" + ty(s) + ", " + ty(s) +
                       ") -> tensor<$T>\n" + weightedSum("%m", "tensor<$T>", 0);
    checkGradients(body, {{"p", ty(s), uniform(DType::F64, s, ++seed), true},
                          {"t", ty(s), uniform(DType::F64, s, ++seed), true},
                          weight({}, ++seed)});
  }
}

/// The backward pass recomputes the same mask, so at a fixed step the loss is
/// a fixed linear function of x and finite differences apply.
TEST(Gradient, Dropout) {
  unsigned seed = 1200;
  for (int64_t step : {0, 5, 123})
    for (const char *rate : {"0.5", "0.2"}) {
      Shape s = {4, 5};
      std::string body = std::string("%d = fuse.dropout %x, %step {rate = ") +
                         rate + " : f32, seed = 3 : i64} : " + ty(s) + "\n" +
                         weightedSum("%d", ty(s), 2);
      SCOPED_TRACE(body);
      checkGradients(body, {{"x", ty(s), uniform(DType::F64, s, ++seed), true},
                            {"step", "tensor<i64>",
                             Tensor::fromValues<int64_t>({}, {step})},
                            weight(s, ++seed)});
    }
}

/// Several ops chained, with a value used twice (gradients are summed).
TEST(Gradient, Composite) {
  Shape s = {3, 4};
  std::string body =
      "%a = fuse.tanh %x : tensor<3x4x$T>\n"
      "%b = fuse.mul %a, %x : (tensor<3x4x$T>, tensor<3x4x$T>) -> "
      "tensor<3x4x$T>\n"
      "%c = fuse.softmax %b {axis = 0 : i64} : tensor<3x4x$T>\n"
      "%d = fuse.add %c, %a : (tensor<3x4x$T>, tensor<3x4x$T>) -> "
      "tensor<3x4x$T>\n" +
      weightedSum("%d", ty(s), 2);
  checkGradients(body, {{"x", ty(s), uniform(DType::F64, s, 1300), true},
                        weight(s, 1301)});
}

//===----------------------------------------------------------------------===//
// The seed MLP
//===----------------------------------------------------------------------===//

constexpr int64_t kIn = 784, kHidden = 128, kOut = 10;
constexpr float kRate = 0.2f;
constexpr int64_t kSeed = 7;

const char *kMlpWrapper = R"(
func.func @vg(%w1: tensor<784x128xf32>, %b1: tensor<128xf32>,
              %w2: tensor<128x10xf32>, %b2: tensor<10xf32>,
              %x: tensor<?x28x28xf32>, %y: tensor<?xi32>, %step: tensor<i64>)
    -> (tensor<f32>, tensor<784x128xf32>, tensor<128xf32>,
        tensor<128x10xf32>, tensor<10xf32>) {
  %r:5 = fuse.value_and_grad @loss(%w1, %b1, %w2, %b2, %x, %y, %step)
      {wrt = array<i64: 0, 1, 2, 3>}
      : (tensor<784x128xf32>, tensor<128xf32>, tensor<128x10xf32>,
         tensor<10xf32>, tensor<?x28x28xf32>, tensor<?xi32>, tensor<i64>)
      -> (tensor<f32>, tensor<784x128xf32>, tensor<128xf32>,
          tensor<128x10xf32>, tensor<10xf32>)
  return %r#0, %r#1, %r#2, %r#3, %r#4 : tensor<f32>, tensor<784x128xf32>,
      tensor<128xf32>, tensor<128x10xf32>, tensor<10xf32>
}
)";

/// examples/mlp.mlir plus @vg, in f32 or (all tensor types rewritten) f64.
std::string mlpSource(bool f64) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> file =
      llvm::MemoryBuffer::getFile(FUSE_SOURCE_DIR "/examples/mlp.mlir");
  if (!file) {
    ADD_FAILURE() << "cannot read examples/mlp.mlir";
    return "";
  }
  std::string source = (*file)->getBuffer().str() + kMlpWrapper;
  if (f64) {
    source = replaceAll(source, "xf32>", "xf64>");
    source = replaceAll(source, "tensor<f32>", "tensor<f64>");
  }
  return source;
}

/// The MLP's loss and gradients written out by hand, in double.
struct MlpGrads {
  double loss;
  std::vector<double> w1, b1, w2, b2;
};

MlpGrads mlpByHand(const std::vector<Tensor> &args, bool f64) {
  auto val = [&](int a, int64_t i) { return get(args[a], i); };
  int64_t n = args[4].shape()[0];
  int64_t step = args[6].data<int64_t>()[0];
  uint64_t key = dropout::key(kSeed, step);
  double scale = dropout::scale(kRate);
  std::vector<double> h(n * kHidden), d(n * kHidden), mask(n * kHidden),
      o(n * kOut);
  for (int64_t r = 0; r < n; ++r)
    for (int64_t j = 0; j < kHidden; ++j) {
      double acc = val(1, j);
      for (int64_t k = 0; k < kIn; ++k)
        acc += val(4, r * kIn + k) * val(0, k * kHidden + j);
      h[r * kHidden + j] = acc;
      mask[r * kHidden + j] =
          dropout::keep(key, r * kHidden + j, kRate) ? scale : 0.0;
      d[r * kHidden + j] = std::max(acc, 0.0) * mask[r * kHidden + j];
    }
  (void)f64;
  MlpGrads g;
  g.loss = 0;
  g.w1.assign(kIn * kHidden, 0);
  g.b1.assign(kHidden, 0);
  g.w2.assign(kHidden * kOut, 0);
  g.b2.assign(kOut, 0);
  std::vector<double> dout(n * kOut);
  for (int64_t r = 0; r < n; ++r) {
    double mx = -INFINITY;
    for (int64_t c = 0; c < kOut; ++c) {
      double acc = val(3, c);
      for (int64_t j = 0; j < kHidden; ++j)
        acc += d[r * kHidden + j] * val(2, j * kOut + c);
      o[r * kOut + c] = acc;
      mx = std::max(mx, acc);
    }
    double sum = 0;
    for (int64_t c = 0; c < kOut; ++c)
      sum += std::exp(o[r * kOut + c] - mx);
    int32_t label = args[5].data<int32_t>()[r];
    g.loss += (mx + std::log(sum) - o[r * kOut + label]) / n;
    for (int64_t c = 0; c < kOut; ++c)
      dout[r * kOut + c] =
          (std::exp(o[r * kOut + c] - mx) / sum - (c == label ? 1 : 0)) / n;
  }
  for (int64_t r = 0; r < n; ++r)
    for (int64_t c = 0; c < kOut; ++c) {
      g.b2[c] += dout[r * kOut + c];
      for (int64_t j = 0; j < kHidden; ++j)
        g.w2[j * kOut + c] += d[r * kHidden + j] * dout[r * kOut + c];
    }
  for (int64_t r = 0; r < n; ++r)
    for (int64_t j = 0; j < kHidden; ++j) {
      double dd = 0;
      for (int64_t c = 0; c < kOut; ++c)
        dd += dout[r * kOut + c] * val(2, j * kOut + c);
      double dh = h[r * kHidden + j] > 0 ? dd * mask[r * kHidden + j] : 0;
      g.b1[j] += dh;
      if (dh != 0)
        for (int64_t k = 0; k < kIn; ++k)
          g.w1[k * kHidden + j] += val(4, r * kIn + k) * dh;
    }
  return g;
}

std::vector<Tensor> mlpArgs(DType dtype, int64_t n, int64_t step) {
  std::vector<Tensor> args = {uniform(dtype, {kIn, kHidden}, 1, -0.08, 0.08),
                              uniform(dtype, {kHidden}, 2, -0.1, 0.1),
                              uniform(dtype, {kHidden, kOut}, 3, -0.3, 0.3),
                              uniform(dtype, {kOut}, 4, -0.1, 0.1),
                              uniform(dtype, {n, 28, 28}, 5, 0, 1),
                              Tensor::empty(DType::I32, {n}),
                              Tensor::fromValues<int64_t>({}, {step})};
  for (int64_t i = 0; i < n; ++i)
    args[5].data<int32_t>()[i] = static_cast<int32_t>((i * 7 + 3) % kOut);
  return args;
}

void checkMlp(bool f64) {
  std::string source = mlpSource(f64);
  ASSERT_FALSE(source.empty());
  std::unique_ptr<Engine> engine = makeEngine(source);
  Function &loss = unwrap(engine->lookup("loss"));
  Function &vg = unwrap(engine->lookup("vg"));
  DType dtype = f64 ? DType::F64 : DType::F32;
  for (int64_t n : {4, 1}) {
    SCOPED_TRACE("batch " + std::to_string(n));
    std::vector<Tensor> args = mlpArgs(dtype, n, /*step=*/11);
    std::vector<Tensor> r = unwrap(vg.call(args));
    ASSERT_EQ(r.size(), 5u);
    MlpGrads want = mlpByHand(args, f64);
    // By hand, in double from the same inputs: f64 agrees to rounding; f32
    // to its accumulated rounding over 784-term dot products.
    double atol = f64 ? 1e-12 : 2e-6, rtol = f64 ? 1e-9 : 1e-3;
    EXPECT_NEAR(get(r[0], 0), want.loss, atol + rtol * std::abs(want.loss));
    const std::vector<double> *byHand[] = {&want.w1, &want.b1, &want.w2,
                                           &want.b2};
    for (int p = 0; p < 4; ++p)
      for (int64_t i = 0; i < r[p + 1].numElements(); ++i) {
        double ref = (*byHand[p])[i];
        ASSERT_NEAR(get(r[p + 1], i), ref, atol + rtol * std::abs(ref))
            << "parameter " << p << " element " << i;
      }
    if (!f64)
      continue;
    // Finite differences (f64, h = 1e-5, 1e-6 * (1 + |fd|)) on sampled
    // elements of each parameter, including ones with nonzero gradients.
    std::mt19937 rng(n);
    for (int p = 0; p < 4; ++p) {
      int64_t size = args[p].numElements();
      std::vector<int64_t> picks;
      for (int64_t i = 0; i < size && picks.size() < 4; ++i)
        if ((*byHand[p])[i] != 0 && rng() % 8 == 0)
          picks.push_back(i);
      for (int s = 0; s < 3; ++s)
        picks.push_back(rng() % size);
      for (int64_t i : picks) {
        std::vector<Tensor> a = args;
        double h = 1e-5, x = get(args[p], i);
        a[p] = args[p].contiguousCopy();
        set(a[p], i, x + h);
        double lp = get(unwrap(loss.call(a))[0], 0);
        set(a[p], i, x - h);
        double lm = get(unwrap(loss.call(a))[0], 0);
        double fd = (lp - lm) / (2 * h);
        EXPECT_NEAR(get(r[p + 1], i), fd, 1e-6 * (1 + std::abs(fd)))
            << "parameter " << p << " element " << i;
      }
    }
  }
}

TEST(Gradient, MlpF64) { checkMlp(true); }
TEST(Gradient, MlpF32) { checkMlp(false); }

//===----------------------------------------------------------------------===//
// Sequence-model ops
//===----------------------------------------------------------------------===//

TEST(Gradient, SequenceActivations) {
  struct Case {
    const char *op; // the op and its attributes, before " %x"
    double lo, hi, margin;
  };
  const Case cases[] = {{"fuse.erf", -2, 2, 0},
                        {"fuse.gelu", -3, 3, 0},
                        {"fuse.gelu {approximate = \"tanh\"}", -3, 3, 0},
                        {"fuse.leaky_relu {alpha = 0.2 : f64}", -2, 2, 0.1}};
  const Shape shapes[] = {{5}, {2, 3}};
  unsigned seed = 2000;
  for (DType dtype : {DType::F64, DType::F32})
    for (const Case &c : cases)
      for (const Shape &s : shapes) {
        SCOPED_TRACE(std::string(c.op) + " " + dims(s));
        // erf (and exact gelu) are computed in f32 only.
        std::string name = c.op;
        if (dtype == DType::F64 && (name == "fuse.erf" || name == "fuse.gelu"))
          continue;
        // The attribute dictionary goes after the operand.
        std::string op = c.op, attrs;
        if (size_t brace = op.find(" {"); brace != std::string::npos) {
          attrs = op.substr(brace);
          op = op.substr(0, brace);
        }
        std::string body = "%y = " + op + " %x" + attrs + " : " + ty(s) + "\n" +
                           weightedSum("%y", ty(s), s.size());
        checkGradients(
            body,
            {{"x", ty(s),
              uniform(dtype, s, ++seed, c.lo, c.hi,
                      dtype == DType::F32 ? std::max(c.margin, 0.1) : c.margin),
              true},
             weight(s, ++seed, dtype)},
            dtype);
      }
}

TEST(Gradient, SliceConcatPad) {
  struct Case {
    std::string op;
    Shape xType, xValue, outType, outValue;
  };
  const Case cases[] = {
      {"fuse.slice %x {offsets = array<i64: 1, 2>} : (tensor<4x6x$T>) -> "
       "tensor<2x3x$T>",
       {4, 6},
       {4, 6},
       {2, 3},
       {2, 3}},
      {"fuse.slice %x {offsets = array<i64: 0, 1>, strides = array<i64: 2, "
       "2>} : (tensor<5x7x$T>) -> tensor<3x3x$T>",
       {5, 7},
       {5, 7},
       {3, 3},
       {3, 3}},
      {"fuse.slice %x {offsets = array<i64: 0, 3>} : (tensor<?x6x$T>) -> "
       "tensor<?x2x$T>",
       {-1, 6},
       {3, 6},
       {-1, 2},
       {3, 2}},
      {"fuse.pad %x {low = array<i64: 1, 0>, high = array<i64: 0, 2>, value "
       "= 5.0 : f64} : (tensor<2x3x$T>) -> tensor<3x5x$T>",
       {2, 3},
       {2, 3},
       {3, 5},
       {3, 5}},
      {"fuse.pad %x {low = array<i64: 0, 1>, high = array<i64: 0, 1>, "
       "interior = array<i64: 0, 2>} : (tensor<?x3x$T>) -> tensor<?x9x$T>",
       {-1, 3},
       {2, 3},
       {-1, 9},
       {2, 9}},
      {"fuse.concat %x, %x {axis = 1 : i64} : (tensor<?x3x$T>, "
       "tensor<?x3x$T>) -> tensor<?x6x$T>",
       {-1, 3},
       {2, 3},
       {-1, 6},
       {2, 6}},
  };
  unsigned seed = 2100;
  for (const Case &k : cases) {
    SCOPED_TRACE(k.op);
    const std::string &op = k.op;
    std::string body = "%y = " + op + "\n" +
                       weightedSum("%y", ty(k.outType), k.outType.size());
    checkGradients(
        body, {{"x", ty(k.xType), uniform(DType::F64, k.xValue, ++seed), true},
               {"w", ty(k.outType), uniform(DType::F64, k.outValue, ++seed)}});
  }
}

/// Casts between float types pass the gradient back: f32 through f64 and
/// back is exact, so finite differences in f32 see the identity.
TEST(Gradient, Cast) {
  std::string body =
      "%y0 = fuse.cast %x : (tensor<2x3x$T>) -> tensor<2x3xf64>\n"
      "%y1 = fuse.mul %y0, %y0 : (tensor<2x3xf64>, tensor<2x3xf64>) -> "
      "tensor<2x3xf64>\n"
      "%y = fuse.cast %y1 : (tensor<2x3xf64>) -> tensor<2x3x$T>\n" +
      weightedSum("%y", ty({2, 3}), 2);
  checkGradients(body,
                 {{"x", ty({2, 3}), uniform(DType::F32, {2, 3}, 2151), true},
                  weight({2, 3}, 2152, DType::F32)},
                 DType::F32);
}

/// Concat of two different inputs: each gets its own slice of the gradient.
TEST(Gradient, ConcatOfTwo) {
  std::string body =
      "%y = fuse.concat %a, %b {axis = 0 : i64} : (tensor<2x3x$T>, "
      "tensor<1x3x$T>) -> tensor<3x3x$T>\n" +
      weightedSum("%y", ty({3, 3}), 2);
  checkGradients(body,
                 {{"a", ty({2, 3}), uniform(DType::F64, {2, 3}, 2201), true},
                  {"b", ty({1, 3}), uniform(DType::F64, {1, 3}, 2202), true},
                  weight({3, 3}, 2203)});
}

/// Embedding lookup: repeated indices sum their rows' gradients.
TEST(Gradient, Gather) {
  Tensor tokens = Tensor::empty(DType::I32, {2, 3});
  const int32_t ids[] = {1, 4, 1, 0, 4, 4};
  std::copy(std::begin(ids), std::end(ids), tokens.data<int32_t>());
  for (DType dtype : {DType::F64, DType::F32}) {
    std::string body = "%y = fuse.gather %t, %i : (tensor<5x4x$T>, "
                       "tensor<2x3xi32>) -> tensor<2x3x4x$T>\n" +
                       weightedSum("%y", ty({2, 3, 4}), 3);
    checkGradients(body,
                   {{"t", ty({5, 4}), uniform(dtype, {5, 4}, 2301), true},
                    {"i", "tensor<2x3xi32>", tokens},
                    weight({2, 3, 4}, 2302, dtype)},
                   dtype);
  }
}

/// scatter_add's own rule (a gather), as a second-order gradient through an
/// embedding differentiates it: repeated indices read the same row.
TEST(Gradient, ScatterAdd) {
  Tensor tokens = Tensor::fromValues<int32_t>({2, 3}, {1, 4, 1, 0, 4, 4});
  std::string body = "%y = fuse.scatter_add %u, %i, %t : (tensor<2x3x4x$T>, "
                     "tensor<2x3xi32>, tensor<5x4x$T>) -> tensor<5x4x$T>\n" +
                     weightedSum("%y", ty({5, 4}), 2);
  checkGradients(
      body, {{"u", ty({2, 3, 4}), uniform(DType::F64, {2, 3, 4}, 2311), true},
             {"i", "tensor<2x3xi32>", tokens},
             {"t", ty({5, 4}), uniform(DType::F64, {5, 4}, 2312)},
             weight({5, 4}, 2313)});
}

TEST(Gradient, LayerNorm) {
  for (DType dtype : {DType::F64, DType::F32}) {
    // Over the last dim, and over the last two.
    std::string one = "%y = fuse.layer_norm %x, %s, %b {epsilon = 1.0e-3 : "
                      "f64} : (tensor<?x3x5x$T>, tensor<5x$T>, tensor<5x$T>) "
                      "-> tensor<?x3x5x$T>\n" +
                      weightedSum("%y", ty({-1, 3, 5}), 3);
    checkGradients(
        one,
        {{"x", ty({-1, 3, 5}), uniform(dtype, {2, 3, 5}, 2401, -2, 2), true},
         {"s", ty({5}), uniform(dtype, {5}, 2402, 0.5, 1.5), true},
         {"b", ty({5}), uniform(dtype, {5}, 2403), true},
         {"w", ty({-1, 3, 5}), uniform(dtype, {2, 3, 5}, 2404)}},
        dtype);
    std::string two = "%y = fuse.layer_norm %x, %s, %b : (tensor<2x3x4x$T>, "
                      "tensor<3x4x$T>, tensor<3x4x$T>) -> tensor<2x3x4x$T>\n" +
                      weightedSum("%y", ty({2, 3, 4}), 3);
    checkGradients(
        two,
        {{"x", ty({2, 3, 4}), uniform(dtype, {2, 3, 4}, 2405, -2, 2), true},
         {"s", ty({3, 4}), uniform(dtype, {3, 4}, 2406, 0.5, 1.5), true},
         {"b", ty({3, 4}), uniform(dtype, {3, 4}, 2407), true},
         weight({2, 3, 4}, 2408, dtype)},
        dtype);
  }
}

/// fuse.attention's rule (fuse.attention_grad, computed in blocks): causal
/// self-attention, and a 4-d cross-attention with a scale of its own and
/// fewer queries than keys.
TEST(Gradient, Attention) {
  for (DType dtype : {DType::F64, DType::F32}) {
    std::string causal =
        "%y = fuse.attention %q, %k, %v {causal} : (tensor<2x5x4x$T>, "
        "tensor<2x5x4x$T>, tensor<2x5x3x$T>) -> tensor<2x5x3x$T>\n" +
        weightedSum("%y", ty({2, 5, 3}), 3);
    checkGradients(
        causal,
        {{"q", ty({2, 5, 4}), uniform(dtype, {2, 5, 4}, 2701, -1.5, 1.5), true},
         {"k", ty({2, 5, 4}), uniform(dtype, {2, 5, 4}, 2702, -1.5, 1.5), true},
         {"v", ty({2, 5, 3}), uniform(dtype, {2, 5, 3}, 2703), true},
         weight({2, 5, 3}, 2704, dtype)},
        dtype);
    std::string cross =
        "%y = fuse.attention %q, %k, %v {scale = 0.7 : f64} : "
        "(tensor<1x2x3x4x$T>, tensor<1x2x6x4x$T>, tensor<1x2x6x2x$T>) -> "
        "tensor<1x2x3x2x$T>\n" +
        weightedSum("%y", ty({1, 2, 3, 2}), 4);
    checkGradients(
        cross,
        {{"q", ty({1, 2, 3, 4}), uniform(dtype, {1, 2, 3, 4}, 2705, -1.5, 1.5),
          true},
         {"k", ty({1, 2, 6, 4}), uniform(dtype, {1, 2, 6, 4}, 2706, -1.5, 1.5),
          true},
         {"v", ty({1, 2, 6, 2}), uniform(dtype, {1, 2, 6, 2}, 2707), true},
         weight({1, 2, 3, 2}, 2708, dtype)},
        dtype);
  }
}

/// The gradient ops' own rules (what a second-order gradient through a
/// loss, a convolution or an average pool differentiates).
TEST(Gradient, GradientOps) {
  Tensor labels = Tensor::fromValues<int32_t>({3}, {2, 0, 3});
  std::string sce =
      "%y = fuse.softmax_cross_entropy_grad %z, %l, %c : (tensor<3x4x$T>, "
      "tensor<3xi32>, tensor<$T>) -> tensor<3x4x$T>\n" +
      weightedSum("%y", ty({3, 4}), 2);
  checkGradients(
      sce, {{"z", ty({3, 4}), uniform(DType::F64, {3, 4}, 2601, -2, 2), true},
            {"l", "tensor<3xi32>", labels},
            {"c", ty({}), uniform(DType::F64, {}, 2602, 0.5, 2), true},
            weight({3, 4}, 2603)});
  const char *attrs = "{strides = array<i64: 2, 1>, padding = array<i64: 1, "
                      "1, 0, 1>, dilations = array<i64: 1, 2>}";
  // y = conv2d(x: 1x5x6x2, k: 3x2x2x3) with attrs: 1x3x5x3.
  std::string input =
      std::string("%y = fuse.conv2d_input_grad %dy, %k, %x ") + attrs +
      " : (tensor<1x3x5x3x$T>, tensor<3x2x2x3x$T>, tensor<1x5x6x2x$T>) -> "
      "tensor<1x5x6x2x$T>\n" +
      weightedSum("%y", ty({1, 5, 6, 2}), 4);
  checkGradients(
      input,
      {{"dy", ty({1, 3, 5, 3}), uniform(DType::F64, {1, 3, 5, 3}, 2611), true},
       {"k", ty({3, 2, 2, 3}), uniform(DType::F64, {3, 2, 2, 3}, 2612), true},
       {"x", ty({1, 5, 6, 2}), uniform(DType::F64, {1, 5, 6, 2}, 2613)},
       weight({1, 5, 6, 2}, 2614)});
  std::string filter =
      std::string("%y = fuse.conv2d_filter_grad %x, %dy, %k ") + attrs +
      " : (tensor<1x5x6x2x$T>, tensor<1x3x5x3x$T>, tensor<3x2x2x3x$T>) -> "
      "tensor<3x2x2x3x$T>\n" +
      weightedSum("%y", ty({3, 2, 2, 3}), 4);
  checkGradients(
      filter,
      {{"x", ty({1, 5, 6, 2}), uniform(DType::F64, {1, 5, 6, 2}, 2621), true},
       {"dy", ty({1, 3, 5, 3}), uniform(DType::F64, {1, 3, 5, 3}, 2622), true},
       {"k", ty({3, 2, 2, 3}), uniform(DType::F64, {3, 2, 2, 3}, 2623)},
       weight({3, 2, 2, 3}, 2624)});
  std::string pool =
      "%y = fuse.avg_pool2d_grad %g, %x {window = array<i64: 2, 2>, padding "
      "= array<i64: 1, 1, 0, 1>} : (tensor<2x3x3x2x$T>, tensor<2x4x5x2x$T>) "
      "-> tensor<2x4x5x2x$T>\n" +
      weightedSum("%y", ty({2, 4, 5, 2}), 4);
  checkGradients(
      pool,
      {{"g", ty({2, 3, 3, 2}), uniform(DType::F64, {2, 3, 3, 2}, 2631), true},
       {"x", ty({2, 4, 5, 2}), uniform(DType::F64, {2, 4, 5, 2}, 2632)},
       weight({2, 4, 5, 2}, 2633)});
}

/// The gradient of a gradient: @inner's gradient, weighted and summed, is
/// the loss, so the backward ops (full_like, mul, the activation rules) are
/// differentiated too, and checked against finite differences of @loss.
TEST(Gradient, GradientOfGradient) {
  // (f64: erf and exact gelu are f32 only; SequenceActivations checks
  // their first-order rules.)
  for (std::string act : {"tanh", "sigmoid", "gelu_tanh"}) {
    SCOPED_TRACE(act);
    std::string attrs;
    if (act == "gelu_tanh") {
      act = "gelu";
      attrs = " {approximate = \"tanh\"}";
    }
    std::string inner =
        "func.func @inner(%x: tensor<2x3xf64>, %w: tensor<3x2xf64>) -> "
        "tensor<f64> {\n"
        "%h = fuse.matmul %x, %w : (tensor<2x3xf64>, tensor<3x2xf64>) -> "
        "tensor<2x2xf64>\n"
        "%a = fuse." +
        act + " %h" + attrs +
        " : tensor<2x2xf64>\n"
        "%s = fuse.reduce_sum %a {axes = array<i64: 0, 1>} : "
        "(tensor<2x2xf64>) -> tensor<f64>\n"
        "return %s : tensor<f64>\n}\n";
    std::string body =
        "%r:2 = fuse.value_and_grad @inner(%x, %w) {wrt = array<i64: 1>} : "
        "(tensor<2x3xf64>, tensor<3x2xf64>) -> (tensor<f64>, "
        "tensor<3x2xf64>)\n" +
        weightedSum("%r#1", "tensor<3x2xf64>", 2, "%v");
    // checkGradients builds @loss from the body; @inner goes before it.
    std::vector<Param> params = {
        {"x", "tensor<2x3x$T>", uniform(DType::F64, {2, 3}, 2501, -1, 1), true},
        {"w", "tensor<3x2x$T>", uniform(DType::F64, {3, 2}, 2502, -1, 1), true},
        {"v", "tensor<3x2x$T>", uniform(DType::F64, {3, 2}, 2503)}};
    checkGradients(body, params, DType::F64, inner);
  }
}

//===----------------------------------------------------------------------===//
// Errors (the autodiff pass runs at load)
//===----------------------------------------------------------------------===//

std::string loadError(const std::string &source) {
  EngineOptions options;
  options.diskCache = false;
  std::unique_ptr<Engine> engine = unwrap(Engine::create(options));
  return errorOf(engine->loadString(source));
}

TEST(Gradient, ErrorIntegerArgument) {
  std::string error = loadError(R"(
func.func @f(%x: tensor<3xf32>, %n: tensor<3xi32>) -> tensor<f32> {
  %s = fuse.reduce_sum %x {axes = array<i64: 0>} : (tensor<3xf32>) -> tensor<f32>
  return %s : tensor<f32>
}
func.func @g(%x: tensor<3xf32>, %n: tensor<3xi32>) -> (tensor<f32>, tensor<3xi32>) {
  %r:2 = fuse.value_and_grad @f(%x, %n) {wrt = array<i64: 1>}
      : (tensor<3xf32>, tensor<3xi32>) -> (tensor<f32>, tensor<3xi32>)
  return %r#0, %r#1 : tensor<f32>, tensor<3xi32>
}
)");
  EXPECT_NE(error.find("cannot differentiate with respect to argument"),
            std::string::npos)
      << error;
}

TEST(Gradient, ErrorNonScalarLoss) {
  std::string error = loadError(R"(
func.func @f(%x: tensor<3xf32>) -> tensor<3xf32> {
  %y = fuse.exp %x : tensor<3xf32>
  return %y : tensor<3xf32>
}
func.func @g(%x: tensor<3xf32>) -> (tensor<f32>, tensor<3xf32>) {
  %r:2 = fuse.value_and_grad @f(%x) {wrt = array<i64: 0>}
      : (tensor<3xf32>) -> (tensor<f32>, tensor<3xf32>)
  return %r#0, %r#1 : tensor<f32>, tensor<3xf32>
}
)");
  EXPECT_NE(error.find("to return one 0-d float tensor"), std::string::npos)
      << error;
}

/// An op without a VJP on the differentiated path: max_pool2d_grad (a
/// second-order gradient through a max pool) has none yet.
TEST(Gradient, ErrorNoRule) {
  std::string error = loadError(R"(
func.func @f(%g: tensor<1x2x2x1xf32>, %x: tensor<1x4x4x1xf32>) -> tensor<f32> {
  %i = fuse.max_pool2d_indices %x {window = array<i64: 2, 2>}
      : (tensor<1x4x4x1xf32>) -> tensor<1x2x2x1xi8>
  %d = fuse.max_pool2d_grad %g, %i, %x {window = array<i64: 2, 2>}
      : (tensor<1x2x2x1xf32>, tensor<1x2x2x1xi8>, tensor<1x4x4x1xf32>)
      -> tensor<1x4x4x1xf32>
  %s = fuse.reduce_sum %d {axes = array<i64: 0, 1, 2, 3>}
      : (tensor<1x4x4x1xf32>) -> tensor<f32>
  return %s : tensor<f32>
}
func.func @g(%g: tensor<1x2x2x1xf32>, %x: tensor<1x4x4x1xf32>)
    -> (tensor<f32>, tensor<1x2x2x1xf32>) {
  %r:2 = fuse.value_and_grad @f(%g, %x) {wrt = array<i64: 0>}
      : (tensor<1x2x2x1xf32>, tensor<1x4x4x1xf32>)
      -> (tensor<f32>, tensor<1x2x2x1xf32>)
  return %r#0, %r#1 : tensor<f32>, tensor<1x2x2x1xf32>
}
)");
  EXPECT_NE(error.find("has no gradient rule"), std::string::npos) << error;
  EXPECT_NE(error.find("max_pool2d_grad"), std::string::npos) << error;
}

} // namespace
