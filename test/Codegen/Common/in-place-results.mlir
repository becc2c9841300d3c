// RUN: fuse-opt %s --fuse-in-place-results --split-input-file --verify-diagnostics | FileCheck %s

// After bufferization, a result marked `fuse.in_place = N` leaves the
// signature and the return: the caller finds it in argument N. When it was
// computed in another buffer, it is copied into the argument first, with a
// warning (reported at the argument, whose location is on the func line).

// The result is argument 0's buffer itself: nothing to copy, the function
// returns nothing.
// CHECK-LABEL: func @in_place
// CHECK-SAME: (%{{[^:]*}}: memref<4xf32>, %{{[^:]*}}: memref<4xf32>) {
// CHECK-NOT: memref.copy
// CHECK: return{{$}}
func.func @in_place(%p: memref<4xf32>, %g: memref<4xf32>) -> (memref<4xf32> {fuse.in_place = 0 : i64}) {
  return %p : memref<4xf32>
}

// -----

// Only the in-place result (#1, of argument 1) goes, reached through casts;
// result #0, a buffer of its own, stays.
// CHECK-LABEL: func @through_casts
// CHECK-SAME: (%{{[^:]*}}: memref<4xf32>, %{{[^:]*}}: memref<4xf32, strided<[?], offset: ?>>) -> memref<f32> {
// CHECK-NOT: memref.copy
// CHECK: %[[A:.*]] = memref.alloc() : memref<f32>
// CHECK-NOT: memref.copy
// CHECK: return %[[A]] : memref<f32>
func.func @through_casts(%g: memref<4xf32>, %p: memref<4xf32, strided<[?], offset: ?>>) -> (memref<f32>, memref<4xf32, strided<[?], offset: ?>> {fuse.in_place = 1 : i64}) {
  %0 = memref.cast %p : memref<4xf32, strided<[?], offset: ?>> to memref<?xf32, strided<[?], offset: ?>>
  %1 = memref.cast %0 : memref<?xf32, strided<[?], offset: ?>> to memref<4xf32, strided<[?], offset: ?>>
  %a = memref.alloc() : memref<f32>
  return %a, %1 : memref<f32>, memref<4xf32, strided<[?], offset: ?>>
}

// -----

// The value was computed in another buffer: it is copied into argument 0
// just before the return, the result is dropped, and a warning says so.
// CHECK-LABEL: func @copied
// CHECK-SAME: (%[[P:[^:]*]]: memref<4xf32>) {
// CHECK: %[[A:.*]] = memref.alloc() : memref<4xf32>
// CHECK: linalg.fill {{.*}} outs(%[[A]] : memref<4xf32>)
// CHECK-NEXT: memref.copy %[[A]], %[[P]] : memref<4xf32> to memref<4xf32>
// CHECK-NEXT: return{{$}}
// expected-warning @below {{argument #0 of 'copied' cannot be updated in place: result #0 is computed in another buffer and copied into it}}
func.func @copied(%p: memref<4xf32>) -> (memref<4xf32> {fuse.in_place = 0 : i64}) {
  %cst = arith.constant 0.000000e+00 : f32
  %a = memref.alloc() : memref<4xf32>
  linalg.fill ins(%cst : f32) outs(%a : memref<4xf32>)
  return %a : memref<4xf32>
}

// -----

// No in-place result: unchanged, even a result that is an argument.
// CHECK-LABEL: func @none
// CHECK-SAME: (%[[X:[^:]*]]: memref<4xf32>) -> (memref<4xf32>, memref<4xf32>) {
// CHECK-NEXT: %[[A:.*]] = memref.alloc() : memref<4xf32>
// CHECK-NEXT: memref.copy %[[X]], %[[A]] : memref<4xf32> to memref<4xf32>
// CHECK-NEXT: return %[[A]], %[[X]] : memref<4xf32>, memref<4xf32>
func.func @none(%x: memref<4xf32>) -> (memref<4xf32>, memref<4xf32>) {
  %a = memref.alloc() : memref<4xf32>
  memref.copy %x, %a : memref<4xf32> to memref<4xf32>
  return %a, %x : memref<4xf32>, memref<4xf32>
}
