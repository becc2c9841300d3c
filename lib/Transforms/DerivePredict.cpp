//===- DerivePredict.cpp - The fuse-derive-predict pass -------------------===//
//
// Each fuse.train_step whose loss is one softmax cross-entropy gets a
// prediction function compiled from the same loss function: the ops its
// logits depend on, in inference mode, from the parameters and the inputs
// they read (never the labels), and their softmax: the class probabilities,
// computed by the same compiled code for `fusec predict`, `fuse::predict`
// and `fusec export`, so all three agree bitwise. What `fusec sample` calls
// to generate text (from the logits).
//
//===----------------------------------------------------------------------===//

#include "fuse/ABI.h"
#include "fuse/Transforms/Passes.h"

#include "Fuse/IR/FuseDialect.h"
#include "Fuse/IR/FuseOps.h"
#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "fuse-derive-predict"

namespace fuse {
#define GEN_PASS_DEF_FUSEDERIVEPREDICT
#include "fuse/Transforms/Passes.h.inc"
} // namespace fuse

using namespace mlir;
using namespace fuse;

namespace {

LogicalResult derive(TrainStepOp step, SymbolTable &symbols) {
  auto loss = symbols.lookup<func::FuncOp>(step.getLoss());
  // fuse-expand-train-step reports a missing loss, fuse-derive-eval one
  // with several blocks.
  if (!loss || loss.isExternal() || !loss.getBody().hasOneBlock())
    return success();
  SmallVector<SoftmaxCrossEntropyOp> crossEntropies(
      loss.getBody().front().getOps<SoftmaxCrossEntropyOp>());
  if (crossEntropies.size() != 1)
    return success();
  std::string name = abi::predictFunctionName(step.getSymName());
  if (symbols.lookup(name))
    return step.emitOpError("cannot define the prediction function '")
           << name << "': the symbol exists";
  Value logits = crossEntropies.front().getLogits();

  // The ops the logits depend on, in order, and the arguments they read.
  SetVector<Operation *> slice;
  BackwardSliceOptions options;
  options.inclusive = true;
  if (Operation *producer = logits.getDefiningOp())
    (void)getBackwardSlice(producer, &slice, options);
  llvm::SmallDenseSet<unsigned> used;
  for (Operation *op : slice)
    for (Value operand : op->getOperands())
      if (auto arg = dyn_cast<BlockArgument>(operand);
          arg && arg.getOwner() == &loss.getBody().front())
        used.insert(arg.getArgNumber());
  if (auto arg = dyn_cast<BlockArgument>(logits))
    used.insert(arg.getArgNumber());

  // (params..., inputs read...), the step function's order.
  SmallVector<unsigned> order(step.getParams().begin(), step.getParams().end());
  for (unsigned i : step.getBatchArguments(loss.getNumArguments()))
    if (used.contains(i))
      order.push_back(i);
  SmallVector<Type> types;
  for (unsigned i : order)
    types.push_back(loss.getArgumentTypes()[i]);
  MLIRContext *context = step.getContext();
  OpBuilder b(step);
  auto predict = func::FuncOp::create(
      b, step.getLoc(), name,
      FunctionType::get(context, types, {logits.getType(), logits.getType()}));
  Block *entry = predict.addEntryBlock();
  IRMapping map;
  for (auto [j, i] : llvm::enumerate(order)) {
    BlockArgument arg = entry->getArgument(j);
    arg.setLoc(loss.getArgument(i).getLoc());
    map.map(loss.getArgument(i), arg);
  }
  OpBuilder body = OpBuilder::atBlockBegin(entry);
  // Dropout is off: only it reads the step counter, which gets 0.
  if (std::optional<uint64_t> stepArg = step.getStepArg())
    if (used.contains(*stepArg))
      map.map(
          loss.getArgument(*stepArg),
          ConstantOp::create(
              body, step.getLoc(),
              DenseElementsAttr::get(
                  RankedTensorType::get({}, body.getI64Type()), APInt(64, 0))));
  for (Operation *op : slice) {
    if (auto dropout = dyn_cast<DropoutOp>(op)) {
      map.map(dropout.getResult(), map.lookup(dropout.getInput()));
      continue;
    }
    body.clone(*op, map);
  }
  Value predicted = map.lookup(logits);
  // The logits are [N, C]: the softmax over the classes, the last axis.
  Value probabilities = SoftmaxOp::create(body, step.getLoc(), predicted);
  func::ReturnOp::create(body, step.getLoc(),
                         ValueRange{predicted, probabilities});
  LLVM_DEBUG(llvm::dbgs() << "derived " << name << " with " << order.size()
                          << " arguments\n");
  symbols.insert(predict);
  return success();
}

struct FuseDerivePredictPass
    : fuse::impl::FuseDerivePredictBase<FuseDerivePredictPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    for (TrainStepOp step : llvm::to_vector(module.getOps<TrainStepOp>()))
      if (failed(derive(step, symbols)))
        return signalPassFailure();
  }
};

} // namespace
