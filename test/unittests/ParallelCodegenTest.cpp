//===- ParallelCodegenTest.cpp - One function compiled on several cores ---===//
//
// fuse/ParallelCodegen.h cuts a function between its loop nests (within the
// loop over K of a K-step function), outlines the segments with `noalias`
// pointer parameters, and splits the module into parts compiled on threads.
// On hand-written IR: where it cuts, what it refuses to outline, and that
// every part is a valid module. Through the engine: training the seed CNN
// gives bitwise the same losses and states with parts as without, and
// from a disk cache entry holding every part.
//
//===----------------------------------------------------------------------===//

#include "TestUtils.h"

#include "ObjectCache.h"
#include "fuse/CompileStats.h"
#include "fuse/ParallelCodegen.h"
#include "fuse/Trainer.h"

#include "llvm/Analysis/ValueTracking.h"
#include "llvm/AsmParser/Parser.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

#include "gtest/gtest.h"

#include <cstring>

using namespace fuse;
using namespace fuse::testing;

namespace {

/// Three loop nests in sequence (a[i] = i; b[i] = 2 a[i]; c[i] = a[i] +
/// b[i] + s), wrapped in a loop over k when `stepLoop`. `%s` is computed
/// before the first cut: `extra` defines it.
std::string threeNests(bool stepLoop, const std::string &extra) {
  std::string body = R"ll(
l1:
  %i = phi i64 [ 0, %head ], [ %i1, %l1 ]
  %fi = sitofp i64 %i to float
  %pa = getelementptr float, ptr %a, i64 %i
  store float %fi, ptr %pa, align 4
  %i1 = add i64 %i, 1
  %d1 = icmp slt i64 %i1, %n
  br i1 %d1, label %l1, label %mid1
mid1:
  br label %l2
l2:
  %j = phi i64 [ 0, %mid1 ], [ %j1, %l2 ]
  %qa = getelementptr float, ptr %a, i64 %j
  %va = load float, ptr %qa, align 4
  %vb = fmul float %va, 2.0
  %qb = getelementptr float, ptr %b, i64 %j
  store float %vb, ptr %qb, align 4
  %j1 = add i64 %j, 1
  %d2 = icmp slt i64 %j1, %n
  br i1 %d2, label %l2, label %mid2
mid2:
  br label %l3
l3:
  %m = phi i64 [ 0, %mid2 ], [ %m1, %l3 ]
  %ra = getelementptr float, ptr %a, i64 %m
  %rb = getelementptr float, ptr %b, i64 %m
  %wa = load float, ptr %ra, align 4
  %wb = load float, ptr %rb, align 4
  %sum = fadd float %wa, %wb
  %sum2 = fadd float %sum, %s0
  %rc = getelementptr float, ptr %c, i64 %m
  store float %sum2, ptr %rc, align 4
  %m1 = add i64 %m, 1
  %d3 = icmp slt i64 %m1, %n
  br i1 %d3, label %l3, label %done
)ll";
  std::string text =
      "define void @f(ptr noalias %a, ptr noalias %b, ptr noalias %c, "
      "i64 %n, float %x, ptr %p) {\nentry:\n";
  if (!stepLoop)
    return text + "  br label %head\nhead:\n" + extra + "  br label %l1\n" +
           body + "done:\n  ret void\n}\n";
  return text + "  br label %head\nhead:\n" +
         "  %k = phi i64 [ 0, %entry ], [ %k1, %done ]\n" + extra +
         "  br label %l1\n" + body +
         "done:\n  %k1 = add i64 %k, 1\n"
         "  %dk = icmp slt i64 %k1, 4\n"
         "  br i1 %dk, label %head, label %exit\n"
         "exit:\n  ret void\n}\n";
}

std::unique_ptr<llvm::Module> parse(const std::string &text,
                                    llvm::LLVMContext &context) {
  llvm::SMDiagnostic error;
  std::unique_ptr<llvm::Module> module =
      llvm::parseAssemblyString(text, error, context);
  if (!module)
    ADD_FAILURE() << error.getMessage().str();
  return module;
}

/// The functions `f` calls, in order.
std::vector<std::string> callees(llvm::Function &f) {
  std::vector<std::string> names;
  for (llvm::BasicBlock &block : f)
    for (llvm::Instruction &inst : block)
      if (auto *call = llvm::dyn_cast<llvm::CallInst>(&inst))
        if (llvm::Function *callee = call->getCalledFunction())
          names.push_back(callee->getName().str());
  return names;
}

const char *kScalarInput = "  %s0 = fadd float %x, 1.0\n";

/// `text` with its first `from` replaced by `to` (which must be there).
void replaceFirst(std::string &text, llvm::StringRef from, llvm::StringRef to) {
  size_t at = text.find(from.str());
  ASSERT_NE(at, std::string::npos) << from.str();
  text.replace(at, from.size(), to.str());
}

/// The pointer parameters of `part` (an outlined segment with one call)
/// whose argument in the call is based on `object` and are not noalias,
/// and the others, which are.
struct NoAliasCount {
  unsigned marked = 0, unmarked = 0;
};
NoAliasCount countNoAlias(llvm::Function &part, llvm::StringRef object) {
  auto *call = llvm::cast<llvm::CallInst>(part.user_back());
  NoAliasCount count;
  for (llvm::Argument &param : part.args()) {
    if (!param.getType()->isPointerTy())
      continue;
    const llvm::Value *base =
        llvm::getUnderlyingObject(call->getArgOperand(param.getArgNo()));
    if (base->getName() == object) {
      EXPECT_FALSE(param.hasNoAliasAttr());
      ++count.unmarked;
    } else {
      EXPECT_TRUE(param.hasNoAliasAttr()) << base->getName().str();
      ++count.marked;
    }
  }
  return count;
}

TEST(ParallelCodegen, CutsBetweenLoopNests) {
  for (bool stepLoop : {false, true}) {
    llvm::LLVMContext context;
    auto module = parse(threeNests(stepLoop, kScalarInput), context);
    llvm::Function &f = *module->getFunction("f");
    llvm::SmallVector<llvm::Function *> parts = outlineSegments(f, 3);
    ASSERT_EQ(parts.size(), 2u) << "step loop " << stepLoop;
    EXPECT_FALSE(llvm::verifyModule(*module, &llvm::errs()));
    EXPECT_EQ(parts[0]->getName(), "f.part1");
    EXPECT_EQ(parts[1]->getName(), "f.part2");
    EXPECT_EQ(callees(f), (std::vector<std::string>{"f.part1", "f.part2"}));
    for (llvm::Function *part : parts) {
      EXPECT_FALSE(part->hasLocalLinkage());
      // Every pointer parameter is one of f's noalias arguments.
      for (llvm::Argument &param : part->args()) {
        if (param.getType()->isPointerTy()) {
          EXPECT_TRUE(param.hasNoAliasAttr()) << part->getName().str();
        }
      }
    }
    // The scalar computed before the cut from an argument is computed
    // again in the last segment, which takes the argument instead.
    bool recomputed = false;
    for (llvm::BasicBlock &block : *parts[1])
      for (llvm::Instruction &inst : block)
        recomputed |= inst.getName().starts_with("s0");
    EXPECT_TRUE(recomputed);

    // Split: two parts as bitcode, each a valid module in a context of
    // its own; the module keeps declarations of what moved.
    auto bitcode = unwrap(splitOutFunctions(*module, parts));
    ASSERT_EQ(bitcode.size(), 2u);
    EXPECT_FALSE(llvm::verifyModule(*module, &llvm::errs()));
    EXPECT_TRUE(module->getFunction("f.part1")->isDeclaration());
    EXPECT_FALSE(f.isDeclaration());
    for (auto [i, buffer] : llvm::enumerate(bitcode)) {
      llvm::LLVMContext partContext;
      std::unique_ptr<llvm::Module> part =
          unwrap(readPart(*buffer, partContext));
      EXPECT_FALSE(llvm::verifyModule(*part, &llvm::errs()));
      std::string name = "f.part" + std::to_string(i + 1);
      ASSERT_TRUE(part->getFunction(name));
      EXPECT_FALSE(part->getFunction(name)->isDeclaration());
      EXPECT_TRUE(part->getFunction("f")->isDeclaration());
    }
  }
}

TEST(ParallelCodegen, FewerPartsThanAskedWhenTheBodyHasFewerCuts) {
  llvm::LLVMContext context;
  auto module = parse(threeNests(true, kScalarInput), context);
  llvm::Function &f = *module->getFunction("f");
  // Two cut points: at most three segments, two outlined.
  EXPECT_EQ(outlineSegments(f, 8).size(), 2u);
  EXPECT_FALSE(llvm::verifyModule(*module, &llvm::errs()));
  // One part asked: nothing changes.
  llvm::LLVMContext other;
  auto again = parse(threeNests(true, kScalarInput), other);
  EXPECT_TRUE(outlineSegments(*again->getFunction("f"), 1).empty());
  EXPECT_EQ(again->size(), 1u);
}

TEST(ParallelCodegen, VectorsGoThroughMemoryUnknownPointersLoseNoAlias) {
  // A vector loaded before the first cut and used in the last segment (as a
  // value carried across the steps is): it is passed in memory, never as a
  // vector argument; scalars and pointers stay parameters.
  llvm::LLVMContext context;
  std::string vector = "  %v = load <4 x float>, ptr %p, align 16\n"
                       "  %s0 = extractelement <4 x float> %v, i64 0\n";
  std::string text = threeNests(false, vector);
  replaceFirst(text, "%sum2 = fadd float %sum, %s0",
               "%e = extractelement <4 x float> %v, i64 1\n"
               "  %sum2 = fadd float %sum, %e");
  auto module = parse(text, context);
  llvm::Function &f = *module->getFunction("f");
  llvm::SmallVector<llvm::Function *> parts = outlineSegments(f, 3);
  ASSERT_EQ(parts.size(), 2u);
  for (llvm::Argument &param : parts[1]->args()) {
    EXPECT_FALSE(param.getType()->isVectorTy());
    EXPECT_FALSE(param.getType()->isAggregateType());
  }
  EXPECT_FALSE(llvm::verifyModule(*module, &llvm::errs()));

  // `%p` is not noalias: no parameter of a segment it reaches is marked.
  llvm::LLVMContext context2;
  std::string unknown = "  %s0 = fadd float %x, 1.0\n"
                        "  %q = load ptr, ptr %p, align 8\n";
  std::string text2 = threeNests(false, unknown);
  text2.replace(text2.find("%rc = getelementptr float, ptr %c, i64 %m"),
                std::strlen("%rc = getelementptr float, ptr %c, i64 %m"),
                "%rc = getelementptr float, ptr %q, i64 %m");
  auto module2 = parse(text2, context2);
  llvm::SmallVector<llvm::Function *> parts2 =
      outlineSegments(*module2->getFunction("f"), 3);
  ASSERT_EQ(parts2.size(), 2u);
  for (llvm::Argument &param : parts2[1]->args())
    EXPECT_FALSE(param.hasNoAliasAttr());
  for (llvm::Argument &param : parts2[0]->args()) {
    if (param.getType()->isPointerTy()) {
      EXPECT_TRUE(param.hasNoAliasAttr());
    }
  }
  EXPECT_FALSE(llvm::verifyModule(*module2, &llvm::errs()));
}

TEST(ParallelCodegen, TwoPointersIntoOneArgumentLoseNoAliasAlone) {
  // The last segment reads two buffers of one workspace slot (fuse-
  // workspace: views of one noalias argument, `%a` and `%a + 4096`): those
  // two parameters may alias each other and are not marked; `%c`'s still
  // is, being the only pointer into its argument.
  llvm::LLVMContext context;
  std::string extra = "  %s0 = fadd float %x, 1.0\n"
                      "  %a2 = getelementptr i8, ptr %a, i64 4096\n";
  std::string text = threeNests(false, extra);
  replaceFirst(text, "%rb = getelementptr float, ptr %b, i64 %m",
               "%rb = getelementptr float, ptr %a2, i64 %m");
  auto module = parse(text, context);
  llvm::SmallVector<llvm::Function *> parts =
      outlineSegments(*module->getFunction("f"), 3);
  ASSERT_EQ(parts.size(), 2u);
  NoAliasCount count = countNoAlias(*parts[1], "a");
  EXPECT_EQ(count.unmarked, 2u);
  EXPECT_EQ(count.marked, 1u);
  EXPECT_FALSE(llvm::verifyModule(*module, &llvm::errs()));
}

TEST(ParallelCodegen, APlainArgumentLosesNoAliasAlone) {
  // The last segment writes through `%p`, an argument that is not noalias
  // (a buffer of a shared workspace slot): its parameter is not marked;
  // `%a`'s and `%b`'s still are, the caller's arguments being based on
  // none of the others.
  llvm::LLVMContext context;
  std::string text = threeNests(false, kScalarInput);
  replaceFirst(text, "%rc = getelementptr float, ptr %c, i64 %m",
               "%rc = getelementptr float, ptr %p, i64 %m");
  auto module = parse(text, context);
  llvm::SmallVector<llvm::Function *> parts =
      outlineSegments(*module->getFunction("f"), 3);
  ASSERT_EQ(parts.size(), 2u);
  NoAliasCount count = countNoAlias(*parts[1], "p");
  EXPECT_EQ(count.unmarked, 1u);
  EXPECT_EQ(count.marked, 2u);
  EXPECT_FALSE(llvm::verifyModule(*module, &llvm::errs()));
}

TEST(ParallelCodegen, KeepsASegmentWhoseStackOutlivesIt) {
  // An alloca of the middle segment whose address the last one uses: the
  // middle segment's frame would be gone, so it stays in the caller.
  llvm::LLVMContext context;
  std::string text = threeNests(false, kScalarInput);
  replaceFirst(text, "mid2:\n  br label %l3",
               "mid2:\n  %slot = alloca float, align 4\n"
               "  store float 1.0, ptr %slot, align 4\n  br label %l3");
  replaceFirst(text, "done:\n  ret void",
               "done:\n  %back = load float, ptr %slot, align 4\n"
               "  store float %back, ptr %c, align 4\n  ret void");
  auto module = parse(text, context);
  llvm::Function &f = *module->getFunction("f");
  llvm::SmallVector<llvm::Function *> parts = outlineSegments(f, 3);
  // The last segment (from mid2, holding the alloca) is kept; the one
  // before it is outlined.
  ASSERT_EQ(parts.size(), 1u);
  EXPECT_EQ(parts[0]->getName(), "f.part1");
  EXPECT_FALSE(llvm::verifyModule(*module, &llvm::errs()));
}

/// What training the seed CNN leaves: every loss, then every state.
struct Training {
  std::vector<float> losses;
  std::vector<std::vector<char>> states;
};

/// Trains the seed CNN for 2 calls of 2 steps; `cacheDir`, when given, is
/// the engine's disk cache (otherwise none). `diskHits`, when given,
/// receives the K-step function's.
Training trainCnn(bool parallelCodegen, CompileStats *stats,
                  const std::string &cacheDir = {},
                  uint64_t *diskHits = nullptr) {
  EngineOptions options;
  options.parallelCodegen = parallelCodegen;
  options.compileStats = stats;
  std::unique_ptr<Engine> engine;
  if (cacheDir.empty()) {
    engine = makeEngine(readExample("cnn.mlir"), options);
  } else {
    options.cacheDir = cacheDir;
    engine = unwrap(Engine::create(options));
    EXPECT_EQ(errorOf(engine->loadString(readExample("cnn.mlir"))), "");
  }
  std::unique_ptr<Trainer> trainer = unwrap(Trainer::create(*engine, "train"));
  EXPECT_EQ(errorOf(trainer->initialize(1)), "");
  EXPECT_EQ(
      errorOf(trainer->setInput("lr", Tensor::fromValues<float>({}, {1e-3f}))),
      "");
  Training run;
  trainer->setCallback([&](const StepsReport &report) {
    llvm::append_range(run.losses, report.losses);
  });
  for (int64_t call = 0; call < 2; ++call) {
    Tensor x = randomTensor({2, 64, 28, 28, 1}, 10 + call, 0.0f, 1.0f);
    Tensor y = Tensor::zeros(DType::I32, {2, 64});
    for (int64_t i = 0; i < 128; ++i)
      y.data<int32_t>()[i] = int32_t((call * 128 + i) * 7 % 10);
    EXPECT_EQ(errorOf(trainer->trainSteps({x, y})), "");
  }
  if (diskHits)
    *diskHits = unwrap(engine->lookup("train_steps")).stats().diskHits;
  for (const std::string &name : trainer->stateNames()) {
    Tensor state = unwrap(trainer->state(name));
    const char *bytes = static_cast<const char *>(state.data());
    run.states.emplace_back(bytes, bytes + state.numElements() *
                                               byteWidth(state.dtype()));
  }
  return run;
}

TEST(ParallelCodegen, SameBitsAsOneFunction) {
  CompileStats stats;
  Training parts = trainCnn(true, &stats);
  Training whole = trainCnn(false, nullptr);
  // The K-step function was compiled in parts: an O3 phase each.
  size_t optimized = 0;
  for (const CompileStats::Phase &phase : stats.phases)
    if (llvm::StringRef(phase.unit).starts_with("train_steps") &&
        phase.name == "llvm: O3")
      ++optimized;
  EXPECT_GE(optimized, 2u);
  ASSERT_EQ(parts.losses.size(), 4u);
  EXPECT_EQ(parts.losses, whole.losses);
  EXPECT_EQ(parts.states, whole.states);
}

TEST(ParallelCodegen, PartsRoundTripThroughTheDiskCache) {
  // One entry holds every part's object; a second process (engine) links
  // them all from disk and trains to the same bits.
  TempDir dir;
  uint64_t hits = 0;
  Training compiled = trainCnn(true, nullptr, dir.path.str().str(), &hits);
  EXPECT_EQ(hits, 0u);
  size_t most = 0;
  for (const std::string &file : dir.files()) {
    auto bytes = llvm::MemoryBuffer::getFile(file);
    ASSERT_TRUE(bytes);
    auto decoded = ObjectCache::decode((*bytes)->getBuffer());
    ASSERT_TRUE(decoded) << file;
    most = std::max(most, decoded->second.objects.size());
  }
  EXPECT_GE(most, 2u);
  Training loaded = trainCnn(true, nullptr, dir.path.str().str(), &hits);
  EXPECT_EQ(hits, 1u);
  EXPECT_EQ(loaded.losses, compiled.losses);
  EXPECT_EQ(loaded.states, compiled.states);
}

} // namespace
