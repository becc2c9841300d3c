//===- CacheTest.cpp - The disk cache never trusts an entry ---------------===//
//
// Every byte of an entry is checksummed, the stored key must be the lookup's,
// every decoded field must fit the call, and result shapes come from the
// call: a corrupted, truncated, copied or forged entry is a miss, and the
// next call still returns the right values and shapes.
//
//===----------------------------------------------------------------------===//

#include "TestUtils.h"

#include "ObjectCache.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <cstring>

using namespace fuse;
using namespace fuse::testing;

namespace {

/// Two functions of one signature, and a training step (its K-step
/// companion @step_steps takes size arguments).
constexpr const char *kModule = R"mlir(
func.func @add(%x: tensor<?x3xf32>, %y: tensor<?x3xf32>) -> tensor<?x3xf32> {
  %z = fuse.add %x, %y : (tensor<?x3xf32>, tensor<?x3xf32>) -> tensor<?x3xf32>
  return %z : tensor<?x3xf32>
}
func.func @sub(%x: tensor<?x3xf32>, %y: tensor<?x3xf32>) -> tensor<?x3xf32> {
  %z = fuse.sub %x, %y : (tensor<?x3xf32>, tensor<?x3xf32>) -> tensor<?x3xf32>
  return %z : tensor<?x3xf32>
}
func.func @mse(%x: tensor<4xf32>, %w: tensor<4xf32>) -> tensor<f32> {
  %l = fuse.mse_loss %w, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<f32>
  return %l : tensor<f32>
}
fuse.train_step @step {loss = @mse, params = array<i64: 1>, optimizer = "sgd"}
)mlir";

std::string readFile(const std::string &path) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer)
    return "";
  return (*buffer)->getBuffer().str();
}

void writeFile(const std::string &path, llvm::StringRef bytes) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  ASSERT_FALSE(ec) << ec.message();
  os << bytes;
}

/// The key text stored in an entry file.
std::string keyOf(const std::string &path) {
  auto decoded = ObjectCache::decode(readFile(path));
  return decoded ? decoded->first : "";
}

/// The entry file of function `name` in `dir`.
std::string entryOf(const TempDir &dir, llvm::StringRef name) {
  for (const std::string &file : dir.files())
    if (llvm::StringRef(keyOf(file))
            .contains("\nfunction " + name.str() + "\n"))
      return file;
  return "";
}

/// An engine on `dir` with kModule loaded.
std::unique_ptr<Engine> cachedEngine(const TempDir &dir) {
  EngineOptions options;
  options.cacheDir = dir.path.str().str();
  auto engine = unwrap(Engine::create(options));
  if (llvm::Error e = engine->loadString(kModule)) {
    ADD_FAILURE() << llvm::toString(std::move(e));
    std::abort();
  }
  return engine;
}

/// Calls `name` (add or sub) on x, y of 5x3 in a new engine on `dir` and
/// checks values and shape; returns the number of disk hits.
uint64_t callAndCheck(const TempDir &dir, llvm::StringRef name) {
  Tensor x = randomTensor({5, 3}, 1), y = randomTensor({5, 3}, 2);
  auto engine = cachedEngine(dir);
  Function &f = unwrap(engine->lookup(name));
  std::vector<Tensor> results = unwrap(f.call({x, y}));
  EXPECT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].shape(), llvm::ArrayRef<int64_t>({5, 3}));
  for (int64_t i = 0; i < 15; ++i) {
    float a = x.data<float>()[i], b = y.data<float>()[i];
    EXPECT_EQ(results[0].data<float>()[i], name == "add" ? a + b : a - b)
        << name.str() << " element " << i;
  }
  return f.stats().diskHits;
}

/// An entry's bytes with its checksum recomputed, as a forger would.
std::string resealed(std::string bytes) {
  llvm::StringRef body = llvm::StringRef(bytes).drop_back(32);
  std::array<uint8_t, 32> digest =
      llvm::SHA256::hash(llvm::arrayRefFromStringRef(body));
  std::memcpy(bytes.data() + bytes.size() - 32, digest.data(), 32);
  return bytes;
}

CachedObject sampleEntry() {
  CachedObject entry;
  entry.objects.push_back(
      llvm::MemoryBuffer::getMemBufferCopy("not really an object"));
  entry.buffers = {64, 128};
  entry.dynamicSizes = {0, 0};
  return entry;
}

TEST(ObjectCacheFormat, RoundTrips) {
  std::string bytes = ObjectCache::encode("the key", sampleEntry());
  auto decoded = ObjectCache::decode(bytes);
  ASSERT_TRUE(decoded);
  EXPECT_EQ(decoded->first, "the key");
  EXPECT_EQ(decoded->second.buffers, (std::vector<uint64_t>{64, 128}));
  EXPECT_EQ(decoded->second.dynamicSizes, (std::vector<int64_t>{0, 0}));
  ASSERT_EQ(decoded->second.objects.size(), 1u);
  EXPECT_EQ(decoded->second.objects[0]->getBuffer(), "not really an object");
}

TEST(ObjectCacheFormat, SeveralObjectsRoundTripInOrder) {
  // A function cut for parallel code generation: an object per part.
  CachedObject entry = sampleEntry();
  entry.objects.push_back(llvm::MemoryBuffer::getMemBufferCopy("part two"));
  entry.objects.push_back(llvm::MemoryBuffer::getMemBufferCopy(""));
  auto decoded = ObjectCache::decode(ObjectCache::encode("the key", entry));
  ASSERT_TRUE(decoded);
  ASSERT_EQ(decoded->second.objects.size(), 3u);
  EXPECT_EQ(decoded->second.objects[0]->getBuffer(), "not really an object");
  EXPECT_EQ(decoded->second.objects[1]->getBuffer(), "part two");
  EXPECT_EQ(decoded->second.objects[2]->getBuffer(), "");
  // An entry without code is no entry.
  entry.objects.clear();
  EXPECT_FALSE(ObjectCache::decode(ObjectCache::encode("the key", entry)));
}

TEST(ObjectCacheFormat, EveryByteAndLengthIsChecked) {
  std::string bytes = ObjectCache::encode("the key", sampleEntry());
  for (size_t at = 0; at < bytes.size(); ++at) {
    std::string flipped = bytes;
    flipped[at] ^= 0x01;
    EXPECT_FALSE(ObjectCache::decode(flipped)) << "byte " << at;
  }
  for (size_t size = 0; size < bytes.size(); ++size)
    EXPECT_FALSE(ObjectCache::decode(llvm::StringRef(bytes).take_front(size)))
        << "size " << size;
  EXPECT_FALSE(ObjectCache::decode(bytes + "x"));
}

TEST(ObjectCacheFormat, LengthsAreBoundedByTheFile) {
  // Valid checksums over lying lengths: the decoder reads none past the end
  // and allocates nothing they claim.
  std::string bytes = ObjectCache::encode("the key", sampleEntry());
  size_t keySize = 8, buffersCount = 16 + 7, sizesCount = buffersCount + 20,
         objectsCount = sizesCount + 20, objectSize = objectsCount + 4;
  for (size_t field :
       {keySize, buffersCount, sizesCount, objectsCount, objectSize})
    for (uint64_t lie : {uint64_t(1) << 31, ~uint64_t(0), uint64_t(1000)}) {
      std::string forged = bytes;
      size_t width = field == keySize || field == objectSize ? 8 : 4;
      std::memcpy(forged.data() + field, &lie, width);
      EXPECT_FALSE(ObjectCache::decode(resealed(forged)))
          << "field at " << field << " = " << lie;
    }
}

TEST(DiskCache, EveryHeaderByteFlippedIsAMiss) {
  TempDir dir;
  EXPECT_EQ(callAndCheck(dir, "add"), 0u);
  std::string file = entryOf(dir, "add");
  ASSERT_FALSE(file.empty());
  std::string key = keyOf(file), good = readFile(file);
  ObjectCache cache(dir.path.str().str());
  ASSERT_TRUE(cache.load(key));
  auto decoded = ObjectCache::decode(good);
  ASSERT_EQ(decoded->second.objects.size(), 1u);
  size_t objectSize = decoded->second.objects[0]->getBufferSize();
  size_t header = good.size() - 32 - objectSize;

  // Every byte before the object (format, key, metadata, lengths), and the
  // checksum: a miss.
  for (size_t at = 0; at < good.size(); ++at) {
    if (at == header)
      at = good.size() - 32;
    std::string bytes = good;
    bytes[at] ^= 0x20;
    writeFile(file, bytes);
    EXPECT_FALSE(cache.load(key)) << "byte " << at;
  }
  // Through the engine, a byte of each field and of the object, and
  // truncations: the right values and shape, and the entry rewritten.
  for (size_t at : {size_t(0), size_t(8), size_t(20), header - 9, header - 1,
                    header + objectSize / 2, good.size() - 1}) {
    std::string bytes = good;
    bytes[at] ^= 0x20;
    writeFile(file, bytes);
    EXPECT_EQ(callAndCheck(dir, "add"), 0u) << "byte " << at;
    EXPECT_EQ(callAndCheck(dir, "add"), 1u) << "rewritten after byte " << at;
  }
  for (size_t size : {size_t(0), size_t(12), header, good.size() - 1}) {
    writeFile(file, llvm::StringRef(good).take_front(size));
    EXPECT_EQ(callAndCheck(dir, "add"), 0u) << "size " << size;
  }
  EXPECT_EQ(readFile(file), good);
}

TEST(DiskCache, EntryCopiedUnderAnotherKeyIsAMiss) {
  TempDir dir;
  EXPECT_EQ(callAndCheck(dir, "add"), 0u);
  EXPECT_EQ(callAndCheck(dir, "sub"), 0u);
  std::string add = entryOf(dir, "add"), sub = entryOf(dir, "sub");
  ASSERT_FALSE(add.empty());
  ASSERT_FALSE(sub.empty());
  // A valid entry of `add` in `sub`'s place: `sub` recompiles, never runs
  // `add`'s code.
  writeFile(sub, readFile(add));
  EXPECT_EQ(callAndCheck(dir, "sub"), 0u);
  EXPECT_EQ(callAndCheck(dir, "sub"), 1u);
  EXPECT_EQ(callAndCheck(dir, "add"), 1u);
}

TEST(DiskCache, ForgedFieldsThatDoNotFitTheCallAreAMiss) {
  TempDir dir;
  EXPECT_EQ(callAndCheck(dir, "add"), 0u);
  std::string file = entryOf(dir, "add");
  auto decoded = ObjectCache::decode(readFile(file));
  ASSERT_TRUE(decoded);
  std::string key = decoded->first;
  auto forge = [&](auto change) {
    CachedObject entry;
    for (const auto &object : decoded->second.objects)
      entry.objects.push_back(
          llvm::MemoryBuffer::getMemBufferCopy(object->getBuffer()));
    entry.buffers = decoded->second.buffers;
    entry.dynamicSizes = decoded->second.dynamicSizes;
    change(entry);
    writeFile(file, ObjectCache::encode(key, entry));
  };
  // A size argument of a dim that is not dynamic, or of no operand.
  for (std::vector<int64_t> sizes :
       {std::vector<int64_t>{0, 0}, {1, 1}, {7, 0}, {-1, 0}, {0}}) {
    forge([&](CachedObject &e) { e.dynamicSizes = sizes; });
    EXPECT_EQ(callAndCheck(dir, "add"), 0u);
  }
  // A workspace buffer not at 64-byte offsets.
  forge([](CachedObject &e) { e.buffers.push_back(100); });
  EXPECT_EQ(callAndCheck(dir, "add"), 0u);
  // An object that does not link.
  forge([](CachedObject &e) {
    e.objects[0] = llvm::MemoryBuffer::getMemBufferCopy("\x7f"
                                                        "ELF garbage");
  });
  EXPECT_EQ(callAndCheck(dir, "add"), 0u);
  EXPECT_EQ(callAndCheck(dir, "add"), 1u);
}

TEST(DiskCache, StepFunctionSizeArgumentsAreChecked) {
  TempDir dir;
  Tensor xs = randomTensor({3, 4}, 5);
  // K = 3 steps of SGD on the stacked batches; returns the losses.
  int64_t notStacked = -1;
  auto run = [&] {
    auto engine = cachedEngine(dir);
    Function &f = unwrap(engine->lookup("step_steps"));
    std::vector<Tensor> args;
    for (const ArgumentInfo &arg : f.arguments()) {
      if (!arg.stacked && notStacked < 0)
        notStacked = args.size();
      if (arg.stacked)
        args.push_back(xs.contiguousCopy());
      else if (arg.stepCounter)
        args.push_back(Tensor::fromValues<int64_t>({}, {0}));
      else if (arg.shape.empty())
        args.push_back(Tensor::fromValues<float>({}, {0.1f}));
      else
        args.push_back(Tensor::fromValues<float>({4}, {0, 0, 0, 0}));
    }
    std::vector<Tensor> results = unwrap(f.call(args));
    EXPECT_EQ(results[0].shape(), llvm::ArrayRef<int64_t>({3}));
    std::vector<float> losses(results[0].data<float>(),
                              results[0].data<float>() + 3);
    return std::make_pair(losses, f.stats().diskHits);
  };
  auto [compiled, misses] = run();
  EXPECT_EQ(misses, 0u);
  // The first step's loss, from w = 0: the mean of x0 squared.
  float first = 0;
  for (int64_t i = 0; i < 4; ++i)
    first += xs.data<float>()[i] * xs.data<float>()[i] / 4;
  EXPECT_NEAR(compiled[0], first, 1e-6);
  auto [loaded, hits] = run();
  EXPECT_EQ(hits, 1u); // the compiled entry fits its call
  EXPECT_EQ(loaded, compiled);

  std::string file = entryOf(dir, "step_steps");
  auto decoded = ObjectCache::decode(readFile(file));
  ASSERT_TRUE(decoded);
  ASSERT_FALSE(decoded->second.dynamicSizes.empty());
  // A dim other than a stacked operand's dim 0, an operand that is not
  // stacked, or one twice: a miss.
  std::vector<int64_t> real = decoded->second.dynamicSizes;
  std::vector<int64_t> dim1 = real, twice = real, unstacked = real;
  dim1[1] = 1;
  twice.insert(twice.end(), real.begin(), real.begin() + 2);
  unstacked[0] = notStacked;
  for (const std::vector<int64_t> &sizes : {dim1, twice, unstacked}) {
    CachedObject entry;
    for (const auto &object : decoded->second.objects)
      entry.objects.push_back(
          llvm::MemoryBuffer::getMemBufferCopy(object->getBuffer()));
    entry.buffers = decoded->second.buffers;
    entry.dynamicSizes = sizes;
    writeFile(file, ObjectCache::encode(decoded->first, entry));
    auto [losses, diskHits] = run();
    EXPECT_EQ(diskHits, 0u);
    EXPECT_EQ(losses, compiled);
  }
}

} // namespace
