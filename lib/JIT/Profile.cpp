//===- Profile.cpp - Per-op time in compiled code -------------------------===//

#include "fuse/Profile.h"
#include "Timers.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Format.h"

#include <algorithm>
#include <chrono>
#include <mutex>

namespace {

struct RegionTotals {
  uint64_t calls = 0;
  int64_t nanoseconds = 0;
};

std::mutex &profileMutex() {
  static std::mutex mutex;
  return mutex;
}

llvm::StringMap<RegionTotals> &profileTotals() {
  static llvm::StringMap<RegionTotals> totals;
  return totals;
}

int64_t now() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

} // namespace

int64_t fuse_timer_start() { return now(); }

void fuse_timer_stop(int64_t start, const char *region) {
  int64_t elapsed = now() - start;
  std::lock_guard<std::mutex> lock(profileMutex());
  RegionTotals &totals = profileTotals()[region];
  ++totals.calls;
  totals.nanoseconds += elapsed;
}

std::vector<fuse::ProfileEntry> fuse::profile() {
  std::vector<ProfileEntry> entries;
  {
    std::lock_guard<std::mutex> lock(profileMutex());
    for (const auto &region : profileTotals())
      entries.push_back({region.getKey().str(), region.getValue().calls,
                         double(region.getValue().nanoseconds) * 1e-9});
  }
  std::sort(entries.begin(), entries.end(),
            [](const ProfileEntry &a, const ProfileEntry &b) {
              return a.seconds != b.seconds ? a.seconds > b.seconds
                                            : a.region < b.region;
            });
  return entries;
}

void fuse::resetProfile() {
  std::lock_guard<std::mutex> lock(profileMutex());
  profileTotals().clear();
}

void fuse::printProfile(llvm::raw_ostream &os,
                        llvm::ArrayRef<ProfileEntry> entries) {
  double total = 0;
  for (const ProfileEntry &e : entries)
    total += e.seconds;
  os << llvm::format("%10s %6s %8s %10s  %s\n", "ms", "%", "calls", "us/call",
                     "region");
  for (const ProfileEntry &e : entries)
    os << llvm::format("%10.2f %6.2f %8llu %10.2f  ", e.seconds * 1e3,
                       total > 0 ? 100 * e.seconds / total : 0.0,
                       (unsigned long long)e.calls,
                       e.calls ? e.seconds * 1e6 / double(e.calls) : 0.0)
       << e.region << "\n";
  os << llvm::format("%10.2f %6.2f %8s %10s  %s\n", total * 1e3, 100.0, "", "",
                     "timed total");
}
