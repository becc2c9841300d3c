//===- Tensor.h - Tensors passed to and from compiled functions -*- C++ -*-===//

#ifndef FUSE_TENSOR_H
#define FUSE_TENSOR_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace fuse {

/// Element types a compiled function accepts and returns.
enum class DType : uint8_t { F32, F64, F16, BF16, I1, I8, I16, I32, I64 };

/// Whether `dtype` is a floating-point type (f32, f64, f16, bf16).
bool isFloatingPoint(DType dtype);
/// Bytes per element (an `i1` element takes one byte).
size_t byteWidth(DType dtype);
/// The MLIR spelling: "f32", "i64", ...
llvm::StringRef dtypeName(DType dtype);
/// The dtype of an MLIR spelling, if any.
std::optional<DType> parseDType(llvm::StringRef name);

/// The bytes of a row-major tensor of `dtype` and `shape`, or nullopt when a
/// dim is negative or the size does not fit in int64_t.
std::optional<int64_t> tensorBytes(DType dtype, llvm::ArrayRef<int64_t> shape);

/// The largest tensor Tensor::allocate accepts (and the largest result or
/// workspace the engine compiles for): the machine's physical memory (or
/// cgroup limit). A larger request could only succeed through overcommit and
/// end in the OOM killer when touched, so it is an error up front. The
/// environment variable FUSE_MAX_TENSOR_BYTES, a decimal byte count,
/// replaces the bound (read on every call: tests set it to be independent
/// of the host; other values are ignored with a warning).
uint64_t maxTensorBytes();
/// "the memory of this machine (N bytes)" or "FUSE_MAX_TENSOR_BYTES (N
/// bytes)": the bound and where it comes from, for diagnostics.
std::string describeMaxTensorBytes();

/// `value` rounded to bf16 (nearest, ties to even; NaN stays a quiet NaN
/// of the same sign), as its bits: the conversion `fuse.cast` compiles.
uint16_t floatToBF16(float value);
/// The f32 a bf16 holds exactly (its bits the top half).
float bf16ToFloat(uint16_t bits);
template <typename T> constexpr DType dtypeOf();
template <> constexpr DType dtypeOf<float>() { return DType::F32; }
template <> constexpr DType dtypeOf<double>() { return DType::F64; }
template <> constexpr DType dtypeOf<bool>() { return DType::I1; }
template <> constexpr DType dtypeOf<int8_t>() { return DType::I8; }
template <> constexpr DType dtypeOf<int16_t>() { return DType::I16; }
template <> constexpr DType dtypeOf<int32_t>() { return DType::I32; }
template <> constexpr DType dtypeOf<int64_t>() { return DType::I64; }

/// A dense n-d array: dtype, shape, strides (in elements) and data. It either
/// owns its buffer (64-byte aligned, shared between copies of the Tensor) or
/// is a zero-copy view of memory the caller keeps alive.
class Tensor {
public:
  Tensor() = default;

  /// An owning, uninitialized (or zero-filled), row-major tensor, or an
  /// error naming `what` (e.g. "argument 'x'") when a dim is negative, the
  /// byte size overflows, exceeds maxTensorBytes() or cannot be allocated.
  /// Sizes that come from input (files, command lines, compiled functions)
  /// are allocated this way.
  static llvm::Expected<Tensor> allocate(DType dtype,
                                         llvm::ArrayRef<int64_t> shape,
                                         const llvm::Twine &what,
                                         bool zeroed = false);
  /// An owning, zero-filled, row-major tensor. Like empty(), for sizes the
  /// caller knows are valid.
  static Tensor zeros(DType dtype, llvm::ArrayRef<int64_t> shape);
  /// An owning, uninitialized, row-major tensor, for sizes the caller knows
  /// are valid: a size allocate() rejects is a fatal error.
  static Tensor empty(DType dtype, llvm::ArrayRef<int64_t> shape);
  /// An owning row-major f32 tensor of uniform random values in [lo, hi),
  /// the same for the same seed (std::mt19937).
  static Tensor uniform(llvm::ArrayRef<int64_t> shape, unsigned seed,
                        float lo = -1.0f, float hi = 1.0f);
  /// A view of `data`; `strides` in elements, row-major when empty.
  static Tensor view(void *data, DType dtype, llvm::ArrayRef<int64_t> shape,
                     llvm::ArrayRef<int64_t> strides = {});
  /// An owning row-major copy of `values`.
  template <typename T>
  static Tensor fromValues(llvm::ArrayRef<int64_t> shape,
                           llvm::ArrayRef<T> values) {
    Tensor t = empty(dtypeOf<T>(), shape);
    for (size_t i = 0; i < values.size() && i < size_t(t.numElements()); ++i)
      t.data<T>()[i] = values[i];
    return t;
  }

  DType dtype() const { return dtype_; }
  llvm::ArrayRef<int64_t> shape() const { return shape_; }
  llvm::ArrayRef<int64_t> strides() const { return strides_; }
  int64_t rank() const { return static_cast<int64_t>(shape_.size()); }
  /// The product of the dims; INT64_MAX when it overflows (only a view can
  /// have such a shape: allocate() rejects it).
  int64_t numElements() const;
  void *data() const { return data_; }
  /// The data as `T` (which must match the dtype).
  template <typename T> T *data() const { return static_cast<T *>(data_); }
  /// Element at `index` of a tensor of dtype `T`, honoring strides.
  template <typename T> T at(llvm::ArrayRef<int64_t> index) const {
    int64_t offset = 0;
    for (size_t d = 0; d < index.size(); ++d)
      offset += index[d] * strides_[d];
    return data<T>()[offset];
  }
  bool isContiguous() const;
  bool isOwning() const { return static_cast<bool>(storage_); }
  /// An owning row-major copy (fatal if it cannot be allocated).
  Tensor contiguousCopy() const;
  /// An owning row-major copy, or an error naming `what` when it cannot be
  /// allocated (a broadcast view of few bytes may stand for a huge tensor).
  llvm::Expected<Tensor> checkedContiguousCopy(const llvm::Twine &what) const;
  /// The MLIR type spelling, e.g. "tensor<4x?x3xf32>" (here always static).
  std::string typeString() const;

private:
  std::shared_ptr<void> storage_;
  void *data_ = nullptr;
  DType dtype_ = DType::F32;
  llvm::SmallVector<int64_t, 4> shape_;
  llvm::SmallVector<int64_t, 4> strides_;
};

/// An owning row-major copy of a float tensor (f32, f64, f16, bf16) in
/// `dtype` (one of those), every element rounded to nearest, ties to even,
/// as `fuse.cast` does; an error when either dtype is not a float.
llvm::Expected<Tensor> convertFloatTensor(const Tensor &tensor, DType dtype);

} // namespace fuse

#endif // FUSE_TENSOR_H
