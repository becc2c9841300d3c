// RUN: fuse-opt %s --fuse-specialize="function=f arg-types=tensor<4x28x28xf32>,tensor<784x16xf32>,tensor<16xf32>,tensor<4xi32>,tensor<i64>" --split-input-file | FileCheck %s

// Every case specializes a function @f whose five arguments are compatible
// with the arg-types above; the shapes propagate through every op and the
// function's result types follow.

// The seed model's shape: the reshape's one '?' takes the remaining element
// count, the batch size flows through matmul, bias add, relu and dropout.
// CHECK-LABEL: func @f
// CHECK-SAME: (%{{.*}}: tensor<4x28x28xf32>, %{{.*}}: tensor<784x16xf32>, %{{.*}}: tensor<16xf32>, %{{.*}}: tensor<4xi32>, %{{.*}}: tensor<i64>)
// CHECK-SAME: -> (tensor<f32>, tensor<4x16xf32>, tensor<16xf32>, tensor<4x1xf32>, tensor<16x4xf32>, tensor<3x2x16xf32>)
func.func @f(%x: tensor<?x28x28xf32>, %w: tensor<784x?xf32>, %b: tensor<?xf32>,
             %y: tensor<?xi32>, %step: tensor<i64>)
    -> (tensor<f32>, tensor<?x?xf32>, tensor<?xf32>, tensor<?x1xf32>, tensor<?x?xf32>, tensor<3x2x?xf32>) {
  // CHECK: fuse.reshape %{{.*}} : (tensor<4x28x28xf32>) -> tensor<4x784xf32>
  %flat = fuse.reshape %x : (tensor<?x28x28xf32>) -> tensor<?x784xf32>
  // CHECK: fuse.matmul %{{.*}}, %{{.*}} : (tensor<4x784xf32>, tensor<784x16xf32>) -> tensor<4x16xf32>
  %h = fuse.matmul %flat, %w : (tensor<?x784xf32>, tensor<784x?xf32>) -> tensor<?x?xf32>
  // CHECK: fuse.add %{{.*}}, %{{.*}} : (tensor<4x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  %hb = fuse.add %h, %b : (tensor<?x?xf32>, tensor<?xf32>) -> tensor<?x?xf32>
  // CHECK: fuse.relu %{{.*}} : tensor<4x16xf32>
  %a = fuse.relu %hb : tensor<?x?xf32>
  // CHECK: fuse.dropout %{{.*}}, %{{.*}} {rate = 5.000000e-01 : f32} : tensor<4x16xf32>
  %d = fuse.dropout %a, %step {rate = 0.5 : f32} : tensor<?x?xf32>
  // CHECK: fuse.softmax_cross_entropy %{{.*}}, %{{.*}} : (tensor<4x16xf32>, tensor<4xi32>) -> tensor<f32>
  %l = fuse.softmax_cross_entropy %d, %y : (tensor<?x?xf32>, tensor<?xi32>) -> tensor<f32>
  // CHECK: fuse.reduce_sum %{{.*}} {axes = array<i64: 0>} : (tensor<4x16xf32>) -> tensor<16xf32>
  %s = fuse.reduce_sum %d {axes = array<i64: 0>} : (tensor<?x?xf32>) -> tensor<?xf32>
  // CHECK: fuse.reduce_mean %{{.*}} {axes = array<i64: 1>, keepdims} : (tensor<4x16xf32>) -> tensor<4x1xf32>
  %m = fuse.reduce_mean %d {axes = array<i64: 1>, keepdims} : (tensor<?x?xf32>) -> tensor<?x1xf32>
  // CHECK: fuse.transpose %{{.*}} {permutation = array<i64: 1, 0>} : (tensor<4x16xf32>) -> tensor<16x4xf32>
  %t = fuse.transpose %d {permutation = array<i64: 1, 0>} : (tensor<?x?xf32>) -> tensor<?x?xf32>
  // A dynamic broadcast_to dim takes the input's size; static ones stay.
  // CHECK: fuse.broadcast_to %{{.*}} : (tensor<16xf32>) -> tensor<3x2x16xf32>
  %bc = fuse.broadcast_to %b : (tensor<?xf32>) -> tensor<3x2x?xf32>
  // CHECK: return %{{.*}} : tensor<f32>, tensor<4x16xf32>, tensor<16xf32>, tensor<4x1xf32>, tensor<16x4xf32>, tensor<3x2x16xf32>
  // CHECK-NOT: ?x
  return %l, %d, %s, %m, %t, %bc : tensor<f32>, tensor<?x?xf32>, tensor<?xf32>, tensor<?x1xf32>, tensor<?x?xf32>, tensor<3x2x?xf32>
}

// -----

// Fully dynamic declared shapes; reshapes resolve their one '?' wherever it is.
// CHECK-LABEL: func @f
// CHECK-SAME: -> (tensor<3136xf32>, tensor<2x1568xf32>, tensor<16x28x28xf32>, tensor<4x28x28xf32>, tensor<4x28x28xf32>)
func.func @f(%x: tensor<?x?x?xf32>, %w: tensor<?x?xf32>, %b: tensor<?xf32>,
             %y: tensor<?xi32>, %step: tensor<i64>)
    -> (tensor<?xf32>, tensor<2x?xf32>, tensor<?x28x28xf32>, tensor<?x?x?xf32>, tensor<?x?x?xf32>) {
  // CHECK: fuse.reshape %{{.*}} : (tensor<4x28x28xf32>) -> tensor<3136xf32>
  %0 = fuse.reshape %x : (tensor<?x?x?xf32>) -> tensor<?xf32>
  // CHECK: fuse.reshape %{{.*}} : (tensor<4x28x28xf32>) -> tensor<2x1568xf32>
  %1 = fuse.reshape %x : (tensor<?x?x?xf32>) -> tensor<2x?xf32>
  // CHECK: fuse.reshape %{{.*}} : (tensor<784x16xf32>) -> tensor<16x28x28xf32>
  %2 = fuse.reshape %w : (tensor<?x?xf32>) -> tensor<?x28x28xf32>
  // CHECK: fuse.batch_matmul %{{.*}}, %{{.*}} {transpose_rhs} : (tensor<4x28x28xf32>, tensor<4x28x28xf32>) -> tensor<4x28x28xf32>
  %3 = fuse.batch_matmul %x, %x {transpose_rhs} : (tensor<?x?x?xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  // CHECK: fuse.softmax %{{.*}} : tensor<4x28x28xf32>
  %4 = fuse.softmax %3 : tensor<?x?x?xf32>
  return %0, %1, %2, %3, %4 : tensor<?xf32>, tensor<2x?xf32>, tensor<?x28x28xf32>, tensor<?x?x?xf32>, tensor<?x?x?xf32>
}

// -----

// Convolution and pooling: only the batch dim was dynamic.
// CHECK-LABEL: func @f
// CHECK-SAME: -> (tensor<4x28x28x2xf32>, tensor<4x13x13x2xf32>, tensor<4x14x14x2xf32>, tensor<4x14x14x2xf32>)
func.func @f(%x: tensor<?x28x28xf32>, %w: tensor<784x?xf32>, %b: tensor<?xf32>,
             %y: tensor<?xi32>, %step: tensor<i64>)
    -> (tensor<?x28x28x2xf32>, tensor<?x13x13x2xf32>, tensor<?x14x14x2xf32>, tensor<?x14x14x2xf32>) {
  // Constants keep their type.
  // CHECK: %[[K:.*]] = fuse.constant dense<1.000000e+00> : tensor<3x3x1x2xf32>
  %k = fuse.constant dense<1.0> : tensor<3x3x1x2xf32>
  // CHECK: fuse.reshape %{{.*}} : (tensor<4x28x28xf32>) -> tensor<4x28x28x1xf32>
  %img = fuse.reshape %x : (tensor<?x28x28xf32>) -> tensor<?x28x28x1xf32>
  // CHECK: fuse.conv2d %{{.*}}, %[[K]] {padding = array<i64: 1, 1, 1, 1>} : (tensor<4x28x28x1xf32>, tensor<3x3x1x2xf32>) -> tensor<4x28x28x2xf32>
  %c = fuse.conv2d %img, %k {padding = array<i64: 1, 1, 1, 1>} : (tensor<?x28x28x1xf32>, tensor<3x3x1x2xf32>) -> tensor<?x28x28x2xf32>
  // CHECK: fuse.conv2d %{{.*}}, %[[K]] {strides = array<i64: 2, 2>} : (tensor<4x28x28x1xf32>, tensor<3x3x1x2xf32>) -> tensor<4x13x13x2xf32>
  %c2 = fuse.conv2d %img, %k {strides = array<i64: 2, 2>} : (tensor<?x28x28x1xf32>, tensor<3x3x1x2xf32>) -> tensor<?x13x13x2xf32>
  // CHECK: fuse.max_pool2d %{{.*}} {window = array<i64: 2, 2>} : (tensor<4x28x28x2xf32>) -> tensor<4x14x14x2xf32>
  %p = fuse.max_pool2d %c {window = array<i64: 2, 2>} : (tensor<?x28x28x2xf32>) -> tensor<?x14x14x2xf32>
  // CHECK: fuse.avg_pool2d %{{.*}} {window = array<i64: 2, 2>} : (tensor<4x28x28x2xf32>) -> tensor<4x14x14x2xf32>
  %q = fuse.avg_pool2d %c {window = array<i64: 2, 2>} : (tensor<?x28x28x2xf32>) -> tensor<?x14x14x2xf32>
  return %c, %c2, %p, %q : tensor<?x28x28x2xf32>, tensor<?x13x13x2xf32>, tensor<?x14x14x2xf32>, tensor<?x14x14x2xf32>
}

// -----

// Element-wise broadcasting, compare/select, matmul transposes, losses and
// max-reduction with keepdims.
// CHECK-LABEL: func @f
// CHECK-SAME: -> (tensor<4x16xf32>, tensor<16x16xf32>, tensor<1x16xf32>, tensor<f32>, tensor<4x16xf32>, tensor<f32>)
func.func @f(%x: tensor<?x28x28xf32>, %w: tensor<?x?xf32>, %b: tensor<?xf32>,
             %y: tensor<?xi32>, %step: tensor<i64>)
    -> (tensor<?x?xf32>, tensor<?x?xf32>, tensor<1x?xf32>, tensor<f32>, tensor<?x?xf32>, tensor<f32>) {
  %zero = fuse.constant dense<0.0> : tensor<f32>
  // CHECK: %[[FLAT:.*]] = fuse.reshape %{{.*}} : (tensor<4x28x28xf32>) -> tensor<4x784xf32>
  %flat = fuse.reshape %x : (tensor<?x28x28xf32>) -> tensor<?x784xf32>
  // CHECK: %[[H:.*]] = fuse.matmul %[[FLAT]], %{{.*}} : (tensor<4x784xf32>, tensor<784x16xf32>) -> tensor<4x16xf32>
  %h = fuse.matmul %flat, %w : (tensor<?x784xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  // CHECK: fuse.matmul %{{.*}}, %{{.*}} {transpose_lhs} : (tensor<784x16xf32>, tensor<784x16xf32>) -> tensor<16x16xf32>
  %g = fuse.matmul %w, %w {transpose_lhs} : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  // CHECK: fuse.compare gt, %[[H]], %{{.*}} : (tensor<4x16xf32>, tensor<f32>) -> tensor<4x16xi1>
  %pos = fuse.compare gt, %h, %zero : (tensor<?x?xf32>, tensor<f32>) -> tensor<?x?xi1>
  // CHECK: fuse.select %{{.*}}, %[[H]], %{{.*}} : (tensor<4x16xi1>, tensor<4x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  %sel = fuse.select %pos, %h, %b : (tensor<?x?xi1>, tensor<?x?xf32>, tensor<?xf32>) -> tensor<?x?xf32>
  // CHECK: fuse.reduce_max %{{.*}} {axes = array<i64: 0>, keepdims} : (tensor<4x16xf32>) -> tensor<1x16xf32>
  %mx = fuse.reduce_max %sel {axes = array<i64: 0>, keepdims} : (tensor<?x?xf32>) -> tensor<1x?xf32>
  // CHECK: fuse.mse_loss %{{.*}}, %{{.*}} : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<f32>
  %mse = fuse.mse_loss %sel, %h : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<f32>
  // CHECK: fuse.log_softmax %{{.*}} : tensor<4x16xf32>
  %ls = fuse.log_softmax %sel : tensor<?x?xf32>
  // CHECK: fuse.reduce_sum %{{.*}} {axes = array<i64: 0, 1>} : (tensor<4x16xf32>) -> tensor<f32>
  %tot = fuse.reduce_sum %ls {axes = array<i64: 0, 1>} : (tensor<?x?xf32>) -> tensor<f32>
  return %sel, %g, %mx, %mse, %ls, %tot : tensor<?x?xf32>, tensor<?x?xf32>, tensor<1x?xf32>, tensor<f32>, tensor<?x?xf32>, tensor<f32>
}

// -----

// Only the named function changes; a declared static dim is kept.
// CHECK-LABEL: func @g
// CHECK-SAME: (%{{.*}}: tensor<?x28x28xf32>) -> tensor<?x28x28xf32>
// CHECK: fuse.exp %{{.*}} : tensor<?x28x28xf32>
func.func @g(%x: tensor<?x28x28xf32>) -> tensor<?x28x28xf32> {
  %0 = fuse.exp %x : tensor<?x28x28xf32>
  return %0 : tensor<?x28x28xf32>
}
// CHECK-LABEL: func @f
// CHECK-SAME: (%{{.*}}: tensor<4x28x28xf32>, %{{.*}}: tensor<784x16xf32>, %{{.*}}: tensor<16xf32>, %{{.*}}: tensor<4xi32>, %{{.*}}: tensor<i64>) -> tensor<4x28x28xf32>
// CHECK: fuse.exp %{{.*}} : tensor<4x28x28xf32>
func.func @f(%x: tensor<4x?x28xf32>, %w: tensor<784x16xf32>, %b: tensor<16xf32>,
             %y: tensor<4xi32>, %step: tensor<i64>) -> tensor<4x?x28xf32> {
  %0 = fuse.exp %x : tensor<4x?x28xf32>
  return %0 : tensor<4x?x28xf32>
}
// CHECK-LABEL: func @h
// CHECK-SAME: (%{{.*}}: tensor<?xf32>) -> tensor<?xf32>
func.func @h(%x: tensor<?xf32>) -> tensor<?xf32> {
  return %x : tensor<?xf32>
}

// -----

// Already static: nothing to do, the function is unchanged.
// CHECK-LABEL: func @f
// CHECK-SAME: (%{{.*}}: tensor<4x28x28xf32>, %{{.*}}: tensor<784x16xf32>, %{{.*}}: tensor<16xf32>, %{{.*}}: tensor<4xi32>, %[[S:.*]]: tensor<i64>) -> tensor<i64>
// CHECK-NEXT: return %[[S]] : tensor<i64>
func.func @f(%x: tensor<4x28x28xf32>, %w: tensor<784x16xf32>, %b: tensor<16xf32>,
             %y: tensor<4xi32>, %step: tensor<i64>) -> tensor<i64> {
  return %step : tensor<i64>
}
