//===- TrainCommand.cpp - fusec train: train a model on a data set --------===//
//
// `fusec train MODEL.mlir` trains the model's `fuse.train_step` through
// fuse::fit on Fashion-MNIST (or another IDX data set), evaluating on its
// test split after each epoch, or with --format=text on a text's byte
// tokens (Debian's fortunes by default), validating on its held-out tail.
// It shows a Keras-like progress bar on a terminal and plain lines
// otherwise. Under `mpirun -np N` (a build with MPI) the N processes train
// data-parallel, rank 0 reporting (docs/distributed.md).
//
//===----------------------------------------------------------------------===//

#include "Commands.h"
#include "DataSets.h"

#include "fuse/ABI.h"
#include "fuse/Checkpoint.h"
#include "fuse/CompileStats.h"
#include "fuse/Data/Idx.h"
#include "fuse/Data/TextDataSource.h"
#include "fuse/Fit.h"
#include "fuse/Profile.h"
#include "fuse/Trainer.h"
#ifdef FUSE_HAVE_MPI
#include "fuse/Mpi.h"
#endif

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Threading.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>

#include <csignal>

#include <fcntl.h>
#include <unistd.h>

using namespace fuse;
using namespace fusec;
namespace cl = llvm::cl;

cl::SubCommand fusec::trainCommand(
    "train", "Train a model's fuse.train_step on Fashion-MNIST (or another "
             "IDX image set) and report its test accuracy, or on a text's "
             "byte tokens and report its validation loss");

namespace {
cl::opt<std::string> model(cl::Positional, cl::desc("<model .mlir file>"),
                           cl::Required, cl::cat(fusec::category()),
                           cl::sub(fusec::trainCommand));
enum class DataFormat { Idx, Text };
cl::opt<DataFormat> format(
    "format", cl::desc("What --data holds"), cl::init(DataFormat::Idx),
    cl::values(clEnumValN(DataFormat::Idx, "idx",
                          "an IDX image set (train- and t10k- files)"),
               clEnumValN(DataFormat::Text, "text",
                          "text: every byte a token, windows of --context "
                          "tokens, next-token labels")),
    cl::cat(fusec::category()), cl::sub(fusec::trainCommand));
cl::opt<std::string> dataOption(
    "data",
    cl::desc("--format=idx: the directory of the IDX files "
             "(train-images-idx3-ubyte.gz, ...; default: Debian's "
             "dataset-fashion-mnist). --format=text: a file, or a directory "
             "whose regular files are read in name order (default: Debian's "
             "fortunes)"),
    cl::value_desc("PATH"), cl::cat(fusec::category()),
    cl::sub(fusec::trainCommand));
cl::opt<int64_t> contextOption(
    "context",
    cl::desc("--format=text: tokens per window (default: the model's "
             "static window length)"),
    cl::value_desc("T"), cl::cat(fusec::category()),
    cl::sub(fusec::trainCommand));
cl::opt<double> validationFraction(
    "validation-fraction",
    cl::desc("--format=text: the share of the text held out at its end for "
             "validation (default 0.1)"),
    cl::init(data::kDefaultValidationFraction), cl::cat(fusec::category()),
    cl::sub(fusec::trainCommand));
cl::opt<double> validationSplit(
    "validation-split",
    cl::desc("Hold out this share of the training data, in (0, 1), for "
             "validation after each epoch: a seeded draw of an IDX set's "
             "training images (recorded in the checkpoint), or the tail of a "
             "text (as --validation-fraction)"),
    cl::value_desc("F"), cl::cat(fusec::category()),
    cl::sub(fusec::trainCommand));
cl::opt<int64_t> earlyStoppingPatience(
    "early-stopping-patience",
    cl::desc("Stop training after this many epochs in a row without a "
             "validation loss below the best (Keras' EarlyStopping; needs a "
             "validation set)"),
    cl::value_desc("N"), cl::cat(fusec::category()),
    cl::sub(fusec::trainCommand));
cl::opt<bool> restoreBestWeights(
    "restore-best-weights",
    cl::desc("When early stopping ends training, restore the best epoch's "
             "parameters, optimizer states and step before writing the "
             "final checkpoint"),
    cl::cat(fusec::category()), cl::sub(fusec::trainCommand));
cl::opt<double> maxSeconds(
    "max-seconds",
    cl::desc("End training at the first call after this many seconds of "
             "training (compilation not counted), evaluate and write the "
             "checkpoint, which --resume continues from that step"),
    cl::value_desc("S"), cl::cat(fusec::category()),
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
cl::opt<std::string> lrSchedule(
    "lr-schedule",
    cl::desc("Scale --lr by a schedule of the global step, computed in the "
             "compiled steps (overrides the model's lr_schedule): "
             "KIND[:KEY=VALUE,...], KIND constant, step, exponential, cosine "
             "or linear, KEYs warmup, steps, gamma, min; e.g. "
             "cosine:warmup=100,steps=5000,min=0.1"),
    cl::value_desc("SPEC"), cl::cat(fusec::category()),
    cl::sub(fusec::trainCommand));
cl::opt<double> clipNorm(
    "clip-norm",
    cl::desc("Clip the gradients' global L2 norm to this (as PyTorch's "
             "clip_grad_norm_; overrides the model's clip_norm)"),
    cl::value_desc("X"), cl::cat(fusec::category()),
    cl::sub(fusec::trainCommand));
cl::opt<double>
    clipValue("clip-value",
              cl::desc("Clamp every gradient element to [-X, X] (overrides the "
                       "model's clip_value)"),
              cl::value_desc("X"), cl::cat(fusec::category()),
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
               cl::desc("Write a checkpoint (safetensors) after each epoch "
                        "and when --max-seconds ends training"),
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
cl::opt<bool> overlap(
    "overlap",
    cl::desc("Under mpirun: reduce the last layers' gradients while the "
             "backward pass of the earlier ones runs (--overlap=false: "
             "after the backward pass; the same results, bit for bit)"),
    cl::init(true), cl::cat(fusec::category()), cl::sub(fusec::trainCommand));
/// --allreduce; fuse::MpiAllReduce where fusec is built with MPI.
enum class MpiAllReduceChoice { Auto, SharedMemory, Ring, Mpi };
cl::opt<MpiAllReduceChoice> allReduceAlgorithm(
    "allreduce",
    cl::desc("Under mpirun: how the gradient buckets' nonblocking "
             "all-reduces run (default: auto)"),
    cl::values(
        clEnumValN(MpiAllReduceChoice::Auto, "auto",
                   "shared-memory where every rank is on this machine (8 at "
                   "most), ring otherwise"),
        clEnumValN(MpiAllReduceChoice::SharedMemory, "shared-memory",
                   "by loads and stores through an MPI shared-memory "
                   "window, every rank on one machine; the ring's bits"),
        clEnumValN(MpiAllReduceChoice::Ring, "ring",
                   "Fuse's ring over point-to-point messages: a "
                   "reduce-scatter then an all-gather, moved on by "
                   "the progress calls"),
        clEnumValN(MpiAllReduceChoice::Mpi, "mpi",
                   "the MPI library's MPI_Iallreduce")),
    cl::init(MpiAllReduceChoice::Auto), cl::cat(fusec::category()),
    cl::sub(fusec::trainCommand));
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

/// --data, or the format's default.
std::string dataPath() {
  if (dataOption.getNumOccurrences())
    return dataOption;
  return std::string(format == DataFormat::Text ? data::kFortunesDir
                                                : data::kFashionMnistDir);
}

/// Bits per token (per byte, per character of ASCII text) of a mean
/// cross-entropy in nats.
double bitsPerCharacter(double loss) { return loss / std::log(2.0); }

/// Keras' progress bar on a terminal; a line every few seconds otherwise.
class Progress {
public:
  /// `text`: the evaluation is a validation, with bits per character.
  Progress(llvm::raw_ostream &os, bool bar, bool text)
      : os_(os), bar_(bar), text_(text) {}

  void beginEpoch(int64_t epoch, int64_t epochs) {
    epochs_ = epochs;
    lastLine_ = std::chrono::steady_clock::now();
    if (bar_)
      os_ << "Epoch " << epoch + 1 << "/" << epochs << "\n";
  }

  void update(const FitProgress &p) {
    stepInEpoch_ = p.stepInEpoch;
    stepsPerEpoch_ = p.stepsPerEpoch;
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
      os_ << "epoch " << e.epoch + 1 << "/" << epochs_
          << (e.complete ? "" : " (stopped)") << ": ";
    if (!e.complete)
      os_ << "stopped at step " << stepInEpoch_ << "/" << stepsPerEpoch_
          << " of the epoch - ";
    os_ << llvm::format("%lld steps in %.2fs - ", (long long)e.steps, e.seconds)
        << perStep(e.seconds, e.steps)
        << llvm::format(" - loss: %.4f", shown(e.trainLoss));
    if (e.validationLoss)
      os_ << llvm::format(" - val_loss: %.4f", shown(*e.validationLoss));
    if (e.validationLoss && text_)
      os_ << llvm::format(" - val_bpc: %.4f",
                          shown(bitsPerCharacter(*e.validationLoss)));
    if (e.validationAccuracy)
      os_ << llvm::format(" - val_accuracy: %.4f", *e.validationAccuracy);
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
  bool bar_, text_;
  int64_t epochs_ = 0;
  /// Where the last call left the epoch.
  int64_t stepInEpoch_ = 0, stepsPerEpoch_ = 0;
  std::chrono::steady_clock::time_point lastLine_;
};

/// The run's summary; `text` for a text run (validation loss and bits per
/// character instead of the test loss and accuracy).
llvm::Error writeJson(llvm::StringRef path, const FitSummary &s,
                      const TextInfo *text) {
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
  auto bits = [](std::optional<double> loss) -> std::optional<double> {
    if (!loss)
      return std::nullopt;
    return bitsPerCharacter(*loss);
  };
  // The evaluation of an epoch (or of the run's last): a test split's loss
  // and accuracy; the validation loss and accuracy when validating (a
  // text's, with bits per character, always).
  auto evaluation = [&](const EpochSummary *e) {
    EpochSummary none;
    if (!e)
      e = &none;
    if (!text) {
      number("test_loss", e->testLoss);
      number("test_accuracy", e->testAccuracy);
    }
    if (!text && !s.validationExamples)
      return;
    number("validation_loss", e->validationLoss);
    if (text)
      number("bits_per_character", bits(e->validationLoss));
    number("validation_accuracy", e->validationAccuracy);
  };
  json.object([&] {
    json.attribute("format", text ? "text" : "idx");
    json.attribute("epochs", int64_t(s.history.size()));
    json.attribute("steps", s.steps);
    json.attribute("total_steps", s.totalSteps);
    json.attribute("batch_size", s.batchSize);
    json.attribute("steps_per_call", s.stepsPerCall);
    json.attribute("seed", int64_t(s.seed));
    json.attribute("threads", int64_t(s.threads));
    json.attribute("ranks", int64_t(s.ranks));
    if (!s.allReduceAlgorithm.empty())
      json.attribute("allreduce", s.allReduceAlgorithm);
    number("allreduce_seconds", s.allReduceSeconds);
    json.attributeArray("allreduce_seconds_per_rank", [&] {
      for (double seconds : s.allReduceSecondsPerRank)
        json.value(seconds);
    });
    number("train_seconds", s.trainSeconds);
    number("steps_per_second",
           s.trainSeconds > 0 ? double(s.steps) / s.trainSeconds : 0.0);
    number("compile_seconds", s.compileSeconds);
    number("evaluation_seconds", s.evaluationSeconds);
    json.attribute("stopped_early", s.stoppedEarly);
    json.attribute("train_examples", s.trainExamples);
    json.attribute("validation_examples", s.validationExamples);
    json.attribute("early_stopped", s.earlyStopped);
    if (s.bestEpoch)
      json.attribute("best_epoch", *s.bestEpoch + 1);
    else
      json.attribute("best_epoch", nullptr);
    json.attribute("restored_best_weights", s.restoredBestWeights);
    if (text) {
      json.attribute("context", text->context);
      json.attribute("files", text->files);
      json.attribute("bytes", text->bytes);
      json.attribute("train_windows", text->trainWindows);
      json.attribute("validation_windows", text->validationWindows);
      json.attribute("validation_bytes", text->validationBytes);
    }
    number("final_train_loss",
           last ? std::optional<double>(last->trainLoss) : std::nullopt);
    evaluation(last);
    json.attributeArray("history", [&] {
      for (const EpochSummary &e : s.history)
        json.object([&] {
          json.attribute("epoch", e.epoch + 1);
          json.attribute("complete", e.complete);
          json.attribute("steps", e.steps);
          number("seconds", e.seconds);
          number("train_loss", e.trainLoss);
          evaluation(&e);
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
/// they are read before it is first written.) A text directory's files are
/// all read: an output written in it would be text to the next run.
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
  std::string data = dataPath();
  if (format == DataFormat::Text) {
    // Unreadable data is reported when it is read.
    llvm::Expected<std::vector<std::string>> files = data::textFiles(data);
    if (files) {
      for (const std::string &file : *files)
        inputs.push_back({"--data", file});
    } else {
      llvm::consumeError(files.takeError());
    }
    if (llvm::sys::fs::is_directory(data))
      for (const NamedPath &output : outputs) {
        llvm::SmallString<256> dir(output.path);
        llvm::sys::path::remove_filename(dir);
        if (dir.empty())
          dir = ".";
        if (sameFile(dir, data))
          return llvm::createStringError(
              output.option + " '" + output.path +
              "' is in the --data directory '" + data +
              "': the next run would read it as text");
      }
  } else {
    for (llvm::StringRef split : {"train", "t10k"})
      for (llvm::StringRef kind : {"images-idx3-ubyte", "labels-idx1-ubyte"})
        for (llvm::StringRef suffix : {"", ".gz"}) {
          llvm::SmallString<256> file(data);
          llvm::sys::path::append(file, split + "-" + kind + suffix);
          if (llvm::sys::fs::exists(file))
            inputs.push_back({"--data", std::string(file)});
        }
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

/// What a rank says when the launcher ends it (mpirun's SIGTERM after
/// another rank died), written by the signal handler.
char terminatedMessage[160];

extern "C" void onTerminate(int) {
  ssize_t ignored =
      ::write(STDERR_FILENO, terminatedMessage, std::strlen(terminatedMessage));
  (void)ignored;
  ::_exit(128 + SIGTERM);
}

/// The ranks of `mpirun -np N fusec train` (N > 1), or null: one process.
llvm::Expected<std::unique_ptr<Communicator>> ranksOfThisRun() {
#ifdef FUSE_HAVE_MPI
  if (launchedAsMpiRanks())
    switch (allReduceAlgorithm) {
    case MpiAllReduceChoice::Auto:
      return mpiWorldCommunicator(MpiAllReduce::Auto);
    case MpiAllReduceChoice::SharedMemory:
      return mpiWorldCommunicator(MpiAllReduce::SharedMemory);
    case MpiAllReduceChoice::Ring:
      return mpiWorldCommunicator(MpiAllReduce::Ring);
    case MpiAllReduceChoice::Mpi:
      return mpiWorldCommunicator(MpiAllReduce::Library);
    }
#endif
  return nullptr;
}

/// The threads of each rank when --threads is not given: the CPUs shared by
/// the ranks on this machine (OpenMPI's local size), at least 1.
unsigned threadsPerRank(unsigned threads) {
  const char *local = std::getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
  if (threads || !local || std::atoi(local) < 2 ||
      std::getenv("FUSE_NUM_THREADS"))
    return threads;
  unsigned cpus = llvm::hardware_concurrency().compute_thread_count();
  return std::max(1u, cpus / unsigned(std::atoi(local)));
}

} // namespace

int fusec::trainMain() {
  llvm::Expected<std::unique_ptr<Communicator>> ranks = ranksOfThisRun();
  if (!ranks)
    return fusec::exitCode("train", ranks.takeError());
  Communicator *comm = ranks->get();
  if (comm && comm->size() < 2)
    comm = nullptr;
  // One rank reports; an error on any rank ends them all (the others
  // would wait for it in their next collective).
  if (comm && comm->rank() != 0) {
    int null = ::open("/dev/null", O_WRONLY);
    if (null >= 0) {
      llvm::outs().flush();
      ::dup2(null, STDOUT_FILENO);
      ::close(null);
    }
  }
  if (comm) {
    std::snprintf(terminatedMessage, sizeof(terminatedMessage),
                  "fusec train: rank %d of %d: ended by the MPI launcher "
                  "(another rank failed or was killed)\n",
                  comm->rank(), comm->size());
    std::signal(SIGTERM, onTerminate);
  }
  auto fail = [comm](llvm::Error e) {
    if (!comm)
      return fusec::exitCode("train", std::move(e));
    int code = fusec::exitCode(
        "train", llvm::createStringError("rank " + llvm::Twine(comm->rank()) +
                                         " of " + llvm::Twine(comm->size()) +
                                         ": " + llvm::toString(std::move(e))));
    llvm::errs().flush();
    comm->abort(code);
    return code;
  };
  const bool text = format == DataFormat::Text;
  if (validationSplit.getNumOccurrences() &&
      validationFraction.getNumOccurrences())
    return fail(llvm::createStringError(
        "--validation-split and --validation-fraction both set the held-out "
        "share of the text: give one"));
  for (const cl::Option *textOnly : std::initializer_list<const cl::Option *>{
           &contextOption, &validationFraction})
    if (!text && textOnly->getNumOccurrences())
      return fail(llvm::createStringError(
          "--" + textOnly->ArgStr +
          " applies to text data only (--format=text), not to an IDX image "
          "set"));
  if (llvm::Error e = checkOutputPaths())
    return fail(std::move(e));
  if (!jsonPath.empty())
    if (llvm::Error e = checkWritable(jsonPath))
      return fail(std::move(e));
  EngineOptions engineOptions;
  if (lrSchedule.getNumOccurrences()) {
    llvm::Expected<LrSchedule> schedule = parseLrSchedule(lrSchedule);
    if (!schedule)
      return fail(schedule.takeError());
    engineOptions.trainStep.lrSchedule = *schedule;
  }
  for (auto [option, value] :
       {std::pair{&clipNorm, &engineOptions.trainStep.clipNorm},
        std::pair{&clipValue, &engineOptions.trainStep.clipValue}}) {
    if (!option->getNumOccurrences())
      continue;
    std::string error = clipError("--" + option->ArgStr.str(), *option);
    if (!error.empty())
      return fail(llvm::createStringError(error));
    *value = double(*option);
  }
  if (llvm::Error e = fusec::applyPrecision(engineOptions.trainStep))
    return fail(std::move(e));
  engineOptions.fusion = fusec::fusion;
  engineOptions.winograd = fusec::winograd;
  engineOptions.threads = threadsPerRank(fusec::threads());
  engineOptions.dataParallel = comm != nullptr;
  engineOptions.overlapCollectives = overlap;
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

  // A text's validation set is its tail: windows overlap, so a random
  // draw of them would validate on training bytes.
  bool bySplit = validationSplit.getNumOccurrences() > 0;
  llvm::Expected<std::unique_ptr<DataSets>> sets = loadDataSets(
      **engine, model, step,
      {text, dataPath(),
       contextOption.getNumOccurrences() ? std::optional<int64_t>(contextOption)
                                         : std::nullopt,
       bySplit ? double(validationSplit) : double(validationFraction),
       bySplit ? "--validation-split" : "--validation-fraction",
       /*withTrain=*/true});
  if (!sets)
    return fail(sets.takeError());
  const std::string data = dataPath();
  std::optional<data::TextSplit> &textSplit = (*sets)->textSplit;
  const TextInfo &textInfo = (*sets)->textInfo;
  // A text is validated on its tail, not tested.
  const data::DataSource *train = (*sets)->train,
                         *test = text ? nullptr : (*sets)->test;
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
  if (maxSeconds.getNumOccurrences())
    options.maxSeconds = maxSeconds;
  // About 64K tokens per evaluation call: its logits stay a few tens of MB
  // whatever the window length.
  if (text)
    options.evalBatchSize = evaluationBatchSize(textInfo.context);

  options.allowNonFiniteLoss = allowNan;
  if (text)
    options.validationData = &textSplit->validation;
  else if (validationSplit.getNumOccurrences())
    options.validationSplit = validationSplit;
  if (earlyStoppingPatience.getNumOccurrences())
    options.earlyStoppingPatience = earlyStoppingPatience;
  options.restoreBestWeights = restoreBestWeights;
  options.communicator = comm;
  llvm::outs() << "Training '" << step << "' of " << model << " on ";
  if (text)
    llvm::outs() << train->size() << " windows of " << textInfo.context
                 << " tokens of " << data << " (" << textInfo.files << " file"
                 << (textInfo.files == 1 ? "" : "s") << ", " << textInfo.bytes
                 << " bytes), validating on " << textInfo.validationWindows
                 << " windows of its last " << textInfo.validationBytes
                 << " bytes";
  else if (options.validationSplit) {
    int64_t held = data::validationCount(train->size(), validationSplit);
    llvm::outs() << train->size() - held << " images of " << data
                 << ", validating on " << held
                 << " held out (--validation-split "
                 << llvm::format("%g", double(validationSplit))
                 << "), testing on " << test->size();
  } else
    llvm::outs() << train->size() << " images of " << data << ", testing on "
                 << test->size();
  llvm::outs() << ", " << (*engine)->threads() << " thread"
               << ((*engine)->threads() == 1 ? "" : "s");
  if (comm)
    llvm::outs() << " x " << comm->size()
                 << " ranks (data-parallel, each a share of every batch; "
                    "all-reduce: "
                 << comm->allReduceAlgorithm() << ")";
  llvm::outs() << "\n";
  bool bar = progressStyle == ProgressStyle::Bar ||
             (progressStyle == ProgressStyle::Auto &&
              llvm::sys::Process::StandardOutIsDisplayed());
  Progress progress(llvm::outs(), bar, text);
  FitCallbacks callbacks;
  callbacks.onEpochBegin = [&](int64_t epoch, int64_t total) {
    progress.beginEpoch(epoch, total);
  };
  callbacks.onCall = [&](const FitProgress &p) { progress.update(p); };
  callbacks.onEpochEnd = [&](const EpochSummary &e) { progress.endEpoch(e); };
  llvm::Expected<FitSummary> summary =
      fit(**engine, *train, test, options, callbacks);
  if (!summary)
    return fail(summary.takeError());

  const FitSummary &s = *summary;
  llvm::outs() << llvm::format(
      "Trained %lld steps (batch %lld, %lld per call) in %.2fs (%.0f "
      "steps/s); compile %.2fs\n",
      (long long)s.steps, (long long)s.batchSize, (long long)s.stepsPerCall,
      s.trainSeconds, s.trainSeconds > 0 ? s.steps / s.trainSeconds : 0.0,
      s.compileSeconds);
  if (comm) {
    llvm::outs() << llvm::format(
        "All-reduce of the gradients: %.2fs (%.1f%% of training) on rank 0",
        s.allReduceSeconds,
        s.trainSeconds > 0 ? 100 * s.allReduceSeconds / s.trainSeconds : 0.0);
    // The spread between ranks: what the faster ones waited for.
    llvm::outs() << "; each rank's:";
    for (double seconds : s.allReduceSecondsPerRank)
      llvm::outs() << llvm::format(" %.2fs", seconds);
    llvm::outs() << "\n";
  }
  if (s.stoppedEarly)
    llvm::outs() << "Stopped by --max-seconds "
                 << llvm::format("%g", double(maxSeconds)) << " at step "
                 << s.totalSteps
                 << (checkpoint.empty()
                         ? ""
                         : "; --resume " + checkpoint + " continues from there")
                 << "\n";
  if (s.earlyStopped) {
    const EpochSummary &best = s.history[*s.bestEpoch - s.history[0].epoch];
    llvm::outs() << "Early stopping after epoch " << s.history.back().epoch + 1
                 << ": no val_loss below the best for " << earlyStoppingPatience
                 << " epoch" << (earlyStoppingPatience == 1 ? "" : "s")
                 << "; the best, "
                 << "epoch " << *s.bestEpoch + 1 << "'s "
                 << llvm::format("%.4f", shown(*best.validationLoss))
                 << (s.restoredBestWeights ? ", restored" : "") << "\n";
  }
  const EpochSummary *last = s.history.empty() ? nullptr : &s.history.back();
  if (text && last && last->validationLoss)
    llvm::outs() << llvm::format(
        "Validation loss: %.4f (%.4f bits per character)\n",
        shown(*last->validationLoss),
        shown(bitsPerCharacter(*last->validationLoss)));
  else if (last && last->testAccuracy)
    llvm::outs() << llvm::format("Test accuracy: %.4f\n", *last->testAccuracy);
  if (fusec::profile) {
    std::vector<ProfileEntry> entries = fuse::profile();
    llvm::outs() << "Profile (" << s.steps << " steps, " << s.totalSteps
                 << " in total):\n";
    printProfile(llvm::outs(), entries);
  }
  if (fusec::stats())
    compileStats.print(llvm::outs());
  // Rank 0 reports.
  if (!jsonPath.empty() && (!comm || comm->rank() == 0))
    if (llvm::Error e = writeJson(jsonPath, s, text ? &textInfo : nullptr))
      return fail(std::move(e));
  return 0;
}
