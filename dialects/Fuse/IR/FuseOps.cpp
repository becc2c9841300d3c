//===- FuseOps.cpp - fuse op verifiers and type inference -----------------===//

#include "Fuse/IR/FuseOps.h"
#include "fuse/LrSchedule.h"
#include "fuse/Precision.h"
#include "mlir/Dialect/Arith/IR/Arith.h"

#include "mlir/Dialect/Traits.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/APSInt.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallSet.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/CheckedArithmetic.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

using namespace mlir;
using namespace fuse;

//===----------------------------------------------------------------------===//
// Shape helpers
//===----------------------------------------------------------------------===//

FailureOr<SmallVector<int64_t>> fuse::broadcastShapes(ArrayRef<int64_t> lhs,
                                                      ArrayRef<int64_t> rhs) {
  SmallVector<int64_t> result;
  if (!OpTrait::util::getBroadcastedShape(lhs, rhs, result))
    return failure();
  return result;
}

bool fuse::isBroadcastableTo(ArrayRef<int64_t> input,
                             ArrayRef<int64_t> target) {
  if (input.size() > target.size())
    return false;
  size_t offset = target.size() - input.size();
  for (auto [i, dim] : llvm::enumerate(input)) {
    int64_t to = target[offset + i];
    if (dim == 1 || ShapedType::isDynamic(dim) || ShapedType::isDynamic(to))
      continue;
    if (dim != to)
      return false;
  }
  return true;
}

std::optional<int64_t> fuse::checkedNumElements(ArrayRef<int64_t> shape) {
  int64_t count = 1;
  for (int64_t d : shape) {
    if (ShapedType::isDynamic(d) || d < 0)
      return std::nullopt;
    std::optional<int64_t> next = llvm::checkedMul(count, d);
    if (!next)
      return std::nullopt;
    count = *next;
  }
  return count;
}

std::optional<int64_t> fuse::checkedByteSize(ShapedType type) {
  if (!type.hasStaticShape())
    return std::nullopt;
  std::optional<int64_t> count = checkedNumElements(type.getShape());
  if (!count)
    return std::nullopt;
  Type element = type.getElementType();
  int64_t width = 1;
  if (isa<IndexType>(element))
    width = 8;
  else if (element.isIntOrFloat())
    width = (element.getIntOrFloatBitWidth() + 7) / 8;
  else if (auto complex = dyn_cast<ComplexType>(element);
           complex && complex.getElementType().isIntOrFloat())
    width = 2 * ((complex.getElementType().getIntOrFloatBitWidth() + 7) / 8);
  return llvm::checkedMul(*count, width);
}

/// Whether `type` is a static tensor type too large to address.
static bool isTooLarge(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && tensor.hasStaticShape() && !checkedByteSize(tensor);
}

static std::string tooLargeMessage(const Twine &what, Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << what << " has type " << type
     << ", too large: its size in bytes does not fit in 64 bits";
  return text;
}

LogicalResult fuse::verifyTensorSizes(Operation *root) {
  WalkResult walked = root->walk<WalkOrder::PreOrder>([](Operation *op) {
    // Arguments first: a function's are where its values come from.
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (BlockArgument arg : block.getArguments())
          if (isTooLarge(arg.getType())) {
            emitError(arg.getLoc(),
                      tooLargeMessage("argument #" + Twine(arg.getArgNumber()),
                                      arg.getType()));
            return WalkResult::interrupt();
          }
    // A declaration has no block: its signature holds the types.
    if (auto function = dyn_cast<FunctionOpInterface>(op);
        function && function.isExternal()) {
      for (auto [i, type] : llvm::enumerate(function.getArgumentTypes()))
        if (isTooLarge(type)) {
          op->emitError(tooLargeMessage("argument #" + Twine(i), type));
          return WalkResult::interrupt();
        }
      for (auto [i, type] : llvm::enumerate(function.getResultTypes()))
        if (isTooLarge(type)) {
          op->emitError(tooLargeMessage("result #" + Twine(i), type));
          return WalkResult::interrupt();
        }
    }
    for (OpResult result : op->getResults())
      if (isTooLarge(result.getType())) {
        op->emitOpError(tooLargeMessage(
            "result #" + Twine(result.getResultNumber()), result.getType()));
        return WalkResult::interrupt();
      }
    return WalkResult::advance();
  });
  return failure(walked.wasInterrupted());
}

/// Prints a shape as `3x?x4` for diagnostics.
static std::string shapeString(ArrayRef<int64_t> shape) {
  std::string out;
  llvm::raw_string_ostream os(out);
  llvm::interleave(
      shape, os,
      [&](int64_t d) {
        if (ShapedType::isDynamic(d))
          os << '?';
        else
          os << d;
      },
      "x");
  return out;
}

/// Whether two dims may be equal at run time.
static bool dimsCompatible(int64_t a, int64_t b) {
  return ShapedType::isDynamic(a) || ShapedType::isDynamic(b) || a == b;
}

/// The static one of two compatible dims, if either is static.
static int64_t joinDims(int64_t a, int64_t b) {
  return ShapedType::isDynamic(a) ? b : a;
}

//===----------------------------------------------------------------------===//
// Shared inference
//===----------------------------------------------------------------------===//

LogicalResult
fuse::detail::inferBroadcastResultType(std::optional<Location> loc, Type lhs,
                                       Type rhs, Type elementType,
                                       SmallVectorImpl<Type> &types) {
  auto lhsType = dyn_cast<RankedTensorType>(lhs);
  auto rhsType = dyn_cast<RankedTensorType>(rhs);
  if (!lhsType || !rhsType)
    return emitOptionalError(loc, "expects ranked tensor operands");
  if (lhsType.getElementType() != rhsType.getElementType())
    return emitOptionalError(loc, "operands have different element types (",
                             lhsType.getElementType(), " vs ",
                             rhsType.getElementType(), ")");
  FailureOr<SmallVector<int64_t>> shape =
      broadcastShapes(lhsType.getShape(), rhsType.getShape());
  if (failed(shape))
    return emitOptionalError(
        loc, "operand shapes ", shapeString(lhsType.getShape()), " and ",
        shapeString(rhsType.getShape()), " are not broadcast-compatible");
  types.push_back(RankedTensorType::get(
      *shape, elementType ? elementType : lhsType.getElementType()));
  return success();
}

LogicalResult
fuse::detail::inferReduceResultType(std::optional<Location> loc, Type input,
                                    ArrayRef<int64_t> axes, bool keepdims,
                                    SmallVectorImpl<Type> &types) {
  auto type = dyn_cast<RankedTensorType>(input);
  if (!type)
    return emitOptionalError(loc, "expects a ranked tensor operand");
  int64_t rank = type.getRank();
  llvm::SmallSet<int64_t, 4> seen;
  for (int64_t axis : axes) {
    if (axis < 0 || axis >= rank)
      return emitOptionalError(loc, "axis ", axis, " is out of range for rank ",
                               rank);
    if (!seen.insert(axis).second)
      return emitOptionalError(loc, "axis ", axis, " appears more than once");
  }
  SmallVector<int64_t> shape;
  for (auto [i, dim] : llvm::enumerate(type.getShape())) {
    if (!seen.contains(static_cast<int64_t>(i)))
      shape.push_back(dim);
    else if (keepdims)
      shape.push_back(1);
  }
  types.push_back(RankedTensorType::get(shape, type.getElementType()));
  return success();
}

/// The padded size `size + padBefore + padAfter` of a static dim, or
/// nullopt when it overflows.
static std::optional<int64_t> paddedSize(int64_t size, int64_t padBefore,
                                         int64_t padAfter) {
  std::optional<int64_t> padded = llvm::checkedAdd(size, padBefore);
  return padded ? llvm::checkedAdd(*padded, padAfter) : std::nullopt;
}

/// The output size of a sliding window over `size` padded elements, or
/// failure when the window does not fit (or the padded size overflows).
/// Dynamic sizes stay dynamic. A fitting window gives at least 1.
static FailureOr<int64_t> windowOutputSize(int64_t size, int64_t padBefore,
                                           int64_t padAfter, int64_t window,
                                           int64_t stride) {
  if (ShapedType::isDynamic(size))
    return ShapedType::kDynamic;
  std::optional<int64_t> padded = paddedSize(size, padBefore, padAfter);
  if (!padded || *padded < window)
    return failure();
  return (*padded - window) / stride + 1;
}

/// Checks a `[h, w]` attribute of positive values, at most
/// kMaxWindowAttribute.
static LogicalResult verifyPair(std::optional<Location> loc, StringRef name,
                                ArrayRef<int64_t> values) {
  if (values.size() != 2)
    return emitOptionalError(
        loc, "'", name, "' must have 2 entries [h, w], got ", values.size());
  if (llvm::any_of(values, [](int64_t v) { return v <= 0; }))
    return emitOptionalError(loc, "'", name, "' must be positive");
  if (llvm::any_of(values, [](int64_t v) { return v > kMaxWindowAttribute; }))
    return emitOptionalError(loc, "'", name, "' must be at most ",
                             kMaxWindowAttribute);
  return success();
}

static LogicalResult verifyPadding(std::optional<Location> loc,
                                   ArrayRef<int64_t> padding) {
  if (padding.size() != 4)
    return emitOptionalError(
        loc, "'padding' must have 4 entries [top, bottom, left, right], got ",
        padding.size());
  if (llvm::any_of(padding, [](int64_t v) { return v < 0; }))
    return emitOptionalError(loc, "'padding' must be non-negative");
  if (llvm::any_of(padding, [](int64_t v) { return v > kMaxWindowAttribute; }))
    return emitOptionalError(loc, "'padding' must be at most ",
                             kMaxWindowAttribute);
  return success();
}

/// Checks that the zero-padded input a window op lowers through, N x (H +
/// top + bottom) x (W + left + right) x C, has a countable number of
/// elements when static.
static LogicalResult verifyPaddedInput(std::optional<Location> loc,
                                       ArrayRef<int64_t> shape,
                                       ArrayRef<int64_t> padding) {
  if (llvm::any_of(shape, ShapedType::isDynamic))
    return success();
  std::optional<int64_t> h = paddedSize(shape[1], padding[0], padding[1]);
  std::optional<int64_t> w = paddedSize(shape[2], padding[2], padding[3]);
  if (!h || !w || !checkedNumElements({shape[0], *h, *w, shape[3]}))
    return emitOptionalError(loc, "the padded input of shape ",
                             shapeString(shape), " with padding [", padding,
                             "] has more elements than fit in 64 bits");
  return success();
}

LogicalResult fuse::detail::inferPool2DResultType(
    std::optional<Location> loc, Type input, ArrayRef<int64_t> window,
    std::optional<ArrayRef<int64_t>> strides, ArrayRef<int64_t> padding,
    SmallVectorImpl<Type> &types) {
  auto type = dyn_cast<RankedTensorType>(input);
  if (!type || type.getRank() != 4)
    return emitOptionalError(loc, "expects a rank-4 NHWC input, got ", input);
  ArrayRef<int64_t> effectiveStrides = strides ? *strides : window;
  if (failed(verifyPair(loc, "window", window)) ||
      failed(verifyPair(loc, "strides", effectiveStrides)) ||
      failed(verifyPadding(loc, padding)))
    return failure();
  if (padding[0] >= window[0] || padding[1] >= window[0] ||
      padding[2] >= window[1] || padding[3] >= window[1])
    return emitOptionalError(loc, "'padding' must be smaller than the window");
  // Positions in a window are i32 pool indices.
  if (window[0] * window[1] > kMaxWindowAttribute)
    return emitOptionalError(loc, "pool window ", window[0], "x", window[1],
                             " has more than ", kMaxWindowAttribute,
                             " elements");
  ArrayRef<int64_t> shape = type.getShape();
  if (failed(verifyPaddedInput(loc, shape, padding)))
    return failure();
  FailureOr<int64_t> h = windowOutputSize(shape[1], padding[0], padding[1],
                                          window[0], effectiveStrides[0]);
  FailureOr<int64_t> w = windowOutputSize(shape[2], padding[2], padding[3],
                                          window[1], effectiveStrides[1]);
  if (failed(h) || failed(w))
    return emitOptionalError(loc, "pool window ", window[0], "x", window[1],
                             " is larger than the padded input ",
                             shapeString(shape.slice(1, 2)));
  types.push_back(RankedTensorType::get({shape[0], *h, *w, shape[3]},
                                        type.getElementType()));
  return success();
}

LogicalResult fuse::detail::inferPoolIndicesType(
    std::optional<Location> loc, Type input, ArrayRef<int64_t> window,
    std::optional<ArrayRef<int64_t>> strides, ArrayRef<int64_t> padding,
    SmallVectorImpl<Type> &types) {
  if (failed(
          inferPool2DResultType(loc, input, window, strides, padding, types)))
    return failure();
  auto pooled = cast<RankedTensorType>(types.back());
  unsigned width = window[0] * window[1] <= 128 ? 8 : 32;
  types.back() = pooled.clone(IntegerType::get(input.getContext(), width));
  return success();
}

LogicalResult MaxPool2DGradOp::verify() {
  SmallVector<Type> expected;
  if (failed(detail::inferPoolIndicesType(getLoc(), getInput().getType(),
                                          getWindow(), getStrides(),
                                          getPadding(), expected)))
    return failure();
  RankedTensorType indices = getIndices().getType();
  if (failed(verifyCompatibleShapes(TypeRange{indices}, expected)) ||
      indices.getElementType() != getElementTypeOrSelf(expected[0]))
    return emitOpError() << "indices of type " << indices
                         << " do not match the input's pool, " << expected[0];
  if (getGrad().getType().getElementType() !=
      getInput().getType().getElementType())
    return emitOpError() << "gradient of type " << getGrad().getType()
                         << " does not match the input's element type";
  if (failed(verifyCompatibleShape(getGrad().getType().getShape(),
                                   indices.getShape())))
    return emitOpError() << "gradient shape "
                         << shapeString(getGrad().getType().getShape())
                         << " does not match the indices' "
                         << shapeString(indices.getShape());
  return success();
}

//===----------------------------------------------------------------------===//
// CompareOp, SelectOp
//===----------------------------------------------------------------------===//

LogicalResult CompareOp::inferReturnTypes(MLIRContext *context,
                                          std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &types) {
  return detail::inferBroadcastResultType(loc, adaptor.getLhs().getType(),
                                          adaptor.getRhs().getType(),
                                          IntegerType::get(context, 1), types);
}

LogicalResult SelectOp::inferReturnTypes(MLIRContext *context,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  SmallVector<Type> valueType;
  if (failed(detail::inferBroadcastResultType(
          loc, adaptor.getTrueValue().getType(),
          adaptor.getFalseValue().getType(), nullptr, valueType)))
    return failure();
  auto values = cast<RankedTensorType>(valueType.front());
  auto condition = cast<RankedTensorType>(adaptor.getCondition().getType());
  FailureOr<SmallVector<int64_t>> shape =
      broadcastShapes(condition.getShape(), values.getShape());
  if (failed(shape))
    return emitOptionalError(
        loc, "condition shape ", shapeString(condition.getShape()),
        " is not broadcast-compatible with ", shapeString(values.getShape()));
  types.push_back(RankedTensorType::get(*shape, values.getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// ReshapeOp
//===----------------------------------------------------------------------===//

LogicalResult ReshapeOp::verify() {
  auto inType = getInput().getType();
  auto outType = getType();
  if (inType.getElementType() != outType.getElementType())
    return emitOpError("result element type ")
           << outType.getElementType() << " differs from the input's "
           << inType.getElementType();
  if (outType.getNumDynamicDims() > 1)
    return emitOpError("result may have at most one dynamic dimension, got ")
           << outType;
  // Element counts that overflow int64_t would compare wrapped.
  SmallVector<int64_t> staticOut;
  for (int64_t d : outType.getShape())
    if (!ShapedType::isDynamic(d))
      staticOut.push_back(d);
  std::optional<int64_t> known = checkedNumElements(staticOut);
  if (!known)
    return emitOpError("result shape ")
           << shapeString(outType.getShape())
           << " has more elements than fit in 64 bits";
  SmallVector<int64_t> staticIn;
  for (int64_t d : inType.getShape())
    if (!ShapedType::isDynamic(d))
      staticIn.push_back(d);
  if (!checkedNumElements(staticIn))
    return emitOpError("input shape ")
           << shapeString(inType.getShape())
           << " has more elements than fit in 64 bits";
  if (!inType.hasStaticShape())
    return success();
  int64_t count = *checkedNumElements(inType.getShape());
  if (outType.hasStaticShape()) {
    if (*known != count)
      return emitOpError("cannot reshape ")
             << count << " elements into " << *known;
    return success();
  }
  if (*known == 0 ? count != 0 : count % *known != 0)
    return emitOpError("cannot reshape ") << count << " elements into shape "
                                          << shapeString(outType.getShape());
  return success();
}

//===----------------------------------------------------------------------===//
// TransposeOp
//===----------------------------------------------------------------------===//

LogicalResult TransposeOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &types) {
  auto type = cast<RankedTensorType>(adaptor.getInput().getType());
  ArrayRef<int64_t> perm = adaptor.getPermutation();
  int64_t rank = type.getRank();
  if (static_cast<int64_t>(perm.size()) != rank)
    return emitOptionalError(loc, "permutation has ", perm.size(),
                             " entries but the input has rank ", rank);
  SmallVector<bool> seen(rank, false);
  SmallVector<int64_t> shape;
  for (int64_t p : perm) {
    if (p < 0 || p >= rank || seen[p])
      return emitOptionalError(loc, "permutation [", perm,
                               "] is not a permutation of [0, ", rank, ")");
    seen[p] = true;
    shape.push_back(type.getDimSize(p));
  }
  types.push_back(RankedTensorType::get(shape, type.getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// BroadcastToOp
//===----------------------------------------------------------------------===//

LogicalResult BroadcastToOp::verify() {
  auto inType = getInput().getType();
  auto outType = getType();
  if (inType.getElementType() != outType.getElementType())
    return emitOpError("result element type ")
           << outType.getElementType() << " differs from the input's "
           << inType.getElementType();
  if (!isBroadcastableTo(inType.getShape(), outType.getShape()))
    return emitOpError("cannot broadcast shape ")
           << shapeString(inType.getShape()) << " to "
           << shapeString(outType.getShape());
  return success();
}

//===----------------------------------------------------------------------===//
// MatmulOp, BatchMatmulOp
//===----------------------------------------------------------------------===//

/// Infers `op(lhs) x op(rhs)` over the trailing two dims of operands of rank
/// `rank`, whose leading dims (if any) are batch dims that must agree.
static LogicalResult inferMatmulType(std::optional<Location> loc, Type lhs,
                                     Type rhs, bool transposeLhs,
                                     bool transposeRhs, int64_t rank,
                                     SmallVectorImpl<Type> &types) {
  auto lhsType = cast<RankedTensorType>(lhs);
  auto rhsType = cast<RankedTensorType>(rhs);
  if (lhsType.getRank() != rank || rhsType.getRank() != rank)
    return emitOptionalError(loc, "expects rank-", rank,
                             " operands, got ranks ", lhsType.getRank(),
                             " and ", rhsType.getRank());
  if (lhsType.getElementType() != rhsType.getElementType())
    return emitOptionalError(loc, "operands have different element types (",
                             lhsType.getElementType(), " vs ",
                             rhsType.getElementType(), ")");
  ArrayRef<int64_t> l = lhsType.getShape(), r = rhsType.getShape();
  SmallVector<int64_t> shape;
  for (int64_t i = 0; i < rank - 2; ++i) {
    if (!dimsCompatible(l[i], r[i]))
      return emitOptionalError(loc, "batch dimensions differ: ", l[i],
                               " (lhs) vs ", r[i], " (rhs)");
    shape.push_back(joinDims(l[i], r[i]));
  }
  int64_t lRow = l[rank - 2], lCol = l[rank - 1];
  int64_t rRow = r[rank - 2], rCol = r[rank - 1];
  int64_t m = transposeLhs ? lCol : lRow, kl = transposeLhs ? lRow : lCol;
  int64_t kr = transposeRhs ? rCol : rRow, n = transposeRhs ? rRow : rCol;
  if (!dimsCompatible(kl, kr))
    return emitOptionalError(loc, "contraction dimensions differ: ", kl,
                             " (lhs) vs ", kr, " (rhs)");
  shape.push_back(m);
  shape.push_back(n);
  types.push_back(RankedTensorType::get(shape, lhsType.getElementType()));
  return success();
}

/// Whether a contraction inferred as `inferred` (its operands' element
/// type) may return `actual`: the same types, or operands of bf16 or f16
/// summed into an f32 result of the same shape (mixed precision).
static bool isContractionResultCompatible(TypeRange inferred,
                                          TypeRange actual) {
  if (inferred == actual)
    return true;
  if (inferred.size() != 1 || actual.size() != 1)
    return false;
  auto want = dyn_cast<RankedTensorType>(inferred.front());
  auto got = dyn_cast<RankedTensorType>(actual.front());
  return want && got && want.getShape() == got.getShape() &&
         isa<BFloat16Type, Float16Type>(want.getElementType()) &&
         got.getElementType().isF32();
}

bool MatmulOp::isCompatibleReturnTypes(TypeRange l, TypeRange r) {
  return isContractionResultCompatible(l, r);
}

bool BatchMatmulOp::isCompatibleReturnTypes(TypeRange l, TypeRange r) {
  return isContractionResultCompatible(l, r);
}

LogicalResult MatmulOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  return inferMatmulType(loc, adaptor.getLhs().getType(),
                         adaptor.getRhs().getType(), adaptor.getTransposeLhs(),
                         adaptor.getTransposeRhs(), 2, types);
}

LogicalResult BatchMatmulOp::inferReturnTypes(MLIRContext *,
                                              std::optional<Location> loc,
                                              Adaptor adaptor,
                                              SmallVectorImpl<Type> &types) {
  return inferMatmulType(loc, adaptor.getLhs().getType(),
                         adaptor.getRhs().getType(), adaptor.getTransposeLhs(),
                         adaptor.getTransposeRhs(), 3, types);
}

//===----------------------------------------------------------------------===//
// AttentionOp, AttentionGradOp
//===----------------------------------------------------------------------===//

/// The result type of attention ([..., T, Dv]), shared with its gradient's
/// verifier.
static LogicalResult
inferAttentionType(std::optional<Location> loc, RankedTensorType query,
                   RankedTensorType key, RankedTensorType value,
                   std::optional<double> scale, SmallVectorImpl<Type> &types) {
  int64_t rank = query.getRank();
  if (rank < 2)
    return emitOptionalError(loc, "expects a query of rank 2 or more, got ",
                             query);
  if (key.getRank() != rank || value.getRank() != rank)
    return emitOptionalError(loc, "query, key and value ranks differ (", rank,
                             ", ", key.getRank(), ", ", value.getRank(), ")");
  Type element = query.getElementType();
  if (key.getElementType() != element || value.getElementType() != element)
    return emitOptionalError(loc, "query, key and value element types differ");
  ArrayRef<int64_t> q = query.getShape(), k = key.getShape(),
                    v = value.getShape();
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < rank - 2; ++d) {
    if (!dimsCompatible(q[d], k[d]) || !dimsCompatible(q[d], v[d]) ||
        !dimsCompatible(k[d], v[d]))
      return emitOptionalError(loc, "leading dimension ", d, " differs: query ",
                               shapeString(q), ", key ", shapeString(k),
                               ", value ", shapeString(v));
    shape.push_back(joinDims(joinDims(q[d], k[d]), v[d]));
  }
  if (!dimsCompatible(q[rank - 1], k[rank - 1]))
    return emitOptionalError(loc, "query and key feature sizes differ (",
                             q[rank - 1], " vs ", k[rank - 1], ")");
  if (!dimsCompatible(k[rank - 2], v[rank - 2]))
    return emitOptionalError(loc, "key and value sequence lengths differ (",
                             k[rank - 2], " vs ", v[rank - 2], ")");
  if (scale && !(std::isfinite(*scale) && *scale > 0.0))
    return emitOptionalError(loc, "scale must be finite and positive");
  shape.push_back(q[rank - 2]);
  shape.push_back(v[rank - 1]);
  types.push_back(RankedTensorType::get(shape, element));
  return success();
}

LogicalResult AttentionOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &types) {
  std::optional<double> scale;
  if (FloatAttr attr = adaptor.getScaleAttr())
    scale = attr.getValueAsDouble();
  auto query = dyn_cast<RankedTensorType>(adaptor.getQuery().getType());
  auto key = dyn_cast<RankedTensorType>(adaptor.getKey().getType());
  auto value = dyn_cast<RankedTensorType>(adaptor.getValue().getType());
  if (!query || !key || !value)
    return emitOptionalError(loc, "expects ranked tensor operands");
  return inferAttentionType(loc, query, key, value, scale, types);
}

double AttentionOp::getScaleOrDefault() {
  if (std::optional<llvm::APFloat> scale = getScale())
    return scale->convertToDouble();
  int64_t features = getQuery().getType().getShape().back();
  return 1.0 / std::sqrt(static_cast<double>(features));
}

LogicalResult AttentionGradOp::inferReturnTypes(MLIRContext *,
                                                std::optional<Location> loc,
                                                Adaptor adaptor,
                                                SmallVectorImpl<Type> &types) {
  SmallVector<Type> result;
  auto query = dyn_cast<RankedTensorType>(adaptor.getQuery().getType());
  auto key = dyn_cast<RankedTensorType>(adaptor.getKey().getType());
  auto value = dyn_cast<RankedTensorType>(adaptor.getValue().getType());
  if (!query || !key || !value || !adaptor.getScaleAttr())
    return emitOptionalError(loc, "expects ranked tensor operands and a scale");
  if (failed(inferAttentionType(loc, query, key, value,
                                adaptor.getScaleAttr().getValueAsDouble(),
                                result)))
    return failure();
  for (auto [name, type] :
       {std::pair{"result", adaptor.getResult().getType()},
        std::pair{"result_grad", adaptor.getResultGrad().getType()}}) {
    auto tensor = cast<RankedTensorType>(type);
    if (tensor.getElementType() !=
            cast<RankedTensorType>(result[0]).getElementType() ||
        failed(verifyCompatibleShape(tensor, result[0])))
      return emitOptionalError(loc, name, " type ", type,
                               " is not the attention's result type ",
                               result[0]);
  }
  types.push_back(adaptor.getQuery().getType());
  types.push_back(adaptor.getKey().getType());
  types.push_back(adaptor.getValue().getType());
  return success();
}

//===----------------------------------------------------------------------===//
// Conv2DOp
//===----------------------------------------------------------------------===//

/// The result type of conv2d, shared with its gradients' verifiers.
static LogicalResult
inferConv2DType(std::optional<Location> loc, RankedTensorType input,
                RankedTensorType filter, ArrayRef<int64_t> strides,
                ArrayRef<int64_t> padding, ArrayRef<int64_t> dilations,
                SmallVectorImpl<Type> &types) {
  if (input.getRank() != 4)
    return emitOptionalError(loc, "expects a rank-4 NHWC input, got ", input);
  if (filter.getRank() != 4)
    return emitOptionalError(loc, "expects a rank-4 HWIO filter, got ", filter);
  if (input.getElementType() != filter.getElementType())
    return emitOptionalError(loc, "operands have different element types (",
                             input.getElementType(), " vs ",
                             filter.getElementType(), ")");
  if (failed(verifyPair(loc, "strides", strides)) ||
      failed(verifyPair(loc, "dilations", dilations)) ||
      failed(verifyPadding(loc, padding)))
    return failure();
  ArrayRef<int64_t> in = input.getShape(), k = filter.getShape();
  if (!dimsCompatible(in[3], k[2]))
    return emitOptionalError(loc, "input channels (", in[3],
                             ") do not match the filter's input channels (",
                             k[2], ")");
  if (failed(verifyPaddedInput(loc, in, padding)))
    return failure();
  SmallVector<int64_t> out = {in[0], 0, 0, k[3]};
  for (int i = 0; i < 2; ++i) {
    if (ShapedType::isDynamic(k[i]) || ShapedType::isDynamic(in[1 + i])) {
      out[1 + i] = ShapedType::kDynamic;
      continue;
    }
    if (k[i] == 0)
      return emitOptionalError(loc, "the filter has an empty window, ",
                               shapeString(k));
    // The dilated window, dilations * (k - 1) + 1, checked.
    std::optional<int64_t> window = llvm::checkedMul(dilations[i], k[i] - 1);
    if (window)
      window = llvm::checkedAdd(*window, int64_t(1));
    if (!window)
      return emitOptionalError(loc, "the dilated filter window of ", k[i],
                               " taps with dilation ", dilations[i],
                               " overflows");
    FailureOr<int64_t> size = windowOutputSize(
        in[1 + i], padding[2 * i], padding[2 * i + 1], *window, strides[i]);
    if (failed(size))
      return emitOptionalError(
          loc, "filter window ", *window, " is larger than the padded input ",
          i == 0 ? "height " : "width ",
          *paddedSize(in[1 + i], padding[2 * i], padding[2 * i + 1]));
    out[1 + i] = *size;
  }
  types.push_back(RankedTensorType::get(out, input.getElementType()));
  return success();
}

bool Conv2DOp::isCompatibleReturnTypes(TypeRange l, TypeRange r) {
  return isContractionResultCompatible(l, r);
}

LogicalResult Conv2DOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  return inferConv2DType(loc,
                         cast<RankedTensorType>(adaptor.getInput().getType()),
                         cast<RankedTensorType>(adaptor.getFilter().getType()),
                         adaptor.getStrides(), adaptor.getPadding(),
                         adaptor.getDilations(), types);
}

/// Checks a window gradient's attributes as its forward op's (`forward`
/// failing reports why) and that `grad` has the forward result's shape.
static LogicalResult verifyWindowGrad(Operation *op, LogicalResult forward,
                                      ArrayRef<Type> expected,
                                      RankedTensorType grad) {
  if (failed(forward))
    return failure();
  auto want = cast<RankedTensorType>(expected.front());
  if (grad.getElementType() != want.getElementType() ||
      failed(verifyCompatibleShape(grad.getShape(), want.getShape())))
    return op->emitOpError("gradient of type ")
           << grad << " does not match the forward result, " << want;
  return success();
}

/// The element type of a convolution gradient's two factors (`a` and `b`,
/// named `aName` and `bName`), checked: one element type, and a result of
/// that type or, for bf16 factors, f32 (the bf16 policy's products summed in
/// f32). Null after reporting why not.
static Type verifyConvGradFactors(Operation *op, StringRef aName,
                                  RankedTensorType a, StringRef bName,
                                  RankedTensorType b, RankedTensorType result) {
  Type factor = a.getElementType();
  if (factor != b.getElementType()) {
    op->emitOpError("operands have different element types (")
        << aName << ": " << factor << ", " << bName << ": "
        << b.getElementType() << ")";
    return {};
  }
  Type sum = result.getElementType();
  if (sum != factor && !(factor.isBF16() && sum.isF32())) {
    op->emitOpError("takes ")
        << aName << " and " << bName << " of the result's element type or, "
        << "mixed, bf16 ones with an f32 result; got " << factor
        << " operands and a " << sum << " result";
    return {};
  }
  return factor;
}

LogicalResult Conv2DInputGradOp::verify() {
  Type factor =
      verifyConvGradFactors(*this, "grad", getGrad().getType(), "filter",
                            getFilter().getType(), getType());
  if (!factor)
    return failure();
  // The forward convolution's input had the factors' element type.
  SmallVector<Type> expected;
  LogicalResult forward = inferConv2DType(
      getLoc(), getInput().getType().clone(factor), getFilter().getType(),
      getStrides(), getPadding(), getDilations(), expected);
  return verifyWindowGrad(*this, forward, expected, getGrad().getType());
}

LogicalResult Conv2DFilterGradOp::verify() {
  Type factor = verifyConvGradFactors(*this, "input", getInput().getType(),
                                      "grad", getGrad().getType(), getType());
  if (!factor)
    return failure();
  // The forward convolution's filter had the factors' element type.
  SmallVector<Type> expected;
  LogicalResult forward = inferConv2DType(
      getLoc(), getInput().getType(), getFilter().getType().clone(factor),
      getStrides(), getPadding(), getDilations(), expected);
  return verifyWindowGrad(*this, forward, expected, getGrad().getType());
}

LogicalResult AvgPool2DGradOp::verify() {
  SmallVector<Type> expected;
  LogicalResult forward =
      detail::inferPool2DResultType(getLoc(), getInput().getType(), getWindow(),
                                    getStrides(), getPadding(), expected);
  return verifyWindowGrad(*this, forward, expected, getGrad().getType());
}

//===----------------------------------------------------------------------===//
// Softmax, losses, dropout
//===----------------------------------------------------------------------===//

static LogicalResult verifySoftmaxAxis(Operation *op, RankedTensorType type,
                                       int64_t axis) {
  int64_t rank = type.getRank();
  if (rank == 0)
    return op->emitOpError("expects an input of rank at least 1");
  if (axis < -rank || axis >= rank)
    return op->emitOpError("axis ")
           << axis << " is out of range for rank " << rank;
  return success();
}

LogicalResult SoftmaxOp::verify() {
  return verifySoftmaxAxis(*this, getType(), getAxis());
}

LogicalResult LogSoftmaxOp::verify() {
  return verifySoftmaxAxis(*this, getType(), getAxis());
}

LogicalResult SoftmaxCrossEntropyOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &types) {
  auto logits = cast<RankedTensorType>(adaptor.getLogits().getType());
  auto labels = cast<RankedTensorType>(adaptor.getLabels().getType());
  if (logits.getRank() != 2)
    return emitOptionalError(
        loc, "expects rank-2 logits [batch, classes], got ", logits);
  if (labels.getRank() != 1)
    return emitOptionalError(loc, "expects rank-1 labels [batch], got ",
                             labels);
  // Integers are signed: an i1 label 1 would read as class -1.
  if (labels.getElementType().isInteger(1))
    return emitOptionalError(loc, "i1 labels are not supported (an i1 1 is "
                                  "-1 as a signed integer); use i8 or wider");
  if (!dimsCompatible(logits.getDimSize(0), labels.getDimSize(0)))
    return emitOptionalError(
        loc, "batch size of labels (", labels.getDimSize(0),
        ") does not match the logits' (", logits.getDimSize(0), ")");
  types.push_back(RankedTensorType::get({}, logits.getElementType()));
  return success();
}

LogicalResult MseLossOp::inferReturnTypes(MLIRContext *,
                                          std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &types) {
  auto prediction = cast<RankedTensorType>(adaptor.getPrediction().getType());
  auto target = cast<RankedTensorType>(adaptor.getTarget().getType());
  if (prediction.getElementType() != target.getElementType())
    return emitOptionalError(loc, "operands have different element types (",
                             prediction.getElementType(), " vs ",
                             target.getElementType(), ")");
  if (failed(verifyCompatibleShape(prediction, target)))
    return emitOptionalError(
        loc, "prediction shape ", shapeString(prediction.getShape()),
        " does not match the target's ", shapeString(target.getShape()));
  types.push_back(RankedTensorType::get({}, prediction.getElementType()));
  return success();
}

LogicalResult DropoutOp::verify() {
  double rate = getRate().convertToDouble();
  if (!(rate >= 0.0 && rate < 1.0)) {
    SmallString<16> text;
    getRate().toString(text);
    return emitOpError("rate must be in [0, 1), got ") << text;
  }
  auto type = cast<RankedTensorType>(getType());
  if (getOffset() && type.getRank() == 0)
    return emitOpError("with an offset needs rows: a tensor of rank 1 or "
                       "more, got ")
           << type;
  return success();
}

//===----------------------------------------------------------------------===//
// GeluOp, LeakyReluOp, LayerNormOp
//===----------------------------------------------------------------------===//

LogicalResult GeluOp::verify() {
  if (getApproximate() != "none" && getApproximate() != "tanh")
    return emitOpError("approximate must be \"none\" or \"tanh\", got \"")
           << getApproximate() << "\"";
  return success();
}

LogicalResult LeakyReluOp::verify() {
  if (!std::isfinite(getAlpha().convertToDouble()))
    return emitOpError("alpha must be finite");
  return success();
}

LogicalResult LayerNormOp::verify() {
  RankedTensorType input = getInput().getType();
  RankedTensorType scale = getScale().getType();
  if (scale != getBias().getType())
    return emitOpError("scale type ")
           << scale << " differs from the bias type " << getBias().getType();
  if (scale.getElementType() != input.getElementType())
    return emitOpError("scale element type ")
           << scale.getElementType() << " differs from the input's "
           << input.getElementType();
  if (scale.getRank() < 1 || scale.getRank() > input.getRank())
    return emitOpError("scale has rank ")
           << scale.getRank() << "; expected 1 to the input's rank "
           << input.getRank();
  int64_t offset = input.getRank() - scale.getRank();
  for (int64_t d = 0; d < scale.getRank(); ++d)
    if (!dimsCompatible(scale.getDimSize(d), input.getDimSize(offset + d)))
      return emitOpError("scale shape ")
             << shapeString(scale.getShape())
             << " is not the trailing shape of the input "
             << shapeString(input.getShape());
  double epsilon = getEpsilon().convertToDouble();
  if (!(epsilon >= 0.0) || !std::isfinite(epsilon))
    return emitOpError("epsilon must be finite and at least 0");
  return success();
}

SmallVector<int64_t> LayerNormOp::getNormalizedAxes() {
  int64_t rank = getInput().getType().getRank();
  return llvm::to_vector(
      llvm::seq<int64_t>(rank - getScale().getType().getRank(), rank));
}

//===----------------------------------------------------------------------===//
// SliceOp, PadOp, ConcatOp, IotaOp
//===----------------------------------------------------------------------===//

LogicalResult SliceOp::verify() {
  RankedTensorType in = getInput().getType(), out = getType();
  if (in.getElementType() != out.getElementType())
    return emitOpError("result element type ")
           << out.getElementType() << " differs from the input's "
           << in.getElementType();
  int64_t rank = in.getRank();
  if (out.getRank() != rank)
    return emitOpError("result rank ")
           << out.getRank() << " differs from the input rank " << rank;
  if (static_cast<int64_t>(getOffsets().size()) != rank)
    return emitOpError("has ")
           << getOffsets().size() << " offsets for an input of rank " << rank;
  if (!getStrides().empty() &&
      static_cast<int64_t>(getStrides().size()) != rank)
    return emitOpError("has ")
           << getStrides().size() << " strides for an input of rank " << rank;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t offset = getOffsets()[d], stride = getStride(d);
    int64_t size = out.getDimSize(d), dim = in.getDimSize(d);
    if (offset < 0 || stride < 1)
      return emitOpError("dimension ")
             << d << ": offset " << offset << " and stride " << stride
             << " must be at least 0 and 1";
    if (ShapedType::isDynamic(size)) {
      if (!ShapedType::isDynamic(dim) || offset != 0 || stride != 1)
        return emitOpError("dimension ")
               << d
               << ": a dynamic result dimension takes the whole dynamic "
                  "input dimension (offset 0, stride 1)";
      continue;
    }
    if (ShapedType::isDynamic(dim))
      return emitOpError("dimension ")
             << d
             << ": a dynamic input dimension is taken whole (a dynamic "
                "result dimension); its gradient needs the input's size";
    // The last index read, offset + (size - 1) * stride, must be < dim.
    std::optional<int64_t> last =
        size == 0 ? std::optional<int64_t>(offset - 1)
                  : llvm::checkedMulAdd<int64_t>(size - 1, stride, offset);
    if (!last || *last >= dim || (size == 0 && offset > dim))
      return emitOpError("dimension ")
             << d << ": " << size << " elements from offset " << offset
             << " with stride " << stride << " exceed the input's " << dim;
  }
  return success();
}

LogicalResult PadOp::inferReturnTypes(MLIRContext *,
                                      std::optional<Location> loc,
                                      Adaptor adaptor,
                                      SmallVectorImpl<Type> &types) {
  auto type = cast<RankedTensorType>(adaptor.getInput().getType());
  int64_t rank = type.getRank();
  ArrayRef<int64_t> low = adaptor.getLow(), high = adaptor.getHigh(),
                    interior = adaptor.getInterior();
  if (static_cast<int64_t>(low.size()) != rank ||
      static_cast<int64_t>(high.size()) != rank ||
      (!interior.empty() && static_cast<int64_t>(interior.size()) != rank))
    return emitOptionalError(loc, "low, high and interior need ", rank,
                             " entries each, one per input dimension");
  if (auto integer = dyn_cast<IntegerType>(type.getElementType())) {
    // The value must be one of the integer type's (signed; i1: 0 or 1).
    APFloat value = adaptor.getValue();
    APSInt asInt(integer.getWidth(), /*isUnsigned=*/integer.getWidth() == 1);
    bool exact = false;
    if (value.convertToInteger(asInt, APFloat::rmTowardZero, &exact) !=
            APFloat::opOK ||
        !exact)
      return emitOptionalError(loc, "value ", value.convertToDouble(),
                               " is not a value of ", integer);
  }
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t in = interior.empty() ? 0 : interior[d];
    if (low[d] < 0 || high[d] < 0 || in < 0)
      return emitOptionalError(loc, "dimension ", d,
                               ": padding must be at least 0");
    int64_t n = type.getDimSize(d);
    if (ShapedType::isDynamic(n)) {
      if (low[d] != 0 || high[d] != 0 || in != 0)
        return emitOptionalError(loc, "dimension ", d,
                                 " is dynamic: only static dimensions are "
                                 "padded");
      shape.push_back(ShapedType::kDynamic);
      continue;
    }
    std::optional<int64_t> size =
        llvm::checkedMulAdd<int64_t>(std::max<int64_t>(n - 1, 0), in, n);
    if (size)
      size = llvm::checkedAdd(*size, low[d]);
    if (size)
      size = llvm::checkedAdd(*size, high[d]);
    if (!size)
      return emitOptionalError(loc, "dimension ", d,
                               ": the padded size overflows 64 bits");
    shape.push_back(*size);
  }
  types.push_back(RankedTensorType::get(shape, type.getElementType()));
  return success();
}

LogicalResult ConcatOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  ValueRange inputs = adaptor.getInputs();
  if (inputs.empty())
    return emitOptionalError(loc, "needs at least one input");
  auto first = cast<RankedTensorType>(inputs.front().getType());
  int64_t rank = first.getRank();
  int64_t axis = adaptor.getAxis();
  if (rank == 0 || axis < -rank || axis >= rank)
    return emitOptionalError(loc, "axis ", axis,
                             " is out of range for inputs of rank ", rank);
  if (axis < 0)
    axis += rank;
  SmallVector<int64_t> shape(first.getShape());
  shape[axis] = 0;
  for (auto [i, input] : llvm::enumerate(inputs)) {
    auto type = cast<RankedTensorType>(input.getType());
    if (type.getElementType() != first.getElementType() ||
        type.getRank() != rank)
      return emitOptionalError(loc, "input #", i, " has type ", type,
                               "; expected rank ", rank, " and element type ",
                               first.getElementType());
    for (int64_t d = 0; d < rank; ++d) {
      if (d == axis)
        continue;
      // Equal, static or dynamic alike: each input's gradient is a slice
      // of the result's with the input's own type.
      if (shape[d] != type.getDimSize(d))
        return emitOptionalError(
            loc, "input #", i, " shape ", shapeString(type.getShape()),
            " differs from the others outside axis ", axis);
    }
    int64_t size = type.getDimSize(axis);
    if (ShapedType::isDynamic(size))
      return emitOptionalError(loc, "input #", i,
                               " has a dynamic size along axis ", axis,
                               "; concat needs static sizes there");
    std::optional<int64_t> sum = llvm::checkedAdd(shape[axis], size);
    if (!sum)
      return emitOptionalError(loc, "the size along axis ", axis,
                               " overflows 64 bits");
    shape[axis] = *sum;
  }
  types.push_back(RankedTensorType::get(shape, first.getElementType()));
  return success();
}

LogicalResult IotaOp::verify() {
  auto type = cast<RankedTensorType>(getType());
  if (!type.hasStaticShape())
    return emitOpError("result must have a static shape, got ") << type;
  // I64Attr reads as unsigned: a negative axis is a huge one.
  auto axis = static_cast<int64_t>(getAxis());
  if (axis < 0 || axis >= type.getRank())
    return emitOpError("axis ")
           << axis << " is out of range for rank " << type.getRank();
  // Every index must be a value of an integer element type (signed).
  int64_t last = type.getDimSize(axis) - 1;
  if (auto integer = dyn_cast<IntegerType>(type.getElementType());
      integer && last > 0 && !llvm::isIntN(integer.getWidth(), last))
    return emitOpError("indices up to ")
           << last << " do not fit in " << integer;
  return success();
}

//===----------------------------------------------------------------------===//
// GatherOp, ScatterAddOp
//===----------------------------------------------------------------------===//

/// `indices.shape x table.shape[1:]`.
static FailureOr<SmallVector<int64_t>>
gatheredShape(std::optional<Location> loc, RankedTensorType table,
              RankedTensorType indices) {
  if (table.getRank() < 1)
    return emitOptionalError(loc, "table must have rank 1 or more");
  if (table.getDimSize(0) == 0)
    return emitOptionalError(loc, "table has no rows: every index would be "
                                  "out of range");
  SmallVector<int64_t> shape(indices.getShape());
  llvm::append_range(shape, table.getShape().drop_front());
  return shape;
}

LogicalResult GatherOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  auto table = cast<RankedTensorType>(adaptor.getTable().getType());
  auto indices = cast<RankedTensorType>(adaptor.getIndices().getType());
  FailureOr<SmallVector<int64_t>> shape = gatheredShape(loc, table, indices);
  if (failed(shape))
    return failure();
  types.push_back(RankedTensorType::get(*shape, table.getElementType()));
  return success();
}

LogicalResult ScatterAddOp::verify() {
  RankedTensorType table = getTable().getType();
  RankedTensorType updates = getUpdates().getType();
  FailureOr<SmallVector<int64_t>> shape =
      gatheredShape(getLoc(), table, getIndices().getType());
  if (failed(shape))
    return failure();
  if (updates.getElementType() != table.getElementType())
    return emitOpError("updates element type ")
           << updates.getElementType() << " differs from the table's "
           << table.getElementType();
  if (updates.getRank() != static_cast<int64_t>(shape->size()) ||
      !llvm::all_of(llvm::zip(updates.getShape(), *shape), [](auto p) {
        return dimsCompatible(std::get<0>(p), std::get<1>(p));
      }))
    return emitOpError("updates shape ")
           << shapeString(updates.getShape()) << " is not the gathered shape "
           << shapeString(*shape);
  return success();
}

//===----------------------------------------------------------------------===//
// Optimizers
//===----------------------------------------------------------------------===//

/// The operand and result layout shared by the optimizer ops.
static LogicalResult verifyOptimizer(Operation *op, ValueRange params,
                                     ValueRange grads, ValueRange states,
                                     ValueRange copies, TypeRange results,
                                     unsigned statesPerParam) {
  size_t n = params.size();
  if (grads.size() != n)
    return op->emitOpError("has ")
           << n << " parameters but " << grads.size() << " gradients";
  for (size_t i = 0; i < n; ++i)
    if (grads[i].getType() != params[i].getType())
      return op->emitOpError("gradient #")
             << i << " has type " << grads[i].getType() << ", parameter #" << i
             << " has type " << params[i].getType();
  if (states.size() != statesPerParam * n)
    return op->emitOpError("expects ")
           << statesPerParam << " state tensors per parameter ("
           << statesPerParam * n << "), got " << states.size();
  for (size_t k = 0; k < statesPerParam; ++k)
    for (size_t i = 0; i < n; ++i)
      if (states[k * n + i].getType() != params[i].getType())
        return op->emitOpError("state #")
               << k * n + i << " has type " << states[k * n + i].getType()
               << ", parameter #" << i << " has type " << params[i].getType();
  SmallVector<Type> expected(params.getTypes());
  llvm::append_range(expected, states.getTypes());
  llvm::append_range(expected, copies.getTypes());
  if (results != TypeRange(expected))
    return op->emitOpError("results must be the new parameters, the new "
                           "states, then the new copies (")
           << expected.size() << " tensors of the same types)";
  return success();
}

/// The bf16 copies of an optimizer op: one per index of `copyParams`, each
/// of its parameter's shape; with `split`, the top halves (bf16) then the
/// low halves (i16).
static LogicalResult verifyCopies(Operation *op, ValueRange params,
                                  ValueRange copies,
                                  std::optional<ArrayRef<int64_t>> copyParams) {
  ArrayRef<int64_t> indices = copyParams.value_or(ArrayRef<int64_t>());
  bool split = op->hasAttr("split_copies");
  size_t perParam = split ? 2 : 1;
  if (indices.size() * perParam != copies.size())
    return op->emitOpError("has ")
           << copies.size() << " copies but copy_params lists "
           << indices.size() << " parameters"
           << (split ? " (split_copies: a top and a low half each)" : "");
  int64_t previous = -1;
  for (auto [k, i] : llvm::enumerate(indices)) {
    if (i <= previous || i >= static_cast<int64_t>(params.size()))
      return op->emitOpError("copy_params must be increasing indices of "
                             "the ")
             << params.size() << " parameters, got " << i << " at #" << k;
    previous = i;
    auto param = cast<RankedTensorType>(params[i].getType());
    auto expected = RankedTensorType::get(param.getShape(),
                                          BFloat16Type::get(op->getContext()));
    if (copies[k].getType() != expected)
      return op->emitOpError("copy #")
             << k << " has type " << copies[k].getType() << ", expected "
             << expected << " (parameter #" << i << " in bf16)";
    if (!split)
      continue;
    auto low = RankedTensorType::get(param.getShape(),
                                     IntegerType::get(op->getContext(), 16));
    size_t l = indices.size() + k;
    if (copies[l].getType() != low)
      return op->emitOpError("copy #")
             << l << " has type " << copies[l].getType() << ", expected " << low
             << " (the low half of parameter #" << i << ")";
  }
  return success();
}

//===----------------------------------------------------------------------===//
// IPEX's split layout
//===----------------------------------------------------------------------===//

static Value bitsOf(OpBuilder &b, Location loc, Value x) {
  return arith::BitcastOp::create(b, loc, b.getI32Type(), x);
}

Value HighHalfOp::buildScalar(OpBuilder &b, Location loc, Value x) {
  Value shifted = arith::ShRUIOp::create(
      b, loc, bitsOf(b, loc, x),
      arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(16)));
  return arith::BitcastOp::create(
      b, loc, b.getBF16Type(),
      arith::TruncIOp::create(b, loc, b.getI16Type(), shifted));
}

Value LowHalfOp::buildScalar(OpBuilder &b, Location loc, Value x) {
  return arith::TruncIOp::create(b, loc, b.getI16Type(), bitsOf(b, loc, x));
}

Value JoinHalvesOp::buildScalar(OpBuilder &b, Location loc, Value top,
                                Value low) {
  Type i32 = b.getI32Type();
  Value high = arith::ShLIOp::create(
      b, loc,
      arith::ExtUIOp::create(
          b, loc, i32, arith::BitcastOp::create(b, loc, b.getI16Type(), top)),
      arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(16)));
  Value bits = arith::OrIOp::create(b, loc, high,
                                    arith::ExtUIOp::create(b, loc, i32, low));
  return arith::BitcastOp::create(b, loc, b.getF32Type(), bits);
}

namespace {
/// The values a hyperparameter may take, as torch.optim checks them.
enum class Range { Finite, NonNegative, UnitInterval };
struct HyperparameterRule {
  StringLiteral optimizer, name;
  Range range;
  /// The update also uses 1 - value as a constant.
  bool complement = false;
};
} // namespace

// torch.optim accepts any finite dampening; everything else is a rate, a
// decay or an epsilon (>= 0) or a moment coefficient (in [0, 1)).
static const HyperparameterRule kHyperparameterRules[] = {
    {"sgd", "momentum", Range::NonNegative},
    {"sgd", "dampening", Range::Finite, /*complement=*/true},
    {"sgd", "weight_decay", Range::NonNegative},
    {"adam", "beta1", Range::UnitInterval, /*complement=*/true},
    {"adam", "beta2", Range::UnitInterval, /*complement=*/true},
    {"adam", "eps", Range::NonNegative},
    {"adam", "weight_decay", Range::NonNegative},
    {"adagrad", "lr_decay", Range::NonNegative},
    {"adagrad", "initial_accumulator_value", Range::NonNegative},
    {"adagrad", "eps", Range::NonNegative},
    {"adagrad", "weight_decay", Range::NonNegative},
    {"rmsprop", "alpha", Range::UnitInterval, /*complement=*/true},
    {"rmsprop", "eps", Range::NonNegative},
    {"rmsprop", "momentum", Range::NonNegative},
    {"rmsprop", "weight_decay", Range::NonNegative},
    {"lamb", "beta1", Range::UnitInterval, /*complement=*/true},
    {"lamb", "beta2", Range::UnitInterval, /*complement=*/true},
    {"lamb", "eps", Range::NonNegative},
    {"lamb", "weight_decay", Range::NonNegative},
};

/// The shortest decimal that reads back as `value`, e.g. "1e+39".
static std::string shortestDecimal(double value) {
  char text[32];
  for (int digits = 1; digits <= 17; ++digits) {
    std::snprintf(text, sizeof(text), "%.*g", digits, value);
    if (std::strtod(text, nullptr) == value)
      break;
  }
  return text;
}

/// Whether `value` rounds to a finite number of `type`.
static bool isFiniteIn(double value, FloatType type) {
  APFloat rounded(value);
  bool losesInfo = false;
  rounded.convert(type.getFloatSemantics(), APFloat::rmNearestTiesToEven,
                  &losesInfo);
  return rounded.isFinite();
}

/// Checks the float hyperparameters in `attrs` of the optimizer `optimizer`
/// (`adam` for `fuse.adam`): every one finite, each in its range, and
/// finite in each of `paramTypes` (the parameters' element types), where
/// the update's constants are built, with 1 - value where the update uses
/// that. Absent ones take their (valid) defaults.
static LogicalResult
verifyHyperparameters(StringRef optimizer, ArrayRef<NamedAttribute> attrs,
                      ArrayRef<Type> paramTypes,
                      function_ref<InFlightDiagnostic()> emitError) {
  for (NamedAttribute attr : attrs) {
    auto value = dyn_cast<FloatAttr>(attr.getValue());
    if (!value)
      continue;
    StringRef name = attr.getName().getValue();
    double v = value.getValueAsDouble();
    SmallString<16> text;
    value.getValue().toString(text);
    if (!std::isfinite(v))
      return emitError() << "'" << name << "' must be finite, got " << text;
    for (const HyperparameterRule &rule : kHyperparameterRules) {
      if (rule.optimizer != optimizer || rule.name != name)
        continue;
      if (rule.range == Range::NonNegative && v < 0.0)
        return emitError() << "'" << name << "' must be non-negative, got "
                           << text;
      if (rule.range == Range::UnitInterval && !(v >= 0.0 && v < 1.0))
        return emitError() << "'" << name << "' must be in [0, 1), got "
                           << text;
    }
    bool complement = llvm::any_of(kHyperparameterRules, [&](const auto &r) {
      return r.optimizer == optimizer && r.name == name && r.complement;
    });
    for (Type type : paramTypes) {
      auto floatType = dyn_cast<FloatType>(type);
      if (!floatType)
        continue;
      if (!isFiniteIn(v, floatType))
        return emitError() << "'" << name << "' = " << shortestDecimal(v)
                           << " overflows the parameters' type " << floatType;
      if (complement && !isFiniteIn(1.0 - v, floatType))
        return emitError() << "1 - '" << name
                           << "' = " << shortestDecimal(1.0 - v)
                           << " overflows the parameters' type " << floatType;
    }
  }
  return success();
}

/// The distinct element types of `params`.
static SmallVector<Type> elementTypesOf(TypeRange params) {
  SmallVector<Type> types;
  for (Type type : params) {
    Type element = getElementTypeOrSelf(type);
    if (!llvm::is_contained(types, element))
      types.push_back(element);
  }
  return types;
}

/// The hyperparameters of an optimizer op with parameters `params`.
static LogicalResult verifyHyperparameters(Operation *op, ValueRange params) {
  StringRef optimizer = op->getName().stripDialect();
  return verifyHyperparameters(optimizer, op->getAttrDictionary().getValue(),
                               elementTypesOf(params.getTypes()),
                               [op] { return op->emitOpError(); });
}

unsigned SgdOp::getNumStatesPerParam() {
  return getMomentum().convertToDouble() != 0.0 ? 1 : 0;
}

LogicalResult SgdOp::verify() {
  if (failed(verifyHyperparameters(*this, getParams())))
    return failure();
  double momentum = getMomentum().convertToDouble();
  if (getNesterov() &&
      (momentum <= 0.0 || getDampening().convertToDouble() != 0.0))
    return emitOpError("nesterov needs a positive momentum and no dampening");
  if (failed(verifyCopies(*this, getParams(), getCopies(), getCopyParams())))
    return failure();
  return verifyOptimizer(*this, getParams(), getGrads(), getStates(),
                         getCopies(), getResultTypes(), getNumStatesPerParam());
}

unsigned AdamOp::getNumStatesPerParam() { return getAmsgrad() ? 3 : 2; }

/// Adam and LAMB share their moment hyperparameters.
template <typename OpTy> static LogicalResult verifyAdamLike(OpTy op) {
  if (failed(verifyHyperparameters(op, op.getParams())))
    return failure();
  if (failed(
          verifyCopies(op, op.getParams(), op.getCopies(), op.getCopyParams())))
    return failure();
  return verifyOptimizer(op, op.getParams(), op.getGrads(), op.getStates(),
                         op.getCopies(), op.getResultTypes(),
                         op.getNumStatesPerParam());
}

LogicalResult AdamOp::verify() { return verifyAdamLike(*this); }

unsigned AdagradOp::getNumStatesPerParam() { return 1; }

double AdagradOp::getStateInitialValue(unsigned) {
  return getInitialAccumulatorValue().convertToDouble();
}

LogicalResult AdagradOp::verify() {
  if (failed(verifyHyperparameters(*this, getParams())))
    return failure();
  if (failed(verifyCopies(*this, getParams(), getCopies(), getCopyParams())))
    return failure();
  return verifyOptimizer(*this, getParams(), getGrads(), getStates(),
                         getCopies(), getResultTypes(), getNumStatesPerParam());
}

unsigned RmspropOp::getNumStatesPerParam() {
  return 1 + (getCentered() ? 1 : 0) +
         (getMomentum().convertToDouble() != 0.0 ? 1 : 0);
}

LogicalResult RmspropOp::verify() {
  if (failed(verifyHyperparameters(*this, getParams())))
    return failure();
  if (failed(verifyCopies(*this, getParams(), getCopies(), getCopyParams())))
    return failure();
  return verifyOptimizer(*this, getParams(), getGrads(), getStates(),
                         getCopies(), getResultTypes(), getNumStatesPerParam());
}

unsigned LambOp::getNumStatesPerParam() { return 2; }

LogicalResult LambOp::verify() { return verifyAdamLike(*this); }

//===----------------------------------------------------------------------===//
// Ops of the backward pass
//===----------------------------------------------------------------------===//

LogicalResult FullLikeOp::inferReturnTypes(MLIRContext *,
                                           std::optional<Location>,
                                           Adaptor adaptor,
                                           SmallVectorImpl<Type> &types) {
  types.push_back(adaptor.getShapeOf().getType());
  return success();
}

LogicalResult ExpandDimsOp::inferReturnTypes(MLIRContext *,
                                             std::optional<Location> loc,
                                             Adaptor adaptor,
                                             SmallVectorImpl<Type> &types) {
  auto type = cast<RankedTensorType>(adaptor.getInput().getType());
  ArrayRef<int64_t> axes = adaptor.getAxes();
  int64_t rank = type.getRank() + axes.size();
  SmallVector<bool> inserted(rank, false);
  for (int64_t axis : axes) {
    if (axis < 0 || axis >= rank)
      return emitOptionalError(loc, "axis ", axis,
                               " is out of range for result rank ", rank);
    if (inserted[axis])
      return emitOptionalError(loc, "axis ", axis, " appears more than once");
    inserted[axis] = true;
  }
  SmallVector<int64_t> shape;
  int64_t next = 0;
  for (int64_t d = 0; d < rank; ++d)
    shape.push_back(inserted[d] ? 1 : type.getDimSize(next++));
  types.push_back(RankedTensorType::get(shape, type.getElementType()));
  return success();
}

LogicalResult SoftmaxCrossEntropyGradOp::inferReturnTypes(
    MLIRContext *context, std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &types) {
  // The same checks as the forward op.
  SmallVector<Type> forward;
  if (failed(SoftmaxCrossEntropyOp::inferReturnTypes(
          context, loc,
          SoftmaxCrossEntropyOp::Adaptor(
              ValueRange{adaptor.getLogits(), adaptor.getLabels()}),
          forward)))
    return failure();
  types.push_back(adaptor.getLogits().getType());
  return success();
}

LogicalResult
ValueAndGradOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  auto callee = symbolTable.lookupNearestSymbolFrom<FunctionOpInterface>(
      *this, getCalleeAttr());
  if (!callee)
    return emitOpError("no function named ") << getCalleeAttr();
  ArrayRef<Type> inputs = callee.getArgumentTypes();
  ArrayRef<Type> outputs = callee.getResultTypes();
  if (getArgs().size() != inputs.size())
    return emitOpError("passes ")
           << getArgs().size() << " arguments to " << getCalleeAttr()
           << ", which takes " << inputs.size();
  for (auto [i, arg, type] : llvm::enumerate(getArgs(), inputs))
    if (arg.getType() != type)
      return emitOpError("argument #")
             << i << " has type " << arg.getType() << ", " << getCalleeAttr()
             << " expects " << type;
  auto loss = outputs.size() == 1 ? dyn_cast<RankedTensorType>(outputs[0])
                                  : RankedTensorType();
  if (!loss || loss.getRank() != 0 || !isa<FloatType>(loss.getElementType()))
    return emitOpError("needs ")
           << getCalleeAttr()
           << " to return one 0-d float tensor (a scalar loss)";
  SmallVector<Type> expected = {loss};
  llvm::SmallSet<int64_t, 8> seen;
  for (int64_t i : getWrt()) {
    if (i < 0 || i >= static_cast<int64_t>(inputs.size()))
      return emitOpError("wrt index ")
             << i << " is out of range for " << inputs.size() << " arguments";
    if (!seen.insert(i).second)
      return emitOpError("wrt index ") << i << " appears more than once";
    auto type = dyn_cast<RankedTensorType>(inputs[i]);
    if (!type || !isa<FloatType>(type.getElementType()))
      return emitOpError("cannot differentiate with respect to argument #")
             << i << " of type " << inputs[i]
             << ": gradients need a float tensor";
    expected.push_back(type);
  }
  if (TypeRange(getResultTypes()) != TypeRange(expected)) {
    std::string want;
    llvm::raw_string_ostream os(want);
    llvm::interleaveComma(expected, os);
    return emitOpError("results must be the loss and one gradient per wrt "
                       "argument: (")
           << want << ")";
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Training
//===----------------------------------------------------------------------===//

/// Checks an optional clipping bound `name` of `op`: finite, above 0.
static LogicalResult verifyClipBound(Operation *op, StringRef name,
                                     std::optional<APFloat> bound) {
  if (!bound)
    return success();
  std::string error = clipError(name, bound->convertToDouble());
  if (!error.empty())
    return op->emitOpError(error);
  return success();
}

LogicalResult ClipGradientsOp::verify() {
  if (!getClipNorm() && !getClipValue())
    return emitOpError("clips nothing: needs clip_norm or clip_value");
  if (getGrads().empty())
    return emitOpError("needs at least one gradient");
  if (failed(verifyClipBound(*this, "clip_norm", getClipNorm())) ||
      failed(verifyClipBound(*this, "clip_value", getClipValue())))
    return failure();
  return success();
}

LogicalResult AllReduceOp::verify() {
  if (getInputs().empty())
    return emitOpError("needs at least one tensor to reduce");
  // The runtime reduces f32 buffers (fuse_all_reduce_start_f32), each of static
  // size: the lowering packs the tensors into them.
  for (auto [i, input] : llvm::enumerate(getInputs())) {
    auto type = cast<RankedTensorType>(input.getType());
    if (!type.getElementType().isF32())
      return emitOpError("reduces f32 tensors; operand #")
             << i << " is " << type;
    if (!type.hasStaticShape())
      return emitOpError("needs static shapes (every rank's buffer the same "
                         "size); operand #")
             << i << " is " << type;
  }
  return success();
}

LogicalResult TrainStepOp::verify() {
  if (failed(verifyClipBound(*this, "clip_norm", getClipNorm())) ||
      failed(verifyClipBound(*this, "clip_value", getClipValue())))
    return failure();
  if (std::optional<StringRef> precision = getPrecision();
      precision && !parsePrecision(*precision))
    return emitOpError("precision is \"")
           << *precision << "\": expected \"f32\" or \"bf16\"";
  if (std::optional<StringRef> layout = getMasterWeights();
      layout && !parseMasterWeights(*layout))
    return emitOpError("master_weights is \"")
           << *layout << "\": expected \"copy\" or \"split\"";
  return success();
}

LogicalResult
TrainStepOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  auto loss = symbolTable.lookupNearestSymbolFrom<FunctionOpInterface>(
      *this, getLossAttr());
  if (!loss)
    return emitOpError("no function named ") << getLossAttr();
  ArrayRef<Type> inputs = loss.getArgumentTypes();
  ArrayRef<Type> outputs = loss.getResultTypes();
  auto lossType = outputs.size() == 1 ? dyn_cast<RankedTensorType>(outputs[0])
                                      : RankedTensorType();
  if (!lossType || lossType.getRank() != 0 ||
      !isa<FloatType>(lossType.getElementType()))
    return emitOpError("needs ")
           << getLossAttr()
           << " to return one 0-d float tensor (a scalar loss)";
  if (getParams().empty())
    return emitOpError("trains nothing: params is empty");
  llvm::SmallSet<int64_t, 8> seen;
  for (int64_t i : getParams()) {
    if (i < 0 || i >= static_cast<int64_t>(inputs.size()))
      return emitOpError("parameter index ")
             << i << " is out of range for " << inputs.size() << " arguments";
    if (!seen.insert(i).second)
      return emitOpError("parameter index ") << i << " appears more than once";
    auto type = dyn_cast<RankedTensorType>(inputs[i]);
    if (!type || !isa<FloatType>(type.getElementType()))
      return emitOpError("cannot train argument #")
             << i << " of type " << inputs[i]
             << ": parameters are float tensors";
  }
  if (std::optional<int64_t> step = getStepArg()) {
    if (*step < 0 || *step >= static_cast<int64_t>(inputs.size()))
      return emitOpError("step_arg ") << *step << " is out of range for "
                                      << inputs.size() << " arguments";
    if (seen.contains(*step))
      return emitOpError("step_arg ") << *step << " is also a parameter";
    auto type = dyn_cast<RankedTensorType>(inputs[*step]);
    if (!type || type.getRank() != 0 || !type.getElementType().isInteger(64))
      return emitOpError("step_arg ") << *step << " has type " << inputs[*step]
                                      << ", the step counter is a tensor<i64>";
  }
  std::optional<RegisteredOperationName> optimizer =
      RegisteredOperationName::lookup(("fuse." + getOptimizer()).str(),
                                      getContext());
  if (!optimizer || !optimizer->hasInterface<OptimizerOpInterface>())
    return emitOpError("unknown optimizer '")
           << getOptimizer() << "' (sgd, adam, adagrad, rmsprop or lamb)";
  if (std::optional<ArrayRef<int64_t>> noDecay = getNoDecay()) {
    if (!llvm::is_contained(optimizer->getAttributeNames(),
                            StringAttr::get(getContext(), "weight_decay")))
      return emitOpError("no_decay needs an optimizer with weight_decay; ")
             << optimizer->getStringRef() << " has none";
    llvm::SmallSet<int64_t, 8> excluded;
    for (int64_t i : *noDecay) {
      if (!seen.contains(i))
        return emitOpError("no_decay index ")
               << i << " is not one of the parameters";
      if (!excluded.insert(i).second)
        return emitOpError("no_decay index ") << i << " appears more than once";
    }
  }
  DictionaryAttr hyperparameters = getHyperparametersAttr();
  if (!hyperparameters)
    return success();
  for (NamedAttribute attr : hyperparameters)
    // copy_params and split_copies are the precision policy's, not
    // hyperparameters.
    if (!llvm::is_contained(optimizer->getAttributeNames(), attr.getName()) ||
        attr.getName() == "copy_params" || attr.getName() == "split_copies")
      return emitOpError("'")
             << attr.getName().getValue() << "' is not a hyperparameter of "
             << optimizer->getStringRef();
  // Their types, as the optimizer op's verifier would check them, then
  // their values.
  auto emitError = [&] {
    return emitOpError("hyperparameters of ")
           << optimizer->getStringRef() << ": ";
  };
  NamedAttrList attrs(hyperparameters);
  if (failed(optimizer->verifyInherentAttrs(attrs, emitError)))
    return failure();
  SmallVector<Type> paramTypes;
  for (int64_t i : getParams())
    paramTypes.push_back(inputs[i]);
  return verifyHyperparameters(getOptimizer(), hyperparameters.getValue(),
                               elementTypesOf(paramTypes), emitError);
}

#define GET_OP_CLASSES
#include "Fuse/FuseOps.cpp.inc"

#include "Fuse/FuseEnums.cpp.inc"
#include "Fuse/FuseInterfaces.cpp.inc"

SmallVector<unsigned>
TrainStepOp::getBatchArguments(unsigned numLossArguments) {
  int64_t stepArg = getStepArg().value_or(-1);
  SmallVector<unsigned> batch;
  for (unsigned i = 0; i < numLossArguments; ++i)
    if (!llvm::is_contained(getParams(), i) && i != stepArg)
      batch.push_back(i);
  return batch;
}
