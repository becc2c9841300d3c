//===- Collectives.h - The collectives compiled code calls ------*- C++ -*-===//

#ifndef FUSE_LIB_JIT_COLLECTIVES_H
#define FUSE_LIB_JIT_COLLECTIVES_H

#include <cstdint>

/// Defined in the JIT as fuse::abi::kAllReduceStartF32Symbol,
/// kAllReduceWaitSymbol and kAllReduceProgressSymbol.
extern "C" int64_t fuse_all_reduce_start_f32(float *data, int64_t count,
                                             int32_t kind);
extern "C" void fuse_all_reduce_wait(int64_t handle);
extern "C" void fuse_all_reduce_progress();

#endif // FUSE_LIB_JIT_COLLECTIVES_H
