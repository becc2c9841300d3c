//===- Contractions.cpp - Lower matmul, conv2d and pooling ----------------===//
//
// Contractions become linalg named ops (transposes as indexing maps, not
// copies), so the contraction code-generation strategy can match them.
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"

#include "Fuse/IR/FuseOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;

namespace fuse::lowering {
namespace {

/// A zero-filled accumulator of `type`.
Value zeros(OpBuilder &b, Location loc, RankedTensorType type) {
  return filledTensor(b, loc, type,
                      combinerIdentity(type.getElementType(), Combiner::Sum));
}

/// Indexing maps of `op(lhs) x op(rhs)` over (batch..., m, n, k).
ArrayAttr matmulMaps(OpBuilder &b, unsigned batchDims, bool transposeLhs,
                     bool transposeRhs) {
  MLIRContext *context = b.getContext();
  unsigned rank = batchDims + 3;
  SmallVector<AffineExpr> batch;
  for (unsigned d = 0; d < batchDims; ++d)
    batch.push_back(getAffineDimExpr(d, context));
  AffineExpr m = getAffineDimExpr(batchDims, context);
  AffineExpr n = getAffineDimExpr(batchDims + 1, context);
  AffineExpr k = getAffineDimExpr(batchDims + 2, context);
  auto map = [&](AffineExpr row, AffineExpr col) {
    SmallVector<AffineExpr> exprs(batch);
    exprs.push_back(row);
    exprs.push_back(col);
    return AffineMap::get(rank, 0, exprs, context);
  };
  return b.getAffineMapArrayAttr({transposeLhs ? map(k, m) : map(m, k),
                                  transposeRhs ? map(n, k) : map(k, n),
                                  map(m, n)});
}

template <typename OpTy, typename LinalgOpTy, unsigned kBatchDims>
struct MatmulLowering : OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  LogicalResult
  matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = cast<RankedTensorType>(op.getType());
    SmallVector<NamedAttribute> attrs;
    if (op.getTransposeLhs() || op.getTransposeRhs())
      attrs.push_back(rewriter.getNamedAttr("indexing_maps",
                                            matmulMaps(rewriter, kBatchDims,
                                                       op.getTransposeLhs(),
                                                       op.getTransposeRhs())));
    auto matmul =
        LinalgOpTy::create(rewriter, loc, TypeRange{type},
                           ValueRange{adaptor.getLhs(), adaptor.getRhs()},
                           ValueRange{zeros(rewriter, loc, type)}, attrs);
    rewriter.replaceOp(op, matmul->getResult(0));
    return success();
  }
};

/// Pads the H and W dims of an NHWC tensor by [top, bottom, left, right].
Value padSpatial(OpBuilder &b, Location loc, Value input,
                 ArrayRef<int64_t> padding, TypedAttr value) {
  if (llvm::all_of(padding, [](int64_t p) { return p == 0; }))
    return input;
  auto type = cast<RankedTensorType>(input.getType());
  SmallVector<int64_t> shape(type.getShape());
  shape[1] += padding[0] + padding[1];
  shape[2] += padding[2] + padding[3];
  SmallVector<OpFoldResult> low = {
      b.getIndexAttr(0), b.getIndexAttr(padding[0]), b.getIndexAttr(padding[2]),
      b.getIndexAttr(0)};
  SmallVector<OpFoldResult> high = {
      b.getIndexAttr(0), b.getIndexAttr(padding[1]), b.getIndexAttr(padding[3]),
      b.getIndexAttr(0)};
  Value padValue = arith::ConstantOp::create(b, loc, value);
  return tensor::PadOp::create(
      b, loc, RankedTensorType::get(shape, type.getElementType()), input, low,
      high, padValue);
}

SmallVector<NamedAttribute> windowAttrs(OpBuilder &b, ArrayRef<int64_t> strides,
                                        ArrayRef<int64_t> dilations) {
  return {b.getNamedAttr("strides", b.getI64VectorAttr(strides)),
          b.getNamedAttr("dilations", b.getI64VectorAttr(dilations))};
}

struct Conv2DLowering : OpConversionPattern<Conv2DOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(Conv2DOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    Value input =
        padSpatial(rewriter, loc, adaptor.getInput(), op.getPadding(),
                   combinerIdentity(type.getElementType(), Combiner::Sum));
    auto conv = linalg::Conv2DNhwcHwcfOp::create(
        rewriter, loc, TypeRange{type}, ValueRange{input, adaptor.getFilter()},
        ValueRange{zeros(rewriter, loc, type)},
        windowAttrs(rewriter, op.getStrides(), op.getDilations()));
    rewriter.replaceOp(op, conv->getResult(0));
    return success();
  }
};

struct MaxPool2DLowering : OpConversionPattern<MaxPool2DOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(MaxPool2DOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    TypedAttr lowest = combinerIdentity(type.getElementType(), Combiner::Max);
    Value input =
        padSpatial(rewriter, loc, adaptor.getInput(), op.getPadding(), lowest);
    Value window = tensor::EmptyOp::create(rewriter, loc, op.getWindow(),
                                           type.getElementType());
    auto pool = linalg::PoolingNhwcMaxOp::create(
        rewriter, loc, TypeRange{type}, ValueRange{input, window},
        ValueRange{filledTensor(rewriter, loc, type, lowest)},
        windowAttrs(rewriter, op.getEffectiveStrides(), {1, 1}));
    rewriter.replaceOp(op, pool->getResult(0));
    return success();
  }
};

/// Sums windows, then divides each output by the number of input (not
/// padding) elements its window covers.
struct AvgPool2DLowering : OpConversionPattern<AvgPool2DOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(AvgPool2DOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    Type elementType = type.getElementType();
    ArrayRef<int64_t> padding = op.getPadding();
    ArrayRef<int64_t> window = op.getWindow();
    ArrayRef<int64_t> strides = op.getEffectiveStrides();
    Value input = padSpatial(rewriter, loc, adaptor.getInput(), padding,
                             combinerIdentity(elementType, Combiner::Sum));
    Value windowTensor =
        tensor::EmptyOp::create(rewriter, loc, window, elementType);
    Value sum =
        linalg::PoolingNhwcSumOp::create(rewriter, loc, TypeRange{type},
                                         ValueRange{input, windowTensor},
                                         ValueRange{zeros(rewriter, loc, type)},
                                         windowAttrs(rewriter, strides, {1, 1}))
            ->getResult(0);

    // counts[h][w]: window elements inside the unpadded input.
    auto inType = cast<RankedTensorType>(adaptor.getInput().getType());
    int64_t outH = type.getDimSize(1), outW = type.getDimSize(2);
    auto covered = [](int64_t start, int64_t size, int64_t extent) {
      return std::max<int64_t>(0, std::min(start + size, extent) -
                                      std::max<int64_t>(start, 0));
    };
    SmallVector<APFloat> counts;
    auto floatType = cast<FloatType>(elementType);
    for (int64_t h = 0; h < outH; ++h)
      for (int64_t w = 0; w < outW; ++w) {
        int64_t n = covered(h * strides[0] - padding[0], window[0],
                            inType.getDimSize(1)) *
                    covered(w * strides[1] - padding[2], window[1],
                            inType.getDimSize(2));
        APFloat count(static_cast<double>(n));
        bool losesInfo;
        count.convert(floatType.getFloatSemantics(),
                      APFloat::rmNearestTiesToEven, &losesInfo);
        counts.push_back(count);
      }
    auto countType = RankedTensorType::get({outH, outW}, elementType);
    Value countTensor = arith::ConstantOp::create(
        rewriter, loc, DenseElementsAttr::get(countType, counts));
    MLIRContext *context = getContext();
    AffineMap spatial = AffineMap::get(
        4, 0, {getAffineDimExpr(1, context), getAffineDimExpr(2, context)},
        context);
    Value result = buildParallel(
        rewriter, loc, type, {sum, countTensor},
        {rewriter.getMultiDimIdentityMap(4), spatial},
        [](OpBuilder &b, Location l, ValueRange a) {
          return arith::DivFOp::create(b, l, a[0], a[1]).getResult();
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void populateContractionLoweringPatterns(RewritePatternSet &patterns) {
  patterns.add<MatmulLowering<MatmulOp, linalg::MatmulOp, 0>,
               MatmulLowering<BatchMatmulOp, linalg::BatchMatmulOp, 1>,
               Conv2DLowering, MaxPool2DLowering, AvgPool2DLowering>(
      patterns.getContext());
}

} // namespace fuse::lowering
