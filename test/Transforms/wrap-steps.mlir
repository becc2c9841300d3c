// RUN: fuse-opt %s --fuse-wrap-steps --split-input-file --verify-diagnostics | FileCheck %s

// An SGD step: the batch is stacked along a new leading dim, the parameter is
// loop-carried in place, and the loss comes back with one value per step. The
// trip count comes from the first stacked argument (#1, not #0), and step i
// sees the counter plus i, as if it had been called alone.
// CHECK-LABEL: func.func @step(
// CHECK-SAME: %{{[^:]*}}: tensor<4x3xf32> {fuse.per_step}
// CHECK: fuse.value_and_grad @loss
// CHECK: fuse.sgd
// CHECK-LABEL: func.func @step_steps
// CHECK-SAME: (%[[W:[^:]*]]: tensor<3x2xf32>, %[[X:[^:]*]]: tensor<?x4x3xf32> {fuse.stacked}, %[[Y:[^:]*]]: tensor<?x4xi32> {fuse.stacked}, %[[LR:[^:]*]]: tensor<f32>, %[[STEP:[^:]*]]: tensor<i64> {fuse.step_counter})
// CHECK-SAME: -> (tensor<?xf32> {fuse.stacked}, tensor<3x2xf32> {fuse.in_place = 0 : i64})
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK: %[[K:.*]] = tensor.dim %[[X]], %{{.*}} : tensor<?x4x3xf32>
// CHECK: %[[FIRST:.*]] = tensor.extract %[[STEP]][] : tensor<i64>
// CHECK: %[[E:.*]] = tensor.empty(%[[K]]) : tensor<?xf32>
// CHECK: %[[R:.*]]:2 = scf.for %[[I:.*]] = %[[C0]] to %[[K]] step %[[C1]] iter_args(%[[WI:.*]] = %[[W]], %[[LS:.*]] = %[[E]]) -> (tensor<3x2xf32>, tensor<?xf32>)
// CHECK: %[[XS:.*]] = tensor.extract_slice %[[X]][%[[I]], 0, 0] [1, 4, 3] [1, 1, 1] : tensor<?x4x3xf32> to tensor<4x3xf32>
// CHECK: %[[YS:.*]] = tensor.extract_slice %[[Y]][%[[I]], 0] [1, 4] [1, 1] : tensor<?x4xi32> to tensor<4xi32>
// CHECK: %[[OFF:.*]] = arith.index_cast %[[I]] : index to i64
// CHECK: %[[N:.*]] = arith.addi %[[FIRST]], %[[OFF]] : i64
// CHECK: %[[NT:.*]] = tensor.from_elements %[[N]] : tensor<i64>
// CHECK: %[[G:.*]]:2 = fuse.value_and_grad @loss(%[[WI]], %[[XS]], %[[YS]])
// CHECK: %[[U:.*]] = fuse.sgd %[[LR]], %[[NT]] params(%[[WI]] : tensor<3x2xf32>) grads(%[[G]]#1 : tensor<3x2xf32>)
// CHECK: %[[INS:.*]] = tensor.insert_slice %[[G]]#0 into %[[LS]][%[[I]]] [1] [1] : tensor<f32> into tensor<?xf32>
// CHECK: scf.yield %[[U]], %[[INS]] : tensor<3x2xf32>, tensor<?xf32>
// CHECK: return %[[R]]#1, %[[R]]#0 : tensor<?xf32>, tensor<3x2xf32>
func.func @loss(%w: tensor<3x2xf32>, %x: tensor<4x3xf32>, %y: tensor<4xi32>) -> tensor<f32> {
  %h = fuse.matmul %x, %w : (tensor<4x3xf32>, tensor<3x2xf32>) -> tensor<4x2xf32>
  %l = fuse.softmax_cross_entropy %h, %y : (tensor<4x2xf32>, tensor<4xi32>) -> tensor<f32>
  return %l : tensor<f32>
}
func.func @step(%w: tensor<3x2xf32>, %x: tensor<4x3xf32> {fuse.per_step}, %y: tensor<4xi32> {fuse.per_step},
                %lr: tensor<f32>, %step: tensor<i64> {fuse.step_counter})
    -> (tensor<f32>, tensor<3x2xf32> {fuse.in_place = 0}) {
  %g:2 = fuse.value_and_grad @loss(%w, %x, %y) {wrt = array<i64: 0>} : (tensor<3x2xf32>, tensor<4x3xf32>, tensor<4xi32>) -> (tensor<f32>, tensor<3x2xf32>)
  %u = fuse.sgd %lr, %step params(%w : tensor<3x2xf32>) grads(%g#1 : tensor<3x2xf32>) states() -> tensor<3x2xf32>
  return %g#0, %u : tensor<f32>, tensor<3x2xf32>
}

// -----

// A dynamic batch dim is read from the stack's dim 1 at every step; a
// non-scalar metric is inserted as a whole row. With no step counter and no
// carried result, the stacks are the only loop-carried values.
// CHECK-LABEL: func.func @dyn_steps
// CHECK-SAME: (%[[X:[^:]*]]: tensor<?x?x3xf32> {fuse.stacked})
// CHECK-SAME: -> (tensor<?x3xf32> {fuse.stacked}, tensor<?xf32> {fuse.stacked})
// CHECK: %[[K:.*]] = tensor.dim %[[X]], %{{.*}} : tensor<?x?x3xf32>
// CHECK-NOT: tensor.extract %
// CHECK: %[[E0:.*]] = tensor.empty(%[[K]]) : tensor<?x3xf32>
// CHECK: %[[E1:.*]] = tensor.empty(%[[K]]) : tensor<?xf32>
// CHECK: %[[R:.*]]:2 = scf.for %[[I:.*]] = %{{.*}} to %[[K]] step %{{.*}} iter_args(%[[S0:.*]] = %[[E0]], %[[S1:.*]] = %[[E1]]) -> (tensor<?x3xf32>, tensor<?xf32>)
// CHECK: %[[C1:.*]] = arith.constant 1 : index
// CHECK: %[[B:.*]] = tensor.dim %[[X]], %[[C1]] : tensor<?x?x3xf32>
// CHECK: %[[XS:.*]] = tensor.extract_slice %[[X]][%[[I]], 0, 0] [1, %[[B]], 3] [1, 1, 1] : tensor<?x?x3xf32> to tensor<?x3xf32>
// CHECK: %[[M:.*]] = fuse.reduce_mean %[[XS]]
// CHECK: %[[L:.*]] = fuse.reduce_sum %[[M]]
// CHECK: %[[I0:.*]] = tensor.insert_slice %[[M]] into %[[S0]][%[[I]], 0] [1, 3] [1, 1] : tensor<3xf32> into tensor<?x3xf32>
// CHECK: %[[I1:.*]] = tensor.insert_slice %[[L]] into %[[S1]][%[[I]]] [1] [1] : tensor<f32> into tensor<?xf32>
// CHECK: scf.yield %[[I0]], %[[I1]]
// CHECK: return %[[R]]#0, %[[R]]#1 : tensor<?x3xf32>, tensor<?xf32>
func.func @dyn(%x: tensor<?x3xf32> {fuse.per_step}) -> (tensor<3xf32>, tensor<f32>) {
  %m = fuse.reduce_mean %x {axes = array<i64: 0>} : (tensor<?x3xf32>) -> tensor<3xf32>
  %l = fuse.reduce_sum %m {axes = array<i64: 0>} : (tensor<3xf32>) -> tensor<f32>
  return %m, %l : tensor<3xf32>, tensor<f32>
}

// -----

// Only functions with a per-step argument are step functions: a counter or
// carried results alone do not make one, and declarations are skipped.
// CHECK-LABEL: func.func @no_batch(
// CHECK-NOT: _steps
// CHECK-LABEL: func.func private @declared(
// CHECK-NOT: _steps
func.func @no_batch(%w: tensor<4xf32>, %step: tensor<i64> {fuse.step_counter}) -> (tensor<4xf32> {fuse.in_place = 0}) {
  %n = fuse.neg %w : tensor<4xf32>
  return %n : tensor<4xf32>
}
func.func private @declared(%x: tensor<4xf32> {fuse.per_step}) -> tensor<f32>

// -----

// A dynamic metric cannot be stacked: its rows would differ in size.
// expected-error @below {{cannot wrap steps: per-step result #0 must be a tensor of static shape to be stacked, got 'tensor<?xf32>'}}
func.func @step(%x: tensor<?xf32> {fuse.per_step}) -> tensor<?xf32> {
  %e = fuse.exp %x : tensor<?xf32>
  return %e : tensor<?xf32>
}

// -----

// A carried value cannot change at every step.
// expected-error @below {{cannot wrap steps: argument #0 is both per-step and carried (result #1 is in place of it)}}
func.func @step(%x: tensor<4xf32> {fuse.per_step}) -> (tensor<f32>, tensor<4xf32> {fuse.in_place = 0}) {
  %l = fuse.reduce_sum %x {axes = array<i64: 0>} : (tensor<4xf32>) -> tensor<f32>
  %e = fuse.exp %x : tensor<4xf32>
  return %l, %e : tensor<f32>, tensor<4xf32>
}

// -----

// The companion's name is taken; nothing is renamed behind the caller's back.
// expected-error @below {{cannot wrap steps: a symbol named 'step_steps' already exists}}
func.func @step(%x: tensor<4xf32> {fuse.per_step}) -> tensor<f32> {
  %l = fuse.reduce_sum %x {axes = array<i64: 0>} : (tensor<4xf32>) -> tensor<f32>
  return %l : tensor<f32>
}
func.func @step_steps() {
  return
}

// -----

// The verifier accepts per_step on an unshaped (lowered) type, but a scalar
// has no batch to stack.
// expected-error @below {{cannot wrap steps: argument #0 must be a ranked tensor, got 'f32'}}
func.func @step(%x: f32 {fuse.per_step}) -> tensor<f32> {
  %c = fuse.constant dense<0.0> : tensor<f32>
  return %c : tensor<f32>
}

// -----

// The body is copied into the loop as one block.
// expected-error @below {{cannot wrap steps of a function with 2 blocks}}
func.func @step(%x: tensor<4xf32> {fuse.per_step}, %p: i1) -> tensor<f32> {
  %l = fuse.reduce_sum %x {axes = array<i64: 0>} : (tensor<4xf32>) -> tensor<f32>
  cf.cond_br %p, ^done, ^done
^done:
  return %l : tensor<f32>
}

// -----

// The counter advances by itself; a step cannot also compute it.
// expected-error @below {{cannot wrap steps: argument #1 is both the step counter and carried (result #1 is in place of it)}}
func.func @step(%x: tensor<4xf32> {fuse.per_step}, %s: tensor<i64> {fuse.step_counter}) -> (tensor<f32>, tensor<i64> {fuse.in_place = 1}) {
  %l = fuse.reduce_sum %x {axes = array<i64: 0>} : (tensor<4xf32>) -> tensor<f32>
  return %l, %s : tensor<f32>, tensor<i64>
}

// -----

// Wrapping is one level deep: an argument already stacked is a K-step
// function's, not a step's.
// expected-error @below {{cannot wrap steps: argument #1 is already stacked}}
func.func @step(%x: tensor<4xf32> {fuse.per_step}, %xs: tensor<?x4xf32> {fuse.stacked}) -> tensor<f32> {
  %l = fuse.reduce_sum %x {axes = array<i64: 0>} : (tensor<4xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// A data-parallel step's all_reduce is copied into the loop: the K-step
// function reduces once per step, before that step's update.
// CHECK-LABEL: func.func @dp_steps
// CHECK: scf.for
// CHECK: %[[G:.*]]:2 = fuse.value_and_grad @loss
// CHECK: %[[R:.*]] = fuse.all_reduce sum %[[G]]#1 prescale %{{.*}} : tensor<3x2xf32>
// CHECK: fuse.sgd %{{.*}}, %{{.*}} params(%{{.*}} : tensor<3x2xf32>) grads(%[[R]] : tensor<3x2xf32>)
// CHECK: scf.yield
func.func @loss(%w: tensor<3x2xf32>, %x: tensor<4x3xf32>, %y: tensor<4xi32>) -> tensor<f32> {
  %h = fuse.matmul %x, %w : (tensor<4x3xf32>, tensor<3x2xf32>) -> tensor<4x2xf32>
  %l = fuse.softmax_cross_entropy %h, %y : (tensor<4x2xf32>, tensor<4xi32>) -> tensor<f32>
  return %l : tensor<f32>
}
func.func @dp(%w: tensor<3x2xf32>, %x: tensor<4x3xf32> {fuse.per_step}, %y: tensor<4xi32> {fuse.per_step},
              %rw: tensor<f32>, %lr: tensor<f32>, %step: tensor<i64> {fuse.step_counter})
    -> (tensor<f32>, tensor<3x2xf32> {fuse.in_place = 0}) {
  %g:2 = fuse.value_and_grad @loss(%w, %x, %y) {wrt = array<i64: 0>} : (tensor<3x2xf32>, tensor<4x3xf32>, tensor<4xi32>) -> (tensor<f32>, tensor<3x2xf32>)
  %r = fuse.all_reduce sum %g#1 prescale %rw : tensor<3x2xf32>
  %u = fuse.sgd %lr, %step params(%w : tensor<3x2xf32>) grads(%r : tensor<3x2xf32>) states() -> tensor<3x2xf32>
  return %g#0, %u : tensor<f32>, tensor<3x2xf32>
}

// -----

// Master weights (fuse-apply-precision-policy's bf16 copies): the cast of a
// carried weight that the update also writes (copies) is carried beside
// the weight: cast once before the loop, read by the step from the
// iteration's argument, and the update's new copy yielded for the next
// step. No cast of the weight is left inside the loop.
// CHECK-LABEL: func.func @bf16_steps
// CHECK-SAME: (%[[W:[^:]*]]: tensor<3x2xf32>, %[[X:[^:]*]]: tensor<?x4x3xf32> {fuse.stacked}, %[[LR:[^:]*]]: tensor<f32>, %[[STEP:[^:]*]]: tensor<i64> {fuse.step_counter})
// CHECK: %[[WB0:.*]] = fuse.cast %[[W]] : (tensor<3x2xf32>) -> tensor<3x2xbf16>
// CHECK: %[[R:.*]]:3 = scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[WI:.*]] = %[[W]], %{{.*}} = %{{.*}}, %[[WBI:.*]] = %[[WB0]]) -> (tensor<3x2xf32>, tensor<?xf32>, tensor<3x2xbf16>)
// CHECK-NOT: fuse.cast %[[WI]]
// CHECK: %[[XB:.*]] = fuse.cast %{{.*}} : (tensor<4x3xf32>) -> tensor<4x3xbf16>
// CHECK-NOT: fuse.cast %[[WI]]
// CHECK: fuse.matmul %[[XB]], %[[WBI]]
// CHECK-NOT: fuse.cast %[[WI]]
// CHECK: %[[U:.*]]:2 = fuse.sgd %[[LR]], %{{.*}} params(%[[WI]] : tensor<3x2xf32>) grads(%{{.*}} : tensor<3x2xf32>) states() copies(%[[WBI]] : tensor<3x2xbf16>) {copy_params = array<i64: 0>}
// CHECK: scf.yield %[[U]]#0, %{{.*}}, %[[U]]#1 : tensor<3x2xf32>, tensor<?xf32>, tensor<3x2xbf16>
// CHECK: return %{{.*}}, %[[R]]#0 : tensor<?xf32>, tensor<3x2xf32>
func.func @bf16(%w: tensor<3x2xf32>, %x: tensor<4x3xf32> {fuse.per_step},
                %lr: tensor<f32>, %step: tensor<i64> {fuse.step_counter})
    -> (tensor<f32>, tensor<3x2xf32> {fuse.in_place = 0}) {
  %wb = fuse.cast %w : (tensor<3x2xf32>) -> tensor<3x2xbf16>
  %xb = fuse.cast %x : (tensor<4x3xf32>) -> tensor<4x3xbf16>
  %h = fuse.matmul %xb, %wb : (tensor<4x3xbf16>, tensor<3x2xbf16>) -> tensor<4x2xf32>
  %l = fuse.reduce_sum %h {axes = array<i64: 0, 1>} : (tensor<4x2xf32>) -> tensor<f32>
  %hb = fuse.cast %h : (tensor<4x2xf32>) -> tensor<4x2xbf16>
  %dw = fuse.matmul %xb, %hb {transpose_lhs} : (tensor<4x3xbf16>, tensor<4x2xbf16>) -> tensor<3x2xf32>
  %u:2 = fuse.sgd %lr, %step params(%w : tensor<3x2xf32>) grads(%dw : tensor<3x2xf32>) states() copies(%wb : tensor<3x2xbf16>) {copy_params = array<i64: 0>} -> tensor<3x2xf32>, tensor<3x2xbf16>
  return %l, %u#0 : tensor<f32>, tensor<3x2xf32>
}

// -----

// IPEX's split layout (split_copies): the weight is carried as its two
// halves alone, and the K-step function takes and returns them: the weight's
// argument holds its top halves (fuse.split_halves names the low halves'
// argument, appended; fuse.low_half_of names it back), both in place, so
// that its caller keeps the pair and no f32 copy of the weight exists. In
// the loop no f32 weight is carried and none is cast: the products read
// the carried top half, the update reads and writes the pair, and a
// reader of the f32 weight other than the halves (the weight decay term)
// reads their join.
// CHECK-LABEL: func.func @split_steps
// CHECK-SAME: (%[[W:[^:]*]]: tensor<3x2xbf16> {fuse.split_halves = 4 : i64}, %[[X:[^:]*]]: tensor<?x4x3xf32> {fuse.stacked}, %[[LR:[^:]*]]: tensor<f32>, %[[STEP:[^:]*]]: tensor<i64> {fuse.step_counter}, %[[WL:[^:]*]]: tensor<3x2xi16> {fuse.low_half_of = 0 : i64})
// CHECK-SAME: -> (tensor<?xf32> {fuse.stacked}, tensor<3x2xbf16> {fuse.in_place = 0 : i64}, tensor<3x2xi16> {fuse.in_place = 4 : i64})
// CHECK-NOT: fuse.high_half
// CHECK: %[[R:.*]]:3 = scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%{{.*}} = %{{.*}}, %[[TI:.*]] = %[[W]], %[[LI:.*]] = %[[WL]]) -> (tensor<?xf32>, tensor<3x2xbf16>, tensor<3x2xi16>)
// CHECK-NEXT: %[[J:.*]] = fuse.join_halves %[[TI]], %[[LI]] : (tensor<3x2xbf16>, tensor<3x2xi16>) -> tensor<3x2xf32>
// CHECK-NOT: fuse.cast %[[W]]
// CHECK-NOT: fuse.high_half
// CHECK: fuse.matmul %{{.*}}, %[[TI]]
// CHECK: fuse.mul %[[J]], %[[J]]
// CHECK: %[[U:.*]]:3 = fuse.sgd %[[LR]], %{{.*}} params(%[[J]] : tensor<3x2xf32>) grads(%{{.*}} : tensor<3x2xf32>) states() copies(%[[TI]], %[[LI]] : tensor<3x2xbf16>, tensor<3x2xi16>) {copy_params = array<i64: 0>, split_copies}
// CHECK: scf.yield %{{.*}}, %[[U]]#1, %[[U]]#2 : tensor<?xf32>, tensor<3x2xbf16>, tensor<3x2xi16>
// CHECK-NOT: fuse.join_halves
// CHECK: return %[[R]]#0, %[[R]]#1, %[[R]]#2 : tensor<?xf32>, tensor<3x2xbf16>, tensor<3x2xi16>
func.func @split(%w: tensor<3x2xf32>, %x: tensor<4x3xf32> {fuse.per_step},
                 %lr: tensor<f32>, %step: tensor<i64> {fuse.step_counter})
    -> (tensor<f32>, tensor<3x2xf32> {fuse.in_place = 0}) {
  %wt = fuse.high_half %w : (tensor<3x2xf32>) -> tensor<3x2xbf16>
  %wl = fuse.low_half %w : (tensor<3x2xf32>) -> tensor<3x2xi16>
  %xb = fuse.cast %x : (tensor<4x3xf32>) -> tensor<4x3xbf16>
  %h = fuse.matmul %xb, %wt : (tensor<4x3xbf16>, tensor<3x2xbf16>) -> tensor<4x2xf32>
  %hb = fuse.cast %h : (tensor<4x2xf32>) -> tensor<4x2xbf16>
  %dw = fuse.matmul %xb, %hb {transpose_lhs} : (tensor<4x3xbf16>, tensor<4x2xbf16>) -> tensor<3x2xf32>
  %w2 = fuse.mul %w, %w : (tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
  %g = fuse.add %dw, %w2 : (tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
  %l = fuse.reduce_sum %h {axes = array<i64: 0, 1>} : (tensor<4x2xf32>) -> tensor<f32>
  %u:3 = fuse.sgd %lr, %step params(%w : tensor<3x2xf32>) grads(%g : tensor<3x2xf32>) states() copies(%wt, %wl : tensor<3x2xbf16>, tensor<3x2xi16>) {copy_params = array<i64: 0>, split_copies} -> tensor<3x2xf32>, tensor<3x2xbf16>, tensor<3x2xi16>
  return %l, %u#0 : tensor<f32>, tensor<3x2xf32>
}
