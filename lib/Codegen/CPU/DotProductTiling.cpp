//===- DotProductTiling.cpp - Matmuls of a few rows as dot products -------===//
//
// For C[m, n] += A[m, k] * B[n, k] with m of 1 to 3 and L lanes per register:
//
//   for n0 in N step R:
//     P = 0                                      [m, R, L], in registers
//     for k0 in K step L:
//       P[i, j, :] += A[i, k0:+L] * B[n0+j, k0:+L]
//     C[:, n0:+R] += sum over the lanes of P
//
// Each step reads R registers of B once and issues m * R independent FMAs;
// the lane sums cost one reduction per output, against K / L FMAs.
//
//===----------------------------------------------------------------------===//

#include "DotProductTiling.h"

#include "ConvolutionTiling.h"
#include "LoweringStrategy.h"
#include "MatmulPacking.h"
#include "TileLoops.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;

namespace {

/// Accumulators of partial sums per tile (m * R), leaving registers for the
/// rows of B.
constexpr int64_t kMaxAccumulators = 16;

} // namespace

std::optional<int64_t> fuse::dotProductTileRows(linalg::MatmulOp op,
                                                unsigned vectorBits) {
  std::optional<MatmulForm> form = matchMatmul(op);
  if (!form || form->lhsTransposed || !form->rhsTransposed || form->m == 0 ||
      form->m > 3)
    return std::nullopt;
  Type elementType = getElementTypeOrSelf(op->getResult(0).getType());
  if (!isa<FloatType>(elementType) ||
      llvm::any_of(op->getOperandTypes(), [&](Type operand) {
        return getElementTypeOrSelf(operand) != elementType;
      }))
    return std::nullopt;
  int64_t lanes = vectorLanes(elementType, vectorBits);
  int64_t rows = largestDivisorAtMost(form->n, kMaxAccumulators / form->m);
  // Too few rows of B per tile would wait on the FMAs' latency.
  if (form->k % lanes != 0 || form->k == 0 || rows < 4)
    return std::nullopt;
  return rows;
}

LogicalResult fuse::tileAsDotProducts(RewriterBase &rewriter,
                                      linalg::MatmulOp op, int64_t rows,
                                      unsigned vectorBits) {
  std::optional<MatmulForm> form = matchMatmul(op);
  if (!form || form->lhsTransposed || !form->rhsTransposed || rows <= 0 ||
      form->n % rows != 0)
    return failure();
  Type elementType = getElementTypeOrSelf(op->getResult(0).getType());
  int64_t lanes = vectorLanes(elementType, vectorBits);

  Location loc = op.getLoc();
  MLIRContext *context = op.getContext();
  Value lhs = op.getDpsInputs()[0], rhs = op.getDpsInputs()[1];
  // (i, j, l): row of A, row of B, lane.
  AffineExpr i, j, l;
  bindDims(context, i, j, l);
  auto map = [&](ArrayRef<AffineExpr> exprs) {
    return AffineMap::get(3, 0, exprs, context);
  };
  using utils::IteratorType;
  auto tileOp = [&](Operation *op) {
    markRegisterTile(op);
    return op->getResult(0);
  };
  auto one = [&](OpBuilder &b) -> OpFoldResult { return b.getIndexAttr(1); };
  auto index = [&](OpBuilder &b, int64_t v) -> OpFoldResult {
    return b.getIndexAttr(v);
  };

  rewriter.setInsertionPoint(op);
  Value result = buildTileLoop(
      rewriter, loc, 0, form->n, rows, op.getDpsInits()[0],
      [&](OpBuilder &b, Value n0, Value c) -> Value {
        Value zero = arith::ConstantOp::create(b, loc, elementType,
                                               b.getZeroAttr(elementType));
        Value partial = tensor::EmptyOp::create(b, loc, {form->m, rows, lanes},
                                                elementType);
        partial = tileOp(linalg::FillOp::create(b, loc, zero, partial));
        partial = buildTileLoop(
            b, loc, 0, form->k, lanes, partial,
            [&](OpBuilder &b, Value k0, Value partial) -> Value {
              Value a = tensor::ExtractSliceOp::create(
                  b, loc, lhs, {index(b, 0), k0},
                  {index(b, form->m), index(b, lanes)}, {one(b), one(b)});
              Value bt = tensor::ExtractSliceOp::create(
                  b, loc, rhs, {n0, k0}, {index(b, rows), index(b, lanes)},
                  {one(b), one(b)});
              return tileOp(linalg::GenericOp::create(
                  b, loc, TypeRange{partial.getType()}, ValueRange{a, bt},
                  partial,
                  ArrayRef<AffineMap>{map({i, l}), map({j, l}), map({i, j, l})},
                  SmallVector<IteratorType>(3, IteratorType::parallel),
                  [&](OpBuilder &b, Location loc, ValueRange args) {
                    linalg::YieldOp::create(
                        b, loc,
                        ValueRange{math::FmaOp::create(b, loc, args[0], args[1],
                                                       args[2])});
                  }));
            });
        SmallVector<OpFoldResult> offsets = {index(b, 0), n0};
        SmallVector<OpFoldResult> sizes = {index(b, form->m), index(b, rows)};
        SmallVector<OpFoldResult> unit = {one(b), one(b)};
        Value cTile =
            tensor::ExtractSliceOp::create(b, loc, c, offsets, sizes, unit);
        // The lane sums: transposed in registers, each lane of the partial
        // sums is one register across the outputs, and L vector adds sum
        // them, instead of a reduction across the lanes per output.
        Value lanesFirst = tensor::EmptyOp::create(
            b, loc, {form->m, lanes, rows}, elementType);
        lanesFirst = tileOp(linalg::TransposeOp::create(
            b, loc, partial, lanesFirst, ArrayRef<int64_t>{0, 2, 1}));
        Value sum = buildTileLoop(
            b, loc, 0, lanes, 1, cTile,
            [&](OpBuilder &b, Value lane, Value sum) -> Value {
              Value addend = tensor::ExtractSliceOp::create(
                  b, loc, cast<RankedTensorType>(sum.getType()), lanesFirst,
                  {index(b, 0), lane, index(b, 0)},
                  {index(b, form->m), one(b), index(b, rows)},
                  {one(b), one(b), one(b)});
              AffineMap identity =
                  AffineMap::getMultiDimIdentityMap(2, context);
              return tileOp(linalg::GenericOp::create(
                  b, loc, TypeRange{sum.getType()}, ValueRange{addend}, sum,
                  ArrayRef<AffineMap>{identity, identity},
                  SmallVector<IteratorType>(2, IteratorType::parallel),
                  [&](OpBuilder &b, Location loc, ValueRange args) {
                    linalg::YieldOp::create(b, loc,
                                            ValueRange{arith::AddFOp::create(
                                                b, loc, args[1], args[0])});
                  }));
            });
        return tensor::InsertSliceOp::create(b, loc, sum, c, offsets, sizes,
                                             unit)
            .getResult();
      });
  rewriter.replaceOp(op, result);
  return success();
}
