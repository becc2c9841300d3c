//===- Fit.cpp - Training a model on a data source ------------------------===//

#include "fuse/Fit.h"
#include "Evaluator.h"
#include "fuse/ABI.h"
#include "fuse/Checkpoint.h"
#include "fuse/Data/Batches.h"
#include "fuse/LabelRange.h"
#include "fuse/Trainer.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CheckedArithmetic.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <numeric>
#include <thread>

using namespace fuse;
using llvm::Error;
using llvm::Expected;
using namespace fuse::detail;

namespace {

/// Keras' default batch size.
constexpr int64_t kDefaultBatchSize = 32;
/// The checkpoint's metadata key of the number of training examples.
constexpr llvm::StringLiteral kExamplesKey = "num_examples";
/// The checkpoint's metadata key of FitOptions::validationSplit, exactly
/// (a hexadecimal float).
constexpr llvm::StringLiteral kValidationSplitKey = "validation_split";

/// `x` exactly, as a hexadecimal float ("0x1.999999999999ap-4").
std::string hexDouble(double x) {
  char text[64];
  std::snprintf(text, sizeof(text), "%a", x);
  return text;
}

/// A hexadecimal float of hexDouble as people write it ("0.1"), or the text
/// itself when it is not one.
std::string shortHex(llvm::StringRef hex) {
  char *end = nullptr;
  std::string text = hex.str();
  double x = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || *end)
    return "'" + text + "'";
  char out[32];
  std::snprintf(out, sizeof(out), "%g", x);
  return out;
}

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

/// The first NaN or infinite element of the float tensor `t` (contiguous):
/// its row-major index and how it is not finite.
std::optional<std::pair<int64_t, const char *>>
firstNonFinite(const Tensor &t) {
  auto classify = [](double v) { return std::isnan(v) ? "nan" : "infinite"; };
  // f16 and bf16: every exponent bit set.
  auto scanHalf = [&](uint16_t exponent, uint16_t mantissa)
      -> std::optional<std::pair<int64_t, const char *>> {
    const uint16_t *bits = t.data<uint16_t>();
    for (int64_t k = 0, n = t.numElements(); k < n; ++k)
      if ((bits[k] & exponent) == exponent)
        return std::make_pair(k, bits[k] & mantissa ? "nan" : "infinite");
    return std::nullopt;
  };
  switch (t.dtype()) {
  case DType::F32:
    for (int64_t k = 0, n = t.numElements(); k < n; ++k)
      if (!std::isfinite(t.data<float>()[k]))
        return std::make_pair(k, classify(t.data<float>()[k]));
    return std::nullopt;
  case DType::F64:
    for (int64_t k = 0, n = t.numElements(); k < n; ++k)
      if (!std::isfinite(t.data<double>()[k]))
        return std::make_pair(k, classify(t.data<double>()[k]));
    return std::nullopt;
  case DType::F16:
    return scanHalf(0x7c00, 0x03ff);
  case DType::BF16:
    return scanHalf(0x7f80, 0x007f);
  default:
    return std::nullopt;
  }
}

/// Checks that every parameter and optimizer state of `trainer` is finite:
/// each step's loss is computed before its update, so the last update
/// before a checkpoint is seen only here.
Error checkFinite(const Trainer &trainer, int64_t epoch, int64_t epochs) {
  for (const std::string &name : trainer.stateNames()) {
    Expected<Tensor> state = trainer.state(name);
    if (!state)
      return state.takeError();
    if (std::optional<std::pair<int64_t, const char *>> bad =
            firstNonFinite(*state))
      return llvm::createStringError(
          "after step " + llvm::Twine(trainer.step() - 1) + ", the last of " +
          "epoch " + llvm::Twine(epoch + 1) + "/" + llvm::Twine(epochs) +
          ", '" + name + "' is " + bad->second + " (element #" +
          llvm::Twine(bad->first) +
          "): training stopped, no checkpoint of its parameters written "
          "(allowNonFiniteLoss, fusec train --allow-nan, continues)");
  }
  return Error::success();
}

/// A hash of every carried tensor's bytes and the step (FNV-1a): the ranks
/// of a data-parallel run compare theirs with rank 0's.
Expected<uint64_t> stateHash(const Trainer &trainer) {
  uint64_t hash = 0xcbf29ce484222325ull;
  auto add = [&](const void *data, size_t bytes) {
    const unsigned char *p = static_cast<const unsigned char *>(data);
    for (size_t i = 0; i < bytes; ++i)
      hash = (hash ^ p[i]) * 0x100000001b3ull;
  };
  for (const std::string &name : trainer.stateNames()) {
    Expected<Tensor> state = trainer.state(name);
    if (!state)
      return state.takeError();
    Tensor copy = state->contiguousCopy();
    add(copy.data(), size_t(copy.numElements()) * byteWidth(copy.dtype()));
  }
  int64_t step = trainer.step();
  add(&step, sizeof(step));
  return hash;
}

/// The checkpoint's value of `key` (at least `min`), checked against the
/// caller's choice.
template <typename T>
Expected<T> resolve(const Metadata &metadata, llvm::StringRef key,
                    std::optional<T> chosen, T fallback, llvm::StringRef path,
                    T min = 0) {
  auto it = metadata.find(key.str());
  if (it == metadata.end())
    return chosen.value_or(fallback);
  T stored;
  if (llvm::StringRef(it->second).getAsInteger(10, stored))
    return llvm::createStringError(path + ": the checkpoint's " + key + " '" +
                                   it->second + "' is not a number");
  if constexpr (std::is_signed_v<T>)
    if (stored < min)
      return llvm::createStringError(path + ": the checkpoint's " + key + " '" +
                                     it->second + "' is not at least " +
                                     llvm::Twine(min));
  if (chosen && *chosen != stored)
    return llvm::createStringError(
        path + ": the checkpoint was trained with " + key + " " +
        llvm::Twine(stored) + ", not " + llvm::Twine(*chosen) +
        ": resuming with another would change the data order");
  return stored;
}

/// A scalar argument of the step function that fit sets per call (a rank's
/// gradient weight, its first example's row): set only if the function has
/// it, and only when the value changes. Held as T, passed as Element.
template <typename T, typename Element = T> class ScalarInput {
public:
  ScalarInput(Trainer &trainer, llvm::StringRef name)
      : trainer(trainer), name(name),
        present(llvm::any_of(
            trainer.function().arguments(),
            [&](const ArgumentInfo &a) { return a.name == name; })) {}
  bool exists() const { return present; }
  /// The value last set (if ever).
  T value() const { return last.value_or(T()); }
  Error set(T value) {
    if (!present || (last && *last == value))
      return Error::success();
    last = value;
    return trainer.setInput(name,
                            Tensor::fromValues<Element>({}, {Element(value)}));
  }

private:
  Trainer &trainer;
  llvm::StringRef name;
  bool present;
  std::optional<T> last;
};

} // namespace

unsigned fuse::labelsArgument(const ArgumentInfo &first,
                              const ArgumentInfo &second) {
  // What feeds a cross-entropy (or a gather's indices: a text model's
  // tokens are marked too), else the integer one of an integer and a float
  // (an image classifier's), else the second.
  if ((first.classes > 0) != (second.classes > 0))
    return first.classes > 0 ? 0 : 1;
  if (isFloatingPoint(first.dtype) != isFloatingPoint(second.dtype))
    return isFloatingPoint(first.dtype) ? 1 : 0;
  return 1;
}

Expected<FitSummary> fuse::fit(Engine &engine, const data::DataSource &train,
                               const data::DataSource *test,
                               const FitOptions &options,
                               const FitCallbacks &callbacks) {
  if (options.epochs < 0)
    return llvm::createStringError(
        "the number of epochs must not be negative (--epochs " +
        llvm::Twine(options.epochs) + ")");
  if (options.batchSize && *options.batchSize < 1)
    return llvm::createStringError(
        "the batch size must be at least 1 (--batch-size " +
        llvm::Twine(*options.batchSize) + ")");
  if (options.maxSeconds &&
      !(std::isfinite(*options.maxSeconds) && *options.maxSeconds >= 0)) {
    char text[32];
    std::snprintf(text, sizeof(text), "%g", *options.maxSeconds);
    return llvm::createStringError(
        "the time budget must be a finite number of seconds, at least 0 "
        "(--max-seconds " +
        llvm::Twine(text) + ")");
  }
  if (options.stepsPerCall < 0)
    return llvm::createStringError(
        "the steps per call must not be negative (--steps-per-call " +
        llvm::Twine(options.stepsPerCall) + ")");
  // As torch.optim: "Invalid learning rate".
  if (!std::isfinite(options.learningRate) || options.learningRate < 0) {
    char text[32];
    std::snprintf(text, sizeof(text), "%g", double(options.learningRate));
    return llvm::createStringError("invalid learning rate (--lr " +
                                   llvm::Twine(text) +
                                   "): it must be a finite number, at least 0");
  }
  std::optional<int64_t> heldOut;
  if (options.validationSplit) {
    double split = *options.validationSplit;
    char text[32];
    std::snprintf(text, sizeof(text), "%g", split);
    if (!(split > 0 && split < 1))
      return llvm::createStringError(
          "the validation split must be in (0, 1) (--validation-split " +
          llvm::Twine(text) + ")");
    if (options.validationData)
      return llvm::createStringError(
          "a validation split (--validation-split) and validation data both "
          "give the validation set: give one");
    heldOut = data::validationCount(train.size(), split);
  }
  const bool validating = options.validationSplit || options.validationData;
  if (options.earlyStoppingPatience) {
    if (*options.earlyStoppingPatience < 0)
      return llvm::createStringError(
          "the early-stopping patience must not be negative "
          "(--early-stopping-patience " +
          llvm::Twine(*options.earlyStoppingPatience) + ")");
    if (!validating)
      return llvm::createStringError(
          "early stopping (--early-stopping-patience) watches the validation "
          "loss: it needs a validation set (--validation-split)");
  }
  if (options.restoreBestWeights && !options.earlyStoppingPatience)
    return llvm::createStringError(
        "--restore-best-weights restores the best epoch's weights when early "
        "stopping ends training: it needs --early-stopping-patience");
  if (!options.weightsPath.empty() && !options.resumePath.empty())
    return llvm::createStringError(
        "initial weights (--weights) and a checkpoint to resume "
        "(--resume) both set the parameters: give one");
  // Data-parallel: this rank's share of every batch (docs/distributed.md).
  Communicator *comm = options.communicator && options.communicator->size() > 1
                           ? options.communicator
                           : nullptr;
  const int rank = comm ? comm->rank() : 0;
  const int ranks = comm ? comm->size() : 1;
  const bool leader = rank == 0;
  if (train.size() == 0)
    return llvm::createStringError("the training set has no examples");
  if (test && test->size() == 0)
    return llvm::createStringError("the test set has no examples");
  Expected<std::unique_ptr<Trainer>> created =
      Trainer::create(engine, options.stepFunction);
  if (!created)
    return created.takeError();
  Trainer &trainer = **created;

  FitSummary summary;
  if (!options.resumePath.empty()) {
    Expected<Metadata> metadata = loadCheckpoint(trainer, options.resumePath);
    if (!metadata)
      return metadata.takeError();
    Expected<uint64_t> seed = resolve<uint64_t>(*metadata, "seed", options.seed,
                                                0, options.resumePath);
    if (!seed)
      return seed.takeError();
    Expected<int64_t> batch =
        resolve<int64_t>(*metadata, "batch_size", options.batchSize,
                         kDefaultBatchSize, options.resumePath, /*min=*/1);
    if (!batch)
      return batch.takeError();
    if (Expected<int64_t> epoch = resolve<int64_t>(
            *metadata, "epoch", std::nullopt, 0, options.resumePath);
        !epoch)
      return epoch.takeError();
    // Checkpoints before it was recorded have none: nothing to check.
    const int64_t trainSize = train.size() - heldOut.value_or(0);
    Expected<int64_t> examples =
        resolve<int64_t>(*metadata, kExamplesKey, std::nullopt, trainSize,
                         options.resumePath, /*min=*/1);
    if (!examples)
      return examples.takeError();
    // The split is part of the data order: the same one, or none.
    auto stored = metadata->find(kValidationSplitKey.str());
    std::string chosen =
        options.validationSplit ? hexDouble(*options.validationSplit) : "";
    if ((stored == metadata->end() ? "" : stored->second) != chosen)
      return llvm::createStringError(
          options.resumePath + ": the checkpoint was trained with " +
          (stored == metadata->end()
               ? std::string("no validation split")
               : "validation split " + shortHex(stored->second)) +
          ", not " +
          (options.validationSplit ? "--validation-split " + shortHex(chosen)
                                   : std::string("none")) +
          ": resuming with another would change the training data");
    if (*examples != trainSize)
      return llvm::createStringError(
          options.resumePath + ": the checkpoint was trained on " +
          llvm::Twine(*examples) + " examples, the training data has " +
          llvm::Twine(trainSize) +
          ": resuming on other data would change the data order");
    summary.seed = *seed;
    summary.batchSize = *batch;
  } else {
    summary.seed = options.seed.value_or(0);
    // A batch larger than the training set is, as in Keras and PyTorch's
    // DataLoader, one partial batch of every example per epoch.
    summary.batchSize = options.batchSize.value_or(kDefaultBatchSize);
    if (Error err = trainer.initialize(summary.seed))
      return std::move(err);
    if (!options.weightsPath.empty())
      if (Error err = loadWeights(trainer, options.weightsPath))
        return std::move(err);
  }
  // The validation split, drawn with the run's seed (the checkpoint's on
  // resume); `train` is its training part from here on.
  std::optional<std::pair<data::SubsetDataSource, data::SubsetDataSource>>
      split;
  const data::DataSource *validation = options.validationData;
  if (options.validationSplit) {
    auto parts =
        data::splitForValidation(train, *options.validationSplit, summary.seed);
    if (!parts)
      return parts.takeError();
    split.emplace(std::move(*parts));
    validation = &split->second;
  }
  const data::DataSource &trainData = split ? split->first : train;
  if (summary.batchSize % ranks != 0)
    return llvm::createStringError(
        "the batch size (--batch-size " + llvm::Twine(summary.batchSize) +
        ") must be a multiple of the " + llvm::Twine(ranks) +
        " ranks: each trains on an equal share of every global batch");
  summary.ranks = ranks;
  if (validation && validation->size() == 0)
    return llvm::createStringError("the validation set has no examples");
  summary.trainExamples = trainData.size();
  summary.validationExamples = validation ? validation->size() : 0;
  if (Error err = trainer.setInput(
          abi::kLearningRateArgName,
          Tensor::fromValues<float>({}, {options.learningRate})))
    return std::move(err);
  // Each rank's gradients weigh its share of the global batch; a step
  // function compiled without data-parallel has no weight to set.
  ScalarInput<double, float> replicaWeight(trainer, abi::kReplicaWeightArgName);
  if (comm && !replicaWeight.exists())
    return llvm::createStringError(
        "'" + trainer.function().name() + "' does not sum its gradients " +
        "across the " + llvm::Twine(ranks) +
        " ranks: create the engine with EngineOptions::dataParallel");
  if (Error err = replicaWeight.set(1.0))
    return std::move(err);
  // With dropout, the global batch's index of this rank's first example.
  ScalarInput<int64_t> exampleOffset(trainer, abi::kExampleOffsetArgName);
  if (Error err = exampleOffset.set(0))
    return std::move(err);
  // Rank 0 writes the checkpoints.
  if (!options.checkpointPath.empty() && leader)
    if (Error err = checkWritable(options.checkpointPath))
      return std::move(err);

  const int64_t batch = summary.batchSize;
  std::vector<ArgumentInfo> batchArgs;
  for (const ArgumentInfo &arg : trainer.function().arguments())
    if (arg.stacked)
      batchArgs.push_back(arg);
  Expected<BatchLayout> layout =
      matchData(trainer.function().name(), batchArgs, 2, trainData, batch);
  if (!layout)
    return layout.takeError();
  if (Error err = checkLabels(trainData, batchArgs[layout->labels], "training"))
    return std::move(err);
  std::optional<Evaluator> evaluator, validator;
  // Every rank evaluates its share of the batches (Evaluator::run).
  if (test) {
    Expected<std::optional<Evaluator>> e = Evaluator::create(
        engine, trainer, options.stepFunction, options.evalBatchSize, *test);
    if (!e)
      return e.takeError();
    evaluator = std::move(*e);
  }
  if (validation) {
    Expected<std::optional<Evaluator>> e =
        Evaluator::create(engine, trainer, options.stepFunction,
                          options.evalBatchSize, *validation, "validation");
    if (!e)
      return e.takeError();
    validator = std::move(*e);
    if (!validator && options.earlyStoppingPatience)
      return llvm::createStringError(
          "early stopping (--early-stopping-patience) needs the validation "
          "loss, and '" +
          options.stepFunction + "' has no evaluation function (" +
          abi::evalFunctionName(options.stepFunction) + ")");
  }

  // Compile up front, so that training time is training: full batches, the
  // shorter last one, evaluation. Only the shapes matter: zeroed batches.
  const int64_t n = trainData.size();
  auto compileStart = std::chrono::steady_clock::now();
  // With a second thread (EngineOptions::threads), the evaluation compiles
  // on it, started once the step is specialized: the engine lowers and
  // generates each in a context of its own, so the evaluation's whole
  // compile overlaps the step's.
  // The evaluation function's calls on the test and validation sets.
  std::vector<std::pair<Function *, std::vector<Tensor>>> evalCalls;
  for (auto [e, data] :
       {std::pair{&evaluator, test}, std::pair{&validator, validation}})
    if (*e) {
      Expected<std::vector<std::vector<Tensor>>> calls =
          (*e)->preparedArguments(trainer, *data);
      if (!calls)
        return calls.takeError();
      for (std::vector<Tensor> &args : *calls)
        evalCalls.emplace_back(&(*e)->function(), std::move(args));
    }
  Error evalError = Error::success();
  (void)!!evalError;
  auto compileEvaluation = [&] {
    for (auto &[function, args] : evalCalls)
      if (Error err = function->prepare(args)) {
        evalError = std::move(err);
        return;
      }
  };
  std::thread evalThread;
  bool overlap = !evalCalls.empty() && engine.threads() > 1;
  auto startEvaluation = [&] {
    if (overlap && !evalThread.joinable())
      evalThread = std::thread(compileEvaluation);
  };
  // On an early return (the step failed to compile), the evaluation's
  // compile finishes first and its error, if any, is dropped.
  llvm::scope_exit joinEvaluation([&] {
    if (evalThread.joinable())
      evalThread.join();
    llvm::consumeError(std::move(evalError));
  });
  {
    Expected<Tensor> inputs =
        examples(trainData.input(), std::min(batch, n), "a batch's inputs");
    if (!inputs)
      return inputs.takeError();
    Expected<Tensor> labels =
        examples(trainData.label(), std::min(batch, n), "a batch's labels");
    if (!labels)
      return labels.takeError();
    for (int64_t global : {std::min(batch, n), n % batch}) {
      if (global == 0)
        continue;
      // This rank's share (data::ChunkLoader's shard).
      auto [begin, end] = data::shardRange(global, rank, ranks);
      int64_t b = std::max<int64_t>(end - begin, 1);
      std::vector<Tensor> batches(2);
      batches[layout->inputs] = reshaped(*inputs, {1, b}, layout->inputShape);
      batches[layout->labels] = reshaped(*labels, {1, b}, layout->labelShape);
      if (Error err = trainer.prepare(batches, startEvaluation))
        return std::move(err);
    }
  }
  if (evalThread.joinable())
    evalThread.join();
  else
    compileEvaluation();
  if (evalError)
    return std::move(evalError);
  summary.compileSeconds = secondsSince(compileStart);
  summary.threads = engine.threads();

  // The ranks start from the same parameters and step, or stop here.
  if (comm) {
    Expected<uint64_t> hash = stateHash(trainer);
    if (!hash)
      return hash.takeError();
    uint64_t rootHash = *hash;
    if (Error err = comm->broadcast(&rootHash, sizeof(rootHash), 0))
      return std::move(err);
    double differing = rootHash != *hash;
    if (Error err = comm->allReduceSum(&differing, 1))
      return std::move(err);
    if (differing > 0)
      return llvm::createStringError(
          rootHash != *hash
              ? "rank " + llvm::Twine(rank) +
                    " starts from other parameters or another step than "
                    "rank 0 (other --weights or --resume files?)"
              : llvm::Twine(int64_t(differing)) +
                    " rank(s) start from other parameters or another step "
                    "than rank 0 (other --weights or --resume files?)");
  }

  double lossSum = 0;
  int64_t lossCount = 0;
  // The first step whose loss is NaN or infinite, and that loss.
  std::optional<std::pair<int64_t, float>> diverged;
  // Data-parallel: the global batch's losses, each rank's weighted by its
  // share; a failed collective of the callback.
  std::vector<double> globalLosses;
  std::string callbackError;
  trainer.setCallback([&](const StepsReport &report) {
    llvm::ArrayRef<float> losses = report.losses;
    std::vector<float> reduced;
    if (comm) {
      globalLosses.assign(losses.begin(), losses.end());
      for (double &loss : globalLosses)
        loss *= replicaWeight.value();
      if (Error err =
              comm->allReduceSum(globalLosses.data(), globalLosses.size()))
        callbackError = "rank " + std::to_string(rank) +
                        ": the all-reduce of the losses failed: " +
                        llvm::toString(std::move(err));
      reduced.assign(globalLosses.begin(), globalLosses.end());
      losses = reduced;
    }
    for (auto [i, loss] : llvm::enumerate(losses)) {
      lossSum += loss;
      if (!std::isfinite(loss) && !diverged)
        diverged = {report.firstStep + int64_t(i), loss};
    }
    lossCount += report.steps;
  });

  data::ChunkOptions chunking;
  chunking.batchSize = batch;
  chunking.seed = summary.seed;
  chunking.shard = rank;
  chunking.shards = ranks;
  // Automatic K: the first call runs one step and sets K from its time.
  bool autoK = options.stepsPerCall == 0;
  chunking.stepsPerCall = autoK ? 1 : options.stepsPerCall;
  const int64_t startStep = trainer.step();
  // ceil(n / batch) without overflowing n + batch - 1.
  const int64_t stepsPerEpoch = n / batch + (n % batch != 0);
  std::optional<int64_t> epochSteps =
      llvm::checkedMul(options.epochs, stepsPerEpoch);
  if (!epochSteps)
    return llvm::createStringError(
        "the number of epochs (--epochs) " + llvm::Twine(options.epochs) +
        " is too large: that many epochs of " + llvm::Twine(stepsPerEpoch) +
        " steps overflow the 64-bit step counter");
  const int64_t endStep = std::max(*epochSteps, startStep);
  Expected<std::unique_ptr<data::ChunkLoader>> loader =
      data::ChunkLoader::create(trainData, chunking, startStep, endStep);
  if (!loader)
    return loader.takeError();

  // Early stopping: the best validation loss, the epochs since, and (to
  // restore) the carried tensors and step of the best epoch.
  double bestLoss = std::numeric_limits<double>::infinity();
  int64_t epochsWithoutImprovement = 0;
  struct Snapshot {
    std::vector<Tensor> tensors;
    int64_t step = 0;
  } best;
  auto snapshot = [&](Snapshot &into) -> Error {
    into.tensors.clear();
    for (const std::string &name : trainer.stateNames()) {
      Expected<Tensor> state = trainer.state(name);
      if (!state)
        return state.takeError();
      into.tensors.push_back(state->contiguousCopy());
    }
    into.step = trainer.step();
    return Error::success();
  };
  auto restore = [&](const Snapshot &from) -> Error {
    for (auto [name, tensor] : llvm::zip(trainer.stateNames(), from.tensors))
      if (Error err = trainer.setState(name, tensor))
        return err;
    trainer.setStep(from.step);
    return Error::success();
  };
  int64_t epoch = -1;
  EpochSummary current;
  std::vector<Tensor> batches(2);
  auto epochStart = std::chrono::steady_clock::now();
  auto trainingStart = std::chrono::steady_clock::now();
  // An epoch's end, or the end of training inside one (maxSeconds):
  // check, evaluate, write the checkpoint.
  auto endEpoch = [&](bool complete) -> Error {
    current.complete = complete;
    summary.trainSeconds += current.seconds;
    // No checkpoint of diverged parameters, and none returned at the end.
    if (!options.allowNonFiniteLoss)
      if (Error err = checkFinite(trainer, epoch, options.epochs))
        return err;
    if (evaluator) {
      auto evaluationStart = std::chrono::steady_clock::now();
      Expected<std::pair<double, std::optional<double>>> result =
          evaluator->run(trainer, *test, comm);
      summary.evaluationSeconds += secondsSince(evaluationStart);
      if (!result)
        return result.takeError();
      current.testLoss = result->first;
      current.testAccuracy = result->second;
      if (!std::isfinite(result->first) && !options.allowNonFiniteLoss)
        return llvm::createStringError(
            "the test loss after epoch " + llvm::Twine(epoch + 1) + "/" +
            llvm::Twine(options.epochs) + " is " +
            (std::isnan(result->first) ? "nan" : "infinite") +
            ": training stopped, no checkpoint of its parameters written "
            "(allowNonFiniteLoss, fusec train --allow-nan, continues)");
    }
    if (validator) {
      auto evaluationStart = std::chrono::steady_clock::now();
      Expected<std::pair<double, std::optional<double>>> result =
          validator->run(trainer, *validation, comm);
      summary.evaluationSeconds += secondsSince(evaluationStart);
      if (!result)
        return result.takeError();
      current.validationLoss = result->first;
      current.validationAccuracy = result->second;
      if (!std::isfinite(result->first) && !options.allowNonFiniteLoss)
        return llvm::createStringError(
            "the validation loss after epoch " + llvm::Twine(epoch + 1) + "/" +
            llvm::Twine(options.epochs) + " is " +
            (std::isnan(result->first) ? "nan" : "infinite") +
            ": training stopped, no checkpoint of its parameters written "
            "(allowNonFiniteLoss, fusec train --allow-nan, continues)");
      // Keras' EarlyStopping: an improvement is a loss below the best.
      if (complete && options.earlyStoppingPatience) {
        if (result->first < bestLoss) {
          bestLoss = result->first;
          summary.bestEpoch = epoch;
          epochsWithoutImprovement = 0;
          if (options.restoreBestWeights)
            if (Error err = snapshot(best))
              return err;
        } else if (++epochsWithoutImprovement >=
                   *options.earlyStoppingPatience) {
          summary.earlyStopped = true;
        }
      }
    }
    auto metadataOf = [&](int64_t epochsDone) {
      Metadata metadata = {{"seed", std::to_string(summary.seed)},
                           {"batch_size", std::to_string(batch)},
                           {"epoch", std::to_string(epochsDone)},
                           {kExamplesKey.str(), std::to_string(n)}};
      if (options.validationSplit)
        metadata[kValidationSplitKey.str()] =
            hexDouble(*options.validationSplit);
      return metadata;
    };
    if (summary.earlyStopped && options.restoreBestWeights &&
        summary.bestEpoch) {
      if (Error err = restore(best))
        return err;
      summary.restoredBestWeights = true;
    }
    if (!options.checkpointPath.empty() && leader) {
      // The epochs done: a checkpoint inside an epoch resumes it from its
      // step; a restored one is the best epoch's.
      int64_t epochsDone = summary.restoredBestWeights ? *summary.bestEpoch + 1
                                                       : epoch + complete;
      if (Error err = saveCheckpoint(trainer, options.checkpointPath,
                                     metadataOf(epochsDone)))
        return err;
    }
    summary.history.push_back(current);
    if (callbacks.onEpochEnd)
      callbacks.onEpochEnd(current);
    return Error::success();
  };
  // Data-parallel: rank 0's end of an epoch (its evaluation, early
  // stopping, checkpoint) told to the others, which stop with it.
  auto endEpochTogether = [&](bool complete) -> Error {
    Error err = endEpoch(complete);
    if (!comm)
      return err;
    int64_t status[2] = {err ? 1 : 0, summary.earlyStopped};
    if (Error sent = comm->broadcast(status, sizeof(status), 0)) {
      llvm::consumeError(std::move(err));
      return sent;
    }
    if (err)
      return err;
    if (status[0])
      return llvm::createStringError(
          "rank 0 stopped training after epoch " + llvm::Twine(epoch + 1) +
          "/" + llvm::Twine(options.epochs) + " (its output says why)");
    summary.earlyStopped = status[1];
    return Error::success();
  };
  // Compiled code's fuse.all_reduce reduces through the communicator.
  CommunicatorScope collectives(comm);
  for (;;) {
    Expected<const data::Chunk &> next = (*loader)->next();
    if (!next)
      return next.takeError();
    const data::Chunk &chunk = *next;
    if (chunk.steps == 0)
      break;
    if (chunk.epoch != epoch) {
      epoch = chunk.epoch;
      current = EpochSummary();
      current.epoch = epoch;
      lossSum = 0;
      lossCount = 0;
      if (callbacks.onEpochBegin)
        callbacks.onEpochBegin(epoch, options.epochs);
      epochStart = std::chrono::steady_clock::now();
    }
    auto callStart = std::chrono::steady_clock::now();
    BatchLayout &l = *layout;
    batches[l.inputs] =
        reshaped(chunk.inputs, {chunk.steps, chunk.batchSize}, l.inputShape);
    batches[l.labels] =
        reshaped(chunk.labels, {chunk.steps, chunk.batchSize}, l.labelShape);
    if (Error err = replicaWeight.set(chunk.weight))
      return std::move(err);
    if (Error err = exampleOffset.set(chunk.shardOffset))
      return std::move(err);
    if (Error err = trainer.trainSteps(batches))
      return std::move(err);
    if (Error err = collectives.takeError())
      return std::move(err);
    if (!callbackError.empty())
      return llvm::createStringError(callbackError);
    // Stop before the diverged parameters reach a checkpoint.
    if (diverged && !options.allowNonFiniteLoss)
      return llvm::createStringError(
          "the loss of step " + llvm::Twine(diverged->first) + " is " +
          (std::isnan(diverged->second) ? "nan" : "infinite") +
          ": training stopped, no checkpoint of its parameters written "
          "(allowNonFiniteLoss, fusec train --allow-nan, continues)");
    double callSeconds = secondsSince(callStart);
    current.steps += chunk.steps;
    current.seconds = secondsSince(epochStart);
    current.trainLoss = lossCount ? lossSum / double(lossCount) : 0;
    summary.steps += chunk.steps;
    if (callbacks.onCall)
      callbacks.onCall({epoch, options.epochs,
                        trainer.step() - epoch * stepsPerEpoch, stepsPerEpoch,
                        current.steps, current.trainLoss, current.seconds});
    // `chunk` belongs to the loader, which the automatic K replaces.
    const bool endsEpoch = chunk.endsEpoch;
    // The budget is checked at every call boundary: the first one past it
    // ends training (at an epoch's end, or inside one).
    bool outOfTime = options.maxSeconds &&
                     secondsSince(trainingStart) >= *options.maxSeconds;
    // About 0.1 s per call: progress stays live, the call cost vanishes.
    int64_t chosenK = std::clamp<int64_t>(
        int64_t(0.1 / std::max(callSeconds / double(chunk.steps), 1e-9)), 1,
        256);
    // What depends on time is rank 0's choice.
    if (comm) {
      int64_t decision[2] = {outOfTime, chosenK};
      if (Error err = comm->broadcast(decision, sizeof(decision), 0))
        return std::move(err);
      outOfTime = decision[0];
      chosenK = decision[1];
    }
    if (outOfTime && trainer.step() < endStep) {
      summary.stoppedEarly = true;
      if (Error err = endEpochTogether(endsEpoch))
        return std::move(err);
      break;
    }
    if (endsEpoch) {
      if (Error err = endEpochTogether(/*complete=*/true))
        return std::move(err);
      if (summary.earlyStopped)
        break;
    }
    if (autoK && trainer.step() < endStep) {
      autoK = false;
      chunking.stepsPerCall = chosenK;
      loader = data::ChunkLoader::create(trainData, chunking, trainer.step(),
                                         endStep);
      if (!loader)
        return loader.takeError();
    }
  }
  summary.totalSteps = trainer.step();
  summary.allReduceSeconds = collectives.collectiveSeconds();
  if (comm)
    summary.allReduceAlgorithm = comm->allReduceAlgorithm();
  // Each rank's, gathered as the sum of vectors that each rank fills at its
  // own index (every rank arrives here after the same steps).
  summary.allReduceSecondsPerRank.assign(ranks, 0.0);
  summary.allReduceSecondsPerRank[rank] = summary.allReduceSeconds;
  if (comm)
    if (Error err =
            comm->allReduceSum(summary.allReduceSecondsPerRank.data(), ranks))
      return std::move(err);
  // A chunk never crosses an epoch.
  summary.stepsPerCall = std::min(chunking.stepsPerCall, stepsPerEpoch);
  return summary;
}
