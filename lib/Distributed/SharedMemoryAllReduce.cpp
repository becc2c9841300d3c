//===- SharedMemoryAllReduce.cpp - All-reduce through a node's memory -----===//

#include "SharedMemoryAllReduce.h"
#include "MpiErrors.h"
#include "RingChunks.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/Sequence.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <sched.h>
#include <string>
#include <thread>

using namespace fuse;
using namespace fuse::detail;

namespace {

std::string callError(const char *call, int code) {
  return std::string(call) + ": " + detail::mpiError(code);
}

/// The two counters, then the two staging buffers, from the first 64-byte
/// boundary of a rank's part (MPI promises no alignment: OpenMPI's window
/// of one rank is malloc's, 16 bytes); a part's address keeps its offset
/// within a page in every process that maps it.
constexpr size_t kCountersBytes = 2 * 64;
constexpr size_t kSegmentBytes =
    64 + kCountersBytes +
    2 * SharedMemoryAllReduce::kPieceFloats * sizeof(float);

char *alignedTo64(char *p) {
  return p + (64 - reinterpret_cast<uintptr_t>(p) % 64) % 64;
}

/// How a rank waits for the others: spinning at first (a piece takes
/// microseconds), then yielding the core (more ranks than cores, as under
/// mpirun --oversubscribe), then sleeping (a rank far behind, writing a
/// checkpoint say). A rank that died never wakes it: the MPI launcher ends
/// the run, as it does a rank blocked in an MPI call.
class Backoff {
public:
  void operator()() {
    if (++spins_ < 1024) {
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#endif
      return;
    }
    if (spins_ == 1024)
      since_ = std::chrono::steady_clock::now();
    if (std::chrono::steady_clock::now() - since_ <
        std::chrono::milliseconds(2))
      sched_yield();
    else
      std::this_thread::sleep_for(std::chrono::microseconds(50));
  }

private:
  unsigned spins_ = 0;
  std::chrono::steady_clock::time_point since_;
};

} // namespace

llvm::Expected<std::unique_ptr<SharedMemoryAllReduce>>
SharedMemoryAllReduce::create(MPI_Comm comm) {
  int rank = 0, size = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  // Key 0 everywhere keeps `comm`'s order: node rank r is rank r.
  MPI_Comm node;
  if (int code = MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0,
                                     MPI_INFO_NULL, &node);
      code != MPI_SUCCESS)
    return llvm::createStringError(callError("MPI_Comm_split_type", code));
  MPI_Comm_set_errhandler(node, MPI_ERRORS_RETURN);
  // Either every rank shares this node (each sees all of them) or none
  // sees all: the ranks agree without a message.
  int nodeSize = 0;
  MPI_Comm_size(node, &nodeSize);
  if (nodeSize != size) {
    MPI_Comm_free(&node);
    return nullptr;
  }
  MPI_Info info;
  MPI_Info_create(&info);
  // Each rank's part may be placed near its owner.
  MPI_Info_set(info, "alloc_shared_noncontig", "true");
  char *base = nullptr;
  MPI_Win window;
  int code = MPI_Win_allocate_shared(MPI_Aint(kSegmentBytes), 1, info, node,
                                     &base, &window);
  MPI_Info_free(&info);
  if (code != MPI_SUCCESS) {
    MPI_Comm_free(&node);
    return llvm::createStringError(callError("MPI_Win_allocate_shared", code) +
                                   " (" + std::to_string(kSegmentBytes) +
                                   " bytes per rank)");
  }
  MPI_Win_set_errhandler(window, MPI_ERRORS_RETURN);
  auto release = [&](const char *call, int code) {
    MPI_Win_free(&window);
    MPI_Comm_free(&node);
    return llvm::createStringError(callError(call, code));
  };
  std::vector<char *> segments(size);
  for (int q = 0; q < size; ++q) {
    MPI_Aint bytes = 0;
    int unit = 0;
    if (int code = MPI_Win_shared_query(window, q, &bytes, &unit, &segments[q]);
        code != MPI_SUCCESS)
      return release("MPI_Win_shared_query", code);
    segments[q] = alignedTo64(segments[q]);
  }
  // Loads and stores from here on, ordered by the counters; one passive
  // epoch for MPI's memory model.
  if (int code = MPI_Win_lock_all(MPI_MODE_NOCHECK, window);
      code != MPI_SUCCESS)
    return release("MPI_Win_lock_all", code);
  std::memset(segments[rank], 0, kCountersBytes);
  MPI_Win_sync(window);
  if (int code = MPI_Barrier(node); code != MPI_SUCCESS) {
    MPI_Win_unlock_all(window);
    return release("MPI_Barrier", code);
  }
  MPI_Win_sync(window);
  return std::unique_ptr<SharedMemoryAllReduce>(
      new SharedMemoryAllReduce(node, window, rank, size, std::move(segments)));
}

SharedMemoryAllReduce::SharedMemoryAllReduce(MPI_Comm node, MPI_Win window,
                                             int rank, int size,
                                             std::vector<char *> segments)
    : node_(node), window_(window), rank_(rank), size_(size),
      segments_(std::move(segments)) {}

SharedMemoryAllReduce::~SharedMemoryAllReduce() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized)
    return;
  MPI_Win_unlock_all(window_);
  MPI_Win_free(&window_);
  MPI_Comm_free(&node_);
}

uint64_t *SharedMemoryAllReduce::ready(int rank) const {
  return reinterpret_cast<uint64_t *>(segments_[rank]);
}
uint64_t *SharedMemoryAllReduce::done(int rank) const {
  return reinterpret_cast<uint64_t *>(segments_[rank] + 64);
}
float *SharedMemoryAllReduce::staging(int rank, uint64_t piece) const {
  return reinterpret_cast<float *>(segments_[rank] + kCountersBytes) +
         (piece % 2) * kPieceFloats;
}

int64_t SharedMemoryAllReduce::start(float *data, int64_t count) {
  int64_t id = nextRequest_++;
  inFlight_.push_back({id, data, count});
  progress();
  return id;
}

bool SharedMemoryAllReduce::tryPublish() {
  auto it = llvm::find_if(
      inFlight_, [](const Collective &c) { return c.published < c.count; });
  if (it == inFlight_.end())
    return false;
  // Its staging buffer last held piece published_ - 2: every rank must be
  // done summing it (this one included).
  if (published_ >= 2 && llvm::any_of(llvm::seq(0, size_), [&](int q) {
        return load(done(q)) < published_ - 1;
      }))
    return false;
  int64_t n = std::min(kPieceFloats, it->count - it->published);
  std::memcpy(staging(rank_, published_), it->data + it->published,
              size_t(n) * sizeof(float));
  it->published += n;
  ++published_;
  store(ready(rank_), published_);
  return true;
}

bool SharedMemoryAllReduce::trySum() {
  if (summed_ == published_)
    return false;
  if (llvm::any_of(llvm::seq(0, size_),
                   [&](int q) { return load(ready(q)) <= summed_; }))
    return false;
  // The piece is the first not yet summed, of the first all-reduce with one.
  auto it = llvm::find_if(
      inFlight_, [](const Collective &c) { return c.reduced < c.count; });
  int64_t begin = it->reduced,
          end = begin + std::min(kPieceFloats, it->count - begin);
  for (int c = 0; c < size_; ++c) {
    int64_t from = std::max(begin, ringChunkBegin(it->count, c, size_));
    int64_t to = std::min(end, ringChunkBegin(it->count, c + 1, size_));
    if (from >= to)
      continue;
    float *out = it->data + from;
    int64_t n = to - from, offset = from - begin;
    // The ring's order: from the chunk's rank on.
    const float *first = staging(c, summed_) + offset;
    if (size_ == 1) {
      std::memcpy(out, first, size_t(n) * sizeof(float));
      continue;
    }
    const float *second = staging((c + 1) % size_, summed_) + offset;
    for (int64_t i = 0; i < n; ++i)
      out[i] = first[i] + second[i];
    for (int j = 2; j < size_; ++j) {
      const float *next = staging((c + j) % size_, summed_) + offset;
      for (int64_t i = 0; i < n; ++i)
        out[i] = out[i] + next[i];
    }
  }
  it->reduced = end;
  ++summed_;
  store(done(rank_), summed_);
  return true;
}

bool SharedMemoryAllReduce::ended(int64_t request) const {
  // Pieces are summed in start order: an all-reduce has ended once its
  // last piece has.
  return llvm::none_of(inFlight_, [&](const Collective &c) {
    return c.id == request && c.reduced < c.count;
  });
}

void SharedMemoryAllReduce::advance(bool block, int64_t request) {
  Backoff backoff;
  while (true) {
    bool moved = tryPublish();
    moved |= trySum();
    if (request >= 0 && ended(request))
      return;
    if (moved) {
      backoff = Backoff();
      continue;
    }
    if (!block)
      return;
    backoff();
  }
}

llvm::Error SharedMemoryAllReduce::wait(int64_t request) {
  auto it = llvm::find_if(inFlight_,
                          [&](const Collective &c) { return c.id == request; });
  if (it == inFlight_.end())
    return llvm::createStringError("no all-reduce in flight with request " +
                                   std::to_string(request));
  // advance() moves pieces, never the queue: `it` stays valid.
  advance(/*block=*/true, request);
  inFlight_.erase(it);
  return llvm::Error::success();
}
