//===- PassDetail.h - What the CPU strategy's passes load -------*- C++ -*-===//
//
// The dialects the passes of fuse-tile-and-vectorize declare as dependent
// (include/fuse/Codegen/Passes.td): each pass may create ops of any of them,
// and a pass run alone (fuse-opt) must load them itself.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_LIB_CODEGEN_CPU_PASSDETAIL_H
#define FUSE_LIB_CODEGEN_CPU_PASSDETAIL_H

#include "Fuse/IR/FuseDialect.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace fuse {

/// The greedy driver's config for the passes' rewrites on structured IR
/// (scf loops, one block per region): simplifying regions after every round
/// would only walk the whole function for nothing.
inline mlir::GreedyRewriteConfig structuredRewriteConfig() {
  mlir::GreedyRewriteConfig config;
  config.setRegionSimplificationLevel(
      mlir::GreedySimplifyRegionLevel::Disabled);
  return config;
}

} // namespace fuse

#endif // FUSE_LIB_CODEGEN_CPU_PASSDETAIL_H
