// RUN: fuse-opt %s --fuse-bare-pointer-arguments --split-input-file --allow-unregistered-dialect | FileCheck %s

// A zero-sized dim after the first: passed flat, expanded at entry.
// CHECK-LABEL: func @trailing_zero
// CHECK-SAME: (%[[X:.*]]: memref<0xf32>, %[[Y:.*]]: memref<4x3xf32>)
// CHECK: %[[E:.*]] = memref.expand_shape %[[X]] {{\[\[}}0, 1]] output_shape [4, 0] : memref<0xf32> into memref<4x0xf32>
// CHECK: "test.use"(%[[E]], %[[Y]])
func.func @trailing_zero(%x: memref<4x0xf32>, %y: memref<4x3xf32>) {
  "test.use"(%x, %y) : (memref<4x0xf32>, memref<4x3xf32>) -> ()
  return
}

// -----

// Non-empty memrefs and rank-1 ones stay.
// CHECK-LABEL: func @unchanged
// CHECK-SAME: (%{{.*}}: memref<4x3xf32>, %{{.*}}: memref<0xi32>, %{{.*}}: memref<f32>)
// CHECK-NOT: memref.expand_shape
func.func @unchanged(%a: memref<4x3xf32>, %c: memref<0xi32>, %d: memref<f32>) {
  return
}

// -----

// A dynamic memref is passed as its base pointer and its size, appended as a
// trailing index argument and recorded as (argument, dim) so the caller
// knows what to pass; the strides are row-major. Its dim 0 is no longer
// part of the argument, so fuse.stacked goes while other attributes stay.
// CHECK-LABEL: func @stacked
// CHECK-SAME: (%[[A:[^:]*]]: memref<4xf32> {test.keep}, %[[X:[^:]*]]: memref<f32>, %[[B:[^:]*]]: memref<2xi32>, %[[N:[^:]*]]: index)
// CHECK-SAME: attributes {fuse.dynamic_sizes = array<i64: 1, 0>}
// CHECK: %[[R:.*]] = memref.reinterpret_cast %[[X]] to offset: [0], sizes: [%[[N]], 4, 3], strides: [12, 3, 1] : memref<f32> to memref<?x4x3xf32>
// CHECK: "test.use"(%[[A]], %[[R]], %[[B]])
func.func @stacked(%a: memref<4xf32> {test.keep}, %x: memref<?x4x3xf32> {fuse.stacked}, %b: memref<2xi32>) {
  "test.use"(%a, %x, %b) : (memref<4xf32>, memref<?x4x3xf32>, memref<2xi32>) -> ()
  return
}

// -----

// Every dynamic dim gets a size argument, in argument then dim order; a
// stride over a dynamic size is computed at entry.
// CHECK-LABEL: func @two_dynamic
// CHECK-SAME: (%[[X:[^:]*]]: memref<f32>, %[[Y:[^:]*]]: memref<f32>, %[[X0:[^:]*]]: index, %[[X1:[^:]*]]: index, %[[Y1:[^:]*]]: index)
// CHECK-SAME: attributes {fuse.dynamic_sizes = array<i64: 0, 0, 0, 1, 1, 1>}
// CHECK: %[[SX:.*]] = arith.muli %{{.*}}, %[[X1]] : index
// CHECK: %[[RX:.*]] = memref.reinterpret_cast %[[X]] to offset: [0], sizes: [%[[X0]], %[[X1]]], strides: [%[[SX]], 1] : memref<f32> to memref<?x?xf32>
// CHECK: %[[C5:.*]] = arith.constant 5 : index
// CHECK: %[[SY:.*]] = arith.muli %[[C5]], %[[Y1]] : index
// CHECK: %[[RY:.*]] = memref.reinterpret_cast %[[Y]] to offset: [0], sizes: [3, %[[Y1]], 5], strides: [%[[SY]], 5, 1] : memref<f32> to memref<3x?x5xf32>
// CHECK: "test.use"(%[[RX]], %[[RY]])
func.func @two_dynamic(%x: memref<?x?xf32>, %y: memref<3x?x5xf32>) {
  "test.use"(%x, %y) : (memref<?x?xf32>, memref<3x?x5xf32>) -> ()
  return
}

// -----

// A memref with a layout of its own is not the convention's to rewrite.
// CHECK-LABEL: func @strided
// CHECK-SAME: (%{{.*}}: memref<?x4xf32, strided<[4, 1], offset: ?>>)
// CHECK-NOT: fuse.dynamic_sizes
// CHECK-NOT: memref.reinterpret_cast
func.func @strided(%x: memref<?x4xf32, strided<[4, 1], offset: ?>>) {
  "test.use"(%x) : (memref<?x4xf32, strided<[4, 1], offset: ?>>) -> ()
  return
}
