//===- EngineTest.cpp - The embed API: calls, caching, errors -------------===//

#include "TestUtils.h"

#include "fuse/Profile.h"
#include "fuse/Trainer.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"

#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <thread>

#if defined(__x86_64__)
#include <xmmintrin.h>
#endif

using namespace fuse;
using namespace fuse::testing;

namespace {

constexpr const char *kAffine = R"mlir(
func.func @affine(%x: tensor<?x4xf32>, %w: tensor<4x3xf32>, %b: tensor<3xf32>)
    -> tensor<?x3xf32> {
  %y = fuse.matmul %x, %w : (tensor<?x4xf32>, tensor<4x3xf32>) -> tensor<?x3xf32>
  %z = fuse.add %y, %b : (tensor<?x3xf32>, tensor<3xf32>) -> tensor<?x3xf32>
  return %z : tensor<?x3xf32>
}
)mlir";

TEST(Engine, CallsAndChecksNumbers) {
  auto engine = makeEngine(kAffine);
  Function &f = unwrap(engine->lookup("affine"));
  EXPECT_EQ(f.numArguments(), 3u);
  EXPECT_EQ(f.argumentNames()[0], "x");
  Tensor x = randomTensor({5, 4}, 1);
  Tensor w = randomTensor({4, 3}, 2);
  Tensor b = randomTensor({3}, 3);
  std::vector<Tensor> results = unwrap(f.call({x, w, b}));
  ASSERT_EQ(results.size(), 1u);
  ASSERT_EQ(results[0].shape(), llvm::ArrayRef<int64_t>({5, 3}));
  for (int64_t i = 0; i < 5; ++i)
    for (int64_t j = 0; j < 3; ++j) {
      float expected = b.data<float>()[j];
      for (int64_t k = 0; k < 4; ++k)
        expected += x.at<float>({i, k}) * w.at<float>({k, j});
      EXPECT_NEAR(results[0].at<float>({i, j}), expected, 1e-5f);
    }
}

TEST(Engine, ProfileTimesEveryOperation) {
  Tensor x = randomTensor({5, 4}, 1);
  Tensor w = randomTensor({4, 3}, 2);
  Tensor b = randomTensor({3}, 3);
  auto plain = makeEngine(kAffine);
  std::vector<Tensor> expected =
      unwrap(unwrap(plain->lookup("affine")).call({x, w, b}));

  EngineOptions options;
  options.profile = true;
  auto engine = makeEngine(kAffine, options);
  Function &f = unwrap(engine->lookup("affine"));
  resetProfile();
  std::vector<Tensor> results;
  for (int i = 0; i < 3; ++i)
    results = unwrap(f.call({x, w, b}));
  // Timers change no result.
  for (int64_t i = 0; i < 15; ++i)
    EXPECT_EQ(results[0].data<float>()[i], expected[0].data<float>()[i]);

  std::vector<ProfileEntry> entries = profile();
  auto find = [&](llvm::StringRef op) -> const ProfileEntry * {
    for (const ProfileEntry &e : entries)
      if (llvm::StringRef(e.region).starts_with(("affine: " + op).str()))
        return &e;
    return nullptr;
  };
  const ProfileEntry *matmul = find("linalg.matmul 5x3xf32 <string>:");
  ASSERT_NE(matmul, nullptr);
  EXPECT_EQ(matmul->calls, 3u);
  EXPECT_GT(matmul->seconds, 0.0);
  ASSERT_NE(find("linalg.fill 5x3xf32"), nullptr);
  for (size_t i = 1; i < entries.size(); ++i)
    EXPECT_GE(entries[i - 1].seconds, entries[i].seconds);

  resetProfile();
  EXPECT_TRUE(profile().empty());
}

TEST(Engine, CacheHitsCompileNothing) {
  auto engine = makeEngine(kAffine);
  Function &f = unwrap(engine->lookup("affine"));
  Tensor w = randomTensor({4, 3}, 2), b = randomTensor({3}, 3);
  unwrap(f.call({randomTensor({5, 4}, 1), w, b}));
  FunctionStats first = f.stats();
  EXPECT_EQ(first.signatures, 1u);
  EXPECT_EQ(first.misses, 1u);
  EXPECT_EQ(first.hits, 0u);
  EXPECT_GT(first.compileMillis, 0.0);
  for (int i = 0; i < 10; ++i)
    unwrap(f.call({randomTensor({5, 4}, i), w, b}));
  FunctionStats later = f.stats();
  EXPECT_EQ(later.signatures, 1u);
  EXPECT_EQ(later.misses, 1u);
  EXPECT_EQ(later.hits, 10u);
  EXPECT_EQ(later.compileMillis, first.compileMillis);
  // A new batch size is a new signature.
  unwrap(f.call({randomTensor({7, 4}, 1), w, b}));
  EXPECT_EQ(f.stats().signatures, 2u);
  // And the first one is still cached.
  unwrap(f.call({randomTensor({5, 4}, 1), w, b}));
  EXPECT_EQ(f.stats().signatures, 2u);
  EXPECT_EQ(f.stats().hits, 11u);
}

TEST(Engine, RetraceWarningNamesTheChangingDims) {
  std::string warnings;
  llvm::raw_string_ostream os(warnings);
  EngineOptions options;
  options.diskCache = false;
  options.retraceWarningThreshold = 2;
  options.warnings = &os;
  auto engine = unwrap(Engine::create(options));
  ASSERT_FALSE(engine->loadString(kAffine));
  Function &f = unwrap(engine->lookup("affine"));
  Tensor w = randomTensor({4, 3}, 2), b = randomTensor({3}, 3);
  for (int64_t batch : {1, 2, 3, 4, 5})
    unwrap(f.call({randomTensor({batch, 4}, 1), w, b}));
  EXPECT_EQ(f.stats().signatures, 5u);
  EXPECT_NE(warnings.find("'affine' has been specialized for 3 signatures"),
            std::string::npos)
      << warnings;
  EXPECT_NE(warnings.find("Changing: x[0]."), std::string::npos) << warnings;
  // Once only.
  EXPECT_EQ(warnings.find("fuse: warning", 1), std::string::npos) << warnings;
}

void truncateFile(const std::string &file, uint64_t size) {
  auto buffer = llvm::MemoryBuffer::getFile(file);
  ASSERT_TRUE(bool(buffer));
  std::string bytes = (*buffer)->getBuffer().take_front(size).str();
  std::error_code ec;
  llvm::raw_fd_ostream os(file, ec);
  os << bytes;
}

std::unique_ptr<Engine> makeCachedEngine(llvm::StringRef dir) {
  EngineOptions options;
  options.cacheDir = dir.str();
  auto engine = unwrap(Engine::create(options));
  if (llvm::Error e = engine->loadString(kAffine)) {
    ADD_FAILURE() << llvm::toString(std::move(e));
    std::abort();
  }
  return engine;
}

TEST(Engine, DiskCacheSkipsCodegenInANewEngine) {
  TempDir dir;
  Tensor x = randomTensor({5, 4}, 1), w = randomTensor({4, 3}, 2),
         b = randomTensor({3}, 3);
  std::vector<Tensor> expected;
  {
    auto engine = makeCachedEngine(dir.path);
    Function &f = unwrap(engine->lookup("affine"));
    expected = unwrap(f.call({x, w, b}));
    EXPECT_EQ(f.stats().diskHits, 0u);
  }
  ASSERT_EQ(dir.files().size(), 1u);
  auto engine = makeCachedEngine(dir.path);
  Function &f = unwrap(engine->lookup("affine"));
  std::vector<Tensor> results = unwrap(f.call({x, w, b}));
  EXPECT_EQ(f.stats().diskHits, 1u);
  ASSERT_EQ(results[0].shape(), expected[0].shape());
  for (int64_t i = 0; i < results[0].numElements(); ++i)
    EXPECT_EQ(results[0].data<float>()[i], expected[0].data<float>()[i]);
}

TEST(Engine, CorruptCacheEntryIsRecompiled) {
  TempDir dir;
  Tensor x = randomTensor({5, 4}, 1), w = randomTensor({4, 3}, 2),
         b = randomTensor({3}, 3);
  std::vector<Tensor> expected;
  {
    auto engine = makeCachedEngine(dir.path);
    expected = unwrap(unwrap(engine->lookup("affine")).call({x, w, b}));
  }
  ASSERT_EQ(dir.files().size(), 1u);
  std::string file = dir.files().front();
  uint64_t size;
  ASSERT_FALSE(llvm::sys::fs::file_size(file, size));
  for (uint64_t keep : {size / 2, uint64_t(4)}) {
    // Truncate the entry.
    truncateFile(file, keep);
    auto engine = makeCachedEngine(dir.path);
    Function &f = unwrap(engine->lookup("affine"));
    std::vector<Tensor> results = unwrap(f.call({x, w, b}));
    EXPECT_EQ(f.stats().diskHits, 0u);
    EXPECT_EQ(results[0].data<float>()[0], expected[0].data<float>()[0]);
  }
  {
    // Flip one byte of the object: the checksum catches it.
    auto buffer = llvm::MemoryBuffer::getFile(file);
    ASSERT_TRUE(bool(buffer));
    std::string bytes = (*buffer)->getBuffer().str();
    bytes[bytes.size() - 7] ^= 0x5a;
    std::error_code ec;
    llvm::raw_fd_ostream os(file, ec);
    os << bytes;
  }
  auto engine = makeCachedEngine(dir.path);
  Function &f = unwrap(engine->lookup("affine"));
  std::vector<Tensor> results = unwrap(f.call({x, w, b}));
  EXPECT_EQ(f.stats().diskHits, 0u);
  EXPECT_EQ(results[0].data<float>()[0], expected[0].data<float>()[0]);
}

TEST(Engine, TwoThreadsCompileOneSignatureOnce) {
  auto engine = makeEngine(kAffine);
  Function &f = unwrap(engine->lookup("affine"));
  Tensor w = randomTensor({4, 3}, 2), b = randomTensor({3}, 3);
  std::vector<std::vector<Tensor>> results(4);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 20; ++i)
        results[t] = unwrap(f.call({randomTensor({6, 4}, 9), w, b}));
    });
  for (std::thread &t : threads)
    t.join();
  EXPECT_EQ(f.stats().signatures, 1u);
  EXPECT_EQ(f.stats().misses, 1u);
  EXPECT_EQ(f.stats().hits, 79u);
  for (int t = 1; t < 4; ++t)
    for (int64_t i = 0; i < 18; ++i)
      EXPECT_EQ(results[t][0].data<float>()[i], results[0][0].data<float>()[i]);
}

TEST(Engine, ThreadsCallDifferentFunctions) {
  auto engine = makeEngine(std::string(kAffine) + R"mlir(
func.func @double(%x: tensor<?xf32>) -> tensor<?xf32> {
  %y = fuse.add %x, %x : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  return %y : tensor<?xf32>
}
)mlir");
  Function &affine = unwrap(engine->lookup("affine"));
  Function &twice = unwrap(engine->lookup("double"));
  std::thread a([&] {
    for (int64_t n = 1; n <= 4; ++n)
      unwrap(affine.call({randomTensor({n, 4}, 1), randomTensor({4, 3}, 2),
                          randomTensor({3}, 3)}));
  });
  std::thread b([&] {
    for (int64_t n = 1; n <= 4; ++n) {
      Tensor x = randomTensor({n}, 4);
      Tensor y = unwrap(twice.call({x}))[0];
      for (int64_t i = 0; i < n; ++i)
        EXPECT_EQ(y.data<float>()[i], 2 * x.data<float>()[i]);
    }
  });
  a.join();
  b.join();
  EXPECT_EQ(affine.stats().signatures, 4u);
  EXPECT_EQ(twice.stats().signatures, 4u);
}

TEST(Engine, NonContiguousArgumentsAreCopied) {
  auto engine = makeEngine(kAffine);
  Function &f = unwrap(engine->lookup("affine"));
  // x is the transpose of a 4x5 buffer: a strided 5x4 view.
  Tensor buffer = randomTensor({4, 5}, 1);
  Tensor x = Tensor::view(buffer.data(), DType::F32, {5, 4}, {1, 5});
  ASSERT_FALSE(x.isContiguous());
  Tensor w = randomTensor({4, 3}, 2), b = randomTensor({3}, 3);
  Tensor y = unwrap(f.call({x, w, b}))[0];
  Tensor reference = unwrap(f.call({x.contiguousCopy(), w, b}))[0];
  for (int64_t i = 0; i < 15; ++i)
    EXPECT_EQ(y.data<float>()[i], reference.data<float>()[i]);
}

TEST(Engine, CallIntoWritesCallerBuffers) {
  auto engine = makeEngine(kAffine);
  Function &f = unwrap(engine->lookup("affine"));
  Tensor x = randomTensor({5, 4}, 1), w = randomTensor({4, 3}, 2),
         b = randomTensor({3}, 3);
  std::vector<Tensor> out = unwrap(f.allocateResults({x, w, b}));
  ASSERT_FALSE(f.callInto({x, w, b}, out));
  Tensor reference = unwrap(f.call({x, w, b}))[0];
  for (int64_t i = 0; i < 15; ++i)
    EXPECT_EQ(out[0].data<float>()[i], reference.data<float>()[i]);
  Tensor wrong = Tensor::zeros(DType::F32, {3, 5});
  EXPECT_EQ(errorOf(f.callInto({x, w, b}, {wrong})),
            "result #0 of 'affine': expected tensor<5x3xf32>, got "
            "tensor<3x5xf32>");
  EXPECT_EQ(errorOf(f.callInto({x, w, b}, {})),
            "function 'affine' returns 1 results, got 0 result tensors");
}

TEST(Engine, ErrorsNameTheArgument) {
  auto engine = makeEngine(kAffine);
  EXPECT_EQ(errorOf(engine->lookup("nope")),
            "no function named 'nope' is loaded");
  Function &f = unwrap(engine->lookup("affine"));
  Tensor x = randomTensor({5, 4}, 1), w = randomTensor({4, 3}, 2),
         b = randomTensor({3}, 3);
  EXPECT_EQ(errorOf(f.call({x, w})),
            "function 'affine' takes 3 arguments, got 2");
  EXPECT_EQ(errorOf(f.call({x, Tensor::zeros(DType::I32, {4, 3}), b})),
            "argument 'w' (#1) of 'affine': expected tensor<4x3xf32>, got "
            "dtype i32");
  EXPECT_EQ(errorOf(f.call({randomTensor({5, 4, 1}, 1), w, b})),
            "argument 'x' (#0) of 'affine': expected tensor<?x4xf32> of rank "
            "2, got rank 3 (tensor<5x4x1xf32>)");
  EXPECT_EQ(errorOf(f.call({randomTensor({5, 3}, 1), w, b})),
            "argument 'x' (#0) of 'affine': dim 1 is 3, expected 4 "
            "(tensor<?x4xf32>)");
  EXPECT_EQ(errorOf(f.call({Tensor::view(nullptr, DType::F32, {5, 4}), w, b})),
            "argument 'x' (#0) of 'affine' has no data (null pointer)");
  EXPECT_EQ(
      errorOf(f.call({Tensor::view(x.data(), DType::F32, {-1, 4}), w, b})),
      "argument 'x' (#0) of 'affine': dim 0 is negative (-1)");
  // Errors are not cached as signatures.
  EXPECT_EQ(f.stats().signatures, 0u);
  // A zero-sized tensor needs no data.
  std::vector<Tensor> empty =
      unwrap(f.call({Tensor::view(nullptr, DType::F32, {0, 4}), w, b}));
  EXPECT_EQ(empty[0].shape(), llvm::ArrayRef<int64_t>({0, 3}));
}

TEST(Engine, ShapeConflictAtCallTimeIsALocatedError) {
  auto engine = makeEngine(R"mlir(
func.func @loss(%logits: tensor<?x10xf32>, %labels: tensor<?xi32>)
    -> tensor<f32> {
  %l = fuse.softmax_cross_entropy %logits, %labels
      : (tensor<?x10xf32>, tensor<?xi32>) -> tensor<f32>
  return %l : tensor<f32>
}
)mlir");
  Function &f = unwrap(engine->lookup("loss"));
  std::string error = errorOf(
      f.call({randomTensor({4, 10}, 1), Tensor::zeros(DType::I32, {5})}));
  EXPECT_NE(error.find("cannot specialize 'loss' for (tensor<4x10xf32>, "
                       "tensor<5xi32>)"),
            std::string::npos)
      << error;
  EXPECT_NE(error.find("<string>:4:8: error: batch size of labels (5) does "
                       "not match the logits' (4)"),
            std::string::npos)
      << error;
}

TEST(Engine, LoadErrors) {
  auto engine = unwrap(Engine::create());
  EXPECT_EQ(errorOf(engine->loadFile("/no/such/file.mlir")),
            "cannot open '/no/such/file.mlir': No such file or directory");
  std::string error = errorOf(engine->loadString(
      "func.func @f(%x: tensor<4xf32>) {\n  %0 = fuse.bogus %x\n}", "m.mlir"));
  EXPECT_NE(error.find("m.mlir:2:8: error: custom op 'fuse.bogus' is unknown"),
            std::string::npos)
      << error;
  ASSERT_FALSE(engine->loadString(kAffine));
  EXPECT_EQ(errorOf(engine->loadString(kAffine)),
            "function 'affine' is already loaded");
  EXPECT_EQ(errorOf(engine->loadString(R"mlir(
func.func @g(%x: tensor<4xf32>) -> (tensor<?xf32> {fuse.stacked}) {
  %r = fuse.reshape %x : (tensor<4xf32>) -> tensor<?xf32>
  return %r : tensor<?xf32>
})mlir")),
            "function 'g': result #0 is stacked but no argument is: nothing "
            "gives the number of steps");
}

// A load that fails loads none of its functions, even those before the one
// that fails (they would refer to a module that is not kept).
TEST(Engine, FailedLoadLoadsNoFunction) {
  EngineOptions options;
  options.diskCache = false;
  auto engine = unwrap(Engine::create(options));
  EXPECT_TRUE(engine->functionNames().empty());
  EXPECT_EQ(errorOf(engine->loadString(R"mlir(
func.func @ok(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
func.func @g(%x: tensor<4xf32>) -> (tensor<?xf32> {fuse.stacked}) {
  %r = fuse.reshape %x : (tensor<4xf32>) -> tensor<?xf32>
  return %r : tensor<?xf32>
})mlir")),
            "function 'g': result #0 is stacked but no argument is: nothing "
            "gives the number of steps");
  EXPECT_TRUE(engine->functionNames().empty());
  EXPECT_EQ(errorOf(engine->lookup("ok")), "no function named 'ok' is loaded");

  ASSERT_FALSE(engine->loadString(kAffine));
  // @h precedes the clash with the loaded @affine.
  EXPECT_EQ(errorOf(engine->loadString(R"mlir(
func.func @h(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
func.func @affine(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
})mlir")),
            "function 'affine' is already loaded");
  EXPECT_EQ(engine->functionNames(), std::vector<std::string>{"affine"});
  ASSERT_FALSE(engine->loadString(R"mlir(
func.func @ok(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
})mlir"));
  EXPECT_EQ(engine->functionNames(),
            (std::vector<std::string>{"affine", "ok"}));
  Tensor x = randomTensor({4}, 1);
  std::vector<Tensor> results = unwrap(unwrap(engine->lookup("ok")).call({x}));
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].at<float>({3}), x.at<float>({3}));
}

// A stacked argument needs its step dim, checked before the signature.
TEST(Engine, StackedArgumentOfRankZeroIsAnError) {
  auto engine = makeEngine(R"mlir(
func.func @sum(%xs: tensor<?x4xf32> {fuse.stacked}) -> tensor<f32> {
  %s = fuse.reduce_sum %xs {axes = array<i64: 0, 1>} : (tensor<?x4xf32>) -> tensor<f32>
  return %s : tensor<f32>
})mlir");
  Function &sum = unwrap(engine->lookup("sum"));
  EXPECT_EQ(errorOf(sum.call({Tensor::fromValues<float>({}, {1.0f})})),
            "argument 'xs' (#0) of 'sum': stacked along dim 0 (one row per "
            "step), got a 0-d tensor");
}

} // namespace

namespace {

constexpr const char *kInPlaceSgd = R"mlir(
func.func @sgd(%lr: tensor<f32>, %step: tensor<i64>, %p: tensor<5xf32>,
               %g: tensor<5xf32>) -> (tensor<5xf32> {fuse.in_place = 2}) {
  %q = fuse.sgd %lr, %step params(%p : tensor<5xf32>)
      grads(%g : tensor<5xf32>) states() -> tensor<5xf32>
  return %q : tensor<5xf32>
}
// The old value of %p is returned too: the update cannot overwrite it.
func.func @keeps_old(%lr: tensor<f32>, %step: tensor<i64>, %p: tensor<5xf32>,
                     %g: tensor<5xf32>)
    -> (tensor<5xf32> {fuse.in_place = 2}, tensor<5xf32>) {
  %q = fuse.sgd %lr, %step params(%p : tensor<5xf32>)
      grads(%g : tensor<5xf32>) states() -> tensor<5xf32>
  return %q, %p : tensor<5xf32>, tensor<5xf32>
}
)mlir";

std::vector<Tensor> sgdArgs() {
  return {Tensor::fromValues<float>({}, {0.5f}),
          Tensor::fromValues<int64_t>({}, {0}),
          Tensor::fromValues<float>({5}, {1, 2, 3, 4, 5}),
          Tensor::fromValues<float>({5}, {2, 2, 2, 2, 2})};
}

} // namespace

TEST(Engine, InPlaceResultsAreTheirArguments) {
  auto engine = makeEngine(kInPlaceSgd);
  Function &f = unwrap(engine->lookup("sgd"));
  std::vector<Tensor> args = sgdArgs();
  std::vector<Tensor> out = unwrap(f.call(args));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].data(), args[2].data()); // a view of the parameter
  EXPECT_FALSE(out[0].isOwning());
  EXPECT_EQ(args[2].data<float>()[0], 0.0f);
  EXPECT_EQ(args[2].data<float>()[4], 4.0f);
  // callInto with another buffer receives a copy.
  Tensor copy = Tensor::zeros(DType::F32, {5});
  EXPECT_FALSE(f.callInto(args, {copy}));
  EXPECT_EQ(args[2].data<float>()[0], -1.0f);
  EXPECT_EQ(copy.data<float>()[0], -1.0f);
  EXPECT_EQ(copy.data<float>()[4], 3.0f);
}

TEST(Engine, InPlaceArgumentMustBeContiguous) {
  auto engine = makeEngine(kInPlaceSgd);
  Function &f = unwrap(engine->lookup("sgd"));
  std::vector<Tensor> args = sgdArgs();
  float strided[10] = {};
  args[2] = Tensor::view(strided, DType::F32, {5}, {2});
  std::string error = errorOf(f.call(args).takeError());
  EXPECT_NE(error.find("argument 'p' (#2) of 'sgd' is updated in place and "
                       "must be contiguous"),
            std::string::npos)
      << error;
}

TEST(Engine, NotInPlaceIsAWarningNamingTheArgument) {
  std::string warnings;
  llvm::raw_string_ostream os(warnings);
  EngineOptions options;
  options.warnings = &os;
  auto engine = makeEngine(kInPlaceSgd, options);
  Function &f = unwrap(engine->lookup("keeps_old"));
  std::vector<Tensor> args = sgdArgs();
  std::vector<Tensor> out = unwrap(f.call(args));
  EXPECT_NE(warnings.find("warning: argument 'p' (#2) of"), std::string::npos)
      << warnings;
  EXPECT_NE(warnings.find("cannot be updated in place"), std::string::npos)
      << warnings;
  // Still correct: the new value in the argument, the old one returned.
  EXPECT_EQ(args[2].data<float>()[0], 0.0f);
  EXPECT_EQ(out[1].data<float>()[0], 1.0f);
}

#if defined(__x86_64__)
// Compiled code runs with denormals flushed to zero unless told otherwise,
// and the caller's floating-point mode survives the call either way.
TEST(Engine, DenormalsAreFlushedDuringCallsOnly) {
  const char *source = R"mlir(
func.func @half(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c = fuse.constant dense<0.5> : tensor<4xf32>
  %y = fuse.mul %x, %c : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}
)mlir";
  Tensor x = Tensor::fromValues<float>({4}, {FLT_MIN, 1.0f, FLT_MIN, 2.0f});
  // The control bits; the low six are sticky exception flags.
  unsigned mode = _mm_getcsr() & ~0x3Fu;
  for (bool flush : {true, false}) {
    EngineOptions options;
    options.flushDenormals = flush;
    auto engine = makeEngine(source, options);
    Function &half = unwrap(engine->lookup("half"));
    Tensor y = unwrap(half.call({x}))[0];
    EXPECT_EQ(y.data<float>()[0], flush ? 0.0f : FLT_MIN / 2) << flush;
    EXPECT_EQ(y.data<float>()[1], 0.5f);
    EXPECT_EQ(_mm_getcsr() & ~0x3Fu, mode)
        << "the caller's rounding and denormal modes are restored";
  }
}
#endif

//===----------------------------------------------------------------------===//
// Class labels
//===----------------------------------------------------------------------===//

constexpr const char *kCrossEntropy = R"mlir(
func.func @loss(%logits: tensor<?x10xf32>, %y: tensor<?xi32>) -> tensor<f32> {
  %l = fuse.softmax_cross_entropy %logits, %y
      : (tensor<?x10xf32>, tensor<?xi32>) -> tensor<f32>
  return %l : tensor<f32>
}
func.func @loss64(%logits: tensor<?x3xf32>, %y: tensor<?xi64>) -> tensor<f32> {
  %l = fuse.softmax_cross_entropy %logits, %y
      : (tensor<?x3xf32>, tensor<?xi64>) -> tensor<f32>
  return %l : tensor<f32>
}
func.func @loss8(%logits: tensor<?x4xf32>, %y: tensor<?xi8>) -> tensor<f32> {
  %l = fuse.softmax_cross_entropy %logits, %y
      : (tensor<?x4xf32>, tensor<?xi8>) -> tensor<f32>
  return %l : tensor<f32>
}
func.func @any(%logits: tensor<?x?xf32>, %y: tensor<?xi8>) -> tensor<f32> {
  %l = fuse.softmax_cross_entropy %logits, %y
      : (tensor<?x?xf32>, tensor<?xi8>) -> tensor<f32>
  return %l : tensor<f32>
}
func.func @one_based(%logits: tensor<?x?xf32>, %y: tensor<?xi32>)
    -> tensor<f32> {
  %one = fuse.constant dense<1> : tensor<i32>
  %y0 = fuse.sub %y, %one : (tensor<?xi32>, tensor<i32>) -> tensor<?xi32>
  %l = fuse.softmax_cross_entropy %logits, %y0
      : (tensor<?x?xf32>, tensor<?xi32>) -> tensor<f32>
  return %l : tensor<f32>
}
func.func @chosen(%logits: tensor<?x4xf32>, %pick: tensor<?xi1>,
                  %a: tensor<?xi64>, %b: tensor<?xi64>) -> tensor<f32> {
  %y = fuse.select %pick, %a, %b
      : (tensor<?xi1>, tensor<?xi64>, tensor<?xi64>) -> tensor<?xi64>
  %l = fuse.softmax_cross_entropy %logits, %y
      : (tensor<?x4xf32>, tensor<?xi64>) -> tensor<f32>
  return %l : tensor<f32>
}
func.func @grad(%logits: tensor<?x4xf32>, %y: tensor<?xi32>,
                %g: tensor<f32>) -> tensor<?x4xf32> {
  %one = fuse.constant dense<1> : tensor<i32>
  %y0 = fuse.sub %y, %one : (tensor<?xi32>, tensor<i32>) -> tensor<?xi32>
  %d = fuse.softmax_cross_entropy_grad %logits, %y0, %g
      : (tensor<?x4xf32>, tensor<?xi32>, tensor<f32>) -> tensor<?x4xf32>
  return %d : tensor<?x4xf32>
}
)mlir";

// A label outside [0, C) would make cross-entropy read no logit and return
// the row's logsumexp: every call checks the labels first and names the
// argument, the label's position and its value.
TEST(Engine, ClassLabelsAreCheckedBeforeTheCall) {
  auto engine = makeEngine(kCrossEntropy);
  Function &loss = unwrap(engine->lookup("loss"));
  EXPECT_EQ(loss.arguments()[0].classes, 0);
  EXPECT_EQ(loss.arguments()[1].classes, 10);
  Tensor logits = randomTensor({2, 10}, 1);
  EXPECT_EQ(
      errorOf(loss.call({logits, Tensor::fromValues<int32_t>({2}, {3, 10})})),
      "argument 'y' (#1) of 'loss': label [1] is 10, outside [0, 10) "
      "for 10 classes");
  EXPECT_EQ(
      errorOf(loss.call({logits, Tensor::fromValues<int32_t>({2}, {-1, 0})})),
      "argument 'y' (#1) of 'loss': label [0] is -1, outside [0, 10) "
      "for 10 classes");
  // Labels in range: the loss of the two rows.
  std::vector<Tensor> out =
      unwrap(loss.call({logits, Tensor::fromValues<int32_t>({2}, {9, 0})}));
  double expected = 0;
  for (int64_t r = 0; r < 2; ++r) {
    double sum = 0;
    for (int64_t c = 0; c < 10; ++c)
      sum += std::exp(double(logits.data<float>()[r * 10 + c]));
    expected += std::log(sum) - logits.data<float>()[r * 10 + (r ? 0 : 9)];
  }
  EXPECT_NEAR(out[0].data<float>()[0], expected / 2, 1e-5);
  // A strided view is checked through the elements it views (the 10s are
  // between them).
  std::vector<int32_t> spaced = {1, 10, 2, 10};
  Tensor view = Tensor::view(spaced.data(), DType::I32, {2}, {2});
  EXPECT_EQ(errorOf(loss.call({logits, view})), "");

  Function &loss64 = unwrap(engine->lookup("loss64"));
  EXPECT_EQ(errorOf(loss64.call(
                {randomTensor({3, 3}, 2),
                 Tensor::fromValues<int64_t>({3}, {0, 2, int64_t(1) << 40})})),
            "argument 'y' (#1) of 'loss64': label [2] is 1099511627776, "
            "outside [0, 3) for 3 classes");
  Function &loss8 = unwrap(engine->lookup("loss8"));
  EXPECT_EQ(errorOf(loss8.call({randomTensor({2, 4}, 3),
                                Tensor::fromValues<int8_t>({2}, {3, -100})})),
            "argument 'y' (#1) of 'loss8': label [1] is -100, outside [0, 4) "
            "for 4 classes");
}

// A class count dynamic in the declaration is known once the call's shapes
// specialize it: each specialization checks against its own C.
TEST(Engine, ClassLabelsAreCheckedAgainstTheSpecializedClassCount) {
  auto engine = makeEngine(kCrossEntropy);
  Function &any = unwrap(engine->lookup("any"));
  EXPECT_EQ(errorOf(any.call({randomTensor({2, 4}, 1),
                              Tensor::fromValues<int8_t>({2}, {3, 4})})),
            "argument 'y' (#1) of 'any': label [1] is 4, outside [0, 4) "
            "for 4 classes");
  EXPECT_EQ(errorOf(any.call({randomTensor({2, 4}, 1),
                              Tensor::fromValues<int8_t>({2}, {-1, 0})})),
            "argument 'y' (#1) of 'any': label [0] is -1, outside [0, 4) "
            "for 4 classes");
  // Label 4 is a class of a 5-class call.
  std::vector<Tensor> out = unwrap(any.call(
      {randomTensor({2, 5}, 1), Tensor::fromValues<int8_t>({2}, {3, 4})}));
  EXPECT_TRUE(std::isfinite(out[0].data<float>()[0]));
}

// A computed label is no argument the engine can check: a label outside
// [0, C) makes its row's loss NaN (never the row's finite logsumexp), and
// the gradient's row NaN; the other rows are untouched.
TEST(Engine, ComputedLabelsOutsideTheClassesGiveNaN) {
  auto engine = makeEngine(kCrossEntropy);
  Function &oneBased = unwrap(engine->lookup("one_based"));
  EXPECT_EQ(oneBased.arguments()[1].classes, 0);
  Tensor logits = randomTensor({3, 10}, 4);
  for (int32_t bad : {0, 11, 200, INT32_MIN}) {
    std::vector<Tensor> out = unwrap(oneBased.call(
        {logits, Tensor::fromValues<int32_t>({3}, {1, bad, 10})}));
    EXPECT_TRUE(std::isnan(out[0].data<float>()[0])) << bad;
  }
  std::vector<Tensor> good = unwrap(
      oneBased.call({logits, Tensor::fromValues<int32_t>({3}, {1, 5, 10})}));
  EXPECT_TRUE(std::isfinite(good[0].data<float>()[0]));

  Function &chosen = unwrap(engine->lookup("chosen"));
  Tensor pick = Tensor::fromValues<bool>({2}, {true, false});
  Tensor a = Tensor::fromValues<int64_t>({2}, {0, 1});
  EXPECT_TRUE(std::isfinite(
      unwrap(chosen.call({randomTensor({2, 4}, 5), pick, a,
                          Tensor::fromValues<int64_t>({2}, {9, 3})}))[0]
          .data<float>()[0]));
  EXPECT_TRUE(std::isnan(unwrap(chosen.call(
      {randomTensor({2, 4}, 5), pick, a,
       Tensor::fromValues<int64_t>({2}, {0, int64_t(1) << 40})}))[0]
                             .data<float>()[0]));

  // The gradient: row 1's label (5 - 1 = 4) is outside [0, 4).
  Function &grad = unwrap(engine->lookup("grad"));
  Tensor x = randomTensor({3, 4}, 6);
  Tensor d = unwrap(grad.call({x, Tensor::fromValues<int32_t>({3}, {1, 5, 4}),
                               Tensor::fromValues<float>({}, {1.0f})}))[0];
  for (int64_t r = 0; r < 3; ++r) {
    double sum = 0;
    for (int64_t c = 0; c < 4; ++c)
      sum += std::exp(double(x.data<float>()[r * 4 + c]));
    for (int64_t c = 0; c < 4; ++c) {
      float got = d.data<float>()[r * 4 + c];
      if (r == 1) {
        EXPECT_TRUE(std::isnan(got)) << c;
        continue;
      }
      double p = std::exp(double(x.data<float>()[r * 4 + c])) / sum;
      double target = (r == 0 ? 0 : 3) == c ? 1 : 0;
      EXPECT_NEAR(got, (p - target) / 3, 1e-6) << r << ", " << c;
    }
  }
}

// The K-step function's stacked labels are checked too, naming the step
// and the example; the failed call takes no step.
TEST(Engine, StackedClassLabelsAreChecked) {
  auto engine = makeEngine(seedTrainingModule());
  Function &steps = unwrap(engine->lookup("train_steps"));
  int64_t labels = -1;
  for (auto [i, arg] : llvm::enumerate(steps.arguments()))
    if (arg.classes)
      labels = int64_t(i);
  ASSERT_GE(labels, 0);
  EXPECT_EQ(steps.arguments()[labels].name, "y");
  EXPECT_EQ(steps.arguments()[labels].classes, 10);
  EXPECT_EQ(unwrap(engine->lookup("train_eval")).arguments().back().classes,
            10);

  std::unique_ptr<Trainer> trainer = unwrap(Trainer::create(*engine, "train"));
  ASSERT_EQ(errorOf(trainer->initialize(0)), "");
  ASSERT_EQ(
      errorOf(trainer->setInput("lr", Tensor::fromValues<float>({}, {1e-3f}))),
      "");
  Tensor x = Tensor::uniform({2, 3, 28, 28}, 3, 0.0f, 1.0f);
  Tensor y = Tensor::fromValues<int32_t>({2, 3}, {0, 1, 2, 3, 4, 10});
  EXPECT_EQ(errorOf(trainer->trainSteps({x, y})),
            "argument 'y' (#" + std::to_string(labels) +
                ") of 'train_steps': label [1, 2] is 10, outside [0, 10) "
                "for 10 classes");
  EXPECT_EQ(trainer->step(), 0);
  y.data<int32_t>()[5] = 9;
  EXPECT_EQ(errorOf(trainer->trainSteps({x, y})), "");
  EXPECT_EQ(trainer->step(), 2);
}
