//===- TestUtils.h - Helpers for tests that JIT real code -------*- C++ -*-===//

#ifndef FUSE_TEST_UNITTESTS_TESTUTILS_H
#define FUSE_TEST_UNITTESTS_TESTUTILS_H

#include "fuse/Engine.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/FileSystem.h"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace fuse::testing {

/// Unwraps an Expected, failing the test with its message.
template <typename T> T unwrap(llvm::Expected<T> value) {
  if (!value) {
    ADD_FAILURE() << llvm::toString(value.takeError());
    std::abort();
  }
  return std::move(*value);
}
template <typename T> T &unwrap(llvm::Expected<T &> value) {
  if (!value) {
    ADD_FAILURE() << llvm::toString(value.takeError());
    std::abort();
  }
  return *value;
}

/// The message of an expected error ("" when there was none).
template <typename T> std::string errorOf(llvm::Expected<T> value) {
  if (value)
    return "";
  return llvm::toString(value.takeError());
}
inline std::string errorOf(llvm::Error error) {
  return error ? llvm::toString(std::move(error)) : "";
}

/// An engine without the disk cache, so tests compile for real.
inline std::unique_ptr<Engine> makeEngine(llvm::StringRef source,
                                          EngineOptions options = {}) {
  options.diskCache = false;
  std::unique_ptr<Engine> engine = unwrap(Engine::create(options));
  if (llvm::Error e = engine->loadString(source)) {
    ADD_FAILURE() << llvm::toString(std::move(e));
    std::abort();
  }
  return engine;
}

/// A fresh directory (a disk cache's, say), removed at the end.
struct TempDir {
  llvm::SmallString<128> path;
  TempDir() {
    if (llvm::sys::fs::createUniqueDirectory("fuse-test", path))
      std::abort();
  }
  ~TempDir() { llvm::sys::fs::remove_directories(path); }
  std::vector<std::string> files() const {
    std::vector<std::string> out;
    std::error_code ec;
    for (llvm::sys::fs::directory_iterator it(path, ec), end; it != end && !ec;
         it.increment(ec))
      out.push_back(it->path());
    return out;
  }
};

/// Uniform random f32 values in [lo, hi).
inline Tensor randomTensor(llvm::ArrayRef<int64_t> shape, unsigned seed,
                           float lo = -1.0f, float hi = 1.0f) {
  return Tensor::uniform(shape, seed, lo, hi);
}

/// The text of examples/`name`.
inline std::string readExample(const std::string &name) {
  std::ifstream file(std::string(FUSE_SOURCE_DIR "/examples/") + name);
  std::stringstream source;
  source << file.rdbuf();
  return source.str();
}

/// The seed model, examples/mlp.mlir, with its Adam training step `@train`
/// (which fuse-wrap-steps gives a K-step companion `@train_steps`).
inline std::string seedTrainingModule() { return readExample("mlp.mlir"); }

/// The small classifier (x [5, 6] -> 4 classes, Adam's six tensors) that
/// the training and schedule tests step through.
namespace tiny {

constexpr int64_t kBatch = 5;

/// The batch of step `step`: x [kBatch, 6], y [kBatch].
inline Tensor batchX(int64_t step) {
  return randomTensor({kBatch, 6}, 100 + step);
}
inline Tensor batchY(int64_t step) {
  Tensor y = Tensor::empty(DType::I32, {kBatch});
  for (int64_t i = 0; i < kBatch; ++i)
    y.data<int32_t>()[i] = (step + 3 * i) % 4;
  return y;
}

/// Steps [first, first + k) stacked along a new dim 0.
inline Tensor stack(int64_t first, int64_t k, Tensor (*batch)(int64_t)) {
  Tensor one = batch(first);
  llvm::SmallVector<int64_t> shape = {k};
  llvm::append_range(shape, one.shape());
  Tensor stacked = Tensor::empty(one.dtype(), shape);
  size_t bytes = one.numElements() * byteWidth(one.dtype());
  for (int64_t i = 0; i < k; ++i)
    std::memcpy(static_cast<char *>(stacked.data()) + i * bytes,
                batch(first + i).data(), bytes);
  return stacked;
}

/// Adam's parameters and states.
inline std::vector<Tensor> initialState() {
  return {randomTensor({6, 4}, 1),           randomTensor({4}, 2),
          Tensor::zeros(DType::F32, {6, 4}), Tensor::zeros(DType::F32, {4}),
          Tensor::zeros(DType::F32, {6, 4}), Tensor::zeros(DType::F32, {4})};
}

} // namespace tiny

} // namespace fuse::testing

#endif // FUSE_TEST_UNITTESTS_TESTUTILS_H
