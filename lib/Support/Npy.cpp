//===- Npy.cpp - NumPy .npy files -----------------------------------------===//

#include "fuse/Npy.h"
#include "fuse/RegularFile.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <cstring>
#include <system_error>

using namespace fuse;
using llvm::Error;
using llvm::Expected;
using llvm::StringRef;

static Error npyError(StringRef path, const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 path + ": " + message);
}

static std::optional<DType> fromDescr(StringRef descr) {
  if (descr.size() != 3 || (descr[0] != '<' && descr[0] != '|'))
    return std::nullopt;
  StringRef kind = descr.drop_front();
  if (kind == "f4")
    return DType::F32;
  if (kind == "f8")
    return DType::F64;
  if (kind == "f2")
    return DType::F16;
  if (kind == "b1")
    return DType::I1;
  if (kind == "i1")
    return DType::I8;
  if (kind == "i2")
    return DType::I16;
  // NumPy has no bf16: its bits travel as uint16 (include/fuse/Npy.h).
  if (kind == "u2")
    return DType::BF16;
  if (kind == "i4")
    return DType::I32;
  if (kind == "i8")
    return DType::I64;
  return std::nullopt;
}

static std::optional<StringRef> toDescr(DType dtype) {
  switch (dtype) {
  case DType::F32:
    return StringRef("<f4");
  case DType::F64:
    return StringRef("<f8");
  case DType::F16:
    return StringRef("<f2");
  case DType::I1:
    return StringRef("|b1");
  case DType::I8:
    return StringRef("|i1");
  case DType::I16:
    return StringRef("<i2");
  case DType::I32:
    return StringRef("<i4");
  case DType::I64:
    return StringRef("<i8");
  case DType::BF16:
    return StringRef("<u2");
  }
  return std::nullopt;
}

/// The value text of `'key': value` in a .npy header dict.
static std::optional<StringRef> dictValue(StringRef header, StringRef key) {
  size_t at = header.find(("'" + key + "'").str());
  if (at == StringRef::npos)
    return std::nullopt;
  StringRef rest = header.drop_front(at + key.size() + 2).ltrim();
  if (!rest.consume_front(":"))
    return std::nullopt;
  rest = rest.ltrim();
  if (rest.starts_with("'"))
    return rest.drop_front().take_until([](char c) { return c == '\''; });
  if (rest.starts_with("("))
    return rest.drop_front().take_until([](char c) { return c == ')'; });
  return rest.take_until([](char c) { return c == ',' || c == '}'; }).trim();
}

Expected<Tensor> fuse::readNpy(StringRef path) {
  Expected<std::unique_ptr<llvm::MemoryBuffer>> file = readRegularFile(path);
  if (!file)
    return file.takeError();
  StringRef data = (*file)->getBuffer();
  if (!data.starts_with("\x93NUMPY") || data.size() < 10)
    return npyError(path, "not a .npy file");
  uint8_t major = data[6];
  size_t headerLen, headerStart;
  if (major == 1) {
    headerLen = uint8_t(data[8]) | (uint8_t(data[9]) << 8);
    headerStart = 10;
  } else if ((major == 2 || major == 3) && data.size() >= 12) {
    headerLen = uint32_t(uint8_t(data[8])) | (uint32_t(uint8_t(data[9])) << 8) |
                (uint32_t(uint8_t(data[10])) << 16) |
                (uint32_t(uint8_t(data[11])) << 24);
    headerStart = 12;
  } else {
    return npyError(path, "unsupported .npy version " + llvm::Twine(major));
  }
  if (headerStart + headerLen > data.size())
    return npyError(path, "truncated header");
  StringRef header = data.substr(headerStart, headerLen);
  std::optional<StringRef> descr = dictValue(header, "descr");
  std::optional<DType> dtype = descr ? fromDescr(*descr) : std::nullopt;
  if (!dtype)
    return npyError(path, "unsupported dtype '" + (descr ? *descr : "") + "'");
  std::optional<StringRef> fortran = dictValue(header, "fortran_order");
  if (!fortran || *fortran != "False")
    return npyError(path, "only C-order arrays are supported");
  std::optional<StringRef> shapeText = dictValue(header, "shape");
  if (!shapeText)
    return npyError(path, "header has no shape");
  llvm::SmallVector<int64_t> shape;
  llvm::SmallVector<StringRef> parts;
  shapeText->split(parts, ',');
  for (StringRef part : parts) {
    part = part.trim();
    if (part.empty())
      continue;
    int64_t dim;
    if (part.getAsInteger(10, dim) || dim < 0)
      return npyError(path, "bad shape '(" + *shapeText + ")'");
    shape.push_back(dim);
  }
  // The header fixes the data's size: checked against the file before
  // anything is allocated.
  std::optional<int64_t> bytes = tensorBytes(*dtype, shape);
  if (!bytes)
    return npyError(path, "shape (" + *shapeText + ") of " + dtypeName(*dtype) +
                              " overflows: its size in bytes exceeds 64 bits");
  StringRef payload = data.drop_front(headerStart + headerLen);
  if (payload.size() != uint64_t(*bytes))
    return npyError(path, "expected " + llvm::Twine(*bytes) +
                              " bytes of data, found " +
                              llvm::Twine(payload.size()));
  Expected<Tensor> tensor = Tensor::allocate(*dtype, shape, path);
  if (!tensor)
    return tensor.takeError();
  std::memcpy(tensor->data(), payload.data(), *bytes);
  return tensor;
}

Error fuse::writeNpy(StringRef path, const Tensor &tensor) {
  std::optional<StringRef> descr = toDescr(tensor.dtype());
  if (!descr)
    return npyError(path, "dtype " + dtypeName(tensor.dtype()) +
                              " has no .npy equivalent");
  std::string header;
  llvm::raw_string_ostream os(header);
  os << "{'descr': '" << *descr << "', 'fortran_order': False, 'shape': (";
  for (int64_t d : tensor.shape())
    os << d << ", ";
  os << "), }";
  // Pad so that the data starts at a multiple of 64 bytes.
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header.push_back('\n');

  // Before opening the file: a failed copy leaves no partial file.
  Expected<Tensor> copy = tensor.isContiguous()
                              ? Expected<Tensor>(tensor)
                              : tensor.checkedContiguousCopy(path);
  if (!copy)
    return copy.takeError();
  const Tensor &contiguous = *copy;
  std::error_code ec;
  llvm::raw_fd_ostream out(path, ec, llvm::sys::fs::OF_None);
  if (ec)
    return npyError(path, "cannot write: " + ec.message());
  out << "\x93NUMPY" << char(1) << char(0) << char(header.size() & 0xff)
      << char(header.size() >> 8) << header;
  out.write(static_cast<const char *>(contiguous.data()),
            contiguous.numElements() * byteWidth(contiguous.dtype()));
  out.close();
  if (out.has_error()) {
    out.clear_error();
    return npyError(path, "write failed");
  }
  return Error::success();
}
