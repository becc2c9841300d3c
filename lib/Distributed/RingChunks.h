//===- RingChunks.h - The ring all-reduce's chunks of a buffer -*- C++ -*-===//
//
// How MpiAllReduce::Ring cuts a buffer among N ranks, and so the order in
// which each element is summed (from its chunk's rank on). The
// shared-memory all-reduce sums in that order too, to give the ring's bits:
// both take the chunks from here.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_LIB_DISTRIBUTED_RINGCHUNKS_H
#define FUSE_LIB_DISTRIBUTED_RINGCHUNKS_H

#include <cstdint>

namespace fuse {
namespace detail {

/// The first element of chunk `chunk` (0 .. size; chunk size is the end)
/// of a buffer of `count` elements over `size` ranks: count chunk / size.
inline int64_t ringChunkBegin(int64_t count, int chunk, int size) {
  return count * chunk / size;
}

} // namespace detail
} // namespace fuse

#endif // FUSE_LIB_DISTRIBUTED_RINGCHUNKS_H
