// RUN: fuse-opt %s --fuse-decompose-pads --split-input-file | FileCheck %s

// A pad whose source a linalg op computes, and only linalg ops read: the
// producer writes straight into the interior of the filled tensor.
// CHECK-LABEL: func @into_interior
// CHECK: %[[ZERO:.*]] = arith.constant 0.0
// CHECK: %[[E:.*]] = tensor.empty() : tensor<1x6x6x16xf32>
// CHECK: %[[F:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[E]] : tensor<1x6x6x16xf32>)
// CHECK: %[[I:.*]] = tensor.extract_slice %[[F]][0, 1, 1, 0] [1, 4, 4, 16] [1, 1, 1, 1]
// CHECK: %[[R:.*]] = linalg.generic {{.*}} outs(%[[I]] : tensor<1x4x4x16xf32>)
// CHECK-NOT: linalg.copy
// CHECK: %[[P:.*]] = tensor.insert_slice %[[R]] into %[[F]][0, 1, 1, 0] [1, 4, 4, 16] [1, 1, 1, 1]
// CHECK: return %[[P]]
func.func @into_interior(%x: tensor<1x4x4x16xf32>) -> tensor<1x6x6x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x4x4x16xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(a, b, c, d) -> (a, b, c, d)>, affine_map<(a, b, c, d) -> (a, b, c, d)>],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x : tensor<1x4x4x16xf32>) outs(%e : tensor<1x4x4x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %in, %zero : f32
    linalg.yield %m : f32
  } -> tensor<1x4x4x16xf32>
  %p = tensor.pad %r low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<1x4x4x16xf32> to tensor<1x6x6x16xf32>
  return %p : tensor<1x6x6x16xf32>
}

// -----

// A pad of an argument: a fill and a copy into the interior.
// CHECK-LABEL: func @copy
// CHECK-SAME: (%[[X:.*]]: tensor<4x4xf32>)
// CHECK: %[[F:.*]] = linalg.fill
// CHECK: %[[I:.*]] = tensor.extract_slice %[[F]][2, 0] [4, 4] [1, 1]
// CHECK: %[[C:.*]] = linalg.copy ins(%[[X]] : tensor<4x4xf32>) outs(%[[I]] : tensor<4x4xf32>)
// CHECK: tensor.insert_slice %[[C]] into %[[F]][2, 0] [4, 4] [1, 1] : tensor<4x4xf32> into tensor<7x4xf32>
// CHECK-NOT: tensor.pad
func.func @copy(%x: tensor<4x4xf32>) -> tensor<7x4xf32> {
  %one = arith.constant 1.0 : f32
  %p = tensor.pad %x low[2, 0] high[1, 0] {
  ^bb0(%i: index, %j: index):
    tensor.yield %one : f32
  } : tensor<4x4xf32> to tensor<7x4xf32>
  return %p : tensor<7x4xf32>
}

// -----

// A dynamic pad stays.
// CHECK-LABEL: func @dynamic
// CHECK: tensor.pad
func.func @dynamic(%x: tensor<?xf32>) -> tensor<?xf32> {
  %one = arith.constant 1.0 : f32
  %p = tensor.pad %x low[1] high[1] {
  ^bb0(%i: index):
    tensor.yield %one : f32
  } : tensor<?xf32> to tensor<?xf32>
  return %p : tensor<?xf32>
}
