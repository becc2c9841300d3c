// RUN: fuse-opt %s --cse --split-input-file | FileCheck %s
// fuse ops are Pure: upstream CSE merges identical ones.

// CHECK-LABEL: func @merge_identical
func.func @merge_identical(%x: tensor<?x4xf32>, %w: tensor<4x8xf32>) -> (tensor<?x8xf32>, tensor<?x8xf32>) {
  // CHECK: fuse.matmul
  // CHECK-NOT: fuse.matmul
  %0 = fuse.matmul %x, %w : (tensor<?x4xf32>, tensor<4x8xf32>) -> tensor<?x8xf32>
  %1 = fuse.matmul %x, %w : (tensor<?x4xf32>, tensor<4x8xf32>) -> tensor<?x8xf32>
  // CHECK: fuse.relu
  // CHECK-NOT: fuse.relu
  %2 = fuse.relu %0 : tensor<?x8xf32>
  %3 = fuse.relu %1 : tensor<?x8xf32>
  return %2, %3 : tensor<?x8xf32>, tensor<?x8xf32>
}

// -----

// Different attributes are different computations.
// CHECK-LABEL: func @keep_different_attributes
func.func @keep_different_attributes(%x: tensor<4x4xf32>, %s: tensor<i64>) -> (tensor<4x4xf32>, tensor<4x4xf32>, tensor<4xf32>, tensor<4xf32>) {
  // CHECK: fuse.dropout %{{.*}}, %{{.*}} {rate = 5.000000e-01 : f32, seed = 1 : i64}
  // CHECK: fuse.dropout %{{.*}}, %{{.*}} {rate = 5.000000e-01 : f32, seed = 2 : i64}
  %0 = fuse.dropout %x, %s {rate = 0.5 : f32, seed = 1 : i64} : tensor<4x4xf32>
  %1 = fuse.dropout %x, %s {rate = 0.5 : f32, seed = 2 : i64} : tensor<4x4xf32>
  // CHECK: fuse.reduce_sum %{{.*}} {axes = array<i64: 0>}
  // CHECK: fuse.reduce_sum %{{.*}} {axes = array<i64: 1>}
  %2 = fuse.reduce_sum %x {axes = array<i64: 0>} : (tensor<4x4xf32>) -> tensor<4xf32>
  %3 = fuse.reduce_sum %x {axes = array<i64: 1>} : (tensor<4x4xf32>) -> tensor<4xf32>
  return %0, %1, %2, %3 : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// Unused pure ops are dead code.
// CHECK-LABEL: func @dead_code
func.func @dead_code(%x: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK-NOT: fuse.exp
  %0 = fuse.exp %x : tensor<4xf32>
  // CHECK: return %arg0
  return %x : tensor<4xf32>
}
