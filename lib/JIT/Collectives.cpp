//===- Collectives.cpp - The collectives compiled code calls --------------===//
//
// fuse_all_reduce_f32 (fuse/ABI.h), called by the code convert-fuse-
// collectives lowers fuse.all_reduce to, one call per bucket: it reduces
// through the communicator of the calling thread's innermost
// CommunicatorScope. Compiled code has no way to fail, so an error is kept
// in the scope for the caller (fit) to report after the call.
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

namespace fuse {
struct CollectiveRuntime {
  static void allReduce(float *data, int64_t count, int32_t kind) {
    CommunicatorScope *scope = currentScope;
    if (!scope || !scope->communicator_ || scope->communicator_->size() == 1)
      return;
    // After a failure the ranks no longer agree on what they reduce.
    if (!scope->error_.empty())
      return;
    Communicator &comm = *scope->communicator_;
    auto start = std::chrono::steady_clock::now();
    llvm::Error err = comm.allReduceSum(data, count);
    scope->seconds_ +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    if (err) {
      scope->error_ =
          "rank " + std::to_string(comm.rank()) + ": the all-reduce of " +
          std::to_string(count) +
          " gradient values failed: " + llvm::toString(std::move(err));
      return;
    }
    if (kind == 1) { // mean
      float scale = 1.0f / float(comm.size());
      for (int64_t i = 0; i < count; ++i)
        data[i] *= scale;
    }
  }
};
} // namespace fuse

extern "C" void fuse_all_reduce_f32(float *data, int64_t count, int32_t kind) {
  CollectiveRuntime::allReduce(data, count, kind);
}
