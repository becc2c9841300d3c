// RUN: fuse-opt %s --split-input-file --verify-diagnostics
// One case per verifier error of the fuse dialect.

func.func @f(%a: tensor<4xf32>, %b: tensor<4xi32>) {
  // expected-error @below {{operands have different element types ('f32' vs 'i32')}}
  // expected-error @below {{'fuse.add' op failed to infer returned types}}
  %0 = fuse.add %a, %b : (tensor<4xf32>, tensor<4xi32>) -> tensor<4xf32>
  return
}
// -----
func.func @f(%a: tensor<3xf32>, %b: tensor<4xf32>) {
  // expected-error @below {{operand shapes 3 and 4 are not broadcast-compatible}}
  // expected-error @below {{'fuse.mul' op failed to infer returned types}}
  %0 = fuse.mul %a, %b : (tensor<3xf32>, tensor<4xf32>) -> tensor<4xf32>
  return
}
// -----
func.func @f(%a: tensor<3x1xf32>, %b: tensor<4xf32>) {
  // expected-error @below {{'fuse.sub' op inferred type(s) 'tensor<3x4xf32>' are incompatible with return type(s) of operation 'tensor<3x1xf32>'}}
  // expected-error @below {{'fuse.sub' op failed to infer returned types}}
  %0 = fuse.sub %a, %b : (tensor<3x1xf32>, tensor<4xf32>) -> tensor<3x1xf32>
  return
}
// -----
func.func @f(%a: tensor<4xi32>) {
  // expected-error @below {{'fuse.exp' op operand #0 must be ranked tensor of floating-point values, but got 'tensor<4xi32>'}}
  %0 = fuse.exp %a : tensor<4xi32>
  return
}
// -----
func.func @f(%a: tensor<4xi32>, %b: tensor<4xi32>) {
  // expected-error @below {{'fuse.pow' op operand #0 must be ranked tensor of floating-point values, but got 'tensor<4xi32>'}}
  %0 = fuse.pow %a, %b : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  return
}
// -----
// expected-note @below {{prior use here}}
func.func @f(%a: tensor<4xf32>) {
  // expected-error @below {{use of value '%a' expects different type than prior uses: 'tensor<4xf16>' vs 'tensor<4xf32>'}}
  %0 = fuse.neg %a : tensor<4xf16>
  return
}
// -----
func.func @f(%a: tensor<4xf32>, %b: tensor<f64>) {
  // expected-error @below {{operands have different element types ('f32' vs 'f64')}}
  // expected-error @below {{'fuse.compare' op failed to infer returned types}}
  %0 = fuse.compare lt, %a, %b : (tensor<4xf32>, tensor<f64>) -> tensor<4xi1>
  return
}
// -----
func.func @f(%a: tensor<4xf32>, %b: tensor<f32>) {
  // expected-error @below {{custom op 'fuse.compare' expected string or keyword containing one of the following enum values for attribute 'predicate' [eq, ne, lt, le, gt, ge]}}
  %0 = fuse.compare foo, %a, %b : (tensor<4xf32>, tensor<f32>) -> tensor<4xi1>
  return
}
// -----
func.func @f(%c: tensor<3xi1>, %a: tensor<4xf32>, %b: tensor<f32>) {
  // expected-error @below {{condition shape 3 is not broadcast-compatible with 4}}
  // expected-error @below {{'fuse.select' op failed to infer returned types}}
  %0 = fuse.select %c, %a, %b : (tensor<3xi1>, tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  return
}
// -----
func.func @f(%c: tensor<4xi32>, %a: tensor<4xf32>, %b: tensor<f32>) {
  // expected-error @below {{'fuse.select' op operand #0 must be ranked tensor of 1-bit signless integer values, but got 'tensor<4xi32>'}}
  %0 = fuse.select %c, %a, %b : (tensor<4xi32>, tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  return
}
// -----
func.func @f(%a: tensor<4x4xf32>) {
  // expected-error @below {{'fuse.reshape' op result element type 'i32' differs from the input's 'f32'}}
  %0 = fuse.reshape %a : (tensor<4x4xf32>) -> tensor<16xi32>
  return
}
// -----
func.func @f(%a: tensor<?x4xf32>) {
  // expected-error @below {{'fuse.reshape' op result may have at most one dynamic dimension, got 'tensor<?x?xf32>'}}
  %0 = fuse.reshape %a : (tensor<?x4xf32>) -> tensor<?x?xf32>
  return
}
// -----
func.func @f(%a: tensor<4x4xf32>) {
  // expected-error @below {{'fuse.reshape' op cannot reshape 16 elements into 15}}
  %0 = fuse.reshape %a : (tensor<4x4xf32>) -> tensor<3x5xf32>
  return
}
// -----
func.func @f(%a: tensor<4x4xf32>) {
  // expected-error @below {{'fuse.reshape' op cannot reshape 16 elements into shape ?x5}}
  %0 = fuse.reshape %a : (tensor<4x4xf32>) -> tensor<?x5xf32>
  return
}
// -----
func.func @f(%a: tensor<3x4xf32>) {
  // expected-error @below {{permutation has 1 entries but the input has rank 2}}
  // expected-error @below {{'fuse.transpose' op failed to infer returned types}}
  %0 = fuse.transpose %a {permutation = array<i64: 0>} : (tensor<3x4xf32>) -> tensor<3x4xf32>
  return
}
// -----
func.func @f(%a: tensor<3x4xf32>) {
  // expected-error @below {{permutation [1, 1] is not a permutation of [0, 2)}}
  // expected-error @below {{'fuse.transpose' op failed to infer returned types}}
  %0 = fuse.transpose %a {permutation = array<i64: 1, 1>} : (tensor<3x4xf32>) -> tensor<4x4xf32>
  return
}
// -----
func.func @f(%a: tensor<3x4xf32>) {
  // expected-error @below {{'fuse.transpose' op inferred type(s) 'tensor<4x3xf32>' are incompatible with return type(s) of operation 'tensor<3x4xf32>'}}
  // expected-error @below {{'fuse.transpose' op failed to infer returned types}}
  %0 = fuse.transpose %a {permutation = array<i64: 1, 0>} : (tensor<3x4xf32>) -> tensor<3x4xf32>
  return
}
// -----
func.func @f(%a: tensor<2x4xf32>) {
  // expected-error @below {{'fuse.broadcast_to' op cannot broadcast shape 2x4 to 3x4}}
  %0 = fuse.broadcast_to %a : (tensor<2x4xf32>) -> tensor<3x4xf32>
  return
}
// -----
func.func @f(%a: tensor<4xf32>) {
  // expected-error @below {{'fuse.broadcast_to' op result element type 'f16' differs from the input's 'f32'}}
  %0 = fuse.broadcast_to %a : (tensor<4xf32>) -> tensor<3x4xf16>
  return
}
// -----
func.func @f(%a: tensor<3x4x5xf32>, %b: tensor<5x6xf32>) {
  // expected-error @below {{expects rank-2 operands, got ranks 3 and 2}}
  // expected-error @below {{'fuse.matmul' op failed to infer returned types}}
  %0 = fuse.matmul %a, %b : (tensor<3x4x5xf32>, tensor<5x6xf32>) -> tensor<4x6xf32>
  return
}
// -----
func.func @f(%a: tensor<?x784xf32>, %b: tensor<128x10xf32>) {
  // expected-error @below {{contraction dimensions differ: 784 (lhs) vs 128 (rhs)}}
  // expected-error @below {{'fuse.matmul' op failed to infer returned types}}
  %0 = fuse.matmul %a, %b : (tensor<?x784xf32>, tensor<128x10xf32>) -> tensor<?x10xf32>
  return
}
// -----
func.func @f(%a: tensor<4x5xf32>, %b: tensor<5x6xf64>) {
  // expected-error @below {{operands have different element types ('f32' vs 'f64')}}
  // expected-error @below {{'fuse.matmul' op failed to infer returned types}}
  %0 = fuse.matmul %a, %b : (tensor<4x5xf32>, tensor<5x6xf64>) -> tensor<4x6xf32>
  return
}
// -----
func.func @f(%a: tensor<8x4x5xf32>, %b: tensor<7x5x6xf32>) {
  // expected-error @below {{batch dimensions differ: 8 (lhs) vs 7 (rhs)}}
  // expected-error @below {{'fuse.batch_matmul' op failed to infer returned types}}
  %0 = fuse.batch_matmul %a, %b : (tensor<8x4x5xf32>, tensor<7x5x6xf32>) -> tensor<8x4x6xf32>
  return
}
// -----
func.func @f(%x: tensor<28x28x1xf32>, %k: tensor<3x3x1x8xf32>) {
  // expected-error @below {{expects a rank-4 NHWC input, got 'tensor<28x28x1xf32>'}}
  // expected-error @below {{'fuse.conv2d' op failed to infer returned types}}
  %0 = fuse.conv2d %x, %k : (tensor<28x28x1xf32>, tensor<3x3x1x8xf32>) -> tensor<26x26x8xf32>
  return
}
// -----
func.func @f(%x: tensor<1x28x28x1xf32>, %k: tensor<3x3x8xf32>) {
  // expected-error @below {{expects a rank-4 HWIO filter, got 'tensor<3x3x8xf32>'}}
  // expected-error @below {{'fuse.conv2d' op failed to infer returned types}}
  %0 = fuse.conv2d %x, %k : (tensor<1x28x28x1xf32>, tensor<3x3x8xf32>) -> tensor<1x26x26x8xf32>
  return
}
// -----
func.func @f(%x: tensor<1x28x28x3xf32>, %k: tensor<3x3x1x8xf32>) {
  // expected-error @below {{input channels (3) do not match the filter's input channels (1)}}
  // expected-error @below {{'fuse.conv2d' op failed to infer returned types}}
  %0 = fuse.conv2d %x, %k : (tensor<1x28x28x3xf32>, tensor<3x3x1x8xf32>) -> tensor<1x26x26x8xf32>
  return
}
// -----
func.func @f(%x: tensor<1x28x28x1xf32>, %k: tensor<3x3x1x8xf32>) {
  // expected-error @below {{'strides' must have 2 entries [h, w], got 1}}
  // expected-error @below {{'fuse.conv2d' op failed to infer returned types}}
  %0 = fuse.conv2d %x, %k {strides = array<i64: 1>} : (tensor<1x28x28x1xf32>, tensor<3x3x1x8xf32>) -> tensor<1x26x26x8xf32>
  return
}
// -----
func.func @f(%x: tensor<1x28x28x1xf32>, %k: tensor<3x3x1x8xf32>) {
  // expected-error @below {{'dilations' must be positive}}
  // expected-error @below {{'fuse.conv2d' op failed to infer returned types}}
  %0 = fuse.conv2d %x, %k {dilations = array<i64: 0, 1>} : (tensor<1x28x28x1xf32>, tensor<3x3x1x8xf32>) -> tensor<1x26x26x8xf32>
  return
}
// -----
func.func @f(%x: tensor<1x28x28x1xf32>, %k: tensor<3x3x1x8xf32>) {
  // expected-error @below {{'padding' must have 4 entries [top, bottom, left, right], got 2}}
  // expected-error @below {{'fuse.conv2d' op failed to infer returned types}}
  %0 = fuse.conv2d %x, %k {padding = array<i64: 1, 1>} : (tensor<1x28x28x1xf32>, tensor<3x3x1x8xf32>) -> tensor<1x26x26x8xf32>
  return
}
// -----
func.func @f(%x: tensor<1x28x28x1xf32>, %k: tensor<3x3x1x8xf32>) {
  // expected-error @below {{'padding' must be non-negative}}
  // expected-error @below {{'fuse.conv2d' op failed to infer returned types}}
  %0 = fuse.conv2d %x, %k {padding = array<i64: -1, 0, 0, 0>} : (tensor<1x28x28x1xf32>, tensor<3x3x1x8xf32>) -> tensor<1x26x26x8xf32>
  return
}
// -----
func.func @f(%x: tensor<1x2x28x1xf32>, %k: tensor<3x3x1x8xf32>) {
  // expected-error @below {{filter window 3 is larger than the padded input height 2}}
  // expected-error @below {{'fuse.conv2d' op failed to infer returned types}}
  %0 = fuse.conv2d %x, %k : (tensor<1x2x28x1xf32>, tensor<3x3x1x8xf32>) -> tensor<1x1x26x8xf32>
  return
}
// -----
func.func @f(%x: tensor<1x28x28x1xf32>, %k: tensor<3x3x1x8xf32>) {
  // expected-error @below {{'fuse.conv2d' op inferred type(s) 'tensor<1x26x26x8xf32>' are incompatible with return type(s) of operation 'tensor<1x28x28x8xf32>'}}
  // expected-error @below {{'fuse.conv2d' op failed to infer returned types}}
  %0 = fuse.conv2d %x, %k : (tensor<1x28x28x1xf32>, tensor<3x3x1x8xf32>) -> tensor<1x28x28x8xf32>
  return
}
// -----
func.func @f(%x: tensor<1x28x28x1xi32>, %k: tensor<3x3x1x8xi32>) {
  // expected-error @below {{'fuse.conv2d' op operand #0 must be ranked tensor of floating-point values, but got 'tensor<1x28x28x1xi32>'}}
  %0 = fuse.conv2d %x, %k : (tensor<1x28x28x1xi32>, tensor<3x3x1x8xi32>) -> tensor<1x26x26x8xi32>
  return
}
// -----
func.func @f(%x: tensor<1x2x2x4xf32>) {
  // expected-error @below {{pool window 3x3 is larger than the padded input 2x2}}
  // expected-error @below {{'fuse.max_pool2d' op failed to infer returned types}}
  %0 = fuse.max_pool2d %x {window = array<i64: 3, 3>} : (tensor<1x2x2x4xf32>) -> tensor<1x1x1x4xf32>
  return
}
// -----
func.func @f(%x: tensor<1x8x8x4xf32>) {
  // expected-error @below {{'padding' must be smaller than the window}}
  // expected-error @below {{'fuse.avg_pool2d' op failed to infer returned types}}
  %0 = fuse.avg_pool2d %x {window = array<i64: 2, 2>, padding = array<i64: 2, 0, 0, 0>} : (tensor<1x8x8x4xf32>) -> tensor<1x5x4x4xf32>
  return
}
// -----
func.func @f(%x: tensor<8x8x4xf32>) {
  // expected-error @below {{expects a rank-4 NHWC input, got 'tensor<8x8x4xf32>'}}
  // expected-error @below {{'fuse.max_pool2d' op failed to infer returned types}}
  %0 = fuse.max_pool2d %x {window = array<i64: 2, 2>} : (tensor<8x8x4xf32>) -> tensor<4x4x4xf32>
  return
}
// -----
func.func @f(%x: tensor<1x8x8x4xf32>) {
  // expected-error @below {{'strides' must be positive}}
  // expected-error @below {{'fuse.max_pool2d' op failed to infer returned types}}
  %0 = fuse.max_pool2d %x {window = array<i64: 2, 2>, strides = array<i64: 0, 1>} : (tensor<1x8x8x4xf32>) -> tensor<1x4x4x4xf32>
  return
}
// -----
func.func @f(%x: tensor<1x32x32x4xf32>) {
  // expected-error @below {{'fuse.max_pool2d_indices' op inferred type(s) 'tensor<1x2x2x4xi32>' are incompatible with return type(s) of operation 'tensor<1x2x2x4xi8>'}}
  // expected-error @below {{'fuse.max_pool2d_indices' op failed to infer returned types}}
  %0 = fuse.max_pool2d_indices %x {window = array<i64: 16, 16>} : (tensor<1x32x32x4xf32>) -> tensor<1x2x2x4xi8>
  return
}
// -----
func.func @f(%g: tensor<1x4x4x4xf32>, %i: tensor<1x3x3x4xi8>, %x: tensor<1x8x8x4xf32>) {
  // expected-error @below {{'fuse.max_pool2d_grad' op indices of type 'tensor<1x3x3x4xi8>' do not match the input's pool, 'tensor<1x4x4x4xi8>'}}
  %0 = fuse.max_pool2d_grad %g, %i, %x {window = array<i64: 2, 2>} : (tensor<1x4x4x4xf32>, tensor<1x3x3x4xi8>, tensor<1x8x8x4xf32>) -> tensor<1x8x8x4xf32>
  return
}
// -----
func.func @f(%g: tensor<1x4x4x4xf16>, %i: tensor<1x4x4x4xi8>, %x: tensor<1x8x8x4xf32>) {
  // expected-error @below {{'fuse.max_pool2d_grad' op gradient of type 'tensor<1x4x4x4xf16>' does not match the input's element type}}
  %0 = fuse.max_pool2d_grad %g, %i, %x {window = array<i64: 2, 2>} : (tensor<1x4x4x4xf16>, tensor<1x4x4x4xi8>, tensor<1x8x8x4xf32>) -> tensor<1x8x8x4xf32>
  return
}
// -----
func.func @f(%g: tensor<1x4x4x2xf32>, %i: tensor<1x4x4x4xi8>, %x: tensor<1x8x8x4xf32>) {
  // expected-error @below {{'fuse.max_pool2d_grad' op gradient shape 1x4x4x2 does not match the indices' 1x4x4x4}}
  %0 = fuse.max_pool2d_grad %g, %i, %x {window = array<i64: 2, 2>} : (tensor<1x4x4x2xf32>, tensor<1x4x4x4xi8>, tensor<1x8x8x4xf32>) -> tensor<1x8x8x4xf32>
  return
}
// -----
func.func @f(%x: tensor<4x5xf32>) {
  // expected-error @below {{axis 2 is out of range for rank 2}}
  // expected-error @below {{'fuse.reduce_sum' op failed to infer returned types}}
  %0 = fuse.reduce_sum %x {axes = array<i64: 2>} : (tensor<4x5xf32>) -> tensor<4xf32>
  return
}
// -----
func.func @f(%x: tensor<4x5xf32>) {
  // expected-error @below {{axis 1 appears more than once}}
  // expected-error @below {{'fuse.reduce_max' op failed to infer returned types}}
  %0 = fuse.reduce_max %x {axes = array<i64: 1, 1>} : (tensor<4x5xf32>) -> tensor<4xf32>
  return
}
// -----
func.func @f(%x: tensor<4x5xi32>) {
  // expected-error @below {{'fuse.reduce_mean' op operand #0 must be ranked tensor of floating-point values, but got 'tensor<4x5xi32>'}}
  %0 = fuse.reduce_mean %x {axes = array<i64: 1>} : (tensor<4x5xi32>) -> tensor<4xi32>
  return
}
// -----
func.func @f(%x: tensor<4x5xf32>) {
  // expected-error @below {{'fuse.reduce_sum' op inferred type(s) 'tensor<4xf32>' are incompatible with return type(s) of operation 'tensor<4x1xf32>'}}
  // expected-error @below {{'fuse.reduce_sum' op failed to infer returned types}}
  %0 = fuse.reduce_sum %x {axes = array<i64: 1>} : (tensor<4x5xf32>) -> tensor<4x1xf32>
  return
}
// -----
func.func @f(%x: tensor<4x5xf32>) {
  // expected-error @below {{'fuse.softmax' op axis 2 is out of range for rank 2}}
  %0 = fuse.softmax %x {axis = 2} : tensor<4x5xf32>
  return
}
// -----
func.func @f(%x: tensor<f32>) {
  // expected-error @below {{'fuse.log_softmax' op expects an input of rank at least 1}}
  %0 = fuse.log_softmax %x : tensor<f32>
  return
}
// -----
func.func @f(%x: tensor<4x10x2xf32>, %y: tensor<4xi32>) {
  // expected-error @below {{expects rank-2 logits [batch, classes], got 'tensor<4x10x2xf32>'}}
  // expected-error @below {{'fuse.softmax_cross_entropy' op failed to infer returned types}}
  %0 = fuse.softmax_cross_entropy %x, %y : (tensor<4x10x2xf32>, tensor<4xi32>) -> tensor<f32>
  return
}
// -----
func.func @f(%x: tensor<4x10xf32>, %y: tensor<4x1xi32>) {
  // expected-error @below {{expects rank-1 labels [batch], got 'tensor<4x1xi32>'}}
  // expected-error @below {{'fuse.softmax_cross_entropy' op failed to infer returned types}}
  %0 = fuse.softmax_cross_entropy %x, %y : (tensor<4x10xf32>, tensor<4x1xi32>) -> tensor<f32>
  return
}
// -----
func.func @f(%x: tensor<64x10xf32>, %y: tensor<32xi32>) {
  // expected-error @below {{batch size of labels (32) does not match the logits' (64)}}
  // expected-error @below {{'fuse.softmax_cross_entropy' op failed to infer returned types}}
  %0 = fuse.softmax_cross_entropy %x, %y : (tensor<64x10xf32>, tensor<32xi32>) -> tensor<f32>
  return
}
// -----
func.func @f(%x: tensor<64x10xf32>, %y: tensor<64xf32>) {
  // expected-error @below {{'fuse.softmax_cross_entropy' op operand #1 must be ranked tensor of signless integer values, but got 'tensor<64xf32>'}}
  %0 = fuse.softmax_cross_entropy %x, %y : (tensor<64x10xf32>, tensor<64xf32>) -> tensor<f32>
  return
}
// -----
func.func @f(%x: tensor<4x10xf32>, %t: tensor<4x9xf32>) {
  // expected-error @below {{prediction shape 4x10 does not match the target's 4x9}}
  // expected-error @below {{'fuse.mse_loss' op failed to infer returned types}}
  %0 = fuse.mse_loss %x, %t : (tensor<4x10xf32>, tensor<4x9xf32>) -> tensor<f32>
  return
}
// -----
func.func @f(%x: tensor<4x10xf32>, %t: tensor<4x10xf64>) {
  // expected-error @below {{operands have different element types ('f32' vs 'f64')}}
  // expected-error @below {{'fuse.mse_loss' op failed to infer returned types}}
  %0 = fuse.mse_loss %x, %t : (tensor<4x10xf32>, tensor<4x10xf64>) -> tensor<f32>
  return
}
// -----
func.func @f(%x: tensor<4xf32>, %s: tensor<i64>) {
  // expected-error @below {{'fuse.dropout' op rate must be in [0, 1), got 1}}
  %0 = fuse.dropout %x, %s {rate = 1.0 : f32} : tensor<4xf32>
  return
}
// -----
func.func @f(%x: tensor<4xf32>, %s: tensor<i64>) {
  // expected-error @below {{'fuse.dropout' op rate must be in [0, 1), got -0.5}}
  %0 = fuse.dropout %x, %s {rate = -0.5 : f32} : tensor<4xf32>
  return
}
// -----
func.func @f(%x: tensor<4xf32>, %s: tensor<i64>) {
  // expected-error @below {{'fuse.dropout' op requires attribute 'rate'}}
  %0 = fuse.dropout %x, %s : tensor<4xf32>
  return
}
// -----
func.func @f() {
  // expected-error @below {{'fuse.constant' op failed to verify that all of {value, result} have same type}}
  %0 = "fuse.constant"() {value = dense<1.0> : tensor<2xf32>} : () -> tensor<3xf32>
  return
}
// -----
func.func @f(%x: tensor<4xf32>, %s: tensor<i64>) {
  // expected-error @below {{elements literal type must have static shape}}
  %0 = fuse.constant dense<1.0> : tensor<*xf32>
  return
}
// -----
func.func @f(%x: tensor<4xf32>) {
  // expected-error @below {{axis 3 is out of range for result rank 2}}
  // expected-error @below {{'fuse.expand_dims' op failed to infer returned types}}
  %0 = fuse.expand_dims %x {axes = array<i64: 3>} : (tensor<4xf32>) -> tensor<4x1xf32>
  return
}
// -----
func.func @f(%x: tensor<4xf32>) {
  // expected-error @below {{axis 0 appears more than once}}
  // expected-error @below {{'fuse.expand_dims' op failed to infer returned types}}
  %0 = fuse.expand_dims %x {axes = array<i64: 0, 0>} : (tensor<4xf32>) -> tensor<1x1x4xf32>
  return
}
// -----
func.func @f(%x: tensor<4x10xf32>, %y: tensor<5xi32>, %g: tensor<f32>) {
  // expected-error @below {{batch size of labels (5) does not match the logits' (4)}}
  // expected-error @below {{'fuse.softmax_cross_entropy_grad' op failed to infer returned types}}
  %0 = fuse.softmax_cross_entropy_grad %x, %y, %g : (tensor<4x10xf32>, tensor<5xi32>, tensor<f32>) -> tensor<4x10xf32>
  return
}
// -----
func.func @f(%lr: tensor<f32>, %s: tensor<i64>, %p: tensor<4xf32>, %g: tensor<3xf32>) {
  // expected-error @below {{'fuse.sgd' op gradient #0 has type 'tensor<3xf32>', parameter #0 has type 'tensor<4xf32>'}}
  %0 = fuse.sgd %lr, %s params(%p : tensor<4xf32>) grads(%g : tensor<3xf32>) states() -> tensor<4xf32>
  return
}
// -----
func.func @f(%lr: tensor<f32>, %s: tensor<i64>, %p: tensor<4xf32>, %g: tensor<4xf32>) {
  // expected-error @below {{'fuse.sgd' op expects 1 state tensors per parameter (1), got 0}}
  %0 = fuse.sgd %lr, %s params(%p : tensor<4xf32>) grads(%g : tensor<4xf32>) states() {momentum = 0.9 : f64} -> tensor<4xf32>
  return
}
// -----
func.func @f(%lr: tensor<f32>, %s: tensor<i64>, %p: tensor<4xf32>, %g: tensor<4xf32>) {
  // expected-error @below {{'fuse.sgd' op nesterov needs a positive momentum and no dampening}}
  %0 = fuse.sgd %lr, %s params(%p : tensor<4xf32>) grads(%g : tensor<4xf32>) states() {nesterov} -> tensor<4xf32>
  return
}
// -----
func.func @f(%lr: tensor<f32>, %s: tensor<i64>, %p: tensor<4xf32>, %g: tensor<4xf32>, %c: tensor<4xbf16>) {
  // expected-error @below {{'fuse.sgd' op has 1 copies but copy_params lists 0 parameters}}
  %0:2 = fuse.sgd %lr, %s params(%p : tensor<4xf32>) grads(%g : tensor<4xf32>) states() copies(%c : tensor<4xbf16>) -> tensor<4xf32>, tensor<4xbf16>
  return
}
// -----
func.func @f(%lr: tensor<f32>, %s: tensor<i64>, %p: tensor<4xf32>, %g: tensor<4xf32>, %c: tensor<4xbf16>) {
  // expected-error @below {{'fuse.sgd' op copy_params must be increasing indices of the 1 parameters, got 1 at #0}}
  %0:2 = fuse.sgd %lr, %s params(%p : tensor<4xf32>) grads(%g : tensor<4xf32>) states() copies(%c : tensor<4xbf16>) {copy_params = array<i64: 1>} -> tensor<4xf32>, tensor<4xbf16>
  return
}
// -----
func.func @f(%lr: tensor<f32>, %s: tensor<i64>, %p: tensor<4xf32>, %g: tensor<4xf32>, %c: tensor<4xbf16>) {
  // expected-error @below {{'fuse.sgd' op has 1 copies but copy_params lists 1 parameters (split_copies: a top and a low half each)}}
  %0:2 = fuse.sgd %lr, %s params(%p : tensor<4xf32>) grads(%g : tensor<4xf32>) states() copies(%c : tensor<4xbf16>) {copy_params = array<i64: 0>, split_copies} -> tensor<4xf32>, tensor<4xbf16>
  return
}
// -----
func.func @f(%lr: tensor<f32>, %s: tensor<i64>, %p: tensor<4xf32>, %g: tensor<4xf32>, %c: tensor<4xbf16>) {
  // expected-error @below {{'fuse.sgd' op copy #1 has type 'tensor<4xbf16>', expected 'tensor<4xi16>' (the low half of parameter #0)}}
  %0:3 = fuse.sgd %lr, %s params(%p : tensor<4xf32>) grads(%g : tensor<4xf32>) states() copies(%c, %c : tensor<4xbf16>, tensor<4xbf16>) {copy_params = array<i64: 0>, split_copies} -> tensor<4xf32>, tensor<4xbf16>, tensor<4xbf16>
  return
}
// -----
func.func @f(%x: tensor<4xbf16>, %y: tensor<2xi16>) {
  // expected-error @below {{'fuse.join_halves' op requires the same shape for all operands and results}}
  %0 = fuse.join_halves %x, %y : (tensor<4xbf16>, tensor<2xi16>) -> tensor<4xf32>
  return
}
// -----
func.func @f(%lr: tensor<f32>, %s: tensor<i64>, %p: tensor<4xf32>, %g: tensor<4xf32>, %c: tensor<2xbf16>) {
  // expected-error @below {{'fuse.sgd' op copy #0 has type 'tensor<2xbf16>', expected 'tensor<4xbf16>' (parameter #0 in bf16)}}
  %0:2 = fuse.sgd %lr, %s params(%p : tensor<4xf32>) grads(%g : tensor<4xf32>) states() copies(%c : tensor<2xbf16>) {copy_params = array<i64: 0>} -> tensor<4xf32>, tensor<2xbf16>
  return
}
// -----
func.func @f(%lr: tensor<f32>, %s: tensor<i64>, %p: tensor<4xf32>, %g: tensor<4xf32>) {
  // expected-error @below {{'fuse.adam' op 'beta2' must be in [0, 1), got 1}}
  %0:3 = fuse.adam %lr, %s params(%p : tensor<4xf32>) grads(%g : tensor<4xf32>) states(%p, %p : tensor<4xf32>, tensor<4xf32>) {beta2 = 1.0 : f64} -> tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
  return
}

// -----

func.func @loss(%w: tensor<4xf32>, %x: tensor<4xf32>, %s: tensor<i64>) -> tensor<f32> {
  %l = fuse.mse_loss %w, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<f32>
  return %l : tensor<f32>
}
// expected-error @below {{'fuse.train_step' op unknown optimizer 'adamax' (sgd, adam, adagrad, rmsprop or lamb)}}
fuse.train_step @t {loss = @loss, params = array<i64: 0>, optimizer = "adamax"}

// -----

func.func @loss(%w: tensor<4xf32>, %x: tensor<4xf32>, %s: tensor<i64>) -> tensor<f32> {
  %l = fuse.mse_loss %w, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<f32>
  return %l : tensor<f32>
}
// expected-error @below {{'fuse.train_step' op 'beta_1' is not a hyperparameter of fuse.adam}}
fuse.train_step @t {loss = @loss, params = array<i64: 0>, optimizer = "adam", hyperparameters = {beta_1 = 0.9 : f64}}

// -----

func.func @loss(%w: tensor<4xf32>, %x: tensor<4xf32>, %s: tensor<i64>) -> tensor<f32> {
  %l = fuse.mse_loss %w, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<f32>
  return %l : tensor<f32>
}
// expected-error @below {{'fuse.train_step' op hyperparameters of fuse.sgd: attribute 'momentum' failed to satisfy constraint: 64-bit float attribute}}
fuse.train_step @t {loss = @loss, params = array<i64: 0>, optimizer = "sgd", hyperparameters = {momentum = 1 : i64}}

// -----

func.func @loss(%w: tensor<4xf32>, %x: tensor<4xf32>, %s: tensor<i64>) -> tensor<f32> {
  %l = fuse.mse_loss %w, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<f32>
  return %l : tensor<f32>
}
// expected-error @below {{'fuse.train_step' op parameter index 3 is out of range for 3 arguments}}
fuse.train_step @t {loss = @loss, params = array<i64: 0, 3>, optimizer = "sgd"}

// -----

func.func @loss(%w: tensor<4xf32>, %x: tensor<4xf32>, %s: tensor<i64>) -> tensor<f32> {
  %l = fuse.mse_loss %w, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<f32>
  return %l : tensor<f32>
}
// expected-error @below {{'fuse.train_step' op cannot train argument #2 of type 'tensor<i64>': parameters are float tensors}}
fuse.train_step @t {loss = @loss, params = array<i64: 2>, optimizer = "sgd"}

// -----

func.func @loss(%w: tensor<4xf32>, %x: tensor<4xf32>, %s: tensor<i64>) -> tensor<f32> {
  %l = fuse.mse_loss %w, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<f32>
  return %l : tensor<f32>
}
// expected-error @below {{'fuse.train_step' op step_arg 1 has type 'tensor<4xf32>', the step counter is a tensor<i64>}}
fuse.train_step @t {loss = @loss, params = array<i64: 0>, optimizer = "sgd", step_arg = 1}

// -----

func.func @loss(%w: tensor<4xf32>, %x: tensor<4xf32>) -> tensor<4xf32> {
  return %w : tensor<4xf32>
}
// expected-error @below {{'fuse.train_step' op needs @loss to return one 0-d float tensor (a scalar loss)}}
fuse.train_step @t {loss = @loss, params = array<i64: 0>, optimizer = "sgd"}

// -----

// expected-error @below {{'fuse.train_step' op no function named @missing}}
fuse.train_step @t {loss = @missing, params = array<i64: 0>, optimizer = "sgd"}

// -----

// expected-error @below {{result #0 is in place of argument #2, but the function has 2 arguments}}
func.func @f(%p: tensor<4xf32>, %g: tensor<4xf32>) -> (tensor<4xf32> {fuse.in_place = 2}) {
  return %p : tensor<4xf32>
}

// -----

// expected-error @below {{result #0 ('tensor<4xf32>') is in place of argument #1 of another type ('tensor<4xi32>')}}
func.func @f(%p: tensor<4xf32>, %q: tensor<4xi32>) -> (tensor<4xf32> {fuse.in_place = 1}) {
  return %p : tensor<4xf32>
}

// -----

// expected-error @below {{results #0 and #1 are both in place of argument #0}}
func.func @f(%p: tensor<4xf32>) -> (tensor<4xf32> {fuse.in_place = 0}, tensor<4xf32> {fuse.in_place = 0}) {
  return %p, %p : tensor<4xf32>, tensor<4xf32>
}

// -----

// expected-error @below {{'fuse.in_place' must be an integer (an argument index) on a function result}}
func.func @f(%p: tensor<4xf32>) -> (tensor<4xf32> {fuse.in_place = "p"}) {
  return %p : tensor<4xf32>
}

// -----

// A split weight's top halves name the argument of its low halves, which
// names them back.
// expected-error @below {{'fuse.split_halves' on argument #0 (bf16 top halves) must be the index of the argument holding the low halves of the same weight (an i16 tensor of the same shape with 'fuse.low_half_of' = 0), got 1 : i64}}
func.func @f(%t: tensor<4xbf16> {fuse.split_halves = 1}, %l: tensor<4xi16>) {
  return
}

// -----

// expected-error @below {{'fuse.low_half_of' on argument #1 (i16 low halves) must be the index of the argument holding the top halves of the same weight (a bf16 tensor of the same shape with 'fuse.split_halves' = 1), got 5 : i64}}
func.func @f(%t: tensor<4xbf16>, %l: tensor<4xi16> {fuse.low_half_of = 5}) {
  return
}

// -----

// expected-error @below {{'fuse.split_halves' on argument #0 (bf16 top halves) must be the index of the argument holding the low halves of the same weight (an i16 tensor of the same shape with 'fuse.low_half_of' = 0), got 1 : i64}}
func.func @f(%t: tensor<4xbf16> {fuse.split_halves = 1}, %l: tensor<3xi16> {fuse.low_half_of = 0}) {
  return
}

// -----

// expected-error @below {{unknown fuse result attribute 'fuse.inplace'}}
func.func @f(%p: tensor<4xf32>) -> (tensor<4xf32> {fuse.inplace = 0}) {
  return %p : tensor<4xf32>
}

// -----

// Dim 0 of a stacked argument is the step count, known only at run time.
// expected-error @below {{'fuse.stacked' must be a unit attribute on an argument whose dim 0 is dynamic, got 'tensor<4x3xf32>'}}
func.func @f(%x: tensor<4x3xf32> {fuse.stacked}) {
  return
}

// -----

// A 0-d tensor has no dim to stack along.
// expected-error @below {{'fuse.stacked' must be a unit attribute on an argument whose dim 0 is dynamic, got 'tensor<f32>'}}
func.func @f(%x: tensor<f32> {fuse.stacked}) {
  return
}

// -----

// expected-error @below {{'fuse.stacked' must be a unit attribute on an argument whose dim 0 is dynamic, got 'tensor<?x3xf32>'}}
func.func @f(%x: tensor<?x3xf32> {fuse.stacked = 1}) {
  return
}

// -----

// A stacked result has one row per step, so its dim 0 is dynamic too.
// expected-error @below {{'fuse.stacked' must be a unit attribute on a result whose dim 0 is dynamic, got 'tensor<4xf32>'}}
func.func @f(%x: tensor<4xf32>) -> (tensor<4xf32> {fuse.stacked}) {
  return %x : tensor<4xf32>
}

// -----

// The step counter is a 0-d i64, as the optimizers and dropout take it.
// expected-error @below {{'fuse.step_counter' must be a unit attribute on a tensor<i64> argument, got 'tensor<f32>'}}
func.func @f(%s: tensor<f32> {fuse.step_counter}) {
  return
}

// -----

// A step has one number.
// expected-error @below {{arguments #0 and #2 are both 'fuse.step_counter'}}
func.func @f(%s: tensor<i64> {fuse.step_counter}, %x: tensor<4xf32> {fuse.per_step}, %t: tensor<i64> {fuse.step_counter}) {
  return
}

// -----

// The counter is offset per step, not sliced.
// expected-error @below {{argument #0 cannot be both 'fuse.step_counter' and 'fuse.per_step'}}
func.func @f(%s: tensor<i64> {fuse.per_step, fuse.step_counter}) {
  return
}

// -----

// expected-error @below {{'fuse.per_step' must be a unit attribute on a ranked tensor argument}}
func.func @f(%x: tensor<4xf32> {fuse.per_step = 1 : i64}) {
  return
}

// -----

// An unranked batch cannot be given a leading dim.
// expected-error @below {{'fuse.per_step' must be a unit attribute on a ranked tensor argument}}
func.func @f(%x: tensor<*xf32> {fuse.per_step}) {
  return
}

// -----

// A misspelt attribute is an error, not silently ignored.
// expected-error @below {{unknown fuse argument attribute 'fuse.perstep'}}
func.func @f(%x: tensor<4xf32> {fuse.perstep}) {
  return
}

// -----

// expected-error @below {{unknown initializer 'xavier', expected zeros, ones, constant, uniform, normal, glorot_uniform, glorot_normal, he_uniform or he_normal}}
func.func @f(%w: tensor<4xf32> {fuse.init = #fuse.init<xavier>}) {
  return
}

// -----

// A constant has no default.
// expected-error @below {{'constant' needs 'value = ...'}}
func.func @f(%w: tensor<4xf32> {fuse.init = #fuse.init<constant>}) {
  return
}

// -----

// expected-error @below {{expected 'stddev'}}
func.func @f(%w: tensor<4xf32> {fuse.init = #fuse.init<normal, limit = 1.0>}) {
  return
}

// -----

// expected-error @below {{'zeros' takes no parameters}}
func.func @f(%w: tensor<4xf32> {fuse.init = #fuse.init<zeros, value = 1.0>}) {
  return
}

// -----

// Fans, not a parameter, scale the Glorot and He initializers.
// expected-error @below {{'glorot_uniform' takes no parameters}}
func.func @f(%w: tensor<4x4xf32> {fuse.init = #fuse.init<glorot_uniform, limit = 1.0>}) {
  return
}

// -----

// expected-error @below {{'stddev' of an initializer must be positive}}
func.func @f(%w: tensor<4xf32> {fuse.init = #fuse.init<normal, stddev = 0.0>}) {
  return
}

// -----

// expected-error @below {{'limit' of an initializer must be positive}}
func.func @f(%w: tensor<4xf32> {fuse.init = #fuse.init<uniform, limit = -1.0>}) {
  return
}

// -----

// expected-error @below {{initializer parameter must be finite}}
func.func @f(%w: tensor<4xf32> {fuse.init = #fuse.init<constant, value = 0x7FF0000000000000>}) {
  return
}

// -----

// expected-error @below {{'fuse.init' must be a #fuse.init attribute on a float tensor argument, got "zeros" on 'tensor<4xf32>'}}
func.func @f(%w: tensor<4xf32> {fuse.init = "zeros"}) {
  return
}

// -----

// Only floats are trained.
// expected-error @below {{'fuse.init' must be a #fuse.init attribute on a float tensor argument, got #fuse.init<zeros> on 'tensor<4xi32>'}}
func.func @f(%w: tensor<4xi32> {fuse.init = #fuse.init<zeros>}) {
  return
}

// -----

// Issue 23: every float hyperparameter is finite and in its range, named.
func.func @f(%lr: tensor<f32>, %s: tensor<i64>, %p: tensor<4xf32>, %g: tensor<4xf32>) {
  // expected-error @below {{'fuse.adam' op 'eps' must be finite, got NaN}}
  %0:3 = fuse.adam %lr, %s params(%p : tensor<4xf32>) grads(%g : tensor<4xf32>) states(%p, %p : tensor<4xf32>, tensor<4xf32>) {eps = 0x7FF8000000000000 : f64} -> tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
  return
}
// -----
func.func @f(%lr: tensor<f32>, %s: tensor<i64>, %p: tensor<4xf32>, %g: tensor<4xf32>) {
  // expected-error @below {{'fuse.adam' op 'weight_decay' must be finite, got +Inf}}
  %0:3 = fuse.adam %lr, %s params(%p : tensor<4xf32>) grads(%g : tensor<4xf32>) states(%p, %p : tensor<4xf32>, tensor<4xf32>) {weight_decay = 0x7FF0000000000000 : f64, decoupled} -> tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
  return
}
// -----
func.func @f(%lr: tensor<f32>, %s: tensor<i64>, %p: tensor<4xf32>, %g: tensor<4xf32>) {
  // expected-error @below {{'fuse.adam' op 'beta1' must be in [0, 1), got -0.5}}
  %0:3 = fuse.adam %lr, %s params(%p : tensor<4xf32>) grads(%g : tensor<4xf32>) states(%p, %p : tensor<4xf32>, tensor<4xf32>) {beta1 = -0.5 : f64} -> tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
  return
}
// -----
func.func @f(%lr: tensor<f32>, %s: tensor<i64>, %p: tensor<4xf32>, %g: tensor<4xf32>) {
  // expected-error @below {{'fuse.sgd' op 'momentum' must be finite, got NaN}}
  %0:2 = fuse.sgd %lr, %s params(%p : tensor<4xf32>) grads(%g : tensor<4xf32>) states(%p : tensor<4xf32>) {momentum = 0x7FF8000000000000 : f64} -> tensor<4xf32>, tensor<4xf32>
  return
}
// -----
func.func @f(%lr: tensor<f32>, %s: tensor<i64>, %p: tensor<4xf32>, %g: tensor<4xf32>) {
  // expected-error @below {{'fuse.sgd' op 'dampening' must be finite, got -Inf}}
  %0:2 = fuse.sgd %lr, %s params(%p : tensor<4xf32>) grads(%g : tensor<4xf32>) states(%p : tensor<4xf32>) {momentum = 0.9 : f64, dampening = 0xFFF0000000000000 : f64} -> tensor<4xf32>, tensor<4xf32>
  return
}
// -----
func.func @f(%lr: tensor<f32>, %s: tensor<i64>, %p: tensor<4xf32>, %g: tensor<4xf32>) {
  // expected-error @below {{'fuse.sgd' op 'weight_decay' must be non-negative, got -1}}
  %0 = fuse.sgd %lr, %s params(%p : tensor<4xf32>) grads(%g : tensor<4xf32>) states() {weight_decay = -1.0 : f64} -> tensor<4xf32>
  return
}
// -----
func.func @f(%lr: tensor<f32>, %s: tensor<i64>, %p: tensor<4xf32>, %g: tensor<4xf32>) {
  // expected-error @below {{'fuse.rmsprop' op 'eps' must be finite, got NaN}}
  %0:2 = fuse.rmsprop %lr, %s params(%p : tensor<4xf32>) grads(%g : tensor<4xf32>) states(%p : tensor<4xf32>) {eps = 0x7FF8000000000000 : f64} -> tensor<4xf32>, tensor<4xf32>
  return
}
// -----
func.func @f(%lr: tensor<f32>, %s: tensor<i64>, %p: tensor<4xf32>, %g: tensor<4xf32>) {
  // expected-error @below {{'fuse.rmsprop' op 'alpha' must be finite, got NaN}}
  %0:2 = fuse.rmsprop %lr, %s params(%p : tensor<4xf32>) grads(%g : tensor<4xf32>) states(%p : tensor<4xf32>) {alpha = 0x7FF8000000000000 : f64} -> tensor<4xf32>, tensor<4xf32>
  return
}
// -----
func.func @f(%lr: tensor<f32>, %s: tensor<i64>, %p: tensor<4xf32>, %g: tensor<4xf32>) {
  // expected-error @below {{'fuse.rmsprop' op 'momentum' must be finite, got +Inf}}
  %0:3 = fuse.rmsprop %lr, %s params(%p : tensor<4xf32>) grads(%g : tensor<4xf32>) states(%p, %p : tensor<4xf32>, tensor<4xf32>) {momentum = 0x7FF0000000000000 : f64} -> tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
  return
}
// -----
func.func @f(%lr: tensor<f32>, %s: tensor<i64>, %p: tensor<4xf32>, %g: tensor<4xf32>) {
  // expected-error @below {{'fuse.adagrad' op 'lr_decay' must be finite, got +Inf}}
  %0:2 = fuse.adagrad %lr, %s params(%p : tensor<4xf32>) grads(%g : tensor<4xf32>) states(%p : tensor<4xf32>) {lr_decay = 0x7FF0000000000000 : f64} -> tensor<4xf32>, tensor<4xf32>
  return
}
// -----
func.func @f(%lr: tensor<f32>, %s: tensor<i64>, %p: tensor<4xf32>, %g: tensor<4xf32>) {
  // expected-error @below {{'fuse.adagrad' op 'initial_accumulator_value' must be non-negative, got -0.5}}
  %0:2 = fuse.adagrad %lr, %s params(%p : tensor<4xf32>) grads(%g : tensor<4xf32>) states(%p : tensor<4xf32>) {initial_accumulator_value = -0.5 : f64} -> tensor<4xf32>, tensor<4xf32>
  return
}
// -----
func.func @f(%lr: tensor<f32>, %s: tensor<i64>, %p: tensor<4xf32>, %g: tensor<4xf32>) {
  // expected-error @below {{'fuse.lamb' op 'weight_decay' must be finite, got +Inf}}
  %0:3 = fuse.lamb %lr, %s params(%p : tensor<4xf32>) grads(%g : tensor<4xf32>) states(%p, %p : tensor<4xf32>, tensor<4xf32>) {weight_decay = 0x7FF0000000000000 : f64} -> tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
  return
}
// -----
func.func @f(%lr: tensor<f32>, %s: tensor<i64>, %p: tensor<4xf32>, %g: tensor<4xf32>) {
  // expected-error @below {{'fuse.lamb' op 'beta2' must be finite, got NaN}}
  %0:3 = fuse.lamb %lr, %s params(%p : tensor<4xf32>) grads(%g : tensor<4xf32>) states(%p, %p : tensor<4xf32>, tensor<4xf32>) {beta2 = 0x7FF8000000000000 : f64} -> tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
  return
}

// -----

// A training step's hyperparameters are checked where they are written.
func.func @loss(%w: tensor<4xf32>, %x: tensor<4xf32>) -> tensor<f32> {
  %l = fuse.mse_loss %w, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<f32>
  return %l : tensor<f32>
}
// expected-error @below {{'fuse.train_step' op hyperparameters of fuse.adam: 'weight_decay' must be finite, got +Inf}}
fuse.train_step @t {loss = @loss, params = array<i64: 0>, optimizer = "adam", hyperparameters = {weight_decay = 0x7FF0000000000000 : f64}}

// -----

func.func @loss(%w: tensor<4xf32>, %x: tensor<4xf32>) -> tensor<f32> {
  %l = fuse.mse_loss %w, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<f32>
  return %l : tensor<f32>
}
// expected-error @below {{'fuse.train_step' op hyperparameters of fuse.sgd: 'dampening' must be finite, got NaN}}
fuse.train_step @t {loss = @loss, params = array<i64: 0>, optimizer = "sgd", hyperparameters = {momentum = 0.9 : f64, dampening = 0x7FF8000000000000 : f64}}

// -----

func.func @loss(%w: tensor<4xf32>, %x: tensor<4xf32>) -> tensor<f32> {
  %l = fuse.mse_loss %w, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<f32>
  return %l : tensor<f32>
}
// expected-error @below {{'fuse.train_step' op hyperparameters of fuse.rmsprop: 'alpha' must be in [0, 1), got 1}}
fuse.train_step @t {loss = @loss, params = array<i64: 0>, optimizer = "rmsprop", hyperparameters = {alpha = 1.0 : f64}}

// -----

// Hyperparameters finite in f64 but not in the parameters' type, where the
// update builds its constants (1 - dampening too): named with the type.
func.func @f(%lr: tensor<f32>, %s: tensor<i64>, %p: tensor<4xf32>, %g: tensor<4xf32>) {
  // expected-error @below {{'fuse.sgd' op 'weight_decay' = 1e+39 overflows the parameters' type 'f32'}}
  %0 = fuse.sgd %lr, %s params(%p : tensor<4xf32>) grads(%g : tensor<4xf32>) states() {weight_decay = 1.0e39 : f64} -> tensor<4xf32>
  return
}
// -----
func.func @f(%lr: tensor<f32>, %s: tensor<i64>, %p: tensor<4xf32>, %g: tensor<4xf32>, %q: tensor<2xf16>, %h: tensor<2xf16>) {
  // expected-error @below {{'fuse.adam' op 'eps' = 1e+05 overflows the parameters' type 'f16'}}
  %0:6 = fuse.adam %lr, %s params(%p, %q : tensor<4xf32>, tensor<2xf16>) grads(%g, %h : tensor<4xf32>, tensor<2xf16>) states(%p, %q, %p, %q : tensor<4xf32>, tensor<2xf16>, tensor<4xf32>, tensor<2xf16>) {eps = 1.0e5 : f64} -> tensor<4xf32>, tensor<2xf16>, tensor<4xf32>, tensor<2xf16>, tensor<4xf32>, tensor<2xf16>
  return
}
// -----
func.func @f(%lr: tensor<f32>, %s: tensor<i64>, %p: tensor<4xf16>, %g: tensor<4xf16>) {
  // expected-error @below {{'fuse.sgd' op 1 - 'dampening' = 65520.5 overflows the parameters' type 'f16'}}
  %0:2 = fuse.sgd %lr, %s params(%p : tensor<4xf16>) grads(%g : tensor<4xf16>) states(%p : tensor<4xf16>) {momentum = 0.9 : f64, dampening = -65519.5 : f64} -> tensor<4xf16>, tensor<4xf16>
  return
}

// -----

func.func @loss(%w: tensor<4xbf16>, %x: tensor<4xbf16>) -> tensor<bf16> {
  %l = fuse.mse_loss %w, %x : (tensor<4xbf16>, tensor<4xbf16>) -> tensor<bf16>
  return %l : tensor<bf16>
}
// expected-error @below {{'fuse.train_step' op hyperparameters of fuse.rmsprop: 'weight_decay' = 1e+39 overflows the parameters' type 'bf16'}}
fuse.train_step @t {loss = @loss, params = array<i64: 0>, optimizer = "rmsprop", hyperparameters = {weight_decay = 1.0e39 : f64}}

// -----

// Element counts that overflow int64 do not wrap.
func.func @f(%x: tensor<4294967296x4294967296xf32>) {
  // expected-error @below {{'fuse.reshape' op input shape 4294967296x4294967296 has more elements than fit in 64 bits}}
  %0 = fuse.reshape %x : (tensor<4294967296x4294967296xf32>) -> tensor<0xf32>
  return
}
// -----
func.func @f(%x: tensor<?xf32>) {
  // expected-error @below {{'fuse.reshape' op result shape ?x4294967296x4294967296 has more elements than fit in 64 bits}}
  %0 = fuse.reshape %x : (tensor<?xf32>) -> tensor<?x4294967296x4294967296xf32>
  return
}

// -----

// Windows, strides, dilations and padding are bounded so that no derived
// size overflows.
func.func @f(%x: tensor<1x4x4x1xf32>) {
  // expected-error @below {{'window' must be at most 2147483647}}
  // expected-error @below {{'fuse.avg_pool2d' op failed to infer returned types}}
  %0 = fuse.avg_pool2d %x {window = array<i64: 2305843009213693952, 1>, padding = array<i64: 2305843009213693951, 2305843009213693951, 0, 0>} : (tensor<1x4x4x1xf32>) -> tensor<1x1x4x1xf32>
  return
}
// -----
func.func @f(%x: tensor<1x4x4x1xf32>) {
  // expected-error @below {{'strides' must be at most 2147483647}}
  // expected-error @below {{'fuse.max_pool2d' op failed to infer returned types}}
  %0 = fuse.max_pool2d %x {window = array<i64: 2, 2>, strides = array<i64: 2305843009213693952, 1>} : (tensor<1x4x4x1xf32>) -> tensor<1x1x3x1xf32>
  return
}
// -----
func.func @f(%x: tensor<1x4x4x1xf32>) {
  // expected-error @below {{pool window 65536x65536 has more than 2147483647 elements}}
  // expected-error @below {{'fuse.avg_pool2d' op failed to infer returned types}}
  %0 = fuse.avg_pool2d %x {window = array<i64: 65536, 65536>, padding = array<i64: 65535, 65535, 65535, 65535>} : (tensor<1x4x4x1xf32>) -> tensor<1x2x2x1xf32>
  return
}
// -----
func.func @f(%x: tensor<2x4611686018427387903x1x1xf32>) {
  // expected-error @below {{the padded input of shape 2x4611686018427387903x1x1 with padding [1, 1, 0, 0] has more elements than fit in 64 bits}}
  // expected-error @below {{'fuse.max_pool2d' op failed to infer returned types}}
  %0 = fuse.max_pool2d %x {window = array<i64: 2, 1>, padding = array<i64: 1, 1, 0, 0>} : (tensor<2x4611686018427387903x1x1xf32>) -> tensor<2x2305843009213693952x1x1xf32>
  return
}
// -----
func.func @f(%x: tensor<1x28x28x1xf32>, %k: tensor<3x3x1x8xf32>) {
  // expected-error @below {{'padding' must be at most 2147483647}}
  // expected-error @below {{'fuse.conv2d' op failed to infer returned types}}
  %0 = fuse.conv2d %x, %k {padding = array<i64: 2305843009213693952, 0, 0, 0>} : (tensor<1x28x28x1xf32>, tensor<3x3x1x8xf32>) -> tensor<1x26x26x8xf32>
  return
}
// -----
func.func @f(%x: tensor<1x28x28x1xf32>, %k: tensor<3x3x1x8xf32>) {
  // expected-error @below {{'dilations' must be at most 2147483647}}
  // expected-error @below {{'fuse.conv2d' op failed to infer returned types}}
  %0 = fuse.conv2d %x, %k {dilations = array<i64: 4611686018427387904, 1>} : (tensor<1x28x28x1xf32>, tensor<3x3x1x8xf32>) -> tensor<1x26x26x8xf32>
  return
}
// -----
func.func @f(%x: tensor<1x28x28x1xf32>, %k: tensor<4611686018427387904x3x1x8xf32>) {
  // expected-error @below {{the dilated filter window of 4611686018427387904 taps with dilation 3 overflows}}
  // expected-error @below {{'fuse.conv2d' op failed to infer returned types}}
  %0 = fuse.conv2d %x, %k {dilations = array<i64: 3, 1>} : (tensor<1x28x28x1xf32>, tensor<4611686018427387904x3x1x8xf32>) -> tensor<1x26x26x8xf32>
  return
}
// -----
// Gradients of window ops verify their attributes as the forward op does.
func.func @f(%g: tensor<1x1x4x1xf32>, %x: tensor<1x4x4x1xf32>) {
  // expected-error @below {{'window' must be at most 2147483647}}
  %0 = fuse.avg_pool2d_grad %g, %x {window = array<i64: 2305843009213693952, 1>, padding = array<i64: 2305843009213693951, 2305843009213693951, 0, 0>} : (tensor<1x1x4x1xf32>, tensor<1x4x4x1xf32>) -> tensor<1x4x4x1xf32>
  return
}
// -----
func.func @f(%g: tensor<1x2x2x1xf32>, %x: tensor<1x4x4x1xf32>) {
  // expected-error @below {{'fuse.avg_pool2d_grad' op gradient of type 'tensor<1x2x2x1xf32>' does not match the forward result, 'tensor<1x3x3x1xf32>'}}
  %0 = fuse.avg_pool2d_grad %g, %x {window = array<i64: 2, 2>, strides = array<i64: 1, 1>} : (tensor<1x2x2x1xf32>, tensor<1x4x4x1xf32>) -> tensor<1x4x4x1xf32>
  return
}
// -----
func.func @f(%g: tensor<1x26x26x8xf32>, %x: tensor<1x28x28x1xf32>, %k: tensor<3x3x1x8xf32>) {
  // expected-error @below {{'strides' must be at most 2147483647}}
  %0 = fuse.conv2d_input_grad %g, %k, %x {strides = array<i64: 4611686018427387904, 1>} : (tensor<1x26x26x8xf32>, tensor<3x3x1x8xf32>, tensor<1x28x28x1xf32>) -> tensor<1x28x28x1xf32>
  return
}
// -----
func.func @f(%g: tensor<1x26x26x8xf32>, %x: tensor<1x28x28x1xf32>, %k: tensor<3x3x1x8xf32>) {
  // expected-error @below {{'fuse.conv2d_filter_grad' op gradient of type 'tensor<1x26x26x8xf32>' does not match the forward result, 'tensor<1x28x28x8xf32>'}}
  %0 = fuse.conv2d_filter_grad %x, %g, %k {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x28x28x1xf32>, tensor<1x26x26x8xf32>, tensor<3x3x1x8xf32>) -> tensor<3x3x1x8xf32>
  return
}

// -----

// Labels are signed: an i1 label 1 would be class -1.
func.func @f(%x: tensor<4x2xf32>, %y: tensor<4xi1>) {
  // expected-error @below {{i1 labels are not supported (an i1 1 is -1 as a signed integer); use i8 or wider}}
  // expected-error @below {{'fuse.softmax_cross_entropy' op failed to infer returned types}}
  %0 = fuse.softmax_cross_entropy %x, %y : (tensor<4x2xf32>, tensor<4xi1>) -> tensor<f32>
  return
}

// -----

// fuse-workspace's slot number goes on a buffer, never on a tensor.
// expected-error @below {{'fuse.workspace_slot' must be a slot number (a non-negative integer) on a buffer argument, got 0 : i64 on 'tensor<4xf32>'}}
func.func @f(%y: tensor<4xf32> {fuse.workspace_slot = 0 : i64}) {
  return
}

// -----

// expected-error @below {{'fuse.workspace_slot' must be a slot number (a non-negative integer) on a buffer argument, got -1 : i64 on 'memref<4xf32>'}}
func.func @f(%y: memref<4xf32> {fuse.workspace_slot = -1 : i64}) {
  return
}

// -----

// expected-error @below {{'fuse.class_labels' must be a positive integer (the class count) on an integer tensor argument, got 0 : i64 on 'tensor<4xi32>'}}
func.func @f(%y: tensor<4xi32> {fuse.class_labels = 0 : i64}) {
  return
}

// -----

// expected-error @below {{'fuse.class_labels' must be a positive integer (the class count) on an integer tensor argument, got 10 : i64 on 'tensor<4xf32>'}}
func.func @f(%y: tensor<4xf32> {fuse.class_labels = 10 : i64}) {
  return
}
// -----
func.func @f(%x: tensor<4xf32>) {
  // expected-error @below {{'fuse.gelu' op approximate must be "none" or "tanh", got "fast"}}
  %0 = fuse.gelu %x {approximate = "fast"} : tensor<4xf32>
  return
}
// -----
func.func @f(%x: tensor<4xi32>) {
  // expected-error @below {{'fuse.erf' op operand #0 must be ranked tensor of floating-point values}}
  %0 = fuse.erf %x : tensor<4xi32>
  return
}
// -----
func.func @f(%x: tensor<4xf32>) {
  // expected-error @below {{'fuse.leaky_relu' op alpha must be finite}}
  %0 = fuse.leaky_relu %x {alpha = 0x7FF0000000000000 : f64} : tensor<4xf32>
  return
}
// -----
func.func @f(%x: tensor<4xf32>) {
  // expected-error @below {{'fuse.cast' op requires the same shape for all operands and results}}
  %0 = fuse.cast %x : (tensor<4xf32>) -> tensor<5xi32>
  return
}
// -----
func.func @f(%x: tensor<8xf32>) {
  // expected-error @below {{'fuse.slice' op dimension 0: 4 elements from offset 2 with stride 2 exceed the input's 8}}
  %0 = fuse.slice %x {offsets = array<i64: 2>, strides = array<i64: 2>} : (tensor<8xf32>) -> tensor<4xf32>
  return
}
// -----
func.func @f(%x: tensor<8xf32>) {
  // expected-error @below {{'fuse.slice' op dimension 0: offset -1 and stride 1 must be at least 0 and 1}}
  %0 = fuse.slice %x {offsets = array<i64: -1>} : (tensor<8xf32>) -> tensor<4xf32>
  return
}
// -----
func.func @f(%x: tensor<8x4xf32>) {
  // expected-error @below {{'fuse.slice' op has 1 offsets for an input of rank 2}}
  %0 = fuse.slice %x {offsets = array<i64: 0>} : (tensor<8x4xf32>) -> tensor<4x4xf32>
  return
}
// -----
func.func @f(%x: tensor<?x4xf32>) {
  // expected-error @below {{'fuse.slice' op dimension 0: a dynamic input dimension is taken whole}}
  %0 = fuse.slice %x {offsets = array<i64: 0, 0>} : (tensor<?x4xf32>) -> tensor<2x4xf32>
  return
}
// -----
func.func @f(%x: tensor<?x4xf32>) {
  // expected-error @below {{'fuse.slice' op dimension 0: a dynamic result dimension takes the whole dynamic input dimension}}
  %0 = fuse.slice %x {offsets = array<i64: 1, 0>} : (tensor<?x4xf32>) -> tensor<?x4xf32>
  return
}
// -----
func.func @f(%x: tensor<8xf32>) {
  // expected-error @below {{'fuse.slice' op result element type 'f64' differs from the input's 'f32'}}
  %0 = fuse.slice %x {offsets = array<i64: 0>} : (tensor<8xf32>) -> tensor<4xf64>
  return
}
// -----
func.func @f(%x: tensor<8xf32>) {
  // expected-error @below {{dimension 0: padding must be at least 0}}
  // expected-error @below {{'fuse.pad' op failed to infer returned types}}
  %0 = fuse.pad %x {low = array<i64: -1>, high = array<i64: 0>} : (tensor<8xf32>) -> tensor<7xf32>
  return
}
// -----
func.func @f(%x: tensor<?x8xf32>) {
  // expected-error @below {{dimension 0 is dynamic: only static dimensions are padded}}
  // expected-error @below {{'fuse.pad' op failed to infer returned types}}
  %0 = fuse.pad %x {low = array<i64: 1, 0>, high = array<i64: 0, 0>} : (tensor<?x8xf32>) -> tensor<?x8xf32>
  return
}
// -----
func.func @f(%x: tensor<8xf32>) {
  // expected-error @below {{low, high and interior need 1 entries each, one per input dimension}}
  // expected-error @below {{'fuse.pad' op failed to infer returned types}}
  %0 = fuse.pad %x {low = array<i64: 0, 0>, high = array<i64: 0>} : (tensor<8xf32>) -> tensor<8xf32>
  return
}
// -----
func.func @f(%x: tensor<8xf32>) {
  // expected-error @below {{dimension 0: the padded size overflows 64 bits}}
  // expected-error @below {{'fuse.pad' op failed to infer returned types}}
  %0 = fuse.pad %x {low = array<i64: 0>, high = array<i64: 0>, interior = array<i64: 9223372036854775807>} : (tensor<8xf32>) -> tensor<8xf32>
  return
}
// -----
func.func @f(%a: tensor<2x3xf32>, %b: tensor<3x3xf32>) {
  // expected-error @below {{input #1 shape 3x3 differs from the others outside axis 1}}
  // expected-error @below {{'fuse.concat' op failed to infer returned types}}
  %0 = fuse.concat %a, %b {axis = 1 : i64} : (tensor<2x3xf32>, tensor<3x3xf32>) -> tensor<2x6xf32>
  return
}
// -----
func.func @f(%a: tensor<2x3xf32>, %b: tensor<2x3xi32>) {
  // expected-error @below {{input #1 has type 'tensor<2x3xi32>'; expected rank 2 and element type 'f32'}}
  // expected-error @below {{'fuse.concat' op failed to infer returned types}}
  %0 = fuse.concat %a, %b {axis = 0 : i64} : (tensor<2x3xf32>, tensor<2x3xi32>) -> tensor<4x3xf32>
  return
}
// -----
func.func @f(%a: tensor<?x3xf32>) {
  // expected-error @below {{input #0 has a dynamic size along axis 0; concat needs static sizes there}}
  // expected-error @below {{'fuse.concat' op failed to infer returned types}}
  %0 = fuse.concat %a, %a {axis = 0 : i64} : (tensor<?x3xf32>, tensor<?x3xf32>) -> tensor<?x3xf32>
  return
}
// -----
func.func @f(%a: tensor<2x3xf32>) {
  // expected-error @below {{axis 2 is out of range for inputs of rank 2}}
  // expected-error @below {{'fuse.concat' op failed to infer returned types}}
  %0 = fuse.concat %a {axis = 2 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return
}
// -----
func.func @f() {
  // expected-error @below {{'fuse.iota' op result must have a static shape, got 'tensor<?x4xi32>'}}
  %0 = fuse.iota {axis = 0 : i64} : tensor<?x4xi32>
  return
}
// -----
func.func @f() {
  // expected-error @below {{'fuse.iota' op axis 2 is out of range for rank 2}}
  %0 = fuse.iota {axis = 2 : i64} : tensor<4x4xi32>
  return
}
// -----
func.func @f(%t: tensor<f32>, %i: tensor<4xi32>) {
  // expected-error @below {{table must have rank 1 or more}}
  // expected-error @below {{'fuse.gather' op failed to infer returned types}}
  %0 = fuse.gather %t, %i : (tensor<f32>, tensor<4xi32>) -> tensor<4xf32>
  return
}
// -----
func.func @f(%t: tensor<8x4xf32>, %i: tensor<4xf32>) {
  // expected-error @below {{'fuse.gather' op operand #1 must be ranked tensor of signless integer values}}
  %0 = fuse.gather %t, %i : (tensor<8x4xf32>, tensor<4xf32>) -> tensor<4x4xf32>
  return
}
// -----
func.func @f(%t: tensor<8x4xf32>, %i: tensor<5xi32>) {
  // expected-error @below {{'fuse.gather' op inferred type(s) 'tensor<5x4xf32>' are incompatible with return type(s) of operation 'tensor<4x4xf32>'}}
  // expected-error @below {{'fuse.gather' op failed to infer returned types}}
  %0 = fuse.gather %t, %i : (tensor<8x4xf32>, tensor<5xi32>) -> tensor<4x4xf32>
  return
}
// -----
func.func @f(%g: tensor<5x3xf32>, %i: tensor<5xi32>, %t: tensor<8x4xf32>) {
  // expected-error @below {{'fuse.scatter_add' op updates shape 5x3 is not the gathered shape 5x4}}
  %0 = fuse.scatter_add %g, %i, %t : (tensor<5x3xf32>, tensor<5xi32>, tensor<8x4xf32>) -> tensor<8x4xf32>
  return
}
// -----
func.func @f(%x: tensor<2x8xf32>, %s: tensor<4xf32>) {
  // expected-error @below {{'fuse.layer_norm' op scale shape 4 is not the trailing shape of the input 2x8}}
  %0 = fuse.layer_norm %x, %s, %s : (tensor<2x8xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x8xf32>
  return
}
// -----
func.func @f(%x: tensor<2x8xf32>, %s: tensor<8xf32>, %b: tensor<1x8xf32>) {
  // expected-error @below {{'fuse.layer_norm' op scale type 'tensor<8xf32>' differs from the bias type 'tensor<1x8xf32>'}}
  %0 = fuse.layer_norm %x, %s, %b : (tensor<2x8xf32>, tensor<8xf32>, tensor<1x8xf32>) -> tensor<2x8xf32>
  return
}
// -----
func.func @f(%x: tensor<2x8xf32>, %s: tensor<8xf32>) {
  // expected-error @below {{'fuse.layer_norm' op epsilon must be finite and at least 0}}
  %0 = fuse.layer_norm %x, %s, %s {epsilon = -1.0 : f64} : (tensor<2x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  return
}
// -----
func.func @f(%q: tensor<2x8x4xf32>, %k: tensor<2x8x5xf32>) {
  // expected-error @below {{query and key feature sizes differ (4 vs 5)}}
  // expected-error @below {{'fuse.attention' op failed to infer returned types}}
  %0 = fuse.attention %q, %k, %k : (tensor<2x8x4xf32>, tensor<2x8x5xf32>, tensor<2x8x5xf32>) -> tensor<2x8x5xf32>
  return
}
// -----
func.func @f(%q: tensor<2x8x4xf32>, %k: tensor<2x6x4xf32>, %v: tensor<2x7x4xf32>) {
  // expected-error @below {{key and value sequence lengths differ (6 vs 7)}}
  // expected-error @below {{'fuse.attention' op failed to infer returned types}}
  %0 = fuse.attention %q, %k, %v : (tensor<2x8x4xf32>, tensor<2x6x4xf32>, tensor<2x7x4xf32>) -> tensor<2x8x4xf32>
  return
}
// -----
func.func @f(%q: tensor<2x8x4xf32>, %k: tensor<3x8x4xf32>) {
  // expected-error @below {{leading dimension 0 differs: query 2x8x4, key 3x8x4, value 3x8x4}}
  // expected-error @below {{'fuse.attention' op failed to infer returned types}}
  %0 = fuse.attention %q, %k, %k : (tensor<2x8x4xf32>, tensor<3x8x4xf32>, tensor<3x8x4xf32>) -> tensor<2x8x4xf32>
  return
}
// -----
func.func @f(%q: tensor<8xf32>) {
  // expected-error @below {{expects a query of rank 2 or more}}
  // expected-error @below {{'fuse.attention' op failed to infer returned types}}
  %0 = fuse.attention %q, %q, %q : (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return
}
// -----
func.func @f(%q: tensor<8x4xf32>) {
  // expected-error @below {{scale must be finite and positive}}
  // expected-error @below {{'fuse.attention' op failed to infer returned types}}
  %0 = fuse.attention %q, %q, %q {scale = 0.0 : f64} : (tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
  return
}
// -----
func.func @f(%q: tensor<8x4xf32>, %k: tensor<8x4xf64>) {
  // expected-error @below {{query, key and value element types differ}}
  // expected-error @below {{'fuse.attention' op failed to infer returned types}}
  %0 = fuse.attention %q, %k, %k : (tensor<8x4xf32>, tensor<8x4xf64>, tensor<8x4xf64>) -> tensor<8x4xf32>
  return
}
// -----
func.func @f(%q: tensor<8x4xf32>) {
  // expected-error @below {{'fuse.attention' op inferred type(s) 'tensor<8x4xf32>' are incompatible with return type(s) of operation 'tensor<8x8xf32>'}}
  // expected-error @below {{'fuse.attention' op failed to infer returned types}}
  %0 = fuse.attention %q, %q, %q : (tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x8xf32>
  return
}
// -----
func.func @f(%q: tensor<8x4xf32>, %g: tensor<8x3xf32>) {
  // expected-error @below {{result_grad type 'tensor<8x3xf32>' is not the attention's result type 'tensor<8x4xf32>'}}
  // expected-error @below {{'fuse.attention_grad' op failed to infer returned types}}
  %0:3 = fuse.attention_grad %q, %q, %q, %q, %g {scale = 0.5 : f64} : (tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x3xf32>) -> (tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>)
  return
}
// -----
func.func @loss(%w: tensor<4xf32>, %x: tensor<4xf32>) -> tensor<f32> {
  %l = fuse.mse_loss %w, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<f32>
  return %l : tensor<f32>
}
// expected-error @below {{'fuse.train_step' op no_decay index 1 is not one of the parameters}}
fuse.train_step @t {loss = @loss, params = array<i64: 0>, optimizer = "adam", no_decay = array<i64: 1>}
// -----
func.func @loss(%w: tensor<4xf32>, %x: tensor<4xf32>) -> tensor<f32> {
  %l = fuse.mse_loss %w, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<f32>
  return %l : tensor<f32>
}
// expected-error @below {{'fuse.train_step' op no_decay index 0 appears more than once}}
fuse.train_step @t {loss = @loss, params = array<i64: 0>, optimizer = "sgd", no_decay = array<i64: 0, 0>}
// -----
func.func @f(%t: tensor<0x4xf32>, %i: tensor<3xi32>) {
  // expected-error @below {{table has no rows: every index would be out of range}}
  // expected-error @below {{'fuse.gather' op failed to infer returned types}}
  %0 = fuse.gather %t, %i : (tensor<0x4xf32>, tensor<3xi32>) -> tensor<3x4xf32>
  return
}
// -----
func.func @f(%a: tensor<?x64xf32>, %b: tensor<4x32xf32>) {
  // expected-error @below {{input #1 shape 4x32 differs from the others outside axis 1}}
  // expected-error @below {{'fuse.concat' op failed to infer returned types}}
  %0 = fuse.concat %a, %b {axis = 1 : i64} : (tensor<?x64xf32>, tensor<4x32xf32>) -> tensor<4x96xf32>
  return
}
// -----
func.func @f(%x: tensor<4xi32>) {
  // expected-error @below {{value -INF is not a value of 'i32'}}
  // expected-error @below {{'fuse.pad' op failed to infer returned types}}
  %0 = fuse.pad %x {low = array<i64: 1>, high = array<i64: 0>, value = 0xFFF0000000000000 : f64} : (tensor<4xi32>) -> tensor<5xi32>
  return
}
// -----
func.func @f(%x: tensor<4xi8>) {
  // expected-error @below {{value 5.000000e-01 is not a value of 'i8'}}
  // expected-error @below {{'fuse.pad' op failed to infer returned types}}
  %0 = fuse.pad %x {low = array<i64: 1>, high = array<i64: 0>, value = 0.5 : f64} : (tensor<4xi8>) -> tensor<5xi8>
  return
}
// -----
func.func @f() {
  // expected-error @below {{'fuse.iota' op indices up to 199 do not fit in 'i8'}}
  %0 = fuse.iota {axis = 0 : i64} : tensor<200xi8>
  return
}

// -----

func.func @loss(%w: tensor<4xf32>, %x: tensor<4xf32>) -> tensor<f32> {
  %l = fuse.mse_loss %w, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<f32>
  return %l : tensor<f32>
}
// expected-error @below {{invalid #fuse.lr_schedule: warmup must be at least 0, got -5}}
fuse.train_step @t {loss = @loss, params = array<i64: 0>, optimizer = "sgd", lr_schedule = #fuse.lr_schedule<cosine, warmup = -5, decay_steps = 100>}

// -----

// expected-error @below {{invalid #fuse.lr_schedule: 'cosine' needs decay_steps of at least 1, got 0}}
func.func @f() attributes {s = #fuse.lr_schedule<cosine>} {
  return
}

// -----

// expected-error @below {{invalid #fuse.lr_schedule: 'constant' takes no decay_steps}}
func.func @f() attributes {s = #fuse.lr_schedule<constant, decay_steps = 10>} {
  return
}

// -----

// expected-error @below {{invalid #fuse.lr_schedule: gamma must be a finite number above 0}}
func.func @f() attributes {s = #fuse.lr_schedule<step, decay_steps = 10, gamma = 0.0>} {
  return
}

// -----

// expected-error @below {{invalid #fuse.lr_schedule: min must be in [0, 1]}}
func.func @f() attributes {s = #fuse.lr_schedule<linear, decay_steps = 10, min = 1.5>} {
  return
}

// -----

// expected-error @below {{'cosine' takes no parameter 'gamma'}}
func.func @f() attributes {s = #fuse.lr_schedule<cosine, decay_steps = 10, gamma = 0.5>} {
  return
}

// -----

// expected-error @below {{'warmup' appears more than once}}
func.func @f() attributes {s = #fuse.lr_schedule<constant, warmup = 1, warmup = 2>} {
  return
}

// -----

// expected-error @below {{unknown learning-rate schedule 'onecycle', expected constant, step, exponential, cosine or linear}}
func.func @f() attributes {s = #fuse.lr_schedule<onecycle>} {
  return
}

// -----

func.func @loss(%w: tensor<4xf32>, %x: tensor<4xf32>) -> tensor<f32> {
  %l = fuse.mse_loss %w, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<f32>
  return %l : tensor<f32>
}
// expected-error @below {{'fuse.train_step' op clip_norm must be a finite number above 0, got 0}}
fuse.train_step @t {loss = @loss, params = array<i64: 0>, optimizer = "sgd", clip_norm = 0.0 : f64}

// -----

func.func @loss(%w: tensor<4xf32>, %x: tensor<4xf32>) -> tensor<f32> {
  %l = fuse.mse_loss %w, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<f32>
  return %l : tensor<f32>
}
// expected-error @below {{'fuse.train_step' op clip_value must be a finite number above 0, got -1}}
fuse.train_step @t {loss = @loss, params = array<i64: 0>, optimizer = "sgd", clip_value = -1.0 : f64}

// -----

func.func @f(%g: tensor<4xf32>) {
  // expected-error @below {{'fuse.clip_gradients' op clips nothing: needs clip_norm or clip_value}}
  %0 = fuse.clip_gradients %g : tensor<4xf32>
  return
}

// -----

func.func @f(%g: tensor<4xf32>) {
  // expected-error @below {{'fuse.clip_gradients' op clip_norm must be a finite number above 0, got inf}}
  %0 = fuse.clip_gradients %g {clip_norm = 0x7FF0000000000000 : f64} : tensor<4xf32>
  return
}

// -----

func.func @f(%lr: tensor<f32>, %s: tensor<i64>) {
  // expected-error @below {{'fuse.lr_schedule' op requires attribute 'schedule'}}
  %0 = fuse.lr_schedule %lr, %s
  return
}

// -----

func.func @loss(%w: tensor<4xf32>, %x: tensor<4xf32>) -> tensor<f32> {
  %l = fuse.mse_loss %w, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<f32>
  return %l : tensor<f32>
}
// expected-error @below {{'fuse.train_step' op precision is "f16": expected "f32" or "bf16"}}
fuse.train_step @t {loss = @loss, params = array<i64: 0>, optimizer = "sgd", precision = "f16"}

// -----

func.func @loss(%w: tensor<4xf32>, %x: tensor<4xf32>) -> tensor<f32> {
  %l = fuse.mse_loss %w, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<f32>
  return %l : tensor<f32>
}
// expected-error @below {{'fuse.train_step' op master_weights is "halves": expected "copy" or "split"}}
fuse.train_step @t {loss = @loss, params = array<i64: 0>, optimizer = "sgd", precision = "bf16", master_weights = "halves"}

// -----

// Mixed precision sums bf16 or f16 products into f32, nothing else.
func.func @f(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) {
  // expected-error @below {{'fuse.matmul' op inferred type(s) 'tensor<2x4xf32>' are incompatible with return type(s) of operation 'tensor<2x4xbf16>'}}
  // expected-error @below {{'fuse.matmul' op failed to infer returned types}}
  %0 = fuse.matmul %a, %b : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xbf16>
  return
}

// -----

func.func @f(%g: tensor<4xf64>) {
  // expected-error @below {{'fuse.all_reduce' op reduces f32 tensors; operand #0 is 'tensor<4xf64>'}}
  %0 = fuse.all_reduce sum %g : tensor<4xf64>
  return
}

// -----

func.func @f(%a: tensor<2x3xbf16>, %b: tensor<3x4xbf16>) {
  // expected-error @below {{'fuse.matmul' op inferred type(s) 'tensor<2x4xbf16>' are incompatible with return type(s) of operation 'tensor<2x4xf64>'}}
  // expected-error @below {{'fuse.matmul' op failed to infer returned types}}
  %0 = fuse.matmul %a, %b : (tensor<2x3xbf16>, tensor<3x4xbf16>) -> tensor<2x4xf64>
  return
}

// -----

func.func @f(%g: tensor<?xf32>) {
  // expected-error @below {{'fuse.all_reduce' op needs static shapes (every rank's buffer the same size); operand #0 is 'tensor<?xf32>'}}
  %0 = fuse.all_reduce mean %g : tensor<?xf32>
  return
}

// -----

func.func @f(%a: tensor<2x3xbf16>, %b: tensor<3x4xf32>) {
  // expected-error @below {{operands have different element types ('bf16' vs 'f32')}}
  // expected-error @below {{'fuse.matmul' op failed to infer returned types}}
  %0 = fuse.matmul %a, %b : (tensor<2x3xbf16>, tensor<3x4xf32>) -> tensor<2x4xf32>
  return
}

// -----

func.func @f(%g: tensor<4xf32>, %w: tensor<2xf32>) {
  // expected-error @below {{'fuse.all_reduce' op operand #1 must be 0D tensor of 32-bit float values}}
  %0 = "fuse.all_reduce"(%g, %w) <{kind = 0 : i32, operandSegmentSizes = array<i32: 1, 1>}> : (tensor<4xf32>, tensor<2xf32>) -> tensor<4xf32>
  return
}

// -----

// A convolution's gradients multiply two factors of one element type: the
// result's, or bf16 ones summed into an f32 result (the bf16 policy's).
func.func @f(%d: tensor<1x2x2x4xbf16>, %k: tensor<3x3x2x4xf32>, %x: tensor<1x4x4x2xf32>) {
  // expected-error @below {{'fuse.conv2d_input_grad' op operands have different element types (grad: 'bf16', filter: 'f32')}}
  %0 = fuse.conv2d_input_grad %d, %k, %x : (tensor<1x2x2x4xbf16>, tensor<3x3x2x4xf32>, tensor<1x4x4x2xf32>) -> tensor<1x4x4x2xf32>
  return
}

// -----

func.func @f(%d: tensor<1x2x2x4xf32>, %k: tensor<3x3x2x4xf32>, %x: tensor<1x4x4x2xbf16>) {
  // expected-error @below {{'fuse.conv2d_filter_grad' op operands have different element types (input: 'bf16', grad: 'f32')}}
  %0 = fuse.conv2d_filter_grad %x, %d, %k : (tensor<1x4x4x2xbf16>, tensor<1x2x2x4xf32>, tensor<3x3x2x4xf32>) -> tensor<3x3x2x4xf32>
  return
}

// -----

func.func @f(%d: tensor<1x2x2x4xf16>, %k: tensor<3x3x2x4xf16>, %x: tensor<1x4x4x2xf32>) {
  // expected-error @below {{'fuse.conv2d_input_grad' op takes grad and filter of the result's element type or, mixed, bf16 ones with an f32 result; got 'f16' operands and a 'f32' result}}
  %0 = fuse.conv2d_input_grad %d, %k, %x : (tensor<1x2x2x4xf16>, tensor<3x3x2x4xf16>, tensor<1x4x4x2xf32>) -> tensor<1x4x4x2xf32>
  return
}

// -----

func.func @f(%d: tensor<1x2x2x4xf32>, %k: tensor<3x3x2x4xbf16>, %x: tensor<1x4x4x2xf32>) {
  // expected-error @below {{'fuse.conv2d_filter_grad' op takes input and grad of the result's element type or, mixed, bf16 ones with an f32 result; got 'f32' operands and a 'bf16' result}}
  %0 = fuse.conv2d_filter_grad %x, %d, %k : (tensor<1x4x4x2xf32>, tensor<1x2x2x4xf32>, tensor<3x3x2x4xbf16>) -> tensor<3x3x2x4xbf16>
  return
}

// -----

// The mixed gradients' shapes are still the forward convolution's.
func.func @f(%d: tensor<1x3x3x4xbf16>, %k: tensor<3x3x2x4xbf16>, %x: tensor<1x4x4x2xf32>) {
  // expected-error @below {{'fuse.conv2d_input_grad' op gradient of type 'tensor<1x3x3x4xbf16>' does not match the forward result, 'tensor<1x2x2x4xbf16>'}}
  %0 = fuse.conv2d_input_grad %d, %k, %x : (tensor<1x3x3x4xbf16>, tensor<3x3x2x4xbf16>, tensor<1x4x4x2xf32>) -> tensor<1x4x4x2xf32>
  return
}

// -----

func.func @f() {
  // expected-error @below {{'fuse.all_reduce' op needs at least one tensor to reduce}}
  "fuse.all_reduce"() <{kind = 0 : i32, operandSegmentSizes = array<i32: 0, 0>}> : () -> ()
  return
}

// -----

func.func @f(%x: tensor<f32>, %s: tensor<i64>) {
  // expected-error @below {{'fuse.dropout' op with an offset needs rows: a tensor of rank 1 or more, got 'tensor<f32>'}}
  %0 = fuse.dropout %x, %s offset %s {rate = 0.5 : f32} : tensor<f32>
  return
}
