//===- Fit.h - Training a model on a data source ----------------*- C++ -*-===//
//
// What `fusec train` runs, as a library call like Keras' `fit`: a Trainer
// for the model's step function, the input pipeline over a data source (a
// seeded order per epoch, chunks of K batches assembled on a prefetch
// thread), an evaluation after each epoch with the model's `<step>_eval`
// function, and checkpoints from which a run resumes bitwise-exactly.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_FIT_H
#define FUSE_FIT_H

#include "fuse/Communicator.h"
#include "fuse/Data/DataSource.h"
#include "fuse/Engine.h"

#include <functional>
#include <optional>

namespace fuse {

struct FitOptions {
  /// The step function (`fuse.train_step @train`).
  std::string stepFunction = "train";
  /// Train until this many epochs are done (counting those of a resumed
  /// checkpoint, as Keras' `epochs`); their steps must fit in int64.
  int64_t epochs = 1;
  /// Examples per step; unset: 32 (Keras'), or the resumed checkpoint's.
  /// Each epoch ends with a partial batch of the remaining examples: a
  /// batch larger than the training set trains one batch of all of them
  /// per epoch, as Keras and PyTorch's DataLoader do.
  std::optional<int64_t> batchSize;
  /// Steps per call (K); 0 chooses K so that a call takes about 0.1 s.
  int64_t stepsPerCall = 0;
  /// A finite number, at least 0.
  float learningRate = 1e-3f;
  /// Seeds the initializers and the data order; unset: 0, or the resumed
  /// checkpoint's.
  std::optional<uint64_t> seed;
  /// A safetensors file of initial weights, instead of the initializers.
  std::string weightsPath;
  /// A checkpoint to continue from: parameters, states, step, data order.
  std::string resumePath;
  /// Where to write a checkpoint after each epoch (atomically).
  std::string checkpointPath;
  /// Examples per call of the evaluation function.
  int64_t evalBatchSize = 1000;
  /// A time budget in seconds (finite, at least 0): training ends at the
  /// first call boundary after this many seconds of the training loop (its
  /// steps and any evaluations and checkpoints of epochs ended meanwhile;
  /// compilation does not count), inside an epoch or not, then evaluates and
  /// writes the checkpoint as at an epoch's end. 0 runs one call. A
  /// checkpoint written inside an epoch holds the step, and resuming from it
  /// continues that epoch's order where it stopped: the same bits as a run
  /// that never stopped. Unset: no budget.
  std::optional<double> maxSeconds;
  /// Keep training when a step's loss is NaN or infinite, or a parameter,
  /// optimizer state or test loss is at an epoch's end. By default fit
  /// stops with an error naming the step (or epoch) and the tensor, before
  /// any checkpoint of the diverged parameters is written.
  bool allowNonFiniteLoss = false;
  /// Holds out this share of the training data, in (0, 1), as a validation
  /// set evaluated after each epoch (Keras' `validation_split`): the last
  /// N - floor(N * (1 - split)) examples of a seeded permutation of them
  /// (the seed's, drawn apart from the epochs' orders), so the same seed
  /// holds out the same examples. A checkpoint records it; resuming with
  /// another is an error.
  std::optional<double> validationSplit;
  /// A validation set of its own (Keras' `validation_data`; a text's
  /// held-out tail), instead of validationSplit.
  const data::DataSource *validationData = nullptr;
  /// Early stopping on the validation loss, as Keras' EarlyStopping
  /// (monitor `val_loss`, min_delta 0): training stops after this many
  /// epochs (at least 0) in a row without a validation loss below the best
  /// so far. Needs a validation set. A resumed run starts counting afresh.
  std::optional<int64_t> earlyStoppingPatience;
  /// When early stopping stops training, restores the parameters, optimizer
  /// states and step of the best epoch before the final checkpoint is
  /// written: it is the best epoch's checkpoint. Needs early stopping.
  bool restoreBestWeights = false;
  /// Data-parallel training (docs/distributed.md): every rank of
  /// `communicator` calls fit with the same options and data, on an engine
  /// created with EngineOptions::dataParallel. Each step, each rank trains
  /// on its share (batchSize / ranks examples) of the global batch, in the
  /// same seeded order as one process; the gradients are summed across the
  /// ranks and every rank applies the same update. Parameters start equal:
  /// every rank draws them from the same seed (or reads the same weights or
  /// checkpoint), which the first collective checks. Every rank evaluates
  /// its share of the test and validation batches and the ranks sum their
  /// figures: every rank's EpochSummary holds the same bits as one
  /// process's evaluation of the same parameters. Rank 0 alone writes
  /// checkpoints (they do not depend on the number of ranks) and decides
  /// when a time budget or early stopping ends training. An
  /// error on one rank before training leaves the others waiting in a
  /// collective: abort the communicator (fusec train does). Null or one
  /// rank: a single process.
  Communicator *communicator = nullptr;
};

/// After each call of the K-step function.
struct FitProgress {
  int64_t epoch = 0; ///< counting from 0
  int64_t epochs = 0;
  int64_t stepInEpoch = 0; ///< steps of this epoch done
  int64_t stepsPerEpoch = 0;
  int64_t stepsRun = 0; ///< of those, run by this call (not resumed)
  double meanLoss = 0;  ///< over the steps run
  double seconds = 0;   ///< their training time
};

struct EpochSummary {
  int64_t epoch = 0;
  int64_t steps = 0;    ///< steps run in this epoch (by this run)
  double trainLoss = 0; ///< their mean loss
  double seconds = 0;   ///< their training time
  std::optional<double> testLoss, testAccuracy;
  /// On the validation set (validationSplit or validationData).
  std::optional<double> validationLoss, validationAccuracy;
  /// False when maxSeconds ended training before the epoch's last step.
  bool complete = true;
};

struct FitSummary {
  std::vector<EpochSummary> history;
  int64_t steps = 0;      ///< steps run by this call
  int64_t totalSteps = 0; ///< the step counter at the end
  int64_t stepsPerCall = 0;
  int64_t batchSize = 0;
  uint64_t seed = 0;
  double trainSeconds = 0;
  double compileSeconds = 0;
  unsigned threads = 1; ///< threads of each call (the engine's)
  int ranks = 1;        ///< processes of a data-parallel run
  /// Of trainSeconds, the time compiled code spent summing gradients across
  /// the ranks (waiting for the slowest included).
  double allReduceSeconds = 0;
  /// Every rank's allReduceSeconds, in rank order (one entry in one
  /// process): where they differ, the larger waited for the slower rank.
  std::vector<double> allReduceSecondsPerRank;
  /// The communicator's allReduceAlgorithm(); empty without one.
  std::string allReduceAlgorithm;
  /// The time spent evaluating on the test and validation sets after the
  /// epochs (not part of trainSeconds), the ranks' reduction included.
  double evaluationSeconds = 0;
  /// maxSeconds ended training before --epochs were done.
  bool stoppedEarly = false;
  /// Early stopping ended training (after history.back()).
  bool earlyStopped = false;
  /// The epoch (counting from 0) of the lowest validation loss of this run.
  std::optional<int64_t> bestEpoch;
  /// restoreBestWeights restored it: the trainer and the final checkpoint
  /// hold its parameters, states and step.
  bool restoredBestWeights = false;
  /// The examples trained on and validated on (validationSplit).
  int64_t trainExamples = 0, validationExamples = 0;
};

struct FitCallbacks {
  std::function<void(int64_t epoch, int64_t epochs)> onEpochBegin;
  std::function<void(const FitProgress &)> onCall;
  std::function<void(const EpochSummary &)> onEpochEnd;
};

/// Which of a step function's two batch inputs `fit` takes for the labels,
/// 0 or 1: the one with a class count (`ArgumentInfo::classes`: it feeds a
/// cross-entropy, or a gather's indices) when the other has none, else the
/// integer one of an integer and a float, else the second (a sequence
/// model's tokens and next tokens, both marked: `(x, y)`).
unsigned labelsArgument(const ArgumentInfo &first, const ArgumentInfo &second);

/// Trains `engine`'s step function on `train` and, after each epoch,
/// evaluates it on `test` if given. The step function takes two batch
/// inputs: the labels are the one feeding a cross-entropy, else the
/// integer one of an integer and a float, else the second. Each must have
/// its data's dtype and a static shape per example with as many elements
/// as the data's (the inputs of a 28x28 image may be 784 values), or a
/// shape of the data's rank whose dynamic dims take the data's (a sequence
/// model's `?x?xi32` tokens train on windows of any length). The
/// checkpoint's metadata holds the seed, batch size and number of training
/// examples, which fix the data order: resuming with other ones is an
/// error. When the
/// labels feed a cross-entropy over C classes (`ArgumentInfo::classes`),
/// every label of both sources must be in [0, C).
llvm::Expected<FitSummary> fit(Engine &engine, const data::DataSource &train,
                               const data::DataSource *test,
                               const FitOptions &options,
                               const FitCallbacks &callbacks = {});

} // namespace fuse

#endif // FUSE_FIT_H
