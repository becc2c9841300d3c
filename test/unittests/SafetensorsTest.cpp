//===- SafetensorsTest.cpp - Safetensors checkpoints ----------------------===//
//
// Tensors of every dtype, 0-d, empty and strided, written and read back;
// the exact bytes of tiny files built by hand from the format's description;
// atomic replacement that leaves no temporary file, even when it fails; and
// each kind of damage is a clear error naming the file.
//
//===----------------------------------------------------------------------===//

#include "TestUtils.h"

#include "fuse/Data/Safetensors.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <unistd.h>

using namespace fuse;
using namespace fuse::data;
using namespace fuse::testing;

namespace {

/// `value` as 8 little-endian bytes.
std::string le64(uint64_t value) {
  std::string bytes(8, '\0');
  for (int i = 0; i < 8; ++i)
    bytes[i] = static_cast<char>(value >> (8 * i));
  return bytes;
}

/// A safetensors file of `header` (unpadded) and `data`.
std::string fileOf(llvm::StringRef header, llvm::StringRef data = "") {
  return le64(header.size()) + header.str() + data.str();
}

/// The elements of `t` in row-major order, as bytes.
std::string bytesOf(const Tensor &t) {
  Tensor rowMajor = t.contiguousCopy();
  return std::string(static_cast<const char *>(rowMajor.data()),
                     rowMajor.numElements() * byteWidth(rowMajor.dtype()));
}

/// A fresh directory removed at the end of the test.
class SafetensorsFiles : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_FALSE(
        llvm::sys::fs::createUniqueDirectory("fuse-safetensors", dir_));
  }
  void TearDown() override { llvm::sys::fs::remove_directories(dir_); }

  std::string path(llvm::StringRef name) const {
    llvm::SmallString<256> p(dir_);
    llvm::sys::path::append(p, name);
    return std::string(p);
  }

  static std::string readBytes(llvm::StringRef file) {
    auto buffer = llvm::MemoryBuffer::getFile(file, /*IsText=*/false,
                                              /*RequiresNullTerminator=*/false);
    return buffer ? (*buffer)->getBuffer().str() : "<unreadable>";
  }

  static void writeBytes(llvm::StringRef file, llvm::StringRef bytes) {
    std::error_code ec;
    llvm::raw_fd_ostream out(file, ec);
    ASSERT_FALSE(ec) << ec.message();
    out << bytes;
  }

  /// The names in the directory, sorted.
  std::vector<std::string> entries() const {
    std::vector<std::string> names;
    std::error_code ec;
    for (llvm::sys::fs::directory_iterator it(dir_, ec), end; !ec && it != end;
         it.increment(ec))
      names.push_back(llvm::sys::path::filename(it->path()).str());
    llvm::sort(names);
    return names;
  }

  /// Whether reading `bytes` as a file fails with an error that names the
  /// file and contains `phrase`.
  ::testing::AssertionResult readFails(const std::string &bytes,
                                       llvm::StringRef phrase) {
    std::string file = path("damaged.safetensors");
    writeBytes(file, bytes);
    std::string error = errorOf(readSafetensors(file));
    if (llvm::StringRef(error).starts_with(file + ": ") &&
        llvm::StringRef(error).contains(phrase))
      return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure()
           << "error '" << error << "' does not name the file and say '"
           << phrase.str() << "'";
  }

  llvm::SmallString<128> dir_;
};

/// One tensor of each dtype, a 0-d one, an empty one and two strided views
/// of `base` (6 floats).
std::vector<NamedTensor> sampleTensors(float *base) {
  Tensor half = Tensor::empty(DType::F16, {2});
  half.data<uint16_t>()[0] = 0x3c00; // 1.0
  half.data<uint16_t>()[1] = 0xc000; // -2.0
  Tensor brain = Tensor::empty(DType::BF16, {1, 2});
  brain.data<uint16_t>()[0] = 0x3f80; // 1.0
  brain.data<uint16_t>()[1] = 0x4049; // ~3.14
  return {
      {"weights",
       Tensor::fromValues<float>({2, 3}, {1, -2, 3.5f, 0, 1e-8f, 6})},
      {"scalar", Tensor::fromValues<double>({}, {2.5})},
      {"empty", Tensor::zeros(DType::I32, {0, 4})},
      {"mask", Tensor::fromValues<bool>({3}, {true, false, true})},
      {"bytes", Tensor::fromValues<int8_t>({2}, {-128, 127})},
      {"shorts", Tensor::fromValues<int16_t>({2}, {-3, 300})},
      {"ints", Tensor::fromValues<int32_t>({2, 1}, {-70000, 70000})},
      {"step", Tensor::fromValues<int64_t>({1}, {int64_t(1) << 40})},
      {"half", half},
      {"brain", brain},
      // [[0, 3], [1, 4], [2, 5]]: the transpose of base as [2, 3].
      {"transposed", Tensor::view(base, DType::F32, {3, 2}, {1, 3})},
      // [1, 4]: the middle column.
      {"column", Tensor::view(base + 1, DType::F32, {2}, {3})},
  };
}

TEST_F(SafetensorsFiles, RoundTripsDtypesShapesViewsAndMetadata) {
  float base[6] = {0, 1, 2, 3, 4, 5};
  std::vector<NamedTensor> tensors = sampleTensors(base);
  std::map<std::string, std::string> metadata = {
      {"step", "3"},
      {"optimizer", "adam"},
      {"note", "\"quoted\" back\\slash\nnew line, tab\t, \xc3\xbcmlaut"}};
  std::string file = path("ckpt.safetensors");
  ASSERT_EQ(errorOf(writeSafetensors(file, tensors, metadata)), "");

  Safetensors loaded = unwrap(readSafetensors(file));
  EXPECT_EQ(loaded.metadata, metadata);
  ASSERT_EQ(loaded.tensors.size(), tensors.size());
  for (size_t i = 0; i < tensors.size(); ++i) {
    const std::string &name = tensors[i].name;
    const Tensor &got = loaded.tensors[i].tensor;
    EXPECT_EQ(loaded.tensors[i].name, name);
    EXPECT_EQ(got.dtype(), tensors[i].tensor.dtype()) << name;
    EXPECT_EQ(got.shape(), tensors[i].tensor.shape()) << name;
    EXPECT_TRUE(got.isOwning() && got.isContiguous()) << name;
    EXPECT_EQ(bytesOf(got), bytesOf(tensors[i].tensor)) << name;
  }
  EXPECT_EQ(loaded.find("scalar")->rank(), 0);
  EXPECT_EQ(loaded.find("scalar")->at<double>({}), 2.5);
  EXPECT_EQ(loaded.find("transposed")->at<float>({0, 1}), 3.0f);
  EXPECT_EQ(loaded.find("transposed")->at<float>({2, 0}), 2.0f);
  EXPECT_EQ(loaded.find("column")->at<float>({1}), 4.0f);
  EXPECT_EQ(loaded.find("nope"), nullptr);
  // i1 is the format's BOOL.
  EXPECT_TRUE(llvm::StringRef(readBytes(file))
                  .contains(R"("mask":{"dtype":"BOOL","shape":[3],)"));
}

TEST_F(SafetensorsFiles, WritesTheExactBytesOfTheFormat) {
  std::string file = path("tiny.safetensors");
  std::vector<NamedTensor> tensors = {
      {"w", Tensor::fromValues<float>({2}, {1, 2})}};
  ASSERT_EQ(errorOf(writeSafetensors(file, tensors, {{"step", "3"}})), "");
  // 82 bytes of JSON and 6 spaces make an 88-byte (0x58) header, so the data
  // starts at byte 96, a multiple of 8. 1.0f is 0x3f800000, 2.0f 0x40000000.
  std::string golden =
      std::string("\x58\0\0\0\0\0\0\0", 8) +
      R"({"__metadata__":{"step":"3"},"w":{"dtype":"F32","shape":[2],)"
      R"("data_offsets":[0,8]}})" +
      "      " + std::string("\0\0\x80\x3f\0\0\0\x40", 8);
  EXPECT_EQ(readBytes(file), golden);

  // No tensors and no metadata: "{}" padded to 8 bytes, as Python writes it.
  ASSERT_EQ(errorOf(writeSafetensors(file, {})), "");
  EXPECT_EQ(readBytes(file), le64(8) + "{}      ");
  EXPECT_TRUE(unwrap(readSafetensors(file)).tensors.empty());
}

TEST_F(SafetensorsFiles, SameInputSameBytes) {
  float base[6] = {0, 1, 2, 3, 4, 5};
  std::vector<NamedTensor> tensors = sampleTensors(base);
  std::map<std::string, std::string> metadata = {{"b", "2"}, {"a", "1"}};
  ASSERT_EQ(errorOf(writeSafetensors(path("one"), tensors, metadata)), "");
  ASSERT_EQ(errorOf(writeSafetensors(path("two"), tensors, metadata)), "");
  std::string first = readBytes(path("one"));
  EXPECT_EQ(llvm::support::endian::read64le(first.data()) % 8, 0u);
  EXPECT_EQ(readBytes(path("two")), first);
}

TEST_F(SafetensorsFiles, ReplacesAnExistingFileAtomically) {
  std::string file = path("ckpt.safetensors");
  writeBytes(file, "old contents");
  std::vector<NamedTensor> tensors = {
      {"a", Tensor::fromValues<int32_t>({2}, {7, 8})}};
  ASSERT_EQ(errorOf(writeSafetensors(file, tensors)), "");
  Safetensors loaded = unwrap(readSafetensors(file));
  ASSERT_EQ(loaded.tensors.size(), 1u);
  EXPECT_EQ(loaded.tensors[0].tensor.at<int32_t>({1}), 8);
  EXPECT_EQ(entries(), std::vector<std::string>{"ckpt.safetensors"});
}

TEST_F(SafetensorsFiles, FailedWritesLeaveNothingBehind) {
  std::vector<NamedTensor> tensors = {
      {"a", Tensor::fromValues<float>({1}, {1})}};
  std::string missing = path("no/such/dir/ckpt.safetensors");
  EXPECT_EQ(errorOf(writeSafetensors(missing, tensors)),
            missing + ": cannot create a temporary file: No such file or "
                      "directory");
  writeBytes(path("plain"), "x");
  std::string underFile = path("plain/ckpt.safetensors");
  EXPECT_EQ(errorOf(writeSafetensors(underFile, tensors)),
            underFile + ": cannot create a temporary file: Not a directory");

  // Bad input fails before anything is written.
  std::string file = path("ckpt.safetensors");
  writeBytes(file, "old contents");
  std::vector<NamedTensor> twice = {tensors[0], tensors[0]};
  EXPECT_EQ(errorOf(writeSafetensors(file, twice)),
            file + ": two tensors are named 'a'");
  std::vector<NamedTensor> reserved = {{"__metadata__", tensors[0].tensor}};
  EXPECT_EQ(errorOf(writeSafetensors(file, reserved)),
            file + ": '__metadata__' cannot name a tensor");
  std::vector<NamedTensor> noData = {{"a", Tensor()}};
  EXPECT_EQ(errorOf(writeSafetensors(file, noData)),
            file + ": tensor 'a' has no data");
  std::vector<NamedTensor> badName = {{"\xff", tensors[0].tensor}};
  EXPECT_NE(errorOf(writeSafetensors(file, badName)).find("not valid UTF-8"),
            std::string::npos);
  EXPECT_EQ(readBytes(file), "old contents");
  EXPECT_EQ(entries(), (std::vector<std::string>{"ckpt.safetensors", "plain"}));
}

TEST_F(SafetensorsFiles, ReadOnlyDirectoryFailsCleanly) {
  if (::geteuid() == 0)
    GTEST_SKIP() << "root writes into read-only directories";
  std::string file = path("ckpt.safetensors");
  writeBytes(file, "old contents");
  ASSERT_FALSE(llvm::sys::fs::setPermissions(
      dir_, llvm::sys::fs::owner_read | llvm::sys::fs::owner_exe));
  std::string error = errorOf(
      writeSafetensors(file, {{"a", Tensor::fromValues<float>({1}, {1})}}));
  ASSERT_FALSE(llvm::sys::fs::setPermissions(dir_, llvm::sys::fs::all_perms));
  EXPECT_EQ(error,
            file + ": cannot create a temporary file: Permission denied");
  EXPECT_EQ(readBytes(file), "old contents");
  EXPECT_EQ(entries(), std::vector<std::string>{"ckpt.safetensors"});
}

TEST_F(SafetensorsFiles, ReadsFilesAsPythonWritesThem) {
  // Python sorts by dtype alignment, then name; keys need not follow the
  // data order. 1.5f is 0x3fc00000.
  std::string header =
      R"({"__metadata__":{"format":"pt"},)"
      R"("b":{"dtype":"I8","shape":[2],"data_offsets":[4,6]},)"
      R"("a":{"dtype":"F32","shape":[],"data_offsets":[0,4]}})";
  header.append((8 - header.size() % 8) % 8, ' ');
  std::string file = path("python.safetensors");
  writeBytes(file, fileOf(header, llvm::StringRef("\0\0\xc0\x3f\xff\x07", 6)));
  Safetensors loaded = unwrap(readSafetensors(file));
  EXPECT_EQ(loaded.metadata,
            (std::map<std::string, std::string>{{"format", "pt"}}));
  ASSERT_EQ(loaded.tensors.size(), 2u);
  EXPECT_EQ(loaded.tensors[0].name, "a");
  EXPECT_EQ(loaded.tensors[0].tensor.at<float>({}), 1.5f);
  EXPECT_EQ(loaded.tensors[1].name, "b");
  EXPECT_EQ(loaded.tensors[1].tensor.at<int8_t>({0}), -1);
  EXPECT_EQ(loaded.tensors[1].tensor.at<int8_t>({1}), 7);

  // Unpadded, with whitespace, and a null "__metadata__".
  writeBytes(file, fileOf("{ \"__metadata__\" : null,\n \"x\": {\"dtype\": "
                          "\"BOOL\", \"shape\": [1, 1], \"data_offsets\": "
                          "[0, 1]} }",
                          "\x01"));
  loaded = unwrap(readSafetensors(file));
  EXPECT_TRUE(loaded.metadata.empty());
  ASSERT_EQ(loaded.tensors.size(), 1u);
  EXPECT_EQ(loaded.tensors[0].tensor.dtype(), DType::I1);
  EXPECT_EQ(loaded.tensors[0].tensor.at<bool>({0, 0}), true);
}

TEST_F(SafetensorsFiles, DamageIsAnErrorNamingTheFile) {
  std::string missing = path("missing.safetensors");
  EXPECT_EQ(errorOf(readSafetensors(missing)),
            missing + ": cannot open: No such file or directory");

  EXPECT_TRUE(readFails("abc", "shorter than the 8-byte header length"));
  EXPECT_TRUE(readFails(le64(100) + "{}",
                        "header length 100 is larger than the 2 bytes after "
                        "it"));
  EXPECT_TRUE(readFails(fileOf(R"({"a":)"), "header is not valid JSON"));
  EXPECT_TRUE(readFails(fileOf("{\"\xff\":1}"), "header is not valid JSON"));
  EXPECT_TRUE(readFails(fileOf("[1, 2]"), "header is not a JSON object"));

  EXPECT_TRUE(readFails(fileOf(R"({"a":3})"),
                        "tensor 'a' is not described by a JSON object"));
  EXPECT_TRUE(
      readFails(fileOf(R"({"a":{"shape":[1],"data_offsets":[0,4]}})", "1234"),
                "tensor 'a' has no string \"dtype\""));
  EXPECT_TRUE(readFails(
      fileOf(R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}})", "1"),
      "tensor 'a' has unsupported dtype 'U8'"));
  EXPECT_TRUE(
      readFails(fileOf(R"({"a":{"dtype":"F32","data_offsets":[0,4]}})", "1234"),
                "tensor 'a' has no \"shape\" array"));
  for (llvm::StringRef shape : {"[-1]", "[\"2\"]", "[1.5]", "3"})
    EXPECT_TRUE(readFails(fileOf((R"({"a":{"dtype":"F32","shape":)" + shape +
                                  R"(,"data_offsets":[0,4]}})")
                                     .str(),
                                 "1234"),
                          shape == "3"
                              ? "tensor 'a' has no \"shape\" array"
                              : "tensor 'a' has a shape entry that is not a "
                                "non-negative integer"));
  // 2^32 * 2^32 elements; 2^61 elements of 4 bytes.
  EXPECT_TRUE(readFails(
      fileOf(R"({"a":{"dtype":"F32","shape":[4294967296,4294967296,0],)"
             R"("data_offsets":[0,0]}})"),
      "tensor 'a' has a shape whose size overflows"));
  EXPECT_TRUE(
      readFails(fileOf(R"({"a":{"dtype":"F32","shape":[2305843009213693952],)"
                       R"("data_offsets":[0,0]}})"),
                "tensor 'a' has a shape whose size overflows"));
  for (llvm::StringRef offsets :
       {"", R"(,"data_offsets":[0])", R"(,"data_offsets":[-4,0])",
        R"(,"data_offsets":"0-4")"})
    EXPECT_TRUE(readFails(
        fileOf((R"({"a":{"dtype":"F32","shape":[1])" + offsets + "}}").str(),
               "1234"),
        "tensor 'a' has no \"data_offsets\" pair of "
        "non-negative integers"));
  EXPECT_TRUE(readFails(
      fileOf(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}})",
             "1234"),
      "tensor 'a' has data_offsets [0, 4], not the 8 bytes its dtype and "
      "shape take"));
  EXPECT_TRUE(readFails(
      fileOf(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[8,0]}})",
             "12345678"),
      "tensor 'a' has data_offsets [8, 0], not the 8 bytes"));
  EXPECT_TRUE(readFails(
      fileOf(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})",
             "1234"),
      "tensor 'a' has data_offsets [0, 8] past the end of the 4 bytes of "
      "data"));

  EXPECT_TRUE(readFails(
      fileOf(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
             R"("b":{"dtype":"I16","shape":[1],"data_offsets":[2,4]}})",
             "1234"),
      "tensors 'a' and 'b' overlap"));
  EXPECT_TRUE(readFails(
      fileOf(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
             R"("b":{"dtype":"F32","shape":[1],"data_offsets":[8,12]}})",
             "123456789abc"),
      "data bytes 4 to 8 belong to no tensor"));
  EXPECT_TRUE(readFails(
      fileOf(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})",
             "123456"),
      "data bytes 4 to 6 belong to no tensor"));
  // llvm::json keeps the last of duplicate keys, which leaves a hole.
  std::string duplicate =
      fileOf(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
             R"("a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
             "12345678");
  EXPECT_TRUE(readFails(duplicate, "data bytes 0 to 4 belong to no tensor"));

  EXPECT_TRUE(readFails(fileOf(R"({"__metadata__":["x"]})"),
                        "\"__metadata__\" is not a JSON object"));
  EXPECT_TRUE(readFails(fileOf(R"({"__metadata__":{"step":3}})"),
                        "\"__metadata__\" value of 'step' is not a string"));
}

} // namespace
