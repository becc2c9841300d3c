//===- LoweringUtils.h - Builders shared by the fuse lowerings --*- C++ -*-===//

#ifndef FUSE_LIB_CONVERSION_FUSETOLINALG_LOWERINGUTILS_H
#define FUSE_LIB_CONVERSION_FUSETOLINALG_LOWERINGUTILS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/PatternMatch.h"

namespace fuse::lowering {

using BodyFn = llvm::function_ref<mlir::Value(mlir::OpBuilder &, mlir::Location,
                                              mlir::ValueRange)>;

/// The map reading `operand` inside a loop nest over `resultShape` with NumPy
/// broadcasting: leading result dims are dropped and size-1 dims that stretch
/// read index 0.
mlir::AffineMap broadcastMap(mlir::RankedTensorType operand,
                             llvm::ArrayRef<int64_t> resultShape,
                             mlir::MLIRContext *context);

/// The identity map of `rank` dims without dim `axis`.
mlir::AffineMap dropDimsMap(unsigned rank, llvm::ArrayRef<int64_t> dims,
                            mlir::MLIRContext *context);

/// `tensor.empty` of a static type.
mlir::Value emptyTensor(mlir::OpBuilder &b, mlir::Location loc,
                        mlir::RankedTensorType type);

/// A tensor of `type` filled with `value`.
mlir::Value filledTensor(mlir::OpBuilder &b, mlir::Location loc,
                         mlir::RankedTensorType type, mlir::TypedAttr value);

/// A scalar constant of float or integer type.
mlir::Value scalarConstant(mlir::OpBuilder &b, mlir::Location loc,
                           mlir::Type type, double value);

/// A parallel `linalg.generic` computing `resultType` element by element
/// from `inputs` read through `inputMaps`.
mlir::Value buildParallel(mlir::OpBuilder &b, mlir::Location loc,
                          mlir::RankedTensorType resultType,
                          mlir::ValueRange inputs,
                          llvm::ArrayRef<mlir::AffineMap> inputMaps,
                          BodyFn body);

/// `buildParallel` with NumPy broadcasting of every input.
mlir::Value buildElementwise(mlir::OpBuilder &b, mlir::Location loc,
                             mlir::RankedTensorType resultType,
                             mlir::ValueRange inputs, BodyFn body);

/// The kinds of reduction the dialect needs.
enum class Combiner { Sum, Max };

/// The identity of `combiner` for `elementType` (0, -inf or INT_MIN).
mlir::TypedAttr combinerIdentity(mlir::Type elementType, Combiner combiner);

/// Combines an accumulator with a value.
mlir::Value combine(mlir::OpBuilder &b, mlir::Location loc, Combiner combiner,
                    mlir::Value acc, mlir::Value value);

/// A `linalg.generic` over the iteration space `loopShape` that reduces the
/// dims `reducedDims` (sorted). `body` maps the input elements to one value
/// that `combiner` folds into the result, which has the non-reduced dims.
mlir::Value buildReduction(mlir::OpBuilder &b, mlir::Location loc,
                           llvm::ArrayRef<int64_t> loopShape,
                           llvm::ArrayRef<int64_t> reducedDims,
                           mlir::Type elementType, mlir::ValueRange inputs,
                           llvm::ArrayRef<mlir::AffineMap> inputMaps,
                           Combiner combiner, BodyFn body);

/// Reduces `input` over `axes` (sorted) with `combiner`.
mlir::Value reduceTensor(mlir::OpBuilder &b, mlir::Location loc,
                         mlir::Value input, llvm::ArrayRef<int64_t> axes,
                         Combiner combiner);

/// Reshapes a static tensor to `type` (same element count) with
/// collapse/expand_shape.
mlir::Value reshapeTensor(mlir::OpBuilder &b, mlir::Location loc,
                          mlir::Value input, mlir::RankedTensorType type);

void populateElementwiseLoweringPatterns(mlir::RewritePatternSet &patterns);
void populateReductionLoweringPatterns(mlir::RewritePatternSet &patterns);
void populateContractionLoweringPatterns(mlir::RewritePatternSet &patterns);
void populateDropoutLoweringPatterns(mlir::RewritePatternSet &patterns);
void populateIndexingLoweringPatterns(mlir::RewritePatternSet &patterns);

} // namespace fuse::lowering

#endif // FUSE_LIB_CONVERSION_FUSETOLINALG_LOWERINGUTILS_H
