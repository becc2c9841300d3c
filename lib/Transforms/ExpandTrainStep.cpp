//===- ExpandTrainStep.cpp - The fuse-expand-train-step pass --------------===//
//
// Each fuse.train_step becomes the function it declares: the loss's value
// and gradients (fuse.value_and_grad, which fuse-autodiff then expands) and
// one optimizer op over all parameters (two when some are excluded from
// weight decay), every new parameter and state computed in place of its
// argument. A train_step's lr_schedule and clipping become a
// fuse.lr_schedule on the learning rate and a fuse.clip_gradients on the
// gradients; without them the function is unchanged. A data-parallel step
// (the pass's data-parallel option) also sums the gradients of every rank,
// each weighted by its `replica_weight` argument, before any of that.
//
//===----------------------------------------------------------------------===//

#include "fuse/ABI.h"
#include "fuse/SourceNames.h"
#include "fuse/Transforms/Passes.h"

#include "Fuse/IR/FuseDialect.h"
#include "Fuse/IR/FuseOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/IR/Verifier.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "fuse-expand-train-step"

namespace fuse {
#define GEN_PASS_DEF_FUSEEXPANDTRAINSTEP
#include "fuse/Transforms/Passes.h.inc"
} // namespace fuse

using namespace mlir;
using namespace fuse;

namespace {

/// Creates `fuse.<optimizer>` with the step's hyperparameters over `params`,
/// `grads` and `states`.
Operation *createOptimizer(OpBuilder &b, TrainStepOp step, Value lr,
                           Value counter, ValueRange params, ValueRange grads,
                           ValueRange states, bool noDecay = false) {
  OperationState state(step.getLoc(), ("fuse." + step.getOptimizer()).str());
  state.addOperands({lr, counter});
  state.addOperands(params);
  state.addOperands(grads);
  state.addOperands(states);
  state.addTypes(params.getTypes());
  state.addTypes(states.getTypes());
  NamedAttrList properties;
  if (DictionaryAttr hyperparameters = step.getHyperparametersAttr())
    properties.append(hyperparameters.getValue());
  if (noDecay) // the verifier checked the optimizer has weight_decay
    properties.set("weight_decay", b.getF64FloatAttr(0.0));
  int32_t n = params.size();
  properties.set("operandSegmentSizes",
                 b.getDenseI32ArrayAttr(
                     {1, 1, n, n, static_cast<int32_t>(states.size()), 0}));
  state.propertiesAttr = properties.getDictionary(b.getContext());
  return b.create(state);
}

/// The loss argument's `fuse.init`, or Keras' default: Glorot-uniform
/// weights, zero biases.
InitializerAttr paramInitializer(func::FuncOp loss, unsigned i) {
  if (auto init = loss.getArgAttrOfType<InitializerAttr>(i, kInitAttrName))
    return init;
  auto type = cast<ShapedType>(loss.getArgumentTypes()[i]);
  return InitializerAttr::get(loss.getContext(),
                              type.getRank() >= 2 ? InitKind::glorot_uniform
                                                  : InitKind::zeros,
                              APFloat(0.0));
}

InitializerAttr stateInitializer(MLIRContext *context, double value) {
  if (value == 0.0)
    return InitializerAttr::get(context, InitKind::zeros, APFloat(0.0));
  return InitializerAttr::get(context, InitKind::constant, APFloat(value));
}

/// The loss of a data-parallel step whose dropout draws each example's
/// mask by its index in the global batch: a private copy of `loss` taking
/// the rows' offset as one more (last) argument, given to every
/// fuse.dropout; `loss` itself when it has no dropout.
func::FuncOp lossWithRowOffsets(func::FuncOp loss, SymbolTable &symbols) {
  bool dropout = false;
  loss.walk([&](DropoutOp) { dropout = true; });
  if (!dropout)
    return loss;
  std::string name = (loss.getSymName() + "_data_parallel").str();
  if (auto existing = symbols.lookup<func::FuncOp>(name))
    return existing;
  MLIRContext *context = loss.getContext();
  auto copy = cast<func::FuncOp>(loss->clone());
  copy.setSymName(name);
  copy.setPrivate();
  unsigned last = copy.getNumArguments();
  if (failed(copy.insertArgument(
          last, RankedTensorType::get({}, IntegerType::get(context, 64)), {},
          NameLoc::get(StringAttr::get(context, abi::kExampleOffsetArgName),
                       loss.getLoc()))))
    return {};
  Value offset = copy.getArgument(last);
  copy.walk([&](DropoutOp op) { op.getOffsetMutable().assign(offset); });
  symbols.insert(copy, std::next(Block::iterator(loss)));
  LLVM_DEBUG(llvm::dbgs() << "expand-train-step: " << name
                          << " offsets the rows of its dropout\n");
  return copy;
}

LogicalResult expand(TrainStepOp step, SymbolTable &symbols,
                     bool dataParallel) {
  auto loss = symbols.lookup<func::FuncOp>(step.getLoss());
  if (!loss)
    return step.emitOpError("needs ")
           << step.getLossAttr() << " to be a func.func";
  // What value_and_grad differentiates: with data-parallel dropout, the
  // loss taking the rows' offset.
  func::FuncOp differentiated =
      dataParallel ? lossWithRowOffsets(loss, symbols) : loss;
  if (!differentiated)
    return failure();
  const bool rowOffsets = differentiated != loss;
  MLIRContext *context = step.getContext();
  Location loc = step.getLoc();
  ArrayRef<Type> inputs = loss.getArgumentTypes();
  ArrayRef<int64_t> paramIndices = step.getParams();
  // The loss's step-counter argument, or -1.
  int64_t stepArg = step.getStepArg().value_or(-1);
  size_t n = paramIndices.size();
  SmallVector<unsigned> others = step.getBatchArguments(inputs.size());

  // (params..., others..., [replica_weight,] lr, step); the states go after
  // the parameters once the optimizer says how many there are.
  SmallVector<Type> types;
  SmallVector<Location> locs;
  for (unsigned i : paramIndices) {
    types.push_back(inputs[i]);
    locs.push_back(loss.getArgument(i).getLoc());
  }
  for (unsigned i : others) {
    types.push_back(inputs[i]);
    locs.push_back(loss.getArgument(i).getLoc());
  }
  OpBuilder b(step);
  if (rowOffsets) {
    types.push_back(RankedTensorType::get({}, b.getI64Type()));
    locs.push_back(NameLoc::get(
        StringAttr::get(context, abi::kExampleOffsetArgName), loc));
  }
  if (dataParallel) {
    types.push_back(RankedTensorType::get({}, b.getF32Type()));
    locs.push_back(NameLoc::get(
        StringAttr::get(context, abi::kReplicaWeightArgName), loc));
  }
  types.push_back(RankedTensorType::get({}, b.getF32Type()));
  locs.push_back(
      NameLoc::get(StringAttr::get(context, abi::kLearningRateArgName), loc));
  types.push_back(RankedTensorType::get({}, b.getI64Type()));
  locs.push_back(
      NameLoc::get(StringAttr::get(context, abi::kStepCounterArgName), loc));
  auto func = func::FuncOp::create(b, loc, step.getSymName(),
                                   FunctionType::get(context, types, {}));
  Block *entry = func.addEntryBlock();
  for (auto [arg, argLoc] : llvm::zip(entry->getArguments(), locs))
    arg.setLoc(argLoc);
  Value lr = entry->getArgument(types.size() - 2);
  Value counter = entry->getArgument(types.size() - 1);
  Value replicaWeight =
      dataParallel ? entry->getArgument(types.size() - 3) : Value();
  Value exampleOffset =
      rowOffsets ? entry->getArgument(types.size() - 4) : Value();
  // The loss's other arguments are the batch; fuse-wrap-steps stacks them.
  for (unsigned j = 0; j < others.size(); ++j)
    func.setArgAttr(n + j, kPerStepAttrName, b.getUnitAttr());
  for (auto [j, i] : llvm::enumerate(paramIndices))
    func.setArgAttr(j, kInitAttrName, paramInitializer(loss, i));
  func.setArgAttr(types.size() - 1, kStepCounterAttrName, b.getUnitAttr());

  OpBuilder body = OpBuilder::atBlockBegin(entry);
  SmallVector<Value> callArgs(inputs.size());
  SmallVector<Value> params;
  SmallVector<Type> resultTypes = {loss.getResultTypes()[0]};
  for (auto [j, i] : llvm::enumerate(paramIndices)) {
    callArgs[i] = entry->getArgument(j);
    params.push_back(callArgs[i]);
    resultTypes.push_back(inputs[i]);
  }
  for (auto [j, i] : llvm::enumerate(others))
    callArgs[i] = entry->getArgument(n + j);
  if (stepArg >= 0)
    callArgs[stepArg] = counter;
  if (rowOffsets)
    callArgs.push_back(exampleOffset);
  auto grads = ValueAndGradOp::create(body, loc, resultTypes,
                                      FlatSymbolRefAttr::get(differentiated),
                                      callArgs, step.getParamsAttr());

  // How many states: ask an optimizer op without any.
  Operation *probe = createOptimizer(body, step, lr, counter, params,
                                     grads.getResults().drop_front(), {});
  auto probeInterface = cast<OptimizerOpInterface>(probe);
  unsigned perParam = probeInterface.getNumStatesPerParam();
  SmallVector<double> stateValues;
  for (unsigned k = 0; k < perParam; ++k)
    stateValues.push_back(probeInterface.getStateInitialValue(k));
  probe->erase();
  SmallVector<Value> states;
  for (unsigned k = 0; k < perParam; ++k)
    for (size_t i = 0; i < n; ++i) {
      unsigned index = n + k * n + i;
      std::string name =
          argumentName(loss, paramIndices[i]) + ".state" + std::to_string(k);
      if (failed(func.insertArgument(
              index, params[i].getType(), {},
              NameLoc::get(StringAttr::get(context, name), loc))))
        return failure();
      func.setArgAttr(index, kInitAttrName,
                      stateInitializer(context, stateValues[k]));
      states.push_back(func.getArgument(index));
    }
  ValueRange allGrads = grads.getResults().drop_front();
  // Data-parallel: every rank's gradients summed, each weighted by its
  // share of the global batch, so that clipping and the update see the
  // global batch's gradient, the same on every rank.
  if (dataParallel) {
    auto reduce = AllReduceOp::create(body, loc, AllReduceKind::sum, allGrads,
                                      replicaWeight);
    allGrads = reduce.getResults();
    LLVM_DEBUG(llvm::dbgs()
               << "expand-train-step: " << step.getSymName() << " reduces its "
               << allGrads.size() << " gradients across ranks\n");
  }
  // Clipping sees every gradient (both groups'): one global norm.
  if (step.getClipNormAttr() || step.getClipValueAttr()) {
    auto clip = ClipGradientsOp::create(
        body, loc, allGrads, step.getClipNormAttr(), step.getClipValueAttr());
    allGrads = clip.getResults();
    LLVM_DEBUG(llvm::dbgs() << "expand-train-step: " << step.getSymName()
                            << " clips its gradients: " << clip << "\n");
  }
  // The scheduled rate, once for both groups; none for a factor of 1.
  if (LrScheduleAttr schedule = step.getLrScheduleAttr();
      schedule && !schedule.isIdentity()) {
    lr = LrScheduleOp::create(body, loc, lr.getType(), lr, counter, schedule);
    LLVM_DEBUG(llvm::dbgs()
               << "expand-train-step: " << step.getSymName()
               << " schedules its learning rate: " << schedule << "\n");
  }
  // One optimizer op per group: the parameters with weight decay, and
  // those of no_decay without (each group's states in its op's layout).
  SmallVector<bool> excluded(n, false);
  if (std::optional<ArrayRef<int64_t>> noDecay = step.getNoDecay())
    for (auto [j, i] : llvm::enumerate(paramIndices))
      excluded[j] = llvm::is_contained(*noDecay, i);
  SmallVector<Value> newParams(n), newStates(perParam * n);
  for (bool group : {false, true}) {
    SmallVector<size_t> members;
    for (size_t j = 0; j < n; ++j)
      if (excluded[j] == group)
        members.push_back(j);
    if (members.empty())
      continue;
    SmallVector<Value> groupParams, groupGrads, groupStates;
    for (size_t j : members) {
      groupParams.push_back(params[j]);
      groupGrads.push_back(allGrads[j]);
    }
    for (unsigned k = 0; k < perParam; ++k)
      for (size_t j : members)
        groupStates.push_back(states[k * n + j]);
    Operation *optimizer =
        createOptimizer(body, step, lr, counter, groupParams, groupGrads,
                        groupStates, /*noDecay=*/group);
    if (DictionaryAttr hyperparameters = step.getHyperparametersAttr())
      for (NamedAttribute attr : hyperparameters)
        if (!(group && attr.getName() == "weight_decay") &&
            optimizer->getInherentAttr(attr.getName()) != attr.getValue())
          return step.emitOpError("hyperparameter '")
                 << attr.getName().getValue() << "' = " << attr.getValue()
                 << " has the wrong type for " << optimizer->getName();
    if (failed(verify(optimizer)))
      return failure();
    size_t m = members.size();
    for (auto [g, j] : llvm::enumerate(members)) {
      newParams[j] = optimizer->getResult(g);
      for (unsigned k = 0; k < perParam; ++k)
        newStates[k * n + j] = optimizer->getResult(m + k * m + g);
    }
  }

  SmallVector<Value> results = {grads.getResult(0)};
  llvm::append_range(results, newParams);
  llvm::append_range(results, newStates);
  func::ReturnOp::create(body, loc, results);
  func.setType(FunctionType::get(context, func.getArgumentTypes(),
                                 ValueRange(results).getTypes()));
  // New parameter j and state j are computed in place of argument j.
  for (unsigned j = 1; j < results.size(); ++j)
    func.setResultAttr(j, kInPlaceAttrName, b.getI64IntegerAttr(j - 1));
  // The precision policy is applied after differentiation, to the
  // backward pass too (fuse-apply-precision-policy).
  if (std::optional<StringRef> precision = step.getPrecision();
      precision && *precision != "f32") {
    func->setAttr(abi::kPrecisionAttrName, b.getStringAttr(*precision));
    if (std::optional<StringRef> layout = step.getMasterWeights();
        layout && *layout != "copy")
      func->setAttr(abi::kMasterWeightsAttrName, b.getStringAttr(*layout));
  }
  step.erase();
  return success();
}

struct FuseExpandTrainStepPass
    : fuse::impl::FuseExpandTrainStepBase<FuseExpandTrainStepPass> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    for (TrainStepOp step :
         llvm::make_early_inc_range(module.getOps<TrainStepOp>()))
      if (failed(expand(step, symbols, dataParallel)))
        return signalPassFailure();
  }
};

} // namespace
