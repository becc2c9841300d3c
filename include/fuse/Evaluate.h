//===- Evaluate.h - Predictions and metrics of a trained model --*- C++ -*-===//
//
// After training: a model's parameters from a checkpoint or weights file,
// class probabilities for every example of a data source (`fuse::predict`,
// like Keras' `predict`), and its loss and metrics on a labelled source
// (`fuse::evaluate`, like Keras' `evaluate`). `fusec predict` and `fusec
// evaluate` are these calls.
//
// Both run functions the compiler derives from the model's
// `fuse.train_step` (fuse/ABI.h): predictions `@<step>_predict` (the logits
// of the loss's cross-entropy and their softmax, dropout off: the
// probabilities come from the compiled function, so an exported object
// gives the same bits), the loss and accuracy `@<step>_eval`, in the same
// batches as `fuse::fit`'s evaluation: the same figures it reports.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_EVALUATE_H
#define FUSE_EVALUATE_H

#include "fuse/Data/DataSource.h"
#include "fuse/Engine.h"
#include "fuse/Trainer.h"

#include <memory>
#include <optional>

namespace fuse {

/// A Trainer of `engine`'s step function `step` holding the parameters in
/// the safetensors file `path` (a checkpoint of `fuse::fit`, or weights):
/// every parameter the model's prediction or evaluation function reads must
/// be there with its dtype and shape, and every tensor there must be one of
/// the model's (a parameter or optimizer state). The errors name the file
/// and the tensor: a checkpoint of another model is refused.
llvm::Expected<std::unique_ptr<Trainer>>
loadTrainedModel(Engine &engine, llvm::StringRef step, llvm::StringRef path);

struct PredictOptions {
  /// The step function (`fuse.train_step @train`).
  std::string stepFunction = "train";
  /// Examples per call of the prediction function (Keras' default, 32).
  int64_t batchSize = 32;
};

struct Predictions {
  int64_t examples = 0;
  /// Rows predicted per example: 1 for a classifier, a sequence model's
  /// positions (one per label of the example).
  int64_t rowsPerExample = 1;
  int64_t classes = 0;
  /// [examples * rowsPerExample, classes] f32 each, row-major by example:
  /// the logits and their softmax, both from the compiled function.
  Tensor logits, probabilities;
  /// Each row's predicted class: the first of its largest logits.
  std::vector<int64_t> labels;
};

/// Predicts every example of `data` (its labels are not read) with the
/// parameters `model` holds.
llvm::Expected<Predictions> predict(Engine &engine, const Trainer &model,
                                    const data::DataSource &data,
                                    const PredictOptions &options = {});

struct EvaluateOptions {
  std::string stepFunction = "train";
  /// Examples per call (`FitOptions::evalBatchSize`, whose batching it
  /// shares: the same loss as fit's last evaluation).
  int64_t batchSize = 1000;
  /// The k of the top-k accuracy, capped at the number of classes; at
  /// least 1.
  int64_t topK = 5;
};

struct Evaluation {
  int64_t examples = 0;
  /// Labels evaluated: examples times the labels of each (a sequence's
  /// positions).
  int64_t labels = 0;
  /// The mean loss and the accuracy of `@<step>_eval`: what fit reports.
  double loss = 0;
  std::optional<double> accuracy;
  /// From the predictions (none for a model without one): the number of
  /// classes, the k used, the share of labels whose logit fewer than k
  /// logits exceed (a tie counts as right, as the accuracy's does).
  int64_t classes = 0;
  int64_t topK = 0;
  std::optional<double> topKAccuracy;
  /// [classes][classes]: row the true label, column the predicted one (the
  /// first of the largest logits).
  std::vector<std::vector<int64_t>> confusion;
  /// Per class: right predictions of it over predictions of it, and over
  /// labels of it; none where the class was never predicted (precision) or
  /// is never a label (recall).
  std::vector<std::optional<double>> precision, recall;
};

/// The loss and metrics of the parameters `model` holds on the labelled
/// `data`, every label checked against the model's classes.
llvm::Expected<Evaluation> evaluate(Engine &engine, const Trainer &model,
                                    const data::DataSource &data,
                                    const EvaluateOptions &options = {});

} // namespace fuse

#endif // FUSE_EVALUATE_H
