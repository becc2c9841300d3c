//===- MpiCommunicator.cpp - fuse::Communicator over MPI ------------------===//
//
// Collectives are MPI's, on a duplicate of the given communicator whose
// errors return (MPI_ERRORS_RETURN) instead of aborting, so that Fuse can
// name what failed. Counts above INT_MAX go in several calls. Nonblocking
// all-reduces (MPI_Iallreduce) are kept by request number until wait().
//
//===----------------------------------------------------------------------===//

#include "fuse/Mpi.h"

#include "llvm/ADT/STLExtras.h"

#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <vector>

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
  llvm::Expected<int64_t> startAllReduceSum(float *data,
                                            int64_t count) override {
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
    pending_.emplace_back(id, std::move(requests));
    return id;
  }
  llvm::Error wait(int64_t request) override {
    auto it = llvm::find_if(pending_,
                            [&](const auto &p) { return p.first == request; });
    if (it == pending_.end())
      return llvm::createStringError("no all-reduce in flight with request " +
                                     std::to_string(request));
    std::vector<MPI_Request> requests = std::move(it->second);
    pending_.erase(it);
    int code =
        MPI_Waitall(int(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
    if (code != MPI_SUCCESS)
      return llvm::createStringError(mpiError(code));
    return llvm::Error::success();
  }
  void progress() override {
    // One test moves every collective in flight on (OpenMPI's progress
    // engine runs them all); its errors come back from wait().
    if (!pending_.empty() && !pending_.front().second.empty()) {
      int done = 0;
      MPI_Test(&pending_.front().second.front(), &done, MPI_STATUS_IGNORE);
    }
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
  /// The nonblocking all-reduces in flight, by request number: one MPI
  /// request per chunk.
  std::vector<std::pair<int64_t, std::vector<MPI_Request>>> pending_;
  int64_t nextRequest_ = 0;
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
