//===- Evaluator.cpp - Running a model's derived functions on data --------===//

#include "Evaluator.h"

#include "fuse/ABI.h"
#include "fuse/Fit.h"

#include <numeric>

using namespace fuse;
using namespace fuse::detail;
using llvm::Error;
using llvm::Expected;

/// Matches `batchArgs` (a step's or an evaluation's batch inputs, whose
/// leading `lead` dims are steps and examples) to the data source.
Expected<BatchLayout> detail::matchData(llvm::StringRef function,
                                        llvm::ArrayRef<ArgumentInfo> batchArgs,
                                        size_t lead,
                                        const data::DataSource &data,
                                        int64_t batchSize, bool labelled) {
  std::string inputs;
  for (const ArgumentInfo &arg : batchArgs)
    inputs += (inputs.empty() ? "" : ", ") + arg.name + ": " + arg.typeString();
  auto mismatch = [&](const llvm::Twine &why) {
    return llvm::createStringError("the model does not fit the data: '" +
                                   function + "' takes the batch (" + inputs +
                                   "); " + why);
  };
  if (batchArgs.size() != (labelled ? 2 : 1))
    return mismatch(labelled ? "it needs two: inputs and labels"
                             : "it needs one: the inputs");
  BatchLayout layout;
  if (labelled) {
    layout.labels = labelsArgument(batchArgs[0], batchArgs[1]);
    layout.inputs = 1 - layout.labels;
  }

  // The model's argument takes an example of `spec` in any static shape
  // with as many elements.
  auto match = [&](const ArgumentInfo &arg, const data::TensorSpec &spec,
                   bool isInput, std::vector<int64_t> &shape) -> Error {
    if (arg.dtype != spec.dtype)
      return mismatch(llvm::Twine("the ") + (isInput ? "inputs" : "labels") +
                      " are " + dtypeName(spec.dtype) + ", '" + arg.name +
                      "' is " + dtypeName(arg.dtype));
    if (arg.shape.size() < lead)
      return mismatch("'" + arg.name + "' has no batch dim");
    llvm::ArrayRef<int64_t> modelExample =
        llvm::ArrayRef(arg.shape).drop_front(lead);
    int64_t modelElements = 1;
    for (int64_t d : modelExample) {
      if (d < 0) {
        modelElements = -1;
        break;
      }
      modelElements *= d;
    }
    int64_t exampleElements = spec.numElements();
    // Dynamic dims take the data's, where the ranks match and the static
    // dims agree: `?x?xi32` tokens take windows of T tokens as T.
    bool takesDataShape =
        modelElements < 0 && modelExample.size() == spec.shape.size() &&
        llvm::all_of(llvm::zip_equal(modelExample, spec.shape), [](auto dims) {
          auto [model, data] = dims;
          return model < 0 || model == data;
        });
    if (!takesDataShape && modelElements != exampleElements) {
      std::string dataShape;
      for (int64_t d : spec.shape)
        dataShape += (dataShape.empty() ? "" : "x") + std::to_string(d);
      return mismatch(
          llvm::Twine(isInput ? "an example of the data is "
                              : "an example's labels are ") +
          (dataShape.empty() ? "a scalar" : dataShape) + " (" +
          llvm::Twine(exampleElements) + " values), '" + arg.name + "' wants " +
          (modelElements < 0 ? std::string("a dynamic shape")
                             : std::to_string(modelElements) + " values"));
    }
    int64_t modelBatch = arg.shape[lead - 1];
    if (modelBatch >= 0 && modelBatch != batchSize)
      return mismatch("its batch dim is " + llvm::Twine(modelBatch) +
                      ", the batch size " + llvm::Twine(batchSize));
    if (takesDataShape)
      shape.assign(spec.shape.begin(), spec.shape.end());
    else
      shape.assign(modelExample.begin(), modelExample.end());
    return Error::success();
  };
  if (Error err = match(batchArgs[layout.inputs], data.input(),
                        /*isInput=*/true, layout.inputShape))
    return std::move(err);
  if (labelled)
    if (Error err = match(batchArgs[layout.labels], data.label(),
                          /*isInput=*/false, layout.labelShape))
      return std::move(err);
  return layout;
}

/// Checks the labels of the data source `what` against the class count of
/// the model's labels argument `arg` (none: nothing to check).
Error detail::checkLabels(const data::DataSource &data, const ArgumentInfo &arg,
                          llvm::StringRef what) {
  if (arg.classes <= 0)
    return Error::success();
  // A source that bounds its labels within the model's classes (an IDX
  // split checked on loading) needs no second scan.
  if (std::optional<int64_t> bound = data.numClasses();
      bound && *bound <= arg.classes)
    return Error::success();
  Expected<std::optional<BadLabel>> bad = data.findLabelOutside(arg.classes);
  if (!bad)
    return bad.takeError();
  if (!*bad)
    return Error::success();
  return llvm::createStringError(
      "the model does not fit the data: label #" + llvm::Twine((*bad)->index) +
      " of the " + what + " set is " + llvm::Twine((*bad)->value) +
      ", outside [0, " + llvm::Twine(arg.classes) + "): '" + arg.name +
      "' feeds a cross-entropy over " + llvm::Twine(arg.classes) + " classes");
}

/// A view of the contiguous `t` as `lead` dims then `example`.
Tensor detail::reshaped(const Tensor &t, llvm::ArrayRef<int64_t> lead,
                        llvm::ArrayRef<int64_t> example) {
  llvm::SmallVector<int64_t, 6> shape(lead.begin(), lead.end());
  shape.append(example.begin(), example.end());
  return Tensor::view(t.data(), t.dtype(), shape);
}

/// A zeroed buffer of `count` examples of `spec`.
Expected<Tensor> detail::examples(const data::TensorSpec &spec, int64_t count,
                                  const llvm::Twine &what) {
  llvm::SmallVector<int64_t, 6> shape = {count};
  shape.append(spec.shape.begin(), spec.shape.end());
  return Tensor::allocate(spec.dtype, shape, what, /*zeroed=*/true);
}

int64_t detail::evaluationBatch(int64_t wanted, int64_t n) {
  // Batches divide the set where they can: one specialization.
  int64_t batch =
      std::min<int64_t>(std::max<int64_t>(wanted, 1), std::max<int64_t>(n, 1));
  for (int64_t b = batch; b >= batch / 2 && b > 0; --b)
    if (n % b == 0)
      return b;
  return batch;
}

//===----------------------------------------------------------------------===//
// Evaluator
//===----------------------------------------------------------------------===//

Expected<std::optional<Evaluator>>
Evaluator::create(Engine &engine, const Trainer &trainer, llvm::StringRef step,
                  int64_t batchSize, const data::DataSource &test,
                  llvm::StringRef what) {
  Expected<Function &> eval = engine.lookup(abi::evalFunctionName(step));
  if (!eval) {
    // A hand-written step function has none: no evaluation.
    llvm::consumeError(eval.takeError());
    return std::nullopt;
  }
  Evaluator e(*eval);
  std::vector<ArgumentInfo> batchArgs;
  for (auto [i, arg] : llvm::enumerate(eval->arguments())) {
    if (llvm::is_contained(trainer.stateNames(), arg.name)) {
      e.stateArgs_.push_back({i, arg.name});
      continue;
    }
    e.batchArgs_.push_back(i);
    batchArgs.push_back(arg);
  }
  e.batch_ = evaluationBatch(batchSize, test.size());
  Expected<BatchLayout> layout =
      matchData(eval->name(), batchArgs, 1, test, e.batch_);
  if (!layout)
    return layout.takeError();
  if (Error err = checkLabels(test, batchArgs[layout->labels], what))
    return std::move(err);
  e.layout_ = std::move(*layout);
  // A batch is gathered from the source into these, then evaluated.
  Expected<Tensor> inputs =
      examples(test.input(), e.batch_, "the evaluation batch's inputs");
  if (!inputs)
    return inputs.takeError();
  Expected<Tensor> labels =
      examples(test.label(), e.batch_, "the evaluation batch's labels");
  if (!labels)
    return labels.takeError();
  e.inputs_ = std::move(*inputs);
  e.labels_ = std::move(*labels);
  e.indices_.resize(e.batch_);
  e.labelsPerExample_ = test.label().numElements();
  e.hasAccuracy_ = eval->results().size() >= 2;
  return std::optional<Evaluator>(std::move(e));
}

/// The arguments of the specializations evaluation will use (only their
/// shapes matter), for Function::prepare.

Expected<std::vector<std::vector<Tensor>>>
Evaluator::preparedArguments(const Trainer &trainer,
                             const data::DataSource &test) const {
  Expected<std::vector<Tensor>> given = states(trainer);
  if (!given)
    return given.takeError();
  std::vector<std::vector<Tensor>> calls;
  int64_t n = test.size();
  for (int64_t b : {batch_, n % batch_})
    if (b > 0)
      calls.push_back(arguments(*given, b));
  return calls;
}

std::pair<int64_t, int64_t> detail::shardBatches(int64_t batches, int rank,
                                                 int ranks) {
  // floor(batches * r / ranks) without overflow for any realistic count.
  auto start = [&](int64_t r) { return batches * r / ranks; };
  return {start(rank), start(rank + 1)};
}

Expected<std::pair<double, std::optional<double>>>
Evaluator::run(const Trainer &trainer, const data::DataSource &test,
               Communicator *comm) {
  const int64_t n = test.size();
  const int64_t batches = (n + batch_ - 1) / batch_;
  const int rank = comm ? comm->rank() : 0, ranks = comm ? comm->size() : 1;
  auto [first, end] = shardBatches(batches, rank, ranks);
  // Per batch, its loss times its examples (zero for the other ranks'
  // batches); then the correct predictions, then the ranks that failed.
  // Summed across the ranks, each batch's entry is the one rank's value
  // plus zeros: exactly it.
  std::vector<double> figures(batches + 2, 0.0);
  double &correct = figures[batches], &failed = figures[batches + 1];
  Error localError = Error::success();
  (void)!!localError;
  Expected<std::vector<Tensor>> given = states(trainer);
  if (!given)
    localError = given.takeError();
  for (int64_t b = first; given && b < end; ++b) {
    int64_t begin = b * batch_, count = std::min(batch_, n - begin);
    std::iota(indices_.begin(), indices_.begin() + count, begin);
    if (Error err = test.gather(llvm::ArrayRef(indices_.data(), count),
                                inputs_.data(), labels_.data())) {
      localError = std::move(err);
      break;
    }
    Expected<std::vector<Tensor>> results =
        eval_->call(arguments(*given, count));
    if (!results) {
      localError = results.takeError();
      break;
    }
    figures[b] = double((*results)[0].data<float>()[0]) * double(count);
    if (hasAccuracy_)
      correct += (*results)[1].data<int32_t>()[0];
  }
  if (comm && ranks > 1) {
    // Every rank takes part in the reduction, a failed one too, so that
    // none waits for a collective that never comes.
    failed = localError ? 1 : 0;
    if (Error err = comm->allReduceSum(figures.data(), int64_t(figures.size())))
      return llvm::joinErrors(std::move(localError), std::move(err));
    if (localError)
      return std::move(localError);
    if (failed > 0)
      return llvm::createStringError(
          llvm::Twine(int64_t(failed)) +
          " rank(s) failed to evaluate their share of the " + llvm::Twine(n) +
          " examples (their output says why)");
  } else if (localError) {
    return std::move(localError);
  }
  // In batch order, as one process adds them.
  double lossSum = 0;
  for (int64_t b = 0; b < batches; ++b)
    lossSum += figures[b];
  std::optional<double> accuracy;
  // Per label: an example may hold several (one per position).
  if (hasAccuracy_)
    accuracy = correct / (double(n) * double(labelsPerExample_));
  return std::make_pair(lossSum / double(n), accuracy);
}

Expected<std::vector<Tensor>> Evaluator::states(const Trainer &trainer) const {
  std::vector<Tensor> given;
  for (auto &[index, name] : stateArgs_) {
    Expected<Tensor> state = trainer.state(name);
    if (!state)
      return state.takeError();
    given.push_back(std::move(*state));
  }
  return given;
}

std::vector<Tensor> Evaluator::arguments(llvm::ArrayRef<Tensor> states,
                                         int64_t count) const {
  std::vector<Tensor> args(eval_->numArguments());
  for (auto [state, named] : llvm::zip(states, stateArgs_))
    args[named.first] = state;
  args[batchArgs_[layout_.inputs]] =
      reshaped(inputs_, {count}, layout_.inputShape);
  args[batchArgs_[layout_.labels]] =
      reshaped(labels_, {count}, layout_.labelShape);
  return args;
}

//===----------------------------------------------------------------------===//
// Predictor
//===----------------------------------------------------------------------===//

Expected<Predictor> Predictor::create(Engine &engine, const Trainer &trainer,
                                      llvm::StringRef step, int64_t batchSize,
                                      const data::DataSource &data) {
  std::string name = abi::predictFunctionName(step);
  Expected<Function &> predict = engine.lookup(name);
  if (!predict) {
    llvm::consumeError(predict.takeError());
    return llvm::createStringError(
        "the model has no prediction function '" + name +
        "': predictions need a fuse.train_step '" + step +
        "' whose loss has one softmax_cross_entropy (its logits)");
  }
  Predictor p(*predict);
  std::vector<ArgumentInfo> batchArgs;
  std::vector<size_t> batchIndices;
  for (auto [i, arg] : llvm::enumerate(predict->arguments())) {
    if (llvm::is_contained(trainer.stateNames(), arg.name)) {
      p.stateArgs_.push_back({i, arg.name});
      continue;
    }
    batchIndices.push_back(i);
    batchArgs.push_back(arg);
  }
  p.batch_ = evaluationBatch(batchSize, data.size());
  Expected<BatchLayout> layout = matchData(predict->name(), batchArgs, 1, data,
                                           p.batch_, /*labelled=*/false);
  if (!layout)
    return layout.takeError();
  p.inputArg_ = batchIndices[layout->inputs];
  p.inputShape_ = std::move(layout->inputShape);
  Expected<Tensor> inputs =
      examples(data.input(), p.batch_, "the prediction batch's inputs");
  if (!inputs)
    return inputs.takeError();
  Expected<Tensor> labels =
      examples(data.label(), p.batch_, "the prediction batch's labels");
  if (!labels)
    return labels.takeError();
  p.inputs_ = std::move(*inputs);
  p.labels_ = std::move(*labels);
  p.indices_.resize(p.batch_);
  return p;
}

Error Predictor::run(const Trainer &trainer, const data::DataSource &data,
                     const std::function<Error(const PredictedBatch &)> &each) {
  std::vector<Tensor> args(predict_->numArguments());
  for (auto &[index, name] : stateArgs_) {
    Expected<Tensor> state = trainer.state(name);
    if (!state)
      return state.takeError();
    args[index] = std::move(*state);
  }
  int64_t n = data.size();
  for (int64_t begin = 0; begin < n; begin += batch_) {
    int64_t count = std::min(batch_, n - begin);
    std::iota(indices_.begin(), indices_.begin() + count, begin);
    if (Error err = data.gather(llvm::ArrayRef(indices_.data(), count),
                                inputs_.data(), labels_.data()))
      return err;
    args[inputArg_] = reshaped(inputs_, {count}, inputShape_);
    Expected<std::vector<Tensor>> results = predict_->call(args);
    if (!results)
      return results.takeError();
    const Tensor &logits = (*results)[0];
    // fuse-derive-predict returns [N, C] f32 logits and their softmax.
    if (results->size() != 2 || logits.rank() != 2 ||
        logits.dtype() != DType::F32 || logits.shape()[0] % count != 0)
      return llvm::createStringError(
          "'" + predict_->name() + "' returned " + logits.typeString() +
          " for " + llvm::Twine(count) +
          " examples: not f32 logits of shape [rows, classes], the same rows "
          "per example");
    rows_ = logits.shape()[0] / count;
    classes_ = logits.shape()[1];
    Tensor labels = reshaped(labels_, {count}, data.label().shape);
    PredictedBatch batch{begin, count, &logits, &(*results)[1], &labels};
    if (Error err = each(batch))
      return err;
  }
  return Error::success();
}
