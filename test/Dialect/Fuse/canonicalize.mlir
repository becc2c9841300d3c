// RUN: fuse-opt %s --canonicalize --split-input-file | FileCheck %s

// CHECK-LABEL: func @fold_unary_constants
func.func @fold_unary_constants() -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xi32>, tensor<2xi32>) {
  %c = fuse.constant dense<[-1.0, 4.0]> : tensor<2xf32>
  %i = fuse.constant dense<[-3, 5]> : tensor<2xi32>
  // CHECK-DAG: fuse.constant dense<[1.000000e+00, -4.000000e+00]> : tensor<2xf32>
  %0 = fuse.neg %c : tensor<2xf32>
  // CHECK-DAG: fuse.constant dense<[1.000000e+00, 1.600000e+01]> : tensor<2xf32>
  %1 = fuse.square %c : tensor<2xf32>
  // CHECK-DAG: fuse.constant dense<[0.000000e+00, 4.000000e+00]> : tensor<2xf32>
  %2 = fuse.relu %c : tensor<2xf32>
  // CHECK-DAG: fuse.constant dense<[1.000000e+00, 4.000000e+00]> : tensor<2xf32>
  %3 = fuse.abs %c : tensor<2xf32>
  // CHECK-DAG: fuse.constant dense<[3, 5]> : tensor<2xi32>
  %4 = fuse.abs %i : tensor<2xi32>
  // CHECK-DAG: fuse.constant dense<[0, 5]> : tensor<2xi32>
  %5 = fuse.relu %i : tensor<2xi32>
  // CHECK-NOT: fuse.neg
  // CHECK-NOT: fuse.square
  // CHECK-NOT: fuse.relu
  // CHECK-NOT: fuse.abs
  return %0, %1, %2, %3, %4, %5 : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xi32>, tensor<2xi32>
}

// -----

// CHECK-LABEL: func @fold_math_constants
func.func @fold_math_constants() -> (tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>) {
  %zero = fuse.constant dense<0.0> : tensor<f32>
  %four = fuse.constant dense<4.0> : tensor<f32>
  %one = fuse.constant dense<1.0> : tensor<f32>
  // CHECK-DAG: fuse.constant dense<1.000000e+00> : tensor<f32>
  %0 = fuse.exp %zero : tensor<f32>
  // CHECK-DAG: fuse.constant dense<0.000000e+00> : tensor<f32>
  %1 = fuse.log %one : tensor<f32>
  // CHECK-DAG: fuse.constant dense<2.000000e+00> : tensor<f32>
  %2 = fuse.sqrt %four : tensor<f32>
  // CHECK-DAG: fuse.constant dense<5.000000e-01> : tensor<f32>
  %3 = fuse.rsqrt %four : tensor<f32>
  %4 = fuse.tanh %zero : tensor<f32>
  %5 = fuse.sigmoid %zero : tensor<f32>
  // CHECK-NOT: fuse.exp
  // CHECK-NOT: fuse.log
  // CHECK-NOT: fuse.sqrt
  // CHECK-NOT: fuse.rsqrt
  // CHECK-NOT: fuse.tanh
  // CHECK-NOT: fuse.sigmoid
  return %0, %1, %2, %3, %4, %5 : tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>
}

// -----

// CHECK-LABEL: func @fold_binary_broadcast
func.func @fold_binary_broadcast() -> (tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>) {
  %col = fuse.constant dense<[[1.0], [2.0]]> : tensor<2x1xf32>
  %row = fuse.constant dense<[10.0, 20.0]> : tensor<2xf32>
  // CHECK-DAG: fuse.constant dense<{{\[}}[1.100000e+01, 2.100000e+01], [1.200000e+01, 2.200000e+01]]> : tensor<2x2xf32>
  %0 = fuse.add %col, %row : (tensor<2x1xf32>, tensor<2xf32>) -> tensor<2x2xf32>
  // CHECK-DAG: fuse.constant dense<{{\[}}[-9.000000e+00, -1.900000e+01], [-8.000000e+00, -1.800000e+01]]> : tensor<2x2xf32>
  %1 = fuse.sub %col, %row : (tensor<2x1xf32>, tensor<2xf32>) -> tensor<2x2xf32>
  // CHECK-DAG: fuse.constant dense<{{\[}}[1.000000e+01, 2.000000e+01], [2.000000e+01, 4.000000e+01]]> : tensor<2x2xf32>
  %2 = fuse.mul %col, %row : (tensor<2x1xf32>, tensor<2xf32>) -> tensor<2x2xf32>
  // CHECK-DAG: fuse.constant dense<{{\[}}[1.000000e+01, 2.000000e+01], [5.000000e+00, 1.000000e+01]]> : tensor<2x2xf32>
  %3 = fuse.div %row, %col : (tensor<2xf32>, tensor<2x1xf32>) -> tensor<2x2xf32>
  // CHECK-DAG: fuse.constant dense<{{\[}}[1.000000e+01, 2.000000e+01], [1.000000e+01, 2.000000e+01]]> : tensor<2x2xf32>
  %4 = fuse.max %col, %row : (tensor<2x1xf32>, tensor<2xf32>) -> tensor<2x2xf32>
  // CHECK-DAG: fuse.constant dense<{{\[}}[1.000000e+00, 1.000000e+00], [2.000000e+00, 2.000000e+00]]> : tensor<2x2xf32>
  %5 = fuse.min %col, %row : (tensor<2x1xf32>, tensor<2xf32>) -> tensor<2x2xf32>
  // CHECK-DAG: fuse.constant dense<{{\[}}[1.000000e+00, 1.000000e+00], [1.024000e+03, 0x49800000]]> : tensor<2x2xf32>
  %6 = fuse.pow %col, %row : (tensor<2x1xf32>, tensor<2xf32>) -> tensor<2x2xf32>
  // CHECK-NOT: fuse.add
  // CHECK-NOT: fuse.pow
  return %0, %1, %2, %3, %4, %5, %6 : tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>
}

// -----

// CHECK-LABEL: func @fold_integer_binary
func.func @fold_integer_binary() -> (tensor<2xi32>, tensor<2xi32>) {
  %a = fuse.constant dense<[7, -7]> : tensor<2xi32>
  %b = fuse.constant dense<2> : tensor<i32>
  // CHECK-DAG: fuse.constant dense<[3, -3]> : tensor<2xi32>
  %0 = fuse.div %a, %b : (tensor<2xi32>, tensor<i32>) -> tensor<2xi32>
  // CHECK-DAG: fuse.constant dense<[9, -5]> : tensor<2xi32>
  %1 = fuse.add %a, %b : (tensor<2xi32>, tensor<i32>) -> tensor<2xi32>
  return %0, %1 : tensor<2xi32>, tensor<2xi32>
}

// -----

// Splats fold into splats, however large.
// CHECK-LABEL: func @fold_large_splat
func.func @fold_large_splat() -> tensor<1000x1000xf32> {
  %a = fuse.constant dense<1.5> : tensor<1000x1000xf32>
  %b = fuse.constant dense<2.0> : tensor<1000x1000xf32>
  // CHECK: %[[C:.*]] = fuse.constant dense<3.500000e+00> : tensor<1000x1000xf32>
  // CHECK: return %[[C]]
  %0 = fuse.add %a, %b : (tensor<1000x1000xf32>, tensor<1000x1000xf32>) -> tensor<1000x1000xf32>
  return %0 : tensor<1000x1000xf32>
}

// -----

// A non-splat result over the size limit (65536 elements) is not materialized.
// CHECK-LABEL: func @no_fold_large_constant
func.func @no_fold_large_constant() -> (tensor<65537x2xf32>, tensor<4x2xf32>) {
  %big = fuse.constant dense<1.0> : tensor<65537x2xf32>
  %small = fuse.constant dense<1.0> : tensor<4x2xf32>
  %row = fuse.constant dense<[1.0, 2.0]> : tensor<2xf32>
  // CHECK-DAG: fuse.add %{{.*}}, %{{.*}} : (tensor<65537x2xf32>, tensor<2xf32>) -> tensor<65537x2xf32>
  %0 = fuse.add %big, %row : (tensor<65537x2xf32>, tensor<2xf32>) -> tensor<65537x2xf32>
  // CHECK-DAG: fuse.constant dense<{{\[}}[2.000000e+00, 3.000000e+00]{{.*}}> : tensor<4x2xf32>
  %1 = fuse.add %small, %row : (tensor<4x2xf32>, tensor<2xf32>) -> tensor<4x2xf32>
  return %0, %1 : tensor<65537x2xf32>, tensor<4x2xf32>
}

// -----

// CHECK-LABEL: func @fold_compare_select
func.func @fold_compare_select(%x: tensor<2xf32>, %y: tensor<2xf32>) -> (tensor<2xi1>, tensor<2xi1>, tensor<2xf32>, tensor<2xf32>) {
  %a = fuse.constant dense<[1.0, 0x7FC00000]> : tensor<2xf32>
  %b = fuse.constant dense<1.0> : tensor<f32>
  // NaN compares unordered: eq is false, ne is true.
  // CHECK-DAG: fuse.constant dense<[true, false]> : tensor<2xi1>
  %0 = fuse.compare eq, %a, %b : (tensor<2xf32>, tensor<f32>) -> tensor<2xi1>
  // CHECK-DAG: fuse.constant dense<[false, true]> : tensor<2xi1>
  %1 = fuse.compare ne, %a, %b : (tensor<2xf32>, tensor<f32>) -> tensor<2xi1>
  %t = fuse.constant dense<true> : tensor<i1>
  %2 = fuse.select %t, %x, %y : (tensor<i1>, tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %c = fuse.compare lt, %x, %y : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xi1>
  %3 = fuse.select %c, %y, %y : (tensor<2xi1>, tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  // CHECK-NOT: fuse.select
  // CHECK: return %{{.*}}, %{{.*}}, %arg0, %arg1
  return %0, %1, %2, %3 : tensor<2xi1>, tensor<2xi1>, tensor<2xf32>, tensor<2xf32>
}

// -----

// CHECK-LABEL: func @fold_reductions
func.func @fold_reductions() -> (tensor<2xf32>, tensor<3xf32>, tensor<2x1xf32>, tensor<i32>, tensor<3xf32>) {
  %c = fuse.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %i = fuse.constant dense<[[1, 9], [-4, 2]]> : tensor<2x2xi32>
  %s = fuse.constant dense<2.0> : tensor<4x3xf32>
  // CHECK-DAG: fuse.constant dense<[6.000000e+00, 1.500000e+01]> : tensor<2xf32>
  %0 = fuse.reduce_sum %c {axes = array<i64: 1>} : (tensor<2x3xf32>) -> tensor<2xf32>
  // CHECK-DAG: fuse.constant dense<[2.500000e+00, 3.500000e+00, 4.500000e+00]> : tensor<3xf32>
  %1 = fuse.reduce_mean %c {axes = array<i64: 0>} : (tensor<2x3xf32>) -> tensor<3xf32>
  // CHECK-DAG: fuse.constant dense<{{\[}}[3.000000e+00], [6.000000e+00]]> : tensor<2x1xf32>
  %2 = fuse.reduce_max %c {axes = array<i64: 1>, keepdims} : (tensor<2x3xf32>) -> tensor<2x1xf32>
  // CHECK-DAG: fuse.constant dense<9> : tensor<i32>
  %3 = fuse.reduce_max %i {axes = array<i64: 0, 1>} : (tensor<2x2xi32>) -> tensor<i32>
  // CHECK-DAG: fuse.constant dense<8.000000e+00> : tensor<3xf32>
  %4 = fuse.reduce_sum %s {axes = array<i64: 0>} : (tensor<4x3xf32>) -> tensor<3xf32>
  // CHECK-NOT: fuse.reduce
  return %0, %1, %2, %3, %4 : tensor<2xf32>, tensor<3xf32>, tensor<2x1xf32>, tensor<i32>, tensor<3xf32>
}

// -----

// CHECK-LABEL: func @fold_shape_constants
func.func @fold_shape_constants() -> (tensor<3x2xf32>, tensor<6xf32>, tensor<4x2xf32>) {
  %c = fuse.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  // CHECK-DAG: fuse.constant dense<{{\[}}[1.000000e+00, 4.000000e+00], [2.000000e+00, 5.000000e+00], [3.000000e+00, 6.000000e+00]]> : tensor<3x2xf32>
  %0 = fuse.transpose %c {permutation = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  // CHECK-DAG: fuse.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00, 5.000000e+00, 6.000000e+00]> : tensor<6xf32>
  %1 = fuse.reshape %c : (tensor<2x3xf32>) -> tensor<6xf32>
  %s = fuse.constant dense<7.0> : tensor<2xf32>
  // CHECK-DAG: fuse.constant dense<7.000000e+00> : tensor<4x2xf32>
  %2 = fuse.broadcast_to %s : (tensor<2xf32>) -> tensor<4x2xf32>
  // CHECK-NOT: fuse.transpose
  // CHECK-NOT: fuse.reshape
  // CHECK-NOT: fuse.broadcast_to
  return %0, %1, %2 : tensor<3x2xf32>, tensor<6xf32>, tensor<4x2xf32>
}

// -----

// CHECK-LABEL: func @identities
// CHECK-SAME: (%[[X:.*]]: tensor<?x4xf32>
func.func @identities(%x: tensor<?x4xf32>) -> (tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>) {
  %zero = fuse.constant dense<0.0> : tensor<f32>
  %one = fuse.constant dense<1.0> : tensor<4xf32>
  %0 = fuse.add %x, %zero : (tensor<?x4xf32>, tensor<f32>) -> tensor<?x4xf32>
  // The constant moves to the right, then folds.
  %1 = fuse.add %zero, %x : (tensor<f32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  %2 = fuse.sub %x, %zero : (tensor<?x4xf32>, tensor<f32>) -> tensor<?x4xf32>
  %3 = fuse.mul %x, %one : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  %4 = fuse.div %x, %one : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  %5 = fuse.pow %x, %one : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  %6 = fuse.max %x, %x : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  %7 = fuse.min %x, %x : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  // CHECK-NOT: fuse.
  // CHECK: return %[[X]], %[[X]], %[[X]], %[[X]], %[[X]], %[[X]], %[[X]], %[[X]]
  return %0, %1, %2, %3, %4, %5, %6, %7 : tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>
}

// -----

// CHECK-LABEL: func @involutions
// CHECK-SAME: (%[[X:.*]]: tensor<3x4xf32>
func.func @involutions(%x: tensor<3x4xf32>) -> (tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>) {
  %0 = fuse.neg %x : tensor<3x4xf32>
  %1 = fuse.neg %0 : tensor<3x4xf32>
  // CHECK: %[[R:.*]] = fuse.relu %[[X]]
  %2 = fuse.relu %x : tensor<3x4xf32>
  %3 = fuse.relu %2 : tensor<3x4xf32>
  // CHECK: %[[A:.*]] = fuse.abs %[[X]]
  %4 = fuse.abs %x : tensor<3x4xf32>
  %5 = fuse.abs %4 : tensor<3x4xf32>
  %t = fuse.transpose %x {permutation = array<i64: 1, 0>} : (tensor<3x4xf32>) -> tensor<4x3xf32>
  %6 = fuse.transpose %t {permutation = array<i64: 1, 0>} : (tensor<4x3xf32>) -> tensor<3x4xf32>
  // CHECK-NOT: fuse.neg
  // CHECK-NOT: fuse.transpose
  // CHECK: return %[[X]], %[[R]], %[[A]], %[[X]]
  return %1, %3, %5, %6 : tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>
}

// -----

// CHECK-LABEL: func @compose_shape_ops
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x4xf32>, %[[Y:.*]]: tensor<4xf32>
func.func @compose_shape_ops(%x: tensor<2x3x4xf32>, %y: tensor<4xf32>) -> (tensor<4x2x3xf32>, tensor<24xf32>, tensor<5x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>) {
  // CHECK: fuse.transpose %[[X]] {permutation = array<i64: 2, 0, 1>} : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
  %t = fuse.transpose %x {permutation = array<i64: 1, 2, 0>} : (tensor<2x3x4xf32>) -> tensor<3x4x2xf32>
  %0 = fuse.transpose %t {permutation = array<i64: 1, 2, 0>} : (tensor<3x4x2xf32>) -> tensor<4x2x3xf32>
  // CHECK: fuse.reshape %[[X]] : (tensor<2x3x4xf32>) -> tensor<24xf32>
  %r = fuse.reshape %x : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
  %1 = fuse.reshape %r : (tensor<6x4xf32>) -> tensor<24xf32>
  // CHECK: fuse.broadcast_to %[[Y]] : (tensor<4xf32>) -> tensor<5x3x4xf32>
  %b = fuse.broadcast_to %y : (tensor<4xf32>) -> tensor<3x4xf32>
  %2 = fuse.broadcast_to %b : (tensor<3x4xf32>) -> tensor<5x3x4xf32>
  %3 = fuse.reshape %x : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %4 = fuse.broadcast_to %x : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %5 = fuse.transpose %x {permutation = array<i64: 0, 1, 2>} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  // CHECK: return %{{.*}}, %{{.*}}, %{{.*}}, %[[X]], %[[X]], %[[X]]
  return %0, %1, %2, %3, %4, %5 : tensor<4x2x3xf32>, tensor<24xf32>, tensor<5x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>
}

// -----

// CHECK-LABEL: func @trivial_reduce_and_dropout
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>, %[[S:.*]]: tensor<i64>)
func.func @trivial_reduce_and_dropout(%x: tensor<4xf32>, %s: tensor<i64>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %0 = fuse.reduce_sum %x {axes = array<i64>} : (tensor<4xf32>) -> tensor<4xf32>
  %1 = fuse.dropout %x, %s {rate = 0.0 : f32} : tensor<4xf32>
  // CHECK: %[[D:.*]] = fuse.dropout %[[X]], %[[S]] {rate = 5.000000e-01 : f32
  %2 = fuse.dropout %x, %s {rate = 0.5 : f32} : tensor<4xf32>
  // CHECK: return %[[X]], %[[X]], %[[D]]
  return %0, %1, %2 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// CHECK-LABEL: func @integer_zero_identities
// CHECK-SAME: (%[[X:.*]]: tensor<3xi32>
func.func @integer_zero_identities(%x: tensor<3xi32>) -> (tensor<3xi32>, tensor<3xi32>) {
  %zero = fuse.constant dense<0> : tensor<3xi32>
  // CHECK: %[[Z:.*]] = fuse.constant dense<0> : tensor<3xi32>
  %0 = fuse.mul %x, %zero : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>
  %1 = fuse.sub %x, %x : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>
  // CHECK-NOT: fuse.mul
  // CHECK-NOT: fuse.sub
  // CHECK: return %[[Z]], %[[Z]]
  return %0, %1 : tensor<3xi32>, tensor<3xi32>
}

// -----

// Float x * 0 and x - x are NaN for x = inf or NaN: they must not fold.
// CHECK-LABEL: func @no_fold_float_zero
func.func @no_fold_float_zero(%x: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  %zero = fuse.constant dense<0.0> : tensor<3xf32>
  // CHECK: fuse.mul
  %0 = fuse.mul %x, %zero : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  // CHECK: fuse.sub
  %1 = fuse.sub %x, %x : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %0, %1 : tensor<3xf32>, tensor<3xf32>
}

// -----

// x + 0 where the zero broadcasts x to a larger shape is not an identity.
// CHECK-LABEL: func @no_fold_broadcasting_identity
func.func @no_fold_broadcasting_identity(%x: tensor<4xf32>) -> tensor<3x4xf32> {
  %zero = fuse.constant dense<0.0> : tensor<3x4xf32>
  // CHECK: fuse.add %{{.*}}, %{{.*}} : (tensor<4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  %0 = fuse.add %x, %zero : (tensor<4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

// Integer division is total, as in XLA (and as compiled code computes it):
// x / 0 is -1 and INT_MIN / -1 is INT_MIN.
// CHECK-LABEL: func @fold_int_div_total
func.func @fold_int_div_total() -> (tensor<2xi32>, tensor<4xi8>, tensor<2xi64>, tensor<4xi1>) {
  %a = fuse.constant dense<[4, -5]> : tensor<2xi32>
  %b = fuse.constant dense<0> : tensor<2xi32>
  // CHECK-DAG: fuse.constant dense<-1> : tensor<2xi32>
  %0 = fuse.div %a, %b : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi32>
  %c = fuse.constant dense<[-128, -128, 127, -7]> : tensor<4xi8>
  %d = fuse.constant dense<[-1, 0, -1, 2]> : tensor<4xi8>
  // CHECK-DAG: fuse.constant dense<[-128, -1, -127, -3]> : tensor<4xi8>
  %1 = fuse.div %c, %d : (tensor<4xi8>, tensor<4xi8>) -> tensor<4xi8>
  %e = fuse.constant dense<[-9223372036854775808, 9]> : tensor<2xi64>
  %f = fuse.constant dense<[-1, -1]> : tensor<2xi64>
  // CHECK-DAG: fuse.constant dense<[-9223372036854775808, -9]> : tensor<2xi64>
  %2 = fuse.div %e, %f : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi64>
  // i1 is signed: true is -1, so x / true is x and x / false is true.
  %g = fuse.constant dense<[false, true, false, true]> : tensor<4xi1>
  %h = fuse.constant dense<[false, false, true, true]> : tensor<4xi1>
  // CHECK-DAG: fuse.constant dense<[true, true, false, true]> : tensor<4xi1>
  %3 = fuse.div %g, %h : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  // CHECK-NOT: fuse.div
  return %0, %1, %2, %3 : tensor<2xi32>, tensor<4xi8>, tensor<2xi64>, tensor<4xi1>
}

// -----

// CHECK-LABEL: func @add_sub_of_neg
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>, %[[Y:.*]]: tensor<4xf32>)
func.func @add_sub_of_neg(%x: tensor<4xf32>, %y: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %n = fuse.neg %y : tensor<4xf32>
  // CHECK: %[[S:.*]] = fuse.sub %[[X]], %[[Y]]
  %0 = fuse.add %x, %n : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  // CHECK: %[[A:.*]] = fuse.add %[[X]], %[[Y]]
  %1 = fuse.sub %x, %n : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  // CHECK-NOT: fuse.neg
  // CHECK: return %[[S]], %[[A]]
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}

// -----

// full_like of a static shape is a splat constant; of a dynamic one, it stays.
// CHECK-LABEL: func @full_like
func.func @full_like(%x: tensor<2x3xf32>, %d: tensor<?xi32>) -> (tensor<2x3xf32>, tensor<?xi32>) {
  // CHECK: %[[C:.*]] = fuse.constant dense<2.500000e+00> : tensor<2x3xf32>
  %0 = fuse.full_like %x {value = 2.5 : f64} : tensor<2x3xf32>
  // CHECK: %[[D:.*]] = fuse.full_like %arg1 {value = 7.000000e+00 : f64} : tensor<?xi32>
  %1 = fuse.full_like %d {value = 7.0 : f64} : tensor<?xi32>
  // CHECK: return %[[C]], %[[D]]
  return %0, %1 : tensor<2x3xf32>, tensor<?xi32>
}

// -----

// The pool moves before a relu that nothing else reads.
// CHECK-LABEL: func @max_pool_of_relu
// CHECK-SAME: (%[[X:.*]]: tensor<1x4x4x2xf32>)
func.func @max_pool_of_relu(%x: tensor<1x4x4x2xf32>) -> (tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>, tensor<1x4x4x2xf32>) {
  // CHECK: %[[P:.*]] = fuse.max_pool2d %[[X]] {padding = array<i64: 1, 0, 1, 0>, window = array<i64: 2, 2>}
  // CHECK: %[[R:.*]] = fuse.relu %[[P]] : tensor<1x2x2x2xf32>
  %r = fuse.relu %x : tensor<1x4x4x2xf32>
  %0 = fuse.max_pool2d %r {window = array<i64: 2, 2>, padding = array<i64: 1, 0, 1, 0>} : (tensor<1x4x4x2xf32>) -> tensor<1x2x2x2xf32>
  // A relu with another use stays where it is.
  // CHECK: %[[R2:.*]] = fuse.relu %[[X]] : tensor<1x4x4x2xf32>
  // CHECK: %[[P2:.*]] = fuse.max_pool2d %[[R2]]
  %s = fuse.relu %x : tensor<1x4x4x2xf32>
  %1 = fuse.max_pool2d %s {window = array<i64: 2, 2>} : (tensor<1x4x4x2xf32>) -> tensor<1x2x2x2xf32>
  // CHECK: return %[[R]], %[[P2]], %[[R2]]
  return %0, %1, %s : tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>, tensor<1x4x4x2xf32>
}

// -----

// CHECK-LABEL: func @fold_sequence_identities
// CHECK-SAME: (%[[X:[^:]*]]: tensor<?x4xf32>)
func.func @fold_sequence_identities(%x: tensor<?x4xf32>) -> (tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>) {
  %0 = fuse.cast %x : (tensor<?x4xf32>) -> tensor<?x4xf32>
  %1 = fuse.slice %x {offsets = array<i64: 0, 0>} : (tensor<?x4xf32>) -> tensor<?x4xf32>
  %2 = fuse.pad %x {low = array<i64: 0, 0>, high = array<i64: 0, 0>} : (tensor<?x4xf32>) -> tensor<?x4xf32>
  %3 = fuse.concat %x {axis = 1 : i64} : (tensor<?x4xf32>) -> tensor<?x4xf32>
  // CHECK-NOT: fuse.
  // CHECK: return %[[X]], %[[X]], %[[X]], %[[X]]
  return %0, %1, %2, %3 : tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>
}

// -----

// CHECK-LABEL: func @fold_casts
func.func @fold_casts() -> (tensor<5xi8>, tensor<2xf32>, tensor<2xbf16>, tensor<2xi32>) {
  %f = fuse.constant dense<[-1.0e9, -2.7, 0x7FC00000, 2.7, 1.0e9]> : tensor<5xf32>
  // Towards zero, saturated, NaN to 0.
  // CHECK-DAG: fuse.constant dense<[-128, -2, 0, 2, 127]> : tensor<5xi8>
  %0 = fuse.cast %f : (tensor<5xf32>) -> tensor<5xi8>
  %b = fuse.constant dense<[true, false]> : tensor<2xi1>
  // i1 is unsigned: true is 1.
  // CHECK-DAG: fuse.constant dense<[1.000000e+00, 0.000000e+00]> : tensor<2xf32>
  %1 = fuse.cast %b : (tensor<2xi1>) -> tensor<2xf32>
  %g = fuse.constant dense<[1.00390625, 3.0]> : tensor<2xf32>
  // Rounded to nearest even.
  // CHECK-DAG: fuse.constant dense<[1.000000e+00, 3.000000e+00]> : tensor<2xbf16>
  %2 = fuse.cast %g : (tensor<2xf32>) -> tensor<2xbf16>
  %i = fuse.constant dense<[-1, 300]> : tensor<2xi64>
  // CHECK-DAG: fuse.constant dense<[-1, 300]> : tensor<2xi32>
  %3 = fuse.cast %i : (tensor<2xi64>) -> tensor<2xi32>
  // CHECK-NOT: fuse.cast
  return %0, %1, %2, %3 : tensor<5xi8>, tensor<2xf32>, tensor<2xbf16>, tensor<2xi32>
}

// -----

// CHECK-LABEL: func @fold_activations
func.func @fold_activations() -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) {
  %c = fuse.constant dense<[-2.0, 1.0]> : tensor<2xf32>
  // CHECK-DAG: fuse.constant dense<[-0.995322287, 0.842700779]> : tensor<2xf32>
  %0 = fuse.erf %c : tensor<2xf32>
  // CHECK-DAG: fuse.constant dense<[-0.0455002636, 0.841344773]> : tensor<2xf32>
  %1 = fuse.gelu %c : tensor<2xf32>
  // CHECK-DAG: fuse.constant dense<[-0.0454023071, 8.411920e-01]> : tensor<2xf32>
  %2 = fuse.gelu %c {approximate = "tanh"} : tensor<2xf32>
  // CHECK-DAG: fuse.constant dense<[-2.000000e-01, 1.000000e+00]> : tensor<2xf32>
  %3 = fuse.leaky_relu %c {alpha = 0.1 : f64} : tensor<2xf32>
  // CHECK-NOT: fuse.erf
  // CHECK-NOT: fuse.gelu
  // CHECK-NOT: fuse.leaky_relu
  return %0, %1, %2, %3 : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>
}

// -----

// The gradient of slices that tile a tensor: zero pads summed in any order
// become one concat.
// CHECK-LABEL: func @sum_of_adjacent_pads
// CHECK-SAME: (%[[Q:.*]]: tensor<?x2x4xf32>, %[[K:.*]]: tensor<?x2x4xf32>, %[[V:.*]]: tensor<?x2x4xf32>
func.func @sum_of_adjacent_pads(%q: tensor<?x2x4xf32>, %k: tensor<?x2x4xf32>, %v: tensor<?x2x4xf32>) -> tensor<?x2x12xf32> {
  %pv = fuse.pad %v {low = array<i64: 0, 0, 8>, high = array<i64: 0, 0, 0>} : (tensor<?x2x4xf32>) -> tensor<?x2x12xf32>
  %pk = fuse.pad %k {low = array<i64: 0, 0, 4>, high = array<i64: 0, 0, 4>} : (tensor<?x2x4xf32>) -> tensor<?x2x12xf32>
  %0 = fuse.add %pv, %pk : (tensor<?x2x12xf32>, tensor<?x2x12xf32>) -> tensor<?x2x12xf32>
  %pq = fuse.pad %q {low = array<i64: 0, 0, 0>, high = array<i64: 0, 0, 8>} : (tensor<?x2x4xf32>) -> tensor<?x2x12xf32>
  %1 = fuse.add %0, %pq : (tensor<?x2x12xf32>, tensor<?x2x12xf32>) -> tensor<?x2x12xf32>
  // CHECK-NOT: fuse.pad
  // CHECK-NOT: fuse.add
  // CHECK: %[[C:.*]] = fuse.concat %[[Q]], %[[K]], %[[V]] {axis = 2 : i64}
  // CHECK: return %[[C]]
  return %1 : tensor<?x2x12xf32>
}

// -----

// Pads that leave a gap, overlap, pad another value or pad two dims stay
// sums.
// CHECK-LABEL: func @sum_of_other_pads
func.func @sum_of_other_pads(%a: tensor<2x4xf32>, %b: tensor<2x4xf32>) -> (tensor<2x12xf32>, tensor<2x8xf32>, tensor<2x8xf32>, tensor<3x8xf32>) {
  // CHECK-COUNT-8: fuse.pad
  // CHECK-NOT: fuse.concat
  %g0 = fuse.pad %a {low = array<i64: 0, 0>, high = array<i64: 0, 8>} : (tensor<2x4xf32>) -> tensor<2x12xf32>
  %g1 = fuse.pad %b {low = array<i64: 0, 8>, high = array<i64: 0, 0>} : (tensor<2x4xf32>) -> tensor<2x12xf32>
  %gap = fuse.add %g0, %g1 : (tensor<2x12xf32>, tensor<2x12xf32>) -> tensor<2x12xf32>
  %o0 = fuse.pad %a {low = array<i64: 0, 1>, high = array<i64: 0, 3>} : (tensor<2x4xf32>) -> tensor<2x8xf32>
  %o1 = fuse.pad %b {low = array<i64: 0, 3>, high = array<i64: 0, 1>} : (tensor<2x4xf32>) -> tensor<2x8xf32>
  %overlap = fuse.add %o0, %o1 : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %n0 = fuse.pad %a {low = array<i64: 0, 0>, high = array<i64: 0, 4>, value = 1.0 : f64} : (tensor<2x4xf32>) -> tensor<2x8xf32>
  %n1 = fuse.pad %b {low = array<i64: 0, 4>, high = array<i64: 0, 0>} : (tensor<2x4xf32>) -> tensor<2x8xf32>
  %ones = fuse.add %n0, %n1 : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %d0 = fuse.pad %a {low = array<i64: 1, 0>, high = array<i64: 0, 4>} : (tensor<2x4xf32>) -> tensor<3x8xf32>
  %d1 = fuse.pad %b {low = array<i64: 0, 4>, high = array<i64: 1, 0>} : (tensor<2x4xf32>) -> tensor<3x8xf32>
  %two = fuse.add %d0, %d1 : (tensor<3x8xf32>, tensor<3x8xf32>) -> tensor<3x8xf32>
  return %gap, %overlap, %ones, %two : tensor<2x12xf32>, tensor<2x8xf32>, tensor<2x8xf32>, tensor<3x8xf32>
}
