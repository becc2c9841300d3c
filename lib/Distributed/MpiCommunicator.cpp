//===- MpiCommunicator.cpp - fuse::Communicator over MPI ------------------===//
//
// Collectives are MPI's, on a duplicate of the given communicator whose
// errors return (MPI_ERRORS_RETURN) instead of aborting, so that Fuse can
// name what failed. Counts above INT_MAX go in several calls. Nonblocking
// all-reduces are kept by request number until wait(): through a
// shared-memory window where the ranks share a machine
// (SharedMemoryAllReduce.h), else by Fuse's own ring over
// MPI_Isend/MPI_Irecv (a reduce-scatter then an all-gather, moved on step by
// step by progress() and wait()), or MPI_Iallreduce (MpiAllReduce,
// fuse/Mpi.h).
//
//===----------------------------------------------------------------------===//

#include "fuse/Mpi.h"

#include "MpiErrors.h"
#include "RingChunks.h"
#include "SharedMemoryAllReduce.h"

#include "llvm/ADT/STLExtras.h"

#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <memory>
#include <vector>

using namespace fuse;

namespace {

using detail::mpiError;

class MpiCommunicator final : public Communicator {
public:
  MpiCommunicator(MPI_Comm comm, MpiAllReduce allReduce,
                  std::unique_ptr<detail::SharedMemoryAllReduce> shared)
      : comm_(comm), allReduce_(allReduce), shared_(std::move(shared)) {
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &size_);
  }
  ~MpiCommunicator() override {
    shared_.reset();
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized)
      MPI_Comm_free(&comm_);
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }

  llvm::Error allReduceSum(float *data, int64_t count) override {
    return inChunks(data, count, sizeof(float), [&](void *p, int n) {
      return MPI_Allreduce(MPI_IN_PLACE, p, n, MPI_FLOAT, MPI_SUM, comm_);
    });
  }
  llvm::Error allReduceSum(double *data, int64_t count) override {
    return inChunks(data, count, sizeof(double), [&](void *p, int n) {
      return MPI_Allreduce(MPI_IN_PLACE, p, n, MPI_DOUBLE, MPI_SUM, comm_);
    });
  }
  llvm::Expected<int64_t> startAllReduceSum(float *data,
                                            int64_t count) override {
    if (count < 0)
      return llvm::createStringError("all-reduce of " + std::to_string(count) +
                                     " floats: a negative count");
    if (shared_)
      return shared_->start(data, count);
    if (allReduce_ == MpiAllReduce::Ring)
      return startRing(data, count);
    std::vector<MPI_Request> requests;
    llvm::Error err = inChunks(data, count, sizeof(float), [&](void *p, int n) {
      requests.emplace_back();
      return MPI_Iallreduce(MPI_IN_PLACE, p, n, MPI_FLOAT, MPI_SUM, comm_,
                            &requests.back());
    });
    // The chunks started before a failure must still end.
    if (err) {
      if (!requests.empty())
        requests.pop_back();
      MPI_Waitall(int(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
      return std::move(err);
    }
    int64_t id = nextRequest_++;
    pending_.push_back({id, std::move(requests), nullptr});
    return id;
  }
  llvm::Error wait(int64_t request) override {
    if (shared_)
      return shared_->wait(request);
    auto it = llvm::find_if(pending_,
                            [&](const Pending &p) { return p.id == request; });
    if (it == pending_.end())
      return llvm::createStringError("no all-reduce in flight with request " +
                                     std::to_string(request));
    Pending pending = std::move(*it);
    pending_.erase(it);
    if (pending.ring) {
      Ring &ring = *pending.ring;
      // The other rings in flight move on too: another rank may wait for
      // them first (the library's contract allows any order), and a ring
      // step moves only when both of its ranks move it.
      while (ring.error.empty() &&
             (ring.step < steps() || !ring.sends.empty())) {
        advance(ring, /*block=*/false);
        for (Pending &other : pending_)
          if (other.ring)
            advance(*other.ring, /*block=*/false);
      }
      // After an error too: MPI owns the sends' buffers until they end.
      advance(ring, /*block=*/true);
      releaseBuffer(std::move(pending.ring->received));
      if (!pending.ring->error.empty())
        return llvm::createStringError(pending.ring->error);
      return llvm::Error::success();
    }
    int code = MPI_Waitall(int(pending.requests.size()),
                           pending.requests.data(), MPI_STATUSES_IGNORE);
    if (code != MPI_SUCCESS)
      return llvm::createStringError(mpiError(code));
    return llvm::Error::success();
  }
  void progress() override {
    // One test moves every collective in flight on (OpenMPI's progress
    // engine runs them all); a ring also posts its next step's messages
    // once a step's have arrived. Errors come back from wait().
    if (shared_)
      return shared_->progress();
    for (Pending &pending : pending_) {
      if (pending.ring) {
        advance(*pending.ring, /*block=*/false);
      } else if (!pending.requests.empty()) {
        int done = 0;
        MPI_Test(&pending.requests.front(), &done, MPI_STATUS_IGNORE);
        return;
      }
    }
  }
  std::string allReduceAlgorithm() const override {
    if (shared_)
      return "shared-memory";
    return allReduce_ == MpiAllReduce::Library ? "mpi" : "ring";
  }
  llvm::Error broadcast(void *data, size_t bytes, int root) override {
    return inChunks(data, int64_t(bytes), 1, [&](void *p, int n) {
      return MPI_Bcast(p, n, MPI_BYTE, root, comm_);
    });
  }
  void abort(int exitCode) override { MPI_Abort(comm_, exitCode); }

private:
  template <typename Call>
  llvm::Error inChunks(void *data, int64_t count, size_t elementSize,
                       Call call) {
    char *p = static_cast<char *>(data);
    do {
      int n = int(std::min<int64_t>(count, INT_MAX));
      if (int code = call(p, n); code != MPI_SUCCESS)
        return llvm::createStringError(mpiError(code));
      p += size_t(n) * elementSize;
      count -= n;
    } while (count > 0);
    return llvm::Error::success();
  }

  /// A ring all-reduce in flight (MpiAllReduce::Ring) over data[0, count),
  /// cut into N chunks, chunk c being [count c / N, count (c + 1) / N).
  /// Steps 0 .. N-2 reduce-scatter: rank r sends chunk r - s to rank r + 1
  /// and adds the one it receives from rank r - 1, chunk r - s - 1, to its
  /// own, so that after them it holds the sum of chunk r + 1 (summed in the
  /// ring's order from the chunk's rank: fixed for a given N). Steps N-1 ..
  /// 2N-3 all-gather: rank r sends chunk r + 1 - t and receives chunk r - t
  /// in place (t = s - (N - 1)).
  ///
  /// A step ends when its receive has arrived, not its send: the next
  /// step's send (the chunk just received, and summed) goes out at once,
  /// while the earlier sends finish as the other ranks take them (sends to
  /// the same rank with the same tag match in order). An all-gather
  /// receive into a chunk an earlier send still reads is posted once that
  /// send has finished.
  struct Ring {
    float *data;
    int64_t count;
    int tag;
    int step = 0;
    MPI_Request receive = MPI_REQUEST_NULL;
    /// Whether the current step's receive is posted (it may wait for a
    /// send of its chunk to finish).
    bool receivePosted = false;
    /// The sends not known to have finished, with the chunk each reads.
    std::vector<std::pair<MPI_Request, int>> sends;
    std::vector<float> received; // a chunk's partial sums
    std::string error;
  };
  struct Pending {
    int64_t id;
    std::vector<MPI_Request> requests; // MPI_Iallreduce's, one per chunk
    std::unique_ptr<Ring> ring;
  };

  int64_t chunkBegin(const Ring &ring, int chunk) const {
    return detail::ringChunkBegin(ring.count, chunkIndex(chunk), size_);
  }
  int64_t chunkSize(const Ring &ring, int chunk) const {
    chunk = chunkIndex(chunk);
    return detail::ringChunkBegin(ring.count, chunk + 1, size_) -
           detail::ringChunkBegin(ring.count, chunk, size_);
  }
  int steps() const { return 2 * (size_ - 1); }

  llvm::Expected<int64_t> startRing(float *data, int64_t count) {
    int64_t largest = (count + size_ - 1) / size_;
    if (largest > INT_MAX)
      return llvm::createStringError(
          "all-reduce of " + std::to_string(count) +
          " floats: a ring chunk above INT_MAX elements");
    auto ring = std::make_unique<Ring>();
    ring->data = data;
    ring->count = count;
    // Collectives in flight at once keep apart by tag (every rank starts
    // them in the same order, so they number them alike).
    ring->tag = int(nextRequest_ % 30000) + 1;
    ring->received = takeBuffer(largest);
    post(*ring);
    int64_t id = nextRequest_++;
    pending_.push_back({id, {}, std::move(ring)});
    return id;
  }

  /// The chunk step `s` of `ring` sends and the one it receives.
  std::pair<int, int> stepChunks(int s) const {
    if (s < size_ - 1)
      return {rank_ - s, rank_ - s - 1};
    int t = s - (size_ - 1);
    return {rank_ + 1 - t, rank_ - t};
  }
  int chunkIndex(int chunk) const { return ((chunk % size_) + size_) % size_; }

  void fail(Ring &ring, const char *what, int code) {
    if (ring.error.empty())
      ring.error = "all-reduce (ring step " + std::to_string(ring.step) + ", " +
                   what + "): " + mpiError(code);
  }

  /// Forgets the sends that have finished; `block`: waits for all of them
  /// (or, with `chunk` >= 0, for those reading that chunk).
  void finishSends(Ring &ring, bool block, int chunk = -1) {
    for (auto it = ring.sends.begin(); it != ring.sends.end();) {
      bool mine = chunk < 0 || it->second == chunk;
      int done = 0, code;
      if (block && mine)
        code = MPI_Wait(&it->first, MPI_STATUS_IGNORE), done = 1;
      else
        code = MPI_Test(&it->first, &done, MPI_STATUS_IGNORE);
      if (code != MPI_SUCCESS) {
        fail(ring, "send", code);
        done = 1;
      }
      it = done ? ring.sends.erase(it) : it + 1;
    }
  }

  /// Posts the current step's send (none once the ring is done) and tries
  /// its receive (postReceive).
  void post(Ring &ring) {
    if (ring.step >= steps() || !ring.error.empty())
      return;
    int next = (rank_ + 1) % size_;
    int sendChunk = chunkIndex(stepChunks(ring.step).first);
    MPI_Request send;
    int code = MPI_Isend(ring.data + chunkBegin(ring, sendChunk),
                         int(chunkSize(ring, sendChunk)), MPI_FLOAT, next,
                         ring.tag, comm_, &send);
    if (code != MPI_SUCCESS)
      return fail(ring, "send", code);
    ring.sends.push_back({send, sendChunk});
    ring.receivePosted = false;
    postReceive(ring, /*block=*/false);
  }

  /// Posts the current step's receive unless a send still reads its
  /// chunk (`block`: waits for that send). Returns whether it is posted.
  bool postReceive(Ring &ring, bool block) {
    if (ring.receivePosted)
      return true;
    int previous = (rank_ + size_ - 1) % size_;
    int s = ring.step, receiveChunk = chunkIndex(stepChunks(s).second);
    float *into = ring.received.data();
    if (s >= size_ - 1) {
      into = ring.data + chunkBegin(ring, receiveChunk);
      finishSends(ring, block, receiveChunk);
      if (llvm::any_of(
              ring.sends,
              [&](const auto &send) { return send.second == receiveChunk; }) ||
          !ring.error.empty())
        return false;
    }
    int code = MPI_Irecv(into, int(chunkSize(ring, receiveChunk)), MPI_FLOAT,
                         previous, ring.tag, comm_, &ring.receive);
    if (code != MPI_SUCCESS) {
      fail(ring, "receive", code);
      return false;
    }
    ring.receivePosted = true;
    return true;
  }

  /// Moves `ring` on: each step whose receive has arrived ends (the
  /// reduce-scatter's adds the partial sums received) and posts the next.
  /// `block`: until the last step and every send end.
  void advance(Ring &ring, bool block) {
    while (ring.step < steps() && ring.error.empty()) {
      if (!postReceive(ring, block))
        break;
      int done = 0, code;
      if (block)
        code = MPI_Wait(&ring.receive, MPI_STATUS_IGNORE), done = 1;
      else
        code = MPI_Test(&ring.receive, &done, MPI_STATUS_IGNORE);
      if (code != MPI_SUCCESS) {
        fail(ring, "receive", code);
        break;
      }
      if (!done)
        break;
      if (ring.step < size_ - 1) {
        int chunk = stepChunks(ring.step).second;
        float *own = ring.data + chunkBegin(ring, chunk);
        const float *partial = ring.received.data();
        for (int64_t i = 0, n = chunkSize(ring, chunk); i < n; ++i)
          own[i] = partial[i] + own[i];
      }
      ++ring.step;
      post(ring);
    }
    // After an error too: MPI owns the sends' buffers until they end.
    finishSends(ring, block);
  }

  /// The rings' receive buffers are kept for the next steps: a step of
  /// training allocates none once the first has run.
  std::vector<float> takeBuffer(int64_t size) {
    for (auto it = spare_.begin(); it != spare_.end(); ++it)
      if (int64_t(it->size()) >= size) {
        std::vector<float> buffer = std::move(*it);
        spare_.erase(it);
        return buffer;
      }
    return std::vector<float>(size_t(size));
  }
  void releaseBuffer(std::vector<float> buffer) {
    spare_.push_back(std::move(buffer));
  }

  MPI_Comm comm_;
  MpiAllReduce allReduce_;
  /// Where the nonblocking all-reduces go (MpiAllReduce::SharedMemory).
  std::unique_ptr<detail::SharedMemoryAllReduce> shared_;
  int rank_ = 0, size_ = 1;
  /// The nonblocking all-reduces in flight, by request number.
  std::vector<Pending> pending_;
  int64_t nextRequest_ = 0;
  std::vector<std::vector<float>> spare_;
};

llvm::Expected<std::unique_ptr<Communicator>>
duplicate(MPI_Comm comm, MpiAllReduce allReduce) {
  MPI_Comm dup;
  if (int code = MPI_Comm_dup(comm, &dup); code != MPI_SUCCESS)
    return llvm::createStringError("MPI_Comm_dup failed: " + mpiError(code));
  MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
  std::unique_ptr<detail::SharedMemoryAllReduce> shared;
  int size = 0;
  MPI_Comm_size(dup, &size);
  if ((allReduce == MpiAllReduce::Auto &&
       size <= detail::SharedMemoryAllReduce::kMaxRanks) ||
      allReduce == MpiAllReduce::SharedMemory) {
    auto window = detail::SharedMemoryAllReduce::create(dup);
    if (!window) {
      MPI_Comm_free(&dup);
      return window.takeError();
    }
    shared = std::move(*window);
    if (!shared && allReduce == MpiAllReduce::SharedMemory) {
      MPI_Comm_free(&dup);
      return llvm::createStringError(
          "the shared-memory all-reduce (--allreduce=shared-memory) needs "
          "every rank on one machine, and these " +
          std::to_string(size) +
          " are on several: use --allreduce=ring or auto");
    }
  }
  // Auto without the window: the ring.
  if (allReduce == MpiAllReduce::Auto && !shared)
    allReduce = MpiAllReduce::Ring;
  return std::make_unique<MpiCommunicator>(dup, allReduce, std::move(shared));
}

void finalize() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized)
    MPI_Finalize();
}

} // namespace

bool fuse::launchedAsMpiRanks() {
  // OpenMPI's mpirun, then PMI (MPICH's hydra, Slurm's srun), then PMIx.
  for (const char *name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"})
    if (const char *value = std::getenv(name))
      return std::atoi(value) > 1;
  return false;
}

llvm::Expected<std::unique_ptr<Communicator>>
fuse::mpiWorldCommunicator(MpiAllReduce allReduce) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    int provided = 0;
    if (int code =
            MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided);
        code != MPI_SUCCESS)
      return llvm::createStringError("MPI_Init_thread failed: " +
                                     mpiError(code));
    std::atexit(finalize);
    if (provided < MPI_THREAD_SERIALIZED)
      return llvm::createStringError(
          "this MPI does not allow calls from several threads one at a time "
          "(MPI_THREAD_SERIALIZED)");
  }
  return duplicate(MPI_COMM_WORLD, allReduce);
}

llvm::Expected<std::unique_ptr<Communicator>>
fuse::mpiCommunicator(const void *mpiComm, MpiAllReduce allReduce) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized)
    return llvm::createStringError(
        "mpiCommunicator: MPI is not initialized (MPI_Init_thread)");
  return duplicate(*static_cast<const MPI_Comm *>(mpiComm), allReduce);
}
