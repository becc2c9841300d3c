// RUN: fuse-opt %s --fuse-workspace --split-input-file --verify-diagnostics | FileCheck %s

// Workspace sizes are checked, never wrapped: a buffer whose bytes, or a
// workspace whose total, does not fit in int64 fails the pass naming the
// buffer (the engine would carve a short workspace from a wrapped size).

func.func @buffer(%x: memref<4xf32>) {
  // expected-error @below {{the workspace buffer of type 'memref<4611686018427387904x4xf32>' makes the workspace too large: its size in bytes does not fit in 64 bits}}
  %a = memref.alloc() : memref<4611686018427387904x4xf32>
  memref.dealloc %a : memref<4611686018427387904x4xf32>
  return
}

// -----

// 2^62 bytes each, both live at once (no shared slot): the second makes
// 2^63.
func.func @total(%x: memref<4xf32>) {
  %a = memref.alloc() : memref<1152921504606846976xf32>
  // expected-error @below {{the workspace buffer of type 'memref<1152921504606846976xf32>' makes the workspace too large}}
  %b = memref.alloc() : memref<1152921504606846976xf32>
  memref.copy %a, %b : memref<1152921504606846976xf32> to memref<1152921504606846976xf32>
  memref.dealloc %a : memref<1152921504606846976xf32>
  memref.dealloc %b : memref<1152921504606846976xf32>
  return
}

// -----

// Just below: 2^62 + 2^61 bytes, both live at once.
// CHECK-LABEL: func @fits
// CHECK-SAME: fuse.workspace = array<i64: 4611686018427387904, 2305843009213693952>
func.func @fits(%x: memref<4xf32>) {
  %a = memref.alloc() : memref<1152921504606846976xf32>
  %b = memref.alloc() : memref<576460752303423488xf32>
  %s = memref.subview %a[0] [576460752303423488] [1] : memref<1152921504606846976xf32> to memref<576460752303423488xf32, strided<[1]>>
  memref.copy %s, %b : memref<576460752303423488xf32, strided<[1]>> to memref<576460752303423488xf32>
  memref.dealloc %a : memref<1152921504606846976xf32>
  memref.dealloc %b : memref<576460752303423488xf32>
  return
}

// -----

// Two buffers of 2^62 bytes at different times share one slot: the
// workspace fits.
// CHECK-LABEL: func @shared
// CHECK-SAME: fuse.workspace = array<i64: 0, 4611686018427387904>
func.func @shared(%x: memref<4xf32>) {
  %cst = arith.constant 1.000000e+00 : f32
  %a = memref.alloc() : memref<1152921504606846976xf32>
  linalg.fill ins(%cst : f32) outs(%a : memref<1152921504606846976xf32>)
  %b = memref.alloc() : memref<1152921504606846976xf32>
  linalg.fill ins(%cst : f32) outs(%b : memref<1152921504606846976xf32>)
  memref.dealloc %a : memref<1152921504606846976xf32>
  memref.dealloc %b : memref<1152921504606846976xf32>
  return
}
