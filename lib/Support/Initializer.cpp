//===- Initializer.cpp - How parameters start -----------------------------===//

#include "fuse/Initializer.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <random>

using namespace fuse;

namespace {

/// Keras' fans: a matrix is [in, out]; a filter (HWIO) multiplies both by
/// its receptive field; a vector has both equal to its size.
std::pair<double, double> fans(llvm::ArrayRef<int64_t> shape) {
  if (shape.empty())
    return {1, 1};
  if (shape.size() == 1)
    return {double(shape[0]), double(shape[0])};
  double receptive = 1;
  for (int64_t d : shape.drop_back(2))
    receptive *= double(d);
  return {shape[shape.size() - 2] * receptive, shape.back() * receptive};
}

/// Uniform and normal draws defined here rather than by <random>'s
/// distributions, whose results differ between standard libraries.
class Draws {
public:
  explicit Draws(uint64_t seed) : engine_(seed) {}
  /// In [0, 1), 53 random bits.
  double unit() { return double(engine_() >> 11) * 0x1.0p-53; }
  double uniform(double limit) { return (2 * unit() - 1) * limit; }
  /// Standard normal (Box-Muller).
  double normal() {
    double u = 1 - unit(); // in (0, 1]
    return std::sqrt(-2 * std::log(u)) * std::cos(2 * M_PI * unit());
  }
  /// Standard normal redrawn outside [-2, 2], as Keras' TruncatedNormal.
  double truncatedNormal() {
    for (;;)
      if (double z = normal(); std::fabs(z) <= 2)
        return z;
  }

private:
  std::mt19937_64 engine_;
};

// The stddev of a normal truncated at 2 stddevs is 0.8796 of the untruncated
// one; Keras divides by it so the variance is what the scheme asks for.
constexpr double kTruncatedStddev = .87962566103423978;

template <typename T>
void fill(const Initializer &init, T *out, int64_t n,
          llvm::ArrayRef<int64_t> shape, uint64_t seed) {
  using Kind = Initializer::Kind;
  auto [fanIn, fanOut] = fans(shape);
  Draws draws(seed);
  auto uniform = [&](double limit) {
    for (int64_t i = 0; i < n; ++i)
      out[i] = T(draws.uniform(limit));
  };
  auto truncated = [&](double variance) {
    double stddev = std::sqrt(variance) / kTruncatedStddev;
    for (int64_t i = 0; i < n; ++i)
      out[i] = T(draws.truncatedNormal() * stddev);
  };
  auto constant = [&](double value) { std::fill(out, out + n, T(value)); };
  // A dimension of 0 has no elements; the fans do not matter then.
  double fanSum = std::max(fanIn + fanOut, 1.0);
  fanIn = std::max(fanIn, 1.0);
  switch (init.kind) {
  case Kind::Zeros:
    return constant(0);
  case Kind::Ones:
    return constant(1);
  case Kind::Constant:
    return constant(init.scale);
  case Kind::Uniform:
    return uniform(init.scale);
  case Kind::Normal:
    for (int64_t i = 0; i < n; ++i)
      out[i] = T(draws.normal() * init.scale);
    return;
  case Kind::GlorotUniform:
    return uniform(std::sqrt(6 / fanSum));
  case Kind::GlorotNormal:
    return truncated(2 / fanSum);
  case Kind::HeUniform:
    return uniform(std::sqrt(6 / fanIn));
  case Kind::HeNormal:
    return truncated(2 / fanIn);
  }
}

} // namespace

llvm::Expected<Tensor> Initializer::create(DType dtype,
                                           llvm::ArrayRef<int64_t> shape,
                                           uint64_t seed) const {
  // The shape is the model's: as large as it declares.
  llvm::Expected<Tensor> allocated = Tensor::allocate(
      dtype, shape, "its initial value", /*zeroed=*/kind == Kind::Zeros);
  if (!allocated || kind == Kind::Zeros)
    return allocated;
  Tensor &t = *allocated;
  if (dtype == DType::F32)
    fill(*this, t.data<float>(), t.numElements(), shape, seed);
  else if (dtype == DType::F64)
    fill(*this, t.data<double>(), t.numElements(), shape, seed);
  else
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "cannot initialize a tensor of " +
                                       dtypeName(dtype) + " (" + str() +
                                       "): only f32 and f64");
  return allocated;
}

std::string Initializer::str() const {
  static constexpr const char *names[] = {
      "zeros",          "ones",          "constant",   "uniform",  "normal",
      "glorot_uniform", "glorot_normal", "he_uniform", "he_normal"};
  std::string s;
  llvm::raw_string_ostream os(s);
  os << names[static_cast<int>(kind)];
  if (kind == Kind::Constant)
    os << ", value = " << scale;
  else if (kind == Kind::Uniform)
    os << ", limit = " << scale;
  else if (kind == Kind::Normal)
    os << ", stddev = " << scale;
  return s;
}
