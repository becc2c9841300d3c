//===- Passes.h - Fuse conversion passes ------------------------*- C++ -*-===//

#ifndef FUSE_CONVERSION_PASSES_H
#define FUSE_CONVERSION_PASSES_H

#include "mlir/Pass/Pass.h"

#include <string>
#include <vector>

namespace mlir {
class ModuleOp;
namespace func {
class FuncOp;
} // namespace func
} // namespace mlir

namespace fuse {

#define GEN_PASS_DECL
#include "fuse/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "fuse/Conversion/Passes.h.inc"

/// For --stats, before convert-fuse-collectives: per fuse.all_reduce of
/// `module`, a line naming the gradients it reduces before their optimizer
/// update (by their parameters' names, with shapes), and which of them no
/// longer fuse into the update because of it: those a matmul computes,
/// whose update fuse-tile-matmuls otherwise fuses into the matmul's tiles.
std::vector<std::string> describeReducedGradients(mlir::ModuleOp module);

} // namespace fuse

#endif // FUSE_CONVERSION_PASSES_H
