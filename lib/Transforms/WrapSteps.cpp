//===- WrapSteps.cpp - The fuse-wrap-steps pass ---------------------------===//
//
// Step fusing: each step function gets a companion running K steps per
// call, an scf.for around a copy of the step's body. Batch inputs and
// per-step metrics gain a leading dim of K that stays dynamic, so K is a
// run-time value; parameters and optimizer state are loop-carried in place,
// and so are the bf16 copies of parameters that the optimizer's update
// writes (mixed precision's master weights), cast once before the loop. In
// IPEX's split layout (the update's `split_copies`), a weight is carried as
// its top and low halves instead of its f32 value and a copy, and the K-step
// function takes and returns the halves: its caller holds the pair between
// calls (fuse.split_halves, fuse.low_half_of), never an f32 copy.
//
//===----------------------------------------------------------------------===//

#include "fuse/ABI.h"
#include "fuse/SourceNames.h"
#include "fuse/Transforms/Passes.h"

#include "Fuse/IR/FuseDialect.h"
#include "Fuse/IR/FuseOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "fuse-wrap-steps"

namespace fuse {
#define GEN_PASS_DEF_FUSEWRAPSTEPS
#include "fuse/Transforms/Passes.h.inc"
} // namespace fuse

using namespace mlir;
using namespace fuse;

namespace {

/// `type` with a leading dynamic dim.
RankedTensorType stacked(Type type) {
  auto tensor = cast<RankedTensorType>(type);
  SmallVector<int64_t> shape = {ShapedType::kDynamic};
  llvm::append_range(shape, tensor.getShape());
  return RankedTensorType::get(shape, tensor.getElementType());
}

/// The offsets, sizes and strides of step `i`'s slice of `stack`, whose
/// per-step type is `type`: [i, 0...] [1, dims...] [1...].
struct StepSlice {
  SmallVector<OpFoldResult> offsets, sizes, strides;
};

StepSlice stepSlice(OpBuilder &b, Location loc, Value stack,
                    RankedTensorType type, Value i) {
  StepSlice slice;
  slice.offsets.push_back(i);
  slice.sizes.push_back(b.getIndexAttr(1));
  slice.strides.push_back(b.getIndexAttr(1));
  for (auto [d, size] : llvm::enumerate(type.getShape())) {
    slice.offsets.push_back(b.getIndexAttr(0));
    slice.strides.push_back(b.getIndexAttr(1));
    if (!ShapedType::isDynamic(size)) {
      slice.sizes.push_back(b.getIndexAttr(size));
      continue;
    }
    slice.sizes.push_back(
        tensor::DimOp::create(b, loc, stack, d + 1).getResult());
  }
  return slice;
}

LogicalResult wrap(func::FuncOp step, SymbolTable &symbols) {
  std::string name = abi::stepsFunctionName(step.getSymName());
  if (symbols.lookup(name))
    return step.emitError("cannot wrap steps: a symbol named '")
           << name << "' already exists";
  if (!step.getBody().hasOneBlock())
    return step.emitError("cannot wrap steps of a function with ")
           << step.getBody().getBlocks().size() << " blocks";
  MLIRContext *context = step.getContext();
  Location loc = step.getLoc();
  unsigned numArgs = step.getNumArguments();
  unsigned numResults = step.getNumResults();

  SmallVector<Type> argTypes(step.getArgumentTypes());
  SmallVector<DictionaryAttr> argAttrs;
  SmallVector<bool> perStep(numArgs, false);
  int64_t counterArg = -1;
  for (unsigned i = 0; i < numArgs; ++i) {
    NamedAttrList attrs(step.getArgAttrDict(i));
    if (attrs.get(kStackedAttrName))
      return step.emitError("cannot wrap steps: argument #")
             << i << " is already stacked";
    if ((attrs.get(kPerStepAttrName) || attrs.get(kStepCounterAttrName)) &&
        !isa<RankedTensorType>(argTypes[i]))
      return step.emitError("cannot wrap steps: argument #")
             << i << " must be a ranked tensor, got " << argTypes[i];
    if (attrs.erase(kPerStepAttrName)) {
      perStep[i] = true;
      argTypes[i] = stacked(argTypes[i]);
      attrs.set(kStackedAttrName, UnitAttr::get(context));
    }
    if (attrs.get(kStepCounterAttrName))
      counterArg = i;
    argAttrs.push_back(attrs.getDictionary(context));
  }

  // Results: carried (in place of an argument) or stacked per step.
  SmallVector<Type> resultTypes(step.getResultTypes());
  SmallVector<DictionaryAttr> resultAttrs;
  SmallVector<int64_t> carriedArg(numResults, -1);
  for (unsigned j = 0; j < numResults; ++j) {
    NamedAttrList attrs(step.getResultAttrDict(j));
    if (auto index =
            step.getResultAttrOfType<IntegerAttr>(j, kInPlaceAttrName)) {
      carriedArg[j] = index.getInt();
      if (perStep[carriedArg[j]] || carriedArg[j] == counterArg)
        return step.emitError("cannot wrap steps: argument #")
               << carriedArg[j] << " is both "
               << (perStep[carriedArg[j]] ? "per-step" : "the step counter")
               << " and carried (result #" << j << " is in place of it)";
    } else {
      auto type = dyn_cast<RankedTensorType>(resultTypes[j]);
      if (!type || !type.hasStaticShape())
        return step.emitError("cannot wrap steps: per-step result #")
               << j << " must be a tensor of static shape to be stacked, got "
               << resultTypes[j];
      resultTypes[j] = stacked(type);
      attrs.set(kStackedAttrName, UnitAttr::get(context));
    }
    resultAttrs.push_back(attrs.getDictionary(context));
  }

  // Mixed precision's bf16 copies of carried parameters: a `fuse.cast` of
  // a carried argument that an optimizer update also writes for the next
  // step (its `copies`) is carried too, cast once before the loop instead
  // of at every step.
  struct CarriedCopy {
    CastOp cast;
    unsigned arg;
    Value next;
  };
  SmallVector<CarriedCopy> copies;
  Operation *terminator = step.front().getTerminator();
  // Whether `nextParam`, an update's new value of argument `arg`, is what
  // the step returns for it: the loop carries it.
  auto returnsUpdate = [&](unsigned arg, Value nextParam) {
    for (unsigned j = 0; j < numResults; ++j)
      if (carriedArg[j] == int64_t(arg) &&
          terminator->getOperand(j) == nextParam)
        return true;
    return false;
  };
  step.walk([&](OptimizerOpInterface optimizer) {
    ArrayRef<int64_t> indices =
        optimizer.getCopyParams().value_or(ArrayRef<int64_t>());
    if (optimizer->hasAttr("split_copies"))
      return;
    unsigned first = optimizer->getNumResults() - indices.size();
    for (auto [k, i] : llvm::enumerate(indices)) {
      auto cast = optimizer.getCopies()[k].getDefiningOp<CastOp>();
      auto arg = cast ? dyn_cast<BlockArgument>(cast.getInput()) : nullptr;
      if (!arg || arg.getOwner() != &step.front() ||
          llvm::any_of(copies,
                       [&](const CarriedCopy &c) { return c.cast == cast; }))
        continue;
      if (returnsUpdate(arg.getArgNumber(), optimizer->getResult(i)))
        copies.push_back(
            {cast, arg.getArgNumber(), optimizer->getResult(first + k)});
    }
  });

  // IPEX's split layout: a carried parameter whose update reads and writes
  // its halves (`split_copies`) is carried as the two halves alone.
  struct SplitWeight {
    HighHalfOp high;
    LowHalfOp low;
    unsigned arg;
    Value nextHigh, nextLow;
  };
  SmallVector<SplitWeight> splits;
  SmallVector<int64_t> splitOf(numArgs, -1);
  step.walk([&](OptimizerOpInterface optimizer) {
    if (!optimizer->hasAttr("split_copies"))
      return;
    ArrayRef<int64_t> indices =
        optimizer.getCopyParams().value_or(ArrayRef<int64_t>());
    size_t n = indices.size();
    unsigned first = optimizer->getNumResults() - 2 * n;
    for (auto [k, i] : llvm::enumerate(indices)) {
      auto high = optimizer.getCopies()[k].getDefiningOp<HighHalfOp>();
      auto low = optimizer.getCopies()[n + k].getDefiningOp<LowHalfOp>();
      auto arg = high ? dyn_cast<BlockArgument>(high.getInput()) : nullptr;
      if (!arg || !low || low.getInput() != arg ||
          arg.getOwner() != &step.front() || splitOf[arg.getArgNumber()] >= 0)
        continue;
      if (!returnsUpdate(arg.getArgNumber(), optimizer->getResult(i)))
        continue;
      LLVM_DEBUG(llvm::dbgs()
                 << "carried as its halves: argument #" << arg.getArgNumber()
                 << " of " << step.getSymName() << "\n");
      splitOf[arg.getArgNumber()] = splits.size();
      splits.push_back({high, low, arg.getArgNumber(),
                        optimizer->getResult(first + k),
                        optimizer->getResult(first + n + k)});
    }
  });
  auto isCarried = [&](int64_t arg) { return arg >= 0 && splitOf[arg] < 0; };
  // A split weight's argument holds its top halves and a new argument,
  // appended, its low halves: the caller keeps the pair between calls, and
  // no f32 copy of the weight exists.
  for (auto [w, split] : llvm::enumerate(splits)) {
    unsigned lowArg = numArgs + w;
    argTypes[split.arg] = split.high.getType();
    NamedAttrList high(argAttrs[split.arg]);
    high.set(kSplitHalvesAttrName,
             IntegerAttr::get(IntegerType::get(context, 64), lowArg));
    argAttrs[split.arg] = high.getDictionary(context);
    argTypes.push_back(split.low.getType());
    NamedAttrList low;
    low.set(kLowHalfOfAttrName,
            IntegerAttr::get(IntegerType::get(context, 64), split.arg));
    argAttrs.push_back(low.getDictionary(context));
    for (unsigned j = 0; j < numResults; ++j)
      if (carriedArg[j] == int64_t(split.arg))
        resultTypes[j] = split.high.getType();
    resultTypes.push_back(split.low.getType());
    NamedAttrList inPlace;
    inPlace.set(kInPlaceAttrName,
                IntegerAttr::get(IntegerType::get(context, 64), lowArg));
    resultAttrs.push_back(inPlace.getDictionary(context));
  }

  OpBuilder b(step);
  b.setInsertionPointAfter(step);
  auto steps = func::FuncOp::create(
      b, loc, name, FunctionType::get(context, argTypes, resultTypes));
  steps.setAllArgAttrs(argAttrs);
  steps.setAllResultAttrs(resultAttrs);
  steps.setVisibility(step.getVisibility());
  Block *entry = steps.addEntryBlock();
  for (auto [arg, original] :
       llvm::zip(entry->getArguments(), step.getArguments()))
    arg.setLoc(original.getLoc());
  for (auto [w, split] : llvm::enumerate(splits)) {
    Location weight = step.getArgument(split.arg).getLoc();
    entry->getArgument(numArgs + w)
        .setLoc(NameLoc::get(
            StringAttr::get(context, argumentName(step, split.arg) + ".low"),
            weight));
  }
  // K: the step count of the first stacked argument (the caller checks
  // that all agree).
  Value firstStacked =
      entry->getArgument(llvm::find(perStep, true) - perStep.begin());

  b.setInsertionPointToStart(entry);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value k = tensor::DimOp::create(b, loc, firstStacked, zero);
  Value firstStep;
  if (counterArg >= 0)
    firstStep = tensor::ExtractOp::create(
        b, loc, entry->getArgument(counterArg), ValueRange{});

  // Loop-carried: the carried arguments, then one stack per metric.
  SmallVector<Value> inits;
  for (int64_t arg : carriedArg)
    if (isCarried(arg))
      inits.push_back(entry->getArgument(arg));
  for (unsigned j = 0; j < numResults; ++j)
    if (carriedArg[j] < 0) {
      auto type = cast<RankedTensorType>(resultTypes[j]);
      inits.push_back(tensor::EmptyOp::create(b, loc, type.getShape(),
                                              type.getElementType(), k));
    }
  for (CarriedCopy copy : copies)
    inits.push_back(CastOp::create(b, copy.cast.getLoc(), copy.cast.getType(),
                                   entry->getArgument(copy.arg)));
  unsigned firstCopy = inits.size() - copies.size();
  unsigned firstSplit = inits.size();
  for (SplitWeight split : splits)
    inits.push_back(entry->getArgument(split.arg));
  for (unsigned w = 0; w < splits.size(); ++w)
    inits.push_back(entry->getArgument(numArgs + w));
  auto loop = scf::ForOp::create(
      b, loc, zero, k, one, inits,
      [&](OpBuilder &nested, Location bodyLoc, Value i, ValueRange iterArgs) {
        IRMapping mapping;
        unsigned next = 0;
        for (int64_t arg : carriedArg)
          if (isCarried(arg))
            mapping.map(step.getArgument(arg), iterArgs[next++]);
        for (auto [w, split] : llvm::enumerate(splits)) {
          Value high = iterArgs[firstSplit + w];
          Value low = iterArgs[firstSplit + splits.size() + w];
          mapping.map(split.high.getResult(), high);
          mapping.map(split.low.getResult(), low);
          // The f32 weight, for its readers other than the halves.
          BlockArgument weight = step.getArgument(split.arg);
          if (llvm::any_of(weight.getUsers(), [&](Operation *user) {
                return user != split.high && user != split.low;
              }))
            mapping.map(weight,
                        JoinHalvesOp::create(nested, bodyLoc, weight.getType(),
                                             high, low));
        }
        for (unsigned a = 0; a < numArgs; ++a) {
          Value given = entry->getArgument(a);
          // (A split weight's argument holds its top halves: the f32
          // weight is their join above, where anything reads it.)
          if (mapping.contains(step.getArgument(a)) || splitOf[a] >= 0)
            continue;
          if (perStep[a]) {
            auto type = cast<RankedTensorType>(step.getArgumentTypes()[a]);
            StepSlice slice = stepSlice(nested, bodyLoc, given, type, i);
            given = tensor::ExtractSliceOp::create(nested, bodyLoc, type, given,
                                                   slice.offsets, slice.sizes,
                                                   slice.strides);
          } else if (static_cast<int64_t>(a) == counterArg) {
            Value offset = arith::IndexCastOp::create(nested, bodyLoc,
                                                      nested.getI64Type(), i);
            Value number =
                arith::AddIOp::create(nested, bodyLoc, firstStep, offset);
            given = tensor::FromElementsOp::create(
                nested, bodyLoc, step.getArgumentTypes()[a], number);
          }
          mapping.map(step.getArgument(a), given);
        }
        for (auto [c, copy] : llvm::enumerate(copies))
          mapping.map(copy.cast.getResult(), iterArgs[firstCopy + c]);
        Block &body = step.front();
        for (Operation &op : body.without_terminator()) {
          if (op.getNumResults() == 1 && mapping.contains(op.getResult(0)))
            continue; // a carried copy's cast
          nested.clone(op, mapping);
        }
        Operation *ret = body.getTerminator();
        SmallVector<Value> yields;
        for (unsigned j = 0; j < numResults; ++j)
          if (isCarried(carriedArg[j]))
            yields.push_back(mapping.lookup(ret->getOperand(j)));
        for (unsigned j = 0; j < numResults; ++j) {
          if (carriedArg[j] >= 0)
            continue;
          Value metric = mapping.lookup(ret->getOperand(j));
          Value stack = iterArgs[next++];
          auto type = cast<RankedTensorType>(metric.getType());
          StepSlice slice = stepSlice(nested, bodyLoc, stack, type, i);
          yields.push_back(tensor::InsertSliceOp::create(
              nested, bodyLoc, metric, stack, slice.offsets, slice.sizes,
              slice.strides));
        }
        for (CarriedCopy copy : copies)
          yields.push_back(mapping.lookup(copy.next));
        for (SplitWeight split : splits)
          yields.push_back(mapping.lookup(split.nextHigh));
        for (SplitWeight split : splits)
          yields.push_back(mapping.lookup(split.nextLow));
        scf::YieldOp::create(nested, bodyLoc, yields);
      });

  SmallVector<Value> results(numResults + splits.size());
  unsigned next = 0;
  for (unsigned j = 0; j < numResults; ++j)
    if (isCarried(carriedArg[j]))
      results[j] = loop.getResult(next++);
  for (unsigned j = 0; j < numResults; ++j)
    if (carriedArg[j] < 0)
      results[j] = loop.getResult(next++);
  // A split weight's halves, in place of their arguments.
  for (unsigned j = 0; j < numResults; ++j)
    if (carriedArg[j] >= 0 && !isCarried(carriedArg[j]))
      results[j] = loop.getResult(firstSplit + splitOf[carriedArg[j]]);
  for (unsigned w = 0; w < splits.size(); ++w)
    results[numResults + w] = loop.getResult(firstSplit + splits.size() + w);
  func::ReturnOp::create(b, loc, results);
  symbols.insert(steps);
  return success();
}

struct FuseWrapStepsPass : fuse::impl::FuseWrapStepsBase<FuseWrapStepsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    SmallVector<func::FuncOp> stepFunctions;
    for (auto func : module.getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      for (unsigned i = 0; i < func.getNumArguments(); ++i)
        if (func.getArgAttr(i, kPerStepAttrName)) {
          stepFunctions.push_back(func);
          break;
        }
    }
    for (func::FuncOp step : stepFunctions)
      if (failed(wrap(step, symbols)))
        return signalPassFailure();
  }
};

} // namespace
