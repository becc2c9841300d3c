// RUN: fuse-opt %s --fuse-workspace --split-input-file | FileCheck %s

// Every statically shaped memref.alloc freed by a memref.dealloc in its own
// block becomes a memref.view of a new last argument, memref<Nxi8>, at a
// 64-byte aligned offset, and its dealloc goes; the function gets
// fuse.workspace_bytes = N. Buffers alive at the same time never share
// bytes, others may (first fit, largest first).

// Two buffers alive at the same time: 40 bytes rounded up to 64 at offset
// 0, then 64 bytes at offset 64; N = 128.
// CHECK-LABEL: func @overlap
// CHECK-SAME: (%[[X:[^:]*]]: memref<10xf32>, %[[Y:[^:]*]]: memref<4x4xf32>, %[[WS:[^:]*]]: memref<128xi8>) attributes {fuse.workspace_bytes = 128 : i64}
// CHECK-NOT: memref.alloc
// CHECK: %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[A:.*]] = memref.view %[[WS]][%[[C0]]][] : memref<128xi8> to memref<10xf32>
// CHECK-NEXT: %[[C64:.*]] = arith.constant 64 : index
// CHECK-NEXT: %[[B:.*]] = memref.view %[[WS]][%[[C64]]][] : memref<128xi8> to memref<4x4xf32>
// CHECK: linalg.fill {{.*}} outs(%[[A]] : memref<10xf32>)
// CHECK: linalg.fill {{.*}} outs(%[[B]] : memref<4x4xf32>)
// CHECK: memref.copy %[[A]], %[[X]]
// CHECK: memref.copy %[[B]], %[[Y]]
// CHECK-NOT: memref.dealloc
// CHECK: return
func.func @overlap(%x: memref<10xf32>, %y: memref<4x4xf32>) {
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

// The first buffer is freed before the second is allocated: both at offset
// 0, and N is the larger size (100 bytes rounded up to 128).
// CHECK-LABEL: func @disjoint
// CHECK-SAME: (%{{[^:]*}}: memref<10xf32>, %{{[^:]*}}: memref<100xi8>, %[[WS:[^:]*]]: memref<128xi8>) attributes {fuse.workspace_bytes = 128 : i64}
// CHECK-NOT: memref.alloc
// CHECK: %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[A:.*]] = memref.view %[[WS]][%[[C0]]][] : memref<128xi8> to memref<10xf32>
// CHECK: linalg.fill {{.*}} outs(%[[A]] : memref<10xf32>)
// CHECK: %[[C0B:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[B:.*]] = memref.view %[[WS]][%[[C0B]]][] : memref<128xi8> to memref<100xi8>
// CHECK: linalg.fill {{.*}} outs(%[[B]] : memref<100xi8>)
// CHECK-NOT: memref.dealloc
// CHECK: return
func.func @disjoint(%x: memref<10xf32>, %y: memref<100xi8>) {
  %cst = arith.constant 1.000000e+00 : f32
  %c7 = arith.constant 7 : i8
  %a = memref.alloc() : memref<10xf32>
  linalg.fill ins(%cst : f32) outs(%a : memref<10xf32>)
  memref.copy %a, %x : memref<10xf32> to memref<10xf32>
  memref.dealloc %a : memref<10xf32>
  %b = memref.alloc() : memref<100xi8>
  linalg.fill ins(%c7 : i8) outs(%b : memref<100xi8>)
  memref.copy %b, %y : memref<100xi8> to memref<100xi8>
  memref.dealloc %b : memref<100xi8>
  return
}

// -----

// First fit, largest first: %a (128 bytes) at 0; %b (64) is alive with %a,
// so it goes at 128; %c (64) is allocated after %a is freed but while %b is
// alive, so it reuses %a's bytes at 0. N = 192, not 256.
// CHECK-LABEL: func @first_fit
// CHECK-SAME: %[[WS:[^:]*]]: memref<192xi8>) attributes {fuse.workspace_bytes = 192 : i64}
// CHECK-NOT: memref.alloc
// CHECK: %[[OA:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[A:.*]] = memref.view %[[WS]][%[[OA]]][] : memref<192xi8> to memref<32xf32>
// CHECK: %[[OB:.*]] = arith.constant 128 : index
// CHECK-NEXT: %[[B:.*]] = memref.view %[[WS]][%[[OB]]][] : memref<192xi8> to memref<16xf32>
// CHECK: %[[OC:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[C:.*]] = memref.view %[[WS]][%[[OC]]][] : memref<192xi8> to memref<8xf32>
// CHECK-NOT: memref.dealloc
// CHECK: return
func.func @first_fit(%x: memref<32xf32>, %y: memref<16xf32>, %z: memref<8xf32>) {
  %cst = arith.constant 1.000000e+00 : f32
  %a = memref.alloc() : memref<32xf32>
  linalg.fill ins(%cst : f32) outs(%a : memref<32xf32>)
  %b = memref.alloc() : memref<16xf32>
  linalg.fill ins(%cst : f32) outs(%b : memref<16xf32>)
  memref.copy %a, %x : memref<32xf32> to memref<32xf32>
  memref.dealloc %a : memref<32xf32>
  %c = memref.alloc() : memref<8xf32>
  linalg.fill ins(%cst : f32) outs(%c : memref<8xf32>)
  memref.copy %b, %y : memref<16xf32> to memref<16xf32>
  memref.copy %c, %z : memref<8xf32> to memref<8xf32>
  memref.dealloc %b : memref<16xf32>
  memref.dealloc %c : memref<8xf32>
  return
}

// -----

// A buffer allocated and freed in a loop body: a view, the same slot every
// iteration.
// CHECK-LABEL: func @loop
// CHECK-SAME: (%[[X:[^:]*]]: memref<8xf32>, %{{[^:]*}}: index, %[[WS:[^:]*]]: memref<64xi8>) attributes {fuse.workspace_bytes = 64 : i64}
// CHECK: scf.for
// CHECK-NOT: memref.alloc
// CHECK: %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[A:.*]] = memref.view %[[WS]][%[[C0]]][] : memref<64xi8> to memref<8xf32>
// CHECK: linalg.fill {{.*}} outs(%[[A]] : memref<8xf32>)
// CHECK-NEXT: memref.copy %[[A]], %[[X]]
// CHECK-NOT: memref.dealloc
// CHECK: }
// CHECK-NEXT: return
func.func @loop(%x: memref<8xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    %i32 = arith.index_cast %i : index to i32
    %f = arith.sitofp %i32 : i32 to f32
    %a = memref.alloc() : memref<8xf32>
    linalg.fill ins(%f : f32) outs(%a : memref<8xf32>)
    memref.copy %a, %x : memref<8xf32> to memref<8xf32>
    memref.dealloc %a : memref<8xf32>
  }
  return
}

// -----

// Nothing to place: a returned buffer (no dealloc), a dynamically shaped
// one, and one freed in another block (conditionally, as buffer
// deallocation does when ownership is only known at run time) all stay, and
// the function gets no workspace argument.
// CHECK-LABEL: func @left_alone
// CHECK-SAME: (%[[N:[^:]*]]: index, %[[COND:[^:]*]]: i1) -> memref<4xf32> {
// CHECK-NOT: memref.view
// CHECK: %[[R:.*]] = memref.alloc() : memref<4xf32>
// CHECK: %[[D:.*]] = memref.alloc(%[[N]]) : memref<?xf32>
// CHECK: %[[E:.*]] = memref.alloc() : memref<2xf32>
// CHECK: memref.dealloc %[[D]] : memref<?xf32>
// CHECK: scf.if %[[COND]]
// CHECK-NEXT: memref.dealloc %[[E]] : memref<2xf32>
// CHECK-NOT: memref.view
// CHECK: return %[[R]] : memref<4xf32>
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

// i1 elements take a byte each: two overlapping memref<100xi1> need 100
// bytes each (128 aligned), not 13.
// CHECK-LABEL: func @masks
// CHECK-SAME: %[[WS:[^:]*]]: memref<256xi8>
// CHECK-SAME: fuse.workspace_bytes = 256
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C128:.*]] = arith.constant 128 : index
// CHECK-DAG: memref.view %[[WS]][%[[C0]]][] : memref<256xi8> to memref<100xi1>
// CHECK-DAG: memref.view %[[WS]][%[[C128]]][] : memref<256xi8> to memref<100xi1>
func.func @masks(%out: memref<100xi1>) {
  %t = arith.constant true
  %f = arith.constant false
  %a = memref.alloc() : memref<100xi1>
  %b = memref.alloc() : memref<100xi1>
  linalg.fill ins(%t : i1) outs(%a : memref<100xi1>)
  linalg.fill ins(%f : i1) outs(%b : memref<100xi1>)
  memref.copy %a, %out : memref<100xi1> to memref<100xi1>
  memref.copy %b, %out : memref<100xi1> to memref<100xi1>
  memref.dealloc %a : memref<100xi1>
  memref.dealloc %b : memref<100xi1>
  return
}
