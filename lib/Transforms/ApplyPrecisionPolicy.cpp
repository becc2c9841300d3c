//===- ApplyPrecisionPolicy.cpp - The fuse-apply-precision-policy pass ----===//
//
// Mixed precision after differentiation: the contractions of a bf16 step
// function (forward and backward alike) read bf16 copies of their f32
// operands and keep their f32 results, so that only the products are
// rounded. Running after fuse-autodiff, rather than casting in the loss
// before it, keeps every gradient f32 until a contraction reads it: a
// weight's gradient is a product summed in f32, never rounded to bf16.
//
//===----------------------------------------------------------------------===//

#include "fuse/Transforms/Passes.h"

#include "Fuse/IR/FuseDialect.h"
#include "Fuse/IR/FuseOps.h"
#include "fuse/ABI.h"
#include "fuse/Precision.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "fuse-apply-precision-policy"

namespace fuse {
#define GEN_PASS_DEF_FUSEAPPLYPRECISIONPOLICY
#include "fuse/Transforms/Passes.h.inc"
} // namespace fuse

using namespace mlir;

namespace {

/// The operands of `op` that a bf16 policy rounds: the two factors of its
/// products. A convolution's gradients multiply their first two operands
/// (conv2d_input_grad: the output gradient and the filter;
/// conv2d_filter_grad: the input and the output gradient); their third only
/// gives the result's type and stays f32.
SmallVector<unsigned> roundedOperands(Operation *op) {
  if (isa<fuse::MatmulOp, fuse::BatchMatmulOp, fuse::Conv2DOp,
          fuse::Conv2DInputGradOp, fuse::Conv2DFilterGradOp>(op))
    return {0, 1};
  return {};
}

bool isF32Tensor(Value v) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  return type && type.getElementType().isF32();
}

/// Master weights: the optimizer update of a parameter whose bf16 copy the
/// step reads (`casts[p]`) also writes the next step's copy, in the same
/// loop as the f32 parameter, so that fuse-wrap-steps can carry the copy
/// from one step to the next instead of casting the weight again. Only
/// parameters updated in place (a result `fuse.in_place` of the argument
/// is the update's new parameter) qualify: the carried copy must be the
/// cast of what the next step reads.
///
/// With `split` (IPEX's split layout), such a parameter's cast is replaced
/// by its top half (`fuse.high_half`, which the products read) and its low
/// half (`fuse.low_half`), and the update reads and writes the pair
/// (`split_copies`) instead of a copy.
void keepCopiesInUpdates(func::FuncOp func, const DenseMap<Value, Value> &casts,
                         bool split) {
  Block &entry = func.front();
  auto ret = dyn_cast<func::ReturnOp>(entry.getTerminator());
  if (!ret)
    return;
  // The argument each returned value replaces.
  DenseMap<Value, unsigned> inPlaceOf;
  for (unsigned j = 0; j < ret.getNumOperands(); ++j)
    if (auto index = func.getResultAttrOfType<IntegerAttr>(
            j, fuse::abi::kInPlaceAttrName))
      inPlaceOf[ret.getOperand(j)] = index.getInt();
  SmallVector<fuse::OptimizerOpInterface> optimizers;
  func.walk([&](fuse::OptimizerOpInterface op) { optimizers.push_back(op); });
  for (fuse::OptimizerOpInterface op : optimizers) {
    if (!op.getCopies().empty())
      continue;
    SmallVector<int64_t> indices;
    SmallVector<Value> copies;
    for (auto [i, param] : llvm::enumerate(op.getParams())) {
      auto arg = dyn_cast<BlockArgument>(param);
      auto copy = casts.find(param);
      auto replaced = inPlaceOf.find(op->getResult(i));
      if (!arg || arg.getOwner() != &entry || copy == casts.end() ||
          replaced == inPlaceOf.end() || replaced->second != arg.getArgNumber())
        continue;
      indices.push_back(i);
      copies.push_back(copy->second);
    }
    if (copies.empty())
      continue;
    if (split) {
      SmallVector<Value> lows;
      for (Value &copy : copies) {
        auto castOp = copy.getDefiningOp<fuse::CastOp>();
        Value param = castOp.getInput();
        OpBuilder b(castOp);
        auto type = cast<RankedTensorType>(castOp.getType());
        copy = fuse::HighHalfOp::create(b, castOp.getLoc(), type, param);
        lows.push_back(fuse::LowHalfOp::create(
            b, castOp.getLoc(),
            RankedTensorType::get(type.getShape(), b.getI16Type()), param));
        castOp.replaceAllUsesWith(copy);
        castOp.erase();
      }
      llvm::append_range(copies, lows);
    }
    // The same op with the copies as its last operands and results.
    OperationState state(op->getLoc(), op->getName());
    state.addOperands(op->getOperands());
    state.addOperands(copies);
    state.addTypes(op->getResultTypes());
    state.addTypes(ValueRange(copies).getTypes());
    OpBuilder b(op);
    NamedAttrList properties(
        cast<DictionaryAttr>(op->getPropertiesAsAttribute()));
    auto segments =
        cast<DenseI32ArrayAttr>(properties.get("operandSegmentSizes"));
    SmallVector<int32_t> sizes(segments.asArrayRef());
    sizes.back() = copies.size();
    properties.set("operandSegmentSizes", b.getDenseI32ArrayAttr(sizes));
    properties.set("copy_params", b.getDenseI64ArrayAttr(indices));
    if (split)
      properties.set("split_copies", b.getUnitAttr());
    state.propertiesAttr = properties.getDictionary(func.getContext());
    Operation *updated = b.create(state);
    op->replaceAllUsesWith(
        updated->getResults().take_front(op->getNumResults()));
    LLVM_DEBUG(llvm::dbgs() << "bf16 copies written by: " << *updated << "\n");
    op->erase();
  }
}

/// Whether `use` reads only its value's type: the `input` of a window
/// gradient (conv2d_input_grad, max_pool2d_grad).
bool readsOnlyType(OpOperand &use) {
  Operation *op = use.getOwner();
  if (auto grad = dyn_cast<fuse::Conv2DInputGradOp>(op))
    return &use == &grad.getInputMutable();
  if (auto grad = dyn_cast<fuse::MaxPool2DGradOp>(op))
    return &use == &grad.getInputMutable();
  return false;
}

/// Whether `bound` is a constant of zeros (+0 or -0).
bool isZero(fuse::ConstantOp bound) {
  auto value = dyn_cast<DenseFPElementsAttr>(bound.getValue());
  return value && llvm::all_of(value.getValues<APFloat>(),
                               [](const APFloat &v) { return v.isZero(); });
}

/// The bf16 copy of `y` that the policy made (`casts`), if any.
Value bf16CopyOf(Value y, const DenseMap<Value, Value> &casts) {
  auto copy = casts.find(y);
  if (copy == casts.end() || !copy->second.getDefiningOp<fuse::CastOp>())
    return {};
  return copy->second;
}

/// ReLU masks without the f32 output. The VJP of `y = relu(x)` masks the
/// gradient by `compare gt, y, 0`, in the backward pass; under the bf16
/// policy the contractions read y's bf16 copy, so the mask is often the one
/// reader of the f32 y after the loss, which then stays live across it (4
/// bytes an element beside the copy's 2). Where every other reader of y
/// comes before the mask:
/// - with subnormals flushed (`flushed`) and a bf16 copy of y, the mask
///   compares the copy, widened, with 0. y is then 0 or normal, and bf16
///   has f32's exponents, so a positive normal rounds to a positive bf16:
///   the same mask from the copy the products keep anyway. (With
///   subnormals, a positive f32 below 2^-134 rounds to a bf16 zero.)
/// - otherwise the comparison moves to right after y and its result is kept
///   as i8 (`fuse.materialize`: computed there, never recomputed from y in
///   its readers), a quarter of y's bytes; the backward pass compares the
///   bytes with 0.
/// Either way the mask is the same bits, so the gradients are too.
void keepReluMasks(func::FuncOp func, const DenseMap<Value, Value> &casts,
                   bool flushed) {
  SmallVector<fuse::CompareOp> compares;
  func.walk([&](fuse::CompareOp op) { compares.push_back(op); });
  for (fuse::CompareOp compare : compares) {
    Value y = compare.getLhs();
    auto relu = y.getDefiningOp<fuse::ReluOp>();
    auto bound = compare.getRhs().getDefiningOp<fuse::ConstantOp>();
    auto type = cast<RankedTensorType>(y.getType());
    Block *block = compare->getBlock();
    if (!relu || !bound || !isF32Tensor(y) || relu->getBlock() != block ||
        bound->getBlock() != block)
      continue;
    bool readBefore = llvm::all_of(y.getUses(), [&](OpOperand &use) {
      Operation *reader = block->findAncestorOpInBlock(*use.getOwner());
      return use.getOwner() == compare || readsOnlyType(use) ||
             (reader && reader->isBeforeInBlock(compare));
    });
    if (!readBefore)
      continue;
    Location loc = compare.getLoc();
    OpBuilder b(func.getContext());
    Value copy = bf16CopyOf(y, casts);
    if (flushed && copy && isZero(bound) &&
        compare.getPredicate() == fuse::ComparePredicate::gt) {
      b.setInsertionPoint(compare);
      Value widened = fuse::CastOp::create(b, loc, type, copy);
      compare.getLhsMutable().assign(widened);
      LLVM_DEBUG(llvm::dbgs()
                 << "mask from the bf16 copy: " << compare << "\n");
      continue;
    }
    // Right after y: the bound (a constant the VJP made beside the
    // comparison) is cloned there when it comes later.
    b.setInsertionPointAfter(relu);
    Value rhs = compare.getRhs();
    if (relu->isBeforeInBlock(bound))
      rhs = b.clone(*bound)->getResult(0);
    Value mask =
        fuse::CompareOp::create(b, loc, compare.getPredicate(), y, rhs);
    auto bytes = fuse::CastOp::create(
        b, loc, RankedTensorType::get(type.getShape(), b.getIntegerType(8)),
        mask);
    bytes->setAttr(fuse::kMaterializeAttrName, b.getUnitAttr());
    b.setInsertionPoint(compare);
    Value zero = fuse::ConstantOp::create(
        b, loc,
        DenseElementsAttr::get(RankedTensorType::get({}, b.getIntegerType(8)),
                               b.getI8IntegerAttr(0).getValue()));
    Value kept = fuse::CompareOp::create(b, loc, fuse::ComparePredicate::ne,
                                         bytes, zero);
    LLVM_DEBUG(llvm::dbgs() << "mask kept as bytes: " << bytes << "\n");
    compare.replaceAllUsesWith(kept);
    compare.erase();
  }
}

/// Casts the operands of `func`'s f32 contractions to bf16, one cast per
/// value, placed right after its definition so that every user sees it.
void applyBF16Policy(func::FuncOp func, bool split, bool flushed) {
  MLIRContext *context = func.getContext();
  Type bf16 = BFloat16Type::get(context);
  DenseMap<Value, Value> casts;
  auto castOf = [&](Value v) -> Value {
    auto [it, inserted] = casts.try_emplace(v);
    if (!inserted)
      return it->second;
    OpBuilder b(context);
    if (Operation *def = v.getDefiningOp())
      b.setInsertionPointAfter(def);
    else
      b.setInsertionPointToStart(cast<BlockArgument>(v).getOwner());
    auto type = cast<RankedTensorType>(v.getType());
    it->second = fuse::CastOp::create(
        b, v.getLoc(), RankedTensorType::get(type.getShape(), bf16), v);
    return it->second;
  };
  SmallVector<Operation *> contractions;
  func.walk([&](Operation *op) {
    if (!roundedOperands(op).empty() && op->getNumResults() == 1 &&
        isF32Tensor(op->getResult(0)))
      contractions.push_back(op);
  });
  for (Operation *op : contractions) {
    SmallVector<unsigned> operands = roundedOperands(op);
    if (!llvm::all_of(operands, [&](unsigned i) {
          return isF32Tensor(op->getOperand(i));
        }))
      continue;
    for (unsigned i : operands)
      op->setOperand(i, castOf(op->getOperand(i)));
    LLVM_DEBUG(llvm::dbgs() << "bf16 operands: " << *op << "\n");
  }
  keepReluMasks(func, casts, flushed);
  keepCopiesInUpdates(func, casts, split);
}

struct FuseApplyPrecisionPolicyPass
    : fuse::impl::FuseApplyPrecisionPolicyBase<FuseApplyPrecisionPolicyPass> {
  using Base::Base;

  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      auto precision =
          func->getAttrOfType<StringAttr>(fuse::abi::kPrecisionAttrName);
      if (!precision)
        continue;
      std::optional<fuse::Precision> p =
          fuse::parsePrecision(precision.getValue());
      if (!p) {
        func.emitError("unknown precision '")
            << precision.getValue() << "' (expected \"f32\" or \"bf16\")";
        return signalPassFailure();
      }
      std::optional<fuse::MasterWeights> layout = fuse::MasterWeights::Copy;
      if (auto name = func->getAttrOfType<StringAttr>(
              fuse::abi::kMasterWeightsAttrName))
        layout = fuse::parseMasterWeights(name.getValue());
      if (!layout) {
        func.emitError("unknown master weights layout '")
            << func->getAttrOfType<StringAttr>(
                       fuse::abi::kMasterWeightsAttrName)
                   .getValue()
            << "' (expected \"copy\" or \"split\")";
        return signalPassFailure();
      }
      if (*p == fuse::Precision::BF16)
        applyBF16Policy(func, *layout == fuse::MasterWeights::Split,
                        flushedDenormals);
    }
  }
};
} // namespace
