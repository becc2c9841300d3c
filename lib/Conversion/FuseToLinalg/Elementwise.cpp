//===- Elementwise.cpp - Lower element-wise and shape fuse ops ------------===//

#include "LoweringUtils.h"

#include "Fuse/IR/FuseOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"

#include <cmath>

using namespace mlir;

namespace fuse::lowering {
namespace {

bool isFloat(Value v) { return isa<FloatType>(v.getType()); }

// The scalar computation of each element-wise op, on its element values.
Value scalar(NegOp, OpBuilder &b, Location loc, ValueRange a) {
  if (isFloat(a[0]))
    return arith::NegFOp::create(b, loc, a[0]);
  return arith::SubIOp::create(b, loc,
                               scalarConstant(b, loc, a[0].getType(), 0), a[0]);
}
Value scalar(AbsOp, OpBuilder &b, Location loc, ValueRange a) {
  if (isFloat(a[0]))
    return math::AbsFOp::create(b, loc, a[0]);
  return math::AbsIOp::create(b, loc, a[0]);
}
Value scalar(SquareOp, OpBuilder &b, Location loc, ValueRange a) {
  if (isFloat(a[0]))
    return arith::MulFOp::create(b, loc, a[0], a[0]);
  return arith::MulIOp::create(b, loc, a[0], a[0]);
}
Value scalar(ReluOp, OpBuilder &b, Location loc, ValueRange a) {
  Value zero = scalarConstant(b, loc, a[0].getType(), 0);
  if (isFloat(a[0]))
    return arith::MaximumFOp::create(b, loc, a[0], zero);
  return arith::MaxSIOp::create(b, loc, a[0], zero);
}
Value scalar(ExpOp, OpBuilder &b, Location loc, ValueRange a) {
  return math::ExpOp::create(b, loc, a[0]);
}
Value scalar(LogOp, OpBuilder &b, Location loc, ValueRange a) {
  return math::LogOp::create(b, loc, a[0]);
}
Value scalar(SqrtOp, OpBuilder &b, Location loc, ValueRange a) {
  return math::SqrtOp::create(b, loc, a[0]);
}
Value scalar(RsqrtOp, OpBuilder &b, Location loc, ValueRange a) {
  return math::RsqrtOp::create(b, loc, a[0]);
}
Value scalar(TanhOp, OpBuilder &b, Location loc, ValueRange a) {
  return math::TanhOp::create(b, loc, a[0]);
}
Value scalar(SigmoidOp, OpBuilder &b, Location loc, ValueRange a) {
  Type type = a[0].getType();
  Value e = math::ExpOp::create(b, loc, arith::NegFOp::create(b, loc, a[0]));
  Value one = scalarConstant(b, loc, type, 1.0);
  return arith::DivFOp::create(b, loc, one,
                               arith::AddFOp::create(b, loc, one, e));
}
/// erf in f32, whose polynomial approximation vectorizes (f16 and bf16
/// widened to it; f64 is refused before the conversion).
Value erf(OpBuilder &b, Location loc, Value x) {
  Type type = x.getType();
  if (type.isF32())
    return math::ErfOp::create(b, loc, x);
  Value wide = arith::ExtFOp::create(b, loc, b.getF32Type(), x);
  return arith::TruncFOp::create(b, loc, type,
                                 math::ErfOp::create(b, loc, wide));
}
Value scalar(ErfOp, OpBuilder &b, Location loc, ValueRange a) {
  return erf(b, loc, a[0]);
}
Value scalar(GeluOp op, OpBuilder &b, Location loc, ValueRange a) {
  Value x = a[0];
  Type type = x.getType();
  Value half = scalarConstant(b, loc, type, 0.5);
  Value one = scalarConstant(b, loc, type, 1.0);
  Value inner;
  if (op.isTanh()) {
    // sqrt(2 / pi) * (x + 0.044715 x^3)
    Value x3 =
        arith::MulFOp::create(b, loc, x, arith::MulFOp::create(b, loc, x, x));
    Value poly = arith::AddFOp::create(
        b, loc, x,
        arith::MulFOp::create(b, loc, scalarConstant(b, loc, type, 0.044715),
                              x3));
    inner = math::TanhOp::create(
        b, loc,
        arith::MulFOp::create(
            b, loc, scalarConstant(b, loc, type, 0.7978845608028654), poly));
  } else {
    inner =
        erf(b, loc,
            arith::MulFOp::create(
                b, loc, x, scalarConstant(b, loc, type, 0.7071067811865476)));
  }
  Value halfX = arith::MulFOp::create(b, loc, half, x);
  return arith::MulFOp::create(b, loc, halfX,
                               arith::AddFOp::create(b, loc, one, inner));
}
Value scalar(LeakyReluOp op, OpBuilder &b, Location loc, ValueRange a) {
  Value x = a[0];
  Type type = x.getType();
  Value positive = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, x,
                                         scalarConstant(b, loc, type, 0.0));
  Value scaled = arith::MulFOp::create(
      b, loc, x, scalarConstant(b, loc, type, op.getAlpha().convertToDouble()));
  // NaN stays NaN (alpha * NaN).
  return arith::SelectOp::create(b, loc, positive, x, scaled);
}
/// fuse.cast's conversions (the op's description): float to integer rounds
/// towards zero, saturates and maps NaN to 0, with no poison on any lane.
Value scalar(CastOp op, OpBuilder &b, Location loc, ValueRange a) {
  Value x = a[0];
  Type from = x.getType();
  Type to = cast<RankedTensorType>(op.getType()).getElementType();
  if (from == to)
    return x;
  auto fromFloat = dyn_cast<FloatType>(from);
  auto toFloat = dyn_cast<FloatType>(to);
  if (fromFloat && toFloat) {
    if (fromFloat.getWidth() < toFloat.getWidth())
      return arith::ExtFOp::create(b, loc, to, x);
    if (fromFloat.getWidth() > toFloat.getWidth())
      return arith::TruncFOp::create(b, loc, to, x);
    // f16 <-> bf16: through f32, which holds both exactly.
    Value wide = arith::ExtFOp::create(b, loc, b.getF32Type(), x);
    return arith::TruncFOp::create(b, loc, to, wide);
  }
  if (!fromFloat && toFloat) {
    if (from.isInteger(1))
      return arith::UIToFPOp::create(b, loc, to, x);
    return arith::SIToFPOp::create(b, loc, to, x);
  }
  if (!fromFloat && !toFloat) {
    unsigned fromWidth = from.getIntOrFloatBitWidth();
    unsigned toWidth = to.getIntOrFloatBitWidth();
    if (fromWidth > toWidth)
      return arith::TruncIOp::create(b, loc, to, x);
    if (from.isInteger(1))
      return arith::ExtUIOp::create(b, loc, to, x);
    return arith::ExtSIOp::create(b, loc, to, x);
  }
  // Float to integer: clamp in the float type to the integer's range (the
  // bounds rounded towards zero, so they stay in range), NaN to 0, convert;
  // then the integer's bounds where x is at or beyond 2^(bits - 1) (or
  // 2^bits unsigned), which the clamp's rounding may not reach.
  unsigned width = to.getIntOrFloatBitWidth();
  bool isSigned = width != 1;
  APInt minInt =
      isSigned ? APInt::getSignedMinValue(width) : APInt::getMinValue(width);
  APInt maxInt =
      isSigned ? APInt::getSignedMaxValue(width) : APInt::getMaxValue(width);
  const llvm::fltSemantics &sem = fromFloat.getFloatSemantics();
  APFloat lo(sem), hi(sem);
  lo.convertFromAPInt(minInt, isSigned, APFloat::rmTowardZero);
  hi.convertFromAPInt(maxInt, isSigned, APFloat::rmTowardZero);
  APFloat limit(std::ldexp(1.0, isSigned ? width - 1 : width));
  bool losesInfo;
  limit.convert(sem, APFloat::rmNearestTiesToEven, &losesInfo);
  auto constant = [&](const APFloat &v) -> Value {
    return arith::ConstantOp::create(b, loc, b.getFloatAttr(from, v));
  };
  Value loC = constant(lo), hiC = constant(hi), limitC = constant(limit);
  Value isNan = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, x, x);
  Value clamped = arith::MinimumFOp::create(
      b, loc, arith::MaximumFOp::create(b, loc, x, loC), hiC);
  Value safe = arith::SelectOp::create(
      b, loc, isNan, scalarConstant(b, loc, from, 0.0), clamped);
  Value converted = isSigned
                        ? arith::FPToSIOp::create(b, loc, to, safe).getResult()
                        : arith::FPToUIOp::create(b, loc, to, safe).getResult();
  Value above =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGE, x, limitC);
  Value maxV = arith::ConstantOp::create(b, loc, b.getIntegerAttr(to, maxInt));
  converted = arith::SelectOp::create(b, loc, above, maxV, converted);
  if (!isSigned)
    return converted;
  Value below = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLE, x,
                                      constant(-limit));
  Value minV = arith::ConstantOp::create(b, loc, b.getIntegerAttr(to, minInt));
  return arith::SelectOp::create(b, loc, below, minV, converted);
}
Value scalar(HighHalfOp, OpBuilder &b, Location loc, ValueRange a) {
  return HighHalfOp::buildScalar(b, loc, a[0]);
}
Value scalar(LowHalfOp, OpBuilder &b, Location loc, ValueRange a) {
  return LowHalfOp::buildScalar(b, loc, a[0]);
}
Value scalar(JoinHalvesOp, OpBuilder &b, Location loc, ValueRange a) {
  return JoinHalvesOp::buildScalar(b, loc, a[0], a[1]);
}
Value scalar(AddOp, OpBuilder &b, Location loc, ValueRange a) {
  if (isFloat(a[0]))
    return arith::AddFOp::create(b, loc, a[0], a[1]);
  return arith::AddIOp::create(b, loc, a[0], a[1]);
}
Value scalar(SubOp, OpBuilder &b, Location loc, ValueRange a) {
  if (isFloat(a[0]))
    return arith::SubFOp::create(b, loc, a[0], a[1]);
  return arith::SubIOp::create(b, loc, a[0], a[1]);
}
Value scalar(MulOp, OpBuilder &b, Location loc, ValueRange a) {
  if (isFloat(a[0]))
    return arith::MulFOp::create(b, loc, a[0], a[1]);
  return arith::MulIOp::create(b, loc, a[0], a[1]);
}
Value scalar(DivOp, OpBuilder &b, Location loc, ValueRange a) {
  if (isFloat(a[0]))
    return arith::DivFOp::create(b, loc, a[0], a[1]);
  // XLA's semantics without a trap on any lane: x / 0 is -1 and INT_MIN / -1
  // is INT_MIN. The division only ever sees a safe divisor (1 in those
  // cases), so vectorized and scalar code agree with the folder.
  auto type = cast<IntegerType>(a[0].getType());
  unsigned width = type.getWidth();
  auto constant = [&](const APInt &v) -> Value {
    return arith::ConstantOp::create(b, loc, b.getIntegerAttr(type, v));
  };
  Value allOnes = constant(APInt::getAllOnes(width));
  Value isZero = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, a[1],
                                       constant(APInt::getZero(width)));
  // i1 has no safe divisor other than -1 itself: x / -1 is x there (-(-1)
  // wraps to -1), and x / 0 is -1.
  if (width == 1)
    return arith::SelectOp::create(b, loc, isZero, allOnes, a[0]);
  Value isMin =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, a[0],
                            constant(APInt::getSignedMinValue(width)));
  Value isMinusOne =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, a[1], allOnes);
  Value overflows = arith::AndIOp::create(b, loc, isMin, isMinusOne);
  Value unsafe = arith::OrIOp::create(b, loc, isZero, overflows);
  Value one = constant(APInt(width, 1));
  Value divisor = arith::SelectOp::create(b, loc, unsafe, one, a[1]);
  Value quotient = arith::DivSIOp::create(b, loc, a[0], divisor);
  return arith::SelectOp::create(b, loc, isZero, allOnes, quotient);
}
Value scalar(MaxOp, OpBuilder &b, Location loc, ValueRange a) {
  if (isFloat(a[0]))
    return arith::MaximumFOp::create(b, loc, a[0], a[1]);
  return arith::MaxSIOp::create(b, loc, a[0], a[1]);
}
Value scalar(MinOp, OpBuilder &b, Location loc, ValueRange a) {
  if (isFloat(a[0]))
    return arith::MinimumFOp::create(b, loc, a[0], a[1]);
  return arith::MinSIOp::create(b, loc, a[0], a[1]);
}
Value scalar(PowOp, OpBuilder &b, Location loc, ValueRange a) {
  return math::PowFOp::create(b, loc, a[0], a[1]);
}
arith::CmpFPredicate floatPredicate(ComparePredicate predicate) {
  switch (predicate) {
  case ComparePredicate::eq:
    return arith::CmpFPredicate::OEQ;
  case ComparePredicate::ne:
    return arith::CmpFPredicate::UNE;
  case ComparePredicate::lt:
    return arith::CmpFPredicate::OLT;
  case ComparePredicate::le:
    return arith::CmpFPredicate::OLE;
  case ComparePredicate::gt:
    return arith::CmpFPredicate::OGT;
  case ComparePredicate::ge:
    return arith::CmpFPredicate::OGE;
  }
  llvm_unreachable("unknown compare predicate");
}
arith::CmpIPredicate intPredicate(ComparePredicate predicate) {
  switch (predicate) {
  case ComparePredicate::eq:
    return arith::CmpIPredicate::eq;
  case ComparePredicate::ne:
    return arith::CmpIPredicate::ne;
  case ComparePredicate::lt:
    return arith::CmpIPredicate::slt;
  case ComparePredicate::le:
    return arith::CmpIPredicate::sle;
  case ComparePredicate::gt:
    return arith::CmpIPredicate::sgt;
  case ComparePredicate::ge:
    return arith::CmpIPredicate::sge;
  }
  llvm_unreachable("unknown compare predicate");
}
Value scalar(CompareOp op, OpBuilder &b, Location loc, ValueRange a) {
  if (isFloat(a[0]))
    return arith::CmpFOp::create(b, loc, floatPredicate(op.getPredicate()),
                                 a[0], a[1]);
  return arith::CmpIOp::create(b, loc, intPredicate(op.getPredicate()), a[0],
                               a[1]);
}
Value scalar(SelectOp, OpBuilder &b, Location loc, ValueRange a) {
  return arith::SelectOp::create(b, loc, a[0], a[1], a[2]);
}
Value scalar(BroadcastToOp, OpBuilder &, Location, ValueRange a) {
  return a[0];
}

/// Lowers an element-wise op to one broadcasting `linalg.generic`.
template <typename OpTy>
struct ElementwiseLowering : OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  LogicalResult
  matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto resultType = cast<RankedTensorType>(op.getType());
    Value result = buildElementwise(
        rewriter, op.getLoc(), resultType, adaptor.getOperands(),
        [&](OpBuilder &b, Location loc, ValueRange args) {
          return scalar(op, b, loc, args);
        });
    if (op->hasAttr(kMaterializeAttrName))
      if (Operation *generic = result.getDefiningOp())
        generic->setAttr(kMaterializeAttrName, rewriter.getUnitAttr());
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct ConstantLowering : OpConversionPattern<ConstantOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ConstantOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<arith::ConstantOp>(
        op, cast<TypedAttr>(op.getValue()));
    return success();
  }
};

struct ReshapeLowering : OpConversionPattern<ReshapeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ReshapeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, reshapeTensor(rewriter, op.getLoc(),
                                         adaptor.getInput(), op.getType()));
    return success();
  }
};

struct TransposeLowering : OpConversionPattern<TransposeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(TransposeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Value init = emptyTensor(rewriter, op.getLoc(), op.getType());
    rewriter.replaceOp(op, linalg::TransposeOp::create(rewriter, op.getLoc(),
                                                       adaptor.getInput(), init,
                                                       op.getPermutation())
                               .getResult());
    return success();
  }
};

struct FullLikeLowering : OpConversionPattern<FullLikeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(FullLikeOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    RankedTensorType type = op.getType();
    Type elementType = type.getElementType();
    double value = op.getValue().convertToDouble();
    TypedAttr fill = isa<FloatType>(elementType)
                         ? TypedAttr(rewriter.getFloatAttr(elementType, value))
                         : TypedAttr(rewriter.getIntegerAttr(
                               elementType, static_cast<int64_t>(value)));
    rewriter.replaceOp(op, filledTensor(rewriter, op.getLoc(), type, fill));
    return success();
  }
};

struct ExpandDimsLowering : OpConversionPattern<ExpandDimsOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ExpandDimsOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, reshapeTensor(rewriter, op.getLoc(),
                                         adaptor.getInput(), op.getType()));
    return success();
  }
};

/// Normally expanded before (fuse-decompose-layer-norm, in the simplify
/// pipeline, so that CSE shares the statistics with the gradient); the
/// conversion legalizes the primitive ops it builds.
struct LayerNormLowering : OpConversionPattern<LayerNormOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(LayerNormOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, decomposeLayerNorm(rewriter, op));
    return success();
  }
};

} // namespace

void populateElementwiseLoweringPatterns(RewritePatternSet &patterns) {
  MLIRContext *context = patterns.getContext();
  patterns
      .add<ElementwiseLowering<NegOp>, ElementwiseLowering<AbsOp>,
           ElementwiseLowering<SquareOp>, ElementwiseLowering<ReluOp>,
           ElementwiseLowering<ExpOp>, ElementwiseLowering<LogOp>,
           ElementwiseLowering<SqrtOp>, ElementwiseLowering<RsqrtOp>,
           ElementwiseLowering<TanhOp>, ElementwiseLowering<SigmoidOp>,
           ElementwiseLowering<AddOp>, ElementwiseLowering<SubOp>,
           ElementwiseLowering<MulOp>, ElementwiseLowering<DivOp>,
           ElementwiseLowering<MaxOp>, ElementwiseLowering<MinOp>,
           ElementwiseLowering<PowOp>, ElementwiseLowering<CompareOp>,
           ElementwiseLowering<SelectOp>, ElementwiseLowering<BroadcastToOp>,
           ElementwiseLowering<ErfOp>, ElementwiseLowering<GeluOp>,
           ElementwiseLowering<LeakyReluOp>, ElementwiseLowering<CastOp>,
           ElementwiseLowering<HighHalfOp>, ElementwiseLowering<LowHalfOp>,
           ElementwiseLowering<JoinHalvesOp>, LayerNormLowering,
           ConstantLowering, ReshapeLowering, TransposeLowering,
           FullLikeLowering, ExpandDimsLowering>(context);
}

} // namespace fuse::lowering
