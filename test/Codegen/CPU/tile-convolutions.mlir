// RUN: fuse-opt %s --fuse-tile-convolutions=vector-bits=512 --split-input-file | FileCheck %s

// direct_conv with tiles of 4 columns x 16 filters (the config's, not the
// library's 8): each tile zeroed in registers, convolved and finished by
// the consumer (bias add and ReLU) while in cache.
// CHECK-LABEL: func @conv_epilogue
// CHECK: scf.for {{.*}} step %c4{{(_[0-9]+)?}} iter_args
// CHECK: linalg.fill {fuse.lowering_config = #fuse.lowering_config<strategy = register_tile, {{.*}} -> tensor<1x1x4x16xf32>
// CHECK: linalg.conv_2d_nhwc_hwcf {{.*}} ins(%{{.*}} : tensor<1x3x6x4xf32>, tensor<3x3x4x16xf32>) outs(%{{.*}} : tensor<1x1x4x16xf32>)
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<1x1x4x16xf32>, tensor<16xf32>)
#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#map1 = affine_map<(d0, d1, d2, d3) -> (d3)>
func.func @conv_epilogue(%arg0: tensor<1x10x10x4xf32>, %arg1: tensor<3x3x4x16xf32>, %arg2: tensor<16xf32>) -> tensor<1x8x8x16xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<1x8x8x16xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<1x8x8x16xf32>) -> tensor<1x8x8x16xf32>
  %2 = linalg.conv_2d_nhwc_hwcf {fuse.lowering_config = #fuse.lowering_config<strategy = direct_conv, distribution = [0, 0, 0, 0, 0, 0, 0], cache = [0, 0, 0, 0, 0, 0, 0], registers = [1, 1, 4, 16, 1, 1, 1], vector = [1, 1, 4, 16, 1, 1, 1]>, dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%arg0, %arg1 : tensor<1x10x10x4xf32>, tensor<3x3x4x16xf32>) outs(%1 : tensor<1x8x8x16xf32>) -> tensor<1x8x8x16xf32>
  %3 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%2, %arg2 : tensor<1x8x8x16xf32>, tensor<16xf32>) outs(%0 : tensor<1x8x8x16xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %4 = arith.addf %in, %in_0 : f32
    %5 = arith.maximumf %4, %cst : f32
    linalg.yield %5 : f32
  } -> tensor<1x8x8x16xf32>
  return %3 : tensor<1x8x8x16xf32>
}

// -----

// Two bands of columns: 24 in tiles of 8 (one image each), the 2 left in
// tiles of 2 columns and both images.
// CHECK-LABEL: func @conv_split_columns
// CHECK: scf.for {{.*}} to %c24{{(_[0-9]+)?}} step %c8{{(_[0-9]+)?}} iter_args
// CHECK: linalg.conv_2d_nhwc_hwcf {{.*}} outs(%{{.*}} : tensor<1x1x8x32xf32>)
// CHECK: scf.for %{{.*}} = %c24{{(_[0-9]+)?}} to %c26{{(_[0-9]+)?}} step %c2
// CHECK: linalg.conv_2d_nhwc_hwcf {{.*}} outs(%{{.*}} : tensor<2x1x2x32xf32>)
func.func @conv_split_columns(%arg0: tensor<2x28x28x8xf32>, %arg1: tensor<3x3x8x32xf32>) -> tensor<2x26x26x32xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<2x26x26x32xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<2x26x26x32xf32>) -> tensor<2x26x26x32xf32>
  %2 = linalg.conv_2d_nhwc_hwcf {fuse.lowering_config = #fuse.lowering_config<strategy = direct_conv, distribution = [0, 0, 0, 0, 0, 0, 0], cache = [0, 0, 0, 0, 0, 0, 0], registers = [1, 1, 8, 32, 1, 1, 1, 2, 1, 2, 32, 1, 1, 1], vector = [2, 1, 2, 32, 1, 1, 1]>, dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%arg0, %arg1 : tensor<2x28x28x8xf32>, tensor<3x3x8x32xf32>) outs(%1 : tensor<2x26x26x32xf32>) -> tensor<2x26x26x32xf32>
  return %2 : tensor<2x26x26x32xf32>
}

// -----

// filter_gradient with register tiles of 4 channels x 16 filters (the
// config's; the library's would be 8 x 32): a loop over images (an image
// loop, for fuse-image-loop-fusion) carrying dW and the bias gradient beside
// it; per image, filter tap and tile of (c, f), products accumulated over
// the output rows; the bias gradient sums the image's dY.
// CHECK-LABEL: func @filter_gradient_with_bias
// CHECK: scf.for {{.*}} -> (tensor<3x3x8x32xf32>, tensor<32xf32>)
// CHECK: linalg.matmul {{.*}} ins(%{{.*}} : tensor<8x4xf32>, tensor<8x16xf32>) outs(%{{.*}} : tensor<4x16xf32>)
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<1x8x8x32xf32>) outs(%{{.*}} : tensor<32xf32>)
// CHECK: } {fuse.image_loop}
#fgX = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d0 + d5, d1 + d6, d2)>
#fgY = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d5, d6, d3)>
#fgW = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>
#fgId = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#fgF = affine_map<(d0, d1, d2, d3) -> (d3)>
func.func @filter_gradient_with_bias(%arg0: tensor<4x10x10x8xf32>, %arg1: tensor<4x8x8x32xf32>) -> (tensor<3x3x8x32xf32>, tensor<32xf32>) {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<3x3x8x32xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<3x3x8x32xf32>) -> tensor<3x3x8x32xf32>
  %2 = linalg.generic {fuse.lowering_config = #fuse.lowering_config<strategy = filter_gradient, distribution = [0, 0, 0, 0, 0, 0, 0], cache = [0, 0, 0, 0, 0, 0, 0], registers = [1, 1, 4, 16, 1, 1, 1], vector = [1, 1, 4, 16, 1, 1, 1]>, indexing_maps = [#fgX, #fgY, #fgW], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%arg0, %arg1 : tensor<4x10x10x8xf32>, tensor<4x8x8x32xf32>) outs(%1 : tensor<3x3x8x32xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %6 = arith.mulf %in, %in_0 : f32
    %7 = arith.addf %out, %6 : f32
    linalg.yield %7 : f32
  } -> tensor<3x3x8x32xf32>
  %3 = tensor.empty() : tensor<32xf32>
  %4 = linalg.fill ins(%cst : f32) outs(%3 : tensor<32xf32>) -> tensor<32xf32>
  %5 = linalg.generic {indexing_maps = [#fgId, #fgF], iterator_types = ["reduction", "reduction", "reduction", "parallel"]} ins(%arg1 : tensor<4x8x8x32xf32>) outs(%4 : tensor<32xf32>) {
  ^bb0(%in: f32, %out: f32):
    %6 = arith.addf %out, %in : f32
    linalg.yield %6 : f32
  } -> tensor<32xf32>
  return %2, %5 : tensor<3x3x8x32xf32>, tensor<32xf32>
}

// -----

// Distributed direct_conv: blocks of 2 images (the config's distribution)
// that the threads share, each a whole number of both bands' tiles (the
// second band's tiles span 2 images). Each block runs both bands' nests over
// its images of the shared output, then inserts its block.
// CHECK-LABEL: func @conv_distributed
// CHECK: scf.forall (%[[FIRST:[^)]+]]) = (0) to (4) step (2) shared_outs(%[[OUT:[^ ]+]] = %{{.*}}) -> (tensor<4x26x26x32xf32>)
// CHECK: scf.for %[[I:[^ ]+]] = %c0{{(_[0-9]+)?}} to %c2{{(_[0-9]+)?}} step %c1{{(_[0-9]+)?}} iter_args(%{{.*}} = %[[OUT]])
// CHECK: arith.addi %[[FIRST]], %[[I]]
// CHECK: linalg.conv_2d_nhwc_hwcf {{.*}} outs(%{{.*}} : tensor<1x1x8x32xf32>)
// CHECK: scf.for %{{.*}} = %c0{{(_[0-9]+)?}} to %c2{{(_[0-9]+)?}} step %c2
// CHECK: linalg.conv_2d_nhwc_hwcf {{.*}} outs(%{{.*}} : tensor<2x1x2x32xf32>)
// CHECK: %[[BLOCK:.*]] = tensor.extract_slice %{{.*}}[%[[FIRST]], 0, 0, 0] [2, 26, 26, 32]
// CHECK: scf.forall.in_parallel
// CHECK-NEXT: tensor.parallel_insert_slice %[[BLOCK]] into %[[OUT]][%[[FIRST]], 0, 0, 0] [2, 26, 26, 32]
func.func @conv_distributed(%arg0: tensor<4x28x28x8xf32>, %arg1: tensor<3x3x8x32xf32>) -> tensor<4x26x26x32xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<4x26x26x32xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<4x26x26x32xf32>) -> tensor<4x26x26x32xf32>
  %2 = linalg.conv_2d_nhwc_hwcf {fuse.lowering_config = #fuse.lowering_config<strategy = direct_conv, distribution = [2, 0, 0, 0, 0, 0, 0], cache = [0, 0, 0, 0, 0, 0, 0], registers = [1, 1, 8, 32, 1, 1, 1, 2, 1, 2, 32, 1, 1, 1], vector = [2, 1, 2, 32, 1, 1, 1]>, dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%arg0, %arg1 : tensor<4x28x28x8xf32>, tensor<3x3x8x32xf32>) outs(%1 : tensor<4x26x26x32xf32>) -> tensor<4x26x26x32xf32>
  return %2 : tensor<4x26x26x32xf32>
}

// -----

// A block of images that does not hold whole tiles of every band (3 images
// against the second band's 2) is not distributed.
// CHECK-LABEL: func @conv_block_not_whole_tiles
// CHECK-NOT: scf.forall
// CHECK: scf.for {{.*}} to %c6{{(_[0-9]+)?}} step %c1
// CHECK-NOT: scf.forall
func.func @conv_block_not_whole_tiles(%arg0: tensor<6x28x28x8xf32>, %arg1: tensor<3x3x8x32xf32>) -> tensor<6x26x26x32xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<6x26x26x32xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<6x26x26x32xf32>) -> tensor<6x26x26x32xf32>
  %2 = linalg.conv_2d_nhwc_hwcf {fuse.lowering_config = #fuse.lowering_config<strategy = direct_conv, distribution = [3, 0, 0, 0, 0, 0, 0], cache = [0, 0, 0, 0, 0, 0, 0], registers = [1, 1, 8, 32, 1, 1, 1, 2, 1, 2, 32, 1, 1, 1], vector = [2, 1, 2, 32, 1, 1, 1]>, dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%arg0, %arg1 : tensor<6x28x28x8xf32>, tensor<3x3x8x32xf32>) outs(%1 : tensor<6x26x26x32xf32>) -> tensor<6x26x26x32xf32>
  return %2 : tensor<6x26x26x32xf32>
}

// -----

// Distributed filter_gradient: groups of 2 images (the config's
// distribution on n), an scf.forall over the 2 groups; each zeroes its
// partials of dW and db, sums its images into them (an unmarked loop), and
// inserts them; then the partials are added to dW's and db's accumulators
// in group order, outside the threads.
// CHECK-LABEL: func @filter_gradient_distributed
// CHECK: %[[PARTS:.*]]:2 = scf.forall (%[[G:[^)]+]]) in (2) shared_outs(%[[PW:[^ ]+]] = %{{.*}}, %[[PB:[^ ]+]] = %{{.*}}) -> (tensor<2x3x3x8x32xf32>, tensor<2x32xf32>)
// CHECK: tensor.extract_slice %[[PW]][%[[G]], 0, 0, 0, 0] [1, 3, 3, 8, 32]
// CHECK: linalg.fill
// CHECK: tensor.extract_slice %[[PB]][%[[G]], 0] [1, 32]
// CHECK: linalg.fill
// CHECK: scf.for {{.*}} to %c2{{(_[0-9]+)?}} step %c1{{(_[0-9]+)?}} iter_args({{.*}}) -> (tensor<3x3x8x32xf32>, tensor<32xf32>)
// CHECK: linalg.matmul {{.*}} outs(%{{.*}} : tensor<8x32xf32>)
// CHECK-NOT: fuse.image_loop
// CHECK: tensor.parallel_insert_slice
// CHECK: tensor.parallel_insert_slice
// CHECK: %[[DW:.*]] = linalg.generic {{.*}} iterator_types = ["reduction", "parallel", "parallel", "parallel", "parallel"]} ins(%[[PARTS]]#0 : tensor<2x3x3x8x32xf32>) outs(%{{.*}} : tensor<3x3x8x32xf32>)
// CHECK: %[[DB:.*]] = linalg.generic {{.*}} iterator_types = ["reduction", "parallel"]} ins(%[[PARTS]]#1 : tensor<2x32xf32>) outs(%{{.*}} : tensor<32xf32>)
// CHECK: return %[[DW]], %[[DB]]
#fgX = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d0 + d5, d1 + d6, d2)>
#fgY = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d5, d6, d3)>
#fgW = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>
#fgId = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#fgF = affine_map<(d0, d1, d2, d3) -> (d3)>
func.func @filter_gradient_distributed(%arg0: tensor<4x10x10x8xf32>, %arg1: tensor<4x8x8x32xf32>) -> (tensor<3x3x8x32xf32>, tensor<32xf32>) {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<3x3x8x32xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<3x3x8x32xf32>) -> tensor<3x3x8x32xf32>
  %2 = linalg.generic {indexing_maps = [#fgX, #fgY, #fgW], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%arg0, %arg1 : tensor<4x10x10x8xf32>, tensor<4x8x8x32xf32>) outs(%1 : tensor<3x3x8x32xf32>) attrs = {fuse.lowering_config = #fuse.lowering_config<strategy = filter_gradient, distribution = [0, 0, 0, 0, 2, 0, 0], cache = [0, 0, 0, 0, 0, 0, 0], registers = [1, 1, 8, 32, 1, 1, 1], vector = [1, 1, 8, 32, 1, 1, 1]>} {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %6 = arith.mulf %in, %in_0 : f32
    %7 = arith.addf %out, %6 : f32
    linalg.yield %7 : f32
  } -> tensor<3x3x8x32xf32>
  %3 = tensor.empty() : tensor<32xf32>
  %4 = linalg.fill ins(%cst : f32) outs(%3 : tensor<32xf32>) -> tensor<32xf32>
  %5 = linalg.generic {indexing_maps = [#fgId, #fgF], iterator_types = ["reduction", "reduction", "reduction", "parallel"]} ins(%arg1 : tensor<4x8x8x32xf32>) outs(%4 : tensor<32xf32>) {
  ^bb0(%in: f32, %out: f32):
    %6 = arith.addf %out, %in : f32
    linalg.yield %6 : f32
  } -> tensor<32xf32>
  return %2, %5 : tensor<3x3x8x32xf32>, tensor<32xf32>
}
