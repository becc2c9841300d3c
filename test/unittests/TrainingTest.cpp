//===- TrainingTest.cpp - fuse.train_step through the engine --------------===//
//
// A fuse.train_step compiles to a step function that updates parameters and
// optimizer states in place; 20 steps of it give bitwise the same losses,
// parameters and states as the same training written by hand with
// fuse.value_and_grad and fuse.adam (new tensors every step).
//
//
// The K-step function fuse-wrap-steps derives from it runs N steps in chunks
// of K (N not a multiple of K) bitwise like N single steps.
//
//===----------------------------------------------------------------------===//

#include "TestUtils.h"

#include "fuse/Data/TensorDataSource.h"
#include "fuse/Fit.h"
#include "fuse/Trainer.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"

#include <cstring>
#include <fstream>
#include <functional>
#include <sstream>

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

using namespace fuse::testing::tiny;

TEST(Training, WrappedStepsDeclareStackedBatches) {
  auto engine = makeEngine(kModule);
  Function &steps = unwrap(engine->lookup("train_steps"));
  llvm::ArrayRef<ArgumentInfo> args = steps.arguments();
  ASSERT_EQ(args.size(), 10u);
  EXPECT_TRUE(args[6].stacked);
  EXPECT_EQ(args[6].shape, (std::vector<int64_t>{-1, -1, 6}));
  EXPECT_TRUE(args[7].stacked);
  EXPECT_FALSE(args[8].stacked);
  EXPECT_TRUE(args[9].stepCounter);
  ASSERT_EQ(steps.results().size(), 7u);
  EXPECT_TRUE(steps.results()[0].stacked);
  EXPECT_EQ(steps.results()[1].inPlaceOf, 0);
  Function &train = unwrap(engine->lookup("train"));
  EXPECT_TRUE(train.arguments()[6].perStep);
  EXPECT_FALSE(train.arguments()[8].perStep);
}

constexpr float kLearningRate = 0.05f;

/// `n` calls of the step function from `state` (updated in place); returns
/// the losses.
std::vector<float> singleSteps(Function &train, int64_t n,
                               std::vector<Tensor> &state) {
  std::vector<float> losses;
  for (int64_t step = 0; step < n; ++step) {
    std::vector<Tensor> args(state);
    llvm::append_range(args, std::vector<Tensor>{
                                 batchX(step), batchY(step),
                                 Tensor::fromValues<float>({}, {kLearningRate}),
                                 Tensor::fromValues<int64_t>({}, {step})});
    std::vector<Tensor> out = unwrap(train.call(args));
    losses.push_back(out[0].data<float>()[0]);
  }
  return losses;
}

class WrappedSteps : public ::testing::TestWithParam<int64_t> {};

// N = 67 steps, with dropout: as 67 calls of the step function, and in calls
// of K steps (the last one shorter), bitwise the same losses, parameters and
// Adam states. Every K is served by one specialization.
TEST_P(WrappedSteps, MatchSingleStepsBitwise) {
  const int64_t n = 67, k = GetParam();
  auto engine = makeEngine(kModule);
  Function &train = unwrap(engine->lookup("train"));
  Function &steps = unwrap(engine->lookup("train_steps"));
  Tensor lr = Tensor::fromValues<float>({}, {kLearningRate});

  std::vector<Tensor> single = initialState();
  std::vector<float> singleLosses = singleSteps(train, n, single);

  std::vector<Tensor> wrapped = initialState();
  std::vector<float> wrappedLosses;
  for (int64_t first = 0; first < n; first += k) {
    int64_t count = std::min(k, n - first);
    std::vector<Tensor> args(wrapped);
    llvm::append_range(
        args, std::vector<Tensor>{stack(first, count, batchX),
                                  stack(first, count, batchY), lr,
                                  Tensor::fromValues<int64_t>({}, {first})});
    std::vector<Tensor> out = unwrap(steps.call(args));
    ASSERT_EQ(out[0].shape(), llvm::ArrayRef<int64_t>(count));
    for (int64_t i = 0; i < count; ++i)
      wrappedLosses.push_back(out[0].data<float>()[i]);
  }
  ASSERT_EQ(wrappedLosses.size(), singleLosses.size());
  for (int64_t step = 0; step < n; ++step)
    EXPECT_EQ(
        std::memcmp(&wrappedLosses[step], &singleLosses[step], sizeof(float)),
        0)
        << "loss of step " << step << ": " << wrappedLosses[step] << " vs "
        << singleLosses[step];
  for (size_t j = 0; j < single.size(); ++j)
    EXPECT_EQ(std::memcmp(wrapped[j].data(), single[j].data(),
                          single[j].numElements() * sizeof(float)),
              0)
        << "tensor " << j;
  EXPECT_EQ(steps.stats().signatures, 1u);
}

INSTANTIATE_TEST_SUITE_P(K, WrappedSteps, ::testing::Values(1, 2, 3, 8, 64));

TEST(Training, WrappedStepsRejectMismatchedStepCounts) {
  auto engine = makeEngine(kModule);
  Function &steps = unwrap(engine->lookup("train_steps"));
  std::vector<Tensor> args = initialState();
  llvm::append_range(
      args, std::vector<Tensor>{stack(0, 3, batchX), stack(0, 2, batchY),
                                Tensor::fromValues<float>({}, {0.05f}),
                                Tensor::fromValues<int64_t>({}, {0})});
  EXPECT_EQ(errorOf(steps.call(args)),
            "argument 'y' (#7) of 'train_steps': dim 0 counts the steps and "
            "must be 3 like argument 'x' (#6) of 'train_steps', got 2 "
            "(tensor<2x5xi32>)");
}

// The Trainer owns parameters and states, calls the K-step function per
// chunk and reports each call's losses with their step numbers; a trainer
// fed chunks of 3 ends bitwise where 10 single steps end.
TEST(Trainer, ReportsEveryStepNumberAndMatchesSingleSteps) {
  const int64_t n = 10, k = 3;
  auto engine = makeEngine(kModule);
  std::vector<Tensor> single = initialState();
  std::vector<float> singleLosses =
      singleSteps(unwrap(engine->lookup("train")), n, single);

  std::unique_ptr<Trainer> trainer = unwrap(Trainer::create(*engine, "train"));
  EXPECT_EQ(std::vector<std::string>(trainer->stateNames().begin(),
                                     trainer->stateNames().end()),
            (std::vector<std::string>{"w", "b", "w.state0", "b.state0",
                                      "w.state1", "b.state1"}));
  EXPECT_EQ(std::vector<std::string>(trainer->batchNames().begin(),
                                     trainer->batchNames().end()),
            (std::vector<std::string>{"x", "y"}));
  std::vector<Tensor> init = initialState();
  ASSERT_FALSE(bool(trainer->setState("w", init[0])));
  ASSERT_FALSE(bool(trainer->setState("b", init[1])));
  ASSERT_FALSE(bool(
      trainer->setInput("lr", Tensor::fromValues<float>({}, {kLearningRate}))));

  std::vector<std::pair<int64_t, int64_t>> calls;
  std::vector<float> losses;
  trainer->setCallback([&](const StepsReport &report) {
    calls.emplace_back(report.firstStep, report.completedSteps());
    ASSERT_EQ(report.losses.size(), size_t(report.steps));
    llvm::append_range(losses, report.losses);
  });
  for (int64_t first = 0; first < n; first += k) {
    int64_t count = std::min(k, n - first);
    ASSERT_EQ(errorOf(trainer->trainSteps(
                  {stack(first, count, batchX), stack(first, count, batchY)})),
              "");
  }
  EXPECT_EQ(calls, (std::vector<std::pair<int64_t, int64_t>>{
                       {0, 3}, {3, 6}, {6, 9}, {9, 10}}));
  EXPECT_EQ(trainer->step(), n);
  ASSERT_EQ(losses.size(), singleLosses.size());
  EXPECT_EQ(std::memcmp(losses.data(), singleLosses.data(), n * sizeof(float)),
            0);
  for (auto [j, name] : llvm::enumerate(trainer->stateNames())) {
    Tensor state = unwrap(trainer->state(name));
    EXPECT_EQ(std::memcmp(state.data(), single[j].data(),
                          single[j].numElements() * sizeof(float)),
              0)
        << name;
  }

  // One more step on an unstacked batch continues the count.
  ASSERT_EQ(errorOf(trainer->trainStep({batchX(n), batchY(n)})), "");
  EXPECT_EQ(calls.back(), (std::pair<int64_t, int64_t>{10, 11}));
}

TEST(Trainer, ErrorsNameWhatIsWrong) {
  auto engine = makeEngine(kModule);
  EXPECT_EQ(errorOf(Trainer::create(*engine, "manual")),
            "'manual' is not a step function: there is no 'manual_steps' "
            "(fuse-wrap-steps derives one from each function with "
            "fuse.per_step arguments, as fuse.train_step makes them)");
  std::unique_ptr<Trainer> trainer = unwrap(Trainer::create(*engine, "train"));
  EXPECT_EQ(
      errorOf(trainer->trainSteps({stack(0, 2, batchX), stack(0, 2, batchY)})),
      "argument 'lr' of 'train_steps' is not set (Trainer::setInput)");
  EXPECT_EQ(errorOf(trainer->setState("w", randomTensor({4, 6}, 1))),
            "'w' is tensor<6x4xf32>, got tensor<4x6xf32>");
  EXPECT_EQ(errorOf(trainer->setState("lr", randomTensor({}, 1))),
            "'lr' is not a parameter or optimizer state of 'train_steps'");
  EXPECT_EQ(errorOf(trainer->setInput("w", randomTensor({6, 4}, 1))),
            "'w' of 'train_steps' is not an input that stays the same at "
            "every step");
  EXPECT_EQ(errorOf(trainer->trainSteps({stack(0, 2, batchX)})),
            "'train_steps' takes 2 stacked batch inputs (x, y), got 1");
  EXPECT_EQ(errorOf(trainer->trainSteps(
                {Tensor::uniform({}, 1), Tensor::uniform({}, 2)})),
            "batch input 'x' must be stacked along dim 0");
  ASSERT_FALSE(bool(
      trainer->setInput("lr", Tensor::fromValues<float>({}, {kLearningRate}))));
  // A failed call takes no step.
  EXPECT_NE(
      errorOf(trainer->trainSteps({stack(0, 2, batchX), stack(0, 3, batchY)})),
      "");
  EXPECT_EQ(trainer->step(), 0);
}

//===----------------------------------------------------------------------===//
// fuse::fit's checks of the data and the losses
//===----------------------------------------------------------------------===//

/// `n` random 28x28 images with labels `label(i)`.
data::TensorDataSource imageSet(int64_t n,
                                std::function<int32_t(int64_t)> label) {
  Tensor labels = Tensor::empty(DType::I32, {n});
  for (int64_t i = 0; i < n; ++i)
    labels.data<int32_t>()[i] = label(i);
  return unwrap(data::TensorDataSource::create(
      Tensor::uniform({n, 28, 28}, 7, 0.0f, 1.0f), labels));
}

/// The seed MLP with `classes` outputs instead of 10.
std::string seedModelWithClasses(int classes) {
  std::string source = seedTrainingModule();
  std::string from = "10xf32", to = std::to_string(classes) + "xf32";
  for (size_t at = source.find(from); at != std::string::npos;
       at = source.find(from, at + to.size()))
    source.replace(at, from.size(), to);
  return source;
}

// The data's labels must be classes of the model: a 5-class model rejects
// label 7 in either set before training, naming the label.
TEST(Fit, LabelsOutsideTheModelsClassesAreRejected) {
  auto engine = makeEngine(seedModelWithClasses(5));
  FitOptions options;
  options.batchSize = 8;
  data::TensorDataSource good = imageSet(32, [](int64_t i) { return i % 5; });
  data::TensorDataSource bad =
      imageSet(32, [](int64_t i) { return i == 19 ? 7 : i % 5; });
  EXPECT_EQ(errorOf(fit(*engine, bad, &good, options)),
            "the model does not fit the data: label #19 of the training set "
            "is 7, outside [0, 5): 'y' feeds a cross-entropy over 5 classes");
  EXPECT_EQ(errorOf(fit(*engine, good, &bad, options)),
            "the model does not fit the data: label #19 of the test set is "
            "7, outside [0, 5): 'y' feeds a cross-entropy over 5 classes");
  data::TensorDataSource negative =
      imageSet(32, [](int64_t i) { return i == 3 ? -1 : 0; });
  EXPECT_NE(errorOf(fit(*engine, negative, nullptr, options))
                .find("label #3 of the training set is -1"),
            std::string::npos);
  FitSummary summary = unwrap(fit(*engine, good, &good, options));
  EXPECT_EQ(summary.steps, 4);
}

// A diverged loss stops training with an error naming the step, before a
// checkpoint is written, unless allowed.
TEST(Fit, NonFiniteLossStopsTraining) {
  data::TensorDataSource set = imageSet(64, [](int64_t i) { return i % 10; });
  llvm::SmallString<128> dir;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("fuse-fit-nan", dir));
  std::string checkpoint = (dir + "/nan.safetensors").str();
  FitOptions options;
  options.batchSize = 8;
  options.stepsPerCall = 3;
  // Adam moves every weight by about lr per step: 1e38 overflows the logits
  // at the second step.
  options.learningRate = 1e38f;
  options.checkpointPath = checkpoint;
  auto engine = makeEngine(seedTrainingModule());
  std::string error = errorOf(fit(*engine, set, nullptr, options));
  EXPECT_NE(error.find("the loss of step 1 is "), std::string::npos) << error;
  EXPECT_NE(error.find("training stopped"), std::string::npos) << error;
  EXPECT_FALSE(llvm::sys::fs::exists(checkpoint));

  options.allowNonFiniteLoss = true;
  engine = makeEngine(seedTrainingModule());
  FitSummary summary = unwrap(fit(*engine, set, nullptr, options));
  EXPECT_EQ(summary.steps, 8);
  EXPECT_TRUE(llvm::sys::fs::exists(checkpoint));
  llvm::sys::fs::remove_directories(dir);
}

// Each step's loss is computed before its update, so the last update of an
// epoch can make the parameters non-finite while every loss was finite
// (one step per epoch here): they are checked before each checkpoint and
// at the end, naming the step, the epoch and the tensor.
TEST(Fit, NonFiniteParametersAreNeverCheckpointed) {
  data::TensorDataSource set = imageSet(8, [](int64_t i) { return i % 10; });
  llvm::SmallString<128> dir;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("fuse-fit-inf", dir));
  std::string checkpoint = (dir + "/inf.safetensors").str();
  FitOptions options;
  options.batchSize = 8;
  options.epochs = 2;
  // Adam's first step size lr / (1 - beta1) rounds to inf in f32.
  options.learningRate = 1e38f;
  options.checkpointPath = checkpoint;
  auto engine = makeEngine(seedTrainingModule());
  std::string error = errorOf(fit(*engine, set, &set, options));
  EXPECT_EQ(error.find("after step 0, the last of epoch 1/2, '"), 0u) << error;
  EXPECT_TRUE(error.find("' is nan (element #") != std::string::npos ||
              error.find("' is infinite (element #") != std::string::npos)
      << error;
  EXPECT_NE(error.find("no checkpoint of its parameters written"),
            std::string::npos)
      << error;
  EXPECT_FALSE(llvm::sys::fs::exists(checkpoint));

  options.allowNonFiniteLoss = true;
  engine = makeEngine(seedTrainingModule());
  FitSummary summary = unwrap(fit(*engine, set, &set, options));
  EXPECT_EQ(summary.steps, 2);
  EXPECT_TRUE(llvm::sys::fs::exists(checkpoint));
  llvm::sys::fs::remove_directories(dir);
}

// As torch.optim's "Invalid learning rate": a negative or non-finite one is
// an error naming the option, before anything runs.
TEST(Fit, InvalidLearningRatesAreRejected) {
  data::TensorDataSource set = imageSet(8, [](int64_t i) { return i % 10; });
  auto engine = makeEngine(seedTrainingModule());
  FitOptions options;
  options.batchSize = 8;
  options.learningRate = -0.5f;
  EXPECT_EQ(errorOf(fit(*engine, set, nullptr, options)),
            "invalid learning rate (--lr -0.5): it must be a finite number, "
            "at least 0");
  options.learningRate = std::numeric_limits<float>::infinity();
  EXPECT_EQ(errorOf(fit(*engine, set, nullptr, options)),
            "invalid learning rate (--lr inf): it must be a finite number, "
            "at least 0");
  options.learningRate = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(errorOf(fit(*engine, set, nullptr, options)),
            "invalid learning rate (--lr nan): it must be a finite number, "
            "at least 0");
  options.learningRate = 0;
  EXPECT_EQ(errorOf(fit(*engine, set, nullptr, options).takeError()), "");
}

//===----------------------------------------------------------------------===//
// Validation split and early stopping
//===----------------------------------------------------------------------===//

// As Keras' validation_split: the last N - floor(N (1 - f)) examples of a
// seeded permutation, disjoint from the training part, the same for the
// same seed; a share outside (0, 1), or one leaving a part empty, is an
// error naming the option.
TEST(Fit, ValidationSplitHoldsOutASeededShare) {
  data::TensorDataSource set = imageSet(32, [](int64_t i) { return i % 10; });
  auto a = unwrap(data::splitForValidation(set, 0.1, 5));
  auto b = unwrap(data::splitForValidation(set, 0.1, 5));
  auto c = unwrap(data::splitForValidation(set, 0.1, 6));
  EXPECT_EQ(a.first.size(), 28);
  EXPECT_EQ(a.second.size(), 4);
  EXPECT_EQ(a.second.indices(), b.second.indices());
  EXPECT_NE(a.second.indices(), c.second.indices());
  std::vector<int64_t> all(a.first.indices().begin(), a.first.indices().end());
  llvm::append_range(all, a.second.indices());
  llvm::sort(all);
  for (int64_t i = 0; i < 32; ++i)
    EXPECT_EQ(all[i], i);

  auto engine = makeEngine(seedTrainingModule());
  FitOptions options;
  options.batchSize = 8;
  for (double bad :
       {0.0, 1.0, -0.5, std::numeric_limits<double>::quiet_NaN()}) {
    options.validationSplit = bad;
    char text[32];
    std::snprintf(text, sizeof(text), "%g", bad);
    EXPECT_EQ(errorOf(fit(*engine, set, nullptr, options)),
              std::string("the validation split must be in (0, 1) "
                          "(--validation-split ") +
                  text + ")");
  }
  options.validationSplit = 0.99;
  EXPECT_EQ(errorOf(fit(*engine, set, nullptr, options)),
            "the validation split (--validation-split 0.99) of 32 examples "
            "leaves no training example");
  options.validationSplit = 1e-17;
  EXPECT_EQ(errorOf(fit(*engine, set, nullptr, options)),
            "the validation split (--validation-split 1e-17) of 32 examples "
            "leaves no validation example");

  options.validationSplit = 0.25;
  options.epochs = 2;
  FitSummary summary = unwrap(fit(*engine, set, &set, options));
  EXPECT_EQ(summary.trainExamples, 24);
  EXPECT_EQ(summary.validationExamples, 8);
  EXPECT_EQ(summary.steps, 6); // 3 batches of 8 per epoch
  ASSERT_EQ(summary.history.size(), 2u);
  for (const EpochSummary &e : summary.history) {
    EXPECT_TRUE(e.validationLoss && std::isfinite(*e.validationLoss));
    EXPECT_TRUE(e.validationAccuracy);
    EXPECT_TRUE(e.testLoss);
  }
}

TEST(Fit, EarlyStoppingOptionsAreChecked) {
  data::TensorDataSource set = imageSet(16, [](int64_t i) { return i % 10; });
  auto engine = makeEngine(seedTrainingModule());
  FitOptions options;
  options.batchSize = 8;
  options.earlyStoppingPatience = 2;
  EXPECT_EQ(errorOf(fit(*engine, set, &set, options)),
            "early stopping (--early-stopping-patience) watches the "
            "validation loss: it needs a validation set (--validation-split)");
  options.validationSplit = 0.5;
  options.earlyStoppingPatience = -1;
  EXPECT_EQ(errorOf(fit(*engine, set, nullptr, options)),
            "the early-stopping patience must not be negative "
            "(--early-stopping-patience -1)");
  options.earlyStoppingPatience.reset();
  options.restoreBestWeights = true;
  EXPECT_EQ(errorOf(fit(*engine, set, nullptr, options)),
            "--restore-best-weights restores the best epoch's weights when "
            "early stopping ends training: it needs "
            "--early-stopping-patience");
}

/// The bytes of the file at `path`.
std::string fileBytes(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

// Labels unrelated to the images: the validation loss soon stops improving
// and training stops `patience` epochs after its best, as Keras'
// EarlyStopping; with restoreBestWeights the final checkpoint is the one a
// run of just the best epochs writes, byte for byte. A resumed run must
// hold out the same share.
TEST(Fit, EarlyStoppingStopsAfterPatienceAndRestoresTheBestEpoch) {
  data::TensorDataSource set =
      imageSet(64, [](int64_t i) { return int32_t((i * 7 + i / 3) % 10); });
  TempDir dir;
  std::string stopped = (dir.path + "/stopped.safetensors").str();
  std::string reference = (dir.path + "/reference.safetensors").str();
  FitOptions options;
  options.batchSize = 8;
  options.epochs = 40;
  options.seed = 3;
  options.learningRate = 0.003f;
  options.validationSplit = 0.25;
  options.earlyStoppingPatience = 2;
  options.restoreBestWeights = true;
  options.checkpointPath = stopped;
  auto engine = makeEngine(seedTrainingModule());
  FitSummary summary = unwrap(fit(*engine, set, nullptr, options));
  ASSERT_TRUE(summary.earlyStopped);
  ASSERT_TRUE(summary.bestEpoch);
  EXPECT_TRUE(summary.restoredBestWeights);
  int64_t best = *summary.bestEpoch;
  ASSERT_EQ(int64_t(summary.history.size()), best + 1 + 2);
  for (const EpochSummary &e : summary.history) {
    if (e.epoch < best) {
      EXPECT_GT(*e.validationLoss, *summary.history[best].validationLoss);
    } else if (e.epoch > best) {
      EXPECT_GE(*e.validationLoss, *summary.history[best].validationLoss);
    }
  }
  // The trainer's step is the best epoch's: 6 steps per epoch.
  EXPECT_EQ(summary.totalSteps, (best + 1) * 6);

  options.earlyStoppingPatience.reset();
  options.restoreBestWeights = false;
  options.epochs = best + 1;
  options.checkpointPath = reference;
  engine = makeEngine(seedTrainingModule());
  unwrap(fit(*engine, set, nullptr, options));
  std::string a = fileBytes(stopped), b = fileBytes(reference);
  EXPECT_FALSE(a.empty());
  EXPECT_TRUE(a == b) << "the restored checkpoint differs from epoch "
                      << best + 1 << "'s";

  options.resumePath = reference;
  options.checkpointPath.clear();
  options.epochs = best + 2;
  options.validationSplit = 0.5;
  EXPECT_EQ(errorOf(fit(*engine, set, nullptr, options)),
            reference + ": the checkpoint was trained with validation split "
                        "0.25, not --validation-split 0.5: resuming with "
                        "another would change the training data");
  options.validationSplit.reset();
  EXPECT_EQ(errorOf(fit(*engine, set, nullptr, options)),
            reference + ": the checkpoint was trained with validation split "
                        "0.25, not none: resuming with another would change "
                        "the training data");
}

} // namespace
