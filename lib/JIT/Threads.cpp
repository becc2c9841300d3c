//===- Threads.cpp - How many threads compiled code runs on ---------------===//

#include "Threads.h"

#include "llvm/ADT/StringRef.h"

#include <cstdlib>
#include <sched.h>
#include <string>

// libomp's API (omp.h is the compiler's header; these two are all we need).
extern "C" {
void omp_set_num_threads(int);
int omp_get_max_threads(void);
}

using namespace fuse;

unsigned fuse::availableCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0)
    return 1;
  int count = CPU_COUNT(&set);
  return count > 0 ? unsigned(count) : 1;
}

/// More threads than any machine has is a typo, not a request.
constexpr unsigned kMaxThreads = 4096;

llvm::Expected<unsigned> fuse::resolveThreadCount(unsigned requested) {
  if (requested > kMaxThreads)
    return llvm::createStringError(
        "a thread count of " + std::to_string(requested) +
        " (EngineOptions::threads, fusec --threads) is more than " +
        std::to_string(kMaxThreads));
  if (requested)
    return requested;
  if (const char *env = std::getenv("FUSE_NUM_THREADS")) {
    unsigned threads = 0;
    if (llvm::StringRef(env).trim().getAsInteger(10, threads) || threads == 0 ||
        threads > kMaxThreads)
      return llvm::createStringError(
          "FUSE_NUM_THREADS='" + std::string(env) +
          "' is not a thread count (an integer from 1 to " +
          std::to_string(kMaxThreads) + ")");
    return threads;
  }
  return availableCpus();
}

ThreadCountScope::ThreadCountScope(unsigned threads)
    : saved_(omp_get_max_threads()) {
  omp_set_num_threads(int(threads));
}

ThreadCountScope::~ThreadCountScope() { omp_set_num_threads(saved_); }
