// RUN: fuse-opt %s --convert-fuse-collectives --split-input-file | FileCheck %s
// RUN: fuse-opt %s --convert-fuse-collectives=bucket-bytes=40 --split-input-file | FileCheck %s --check-prefix=SMALL
// RUN: fuse-opt %s --convert-fuse-collectives --convert-fuse-to-linalg --split-input-file | FileCheck %s --check-prefix=LINALG
// RUN: fuse-opt %s --convert-fuse-collectives=bucket-bytes=256 --split-input-file | FileCheck %s --check-prefix=OVERLAP
// RUN: fuse-opt %s --convert-fuse-collectives="bucket-bytes=256 overlap=false" --split-input-file | FileCheck %s --check-prefix=BLOCKING
// RUN: fuse-opt %s --convert-fuse-collectives=bucket-bytes=256 --fuse-lower-to-linalg --fuse-lower-to-llvm --split-input-file | FileCheck %s --check-prefix=LLVM

// Three gradients in one bucket, in reverse order (the last gradient, which
// backward computes first, at offset 0), each prescaled and flattened (a
// 1-d one as it is); the runtime reduces the bucket in place between its
// start and its wait, and each result is its slice. The gradients are
// arguments: the bucket starts at the function's start, and is waited for
// before the return, its first reader.
// CHECK: func.func private @fuse_all_reduce_start_f32(!llvm.ptr, i64, i32) -> i64
// CHECK: func.func private @fuse_all_reduce_wait(i64)
// CHECK: func.func private @fuse_all_reduce_progress()
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
// CHECK: %[[H:.*]] = call @fuse_all_reduce_start_f32(%[[PTR]], %[[N]], %[[SUM]]) : (!llvm.ptr, i64, i32) -> i64
// CHECK-NOT: fuse_all_reduce_progress
// CHECK: call @fuse_all_reduce_wait(%[[H]]) : (i64) -> ()
// CHECK: %[[R:.*]] = bufferization.to_tensor %[[BUF]] restrict : memref<13xf32> to tensor<13xf32>
// CHECK: %[[RC:.*]] = fuse.slice %[[R]] {offsets = array<i64: 0>} : (tensor<13xf32>) -> tensor<4xf32>
// CHECK: %[[RB:.*]] = fuse.slice %[[R]] {offsets = array<i64: 4>} : (tensor<13xf32>) -> tensor<3xf32>
// CHECK: %[[RA:.*]] = fuse.slice %[[R]] {offsets = array<i64: 7>} : (tensor<13xf32>) -> tensor<6xf32>
// CHECK: %[[OA:.*]] = fuse.reshape %[[RA]] : (tensor<6xf32>) -> tensor<2x3xf32>
// CHECK: return %[[OA]]
// CHECK-NOT: fuse.all_reduce

// Buckets of 10 floats: 4 + 3 share one (7), 6 more would pass 10, so the
// first gradient gets a bucket of its own; two starts, in bucket order.
// SMALL-LABEL: func.func @three
// SMALL: fuse.concat %{{.*}}, %{{.*}} {axis = 0 : i64} : (tensor<4xf32>, tensor<3xf32>) -> tensor<7xf32>
// SMALL: memref.alloc() {alignment = 64 : i64} : memref<7xf32>
// SMALL: %[[H0:.*]] = call @fuse_all_reduce_start_f32
// SMALL: memref.alloc() {alignment = 64 : i64} : memref<6xf32>
// SMALL: %[[H1:.*]] = call @fuse_all_reduce_start_f32
// SMALL: call @fuse_all_reduce_wait(%[[H0]])
// SMALL: call @fuse_all_reduce_wait(%[[H1]])
// SMALL-NOT: call @fuse_all_reduce

// After convert-fuse-to-linalg, no fuse op is left.
// LINALG-LABEL: func.func @three
// LINALG-NOT: fuse.
// LINALG: call @fuse_all_reduce_start_f32
// LINALG-NOT: fuse.
// LINALG: call @fuse_all_reduce_wait
// LINALG-NOT: fuse.
// LINALG: return
func.func @three(%a: tensor<2x3xf32>, %b: tensor<3xf32>, %c: tensor<4xf32>, %w: tensor<f32>) -> (tensor<2x3xf32>, tensor<3xf32>, tensor<4xf32>) {
  %r:3 = fuse.all_reduce sum %a, %b, %c prescale %w : tensor<2x3xf32>, tensor<3xf32>, tensor<4xf32>
  return %r#0, %r#1, %r#2 : tensor<2x3xf32>, tensor<3xf32>, tensor<4xf32>
}

// -----

// A mean without prescale over one tensor: no copy to pack, kind 1. Two
// collectives share the declarations; the second starts after the first's
// wait, since it reduces its result.
// CHECK: func.func private @fuse_all_reduce_start_f32
// CHECK-NOT: func.func private @fuse_all_reduce_start_f32
// CHECK-LABEL: func.func @mean
// SMALL-LABEL: func.func @mean
// CHECK: %[[F:.*]] = fuse.reshape %arg0 : (tensor<2x2xf32>) -> tensor<4xf32>
// CHECK: bufferization.materialize_in_destination %[[F]]
// CHECK: %[[MEAN:.*]] = arith.constant 1 : i32
// CHECK: %[[H0:.*]] = call @fuse_all_reduce_start_f32(%{{.*}}, %{{.*}}, %[[MEAN]])
// CHECK: call @fuse_all_reduce_wait(%[[H0]])
// CHECK: %[[H1:.*]] = call @fuse_all_reduce_start_f32
// CHECK: call @fuse_all_reduce_wait(%[[H1]])
func.func @mean(%g: tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>) {
  %r = fuse.all_reduce mean %g : tensor<2x2xf32>
  %s = fuse.all_reduce sum %r : tensor<2x2xf32>
  return %r, %s : tensor<2x2xf32>, tensor<2x2xf32>
}

// -----

// Overlap: the backward pass of a two-layer step computes the last layer's
// gradient %g2 first, then the gradient through that layer (%dh) and the
// first layer's gradient %g1. With 64-float buckets each gradient has its
// own: %g2's starts right after %g2, before %dh and %g1 are computed, and
// calls to progress it follow %g1; %g1's starts right after %g1; each is
// waited for just before its update reads it. Without overlap, both start
// and end where the all_reduce was, after %g1.
// OVERLAP-LABEL: func.func @backward
// OVERLAP: %[[G2:.*]] = fuse.matmul %arg0, %arg2
// OVERLAP: fuse.mul %[[G2]], %arg5
// OVERLAP: %[[H2:.*]] = call @fuse_all_reduce_start_f32({{.*}}) : (!llvm.ptr, i64, i32) -> i64
// OVERLAP: %[[DH:.*]] = fuse.matmul %arg2, %arg3 {transpose_rhs}
// OVERLAP: %[[G1:.*]] = fuse.matmul %arg1, %[[DH]]
// OVERLAP-NEXT: call @fuse_all_reduce_progress() : () -> ()
// OVERLAP-NEXT: fuse.mul %[[G1]], %arg5
// OVERLAP: %[[H1:.*]] = call @fuse_all_reduce_start_f32
// OVERLAP: call @fuse_all_reduce_wait(%[[H1]])
// OVERLAP: fuse.sub %arg4
// OVERLAP: call @fuse_all_reduce_wait(%[[H2]])
// OVERLAP: fuse.sub %arg3
// BLOCKING-LABEL: func.func @backward
// BLOCKING: fuse.matmul
// BLOCKING: fuse.matmul
// BLOCKING: %[[G1:.*]] = fuse.matmul %arg1
// BLOCKING-NOT: call
// BLOCKING: %[[H2:.*]] = call @fuse_all_reduce_start_f32
// BLOCKING-NEXT: call @fuse_all_reduce_wait(%[[H2]])
// BLOCKING: %[[H1:.*]] = call @fuse_all_reduce_start_f32
// BLOCKING-NEXT: call @fuse_all_reduce_wait(%[[H1]])
// BLOCKING-NOT: fuse_all_reduce_progress

// The order survives the whole lowering, bufferization included: in the
// LLVM dialect, the first bucket's start still comes before the multiply-
// adds of %dh and %g1, and its wait after them.
// LLVM-LABEL: llvm.func @backward
// LLVM: llvm.call @fuse_all_reduce_start_f32
// LLVM: llvm.intr.fmuladd
// LLVM: llvm.call @fuse_all_reduce_progress
// LLVM: llvm.call @fuse_all_reduce_start_f32
// LLVM: llvm.call @fuse_all_reduce_wait
// LLVM: llvm.call @fuse_all_reduce_wait
func.func @backward(%a: tensor<8x4xf32>, %b: tensor<8x4xf32>, %dy: tensor<4x8xf32>,
                    %w2: tensor<8x8xf32>, %w1: tensor<8x8xf32>, %rw: tensor<f32>)
    -> (tensor<8x8xf32>, tensor<8x8xf32>) {
  %g2 = fuse.matmul %a, %dy : (tensor<8x4xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>
  %dh = fuse.matmul %dy, %w2 {transpose_rhs} : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %g1 = fuse.matmul %b, %dh : (tensor<8x4xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>
  %r:2 = fuse.all_reduce sum %g1, %g2 prescale %rw : tensor<8x8xf32>, tensor<8x8xf32>
  %u1 = fuse.sub %w1, %r#0 : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %u2 = fuse.sub %w2, %r#1 : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  return %u1, %u2 : tensor<8x8xf32>, tensor<8x8xf32>
}
