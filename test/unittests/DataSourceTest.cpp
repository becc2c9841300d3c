//===- DataSourceTest.cpp - Data sources and fit over them ----------------===//
//
// TensorDataSource checks its tensors and copies examples by index; a
// source's labels are scanned in blocks when it does not scan them itself.
// fit trains on any source: rank-1 f32 features with i64 labels, several
// labels per example, and the same data through the IDX reader, in-memory
// tensors and a source that computes its examples gives bitwise the same
// parameters, whatever K.
//
//===----------------------------------------------------------------------===//

#include "TestUtils.h"

#include "fuse/Data/Idx.h"
#include "fuse/Data/TensorDataSource.h"
#include "fuse/Fit.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <cstring>

using namespace fuse;
using namespace fuse::data;
using namespace fuse::testing;

namespace {

Tensor i64Labels(int64_t n, std::function<int64_t(int64_t)> label) {
  Tensor labels = Tensor::empty(DType::I64, {n});
  for (int64_t i = 0; i < n; ++i)
    labels.data<int64_t>()[i] = label(i);
  return labels;
}

TEST(TensorDataSource, ChecksItsTensors) {
  Tensor inputs = Tensor::zeros(DType::F32, {4, 2});
  Tensor labels = Tensor::zeros(DType::I32, {4});
  EXPECT_EQ(
      errorOf(TensorDataSource::create(Tensor::zeros(DType::F32, {}), labels)),
      "the inputs are 0-d; a data source's tensors are [examples, ...]");
  EXPECT_EQ(errorOf(TensorDataSource::create(inputs, Tensor())),
            "the labels are 0-d; a data source's tensors are [examples, ...]");
  Tensor transposed =
      Tensor::view(inputs.data(), DType::F32, {2, 4}, /*strides=*/{1, 2});
  EXPECT_EQ(errorOf(TensorDataSource::create(transposed, labels)),
            "the inputs are not contiguous");
  EXPECT_EQ(
      errorOf(TensorDataSource::create(inputs, Tensor::zeros(DType::I32, {3}))),
      "the labels hold 3 examples, the inputs 4");
  Tensor three = Tensor::fromValues<int32_t>({4}, {0, 2, 3, 1});
  EXPECT_EQ(errorOf(TensorDataSource::create(inputs, three, 3)),
            "label #2 is 3, outside [0, 3)");
  EXPECT_EQ(errorOf(TensorDataSource::create(inputs, three, 0)),
            "the class count must be at least 1, got 0");
  TensorDataSource source = unwrap(TensorDataSource::create(inputs, three, 4));
  EXPECT_EQ(source.numClasses(), std::optional<int64_t>(4));
  EXPECT_EQ(source.size(), 4);
  EXPECT_EQ(source.input().str(), "2xf32");
  EXPECT_EQ(source.label().str(), "i32");
  // No examples is a source, which fit and the loader refuse.
  EXPECT_EQ(unwrap(TensorDataSource::create(Tensor::zeros(DType::F32, {0, 3}),
                                            Tensor::zeros(DType::I8, {0})))
                .size(),
            0);
}

TEST(TensorDataSource, GathersExamplesByIndex) {
  // Rank-3 u8-like inputs and rank-1 labels per example.
  Tensor inputs = Tensor::empty(DType::I16, {5, 2, 3, 2});
  for (int64_t k = 0; k < inputs.numElements(); ++k)
    inputs.data<int16_t>()[k] = int16_t(k);
  Tensor labels = Tensor::empty(DType::I64, {5, 2});
  for (int64_t k = 0; k < 10; ++k)
    labels.data<int64_t>()[k] = 100 + k;
  TensorDataSource source = unwrap(TensorDataSource::create(inputs, labels));
  EXPECT_EQ(source.input().str(), "2x3x2xi16");
  EXPECT_EQ(source.label().str(), "2xi64");
  std::vector<int16_t> gotInputs(3 * 12, -1);
  std::vector<int64_t> gotLabels(3 * 2, -1);
  ASSERT_FALSE(
      bool(source.gather({4, 0, 4}, gotInputs.data(), gotLabels.data())));
  for (int64_t k = 0; k < 12; ++k) {
    EXPECT_EQ(gotInputs[k], 48 + k);
    EXPECT_EQ(gotInputs[12 + k], k);
    EXPECT_EQ(gotInputs[24 + k], 48 + k);
  }
  EXPECT_EQ(gotLabels, std::vector<int64_t>({108, 109, 100, 101, 108, 109}));
  // Labels only.
  std::vector<int64_t> onlyLabels(2, -1);
  ASSERT_FALSE(bool(source.gather({2}, nullptr, onlyLabels.data())));
  EXPECT_EQ(onlyLabels, std::vector<int64_t>({104, 105}));
}

/// A source that computes its examples: inputs f32 [28, 28] from a hash of
/// (i, pixel), labels i32 (i * 7) % 10; it keeps DataSource's label scan.
class ComputedSource : public DataSource {
public:
  explicit ComputedSource(int64_t n, int32_t badLabelAt = -1)
      : n_(n), badLabelAt_(badLabelAt) {}
  static float pixel(int64_t i, int64_t k) {
    uint32_t h = uint32_t(i * 784 + k) * 2654435761u;
    return float(h >> 24) / 255.0f;
  }
  static int32_t labelOf(int64_t i) { return int32_t((i * 7) % 10); }

  int64_t size() const override { return n_; }
  TensorSpec input() const override { return {DType::F32, {28, 28}}; }
  TensorSpec label() const override { return {DType::I32, {}}; }
  llvm::Error gather(llvm::ArrayRef<int64_t> indices, void *inputs,
                     void *labels) const override {
    for (auto [row, i] : llvm::enumerate(indices)) {
      if (inputs)
        for (int64_t k = 0; k < 784; ++k)
          static_cast<float *>(inputs)[row * 784 + k] = pixel(i, k);
      if (labels)
        static_cast<int32_t *>(labels)[row] =
            i == badLabelAt_ ? 12 : labelOf(i);
    }
    return llvm::Error::success();
  }

private:
  int64_t n_;
  int64_t badLabelAt_;
};

/// ComputedSource's examples as tensors.
TensorDataSource materialized(const ComputedSource &source) {
  int64_t n = source.size();
  Tensor inputs = Tensor::empty(DType::F32, {n, 28, 28});
  Tensor labels = Tensor::empty(DType::I32, {n});
  std::vector<int64_t> all(n);
  std::iota(all.begin(), all.end(), int64_t(0));
  cantFail(source.gather(all, inputs.data(), labels.data()));
  return unwrap(TensorDataSource::create(inputs, labels));
}

// The default scan gathers labels in blocks of about 64K: a bad label past
// the first block is found at its index.
TEST(DataSource, ScansLabelsInBlocks) {
  ComputedSource good(70000), bad(70000, 68123);
  EXPECT_EQ(unwrap(good.findLabelOutside(10)), std::nullopt);
  std::optional<BadLabel> found = unwrap(bad.findLabelOutside(10));
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->index, 68123);
  EXPECT_EQ(found->value, 12);
  found = unwrap(good.findLabelOutside(5));
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->index, 1); // label 7
}

/// Multinomial logistic regression: 8 f32 features, 3 classes, i64 labels.
constexpr const char *kLogisticModel = R"mlir(
func.func @loss(%w: tensor<8x3xf32>, %b: tensor<3xf32>,
                %x: tensor<?x8xf32>, %y: tensor<?xi64>) -> tensor<f32> {
  %o = fuse.matmul %x, %w
      : (tensor<?x8xf32>, tensor<8x3xf32>) -> tensor<?x3xf32>
  %ob = fuse.add %o, %b
      : (tensor<?x3xf32>, tensor<3xf32>) -> tensor<?x3xf32>
  %l = fuse.softmax_cross_entropy %ob, %y
      : (tensor<?x3xf32>, tensor<?xi64>) -> tensor<f32>
  return %l : tensor<f32>
}
fuse.train_step @train {loss = @loss, params = array<i64: 0, 1>,
                        optimizer = "adam"}
)mlir";

/// `n` examples of 8 features in [-1, 1) whose class is the largest of
/// three fixed linear scores: separable.
TensorDataSource features(int64_t n, unsigned seed) {
  Tensor x = randomTensor({n, 8}, seed);
  Tensor y = i64Labels(n, [&](int64_t i) {
    const float *f = x.data<float>() + 8 * i;
    float s0 = f[0] + f[1] - f[2], s1 = f[3] - f[0] + f[4], s2 = f[5] - f[3];
    return int64_t(s0 >= s1 && s0 >= s2 ? 0 : s1 >= s2 ? 1 : 2);
  });
  return unwrap(TensorDataSource::create(x, y));
}

// Rank-1 f32 features and i64 labels train like images: fit learns a
// separable problem and evaluates it on the test source.
TEST(FitDataSource, FeaturesWithI64Labels) {
  auto engine = makeEngine(kLogisticModel);
  TensorDataSource train = features(1024, 1), test = features(256, 2);
  FitOptions options;
  options.epochs = 8;
  options.batchSize = 32;
  options.learningRate = 0.05f;
  FitSummary summary = unwrap(fit(*engine, train, &test, options));
  ASSERT_EQ(summary.history.size(), 8u);
  EXPECT_LT(summary.history.back().trainLoss,
            summary.history.front().trainLoss);
  ASSERT_TRUE(summary.history.back().testAccuracy.has_value());
  EXPECT_GT(*summary.history.back().testAccuracy, 0.9);

  // i32 labels do not fit an i64 model; nor do 9 features.
  TensorDataSource i32Labels = unwrap(TensorDataSource::create(
      train.inputs(), Tensor::zeros(DType::I32, {1024})));
  EXPECT_EQ(errorOf(fit(*engine, i32Labels, nullptr, options)),
            "the model does not fit the data: 'train_steps' takes the batch "
            "(x: tensor<?x?x8xf32>, y: tensor<?x?xi64>); the labels are i32, "
            "'y' is i64");
  TensorDataSource nine = unwrap(
      TensorDataSource::create(Tensor::zeros(DType::F32, {16, 9}),
                               i64Labels(16, [](int64_t) { return 0; })));
  EXPECT_EQ(errorOf(fit(*engine, nine, nullptr, options)),
            "the model does not fit the data: 'train_steps' takes the batch "
            "(x: tensor<?x?x8xf32>, y: tensor<?x?xi64>); an example of the "
            "data is 9 (9 values), 'x' wants 8 values");
  // Labels are checked through the source, naming the set.
  TensorDataSource three = unwrap(TensorDataSource::create(
      Tensor::zeros(DType::F32, {16, 8}),
      i64Labels(16, [](int64_t i) { return i == 11 ? 3 : 0; })));
  EXPECT_EQ(errorOf(fit(*engine, train, &three, options)),
            "the model does not fit the data: label #11 of the test set is "
            "3, outside [0, 3): 'y' feeds a cross-entropy over 3 classes");
}

/// Four positions per example, each with 8 features and its own label: a
/// sequence tagger's shapes (inputs [4, 8], labels [4] per example).
constexpr const char *kTaggerModel = R"mlir(
func.func @loss(%w: tensor<8x3xf32>, %b: tensor<3xf32>,
                %x: tensor<?x4x8xf32>, %y: tensor<?x4xi32>) -> tensor<f32> {
  %xf = fuse.reshape %x : (tensor<?x4x8xf32>) -> tensor<?x8xf32>
  %yf = fuse.reshape %y : (tensor<?x4xi32>) -> tensor<?xi32>
  %o = fuse.matmul %xf, %w
      : (tensor<?x8xf32>, tensor<8x3xf32>) -> tensor<?x3xf32>
  %ob = fuse.add %o, %b
      : (tensor<?x3xf32>, tensor<3xf32>) -> tensor<?x3xf32>
  %l = fuse.softmax_cross_entropy %ob, %yf
      : (tensor<?x3xf32>, tensor<?xi32>) -> tensor<f32>
  return %l : tensor<f32>
}
fuse.train_step @train {loss = @loss, params = array<i64: 0, 1>,
                        optimizer = "adam"}
)mlir";

// Labels of rank 1 per example: accuracy counts every position.
TEST(FitDataSource, SeveralLabelsPerExample) {
  auto engine = makeEngine(kTaggerModel);
  auto tagged = [](int64_t n, unsigned seed) {
    TensorDataSource flat = features(4 * n, seed);
    Tensor labels = Tensor::empty(DType::I32, {n, 4});
    for (int64_t k = 0; k < 4 * n; ++k)
      labels.data<int32_t>()[k] = int32_t(flat.labels().data<int64_t>()[k]);
    Tensor inputs = Tensor::view(flat.inputs().data(), DType::F32, {n, 4, 8});
    // The view's memory is flat's, kept by the copy below.
    Tensor owned = Tensor::empty(DType::F32, {n, 4, 8});
    std::memcpy(owned.data(), inputs.data(), size_t(n) * 32 * sizeof(float));
    return unwrap(TensorDataSource::create(owned, labels));
  };
  TensorDataSource train = tagged(256, 3), test = tagged(64, 4);
  FitOptions options;
  options.epochs = 8;
  options.batchSize = 8;
  options.learningRate = 0.05f;
  FitSummary summary = unwrap(fit(*engine, train, &test, options));
  ASSERT_TRUE(summary.history.back().testAccuracy.has_value());
  EXPECT_GT(*summary.history.back().testAccuracy, 0.9);
  EXPECT_LE(*summary.history.back().testAccuracy, 1.0);
}

std::string readFile(llvm::StringRef path) {
  auto buffer = llvm::MemoryBuffer::getFile(path);
  EXPECT_TRUE(bool(buffer)) << path.str();
  return buffer ? (*buffer)->getBuffer().str() : "";
}

/// An uncompressed IDX file of unsigned bytes.
void writeIdx(llvm::StringRef path, llvm::ArrayRef<uint32_t> dims,
              llvm::ArrayRef<uint8_t> bytes) {
  std::error_code ec;
  llvm::raw_fd_ostream out(path, ec);
  ASSERT_FALSE(ec) << ec.message();
  out << char(0) << char(0) << char(8) << char(dims.size());
  for (uint32_t d : dims)
    for (int shift = 24; shift >= 0; shift -= 8)
      out << char((d >> shift) & 0xff);
  out.write(reinterpret_cast<const char *>(bytes.data()), bytes.size());
}

// The same examples through the IDX reader, through tensors and computed by
// a source give bitwise the same checkpoint, with K = 1 or 3.
TEST(FitDataSource, SameBitsFromEverySource) {
  llvm::SmallString<128> dir;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("fuse-sources", dir));
  auto path = [&](llvm::StringRef name) { return (dir + "/" + name).str(); };
  // 100 training and 20 test images of bytes; the tensors hold byte / 255.
  auto split = [&](llvm::StringRef prefix, int64_t n, unsigned seed) {
    std::vector<uint8_t> pixels(n * 784), labels(n);
    for (size_t k = 0; k < pixels.size(); ++k)
      pixels[k] = uint8_t((k * 131 + seed * 17) % 251);
    for (int64_t i = 0; i < n; ++i)
      labels[i] = uint8_t((i * 3 + seed) % 10);
    writeIdx(path((prefix + "-images-idx3-ubyte").str()), {uint32_t(n), 28, 28},
             pixels);
    writeIdx(path((prefix + "-labels-idx1-ubyte").str()), {uint32_t(n)},
             labels);
    Tensor images = Tensor::empty(DType::F32, {n, 28, 28});
    for (size_t k = 0; k < pixels.size(); ++k)
      images.data<float>()[k] = float(pixels[k]) / 255.0f;
    Tensor classes = Tensor::empty(DType::I32, {n});
    for (int64_t i = 0; i < n; ++i)
      classes.data<int32_t>()[i] = labels[i];
    return unwrap(TensorDataSource::create(images, classes));
  };
  TensorDataSource trainTensors = split("train", 100, 1);
  TensorDataSource testTensors = split("t10k", 20, 2);
  TensorDataSource trainIdx = unwrap(loadIdxSplit(dir, Split::Train));
  TensorDataSource testIdx = unwrap(loadIdxSplit(dir, Split::Test));

  auto engine = makeEngine(seedTrainingModule());
  auto trained = [&](const DataSource &train, const DataSource &test,
                     int64_t stepsPerCall, llvm::StringRef name) {
    FitOptions options;
    options.epochs = 2;
    options.batchSize = 16;
    options.seed = 9;
    options.stepsPerCall = stepsPerCall;
    options.checkpointPath = path(name);
    FitSummary summary = unwrap(fit(*engine, train, &test, options));
    EXPECT_EQ(summary.steps, 14);
    return readFile(options.checkpointPath);
  };
  std::string fromTensors =
      trained(trainTensors, testTensors, 1, "tensors.safetensors");
  EXPECT_FALSE(fromTensors.empty());
  EXPECT_EQ(trained(trainIdx, testIdx, 1, "idx.safetensors"), fromTensors);
  EXPECT_EQ(trained(trainIdx, testIdx, 3, "idx3.safetensors"), fromTensors);

  ComputedSource computed(100), computedTest(20);
  TensorDataSource computedTensors = materialized(computed);
  TensorDataSource computedTestTensors = materialized(computedTest);
  std::string fromComputed =
      trained(computed, computedTest, 3, "computed.safetensors");
  EXPECT_NE(fromComputed, fromTensors);
  EXPECT_EQ(trained(computedTensors, computedTestTensors, 1,
                    "computed-tensors.safetensors"),
            fromComputed);
  llvm::sys::fs::remove_directories(dir);
}

} // namespace
