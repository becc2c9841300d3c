//===- MpiCommunicatorTest.cpp - The all-reduces over MPI, on N ranks -----===//
//
// Run by ctest under `mpirun -np N` (test/unittests/CMakeLists.txt): every
// nonblocking all-reduce of fuse/Mpi.h against a sum in the ring's order
// computed here from every rank's data, bit for bit, for counts around the
// shared-memory all-reduce's pieces, several in flight at once, moved on by
// progress calls and waited for in any order.
//
//===----------------------------------------------------------------------===//

#include "fuse/Mpi.h"

#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

using namespace fuse;

namespace {

constexpr int64_t kPiece = 64 * 1024; // SharedMemoryAllReduce::kPieceFloats

int worldRank() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}
int worldSize() {
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}

/// This rank's values for the all-reduce `which`: of every magnitude, so
/// that the order of the sums shows in their bits.
std::vector<float> valuesOf(int rank, int which, int64_t count) {
  std::mt19937 random(unsigned(1000 * which + rank));
  std::uniform_real_distribution<float> mantissa(-1.0f, 1.0f);
  std::uniform_int_distribution<int> exponent(-20, 20);
  std::vector<float> values(count);
  for (float &v : values)
    v = std::ldexp(mantissa(random), exponent(random));
  return values;
}

/// The sum over the ranks of valuesOf(r, which, count), each element of the
/// ring's chunk c summed from rank c on: ((x_c + x_c+1) + ...) + x_c-1.
std::vector<float> ringOrderSum(int which, int64_t count) {
  int size = worldSize();
  std::vector<std::vector<float>> all;
  for (int r = 0; r < size; ++r)
    all.push_back(valuesOf(r, which, count));
  std::vector<float> sum(count);
  for (int c = 0; c < size; ++c)
    for (int64_t i = count * c / size; i < count * (c + 1) / size; ++i) {
      float s = all[c][i];
      for (int j = 1; j < size; ++j)
        s = s + all[(c + j) % size][i];
      sum[i] = s;
    }
  return sum;
}

/// Whether `a` and `b` hold the same bits (-0 is not +0).
bool sameBits(const std::vector<float> &a, const std::vector<float> &b) {
  return a.size() == b.size() &&
         (a.empty() ||
          std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
}

/// Rank-dependent delays, so that the ranks reach each step at different
/// times: some publish pieces long before the others can sum them.
void skew(int step) {
  int rank = worldRank();
  if ((rank + step) % 3 == 0)
    std::this_thread::sleep_for(std::chrono::microseconds(200 * (rank + 1)));
}

std::unique_ptr<Communicator> communicator(MpiAllReduce allReduce) {
  MPI_Comm world = MPI_COMM_WORLD;
  auto comm = mpiCommunicator(&world, allReduce);
  if (!comm) {
    ADD_FAILURE() << llvm::toString(comm.takeError());
    return nullptr;
  }
  return std::move(*comm);
}

const std::vector<int64_t> kCounts = {
    0, 1, 7, kPiece - 1, kPiece, kPiece + 1, 3 * kPiece + 5, 1000003};

class AllReduces : public testing::TestWithParam<MpiAllReduce> {};

TEST_P(AllReduces, SumInTheRingsOrderWithSeveralInFlight) {
  std::unique_ptr<Communicator> comm = communicator(GetParam());
  ASSERT_TRUE(comm);
  ASSERT_EQ(comm->size(), worldSize());
  std::vector<std::vector<float>> data;
  for (size_t k = 0; k < kCounts.size(); ++k)
    data.push_back(valuesOf(worldRank(), int(k), kCounts[k]));
  // All started, moved on at different times on each rank, then waited
  // for in an order of each rank's own.
  std::vector<int64_t> requests;
  for (size_t k = 0; k < kCounts.size(); ++k) {
    skew(int(k));
    llvm::Expected<int64_t> request =
        comm->startAllReduceSum(data[k].data(), kCounts[k]);
    ASSERT_TRUE(bool(request)) << llvm::toString(request.takeError());
    requests.push_back(*request);
    comm->progress();
  }
  std::vector<size_t> order(kCounts.size());
  for (size_t k = 0; k < order.size(); ++k)
    order[k] = k;
  std::shuffle(order.begin(), order.end(), std::mt19937(unsigned(worldRank())));
  for (size_t k : order) {
    skew(int(k) + 1);
    EXPECT_FALSE(bool(comm->wait(requests[k]))) << "count " << kCounts[k];
  }
  for (size_t k = 0; k < kCounts.size(); ++k)
    EXPECT_TRUE(sameBits(ringOrderSum(int(k), kCounts[k]), data[k]))
        << "count " << kCounts[k];
}

TEST_P(AllReduces, OneAtATimeManySteps) {
  std::unique_ptr<Communicator> comm = communicator(GetParam());
  ASSERT_TRUE(comm);
  // A training run's pattern: the same buckets step after step.
  for (int step = 0; step < 20; ++step) {
    int64_t count = kPiece + 3 * step;
    std::vector<float> data = valuesOf(worldRank(), step, count);
    skew(step);
    llvm::Expected<int64_t> request =
        comm->startAllReduceSum(data.data(), count);
    ASSERT_TRUE(bool(request)) << llvm::toString(request.takeError());
    comm->progress();
    EXPECT_FALSE(bool(comm->wait(*request)));
    EXPECT_TRUE(sameBits(ringOrderSum(step, count), data)) << "step " << step;
  }
}

TEST_P(AllReduces, NegativeCountIsAnError) {
  std::unique_ptr<Communicator> comm = communicator(GetParam());
  ASSERT_TRUE(comm);
  float x = 1;
  llvm::Expected<int64_t> request = comm->startAllReduceSum(&x, -1);
  ASSERT_FALSE(bool(request));
  EXPECT_NE(llvm::toString(request.takeError()).find("negative count"),
            std::string::npos);
}

TEST_P(AllReduces, WaitForAnUnknownRequestIsAnError) {
  std::unique_ptr<Communicator> comm = communicator(GetParam());
  ASSERT_TRUE(comm);
  std::vector<float> data = valuesOf(worldRank(), 0, 5);
  llvm::Expected<int64_t> request = comm->startAllReduceSum(data.data(), 5);
  ASSERT_TRUE(bool(request)) << llvm::toString(request.takeError());
  EXPECT_FALSE(bool(comm->wait(*request)));
  llvm::Error again = comm->wait(*request);
  ASSERT_TRUE(bool(again));
  EXPECT_NE(llvm::toString(std::move(again)).find("no all-reduce in flight"),
            std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(Mpi, AllReduces,
                         testing::Values(MpiAllReduce::Auto,
                                         MpiAllReduce::SharedMemory,
                                         MpiAllReduce::Ring),
                         [](const auto &info) {
                           switch (info.param) {
                           case MpiAllReduce::Auto:
                             return "Auto";
                           case MpiAllReduce::SharedMemory:
                             return "SharedMemory";
                           case MpiAllReduce::Ring:
                             return "Ring";
                           case MpiAllReduce::Library:
                             return "Library";
                           }
                           return "Unknown";
                         });

} // namespace

/// A failure on any rank is printed with its rank; a fatal one (an ASSERT,
/// which leaves the test on this rank alone) ends every rank: the others
/// would wait in its next collective for ever.
class RankFailures : public testing::EmptyTestEventListener {
  void OnTestPartResult(const testing::TestPartResult &result) override {
    if (!result.failed())
      return;
    std::fprintf(stderr, "rank %d: %s:%d: %s\n", worldRank(),
                 result.file_name() ? result.file_name() : "?",
                 result.line_number(), result.summary());
    if (result.fatally_failed())
      MPI_Abort(MPI_COMM_WORLD, 1);
  }
};

// Every rank runs every test (the collectives need them all); rank 0
// prints the progress, every rank its failures, and the run fails if any
// rank's test failed.
int main(int argc, char **argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
  testing::InitGoogleTest(&argc, argv);
  testing::TestEventListeners &listeners =
      testing::UnitTest::GetInstance()->listeners();
  if (worldRank() != 0)
    delete listeners.Release(listeners.default_result_printer());
  listeners.Append(new RankFailures);
  int failed = RUN_ALL_TESTS() != 0, anyFailed = 0;
  MPI_Allreduce(&failed, &anyFailed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return anyFailed;
}
