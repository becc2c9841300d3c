//===- MpiCommunicator.cpp - fuse::Communicator over MPI ------------------===//
//
// Collectives are MPI's, on a duplicate of the given communicator whose
// errors return (MPI_ERRORS_RETURN) instead of aborting, so that Fuse can
// name what failed. Counts above INT_MAX go in several calls.
//
//===----------------------------------------------------------------------===//

#include "fuse/Mpi.h"

#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstdlib>

using namespace fuse;

namespace {

std::string mpiError(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS)
    return "MPI error " + std::to_string(code);
  return std::string(text, length);
}

class MpiCommunicator final : public Communicator {
public:
  explicit MpiCommunicator(MPI_Comm comm) : comm_(comm) {
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &size_);
  }
  ~MpiCommunicator() override {
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

  MPI_Comm comm_;
  int rank_ = 0, size_ = 1;
};

llvm::Expected<std::unique_ptr<Communicator>> duplicate(MPI_Comm comm) {
  MPI_Comm dup;
  if (int code = MPI_Comm_dup(comm, &dup); code != MPI_SUCCESS)
    return llvm::createStringError("MPI_Comm_dup failed: " + mpiError(code));
  MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
  return std::make_unique<MpiCommunicator>(dup);
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

llvm::Expected<std::unique_ptr<Communicator>> fuse::mpiWorldCommunicator() {
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
  return duplicate(MPI_COMM_WORLD);
}

llvm::Expected<std::unique_ptr<Communicator>>
fuse::mpiCommunicator(const void *mpiComm) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized)
    return llvm::createStringError(
        "mpiCommunicator: MPI is not initialized (MPI_Init_thread)");
  return duplicate(*static_cast<const MPI_Comm *>(mpiComm));
}
