// RUN: fuse-opt %s --fuse-decompose-pads --split-input-file | FileCheck %s

// A pad whose source a linalg op computes, and only linalg ops read: the
// producer writes straight into the interior of the padded tensor, whose
// border alone is filled: per padded dim, the slab before the interior and
// the slab after it (rows 0 and 5 whole, then columns 0 and 5 of rows 1-4).
// CHECK-LABEL: func @into_interior
// CHECK: %[[ZERO:.*]] = arith.constant 0.0
// CHECK: %[[E:.*]] = tensor.empty() : tensor<1x6x6x16xf32>
// CHECK: %[[S0:.*]] = tensor.extract_slice %[[E]][0, 0, 0, 0] [1, 1, 6, 16] [1, 1, 1, 1]
// CHECK: %[[F0:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[S0]] : tensor<1x1x6x16xf32>)
// CHECK: %[[B0:.*]] = tensor.insert_slice %[[F0]] into %[[E]][0, 0, 0, 0] [1, 1, 6, 16]
// CHECK: %[[S1:.*]] = tensor.extract_slice %[[B0]][0, 5, 0, 0] [1, 1, 6, 16]
// CHECK: %[[F1:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[S1]] : tensor<1x1x6x16xf32>)
// CHECK: %[[B1:.*]] = tensor.insert_slice %[[F1]] into %[[B0]][0, 5, 0, 0] [1, 1, 6, 16]
// CHECK: %[[S2:.*]] = tensor.extract_slice %[[B1]][0, 1, 0, 0] [1, 4, 1, 16]
// CHECK: %[[F2:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[S2]] : tensor<1x4x1x16xf32>)
// CHECK: %[[B2:.*]] = tensor.insert_slice %[[F2]] into %[[B1]][0, 1, 0, 0] [1, 4, 1, 16]
// CHECK: %[[S3:.*]] = tensor.extract_slice %[[B2]][0, 1, 5, 0] [1, 4, 1, 16]
// CHECK: %[[F3:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[S3]] : tensor<1x4x1x16xf32>)
// CHECK: %[[F:.*]] = tensor.insert_slice %[[F3]] into %[[B2]][0, 1, 5, 0] [1, 4, 1, 16]
// CHECK-NOT: linalg.fill
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

// A pad of an argument: fills of its border (rows 0-1 and 6) and a copy
// into the interior.
// CHECK-LABEL: func @copy
// CHECK-SAME: (%[[X:.*]]: tensor<4x4xf32>)
// CHECK: linalg.fill {{.*}} -> tensor<2x4xf32>
// CHECK: %[[B:.*]] = tensor.insert_slice %{{.*}}[0, 0] [2, 4] [1, 1]
// CHECK: %[[S:.*]] = tensor.extract_slice %[[B]][6, 0] [1, 4] [1, 1]
// CHECK: %[[L:.*]] = linalg.fill {{.*}} outs(%[[S]] : tensor<1x4xf32>)
// CHECK: %[[F:.*]] = tensor.insert_slice %[[L]] into %[[B]][6, 0] [1, 4] [1, 1]
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

// -----

// A pad of a collapsed result (a pool's gradient, computed per window as
// [n, h/2, 2, w/2, 2, c]): the producer writes an expanded view of the
// interior, and the collapse of its result is inserted back in place; no
// copy.
// CHECK-LABEL: func @collapsed_into_interior
// CHECK: %[[I:.*]] = tensor.extract_slice %{{.*}}[0, 1, 1, 0] [1, 4, 4, 8] [1, 1, 1, 1]
// CHECK: %[[V:.*]] = tensor.expand_shape %[[I]] {{\[}}[0], [1, 2], [3, 4], [5]] output_shape [1, 2, 2, 2, 2, 8]
// CHECK: %[[R:.*]] = linalg.generic {{.*}} outs(%[[V]] : tensor<1x2x2x2x2x8xf32>)
// CHECK: %[[C:.*]] = tensor.collapse_shape %[[R]]
// CHECK-NOT: linalg.copy
// CHECK: tensor.insert_slice %[[C]] into %{{.*}}[0, 1, 1, 0] [1, 4, 4, 8] [1, 1, 1, 1]
func.func @collapsed_into_interior(%x: tensor<1x2x2x2x2x8xf32>) -> tensor<1x6x6x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x2x2x2x2x8xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(a, b, c, d, e, f) -> (a, b, c, d, e, f)>, affine_map<(a, b, c, d, e, f) -> (a, b, c, d, e, f)>],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%x : tensor<1x2x2x2x2x8xf32>) outs(%e : tensor<1x2x2x2x2x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %in, %zero : f32
    linalg.yield %m : f32
  } -> tensor<1x2x2x2x2x8xf32>
  %c = tensor.collapse_shape %r [[0], [1, 2], [3, 4], [5]] : tensor<1x2x2x2x2x8xf32> into tensor<1x4x4x8xf32>
  %p = tensor.pad %c low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<1x4x4x8xf32> to tensor<1x6x6x8xf32>
  return %p : tensor<1x6x6x8xf32>
}
