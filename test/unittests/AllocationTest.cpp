//===- AllocationTest.cpp - Steady-state training steps allocate nothing --===//
//
// This binary replaces malloc and its relatives with counting wrappers
// around glibc's own (operator new and the JIT-compiled code's malloc calls
// land here too). After warm-up calls (compilation, the workspace, the
// engine's reused buffers), a training step called through callInto
// (forward, backward, and an Adam update of the parameters and states in
// place) must not allocate at all. Sanitizer builds replace malloc
// themselves, so there the test is skipped.
//
//===----------------------------------------------------------------------===//

#include "TestUtils.h"

#include "fuse/Trainer.h"

#include <atomic>
#include <cmath>
#include <cstdlib>

#if defined(__SANITIZE_ADDRESS__)
#define FUSE_COUNT_ALLOCATIONS 0
#else
#define FUSE_COUNT_ALLOCATIONS 1
#endif

namespace {
std::atomic<bool> counting{false};
std::atomic<long> allocations{0};
void note() {
  if (counting.load(std::memory_order_relaxed))
    allocations.fetch_add(1, std::memory_order_relaxed);
}
} // namespace

#if FUSE_COUNT_ALLOCATIONS
extern "C" {
void *__libc_malloc(size_t size);
void *__libc_calloc(size_t count, size_t size);
void *__libc_realloc(void *pointer, size_t size);
void *__libc_memalign(size_t alignment, size_t size);
void __libc_free(void *pointer);

void *malloc(size_t size) {
  note();
  return __libc_malloc(size);
}
void *calloc(size_t count, size_t size) {
  note();
  return __libc_calloc(count, size);
}
void *realloc(void *pointer, size_t size) {
  note();
  return __libc_realloc(pointer, size);
}
void *memalign(size_t alignment, size_t size) {
  note();
  return __libc_memalign(alignment, size);
}
void *aligned_alloc(size_t alignment, size_t size) {
  note();
  return __libc_memalign(alignment, size);
}
int posix_memalign(void **out, size_t alignment, size_t size) {
  note();
  void *pointer = __libc_memalign(alignment, size);
  if (!pointer)
    return ENOMEM;
  *out = pointer;
  return 0;
}
void free(void *pointer) { __libc_free(pointer); }
}
#endif

using namespace fuse;
using namespace fuse::testing;

namespace {

TEST(Allocation, SteadyStateTrainingStepAllocatesNothing) {
  if (!FUSE_COUNT_ALLOCATIONS)
    GTEST_SKIP() << "the sanitizers replace malloc";
  auto engine = makeEngine(seedTrainingModule());
  Function &train = unwrap(engine->lookup("train"));
  const std::vector<std::vector<int64_t>> shapes = {
      {784, 128}, {128}, {128, 10}, {10}};
  std::vector<Tensor> args;
  for (int j = 0; j < 4; ++j)
    args.push_back(randomTensor(shapes[j], j, -0.05f, 0.05f));
  for (int j = 0; j < 8; ++j)
    args.push_back(Tensor::zeros(DType::F32, shapes[j % 4]));
  constexpr int64_t kBatch = 16;
  args.push_back(randomTensor({kBatch, 28, 28}, 99, 0, 1));
  Tensor labels = Tensor::empty(DType::I32, {kBatch});
  for (int64_t i = 0; i < kBatch; ++i)
    labels.data<int32_t>()[i] = i % 10;
  args.push_back(labels);
  args.push_back(Tensor::fromValues<float>({}, {1e-3f}));
  args.push_back(Tensor::fromValues<int64_t>({}, {0}));
  int64_t &step = args.back().data<int64_t>()[0];
  // The loss has its own buffer; the updated parameters and states are in
  // their arguments, so their result tensors stay empty.
  std::vector<Tensor> results(13);
  results[0] = Tensor::zeros(DType::F32, {});
  float &loss = results[0].data<float>()[0];

  for (; step < 3; ++step)
    ASSERT_FALSE(bool(train.callInto(args, results)));
  float first = loss;
  // The counter sees allocations: call() allocates its loss tensor.
  counting = true;
  llvm::Expected<std::vector<Tensor>> owned = train.call(args);
  counting = false;
  ASSERT_TRUE(bool(owned));
  ++step;
  EXPECT_GT(allocations.load(), 0);
  allocations = 0;
  counting = true;
  for (int i = 0; i < 20; ++i, ++step)
    if (train.callInto(args, results)) {
      counting = false;
      FAIL() << "call failed";
    }
  counting = false;
  EXPECT_EQ(allocations.load(), 0) << "heap allocations in 20 steady steps";
  EXPECT_TRUE(std::isfinite(loss));
  EXPECT_LT(loss, first) << "20 Adam steps on one batch reduce its loss";
}

// The Trainer's steady state: K = 8 steps per call of the K-step function,
// per-step losses into its own buffer, the callback fed; no allocation.
TEST(Allocation, SteadyStateTrainerCallAllocatesNothing) {
  if (!FUSE_COUNT_ALLOCATIONS)
    GTEST_SKIP() << "the sanitizers replace malloc";
  auto engine = makeEngine(seedTrainingModule());
  std::unique_ptr<Trainer> trainer = unwrap(Trainer::create(*engine, "train"));
  ASSERT_FALSE(bool(
      trainer->setState("w1", randomTensor({784, 128}, 1, -0.05f, 0.05f))));
  ASSERT_FALSE(
      bool(trainer->setState("w2", randomTensor({128, 10}, 2, -0.05f, 0.05f))));
  ASSERT_FALSE(
      bool(trainer->setInput("lr", Tensor::fromValues<float>({}, {1e-3f}))));
  constexpr int64_t kSteps = 8, kBatch = 16;
  Tensor x = randomTensor({kSteps, kBatch, 28, 28}, 99, 0, 1);
  Tensor y = Tensor::empty(DType::I32, {kSteps, kBatch});
  for (int64_t i = 0; i < kSteps * kBatch; ++i)
    y.data<int32_t>()[i] = i % 10;
  float last = 0;
  int64_t reported = 0;
  trainer->setCallback([&](const StepsReport &report) {
    last = report.losses.back();
    reported = report.completedSteps();
  });
  for (int i = 0; i < 2; ++i)
    ASSERT_FALSE(bool(trainer->trainSteps({x, y})));
  allocations = 0;
  counting = true;
  for (int i = 0; i < 10; ++i)
    if (trainer->trainSteps({x, y})) {
      counting = false;
      FAIL() << "call failed";
    }
  counting = false;
  EXPECT_EQ(allocations.load(), 0) << "heap allocations in 10 steady calls";
  EXPECT_EQ(reported, 12 * kSteps);
  EXPECT_TRUE(std::isfinite(last));
}

// The seed CNN's steady state, direct and Winograd convolutions: the
// threads' blocks (blocks of images, groups of images with partial filter
// gradients, the image loops' scratch buffers per block) take workspace or
// stack buffers, never the heap.
TEST(Allocation, SteadyStateCnnTrainerCallAllocatesNothing) {
  if (!FUSE_COUNT_ALLOCATIONS)
    GTEST_SKIP() << "the sanitizers replace malloc";
  for (bool winograd : {false, true}) {
    EngineOptions options;
    options.winograd = winograd;
    auto engine = makeEngine(readExample("cnn.mlir"), options);
    std::unique_ptr<Trainer> trainer =
        unwrap(Trainer::create(*engine, "train"));
    ASSERT_FALSE(bool(trainer->initialize(1)));
    ASSERT_FALSE(
        bool(trainer->setInput("lr", Tensor::fromValues<float>({}, {1e-3f}))));
    constexpr int64_t kSteps = 2, kBatch = 16;
    Tensor x = randomTensor({kSteps, kBatch, 28, 28, 1}, 99, 0, 1);
    Tensor y = Tensor::empty(DType::I32, {kSteps, kBatch});
    for (int64_t i = 0; i < kSteps * kBatch; ++i)
      y.data<int32_t>()[i] = i % 10;
    // (Built once: copying a 5-D shape into an initializer list allocates.)
    std::vector<Tensor> batch = {x, y};
    for (int i = 0; i < 2; ++i)
      ASSERT_FALSE(bool(trainer->trainSteps(batch)));
    allocations = 0;
    counting = true;
    for (int i = 0; i < 3; ++i)
      if (trainer->trainSteps(batch)) {
        counting = false;
        FAIL() << "call failed";
      }
    counting = false;
    EXPECT_EQ(allocations.load(), 0) << "heap allocations in 3 steady calls"
                                     << (winograd ? " with Winograd" : "");
  }
}

} // namespace
