//===- DataSource.cpp - Examples of inputs and labels for training --------===//

#include "fuse/Data/DataSource.h"

#include <algorithm>
#include <numeric>

using namespace fuse;
using namespace fuse::data;
using llvm::Error;
using llvm::Expected;

int64_t TensorSpec::numElements() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

std::string TensorSpec::str() const {
  std::string text;
  for (int64_t d : shape)
    text += std::to_string(d) + "x";
  return text + dtypeName(dtype).str();
}

DataSource::~DataSource() = default;

Expected<std::optional<BadLabel>>
DataSource::findLabelOutside(int64_t classes) const {
  TensorSpec spec = label();
  int64_t n = size(), perExample = spec.numElements();
  if (isFloatingPoint(spec.dtype) || n == 0 || perExample == 0)
    return std::nullopt;
  // Blocks of about 64K labels bound the memory of a large source.
  int64_t block = std::min(n, std::max<int64_t>(1, (1 << 16) / perExample));
  llvm::SmallVector<int64_t, 5> shape = {block};
  shape.append(spec.shape.begin(), spec.shape.end());
  Expected<Tensor> buffer =
      Tensor::allocate(spec.dtype, shape, "a block of labels");
  if (!buffer)
    return buffer.takeError();
  std::vector<int64_t> indices(block);
  for (int64_t begin = 0; begin < n; begin += block) {
    int64_t count = std::min(block, n - begin);
    std::iota(indices.begin(), indices.begin() + count, begin);
    if (Error err = gather(llvm::ArrayRef(indices.data(), count), nullptr,
                           buffer->data()))
      return std::move(err);
    shape[0] = count;
    if (std::optional<BadLabel> bad = fuse::findLabelOutside(
            Tensor::view(buffer->data(), spec.dtype, shape), classes)) {
      bad->index += begin * perExample;
      return bad;
    }
  }
  return std::nullopt;
}
