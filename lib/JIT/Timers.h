//===- Timers.h - The timer functions instrumented code calls ---*- C++ -*-===//

#ifndef FUSE_LIB_JIT_TIMERS_H
#define FUSE_LIB_JIT_TIMERS_H

#include <cstdint>

/// Defined in the JIT as fuse::abi::kTimerStartSymbol and kTimerStopSymbol.
extern "C" int64_t fuse_timer_start();
extern "C" void fuse_timer_stop(int64_t start, const char *region);

#endif // FUSE_LIB_JIT_TIMERS_H
