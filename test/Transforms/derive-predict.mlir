// RUN: fuse-opt %s --fuse-derive-predict --split-input-file --verify-diagnostics | FileCheck %s

// An MLP with dropout: the prediction function takes the parameters (in
// `params` order) then the inputs the logits read (not the labels, not the
// step counter), computes the logits with dropout off and returns them
// and their softmax, the class probabilities.
// The train_step stays.
// CHECK-LABEL: func.func @train_predict
// CHECK-SAME: (%[[W1:[^:]*]]: tensor<6x4xf32>, %[[B1:[^:]*]]: tensor<4xf32>, %[[W2:[^:]*]]: tensor<4x3xf32>, %[[X:[^:]*]]: tensor<?x6xf32>) -> (tensor<?x3xf32>, tensor<?x3xf32>)
// CHECK: %[[H:.*]] = fuse.matmul %[[X]], %[[W1]]
// CHECK: %[[HB:.*]] = fuse.add %[[H]], %[[B1]]
// CHECK: %[[A:.*]] = fuse.relu %[[HB]]
// CHECK-NOT: fuse.dropout
// CHECK: %[[O:.*]] = fuse.matmul %[[A]], %[[W2]]
// CHECK-NOT: fuse.softmax_cross_entropy
// CHECK: %[[P:.*]] = fuse.softmax %[[O]] : tensor<?x3xf32>
// CHECK: return %[[O]], %[[P]] : tensor<?x3xf32>, tensor<?x3xf32>
// CHECK: fuse.train_step @train
func.func @loss(%w1: tensor<6x4xf32>, %b1: tensor<4xf32>, %x: tensor<?x6xf32>, %y: tensor<?xi32>, %step: tensor<i64>, %w2: tensor<4x3xf32>) -> tensor<f32> {
  %h = fuse.matmul %x, %w1 : (tensor<?x6xf32>, tensor<6x4xf32>) -> tensor<?x4xf32>
  %hb = fuse.add %h, %b1 : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  %a = fuse.relu %hb : tensor<?x4xf32>
  %d = fuse.dropout %a, %step {rate = 0.5 : f32} : tensor<?x4xf32>
  %o = fuse.matmul %d, %w2 : (tensor<?x4xf32>, tensor<4x3xf32>) -> tensor<?x3xf32>
  %l = fuse.softmax_cross_entropy %o, %y : (tensor<?x3xf32>, tensor<?xi32>) -> tensor<f32>
  return %l : tensor<f32>
}
fuse.train_step @train {loss = @loss, params = array<i64: 0, 1, 5>, optimizer = "sgd", step_arg = 4}

// -----

// A language model: token logits over every position, the labels reshaped
// apart; the tokens are the one input.
// CHECK-LABEL: func.func @lm_predict
// CHECK-SAME: (%[[E:[^:]*]]: tensor<16x4xf32>, %[[T:[^:]*]]: tensor<?x8xi32>) -> (tensor<?x16xf32>, tensor<?x16xf32>)
// CHECK: fuse.gather %[[E]], %[[T]]
// CHECK-NOT: fuse.softmax_cross_entropy
func.func @lm_loss(%e: tensor<16x4xf32>, %t: tensor<?x8xi32>, %y: tensor<?x8xi32>) -> tensor<f32> {
  %h = fuse.gather %e, %t : (tensor<16x4xf32>, tensor<?x8xi32>) -> tensor<?x8x4xf32>
  %f = fuse.reshape %h : (tensor<?x8x4xf32>) -> tensor<?x4xf32>
  %o = fuse.matmul %f, %e {transpose_rhs} : (tensor<?x4xf32>, tensor<16x4xf32>) -> tensor<?x16xf32>
  %labels = fuse.reshape %y : (tensor<?x8xi32>) -> tensor<?xi32>
  %l = fuse.softmax_cross_entropy %o, %labels : (tensor<?x16xf32>, tensor<?xi32>) -> tensor<f32>
  return %l : tensor<f32>
}
fuse.train_step @lm {loss = @lm_loss, params = array<i64: 0>, optimizer = "adam"}

// -----

// A loss without a cross-entropy has no logits: no prediction function.
// CHECK-LABEL: func.func @mse
// CHECK-NOT: func.func @fit_predict
func.func @mse(%w: tensor<4xf32>, %x: tensor<4xf32>) -> tensor<f32> {
  %l = fuse.mse_loss %w, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<f32>
  return %l : tensor<f32>
}
fuse.train_step @fit {loss = @mse, params = array<i64: 0>, optimizer = "sgd"}

// -----

func.func @loss(%w: tensor<2x3xf32>, %x: tensor<?x2xf32>, %y: tensor<?xi32>) -> tensor<f32> {
  %o = fuse.matmul %x, %w : (tensor<?x2xf32>, tensor<2x3xf32>) -> tensor<?x3xf32>
  %l = fuse.softmax_cross_entropy %o, %y : (tensor<?x3xf32>, tensor<?xi32>) -> tensor<f32>
  return %l : tensor<f32>
}
func.func private @train_predict()
// expected-error @below {{'fuse.train_step' op cannot define the prediction function 'train_predict': the symbol exists}}
fuse.train_step @train {loss = @loss, params = array<i64: 0>, optimizer = "sgd"}
