//===- SliceStridedInputs.cpp - fuse-slice-strided-inputs -----------------===//
//
// Inputs read through strided maps, read through strided slices instead.
//
//===----------------------------------------------------------------------===//

#include "fuse/Codegen/Passes.h"

#include "PassDetail.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

namespace fuse {
#define GEN_PASS_DEF_FUSESLICESTRIDEDINPUTS
#include "fuse/Codegen/Passes.h.inc"
} // namespace fuse

using namespace mlir;

namespace {

/// The stride and offset of a map result `d * stride + offset` (or `d`,
/// `d + offset`, `d * stride`) with constant stride > 0 and offset >= 0.
std::optional<std::tuple<unsigned, int64_t, int64_t>>
matchStridedDim(AffineExpr expr) {
  int64_t offset = 0;
  if (auto sum = dyn_cast<AffineBinaryOpExpr>(expr);
      sum && sum.getKind() == AffineExprKind::Add) {
    auto constant = dyn_cast<AffineConstantExpr>(sum.getRHS());
    if (!constant || constant.getValue() < 0)
      return std::nullopt;
    offset = constant.getValue();
    expr = sum.getLHS();
  }
  int64_t stride = 1;
  if (auto product = dyn_cast<AffineBinaryOpExpr>(expr);
      product && product.getKind() == AffineExprKind::Mul) {
    auto constant = dyn_cast<AffineConstantExpr>(product.getRHS());
    if (!constant || constant.getValue() <= 0)
      return std::nullopt;
    stride = constant.getValue();
    expr = product.getLHS();
  }
  auto dim = dyn_cast<AffineDimExpr>(expr);
  if (!dim)
    return std::nullopt;
  return std::make_tuple(dim.getPosition(), stride, offset);
}

/// Reads each input of `op` that a map of strided dims indexes (`d * s +
/// k`, a pool's window offset) through a strided slice instead, indexed by
/// the bare loop indices: the vectorizer takes only such maps.
void sliceStridedInputs(RewriterBase &rewriter, linalg::GenericOp op) {
  if (op.hasDynamicShape() || !op.hasPureTensorSemantics())
    return;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  bool changed = false;
  MLIRContext *context = op.getContext();
  for (OpOperand *input : op.getDpsInputOperands()) {
    AffineMap map = maps[input->getOperandNumber()];
    if (map.isProjectedPermutation())
      continue;
    SmallVector<int64_t> offsets, sizes, strides;
    SmallVector<AffineExpr> results;
    for (AffineExpr expr : map.getResults()) {
      auto strided = matchStridedDim(expr);
      if (!strided)
        break;
      auto [dim, stride, offset] = *strided;
      offsets.push_back(offset);
      sizes.push_back(ranges[dim]);
      strides.push_back(stride);
      results.push_back(getAffineDimExpr(dim, context));
    }
    AffineMap sliced = AffineMap::get(map.getNumDims(), 0, results, context);
    if (results.size() != map.getNumResults() ||
        !sliced.isProjectedPermutation())
      continue;
    rewriter.setInsertionPoint(op);
    Value slice = tensor::ExtractSliceOp::create(
        rewriter, op.getLoc(), input->get(),
        getAsIndexOpFoldResult(context, offsets),
        getAsIndexOpFoldResult(context, sizes),
        getAsIndexOpFoldResult(context, strides));
    rewriter.modifyOpInPlace(op, [&] { input->set(slice); });
    maps[input->getOperandNumber()] = sliced;
    changed = true;
  }
  if (changed)
    rewriter.modifyOpInPlace(op, [&] {
      op.setIndexingMapsAttr(rewriter.getAffineMapArrayAttr(maps));
    });
}

struct SliceStridedInputsPass
    : fuse::impl::FuseSliceStridedInputsBase<SliceStridedInputsPass> {
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    getOperation().walk(
        [&](linalg::GenericOp op) { sliceStridedInputs(rewriter, op); });
  }
};

} // namespace
