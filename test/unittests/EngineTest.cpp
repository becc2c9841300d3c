//===- EngineTest.cpp - The embed API: calls, caching, errors -------------===//

#include "TestUtils.h"

#include <gtest/gtest.h>

using namespace fuse;
using namespace fuse::testing;

namespace {

constexpr const char *kAffine = R"mlir(
func.func @affine(%x: tensor<?x4xf32>, %w: tensor<4x3xf32>, %b: tensor<3xf32>)
    -> tensor<?x3xf32> {
  %y = fuse.matmul %x, %w : (tensor<?x4xf32>, tensor<4x3xf32>) -> tensor<?x3xf32>
  %z = fuse.add %y, %b : (tensor<?x3xf32>, tensor<3xf32>) -> tensor<?x3xf32>
  return %z : tensor<?x3xf32>
}
)mlir";

TEST(Engine, CallsAndChecksNumbers) {
  auto engine = makeEngine(kAffine);
  Function &f = unwrap(engine->lookup("affine"));
  EXPECT_EQ(f.numArguments(), 3u);
  EXPECT_EQ(f.argumentNames()[0], "x");
  Tensor x = randomTensor({5, 4}, 1);
  Tensor w = randomTensor({4, 3}, 2);
  Tensor b = randomTensor({3}, 3);
  std::vector<Tensor> results = unwrap(f.call({x, w, b}));
  ASSERT_EQ(results.size(), 1u);
  ASSERT_EQ(results[0].shape(), llvm::ArrayRef<int64_t>({5, 3}));
  for (int64_t i = 0; i < 5; ++i)
    for (int64_t j = 0; j < 3; ++j) {
      float expected = b.data<float>()[j];
      for (int64_t k = 0; k < 4; ++k)
        expected += x.at<float>({i, k}) * w.at<float>({k, j});
      EXPECT_NEAR(results[0].at<float>({i, j}), expected, 1e-5f);
    }
}

} // namespace
