//===- RegularFile.h - Reading files that have a size -----------*- C++ -*-===//
//
// Every reader whose header claims a size (.npy, IDX, safetensors, cache
// entries) needs a regular file: a device or FIFO (`/dev/zero`) has no size
// to check the claim against and may never end. The file is opened first
// and its descriptor checked (fstat), so that what is checked is what is
// read, never a path replaced in between.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_REGULARFILE_H
#define FUSE_REGULARFILE_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cstdint>
#include <memory>

namespace fuse {

/// An open regular file: its descriptor (closed on destruction unless
/// released) and its size when opened.
class RegularFile {
public:
  RegularFile(int fd, uint64_t size) : fd_(fd), size_(size) {}
  RegularFile(RegularFile &&other) : fd_(other.release()), size_(other.size_) {}
  RegularFile &operator=(RegularFile &&) = delete;
  RegularFile(const RegularFile &) = delete;
  ~RegularFile();

  int fd() const { return fd_; }
  uint64_t size() const { return size_; }
  /// Hands the descriptor over (to gzdopen, say): no longer closed here.
  int release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }

private:
  int fd_;
  uint64_t size_;
};

/// Opens `path` for reading (non-blocking, so that a FIFO does not wait for
/// a writer; close-on-exec) and checks through the descriptor that it is a
/// regular file. Errors: "<path>: cannot open: <reason>", "<path>: not a
/// regular file".
llvm::Expected<RegularFile> openRegularFile(llvm::StringRef path);

/// The bytes of the regular file `path`: exactly as many as fstat reported
/// when it was opened (a file growing meanwhile is not read on). Errors as
/// openRegularFile's, and "<path>: cannot read: <reason>".
llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
readRegularFile(llvm::StringRef path);

} // namespace fuse

#endif // FUSE_REGULARFILE_H
