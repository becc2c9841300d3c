//===- fuse-fuzz-readers.cpp - libFuzzer over the file readers ------------===//
//
// Input: one selector byte, then a file. The selector (mod 4) picks the
// reader: .npy, IDX (plain or gzip), safetensors, or the disk-cache entry
// decoder. The readers take a path, so the file is an in-memory file
// (memfd) read through /proc/self/fd. Every malformed file must be an
// llvm::Error (or, for the cache, a miss); a decoded cache entry must
// encode back to the same bytes. Run with `scripts/fuzz readers SECONDS`.
//
// `fuse-fuzz-readers --write-seeds=DIR` writes a seed corpus with the
// project's own writers instead of fuzzing.
//
//===----------------------------------------------------------------------===//

#include "JIT/ObjectCache.h"
#include "fuse/Data/Idx.h"
#include "fuse/Data/Safetensors.h"
#include "fuse/Npy.h"
#include "fuse/Tensor.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

using namespace fuse;

namespace {

enum Reader : uint8_t { Npy, Idx, Safetensors, CacheEntry, NumReaders };

[[noreturn]] void fail(const llvm::Twine &message) {
  llvm::errs() << "fuse-fuzz-readers: " << message << "\n";
  llvm::errs().flush();
  std::abort();
}

/// The in-memory file each input is written to, and its path.
int memoryFile = -1;
std::string memoryFilePath;

void setMemoryFile(llvm::StringRef bytes) {
  if (::ftruncate(memoryFile, 0) != 0)
    fail("ftruncate failed");
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t wrote = ::pwrite(memoryFile, bytes.data() + done,
                             bytes.size() - done, off_t(done));
    if (wrote <= 0)
      fail("pwrite failed");
    done += size_t(wrote);
  }
}

template <typename T> void consume(llvm::Expected<T> value) {
  if (!value)
    llvm::consumeError(value.takeError());
}

//===----------------------------------------------------------------------===//
// Seeds
//===----------------------------------------------------------------------===//

std::string readWhole(llvm::StringRef path) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> file =
      llvm::MemoryBuffer::getFile(path);
  if (!file)
    fail("cannot read '" + path + "': " + file.getError().message());
  return (*file)->getBuffer().str();
}

void writeSeed(llvm::StringRef dir, llvm::StringRef name, Reader reader,
               llvm::StringRef bytes) {
  llvm::SmallString<256> path(dir);
  llvm::sys::path::append(path, name);
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec)
    fail("cannot write '" + path + "': " + ec.message());
  os << char(reader) << bytes;
}

void check(llvm::Error e) {
  if (e)
    fail(llvm::toString(std::move(e)));
}

/// An IDX file of unsigned bytes: magic 0 0 8 rank, big-endian dims, data.
std::string idxBytes(llvm::ArrayRef<uint32_t> dims, uint8_t type = 0x08) {
  std::string bytes = {0, 0, char(type), char(dims.size())};
  size_t count = 1;
  for (uint32_t dim : dims) {
    for (int shift = 24; shift >= 0; shift -= 8)
      bytes.push_back(char(dim >> shift));
    count *= dim;
  }
  for (size_t i = 0; i < count; ++i)
    bytes.push_back(char(i * 37));
  return bytes;
}

std::string gzipped(llvm::StringRef tmp, llvm::StringRef bytes) {
  std::string path = tmp.str();
  gzFile file = gzopen(path.c_str(), "wb");
  if (!file ||
      gzwrite(file, bytes.data(), unsigned(bytes.size())) !=
          int(bytes.size()) ||
      gzclose(file) != Z_OK)
    fail("cannot gzip to '" + tmp + "'");
  return readWhole(tmp);
}

void writeSeeds(llvm::StringRef dir) {
  if (std::error_code ec = llvm::sys::fs::create_directories(dir))
    fail("cannot create '" + dir + "': " + ec.message());
  llvm::SmallString<256> tmp(dir);
  llvm::sys::path::append(tmp, ".seed.tmp");

  // .npy through writeNpy, one per dtype it writes.
  for (DType dtype :
       {DType::F32, DType::F64, DType::F16, DType::BF16, DType::I1, DType::I8,
        DType::I16, DType::I32, DType::I64}) {
    llvm::SmallVector<llvm::SmallVector<int64_t, 3>> shapes = {
        {2, 3}, {}, {4, 1, 2}};
    for (auto [i, shape] : llvm::enumerate(shapes)) {
      Tensor tensor = Tensor::zeros(dtype, shape);
      if (llvm::Error e = writeNpy(tmp, tensor)) {
        llvm::consumeError(std::move(e)); // a dtype .npy cannot hold
        continue;
      }
      writeSeed(dir, ("npy-" + dtypeName(dtype) + "-" + llvm::Twine(i)).str(),
                Npy, readWhole(tmp));
    }
  }

  // IDX: labels, images, plain and gzip, and a type the reader declines.
  std::string labels = idxBytes({5});
  std::string images = idxBytes({2, 3, 4});
  writeSeed(dir, "idx-labels", Idx, labels);
  writeSeed(dir, "idx-images", Idx, images);
  writeSeed(dir, "idx-labels-gz", Idx, gzipped(tmp, labels));
  writeSeed(dir, "idx-images-gz", Idx, gzipped(tmp, images));
  writeSeed(dir, "idx-float", Idx, idxBytes({2}, 0x0D));

  // safetensors through writeSafetensors.
  std::vector<data::NamedTensor> tensors;
  tensors.push_back({"w", Tensor::uniform({3, 2}, 1, -1.0f, 1.0f)});
  tensors.push_back({"step", Tensor::zeros(DType::I64, {})});
  tensors.push_back({"empty", Tensor::zeros(DType::F16, {0, 4})});
  tensors.push_back({"mask", Tensor::zeros(DType::I8, {5})});
  check(data::writeSafetensors(tmp, tensors, {{"format", "pt"}}));
  writeSeed(dir, "safetensors-several", Safetensors, readWhole(tmp));
  check(data::writeSafetensors(tmp, {}));
  writeSeed(dir, "safetensors-empty", Safetensors, readWhole(tmp));

  // Cache entries through ObjectCache::encode.
  CachedObject entry;
  entry.objects.push_back(
      llvm::MemoryBuffer::getMemBufferCopy("\x7f"
                                           "ELF object bytes",
                                           "object"));
  entry.objects.push_back(
      llvm::MemoryBuffer::getMemBufferCopy("part two", "object"));
  entry.buffers = {64, 4096};
  entry.dynamicSizes = {0, 0, 3, 0};
  writeSeed(dir, "cache-entry", CacheEntry,
            ObjectCache::encode("fuse key text", entry));
  CachedObject empty;
  empty.objects.push_back(llvm::MemoryBuffer::getMemBufferCopy("", "object"));
  writeSeed(dir, "cache-entry-empty", CacheEntry,
            ObjectCache::encode("", empty));
  llvm::sys::fs::remove(tmp);
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int *argc, char ***argv) {
  // libFuzzer ignores flags that start with "--": this one is ours.
  for (int i = 1; i < *argc; ++i) {
    llvm::StringRef arg((*argv)[i]);
    if (arg.consume_front("--write-seeds=")) {
      writeSeeds(arg);
      std::exit(0);
    }
  }
  memoryFile = ::memfd_create("fuse-fuzz-readers", MFD_CLOEXEC);
  if (memoryFile < 0)
    fail("memfd_create failed");
  memoryFilePath = "/proc/self/fd/" + std::to_string(memoryFile);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0)
    return 0;
  Reader reader = Reader(data[0] % NumReaders);
  llvm::StringRef bytes(reinterpret_cast<const char *>(data) + 1, size - 1);
  switch (reader) {
  case Npy:
    setMemoryFile(bytes);
    consume(readNpy(memoryFilePath));
    break;
  case Idx:
    setMemoryFile(bytes);
    consume(data::readIdx(memoryFilePath));
    break;
  case Safetensors:
    setMemoryFile(bytes);
    consume(data::readSafetensors(memoryFilePath));
    break;
  case CacheEntry:
    // The decoder takes bytes; what it accepts must be exactly what the
    // encoder writes for the decoded key and contents.
    if (auto decoded = ObjectCache::decode(bytes)) {
      if (decoded->second.objects.empty())
        fail("a decoded cache entry has no object");
      if (ObjectCache::encode(decoded->first, decoded->second) != bytes)
        fail("a decoded cache entry does not encode back to its bytes");
    }
    break;
  case NumReaders:
    break;
  }
  return 0;
}
