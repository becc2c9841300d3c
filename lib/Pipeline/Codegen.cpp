//===- Codegen.cpp - LLVM dialect to native code --------------------------===//

#include "fuse/Codegen.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/SmallVectorMemoryBuffer.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/Triple.h"
#include "llvm/Transforms/Utils/BasicBlockUtils.h"

#include <mutex>

using namespace llvm;

void fuse::initializeNativeTarget() {
  static std::once_flag once;
  std::call_once(once, [] {
    InitializeNativeTarget();
    InitializeNativeTargetAsmPrinter();
    InitializeNativeTargetAsmParser();
  });
}

Expected<orc::JITTargetMachineBuilder> fuse::hostMachineBuilder() {
  initializeNativeTarget();
  Expected<orc::JITTargetMachineBuilder> builder =
      orc::JITTargetMachineBuilder::detectHost();
  if (!builder)
    return builder.takeError();
  builder->setCodeGenOptLevel(CodeGenOptLevel::Aggressive);
  return builder;
}

std::string fuse::hostCpuDescription() {
  std::string text = sys::getHostCPUName().str();
  StringMap<bool> features = sys::getHostCPUFeatures();
  std::vector<std::string> enabled;
  for (const auto &feature : features)
    if (feature.second)
      enabled.push_back(feature.first().str());
  llvm::sort(enabled);
  for (const std::string &f : enabled)
    text += "+" + f;
  return text;
}

fuse::TargetDescription fuse::hostTarget() {
  TargetDescription target;
  target.triple = sys::getProcessTriple();
  target.cpu = sys::getHostCPUName().str();
  std::vector<std::string> features;
  for (const auto &feature : sys::getHostCPUFeatures())
    features.push_back((feature.second ? "+" : "-") + feature.first().str());
  llvm::sort(features);
  target.features = join(features, ",");
  return target;
}

Expected<fuse::TargetDescription>
fuse::resolveTarget(StringRef triple, StringRef cpu, StringRef mattr) {
  initializeNativeTarget();
  TargetDescription host = hostTarget();
  TargetDescription target;
  target.triple = triple.empty() ? host.triple : Triple::normalize(triple);
  // The host's features go with the host's CPU only.
  bool hostCpu = cpu.empty() && target.triple == host.triple;
  target.cpu = cpu.empty() ? host.cpu : cpu.str();
  std::string features = hostCpu ? host.features : "";
  if (!mattr.empty())
    features += (features.empty() ? "" : ",") + mattr.str();

  std::string error;
  Triple parsed(target.triple);
  const Target *llvmTarget = TargetRegistry::lookupTarget(parsed, error);
  if (!llvmTarget)
    return createStringError(inconvertibleErrorCode(), "target '%s': %s",
                             target.triple.c_str(), error.c_str());
  // Checked before use: LLVM only warns and ignores unknown names.
  std::unique_ptr<MCSubtargetInfo> generic(
      llvmTarget->createMCSubtargetInfo(parsed, "", ""));
  if (!generic->isCPUStringValid(target.cpu))
    return createStringError(inconvertibleErrorCode(),
                             "'%s' is not a CPU of target '%s'",
                             target.cpu.c_str(), target.triple.c_str());
  SmallVector<StringRef> given;
  StringRef(mattr).split(given, ',', -1, /*KeepEmpty=*/false);
  for (StringRef feature : given) {
    StringRef name = feature.ltrim("+-");
    if (!feature.starts_with("+") && !feature.starts_with("-"))
      return createStringError(inconvertibleErrorCode(),
                               "feature '%s' must start with '+' or '-'",
                               feature.str().c_str());
    if (llvm::none_of(
            generic->getAllProcessorFeatures(),
            [&](const SubtargetFeatureKV &kv) { return name == kv.Key; }))
      return createStringError(inconvertibleErrorCode(),
                               "'%s' is not a feature of target '%s'",
                               name.str().c_str(), target.triple.c_str());
  }
  // Every feature spelled out, so the attribute alone says what the CPU
  // has (fuse-tile-and-vectorize reads it).
  std::unique_ptr<MCSubtargetInfo> info(
      llvmTarget->createMCSubtargetInfo(parsed, target.cpu, features));
  std::vector<std::string> all;
  for (const SubtargetFeatureKV &kv : info->getAllProcessorFeatures())
    all.push_back((info->getFeatureBits()[kv.Value] ? "+" : "-") +
                  std::string(kv.Key));
  target.features = join(all, ",");
  return target;
}

Expected<orc::JITTargetMachineBuilder>
fuse::targetMachineBuilder(const TargetDescription &target) {
  initializeNativeTarget();
  orc::JITTargetMachineBuilder builder{Triple(target.triple)};
  builder.setCPU(target.cpu);
  builder.setFeatures(target.features);
  builder.setCodeGenOptLevel(CodeGenOptLevel::Aggressive);
  return builder;
}

/// Rewrites each `__kmpc_fork_call_if(loc, argc, body, cond, args)` (an
/// omp.parallel with an `if`) into `cond ? __kmpc_fork_call(loc, argc,
/// body[, args]) : body(&0, &0[, args])`. libomp's own else branch runs the
/// body in a serialized region, which allocates on every call; the regions
/// fuse-parallel-loops-to-openmp builds take all iterations on one thread
/// without asking the runtime, so they need no region at all.
static Error lowerConditionalForks(Module &module) {
  llvm::Function *forkIf = module.getFunction("__kmpc_fork_call_if");
  if (!forkIf)
    return Error::success();
  LLVMContext &context = module.getContext();
  auto *ptrType = PointerType::getUnqual(context);
  auto *i32 = Type::getInt32Ty(context);
  FunctionCallee fork = module.getOrInsertFunction(
      "__kmpc_fork_call",
      FunctionType::get(Type::getVoidTy(context), {ptrType, i32, ptrType},
                        /*isVarArg=*/true));
  SmallVector<CallInst *> calls;
  for (User *user : forkIf->users())
    if (auto *call = dyn_cast<CallInst>(user);
        call && call->getCalledFunction() == forkIf)
      calls.push_back(call);
    else
      return createStringError(inconvertibleErrorCode(),
                               "__kmpc_fork_call_if used other than called");
  for (CallInst *call : calls) {
    Value *ident = call->getArgOperand(0);
    auto *argc = dyn_cast<ConstantInt>(call->getArgOperand(1));
    auto *body = dyn_cast<llvm::Function>(call->getArgOperand(2));
    Value *cond = call->getArgOperand(3), *args = call->getArgOperand(4);
    if (!argc || argc->getZExtValue() > 1 || !body ||
        body->arg_size() != 2 + argc->getZExtValue())
      return createStringError(inconvertibleErrorCode(),
                               "unexpected __kmpc_fork_call_if");
    bool hasArgs = argc->getZExtValue() == 1;
    llvm::Function *caller = call->getFunction();
    // The thread ids the body is called with (it does not read them).
    IRBuilder<> entry(&*caller->getEntryBlock().getFirstInsertionPt());
    Value *zero = entry.CreateAlloca(i32, nullptr, "omp.zero");
    entry.CreateStore(entry.getInt32(0), zero);
    Instruction *thenTerm = nullptr, *elseTerm = nullptr;
    IRBuilder<> b(call);
    SplitBlockAndInsertIfThenElse(b.CreateICmpNE(cond, b.getInt32(0)), call,
                                  &thenTerm, &elseTerm);
    b.SetInsertPoint(thenTerm);
    SmallVector<Value *> forkArgs = {ident, argc, body};
    if (hasArgs)
      forkArgs.push_back(args);
    b.CreateCall(fork, forkArgs);
    b.SetInsertPoint(elseTerm);
    SmallVector<Value *> bodyArgs = {zero, zero};
    if (hasArgs)
      bodyArgs.push_back(args);
    b.CreateCall(body, bodyArgs);
    call->eraseFromParent();
  }
  forkIf->eraseFromParent();
  // The thread ids the translation asked for the serialized regions: a
  // one-thread call then does not enter the runtime at all.
  if (llvm::Function *threadNum =
          module.getFunction("__kmpc_global_thread_num")) {
    SmallVector<CallInst *> unused;
    for (User *user : threadNum->users())
      if (auto *call = dyn_cast<CallInst>(user); call && call->use_empty())
        unused.push_back(call);
    for (CallInst *call : unused)
      call->eraseFromParent();
  }
  return Error::success();
}

Expected<std::unique_ptr<Module>>
fuse::translateToLLVMIR(mlir::ModuleOp module, LLVMContext &context) {
  std::unique_ptr<Module> llvmModule =
      mlir::translateModuleToLLVMIR(module, context);
  if (!llvmModule)
    return createStringError(inconvertibleErrorCode(),
                             "failed to translate the module to LLVM IR");
  if (Error error = lowerConditionalForks(*llvmModule))
    return std::move(error);
  return llvmModule;
}

Error fuse::addPackedWrapper(Module &module, StringRef function,
                             StringRef wrapper) {
  llvm::Function *callee = module.getFunction(function);
  if (!callee)
    return createStringError(inconvertibleErrorCode(),
                             "no function '%s' to wrap",
                             function.str().c_str());
  LLVMContext &context = module.getContext();
  auto *ptrType = PointerType::getUnqual(context);
  auto *type = FunctionType::get(Type::getVoidTy(context), {ptrType},
                                 /*isVarArg=*/false);
  auto *entry = llvm::Function::Create(type, GlobalValue::ExternalLinkage,
                                       wrapper, module);
  IRBuilder<> b(BasicBlock::Create(context, "entry", entry));
  SmallVector<Value *> args;
  for (auto [i, param] : llvm::enumerate(callee->args())) {
    Type *type = param.getType();
    if (!type->isPointerTy() && !type->isIntegerTy())
      return createStringError(inconvertibleErrorCode(),
                               "argument %zu of '%s' is neither a pointer "
                               "nor an integer",
                               i, function.str().c_str());
    Value *slot = b.CreateConstGEP1_64(ptrType, entry->getArg(0), i);
    Value *value = b.CreateLoad(ptrType, slot);
    // Sizes travel in the pointer slots as integers.
    args.push_back(type->isIntegerTy() ? b.CreatePtrToInt(value, type) : value);
  }
  b.CreateCall(callee, args);
  b.CreateRetVoid();
  return Error::success();
}

Error fuse::optimizeModule(Module &module, TargetMachine &machine,
                           PassInstrumentationCallbacks *callbacks) {
  module.setDataLayout(machine.createDataLayout());
  module.setTargetTriple(machine.getTargetTriple());
  // O3 without LLVM's loop unrolling: the micro-kernels' loops are unrolled
  // already (fuse-lower-vectors), and its cost analysis of the large
  // straight-line bodies of Winograd transforms took two thirds of O3.
  PipelineTuningOptions tuning;
  tuning.LoopUnrolling = false;
  PassBuilder builder(&machine, tuning, std::nullopt, callbacks);
  LoopAnalysisManager loops;
  FunctionAnalysisManager functions;
  CGSCCAnalysisManager sccs;
  ModuleAnalysisManager modules;
  builder.registerModuleAnalyses(modules);
  builder.registerCGSCCAnalyses(sccs);
  builder.registerFunctionAnalyses(functions);
  builder.registerLoopAnalyses(loops);
  builder.crossRegisterProxies(loops, functions, sccs, modules);
  builder.buildPerModuleDefaultPipeline(OptimizationLevel::O3)
      .run(module, modules);
  return Error::success();
}

Expected<std::unique_ptr<MemoryBuffer>>
fuse::emitMachineCode(Module &module, TargetMachine &machine, EmitKind kind) {
  module.setDataLayout(machine.createDataLayout());
  module.setTargetTriple(machine.getTargetTriple());
  SmallVector<char, 0> bytes;
  raw_svector_ostream os(bytes);
  legacy::PassManager pm;
  CodeGenFileType type = kind == EmitKind::Object
                             ? CodeGenFileType::ObjectFile
                             : CodeGenFileType::AssemblyFile;
  if (machine.addPassesToEmitFile(pm, os, nullptr, type))
    return createStringError(inconvertibleErrorCode(),
                             "the target cannot emit this file type");
  pm.run(module);
  return std::make_unique<SmallVectorMemoryBuffer>(
      std::move(bytes), module.getName(),
      /*RequiresNullTerminator=*/false);
}
