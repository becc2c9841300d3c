//===- Compiler.cpp - The one compile driver ------------------------------===//

#include "fuse/Compiler.h"
#include "fuse/ABI.h"
#include "fuse/Codegen.h"

#include "mlir/Pass/PassManager.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/Target/TargetMachine.h"

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

LogicalResult fuse::differentiateModule(ModuleOp module) {
  PassManager pm(module.getContext());
  buildDifferentiatePipeline(pm);
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
fuse::compileSpecialized(ModuleOp module, StringRef entry,
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

  PassManager pm(module.getContext());
  if (options.configure && failed(options.configure(pm)))
    return llvm::make_error<PassFailure>();
  buildSpecializedPipeline(pm, std::min(options.stage, Stage::LLVMDialect),
                           options.pipeline);
  if (failed(pm.run(module)))
    return llvm::make_error<PassFailure>();
  CompileResult result;
  if (options.stage <= Stage::LLVMDialect)
    return result;

  result.llvmContext = std::make_unique<llvm::LLVMContext>();
  Expected<std::unique_ptr<llvm::Module>> llvmModule =
      translateToLLVMIR(module, *result.llvmContext);
  if (!llvmModule)
    return llvmModule.takeError();
  if (!options.packedEntry.empty())
    if (Error e = addPackedWrapper(**llvmModule, entry, options.packedEntry))
      return std::move(e);
  std::optional<llvm::orc::JITTargetMachineBuilder> host;
  if (!options.machine) {
    // The host's exactly as the engine builds it, unless told otherwise.
    Expected<llvm::orc::JITTargetMachineBuilder> builder =
        options.target ? targetMachineBuilder(target) : hostMachineBuilder();
    if (!builder)
      return builder.takeError();
    host.emplace(std::move(*builder));
  }
  Expected<std::unique_ptr<llvm::TargetMachine>> machine =
      (options.machine ? *options.machine : *host).createTargetMachine();
  if (!machine)
    return machine.takeError();
  if (Error e = optimizeModule(**llvmModule, **machine))
    return std::move(e);
  if (options.onOptimizedIR)
    options.onOptimizedIR(**llvmModule);
  result.llvmModule = std::move(*llvmModule);
  if (options.stage == Stage::LLVMIR)
    return result;

  Expected<std::unique_ptr<llvm::MemoryBuffer>> code = emitMachineCode(
      *result.llvmModule, **machine,
      options.stage == Stage::Assembly ? EmitKind::Assembly : EmitKind::Object);
  if (!code)
    return code.takeError();
  result.code = std::move(*code);
  return result;
}

Expected<fuse::CompileResult>
fuse::compileFunction(ModuleOp module, StringRef name, TypeRange argTypes,
                      const CompileOptions &options, StringRef symbol) {
  if (failed(specializeEntry(module, name, argTypes, symbol)))
    return llvm::make_error<PassFailure>();
  return compileSpecialized(module, symbol.empty() ? name : symbol, options);
}
