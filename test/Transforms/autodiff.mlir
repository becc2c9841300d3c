// RUN: fuse-opt %s --fuse-autodiff --split-input-file | FileCheck %s

// Broadcasting: the gradient of the broadcast bias is summed over the batch;
// no gradient is built for %x, which is not in wrt.
func.func @f(%x: tensor<?x4xf32>, %b: tensor<4xf32>) -> tensor<f32> {
  %y = fuse.add %x, %b : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  %e = fuse.exp %y : tensor<?x4xf32>
  %s = fuse.reduce_sum %e {axes = array<i64: 0, 1>} : (tensor<?x4xf32>) -> tensor<f32>
  return %s : tensor<f32>
}
// CHECK-LABEL: func @bias
// CHECK: %[[Y:.*]] = fuse.add %arg0, %arg1
// CHECK: %[[E:.*]] = fuse.exp %[[Y]]
// CHECK: %[[L:.*]] = fuse.reduce_sum %[[E]]
// CHECK: %[[SEED:.*]] = fuse.full_like %[[L]] {value = 1.000000e+00 : f64}
// CHECK: %[[G:.*]] = fuse.mul %{{.*}}, %[[E]]
// CHECK: %[[DB:.*]] = fuse.reduce_sum %[[G]] {axes = array<i64: 0>} : (tensor<?x4xf32>) -> tensor<4xf32>
// CHECK: return %[[L]], %[[DB]]
func.func @bias(%x: tensor<?x4xf32>, %b: tensor<4xf32>) -> (tensor<f32>, tensor<4xf32>) {
  %l, %db = fuse.value_and_grad @f(%x, %b) {wrt = array<i64: 1>}
      : (tensor<?x4xf32>, tensor<4xf32>) -> (tensor<f32>, tensor<4xf32>)
  return %l, %db : tensor<f32>, tensor<4xf32>
}

// -----

// A dense layer: dW = x^T g and dx = g W^T, as matmuls with transpose flags.
func.func @f(%x: tensor<?x8xf32>, %w: tensor<8x3xf32>) -> tensor<f32> {
  %y = fuse.matmul %x, %w : (tensor<?x8xf32>, tensor<8x3xf32>) -> tensor<?x3xf32>
  %s = fuse.reduce_mean %y {axes = array<i64: 0, 1>} : (tensor<?x3xf32>) -> tensor<f32>
  return %s : tensor<f32>
}
// CHECK-LABEL: func @dense
// CHECK: fuse.matmul %arg0, %arg1 : (tensor<?x8xf32>, tensor<8x3xf32>) -> tensor<?x3xf32>
// CHECK-DAG: %[[DX:.*]] = fuse.matmul %{{.*}}, %arg1 {transpose_rhs} : (tensor<?x3xf32>, tensor<8x3xf32>) -> tensor<?x8xf32>
// CHECK-DAG: %[[DW:.*]] = fuse.matmul %arg0, %{{.*}} {transpose_lhs} : (tensor<?x8xf32>, tensor<?x3xf32>) -> tensor<8x3xf32>
// CHECK: return %{{.*}}, %[[DX]], %[[DW]]
func.func @dense(%x: tensor<?x8xf32>, %w: tensor<8x3xf32>) -> (tensor<f32>, tensor<?x8xf32>, tensor<8x3xf32>) {
  %l, %dx, %dw = fuse.value_and_grad @f(%x, %w) {wrt = array<i64: 0, 1>}
      : (tensor<?x8xf32>, tensor<8x3xf32>) -> (tensor<f32>, tensor<?x8xf32>, tensor<8x3xf32>)
  return %l, %dx, %dw : tensor<f32>, tensor<?x8xf32>, tensor<8x3xf32>
}

// -----

// relu masks the gradient by its output; dropout recomputes the same mask
// (same seed, same step); the fused cross-entropy gradient needs no one-hot
// tensor.
func.func @f(%x: tensor<?x10xf32>, %y: tensor<?xi32>, %s: tensor<i64>) -> tensor<f32> {
  %r = fuse.relu %x : tensor<?x10xf32>
  %d = fuse.dropout %r, %s {rate = 0.5 : f32, seed = 3 : i64} : tensor<?x10xf32>
  %l = fuse.softmax_cross_entropy %d, %y : (tensor<?x10xf32>, tensor<?xi32>) -> tensor<f32>
  return %l : tensor<f32>
}
// CHECK-LABEL: func @classifier
// CHECK: %[[R:.*]] = fuse.relu %arg0
// CHECK: %[[D:.*]] = fuse.dropout %[[R]], %arg2 {rate = 5.000000e-01 : f32, seed = 3 : i64}
// CHECK: %[[L:.*]] = fuse.softmax_cross_entropy %[[D]], %arg1
// CHECK: %[[GD:.*]] = fuse.softmax_cross_entropy_grad %[[D]], %arg1, %{{.*}}
// CHECK: %[[GR:.*]] = fuse.dropout %[[GD]], %arg2 {rate = 5.000000e-01 : f32, seed = 3 : i64}
// CHECK: %[[POS:.*]] = fuse.compare gt, %[[R]], %{{.*}}
// CHECK: %[[GX:.*]] = fuse.select %[[POS]], %[[GR]], %{{.*}}
// CHECK: return %[[L]], %[[GX]]
func.func @classifier(%x: tensor<?x10xf32>, %y: tensor<?xi32>, %s: tensor<i64>) -> (tensor<f32>, tensor<?x10xf32>) {
  %l, %dx = fuse.value_and_grad @f(%x, %y, %s) {wrt = array<i64: 0>}
      : (tensor<?x10xf32>, tensor<?xi32>, tensor<i64>) -> (tensor<f32>, tensor<?x10xf32>)
  return %l, %dx : tensor<f32>, tensor<?x10xf32>
}

// -----

// A value used twice gets the sum of both gradients; an argument the loss
// does not depend on gets zeros.
func.func @f(%x: tensor<4xf32>, %unused: tensor<3xf32>) -> tensor<f32> {
  %sq = fuse.mul %x, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s = fuse.reduce_sum %sq {axes = array<i64: 0>} : (tensor<4xf32>) -> tensor<f32>
  return %s : tensor<f32>
}
// CHECK-LABEL: func @shared
// CHECK: %[[G:.*]] = fuse.add %{{.*}}, %{{.*}} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK: %[[Z:.*]] = fuse.full_like %arg1 {value = 0.000000e+00 : f64} : tensor<3xf32>
// CHECK: return %{{.*}}, %[[G]], %[[Z]]
func.func @shared(%x: tensor<4xf32>, %u: tensor<3xf32>) -> (tensor<f32>, tensor<4xf32>, tensor<3xf32>) {
  %l, %dx, %du = fuse.value_and_grad @f(%x, %u) {wrt = array<i64: 0, 1>}
      : (tensor<4xf32>, tensor<3xf32>) -> (tensor<f32>, tensor<4xf32>, tensor<3xf32>)
  return %l, %dx, %du : tensor<f32>, tensor<4xf32>, tensor<3xf32>
}

// -----

// fuse.all_reduce is linear: each operand's gradient is the same collective
// over the results' gradients times the operand's prescale; the prescale
// gets none.
func.func @f(%x: tensor<4xf32>, %w: tensor<f32>) -> tensor<f32> {
  %r = fuse.all_reduce mean %x prescale %w : tensor<4xf32>
  %s = fuse.reduce_sum %r {axes = array<i64: 0>} : (tensor<4xf32>) -> tensor<f32>
  return %s : tensor<f32>
}
// CHECK-LABEL: func @all_reduce
// CHECK: %[[R:.*]] = fuse.all_reduce mean %arg0 prescale %arg1 : tensor<4xf32>
// CHECK: %[[G:.*]] = fuse.all_reduce mean %{{.*}} : tensor<4xf32>
// CHECK: %[[DX:.*]] = fuse.mul %[[G]], %arg1 : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
// CHECK: return %{{.*}}, %[[DX]]
func.func @all_reduce(%x: tensor<4xf32>, %w: tensor<f32>) -> (tensor<f32>, tensor<4xf32>) {
  %l, %dx = fuse.value_and_grad @f(%x, %w) {wrt = array<i64: 0>}
      : (tensor<4xf32>, tensor<f32>) -> (tensor<f32>, tensor<4xf32>)
  return %l, %dx : tensor<f32>, tensor<4xf32>
}

// -----

// After simplification no forward op is computed twice.
// RUN: fuse-opt %s --fuse-autodiff --fuse-simplify --split-input-file | FileCheck %s --check-prefix=SIMPLE
func.func @f(%x: tensor<4xf32>) -> tensor<f32> {
  %t = fuse.tanh %x : tensor<4xf32>
  %s = fuse.reduce_sum %t {axes = array<i64: 0>} : (tensor<4xf32>) -> tensor<f32>
  return %s : tensor<f32>
}
// SIMPLE-LABEL: func @once
// SIMPLE-COUNT-1: fuse.tanh
// SIMPLE-NOT: fuse.tanh
// SIMPLE: return
func.func @once(%x: tensor<4xf32>) -> (tensor<f32>, tensor<4xf32>) {
  %l, %dx = fuse.value_and_grad @f(%x) {wrt = array<i64: 0>}
      : (tensor<4xf32>) -> (tensor<f32>, tensor<4xf32>)
  return %l, %dx : tensor<f32>, tensor<4xf32>
}

// -----

// conv2d and pools: dedicated gradient ops carry the window attributes.
func.func @f(%x: tensor<1x8x8x2xf32>, %k: tensor<3x3x2x4xf32>) -> tensor<f32> {
  %c = fuse.conv2d %x, %k {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : (tensor<1x8x8x2xf32>, tensor<3x3x2x4xf32>) -> tensor<1x4x4x4xf32>
  %m = fuse.max_pool2d %c {window = array<i64: 2, 2>} : (tensor<1x4x4x4xf32>) -> tensor<1x2x2x4xf32>
  %a = fuse.avg_pool2d %m {window = array<i64: 2, 2>} : (tensor<1x2x2x4xf32>) -> tensor<1x1x1x4xf32>
  %s = fuse.reduce_sum %a {axes = array<i64: 0, 1, 2, 3>} : (tensor<1x1x1x4xf32>) -> tensor<f32>
  return %s : tensor<f32>
}
// CHECK-LABEL: func @cnn
// CHECK: %[[C:.*]] = fuse.conv2d %arg0, %arg1
// CHECK: %[[M:.*]] = fuse.max_pool2d %[[C]]
// The forward pass keeps the pool's argmax, computed beside it.
// CHECK-NEXT: %[[I:.*]] = fuse.max_pool2d_indices %[[C]] {window = array<i64: 2, 2>} : (tensor<1x4x4x4xf32>) -> tensor<1x2x2x4xi8>
// CHECK: %[[GA:.*]] = fuse.avg_pool2d_grad %{{.*}}, %[[M]] {window = array<i64: 2, 2>}
// CHECK: %[[GM:.*]] = fuse.max_pool2d_grad %[[GA]], %[[I]], %[[C]] {window = array<i64: 2, 2>}
// CHECK-DAG: fuse.conv2d_input_grad %[[GM]], %arg1, %arg0 {padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x4x4x4xf32>, tensor<3x3x2x4xf32>, tensor<1x8x8x2xf32>) -> tensor<1x8x8x2xf32>
// CHECK-DAG: fuse.conv2d_filter_grad %arg0, %[[GM]], %arg1 {padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x8x8x2xf32>, tensor<1x4x4x4xf32>, tensor<3x3x2x4xf32>) -> tensor<3x3x2x4xf32>
func.func @cnn(%x: tensor<1x8x8x2xf32>, %k: tensor<3x3x2x4xf32>) -> (tensor<f32>, tensor<1x8x8x2xf32>, tensor<3x3x2x4xf32>) {
  %l, %dx, %dk = fuse.value_and_grad @f(%x, %k) {wrt = array<i64: 0, 1>}
      : (tensor<1x8x8x2xf32>, tensor<3x3x2x4xf32>) -> (tensor<f32>, tensor<1x8x8x2xf32>, tensor<3x3x2x4xf32>)
  return %l, %dx, %dk : tensor<f32>, tensor<1x8x8x2xf32>, tensor<3x3x2x4xf32>
}

// -----

// Shape ops and reductions: reshape and transpose invert, softmax uses its
// output, reduce_max routes the gradient to the (shared) maxima.
func.func @f(%x: tensor<2x6xf32>) -> tensor<f32> {
  %r = fuse.reshape %x : (tensor<2x6xf32>) -> tensor<3x4xf32>
  %t = fuse.transpose %r {permutation = array<i64: 1, 0>} : (tensor<3x4xf32>) -> tensor<4x3xf32>
  %s = fuse.softmax %t : tensor<4x3xf32>
  %m = fuse.reduce_max %s {axes = array<i64: 0, 1>} : (tensor<4x3xf32>) -> tensor<f32>
  return %m : tensor<f32>
}
// CHECK-LABEL: func @shapes
// CHECK: %[[S:.*]] = fuse.softmax
// CHECK: %[[M:.*]] = fuse.reduce_max %[[S]]
// CHECK: %[[EQ:.*]] = fuse.compare eq, %[[S]], %{{.*}}
// CHECK: fuse.select %[[EQ]]
// CHECK: fuse.mul %{{.*}}, %[[S]]
// CHECK: fuse.reduce_sum %{{.*}} {axes = array<i64: 1>, keepdims}
// CHECK: %[[DT:.*]] = fuse.transpose %{{.*}} {permutation = array<i64: 1, 0>} : (tensor<4x3xf32>) -> tensor<3x4xf32>
// CHECK: %[[DX:.*]] = fuse.reshape %[[DT]] : (tensor<3x4xf32>) -> tensor<2x6xf32>
// CHECK: return %[[M]], %[[DX]]
func.func @shapes(%x: tensor<2x6xf32>) -> (tensor<f32>, tensor<2x6xf32>) {
  %l, %dx = fuse.value_and_grad @f(%x) {wrt = array<i64: 0>}
      : (tensor<2x6xf32>) -> (tensor<f32>, tensor<2x6xf32>)
  return %l, %dx : tensor<f32>, tensor<2x6xf32>
}

// -----

// A gradient of a gradient: @h's callee takes a gradient itself, which is
// expanded first; its backward ops (full_like, mul, tanh) are then
// differentiated in turn.
func.func @f(%x: tensor<4xf32>) -> tensor<f32> {
  %t = fuse.tanh %x : tensor<4xf32>
  %s = fuse.reduce_sum %t {axes = array<i64: 0>} : (tensor<4xf32>) -> tensor<f32>
  return %s : tensor<f32>
}
func.func @g(%x: tensor<4xf32>) -> tensor<f32> {
  %l, %dx = fuse.value_and_grad @f(%x) {wrt = array<i64: 0>}
      : (tensor<4xf32>) -> (tensor<f32>, tensor<4xf32>)
  %s = fuse.reduce_sum %dx {axes = array<i64: 0>} : (tensor<4xf32>) -> tensor<f32>
  return %s : tensor<f32>
}
// CHECK-LABEL: func @second_order
// CHECK-NOT: fuse.value_and_grad
// CHECK: return
func.func @second_order(%x: tensor<4xf32>) -> (tensor<f32>, tensor<4xf32>) {
  %l, %dx = fuse.value_and_grad @g(%x) {wrt = array<i64: 0>}
      : (tensor<4xf32>) -> (tensor<f32>, tensor<4xf32>)
  return %l, %dx : tensor<f32>, tensor<4xf32>
}
