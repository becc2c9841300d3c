// RUN: fuse-opt %s --fuse-lower-to-linalg --fuse-lower-to-llvm --split-input-file | FileCheck %s
// RUN: fuse-opt %s --fuse-lower-to-linalg --fuse-lower-to-llvm --split-input-file | FileCheck %s --check-prefix=LLVM-ONLY

// Nothing but the LLVM dialect is left, in any case.
// LLVM-ONLY: module
// LLVM-ONLY-NOT: func.func
// LLVM-ONLY-NOT: {{[ "]memref\.}}
// LLVM-ONLY-NOT: memref<
// LLVM-ONLY-NOT: bufferization.
// LLVM-ONLY-NOT: {{[ "]tensor\.}}
// LLVM-ONLY-NOT: {{[ "]linalg\.}}
// LLVM-ONLY-NOT: {{[ "]arith\.}}
// LLVM-ONLY-NOT: {{[ "]math\.}}
// LLVM-ONLY-NOT: {{[ "]scf\.}}
// LLVM-ONLY-NOT: {{[ "]cf\.}}
// LLVM-ONLY-NOT: {{[ "]affine\.}}
// LLVM-ONLY-NOT: {{[ "]vector\.}}
// LLVM-ONLY-NOT: unrealized_conversion_cast

// The calling convention of the compiled functions: every argument and every
// result is a bare !llvm.ptr to the tensor's data; results are written to
// trailing out-parameters the caller allocates, and the function returns
// nothing. The loop structure is deliberately not checked: the code
// generation strategy (tiling, vectorization) will change. "Written to" is
// checked as: the out-parameter is the destination of a store or memcpy, or
// the base of an address computation. Intermediates live in a workspace, a
// trailing pointer argument each, sized by `fuse.workspace` (fuse-workspace),
// which the engine carves from one workspace: the function allocates
// nothing. (How many there are depends on the host's register tiles.)
// Every pointer is noalias: the buffers never overlap.


// CHECK-LABEL: llvm.func @dense
// CHECK-SAME: (%[[X:[^:]*]]: !llvm.ptr {llvm.noalias}, %[[W:[^:]*]]: !llvm.ptr {llvm.noalias}, %[[B:[^:]*]]: !llvm.ptr {llvm.noalias}, %[[OUT:[^:]*]]: !llvm.ptr {llvm.noalias}, %[[WS:[^:]*]]: !llvm.ptr {llvm.noalias}{{.*}}) attributes {fuse.workspace = array<i64: {{[0-9, ]+}}>} {
// CHECK-NOT: @malloc
// CHECK: llvm.load %{{.*}} : !llvm.ptr -> {{.*}}f32
// CHECK: {{(llvm.store [^,]+, |"llvm.intr.memcpy"\(|llvm.getelementptr [a-z|]* ?)}}%[[OUT]]{{[[, ]}}
// CHECK: llvm.return{{$}}
// CHECK-NEXT: }
func.func @dense(%x: tensor<8x16xf32>, %w: tensor<16x4xf32>, %b: tensor<4xf32>) -> tensor<8x4xf32> {
  %h = fuse.matmul %x, %w : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  %hb = fuse.add %h, %b : (tensor<8x4xf32>, tensor<4xf32>) -> tensor<8x4xf32>
  %a = fuse.relu %hb : tensor<8x4xf32>
  return %a : tensor<8x4xf32>
}

// -----

// Two results, two out-parameters, in order; a 0-d result is stored through
// its pointer directly.
// CHECK-LABEL: llvm.func @two_results
// CHECK-SAME: (%[[X:[^:]*]]: !llvm.ptr {llvm.noalias}, %[[OUT0:[^:]*]]: !llvm.ptr {llvm.noalias}, %[[OUT1:[^:]*]]: !llvm.ptr {llvm.noalias}) {
// CHECK-DAG: {{(llvm.store [^,]+, |"llvm.intr.memcpy"\(|llvm.getelementptr [a-z|]* ?)}}%[[OUT0]]{{[[, ]}}
// CHECK-DAG: llvm.store %{{.*}}, %[[OUT1]] {{.*}}: {{.*}}f32{{>?}}, !llvm.ptr
// CHECK: llvm.return{{$}}
func.func @two_results(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<f32>) {
  %0 = fuse.exp %x : tensor<4xf32>
  %1 = fuse.reduce_sum %0 {axes = array<i64: 0>} : (tensor<4xf32>) -> tensor<f32>
  return %0, %1 : tensor<4xf32>, tensor<f32>
}

// -----

// A 0-d i64 argument (the training step) is a pointer as well.
// CHECK-LABEL: llvm.func @step_argument
// CHECK-SAME: (%[[X:[^:]*]]: !llvm.ptr {llvm.noalias}, %[[STEP:[^:]*]]: !llvm.ptr {llvm.noalias}, %[[OUT:[^:]*]]: !llvm.ptr {llvm.noalias}) {
// CHECK: llvm.load %[[STEP]] {{.*}}: !llvm.ptr -> {{.*}}i64
// CHECK: llvm.return{{$}}
func.func @step_argument(%x: tensor<4xf32>, %step: tensor<i64>) -> tensor<4xf32> {
  %0 = fuse.dropout %x, %step {rate = 0.5 : f32} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// A constant result is a global copied into the out-parameter.
// CHECK: llvm.mlir.global private constant @{{.*}}(dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]> : tensor<4xf32>)
// CHECK-LABEL: llvm.func @constant_result
// CHECK-SAME: (%[[OUT:[^:]*]]: !llvm.ptr {llvm.noalias}) {
// CHECK: "llvm.intr.memcpy"(%[[OUT]], %{{.*}}, %{{.*}})
// CHECK: llvm.return{{$}}
func.func @constant_result() -> tensor<4xf32> {
  %0 = fuse.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Returning an argument copies it.
// CHECK-LABEL: llvm.func @return_argument
// CHECK-SAME: (%[[X:[^:]*]]: !llvm.ptr {llvm.noalias}, %[[OUT:[^:]*]]: !llvm.ptr {llvm.noalias}) {
// CHECK: "llvm.intr.memcpy"(%[[OUT]], %[[X]], %{{.*}})
// CHECK: llvm.return{{$}}
func.func @return_argument(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

// -----

// f32 exp and log are approximated by arithmetic: no libm call, no math op.
// CHECK-LABEL: llvm.func @transcendental
// CHECK-NOT: llvm.call @{{(exp|log|tanh)}}
// CHECK-NOT: llvm.intr.exp
// CHECK-NOT: llvm.intr.log
// CHECK: llvm.intr.fma
// CHECK-NOT: llvm.call @{{(exp|log|tanh)}}
// CHECK-NOT: llvm.intr.exp
// CHECK-NOT: llvm.intr.log
// CHECK: llvm.return{{$}}
func.func @transcendental(%x: tensor<16xf32>) -> tensor<16xf32> {
  %0 = fuse.exp %x : tensor<16xf32>
  %1 = fuse.log %0 : tensor<16xf32>
  %2 = fuse.tanh %1 : tensor<16xf32>
  return %2 : tensor<16xf32>
}

// -----

// A padded convolution and a max pool. The workspace holds the padded
// input and the convolution's output (the pool is not fused), which the
// convolution's tiles accumulate in: no copy of any kind.
// CHECK-LABEL: llvm.func @padded_conv
// CHECK-SAME: (%[[X:[^:]*]]: !llvm.ptr {llvm.noalias}, %[[K:[^:]*]]: !llvm.ptr {llvm.noalias}, %[[OUT:[^:]*]]: !llvm.ptr {llvm.noalias}, %{{[^:]*}}: !llvm.ptr {llvm.noalias}, %{{[^:]*}}: !llvm.ptr {llvm.noalias}) attributes {fuse.workspace = array<i64: 448, 512>} {
// CHECK-NOT: memrefCopy
// CHECK-NOT: memcpy
// CHECK: llvm.return{{$}}
func.func @padded_conv(%x: tensor<1x8x8x1xf32>, %k: tensor<3x3x1x2xf32>) -> tensor<1x4x4x2xf32> {
  %c = fuse.conv2d %x, %k {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x8x8x1xf32>, tensor<3x3x1x2xf32>) -> tensor<1x8x8x2xf32>
  %p = fuse.max_pool2d %c {window = array<i64: 2, 2>} : (tensor<1x8x8x2xf32>) -> tensor<1x4x4x2xf32>
  return %p : tensor<1x4x4x2xf32>
}

// -----

// The padded input of a convolution computed by an element-wise op: the op
// writes into the padded buffer's interior, the only workspace buffer. Here
// it is also returned, so it is computed into the result and copied into
// the interior by vectorized code, not by memrefCopy.
// CHECK-LABEL: llvm.func @relu_padded_conv
// CHECK-SAME: attributes {fuse.workspace = array<i64: 1600>}
// CHECK-NOT: memrefCopy
// CHECK-NOT: memcpy
// CHECK: llvm.return{{$}}
func.func @relu_padded_conv(%x: tensor<1x8x8x4xf32>, %k: tensor<3x3x4x16xf32>) -> (tensor<1x8x8x4xf32>, tensor<1x8x8x16xf32>) {
  %r = fuse.relu %x : tensor<1x8x8x4xf32>
  %c = fuse.conv2d %r, %k {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x8x8x4xf32>, tensor<3x3x4x16xf32>) -> tensor<1x8x8x16xf32>
  return %r, %c : tensor<1x8x8x4xf32>, tensor<1x8x8x16xf32>
}

// -----

// An element-wise function computes its result straight into the caller's
// out-parameter: no heap allocation, no copy.
// CHECK-LABEL: llvm.func @elementwise_into_out_param
// CHECK-SAME: (%[[X:[^:]*]]: !llvm.ptr {llvm.noalias}, %[[Y:[^:]*]]: !llvm.ptr {llvm.noalias}, %[[OUT:[^:]*]]: !llvm.ptr {llvm.noalias}) {
// CHECK-NOT: llvm.call @malloc
// CHECK-NOT: memcpy
// CHECK: {{(llvm.store [^,]+, |llvm.getelementptr [a-z|]* ?)}}%[[OUT]]{{[[, ]}}
// CHECK-NOT: llvm.call @malloc
// CHECK-NOT: memcpy
// CHECK: llvm.return{{$}}
// CHECK-NEXT: }
func.func @elementwise_into_out_param(%x: tensor<1024xf32>, %y: tensor<1024xf32>) -> tensor<1024xf32> {
  %s = fuse.add %x, %y : (tensor<1024xf32>, tensor<1024xf32>) -> tensor<1024xf32>
  %r = fuse.relu %s : tensor<1024xf32>
  return %r : tensor<1024xf32>
}

// -----

// Two results that are the same value (CSE merged two identical exps): each
// gets its own out-parameter (fuse-distinct-results copies the second).
// CHECK-LABEL: llvm.func @same_twice
// CHECK-SAME: (%{{.*}}: !llvm.ptr {llvm.noalias}, %{{.*}}: !llvm.ptr {llvm.noalias}, %{{.*}}: !llvm.ptr {llvm.noalias}) {
// CHECK: "llvm.intr.memcpy"
// CHECK: llvm.return{{$}}
func.func @same_twice(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = fuse.exp %x : tensor<4xf32>
  %1 = fuse.exp %x : tensor<4xf32>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}
