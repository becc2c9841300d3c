//===- Contractions.cpp - Lower matmul, conv2d and pooling ----------------===//
//
// Contractions become linalg named ops (transposes as indexing maps, not
// copies), so the contraction code-generation strategy can match them; a
// filter gradient, which has no named op in its layouts, a contraction
// generic.
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

/// `value` as an f32 tensor: a bf16 one widened element by element (exact),
/// for the code that reads its operands in gathers, which
/// fuse-widen-bf16-operands cannot widen; any other as it is.
Value widenedBF16(OpBuilder &b, Location loc, Value value) {
  auto type = cast<RankedTensorType>(value.getType());
  if (!type.getElementType().isBF16())
    return value;
  auto extend = [](OpBuilder &nested, Location l, ValueRange a) -> Value {
    return arith::ExtFOp::create(nested, l, nested.getF32Type(), a[0]);
  };
  return buildParallel(b, loc, type.clone(b.getF32Type()), value,
                       b.getMultiDimIdentityMap(type.getRank()), extend);
}

/// `value` converted to `type` inside a linalg body: bf16 factors of an f32
/// sum are widened (exactly), as linalg's named contractions do.
Value castInBody(OpBuilder &b, Location loc, Value value, Type type) {
  if (value.getType() == type)
    return value;
  return arith::ExtFOp::create(b, loc, type, value);
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

/// A linalg convolution (NHWC input, HWCF filter) into a zero tensor of
/// `type`.
Value convolution(OpBuilder &b, Location loc, RankedTensorType type,
                  Value input, Value filter, ArrayRef<int64_t> strides,
                  ArrayRef<int64_t> dilations) {
  return linalg::Conv2DNhwcHwcfOp::create(b, loc, TypeRange{type},
                                          ValueRange{input, filter},
                                          ValueRange{zeros(b, loc, type)},
                                          windowAttrs(b, strides, dilations))
      ->getResult(0);
}

struct Conv2DLowering : OpConversionPattern<Conv2DOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(Conv2DOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    // A bf16 input (the bf16 policy's) is padded with bf16 zeros.
    Value input =
        padSpatial(rewriter, loc, adaptor.getInput(), op.getPadding(),
                   combinerIdentity(getElementTypeOrSelf(adaptor.getInput()),
                                    Combiner::Sum));
    rewriter.replaceOp(op, convolution(rewriter, loc, type, input,
                                       adaptor.getFilter(), op.getStrides(),
                                       op.getDilations()));
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

/// Index arithmetic for the gradient gathers below.
struct IndexMath {
  OpBuilder &b;
  Location loc;
  Value c(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value sub(Value x, Value y) { return arith::SubIOp::create(b, loc, x, y); }
  Value mul(Value x, int64_t k) {
    return arith::MulIOp::create(b, loc, x, c(k));
  }
  Value div(Value x, int64_t k) {
    return arith::DivSIOp::create(b, loc, x, c(k));
  }
  Value rem(Value x, int64_t k) {
    return arith::RemSIOp::create(b, loc, x, c(k));
  }
  Value cmp(arith::CmpIPredicate p, Value x, Value y) {
    return arith::CmpIOp::create(b, loc, p, x, y);
  }
  Value all(ValueRange conditions) {
    Value result = conditions.front();
    for (Value v : conditions.drop_front())
      result = arith::AndIOp::create(b, loc, result, v);
    return result;
  }
  Value pick(Value condition, Value x, Value y) {
    return arith::SelectOp::create(b, loc, condition, x, y);
  }
  Value index(unsigned d) { return linalg::IndexOp::create(b, loc, d); }
  /// The output position whose window puts offset `k * dilation` at input
  /// position `i`, and whether it exists: (i + pad - k * dilation) / stride
  /// when that divides and lies in [0, extent).
  std::pair<Value, Value> windowOf(Value i, Value k, int64_t pad,
                                   int64_t dilation, int64_t stride,
                                   int64_t extent) {
    Value shifted = sub(add(i, c(pad)), mul(k, dilation));
    Value o = div(shifted, stride);
    Value valid =
        all({cmp(arith::CmpIPredicate::sge, shifted, c(0)),
             cmp(arith::CmpIPredicate::eq, rem(shifted, stride), c(0)),
             cmp(arith::CmpIPredicate::slt, o, c(extent))});
    return {pick(valid, o, c(0)), valid};
  }
};

/// dx[n,h,w,c] = sum over (kh,kw,f) of g[n,oh,ow,f] * K[kh,kw,c,f] for the
/// window positions (oh, ow) that read (h, w) through (kh, kw).
/// With stride 1, dX is the convolution of dY, padded by the filter's
/// reach minus the forward padding, with the filter flipped in space and
/// its channels swapped: the forward convolution's fast code, no gathers.
LogicalResult inputGradAsConvolution(Conv2DInputGradOp op,
                                     Conv2DInputGradOp::Adaptor adaptor,
                                     ConversionPatternRewriter &rewriter) {
  ArrayRef<int64_t> s = op.getStrides(), p = op.getPadding(),
                    d = op.getDilations();
  auto kType = cast<RankedTensorType>(adaptor.getFilter().getType());
  if (s[0] != 1 || s[1] != 1)
    return failure();
  int64_t reachH = d[0] * (kType.getDimSize(0) - 1),
          reachW = d[1] * (kType.getDimSize(1) - 1);
  SmallVector<int64_t> gPadding = {reachH - p[0], reachH - p[1], reachW - p[2],
                                   reachW - p[3]};
  if (llvm::any_of(gPadding, [](int64_t v) { return v < 0; }))
    return failure();
  Location loc = op.getLoc();
  RankedTensorType type = op.getType();
  // The factors' element type: bf16 under the bf16 policy, whose f32 sums
  // the convolution's body widens (fuse-widen-bf16-operands widens the
  // operands once before the f32 code runs).
  Type elementType = getElementTypeOrSelf(adaptor.getGrad());
  Value g = padSpatial(rewriter, loc, adaptor.getGrad(), gPadding,
                       combinerIdentity(elementType, Combiner::Sum));
  // flipped[kh, kw, f, c] = K[KH-1-kh, KW-1-kw, c, f]
  MLIRContext *context = rewriter.getContext();
  auto dim = [&](unsigned i) { return getAffineDimExpr(i, context); };
  int64_t kh = kType.getDimSize(0), kw = kType.getDimSize(1);
  AffineMap read = AffineMap::get(
      4, 0, {kh - 1 - dim(0), kw - 1 - dim(1), dim(3), dim(2)}, context);
  auto flippedType = RankedTensorType::get(
      {kh, kw, kType.getDimSize(3), kType.getDimSize(2)}, elementType);
  Value flipped =
      linalg::GenericOp::create(
          rewriter, loc, TypeRange{flippedType},
          ValueRange{adaptor.getFilter()},
          ValueRange{emptyTensor(rewriter, loc, flippedType)},
          ArrayRef<AffineMap>{read, rewriter.getMultiDimIdentityMap(4)},
          SmallVector<utils::IteratorType>(4, utils::IteratorType::parallel),
          [](OpBuilder &b, Location l, ValueRange args) {
            linalg::YieldOp::create(b, l, args[0]);
          })
          .getResult(0);
  rewriter.replaceOp(op, convolution(rewriter, loc, type, g, flipped, s, d));
  return success();
}

struct Conv2DInputGradLowering : OpConversionPattern<Conv2DInputGradOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(Conv2DInputGradOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    auto gType = cast<RankedTensorType>(adaptor.getGrad().getType());
    auto kType = cast<RankedTensorType>(adaptor.getFilter().getType());
    ArrayRef<int64_t> s = op.getStrides(), p = op.getPadding(),
                      d = op.getDilations();
    if (succeeded(inputGradAsConvolution(op, adaptor, rewriter)))
      return success();
    // The gathers read bf16 factors widened once, here.
    Value g = widenedBF16(rewriter, loc, adaptor.getGrad());
    Value filter = widenedBF16(rewriter, loc, adaptor.getFilter());
    MLIRContext *context = getContext();
    auto dim = [&](unsigned i) { return getAffineDimExpr(i, context); };
    // Loops: n, h, w, c | kh, kw, f.
    SmallVector<int64_t> loops = {type.getDimSize(0),  type.getDimSize(1),
                                  type.getDimSize(2),  type.getDimSize(3),
                                  kType.getDimSize(0), kType.getDimSize(1),
                                  kType.getDimSize(3)};
    AffineMap filterMap =
        AffineMap::get(7, 0, {dim(4), dim(5), dim(3), dim(6)}, context);
    Value result = buildReduction(
        rewriter, loc, loops, {4, 5, 6}, type.getElementType(),
        /*inputs=*/filter, filterMap, Combiner::Sum,
        [&](OpBuilder &b, Location l, ValueRange a) {
          IndexMath m{b, l};
          auto [oh, vh] = m.windowOf(m.index(1), m.index(4), p[0], d[0], s[0],
                                     gType.getDimSize(1));
          auto [ow, vw] = m.windowOf(m.index(2), m.index(5), p[2], d[1], s[1],
                                     gType.getDimSize(2));
          Value gv = tensor::ExtractOp::create(
              b, l, g, ValueRange{m.index(0), oh, ow, m.index(6)});
          Value zero = scalarConstant(b, l, a[0].getType(), 0);
          Value term = arith::MulFOp::create(b, l, gv, a[0]);
          return m.pick(m.all({vh, vw}), term, zero);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// dK[kh,kw,c,f] = sum over (n,oh,ow) of x[n, oh*s + kh*d - p, ..., c] *
/// g[n,oh,ow,f], padding reading zeros: one contraction over
/// (kh, kw, c, f | n, oh, ow) that reads X and dY as they are stored.
/// fuse-tile-and-vectorize turns it into a matmul per filter tap and image
/// (ConvolutionTiling.cpp).
Value filterGradContraction(Conv2DFilterGradOp op,
                            Conv2DFilterGradOp::Adaptor adaptor,
                            ConversionPatternRewriter &rewriter) {
  Location loc = op.getLoc();
  RankedTensorType type = op.getType(); // KH x KW x C x F
  auto gType = cast<RankedTensorType>(adaptor.getGrad().getType());
  Value x =
      padSpatial(rewriter, loc, adaptor.getInput(), op.getPadding(),
                 combinerIdentity(getElementTypeOrSelf(adaptor.getInput()),
                                  Combiner::Sum));
  ArrayRef<int64_t> s = op.getStrides(), d = op.getDilations();
  MLIRContext *context = rewriter.getContext();
  auto dim = [&](unsigned i) { return getAffineDimExpr(i, context); };
  // Loops: kh, kw, c, f | n, oh, ow.
  SmallVector<int64_t> loops = {type.getDimSize(0),  type.getDimSize(1),
                                type.getDimSize(2),  type.getDimSize(3),
                                gType.getDimSize(0), gType.getDimSize(1),
                                gType.getDimSize(2)};
  AffineMap xMap = AffineMap::get(7, 0,
                                  {dim(4), dim(5) * s[0] + dim(0) * d[0],
                                   dim(6) * s[1] + dim(1) * d[1], dim(2)},
                                  context);
  AffineMap gMap =
      AffineMap::get(7, 0, {dim(4), dim(5), dim(6), dim(3)}, context);
  // bf16 factors (the bf16 policy's) widened, summed in f32.
  Type sum = type.getElementType();
  auto product = [&](OpBuilder &b, Location l, ValueRange a) -> Value {
    return arith::MulFOp::create(b, l, castInBody(b, l, a[0], sum),
                                 castInBody(b, l, a[1], sum));
  };
  return buildReduction(rewriter, loc, loops, {4, 5, 6}, sum,
                        {x, adaptor.getGrad()}, {xMap, gMap}, Combiner::Sum,
                        product);
}

struct Conv2DFilterGradLowering : OpConversionPattern<Conv2DFilterGradOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(Conv2DFilterGradOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, filterGradContraction(op, adaptor, rewriter));
    return success();
  }
};

/// dx[n,h,w,c] = sum over the windows reading (h, w) of their gradient
/// divided by the window's element count.
struct AvgPool2DGradLowering : OpConversionPattern<AvgPool2DGradOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(AvgPool2DGradOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    auto gType = cast<RankedTensorType>(adaptor.getGrad().getType());
    ArrayRef<int64_t> window = op.getWindow(), p = op.getPadding();
    SmallVector<int64_t> s(op.getStrides() ? *op.getStrides() : window);
    Value g = adaptor.getGrad();
    // Loops: n, h, w, c; the (small, static) window is unrolled in the body.
    int64_t height = type.getDimSize(1), width = type.getDimSize(2);
    Value result = buildParallel(
        rewriter, loc, type, adaptor.getInput(),
        rewriter.getMultiDimIdentityMap(4),
        [&](OpBuilder &b, Location l, ValueRange a) {
          IndexMath m{b, l};
          Value zero = scalarConstant(b, l, a[0].getType(), 0);
          Value acc = zero;
          for (int64_t kh = 0; kh < window[0]; ++kh)
            for (int64_t kw = 0; kw < window[1]; ++kw) {
              auto [oh, vh] = m.windowOf(m.index(1), m.c(kh), p[0], 1, s[0],
                                         gType.getDimSize(1));
              auto [ow, vw] = m.windowOf(m.index(2), m.c(kw), p[2], 1, s[1],
                                         gType.getDimSize(2));
              SmallVector<Value> position = {m.index(0), oh, ow, m.index(3)};
              Value gv = tensor::ExtractOp::create(b, l, g, position);
              Value valid = m.all({vh, vw});
              // The window's element count inside the unpadded input.
              auto covered = [&](Value o, int64_t stride, int64_t pad,
                                 int64_t size, int64_t extent) {
                Value start = m.sub(m.mul(o, stride), m.c(pad));
                Value end = arith::MinSIOp::create(
                    b, l, m.add(start, m.c(size)), m.c(extent));
                Value begin = arith::MaxSIOp::create(b, l, start, m.c(0));
                return m.sub(end, begin);
              };
              Value count = arith::MulIOp::create(
                  b, l, covered(oh, s[0], p[0], window[0], height),
                  covered(ow, s[1], p[2], window[1], width));
              Value countF = arith::SIToFPOp::create(
                  b, l, a[0].getType(),
                  arith::IndexCastOp::create(b, l, b.getI64Type(), count));
              Value term =
                  m.pick(valid, arith::DivFOp::create(b, l, gv, countF), zero);
              acc = arith::AddFOp::create(b, l, acc, term);
            }
          return acc;
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// indices[n,oh,ow,c]: the first k (row-major over the window) whose element
/// is the window's maximum. One parallel generic over the output reading
/// each window offset as a strided map of the padded input: it computes image
/// by image, so it joins the loop that produces its input.
struct MaxPool2DIndicesLowering : OpConversionPattern<MaxPool2DIndicesOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(MaxPool2DIndicesOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    auto inType = cast<RankedTensorType>(adaptor.getInput().getType());
    if (!type.hasStaticShape() || !inType.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "dynamic shape");
    Value input =
        padSpatial(rewriter, loc, adaptor.getInput(), op.getPadding(),
                   combinerIdentity(inType.getElementType(), Combiner::Max));
    ArrayRef<int64_t> window = op.getWindow();
    ArrayRef<int64_t> s = op.getEffectiveStrides();
    MLIRContext *context = rewriter.getContext();
    auto d = [&](unsigned i) { return getAffineDimExpr(i, context); };
    // A linalg op takes its loop ranges from operand dims read by a bare
    // loop index: with stride 1, offset 0 reads the input so, and then reads
    // a slice of the output's extent.
    auto paddedType = cast<RankedTensorType>(input.getType());
    SmallVector<Value> inputs;
    SmallVector<AffineMap> maps;
    for (int64_t kh = 0; kh < window[0]; ++kh)
      for (int64_t kw = 0; kw < window[1]; ++kw) {
        SmallVector<int64_t> extent(paddedType.getShape());
        if (s[0] == 1 && kh == 0)
          extent[1] = type.getDimSize(1);
        if (s[1] == 1 && kw == 0)
          extent[2] = type.getDimSize(2);
        Value read = input;
        if (extent != paddedType.getShape())
          read = tensor::ExtractSliceOp::create(
              rewriter, loc, input,
              getAsIndexOpFoldResult(context, {0, 0, 0, 0}),
              getAsIndexOpFoldResult(context, extent),
              getAsIndexOpFoldResult(context, {1, 1, 1, 1}));
        inputs.push_back(read);
        maps.push_back(AffineMap::get(
            4, 0, {d(0), d(1) * s[0] + kh, d(2) * s[1] + kw, d(3)}, context));
      }
    Type indexType = type.getElementType();
    Value result = buildParallel(
        rewriter, loc, type, inputs, maps,
        [&](OpBuilder &b, Location l, ValueRange a) {
          Value best = a[0];
          Value index = scalarConstant(b, l, indexType, 0);
          for (auto [k, value] : llvm::enumerate(a.drop_front())) {
            // Strictly greater, or the first NaN (which the pool's
            // maximumf returns): the first maximum keeps its place.
            Value greater = arith::OrIOp::create(
                b, l,
                arith::CmpFOp::create(b, l, arith::CmpFPredicate::OGT, value,
                                      best),
                arith::AndIOp::create(
                    b, l,
                    arith::CmpFOp::create(b, l, arith::CmpFPredicate::UNO,
                                          value, value),
                    arith::CmpFOp::create(b, l, arith::CmpFPredicate::ORD, best,
                                          best)));
            best = arith::SelectOp::create(b, l, greater, value, best);
            index = arith::SelectOp::create(
                b, l, greater, scalarConstant(b, l, indexType, k + 1), index);
          }
          return index;
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// dx: when the windows tile the (padded) input, one pass over it. Else, for
/// each window offset k, the strided slice of zero-filled dx that the offset
/// covers takes g where indices == k: disjoint slices when windows do not
/// overlap, sums when they do, and zeros where no window reaches.
struct MaxPool2DGradLowering : OpConversionPattern<MaxPool2DGradOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(MaxPool2DGradOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    auto gType = cast<RankedTensorType>(adaptor.getGrad().getType());
    if (!type.hasStaticShape() || !gType.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "dynamic shape");
    ArrayRef<int64_t> window = op.getWindow(), p = op.getPadding();
    SmallVector<int64_t> s(op.getStrides() ? *op.getStrides() : window);
    SmallVector<int64_t> padded(type.getShape());
    padded[1] += p[0] + p[1];
    padded[2] += p[2] + p[3];
    auto paddedType = RankedTensorType::get(padded, type.getElementType());
    bool overlaps = s[0] < window[0] || s[1] < window[1];
    bool coversAll = s[0] == window[0] && s[1] == window[1] &&
                     gType.getDimSize(1) * s[0] == padded[1] &&
                     gType.getDimSize(2) * s[1] == padded[2];
    MLIRContext *context = rewriter.getContext();
    Type indexType = getElementTypeOrSelf(adaptor.getIndices().getType());
    Value result;
    if (coversAll) {
      // Windows tile the input: one pass over dx viewed as [n, oh, kh, ow,
      // kw, c], each element taking g where the indices name (kh, kw).
      int64_t n = gType.getDimSize(0), oh = gType.getDimSize(1),
              ow = gType.getDimSize(2), c = gType.getDimSize(3);
      auto windowed = RankedTensorType::get(
          {n, oh, window[0], ow, window[1], c}, type.getElementType());
      auto d = [&](unsigned i) { return getAffineDimExpr(i, context); };
      AffineMap read = AffineMap::get(6, 0, {d(0), d(1), d(3), d(5)}, context);
      result = buildParallel(
          rewriter, loc, windowed,
          ValueRange{adaptor.getGrad(), adaptor.getIndices()}, {read, read},
          [&](OpBuilder &b, Location l, ValueRange a) {
            IndexMath m{b, l};
            Value k = m.add(m.mul(m.index(2), window[1]), m.index(4));
            Value hit = arith::CmpIOp::create(
                b, l, arith::CmpIPredicate::eq,
                arith::IndexCastOp::create(b, l, indexType, k), a[1]);
            return m.pick(hit, a[0], scalarConstant(b, l, a[0].getType(), 0));
          });
      result = tensor::CollapseShapeOp::create(
          rewriter, loc, paddedType, result,
          SmallVector<ReassociationIndices>{{0}, {1, 2}, {3, 4}, {5}});
    } else {
      result = zeros(rewriter, loc, paddedType);
      SmallVector<OpFoldResult> sizes =
          getAsIndexOpFoldResult(context, gType.getShape());
      SmallVector<OpFoldResult> strides =
          getAsIndexOpFoldResult(context, {1, s[0], s[1], 1});
      AffineMap identity = rewriter.getMultiDimIdentityMap(4);
      SmallVector<utils::IteratorType> parallel(4,
                                                utils::IteratorType::parallel);
      for (int64_t k = 0; k < window[0] * window[1]; ++k) {
        SmallVector<OpFoldResult> offsets = getAsIndexOpFoldResult(
            context, {0, k / window[1], k % window[1], 0});
        Value slice = tensor::ExtractSliceOp::create(rewriter, loc, result,
                                                     offsets, sizes, strides);
        auto body = [&](OpBuilder &b, Location l, ValueRange a) {
          Value hit =
              arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, a[1],
                                    scalarConstant(b, l, indexType, k));
          Value term = arith::SelectOp::create(
              b, l, hit, a[0], scalarConstant(b, l, a[0].getType(), 0));
          if (overlaps)
            term = arith::AddFOp::create(b, l, a[2], term);
          linalg::YieldOp::create(b, l, term);
        };
        Value part =
            linalg::GenericOp::create(
                rewriter, loc, slice.getType(),
                ValueRange{adaptor.getGrad(), adaptor.getIndices()}, slice,
                SmallVector<AffineMap>(3, identity), parallel, body)
                .getResult(0);
        result = tensor::InsertSliceOp::create(rewriter, loc, part, result,
                                               offsets, sizes, strides);
      }
    }
    if (paddedType != type)
      result = tensor::ExtractSliceOp::create(
          rewriter, loc, type, result,
          getAsIndexOpFoldResult(context, {0, p[0], p[2], 0}),
          getAsIndexOpFoldResult(context, type.getShape()),
          getAsIndexOpFoldResult(context, {1, 1, 1, 1}));
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void populateContractionLoweringPatterns(RewritePatternSet &patterns) {
  patterns.add<MatmulLowering<MatmulOp, linalg::MatmulOp, 0>,
               MatmulLowering<BatchMatmulOp, linalg::BatchMatmulOp, 1>,
               Conv2DLowering, MaxPool2DLowering, AvgPool2DLowering,
               Conv2DInputGradLowering, Conv2DFilterGradLowering,
               MaxPool2DIndicesLowering, MaxPool2DGradLowering,
               AvgPool2DGradLowering>(patterns.getContext());
}

} // namespace fuse::lowering
