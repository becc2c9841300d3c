//===- BatchesTest.cpp - Shuffled batches stacked for K-step training -----===//
//
// Epoch orders are seeded permutations, pinned; chunks never cross an epoch,
// keep each example's rows together and visit every example once per epoch
// in the epoch's order; a run resumed at any step sees the same examples at
// each step as a run from step 0. The loader is the same for every data
// source, and a source's failure to gather is the loader's error.
//
//===----------------------------------------------------------------------===//

#include "TestUtils.h"

#include "fuse/Data/Batches.h"
#include "fuse/Data/TensorDataSource.h"

#include <algorithm>
#include <limits>
#include <map>
#include <numeric>
#include <random>
#include <tuple>

using namespace fuse;
using namespace fuse::data;
using namespace fuse::testing;

namespace {

/// The documented algorithm, written out again.
std::vector<int64_t> referenceOrder(int64_t n, uint64_t seed, int64_t epoch) {
  auto splitmix64 = [](uint64_t z) {
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  };
  std::mt19937_64 rng(splitmix64(splitmix64(seed) ^ uint64_t(epoch)));
  std::vector<int64_t> order(n);
  std::iota(order.begin(), order.end(), int64_t(0));
  for (int64_t i = n - 1; i > 0; --i) {
    uint64_t bound = i + 1;
    uint64_t twoTo64ModBound =
        (std::numeric_limits<uint64_t>::max() % bound + 1) % bound;
    uint64_t r = rng();
    while (r < twoTo64ModBound)
      r = rng();
    std::swap(order[i], order[r % bound]);
  }
  return order;
}

bool isPermutation(std::vector<int64_t> order) {
  std::sort(order.begin(), order.end());
  for (size_t i = 0; i < order.size(); ++i)
    if (order[i] != int64_t(i))
      return false;
  return true;
}

TEST(EpochOrder, IsASeededPermutation) {
  for (int64_t n : {1, 2, 10, 1000}) {
    EXPECT_TRUE(isPermutation(epochOrder(n, 3, 0)));
    EXPECT_EQ(epochOrder(n, 3, 5), epochOrder(n, 3, 5));
    for (uint64_t seed : {0, 1, 42})
      for (int64_t epoch : {0, 1, 7})
        EXPECT_EQ(epochOrder(n, seed, epoch), referenceOrder(n, seed, epoch));
  }
  EXPECT_NE(epochOrder(1000, 3, 0), epochOrder(1000, 3, 1));
  EXPECT_NE(epochOrder(1000, 3, 0), epochOrder(1000, 4, 0));
  EXPECT_TRUE(epochOrder(0, 3, 0).empty());
  // From a separate implementation of mt19937_64 (in Python, checked against
  // the standard's 10000th output for the default seed).
  EXPECT_EQ(epochOrder(10, 1, 0),
            std::vector<int64_t>({5, 0, 8, 7, 3, 1, 9, 6, 4, 2}));
  EXPECT_EQ(epochOrder(10, 1, 1),
            std::vector<int64_t>({4, 3, 6, 5, 8, 7, 2, 0, 1, 9}));
}

constexpr uint64_t kSeed = 7;

ChunkOptions chunkOptions(int64_t batchSize, int64_t stepsPerCall,
                          bool shuffle = true) {
  ChunkOptions options;
  options.batchSize = batchSize;
  options.stepsPerCall = stepsPerCall;
  options.seed = kSeed;
  options.shuffle = shuffle;
  return options;
}

/// `n` examples whose rows say which they are: images f32 [n, 2, 2], row i
/// holding 4i .. 4i+3, and labels i32 [n], label i being i.
TensorDataSource numberedSource(int64_t n) {
  Tensor images = Tensor::empty(DType::F32, {n, 2, 2});
  Tensor labels = Tensor::empty(DType::I32, {n});
  for (int64_t i = 0; i < n; ++i) {
    labels.data<int32_t>()[i] = int32_t(i);
    for (int64_t k = 0; k < 4; ++k)
      images.data<float>()[4 * i + k] = float(4 * i + k);
  }
  return unwrap(TensorDataSource::create(images, labels));
}

/// A loader over numberedSource(n), which it keeps alive (at one address).
struct NumberedLoader {
  std::unique_ptr<TensorDataSource> source;
  std::unique_ptr<ChunkLoader> loader;
  ChunkLoader *operator->() { return loader.get(); }
  ChunkLoader &operator*() { return *loader; }
  void reset() { loader.reset(); }
};

NumberedLoader makeLoader(int64_t n, ChunkOptions options, int64_t firstStep,
                          int64_t endStep) {
  NumberedLoader made{std::make_unique<TensorDataSource>(numberedSource(n)),
                      nullptr};
  made.loader =
      unwrap(ChunkLoader::create(*made.source, options, firstStep, endStep));
  return made;
}

/// The next chunk, which must not be an error.
const Chunk &nextChunk(ChunkLoader &loader) { return unwrap(loader.next()); }

/// The examples of each step of the loader's chunks, checking that each
/// image row travels with its label.
std::map<int64_t, std::vector<int64_t>> examplesPerStep(ChunkLoader &loader) {
  std::map<int64_t, std::vector<int64_t>> examples;
  for (;;) {
    const Chunk &chunk = nextChunk(loader);
    if (chunk.steps == 0)
      return examples;
    int64_t steps = chunk.steps, batchSize = chunk.batchSize;
    const Tensor &images = chunk.inputs, &labels = chunk.labels;
    EXPECT_EQ(images.shape(),
              llvm::ArrayRef<int64_t>({steps, batchSize, 2, 2}));
    EXPECT_EQ(labels.shape(), llvm::ArrayRef<int64_t>({steps, batchSize}));
    for (int64_t row = 0; row < steps * batchSize; ++row) {
      int32_t label = labels.data<int32_t>()[row];
      for (int64_t k = 0; k < 4; ++k)
        EXPECT_EQ(images.data<float>()[4 * row + k], float(4 * label + k));
      examples[chunk.firstStep + row / batchSize].push_back(label);
    }
  }
}

struct ChunkShape {
  int64_t epoch, firstStep, steps, batchSize;
  bool endsEpoch;
  bool operator==(const ChunkShape &other) const {
    return std::tie(epoch, firstStep, steps, batchSize, endsEpoch) ==
           std::tie(other.epoch, other.firstStep, other.steps, other.batchSize,
                    other.endsEpoch);
  }
};

void PrintTo(const ChunkShape &c, std::ostream *os) {
  *os << "{epoch " << c.epoch << ", step " << c.firstStep << ", " << c.steps
      << "x" << c.batchSize << (c.endsEpoch ? ", ends epoch}" : "}");
}

TEST(ChunkLoader, ChunksNeverCrossAnEpoch) {
  NumberedLoader loader =
      makeLoader(10, chunkOptions(/*batchSize=*/3, /*stepsPerCall=*/2), 0, 8);
  EXPECT_EQ(loader->stepsPerEpoch(), 4);
  std::vector<ChunkShape> chunks;
  for (const Chunk *chunk = &nextChunk(*loader); chunk->steps;
       chunk = &nextChunk(*loader))
    chunks.push_back({chunk->epoch, chunk->firstStep, chunk->steps,
                      chunk->batchSize, chunk->endsEpoch});
  EXPECT_EQ(chunks, std::vector<ChunkShape>({{0, 0, 2, 3, false},
                                             {0, 2, 1, 3, false},
                                             {0, 3, 1, 1, true},
                                             {1, 4, 2, 3, false},
                                             {1, 6, 1, 3, false},
                                             {1, 7, 1, 1, true}}));
  // Past the end, at every call.
  for (int i = 0; i < 3; ++i) {
    const Chunk &end = nextChunk(*loader);
    EXPECT_EQ(end.steps, 0);
    EXPECT_EQ(end.firstStep, 8);
    EXPECT_EQ(end.epoch, 2);
  }
}

TEST(ChunkLoader, EveryEpochVisitsItsOrder) {
  // B | N or not, B > N, K above the full batches of an epoch.
  for (auto [batchSize, stepsPerCall] :
       std::vector<std::pair<int64_t, int64_t>>{
           {3, 2}, {3, 1}, {3, 5}, {5, 2}, {16, 2}}) {
    SCOPED_TRACE(::testing::Message()
                 << "B = " << batchSize << ", K = " << stepsPerCall);
    int64_t stepsPerEpoch = (10 + batchSize - 1) / batchSize;
    NumberedLoader loader = makeLoader(
        10, chunkOptions(batchSize, stepsPerCall), 0, 3 * stepsPerEpoch);
    std::map<int64_t, std::vector<int64_t>> examples = examplesPerStep(*loader);
    ASSERT_EQ(int64_t(examples.size()), 3 * stepsPerEpoch);
    for (int64_t epoch = 0; epoch < 3; ++epoch) {
      std::vector<int64_t> seen;
      for (int64_t p = 0; p < stepsPerEpoch; ++p) {
        const std::vector<int64_t> &batch = examples[epoch * stepsPerEpoch + p];
        EXPECT_EQ(int64_t(batch.size()),
                  std::min<int64_t>(batchSize, 10 - p * batchSize));
        seen.insert(seen.end(), batch.begin(), batch.end());
      }
      EXPECT_EQ(seen, epochOrder(10, kSeed, epoch));
    }
  }
}

TEST(ChunkLoader, WithoutShuffleInFileOrder) {
  NumberedLoader loader = makeLoader(
      10, chunkOptions(/*batchSize=*/4, /*stepsPerCall=*/3, false), 0, 6);
  std::map<int64_t, std::vector<int64_t>> examples = examplesPerStep(*loader);
  std::vector<int64_t> fileOrder(10);
  std::iota(fileOrder.begin(), fileOrder.end(), int64_t(0));
  for (int64_t epoch = 0; epoch < 2; ++epoch) {
    std::vector<int64_t> seen;
    for (int64_t step = 3 * epoch; step < 3 * epoch + 3; ++step)
      seen.insert(seen.end(), examples[step].begin(), examples[step].end());
    EXPECT_EQ(seen, fileOrder);
  }
}

TEST(ChunkLoader, ResumedRunSeesTheSameSteps) {
  ChunkOptions options = chunkOptions(/*batchSize=*/3, /*stepsPerCall=*/2);
  std::map<int64_t, std::vector<int64_t>> fromStart =
      examplesPerStep(*makeLoader(10, options, 0, 12));
  // Mid-epoch, at an epoch boundary, at a partial batch.
  for (int64_t firstStep : {5, 4, 7}) {
    SCOPED_TRACE(::testing::Message() << "from step " << firstStep);
    std::map<int64_t, std::vector<int64_t>> tail = fromStart;
    tail.erase(tail.begin(), tail.lower_bound(firstStep));
    EXPECT_EQ(examplesPerStep(*makeLoader(10, options, firstStep, 12)), tail);
  }
}

TEST(ChunkLoader, StopsBeforeTheEndStep) {
  ChunkOptions options = chunkOptions(/*batchSize=*/3, /*stepsPerCall=*/2);
  NumberedLoader loader = makeLoader(10, options, 0, 1);
  const Chunk &first = nextChunk(*loader);
  EXPECT_EQ(first.steps, 1);
  EXPECT_FALSE(first.endsEpoch);
  EXPECT_EQ(nextChunk(*loader).steps, 0);
  EXPECT_EQ(nextChunk(*loader).steps, 0);

  NumberedLoader empty = makeLoader(10, options, 6, 6);
  EXPECT_EQ(nextChunk(*empty).steps, 0);
  EXPECT_EQ(nextChunk(*empty).firstStep, 6);
}

TEST(ChunkLoader, DestroyedEarly) {
  ChunkOptions options = chunkOptions(/*batchSize=*/3, /*stepsPerCall=*/2);
  // Before and after taking a chunk, the worker holding or assembling the
  // next ones.
  makeLoader(10, options, 0, 1000).reset();
  NumberedLoader loader = makeLoader(10, options, 0, 1000);
  EXPECT_EQ(nextChunk(*loader).steps, 2);
  loader.reset();
}

TEST(ChunkLoader, BadArgumentsAreErrors) {
  TensorDataSource source = numberedSource(4);
  auto errorFor = [](const DataSource &source, ChunkOptions options,
                     int64_t firstStep = 0, int64_t endStep = 1) {
    return errorOf(ChunkLoader::create(source, options, firstStep, endStep));
  };
  ChunkOptions options = chunkOptions(2, 2);
  EXPECT_EQ(errorFor(numberedSource(0), options),
            "the data set has no examples");
  EXPECT_EQ(errorFor(source, chunkOptions(0, 2)),
            "the batch size must be at least 1, got 0");
  EXPECT_EQ(errorFor(source, chunkOptions(2, 0)),
            "the steps per call must be at least 1, got 0");
  EXPECT_EQ(errorFor(source, options, -1, 2), "the first step -1 is negative");
  EXPECT_EQ(errorFor(source, options, 3, 2),
            "the first step 3 is after the end step 2");
}

/// numberedSource(n)'s examples, but gathering example `failAt` fails.
class FailingSource : public DataSource {
public:
  FailingSource(int64_t n, int64_t failAt)
      : inner_(numberedSource(n)), failAt_(failAt) {}
  int64_t size() const override { return inner_.size(); }
  TensorSpec input() const override { return inner_.input(); }
  TensorSpec label() const override { return inner_.label(); }
  llvm::Error gather(llvm::ArrayRef<int64_t> indices, void *inputs,
                     void *labels) const override {
    if (llvm::is_contained(indices, failAt_))
      return llvm::createStringError("example " + llvm::Twine(failAt_) +
                                     " is unreadable");
    return inner_.gather(indices, inputs, labels);
  }

private:
  TensorDataSource inner_;
  int64_t failAt_;
};

// The chunks before the failing one arrive; then the source's error, at
// every call.
TEST(ChunkLoader, SourceErrorsReachTheConsumer) {
  // In file order, batches of 2: example 5 is in step 2's chunk (K = 1).
  FailingSource source(10, 5);
  std::unique_ptr<ChunkLoader> loader = unwrap(ChunkLoader::create(
      source, chunkOptions(/*batchSize=*/2, /*stepsPerCall=*/1, false), 0, 10));
  EXPECT_EQ(nextChunk(*loader).firstStep, 0);
  EXPECT_EQ(nextChunk(*loader).firstStep, 1);
  EXPECT_EQ(errorOf(loader->next()), "example 5 is unreadable");
  EXPECT_EQ(errorOf(loader->next()), "example 5 is unreadable");
}

// Inputs and labels of any rank and dtype travel together: i64 labels of
// 3 per example with f64 inputs of 2x1x3.
TEST(ChunkLoader, AnyRankAndDtype) {
  int64_t n = 7;
  Tensor inputs = Tensor::empty(DType::F64, {n, 2, 1, 3});
  Tensor labels = Tensor::empty(DType::I64, {n, 3});
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t k = 0; k < 6; ++k)
      inputs.data<double>()[6 * i + k] = double(100 * i + k);
    for (int64_t k = 0; k < 3; ++k)
      labels.data<int64_t>()[3 * i + k] = 10 * i + k;
  }
  TensorDataSource source = unwrap(TensorDataSource::create(inputs, labels));
  std::unique_ptr<ChunkLoader> loader = unwrap(ChunkLoader::create(
      source, chunkOptions(/*batchSize=*/2, /*stepsPerCall=*/2), 0, 4));
  std::vector<int64_t> seen;
  for (const Chunk *chunk = &nextChunk(*loader); chunk->steps;
       chunk = &nextChunk(*loader)) {
    int64_t rows = chunk->steps * chunk->batchSize;
    EXPECT_EQ(
        chunk->inputs.shape(),
        llvm::ArrayRef<int64_t>({chunk->steps, chunk->batchSize, 2, 1, 3}));
    EXPECT_EQ(chunk->labels.shape(),
              llvm::ArrayRef<int64_t>({chunk->steps, chunk->batchSize, 3}));
    for (int64_t row = 0; row < rows; ++row) {
      int64_t i = chunk->labels.data<int64_t>()[3 * row] / 10;
      for (int64_t k = 0; k < 3; ++k)
        EXPECT_EQ(chunk->labels.data<int64_t>()[3 * row + k], 10 * i + k);
      for (int64_t k = 0; k < 6; ++k)
        EXPECT_EQ(chunk->inputs.data<double>()[6 * row + k],
                  double(100 * i + k));
      seen.push_back(i);
    }
  }
  EXPECT_EQ(seen, epochOrder(n, kSeed, 0));
}

} // namespace
