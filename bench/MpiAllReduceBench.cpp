//===- MpiAllReduceBench.cpp - The gradient all-reduce over MPI, timed ----===//
//
// `mpirun -np N fuse-mpi-bench [FLOATS [STEPS]]`: the all-reduce of one
// data-parallel step's gradients (default 822,570 floats, 3.3 MB) through
// fuse::Communicator over MPI (fuse/Mpi.h), each way it can run:
//
// - shared memory: through a shared-memory window
//   (MpiAllReduce::SharedMemory, when every rank is on this machine),
//   started and waited for;
// - ring:    Fuse's ring (MpiAllReduce::Ring), started and waited for;
// - library: MPI_Iallreduce (MpiAllReduce::Library), started and waited;
// - blocking: MPI_Allreduce (Communicator::allReduceSum);
// - shared memory/ring/library with compute: started, then about 4 ms of
//   work (sums over a 4 MB array, as a backward pass reads its
//   activations) with a progress() call every fifth of it, then waited
//   for: the time in the progress calls and the wait is what the step
//   would see exposed.
//
// Prints rank 0's milliseconds per step, the best of 5 repetitions of
// STEPS (default 50) steps, each repetition after a barrier.
//
//===----------------------------------------------------------------------===//

#include "fuse/Mpi.h"

#include <mpi.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

using namespace fuse;

namespace {

double now() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

/// Work standing in for a backward pass's between two progress calls.
float work(const std::vector<float> &activations) {
  float sum = 0;
  for (float x : activations)
    sum += x;
  return sum;
}

} // namespace

int main(int argc, char **argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
  int64_t floats = argc > 1 ? std::atoll(argv[1]) : 822570;
  int steps = argc > 2 ? std::atoi(argv[2]) : 50;
  MPI_Comm world = MPI_COMM_WORLD;
  auto shared = mpiCommunicator(&world, MpiAllReduce::Auto);
  auto ring = mpiCommunicator(&world, MpiAllReduce::Ring);
  auto library = mpiCommunicator(&world, MpiAllReduce::Library);
  for (auto *comm : {&shared, &ring, &library})
    if (!*comm) {
      llvm::errs() << "fuse-mpi-bench: " << llvm::toString(comm->takeError())
                   << "\n";
      MPI_Abort(world, 1);
    }
  std::vector<float> data(floats), activations(1 << 20, 1.0f);
  for (int64_t i = 0; i < floats; ++i)
    data[i] = 0.0f; // sums stay finite however many steps run
  // Time the work once: the compute runs are reported net of it.
  double workStart = now();
  volatile float sink = 0;
  for (int i = 0; i < 5; ++i)
    sink = sink + work(activations);
  double workSeconds = now() - workStart;

  int rank = (*ring)->rank();
  auto measure = [&](const char *name, const std::function<double()> &step) {
    double best = 1e30;
    for (int repetition = 0; repetition < 5; ++repetition) {
      MPI_Barrier(world);
      double seconds = 0;
      for (int s = 0; s < steps; ++s)
        seconds += step();
      best = std::min(best, seconds / steps);
    }
    if (rank == 0)
      std::printf("%-40s %8.3f ms per step\n", name, best * 1e3);
  };
  auto startWait = [&](Communicator &comm) {
    return [&]() {
      double start = now();
      llvm::Expected<int64_t> request =
          comm.startAllReduceSum(data.data(), floats);
      llvm::cantFail(request.takeError());
      llvm::cantFail(comm.wait(*request));
      return now() - start;
    };
  };
  auto overlapped = [&](Communicator &comm) {
    return [&]() {
      double exposed = 0, start = now();
      llvm::Expected<int64_t> request =
          comm.startAllReduceSum(data.data(), floats);
      llvm::cantFail(request.takeError());
      exposed += now() - start;
      for (int i = 0; i < 5; ++i) {
        sink = sink + work(activations);
        start = now();
        comm.progress();
        exposed += now() - start;
      }
      start = now();
      llvm::cantFail(comm.wait(*request));
      return exposed + now() - start;
    };
  };
  if (rank == 0)
    std::printf("%lld floats on %d ranks; the work between progress calls: "
                "%.2f ms a step\n",
                (long long)floats, (*ring)->size(), workSeconds * 1e3);
  // Auto is the ring where the ranks span machines: timed once, as the ring.
  bool oneMachine = (*shared)->allReduceAlgorithm() == "shared-memory";
  if (oneMachine)
    measure("shared memory: start, wait", startWait(**shared));
  measure("ring: start, wait", startWait(**ring));
  measure("library (MPI_Iallreduce): start, wait", startWait(**library));
  measure("blocking (MPI_Allreduce)", [&]() {
    double start = now();
    llvm::cantFail((*ring)->allReduceSum(data.data(), floats));
    return now() - start;
  });
  if (oneMachine)
    measure("shared memory with compute: exposed", overlapped(**shared));
  measure("ring with compute: exposed", overlapped(**ring));
  measure("library with compute: exposed", overlapped(**library));
  shared->reset();
  ring->reset();
  library->reset();
  MPI_Finalize();
  return 0;
}
