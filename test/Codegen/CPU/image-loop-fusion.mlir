// RUN: fuse-opt %s --fuse-image-loop-fusion --split-input-file | FileCheck %s

// A linalg op that computes each image from the same image of an image
// loop's result runs in the loop, on the image just computed; the loop
// keeps its mark (for fuse-distribute-image-loops).
// CHECK-LABEL: func @consumer
// CHECK: %[[OUT:.*]] = bufferization.alloc_tensor() : tensor<2x4x16xf32>
// CHECK: %[[LOOP:.*]]:2 = scf.for %[[N:.*]] = {{.*}} iter_args(%{{.*}} = %{{.*}}, %[[ACC:.*]] = %[[OUT]])
// CHECK: %[[IMAGE:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<1x4x16xf32>)
// CHECK: %[[READ:.*]] = tensor.extract_slice %[[IMAGE]][0, 0, 0] [1, 4, 16]
// CHECK: %[[RELU:.*]] = linalg.generic {{.*}} ins(%[[READ]] : tensor<1x4x16xf32>)
// CHECK: tensor.insert_slice %[[RELU]] into %[[ACC]][%[[N]], 0, 0] [1, 4, 16]
// CHECK: } {fuse.image_loop}
// CHECK: return %[[LOOP]]#1
#id3 = affine_map<(n, h, c) -> (n, h, c)>
func.func @consumer(%x: tensor<2x4x16xf32>) -> tensor<2x4x16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x4x16xf32>
  %e2 = tensor.empty() : tensor<2x4x16xf32>
  %a = scf.for %n = %c0 to %c2 step %c1 iter_args(%acc = %e) -> (tensor<2x4x16xf32>) {
    %xi = tensor.extract_slice %x[%n, 0, 0] [1, 4, 16] [1, 1, 1] : tensor<2x4x16xf32> to tensor<1x4x16xf32>
    %ei = tensor.empty() : tensor<1x4x16xf32>
    %r = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
        ins(%xi : tensor<1x4x16xf32>) outs(%ei : tensor<1x4x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %v = math.exp %in : f32
      linalg.yield %v : f32
    } -> tensor<1x4x16xf32>
    %ins = tensor.insert_slice %r into %acc[%n, 0, 0] [1, 4, 16] [1, 1, 1] : tensor<1x4x16xf32> into tensor<2x4x16xf32>
    scf.yield %ins : tensor<2x4x16xf32>
  } {fuse.image_loop}
  %b = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%a : tensor<2x4x16xf32>) outs(%e2 : tensor<2x4x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.maximumf %in, %zero : f32
    linalg.yield %v : f32
  } -> tensor<2x4x16xf32>
  return %b : tensor<2x4x16xf32>
}

// -----

// An element-wise op that reads at most half the bytes it writes (here a
// broadcast), and that only an image loop reads (a filter gradient's,
// fuse-tile-convolutions' output), is computed in the loop on its image,
// into a buffer of one image: its batch is never stored.
// CHECK-LABEL: func @recompute
// CHECK: scf.for
// CHECK: %[[BUF:.*]] = bufferization.alloc_tensor() : tensor<1x8x8x32xf32>
// CHECK-NEXT: %[[IMAGE:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<32xf32>) outs(%[[BUF]] : tensor<1x8x8x32xf32>)
// CHECK-NOT: tensor<4x8x8x32xf32>
// CHECK: } {fuse.image_loop}
#map = affine_map<(d0, d1, d2, d3) -> (d3)>
#map1 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#map2 = affine_map<(d0, d1) -> (d0 + d1)>
#map3 = affine_map<(d0, d1, d2) -> (d2, d0)>
#map4 = affine_map<(d0, d1, d2) -> (d2, d1)>
#map5 = affine_map<(d0, d1, d2) -> (d0, d1)>
module {
  func.func @recompute(%arg0: tensor<4x10x10x8xf32>, %arg1: tensor<32xf32>) -> (tensor<3x3x8x32xf32>, tensor<32xf32>) {
    %cst = arith.constant 0.000000e+00 : f32
    %0 = tensor.empty() : tensor<4x8x8x32xf32>
    %1 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg1 : tensor<32xf32>) outs(%0 : tensor<4x8x8x32xf32>) {
    ^bb0(%in: f32, %out: f32):
      %7 = arith.mulf %in, %in : f32
      linalg.yield %7 : f32
    } -> tensor<4x8x8x32xf32>
    %2 = tensor.empty() : tensor<3x3x8x32xf32>
    %3 = linalg.fill ins(%cst : f32) outs(%2 : tensor<3x3x8x32xf32>) -> tensor<3x3x8x32xf32>
    %4 = tensor.empty() : tensor<32xf32>
    %5 = linalg.fill ins(%cst : f32) outs(%4 : tensor<32xf32>) -> tensor<32xf32>
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c0 = arith.constant 0 : index
    %6:2 = scf.for %arg2 = %c0 to %c4 step %c1 iter_args(%arg3 = %3, %arg4 = %5) -> (tensor<3x3x8x32xf32>, tensor<32xf32>) {
      %c1_0 = arith.constant 1 : index
      %c3 = arith.constant 3 : index
      %c0_1 = arith.constant 0 : index
      %7 = scf.for %arg5 = %c0_1 to %c3 step %c1_0 iter_args(%arg6 = %arg3) -> (tensor<3x3x8x32xf32>) {
        %c1_2 = arith.constant 1 : index
        %c3_3 = arith.constant 3 : index
        %c0_4 = arith.constant 0 : index
        %9 = scf.for %arg7 = %c0_4 to %c3_3 step %c1_2 iter_args(%arg8 = %arg6) -> (tensor<3x3x8x32xf32>) {
          %c8 = arith.constant 8 : index
          %c8_5 = arith.constant 8 : index
          %c0_6 = arith.constant 0 : index
          %10 = scf.for %arg9 = %c0_6 to %c8_5 step %c8 iter_args(%arg10 = %arg8) -> (tensor<3x3x8x32xf32>) {
            %c32 = arith.constant 32 : index
            %c32_7 = arith.constant 32 : index
            %c0_8 = arith.constant 0 : index
            %11 = scf.for %arg11 = %c0_8 to %c32_7 step %c32 iter_args(%arg12 = %arg10) -> (tensor<3x3x8x32xf32>) {
              %extracted_slice_9 = tensor.extract_slice %arg12[%arg5, %arg7, %arg9, %arg11] [1, 1, 8, 32] [1, 1, 1, 1] : tensor<3x3x8x32xf32> to tensor<8x32xf32>
              %c1_10 = arith.constant 1 : index
              %c8_11 = arith.constant 8 : index
              %c0_12 = arith.constant 0 : index
              %12 = scf.for %arg13 = %c0_12 to %c8_11 step %c1_10 iter_args(%arg14 = %extracted_slice_9) -> (tensor<8x32xf32>) {
                %13 = affine.apply #map2(%arg13, %arg5)
                %extracted_slice_13 = tensor.extract_slice %arg0[%arg2, %13, %arg7, %arg9] [1, 1, 8, 8] [1, 1, 1, 1] : tensor<4x10x10x8xf32> to tensor<8x8xf32>
                %extracted_slice_14 = tensor.extract_slice %1[%arg2, %arg13, 0, %arg11] [1, 1, 8, 32] [1, 1, 1, 1] : tensor<4x8x8x32xf32> to tensor<8x32xf32>
                %14 = linalg.matmul indexing_maps = [#map3, #map4, #map5] ins(%extracted_slice_13, %extracted_slice_14 : tensor<8x8xf32>, tensor<8x32xf32>) outs(%arg14 : tensor<8x32xf32>) -> tensor<8x32xf32>
                scf.yield %14 : tensor<8x32xf32>
              }
              %inserted_slice = tensor.insert_slice %12 into %arg12[%arg5, %arg7, %arg9, %arg11] [1, 1, 8, 32] [1, 1, 1, 1] : tensor<8x32xf32> into tensor<3x3x8x32xf32>
              scf.yield %inserted_slice : tensor<3x3x8x32xf32>
            }
            scf.yield %11 : tensor<3x3x8x32xf32>
          }
          scf.yield %10 : tensor<3x3x8x32xf32>
        }
        scf.yield %9 : tensor<3x3x8x32xf32>
      }
      %extracted_slice = tensor.extract_slice %1[%arg2, 0, 0, 0] [1, 8, 8, 32] [1, 1, 1, 1] : tensor<4x8x8x32xf32> to tensor<1x8x8x32xf32>
      %8 = linalg.generic {indexing_maps = [#map1, #map], iterator_types = ["reduction", "reduction", "reduction", "parallel"]} ins(%extracted_slice : tensor<1x8x8x32xf32>) outs(%arg4 : tensor<32xf32>) {
      ^bb0(%in: f32, %out: f32):
        %9 = arith.addf %out, %in : f32
        linalg.yield %9 : f32
      } -> tensor<32xf32>
      scf.yield %7, %8 : tensor<3x3x8x32xf32>, tensor<32xf32>
    } {fuse.image_loop}
    return %6#0, %6#1 : tensor<3x3x8x32xf32>, tensor<32xf32>
  }
}

