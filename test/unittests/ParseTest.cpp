//===- ParseTest.cpp - User text never overflows the parser's stack -------===//

#include "TestUtils.h"

#include "fuse/Parse.h"

#include "llvm/Support/thread.h"

#include <gtest/gtest.h>

#include <string>

using namespace fuse;
using namespace fuse::testing;

namespace {

std::string repeat(llvm::StringRef text, unsigned times) {
  std::string out;
  for (unsigned i = 0; i < times; ++i)
    out += text;
  return out;
}

TEST(Parse, NestingIsMeasuredAcrossBracketsAndOperators) {
  EXPECT_EQ(
      findExcessiveNesting(repeat("[", kMaxNesting) + repeat("]", kMaxNesting)),
      std::nullopt);
  EXPECT_EQ(findExcessiveNesting("x = " + repeat("(", kMaxNesting + 1)),
            size_t(4 + kMaxNesting));
  // Mixed brackets count together; closing ones give levels back.
  EXPECT_EQ(findExcessiveNesting(repeat("{<", kMaxNesting / 2) + "[" +
                                 repeat(">}", kMaxNesting / 2)),
            size_t(kMaxNesting));
  EXPECT_EQ(findExcessiveNesting(repeat("(a)", 5000) + repeat("{}", 5000)),
            std::nullopt);
  // One expression's operators, with or without brackets around terms.
  EXPECT_TRUE(findExcessiveNesting("(" + repeat("- ", kMaxNesting) + "d0)"));
  EXPECT_TRUE(findExcessiveNesting(repeat("(d0) + ", kMaxNesting + 1) + "d0"));
  EXPECT_FALSE(findExcessiveNesting(repeat("(d0) + ", kMaxNesting) + "d0"));
  EXPECT_TRUE(
      findExcessiveNesting(repeat("d0 floordiv ", kMaxNesting + 1) + "2"));
  EXPECT_TRUE(
      findExcessiveNesting(repeat("(d0 + ", 600) + "d0" + repeat(")", 600)));
}

TEST(Parse, OrdinarySyntaxIsNotNesting) {
  // Separators end expressions: lists of negative numbers, ops, types.
  EXPECT_EQ(
      findExcessiveNesting("dense<[" + repeat("-1.5e-05, ", 10000) + "-1]>"),
      std::nullopt);
  EXPECT_EQ(findExcessiveNesting(
                "func.func @f() {\n" +
                repeat("  %c-1 = arith.constant -1.0 : f32\n", 5000) + "}"),
            std::nullopt);
  EXPECT_EQ(findExcessiveNesting(repeat("(tensor<4x3xf32>) -> (i1) ", 5000) +
                                 repeat("affine_set<(d0) : (d0 >= 0)> ", 5000)),
            std::nullopt);
  // Strings and comments are skipped.
  EXPECT_EQ(findExcessiveNesting("\"" + repeat("([{<- \\\"", 5000) + "\""),
            std::nullopt);
  EXPECT_EQ(findExcessiveNesting("// " + repeat("((((+", 5000) + "\nx"),
            std::nullopt);
}

TEST(Parse, EngineRefusesDeepInputWithItsLocation) {
  auto engine = unwrap(Engine::create(EngineOptions{}));
  std::string deep = "func.func @f() attributes {x = " + repeat("[", 200000) +
                     repeat("]", 200000) + "} { return }";
  std::string error = errorOf(engine->loadString(deep, "deep.mlir"));
  EXPECT_NE(error.find("deep.mlir:1:1031: error: input nests more than 1000 "
                       "levels deep"),
            std::string::npos)
      << error.substr(0, 300);
}

TEST(Parse, DeepInputBelowTheLimitLoadsOnASmallStack) {
  // The parse runs on a thread of its own: a caller's small stack (here
  // 512 KB, a common thread default elsewhere) is not what it uses.
  std::string source = "func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> "
                       "attributes {x = " +
                       repeat("[", 950) + repeat("]", 950) +
                       "} {\n  return %x : tensor<2xf32>\n}\n";
  std::string error = "not run";
  llvm::thread caller(std::optional<unsigned>(512u << 10), [&] {
    EngineOptions options;
    options.diskCache = false;
    auto engine = Engine::create(options);
    if (!engine) {
      error = llvm::toString(engine.takeError());
      return;
    }
    error = errorOf((*engine)->loadString(source));
  });
  caller.join();
  EXPECT_EQ(error, "");
}

} // namespace
