//===- FuseOps.td - fuse dialect operations ---------------*- tablegen -*-===//

#ifndef FUSE_OPS_TD
#define FUSE_OPS_TD

include "Fuse/FuseDialect.td"
include "Fuse/FuseAttrs.td"
include "Fuse/FuseInterfaces.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

//===----------------------------------------------------------------------===//
// Constants
//===----------------------------------------------------------------------===//

def Fuse_ConstantOp : Fuse_Op<"constant",
    [ConstantLike, Pure, AllTypesMatch<["value", "result"]>]> {
  let summary = "A tensor constant";
  let description = [{
    A dense tensor literal. It is the dialect's constant materializer, so
    folding produces it.

    ```mlir
    %c = fuse.constant dense<[1.0, 2.0]> : tensor<2xf32>
    ```
  }];
  let arguments = (ins ElementsAttr:$value);
  let results = (outs Fuse_Tensor:$result);
  let assemblyFormat = "attr-dict $value";
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Element-wise unary ops
//===----------------------------------------------------------------------===//

class Fuse_UnaryOp<string mnemonic, Type type, string math,
                   list<Trait> traits = []>
    : Fuse_Op<mnemonic, !listconcat(traits, [Pure, SameOperandsAndResultType,
                                              InferTypeOpInterface,
                                              DeclareOpInterfaceMethods<Fuse_VJPOpInterface>])> {
  let summary = "Element-wise " # math;
  let description = [{
    Applies `}] # math # [{` to every element. The result has the operand's
    type.
  }];
  let arguments = (ins type:$input);
  let results = (outs type:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
  let hasFolder = 1;
}

def Fuse_NegOp : Fuse_UnaryOp<"neg", Fuse_Tensor, "-x">;
def Fuse_AbsOp : Fuse_UnaryOp<"abs", Fuse_Tensor, "|x|">;
def Fuse_SquareOp : Fuse_UnaryOp<"square", Fuse_Tensor, "x * x">;
def Fuse_ReluOp : Fuse_UnaryOp<"relu", Fuse_Tensor, "max(x, 0)">;
def Fuse_ExpOp : Fuse_UnaryOp<"exp", Fuse_FloatTensor, "exp(x)">;
def Fuse_LogOp : Fuse_UnaryOp<"log", Fuse_FloatTensor, "log(x)">;
def Fuse_SqrtOp : Fuse_UnaryOp<"sqrt", Fuse_FloatTensor, "sqrt(x)">;
def Fuse_RsqrtOp : Fuse_UnaryOp<"rsqrt", Fuse_FloatTensor, "1 / sqrt(x)">;
def Fuse_TanhOp : Fuse_UnaryOp<"tanh", Fuse_FloatTensor, "tanh(x)">;
def Fuse_SigmoidOp : Fuse_UnaryOp<"sigmoid", Fuse_FloatTensor,
                                  "1 / (1 + exp(-x))">;

def Fuse_ErfOp : Fuse_UnaryOp<"erf", Fuse_FloatTensor, "erf(x)"> {
  let description = [{
    The error function of every element. It is computed in f32 with a
    vectorizable polynomial (f16 and bf16 widen to f32 and back); an f64
    operand is an error at lowering (cast it to f32).
  }];
}

def Fuse_GeluOp : Fuse_Op<"gelu", [Pure, SameOperandsAndResultType,
    InferTypeOpInterface, DeclareOpInterfaceMethods<Fuse_VJPOpInterface>]> {
  let summary = "Gaussian error linear unit, exact or tanh form";
  let description = [{
    `x * Phi(x)`, `Phi` the standard normal CDF, as PyTorch's
    `torch.nn.functional.gelu`: `approximate = "none"` (the default) is
    `0.5 * x * (1 + erf(x / sqrt(2)))`; `approximate = "tanh"` is
    `0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)))`, as GPT-2
    uses. The exact form computes `erf` as `fuse.erf` does: not on f64.

    ```mlir
    %h = fuse.gelu %x {approximate = "tanh"} : tensor<?x512xf32>
    ```
  }];
  let arguments = (ins Fuse_FloatTensor:$input,
                       DefaultValuedStrAttr<StrAttr, "none">:$approximate);
  let results = (outs Fuse_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
  let extraClassDeclaration = [{
    /// Whether this is the tanh form.
    bool isTanh() { return getApproximate() == "tanh"; }
  }];
}

def Fuse_LeakyReluOp : Fuse_Op<"leaky_relu", [Pure, SameOperandsAndResultType,
    InferTypeOpInterface, DeclareOpInterfaceMethods<Fuse_VJPOpInterface>]> {
  let summary = "Leaky rectified linear unit";
  let description = [{
    `x` where `x > 0`, else `alpha * x` (default `alpha` 0.01, PyTorch's
    `negative_slope`). The gradient at 0 is `alpha`, as PyTorch's.

    ```mlir
    %h = fuse.leaky_relu %x {alpha = 0.2 : f64} : tensor<?x128xf32>
    ```
  }];
  let arguments = (ins Fuse_FloatTensor:$input,
                       DefaultValuedAttr<F64Attr, "0.01">:$alpha);
  let results = (outs Fuse_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Fuse_CastOp : Fuse_Op<"cast", [Pure, SameOperandsAndResultShape,
    DeclareOpInterfaceMethods<Fuse_VJPOpInterface>]> {
  let summary = "Element type conversion";
  let description = [{
    Converts every element to the result's element type:

    - float to float (`f32`, `bf16`, `f16`, `f64`): rounded to nearest,
      ties to even;
    - integer to float: rounded to nearest (`i1` is unsigned: true is 1);
    - float to integer: rounded towards zero and saturated to the integer's
      range, NaN to 0 (as Rust's `as` and XLA on CPU; never undefined);
    - integer to integer: sign-extended or truncated (`i1` zero-extended).

    Gradients flow between float types only (the incoming gradient cast
    back); an integer side gets none.

    ```mlir
    %h = fuse.cast %x : (tensor<?x128xf32>) -> tensor<?x128xbf16>
    ```
  }];
  let arguments = (ins Fuse_Tensor:$input);
  let results = (outs Fuse_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// IPEX's split layout of f32 weights (master_weights = "split")
//===----------------------------------------------------------------------===//

class Fuse_HalfOp<string mnemonic, Type half, string summary_>
    : Fuse_Op<mnemonic, [Pure, SameOperandsAndResultShape]> {
  let summary = summary_;
  let arguments = (ins TensorOf<[F32]>:$input);
  let results = (outs TensorOf<[half]>:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

def Fuse_HighHalfOp : Fuse_HalfOp<"high_half", BF16,
    "The top 16 bits of each f32 element, as a bf16"> {
  let description = [{
    Each element's sign, exponent and top 7 mantissa bits: the f32 value
    truncated towards zero to bf16 (not rounded, unlike `fuse.cast`; a NaN
    whose payload is all in the low bits becomes an infinity). With
    `fuse.low_half`, IPEX's split layout of a master weight
    (`master_weights = "split"`): the pair joins back to the f32 value
    exactly (`fuse.join_halves`).

    ```mlir
    %top = fuse.high_half %w : (tensor<4x8xf32>) -> tensor<4x8xbf16>
    ```
  }];
  let extraClassDeclaration = [{
    /// The top half of the f32 scalar `x`.
    static ::mlir::Value buildScalar(::mlir::OpBuilder &b, ::mlir::Location loc,
                                     ::mlir::Value x);
  }];
}

def Fuse_LowHalfOp : Fuse_HalfOp<"low_half", I16,
    "The low 16 bits of each f32 element"> {
  let description = [{
    Each element's bottom 16 mantissa bits, as an `i16`: what
    `fuse.high_half` drops.

    ```mlir
    %low = fuse.low_half %w : (tensor<4x8xf32>) -> tensor<4x8xi16>
    ```
  }];
  let extraClassDeclaration = [{
    /// The low half of the f32 scalar `x`.
    static ::mlir::Value buildScalar(::mlir::OpBuilder &b, ::mlir::Location loc,
                                     ::mlir::Value x);
  }];
}

def Fuse_JoinHalvesOp : Fuse_Op<"join_halves",
    [Pure, SameOperandsAndResultShape]> {
  let summary = "The f32 values of top and low halves";
  let description = [{
    Each element `bitcast<f32>((zext(top) << 16) | zext(low))`: the inverse
    of `fuse.high_half` and `fuse.low_half`, bitwise.

    ```mlir
    %w = fuse.join_halves %top, %low
        : (tensor<4x8xbf16>, tensor<4x8xi16>) -> tensor<4x8xf32>
    ```
  }];
  let arguments = (ins TensorOf<[BF16]>:$top, TensorOf<[I16]>:$low);
  let results = (outs TensorOf<[F32]>:$result);
  let assemblyFormat = "$top `,` $low attr-dict `:` functional-type(operands, results)";
  let extraClassDeclaration = [{
    /// The f32 scalar of the halves `top` (bf16) and `low` (i16).
    static ::mlir::Value buildScalar(::mlir::OpBuilder &b, ::mlir::Location loc,
                                     ::mlir::Value top, ::mlir::Value low);
  }];
}

//===----------------------------------------------------------------------===//
// Element-wise binary ops (NumPy broadcasting)
//===----------------------------------------------------------------------===//

class Fuse_BinaryOp<string mnemonic, Type type, string math,
                    list<Trait> traits = []>
    : Fuse_Op<mnemonic, !listconcat(traits, [Pure, InferTypeOpAdaptor,
                                              DeclareOpInterfaceMethods<Fuse_VJPOpInterface>])> {
  let summary = "Element-wise " # math # " with broadcasting";
  let description = [{
    Computes `}] # math # [{` element by element. The operands broadcast like
    NumPy and share one element type; the result type is inferred.

    ```mlir
    %r = fuse.}] # mnemonic # [{ %x, %b
        : (tensor<?x128xf32>, tensor<128xf32>) -> tensor<?x128xf32>
    ```
  }];
  let arguments = (ins type:$lhs, type:$rhs);
  let results = (outs type:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` functional-type(operands, results)
  }];
  let hasFolder = 1;
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::inferReturnTypes(
        ::mlir::MLIRContext *, std::optional<::mlir::Location> location,
        Adaptor adaptor, ::llvm::SmallVectorImpl<::mlir::Type> &types) {
      return ::fuse::detail::inferBroadcastResultType(
          location, adaptor.getLhs().getType(), adaptor.getRhs().getType(),
          /*elementType=*/nullptr, types);
    }
  }];
}

def Fuse_AddOp : Fuse_BinaryOp<"add", Fuse_Tensor, "x + y", [Commutative]> {
  let hasCanonicalizer = 1;
}
def Fuse_SubOp : Fuse_BinaryOp<"sub", Fuse_Tensor, "x - y"> {
  let hasCanonicalizer = 1;
}
def Fuse_MulOp : Fuse_BinaryOp<"mul", Fuse_Tensor, "x * y", [Commutative]>;
def Fuse_DivOp : Fuse_BinaryOp<"div", Fuse_Tensor,
                               "x / y (signed for integers)"> {
  let description = [{
    Computes `x / y` element by element. The operands broadcast like NumPy
    and share one element type; the result type is inferred.

    Integers divide signed, rounding towards zero, and every division is
    defined (as in XLA): `x / 0` is `-1` (all bits set) and `INT_MIN / -1`
    is `INT_MIN`. Compiled code never traps and folding gives the same
    values. Floats follow IEEE 754 (`x / 0` is an infinity or NaN).

    ```mlir
    %r = fuse.div %x, %b
        : (tensor<?x128xi32>, tensor<128xi32>) -> tensor<?x128xi32>
    ```
  }];
}
def Fuse_MaxOp : Fuse_BinaryOp<"max", Fuse_Tensor,
                               "max(x, y) (NaN propagates)", [Commutative]>;
def Fuse_MinOp : Fuse_BinaryOp<"min", Fuse_Tensor,
                               "min(x, y) (NaN propagates)", [Commutative]>;
def Fuse_PowOp : Fuse_BinaryOp<"pow", Fuse_FloatTensor, "x ^ y">;

def Fuse_CompareOp : Fuse_Op<"compare", [Pure, InferTypeOpAdaptor]> {
  let summary = "Element-wise comparison with broadcasting";
  let description = [{
    Compares element by element and yields an `i1` tensor. Floats compare
    ordered (any comparison with NaN is false, except `ne`); integers compare
    signed.

    ```mlir
    %m = fuse.compare gt, %x, %zero
        : (tensor<4xf32>, tensor<f32>) -> tensor<4xi1>
    ```
  }];
  let arguments = (ins Fuse_ComparePredicate:$predicate, Fuse_Tensor:$lhs,
                       Fuse_Tensor:$rhs);
  let results = (outs Fuse_BoolTensor:$result);
  let assemblyFormat = [{
    $predicate `,` $lhs `,` $rhs attr-dict `:` functional-type(operands, results)
  }];
  let hasFolder = 1;
}

def Fuse_SelectOp : Fuse_Op<"select", [Pure, InferTypeOpAdaptor, DeclareOpInterfaceMethods<Fuse_VJPOpInterface>]> {
  let summary = "Element-wise choice with broadcasting";
  let description = [{
    `select(c, x, y)` is `x` where `c` is true and `y` elsewhere. All three
    operands broadcast together.
  }];
  let arguments = (ins Fuse_BoolTensor:$condition, Fuse_Tensor:$true_value,
                       Fuse_Tensor:$false_value);
  let results = (outs Fuse_Tensor:$result);
  let assemblyFormat = [{
    $condition `,` $true_value `,` $false_value attr-dict `:`
    functional-type(operands, results)
  }];
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Shape ops
//===----------------------------------------------------------------------===//

def Fuse_ReshapeOp : Fuse_Op<"reshape", [Pure, DeclareOpInterfaceMethods<Fuse_VJPOpInterface>]> {
  let summary = "Reshape to a type with the same number of elements";
  let description = [{
    Reinterprets the row-major elements of `input` with the result's shape.
    The result may have at most one dynamic dimension; it is determined by the
    element count.

    ```mlir
    %f = fuse.reshape %x : (tensor<?x28x28xf32>) -> tensor<?x784xf32>
    ```
  }];
  let arguments = (ins Fuse_Tensor:$input);
  let results = (outs Fuse_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Fuse_TransposeOp : Fuse_Op<"transpose", [Pure, InferTypeOpAdaptor, DeclareOpInterfaceMethods<Fuse_VJPOpInterface>]> {
  let summary = "Permute dimensions";
  let description = [{
    Result dimension `i` is input dimension `permutation[i]`.

    ```mlir
    %t = fuse.transpose %x {permutation = array<i64: 1, 0>}
        : (tensor<3x4xf32>) -> tensor<4x3xf32>
    ```
  }];
  let arguments = (ins Fuse_Tensor:$input, DenseI64ArrayAttr:$permutation);
  let results = (outs Fuse_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasFolder = 1;
}

def Fuse_BroadcastToOp : Fuse_Op<"broadcast_to", [Pure, DeclareOpInterfaceMethods<Fuse_VJPOpInterface>]> {
  let summary = "Broadcast to a shape (NumPy rules)";
  let description = [{
    Stretches `input` to the result's shape: shapes align on the right, and
    each input dimension is 1 or equal to the result's.

    ```mlir
    %b = fuse.broadcast_to %x : (tensor<1x4xf32>) -> tensor<3x4xf32>
    ```
  }];
  let arguments = (ins Fuse_Tensor:$input);
  let results = (outs Fuse_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Fuse_SliceOp : Fuse_Op<"slice", [Pure,
    DeclareOpInterfaceMethods<Fuse_VJPOpInterface>]> {
  let summary = "A static strided slice";
  let description = [{
    Takes, along each dimension `d`, the result's size `n_d` of elements
    starting at `offsets[d]`, `strides[d]` apart (default 1):
    `result[i] = input[offsets + i * strides]`. Every index stays within the
    input. A dynamic dimension of the result is the input's whole dynamic
    dimension (offset 0, stride 1).

    ```mlir
    %q = fuse.slice %qkv {offsets = array<i64: 0, 0, 128>}
        : (tensor<?x64x384xf32>) -> tensor<?x64x128xf32>
    ```
  }];
  let arguments = (ins Fuse_Tensor:$input, DenseI64ArrayAttr:$offsets,
      DefaultValuedAttr<DenseI64ArrayAttr, "{}">:$strides);
  let results = (outs Fuse_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
  let hasFolder = 1;
  let extraClassDeclaration = [{
    /// The stride of dimension `d` (1 when `strides` is empty).
    int64_t getStride(unsigned d) {
      return getStrides().empty() ? 1 : getStrides()[d];
    }
  }];
}

def Fuse_PadOp : Fuse_Op<"pad", [Pure, InferTypeOpAdaptor,
    DeclareOpInterfaceMethods<Fuse_VJPOpInterface>]> {
  let summary = "Pad with a constant, before, after and between elements";
  let description = [{
    XLA's pad: along each dimension `d`, `low[d]` elements of `value`
    before the input, `interior[d]` between each two input elements
    (default none) and `high[d]` after; all at least 0. A dimension of size
    `n` becomes `low + n + max(n - 1, 0) * interior + high`.

    ```mlir
    %p = fuse.pad %x {low = array<i64: 0, 1>, high = array<i64: 0, 0>}
        : (tensor<?x8xf32>) -> tensor<?x9xf32>
    ```
  }];
  let arguments = (ins Fuse_Tensor:$input, DenseI64ArrayAttr:$low,
      DenseI64ArrayAttr:$high,
      DefaultValuedAttr<DenseI64ArrayAttr, "{}">:$interior,
      DefaultValuedAttr<F64Attr, "0.0">:$value);
  let results = (outs Fuse_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasFolder = 1;
  let extraClassDeclaration = [{
    /// The interior padding of dimension `d` (0 when `interior` is empty).
    int64_t getInteriorOf(unsigned d) {
      return getInterior().empty() ? 0 : getInterior()[d];
    }
  }];
}

def Fuse_ConcatOp : Fuse_Op<"concat", [Pure, InferTypeOpAdaptor,
    DeclareOpInterfaceMethods<Fuse_VJPOpInterface>]> {
  let summary = "Join tensors along one axis";
  let description = [{
    The inputs, one after another along `axis` (negative counts from the
    end). They have one element type and rank, the same size in every other
    dimension, and a static size along `axis`.

    ```mlir
    %c = fuse.concat %a, %b {axis = 1 : i64}
        : (tensor<?x64xf32>, tensor<?x32xf32>) -> tensor<?x96xf32>
    ```
  }];
  let arguments = (ins Variadic<Fuse_Tensor>:$inputs, I64Attr:$axis);
  let results = (outs Fuse_Tensor:$result);
  let assemblyFormat = "$inputs attr-dict `:` functional-type(operands, results)";
  let hasFolder = 1;
  let extraClassDeclaration = [{
    /// The axis in [0, rank).
    int64_t getNormalizedAxis() {
      int64_t axis = getAxis();
      int64_t rank =
          ::llvm::cast<::mlir::RankedTensorType>(getType()).getRank();
      return axis < 0 ? axis + rank : axis;
    }
  }];
}

def Fuse_IotaOp : Fuse_Op<"iota", [Pure]> {
  let summary = "Indices along one axis";
  let description = [{
    A static tensor whose element at `[i_0, ..., i_n]` is `i_axis`, in its
    element type (an integer or a float). With `fuse.compare` and
    `fuse.select` it builds masks: a causal mask is `iota(axis 0) >= iota
    (axis 1)` over `T x T`.

    ```mlir
    %rows = fuse.iota {axis = 0 : i64} : tensor<128x128xi32>
    ```
  }];
  let arguments = (ins I64Attr:$axis);
  let results = (outs Fuse_Tensor:$result);
  let assemblyFormat = "attr-dict `:` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Embeddings
//===----------------------------------------------------------------------===//

def Fuse_GatherOp : Fuse_Op<"gather", [Pure, InferTypeOpAdaptor,
    DeclareOpInterfaceMethods<Fuse_VJPOpInterface>]> {
  let summary = "Rows of a table by integer indices (embedding lookup)";
  let description = [{
    `result[i..., j...] = table[indices[i...], j...]`: for an `N x D...`
    table and indices of any shape `S`, a tensor of shape `S x D...`, as
    `jnp.take(table, indices, axis=0)` and `torch.nn.Embedding`.

    An index outside `[0, N)` has no row: its elements are NaN (0 for an
    integer table), as JAX's default fill mode gives, never a read outside
    the table. Before each call the JIT engine rejects such an index with
    an error naming the argument where the indices are an argument
    (`fuse-mark-class-labels`). Its gradient is `fuse.scatter_add`, which
    never builds a one-hot matrix.

    ```mlir
    %e = fuse.gather %wte, %tokens
        : (tensor<256x128xf32>, tensor<?x64xi32>) -> tensor<?x64x128xf32>
    ```
  }];
  let arguments = (ins Fuse_Tensor:$table, Fuse_IntTensor:$indices);
  let results = (outs Fuse_Tensor:$result);
  let assemblyFormat = [{
    $table `,` $indices attr-dict `:` functional-type(operands, results)
  }];
}

def Fuse_ScatterAddOp : Fuse_Op<"scatter_add", [Pure,
    AllTypesMatch<["table", "result"]>,
    DeclareOpInterfaceMethods<Fuse_VJPOpInterface>]> {
  let summary = "Sum rows into a zero table by integer indices";
  let description = [{
    The gradient of `fuse.gather` with respect to its table: a tensor of
    `table`'s type (only its type is used), zero except that each
    `updates[i..., j...]` is added to row `indices[i...]`, in row-major order
    of `i` (the same bits on any thread count). An index outside `[0, N)`
    adds nothing.

    ```mlir
    %g = fuse.scatter_add %dE, %tokens, %wte
        : (tensor<?x64x128xf32>, tensor<?x64xi32>, tensor<256x128xf32>)
        -> tensor<256x128xf32>
    ```
  }];
  let arguments = (ins Fuse_FloatTensor:$updates, Fuse_IntTensor:$indices,
                       Fuse_FloatTensor:$table);
  let results = (outs Fuse_FloatTensor:$result);
  let assemblyFormat = [{
    operands attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Contractions
//===----------------------------------------------------------------------===//

def Fuse_MatmulOp : Fuse_Op<"matmul", [Pure, InferTypeOpAdaptorWithIsCompatible, DeclareOpInterfaceMethods<Fuse_VJPOpInterface>]> {
  let summary = "Matrix product of two 2-d tensors";
  let description = [{
    `op(lhs) x op(rhs)`, where `op` transposes its operand when
    `transpose_lhs` / `transpose_rhs` is set. Operands of `bf16` or `f16`
    may give an `f32` result: the products summed in `f32` (mixed
    precision, `fuse-apply-precision-policy`).

    ```mlir
    %y = fuse.matmul %x, %w : (tensor<?x784xf32>, tensor<784x128xf32>)
                              -> tensor<?x128xf32>
    %g = fuse.matmul %x, %dy {transpose_lhs}
        : (tensor<?x784xf32>, tensor<?x128xf32>) -> tensor<784x128xf32>
    ```
  }];
  let arguments = (ins Fuse_Tensor:$lhs, Fuse_Tensor:$rhs,
                       UnitAttr:$transpose_lhs, UnitAttr:$transpose_rhs);
  let results = (outs Fuse_Tensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` functional-type(operands, results)
  }];
}

def Fuse_BatchMatmulOp : Fuse_Op<"batch_matmul", [Pure, InferTypeOpAdaptorWithIsCompatible, DeclareOpInterfaceMethods<Fuse_VJPOpInterface>]> {
  let summary = "Batched matrix product of two 3-d tensors";
  let description = [{
    For each `b`, `op(lhs[b]) x op(rhs[b])`; the batch dimensions must agree.
    Operands of `bf16` or `f16` may give an `f32` result, as `fuse.matmul`.
  }];
  let arguments = (ins Fuse_Tensor:$lhs, Fuse_Tensor:$rhs,
                       UnitAttr:$transpose_lhs, UnitAttr:$transpose_rhs);
  let results = (outs Fuse_Tensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` functional-type(operands, results)
  }];
}

def Fuse_Conv2DOp : Fuse_Op<"conv2d", [Pure, InferTypeOpAdaptorWithIsCompatible,
    DeclareOpInterfaceMethods<Fuse_VJPOpInterface>]> {
  let summary = "2-d convolution, NHWC input and HWIO filter";
  let description = [{
    Cross-correlation of an `N x H x W x C` input with an `KH x KW x C x F`
    filter. `padding` is `[top, bottom, left, right]` of zeros; `strides` and
    `dilations` are `[h, w]`. Keras' `padding="same"` with stride 1 is
    `(k - 1) / 2` before and `k / 2` after. Operands of `bf16` or `f16`
    may give an `f32` result, summed in `f32` (mixed precision; the
    gradient ops take `bf16` factors with an `f32` result).

    ```mlir
    %y = fuse.conv2d %x, %k {padding = array<i64: 1, 1, 1, 1>}
        : (tensor<?x28x28x1xf32>, tensor<3x3x1x32xf32>) -> tensor<?x28x28x32xf32>
    ```
  }];
  let arguments = (ins Fuse_FloatTensor:$input, Fuse_FloatTensor:$filter,
      DefaultValuedAttr<DenseI64ArrayAttr, "{1, 1}">:$strides,
      DefaultValuedAttr<DenseI64ArrayAttr, "{0, 0, 0, 0}">:$padding,
      DefaultValuedAttr<DenseI64ArrayAttr, "{1, 1}">:$dilations);
  let results = (outs Fuse_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $filter attr-dict `:` functional-type(operands, results)
  }];
}

class Fuse_Pool2DOp<string mnemonic, string what>
    : Fuse_Op<mnemonic, [Pure, InferTypeOpAdaptor,
                         DeclareOpInterfaceMethods<Fuse_VJPOpInterface>]> {
  let summary = "2-d " # what # " pooling, NHWC";
  let description = [{
    Pools `window = [h, w]` windows of an `N x H x W x C` input with
    `strides = [h, w]` (default: the window) after padding `[top, bottom, left,
    right]`.
  }];
  let arguments = (ins Fuse_FloatTensor:$input, DenseI64ArrayAttr:$window,
      OptionalAttr<DenseI64ArrayAttr>:$strides,
      DefaultValuedAttr<DenseI64ArrayAttr, "{0, 0, 0, 0}">:$padding);
  let results = (outs Fuse_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let extraClassDeclaration = [{
    /// The strides, defaulting to the window.
    ::llvm::ArrayRef<int64_t> getEffectiveStrides() {
      return getStrides() ? *getStrides() : getWindow();
    }
  }];
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::inferReturnTypes(
        ::mlir::MLIRContext *, std::optional<::mlir::Location> location,
        Adaptor adaptor, ::llvm::SmallVectorImpl<::mlir::Type> &types) {
      return ::fuse::detail::inferPool2DResultType(
          location, adaptor.getInput().getType(), adaptor.getWindow(),
          adaptor.getStrides(), adaptor.getPadding(), types);
    }
  }];
}

def Fuse_MaxPool2DOp : Fuse_Pool2DOp<"max_pool2d", "max"> {
  let description = [{
    Pools `window = [h, w]` windows of an `N x H x W x C` input with
    `strides = [h, w]` (default: the window). Padding `[top, bottom, left,
    right]` contributes `-inf`.
  }];
  let hasCanonicalizer = 1;
}

def Fuse_MaxPool2DIndicesOp
    : Fuse_Op<"max_pool2d_indices", [Pure, InferTypeOpAdaptor]> {
  let summary = "Position of each max_pool2d window's maximum";
  let description = [{
    For each window of `max_pool2d` with the same attributes, the position
    of its first maximum in row-major order within the window (`kh * w +
    kw`, counting padding; a NaN, which `max_pool2d` returns, counts as the
    maximum), as TensorFlow, XLA and PyTorch pick it: the element that
    receives the window's gradient. The result has the pool's
    shape, of `i8` for windows of up to 128 elements, else `i32`.

    ```mlir
    %i = fuse.max_pool2d_indices %x {window = array<i64: 2, 2>}
        : (tensor<?x24x24x32xf32>) -> tensor<?x12x12x32xi8>
    ```
  }];
  let arguments = (ins Fuse_FloatTensor:$input, DenseI64ArrayAttr:$window,
      OptionalAttr<DenseI64ArrayAttr>:$strides,
      DefaultValuedAttr<DenseI64ArrayAttr, "{0, 0, 0, 0}">:$padding);
  let results = (outs Fuse_IntTensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let extraClassDeclaration = [{
    /// The strides, defaulting to the window.
    ::llvm::ArrayRef<int64_t> getEffectiveStrides() {
      return getStrides() ? *getStrides() : getWindow();
    }
  }];
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::inferReturnTypes(
        ::mlir::MLIRContext *, std::optional<::mlir::Location> location,
        Adaptor adaptor, ::llvm::SmallVectorImpl<::mlir::Type> &types) {
      return ::fuse::detail::inferPoolIndicesType(
          location, adaptor.getInput().getType(), adaptor.getWindow(),
          adaptor.getStrides(), adaptor.getPadding(), types);
    }
  }];
}

def Fuse_AvgPool2DOp : Fuse_Pool2DOp<"avg_pool2d", "average"> {
  let description = [{
    Averages `window = [h, w]` windows of an `N x H x W x C` input with
    `strides = [h, w]` (default: the window). Padding `[top, bottom, left,
    right]` is not counted: each output divides by the number of input
    elements its window covers, as Keras and TensorFlow do.
  }];
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

class Fuse_ReduceOp<string mnemonic, string what, Type type>
    : Fuse_Op<mnemonic, [Pure, InferTypeOpAdaptor, DeclareOpInterfaceMethods<Fuse_VJPOpInterface>]> {
  let summary = "Reduce by " # what # " over axes";
  let description = [{
    Reduces `input` by }] # what # [{ over `axes` (distinct, each in
    `[0, rank)`). Reduced dimensions are dropped, or kept with size 1 when
    `keepdims` is set.

    ```mlir
    %s = fuse.}] # mnemonic # [{ %x {axes = array<i64: 0>}
        : (tensor<?x10xf32>) -> tensor<10xf32>
    ```
  }];
  let arguments = (ins type:$input, DenseI64ArrayAttr:$axes,
                       UnitAttr:$keepdims);
  let results = (outs type:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasFolder = 1;
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::inferReturnTypes(
        ::mlir::MLIRContext *, std::optional<::mlir::Location> location,
        Adaptor adaptor, ::llvm::SmallVectorImpl<::mlir::Type> &types) {
      return ::fuse::detail::inferReduceResultType(
          location, adaptor.getInput().getType(), adaptor.getAxes(),
          adaptor.getKeepdims(), types);
    }
  }];
}

def Fuse_ReduceSumOp : Fuse_ReduceOp<"reduce_sum", "sum", Fuse_Tensor>;
def Fuse_ReduceMeanOp : Fuse_ReduceOp<"reduce_mean", "mean", Fuse_FloatTensor>;
def Fuse_ReduceMaxOp : Fuse_ReduceOp<"reduce_max", "maximum", Fuse_Tensor>;

//===----------------------------------------------------------------------===//
// Neural-network ops
//===----------------------------------------------------------------------===//

class Fuse_SoftmaxLikeOp<string mnemonic, string what>
    : Fuse_Op<mnemonic, [Pure, SameOperandsAndResultType,
                         InferTypeOpInterface, DeclareOpInterfaceMethods<Fuse_VJPOpInterface>]> {
  let summary = what # " along one axis";
  let description = [{
    Numerically stable }] # what # [{ along `axis` (default: the last;
    negative values count from the end).
  }];
  let arguments = (ins Fuse_FloatTensor:$input,
                       DefaultValuedAttr<I64Attr, "-1">:$axis);
  let results = (outs Fuse_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The axis in [0, rank).
    int64_t getNormalizedAxis() {
      int64_t axis = getAxis();
      return axis < 0 ? axis + getType().getRank() : axis;
    }
  }];
}

def Fuse_SoftmaxOp : Fuse_SoftmaxLikeOp<"softmax", "softmax">;
def Fuse_LogSoftmaxOp : Fuse_SoftmaxLikeOp<"log_softmax", "log-softmax">;

def Fuse_SoftmaxCrossEntropyOp : Fuse_Op<"softmax_cross_entropy",
    [Pure, InferTypeOpAdaptor, DeclareOpInterfaceMethods<Fuse_VJPOpInterface>]> {
  let summary = "Mean softmax cross-entropy of logits and integer labels";
  let description = [{
    For `N x C` logits and `N` integer class labels in `[0, C)`, the mean over
    the batch of `-log_softmax(logits)[i, labels[i]]`, computed stably. The
    result is a 0-d tensor. Labels are signed integers of 8 bits or more
    (`i1` is rejected: its 1 reads as -1).

    A label outside `[0, C)` (negative, or `C` and above) has no loss: that
    row's loss is NaN, so the mean is NaN, never a finite number (PyTorch
    raises; JAX's gather of the label's logit, in its default fill mode,
    gives NaN too). The check costs one compare and select per row. Before
    the call, the JIT engine rejects such a label with an error naming the
    argument wherever it sees the labels are an argument
    (`fuse-mark-class-labels`, run at load and again on each
    specialization, where a dynamic `C` is known); a computed label
    (`y - 1`, a select) is no argument and gets the NaN.

    ```mlir
    %l = fuse.softmax_cross_entropy %logits, %y
        : (tensor<?x10xf32>, tensor<?xi32>) -> tensor<f32>
    ```
  }];
  let arguments = (ins Fuse_FloatTensor:$logits, Fuse_IntTensor:$labels);
  let results = (outs Fuse_FloatScalar:$result);
  let assemblyFormat = [{
    $logits `,` $labels attr-dict `:` functional-type(operands, results)
  }];
}

def Fuse_MseLossOp : Fuse_Op<"mse_loss", [Pure, InferTypeOpAdaptor, DeclareOpInterfaceMethods<Fuse_VJPOpInterface>]> {
  let summary = "Mean squared error";
  let description = [{
    The mean over all elements of `(prediction - target)^2`; both operands
    have the same shape. The result is a 0-d tensor.
  }];
  let arguments = (ins Fuse_FloatTensor:$prediction, Fuse_FloatTensor:$target);
  let results = (outs Fuse_FloatScalar:$result);
  let assemblyFormat = [{
    $prediction `,` $target attr-dict `:` functional-type(operands, results)
  }];
}

def Fuse_LayerNormOp : Fuse_Op<"layer_norm", [Pure,
    AllTypesMatch<["input", "result"]>,
    DeclareOpInterfaceMethods<Fuse_VJPOpInterface>]> {
  let summary = "Layer normalization with a learnable scale and bias";
  let description = [{
    Normalizes over the trailing dimensions that `scale` and `bias` have
    (PyTorch's `normalized_shape`): with `mean` and `var` the mean and the
    biased variance of each group of those dimensions,
    `(x - mean) / sqrt(var + epsilon) * scale + bias`. The statistics are
    computed once per group (two passes over a row that is in cache) and
    kept for the backward pass, which reads them instead of recomputing
    them.

    ```mlir
    %y = fuse.layer_norm %x, %g, %b {epsilon = 1.0e-5 : f64}
        : (tensor<?x64x128xf32>, tensor<128xf32>, tensor<128xf32>)
        -> tensor<?x64x128xf32>
    ```
  }];
  let arguments = (ins Fuse_FloatTensor:$input, Fuse_FloatTensor:$scale,
                       Fuse_FloatTensor:$bias,
                       DefaultValuedAttr<F64Attr, "1.0e-5">:$epsilon);
  let results = (outs Fuse_FloatTensor:$result);
  let assemblyFormat = [{
    operands attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The normalized (trailing) dimensions, as axes of the input.
    ::llvm::SmallVector<int64_t> getNormalizedAxes();
  }];
}

def Fuse_AttentionOp : Fuse_Op<"attention", [Pure, InferTypeOpAdaptor,
    DeclareOpInterfaceMethods<Fuse_VJPOpInterface>]> {
  let summary = "Scaled dot-product attention, never storing the scores";
  let description = [{
    `softmax(query x key^T * scale + mask) x value` for each index of the
    leading (batch and head) dimensions: `query` is `[..., T, D]`, `key`
    `[..., S, D]`, `value` `[..., S, Dv]` and the result `[..., T, Dv]`.
    `scale` defaults to `1 / sqrt(D)`. With `causal`, query row `i` sees the
    keys `j <= i` (PyTorch's `is_causal`: the mask is aligned at the top
    left).

    The CPU code generator computes it block by block with an online
    softmax (the FlashAttention scheme, blocks sized for the caches): the
    `T x S` matrix of scores or probabilities is never stored, neither for
    the forward pass nor for the backward pass
    (`fuse.attention_grad`), which recomputes each block's probabilities
    from the row statistics.

    ```mlir
    %o = fuse.attention %q, %k, %v {causal}
        : (tensor<?x4x128x32xf32>, tensor<?x4x128x32xf32>,
           tensor<?x4x128x32xf32>) -> tensor<?x4x128x32xf32>
    ```
  }];
  let arguments = (ins Fuse_FloatTensor:$query, Fuse_FloatTensor:$key,
                       Fuse_FloatTensor:$value, UnitAttr:$causal,
                       OptionalAttr<F64Attr>:$scale);
  let results = (outs Fuse_FloatTensor:$result);
  let assemblyFormat = [{
    operands attr-dict `:` functional-type(operands, results)
  }];
  let extraClassDeclaration = [{
    /// The scale of the scores: `scale`, else `1 / sqrt(D)`.
    double getScaleOrDefault();
  }];
}

def Fuse_AttentionGradOp : Fuse_Op<"attention_grad", [Pure,
    InferTypeOpAdaptor]> {
  let summary = "Gradients of fuse.attention";
  let description = [{
    The gradients of `fuse.attention` with respect to its query, key and
    value, given its operands, its `result` and the gradient of the result
    `result_grad` (the vector-Jacobian product). `causal` and `scale` are
    the attention's. Computed block by block as FlashAttention's backward
    pass: each block's probabilities are recomputed from the row maxima and
    sums of the scores, so no `T x S` matrix is stored.
  }];
  let arguments = (ins Fuse_FloatTensor:$query, Fuse_FloatTensor:$key,
                       Fuse_FloatTensor:$value, Fuse_FloatTensor:$result,
                       Fuse_FloatTensor:$result_grad, UnitAttr:$causal,
                       F64Attr:$scale);
  let results = (outs Fuse_FloatTensor:$query_grad,
                      Fuse_FloatTensor:$key_grad,
                      Fuse_FloatTensor:$value_grad);
  let assemblyFormat = [{
    operands attr-dict `:` functional-type(operands, results)
  }];
}

def Fuse_DropoutOp : Fuse_Op<"dropout",
    [Pure, AllTypesMatch<["input", "result"]>, DeclareOpInterfaceMethods<Fuse_VJPOpInterface>]> {
  let summary = "Inverted dropout with a counter-based random mask";
  let description = [{
    Zeroes each element with probability `rate` and scales the others by
    `1 / (1 - rate)`. The mask is a pure function of `seed`, the global
    training `step` and the element's index (a counter-based RNG), so step `s`
    sees the same mask however steps are grouped into calls, and the op stays
    `Pure`. At evaluation time the compiler drops the op.

    With `offset` (a 0-d i64 tensor, `o`), the input is rows `[o, o + n)`
    along dim 0 of a larger tensor, and each element draws the mask of its
    index there: a data-parallel rank's share of the global batch
    (`fuse-expand-train-step` with `data-parallel`) drops what one process
    training on the whole batch would.

    ```mlir
    %d = fuse.dropout %a, %step {rate = 0.2 : f32, seed = 7 : i64}
        : tensor<?x128xf32>
    %e = fuse.dropout %a, %step offset %o {rate = 0.2 : f32}
        : tensor<?x128xf32>
    ```
  }];
  let arguments = (ins Fuse_FloatTensor:$input, Fuse_StepTensor:$step,
                       Optional<Fuse_StepTensor>:$offset,
                       F32Attr:$rate, DefaultValuedAttr<I64Attr, "0">:$seed);
  let results = (outs Fuse_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $step (`offset` $offset^)? attr-dict `:` type($result)
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Ops the backward pass is built from
//===----------------------------------------------------------------------===//

def Fuse_FullLikeOp : Fuse_Op<"full_like", [Pure, InferTypeOpAdaptor,
    DeclareOpInterfaceMethods<Fuse_VJPOpInterface>]> {
  let summary = "A tensor of one value, shaped like another";
  let description = [{
    A tensor with the type (and run-time shape) of `shape_of`, every element
    `value`. Only the shape of `shape_of` is used; it gets no gradient.

    ```mlir
    %z = fuse.full_like %x {value = 0.0 : f64} : tensor<?x128xf32>
    ```
  }];
  let arguments = (ins Fuse_Tensor:$shape_of, F64Attr:$value);
  let results = (outs Fuse_Tensor:$result);
  let assemblyFormat = "$shape_of attr-dict `:` type($shape_of)";
  let hasFolder = 1;
}

def Fuse_ExpandDimsOp : Fuse_Op<"expand_dims",
    [Pure, InferTypeOpAdaptor, DeclareOpInterfaceMethods<Fuse_VJPOpInterface>]> {
  let summary = "Insert dimensions of size 1";
  let description = [{
    Inserts a dimension of size 1 at each of `axes` (positions in the
    result, distinct, in `[0, rank + |axes|)`), as NumPy's `expand_dims`.

    ```mlir
    %e = fuse.expand_dims %g {axes = array<i64: 1>}
        : (tensor<?xf32>) -> tensor<?x1xf32>
    ```
  }];
  let arguments = (ins Fuse_Tensor:$input, DenseI64ArrayAttr:$axes);
  let results = (outs Fuse_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

def Fuse_SoftmaxCrossEntropyGradOp : Fuse_Op<"softmax_cross_entropy_grad",
    [Pure, InferTypeOpAdaptor, DeclareOpInterfaceMethods<Fuse_VJPOpInterface>]> {
  let summary = "Gradient of softmax_cross_entropy with respect to logits";
  let description = [{
    `grad * (softmax(logits) - one_hot(labels)) / batch`, computed stably in
    one pass over the logits: the vector-Jacobian product of
    `fuse.softmax_cross_entropy` for the 0-d incoming gradient `grad`. A row
    whose label is outside `[0, C)` is NaN, as its loss is.
  }];
  let arguments = (ins Fuse_FloatTensor:$logits, Fuse_IntTensor:$labels,
                       Fuse_FloatScalar:$grad);
  let results = (outs Fuse_FloatTensor:$result);
  let assemblyFormat = [{
    $logits `,` $labels `,` $grad attr-dict `:`
    functional-type(operands, results)
  }];
}

class Fuse_WindowGradOp<string mnemonic, string summaryText,
                        string resultLike, list<Trait> traits = []>
    : Fuse_Op<mnemonic, !listconcat(traits,
                                    [Pure, AllTypesMatch<[resultLike, "result"]>])> {
  let summary = summaryText;
  let assemblyFormat = [{
    operands attr-dict `:` functional-type(operands, results)
  }];
}

def Fuse_Conv2DInputGradOp : Fuse_WindowGradOp<"conv2d_input_grad",
    "Gradient of conv2d with respect to its input", "input",
    [DeclareOpInterfaceMethods<Fuse_VJPOpInterface>]> {
  let description = [{
    For `y = conv2d(input, filter)` with the given attributes and `grad` the
    gradient of `y`: the gradient of `input` (only its type is used).
    `grad` and `filter` have one element type, the result's, or are `bf16`
    with an `f32` result, summed in `f32` (the bf16 policy's).
  }];
  let arguments = (ins Fuse_FloatTensor:$grad, Fuse_FloatTensor:$filter,
      Fuse_FloatTensor:$input,
      DefaultValuedAttr<DenseI64ArrayAttr, "{1, 1}">:$strides,
      DefaultValuedAttr<DenseI64ArrayAttr, "{0, 0, 0, 0}">:$padding,
      DefaultValuedAttr<DenseI64ArrayAttr, "{1, 1}">:$dilations);
  let results = (outs Fuse_FloatTensor:$result);
  let hasVerifier = 1;
}

def Fuse_Conv2DFilterGradOp : Fuse_WindowGradOp<"conv2d_filter_grad",
    "Gradient of conv2d with respect to its filter", "filter",
    [DeclareOpInterfaceMethods<Fuse_VJPOpInterface>]> {
  let description = [{
    For `y = conv2d(input, filter)` with the given attributes and `grad` the
    gradient of `y`: the gradient of `filter` (only its type is used).
    `input` and `grad` have one element type, the result's, or are `bf16`
    with an `f32` result, summed in `f32` (the bf16 policy's).
  }];
  let arguments = (ins Fuse_FloatTensor:$input, Fuse_FloatTensor:$grad,
      Fuse_FloatTensor:$filter,
      DefaultValuedAttr<DenseI64ArrayAttr, "{1, 1}">:$strides,
      DefaultValuedAttr<DenseI64ArrayAttr, "{0, 0, 0, 0}">:$padding,
      DefaultValuedAttr<DenseI64ArrayAttr, "{1, 1}">:$dilations);
  let results = (outs Fuse_FloatTensor:$result);
  let hasVerifier = 1;
}

def Fuse_MaxPool2DGradOp : Fuse_WindowGradOp<"max_pool2d_grad",
    "Gradient of max_pool2d with respect to its input", "input"> {
  let description = [{
    For `output = max_pool2d(input)`, `indices = max_pool2d_indices(input)`
    with the same attributes and `grad` the gradient of `output`: each
    window's gradient goes to the element `indices` names in it, and an
    element of several windows gets their sum (only the type of `input` is
    used). The forward pass keeps the small `indices` instead of `input`,
    as PyTorch's `max_pool2d_with_indices` does.
  }];
  let arguments = (ins Fuse_FloatTensor:$grad, Fuse_IntTensor:$indices,
      Fuse_FloatTensor:$input, DenseI64ArrayAttr:$window,
      OptionalAttr<DenseI64ArrayAttr>:$strides,
      DefaultValuedAttr<DenseI64ArrayAttr, "{0, 0, 0, 0}">:$padding);
  let results = (outs Fuse_FloatTensor:$result);
  let hasVerifier = 1;
}

def Fuse_AvgPool2DGradOp : Fuse_WindowGradOp<"avg_pool2d_grad",
    "Gradient of avg_pool2d with respect to its input", "input",
    [DeclareOpInterfaceMethods<Fuse_VJPOpInterface>]> {
  let description = [{
    For `output = avg_pool2d(input)` and `grad` the gradient of `output`:
    each input element gets, from every window covering it, that window's
    gradient divided by the number of input elements the window covers.
  }];
  let arguments = (ins Fuse_FloatTensor:$grad, Fuse_FloatTensor:$input,
      DenseI64ArrayAttr:$window, OptionalAttr<DenseI64ArrayAttr>:$strides,
      DefaultValuedAttr<DenseI64ArrayAttr, "{0, 0, 0, 0}">:$padding);
  let results = (outs Fuse_FloatTensor:$result);
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Optimizers
//===----------------------------------------------------------------------===//

// The learning rate: a 0-d f32 operand, so a schedule never recompiles.
def Fuse_LearningRate : 0DTensorOf<[F32]> {
  let builderCall = "::mlir::RankedTensorType::get({}, $_builder.getF32Type())";
}

// Every optimizer op may also keep bf16 copies of some of its parameters
// (mixed precision's master weights, fuse-apply-precision-policy):
// `copies` are the current copies of the parameters at `copy_params`
// (indices into `params`, increasing), whose storage the new ones take
// (their values are not read); each new copy, a result after the new
// states, is the new parameter rounded to bf16 (nearest, ties to even), as
// `fuse.cast` of it, written by the same loop as the parameter.
//
// ```mlir
// %p2, %m2, %v2, %c2 = fuse.adam %lr, %step params(%p : tensor<4xf32>)
//     grads(%g : tensor<4xf32>) states(%m, %v : tensor<4xf32>, tensor<4xf32>)
//     copies(%c : tensor<4xbf16>) {copy_params = array<i64: 0>}
//     -> tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xbf16>
// ```
//
// With `split_copies` (`master_weights = "split"`), `copies` are, for the
// parameters at `copy_params`, first their top halves (bf16), then their
// low halves (i16, `fuse.low_half`): each such parameter is the join of
// its pair (`fuse.join_halves`), read from the pair and not from `params`
// (whose operand is only the f32 value's name); the new parameter is
// written as its new pair (`fuse.high_half`, `fuse.low_half`: truncated,
// not rounded), the last results, and its f32 result is their join.
//
// ```mlir
// %p2, %m2, %v2, %t2, %l2 = fuse.adam %lr, %step params(%p : tensor<4xf32>)
//     grads(%g : tensor<4xf32>) states(%m, %v : tensor<4xf32>, tensor<4xf32>)
//     copies(%t, %l : tensor<4xbf16>, tensor<4xi16>)
//     {copy_params = array<i64: 0>, split_copies}
//     -> tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xbf16>,
//        tensor<4xi16>
// ```
class Fuse_OptimizerOp<string mnemonic, list<string> overridden = []>
    : Fuse_Op<mnemonic, [Pure, AttrSizedOperandSegments, InferTypeOpAdaptor,
                         DeclareOpInterfaceMethods<Fuse_OptimizerOpInterface,
                                                   overridden>]> {
  dag extraArguments = (ins);
  let arguments = !con((ins Fuse_LearningRate:$lr, Fuse_StepTensor:$step,
                            Variadic<Fuse_FloatTensor>:$params,
                            Variadic<Fuse_FloatTensor>:$grads,
                            Variadic<Fuse_FloatTensor>:$states,
                            Variadic<TensorOf<[BF16, I16]>>:$copies,
                            OptionalAttr<DenseI64ArrayAttr>:$copy_params,
                            UnitAttr:$split_copies),
                       extraArguments);
  let results = (outs Variadic<RankedTensorOf<[AnyFloat, I16]>>:$results);
  let assemblyFormat = [{
    $lr `,` $step `params` `(` $params `:` type($params) `)`
    `grads` `(` $grads `:` type($grads) `)`
    `states` `(` ($states^ `:` type($states))? `)`
    (`copies` `(` $copies^ `:` type($copies) `)`)? attr-dict
    `->` type($results)
  }];
  let hasVerifier = 1;
  // Results: the new parameters, then the new states, then the new copies.
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::inferReturnTypes(
        ::mlir::MLIRContext *, std::optional<::mlir::Location>,
        Adaptor adaptor, ::llvm::SmallVectorImpl<::mlir::Type> &types) {
      ::llvm::append_range(types, adaptor.getParams().getTypes());
      ::llvm::append_range(types, adaptor.getStates().getTypes());
      ::llvm::append_range(types, adaptor.getCopies().getTypes());
      return ::mlir::success();
    }
  }];
}

def Fuse_SgdOp : Fuse_OptimizerOp<"sgd"> {
  let summary = "Stochastic gradient descent, as torch.optim.SGD";
  let description = [{
    Updates every parameter, in one op. With `step` the number of updates
    made before this one (0 first):

    ```
    g = grad + weight_decay * p
    if momentum != 0:
      buf = g                                  if step == 0
            momentum * buf + (1 - dampening) * g  otherwise
      g = g + momentum * buf if nesterov else buf
    p = p - lr * g
    ```

    States: one momentum buffer per parameter when `momentum` is not 0,
    none otherwise. Results: the new parameters, then the new states.

    ```mlir
    %p2, %b2 = fuse.sgd %lr, %step params(%p : tensor<4xf32>)
        grads(%g : tensor<4xf32>) states(%b : tensor<4xf32>)
        {momentum = 0.9 : f64} -> tensor<4xf32>, tensor<4xf32>
    ```
  }];
  let extraArguments = (ins DefaultValuedAttr<F64Attr, "0.0">:$momentum,
      DefaultValuedAttr<F64Attr, "0.0">:$dampening,
      UnitAttr:$nesterov,
      DefaultValuedAttr<F64Attr, "0.0">:$weight_decay);
}

def Fuse_AdamOp : Fuse_OptimizerOp<"adam"> {
  let summary = "Adam and AdamW, as torch.optim.Adam / AdamW";
  let description = [{
    Updates every parameter, in one op. With `t = step + 1`:

    ```
    if decoupled: p = p * (1 - lr * weight_decay)        (AdamW)
    else:         g = grad + weight_decay * p           (Adam)
    m = beta1 * m + (1 - beta1) * g
    v = beta2 * v + (1 - beta2) * g * g
    vhat = max(vmax, v) -> vmax  if amsgrad, else v
    p = p - (lr / (1 - beta1^t)) * m / (sqrt(vhat) / sqrt(1 - beta2^t) + eps)
    ```

    States per parameter: `m`, `v`, and `vmax` when `amsgrad`; laid out as
    all `m`, then all `v` (then all `vmax`). Results: the new parameters,
    then the new states in the same layout.

    The per-call scalars (`lr / (1 - beta1^t)`, `1 / sqrt(1 - beta2^t)`) are
    computed in f64, as PyTorch and Keras do, and rounded to the parameters'
    type once per call; so are Adagrad's `clr` and LAMB's bias corrections
    and trust ratio.
  }];
  let extraArguments = (ins DefaultValuedAttr<F64Attr, "0.9">:$beta1,
      DefaultValuedAttr<F64Attr, "0.999">:$beta2,
      DefaultValuedAttr<F64Attr, "1.0e-8">:$eps,
      DefaultValuedAttr<F64Attr, "0.0">:$weight_decay,
      UnitAttr:$amsgrad, UnitAttr:$decoupled);
}

def Fuse_AdagradOp : Fuse_OptimizerOp<"adagrad", ["getStateInitialValue"]> {
  let summary = "Adagrad, as torch.optim.Adagrad";
  let description = [{
    Updates every parameter, in one op:

    ```
    clr = lr / (1 + step * lr_decay)
    g = grad + weight_decay * p
    sum = sum + g * g
    p = p - clr * g / (sqrt(sum) + eps)
    ```

    States: one accumulator `sum` per parameter, which the caller starts at
    `initial_accumulator_value`.
  }];
  let extraArguments = (ins DefaultValuedAttr<F64Attr, "0.0">:$lr_decay,
      DefaultValuedAttr<F64Attr, "0.0">:$initial_accumulator_value,
      DefaultValuedAttr<F64Attr, "1.0e-10">:$eps,
      DefaultValuedAttr<F64Attr, "0.0">:$weight_decay);
}

def Fuse_RmspropOp : Fuse_OptimizerOp<"rmsprop"> {
  let summary = "RMSprop, as torch.optim.RMSprop";
  let description = [{
    Updates every parameter, in one op:

    ```
    g = grad + weight_decay * p
    square_avg = alpha * square_avg + (1 - alpha) * g * g
    if centered:
      grad_avg = alpha * grad_avg + (1 - alpha) * g
      avg = sqrt(square_avg - grad_avg * grad_avg) + eps
    else:
      avg = sqrt(square_avg) + eps
    if momentum != 0:
      buf = momentum * buf + g / avg;  p = p - lr * buf
    else:
      p = p - lr * g / avg
    ```

    States per parameter, in this order: `square_avg`, then `grad_avg` when
    `centered`, then the momentum buffer when `momentum` is not 0.
  }];
  let extraArguments = (ins DefaultValuedAttr<F64Attr, "0.99">:$alpha,
      DefaultValuedAttr<F64Attr, "1.0e-8">:$eps,
      DefaultValuedAttr<F64Attr, "0.0">:$momentum, UnitAttr:$centered,
      DefaultValuedAttr<F64Attr, "0.0">:$weight_decay);
}

def Fuse_LambOp : Fuse_OptimizerOp<"lamb"> {
  let summary = "LAMB (layer-wise adaptive moments), as apex FusedLAMB";
  let description = [{
    Updates every parameter, in one op, with `t = step + 1` and a trust
    ratio computed per parameter (never over several parameters):

    ```
    m = beta1 * m + (1 - beta1) * g
    v = beta2 * v + (1 - beta2) * g * g
    u = (m / (1 - beta1^t)) / (sqrt(v / (1 - beta2^t)) + eps)
        + weight_decay * p
    trust = ||p|| / ||u||   (1 when either norm is 0)
    p = p - lr * trust * u
    ```

    States per parameter: `m`, then `v` (all `m` first).
  }];
  let extraArguments = (ins DefaultValuedAttr<F64Attr, "0.9">:$beta1,
      DefaultValuedAttr<F64Attr, "0.999">:$beta2,
      DefaultValuedAttr<F64Attr, "1.0e-6">:$eps,
      DefaultValuedAttr<F64Attr, "0.0">:$weight_decay);
}

def Fuse_LrScheduleOp : Fuse_Op<"lr_schedule", [Pure]> {
  let summary = "The learning rate of a step under a schedule";
  let description = [{
    `lr` times the schedule's factor at the global step `step`
    (`#fuse.lr_schedule` gives the formulas), computed in f64 and rounded to
    f32 once. `fuse-expand-train-step` puts it between a step function's
    `lr` input and its optimizer ops when the `fuse.train_step` has an
    `lr_schedule` (none for `constant` without warmup).

    ```mlir
    %lr2 = fuse.lr_schedule %lr, %step
        {schedule = #fuse.lr_schedule<step, decay_steps = 100, gamma = 0.5>}
    ```
  }];
  let arguments = (ins Fuse_LearningRate:$lr, Fuse_StepTensor:$step,
                       Fuse_LrScheduleAttr:$schedule);
  let results = (outs Fuse_LearningRate:$result);
  let assemblyFormat = "$lr `,` $step attr-dict";
}

def Fuse_ClipGradientsOp : Fuse_Op<"clip_gradients",
    [Pure, InferTypeOpAdaptor]> {
  let summary = "Gradient clipping by global norm and by value";
  let description = [{
    The gradients of one training step, clipped as
    `torch.nn.utils.clip_grad_norm_` (Keras' `global_clipnorm`) when
    `clip_norm` is set, then as `clip_grad_value_` (Keras' `clipvalue`)
    when `clip_value` is:

    ```
    norm = sqrt(sum over every gradient g and element i of g[i]^2)
    g = g * min(1, clip_norm / (norm + 1e-6))
    g = clamp(g, -clip_value, clip_value)
    ```

    The squares of each gradient are summed in f32 (in its own type when
    wider), the sums in f64, where the scale is computed and rounded to the
    gradients' type once: one reduction over all gradients, before the
    optimizer's update. A NaN gradient makes every gradient NaN under
    `clip_norm`, as in PyTorch. `fuse-expand-train-step` inserts it between
    the gradients and the optimizer ops when the `fuse.train_step` has
    `clip_norm` or `clip_value`; each must be a finite number above 0, and
    one at least is set.

    ```mlir
    %g:2 = fuse.clip_gradients %gw, %gb {clip_norm = 1.0 : f64}
        : tensor<4x3xf32>, tensor<3xf32>
    ```
  }];
  let arguments = (ins Variadic<Fuse_FloatTensor>:$grads,
                       OptionalAttr<F64Attr>:$clip_norm,
                       OptionalAttr<F64Attr>:$clip_value);
  let results = (outs Variadic<Fuse_FloatTensor>:$results);
  let assemblyFormat = "$grads attr-dict `:` type($grads)";
  let hasVerifier = 1;
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::inferReturnTypes(
        ::mlir::MLIRContext *, std::optional<::mlir::Location>,
        Adaptor adaptor, ::llvm::SmallVectorImpl<::mlir::Type> &types) {
      ::llvm::append_range(types, adaptor.getGrads().getTypes());
      return ::mlir::success();
    }
  }];
}

//===----------------------------------------------------------------------===//
// Collectives (data-parallel training)
//===----------------------------------------------------------------------===//

def Fuse_AllReduceOp : Fuse_Op<"all_reduce",
    [AttrSizedOperandSegments, InferTypeOpAdaptor,
     MemoryEffects<[MemRead, MemWrite]>,
     DeclareOpInterfaceMethods<Fuse_VJPOpInterface>]> {
  let summary = "Sum or mean of tensors across the ranks of a data-parallel run";
  let description = [{
    A collective: every rank of the run calls it with tensors of the same
    types, and each gets, per tensor and element, the `sum` (or the `mean`:
    the sum divided by the number of ranks) over the ranks of its operand,
    first multiplied by `prescale` when given (each rank's own weight, as
    Horovod's `prescale_factor`):

    ```
    result[i] = sum over ranks r of prescale_r * input_r[i]    (sum)
    result[i] = (1 / ranks) * that sum                         (mean)
    ```

    All ranks must run the same all_reduce ops in the same order. With one
    rank (or no communicator) it returns `prescale * input`.
    `fuse-expand-train-step` places one between the gradients and the
    optimizer update of a data-parallel step (`data-parallel=true`), over
    every gradient at once. `convert-fuse-collectives` packs its tensors
    into a few f32 buffers (buckets), each reduced between the runtime's
    `fuse_all_reduce_start_f32` and `fuse_all_reduce_wait` (`fuse/ABI.h`),
    started as soon as its tensors are computed. It has memory
    effects: it is never removed, merged or moved across another collective.

    ```mlir
    %g:2 = fuse.all_reduce sum %gw, %gb prescale %weight
        : tensor<4x3xf32>, tensor<3xf32>
    ```
  }];
  let arguments = (ins Fuse_AllReduceKind:$kind, Variadic<Fuse_FloatTensor>:$inputs,
                       Optional<Fuse_LearningRate>:$prescale);
  let results = (outs Variadic<Fuse_FloatTensor>:$results);
  let assemblyFormat = [{
    $kind $inputs (`prescale` $prescale^)? attr-dict `:` type($inputs)
  }];
  let hasVerifier = 1;
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::inferReturnTypes(
        ::mlir::MLIRContext *, std::optional<::mlir::Location>,
        Adaptor adaptor, ::llvm::SmallVectorImpl<::mlir::Type> &types) {
      ::llvm::append_range(types, adaptor.getInputs().getTypes());
      return ::mlir::success();
    }
  }];
}

//===----------------------------------------------------------------------===//
// Automatic differentiation
//===----------------------------------------------------------------------===//

def Fuse_ValueAndGradOp : Fuse_Op<"value_and_grad",
    [DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "A function's value and its gradients";
  let description = [{
    Calls `callee`, which returns one 0-d float tensor (a loss), and returns
    that value followed by its gradient with respect to each argument listed
    in `wrt` (float tensors, in the order given). The `fuse-autodiff` pass
    replaces it by the function's forward ops and their vector-Jacobian
    products.

    ```mlir
    %l, %dw, %db = fuse.value_and_grad @loss(%w, %b, %x) {wrt = array<i64: 0, 1>}
        : (tensor<4x3xf32>, tensor<3xf32>, tensor<?x4xf32>)
        -> (tensor<f32>, tensor<4x3xf32>, tensor<3xf32>)
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$callee, Variadic<AnyType>:$args,
                       DenseI64ArrayAttr:$wrt);
  let results = (outs Variadic<AnyType>:$results);
  let assemblyFormat = [{
    $callee `(` $args `)` attr-dict `:` functional-type($args, results)
  }];
}

//===----------------------------------------------------------------------===//
// Training
//===----------------------------------------------------------------------===//

def Fuse_TrainStepOp : Fuse_Op<"train_step",
    [Symbol, HasParent<"::mlir::ModuleOp">,
     DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "A training step: a loss function, what it trains, an optimizer";
  let description = [{
    Declares the function `sym_name` that takes one training step of the
    loss function `loss` (which returns one 0-d float tensor): the
    gradients of the loss with respect to the arguments listed in `params`,
    then the update of those arguments by `optimizer` (`sgd`, `adam`,
    `adagrad`, `rmsprop` or `lamb`, with `hyperparameters`: the attributes
    of the `fuse.<optimizer>` op, e.g. `{momentum = 0.9 : f64}`). If the
    loss takes the step counter (dropout's key), `step_arg` names that
    argument. `fuse-expand-train-step` defines the function:

    ```
    (params..., optimizer states..., other loss arguments..., lr, step)
        -> (loss, new params..., new states...)
    ```

    States are laid out as the optimizer op's (state k of parameter i at
    k * n + i); every new parameter and state is computed in place of its
    argument (`fuse.in_place`).

    `no_decay` lists parameters (loss argument indices, among `params`)
    updated without the optimizer's `weight_decay`, as a PyTorch parameter
    group with `weight_decay = 0` or Keras' `exclude_from_weight_decay`
    (biases and normalization scales in AdamW): they get an optimizer op of
    their own, with the same states and hyperparameters but
    `weight_decay = 0`.

    `lr_schedule` (`#fuse.lr_schedule`) scales the learning rate by a
    factor of the step counter, in the step function (`fuse.lr_schedule`
    between `lr` and the optimizer ops). `clip_norm` clips the gradients'
    global L2 norm and `clip_value` each gradient element, before the
    update (`fuse.clip_gradients`, over every parameter's gradient, those of
    `no_decay` included); each is a finite number above 0. Without them the
    step function is unchanged.

    `precision` is `"f32"` (the default) or `"bf16"`: mixed precision, the
    operands of every matmul and batch_matmul of the step (forward and
    backward) and of every forward convolution rounded to `bf16` and their
    products summed in `f32`; element-wise work, reductions, the loss, the
    optimizer and the parameters (master weights) and their states stay
    `f32` (`fuse-apply-precision-policy`, after differentiation).

    `master_weights` (bf16 only) is `"copy"` (the default: each weight the
    products read has a bf16 copy, rounded to nearest-even, that the update
    writes beside the f32 weight) or `"split"` (IPEX's split layout: the
    weight kept as its top 16 bits, a bf16 that the products read, the f32
    value truncated, and its low 16 bits, `fuse.high_half` and
    `fuse.low_half`; the update joins the pair, exactly the f32 weight,
    and writes both halves; the K-step loop of `@<step>_steps` carries the
    halves instead of the f32 weight and a copy). The step functions'
    arguments and results stay f32 either way.

    ```mlir
    fuse.train_step @train {loss = @loss, params = array<i64: 0, 1, 2, 3>,
                            optimizer = "adam", step_arg = 6,
                            hyperparameters = {eps = 1.0e-7 : f64},
                            lr_schedule = #fuse.lr_schedule<cosine, warmup = 100, decay_steps = 900>,
                            clip_norm = 1.0 : f64}
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, FlatSymbolRefAttr:$loss,
                       DenseI64ArrayAttr:$params, StrAttr:$optimizer,
                       OptionalAttr<DictionaryAttr>:$hyperparameters,
                       OptionalAttr<I64Attr>:$step_arg,
                       OptionalAttr<DenseI64ArrayAttr>:$no_decay,
                       OptionalAttr<Fuse_LrScheduleAttr>:$lr_schedule,
                       OptionalAttr<F64Attr>:$clip_norm,
                       OptionalAttr<F64Attr>:$clip_value,
                       OptionalAttr<StrAttr>:$precision,
                       OptionalAttr<StrAttr>:$master_weights);
  let assemblyFormat = "$sym_name attr-dict";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The loss's arguments (of `numLossArguments`) that are neither
    /// parameters nor the step counter: the batch, in order.
    ::llvm::SmallVector<unsigned> getBatchArguments(unsigned numLossArguments);
  }];
}

#endif // FUSE_OPS_TD
