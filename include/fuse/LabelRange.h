//===- LabelRange.h - Class labels outside [0, C) ---------------*- C++ -*-===//
//
// The one check that integer class labels are classes of a model: the
// engine runs it on label arguments before each call, `fuse::fit` on both
// data sets and the IDX reader on a split's labels.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_LABELRANGE_H
#define FUSE_LABELRANGE_H

#include "fuse/Tensor.h"

#include <optional>
#include <string>

namespace fuse {

/// A label outside [0, classes).
struct BadLabel {
  /// Its row-major position among the labels.
  int64_t index = 0;
  int64_t value = 0;
};

/// The first element of the integer tensor `labels` (any strides) outside
/// [0, classes), if any; none for a float or i1 tensor.
std::optional<BadLabel> findLabelOutside(const Tensor &labels, int64_t classes);

/// The multi-index of row-major position `index` in `shape`, as "1, 2".
std::string labelPosition(llvm::ArrayRef<int64_t> shape, int64_t index);

} // namespace fuse

#endif // FUSE_LABELRANGE_H
