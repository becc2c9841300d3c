//===- ImageLoopFusion.h - Fusing loops over a batch's images ---*- C++ -*-===//
//
// fuse-image-loop-fusion: a convolution's strategies build one loop
// over the images of the batch (a Winograd convolution, a filter gradient
// with its bias gradient). Where one such loop, or a linalg op that
// computes each image of its output from the same image of its operands (a
// pool, an element-wise op), consumes another loop's result image by image,
// the two become one loop, and the image passes from one to the other in L2
// instead of through a batch-sized tensor in memory. A cheap producer that
// only image loops read is recomputed in each, image by image.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_LIB_TRANSFORMS_IMAGELOOPFUSION_H
#define FUSE_LIB_TRANSFORMS_IMAGELOOPFUSION_H

#include "Fuse/IR/FuseDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"

namespace fuse {

/// Marks `loop` as an image loop (kImageLoopAttrName, a unit attribute the
/// dialect verifies): an scf.for from 0 to the batch size, step 1, on
/// tensors only (no memory effects but allocations, so that its body can
/// move), whose iteration n reads and writes image n of its batch-sized
/// operands and results, and inserts image n of each batch-sized result as
/// its last step.
void markImageLoop(mlir::scf::ForOp loop);

/// The image that an iteration of `loop` stores as its result `i`: the
/// source of the insert_slice it yields, at [iv, 0, ...] and one image in
/// size, or null.
mlir::Value storedImage(mlir::scf::ForOp loop, unsigned i);

/// Fuses each image loop of `func` that reads another's result only image by
/// image (`extract_slice`s at its own image) into that producer loop's
/// iteration, and computes each image of a linalg op that reads a loop's
/// result image by image there too (its tile of one image, a fill of its
/// output applied per image): the consumer then reads the image the
/// producer has just computed. A result that nothing else reads is no longer
/// stored for the whole batch: its image is computed into a buffer of one
/// image. Then computes each element-wise op that reads at most half the
/// bytes it writes, and that only image loops read, each at its own image,
/// in each of those loops on its image. The loops keep their marks (for
/// fuse-distribute-image-loops).
void fuseImageLoops(mlir::RewriterBase &rewriter, mlir::func::FuncOp func);

} // namespace fuse

#endif // FUSE_LIB_TRANSFORMS_IMAGELOOPFUSION_H
