// RUN: fuse-opt %s --fuse-autodiff --split-input-file --verify-diagnostics

func.func @f(%x: tensor<4xf32>, %n: tensor<4xi32>) -> tensor<f32> {
  %s = fuse.reduce_sum %x {axes = array<i64: 0>} : (tensor<4xf32>) -> tensor<f32>
  return %s : tensor<f32>
}
func.func @g(%x: tensor<4xf32>, %n: tensor<4xi32>) {
  // expected-error @below {{'fuse.value_and_grad' op cannot differentiate with respect to argument #1 of type 'tensor<4xi32>': gradients need a float tensor}}
  %l, %dn = fuse.value_and_grad @f(%x, %n) {wrt = array<i64: 1>}
      : (tensor<4xf32>, tensor<4xi32>) -> (tensor<f32>, tensor<4xi32>)
  return
}

// -----

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
func.func @g(%x: tensor<4xf32>) {
  // expected-error @below {{'fuse.value_and_grad' op needs @f to return one 0-d float tensor (a scalar loss)}}
  %l, %dx = fuse.value_and_grad @f(%x) {wrt = array<i64: 0>}
      : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  return
}

// -----

func.func @f(%x: tensor<4xf32>) -> tensor<f32> {
  %s = fuse.reduce_sum %x {axes = array<i64: 0>} : (tensor<4xf32>) -> tensor<f32>
  return %s : tensor<f32>
}
func.func @g(%x: tensor<4xf32>) {
  // expected-error @below {{'fuse.value_and_grad' op results must be the loss and one gradient per wrt argument: (tensor<f32>, tensor<4xf32>)}}
  %l, %dx = fuse.value_and_grad @f(%x) {wrt = array<i64: 0>}
      : (tensor<4xf32>) -> (tensor<f32>, tensor<3xf32>)
  return
}

// -----

func.func @g(%x: tensor<4xf32>) {
  // expected-error @below {{'fuse.value_and_grad' op no function named @nope}}
  %l, %dx = fuse.value_and_grad @nope(%x) {wrt = array<i64: 0>}
      : (tensor<4xf32>) -> (tensor<f32>, tensor<4xf32>)
  return
}

// -----

func.func @f(%x: tensor<4xf32>) -> tensor<f32> {
  // expected-error @below {{'tensor.cast' op has no gradient rule, needed to differentiate @f with respect to argument #0}}
  %c = tensor.cast %x : tensor<4xf32> to tensor<?xf32>
  %s = fuse.reduce_sum %c {axes = array<i64: 0>} : (tensor<?xf32>) -> tensor<f32>
  return %s : tensor<f32>
}
func.func @g(%x: tensor<4xf32>) {
  %l, %dx = fuse.value_and_grad @f(%x) {wrt = array<i64: 0>}
      : (tensor<4xf32>) -> (tensor<f32>, tensor<4xf32>)
  return
}

// -----

// A second-order gradient through attention: its gradient op has no rule.
func.func @att(%q: tensor<4x8xf32>) -> tensor<f32> {
  // expected-error @below {{'fuse.attention_grad' op has no gradient rule, needed to differentiate @grad_norm with respect to argument #0}}
  %o = fuse.attention %q, %q, %q {causal} : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %l = fuse.reduce_sum %o {axes = array<i64: 0, 1>} : (tensor<4x8xf32>) -> tensor<f32>
  return %l : tensor<f32>
}
func.func @grad_norm(%q: tensor<4x8xf32>) -> tensor<f32> {
  %r:2 = fuse.value_and_grad @att(%q) {wrt = array<i64: 0>} : (tensor<4x8xf32>) -> (tensor<f32>, tensor<4x8xf32>)
  %s = fuse.reduce_sum %r#1 {axes = array<i64: 0, 1>} : (tensor<4x8xf32>) -> tensor<f32>
  return %s : tensor<f32>
}
func.func @second(%q: tensor<4x8xf32>) -> (tensor<f32>, tensor<4x8xf32>) {
  %r:2 = fuse.value_and_grad @grad_norm(%q) {wrt = array<i64: 0>} : (tensor<4x8xf32>) -> (tensor<f32>, tensor<4x8xf32>)
  return %r#0, %r#1 : tensor<f32>, tensor<4x8xf32>
}
