//===- ConvReferenceTest.cpp - The CNN's front against an f64 reference ---===//
//
// The seed CNN's two 3x3 convolutions (1 -> 32 -> 32 channels, zero biases
// as Keras initializes them, ReLU after each) on images whose background is
// exactly zero, as Fashion-MNIST's are. A direct sum over an all-zero patch
// is exactly 0, so the ReLU's gradient there is 0 (PyTorch's relu'(0) = 0)
// and no gradient flows through the background. The compiled f32 gradients
// of both filters and biases are compared with an f64 reference written
// here: within 1e-4 of the reference's largest magnitude per tensor, and
// the conv2 outputs over all-zero patches exactly 0.
//
// Winograd's transforms (EngineOptions::winograd) mix a tile's inputs, so
// they return +-1e-7 instead of 0 over a zero patch that borders the
// object and let gradient through the ReLU there; that is why they are
// off by default. The test measures that error too (the figure in
// docs/performance.md) and checks it stays what the docs say.
//
//===----------------------------------------------------------------------===//

#include "TestUtils.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

using namespace fuse;
using namespace fuse::testing;

namespace {

constexpr int64_t kN = 2, kH = 28, kW = 28, kC = 32;
constexpr int64_t kH1 = kH - 2, kW1 = kW - 2, kH2 = kH1 - 2, kW2 = kW1 - 2;

/// conv1 + bias, ReLU, conv2 + bias (%h2b), in the fuse dialect.
const char *kFrontBody = R"mlir(
  %h1 = fuse.conv2d %x, %k1
      : (tensor<2x28x28x1xf32>, tensor<3x3x1x32xf32>) -> tensor<2x26x26x32xf32>
  %h1b = fuse.add %h1, %c1
      : (tensor<2x26x26x32xf32>, tensor<32xf32>) -> tensor<2x26x26x32xf32>
  %a1 = fuse.relu %h1b : tensor<2x26x26x32xf32>
  %h2 = fuse.conv2d %a1, %k2
      : (tensor<2x26x26x32xf32>, tensor<3x3x32x32xf32>) -> tensor<2x24x24x32xf32>
  %h2b = fuse.add %h2, %c2
      : (tensor<2x24x24x32xf32>, tensor<32xf32>) -> tensor<2x24x24x32xf32>
)mlir";

/// @front returns conv2's output; @grads the value and gradients of
/// sum(relu(conv2's output) * r).
std::string module() {
  std::string params = "%k1: tensor<3x3x1x32xf32>, %c1: tensor<32xf32>, "
                       "%k2: tensor<3x3x32x32xf32>, %c2: tensor<32xf32>, "
                       "%x: tensor<2x28x28x1xf32>";
  std::string types = "tensor<3x3x1x32xf32>, tensor<32xf32>, "
                      "tensor<3x3x32x32xf32>, tensor<32xf32>, "
                      "tensor<2x28x28x1xf32>, tensor<2x24x24x32xf32>";
  std::string results = "tensor<f32>, tensor<3x3x1x32xf32>, tensor<32xf32>, "
                        "tensor<3x3x32x32xf32>, tensor<32xf32>";
  return "func.func @front(" + params + ") -> tensor<2x24x24x32xf32> {" +
         kFrontBody + "  return %h2b : tensor<2x24x24x32xf32>\n}\n" +
         "func.func @loss(" + params +
         ", %r: tensor<2x24x24x32xf32>) -> tensor<f32> {" + kFrontBody +
         R"mlir(  %a2 = fuse.relu %h2b : tensor<2x24x24x32xf32>
  %p = fuse.mul %a2, %r : (tensor<2x24x24x32xf32>, tensor<2x24x24x32xf32>)
      -> tensor<2x24x24x32xf32>
  %l = fuse.reduce_sum %p {axes = array<i64: 0, 1, 2, 3>}
      : (tensor<2x24x24x32xf32>) -> tensor<f32>
  return %l : tensor<f32>
}
)mlir" + "func.func @grads(" +
         params + ", %r: tensor<2x24x24x32xf32>) -> (" + results +
         ") {\n  %g:5 = fuse.value_and_grad @loss(%k1, %c1, %k2, %c2, %x, %r) "
         "{wrt = array<i64: 0, 1, 2, 3>} : (" +
         types + ") -> (" + results +
         ")\n  return %g#0, %g#1, %g#2, %g#3, %g#4 : " + results + "\n}\n";
}

using Vec = std::vector<double>;

/// NHWC index.
int64_t at(int64_t n, int64_t y, int64_t x, int64_t c, int64_t h, int64_t w,
           int64_t channels) {
  return ((n * h + y) * w + x) * channels + c;
}

/// A valid 3x3 convolution (NHWC input, HWIO filter) plus bias, in f64.
Vec conv(const Vec &in, int64_t h, int64_t w, int64_t c, const Vec &k,
         const Vec &bias, int64_t f) {
  int64_t oh = h - 2, ow = w - 2;
  Vec out(kN * oh * ow * f);
  for (int64_t n = 0; n < kN; ++n)
    for (int64_t y = 0; y < oh; ++y)
      for (int64_t x = 0; x < ow; ++x)
        for (int64_t o = 0; o < f; ++o) {
          double sum = 0;
          for (int64_t i = 0; i < 3; ++i)
            for (int64_t j = 0; j < 3; ++j)
              for (int64_t ci = 0; ci < c; ++ci)
                sum += in[at(n, y + i, x + j, ci, h, w, c)] *
                       k[((i * 3 + j) * c + ci) * f + o];
          out[at(n, y, x, o, oh, ow, f)] = sum + bias[o];
        }
  return out;
}

/// Gradients of a valid 3x3 convolution plus bias, from the gradient `d` of
/// its output: the filter's, the bias', and (if `dIn`) the input's.
void convBackward(const Vec &in, int64_t h, int64_t w, int64_t c, const Vec &k,
                  int64_t f, const Vec &d, Vec &dk, Vec &db, Vec *dIn) {
  int64_t oh = h - 2, ow = w - 2;
  dk.assign(9 * c * f, 0);
  db.assign(f, 0);
  if (dIn)
    dIn->assign(in.size(), 0);
  for (int64_t n = 0; n < kN; ++n)
    for (int64_t y = 0; y < oh; ++y)
      for (int64_t x = 0; x < ow; ++x)
        for (int64_t o = 0; o < f; ++o) {
          double g = d[at(n, y, x, o, oh, ow, f)];
          if (g == 0)
            continue;
          db[o] += g;
          for (int64_t i = 0; i < 3; ++i)
            for (int64_t j = 0; j < 3; ++j)
              for (int64_t ci = 0; ci < c; ++ci) {
                int64_t ki = ((i * 3 + j) * c + ci) * f + o;
                int64_t xi = at(n, y + i, x + j, ci, h, w, c);
                dk[ki] += in[xi] * g;
                if (dIn)
                  (*dIn)[xi] += k[ki] * g;
              }
        }
}

Vec values(const Tensor &t) {
  return Vec(t.data<float>(), t.data<float>() + t.numElements());
}

Tensor tensorOf(llvm::ArrayRef<int64_t> shape, const Vec &v) {
  return Tensor::fromValues<float>(shape,
                                   std::vector<float>(v.begin(), v.end()));
}

/// The worst |got - want| over the reference's largest magnitude.
double relativeError(const Vec &got, const Vec &want) {
  double worst = 0, scale = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    worst = std::max(worst, std::abs(got[i] - want[i]));
    scale = std::max(scale, std::abs(want[i]));
  }
  return worst / std::max(scale, 1e-30);
}

struct Front {
  Vec k1, c1, k2, c2, x, r;
};

/// Images of a zero background with an object in the middle (values in
/// (0, 1], as pixels), Glorot-uniform filters, zero biases, a random
/// weighting of the outputs.
Front makeFront(unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> unit(0, 1), sym(-1, 1);
  Front f;
  f.x.assign(kN * kH * kW, 0);
  for (int64_t n = 0; n < kN; ++n)
    for (int64_t y = 8 + n; y < 19 + n; ++y)
      for (int64_t x = 9; x < 18 - n; ++x)
        f.x[at(n, y, x, 0, kH, kW, 1)] = 1 - unit(rng);
  auto glorot = [&](int64_t fanIn, int64_t fanOut, int64_t size) {
    double limit = std::sqrt(6.0 / double(fanIn + fanOut));
    Vec v(size);
    for (double &e : v)
      e = float(sym(rng) * limit);
    return v;
  };
  f.k1 = glorot(9, 9 * kC, 9 * kC);
  f.k2 = glorot(9 * kC, 9 * kC, 9 * kC * kC);
  f.c1.assign(kC, 0);
  f.c2.assign(kC, 0);
  f.r.resize(kN * kH2 * kW2 * kC);
  for (double &e : f.r)
    e = float(sym(rng));
  return f;
}

std::vector<Tensor> argsOf(const Front &f) {
  return {tensorOf({3, 3, 1, kC}, f.k1),  tensorOf({kC}, f.c1),
          tensorOf({3, 3, kC, kC}, f.k2), tensorOf({kC}, f.c2),
          tensorOf({kN, kH, kW, 1}, f.x), tensorOf({kN, kH2, kW2, kC}, f.r)};
}

/// The f64 reference: conv2's output and the four gradients.
struct Reference {
  Vec h2, dk1, dc1, dk2, dc2;
};

Reference reference(const Front &f) {
  Reference ref;
  Vec h1 = conv(f.x, kH, kW, 1, f.k1, f.c1, kC);
  Vec a1(h1.size());
  for (size_t i = 0; i < h1.size(); ++i)
    a1[i] = std::max(h1[i], 0.0);
  ref.h2 = conv(a1, kH1, kW1, kC, f.k2, f.c2, kC);
  Vec d2(ref.h2.size());
  for (size_t i = 0; i < d2.size(); ++i)
    d2[i] = ref.h2[i] > 0 ? f.r[i] : 0; // relu'(0) = 0
  Vec da1;
  convBackward(a1, kH1, kW1, kC, f.k2, kC, d2, ref.dk2, ref.dc2, &da1);
  for (size_t i = 0; i < da1.size(); ++i)
    if (!(h1[i] > 0))
      da1[i] = 0;
  convBackward(f.x, kH, kW, 1, f.k1, kC, da1, ref.dk1, ref.dc1, nullptr);
  return ref;
}

/// Errors of one compiled run against the reference.
struct Errors {
  size_t zeroPatchOutputs = 0, nonzeroOverZeroPatches = 0;
  double dk1 = 0, dc1 = 0, dk2 = 0, dc2 = 0;
};

Errors measure(bool winograd, const Front &f, const Reference &ref) {
  // The direct case runs with the default options: the test holds the
  // default.
  EngineOptions options;
  if (winograd)
    options.winograd = true;
  auto engine = makeEngine(module(), options);
  std::vector<Tensor> args = argsOf(f);
  Function &front = unwrap(engine->lookup("front"));
  std::vector<Tensor> h2 =
      unwrap(front.call(llvm::ArrayRef<Tensor>(args).take_front(5)));
  Function &grads = unwrap(engine->lookup("grads"));
  std::vector<Tensor> g = unwrap(grads.call(args));

  Errors e;
  Vec got = values(h2[0]);
  for (size_t i = 0; i < got.size(); ++i)
    if (ref.h2[i] == 0) { // every term of the sum is 0
      ++e.zeroPatchOutputs;
      e.nonzeroOverZeroPatches += got[i] != 0;
    }
  e.dk1 = relativeError(values(g[1]), ref.dk1);
  e.dc1 = relativeError(values(g[2]), ref.dc1);
  e.dk2 = relativeError(values(g[3]), ref.dk2);
  e.dc2 = relativeError(values(g[4]), ref.dc2);
  return e;
}

TEST(ConvReference, DirectMatchesF64WithExactZeros) {
  for (unsigned seed : {1u, 2u, 3u}) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    Front f = makeFront(seed);
    Reference ref = reference(f);
    Errors e = measure(/*winograd=*/false, f, ref);
    std::printf("direct: %zu of %zu zero-patch outputs nonzero; relative "
                "gradient errors dk1 %.2e dc1 %.2e dk2 %.2e dc2 %.2e\n",
                e.nonzeroOverZeroPatches, e.zeroPatchOutputs, e.dk1, e.dc1,
                e.dk2, e.dc2);
    ASSERT_GT(e.zeroPatchOutputs, 10000u); // the background
    EXPECT_EQ(e.nonzeroOverZeroPatches, 0u);
    EXPECT_LE(e.dk1, 1e-4);
    EXPECT_LE(e.dc1, 1e-4);
    EXPECT_LE(e.dk2, 1e-4);
    EXPECT_LE(e.dc2, 1e-4);
  }
}

// Winograd stays available as an option; its error is documented
// (docs/performance.md), not hidden: nonzero outputs over zero patches at
// the object's border, and bias gradients off by much more than 1e-4.
TEST(ConvReference, WinogradErrorAsDocumented) {
  Front f = makeFront(1);
  Reference ref = reference(f);
  Errors e = measure(/*winograd=*/true, f, ref);
  std::printf("winograd: %zu of %zu zero-patch outputs nonzero; relative "
              "gradient errors dk1 %.2e dc1 %.2e dk2 %.2e dc2 %.2e\n",
              e.nonzeroOverZeroPatches, e.zeroPatchOutputs, e.dk1, e.dc1, e.dk2,
              e.dc2);
  EXPECT_GT(e.nonzeroOverZeroPatches, 0u);
  // Each output stays within Winograd's rounding (bounded in OpsTest's
  // OpsConv2D.Winograd); the gradients differ where a ReLU tells 1e-7
  // from 0.
  EXPECT_LE(e.dk2, 0.5);
  EXPECT_LE(e.dc2, 0.5);
}

} // namespace
