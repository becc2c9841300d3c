//===- TextDataSource.cpp - Byte-level token windows of a text ------------===//

#include "fuse/Data/TextDataSource.h"
#include "fuse/RegularFile.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdio>
#include <cstring>

using namespace fuse;
using namespace fuse::data;
using llvm::Error;
using llvm::Expected;

/// `x` as `%g` prints it.
static std::string shortDouble(double x) {
  char text[32];
  std::snprintf(text, sizeof(text), "%g", x);
  return text;
}

Expected<std::vector<std::string>> fuse::data::textFiles(llvm::StringRef path) {
  if (!llvm::sys::fs::is_directory(path))
    return std::vector<std::string>{path.str()};
  std::error_code ec;
  std::vector<std::string> names;
  for (llvm::sys::fs::directory_iterator
           it(path, ec, /*follow_symlinks=*/false),
       end;
       it != end && !ec; it.increment(ec))
    names.push_back(llvm::sys::path::filename(it->path()).str());
  if (ec)
    return llvm::createStringError(
        path + ": cannot list the directory: " + ec.message() + " (--data)");
  llvm::StringSet<> present;
  for (const std::string &name : names)
    present.insert(name);
  std::sort(names.begin(), names.end());
  std::vector<std::string> files;
  int64_t skipped = 0;
  for (const std::string &name : names) {
    llvm::StringRef n(name);
    llvm::SmallString<256> file(path);
    llvm::sys::path::append(file, name);
    llvm::sys::fs::file_status status;
    // Not following links: a link is skipped, whatever it points to.
    if (n.starts_with(".") ||
        (n.ends_with(".dat") && present.contains(n.drop_back(4))) ||
        llvm::sys::fs::status(file, status, /*follow=*/false) ||
        status.type() != llvm::sys::fs::file_type::regular_file) {
      ++skipped;
      continue;
    }
    files.push_back(std::string(file));
  }
  if (files.empty())
    return llvm::createStringError(
        path + ": the directory holds no text file (of its " +
        llvm::Twine(skipped) +
        " entries, none is a regular file that is not hidden or a fortune "
        "index NAME.dat) (--data)");
  return files;
}

Expected<TextCorpus> fuse::data::readTextCorpus(llvm::StringRef path) {
  Expected<std::vector<std::string>> paths = textFiles(path);
  if (!paths)
    return paths.takeError();
  std::vector<std::unique_ptr<llvm::MemoryBuffer>> buffers;
  TextCorpus corpus;
  int64_t total = 0;
  for (const std::string &file : *paths) {
    Expected<std::unique_ptr<llvm::MemoryBuffer>> buffer =
        readRegularFile(file);
    if (!buffer)
      return llvm::createStringError(llvm::toString(buffer.takeError()) +
                                     " (--data)");
    int64_t size = int64_t((*buffer)->getBufferSize());
    std::optional<int64_t> sum = llvm::checkedAdd(total, size);
    if (!sum)
      return llvm::createStringError(
          path + ": the files' sizes overflow a 64-bit count (--data)");
    total = *sum;
    corpus.files.push_back({file, size});
    buffers.push_back(std::move(*buffer));
  }
  if (total == 0) {
    if (corpus.files.size() == 1)
      return llvm::createStringError(corpus.files[0].path +
                                     ": the file is empty: no text (--data)");
    return llvm::createStringError(path + ": its " +
                                   llvm::Twine(corpus.files.size()) +
                                   " files are empty: no text (--data)");
  }
  Expected<Tensor> bytes =
      Tensor::allocate(DType::I8, {total}, "the text of '" + path + "'");
  if (!bytes)
    return bytes.takeError();
  char *to = static_cast<char *>(bytes->data());
  for (const std::unique_ptr<llvm::MemoryBuffer> &buffer : buffers) {
    std::memcpy(to, buffer->getBufferStart(), buffer->getBufferSize());
    to += buffer->getBufferSize();
  }
  corpus.bytes = std::move(*bytes);
  return corpus;
}

Expected<TextDataSource> TextDataSource::create(Tensor text, int64_t begin,
                                                int64_t end, int64_t context,
                                                int64_t stride) {
  if (text.dtype() != DType::I8 || text.rank() != 1 || !text.isContiguous())
    return llvm::createStringError(
        "a text is a contiguous tensor of bytes (i8 [L]), not " +
        text.typeString());
  if (context < 1)
    return llvm::createStringError("the context must be at least 1 token, "
                                   "got " +
                                   llvm::Twine(context));
  if (stride < 1)
    return llvm::createStringError("the stride must be at least 1, got " +
                                   llvm::Twine(stride));
  int64_t length = text.shape()[0];
  if (begin < 0 || end < begin || end > length)
    return llvm::createStringError(
        "the range [" + llvm::Twine(begin) + ", " + llvm::Twine(end) +
        ") is not within the text's " + llvm::Twine(length) + " bytes");
  // A window and its next token: context + 1 bytes (no overflow: context is
  // compared with the range's length instead).
  if (end - begin <= context)
    return llvm::createStringError(
        "the range [" + llvm::Twine(begin) + ", " + llvm::Twine(end) +
        ") is shorter than a window of " + llvm::Twine(context) +
        " tokens and its next token");
  int64_t size = (end - begin - context - 1) / stride + 1;
  return TextDataSource(std::move(text), begin, end, context, stride, size);
}

TensorSpec TextDataSource::input() const { return {DType::I32, {context_}}; }

TensorSpec TextDataSource::label() const { return {DType::I32, {context_}}; }

Error TextDataSource::gather(llvm::ArrayRef<int64_t> indices, void *inputs,
                             void *labels) const {
  const auto *bytes = static_cast<const uint8_t *>(text_.data());
  auto *in = static_cast<int32_t *>(inputs);
  auto *out = static_cast<int32_t *>(labels);
  for (size_t row = 0; row < indices.size(); ++row) {
    int64_t i = indices[row];
    assert(i >= 0 && i < size_ && "no such example");
    // Within [begin, end): i * stride + context < end - begin by create().
    const uint8_t *window = bytes + begin_ + i * stride_;
    size_t offset = row * size_t(context_);
    if (in)
      for (int64_t t = 0; t < context_; ++t)
        in[offset + t] = window[t];
    if (out)
      for (int64_t t = 0; t < context_; ++t)
        out[offset + t] = window[t + 1];
  }
  return Error::success();
}

Expected<std::optional<BadLabel>>
TextDataSource::findLabelOutside(int64_t classes) const {
  if (classes >= kByteVocabulary)
    return std::nullopt;
  const auto *bytes = static_cast<const uint8_t *>(text_.data());
  // The labels of all windows lie in [begin + 1, last window's end).
  int64_t labelsEnd = begin_ + (size_ - 1) * stride_ + context_ + 1;
  for (int64_t p = begin_ + 1; p < labelsEnd; ++p) {
    if (int64_t(bytes[p]) < classes)
      continue;
    // The first window whose labels [s + 1, s + T + 1) hold p: every earlier
    // one ends before p, so holds no bad label; p is its first.
    int64_t from = p - begin_ - context_; // s + T >= p
    int64_t first = from <= 0 ? 0 : (from + stride_ - 1) / stride_;
    int64_t start = begin_ + first * stride_;
    if (first >= size_ || start + 1 > p)
      continue; // between two windows' labels (a stride over T)
    BadLabel bad;
    bad.index = first * context_ + (p - start - 1);
    bad.value = bytes[p];
    return bad;
  }
  return std::nullopt;
}

Expected<TextSplit> fuse::data::splitText(const TextCorpus &corpus,
                                          llvm::StringRef path, int64_t context,
                                          double validationFraction,
                                          llvm::StringRef option) {
  if (context < 1)
    return llvm::createStringError(
        "the context must be at least 1 token (--context " +
        llvm::Twine(context) + ")");
  if (!(validationFraction > 0 && validationFraction < 1))
    return llvm::createStringError(
        "the validation fraction must be in (0, 1) (" + option + " " +
        shortDouble(validationFraction) + ")");
  int64_t length = corpus.size();
  std::optional<int64_t> window = llvm::checkedAdd(context, int64_t(1));
  auto tooShort = [&](const llvm::Twine &what, int64_t bytes) {
    return llvm::createStringError(
        path + ": " + what + " " + llvm::Twine(bytes) + " bytes, fewer than " +
        "one window of " + llvm::Twine(context) +
        " tokens and its next token needs (--context " + llvm::Twine(context) +
        ": " + (window ? std::to_string(*window) : "too many") + " bytes)");
  };
  if (!window || length < *window)
    return tooShort("the text has", length);
  // floor(L * f): L up to 2^53 is exact in a double; beyond, the share
  // rounds, which only moves the cut.
  int64_t tail = int64_t(std::floor(double(length) * validationFraction));
  tail = std::clamp<int64_t>(tail, 0, length);
  int64_t head = length - tail;
  std::string share = "(" + option.str() + " " +
                      shortDouble(validationFraction) + ") of its " +
                      std::to_string(length) + " bytes is";
  if (tail < *window)
    return tooShort("the held-out tail " + share, tail);
  if (head < *window)
    return tooShort("the training head " + share, head);
  Expected<TextDataSource> train =
      TextDataSource::create(corpus.bytes, 0, head, context, /*stride=*/1);
  if (!train)
    return train.takeError();
  Expected<TextDataSource> validation = TextDataSource::create(
      corpus.bytes, head, length, context, /*stride=*/context);
  if (!validation)
    return validation.takeError();
  return TextSplit{std::move(*train), std::move(*validation)};
}
