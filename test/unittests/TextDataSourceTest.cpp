//===- TextDataSourceTest.cpp - Byte-level token windows ------------------===//
//
// A text's windows: inputs and labels shifted by one token, bytes as
// unsigned tokens, a window at every start of the training head and
// non-overlapping ones over the held-out tail; the files of a directory in
// name order (no links, no fortune indexes); every error names the path and
// the option. The seeded order of the input pipeline draws the training
// windows reproducibly, each once per epoch. fit trains the bigram model of
// examples/bigram.mlir on them, takes a dynamic window length from the
// data, and a run stopped by its time budget inside an epoch resumes to the
// same bits as a run that never stopped.
//
//===----------------------------------------------------------------------===//

#include "TestUtils.h"

#include "fuse/Data/Batches.h"
#include "fuse/Data/TextDataSource.h"
#include "fuse/Fit.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <limits>
#include <set>
#include <sys/stat.h>

using namespace fuse;
using namespace fuse::data;
using namespace fuse::testing;

namespace {

/// `text` as a corpus tensor (i8 [L]).
Tensor bytesOf(llvm::StringRef text) {
  Tensor t = Tensor::empty(DType::I8, {int64_t(text.size())});
  std::memcpy(t.data(), text.data(), text.size());
  return t;
}

/// The tokens of examples `indices` as strings: inputs and labels.
std::pair<std::vector<std::string>, std::vector<std::string>>
windows(const TextDataSource &source, llvm::ArrayRef<int64_t> indices) {
  int64_t t = source.context();
  std::vector<int32_t> inputs(indices.size() * t, -1),
      labels(indices.size() * t, -1);
  EXPECT_FALSE(bool(source.gather(indices, inputs.data(), labels.data())));
  std::pair<std::vector<std::string>, std::vector<std::string>> out;
  for (size_t i = 0; i < indices.size(); ++i) {
    std::string in, label;
    for (int64_t k = 0; k < t; ++k) {
      in += char(inputs[i * t + k]);
      label += char(labels[i * t + k]);
    }
    out.first.push_back(in);
    out.second.push_back(label);
  }
  return out;
}

void writeFile(llvm::StringRef path, llvm::StringRef text) {
  std::error_code ec;
  llvm::raw_fd_ostream out(path, ec);
  ASSERT_FALSE(ec) << ec.message();
  out << text;
}

TEST(TextDataSource, WindowsAndLabelsShiftedByOne) {
  TextDataSource source =
      unwrap(TextDataSource::create(bytesOf("abcdefghij"), 0, 10, 3, 1));
  // A window at every start whose next token is in the text: 10 - 3.
  EXPECT_EQ(source.size(), 7);
  EXPECT_EQ(source.input().str(), "3xi32");
  EXPECT_EQ(source.label().str(), "3xi32");
  EXPECT_EQ(source.numClasses(), std::optional<int64_t>(256));
  auto [inputs, labels] = windows(source, {0, 6, 2, 6});
  EXPECT_EQ(inputs, std::vector<std::string>({"abc", "ghi", "cde", "ghi"}));
  EXPECT_EQ(labels, std::vector<std::string>({"bcd", "hij", "def", "hij"}));
  // Either side alone.
  std::vector<int32_t> only(3, -1);
  ASSERT_FALSE(bool(source.gather({4}, nullptr, only.data())));
  EXPECT_EQ(only, std::vector<int32_t>({'f', 'g', 'h'}));
  ASSERT_FALSE(bool(source.gather({4}, only.data(), nullptr)));
  EXPECT_EQ(only, std::vector<int32_t>({'e', 'f', 'g'}));

  // A range and a stride: windows of [2, 10) every 3 bytes, none past it.
  TextDataSource strided =
      unwrap(TextDataSource::create(bytesOf("abcdefghij"), 2, 10, 3, 3));
  EXPECT_EQ(strided.size(), 2);
  auto [sInputs, sLabels] = windows(strided, {0, 1});
  EXPECT_EQ(sInputs, std::vector<std::string>({"cde", "fgh"}));
  EXPECT_EQ(sLabels, std::vector<std::string>({"def", "ghi"}));
  // Exactly T + 1 bytes: one window.
  EXPECT_EQ(unwrap(TextDataSource::create(bytesOf("abcd"), 0, 4, 3, 5)).size(),
            1);
}

TEST(TextDataSource, BytesAreUnsignedTokens) {
  // UTF-8 "é" is 0xC3 0xA9: tokens 195 and 169, never negative.
  TextDataSource source = unwrap(TextDataSource::create(
      bytesOf(llvm::StringRef("\xc3\xa9\xff\x00z", 5)), 0, 5, 2, 1));
  std::vector<int32_t> inputs(6), labels(6);
  ASSERT_FALSE(bool(source.gather({0, 1, 2}, inputs.data(), labels.data())));
  EXPECT_EQ(inputs, std::vector<int32_t>({195, 169, 169, 255, 255, 0}));
  EXPECT_EQ(labels, std::vector<int32_t>({169, 255, 255, 0, 0, 'z'}));
}

TEST(TextDataSource, CreateChecksItsArguments) {
  Tensor text = bytesOf("abcdefghij");
  EXPECT_EQ(errorOf(TextDataSource::create(text, 0, 10, 0, 1)),
            "the context must be at least 1 token, got 0");
  EXPECT_EQ(errorOf(TextDataSource::create(text, 0, 10, 3, 0)),
            "the stride must be at least 1, got 0");
  EXPECT_EQ(errorOf(TextDataSource::create(text, 4, 11, 3, 1)),
            "the range [4, 11) is not within the text's 10 bytes");
  EXPECT_EQ(errorOf(TextDataSource::create(text, -1, 5, 3, 1)),
            "the range [-1, 5) is not within the text's 10 bytes");
  EXPECT_EQ(errorOf(TextDataSource::create(text, 5, 8, 3, 1)),
            "the range [5, 8) is shorter than a window of 3 tokens and its "
            "next token");
  // No overflow in T + 1.
  EXPECT_EQ(errorOf(TextDataSource::create(text, 0, 10, INT64_MAX, 1)),
            "the range [0, 10) is shorter than a window of "
            "9223372036854775807 tokens and its next token");
  EXPECT_EQ(errorOf(TextDataSource::create(Tensor::zeros(DType::I32, {10}), 0,
                                           10, 3, 1)),
            "a text is a contiguous tensor of bytes (i8 [L]), not "
            "tensor<10xi32>");
}

// The first label outside [0, classes), by its row-major index over the
// windows' labels, found from the bytes; a byte only some windows read as
// an input is no label of theirs.
TEST(TextDataSource, FindsLabelsOutsideFromTheBytes) {
  // Bytes 1 (0x90) and 7 (0xa0) are above 127.
  Tensor text = bytesOf(std::string("a\x90") + "cdefg\xa0ij");
  TextDataSource every = unwrap(TextDataSource::create(text, 0, 10, 3, 1));
  EXPECT_EQ(unwrap(every.findLabelOutside(256)), std::nullopt);
  EXPECT_EQ(unwrap(every.findLabelOutside(0xa1)), std::nullopt);
  // Byte 1 (0x90) is window 0's first label.
  std::optional<BadLabel> bad = unwrap(every.findLabelOutside(128));
  ASSERT_TRUE(bad.has_value());
  EXPECT_EQ(bad->index, 0);
  EXPECT_EQ(bad->value, 0x90);
  // Byte 7 (0xa0) is first a label of window 4 (labels 5-7), at 2.
  bad = unwrap(every.findLabelOutside(0x91));
  ASSERT_TRUE(bad.has_value());
  EXPECT_EQ(bad->index, 4 * 3 + 2);
  EXPECT_EQ(bad->value, 0xa0);
  // The default scan (by gathering) agrees.
  EXPECT_EQ(unwrap(every.DataSource::findLabelOutside(0x91))->index, 14);
  // From byte 1 on, windows of stride 4 over [1, 10): 1-3 (labels 2-4) and
  // 5-7 (labels 6-8): byte 1 is no label, byte 7 is window 1's second.
  TextDataSource strided = unwrap(TextDataSource::create(text, 1, 10, 3, 4));
  EXPECT_EQ(strided.size(), 2);
  bad = unwrap(strided.findLabelOutside(128));
  ASSERT_TRUE(bad.has_value());
  EXPECT_EQ(bad->index, 1 * 3 + 1);
  EXPECT_EQ(unwrap(strided.DataSource::findLabelOutside(128))->index, 4);
  // Stride 5 over [0, 10): windows 0-2 and 5-7 (labels 1-3 and 6-8).
  TextDataSource gaps = unwrap(TextDataSource::create(text, 0, 10, 3, 5));
  bad = unwrap(gaps.findLabelOutside(0x91));
  ASSERT_TRUE(bad.has_value());
  EXPECT_EQ(bad->index, 3 + 1);
  EXPECT_EQ(unwrap(gaps.DataSource::findLabelOutside(0x91))->index, 4);
  // Byte 4 is in no window's labels with stride 5 and T = 2 (labels 1-2,
  // 6-7).
  Tensor gap = bytesOf(std::string("abcd\xf0") + "fghij");
  TextDataSource skips = unwrap(TextDataSource::create(gap, 0, 10, 2, 5));
  EXPECT_EQ(unwrap(skips.findLabelOutside(128)), std::nullopt);
  EXPECT_EQ(unwrap(skips.DataSource::findLabelOutside(128)), std::nullopt);
}

TEST(TextDataSource, SplitHoldsOutTheTail) {
  std::string text;
  for (int i = 0; i < 100; ++i)
    text += char('a' + i % 26);
  TextCorpus corpus;
  corpus.bytes = bytesOf(text);
  // 10% of 100: the last 10 bytes, windows of 4 at 90, 94 (labels to 99).
  TextSplit split = unwrap(splitText(corpus, "t.txt", 4, 0.1));
  EXPECT_EQ(split.train.begin(), 0);
  EXPECT_EQ(split.train.end(), 90);
  EXPECT_EQ(split.train.stride(), 1);
  EXPECT_EQ(split.train.size(), 90 - 4);
  EXPECT_EQ(split.validation.begin(), 90);
  EXPECT_EQ(split.validation.end(), 100);
  EXPECT_EQ(split.validation.stride(), 4);
  EXPECT_EQ(split.validation.size(), 2);
  auto [valInputs, valLabels] = windows(split.validation, {0, 1});
  EXPECT_EQ(valInputs,
            std::vector<std::string>({text.substr(90, 4), text.substr(94, 4)}));
  EXPECT_EQ(valLabels,
            std::vector<std::string>({text.substr(91, 4), text.substr(95, 4)}));
  // The last training window's labels end where the tail begins.
  auto [lastInputs, lastLabels] = windows(split.train, {85});
  EXPECT_EQ(lastLabels[0], text.substr(86, 4));

  // Another fraction: floor(100 * 0.25) = 25 bytes held out.
  TextSplit quarter = unwrap(splitText(corpus, "t.txt", 4, 0.25));
  EXPECT_EQ(quarter.validation.begin(), 75);
  EXPECT_EQ(quarter.validation.size(), 6); // floor(24 / 4)

  EXPECT_EQ(errorOf(splitText(corpus, "t.txt", 0, 0.1)),
            "the context must be at least 1 token (--context 0)");
  EXPECT_EQ(errorOf(splitText(corpus, "t.txt", -3, 0.1)),
            "the context must be at least 1 token (--context -3)");
  for (double bad : {0.0, 1.0, -0.5, 2.0, std::nan("")})
    EXPECT_TRUE(llvm::StringRef(errorOf(splitText(corpus, "t.txt", 4, bad)))
                    .starts_with("the validation fraction must be in (0, 1) "
                                 "(--validation-fraction "))
        << bad;
  EXPECT_EQ(errorOf(splitText(corpus, "t.txt", 4, 1.5)),
            "the validation fraction must be in (0, 1) (--validation-fraction "
            "1.5)");
  EXPECT_EQ(errorOf(splitText(corpus, "t.txt", 200, 0.1)),
            "t.txt: the text has 100 bytes, fewer than one window of 200 "
            "tokens and its next token needs (--context 200: 201 bytes)");
  EXPECT_EQ(errorOf(splitText(corpus, "t.txt", INT64_MAX, 0.1)),
            "t.txt: the text has 100 bytes, fewer than one window of "
            "9223372036854775807 tokens and its next token needs (--context "
            "9223372036854775807: too many bytes)");
  EXPECT_EQ(errorOf(splitText(corpus, "t.txt", 10, 0.1)),
            "t.txt: the held-out tail (--validation-fraction 0.1) of its 100 "
            "bytes is 10 bytes, fewer than one window of 10 tokens and its "
            "next token needs (--context 10: 11 bytes)");
  EXPECT_EQ(errorOf(splitText(corpus, "t.txt", 10, 0.95)),
            "t.txt: the training head (--validation-fraction 0.95) of its 100 "
            "bytes is 5 bytes, fewer than one window of 10 tokens and its "
            "next token needs (--context 10: 11 bytes)");
}

// fit's input pipeline draws the training windows in a seeded order: the
// same for the same seed, another for another, every window once per epoch.
TEST(TextDataSource, SeededRandomWindows) {
  std::string text;
  for (int i = 0; i < 200; ++i)
    text += char(' ' + (i * 37) % 90);
  TextCorpus corpus;
  corpus.bytes = bytesOf(text);
  TextSplit split = unwrap(splitText(corpus, "t", 8, 0.1));
  ASSERT_EQ(split.train.size(), 180 - 8);
  auto drawn = [&](uint64_t seed, int64_t epoch) {
    ChunkOptions options;
    options.batchSize = 16;
    options.stepsPerCall = 4;
    options.seed = seed;
    int64_t steps = (split.train.size() + 15) / 16;
    auto loader = unwrap(ChunkLoader::create(
        split.train, options, epoch * steps, (epoch + 1) * steps));
    std::vector<std::string> windows;
    for (;;) {
      const Chunk &chunk = unwrap(loader->next());
      if (chunk.steps == 0)
        break;
      int64_t rows = chunk.steps * chunk.batchSize;
      for (int64_t r = 0; r < rows; ++r) {
        std::string in, label;
        for (int64_t k = 0; k < 8; ++k) {
          in += char(chunk.inputs.data<int32_t>()[r * 8 + k]);
          label += char(chunk.labels.data<int32_t>()[r * 8 + k]);
        }
        // Every label is the input shifted by one.
        EXPECT_EQ(in.substr(1), label.substr(0, 7));
        windows.push_back(in);
      }
    }
    return windows;
  };
  std::vector<std::string> first = drawn(5, 0);
  EXPECT_EQ(first, drawn(5, 0));
  EXPECT_NE(first, drawn(6, 0));
  EXPECT_NE(first, drawn(5, 1));
  // Every start of the head once: the windows are distinct here (37 and 90
  // are coprime), so as a set they are all 172.
  ASSERT_EQ(first.size(), 172u);
  std::set<std::string> distinct(first.begin(), first.end());
  std::set<std::string> all;
  for (int64_t s = 0; s < 172; ++s)
    all.insert(text.substr(s, 8));
  EXPECT_EQ(distinct, all);
  // Not in the text's order.
  std::vector<std::string> inOrder;
  for (int64_t s = 0; s < 172; ++s)
    inOrder.push_back(text.substr(s, 8));
  EXPECT_NE(first, inOrder);
}

TEST(TextCorpus, DirectoryFilesInNameOrder) {
  TempDir dir;
  auto path = [&](llvm::StringRef name) {
    return (dir.path + "/" + name).str();
  };
  writeFile(path("b"), "BBB\n");
  writeFile(path("a"), "AA\n");
  writeFile(path("a.dat"), std::string("\0\0\0\2", 4)); // fortune's index of a
  writeFile(path("c.dat"), "C data\n");                 // no c: text
  writeFile(path(".hidden"), "hidden\n");
  writeFile(path("Z"), "upper\n"); // bytewise: before lowercase
  ASSERT_FALSE(llvm::sys::fs::create_link("b", path("b.u8")));
  ASSERT_FALSE(llvm::sys::fs::create_directory(path("sub")));
  writeFile(path("sub/inner"), "inner\n");
  writeFile(path("empty"), "");

  std::vector<std::string> files = unwrap(textFiles(dir.path));
  EXPECT_EQ(files, std::vector<std::string>({path("Z"), path("a"), path("b"),
                                             path("c.dat"), path("empty")}));
  TextCorpus corpus = unwrap(readTextCorpus(dir.path));
  std::string text(static_cast<const char *>(corpus.bytes.data()),
                   corpus.size());
  EXPECT_EQ(text, "upper\nAA\nBBB\nC data\n");
  ASSERT_EQ(corpus.files.size(), 5u);
  EXPECT_EQ(corpus.files[2].path, path("b"));
  EXPECT_EQ(corpus.files[2].bytes, 4);
  EXPECT_EQ(corpus.files[4].bytes, 0);

  // A file (or a link to one) is read itself, whatever its name.
  EXPECT_EQ(unwrap(textFiles(path("a.dat"))),
            std::vector<std::string>({path("a.dat")}));
  TextCorpus linked = unwrap(readTextCorpus(path("b.u8")));
  EXPECT_EQ(linked.size(), 4);
}

TEST(TextCorpus, ErrorsNameThePathAndTheOption) {
  TempDir dir;
  auto path = [&](llvm::StringRef name) {
    return (dir.path + "/" + name).str();
  };
  EXPECT_EQ(errorOf(readTextCorpus(path("missing.txt"))),
            path("missing.txt") +
                ": cannot open: No such file or directory (--data)");
  writeFile(path("empty.txt"), "");
  EXPECT_EQ(errorOf(readTextCorpus(path("empty.txt"))),
            path("empty.txt") + ": the file is empty: no text (--data)");
  ASSERT_EQ(::mkfifo(path("fifo").c_str(), 0600), 0);
  EXPECT_EQ(errorOf(readTextCorpus(path("fifo"))),
            path("fifo") + ": not a regular file (--data)");

  // Directories: no files at all, only links, a FIFO and a subdirectory,
  // only empty files.
  ASSERT_FALSE(llvm::sys::fs::create_directory(path("none")));
  EXPECT_EQ(errorOf(readTextCorpus(path("none"))),
            path("none") + ": the directory holds no text file (of its 0 "
                           "entries, none is a regular file that is not "
                           "hidden or a fortune index NAME.dat) (--data)");
  ASSERT_FALSE(llvm::sys::fs::create_directory(path("links")));
  ASSERT_FALSE(llvm::sys::fs::create_link("../empty.txt", path("links/l")));
  ASSERT_EQ(::mkfifo(path("links/f").c_str(), 0600), 0);
  ASSERT_FALSE(llvm::sys::fs::create_directory(path("links/d")));
  EXPECT_EQ(errorOf(readTextCorpus(path("links"))),
            path("links") + ": the directory holds no text file (of its 3 "
                            "entries, none is a regular file that is not "
                            "hidden or a fortune index NAME.dat) (--data)");
  ASSERT_FALSE(llvm::sys::fs::create_directory(path("empties")));
  writeFile(path("empties/a"), "");
  writeFile(path("empties/b"), "");
  EXPECT_EQ(errorOf(readTextCorpus(path("empties"))),
            path("empties") + ": its 2 files are empty: no text (--data)");

  // A text larger than the memory bound: an error, not an OOM kill.
  writeFile(path("twenty.txt"), "twenty bytes of text");
  ::setenv("FUSE_MAX_TENSOR_BYTES", "10", 1);
  std::string error = errorOf(readTextCorpus(path("twenty.txt")));
  ::unsetenv("FUSE_MAX_TENSOR_BYTES");
  EXPECT_EQ(error, "the text of '" + path("twenty.txt") +
                       "': cannot allocate tensor<20xi8>: its 20 bytes exceed "
                       "FUSE_MAX_TENSOR_BYTES (10 bytes)");
}

/// `n` bytes of a text whose next byte follows from the current one (a
/// fixed successor table over 16 letters, with some noise): a bigram model
/// learns it far below the 4 bits of a uniform guess.
std::string bigramText(int64_t n, unsigned seed) {
  std::string text;
  uint32_t state = seed * 2654435761u + 1;
  char c = 'a';
  for (int64_t i = 0; i < n; ++i) {
    text += c;
    state = state * 1664525u + 1013904223u;
    int next = (c - 'a') * 7 % 16;
    if ((state >> 24) % 8 == 0)
      next = (state >> 16) % 16;
    c = char('a' + next);
  }
  return text;
}

std::string readBytes(llvm::StringRef path) {
  auto buffer = llvm::MemoryBuffer::getFile(path);
  EXPECT_TRUE(bool(buffer)) << path.str();
  return buffer ? (*buffer)->getBuffer().str() : "";
}

std::string readTestInput(llvm::StringRef name) {
  return readBytes((FUSE_SOURCE_DIR "/test/fusec/Inputs/" + name).str());
}

// The bigram model learns a text: the training loss falls and the
// validation loss ends far below a uniform guess over 256 bytes (ln 256 =
// 5.55), near the text's entropy.
TEST(FitText, BigramLearnsText) {
  auto engine = makeEngine(readExample("bigram.mlir"));
  TextCorpus corpus;
  corpus.bytes = bytesOf(bigramText(6000, 1));
  TextSplit split = unwrap(splitText(corpus, "bigram", 64, 0.1));
  FitOptions options;
  options.epochs = 1;
  options.batchSize = 16;
  options.learningRate = 0.02f;
  options.stepsPerCall = 8;
  FitSummary summary =
      unwrap(fit(*engine, split.train, &split.validation, options));
  ASSERT_EQ(summary.history.size(), 1u);
  EXPECT_EQ(summary.steps, (5400 - 64 + 15) / 16);
  ASSERT_TRUE(summary.history[0].testLoss.has_value());
  EXPECT_LT(*summary.history[0].testLoss, 1.0);
  ASSERT_TRUE(summary.history[0].testAccuracy.has_value());
  EXPECT_GT(*summary.history[0].testAccuracy, 0.8);
}

// A model with a dynamic window length (`?x?xi32`) takes the data's; with a
// static one, a window of another length does not fit.
TEST(FitText, WindowLengthFromTheData) {
  auto any = makeEngine(readTestInput("bigram-any-context.mlir"));
  auto fixed = makeEngine(readExample("bigram.mlir"));
  TextCorpus corpus;
  corpus.bytes = bytesOf(bigramText(3000, 2));
  FitOptions options;
  options.batchSize = 8;
  options.stepsPerCall = 4;
  options.learningRate = 0.02f;
  for (int64_t t : {5, 16}) {
    TextSplit split = unwrap(splitText(corpus, "text", t, 0.1));
    FitSummary summary =
        unwrap(fit(*any, split.train, &split.validation, options));
    EXPECT_EQ(summary.steps, (2700 - t + 7) / 8) << t;
    EXPECT_LT(*summary.history.back().testLoss, 2.0) << t;
  }
  TextSplit split = unwrap(splitText(corpus, "text", 16, 0.1));
  EXPECT_EQ(errorOf(fit(*fixed, split.train, &split.validation, options)),
            "the model does not fit the data: 'train_steps' takes the batch "
            "(x: tensor<?x?x64xi32>, y: tensor<?x?x64xi32>); an example of "
            "the data is 16 (16 values), 'x' wants 64 values");
}

// maxSeconds 0 ends training after the first call, inside the epoch,
// evaluates and writes a checkpoint of that step; resuming from it finishes
// the epoch with the same bits as a run that never stopped.
TEST(FitText, StoppedRunResumesBitwise) {
  auto engine = makeEngine(readExample("bigram.mlir"));
  TextCorpus corpus;
  corpus.bytes = bytesOf(bigramText(2000, 3));
  TextSplit split = unwrap(splitText(corpus, "text", 64, 0.1));
  TempDir dir;
  auto path = [&](llvm::StringRef name) {
    return (dir.path + "/" + name).str();
  };
  FitOptions options;
  options.batchSize = 16;
  options.stepsPerCall = 3;
  options.seed = 4;
  options.checkpointPath = path("whole.safetensors");
  FitSummary whole =
      unwrap(fit(*engine, split.train, &split.validation, options));
  const int64_t stepsPerEpoch = (1800 - 64 + 15) / 16;
  EXPECT_EQ(whole.steps, stepsPerEpoch);
  EXPECT_FALSE(whole.stoppedEarly);
  EXPECT_TRUE(whole.history[0].complete);

  options.checkpointPath = path("stopped.safetensors");
  options.maxSeconds = 0;
  FitSummary stopped =
      unwrap(fit(*engine, split.train, &split.validation, options));
  EXPECT_TRUE(stopped.stoppedEarly);
  EXPECT_EQ(stopped.steps, 3);
  EXPECT_EQ(stopped.totalSteps, 3);
  ASSERT_EQ(stopped.history.size(), 1u);
  EXPECT_FALSE(stopped.history[0].complete);
  EXPECT_EQ(stopped.history[0].steps, 3);
  EXPECT_TRUE(stopped.history[0].testLoss.has_value());
  EXPECT_TRUE(llvm::sys::fs::exists(path("stopped.safetensors")));

  // Twice more, from each checkpoint: 3 steps each.
  options.resumePath = path("stopped.safetensors");
  options.seed.reset();
  options.batchSize.reset();
  FitSummary again =
      unwrap(fit(*engine, split.train, &split.validation, options));
  EXPECT_EQ(again.steps, 3);
  EXPECT_EQ(again.totalSteps, 6);
  // The rest of the epoch, with another K.
  options.maxSeconds.reset();
  options.stepsPerCall = 5;
  options.checkpointPath = path("resumed.safetensors");
  FitSummary rest =
      unwrap(fit(*engine, split.train, &split.validation, options));
  EXPECT_EQ(rest.steps, stepsPerEpoch - 6);
  EXPECT_FALSE(rest.stoppedEarly);
  EXPECT_TRUE(rest.history[0].complete);
  EXPECT_EQ(*rest.history[0].testLoss, *whole.history[0].testLoss);
  EXPECT_EQ(readBytes(path("resumed.safetensors")),
            readBytes(path("whole.safetensors")));

  // Resuming on other data (another number of windows) is refused.
  TextSplit other = unwrap(splitText(corpus, "text", 63, 0.1));
  options.resumePath = path("stopped.safetensors");
  auto anyEngine = makeEngine(readTestInput("bigram-any-context.mlir"));
  EXPECT_EQ(
      errorOf(fit(*anyEngine, other.train, &other.validation, options)),
      path("stopped.safetensors") +
          ": the checkpoint was trained on 1736 examples, the training data "
          "has 1737: resuming on other data would change the data order");

  // A budget must be a finite number of seconds, at least 0.
  options.resumePath.clear();
  for (double bad :
       {-1.0, std::nan(""), std::numeric_limits<double>::infinity()}) {
    options.maxSeconds = bad;
    EXPECT_TRUE(
        llvm::StringRef(errorOf(fit(*engine, split.train, nullptr, options)))
            .starts_with("the time budget must be a finite number of "
                         "seconds, at least 0 (--max-seconds "))
        << bad;
  }
}

} // namespace
