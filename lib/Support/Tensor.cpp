//===- Tensor.cpp - Tensors passed to and from compiled functions ---------===//

#include "fuse/Tensor.h"

#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <cstring>
#include <random>

using namespace fuse;

bool fuse::isFloatingPoint(DType dtype) {
  return dtype == DType::F32 || dtype == DType::F64 || dtype == DType::F16 ||
         dtype == DType::BF16;
}

size_t fuse::byteWidth(DType dtype) {
  switch (dtype) {
  case DType::F64:
  case DType::I64:
    return 8;
  case DType::F32:
  case DType::I32:
    return 4;
  case DType::F16:
  case DType::BF16:
  case DType::I16:
    return 2;
  case DType::I1:
  case DType::I8:
    return 1;
  }
  return 0;
}

llvm::StringRef fuse::dtypeName(DType dtype) {
  switch (dtype) {
  case DType::F32:
    return "f32";
  case DType::F64:
    return "f64";
  case DType::F16:
    return "f16";
  case DType::BF16:
    return "bf16";
  case DType::I1:
    return "i1";
  case DType::I8:
    return "i8";
  case DType::I16:
    return "i16";
  case DType::I32:
    return "i32";
  case DType::I64:
    return "i64";
  }
  return "?";
}

std::optional<DType> fuse::parseDType(llvm::StringRef name) {
  return llvm::StringSwitch<std::optional<DType>>(name)
      .Case("f32", DType::F32)
      .Case("f64", DType::F64)
      .Case("f16", DType::F16)
      .Case("bf16", DType::BF16)
      .Case("i1", DType::I1)
      .Case("i8", DType::I8)
      .Case("i16", DType::I16)
      .Case("i32", DType::I32)
      .Case("i64", DType::I64)
      .Default(std::nullopt);
}

static llvm::SmallVector<int64_t, 4>
rowMajorStrides(llvm::ArrayRef<int64_t> shape) {
  llvm::SmallVector<int64_t, 4> strides(shape.size(), 1);
  for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * shape[i + 1];
  return strides;
}

int64_t Tensor::numElements() const {
  int64_t n = 1;
  for (int64_t d : shape_)
    n *= d;
  return n;
}

Tensor Tensor::empty(DType dtype, llvm::ArrayRef<int64_t> shape) {
  Tensor t;
  t.dtype_ = dtype;
  t.shape_.assign(shape.begin(), shape.end());
  t.strides_ = rowMajorStrides(shape);
  size_t bytes = static_cast<size_t>(t.numElements()) * byteWidth(dtype);
  // aligned_alloc wants a multiple of the alignment, and never size 0.
  size_t rounded = (bytes + 63) / 64 * 64;
  void *memory = std::aligned_alloc(64, rounded ? rounded : 64);
  t.storage_ = std::shared_ptr<void>(memory, std::free);
  t.data_ = memory;
  return t;
}

Tensor Tensor::zeros(DType dtype, llvm::ArrayRef<int64_t> shape) {
  Tensor t = empty(dtype, shape);
  std::memset(t.data_, 0, t.numElements() * byteWidth(dtype));
  return t;
}

Tensor Tensor::uniform(llvm::ArrayRef<int64_t> shape, unsigned seed, float lo,
                       float hi) {
  Tensor t = empty(DType::F32, shape);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  for (int64_t i = 0; i < t.numElements(); ++i)
    t.data<float>()[i] = dist(rng);
  return t;
}

Tensor Tensor::view(void *data, DType dtype, llvm::ArrayRef<int64_t> shape,
                    llvm::ArrayRef<int64_t> strides) {
  Tensor t;
  t.dtype_ = dtype;
  t.data_ = data;
  t.shape_.assign(shape.begin(), shape.end());
  if (strides.empty())
    t.strides_ = rowMajorStrides(shape);
  else
    t.strides_.assign(strides.begin(), strides.end());
  return t;
}

bool Tensor::isContiguous() const {
  if (strides_.size() != shape_.size())
    return false;
  int64_t expected = 1;
  for (int64_t d = rank() - 1; d >= 0; --d) {
    if (shape_[d] != 1 && strides_[d] != expected)
      return false;
    expected *= shape_[d];
  }
  return true;
}

Tensor Tensor::contiguousCopy() const {
  Tensor copy = empty(dtype_, shape_);
  size_t width = byteWidth(dtype_);
  int64_t count = numElements();
  if (isContiguous()) {
    std::memcpy(copy.data_, data_, count * width);
    return copy;
  }
  llvm::SmallVector<int64_t, 4> index(shape_.size(), 0);
  auto *src = static_cast<const char *>(data_);
  auto *dst = static_cast<char *>(copy.data_);
  for (int64_t n = 0; n < count; ++n) {
    int64_t offset = 0;
    for (size_t d = 0; d < index.size(); ++d)
      offset += index[d] * strides_[d];
    std::memcpy(dst + n * width, src + offset * width, width);
    for (int64_t d = rank() - 1; d >= 0; --d) {
      if (++index[d] < shape_[d])
        break;
      index[d] = 0;
    }
  }
  return copy;
}

std::string Tensor::typeString() const {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "tensor<";
  for (int64_t d : shape_)
    os << d << "x";
  os << dtypeName(dtype_) << ">";
  return text;
}
