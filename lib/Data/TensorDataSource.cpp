//===- TensorDataSource.cpp - A data source of two tensors ----------------===//

#include "fuse/Data/TensorDataSource.h"

#include <cassert>
#include <cstring>

using namespace fuse;
using namespace fuse::data;
using llvm::Error;
using llvm::Expected;

/// The spec of one row of the contiguous [N, ...] tensor `t`.
static TensorSpec rowSpec(const Tensor &t) {
  TensorSpec spec;
  spec.dtype = t.dtype();
  spec.shape.assign(t.shape().begin() + 1, t.shape().end());
  return spec;
}

Expected<TensorDataSource>
TensorDataSource::create(Tensor inputs, Tensor labels,
                         std::optional<int64_t> numClasses) {
  auto check = [](const Tensor &t, llvm::StringRef what) -> Error {
    if (t.rank() == 0)
      return llvm::createStringError(
          "the " + what +
          " are 0-d; a data source's tensors are [examples, ...]");
    if (!t.isContiguous())
      return llvm::createStringError("the " + what + " are not contiguous");
    return Error::success();
  };
  if (Error err = check(inputs, "inputs"))
    return std::move(err);
  if (Error err = check(labels, "labels"))
    return std::move(err);
  if (labels.shape()[0] != inputs.shape()[0])
    return llvm::createStringError(
        "the labels hold " + llvm::Twine(labels.shape()[0]) +
        " examples, the inputs " + llvm::Twine(inputs.shape()[0]));
  if (numClasses) {
    if (*numClasses < 1)
      return llvm::createStringError("the class count must be at least 1, "
                                     "got " +
                                     llvm::Twine(*numClasses));
    if (std::optional<BadLabel> bad =
            fuse::findLabelOutside(labels, *numClasses))
      return llvm::createStringError("label #" + llvm::Twine(bad->index) +
                                     " is " + llvm::Twine(bad->value) +
                                     ", outside [0, " +
                                     llvm::Twine(*numClasses) + ")");
  }
  return TensorDataSource(std::move(inputs), std::move(labels), numClasses);
}

TensorDataSource::TensorDataSource(Tensor inputs, Tensor labels,
                                   std::optional<int64_t> numClasses)
    : inputs_(std::move(inputs)), labels_(std::move(labels)),
      numClasses_(numClasses) {
  inputBytes_ = rowSpec(inputs_).numElements() * byteWidth(inputs_.dtype());
  labelBytes_ = rowSpec(labels_).numElements() * byteWidth(labels_.dtype());
}

TensorSpec TensorDataSource::input() const { return rowSpec(inputs_); }

TensorSpec TensorDataSource::label() const { return rowSpec(labels_); }

Error TensorDataSource::gather(llvm::ArrayRef<int64_t> indices, void *inputs,
                               void *labels) const {
  auto copy = [&](const Tensor &from, size_t rowBytes, void *to) {
    if (!to)
      return;
    auto *src = static_cast<const char *>(from.data());
    auto *dst = static_cast<char *>(to);
    for (size_t i = 0; i < indices.size(); ++i) {
      assert(indices[i] >= 0 && indices[i] < size() && "no such example");
      std::memcpy(dst + i * rowBytes, src + indices[i] * rowBytes, rowBytes);
    }
  };
  copy(inputs_, inputBytes_, inputs);
  copy(labels_, labelBytes_, labels);
  return Error::success();
}

Expected<std::optional<BadLabel>>
TensorDataSource::findLabelOutside(int64_t classes) const {
  return fuse::findLabelOutside(labels_, classes);
}
