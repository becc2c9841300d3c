//===- Batches.h - Shuffled batches stacked for K-step training -*- C++ -*-===//
//
// The input pipeline of training with K steps per call, the same for every
// data source: each epoch visits the examples in a seeded order that depends
// only on (N, seed, epoch), and a background thread gathers the next chunk
// of up to K batches from the source, stacked as [K, B, ...], while the
// current one trains. Step s always holds the same examples whatever step a
// run starts at, so a resumed run is bitwise-exact.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_DATA_BATCHES_H
#define FUSE_DATA_BATCHES_H

#include "fuse/Data/DataSource.h"

#include "llvm/Support/Error.h"

#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace fuse::data {

/// The order of the examples in epoch `epoch`: a permutation of [0, n) that
/// depends only on (n, seed, epoch), the same on every platform. Fisher-Yates
/// (i from n-1 down to 1 swaps i with a draw from [0, i]) over a
/// std::mt19937_64 seeded with splitmix64(splitmix64(seed) ^ epoch); a draw
/// from [0, b) takes the first output r >= 2^64 mod b and returns r mod b.
std::vector<int64_t> epochOrder(int64_t n, uint64_t seed, int64_t epoch);

struct ChunkOptions {
  int64_t batchSize = 32;
  /// K: batches per chunk at most.
  int64_t stepsPerCall = 1;
  uint64_t seed = 0;
  /// False: every epoch visits the examples in the source's order.
  bool shuffle = true;
  /// Data-parallel training: this rank's share (shard `shard` of `shards`)
  /// of every batch, shardRange() of it. The order and the steps are the
  /// global ones, whatever the number of shards.
  int64_t shard = 0, shards = 1;
};

/// Shard `shard` of `shards`'s examples [begin, end) of a batch of `b`:
/// equal shares when `shards` divides `b`, else ends rounded down.
inline std::pair<int64_t, int64_t> shardRange(int64_t b, int64_t shard,
                                              int64_t shards) {
  return {b * shard / shards, b * (shard + 1) / shards};
}

/// Up to K batches of the same size, stacked. Step firstStep + i of the run
/// is row i of the inputs and the labels.
struct Chunk {
  /// Counting from 0.
  int64_t epoch = 0;
  /// The global step number of its first batch.
  int64_t firstStep = 0;
  /// K of this chunk; 0 when there are no more chunks.
  int64_t steps = 0;
  /// B of every batch in the chunk: this shard's examples of each.
  int64_t batchSize = 0;
  /// The examples of each global batch (batchSize with one shard).
  int64_t globalBatchSize = 0;
  /// This shard's share of each global batch, batchSize / globalBatchSize;
  /// 0 when a partial batch has fewer examples than shards and this one
  /// got none (its batch is then one stand-in example, the batch's first,
  /// whose gradient weighs nothing).
  double weight = 1;
  /// The index in each global batch of this shard's first example.
  int64_t shardOffset = 0;
  /// [steps, batchSize, ...input], [steps, batchSize, ...label]: views of
  /// the loader's buffers.
  Tensor inputs, labels;
  /// Its last batch is the last of its epoch.
  bool endsEpoch = false;
};

/// Cuts the steps [firstStep, endStep) into chunks and assembles each on a
/// worker thread, one chunk ahead, into one of two preallocated buffers.
///
/// Global step s is batch p = s % S of epoch s / S (S = stepsPerEpoch()): the
/// examples order[p*B, min((p+1)*B, N)) of epochOrder(N, seed, epoch). A chunk
/// never crosses an epoch; full batches go up to K to a chunk, and the last,
/// partial batch of an epoch (when B does not divide N) is a chunk of its own.
class ChunkLoader {
public:
  /// A loader of the examples of `source`, which must outlive it. Chunks
  /// start at step `firstStep` (that of a resumed run) and stop before
  /// `endStep`.
  static llvm::Expected<std::unique_ptr<ChunkLoader>>
  create(const DataSource &source, ChunkOptions options, int64_t firstStep,
         int64_t endStep);
  /// Stops the worker, also while it holds a chunk nobody took.
  ~ChunkLoader();
  ChunkLoader(const ChunkLoader &) = delete;
  ChunkLoader &operator=(const ChunkLoader &) = delete;

  int64_t numExamples() const { return numExamples_; }
  /// ceil(N / B).
  int64_t stepsPerEpoch() const { return stepsPerEpoch_; }

  /// Waits for the next chunk, hands it over and lets the worker assemble
  /// the one after. The chunk and its views stay valid until the next call.
  /// After endStep, a chunk of 0 steps at endStep, at every call; the
  /// source's error if it failed to gather a chunk.
  llvm::Expected<const Chunk &> next();

private:
  ChunkLoader(const DataSource &source, const ChunkOptions &options,
              int64_t firstStep, int64_t endStep);
  /// The worker thread.
  void run();
  /// Gathers the `steps` batches of size `globalBatchSize` (this shard's
  /// share of each) from epoch position `position` on into slot `slot`.
  llvm::Error gather(int slot, int64_t position, int64_t steps,
                     int64_t globalBatchSize);

  const DataSource &source_;
  ChunkOptions options_;
  int64_t firstStep_, endStep_;
  int64_t numExamples_, stepsPerEpoch_, fullBatches_;

  // Owned by the worker.
  std::vector<int64_t> order_;
  /// This shard's examples of a chunk.
  llvm::SmallVector<int64_t, 0> shardExamples_;
  /// Per slot: inputs and labels of the largest chunk.
  Tensor inputBuffers_[2], labelBuffers_[2];

  /// Chunk i lives in slot i % 2; the worker fills it while the consumer has
  /// the other one.
  Chunk slots_[2];
  Chunk end_;

  std::mutex mutex_;
  /// Wakes the worker: a slot came free, or stop.
  std::condition_variable workerWake_;
  /// Wakes the consumer: a chunk is ready, or the worker finished.
  std::condition_variable chunkReady_;
  // Guarded by mutex_; chunks counted from the first.
  int64_t assembled_ = 0;
  int64_t handedOver_ = 0;
  /// Chunks the consumer is done with: all handed over but the one it has.
  int64_t released_ = 0;
  bool finished_ = false;
  /// Why the worker finished early: the source failed to gather.
  std::string error_;
  bool stop_ = false;

  std::thread worker_;
};

} // namespace fuse::data

#endif // FUSE_DATA_BATCHES_H
