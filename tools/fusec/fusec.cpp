//===- fusec.cpp - The Fuse compiler driver -------------------------------===//
//
// `fusec FILE.mlir` parses and verifies a module in the fuse dialect, runs
// the Fuse pipeline up to the level `--emit` names and writes the result.
// `fusec run` JIT-compiles and calls a function (RunCommand.cpp); `fusec
// train` trains a model on an image set (TrainCommand.cpp).
//
//===----------------------------------------------------------------------===//

#include "Commands.h"

#include "Fuse/IR/FuseDialect.h"
#include "Fuse/IR/FuseOps.h"

#include "fuse/ABI.h"
#include "fuse/Compiler.h"
#include "fuse/Parse.h"
#include "fuse/Passes.h"
#include "fuse/Pipeline.h"
#include "fuse/SourceNames.h"
#include "fuse/Version.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/Timing.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace mlir;
namespace cl = llvm::cl;

namespace {
using Emit = fuse::Stage;

cl::opt<std::string> inputFilename(cl::Positional,
                                   cl::desc("<input .mlir file>"),
                                   cl::init("-"), cl::cat(fusec::category()),
                                   cl::sub(cl::SubCommand::getTopLevel()));
cl::opt<std::string> outputFilename("o", cl::desc("Output file"),
                                    cl::value_desc("filename"), cl::init("-"),
                                    cl::cat(fusec::category()),
                                    cl::sub(cl::SubCommand::getTopLevel()));
cl::opt<Emit> emit(
    "emit", cl::desc("What to emit"), cl::init(Emit::Fuse),
    cl::cat(fusec::category()), cl::sub(cl::SubCommand::getTopLevel()),
    cl::values(
        clEnumValN(Emit::Fuse, "fuse", "the verified, simplified fuse IR"),
        clEnumValN(Emit::Linalg, "linalg", "tensor-level linalg"),
        clEnumValN(Emit::LLVMDialect, "llvm-mlir", "the MLIR LLVM dialect"),
        clEnumValN(Emit::LLVMIR, "llvm-ir", "LLVM IR, optimized at O3"),
        clEnumValN(Emit::Assembly, "asm", "assembly for the target CPU"),
        clEnumValN(Emit::Object, "obj", "an object file for the target CPU")));
cl::opt<std::string>
    entry("entry", cl::desc("The function to compile (default: the only one)"),
          cl::cat(fusec::category()), cl::sub(cl::SubCommand::getTopLevel()));
cl::list<std::string>
    shapes("shape",
           cl::desc("Concrete shape of an argument: NAME=DIMS or INDEX=DIMS, "
                    "e.g. --shape=x=64x28x28"),
           cl::cat(fusec::category()), cl::sub(cl::SubCommand::getTopLevel()));
cl::opt<bool> engineEntry(
    "engine-entry",
    cl::desc("Compile the entry as the engine does: named __fuse_function, "
             "called through __fuse_entry(void **args), a large one cut "
             "into parts compiled in parallel (llvm-ir, asm: each part's "
             "output in turn)"),
    cl::init(false), cl::cat(fusec::category()),
    cl::sub(cl::SubCommand::getTopLevel()));
cl::opt<bool> verifyEach(
    "verify-each",
    cl::desc("Verify the IR after every MLIR pass, naming a pass that "
             "breaks it (default: once, after the last; always in debug "
             "builds)"),
    cl::init(false), cl::cat(fusec::category()),
    cl::sub(cl::SubCommand::getTopLevel()));
// The target, as llc takes it. Emit paths only: code for a CPU the host
// lacks is never run on the host, so `run` and `train` do not take them.
cl::opt<std::string> mtriple("mtriple",
                             cl::desc("Target triple (default: the host's)"),
                             cl::cat(fusec::category()),
                             cl::sub(cl::SubCommand::getTopLevel()));
cl::opt<std::string>
    mcpu("mcpu",
         cl::desc("Target CPU, e.g. x86-64-v3, skylake-avx512 (default: the "
                  "host's, with its features)"),
         cl::cat(fusec::category()), cl::sub(cl::SubCommand::getTopLevel()));
cl::opt<std::string>
    mattr("mattr",
          cl::desc("Target features to add or remove, e.g. +avx512f,-fma"),
          cl::cat(fusec::category()), cl::sub(cl::SubCommand::getTopLevel()));
} // namespace

int fusec::exitCode(llvm::StringRef command, llvm::Error error) {
  if (!error)
    return 0;
  // One write: under mpirun, the ranks' messages share a stream, and
  // llvm::errs() (unbuffered) would write each piece on its own.
  std::string message = ("fusec " + command +
                         ": error: " + llvm::toString(std::move(error)) + "\n")
                            .str();
  llvm::errs() << message;
  return 1;
}

cl::OptionCategory &fusec::category() {
  static cl::OptionCategory options("fusec options");
  return options;
}

cl::opt<bool> fusec::fusion(
    "fusion",
    cl::desc("Fuse element-wise work and optimizer updates (--fusion=false: "
             "op by op, one pass over memory per operation)"),
    cl::init(true), cl::cat(fusec::category()),
    cl::sub(cl::SubCommand::getAll()));

cl::opt<bool> fusec::winograd(
    "winograd",
    cl::desc("Compute 3x3 convolutions with Winograd's F(4x4, 3x3): 2-4x "
             "fewer multiply-adds, sums rounded differently from direct ones "
             "(not exactly 0 where the exact sum is)"),
    cl::init(false), cl::cat(fusec::category()),
    cl::sub(cl::SubCommand::getAll()));

cl::opt<bool> fusec::profile(
    "profile",
    cl::desc("Time every operation of the compiled code and print the "
             "totals (run, train); instrument the IR (--emit)"),
    cl::init(false), cl::cat(fusec::category()),
    cl::sub(cl::SubCommand::getAll()));

cl::opt<std::string> fusec::precision(
    "precision",
    cl::desc("The training step's compute precision, overriding each "
             "fuse.train_step's `precision`: bf16 (matmul, batch_matmul and "
             "convolution operands rounded to bf16, summed in f32; the rest, "
             "the weights and optimizer state f32) or f32"),
    cl::value_desc("bf16|f32"), cl::init(""), cl::cat(fusec::category()),
    cl::sub(cl::SubCommand::getAll()));

cl::opt<std::string> fusec::masterWeights(
    "master-weights",
    cl::desc("How a bf16 step keeps the weights its products read between "
             "steps, overriding each fuse.train_step's `master_weights`: copy "
             "(the f32 weight and a bf16 copy rounded to nearest, the "
             "default) or split (IPEX's split layout: the weight's top 16 "
             "bits, truncated, and its low 16 bits, no copy)"),
    cl::value_desc("copy|split"), cl::init(""), cl::cat(fusec::category()),
    cl::sub(cl::SubCommand::getAll()));

llvm::Error fusec::applyPrecision(fuse::TrainStepOverrides &overrides) {
  if (masterWeights.getNumOccurrences() != 0) {
    std::optional<fuse::MasterWeights> m =
        fuse::parseMasterWeights(masterWeights);
    if (!m)
      return llvm::createStringError(
          "--master-weights must be copy or split, got '" + masterWeights +
          "'");
    overrides.masterWeights = *m;
  }
  if (precision.getNumOccurrences() == 0)
    return llvm::Error::success();
  std::optional<fuse::Precision> p = fuse::parsePrecision(precision);
  if (!p)
    return llvm::createStringError("--precision must be bf16 or f32, got '" +
                                   precision + "'");
  overrides.precision = *p;
  return llvm::Error::success();
}

cl::opt<bool> &fusec::stats() {
  // Registered after main removes LLVM's own -stats (its statistics
  // counters, compiled out of release LLVM), whose name it takes.
  static cl::opt<bool> option(
      "stats",
      cl::desc("Print where compile time went: each phase (parse, "
               "differentiate, specialize, the MLIR phases and their passes, "
               "LLVM O3, machine code, cache, link) of each compiled function "
               "(--emit: to stderr); run also prints the function's counters"),
      cl::init(false), cl::cat(fusec::category()),
      cl::sub(cl::SubCommand::getAll()));
  return option;
}

cl::opt<unsigned> &fusec::threads() {
  // Registered after main removes the hidden -threads of LLVM's libraries,
  // whose name it takes.
  static cl::opt<unsigned> option(
      "threads",
      cl::desc("Threads each call of compiled code may use (run, train; "
               "default 0: $FUSE_NUM_THREADS, else the CPUs this process may "
               "use). Results are bitwise the same for any count"),
      cl::init(0), cl::cat(fusec::category()),
      cl::sub(cl::SubCommand::getAll()));
  return option;
}

void fusec::setPrecision(ModuleOp module,
                         const fuse::TrainStepOverrides &overrides) {
  Builder b(module.getContext());
  for (auto step : module.getOps<fuse::TrainStepOp>()) {
    if (overrides.precision)
      step.setPrecisionAttr(
          b.getStringAttr(fuse::precisionName(*overrides.precision)));
    if (overrides.masterWeights)
      step.setMasterWeightsAttr(
          b.getStringAttr(fuse::masterWeightsName(*overrides.masterWeights)));
  }
}

static void printVersion(llvm::raw_ostream &os) {
  os << "fusec (Fuse) " << FUSE_VERSION << "\n  built with LLVM/MLIR "
     << LLVM_VERSION_STRING << "\n";
}

/// The entry function: --entry, or the module's only function. Otherwise
/// the error lists the functions by name.
static FailureOr<func::FuncOp> findEntry(ModuleOp module) {
  SmallVector<func::FuncOp> funcs(module.getOps<func::FuncOp>());
  SmallVector<std::string> names;
  for (func::FuncOp f : funcs)
    names.push_back(f.getSymName().str());
  llvm::sort(names);
  std::string list = llvm::join(names, ", ");
  if (!entry.empty()) {
    for (func::FuncOp f : funcs)
      if (f.getSymName() == entry)
        return f;
    return module.emitError("no function named '")
           << entry << "'; the module's functions are " << list;
  }
  if (funcs.size() != 1)
    return module.emitError("the module has ")
           << funcs.size() << " functions; choose one with --entry: " << list;
  return funcs.front();
}

/// The argument types with --shape applied. A stacked argument's dim 0 (the
/// K of a K-step function) stays dynamic, as in the JIT: every K runs the
/// same code.
static FailureOr<SmallVector<Type>> specializedTypes(func::FuncOp func) {
  SmallVector<Type> types(func.getArgumentTypes());
  for (StringRef spec : shapes) {
    auto [key, dims] = spec.split('=');
    std::optional<unsigned> index;
    for (unsigned i = 0; i < func.getNumArguments(); ++i)
      if (fuse::argumentName(func, i) == key || std::to_string(i) == key)
        index = i;
    if (!index)
      return func.emitError("--shape=")
             << spec << ": no argument '" << key << "'";
    SmallVector<int64_t> shape;
    SmallVector<StringRef> parts;
    if (!dims.empty())
      dims.split(parts, 'x');
    for (StringRef part : parts) {
      int64_t d;
      if (part.getAsInteger(10, d) || d < 0)
        return func.emitError("--shape=")
               << spec << ": bad dim '" << part << "'";
      shape.push_back(d);
    }
    auto declared = dyn_cast<RankedTensorType>(types[*index]);
    if (!declared)
      return func.emitError("--shape=") << spec << ": not a tensor argument";
    // Every size computed from it (element counts, buffers) must fit.
    auto given = RankedTensorType::get(shape, declared.getElementType());
    if (!fuse::checkedByteSize(given))
      return func.emitError("--shape=")
             << spec << ": " << given
             << " is too large: its size in bytes does not fit in 64 bits";
    if (func.getArgAttr(*index, fuse::kStackedAttrName) && !shape.empty())
      shape[0] = ShapedType::kDynamic;
    types[*index] = RankedTensorType::get(shape, declared.getElementType());
  }
  for (auto [i, type] : llvm::enumerate(types))
    if (auto tensor = dyn_cast<RankedTensorType>(type);
        tensor &&
        llvm::any_of(tensor.getShape().drop_front(
                         func.getArgAttr(i, fuse::kStackedAttrName) ? 1 : 0),
                     ShapedType::isDynamic))
      return func.emitError("argument '")
             << fuse::argumentName(func, i) << "' has dynamic dims " << type
             << "; give its shape with --shape=" << fuse::argumentName(func, i)
             << "=DIMS";
  return types;
}

static LogicalResult compile(MLIRContext &context, llvm::SourceMgr &sourceMgr,
                             llvm::raw_ostream &os, fuse::CompileStats *stats) {
  std::string unit =
      ("module " + sourceMgr.getMemoryBuffer(1)->getBufferIdentifier()).str();
  fuse::PhaseTimer parse(stats, unit, "parse");
  OwningOpRef<ModuleOp> module = fuse::parseModule(sourceMgr, &context);
  if (!module)
    return failure();
  fuse::nameArguments(*module, sourceMgr);
  parse.stop();
  {
    fuse::TrainStepOverrides overrides;
    if (llvm::Error e = fusec::applyPrecision(overrides)) {
      llvm::errs() << "fusec: error: " << llvm::toString(std::move(e)) << "\n";
      return failure();
    }
    fusec::setPrecision(*module, overrides);
  }
  fuse::PhaseTimer differentiate(stats, unit, "differentiate");
  if (failed(fuse::differentiateModule(*module)))
    return failure();
  differentiate.stop();

  fuse::CompileOptions options;
  options.pipeline.fusion = fusec::fusion;
  options.pipeline.winograd = fusec::winograd;
  options.pipeline.profile = fusec::profile;
  options.stage = emit;
  options.stats = stats;
  if (verifyEach)
    options.verifyEachPass = true;
  if (!mtriple.empty() || !mcpu.empty() || !mattr.empty()) {
    llvm::Expected<fuse::TargetDescription> target =
        fuse::resolveTarget(mtriple, mcpu, mattr);
    if (!target) {
      llvm::errs() << "fusec: error: " << llvm::toString(target.takeError())
                   << "\n";
      return failure();
    }
    options.target = std::move(*target);
  }
  options.configure = [](PassManager &pm) -> LogicalResult {
    if (failed(applyPassManagerCLOptions(pm)))
      return failure();
    auto timing = std::make_unique<DefaultTimingManager>();
    applyDefaultTimingManagerCLOptions(*timing);
    if (timing->isEnabled())
      pm.enableTiming(std::move(timing));
    return success();
  };

  // Lowering compiles one specialized entry; printing fuse IR keeps the
  // whole module unless an entry or shapes are asked for.
  std::string symbol;
  if (emit != Emit::Fuse || !entry.empty() || !shapes.empty()) {
    FailureOr<func::FuncOp> func = findEntry(*module);
    if (failed(func))
      return failure();
    FailureOr<SmallVector<Type>> types = specializedTypes(*func);
    if (failed(types))
      return failure();
    std::string name = func->getSymName().str();
    options.pipeline.profileLabel = name;
    options.statsUnit = name;
    symbol = name;
    if (engineEntry) {
      symbol = fuse::abi::kFunctionSymbol.str();
      options.packedEntry = fuse::abi::kEntrySymbol.str();
      // Cut as the engine cuts it; an object file is one part.
      options.parallelCodegen = emit != Emit::Object;
    }
    fuse::PhaseTimer specialize(stats, name, "specialize");
    if (failed(fuse::specializeEntry(*module, name, *types, symbol)))
      return failure();
  } else {
    options.statsUnit = unit;
  }

  // Each part's, in order (one unless --engine-entry cut the function).
  std::string optimizedIR;
  if (emit == Emit::LLVMIR)
    options.onOptimizedIR = [&](llvm::Module &part) {
      llvm::raw_string_ostream(optimizedIR) << part;
    };
  llvm::Expected<fuse::CompileResult> result =
      fuse::compileSpecialized(*module, symbol, options);
  if (!result) {
    // A failed pass has reported its diagnostics.
    if (result.errorIsA<fuse::PassFailure>()) {
      llvm::consumeError(result.takeError());
      return failure();
    }
    llvm::errs() << "fusec: error: " << llvm::toString(result.takeError())
                 << "\n";
    return failure();
  }
  if (emit <= Emit::LLVMDialect)
    module->print(os);
  else if (emit == Emit::LLVMIR)
    os << optimizedIR;
  else
    for (const std::unique_ptr<llvm::MemoryBuffer> &code : result->code)
      os << code->getBuffer();
  return success();
}

int fusec::compileMain() {
  DialectRegistry registry;
  fuse::registerDialects(registry);
  MLIRContext context(registry);

  std::string error;
  std::unique_ptr<llvm::MemoryBuffer> input =
      openInputFile(inputFilename, &error);
  if (!input) {
    llvm::errs() << "fusec: error: " << error << "\n";
    return 1;
  }
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(input), llvm::SMLoc());
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);

  std::unique_ptr<llvm::ToolOutputFile> output =
      openOutputFile(outputFilename, &error);
  if (!output) {
    llvm::errs() << "fusec: error: " << error << "\n";
    return 1;
  }
  fuse::CompileStats stats;
  if (failed(compile(context, sourceMgr, output->os(),
                     fusec::stats() ? &stats : nullptr)))
    return 1;
  output->keep();
  if (fusec::stats())
    stats.print(llvm::errs());
  return 0;
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  registerAsmPrinterCLOptions();
  registerMLIRContextCLOptions();
  registerPassManagerCLOptions();
  registerDefaultTimingManagerCLOptions();
  cl::SetVersionPrinter(printVersion);
  cl::HideUnrelatedOptions(fusec::category());
  // Two of fusec's options take names LLVM's libraries register (their
  // statistics, compiled out of release LLVM, and a hidden -threads): theirs
  // leave the command line before ours are registered.
  for (llvm::StringRef name : {"stats", "threads"})
    if (cl::Option *llvmOption =
            cl::getRegisteredOptions(cl::SubCommand::getTopLevel())
                .lookup(name))
      llvmOption->removeArgument();
  fusec::stats();
  fusec::threads();
  cl::ParseCommandLineOptions(
      argc, argv,
      "fusec: the Fuse compiler\n\n"
      "  fusec FILE.mlir [--emit=KIND] [--entry=F] [--shape=ARG=DIMS]... "
      "[-o OUT]\n"
      "  fusec run FILE.mlir --entry=F --arg=SPEC...\n"
      "  fusec train MODEL.mlir [--epochs=N] [--batch-size=B] ...\n"
      "  fusec sample MODEL.mlir --weights=CKPT [--prompt=TEXT] ...\n"
      "  fusec predict MODEL.mlir --weights=CKPT [--data=DIR] [--json=F] "
      "...\n"
      "  fusec evaluate MODEL.mlir --weights=CKPT [--data=DIR] [--json=F] "
      "...\n"
      "  fusec export MODEL.mlir --weights=CKPT --entry=predict -o OBJ "
      "...\n"
      "  fusec summary MODEL.mlir [--json=F]\n");
  if ((fusec::runCommand || fusec::trainCommand || fusec::sampleCommand ||
       fusec::predictCommand || fusec::evaluateCommand ||
       fusec::summaryCommand) &&
      (mtriple.getNumOccurrences() || mcpu.getNumOccurrences() ||
       mattr.getNumOccurrences())) {
    llvm::errs() << "fusec: error: --mtriple, --mcpu and --mattr choose the "
                    "target of emitted code (fusec FILE --emit, fusec "
                    "export); run, train, sample, predict and evaluate run "
                    "on the host\n";
    return 1;
  }
  if (fusec::runCommand)
    return fusec::runMain();
  if (fusec::trainCommand)
    return fusec::trainMain();
  if (fusec::sampleCommand)
    return fusec::sampleMain();
  if (fusec::predictCommand)
    return fusec::predictMain();
  if (fusec::evaluateCommand)
    return fusec::evaluateMain();
  if (fusec::exportCommand)
    return fusec::exportMain();
  if (fusec::summaryCommand)
    return fusec::summaryMain();
  return fusec::compileMain();
}
