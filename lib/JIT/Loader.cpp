//===- Loader.cpp - Modules loaded into the engine ------------------------===//
//
// Parsing and differentiating a module once, and the argument and result
// metadata each of its functions reports.
//
//===----------------------------------------------------------------------===//

#include "EngineImpl.h"
#include "fuse/Compiler.h"
#include "fuse/Parse.h"
#include "fuse/SourceNames.h"

#include "Fuse/IR/FuseDialect.h"
#include "Fuse/IR/FuseOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/SHA256.h"

using namespace fuse;

namespace fuse {

mlir::Type mlirType(DType dtype, mlir::MLIRContext *context) {
  mlir::Builder b(context);
  switch (dtype) {
  case DType::F32:
    return b.getF32Type();
  case DType::F64:
    return b.getF64Type();
  case DType::F16:
    return b.getF16Type();
  case DType::BF16:
    return b.getBF16Type();
  case DType::I1:
    return b.getI1Type();
  case DType::I8:
    return b.getI8Type();
  case DType::I16:
    return b.getI16Type();
  case DType::I32:
    return b.getI32Type();
  case DType::I64:
    return b.getI64Type();
  }
  return {};
}

/// The dtype of an MLIR element type, if it has one.
std::optional<DType> dtypeOfType(mlir::Type type) {
  for (DType dtype : {DType::F32, DType::F64, DType::F16, DType::BF16,
                      DType::I1, DType::I8, DType::I16, DType::I32, DType::I64})
    if (mlirType(dtype, type.getContext()) == type)
      return dtype;
  return std::nullopt;
}

} // namespace fuse

namespace {

/// Sets `overrides` on every fuse.train_step of `module`; returns a text
/// that tells the result apart from the source's (for the disk cache's
/// key), empty when there is nothing to set.
llvm::Expected<std::string>
applyOverrides(mlir::ModuleOp module, const TrainStepOverrides &overrides) {
  if (overrides.empty())
    return std::string();
  std::string key;
  llvm::raw_string_ostream os(key);
  mlir::Builder b(module.getContext());
  fuse::LrScheduleAttr schedule;
  if (const std::optional<LrSchedule> &s = overrides.lrSchedule) {
    std::string error = lrScheduleError(*s);
    if (!error.empty())
      return llvm::createStringError("invalid lr_schedule: " + error);
    bool gamma = s->kind == LrScheduleKind::Step ||
                 s->kind == LrScheduleKind::Exponential;
    schedule = fuse::LrScheduleAttr::get(
        module.getContext(), static_cast<fuse::ScheduleKind>(s->kind),
        s->warmup, s->decaySteps,
        llvm::APFloat(s->gamma.value_or(gamma ? kDefaultLrGamma : 0.0)),
        llvm::APFloat(s->min.value_or(0.0)));
    os << " lr_schedule = " << schedule;
  }
  for (auto [name, value] : {std::pair{"clip_norm", overrides.clipNorm},
                             std::pair{"clip_value", overrides.clipValue}})
    if (value) {
      std::string error = clipError(name, *value);
      if (!error.empty())
        return llvm::createStringError(error);
      os << " " << name << " = " << llvm::format("%a", *value);
    }
  if (overrides.precision)
    os << " precision = " << precisionName(*overrides.precision);
  if (overrides.masterWeights)
    os << " master_weights = " << masterWeightsName(*overrides.masterWeights);
  for (auto step : module.getOps<fuse::TrainStepOp>()) {
    if (overrides.precision)
      step.setPrecisionAttr(
          b.getStringAttr(precisionName(*overrides.precision)));
    if (overrides.masterWeights)
      step.setMasterWeightsAttr(
          b.getStringAttr(masterWeightsName(*overrides.masterWeights)));
    if (schedule)
      step.setLrScheduleAttr(schedule);
    if (overrides.clipNorm)
      step.setClipNormAttr(b.getF64FloatAttr(*overrides.clipNorm));
    if (overrides.clipValue)
      step.setClipValueAttr(b.getF64FloatAttr(*overrides.clipValue));
  }
  return key;
}

/// The public mirror of `#fuse.init`.
Initializer toInitializer(fuse::InitializerAttr attr) {
  using Kind = Initializer::Kind;
  Kind kind = Kind::Zeros;
  switch (attr.getKind()) {
  case fuse::InitKind::zeros:
    kind = Kind::Zeros;
    break;
  case fuse::InitKind::ones:
    kind = Kind::Ones;
    break;
  case fuse::InitKind::constant:
    kind = Kind::Constant;
    break;
  case fuse::InitKind::uniform:
    kind = Kind::Uniform;
    break;
  case fuse::InitKind::normal:
    kind = Kind::Normal;
    break;
  case fuse::InitKind::glorot_uniform:
    kind = Kind::GlorotUniform;
    break;
  case fuse::InitKind::glorot_normal:
    kind = Kind::GlorotNormal;
    break;
  case fuse::InitKind::he_uniform:
    kind = Kind::HeUniform;
    break;
  case fuse::InitKind::he_normal:
    kind = Kind::HeNormal;
    break;
  }
  return {kind, attr.getScale().convertToDouble()};
}

/// A declared shape for the API: -1 for a dynamic dim.
std::vector<int64_t> declaredShape(mlir::RankedTensorType type) {
  std::vector<int64_t> shape;
  for (int64_t d : type.getShape())
    shape.push_back(mlir::ShapedType::isDynamic(d) ? -1 : d);
  return shape;
}

} // namespace

std::string ArgumentInfo::typeString() const {
  std::string s = "tensor<";
  for (int64_t d : shape)
    s += (d < 0 ? std::string("?") : std::to_string(d)) + "x";
  return s + dtypeName(dtype).str() + ">";
}

Error Engine::loadFile(llvm::StringRef path) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> file =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!file)
    return llvm::createStringError("cannot open '" + path +
                                   "': " + file.getError().message());
  return loadString((*file)->getBuffer(), path);
}

Error Engine::loadString(llvm::StringRef source, llvm::StringRef bufferName) {
  Impl &impl = *impl_;
  std::lock_guard<std::mutex> lock(impl.contextMutex);
  auto loaded = std::make_unique<LoadedModule>();
  loaded->source = source.str();
  std::array<uint8_t, 32> digest =
      llvm::SHA256::hash(llvm::arrayRefFromStringRef(loaded->source));
  loaded->sourceHash = llvm::toHex(digest, /*LowerCase=*/true);
  loaded->sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBuffer(loaded->source, bufferName,
                                       /*RequiresNullTerminator=*/true),
      llvm::SMLoc());
  std::string diagnostics;
  llvm::raw_string_ostream os(diagnostics);
  std::string unit = ("module " + bufferName).str();
  {
    mlir::SourceMgrDiagnosticHandler handler(loaded->sourceMgr, &impl.context,
                                             os);
    PhaseTimer timer(impl.options.compileStats, unit, "parse");
    loaded->module = parseModule(loaded->sourceMgr, &impl.context);
  }
  if (!loaded->module)
    return llvm::createStringError(diagnostics);
  llvm::Expected<std::string> overridden =
      applyOverrides(*loaded->module, impl.options.trainStep);
  if (!overridden)
    return overridden.takeError();
  // Data-parallel step functions compile to other code: another cache key.
  if (impl.options.dataParallel)
    *overridden += " data_parallel";
  // As ReLU masks under the bf16 policy (fuse-apply-precision-policy).
  if (!impl.options.flushDenormals)
    *overridden += " subnormals_kept";
  if (!overridden->empty())
    loaded->sourceHash =
        llvm::toHex(llvm::SHA256::hash(llvm::arrayRefFromStringRef(
                        loaded->source + "\n//" + *overridden)),
                    /*LowerCase=*/true);
  nameArguments(*loaded->module, loaded->sourceMgr);
  {
    // Whole-module rewrites happen once, before any specialization.
    mlir::SourceMgrDiagnosticHandler handler(loaded->sourceMgr, &impl.context,
                                             os);
    PhaseTimer timer(impl.options.compileStats, unit, "differentiate");
    DifferentiateOptions differentiate;
    differentiate.dataParallel = impl.options.dataParallel;
    differentiate.flushedDenormals = impl.options.flushDenormals;
    if (failed(differentiateModule(*loaded->module, differentiate)))
      return llvm::createStringError(diagnostics);
  }

  // Functions are registered only once the whole module loads: each refers
  // to its module, which is kept only then.
  std::vector<std::unique_ptr<Function>> loadedFunctions;
  for (mlir::func::FuncOp func : loaded->module->getOps<mlir::func::FuncOp>()) {
    if (func.isExternal())
      continue;
    if (impl.functions.count(func.getSymName()))
      return llvm::createStringError("function '" + func.getSymName() +
                                     "' is already loaded");
    auto fn = std::make_unique<Function::Impl>();
    fn->engine = &impl;
    fn->module = loaded.get();
    fn->name = func.getSymName().str();
    for (auto [i, arg] : llvm::enumerate(func.getArguments())) {
      auto type = llvm::dyn_cast<mlir::RankedTensorType>(arg.getType());
      if (!type || !dtypeOfType(type.getElementType()))
        return llvm::createStringError(
            "function '" + fn->name + "': argument #" + llvm::Twine(i) +
            " is not a ranked tensor of a supported dtype");
      fn->argTypes.push_back(type);
      fn->argNames.push_back(argumentName(func, i));
      ArgumentInfo info{fn->argNames.back(),
                        *dtypeOfType(type.getElementType()),
                        declaredShape(type)};
      info.perStep = static_cast<bool>(func.getArgAttr(i, kPerStepAttrName));
      info.stepCounter =
          static_cast<bool>(func.getArgAttr(i, kStepCounterAttrName));
      info.stacked = static_cast<bool>(func.getArgAttr(i, kStackedAttrName));
      if (auto init =
              func.getArgAttrOfType<fuse::InitializerAttr>(i, kInitAttrName))
        info.init = toInitializer(init);
      if (auto classes =
              func.getArgAttrOfType<mlir::IntegerAttr>(i, kClassLabelsAttrName))
        info.classes = classes.getInt();
      if (auto low =
              func.getArgAttrOfType<mlir::IntegerAttr>(i, kSplitHalvesAttrName))
        info.lowHalf = low.getInt();
      if (auto high =
              func.getArgAttrOfType<mlir::IntegerAttr>(i, kLowHalfOfAttrName))
        info.highHalf = high.getInt();
      fn->stacked.push_back(info.stacked);
      if (info.stacked && fn->firstStacked < 0)
        fn->firstStacked = i;
      fn->arguments.push_back(std::move(info));
    }
    for (auto [j, result] : llvm::enumerate(func.getResultTypes())) {
      auto type = llvm::dyn_cast<mlir::RankedTensorType>(result);
      if (!type || !dtypeOfType(type.getElementType()))
        return llvm::createStringError(
            "function '" + fn->name + "': result #" + llvm::Twine(j) +
            " is not a ranked tensor of a supported dtype");
      ResultInfo info{*dtypeOfType(type.getElementType()), declaredShape(type)};
      if (auto index =
              func.getResultAttrOfType<mlir::IntegerAttr>(j, kInPlaceAttrName))
        info.inPlaceOf = index.getInt();
      info.stacked = static_cast<bool>(func.getResultAttr(j, kStackedAttrName));
      if (info.stacked && fn->firstStacked < 0)
        return llvm::createStringError(
            "function '" + fn->name + "': result #" + llvm::Twine(j) +
            " is stacked but no argument is: nothing gives the "
            "number of steps");
      fn->results.push_back(std::move(info));
    }
    loadedFunctions.push_back(std::make_unique<Function>(std::move(fn)));
  }
  for (std::unique_ptr<Function> &function : loadedFunctions) {
    std::string name = function->name().str();
    impl.functions[name] = std::move(function);
  }
  impl.modules.push_back(std::move(loaded));
  return Error::success();
}
