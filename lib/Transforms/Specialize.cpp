//===- Specialize.cpp - The fuse-specialize pass --------------------------===//

#include "Fuse/IR/FuseOps.h"
#include "fuse/SourceNames.h"
#include "fuse/Transforms/Passes.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/IR/Verifier.h"
#include "llvm/Support/CheckedArithmetic.h"

namespace fuse {
#define GEN_PASS_DEF_FUSESPECIALIZE
#include "fuse/Transforms/Passes.h.inc"
} // namespace fuse

using namespace mlir;

/// Whether `given` may replace `declared`: same rank and element type, and
/// every static declared dim kept.
static bool refines(Type declared, Type given) {
  if (declared == given)
    return true;
  auto d = dyn_cast<RankedTensorType>(declared);
  auto g = dyn_cast<RankedTensorType>(given);
  if (!d || !g || d.getElementType() != g.getElementType() ||
      d.getRank() != g.getRank())
    return false;
  for (auto [dd, gd] : llvm::zip(d.getShape(), g.getShape()))
    if (!ShapedType::isDynamic(dd) && dd != gd)
      return false;
  return true;
}

/// The result type of a reshape once its input type is known: the one
/// dynamic dim takes the remaining element count.
static FailureOr<Type> refineReshape(fuse::ReshapeOp op) {
  auto in = op.getInput().getType();
  RankedTensorType out = op.getType();
  if (!in.hasStaticShape() || out.hasStaticShape())
    return Type(out);
  // The input's type was checked (verifyTensorSizes): its count fits, so
  // does any product of static dims that divides it.
  std::optional<int64_t> known = 1;
  for (int64_t d : out.getShape())
    if (!ShapedType::isDynamic(d) && known)
      known = llvm::checkedMul(*known, d);
  int64_t count = *fuse::checkedNumElements(in.getShape());
  if (!known || *known == 0 || count % *known != 0)
    return op.emitOpError("cannot reshape ")
           << in << " (" << count << " elements) into " << out;
  SmallVector<int64_t> shape(out.getShape());
  for (int64_t &d : shape)
    if (ShapedType::isDynamic(d))
      d = count / *known;
  return Type(RankedTensorType::get(shape, out.getElementType()));
}

/// A broadcast_to result dim that is dynamic takes the input's static size
/// (a dim of 1, or a missing one, leaves nothing to infer it from).
static FailureOr<Type> refineBroadcast(fuse::BroadcastToOp op) {
  auto in = op.getInput().getType();
  RankedTensorType out = op.getType();
  SmallVector<int64_t> shape(out.getShape());
  int64_t offset = out.getRank() - in.getRank();
  for (int64_t i = 0; i < out.getRank(); ++i) {
    if (!ShapedType::isDynamic(shape[i]))
      continue;
    int64_t from = i >= offset ? in.getDimSize(i - offset) : 1;
    if (ShapedType::isDynamic(from) || from == 1)
      return op.emitOpError("cannot infer the size of dynamic result dim ")
             << i << " from input " << in;
    shape[i] = from;
  }
  return Type(RankedTensorType::get(shape, out.getElementType()));
}

/// Recomputes the result types of `op` from its (refined) operands.
static LogicalResult refineResults(Operation *op) {
  if (op->getNumResults() == 0)
    return success();
  SmallVector<Type> types;
  if (auto infer = dyn_cast<InferTypeOpInterface>(op)) {
    if (failed(infer.inferReturnTypes(
            op->getContext(), op->getLoc(), op->getOperands(),
            op->getRawDictionaryAttrs(), op->getPropertiesStorage(),
            op->getRegions(), types)))
      return failure();
  } else if (auto reshape = dyn_cast<fuse::ReshapeOp>(op)) {
    FailureOr<Type> type = refineReshape(reshape);
    if (failed(type))
      return failure();
    types.push_back(*type);
  } else if (auto broadcast = dyn_cast<fuse::BroadcastToOp>(op)) {
    FailureOr<Type> type = refineBroadcast(broadcast);
    if (failed(type))
      return failure();
    types.push_back(*type);
  } else if (auto slice = dyn_cast<fuse::SliceOp>(op)) {
    // A dynamic result dim is the input's whole dim (verified).
    auto in = slice.getInput().getType();
    SmallVector<int64_t> shape(slice.getType().getShape());
    for (auto [d, size] : llvm::enumerate(shape))
      if (ShapedType::isDynamic(size))
        size = in.getDimSize(d);
    types.push_back(
        RankedTensorType::get(shape, slice.getType().getElementType()));
  } else if (isa<fuse::HighHalfOp, fuse::LowHalfOp, fuse::JoinHalvesOp>(op)) {
    // The split layout's element-wise ops: the operands' shape.
    auto in = cast<RankedTensorType>(op->getOperand(0).getType());
    types.push_back(in.clone(getElementTypeOrSelf(op->getResult(0))));
  } else if (auto cast = dyn_cast<fuse::CastOp>(op)) {
    types.push_back(
        cast.getInput().getType().clone(cast.getType().getElementType()));
  } else if (auto dropout = dyn_cast<fuse::DropoutOp>(op)) {
    types.push_back(dropout.getInput().getType());
  } else if (isa<fuse::ConstantOp, fuse::IotaOp>(op)) { // static (verified)
    return success();
  } else if (auto insert = dyn_cast<tensor::InsertSliceOp>(op)) {
    types.push_back(insert.getDest().getType());
  } else if (isa<tensor::EmptyOp, tensor::FromElementsOp>(op) ||
             llvm::none_of(op->getResultTypes(), llvm::IsaPred<TensorType>)) {
    // Explicitly typed (the stacks of fuse-wrap-steps) or not a tensor.
    return success();
  } else {
    return op->emitOpError("cannot be specialized to concrete shapes");
  }
  for (auto [result, type] : llvm::zip(op->getResults(), types)) {
    // A mixed-precision contraction (bf16 operands) keeps its f32 result;
    // inference gives the operands' element type.
    if (isa<fuse::MatmulOp, fuse::BatchMatmulOp, fuse::Conv2DOp>(op))
      if (auto shaped = dyn_cast<RankedTensorType>(type))
        type = shaped.clone(getElementTypeOrSelf(result.getType()));
    if (!refines(result.getType(), type))
      return op->emitOpError("result type ")
             << result.getType() << " contradicts the specialized " << type;
    result.setType(type);
  }
  return success();
}

/// A static size for `size` where it is a dim of a value whose type is now
/// static there.
static OpFoldResult refineSize(OpFoldResult size) {
  auto value = dyn_cast<Value>(size);
  auto dim = value ? value.getDefiningOp<tensor::DimOp>() : nullptr;
  if (!dim)
    return size;
  auto type = dyn_cast<RankedTensorType>(dim.getSource().getType());
  std::optional<int64_t> index = dim.getConstantIndex();
  if (!type || !index || type.isDynamicDim(*index))
    return size;
  return Builder(dim.getContext()).getIndexAttr(type.getDimSize(*index));
}

/// Rebuilds a slice whose sizes became static (the per-step slices of
/// fuse-wrap-steps).
static LogicalResult refineSlice(tensor::ExtractSliceOp slice) {
  SmallVector<OpFoldResult> sizes = llvm::map_to_vector(
      slice.getMixedSizes(), [](OpFoldResult s) { return refineSize(s); });
  RankedTensorType type =
      tensor::ExtractSliceOp::inferCanonicalRankReducedResultType(
          slice.getType().getRank(), slice.getSourceType(), sizes);
  if (!refines(slice.getType(), type))
    return slice.emitOpError("result type ")
           << slice.getType() << " contradicts the specialized " << type;
  OpBuilder b(slice);
  auto refined = tensor::ExtractSliceOp::create(
      b, slice.getLoc(), type, slice.getSource(), slice.getMixedOffsets(),
      sizes, slice.getMixedStrides());
  slice.replaceAllUsesWith(refined.getResult());
  slice.erase();
  return success();
}

/// Refines every op of `block`, nested loops included, in order. Each op's
/// new types are checked before the next op computes from them: a shape
/// given at call time can make any result too large to address.
static LogicalResult refineBlock(Block &block) {
  for (Operation &op : llvm::make_early_inc_range(block.without_terminator())) {
    if (auto slice = dyn_cast<tensor::ExtractSliceOp>(op)) {
      Operation *next = slice->getNextNode();
      if (failed(refineSlice(slice)) ||
          failed(fuse::verifyTensorSizes(next->getPrevNode())))
        return failure();
      continue;
    }
    if (auto loop = dyn_cast<scf::ForOp>(op)) {
      for (auto [arg, init, result] :
           llvm::zip(loop.getRegionIterArgs(), loop.getInitArgs(),
                     loop.getResults())) {
        arg.setType(init.getType());
        result.setType(init.getType());
      }
      if (failed(refineBlock(*loop.getBody())) ||
          failed(fuse::verifyTensorSizes(loop)))
        return failure();
      continue;
    }
    if (failed(refineResults(&op)) || failed(fuse::verifyTensorSizes(&op)))
      return failure();
  }
  return success();
}

LogicalResult fuse::specializeFunction(func::FuncOp func, TypeRange argTypes) {
  FunctionType type = func.getFunctionType();
  if (argTypes.size() != type.getNumInputs())
    return func.emitError("expected ")
           << type.getNumInputs() << " argument types, got " << argTypes.size();
  for (auto [i, declared, given] : llvm::enumerate(type.getInputs(), argTypes))
    if (!refines(declared, given))
      return func.emitError(fuse::describeArgument(func, i))
             << " of type " << given << " does not fit the declared "
             << declared;
  if (!func.getBody().hasOneBlock())
    return func.emitError("can only specialize single-block functions");

  // Every size computed from the given shapes (element counts, buffers,
  // workspaces) must fit in 64 bits.
  for (auto [i, given] : llvm::enumerate(argTypes))
    if (auto tensor = dyn_cast<RankedTensorType>(given);
        tensor && tensor.hasStaticShape() && !fuse::checkedByteSize(tensor))
      return func.emitError(fuse::describeArgument(func, i))
             << " of type " << given
             << " is too large: its size in bytes does not fit in 64 bits";

  Block &entry = func.front();
  for (auto [arg, given] : llvm::zip(entry.getArguments(), argTypes))
    arg.setType(given);
  if (failed(refineBlock(entry)))
    return failure();
  func.setType(FunctionType::get(func.getContext(), argTypes,
                                 entry.getTerminator()->getOperandTypes()));
  return success();
}

FailureOr<func::FuncOp> fuse::isolateAndSpecialize(ModuleOp module,
                                                   StringRef name,
                                                   TypeRange argTypes,
                                                   StringRef symbol) {
  func::FuncOp entry;
  for (func::FuncOp f :
       llvm::make_early_inc_range(module.getOps<func::FuncOp>())) {
    if (f.getSymName() == name)
      entry = f;
    else
      f.erase();
  }
  if (!entry)
    return module.emitError("no function named '") << name << "'";
  if (!symbol.empty())
    entry.setSymName(symbol);
  entry.setPublic();
  if (failed(specializeFunction(entry, argTypes)) || failed(verify(module)))
    return failure();
  return entry;
}

namespace {
struct FuseSpecializePass : fuse::impl::FuseSpecializeBase<FuseSpecializePass> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto func = module.lookupSymbol<func::FuncOp>(function);
    if (!func) {
      module.emitError("fuse-specialize: no function named '")
          << function << "'";
      return signalPassFailure();
    }
    SmallVector<Type> types;
    for (const std::string &text : argTypes) {
      Type type = parseType(text, &getContext());
      if (!type) {
        module.emitError("fuse-specialize: cannot parse type '") << text << "'";
        return signalPassFailure();
      }
      types.push_back(type);
    }
    if (failed(fuse::specializeFunction(func, types)))
      signalPassFailure();
  }
};
} // namespace
