//===- BF16DotProducts.h - bf16 pairs on AVX512_BF16 ------------*- C++ -*-===//
//
// Mixed-precision contractions (bf16 operands, f32 accumulators) on CPUs
// with AVX512_BF16: `vdpbf16ps` multiplies pairs of bf16 and adds both
// products to one f32 lane, so a register tile steps two reduction indices
// at a time. Chosen by the module's target (`fuse.target` features, the
// host's without one), never at run time; without the feature the
// contraction keeps the widening lowering (bf16 -> f32, then FMAs).
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_LIB_CODEGEN_CPU_BF16DOTPRODUCTS_H
#define FUSE_LIB_CODEGEN_CPU_BF16DOTPRODUCTS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/PatternMatch.h"

namespace fuse {

/// Whether `func`'s module's target (else the host) has AVX512_BF16 (and
/// AVX-512F and VL, as every CPU with it does).
bool targetHasBF16DotProducts(mlir::func::FuncOp func);

/// The reduction steps of a register tile of `op`: 2 (one bf16 pair) when
/// `op` multiplies bf16 operands into an f32 result over an even
/// reduction size and its function's target has AVX512_BF16, else 1.
int64_t registerTileReductionSteps(mlir::linalg::LinalgOp op);

/// vector.contract of a bf16 (m x 2) by a bf16 (2 x n) tile into f32
/// (m x n), n a multiple of 16 -> per 16 columns the two rows of the
/// right-hand side interleaved into pairs, and per row the left-hand
/// side's pair broadcast and one `llvm.x86.avx512bf16.dpbf16ps.512`.
void populateBF16DotProductPatterns(mlir::RewritePatternSet &patterns);

} // namespace fuse

#endif // FUSE_LIB_CODEGEN_CPU_BF16DOTPRODUCTS_H
