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

/// How a communicator over MPI carries out the nonblocking all-reduce of
/// compiled code's gradient buckets (Communicator::startAllReduceSum).
enum class MpiAllReduce {
  /// SharedMemory where every rank shares this machine's memory and they
  /// are 8 or fewer (it reads every rank's values on each), Ring otherwise
  /// (the ranks agree: each sees the same). The default.
  Auto,
  /// Through an MPI-3 shared-memory window (MPI_Win_allocate_shared), by
  /// loads and stores in pieces that stay in cache, with no message: what
  /// DeepSpeed's and oneCCL's CPU all-reduces do within a node. Every rank
  /// sums every element in Ring's order, so it gets Ring's bits. Creating
  /// the communicator fails if the ranks are on several machines. On 2
  /// ranks of one machine docs/performance.md measured it about 2x faster
  /// than Ring over OpenMPI's shared-memory transport.
  SharedMemory,
  /// Fuse's own over MPI's nonblocking point-to-point messages: a ring
  /// reduce-scatter (each rank sums 1/N of the buffer, adding its
  /// neighbour's partial sums one chunk at a time) then a ring all-gather,
  /// N - 1 steps each, moved on by progress() and wait(). Each element is
  /// summed by one rank in a fixed order (that of the ring from the
  /// chunk's first rank), so every rank gets the same bits, run after run.
  /// It moves 2 (N - 1) / N of the buffer per rank, as
  /// reduce-scatter-then-all-gather algorithms do, whatever the MPI: Auto's
  /// choice across machines.
  Ring,
  /// MPI_Iallreduce, the MPI library's own schedule. OpenMPI 4.1's (libnbc)
  /// picks a binomial reduce then broadcast for an in-place buffer, which
  /// docs/performance.md measured about 4x slower than the ring on 2 ranks
  /// ("The nonblocking all-reduce's algorithm").
  Library,
};

/// A communicator over MPI_COMM_WORLD (a duplicate: its error handling is
/// Fuse's own; creating and destroying it are collective), initializing MPI
/// (MPI_THREAD_SERIALIZED: one thread at a time calls it) if the program has
/// not, and finalizing it at exit then.
llvm::Expected<std::unique_ptr<Communicator>>
mpiWorldCommunicator(MpiAllReduce allReduce = MpiAllReduce::Auto);

/// A communicator over the caller's: `mpiComm` is the address of an
/// MPI_Comm (a duplicate is used, freed with the communicator). MPI must be
/// initialized with at least MPI_THREAD_SERIALIZED when several threads
/// call it.
llvm::Expected<std::unique_ptr<Communicator>>
mpiCommunicator(const void *mpiComm,
                MpiAllReduce allReduce = MpiAllReduce::Auto);

} // namespace fuse

#endif // FUSE_MPI_H
