//===- Idx.cpp - IDX data sets (MNIST, Fashion-MNIST) ---------------------===//

#include "fuse/Data/Idx.h"
#include "fuse/LabelRange.h"
#include "fuse/RegularFile.h"

#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <zlib.h>

#include <cstdlib>
#include <memory>
#include <optional>
#include <vector>

using namespace fuse;
using namespace fuse::data;
using llvm::Error;
using llvm::Expected;

namespace {

/// A gzip (or plain) file read with zlib.
struct GzFile {
  gzFile file = nullptr;
  ~GzFile() {
    if (file)
      gzclose(file);
  }
  /// Reads exactly `size` bytes; false on a short read.
  bool read(void *data, size_t size) {
    char *at = static_cast<char *>(data);
    while (size > 0) {
      unsigned chunk = static_cast<unsigned>(std::min<size_t>(size, 1u << 30));
      int got = gzread(file, at, chunk);
      if (got <= 0)
        return false;
      at += got;
      size -= got;
    }
    return true;
  }
  /// zlib's complaint, if the stream is damaged (a bad CRC or deflate data
  /// also ends a read early, so it is checked before calling it short).
  std::optional<std::string> corruption() const {
    int code = Z_OK;
    const char *message = gzerror(file, &code);
    if (code == Z_OK || code == Z_STREAM_END || code == Z_BUF_ERROR)
      return std::nullopt;
    return std::string(message);
  }
};

uint32_t bigEndian(const unsigned char *bytes) {
  return (uint32_t(bytes[0]) << 24) | (uint32_t(bytes[1]) << 16) |
         (uint32_t(bytes[2]) << 8) | uint32_t(bytes[3]);
}

} // namespace

namespace {
/// A byte buffer grown as data arrives (realloc), so that a header's claim
/// costs no memory before the data is there.
struct GrowingBuffer {
  unsigned char *data = nullptr;
  size_t size = 0, capacity = 0;
  ~GrowingBuffer() { std::free(data); }
  /// Room for at least `more` bytes past `size`; false when out of memory.
  bool reserveMore(size_t more, size_t limit) {
    if (capacity - size >= more)
      return true;
    size_t want = std::min(std::max(capacity * 2, size + more), limit);
    void *grown = std::realloc(data, want);
    if (!grown)
      return false;
    data = static_cast<unsigned char *>(grown);
    capacity = want;
    return true;
  }
};
} // namespace

Expected<Tensor> fuse::data::readIdx(llvm::StringRef path) {
  GzFile in;
  // A read that came up short: damage zlib saw, or the file's end.
  auto shortRead = [&](const llvm::Twine &message) {
    if (std::optional<std::string> corrupt = in.corruption())
      return llvm::createStringError("'" + path +
                                     "' is a corrupt gzip stream: " + *corrupt);
    return llvm::createStringError(message);
  };
  // Only a regular file has a size to check the header against (a FIFO or
  // /dev/zero would be read forever).
  Expected<RegularFile> file = openRegularFile(path);
  if (!file)
    return file.takeError();
  const uint64_t fileSize = file->size();
  in.file = gzdopen(file->fd(), "rb");
  if (!in.file)
    return llvm::createStringError("cannot open '" + path + "': out of memory");
  // gzclose closes the descriptor from here on.
  file->release();
  unsigned char magic[4];
  if (!in.read(magic, 4))
    return shortRead("'" + path +
                     "' is not an IDX file: it ends before its "
                     "4-byte header");
  if (magic[0] != 0 || magic[1] != 0)
    return llvm::createStringError(
        "'" + path +
        "' is not an IDX file (or is a corrupt "
        "gzip stream): its magic number starts with " +
        llvm::Twine(int(magic[0])) + ", " + llvm::Twine(int(magic[1])) +
        " instead of 0, 0");
  if (magic[2] != 0x08)
    return llvm::createStringError(
        "'" + path + "' holds IDX element type 0x" +
        llvm::Twine::utohexstr(magic[2]) +
        "; only unsigned bytes (0x08) are supported");
  int rank = magic[3];
  if (rank < 1 || rank > 4)
    return llvm::createStringError("'" + path + "' declares " +
                                   llvm::Twine(rank) +
                                   " dimensions; expected 1 to 4");
  llvm::SmallVector<int64_t, 4> shape;
  int64_t count = 1;
  for (int d = 0; d < rank; ++d) {
    unsigned char bytes[4];
    if (!in.read(bytes, 4))
      return shortRead("'" + path +
                       "' is truncated: it ends inside its "
                       "header");
    shape.push_back(bigEndian(bytes));
    // Up to 2^34 times up to 2^32: checked, as it can pass int64.
    std::optional<int64_t> next = llvm::checkedMul(count, shape.back());
    count = next ? *next : INT64_MAX;
    if (count > (int64_t(1) << 34))
      return llvm::createStringError("'" + path +
                                     "' declares more than 2^34 elements");
  }
  const DType dtype = rank == 1 ? DType::I32 : DType::F32;
  // Far too large for this machine: an error before reading anything.
  uint64_t tensorSize = uint64_t(count) * byteWidth(dtype);
  if (tensorSize > maxTensorBytes())
    return llvm::createStringError(
        "'" + path + "' declares " + llvm::Twine(count) + " elements (" +
        llvm::Twine(tensorSize) + " bytes as " + dtypeName(dtype) +
        "), more than " + describeMaxTensorBytes());
  // An uncompressed file's size follows from its header.
  uint64_t headerSize = 4 + 4 * uint64_t(rank);
  if (gzdirect(in.file) && fileSize != headerSize + uint64_t(count)) {
    if (fileSize < headerSize + uint64_t(count))
      return llvm::createStringError(
          "'" + path + "' is truncated: its header declares " +
          llvm::Twine(count) + " elements, the file holds fewer");
    return llvm::createStringError("'" + path + "' has data after the " +
                                   llvm::Twine(count) +
                                   " elements its header declares");
  }
  // A compressed stream's size shows only as it is inflated: the buffer
  // grows with the data, so that a header claiming more than the stream
  // holds fails at the stream's end without having reserved the claim.
  GrowingBuffer raw;
  constexpr size_t kChunk = size_t(1) << 20;
  while (raw.size < size_t(count)) {
    size_t want = std::min(kChunk, size_t(count) - raw.size);
    if (!raw.reserveMore(want, size_t(count)))
      return llvm::createStringError(
          "'" + path + "': out of memory after " + llvm::Twine(raw.size) +
          " of the " + llvm::Twine(count) + " elements its header declares");
    int got = gzread(in.file, raw.data + raw.size, unsigned(want));
    if (got <= 0)
      return shortRead("'" + path + "' is truncated: its header declares " +
                       llvm::Twine(count) + " elements, the file holds fewer");
    raw.size += size_t(got);
  }
  unsigned char extra;
  if (gzread(in.file, &extra, 1) > 0)
    return llvm::createStringError("'" + path + "' has data after the " +
                                   llvm::Twine(count) +
                                   " elements its header declares");
  if (std::optional<std::string> corrupt = in.corruption())
    return llvm::createStringError("'" + path +
                                   "' is a corrupt gzip stream: " + *corrupt);

  Expected<Tensor> tensor = Tensor::allocate(dtype, shape, "'" + path + "'");
  if (!tensor)
    return tensor.takeError();
  if (rank == 1) {
    for (int64_t i = 0; i < count; ++i)
      tensor->data<int32_t>()[i] = raw.data[i];
    return tensor;
  }
  // x / 255 correctly rounded, as Keras scales images.
  float scaled[256];
  for (int v = 0; v < 256; ++v)
    scaled[v] = static_cast<float>(v) / 255.0f;
  for (int64_t i = 0; i < count; ++i)
    tensor->data<float>()[i] = scaled[raw.data[i]];
  return tensor;
}

/// `dir/name.gz`, else `dir/name`.
static std::string findFile(llvm::StringRef dir, const llvm::Twine &name) {
  llvm::SmallString<256> path(dir);
  llvm::sys::path::append(path, name + ".gz");
  if (llvm::sys::fs::exists(path))
    return std::string(path);
  path = dir;
  llvm::sys::path::append(path, name);
  return std::string(path);
}

Expected<TensorDataSource>
fuse::data::loadIdxSplit(llvm::StringRef dir, Split split, int64_t numClasses) {
  if (!llvm::sys::fs::is_directory(dir)) {
    std::string hint =
        dir == kFashionMnistDir
            ? " (install Debian's dataset-fashion-mnist package: "
              "scripts/setup does; or name another IDX directory with --data)"
            : "";
    return llvm::createStringError("no data set directory '" + dir + "'" +
                                   hint);
  }
  llvm::StringRef prefix = split == Split::Train ? "train" : "t10k";
  std::string imagesPath = findFile(dir, prefix + "-images-idx3-ubyte");
  std::string labelsPath = findFile(dir, prefix + "-labels-idx1-ubyte");
  Expected<Tensor> images = readIdx(imagesPath);
  if (!images)
    return images.takeError();
  Expected<Tensor> labels = readIdx(labelsPath);
  if (!labels)
    return labels.takeError();
  if (images->rank() != 3)
    return llvm::createStringError("'" + imagesPath + "' holds " +
                                   llvm::Twine(images->rank()) +
                                   "-d data; images are [count, rows, cols]");
  if (labels->rank() != 1)
    return llvm::createStringError("'" + labelsPath + "' holds " +
                                   llvm::Twine(labels->rank()) +
                                   "-d data; labels are [count]");
  if (labels->shape()[0] != images->shape()[0])
    return llvm::createStringError(
        "'" + labelsPath + "' has " + llvm::Twine(labels->shape()[0]) +
        " labels for the " + llvm::Twine(images->shape()[0]) + " images of '" +
        imagesPath + "'");
  if (std::optional<BadLabel> bad = findLabelOutside(*labels, numClasses))
    return llvm::createStringError(
        "'" + labelsPath + "': label #" + llvm::Twine(bad->index) + " is " +
        llvm::Twine(bad->value) + ", outside [0, " + llvm::Twine(numClasses) +
        ") for " + llvm::Twine(numClasses) + " classes");
  return TensorDataSource::create(std::move(*images), std::move(*labels),
                                  numClasses);
}
