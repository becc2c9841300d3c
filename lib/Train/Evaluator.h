//===- Evaluator.h - Running a model's derived functions on data -*- C++
//-*-===//
//
// What fit's evaluation, fuse::evaluate and fuse::predict share (internal to
// lib/Train): matching a function's batch inputs to a data source, and
// running `@<step>_eval` or `@<step>_predict` over a source in batches, the
// parameters taken from a Trainer by name.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_LIB_TRAIN_EVALUATOR_H
#define FUSE_LIB_TRAIN_EVALUATOR_H

#include "fuse/Communicator.h"
#include "fuse/Data/DataSource.h"
#include "fuse/Engine.h"
#include "fuse/Trainer.h"

#include <functional>
#include <optional>

namespace fuse::detail {

/// Where a function takes the inputs and labels of a batch, and the shapes
/// it wants an example's in.
struct BatchLayout {
  unsigned inputs = 0, labels = 0; ///< positions among its batch inputs
  std::vector<int64_t> inputShape, labelShape;
};

/// Matches `batchArgs` (a step's or an evaluation's batch inputs, whose
/// leading `lead` dims are steps and examples) to the data source: inputs
/// and labels, or with `labelled` false (a prediction) the inputs alone.
llvm::Expected<BatchLayout> matchData(llvm::StringRef function,
                                      llvm::ArrayRef<ArgumentInfo> batchArgs,
                                      size_t lead, const data::DataSource &data,
                                      int64_t batchSize, bool labelled = true);

/// Checks the labels of the data source `what` against the class count of
/// the model's labels argument `arg` (none: nothing to check).
llvm::Error checkLabels(const data::DataSource &data, const ArgumentInfo &arg,
                        llvm::StringRef what);

/// A view of the contiguous `t` as `lead` dims then `example`.
Tensor reshaped(const Tensor &t, llvm::ArrayRef<int64_t> lead,
                llvm::ArrayRef<int64_t> example);

/// A zeroed buffer of `count` examples of `spec`.
llvm::Expected<Tensor> examples(const data::TensorSpec &spec, int64_t count,
                                const llvm::Twine &what);

/// Rank `rank` of `ranks`' share of `batches` evaluation batches: the
/// contiguous range [first, end), shares differing by at most one batch
/// (ranks past the batches get none).
std::pair<int64_t, int64_t> shardBatches(int64_t batches, int rank, int ranks);

/// The batch size evaluating `n` examples in batches of at most `wanted`
/// uses: one that divides n where one of at least wanted / 2 does (one
/// specialization), else `wanted` (capped at n).
int64_t evaluationBatch(int64_t wanted, int64_t n);

/// The model's `<step>_eval` (fuse-derive-eval) run over a data set.
class Evaluator {
public:
  /// None when the model has no evaluation function (a hand-written step).
  /// `what` names the set in errors ("test", "validation").
  static llvm::Expected<std::optional<Evaluator>>
  create(Engine &engine, const Trainer &trainer, llvm::StringRef step,
         int64_t batchSize, const data::DataSource &test,
         llvm::StringRef what = "test");

  /// The arguments of the specializations evaluation will use (only their
  /// shapes matter), for Function::prepare.
  llvm::Expected<std::vector<std::vector<Tensor>>>
  preparedArguments(const Trainer &trainer, const data::DataSource &test) const;
  Function &function() const { return *eval_; }
  int64_t batchSize() const { return batch_; }

  /// The mean loss and the accuracy over `test`. With a communicator of
  /// several ranks (a data-parallel fit: every rank calls it), each rank
  /// evaluates a contiguous share of the batches (shardBatches) and the
  /// ranks sum their batches' figures: every rank returns the same results,
  /// the same bits as one process evaluating every batch (the batches, and
  /// the order their losses are added in, are the same).
  llvm::Expected<std::pair<double, std::optional<double>>>
  run(const Trainer &trainer, const data::DataSource &test,
      Communicator *comm = nullptr);

private:
  explicit Evaluator(Function &eval) : eval_(&eval) {}

  /// The trainer's states the function reads, in stateArgs_ order: fetched
  /// once per evaluation (a weight the trainer holds as split halves is
  /// joined into a new tensor, which may fail to allocate).
  llvm::Expected<std::vector<Tensor>> states(const Trainer &trainer) const;
  /// `states` and the first `count` examples of the batch buffers.
  std::vector<Tensor> arguments(llvm::ArrayRef<Tensor> states,
                                int64_t count) const;

  Function *eval_;
  std::vector<std::pair<size_t, std::string>> stateArgs_;
  std::vector<size_t> batchArgs_;
  BatchLayout layout_;
  int64_t batch_ = 1;
  bool hasAccuracy_ = false;
  /// One batch of the test source, and its example indices.
  Tensor inputs_, labels_;
  int64_t labelsPerExample_ = 1;
  std::vector<int64_t> indices_;
};

/// One batch of predictions: examples [begin, begin + count) of the source,
/// their logits and probabilities ([count * rows, classes] f32 each, rows
/// predicted per example) and labels (the source's, as gathered).
struct PredictedBatch {
  int64_t begin = 0, count = 0;
  const Tensor *logits = nullptr, *probabilities = nullptr;
  const Tensor *labels = nullptr;
};

/// The model's `<step>_predict` (fuse-derive-predict) run over a data set.
class Predictor {
public:
  /// An error naming the model when it has no prediction function.
  static llvm::Expected<Predictor>
  create(Engine &engine, const Trainer &trainer, llvm::StringRef step,
         int64_t batchSize, const data::DataSource &data);

  Function &function() const { return *predict_; }
  int64_t batchSize() const { return batch_; }
  /// Rows of logits per example (a sequence model's positions), and the
  /// number of classes; known after the first batch.
  int64_t rowsPerExample() const { return rows_; }
  int64_t classes() const { return classes_; }

  /// Calls `each` with every batch of `data`, in order.
  llvm::Error
  run(const Trainer &trainer, const data::DataSource &data,
      const std::function<llvm::Error(const PredictedBatch &)> &each);

private:
  explicit Predictor(Function &predict) : predict_(&predict) {}

  Function *predict_;
  std::vector<std::pair<size_t, std::string>> stateArgs_;
  size_t inputArg_ = 0;
  std::vector<int64_t> inputShape_;
  int64_t batch_ = 1;
  int64_t rows_ = 0, classes_ = 0;
  Tensor inputs_, labels_;
  std::vector<int64_t> indices_;
};

} // namespace fuse::detail

#endif // FUSE_LIB_TRAIN_EVALUATOR_H
