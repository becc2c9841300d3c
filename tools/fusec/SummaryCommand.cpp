//===- SummaryCommand.cpp - fusec summary: a model's parameters and FLOPs -===//
//
// `fusec summary MODEL.mlir` lists what Keras' `model.summary()` does for a
// model's `fuse.train_step`: each parameter's name, shape, count and
// initializer, and the total; and the floating-point operations of one
// example: the multiply-adds (2 FLOPs each) of the matmuls, batch matmuls,
// convolutions and attentions of the forward pass (`@<step>_eval`, dropout off)
// and of the training step (`@<step>`, the differentiated function: forward and
// backward, simplified as compiled: the gradients actually computed, not an
// estimate of 3x the forward; a first layer's input gradient is not
// computed). Element-wise ops, reductions and the optimizer's update are
// left out: linear in the size of the tensors, they are small next to
// those. Dynamic dims are 1: per example, and per token of a sequence
// model whose length is dynamic.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"

#include "Fuse/IR/FuseOps.h"

#include "fuse/ABI.h"
#include "fuse/Compiler.h"
#include "fuse/Parse.h"
#include "fuse/Pipeline.h"
#include "fuse/SourceNames.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
namespace cl = llvm::cl;

cl::SubCommand fusec::summaryCommand(
    "summary", "Print a model's parameters (names, shapes, counts, "
               "initializers) and the FLOPs of one training step per example");

namespace {
cl::opt<std::string> model(cl::Positional, cl::desc("<model .mlir file>"),
                           cl::Required, cl::cat(fusec::category()),
                           cl::sub(fusec::summaryCommand));
cl::opt<std::string> step("step",
                          cl::desc("The step function (fuse.train_step)"),
                          cl::init("train"), cl::cat(fusec::category()),
                          cl::sub(fusec::summaryCommand));
cl::opt<std::string> jsonPath("json", cl::desc("Write the summary as JSON"),
                              cl::value_desc("PATH"),
                              cl::cat(fusec::category()),
                              cl::sub(fusec::summaryCommand));

struct Parameter {
  std::string name, type, init;
  llvm::SmallVector<int64_t> shape;
  int64_t count = 1;
};

/// The number of elements of a static shape.
int64_t elements(ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

/// The leading (batch and head) elements, T, S, D and Dv of an attention's
/// query [..., T, D], key [..., S, D] and value [..., S, Dv].
std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t>
attentionDims(Value query, Value key, Value value) {
  auto q = cast<RankedTensorType>(query.getType()).getShape();
  auto k = cast<RankedTensorType>(key.getType()).getShape();
  auto v = cast<RankedTensorType>(value.getType()).getShape();
  return {elements(q.drop_back(2)), q[q.size() - 2], k[k.size() - 2], q.back(),
          v.back()};
}

/// The multiply-adds of `func`'s contractions (static shapes).
int64_t multiplyAdds(func::FuncOp func) {
  int64_t total = 0;
  auto shape = [](Value v) {
    return cast<RankedTensorType>(v.getType()).getShape();
  };
  func.walk([&](Operation *op) {
    if (auto mm = dyn_cast<fuse::MatmulOp>(op)) {
      ArrayRef<int64_t> lhs = shape(mm.getLhs());
      int64_t k = lhs[mm.getTransposeLhs() ? 0 : 1];
      total += elements(shape(mm.getResult())) * k;
    } else if (auto bmm = dyn_cast<fuse::BatchMatmulOp>(op)) {
      ArrayRef<int64_t> lhs = shape(bmm.getLhs());
      int64_t k = lhs[bmm.getTransposeLhs() ? 1 : 2];
      total += elements(shape(bmm.getResult())) * k;
    } else if (auto conv = dyn_cast<fuse::Conv2DOp>(op)) {
      // Each output element: KH x KW x C products.
      ArrayRef<int64_t> filter = shape(conv.getFilter());
      total += elements(shape(conv.getResult())) * elements(filter.drop_back());
    } else if (auto grad = dyn_cast<fuse::Conv2DInputGradOp>(op)) {
      // As many products as the forward convolution.
      ArrayRef<int64_t> filter = shape(grad.getFilter());
      total += elements(shape(grad.getGrad())) * elements(filter.drop_back());
    } else if (auto grad = dyn_cast<fuse::Conv2DFilterGradOp>(op)) {
      ArrayRef<int64_t> filter = shape(grad.getFilter());
      total += elements(shape(grad.getGrad())) * elements(filter.drop_back());
    } else if (auto attention = dyn_cast<fuse::AttentionOp>(op)) {
      // Scores Q K^T and their product with V, every block (a causal mask
      // skips about half; counted dense, as the scores' matmuls would be).
      auto [lead, t, s, d, dv] = attentionDims(
          attention.getQuery(), attention.getKey(), attention.getValue());
      total += lead * t * s * (d + dv);
    } else if (auto grad = dyn_cast<fuse::AttentionGradOp>(op)) {
      // The scores again, then the gradients of V, of the probabilities,
      // of Q and of K.
      auto [lead, t, s, d, dv] =
          attentionDims(grad.getQuery(), grad.getKey(), grad.getValue());
      total += lead * t * s * (3 * d + 2 * dv);
    }
  });
  return total;
}

/// The multiply-adds of function `name` of a fresh copy of the model, its
/// dynamic dims 1 (a stacked K-step dim stays out: `name` is a single step).
FailureOr<int64_t> countFunction(ModuleOp parsed, llvm::StringRef name) {
  OwningOpRef<ModuleOp> module(cast<ModuleOp>(parsed->clone()));
  auto func = module->lookupSymbol<func::FuncOp>(name);
  if (!func)
    return failure();
  SmallVector<Type> types;
  for (Type type : func.getArgumentTypes()) {
    auto tensor = cast<RankedTensorType>(type);
    SmallVector<int64_t> shape(tensor.getShape());
    for (int64_t &d : shape)
      if (ShapedType::isDynamic(d))
        d = 1;
    types.push_back(RankedTensorType::get(shape, tensor.getElementType()));
  }
  FailureOr<func::FuncOp> specialized =
      fuse::specializeEntry(*module, name, types);
  if (failed(specialized))
    return failure();
  // As compiled: what no result needs (the gradient of the inputs) is gone.
  PassManager pm(module->getContext());
  fuse::buildSimplifyPipeline(pm);
  if (failed(pm.run(*module)))
    return failure();
  return multiplyAdds(module->lookupSymbol<func::FuncOp>(name));
}

llvm::Error summarize() {
  DialectRegistry registry;
  fuse::registerDialects(registry);
  MLIRContext context(registry);
  std::string error;
  std::unique_ptr<llvm::MemoryBuffer> input = openInputFile(model, &error);
  if (!input)
    return llvm::createStringError(model + ": " + error);
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(input), llvm::SMLoc());
  SourceMgrDiagnosticHandler handler(sourceMgr, &context);
  OwningOpRef<ModuleOp> module = fuse::parseModule(sourceMgr, &context);
  if (!module)
    return llvm::createStringError(model + ": cannot parse the model");
  fuse::nameArguments(*module, sourceMgr);
  SmallVector<std::string> steps;
  for (auto op : module->getOps<fuse::TrainStepOp>())
    steps.push_back(op.getSymName().str());
  if (!llvm::is_contained(steps, step.getValue()))
    return llvm::createStringError(
        model + ": no fuse.train_step '" + step + "' (--step); " +
        (steps.empty() ? std::string("it has none")
                       : "it has " + llvm::join(steps, ", ")));
  fuse::TrainStepOverrides overrides;
  if (llvm::Error e = fusec::applyPrecision(overrides))
    return std::move(e);
  fusec::setPrecision(*module, overrides);
  if (failed(fuse::differentiateModule(*module)))
    return llvm::createStringError(model + ": cannot differentiate the model");

  // The parameters: the evaluation's arguments the step carries (a
  // `fuse.init`), in the loss's order; not the optimizer's states.
  auto stepFn = module->lookupSymbol<func::FuncOp>(step);
  auto eval =
      module->lookupSymbol<func::FuncOp>(fuse::abi::evalFunctionName(step));
  if (!stepFn || !eval)
    return llvm::createStringError("no step or evaluation function for '" +
                                   step + "'");
  llvm::StringMap<std::string> initOf;
  for (unsigned i = 0; i < stepFn.getNumArguments(); ++i)
    if (Attribute init = stepFn.getArgAttr(i, fuse::abi::kInitAttrName)) {
      std::string text;
      llvm::raw_string_ostream os(text);
      init.print(os);
      // `#fuse.init<glorot_uniform>` -> `glorot_uniform`.
      llvm::StringRef inner(text);
      if (inner.consume_front("#fuse.init<") && inner.consume_back(">"))
        text = inner.str();
      initOf[fuse::argumentName(stepFn, i)] = text;
    }
  std::vector<Parameter> params;
  int64_t total = 0;
  for (unsigned i = 0; i < eval.getNumArguments(); ++i) {
    std::string argName = fuse::argumentName(eval, i);
    auto it = initOf.find(argName);
    if (it == initOf.end())
      continue;
    auto type = cast<RankedTensorType>(eval.getArgumentTypes()[i]);
    Parameter p;
    p.name = argName;
    llvm::raw_string_ostream(p.type) << type;
    p.init = it->second;
    p.shape.assign(type.getShape().begin(), type.getShape().end());
    p.count = elements(p.shape);
    total += p.count;
    params.push_back(std::move(p));
  }
  FailureOr<int64_t> forward = countFunction(*module, eval.getSymName());
  FailureOr<int64_t> training = countFunction(*module, step);
  if (failed(forward) || failed(training))
    return llvm::createStringError("cannot count the FLOPs of '" + step + "'");

  auto &os = llvm::outs();
  os << "Model " << model << ", step '" << step << "'\n";
  size_t width = 9;
  for (const Parameter &p : params)
    width = std::max(width, p.name.size());
  os << llvm::left_justify("parameter", width) << "  "
     << llvm::left_justify("shape", 20) << llvm::right_justify("count", 12)
     << "  initializer\n";
  for (const Parameter &p : params) {
    std::string shape;
    for (int64_t d : p.shape)
      shape += (shape.empty() ? "" : "x") + std::to_string(d);
    os << llvm::left_justify(p.name, width) << "  "
       << llvm::left_justify(shape.empty() ? "scalar" : shape, 20)
       << llvm::right_justify(std::to_string(p.count), 12) << "  " << p.init
       << "\n";
  }
  os << "Total parameters: " << total << "\n";
  os << "FLOPs per example (2 per multiply-add of matmuls, convolutions and "
        "attentions): "
     << "forward " << 2 * *forward << ", training step " << 2 * *training
     << llvm::format(" (%.2fx the forward)",
                     *forward ? double(*training) / double(*forward) : 0.0)
     << "\n";
  if (jsonPath.empty())
    return llvm::Error::success();
  std::error_code ec;
  llvm::raw_fd_ostream file(jsonPath, ec);
  if (ec)
    return llvm::createStringError(jsonPath +
                                   ": cannot write: " + ec.message());
  {
    llvm::json::OStream json(file, 2);
    json.object([&] {
      json.attribute("step", step.getValue());
      json.attributeArray("parameters", [&] {
        for (const Parameter &p : params)
          json.object([&] {
            json.attribute("name", p.name);
            json.attributeArray("shape", [&] {
              for (int64_t d : p.shape)
                json.value(d);
            });
            json.attribute("type", p.type);
            json.attribute("count", p.count);
            json.attribute("initializer", p.init);
          });
      });
      json.attribute("total_parameters", total);
      json.attribute("forward_flops_per_example", 2 * *forward);
      json.attribute("training_flops_per_example", 2 * *training);
    });
  }
  file << "\n";
  file.close();
  if (file.has_error())
    return llvm::createStringError(jsonPath +
                                   ": cannot write: " + file.error().message());
  return llvm::Error::success();
}

} // namespace

int fusec::summaryMain() { return fusec::exitCode("summary", summarize()); }
