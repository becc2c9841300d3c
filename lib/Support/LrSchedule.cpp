//===- LrSchedule.cpp - Parsing --lr-schedule
//------------------------------===//

#include "fuse/LrSchedule.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringSet.h"

using namespace fuse;

llvm::Expected<LrSchedule> fuse::parseLrSchedule(llvm::StringRef spec) {
  auto fail = [&](const llvm::Twine &why) {
    return llvm::createStringError("invalid --lr-schedule '" + spec +
                                   "': " + why);
  };
  auto [kindName, rest] = spec.trim().split(':');
  LrSchedule schedule;
  bool found = false;
  for (LrScheduleKind kind : {LrScheduleKind::Constant, LrScheduleKind::Step,
                              LrScheduleKind::Exponential,
                              LrScheduleKind::Cosine, LrScheduleKind::Linear})
    if (kindName.trim() == lrScheduleKindName(kind)) {
      schedule.kind = kind;
      found = true;
    }
  if (!found)
    return fail("unknown schedule '" + kindName.trim() +
                "' (constant, step, exponential, cosine or linear)");
  llvm::StringSet<> seen;
  llvm::SmallVector<llvm::StringRef> items;
  if (!rest.trim().empty())
    rest.split(items, ',');
  for (llvm::StringRef item : items) {
    auto [key, value] = item.split('=');
    key = key.trim();
    value = value.trim();
    if (key == "decay_steps")
      key = "steps";
    if (value.empty())
      return fail("'" + item.trim() + "' is not KEY=VALUE");
    if (!seen.insert(key).second)
      return fail("'" + key + "' appears more than once");
    if (key == "warmup" || key == "steps") {
      int64_t n;
      if (value.getAsInteger(10, n))
        return fail(key + " '" + value + "' is not an integer");
      (key == "warmup" ? schedule.warmup : schedule.decaySteps) = n;
    } else if (key == "gamma" || key == "min") {
      double x;
      if (value.getAsDouble(x))
        return fail(key + " '" + value + "' is not a number");
      (key == "gamma" ? schedule.gamma : schedule.min) = x;
    } else {
      return fail("unknown key '" + key + "' (warmup, steps, gamma, min)");
    }
  }
  std::string error = lrScheduleError(schedule);
  if (!error.empty())
    return fail(error);
  return schedule;
}
