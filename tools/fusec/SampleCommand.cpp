//===- SampleCommand.cpp - fusec sample: generate text from a model -------===//
//
// `fusec sample MODEL.mlir --weights CKPT --prompt "..."` generates bytes
// with a trained language model: the model's prediction function
// (`@<step>_predict`, fuse-derive-predict) maps a window of T tokens to
// each position's next-token logits; the next byte is drawn from the
// softmax of the last prompt position's logits over `--temperature`,
// seeded. The window slides once the text is longer than T. There is no
// KV cache: the model's attention is one fuse.attention over the whole
// window, whose length T is static, so each token recomputes the window,
// T positions at once, in one compiled call. (A cache would need attention
// over a growing prefix and state kept between calls, which the op set
// does not express.)
//
//===----------------------------------------------------------------------===//

#include "Commands.h"

#include "fuse/ABI.h"
#include "fuse/Checkpoint.h"
#include "fuse/Data/Safetensors.h"
#include "fuse/Trainer.h"

#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <random>

using namespace fuse;
namespace cl = llvm::cl;

cl::SubCommand fusec::sampleCommand(
    "sample", "Generate text with a trained language model (byte tokens)");

namespace {
cl::opt<std::string> model(cl::Positional, cl::desc("<model .mlir file>"),
                           cl::Required, cl::cat(fusec::category()),
                           cl::sub(fusec::sampleCommand));
cl::opt<std::string>
    weights("weights",
            cl::desc("The trained weights: a checkpoint or weights file "
                     "(safetensors, by parameter name)"),
            cl::value_desc("PATH"), cl::Required, cl::cat(fusec::category()),
            cl::sub(fusec::sampleCommand));
cl::opt<std::string> prompt("prompt", cl::desc("The text to continue"),
                            cl::init(""), cl::cat(fusec::category()),
                            cl::sub(fusec::sampleCommand));
cl::opt<int64_t> tokens("tokens", cl::desc("Bytes to generate (default 200)"),
                        cl::init(200), cl::cat(fusec::category()),
                        cl::sub(fusec::sampleCommand));
cl::opt<double> temperature(
    "temperature",
    cl::desc("Softmax temperature (default 1; 0 takes the most likely byte)"),
    cl::init(1.0), cl::cat(fusec::category()), cl::sub(fusec::sampleCommand));
cl::opt<uint64_t> seed("seed", cl::desc("Seed of the sampling (default 0)"),
                       cl::init(0), cl::cat(fusec::category()),
                       cl::sub(fusec::sampleCommand));
cl::opt<std::string> step("step",
                          cl::desc("The step function (fuse.train_step)"),
                          cl::init("train"), cl::cat(fusec::category()),
                          cl::sub(fusec::sampleCommand));

/// The index of the largest logit, or a draw from softmax(logits / t).
int64_t nextToken(const float *logits, int64_t vocab, double t,
                  std::mt19937_64 &rng) {
  int64_t best = 0;
  for (int64_t v = 1; v < vocab; ++v)
    if (logits[v] > logits[best])
      best = v;
  if (t == 0)
    return best;
  std::vector<double> weights(vocab);
  for (int64_t v = 0; v < vocab; ++v)
    weights[v] = std::exp((logits[v] - logits[best]) / t);
  std::discrete_distribution<int64_t> draw(weights.begin(), weights.end());
  return draw(rng);
}

llvm::Error run() {
  if (tokens < 1)
    return llvm::createStringError("--tokens must be at least 1, got " +
                                   std::to_string(tokens));
  if (!(temperature >= 0) || !std::isfinite(temperature))
    return llvm::createStringError(
        "--temperature must be finite and at least 0");
  EngineOptions options;
  options.threads = fusec::threads();
  options.fusion = fusec::fusion;
  if (llvm::Error e = fusec::applyPrecision(options.trainStep))
    return e;
  llvm::Expected<std::unique_ptr<Engine>> engine = Engine::create(options);
  if (!engine)
    return engine.takeError();
  if (llvm::Error e = (*engine)->loadFile(model))
    return e;
  std::string predictName = abi::predictFunctionName(step);
  llvm::Expected<Function &> predict = (*engine)->lookup(predictName);
  if (!predict) {
    llvm::consumeError(predict.takeError());
    return llvm::createStringError(
        model + ": no prediction function '" + predictName +
        "': sampling needs a fuse.train_step '" + step.getValue() +
        "' whose loss is one softmax_cross_entropy over token logits");
  }
  // The parameters, by name, from the weights file.
  llvm::Expected<std::unique_ptr<Trainer>> trainer =
      Trainer::create(**engine, step);
  if (!trainer)
    return trainer.takeError();
  if (llvm::Error e = (*trainer)->initialize(0))
    return e;
  if (llvm::Error e = loadWeights(**trainer, weights))
    return e;
  // loadWeights leaves a parameter the file lacks as initialized: refuse to
  // sample from weights that were never trained.
  llvm::Expected<data::Safetensors> file = data::readSafetensors(weights);
  if (!file)
    return file.takeError();
  // One argument is the tokens, [B, T] integers with a static T.
  std::vector<Tensor> args;
  int tokenArg = -1;
  int64_t window = 0;
  for (auto [i, arg] : llvm::enumerate(predict->arguments())) {
    llvm::Expected<Tensor> param = (*trainer)->state(arg.name);
    if (param) {
      if (!file->find(arg.name))
        return llvm::createStringError(weights + ": no tensor '" + arg.name +
                                       "', a parameter of " + model);
      args.push_back(*param);
      continue;
    }
    llvm::consumeError(param.takeError());
    bool isTokens =
        arg.shape.size() == 2 && arg.dtype == DType::I32 && arg.shape[1] > 0;
    if (!isTokens || tokenArg >= 0)
      return llvm::createStringError(
          model + ": " + predictName + "'s argument '" + arg.name +
          "' is neither a parameter nor the tokens (one [B, T] i32 argument "
          "with a static T)");
    tokenArg = static_cast<int>(i);
    window = arg.shape[1];
    args.push_back(Tensor());
  }
  if (tokenArg < 0)
    return llvm::createStringError(model + ": " + predictName +
                                   " takes no tokens argument");

  std::vector<int32_t> text;
  for (unsigned char c : prompt.getValue())
    text.push_back(c);
  if (text.empty())
    text.push_back('\n'); // an empty prompt starts a new line
  std::mt19937_64 rng(seed);
  llvm::outs() << prompt;
  Tensor batch = Tensor::zeros(DType::I32, {1, window});
  for (int64_t n = 0; n < tokens; ++n) {
    // The last `window` tokens, from position 0 (causal: the padding after
    // the last real token is never read by it).
    size_t start = text.size() > size_t(window) ? text.size() - window : 0;
    size_t used = text.size() - start;
    std::fill_n(batch.data<int32_t>(), window, 0);
    std::copy(text.begin() + start, text.end(), batch.data<int32_t>());
    args[tokenArg] = batch;
    llvm::Expected<std::vector<Tensor>> logits = predict->call(args);
    if (!logits)
      return logits.takeError();
    const Tensor &out = (*logits)[0];
    if (out.rank() != 2 || out.shape()[0] != window ||
        out.dtype() != DType::F32)
      return llvm::createStringError(
          model + ": " + predictName +
          " must return f32 logits of shape [T, vocabulary]");
    int64_t vocab = out.shape()[1];
    const float *row = out.data<float>() + (used - 1) * vocab;
    if (!std::all_of(row, row + vocab,
                     [](float v) { return std::isfinite(v); }))
      return llvm::createStringError(
          model + ": the logits after byte " + std::to_string(text.size()) +
          " are not all finite (diverged weights in " + weights + "?)");
    int64_t next = nextToken(row, vocab, temperature, rng);
    text.push_back(static_cast<int32_t>(next));
    llvm::outs() << static_cast<char>(next);
    llvm::outs().flush();
  }
  llvm::outs() << "\n";
  return llvm::Error::success();
}

} // namespace

int fusec::sampleMain() { return fusec::exitCode("sample", run()); }
