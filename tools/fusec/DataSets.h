//===- DataSets.h - The data of fusec's train, predict, evaluate -*- C++
//-*-===//
//
// One way to turn --format, --data, --context and --validation-fraction
// into data sources, shared by `fusec train`, `fusec predict` and `fusec
// evaluate`: an IDX set's train and test splits, or a text's training
// windows and held-out validation windows. Predictions and evaluations
// run on the test split (the validation windows of a text): the data
// train evaluated on after each epoch.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_TOOLS_FUSEC_DATASETS_H
#define FUSE_TOOLS_FUSEC_DATASETS_H

#include "fuse/Data/TensorDataSource.h"
#include "fuse/Data/TextDataSource.h"
#include "fuse/Engine.h"

#include <memory>
#include <optional>

namespace fusec {

/// What a text run reads, for the summaries.
struct TextInfo {
  int64_t context = 0;
  int64_t files = 0, bytes = 0;
  int64_t trainWindows = 0, validationWindows = 0, validationBytes = 0;
};

/// The class count the data's labels must fit: the smallest C of the
/// cross-entropies the step function `step`'s integer per-step arguments
/// (the labels) feed, as fuse-mark-class-labels found it. An error naming
/// the model when a label argument has none (its labels are computed, or
/// feed no cross-entropy): fusec never runs on unchecked labels. A text
/// model's tokens are integers too: with `text`, the integer arguments that
/// feed no cross-entropy are inputs, and one must feed one.
llvm::Expected<int64_t> classCount(fuse::Engine &engine, llvm::StringRef model,
                                   llvm::StringRef step, bool text);

/// The window length of a text model: the static T of the step function's
/// token input [B, T] (the batch input fit does not take for the labels),
/// or an error saying why --context is needed.
llvm::Expected<int64_t> modelContext(fuse::Engine &engine,
                                     llvm::StringRef step);

/// What the data options chose.
struct DataChoice {
  bool text = false;
  std::string path;
  /// --context; none: the model's.
  std::optional<int64_t> context;
  double validationFraction = fuse::data::kDefaultValidationFraction;
  /// The option that set it, for errors.
  std::string validationOption = "--validation-fraction";
  /// Load the IDX training split too (train); predictions and evaluations
  /// read only the test split.
  bool withTrain = true;
};

struct DataSets {
  std::optional<fuse::data::TensorDataSource> idxTrain, idxTest;
  std::optional<fuse::data::TextSplit> textSplit;
  TextInfo textInfo;
  /// The training source (null unless loaded) and the test source.
  const fuse::data::DataSource *train = nullptr, *test = nullptr;
};

/// The sources `choice` names for `model`'s step function `step`, its
/// labels checked against the model's class count.
llvm::Expected<std::unique_ptr<DataSets>>
loadDataSets(fuse::Engine &engine, llvm::StringRef model, llvm::StringRef step,
             const DataChoice &choice);

/// Examples per evaluation call of a text model with windows of `context`
/// tokens: about 64K tokens, so that its logits stay a few tens of MB
/// whatever the window length.
int64_t evaluationBatchSize(int64_t context);

} // namespace fusec

#endif // FUSE_TOOLS_FUSEC_DATASETS_H
