//===- Checkpoint.cpp - Saving and restoring training ---------------------===//

#include "fuse/Checkpoint.h"
#include "fuse/Data/Safetensors.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"

using namespace fuse;
using llvm::Error;
using llvm::Expected;

static constexpr llvm::StringLiteral kFormat = "fuse.checkpoint.v1";

Error fuse::saveCheckpoint(const Trainer &trainer, llvm::StringRef path,
                           Metadata metadata) {
  std::vector<data::NamedTensor> tensors;
  for (const std::string &name : trainer.stateNames()) {
    Expected<Tensor> value = trainer.state(name);
    if (!value)
      return value.takeError();
    tensors.push_back({name, *value});
  }
  metadata["format"] = kFormat.str();
  metadata["function"] = trainer.name().str();
  metadata["step"] = std::to_string(trainer.step());
  return data::writeSafetensors(path, tensors, metadata);
}

/// Checks that every tensor of `file` fits a carried tensor of `trainer`
/// and, when `complete`, that every carried tensor is in the file.
static Error checkFits(const Trainer &trainer, const data::Safetensors &file,
                       llvm::StringRef path, bool complete) {
  auto fromAnother = [&](const llvm::Twine &why) {
    return llvm::createStringError(path +
                                   ": not a checkpoint of this model ('" +
                                   trainer.name() + "'): " + why);
  };
  for (const data::NamedTensor &entry : file.tensors) {
    if (!llvm::is_contained(trainer.stateNames(), entry.name))
      return fromAnother("it holds '" + entry.name +
                         "', which the model does not have (the model has " +
                         llvm::join(trainer.stateNames(), ", ") + ")");
    Expected<Tensor> current = trainer.state(entry.name);
    if (!current)
      return current.takeError();
    if (current->typeString() != entry.tensor.typeString())
      return fromAnother("'" + entry.name + "' is " +
                         entry.tensor.typeString() + " there and " +
                         current->typeString() + " in the model");
  }
  if (complete)
    for (const std::string &name : trainer.stateNames())
      if (!file.find(name))
        return fromAnother("it has no '" + name + "'");
  return Error::success();
}

static Error setAll(Trainer &trainer, const data::Safetensors &file) {
  for (const data::NamedTensor &entry : file.tensors)
    if (Error err = trainer.setState(entry.name, entry.tensor))
      return err;
  return Error::success();
}

Expected<Metadata> fuse::loadCheckpoint(Trainer &trainer,
                                        llvm::StringRef path) {
  Expected<data::Safetensors> file = data::readSafetensors(path);
  if (!file)
    return file.takeError();
  const Metadata &metadata = file->metadata;
  auto field = [&](llvm::StringRef key) -> std::string {
    auto it = metadata.find(key.str());
    return it == metadata.end() ? "" : it->second;
  };
  if (field("format") != kFormat)
    return llvm::createStringError(
        path +
        ": not a Fuse checkpoint (its metadata has no "
        "format = " +
        kFormat + ")");
  if (field("function") != trainer.name())
    return llvm::createStringError(path + ": the checkpoint's function '" +
                                   field("function") + "' is not '" +
                                   trainer.name() + "'");
  int64_t step;
  if (llvm::StringRef(field("step")).getAsInteger(10, step) || step < 0)
    return llvm::createStringError(path + ": the checkpoint's step '" +
                                   field("step") + "' is not a step number");
  if (Error err = checkFits(trainer, *file, path, /*complete=*/true))
    return std::move(err);
  if (Error err = setAll(trainer, *file))
    return std::move(err);
  trainer.setStep(step);
  return metadata;
}

Error fuse::loadWeights(Trainer &trainer, llvm::StringRef path) {
  Expected<data::Safetensors> file = data::readSafetensors(path);
  if (!file)
    return file.takeError();
  if (Error err = checkFits(trainer, *file, path, /*complete=*/false))
    return err;
  return setAll(trainer, *file);
}

Error fuse::checkWritable(llvm::StringRef path) {
  llvm::SmallString<256> dir(path);
  llvm::sys::path::remove_filename(dir);
  if (dir.empty())
    dir = ".";
  if (llvm::sys::fs::is_directory(path))
    return llvm::createStringError(path + ": is a directory");
  if (!llvm::sys::fs::is_directory(dir))
    return llvm::createStringError(path + ": directory '" + dir +
                                   "' does not exist");
  // Creating a file is the only reliable test (root ignores permissions,
  // not read-only file systems).
  llvm::SmallString<256> probe(dir);
  llvm::sys::path::append(probe, ".fuse-write-test-%%%%%%");
  int fd;
  llvm::SmallString<256> probePath;
  if (std::error_code ec =
          llvm::sys::fs::createUniqueFile(probe, fd, probePath))
    return llvm::createStringError(path + ": cannot write in directory '" +
                                   dir + "': " + ec.message());
  llvm::sys::Process::SafelyCloseFileDescriptor(fd);
  llvm::sys::fs::remove(probePath);
  return Error::success();
}
