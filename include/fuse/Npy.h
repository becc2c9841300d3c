//===- Npy.h - NumPy .npy files ---------------------------------*- C++ -*-===//

#ifndef FUSE_NPY_H
#define FUSE_NPY_H

#include "fuse/Tensor.h"

#include "llvm/Support/Error.h"

namespace fuse {

/// Reads a C-order .npy file (format 1.0-3.0) of a supported dtype.
llvm::Expected<Tensor> readNpy(llvm::StringRef path);

/// Writes `tensor` as a version 1.0 .npy file.
llvm::Error writeNpy(llvm::StringRef path, const Tensor &tensor);

} // namespace fuse

#endif // FUSE_NPY_H
