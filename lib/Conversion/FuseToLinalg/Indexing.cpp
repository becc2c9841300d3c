//===- Indexing.cpp - Lower gather, scatter_add, slice, pad, concat, iota -===//
//
// The ops that move elements by index. Each becomes structured ops the CPU
// code generator tiles and vectorizes like any other: slices and concats
// are copies of and into (strided) slices, a gather reads rows by
// index inside a parallel loop, and scatter_add is a loop over the indices
// in row-major order (the same sums on any thread count).
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"

#include "Fuse/IR/FuseOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"

#include <limits>

using namespace mlir;

namespace fuse::lowering {
namespace {

/// NaN for a float type, 0 for an integer: a gathered element with no row.
TypedAttr missingElement(Builder &b, Type type) {
  if (auto floatType = dyn_cast<FloatType>(type))
    return b.getFloatAttr(floatType,
                          APFloat::getQNaN(floatType.getFloatSemantics()));
  return b.getIntegerAttr(type, 0);
}

/// `index` (any integer type, signed) as an index, whether it is in
/// [0, rows), and the index clamped to 0 when it is not.
std::pair<Value, Value> checkedRow(OpBuilder &b, Location loc, Value index,
                                   int64_t rows) {
  // i1 is unsigned here: true is row 1.
  Value i = index.getType().isInteger(1)
                ? arith::IndexCastUIOp::create(b, loc, b.getIndexType(), index)
                      .getResult()
                : arith::IndexCastOp::create(b, loc, b.getIndexType(), index)
                      .getResult();
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value limit = arith::ConstantIndexOp::create(b, loc, rows);
  Value nonNegative =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, i, zero);
  Value below =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, i, limit);
  Value ok = arith::AndIOp::create(b, loc, nonNegative, below);
  return {ok, arith::SelectOp::create(b, loc, ok, i, zero)};
}

/// result[i..., j...] = table[indices[i...], j...]: a parallel loop over the
/// result reading the table inside (a contiguous load along j).
struct GatherLowering : OpConversionPattern<GatherOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(GatherOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto resultType = cast<RankedTensorType>(op.getType());
    auto tableType = cast<RankedTensorType>(adaptor.getTable().getType());
    auto indicesType = cast<RankedTensorType>(adaptor.getIndices().getType());
    int64_t leading = indicesType.getRank();
    SmallVector<AffineExpr> dims;
    for (int64_t d = 0; d < leading; ++d)
      dims.push_back(rewriter.getAffineDimExpr(d));
    AffineMap indexMap =
        AffineMap::get(resultType.getRank(), 0, dims, rewriter.getContext());
    Value table = adaptor.getTable();
    int64_t rows = tableType.getDimSize(0);
    // No row to read (a table specialized to 0 rows): every index is out
    // of range.
    if (rows == 0) {
      rewriter.replaceOp(
          op,
          filledTensor(rewriter, loc, resultType,
                       missingElement(rewriter, resultType.getElementType())));
      return success();
    }
    Value result = buildParallel(
        rewriter, loc, resultType, adaptor.getIndices(), indexMap,
        [&](OpBuilder &b, Location l, ValueRange args) {
          auto [ok, row] = checkedRow(b, l, args[0], rows);
          SmallVector<Value> at = {row};
          for (int64_t d = leading; d < resultType.getRank(); ++d)
            at.push_back(linalg::IndexOp::create(b, l, d));
          Value v = tensor::ExtractOp::create(b, l, table, at);
          Value missing = arith::ConstantOp::create(
              b, l, missingElement(b, resultType.getElementType()));
          return arith::SelectOp::create(b, l, ok, v, missing).getResult();
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// A zero table, then for each index in row-major order its update row
/// added to the indexed row (an index out of range adds to nothing: its
/// update is masked to 0 and added to row 0, which +0 leaves unchanged).
struct ScatterAddLowering : OpConversionPattern<ScatterAddOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ScatterAddOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto tableType = cast<RankedTensorType>(op.getType());
    Type elementType = tableType.getElementType();
    int64_t rows = tableType.getDimSize(0);
    int64_t width = 1;
    for (int64_t d : tableType.getShape().drop_front())
      width *= d; // the table's size was checked at load
    int64_t count = 1;
    for (int64_t d :
         cast<RankedTensorType>(adaptor.getIndices().getType()).getShape())
      count *= d;
    // Nothing to add to (or nothing to add): the zero table.
    if (rows == 0 || width == 0 || count == 0) {
      rewriter.replaceOp(op,
                         filledTensor(rewriter, loc, tableType,
                                      rewriter.getFloatAttr(elementType, 0.0)));
      return success();
    }
    auto flatTable = RankedTensorType::get({rows, width}, elementType);
    Value indices = reshapeTensor(
        rewriter, loc, adaptor.getIndices(),
        RankedTensorType::get(
            {count}, cast<RankedTensorType>(adaptor.getIndices().getType())
                         .getElementType()));
    Value updates =
        reshapeTensor(rewriter, loc, adaptor.getUpdates(),
                      RankedTensorType::get({count, width}, elementType));
    Value init = filledTensor(rewriter, loc, flatTable,
                              rewriter.getFloatAttr(elementType, 0.0));
    auto rowType = RankedTensorType::get({1, width}, elementType);
    Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
    Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
    Value upper = arith::ConstantIndexOp::create(rewriter, loc, count);
    auto loop = scf::ForOp::create(
        rewriter, loc, zero, upper, one, ValueRange{init},
        [&](OpBuilder &b, Location l, Value p, ValueRange iter) {
          Value acc = iter[0];
          Value index = tensor::ExtractOp::create(b, l, indices, p);
          auto [ok, row] = checkedRow(b, l, index, rows);
          SmallVector<OpFoldResult> rowOffsets = {row, b.getIndexAttr(0)};
          SmallVector<OpFoldResult> updateOffsets = {p, b.getIndexAttr(0)};
          SmallVector<OpFoldResult> sizes = {b.getIndexAttr(1),
                                             b.getIndexAttr(width)};
          SmallVector<OpFoldResult> strides = {b.getIndexAttr(1),
                                               b.getIndexAttr(1)};
          Value current = tensor::ExtractSliceOp::create(
              b, l, rowType, acc, rowOffsets, sizes, strides);
          Value update = tensor::ExtractSliceOp::create(
              b, l, rowType, updates, updateOffsets, sizes, strides);
          Value sum = buildParallel(
              b, l, rowType, {current, update},
              {b.getMultiDimIdentityMap(2), b.getMultiDimIdentityMap(2)},
              [&](OpBuilder &nb, Location nl, ValueRange a) {
                Value masked = arith::SelectOp::create(
                    nb, nl, ok, a[1],
                    scalarConstant(nb, nl, a[1].getType(), 0.0));
                return arith::AddFOp::create(nb, nl, a[0], masked).getResult();
              });
          Value next = tensor::InsertSliceOp::create(b, l, sum, acc, rowOffsets,
                                                     sizes, strides);
          scf::YieldOp::create(b, l, next);
        });
    rewriter.replaceOp(
        op, reshapeTensor(rewriter, loc, loop.getResult(0), tableType));
    return success();
  }
};

/// A copy of a strided `tensor.extract_slice`: elementwise fusion folds the
/// copy into its consumer, which then reads the slice in place. (A map
/// `d * stride + offset` on the input would not do: where a dim is read
/// as `d`, linalg takes the input's size as the loop's.)
struct SliceLowering : OpConversionPattern<SliceOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(SliceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto resultType = cast<RankedTensorType>(op.getType());
    int64_t rank = resultType.getRank();
    SmallVector<OpFoldResult> offsets, sizes, strides;
    for (int64_t d = 0; d < rank; ++d) {
      offsets.push_back(rewriter.getIndexAttr(op.getOffsets()[d]));
      sizes.push_back(rewriter.getIndexAttr(resultType.getDimSize(d)));
      strides.push_back(rewriter.getIndexAttr(op.getStride(d)));
    }
    Value slice = tensor::ExtractSliceOp::create(
        rewriter, loc, resultType, adaptor.getInput(), offsets, sizes, strides);
    rewriter.replaceOp(op, buildElementwise(rewriter, loc, resultType, slice,
                                            [](OpBuilder &, Location,
                                               ValueRange a) { return a[0]; }));
    return success();
  }
};

/// The pad value as an attribute of `type`.
TypedAttr padValue(OpBuilder &b, Type type, double value) {
  if (isa<FloatType>(type))
    return b.getFloatAttr(type, value);
  return b.getIntegerAttr(type, static_cast<int64_t>(value));
}

/// Without interior padding, `tensor.pad` (fuse-decompose-pads fills the
/// border only). With it, a parallel loop over the result that reads the
/// input where its index lands on an input element.
struct PadLowering : OpConversionPattern<PadOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(PadOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto resultType = cast<RankedTensorType>(op.getType());
    auto inType = cast<RankedTensorType>(adaptor.getInput().getType());
    Type elementType = resultType.getElementType();
    TypedAttr value =
        padValue(rewriter, elementType, op.getValue().convertToDouble());
    int64_t rank = resultType.getRank();
    bool interior = llvm::any_of(llvm::seq<int64_t>(0, rank), [&](int64_t d) {
      return op.getInteriorOf(d) != 0 && inType.getDimSize(d) > 1;
    });
    if (!interior) {
      SmallVector<OpFoldResult> low, high;
      for (int64_t d = 0; d < rank; ++d) {
        low.push_back(rewriter.getIndexAttr(op.getLow()[d]));
        high.push_back(rewriter.getIndexAttr(op.getHigh()[d]));
      }
      Value fill = arith::ConstantOp::create(rewriter, loc, value);
      rewriter.replaceOpWithNewOp<tensor::PadOp>(
          op, resultType, adaptor.getInput(), low, high, fill);
      return success();
    }
    // An empty input has no element to read: the result is all padding.
    if (inType.getNumElements() == 0) {
      rewriter.replaceOp(op, filledTensor(rewriter, loc, resultType, value));
      return success();
    }
    Value input = adaptor.getInput();
    Value result = buildParallel(
        rewriter, loc, resultType, ValueRange{}, ArrayRef<AffineMap>{},
        [&](OpBuilder &b, Location l, ValueRange) {
          Value inside;
          SmallVector<Value> at;
          for (int64_t d = 0; d < rank; ++d) {
            // i = low + k * (interior + 1), k in [0, n).
            Value i = linalg::IndexOp::create(b, l, d);
            Value low = arith::ConstantIndexOp::create(b, l, op.getLow()[d]);
            Value step =
                arith::ConstantIndexOp::create(b, l, op.getInteriorOf(d) + 1);
            Value n =
                arith::ConstantIndexOp::create(b, l, inType.getDimSize(d));
            Value zero = arith::ConstantIndexOp::create(b, l, 0);
            Value shifted = arith::SubIOp::create(b, l, i, low);
            Value k = arith::DivSIOp::create(b, l, shifted, step);
            Value onGrid = arith::CmpIOp::create(
                b, l, arith::CmpIPredicate::eq,
                arith::RemSIOp::create(b, l, shifted, step), zero);
            Value inRange = arith::AndIOp::create(
                b, l,
                arith::CmpIOp::create(b, l, arith::CmpIPredicate::sge, shifted,
                                      zero),
                arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, k, n));
            Value ok = arith::AndIOp::create(b, l, onGrid, inRange);
            inside = inside ? arith::AndIOp::create(b, l, inside, ok) : ok;
            at.push_back(arith::SelectOp::create(b, l, ok, k, zero));
          }
          Value v = tensor::ExtractOp::create(b, l, input, at);
          Value fill = arith::ConstantOp::create(b, l, value);
          return arith::SelectOp::create(b, l, inside, v, fill).getResult();
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// Each input copied into its slice of the result.
struct ConcatLowering : OpConversionPattern<ConcatOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ConcatOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto resultType = cast<RankedTensorType>(op.getType());
    int64_t rank = resultType.getRank(), axis = op.getNormalizedAxis();
    Value result = emptyTensor(rewriter, loc, resultType);
    int64_t start = 0;
    for (Value input : adaptor.getInputs()) {
      auto type = cast<RankedTensorType>(input.getType());
      SmallVector<OpFoldResult> offsets(rank, rewriter.getIndexAttr(0));
      offsets[axis] = rewriter.getIndexAttr(start);
      SmallVector<OpFoldResult> sizes, strides(rank, rewriter.getIndexAttr(1));
      for (int64_t d : type.getShape())
        sizes.push_back(rewriter.getIndexAttr(d));
      start += type.getDimSize(axis);
      Value slot = tensor::ExtractSliceOp::create(rewriter, loc, type, result,
                                                  offsets, sizes, strides);
      auto identity = rewriter.getMultiDimIdentityMap(rank);
      auto copy = linalg::GenericOp::create(
          rewriter, loc, type, input, slot,
          ArrayRef<AffineMap>{identity, identity},
          SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
          [](OpBuilder &b, Location l, ValueRange a) {
            linalg::YieldOp::create(b, l, a[0]);
          });
      result = tensor::InsertSliceOp::create(rewriter, loc, copy.getResult(0),
                                             result, offsets, sizes, strides);
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// The loop index along the axis, converted to the element type.
struct IotaLowering : OpConversionPattern<IotaOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(IotaOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto resultType = cast<RankedTensorType>(op.getType());
    Type elementType = resultType.getElementType();
    int64_t axis = op.getAxis();
    Value result = buildParallel(
        rewriter, op.getLoc(), resultType, ValueRange{}, ArrayRef<AffineMap>{},
        [&](OpBuilder &b, Location l, ValueRange) {
          Value i = linalg::IndexOp::create(b, l, axis);
          Value i64 = arith::IndexCastOp::create(b, l, b.getI64Type(), i);
          if (isa<FloatType>(elementType))
            return arith::SIToFPOp::create(b, l, elementType, i64).getResult();
          if (elementType.getIntOrFloatBitWidth() < 64)
            return arith::TruncIOp::create(b, l, elementType, i64).getResult();
          return i64;
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void populateIndexingLoweringPatterns(RewritePatternSet &patterns) {
  patterns.add<GatherLowering, ScatterAddLowering, SliceLowering, PadLowering,
               ConcatLowering, IotaLowering>(patterns.getContext());
}

} // namespace fuse::lowering
