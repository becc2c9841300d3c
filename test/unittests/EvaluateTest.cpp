//===- EvaluateTest.cpp - fuse::predict and fuse::evaluate ----------------===//
//
// The seed MLP trained by fuse::fit for an epoch, its checkpoint loaded by
// fuse::loadTrainedModel: predict's probabilities against a plain C++
// forward pass in double, its labels against evaluate's accuracy, and
// evaluate's figures against fit's last evaluation and its own confusion
// matrix; errors name the tensor or the option.
//
//===----------------------------------------------------------------------===//

#include "TestUtils.h"

#include "fuse/Data/Safetensors.h"
#include "fuse/Data/TensorDataSource.h"
#include "fuse/Evaluate.h"
#include "fuse/Fit.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace fuse;
using namespace fuse::testing;

namespace {

/// `n` 28x28 images whose label L is a bright band on rows 2L+4 and 2L+5
/// over noise, as test/fusec/Inputs/make-idx.py draws them.
data::TensorDataSource bandSet(int64_t n, unsigned seed) {
  Tensor images = Tensor::uniform({n, 28, 28}, seed, 0.0f, 0.25f);
  Tensor labels = Tensor::empty(DType::I32, {n});
  for (int64_t i = 0; i < n; ++i) {
    int32_t label = int32_t((i * 7 + seed) % 10);
    labels.data<int32_t>()[i] = label;
    float *image = images.data<float>() + i * 28 * 28;
    for (int64_t p = (2 * label + 4) * 28; p < (2 * label + 6) * 28; ++p)
      image[p] += 0.7f;
  }
  return unwrap(data::TensorDataSource::create(images, labels));
}

/// The MLP's probabilities for `image` in double: softmax(relu(x w1 + b1)
/// w2 + b2), dropout off.
std::vector<double> referenceProbabilities(const Trainer &model,
                                           const float *image) {
  Tensor w1 = unwrap(model.state("w1")), b1 = unwrap(model.state("b1"));
  Tensor w2 = unwrap(model.state("w2")), b2 = unwrap(model.state("b2"));
  std::vector<double> hidden(128), logits(10);
  for (int j = 0; j < 128; ++j) {
    double sum = b1.data<float>()[j];
    for (int k = 0; k < 784; ++k)
      sum += double(image[k]) * w1.data<float>()[k * 128 + j];
    hidden[j] = std::max(sum, 0.0);
  }
  double largest = -INFINITY;
  for (int c = 0; c < 10; ++c) {
    double sum = b2.data<float>()[c];
    for (int j = 0; j < 128; ++j)
      sum += hidden[j] * w2.data<float>()[j * 10 + c];
    logits[c] = sum;
    largest = std::max(largest, sum);
  }
  double total = 0;
  for (double &l : logits)
    total += (l = std::exp(l - largest));
  for (double &l : logits)
    l /= total;
  return logits;
}

struct Trained {
  TempDir dir;
  std::string checkpoint;
  FitSummary summary;
};

/// One epoch of the seed MLP on 200 band images, tested on 100 others, at
/// a learning rate low enough that some predictions are wrong.
void trainSeedMlp(Trained &t, const data::DataSource &train,
                  const data::DataSource &test) {
  t.checkpoint = (t.dir.path + "/mlp.safetensors").str();
  FitOptions options;
  options.batchSize = 20;
  options.learningRate = 3e-4f;
  options.checkpointPath = t.checkpoint;
  auto engine = makeEngine(seedTrainingModule());
  t.summary = unwrap(fit(*engine, train, &test, options));
}

TEST(Evaluate, PredictionsAgreeWithTheReferenceAndTheEvaluation) {
  data::TensorDataSource train = bandSet(200, 1), test = bandSet(100, 2);
  Trained trained;
  trainSeedMlp(trained, train, test);
  auto engine = makeEngine(seedTrainingModule());
  std::unique_ptr<Trainer> model =
      unwrap(loadTrainedModel(*engine, "train", trained.checkpoint));

  PredictOptions options;
  options.batchSize = 32; // 3 full batches and one of 4
  Predictions p = unwrap(predict(*engine, *model, test, options));
  ASSERT_EQ(p.examples, 100);
  ASSERT_EQ(p.rowsPerExample, 1);
  ASSERT_EQ(p.classes, 10);
  ASSERT_EQ(p.labels.size(), 100u);
  Tensor images = Tensor::empty(DType::F32, {1, 28, 28});
  Tensor labels = Tensor::empty(DType::I32, {100});
  std::vector<int64_t> all(100);
  for (int64_t i = 0; i < 100; ++i)
    all[i] = i;
  ASSERT_FALSE(llvm::errorToBool(test.gather(all, nullptr, labels.data())));
  int64_t correct = 0;
  for (int64_t i = 0; i < 100; ++i) {
    ASSERT_FALSE(llvm::errorToBool(test.gather({i}, images.data(), nullptr)));
    std::vector<double> want =
        referenceProbabilities(*model, images.data<float>());
    const float *got = p.probabilities.data<float>() + i * 10;
    const float *logits = p.logits.data<float>() + i * 10;
    for (int c = 0; c < 10; ++c)
      EXPECT_NEAR(got[c], want[c], 1e-5) << "example " << i << " class " << c;
    int64_t best = 0;
    for (int c = 1; c < 10; ++c)
      if (logits[c] > logits[best])
        best = c;
    EXPECT_EQ(p.labels[i], best) << "example " << i;
    correct += p.labels[i] == labels.data<int32_t>()[i];
  }
  // Some right, some wrong: the metrics below count something.
  EXPECT_GT(correct, 20);
  EXPECT_LT(correct, 100);

  // Other batches: the same predictions.
  options.batchSize = 100;
  Predictions whole = unwrap(predict(*engine, *model, test, options));
  EXPECT_EQ(whole.labels, p.labels);

  EvaluateOptions evalOptions;
  evalOptions.topK = 3;
  Evaluation e = unwrap(evaluate(*engine, *model, test, evalOptions));
  EXPECT_EQ(e.examples, 100);
  EXPECT_EQ(e.labels, 100);
  ASSERT_TRUE(e.accuracy);
  EXPECT_EQ(*e.accuracy, double(correct) / 100);
  // fit's last evaluation: the same bits.
  const EpochSummary &last = trained.summary.history.back();
  EXPECT_EQ(e.loss, *last.testLoss);
  EXPECT_EQ(e.accuracy, last.testAccuracy);

  ASSERT_EQ(e.classes, 10);
  EXPECT_EQ(e.topK, 3);
  ASSERT_EQ(e.confusion.size(), 10u);
  std::vector<std::vector<int64_t>> confusion(10, std::vector<int64_t>(10));
  int64_t topHits = 0;
  for (int64_t i = 0; i < 100; ++i) {
    int32_t label = labels.data<int32_t>()[i];
    ++confusion[label][p.labels[i]];
    const float *logits = p.logits.data<float>() + i * 10;
    int above = 0;
    for (int c = 0; c < 10; ++c)
      above += logits[c] > logits[label];
    topHits += above < 3;
  }
  EXPECT_EQ(e.confusion, confusion);
  ASSERT_TRUE(e.topKAccuracy);
  EXPECT_EQ(*e.topKAccuracy, double(topHits) / 100);
  EXPECT_GE(*e.topKAccuracy, *e.accuracy);
  for (int c = 0; c < 10; ++c) {
    int64_t predicted = 0, actual = 0;
    for (int other = 0; other < 10; ++other) {
      predicted += confusion[other][c];
      actual += confusion[c][other];
    }
    if (predicted)
      EXPECT_EQ(e.precision[c], double(confusion[c][c]) / predicted);
    else
      EXPECT_FALSE(e.precision[c]);
    if (actual)
      EXPECT_EQ(e.recall[c], double(confusion[c][c]) / actual);
    else
      EXPECT_FALSE(e.recall[c]);
  }
  // k past the classes is all of them: always right.
  evalOptions.topK = 50;
  Evaluation wide = unwrap(evaluate(*engine, *model, test, evalOptions));
  EXPECT_EQ(wide.topK, 10);
  EXPECT_EQ(wide.topKAccuracy, 1.0);
}

TEST(Evaluate, BadInputIsAnErrorNamingTheTensorOrOption) {
  data::TensorDataSource train = bandSet(40, 3), test = bandSet(20, 4);
  Trained trained;
  trainSeedMlp(trained, train, test);
  auto engine = makeEngine(seedTrainingModule());
  std::unique_ptr<Trainer> model =
      unwrap(loadTrainedModel(*engine, "train", trained.checkpoint));

  EvaluateOptions evalOptions;
  evalOptions.topK = 0;
  EXPECT_EQ(errorOf(evaluate(*engine, *model, test, evalOptions)),
            "top-k must be at least 1 (--top-k 0)");
  evalOptions.topK = 1;
  evalOptions.batchSize = 0;
  EXPECT_EQ(errorOf(evaluate(*engine, *model, test, evalOptions)),
            "the batch size must be at least 1 (--batch-size 0)");
  PredictOptions options;
  options.batchSize = -1;
  EXPECT_EQ(errorOf(predict(*engine, *model, test, options)),
            "the batch size must be at least 1 (--batch-size -1)");

  // Weights without b2: refused, naming it.
  data::Safetensors file = unwrap(data::readSafetensors(trained.checkpoint));
  std::vector<data::NamedTensor> kept;
  for (const data::NamedTensor &t : file.tensors)
    if (t.name != "b2")
      kept.push_back(t);
  std::string partial = (trained.dir.path + "/partial.safetensors").str();
  ASSERT_FALSE(llvm::errorToBool(data::writeSafetensors(partial, kept)));
  EXPECT_EQ(errorOf(loadTrainedModel(*engine, "train", partial)),
            partial + ": not a checkpoint of this model ('train'): it has no "
                      "'b2' (tensor<10xf32>), a parameter of the model");

  // Another model's: the MLP with 5 classes.
  std::string source = seedTrainingModule();
  for (size_t at = source.find("10xf32"); at != std::string::npos;
       at = source.find("10xf32", at))
    source.replace(at, 6, "5xf32");
  auto other = makeEngine(source);
  EXPECT_EQ(errorOf(loadTrainedModel(*other, "train", trained.checkpoint)),
            trained.checkpoint +
                ": not a checkpoint of this model ('train'): 'w2' is "
                "tensor<128x10xf32> there and tensor<128x5xf32> in the model");
}

} // namespace
