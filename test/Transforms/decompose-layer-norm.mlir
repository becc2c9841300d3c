// RUN: fuse-opt %s --pass-pipeline='builtin.module(func.func(fuse-decompose-layer-norm))' --split-input-file | FileCheck %s
// RUN: fuse-opt %s --fuse-autodiff --fuse-simplify --split-input-file | FileCheck %s --check-prefix=SIMPLIFY

// layer_norm becomes its statistics over the scale's trailing dims, the
// normalized input, then scale and bias.
// CHECK-LABEL: func @layer_norm
// CHECK-SAME: (%[[X:[^:]*]]: tensor<?x4x8xf32>, %[[S:[^:]*]]: tensor<8xf32>, %[[B:[^:]*]]: tensor<8xf32>)
func.func @layer_norm(%x: tensor<?x4x8xf32>, %s: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<?x4x8xf32> {
  // CHECK: %[[MEAN:.*]] = fuse.reduce_mean %[[X]] {axes = array<i64: 2>, keepdims} : (tensor<?x4x8xf32>) -> tensor<?x4x1xf32>
  // CHECK: %[[C:.*]] = fuse.sub %[[X]], %[[MEAN]]
  // CHECK: %[[SQ:.*]] = fuse.square %[[C]]
  // CHECK: %[[VAR:.*]] = fuse.reduce_mean %[[SQ]] {axes = array<i64: 2>, keepdims}
  // CHECK: %[[EPS:.*]] = fuse.constant dense<9.99999974E-6> : tensor<f32>
  // CHECK: %[[VE:.*]] = fuse.add %[[VAR]], %[[EPS]]
  // CHECK: %[[RSTD:.*]] = fuse.rsqrt %[[VE]]
  // CHECK: %[[XHAT:.*]] = fuse.mul %[[C]], %[[RSTD]]
  // CHECK: %[[SCALED:.*]] = fuse.mul %[[XHAT]], %[[S]]
  // CHECK: %[[Y:.*]] = fuse.add %[[SCALED]], %[[B]]
  // CHECK-NOT: fuse.layer_norm
  // CHECK: return %[[Y]]
  %0 = fuse.layer_norm %x, %s, %b : (tensor<?x4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<?x4x8xf32>
  return %0 : tensor<?x4x8xf32>
}

// -----

// The gradient's statistics are the forward pass's: after the simplify
// pipeline (decomposition, then CSE) each is computed once.
// SIMPLIFY-LABEL: func @vg
// SIMPLIFY-COUNT-2: fuse.reduce_mean %{{.*}} {axes = array<i64: 1>, keepdims} : (tensor<2x8xf32>)
// SIMPLIFY: fuse.rsqrt
// SIMPLIFY-NOT: fuse.rsqrt
// SIMPLIFY-NOT: fuse.layer_norm
func.func @loss(%x: tensor<2x8xf32>, %s: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<f32> {
  %y = fuse.layer_norm %x, %s, %b : (tensor<2x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  %t = fuse.tanh %y : tensor<2x8xf32>
  %l = fuse.reduce_sum %t {axes = array<i64: 0, 1>} : (tensor<2x8xf32>) -> tensor<f32>
  return %l : tensor<f32>
}
func.func @vg(%x: tensor<2x8xf32>, %s: tensor<8xf32>, %b: tensor<8xf32>) -> (tensor<f32>, tensor<2x8xf32>, tensor<8xf32>, tensor<8xf32>) {
  %r:4 = fuse.value_and_grad @loss(%x, %s, %b) {wrt = array<i64: 0, 1, 2>} : (tensor<2x8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<f32>, tensor<2x8xf32>, tensor<8xf32>, tensor<8xf32>)
  return %r#0, %r#1, %r#2, %r#3 : tensor<f32>, tensor<2x8xf32>, tensor<8xf32>, tensor<8xf32>
}
