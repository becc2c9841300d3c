// RUN: fuse-opt %s --fuse-derive-eval --split-input-file --verify-diagnostics | FileCheck %s

// An MLP with dropout: the evaluation function takes the parameters (in
// `params` order) then the batch, without the step counter; dropout passes
// its input through; a softmax cross-entropy over [N, 3] logits adds the
// number of rows whose label's logit is the largest. The train_step stays.
// CHECK-LABEL: func.func @train_eval
// CHECK-SAME: (%[[W1:[^:]*]]: tensor<6x4xf32>, %[[B1:[^:]*]]: tensor<4xf32>, %[[W2:[^:]*]]: tensor<4x3xf32>, %[[X:[^:]*]]: tensor<?x6xf32>, %[[Y:[^:]*]]: tensor<?xi32>) -> (tensor<f32>, tensor<i32>)
// CHECK-NOT: tensor<i64>
// CHECK: %[[H:.*]] = fuse.matmul %[[X]], %[[W1]]
// CHECK: %[[HB:.*]] = fuse.add %[[H]], %[[B1]]
// CHECK: %[[A:.*]] = fuse.relu %[[HB]]
// CHECK-NOT: fuse.dropout
// CHECK: %[[O:.*]] = fuse.matmul %[[A]], %[[W2]]
// CHECK: %[[L:.*]] = fuse.softmax_cross_entropy %[[O]], %[[Y]]
// CHECK: %[[IDS:.*]] = fuse.constant dense<[0, 1, 2]> : tensor<3xi32>
// CHECK: %[[COL:.*]] = fuse.expand_dims %[[Y]] {axes = array<i64: 1>}
// CHECK: %[[IS:.*]] = fuse.compare eq, %[[COL]], %[[IDS]] : (tensor<?x1xi32>, tensor<3xi32>) -> tensor<?x3xi1>
// CHECK: %[[NEGINF:.*]] = fuse.constant dense<0xFF800000> : tensor<f32>
// CHECK: %[[SEL:.*]] = fuse.select %[[IS]], %[[O]], %[[NEGINF]]
// CHECK: %[[LABEL:.*]] = fuse.reduce_max %[[SEL]] {axes = array<i64: 1>}
// CHECK: %[[MAX:.*]] = fuse.reduce_max %[[O]] {axes = array<i64: 1>}
// CHECK: %[[RIGHT:.*]] = fuse.compare ge, %[[LABEL]], %[[MAX]]
// CHECK: %[[ZERO:.*]] = fuse.constant dense<0> : tensor<i32>
// CHECK: %[[ONE:.*]] = fuse.constant dense<1> : tensor<i32>
// CHECK: %[[HITS:.*]] = fuse.select %[[RIGHT]], %[[ONE]], %[[ZERO]] : (tensor<?xi1>, tensor<i32>, tensor<i32>) -> tensor<?xi32>
// CHECK: %[[COUNT:.*]] = fuse.reduce_sum %[[HITS]] {axes = array<i64: 0>} : (tensor<?xi32>) -> tensor<i32>
// CHECK: return %[[L]], %[[COUNT]] : tensor<f32>, tensor<i32>
// CHECK: fuse.train_step @train
func.func @loss(%w1: tensor<6x4xf32>, %b1: tensor<4xf32>, %x: tensor<?x6xf32>, %y: tensor<?xi32>, %step: tensor<i64>, %w2: tensor<4x3xf32>) -> tensor<f32> {
  %h = fuse.matmul %x, %w1 : (tensor<?x6xf32>, tensor<6x4xf32>) -> tensor<?x4xf32>
  %hb = fuse.add %h, %b1 : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  %a = fuse.relu %hb : tensor<?x4xf32>
  %d = fuse.dropout %a, %step {rate = 0.2 : f32, seed = 7 : i64} : tensor<?x4xf32>
  %o = fuse.matmul %d, %w2 : (tensor<?x4xf32>, tensor<4x3xf32>) -> tensor<?x3xf32>
  %l = fuse.softmax_cross_entropy %o, %y : (tensor<?x3xf32>, tensor<?xi32>) -> tensor<f32>
  return %l : tensor<f32>
}
fuse.train_step @train {loss = @loss, params = array<i64: 0, 1, 5>, optimizer = "adam", step_arg = 4}

// -----

// Without a cross-entropy there is no accuracy: the loss is the only
// result. A step counter nothing reads leaves no constant behind.
// CHECK-LABEL: func.func @fit_eval
// CHECK-SAME: (%[[W:[^:]*]]: tensor<4xf32>, %[[X:[^:]*]]: tensor<4xf32>) -> tensor<f32>
// CHECK-NEXT: %[[L:.*]] = fuse.mse_loss %[[W]], %[[X]]
// CHECK-NEXT: return %[[L]] : tensor<f32>
func.func @mse(%x: tensor<4xf32>, %step: tensor<i64>, %w: tensor<4xf32>) -> tensor<f32> {
  %l = fuse.mse_loss %w, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<f32>
  return %l : tensor<f32>
}
fuse.train_step @fit {loss = @mse, params = array<i64: 2>, optimizer = "sgd", step_arg = 1}

// -----

// Without step_arg every argument that is not a parameter is batch input,
// an i64 one too.
// CHECK-LABEL: func.func @sgd_eval
// CHECK-SAME: (%[[W:[^:]*]]: tensor<3x2xf32>, %[[X:[^:]*]]: tensor<?x3xf32>, %[[Y:[^:]*]]: tensor<?xi32>, %[[K:[^:]*]]: tensor<i64>) -> (tensor<f32>, tensor<i32>)
// CHECK: %[[O:.*]] = fuse.matmul %[[X]], %[[W]]
// CHECK: fuse.softmax_cross_entropy %[[O]], %[[Y]]
// CHECK: fuse.reduce_sum
func.func @loss(%x: tensor<?x3xf32>, %w: tensor<3x2xf32>, %y: tensor<?xi32>, %k: tensor<i64>) -> tensor<f32> {
  %o = fuse.matmul %x, %w : (tensor<?x3xf32>, tensor<3x2xf32>) -> tensor<?x2xf32>
  %l = fuse.softmax_cross_entropy %o, %y : (tensor<?x2xf32>, tensor<?xi32>) -> tensor<f32>
  return %l : tensor<f32>
}
fuse.train_step @sgd {loss = @loss, params = array<i64: 1>, optimizer = "sgd"}

// -----

// Accuracy needs the number of classes: with dynamic logits, only the loss.
// CHECK-LABEL: func.func @dyn_eval
// CHECK-SAME: -> tensor<f32>
// CHECK-NOT: fuse.reduce_sum
// CHECK: return %{{.*}} : tensor<f32>
func.func @loss(%o: tensor<?x?xf32>, %y: tensor<?xi32>) -> tensor<f32> {
  %l = fuse.softmax_cross_entropy %o, %y : (tensor<?x?xf32>, tensor<?xi32>) -> tensor<f32>
  return %l : tensor<f32>
}
fuse.train_step @dyn {loss = @loss, params = array<i64: 0>, optimizer = "sgd"}

// -----

func.func @mse(%x: tensor<4xf32>, %w: tensor<4xf32>) -> tensor<f32> {
  %l = fuse.mse_loss %w, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<f32>
  return %l : tensor<f32>
}
func.func @train_eval() {
  return
}
// expected-error @below {{'fuse.train_step' op cannot define the evaluation function 'train_eval': the symbol exists}}
fuse.train_step @train {loss = @mse, params = array<i64: 1>, optimizer = "sgd"}
