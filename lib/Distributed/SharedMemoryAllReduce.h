//===- SharedMemoryAllReduce.h - All-reduce in shared memory ----*- C++ -*-===//
//
// The nonblocking all-reduce of MpiAllReduce::SharedMemory (fuse/Mpi.h):
// ranks that share a machine's memory sum their buffers through an MPI-3
// shared window (MPI_Win_allocate_shared) by loads and stores, with no
// message and no copy through the kernel, as DeepSpeed's and oneCCL's CPU
// all-reduces do within a node.
//
// Each rank's part of the window holds two staging buffers of kPieceFloats
// floats and two counters. A buffer is reduced piece by piece: a rank copies
// its next piece into a free staging buffer and publishes it (its `ready`
// counter), then, once every rank has published that piece, sums the ranks'
// copies into its own buffer and says so (its `done` counter); a staging
// buffer is refilled once every rank is done with the piece it held. So two
// pieces are in flight, each staging buffer stays in cache, and every rank
// reads and writes its own buffer once.
//
// Every rank sums every element (it reads N pieces for each: Auto takes
// the ring beyond kMaxRanks ranks), in the order of MpiAllReduce::Ring: an
// element of the buffer's chunk c (the ring's chunks, count c / N to
// count (c + 1) / N) is ((x_c + x_c+1) + ...) + x_c-1, ranks taken modulo
// N. So every rank gets the same bits, the ring's bits, run after run.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_LIB_DISTRIBUTED_SHAREDMEMORYALLREDUCE_H
#define FUSE_LIB_DISTRIBUTED_SHAREDMEMORYALLREDUCE_H

#include "llvm/Support/Error.h"

#include <mpi.h>

#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

namespace fuse {
namespace detail {

class SharedMemoryAllReduce {
public:
  /// Floats per piece: a staging buffer of 256 KiB, two of them per rank,
  /// stays in a core's L2 while its piece is summed.
  static constexpr int64_t kPieceFloats = 64 * 1024;
  /// The most ranks Auto gives it: every rank reads every rank's pieces,
  /// N times what it sums, where the ring moves 2 (N - 1) / N.
  static constexpr int kMaxRanks = 8;

  /// Collective over `comm`: its window, if every rank of `comm` shares
  /// this process's memory (MPI_COMM_TYPE_SHARED); null if they do not.
  /// Ranks that start all-reduces of different counts, or in a different
  /// order, are an error MPI's collectives do not detect either: their
  /// sums are wrong or they wait for ever.
  static llvm::Expected<std::unique_ptr<SharedMemoryAllReduce>>
  create(MPI_Comm comm);
  /// Collective: frees the window (unless MPI has been finalized).
  ~SharedMemoryAllReduce();
  SharedMemoryAllReduce(const SharedMemoryAllReduce &) = delete;
  SharedMemoryAllReduce &operator=(const SharedMemoryAllReduce &) = delete;

  /// Starts replacing data[0, count) by its sum over the ranks; every rank
  /// starts the same all-reduces in the same order. Publishes what it can
  /// at once; data[0, count) must not be touched until wait(request).
  int64_t start(float *data, int64_t count);
  /// Moves the all-reduces in flight on as far as the other ranks allow;
  /// never blocks.
  void progress() { advance(/*block=*/false, /*request=*/-1); }
  /// Ends the all-reduce of `request`. Every all-reduce must have ended
  /// before the object is destroyed (the others would wait for this rank).
  llvm::Error wait(int64_t request);

private:
  /// A rank's counters, each on its own cache line: the pieces it has
  /// published and the pieces it has summed, since the window was made.
  /// Plain words read and written by atomic builtins: the other processes
  /// see memory, not a C++ object.
  uint64_t load(const uint64_t *counter) const {
    return __atomic_load_n(counter, __ATOMIC_ACQUIRE);
  }
  void store(uint64_t *counter, uint64_t value) {
    __atomic_store_n(counter, value, __ATOMIC_RELEASE);
  }
  static_assert(__atomic_always_lock_free(sizeof(uint64_t), 0),
                "counters in shared memory must be lock-free");
  struct Collective {
    int64_t id;
    float *data;
    int64_t count;
    int64_t published = 0; // elements copied into a staging buffer
    int64_t reduced = 0;   // elements summed into data
  };

  SharedMemoryAllReduce(MPI_Comm node, MPI_Win window, int rank, int size,
                        std::vector<char *> segments);

  uint64_t *ready(int rank) const;
  uint64_t *done(int rank) const;
  float *staging(int rank, uint64_t piece) const;
  /// Each step publishes or sums a piece if the other ranks allow it;
  /// returns whether it did.
  bool tryPublish();
  bool trySum();
  /// Until `request` has ended (-1: none) or, without `block`, until no
  /// piece can move.
  void advance(bool block, int64_t request);
  bool ended(int64_t request) const;

  MPI_Comm node_;
  MPI_Win window_;
  int rank_, size_;
  std::vector<char *> segments_; // each rank's part of the window
  std::deque<Collective> inFlight_;
  uint64_t published_ = 0, summed_ = 0; // pieces, this rank's
  int64_t nextRequest_ = 0;
};

} // namespace detail
} // namespace fuse

#endif // FUSE_LIB_DISTRIBUTED_SHAREDMEMORYALLREDUCE_H
