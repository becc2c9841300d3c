//===- SequenceOpsTest.cpp - The transformer ops against references -------===//
//
// Each op of the sequence-model set (gather, scatter_add, slice, pad,
// concat, iota, cast, erf, gelu, leaky_relu, layer_norm) JIT-compiled at
// sizes that exercise the code generator's vector tiles and their edges,
// against plain C++ references. Tolerances: 0 for ops that move or convert
// elements; for transcendental ones the f32 approximations' error (erf's
// polynomial: 2e-6 absolute; gelu, built on it: 4e-6 relative to 1 + |x|);
// layer_norm against a double reference: 2e-5 relative to 1 + |y|.
//
//===----------------------------------------------------------------------===//

#include "TestUtils.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

using namespace fuse;
using namespace fuse::testing;

namespace {

std::vector<Tensor> call(Engine &engine, llvm::StringRef name,
                         std::vector<Tensor> args) {
  Function &f = unwrap(engine.lookup(name));
  return unwrap(f.call(args));
}

Tensor ints(llvm::ArrayRef<int64_t> shape, std::vector<int32_t> values) {
  return Tensor::fromValues<int32_t>(shape, values);
}

//===----------------------------------------------------------------------===//
// gather, scatter_add
//===----------------------------------------------------------------------===//

TEST(SequenceOps, GatherRows) {
  auto engine = makeEngine(R"mlir(
func.func @gather(%t: tensor<50x37xf32>, %i: tensor<?x7xi32>) -> tensor<?x7x37xf32> {
  %y = fuse.gather %t, %i : (tensor<50x37xf32>, tensor<?x7xi32>) -> tensor<?x7x37xf32>
  return %y : tensor<?x7x37xf32>
}
)mlir");
  Tensor table = randomTensor({50, 37}, 1);
  std::vector<int32_t> ids;
  for (int i = 0; i < 21; ++i)
    ids.push_back((i * 17 + 3) % 50);
  Tensor indices = ints({3, 7}, ids);
  Tensor out = call(*engine, "gather", {table, indices})[0];
  ASSERT_EQ(out.shape(), (llvm::ArrayRef<int64_t>{3, 7, 37}));
  for (int p = 0; p < 21; ++p)
    for (int j = 0; j < 37; ++j)
      ASSERT_EQ(out.data<float>()[p * 37 + j],
                table.data<float>()[ids[p] * 37 + j])
          << "position " << p << ", column " << j;
}

/// A computed index outside the table gives NaN, never a read outside it.
TEST(SequenceOps, GatherOutOfRangeIsNaN) {
  auto engine = makeEngine(R"mlir(
func.func @gather(%t: tensor<4x3xf32>, %i: tensor<5xi32>) -> tensor<5x3xf32> {
  %one = fuse.constant dense<1> : tensor<i32>
  %j = fuse.sub %i, %one : (tensor<5xi32>, tensor<i32>) -> tensor<5xi32>
  %y = fuse.gather %t, %j : (tensor<4x3xf32>, tensor<5xi32>) -> tensor<5x3xf32>
  return %y : tensor<5x3xf32>
}
)mlir");
  Tensor table = randomTensor({4, 3}, 2);
  Tensor indices = ints({5}, {0, 1, 4, 5, -2147483647 - 1 + 1});
  Tensor out = call(*engine, "gather", {table, indices})[0];
  for (int j = 0; j < 3; ++j) {
    EXPECT_TRUE(std::isnan(out.data<float>()[0 * 3 + j]));           // -1
    EXPECT_EQ(out.data<float>()[1 * 3 + j], table.data<float>()[j]); // 0
    EXPECT_EQ(out.data<float>()[2 * 3 + j],
              table.data<float>()[3 * 3 + j]);             // 3
    EXPECT_TRUE(std::isnan(out.data<float>()[3 * 3 + j])); // 4
    EXPECT_TRUE(std::isnan(out.data<float>()[4 * 3 + j])); // INT_MIN
  }
}

/// Indices that are an argument are checked before the call, as class
/// labels are (fuse-mark-class-labels): an error naming the argument.
TEST(SequenceOps, GatherArgumentOutOfRangeIsAnError) {
  auto engine = makeEngine(R"mlir(
func.func @gather(%t: tensor<4x3xf32>, %tokens: tensor<?xi32>) -> tensor<?x3xf32> {
  %y = fuse.gather %t, %tokens : (tensor<4x3xf32>, tensor<?xi32>) -> tensor<?x3xf32>
  return %y : tensor<?x3xf32>
}
)mlir");
  Function &f = unwrap(engine->lookup("gather"));
  std::string error =
      errorOf(f.call({randomTensor({4, 3}, 2), ints({3}, {0, 4, 1})}));
  EXPECT_NE(error.find("tokens"), std::string::npos) << error;
  EXPECT_NE(error.find("[1] is 4, outside [0, 4)"), std::string::npos) << error;
}

TEST(SequenceOps, ScatterAddSumsRepeatedRows) {
  auto engine = makeEngine(R"mlir(
func.func @scatter(%g: tensor<4x9x130xf32>, %i: tensor<4x9xi32>, %t: tensor<13x130xf32>) -> tensor<13x130xf32> {
  %one = fuse.constant dense<1> : tensor<i32>
  %j = fuse.sub %i, %one : (tensor<4x9xi32>, tensor<i32>) -> tensor<4x9xi32>
  %y = fuse.scatter_add %g, %j, %t : (tensor<4x9x130xf32>, tensor<4x9xi32>, tensor<13x130xf32>) -> tensor<13x130xf32>
  return %y : tensor<13x130xf32>
}
)mlir");
  Tensor updates = randomTensor({4, 9, 130}, 3);
  std::vector<int32_t> ids;
  std::mt19937 rng(4);
  for (int i = 0; i < 36; ++i)
    ids.push_back(static_cast<int32_t>(rng() % 16) - 1); // -1 and 13..14 drop
  // The function subtracts 1: computed indices are not checked, dropped.
  std::vector<int32_t> plusOne;
  for (int32_t id : ids)
    plusOne.push_back(id + 1);
  Tensor indices = ints({4, 9}, plusOne);
  Tensor table = Tensor::zeros(DType::F32, {13, 130});
  Tensor out = call(*engine, "scatter", {updates, indices, table})[0];
  std::vector<float> ref(13 * 130, 0.0f);
  for (int p = 0; p < 36; ++p)
    if (ids[p] >= 0 && ids[p] < 13)
      for (int j = 0; j < 130; ++j)
        ref[ids[p] * 130 + j] += updates.data<float>()[p * 130 + j];
  for (int e = 0; e < 13 * 130; ++e)
    ASSERT_EQ(out.data<float>()[e], ref[e]) << "element " << e;
}

//===----------------------------------------------------------------------===//
// slice, pad, concat, iota
//===----------------------------------------------------------------------===//

TEST(SequenceOps, SlicePadConcat) {
  auto engine = makeEngine(R"mlir(
func.func @slice(%x: tensor<?x40x66xf32>) -> tensor<?x13x33xf32> {
  %y = fuse.slice %x {offsets = array<i64: 0, 2, 0>, strides = array<i64: 1, 3, 2>} : (tensor<?x40x66xf32>) -> tensor<?x13x33xf32>
  return %y : tensor<?x13x33xf32>
}
func.func @pad(%x: tensor<3x5xf32>) -> (tensor<5x12xf32>, tensor<4x13xf32>) {
  %a = fuse.pad %x {low = array<i64: 1, 3>, high = array<i64: 1, 4>, value = -2.0 : f64} : (tensor<3x5xf32>) -> tensor<5x12xf32>
  %b = fuse.pad %x {low = array<i64: 0, 1>, high = array<i64: 1, 0>, interior = array<i64: 0, 2>} : (tensor<3x5xf32>) -> tensor<4x14xf32>
  %c = fuse.slice %b {offsets = array<i64: 0, 1>} : (tensor<4x14xf32>) -> tensor<4x13xf32>
  return %a, %c : tensor<5x12xf32>, tensor<4x13xf32>
}
func.func @concat(%a: tensor<?x3x17xf32>, %b: tensor<?x3x1xf32>, %c: tensor<?x3x40xf32>) -> tensor<?x3x58xf32> {
  %y = fuse.concat %a, %b, %c {axis = -1 : i64} : (tensor<?x3x17xf32>, tensor<?x3x1xf32>, tensor<?x3x40xf32>) -> tensor<?x3x58xf32>
  return %y : tensor<?x3x58xf32>
}
)mlir");
  Tensor x = randomTensor({2, 40, 66}, 5);
  Tensor s = call(*engine, "slice", {x})[0];
  ASSERT_EQ(s.shape(), (llvm::ArrayRef<int64_t>{2, 13, 33}));
  for (int n = 0; n < 2; ++n)
    for (int i = 0; i < 13; ++i)
      for (int j = 0; j < 33; ++j)
        ASSERT_EQ(s.data<float>()[(n * 13 + i) * 33 + j],
                  x.data<float>()[(n * 40 + 2 + 3 * i) * 66 + 2 * j]);

  Tensor p = randomTensor({3, 5}, 6);
  std::vector<Tensor> padded = call(*engine, "pad", {p});
  for (int i = 0; i < 5; ++i)
    for (int j = 0; j < 12; ++j) {
      bool inside = i >= 1 && i < 4 && j >= 3 && j < 8;
      float want = inside ? p.data<float>()[(i - 1) * 5 + (j - 3)] : -2.0f;
      ASSERT_EQ(padded[0].data<float>()[i * 12 + j], want) << i << "," << j;
    }
  // Interior padding: column 1 + 3k holds element k; the slice drops
  // column 0.
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 13; ++j) {
      int col = j + 1;
      bool inside = i < 3 && (col - 1) % 3 == 0 && (col - 1) / 3 < 5;
      float want = inside ? p.data<float>()[i * 5 + (col - 1) / 3] : 0.0f;
      ASSERT_EQ(padded[1].data<float>()[i * 13 + j], want) << i << "," << j;
    }

  Tensor a = randomTensor({2, 3, 17}, 7), b = randomTensor({2, 3, 1}, 8),
         c = randomTensor({2, 3, 40}, 9);
  Tensor cat = call(*engine, "concat", {a, b, c})[0];
  for (int r = 0; r < 6; ++r)
    for (int j = 0; j < 58; ++j) {
      float want = j < 17   ? a.data<float>()[r * 17 + j]
                   : j < 18 ? b.data<float>()[r]
                            : c.data<float>()[r * 40 + (j - 18)];
      ASSERT_EQ(cat.data<float>()[r * 58 + j], want) << r << "," << j;
    }
}

/// The heads of an attention: a prefix of the last dim (offset 0, stride
/// 1, a smaller size) split into heads and transposed, in f32 and f64.
TEST(SequenceOps, SlicedHeadsTransposed) {
  for (const char *t : {"f32", "f64"}) {
    SCOPED_TRACE(t);
    std::string source = R"mlir(
func.func @heads(%qkv: tensor<2x4x24xT>) -> (tensor<4x4x4xT>, tensor<4x4x4xT>) {
  %q = fuse.slice %qkv {offsets = array<i64: 0, 0, 0>} : (tensor<2x4x24xT>) -> tensor<2x4x8xT>
  %k = fuse.slice %qkv {offsets = array<i64: 0, 0, 8>} : (tensor<2x4x24xT>) -> tensor<2x4x8xT>
  %q4 = fuse.reshape %q : (tensor<2x4x8xT>) -> tensor<2x4x2x4xT>
  %qt = fuse.transpose %q4 {permutation = array<i64: 0, 2, 1, 3>} : (tensor<2x4x2x4xT>) -> tensor<2x2x4x4xT>
  %qh = fuse.reshape %qt : (tensor<2x2x4x4xT>) -> tensor<4x4x4xT>
  %k4 = fuse.reshape %k : (tensor<2x4x8xT>) -> tensor<2x4x2x4xT>
  %kt = fuse.transpose %k4 {permutation = array<i64: 0, 2, 1, 3>} : (tensor<2x4x2x4xT>) -> tensor<2x2x4x4xT>
  %kh = fuse.reshape %kt : (tensor<2x2x4x4xT>) -> tensor<4x4x4xT>
  return %qh, %kh : tensor<4x4x4xT>, tensor<4x4x4xT>
}
)mlir";
    for (size_t at = source.find("xT>"); at != std::string::npos;
         at = source.find("xT>", at))
      source.replace(at + 1, 1, t);
    auto engine = makeEngine(source);
    bool f64 = std::string(t) == "f64";
    Tensor x = Tensor::empty(f64 ? DType::F64 : DType::F32, {2, 4, 24});
    for (int i = 0; i < 192; ++i) {
      if (f64)
        x.data<double>()[i] = i;
      else
        x.data<float>()[i] = static_cast<float>(i);
    }
    std::vector<Tensor> out = call(*engine, "heads", {x});
    // out[b * 2 + h][t][d] = x[b][t][offset + h * 4 + d].
    for (int which = 0; which < 2; ++which)
      for (int b = 0; b < 2; ++b)
        for (int h = 0; h < 2; ++h)
          for (int i = 0; i < 4; ++i)
            for (int d = 0; d < 4; ++d) {
              int64_t e = ((b * 2 + h) * 4 + i) * 4 + d;
              double got = f64 ? out[which].data<double>()[e]
                               : out[which].data<float>()[e];
              ASSERT_EQ(got, (b * 4 + i) * 24 + which * 8 + h * 4 + d)
                  << "result " << which << " [" << b * 2 + h << ", " << i
                  << ", " << d << "]";
            }
  }
}

/// A causal mask from iota and compare, as a transformer builds it.
TEST(SequenceOps, IotaCausalMask) {
  auto engine = makeEngine(R"mlir(
func.func @mask(%x: tensor<?x20x20xf32>) -> (tensor<?x20x20xf32>, tensor<20x3xi64>) {
  %r = fuse.iota {axis = 0 : i64} : tensor<20x20xi32>
  %c = fuse.iota {axis = 1 : i64} : tensor<20x20xi32>
  %m = fuse.compare ge, %r, %c : (tensor<20x20xi32>, tensor<20x20xi32>) -> tensor<20x20xi1>
  %ninf = fuse.constant dense<0xFF800000> : tensor<f32>
  %y = fuse.select %m, %x, %ninf : (tensor<20x20xi1>, tensor<?x20x20xf32>, tensor<f32>) -> tensor<?x20x20xf32>
  %i = fuse.iota {axis = 0 : i64} : tensor<20x3xi64>
  return %y, %i : tensor<?x20x20xf32>, tensor<20x3xi64>
}
)mlir");
  Tensor x = randomTensor({2, 20, 20}, 10);
  std::vector<Tensor> out = call(*engine, "mask", {x});
  for (int n = 0; n < 2; ++n)
    for (int i = 0; i < 20; ++i)
      for (int j = 0; j < 20; ++j) {
        float got = out[0].data<float>()[(n * 20 + i) * 20 + j];
        if (i >= j)
          ASSERT_EQ(got, x.data<float>()[(n * 20 + i) * 20 + j]);
        else
          ASSERT_EQ(got, -std::numeric_limits<float>::infinity());
      }
  for (int i = 0; i < 20; ++i)
    for (int j = 0; j < 3; ++j)
      ASSERT_EQ(out[1].data<int64_t>()[i * 3 + j], i);
}

//===----------------------------------------------------------------------===//
// cast
//===----------------------------------------------------------------------===//

TEST(SequenceOps, CastFloatToIntSaturates) {
  auto engine = makeEngine(R"mlir(
func.func @f2i(%x: tensor<?xf32>) -> (tensor<?xi32>, tensor<?xi8>, tensor<?xi64>) {
  %a = fuse.cast %x : (tensor<?xf32>) -> tensor<?xi32>
  %b = fuse.cast %x : (tensor<?xf32>) -> tensor<?xi8>
  %c = fuse.cast %x : (tensor<?xf32>) -> tensor<?xi64>
  return %a, %b, %c : tensor<?xi32>, tensor<?xi8>, tensor<?xi64>
}
)mlir");
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> values = {
      0.0f,    -0.0f,         2.7f,           -2.7f, 127.9f, 128.0f,
      -128.9f, -129.0f,       3e9f,           -3e9f, inf,    -inf,
      NAN,     2147483520.0f, -2147483648.0f, 1e19f, -1e19f};
  Tensor x = Tensor::fromValues<float>({int64_t(values.size())}, values);
  std::vector<Tensor> out = call(*engine, "f2i", {x});
  auto saturate = [](float v, double lo, double hi) -> double {
    if (std::isnan(v))
      return 0;
    double t = std::trunc(static_cast<double>(v));
    return std::min(std::max(t, lo), hi);
  };
  for (size_t i = 0; i < values.size(); ++i) {
    SCOPED_TRACE(values[i]);
    EXPECT_EQ(out[0].data<int32_t>()[i],
              saturate(values[i], INT32_MIN, INT32_MAX));
    EXPECT_EQ(out[1].data<int8_t>()[i], saturate(values[i], -128, 127));
    EXPECT_EQ(
        static_cast<double>(out[2].data<int64_t>()[i]),
        saturate(values[i], -9223372036854775808.0, 9223372036854775807.0));
  }
}

TEST(SequenceOps, CastBetweenFloatsAndFromInts) {
  auto engine = makeEngine(R"mlir(
func.func @casts(%x: tensor<?xf32>, %i: tensor<?xi32>) -> (tensor<?xf32>, tensor<?xf32>, tensor<?xf32>) {
  %h = fuse.cast %x : (tensor<?xf32>) -> tensor<?xbf16>
  %back = fuse.cast %h : (tensor<?xbf16>) -> tensor<?xf32>
  %f = fuse.cast %i : (tensor<?xi32>) -> tensor<?xf32>
  %b = fuse.compare gt, %i, %i : (tensor<?xi32>, tensor<?xi32>) -> tensor<?xi1>
  %n = fuse.compare ge, %i, %i : (tensor<?xi32>, tensor<?xi32>) -> tensor<?xi1>
  %bf = fuse.cast %n : (tensor<?xi1>) -> tensor<?xf32>
  return %back, %f, %bf : tensor<?xf32>, tensor<?xf32>, tensor<?xf32>
}
)mlir");
  // bf16 keeps the top 16 bits, rounded to nearest even.
  std::vector<float> values = {1.0f,   1.00390625f, 1.01171875f, -3.14159f,
                               1e-30f, 65504.0f,    3.4e38f};
  std::vector<int32_t> ints = {0, -1, 16777217, 7, INT32_MIN, INT32_MAX, 3};
  std::vector<Tensor> out =
      call(*engine, "casts",
           {Tensor::fromValues<float>({7}, values), ::ints({7}, ints)});
  for (size_t k = 0; k < values.size(); ++k) {
    uint32_t bits;
    std::memcpy(&bits, &values[k], 4);
    uint32_t rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000u;
    float want;
    std::memcpy(&want, &rounded, 4);
    EXPECT_EQ(out[0].data<float>()[k], want) << values[k];
    EXPECT_EQ(out[1].data<float>()[k], static_cast<float>(ints[k]));
    EXPECT_EQ(out[2].data<float>()[k], 1.0f); // i1 true is 1
  }
}

/// f16 and bf16 have the same width: the cast goes through f32, rounding
/// once to nearest even; pads and gathers of empty or row-less data never
/// read.
TEST(SequenceOps, HalfCastsAndEmptyData) {
  auto engine = makeEngine(R"mlir(
func.func @halves(%x: tensor<4xf16>) -> (tensor<4xbf16>, tensor<4xf16>) {
  %b = fuse.cast %x : (tensor<4xf16>) -> tensor<4xbf16>
  %h = fuse.cast %b : (tensor<4xbf16>) -> tensor<4xf16>
  return %b, %h : tensor<4xbf16>, tensor<4xf16>
}
func.func @empty(%x: tensor<0x3xf32>) -> tensor<2x5xf32> {
  %p = fuse.pad %x {low = array<i64: 1, 0>, high = array<i64: 1, 0>, interior = array<i64: 0, 1>, value = 7.0 : f64} : (tensor<0x3xf32>) -> tensor<2x5xf32>
  return %p : tensor<2x5xf32>
}
)mlir");
  // 1, 1 + 2^-10 (f16's ulp), -2.5, 65504: bf16 keeps 8 bits of mantissa.
  Tensor x = Tensor::empty(DType::F16, {4});
  const uint16_t bits[] = {0x3C00, 0x3C01, 0xC100, 0x7BFF};
  std::memcpy(x.data(), bits, sizeof(bits));
  std::vector<Tensor> out = call(*engine, "halves", {x});
  const uint16_t bf16[] = {0x3F80, 0x3F80, 0xC020, 0x4780};
  const uint16_t back[] = {0x3C00, 0x3C00, 0xC100, 0x7C00};
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(static_cast<const uint16_t *>(out[0].data())[i], bf16[i]) << i;
    EXPECT_EQ(static_cast<const uint16_t *>(out[1].data())[i], back[i]) << i;
  }
  Tensor none = Tensor::empty(DType::F32, {0, 3});
  Tensor padded = call(*engine, "empty", {none})[0];
  for (int i = 0; i < 10; ++i)
    EXPECT_EQ(padded.data<float>()[i], 7.0f) << i;
}

//===----------------------------------------------------------------------===//
// erf, gelu, leaky_relu, layer_norm
//===----------------------------------------------------------------------===//

TEST(SequenceOps, Activations) {
  auto engine = makeEngine(R"mlir(
func.func @act(%x: tensor<?x67xf32>) -> (tensor<?x67xf32>, tensor<?x67xf32>, tensor<?x67xf32>, tensor<?x67xf32>) {
  %a = fuse.erf %x : tensor<?x67xf32>
  %b = fuse.gelu %x : tensor<?x67xf32>
  %c = fuse.gelu %x {approximate = "tanh"} : tensor<?x67xf32>
  %d = fuse.leaky_relu %x {alpha = 0.125 : f64} : tensor<?x67xf32>
  return %a, %b, %c, %d : tensor<?x67xf32>, tensor<?x67xf32>, tensor<?x67xf32>, tensor<?x67xf32>
}
)mlir");
  Tensor x = randomTensor({5, 67}, 11, -6.0f, 6.0f);
  std::vector<Tensor> out = call(*engine, "act", {x});
  for (int64_t e = 0; e < x.numElements(); ++e) {
    double v = x.data<float>()[e];
    SCOPED_TRACE(v);
    EXPECT_NEAR(out[0].data<float>()[e], std::erf(v), 2e-6);
    double exact = 0.5 * v * (1 + std::erf(v / std::sqrt(2.0)));
    EXPECT_NEAR(out[1].data<float>()[e], exact, 4e-6 * (1 + std::abs(v)));
    double tanhForm =
        0.5 * v *
        (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)));
    EXPECT_NEAR(out[2].data<float>()[e], tanhForm, 4e-6 * (1 + std::abs(v)));
    EXPECT_EQ(out[3].data<float>()[e],
              v > 0 ? x.data<float>()[e] : x.data<float>()[e] * 0.125f);
  }
}

TEST(SequenceOps, LayerNorm) {
  auto engine = makeEngine(R"mlir(
func.func @ln(%x: tensor<?x17x130xf32>, %s: tensor<130xf32>, %b: tensor<130xf32>) -> tensor<?x17x130xf32> {
  %y = fuse.layer_norm %x, %s, %b : (tensor<?x17x130xf32>, tensor<130xf32>, tensor<130xf32>) -> tensor<?x17x130xf32>
  return %y : tensor<?x17x130xf32>
}
)mlir");
  // Rows whose mean is 17 times their spread: the two-pass variance keeps
  // them accurate (one pass, E[x^2] - E[x]^2, would lose about 8 bits).
  Tensor x = randomTensor({3, 17, 130}, 12, 9.0f, 11.0f);
  Tensor s = randomTensor({130}, 13, 0.5f, 1.5f);
  Tensor b = randomTensor({130}, 14);
  Tensor y = call(*engine, "ln", {x, s, b})[0];
  for (int r = 0; r < 3 * 17; ++r) {
    const float *row = x.data<float>() + r * 130;
    double mean = 0, var = 0;
    for (int j = 0; j < 130; ++j)
      mean += row[j];
    mean /= 130;
    for (int j = 0; j < 130; ++j)
      var += (row[j] - mean) * (row[j] - mean);
    var /= 130;
    double rstd = 1 / std::sqrt(var + 1e-5);
    for (int j = 0; j < 130; ++j) {
      double want =
          (row[j] - mean) * rstd * s.data<float>()[j] + b.data<float>()[j];
      ASSERT_NEAR(y.data<float>()[r * 130 + j], want,
                  2e-5 * (1 + std::abs(want)))
          << "row " << r << ", column " << j;
    }
  }
}

} // namespace
