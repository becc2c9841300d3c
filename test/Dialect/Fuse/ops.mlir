// RUN: fuse-opt %s | fuse-opt | FileCheck %s
// RUN: fuse-opt %s --mlir-print-op-generic | fuse-opt | FileCheck %s
// Every op round-trips through the pretty and the generic form.

// CHECK-LABEL: func @constant
func.func @constant() -> (tensor<2xf32>, tensor<3xi32>) {
  // CHECK: fuse.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
  %0 = fuse.constant dense<[1.0, 2.0]> : tensor<2xf32>
  // CHECK: fuse.constant dense<7> : tensor<3xi32>
  %1 = fuse.constant dense<7> : tensor<3xi32>
  return %0, %1 : tensor<2xf32>, tensor<3xi32>
}

// CHECK-LABEL: func @unary
func.func @unary(%x: tensor<?x4xf32>, %i: tensor<4xi32>, %h: tensor<4xbf16>) {
  // CHECK: fuse.neg %{{.*}} : tensor<?x4xf32>
  %0 = fuse.neg %x : tensor<?x4xf32>
  // CHECK: fuse.abs %{{.*}} : tensor<4xi32>
  %1 = fuse.abs %i : tensor<4xi32>
  // CHECK: fuse.square %{{.*}} : tensor<?x4xf32>
  %2 = fuse.square %x : tensor<?x4xf32>
  // CHECK: fuse.relu %{{.*}} : tensor<?x4xf32>
  %3 = fuse.relu %x : tensor<?x4xf32>
  // CHECK: fuse.exp %{{.*}} : tensor<?x4xf32>
  %4 = fuse.exp %x : tensor<?x4xf32>
  // CHECK: fuse.log %{{.*}} : tensor<?x4xf32>
  %5 = fuse.log %x : tensor<?x4xf32>
  // CHECK: fuse.sqrt %{{.*}} : tensor<?x4xf32>
  %6 = fuse.sqrt %x : tensor<?x4xf32>
  // CHECK: fuse.rsqrt %{{.*}} : tensor<?x4xf32>
  %7 = fuse.rsqrt %x : tensor<?x4xf32>
  // CHECK: fuse.tanh %{{.*}} : tensor<4xbf16>
  %8 = fuse.tanh %h : tensor<4xbf16>
  // CHECK: fuse.sigmoid %{{.*}} : tensor<?x4xf32>
  %9 = fuse.sigmoid %x : tensor<?x4xf32>
  return
}

// CHECK-LABEL: func @binary
func.func @binary(%x: tensor<?x4xf32>, %b: tensor<4xf32>, %s: tensor<f32>,
                  %i: tensor<3x1xi32>, %j: tensor<5xi32>) {
  // CHECK: fuse.add %{{.*}}, %{{.*}} : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  %0 = fuse.add %x, %b : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  // CHECK: fuse.sub %{{.*}}, %{{.*}} : (tensor<f32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  %1 = fuse.sub %s, %x : (tensor<f32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  // CHECK: fuse.mul %{{.*}}, %{{.*}} : (tensor<3x1xi32>, tensor<5xi32>) -> tensor<3x5xi32>
  %2 = fuse.mul %i, %j : (tensor<3x1xi32>, tensor<5xi32>) -> tensor<3x5xi32>
  // CHECK: fuse.div
  %3 = fuse.div %x, %s : (tensor<?x4xf32>, tensor<f32>) -> tensor<?x4xf32>
  // CHECK: fuse.max
  %4 = fuse.max %x, %b : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  // CHECK: fuse.min
  %5 = fuse.min %x, %b : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  // CHECK: fuse.pow
  %6 = fuse.pow %x, %s : (tensor<?x4xf32>, tensor<f32>) -> tensor<?x4xf32>
  // CHECK: %[[M:.*]] = fuse.compare gt, %{{.*}}, %{{.*}} : (tensor<?x4xf32>, tensor<f32>) -> tensor<?x4xi1>
  %m = fuse.compare gt, %x, %s : (tensor<?x4xf32>, tensor<f32>) -> tensor<?x4xi1>
  // CHECK: fuse.select %[[M]], %{{.*}}, %{{.*}} : (tensor<?x4xi1>, tensor<?x4xf32>, tensor<f32>) -> tensor<?x4xf32>
  %7 = fuse.select %m, %x, %s : (tensor<?x4xi1>, tensor<?x4xf32>, tensor<f32>) -> tensor<?x4xf32>
  return
}

// CHECK-LABEL: func @shape
func.func @shape(%x: tensor<?x28x28xf32>, %y: tensor<3x4xf32>, %z: tensor<1x4xf32>) {
  // CHECK: fuse.reshape %{{.*}} : (tensor<?x28x28xf32>) -> tensor<?x784xf32>
  %0 = fuse.reshape %x : (tensor<?x28x28xf32>) -> tensor<?x784xf32>
  // CHECK: fuse.transpose %{{.*}} {permutation = array<i64: 1, 0>} : (tensor<3x4xf32>) -> tensor<4x3xf32>
  %1 = fuse.transpose %y {permutation = array<i64: 1, 0>} : (tensor<3x4xf32>) -> tensor<4x3xf32>
  // CHECK: fuse.broadcast_to %{{.*}} : (tensor<1x4xf32>) -> tensor<2x3x4xf32>
  %2 = fuse.broadcast_to %z : (tensor<1x4xf32>) -> tensor<2x3x4xf32>
  return
}

// CHECK-LABEL: func @contraction
func.func @contraction(%x: tensor<?x784xf32>, %w: tensor<784x128xf32>,
                       %dy: tensor<?x128xf32>, %a: tensor<8x3x5xf32>,
                       %b: tensor<8x7x5xf32>) {
  // CHECK: fuse.matmul %{{.*}}, %{{.*}} : (tensor<?x784xf32>, tensor<784x128xf32>) -> tensor<?x128xf32>
  %0 = fuse.matmul %x, %w : (tensor<?x784xf32>, tensor<784x128xf32>) -> tensor<?x128xf32>
  // CHECK: fuse.matmul %{{.*}}, %{{.*}} {transpose_lhs} : (tensor<?x784xf32>, tensor<?x128xf32>) -> tensor<784x128xf32>
  %1 = fuse.matmul %x, %dy {transpose_lhs} : (tensor<?x784xf32>, tensor<?x128xf32>) -> tensor<784x128xf32>
  // CHECK: fuse.matmul %{{.*}}, %{{.*}} {transpose_rhs} : (tensor<?x128xf32>, tensor<784x128xf32>) -> tensor<?x784xf32>
  %2 = fuse.matmul %dy, %w {transpose_rhs} : (tensor<?x128xf32>, tensor<784x128xf32>) -> tensor<?x784xf32>
  // CHECK: fuse.batch_matmul %{{.*}}, %{{.*}} {transpose_rhs} : (tensor<8x3x5xf32>, tensor<8x7x5xf32>) -> tensor<8x3x7xf32>
  %3 = fuse.batch_matmul %a, %b {transpose_rhs} : (tensor<8x3x5xf32>, tensor<8x7x5xf32>) -> tensor<8x3x7xf32>
  return
}

// Mixed precision: bf16 (or f16) operands summed into f32.
// CHECK-LABEL: func @mixed_precision
func.func @mixed_precision(%x: tensor<?x784xbf16>, %w: tensor<784x128xbf16>,
                           %a: tensor<8x3x5xf16>, %b: tensor<8x5x7xf16>,
                           %i: tensor<?x28x28x1xbf16>, %k: tensor<3x3x1x32xbf16>) {
  // CHECK: fuse.matmul %{{.*}}, %{{.*}} : (tensor<?x784xbf16>, tensor<784x128xbf16>) -> tensor<?x128xf32>
  %0 = fuse.matmul %x, %w : (tensor<?x784xbf16>, tensor<784x128xbf16>) -> tensor<?x128xf32>
  // CHECK: fuse.batch_matmul %{{.*}}, %{{.*}} : (tensor<8x3x5xf16>, tensor<8x5x7xf16>) -> tensor<8x3x7xf32>
  %1 = fuse.batch_matmul %a, %b : (tensor<8x3x5xf16>, tensor<8x5x7xf16>) -> tensor<8x3x7xf32>
  // CHECK: fuse.conv2d %{{.*}}, %{{.*}} : (tensor<?x28x28x1xbf16>, tensor<3x3x1x32xbf16>) -> tensor<?x26x26x32xf32>
  %2 = fuse.conv2d %i, %k : (tensor<?x28x28x1xbf16>, tensor<3x3x1x32xbf16>) -> tensor<?x26x26x32xf32>
  return
}

// CHECK-LABEL: func @conv_pool
func.func @conv_pool(%x: tensor<?x28x28x1xf32>, %k: tensor<3x3x1x32xf32>) {
  // CHECK: fuse.conv2d %{{.*}}, %{{.*}} : (tensor<?x28x28x1xf32>, tensor<3x3x1x32xf32>) -> tensor<?x26x26x32xf32>
  %0 = fuse.conv2d %x, %k : (tensor<?x28x28x1xf32>, tensor<3x3x1x32xf32>) -> tensor<?x26x26x32xf32>
  // CHECK: fuse.conv2d %{{.*}}, %{{.*}} {padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<?x28x28x1xf32>, tensor<3x3x1x32xf32>) -> tensor<?x14x14x32xf32>
  %1 = fuse.conv2d %x, %k {padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<?x28x28x1xf32>, tensor<3x3x1x32xf32>) -> tensor<?x14x14x32xf32>
  // CHECK: fuse.conv2d %{{.*}}, %{{.*}} {dilations = array<i64: 2, 2>} : (tensor<?x28x28x1xf32>, tensor<3x3x1x32xf32>) -> tensor<?x24x24x32xf32>
  %2 = fuse.conv2d %x, %k {dilations = array<i64: 2, 2>} : (tensor<?x28x28x1xf32>, tensor<3x3x1x32xf32>) -> tensor<?x24x24x32xf32>
  // CHECK: fuse.max_pool2d %{{.*}} {window = array<i64: 2, 2>} : (tensor<?x26x26x32xf32>) -> tensor<?x13x13x32xf32>
  %3 = fuse.max_pool2d %0 {window = array<i64: 2, 2>} : (tensor<?x26x26x32xf32>) -> tensor<?x13x13x32xf32>
  // CHECK: fuse.avg_pool2d %{{.*}} {padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>, window = array<i64: 3, 3>} : (tensor<?x26x26x32xf32>) -> tensor<?x26x26x32xf32>
  %4 = fuse.avg_pool2d %0 {window = array<i64: 3, 3>, strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>} : (tensor<?x26x26x32xf32>) -> tensor<?x26x26x32xf32>
  return
}

// CHECK-LABEL: func @reduce
func.func @reduce(%x: tensor<?x10xf32>, %i: tensor<4x5xi64>) {
  // CHECK: fuse.reduce_sum %{{.*}} {axes = array<i64: 0>} : (tensor<?x10xf32>) -> tensor<10xf32>
  %0 = fuse.reduce_sum %x {axes = array<i64: 0>} : (tensor<?x10xf32>) -> tensor<10xf32>
  // CHECK: fuse.reduce_mean %{{.*}} {axes = array<i64: 1>, keepdims} : (tensor<?x10xf32>) -> tensor<?x1xf32>
  %1 = fuse.reduce_mean %x {axes = array<i64: 1>, keepdims} : (tensor<?x10xf32>) -> tensor<?x1xf32>
  // CHECK: fuse.reduce_max %{{.*}} {axes = array<i64: 0, 1>} : (tensor<4x5xi64>) -> tensor<i64>
  %2 = fuse.reduce_max %i {axes = array<i64: 0, 1>} : (tensor<4x5xi64>) -> tensor<i64>
  return
}

// CHECK-LABEL: func @nn
func.func @nn(%x: tensor<?x10xf32>, %y: tensor<?xi32>, %t: tensor<?x10xf32>,
              %step: tensor<i64>) {
  // CHECK: fuse.softmax %{{.*}} : tensor<?x10xf32>
  %0 = fuse.softmax %x : tensor<?x10xf32>
  // CHECK: fuse.log_softmax %{{.*}} {axis = 0 : i64} : tensor<?x10xf32>
  %1 = fuse.log_softmax %x {axis = 0} : tensor<?x10xf32>
  // CHECK: fuse.softmax_cross_entropy %{{.*}}, %{{.*}} : (tensor<?x10xf32>, tensor<?xi32>) -> tensor<f32>
  %2 = fuse.softmax_cross_entropy %x, %y : (tensor<?x10xf32>, tensor<?xi32>) -> tensor<f32>
  // CHECK: fuse.mse_loss %{{.*}}, %{{.*}} : (tensor<?x10xf32>, tensor<?x10xf32>) -> tensor<f32>
  %3 = fuse.mse_loss %x, %t : (tensor<?x10xf32>, tensor<?x10xf32>) -> tensor<f32>
  // CHECK: fuse.dropout %{{.*}}, %{{.*}} {rate = 2.000000e-01 : f32, seed = 7 : i64} : tensor<?x10xf32>
  %4 = fuse.dropout %x, %step {rate = 0.2 : f32, seed = 7 : i64} : tensor<?x10xf32>
  // CHECK: fuse.dropout %{{.*}}, %{{.*}} offset %{{.*}} {rate = 2.000000e-01 : f32} : tensor<?x10xf32>
  %offset_dropout = fuse.dropout %x, %step offset %step {rate = 0.2 : f32} : tensor<?x10xf32>
  return
}

// CHECK-LABEL: func @backward_ops
func.func @backward_ops(%x: tensor<?x10xf32>, %y: tensor<?xi32>, %g: tensor<f32>) {
  // CHECK: fuse.full_like %{{.*}} {value = 1.000000e+00 : f64} : tensor<?x10xf32>
  %0 = fuse.full_like %x {value = 1.0 : f64} : tensor<?x10xf32>
  // CHECK: fuse.expand_dims %{{.*}} {axes = array<i64: 0, 2>} : (tensor<?x10xf32>) -> tensor<1x?x1x10xf32>
  %1 = fuse.expand_dims %x {axes = array<i64: 0, 2>} : (tensor<?x10xf32>) -> tensor<1x?x1x10xf32>
  // CHECK: fuse.softmax_cross_entropy_grad %{{.*}}, %{{.*}}, %{{.*}} : (tensor<?x10xf32>, tensor<?xi32>, tensor<f32>) -> tensor<?x10xf32>
  %2 = fuse.softmax_cross_entropy_grad %x, %y, %g : (tensor<?x10xf32>, tensor<?xi32>, tensor<f32>) -> tensor<?x10xf32>
  return
}

func.func @scalar_loss(%w: tensor<3xf32>, %x: tensor<?x3xf32>) -> tensor<f32> {
  %y = fuse.mul %x, %w : (tensor<?x3xf32>, tensor<3xf32>) -> tensor<?x3xf32>
  %s = fuse.reduce_sum %y {axes = array<i64: 0, 1>} : (tensor<?x3xf32>) -> tensor<f32>
  return %s : tensor<f32>
}

// CHECK-LABEL: func @value_and_grad
func.func @value_and_grad(%w: tensor<3xf32>, %x: tensor<?x3xf32>) -> (tensor<f32>, tensor<3xf32>) {
  // CHECK: fuse.value_and_grad @scalar_loss(%{{.*}}, %{{.*}}) {wrt = array<i64: 0>} : (tensor<3xf32>, tensor<?x3xf32>) -> (tensor<f32>, tensor<3xf32>)
  %l, %dw = fuse.value_and_grad @scalar_loss(%w, %x) {wrt = array<i64: 0>}
      : (tensor<3xf32>, tensor<?x3xf32>) -> (tensor<f32>, tensor<3xf32>)
  return %l, %dw : tensor<f32>, tensor<3xf32>
}

// CHECK-LABEL: func @window_grads
func.func @window_grads(%x: tensor<1x8x8x2xf32>, %k: tensor<3x3x2x4xf32>, %g: tensor<1x4x4x4xf32>, %p: tensor<1x4x4x2xf32>) {
  // CHECK: fuse.conv2d_input_grad
  %0 = fuse.conv2d_input_grad %g, %k, %x {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : (tensor<1x4x4x4xf32>, tensor<3x3x2x4xf32>, tensor<1x8x8x2xf32>) -> tensor<1x8x8x2xf32>
  // CHECK: fuse.conv2d_filter_grad
  %1 = fuse.conv2d_filter_grad %x, %g, %k {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : (tensor<1x8x8x2xf32>, tensor<1x4x4x4xf32>, tensor<3x3x2x4xf32>) -> tensor<3x3x2x4xf32>
  // CHECK: fuse.max_pool2d_indices
  %i = fuse.max_pool2d_indices %x {window = array<i64: 2, 2>} : (tensor<1x8x8x2xf32>) -> tensor<1x4x4x2xi8>
  // CHECK: fuse.max_pool2d_grad
  %2 = fuse.max_pool2d_grad %p, %i, %x {window = array<i64: 2, 2>} : (tensor<1x4x4x2xf32>, tensor<1x4x4x2xi8>, tensor<1x8x8x2xf32>) -> tensor<1x8x8x2xf32>
  // CHECK: fuse.avg_pool2d_grad
  %3 = fuse.avg_pool2d_grad %p, %x {window = array<i64: 2, 2>} : (tensor<1x4x4x2xf32>, tensor<1x8x8x2xf32>) -> tensor<1x8x8x2xf32>
  return
}

// The bf16 policy's convolution gradients: bf16 factors, f32 results.
// CHECK-LABEL: func @mixed_window_grads
func.func @mixed_window_grads(%x: tensor<1x8x8x2xf32>, %k: tensor<3x3x2x4xf32>, %xb: tensor<1x8x8x2xbf16>, %kb: tensor<3x3x2x4xbf16>, %gb: tensor<1x4x4x4xbf16>) {
  // CHECK: fuse.conv2d_input_grad %{{.*}}, %{{.*}}, %{{.*}} {{.*}} : (tensor<1x4x4x4xbf16>, tensor<3x3x2x4xbf16>, tensor<1x8x8x2xf32>) -> tensor<1x8x8x2xf32>
  %0 = fuse.conv2d_input_grad %gb, %kb, %x {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : (tensor<1x4x4x4xbf16>, tensor<3x3x2x4xbf16>, tensor<1x8x8x2xf32>) -> tensor<1x8x8x2xf32>
  // CHECK: fuse.conv2d_filter_grad %{{.*}}, %{{.*}}, %{{.*}} {{.*}} : (tensor<1x8x8x2xbf16>, tensor<1x4x4x4xbf16>, tensor<3x3x2x4xf32>) -> tensor<3x3x2x4xf32>
  %1 = fuse.conv2d_filter_grad %xb, %gb, %k {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : (tensor<1x8x8x2xbf16>, tensor<1x4x4x4xbf16>, tensor<3x3x2x4xf32>) -> tensor<3x3x2x4xf32>
  return
}

// CHECK-LABEL: func @optimizers
func.func @optimizers(%lr: tensor<f32>, %s: tensor<i64>, %p: tensor<4xf32>, %q: tensor<2x3xf32>,
                      %g: tensor<4xf32>, %h: tensor<2x3xf32>) {
  // CHECK: fuse.sgd %{{.*}}, %{{.*}} params(%{{.*}} : tensor<4xf32>) grads(%{{.*}} : tensor<4xf32>) states() -> tensor<4xf32>
  %0 = fuse.sgd %lr, %s params(%p : tensor<4xf32>) grads(%g : tensor<4xf32>) states() -> tensor<4xf32>
  // CHECK: fuse.adam %{{.*}}, %{{.*}} params(%{{.*}}, %{{.*}} : tensor<4xf32>, tensor<2x3xf32>) grads(%{{.*}}, %{{.*}} : tensor<4xf32>, tensor<2x3xf32>) states(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : tensor<4xf32>, tensor<2x3xf32>, tensor<4xf32>, tensor<2x3xf32>) {decoupled, weight_decay = 1.000000e-02 : f64}
  %1:6 = fuse.adam %lr, %s params(%p, %q : tensor<4xf32>, tensor<2x3xf32>) grads(%g, %h : tensor<4xf32>, tensor<2x3xf32>)
      states(%p, %q, %p, %q : tensor<4xf32>, tensor<2x3xf32>, tensor<4xf32>, tensor<2x3xf32>) {decoupled, weight_decay = 0.01 : f64}
      -> tensor<4xf32>, tensor<2x3xf32>, tensor<4xf32>, tensor<2x3xf32>, tensor<4xf32>, tensor<2x3xf32>
  // CHECK: fuse.adagrad %{{.*}}, %{{.*}} params(%{{.*}} : tensor<4xf32>) grads(%{{.*}} : tensor<4xf32>) states(%{{.*}} : tensor<4xf32>) {lr_decay = 1.000000e-02 : f64}
  %2:2 = fuse.adagrad %lr, %s params(%p : tensor<4xf32>) grads(%g : tensor<4xf32>) states(%p : tensor<4xf32>) {lr_decay = 0.01 : f64} -> tensor<4xf32>, tensor<4xf32>
  // CHECK: fuse.rmsprop %{{.*}}, %{{.*}} params(%{{.*}} : tensor<4xf32>) grads(%{{.*}} : tensor<4xf32>) states(%{{.*}}, %{{.*}} : tensor<4xf32>, tensor<4xf32>) {centered}
  %3:3 = fuse.rmsprop %lr, %s params(%p : tensor<4xf32>) grads(%g : tensor<4xf32>) states(%p, %p : tensor<4xf32>, tensor<4xf32>) {centered} -> tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
  // CHECK: fuse.lamb %{{.*}}, %{{.*}} params(%{{.*}} : tensor<4xf32>) grads(%{{.*}} : tensor<4xf32>) states(%{{.*}}, %{{.*}} : tensor<4xf32>, tensor<4xf32>) {weight_decay = 1.000000e-02 : f64}
  %4:3 = fuse.lamb %lr, %s params(%p : tensor<4xf32>) grads(%g : tensor<4xf32>) states(%p, %p : tensor<4xf32>, tensor<4xf32>) {weight_decay = 0.01 : f64} -> tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
  return
}

// Master weights: the bf16 copy of the second parameter, a last result.
// CHECK-LABEL: func @optimizer_copies
// CHECK: fuse.sgd %{{.*}}, %{{.*}} params(%{{.*}}, %{{.*}} : tensor<4xf32>, tensor<2x3xf32>) grads(%{{.*}}, %{{.*}} : tensor<4xf32>, tensor<2x3xf32>) states() copies(%{{.*}} : tensor<2x3xbf16>) {copy_params = array<i64: 1>} -> tensor<4xf32>, tensor<2x3xf32>, tensor<2x3xbf16>
func.func @optimizer_copies(%lr: tensor<f32>, %s: tensor<i64>, %p: tensor<4xf32>, %q: tensor<2x3xf32>,
                            %g: tensor<4xf32>, %h: tensor<2x3xf32>, %c: tensor<2x3xbf16>) {
  %0:3 = fuse.sgd %lr, %s params(%p, %q : tensor<4xf32>, tensor<2x3xf32>) grads(%g, %h : tensor<4xf32>, tensor<2x3xf32>) states() copies(%c : tensor<2x3xbf16>) {copy_params = array<i64: 1>} -> tensor<4xf32>, tensor<2x3xf32>, tensor<2x3xbf16>
  return
}

// IPEX's split layout: the halves of an f32 weight, their join, and an
// update reading and writing the pair (split_copies: the top halves, then
// the low halves).
// CHECK-LABEL: func @split_halves
// CHECK: fuse.high_half %{{.*}} : (tensor<2x3xf32>) -> tensor<2x3xbf16>
// CHECK: fuse.low_half %{{.*}} : (tensor<2x3xf32>) -> tensor<2x3xi16>
// CHECK: fuse.join_halves %{{.*}}, %{{.*}} : (tensor<2x3xbf16>, tensor<2x3xi16>) -> tensor<2x3xf32>
// CHECK: fuse.sgd %{{.*}}, %{{.*}} params(%{{.*}} : tensor<2x3xf32>) grads(%{{.*}} : tensor<2x3xf32>) states() copies(%{{.*}}, %{{.*}} : tensor<2x3xbf16>, tensor<2x3xi16>) {copy_params = array<i64: 0>, split_copies} -> tensor<2x3xf32>, tensor<2x3xbf16>, tensor<2x3xi16>
func.func @split_halves(%lr: tensor<f32>, %s: tensor<i64>, %q: tensor<2x3xf32>, %h: tensor<2x3xf32>) {
  %t = fuse.high_half %q : (tensor<2x3xf32>) -> tensor<2x3xbf16>
  %l = fuse.low_half %q : (tensor<2x3xf32>) -> tensor<2x3xi16>
  %j = fuse.join_halves %t, %l : (tensor<2x3xbf16>, tensor<2x3xi16>) -> tensor<2x3xf32>
  %0:3 = fuse.sgd %lr, %s params(%j : tensor<2x3xf32>) grads(%h : tensor<2x3xf32>) states() copies(%t, %l : tensor<2x3xbf16>, tensor<2x3xi16>) {copy_params = array<i64: 0>, split_copies} -> tensor<2x3xf32>, tensor<2x3xbf16>, tensor<2x3xi16>
  return
}

// Schedules round-trip; step's default gamma 0.1 is printed, min 0 is not.
// CHECK-LABEL: func @schedules
func.func @schedules(%lr: tensor<f32>, %s: tensor<i64>, %g: tensor<4xf32>, %h: tensor<2x3xf32>) {
  // CHECK: fuse.lr_schedule %{{.*}}, %{{.*}} {schedule = #fuse.lr_schedule<constant>}
  %0 = fuse.lr_schedule %lr, %s {schedule = #fuse.lr_schedule<constant>}
  // CHECK: fuse.lr_schedule %{{.*}}, %{{.*}} {schedule = #fuse.lr_schedule<constant, warmup = 10>}
  %1 = fuse.lr_schedule %lr, %s {schedule = #fuse.lr_schedule<constant, warmup = 10>}
  // CHECK: fuse.lr_schedule %{{.*}}, %{{.*}} {schedule = #fuse.lr_schedule<step, decay_steps = 30, gamma = 1.000000e-01>}
  %2 = fuse.lr_schedule %lr, %s {schedule = #fuse.lr_schedule<step, decay_steps = 30>}
  // CHECK: fuse.lr_schedule %{{.*}}, %{{.*}} {schedule = #fuse.lr_schedule<exponential, warmup = 3, decay_steps = 100, gamma = 5.000000e-01>}
  %3 = fuse.lr_schedule %lr, %s {schedule = #fuse.lr_schedule<exponential, decay_steps = 100, gamma = 0.5, warmup = 3>}
  // CHECK: fuse.lr_schedule %{{.*}}, %{{.*}} {schedule = #fuse.lr_schedule<cosine, warmup = 100, decay_steps = 1000, min = 1.000000e-01>}
  %4 = fuse.lr_schedule %lr, %s {schedule = #fuse.lr_schedule<cosine, warmup = 100, decay_steps = 1000, min = 0.1>}
  // CHECK: fuse.lr_schedule %{{.*}}, %{{.*}} {schedule = #fuse.lr_schedule<linear, decay_steps = 50>}
  %5 = fuse.lr_schedule %lr, %s {schedule = #fuse.lr_schedule<linear, decay_steps = 50, min = 0.0>}
  // CHECK: fuse.clip_gradients %{{.*}}, %{{.*}} {clip_norm = 1.000000e+00 : f64, clip_value = 5.000000e-01 : f64} : tensor<4xf32>, tensor<2x3xf32>
  %6:2 = fuse.clip_gradients %g, %h {clip_norm = 1.0 : f64, clip_value = 0.5 : f64} : tensor<4xf32>, tensor<2x3xf32>
  return
}

// Collectives: several tensors at once, with or without a prescale.
// CHECK-LABEL: func @collectives
func.func @collectives(%g: tensor<4xf32>, %h: tensor<2x3xf32>, %w: tensor<f32>) {
  // CHECK: fuse.all_reduce sum %{{.*}}, %{{.*}} prescale %{{.*}} : tensor<4xf32>, tensor<2x3xf32>
  %0:2 = fuse.all_reduce sum %g, %h prescale %w : tensor<4xf32>, tensor<2x3xf32>
  // CHECK: fuse.all_reduce mean %{{.*}} : tensor<4xf32>
  %1 = fuse.all_reduce mean %g : tensor<4xf32>
  return
}

// Every initializer kind; uniform and normal print their default 0.05.
// CHECK-LABEL: func @initializers
// CHECK-SAME: {fuse.init = #fuse.init<zeros>}
// CHECK-SAME: {fuse.init = #fuse.init<ones>}
// CHECK-SAME: {fuse.init = #fuse.init<constant, value = -2.500000e+00>}
// CHECK-SAME: {fuse.init = #fuse.init<uniform, limit = 5.000000e-02>}
// CHECK-SAME: {fuse.init = #fuse.init<uniform, limit = 5.000000e-01>}
// CHECK-SAME: {fuse.init = #fuse.init<normal, stddev = 5.000000e-02>}
// CHECK-SAME: {fuse.init = #fuse.init<normal, stddev = 1.000000e-02>}
// CHECK-SAME: {fuse.init = #fuse.init<glorot_uniform>}
// CHECK-SAME: {fuse.init = #fuse.init<glorot_normal>}
// CHECK-SAME: {fuse.init = #fuse.init<he_uniform>}
// CHECK-SAME: {fuse.init = #fuse.init<he_normal>}
func.func @initializers(
    %a: tensor<4xf32> {fuse.init = #fuse.init<zeros>},
    %b: tensor<4xf32> {fuse.init = #fuse.init<ones>},
    %c: tensor<4xf32> {fuse.init = #fuse.init<constant, value = -2.5>},
    %d: tensor<4xf32> {fuse.init = #fuse.init<uniform>},
    %e: tensor<4xf32> {fuse.init = #fuse.init<uniform, limit = 0.5>},
    %f: tensor<4xf64> {fuse.init = #fuse.init<normal>},
    %g: tensor<4xf32> {fuse.init = #fuse.init<normal, stddev = 0.01>},
    %h: tensor<3x4xf32> {fuse.init = #fuse.init<glorot_uniform>},
    %i: tensor<3x4xf32> {fuse.init = #fuse.init<glorot_normal>},
    %j: tensor<3x3x1x4xf32> {fuse.init = #fuse.init<he_uniform>},
    %k: tensor<3x4xbf16> {fuse.init = #fuse.init<he_normal>}) {
  return
}

// CHECK-LABEL: func @sequence_elementwise
func.func @sequence_elementwise(%x: tensor<?x8xf32>, %i: tensor<?x8xi32>) {
  // CHECK: fuse.erf %{{.*}} : tensor<?x8xf32>
  %0 = fuse.erf %x : tensor<?x8xf32>
  // CHECK: fuse.gelu %{{.*}} : tensor<?x8xf32>
  %1 = fuse.gelu %x : tensor<?x8xf32>
  // CHECK: fuse.gelu %{{.*}} {approximate = "tanh"} : tensor<?x8xf32>
  %2 = fuse.gelu %x {approximate = "tanh"} : tensor<?x8xf32>
  // CHECK: fuse.leaky_relu %{{.*}} {alpha = 2.000000e-01 : f64} : tensor<?x8xf32>
  %3 = fuse.leaky_relu %x {alpha = 0.2 : f64} : tensor<?x8xf32>
  // CHECK: fuse.cast %{{.*}} : (tensor<?x8xf32>) -> tensor<?x8xbf16>
  %4 = fuse.cast %x : (tensor<?x8xf32>) -> tensor<?x8xbf16>
  // CHECK: fuse.cast %{{.*}} : (tensor<?x8xi32>) -> tensor<?x8xf32>
  %5 = fuse.cast %i : (tensor<?x8xi32>) -> tensor<?x8xf32>
  return
}

// CHECK-LABEL: func @sequence_shapes
func.func @sequence_shapes(%x: tensor<?x8xf32>, %y: tensor<?x4xf32>) {
  // CHECK: fuse.slice %{{.*}} {offsets = array<i64: 0, 1>, strides = array<i64: 1, 2>} : (tensor<?x8xf32>) -> tensor<?x3xf32>
  %0 = fuse.slice %x {offsets = array<i64: 0, 1>, strides = array<i64: 1, 2>} : (tensor<?x8xf32>) -> tensor<?x3xf32>
  // CHECK: fuse.pad %{{.*}} {high = array<i64: 0, 2>, interior = array<i64: 0, 1>, low = array<i64: 0, 1>, value = -1.000000e+00 : f64} : (tensor<?x8xf32>) -> tensor<?x18xf32>
  %1 = fuse.pad %x {low = array<i64: 0, 1>, high = array<i64: 0, 2>, interior = array<i64: 0, 1>, value = -1.0 : f64} : (tensor<?x8xf32>) -> tensor<?x18xf32>
  // CHECK: fuse.concat %{{.*}}, %{{.*}} {axis = 1 : i64} : (tensor<?x8xf32>, tensor<?x4xf32>) -> tensor<?x12xf32>
  %2 = fuse.concat %x, %y {axis = 1 : i64} : (tensor<?x8xf32>, tensor<?x4xf32>) -> tensor<?x12xf32>
  // CHECK: fuse.iota {axis = 1 : i64} : tensor<4x4xi32>
  %3 = fuse.iota {axis = 1 : i64} : tensor<4x4xi32>
  return
}

// CHECK-LABEL: func @embeddings
func.func @embeddings(%table: tensor<16x8xf32>, %tokens: tensor<?x5xi32>, %g: tensor<?x5x8xf32>, %x: tensor<?x5x8xf32>, %s: tensor<8xf32>, %b: tensor<8xf32>) {
  // CHECK: fuse.gather %{{.*}}, %{{.*}} : (tensor<16x8xf32>, tensor<?x5xi32>) -> tensor<?x5x8xf32>
  %0 = fuse.gather %table, %tokens : (tensor<16x8xf32>, tensor<?x5xi32>) -> tensor<?x5x8xf32>
  // CHECK: fuse.scatter_add %{{.*}}, %{{.*}}, %{{.*}} : (tensor<?x5x8xf32>, tensor<?x5xi32>, tensor<16x8xf32>) -> tensor<16x8xf32>
  %1 = fuse.scatter_add %g, %tokens, %table : (tensor<?x5x8xf32>, tensor<?x5xi32>, tensor<16x8xf32>) -> tensor<16x8xf32>
  // CHECK: fuse.layer_norm %{{.*}}, %{{.*}}, %{{.*}} {epsilon = 5.000000e-01 : f64} : (tensor<?x5x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<?x5x8xf32>
  %2 = fuse.layer_norm %x, %s, %b {epsilon = 0.5 : f64} : (tensor<?x5x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<?x5x8xf32>
  return
}
