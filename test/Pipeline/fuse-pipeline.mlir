// The seed model, specialized to a batch of 32, compiles through the whole
// chain (simplify, lower to linalg, lower to LLVM) to the LLVM dialect.
// RUN: fuse-opt %examples/mlp.mlir --fuse-specialize="function=loss arg-types=tensor<784x128xf32>,tensor<128xf32>,tensor<128x10xf32>,tensor<10xf32>,tensor<32x28x28xf32>,tensor<32xi32>,tensor<i64>" --fuse-pipeline | FileCheck %s --check-prefix=MLP
// RUN: fuse-opt %examples/mlp.mlir --fuse-specialize="function=loss arg-types=tensor<784x128xf32>,tensor<128xf32>,tensor<128x10xf32>,tensor<10xf32>,tensor<32x28x28xf32>,tensor<32xi32>,tensor<i64>" --fuse-pipeline | FileCheck %s --check-prefix=LLVM-ONLY
// Unspecialized, the pipeline stops at the first dynamic fuse op.
// RUN: not fuse-opt %examples/mlp.mlir --fuse-pipeline 2>&1 | FileCheck %s --check-prefix=UNSPECIALIZED
// The cases of this file.
// RUN: fuse-opt %s --fuse-pipeline --split-input-file | FileCheck %s
// RUN: fuse-opt %s --fuse-pipeline --split-input-file | FileCheck %s --check-prefix=LLVM-ONLY

// Seven parameters and inputs, then the loss as an eighth out-parameter,
// then the buffers of the intermediates (noalias, or sharing a workspace
// slot with buffers that live at other times); no result. The labels keep
// their class count (fuse-mark-class-labels). The checks stay loose: the
// code generation strategy will change.
// MLP-LABEL: llvm.func @loss
// MLP-SAME: (%{{[^:]*}}: !llvm.ptr {llvm.noalias}, %{{[^:]*}}: !llvm.ptr {llvm.noalias}, %{{[^:]*}}: !llvm.ptr {llvm.noalias}, %{{[^:]*}}: !llvm.ptr {llvm.noalias}, %{{[^:]*}}: !llvm.ptr {llvm.noalias}, %{{[^:]*}}: !llvm.ptr {fuse.class_labels = 10 : i64, llvm.noalias}, %{{[^:]*}}: !llvm.ptr {llvm.noalias}, %[[LOSS:[^:]*]]: !llvm.ptr {llvm.noalias}, {{(%[^:]*: !llvm.ptr \{(llvm.noalias|fuse.workspace_slot = [0-9]+ : i64)\}(, )?)+}}) attributes {fuse.workspace = array<i64: {{[0-9, ]+}}>} {
// MLP-NOT: @malloc
// MLP: {{(llvm.store [^,]+, |"llvm.intr.memcpy"\(|llvm.getelementptr [a-z|]* ?)}}%[[LOSS]]{{[[, ]}}
// MLP: llvm.return{{$}}
// MLP-NEXT: }

// LLVM-ONLY: module
// LLVM-ONLY-NOT: {{= fuse\.|^ *fuse\.}}
// LLVM-ONLY-NOT: func.func
// LLVM-ONLY-NOT: {{[ "]linalg\.}}
// LLVM-ONLY-NOT: {{[ "]tensor\.}}
// LLVM-ONLY-NOT: bufferization.
// LLVM-ONLY-NOT: {{[ "]memref\.}}
// LLVM-ONLY-NOT: memref<
// LLVM-ONLY-NOT: {{[ "]arith\.}}
// LLVM-ONLY-NOT: {{[ "]math\.}}
// LLVM-ONLY-NOT: {{[ "]scf\.}}
// LLVM-ONLY-NOT: {{[ "]cf\.}}
// LLVM-ONLY-NOT: {{[ "]affine\.}}
// LLVM-ONLY-NOT: {{[ "]vector\.}}
// LLVM-ONLY-NOT: unrealized_conversion_cast

// UNSPECIALIZED: mlp.mlir:{{[0-9]+}}:{{[0-9]+}}: error: 'fuse.reshape' op has dynamic dimensions; specialize the function to concrete shapes first
// UNSPECIALIZED-NOT: llvm.func

// The simplify stage runs first: x * 1 + 0 folds to x, and returning an
// argument is a plain copy into the out-parameter, with no loop left.
// CHECK-LABEL: llvm.func @identity_after_simplify
// CHECK-SAME: (%[[X:[^:]*]]: !llvm.ptr {llvm.noalias}, %[[OUT:[^:]*]]: !llvm.ptr {llvm.noalias}) {
// CHECK-NOT: llvm.fmul
// CHECK-NOT: llvm.fadd
// CHECK-NOT: llvm.cond_br
// CHECK: "llvm.intr.memcpy"(%[[OUT]], %[[X]], %{{.*}})
// CHECK-NEXT: llvm.return{{$}}
func.func @identity_after_simplify(%x: tensor<4xf32>) -> tensor<4xf32> {
  %one = fuse.constant dense<1.0> : tensor<f32>
  %zero = fuse.constant dense<0.0> : tensor<4xf32>
  %0 = fuse.mul %x, %one : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %1 = fuse.add %0, %zero : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %1 : tensor<4xf32>
}

// -----

// Every function of the module is compiled.
// CHECK-LABEL: llvm.func @relu
// CHECK-SAME: (%{{[^:]*}}: !llvm.ptr {llvm.noalias}, %{{[^:]*}}: !llvm.ptr {llvm.noalias}) {
// CHECK: llvm.intr.maximum
// CHECK: llvm.return{{$}}
// CHECK-LABEL: llvm.func @total
// CHECK-SAME: (%{{[^:]*}}: !llvm.ptr {llvm.noalias}, %[[OUT:[^:]*]]: !llvm.ptr {llvm.noalias}) {
// CHECK: {{llvm.fadd|llvm.intr.vector.reduce.fadd}}
// CHECK: {{(llvm.store [^,]+, |"llvm.intr.memcpy"\(|llvm.getelementptr [a-z|]* ?)}}%[[OUT]]{{[[, ]}}
// CHECK: llvm.return{{$}}
func.func @relu(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = fuse.relu %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func @total(%x: tensor<2x2xf32>) -> tensor<f32> {
  %0 = fuse.reduce_sum %x {axes = array<i64: 0, 1>} : (tensor<2x2xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}
