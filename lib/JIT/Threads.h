//===- Threads.h - How many threads compiled code runs on -------*- C++ -*-===//
//
// The thread count of the engine's calls: EngineOptions::threads, else
// $FUSE_NUM_THREADS, else the CPUs this process may run on. Compiled code
// forks into LLVM's OpenMP runtime (libomp); the count is set on the calling
// thread for each call, so engines and callers with different counts do not
// disturb each other, and results do not depend on it.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_LIB_JIT_THREADS_H
#define FUSE_LIB_JIT_THREADS_H

#include "llvm/Support/Error.h"

namespace fuse {

/// The CPUs this process may run on (sched_getaffinity), at least 1.
unsigned availableCpus();

/// The thread count for `requested` (EngineOptions::threads; 0: the
/// default). An unparsable or zero $FUSE_NUM_THREADS is an error naming it.
llvm::Expected<unsigned> resolveThreadCount(unsigned requested);

/// Sets the thread count of the parallel regions the calling thread starts
/// (OpenMP's nthreads ICV, per thread) while it lives; restores the old one.
class ThreadCountScope {
public:
  explicit ThreadCountScope(unsigned threads);
  ~ThreadCountScope();
  ThreadCountScope(const ThreadCountScope &) = delete;
  ThreadCountScope &operator=(const ThreadCountScope &) = delete;

private:
  int saved_;
};

} // namespace fuse

#endif // FUSE_LIB_JIT_THREADS_H
