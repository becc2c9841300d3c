//===- Evaluate.cpp - Predictions and metrics of a trained model ----------===//

#include "fuse/Evaluate.h"
#include "Evaluator.h"

#include "fuse/ABI.h"
#include "fuse/Checkpoint.h"
#include "fuse/Data/Safetensors.h"

#include <cstring>

using namespace fuse;
using namespace fuse::detail;
using llvm::Error;
using llvm::Expected;

namespace {

/// Label `i` of a batch's integer labels.
int64_t labelAt(const Tensor &labels, int64_t i) {
  switch (labels.dtype()) {
  case DType::I8:
    return labels.data<int8_t>()[i];
  case DType::I16:
    return labels.data<int16_t>()[i];
  case DType::I32:
    return labels.data<int32_t>()[i];
  case DType::I64:
    return labels.data<int64_t>()[i];
  default:
    return -1;
  }
}

/// The first of the largest of `row`'s `classes` logits.
int64_t argmax(const float *row, int64_t classes) {
  int64_t best = 0;
  for (int64_t c = 1; c < classes; ++c)
    if (row[c] > row[best])
      best = c;
  return best;
}

} // namespace

Expected<std::unique_ptr<Trainer>>
fuse::loadTrainedModel(Engine &engine, llvm::StringRef step,
                       llvm::StringRef path) {
  Expected<std::unique_ptr<Trainer>> trainer = Trainer::create(engine, step);
  if (!trainer)
    return trainer.takeError();
  // Every tensor of the file must be one of the model's, of its type.
  if (Error err = loadWeights(**trainer, path))
    return std::move(err);
  // loadWeights leaves a parameter the file lacks as initialized: refuse
  // to predict with weights that were never trained. The parameters are
  // what the derived functions read of the carried tensors.
  Expected<data::Safetensors> file = data::readSafetensors(path);
  if (!file)
    return file.takeError();
  for (const std::string &derived :
       {abi::predictFunctionName(step), abi::evalFunctionName(step)}) {
    Expected<Function &> fn = engine.lookup(derived);
    if (!fn) {
      llvm::consumeError(fn.takeError());
      continue;
    }
    for (const ArgumentInfo &arg : fn->arguments())
      if (llvm::is_contained((*trainer)->stateNames(), arg.name) &&
          !file->find(arg.name))
        return llvm::createStringError(
            path + ": not a checkpoint of this model ('" + step +
            "'): it has no '" + arg.name + "' (" + arg.typeString() +
            "), a parameter of the model");
  }
  return trainer;
}

Expected<Predictions> fuse::predict(Engine &engine, const Trainer &model,
                                    const data::DataSource &data,
                                    const PredictOptions &options) {
  if (options.batchSize < 1)
    return llvm::createStringError(
        "the batch size must be at least 1 (--batch-size " +
        llvm::Twine(options.batchSize) + ")");
  if (data.size() == 0)
    return llvm::createStringError("the data has no examples");
  Expected<Predictor> predictor = Predictor::create(
      engine, model, options.stepFunction, options.batchSize, data);
  if (!predictor)
    return predictor.takeError();
  Predictions out;
  out.examples = data.size();
  Error err =
      predictor->run(model, data, [&](const PredictedBatch &b) -> Error {
        int64_t rows = b.logits->shape()[0], classes = b.logits->shape()[1];
        if (!out.logits.data()) {
          out.rowsPerExample = rows / b.count;
          out.classes = classes;
          std::vector<int64_t> shape = {out.examples * out.rowsPerExample,
                                        classes};
          for (Tensor *t : {&out.logits, &out.probabilities}) {
            Expected<Tensor> buffer =
                Tensor::allocate(DType::F32, shape, "the predictions");
            if (!buffer)
              return buffer.takeError();
            *t = std::move(*buffer);
          }
          out.labels.reserve(shape[0]);
        }
        int64_t first = b.begin * out.rowsPerExample;
        size_t bytes = size_t(rows * classes) * sizeof(float);
        std::memcpy(out.logits.data<float>() + first * classes,
                    b.logits->data<float>(), bytes);
        std::memcpy(out.probabilities.data<float>() + first * classes,
                    b.probabilities->data<float>(), bytes);
        for (int64_t r = 0; r < rows; ++r)
          out.labels.push_back(
              argmax(b.logits->data<float>() + r * classes, classes));
        return Error::success();
      });
  if (err)
    return std::move(err);
  return out;
}

Expected<Evaluation> fuse::evaluate(Engine &engine, const Trainer &model,
                                    const data::DataSource &data,
                                    const EvaluateOptions &options) {
  if (options.batchSize < 1)
    return llvm::createStringError(
        "the batch size must be at least 1 (--batch-size " +
        llvm::Twine(options.batchSize) + ")");
  if (options.topK < 1)
    return llvm::createStringError("top-k must be at least 1 (--top-k " +
                                   llvm::Twine(options.topK) + ")");
  if (data.size() == 0)
    return llvm::createStringError("the data has no examples");
  Expected<std::optional<Evaluator>> evaluator = Evaluator::create(
      engine, model, options.stepFunction, options.batchSize, data);
  if (!evaluator)
    return evaluator.takeError();
  if (!*evaluator)
    return llvm::createStringError("the model has no evaluation function '" +
                                   abi::evalFunctionName(options.stepFunction) +
                                   "': '" + options.stepFunction +
                                   "' is not a fuse.train_step");
  Expected<std::pair<double, std::optional<double>>> figures =
      (*evaluator)->run(model, data);
  if (!figures)
    return figures.takeError();
  Evaluation out;
  out.examples = data.size();
  out.labels = data.size() * data.label().numElements();
  out.loss = figures->first;
  out.accuracy = figures->second;
  // The other metrics need predictions and integer class labels; a model
  // whose loss is no cross-entropy has neither.
  if (isFloatingPoint(data.label().dtype) ||
      llvm::errorToBool(
          engine.lookup(abi::predictFunctionName(options.stepFunction))
              .takeError()))
    return out;
  // The evaluation's batches: the same specializations' shapes.
  Expected<Predictor> predictor = Predictor::create(
      engine, model, options.stepFunction, (*evaluator)->batchSize(), data);
  if (!predictor)
    return predictor.takeError();
  int64_t topHits = 0;
  Error err =
      predictor->run(model, data, [&](const PredictedBatch &b) -> Error {
        int64_t rows = b.logits->shape()[0], classes = b.logits->shape()[1];
        if (rows != b.count * data.label().numElements())
          return llvm::createStringError(
              "'" + predictor->function().name() + "' predicts " +
              llvm::Twine(rows / b.count) + " rows per example, the data has " +
              llvm::Twine(data.label().numElements()) + " labels per example");
        if (out.confusion.empty()) {
          out.classes = classes;
          out.topK = std::min(options.topK, classes);
          out.confusion.assign(classes, std::vector<int64_t>(classes, 0));
        }
        for (int64_t r = 0; r < rows; ++r) {
          const float *row = b.logits->data<float>() + r * classes;
          int64_t label = labelAt(*b.labels, r);
          // Checked against the classes before the evaluation's call.
          if (label < 0 || label >= classes)
            return llvm::createStringError(
                "label #" + llvm::Twine(b.begin + r) + " is " +
                llvm::Twine(label) + ", outside [0, " + llvm::Twine(classes) +
                ")");
          int64_t above = 0;
          for (int64_t c = 0; c < classes; ++c)
            above += row[c] > row[label];
          topHits += above < out.topK;
          ++out.confusion[label][argmax(row, classes)];
        }
        return Error::success();
      });
  if (err)
    return std::move(err);
  out.topKAccuracy = double(topHits) / double(out.labels);
  for (int64_t c = 0; c < out.classes; ++c) {
    int64_t predicted = 0, actual = 0;
    for (int64_t other = 0; other < out.classes; ++other) {
      predicted += out.confusion[other][c];
      actual += out.confusion[c][other];
    }
    int64_t right = out.confusion[c][c];
    out.precision.push_back(predicted ? std::optional(double(right) / predicted)
                                      : std::nullopt);
    out.recall.push_back(actual ? std::optional(double(right) / actual)
                                : std::nullopt);
  }
  return out;
}
