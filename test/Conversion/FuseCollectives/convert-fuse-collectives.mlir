// RUN: fuse-opt %s --convert-fuse-collectives --split-input-file | FileCheck %s
// RUN: fuse-opt %s --convert-fuse-collectives=bucket-bytes=40 --split-input-file | FileCheck %s --check-prefix=SMALL
// RUN: fuse-opt %s --convert-fuse-collectives --convert-fuse-to-linalg --split-input-file | FileCheck %s --check-prefix=LINALG

// Three gradients in one bucket, in reverse order (the last gradient, which
// backward computes first, at offset 0), each prescaled and flattened (a
// 1-d one as it is); one
// runtime call reduces the bucket in place, and each result is its slice.
// CHECK: func.func private @fuse_all_reduce_f32(!llvm.ptr, i64, i32)
// CHECK-LABEL: func.func @three
// CHECK-SAME: (%[[A:.*]]: tensor<2x3xf32>, %[[B:.*]]: tensor<3xf32>, %[[C:.*]]: tensor<4xf32>, %[[W:.*]]: tensor<f32>)
// CHECK: %[[CF:.*]] = fuse.mul %[[C]], %[[W]]
// CHECK: %[[BF:.*]] = fuse.mul %[[B]], %[[W]]
// CHECK: %[[AS:.*]] = fuse.mul %[[A]], %[[W]]
// CHECK: %[[AF:.*]] = fuse.reshape %[[AS]] : (tensor<2x3xf32>) -> tensor<6xf32>
// CHECK: %[[P:.*]] = fuse.concat %[[CF]], %[[BF]], %[[AF]] {axis = 0 : i64} : (tensor<4xf32>, tensor<3xf32>, tensor<6xf32>) -> tensor<13xf32>
// CHECK: %[[BUF:.*]] = memref.alloc() {alignment = 64 : i64} : memref<13xf32>
// CHECK: bufferization.materialize_in_destination %[[P]] in restrict writable %[[BUF]]
// CHECK: %[[ADDR:.*]] = memref.extract_aligned_pointer_as_index %[[BUF]] : memref<13xf32> -> index
// CHECK: %[[INT:.*]] = arith.index_cast %[[ADDR]] : index to i64
// CHECK: %[[PTR:.*]] = llvm.inttoptr %[[INT]] : i64 to !llvm.ptr
// CHECK-DAG: %[[N:.*]] = arith.constant 13 : i64
// CHECK-DAG: %[[SUM:.*]] = arith.constant 0 : i32
// CHECK: call @fuse_all_reduce_f32(%[[PTR]], %[[N]], %[[SUM]])
// CHECK: %[[R:.*]] = bufferization.to_tensor %[[BUF]] restrict : memref<13xf32> to tensor<13xf32>
// CHECK: %[[RC:.*]] = fuse.slice %[[R]] {offsets = array<i64: 0>} : (tensor<13xf32>) -> tensor<4xf32>
// CHECK: %[[RB:.*]] = fuse.slice %[[R]] {offsets = array<i64: 4>} : (tensor<13xf32>) -> tensor<3xf32>
// CHECK: %[[RA:.*]] = fuse.slice %[[R]] {offsets = array<i64: 7>} : (tensor<13xf32>) -> tensor<6xf32>
// CHECK: %[[OA:.*]] = fuse.reshape %[[RA]] : (tensor<6xf32>) -> tensor<2x3xf32>
// CHECK: return %[[OA]]
// CHECK-NOT: fuse.all_reduce

// Buckets of 10 floats: 4 + 3 share one (7), 6 more would pass 10, so the
// first gradient gets a bucket of its own; two calls, in bucket order.
// SMALL-LABEL: func.func @three
// SMALL: fuse.concat %{{.*}}, %{{.*}} {axis = 0 : i64} : (tensor<4xf32>, tensor<3xf32>) -> tensor<7xf32>
// SMALL: memref.alloc() {alignment = 64 : i64} : memref<7xf32>
// SMALL: call @fuse_all_reduce_f32
// SMALL: memref.alloc() {alignment = 64 : i64} : memref<6xf32>
// SMALL: call @fuse_all_reduce_f32
// SMALL-NOT: call @fuse_all_reduce_f32

// After convert-fuse-to-linalg, no fuse op is left.
// LINALG-LABEL: func.func @three
// LINALG-NOT: fuse.
// LINALG: call @fuse_all_reduce_f32
// LINALG-NOT: fuse.
// LINALG: return
func.func @three(%a: tensor<2x3xf32>, %b: tensor<3xf32>, %c: tensor<4xf32>, %w: tensor<f32>) -> (tensor<2x3xf32>, tensor<3xf32>, tensor<4xf32>) {
  %r:3 = fuse.all_reduce sum %a, %b, %c prescale %w : tensor<2x3xf32>, tensor<3xf32>, tensor<4xf32>
  return %r#0, %r#1, %r#2 : tensor<2x3xf32>, tensor<3xf32>, tensor<4xf32>
}

// -----

// A mean without prescale over one tensor: no copy to pack, kind 1. Two
// collectives share one declaration.
// CHECK: func.func private @fuse_all_reduce_f32(!llvm.ptr, i64, i32)
// CHECK-NOT: func.func private @fuse_all_reduce_f32
// CHECK-LABEL: func.func @mean
// SMALL-LABEL: func.func @mean
// CHECK: %[[F:.*]] = fuse.reshape %arg0 : (tensor<2x2xf32>) -> tensor<4xf32>
// CHECK: bufferization.materialize_in_destination %[[F]]
// CHECK: %[[MEAN:.*]] = arith.constant 1 : i32
// CHECK: call @fuse_all_reduce_f32(%{{.*}}, %{{.*}}, %[[MEAN]])
// CHECK: call @fuse_all_reduce_f32
func.func @mean(%g: tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>) {
  %r = fuse.all_reduce mean %g : tensor<2x2xf32>
  %s = fuse.all_reduce sum %r : tensor<2x2xf32>
  return %r, %s : tensor<2x2xf32>, tensor<2x2xf32>
}
