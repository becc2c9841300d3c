//===- FuseFolders.cpp - fuse folds and canonicalizations -----------------===//
//
// Constant folding (bounded by kMaxFoldedElements, splats exempt) and
// algebraic identities. A fold never changes a value's type: an identity such
// as `x + 0` folds only when the result type equals the type of `x`.
//
//===----------------------------------------------------------------------===//

#include "Fuse/IR/FuseOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/APInt.h"
#include "llvm/ADT/APSInt.h"

#include <cmath>

using namespace mlir;
using namespace fuse;

namespace {
#include "Fuse/FuseCanonicalize.inc"
} // namespace

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

/// A constant operand as dense elements, or null.
static DenseElementsAttr dense(Attribute attr) {
  return dyn_cast_if_present<DenseElementsAttr>(attr);
}

/// Whether folding into `type` may materialize a non-splat constant.
static bool mayMaterialize(ShapedType type) {
  if (!type.hasStaticShape())
    return false;
  std::optional<int64_t> count = checkedNumElements(type.getShape());
  return count && *count <= kMaxFoldedElements;
}

/// Whether `value` is a splat constant equal to `scalar` (an integer or a
/// float, compared exactly).
static bool isSplatOf(Attribute attr, double scalar) {
  DenseElementsAttr elements = dense(attr);
  if (!elements || !elements.isSplat())
    return false;
  Type elementType = elements.getElementType();
  if (isa<FloatType>(elementType))
    return elements.getSplatValue<APFloat>().convertToDouble() == scalar;
  if (isa<IntegerType>(elementType))
    return elements.getSplatValue<APInt>().getSExtValue() ==
           static_cast<int64_t>(scalar);
  return false;
}

/// Row-major strides of `shape`.
static SmallVector<int64_t> stridesOf(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> strides(shape.size(), 1);
  for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * shape[i + 1];
  return strides;
}

/// The elements of `attr` broadcast (NumPy rules) to the static `shape`.
template <typename T>
static SmallVector<T> broadcastValues(DenseElementsAttr attr,
                                      ArrayRef<int64_t> shape) {
  int64_t count = ShapedType::getNumElements(shape);
  if (attr.isSplat())
    return SmallVector<T>(count, attr.getSplatValue<T>());
  SmallVector<T> source(attr.getValues<T>());
  ArrayRef<int64_t> inShape = attr.getType().getShape();
  SmallVector<int64_t> inStrides = stridesOf(inShape);
  size_t offset = shape.size() - inShape.size();
  SmallVector<T> result;
  result.reserve(count);
  SmallVector<int64_t> index(shape.size(), 0);
  for (int64_t linear = 0; linear < count; ++linear) {
    int64_t at = 0;
    for (size_t d = 0; d < inShape.size(); ++d)
      if (inShape[d] != 1)
        at += index[offset + d] * inStrides[d];
    result.push_back(source[at]);
    for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
      if (++index[d] < shape[d])
        break;
      index[d] = 0;
    }
  }
  return result;
}

/// Rounds a double to `type`'s float semantics.
static APFloat toFloat(double value, FloatType type) {
  APFloat result(value);
  bool losesInfo;
  result.convert(type.getFloatSemantics(), APFloat::rmNearestTiesToEven,
                 &losesInfo);
  return result;
}

using FloatFn = function_ref<std::optional<APFloat>(const APFloat &)>;
using IntFn = function_ref<std::optional<APInt>(const APInt &)>;
using FloatBinFn =
    function_ref<std::optional<APFloat>(const APFloat &, const APFloat &)>;
using IntBinFn =
    function_ref<std::optional<APInt>(const APInt &, const APInt &)>;

/// Folds an element-wise unary op on a constant; a null function means the
/// op does not fold for that element kind.
static Attribute foldUnary(Attribute operand, ShapedType resultType,
                           FloatFn floatFn, IntFn intFn) {
  DenseElementsAttr elements = dense(operand);
  if (!elements || (!elements.isSplat() && !mayMaterialize(resultType)))
    return {};
  if (isa<FloatType>(elements.getElementType())) {
    if (!floatFn)
      return {};
    SmallVector<APFloat> values;
    for (const APFloat &v :
         elements.isSplat()
             ? SmallVector<APFloat>{elements.getSplatValue<APFloat>()}
             : SmallVector<APFloat>(elements.getValues<APFloat>())) {
      std::optional<APFloat> r = floatFn(v);
      if (!r)
        return {};
      values.push_back(*r);
    }
    return DenseElementsAttr::get(resultType, values);
  }
  if (!intFn)
    return {};
  SmallVector<APInt> values;
  for (const APInt &v :
       elements.isSplat() ? SmallVector<APInt>{elements.getSplatValue<APInt>()}
                          : SmallVector<APInt>(elements.getValues<APInt>())) {
    std::optional<APInt> r = intFn(v);
    if (!r)
      return {};
    values.push_back(*r);
  }
  return DenseElementsAttr::get(resultType, values);
}

/// Folds an element-wise unary float op through `double` math.
static Attribute foldUnaryMath(Attribute operand, ShapedType resultType,
                               double (*fn)(double)) {
  auto floatType = cast<FloatType>(resultType.getElementType());
  return foldUnary(
      operand, resultType,
      [&](const APFloat &v) -> std::optional<APFloat> {
        return toFloat(fn(v.convertToDouble()), floatType);
      },
      nullptr);
}

/// Folds an element-wise binary op on two constants with broadcasting.
/// `resultElementType` defaults to the operands'.
static Attribute foldBinary(Attribute lhsAttr, Attribute rhsAttr,
                            ShapedType resultType, FloatBinFn floatFn,
                            IntBinFn intFn) {
  DenseElementsAttr lhs = dense(lhsAttr), rhs = dense(rhsAttr);
  if (!lhs || !rhs)
    return {};
  bool splat = lhs.isSplat() && rhs.isSplat();
  if (!resultType.hasStaticShape() || (!splat && !mayMaterialize(resultType)))
    return {};
  ArrayRef<int64_t> shape = splat ? ArrayRef<int64_t>{} : resultType.getShape();
  auto apply = [&](auto values, auto fn) -> Attribute {
    using T = typename decltype(values)::value_type;
    SmallVector<T> l = broadcastValues<T>(lhs, shape);
    SmallVector<T> r = broadcastValues<T>(rhs, shape);
    SmallVector<T> out;
    for (size_t i = 0; i < l.size(); ++i) {
      auto v = fn(l[i], r[i]);
      if (!v)
        return {};
      out.push_back(*v);
    }
    return DenseElementsAttr::get(resultType, out);
  };
  if (isa<FloatType>(lhs.getElementType()))
    return floatFn ? apply(SmallVector<APFloat>{}, floatFn) : Attribute();
  return intFn ? apply(SmallVector<APInt>{}, intFn) : Attribute();
}

/// Returns `value` if its type is the op's result type (the fold keeps
/// types), else null.
static OpFoldResult sameTypeOrNull(Value value, Type resultType) {
  return value.getType() == resultType ? OpFoldResult(value) : OpFoldResult();
}

//===----------------------------------------------------------------------===//
// Constant and unary ops
//===----------------------------------------------------------------------===//

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }

OpFoldResult NegOp::fold(FoldAdaptor adaptor) {
  if (auto inner = getInput().getDefiningOp<NegOp>())
    return inner.getInput();
  return foldUnary(
      adaptor.getInput(), getType(), [](const APFloat &v) { return neg(v); },
      [](const APInt &v) -> std::optional<APInt> { return -v; });
}

OpFoldResult AbsOp::fold(FoldAdaptor adaptor) {
  if (getInput().getDefiningOp<AbsOp>())
    return getInput();
  return foldUnary(
      adaptor.getInput(), getType(), [](const APFloat &v) { return abs(v); },
      [](const APInt &v) -> std::optional<APInt> { return v.abs(); });
}

OpFoldResult SquareOp::fold(FoldAdaptor adaptor) {
  return foldUnary(
      adaptor.getInput(), getType(),
      [](const APFloat &v) -> std::optional<APFloat> { return v * v; },
      [](const APInt &v) -> std::optional<APInt> { return v * v; });
}

OpFoldResult ReluOp::fold(FoldAdaptor adaptor) {
  if (getInput().getDefiningOp<ReluOp>())
    return getInput();
  return foldUnary(
      adaptor.getInput(), getType(),
      [](const APFloat &v) -> std::optional<APFloat> {
        return v.isNegative() && !v.isNaN() ? APFloat::getZero(v.getSemantics())
                                            : v;
      },
      [](const APInt &v) -> std::optional<APInt> {
        return v.isNegative() ? APInt::getZero(v.getBitWidth()) : v;
      });
}

OpFoldResult ExpOp::fold(FoldAdaptor adaptor) {
  return foldUnaryMath(adaptor.getInput(), getType(),
                       [](double x) { return std::exp(x); });
}

OpFoldResult LogOp::fold(FoldAdaptor adaptor) {
  return foldUnaryMath(adaptor.getInput(), getType(),
                       [](double x) { return std::log(x); });
}

OpFoldResult SqrtOp::fold(FoldAdaptor adaptor) {
  return foldUnaryMath(adaptor.getInput(), getType(),
                       [](double x) { return std::sqrt(x); });
}

OpFoldResult RsqrtOp::fold(FoldAdaptor adaptor) {
  return foldUnaryMath(adaptor.getInput(), getType(),
                       [](double x) { return 1.0 / std::sqrt(x); });
}

OpFoldResult TanhOp::fold(FoldAdaptor adaptor) {
  return foldUnaryMath(adaptor.getInput(), getType(),
                       [](double x) { return std::tanh(x); });
}

OpFoldResult SigmoidOp::fold(FoldAdaptor adaptor) {
  return foldUnaryMath(adaptor.getInput(), getType(),
                       [](double x) { return 1.0 / (1.0 + std::exp(-x)); });
}

//===----------------------------------------------------------------------===//
// Binary ops
//===----------------------------------------------------------------------===//

OpFoldResult AddOp::fold(FoldAdaptor adaptor) {
  if (isSplatOf(adaptor.getRhs(), 0))
    if (OpFoldResult r = sameTypeOrNull(getLhs(), getType()))
      return r;
  return foldBinary(
      adaptor.getLhs(), adaptor.getRhs(), getType(),
      [](const APFloat &a, const APFloat &b) -> std::optional<APFloat> {
        return a + b;
      },
      [](const APInt &a, const APInt &b) -> std::optional<APInt> {
        return a + b;
      });
}

OpFoldResult SubOp::fold(FoldAdaptor adaptor) {
  if (isSplatOf(adaptor.getRhs(), 0))
    if (OpFoldResult r = sameTypeOrNull(getLhs(), getType()))
      return r;
  // x - x is 0 only for integers: inf - inf and NaN - NaN are NaN.
  auto type = getType();
  if (getLhs() == getRhs() && isa<IntegerType>(type.getElementType()) &&
      type.hasStaticShape())
    return DenseElementsAttr::get(
        type, APInt::getZero(type.getElementType().getIntOrFloatBitWidth()));
  return foldBinary(
      adaptor.getLhs(), adaptor.getRhs(), type,
      [](const APFloat &a, const APFloat &b) -> std::optional<APFloat> {
        return a - b;
      },
      [](const APInt &a, const APInt &b) -> std::optional<APInt> {
        return a - b;
      });
}

OpFoldResult MulOp::fold(FoldAdaptor adaptor) {
  auto type = getType();
  if (isSplatOf(adaptor.getRhs(), 1))
    if (OpFoldResult r = sameTypeOrNull(getLhs(), type))
      return r;
  // x * 0 is 0 only for integers: inf * 0 and NaN * 0 are NaN.
  if (isSplatOf(adaptor.getRhs(), 0) &&
      isa<IntegerType>(type.getElementType()) && type.hasStaticShape())
    return DenseElementsAttr::get(
        type, APInt::getZero(type.getElementType().getIntOrFloatBitWidth()));
  return foldBinary(
      adaptor.getLhs(), adaptor.getRhs(), type,
      [](const APFloat &a, const APFloat &b) -> std::optional<APFloat> {
        return a * b;
      },
      [](const APInt &a, const APInt &b) -> std::optional<APInt> {
        return a * b;
      });
}

OpFoldResult DivOp::fold(FoldAdaptor adaptor) {
  if (isSplatOf(adaptor.getRhs(), 1))
    if (OpFoldResult r = sameTypeOrNull(getLhs(), getType()))
      return r;
  return foldBinary(
      adaptor.getLhs(), adaptor.getRhs(), getType(),
      [](const APFloat &a, const APFloat &b) -> std::optional<APFloat> {
        return a / b;
      },
      [](const APInt &a, const APInt &b) -> std::optional<APInt> {
        // XLA's total semantics, as the lowering computes them: x / 0 is -1
        // and INT_MIN / -1 is INT_MIN (no trap, no undefined value).
        if (b.isZero())
          return APInt::getAllOnes(a.getBitWidth());
        if (a.isMinSignedValue() && b.isAllOnes())
          return a;
        return a.sdiv(b);
      });
}

OpFoldResult MaxOp::fold(FoldAdaptor adaptor) {
  if (getLhs() == getRhs())
    if (OpFoldResult r = sameTypeOrNull(getLhs(), getType()))
      return r;
  return foldBinary(
      adaptor.getLhs(), adaptor.getRhs(), getType(),
      [](const APFloat &a, const APFloat &b) -> std::optional<APFloat> {
        return maximum(a, b);
      },
      [](const APInt &a, const APInt &b) -> std::optional<APInt> {
        return a.sge(b) ? a : b;
      });
}

OpFoldResult MinOp::fold(FoldAdaptor adaptor) {
  if (getLhs() == getRhs())
    if (OpFoldResult r = sameTypeOrNull(getLhs(), getType()))
      return r;
  return foldBinary(
      adaptor.getLhs(), adaptor.getRhs(), getType(),
      [](const APFloat &a, const APFloat &b) -> std::optional<APFloat> {
        return minimum(a, b);
      },
      [](const APInt &a, const APInt &b) -> std::optional<APInt> {
        return a.sle(b) ? a : b;
      });
}

OpFoldResult PowOp::fold(FoldAdaptor adaptor) {
  if (isSplatOf(adaptor.getRhs(), 1))
    if (OpFoldResult r = sameTypeOrNull(getLhs(), getType()))
      return r;
  auto floatType = cast<FloatType>(getType().getElementType());
  return foldBinary(
      adaptor.getLhs(), adaptor.getRhs(), getType(),
      [&](const APFloat &a, const APFloat &b) -> std::optional<APFloat> {
        return toFloat(std::pow(a.convertToDouble(), b.convertToDouble()),
                       floatType);
      },
      nullptr);
}

static bool comparePredicateHolds(ComparePredicate predicate, int cmp,
                                  bool unordered) {
  if (unordered)
    return predicate == ComparePredicate::ne;
  switch (predicate) {
  case ComparePredicate::eq:
    return cmp == 0;
  case ComparePredicate::ne:
    return cmp != 0;
  case ComparePredicate::lt:
    return cmp < 0;
  case ComparePredicate::le:
    return cmp <= 0;
  case ComparePredicate::gt:
    return cmp > 0;
  case ComparePredicate::ge:
    return cmp >= 0;
  }
  llvm_unreachable("unknown compare predicate");
}

OpFoldResult CompareOp::fold(FoldAdaptor adaptor) {
  ComparePredicate predicate = getPredicate();
  auto boolean = [](bool b) { return APInt(1, b ? 1 : 0); };
  DenseElementsAttr lhs = dense(adaptor.getLhs()),
                    rhs = dense(adaptor.getRhs());
  if (!lhs || !rhs)
    return {};
  // Compare in the operands' element type, then build the i1 result.
  auto operandType =
      RankedTensorType::get(getType().getShape(), lhs.getElementType());
  SmallVector<bool> bits;
  Attribute folded = foldBinary(
      lhs, rhs, operandType,
      [&](const APFloat &a, const APFloat &b) -> std::optional<APFloat> {
        APFloat::cmpResult c = a.compare(b);
        int cmp = c == APFloat::cmpLessThan ? -1
                  : c == APFloat::cmpEqual  ? 0
                                            : 1;
        bits.push_back(
            comparePredicateHolds(predicate, cmp, c == APFloat::cmpUnordered));
        return a;
      },
      [&](const APInt &a, const APInt &b) -> std::optional<APInt> {
        int cmp = a.slt(b) ? -1 : a == b ? 0 : 1;
        bits.push_back(comparePredicateHolds(predicate, cmp, false));
        return a;
      });
  if (!folded)
    return {};
  if (cast<DenseElementsAttr>(folded).isSplat())
    return DenseElementsAttr::get(getType(), boolean(bits.front()));
  return DenseElementsAttr::get(getType(), ArrayRef<bool>(bits));
}

OpFoldResult SelectOp::fold(FoldAdaptor adaptor) {
  Type type = getType();
  if (getTrueValue() == getFalseValue())
    if (OpFoldResult r = sameTypeOrNull(getTrueValue(), type))
      return r;
  DenseElementsAttr condition = dense(adaptor.getCondition());
  if (!condition || !condition.isSplat())
    return {};
  return sameTypeOrNull(
      condition.getSplatValue<bool>() ? getTrueValue() : getFalseValue(), type);
}

namespace {

/// Where a zero pad places its input: the one padded dimension and the
/// input's offset along it, or nothing if the pad is not a plain zero pad
/// (no interior) along exactly one dimension.
std::optional<std::pair<unsigned, int64_t>> zeroPadPlacement(PadOp pad) {
  if (!pad.getValue().isZero())
    return std::nullopt;
  std::optional<std::pair<unsigned, int64_t>> placement;
  for (unsigned d = 0, e = pad.getLow().size(); d < e; ++d) {
    if (pad.getInteriorOf(d) != 0)
      return std::nullopt;
    if (pad.getLow()[d] == 0 && pad.getHigh()[d] == 0)
      continue;
    if (placement)
      return std::nullopt;
    placement = {d, pad.getLow()[d]};
  }
  return placement;
}

/// pad(a) + pad(b) -> pad(concat(a, b)) where the zero pads place `a` and
/// `b` side by side along one dimension: the sum reads one input or the
/// other at every element (x + 0 = x), so it is their concatenation, padded
/// as the pair. This is the gradient of slices that tile a tensor (a fused
/// q/k/v projection split into heads): summed pads become one concat that
/// each slice gradient writes its part of, instead of a pass over the whole
/// tensor per slice. (A negative zero of `a` or `b` stays negative; the sum
/// would have made it positive.)
struct AddOfAdjacentPads : OpRewritePattern<AddOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AddOp op,
                                PatternRewriter &rewriter) const override {
    auto lhs = op.getLhs().getDefiningOp<PadOp>();
    auto rhs = op.getRhs().getDefiningOp<PadOp>();
    if (!lhs || !rhs || lhs.getType() != op.getType() ||
        rhs.getType() != op.getType())
      return rewriter.notifyMatchFailure(op, "not two pads of its type");
    auto lhsAt = zeroPadPlacement(lhs), rhsAt = zeroPadPlacement(rhs);
    if (!lhsAt || !rhsAt || lhsAt->first != rhsAt->first)
      return rewriter.notifyMatchFailure(op, "not zero pads along one dim");
    unsigned axis = lhsAt->first;
    PadOp first = lhs, second = rhs;
    if (rhsAt->second < lhsAt->second)
      std::swap(first, second);
    auto firstType = cast<RankedTensorType>(first.getInput().getType());
    auto secondType = cast<RankedTensorType>(second.getInput().getType());
    if (firstType.isDynamicDim(axis) || secondType.isDynamicDim(axis) ||
        first.getLow()[axis] + firstType.getDimSize(axis) !=
            second.getLow()[axis])
      return rewriter.notifyMatchFailure(op, "the pads are not adjacent");
    // Concatenations already built from earlier pairs are extended, so a
    // sum of n pads becomes one concat of n inputs.
    SmallVector<Value> inputs;
    for (Value input : {first.getInput(), second.getInput()}) {
      auto inner = input.getDefiningOp<ConcatOp>();
      if (inner && inner.getNormalizedAxis() == axis && input.hasOneUse())
        llvm::append_range(inputs, inner.getInputs());
      else
        inputs.push_back(input);
    }
    Location loc = op.getLoc();
    auto concat =
        ConcatOp::create(rewriter, loc, inputs, static_cast<int64_t>(axis));
    SmallVector<int64_t> low(first.getLow()), high(second.getHigh());
    auto pad = PadOp::create(
        rewriter, loc, op.getType(), concat, rewriter.getDenseI64ArrayAttr(low),
        rewriter.getDenseI64ArrayAttr(high),
        rewriter.getDenseI64ArrayAttr(SmallVector<int64_t>(low.size(), 0)),
        rewriter.getF64FloatAttr(0.0));
    rewriter.replaceOp(op, pad.getResult());
    return success();
  }
};

} // namespace

void AddOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                        MLIRContext *context) {
  patterns.add<AddOfNeg, AddOfAdjacentPads>(context);
}

void SubOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                        MLIRContext *context) {
  patterns.add<SubOfNeg>(context);
}

void MaxPool2DOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                              MLIRContext *context) {
  patterns.add<MaxPoolOfRelu>(context);
}

//===----------------------------------------------------------------------===//
// Shape ops
//===----------------------------------------------------------------------===//

OpFoldResult ReshapeOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getType())
    return getInput();
  if (auto inner = getInput().getDefiningOp<ReshapeOp>()) {
    getInputMutable().assign(inner.getInput());
    return getResult();
  }
  if (DenseElementsAttr elements = dense(adaptor.getInput()))
    if (getType().hasStaticShape())
      return elements.reshape(getType());
  return {};
}

OpFoldResult TransposeOp::fold(FoldAdaptor adaptor) {
  ArrayRef<int64_t> perm = getPermutation();
  if (llvm::equal(perm, llvm::seq<int64_t>(0, perm.size())))
    return sameTypeOrNull(getInput(), getType());
  if (auto inner = getInput().getDefiningOp<TransposeOp>()) {
    // out[i] = mid[perm[i]] = in[innerPerm[perm[i]]].
    SmallVector<int64_t> composed;
    for (int64_t p : perm)
      composed.push_back(inner.getPermutation()[p]);
    setPermutation(composed);
    getInputMutable().assign(inner.getInput());
    return getResult();
  }
  DenseElementsAttr elements = dense(adaptor.getInput());
  if (!elements || !getType().hasStaticShape())
    return {};
  if (elements.isSplat())
    return elements.resizeSplat(getType());
  if (!mayMaterialize(getType()))
    return {};
  ArrayRef<int64_t> inShape = elements.getType().getShape();
  SmallVector<int64_t> inStrides = stridesOf(inShape);
  SmallVector<Attribute> source(elements.getValues<Attribute>());
  SmallVector<Attribute> result;
  ArrayRef<int64_t> outShape = getType().getShape();
  SmallVector<int64_t> index(outShape.size(), 0);
  for (int64_t n = 0, e = getType().getNumElements(); n < e; ++n) {
    int64_t at = 0;
    for (size_t d = 0; d < outShape.size(); ++d)
      at += index[d] * inStrides[perm[d]];
    result.push_back(source[at]);
    for (int64_t d = static_cast<int64_t>(outShape.size()) - 1; d >= 0; --d) {
      if (++index[d] < outShape[d])
        break;
      index[d] = 0;
    }
  }
  return DenseElementsAttr::get(getType(), result);
}

OpFoldResult BroadcastToOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getType())
    return getInput();
  if (auto inner = getInput().getDefiningOp<BroadcastToOp>()) {
    getInputMutable().assign(inner.getInput());
    return getResult();
  }
  DenseElementsAttr elements = dense(adaptor.getInput());
  if (elements && elements.isSplat() && getType().hasStaticShape())
    return elements.resizeSplat(getType());
  return {};
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

namespace {
enum class ReduceKind { Sum, Mean, Max };
} // namespace

/// Folds a reduction of a constant. Float sums accumulate in double and round
/// once.
static OpFoldResult foldReduce(ReduceKind kind, Value input, Attribute attr,
                               ArrayRef<int64_t> axes, ShapedType resultType) {
  if (axes.empty())
    return sameTypeOrNull(input, resultType);
  DenseElementsAttr elements = dense(attr);
  auto inType = cast<ShapedType>(input.getType());
  if (!elements || !inType.hasStaticShape() || !resultType.hasStaticShape())
    return {};
  SmallVector<int64_t> reducedDims;
  for (int64_t axis : axes)
    reducedDims.push_back(inType.getDimSize(axis));
  std::optional<int64_t> count = checkedNumElements(reducedDims);
  if (!count)
    return {};
  int64_t reduced = *count;
  if (reduced == 0 && kind != ReduceKind::Sum)
    return {};
  Type elementType = inType.getElementType();
  bool isFloat = isa<FloatType>(elementType);

  // Splat: every output element is the same.
  if (elements.isSplat()) {
    if (isFloat) {
      double v = elements.getSplatValue<APFloat>().convertToDouble();
      if (kind == ReduceKind::Sum)
        v *= static_cast<double>(reduced);
      return DenseElementsAttr::get(resultType,
                                    toFloat(v, cast<FloatType>(elementType)));
    }
    APInt v = elements.getSplatValue<APInt>();
    if (kind == ReduceKind::Sum)
      v = v * APInt(v.getBitWidth(), reduced);
    return DenseElementsAttr::get(resultType, v);
  }
  if (!mayMaterialize(inType))
    return {};

  // General case: accumulate each input element into its output slot.
  ArrayRef<int64_t> shape = inType.getShape();
  SmallVector<bool> isReduced(shape.size(), false);
  for (int64_t axis : axes)
    isReduced[axis] = true;
  SmallVector<int64_t> keptShape;
  for (auto [d, dim] : llvm::enumerate(shape))
    if (!isReduced[d])
      keptShape.push_back(dim);
  SmallVector<int64_t> keptStrides = stridesOf(keptShape);
  int64_t outCount = resultType.getNumElements();
  SmallVector<int64_t> index(shape.size(), 0);
  auto forEach = [&](auto visit) {
    for (int64_t n = 0, e = inType.getNumElements(); n < e; ++n) {
      int64_t out = 0;
      for (size_t d = 0, k = 0; d < shape.size(); ++d)
        if (!isReduced[d])
          out += index[d] * keptStrides[k++];
      visit(n, out);
      for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
        if (++index[d] < shape[d])
          break;
        index[d] = 0;
      }
    }
  };
  if (isFloat) {
    SmallVector<APFloat> values(elements.getValues<APFloat>());
    SmallVector<double> acc(outCount, kind == ReduceKind::Max ? -INFINITY : 0);
    forEach([&](int64_t n, int64_t out) {
      double v = values[n].convertToDouble();
      acc[out] =
          kind == ReduceKind::Max
              ? (std::isnan(v) || std::isnan(acc[out]) ? NAN
                                                       : std::max(acc[out], v))
              : acc[out] + v;
    });
    SmallVector<APFloat> result;
    for (double a : acc)
      result.push_back(toFloat(kind == ReduceKind::Mean ? a / reduced : a,
                               cast<FloatType>(elementType)));
    return DenseElementsAttr::get(resultType, result);
  }
  SmallVector<APInt> values(elements.getValues<APInt>());
  unsigned width = elementType.getIntOrFloatBitWidth();
  SmallVector<APInt> acc(outCount, kind == ReduceKind::Max
                                       ? APInt::getSignedMinValue(width)
                                       : APInt::getZero(width));
  forEach([&](int64_t n, int64_t out) {
    if (kind == ReduceKind::Max)
      acc[out] = acc[out].sge(values[n]) ? acc[out] : values[n];
    else
      acc[out] += values[n];
  });
  return DenseElementsAttr::get(resultType, acc);
}

OpFoldResult ReduceSumOp::fold(FoldAdaptor adaptor) {
  return foldReduce(ReduceKind::Sum, getInput(), adaptor.getInput(), getAxes(),
                    getType());
}

OpFoldResult ReduceMeanOp::fold(FoldAdaptor adaptor) {
  return foldReduce(ReduceKind::Mean, getInput(), adaptor.getInput(), getAxes(),
                    getType());
}

OpFoldResult ReduceMaxOp::fold(FoldAdaptor adaptor) {
  return foldReduce(ReduceKind::Max, getInput(), adaptor.getInput(), getAxes(),
                    getType());
}

OpFoldResult FullLikeOp::fold(FoldAdaptor) {
  auto type = getType();
  if (!type.hasStaticShape())
    return {};
  Type elementType = type.getElementType();
  if (auto floatType = dyn_cast<FloatType>(elementType))
    return DenseElementsAttr::get(
        type, toFloat(getValue().convertToDouble(), floatType));
  return DenseElementsAttr::get(
      type, APInt(elementType.getIntOrFloatBitWidth(),
                  static_cast<int64_t>(getValue().convertToDouble()),
                  /*isSigned=*/true));
}

//===----------------------------------------------------------------------===//
// Dropout
//===----------------------------------------------------------------------===//

OpFoldResult DropoutOp::fold(FoldAdaptor) {
  if (getRate().isZero())
    return getInput();
  return {};
}

//===----------------------------------------------------------------------===//
// Sequence-model ops
//===----------------------------------------------------------------------===//

OpFoldResult ErfOp::fold(FoldAdaptor adaptor) {
  return foldUnaryMath(adaptor.getInput(), getType(),
                       [](double x) { return std::erf(x); });
}

static double geluExact(double x) {
  return 0.5 * x * (1.0 + std::erf(x * 0.7071067811865476));
}
static double geluTanh(double x) {
  constexpr double kSqrt2OverPi = 0.7978845608028654;
  return 0.5 * x * (1.0 + std::tanh(kSqrt2OverPi * (x + 0.044715 * x * x * x)));
}

OpFoldResult GeluOp::fold(FoldAdaptor adaptor) {
  return foldUnaryMath(adaptor.getInput(), getType(),
                       isTanh() ? geluTanh : geluExact);
}

OpFoldResult LeakyReluOp::fold(FoldAdaptor adaptor) {
  auto floatType = cast<FloatType>(getType().getElementType());
  double alpha = getAlpha().convertToDouble();
  return foldUnary(
      adaptor.getInput(), getType(),
      [&](const APFloat &v) -> std::optional<APFloat> {
        double x = v.convertToDouble();
        return x > 0 || std::isnan(x) ? v : toFloat(alpha * x, floatType);
      },
      nullptr);
}

/// One element converted as fuse.cast converts it (the op's description).
static Attribute castElement(Attribute element, Type to) {
  if (auto f = dyn_cast<FloatAttr>(element)) {
    APFloat v = f.getValue();
    if (auto toFloatType = dyn_cast<FloatType>(to)) {
      bool losesInfo;
      v.convert(toFloatType.getFloatSemantics(), APFloat::rmNearestTiesToEven,
                &losesInfo);
      return FloatAttr::get(to, v);
    }
    unsigned width = to.getIntOrFloatBitWidth();
    if (v.isNaN())
      return IntegerAttr::get(to, APInt::getZero(width));
    bool isSigned = width != 1;
    APSInt result(width, /*isUnsigned=*/!isSigned);
    bool exact;
    // Out of range saturates (APFloat's convertToInteger sets the bound).
    v.convertToInteger(result, APFloat::rmTowardZero, &exact);
    return IntegerAttr::get(to, result);
  }
  auto i = cast<IntegerAttr>(element);
  APInt v = i.getValue();
  bool isSigned = v.getBitWidth() != 1;
  if (auto toFloatType = dyn_cast<FloatType>(to)) {
    APFloat result(toFloatType.getFloatSemantics());
    result.convertFromAPInt(v, isSigned, APFloat::rmNearestTiesToEven);
    return FloatAttr::get(to, result);
  }
  unsigned width = to.getIntOrFloatBitWidth();
  return IntegerAttr::get(to, isSigned ? v.sextOrTrunc(width)
                                       : v.zextOrTrunc(width));
}

OpFoldResult CastOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getType())
    return getInput();
  auto type = cast<ShapedType>(getType());
  DenseElementsAttr elements = dense(adaptor.getInput());
  if (!elements || (!elements.isSplat() && !mayMaterialize(type)))
    return {};
  Type to = type.getElementType();
  if (elements.isSplat())
    return DenseElementsAttr::get(
        type, castElement(elements.getSplatValue<Attribute>(), to));
  SmallVector<Attribute> values;
  for (Attribute v : elements.getValues<Attribute>())
    values.push_back(castElement(v, to));
  return DenseElementsAttr::get(type, values);
}

OpFoldResult SliceOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getType() &&
      llvm::all_of(getOffsets(), [](int64_t o) { return o == 0; }))
    return getInput(); // whole dims: every stride reads one element
  if (DenseElementsAttr elements = dense(adaptor.getInput()))
    if (elements.isSplat() && getType().hasStaticShape())
      return elements.resizeSplat(getType());
  return {};
}

OpFoldResult PadOp::fold(FoldAdaptor) {
  // Dynamic dims are never padded (verified); static ones keep their size
  // only without padding.
  if (getInput().getType() == getType())
    return getInput();
  return {};
}

OpFoldResult ConcatOp::fold(FoldAdaptor) {
  if (getInputs().size() == 1 && getInputs().front().getType() == getType())
    return getInputs().front();
  return {};
}
