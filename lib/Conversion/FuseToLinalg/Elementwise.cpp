//===- Elementwise.cpp - Lower element-wise and shape fuse ops ------------===//

#include "LoweringUtils.h"

#include "Fuse/IR/FuseOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"

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
           ConstantLowering, ReshapeLowering, TransposeLowering,
           FullLikeLowering, ExpandDimsLowering>(context);
}

} // namespace fuse::lowering
