//===- TileLoops.h - Loops over tiles that carry one tensor -----*- C++ -*-===//
//
// Part of fuse-tile-and-vectorize: the scf.for loops that MatmulPacking.cpp
// and ConvolutionTiling.cpp build around their tiles, each threading the
// tensor the tiles are inserted into.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_LIB_TRANSFORMS_TILELOOPS_H
#define FUSE_LIB_TRANSFORMS_TILELOOPS_H

#include "mlir/IR/Builders.h"

namespace fuse {

/// The body of a tile loop: from the induction variable and the carried
/// tensor, the tensor for the next iteration.
using TileLoopBody = llvm::function_ref<mlir::Value(mlir::OpBuilder &,
                                                    mlir::Value, mlir::Value)>;

/// `for iv = lower to upper step step` carrying `init`; returns its result.
mlir::Value buildTileLoop(mlir::OpBuilder &b, mlir::Location loc, int64_t lower,
                          int64_t upper, int64_t step, mlir::Value init,
                          TileLoopBody body);

} // namespace fuse

#endif // FUSE_LIB_TRANSFORMS_TILELOOPS_H
