//===- TrainingTest.cpp - fuse.train_step through the engine --------------===//
//
// A fuse.train_step compiles to a step function that updates parameters and
// optimizer states in place; 20 steps of it give bitwise the same losses,
// parameters and states as the same training written by hand with
// fuse.value_and_grad and fuse.adam (new tensors every step).
//
//===----------------------------------------------------------------------===//

#include "TestUtils.h"

#include <cstring>

using namespace fuse;
using namespace fuse::testing;

namespace {

constexpr const char *kModule = R"mlir(
func.func @loss(%w: tensor<6x4xf32>, %b: tensor<4xf32>, %x: tensor<?x6xf32>,
                %y: tensor<?xi32>, %step: tensor<i64>) -> tensor<f32> {
  %h = fuse.matmul %x, %w : (tensor<?x6xf32>, tensor<6x4xf32>) -> tensor<?x4xf32>
  %o = fuse.add %h, %b : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  %d = fuse.dropout %o, %step {rate = 0.25 : f32, seed = 3 : i64} : tensor<?x4xf32>
  %l = fuse.softmax_cross_entropy %d, %y : (tensor<?x4xf32>, tensor<?xi32>) -> tensor<f32>
  return %l : tensor<f32>
}
fuse.train_step @train {loss = @loss, params = array<i64: 0, 1>, optimizer = "adam",
                        step_arg = 4, hyperparameters = {weight_decay = 0.01 : f64}}
func.func @manual(%w: tensor<6x4xf32>, %b: tensor<4xf32>, %mw: tensor<6x4xf32>,
                  %mb: tensor<4xf32>, %vw: tensor<6x4xf32>, %vb: tensor<4xf32>,
                  %x: tensor<?x6xf32>, %y: tensor<?xi32>, %lr: tensor<f32>,
                  %step: tensor<i64>)
    -> (tensor<f32>, tensor<6x4xf32>, tensor<4xf32>, tensor<6x4xf32>,
        tensor<4xf32>, tensor<6x4xf32>, tensor<4xf32>) {
  %l, %gw, %gb = fuse.value_and_grad @loss(%w, %b, %x, %y, %step) {wrt = array<i64: 0, 1>}
      : (tensor<6x4xf32>, tensor<4xf32>, tensor<?x6xf32>, tensor<?xi32>, tensor<i64>)
      -> (tensor<f32>, tensor<6x4xf32>, tensor<4xf32>)
  %u:6 = fuse.adam %lr, %step params(%w, %b : tensor<6x4xf32>, tensor<4xf32>)
      grads(%gw, %gb : tensor<6x4xf32>, tensor<4xf32>)
      states(%mw, %mb, %vw, %vb : tensor<6x4xf32>, tensor<4xf32>, tensor<6x4xf32>, tensor<4xf32>)
      {weight_decay = 0.01 : f64}
      -> tensor<6x4xf32>, tensor<4xf32>, tensor<6x4xf32>, tensor<4xf32>, tensor<6x4xf32>, tensor<4xf32>
  return %l, %u#0, %u#1, %u#2, %u#3, %u#4, %u#5
      : tensor<f32>, tensor<6x4xf32>, tensor<4xf32>, tensor<6x4xf32>,
        tensor<4xf32>, tensor<6x4xf32>, tensor<4xf32>
}
)mlir";

TEST(Training, TrainStepSignatureNamesItsArguments) {
  auto engine = makeEngine(kModule);
  Function &train = unwrap(engine->lookup("train"));
  std::vector<std::string> names(train.argumentNames().begin(),
                                 train.argumentNames().end());
  EXPECT_EQ(names, (std::vector<std::string>{"w", "b", "w.state0", "b.state0",
                                             "w.state1", "b.state1", "x", "y",
                                             "lr", "step"}));
  EXPECT_EQ(train.numResults(), 7u);
}

TEST(Training, TrainStepMatchesHandWrittenStepsBitwise) {
  auto engine = makeEngine(kModule);
  Function &train = unwrap(engine->lookup("train"));
  Function &manual = unwrap(engine->lookup("manual"));
  const int64_t batch = 5;
  // Parameters, then m and v of each: the same layout in both functions.
  std::vector<Tensor> inPlace = {
      randomTensor({6, 4}, 1),           randomTensor({4}, 2),
      Tensor::zeros(DType::F32, {6, 4}), Tensor::zeros(DType::F32, {4}),
      Tensor::zeros(DType::F32, {6, 4}), Tensor::zeros(DType::F32, {4})};
  std::vector<Tensor> fresh;
  for (const Tensor &t : inPlace)
    fresh.push_back(t.contiguousCopy());
  for (int64_t step = 0; step < 20; ++step) {
    Tensor x = randomTensor({batch, 6}, 100 + step);
    Tensor y = Tensor::empty(DType::I32, {batch});
    for (int64_t i = 0; i < batch; ++i)
      y.data<int32_t>()[i] = (step + i) % 4;
    std::vector<Tensor> tail = {x, y, Tensor::fromValues<float>({}, {0.05f}),
                                Tensor::fromValues<int64_t>({}, {step})};
    std::vector<Tensor> args(inPlace);
    args.insert(args.end(), tail.begin(), tail.end());
    std::vector<Tensor> results(7);
    results[0] = Tensor::zeros(DType::F32, {});
    ASSERT_FALSE(bool(train.callInto(args, results)));

    std::vector<Tensor> manualArgs(fresh);
    manualArgs.insert(manualArgs.end(), tail.begin(), tail.end());
    std::vector<Tensor> out = unwrap(manual.call(manualArgs));
    EXPECT_EQ(std::memcmp(results[0].data(), out[0].data(), sizeof(float)), 0)
        << "loss of step " << step;
    for (size_t j = 0; j < fresh.size(); ++j)
      fresh[j] = out[1 + j];
  }
  for (size_t j = 0; j < fresh.size(); ++j)
    EXPECT_EQ(std::memcmp(inPlace[j].data(), fresh[j].data(),
                          fresh[j].numElements() * sizeof(float)),
              0)
        << "tensor " << j;
}

} // namespace
