// RUN: fuse-opt %s --fuse-insert-timers --split-input-file | FileCheck %s
// RUN: fuse-opt %s --fuse-insert-timers=label=step --split-input-file | FileCheck %s --check-prefix=LABEL

// Each linalg op and tensor.pad is bracketed by the timer calls; the stop
// call names the region: function, op, result type, source location.
// CHECK-DAG: llvm.mlir.global internal constant @[[FILL:fuse_timer_region_[0-9]+]]("f: linalg.fill 4x8xf32 insert-timers.mlir:{{[0-9]+}}:8\00")
// CHECK-DAG: llvm.mlir.global internal constant @[[MATMUL:fuse_timer_region_[0-9]+]]("f: linalg.matmul 4x8xf32 insert-timers.mlir:{{[0-9]+}}:8\00")
// CHECK-DAG: llvm.mlir.global internal constant @[[PAD:fuse_timer_region_[0-9]+]]("f: tensor.pad 6x10xf32 insert-timers.mlir:{{[0-9]+}}:8\00")
// CHECK-DAG: func.func private @fuse_timer_start() -> i64
// CHECK-DAG: func.func private @fuse_timer_stop(i64, !llvm.ptr)
// CHECK-LABEL: func.func @f
// CHECK: %[[T0:.*]] = call @fuse_timer_start() : () -> i64
// CHECK-NEXT: linalg.fill
// CHECK-NEXT: %[[NAME0:.*]] = llvm.mlir.addressof @[[FILL]] : !llvm.ptr
// CHECK-NEXT: call @fuse_timer_stop(%[[T0]], %[[NAME0]])
// CHECK: %[[T1:.*]] = call @fuse_timer_start() : () -> i64
// CHECK-NEXT: linalg.matmul
// CHECK-NEXT: %[[NAME1:.*]] = llvm.mlir.addressof @[[MATMUL]] : !llvm.ptr
// CHECK-NEXT: call @fuse_timer_stop(%[[T1]], %[[NAME1]])
// CHECK: call @fuse_timer_start()
// CHECK-NEXT: tensor.pad
// CHECK: llvm.mlir.addressof @[[PAD]]
// CHECK-NEXT: call @fuse_timer_stop
// CHECK-NOT: fuse_timer
// CHECK: return

// LABEL: llvm.mlir.global internal constant @{{.*}}("step: linalg.fill
func.func @f(%a: tensor<4x16xf32>, %b: tensor<16x8xf32>) -> tensor<6x10xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<4x8xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = linalg.matmul ins(%a, %b : tensor<4x16xf32>, tensor<16x8xf32>) outs(%1 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %3 = tensor.pad %2 low[1, 1] high[1, 1] {
  ^bb0(%i: index, %j: index):
    tensor.yield %cst : f32
  } : tensor<4x8xf32> to tensor<6x10xf32>
  return %3 : tensor<6x10xf32>
}

// -----

// An op inside a loop (a K-step function's) is timed inside it, once per
// iteration.
// CHECK-LABEL: func.func @loop
// CHECK: scf.for
// CHECK: call @fuse_timer_start
// CHECK-NEXT: linalg.generic
// CHECK: call @fuse_timer_stop
func.func @loop(%x: tensor<8xf32>, %n: index) -> tensor<8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %x) -> (tensor<8xf32>) {
    %e = tensor.empty() : tensor<8xf32>
    %y = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%acc : tensor<8xf32>) outs(%e : tensor<8xf32>) {
    ^bb0(%in: f32, %out: f32):
      %s = arith.mulf %in, %in : f32
      linalg.yield %s : f32
    } -> tensor<8xf32>
    scf.yield %y : tensor<8xf32>
  }
  return %r : tensor<8xf32>
}
