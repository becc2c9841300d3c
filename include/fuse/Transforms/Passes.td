//===- Passes.td - Fuse transforms passes ---------------------------------===//
//
// Graph-level passes on the fuse dialect: training steps, autodiff,
// K-step functions, specialization. They run before any lowering.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_TRANSFORMS_PASSES_TD
#define FUSE_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def FuseExpandTrainStep : Pass<"fuse-expand-train-step", "::mlir::ModuleOp"> {
  let summary = "Define each fuse.train_step as a step function";
  let description = [{
    Replaces each `fuse.train_step` by the function it declares:

    ```
    func.func @train(params..., states..., other loss arguments..., lr, step)
        -> (loss, new params..., new states...)
    ```

    whose body is `fuse.value_and_grad` of the loss with respect to the
    parameters and one `fuse.<optimizer>` op over all of them with the
    step's hyperparameters. Every new parameter and state is marked
    `fuse.in_place` of its argument. State arguments are named after their
    parameter (`w1.state0`). Runs before `fuse-autodiff`.

    With `data-parallel` (set by the engine, `EngineOptions::dataParallel`,
    when training runs on several ranks), the step takes one more argument,
    `replica_weight` (`tensor<f32>`, before `lr`): this rank's share of the
    global batch, and a `fuse.all_reduce sum` over every gradient, each
    first multiplied by that weight, sits between the gradients and the
    clipping and optimizer update, so every rank applies the same update
    from the global batch's gradient. The K-step function then reduces
    once per step, inside its loop. When the loss has `fuse.dropout`, the
    step also takes `example_offset` (`tensor<i64>`, before
    `replica_weight`), the global batch's index of the rank's first
    example, and differentiates a private copy of the loss,
    `@<loss>_data_parallel`, whose dropouts take it as their rows' offset:
    each example draws the mask it would in one process.
  }];
  let options = [
    Option<"dataParallel", "data-parallel", "bool", /*default=*/"false",
           "Sum the gradients of every rank (fuse.all_reduce) before the "
           "update">
  ];
}

def FuseDeriveEval : Pass<"fuse-derive-eval", "::mlir::ModuleOp"> {
  let summary = "Define an evaluation function for each fuse.train_step";
  let description = [{
    For each `fuse.train_step @train`, defines `@train_eval`: the loss
    function's forward pass in inference mode, every `fuse.dropout` passing
    its input through, with the step's parameters and batch inputs as
    arguments (in the step function's order, without optimizer states,
    learning rate and step counter):

    ```
    func.func @train_eval(params..., batch...) -> (loss, correct)
    ```

    When the loss has one `fuse.softmax_cross_entropy` over `[N, C]` logits
    (C static), the second result is the `tensor<i32>` number of examples
    whose label's logit is the largest (their accuracy times N); otherwise
    the loss is the only result. Runs before `fuse-expand-train-step`,
    which removes the `fuse.train_step`.
  }];
}

def FuseDerivePredict : Pass<"fuse-derive-predict", "::mlir::ModuleOp"> {
  let summary = "Define a prediction function for each fuse.train_step";
  let description = [{
    For each `fuse.train_step @train` whose loss has one
    `fuse.softmax_cross_entropy`, defines `@train_predict`: the ops its
    logits depend on, in inference mode (every `fuse.dropout` passes its
    input through), returning the logits and their softmax over the
    classes (the probabilities: computed in the compiled function, so that
    `fusec predict`, `fuse::predict` and an exported object agree bitwise).
    Its arguments are the step's parameters and the batch inputs the logits
    read (the labels are not among them), in the step function's order:

    ```
    func.func @train_predict(params..., inputs...) -> (logits, probabilities)
    ```

    A loss without exactly one cross-entropy gets none. Runs before
    `fuse-expand-train-step`, which removes the `fuse.train_step`.
  }];
}

def FuseMarkClassLabels : Pass<"fuse-mark-class-labels", "::mlir::ModuleOp"> {
  let summary = "Mark function arguments that are class labels";
  let description = [{
    Sets `fuse.class_labels = C` on each integer argument of a function
    that reaches the labels operand of a `fuse.softmax_cross_entropy` (or
    its gradient) over `[N, C]` logits with a static `C`, directly or
    through slices, casts and reshapes (the smallest `C` when it reaches
    several). The JIT engine checks, before each call, that every element
    of such an argument is in `[0, C)`, naming the argument: compiled code
    cannot say which label was out of range (its cross-entropy gives NaN).
    Runs after `fuse-wrap-steps`, so step, K-step and evaluation functions
    are all marked, and again on each specialization, which marks an
    argument whose `C` is dynamic in the declaration.
  }];
}

def FuseAutodiff : Pass<"fuse-autodiff", "::mlir::ModuleOp"> {
  let summary = "Replace fuse.value_and_grad by forward and backward ops";
  let description = [{
    Reverse-mode automatic differentiation. Each `fuse.value_and_grad` is
    replaced, in the caller, by a copy of the callee's forward ops followed by
    the vector-Jacobian product of each op on a path from a `wrt` argument to
    the loss, in reverse order (each op's `VJPOpInterface`). Forward values
    are reused, not recomputed; gradients of values used several times are
    summed; ops off those paths get no backward ops, and a `wrt` argument
    the loss does not depend on gets a zero gradient. An op on such a path
    without a VJP is an error naming it and the argument.

    A callee may itself take a gradient (a gradient of a gradient): its own
    `fuse.value_and_grad` ops are expanded first, so the backward ops they
    build are differentiated in turn; every op a VJP rule emits has a rule
    of its own. A cycle of such callees is an error.
  }];
}

def FuseApplyPrecisionPolicy
    : Pass<"fuse-apply-precision-policy", "::mlir::ModuleOp"> {
  let summary = "Round the operands of contractions to bf16 in bf16 step functions";
  let description = [{
    Mixed precision, as TensorFlow's `mixed_bfloat16` policy and PyTorch's
    autocast. In each function marked `fuse.precision = "bf16"` (a step
    function of a `fuse.train_step` with `precision = "bf16"`, marked by
    `fuse-expand-train-step`), every `f32` `fuse.matmul` and
    `fuse.batch_matmul` (forward and backward: the pass runs after
    `fuse-autodiff`), `fuse.conv2d` and convolution gradient
    (`fuse.conv2d_input_grad`: the output gradient and the filter;
    `fuse.conv2d_filter_grad`: the input and the output gradient; their
    third operand only gives the result's type) gets `fuse.cast` operands
    of `bf16` and keeps its `f32` result, the products summed in `f32`.
    Everything else (element-wise
    work, reductions, softmax, the loss, the optimizer, the parameters and
    their states) stays `f32`. A value used by several contractions is cast
    once (CSE), so the activations the backward pass reads are the `bf16`
    copies the forward pass made.

    ReLU masks: the gradient of `y = fuse.relu(x)` masks by `fuse.compare
    gt, y, 0`. Where every other reader of the `f32` `y` comes before that
    comparison (the products read its `bf16` copy), the `f32` `y` need not
    live across the loss. If the step's code runs with subnormals flushed
    (`flushed-denormals`, the engine's default) and the products read a
    `bf16` copy of `y`, the comparison reads that copy, widened: `y` is
    then 0 or normal, and the `bf16` rounding of a positive normal `f32` is
    positive, so the mask is the same bits and only the `bf16` copy is kept
    (half of `y`'s bytes, as autocast keeps a ReLU's `bf16` output).
    Otherwise the comparison moves to right after the ReLU and its result
    is cast to `i8` under `fuse.materialize` (kept in memory, never
    recomputed in its readers), which the backward pass compares with 0: a
    byte per element is kept across the loss instead of the `f32` output.

    Master weights: an optimizer op updating a parameter whose `bf16` copy
    the step reads, and whose new value the function returns in place of
    it (`fuse.in_place`), also writes the next step's copy: the cast
    becomes one of the op's `copies` (`copy_params` lists the copied
    parameters), and the op's last results are the new copies, the new
    parameters rounded in the update's own loop once lowered.

    IPEX's split layout: in a function also marked `fuse.master_weights =
    "split"` (`master_weights = "split"` on the `fuse.train_step`), such a
    parameter is not cast but split into its top half (`fuse.high_half`, a
    `bf16`: the `f32` value truncated, which the products read) and its low
    half (`fuse.low_half`, `i16`); the optimizer op reads and writes the
    pair (`copies`: the top halves then the low halves, `split_copies`),
    and the new parameter is their join. Other operands are cast as above.

    Runs between `fuse-autodiff` and `fuse-wrap-steps` (the K-step function
    copies the step's body, casts included, and carries the copies the
    update writes).
  }];
  let options = [
    Option<"flushedDenormals", "flushed-denormals", "bool",
           /*default=*/"true",
           "The code runs with subnormals flushed to zero (FTZ and DAZ), so "
           "a ReLU's mask may be taken from its bf16 copy">
  ];
}

def FuseDecomposeLayerNorm
    : Pass<"fuse-decompose-layer-norm", "::mlir::func::FuncOp"> {
  let summary = "Expand fuse.layer_norm into its statistics and primitives";
  let description = [{
    Replaces each `fuse.layer_norm` by the ops that compute it: the mean
    and reciprocal standard deviation of each normalized group, the
    normalized input, then scale and bias. Its gradient (built by autodiff)
    computes the same statistics with the same ops, so CSE, which runs right
    after in the simplify pipeline, keeps one copy: the forward pass's
    statistics are what the backward pass reads.
  }];
}

def FuseWrapSteps : Pass<"fuse-wrap-steps", "::mlir::ModuleOp"> {
  let summary = "Derive a K-step function from each step function";
  let description = [{
    Step fusing (Keras' `steps_per_execution`) done by the compiler. For each
    step function (one with an argument marked `fuse.per_step`, as
    `fuse-expand-train-step` makes them) adds `@<name>_steps`, which runs K
    steps in one call:

    - each `fuse.per_step` argument gains a leading dim of K
      (`tensor<?x64x784xf32>`, marked `fuse.stacked`), sliced per step;
    - results marked `fuse.in_place` (parameters, optimizer state) are
      loop-carried, and still computed in place of their arguments;
    - a `fuse.cast` of a carried parameter that an optimizer op also writes
      for the next step (its `copies`, from `fuse-apply-precision-policy`)
      is loop-carried too: cast once before the loop, the update's new copy
      yielded, no cast of the parameter left inside;
    - a carried parameter that an optimizer op with `split_copies` reads
      and writes as its halves (`fuse.high_half`, `fuse.low_half`) is
      carried as the two halves alone, and `@<name>_steps` takes and
      returns them: the parameter's argument holds its top halves (`bf16`,
      `fuse.split_halves = L`) and an argument appended after the others
      its low halves (`i16`, `fuse.low_half_of`), both in place, so the
      caller keeps the pair between calls and no `f32` copy exists; inside
      the loop no `f32` value of it but the join of the carried halves
      (`fuse.join_halves`), for readers other than the halves (the
      optimizer's `params` operand names it);
    - the `fuse.step_counter` argument is the first step's number; step i
      sees it plus i, exactly as if called alone;
    - every other result is a per-step metric (the loss), returned stacked:
      `tensor<?xf32>` with one value per step; they must have static shapes;
    - other arguments (the learning rate) are the same at every step.

    The body is an `scf.for` from 0 to K around a copy of the step's body.
    K is read from the first stacked argument at run time and stays dynamic
    through compilation, so one compiled function serves every K, including
    the shorter last chunk of an epoch.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

def FuseSpecialize : Pass<"fuse-specialize", "::mlir::ModuleOp"> {
  let summary = "Give a function's dynamic dimensions concrete sizes";
  let description = [{
    Replaces the argument types of `function` by `arg-types` (which must be
    compatible: same rank and element type, equal static dimensions) and
    propagates the shapes through every op, refining result and function
    result types. Shape conflicts that become visible are reported by the
    verifier with the op's location.

    ```
    fuse-opt --fuse-specialize="function=loss arg-types=tensor<64x784xf32>,tensor<64xi32>"
    ```
  }];
  let options = [
    Option<"function", "function", "std::string", /*default=*/"",
           "The function to specialize">,
    ListOption<"argTypes", "arg-types", "std::string",
               "The concrete type of each argument">
  ];
}

#endif // FUSE_TRANSFORMS_PASSES_TD
