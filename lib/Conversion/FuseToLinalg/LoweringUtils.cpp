//===- LoweringUtils.cpp - Builders shared by the fuse lowerings ----------===//

#include "LoweringUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"

#include <cmath>

using namespace mlir;

namespace fuse::lowering {

AffineMap broadcastMap(RankedTensorType operand, ArrayRef<int64_t> resultShape,
                       MLIRContext *context) {
  unsigned offset = resultShape.size() - operand.getRank();
  SmallVector<AffineExpr> exprs;
  for (auto [i, dim] : llvm::enumerate(operand.getShape())) {
    if (dim == 1 && resultShape[offset + i] != 1)
      exprs.push_back(getAffineConstantExpr(0, context));
    else
      exprs.push_back(getAffineDimExpr(offset + i, context));
  }
  return AffineMap::get(resultShape.size(), 0, exprs, context);
}

AffineMap dropDimsMap(unsigned rank, ArrayRef<int64_t> dims,
                      MLIRContext *context) {
  SmallVector<AffineExpr> exprs;
  for (unsigned d = 0; d < rank; ++d)
    if (!llvm::is_contained(dims, d))
      exprs.push_back(getAffineDimExpr(d, context));
  return AffineMap::get(rank, 0, exprs, context);
}

Value emptyTensor(OpBuilder &b, Location loc, RankedTensorType type) {
  return tensor::EmptyOp::create(b, loc, type.getShape(),
                                 type.getElementType());
}

Value filledTensor(OpBuilder &b, Location loc, RankedTensorType type,
                   TypedAttr value) {
  Value scalar = arith::ConstantOp::create(b, loc, value);
  return linalg::FillOp::create(b, loc, scalar, emptyTensor(b, loc, type))
      .getResult(0);
}

Value scalarConstant(OpBuilder &b, Location loc, Type type, double value) {
  if (auto floatType = dyn_cast<FloatType>(type))
    return arith::ConstantOp::create(b, loc, b.getFloatAttr(floatType, value));
  return arith::ConstantOp::create(
      b, loc, b.getIntegerAttr(type, static_cast<int64_t>(value)));
}

Value buildParallel(OpBuilder &b, Location loc, RankedTensorType resultType,
                    ValueRange inputs, ArrayRef<AffineMap> inputMaps,
                    BodyFn body) {
  unsigned rank = resultType.getRank();
  SmallVector<AffineMap> maps(inputMaps);
  maps.push_back(b.getMultiDimIdentityMap(rank));
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, loc, resultType, inputs, emptyTensor(b, loc, resultType), maps,
      iterators, [&](OpBuilder &nb, Location nl, ValueRange args) {
        Value result = body(nb, nl, args.drop_back());
        linalg::YieldOp::create(nb, nl, result);
      });
  return generic.getResult(0);
}

Value buildElementwise(OpBuilder &b, Location loc, RankedTensorType resultType,
                       ValueRange inputs, BodyFn body) {
  SmallVector<AffineMap> maps;
  for (Value input : inputs)
    maps.push_back(broadcastMap(cast<RankedTensorType>(input.getType()),
                                resultType.getShape(), b.getContext()));
  return buildParallel(b, loc, resultType, inputs, maps, body);
}

TypedAttr combinerIdentity(Type elementType, Combiner combiner) {
  if (auto floatType = dyn_cast<FloatType>(elementType)) {
    if (combiner == Combiner::Sum)
      return FloatAttr::get(floatType, 0.0);
    return FloatAttr::get(floatType,
                          APFloat::getInf(floatType.getFloatSemantics(),
                                          /*Negative=*/true));
  }
  unsigned width = elementType.getIntOrFloatBitWidth();
  return IntegerAttr::get(elementType, combiner == Combiner::Sum
                                           ? APInt::getZero(width)
                                           : APInt::getSignedMinValue(width));
}

Value combine(OpBuilder &b, Location loc, Combiner combiner, Value acc,
              Value value) {
  bool isFloat = isa<FloatType>(acc.getType());
  if (combiner == Combiner::Sum)
    return isFloat ? arith::AddFOp::create(b, loc, acc, value).getResult()
                   : arith::AddIOp::create(b, loc, acc, value).getResult();
  return isFloat ? arith::MaximumFOp::create(b, loc, acc, value).getResult()
                 : arith::MaxSIOp::create(b, loc, acc, value).getResult();
}

Value buildReduction(OpBuilder &b, Location loc, ArrayRef<int64_t> loopShape,
                     ArrayRef<int64_t> reducedDims, Type elementType,
                     ValueRange inputs, ArrayRef<AffineMap> inputMaps,
                     Combiner combiner, BodyFn body) {
  MLIRContext *context = b.getContext();
  unsigned rank = loopShape.size();
  SmallVector<int64_t> resultShape;
  SmallVector<utils::IteratorType> iterators;
  for (unsigned d = 0; d < rank; ++d) {
    bool reduced = llvm::is_contained(reducedDims, d);
    iterators.push_back(reduced ? utils::IteratorType::reduction
                                : utils::IteratorType::parallel);
    if (!reduced)
      resultShape.push_back(loopShape[d]);
  }
  auto resultType = RankedTensorType::get(resultShape, elementType);
  Value init =
      filledTensor(b, loc, resultType, combinerIdentity(elementType, combiner));
  SmallVector<AffineMap> maps(inputMaps);
  maps.push_back(dropDimsMap(rank, reducedDims, context));
  auto generic = linalg::GenericOp::create(
      b, loc, resultType, inputs, init, maps, iterators,
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        Value value = body(nb, nl, args.drop_back());
        linalg::YieldOp::create(nb, nl,
                                combine(nb, nl, combiner, args.back(), value));
      });
  return generic.getResult(0);
}

Value reduceTensor(OpBuilder &b, Location loc, Value input,
                   ArrayRef<int64_t> axes, Combiner combiner) {
  auto type = cast<RankedTensorType>(input.getType());
  return buildReduction(
      b, loc, type.getShape(), axes, type.getElementType(), input,
      b.getMultiDimIdentityMap(type.getRank()), combiner,
      [](OpBuilder &, Location, ValueRange args) { return args[0]; });
}

Value reshapeTensor(OpBuilder &b, Location loc, Value input,
                    RankedTensorType type) {
  auto inType = cast<RankedTensorType>(input.getType());
  if (inType == type)
    return input;
  // Collapse to rank 1 (or 0), then expand to the result's rank.
  auto flatType =
      RankedTensorType::get(type.getRank() == 0 && inType.getRank() == 0
                                ? ArrayRef<int64_t>{}
                                : ArrayRef<int64_t>{type.getNumElements()},
                            type.getElementType());
  Value flat = input;
  if (inType.getRank() > 1 ||
      (inType.getRank() == 0 && flatType.getRank() == 1)) {
    SmallVector<ReassociationIndices> all;
    if (inType.getRank() > 0)
      all.push_back(llvm::to_vector(llvm::seq<int64_t>(0, inType.getRank())));
    flat = inType.getRank() == 0
               ? tensor::ExpandShapeOp::create(b, loc, flatType, input, all)
                     .getResult()
               : tensor::CollapseShapeOp::create(b, loc, flatType, input, all)
                     .getResult();
  }
  if (type.getRank() <= 1 && flatType == type)
    return flat;
  SmallVector<ReassociationIndices> all;
  if (type.getRank() > 0)
    all.push_back(llvm::to_vector(llvm::seq<int64_t>(0, type.getRank())));
  if (type.getRank() == 0)
    return tensor::CollapseShapeOp::create(b, loc, type, flat, all);
  return tensor::ExpandShapeOp::create(b, loc, type, flat, all);
}

} // namespace fuse::lowering
