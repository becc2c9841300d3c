//===- Compiler.cpp - The one compile driver ------------------------------===//

#include "fuse/Compiler.h"
#include "fuse/ABI.h"
#include "fuse/Codegen.h"
#include "fuse/Conversion/Passes.h"
#include "fuse/ParallelCodegen.h"

#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/Support/Threading.h"
#include "llvm/Target/TargetMachine.h"

#include <algorithm>
#include <atomic>
#include <thread>

using namespace mlir;
using llvm::Error;
using llvm::Expected;

char fuse::PassFailure::ID = 0;

void fuse::PassFailure::log(llvm::raw_ostream &os) const {
  os << "a pass failed";
}

std::error_code fuse::PassFailure::convertToErrorCode() const {
  return llvm::inconvertibleErrorCode();
}

LogicalResult fuse::differentiateModule(ModuleOp module,
                                        const DifferentiateOptions &options) {
  PassManager pm(module.getContext());
  buildDifferentiatePipeline(pm, options);
  return pm.run(module);
}

FailureOr<func::FuncOp> fuse::specializeEntry(ModuleOp module, StringRef name,
                                              TypeRange argTypes,
                                              StringRef symbol) {
  PassManager pm(module.getContext());
  // isolateAndSpecialize verifies the module itself.
  pm.enableVerifier(false);
  buildSpecializeEntryPipeline(pm, name, argTypes, symbol);
  if (failed(pm.run(module)))
    return failure();
  return module.lookupSymbol<func::FuncOp>(symbol.empty() ? name : symbol);
}

Expected<fuse::CompileResult>
fuse::lowerSpecialized(ModuleOp module, StringRef entry,
                       const CompileOptions &options) {
  // The target, set once: the lowering's vector width and the
  // TargetMachine below both come from it. The fuse and linalg outputs stay
  // target-independent.
  TargetDescription target = options.target ? *options.target : hostTarget();
  if (options.stage >= Stage::LLVMDialect) {
    MLIRContext *context = module.getContext();
    auto string = [&](StringRef key, StringRef value) {
      return NamedAttribute(StringAttr::get(context, key),
                            StringAttr::get(context, value));
    };
    module->setAttr(
        abi::kTargetAttrName,
        DictionaryAttr::get(
            context, {string(abi::kTargetTripleKey, target.triple),
                      string(abi::kTargetCpuKey, target.cpu),
                      string(abi::kTargetFeaturesKey, target.features)}));
  }

  // A pass manager per phase, so that each is timed apart; the passes and
  // their order are buildSpecializedPipeline's.
  for (const PipelinePhase &phase : specializedPipelinePhases(
           std::min(options.stage, Stage::LLVMDialect), options.pipeline)) {
    PassManager pm(module.getContext());
    if (options.configure && failed(options.configure(pm)))
      return llvm::make_error<PassFailure>();
    // The verifier after each of ~50 passes over the unrolled vector code
    // took a third of the MLIR time; once at the end (below) by default.
    pm.enableVerifier(options.verifyEachPass);
    phase.build(pm);
    PassTimesRecorder *passes =
        options.stats
            ? &recordPassTimes(pm, module, *options.stats, options.statsUnit)
            : nullptr;
    // Before the collectives are lowered: the gradients they reduce.
    if (options.stats && phase.name == "lower-to-linalg")
      for (const std::string &note : describeReducedGradients(module))
        options.stats->note(options.statsUnit, note);
    PhaseTimer timer(options.stats, options.statsUnit, "mlir: " + phase.name);
    LogicalResult ran = pm.run(module);
    timer.stop();
    if (passes)
      passes->flush();
    if (failed(ran))
      return llvm::make_error<PassFailure>();
  }
  if (!options.verifyEachPass) {
    PhaseTimer timer(options.stats, options.statsUnit, "mlir: verify");
    if (failed(verify(module)))
      return llvm::make_error<PassFailure>();
  }
  CompileResult result;
  result.entry = entry.str();
  if (options.stage <= Stage::LLVMDialect)
    return result;

  PhaseTimer translate(options.stats, options.statsUnit,
                       "llvm: translate to LLVM IR");
  result.llvmContext = std::make_unique<llvm::LLVMContext>();
  Expected<std::unique_ptr<llvm::Module>> llvmModule =
      translateToLLVMIR(module, *result.llvmContext);
  if (!llvmModule)
    return llvmModule.takeError();
  if (!options.packedEntry.empty())
    if (Error e = addPackedWrapper(**llvmModule, entry, options.packedEntry))
      return std::move(e);
  translate.stop();
  result.llvmModule = std::move(*llvmModule);
  return result;
}

namespace {
/// One part of a module cut for parallel code generation: its module (part
/// 0: the translated module itself), its output and its phase times.
struct CodegenPart {
  std::unique_ptr<llvm::LLVMContext> context;
  std::unique_ptr<llvm::Module> module;
  std::unique_ptr<llvm::MemoryBuffer> code;
  fuse::CompileStats stats;
  std::string failure;
};
} // namespace

Error fuse::generateCode(CompileResult &result, const CompileOptions &options) {
  if (options.stage <= Stage::LLVMDialect || !result.llvmModule)
    return Error::success();
  PhaseTimer machineTimer(options.stats, options.statsUnit,
                          "llvm: target machine");
  std::optional<llvm::orc::JITTargetMachineBuilder> host;
  if (!options.machine) {
    // The host's exactly as the engine builds it, unless told otherwise.
    Expected<llvm::orc::JITTargetMachineBuilder> builder =
        options.target ? targetMachineBuilder(*options.target)
                       : hostMachineBuilder();
    if (!builder)
      return builder.takeError();
    host.emplace(std::move(*builder));
  }
  const llvm::orc::JITTargetMachineBuilder &builder =
      options.machine ? *options.machine : *host;
  machineTimer.stop();

  // The parts after the first, as bitcode for their own contexts.
  llvm::SmallVector<std::unique_ptr<llvm::MemoryBuffer>> bitcode;
  if (options.parallelCodegen) {
    PhaseTimer split(options.stats, options.statsUnit, "llvm: split");
    if (llvm::Function *function =
            result.llvmModule->getFunction(result.entry)) {
      llvm::SmallVector<llvm::Function *> outlined =
          outlineSegments(*function, codegenPartsFor(*function));
      if (!outlined.empty()) {
        Expected<llvm::SmallVector<std::unique_ptr<llvm::MemoryBuffer>>> parts =
            splitOutFunctions(*result.llvmModule, outlined);
        if (!parts)
          return parts.takeError();
        bitcode = std::move(*parts);
      }
    }
  }

  std::vector<CodegenPart> parts(1 + bitcode.size());
  auto generate = [&](unsigned i) -> Error {
    CodegenPart &part = parts[i];
    llvm::Module *module = result.llvmModule.get();
    if (i > 0) {
      part.context = std::make_unique<llvm::LLVMContext>();
      Expected<std::unique_ptr<llvm::Module>> read =
          readPart(*bitcode[i - 1], *part.context);
      if (!read)
        return read.takeError();
      part.module = std::move(*read);
      module = part.module.get();
    }
    // A copy per part: creating a machine is not const.
    llvm::orc::JITTargetMachineBuilder partBuilder = builder;
    Expected<std::unique_ptr<llvm::TargetMachine>> machine =
        partBuilder.createTargetMachine();
    if (!machine)
      return machine.takeError();
    CompileStats *stats = options.stats ? &part.stats : nullptr;
    std::optional<LLVMPassTimes> passTimes;
    if (stats)
      passTimes.emplace(*stats, options.statsUnit);
    PhaseTimer optimize(stats, options.statsUnit, "llvm: O3");
    if (Error e = optimizeModule(*module, **machine,
                                 passTimes ? &passTimes->callbacks() : nullptr))
      return e;
    optimize.stop();
    if (passTimes)
      passTimes->flush();
    if (options.onOptimizedIR)
      options.onOptimizedIR(*module);
    if (options.stage == Stage::LLVMIR)
      return Error::success();

    PhaseTimer codegen(stats, options.statsUnit,
                       options.stage == Stage::Assembly ? "llvm: assembly"
                                                        : "llvm: machine code");
    Expected<std::unique_ptr<llvm::MemoryBuffer>> code =
        emitMachineCode(*module, **machine,
                        options.stage == Stage::Assembly ? EmitKind::Assembly
                                                         : EmitKind::Object);
    if (!code)
      return code.takeError();
    codegen.stop();
    part.code = std::move(*code);
    return Error::success();
  };

  // Parts are taken in order by this thread and its helpers; with
  // onOptimizedIR, by this thread alone, so the callback sees them in order.
  unsigned threads = options.codegenThreads
                         ? options.codegenThreads
                         : llvm::hardware_concurrency().compute_thread_count();
  if (options.onOptimizedIR)
    threads = 1;
  threads = std::clamp<unsigned>(threads, 1, parts.size());
  std::atomic<unsigned> next{0};
  auto work = [&] {
    for (unsigned i; (i = next++) < parts.size();)
      if (Error e = generate(i))
        parts[i].failure = llvm::toString(std::move(e));
  };
  std::vector<std::thread> helpers;
  for (unsigned t = 1; t < threads; ++t)
    helpers.emplace_back(work);
  work();
  for (std::thread &helper : helpers)
    helper.join();

  for (CodegenPart &part : parts) {
    if (!part.failure.empty())
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     part.failure);
    if (options.stats)
      for (const CompileStats::Phase &phase : part.stats.phases)
        options.stats->add(phase.unit, phase.name, phase.seconds, phase.depth);
    if (part.code)
      result.code.push_back(std::move(part.code));
  }
  return Error::success();
}

Expected<fuse::CompileResult>
fuse::compileSpecialized(ModuleOp module, StringRef entry,
                         const CompileOptions &options) {
  Expected<CompileResult> result = lowerSpecialized(module, entry, options);
  if (!result)
    return result.takeError();
  if (Error e = generateCode(*result, options))
    return std::move(e);
  return result;
}

Expected<fuse::CompileResult>
fuse::compileFunction(ModuleOp module, StringRef name, TypeRange argTypes,
                      const CompileOptions &options, StringRef symbol) {
  PhaseTimer specialize(options.stats, options.statsUnit, "specialize");
  if (failed(specializeEntry(module, name, argTypes, symbol)))
    return llvm::make_error<PassFailure>();
  specialize.stop();
  return compileSpecialized(module, symbol.empty() ? name : symbol, options);
}
