//===- DataSets.cpp - The data of fusec's train, predict, evaluate --------===//

#include "DataSets.h"

#include "fuse/ABI.h"
#include "fuse/Data/Idx.h"
#include "fuse/Fit.h"
#include "fuse/Trainer.h"

#include <limits>

using namespace fuse;

llvm::Expected<int64_t> fusec::classCount(Engine &engine, llvm::StringRef model,
                                          llvm::StringRef step, bool text) {
  llvm::Expected<Function &> fn = engine.lookup(step);
  if (fn && !llvm::errorToBool(
                engine.lookup(abi::stepsFunctionName(step)).takeError())) {
    std::optional<int64_t> classes;
    for (const ArgumentInfo &arg : fn->arguments()) {
      if (!arg.perStep || isFloatingPoint(arg.dtype) ||
          (text && arg.classes <= 0))
        continue;
      if (arg.classes <= 0)
        return llvm::createStringError(
            "cannot check the data's labels against '" + model + "': '" +
            arg.name + "' of '" + step +
            "' does not feed a softmax_cross_entropy directly (through "
            "slices, casts or reshapes), so its class count is unknown");
      classes = std::min(classes.value_or(arg.classes), arg.classes);
    }
    if (text && !classes)
      return llvm::createStringError(
          "cannot check the data's labels against '" + model +
          "': no batch input of '" + step +
          "' feeds a softmax_cross_entropy directly (through slices, casts "
          "or reshapes), so none is known to be the next tokens");
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

llvm::Expected<int64_t> fusec::modelContext(Engine &engine,
                                            llvm::StringRef step) {
  Function &fn = cantFail(engine.lookup(step));
  std::vector<const ArgumentInfo *> batch;
  for (const ArgumentInfo &arg : fn.arguments())
    if (arg.perStep)
      batch.push_back(&arg);
  if (batch.size() != 2)
    return llvm::createStringError(
        "--context is needed: '" + step + "' takes " +
        llvm::Twine(batch.size()) +
        " batch inputs, not two (tokens and next tokens)");
  const ArgumentInfo &tokens = *batch[1 - labelsArgument(*batch[0], *batch[1])];
  if (tokens.shape.size() != 2 || tokens.shape[1] < 0)
    return llvm::createStringError(
        "--context is needed: '" + tokens.name + "' of '" + step + "' is " +
        tokens.typeString() +
        ", not [batch, tokens] with a static number of tokens");
  return tokens.shape[1];
}

llvm::Expected<std::unique_ptr<fusec::DataSets>>
fusec::loadDataSets(Engine &engine, llvm::StringRef model, llvm::StringRef step,
                    const DataChoice &choice) {
  // The data's labels are checked against the model's class count (the
  // logits' last dim of its cross-entropy), naming the file; a model whose
  // count cannot be found is an error, never run unchecked.
  llvm::Expected<int64_t> classes =
      classCount(engine, model, step, choice.text);
  if (!classes)
    return classes.takeError();
  auto sets = std::make_unique<DataSets>();
  const std::string &data = choice.path;
  if (choice.text) {
    llvm::Expected<int64_t> context =
        choice.context ? llvm::Expected<int64_t>(*choice.context)
                       : modelContext(engine, step);
    if (!context)
      return context.takeError();
    llvm::Expected<data::TextCorpus> corpus = data::readTextCorpus(data);
    if (!corpus)
      return corpus.takeError();
    llvm::Expected<data::TextSplit> split =
        data::splitText(*corpus, data, *context, choice.validationFraction,
                        choice.validationOption);
    if (!split)
      return split.takeError();
    sets->textSplit = std::move(*split);
    sets->train = &sets->textSplit->train;
    sets->test = &sets->textSplit->validation;
    TextInfo &info = sets->textInfo;
    info.context = *context;
    info.files = int64_t(corpus->files.size());
    info.bytes = corpus->size();
    info.trainWindows = sets->train->size();
    info.validationWindows = sets->test->size();
    info.validationBytes = corpus->size() - sets->textSplit->validation.begin();
    return sets;
  }
  if (choice.withTrain) {
    llvm::Expected<data::TensorDataSource> idx =
        data::loadIdxSplit(data, data::Split::Train, *classes);
    if (!idx)
      return idx.takeError();
    sets->idxTrain = std::move(*idx);
    sets->train = &*sets->idxTrain;
  }
  llvm::Expected<data::TensorDataSource> idx =
      data::loadIdxSplit(data, data::Split::Test, *classes);
  if (!idx)
    return idx.takeError();
  sets->idxTest = std::move(*idx);
  sets->test = &*sets->idxTest;
  return sets;
}

int64_t fusec::evaluationBatchSize(int64_t context) {
  return std::max<int64_t>(1, 65536 / std::max<int64_t>(context, 1));
}
