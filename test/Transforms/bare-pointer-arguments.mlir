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
