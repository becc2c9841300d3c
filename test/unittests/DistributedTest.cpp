//===- DistributedTest.cpp - Data-parallel fit through a Communicator -----===//
//
// fuse::fit with FitOptions::communicator, on ranks that are threads of this
// process (a Communicator over a barrier, summing in rank order): N ranks
// against one process on the same global batches (the seed MLP, its
// dropout included, shares uneven and empty), run to run, and the errors.
// The same over MPI processes is test/fusec/train-mpi.test.
//
//===----------------------------------------------------------------------===//

#include "TestUtils.h"

#include "fuse/Communicator.h"
#include "fuse/Data/Safetensors.h"
#include "fuse/Data/TensorDataSource.h"
#include "fuse/Fit.h"

#include "llvm/Support/MemoryBuffer.h"

#include <gtest/gtest.h>

#include <condition_variable>
#include <cstring>
#include <mutex>
#include <thread>

using namespace fuse;
using namespace fuse::testing;

namespace {

/// The ranks of a group of threads.
class ThreadGroup {
public:
  explicit ThreadGroup(int size) : size_(size), slots_(size) {}
  int size() const { return size_; }

  /// Every rank's `data` summed in rank order, into each rank's.
  template <typename T> void allReduce(int rank, T *data, int64_t count) {
    slots_[rank] = data;
    barrier();
    std::vector<T> sum(count, T(0));
    for (int r = 0; r < size_; ++r)
      for (int64_t i = 0; i < count; ++i)
        sum[i] += static_cast<const T *>(slots_[r])[i];
    barrier();
    std::memcpy(data, sum.data(), count * sizeof(T));
  }
  void broadcast(int rank, void *data, size_t bytes, int root) {
    slots_[rank] = data;
    barrier();
    if (rank != root)
      std::memcpy(data, slots_[root], bytes);
    barrier();
  }

private:
  void barrier() {
    std::unique_lock<std::mutex> lock(mutex_);
    int64_t generation = generation_;
    if (++arrived_ == size_) {
      arrived_ = 0;
      ++generation_;
      wake_.notify_all();
      return;
    }
    wake_.wait(lock, [&] { return generation_ != generation; });
  }

  int size_;
  std::vector<void *> slots_;
  std::mutex mutex_;
  std::condition_variable wake_;
  int arrived_ = 0;
  int64_t generation_ = 0;
};

class ThreadCommunicator : public Communicator {
public:
  ThreadCommunicator(ThreadGroup &group, int rank)
      : group_(group), rank_(rank) {}
  int rank() const override { return rank_; }
  int size() const override { return group_.size(); }
  llvm::Error allReduceSum(float *data, int64_t count) override {
    group_.allReduce(rank_, data, count);
    return llvm::Error::success();
  }
  llvm::Error allReduceSum(double *data, int64_t count) override {
    group_.allReduce(rank_, data, count);
    return llvm::Error::success();
  }
  llvm::Error broadcast(void *data, size_t bytes, int root) override {
    group_.broadcast(rank_, data, bytes, root);
    return llvm::Error::success();
  }

protected:
  ThreadGroup &group_;
  int rank_;
};

/// A communicator whose all-reduces are nonblocking: the start only notes
/// the buffer, the wait sums it. Compiled code that touched a bucket
/// between the two (read it before the wait, wrote it after the start)
/// would train differently.
class DeferringCommunicator final : public ThreadCommunicator {
public:
  using ThreadCommunicator::ThreadCommunicator;
  llvm::Expected<int64_t> startAllReduceSum(float *data,
                                            int64_t count) override {
    pending_.emplace_back(data, count);
    ++started;
    return int64_t(pending_.size()) - 1;
  }
  llvm::Error wait(int64_t request) override {
    auto [data, count] = pending_.at(request);
    // The ranks wait in the same order: the compiled code is the same.
    group_.allReduce(rank_, data, count);
    return llvm::Error::success();
  }
  int64_t started = 0;

private:
  std::vector<std::pair<float *, int64_t>> pending_;
};

data::TensorDataSource imageSet(int64_t n) {
  Tensor labels = Tensor::empty(DType::I32, {n});
  for (int64_t i = 0; i < n; ++i)
    labels.data<int32_t>()[i] = int32_t((i * 7) % 10);
  return unwrap(data::TensorDataSource::create(
      Tensor::uniform({n, 28, 28}, 7, 0.0f, 1.0f), labels));
}

/// The seed MLP under SGD with momentum, for comparisons within rounding:
/// Adam moves an element whose gradient is near 0 by about lr times the
/// sign its rounding gave, so its differences are not rounding's.
std::string seedSgdModule() {
  std::string text = seedTrainingModule();
  auto replace = [&](llvm::StringRef from, llvm::StringRef to) {
    size_t at = text.find(from.str());
    EXPECT_NE(at, std::string::npos) << from.str();
    if (at != std::string::npos)
      text.replace(at, from.size(), to.str());
  };
  replace("optimizer = \"adam\"", "optimizer = \"sgd\"");
  replace("{eps = 1.0e-7 : f64}", "{momentum = 0.9 : f64}");
  return text;
}

/// The seed model (by default its MLP under Adam) for one process on one
/// thread: the reference runs.
std::unique_ptr<Engine>
oneProcessEngine(const std::string &module = seedTrainingModule()) {
  EngineOptions options;
  options.threads = 1;
  return makeEngine(module, options);
}

std::unique_ptr<Engine>
dataParallelEngine(bool overlap = true,
                   const std::string &module = seedTrainingModule()) {
  EngineOptions options;
  options.dataParallel = true;
  options.overlapCollectives = overlap;
  options.threads = 1;
  return makeEngine(module, options);
}

/// fit on `ranks` threads (one process when 0), each with the same
/// `options`; rank 0 checkpoints to `checkpoint`. Each rank's result.
std::vector<llvm::Expected<FitSummary>>
fitOnRanks(Engine &engine, const data::DataSource &train, int ranks,
           FitOptions options, const std::string &checkpoint,
           std::function<void(int, FitOptions &)> adjust = nullptr,
           std::function<const data::DataSource *(int)> test = nullptr) {
  std::vector<llvm::Expected<FitSummary>> results;
  if (ranks == 0) {
    options.checkpointPath = checkpoint;
    results.push_back(fit(engine, train, test ? test(0) : nullptr, options));
    return results;
  }
  ThreadGroup group(ranks);
  std::vector<std::unique_ptr<ThreadCommunicator>> comms;
  std::vector<std::optional<llvm::Expected<FitSummary>>> out(ranks);
  std::vector<std::thread> threads;
  for (int r = 0; r < ranks; ++r)
    comms.push_back(std::make_unique<ThreadCommunicator>(group, r));
  for (int r = 0; r < ranks; ++r)
    threads.emplace_back([&, r] {
      FitOptions mine = options;
      mine.communicator = comms[r].get();
      mine.checkpointPath = checkpoint;
      if (adjust)
        adjust(r, mine);
      out[r].emplace(fit(engine, train, test ? test(r) : nullptr, mine));
    });
  for (std::thread &t : threads)
    t.join();
  for (auto &result : out)
    results.push_back(std::move(*result));
  return results;
}

/// The largest difference between the tensors of two checkpoints.
double largestDifference(const std::string &a, const std::string &b) {
  data::Safetensors x = unwrap(data::readSafetensors(a));
  data::Safetensors y = unwrap(data::readSafetensors(b));
  EXPECT_EQ(x.tensors.size(), y.tensors.size());
  double worst = 0;
  for (const data::NamedTensor &t : x.tensors) {
    const Tensor *u = y.find(t.name);
    EXPECT_NE(u, nullptr) << t.name;
    if (!u || t.tensor.dtype() != DType::F32)
      continue;
    for (int64_t i = 0; i < t.tensor.numElements(); ++i)
      worst = std::max(worst, double(std::fabs(t.tensor.data<float>()[i] -
                                               u->data<float>()[i])));
  }
  return worst;
}

bool sameBytes(const std::string &a, const std::string &b) {
  auto x = llvm::MemoryBuffer::getFile(a), y = llvm::MemoryBuffer::getFile(b);
  return x && y && (*x)->getBuffer() == (*y)->getBuffer();
}

// The seed MLP, dropout included, under SGD with momentum, on 2 and 3 ranks
// against one process: every parameter and momentum within 1e-6 after 2
// epochs (the sums differ in order only: each rank's weighted mean, then
// the ranks'), the losses too. 61 examples in batches of 30: two full batches
// (shares of 15, and of 10) and a last one of 1, which rank 0 of 2 and ranks 0
// and 1 of 3 have no example of: their stand-in weighs nothing.
TEST(Distributed, RanksMatchOneProcess) {
  TempDir dir;
  auto single = oneProcessEngine(seedSgdModule());
  auto parallel = dataParallelEngine(/*overlap=*/true, seedSgdModule());
  FitOptions options;
  options.batchSize = 30;
  options.epochs = 2;
  options.stepsPerCall = 2;
  options.seed = 3;
  for (int64_t n : {61}) {
    data::TensorDataSource train = imageSet(n);
    std::string one = (dir.path + "/one.safetensors").str();
    auto reference = fitOnRanks(*single, train, 0, options, one);
    FitSummary expected = unwrap(std::move(reference[0]));
    EXPECT_EQ(expected.allReduceSecondsPerRank, std::vector<double>{0.0});
    EXPECT_EQ(expected.allReduceAlgorithm, "");
    for (int ranks : {2, 3}) {
      std::string many = (dir.path + "/many.safetensors").str();
      auto results = fitOnRanks(*parallel, train, ranks, options, many);
      for (auto [r, result] : llvm::enumerate(results)) {
        FitSummary summary = unwrap(std::move(result));
        EXPECT_EQ(summary.ranks, ranks);
        EXPECT_EQ(summary.totalSteps, expected.totalSteps);
        // Every rank's all-reduce time, its own at its index.
        ASSERT_EQ(summary.allReduceSecondsPerRank.size(), size_t(ranks));
        EXPECT_EQ(summary.allReduceSecondsPerRank[r], summary.allReduceSeconds);
        // The communicator's own name: this one reduces at each start.
        EXPECT_EQ(summary.allReduceAlgorithm, "blocking");
        ASSERT_EQ(summary.history.size(), expected.history.size());
        for (auto [e, f] : llvm::zip(summary.history, expected.history))
          EXPECT_NEAR(e.trainLoss, f.trainLoss, 1e-6)
              << n << " examples, rank " << r << " of " << ranks;
      }
      EXPECT_LT(largestDifference(one, many), 1e-6)
          << n << " examples on " << ranks << " ranks";
    }
  }
}

/// A data source whose gather fails from example `failFrom` on.
class FailingSource final : public data::DataSource {
public:
  FailingSource(const data::DataSource &inner, int64_t failFrom)
      : inner_(inner), failFrom_(failFrom) {}
  int64_t size() const override { return inner_.size(); }
  data::TensorSpec input() const override { return inner_.input(); }
  data::TensorSpec label() const override { return inner_.label(); }
  llvm::Error gather(llvm::ArrayRef<int64_t> indices, void *inputs,
                     void *labels) const override {
    for (int64_t i : indices)
      if (i >= failFrom_)
        return llvm::createStringError("cannot read example #" +
                                       llvm::Twine(i));
    return inner_.gather(indices, inputs, labels);
  }
  // Fit checks the labels before training: the inner source's answer.
  llvm::Expected<std::optional<BadLabel>>
  findLabelOutside(int64_t classes) const override {
    return inner_.findLabelOutside(classes);
  }

private:
  const data::DataSource &inner_;
  int64_t failFrom_;
};

// Every rank evaluates a contiguous share of the evaluation batches and
// the ranks sum their batches' figures: the test and validation losses and
// accuracies are the same bits as one process's, on every rank. The
// learning rate is 0, so that the ranks and the process evaluate the same
// parameters. Test sets of 301 examples (batches of 43: 7 over 2 and 3
// ranks, shares of 3 and 4, 2 and 3), 97 (batches of 20 and a last of 17)
// and 7 (one batch: the last rank evaluates it, the others nothing).
TEST(Distributed, ShardedEvaluationIsOneProcess) {
  TempDir dir;
  auto single = oneProcessEngine();
  auto parallel = dataParallelEngine();
  data::TensorDataSource train = imageSet(60);
  FitOptions options;
  options.batchSize = 30;
  options.epochs = 2;
  options.learningRate = 0;
  options.evalBatchSize = 50;
  options.validationSplit = 0.3; // 18 held out, evaluated in one batch
  options.seed = 4;
  std::string ckpt = (dir.path + "/c.safetensors").str();
  for (int64_t testSize : {301, 97, 7}) {
    Tensor labels = Tensor::empty(DType::I32, {testSize});
    for (int64_t i = 0; i < testSize; ++i)
      labels.data<int32_t>()[i] = int32_t((i * 3) % 10);
    data::TensorDataSource test = unwrap(data::TensorDataSource::create(
        Tensor::uniform({testSize, 28, 28}, 11, 0.0f, 1.0f), labels));
    auto testOf = [&](int) -> const data::DataSource * { return &test; };
    FitSummary expected = unwrap(std::move(
        fitOnRanks(*single, train, 0, options, ckpt, nullptr, testOf)[0]));
    ASSERT_EQ(expected.history.size(), 2u);
    for (int ranks : {2, 3}) {
      auto results =
          fitOnRanks(*parallel, train, ranks, options, ckpt, nullptr, testOf);
      for (auto [r, result] : llvm::enumerate(results)) {
        FitSummary summary = unwrap(std::move(result));
        ASSERT_EQ(summary.history.size(), expected.history.size());
        for (auto [e, f] : llvm::zip(summary.history, expected.history)) {
          std::string where = std::to_string(testSize) + " examples, rank " +
                              std::to_string(r) + " of " +
                              std::to_string(ranks);
          // Bitwise: EXPECT_EQ on the doubles.
          EXPECT_EQ(e.testLoss, f.testLoss) << where;
          EXPECT_EQ(e.testAccuracy, f.testAccuracy) << where;
          EXPECT_EQ(e.validationLoss, f.validationLoss) << where;
          EXPECT_EQ(e.validationAccuracy, f.validationAccuracy) << where;
          EXPECT_TRUE(e.testLoss && e.validationLoss) << where;
        }
      }
    }
  }

  // A rank whose share fails to evaluate returns its error; the others
  // are not left waiting: they say how many ranks failed.
  data::TensorDataSource test = imageSet(301);
  FailingSource failing(test, 200);
  auto results = fitOnRanks(*parallel, train, 2, options, ckpt, nullptr,
                            [&](int r) -> const data::DataSource * {
                              if (r == 1)
                                return &failing;
                              return &test;
                            });
  EXPECT_EQ(errorOf(std::move(results[0])),
            "1 rank(s) failed to evaluate their share of the 301 examples "
            "(their output says why)");
  EXPECT_EQ(errorOf(std::move(results[1])), "cannot read example #200");
}

// For a fixed number of ranks, a run is bitwise the same as the last.
TEST(Distributed, RunsRepeatBitwise) {
  TempDir dir;
  auto engine = dataParallelEngine();
  data::TensorDataSource train = imageSet(64);
  FitOptions options;
  options.batchSize = 16;
  options.stepsPerCall = 3;
  std::string a = (dir.path + "/a.safetensors").str();
  std::string b = (dir.path + "/b.safetensors").str();
  for (auto &result : fitOnRanks(*engine, train, 2, options, a))
    unwrap(std::move(result));
  for (auto &result : fitOnRanks(*engine, train, 2, options, b))
    unwrap(std::move(result));
  EXPECT_TRUE(sameBytes(a, b));
}

// Overlapping the buckets' reductions with the backward pass changes where
// they start and end, not what they sum: the same bits with and without,
// and with a communicator that reduces at the start (blocking) or at the
// wait (deferred). The seed MLP's gradients are two buckets (its first
// layer's weights alone in the second).
TEST(Distributed, OverlapIsBitwiseTheSame) {
  TempDir dir;
  data::TensorDataSource train = imageSet(64);
  FitOptions options;
  options.batchSize = 16;
  options.stepsPerCall = 3;
  std::string blocking = (dir.path + "/blocking.safetensors").str();
  auto plain = dataParallelEngine(/*overlap=*/false);
  for (auto &result : fitOnRanks(*plain, train, 2, options, blocking))
    unwrap(std::move(result));
  auto overlapped = dataParallelEngine(/*overlap=*/true);
  std::string a = (dir.path + "/a.safetensors").str();
  for (auto &result : fitOnRanks(*overlapped, train, 2, options, a))
    unwrap(std::move(result));
  EXPECT_TRUE(sameBytes(blocking, a));

  for (bool overlap : {false, true}) {
    auto engine = overlap ? std::move(overlapped) : std::move(plain);
    ThreadGroup group(2);
    DeferringCommunicator comms[2] = {{group, 0}, {group, 1}};
    std::string b = (dir.path + "/b.safetensors").str();
    std::vector<std::optional<llvm::Expected<FitSummary>>> out(2);
    std::vector<std::thread> threads;
    for (int r = 0; r < 2; ++r)
      threads.emplace_back([&, r] {
        FitOptions mine = options;
        mine.communicator = &comms[r];
        mine.checkpointPath = b;
        out[r].emplace(fit(*engine, train, nullptr, mine));
      });
    for (std::thread &t : threads)
      t.join();
    for (auto &result : out)
      unwrap(std::move(*result));
    // 4 steps of 2 buckets each.
    EXPECT_EQ(comms[0].started, 8) << "overlap " << overlap;
    EXPECT_TRUE(sameBytes(blocking, b)) << "overlap " << overlap;
  }
}

// A global batch the ranks cannot share equally, and a step function that
// does not sum its gradients, are errors before any collective; ranks that
// start from different parameters are stopped by the first, each naming
// what differs.
TEST(Distributed, Errors) {
  TempDir dir;
  data::TensorDataSource train = imageSet(32);
  std::string ckpt = (dir.path + "/c.safetensors").str();
  FitOptions options;
  options.batchSize = 15;
  auto engine = dataParallelEngine();
  for (auto &result : fitOnRanks(*engine, train, 2, options, ckpt))
    EXPECT_EQ(errorOf(std::move(result)),
              "the batch size (--batch-size 15) must be a multiple of the 2 "
              "ranks: each trains on an equal share of every global batch");

  options.batchSize = 16;
  auto plain = makeEngine(seedTrainingModule());
  for (auto &result : fitOnRanks(*plain, train, 2, options, ckpt))
    EXPECT_EQ(errorOf(std::move(result)),
              "'train_steps' does not sum its gradients across the 2 ranks: "
              "create the engine with EngineOptions::dataParallel");

  auto results =
      fitOnRanks(*engine, train, 2, options, ckpt,
                 [](int r, FitOptions &o) { o.seed = r == 1 ? 9 : 0; });
  EXPECT_EQ(errorOf(std::move(results[0])),
            "1 rank(s) start from other parameters or another step than rank "
            "0 (other --weights or --resume files?)");
  EXPECT_EQ(errorOf(std::move(results[1])),
            "rank 1 starts from other parameters or another step than rank 0 "
            "(other --weights or --resume files?)");
}

// Without a communicator (or with one rank), a data-parallel step function
// trains as one process: the sum over one rank is its own gradient.
TEST(Distributed, OneRankIsOneProcess) {
  TempDir dir;
  data::TensorDataSource train = imageSet(40);
  FitOptions options;
  options.batchSize = 16;
  std::string a = (dir.path + "/a.safetensors").str();
  std::string b = (dir.path + "/b.safetensors").str();
  auto single = makeEngine(seedTrainingModule());
  unwrap(std::move(fitOnRanks(*single, train, 0, options, a)[0]));
  auto parallel = dataParallelEngine();
  unwrap(std::move(fitOnRanks(*parallel, train, 1, options, b)[0]));
  EXPECT_TRUE(sameBytes(a, b));
}

} // namespace
