//===- DataSource.h - Examples of inputs and labels ------------*- C++ -*-===//
//
// What `fuse::fit` trains on, split as Keras' and PyTorch's data pipelines
// split it: a source says how many examples it holds, what an example's
// inputs and labels are (any dtype, any rank) and copies examples by index;
// the batching, seeded shuffling and prefetching (Batches.h) are the same
// for every source. The IDX reader and in-memory tensors are sources
// (TensorDataSource.h).
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_DATA_DATASOURCE_H
#define FUSE_DATA_DATASOURCE_H

#include "fuse/LabelRange.h"
#include "fuse/Tensor.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace fuse::data {

/// The dtype and shape of one example's inputs or labels.
struct TensorSpec {
  DType dtype = DType::F32;
  /// Without the example dim; empty for a scalar (one class label).
  llvm::SmallVector<int64_t, 4> shape;

  int64_t numElements() const;
  /// "28x28xf32", "i32".
  std::string str() const;
};

/// A data set of examples, each an input and a label tensor.
class DataSource {
public:
  virtual ~DataSource();

  /// The number of examples, N.
  virtual int64_t size() const = 0;
  virtual TensorSpec input() const = 0;
  virtual TensorSpec label() const = 0;

  /// Copies the examples `indices` (each in [0, N)), in that order, into
  /// `inputs` and `labels`: contiguous row-major buffers of indices.size()
  /// examples of input() and label(). Either may be null: that side is not
  /// copied. Called from the input pipeline's prefetch thread, and from
  /// more than one thread at once: it must not change the source.
  virtual llvm::Error gather(llvm::ArrayRef<int64_t> indices, void *inputs,
                             void *labels) const = 0;

  /// A bound the source guarantees: every label is in [0, numClasses()).
  /// `fit` skips scanning the labels of a source whose bound is within the
  /// model's class count.
  virtual std::optional<int64_t> numClasses() const { return std::nullopt; }

  /// The first label outside [0, classes), its index row-major over all
  /// examples' labels; none for float labels. By default, gathers the
  /// labels in blocks.
  virtual llvm::Expected<std::optional<BadLabel>>
  findLabelOutside(int64_t classes) const;
};

/// The examples `indices` of `parent` (each in [0, parent.size())), in
/// that order. The parent must outlive it.
class SubsetDataSource : public DataSource {
public:
  SubsetDataSource(const DataSource &parent, std::vector<int64_t> indices)
      : parent_(&parent), indices_(std::move(indices)) {}
  int64_t size() const override { return int64_t(indices_.size()); }
  TensorSpec input() const override { return parent_->input(); }
  TensorSpec label() const override { return parent_->label(); }
  llvm::Error gather(llvm::ArrayRef<int64_t> indices, void *inputs,
                     void *labels) const override;
  std::optional<int64_t> numClasses() const override {
    return parent_->numClasses();
  }
  llvm::ArrayRef<int64_t> indices() const { return indices_; }

private:
  const DataSource *parent_;
  std::vector<int64_t> indices_;
};

/// The number of examples of `n` that a validation split of `fraction`
/// holds out, as Keras' `validation_split`: n - floor(n * (1 - fraction)).
int64_t validationCount(int64_t n, double fraction);

/// `source` split for validation as Keras' `validation_split`, the examples
/// drawn by a seeded permutation (the same `seed` holds out the same ones;
/// each part in ascending order): the training part first. Errors name
/// --validation-split: a fraction outside (0, 1), or a part left empty.
llvm::Expected<std::pair<SubsetDataSource, SubsetDataSource>>
splitForValidation(const DataSource &source, double fraction, uint64_t seed);

} // namespace fuse::data

#endif // FUSE_DATA_DATASOURCE_H
