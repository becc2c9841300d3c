//===- TransformerTest.cpp - Transformer blocks and the GPT example -------===//
//
// A pre-LN transformer block written with the fused ops (layer_norm,
// attention, gelu) against the same block composed of primitive ops: the loss
// and every gradient agree in f64 to 1e-10 relative (the two compute the same
// formulas in a different order). And the GPT example (examples/gpt.mlir)
// trains: on a short repeating text its next-byte loss falls from about
// ln(256) = 5.5 to below 2.5 in 60 AdamW steps (a batch of 8 windows).
//
//===----------------------------------------------------------------------===//

#include "TestUtils.h"

#include "fuse/Data/TensorDataSource.h"
#include "fuse/Fit.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

using namespace fuse;
using namespace fuse::testing;
using fuse::data::TensorDataSource;

namespace {

/// One block (T = 4, d = 8, 2 heads of 4) over a batch of 2; `ln`,
/// attention and `gelu` spell layer norm, causal attention and GELU (tanh
/// form), fused or composed.
std::string block(const std::string &name, bool fused) {
  auto ln = [&](const std::string &out, const std::string &in,
                const std::string &g, const std::string &b) {
    if (fused)
      return "%" + out + " = fuse.layer_norm %" + in + ", %" + g + ", %" + b +
             " : (tensor<2x4x8xf64>, tensor<8xf64>, tensor<8xf64>) -> "
             "tensor<2x4x8xf64>\n";
    std::string p = "%" + out + "_";
    return p + "mean = fuse.reduce_mean %" + in +
           " {axes = array<i64: 2>, keepdims} : (tensor<2x4x8xf64>) -> "
           "tensor<2x4x1xf64>\n" +
           p + "c = fuse.sub %" + in + ", " + p +
           "mean : (tensor<2x4x8xf64>, tensor<2x4x1xf64>) -> "
           "tensor<2x4x8xf64>\n" +
           p + "sq = fuse.square " + p + "c : tensor<2x4x8xf64>\n" + p +
           "var = fuse.reduce_mean " + p +
           "sq {axes = array<i64: 2>, keepdims} : (tensor<2x4x8xf64>) -> "
           "tensor<2x4x1xf64>\n" +
           p + "eps = fuse.constant dense<1.0e-5> : tensor<f64>\n" + p +
           "ve = fuse.add " + p + "var, " + p +
           "eps : (tensor<2x4x1xf64>, tensor<f64>) -> tensor<2x4x1xf64>\n" + p +
           "r = fuse.rsqrt " + p + "ve : tensor<2x4x1xf64>\n" + p +
           "n = fuse.mul " + p + "c, " + p +
           "r : (tensor<2x4x8xf64>, tensor<2x4x1xf64>) -> tensor<2x4x8xf64>\n" +
           p + "s = fuse.mul " + p + "n, %" + g +
           " : (tensor<2x4x8xf64>, tensor<8xf64>) -> tensor<2x4x8xf64>\n" +
           "%" + out + " = fuse.add " + p + "s, %" + b +
           " : (tensor<2x4x8xf64>, tensor<8xf64>) -> tensor<2x4x8xf64>\n";
  };
  std::string gelu =
      fused ? "%g = fuse.gelu %u {approximate = \"tanh\"} : tensor<8x16xf64>\n"
            : "%gc = fuse.constant dense<0.044715> : tensor<f64>\n"
              "%gk = fuse.constant dense<0.7978845608028654> : tensor<f64>\n"
              "%gh = fuse.constant dense<0.5> : tensor<f64>\n"
              "%g1 = fuse.constant dense<1.0> : tensor<f64>\n"
              "%u2 = fuse.mul %u, %u : (tensor<8x16xf64>, tensor<8x16xf64>) "
              "-> tensor<8x16xf64>\n"
              "%u3 = fuse.mul %u2, %u : (tensor<8x16xf64>, tensor<8x16xf64>) "
              "-> tensor<8x16xf64>\n"
              "%cu3 = fuse.mul %u3, %gc : (tensor<8x16xf64>, tensor<f64>) -> "
              "tensor<8x16xf64>\n"
              "%in = fuse.add %u, %cu3 : (tensor<8x16xf64>, "
              "tensor<8x16xf64>) -> tensor<8x16xf64>\n"
              "%kin = fuse.mul %in, %gk : (tensor<8x16xf64>, tensor<f64>) -> "
              "tensor<8x16xf64>\n"
              "%th = fuse.tanh %kin : tensor<8x16xf64>\n"
              "%op = fuse.add %th, %g1 : (tensor<8x16xf64>, tensor<f64>) -> "
              "tensor<8x16xf64>\n"
              "%hx = fuse.mul %u, %gh : (tensor<8x16xf64>, tensor<f64>) -> "
              "tensor<8x16xf64>\n"
              "%g = fuse.mul %hx, %op : (tensor<8x16xf64>, tensor<8x16xf64>) "
              "-> tensor<8x16xf64>\n";
  return "func.func @" + name +
         "(%x: tensor<2x4x8xf64>, %g1s: tensor<8xf64>, %b1s: tensor<8xf64>, "
         "%wqkv: tensor<8x24xf64>, %wo: tensor<8x8xf64>, %g2s: tensor<8xf64>, "
         "%b2s: tensor<8xf64>, %w1: tensor<8x16xf64>, %w2: tensor<16x8xf64>) "
         "-> tensor<f64> {\n" +
         ln("a", "x", "g1s", "b1s") +
         "%af = fuse.reshape %a : (tensor<2x4x8xf64>) -> tensor<8x8xf64>\n"
         "%qkv = fuse.matmul %af, %wqkv : (tensor<8x8xf64>, tensor<8x24xf64>) "
         "-> tensor<8x24xf64>\n"
         "%qkv3 = fuse.reshape %qkv : (tensor<8x24xf64>) -> "
         "tensor<2x4x24xf64>\n"
         "%q = fuse.slice %qkv3 {offsets = array<i64: 0, 0, 0>} : "
         "(tensor<2x4x24xf64>) -> tensor<2x4x8xf64>\n"
         "%k = fuse.slice %qkv3 {offsets = array<i64: 0, 0, 8>} : "
         "(tensor<2x4x24xf64>) -> tensor<2x4x8xf64>\n"
         "%v = fuse.slice %qkv3 {offsets = array<i64: 0, 0, 16>} : "
         "(tensor<2x4x24xf64>) -> tensor<2x4x8xf64>\n"
         "%q4 = fuse.reshape %q : (tensor<2x4x8xf64>) -> "
         "tensor<2x4x2x4xf64>\n"
         "%qt = fuse.transpose %q4 {permutation = array<i64: 0, 2, 1, 3>} : "
         "(tensor<2x4x2x4xf64>) -> tensor<2x2x4x4xf64>\n"
         "%qh = fuse.reshape %qt : (tensor<2x2x4x4xf64>) -> "
         "tensor<4x4x4xf64>\n"
         "%k4 = fuse.reshape %k : (tensor<2x4x8xf64>) -> "
         "tensor<2x4x2x4xf64>\n"
         "%kt = fuse.transpose %k4 {permutation = array<i64: 0, 2, 1, 3>} : "
         "(tensor<2x4x2x4xf64>) -> tensor<2x2x4x4xf64>\n"
         "%kh = fuse.reshape %kt : (tensor<2x2x4x4xf64>) -> "
         "tensor<4x4x4xf64>\n"
         "%v4 = fuse.reshape %v : (tensor<2x4x8xf64>) -> "
         "tensor<2x4x2x4xf64>\n"
         "%vt = fuse.transpose %v4 {permutation = array<i64: 0, 2, 1, 3>} : "
         "(tensor<2x4x2x4xf64>) -> tensor<2x2x4x4xf64>\n"
         "%vh = fuse.reshape %vt : (tensor<2x2x4x4xf64>) -> "
         "tensor<4x4x4xf64>\n" +
         (fused ? std::string("%o = fuse.attention %qh, %kh, %vh {causal} : "
                              "(tensor<4x4x4xf64>, tensor<4x4x4xf64>, "
                              "tensor<4x4x4xf64>) -> tensor<4x4x4xf64>\n")
                : std::string(
                      "%s = fuse.batch_matmul %qh, %kh {transpose_rhs} : "
                      "(tensor<4x4x4xf64>, tensor<4x4x4xf64>) -> "
                      "tensor<4x4x4xf64>\n"
                      "%half = fuse.constant dense<0.5> : tensor<f64>\n"
                      "%ss = fuse.mul %s, %half : (tensor<4x4x4xf64>, "
                      "tensor<f64>) -> "
                      "tensor<4x4x4xf64>\n"
                      "%r = fuse.iota {axis = 0 : i64} : tensor<4x4xi32>\n"
                      "%c = fuse.iota {axis = 1 : i64} : tensor<4x4xi32>\n"
                      "%causal = fuse.compare ge, %r, %c : (tensor<4x4xi32>, "
                      "tensor<4x4xi32>) -> tensor<4x4xi1>\n"
                      "%ninf = fuse.constant dense<0xFFF0000000000000> : "
                      "tensor<f64>\n"
                      "%m = fuse.select %causal, %ss, %ninf : (tensor<4x4xi1>, "
                      "tensor<4x4x4xf64>, tensor<f64>) -> tensor<4x4x4xf64>\n"
                      "%p = fuse.softmax %m : tensor<4x4x4xf64>\n"
                      "%o = fuse.batch_matmul %p, %vh : (tensor<4x4x4xf64>, "
                      "tensor<4x4x4xf64>) -> tensor<4x4x4xf64>\n")) +
         "%o4 = fuse.reshape %o : (tensor<4x4x4xf64>) -> "
         "tensor<2x2x4x4xf64>\n"
         "%ot = fuse.transpose %o4 {permutation = array<i64: 0, 2, 1, 3>} : "
         "(tensor<2x2x4x4xf64>) -> tensor<2x4x2x4xf64>\n"
         "%of = fuse.reshape %ot : (tensor<2x4x2x4xf64>) -> "
         "tensor<8x8xf64>\n"
         "%pr = fuse.matmul %of, %wo : (tensor<8x8xf64>, tensor<8x8xf64>) -> "
         "tensor<8x8xf64>\n"
         "%pr3 = fuse.reshape %pr : (tensor<8x8xf64>) -> tensor<2x4x8xf64>\n"
         "%x2 = fuse.add %x, %pr3 : (tensor<2x4x8xf64>, tensor<2x4x8xf64>) "
         "-> tensor<2x4x8xf64>\n" +
         ln("b", "x2", "g2s", "b2s") +
         "%bf = fuse.reshape %b : (tensor<2x4x8xf64>) -> tensor<8x8xf64>\n"
         "%u = fuse.matmul %bf, %w1 : (tensor<8x8xf64>, tensor<8x16xf64>) -> "
         "tensor<8x16xf64>\n" +
         gelu +
         "%d = fuse.matmul %g, %w2 : (tensor<8x16xf64>, tensor<16x8xf64>) -> "
         "tensor<8x8xf64>\n"
         "%d3 = fuse.reshape %d : (tensor<8x8xf64>) -> tensor<2x4x8xf64>\n"
         "%y = fuse.add %x2, %d3 : (tensor<2x4x8xf64>, tensor<2x4x8xf64>) -> "
         "tensor<2x4x8xf64>\n"
         "%t = fuse.tanh %y : tensor<2x4x8xf64>\n"
         "%l = fuse.reduce_sum %t {axes = array<i64: 0, 1, 2>} : "
         "(tensor<2x4x8xf64>) -> tensor<f64>\n"
         "return %l : tensor<f64>\n}\n";
}

const char *kBlockArgs =
    "tensor<2x4x8xf64>, tensor<8xf64>, tensor<8xf64>, tensor<8x24xf64>, "
    "tensor<8x8xf64>, tensor<8xf64>, tensor<8xf64>, tensor<8x16xf64>, "
    "tensor<16x8xf64>";
const char *kBlockGrads =
    "tensor<f64>, tensor<2x4x8xf64>, tensor<8xf64>, tensor<8xf64>, "
    "tensor<8x24xf64>, tensor<8x8xf64>, tensor<8xf64>, tensor<8xf64>, "
    "tensor<8x16xf64>, tensor<16x8xf64>";

std::string gradientOf(const std::string &name) {
  return "func.func @" + name + "_vg(%x: tensor<2x4x8xf64>, %a: " +
         "tensor<8xf64>, %b: tensor<8xf64>, %c: tensor<8x24xf64>, %d: "
         "tensor<8x8xf64>, %e: tensor<8xf64>, %f: tensor<8xf64>, %g: "
         "tensor<8x16xf64>, %h: tensor<16x8xf64>) -> (" +
         kBlockGrads + ") {\n%r:10 = fuse.value_and_grad @" + name +
         "(%x, %a, %b, %c, %d, %e, %f, %g, %h) {wrt = array<i64: 0, 1, 2, 3, "
         "4, 5, 6, 7, 8>} : (" +
         kBlockArgs + ") -> (" + kBlockGrads +
         ")\nreturn %r#0, %r#1, %r#2, %r#3, %r#4, %r#5, %r#6, %r#7, %r#8, "
         "%r#9 : " +
         kBlockGrads + "\n}\n";
}

Tensor f64Uniform(llvm::ArrayRef<int64_t> shape, unsigned seed, double lo,
                  double hi) {
  Tensor f =
      randomTensor(shape, seed, static_cast<float>(lo), static_cast<float>(hi));
  Tensor d = Tensor::empty(DType::F64, shape);
  for (int64_t i = 0; i < f.numElements(); ++i)
    d.data<double>()[i] = f.data<float>()[i];
  return d;
}

TEST(Transformer, BlockMatchesComposedPrimitives) {
  std::string source = block("fused", true) + block("composed", false) +
                       gradientOf("fused") + gradientOf("composed");
  auto engine = makeEngine(source);
  std::vector<Tensor> args = {
      f64Uniform({2, 4, 8}, 1, -2, 2),  f64Uniform({8}, 2, 0.5, 1.5),
      f64Uniform({8}, 3, -0.5, 0.5),    f64Uniform({8, 24}, 4, -0.5, 0.5),
      f64Uniform({8, 8}, 5, -0.5, 0.5), f64Uniform({8}, 6, 0.5, 1.5),
      f64Uniform({8}, 7, -0.5, 0.5),    f64Uniform({8, 16}, 8, -0.5, 0.5),
      f64Uniform({16, 8}, 9, -0.5, 0.5)};
  std::vector<Tensor> fused =
      unwrap(unwrap(engine->lookup("fused_vg")).call(args));
  std::vector<Tensor> composed =
      unwrap(unwrap(engine->lookup("composed_vg")).call(args));
  ASSERT_EQ(fused.size(), composed.size());
  for (size_t r = 0; r < fused.size(); ++r)
    for (int64_t e = 0; e < fused[r].numElements(); ++e) {
      double a = fused[r].data<double>()[e], b = composed[r].data<double>()[e];
      ASSERT_NEAR(a, b, 1e-10 * (1 + std::abs(b)))
          << "result " << r << ", element " << e;
    }
}

/// Windows of T + 1 bytes of a repeating sentence: inputs and the next
/// bytes as labels.
TensorDataSource textWindows(int64_t count, int64_t t) {
  const std::string text = "the quick brown fox jumps over the lazy dog. ";
  Tensor inputs = Tensor::empty(DType::I32, {count, t});
  Tensor labels = Tensor::empty(DType::I32, {count, t});
  for (int64_t n = 0; n < count; ++n)
    for (int64_t i = 0; i < t; ++i) {
      size_t at = static_cast<size_t>(n * 7 + i);
      inputs.data<int32_t>()[n * t + i] =
          static_cast<unsigned char>(text[at % text.size()]);
      labels.data<int32_t>()[n * t + i] =
          static_cast<unsigned char>(text[(at + 1) % text.size()]);
    }
  return unwrap(TensorDataSource::create(inputs, labels, 256));
}

TEST(Transformer, GptExampleTrains) {
  auto engine = makeEngine(readExample("gpt.mlir"));
  TensorDataSource train = textWindows(480, 128);
  FitOptions options;
  options.batchSize = 8;
  options.epochs = 1;
  options.learningRate = 3e-3f;
  options.stepsPerCall = 10;
  std::vector<double> losses;
  FitCallbacks callbacks;
  callbacks.onCall = [&](const FitProgress &p) {
    losses.push_back(p.meanLoss);
  };
  FitSummary summary = unwrap(fit(*engine, train, nullptr, options, callbacks));
  ASSERT_EQ(summary.steps, 60);
  ASSERT_GE(losses.size(), 2u);
  EXPECT_GT(losses.front(), 4.0) << "the first 10 steps start near ln 256";
  EXPECT_LT(losses.back(), 2.5) << "the last 10 steps";
}

} // namespace
