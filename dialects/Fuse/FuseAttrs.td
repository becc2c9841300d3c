//===- FuseAttrs.td - fuse dialect attributes -------------*- tablegen -*-===//

#ifndef FUSE_ATTRS_TD
#define FUSE_ATTRS_TD

include "Fuse/FuseDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

def Fuse_ComparePredicate : I32EnumAttr<"ComparePredicate",
    "element-wise comparison predicate", [
      I32EnumAttrCase<"eq", 0>,
      I32EnumAttrCase<"ne", 1>,
      I32EnumAttrCase<"lt", 2>,
      I32EnumAttrCase<"le", 3>,
      I32EnumAttrCase<"gt", 4>,
      I32EnumAttrCase<"ge", 5>
    ]> {
  let cppNamespace = "::fuse";
}

def Fuse_AllReduceKind : I32EnumAttr<"AllReduceKind",
    "how fuse.all_reduce combines the ranks' tensors", [
      I32EnumAttrCase<"sum", 0>,
      I32EnumAttrCase<"mean", 1>
    ]> {
  let cppNamespace = "::fuse";
}

def Fuse_InitKind : I32EnumAttr<"InitKind", "parameter initializer", [
      I32EnumAttrCase<"zeros", 0>,
      I32EnumAttrCase<"ones", 1>,
      I32EnumAttrCase<"constant", 2>,
      I32EnumAttrCase<"uniform", 3>,
      I32EnumAttrCase<"normal", 4>,
      I32EnumAttrCase<"glorot_uniform", 5>,
      I32EnumAttrCase<"glorot_normal", 6>,
      I32EnumAttrCase<"he_uniform", 7>,
      I32EnumAttrCase<"he_normal", 8>
    ]> {
  let cppNamespace = "::fuse";
  let genSpecializedAttr = 0;
}

def Fuse_InitializerAttr : AttrDef<Fuse_Dialect, "Initializer"> {
  let mnemonic = "init";
  let summary = "How a parameter starts, as Keras' initializers";
  let description = [{
    The argument attribute `fuse.init` of a loss function's parameter, or of
    a step function's carried argument, says how training initializes it
    (seeded, so the same seed gives the same values). Fans follow Keras: a
    `[in, out]` matrix has fan-in `in` and fan-out `out`; an `HWIO` filter
    multiplies both by `H * W`; a vector has both equal to its size.

    | initializer | values |
    |---|---|
    | `zeros`, `ones` | 0, 1 |
    | `constant, value = v` | v |
    | `uniform, limit = a` (default 0.05) | uniform in [-a, a] |
    | `normal, stddev = s` (default 0.05) | normal, mean 0 |
    | `glorot_uniform` | uniform, a = sqrt(6 / (fan_in + fan_out)) |
    | `glorot_normal` | normal truncated at 2 s, s = sqrt(2 / (fan_in + fan_out)) |
    | `he_uniform` | uniform, a = sqrt(6 / fan_in) |
    | `he_normal` | normal truncated at 2 s, s = sqrt(2 / fan_in) |

    `fuse-expand-train-step` gives every parameter without one Keras'
    defaults: `glorot_uniform` for weights (rank 2 and more), `zeros` for
    biases; optimizer states start at `zeros` (Adagrad's accumulator at its
    `initial_accumulator_value`).

    ```mlir
    func.func @loss(%w: tensor<784x128xf32> {fuse.init = #fuse.init<he_uniform>},
                    %b: tensor<128xf32> {fuse.init = #fuse.init<constant, value = 0.1>},
                    ...)
    ```
  }];
  let parameters = (ins EnumParameter<Fuse_InitKind>:$kind,
                        APFloatParameter<"">:$scale);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The name of the kind's parameter (`stddev`, `limit`, `value`), or
    /// empty for kinds without one.
    static ::llvm::StringRef scaleName(InitKind kind);
  }];
}

def Fuse_LrScheduleKind : I32EnumAttr<"ScheduleKind",
    "learning-rate schedule", [
      I32EnumAttrCase<"constant", 0>,
      I32EnumAttrCase<"step", 1>,
      I32EnumAttrCase<"exponential", 2>,
      I32EnumAttrCase<"cosine", 3>,
      I32EnumAttrCase<"linear", 4>
    ]> {
  let cppNamespace = "::fuse";
  let genSpecializedAttr = 0;
}

def Fuse_LrScheduleAttr : AttrDef<Fuse_Dialect, "LrSchedule"> {
  let mnemonic = "lr_schedule";
  let summary = "A learning-rate schedule: a factor of the global step";
  let description = [{
    The attribute `lr_schedule` of `fuse.train_step`: the step function's
    learning rate at step `t` (the global step counter, 0 first) is its `lr`
    input times `factor(t)`, computed in f64 in compiled code from the step
    counter (`fuse.lr_schedule`), so changing the schedule's position never
    recompiles and a K-step call applies it per step, bitwise as K single
    steps. The scaled rate is rounded to f32 once per step.

    With `W = warmup` (default 0) and `s = t - W`, after the warmup:

    | kind | factor(t) for t >= W | as |
    |---|---|---|
    | `constant` | 1 | |
    | `step, decay_steps = D, gamma = g` | g^floor(s / D) | torch StepLR |
    | `exponential, decay_steps = D, gamma = g` | g^(s / D) | Keras ExponentialDecay |
    | `cosine, decay_steps = D, min = m` | m + (1 - m) (1 + cos(pi min(s, D) / D)) / 2 | Keras CosineDecay (`alpha`) |
    | `linear, decay_steps = D, min = m` | 1 - (1 - m) min(s, D) / D | torch LinearLR |

    and `t / W` during the warmup (`t < W`), as Keras' and Hugging Face's
    warmups: the first step's rate is 0. `constant, warmup = W` is a linear
    warmup. `gamma` defaults to 0.1 (StepLR's), `min` to 0; `decay_steps`
    (at least 1) is needed by every kind but `constant`, which takes none.
    `warmup` must be at least 0, `gamma` above 0, `min` in [0, 1].

    ```mlir
    fuse.train_step @train {loss = @loss, params = array<i64: 0, 1>,
        optimizer = "adam",
        lr_schedule = #fuse.lr_schedule<cosine, warmup = 100, decay_steps = 1000, min = 0.1>}
    ```
  }];
  let parameters = (ins EnumParameter<Fuse_LrScheduleKind>:$kind,
                        "int64_t":$warmup, "int64_t":$decay_steps,
                        APFloatParameter<"">:$gamma,
                        APFloatParameter<"">:$min);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Whether the factor is 1 at every step (`constant` without warmup).
    bool isIdentity() const {
      return getKind() == ScheduleKind::constant && getWarmup() == 0;
    }
  }];
}

def Fuse_LoweringStrategy : I32EnumAttr<"LoweringStrategy",
    "how the CPU code generator lowers a linalg op", [
      I32EnumAttrCase<"matmul_tiles", 0>,
      I32EnumAttrCase<"packed_matmul", 1>,
      I32EnumAttrCase<"dot_products", 2>,
      I32EnumAttrCase<"batch_matmul_tiles", 3>,
      I32EnumAttrCase<"direct_conv", 4>,
      I32EnumAttrCase<"winograd_conv", 5>,
      I32EnumAttrCase<"filter_gradient", 6>,
      I32EnumAttrCase<"winograd_filter_gradient", 7>,
      I32EnumAttrCase<"pool", 8>,
      I32EnumAttrCase<"transpose", 9>,
      I32EnumAttrCase<"elementwise", 10>,
      I32EnumAttrCase<"register_tile", 11>,
      I32EnumAttrCase<"attention_blocks", 12>
    ]> {
  let cppNamespace = "::fuse";
  let genSpecializedAttr = 0;
}

def Fuse_LoweringConfigAttr : AttrDef<Fuse_Dialect, "LoweringConfig"> {
  let mnemonic = "lowering_config";
  let summary = "How the CPU code generator lowers one linalg op";
  let description = [{
    Set as `fuse.lowering_config` on a linalg op by
    `fuse-select-lowering-strategy` (or by a rewrite on the ops it creates),
    read by the passes that apply it (docs/codegen.md). `strategy` names the
    rewrite; each level holds one tile size per loop of the op, 0 meaning
    "not tiled at this level":

    - `distribution`: the tiles the threads share (all zeros: one thread).
      A tile on a parallel loop is a block of outputs; a tile on a reduction
      loop (a filter gradient's images) is a group whose sum is a partial of
      its own, the partials added in group order after the threads join.
      The tiles follow from the shapes only, so the bits do not depend on
      the thread count;
    - `cache`: cache blocks (a packed matmul's MC, NC, KC);
    - `registers`: the register tiles; a matmul whose rows are banded holds
      one tile per band, in order (a multiple of the loop count);
    - `vector`: the vector sizes of a tile (of a partial tile: its masks);
    - `interchange` (optional): the order of the tile loops.

    A `register_tile` config has no levels: a rewrite built the op as one
    register tile, which is vectorized whole and never tiled again.

    ```mlir
    %0 = linalg.matmul {fuse.lowering_config = #fuse.lowering_config<
           strategy = matmul_tiles, distribution = [0, 0, 0],
           cache = [0, 0, 0], registers = [12, 32, 1], vector = [12, 32, 1]>}
      ins(%a, %b : tensor<64x784xf32>, tensor<784x128xf32>) ...
    ```
  }];
  let parameters = (ins EnumParameter<Fuse_LoweringStrategy>:$strategy,
                        ArrayRefParameter<"int64_t">:$distribution,
                        ArrayRefParameter<"int64_t">:$cache,
                        ArrayRefParameter<"int64_t">:$registers,
                        ArrayRefParameter<"int64_t">:$vector,
                        ArrayRefParameter<"int64_t">:$interchange);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The attribute's name on an op, spelled once.
    static constexpr ::llvm::StringLiteral kAttrName = "fuse.lowering_config";

    /// The config of `op`, or null.
    static LoweringConfigAttr lookup(::mlir::Operation *op);

    /// The number of loops each level is sized for (0 for register_tile).
    int64_t getNumLoops() const { return getVector().size(); }

    /// The register tiles, one per band of rows (one for every op but a
    /// banded matmul).
    ::llvm::SmallVector<::llvm::ArrayRef<int64_t>> getRegisterTiles() const;
  }];
}

#endif // FUSE_ATTRS_TD
