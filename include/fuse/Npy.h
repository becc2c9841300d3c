//===- Npy.h - NumPy .npy files ---------------------------------*- C++ -*-===//

#ifndef FUSE_NPY_H
#define FUSE_NPY_H

#include "fuse/Tensor.h"

#include "llvm/Support/Error.h"

namespace fuse {

/// Reads a C-order .npy file (format 1.0-3.0) of a supported dtype.
///
/// bf16, which NumPy lacks, is stored as its bits: descr '<u2' (uint16),
/// each element the top half of the f32 it rounds (to nearest even). Fuse
/// has no uint16 dtype, so every '<u2' array it reads is bf16. In NumPy:
/// `np.save(f, x.astype(ml_dtypes.bfloat16).view(np.uint16))`, and back
/// `(np.load(f).astype(np.uint32) << 16).view(np.float32)`.
llvm::Expected<Tensor> readNpy(llvm::StringRef path);

/// Writes `tensor` as a version 1.0 .npy file (bf16 as '<u2', above).
llvm::Error writeNpy(llvm::StringRef path, const Tensor &tensor);

} // namespace fuse

#endif // FUSE_NPY_H
