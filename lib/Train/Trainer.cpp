//===- Trainer.cpp - Training with K steps per call -----------------------===//

#include "fuse/Trainer.h"
#include "fuse/ABI.h"

#include "llvm/ADT/StringExtras.h"

#include <cstring>

using namespace fuse;
using llvm::Error;
using llvm::Expected;

Expected<std::unique_ptr<Trainer>> Trainer::create(Engine &engine,
                                                   llvm::StringRef name) {
  Expected<Function &> single = engine.lookup(name);
  if (!single)
    return single.takeError();
  std::string stepsName = abi::stepsFunctionName(name);
  Expected<Function &> steps = engine.lookup(stepsName);
  if (!steps) {
    llvm::consumeError(steps.takeError());
    return llvm::createStringError(
        "'" + name + "' is not a step function: there is no '" + stepsName +
        "' (fuse-wrap-steps derives one from each function with " +
        abi::kPerStepAttrName + " arguments, as fuse.train_step makes them)");
  }
  std::unique_ptr<Trainer> trainer(new Trainer(name, *steps));
  llvm::ArrayRef<ArgumentInfo> args = steps->arguments();
  trainer->args_.resize(args.size());
  trainer->isSet_.assign(args.size(), false);
  std::vector<bool> carried(args.size(), false);
  for (const ResultInfo &result : steps->results()) {
    if (result.inPlaceOf >= 0)
      carried[result.inPlaceOf] = true;
    trainer->results_.emplace_back();
    trainer->metricBuffers_.emplace_back();
  }
  for (auto [i, arg] : llvm::enumerate(args)) {
    if (arg.stacked) {
      trainer->batchArgs_.push_back(i);
      trainer->batchNames_.push_back(arg.name);
      continue;
    }
    if (arg.stepCounter) {
      trainer->counterArg_ = i;
      trainer->counter_ = Tensor::zeros(DType::I64, {});
      trainer->args_[i] = trainer->counter_;
      trainer->isSet_[i] = true;
      continue;
    }
    // A split weight's low halves are part of its state (W's), not a
    // state of their own.
    if (!carried[i] || arg.highHalf >= 0)
      continue;
    trainer->stateNames_.push_back(arg.name);
  }
  if (trainer->batchArgs_.empty())
    return llvm::createStringError("'" + stepsName +
                                   "' takes no stacked batch input");
  if (Error err = trainer->initialize(0))
    return std::move(err);
  return trainer;
}

/// SplitMix64's finalizer: one well-mixed seed per (seed, argument).
static uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

/// The dtype of the state held in argument `arg`: f32 for a weight held
/// as its split halves.
static DType stateDType(const ArgumentInfo &arg) {
  return arg.lowHalf >= 0 ? DType::F32 : arg.dtype;
}

Error Trainer::store(size_t i, const Tensor &value) {
  const ArgumentInfo &arg = steps_.arguments()[i];
  // Into the existing buffer, if any: views from state() stay valid.
  auto into = [&](size_t slot, DType dtype) -> Expected<Tensor *> {
    Tensor &t = args_[slot];
    if (!(isSet_[slot] && t.isOwning() && t.dtype() == dtype &&
          t.shape() == value.shape())) {
      Expected<Tensor> fresh =
          Tensor::allocate(dtype, value.shape(), "state '" + arg.name + "'");
      if (!fresh)
        return fresh.takeError();
      t = std::move(*fresh);
    }
    isSet_[slot] = true;
    return &t;
  };
  Tensor source = value;
  if (!value.isContiguous()) {
    Expected<Tensor> copy =
        value.checkedContiguousCopy("state '" + arg.name + "'");
    if (!copy)
      return copy.takeError();
    source = std::move(*copy);
  }
  size_t n = static_cast<size_t>(source.numElements());
  if (arg.lowHalf < 0) {
    Expected<Tensor *> slot = into(i, arg.dtype);
    if (!slot)
      return slot.takeError();
    std::memcpy((*slot)->data(), source.data(), n * byteWidth(arg.dtype));
    return Error::success();
  }
  // IPEX's split layout: the top and low 16 bits of each f32.
  Expected<Tensor *> high = into(i, arg.dtype);
  if (!high)
    return high.takeError();
  Expected<Tensor *> low = into(arg.lowHalf, DType::I16);
  if (!low)
    return low.takeError();
  const float *from = source.data<float>();
  uint16_t *tops = (*high)->data<uint16_t>();
  uint16_t *bottoms = (*low)->data<uint16_t>();
  for (size_t e = 0; e < n; ++e) {
    uint32_t bits;
    std::memcpy(&bits, &from[e], sizeof(bits));
    tops[e] = static_cast<uint16_t>(bits >> 16);
    bottoms[e] = static_cast<uint16_t>(bits & 0xFFFF);
  }
  return Error::success();
}

Error Trainer::initialize(uint64_t seed) {
  for (const std::string &name : stateNames_) {
    size_t i = cantFail(argumentIndex(name));
    const ArgumentInfo &arg = steps_.arguments()[i];
    if (llvm::is_contained(arg.shape, -1))
      continue;
    Initializer init = arg.init.value_or(Initializer());
    Expected<Tensor> value =
        init.create(stateDType(arg), arg.shape, mix(seed ^ mix(i)));
    if (!value)
      return llvm::createStringError("'" + name +
                                     "': " + toString(value.takeError()));
    if (Error err = store(i, *value))
      return err;
  }
  return Error::success();
}

Expected<size_t> Trainer::argumentIndex(llvm::StringRef name) const {
  for (auto [i, arg] : llvm::enumerate(steps_.arguments()))
    if (arg.name == name)
      return i;
  return llvm::createStringError("'" + steps_.name() +
                                 "' has no argument named '" + name + "'");
}

Expected<size_t> Trainer::stateIndex(llvm::StringRef name) const {
  if (!llvm::is_contained(stateNames_, name))
    return llvm::createStringError(
        "'" + name + "' is not a parameter or optimizer state of '" +
        steps_.name() + "'");
  return argumentIndex(name);
}

Error Trainer::setState(llvm::StringRef name, const Tensor &value) {
  Expected<size_t> index = stateIndex(name);
  if (!index)
    return index.takeError();
  const ArgumentInfo &arg = steps_.arguments()[*index];
  DType dtype = stateDType(arg);
  bool fits = value.dtype() == dtype &&
              value.rank() == static_cast<int64_t>(arg.shape.size());
  for (size_t d = 0; fits && d < arg.shape.size(); ++d)
    fits = arg.shape[d] < 0 || arg.shape[d] == value.shape()[d];
  if (!fits) {
    ArgumentInfo logical = arg;
    logical.dtype = dtype;
    return llvm::createStringError("'" + name + "' is " + logical.typeString() +
                                   ", got " + value.typeString());
  }
  // A split weight: its halves, written from the caller's values.
  if (arg.lowHalf >= 0)
    return store(*index, value);
  // The trainer owns its state: updated in place, never the caller's memory.
  // Checked: a broadcast view's copy may not fit in memory (an error naming
  // the state, never an abort).
  Expected<Tensor> copy = value.checkedContiguousCopy("state '" + name + "'");
  if (!copy)
    return copy.takeError();
  args_[*index] = std::move(*copy);
  isSet_[*index] = true;
  return Error::success();
}

Expected<Tensor> Trainer::state(llvm::StringRef name) const {
  Expected<size_t> index = stateIndex(name);
  if (!index)
    return index.takeError();
  if (!isSet_[*index])
    return llvm::createStringError("'" + name + "' has not been set");
  const Tensor &t = args_[*index];
  const ArgumentInfo &arg = steps_.arguments()[*index];
  if (arg.lowHalf < 0)
    return Tensor::view(t.data(), t.dtype(), t.shape());
  // A weight held as its split halves: their join, a new f32 tensor.
  Expected<Tensor> joined =
      Tensor::allocate(DType::F32, t.shape(), "state '" + name + "'");
  if (!joined)
    return joined.takeError();
  const uint16_t *tops = t.data<uint16_t>();
  const uint16_t *bottoms = args_[arg.lowHalf].data<uint16_t>();
  float *to = joined->data<float>();
  for (int64_t e = 0; e < t.numElements(); ++e) {
    uint32_t bits = uint32_t(tops[e]) << 16 | bottoms[e];
    std::memcpy(&to[e], &bits, sizeof(bits));
  }
  return std::move(*joined);
}

Error Trainer::setInput(llvm::StringRef name, Tensor value) {
  Expected<size_t> index = argumentIndex(name);
  if (!index)
    return index.takeError();
  const ArgumentInfo &arg = steps_.arguments()[*index];
  if (arg.stacked || arg.stepCounter || llvm::is_contained(stateNames_, name))
    return llvm::createStringError(
        "'" + name + "' of '" + steps_.name() +
        "' is not an input that stays the same at every step");
  args_[*index] = std::move(value);
  isSet_[*index] = true;
  return Error::success();
}

Error Trainer::bindBatches(llvm::ArrayRef<Tensor> batches) {
  if (batches.size() != batchArgs_.size())
    return llvm::createStringError(
        "'" + steps_.name() + "' takes " + llvm::Twine(batchArgs_.size()) +
        " stacked batch inputs (" + llvm::join(batchNames_, ", ") + "), got " +
        llvm::Twine(batches.size()));
  if (batches[0].rank() == 0)
    return llvm::createStringError("batch input '" + batchNames_[0] +
                                   "' must be stacked along dim 0");
  for (auto [i, set] : llvm::enumerate(isSet_))
    if (!set && !llvm::is_contained(batchArgs_, i))
      return llvm::createStringError(
          "argument '" + steps_.arguments()[i].name + "' of '" + steps_.name() +
          "' is not set (Trainer::" +
          (llvm::is_contained(stateNames_, steps_.arguments()[i].name)
               ? "setState"
               : "setInput") +
          ")");
  for (auto [slot, batch] : llvm::zip(batchArgs_, batches))
    args_[slot] = batch;
  return Error::success();
}

Error Trainer::prepare(llvm::ArrayRef<Tensor> batches,
                       const std::function<void()> &onLowered) {
  Error error = bindBatches(batches);
  if (!error)
    error = steps_.prepare(args_, onLowered);
  for (size_t slot : batchArgs_)
    args_[slot] = Tensor();
  return error;
}

Error Trainer::trainSteps(llvm::ArrayRef<Tensor> batches) {
  if (Error err = bindBatches(batches))
    return err;
  int64_t k = batches[0].shape()[0];
  if (counterArg_ >= 0)
    counter_.data<int64_t>()[0] = step_;

  // Per-step results land in buffers kept across calls (grown as needed).
  llvm::ArrayRef<ResultInfo> results = steps_.results();
  metrics_.clear();
  for (auto [j, result] : llvm::enumerate(results)) {
    if (!result.stacked)
      continue;
    llvm::SmallVector<int64_t, 4> shape(result.shape.begin(),
                                        result.shape.end());
    Tensor &buffer = metricBuffers_[j];
    if (buffer.rank() == 0 || buffer.shape()[0] < k) {
      shape[0] = std::max<int64_t>(k, 1);
      Expected<Tensor> grown = Tensor::allocate(
          result.dtype, shape,
          "result #" + llvm::Twine(j) + " of '" + steps_.name() + "'");
      if (!grown) {
        for (size_t slot : batchArgs_)
          args_[slot] = Tensor();
        return grown.takeError();
      }
      buffer = std::move(*grown);
    }
    shape[0] = k;
    results_[j] = Tensor::view(buffer.data(), result.dtype, shape);
    metrics_.push_back(results_[j]);
  }
  Error error = steps_.callInto(args_, results_);
  for (size_t slot : batchArgs_)
    args_[slot] = Tensor();
  if (error)
    return error;

  StepsReport report;
  report.firstStep = step_;
  report.steps = k;
  if (!metrics_.empty() && metrics_[0].dtype() == DType::F32)
    report.losses = llvm::ArrayRef<float>(metrics_[0].data<float>(), k);
  report.metrics = metrics_;
  step_ += k;
  if (callback_)
    callback_(report);
  return Error::success();
}

Error Trainer::trainStep(llvm::ArrayRef<Tensor> batch) {
  llvm::SmallVector<Tensor, 4> stacked;
  for (const Tensor &t : batch) {
    llvm::SmallVector<int64_t, 4> shape = {1}, strides = {t.numElements()};
    llvm::append_range(shape, t.shape());
    llvm::append_range(strides, t.strides());
    stacked.push_back(Tensor::view(t.data(), t.dtype(), shape, strides));
  }
  return trainSteps(stacked);
}
