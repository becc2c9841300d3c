//===- LabelRange.cpp - Class labels outside [0, C) -----------------------===//

#include "fuse/LabelRange.h"

using namespace fuse;

namespace {

/// Scans `labels` of element type `T` in row-major order.
template <typename T>
std::optional<BadLabel> scan(const Tensor &labels, int64_t classes) {
  const T *data = labels.data<T>();
  int64_t count = labels.numElements();
  auto outside = [&](int64_t v) { return v < 0 || v >= classes; };
  if (labels.isContiguous()) {
    for (int64_t k = 0; k < count; ++k)
      if (outside(static_cast<int64_t>(data[k])))
        return BadLabel{k, static_cast<int64_t>(data[k])};
    return std::nullopt;
  }
  // A strided view: an odometer over its multi-index.
  llvm::SmallVector<int64_t, 4> index(labels.rank(), 0);
  int64_t offset = 0;
  for (int64_t k = 0; k < count; ++k) {
    if (outside(static_cast<int64_t>(data[offset])))
      return BadLabel{k, static_cast<int64_t>(data[offset])};
    for (int64_t d = labels.rank() - 1; d >= 0; --d) {
      offset += labels.strides()[d];
      if (++index[d] < labels.shape()[d])
        break;
      offset -= index[d] * labels.strides()[d];
      index[d] = 0;
    }
  }
  return std::nullopt;
}

} // namespace

std::optional<BadLabel> fuse::findLabelOutside(const Tensor &labels,
                                               int64_t classes) {
  switch (labels.dtype()) {
  case DType::I8:
    return scan<int8_t>(labels, classes);
  case DType::I16:
    return scan<int16_t>(labels, classes);
  case DType::I32:
    return scan<int32_t>(labels, classes);
  case DType::I64:
    return scan<int64_t>(labels, classes);
  default:
    return std::nullopt;
  }
}

std::string fuse::labelPosition(llvm::ArrayRef<int64_t> shape, int64_t index) {
  llvm::SmallVector<int64_t, 4> position(shape.size());
  for (int64_t d = int64_t(shape.size()) - 1, rest = index; d >= 0; --d) {
    position[d] = shape[d] ? rest % shape[d] : 0;
    rest = shape[d] ? rest / shape[d] : 0;
  }
  std::string text;
  for (int64_t k : position)
    text += (text.empty() ? "" : ", ") + std::to_string(k);
  return text;
}
