//===- FuseVJP.cpp - Vector-Jacobian products of fuse ops -----------------===//
//
// One rule per differentiable op. Each builds the gradients of its operands
// from the gradients of its results with fuse ops, so the backward pass is
// simplified, fused and lowered like the forward pass. Gradients flow through
// float tensors only; integer and boolean operands get none.
//
// Documented choices:
// - relu, abs: the subgradient at 0 is 0.
// - max/min: a tie sends the whole gradient to the left-hand operand.
// - reduce_max: the gradient is shared equally among tied maxima (as JAX).
// - dropout: recomputes the same mask from (seed, step, index); nothing is
//   saved.
// - max_pool2d: the window's first maximum (row-major, NaN first) gets the
//   window's gradient, as TensorFlow, XLA and PyTorch pick it; the forward
//   pass keeps its position (max_pool2d_indices).
//
//===----------------------------------------------------------------------===//

#include "Fuse/IR/FuseOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace fuse;

namespace {

bool isFloatTensor(Value v) {
  return isa<FloatType>(getElementTypeOrSelf(v.getType()));
}

/// A 0-d constant of `like`'s element type.
Value scalar(OpBuilder &b, Location loc, Value like, double value) {
  auto type = RankedTensorType::get({}, getElementTypeOrSelf(like.getType()));
  return ConstantOp::create(
      b, loc,
      DenseElementsAttr::get(
          type, b.getFloatAttr(type.getElementType(), value).getValue()));
}

Value zerosLike(OpBuilder &b, Location loc, Value like) {
  return FullLikeOp::create(b, loc, like, b.getF64FloatAttr(0.0));
}

Value add(OpBuilder &b, Location loc, Value x, Value y) {
  return AddOp::create(b, loc, x, y);
}
Value sub(OpBuilder &b, Location loc, Value x, Value y) {
  return SubOp::create(b, loc, x, y);
}
Value mul(OpBuilder &b, Location loc, Value x, Value y) {
  return MulOp::create(b, loc, x, y);
}
Value div(OpBuilder &b, Location loc, Value x, Value y) {
  return DivOp::create(b, loc, x, y);
}
Value neg(OpBuilder &b, Location loc, Value x) {
  return NegOp::create(b, loc, x);
}
Value compare(OpBuilder &b, Location loc, ComparePredicate p, Value x,
              Value y) {
  return CompareOp::create(b, loc, p, x, y);
}
/// `g` where `mask`, else 0.
Value where(OpBuilder &b, Location loc, Value mask, Value g) {
  return SelectOp::create(b, loc, mask, g, scalar(b, loc, g, 0.0));
}

/// The gradient of an operand of type `type` that was broadcast to the shape
/// of `grad`: summed over the dims it was stretched along.
Value unbroadcast(OpBuilder &b, Location loc, Value grad, Type type) {
  auto g = cast<RankedTensorType>(grad.getType());
  auto t = cast<RankedTensorType>(type);
  if (g == t)
    return grad;
  int64_t offset = g.getRank() - t.getRank();
  SmallVector<int64_t> leading, stretched;
  for (int64_t d = 0; d < g.getRank(); ++d) {
    if (d < offset)
      leading.push_back(d);
    else if (t.getDimSize(d - offset) == 1 && g.getDimSize(d) != 1)
      stretched.push_back(d - offset);
  }
  Value result = grad;
  if (!leading.empty())
    result = ReduceSumOp::create(b, loc, result,
                                 b.getDenseI64ArrayAttr(leading), false);
  if (!stretched.empty())
    result = ReduceSumOp::create(b, loc, result,
                                 b.getDenseI64ArrayAttr(stretched), true);
  if (result.getType() != t)
    result = ReshapeOp::create(b, loc, t, result);
  return result;
}

/// `g` (the gradient of a reduction over `axes` of `x`) spread back over
/// the shape of `x`.
Value spread(OpBuilder &b, Location loc, Value g, Value x,
             ArrayRef<int64_t> axes, bool keepdims) {
  if (!keepdims)
    g = ExpandDimsOp::create(b, loc, g, b.getDenseI64ArrayAttr(axes));
  return add(b, loc, zerosLike(b, loc, x), g);
}

/// The number of elements reduced into each output (keepdims shape).
Value reducedCount(OpBuilder &b, Location loc, Value x,
                   ArrayRef<int64_t> axes) {
  Value ones = FullLikeOp::create(b, loc, x, b.getF64FloatAttr(1.0));
  return ReduceSumOp::create(b, loc, ones, b.getDenseI64ArrayAttr(axes), true);
}

/// Fills `grads` for a binary op from gradients in the result's shape.
void binaryGrads(OpBuilder &b, Location loc, Value lhs, Value rhs, Value dl,
                 Value dr, SmallVectorImpl<Value> &grads) {
  grads.push_back(dl ? unbroadcast(b, loc, dl, lhs.getType()) : Value());
  grads.push_back(dr ? unbroadcast(b, loc, dr, rhs.getType()) : Value());
}

} // namespace

//===----------------------------------------------------------------------===//
// Element-wise unary ops: d = g * f'(x)
//===----------------------------------------------------------------------===//

#define FUSE_UNARY_VJP(OP, BODY)                                               \
  LogicalResult OP::buildVJP(OpBuilder &b, ValueRange resultGrads,             \
                             SmallVectorImpl<Value> &grads) {                  \
    Value g = resultGrads[0];                                                  \
    if (!g || !isFloatTensor(getInput())) {                                    \
      grads.push_back(Value());                                                \
      return success();                                                        \
    }                                                                          \
    Location loc = getLoc();                                                   \
    Value x = getInput(), y = getResult();                                     \
    (void)x;                                                                   \
    (void)y;                                                                   \
    grads.push_back(BODY);                                                     \
    return success();                                                          \
  }

FUSE_UNARY_VJP(NegOp, neg(b, loc, g))
FUSE_UNARY_VJP(AbsOp,
               SelectOp::create(b, loc,
                                compare(b, loc, ComparePredicate::gt, x,
                                        scalar(b, loc, x, 0)),
                                g,
                                where(b, loc,
                                      compare(b, loc, ComparePredicate::lt, x,
                                              scalar(b, loc, x, 0)),
                                      neg(b, loc, g))))
FUSE_UNARY_VJP(SquareOp, mul(b, loc, g, mul(b, loc, x, scalar(b, loc, x, 2))))
// Masked by the output (y > 0 exactly when x > 0), as PyTorch's
// threshold_backward: the pre-activation then has no use left in the
// backward pass, and fuses with the op that produces it.
FUSE_UNARY_VJP(ReluOp, where(b, loc,
                             compare(b, loc, ComparePredicate::gt, y,
                                     scalar(b, loc, y, 0)),
                             g))
FUSE_UNARY_VJP(ExpOp, mul(b, loc, g, y))
FUSE_UNARY_VJP(LogOp, div(b, loc, g, x))
FUSE_UNARY_VJP(SqrtOp, div(b, loc, g, mul(b, loc, y, scalar(b, loc, y, 2))))
FUSE_UNARY_VJP(RsqrtOp, mul(b, loc, mul(b, loc, g, scalar(b, loc, y, -0.5)),
                            mul(b, loc, y, mul(b, loc, y, y))))
FUSE_UNARY_VJP(TanhOp,
               mul(b, loc, g,
                   sub(b, loc, scalar(b, loc, y, 1), mul(b, loc, y, y))))
FUSE_UNARY_VJP(SigmoidOp, mul(b, loc, mul(b, loc, g, y),
                              sub(b, loc, scalar(b, loc, y, 1), y)))

#undef FUSE_UNARY_VJP

//===----------------------------------------------------------------------===//
// Element-wise binary ops (with broadcasting)
//===----------------------------------------------------------------------===//

#define FUSE_BINARY_VJP(OP, LHS_GRAD, RHS_GRAD)                                \
  LogicalResult OP::buildVJP(OpBuilder &b, ValueRange resultGrads,             \
                             SmallVectorImpl<Value> &grads) {                  \
    Value g = resultGrads[0];                                                  \
    if (!g || !isFloatTensor(getLhs())) {                                      \
      grads.append(2, Value());                                                \
      return success();                                                        \
    }                                                                          \
    Location loc = getLoc();                                                   \
    Value x = getLhs(), y = getRhs(), out = getResult();                       \
    (void)out;                                                                 \
    binaryGrads(b, loc, x, y, LHS_GRAD, RHS_GRAD, grads);                      \
    return success();                                                          \
  }

FUSE_BINARY_VJP(AddOp, g, g)
FUSE_BINARY_VJP(SubOp, g, neg(b, loc, g))
FUSE_BINARY_VJP(MulOp, mul(b, loc, g, y), mul(b, loc, g, x))
FUSE_BINARY_VJP(DivOp, div(b, loc, g, y),
                neg(b, loc, div(b, loc, mul(b, loc, g, out), y)))
FUSE_BINARY_VJP(MaxOp,
                where(b, loc, compare(b, loc, ComparePredicate::ge, x, y), g),
                where(b, loc, compare(b, loc, ComparePredicate::lt, x, y), g))
FUSE_BINARY_VJP(MinOp,
                where(b, loc, compare(b, loc, ComparePredicate::le, x, y), g),
                where(b, loc, compare(b, loc, ComparePredicate::gt, x, y), g))
FUSE_BINARY_VJP(PowOp,
                mul(b, loc, g,
                    mul(b, loc, y,
                        PowOp::create(b, loc, x,
                                      sub(b, loc, y, scalar(b, loc, y, 1))))),
                mul(b, loc, mul(b, loc, g, out), LogOp::create(b, loc, x)))

#undef FUSE_BINARY_VJP

LogicalResult SelectOp::buildVJP(OpBuilder &b, ValueRange resultGrads,
                                 SmallVectorImpl<Value> &grads) {
  Value g = resultGrads[0];
  grads.push_back(Value()); // the condition
  if (!g || !isFloatTensor(getTrueValue())) {
    grads.append(2, Value());
    return success();
  }
  Location loc = getLoc();
  Value zero = scalar(b, loc, g, 0);
  Value c = getCondition();
  grads.push_back(unbroadcast(b, loc, SelectOp::create(b, loc, c, g, zero),
                              getTrueValue().getType()));
  grads.push_back(unbroadcast(b, loc, SelectOp::create(b, loc, c, zero, g),
                              getFalseValue().getType()));
  return success();
}

//===----------------------------------------------------------------------===//
// Shape ops
//===----------------------------------------------------------------------===//

LogicalResult ReshapeOp::buildVJP(OpBuilder &b, ValueRange resultGrads,
                                  SmallVectorImpl<Value> &grads) {
  Value g = resultGrads[0];
  grads.push_back(
      g && isFloatTensor(g)
          ? ReshapeOp::create(b, getLoc(), getInput().getType(), g).getResult()
          : Value());
  return success();
}

LogicalResult TransposeOp::buildVJP(OpBuilder &b, ValueRange resultGrads,
                                    SmallVectorImpl<Value> &grads) {
  Value g = resultGrads[0];
  if (!g || !isFloatTensor(g)) {
    grads.push_back(Value());
    return success();
  }
  ArrayRef<int64_t> perm = getPermutation();
  SmallVector<int64_t> inverse(perm.size());
  for (auto [i, p] : llvm::enumerate(perm))
    inverse[p] = i;
  grads.push_back(
      TransposeOp::create(b, getLoc(), g, b.getDenseI64ArrayAttr(inverse)));
  return success();
}

LogicalResult BroadcastToOp::buildVJP(OpBuilder &b, ValueRange resultGrads,
                                      SmallVectorImpl<Value> &grads) {
  Value g = resultGrads[0];
  grads.push_back(g && isFloatTensor(g)
                      ? unbroadcast(b, getLoc(), g, getInput().getType())
                      : Value());
  return success();
}

LogicalResult ExpandDimsOp::buildVJP(OpBuilder &b, ValueRange resultGrads,
                                     SmallVectorImpl<Value> &grads) {
  Value g = resultGrads[0];
  grads.push_back(
      g && isFloatTensor(g)
          ? ReduceSumOp::create(b, getLoc(), g, getAxesAttr(), false)
                .getResult()
          : Value());
  return success();
}

//===----------------------------------------------------------------------===//
// Contractions: C = op(A) op(B)
//===----------------------------------------------------------------------===//

/// dA' = g B'^T, dB' = A'^T g, transposed back where A or B was transposed.
template <typename OpTy>
static LogicalResult matmulVJP(OpTy op, OpBuilder &b, ValueRange resultGrads,
                               SmallVectorImpl<Value> &grads) {
  Value g = resultGrads[0];
  if (!g || !isFloatTensor(g)) {
    grads.append(2, Value());
    return success();
  }
  Location loc = op.getLoc();
  Value a = op.getLhs(), bm = op.getRhs();
  bool ta = op.getTransposeLhs(), tb = op.getTransposeRhs();
  Value da = ta ? OpTy::create(b, loc, bm, g, /*transpose_lhs=*/tb,
                               /*transpose_rhs=*/true)
                : OpTy::create(b, loc, g, bm, /*transpose_lhs=*/false,
                               /*transpose_rhs=*/!tb);
  Value db = tb ? OpTy::create(b, loc, g, a, /*transpose_lhs=*/true,
                               /*transpose_rhs=*/ta)
                : OpTy::create(b, loc, a, g, /*transpose_lhs=*/!ta,
                               /*transpose_rhs=*/false);
  grads.push_back(da);
  grads.push_back(db);
  return success();
}

LogicalResult MatmulOp::buildVJP(OpBuilder &b, ValueRange resultGrads,
                                 SmallVectorImpl<Value> &grads) {
  return matmulVJP(*this, b, resultGrads, grads);
}

LogicalResult BatchMatmulOp::buildVJP(OpBuilder &b, ValueRange resultGrads,
                                      SmallVectorImpl<Value> &grads) {
  return matmulVJP(*this, b, resultGrads, grads);
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

LogicalResult ReduceSumOp::buildVJP(OpBuilder &b, ValueRange resultGrads,
                                    SmallVectorImpl<Value> &grads) {
  Value g = resultGrads[0];
  grads.push_back(g && isFloatTensor(g) ? spread(b, getLoc(), g, getInput(),
                                                 getAxes(), getKeepdims())
                                        : Value());
  return success();
}

LogicalResult ReduceMeanOp::buildVJP(OpBuilder &b, ValueRange resultGrads,
                                     SmallVectorImpl<Value> &grads) {
  Value g = resultGrads[0];
  if (!g) {
    grads.push_back(Value());
    return success();
  }
  Location loc = getLoc();
  Value spreadGrad = spread(b, loc, g, getInput(), getAxes(), getKeepdims());
  grads.push_back(
      div(b, loc, spreadGrad, reducedCount(b, loc, getInput(), getAxes())));
  return success();
}

LogicalResult ReduceMaxOp::buildVJP(OpBuilder &b, ValueRange resultGrads,
                                    SmallVectorImpl<Value> &grads) {
  Value g = resultGrads[0];
  if (!g || !isFloatTensor(g)) {
    grads.push_back(Value());
    return success();
  }
  Location loc = getLoc();
  Value x = getInput();
  Value max = getResult();
  if (!getKeepdims()) {
    max = ExpandDimsOp::create(b, loc, max, getAxesAttr());
    g = ExpandDimsOp::create(b, loc, g, getAxesAttr());
  }
  Value isMax = compare(b, loc, ComparePredicate::eq, x, max);
  Value ones = FullLikeOp::create(b, loc, x, b.getF64FloatAttr(1.0));
  Value ties = ReduceSumOp::create(b, loc, where(b, loc, isMax, ones),
                                   getAxesAttr(), true);
  grads.push_back(where(b, loc, isMax, div(b, loc, g, ties)));
  return success();
}

//===----------------------------------------------------------------------===//
// Neural-network ops
//===----------------------------------------------------------------------===//

LogicalResult SoftmaxOp::buildVJP(OpBuilder &b, ValueRange resultGrads,
                                  SmallVectorImpl<Value> &grads) {
  Value g = resultGrads[0];
  if (!g) {
    grads.push_back(Value());
    return success();
  }
  // dx = y * (g - sum(g * y))
  Location loc = getLoc();
  Value y = getResult();
  Value dot =
      ReduceSumOp::create(b, loc, mul(b, loc, g, y),
                          b.getDenseI64ArrayAttr({getNormalizedAxis()}), true);
  grads.push_back(mul(b, loc, y, sub(b, loc, g, dot)));
  return success();
}

LogicalResult LogSoftmaxOp::buildVJP(OpBuilder &b, ValueRange resultGrads,
                                     SmallVectorImpl<Value> &grads) {
  Value g = resultGrads[0];
  if (!g) {
    grads.push_back(Value());
    return success();
  }
  // dx = g - softmax(x) * sum(g)
  Location loc = getLoc();
  Value total = ReduceSumOp::create(
      b, loc, g, b.getDenseI64ArrayAttr({getNormalizedAxis()}), true);
  Value softmax = ExpOp::create(b, loc, getResult());
  grads.push_back(sub(b, loc, g, mul(b, loc, softmax, total)));
  return success();
}

LogicalResult SoftmaxCrossEntropyOp::buildVJP(OpBuilder &b,
                                              ValueRange resultGrads,
                                              SmallVectorImpl<Value> &grads) {
  Value g = resultGrads[0];
  grads.push_back(g ? SoftmaxCrossEntropyGradOp::create(
                          b, getLoc(), getLogits(), getLabels(), g)
                          .getResult()
                    : Value());
  grads.push_back(Value()); // labels
  return success();
}

LogicalResult MseLossOp::buildVJP(OpBuilder &b, ValueRange resultGrads,
                                  SmallVectorImpl<Value> &grads) {
  Value g = resultGrads[0];
  if (!g) {
    grads.append(2, Value());
    return success();
  }
  // d prediction = 2 g (p - t) / count; d target = -d prediction.
  Location loc = getLoc();
  Value p = getPrediction();
  auto rank = cast<RankedTensorType>(p.getType()).getRank();
  SmallVector<int64_t> all = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  Value count = reducedCount(b, loc, p, all);
  Value diff = sub(b, loc, p, getTarget());
  Value dp = div(
      b, loc, mul(b, loc, mul(b, loc, g, scalar(b, loc, g, 2)), diff), count);
  grads.push_back(dp);
  grads.push_back(neg(b, loc, dp));
  return success();
}

LogicalResult DropoutOp::buildVJP(OpBuilder &b, ValueRange resultGrads,
                                  SmallVectorImpl<Value> &grads) {
  Value g = resultGrads[0];
  // The same mask and scale: dropout of the gradient at the same step.
  grads.push_back(g ? DropoutOp::create(b, getLoc(), g, getStep(),
                                        getRateAttr(), getSeedAttr())
                          .getResult()
                    : Value());
  grads.push_back(Value()); // the step
  return success();
}

//===----------------------------------------------------------------------===//
// Convolution and pooling
//===----------------------------------------------------------------------===//

LogicalResult Conv2DOp::buildVJP(OpBuilder &b, ValueRange resultGrads,
                                 SmallVectorImpl<Value> &grads) {
  Value g = resultGrads[0];
  if (!g) {
    grads.append(2, Value());
    return success();
  }
  Location loc = getLoc();
  grads.push_back(Conv2DInputGradOp::create(
      b, loc, getInput().getType(), g, getFilter(), getInput(),
      getStridesAttr(), getPaddingAttr(), getDilationsAttr()));
  grads.push_back(Conv2DFilterGradOp::create(
      b, loc, getFilter().getType(), getInput(), g, getFilter(),
      getStridesAttr(), getPaddingAttr(), getDilationsAttr()));
  return success();
}

/// The forward pass keeps each window's argmax (as bytes for windows of up
/// to 128 elements), not the input: the gradient then reads a quarter of a
/// 2x2 pool's input size in bytes instead of the input itself.
LogicalResult MaxPool2DOp::buildVJP(OpBuilder &b, ValueRange resultGrads,
                                    SmallVectorImpl<Value> &grads) {
  Value g = resultGrads[0];
  if (!g) {
    grads.push_back(Value());
    return success();
  }
  Location loc = getLoc();
  // Beside the pool, which reads the same windows: code generation then
  // computes both in one pass over the input.
  Value indices;
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointAfter(*this);
    indices = MaxPool2DIndicesOp::create(b, loc, getInput(), getWindowAttr(),
                                         getStridesAttr(), getPaddingAttr());
  }
  grads.push_back(MaxPool2DGradOp::create(b, loc, getInput().getType(), g,
                                          indices, getInput(), getWindowAttr(),
                                          getStridesAttr(), getPaddingAttr()));
  return success();
}

LogicalResult AvgPool2DOp::buildVJP(OpBuilder &b, ValueRange resultGrads,
                                    SmallVectorImpl<Value> &grads) {
  Value g = resultGrads[0];
  grads.push_back(g ? AvgPool2DGradOp::create(
                          b, getLoc(), getInput().getType(), g, getInput(),
                          getWindowAttr(), getStridesAttr(), getPaddingAttr())
                          .getResult()
                    : Value());
  return success();
}
