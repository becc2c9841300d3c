//===- IdxTest.cpp - Reading IDX data sets --------------------------------===//
//
// Small IDX files written here, plain and gzip-compressed, read back; each
// kind of damage is a clear error naming the file; and, where Debian's
// dataset-fashion-mnist is installed, its test split as published.
//
//===----------------------------------------------------------------------===//

#include "TestUtils.h"

#include "fuse/Data/Idx.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <zlib.h>

using namespace fuse;
using namespace fuse::data;
using namespace fuse::testing;

namespace {

/// A fresh directory removed at the end of the test.
class IdxFiles : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("fuse-idx", dir_));
  }
  void TearDown() override { llvm::sys::fs::remove_directories(dir_); }

  std::string path(llvm::StringRef name) const {
    llvm::SmallString<256> p(dir_);
    llvm::sys::path::append(p, name);
    return std::string(p);
  }

  /// Writes an IDX file of bytes: header for `shape`, then `data`.
  void write(llvm::StringRef name, std::vector<uint32_t> shape,
             std::vector<unsigned char> data, bool gzip,
             unsigned char type = 0x08) {
    std::vector<unsigned char> bytes = {
        0, 0, type, static_cast<unsigned char>(shape.size())};
    for (uint32_t d : shape)
      for (int shift = 24; shift >= 0; shift -= 8)
        bytes.push_back(static_cast<unsigned char>(d >> shift));
    bytes.insert(bytes.end(), data.begin(), data.end());
    std::string file = path(name);
    gzFile out = gzopen(file.c_str(), gzip ? "wb" : "wbT");
    ASSERT_NE(out, nullptr);
    ASSERT_EQ(gzwrite(out, bytes.data(), bytes.size()), int(bytes.size()));
    gzclose(out);
  }

  llvm::SmallString<128> dir_;
};

TEST_F(IdxFiles, ReadsPlainAndGzipSplits) {
  write("train-images-idx3-ubyte.gz", {3, 2, 2},
        {0, 255, 51, 102, 1, 2, 3, 4, 5, 6, 7, 8}, /*gzip=*/true);
  write("train-labels-idx1-ubyte", {3}, {9, 0, 4}, /*gzip=*/false);
  TensorDataSource split = unwrap(loadIdxSplit(dir_, Split::Train));
  ASSERT_EQ(split.size(), 3);
  EXPECT_EQ(split.inputs().shape(), llvm::ArrayRef<int64_t>({3, 2, 2}));
  EXPECT_EQ(split.inputs().data<float>()[1], 1.0f);
  EXPECT_EQ(split.inputs().data<float>()[2], 51.0f / 255.0f);
  EXPECT_EQ(split.labels().dtype(), DType::I32);
  EXPECT_EQ(split.labels().data<int32_t>()[0], 9);
  EXPECT_EQ(split.labels().data<int32_t>()[2], 4);
  // The reader checked every label against the class count.
  EXPECT_EQ(split.numClasses(), std::optional<int64_t>(10));
}

TEST_F(IdxFiles, DamageIsAnErrorNamingTheFile) {
  write("short", {2, 2, 2}, {1, 2, 3}, true);
  EXPECT_EQ(errorOf(readIdx(path("short"))),
            "'" + path("short") +
                "' is truncated: its header declares 8 elements, the file "
                "holds fewer");
  write("long", {2}, {1, 2, 3}, false);
  EXPECT_EQ(errorOf(readIdx(path("long"))),
            "'" + path("long") +
                "' has data after the 2 elements its header declares");
  write("floats", {2}, {1, 2, 3, 4, 5, 6, 7, 8}, false, 0x0D);
  EXPECT_EQ(errorOf(readIdx(path("floats"))),
            "'" + path("floats") +
                "' holds IDX element type 0xd; only unsigned bytes (0x08) "
                "are supported");
  {
    std::string file = path("text");
    gzFile out = gzopen(file.c_str(), "wbT");
    gzputs(out, "hello, world");
    gzclose(out);
  }
  EXPECT_EQ(errorOf(readIdx(path("text"))),
            "'" + path("text") +
                "' is not an IDX file (or is a corrupt gzip stream): its "
                "magic number starts with 104, 101 instead of 0, 0");
  EXPECT_NE(errorOf(readIdx(path("missing")))
                .find(path("missing") + ": cannot open: "),
            std::string::npos);
}

TEST_F(IdxFiles, SplitsAreCheckedAgainstTheirLabels) {
  write("t10k-images-idx3-ubyte", {2, 1, 1}, {1, 2}, false);
  write("t10k-labels-idx1-ubyte", {3}, {1, 2, 3}, false);
  EXPECT_EQ(errorOf(loadIdxSplit(dir_, Split::Test)),
            "'" + path("t10k-labels-idx1-ubyte") +
                "' has 3 labels for the 2 images of '" +
                path("t10k-images-idx3-ubyte") + "'");
  write("t10k-labels-idx1-ubyte", {2}, {1, 12}, false);
  EXPECT_EQ(errorOf(loadIdxSplit(dir_, Split::Test)),
            "'" + path("t10k-labels-idx1-ubyte") +
                "': label #1 is 12, outside [0, 10) for 10 classes");
  EXPECT_EQ(errorOf(loadIdxSplit(path("nope"), Split::Test)),
            "no data set directory '" + path("nope") + "'");
}

TEST(FashionMnist, TestSplitAsPublished) {
  if (!llvm::sys::fs::is_directory(kFashionMnistDir))
    GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  TensorDataSource test = unwrap(loadIdxSplit(kFashionMnistDir, Split::Test));
  EXPECT_EQ(test.inputs().shape(), llvm::ArrayRef<int64_t>({10000, 28, 28}));
  std::vector<int> perClass(10, 0);
  for (int64_t i = 0; i < test.size(); ++i)
    ++perClass[test.labels().data<int32_t>()[i]];
  EXPECT_EQ(perClass, std::vector<int>(10, 1000));
  float lo = 1, hi = 0;
  for (int64_t i = 0; i < test.inputs().numElements(); ++i) {
    lo = std::min(lo, test.inputs().data<float>()[i]);
    hi = std::max(hi, test.inputs().data<float>()[i]);
  }
  EXPECT_EQ(lo, 0.0f);
  EXPECT_EQ(hi, 1.0f);
}

} // namespace
