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

#endif // FUSE_ATTRS_TD
