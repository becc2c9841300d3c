//===- LoweringStrategy.h - The CPU strategy's decisions --------*- C++ -*-===//
//
// Every decision of the CPU code generator in one place: for each linalg op,
// which strategy lowers it and with which tile sizes at each level, as a
// #fuse.lowering_config (docs/codegen.md). fuse-select-lowering-strategy
// sets it on the ops; the apply passes read it, and ask the same library
// for the ops their rewrites create.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_LIB_CODEGEN_CPU_LOWERINGSTRATEGY_H
#define FUSE_LIB_CODEGEN_CPU_LOWERINGSTRATEGY_H

#include "MatmulTiling.h"

#include "Fuse/IR/FuseOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/PatternMatch.h"

namespace fuse {

/// The vector register width for `func` in bits: `option` when it is not 0,
/// else its module's target (abi::kTargetAttrName, set by the compile
/// driver: 512 with avx512f, 256 with avx or avx2, else 128), else the
/// host's (a bare fuse-opt run).
unsigned resolveVectorBits(mlir::func::FuncOp func, unsigned option);

/// Images per thread block of an image loop (fuse-distribute-image-loops)
/// of `images` iterations, each of about `workPerImage` multiply-adds or
/// element operations: the fewest that divide the batch into at least two
/// blocks of as much work as a distributed block of a product; 0 (one
/// thread) if none.
int64_t chooseImageLoopBlock(int64_t images, int64_t workPerImage);

/// Choices that are not the target's.
struct LoweringOptions {
  /// Winograd's F(4x4, 3x3) / F(2x2, 3x3) for the 3x3 convolutions and
  /// filter gradients that allow it (fusec --winograd).
  bool winograd = false;
};

/// The config of `op`: its rewrite strategy (dot products, packing,
/// Winograd, convolution tiles, filter gradients) when one applies, else
/// chooseTiledConfig's. Null for ops the strategy leaves alone (dynamic
/// shapes, buffers, no loops).
LoweringConfigAttr chooseLoweringConfig(mlir::linalg::LinalgOp op,
                                        unsigned vectorBits,
                                        const LoweringOptions &options);

/// The config that tiles `op` as it is, by its kind, with no rewrite first:
/// register tiles (bands of them for a matmul) and vector sizes that divide
/// contractions, convolutions and pools exactly, square blocks of lanes for
/// transposes that move the innermost dim, up to four registers along the
/// innermost loop for the rest; the loop order of packing transposes and of
/// convolutions whose filter does not fit in L2. Null as above.
LoweringConfigAttr chooseTiledConfig(mlir::linalg::LinalgOp op,
                                     unsigned vectorBits);

/// `op`'s config, or chooseTiledConfig's (then set on it) for an op a
/// rewrite created without one. Null as above.
LoweringConfigAttr getOrChooseTiledConfig(mlir::linalg::LinalgOp op,
                                          unsigned vectorBits);

/// Whether a block of `multiplyAdds` (or element-wise work of that size)
/// is worth a thread of its own: about 1 us on one core, three times a
/// fork/join.
bool isWorthDistributing(int64_t multiplyAdds);

/// Sets `config` on `op` (removes it when null).
void setLoweringConfig(mlir::Operation *op, LoweringConfigAttr config);

/// Marks `op`, which a rewrite built as one register tile, with the
/// register_tile config: it is vectorized whole and never tiled again.
void markRegisterTile(mlir::Operation *op);

/// The config of a fuse.attention or fuse.attention_grad (strategy
/// attention_blocks) over its loops (heads, query rows, keys): `cache` holds
/// [1, rows, keys] of one block, whose scores are the only ones ever held
/// (fuse-tile-attention). Null for dynamic shapes.
LoweringConfigAttr chooseAttentionConfig(mlir::Operation *op);

/// Whether `op` carries a config of `strategy`.
bool hasStrategy(mlir::Operation *op, LoweringStrategy strategy);

/// Whether `op` carries the register_tile config.
bool isRegisterTile(mlir::Operation *op);

/// The row bands of a matmul of `m` rows with config `config`: one band of
/// all rows per register tile, or, with two tiles, whole tiles of the first
/// and the rows left in one tile of the second.
llvm::SmallVector<RowBand> getRowBands(LoweringConfigAttr config, int64_t m);

/// A listener for the apply passes' rewriters: an op a rewrite inserts
/// (built or cloned, not moved) loses a config cloned from its origin,
/// which holds for the origin's shape, not its own; register_tile configs,
/// which hold for any shape, stay. The op then gets its config from the
/// library when a later pass needs one (getOrChooseTiledConfig).
struct DropClonedConfigs : mlir::RewriterBase::Listener {
  void notifyOperationInserted(mlir::Operation *op,
                               mlir::OpBuilder::InsertPoint previous) override;
};

} // namespace fuse

#endif // FUSE_LIB_CODEGEN_CPU_LOWERINGSTRATEGY_H
