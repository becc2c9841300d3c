// RUN: fuse-opt %s --fuse-slice-strided-inputs --split-input-file | FileCheck %s

// A pool window's offset read through `d * 2 + 1`: a strided slice read by
// the bare index, which the vectorizer takes.
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func @strided
// CHECK-SAME: (%[[X:[^:]*]]: tensor<8x64xf32>
// CHECK: %[[S:.*]] = tensor.extract_slice %[[X]][1, 0] [4, 64] [2, 1] : tensor<8x64xf32> to tensor<4x64xf32>
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[ID]]]
// CHECK-SAME: ins(%[[S]] : tensor<4x64xf32>)
func.func @strided(%x: tensor<8x64xf32>, %y: tensor<4x64xf32>) -> tensor<4x64xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i * 2 + 1, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<8x64xf32>) outs(%y : tensor<4x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<4x64xf32>
  return %r : tensor<4x64xf32>
}

// -----

// A sum of two loop indices (a convolution's window) is not a strided dim.
// CHECK-LABEL: func @window
// CHECK-NOT: tensor.extract_slice
func.func @window(%x: tensor<10xf32>, %w: tensor<3xf32>, %y: tensor<8xf32>) -> tensor<8xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(i, k) -> (i + k)>, affine_map<(i, k) -> (k)>, affine_map<(i, k) -> (i)>],
                       iterator_types = ["parallel", "reduction"]}
      ins(%x, %w : tensor<10xf32>, tensor<3xf32>) outs(%y : tensor<8xf32>) {
  ^bb0(%in: f32, %f: f32, %out: f32):
    %p = arith.mulf %in, %f : f32
    %s = arith.addf %p, %out : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  return %r : tensor<8xf32>
}
