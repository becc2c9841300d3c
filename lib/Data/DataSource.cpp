//===- DataSource.cpp - Examples of inputs and labels for training --------===//

#include "fuse/Data/DataSource.h"
#include "fuse/Data/Batches.h"

#include <cmath>
#include <cstdio>

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

llvm::Error SubsetDataSource::gather(llvm::ArrayRef<int64_t> indices,
                                     void *inputs, void *labels) const {
  llvm::SmallVector<int64_t, 256> mapped;
  mapped.reserve(indices.size());
  for (int64_t i : indices) {
    if (i < 0 || i >= size())
      return llvm::createStringError("example #" + llvm::Twine(i) +
                                     " is outside the subset's " +
                                     llvm::Twine(size()));
    mapped.push_back(indices_[i]);
  }
  return parent_->gather(mapped, inputs, labels);
}

int64_t fuse::data::validationCount(int64_t n, double fraction) {
  return n - int64_t(std::floor(double(n) * (1.0 - fraction)));
}

llvm::Expected<std::pair<SubsetDataSource, SubsetDataSource>>
fuse::data::splitForValidation(const DataSource &source, double fraction,
                               uint64_t seed) {
  char text[32];
  std::snprintf(text, sizeof(text), "%g", fraction);
  if (!(fraction > 0 && fraction < 1))
    return llvm::createStringError(
        "the validation split must be in (0, 1) (--validation-split " +
        llvm::Twine(text) + ")");
  int64_t n = source.size();
  int64_t held = validationCount(n, fraction);
  if (held < 1 || held >= n)
    return llvm::createStringError(
        "the validation split (--validation-split " + llvm::Twine(text) +
        ") of " + llvm::Twine(n) + " examples leaves " +
        (held < 1 ? "no validation example" : "no training example"));
  // Epoch -1's permutation: the epochs' orders are those of 0, 1, ...
  std::vector<int64_t> order = epochOrder(n, seed, -1);
  std::vector<int64_t> kept(order.begin(), order.end() - held);
  std::vector<int64_t> out(order.end() - held, order.end());
  llvm::sort(kept);
  llvm::sort(out);
  return std::make_pair(SubsetDataSource(source, std::move(kept)),
                        SubsetDataSource(source, std::move(out)));
}
