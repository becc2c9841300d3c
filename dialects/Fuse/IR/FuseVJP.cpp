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

LogicalResult AttentionOp::buildVJP(OpBuilder &b, ValueRange resultGrads,
                                    SmallVectorImpl<Value> &grads) {
  Value g = resultGrads[0];
  if (!g) {
    grads.append(3, Value());
    return success();
  }
  auto grad = AttentionGradOp::create(
      b, getLoc(), getQuery(), getKey(), getValue(), getResult(), g,
      getCausalAttr(), b.getF64FloatAttr(getScaleOrDefault()));
  grads.append(grad->result_begin(), grad->result_end());
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
  grads.push_back(g ? DropoutOp::create(b, getLoc(), g, getStep(), getOffset(),
                                        getRateAttr(), getSeedAttr())
                          .getResult()
                    : Value());
  grads.push_back(Value()); // the step
  if (getOffset())
    grads.push_back(Value());
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

//===----------------------------------------------------------------------===//
// Sequence-model ops
//===----------------------------------------------------------------------===//

namespace {
constexpr double kTwoOverSqrtPi = 1.1283791670955126; // 2 / sqrt(pi)
constexpr double kInvSqrt2 = 0.7071067811865476;      // 1 / sqrt(2)
constexpr double kInvSqrt2Pi = 0.3989422804014327;    // 1 / sqrt(2 pi)
constexpr double kSqrt2OverPi = 0.7978845608028654;   // sqrt(2 / pi)
constexpr double kGeluCubic = 0.044715;
} // namespace

// d erf(x) = 2 / sqrt(pi) * exp(-x^2)
LogicalResult ErfOp::buildVJP(OpBuilder &b, ValueRange resultGrads,
                              SmallVectorImpl<Value> &grads) {
  Value g = resultGrads[0];
  if (!g) {
    grads.push_back(Value());
    return success();
  }
  Location loc = getLoc();
  Value x = getInput();
  Value e = ExpOp::create(b, loc, neg(b, loc, mul(b, loc, x, x)));
  grads.push_back(
      mul(b, loc, g, mul(b, loc, e, scalar(b, loc, x, kTwoOverSqrtPi))));
  return success();
}

// Exact: d = Phi(x) + x phi(x). Tanh form, with u = k (x + c x^3) and
// t = tanh(u): d = 0.5 (1 + t) + 0.5 x (1 - t^2) k (1 + 3 c x^2). Both
// from primitive ops, so a gradient of the gradient compiles.
LogicalResult GeluOp::buildVJP(OpBuilder &b, ValueRange resultGrads,
                               SmallVectorImpl<Value> &grads) {
  Value g = resultGrads[0];
  if (!g) {
    grads.push_back(Value());
    return success();
  }
  Location loc = getLoc();
  Value x = getInput();
  Value half = scalar(b, loc, x, 0.5), one = scalar(b, loc, x, 1);
  Value x2 = mul(b, loc, x, x);
  Value d;
  if (isTanh()) {
    Value inner = mul(
        b, loc, scalar(b, loc, x, kSqrt2OverPi),
        add(b, loc, x,
            mul(b, loc, scalar(b, loc, x, kGeluCubic), mul(b, loc, x2, x))));
    Value t = TanhOp::create(b, loc, inner);
    Value du = mul(
        b, loc, scalar(b, loc, x, kSqrt2OverPi),
        add(b, loc, one, mul(b, loc, scalar(b, loc, x, 3 * kGeluCubic), x2)));
    Value left = mul(b, loc, half, add(b, loc, one, t));
    Value right = mul(b, loc, mul(b, loc, half, x),
                      mul(b, loc, sub(b, loc, one, mul(b, loc, t, t)), du));
    d = add(b, loc, left, right);
  } else {
    Value cdf =
        mul(b, loc, half,
            add(b, loc, one,
                ErfOp::create(b, loc,
                              mul(b, loc, x, scalar(b, loc, x, kInvSqrt2)))));
    Value pdf =
        mul(b, loc, scalar(b, loc, x, kInvSqrt2Pi),
            ExpOp::create(b, loc, mul(b, loc, x2, scalar(b, loc, x, -0.5))));
    d = add(b, loc, cdf, mul(b, loc, x, pdf));
  }
  grads.push_back(mul(b, loc, g, d));
  return success();
}

// g where x > 0, else alpha g (PyTorch's leaky_relu_backward).
LogicalResult LeakyReluOp::buildVJP(OpBuilder &b, ValueRange resultGrads,
                                    SmallVectorImpl<Value> &grads) {
  Value g = resultGrads[0];
  if (!g) {
    grads.push_back(Value());
    return success();
  }
  Location loc = getLoc();
  Value x = getInput();
  Value positive =
      compare(b, loc, ComparePredicate::gt, x, scalar(b, loc, x, 0));
  grads.push_back(SelectOp::create(
      b, loc, positive, g,
      mul(b, loc, g, scalar(b, loc, g, getAlpha().convertToDouble()))));
  return success();
}

LogicalResult CastOp::buildVJP(OpBuilder &b, ValueRange resultGrads,
                               SmallVectorImpl<Value> &grads) {
  Value g = resultGrads[0];
  grads.push_back(
      g && isFloatTensor(g) && isFloatTensor(getInput())
          ? CastOp::create(b, getLoc(), getInput().getType(), g).getResult()
          : Value());
  return success();
}

// The gradient of a slice is zero outside it: a pad of the gradient.
LogicalResult SliceOp::buildVJP(OpBuilder &b, ValueRange resultGrads,
                                SmallVectorImpl<Value> &grads) {
  Value g = resultGrads[0];
  if (!g || !isFloatTensor(g)) {
    grads.push_back(Value());
    return success();
  }
  RankedTensorType in = getInput().getType(), out = getType();
  SmallVector<int64_t> low, high, interior;
  for (int64_t d = 0; d < in.getRank(); ++d) {
    int64_t offset = getOffsets()[d], stride = getStride(d);
    int64_t size = out.getDimSize(d), dim = in.getDimSize(d);
    low.push_back(offset);
    interior.push_back(size > 1 ? stride - 1 : 0);
    if (ShapedType::isDynamic(size)) { // the whole dim (verified)
      high.push_back(0);
      continue;
    }
    // The verifier checked offset + (size - 1) * stride < dim.
    int64_t end = size == 0 ? offset : offset + (size - 1) * stride + 1;
    high.push_back(dim - end);
  }
  grads.push_back(PadOp::create(
      b, getLoc(), g, b.getDenseI64ArrayAttr(low), b.getDenseI64ArrayAttr(high),
      b.getDenseI64ArrayAttr(interior), b.getF64FloatAttr(0.0)));
  return success();
}

// The gradient of a pad is the slice of the gradient where the input went.
LogicalResult PadOp::buildVJP(OpBuilder &b, ValueRange resultGrads,
                              SmallVectorImpl<Value> &grads) {
  Value g = resultGrads[0];
  if (!g || !isFloatTensor(g)) {
    grads.push_back(Value());
    return success();
  }
  auto in = cast<RankedTensorType>(getInput().getType());
  SmallVector<int64_t> strides;
  for (int64_t d = 0; d < in.getRank(); ++d)
    strides.push_back(getInteriorOf(d) + 1);
  grads.push_back(SliceOp::create(b, getLoc(), in, g, getLowAttr(),
                                  b.getDenseI64ArrayAttr(strides)));
  return success();
}

// Each input's gradient is its slice of the gradient.
LogicalResult ConcatOp::buildVJP(OpBuilder &b, ValueRange resultGrads,
                                 SmallVectorImpl<Value> &grads) {
  Value g = resultGrads[0];
  if (!g || !isFloatTensor(g)) {
    grads.append(getInputs().size(), Value());
    return success();
  }
  int64_t axis = getNormalizedAxis(), start = 0;
  for (Value input : getInputs()) {
    auto type = cast<RankedTensorType>(input.getType());
    SmallVector<int64_t> offsets(type.getRank(), 0);
    offsets[axis] = start;
    start += type.getDimSize(axis); // static (verified), no overflow
    grads.push_back(SliceOp::create(b, getLoc(), type, g,
                                    b.getDenseI64ArrayAttr(offsets),
                                    b.getDenseI64ArrayAttr({})));
  }
  return success();
}

// The table's gradient sums each looked-up row's gradient into its row.
LogicalResult GatherOp::buildVJP(OpBuilder &b, ValueRange resultGrads,
                                 SmallVectorImpl<Value> &grads) {
  Value g = resultGrads[0];
  grads.push_back(
      g && isFloatTensor(g)
          ? ScatterAddOp::create(b, getLoc(), g, getIndices(), getTable())
                .getResult()
          : Value());
  grads.push_back(Value()); // indices
  return success();
}

// scatter_add is linear in its updates: their gradient is a gather.
LogicalResult ScatterAddOp::buildVJP(OpBuilder &b, ValueRange resultGrads,
                                     SmallVectorImpl<Value> &grads) {
  Value g = resultGrads[0];
  grads.push_back(g ? GatherOp::create(b, getLoc(), g, getIndices()).getResult()
                    : Value());
  grads.append(2, Value()); // indices, and the table only gives the type
  return success();
}

LayerNormStatistics fuse::buildLayerNormStatistics(OpBuilder &b, Location loc,
                                                   Value x,
                                                   ArrayRef<int64_t> axes,
                                                   double epsilon) {
  DenseI64ArrayAttr axesAttr = b.getDenseI64ArrayAttr(axes);
  Value mean = ReduceMeanOp::create(b, loc, x, axesAttr, /*keepdims=*/true);
  Value centered = sub(b, loc, x, mean);
  Value var = ReduceMeanOp::create(b, loc, SquareOp::create(b, loc, centered),
                                   axesAttr, /*keepdims=*/true);
  Value rstd =
      RsqrtOp::create(b, loc, add(b, loc, var, scalar(b, loc, var, epsilon)));
  return {mean, rstd, mul(b, loc, centered, rstd)};
}

Value fuse::decomposeLayerNorm(OpBuilder &b, LayerNormOp op) {
  Location loc = op.getLoc();
  LayerNormStatistics stats =
      buildLayerNormStatistics(b, loc, op.getInput(), op.getNormalizedAxes(),
                               op.getEpsilon().convertToDouble());
  return add(b, loc, mul(b, loc, stats.xhat, op.getScale()), op.getBias());
}

// With xhat the normalized input and gx = g * scale:
//   dx = rstd * (gx - mean(gx) - xhat * mean(gx * xhat))
//   dscale = sum over the leading dims of g * xhat, dbias of g.
// The statistics are the forward pass's (the same ops, merged by CSE).
LogicalResult LayerNormOp::buildVJP(OpBuilder &b, ValueRange resultGrads,
                                    SmallVectorImpl<Value> &grads) {
  Value g = resultGrads[0];
  if (!g) {
    grads.append(3, Value());
    return success();
  }
  Location loc = getLoc();
  SmallVector<int64_t> axes = getNormalizedAxes();
  LayerNormStatistics stats = buildLayerNormStatistics(
      b, loc, getInput(), axes, getEpsilon().convertToDouble());
  DenseI64ArrayAttr axesAttr = b.getDenseI64ArrayAttr(axes);
  Value gx = mul(b, loc, g, getScale());
  Value meanGx = ReduceMeanOp::create(b, loc, gx, axesAttr, true);
  Value meanGxXhat =
      ReduceMeanOp::create(b, loc, mul(b, loc, gx, stats.xhat), axesAttr, true);
  Value dx = mul(b, loc, stats.rstd,
                 sub(b, loc, sub(b, loc, gx, meanGx),
                     mul(b, loc, stats.xhat, meanGxXhat)));
  grads.push_back(dx);
  grads.push_back(
      unbroadcast(b, loc, mul(b, loc, g, stats.xhat), getScale().getType()));
  grads.push_back(unbroadcast(b, loc, g, getBias().getType()));
  return success();
}

//===----------------------------------------------------------------------===//
// Ops the backward pass is built from (for gradients of gradients)
//===----------------------------------------------------------------------===//

// full_like reads only its operand's shape.
LogicalResult FullLikeOp::buildVJP(OpBuilder &, ValueRange,
                                   SmallVectorImpl<Value> &grads) {
  grads.push_back(Value());
  return success();
}

// The gradient ops are linear in the incoming gradient (and the
// convolution ones in the filter too): their rules are the forward ops
// they are adjoints of.

// dx = A_W^T dy: d/d dy <u, dx> = A_W u = conv2d(u, W); d/dW = the filter
// gradient of conv2d(u, W) against dy.
LogicalResult Conv2DInputGradOp::buildVJP(OpBuilder &b, ValueRange resultGrads,
                                          SmallVectorImpl<Value> &grads) {
  Value u = resultGrads[0];
  if (!u) {
    grads.append(3, Value());
    return success();
  }
  Location loc = getLoc();
  grads.push_back(Conv2DOp::create(b, loc, getGrad().getType(), u, getFilter(),
                                   getStridesAttr(), getPaddingAttr(),
                                   getDilationsAttr()));
  grads.push_back(Conv2DFilterGradOp::create(
      b, loc, getFilter().getType(), u, getGrad(), getFilter(),
      getStridesAttr(), getPaddingAttr(), getDilationsAttr()));
  grads.push_back(Value()); // only its type is used
  return success();
}

// dW with <V, dW> = <conv2d(x, V), dy>: d/dx = conv2d_input_grad(dy, V),
// d/d dy = conv2d(x, V).
LogicalResult Conv2DFilterGradOp::buildVJP(OpBuilder &b, ValueRange resultGrads,
                                           SmallVectorImpl<Value> &grads) {
  Value v = resultGrads[0];
  if (!v) {
    grads.append(3, Value());
    return success();
  }
  Location loc = getLoc();
  grads.push_back(Conv2DInputGradOp::create(
      b, loc, getInput().getType(), getGrad(), v, getInput(), getStridesAttr(),
      getPaddingAttr(), getDilationsAttr()));
  grads.push_back(Conv2DOp::create(b, loc, getGrad().getType(), getInput(), v,
                                   getStridesAttr(), getPaddingAttr(),
                                   getDilationsAttr()));
  grads.push_back(Value()); // only its type is used
  return success();
}

LogicalResult AvgPool2DGradOp::buildVJP(OpBuilder &b, ValueRange resultGrads,
                                        SmallVectorImpl<Value> &grads) {
  Value u = resultGrads[0];
  grads.push_back(u ? AvgPool2DOp::create(b, getLoc(), u, getWindowAttr(),
                                          getStridesAttr(), getPaddingAttr())
                          .getResult()
                    : Value());
  grads.push_back(Value()); // only its type is used
  return success();
}

// r = c (softmax(z) - onehot(y)) / N. d/dc = sum(u (softmax - onehot)) / N;
// d/dz = c / N * s (u - rowsum(u s)).
LogicalResult
SoftmaxCrossEntropyGradOp::buildVJP(OpBuilder &b, ValueRange resultGrads,
                                    SmallVectorImpl<Value> &grads) {
  Value u = resultGrads[0];
  if (!u) {
    grads.append(3, Value());
    return success();
  }
  Location loc = getLoc();
  Value z = getLogits();
  auto type = cast<RankedTensorType>(z.getType());
  int64_t classes = type.getDimSize(1);
  if (ShapedType::isDynamic(classes))
    return emitOpError("needs a static class count for its own gradient");
  Value s = SoftmaxOp::create(b, loc, z, b.getI64IntegerAttr(1));
  // Class ids in i64, whatever the labels' width (i8 labels, C > 128).
  auto labelType = cast<RankedTensorType>(getLabels().getType());
  Value iota = IotaOp::create(
      b, loc, RankedTensorType::get({1, classes}, b.getI64Type()),
      b.getI64IntegerAttr(1));
  Value wide =
      CastOp::create(b, loc, labelType.clone(b.getI64Type()), getLabels());
  Value labels =
      ExpandDimsOp::create(b, loc, wide, b.getDenseI64ArrayAttr({1}));
  Value isLabel = compare(b, loc, ComparePredicate::eq, labels, iota);
  Value oneHot = SelectOp::create(b, loc, isLabel, scalar(b, loc, z, 1),
                                  scalar(b, loc, z, 0));
  Value rows = reducedCount(b, loc, z, {0}); // [1, C], every entry N
  Value c = getGrad();
  Value dc = ReduceSumOp::create(
      b, loc, div(b, loc, mul(b, loc, u, sub(b, loc, s, oneHot)), rows),
      b.getDenseI64ArrayAttr({0, 1}), false);
  Value rowDot = ReduceSumOp::create(b, loc, mul(b, loc, u, s),
                                     b.getDenseI64ArrayAttr({1}), true);
  Value dz =
      mul(b, loc, div(b, loc, c, rows), mul(b, loc, s, sub(b, loc, u, rowDot)));
  grads.push_back(dz);
  grads.push_back(Value()); // labels
  grads.push_back(dc);
  return success();
}

//===----------------------------------------------------------------------===//
// Collectives
//===----------------------------------------------------------------------===//

/// y = c * sum_r p_r * x_r is linear: rank r's x gets
/// p_r * c * sum_r' dy_r', the same collective over the results' gradients
/// (every rank takes it, all in the same order) times its own prescale. The
/// prescale gets no gradient.
LogicalResult AllReduceOp::buildVJP(OpBuilder &b, ValueRange resultGrads,
                                    SmallVectorImpl<Value> &grads) {
  Location loc = getLoc();
  // Every rank reduces the same tensors: a missing gradient is zeros.
  SmallVector<Value> cotangents;
  for (auto [g, input] : llvm::zip(resultGrads, getInputs()))
    cotangents.push_back(g ? g : zerosLike(b, loc, input));
  auto reduced = AllReduceOp::create(b, loc, getKind(), cotangents, Value());
  for (Value g : reduced.getResults())
    grads.push_back(getPrescale() ? mul(b, loc, g, getPrescale()) : g);
  if (getPrescale())
    grads.push_back(Value());
  return success();
}
