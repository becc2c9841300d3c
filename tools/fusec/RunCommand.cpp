//===- RunCommand.cpp - fusec run: JIT-compile and call a function --------===//

#include "Commands.h"

#include "fuse/CompileStats.h"
#include "fuse/Data/Safetensors.h"
#include "fuse/Engine.h"
#include "fuse/Npy.h"
#include "fuse/Profile.h"

#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <numeric>
#include <random>

using namespace fuse;
namespace cl = llvm::cl;

cl::SubCommand fusec::runCommand("run", "JIT-compile a function and call it");

namespace {
cl::opt<std::string> input(cl::Positional, cl::desc("<input .mlir file>"),
                           cl::Required, cl::cat(fusec::category()),
                           cl::sub(fusec::runCommand));
cl::opt<std::string> entry("entry",
                           cl::desc("The function to call (missing: the "
                                    "module's functions are listed)"),
                           cl::cat(fusec::category()),
                           cl::sub(fusec::runCommand));
cl::list<std::string> args(
    "arg",
    cl::desc("One argument, in order: DIMSxDTYPE=FILL (e.g. 64x784xf32=random, "
             "4xi32=iota, f32=0.5; FILL is a number, zeros, ones, iota or "
             "random[:SEED]), @FILE.npy or @FILE.safetensors:NAME (one "
             "tensor of a checkpoint)"),
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
} // namespace

static llvm::Error specError(llvm::StringRef spec, const llvm::Twine &why) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "--arg=" + spec + ": " + why);
}

/// The semantics of a 16-bit float dtype.
static const llvm::fltSemantics &halfSemantics(DType dtype) {
  return dtype == DType::BF16 ? llvm::APFloat::BFloat()
                              : llvm::APFloat::IEEEhalf();
}

/// The integer range of `dtype` (i1 holds 0 and 1, as numpy's bool).
static std::pair<int64_t, int64_t> integerRange(DType dtype) {
  switch (dtype) {
  case DType::I1:
    return {0, 1};
  case DType::I8:
    return {INT8_MIN, INT8_MAX};
  case DType::I16:
    return {INT16_MIN, INT16_MAX};
  case DType::I32:
    return {INT32_MIN, INT32_MAX};
  default:
    return {INT64_MIN, INT64_MAX};
  }
}

namespace {
/// One fill value, exact for every integer dtype (i64 beyond 2^53 too).
struct Value {
  bool isInteger;
  int64_t integer;
  double real;
  static Value of(int64_t v) { return {true, v, static_cast<double>(v)}; }
  static Value of(double v) { return {false, 0, v}; }
};
} // namespace

/// Why `value` cannot be an element of `dtype` (out of range, NaN or a
/// fraction into an integer), or nullopt when it fits. A float rounds to
/// the nearest; a finite value rounding to infinity is out of range.
static std::optional<std::string> whyNotFits(Value value, DType dtype) {
  std::string range = ("is out of range for " + dtypeName(dtype)).str();
  if (isFloatingPoint(dtype)) {
    double v = value.real;
    if (!std::isfinite(v))
      return std::nullopt;
    if (dtype == DType::F32 && std::isinf(static_cast<float>(v)))
      return range;
    if (dtype == DType::F16 || dtype == DType::BF16) {
      llvm::APFloat f(v);
      bool losesInfo;
      if (f.convert(halfSemantics(dtype), llvm::APFloat::rmNearestTiesToEven,
                    &losesInfo) &
          llvm::APFloat::opOverflow)
        return range;
    }
    return std::nullopt;
  }
  auto [lo, hi] = integerRange(dtype);
  if (!value.isInteger) {
    double v = value.real;
    if (std::isnan(v))
      return "is not a number: " + dtypeName(dtype).str() + " has no NaN";
    if (std::trunc(v) != v && std::isfinite(v))
      return "is not an integer, as " + dtypeName(dtype).str() + " needs";
    // [-2^63, 2^63) holds every int64 and no other double.
    if (!(v >= -0x1p63 && v < 0x1p63))
      return range;
    value = Value::of(static_cast<int64_t>(v));
  }
  if (value.integer < lo || value.integer > hi)
    return range;
  return std::nullopt;
}

/// Stores `value` (which fits, see whyNotFits) into element `i` of `t`.
static void store(Tensor &t, int64_t i, Value value) {
  // Only for integer dtypes, where a double value is a fitting integer.
  auto integer = [&] {
    return value.isInteger ? value.integer : static_cast<int64_t>(value.real);
  };
  switch (t.dtype()) {
  case DType::F32:
    t.data<float>()[i] = static_cast<float>(value.real);
    return;
  case DType::F64:
    t.data<double>()[i] = value.real;
    return;
  case DType::F16:
  case DType::BF16: {
    llvm::APFloat f(value.real);
    bool losesInfo;
    f.convert(halfSemantics(t.dtype()), llvm::APFloat::rmNearestTiesToEven,
              &losesInfo);
    t.data<uint16_t>()[i] =
        static_cast<uint16_t>(f.bitcastToAPInt().getZExtValue());
    return;
  }
  case DType::I1:
    t.data<bool>()[i] = integer() != 0;
    return;
  case DType::I8:
    t.data<int8_t>()[i] = static_cast<int8_t>(integer());
    return;
  case DType::I16:
    t.data<int16_t>()[i] = static_cast<int16_t>(integer());
    return;
  case DType::I32:
    t.data<int32_t>()[i] = static_cast<int32_t>(integer());
    return;
  case DType::I64:
    t.data<int64_t>()[i] = integer();
    return;
  }
}

/// Element `i` of a floating-point tensor.
static double loadFloat(const Tensor &t, int64_t i) {
  switch (t.dtype()) {
  case DType::F32:
    return t.data<float>()[i];
  case DType::F64:
    return t.data<double>()[i];
  case DType::F16:
  case DType::BF16: {
    llvm::APFloat f(halfSemantics(t.dtype()),
                    llvm::APInt(16, t.data<uint16_t>()[i]));
    bool losesInfo;
    f.convert(llvm::APFloat::IEEEdouble(), llvm::APFloat::rmNearestTiesToEven,
              &losesInfo);
    return f.convertToDouble();
  }
  default:
    return NAN;
  }
}

/// Element `i` of an integer tensor, exactly.
static int64_t loadInteger(const Tensor &t, int64_t i) {
  switch (t.dtype()) {
  case DType::I1:
    return t.data<bool>()[i];
  case DType::I8:
    return t.data<int8_t>()[i];
  case DType::I16:
    return t.data<int16_t>()[i];
  case DType::I32:
    return t.data<int32_t>()[i];
  case DType::I64:
    return t.data<int64_t>()[i];
  default:
    return 0;
  }
}

/// The constant `text` of a fill: an integer exactly, else a double.
static std::optional<Value> parseConstant(llvm::StringRef text) {
  int64_t integer;
  if (!text.getAsInteger(10, integer))
    return Value::of(integer);
  double real;
  if (!text.getAsDouble(real))
    return Value::of(real);
  return std::nullopt;
}

/// Tensor `name` of the safetensors file `path` (a checkpoint's parameter
/// or optimizer state).
static llvm::Expected<Tensor> readCheckpointTensor(llvm::StringRef spec,
                                                   llvm::StringRef path,
                                                   llvm::StringRef name) {
  llvm::Expected<data::Safetensors> file = data::readSafetensors(path);
  if (!file)
    return file.takeError();
  if (const Tensor *t = file->find(name))
    return *t;
  std::vector<std::string> names;
  for (const data::NamedTensor &entry : file->tensors)
    names.push_back(entry.name);
  return specError(spec, "no tensor '" + name + "' in " + path + " (it has " +
                             llvm::join(names, ", ") + ")");
}

static llvm::Expected<Tensor> parseArg(llvm::StringRef spec) {
  if (spec.starts_with("@")) {
    llvm::StringRef file = spec.drop_front();
    // @FILE.safetensors:NAME; a file name may hold ':' too, the tensor
    // name is after the last one past the extension.
    size_t ext = file.find(".safetensors:");
    if (ext != llvm::StringRef::npos) {
      llvm::StringRef path = file.take_front(ext + strlen(".safetensors"));
      llvm::StringRef name = file.drop_front(path.size() + 1);
      if (name.empty())
        return specError(spec, "expected @FILE.safetensors:NAME, the name "
                               "of one of its tensors");
      return readCheckpointTensor(spec, path, name);
    }
    if (file.ends_with(".safetensors"))
      return specError(spec, "a safetensors file holds several tensors: "
                             "name one, @FILE.safetensors:NAME");
    return readNpy(file);
  }
  auto [type, fill] = spec.split('=');
  if (fill.empty())
    return specError(spec, "expected DIMSxDTYPE=FILL or @FILE.npy");
  llvm::SmallVector<llvm::StringRef> parts;
  type.split(parts, 'x');
  std::optional<DType> dtype = parseDType(parts.back());
  if (!dtype)
    return specError(spec, "unsupported dtype '" + parts.back() + "'");
  llvm::SmallVector<int64_t> shape;
  for (llvm::StringRef part : llvm::ArrayRef(parts).drop_back()) {
    int64_t d;
    if (part.getAsInteger(10, d) || d < 0)
      return specError(spec, "bad dim '" + part + "'");
    shape.push_back(d);
  }
  // Checked before allocating: the fill may be wrong for a huge shape too.
  auto [kind, seedText] = fill.split(':');
  std::optional<Value> constant;
  if (kind != "zeros" && kind != "ones" && kind != "iota" && kind != "random") {
    if (!(constant = parseConstant(kind)))
      return specError(spec, "unknown fill '" + fill + "'");
    if (std::optional<std::string> why = whyNotFits(*constant, *dtype))
      return specError(spec, "value " + kind + " " + *why);
  }
  unsigned seed = 0;
  if (kind == "random" && !seedText.empty() && seedText.getAsInteger(10, seed))
    return specError(spec, "bad seed '" + seedText + "'");
  llvm::Expected<Tensor> allocated =
      Tensor::allocate(*dtype, shape, "--arg=" + spec);
  if (!allocated)
    return allocated.takeError();
  Tensor &t = *allocated;
  int64_t n = t.numElements();
  if (kind == "iota" && n > 0)
    if (std::optional<std::string> why = whyNotFits(Value::of(n - 1), *dtype))
      return specError(spec,
                       "iota's last value " + llvm::Twine(n - 1) + " " + *why);
  if (constant || kind == "zeros" || kind == "ones") {
    Value v = constant ? *constant : Value::of(int64_t(kind == "ones"));
    for (int64_t i = 0; i < n; ++i)
      store(t, i, v);
  } else if (kind == "iota") {
    for (int64_t i = 0; i < n; ++i)
      store(t, i, Value::of(i));
  } else {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> uniform(-1.0, 1.0);
    // Small integers: 0 to 9, or 0 and 1 for i1.
    std::uniform_int_distribution<int64_t> small(
        0, std::min<int64_t>(9, integerRange(*dtype).second));
    for (int64_t i = 0; i < n; ++i)
      store(t, i,
            isFloatingPoint(*dtype) ? Value::of(uniform(rng))
                                    : Value::of(small(rng)));
  }
  return allocated;
}

static void printTensor(llvm::raw_ostream &os, const Tensor &t) {
  int64_t n = t.numElements();
  int64_t shown = std::min<int64_t>(n, printLimit);
  bool isFloat = isFloatingPoint(t.dtype());
  os << "[";
  for (int64_t i = 0; i < shown; ++i) {
    if (i)
      os << ", ";
    if (isFloat)
      os << llvm::format("%g", loadFloat(t, i));
    else
      os << loadInteger(t, i);
  }
  if (shown < n)
    os << ", ... (" << n << " elements)";
  os << "]";
  if (n > 1 && isFloat) {
    double lo = INFINITY, hi = -INFINITY, sum = 0;
    for (int64_t i = 0; i < n; ++i) {
      double v = loadFloat(t, i);
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
    return fusec::exitCode("run", std::move(e));
  };
  EngineOptions options;
  options.fusion = fusec::fusion;
  options.winograd = fusec::winograd;
  options.threads = fusec::threads();
  options.profile = fusec::profile;
  if (llvm::Error e = fusec::applyPrecision(options.trainStep))
    return fail(std::move(e));
  CompileStats compileStats;
  if (fusec::stats())
    options.compileStats = &compileStats;
  llvm::Expected<std::unique_ptr<Engine>> engine = Engine::create(options);
  if (!engine)
    return fail(engine.takeError());
  if (llvm::Error e = (*engine)->loadFile(input))
    return fail(std::move(e));
  if (entry.empty())
    return fail(llvm::createStringError(
        "--entry is needed: the function to call; the module's functions "
        "are " +
        llvm::join((*engine)->functionNames(), ", ")));
  llvm::Expected<Function &> function = (*engine)->lookup(entry);
  if (!function)
    return fail(llvm::createStringError(
        llvm::toString(function.takeError()) + "; the module's functions are " +
        llvm::join((*engine)->functionNames(), ", ")));
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
  if (fusec::stats()) {
    FunctionStats s = function->stats();
    llvm::outs() << "stats: signatures " << s.signatures << ", misses "
                 << s.misses << ", disk hits " << s.diskHits << ", compile "
                 << llvm::format("%.1f", s.compileMillis) << " ms\n";
    compileStats.print(llvm::outs());
  }
  if (fusec::profile)
    printProfile(llvm::outs(), fuse::profile());
  return 0;
}
