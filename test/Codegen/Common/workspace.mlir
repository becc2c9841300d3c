// RUN: fuse-opt %s --fuse-workspace --split-input-file | FileCheck %s

// Statically shaped buffers freed in their own block become trailing
// arguments, in order, with their sizes (rounded up to 64 bytes) in
// `fuse.workspace`; their deallocs go. Every memref argument is noalias:
// the caller passes disjoint buffers.

// Two buffers: 40 bytes (10 x f32) -> 64, 64 bytes (4x4 f32) -> 64.
// CHECK-LABEL: func @two_buffers
// CHECK-SAME: (%[[X:[^:]*]]: memref<10xf32> {llvm.noalias}, %[[Y:[^:]*]]: memref<4x4xf32> {llvm.noalias}, %[[A:[^:]*]]: memref<10xf32> {llvm.noalias}, %[[B:[^:]*]]: memref<4x4xf32> {llvm.noalias})
// CHECK-SAME: attributes {fuse.workspace = array<i64: 64, 64>}
// CHECK-NOT: memref.alloc
// CHECK-NOT: memref.dealloc
// CHECK: linalg.fill {{.*}} outs(%[[A]] : memref<10xf32>)
// CHECK: linalg.fill {{.*}} outs(%[[B]] : memref<4x4xf32>)
// CHECK: memref.copy %[[A]], %[[X]]
// CHECK: memref.copy %[[B]], %[[Y]]
func.func @two_buffers(%x: memref<10xf32>, %y: memref<4x4xf32>) {
  %cst = arith.constant 1.000000e+00 : f32
  %a = memref.alloc() : memref<10xf32>
  %b = memref.alloc() : memref<4x4xf32>
  linalg.fill ins(%cst : f32) outs(%a : memref<10xf32>)
  linalg.fill ins(%cst : f32) outs(%b : memref<4x4xf32>)
  memref.copy %a, %x : memref<10xf32> to memref<10xf32>
  memref.copy %b, %y : memref<4x4xf32> to memref<4x4xf32>
  memref.dealloc %a : memref<10xf32>
  memref.dealloc %b : memref<4x4xf32>
  return
}

// -----

// A buffer allocated and freed in a loop body: one argument, reused by
// every iteration.
// CHECK-LABEL: func @loop
// CHECK-SAME: %[[T:[^:]*]]: memref<8xf32> {llvm.noalias})
// CHECK-SAME: attributes {fuse.workspace = array<i64: 64>}
// CHECK: scf.for
// CHECK-NOT: memref.alloc
// CHECK: linalg.fill {{.*}} outs(%[[T]] : memref<8xf32>)
// CHECK-NOT: memref.dealloc
func.func @loop(%x: memref<8xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cst = arith.constant 2.000000e+00 : f32
  scf.for %i = %c0 to %n step %c1 {
    %t = memref.alloc() : memref<8xf32>
    linalg.fill ins(%cst : f32) outs(%t : memref<8xf32>)
    memref.copy %t, %x : memref<8xf32> to memref<8xf32>
    memref.dealloc %t : memref<8xf32>
  }
  return
}

// -----

// Left alone: a returned buffer (no dealloc), a dynamic shape, a buffer
// freed in another block. No workspace then, but noalias arguments.
// CHECK-LABEL: func @left_alone
// CHECK-SAME: (%{{[^:]*}}: index, %{{[^:]*}}: i1) -> memref<4xf32>
// CHECK-NOT: fuse.workspace
// CHECK: memref.alloc() : memref<4xf32>
// CHECK: memref.alloc(%{{.*}}) : memref<?xf32>
// CHECK: memref.alloc() : memref<2xf32>
// CHECK: memref.dealloc %{{.*}} : memref<?xf32>
// CHECK: scf.if
// CHECK: memref.dealloc %{{.*}} : memref<2xf32>
func.func @left_alone(%n: index, %cond: i1) -> memref<4xf32> {
  %cst = arith.constant 1.000000e+00 : f32
  %r = memref.alloc() : memref<4xf32>
  %d = memref.alloc(%n) : memref<?xf32>
  %e = memref.alloc() : memref<2xf32>
  linalg.fill ins(%cst : f32) outs(%d : memref<?xf32>)
  linalg.fill ins(%cst : f32) outs(%e : memref<2xf32>)
  linalg.fill ins(%cst : f32) outs(%r : memref<4xf32>)
  memref.dealloc %d : memref<?xf32>
  scf.if %cond {
    memref.dealloc %e : memref<2xf32>
  }
  return %r : memref<4xf32>
}

// -----

// i1 elements take a byte each: memref<100xi1> needs 100 bytes (128).
// CHECK-LABEL: func @mask
// CHECK-SAME: %{{[^:]*}}: memref<100xi1> {llvm.noalias})
// CHECK-SAME: attributes {fuse.workspace = array<i64: 128>}
func.func @mask(%out: memref<100xi1>) {
  %t = arith.constant true
  %a = memref.alloc() : memref<100xi1>
  linalg.fill ins(%t : i1) outs(%a : memref<100xi1>)
  memref.copy %a, %out : memref<100xi1> to memref<100xi1>
  memref.dealloc %a : memref<100xi1>
  return
}
