//===- ObjectCache.cpp - Compiled objects on disk -------------------------===//

#include "ObjectCache.h"

#include "fuse/Engine.h"
#include "fuse/RegularFile.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/raw_ostream.h"

#include <array>
#include <cstdlib>
#include <cstring>

using namespace fuse;
using namespace llvm;

namespace {
/// The format version: entries of another format never decode.
constexpr char kMagic[8] = {'F', 'U', 'S', 'E', 'O', 'B', 'J', '6'};
/// At most this many objects per entry (kMaxCodegenParts, with room).
constexpr uint32_t kMaxObjects = 64;
constexpr size_t kDigestBytes = 32;

template <typename T> void put(std::string &out, T value) {
  out.append(reinterpret_cast<const char *>(&value), sizeof(T));
}

/// Reads fields from an entry, never past its end.
class Reader {
public:
  explicit Reader(StringRef data) : data_(data) {}
  template <typename T> bool get(T &value) {
    if (sizeof(T) > data_.size() - at_)
      return false;
    std::memcpy(&value, data_.data() + at_, sizeof(T));
    at_ += sizeof(T);
    return true;
  }
  /// `size` bytes, if that many remain.
  bool bytes(uint64_t size, StringRef &value) {
    if (size > data_.size() - at_)
      return false;
    value = data_.substr(at_, size);
    at_ += size;
    return true;
  }
  /// A count of 8-byte items, bounded by the bytes that remain.
  bool count(uint32_t &value) {
    return get(value) && value <= (data_.size() - at_) / 8;
  }
  bool atEnd() const { return at_ == data_.size(); }

private:
  StringRef data_;
  size_t at_ = 0;
};
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

std::string ObjectCache::encode(StringRef keyText, const CachedObject &entry) {
  std::string bytes(kMagic, sizeof(kMagic));
  put(bytes, static_cast<uint64_t>(keyText.size()));
  bytes.append(keyText.data(), keyText.size());
  put(bytes, static_cast<uint32_t>(entry.buffers.size()));
  for (uint64_t buffer : entry.buffers)
    put(bytes, buffer);
  put(bytes, static_cast<uint32_t>(entry.dynamicSizes.size()));
  for (int64_t value : entry.dynamicSizes)
    put(bytes, value);
  put(bytes, static_cast<uint32_t>(entry.objects.size()));
  for (const std::unique_ptr<MemoryBuffer> &buffer : entry.objects) {
    StringRef object = buffer->getBuffer();
    put(bytes, static_cast<uint64_t>(object.size()));
    bytes.append(object.data(), object.size());
  }
  std::array<uint8_t, 32> digest = SHA256::hash(arrayRefFromStringRef(bytes));
  bytes.append(reinterpret_cast<const char *>(digest.data()), digest.size());
  return bytes;
}

std::optional<std::pair<std::string, CachedObject>>
ObjectCache::decode(StringRef bytes) {
  // The digest covers every byte before it: header, key, metadata, object.
  if (bytes.size() < sizeof(kMagic) + kDigestBytes ||
      std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) != 0)
    return std::nullopt;
  StringRef body = bytes.drop_back(kDigestBytes);
  std::array<uint8_t, 32> digest = SHA256::hash(arrayRefFromStringRef(body));
  if (std::memcmp(digest.data(), bytes.take_back(kDigestBytes).data(),
                  kDigestBytes) != 0)
    return std::nullopt;

  Reader in(body.drop_front(sizeof(kMagic)));
  uint64_t keySize;
  StringRef key;
  if (!in.get(keySize) || !in.bytes(keySize, key))
    return std::nullopt;
  CachedObject entry;
  uint32_t numBuffers;
  if (!in.count(numBuffers))
    return std::nullopt;
  entry.buffers.resize(numBuffers);
  for (uint64_t &buffer : entry.buffers)
    if (!in.get(buffer))
      return std::nullopt;
  uint32_t numSizes;
  if (!in.count(numSizes))
    return std::nullopt;
  entry.dynamicSizes.resize(numSizes);
  for (int64_t &value : entry.dynamicSizes)
    if (!in.get(value))
      return std::nullopt;
  uint32_t numObjects;
  if (!in.get(numObjects) || numObjects == 0 || numObjects > kMaxObjects)
    return std::nullopt;
  for (uint32_t i = 0; i < numObjects; ++i) {
    uint64_t objectSize;
    StringRef object;
    if (!in.get(objectSize) || !in.bytes(objectSize, object))
      return std::nullopt;
    entry.objects.push_back(
        MemoryBuffer::getMemBufferCopy(object, "fuse-cached-object"));
  }
  if (!in.atEnd())
    return std::nullopt;
  return std::make_pair(key.str(), std::move(entry));
}

std::optional<CachedObject> ObjectCache::load(StringRef keyText) const {
  std::string path = pathFor(keyText);
  // Only a regular file, checked on the descriptor read: a FIFO or a
  // device put there could block forever. Any failure is a miss.
  Expected<std::unique_ptr<MemoryBuffer>> file = readRegularFile(path);
  if (!file) {
    consumeError(file.takeError());
    return std::nullopt;
  }
  std::optional<std::pair<std::string, CachedObject>> decoded =
      decode((*file)->getBuffer());
  // A valid entry stored for another key (copied or renamed) is a miss.
  if (!decoded || decoded->first != keyText)
    return std::nullopt;
  return std::move(decoded->second);
}

std::optional<std::string> ObjectCache::store(StringRef keyText,
                                              const CachedObject &entry) const {
  if (std::error_code ec = sys::fs::create_directories(directory_))
    return "cannot create " + directory_ + ": " + ec.message();
  std::string bytes = encode(keyText, entry);

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
