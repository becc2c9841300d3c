//===- MpiErrors.h - MPI's error codes as text ------------------*- C++ -*-===//

#ifndef FUSE_LIB_DISTRIBUTED_MPIERRORS_H
#define FUSE_LIB_DISTRIBUTED_MPIERRORS_H

#include <mpi.h>

#include <string>

namespace fuse {
namespace detail {

/// MPI's text for `code` (MPI_Error_string), or its number.
inline std::string mpiError(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS)
    return "MPI error " + std::to_string(code);
  return std::string(text, length);
}

} // namespace detail
} // namespace fuse

#endif // FUSE_LIB_DISTRIBUTED_MPIERRORS_H
