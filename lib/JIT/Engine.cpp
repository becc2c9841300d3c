//===- Engine.cpp - Fuse's embeddable JIT ---------------------------------===//

#include "fuse/Engine.h"

#include "ClassLabels.h"
#include "ObjectCache.h"
#include "SignatureCache.h"
#include "Timers.h"
#include "fuse/Codegen.h"
#include "fuse/Parse.h"
#include "fuse/Passes.h"
#include "fuse/Pipeline.h"
#include "fuse/Profile.h"
#include "fuse/SourceNames.h"
#include "fuse/Version.h"

#include "Fuse/IR/FuseDialect.h"
#include "Fuse/IR/FuseOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/ExecutionEngine/CRunnerUtils.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Target/TargetMachine.h"

#include <chrono>
#include <mutex>

#include <dlfcn.h>

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

using namespace fuse;
using llvm::Error;
using llvm::Expected;

namespace {

/// The symbol the specialized function gets, so that no user function name
/// can shadow a C library symbol in the JIT.
constexpr llvm::StringLiteral kFunctionSymbol = "__fuse_function";
constexpr llvm::StringLiteral kEntrySymbol = "__fuse_entry";

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

/// The runtime functions compiled code may call, defined by address: MLIR's C
/// runtime (memrefCopy for strided copies; the reference also keeps the
/// runtime library linked) and the profile's timers.
Error defineRuntimeSymbols(llvm::orc::LLJIT &jit, llvm::orc::JITDylib &dylib) {
  llvm::orc::MangleAndInterner mangle(jit.getExecutionSession(),
                                      jit.getDataLayout());
  llvm::orc::SymbolMap symbols;
  symbols[mangle("memrefCopy")] = {
      llvm::orc::ExecutorAddr::fromPtr(&memrefCopy),
      llvm::JITSymbolFlags::Exported | llvm::JITSymbolFlags::Callable};
  symbols[mangle(kTimerStartSymbol)] = {
      llvm::orc::ExecutorAddr::fromPtr(&fuse_timer_start),
      llvm::JITSymbolFlags::Exported | llvm::JITSymbolFlags::Callable};
  symbols[mangle(kTimerStopSymbol)] = {
      llvm::orc::ExecutorAddr::fromPtr(&fuse_timer_stop),
      llvm::JITSymbolFlags::Exported | llvm::JITSymbolFlags::Callable};
  return dylib.define(llvm::orc::absoluteSymbols(std::move(symbols)));
}

/// Identifies the compiler that is running: objects compiled by another build
/// of Fuse (same version string, different code) must not be reused.
std::string compilerBuildIdentity() {
  std::string identity =
      std::string("fuse ") + FUSE_VERSION + "\nllvm " + LLVM_VERSION_STRING;
  auto describe = [&](const std::string &path) {
    llvm::sys::fs::file_status status;
    if (!llvm::sys::fs::status(path, status))
      identity +=
          "\nbinary " + std::to_string(status.getSize()) + " " +
          std::to_string(
              status.getLastModificationTime().time_since_epoch().count());
  };
  describe("/proc/self/exe");
  // The file holding this code, when Fuse is a shared library.
  Dl_info info;
  if (dladdr(reinterpret_cast<void *>(&compilerBuildIdentity), &info) &&
      info.dli_fname)
    describe(info.dli_fname);
  return identity;
}

/// A module holding only one function, specialized for a call, the specs
/// of its results (derived from the call, never read from a cache) and the
/// class count of each argument that is class labels (0: none).
struct Specialized {
  mlir::OwningOpRef<mlir::ModuleOp> module;
  std::vector<ResultSpec> results;
  std::vector<int64_t> classes;
};

struct LoadedModule {
  std::string source;
  std::string sourceHash;
  llvm::SourceMgr sourceMgr;
  mlir::OwningOpRef<mlir::ModuleOp> module;
};

} // namespace

//===----------------------------------------------------------------------===//
// Engine::Impl
//===----------------------------------------------------------------------===//

struct Engine::Impl {
  EngineOptions options;
  mlir::MLIRContext context;
  llvm::orc::JITTargetMachineBuilder machineBuilder;
  std::unique_ptr<llvm::orc::LLJIT> jit;
  std::optional<ObjectCache> diskCache;
  std::string cpu;
  std::string buildIdentity;
  /// Serializes everything that touches the MLIR context's IR or its
  /// diagnostic handlers: loading and compiling.
  std::mutex contextMutex;
  std::vector<std::unique_ptr<LoadedModule>> modules;
  llvm::StringMap<std::unique_ptr<Function>> functions;
  unsigned dylibCounter = 0;

  Impl(EngineOptions options, llvm::orc::JITTargetMachineBuilder builder)
      : options(std::move(options)),
        context(mlir::MLIRContext::Threading::DISABLED),
        machineBuilder(std::move(builder)) {}

  llvm::raw_ostream &warnings() {
    return options.warnings ? *options.warnings : llvm::errs();
  }
};

//===----------------------------------------------------------------------===//
// Function::Impl
//===----------------------------------------------------------------------===//

struct Function::Impl {
  Engine::Impl *engine;
  LoadedModule *module;
  std::string name;
  std::vector<std::string> argNames;
  llvm::SmallVector<mlir::RankedTensorType> argTypes;
  std::vector<ArgumentInfo> arguments;
  std::vector<ResultInfo> results;
  /// Per argument: `fuse.stacked` (dim 0 is the call's step count).
  llvm::SmallVector<bool> stacked;
  int firstStacked = -1;
  SignatureCache cache;
  std::atomic<uint64_t> hits{0}, misses{0}, diskHits{0}, compileMicros{0};
  std::atomic<bool> warnedRetrace{false};

  std::string describe(size_t i) const {
    return "argument '" + argNames[i] + "' (#" + std::to_string(i) + ") of '" +
           name + "'";
  }

  /// The number of steps of a call: dim 0 of the stacked arguments.
  int64_t steps(llvm::ArrayRef<Tensor> args) const {
    return firstStacked >= 0 ? args[firstStacked].shape()[0] : 0;
  }

  Error validate(llvm::ArrayRef<Tensor> args) const;
  Error validateSteps(llvm::ArrayRef<Tensor> args) const;
  /// Whether argument `i`'s byte size fits in 64 bits.
  Error checkSize(size_t i, const Tensor &arg) const;
  Expected<const Specialization *> specialization(llvm::ArrayRef<Tensor> args);
  Expected<std::unique_ptr<Specialization>> build(llvm::ArrayRef<Tensor> args);
  Expected<Specialized> specialize(llvm::ArrayRef<Tensor> args,
                                   std::string &diagnostics);
  Expected<CachedObject> compile(Specialized &specialized,
                                 llvm::ArrayRef<Tensor> args,
                                 std::string &diagnostics);
  bool fitsCall(const CachedObject &entry,
                llvm::ArrayRef<ResultSpec> results) const;
  Expected<Specialization::Entry> link(std::unique_ptr<llvm::MemoryBuffer>);
  /// Whether result `j` fits in memory (per step when stacked).
  Error checkResultSize(size_t j, const ResultSpec &result) const;
  /// The total of the workspace `buffers`, or an error when it exceeds
  /// maxTensorBytes().
  Expected<uint64_t> checkWorkspace(llvm::ArrayRef<uint64_t> buffers,
                                    const Signature &signature) const;
  void warnOnRetrace();
};

Error Function::Impl::validate(llvm::ArrayRef<Tensor> args) const {
  if (args.size() != argTypes.size())
    return llvm::createStringError(
        "function '" + name + "' takes " + llvm::Twine(argTypes.size()) +
        " arguments, got " + llvm::Twine(args.size()));
  for (auto [i, arg] : llvm::enumerate(args)) {
    mlir::RankedTensorType declared = argTypes[i];
    std::string expected;
    llvm::raw_string_ostream(expected) << declared;
    std::optional<DType> dtype = dtypeOfType(declared.getElementType());
    if (!dtype || *dtype != arg.dtype())
      return llvm::createStringError(describe(i) + ": expected " + expected +
                                     ", got dtype " + dtypeName(arg.dtype()));
    if (arg.rank() != declared.getRank())
      return llvm::createStringError(
          describe(i) + ": expected " + expected + " of rank " +
          llvm::Twine(declared.getRank()) + ", got rank " +
          llvm::Twine(arg.rank()) + " (" + arg.typeString() + ")");
    if (arg.strides().size() != arg.shape().size())
      return llvm::createStringError(
          describe(i) + ": " + llvm::Twine(arg.strides().size()) +
          " strides for rank " + llvm::Twine(arg.rank()));
    for (auto [d, size] : llvm::enumerate(arg.shape())) {
      if (size < 0)
        return llvm::createStringError(describe(i) + ": dim " + llvm::Twine(d) +
                                       " is negative (" + llvm::Twine(size) +
                                       ")");
      int64_t want = declared.getDimSize(d);
      if (!mlir::ShapedType::isDynamic(want) && want != size)
        return llvm::createStringError(describe(i) + ": dim " + llvm::Twine(d) +
                                       " is " + llvm::Twine(size) +
                                       ", expected " + llvm::Twine(want) +
                                       " (" + expected + ")");
    }
    if (Error e = checkSize(i, arg))
      return e;
  }
  return Error::success();
}

Error Function::Impl::checkSize(size_t i, const Tensor &arg) const {
  // Compiled code indexes with 64-bit byte offsets.
  if (!tensorBytes(arg.dtype(), arg.shape()))
    return llvm::createStringError(describe(i) + ": " + arg.typeString() +
                                   " is too large: its size in bytes "
                                   "overflows 64 bits");
  return Error::success();
}

Error Function::Impl::validateSteps(llvm::ArrayRef<Tensor> args) const {
  for (auto [i, arg] : llvm::enumerate(args)) {
    if (!stacked[i])
      continue;
    if (arg.rank() == 0)
      return llvm::createStringError(
          describe(i) + ": stacked along dim 0 (one row per step), got a 0-d "
                        "tensor");
    if (arg.shape()[0] != args[firstStacked].shape()[0])
      return llvm::createStringError(
          describe(i) + ": dim 0 counts the steps and must be " +
          llvm::Twine(args[firstStacked].shape()[0]) + " like " +
          describe(firstStacked) + ", got " + llvm::Twine(arg.shape()[0]) +
          " (" + arg.typeString() + ")");
    // The step count is not in the signature: checked on every call.
    if (Error e = checkSize(i, arg))
      return e;
  }
  return Error::success();
}

Expected<Specialized> Function::Impl::specialize(llvm::ArrayRef<Tensor> args,
                                                 std::string &diagnostics) {
  mlir::MLIRContext &context = engine->context;
  llvm::raw_string_ostream os(diagnostics);
  mlir::SourceMgrDiagnosticHandler handler(module->sourceMgr, &context, os);

  // A private copy holding only this function, specialized.
  mlir::OwningOpRef<mlir::ModuleOp> clone = module->module->clone();
  llvm::SmallVector<mlir::Type> types;
  for (auto [i, arg] : llvm::enumerate(args)) {
    llvm::SmallVector<int64_t> shape(arg.shape());
    // The step count stays dynamic: one specialization serves every K.
    if (stacked[i])
      shape[0] = mlir::ShapedType::kDynamic;
    types.push_back(
        mlir::RankedTensorType::get(shape, mlirType(arg.dtype(), &context)));
  }
  mlir::FailureOr<mlir::func::FuncOp> func =
      isolateAndSpecialize(*clone, name, types, kFunctionSymbol);
  if (failed(func))
    return llvm::createStringError("cannot specialize '" + name + "' for " +
                                   Signature::of(args, stacked).str() + ":\n" +
                                   diagnostics);

  Specialized specialized;
  for (auto [j, type] : llvm::enumerate(func->getResultTypes())) {
    auto tensor = llvm::dyn_cast<mlir::RankedTensorType>(type);
    std::optional<DType> dtype =
        tensor ? dtypeOfType(tensor.getElementType()) : std::nullopt;
    if (!dtype)
      return llvm::createStringError("function '" + name +
                                     "' returns an unsupported type");
    auto inPlace =
        func->getResultAttrOfType<mlir::IntegerAttr>(j, kInPlaceAttrName);
    ResultSpec result{
        *dtype, llvm::SmallVector<int64_t, 4>(tensor.getShape()),
        inPlace ? static_cast<int32_t>(inPlace.getInt()) : -1,
        static_cast<bool>(func->getResultAttr(j, kStackedAttrName))};
    if (result.stacked)
      result.shape[0] = 0;
    if (llvm::any_of(result.shape, mlir::ShapedType::isDynamic))
      return llvm::createStringError(
          "result #" + llvm::Twine(j) + " of '" + name +
          "' has a dynamic shape that does not follow from the "
          "argument shapes");
    // Checked here, before any compile or link, so that a result too large
    // costs neither on every call (a stacked result per step: its dim 0 is
    // the call's, checked when allocated).
    if (Error e = checkResultSize(j, result))
      return std::move(e);
    specialized.results.push_back(std::move(result));
  }
  // The call's shapes may make a dynamic class count static.
  specialized.classes = markClassLabels(*clone, kFunctionSymbol);
  specialized.module = std::move(clone);
  return specialized;
}

Expected<CachedObject> Function::Impl::compile(Specialized &specialized,
                                               llvm::ArrayRef<Tensor> args,
                                               std::string &diagnostics) {
  mlir::MLIRContext &context = engine->context;
  llvm::raw_string_ostream os(diagnostics);
  mlir::SourceMgrDiagnosticHandler handler(module->sourceMgr, &context, os);
  mlir::ModuleOp clone = *specialized.module;
  CachedObject entry;
  mlir::PassManager pm(&context);
  buildSimplifyPipeline(pm);
  PipelineOptions pipeline;
  pipeline.fusion = engine->options.fusion;
  pipeline.profile = engine->options.profile;
  pipeline.winograd = engine->options.winograd;
  pipeline.profileLabel = name;
  buildLowerToLinalgPipeline(pm, pipeline);
  buildLowerToLLVMPipeline(pm, pipeline);
  if (failed(pm.run(clone)))
    return llvm::createStringError("cannot compile '" + name + "' for " +
                                   Signature::of(args, stacked).str() + ":\n" +
                                   diagnostics);
  // Warnings (an argument that cannot be updated in place) are the user's.
  if (!diagnostics.empty())
    engine->warnings() << diagnostics;
  if (auto compiled =
          clone.lookupSymbol<mlir::LLVM::LLVMFuncOp>(kFunctionSymbol)) {
    if (auto sizes = compiled->getAttrOfType<mlir::DenseI64ArrayAttr>(
            kWorkspaceAttrName))
      for (int64_t size : sizes.asArrayRef())
        entry.buffers.push_back(size);
    if (auto sizes = compiled->getAttrOfType<mlir::DenseI64ArrayAttr>(
            kDynamicSizesAttrName))
      llvm::append_range(entry.dynamicSizes, sizes.asArrayRef());
  }

  llvm::LLVMContext llvmContext;
  Expected<std::unique_ptr<llvm::Module>> llvmModule =
      translateToLLVMIR(clone, llvmContext);
  if (!llvmModule)
    return llvmModule.takeError();
  if (Error e = addPackedWrapper(**llvmModule, kFunctionSymbol, kEntrySymbol))
    return std::move(e);
  Expected<std::unique_ptr<llvm::TargetMachine>> machine =
      engine->machineBuilder.createTargetMachine();
  if (!machine)
    return machine.takeError();
  if (Error e = optimizeModule(**llvmModule, **machine))
    return std::move(e);
  Expected<std::unique_ptr<llvm::MemoryBuffer>> object =
      emitMachineCode(**llvmModule, **machine, EmitKind::Object);
  if (!object)
    return object.takeError();
  entry.object = std::move(*object);
  return entry;
}

/// Whether a decoded cache entry fits the call it is loaded for: the result
/// specs come from specializing this call, never from the file, and every
/// stored field must be one compiled code for this call could have. A
/// mismatch is a miss, never a call with wrong sizes.
bool Function::Impl::fitsCall(const CachedObject &entry,
                              llvm::ArrayRef<ResultSpec> results) const {
  // Size arguments: (operand, dim) pairs naming a stacked argument's or
  // stacked out-parameter's dim 0, the only dims left to run time.
  if (entry.dynamicSizes.size() % 2 != 0)
    return false;
  llvm::SmallVector<bool> operandIsStacked(stacked.begin(), stacked.end());
  for (const ResultSpec &result : results)
    if (result.inPlaceOf < 0)
      operandIsStacked.push_back(result.stacked);
  llvm::SmallVector<bool> seen(operandIsStacked.size(), false);
  for (size_t at = 0; at < entry.dynamicSizes.size(); at += 2) {
    int64_t operand = entry.dynamicSizes[at], dim = entry.dynamicSizes[at + 1];
    if (operand < 0 ||
        static_cast<size_t>(operand) >= operandIsStacked.size() ||
        !operandIsStacked[operand] || dim != 0 || seen[operand])
      return false;
    seen[operand] = true;
  }
  // Workspace buffers are carved from one allocation at 64-byte offsets.
  return llvm::all_of(entry.buffers,
                      [](uint64_t bytes) { return bytes % 64 == 0; });
}

Error Function::Impl::checkResultSize(size_t j,
                                      const ResultSpec &result) const {
  llvm::SmallVector<int64_t, 4> shape(result.shape);
  if (result.stacked)
    shape[0] = 1;
  std::string what = "result #" + std::to_string(j) + " of '" + name + "' (" +
                     Tensor::view(nullptr, result.dtype, shape).typeString() +
                     (result.stacked ? " per step" : "") + ") is too large: ";
  std::optional<int64_t> bytes = tensorBytes(result.dtype, shape);
  if (!bytes)
    return llvm::createStringError(what +
                                   "its size in bytes overflows 64 bits");
  if (uint64_t(*bytes) > maxTensorBytes())
    return llvm::createStringError(what + "its " + llvm::Twine(*bytes) +
                                   " bytes exceed " + describeMaxTensorBytes());
  return Error::success();
}

Expected<uint64_t>
Function::Impl::checkWorkspace(llvm::ArrayRef<uint64_t> buffers,
                               const Signature &signature) const {
  std::optional<uint64_t> workspace = 0;
  for (uint64_t bytes : buffers)
    if (!(workspace = llvm::checkedAddUnsigned(*workspace, bytes)))
      break;
  if (!workspace || *workspace > maxTensorBytes())
    return llvm::createStringError(
        "'" + name + "' for " + signature.str() +
        " needs a workspace for its intermediates larger than " +
        describeMaxTensorBytes());
  return *workspace;
}

/// Adds `object` to a new JITDylib and returns its entry point.
Expected<Specialization::Entry>
Function::Impl::link(std::unique_ptr<llvm::MemoryBuffer> object) {
  llvm::orc::LLJIT &jit = *engine->jit;
  Expected<llvm::orc::JITDylib &> dylib = jit.createJITDylib(
      "fuse." + name + "." + std::to_string(engine->dylibCounter++));
  if (!dylib)
    return dylib.takeError();
  Expected<std::unique_ptr<llvm::orc::DynamicLibrarySearchGenerator>> process =
      llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
          jit.getDataLayout().getGlobalPrefix());
  if (!process)
    return process.takeError();
  dylib->addGenerator(std::move(*process));
  if (Error e = defineRuntimeSymbols(jit, *dylib))
    return std::move(e);
  if (Error e = jit.addObjectFile(*dylib, std::move(object)))
    return std::move(e);
  Expected<llvm::orc::ExecutorAddr> address = jit.lookup(*dylib, kEntrySymbol);
  if (!address)
    return address.takeError();
  return address->toPtr<Specialization::Entry>();
}

Expected<std::unique_ptr<Specialization>>
Function::Impl::build(llvm::ArrayRef<Tensor> args) {
  auto start = std::chrono::steady_clock::now();
  Signature signature = Signature::of(args, stacked);
  // The whole key is stored in the entry and compared on load: every input
  // of the compilation (compiler build, target, source, function, call
  // signature, code-changing options) is in it.
  std::string keyText =
      "fuse object cache 5\n" + engine->buildIdentity + "\ncpu " + engine->cpu +
      "\nmodule " + module->sourceHash + "\nfunction " + name + "\nsignature " +
      signature.str() + "\nfusion " + (engine->options.fusion ? "on" : "off") +
      "\nwinograd " + (engine->options.winograd ? "on" : "off") + "\nprofile " +
      (engine->options.profile ? "on" : "off");

  // Specializing is cheap next to code generation and gives the result
  // specs, which a cache entry therefore never carries.
  std::string diagnostics;
  Expected<Specialized> specialized = specialize(args, diagnostics);
  if (!specialized)
    return specialized.takeError();

  std::optional<Specialization::Entry> entryPoint;
  CachedObject entry;
  uint64_t workspaceBytes = 0;
  if (engine->diskCache) {
    std::optional<CachedObject> cached = engine->diskCache->load(keyText);
    if (cached && fitsCall(*cached, specialized->results)) {
      // The code is this call's: a workspace too large fails it, as
      // compiling would, without linking anything.
      Expected<uint64_t> bytes = checkWorkspace(cached->buffers, signature);
      if (!bytes)
        return bytes.takeError();
      workspaceBytes = *bytes;
      Expected<Specialization::Entry> linked = link(std::move(cached->object));
      if (linked) {
        entryPoint = *linked;
        entry = std::move(*cached);
        ++diskHits;
      } else {
        // An object that does not link is a miss like any other.
        llvm::consumeError(linked.takeError());
      }
    }
  }
  if (!entryPoint) {
    Expected<CachedObject> compiled = compile(*specialized, args, diagnostics);
    if (!compiled)
      return compiled.takeError();
    entry = std::move(*compiled);
    if (engine->diskCache)
      if (std::optional<std::string> problem =
              engine->diskCache->store(keyText, entry))
        engine->warnings() << "fuse: warning: object cache: " << *problem
                           << "\n";
    // Before linking, which a failed call would leak; stored first, so
    // that a repeated call fails from the disk cache without compiling.
    Expected<uint64_t> bytes = checkWorkspace(entry.buffers, signature);
    if (!bytes)
      return bytes.takeError();
    workspaceBytes = *bytes;
    Expected<Specialization::Entry> linked = link(std::move(entry.object));
    if (!linked)
      return linked.takeError();
    entryPoint = *linked;
  }

  auto spec = std::make_unique<Specialization>();
  spec->signature = std::move(signature);
  spec->entry = *entryPoint;
  spec->results = std::move(specialized->results);
  spec->classes = std::move(specialized->classes);
  spec->buffers = std::move(entry.buffers);
  spec->dynamicSizes = std::move(entry.dynamicSizes);
  spec->workspaceBytes = workspaceBytes;
  compileMicros += std::chrono::duration_cast<std::chrono::microseconds>(
                       std::chrono::steady_clock::now() - start)
                       .count();
  return spec;
}

void Function::Impl::warnOnRetrace() {
  size_t count = cache.size();
  if (count <= engine->options.retraceWarningThreshold ||
      warnedRetrace.exchange(true))
    return;
  engine->warnings() << "fuse: warning: function '" << name
                     << "' has been specialized for " << count
                     << " signatures (more than "
                     << engine->options.retraceWarningThreshold
                     << "); every new signature compiles again. Changing: "
                     << cache.changingDims(argNames)
                     << ". Pad or bucket these dims, or raise "
                        "EngineOptions::retraceWarningThreshold.\n";
}

Expected<const Specialization *>
Function::Impl::specialization(llvm::ArrayRef<Tensor> args) {
  for (auto [i, arg] : llvm::enumerate(args))
    if (!arg.data() && arg.numElements() != 0 && i < argNames.size())
      return llvm::createStringError(describe(i) +
                                     " has no data (null pointer)");
  // Checked on every call: the step count is not part of the signature.
  if (firstStacked >= 0 && args.size() == argTypes.size()) {
    if (Error e = validateSteps(args))
      return std::move(e);
  }
  if (const Specialization *spec = cache.find(args, stacked)) {
    hits.fetch_add(1, std::memory_order_relaxed);
    return spec;
  }
  std::lock_guard<std::mutex> lock(engine->contextMutex);
  // Another thread may have built it while we waited.
  if (const Specialization *spec = cache.find(args, stacked)) {
    hits.fetch_add(1, std::memory_order_relaxed);
    return spec;
  }
  if (Error e = validate(args))
    return std::move(e);
  misses.fetch_add(1, std::memory_order_relaxed);
  Expected<std::unique_ptr<Specialization>> built = build(args);
  if (!built)
    return built.takeError();
  const Specialization *stored = cache.insert(std::move(*built));
  warnOnRetrace();
  return stored;
}

//===----------------------------------------------------------------------===//
// Function
//===----------------------------------------------------------------------===//

Function::Function(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Function::~Function() = default;

llvm::StringRef Function::name() const { return impl_->name; }
size_t Function::numArguments() const { return impl_->argTypes.size(); }
size_t Function::numResults() const { return impl_->results.size(); }
llvm::ArrayRef<std::string> Function::argumentNames() const {
  return impl_->argNames;
}
llvm::ArrayRef<ArgumentInfo> Function::arguments() const {
  return impl_->arguments;
}
llvm::ArrayRef<ResultInfo> Function::results() const { return impl_->results; }

FunctionStats Function::stats() const {
  FunctionStats s;
  s.signatures = impl_->cache.size();
  s.hits = impl_->hits.load();
  s.misses = impl_->misses.load();
  s.diskHits = impl_->diskHits.load();
  s.compileMillis = impl_->compileMicros.load() / 1000.0;
  return s;
}

/// Flushes denormal floats to zero (and reads them as zero) while it lives,
/// as XLA and TensorFlow run compiled code: a value decaying towards zero
/// (Adam's moments of a gradient that stays 0) otherwise takes a microcode
/// assist on every operation, ten times slower. Restores the caller's mode.
class DenormalMode {
public:
  explicit DenormalMode(bool flush) {
#if defined(__x86_64__) || defined(__i386__)
    if (!flush)
      return;
    saved_ = _mm_getcsr();
    _mm_setcsr(saved_ | kFlushToZero | kDenormalsAreZero);
    active_ = true;
#else
    (void)flush;
#endif
  }
  ~DenormalMode() {
#if defined(__x86_64__) || defined(__i386__)
    if (active_)
      _mm_setcsr(saved_);
#endif
  }

private:
  static constexpr unsigned kFlushToZero = 0x8000, kDenormalsAreZero = 0x40;
  unsigned saved_ = 0;
  bool active_ = false;
};

/// Calls `spec` with contiguous copies of non-contiguous arguments. A result
/// computed in place is found in its argument, which must be contiguous;
/// it is also copied into `results` when that names another buffer.
static Error invoke(const Function::Impl &fn, const Specialization &spec,
                    llvm::ArrayRef<Tensor> args,
                    llvm::ArrayRef<Tensor> results) {
  // Reused across calls: a steady-state call allocates nothing.
  thread_local std::vector<void *> pointers;
  pointers.clear();
  llvm::SmallVector<Tensor, 0> copies;
  for (auto [i, arg] : llvm::enumerate(args)) {
    if (arg.isContiguous()) {
      pointers.push_back(arg.data());
      continue;
    }
    Expected<Tensor> copy =
        arg.checkedContiguousCopy("a contiguous copy of " + fn.describe(i));
    if (!copy)
      return copy.takeError();
    copies.push_back(std::move(*copy));
    pointers.push_back(copies.back().data());
  }
  if (Error e = checkClassLabels(args, pointers, spec.classes,
                                 [&](size_t i) { return fn.describe(i); }))
    return e;
  for (auto [result, want] : llvm::zip(results, spec.results)) {
    if (want.inPlaceOf < 0) {
      pointers.push_back(result.data());
      continue;
    }
    if (!args[want.inPlaceOf].isContiguous())
      return llvm::createStringError(
          fn.describe(want.inPlaceOf) +
          " is updated in place and must be contiguous");
  }
  void *workspace = spec.acquireWorkspace();
  if (spec.workspaceBytes && !workspace)
    return llvm::createStringError("cannot allocate a workspace of " +
                                   llvm::Twine(spec.workspaceBytes) +
                                   " bytes for '" + fn.name + "'");
  char *buffer = static_cast<char *>(workspace);
  for (uint64_t bytes : spec.buffers) {
    pointers.push_back(buffer);
    buffer += bytes;
  }
  // Sizes of dynamic operands travel as integers in pointer slots.
  for (size_t at = 0; at + 1 < spec.dynamicSizes.size(); at += 2) {
    size_t operand = spec.dynamicSizes[at];
    int64_t size = 0;
    if (operand < args.size()) {
      size = args[operand].shape()[spec.dynamicSizes[at + 1]];
    } else {
      // The out-parameters: the results not computed in place, in order.
      size_t outParam = operand - args.size();
      for (auto [result, want] : llvm::zip(results, spec.results))
        if (want.inPlaceOf < 0 && outParam-- == 0) {
          size = result.shape()[spec.dynamicSizes[at + 1]];
          break;
        }
    }
    pointers.push_back(reinterpret_cast<void *>(static_cast<intptr_t>(size)));
  }
  {
    DenormalMode mode(fn.engine->options.flushDenormals);
    spec.entry(pointers.data());
  }
  spec.releaseWorkspace(workspace);
  for (auto [result, want] : llvm::zip(results, spec.results)) {
    if (want.inPlaceOf < 0)
      continue;
    const Tensor &arg = args[want.inPlaceOf];
    if (result.data() && result.data() != arg.data())
      std::memcpy(result.data(), arg.data(),
                  arg.numElements() * byteWidth(arg.dtype()));
  }
  return Error::success();
}

/// The shape of a result for a call of `steps` steps.
static llvm::SmallVector<int64_t, 4> resultShape(const ResultSpec &spec,
                                                 int64_t steps) {
  llvm::SmallVector<int64_t, 4> shape = spec.shape;
  if (spec.stacked)
    shape[0] = steps;
  return shape;
}

/// A result's tensor: a view of its argument when computed in place, new
/// storage otherwise.
static Expected<Tensor> resultTensor(const Function::Impl &fn, size_t index,
                                     const ResultSpec &spec,
                                     llvm::ArrayRef<Tensor> args,
                                     int64_t steps) {
  if (spec.inPlaceOf >= 0)
    return Tensor::view(args[spec.inPlaceOf].data(), spec.dtype, spec.shape);
  return Tensor::allocate(spec.dtype, resultShape(spec, steps),
                          "result #" + llvm::Twine(index) + " of '" + fn.name +
                              "'");
}

/// New tensors for the results of a call of `spec`.
static Expected<std::vector<Tensor>>
resultTensors(const Function::Impl &fn, const Specialization &spec,
              llvm::ArrayRef<Tensor> args) {
  std::vector<Tensor> results;
  results.reserve(spec.results.size());
  for (auto [j, r] : llvm::enumerate(spec.results)) {
    Expected<Tensor> result = resultTensor(fn, j, r, args, fn.steps(args));
    if (!result)
      return result.takeError();
    results.push_back(std::move(*result));
  }
  return results;
}

Expected<std::vector<Tensor>>
Function::allocateResults(llvm::ArrayRef<Tensor> args) {
  Expected<const Specialization *> spec = impl_->specialization(args);
  if (!spec)
    return spec.takeError();
  return resultTensors(*impl_, **spec, args);
}

std::string ArgumentInfo::typeString() const {
  std::string s = "tensor<";
  for (int64_t d : shape)
    s += (d < 0 ? std::string("?") : std::to_string(d)) + "x";
  return s + dtypeName(dtype).str() + ">";
}

Error Function::prepare(llvm::ArrayRef<Tensor> args) {
  return impl_->specialization(args).takeError();
}

Expected<std::vector<Tensor>> Function::call(llvm::ArrayRef<Tensor> args) {
  Expected<const Specialization *> spec = impl_->specialization(args);
  if (!spec)
    return spec.takeError();
  Expected<std::vector<Tensor>> results = resultTensors(*impl_, **spec, args);
  if (!results)
    return results.takeError();
  if (Error e = invoke(*impl_, **spec, args, *results))
    return std::move(e);
  return results;
}

Error Function::callInto(llvm::ArrayRef<Tensor> args,
                         llvm::ArrayRef<Tensor> results) {
  Expected<const Specialization *> spec = impl_->specialization(args);
  if (!spec)
    return spec.takeError();
  const std::vector<ResultSpec> &want = (*spec)->results;
  if (results.size() != want.size())
    return llvm::createStringError(
        "function '" + impl_->name + "' returns " + llvm::Twine(want.size()) +
        " results, got " + llvm::Twine(results.size()) + " result tensors");
  for (auto [i, result] : llvm::enumerate(results)) {
    // A result computed in place needs no tensor: it is in its argument.
    if (want[i].inPlaceOf >= 0 && !result.data())
      continue;
    llvm::SmallVector<int64_t, 4> shape =
        resultShape(want[i], impl_->steps(args));
    Tensor expected = Tensor::view(nullptr, want[i].dtype, shape);
    if (result.dtype() != want[i].dtype ||
        result.shape() != llvm::ArrayRef<int64_t>(shape))
      return llvm::createStringError(
          "result #" + llvm::Twine(i) + " of '" + impl_->name + "': expected " +
          expected.typeString() + ", got " + result.typeString());
    if (!result.isContiguous())
      return llvm::createStringError("result #" + llvm::Twine(i) + " of '" +
                                     impl_->name + "' must be contiguous");
    if (!result.data() && result.numElements() != 0)
      return llvm::createStringError("result #" + llvm::Twine(i) + " of '" +
                                     impl_->name +
                                     "' has no data (null pointer)");
  }
  return invoke(*impl_, **spec, args, results);
}

//===----------------------------------------------------------------------===//
// Engine
//===----------------------------------------------------------------------===//

Engine::Engine(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Engine::~Engine() = default;

Expected<std::unique_ptr<Engine>> Engine::create(EngineOptions options) {
  Expected<llvm::orc::JITTargetMachineBuilder> builder = hostMachineBuilder();
  if (!builder)
    return builder.takeError();
  auto impl = std::make_unique<Impl>(std::move(options), *builder);
  mlir::DialectRegistry registry;
  registerDialects(registry);
  impl->context.appendDialectRegistry(registry);
  impl->context.loadAllAvailableDialects();

  Expected<std::unique_ptr<llvm::orc::LLJIT>> jit =
      llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(*builder).create();
  if (!jit)
    return jit.takeError();
  impl->jit = std::move(*jit);
  impl->cpu = hostCpuDescription();
  impl->buildIdentity = compilerBuildIdentity();
  if (std::optional<std::string> dir = ObjectCache::directoryFor(impl->options))
    impl->diskCache.emplace(*dir);
  return std::unique_ptr<Engine>(new Engine(std::move(impl)));
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
  {
    mlir::SourceMgrDiagnosticHandler handler(loaded->sourceMgr, &impl.context,
                                             os);
    loaded->module = parseModule(loaded->sourceMgr, &impl.context);
  }
  if (!loaded->module)
    return llvm::createStringError(diagnostics);
  nameArguments(*loaded->module, loaded->sourceMgr);
  {
    // Whole-module rewrites happen once, before any specialization.
    mlir::SourceMgrDiagnosticHandler handler(loaded->sourceMgr, &impl.context,
                                             os);
    mlir::PassManager pm(&impl.context);
    buildDifferentiatePipeline(pm);
    if (failed(pm.run(*loaded->module)))
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

Expected<Function &> Engine::lookup(llvm::StringRef name) {
  std::lock_guard<std::mutex> lock(impl_->contextMutex);
  auto it = impl_->functions.find(name);
  if (it == impl_->functions.end())
    return llvm::createStringError("no function named '" + name +
                                   "' is loaded");
  return *it->second;
}

std::vector<std::string> Engine::functionNames() const {
  std::lock_guard<std::mutex> lock(impl_->contextMutex);
  std::vector<std::string> names;
  for (const auto &entry : impl_->functions)
    names.push_back(entry.getKey().str());
  llvm::sort(names);
  return names;
}
