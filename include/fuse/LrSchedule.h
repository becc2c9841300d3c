//===- LrSchedule.h - Learning-rate schedules and gradient clipping -*- C++
//-*-//
//
// A learning-rate schedule scales the step function's `lr` input by a factor
// of the global step, computed in compiled code (`fuse.lr_schedule`), so a
// schedule never recompiles and a K-step call applies it per step. It is an
// attribute of `fuse.train_step` (`#fuse.lr_schedule<...>`); an embedder or
// `fusec train --lr-schedule` may override it, and the clipping of
// gradients, for every train_step of a module at load
// (EngineOptions::trainStep).
//
// The checks are header-only: the dialect's verifier and the command-line
// parser give the same messages.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_LRSCHEDULE_H
#define FUSE_LRSCHEDULE_H

#include "fuse/Precision.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>

namespace fuse {

/// The kinds, as `#fuse.lr_schedule` spells them (docs/FuseDialect.md has
/// each formula).
enum class LrScheduleKind { Constant, Step, Exponential, Cosine, Linear };

struct LrSchedule {
  LrScheduleKind kind = LrScheduleKind::Constant;
  /// Steps of linear warmup from 0 (all kinds).
  int64_t warmup = 0;
  /// The decay's length in steps after the warmup (the step size of `step`);
  /// needed by every kind but `constant`, which takes none.
  int64_t decaySteps = 0;
  /// The factor per decay_steps of `step` and `exponential`.
  std::optional<double> gamma;
  /// The final factor of `cosine` and `linear`.
  std::optional<double> min;
};

/// `kind`'s name in `#fuse.lr_schedule` and `--lr-schedule`.
inline llvm::StringRef lrScheduleKindName(LrScheduleKind kind) {
  switch (kind) {
  case LrScheduleKind::Constant:
    return "constant";
  case LrScheduleKind::Step:
    return "step";
  case LrScheduleKind::Exponential:
    return "exponential";
  case LrScheduleKind::Cosine:
    return "cosine";
  case LrScheduleKind::Linear:
    return "linear";
  }
  return "";
}

/// PyTorch's StepLR and Keras' ExponentialDecay have no default rate; 0.1 is
/// StepLR's.
constexpr double kDefaultLrGamma = 0.1;

/// Why `s` is not a schedule, or "" when it is one.
inline std::string lrScheduleError(const LrSchedule &s) {
  std::string kind = lrScheduleKindName(s.kind).str();
  if (s.warmup < 0)
    return "warmup must be at least 0, got " + std::to_string(s.warmup);
  bool decays = s.kind != LrScheduleKind::Constant;
  bool takesGamma =
      s.kind == LrScheduleKind::Step || s.kind == LrScheduleKind::Exponential;
  bool takesMin =
      s.kind == LrScheduleKind::Cosine || s.kind == LrScheduleKind::Linear;
  if (!decays && s.decaySteps != 0)
    return "'constant' takes no decay_steps";
  if (decays && s.decaySteps < 1)
    return "'" + kind + "' needs decay_steps of at least 1, got " +
           std::to_string(s.decaySteps);
  if (s.gamma && !takesGamma)
    return "'" + kind + "' takes no gamma (step and exponential do)";
  if (s.gamma && !(std::isfinite(*s.gamma) && *s.gamma > 0))
    return "gamma must be a finite number above 0";
  if (s.min && !takesMin)
    return "'" + kind + "' takes no min (cosine and linear do)";
  if (s.min && !(*s.min >= 0 && *s.min <= 1))
    return "min must be in [0, 1]";
  return "";
}

/// Parses `--lr-schedule`'s spelling: `KIND[:KEY=VALUE,...]` with keys
/// `warmup`, `steps` (or `decay_steps`), `gamma` and `min`, e.g.
/// `cosine:warmup=100,steps=5000,min=0.1`; checked as lrScheduleError.
llvm::Expected<LrSchedule> parseLrSchedule(llvm::StringRef spec);

/// Why `value` is not a clipping bound of `option` (a finite number above
/// 0), or "".
inline std::string clipError(llvm::StringRef option, double value) {
  if (std::isfinite(value) && value > 0)
    return "";
  char text[32];
  std::snprintf(text, sizeof(text), "%g", value);
  return (option + " must be a finite number above 0, got " + text).str();
}

/// What EngineOptions::trainStep sets on every `fuse.train_step` of a
/// module at load, replacing the attributes the module gives.
struct TrainStepOverrides {
  /// `lr_schedule`.
  std::optional<LrSchedule> lrSchedule;
  /// `clip_norm`: the gradients' global L2 norm is clipped to this.
  std::optional<double> clipNorm;
  /// `clip_value`: every gradient element is clamped to [-v, v].
  std::optional<double> clipValue;
  /// `precision`: bf16 mixed precision (fuse/Precision.h) or f32.
  std::optional<Precision> precision;
  /// `master_weights`: how a bf16 step keeps its weights between steps
  /// (fuse/Precision.h); no effect in f32.
  std::optional<MasterWeights> masterWeights;

  bool empty() const {
    return !lrSchedule && !clipNorm && !clipValue && !precision &&
           !masterWeights;
  }
};

} // namespace fuse

#endif // FUSE_LRSCHEDULE_H
