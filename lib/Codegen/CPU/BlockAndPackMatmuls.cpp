//===- BlockAndPackMatmuls.cpp - fuse-block-and-pack-matmuls --------------===//
//
// Applies the matmul configs that rewrite a product before its register
// tiles: dot products, BLIS's packing; packs transposed right-hand sides and
// splits awkward sizes into whole tiles and edges.
//
//===----------------------------------------------------------------------===//

#include "fuse/Codegen/Passes.h"

#include "PassDetail.h"

#include "DotProductTiling.h"
#include "LoweringStrategy.h"
#include "MatmulPacking.h"
#include "MatmulTiling.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "fuse-block-and-pack-matmuls"

namespace fuse {
#define GEN_PASS_DEF_FUSEBLOCKANDPACKMATMULS
#include "fuse/Codegen/Passes.h.inc"
} // namespace fuse

using namespace mlir;
using fuse::LoweringStrategy;

namespace {

/// Packs a transposed right-hand side of a matmul (read as [n, k]) into
/// [k, n]: the micro-kernel loads rows of the right-hand side as vectors, and
/// a transposed one would be gathered element by element. The O(n k) copy
/// pays for itself against the O(m n k) product. Returns the product on the
/// packed operand, or `op` if there is nothing to pack.
linalg::LinalgOp packTransposedRhs(RewriterBase &rewriter,
                                   linalg::LinalgOp op) {
  if (!isa<linalg::MatmulOp, linalg::BatchMatmulOp>(op))
    return op;
  unsigned batch = isa<linalg::BatchMatmulOp>(op) ? 1 : 0;
  MLIRContext *context = op->getContext();
  unsigned rank = batch + 3;
  auto dim = [&](unsigned d) { return getAffineDimExpr(d, context); };
  SmallVector<AffineExpr> prefix;
  for (unsigned d = 0; d < batch; ++d)
    prefix.push_back(dim(d));
  auto map = [&](AffineExpr a, AffineExpr b) {
    SmallVector<AffineExpr> exprs(prefix);
    exprs.push_back(a);
    exprs.push_back(b);
    return AffineMap::get(rank, 0, exprs, context);
  };
  AffineExpr m = dim(batch), n = dim(batch + 1), k = dim(batch + 2);
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  if (maps[1] != map(n, k))
    return op;
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  Value rhs = op.getDpsInputs()[1];
  auto rhsType = cast<RankedTensorType>(rhs.getType());
  SmallVector<int64_t> packedShape(rhsType.getShape());
  std::swap(packedShape[batch], packedShape[batch + 1]);
  SmallVector<int64_t> permutation;
  for (unsigned d = 0; d < batch; ++d)
    permutation.push_back(d);
  permutation.push_back(batch + 1);
  permutation.push_back(batch);
  Value init = tensor::EmptyOp::create(rewriter, loc, packedShape,
                                       rhsType.getElementType());
  Value packed =
      linalg::TransposeOp::create(rewriter, loc, rhs, init, permutation)
          ->getResult(0);
  SmallVector<AffineMap> newMaps = {maps[0], map(k, n), map(m, n)};
  SmallVector<NamedAttribute> attrs = {rewriter.getNamedAttr(
      "indexing_maps", rewriter.getAffineMapArrayAttr(newMaps))};
  Value lhs = op.getDpsInputs()[0];
  Value acc = op.getDpsInits()[0];
  Operation *replacement =
      batch ? linalg::BatchMatmulOp::create(rewriter, loc,
                                            TypeRange{acc.getType()},
                                            ValueRange{lhs, packed}, acc, attrs)
                  .getOperation()
            : linalg::MatmulOp::create(rewriter, loc, TypeRange{acc.getType()},
                                       ValueRange{lhs, packed}, acc, attrs)
                  .getOperation();
  rewriter.replaceOp(op, replacement->getResults());
  return cast<linalg::LinalgOp>(replacement);
}

struct BlockAndPackMatmulsPass
    : fuse::impl::FuseBlockAndPackMatmulsBase<BlockAndPackMatmulsPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    unsigned bits = fuse::resolveVectorBits(func, vectorBits);
    fuse::DropClonedConfigs listener;
    IRRewriter rewriter(&getContext(), &listener);
    // The parts a rewrite leaves (edges, splits) are products again, with
    // their own configs.
    auto configure = [&](linalg::LinalgOp op) {
      fuse::LoweringConfigAttr config =
          fuse::chooseLoweringConfig(op, bits, {});
      fuse::setLoweringConfig(op, config);
      return config;
    };
    SmallVector<linalg::LinalgOp> contractions;
    func.walk([&](linalg::LinalgOp op) {
      if (isa<linalg::MatmulOp, linalg::BatchMatmulOp>(op) &&
          op.hasPureTensorSemantics())
        contractions.push_back(op);
    });
    while (!contractions.empty()) {
      linalg::LinalgOp op = contractions.pop_back_val();
      // (Winograd's products were created without one.)
      fuse::LoweringConfigAttr config = fuse::LoweringConfigAttr::lookup(op);
      if (!config)
        config = configure(op);
      auto strategy =
          config ? config.getStrategy() : LoweringStrategy::register_tile;
      if (auto matmul = dyn_cast<linalg::MatmulOp>(op.getOperation())) {
        if (strategy == LoweringStrategy::dot_products &&
            succeeded(fuse::tileAsDotProducts(
                rewriter, matmul, config.getRegisters()[1], bits))) {
          LLVM_DEBUG(llvm::dbgs() << "dot products at " << op.getLoc() << "\n");
          continue;
        }
        if (strategy == LoweringStrategy::packed_matmul) {
          FailureOr<SmallVector<linalg::MatmulOp>> edges =
              fuse::blockAndPackMatmul(rewriter, matmul,
                                       {config.getCache()[0],
                                        config.getCache()[1],
                                        config.getCache()[2]},
                                       bits, config.getDistribution()[1],
                                       config.getDistribution()[0]);
          if (succeeded(edges)) {
            LLVM_DEBUG(llvm::dbgs() << "packed at " << op.getLoc() << ", "
                                    << edges->size() << " edges\n");
            for (linalg::MatmulOp edge : *edges) {
              configure(edge);
              contractions.push_back(edge);
            }
            continue;
          }
        }
      }
      // Packed before the split, B is transposed once for all parts. (The
      // product on the packed B has the same loops, hence the same config.)
      op = packTransposedRhs(rewriter, op);
      fuse::setLoweringConfig(op, config);
      FailureOr<SmallVector<linalg::LinalgOp>> parts =
          fuse::splitIntoWholeTiles(rewriter, op, bits);
      if (succeeded(parts)) {
        LLVM_DEBUG(llvm::dbgs() << "split at " << op.getLoc() << " into "
                                << parts->size() << " parts\n");
        for (linalg::LinalgOp part : *parts) {
          configure(part);
          contractions.push_back(part);
        }
        continue;
      }
      // The product keeps its register tiles (a rewrite that did not apply
      // leaves it the library's).
      if (strategy != LoweringStrategy::matmul_tiles &&
          strategy != LoweringStrategy::batch_matmul_tiles)
        fuse::setLoweringConfig(op, fuse::chooseTiledConfig(op, bits));
    }
  }
};

} // namespace
