//===- RunCommand.cpp - fusec run: JIT-compile and call a function --------===//

#include "Commands.h"

#include "fuse/Engine.h"
#include "fuse/Npy.h"
#include "fuse/Profile.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>
#include <random>

using namespace fuse;
namespace cl = llvm::cl;

cl::SubCommand fusec::runCommand("run", "JIT-compile a function and call it");

namespace {
cl::opt<std::string> input(cl::Positional, cl::desc("<input .mlir file>"),
                           cl::Required, cl::cat(fusec::category()),
                           cl::sub(fusec::runCommand));
cl::opt<std::string> entry("entry", cl::desc("The function to call"),
                           cl::Required, cl::cat(fusec::category()),
                           cl::sub(fusec::runCommand));
cl::list<std::string> args(
    "arg",
    cl::desc("One argument, in order: DIMSxDTYPE=FILL (e.g. 64x784xf32=random, "
             "4xi32=iota, f32=0.5; FILL is a number, zeros, ones, iota or "
             "random[:SEED]) or @FILE.npy"),
    cl::cat(fusec::category()), cl::sub(fusec::runCommand));
cl::opt<std::string> npyOut("npy-out",
                            cl::desc("Write result i to PREFIX<i>.npy"),
                            cl::value_desc("PREFIX"),
                            cl::cat(fusec::category()),
                            cl::sub(fusec::runCommand));
cl::opt<unsigned> printLimit("print-limit",
                             cl::desc("Print at most this many elements of "
                                      "each result"),
                             cl::init(32), cl::cat(fusec::category()),
                             cl::sub(fusec::runCommand));
cl::opt<unsigned> repeat("repeat",
                         cl::desc("Call the function N times and print the "
                                  "mean, median and fastest time per call "
                                  "(after a first call that compiles)"),
                         cl::value_desc("N"), cl::init(0),
                         cl::cat(fusec::category()),
                         cl::sub(fusec::runCommand));
cl::opt<bool> stats("stats",
                    cl::desc("Print the function's compile statistics"),
                    cl::cat(fusec::category()), cl::sub(fusec::runCommand));
} // namespace

static llvm::Error specError(llvm::StringRef spec, const llvm::Twine &why) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "--arg=" + spec + ": " + why);
}

static bool isFloat(DType dtype) {
  return dtype == DType::F32 || dtype == DType::F64;
}

/// Stores `value` into element `i` of a tensor of `dtype`.
static void store(Tensor &t, int64_t i, double value) {
  switch (t.dtype()) {
  case DType::F32:
    t.data<float>()[i] = static_cast<float>(value);
    return;
  case DType::F64:
    t.data<double>()[i] = value;
    return;
  case DType::I1:
    t.data<bool>()[i] = value != 0;
    return;
  case DType::I8:
    t.data<int8_t>()[i] = static_cast<int8_t>(value);
    return;
  case DType::I16:
    t.data<int16_t>()[i] = static_cast<int16_t>(value);
    return;
  case DType::I32:
    t.data<int32_t>()[i] = static_cast<int32_t>(value);
    return;
  case DType::I64:
    t.data<int64_t>()[i] = static_cast<int64_t>(value);
    return;
  case DType::F16:
  case DType::BF16:
    return;
  }
}

static double load(const Tensor &t, int64_t i) {
  switch (t.dtype()) {
  case DType::F32:
    return t.data<float>()[i];
  case DType::F64:
    return t.data<double>()[i];
  case DType::I1:
    return t.data<bool>()[i];
  case DType::I8:
    return t.data<int8_t>()[i];
  case DType::I16:
    return t.data<int16_t>()[i];
  case DType::I32:
    return t.data<int32_t>()[i];
  case DType::I64:
    return static_cast<double>(t.data<int64_t>()[i]);
  case DType::F16:
  case DType::BF16:
    return NAN;
  }
  return NAN;
}

static llvm::Expected<Tensor> parseArg(llvm::StringRef spec) {
  if (spec.starts_with("@"))
    return readNpy(spec.drop_front());
  auto [type, fill] = spec.split('=');
  if (fill.empty())
    return specError(spec, "expected DIMSxDTYPE=FILL or @FILE.npy");
  llvm::SmallVector<llvm::StringRef> parts;
  type.split(parts, 'x');
  std::optional<DType> dtype = parseDType(parts.back());
  if (!dtype || *dtype == DType::F16 || *dtype == DType::BF16)
    return specError(spec, "unsupported dtype '" + parts.back() + "'");
  llvm::SmallVector<int64_t> shape;
  for (llvm::StringRef part : llvm::ArrayRef(parts).drop_back()) {
    int64_t d;
    if (part.getAsInteger(10, d) || d < 0)
      return specError(spec, "bad dim '" + part + "'");
    shape.push_back(d);
  }
  Tensor t = Tensor::empty(*dtype, shape);
  int64_t n = t.numElements();
  auto [kind, seedText] = fill.split(':');
  double constant;
  if (kind == "zeros" || kind == "ones") {
    for (int64_t i = 0; i < n; ++i)
      store(t, i, kind == "ones" ? 1.0 : 0.0);
  } else if (kind == "iota") {
    for (int64_t i = 0; i < n; ++i)
      store(t, i, static_cast<double>(i));
  } else if (kind == "random") {
    unsigned seed = 0;
    if (!seedText.empty() && seedText.getAsInteger(10, seed))
      return specError(spec, "bad seed '" + seedText + "'");
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> uniform(-1.0, 1.0);
    std::uniform_int_distribution<int64_t> small(0, 9);
    for (int64_t i = 0; i < n; ++i)
      store(t, i,
            isFloat(*dtype) ? uniform(rng) : static_cast<double>(small(rng)));
  } else if (!kind.getAsDouble(constant)) {
    for (int64_t i = 0; i < n; ++i)
      store(t, i, constant);
  } else {
    return specError(spec, "unknown fill '" + fill + "'");
  }
  return t;
}

static void printTensor(llvm::raw_ostream &os, const Tensor &t) {
  int64_t n = t.numElements();
  int64_t shown = std::min<int64_t>(n, printLimit);
  os << "[";
  for (int64_t i = 0; i < shown; ++i) {
    if (i)
      os << ", ";
    double v = load(t, i);
    if (isFloat(t.dtype()))
      os << llvm::format("%g", v);
    else
      os << static_cast<int64_t>(v);
  }
  if (shown < n)
    os << ", ... (" << n << " elements)";
  os << "]";
  if (n > 1 && isFloat(t.dtype())) {
    double lo = INFINITY, hi = -INFINITY, sum = 0;
    for (int64_t i = 0; i < n; ++i) {
      double v = load(t, i);
      lo = std::min(lo, v);
      hi = std::max(hi, v);
      sum += v;
    }
    os << llvm::format("  min %g max %g mean %g", lo, hi, sum / n);
  }
  os << "\n";
}

int fusec::runMain() {
  auto fail = [](llvm::Error e) {
    llvm::errs() << "fusec run: error: " << llvm::toString(std::move(e))
                 << "\n";
    return 1;
  };
  EngineOptions options;
  options.fusion = fusec::fusion;
  options.profile = fusec::profile;
  llvm::Expected<std::unique_ptr<Engine>> engine = Engine::create(options);
  if (!engine)
    return fail(engine.takeError());
  if (llvm::Error e = (*engine)->loadFile(input))
    return fail(std::move(e));
  llvm::Expected<Function &> function = (*engine)->lookup(entry);
  if (!function)
    return fail(function.takeError());
  std::vector<Tensor> tensors;
  for (const std::string &spec : args) {
    llvm::Expected<Tensor> t = parseArg(spec);
    if (!t)
      return fail(t.takeError());
    tensors.push_back(std::move(*t));
  }
  llvm::Expected<std::vector<Tensor>> results = function->call(tensors);
  if (!results)
    return fail(results.takeError());
  for (auto [i, result] : llvm::enumerate(*results)) {
    llvm::outs() << "result #" << i << ": " << result.typeString() << " = ";
    printTensor(llvm::outs(), result);
    if (!npyOut.empty())
      if (llvm::Error e = writeNpy(npyOut + std::to_string(i) + ".npy", result))
        return fail(std::move(e));
  }
  if (repeat > 0) {
    // The timed calls write into the first call's results: no allocation.
    if (fusec::profile)
      resetProfile();
    // On a host whose speed drifts, the fastest call is the steadiest
    // figure for comparing two builds; the mean is what a run costs.
    std::vector<double> micros;
    micros.reserve(repeat);
    for (unsigned i = 0; i < repeat; ++i) {
      auto start = std::chrono::steady_clock::now();
      if (llvm::Error e = function->callInto(tensors, *results))
        return fail(std::move(e));
      micros.push_back(std::chrono::duration<double, std::micro>(
                           std::chrono::steady_clock::now() - start)
                           .count());
    }
    double mean = std::accumulate(micros.begin(), micros.end(), 0.0) / repeat;
    std::nth_element(micros.begin(), micros.begin() + repeat / 2, micros.end());
    double median = micros[repeat / 2];
    double fastest = *std::min_element(micros.begin(), micros.end());
    llvm::outs() << llvm::format(
        "%u calls: %.2f us per call (median %.2f, fastest %.2f)\n",
        unsigned(repeat), mean, median, fastest);
  }
  if (stats) {
    FunctionStats s = function->stats();
    llvm::outs() << "stats: signatures " << s.signatures << ", misses "
                 << s.misses << ", disk hits " << s.diskHits << ", compile "
                 << llvm::format("%.1f", s.compileMillis) << " ms\n";
  }
  if (fusec::profile)
    printProfile(llvm::outs(), fuse::profile());
  return 0;
}
