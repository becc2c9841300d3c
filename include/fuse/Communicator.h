//===- Communicator.h - The ranks of a data-parallel run --------*- C++ -*-===//
//
// Data-parallel training runs one process (rank) per share of every global
// batch; the ranks sum their gradients at every step. A Communicator is
// what they talk through: MPI (fuse/Mpi.h) in `fusec train` under mpirun,
// or any implementation an embedding program provides. No MPI type appears
// here.
//
// Compiled code reaches it through the runtime's fuse_all_reduce_start_f32
// and fuse_all_reduce_wait (fuse/ABI.h), which reduce through the
// communicator a CommunicatorScope
// installs on the calling thread: `fuse::fit` installs FitOptions's for
// its training calls.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_COMMUNICATOR_H
#define FUSE_COMMUNICATOR_H

#include "llvm/Support/Error.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace fuse {

class Communicator {
public:
  virtual ~Communicator();
  /// This process's rank, in [0, size()).
  virtual int rank() const = 0;
  virtual int size() const = 0;
  /// Replaces data[0, count) on every rank by its sum over the ranks,
  /// element by element. Every rank must call the collectives in the same
  /// order with the same counts.
  virtual llvm::Error allReduceSum(float *data, int64_t count) = 0;
  virtual llvm::Error allReduceSum(double *data, int64_t count) = 0;
  /// Starts allReduceSum(data, count) and returns a request for wait();
  /// data[0, count) must not be touched until then. Every rank starts the
  /// same collectives in the same order. The default reduces at once (a
  /// blocking allReduceSum) and returns a request wait() ends at once: what
  /// a communicator without nonblocking collectives does.
  virtual llvm::Expected<int64_t> startAllReduceSum(float *data, int64_t count);
  /// Ends the collective of `request` (of startAllReduceSum). Ranks may
  /// wait for their collectives in different orders, as with MPI's.
  virtual llvm::Error wait(int64_t request);
  /// How the nonblocking all-reduces run, for reports: the default's
  /// "blocking" (each at its start); fuse/Mpi.h's "shared-memory", "ring"
  /// or "mpi", as `fusec train --allreduce` names them.
  virtual std::string allReduceAlgorithm() const { return "blocking"; }
  /// Lets the collectives in flight move on (MPI progresses them only
  /// inside its calls); never blocks. The default does nothing.
  virtual void progress() {}
  /// Copies `bytes` bytes at `data` on rank `root` into `data` on the others.
  virtual llvm::Error broadcast(void *data, size_t bytes, int root) = 0;
  /// Ends every rank of the run (after an error on this one, which the
  /// others cannot learn of): MPI_Abort. The default does nothing.
  virtual void abort(int exitCode) {}
};

/// While alive, compiled code's fuse.all_reduce on this thread reduces
/// through `communicator` (null: a world of one rank, whose sum is the
/// tensor itself). Scopes nest. A failed collective cannot stop compiled
/// code: its error is kept, and the rest of the call reduces nothing;
/// takeError() returns it.
class CommunicatorScope {
public:
  explicit CommunicatorScope(Communicator *communicator);
  ~CommunicatorScope();
  CommunicatorScope(const CommunicatorScope &) = delete;
  CommunicatorScope &operator=(const CommunicatorScope &) = delete;
  /// The first collective that failed since the last call, naming it.
  llvm::Error takeError();
  /// The wall time compiled code spent in collectives in this scope (the
  /// waits for the other ranks included): in their starts, waits and
  /// progress calls, not the time they ran alongside compiled code.
  double collectiveSeconds() const { return seconds_; }

private:
  /// A collective started and not yet waited for.
  struct Pending {
    float *data;
    int64_t count;
    int32_t kind;
    int64_t request;
  };
  Communicator *communicator_;
  std::string error_;
  double seconds_ = 0;
  std::vector<Pending> pending_; // by handle; ended ones have no data
  unsigned inFlight_ = 0;
  CommunicatorScope *outer_;
  friend struct CollectiveRuntime;
};

} // namespace fuse

#endif // FUSE_COMMUNICATOR_H
