//===- Safetensors.cpp - Checkpoints in the safetensors format ------------===//

#include "fuse/Data/Safetensors.h"
#include "fuse/RegularFile.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SwapByteOrder.h"
#include "llvm/Support/raw_ostream.h"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <system_error>
#include <tuple>
#include <unistd.h>

using namespace fuse;
using namespace fuse::data;
using llvm::Error;
using llvm::Expected;
using llvm::StringRef;
using llvm::Twine;
namespace json = llvm::json;

// Tensor memory is written and read as is.
static_assert(llvm::sys::IsLittleEndianHost,
              "safetensors data is little-endian; big-endian hosts would need "
              "byte swapping");

static Error fileError(StringRef path, const Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 path + ": " + message);
}

static std::string osReason(int errnum) {
  return std::error_code(errnum, std::generic_category()).message();
}

static constexpr std::pair<DType, llvm::StringLiteral> kDTypeNames[] = {
    {DType::F32, "F32"},   {DType::F64, "F64"}, {DType::F16, "F16"},
    {DType::BF16, "BF16"}, {DType::I1, "BOOL"}, {DType::I8, "I8"},
    {DType::I16, "I16"},   {DType::I32, "I32"}, {DType::I64, "I64"}};

static StringRef safetensorsName(DType dtype) {
  for (const auto &[d, name] : kDTypeNames)
    if (d == dtype)
      return name;
  return "?";
}

static std::optional<DType> parseSafetensorsName(StringRef name) {
  for (const auto &[d, n] : kDTypeNames)
    if (n == name)
      return d;
  return std::nullopt;
}

const Tensor *Safetensors::find(StringRef name) const {
  for (const NamedTensor &t : tensors)
    if (t.name == name)
      return &t.tensor;
  return nullptr;
}

//===----------------------------------------------------------------------===//
// Writing
//===----------------------------------------------------------------------===//

static int64_t byteSize(const Tensor &t) {
  return t.numElements() * static_cast<int64_t>(byteWidth(t.dtype()));
}

/// Rejects what would make an unreadable file or crash the writer.
static Error checkInput(StringRef path, llvm::ArrayRef<NamedTensor> tensors,
                        const std::map<std::string, std::string> &metadata) {
  llvm::StringSet<> names;
  std::optional<int64_t> total = 0;
  for (const auto &[name, t] : tensors) {
    if (!json::isUTF8(name))
      return fileError(path, "tensor name '" + name + "' is not valid UTF-8");
    if (name == "__metadata__")
      return fileError(path, "'__metadata__' cannot name a tensor");
    if (!names.insert(name).second)
      return fileError(path, "two tensors are named '" + name + "'");
    if (llvm::any_of(t.shape(), [](int64_t d) { return d < 0; }))
      return fileError(path, "tensor '" + name + "' has a negative dimension");
    if (t.strides().size() != t.shape().size())
      return fileError(path, "tensor '" + name + "' has " +
                                 Twine(t.strides().size()) + " strides for " +
                                 Twine(t.rank()) + " dimensions");
    // byteSize and the data offsets are then exact.
    std::optional<int64_t> bytes = tensorBytes(t.dtype(), t.shape());
    if (!bytes || !(total = llvm::checkedAdd(*total, *bytes)))
      return fileError(path, "tensor '" + name + "' (" + t.typeString() +
                                 ") makes the data larger than 2^63 bytes");
    if (!t.data() && t.numElements() != 0)
      return fileError(path, "tensor '" + name + "' has no data");
  }
  for (const auto &[key, value] : metadata)
    if (!json::isUTF8(key) || !json::isUTF8(value))
      return fileError(path, "metadata entry '" + key + "' is not valid UTF-8");
  return Error::success();
}

/// The 8-byte length and the JSON header, space-padded (as the Python package
/// does) so that the data starts at a multiple of 8 bytes.
static std::string makeHeader(llvm::ArrayRef<NamedTensor> tensors,
                              const std::map<std::string, std::string> &meta) {
  std::string text;
  llvm::raw_string_ostream os(text);
  json::OStream out(os);
  out.object([&] {
    if (!meta.empty())
      out.attributeObject("__metadata__", [&] {
        for (const auto &[key, value] : meta)
          out.attribute(key, value);
      });
    int64_t offset = 0;
    for (const NamedTensor &named : tensors) {
      const Tensor &t = named.tensor;
      out.attributeObject(named.name, [&] {
        out.attribute("dtype", safetensorsName(t.dtype()));
        out.attributeArray("shape", [&] {
          for (int64_t d : t.shape())
            out.value(d);
        });
        out.attributeArray("data_offsets", [&] {
          out.value(offset);
          out.value(offset + byteSize(t));
        });
      });
      offset += byteSize(t);
    }
  });
  text.append((8 - text.size() % 8) % 8, ' ');
  std::string header(8, '\0');
  llvm::support::endian::write64le(header.data(), text.size());
  return header + text;
}

/// Writes all of `size` bytes; 0 or an errno.
static int writeAll(int fd, const void *data, size_t size) {
  const char *at = static_cast<const char *>(data);
  while (size > 0) {
    ssize_t n = ::write(fd, at, std::min<size_t>(size, size_t(1) << 30));
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return errno;
    if (n == 0)
      return EIO; // No progress on a regular file; never spin.
    at += n;
    size -= n;
  }
  return 0;
}

/// fsync; 0 or an errno.
static int syncFd(int fd) {
  while (::fsync(fd) != 0)
    if (errno != EINTR)
      return errno;
  return 0;
}

namespace {
/// The temporary file of an atomic write: closed and removed unless renamed.
struct PendingFile {
  llvm::SmallString<256> path;
  int fd = -1;
  bool renamed = false;
  ~PendingFile() {
    if (fd >= 0)
      ::close(fd);
    if (!renamed)
      ::unlink(path.c_str());
  }
};
} // namespace

/// Whether process `pid` may be running (a pid reused since counts as
/// running: its file is then kept, never one being written removed).
static bool processMayBeAlive(pid_t pid) {
  return pid == ::getpid() || ::kill(pid, 0) == 0 || errno != ESRCH;
}

std::string fuse::data::temporaryFileHostTag() {
  static const std::string tag = [] {
    // Host names are letters, digits, '-' and '.'; anything else (or none)
    // must not break the name's parse.
    char host[256] = {};
    if (::gethostname(host, sizeof(host) - 1) != 0 || !host[0])
      std::strcpy(host, "unknown");
    std::string name = host;
    for (char &c : name)
      if (!llvm::isAlnum(c) && c != '-' && c != '.')
        c = '_';
    // A pid names a process only within one boot of one machine's pid
    // namespace: the host name tells machines (and containers, which have
    // their own) apart, the boot id reboots.
    std::string boot = "00000000";
    if (llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> id =
            llvm::MemoryBuffer::getFileAsStream(
                "/proc/sys/kernel/random/boot_id")) {
      StringRef text = (*id)->getBuffer().take_front(8);
      if (text.size() == 8 && llvm::all_of(text, llvm::isHexDigit))
        boot = text.lower();
    }
    return name + "-" + boot;
  }();
  return tag;
}

/// Temporaries neither of this host and boot nor of a known dead process
/// (another machine's on NFS, another container's, older names) are removed
/// only once this old: no write takes an hour between create and rename.
static constexpr std::chrono::hours kStaleTemporaryAge{1};

/// Removes the temporary files of writes of `path` killed before their
/// rename (see writeSafetensors). Best effort: what cannot be listed, read
/// or removed stays.
static void removeStaleTemporaries(StringRef path) {
  StringRef parent = llvm::sys::path::parent_path(path);
  std::string prefix = (llvm::sys::path::filename(path) + ".tmp-").str();
  const std::string ownTag = temporaryFileHostTag();
  auto isRandom = [](StringRef text) {
    return text.size() == 8 && llvm::all_of(text, llvm::isHexDigit);
  };
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(parent.empty() ? "." : parent, ec),
       end;
       !ec && it != end; it.increment(ec)) {
    StringRef name = llvm::sys::path::filename(it->path());
    if (!name.consume_front(prefix))
      continue;
    // <host>-<boot>-<pid>-<random>, or the older <pid>-<random>, <random>.
    auto [rest, random] = name.rsplit('-');
    if (random.empty())
      std::swap(rest, random);
    if (!isRandom(random))
      continue; // Not a temporary's name.
    auto [tag, pidText] = rest.rsplit('-');
    unsigned long pid = 0;
    bool ownBoot = !pidText.empty() && tag == ownTag &&
                   !pidText.getAsInteger(10, pid) && pid != 0 &&
                   pid <= INT32_MAX;
    bool stale;
    if (ownBoot) {
      stale = !processMayBeAlive(static_cast<pid_t>(pid));
    } else {
      llvm::sys::fs::file_status status;
      stale =
          !llvm::sys::fs::status(it->path(), status,
                                 /*Follow=*/false) &&
          std::chrono::system_clock::now() - status.getLastModificationTime() >
              kStaleTemporaryAge;
    }
    if (stale && llvm::sys::fs::is_regular_file(it->path()))
      llvm::sys::fs::remove(it->path());
  }
}

Error fuse::data::writeSafetensors(
    StringRef path, llvm::ArrayRef<NamedTensor> tensors,
    const std::map<std::string, std::string> &metadata) {
  if (Error e = checkInput(path, tensors, metadata))
    return e;
  std::string header = makeHeader(tensors, metadata);

  removeStaleTemporaries(path);
  // Same directory as `path`, so that the rename cannot cross file systems.
  int fd;
  llvm::SmallString<256> tmpPath;
  if (std::error_code ec = llvm::sys::fs::createUniqueFile(
          path + ".tmp-" + temporaryFileHostTag() + "-" + Twine(::getpid()) +
              "-%%%%%%%%",
          fd, tmpPath))
    return fileError(path, "cannot create a temporary file: " + ec.message());
  PendingFile tmp{tmpPath, fd};

  int err = writeAll(tmp.fd, header.data(), header.size());
  for (size_t i = 0; !err && i < tensors.size(); ++i) {
    const Tensor &t = tensors[i].tensor;
    Expected<Tensor> rowMajor =
        t.isContiguous() ? Expected<Tensor>(t)
                         : t.checkedContiguousCopy(path + ": tensor '" +
                                                   tensors[i].name + "'");
    if (!rowMajor)
      return rowMajor.takeError();
    err = writeAll(tmp.fd, rowMajor->data(), byteSize(*rowMajor));
  }
  if (err)
    return fileError(path, "cannot write: " + osReason(err));
  if ((err = syncFd(tmp.fd)))
    return fileError(path, "cannot sync the temporary file: " + osReason(err));
  // On Linux the descriptor is gone even when close fails with EINTR.
  int closed = ::close(tmp.fd);
  tmp.fd = -1;
  if (closed != 0 && errno != EINTR)
    return fileError(path,
                     "cannot close the temporary file: " + osReason(errno));
  std::string target = path.str();
  if (::rename(tmp.path.c_str(), target.c_str()) != 0)
    return fileError(path, "cannot rename the temporary file over it: " +
                               osReason(errno));
  tmp.renamed = true;

  // Make the rename itself durable.
  StringRef parent = llvm::sys::path::parent_path(path);
  std::string dir = parent.empty() ? "." : parent.str();
  int dirFd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  err = dirFd < 0 ? errno : syncFd(dirFd);
  if (dirFd >= 0)
    ::close(dirFd);
  // Some file systems cannot sync a directory; the rename stands regardless.
  if (err && err != EINVAL)
    return fileError(path, "written, but cannot sync its directory: " +
                               osReason(err));
  return Error::success();
}

//===----------------------------------------------------------------------===//
// Reading
//===----------------------------------------------------------------------===//

namespace {
struct Entry {
  StringRef name;
  DType dtype;
  llvm::SmallVector<int64_t, 4> shape;
  uint64_t begin, end;
};
} // namespace

/// The tensor described by `info`, checked against the `dataSize` bytes of
/// data.
static Expected<Entry> parseEntry(StringRef path, StringRef name,
                                  const json::Value &info, uint64_t dataSize) {
  auto bad = [&](const Twine &what) {
    return fileError(path, "tensor '" + name + "' " + what);
  };
  const json::Object *fields = info.getAsObject();
  if (!fields)
    return bad("is not described by a JSON object");
  std::optional<StringRef> dtypeName = fields->getString("dtype");
  if (!dtypeName)
    return bad("has no string \"dtype\"");
  std::optional<DType> dtype = parseSafetensorsName(*dtypeName);
  if (!dtype)
    return bad("has unsupported dtype '" + *dtypeName + "'");
  const json::Array *shape = fields->getArray("shape");
  if (!shape)
    return bad("has no \"shape\" array");

  Entry entry{name, *dtype, {}, 0, 0};
  int64_t size = 1;
  for (const json::Value &dim : *shape) {
    std::optional<int64_t> d = dim.getAsInteger();
    if (!d || *d < 0)
      return bad("has a shape entry that is not a non-negative integer");
    // Overflow is checked as it accrues, as the Python package does.
    if (llvm::MulOverflow(size, *d, size))
      return bad("has a shape whose size overflows");
    entry.shape.push_back(*d);
  }
  if (llvm::MulOverflow(size, static_cast<int64_t>(byteWidth(*dtype)), size))
    return bad("has a shape whose size overflows");

  const json::Array *offsets = fields->getArray("data_offsets");
  std::optional<uint64_t> begin, end;
  if (offsets && offsets->size() == 2) {
    begin = (*offsets)[0].getAsUINT64();
    end = (*offsets)[1].getAsUINT64();
  }
  if (!begin || !end)
    return bad("has no \"data_offsets\" pair of non-negative integers");
  std::string range =
      ("data_offsets [" + Twine(*begin) + ", " + Twine(*end) + "]").str();
  if (*end < *begin || *end - *begin != uint64_t(size))
    return bad("has " + range + ", not the " + Twine(size) +
               " bytes its dtype and shape take");
  if (*end > dataSize)
    return bad("has " + range + " past the end of the " + Twine(dataSize) +
               " bytes of data");
  entry.begin = *begin;
  entry.end = *end;
  return entry;
}

/// As the Python package: a larger JSON header is an attack, not a model.
static constexpr uint64_t kMaxHeaderSize = 100'000'000;

Expected<Safetensors> fuse::data::readSafetensors(StringRef path) {
  Expected<std::unique_ptr<llvm::MemoryBuffer>> file = readRegularFile(path);
  if (!file)
    return file.takeError();
  StringRef bytes = (*file)->getBuffer();
  if (bytes.size() < 8)
    return fileError(path, "not a safetensors file: shorter than the 8-byte "
                           "header length");
  uint64_t headerSize = llvm::support::endian::read64le(bytes.data());
  if (headerSize > kMaxHeaderSize)
    return fileError(path, "header length " + Twine(headerSize) +
                               " exceeds the limit of " +
                               Twine(kMaxHeaderSize) + " bytes");
  if (headerSize > bytes.size() - 8)
    return fileError(path, "header length " + Twine(headerSize) +
                               " is larger than the " +
                               Twine(bytes.size() - 8) + " bytes after it");
  StringRef data = bytes.drop_front(8 + headerSize);
  Expected<json::Value> header = json::parse(bytes.substr(8, headerSize));
  if (!header)
    return fileError(path, "header is not valid JSON: " +
                               llvm::toString(header.takeError()));
  const json::Object *root = header->getAsObject();
  if (!root)
    return fileError(path, "header is not a JSON object");

  Safetensors result;
  std::vector<Entry> entries;
  for (const auto &field : *root) {
    StringRef name = field.first;
    if (name != "__metadata__") {
      Expected<Entry> entry = parseEntry(path, name, field.second, data.size());
      if (!entry)
        return entry.takeError();
      entries.push_back(std::move(*entry));
      continue;
    }
    if (field.second.getAsNull())
      continue;
    const json::Object *metadata = field.second.getAsObject();
    if (!metadata)
      return fileError(path, "\"__metadata__\" is not a JSON object");
    for (const auto &[key, value] : *metadata) {
      std::optional<StringRef> text = value.getAsString();
      if (!text)
        return fileError(path, "\"__metadata__\" value of '" + StringRef(key) +
                                   "' is not a string");
      result.metadata[key.str()] = text->str();
    }
  }

  // JSON objects are unordered; the data offsets give the file order.
  llvm::sort(entries, [](const Entry &a, const Entry &b) {
    return std::tie(a.begin, a.end, a.name) < std::tie(b.begin, b.end, b.name);
  });
  uint64_t covered = 0;
  for (size_t i = 0; i < entries.size(); ++i) {
    if (entries[i].begin < covered)
      return fileError(path, "tensors '" + entries[i - 1].name + "' and '" +
                                 entries[i].name + "' overlap");
    if (entries[i].begin > covered)
      return fileError(path, "data bytes " + Twine(covered) + " to " +
                                 Twine(entries[i].begin) +
                                 " belong to no tensor");
    covered = entries[i].end;
  }
  if (covered != data.size())
    return fileError(path, "data bytes " + Twine(covered) + " to " +
                               Twine(data.size()) + " belong to no tensor");

  for (const Entry &entry : entries) {
    Expected<Tensor> t = Tensor::allocate(
        entry.dtype, entry.shape, path + ": tensor '" + entry.name + "'");
    if (!t)
      return t.takeError();
    std::memcpy(t->data(), data.data() + entry.begin, entry.end - entry.begin);
    result.tensors.push_back({entry.name.str(), std::move(*t)});
  }
  return result;
}
