//===- FuseDialect.td - The fuse dialect ------------------*- tablegen -*-===//
//
// The fuse dialect: neural-network training graphs on ranked tensors.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_DIALECT_TD
#define FUSE_DIALECT_TD

include "mlir/IR/OpBase.td"

def Fuse_Dialect : Dialect {
  let name = "fuse";
  let cppNamespace = "::fuse";
  let summary = "Neural-network training graphs on ranked tensors";
  let description = [{
    The `fuse` dialect describes the forward pass and loss of a model on
    builtin ranked tensors. Element types are floats (`f32` first; `bf16`,
    `f16` and `f64` are accepted by the verifier) and signless integers (for
    labels, step counters and masks). Dimensions may be dynamic (`?`); the
    compiler specializes them to the shapes of each call.

    Binary element-wise ops broadcast like NumPy: shapes are aligned on the
    right, and a dimension of size 1 stretches to match the other operand.
    Element types never promote implicitly: both operands of a binary op have
    the same element type.

    Every op without side effects is `Pure`, so upstream CSE and DCE apply.

    A function result may carry `fuse.in_place = N`: the compiled function
    writes that result into the buffer of its argument `N` (same type),
    which the caller therefore gives up, as with JAX's donated arguments.
    Training steps mark their new parameters and optimizer states this way,
    so an update streams through memory once and allocates nothing. If the
    result cannot be computed in that buffer directly, the compiler warns
    naming the argument, and copies.

    ```mlir
    func.func @sgd(%lr: tensor<f32>, %step: tensor<i64>, %p: tensor<4xf32>,
                   %g: tensor<4xf32>) -> (tensor<4xf32> {fuse.in_place = 2}) {
      %q = fuse.sgd %lr, %step params(%p : tensor<4xf32>)
          grads(%g : tensor<4xf32>) states() -> tensor<4xf32>
      return %q : tensor<4xf32>
    }
    ```

    A step function (what `fuse-expand-train-step` produces, or one written
    by hand) marks its batch inputs `fuse.per_step` and its `tensor<i64>`
    step number `fuse.step_counter`; its results marked `fuse.in_place` are
    carried from one step to the next, the others are per-step metrics.
    `fuse-wrap-steps` derives from it a function running K steps per call,
    whose batch inputs and per-step results are `fuse.stacked`: a leading
    dim of K that the compiler keeps dynamic, so one compiled function
    serves every K.
  }];
  let hasConstantMaterializer = 1;
  let hasOperationAttrVerify = 1;
  let hasRegionArgAttrVerify = 1;
  let hasRegionResultAttrVerify = 1;
  let usePropertiesForAttributes = 1;
  let useDefaultAttributePrinterParser = 1;
}

class Fuse_Op<string mnemonic, list<Trait> traits = []>
    : Op<Fuse_Dialect, mnemonic, traits>;

//===----------------------------------------------------------------------===//
// Type constraints
//===----------------------------------------------------------------------===//

def Fuse_FloatTensor : RankedTensorOf<[AnyFloat]>;
def Fuse_IntTensor : RankedTensorOf<[AnySignlessInteger]>;
def Fuse_BoolTensor : RankedTensorOf<[I1]>;
def Fuse_Tensor : RankedTensorOf<[AnyFloat, AnySignlessInteger]>;
def Fuse_FloatScalar : 0DTensorOf<[AnyFloat]>;

// The global training step: a 0-d i64 tensor. Buildable, so the assembly
// format need not spell its type.
def Fuse_StepTensor : 0DTensorOf<[I64]> {
  let builderCall = "::mlir::RankedTensorType::get({}, $_builder.getI64Type())";
}

#endif // FUSE_DIALECT_TD
