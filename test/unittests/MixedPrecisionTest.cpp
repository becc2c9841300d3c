//===- MixedPrecisionTest.cpp - bf16 tensors and the bf16 policy ----------===//
//
// bf16 at the API: round-to-nearest-even conversion against APFloat on
// every kind of value, tensors converted both ways, .npy files ('<u2'
// bits), calls with bf16 arguments and the error for a wrong dtype.
//
// The bf16 policy (`precision = "bf16"` on fuse.train_step): a step's
// gradients (every matmul's, convolution's and convolution gradient's
// operands rounded to bf16, summed in f32) within bf16's tolerance of the
// f32 step's and not equal to them, a small CNN's too; the convolutions'
// gradients bitwise the f32 ones of the rounded operands; the update of
// the f32 master weights and Adam's states bitwise the f32 update of the
// same gradients; parameters and states stay f32; the K-step function,
// which carries the weights' bf16 copies written by the update, bitwise K
// single steps.
//
// IPEX's split layout (`master_weights = "split"`): the halves join back
// to every f32 bit pattern exactly; the split step's update is bitwise the
// f32 update of the gradients of the truncated weights; the K-step
// function, which carries the halves, bitwise K single steps.
//
//===----------------------------------------------------------------------===//

#include "TestUtils.h"

#include "Fuse/IR/FuseDialect.h"
#include "fuse/Compiler.h"
#include "fuse/Npy.h"
#include "fuse/Pipeline.h"
#include "fuse/Trainer.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include "llvm/ADT/APFloat.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

using namespace fuse;
using namespace fuse::testing;

namespace {

/// APFloat's bf16 rounding of `value` (nearest, ties to even): the oracle.
uint16_t referenceBF16(float value) {
  llvm::APFloat f(value);
  bool losesInfo;
  f.convert(llvm::APFloat::BFloat(), llvm::APFloat::rmNearestTiesToEven,
            &losesInfo);
  return static_cast<uint16_t>(f.bitcastToAPInt().getZExtValue());
}

float bitsToFloat(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

TEST(BF16, RoundsToNearestEven) {
  // 1 + 2^-8 lies halfway between 1 and 1 + 2^-7: ties go to the even 1.
  EXPECT_EQ(floatToBF16(1.0f), 0x3f80);
  EXPECT_EQ(floatToBF16(bitsToFloat(0x3f808000)), 0x3f80);
  // Halfway above an odd one rounds up to the even 0x3f82.
  EXPECT_EQ(floatToBF16(bitsToFloat(0x3f818000)), 0x3f82);
  // Just above halfway rounds up, just below down.
  EXPECT_EQ(floatToBF16(bitsToFloat(0x3f808001)), 0x3f81);
  EXPECT_EQ(floatToBF16(bitsToFloat(0x3f807fff)), 0x3f80);
  EXPECT_EQ(floatToBF16(-0.0f), 0x8000);
  EXPECT_EQ(floatToBF16(std::numeric_limits<float>::infinity()), 0x7f80);
  // The largest f32 is past bf16's largest finite value by more than half
  // an ulp: infinity.
  EXPECT_EQ(floatToBF16(std::numeric_limits<float>::max()), 0x7f80);
  // A NaN whose payload sits in the dropped half stays a (quiet) NaN.
  uint16_t nan = floatToBF16(bitsToFloat(0x7f800001));
  EXPECT_EQ(nan & 0x7f80, 0x7f80);
  EXPECT_NE(nan & 0x7f, 0);
  EXPECT_EQ(floatToBF16(bitsToFloat(0xff800001)) & 0x8000, 0x8000);
  EXPECT_EQ(bf16ToFloat(0x3f80), 1.0f);
  EXPECT_EQ(bf16ToFloat(0xc040), -3.0f);
}

TEST(BF16, MatchesAPFloatOnRandomBitPatterns) {
  std::mt19937 rng(7);
  for (int i = 0; i < 200000; ++i) {
    float value = bitsToFloat(rng());
    if (std::isnan(value))
      continue;
    ASSERT_EQ(floatToBF16(value), referenceBF16(value))
        << "value " << value << " bits " << std::hex << rng();
    // Exact the other way: bf16 -> f32 -> bf16 is the identity.
    uint16_t bits = floatToBF16(value);
    ASSERT_EQ(floatToBF16(bf16ToFloat(bits)), bits);
  }
}

TEST(BF16, ConvertsTensors) {
  Tensor x =
      Tensor::fromValues<float>({2, 2}, {1.0f, 3.1415926f, -2.5e-3f, 65504.0f});
  Tensor b = unwrap(convertFloatTensor(x, DType::BF16));
  ASSERT_EQ(b.dtype(), DType::BF16);
  EXPECT_EQ(b.typeString(), "tensor<2x2xbf16>");
  for (int64_t i = 0; i < 4; ++i)
    EXPECT_EQ(b.data<uint16_t>()[i], floatToBF16(x.data<float>()[i]));
  Tensor back = unwrap(convertFloatTensor(b, DType::F32));
  EXPECT_EQ(back.data<float>()[1], bf16ToFloat(floatToBF16(3.1415926f)));
  EXPECT_NE(back.data<float>()[1], 3.1415926f);
  // f64 and f16 through the same rounding.
  Tensor d = unwrap(convertFloatTensor(b, DType::F64));
  EXPECT_EQ(d.data<double>()[0], 1.0);
  Tensor h = unwrap(convertFloatTensor(x, DType::F16));
  EXPECT_EQ(h.data<uint16_t>()[0], 0x3c00);
  EXPECT_EQ(
      errorOf(convertFloatTensor(Tensor::zeros(DType::I32, {2}), DType::BF16)),
      "cannot convert a tensor of i32 to bf16: both must be float "
      "dtypes");
}

class BF16Files : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("fuse-bf16", dir_));
  }
  void TearDown() override { llvm::sys::fs::remove_directories(dir_); }
  std::string path(llvm::StringRef name) const {
    llvm::SmallString<256> p(dir_);
    llvm::sys::path::append(p, name);
    return std::string(p);
  }
  llvm::SmallString<128> dir_;
};

TEST_F(BF16Files, NpyStoresBitsAsUint16) {
  Tensor x = unwrap(convertFloatTensor(randomTensor({3, 5}, 4), DType::BF16));
  ASSERT_FALSE(bool(writeNpy(path("x.npy"), x)));
  auto file = llvm::MemoryBuffer::getFile(path("x.npy"));
  ASSERT_TRUE(bool(file));
  EXPECT_NE((*file)->getBuffer().find("'descr': '<u2'"), llvm::StringRef::npos);
  Tensor read = unwrap(readNpy(path("x.npy")));
  ASSERT_EQ(read.dtype(), DType::BF16);
  EXPECT_EQ(read.typeString(), "tensor<3x5xbf16>");
  EXPECT_EQ(std::memcmp(read.data(), x.data(), 15 * sizeof(uint16_t)), 0);
}

constexpr const char *kCastModule = R"mlir(
func.func @widen(%x: tensor<4xbf16>) -> tensor<4xf32> {
  %y = fuse.cast %x : (tensor<4xbf16>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}
func.func @narrow(%x: tensor<4xf32>) -> tensor<4xbf16> {
  %y = fuse.cast %x : (tensor<4xf32>) -> tensor<4xbf16>
  return %y : tensor<4xbf16>
}
)mlir";

TEST(BF16, CallsTakeAndReturnBF16Tensors) {
  auto engine = makeEngine(kCastModule);
  Tensor x = Tensor::fromValues<float>(
      {4}, {1.0f, bitsToFloat(0x3f808000), bitsToFloat(0x3f818000), -7.75f});
  // The compiled fuse.cast rounds as floatToBF16.
  std::vector<Tensor> narrow =
      unwrap(unwrap(engine->lookup("narrow")).call({x}));
  ASSERT_EQ(narrow[0].dtype(), DType::BF16);
  for (int64_t i = 0; i < 4; ++i)
    EXPECT_EQ(narrow[0].data<uint16_t>()[i], floatToBF16(x.data<float>()[i]));
  std::vector<Tensor> wide =
      unwrap(unwrap(engine->lookup("widen")).call({narrow[0]}));
  for (int64_t i = 0; i < 4; ++i)
    EXPECT_EQ(wide[0].data<float>()[i],
              bf16ToFloat(narrow[0].data<uint16_t>()[i]));
  // An f32 tensor where the signature says bf16 is refused.
  EXPECT_EQ(errorOf(unwrap(engine->lookup("widen")).call({x})),
            "argument 'x' (#0) of 'widen': expected tensor<4xbf16>, got dtype "
            "f32");
}

/// A two-layer classifier trained in f32 and with the bf16 policy; the
/// gradients by hand (@grads_bf16 carries the policy's mark itself) and
/// Adam's update of given gradients. tanh, not relu: a pre-activation near
/// 0 that rounding moves across it would flip a whole unit's gradient for
/// that example, a difference no tolerance on rounding describes.
constexpr const char *kPolicyModule = R"mlir(
func.func @loss(%w1: tensor<24x32xf32>, %b1: tensor<32xf32>, %w2: tensor<32x5xf32>,
                %x: tensor<?x24xf32>, %y: tensor<?xi32>) -> tensor<f32> {
  %h = fuse.matmul %x, %w1 : (tensor<?x24xf32>, tensor<24x32xf32>) -> tensor<?x32xf32>
  %hb = fuse.add %h, %b1 : (tensor<?x32xf32>, tensor<32xf32>) -> tensor<?x32xf32>
  %a = fuse.tanh %hb : tensor<?x32xf32>
  %o = fuse.matmul %a, %w2 : (tensor<?x32xf32>, tensor<32x5xf32>) -> tensor<?x5xf32>
  %l = fuse.softmax_cross_entropy %o, %y : (tensor<?x5xf32>, tensor<?xi32>) -> tensor<f32>
  return %l : tensor<f32>
}
fuse.train_step @train_f32 {loss = @loss, params = array<i64: 0, 1, 2>, optimizer = "adam"}
fuse.train_step @train_bf16 {loss = @loss, params = array<i64: 0, 1, 2>, optimizer = "adam",
                             precision = "bf16"}
fuse.train_step @train_split {loss = @loss, params = array<i64: 0, 1, 2>, optimizer = "adam",
                              precision = "bf16", master_weights = "split"}
func.func @grads_f32(%w1: tensor<24x32xf32>, %b1: tensor<32xf32>, %w2: tensor<32x5xf32>,
                     %x: tensor<?x24xf32>, %y: tensor<?xi32>)
    -> (tensor<f32>, tensor<24x32xf32>, tensor<32xf32>, tensor<32x5xf32>) {
  %l, %g1, %gb, %g2 = fuse.value_and_grad @loss(%w1, %b1, %w2, %x, %y) {wrt = array<i64: 0, 1, 2>}
      : (tensor<24x32xf32>, tensor<32xf32>, tensor<32x5xf32>, tensor<?x24xf32>, tensor<?xi32>)
      -> (tensor<f32>, tensor<24x32xf32>, tensor<32xf32>, tensor<32x5xf32>)
  return %l, %g1, %gb, %g2 : tensor<f32>, tensor<24x32xf32>, tensor<32xf32>, tensor<32x5xf32>
}
func.func @grads_bf16(%w1: tensor<24x32xf32>, %b1: tensor<32xf32>, %w2: tensor<32x5xf32>,
                      %x: tensor<?x24xf32>, %y: tensor<?xi32>)
    -> (tensor<f32>, tensor<24x32xf32>, tensor<32xf32>, tensor<32x5xf32>)
    attributes {fuse.precision = "bf16"} {
  %l, %g1, %gb, %g2 = fuse.value_and_grad @loss(%w1, %b1, %w2, %x, %y) {wrt = array<i64: 0, 1, 2>}
      : (tensor<24x32xf32>, tensor<32xf32>, tensor<32x5xf32>, tensor<?x24xf32>, tensor<?xi32>)
      -> (tensor<f32>, tensor<24x32xf32>, tensor<32xf32>, tensor<32x5xf32>)
  return %l, %g1, %gb, %g2 : tensor<f32>, tensor<24x32xf32>, tensor<32xf32>, tensor<32x5xf32>
}
func.func @update(%w1: tensor<24x32xf32>, %b1: tensor<32xf32>, %w2: tensor<32x5xf32>,
                  %m1: tensor<24x32xf32>, %mb: tensor<32xf32>, %m2: tensor<32x5xf32>,
                  %v1: tensor<24x32xf32>, %vb: tensor<32xf32>, %v2: tensor<32x5xf32>,
                  %g1: tensor<24x32xf32>, %gb: tensor<32xf32>, %g2: tensor<32x5xf32>,
                  %lr: tensor<f32>, %step: tensor<i64>)
    -> (tensor<24x32xf32>, tensor<32xf32>, tensor<32x5xf32>, tensor<24x32xf32>,
        tensor<32xf32>, tensor<32x5xf32>, tensor<24x32xf32>, tensor<32xf32>, tensor<32x5xf32>) {
  %u:9 = fuse.adam %lr, %step params(%w1, %b1, %w2 : tensor<24x32xf32>, tensor<32xf32>, tensor<32x5xf32>)
      grads(%g1, %gb, %g2 : tensor<24x32xf32>, tensor<32xf32>, tensor<32x5xf32>)
      states(%m1, %mb, %m2, %v1, %vb, %v2 : tensor<24x32xf32>, tensor<32xf32>, tensor<32x5xf32>,
             tensor<24x32xf32>, tensor<32xf32>, tensor<32x5xf32>)
      -> tensor<24x32xf32>, tensor<32xf32>, tensor<32x5xf32>, tensor<24x32xf32>,
         tensor<32xf32>, tensor<32x5xf32>, tensor<24x32xf32>, tensor<32xf32>, tensor<32x5xf32>
  return %u#0, %u#1, %u#2, %u#3, %u#4, %u#5, %u#6, %u#7, %u#8
      : tensor<24x32xf32>, tensor<32xf32>, tensor<32x5xf32>, tensor<24x32xf32>,
        tensor<32xf32>, tensor<32x5xf32>, tensor<24x32xf32>, tensor<32xf32>, tensor<32x5xf32>
}
)mlir";

constexpr int64_t kBatch = 16;

std::vector<Tensor> parameters() {
  return {randomTensor({24, 32}, 11, -0.3f, 0.3f),
          randomTensor({32}, 12, -0.1f, 0.1f),
          randomTensor({32, 5}, 13, -0.3f, 0.3f)};
}

Tensor labels() {
  Tensor y = Tensor::empty(DType::I32, {kBatch});
  for (int64_t i = 0; i < kBatch; ++i)
    y.data<int32_t>()[i] = static_cast<int32_t>((7 * i + 3) % 5);
  return y;
}

/// ||a - b|| / ||b||.
double relativeError(const Tensor &a, const Tensor &b) {
  double diff = 0, norm = 0;
  for (int64_t i = 0; i < b.numElements(); ++i) {
    double d = double(a.data<float>()[i]) - b.data<float>()[i];
    diff += d * d;
    norm += double(b.data<float>()[i]) * b.data<float>()[i];
  }
  return std::sqrt(diff / norm);
}

/// The loss (`bf16[0]`) and gradients of a bf16-policy computation against
/// the f32 one's. bf16 keeps 8 bits of mantissa: operands rounded by at most
/// 2^-9 relatively, products summed in f32. The loss and each gradient lie
/// within a few of those roundings of f32's (the backward pass rounds
/// gradients once more before each product), and are not f32's: the
/// operands were rounded.
void expectWithinBF16Tolerance(const std::vector<Tensor> &bf16,
                               const std::vector<Tensor> &f32) {
  ASSERT_EQ(bf16.size(), f32.size());
  EXPECT_NEAR(bf16[0].data<float>()[0], f32[0].data<float>()[0],
              4 * 0x1p-9 * std::abs(f32[0].data<float>()[0]));
  for (size_t i = 1; i < f32.size(); ++i) {
    double error = relativeError(bf16[i], f32[i]);
    EXPECT_LT(error, 8 * 0x1p-9) << "gradient " << i;
    EXPECT_GT(error, 0.0) << "gradient " << i;
  }
}

TEST(BF16Policy, GradientsWithinBF16ToleranceOfF32) {
  auto engine = makeEngine(kPolicyModule);
  std::vector<Tensor> args = parameters();
  args.push_back(randomTensor({kBatch, 24}, 14));
  args.push_back(labels());
  std::vector<Tensor> f32 =
      unwrap(unwrap(engine->lookup("grads_f32")).call(args));
  std::vector<Tensor> bf16 =
      unwrap(unwrap(engine->lookup("grads_bf16")).call(args));
  expectWithinBF16Tolerance(bf16, f32);
}

/// A small CNN (two 3x3 convolutions, tanh, a dense layer) with the
/// gradients of its three weights in f32 and under the bf16 policy: the
/// second convolution's input gradient, both filter gradients and the dense
/// layer's products all read bf16 operands. Tanh, not relu, for the reason
/// kPolicyModule gives.
constexpr const char *kConvPolicyModule = R"mlir(
func.func @loss(%k1: tensor<3x3x2x4xf32>, %k2: tensor<3x3x4x4xf32>, %w: tensor<64x5xf32>,
                %x: tensor<4x8x8x2xf32>, %y: tensor<4xi32>) -> tensor<f32> {
  %h1 = fuse.conv2d %x, %k1 : (tensor<4x8x8x2xf32>, tensor<3x3x2x4xf32>) -> tensor<4x6x6x4xf32>
  %a1 = fuse.tanh %h1 : tensor<4x6x6x4xf32>
  %h2 = fuse.conv2d %a1, %k2 : (tensor<4x6x6x4xf32>, tensor<3x3x4x4xf32>) -> tensor<4x4x4x4xf32>
  %a2 = fuse.tanh %h2 : tensor<4x4x4x4xf32>
  %f = fuse.reshape %a2 : (tensor<4x4x4x4xf32>) -> tensor<4x64xf32>
  %o = fuse.matmul %f, %w : (tensor<4x64xf32>, tensor<64x5xf32>) -> tensor<4x5xf32>
  %l = fuse.softmax_cross_entropy %o, %y : (tensor<4x5xf32>, tensor<4xi32>) -> tensor<f32>
  return %l : tensor<f32>
}
func.func @grads_f32(%k1: tensor<3x3x2x4xf32>, %k2: tensor<3x3x4x4xf32>, %w: tensor<64x5xf32>,
                     %x: tensor<4x8x8x2xf32>, %y: tensor<4xi32>)
    -> (tensor<f32>, tensor<3x3x2x4xf32>, tensor<3x3x4x4xf32>, tensor<64x5xf32>) {
  %l, %g1, %g2, %gw = fuse.value_and_grad @loss(%k1, %k2, %w, %x, %y) {wrt = array<i64: 0, 1, 2>}
      : (tensor<3x3x2x4xf32>, tensor<3x3x4x4xf32>, tensor<64x5xf32>, tensor<4x8x8x2xf32>, tensor<4xi32>)
      -> (tensor<f32>, tensor<3x3x2x4xf32>, tensor<3x3x4x4xf32>, tensor<64x5xf32>)
  return %l, %g1, %g2, %gw : tensor<f32>, tensor<3x3x2x4xf32>, tensor<3x3x4x4xf32>, tensor<64x5xf32>
}
func.func @grads_bf16(%k1: tensor<3x3x2x4xf32>, %k2: tensor<3x3x4x4xf32>, %w: tensor<64x5xf32>,
                      %x: tensor<4x8x8x2xf32>, %y: tensor<4xi32>)
    -> (tensor<f32>, tensor<3x3x2x4xf32>, tensor<3x3x4x4xf32>, tensor<64x5xf32>)
    attributes {fuse.precision = "bf16"} {
  %l, %g1, %g2, %gw = fuse.value_and_grad @loss(%k1, %k2, %w, %x, %y) {wrt = array<i64: 0, 1, 2>}
      : (tensor<3x3x2x4xf32>, tensor<3x3x4x4xf32>, tensor<64x5xf32>, tensor<4x8x8x2xf32>, tensor<4xi32>)
      -> (tensor<f32>, tensor<3x3x2x4xf32>, tensor<3x3x4x4xf32>, tensor<64x5xf32>)
  return %l, %g1, %g2, %gw : tensor<f32>, tensor<3x3x2x4xf32>, tensor<3x3x4x4xf32>, tensor<64x5xf32>
}
func.func @conv_grads_f32(%d: tensor<2x6x6x4xf32>, %k: tensor<3x3x3x4xf32>, %x: tensor<2x8x8x3xf32>,
                          %ds: tensor<2x4x4x4xf32>)
    -> (tensor<2x8x8x3xf32>, tensor<3x3x3x4xf32>, tensor<2x8x8x3xf32>, tensor<3x3x3x4xf32>) {
  %dx = fuse.conv2d_input_grad %d, %k, %x : (tensor<2x6x6x4xf32>, tensor<3x3x3x4xf32>, tensor<2x8x8x3xf32>) -> tensor<2x8x8x3xf32>
  %dk = fuse.conv2d_filter_grad %x, %d, %k : (tensor<2x8x8x3xf32>, tensor<2x6x6x4xf32>, tensor<3x3x3x4xf32>) -> tensor<3x3x3x4xf32>
  %sx = fuse.conv2d_input_grad %ds, %k, %x {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 0>} : (tensor<2x4x4x4xf32>, tensor<3x3x3x4xf32>, tensor<2x8x8x3xf32>) -> tensor<2x8x8x3xf32>
  %sk = fuse.conv2d_filter_grad %x, %ds, %k {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 0>} : (tensor<2x8x8x3xf32>, tensor<2x4x4x4xf32>, tensor<3x3x3x4xf32>) -> tensor<3x3x3x4xf32>
  return %dx, %dk, %sx, %sk : tensor<2x8x8x3xf32>, tensor<3x3x3x4xf32>, tensor<2x8x8x3xf32>, tensor<3x3x3x4xf32>
}
func.func @conv_grads_bf16(%d: tensor<2x6x6x4xf32>, %k: tensor<3x3x3x4xf32>, %x: tensor<2x8x8x3xf32>,
                           %ds: tensor<2x4x4x4xf32>)
    -> (tensor<2x8x8x3xf32>, tensor<3x3x3x4xf32>, tensor<2x8x8x3xf32>, tensor<3x3x3x4xf32>)
    attributes {fuse.precision = "bf16"} {
  %dx = fuse.conv2d_input_grad %d, %k, %x : (tensor<2x6x6x4xf32>, tensor<3x3x3x4xf32>, tensor<2x8x8x3xf32>) -> tensor<2x8x8x3xf32>
  %dk = fuse.conv2d_filter_grad %x, %d, %k : (tensor<2x8x8x3xf32>, tensor<2x6x6x4xf32>, tensor<3x3x3x4xf32>) -> tensor<3x3x3x4xf32>
  %sx = fuse.conv2d_input_grad %ds, %k, %x {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 0>} : (tensor<2x4x4x4xf32>, tensor<3x3x3x4xf32>, tensor<2x8x8x3xf32>) -> tensor<2x8x8x3xf32>
  %sk = fuse.conv2d_filter_grad %x, %ds, %k {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 0>} : (tensor<2x8x8x3xf32>, tensor<2x4x4x4xf32>, tensor<3x3x3x4xf32>) -> tensor<3x3x3x4xf32>
  return %dx, %dk, %sx, %sk : tensor<2x8x8x3xf32>, tensor<3x3x3x4xf32>, tensor<2x8x8x3xf32>, tensor<3x3x3x4xf32>
}
)mlir";

TEST(BF16Policy, ConvGradientsWithinBF16ToleranceOfF32) {
  auto engine = makeEngine(kConvPolicyModule);
  std::vector<Tensor> args = {randomTensor({3, 3, 2, 4}, 21, -0.4f, 0.4f),
                              randomTensor({3, 3, 4, 4}, 22, -0.3f, 0.3f),
                              randomTensor({64, 5}, 23, -0.3f, 0.3f),
                              randomTensor({4, 8, 8, 2}, 24)};
  Tensor y = Tensor::empty(DType::I32, {4});
  for (int64_t i = 0; i < 4; ++i)
    y.data<int32_t>()[i] = static_cast<int32_t>((3 * i + 1) % 5);
  args.push_back(y);
  std::vector<Tensor> f32 =
      unwrap(unwrap(engine->lookup("grads_f32")).call(args));
  std::vector<Tensor> bf16 =
      unwrap(unwrap(engine->lookup("grads_bf16")).call(args));
  // As for the matmuls: each product's operands rounded once, summed in
  // f32; the first filter's gradient comes through the second
  // convolution's input gradient, one more rounded product.
  expectWithinBF16Tolerance(bf16, f32);
}

/// `t` rounded to bf16 (nearest, ties to even) and back: the values a bf16
/// cast gives the products.
Tensor roundedToBF16(const Tensor &t) {
  return unwrap(convertFloatTensor(unwrap(convertFloatTensor(t, DType::BF16)),
                                   DType::F32));
}

TEST(BF16Policy, ConvGradientsAreTheF32GradientsOfRoundedOperands) {
  // Under the policy both gradients read bf16 casts of their two factors
  // and widen them exactly: bitwise the f32 code on the rounded values,
  // for the stride-1 forms (a convolution, a per-tap contraction) and the
  // strided ones (gathers) alike. Not the f32 result: the rounding shows.
  auto engine = makeEngine(kConvPolicyModule);
  std::vector<Tensor> args = {
      randomTensor({2, 6, 6, 4}, 31), randomTensor({3, 3, 3, 4}, 32),
      randomTensor({2, 8, 8, 3}, 33), randomTensor({2, 4, 4, 4}, 34)};
  std::vector<Tensor> rounded;
  for (const Tensor &t : args)
    rounded.push_back(roundedToBF16(t));
  std::vector<Tensor> bf16 =
      unwrap(unwrap(engine->lookup("conv_grads_bf16")).call(args));
  std::vector<Tensor> expected =
      unwrap(unwrap(engine->lookup("conv_grads_f32")).call(rounded));
  std::vector<Tensor> f32 =
      unwrap(unwrap(engine->lookup("conv_grads_f32")).call(args));
  ASSERT_EQ(bf16.size(), 4u);
  for (size_t i = 0; i < bf16.size(); ++i) {
    ASSERT_EQ(bf16[i].dtype(), DType::F32);
    EXPECT_EQ(std::memcmp(bf16[i].data(), expected[i].data(),
                          expected[i].numElements() * sizeof(float)),
              0)
        << "gradient " << i;
    EXPECT_GT(relativeError(bf16[i], f32[i]), 0.0) << "gradient " << i;
  }
}

/// Step `s` of `step` (a bf16 training step, in place) on `state` (the
/// parameters, then Adam's states) against the f32 path given gradients
/// `g` (the loss, then each parameter's): the loss and every parameter and
/// state after the step are bitwise `update`'s. `state` advances a step.
void expectStepIsTheF32Update(Function &step, Function &update,
                              std::vector<Tensor> &state,
                              const std::vector<Tensor> &g, const Tensor &x,
                              const Tensor &y, const Tensor &lr, int64_t s) {
  Tensor counter = Tensor::fromValues<int64_t>({}, {s});
  std::vector<Tensor> updateArgs;
  for (const Tensor &t : state)
    updateArgs.push_back(t.contiguousCopy());
  updateArgs.insert(updateArgs.end(), {g[1], g[2], g[3], lr, counter});
  std::vector<Tensor> expected = unwrap(update.call(updateArgs));
  std::vector<Tensor> stepArgs(state);
  stepArgs.insert(stepArgs.end(), {x, y, lr, counter});
  std::vector<Tensor> out = unwrap(step.call(stepArgs));
  EXPECT_EQ(std::memcmp(out[0].data(), g[0].data(), sizeof(float)), 0)
      << "loss of step " << s;
  for (size_t j = 0; j < 9; ++j) {
    ASSERT_EQ(out[1 + j].dtype(), DType::F32);
    EXPECT_EQ(std::memcmp(out[1 + j].data(), expected[j].data(),
                          expected[j].numElements() * sizeof(float)),
              0)
        << "tensor " << j << " after step " << s;
    state[j] = out[1 + j].contiguousCopy();
  }
}

TEST(BF16Policy, MasterWeightUpdateIsTheF32UpdateBitwise) {
  auto engine = makeEngine(kPolicyModule);
  Function &step = unwrap(engine->lookup("train_bf16"));
  // Parameters and Adam's states stay f32 in the bf16 step's signature.
  for (size_t i = 0; i < 9; ++i)
    EXPECT_EQ(step.arguments()[i].dtype, DType::F32) << "argument " << i;
  std::vector<Tensor> state = parameters();
  for (int k = 0; k < 2; ++k)
    for (const Tensor &p : parameters())
      state.push_back(Tensor::zeros(DType::F32, p.shape()));
  Function &grads = unwrap(engine->lookup("grads_bf16"));
  Function &update = unwrap(engine->lookup("update"));
  Tensor lr = Tensor::fromValues<float>({}, {0.01f});
  for (int64_t s = 0; s < 5; ++s) {
    Tensor x = randomTensor({kBatch, 24}, 100 + static_cast<unsigned>(s));
    Tensor y = labels();
    // The f32 path: the policy's gradients, then Adam in f32.
    std::vector<Tensor> g =
        unwrap(grads.call({state[0], state[1], state[2], x, y}));
    expectStepIsTheF32Update(step, update, state, g, x, y, lr, s);
  }
}

/// The top (`high`) or low 16 bits of each f32 of `t`, as bf16 or i16.
Tensor halfOf(const Tensor &t, bool high) {
  Tensor half = Tensor::empty(high ? DType::BF16 : DType::I16, t.shape());
  for (int64_t e = 0; e < t.numElements(); ++e) {
    uint32_t bits;
    std::memcpy(&bits, &t.data<float>()[e], sizeof(bits));
    half.data<uint16_t>()[e] = static_cast<uint16_t>(high ? bits >> 16 : bits);
  }
  return half;
}

/// The f32 tensor of top halves `high` and low halves `low`.
Tensor joinHalves(const Tensor &high, const Tensor &low) {
  Tensor t = Tensor::empty(DType::F32, high.shape());
  for (int64_t e = 0; e < t.numElements(); ++e) {
    uint32_t bits =
        uint32_t(high.data<uint16_t>()[e]) << 16 | low.data<uint16_t>()[e];
    std::memcpy(&t.data<float>()[e], &bits, sizeof(bits));
  }
  return t;
}

/// K steps of `name`_steps in one call bitwise K calls of `name` (losses,
/// weights and states), for K = 1, 2 and 5. A weight the K-step function
/// takes as its split halves (ArgumentInfo::lowHalf) is passed as its
/// halves and read back joined.
void expectStepsMatchSingleSteps(Engine &engine, const std::string &name) {
  Function &step = unwrap(engine.lookup(name));
  Function &steps = unwrap(engine.lookup(name + "_steps"));
  Tensor lr = Tensor::fromValues<float>({}, {0.01f});
  constexpr int64_t n = 5;
  std::vector<Tensor> xs;
  for (int64_t s = 0; s < n; ++s)
    xs.push_back(randomTensor({kBatch, 24}, 200 + static_cast<unsigned>(s)));
  auto initial = [] {
    std::vector<Tensor> state = parameters();
    for (int k = 0; k < 2; ++k)
      for (const Tensor &p : parameters())
        state.push_back(Tensor::zeros(DType::F32, p.shape()));
    return state;
  };
  std::vector<Tensor> single = initial();
  std::vector<float> singleLosses;
  for (int64_t s = 0; s < n; ++s) {
    std::vector<Tensor> args(single);
    args.insert(args.end(),
                {xs[s], labels(), lr, Tensor::fromValues<int64_t>({}, {s})});
    std::vector<Tensor> out = unwrap(step.call(args));
    singleLosses.push_back(out[0].data<float>()[0]);
    for (size_t j = 0; j < 9; ++j)
      single[j] = out[1 + j].contiguousCopy();
  }
  for (int64_t k : {1, 2, 5}) {
    std::vector<Tensor> wrapped = initial();
    std::vector<float> losses;
    for (int64_t first = 0; first < n; first += k) {
      int64_t count = std::min(k, n - first);
      Tensor x = Tensor::empty(DType::F32, {count, kBatch, 24});
      Tensor y = Tensor::empty(DType::I32, {count, kBatch});
      for (int64_t i = 0; i < count; ++i) {
        std::memcpy(x.data<float>() + i * kBatch * 24,
                    xs[first + i].data<float>(), kBatch * 24 * sizeof(float));
        std::memcpy(y.data<int32_t>() + i * kBatch, labels().data<int32_t>(),
                    kBatch * sizeof(int32_t));
      }
      std::vector<Tensor> args(wrapped);
      args.insert(args.end(),
                  {x, y, lr, Tensor::fromValues<int64_t>({}, {first})});
      args.resize(steps.numArguments());
      for (size_t a = 0; a < 9; ++a)
        if (int low = steps.arguments()[a].lowHalf; low >= 0) {
          args[low] = halfOf(wrapped[a], /*high=*/false);
          args[a] = halfOf(wrapped[a], /*high=*/true);
        }
      std::vector<Tensor> out = unwrap(steps.call(args));
      for (int64_t i = 0; i < count; ++i)
        losses.push_back(out[0].data<float>()[i]);
      for (size_t j = 0; j < 9; ++j)
        wrapped[j] = out[1 + j].contiguousCopy();
      // Results in place of arguments: the low halves' after the others.
      for (size_t j = 10; j < out.size(); ++j) {
        int high = steps.arguments()[steps.results()[j].inPlaceOf].highHalf;
        ASSERT_GE(high, 0);
        wrapped[high] = joinHalves(out[1 + high], out[j]);
      }
    }
    ASSERT_EQ(losses.size(), singleLosses.size());
    for (int64_t s = 0; s < n; ++s)
      EXPECT_EQ(std::memcmp(&losses[s], &singleLosses[s], sizeof(float)), 0)
          << "K " << k << ", loss of step " << s;
    for (size_t j = 0; j < 9; ++j)
      EXPECT_EQ(std::memcmp(wrapped[j].data(), single[j].data(),
                            single[j].numElements() * sizeof(float)),
                0)
          << "K " << k << ", tensor " << j;
  }
}

// The K-step function carries each weight's bf16 copy, written by Adam's
// update (master weights), instead of casting the weight at every step:
// K steps in one call are bitwise K calls of the single step, which casts
// at its start.
TEST(BF16Policy, CarriedCopiesMatchSingleStepsBitwise) {
  auto engine = makeEngine(kPolicyModule);
  expectStepsMatchSingleSteps(*engine, "train_bf16");
}

// Split layout: the K-step function carries each weight's two halves
// (split before the loop, joined after it) instead of the f32 weight and
// a copy; the single step splits at its start and joins at its end. Both
// agree bitwise.
TEST(SplitMasterWeights, CarriedHalvesMatchSingleStepsBitwise) {
  auto engine = makeEngine(kPolicyModule);
  // The K-step function takes the matrices as their halves (the bias,
  // which no product reads, stays f32).
  Function &steps = unwrap(engine->lookup("train_split_steps"));
  EXPECT_GE(steps.arguments()[0].lowHalf, 0);
  EXPECT_EQ(steps.arguments()[0].dtype, DType::BF16);
  EXPECT_EQ(steps.arguments()[1].lowHalf, -1);
  EXPECT_GE(steps.arguments()[2].lowHalf, 0);
  EXPECT_EQ(steps.arguments()[steps.arguments()[2].lowHalf].highHalf, 2);
  expectStepsMatchSingleSteps(*engine, "train_split");
}

// The Trainer holds a split weight as its halves between calls (no f32
// copy): its state is their join, setState splits exactly, and training
// through the Trainer is the same bits as the copy layout's f32 weights
// would give from the same halves (checked by the test above); here the
// state round-trips and moves.
TEST(SplitMasterWeights, TrainerHoldsTheHalves) {
  auto engine = makeEngine(kPolicyModule);
  auto trainer = unwrap(Trainer::create(*engine, "train_split"));
  EXPECT_EQ(std::vector<std::string>(trainer->stateNames().begin(),
                                     trainer->stateNames().begin() + 3),
            (std::vector<std::string>{"w1", "b1", "w2"}));
  for (const std::string &name : trainer->stateNames())
    EXPECT_EQ(unwrap(trainer->state(name)).dtype(), DType::F32) << name;
  std::vector<Tensor> params = parameters();
  ASSERT_FALSE(static_cast<bool>(trainer->setState("w1", params[0])));
  Tensor w1 = unwrap(trainer->state("w1"));
  EXPECT_EQ(std::memcmp(w1.data(), params[0].data(),
                        params[0].numElements() * sizeof(float)),
            0);
  // A wrong dtype names the state's f32 type.
  EXPECT_EQ(errorOf(trainer->setState("w1", halfOf(params[0], true))),
            "'w1' is tensor<24x32xf32>, got tensor<24x32xbf16>");
  ASSERT_FALSE(static_cast<bool>(
      trainer->setInput("lr", Tensor::fromValues<float>({}, {0.01f}))));
  Tensor x = randomTensor({2, kBatch, 24}, 77);
  Tensor y = Tensor::empty(DType::I32, {2, kBatch});
  for (int64_t i = 0; i < 2; ++i)
    std::memcpy(y.data<int32_t>() + i * kBatch, labels().data<int32_t>(),
                kBatch * sizeof(int32_t));
  ASSERT_FALSE(static_cast<bool>(trainer->trainSteps({x, y})));
  Tensor after = unwrap(trainer->state("w1"));
  EXPECT_NE(std::memcmp(after.data(), params[0].data(),
                        params[0].numElements() * sizeof(float)),
            0);
}

constexpr const char *kHalvesModule = R"mlir(
func.func @split(%x: tensor<4096xf32>) -> (tensor<4096xbf16>, tensor<4096xi16>) {
  %t = fuse.high_half %x : (tensor<4096xf32>) -> tensor<4096xbf16>
  %l = fuse.low_half %x : (tensor<4096xf32>) -> tensor<4096xi16>
  return %t, %l : tensor<4096xbf16>, tensor<4096xi16>
}
func.func @join(%t: tensor<4096xbf16>, %l: tensor<4096xi16>) -> tensor<4096xf32> {
  %x = fuse.join_halves %t, %l : (tensor<4096xbf16>, tensor<4096xi16>) -> tensor<4096xf32>
  return %x : tensor<4096xf32>
}
)mlir";

// join(split(w)) is w bitwise, for every kind of f32 (random bit patterns:
// normals, subnormals, zeros, infinities, NaNs with any payload); the top
// half is the high 16 bits (truncated, not rounded), the low half the low
// 16 bits.
TEST(SplitMasterWeights, HalvesJoinToTheF32ValueBitwise) {
  auto engine = makeEngine(kHalvesModule);
  Tensor x = Tensor::empty(DType::F32, {4096});
  std::mt19937 rng(28);
  auto *bits = reinterpret_cast<uint32_t *>(x.data<float>());
  for (int64_t i = 0; i < 4096; ++i)
    bits[i] = rng();
  const uint32_t special[] = {0x00000000, 0x80000000, 0x00000001, 0x807fffff,
                              0x3f80ffff, 0x7f800000, 0xff800000, 0x7f800001,
                              0x7fc00000, 0xffffffff, 0x7f7fffff, 0x3f808000};
  for (auto [i, b] : llvm::enumerate(special))
    bits[i] = b;
  std::vector<Tensor> halves =
      unwrap(unwrap(engine->lookup("split")).call({x}));
  ASSERT_EQ(halves[0].dtype(), DType::BF16);
  for (int64_t i = 0; i < 4096; ++i) {
    ASSERT_EQ(halves[0].data<uint16_t>()[i], bits[i] >> 16) << i;
    ASSERT_EQ(static_cast<uint16_t>(halves[1].data<int16_t>()[i]),
              bits[i] & 0xffff)
        << i;
  }
  std::vector<Tensor> joined =
      unwrap(unwrap(engine->lookup("join")).call({halves[0], halves[1]}));
  EXPECT_EQ(std::memcmp(joined[0].data(), x.data(), 4096 * sizeof(float)), 0);
}

/// `w` with its low 16 bits cleared: the bf16 value of its top half, the
/// weight the split layout's products read.
Tensor truncated(const Tensor &w) {
  Tensor t = w.contiguousCopy();
  auto *bits = reinterpret_cast<uint32_t *>(t.data<float>());
  for (int64_t i = 0; i < t.numElements(); ++i)
    bits[i] &= 0xffff0000u;
  return t;
}

// Split layout: the products read the weights' top halves, the f32 values
// truncated; given the gradients of those (the bf16 policy's gradients of
// the truncated weights, whose bf16 casts are exact), the update of the
// f32 master weights (joined from their halves) and of Adam's states is
// bitwise the f32 update, step after step; parameters and states stay f32
// in the signature.
TEST(SplitMasterWeights, UpdateIsTheF32UpdateBitwise) {
  auto engine = makeEngine(kPolicyModule);
  Function &step = unwrap(engine->lookup("train_split"));
  for (size_t i = 0; i < 9; ++i)
    EXPECT_EQ(step.arguments()[i].dtype, DType::F32) << "argument " << i;
  std::vector<Tensor> state = parameters();
  for (int k = 0; k < 2; ++k)
    for (const Tensor &p : parameters())
      state.push_back(Tensor::zeros(DType::F32, p.shape()));
  Function &grads = unwrap(engine->lookup("grads_bf16"));
  Function &update = unwrap(engine->lookup("update"));
  Tensor lr = Tensor::fromValues<float>({}, {0.01f});
  bool truncationMattered = false;
  for (int64_t s = 0; s < 5; ++s) {
    Tensor x = randomTensor({kBatch, 24}, 300 + static_cast<unsigned>(s));
    Tensor y = labels();
    std::vector<Tensor> g = unwrap(
        grads.call({truncated(state[0]), state[1], truncated(state[2]), x, y}));
    std::vector<Tensor> rounded =
        unwrap(grads.call({state[0], state[1], state[2], x, y}));
    truncationMattered |= std::memcmp(rounded[1].data(), g[1].data(),
                                      g[1].numElements() * sizeof(float)) != 0;
    expectStepIsTheF32Update(step, update, state, g, x, y, lr, s);
  }
  // The layouts differ: the top half is not the nearest-even copy.
  EXPECT_TRUE(truncationMattered);
}

/// A CNN with ReLUs under the bf16 policy. Its first ReLU's output is read
/// by a product, so with subnormals flushed (EngineOptions::flushDenormals,
/// the default) its mask is taken from the bf16 copy, and otherwise kept as
/// bytes from the f32 output (fuse-apply-precision-policy); the second
/// ReLU, read by a sum of its own, keeps bytes either way.
constexpr const char *kReluPolicyModule = R"mlir(
func.func @loss(%k1: tensor<3x3x2x8xf32>, %k2: tensor<3x3x8x4xf32>, %w: tensor<64x5xf32>,
                %x: tensor<4x8x8x2xf32>, %y: tensor<4xi32>) -> tensor<f32> {
  %h1 = fuse.conv2d %x, %k1 : (tensor<4x8x8x2xf32>, tensor<3x3x2x8xf32>) -> tensor<4x6x6x8xf32>
  %a1 = fuse.relu %h1 : tensor<4x6x6x8xf32>
  %h2 = fuse.conv2d %a1, %k2 : (tensor<4x6x6x8xf32>, tensor<3x3x8x4xf32>) -> tensor<4x4x4x4xf32>
  %a2 = fuse.relu %h2 : tensor<4x4x4x4xf32>
  %f = fuse.reshape %a2 : (tensor<4x4x4x4xf32>) -> tensor<4x64xf32>
  %o = fuse.matmul %f, %w : (tensor<4x64xf32>, tensor<64x5xf32>) -> tensor<4x5xf32>
  %l = fuse.softmax_cross_entropy %o, %y : (tensor<4x5xf32>, tensor<4xi32>) -> tensor<f32>
  return %l : tensor<f32>
}
func.func @grads(%k1: tensor<3x3x2x8xf32>, %k2: tensor<3x3x8x4xf32>, %w: tensor<64x5xf32>,
                 %x: tensor<4x8x8x2xf32>, %y: tensor<4xi32>)
    -> (tensor<f32>, tensor<3x3x2x8xf32>, tensor<3x3x8x4xf32>, tensor<64x5xf32>)
    attributes {fuse.precision = "bf16"} {
  %l, %g1, %g2, %gw = fuse.value_and_grad @loss(%k1, %k2, %w, %x, %y) {wrt = array<i64: 0, 1, 2>}
      : (tensor<3x3x2x8xf32>, tensor<3x3x8x4xf32>, tensor<64x5xf32>, tensor<4x8x8x2xf32>, tensor<4xi32>)
      -> (tensor<f32>, tensor<3x3x2x8xf32>, tensor<3x3x8x4xf32>, tensor<64x5xf32>)
  return %l, %g1, %g2, %gw : tensor<f32>, tensor<3x3x2x8xf32>, tensor<3x3x8x4xf32>, tensor<64x5xf32>
}
)mlir";

/// The ReLU masks kept as bytes (`fuse.materialize`) in kReluPolicyModule
/// differentiated for code run with or without subnormals flushed.
int64_t masksKeptAsBytes(bool flushed) {
  mlir::DialectRegistry registry;
  registerDialects(registry);
  mlir::MLIRContext context(registry);
  context.loadAllAvailableDialects();
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(kReluPolicyModule, &context);
  if (!module)
    return -1;
  DifferentiateOptions options;
  options.flushedDenormals = flushed;
  if (mlir::failed(differentiateModule(*module, options)))
    return -1;
  int64_t count = 0;
  module->walk(
      [&](mlir::Operation *op) { count += op->hasAttr(kMaterializeAttrName); });
  return count;
}

// The mask from the bf16 copy is the f32 output's: a normal f32 and its
// bf16 rounding have the same sign, and with subnormals flushed the output
// is 0 or normal. The two codes (one byte mask and one from the copy, or
// two byte masks) give the same bits where no output is subnormal (these
// inputs).
TEST(BF16Policy, ReluMaskFromTheCopyIsTheMaskOfTheOutput) {
  EXPECT_EQ(masksKeptAsBytes(/*flushed=*/true), 1);
  EXPECT_EQ(masksKeptAsBytes(/*flushed=*/false), 2);
  std::vector<Tensor> args = {randomTensor({3, 3, 2, 8}, 41, -0.5f, 0.5f),
                              randomTensor({3, 3, 8, 4}, 42, -0.3f, 0.3f),
                              randomTensor({64, 5}, 43, -0.3f, 0.3f),
                              randomTensor({4, 8, 8, 2}, 44)};
  Tensor y = Tensor::empty(DType::I32, {4});
  for (int64_t i = 0; i < 4; ++i)
    y.data<int32_t>()[i] = static_cast<int32_t>((3 * i + 1) % 5);
  args.push_back(y);
  std::vector<std::vector<Tensor>> results;
  for (bool flush : {true, false}) {
    EngineOptions options;
    options.flushDenormals = flush;
    auto engine = makeEngine(kReluPolicyModule, options);
    results.push_back(unwrap(unwrap(engine->lookup("grads")).call(args)));
  }
  ASSERT_EQ(results[0].size(), 4u);
  for (size_t i = 0; i < results[0].size(); ++i) {
    const Tensor &a = results[0][i], &b = results[1][i];
    ASSERT_EQ(a.numElements(), b.numElements());
    EXPECT_EQ(std::memcmp(a.data(), b.data(), a.numElements() * sizeof(float)),
              0)
        << "result " << i;
  }
}

} // namespace
