//===- FuseOps.h - fuse dialect operations ----------------------*- C++ -*-===//

#ifndef FUSE_DIALECT_FUSE_IR_FUSEOPS_H
#define FUSE_DIALECT_FUSE_IR_FUSEOPS_H

#include "Fuse/IR/FuseDialect.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "Fuse/FuseEnums.h.inc"
#define GET_ATTRDEF_CLASSES
#include "Fuse/FuseAttrs.h.inc"
#include "Fuse/FuseInterfaces.h.inc"

#define GET_OP_CLASSES
#include "Fuse/FuseOps.h.inc"

namespace fuse {

/// The NumPy broadcast of two shapes, or failure when a pair of static
/// dimensions differs and neither is 1. A dynamic dimension broadcasts against
/// anything (it is checked when the function is specialized).
mlir::FailureOr<llvm::SmallVector<int64_t>>
broadcastShapes(llvm::ArrayRef<int64_t> lhs, llvm::ArrayRef<int64_t> rhs);

/// Whether `input` can be broadcast to `target` under NumPy rules.
bool isBroadcastableTo(llvm::ArrayRef<int64_t> input,
                       llvm::ArrayRef<int64_t> target);

/// The number of elements of a static `shape`, or nullopt when it does not
/// fit in int64_t (or a dim is dynamic or negative). Every element count in
/// verifiers, type inference and folds goes through it.
std::optional<int64_t> checkedNumElements(llvm::ArrayRef<int64_t> shape);

/// The bytes of a statically shaped `type` (elements of N bits take
/// ceil(N / 8) bytes, an index 8), or nullopt when the type is not static or
/// its size does not fit in int64_t.
std::optional<int64_t> checkedByteSize(mlir::ShapedType type);

/// Checks that every statically shaped tensor type in `root` (op results,
/// block arguments, the signatures of bodiless functions) has a byte size
/// that fits in int64_t, so that no later size computation (element counts,
/// allocation sizes, workspaces) can overflow. Emits an error at the first
/// op or argument holding such a type, naming it. Run where modules are
/// loaded (fuse::parseModule, fuse-opt) and after fuse-specialize.
mlir::LogicalResult verifyTensorSizes(mlir::Operation *root);

/// The largest window, stride, dilation or padding of a convolution or
/// pool: sums and products of two such values, and window positions as i32
/// pool indices, cannot overflow.
constexpr int64_t kMaxWindowAttribute = (int64_t(1) << 31) - 1;

/// The statistics of layer normalization over `axes` (trailing, sorted) of
/// `x`, kept with size 1 (keepdims): `mean`, `rstd = 1 / sqrt(var + eps)`
/// (biased variance) and the normalized `xhat = (x - mean) * rstd`. Built
/// from primitive ops, the same ones for the forward pass
/// (`fuse-decompose-layer-norm`) and the gradient (LayerNormOp's VJP), so
/// that CSE computes them once.
struct LayerNormStatistics {
  mlir::Value mean, rstd, xhat;
};
LayerNormStatistics buildLayerNormStatistics(mlir::OpBuilder &b,
                                             mlir::Location loc, mlir::Value x,
                                             llvm::ArrayRef<int64_t> axes,
                                             double epsilon);

/// `layer_norm` as primitive ops: `xhat * scale + bias`.
mlir::Value decomposeLayerNorm(mlir::OpBuilder &b, LayerNormOp op);

namespace detail {
/// Shared type inference of the op families, called from the ODS-generated
/// `inferReturnTypes`. Each emits a located error (when `loc` is set) and
/// fails on invalid operands.
mlir::LogicalResult
inferBroadcastResultType(std::optional<mlir::Location> loc, mlir::Type lhs,
                         mlir::Type rhs, mlir::Type elementType,
                         llvm::SmallVectorImpl<mlir::Type> &types);
mlir::LogicalResult
inferReduceResultType(std::optional<mlir::Location> loc, mlir::Type input,
                      llvm::ArrayRef<int64_t> axes, bool keepdims,
                      llvm::SmallVectorImpl<mlir::Type> &types);
mlir::LogicalResult
inferPool2DResultType(std::optional<mlir::Location> loc, mlir::Type input,
                      llvm::ArrayRef<int64_t> window,
                      std::optional<llvm::ArrayRef<int64_t>> strides,
                      llvm::ArrayRef<int64_t> padding,
                      llvm::SmallVectorImpl<mlir::Type> &types);
/// The pool's shape, of i8 for windows of at most 128 elements, else i32.
mlir::LogicalResult
inferPoolIndicesType(std::optional<mlir::Location> loc, mlir::Type input,
                     llvm::ArrayRef<int64_t> window,
                     std::optional<llvm::ArrayRef<int64_t>> strides,
                     llvm::ArrayRef<int64_t> padding,
                     llvm::SmallVectorImpl<mlir::Type> &types);
} // namespace detail

/// The largest constant, in elements, that folding may create. Splats are
/// always cheap and are exempt.
constexpr int64_t kMaxFoldedElements = 1 << 16;

} // namespace fuse

#endif // FUSE_DIALECT_FUSE_IR_FUSEOPS_H
