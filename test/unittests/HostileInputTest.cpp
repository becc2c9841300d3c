//===- HostileInputTest.cpp - Sizes and headers that lie ------------------===//
//
// Sizes that overflow or exceed the machine, and file headers that claim
// more than the file holds, are errors naming the tensor or file: never a
// crash, a heap overflow or an allocation of the claim. Checkpoint writes
// killed before their rename are cleaned up by the next write.
//
//===----------------------------------------------------------------------===//

#include "TestUtils.h"

#include "fuse/Data/Idx.h"
#include "fuse/Data/Safetensors.h"
#include "fuse/Npy.h"
#include "fuse/RegularFile.h"
#include "fuse/Trainer.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <ctime>
#include <vector>

using namespace fuse;
using namespace fuse::testing;

namespace {

constexpr int64_t k2to32 = int64_t(1) << 32;

/// A fresh directory removed at the end of the test.
class HostileFiles : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("fuse-hostile", dir_));
  }
  void TearDown() override { llvm::sys::fs::remove_directories(dir_); }

  std::string path(llvm::StringRef name) const {
    llvm::SmallString<256> p(dir_);
    llvm::sys::path::append(p, name);
    return std::string(p);
  }
  void writeFile(llvm::StringRef name, llvm::StringRef bytes) const {
    std::error_code ec;
    llvm::raw_fd_ostream out(path(name), ec);
    ASSERT_FALSE(ec);
    out << bytes;
  }
  bool exists(llvm::StringRef name) const {
    return llvm::sys::fs::exists(path(name));
  }

  llvm::SmallString<128> dir_;
};

/// Whether `text` contains `part` (gtest prints both when not).
bool contains(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

/// Sets FUSE_MAX_TENSOR_BYTES for its scope: a size checked against the
/// memory bound then fails the same way on every machine.
class MemoryBound {
public:
  explicit MemoryBound(uint64_t bytes) {
    ::setenv("FUSE_MAX_TENSOR_BYTES", std::to_string(bytes).c_str(), 1);
  }
  ~MemoryBound() { ::unsetenv("FUSE_MAX_TENSOR_BYTES"); }
  MemoryBound(const MemoryBound &) = delete;
  MemoryBound &operator=(const MemoryBound &) = delete;
};

/// The files of `dir` (none when it does not exist).
std::vector<std::string> filesIn(llvm::StringRef dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (llvm::sys::fs::recursive_directory_iterator it(dir, ec), end;
       !ec && it != end; it.increment(ec))
    if (it->type() == llvm::sys::fs::file_type::regular_file)
      names.push_back(it->path());
  return names;
}

/// The peak resident memory of this process so far, in bytes.
uint64_t peakResidentBytes() {
  struct rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  return uint64_t(usage.ru_maxrss) * 1024;
}

//===----------------------------------------------------------------------===//
// Tensor sizes
//===----------------------------------------------------------------------===//

TEST(TensorSizes, BytesAreCheckedForOverflow) {
  EXPECT_EQ(tensorBytes(DType::F32, {2, 3}), 24);
  EXPECT_EQ(tensorBytes(DType::F64, {}), 8);
  // 2^64 bytes; 2^63 bytes (one past int64).
  EXPECT_EQ(tensorBytes(DType::F32, {k2to32, k2to32}), std::nullopt);
  EXPECT_EQ(tensorBytes(DType::I8, {k2to32, k2to32 / 2}), std::nullopt);
  EXPECT_EQ(tensorBytes(DType::F32, {-1}), std::nullopt);
  // A zero dim anywhere: empty, however large the others.
  EXPECT_EQ(tensorBytes(DType::F32, {k2to32, k2to32, 0}), 0);
  EXPECT_EQ(tensorBytes(DType::F32, {0, k2to32, k2to32}), 0);
  // A view may have an overflowing shape; its count saturates.
  float x = 0;
  EXPECT_EQ(Tensor::view(&x, DType::F32, {k2to32, k2to32}).numElements(),
            INT64_MAX);
}

TEST(TensorSizes, ContiguityOfViewsWhoseShapeOverflows) {
  float x = 0;
  // Row-major up to dim 1, whose product with dim 2 passes int64: dim 0
  // cannot have a row-major stride (it overflowed, once undefined).
  EXPECT_FALSE(Tensor::view(&x, DType::F32, {2, k2to32, k2to32}, {0, k2to32, 1})
                   .isContiguous());
  // A leading dim of 1 needs no stride.
  EXPECT_TRUE(Tensor::view(&x, DType::F32, {1, k2to32, k2to32}, {0, k2to32, 1})
                  .isContiguous());
  EXPECT_FALSE(
      Tensor::view(&x, DType::F32, {k2to32, k2to32}, {0, 0}).isContiguous());
}

TEST(TensorSizes, TrainerStateCopiesAreCheckedNamingTheState) {
  auto engine = makeEngine(seedTrainingModule());
  std::unique_ptr<Trainer> trainer = unwrap(Trainer::create(*engine, "train"));
  // A broadcast view (4 bytes for 784 x 128) is copied into the trainer's
  // own state: past the memory bound an error naming the state, not the
  // abort of the unchecked copy.
  float x = 1;
  Tensor view = Tensor::view(&x, DType::F32, {784, 128}, {0, 0});
  {
    MemoryBound bound(1024);
    EXPECT_EQ(errorOf(trainer->setState("w1", view)),
              "state 'w1': cannot allocate tensor<784x128xf32>: its 401408 "
              "bytes exceed FUSE_MAX_TENSOR_BYTES (1024 bytes)");
  }
  ASSERT_EQ(errorOf(trainer->setState("w1", view)), "");
  EXPECT_EQ(unwrap(trainer->state("w1")).data<float>()[784 * 128 - 1], 1.0f);
}

TEST(TensorSizes, AllocationFailuresAreErrorsNamingTheTensor) {
  EXPECT_EQ(errorOf(Tensor::allocate(DType::F32, {k2to32, k2to32}, "'x'")),
            "'x': cannot allocate tensor<4294967296x4294967296xf32>: its size "
            "in bytes overflows 64 bits");
  EXPECT_EQ(errorOf(Tensor::allocate(DType::F32, {3, -2}, "'y'")),
            "'y': cannot allocate tensor<3x-2xf32>: dim 1 is negative");
  {
    // Past the memory bound (1 MiB here, whatever the machine): an error,
    // not an OOM kill; the bound itself is allowed.
    MemoryBound bound(1 << 20);
    EXPECT_EQ(maxTensorBytes(), uint64_t(1) << 20);
    EXPECT_EQ(errorOf(Tensor::allocate(DType::F32, {(1 << 18) + 1}, "'z'")),
              "'z': cannot allocate tensor<262145xf32>: its 1048580 bytes "
              "exceed FUSE_MAX_TENSOR_BYTES (1048576 bytes)");
    EXPECT_EQ(
        unwrap(Tensor::allocate(DType::F32, {1 << 18}, "'z'")).numElements(),
        1 << 18);
  }
  // Unset: the machine's memory, however much.
  EXPECT_GT(maxTensorBytes(), uint64_t(1) << 20);
  EXPECT_PRED2(contains, describeMaxTensorBytes(),
               "the memory of this machine");
  Tensor empty =
      unwrap(Tensor::allocate(DType::F32, {0, k2to32, k2to32}, "'e'"));
  EXPECT_EQ(empty.numElements(), 0);
  Tensor zeros = unwrap(Tensor::allocate(DType::I32, {3}, "'z'", true));
  EXPECT_EQ(zeros.data<int32_t>()[2], 0);
}

//===----------------------------------------------------------------------===//
// Engine: result, argument and workspace sizes
//===----------------------------------------------------------------------===//

constexpr const char *kHuge = R"mlir(
func.func @huge(%x: tensor<f32>) -> tensor<4294967296x4x4xf32> {
  %y = fuse.broadcast_to %x : (tensor<f32>) -> tensor<4294967296x4x4xf32>
  return %y : tensor<4294967296x4x4xf32>
}
func.func @sum(%x: tensor<?x?xf32>) -> tensor<f32> {
  %s = fuse.reduce_sum %x {axes = array<i64: 0, 1>} : (tensor<?x?xf32>) -> tensor<f32>
  return %s : tensor<f32>
}
func.func @square_sum(%x: tensor<?x?xf32>) -> tensor<f32> {
  %p = fuse.matmul %x, %x : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %s = fuse.reduce_sum %p {axes = array<i64: 0, 1>} : (tensor<?x?xf32>) -> tensor<f32>
  return %s : tensor<f32>
}
func.func @grow(%x: tensor<?xf32>) -> tensor<4611686018427387904x?xf32> {
  %y = fuse.broadcast_to %x : (tensor<?xf32>) -> tensor<4611686018427387904x?xf32>
  return %y : tensor<4611686018427387904x?xf32>
}
)mlir";

TEST(EngineSizes, ResultTooLargeIsAnErrorNamingIt) {
  auto engine = makeEngine(kHuge);
  Function &f = unwrap(engine->lookup("huge"));
  Tensor x = Tensor::fromValues<float>({}, {1.0f});
  MemoryBound bound(1 << 30);
  std::string expected = "result #0 of 'huge' (tensor<4294967296x4x4xf32>) is "
                         "too large: its 274877906944 bytes exceed "
                         "FUSE_MAX_TENSOR_BYTES (1073741824 bytes)";
  EXPECT_EQ(errorOf(f.call({x})), expected);
  EXPECT_EQ(errorOf(f.allocateResults({x})), expected);
}

TEST(EngineSizes, SizesAreCheckedBeforeCompilingOrLinking) {
  llvm::SmallString<128> cache;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("fuse-sizes", cache));
  auto removeCache =
      llvm::scope_exit([&] { llvm::sys::fs::remove_directories(cache); });
  EngineOptions options;
  options.cacheDir = std::string(cache);
  std::unique_ptr<Engine> engine = unwrap(Engine::create(options));
  ASSERT_FALSE(errorOf(engine->loadString(kHuge)).size());
  Tensor x = Tensor::fromValues<float>({}, {1.0f});
  Tensor m = randomTensor({32, 32}, 1);
  Function &huge = unwrap(engine->lookup("huge"));
  Function &square = unwrap(engine->lookup("square_sum"));
  MemoryBound bound(1024);
  // A result past the bound fails as the call is specialized: nothing is
  // compiled (the disk cache stays empty), however often it is called.
  for (int i = 0; i < 3; ++i)
    EXPECT_PRED2(contains, errorOf(huge.call({x})), "is too large");
  EXPECT_TRUE(filesIn(cache).empty());
  // A workspace past the bound (the 4 KiB product) is known once compiled:
  // it fails before linking, and a repeated call fails from the disk cache
  // without compiling again (the entry stays the same file).
  std::string workspace = "'square_sum' for (tensor<32x32xf32>) needs a "
                          "workspace for its intermediates larger than "
                          "FUSE_MAX_TENSOR_BYTES (1024 bytes)";
  EXPECT_EQ(errorOf(square.call({m})), workspace);
  std::vector<std::string> stored = filesIn(cache);
  ASSERT_EQ(stored.size(), 1u);
  llvm::sys::fs::UniqueID first, second;
  ASSERT_FALSE(llvm::sys::fs::getUniqueID(stored[0], first));
  EXPECT_EQ(errorOf(square.call({m})), workspace);
  ASSERT_FALSE(llvm::sys::fs::getUniqueID(stored[0], second));
  EXPECT_EQ(first, second);
  EXPECT_EQ(square.stats().diskHits, 0u);
}

TEST(EngineSizes, TypesTooLargeToAddressAreRejectedAtLoad) {
  std::unique_ptr<Engine> engine = unwrap(Engine::create({}));
  // 2^62 x 4 f32: 2^66 bytes. An error naming the op and type, and no
  // function of the module loaded.
  std::string error = errorOf(engine->loadString(R"mlir(
func.func @ok(%x: tensor<f32>) -> tensor<f32> {
  return %x : tensor<f32>
}
func.func @huge(%x: tensor<f32>) -> tensor<4611686018427387904x4xf32> {
  %y = fuse.broadcast_to %x : (tensor<f32>) -> tensor<4611686018427387904x4xf32>
  return %y : tensor<4611686018427387904x4xf32>
}
)mlir"));
  EXPECT_PRED2(contains, error,
               "6:8: error: 'fuse.broadcast_to' op result #0 has type "
               "tensor<4611686018427387904x4xf32>, too large: its size in "
               "bytes does not fit in 64 bits");
  EXPECT_NE(errorOf(engine->lookup("ok")), "");
}

TEST(EngineSizes, CallShapesWhoseResultsOverflowAreErrors) {
  auto engine = makeEngine(kHuge);
  Function &grow = unwrap(engine->lookup("grow"));
  // Each argument is small; the result for these shapes is 2^62 x 4 f32.
  Tensor x = Tensor::fromValues<float>({4}, {1, 2, 3, 4});
  std::string error = errorOf(grow.call({x}));
  EXPECT_PRED2(contains, error, "cannot specialize 'grow' for (tensor<4xf32>)");
  EXPECT_PRED2(contains, error,
               "'fuse.broadcast_to' op result #0 has type "
               "tensor<4611686018427387904x4xf32>, too large");
}

TEST(EngineSizes, ArgumentWhoseSizeOverflowsIsAnError) {
  auto engine = makeEngine(kHuge);
  Function &f = unwrap(engine->lookup("sum"));
  // A broadcast view: 4 bytes standing for 2^64 elements.
  float x = 1;
  Tensor view = Tensor::view(&x, DType::F32, {k2to32, k2to32}, {0, 0});
  EXPECT_EQ(errorOf(f.call({view})),
            "argument 'x' (#0) of 'sum': tensor<4294967296x4294967296xf32> "
            "is too large: its size in bytes overflows 64 bits");
}

//===----------------------------------------------------------------------===//
// .npy
//===----------------------------------------------------------------------===//

/// A version 1.0 .npy header for `shape`, padded to 128 bytes in all.
std::string npyHeader(llvm::StringRef descr, llvm::StringRef shape) {
  std::string dict = ("{'descr': '" + descr +
                      "', 'fortran_order': False, 'shape': (" + shape + "), }")
                         .str();
  dict.append(128 - 10 - dict.size() - 1, ' ');
  dict.push_back('\n');
  std::string header = "\x93NUMPY";
  header += char(1);
  header += char(0);
  header += char(dict.size() & 0xff);
  header += char(dict.size() >> 8);
  return header + dict;
}

TEST_F(HostileFiles, NpyShapeMustFitTheFile) {
  // 2^64 elements would wrap to 0 bytes: accepted before, heap corrupted.
  writeFile("wrap.npy", npyHeader("<f4", "4294967296, 4294967296"));
  EXPECT_EQ(errorOf(readNpy(path("wrap.npy"))),
            path("wrap.npy") + ": shape (4294967296, 4294967296) of f32 "
                               "overflows: its size in bytes exceeds 64 bits");
  // 4 TiB claimed by a 128-byte file: checked before allocating.
  writeFile("claim.npy", npyHeader("<f4", "1048576, 1048576"));
  EXPECT_EQ(errorOf(readNpy(path("claim.npy"))),
            path("claim.npy") +
                ": expected 4398046511104 bytes of data, found 0");
  writeFile("long.npy", npyHeader("<i4", "1,") + std::string(8, '\0'));
  EXPECT_EQ(errorOf(readNpy(path("long.npy"))),
            path("long.npy") + ": expected 4 bytes of data, found 8");
  writeFile("ok.npy", npyHeader("<i4", "2,") + std::string(8, '\1'));
  EXPECT_EQ(unwrap(readNpy(path("ok.npy"))).data<int32_t>()[1], 0x01010101);
}

TEST_F(HostileFiles, ReadersRejectFilesWithoutASize) {
  // /dev/zero never ends; a directory has no bytes.
  EXPECT_EQ(errorOf(readNpy("/dev/zero")), "/dev/zero: not a regular file");
  EXPECT_EQ(errorOf(readNpy(dir_)), std::string(dir_) + ": not a regular file");
  EXPECT_EQ(errorOf(data::readSafetensors("/dev/zero")),
            "/dev/zero: not a regular file");
  EXPECT_EQ(errorOf(data::readIdx("/dev/zero")),
            "/dev/zero: not a regular file");
  // A FIFO without a writer: opening must not wait for one. Every reader
  // goes through openRegularFile, with one wording.
  ASSERT_EQ(::mkfifo(path("fifo").c_str(), 0600), 0);
  std::string fifo = path("fifo") + ": not a regular file";
  EXPECT_EQ(errorOf(readNpy(path("fifo"))), fifo);
  EXPECT_EQ(errorOf(data::readSafetensors(path("fifo"))), fifo);
  EXPECT_EQ(errorOf(data::readIdx(path("fifo"))), fifo);
  EXPECT_EQ(errorOf(readRegularFile(path("fifo"))), fifo);
  EXPECT_EQ(errorOf(readRegularFile(path("missing"))),
            path("missing") + ": cannot open: No such file or directory");
  // Exactly the bytes fstat reported.
  writeFile("three", "abc");
  std::unique_ptr<llvm::MemoryBuffer> three =
      unwrap(readRegularFile(path("three")));
  EXPECT_EQ(three->getBuffer(), "abc");
}

//===----------------------------------------------------------------------===//
// IDX
//===----------------------------------------------------------------------===//

/// An IDX header of unsigned bytes for `shape`.
std::string idxHeader(std::vector<uint32_t> shape) {
  std::string bytes = {0, 0, 8, char(shape.size())};
  for (uint32_t d : shape)
    for (int shift = 24; shift >= 0; shift -= 8)
      bytes.push_back(char(d >> shift));
  return bytes;
}

/// Writes `bytes` gzip-compressed to `file`.
void writeGzip(const std::string &file, llvm::StringRef bytes) {
  gzFile out = gzopen(file.c_str(), "wb");
  ASSERT_NE(out, nullptr);
  ASSERT_EQ(gzwrite(out, bytes.data(), unsigned(bytes.size())),
            int(bytes.size()));
  gzclose(out);
}

TEST_F(HostileFiles, IdxClaimsCostNoMemoryBeforeTheDataArrives) {
  // 2,000,000 images of 28x28 claimed (1.5 GB of bytes, 6 GB as f32);
  // the stream holds 1,000 of them.
  std::string data = idxHeader({2000000, 28, 28}) + std::string(784000, '\7');
  writeGzip(path("claim.gz"), data);
  uint64_t before = peakResidentBytes();
  EXPECT_EQ(errorOf(data::readIdx(path("claim.gz"))),
            "'" + path("claim.gz") +
                "' is truncated: its header declares 1568000000 elements, the "
                "file holds fewer");
  // The buffer grew with the data (1 MiB chunks), not to the claim.
  EXPECT_LT(peakResidentBytes() - before, uint64_t(64) << 20);

  // 20,000,000 claimed: an error too (not LLVM's out-of-memory abort),
  // whether the claim exceeds this machine or the stream ends first.
  writeGzip(path("bigger.gz"), idxHeader({20000000, 28, 28}) + "abc");
  EXPECT_PRED2(contains, errorOf(data::readIdx(path("bigger.gz"))),
               "'" + path("bigger.gz") + "'");
  EXPECT_LT(peakResidentBytes() - before, uint64_t(64) << 20);

  // Plain files are checked against their size before reading.
  writeFile("plain", idxHeader({2000000, 28, 28}) + "abc");
  EXPECT_EQ(errorOf(data::readIdx(path("plain"))),
            "'" + path("plain") +
                "' is truncated: its header declares 1568000000 elements, the "
                "file holds fewer");
  writeFile("plainlong", idxHeader({2}) + "abc");
  EXPECT_EQ(errorOf(data::readIdx(path("plainlong"))),
            "'" + path("plainlong") +
                "' has data after the 2 elements its header declares");
  // A stream longer than its claim.
  writeGzip(path("long.gz"), idxHeader({2}) + "abc");
  EXPECT_EQ(errorOf(data::readIdx(path("long.gz"))),
            "'" + path("long.gz") +
                "' has data after the 2 elements its header declares");
  // And one that matches reads back, across several 1 MiB chunks.
  std::string many(3 << 20, '\0');
  for (size_t i = 0; i < many.size(); ++i)
    many[i] = char(i % 251);
  writeGzip(path("many.gz"), idxHeader({uint32_t(many.size())}) + many);
  Tensor labels = unwrap(data::readIdx(path("many.gz")));
  ASSERT_EQ(labels.numElements(), int64_t(many.size()));
  EXPECT_EQ(labels.data<int32_t>()[(3 << 20) - 1], ((3 << 20) - 1) % 251);
}

//===----------------------------------------------------------------------===//
// safetensors
//===----------------------------------------------------------------------===//

std::string le64(uint64_t v) {
  std::string bytes(8, '\0');
  for (int i = 0; i < 8; ++i)
    bytes[i] = char(v >> (8 * i));
  return bytes;
}

TEST_F(HostileFiles, SafetensorsHeaderLengthIsBounded) {
  // Larger than the Python package allows, whatever the file's size.
  writeFile("huge.safetensors", le64(uint64_t(1) << 40) + "{}");
  EXPECT_EQ(errorOf(data::readSafetensors(path("huge.safetensors"))),
            path("huge.safetensors") +
                ": header length 1099511627776 exceeds the limit of "
                "100000000 bytes");
  // Offsets past the data, and a shape larger than its byte range.
  std::string json =
      R"({"a":{"dtype":"F32","shape":[1048576,1048576],"data_offsets":[0,4]}})";
  writeFile("claim.safetensors", le64(json.size()) + json + "1234");
  EXPECT_PRED2(contains,
               errorOf(data::readSafetensors(path("claim.safetensors"))),
               "tensor 'a' has data_offsets [0, 4], not the "
               "4398046511104 bytes its dtype and shape take");
}

/// A process id that is certainly not running: a child that has exited and
/// been reaped.
pid_t deadPid() {
  pid_t child = fork();
  if (child == 0)
    _exit(0);
  int status;
  waitpid(child, &status, 0);
  return child;
}

TEST_F(HostileFiles, KilledWritesLeaveNoTemporaryFiles) {
  std::string dead = std::to_string(deadPid());
  std::string live = std::to_string(getpid());
  std::string own = data::temporaryFileHostTag();
  size_t dash = own.rfind('-');
  std::string host = own.substr(0, dash), boot = own.substr(dash + 1);
  auto touchHoursAgo = [&](const std::string &name, int hours) {
    writeFile(name, "partial");
    struct timespec times[2];
    ASSERT_EQ(clock_gettime(CLOCK_REALTIME, &times[0]), 0);
    times[0].tv_sec -= hours * 3600;
    times[1] = times[0];
    ASSERT_EQ(utimensat(AT_FDCWD, path(name).c_str(), times, 0), 0);
  };
  // Left by a write killed before its rename on this host and boot: its
  // process is gone.
  writeFile("c.safetensors.tmp-" + own + "-" + dead + "-0123abcd", "partial");
  // A pid means nothing for another host (NFS), container or boot, nor in
  // the older names: such temporaries go only when an hour old.
  std::vector<std::string> foreign = {
      "c.safetensors.tmp-otherhost-" + boot + "-" + dead + "-",
      "c.safetensors.tmp-" + host + "-fedcba98-" + dead + "-",
      "c.safetensors.tmp-" + dead + "-", "c.safetensors.tmp-"};
  for (const std::string &stem : foreign) {
    writeFile(stem + "0123abcd", "recent");
    touchHoursAgo(stem + "deadbeef", 2);
  }
  // Not stale: a live writer's (however old), another file's, not a
  // temporary's name.
  writeFile("c.safetensors.tmp-" + own + "-" + live + "-01234567",
            "in progress");
  touchHoursAgo("c.safetensors.tmp-" + own + "-" + live + "-89abcdef", 2);
  touchHoursAgo("d.safetensors.tmp-" + own + "-" + dead + "-0123abcd", 2);
  touchHoursAgo("c.safetensors.tmp-notes", 2);
  Tensor t = Tensor::fromValues<float>({2}, {1.0f, 2.0f});
  ASSERT_FALSE(
      errorOf(data::writeSafetensors(path("c.safetensors"), {{"t", t}}))
          .size());
  EXPECT_FALSE(exists("c.safetensors.tmp-" + own + "-" + dead + "-0123abcd"));
  for (const std::string &stem : foreign) {
    EXPECT_TRUE(exists(stem + "0123abcd")) << stem;
    EXPECT_FALSE(exists(stem + "deadbeef")) << stem;
  }
  EXPECT_TRUE(exists("c.safetensors.tmp-" + own + "-" + live + "-01234567"));
  EXPECT_TRUE(exists("c.safetensors.tmp-" + own + "-" + live + "-89abcdef"));
  EXPECT_TRUE(exists("d.safetensors.tmp-" + own + "-" + dead + "-0123abcd"));
  EXPECT_TRUE(exists("c.safetensors.tmp-notes"));
  EXPECT_TRUE(exists("c.safetensors"));
  // The write's own temporary file is gone after its rename.
  std::error_code ec;
  int entries = 0;
  for (llvm::sys::fs::directory_iterator it(dir_, ec), end; !ec && it != end;
       it.increment(ec))
    ++entries;
  EXPECT_EQ(entries, 5 + int(foreign.size()));
}

} // namespace
