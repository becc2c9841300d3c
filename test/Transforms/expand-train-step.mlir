// RUN: fuse-opt %s --fuse-expand-train-step --split-input-file --verify-diagnostics | FileCheck %s
// RUN: fuse-opt %s --fuse-expand-train-step=data-parallel=true --split-input-file --verify-diagnostics | FileCheck %s --check-prefix=DP

// Adam on a dense layer whose loss takes the step counter: the step function
// takes (params, states, other loss arguments, lr, step), returns the loss
// and every new parameter and state in place of its argument; the counter
// reaches both the loss and the optimizer. The batch inputs are marked
// per-step and the counter as such, for fuse-wrap-steps.
// CHECK-LABEL: func.func @train
// CHECK-SAME: (%[[W:[^:]*]]: tensor<3x2xf32> {fuse.init = #fuse.init<glorot_uniform>}, %[[B:[^:]*]]: tensor<2xf32> {fuse.init = #fuse.init<zeros>}, %[[MW:[^:]*]]: tensor<3x2xf32> {fuse.init = #fuse.init<zeros>}, %[[MB:[^:]*]]: tensor<2xf32> {fuse.init = #fuse.init<zeros>}, %[[VW:[^:]*]]: tensor<3x2xf32> {fuse.init = #fuse.init<zeros>}, %[[VB:[^:]*]]: tensor<2xf32> {fuse.init = #fuse.init<zeros>}, %[[X:[^:]*]]: tensor<?x3xf32> {fuse.per_step}, %[[Y:[^:]*]]: tensor<?xi32> {fuse.per_step}, %[[LR:[^:]*]]: tensor<f32>, %[[STEP:[^:]*]]: tensor<i64> {fuse.step_counter})
// CHECK-SAME: -> (tensor<f32>, tensor<3x2xf32> {fuse.in_place = 0 : i64}, tensor<2xf32> {fuse.in_place = 1 : i64}, tensor<3x2xf32> {fuse.in_place = 2 : i64}, tensor<2xf32> {fuse.in_place = 3 : i64}, tensor<3x2xf32> {fuse.in_place = 4 : i64}, tensor<2xf32> {fuse.in_place = 5 : i64})
// CHECK: %[[G:.*]]:3 = fuse.value_and_grad @loss(%[[W]], %[[B]], %[[X]], %[[Y]], %[[STEP]]) {wrt = array<i64: 0, 1>}
// CHECK: %[[U:.*]]:6 = fuse.adam %[[LR]], %[[STEP]] params(%[[W]], %[[B]] : {{.*}}) grads(%[[G]]#1, %[[G]]#2 : {{.*}}) states(%[[MW]], %[[MB]], %[[VW]], %[[VB]] : {{.*}}) {beta1 = 8.000000e-01 : f64}
// CHECK: return %[[G]]#0, %[[U]]#0, %[[U]]#1, %[[U]]#2, %[[U]]#3, %[[U]]#4, %[[U]]#5
// CHECK-NOT: fuse.train_step
func.func @loss(%w: tensor<3x2xf32>, %b: tensor<2xf32>, %x: tensor<?x3xf32>, %y: tensor<?xi32>, %step: tensor<i64>) -> tensor<f32> {
  %h = fuse.matmul %x, %w : (tensor<?x3xf32>, tensor<3x2xf32>) -> tensor<?x2xf32>
  %o = fuse.add %h, %b : (tensor<?x2xf32>, tensor<2xf32>) -> tensor<?x2xf32>
  %l = fuse.softmax_cross_entropy %o, %y : (tensor<?x2xf32>, tensor<?xi32>) -> tensor<f32>
  return %l : tensor<f32>
}
fuse.train_step @train {loss = @loss, params = array<i64: 0, 1>, optimizer = "adam", step_arg = 4, hyperparameters = {beta1 = 0.8 : f64}}

// -----

// AdamW with the bias excluded from weight decay (no_decay): one adam op
// per group, the bias's with weight_decay 0; the function's signature and
// state layout are those of a single op (state k of parameter i at
// k * n + i), each result taken from its group's op.
// CHECK-LABEL: func.func @adamw
// CHECK-SAME: (%[[W:[^:]*]]: tensor<3x2xf32> {{.*}}, %[[B:[^:]*]]: tensor<2xf32> {{.*}}, %[[MW:[^:]*]]: tensor<3x2xf32> {{.*}}, %[[MB:[^:]*]]: tensor<2xf32> {{.*}}, %[[VW:[^:]*]]: tensor<3x2xf32> {{.*}}, %[[VB:[^:]*]]: tensor<2xf32> {{.*}}, %[[X:[^:]*]]: tensor<?x3xf32>
// CHECK: %[[G:.*]]:3 = fuse.value_and_grad @loss
// CHECK: %[[DW:.*]]:3 = fuse.adam %{{.*}}, %{{.*}} params(%[[W]] : tensor<3x2xf32>) grads(%[[G]]#1 : tensor<3x2xf32>) states(%[[MW]], %[[VW]] : {{.*}}) {decoupled, weight_decay = 1.000000e-01 : f64}
// CHECK: %[[DB:.*]]:3 = fuse.adam %{{.*}}, %{{.*}} params(%[[B]] : tensor<2xf32>) grads(%[[G]]#2 : tensor<2xf32>) states(%[[MB]], %[[VB]] : {{.*}}) {decoupled} ->
// CHECK: return %[[G]]#0, %[[DW]]#0, %[[DB]]#0, %[[DW]]#1, %[[DB]]#1, %[[DW]]#2, %[[DB]]#2
func.func @loss(%w: tensor<3x2xf32>, %b: tensor<2xf32>, %x: tensor<?x3xf32>, %y: tensor<?xi32>) -> tensor<f32> {
  %h = fuse.matmul %x, %w : (tensor<?x3xf32>, tensor<3x2xf32>) -> tensor<?x2xf32>
  %o = fuse.add %h, %b : (tensor<?x2xf32>, tensor<2xf32>) -> tensor<?x2xf32>
  %l = fuse.softmax_cross_entropy %o, %y : (tensor<?x2xf32>, tensor<?xi32>) -> tensor<f32>
  return %l : tensor<f32>
}
fuse.train_step @adamw {loss = @loss, params = array<i64: 0, 1>, optimizer = "adam", no_decay = array<i64: 1>, hyperparameters = {decoupled, weight_decay = 0.1 : f64}}

// -----

// Plain SGD has no state; parameters need not come first, and a loss
// without a step counter still gets the step argument (for the optimizer).
// CHECK-LABEL: func.func @sgd_step
// CHECK-SAME: (%[[W:[^:]*]]: tensor<4xf32> {fuse.init = #fuse.init<zeros>}, %[[X:[^:]*]]: tensor<4xf32> {fuse.per_step}, %[[LR:[^:]*]]: tensor<f32>, %[[STEP:[^:]*]]: tensor<i64> {fuse.step_counter}) -> (tensor<f32>, tensor<4xf32> {fuse.in_place = 0 : i64})
// CHECK: fuse.value_and_grad @mse(%[[X]], %[[W]]) {wrt = array<i64: 1>}
// CHECK: fuse.sgd %[[LR]], %[[STEP]] params(%[[W]] : tensor<4xf32>) grads(%{{.*}} : tensor<4xf32>) states()
func.func @mse(%x: tensor<4xf32>, %w: tensor<4xf32>) -> tensor<f32> {
  %l = fuse.mse_loss %w, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<f32>
  return %l : tensor<f32>
}
fuse.train_step @sgd_step {loss = @mse, params = array<i64: 1>, optimizer = "sgd"}

// -----

func.func @mse(%x: tensor<4xf32>, %w: tensor<4xf32>) -> tensor<f32> {
  %l = fuse.mse_loss %w, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<f32>
  return %l : tensor<f32>
}
// Values the optimizer rejects are reported at the step, naming them.
// expected-error @below {{'fuse.train_step' op hyperparameters of fuse.adam: 'beta1' must be in [0, 1), got 1.5}}
fuse.train_step @bad {loss = @mse, params = array<i64: 1>, optimizer = "adam", hyperparameters = {beta1 = 1.5 : f64}}

// -----

// A parameter's own fuse.init carries over to the step function, replacing
// the default (glorot_uniform for the weight, zeros for the bias).
// CHECK-LABEL: func.func @init_step
// CHECK-SAME: (%{{[^:]*}}: tensor<3x2xf32> {fuse.init = #fuse.init<he_normal>}, %{{[^:]*}}: tensor<2xf32> {fuse.init = #fuse.init<constant, value = 1.000000e-01>}, %{{[^:]*}}: tensor<?x3xf32> {fuse.per_step},
func.func @loss(%w: tensor<3x2xf32> {fuse.init = #fuse.init<he_normal>}, %b: tensor<2xf32> {fuse.init = #fuse.init<constant, value = 0.1>}, %x: tensor<?x3xf32>, %y: tensor<?xi32>) -> tensor<f32> {
  %h = fuse.matmul %x, %w : (tensor<?x3xf32>, tensor<3x2xf32>) -> tensor<?x2xf32>
  %o = fuse.add %h, %b : (tensor<?x2xf32>, tensor<2xf32>) -> tensor<?x2xf32>
  %l = fuse.softmax_cross_entropy %o, %y : (tensor<?x2xf32>, tensor<?xi32>) -> tensor<f32>
  return %l : tensor<f32>
}
fuse.train_step @init_step {loss = @loss, params = array<i64: 0, 1>, optimizer = "sgd"}

// -----

// Adagrad's accumulators start at its initial_accumulator_value.
// CHECK-LABEL: func.func @adagrad_step
// CHECK-SAME: (%{{[^:]*}}: tensor<4x4xf32> {fuse.init = #fuse.init<glorot_uniform>}, %{{[^:]*}}: tensor<4x4xf32> {fuse.init = #fuse.init<constant, value = 1.000000e-01>}, %{{[^:]*}}: tensor<4x4xf32> {fuse.per_step},
// CHECK: fuse.adagrad
func.func @mse(%w: tensor<4x4xf32>, %x: tensor<4x4xf32>) -> tensor<f32> {
  %l = fuse.mse_loss %w, %x : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<f32>
  return %l : tensor<f32>
}
fuse.train_step @adagrad_step {loss = @mse, params = array<i64: 0>, optimizer = "adagrad", hyperparameters = {initial_accumulator_value = 0.1 : f64}}

// -----

// A learning-rate schedule and clipping: the gradients of both groups (the
// no_decay bias's too) are clipped together, by one fuse.clip_gradients,
// and both optimizer ops take the one scheduled rate.
// CHECK-LABEL: func.func @scheduled
// CHECK-SAME: %[[LR:[^:]*]]: tensor<f32>, %[[STEP:[^:]*]]: tensor<i64> {fuse.step_counter})
// CHECK: %[[G:.*]]:3 = fuse.value_and_grad @loss
// CHECK: %[[C:.*]]:2 = fuse.clip_gradients %[[G]]#1, %[[G]]#2 {clip_norm = 1.000000e+00 : f64, clip_value = 5.000000e-01 : f64} : tensor<3x2xf32>, tensor<2xf32>
// CHECK: %[[S:.*]] = fuse.lr_schedule %[[LR]], %[[STEP]] {schedule = #fuse.lr_schedule<cosine, warmup = 10, decay_steps = 90, min = 1.000000e-01>}
// CHECK: fuse.adam %[[S]], %[[STEP]] params({{.*}}) grads(%[[C]]#0 : tensor<3x2xf32>)
// CHECK: fuse.adam %[[S]], %[[STEP]] params({{.*}}) grads(%[[C]]#1 : tensor<2xf32>)
// CHECK-NOT: fuse.train_step
func.func @loss(%w: tensor<3x2xf32>, %b: tensor<2xf32>, %x: tensor<?x3xf32>, %y: tensor<?xi32>) -> tensor<f32> {
  %h = fuse.matmul %x, %w : (tensor<?x3xf32>, tensor<3x2xf32>) -> tensor<?x2xf32>
  %o = fuse.add %h, %b : (tensor<?x2xf32>, tensor<2xf32>) -> tensor<?x2xf32>
  %l = fuse.softmax_cross_entropy %o, %y : (tensor<?x2xf32>, tensor<?xi32>) -> tensor<f32>
  return %l : tensor<f32>
}
fuse.train_step @scheduled {loss = @loss, params = array<i64: 0, 1>, optimizer = "adam", no_decay = array<i64: 1>, hyperparameters = {decoupled, weight_decay = 0.1 : f64}, lr_schedule = #fuse.lr_schedule<cosine, warmup = 10, decay_steps = 90, min = 0.1>, clip_norm = 1.0 : f64, clip_value = 0.5 : f64}

// -----

// A constant schedule without warmup scales nothing: the step is the
// unscheduled one, the optimizer reads the lr argument itself; clipping by
// value alone has no norm.
// CHECK-LABEL: func.func @constant
// CHECK-SAME: %[[LR:[^:]*]]: tensor<f32>, %[[STEP:[^:]*]]: tensor<i64> {fuse.step_counter})
// CHECK-NOT: fuse.lr_schedule
// CHECK: %[[C:.*]] = fuse.clip_gradients %{{.*}} {clip_value = 2.000000e+00 : f64} : tensor<4xf32>
// CHECK-NOT: fuse.lr_schedule
// CHECK: fuse.sgd %[[LR]], %[[STEP]] params(%{{.*}} : tensor<4xf32>) grads(%[[C]] : tensor<4xf32>)
func.func @mse(%x: tensor<4xf32>, %w: tensor<4xf32>) -> tensor<f32> {
  %l = fuse.mse_loss %w, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<f32>
  return %l : tensor<f32>
}
fuse.train_step @constant {loss = @mse, params = array<i64: 1>, optimizer = "sgd", lr_schedule = #fuse.lr_schedule<constant>, clip_value = 2.0 : f64}

// -----

// A warmup alone is a schedule (constant after it); no clipping, no
// fuse.clip_gradients.
// CHECK-LABEL: func.func @warmup
// CHECK-SAME: %[[LR:[^:]*]]: tensor<f32>, %[[STEP:[^:]*]]: tensor<i64> {fuse.step_counter})
// CHECK-NOT: fuse.clip_gradients
// CHECK: %[[S:.*]] = fuse.lr_schedule %[[LR]], %[[STEP]] {schedule = #fuse.lr_schedule<constant, warmup = 5>}
// CHECK-NOT: fuse.clip_gradients
// CHECK: fuse.sgd %[[S]], %[[STEP]]
func.func @mse(%x: tensor<4xf32>, %w: tensor<4xf32>) -> tensor<f32> {
  %l = fuse.mse_loss %w, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<f32>
  return %l : tensor<f32>
}
fuse.train_step @warmup {loss = @mse, params = array<i64: 1>, optimizer = "sgd", lr_schedule = #fuse.lr_schedule<constant, warmup = 5>}

// -----

// Data-parallel (the engine's choice when training runs on several ranks):
// the step takes replica_weight before lr, and one all_reduce over every
// gradient, each weighted by it, sits between the gradients and the
// clipping and updates (both no_decay groups read its results). Without
// the option, nothing of it.
// CHECK-LABEL: func.func @parallel
// CHECK-SAME: %{{[^:]*}}: tensor<?xi32> {fuse.per_step}, %{{[^:]*}}: tensor<f32>, %{{[^:]*}}: tensor<i64> {fuse.step_counter})
// CHECK-NOT: fuse.all_reduce
// DP-LABEL: func.func @parallel
// DP-SAME: %[[X:[^:]*]]: tensor<?x3xf32> {fuse.per_step}, %[[Y:[^:]*]]: tensor<?xi32> {fuse.per_step}, %[[RW:[^:]*]]: tensor<f32>, %[[LR:[^:]*]]: tensor<f32>, %[[STEP:[^:]*]]: tensor<i64> {fuse.step_counter})
// DP: %[[G:.*]]:3 = fuse.value_and_grad @loss
// DP: %[[R:.*]]:2 = fuse.all_reduce sum %[[G]]#1, %[[G]]#2 prescale %[[RW]] : tensor<3x2xf32>, tensor<2xf32>
// DP: %[[C:.*]]:2 = fuse.clip_gradients %[[R]]#0, %[[R]]#1 {clip_norm = 1.000000e+00 : f64}
// DP: fuse.adam %[[LR]], %[[STEP]] params(%{{.*}} : tensor<3x2xf32>) grads(%[[C]]#0 : tensor<3x2xf32>)
// DP: fuse.adam %[[LR]], %[[STEP]] params(%{{.*}} : tensor<2xf32>) grads(%[[C]]#1 : tensor<2xf32>)
func.func @loss(%w: tensor<3x2xf32>, %b: tensor<2xf32>, %x: tensor<?x3xf32>, %y: tensor<?xi32>) -> tensor<f32> {
  %h = fuse.matmul %x, %w : (tensor<?x3xf32>, tensor<3x2xf32>) -> tensor<?x2xf32>
  %o = fuse.add %h, %b : (tensor<?x2xf32>, tensor<2xf32>) -> tensor<?x2xf32>
  %l = fuse.softmax_cross_entropy %o, %y : (tensor<?x2xf32>, tensor<?xi32>) -> tensor<f32>
  return %l : tensor<f32>
}
fuse.train_step @parallel {loss = @loss, params = array<i64: 0, 1>, optimizer = "adam", no_decay = array<i64: 1>, hyperparameters = {decoupled, weight_decay = 0.1 : f64}, clip_norm = 1.0 : f64}

// -----

// Data-parallel dropout: the step takes example_offset and differentiates
// a private copy of the loss whose dropout takes it as its rows' offset;
// the loss itself is unchanged.
// DP-LABEL: func.func @dloss(
// DP: fuse.dropout %{{.*}}, %{{.*}} {rate
// DP-LABEL: func.func private @dloss_data_parallel(
// DP-SAME: %[[O:[^:]*]]: tensor<i64>) -> tensor<f32>
// DP: fuse.dropout %{{.*}}, %{{.*}} offset %[[O]] {rate
// DP-LABEL: func.func @drop(
// DP-SAME: %[[X:[^:]*]]: tensor<?x3xf32> {fuse.per_step}, %[[OFF:[^:]*]]: tensor<i64>, %[[RW:[^:]*]]: tensor<f32>, %{{[^:]*}}: tensor<f32>, %[[STEP:[^:]*]]: tensor<i64> {fuse.step_counter})
// DP: fuse.value_and_grad @dloss_data_parallel(%{{.*}}, %[[X]], %[[STEP]], %[[OFF]]) {wrt = array<i64: 0>}
// DP: fuse.all_reduce sum %{{.*}} prescale %[[RW]]
func.func @dloss(%w: tensor<3xf32>, %x: tensor<?x3xf32>, %step: tensor<i64>) -> tensor<f32> {
  %h = fuse.mul %x, %w : (tensor<?x3xf32>, tensor<3xf32>) -> tensor<?x3xf32>
  %d = fuse.dropout %h, %step {rate = 0.5 : f32} : tensor<?x3xf32>
  %l = fuse.reduce_mean %d {axes = array<i64: 0, 1>} : (tensor<?x3xf32>) -> tensor<f32>
  return %l : tensor<f32>
}
fuse.train_step @drop {loss = @dloss, params = array<i64: 0>, optimizer = "sgd", step_arg = 2}

// -----

// Mixed precision: the step function carries the policy (fuse.precision)
// and, when not the default copy, the master weights' layout
// (fuse.master_weights), for fuse-apply-precision-policy; in f32 the
// layout has no effect and is dropped.
// CHECK-LABEL: func.func @split
// CHECK-SAME: attributes {fuse.master_weights = "split", fuse.precision = "bf16"}
// CHECK-LABEL: func.func @copy
// CHECK-SAME: attributes {fuse.precision = "bf16"}
// CHECK-LABEL: func.func @f32
// CHECK-NOT: attributes
// CHECK: fuse.sgd
func.func @loss(%w: tensor<4xf32>, %x: tensor<4xf32>) -> tensor<f32> {
  %l = fuse.mse_loss %w, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<f32>
  return %l : tensor<f32>
}
fuse.train_step @split {loss = @loss, params = array<i64: 0>, optimizer = "sgd", precision = "bf16", master_weights = "split"}
fuse.train_step @copy {loss = @loss, params = array<i64: 0>, optimizer = "sgd", precision = "bf16", master_weights = "copy"}
fuse.train_step @f32 {loss = @loss, params = array<i64: 0>, optimizer = "sgd", master_weights = "split"}
