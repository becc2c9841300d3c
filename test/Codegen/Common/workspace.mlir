// RUN: fuse-opt %s --fuse-workspace --split-input-file | FileCheck %s
// RUN: fuse-opt %s --fuse-workspace=reuse=false --split-input-file | FileCheck %s --check-prefix=NOREUSE

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

// -----

// Disjoint lifetimes share a slot: %a (1 KiB) dies at its copy before %b
// (64 bytes) is first written. Each stays an argument of its type, neither
// noalias (they share bytes), both marked with their slot; their sizes are
// 0 then the slot's 1024, so that the caller, carving in order, gives both
// the slot's address. With reuse=false each has bytes of its own.
// CHECK-LABEL: func @disjoint
// CHECK-SAME: %[[X:[^:]*]]: memref<256xf32> {llvm.noalias}, %[[Y:[^:]*]]: memref<16xf32> {llvm.noalias}, %[[A:[^:]*]]: memref<256xf32> {fuse.workspace_slot = 0 : i64}, %[[B:[^:]*]]: memref<16xf32> {fuse.workspace_slot = 0 : i64})
// CHECK-SAME: attributes {fuse.workspace = array<i64: 0, 1024>}
// CHECK-NOT: memref.alloc
// CHECK: linalg.fill {{.*}} outs(%[[A]] : memref<256xf32>)
// CHECK: memref.copy %[[A]], %[[X]]
// CHECK: linalg.fill {{.*}} outs(%[[B]] : memref<16xf32>)
// CHECK: memref.copy %[[B]], %[[Y]]
// CHECK-NOT: memref.dealloc
// NOREUSE-LABEL: func @disjoint
// NOREUSE-SAME: memref<256xf32> {llvm.noalias}, %{{[^:]*}}: memref<16xf32> {llvm.noalias})
// NOREUSE-SAME: attributes {fuse.workspace = array<i64: 1024, 64>}
// NOREUSE-NOT: fuse.workspace_slot
func.func @disjoint(%x: memref<256xf32>, %y: memref<16xf32>) {
  %cst = arith.constant 1.000000e+00 : f32
  %a = memref.alloc() : memref<256xf32>
  linalg.fill ins(%cst : f32) outs(%a : memref<256xf32>)
  memref.copy %a, %x : memref<256xf32> to memref<256xf32>
  %b = memref.alloc() : memref<16xf32>
  linalg.fill ins(%cst : f32) outs(%b : memref<16xf32>)
  memref.copy %b, %y : memref<16xf32> to memref<16xf32>
  memref.dealloc %a : memref<256xf32>
  memref.dealloc %b : memref<16xf32>
  return
}

// -----

// Overlapping lifetimes never share: %b is written while %a (read by the
// last copy, through a view) is live. Distinct slots, noalias arguments.
// CHECK-LABEL: func @overlapping
// CHECK-SAME: %{{[^:]*}}: memref<256xf32> {llvm.noalias}, %{{[^:]*}}: memref<16xf32> {llvm.noalias})
// CHECK-SAME: attributes {fuse.workspace = array<i64: 1024, 64>}
// CHECK-NOT: fuse.workspace_slot
func.func @overlapping(%x: memref<16xf32>, %y: memref<16xf32>) {
  %cst = arith.constant 1.000000e+00 : f32
  %a = memref.alloc() : memref<256xf32>
  linalg.fill ins(%cst : f32) outs(%a : memref<256xf32>)
  %b = memref.alloc() : memref<16xf32>
  linalg.fill ins(%cst : f32) outs(%b : memref<16xf32>)
  memref.copy %b, %y : memref<16xf32> to memref<16xf32>
  %s = memref.subview %a[16] [16] [1] : memref<256xf32> to memref<16xf32, strided<[1], offset: 16>>
  memref.copy %s, %x : memref<16xf32, strided<[1], offset: 16>> to memref<16xf32>
  memref.dealloc %a : memref<256xf32>
  memref.dealloc %b : memref<16xf32>
  return
}

// -----

// A buffer used inside a loop that does not hold its allocation lives for
// the whole loop: %t, allocated in the body after %a's last read there,
// must not take %a's bytes (the next iteration reads %a again). %c, used
// after the loop, may: %a is dead by then. Slots in the order of their
// first buffer: {%a, %c} (256 bytes), {%t} (128).
// CHECK-LABEL: func @loop_lifetime
// CHECK-SAME: %[[A:[^:]*]]: memref<64xf32> {fuse.workspace_slot = 0 : i64}, %[[C:[^:]*]]: memref<48xf32> {fuse.workspace_slot = 0 : i64}, %[[T:[^:]*]]: memref<32xf32> {llvm.noalias})
// CHECK-SAME: attributes {fuse.workspace = array<i64: 0, 256, 128>}
// CHECK: linalg.fill {{.*}} outs(%[[A]] : memref<64xf32>)
// CHECK: scf.for
// CHECK: memref.copy %[[A]]
// CHECK: linalg.fill {{.*}} outs(%[[T]] : memref<32xf32>)
// CHECK: linalg.fill {{.*}} outs(%[[C]] : memref<48xf32>)
func.func @loop_lifetime(%x: memref<64xf32>, %y: memref<32xf32>, %z: memref<48xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cst = arith.constant 1.000000e+00 : f32
  %a = memref.alloc() : memref<64xf32>
  linalg.fill ins(%cst : f32) outs(%a : memref<64xf32>)
  scf.for %i = %c0 to %n step %c1 {
    memref.copy %a, %x : memref<64xf32> to memref<64xf32>
    %t = memref.alloc() : memref<32xf32>
    linalg.fill ins(%cst : f32) outs(%t : memref<32xf32>)
    memref.copy %t, %y : memref<32xf32> to memref<32xf32>
    memref.dealloc %t : memref<32xf32>
  }
  %c = memref.alloc() : memref<48xf32>
  linalg.fill ins(%cst : f32) outs(%c : memref<48xf32>)
  memref.copy %c, %z : memref<48xf32> to memref<48xf32>
  memref.dealloc %a : memref<64xf32>
  memref.dealloc %c : memref<48xf32>
  return
}

// -----

// Two buffers allocated in one loop body (a K-step loop's) live within one
// iteration: disjoint there, they share a slot.
// CHECK-LABEL: func @loop_body
// CHECK-SAME: %[[A:[^:]*]]: memref<64xf32> {fuse.workspace_slot = 0 : i64}, %[[B:[^:]*]]: memref<8x8xf32> {fuse.workspace_slot = 0 : i64})
// CHECK-SAME: attributes {fuse.workspace = array<i64: 0, 256>}
// CHECK: scf.for
// CHECK: linalg.fill {{.*}} outs(%[[A]] : memref<64xf32>)
// CHECK: linalg.fill {{.*}} outs(%[[B]] : memref<8x8xf32>)
func.func @loop_body(%x: memref<64xf32>, %y: memref<8x8xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cst = arith.constant 1.000000e+00 : f32
  scf.for %i = %c0 to %n step %c1 {
    %a = memref.alloc() : memref<64xf32>
    linalg.fill ins(%cst : f32) outs(%a : memref<64xf32>)
    memref.copy %a, %x : memref<64xf32> to memref<64xf32>
    %b = memref.alloc() : memref<8x8xf32>
    linalg.fill ins(%cst : f32) outs(%b : memref<8x8xf32>)
    memref.copy %b, %y : memref<8x8xf32> to memref<8x8xf32>
    memref.dealloc %a : memref<64xf32>
    memref.dealloc %b : memref<8x8xf32>
  }
  return
}

// -----

// A buffer read inside a parallel loop lives for the whole loop (its
// iterations run at once, in any order): %b, written in the same loop,
// after the read in program order, gets a slot of its own. %c, after the
// loop, shares %a's.
// CHECK-LABEL: func @parallel
// CHECK-SAME: %[[A:[^:]*]]: memref<64xf32> {fuse.workspace_slot = 0 : i64}, %[[C:[^:]*]]: memref<64xf32> {fuse.workspace_slot = 0 : i64}, %[[B:[^:]*]]: memref<64xf32> {llvm.noalias})
// CHECK-SAME: attributes {fuse.workspace = array<i64: 0, 256, 256>}
// CHECK: scf.parallel
// CHECK: memref.copy %[[A]]
// CHECK: linalg.fill {{.*}} outs(%[[B]] : memref<64xf32>)
// CHECK: linalg.fill {{.*}} outs(%[[C]] : memref<64xf32>)
func.func @parallel(%x: memref<4x64xf32>, %y: memref<64xf32>, %z: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %cst = arith.constant 1.000000e+00 : f32
  %a = memref.alloc() : memref<64xf32>
  linalg.fill ins(%cst : f32) outs(%a : memref<64xf32>)
  %b = memref.alloc() : memref<64xf32>
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    %row = memref.subview %x[%i, 0] [1, 64] [1, 1] : memref<4x64xf32> to memref<64xf32, strided<[1], offset: ?>>
    memref.copy %a, %row : memref<64xf32> to memref<64xf32, strided<[1], offset: ?>>
    linalg.fill ins(%cst : f32) outs(%b : memref<64xf32>)
    scf.reduce
  }
  memref.copy %b, %y : memref<64xf32> to memref<64xf32>
  %c = memref.alloc() : memref<64xf32>
  linalg.fill ins(%cst : f32) outs(%c : memref<64xf32>)
  memref.copy %c, %z : memref<64xf32> to memref<64xf32>
  memref.dealloc %a : memref<64xf32>
  memref.dealloc %b : memref<64xf32>
  memref.dealloc %c : memref<64xf32>
  return
}

// -----

// A buffer whose address escapes (taken as an integer, as a collective's
// bucket is for the runtime) shares no slot, though its uses end early.
// CHECK-LABEL: func @escapes
// CHECK-SAME: memref<64xf32> {llvm.noalias}, %{{[^:]*}}: memref<64xf32> {llvm.noalias})
// CHECK-SAME: attributes {fuse.workspace = array<i64: 256, 256>}
// CHECK-NOT: fuse.workspace_slot
func.func @escapes(%y: memref<64xf32>) -> index {
  %cst = arith.constant 1.000000e+00 : f32
  %a = memref.alloc() : memref<64xf32>
  %p = memref.extract_aligned_pointer_as_index %a : memref<64xf32> -> index
  %b = memref.alloc() : memref<64xf32>
  linalg.fill ins(%cst : f32) outs(%b : memref<64xf32>)
  memref.copy %b, %y : memref<64xf32> to memref<64xf32>
  memref.dealloc %a : memref<64xf32>
  memref.dealloc %b : memref<64xf32>
  return %p : index
}
