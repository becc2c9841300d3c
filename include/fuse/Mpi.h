//===- Mpi.h - Communicators over MPI ---------------------------*- C++ -*-===//
//
// fuse::Communicator over MPI, for data-parallel training under mpirun
// (library FuseMPI, built when CMake finds an MPI: FUSE_ENABLE_MPI). MPI's
// own types stay out of this header: a caller's communicator is passed by
// address.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_MPI_H
#define FUSE_MPI_H

#include "fuse/Communicator.h"

#include <memory>

namespace fuse {

/// Whether this process was started by an MPI launcher (mpirun, mpiexec,
/// srun) as one of several ranks: what its environment says, without
/// initializing MPI.
bool launchedAsMpiRanks();

/// A communicator over MPI_COMM_WORLD (a duplicate: its error handling is
/// Fuse's own), initializing MPI (MPI_THREAD_SERIALIZED: one thread at a
/// time calls it) if the program has not, and finalizing it at exit then.
llvm::Expected<std::unique_ptr<Communicator>> mpiWorldCommunicator();

/// A communicator over the caller's: `mpiComm` is the address of an
/// MPI_Comm (a duplicate is used, freed with the communicator). MPI must be
/// initialized with at least MPI_THREAD_SERIALIZED when several threads
/// call it.
llvm::Expected<std::unique_ptr<Communicator>>
mpiCommunicator(const void *mpiComm);

} // namespace fuse

#endif // FUSE_MPI_H
