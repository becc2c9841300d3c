//===- TensorDataSource.h - A data source of two tensors --------*- C++ -*-===//
//
// The in-memory data source: inputs [N, ...] and labels [N, ...] of any
// dtype, example i being row i of each. The IDX reader returns one; a
// library user builds one from tensors.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_DATA_TENSORDATASOURCE_H
#define FUSE_DATA_TENSORDATASOURCE_H

#include "fuse/Data/DataSource.h"

namespace fuse::data {

class TensorDataSource : public DataSource {
public:
  /// A source of `inputs` and `labels`: contiguous, at least 1-d, with the
  /// same N (possibly 0). The memory of a view must outlive the source (an
  /// owning tensor's is shared). With `numClasses`, every label must be in
  /// [0, numClasses) (checked here), and numClasses() says so.
  static llvm::Expected<TensorDataSource>
  create(Tensor inputs, Tensor labels,
         std::optional<int64_t> numClasses = std::nullopt);

  const Tensor &inputs() const { return inputs_; }
  const Tensor &labels() const { return labels_; }

  int64_t size() const override { return inputs_.shape()[0]; }
  TensorSpec input() const override;
  TensorSpec label() const override;
  llvm::Error gather(llvm::ArrayRef<int64_t> indices, void *inputs,
                     void *labels) const override;
  std::optional<int64_t> numClasses() const override { return numClasses_; }
  llvm::Expected<std::optional<BadLabel>>
  findLabelOutside(int64_t classes) const override;

private:
  TensorDataSource(Tensor inputs, Tensor labels,
                   std::optional<int64_t> numClasses);

  Tensor inputs_, labels_;
  std::optional<int64_t> numClasses_;
  /// Bytes of one example's inputs and labels.
  size_t inputBytes_ = 0, labelBytes_ = 0;
};

} // namespace fuse::data

#endif // FUSE_DATA_TENSORDATASOURCE_H
