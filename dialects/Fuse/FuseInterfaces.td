//===- FuseInterfaces.td - fuse op interfaces --------------*- tablegen -*-===//

#ifndef FUSE_INTERFACES_TD
#define FUSE_INTERFACES_TD

include "mlir/IR/OpBase.td"

def Fuse_VJPOpInterface : OpInterface<"VJPOpInterface"> {
  let cppNamespace = "::fuse";
  let description = [{
    A differentiable op builds its vector-Jacobian product: given the
    gradients of its results (null for a result with no gradient), it
    creates ops computing the gradient of each operand, or null for an
    operand that gets none (integer and boolean operands, step counters).
    The builder's insertion point is where the gradient ops go; the op's own
    results (the forward values) may be used, and values that the backward
    pass keeps in place of the op's operands may be computed right after the
    op (max_pool2d's argmax).
  }];
  let methods = [
    InterfaceMethod<
      "Builds the gradients of the operands from those of the results.",
      "::llvm::LogicalResult", "buildVJP",
      (ins "::mlir::OpBuilder &":$builder,
           "::mlir::ValueRange":$resultGrads,
           "::llvm::SmallVectorImpl<::mlir::Value> &":$operandGrads)>
  ];
}

def Fuse_OptimizerOpInterface : OpInterface<"OptimizerOpInterface"> {
  let cppNamespace = "::fuse";
  let description = [{
    An optimizer op: operands `lr`, `step`, then the parameters, their
    gradients and their states (state k of parameter i at k * n + i), then
    the current bf16 copies of the parameters at `copy_params`; results the
    new parameters, then the new states, then the new copies.
  }];
  let methods = [
    InterfaceMethod<
      "The state tensors each parameter has, given the op's attributes.",
      "unsigned", "getNumStatesPerParam">,
    InterfaceMethod<
      "The value state `k` of every parameter starts at.",
      "double", "getStateInitialValue", (ins "unsigned":$k), [{}],
      [{ return 0.0; }]>,
    InterfaceMethod<"The parameters.", "::mlir::OperandRange", "getParams",
      (ins), [{}], [{ return $_op.getParams(); }]>,
    InterfaceMethod<"The current bf16 copies of the parameters at "
      "getCopyParams(), whose storage the new ones (the last results) take.",
      "::mlir::OperandRange", "getCopies", (ins), [{}],
      [{ return $_op.getCopies(); }]>,
    InterfaceMethod<"The indices (into getParams()) of the copied "
      "parameters.", "std::optional<::llvm::ArrayRef<int64_t>>",
      "getCopyParams", (ins), [{}], [{ return $_op.getCopyParams(); }]>
  ];
}

#endif // FUSE_INTERFACES_TD
