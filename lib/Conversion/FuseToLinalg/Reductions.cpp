//===- Reductions.cpp - Lower reductions, softmax and losses --------------===//

#include "LoweringUtils.h"

#include "Fuse/IR/FuseOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"

#include <limits>

using namespace mlir;

namespace fuse::lowering {
namespace {

/// Re-inserts reduced dims as size-1 dims (keepdims).
Value expandReduced(OpBuilder &b, Location loc, Value reduced,
                    RankedTensorType resultType, ArrayRef<int64_t> axes) {
  if (reduced.getType() == resultType)
    return reduced;
  // Each kept dim owns the reduced dims before it; trailing reduced dims join
  // the last group.
  SmallVector<ReassociationIndices> groups;
  ReassociationIndices pending;
  for (int64_t d = 0; d < resultType.getRank(); ++d) {
    pending.push_back(d);
    if (!llvm::is_contained(axes, d)) {
      groups.push_back(pending);
      pending.clear();
    }
  }
  if (!groups.empty())
    groups.back().append(pending.begin(), pending.end());
  return tensor::ExpandShapeOp::create(b, loc, resultType, reduced, groups);
}

/// Divides every element of `value` by the constant `count`.
Value divideBy(OpBuilder &b, Location loc, Value value, int64_t count) {
  auto type = cast<RankedTensorType>(value.getType());
  return buildElementwise(
      b, loc, type, value, [&](OpBuilder &nb, Location nl, ValueRange a) {
        Value divisor =
            scalarConstant(nb, nl, a[0].getType(), static_cast<double>(count));
        return arith::DivFOp::create(nb, nl, a[0], divisor).getResult();
      });
}

template <typename OpTy, Combiner kCombiner, bool kMean>
struct ReduceLowering : OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  LogicalResult
  matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto inType = cast<RankedTensorType>(adaptor.getInput().getType());
    SmallVector<int64_t> axes(op.getAxes());
    llvm::sort(axes);
    Value result =
        reduceTensor(rewriter, loc, adaptor.getInput(), axes, kCombiner);
    if (kMean) {
      int64_t count = 1;
      for (int64_t axis : axes)
        count *= inType.getDimSize(axis);
      result = divideBy(rewriter, loc, result, count);
    }
    rewriter.replaceOp(
        op, expandReduced(rewriter, loc, result, op.getType(), axes));
    return success();
  }
};

/// The row maximum and the sum of exp(x - max) along `axis`: the two
/// reductions of a stable softmax.
std::pair<Value, Value> softmaxStatistics(OpBuilder &b, Location loc, Value x,
                                          int64_t axis) {
  auto type = cast<RankedTensorType>(x.getType());
  MLIRContext *context = b.getContext();
  unsigned rank = type.getRank();
  Value max = reduceTensor(b, loc, x, axis, Combiner::Max);
  Value sum = buildReduction(
      b, loc, type.getShape(), axis, type.getElementType(), {x, max},
      {b.getMultiDimIdentityMap(rank), dropDimsMap(rank, axis, context)},
      Combiner::Sum, [](OpBuilder &nb, Location nl, ValueRange a) {
        return math::ExpOp::create(nb, nl,
                                   arith::SubFOp::create(nb, nl, a[0], a[1]))
            .getResult();
      });
  return {max, sum};
}

/// softmax: exp(x - max) / sum; log-softmax: (x - max) - log(sum).
template <typename OpTy, bool kLog>
struct SoftmaxLikeLowering : OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  LogicalResult
  matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    int64_t axis = op.getNormalizedAxis();
    auto [max, sum] =
        softmaxStatistics(rewriter, loc, adaptor.getInput(), axis);
    unsigned rank = op.getType().getRank();
    AffineMap reduced = dropDimsMap(rank, axis, op.getContext());
    Value result = buildParallel(
        rewriter, loc, op.getType(), {adaptor.getInput(), max, sum},
        {rewriter.getMultiDimIdentityMap(rank), reduced, reduced},
        [](OpBuilder &b, Location l, ValueRange a) {
          Value shifted = arith::SubFOp::create(b, l, a[0], a[1]);
          if (kLog)
            return arith::SubFOp::create(b, l, shifted,
                                         math::LogOp::create(b, l, a[2]))
                .getResult();
          return arith::DivFOp::create(b, l, math::ExpOp::create(b, l, shifted),
                                       a[2])
              .getResult();
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// Inside a generic over (row, class): whether the class is the row's
/// integer `label`.
Value isLabelClass(OpBuilder &b, Location l, Value label) {
  Value c = linalg::IndexOp::create(b, l, 1);
  Value index = arith::IndexCastOp::create(b, l, b.getIndexType(), label);
  return arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, c, index);
}

/// Whether the integer `label` is a class in [0, classes): one unsigned
/// compare of the sign-extended label (a negative one is huge unsigned).
Value isClass(OpBuilder &b, Location l, Value label, int64_t classes) {
  Value index = arith::IndexCastOp::create(b, l, b.getIndexType(), label);
  Value count = arith::ConstantIndexOp::create(b, l, classes);
  return arith::CmpIOp::create(b, l, arith::CmpIPredicate::ult, index, count);
}

/// `value` where `label` is a class of `classes`, NaN otherwise: an
/// out-of-range label has no loss (the row would pick no logit and give its
/// logsumexp, a finite wrong answer), so its row is NaN, never finite.
Value nanUnlessClass(OpBuilder &b, Location l, Value label, int64_t classes,
                     Value value) {
  Value nan = scalarConstant(b, l, value.getType(),
                             std::numeric_limits<double>::quiet_NaN());
  return arith::SelectOp::create(b, l, isClass(b, l, label, classes), value,
                                 nan);
}

/// mean_i((max_i - x_{i,label_i}) + log(sum_c exp(x_ic - max_i))), each
/// row NaN where its label is outside [0, C).
struct SoftmaxCrossEntropyLowering
    : OpConversionPattern<SoftmaxCrossEntropyOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(SoftmaxCrossEntropyOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *context = getContext();
    Value logits = adaptor.getLogits();
    auto type = cast<RankedTensorType>(logits.getType());
    Type elementType = type.getElementType();
    auto [max, sum] = softmaxStatistics(rewriter, loc, logits, 1);

    // The logit of each row's label, by a masked sum over the classes.
    AffineMap rows = dropDimsMap(2, 1, context);
    Value picked = buildReduction(
        rewriter, loc, type.getShape(), 1, elementType,
        {logits, adaptor.getLabels()},
        {rewriter.getMultiDimIdentityMap(2), rows}, Combiner::Sum,
        [&](OpBuilder &b, Location l, ValueRange a) {
          Value hit = isLabelClass(b, l, a[1]);
          return arith::SelectOp::create(b, l, hit, a[0],
                                         scalarConstant(b, l, elementType, 0))
              .getResult();
        });

    AffineMap identity = rewriter.getMultiDimIdentityMap(1);
    int64_t classes = type.getDimSize(1);
    auto rowLoss = [&](OpBuilder &b, Location l, ValueRange a) {
      // (max - picked) + log(sum), not (max + log(sum)) - picked: with
      // logits near 1e4 the latter rounds at their magnitude (~5e-4
      // absolute); the difference of two close logits is exact.
      Value gap = arith::SubFOp::create(b, l, a[0], a[2]);
      Value loss =
          arith::AddFOp::create(b, l, gap, math::LogOp::create(b, l, a[1]));
      // Once per row, not per logit.
      return nanUnlessClass(b, l, a[3], classes, loss);
    };
    Value total = buildReduction(
        rewriter, loc, type.getDimSize(0), 0, elementType,
        {max, sum, picked, adaptor.getLabels()},
        {identity, identity, identity, identity}, Combiner::Sum, rowLoss);
    rewriter.replaceOp(op, divideBy(rewriter, loc, total, type.getDimSize(0)));
    return success();
  }
};

/// grad * (softmax(logits) - one_hot(labels)) / batch, in one pass over the
/// logits after the two softmax reductions; a row whose label is outside
/// [0, C) is NaN, through its scale grad / batch.
struct SoftmaxCrossEntropyGradLowering
    : OpConversionPattern<SoftmaxCrossEntropyGradOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(SoftmaxCrossEntropyGradOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *context = getContext();
    Value logits = adaptor.getLogits();
    auto type = cast<RankedTensorType>(logits.getType());
    Type elementType = type.getElementType();
    auto [max, sum] = softmaxStatistics(rewriter, loc, logits, 1);
    AffineMap rows = dropDimsMap(2, 1, context);
    int64_t batch = type.getDimSize(0), classes = type.getDimSize(1);
    // Each row's scale, checking its label once per row, not per logit.
    Value scales = buildParallel(
        rewriter, loc, RankedTensorType::get({batch}, elementType),
        {adaptor.getLabels(), adaptor.getGrad()},
        {rewriter.getMultiDimIdentityMap(1), AffineMap::get(1, 0, {}, context)},
        [&](OpBuilder &b, Location l, ValueRange a) {
          Value scale = arith::DivFOp::create(
              b, l, a[1],
              scalarConstant(b, l, elementType, static_cast<double>(batch)));
          return nanUnlessClass(b, l, a[0], classes, scale);
        });
    Value result = buildParallel(
        rewriter, loc, type, {logits, max, sum, adaptor.getLabels(), scales},
        {rewriter.getMultiDimIdentityMap(2), rows, rows, rows, rows},
        [&](OpBuilder &b, Location l, ValueRange a) {
          Value p = arith::DivFOp::create(
              b, l,
              math::ExpOp::create(b, l,
                                  arith::SubFOp::create(b, l, a[0], a[1])),
              a[2]);
          Value hit = isLabelClass(b, l, a[3]);
          Value target = arith::SelectOp::create(
              b, l, hit, scalarConstant(b, l, elementType, 1),
              scalarConstant(b, l, elementType, 0));
          return arith::MulFOp::create(
                     b, l, arith::SubFOp::create(b, l, p, target), a[4])
              .getResult();
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct MseLossLowering : OpConversionPattern<MseLossOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(MseLossOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = cast<RankedTensorType>(adaptor.getPrediction().getType());
    unsigned rank = type.getRank();
    AffineMap identity = rewriter.getMultiDimIdentityMap(rank);
    Value total = buildReduction(
        rewriter, loc, type.getShape(),
        llvm::to_vector(llvm::seq<int64_t>(0, rank)), type.getElementType(),
        {adaptor.getPrediction(), adaptor.getTarget()}, {identity, identity},
        Combiner::Sum, [](OpBuilder &b, Location l, ValueRange a) {
          Value d = arith::SubFOp::create(b, l, a[0], a[1]);
          return arith::MulFOp::create(b, l, d, d).getResult();
        });
    rewriter.replaceOp(op,
                       divideBy(rewriter, loc, total, type.getNumElements()));
    return success();
  }
};

} // namespace

void populateReductionLoweringPatterns(RewritePatternSet &patterns) {
  patterns
      .add<ReduceLowering<ReduceSumOp, Combiner::Sum, false>,
           ReduceLowering<ReduceMeanOp, Combiner::Sum, true>,
           ReduceLowering<ReduceMaxOp, Combiner::Max, false>,
           SoftmaxLikeLowering<SoftmaxOp, false>,
           SoftmaxLikeLowering<LogSoftmaxOp, true>, SoftmaxCrossEntropyLowering,
           SoftmaxCrossEntropyGradLowering, MseLossLowering>(
          patterns.getContext());
}

} // namespace fuse::lowering
