// RUN: fuse-opt %s --fuse-distinct-results --split-input-file | FileCheck %s

// Every tensor result must be computed by a linalg op into a buffer of its
// own: anything else is returned through a copy into a fresh tensor.empty.
// Arguments are read-only, except those a result is computed in place of.

// A value returned twice (as CSE leaves two identical exps): the first
// position keeps the generic, the second gets a copy of it.
#map = affine_map<(d0) -> (d0)>
// CHECK-LABEL: func @returned_twice
// CHECK: %[[E:.*]] = linalg.generic
// CHECK: math.exp
// CHECK: %[[INIT:.*]] = tensor.empty() : tensor<4xf32>
// CHECK: %[[COPY:.*]] = bufferization.materialize_in_destination %[[E]] in %[[INIT]] : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NOT: materialize_in_destination
// CHECK: return %[[E]], %[[COPY]] : tensor<4xf32>, tensor<4xf32>
func.func @returned_twice(%arg0: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = tensor.empty() : tensor<4xf32>
  %1 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]} ins(%arg0 : tensor<4xf32>) outs(%0 : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %2 = math.exp %in : f32
    linalg.yield %2 : f32
  } -> tensor<4xf32>
  return %1, %1 : tensor<4xf32>, tensor<4xf32>
}

// -----

// A function argument returned as is.
// CHECK-LABEL: func @argument
// CHECK-SAME: (%[[X:[^:]*]]: tensor<2x3xf32> {bufferization.writable = false})
// CHECK: %[[INIT:.*]] = tensor.empty() : tensor<2x3xf32>
// CHECK: %[[COPY:.*]] = bufferization.materialize_in_destination %[[X]] in %[[INIT]] : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK: return %[[COPY]] : tensor<2x3xf32>
func.func @argument(%arg0: tensor<2x3xf32>) -> tensor<2x3xf32> {
  return %arg0 : tensor<2x3xf32>
}

// -----

// An argument returned twice: each position gets its own copy.
// CHECK-LABEL: func @argument_twice
// CHECK-SAME: (%[[X:[^:]*]]: tensor<4xi32> {bufferization.writable = false})
// CHECK: %[[COPY0:.*]] = bufferization.materialize_in_destination %[[X]] in
// CHECK: %[[COPY1:.*]] = bufferization.materialize_in_destination %[[X]] in
// CHECK: return %[[COPY0]], %[[COPY1]] : tensor<4xi32>, tensor<4xi32>
func.func @argument_twice(%arg0: tensor<4xi32>) -> (tensor<4xi32>, tensor<4xi32>) {
  return %arg0, %arg0 : tensor<4xi32>, tensor<4xi32>
}

// -----

// A constant.
// CHECK-LABEL: func @constant
// CHECK: %[[CST:.*]] = arith.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]> : tensor<4xf32>
// CHECK: %[[INIT:.*]] = tensor.empty() : tensor<4xf32>
// CHECK: %[[COPY:.*]] = bufferization.materialize_in_destination %[[CST]] in %[[INIT]] : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK: return %[[COPY]] : tensor<4xf32>
func.func @constant() -> tensor<4xf32> {
  %cst = arith.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  return %cst : tensor<4xf32>
}

// -----

// Views (fuse.reshape) of arguments: a collapse_shape and an expand_shape.
// CHECK-LABEL: func @views
// CHECK: %[[FLAT:.*]] = tensor.collapse_shape
// CHECK: %[[SHAPED:.*]] = tensor.expand_shape
// CHECK: %[[COPY0:.*]] = bufferization.materialize_in_destination %[[FLAT]] in
// CHECK: %[[COPY1:.*]] = bufferization.materialize_in_destination %[[SHAPED]] in
// CHECK: return %[[COPY0]], %[[COPY1]] : tensor<6xf32>, tensor<2x3xf32>
func.func @views(%arg0: tensor<2x3xf32>, %arg1: tensor<6xf32>) -> (tensor<6xf32>, tensor<2x3xf32>) {
  %collapsed = tensor.collapse_shape %arg0 [[0, 1]] : tensor<2x3xf32> into tensor<6xf32>
  %expanded = tensor.expand_shape %arg1 [[0, 1]] output_shape [2, 3] : tensor<6xf32> into tensor<2x3xf32>
  return %collapsed, %expanded : tensor<6xf32>, tensor<2x3xf32>
}

// -----

// Results computed by linalg ops (a matmul and an element-wise generic) are
// returned as they are: no copy.
#map = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func @computed
// CHECK-NOT: materialize_in_destination
// CHECK: %[[MM:.*]] = linalg.matmul
// CHECK-NOT: materialize_in_destination
// CHECK: %[[NEG:.*]] = linalg.generic
// CHECK-NOT: materialize_in_destination
// CHECK: return %[[MM]], %[[NEG]] : tensor<4x2xf32>, tensor<4x8xf32>
func.func @computed(%arg0: tensor<4x8xf32>, %arg1: tensor<8x2xf32>) -> (tensor<4x2xf32>, tensor<4x8xf32>) {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<4x2xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<4x2xf32>) -> tensor<4x2xf32>
  %2 = linalg.matmul ins(%arg0, %arg1 : tensor<4x8xf32>, tensor<8x2xf32>) outs(%1 : tensor<4x2xf32>) -> tensor<4x2xf32>
  %3 = tensor.empty() : tensor<4x8xf32>
  %4 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%arg0 : tensor<4x8xf32>) outs(%3 : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %5 = arith.negf %in : f32
    linalg.yield %5 : f32
  } -> tensor<4x8xf32>
  return %2, %4 : tensor<4x2xf32>, tensor<4x8xf32>
}

// -----

// A result in place of an argument: that argument alone is writable, and
// the result is returned as computed (fuse-in-place-results checks where
// bufferization put it). Returning the same value again copies it.
#map = affine_map<(d0) -> (d0)>
// CHECK-LABEL: func @in_place
// CHECK-SAME: (%[[P:[^:]*]]: tensor<4xf32> {bufferization.writable = true}, %[[G:[^:]*]]: tensor<4xf32> {bufferization.writable = false})
// CHECK: %[[U:.*]] = linalg.generic
// CHECK: %[[COPY:.*]] = bufferization.materialize_in_destination %[[U]] in
// CHECK: return %[[U]], %[[COPY]]
func.func @in_place(%p: tensor<4xf32>, %g: tensor<4xf32>) -> (tensor<4xf32> {fuse.in_place = 0 : i64}, tensor<4xf32>) {
  %0 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]} ins(%g : tensor<4xf32>) outs(%p : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %1 = arith.subf %out, %in : f32
    linalg.yield %1 : f32
  } -> tensor<4xf32>
  return %0, %0 : tensor<4xf32>, tensor<4xf32>
}

// -----

// Two parameters swapped, each in place of the other: both values are
// copied to fresh tensors first, so writing one argument never clobbers the
// value the other needs. A result that is its own argument needs nothing.
// CHECK-LABEL: func @swapped
// CHECK-SAME: (%[[A:[^:]*]]: tensor<4xf32> {bufferization.writable = true}, %[[B:[^:]*]]: tensor<4xf32> {bufferization.writable = true}, %[[C:[^:]*]]: tensor<4xf32> {bufferization.writable = true})
// CHECK: %[[COPY_B:.*]] = bufferization.materialize_in_destination %[[B]] in
// CHECK: %[[COPY_A:.*]] = bufferization.materialize_in_destination %[[A]] in
// CHECK-NOT: materialize_in_destination
// CHECK: return %[[COPY_B]], %[[COPY_A]], %[[C]]
func.func @swapped(%a: tensor<4xf32>, %b: tensor<4xf32>, %c: tensor<4xf32>) -> (tensor<4xf32> {fuse.in_place = 0 : i64}, tensor<4xf32> {fuse.in_place = 1 : i64}, tensor<4xf32> {fuse.in_place = 2 : i64}) {
  return %b, %a, %c : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// A loop's carried values stay in one buffer: %p, updated into a new tensor
// (as the unfused optimizer writes it), is copied into its iteration
// argument at the yield; %q, computed into its iteration argument (a
// generic's outs), and %s, inserted into it, need nothing.
// CHECK-LABEL: func @carried
// CHECK: scf.for {{.*}} iter_args(%[[P:[^ ]*]] = %{{[^,]*}}, %[[Q:[^ ]*]] = %{{[^,]*}}, %[[S:[^ ]*]] = %{{[^)]*}})
// CHECK: %[[NEWP:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<4xf32>)
// CHECK: %[[NEWQ:.*]] = linalg.generic {{.*}} outs(%[[Q]] : tensor<4xf32>)
// CHECK: %[[NEWS:.*]] = tensor.insert_slice %{{.*}} into %[[S]]
// CHECK: %[[KEPT:.*]] = bufferization.materialize_in_destination %[[NEWP]] in %[[P]]
// CHECK-NOT: materialize_in_destination
// CHECK: scf.yield %[[KEPT]], %[[NEWQ]], %[[NEWS]]
#id = affine_map<(d0) -> (d0)>
func.func @carried(%p0: tensor<4xf32>, %q0: tensor<4xf32>, %s0: tensor<8xf32>, %n: index) -> (tensor<4xf32> {fuse.in_place = 0 : i64}, tensor<4xf32> {fuse.in_place = 1 : i64}, tensor<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r:3 = scf.for %i = %c0 to %n step %c1 iter_args(%p = %p0, %q = %q0, %s = %s0) -> (tensor<4xf32>, tensor<4xf32>, tensor<8xf32>) {
    %e = tensor.empty() : tensor<4xf32>
    %np = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%p : tensor<4xf32>) outs(%e : tensor<4xf32>) {
    ^bb0(%in: f32, %out: f32):
      %1 = arith.addf %in, %in : f32
      linalg.yield %1 : f32
    } -> tensor<4xf32>
    %nq = linalg.generic {indexing_maps = [#id], iterator_types = ["parallel"]} outs(%q : tensor<4xf32>) {
    ^bb0(%out: f32):
      %1 = arith.mulf %out, %out : f32
      linalg.yield %1 : f32
    } -> tensor<4xf32>
    %ns = tensor.insert_slice %np into %s[4] [4] [1] : tensor<4xf32> into tensor<8xf32>
    scf.yield %np, %nq, %ns : tensor<4xf32>, tensor<4xf32>, tensor<8xf32>
  }
  return %r#0, %r#1, %r#2 : tensor<4xf32>, tensor<4xf32>, tensor<8xf32>
}
