//===- fuse-fuzz-compile.cpp - libFuzzer over the whole compiler ----------===//
//
// Input: .mlir text. A fresh Engine (disk cache off) parses and verifies it
// and runs the whole-module rewrites (train steps, autodiff); then every
// function it defines is compiled for one concrete signature (each dynamic
// dim 2) and called on zeros. Any error must come back as an llvm::Error;
// a crash, sanitizer report or timeout is a bug. Run with `scripts/fuzz
// compile SECONDS`.
//
//===----------------------------------------------------------------------===//

#include "fuse/Engine.h"
#include "fuse/Tensor.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>

using namespace fuse;

namespace {

/// What the signature gives each dynamic dim (and the step count K).
constexpr int64_t kDynamicDim = 2;

/// The largest tensor any type in the input may describe for the input to
/// be compiled and called: larger ones are legitimate programs, but they
/// would exhaust the fuzzer's memory limit, not find bugs.
constexpr int64_t kMaxTensorBytes = 64 << 20;

/// The bytes of the largest tensor, memref or vector type spelled in `text`
/// (8 bytes an element, dynamic dims kDynamicDim), or none if one
/// overflows. Every type the pipeline works with is spelled in the text or
/// derived from spelled types with the same dims (gradients, K-step
/// stacking along a dynamic dim).
std::optional<int64_t> largestSpelledType(llvm::StringRef text) {
  int64_t largest = 0;
  for (llvm::StringRef keyword : {"tensor<", "memref<", "vector<"}) {
    for (size_t at = text.find(keyword); at != llvm::StringRef::npos;
         at = text.find(keyword, at + 1)) {
      llvm::StringRef rest = text.drop_front(at + keyword.size());
      std::optional<int64_t> bytes = 8;
      // Dims are `N` or `?` (or `[N]` for scalable vectors) followed by 'x'.
      while (true) {
        rest = rest.ltrim(" [");
        int64_t dim = kDynamicDim;
        if (rest.consume_front("?")) {
        } else if (!rest.empty() && llvm::isDigit(rest.front())) {
          size_t digits = rest.find_if_not(llvm::isDigit);
          if (rest.take_front(digits).getAsInteger(10, dim))
            return std::nullopt; // over 64 bits
          rest = rest.drop_front(digits);
        } else {
          break;
        }
        rest = rest.ltrim(" ]");
        if (!rest.consume_front("x"))
          break;
        bytes = llvm::checkedMul(*bytes, dim);
        if (!bytes)
          return std::nullopt;
      }
      largest = std::max(largest, *bytes);
    }
  }
  return largest;
}

[[noreturn]] void fail(const llvm::Twine &message) {
  llvm::errs() << "fuse-fuzz-compile: " << message << "\n";
  llvm::errs().flush();
  std::abort();
}

/// Compiles and calls `function` on zeros of its declared shapes, dynamic
/// dims kDynamicDim. Errors are the expected outcome for most inputs.
void compileAndCall(Function &function) {
  std::vector<Tensor> args;
  int64_t total = 0;
  for (const ArgumentInfo &info : function.arguments()) {
    std::vector<int64_t> shape = info.shape;
    for (int64_t &dim : shape)
      if (dim < 0)
        dim = kDynamicDim;
    std::optional<int64_t> bytes = int64_t(byteWidth(info.dtype));
    for (int64_t dim : shape)
      bytes = bytes ? llvm::checkedMul(*bytes, dim) : std::nullopt;
    std::optional<int64_t> sum =
        bytes ? llvm::checkedAdd(total, *bytes) : std::nullopt;
    if (!sum || *sum > kMaxTensorBytes)
      return;
    total = *sum;
    args.push_back(Tensor::zeros(info.dtype, shape));
  }
  if (llvm::Error e = function.prepare(args)) {
    llvm::consumeError(std::move(e));
    return;
  }
  llvm::Expected<std::vector<Tensor>> results = function.call(args);
  if (!results) {
    llvm::consumeError(results.takeError());
    return;
  }
  if (results->size() != function.numResults())
    fail("'" + function.name() + "' returned " + llvm::Twine(results->size()) +
         " results, declares " + llvm::Twine(function.numResults()));
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef text(reinterpret_cast<const char *>(data), size);
  EngineOptions options;
  options.diskCache = false;
  options.warnings = &llvm::nulls();
  // Both lowerings: element-wise fusion and the op-by-op baseline.
  options.fusion = size % 2 == 0;
  llvm::Expected<std::unique_ptr<Engine>> engine = Engine::create(options);
  if (!engine)
    fail("cannot create an engine: " + llvm::toString(engine.takeError()));

  if (llvm::Error e = (*engine)->loadString(text, "fuzz.mlir")) {
    llvm::consumeError(std::move(e));
    // A module that failed to load leaves nothing callable behind.
    if (!(*engine)->functionNames().empty())
      fail("a failed load left functions loaded");
    return 0;
  }
  std::optional<int64_t> largest = largestSpelledType(text);
  if (!largest || *largest > kMaxTensorBytes)
    return 0;
  for (const std::string &name : (*engine)->functionNames()) {
    llvm::Expected<Function &> function = (*engine)->lookup(name);
    if (!function)
      fail("'" + name + "' is listed but cannot be looked up: " +
           llvm::toString(function.takeError()));
    compileAndCall(*function);
  }
  return 0;
}
