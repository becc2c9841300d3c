//===- CompilerTest.cpp - One compile driver for the engine and fusec -----===//
//
// The engine and `fusec --emit=llvm-ir --engine-entry` compile through the
// same driver (fuse/Compiler.h): for the same function, signature and
// options, the LLVM IR after O3 must be the same text.
//
//===----------------------------------------------------------------------===//

#include "TestUtils.h"

#include "fuse/CompileStats.h"
#include "fuse/Engine.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"

#include "gtest/gtest.h"

#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

using namespace fuse;
using namespace fuse::testing;

namespace {

struct Case {
  const char *function;
  /// Argument shapes of the call, per argument name, as fusec's --shape.
  std::vector<std::pair<std::string, std::vector<int64_t>>> shapes;
  bool fusion = true;
  bool profile = false;
  /// The model, under the source tree.
  const char *model = "test/fusec/Inputs/mlp-hidden64.mlir";
};

/// The arguments of `fn` for `c`: zeros of its shapes.
std::vector<Tensor> argumentsFor(Function &fn, const Case &c) {
  std::vector<Tensor> args;
  for (const ArgumentInfo &arg : fn.arguments()) {
    std::vector<int64_t> shape = arg.shape;
    for (const auto &[name, dims] : c.shapes)
      if (name == arg.name)
        shape = dims;
    args.push_back(Tensor::zeros(arg.dtype, shape));
  }
  return args;
}

/// The IR the engine compiles for `c`.
std::string engineIR(const std::string &path, const Case &c) {
  EngineOptions options;
  options.diskCache = false;
  options.fusion = c.fusion;
  options.profile = c.profile;
  // Unfused steps warn of copies; fusec shows them, once is enough.
  options.warnings = &llvm::nulls();
  std::string ir;
  int compiled = 0;
  options.onCompiledIR = [&](llvm::StringRef, llvm::StringRef,
                             llvm::StringRef text) {
    ir = text.str();
    ++compiled;
  };
  std::unique_ptr<Engine> engine = unwrap(Engine::create(options));
  if (llvm::Error e = engine->loadFile(path))
    ADD_FAILURE() << llvm::toString(std::move(e));
  Function &fn = unwrap(engine->lookup(c.function));
  if (llvm::Error e = fn.prepare(argumentsFor(fn, c)))
    ADD_FAILURE() << llvm::toString(std::move(e));
  EXPECT_EQ(compiled, 1);
  return ir;
}

/// The IR `fusec --emit=llvm-ir --engine-entry` prints for `c`.
std::string fusecIR(const std::string &path, const Case &c) {
  llvm::SmallString<128> out;
  if (std::error_code ec =
          llvm::sys::fs::createTemporaryFile("compiler-test", "ll", out)) {
    ADD_FAILURE() << ec.message();
    return {};
  }
  std::vector<std::string> argv = {FUSEC_PATH,
                                   path,
                                   "--emit=llvm-ir",
                                   "--engine-entry",
                                   std::string("--entry=") + c.function,
                                   "-o",
                                   out.str().str()};
  if (!c.fusion)
    argv.push_back("--fusion=false");
  if (c.profile)
    argv.push_back("--profile");
  for (const auto &[name, dims] : c.shapes) {
    std::string spec = "--shape=" + name + "=";
    for (size_t i = 0; i < dims.size(); ++i)
      spec += (i ? "x" : "") + std::to_string(dims[i]);
    argv.push_back(spec);
  }
  std::vector<llvm::StringRef> refs(argv.begin(), argv.end());
  std::string error;
  int status = llvm::sys::ExecuteAndWait(FUSEC_PATH, refs, std::nullopt, {},
                                         /*SecondsToWait=*/0,
                                         /*MemoryLimit=*/0, &error);
  EXPECT_EQ(status, 0) << error;
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> text =
      llvm::MemoryBuffer::getFile(out);
  llvm::sys::fs::remove(out);
  if (!text) {
    ADD_FAILURE() << text.getError().message();
    return {};
  }
  return (*text)->getBuffer().str();
}

class SameIR : public ::testing::TestWithParam<Case> {};

TEST_P(SameIR, EngineAndFusec) {
  std::string path = std::string(FUSE_SOURCE_DIR) + "/" + GetParam().model;
  std::string fromEngine = engineIR(path, GetParam());
  std::string fromFusec = fusecIR(path, GetParam());
  ASSERT_FALSE(fromEngine.empty());
  EXPECT_NE(fromEngine.find("define void @__fuse_entry(ptr"),
            std::string::npos);
  // EXPECT_TRUE, not EXPECT_EQ: a mismatch would print megabytes.
  EXPECT_TRUE(fromEngine == fromFusec)
      << "the engine's IR (" << fromEngine.size() << " bytes) differs from "
      << "fusec's (" << fromFusec.size() << " bytes)";
}

INSTANTIATE_TEST_SUITE_P(
    Compiler, SameIR,
    ::testing::Values(
        // A train step, specialized to a batch of 4.
        Case{"train", {{"x", {4, 28, 28}}, {"y", {4}}}},
        // Its K-step function: the step dim stays dynamic in both.
        Case{"train_steps", {{"x", {2, 4, 28, 28}}, {"y", {2, 4}}}},
        // Options reach both: op by op, with timers.
        Case{"train",
             {{"x", {4, 28, 28}}, {"y", {4}}},
             /*fusion=*/false,
             /*profile=*/true},
        // The seed CNN's K-step function as fit compiles it (batch 32):
        // four parts, each the same IR.
        Case{"train_steps",
             {{"x", {2, 32, 28, 28, 1}}, {"y", {2, 32}}},
             /*fusion=*/true,
             /*profile=*/false,
             "examples/cnn.mlir"}));

/// The engine lowers and compiles each specialization in an MLIR context of
/// its own, so its context is free from the end of the specialization on:
/// a second function's compile, started from the first's `onLowered` (as
/// fit starts the evaluation's), overlaps the first's whole compile, MLIR
/// lowering included, and each gives the code it gives alone.
TEST(CompileContexts, OverlappingCompilesGiveTheSameCode) {
  std::string path =
      std::string(FUSE_SOURCE_DIR) + "/test/fusec/Inputs/mlp-hidden64.mlir";
  Case step{"train", {{"x", {4, 28, 28}}, {"y", {4}}}};
  Case steps{"train_steps", {{"x", {2, 4, 28, 28}}, {"y", {2, 4}}}};
  std::string stepAlone = engineIR(path, step);
  std::string stepsAlone = engineIR(path, steps);
  ASSERT_FALSE(stepAlone.empty());
  ASSERT_FALSE(stepsAlone.empty());

  for (bool onThread : {true, false}) {
    CompileStats stats;
    EngineOptions options;
    options.diskCache = false;
    options.warnings = &llvm::nulls();
    options.compileStats = &stats;
    std::mutex mutex;
    std::map<std::string, std::string> ir;
    options.onCompiledIR = [&](llvm::StringRef name, llvm::StringRef,
                               llvm::StringRef text) {
      std::lock_guard<std::mutex> lock(mutex);
      ir[name.str()] = text.str();
    };
    std::unique_ptr<Engine> engine = unwrap(Engine::create(options));
    ASSERT_FALSE(llvm::errorToBool(engine->loadFile(path)));
    Function &first = unwrap(engine->lookup(step.function));
    Function &second = unwrap(engine->lookup(steps.function));
    std::vector<Tensor> firstArgs = argumentsFor(first, step);
    std::vector<Tensor> secondArgs = argumentsFor(second, steps);
    std::string secondError;
    std::thread other;
    bool firstLoweredBefore = true;
    auto compileSecond = [&] {
      secondError = llvm::toString(second.prepare(secondArgs));
    };
    ASSERT_FALSE(llvm::errorToBool(first.prepare(firstArgs, [&] {
      // Called once the first is specialized: none of its MLIR phases ran.
      {
        std::lock_guard<std::mutex> lock(mutex);
        firstLoweredBefore =
            llvm::any_of(stats.phases, [](const CompileStats::Phase &p) {
              return llvm::StringRef(p.name).starts_with("mlir: simplify");
            });
      }
      // Synchronously: the whole second compile while the first's waits,
      // which needs the engine's context free.
      if (onThread)
        other = std::thread(compileSecond);
      else
        compileSecond();
    })));
    if (other.joinable())
      other.join();
    EXPECT_FALSE(firstLoweredBefore) << "on a thread: " << onThread;
    EXPECT_EQ(secondError, "");
    // EXPECT_TRUE, not EXPECT_EQ: a mismatch would print megabytes.
    EXPECT_TRUE(ir[step.function] == stepAlone) << "on a thread: " << onThread;
    EXPECT_TRUE(ir[steps.function] == stepsAlone)
        << "on a thread: " << onThread;
  }
}

/// EngineOptions::compileStats: every phase of each compile, per function
/// and signature, the module's once; two functions compiled on two threads
/// (their code generation overlaps) each get all of theirs.
TEST(CompileStats, EngineRecordsEveryPhaseOfEachCompile) {
  CompileStats stats;
  EngineOptions options;
  options.diskCache = false;
  options.compileStats = &stats;
  std::unique_ptr<Engine> engine = unwrap(Engine::create(options));
  ASSERT_FALSE(llvm::errorToBool(engine->loadString(R"mlir(
func.func @double(%x: tensor<?xf32>) -> tensor<?xf32> {
  %y = fuse.add %x, %x : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  return %y : tensor<?xf32>
}
func.func @square(%x: tensor<?xf32>) -> tensor<?xf32> {
  %y = fuse.mul %x, %x : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  return %y : tensor<?xf32>
}
)mlir",
                                                    "two.mlir")));
  Function &twice = unwrap(engine->lookup("double"));
  Function &square = unwrap(engine->lookup("square"));
  Tensor x = randomTensor({8}, 1);
  std::thread other([&] { unwrap(square.call({x})); });
  unwrap(twice.call({x}));
  other.join();

  std::vector<std::string> phases = {"specialize",
                                     "mlir: copy to a compile context",
                                     "mlir: simplify",
                                     "mlir: lower-to-linalg",
                                     "mlir: tile-and-vectorize",
                                     "mlir: bufferize",
                                     "mlir: lower-loops",
                                     "mlir: convert-to-llvm",
                                     "mlir: verify",
                                     "llvm: translate to LLVM IR",
                                     "llvm: O3",
                                     "llvm: machine code",
                                     "jit: link"};
  for (const char *unit :
       {"double (tensor<8xf32>)", "square (tensor<8xf32>)"}) {
    std::vector<std::string> seen;
    for (const CompileStats::Phase &phase : stats.phases)
      if (phase.unit == unit && phase.depth == 0)
        seen.push_back(phase.name);
    std::vector<std::string> expected = phases;
    // The target machine is built between translation and O3, then the
    // function is cut into parts (these are too small: one O3 each).
    expected.insert(expected.begin() + 10, "llvm: target machine");
    expected.insert(expected.begin() + 11, "llvm: split");
    EXPECT_EQ(seen, expected) << unit;
  }
  std::vector<std::string> module;
  for (const CompileStats::Phase &phase : stats.phases)
    if (phase.unit == "module two.mlir")
      module.push_back(phase.name);
  EXPECT_EQ(module, (std::vector<std::string>{"parse", "differentiate"}));
  // Passes are listed below their phase.
  EXPECT_TRUE(llvm::any_of(stats.phases, [](const CompileStats::Phase &p) {
    return p.depth == 1 && p.name == "one-shot-bufferize";
  }));
  std::string text;
  llvm::raw_string_ostream os(text);
  stats.print(os);
  EXPECT_NE(text.find("all units: "), std::string::npos);
}

} // namespace
