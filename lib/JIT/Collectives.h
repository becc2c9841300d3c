//===- Collectives.h - The collectives compiled code calls ------*- C++ -*-===//

#ifndef FUSE_LIB_JIT_COLLECTIVES_H
#define FUSE_LIB_JIT_COLLECTIVES_H

#include <cstdint>

/// Defined in the JIT as fuse::abi::kAllReduceF32Symbol.
extern "C" void fuse_all_reduce_f32(float *data, int64_t count, int32_t kind);

#endif // FUSE_LIB_JIT_COLLECTIVES_H
