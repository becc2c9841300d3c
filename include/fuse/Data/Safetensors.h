//===- Safetensors.h - Checkpoints in the safetensors format ----*- C++ -*-===//
//
// Reads and writes the safetensors format of Hugging Face's `safetensors`
// package: an 8-byte little-endian header length N, N bytes of JSON naming
// each tensor's dtype, shape and byte range (plus an optional string map
// "__metadata__"), then the raw little-endian row-major data, tensors back to
// back. Files written here are byte-for-byte deterministic and readable by
// the Python package; files it writes read back here. Errors name the file
// and what is wrong with it; nothing aborts.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_DATA_SAFETENSORS_H
#define FUSE_DATA_SAFETENSORS_H

#include "fuse/Tensor.h"

#include "llvm/Support/Error.h"

#include <map>
#include <string>
#include <vector>

namespace fuse::data {

struct NamedTensor {
  std::string name;
  Tensor tensor;
};

/// The contents of a safetensors file.
struct Safetensors {
  /// Owning row-major tensors in file order (by data offset; tensors without
  /// data at the same offset by name).
  std::vector<NamedTensor> tensors;
  /// The file's "__metadata__".
  std::map<std::string, std::string> metadata;

  /// The tensor called `name`, or null.
  const Tensor *find(llvm::StringRef name) const;
};

/// Writes `tensors` (any strides; written row-major, in the order given) and
/// `metadata` (omitted when empty) to `path` atomically: a temporary file in
/// the same directory, fsync, rename over `path`, fsync of the directory. On
/// an error before the rename the temporary file is removed and an existing
/// `path` is untouched; the error names `path` and the OS reason. (Only a
/// failed fsync of the directory is reported after `path` was replaced.)
/// Names must be unique, valid UTF-8 and not "__metadata__".
///
/// The temporary file is `<path>.tmp-<host>-<boot>-<pid>-<8 hex digits>`
/// (temporaryFileHostTag() is `<host>-<boot>`). A write killed before its
/// rename leaves it behind; each write of `path` first removes the stale
/// ones of `path`:
/// - of this host and boot: when process `<pid>` is gone (a live process,
///   the writer or one reusing its pid, keeps its file);
/// - any other temporary name of `path` (another host's on a shared file
///   system, another container's, another boot's, the older
///   `<path>.tmp-<pid>-<8 hex>` and `<path>.tmp-<8 hex>`): only when last
///   modified more than an hour ago, as a pid means nothing there.
/// Files not named after `path` are never touched.
/// `<host>-<boot>` of this process's temporary files: the host name
/// (characters other than letters, digits, '-' and '.' as '_') and the first
/// 8 hex digits of /proc/sys/kernel/random/boot_id, which together say
/// where a temporary's pid can be checked.
std::string temporaryFileHostTag();

llvm::Error
writeSafetensors(llvm::StringRef path, llvm::ArrayRef<NamedTensor> tensors,
                 const std::map<std::string, std::string> &metadata = {});

/// Reads a whole safetensors file into owning tensors. Like the Python
/// package, rejects files whose tensors do not exactly cover the data, and
/// headers over 100 MB; `path` must be a regular file. Every size is
/// checked against the file before anything is allocated.
llvm::Expected<Safetensors> readSafetensors(llvm::StringRef path);

} // namespace fuse::data

#endif // FUSE_DATA_SAFETENSORS_H
