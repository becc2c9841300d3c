//===- Trainer.h - Training with K steps per call ---------------*- C++ -*-===//
//
// A Trainer owns a model's parameters and optimizer state and trains them
// with the K-step function `fuse-wrap-steps` derives from a step function
// (`fuse.train_step @train` gives `@train` and `@train_steps`): each call
// runs K steps, K being the leading dim of the stacked batches, so a chunk
// of any size (the shorter last one of an epoch too) runs the same compiled
// code. After each call a callback sees the per-step losses and the exact
// step numbers they belong to.
//
// It uses the engine's public API only, as any embedder could.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_TRAINER_H
#define FUSE_TRAINER_H

#include "fuse/Engine.h"

#include <functional>

namespace fuse {

/// What one call of the K-step function did.
struct StepsReport {
  /// The step number of the call's first step (counting from 0).
  int64_t firstStep = 0;
  /// The number of steps of the call (K).
  int64_t steps = 0;
  /// The loss of step firstStep + i: the first per-step result.
  llvm::ArrayRef<float> losses;
  /// Every per-step result (`fuse.stacked`), one row per step.
  llvm::ArrayRef<Tensor> metrics;
  /// Steps taken so far: firstStep + steps.
  int64_t completedSteps() const { return firstStep + steps; }
};

class Trainer {
public:
  using Callback = std::function<void(const StepsReport &)>;

  /// A trainer for `engine`'s step function `stepFunction`, which must have
  /// a K-step companion `<stepFunction>_steps`. Its carried arguments
  /// (parameters and optimizer states) of static shape start as
  /// initialize(0) sets them.
  static llvm::Expected<std::unique_ptr<Trainer>>
  create(Engine &engine, llvm::StringRef stepFunction);

  /// Sets every carried argument of static shape to its declared initializer
  /// (`fuse.init`; zeros where none is declared), drawn with `seed`: the
  /// same seed gives the same values.
  llvm::Error initialize(uint64_t seed);
  /// The step function's name (`train`).
  llvm::StringRef name() const { return name_; }
  /// The K-step function the trainer calls (`<stepFunction>_steps`).
  Function &function() const { return steps_; }
  /// The carried arguments, by name (`w1`, `w1.state0`, ...).
  llvm::ArrayRef<std::string> stateNames() const { return stateNames_; }
  /// Copies `value` into the carried argument `name`.
  llvm::Error setState(llvm::StringRef name, const Tensor &value);
  /// The carried argument `name`: a view of the trainer's buffer; for a
  /// weight held in IPEX's split layout (ArgumentInfo::lowHalf), the f32
  /// join of its halves, a new tensor.
  llvm::Expected<Tensor> state(llvm::StringRef name) const;
  /// Sets an argument that is the same at every step (the learning rate).
  llvm::Error setInput(llvm::StringRef name, Tensor value);
  /// The names of the per-step inputs, in the order trainSteps takes them.
  llvm::ArrayRef<std::string> batchNames() const { return batchNames_; }

  /// The number of the next step (steps taken so far).
  int64_t step() const { return step_; }
  void setStep(int64_t step) { step_ = step; }
  /// Called after each call of the K-step function.
  void setCallback(Callback callback) { callback_ = std::move(callback); }

  /// Runs K steps in one call: `batches` holds each per-step input stacked
  /// along a new dim 0 of size K (the same K for all).
  llvm::Error trainSteps(llvm::ArrayRef<Tensor> batches);
  /// Builds the K-step function's specialization for stacked batches of
  /// these dtypes and shapes (dim 0 does not matter) without training;
  /// `onLowered` as in Function::prepare.
  llvm::Error prepare(llvm::ArrayRef<Tensor> batches,
                      const std::function<void()> &onLowered = nullptr);
  /// Runs one step on unstacked per-step inputs (K = 1).
  llvm::Error trainStep(llvm::ArrayRef<Tensor> batch);

private:
  Trainer(llvm::StringRef name, Function &steps)
      : name_(name.str()), steps_(steps) {}
  llvm::Expected<size_t> argumentIndex(llvm::StringRef name) const;
  /// Puts `batches` in their argument slots after checking that they and
  /// every other argument are there.
  llvm::Error bindBatches(llvm::ArrayRef<Tensor> batches);
  /// The argument index of the carried argument `name`.
  llvm::Expected<size_t> stateIndex(llvm::StringRef name) const;
  /// Stores `value` (of the state's dtype and the argument's shape) into
  /// argument `i`'s buffers: split into its halves for a split weight.
  llvm::Error store(size_t i, const Tensor &value);

  std::string name_;
  Function &steps_;
  /// Per argument of the K-step function: its tensor, for carried and
  /// constant arguments; batch slots are filled per call.
  std::vector<Tensor> args_;
  std::vector<bool> isSet_;
  std::vector<size_t> batchArgs_;
  std::vector<std::string> stateNames_, batchNames_;
  int counterArg_ = -1;
  Tensor counter_;
  /// Result slots: empty for carried results, per-step rows otherwise.
  std::vector<Tensor> results_;
  std::vector<Tensor> metricBuffers_;
  std::vector<Tensor> metrics_;
  int64_t step_ = 0;
  Callback callback_;
};

} // namespace fuse

#endif // FUSE_TRAINER_H
