//===- Autodiff.cpp - The fuse-autodiff pass ------------------------------===//

#include "Fuse/IR/FuseOps.h"
#include "fuse/SourceNames.h"
#include "fuse/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/DenseSet.h"

namespace fuse {
#define GEN_PASS_DEF_FUSEAUTODIFF
#include "fuse/Transforms/Passes.h.inc"
} // namespace fuse

using namespace mlir;
using namespace fuse;

/// Replaces one value_and_grad by the callee's forward ops and their VJPs.
static LogicalResult differentiate(ValueAndGradOp op, func::FuncOp callee) {
  if (!callee.getBody().hasOneBlock())
    return op.emitOpError("can only differentiate single-block functions");
  OpBuilder b(op);
  Location loc = op.getLoc();
  Block &body = callee.front();

  // Forward: a copy of the callee, in the caller.
  IRMapping map;
  map.map(body.getArguments(), op.getArgs());
  SmallVector<Operation *> forward;
  for (Operation &o : body.without_terminator())
    forward.push_back(b.clone(o, map));
  Value loss = map.lookup(body.getTerminator()->getOperand(0));

  // Values that depend on a wrt argument.
  llvm::DenseSet<Value> active;
  for (int64_t i : op.getWrt())
    active.insert(op.getArgs()[i]);
  for (Operation *o : forward)
    if (llvm::any_of(o->getOperands(),
                     [&](Value v) { return active.contains(v); }))
      active.insert(o->result_begin(), o->result_end());

  // Backward: VJPs in reverse order, summing gradients of shared values.
  llvm::DenseMap<Value, Value> grads;
  grads[loss] = FullLikeOp::create(b, loc, loss, b.getF64FloatAttr(1.0));
  for (Operation *o : llvm::reverse(forward)) {
    SmallVector<Value> resultGrads;
    for (Value r : o->getResults())
      resultGrads.push_back(grads.lookup(r));
    if (llvm::all_of(resultGrads, [](Value g) { return !g; }) ||
        llvm::none_of(o->getOperands(),
                      [&](Value v) { return active.contains(v); }))
      continue;
    auto vjp = dyn_cast<VJPOpInterface>(o);
    if (!vjp) {
      InFlightDiagnostic diag =
          o->emitOpError("has no gradient rule, needed to differentiate ")
          << op.getCalleeAttr() << " with respect to ";
      llvm::interleaveComma(op.getWrt(), diag, [&](int64_t i) {
        diag << describeArgument(callee, i);
      });
      return diag;
    }
    SmallVector<Value> operandGrads;
    if (failed(vjp.buildVJP(b, resultGrads, operandGrads)))
      return failure();
    for (auto [operand, grad] : llvm::zip(o->getOperands(), operandGrads)) {
      if (!grad || !active.contains(operand))
        continue;
      Value &sum = grads[operand];
      sum = sum ? AddOp::create(b, loc, sum, grad).getResult() : grad;
    }
  }

  SmallVector<Value> results = {loss};
  for (int64_t i : op.getWrt()) {
    Value arg = op.getArgs()[i];
    Value grad = grads.lookup(arg);
    results.push_back(
        grad ? grad
             : FullLikeOp::create(b, loc, arg, b.getF64FloatAttr(0.0))
                   .getResult());
  }
  op.replaceAllUsesWith(results);
  op.erase();
  return success();
}

namespace {
struct FuseAutodiffPass : fuse::impl::FuseAutodiffBase<FuseAutodiffPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<ValueAndGradOp> ops;
    module.walk([&](ValueAndGradOp op) { ops.push_back(op); });
    // A callee that itself takes a gradient (a gradient of a gradient) is
    // differentiated after its own value_and_grad ops are expanded: each
    // round expands those whose callee has none left.
    while (!ops.empty()) {
      SmallVector<ValueAndGradOp> waiting;
      for (ValueAndGradOp op : ops) {
        auto callee = module.lookupSymbol<func::FuncOp>(op.getCalleeAttr());
        if (!callee)
          return signalPassFailure(); // verified: never
        bool nested =
            callee->walk([](ValueAndGradOp) { return WalkResult::interrupt(); })
                .wasInterrupted();
        if (nested) {
          waiting.push_back(op);
          continue;
        }
        if (failed(differentiate(op, callee)))
          return signalPassFailure();
      }
      if (waiting.size() == ops.size()) {
        waiting.front().emitOpError(
            "takes the gradient of a function that takes its own gradient, "
            "directly or through others (a cycle)");
        return signalPassFailure();
      }
      ops = std::move(waiting);
    }
  }
};
} // namespace
