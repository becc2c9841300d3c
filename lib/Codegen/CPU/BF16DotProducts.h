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
/// AVX-512F and VL, as every CPU with it does): vdpbf16ps and
/// vcvtneps2bf16.
bool targetHasAVX512BF16(mlir::func::FuncOp func);

/// Whether `func`'s bf16 x bf16 -> f32 products multiply bf16 pairs with
/// vdpbf16ps: the target has AVX512_BF16 and LLVM's scheduling model of its
/// CPU does not say that FMAs on widened operands do at least as many
/// multiply-adds per cycle (on Sapphire and Emerald Rapids they do twice
/// as many). Otherwise the operands are widened to f32.
bool targetPairsBF16Products(mlir::func::FuncOp func);

/// The reduction steps of a register tile of `op`: 2 (one bf16 pair) when
/// `op` multiplies bf16 operands into an f32 result over an even
/// reduction size and its function's target pairs bf16 products, else 1.
int64_t registerTileReductionSteps(mlir::linalg::LinalgOp op);

/// vector.contract of a bf16 (m x 2) by a bf16 (2 x n) tile into f32
/// (m x n), n a multiple of 16 -> per 16 columns the two rows of the
/// right-hand side interleaved into pairs, and per row the left-hand
/// side's pair broadcast and one `llvm.x86.avx512bf16.dpbf16ps.512`.
void populateBF16DotProductPatterns(mlir::RewritePatternSet &patterns);

} // namespace fuse

#endif // FUSE_LIB_CODEGEN_CPU_BF16DOTPRODUCTS_H
