// RUN: fuse-opt %s --fuse-specialize="function=f arg-types=tensor<3x2xf32>,tensor<?x8x3xf32>,tensor<?x8xi32>,tensor<f32>,tensor<i64>" --split-input-file | FileCheck %s

// K-step functions (as fuse-wrap-steps makes them) are specialized with the
// step count K left dynamic: every case specializes a function @f whose five
// arguments are (parameter, stacked batch, stacked labels, lr, step counter)
// with the arg-types above. These live apart from specialize.mlir because its
// RUN line fixes fully static arg-types for every split.

// The carried parameter refines the loop's iter_arg and result; the per-step
// slices, sized by tensor.dim of the stack, are rebuilt with static sizes and
// a static result type, so the step's body is fully static. The trip count,
// the metric stack and the stacked result keep their dynamic leading dim.
// CHECK-LABEL: func @f
// CHECK-SAME: (%[[W:[^:]*]]: tensor<3x2xf32>, %[[X:[^:]*]]: tensor<?x8x3xf32> {fuse.stacked}, %[[Y:[^:]*]]: tensor<?x8xi32> {fuse.stacked}, %{{[^:]*}}: tensor<f32>, %{{[^:]*}}: tensor<i64> {fuse.step_counter})
// CHECK-SAME: -> (tensor<?xf32> {fuse.stacked}, tensor<3x2xf32>)
// CHECK: %[[K:.*]] = tensor.dim %[[X]], %{{.*}} : tensor<?x8x3xf32>
// CHECK: %[[E:.*]] = tensor.empty(%[[K]]) : tensor<?xf32>
// CHECK: %[[R:.*]]:2 = scf.for %[[I:.*]] = %{{.*}} to %[[K]] step %{{.*}} iter_args(%[[WI:.*]] = %[[W]], %[[LS:.*]] = %[[E]]) -> (tensor<3x2xf32>, tensor<?xf32>)
// CHECK: %[[XS:.*]] = tensor.extract_slice %[[X]][%[[I]], 0, 0] [1, 8, 3] [1, 1, 1] : tensor<?x8x3xf32> to tensor<8x3xf32>
// CHECK: %[[YS:.*]] = tensor.extract_slice %[[Y]][%[[I]], 0] [1, 8] [1, 1] : tensor<?x8xi32> to tensor<8xi32>
// CHECK: %[[H:.*]] = fuse.matmul %[[XS]], %[[WI]] : (tensor<8x3xf32>, tensor<3x2xf32>) -> tensor<8x2xf32>
// CHECK: %[[L:.*]] = fuse.softmax_cross_entropy %[[H]], %[[YS]] : (tensor<8x2xf32>, tensor<8xi32>) -> tensor<f32>
// CHECK: %[[U:.*]] = fuse.sub %[[WI]], %{{.*}} : (tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
// CHECK: %[[INS:.*]] = tensor.insert_slice %[[L]] into %[[LS]][%[[I]]] [1] [1] : tensor<f32> into tensor<?xf32>
// CHECK: scf.yield %[[U]], %[[INS]] : tensor<3x2xf32>, tensor<?xf32>
// CHECK: return %[[R]]#1, %[[R]]#0 : tensor<?xf32>, tensor<3x2xf32>
func.func @f(%w: tensor<?x2xf32>, %x: tensor<?x?x3xf32> {fuse.stacked}, %y: tensor<?x?xi32> {fuse.stacked},
             %lr: tensor<f32>, %step: tensor<i64> {fuse.step_counter})
    -> (tensor<?xf32> {fuse.stacked}, tensor<?x2xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %k = tensor.dim %x, %c0 : tensor<?x?x3xf32>
  %e = tensor.empty(%k) : tensor<?xf32>
  %r:2 = scf.for %i = %c0 to %k step %c1 iter_args(%wi = %w, %losses = %e) -> (tensor<?x2xf32>, tensor<?xf32>) {
    %n = tensor.dim %x, %c1 : tensor<?x?x3xf32>
    %xs = tensor.extract_slice %x[%i, 0, 0] [1, %n, 3] [1, 1, 1] : tensor<?x?x3xf32> to tensor<?x3xf32>
    %m = tensor.dim %y, %c1 : tensor<?x?xi32>
    %ys = tensor.extract_slice %y[%i, 0] [1, %m] [1, 1] : tensor<?x?xi32> to tensor<?xi32>
    %h = fuse.matmul %xs, %wi : (tensor<?x3xf32>, tensor<?x2xf32>) -> tensor<?x2xf32>
    %l = fuse.softmax_cross_entropy %h, %ys : (tensor<?x2xf32>, tensor<?xi32>) -> tensor<f32>
    %d = fuse.mul %wi, %lr : (tensor<?x2xf32>, tensor<f32>) -> tensor<?x2xf32>
    %wn = fuse.sub %wi, %d : (tensor<?x2xf32>, tensor<?x2xf32>) -> tensor<?x2xf32>
    %ls = tensor.insert_slice %l into %losses[%i] [1] [1] : tensor<f32> into tensor<?xf32>
    scf.yield %wn, %ls : tensor<?x2xf32>, tensor<?xf32>
  }
  return %r#1, %r#0 : tensor<?xf32>, tensor<?x2xf32>
}

// -----

// Only sizes that are dims of a now-static dim become static: a size that is
// the (dynamic) step count stays a value, next to a refined one.
// CHECK-LABEL: func @f
// CHECK-SAME: (%{{[^:]*}}: tensor<3x2xf32>, %[[X:[^:]*]]: tensor<?x8x3xf32> {fuse.stacked}, {{.*}})
// CHECK-SAME: -> tensor<?x8x3xf32>
// CHECK: %[[K:.*]] = tensor.dim %[[X]], %{{.*}} : tensor<?x8x3xf32>
// CHECK: %[[S:.*]] = tensor.extract_slice %[[X]][0, 0, 0] [%[[K]], 8, 3] [1, 1, 1] : tensor<?x8x3xf32> to tensor<?x8x3xf32>
// CHECK: return %[[S]] : tensor<?x8x3xf32>
func.func @f(%w: tensor<3x2xf32>, %x: tensor<?x?x3xf32> {fuse.stacked}, %y: tensor<?x?xi32> {fuse.stacked},
             %lr: tensor<f32>, %step: tensor<i64> {fuse.step_counter}) -> tensor<?x?x3xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %k = tensor.dim %x, %c0 : tensor<?x?x3xf32>
  %n = tensor.dim %x, %c1 : tensor<?x?x3xf32>
  %s = tensor.extract_slice %x[0, 0, 0] [%k, %n, 3] [1, 1, 1] : tensor<?x?x3xf32> to tensor<?x?x3xf32>
  return %s : tensor<?x?x3xf32>
}
