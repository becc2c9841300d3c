// RUN: fuse-opt %s --fuse-split-shared-fills --split-input-file | FileCheck %s

// Two products accumulate into one fill: all but one (in use-list order)
// get their own copy of the fill, into their own allocation (so
// bufferization copies nothing).
// CHECK-LABEL: func @shared
// CHECK-SAME: (%[[A:[^:]*]]: tensor<8x8xf32>, %[[B:[^:]*]]: tensor<8x8xf32>)
// CHECK: %[[ZERO:.*]] = arith.constant 0.0
// CHECK: %[[F:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%{{.*}} : tensor<8x8xf32>)
// CHECK: %[[ALLOC:.*]] = bufferization.alloc_tensor() : tensor<8x8xf32>
// CHECK: %[[G:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[ALLOC]] : tensor<8x8xf32>)
// CHECK: %[[P:.*]] = linalg.matmul ins(%[[A]], %[[B]] : {{.*}}) outs(%[[G]] : tensor<8x8xf32>)
// CHECK: %[[Q:.*]] = linalg.matmul ins(%[[B]], %[[A]] : {{.*}}) outs(%[[F]] : tensor<8x8xf32>)
// CHECK: return %[[P]], %[[Q]]
func.func @shared(%a: tensor<8x8xf32>, %b: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x8xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8x8xf32>) -> tensor<8x8xf32>
  %p = linalg.matmul ins(%a, %b : tensor<8x8xf32>, tensor<8x8xf32>) outs(%f : tensor<8x8xf32>) -> tensor<8x8xf32>
  %q = linalg.matmul ins(%b, %a : tensor<8x8xf32>, tensor<8x8xf32>) outs(%f : tensor<8x8xf32>) -> tensor<8x8xf32>
  return %p, %q : tensor<8x8xf32>, tensor<8x8xf32>
}

// -----

// A fill that one op accumulates into and another only reads stays one.
// CHECK-LABEL: func @read
// CHECK-COUNT-1: linalg.fill
// CHECK-NOT: alloc_tensor
func.func @read(%a: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x8xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8x8xf32>) -> tensor<8x8xf32>
  %p = linalg.matmul ins(%a, %f : tensor<8x8xf32>, tensor<8x8xf32>) outs(%f : tensor<8x8xf32>) -> tensor<8x8xf32>
  return %p, %f : tensor<8x8xf32>, tensor<8x8xf32>
}
