//===- Collectives.cpp - The collectives compiled code calls --------------===//
//
// fuse_all_reduce_start_f32, fuse_all_reduce_wait and
// fuse_all_reduce_progress (fuse/ABI.h), called by the code convert-fuse-
// collectives lowers fuse.all_reduce to, a start and a wait per bucket:
// they reduce through the communicator of the calling thread's innermost
// CommunicatorScope, which keeps the collectives in flight by handle.
// Compiled code has no way to fail, so an error is kept in the scope for
// the caller (fit) to report after the call.
//
//===----------------------------------------------------------------------===//

#include "Collectives.h"
#include "fuse/Communicator.h"

#include <chrono>

using namespace fuse;

namespace {
thread_local CommunicatorScope *currentScope = nullptr;
} // namespace

Communicator::~Communicator() = default;

CommunicatorScope::CommunicatorScope(Communicator *communicator)
    : communicator_(communicator), outer_(currentScope) {
  currentScope = this;
}

CommunicatorScope::~CommunicatorScope() { currentScope = outer_; }

llvm::Error CommunicatorScope::takeError() {
  if (error_.empty())
    return llvm::Error::success();
  std::string error = std::move(error_);
  error_.clear();
  return llvm::createStringError(error);
}

llvm::Expected<int64_t> Communicator::startAllReduceSum(float *data,
                                                        int64_t count) {
  if (llvm::Error err = allReduceSum(data, count))
    return std::move(err);
  return 0;
}

llvm::Error Communicator::wait(int64_t) { return llvm::Error::success(); }

namespace fuse {
struct CollectiveRuntime {
  /// The communicator compiled code reduces through, or null when there is
  /// nothing to reduce (no scope, one rank).
  static Communicator *communicator(CommunicatorScope *scope) {
    if (!scope || !scope->communicator_ || scope->communicator_->size() == 1)
      return nullptr;
    return scope->communicator_;
  }

  static void fail(CommunicatorScope &scope, int64_t count, llvm::Error err) {
    if (!scope.error_.empty()) {
      llvm::consumeError(std::move(err));
      return;
    }
    scope.error_ = "rank " + std::to_string(scope.communicator_->rank()) +
                   ": the all-reduce of " + std::to_string(count) +
                   " gradient values failed: " + llvm::toString(std::move(err));
  }

  /// Runs `f`, adding its wall time to the scope's.
  template <typename F> static auto timed(CommunicatorScope &scope, F f) {
    auto start = std::chrono::steady_clock::now();
    auto result = f();
    scope.seconds_ +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    return result;
  }

  static int64_t start(float *data, int64_t count, int32_t kind) {
    CommunicatorScope *scope = currentScope;
    Communicator *comm = communicator(scope);
    // After a failure the ranks no longer agree on what they reduce.
    if (!comm || !scope->error_.empty())
      return -1;
    llvm::Expected<int64_t> request =
        timed(*scope, [&] { return comm->startAllReduceSum(data, count); });
    if (!request) {
      fail(*scope, count, request.takeError());
      return -1;
    }
    // Handles index the collectives of one call; numbering starts again
    // once none is in flight.
    if (scope->inFlight_ == 0)
      scope->pending_.clear();
    scope->pending_.push_back({data, count, kind, *request});
    ++scope->inFlight_;
    return int64_t(scope->pending_.size()) - 1;
  }

  static void wait(int64_t handle) {
    CommunicatorScope *scope = currentScope;
    Communicator *comm = communicator(scope);
    if (!comm || handle < 0 || size_t(handle) >= scope->pending_.size() ||
        !scope->pending_[handle].data)
      return;
    CommunicatorScope::Pending pending = scope->pending_[handle];
    scope->pending_[handle].data = nullptr;
    --scope->inFlight_;
    // Even after another's failure: MPI owns the buffer until then.
    if (llvm::Error err =
            timed(*scope, [&] { return comm->wait(pending.request); })) {
      fail(*scope, pending.count, std::move(err));
      return;
    }
    if (pending.kind == 1) { // mean
      float scale = 1.0f / float(comm->size());
      for (int64_t i = 0; i < pending.count; ++i)
        pending.data[i] *= scale;
    }
  }

  static void progress() {
    CommunicatorScope *scope = currentScope;
    Communicator *comm = communicator(scope);
    if (!comm || scope->inFlight_ == 0)
      return;
    timed(*scope, [&] {
      comm->progress();
      return 0;
    });
  }
};
} // namespace fuse

extern "C" int64_t fuse_all_reduce_start_f32(float *data, int64_t count,
                                             int32_t kind) {
  return CollectiveRuntime::start(data, count, kind);
}

extern "C" void fuse_all_reduce_wait(int64_t handle) {
  CollectiveRuntime::wait(handle);
}

extern "C" void fuse_all_reduce_progress() { CollectiveRuntime::progress(); }
