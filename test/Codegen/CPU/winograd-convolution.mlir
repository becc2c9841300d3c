// RUN: fuse-opt %s --fuse-winograd-convolution=vector-bits=512 --split-input-file | FileCheck %s

// winograd_conv, 8x8 outputs: F(4x4, 3x3). The filter is transformed once
// (U[36, c, f]); per image (an image loop), the input tiles' transform
// V[4 tiles, 37, c], one matmul per position (configured later, when
// fuse-block-and-pack-matmuls takes it), the output transform, and the
// consumer on the image's slice.
// CHECK-LABEL: func @conv_winograd
// CHECK: scf.for {{.*}} -> (tensor<36x16x32xf32>)
// CHECK: scf.for {{.*}} -> (tensor<2x8x8x32xf32>, tensor<1x8x8x32xf32>)
// CHECK: scf.for {{.*}} -> (tensor<4x37x16xf32>)
// CHECK: scf.for %{{.*}} to %c36
// CHECK: linalg.matmul ins(%{{.*}} : tensor<4x16xf32>, tensor<16x32xf32>) outs(%{{.*}} : tensor<4x32xf32>)
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<1x8x8x32xf32>, tensor<32xf32>)
// CHECK: } {fuse.image_loop}
// CHECK-NOT: linalg.conv_2d
#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#map1 = affine_map<(d0, d1, d2, d3) -> (d3)>
func.func @conv_winograd(%x: tensor<2x10x10x16xf32>, %k: tensor<3x3x16x32xf32>, %b: tensor<32xf32>) -> tensor<2x8x8x32xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<2x8x8x32xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<2x8x8x32xf32>) -> tensor<2x8x8x32xf32>
  %2 = linalg.conv_2d_nhwc_hwcf {fuse.lowering_config = #fuse.lowering_config<strategy = winograd_conv, distribution = [0, 0, 0, 0, 0, 0, 0], cache = [0, 0, 0, 0, 0, 0, 0], registers = [0, 0, 0, 0, 0, 0, 0], vector = [0, 0, 0, 0, 0, 0, 0]>, dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %k : tensor<2x10x10x16xf32>, tensor<3x3x16x32xf32>) outs(%1 : tensor<2x8x8x32xf32>) -> tensor<2x8x8x32xf32>
  %3 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%2, %b : tensor<2x8x8x32xf32>, tensor<32xf32>) outs(%0 : tensor<2x8x8x32xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %4 = arith.addf %in, %in_0 : f32
    %5 = arith.maximumf %4, %cst : f32
    linalg.yield %5 : f32
  } -> tensor<2x8x8x32xf32>
  return %3 : tensor<2x8x8x32xf32>
}

// -----

// winograd_filter_gradient: per image, X's tiles become V and dY's D, one
// matmul per position accumulates P[p] += V[:, p]^T D[:, p]; then
// dW = G^T P G.
// CHECK-LABEL: func @filter_gradient_winograd
// CHECK: scf.for {{.*}} -> (tensor<36x16x32xf32>)
// CHECK: linalg.matmul {{.*}} ins(%{{.*}} : tensor<4x16xf32>, tensor<4x32xf32>) outs(%{{.*}} : tensor<16x32xf32>)
// CHECK: } {fuse.image_loop}
// CHECK: scf.for {{.*}} -> (tensor<3x3x16x32xf32>)
#map = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d0 + d5, d1 + d6, d2)>
#map1 = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d5, d6, d3)>
#map2 = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>
func.func @filter_gradient_winograd(%arg0: tensor<2x10x10x16xf32>, %arg1: tensor<2x8x8x32xf32>) -> tensor<3x3x16x32xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<3x3x16x32xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<3x3x16x32xf32>) -> tensor<3x3x16x32xf32>
  %2 = linalg.generic {fuse.lowering_config = #fuse.lowering_config<strategy = winograd_filter_gradient, distribution = [0, 0, 0, 0, 0, 0, 0], cache = [0, 0, 0, 0, 0, 0, 0], registers = [0, 0, 0, 0, 0, 0, 0], vector = [0, 0, 0, 0, 0, 0, 0]>, indexing_maps = [#map, #map1, #map2], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%arg0, %arg1 : tensor<2x10x10x16xf32>, tensor<2x8x8x32xf32>) outs(%1 : tensor<3x3x16x32xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %3 = arith.mulf %in, %in_0 : f32
    %4 = arith.addf %out, %3 : f32
    linalg.yield %4 : f32
  } -> tensor<3x3x16x32xf32>
  return %2 : tensor<3x3x16x32xf32>
}

// -----

// With groups of images in its config (distribution[4] = 2: the strategy's
// tile on the reduction loop n), the threads share the groups: an
// scf.forall over 2 groups, each summing its 2 images (a loop of its own,
// not an image loop) into a zeroed partial of P; then the partials are
// added to P in group order, and dW = G^T P G as before.
// CHECK-LABEL: func @filter_gradient_winograd_groups
// CHECK: %[[P:.*]] = linalg.fill {{.*}} -> tensor<36x16x32xf32>
// CHECK: %[[PARTIALS:.*]] = tensor.empty() : tensor<2x36x16x32xf32>
// CHECK: %[[GROUPS:.*]] = scf.forall (%[[G:.*]]) in (2) shared_outs(%[[SHARED:.*]] = %[[PARTIALS]])
// CHECK: %[[SLICE:.*]] = tensor.extract_slice %[[SHARED]][%[[G]], 0, 0, 0] [1, 36, 16, 32]
// CHECK: %[[ZERO:.*]] = linalg.fill {{.*}} outs(%[[SLICE]] : tensor<36x16x32xf32>)
// CHECK: %[[SUM:.*]] = scf.for {{.*}} to %c2{{.*}} iter_args(%{{.*}} = %[[ZERO]]) -> (tensor<36x16x32xf32>)
// CHECK: linalg.matmul {{.*}} ins(%{{.*}} : tensor<4x16xf32>, tensor<4x32xf32>) outs(%{{.*}} : tensor<16x32xf32>)
// CHECK-NOT: fuse.image_loop
// CHECK: tensor.parallel_insert_slice %[[SUM]] into %[[SHARED]][%[[G]], 0, 0, 0]
// CHECK: linalg.generic {{.*}} iterator_types = ["reduction", "parallel", "parallel", "parallel"]} ins(%[[GROUPS]] : tensor<2x36x16x32xf32>) outs(%[[P]] : tensor<36x16x32xf32>)
// CHECK: scf.for {{.*}} -> (tensor<3x3x16x32xf32>)
#gmap = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d0 + d5, d1 + d6, d2)>
#gmap1 = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d5, d6, d3)>
#gmap2 = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>
func.func @filter_gradient_winograd_groups(%arg0: tensor<4x10x10x16xf32>, %arg1: tensor<4x8x8x32xf32>) -> tensor<3x3x16x32xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<3x3x16x32xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<3x3x16x32xf32>) -> tensor<3x3x16x32xf32>
  %2 = linalg.generic {fuse.lowering_config = #fuse.lowering_config<strategy = winograd_filter_gradient, distribution = [0, 0, 0, 0, 2, 0, 0], cache = [0, 0, 0, 0, 0, 0, 0], registers = [0, 0, 0, 0, 0, 0, 0], vector = [0, 0, 0, 0, 0, 0, 0]>, indexing_maps = [#gmap, #gmap1, #gmap2], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%arg0, %arg1 : tensor<4x10x10x16xf32>, tensor<4x8x8x32xf32>) outs(%1 : tensor<3x3x16x32xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %3 = arith.mulf %in, %in_0 : f32
    %4 = arith.addf %out, %3 : f32
    linalg.yield %4 : f32
  } -> tensor<3x3x16x32xf32>
  return %2 : tensor<3x3x16x32xf32>
}

// -----

// An image whose transformed tiles do not fit in L2: the rewrite refuses,
// and the convolution gets its direct config (bands of 8 columns).
// CHECK-LABEL: func @conv_winograd_large
// CHECK: linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, fuse.lowering_config = #fuse.lowering_config<strategy = direct_conv, distribution = [0, 0, 0, 0, 0, 0, 0], cache = [0, 0, 0, 0, 0, 0, 0], registers = [1, 1, 8, 32, 1, 1, 1], vector = [1, 1, 8, 32, 1, 1, 1]>
func.func @conv_winograd_large(%x: tensor<1x58x58x16xf32>, %k: tensor<3x3x16x32xf32>) -> tensor<1x56x56x32xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<1x56x56x32xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<1x56x56x32xf32>) -> tensor<1x56x56x32xf32>
  %2 = linalg.conv_2d_nhwc_hwcf {fuse.lowering_config = #fuse.lowering_config<strategy = winograd_conv, distribution = [0, 0, 0, 0, 0, 0, 0], cache = [0, 0, 0, 0, 0, 0, 0], registers = [0, 0, 0, 0, 0, 0, 0], vector = [0, 0, 0, 0, 0, 0, 0]>, dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %k : tensor<1x58x58x16xf32>, tensor<3x3x16x32xf32>) outs(%1 : tensor<1x56x56x32xf32>) -> tensor<1x56x56x32xf32>
  return %2 : tensor<1x56x56x32xf32>
}
