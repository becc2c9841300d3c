//===- Batches.cpp - Shuffled batches stacked for K-step training ---------===//

#include "fuse/Data/Batches.h"

#include <algorithm>
#include <numeric>
#include <random>
#include <tuple>

using namespace fuse;
using namespace fuse::data;
using llvm::Error;
using llvm::Expected;

static uint64_t splitmix64(uint64_t x) {
  uint64_t z = x + 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/// A uniform draw from [0, bound): rejecting the 2^64 mod bound lowest
/// outputs leaves a multiple of `bound` values, so `r % bound` is unbiased.
static uint64_t drawBelow(std::mt19937_64 &rng, uint64_t bound) {
  uint64_t threshold = (0 - bound) % bound; // 2^64 mod bound
  for (;;) {
    uint64_t r = rng();
    if (r >= threshold)
      return r % bound;
  }
}

/// Fills `order` (already of size n) with epoch `epoch`'s permutation.
static void shuffleInto(std::vector<int64_t> &order, uint64_t seed,
                        int64_t epoch) {
  std::iota(order.begin(), order.end(), int64_t(0));
  std::mt19937_64 rng(splitmix64(splitmix64(seed) ^ uint64_t(epoch)));
  for (size_t i = order.size(); i-- > 1;)
    std::swap(order[i], order[drawBelow(rng, i + 1)]);
}

std::vector<int64_t> fuse::data::epochOrder(int64_t n, uint64_t seed,
                                            int64_t epoch) {
  std::vector<int64_t> order(std::max<int64_t>(n, 0));
  shuffleInto(order, seed, epoch);
  return order;
}

Expected<std::unique_ptr<ChunkLoader>>
ChunkLoader::create(const DataSource &source, ChunkOptions options,
                    int64_t firstStep, int64_t endStep) {
  if (source.size() <= 0)
    return llvm::createStringError("the data set has no examples");
  if (options.batchSize < 1)
    return llvm::createStringError("the batch size must be at least 1, got " +
                                   llvm::Twine(options.batchSize));
  if (options.stepsPerCall < 1)
    return llvm::createStringError(
        "the steps per call must be at least 1, got " +
        llvm::Twine(options.stepsPerCall));
  if (firstStep < 0)
    return llvm::createStringError("the first step " + llvm::Twine(firstStep) +
                                   " is negative");
  if (options.shards < 1 || options.shard < 0 ||
      options.shard >= options.shards)
    return llvm::createStringError("shard " + llvm::Twine(options.shard) +
                                   " of " + llvm::Twine(options.shards) +
                                   " does not exist");
  if (firstStep > endStep)
    return llvm::createStringError("the first step " + llvm::Twine(firstStep) +
                                   " is after the end step " +
                                   llvm::Twine(endStep));
  std::unique_ptr<ChunkLoader> loader(
      new ChunkLoader(source, options, firstStep, endStep));
  // Room for the largest chunk: min(K, S) full batches, or one partial batch
  // (of all N examples when B > N); at most about 2N rows.
  int64_t n = loader->numExamples_;
  int64_t rows =
      std::min(loader->options_.stepsPerCall, loader->stepsPerEpoch_) *
      std::min(loader->options_.batchSize, n);
  for (auto [spec, buffers, what] :
       {std::make_tuple(source.input(), loader->inputBuffers_, "inputs"),
        std::make_tuple(source.label(), loader->labelBuffers_, "labels")}) {
    llvm::SmallVector<int64_t, 6> shape = {rows};
    shape.append(spec.shape.begin(), spec.shape.end());
    for (int slot = 0; slot < 2; ++slot) {
      Expected<Tensor> buffer = Tensor::allocate(
          spec.dtype, shape, llvm::Twine("the chunk buffer of the ") + what);
      if (!buffer)
        return buffer.takeError();
      buffers[slot] = std::move(*buffer);
    }
  }
  loader->worker_ = std::thread(&ChunkLoader::run, loader.get());
  return loader;
}

ChunkLoader::ChunkLoader(const DataSource &source, const ChunkOptions &options,
                         int64_t firstStep, int64_t endStep)
    : source_(source), options_(options), firstStep_(firstStep),
      endStep_(endStep) {
  int64_t n = source_.size(), b = options_.batchSize;
  numExamples_ = n;
  fullBatches_ = n / b;
  stepsPerEpoch_ = fullBatches_ + (n % b != 0);
  end_.epoch = endStep_ / stepsPerEpoch_;
  end_.firstStep = endStep_;
  // The chunk buffers are allocated by create(), which can fail.
  order_.resize(n);
  if (!options_.shuffle)
    std::iota(order_.begin(), order_.end(), int64_t(0));
}

ChunkLoader::~ChunkLoader() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  workerWake_.notify_one();
  // Not started when create() failed to allocate the buffers.
  if (worker_.joinable())
    worker_.join();
}

Expected<const Chunk &> ChunkLoader::next() {
  std::unique_lock<std::mutex> lock(mutex_);
  // The chunk handed over last time is no longer in use.
  released_ = handedOver_;
  workerWake_.notify_one();
  chunkReady_.wait(lock, [&] { return assembled_ > handedOver_ || finished_; });
  if (assembled_ == handedOver_) {
    if (!error_.empty())
      return llvm::createStringError(error_);
    return end_;
  }
  return slots_[handedOver_++ % 2];
}

void ChunkLoader::run() {
  int64_t orderEpoch = -1;
  int64_t step = firstStep_;
  for (int64_t index = 0; step < endStep_; ++index) {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      workerWake_.wait(lock, [&] { return stop_ || index - released_ < 2; });
      if (stop_)
        return;
    }
    int64_t epoch = step / stepsPerEpoch_;
    int64_t position = step % stepsPerEpoch_;
    if (options_.shuffle && epoch != orderEpoch) {
      shuffleInto(order_, options_.seed, epoch);
      orderEpoch = epoch;
    }
    // Full batches group up to K; a partial one has a chunk of its own.
    int64_t steps = 1, batchSize = numExamples_ - position * options_.batchSize;
    if (position < fullBatches_) {
      steps = std::min(
          {options_.stepsPerCall, fullBatches_ - position, endStep_ - step});
      batchSize = options_.batchSize;
    }
    int slot = index % 2;
    int64_t globalBatchSize = batchSize;
    auto [begin, end] = shardRange(batchSize, options_.shard, options_.shards);
    batchSize = std::max<int64_t>(end - begin, 1);
    if (Error err = gather(slot, position, steps, globalBatchSize)) {
      std::lock_guard<std::mutex> lock(mutex_);
      error_ = llvm::toString(std::move(err));
      break;
    }
    Chunk &chunk = slots_[slot];
    chunk.epoch = epoch;
    chunk.firstStep = step;
    chunk.steps = steps;
    chunk.batchSize = batchSize;
    chunk.globalBatchSize = globalBatchSize;
    chunk.weight = double(end - begin) / double(globalBatchSize);
    chunk.shardOffset = end == begin ? 0 : begin;
    chunk.endsEpoch = position + steps == stepsPerEpoch_;
    step += steps;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      assembled_ = index + 1;
    }
    chunkReady_.notify_one();
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    finished_ = true;
  }
  chunkReady_.notify_one();
}

Error ChunkLoader::gather(int slot, int64_t position, int64_t steps,
                          int64_t globalBatchSize) {
  // The chunk's examples are consecutive in the epoch's order.
  const int64_t *examples = order_.data() + position * options_.batchSize;
  const Tensor &inputs = inputBuffers_[slot], &labels = labelBuffers_[slot];
  int64_t batchSize = globalBatchSize;
  if (options_.shards == 1) {
    if (Error err = source_.gather(llvm::ArrayRef(examples, steps * batchSize),
                                   inputs.data(), labels.data()))
      return err;
  } else {
    // This shard's rows of each batch, or the batch's first as a stand-in.
    auto [begin, end] =
        shardRange(globalBatchSize, options_.shard, options_.shards);
    batchSize = std::max<int64_t>(end - begin, 1);
    shardExamples_.clear();
    for (int64_t s = 0; s < steps; ++s) {
      const int64_t *batch = examples + s * globalBatchSize;
      if (end == begin)
        shardExamples_.push_back(batch[0]);
      else
        shardExamples_.append(batch + begin, batch + end);
    }
    if (Error err =
            source_.gather(shardExamples_, inputs.data(), labels.data()))
      return err;
  }
  auto stacked = [&](const Tensor &buffer) {
    llvm::SmallVector<int64_t, 6> shape = {steps, batchSize};
    shape.append(buffer.shape().begin() + 1, buffer.shape().end());
    return Tensor::view(buffer.data(), buffer.dtype(), shape);
  };
  slots_[slot].inputs = stacked(inputs);
  slots_[slot].labels = stacked(labels);
  return Error::success();
}
