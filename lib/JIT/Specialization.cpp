//===- Specialization.cpp - Compiling a function for a call ---------------===//
//
// A call's signature -> a specialization: specialized, compiled (or found
// in the disk cache), linked into the JIT and kept in the signature cache.
//
//===----------------------------------------------------------------------===//

#include "ClassLabels.h"
#include "Collectives.h"
#include "EngineImpl.h"
#include "Timers.h"
#include "fuse/ABI.h"
#include "fuse/Codegen.h"
#include "fuse/Compiler.h"
#include "fuse/Passes.h"
#include "fuse/Pipeline.h"
#include "fuse/Profile.h"
#include "fuse/Version.h"

#include "Fuse/IR/FuseDialect.h"
#include "Fuse/IR/FuseOps.h"
#include "mlir/Bytecode/BytecodeWriter.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/ExecutionEngine/CRunnerUtils.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Target/TargetMachine.h"

#include <chrono>

#include <dlfcn.h>

using namespace fuse;

namespace {

/// The specialization's symbol and its packed entry (fuse/ABI.h).
using abi::kEntrySymbol;
using abi::kFunctionSymbol;

/// The runtime functions compiled code may call, defined by address: MLIR's C
/// runtime (memrefCopy for strided copies; the reference also keeps the
/// runtime library linked), the profile's timers and the collectives.
Error defineRuntimeSymbols(llvm::orc::LLJIT &jit, llvm::orc::JITDylib &dylib) {
  llvm::orc::MangleAndInterner mangle(jit.getExecutionSession(),
                                      jit.getDataLayout());
  llvm::orc::SymbolMap symbols;
  symbols[mangle("memrefCopy")] = {
      llvm::orc::ExecutorAddr::fromPtr(&memrefCopy),
      llvm::JITSymbolFlags::Exported | llvm::JITSymbolFlags::Callable};
  symbols[mangle(abi::kTimerStartSymbol)] = {
      llvm::orc::ExecutorAddr::fromPtr(&fuse_timer_start),
      llvm::JITSymbolFlags::Exported | llvm::JITSymbolFlags::Callable};
  symbols[mangle(abi::kTimerStopSymbol)] = {
      llvm::orc::ExecutorAddr::fromPtr(&fuse_timer_stop),
      llvm::JITSymbolFlags::Exported | llvm::JITSymbolFlags::Callable};
  symbols[mangle(abi::kAllReduceStartF32Symbol)] = {
      llvm::orc::ExecutorAddr::fromPtr(&fuse_all_reduce_start_f32),
      llvm::JITSymbolFlags::Exported | llvm::JITSymbolFlags::Callable};
  symbols[mangle(abi::kAllReduceWaitSymbol)] = {
      llvm::orc::ExecutorAddr::fromPtr(&fuse_all_reduce_wait),
      llvm::JITSymbolFlags::Exported | llvm::JITSymbolFlags::Callable};
  symbols[mangle(abi::kAllReduceProgressSymbol)] = {
      llvm::orc::ExecutorAddr::fromPtr(&fuse_all_reduce_progress),
      llvm::JITSymbolFlags::Exported | llvm::JITSymbolFlags::Callable};
  return dylib.define(llvm::orc::absoluteSymbols(std::move(symbols)));
}

} // namespace

namespace fuse {

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

} // namespace fuse

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
      specializeEntry(*clone, name, types, kFunctionSymbol);
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
  // Marked again by specializeEntry: the call's shapes may make a dynamic
  // class count static.
  specialized.classes = classLabelCounts(*clone, kFunctionSymbol);
  specialized.module = std::move(clone);
  return specialized;
}

Expected<CachedObject>
Function::Impl::compile(Specialized &specialized, llvm::ArrayRef<Tensor> args,
                        std::string &diagnostics,
                        std::unique_lock<std::mutex> &contextLock,
                        const std::function<void()> &onLowered) {
  CompileStats *stats = engine->options.compileStats;
  std::string unit = name + " " + Signature::of(args, stacked).str();
  // The specialized module moves to a context of its own, so that the
  // engine's is free during the whole compile: another function's
  // specialization and lowering (fit's evaluation) run beside this one's.
  PhaseTimer copyTimer(stats, unit, "mlir: copy to a compile context");
  std::string bytecode;
  {
    llvm::raw_string_ostream os(bytecode);
    if (mlir::failed(mlir::writeBytecodeToFile(*specialized.module, os)))
      return llvm::createStringError("cannot write '" + name + "' for " +
                                     Signature::of(args, stacked).str() +
                                     " as MLIR bytecode");
  }
  specialized.module = nullptr;
  contextLock.unlock();
  // Locked again on every return: the caller links under it.
  llvm::scope_exit relock([&] { contextLock.lock(); });
  if (onLowered)
    onLowered();
  std::unique_ptr<mlir::MLIRContext> owned = engine->acquireCompileContext();
  llvm::scope_exit release(
      [&] { engine->releaseCompileContext(std::move(owned)); });
  mlir::MLIRContext &context = *owned;
  // Diagnostics name the source's lines through a manager of this
  // compile's own (a SourceMgr caches line offsets: not thread-safe).
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBuffer(
          module->source,
          module->sourceMgr.getMemoryBuffer(module->sourceMgr.getMainFileID())
              ->getBufferIdentifier(),
          /*RequiresNullTerminator=*/true),
      llvm::SMLoc());
  llvm::raw_string_ostream os(diagnostics);
  std::optional<mlir::SourceMgrDiagnosticHandler> handler;
  handler.emplace(sourceMgr, &context, os);
  // Declared after `release`: the IR goes before its context is reused.
  mlir::OwningOpRef<mlir::ModuleOp> copy =
      mlir::parseSourceString<mlir::ModuleOp>(bytecode,
                                              mlir::ParserConfig(&context));
  if (!copy)
    return llvm::createStringError("cannot read '" + name + "' for " +
                                   Signature::of(args, stacked).str() +
                                   " back from MLIR bytecode:\n" + diagnostics);
  copyTimer.stop();
  mlir::ModuleOp clone = *copy;
  CachedObject entry;
  CompileOptions options;
  options.pipeline.fusion = engine->options.fusion;
  options.pipeline.profile = engine->options.profile;
  options.pipeline.winograd = engine->options.winograd;
  options.pipeline.overlapCollectives = engine->options.overlapCollectives;
  options.pipeline.profileLabel = name;
  options.stage = Stage::Object;
  options.packedEntry = kEntrySymbol.str();
  options.machine = &engine->machineBuilder;
  options.stats = stats;
  options.statsUnit = unit;
  // A large function's O3 and code generation run on the cores, in parts.
  options.parallelCodegen = engine->options.parallelCodegen;
  // On the engine's threads, as its calls.
  options.codegenThreads = engine->threads;
  // Each part's IR, in order, as `fusec --emit=llvm-ir --engine-entry`.
  std::string optimizedIR;
  if (engine->options.onCompiledIR)
    options.onOptimizedIR = [&](llvm::Module &ir) {
      llvm::raw_string_ostream(optimizedIR) << ir;
    };
  Expected<CompileResult> artifacts =
      lowerSpecialized(clone, kFunctionSymbol, options);
  if (!artifacts && artifacts.errorIsA<PassFailure>()) {
    llvm::consumeError(artifacts.takeError());
    return llvm::createStringError("cannot compile '" + name + "' for " +
                                   Signature::of(args, stacked).str() + ":\n" +
                                   diagnostics);
  }
  // Warnings (an argument that cannot be updated in place) are the user's.
  if (!diagnostics.empty()) {
    // Outside the engine's context lock: compiles running at once print
    // in turn.
    std::lock_guard<std::mutex> lock(engine->userOutputMutex);
    engine->warnings() << diagnostics;
  }
  if (!artifacts)
    return artifacts.takeError();
  if (auto compiled =
          clone.lookupSymbol<mlir::LLVM::LLVMFuncOp>(kFunctionSymbol)) {
    if (auto sizes = compiled->getAttrOfType<mlir::DenseI64ArrayAttr>(
            abi::kWorkspaceAttrName))
      for (int64_t size : sizes.asArrayRef())
        entry.buffers.push_back(size);
    if (auto sizes = compiled->getAttrOfType<mlir::DenseI64ArrayAttr>(
            abi::kDynamicSizesAttrName))
      llvm::append_range(entry.dynamicSizes, sizes.asArrayRef());
  }
  // O3 and code generation, the larger half, use only the LLVM module.
  handler.reset();
  copy = nullptr;
  Error generated = generateCode(*artifacts, options);
  if (!generated && engine->options.onCompiledIR) {
    // Compiles overlap, the caller's callback does not.
    std::lock_guard<std::mutex> lock(engine->userOutputMutex);
    engine->options.onCompiledIR(name, Signature::of(args, stacked).str(),
                                 optimizedIR);
  }
  if (generated)
    return std::move(generated);
  entry.objects = std::move(artifacts->code);
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

/// Adds `objects` (a function's parts) to a new JITDylib and returns its
/// entry point.
Expected<Specialization::Entry>
Function::Impl::link(std::vector<std::unique_ptr<llvm::MemoryBuffer>> objects) {
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
  for (std::unique_ptr<llvm::MemoryBuffer> &object : objects)
    if (Error e = jit.addObjectFile(*dylib, std::move(object)))
      return std::move(e);
  Expected<llvm::orc::ExecutorAddr> address = jit.lookup(*dylib, kEntrySymbol);
  if (!address)
    return address.takeError();
  return address->toPtr<Specialization::Entry>();
}

Expected<std::unique_ptr<Specialization>>
Function::Impl::build(llvm::ArrayRef<Tensor> args,
                      std::unique_lock<std::mutex> &contextLock,
                      const std::function<void()> &onLowered) {
  auto start = std::chrono::steady_clock::now();
  Signature signature = Signature::of(args, stacked);
  // The whole key is stored in the entry and compared on load: every input
  // of the compilation (compiler build, target, source, function, call
  // signature, code-changing options) is in it.
  std::string keyText =
      "fuse object cache 6\n" + engine->buildIdentity + "\ncpu " + engine->cpu +
      "\nmodule " + module->sourceHash + "\nfunction " + name + "\nsignature " +
      signature.str() + "\nfusion " + (engine->options.fusion ? "on" : "off") +
      "\nwinograd " + (engine->options.winograd ? "on" : "off") + "\nprofile " +
      (engine->options.profile ? "on" : "off") + "\nparallel codegen " +
      (engine->options.parallelCodegen ? "on" : "off") +
      "\noverlap collectives " +
      (engine->options.overlapCollectives ? "on" : "off");

  // Specializing is cheap next to code generation and gives the result
  // specs, which a cache entry therefore never carries.
  std::string diagnostics;
  CompileStats *stats = engine->options.compileStats;
  std::string unit = name + " " + signature.str();
  PhaseTimer specializeTimer(stats, unit, "specialize");
  Expected<Specialized> specialized = specialize(args, diagnostics);
  if (!specialized)
    return specialized.takeError();
  specializeTimer.stop();

  std::optional<Specialization::Entry> entryPoint;
  CachedObject entry;
  uint64_t workspaceBytes = 0;
  if (engine->diskCache) {
    PhaseTimer timer(stats, unit, "disk cache: look up");
    std::optional<CachedObject> cached = engine->diskCache->load(keyText);
    if (cached && fitsCall(*cached, specialized->results)) {
      // The code is this call's: a workspace too large fails it, as
      // compiling would, without linking anything.
      Expected<uint64_t> bytes = checkWorkspace(cached->buffers, signature);
      if (!bytes)
        return bytes.takeError();
      workspaceBytes = *bytes;
      timer.stop();
      PhaseTimer linkTimer(stats, unit, "jit: link");
      Expected<Specialization::Entry> linked = link(std::move(cached->objects));
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
    Expected<CachedObject> compiled =
        compile(*specialized, args, diagnostics, contextLock, onLowered);
    if (!compiled)
      return compiled.takeError();
    entry = std::move(*compiled);
    if (engine->diskCache) {
      PhaseTimer timer(stats, unit, "disk cache: store");
      if (std::optional<std::string> problem =
              engine->diskCache->store(keyText, entry))
        engine->warnings() << "fuse: warning: object cache: " << *problem
                           << "\n";
    }
    // Before linking, which a failed call would leak; stored first, so
    // that a repeated call fails from the disk cache without compiling.
    Expected<uint64_t> bytes = checkWorkspace(entry.buffers, signature);
    if (!bytes)
      return bytes.takeError();
    workspaceBytes = *bytes;
    PhaseTimer linkTimer(stats, unit, "jit: link");
    Expected<Specialization::Entry> linked = link(std::move(entry.objects));
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
  for (uint64_t seen = this->workspaceBytes.load();
       seen < workspaceBytes &&
       !this->workspaceBytes.compare_exchange_weak(seen, workspaceBytes);)
    ;
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
Function::Impl::specialization(llvm::ArrayRef<Tensor> args,
                               const std::function<void()> &onLowered) {
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
  std::lock_guard<std::mutex> building(buildMutex);
  std::unique_lock<std::mutex> lock(engine->contextMutex);
  // Another thread may have built it while we waited.
  if (const Specialization *spec = cache.find(args, stacked)) {
    hits.fetch_add(1, std::memory_order_relaxed);
    return spec;
  }
  if (Error e = validate(args))
    return std::move(e);
  misses.fetch_add(1, std::memory_order_relaxed);
  Expected<std::unique_ptr<Specialization>> built =
      build(args, lock, onLowered);
  if (!built)
    return built.takeError();
  const Specialization *stored = cache.insert(std::move(*built));
  warnOnRetrace();
  return stored;
}
