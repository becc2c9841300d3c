// RUN: fuse-opt %s --fuse-simplify --split-input-file | FileCheck %s

// CSE makes the two operands of the sub identical; the second canonicalize
// then folds x - x for integers.
// CHECK-LABEL: func @cse_then_fold
// CHECK-SAME: (%[[X:.*]]: tensor<4xi32>)
func.func @cse_then_fold(%x: tensor<4xi32>) -> tensor<4xi32> {
  %a = fuse.square %x : tensor<4xi32>
  %b = fuse.square %x : tensor<4xi32>
  %0 = fuse.sub %a, %b : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  // CHECK: %[[Z:.*]] = fuse.constant dense<0> : tensor<4xi32>
  // CHECK-NEXT: return %[[Z]]
  return %0 : tensor<4xi32>
}

// -----

// The seed model is already simple: the pipeline keeps every op.
// CHECK-LABEL: func @seed_mlp
func.func @seed_mlp(%w1: tensor<784x128xf32>, %b1: tensor<128xf32>,
                    %x: tensor<?x784xf32>) -> tensor<?x128xf32> {
  %zero = fuse.constant dense<0.0> : tensor<f32>
  // CHECK: fuse.matmul
  %h = fuse.matmul %x, %w1 : (tensor<?x784xf32>, tensor<784x128xf32>) -> tensor<?x128xf32>
  // CHECK: fuse.add
  %hb = fuse.add %h, %b1 : (tensor<?x128xf32>, tensor<128xf32>) -> tensor<?x128xf32>
  %same = fuse.add %hb, %zero : (tensor<?x128xf32>, tensor<f32>) -> tensor<?x128xf32>
  // CHECK: fuse.relu
  // CHECK-NOT: fuse.add
  %a = fuse.relu %same : tensor<?x128xf32>
  return %a : tensor<?x128xf32>
}
