//===- DeriveEval.cpp - The fuse-derive-eval pass -------------------------===//
//
// Each fuse.train_step gets an evaluation function compiled from the same
// loss function: its forward ops in inference mode (dropout passes its input
// through, as Keras' layers do outside training), returning the loss and,
// for a softmax cross-entropy loss, how many predictions were right.
//
//===----------------------------------------------------------------------===//

#include "fuse/ABI.h"
#include "fuse/Transforms/Passes.h"

#include "Fuse/IR/FuseDialect.h"
#include "Fuse/IR/FuseOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"

namespace fuse {
#define GEN_PASS_DEF_FUSEDERIVEEVAL
#include "fuse/Transforms/Passes.h.inc"
} // namespace fuse

using namespace mlir;
using namespace fuse;

namespace {

/// The number of rows of `logits` [N, C] whose largest logit is the one of
/// the label's class (a tie counts as right), as a tensor<i32>.
Value countCorrect(OpBuilder &b, Location loc, Value logits, Value labels) {
  auto logitsType = cast<RankedTensorType>(logits.getType());
  auto labelsType = cast<RankedTensorType>(labels.getType());
  int64_t classes = logitsType.getDimSize(1);
  auto labelType = cast<IntegerType>(labelsType.getElementType());
  SmallVector<APInt> ids;
  for (int64_t c = 0; c < classes; ++c)
    ids.push_back(APInt(labelType.getWidth(), c));
  Value classIds = ConstantOp::create(
      b, loc,
      DenseElementsAttr::get(RankedTensorType::get({classes}, labelType), ids));
  Value column = ExpandDimsOp::create(b, loc, labels, ArrayRef<int64_t>{1});
  Value isLabel =
      CompareOp::create(b, loc, ComparePredicate::eq, column, classIds);
  auto floatType = cast<FloatType>(logitsType.getElementType());
  auto scalar = [&](Type type) { return RankedTensorType::get({}, type); };
  Value lowest = ConstantOp::create(
      b, loc,
      DenseElementsAttr::get(
          scalar(floatType),
          APFloat::getInf(floatType.getFloatSemantics(), /*Negative=*/true)));
  Value labelLogits = ReduceMaxOp::create(
      b, loc, SelectOp::create(b, loc, isLabel, logits, lowest),
      ArrayRef<int64_t>{1}, false);
  Value maxLogits =
      ReduceMaxOp::create(b, loc, logits, ArrayRef<int64_t>{1}, false);
  Value right =
      CompareOp::create(b, loc, ComparePredicate::ge, labelLogits, maxLogits);
  Type i32 = b.getI32Type();
  auto constant = [&](int32_t v) -> Value {
    return ConstantOp::create(
        b, loc, DenseElementsAttr::get(scalar(i32), APInt(32, v)));
  };
  Value hits = SelectOp::create(b, loc, right, constant(1), constant(0));
  return ReduceSumOp::create(b, loc, hits, ArrayRef<int64_t>{0}, false);
}

LogicalResult derive(TrainStepOp step, SymbolTable &symbols) {
  auto loss = symbols.lookup<func::FuncOp>(step.getLoss());
  // fuse-expand-train-step reports a missing loss.
  if (!loss || loss.isExternal())
    return success();
  if (!loss.getBody().hasOneBlock())
    return step.emitOpError("cannot derive an evaluation function from ")
           << step.getLossAttr() << ": it has more than one block";
  std::string name = abi::evalFunctionName(step.getSymName());
  if (symbols.lookup(name))
    return step.emitOpError("cannot define the evaluation function '")
           << name << "': the symbol exists";

  // (params..., batch...), the step function's order without state, lr and
  // step.
  SmallVector<unsigned> order(step.getParams().begin(), step.getParams().end());
  llvm::append_range(order, step.getBatchArguments(loss.getNumArguments()));
  SmallVector<Type> types;
  for (unsigned i : order)
    types.push_back(loss.getArgumentTypes()[i]);
  MLIRContext *context = step.getContext();
  OpBuilder b(step);
  auto eval = func::FuncOp::create(b, step.getLoc(), name,
                                   FunctionType::get(context, types, {}));
  Block *entry = eval.addEntryBlock();
  IRMapping map;
  for (auto [j, i] : llvm::enumerate(order)) {
    BlockArgument arg = entry->getArgument(j);
    arg.setLoc(loss.getArgument(i).getLoc());
    map.map(loss.getArgument(i), arg);
  }
  OpBuilder body = OpBuilder::atBlockBegin(entry);
  // Only dropout reads the counter, and it is gone; any other use sees 0.
  ConstantOp zeroStep;
  if (std::optional<uint64_t> stepArg = step.getStepArg()) {
    zeroStep = ConstantOp::create(
        body, step.getLoc(),
        DenseElementsAttr::get(RankedTensorType::get({}, body.getI64Type()),
                               APInt(64, 0)));
    map.map(loss.getArgument(*stepArg), zeroStep);
  }
  SmallVector<SoftmaxCrossEntropyOp> crossEntropies;
  Value lossValue;
  for (Operation &op : loss.getBody().front()) {
    if (auto dropout = dyn_cast<DropoutOp>(op)) {
      map.map(dropout.getResult(), map.lookup(dropout.getInput()));
      continue;
    }
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      lossValue = map.lookup(ret.getOperand(0));
      continue;
    }
    Operation *clone = body.clone(op, map);
    if (auto ce = dyn_cast<SoftmaxCrossEntropyOp>(clone))
      crossEntropies.push_back(ce);
  }
  SmallVector<Value> results = {lossValue};
  // Accuracy where it is defined: one cross-entropy over [N, C] logits with
  // a static number of classes.
  if (crossEntropies.size() == 1) {
    SoftmaxCrossEntropyOp ce = crossEntropies.front();
    auto logits = cast<RankedTensorType>(ce.getLogits().getType());
    auto labels = cast<RankedTensorType>(ce.getLabels().getType());
    // The class ids must fit the label type.
    if (logits.getRank() == 2 && !logits.isDynamicDim(1) &&
        llvm::isIntN(labels.getElementTypeBitWidth(), logits.getDimSize(1) - 1))
      results.push_back(
          countCorrect(body, ce.getLoc(), ce.getLogits(), ce.getLabels()));
  }
  func::ReturnOp::create(body, step.getLoc(), results);
  if (zeroStep && zeroStep->use_empty())
    zeroStep->erase();
  eval.setType(
      FunctionType::get(context, types, ValueRange(results).getTypes()));
  symbols.insert(eval);
  return success();
}

struct FuseDeriveEvalPass : fuse::impl::FuseDeriveEvalBase<FuseDeriveEvalPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    for (TrainStepOp step : llvm::to_vector(module.getOps<TrainStepOp>()))
      if (failed(derive(step, symbols)))
        return signalPassFailure();
  }
};

} // namespace
