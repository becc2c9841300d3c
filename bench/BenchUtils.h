//===- BenchUtils.h - References shared by the benchmarks ------*- C++ -*-===//

#ifndef FUSE_BENCH_BENCHUTILS_H
#define FUSE_BENCH_BENCHUTILS_H

namespace fuse::bench {

/// The core's multiply-add peak in FLOP/s (single precision, whole
/// registers of the widest FMA the build targets), measured for about
/// `seconds`; 0 on a host without FMA instructions.
double measureFmaPeak(double seconds);

} // namespace fuse::bench

#endif // FUSE_BENCH_BENCHUTILS_H
