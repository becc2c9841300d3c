//===- TextDataSource.h - Byte-level token windows of a text ----*- C++ -*-===//
//
// The data of a character-level language model, as nanoGPT's
// shakespeare_char prepares it but with bytes for characters: a text (any
// UTF-8 or byte file, or every file of a directory) is a stream of tokens
// in [0, 256), one per byte. An example is a window of T tokens and its
// labels the same window shifted by one token, the next token at every
// position. The training source holds a window at every start of the
// text's head, so that the seeded per-epoch order of the input pipeline
// (Batches.h) draws random windows, as nanoGPT's get_batch does, without
// repeating one within an epoch; the validation source holds the
// non-overlapping windows of the held-out tail. Errors name the path and
// the option (fusec train's spelling) that caused them; nothing aborts.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_DATA_TEXTDATASOURCE_H
#define FUSE_DATA_TEXTDATASOURCE_H

#include "fuse/Data/DataSource.h"

#include <string>
#include <vector>

namespace fuse::data {

/// Where Debian's `fortunes` package puts its text files.
constexpr llvm::StringLiteral kFortunesDir = "/usr/share/games/fortunes";

/// Tokens are bytes.
constexpr int64_t kByteVocabulary = 256;

/// The held-out share of a text's bytes when none is given.
constexpr double kDefaultValidationFraction = 0.1;

/// A text's bytes, read from one or more files.
struct TextCorpus {
  struct File {
    std::string path;
    int64_t bytes = 0;
  };
  /// The files' bytes back to back, i8 [L] (each read as unsigned: a token).
  Tensor bytes;
  /// The files read, in order.
  std::vector<File> files;

  int64_t size() const { return bytes.rank() ? bytes.shape()[0] : 0; }
};

/// The files a text at `path` is read from: `path` itself when it is not a
/// directory; for a directory, every regular file directly in it, sorted by
/// name (bytewise). Symbolic links are skipped (fortune's `NAME.u8` links to
/// `NAME`: the same text twice), as are subdirectories, hidden files
/// (`.NAME`) and a `NAME.dat` beside a `NAME` (fortune's strfile index of
/// it: binary offsets, not text). Errors: the directory cannot be listed, or
/// holds no such file.
llvm::Expected<std::vector<std::string>> textFiles(llvm::StringRef path);

/// The bytes of textFiles(path), each read through readRegularFile (so a
/// FIFO or device is refused). Errors name the file: it cannot be opened
/// or read; the text is empty.
llvm::Expected<TextCorpus> readTextCorpus(llvm::StringRef path);

/// Windows of `context` tokens over a range of a text's bytes.
class TextDataSource : public DataSource {
public:
  /// The windows of `context` (T) tokens starting at begin, begin + stride,
  /// ... whose labels end within [begin, end) of `text` (i8 [L], shared, not
  /// copied): example i is tokens [s, s + T) with labels [s + 1, s + T + 1),
  /// s = begin + i * stride. Errors: a context or stride under 1, a range
  /// outside the text, or one shorter than T + 1 bytes (no window).
  static llvm::Expected<TextDataSource> create(Tensor text, int64_t begin,
                                               int64_t end, int64_t context,
                                               int64_t stride);

  int64_t context() const { return context_; }
  int64_t begin() const { return begin_; }
  int64_t end() const { return end_; }
  int64_t stride() const { return stride_; }

  int64_t size() const override { return size_; }
  /// T x i32, both.
  TensorSpec input() const override;
  TensorSpec label() const override;
  llvm::Error gather(llvm::ArrayRef<int64_t> indices, void *inputs,
                     void *labels) const override;
  /// Every token is a byte.
  std::optional<int64_t> numClasses() const override { return kByteVocabulary; }
  /// From the bytes, without gathering windows: the first label position
  /// of the first window holding a byte >= classes.
  llvm::Expected<std::optional<BadLabel>>
  findLabelOutside(int64_t classes) const override;

private:
  TextDataSource(Tensor text, int64_t begin, int64_t end, int64_t context,
                 int64_t stride, int64_t size)
      : text_(std::move(text)), begin_(begin), end_(end), context_(context),
        stride_(stride), size_(size) {}

  Tensor text_;
  int64_t begin_, end_, context_, stride_, size_;
};

/// A text cut into training and validation windows.
struct TextSplit {
  /// A window at every start of the first bytes (stride 1).
  TextDataSource train;
  /// The non-overlapping windows of the last `validationFraction` of the
  /// bytes (floor(L * fraction) bytes; stride T), none of whose tokens the
  /// training windows read.
  TextDataSource validation;
};

/// Splits `corpus` (read from `path`, named in errors) for a model of
/// `context` tokens per example. Errors name --context or `option` (the
/// fraction's, as the caller spells it) and the path: a context under 1, a
/// fraction outside (0, 1), a head or tail shorter than T + 1 bytes.
llvm::Expected<TextSplit>
splitText(const TextCorpus &corpus, llvm::StringRef path, int64_t context,
          double validationFraction,
          llvm::StringRef option = "--validation-fraction");

} // namespace fuse::data

#endif // FUSE_DATA_TEXTDATASOURCE_H
