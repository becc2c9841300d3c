//===- Passes.h - Every Fuse pass, by layer ---------------------*- C++ -*-===//
//
// The passes of each layer: graph transforms on the fuse dialect
// (fuse/Transforms), conversions out of it (fuse/Conversion), and code
// generation on linalg and below (fuse/Codegen). Include the layer's header
// where one layer is enough.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_PASSES_H
#define FUSE_PASSES_H

#include "fuse/Codegen/Passes.h"
#include "fuse/Conversion/Passes.h"
#include "fuse/Transforms/Passes.h"

namespace fuse {

/// Registers every Fuse pass with MLIR's pass registry (fuse-opt, textual
/// pipelines).
inline void registerFusePasses() {
  registerFuseTransformsPasses();
  registerFuseConversionPasses();
  registerFuseCodegenPasses();
  registerTileAndVectorizePipeline();
}

} // namespace fuse

#endif // FUSE_PASSES_H
