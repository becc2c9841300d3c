//===- Idx.h - IDX data sets (MNIST, Fashion-MNIST) -------------*- C++ -*-===//
//
// Reads the IDX format of MNIST and Fashion-MNIST (big-endian header, then
// raw elements), gzip-compressed or not, into one contiguous tensor: images
// as f32 scaled to [0, 1], labels as i32; a split of images and labels is a
// data source for `fuse::fit`. Errors name the file and what is wrong with
// it; nothing aborts.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_DATA_IDX_H
#define FUSE_DATA_IDX_H

#include "fuse/Data/TensorDataSource.h"

#include "llvm/Support/Error.h"

namespace fuse::data {

/// Where Debian's `dataset-fashion-mnist` package puts the data set.
constexpr llvm::StringLiteral kFashionMnistDir =
    "/usr/share/datasets/fashion-mnist";

/// The elements of an IDX file of unsigned bytes (type 0x08), shaped by its
/// header: u8 values as i32 when `rank` is 1, f32 / 255 otherwise.
llvm::Expected<Tensor> readIdx(llvm::StringRef path);

enum class Split { Train, Test };

/// `train-images-idx3-ubyte(.gz)` and `train-labels-idx1-ubyte(.gz)` (or
/// `t10k-...` for the test split) from `dir`, checked against each other:
/// as many labels as images, every label in [0, numClasses). Its inputs are
/// the images [N, rows, cols] in [0, 1], its labels [N] i32, and its
/// numClasses() is `numClasses`.
llvm::Expected<TensorDataSource> loadIdxSplit(llvm::StringRef dir, Split split,
                                              int64_t numClasses = 10);

} // namespace fuse::data

#endif // FUSE_DATA_IDX_H
