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
/// products. A convolution's gradients (conv2d_input_grad,
/// conv2d_filter_grad) stay f32: their CPU code takes one element type.
SmallVector<unsigned> roundedOperands(Operation *op) {
  if (isa<fuse::MatmulOp, fuse::BatchMatmulOp, fuse::Conv2DOp>(op))
    return {0, 1};
  return {};
}

bool isF32Tensor(Value v) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  return type && type.getElementType().isF32();
}

/// Casts the operands of `func`'s f32 contractions to bf16, one cast per
/// value, placed right after its definition so that every user sees it.
void applyBF16Policy(func::FuncOp func) {
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
}

struct FuseApplyPrecisionPolicyPass
    : fuse::impl::FuseApplyPrecisionPolicyBase<FuseApplyPrecisionPolicyPass> {
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
      if (*p == fuse::Precision::BF16)
        applyBF16Policy(func);
    }
  }
};
} // namespace
