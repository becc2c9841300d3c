//===- CompileStats.cpp - Where compile time goes -------------------------===//

#include "fuse/CompileStats.h"

#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassInstrumentation.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/IR/PassInstrumentation.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <map>
#include <mutex>

using namespace fuse;
using Clock = std::chrono::steady_clock;

static double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

void CompileStats::add(llvm::StringRef unit, llvm::StringRef name,
                       double seconds, unsigned depth) {
  std::lock_guard<std::mutex> lock(mutex);
  phases.push_back({unit.str(), name.str(), depth, seconds});
}

void CompileStats::note(llvm::StringRef unit, llvm::StringRef text) {
  std::lock_guard<std::mutex> lock(mutex);
  notes.emplace_back(unit.str(), text.str());
}

double CompileStats::total(llvm::StringRef unit) const {
  std::lock_guard<std::mutex> lock(mutex);
  double sum = 0;
  for (const Phase &phase : phases)
    if (phase.depth == 0 && (unit.empty() || phase.unit == unit))
      sum += phase.seconds;
  return sum;
}

void CompileStats::print(llvm::raw_ostream &os) const {
  llvm::MapVector<llvm::StringRef, std::vector<const Phase *>> units;
  llvm::MapVector<llvm::StringRef, double> byPhase;
  for (const Phase &phase : phases) {
    units[phase.unit].push_back(&phase);
    if (phase.depth == 0)
      byPhase[phase.name] += phase.seconds;
  }
  auto line = [&](unsigned indent, llvm::StringRef name, double seconds,
                  double of) {
    std::string label = std::string(indent, ' ') + name.str();
    os << llvm::formatv("  {0,-52} {1,8:f4} s {2,5:f1}%\n", label, seconds,
                        of > 0 ? 100 * seconds / of : 0.0);
  };
  os << "Compile time (wall seconds; a pass's runs on every function "
        "summed):\n";
  // LLVM's O3 runs some 80 passes: the ones under this much are summed into
  // one line.
  constexpr double kSmallPass = 0.0005;
  for (auto &[unit, list] : units) {
    double unitTotal = total(unit);
    os << llvm::formatv("{0}: {1:f4} s\n", unit, unitTotal);
    double small = 0;
    unsigned smallCount = 0;
    bool llvmPhase = false;
    auto flushSmall = [&] {
      if (smallCount)
        line(2,
             llvm::formatv("({0} passes under {1} ms)", smallCount,
                           kSmallPass * 1000)
                 .str(),
             small, unitTotal);
      small = 0;
      smallCount = 0;
    };
    for (const Phase *phase : list) {
      if (phase->depth == 0)
        llvmPhase = llvm::StringRef(phase->name).starts_with("llvm:");
      if (llvmPhase && phase->depth == 1 && phase->seconds < kSmallPass) {
        small += phase->seconds;
        ++smallCount;
        continue;
      }
      if (phase->depth == 0)
        flushSmall();
      line(2 * phase->depth, phase->name, phase->seconds, unitTotal);
    }
    flushSmall();
  }
  double all = total();
  os << llvm::formatv("all units: {0:f4} s\n", all);
  for (auto &[name, seconds] : byPhase)
    line(0, name, seconds, all);
  std::lock_guard<std::mutex> lock(mutex);
  if (!notes.empty())
    os << "Notes:\n";
  for (auto &[unit, text] : notes)
    os << unit << ": " << text << "\n";
}

PhaseTimer::PhaseTimer(CompileStats *stats, llvm::StringRef unit,
                       llvm::StringRef name)
    : stats(stats), unit(unit.str()), name(name.str()), start(Clock::now()) {}

void PhaseTimer::stop() {
  if (!stats)
    return;
  stats->add(unit, name, secondsSince(start));
  stats = nullptr;
}

namespace {
/// Times every pass run; an adaptor (whose nested passes ran, each timed
/// itself) is not counted.
class PassTimes : public mlir::PassInstrumentation, public PassTimesRecorder {
public:
  PassTimes(mlir::Operation *root, CompileStats &stats, llvm::StringRef unit)
      : root(root), stats(stats), unit(unit.str()) {}

  void runBeforePass(mlir::Pass *pass, mlir::Operation *op) override {
    std::lock_guard<std::mutex> lock(mutex);
    if (op == root)
      nestedRuns = 0;
    starts[{pass, op}] = Clock::now();
  }
  void runAfterPass(mlir::Pass *pass, mlir::Operation *op) override {
    finish(pass, op);
  }
  void runAfterPassFailed(mlir::Pass *pass, mlir::Operation *op) override {
    finish(pass, op);
  }

  void flush() override {
    std::lock_guard<std::mutex> lock(mutex);
    for (auto &[name, seconds] : passSeconds)
      stats.add(unit, name, seconds, /*depth=*/1);
    passSeconds.clear();
  }

private:
  void finish(mlir::Pass *pass, mlir::Operation *op) {
    Clock::time_point end = Clock::now();
    std::lock_guard<std::mutex> lock(mutex);
    auto it = starts.find({pass, op});
    if (it == starts.end())
      return;
    double seconds = std::chrono::duration<double>(end - it->second).count();
    starts.erase(it);
    if (op != root)
      ++nestedRuns;
    else if (nestedRuns != 0)
      return;
    std::string name = pass->getArgument().empty() ? pass->getName().str()
                                                   : pass->getArgument().str();
    passSeconds[name] += seconds;
  }

  mlir::Operation *root;
  CompileStats &stats;
  std::string unit;
  std::mutex mutex;
  llvm::DenseMap<std::pair<mlir::Pass *, mlir::Operation *>, Clock::time_point>
      starts;
  unsigned nestedRuns = 0;
  llvm::MapVector<std::string, double, std::map<std::string, unsigned>>
      passSeconds;
};
} // namespace

PassTimesRecorder &fuse::recordPassTimes(mlir::PassManager &pm,
                                         mlir::Operation *root,
                                         CompileStats &stats,
                                         llvm::StringRef unit) {
  auto instrumentation = std::make_unique<PassTimes>(root, stats, unit);
  PassTimes &recorder = *instrumentation;
  pm.addInstrumentation(std::move(instrumentation));
  return recorder;
}

namespace {
struct Frame {
  std::string name;
  Clock::time_point start;
  bool runsPasses = false;
};
} // namespace

struct LLVMPassTimes::Impl {
  Impl(CompileStats &stats, llvm::StringRef unit)
      : stats(stats), unit(unit.str()) {}

  void after(llvm::StringRef pass) {
    if (stack.empty())
      return;
    Frame frame = std::move(stack.back());
    stack.pop_back();
    if (!stack.empty())
      stack.back().runsPasses = true;
    // Pass managers and adaptors are the sums of the passes they ran.
    if (!frame.runsPasses)
      seconds[frame.name] += secondsSince(frame.start);
  }

  CompileStats &stats;
  std::string unit;
  llvm::PassInstrumentationCallbacks callbacks;
  std::vector<Frame> stack;
  llvm::MapVector<std::string, double, std::map<std::string, unsigned>> seconds;
};

LLVMPassTimes::LLVMPassTimes(CompileStats &stats, llvm::StringRef unit)
    : impl(std::make_unique<Impl>(stats, unit)) {
  Impl &state = *impl;
  state.callbacks.registerBeforeNonSkippedPassCallback(
      [&state](llvm::StringRef pass, llvm::Any) {
        state.stack.push_back({pass.str(), Clock::now()});
      });
  state.callbacks.registerAfterPassCallback(
      [&state](llvm::StringRef pass, llvm::Any,
               const llvm::PreservedAnalyses &) { state.after(pass); });
  state.callbacks.registerAfterPassInvalidatedCallback(
      [&state](llvm::StringRef pass, const llvm::PreservedAnalyses &) {
        state.after(pass);
      });
}

LLVMPassTimes::~LLVMPassTimes() = default;

llvm::PassInstrumentationCallbacks &LLVMPassTimes::callbacks() {
  return impl->callbacks;
}

void LLVMPassTimes::flush() {
  for (auto &[name, seconds] : impl->seconds)
    impl->stats.add(impl->unit, name, seconds, /*depth=*/1);
  impl->seconds.clear();
}
