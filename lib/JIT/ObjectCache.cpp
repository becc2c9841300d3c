//===- ObjectCache.cpp - Compiled objects on disk -------------------------===//

#include "ObjectCache.h"

#include "fuse/Engine.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/xxhash.h"

#include <cstdlib>
#include <cstring>

using namespace fuse;
using namespace llvm;

namespace {
constexpr char kMagic[8] = {'F', 'U', 'S', 'E', 'O', 'B', 'J', '4'};

template <typename T> void put(std::string &out, T value) {
  out.append(reinterpret_cast<const char *>(&value), sizeof(T));
}

/// Reads a T at `at`, advancing it; fails past the end.
template <typename T> bool get(StringRef data, size_t &at, T &value) {
  if (at + sizeof(T) > data.size())
    return false;
  std::memcpy(&value, data.data() + at, sizeof(T));
  at += sizeof(T);
  return true;
}
} // namespace

std::optional<std::string>
ObjectCache::directoryFor(const EngineOptions &options) {
  if (!options.diskCache)
    return std::nullopt;
  if (!options.cacheDir.empty())
    return options.cacheDir;
  if (const char *env = std::getenv("FUSE_CACHE_DIR")) {
    if (StringRef(env) == "off" || StringRef(env).empty())
      return std::nullopt;
    return std::string(env);
  }
  if (const char *xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    return std::string(xdg) + "/fuse";
  SmallString<128> home;
  if (sys::path::home_directory(home))
    return std::string(home) + "/.cache/fuse";
  return std::nullopt;
}

ObjectCache::ObjectCache(std::string directory)
    : directory_(std::move(directory)) {}

std::string ObjectCache::pathFor(StringRef keyText) const {
  std::array<uint8_t, 32> digest = SHA256::hash(arrayRefFromStringRef(keyText));
  SmallString<256> path(directory_);
  sys::path::append(path, toHex(digest, /*LowerCase=*/true) + ".fuseobj");
  return std::string(path);
}

std::optional<CachedObject> ObjectCache::load(StringRef keyText) const {
  ErrorOr<std::unique_ptr<MemoryBuffer>> file =
      MemoryBuffer::getFile(pathFor(keyText), /*IsText=*/false,
                            /*RequiresNullTerminator=*/false);
  if (!file)
    return std::nullopt;
  StringRef data = (*file)->getBuffer();
  size_t at = 0;
  if (data.size() < sizeof(kMagic) ||
      std::memcmp(data.data(), kMagic, sizeof(kMagic)) != 0)
    return std::nullopt;
  at = sizeof(kMagic);
  uint32_t numResults;
  if (!get(data, at, numResults) || numResults > 4096)
    return std::nullopt;
  CachedObject entry;
  for (uint32_t i = 0; i < numResults; ++i) {
    uint8_t dtype, rank;
    int32_t inPlaceOf;
    uint8_t stacked;
    if (!get(data, at, dtype) || !get(data, at, rank) ||
        !get(data, at, inPlaceOf) || !get(data, at, stacked) ||
        dtype > static_cast<uint8_t>(DType::I64) || stacked > 1)
      return std::nullopt;
    ResultSpec spec{static_cast<DType>(dtype), {}, inPlaceOf, stacked == 1};
    for (uint8_t d = 0; d < rank; ++d) {
      int64_t dim;
      if (!get(data, at, dim) || dim < 0)
        return std::nullopt;
      spec.shape.push_back(dim);
    }
    entry.results.push_back(std::move(spec));
  }
  uint32_t numBuffers;
  if (!get(data, at, numBuffers) || numBuffers > (1u << 20))
    return std::nullopt;
  for (uint32_t i = 0; i < numBuffers; ++i) {
    uint64_t bytes;
    if (!get(data, at, bytes))
      return std::nullopt;
    entry.buffers.push_back(bytes);
  }
  uint32_t numSizes;
  if (!get(data, at, numSizes) || numSizes > 4096)
    return std::nullopt;
  for (uint32_t i = 0; i < numSizes; ++i) {
    int64_t value;
    if (!get(data, at, value) || value < 0)
      return std::nullopt;
    entry.dynamicSizes.push_back(value);
  }
  uint64_t size, checksum;
  if (!get(data, at, size) || !get(data, at, checksum) ||
      size != data.size() - at)
    return std::nullopt;
  StringRef object = data.substr(at, size);
  if (xxh3_64bits(arrayRefFromStringRef(object)) != checksum)
    return std::nullopt;
  entry.object = MemoryBuffer::getMemBufferCopy(object, "fuse-cached-object");
  return entry;
}

std::optional<std::string> ObjectCache::store(StringRef keyText,
                                              const CachedObject &entry) const {
  if (std::error_code ec = sys::fs::create_directories(directory_))
    return "cannot create " + directory_ + ": " + ec.message();
  std::string bytes(kMagic, sizeof(kMagic));
  put(bytes, static_cast<uint32_t>(entry.results.size()));
  for (const ResultSpec &spec : entry.results) {
    put(bytes, static_cast<uint8_t>(spec.dtype));
    put(bytes, static_cast<uint8_t>(spec.shape.size()));
    put(bytes, spec.inPlaceOf);
    put(bytes, static_cast<uint8_t>(spec.stacked));
    for (int64_t d : spec.shape)
      put(bytes, d);
  }
  put(bytes, static_cast<uint32_t>(entry.buffers.size()));
  for (uint64_t buffer : entry.buffers)
    put(bytes, buffer);
  put(bytes, static_cast<uint32_t>(entry.dynamicSizes.size()));
  for (int64_t value : entry.dynamicSizes)
    put(bytes, value);
  StringRef object = entry.object->getBuffer();
  put(bytes, static_cast<uint64_t>(object.size()));
  put(bytes, xxh3_64bits(arrayRefFromStringRef(object)));
  bytes.append(object.data(), object.size());

  // Write beside the target, then rename: readers never see a partial file.
  SmallString<256> temporary;
  int fd;
  if (std::error_code ec = sys::fs::createUniqueFile(
          directory_ + "/tmp-%%%%%%%%.fuseobj", fd, temporary))
    return "cannot write to " + directory_ + ": " + ec.message();
  {
    raw_fd_ostream os(fd, /*shouldClose=*/true);
    os << bytes;
    os.flush();
    if (os.has_error()) {
      os.clear_error();
      sys::fs::remove(temporary);
      return "cannot write " + std::string(temporary);
    }
  }
  if (std::error_code ec = sys::fs::rename(temporary, pathFor(keyText))) {
    sys::fs::remove(temporary);
    return "cannot rename into " + directory_ + ": " + ec.message();
  }
  return std::nullopt;
}
