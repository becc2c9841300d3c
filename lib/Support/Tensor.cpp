//===- Tensor.cpp - Tensors passed to and from compiled functions ---------===//

#include "fuse/Tensor.h"

#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <cstring>
#include <limits>
#include <mutex>
#include <random>
#include <unistd.h>

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

std::optional<int64_t> fuse::tensorBytes(DType dtype,
                                         llvm::ArrayRef<int64_t> shape) {
  if (llvm::any_of(shape, [](int64_t d) { return d < 0; }))
    return std::nullopt;
  // A zero dim anywhere makes the tensor empty, whatever the others are.
  if (llvm::is_contained(shape, 0))
    return 0;
  // MulOverflow, not llvm::checkedMul: the latter goes through APInt, about
  // 170 instructions a multiply, and this runs for arguments on every call.
  int64_t bytes = static_cast<int64_t>(byteWidth(dtype));
  for (int64_t d : shape)
    if (llvm::MulOverflow(bytes, d, bytes))
      return std::nullopt;
  return bytes;
}

/// The cgroup (v2) memory limit of this process, if one is set.
static std::optional<uint64_t> cgroupMemoryLimit() {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> file =
      llvm::MemoryBuffer::getFileAsStream("/sys/fs/cgroup/memory.max");
  uint64_t limit;
  if (!file || (*file)->getBuffer().trim().getAsInteger(10, limit))
    return std::nullopt; // No cgroup v2, or "max".
  return limit;
}

/// FUSE_MAX_TENSOR_BYTES, if set to a byte count (read on every call, so
/// that a test can set it; anything else is ignored with one warning).
static std::optional<uint64_t> maxTensorBytesFromEnvironment() {
  const char *text = std::getenv("FUSE_MAX_TENSOR_BYTES");
  if (!text)
    return std::nullopt;
  uint64_t limit;
  if (!llvm::StringRef(text).trim().getAsInteger(10, limit))
    return limit;
  static std::once_flag warned;
  std::call_once(warned, [&] {
    llvm::errs() << "fuse: warning: FUSE_MAX_TENSOR_BYTES='" << text
                 << "' is not a number of bytes; ignored\n";
  });
  return std::nullopt;
}

uint64_t fuse::maxTensorBytes() {
  if (std::optional<uint64_t> limit = maxTensorBytesFromEnvironment())
    return *limit;
  static const uint64_t limit = [] {
    uint64_t memory = std::numeric_limits<uint64_t>::max();
    long pages = ::sysconf(_SC_PHYS_PAGES), pageSize = ::sysconf(_SC_PAGESIZE);
    if (pages > 0 && pageSize > 0)
      memory = llvm::SaturatingMultiply(uint64_t(pages), uint64_t(pageSize));
    if (std::optional<uint64_t> cgroup = cgroupMemoryLimit())
      memory = std::min(memory, *cgroup);
    return memory;
  }();
  return limit;
}

std::string fuse::describeMaxTensorBytes() {
  return (llvm::Twine(maxTensorBytesFromEnvironment()
                          ? "FUSE_MAX_TENSOR_BYTES"
                          : "the memory of this machine") +
          " (" + llvm::Twine(maxTensorBytes()) + " bytes)")
      .str();
}

static llvm::SmallVector<int64_t, 4>
rowMajorStrides(llvm::ArrayRef<int64_t> shape) {
  // Unsigned: a view's shape may overflow (allocate() rejects such shapes);
  // its strides then wrap instead of being undefined behavior.
  llvm::SmallVector<int64_t, 4> strides(shape.size(), 1);
  for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; --i)
    strides[i] =
        static_cast<int64_t>(uint64_t(strides[i + 1]) * uint64_t(shape[i + 1]));
  return strides;
}

int64_t Tensor::numElements() const {
  if (llvm::is_contained(shape_, 0))
    return 0;
  int64_t n = 1;
  for (int64_t d : shape_)
    if (llvm::MulOverflow(n, d, n))
      return std::numeric_limits<int64_t>::max();
  return n;
}

llvm::Expected<Tensor> Tensor::allocate(DType dtype,
                                        llvm::ArrayRef<int64_t> shape,
                                        const llvm::Twine &what, bool zeroed) {
  Tensor t;
  t.dtype_ = dtype;
  t.shape_.assign(shape.begin(), shape.end());
  auto fail = [&](const llvm::Twine &why) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   what + ": cannot allocate " +
                                       t.typeString() + ": " + why);
  };
  for (auto [d, size] : llvm::enumerate(shape))
    if (size < 0)
      return fail("dim " + llvm::Twine(d) + " is negative");
  std::optional<int64_t> bytes = tensorBytes(dtype, shape);
  if (!bytes)
    return fail("its size in bytes overflows 64 bits");
  uint64_t limit = maxTensorBytes();
  if (uint64_t(*bytes) > limit)
    return fail("its " + llvm::Twine(*bytes) + " bytes exceed " +
                describeMaxTensorBytes());
  // aligned_alloc wants a multiple of the alignment, and never size 0; the
  // size is below 2^63, so rounding up cannot overflow.
  size_t rounded = llvm::alignTo(std::max<uint64_t>(*bytes, 1), 64);
  void *memory = std::aligned_alloc(64, rounded);
  if (!memory)
    return fail("out of memory (" + llvm::Twine(*bytes) + " bytes)");
  if (zeroed)
    std::memset(memory, 0, *bytes);
  t.strides_ = rowMajorStrides(shape);
  t.storage_ = std::shared_ptr<void>(memory, std::free);
  t.data_ = memory;
  return t;
}

Tensor Tensor::empty(DType dtype, llvm::ArrayRef<int64_t> shape) {
  llvm::Expected<Tensor> t = allocate(dtype, shape, "Tensor::empty");
  if (!t)
    llvm::report_fatal_error(t.takeError());
  return std::move(*t);
}

Tensor Tensor::zeros(DType dtype, llvm::ArrayRef<int64_t> shape) {
  llvm::Expected<Tensor> t =
      allocate(dtype, shape, "Tensor::zeros", /*zeroed=*/true);
  if (!t)
    llvm::report_fatal_error(t.takeError());
  return std::move(*t);
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
  // A view's shape may overflow: a product past int64 cannot be a row-major
  // stride of anything, so the next stride checked must differ. Checked on
  // every argument of every call: MulOverflow, not APInt's checkedMul.
  int64_t expected = 1;
  bool overflowed = false;
  for (int64_t d = rank() - 1; d >= 0; --d) {
    if (shape_[d] != 1 && (overflowed || strides_[d] != expected))
      return false;
    if (!overflowed)
      overflowed = llvm::MulOverflow(expected, shape_[d], expected);
  }
  return true;
}

Tensor Tensor::contiguousCopy() const {
  llvm::Expected<Tensor> copy = checkedContiguousCopy("Tensor::contiguousCopy");
  if (!copy)
    llvm::report_fatal_error(copy.takeError());
  return std::move(*copy);
}

llvm::Expected<Tensor>
Tensor::checkedContiguousCopy(const llvm::Twine &what) const {
  llvm::Expected<Tensor> allocated = allocate(dtype_, shape_, what);
  if (!allocated)
    return allocated.takeError();
  Tensor &copy = *allocated;
  size_t width = byteWidth(dtype_);
  int64_t count = numElements();
  if (isContiguous()) {
    std::memcpy(copy.data_, data_, count * width);
    return allocated;
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
  return allocated;
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

uint16_t fuse::floatToBF16(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  // A NaN keeps its sign and becomes quiet (rounding could make it inf).
  if ((bits & 0x7fffffffu) > 0x7f800000u)
    return static_cast<uint16_t>((bits >> 16) | 0x40);
  // Round to nearest, ties to even: add half an ulp of the kept part, less
  // one unless the kept part is odd.
  bits += 0x7fffu + ((bits >> 16) & 1);
  return static_cast<uint16_t>(bits >> 16);
}

float fuse::bf16ToFloat(uint16_t bits) {
  uint32_t wide = static_cast<uint32_t>(bits) << 16;
  float value;
  std::memcpy(&value, &wide, sizeof value);
  return value;
}

/// Element `i` of a float tensor, exactly, as a double.
static double floatElement(const Tensor &t, int64_t i) {
  switch (t.dtype()) {
  case DType::F32:
    return t.data<float>()[i];
  case DType::F64:
    return t.data<double>()[i];
  case DType::BF16:
    return bf16ToFloat(t.data<uint16_t>()[i]);
  default: {
    llvm::APFloat f(llvm::APFloat::IEEEhalf(),
                    llvm::APInt(16, t.data<uint16_t>()[i]));
    bool losesInfo;
    f.convert(llvm::APFloat::IEEEdouble(), llvm::APFloat::rmNearestTiesToEven,
              &losesInfo);
    return f.convertToDouble();
  }
  }
}

llvm::Expected<Tensor> fuse::convertFloatTensor(const Tensor &tensor,
                                                DType dtype) {
  if (!isFloatingPoint(tensor.dtype()) || !isFloatingPoint(dtype))
    return llvm::createStringError(
        "cannot convert a tensor of " + dtypeName(tensor.dtype()) + " to " +
        dtypeName(dtype) + ": both must be float dtypes");
  llvm::Expected<Tensor> source =
      tensor.checkedContiguousCopy("the tensor to convert");
  if (!source)
    return source.takeError();
  llvm::Expected<Tensor> result = Tensor::allocate(
      dtype, tensor.shape(), "the " + dtypeName(dtype) + " conversion");
  if (!result)
    return result.takeError();
  int64_t n = tensor.numElements();
  for (int64_t i = 0; i < n; ++i) {
    // f32 -> bf16 rounds once, as fuse.cast; other pairs through double,
    // which holds every f32, f16 and bf16 exactly (one rounding too).
    if (source->dtype() == DType::F32 && dtype == DType::BF16) {
      result->data<uint16_t>()[i] = floatToBF16(source->data<float>()[i]);
      continue;
    }
    double v = floatElement(*source, i);
    switch (dtype) {
    case DType::F32:
      result->data<float>()[i] = static_cast<float>(v);
      break;
    case DType::F64:
      result->data<double>()[i] = v;
      break;
    default: {
      llvm::APFloat f(v);
      bool losesInfo;
      f.convert(dtype == DType::BF16 ? llvm::APFloat::BFloat()
                                     : llvm::APFloat::IEEEhalf(),
                llvm::APFloat::rmNearestTiesToEven, &losesInfo);
      result->data<uint16_t>()[i] =
          static_cast<uint16_t>(f.bitcastToAPInt().getZExtValue());
    }
    }
  }
  return result;
}
