//===- RegularFile.cpp - Reading files that have a size -------------------===//

#include "fuse/RegularFile.h"

#include <cerrno>
#include <fcntl.h>
#include <sys/stat.h>
#include <system_error>
#include <unistd.h>

using namespace fuse;

static llvm::Error fileError(llvm::StringRef path, const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 path + ": " + message);
}

RegularFile::~RegularFile() {
  if (fd_ >= 0)
    ::close(fd_);
}

llvm::Expected<RegularFile> fuse::openRegularFile(llvm::StringRef path) {
  std::string name = path.str();
  int fd;
  do
    fd = ::open(name.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  while (fd < 0 && errno == EINTR);
  if (fd < 0)
    return fileError(path,
                     "cannot open: " + std::generic_category().message(errno));
  struct stat status;
  if (::fstat(fd, &status) != 0) {
    int err = errno;
    ::close(fd);
    return fileError(path,
                     "cannot open: " + std::generic_category().message(err));
  }
  if (!S_ISREG(status.st_mode)) {
    ::close(fd);
    return fileError(path, "not a regular file");
  }
  // Reads block as usual from here on (O_NONBLOCK means nothing for regular
  // files, but gzip and MemoryBuffer need not know).
  int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0)
    ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  return RegularFile(fd, uint64_t(status.st_size));
}

llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
fuse::readRegularFile(llvm::StringRef path) {
  llvm::Expected<RegularFile> file = openRegularFile(path);
  if (!file)
    return file.takeError();
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getOpenFile(file->fd(), path, file->size(),
                                      /*RequiresNullTerminator=*/false);
  if (!buffer)
    return fileError(path, "cannot read: " + buffer.getError().message());
  return std::move(*buffer);
}
