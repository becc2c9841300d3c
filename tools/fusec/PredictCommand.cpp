//===- PredictCommand.cpp - fusec predict and fusec evaluate --------------===//
//
// `fusec predict MODEL.mlir --weights CKPT` writes the class probabilities
// and predicted label of every example of the test split (fuse::predict:
// the model's `@<step>_predict`, probabilities from its compiled softmax);
// `fusec evaluate` reports the loss and metrics there (fuse::evaluate: the
// loss and accuracy `fusec train` reports after its last epoch, the top-k
// accuracy, each class's precision and recall, the confusion matrix). The
// data options are train's (DataSets.h).
//
//===----------------------------------------------------------------------===//

#include "Commands.h"
#include "DataSets.h"

#include "fuse/Checkpoint.h"
#include "fuse/CompileStats.h"
#include "fuse/Data/Idx.h"
#include "fuse/Evaluate.h"
#include "fuse/Npy.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>

using namespace fuse;
using namespace fusec;
namespace cl = llvm::cl;

// Defined before the options that name them (one translation unit:
// constructed in order).
cl::SubCommand fusec::predictCommand(
    "predict", "Predict the classes of a data set's test examples with a "
               "trained model: probabilities and labels");
cl::SubCommand fusec::evaluateCommand(
    "evaluate", "Evaluate a trained model on a data set's test examples: "
                "loss, accuracy, top-k accuracy, precision, recall");

namespace {
cl::opt<std::string> model(cl::Positional, cl::desc("<model .mlir file>"),
                           cl::Required, cl::cat(fusec::category()),
                           cl::sub(fusec::predictCommand),
                           cl::sub(fusec::evaluateCommand));
cl::opt<std::string>
    weights("weights",
            cl::desc("The trained weights: a checkpoint or weights file "
                     "(safetensors, by parameter name)"),
            cl::value_desc("PATH"), cl::Required, cl::cat(fusec::category()),
            cl::sub(fusec::predictCommand), cl::sub(fusec::evaluateCommand));
enum class DataFormat { Idx, Text };
cl::opt<DataFormat> format(
    "format", cl::desc("What --data holds"), cl::init(DataFormat::Idx),
    cl::values(clEnumValN(DataFormat::Idx, "idx",
                          "an IDX image set (its t10k- files: the test split)"),
               clEnumValN(DataFormat::Text, "text",
                          "text: every byte a token, windows of --context "
                          "tokens; the held-out tail's windows")),
    cl::cat(fusec::category()), cl::sub(fusec::predictCommand),
    cl::sub(fusec::evaluateCommand));
cl::opt<std::string> dataOption(
    "data",
    cl::desc("As fusec train's: --format=idx: the directory of the IDX files "
             "(default: Debian's dataset-fashion-mnist); --format=text: a "
             "file or directory (default: Debian's fortunes)"),
    cl::value_desc("PATH"), cl::cat(fusec::category()),
    cl::sub(fusec::predictCommand), cl::sub(fusec::evaluateCommand));
cl::opt<int64_t> contextOption(
    "context",
    cl::desc("--format=text: tokens per window (default: the model's)"),
    cl::value_desc("T"), cl::cat(fusec::category()),
    cl::sub(fusec::predictCommand), cl::sub(fusec::evaluateCommand));
cl::opt<double> validationFraction(
    "validation-fraction",
    cl::desc("--format=text: the share of the text held out at its end, as "
             "in training (default 0.1)"),
    cl::init(data::kDefaultValidationFraction), cl::cat(fusec::category()),
    cl::sub(fusec::predictCommand), cl::sub(fusec::evaluateCommand));
cl::opt<std::string> step("step",
                          cl::desc("The step function (fuse.train_step)"),
                          cl::init("train"), cl::cat(fusec::category()),
                          cl::sub(fusec::predictCommand),
                          cl::sub(fusec::evaluateCommand));
cl::opt<int64_t> batchSize(
    "batch-size",
    cl::desc("Examples per call (predict: default 32; evaluate: default as "
             "fusec train's evaluation, 1000, or about 64K tokens of text)"),
    cl::cat(fusec::category()), cl::sub(fusec::predictCommand),
    cl::sub(fusec::evaluateCommand));
cl::opt<std::string> jsonPath("json", cl::desc("Write the results as JSON"),
                              cl::value_desc("PATH"),
                              cl::cat(fusec::category()),
                              cl::sub(fusec::predictCommand),
                              cl::sub(fusec::evaluateCommand));
cl::opt<std::string>
    npyOut("npy-out",
           cl::desc("Write PREFIXprobabilities.npy ([rows, classes] f32), "
                    "PREFIXlogits.npy and PREFIXlabels.npy ([rows] i64)"),
           cl::value_desc("PREFIX"), cl::cat(fusec::category()),
           cl::sub(fusec::predictCommand));
cl::opt<int64_t> topK("top-k",
                      cl::desc("The k of the top-k accuracy (default 5, "
                               "capped at the number of classes)"),
                      cl::init(5), cl::cat(fusec::category()),
                      cl::sub(fusec::evaluateCommand));

/// `x` as printed: a NaN without its sign bit.
double shown(double x) { return std::isnan(x) ? std::fabs(x) : x; }

std::string dataPath() {
  if (dataOption.getNumOccurrences())
    return dataOption;
  return std::string(format == DataFormat::Text ? data::kFortunesDir
                                                : data::kFashionMnistDir);
}

/// Writes `body` as JSON to `path`.
llvm::Error writeJson(llvm::StringRef path,
                      llvm::function_ref<void(llvm::json::OStream &)> body) {
  std::error_code ec;
  llvm::raw_fd_ostream file(path, ec);
  if (ec)
    return llvm::createStringError(ec, "%s: cannot write: %s",
                                   path.str().c_str(), ec.message().c_str());
  {
    llvm::json::OStream json(file, 2);
    body(json);
  }
  file << "\n";
  file.close();
  if (file.has_error())
    return llvm::createStringError(file.error(), "%s: cannot write: %s",
                                   path.str().c_str(),
                                   file.error().message().c_str());
  return llvm::Error::success();
}

/// JSON has no NaN or infinity: null.
void number(llvm::json::OStream &json, llvm::StringRef key,
            std::optional<double> v) {
  if (v && std::isfinite(*v))
    json.attribute(key, *v);
  else
    json.attribute(key, nullptr);
}

/// The engine, the model's parameters and the test data, shared by both
/// commands.
struct Session {
  std::unique_ptr<Engine> engine;
  std::unique_ptr<Trainer> parameters;
  std::unique_ptr<DataSets> data;
  bool text = false;
};

llvm::Expected<Session> open(CompileStats *stats) {
  Session s;
  s.text = format == DataFormat::Text;
  for (const cl::Option *textOnly : std::initializer_list<const cl::Option *>{
           &contextOption, &validationFraction})
    if (!s.text && textOnly->getNumOccurrences())
      return llvm::createStringError(
          "--" + textOnly->ArgStr +
          " applies to text data only (--format=text), not to an IDX image "
          "set");
  if (batchSize.getNumOccurrences() && batchSize < 1)
    return llvm::createStringError("--batch-size must be at least 1, got " +
                                   llvm::Twine(int64_t(batchSize)));
  if (!jsonPath.empty())
    if (llvm::Error e = checkWritable(jsonPath))
      return std::move(e);
  EngineOptions options;
  options.fusion = fusec::fusion;
  options.winograd = fusec::winograd;
  options.threads = fusec::threads();
  options.compileStats = stats;
  if (llvm::Error e = fusec::applyPrecision(options.trainStep))
    return std::move(e);
  llvm::Expected<std::unique_ptr<Engine>> engine = Engine::create(options);
  if (!engine)
    return engine.takeError();
  s.engine = std::move(*engine);
  if (llvm::Error e = s.engine->loadFile(model))
    return std::move(e);
  llvm::Expected<std::unique_ptr<Trainer>> parameters =
      loadTrainedModel(*s.engine, step, weights);
  if (!parameters)
    return parameters.takeError();
  s.parameters = std::move(*parameters);
  llvm::Expected<std::unique_ptr<DataSets>> data = loadDataSets(
      *s.engine, model, step,
      {s.text, dataPath(),
       contextOption.getNumOccurrences() ? std::optional<int64_t>(contextOption)
                                         : std::nullopt,
       validationFraction, "--validation-fraction", /*withTrain=*/false});
  if (!data)
    return data.takeError();
  s.data = std::move(*data);
  return s;
}

llvm::Error runPredict(CompileStats *stats) {
  llvm::Expected<Session> session = open(stats);
  if (!session)
    return session.takeError();
  PredictOptions options;
  options.stepFunction = step;
  if (batchSize.getNumOccurrences())
    options.batchSize = batchSize;
  const data::DataSource &test = *session->data->test;
  llvm::Expected<Predictions> p =
      predict(*session->engine, *session->parameters, test, options);
  if (!p)
    return p.takeError();
  const int64_t rows = p->examples * p->rowsPerExample;
  const float *probabilities = p->probabilities.data<float>();
  llvm::errs() << "Predicted " << p->examples << " examples of " << dataPath()
               << " (" << rows << " rows of " << p->classes << " classes)\n";
  if (!npyOut.empty()) {
    Tensor labels = Tensor::zeros(DType::I64, {rows});
    std::copy(p->labels.begin(), p->labels.end(), labels.data<int64_t>());
    for (auto [name, tensor] : {std::pair<const char *, const Tensor *>{
                                    "probabilities", &p->probabilities},
                                {"logits", &p->logits},
                                {"labels", &labels}})
      if (llvm::Error e = writeNpy(npyOut + name + ".npy", *tensor))
        return e;
  }
  if (!jsonPath.empty())
    if (llvm::Error e = writeJson(jsonPath, [&](llvm::json::OStream &json) {
          json.object([&] {
            json.attribute("examples", p->examples);
            json.attribute("rows_per_example", p->rowsPerExample);
            json.attribute("classes", p->classes);
            json.attributeArray("labels", [&] {
              for (int64_t label : p->labels)
                json.value(label);
            });
            // Each float exactly: JSON numbers print 17 digits.
            json.attributeArray("probabilities", [&] {
              for (int64_t r = 0; r < rows; ++r)
                json.array([&] {
                  for (int64_t c = 0; c < p->classes; ++c)
                    json.value(double(probabilities[r * p->classes + c]));
                });
            });
          });
        }))
      return e;
  // Without a file, the predictions go to stdout: row, label, probability.
  if (jsonPath.empty() && npyOut.empty())
    for (int64_t r = 0; r < rows; ++r)
      llvm::outs() << r << " " << p->labels[r] << " "
                   << llvm::format("%.6f",
                                   probabilities[r * p->classes + p->labels[r]])
                   << "\n";
  return llvm::Error::success();
}

llvm::Error runEvaluate(CompileStats *stats) {
  if (topK < 1)
    return llvm::createStringError("--top-k must be at least 1, got " +
                                   llvm::Twine(int64_t(topK)));
  llvm::Expected<Session> session = open(stats);
  if (!session)
    return session.takeError();
  EvaluateOptions options;
  options.stepFunction = step;
  options.topK = topK;
  if (batchSize.getNumOccurrences())
    options.batchSize = batchSize;
  else if (session->text)
    options.batchSize = evaluationBatchSize(session->data->textInfo.context);
  const data::DataSource &test = *session->data->test;
  llvm::Expected<Evaluation> e =
      evaluate(*session->engine, *session->parameters, test, options);
  if (!e)
    return e.takeError();
  const bool text = session->text;
  double bits = e->loss / std::log(2.0);
  llvm::outs() << "Evaluated '" << step.getValue() << "' of " << model << " on "
               << e->examples
               << (text ? " validation windows of " : " test examples of ")
               << dataPath() << "\n";
  // The lines fusec train ends with.
  if (text)
    llvm::outs() << llvm::format(
        "Validation loss: %.4f (%.4f bits per character)\n", shown(e->loss),
        shown(bits));
  else
    llvm::outs() << llvm::format("Test loss: %.4f\n", shown(e->loss));
  if (e->accuracy)
    llvm::outs() << llvm::format("%s accuracy: %.4f\n",
                                 text ? "Validation" : "Test", *e->accuracy);
  if (e->topKAccuracy)
    llvm::outs() << llvm::format("Top-%lld accuracy: %.4f\n",
                                 (long long)e->topK, *e->topKAccuracy);
  if (!text && !e->confusion.empty()) {
    llvm::outs() << "class  precision  recall  support\n";
    for (int64_t c = 0; c < e->classes; ++c) {
      int64_t support = 0;
      for (int64_t n : e->confusion[c])
        support += n;
      auto cell = [](std::optional<double> v) {
        return v ? llvm::formatv("{0,9:f4}", *v).str()
                 : std::string("        -");
      };
      llvm::outs() << llvm::format("%5lld", (long long)c) << "  "
                   << cell(e->precision[c]) << " " << cell(e->recall[c])
                   << llvm::format("  %7lld", (long long)support) << "\n";
    }
  }
  if (jsonPath.empty())
    return llvm::Error::success();
  return writeJson(jsonPath, [&](llvm::json::OStream &json) {
    json.object([&] {
      json.attribute("format", text ? "text" : "idx");
      json.attribute("examples", e->examples);
      json.attribute("labels", e->labels);
      number(json, "loss", e->loss);
      if (text)
        number(json, "bits_per_character", bits);
      number(json, "accuracy", e->accuracy);
      if (!e->topKAccuracy)
        return;
      json.attribute("classes", e->classes);
      json.attribute("top_k", e->topK);
      number(json, "top_k_accuracy", e->topKAccuracy);
      // A byte model's 256 classes: the matrix is not what one reads.
      if (text)
        return;
      auto perClass = [&](llvm::StringRef key,
                          llvm::ArrayRef<std::optional<double>> values) {
        json.attributeArray(key, [&] {
          for (std::optional<double> v : values)
            if (v)
              json.value(*v);
            else
              json.value(nullptr);
        });
      };
      perClass("precision", e->precision);
      perClass("recall", e->recall);
      json.attributeArray("confusion_matrix", [&] {
        for (const std::vector<int64_t> &row : e->confusion)
          json.array([&] {
            for (int64_t n : row)
              json.value(n);
          });
      });
    });
  });
}

int finish(llvm::StringRef command, llvm::Error (*run)(CompileStats *)) {
  CompileStats compileStats;
  if (llvm::Error e = run(fusec::stats() ? &compileStats : nullptr))
    return fusec::exitCode(command, std::move(e));
  if (fusec::stats())
    compileStats.print(llvm::outs());
  return 0;
}

} // namespace

int fusec::predictMain() { return finish("predict", runPredict); }
int fusec::evaluateMain() { return finish("evaluate", runEvaluate); }
