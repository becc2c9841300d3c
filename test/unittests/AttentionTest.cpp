//===- AttentionTest.cpp - fuse.attention against its composition ---------===//
//
// fuse.attention and its gradient, computed in blocks (fuse-tile-attention),
// against the same attention composed of batch_matmul, a mask and softmax:
// shapes of several blocks (causal, with the diagonal blocks masked and the
// blocks above skipped; fewer keys than queries; blocks that are not powers
// of two), in f64 to 1e-10 relative and in f32 to 1e-5. The same bits on 1
// and 2 threads, and no T x S buffer in the compiled step's workspace.
// (Finite differences: GradientTest.Attention.)
//
//===----------------------------------------------------------------------===//

#include "TestUtils.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

using namespace fuse;
using namespace fuse::testing;

namespace {

struct Case {
  int64_t heads, rows, keys, features, values;
  bool causal;
};

std::string tensorType(std::vector<int64_t> shape, const std::string &element) {
  std::string s = "tensor<";
  for (int64_t d : shape)
    s += std::to_string(d) + "x";
  return s + element + ">";
}

/// @fused and @composed: sum(w * attention(q, k, v)); and @fused_vg and
/// @composed_vg, their values and gradients with respect to q, k and v. The
/// features are 4, 16 or 64, so that the scale 1 / sqrt(D) is exact.
std::string attentionModule(const Case &c, const std::string &t) {
  std::string q = tensorType({c.heads, c.rows, c.features}, t);
  std::string k = tensorType({c.heads, c.keys, c.features}, t);
  std::string v = tensorType({c.heads, c.keys, c.values}, t);
  std::string o = tensorType({c.heads, c.rows, c.values}, t);
  std::string s = tensorType({c.heads, c.rows, c.keys}, t);
  std::string mask = tensorType({c.rows, c.keys}, "i1");
  std::string index = tensorType({c.rows, c.keys}, "i32");
  std::string scalar = "tensor<" + t + ">";
  std::string signature = "(%q: " + q + ", %k: " + k + ", %v: " + v +
                          ", %w: " + o + ") -> " + scalar + " {\n";
  std::string loss =
      "%wo = fuse.mul %o, %w : (" + o + ", " + o + ") -> " + o +
      "\n%l = fuse.reduce_sum %wo {axes = array<i64: 0, 1, 2>} : (" + o +
      ") -> " + scalar + "\nreturn %l : " + scalar + "\n}\n";
  std::string fused = "func.func @fused" + signature +
                      "%o = fuse.attention %q, %k, %v " +
                      (c.causal ? "{causal} " : "") + ": (" + q + ", " + k +
                      ", " + v + ") -> " + o + "\n" + loss;
  double scale = 1.0 / std::sqrt(static_cast<double>(c.features));
  std::string composed =
      "func.func @composed" + signature + "%c = fuse.constant dense<" +
      std::to_string(scale) + "> : " + scalar + "\n%qs = fuse.mul %q, %c : (" +
      q + ", " + scalar + ") -> " + q +
      "\n%s = fuse.batch_matmul %qs, %k {transpose_rhs} : (" + q + ", " + k +
      ") -> " + s + "\n";
  std::string scores = "%s";
  if (c.causal) {
    composed += "%r = fuse.iota {axis = 0 : i64} : " + index +
                "\n%cc = fuse.iota {axis = 1 : i64} : " + index +
                "\n%keep = fuse.compare ge, %r, %cc : (" + index + ", " +
                index + ") -> " + mask + "\n%ninf = fuse.constant dense<" +
                (t == "f64" ? "0xFFF0000000000000" : "0xFF800000") +
                "> : " + scalar + "\n%m = fuse.select %keep, %s, %ninf : (" +
                mask + ", " + s + ", " + scalar + ") -> " + s + "\n";
    scores = "%m";
  }
  composed += "%p = fuse.softmax " + scores + " : " + s +
              "\n%o = fuse.batch_matmul %p, %v : (" + s + ", " + v + ") -> " +
              o + "\n" + loss;
  std::string results = scalar + ", " + q + ", " + k + ", " + v;
  auto gradient = [&](const std::string &name) {
    return "func.func @" + name + "_vg(%q: " + q + ", %k: " + k + ", %v: " + v +
           ", %w: " + o + ") -> (" + results +
           ") {\n%g:4 = " + "fuse.value_and_grad @" + name +
           "(%q, %k, %v, %w) {wrt = " + "array<i64: 0, 1, 2>} : (" + q + ", " +
           k + ", " + v + ", " + o + ") -> (" + results +
           ")\nreturn %g#0, %g#1, %g#2, %g#3 : " + results + "\n}\n";
  };
  return fused + composed + gradient("fused") + gradient("composed");
}

Tensor uniformOf(DType dtype, std::vector<int64_t> shape, unsigned seed) {
  Tensor f = randomTensor(shape, seed, -1.5f, 1.5f);
  if (dtype == DType::F32)
    return f;
  Tensor d = Tensor::empty(DType::F64, shape);
  for (int64_t i = 0; i < f.numElements(); ++i)
    d.data<double>()[i] = f.data<float>()[i];
  return d;
}

double at(const Tensor &t, int64_t i) {
  return t.dtype() == DType::F64 ? t.data<double>()[i] : t.data<float>()[i];
}

std::vector<Tensor> argsOf(const Case &c, DType dtype) {
  return {uniformOf(dtype, {c.heads, c.rows, c.features}, 11),
          uniformOf(dtype, {c.heads, c.keys, c.features}, 12),
          uniformOf(dtype, {c.heads, c.keys, c.values}, 13),
          uniformOf(dtype, {c.heads, c.rows, c.values}, 14)};
}

const Case kCases[] = {
    {2, 128, 128, 16, 8, true},  // 2 x 2 blocks of 64, the upper one skipped
    {3, 96, 80, 4, 16, false},   // blocks of 48 rows and 40 keys
    {1, 192, 192, 64, 64, true}, // 3 x 3 blocks
    {2, 6, 6, 4, 4, true},       // one block
};

TEST(Attention, BlocksMatchComposition) {
  for (DType dtype : {DType::F64, DType::F32}) {
    bool f64 = dtype == DType::F64;
    for (const Case &c : kCases) {
      SCOPED_TRACE(::testing::Message()
                   << (f64 ? "f64" : "f32") << " heads " << c.heads << " rows "
                   << c.rows << " keys " << c.keys << " features " << c.features
                   << (c.causal ? " causal" : ""));
      auto engine = makeEngine(attentionModule(c, f64 ? "f64" : "f32"));
      std::vector<Tensor> args = argsOf(c, dtype);
      std::vector<Tensor> fused =
          unwrap(unwrap(engine->lookup("fused_vg")).call(args));
      std::vector<Tensor> composed =
          unwrap(unwrap(engine->lookup("composed_vg")).call(args));
      ASSERT_EQ(fused.size(), 4u);
      double tolerance = f64 ? 1e-10 : 1e-5;
      for (size_t r = 0; r < fused.size(); ++r) {
        // Relative to the largest element (sums of many products cancel).
        double largest = 0;
        for (int64_t e = 0; e < composed[r].numElements(); ++e)
          largest = std::max(largest, std::abs(at(composed[r], e)));
        for (int64_t e = 0; e < fused[r].numElements(); ++e)
          ASSERT_NEAR(at(fused[r], e), at(composed[r], e),
                      tolerance * (1 + largest))
              << "result " << r << ", element " << e;
      }
    }
  }
}

TEST(Attention, SameBitsOnAnyThreadCount) {
  const Case c = {8, 128, 128, 16, 16, true};
  std::string source = attentionModule(c, "f32");
  std::vector<Tensor> args = argsOf(c, DType::F32);
  std::vector<std::vector<Tensor>> runs;
  for (unsigned threads : {1u, 2u, 3u}) {
    EngineOptions options;
    options.diskCache = false;
    options.threads = threads;
    auto engine = unwrap(Engine::create(options));
    ASSERT_EQ(errorOf(engine->loadString(source)), "");
    runs.push_back(unwrap(unwrap(engine->lookup("fused_vg")).call(args)));
  }
  for (size_t run = 1; run < runs.size(); ++run)
    for (size_t r = 0; r < runs[0].size(); ++r)
      ASSERT_EQ(std::memcmp(runs[0][r].data<float>(),
                            runs[run][r].data<float>(),
                            runs[0][r].numElements() * sizeof(float)),
                0)
          << "result " << r << " on " << run + 1 << " threads";
}

/// The forward and backward pass of 8 heads of T = 512 keep no T x T
/// buffer: the workspace holds less than one head's scores (1 MiB), while
/// the composition holds several of all 8 heads' (8 MiB each).
TEST(Attention, NoScoresInTheWorkspace) {
  const Case c = {8, 512, 512, 16, 16, true};
  auto engine = makeEngine(attentionModule(c, "f32"));
  std::vector<Tensor> args = argsOf(c, DType::F32);
  Function &fused = unwrap(engine->lookup("fused_vg"));
  Function &composed = unwrap(engine->lookup("composed_vg"));
  ASSERT_EQ(errorOf(fused.prepare(args)), "");
  ASSERT_EQ(errorOf(composed.prepare(args)), "");
  uint64_t scoresOfOneHead = c.rows * c.keys * sizeof(float);
  EXPECT_LT(fused.stats().workspaceBytes, scoresOfOneHead);
  EXPECT_GT(composed.stats().workspaceBytes, 8 * scoresOfOneHead);
}

} // namespace
