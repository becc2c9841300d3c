//===- TrainCommand.cpp - fusec train: train a model on an image set ------===//
//
// `fusec train MODEL.mlir` trains the model's `fuse.train_step` on
// Fashion-MNIST (or another IDX data set) through fuse::fit, showing a
// Keras-like progress bar on a terminal and plain lines otherwise, and
// evaluating on the test split after each epoch.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"

#include "fuse/ABI.h"
#include "fuse/Checkpoint.h"
#include "fuse/CompileStats.h"
#include "fuse/Data/Idx.h"
#include "fuse/Fit.h"
#include "fuse/Profile.h"
#include "fuse/Trainer.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cmath>
#include <limits>

using namespace fuse;
namespace cl = llvm::cl;

cl::SubCommand fusec::trainCommand(
    "train", "Train a model's fuse.train_step on Fashion-MNIST (or another "
             "IDX image set) and report its test accuracy");

namespace {
cl::opt<std::string> model(cl::Positional, cl::desc("<model .mlir file>"),
                           cl::Required, cl::cat(fusec::category()),
                           cl::sub(fusec::trainCommand));
cl::opt<std::string>
    dataDir("data",
            cl::desc("Directory of the IDX files (train-images-idx3-ubyte.gz, "
                     "...; default: Debian's dataset-fashion-mnist)"),
            cl::init(std::string(data::kFashionMnistDir)),
            cl::value_desc("DIR"), cl::cat(fusec::category()),
            cl::sub(fusec::trainCommand));
cl::opt<std::string> step("step",
                          cl::desc("The step function (fuse.train_step)"),
                          cl::init("train"), cl::cat(fusec::category()),
                          cl::sub(fusec::trainCommand));
cl::opt<int64_t> epochs("epochs",
                        cl::desc("Train until this many epochs are done "
                                 "(counting a resumed checkpoint's)"),
                        cl::init(1), cl::cat(fusec::category()),
                        cl::sub(fusec::trainCommand));
cl::opt<int64_t> batchSize("batch-size",
                           cl::desc("Examples per step (default 32, or the "
                                    "resumed checkpoint's)"),
                           cl::cat(fusec::category()),
                           cl::sub(fusec::trainCommand));
cl::opt<int64_t> stepsPerCall(
    "steps-per-call",
    cl::desc("Training steps per compiled call, K (default 0: about 0.1 s "
             "per call); results do not depend on it"),
    cl::init(0), cl::cat(fusec::category()), cl::sub(fusec::trainCommand));
cl::opt<float> learningRate("lr", cl::desc("Learning rate"), cl::init(1e-3f),
                            cl::cat(fusec::category()),
                            cl::sub(fusec::trainCommand));
cl::opt<uint64_t> seed("seed",
                       cl::desc("Seed of the initializers and the data order "
                                "(default 0, or the resumed checkpoint's)"),
                       cl::cat(fusec::category()),
                       cl::sub(fusec::trainCommand));
cl::opt<std::string> weights(
    "weights",
    cl::desc("Initial weights from a safetensors file (by parameter name)"),
    cl::value_desc("PATH"), cl::cat(fusec::category()),
    cl::sub(fusec::trainCommand));
cl::opt<std::string>
    checkpoint("checkpoint",
               cl::desc("Write a checkpoint (safetensors) after each epoch"),
               cl::value_desc("PATH"), cl::cat(fusec::category()),
               cl::sub(fusec::trainCommand));
cl::opt<std::string> resume("resume",
                            cl::desc("Continue training from a checkpoint"),
                            cl::value_desc("PATH"), cl::cat(fusec::category()),
                            cl::sub(fusec::trainCommand));
cl::opt<bool> allowNan(
    "allow-nan",
    cl::desc("Keep training when a step's loss is NaN or infinite (default: "
             "stop with an error naming the step, before any checkpoint)"),
    cl::cat(fusec::category()), cl::sub(fusec::trainCommand));
cl::opt<std::string> jsonPath("json",
                              cl::desc("Write a summary of the run as JSON"),
                              cl::value_desc("PATH"),
                              cl::cat(fusec::category()),
                              cl::sub(fusec::trainCommand));
enum class ProgressStyle { Auto, Bar, Lines };
cl::opt<ProgressStyle> progressStyle(
    "progress", cl::desc("How to show progress"), cl::init(ProgressStyle::Auto),
    cl::values(clEnumValN(ProgressStyle::Auto, "auto",
                          "a bar on a terminal, lines otherwise"),
               clEnumValN(ProgressStyle::Bar, "bar", "a Keras-like bar"),
               clEnumValN(ProgressStyle::Lines, "lines",
                          "a line every few seconds")),
    cl::cat(fusec::category()), cl::sub(fusec::trainCommand));

/// `x` as printed: a NaN without its sign bit, which arithmetic sets or
/// clears depending on how the host code was compiled ("nan", not "-nan").
double shown(double x) { return std::isnan(x) ? std::fabs(x) : x; }

/// Keras' progress bar on a terminal; a line every few seconds otherwise.
class Progress {
public:
  Progress(llvm::raw_ostream &os, bool bar) : os_(os), bar_(bar) {}

  void beginEpoch(int64_t epoch, int64_t epochs) {
    epochs_ = epochs;
    lastLine_ = std::chrono::steady_clock::now();
    if (bar_)
      os_ << "Epoch " << epoch + 1 << "/" << epochs << "\n";
  }

  void update(const FitProgress &p) {
    if (bar_) {
      constexpr int width = 30;
      int done =
          int(width * p.stepInEpoch / std::max<int64_t>(p.stepsPerEpoch, 1));
      std::string bar(done, '=');
      if (done < width)
        bar += ">" + std::string(width - done - 1, '.');
      double eta = p.stepsRun > 0 ? p.seconds / double(p.stepsRun) *
                                        double(p.stepsPerEpoch - p.stepInEpoch)
                                  : 0;
      os_ << "\r"
          << llvm::format_decimal(p.stepInEpoch, digits(p.stepsPerEpoch)) << "/"
          << p.stepsPerEpoch << " [" << bar << "] - "
          << llvm::format("ETA: %.1fs - %.0f steps/s - ", eta,
                          p.seconds > 0 ? double(p.stepsRun) / p.seconds : 0.0)
          << perStep(p.seconds, p.stepsRun)
          << llvm::format(" - loss: %.4f", shown(p.meanLoss)) << "\x1b[K";
      os_.flush();
      return;
    }
    auto now = std::chrono::steady_clock::now();
    // The epoch's last call is reported by endEpoch.
    if (p.stepInEpoch == p.stepsPerEpoch ||
        std::chrono::duration<double>(now - lastLine_).count() < 2.0)
      return;
    lastLine_ = now;
    os_ << llvm::format("epoch %lld/%lld step %lld/%lld - ",
                        (long long)p.epoch + 1, (long long)epochs_,
                        (long long)p.stepInEpoch, (long long)p.stepsPerEpoch)
        << perStep(p.seconds, p.stepsRun)
        << llvm::format(" - loss: %.4f\n", shown(p.meanLoss));
    os_.flush();
  }

  void endEpoch(const EpochSummary &e) {
    if (bar_)
      os_ << "\r\x1b[K";
    else
      os_ << "epoch " << e.epoch + 1 << "/" << epochs_ << ": ";
    os_ << llvm::format("%lld steps in %.2fs - ", (long long)e.steps, e.seconds)
        << perStep(e.seconds, e.steps)
        << llvm::format(" - loss: %.4f", shown(e.trainLoss));
    if (e.testLoss)
      os_ << llvm::format(" - test_loss: %.4f", shown(*e.testLoss));
    if (e.testAccuracy)
      os_ << llvm::format(" - test_accuracy: %.4f", *e.testAccuracy);
    os_ << "\n";
    os_.flush();
  }

private:
  static unsigned digits(int64_t n) { return std::to_string(n).size(); }
  /// Time per step as Keras shows it: 2.1s/step, 540.3ms/step, 350us/step.
  static std::string perStep(double seconds, int64_t steps) {
    double t = steps > 0 ? seconds / double(steps) : 0;
    if (t >= 1)
      return llvm::formatv("{0:f1}s/step", t).str();
    if (t >= 1e-3)
      return llvm::formatv("{0:f1}ms/step", t * 1e3).str();
    return llvm::formatv("{0:f0}us/step", t * 1e6).str();
  }

  llvm::raw_ostream &os_;
  bool bar_;
  int64_t epochs_ = 0;
  std::chrono::steady_clock::time_point lastLine_;
};

llvm::Error writeJson(llvm::StringRef path, const FitSummary &s) {
  std::error_code ec;
  llvm::raw_fd_ostream file(path, ec);
  if (ec)
    return llvm::createStringError(ec, "%s: cannot write: %s",
                                   path.str().c_str(), ec.message().c_str());
  llvm::json::OStream json(file, 2);
  // JSON has no NaN or infinity (a diverged run): null.
  auto number = [&](llvm::StringRef key, std::optional<double> v) {
    if (v && std::isfinite(*v))
      json.attribute(key, *v);
    else
      json.attribute(key, nullptr);
  };
  const EpochSummary *last = s.history.empty() ? nullptr : &s.history.back();
  json.object([&] {
    json.attribute("epochs", int64_t(s.history.size()));
    json.attribute("steps", s.steps);
    json.attribute("total_steps", s.totalSteps);
    json.attribute("batch_size", s.batchSize);
    json.attribute("steps_per_call", s.stepsPerCall);
    json.attribute("seed", int64_t(s.seed));
    json.attribute("threads", int64_t(s.threads));
    number("train_seconds", s.trainSeconds);
    number("steps_per_second",
           s.trainSeconds > 0 ? double(s.steps) / s.trainSeconds : 0.0);
    number("compile_seconds", s.compileSeconds);
    number("final_train_loss",
           last ? std::optional<double>(last->trainLoss) : std::nullopt);
    number("test_loss", last ? last->testLoss : std::nullopt);
    number("test_accuracy", last ? last->testAccuracy : std::nullopt);
    json.attributeArray("history", [&] {
      for (const EpochSummary &e : s.history)
        json.object([&] {
          json.attribute("epoch", e.epoch + 1);
          json.attribute("steps", e.steps);
          number("seconds", e.seconds);
          number("train_loss", e.trainLoss);
          number("test_loss", e.testLoss);
          number("test_accuracy", e.testAccuracy);
        });
    });
  });
  file << "\n";
  file.close();
  if (file.has_error())
    return llvm::createStringError(file.error(), "%s: cannot write: %s",
                                   path.str().c_str(),
                                   file.error().message().c_str());
  return llvm::Error::success();
}

/// What identifies the file `path` names, existing or not: its real path,
/// else its directory's real path and its name.
std::string fileKey(llvm::StringRef path) {
  llvm::SmallString<256> real;
  if (!llvm::sys::fs::real_path(path, real))
    return std::string(real);
  llvm::SmallString<256> absolute(path);
  llvm::sys::fs::make_absolute(absolute);
  llvm::sys::path::remove_dots(absolute, /*remove_dot_dot=*/true);
  llvm::SmallString<256> dir = llvm::sys::path::parent_path(absolute);
  if (!llvm::sys::fs::real_path(dir, real))
    llvm::sys::path::append(real, llvm::sys::path::filename(absolute));
  else
    real = absolute;
  return std::string(real);
}

/// Whether `a` and `b` name the same file (through links and `..` too).
bool sameFile(llvm::StringRef a, llvm::StringRef b) {
  bool equivalent = false;
  if (!llvm::sys::fs::equivalent(a, b, equivalent) && equivalent)
    return true;
  return fileKey(a) == fileKey(b);
}

/// Rejects outputs that would overwrite each other or an input: the JSON
/// summary over the checkpoint, either over the model, the data or the
/// weights read. (The checkpoint may replace --resume's or --weights' file:
/// they are read before it is first written.)
llvm::Error checkOutputPaths() {
  struct NamedPath {
    std::string option, path;
  };
  std::vector<NamedPath> outputs, inputs;
  if (!checkpoint.empty())
    outputs.push_back({"--checkpoint", checkpoint});
  if (!jsonPath.empty())
    outputs.push_back({"--json", jsonPath});
  inputs.push_back({"the model", model});
  if (!weights.empty())
    inputs.push_back({"--weights", weights});
  if (!resume.empty())
    inputs.push_back({"--resume", resume});
  for (llvm::StringRef split : {"train", "t10k"})
    for (llvm::StringRef kind : {"images-idx3-ubyte", "labels-idx1-ubyte"})
      for (llvm::StringRef suffix : {"", ".gz"}) {
        llvm::SmallString<256> file(dataDir);
        llvm::sys::path::append(file, split + "-" + kind + suffix);
        if (llvm::sys::fs::exists(file))
          inputs.push_back({"--data", std::string(file)});
      }
  for (size_t i = 0; i < outputs.size(); ++i) {
    for (size_t j = i + 1; j < outputs.size(); ++j)
      if (sameFile(outputs[i].path, outputs[j].path))
        return llvm::createStringError(
            outputs[i].option + " '" + outputs[i].path + "' and " +
            outputs[j].option + " '" + outputs[j].path +
            "' are the same file: one would overwrite the other");
    for (const NamedPath &input : inputs) {
      if (outputs[i].option == "--checkpoint" &&
          (input.option == "--weights" || input.option == "--resume"))
        continue;
      if (sameFile(outputs[i].path, input.path))
        return llvm::createStringError(outputs[i].option + " '" +
                                       outputs[i].path + "' is the file of " +
                                       input.option + " ('" + input.path +
                                       "'): writing it would "
                                       "overwrite an input");
    }
  }
  return llvm::Error::success();
}

/// The class count the data's labels must fit: the smallest C of the
/// cross-entropies the step function `step`'s integer per-step arguments
/// (the labels) feed, as fuse-mark-class-labels found it. An error naming
/// the model when a label argument has none (its labels are computed, or
/// feed no cross-entropy): fusec train never trains on unchecked labels.
llvm::Expected<int64_t> classCount(Engine &engine, llvm::StringRef model,
                                   llvm::StringRef step) {
  llvm::Expected<Function &> fn = engine.lookup(step);
  if (fn && !llvm::errorToBool(
                engine.lookup(abi::stepsFunctionName(step)).takeError())) {
    std::optional<int64_t> classes;
    for (const ArgumentInfo &arg : fn->arguments()) {
      if (!arg.perStep || isFloatingPoint(arg.dtype))
        continue;
      if (arg.classes <= 0)
        return llvm::createStringError(
            "cannot check the data's labels against '" + model + "': '" +
            arg.name + "' of '" + step +
            "' does not feed a softmax_cross_entropy directly (through "
            "slices, casts or reshapes), so its class count is unknown");
      classes = std::min(classes.value_or(arg.classes), arg.classes);
    }
    // No integer batch input: fit reports that the model does not fit.
    return classes.value_or(std::numeric_limits<int64_t>::max());
  }
  if (!fn)
    llvm::consumeError(fn.takeError());
  // Not a step function: the trainer's error says why.
  llvm::Expected<std::unique_ptr<Trainer>> trainer =
      Trainer::create(engine, step);
  if (!trainer)
    return trainer.takeError();
  return llvm::createStringError("'" + step + "' is not a step function");
}

} // namespace

int fusec::trainMain() {
  auto fail = [](llvm::Error e) {
    llvm::errs() << "fusec train: error: " << llvm::toString(std::move(e))
                 << "\n";
    return 1;
  };
  if (llvm::Error e = checkOutputPaths())
    return fail(std::move(e));
  if (!jsonPath.empty())
    if (llvm::Error e = checkWritable(jsonPath))
      return fail(std::move(e));
  EngineOptions engineOptions;
  engineOptions.fusion = fusec::fusion;
  engineOptions.winograd = fusec::winograd;
  engineOptions.threads = fusec::threads();
  engineOptions.profile = fusec::profile;
  CompileStats compileStats;
  if (fusec::stats())
    engineOptions.compileStats = &compileStats;
  llvm::Expected<std::unique_ptr<Engine>> engine =
      Engine::create(engineOptions);
  if (!engine)
    return fail(engine.takeError());
  if (llvm::Error e = (*engine)->loadFile(model))
    return fail(std::move(e));

  // The data's labels are checked against the model's class count (the
  // logits' last dim of its cross-entropy), naming the file; a model whose
  // count cannot be found is an error, never trained unchecked.
  llvm::Expected<int64_t> classes = classCount(**engine, model, step);
  if (!classes)
    return fail(classes.takeError());
  llvm::Expected<data::TensorDataSource> train =
      data::loadIdxSplit(dataDir, data::Split::Train, *classes);
  if (!train)
    return fail(train.takeError());
  llvm::Expected<data::TensorDataSource> test =
      data::loadIdxSplit(dataDir, data::Split::Test, *classes);
  if (!test)
    return fail(test.takeError());
  FitOptions options;
  options.stepFunction = step;
  options.epochs = epochs;
  if (batchSize.getNumOccurrences())
    options.batchSize = batchSize;
  options.stepsPerCall = stepsPerCall;
  options.learningRate = learningRate;
  if (seed.getNumOccurrences())
    options.seed = seed;
  options.weightsPath = weights;
  options.resumePath = resume;
  options.checkpointPath = checkpoint;

  options.allowNonFiniteLoss = allowNan;
  llvm::outs() << "Training '" << step << "' of " << model << " on "
               << train->size() << " images of " << dataDir << ", testing on "
               << test->size() << ", " << (*engine)->threads() << " thread"
               << ((*engine)->threads() == 1 ? "" : "s") << "\n";
  bool bar = progressStyle == ProgressStyle::Bar ||
             (progressStyle == ProgressStyle::Auto &&
              llvm::sys::Process::StandardOutIsDisplayed());
  Progress progress(llvm::outs(), bar);
  FitCallbacks callbacks;
  callbacks.onEpochBegin = [&](int64_t epoch, int64_t total) {
    progress.beginEpoch(epoch, total);
  };
  callbacks.onCall = [&](const FitProgress &p) { progress.update(p); };
  callbacks.onEpochEnd = [&](const EpochSummary &e) { progress.endEpoch(e); };
  llvm::Expected<FitSummary> summary =
      fit(**engine, *train, &*test, options, callbacks);
  if (!summary)
    return fail(summary.takeError());

  const FitSummary &s = *summary;
  llvm::outs() << llvm::format(
      "Trained %lld steps (batch %lld, %lld per call) in %.2fs (%.0f "
      "steps/s); compile %.2fs\n",
      (long long)s.steps, (long long)s.batchSize, (long long)s.stepsPerCall,
      s.trainSeconds, s.trainSeconds > 0 ? s.steps / s.trainSeconds : 0.0,
      s.compileSeconds);
  if (!s.history.empty() && s.history.back().testAccuracy)
    llvm::outs() << llvm::format("Test accuracy: %.4f\n",
                                 *s.history.back().testAccuracy);
  if (fusec::profile) {
    std::vector<ProfileEntry> entries = fuse::profile();
    llvm::outs() << "Profile (" << s.steps << " steps, " << s.totalSteps
                 << " in total):\n";
    printProfile(llvm::outs(), entries);
  }
  if (fusec::stats())
    compileStats.print(llvm::outs());
  if (!jsonPath.empty())
    if (llvm::Error e = writeJson(jsonPath, s))
      return fail(std::move(e));
  return 0;
}
