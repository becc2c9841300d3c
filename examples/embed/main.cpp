//===- main.cpp - A minimal program embedding Fuse ------------------------===//
//
// Loads an affine layer `y = x @ w + b` written in the fuse dialect, calls it
// twice with the same signature, checks the numbers against plain C++ and
// checks that the second call reused the first call's compiled code.
//
// Exits non-zero on any mismatch or error.
//
//===----------------------------------------------------------------------===//

#include "fuse/Engine.h"
#include "fuse/Tensor.h"
#include "fuse/Version.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstdint>
#include <memory>
#include <vector>

namespace {

constexpr const char *kAffine = R"mlir(
func.func @affine(%x: tensor<?x4xf32>, %w: tensor<4x3xf32>, %b: tensor<3xf32>)
    -> tensor<?x3xf32> {
  %y = fuse.matmul %x, %w : (tensor<?x4xf32>, tensor<4x3xf32>) -> tensor<?x3xf32>
  %z = fuse.add %y, %b : (tensor<?x3xf32>, tensor<3xf32>) -> tensor<?x3xf32>
  return %z : tensor<?x3xf32>
}
)mlir";

constexpr int64_t kBatch = 2, kIn = 4, kOut = 3;

/// A row-major `rows` x `cols` matrix with values from `seed`.
std::vector<float> makeValues(int64_t rows, int64_t cols, float seed) {
  std::vector<float> values;
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)
      values.push_back(seed * float(i + 1) - 0.25f * float(j) + 0.125f);
  return values;
}

/// y = x @ w + b in plain C++.
std::vector<float> affineReference(const std::vector<float> &x,
                                   const std::vector<float> &w,
                                   const std::vector<float> &b) {
  std::vector<float> y(kBatch * kOut);
  for (int64_t i = 0; i < kBatch; ++i)
    for (int64_t j = 0; j < kOut; ++j) {
      float sum = b[j];
      for (int64_t k = 0; k < kIn; ++k)
        sum += x[i * kIn + k] * w[k * kOut + j];
      y[i * kOut + j] = sum;
    }
  return y;
}

/// Calls `affine` on `x`, prints the result and checks it against plain C++.
llvm::Error callAndCheck(fuse::Function &affine, int call,
                         const std::vector<float> &x,
                         const std::vector<float> &w,
                         const std::vector<float> &b) {
  fuse::Tensor tx = fuse::Tensor::fromValues<float>({kBatch, kIn}, x);
  fuse::Tensor tw = fuse::Tensor::fromValues<float>({kIn, kOut}, w);
  fuse::Tensor tb = fuse::Tensor::fromValues<float>({kOut}, b);
  llvm::Expected<std::vector<fuse::Tensor>> results = affine.call({tx, tw, tb});
  if (!results)
    return results.takeError();
  if (results->size() != 1)
    return llvm::createStringError("expected 1 result, got " +
                                   llvm::Twine(results->size()));
  const fuse::Tensor &y = (*results)[0];
  if (y.dtype() != fuse::DType::F32 ||
      y.shape() != llvm::ArrayRef<int64_t>({kBatch, kOut}))
    return llvm::createStringError("unexpected result type " + y.typeString());

  std::vector<float> expected = affineReference(x, w, b);
  unsigned mismatches = 0;
  llvm::outs() << "call " << call << ": y = x @ w + b\n";
  for (int64_t i = 0; i < kBatch; ++i) {
    llvm::outs() << "  [";
    for (int64_t j = 0; j < kOut; ++j) {
      float got = y.at<float>({i, j});
      float want = expected[i * kOut + j];
      bool ok = std::fabs(got - want) <= 1e-5f * (1.0f + std::fabs(want));
      mismatches += !ok;
      llvm::outs() << llvm::format(" %9.5f", got);
      if (!ok)
        llvm::outs() << llvm::format(" (expected %.5f)", want);
    }
    llvm::outs() << " ]\n";
  }
  if (mismatches)
    return llvm::createStringError("call " + llvm::Twine(call) + ": " +
                                   llvm::Twine(mismatches) +
                                   " elements differ from plain C++");
  return llvm::Error::success();
}

llvm::Error run() {
  fuse::EngineOptions options;
  options.diskCache = false;
  llvm::Expected<std::unique_ptr<fuse::Engine>> engine =
      fuse::Engine::create(options);
  if (!engine)
    return engine.takeError();
  if (llvm::Error err = (*engine)->loadString(kAffine, "affine.mlir"))
    return err;
  llvm::Expected<fuse::Function &> affine = (*engine)->lookup("affine");
  if (!affine)
    return affine.takeError();

  std::vector<float> w = makeValues(kIn, kOut, 0.5f);
  std::vector<float> b = {0.5f, -1.0f, 2.0f};

  // The first call compiles a specialization for x: tensor<2x4xf32>.
  if (llvm::Error err =
          callAndCheck(*affine, 1, makeValues(kBatch, kIn, 1.5f), w, b))
    return err;
  fuse::FunctionStats first = affine->stats();
  if (first.misses != 1 || first.hits != 0)
    return llvm::createStringError(
        "first call: expected 1 miss and 0 hits, got " +
        llvm::Twine(first.misses) + " and " + llvm::Twine(first.hits));

  // Same signature, new values: served by the compiled specialization.
  if (llvm::Error err =
          callAndCheck(*affine, 2, makeValues(kBatch, kIn, -0.75f), w, b))
    return err;
  fuse::FunctionStats second = affine->stats();
  if (second.hits != 1 || second.misses != 1 || second.signatures != 1)
    return llvm::createStringError(
        "second call was not a cache hit: " + llvm::Twine(second.hits) +
        " hits, " + llvm::Twine(second.misses) + " misses, " +
        llvm::Twine(second.signatures) + " signatures");

  llvm::outs() << "second call was a cache hit (" << second.signatures
               << " signature, " << second.misses << " miss, " << second.hits
               << " hit, " << llvm::format("%.1f", second.compileMillis)
               << " ms compiling)\n";
  return llvm::Error::success();
}

} // namespace

int main() {
  llvm::outs() << "Fuse " << FUSE_VERSION << " embed example\n";
  if (llvm::Error err = run()) {
    llvm::outs().flush();
    llvm::errs() << "fuse-embed-example: error: "
                 << llvm::toString(std::move(err)) << "\n";
    return 1;
  }
  llvm::outs() << "OK\n";
  return 0;
}
