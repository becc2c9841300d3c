//===- ExportCommand.cpp - fusec export: an object file and a C header ----===//
//
// `fusec export MODEL.mlir --weights CKPT --entry predict -o model.o`
// compiles one function (`predict`: the model's `@<step>_predict`) for a
// fixed batch, as the engine compiles it, into an object file that a C
// program links: the trained parameters are constant data in the object,
// so the C function takes the inputs and output buffers only, and a
// generated header declares it with its shapes. The code is the JIT's for
// the same signature and target, so it computes the same bits as `fusec
// predict` with that batch size.
//
// The function is `void NAME(const T *input..., T *output...)`; it runs
// with denormals flushed to zero (as the engine's calls: on x86 it sets and
// restores MXCSR) and keeps its intermediates in static buffers of the
// object, so calls must not overlap. Large loops use OpenMP when linked
// with libomp's threads (results do not depend on their number).
//
//===----------------------------------------------------------------------===//

#include "Commands.h"

#include "Fuse/IR/FuseOps.h"

#include "fuse/ABI.h"
#include "fuse/Compiler.h"
#include "fuse/Data/Safetensors.h"
#include "fuse/Parse.h"
#include "fuse/Pipeline.h"
#include "fuse/SourceNames.h"
#include "fuse/Tensor.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/IntrinsicsX86.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/TargetParser/Triple.h"

using namespace mlir;
namespace cl = llvm::cl;

cl::SubCommand fusec::exportCommand(
    "export", "Compile a trained model's function into an object file with "
              "its weights inside, and a C header declaring it");

namespace {
cl::opt<std::string> model(cl::Positional, cl::desc("<model .mlir file>"),
                           cl::Required, cl::cat(fusec::category()),
                           cl::sub(fusec::exportCommand));
cl::opt<std::string>
    weights("weights",
            cl::desc("The trained weights: a checkpoint or weights file "
                     "(safetensors, by parameter name)"),
            cl::value_desc("PATH"), cl::Required, cl::cat(fusec::category()),
            cl::sub(fusec::exportCommand));
cl::opt<std::string>
    entry("entry",
          cl::desc("The function to export: a function of the module, or "
                   "`predict` (the step's @<step>_predict: logits and "
                   "probabilities)"),
          cl::cat(fusec::category()), cl::sub(fusec::exportCommand));
cl::opt<std::string> output("o", cl::desc("The object file to write"),
                            cl::value_desc("PATH"), cl::Required,
                            cl::cat(fusec::category()),
                            cl::sub(fusec::exportCommand));
cl::opt<std::string>
    headerPath("header",
               cl::desc("The C header to write (default: the object's path "
                        "with .h)"),
               cl::value_desc("PATH"), cl::cat(fusec::category()),
               cl::sub(fusec::exportCommand));
cl::opt<std::string> name("name",
                          cl::desc("The C function's name (default: the "
                                   "exported function's)"),
                          cl::cat(fusec::category()),
                          cl::sub(fusec::exportCommand));
cl::opt<std::string> step("step",
                          cl::desc("The step function (fuse.train_step)"),
                          cl::init("train"), cl::cat(fusec::category()),
                          cl::sub(fusec::exportCommand));
cl::opt<int64_t> batchSize(
    "batch-size",
    cl::desc("Examples per call: the inputs' dynamic dim 0 (default 1)"),
    cl::init(1), cl::cat(fusec::category()), cl::sub(fusec::exportCommand));
cl::opt<std::string> mtriple("mtriple",
                             cl::desc("Target triple (default: the host's)"),
                             cl::cat(fusec::category()),
                             cl::sub(fusec::exportCommand));
cl::opt<std::string>
    mcpu("mcpu",
         cl::desc("Target CPU, e.g. x86-64-v3 (default: the host's, with its "
                  "features)"),
         cl::cat(fusec::category()), cl::sub(fusec::exportCommand));
cl::opt<std::string>
    mattr("mattr", cl::desc("Target features to add or remove, e.g. +avx2"),
          cl::cat(fusec::category()), cl::sub(fusec::exportCommand));

/// The C type of a dtype's elements.
llvm::StringRef cType(fuse::DType dtype) {
  switch (dtype) {
  case fuse::DType::F32:
    return "float";
  case fuse::DType::F64:
    return "double";
  case fuse::DType::F16:
  case fuse::DType::BF16:
    return "uint16_t";
  case fuse::DType::I1:
    return "bool";
  case fuse::DType::I8:
    return "int8_t";
  case fuse::DType::I16:
    return "int16_t";
  case fuse::DType::I32:
    return "int32_t";
  case fuse::DType::I64:
    return "int64_t";
  }
  return "void";
}

/// The dtype of tensor elements of `type` (f32, i32, ...), if any.
std::optional<fuse::DType> dtypeOf(Type type) {
  std::string text;
  llvm::raw_string_ostream(text) << type;
  return fuse::parseDType(text);
}

/// A C identifier from `text`: other characters as '_', a leading digit
/// prefixed.
std::string identifier(llvm::StringRef text) {
  std::string id;
  for (char c : text)
    id += llvm::isAlnum(c) || c == '_' ? c : '_';
  if (id.empty() || llvm::isDigit(id.front()))
    id.insert(0, "_");
  return id;
}

/// One buffer of the exported function.
struct Operand {
  std::string name;
  fuse::DType dtype;
  llvm::SmallVector<int64_t> shape;
  int64_t elements() const {
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    return n;
  }
  std::string shapeString() const {
    std::string s;
    for (int64_t d : shape)
      s += (s.empty() ? "" : ", ") + std::to_string(d);
    return "[" + s + "]";
  }
};

/// The entry `--entry` names: a function of the module, or `predict` /
/// `eval` for the step's derived ones. Missing: an error listing the
/// functions.
FailureOr<func::FuncOp> findEntry(ModuleOp module, std::string &error) {
  SmallVector<std::string> names;
  for (func::FuncOp f : module.getOps<func::FuncOp>())
    names.push_back(f.getSymName().str());
  llvm::sort(names);
  std::string list = llvm::join(names, ", ");
  if (entry.empty()) {
    error = "--entry is needed: the function to export (`predict` for '" +
            fuse::abi::predictFunctionName(step) +
            "'); the module's functions are " + list;
    return failure();
  }
  for (std::string candidate : {entry.getValue(), step + "_" + entry})
    if (auto f = module.lookupSymbol<func::FuncOp>(candidate))
      return f;
  error = "--entry " + entry +
          ": no such function; the module's functions "
          "are " +
          list;
  return failure();
}

/// The names of the carried arguments (parameters and optimizer states,
/// with a `fuse.init`) of the step function, if there is one.
llvm::StringSet<> carriedNames(ModuleOp module) {
  llvm::StringSet<> names;
  if (auto fn = module.lookupSymbol<func::FuncOp>(step))
    for (unsigned i = 0; i < fn.getNumArguments(); ++i)
      if (fn.getArgAttr(i, fuse::abi::kInitAttrName))
        names.insert(fuse::argumentName(fn, i));
  return names;
}

llvm::Error exportModel() {
  if (batchSize < 1)
    return llvm::createStringError("--batch-size must be at least 1, got " +
                                   llvm::Twine(int64_t(batchSize)));
  std::string header = headerPath;
  if (header.empty()) {
    llvm::SmallString<256> path(output);
    llvm::sys::path::replace_extension(path, ".h");
    header = std::string(path);
  }
  if (header == output)
    return llvm::createStringError("--header '" + header +
                                   "' is the object file (-o)");

  DialectRegistry registry;
  fuse::registerDialects(registry);
  MLIRContext context(registry);
  llvm::SourceMgr sourceMgr;
  std::string error;
  std::unique_ptr<llvm::MemoryBuffer> input = openInputFile(model, &error);
  if (!input)
    return llvm::createStringError(model + ": " + error);
  sourceMgr.AddNewSourceBuffer(std::move(input), llvm::SMLoc());
  // Diagnostics go to stderr with their location, as fusec's.
  SourceMgrDiagnosticHandler handler(sourceMgr, &context);
  OwningOpRef<ModuleOp> module = fuse::parseModule(sourceMgr, &context);
  if (!module)
    return llvm::createStringError(model + ": cannot parse the model");
  fuse::nameArguments(*module, sourceMgr);
  fuse::TrainStepOverrides overrides;
  if (llvm::Error e = fusec::applyPrecision(overrides))
    return std::move(e);
  fusec::setPrecision(*module, overrides);
  if (failed(fuse::differentiateModule(*module)))
    return llvm::createStringError(model + ": cannot differentiate the model");
  FailureOr<func::FuncOp> fn = findEntry(*module, error);
  if (failed(fn))
    return llvm::createStringError(error);
  std::string function = fn->getSymName().str();
  std::string cName = identifier(name.empty() ? function : name.getValue());

  llvm::Expected<fuse::data::Safetensors> file =
      fuse::data::readSafetensors(weights);
  if (!file)
    return file.takeError();
  llvm::StringSet<> carried = carriedNames(*module);

  // The parameters come from the file, the inputs from the caller; a
  // dynamic dim 0 of an input is the batch.
  SmallVector<Type> types;
  std::vector<Operand> inputs, outputs;
  std::vector<std::pair<std::string, const fuse::Tensor *>> parameters;
  std::vector<int> parameterOf(fn->getNumArguments(), -1);
  for (unsigned i = 0; i < fn->getNumArguments(); ++i) {
    std::string arg = fuse::argumentName(*fn, i);
    auto type = cast<RankedTensorType>(fn->getArgumentTypes()[i]);
    std::string typeText;
    llvm::raw_string_ostream(typeText) << type;
    const fuse::Tensor *value = file->find(arg);
    if (carried.contains(arg) || value) {
      if (!value)
        return llvm::createStringError(
            weights + ": not weights of this model: it has no '" + arg + "' (" +
            typeText + "), a parameter of '" + function + "'");
      bool fits = type.hasStaticShape() &&
                  dtypeOf(type.getElementType()) == value->dtype() &&
                  llvm::equal(type.getShape(), value->shape());
      if (!fits)
        return llvm::createStringError(weights + ": '" + arg + "' is " +
                                       value->typeString() + " there and " +
                                       typeText + " in '" + function + "'");
      parameterOf[i] = int(parameters.size());
      parameters.push_back({arg, value});
      types.push_back(type);
      continue;
    }
    SmallVector<int64_t> shape(type.getShape());
    for (auto [d, size] : llvm::enumerate(shape)) {
      if (!ShapedType::isDynamic(size))
        continue;
      if (d != 0)
        return llvm::createStringError(
            "'" + arg + "' of '" + function + "' is " + typeText +
            ": only its dim 0 (the batch, --batch-size) may be dynamic");
      size = batchSize;
    }
    std::optional<fuse::DType> dtype = dtypeOf(type.getElementType());
    if (!dtype)
      return llvm::createStringError("'" + arg + "' of '" + function + "' is " +
                                     typeText + ": not a tensor of a C type");
    inputs.push_back({identifier(arg), *dtype, shape});
    types.push_back(RankedTensorType::get(shape, type.getElementType()));
  }

  std::string impl = "__fuse_export_" + cName;
  if (failed(fuse::specializeEntry(*module, function, types, impl)))
    return llvm::createStringError("cannot specialize '" + function + "'");
  auto specialized = module->lookupSymbol<func::FuncOp>(impl);
  for (auto [i, type] : llvm::enumerate(specialized.getResultTypes())) {
    auto tensor = cast<RankedTensorType>(type);
    if (!tensor.hasStaticShape())
      return llvm::createStringError("result #" + llvm::Twine(i) + " of '" +
                                     function +
                                     "' has a dynamic shape for these inputs");
    if (specialized.getResultAttr(i, fuse::abi::kInPlaceAttrName))
      return llvm::createStringError("'" + function +
                                     "' updates an argument in place: export a "
                                     "function without state (a prediction)");
    // The derived prediction's two results.
    std::string out = "result" + std::to_string(i);
    if (function == fuse::abi::predictFunctionName(step))
      out = i == 0 ? "logits" : "probabilities";
    outputs.push_back({out, *dtypeOf(tensor.getElementType()),
                       SmallVector<int64_t>(tensor.getShape())});
  }

  fuse::CompileOptions options;
  options.pipeline.fusion = fusec::fusion;
  options.pipeline.winograd = fusec::winograd;
  options.stage = fuse::Stage::Object;
  if (!mtriple.empty() || !mcpu.empty() || !mattr.empty()) {
    llvm::Expected<fuse::TargetDescription> target =
        fuse::resolveTarget(mtriple, mcpu, mattr);
    if (!target)
      return target.takeError();
    options.target = std::move(*target);
  }
  // Code for any executable or shared library: position-independent, the
  // small code model (the JIT's large one needs text relocations in a PIE).
  llvm::Expected<llvm::orc::JITTargetMachineBuilder> machine =
      fuse::targetMachineBuilder(options.target ? *options.target
                                                : fuse::hostTarget());
  if (!machine)
    return machine.takeError();
  machine->setRelocationModel(llvm::Reloc::PIC_);
  machine->setCodeModel(llvm::CodeModel::Small);
  options.machine = &*machine;
  llvm::Expected<fuse::CompileResult> result =
      fuse::lowerSpecialized(*module, impl, options);
  if (!result) {
    if (result.errorIsA<fuse::PassFailure>()) {
      llvm::consumeError(result.takeError());
      return llvm::createStringError("cannot compile '" + function + "'");
    }
    return result.takeError();
  }
  SmallVector<int64_t> workspace;
  if (auto lowered = module->lookupSymbol<LLVM::LLVMFuncOp>(impl)) {
    if (auto sizes = lowered->getAttrOfType<DenseI64ArrayAttr>(
            fuse::abi::kWorkspaceAttrName))
      llvm::append_range(workspace, sizes.asArrayRef());
    if (lowered->hasAttr(fuse::abi::kDynamicSizesAttrName))
      return llvm::createStringError("'" + function +
                                     "' kept dynamic sizes: not exportable");
  }

  // The C entry: constants for the parameters, static buffers for the
  // intermediates (and for an output the caller passes as NULL), the
  // compiled function called with them in the engine's order: arguments,
  // out-parameters, workspace.
  llvm::Module &ir = *result->llvmModule;
  llvm::LLVMContext &ctx = ir.getContext();
  llvm::Function *compiled = ir.getFunction(impl);
  if (!compiled)
    return llvm::createStringError("no compiled '" + impl + "'");
  size_t arity = types.size() + outputs.size() + workspace.size();
  if (compiled->arg_size() != arity)
    return llvm::createStringError(
        "'" + impl + "' takes " + llvm::Twine(compiled->arg_size()) +
        " arguments, expected " + llvm::Twine(arity));
  if (ir.getFunction(cName))
    return llvm::createStringError("--name " + cName +
                                   ": the object defines that symbol");
  llvm::Type *ptr = llvm::PointerType::get(ctx, 0);
  llvm::Type *i8 = llvm::Type::getInt8Ty(ctx);
  auto global = [&](llvm::StringRef what, uint64_t bytes, llvm::Constant *init,
                    bool constant) {
    auto *type = llvm::ArrayType::get(i8, std::max<uint64_t>(bytes, 1));
    if (!init)
      init = llvm::ConstantAggregateZero::get(type);
    auto *g = new llvm::GlobalVariable(ir, type, constant,
                                       llvm::GlobalValue::InternalLinkage, init,
                                       "__fuse_export_" + cName + "." + what);
    g->setAlignment(llvm::Align(64));
    return g;
  };
  std::vector<llvm::Type *> argTypes(inputs.size() + outputs.size(), ptr);
  auto *entryFn = llvm::Function::Create(
      llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), argTypes, false),
      llvm::GlobalValue::ExternalLinkage, cName, ir);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", entryFn));
  llvm::Triple triple(ir.getTargetTriple());
  bool x86 = triple.isX86();
  llvm::Value *savedMode = nullptr;
  if (x86) {
    // FTZ and DAZ, as the engine's calls (EngineOptions::flushDenormals).
    savedMode = b.CreateAlloca(b.getInt32Ty());
    llvm::Value *mode = b.CreateAlloca(b.getInt32Ty());
    b.CreateIntrinsic(llvm::Intrinsic::x86_sse_stmxcsr, {}, {savedMode});
    b.CreateStore(b.CreateOr(b.CreateLoad(b.getInt32Ty(), savedMode),
                             b.getInt32(0x8000 | 0x40)),
                  mode);
    b.CreateIntrinsic(llvm::Intrinsic::x86_sse_ldmxcsr, {}, {mode});
  }
  std::vector<llvm::Value *> args;
  size_t nextInput = 0;
  for (unsigned i = 0; i < types.size(); ++i) {
    if (parameterOf[i] < 0) {
      args.push_back(entryFn->getArg(nextInput++));
      continue;
    }
    auto &[argName, tensor] = parameters[parameterOf[i]];
    uint64_t bytes = tensor->numElements() * fuse::byteWidth(tensor->dtype());
    llvm::StringRef data(static_cast<const char *>(tensor->data()), bytes);
    args.push_back(
        global(identifier(argName), bytes,
               llvm::ConstantDataArray::getString(ctx, data, /*AddNull=*/false),
               /*constant=*/true));
  }
  for (auto [k, out] : llvm::enumerate(outputs)) {
    llvm::Value *given = entryFn->getArg(inputs.size() + k);
    uint64_t bytes = out.elements() * fuse::byteWidth(out.dtype);
    llvm::Value *scratch = global(out.name, bytes, nullptr, false);
    args.push_back(b.CreateSelect(b.CreateIsNull(given), scratch, given));
  }
  // One static workspace carved as the engine carves its own: in order,
  // each buffer at the end of the one before (the buffers of a shared slot
  // have size 0 but the last, and so share its bytes).
  uint64_t workspaceBytes = 0;
  for (int64_t bytes : workspace)
    workspaceBytes += bytes;
  llvm::GlobalVariable *workspaceGlobal =
      workspace.empty() ? nullptr
                        : global("workspace", workspaceBytes, nullptr,
                                 /*constant=*/false);
  uint64_t offset = 0;
  for (int64_t bytes : workspace) {
    args.push_back(b.CreateConstInBoundsGEP1_64(i8, workspaceGlobal, offset));
    offset += bytes;
  }
  b.CreateCall(compiled, args);
  if (x86)
    b.CreateIntrinsic(llvm::Intrinsic::x86_sse_ldmxcsr, {}, {savedMode});
  b.CreateRetVoid();
  // Only the C entry is visible: two exported models link together.
  for (llvm::Function &f : ir)
    if (!f.isDeclaration() && &f != entryFn)
      f.setLinkage(llvm::GlobalValue::InternalLinkage);
  for (llvm::GlobalVariable &g : ir.globals())
    if (!g.isDeclaration() && !g.hasLocalLinkage())
      g.setLinkage(llvm::GlobalValue::InternalLinkage);

  if (llvm::Error e = fuse::generateCode(*result, options))
    return e;
  if (result->code.size() != 1)
    return llvm::createStringError("expected one object, got " +
                                   llvm::Twine(result->code.size()));
  for (auto [path, text] :
       {std::pair<std::string, std::string>{
            output, result->code.front()->getBuffer().str()},
        {header, ""}}) {
    if (path == header) {
      // The header: the function, its buffers' shapes as comments and
      // constants.
      std::string macro = llvm::StringRef(cName).upper();
      std::string guard = identifier(
          llvm::StringRef(llvm::sys::path::filename(header)).upper());
      llvm::raw_string_ostream h(text);
      h << "/* Generated by fusec export from " << model << " and " << weights
        << ": '" << function << "' for a batch of " << batchSize << ".\n"
        << " * Link with the object file (" << output
        << "); the weights are inside it.\n"
        << " * Buffers are contiguous, row-major. Calls must not overlap: "
           "the\n"
        << " * intermediates live in static buffers. An output pointer may be "
           "NULL.\n"
        << " * Large loops run on OpenMP threads: link libomp (-lomp). */\n"
        << "#ifndef " << guard << "\n#define " << guard << "\n\n"
        << "#include <stdbool.h>\n#include <stdint.h>\n\n"
        << "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n";
      h << "#define " << macro << "_BATCH " << batchSize << "\n";
      auto describe = [&](const Operand &o, llvm::StringRef role) {
        std::string upper = llvm::StringRef(o.name).upper();
        h << "/* " << role << " " << o.name << ": " << fuse::dtypeName(o.dtype)
          << " " << o.shapeString() << " */\n";
        h << "#define " << macro << "_" << upper << "_RANK " << o.shape.size()
          << "\n";
        for (auto [d, size] : llvm::enumerate(o.shape))
          h << "#define " << macro << "_" << upper << "_DIM" << d << " " << size
            << "\n";
        h << "#define " << macro << "_" << upper << "_ELEMENTS " << o.elements()
          << "\n";
      };
      for (const Operand &o : inputs)
        describe(o, "input");
      for (const Operand &o : outputs)
        describe(o, "output");
      int64_t weightsCount = 0;
      for (auto &[argName, tensor] : parameters)
        weightsCount += tensor->numElements();
      h << "/* Parameters inside the object: " << parameters.size() << " ("
        << weightsCount << " values):";
      for (auto &[argName, tensor] : parameters)
        h << " " << argName << " " << tensor->typeString();
      h << ". */\n\n";
      h << "void " << cName << "(";
      bool first = true;
      for (const Operand &o : inputs) {
        h << (first ? "" : ", ") << "const " << cType(o.dtype) << " *"
          << o.name;
        first = false;
      }
      for (const Operand &o : outputs) {
        h << (first ? "" : ", ") << cType(o.dtype) << " *" << o.name;
        first = false;
      }
      h << ");\n\n#ifdef __cplusplus\n}\n#endif\n\n#endif /* " << guard
        << " */\n";
    }
    std::unique_ptr<llvm::ToolOutputFile> out = openOutputFile(path, &error);
    if (!out)
      return llvm::createStringError(path + ": " + error);
    out->os() << text;
    out->os().flush();
    if (out->os().has_error())
      return llvm::createStringError(path + ": cannot write");
    out->keep();
  }
  llvm::outs() << "Exported '" << function << "' as " << cName << " to "
               << output << " and " << header << " (" << parameters.size()
               << " parameter tensors inside)\n";
  return llvm::Error::success();
}

} // namespace

int fusec::exportMain() { return fusec::exitCode("export", exportModel()); }
