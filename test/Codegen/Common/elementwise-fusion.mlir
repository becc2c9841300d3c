// RUN: fuse-opt %s --fuse-elementwise-fusion --split-input-file | FileCheck %s

// Inputs are convert-fuse-to-linalg output of small fuse functions (the
// fuse source is in the comment above each case).

// fuse.add %x, %b (row broadcast) -> fuse.relu -> fuse.exp: one generic that
// reads the inputs once and keeps the broadcast map.
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>
// CHECK-DAG: #[[$ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[$ROW:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func @chain
// CHECK-SAME: (%[[X:[^:]*]]: tensor<4x8xf32>, %[[B:[^:]*]]: tensor<8xf32>)
// CHECK: %[[R:.*]] = linalg.generic {indexing_maps = [#[[$ID]], #[[$ROW]], #[[$ID]]], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME: ins(%[[X]], %[[B]] : tensor<4x8xf32>, tensor<8xf32>)
// CHECK: ^bb0(%[[IN:.*]]: f32, %[[BIAS:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[IN]], %[[BIAS]] : f32
// CHECK-NEXT: %[[M:.*]] = arith.maximumf %[[S]], %{{.*}} : f32
// CHECK-NEXT: %[[E:.*]] = math.exp %[[M]] : f32
// CHECK-NEXT: linalg.yield %[[E]] : f32
// CHECK-NOT: linalg.generic
// CHECK: return %[[R]]
func.func @chain(%arg0: tensor<4x8xf32>, %arg1: tensor<8xf32>) -> tensor<4x8xf32> {
  %0 = tensor.empty() : tensor<4x8xf32>
  %1 = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%arg0, %arg1 : tensor<4x8xf32>, tensor<8xf32>) outs(%0 : tensor<4x8xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %6 = arith.addf %in, %in_0 : f32
    linalg.yield %6 : f32
  } -> tensor<4x8xf32>
  %2 = tensor.empty() : tensor<4x8xf32>
  %3 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%1 : tensor<4x8xf32>) outs(%2 : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %cst = arith.constant 0.000000e+00 : f32
    %6 = arith.maximumf %in, %cst : f32
    linalg.yield %6 : f32
  } -> tensor<4x8xf32>
  %4 = tensor.empty() : tensor<4x8xf32>
  %5 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%3 : tensor<4x8xf32>) outs(%4 : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %6 = math.exp %in : f32
    linalg.yield %6 : f32
  } -> tensor<4x8xf32>
  return %5 : tensor<4x8xf32>
}

// -----

// fuse.sub -> fuse.square -> fuse.reduce_sum {axes = [1]}: the element-wise
// producers fuse into the reduction.
#id = affine_map<(d0, d1) -> (d0, d1)>
#rows = affine_map<(d0, d1) -> (d0)>
// CHECK-DAG: #[[$ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[$ROWS:.*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func @into_reduction
// CHECK-SAME: (%[[X:[^:]*]]: tensor<4x8xf32>, %[[T:[^:]*]]: tensor<4x8xf32>)
// CHECK: %[[ACC:.*]] = linalg.fill
// CHECK: %[[R:.*]] = linalg.generic {indexing_maps = [#[[$ID]], #[[$ID]], #[[$ROWS]]], iterator_types = ["parallel", "reduction"]}
// CHECK-SAME: ins(%[[X]], %[[T]] : tensor<4x8xf32>, tensor<4x8xf32>) outs(%[[ACC]] : tensor<4xf32>)
// CHECK: ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32, %[[OUT:.*]]: f32):
// CHECK-NEXT: %[[D:.*]] = arith.subf %[[A]], %[[B]] : f32
// CHECK-NEXT: %[[SQ:.*]] = arith.mulf %[[D]], %[[D]] : f32
// CHECK-NEXT: %[[SUM:.*]] = arith.addf %[[OUT]], %[[SQ]] : f32
// CHECK-NEXT: linalg.yield %[[SUM]] : f32
// CHECK-NOT: linalg.generic
// CHECK: return %[[R]]
func.func @into_reduction(%arg0: tensor<4x8xf32>, %arg1: tensor<4x8xf32>) -> tensor<4xf32> {
  %0 = tensor.empty() : tensor<4x8xf32>
  %1 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%arg0, %arg1 : tensor<4x8xf32>, tensor<4x8xf32>) outs(%0 : tensor<4x8xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %7 = arith.subf %in, %in_0 : f32
    linalg.yield %7 : f32
  } -> tensor<4x8xf32>
  %2 = tensor.empty() : tensor<4x8xf32>
  %3 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%1 : tensor<4x8xf32>) outs(%2 : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %7 = arith.mulf %in, %in : f32
    linalg.yield %7 : f32
  } -> tensor<4x8xf32>
  %cst = arith.constant 0.000000e+00 : f32
  %4 = tensor.empty() : tensor<4xf32>
  %5 = linalg.fill ins(%cst : f32) outs(%4 : tensor<4xf32>) -> tensor<4xf32>
  %6 = linalg.generic {indexing_maps = [#id, #rows], iterator_types = ["parallel", "reduction"]} ins(%3 : tensor<4x8xf32>) outs(%5 : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %7 = arith.addf %out, %in : f32
    linalg.yield %7 : f32
  } -> tensor<4xf32>
  return %6 : tensor<4xf32>
}

// -----

// %e = fuse.exp %x used by fuse.neg and fuse.sqrt: fusing would compute exp
// twice, so the three generics stay.
#id = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func @two_users
// CHECK-SAME: (%[[X:[^:]*]]: tensor<4x8xf32>)
// CHECK: %[[E:.*]] = linalg.generic
// CHECK-SAME: ins(%[[X]] : tensor<4x8xf32>)
// CHECK: math.exp
// CHECK: %[[N:.*]] = linalg.generic
// CHECK-SAME: ins(%[[E]] : tensor<4x8xf32>)
// CHECK-NOT: math.exp
// CHECK: arith.negf
// CHECK: %[[S:.*]] = linalg.generic
// CHECK-SAME: ins(%[[E]] : tensor<4x8xf32>)
// CHECK-NOT: math.exp
// CHECK: math.sqrt
// CHECK: return %[[N]], %[[S]]
func.func @two_users(%arg0: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %0 = tensor.empty() : tensor<4x8xf32>
  %1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%arg0 : tensor<4x8xf32>) outs(%0 : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %6 = math.exp %in : f32
    linalg.yield %6 : f32
  } -> tensor<4x8xf32>
  %2 = tensor.empty() : tensor<4x8xf32>
  %3 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%1 : tensor<4x8xf32>) outs(%2 : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %6 = arith.negf %in : f32
    linalg.yield %6 : f32
  } -> tensor<4x8xf32>
  %4 = tensor.empty() : tensor<4x8xf32>
  %5 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%1 : tensor<4x8xf32>) outs(%4 : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %6 = math.sqrt %in : f32
    linalg.yield %6 : f32
  } -> tensor<4x8xf32>
  return %3, %5 : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// A producer that is also a function result has two uses: not fused.
#id = affine_map<(d0) -> (d0)>
// CHECK-LABEL: func @also_returned
// CHECK: %[[E:.*]] = linalg.generic
// CHECK: math.exp
// CHECK: %[[N:.*]] = linalg.generic
// CHECK-SAME: ins(%[[E]] : tensor<8xf32>)
// CHECK-NOT: math.exp
// CHECK: arith.negf
// CHECK: return %[[E]], %[[N]]
func.func @also_returned(%arg0: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %0 = tensor.empty() : tensor<8xf32>
  %1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%arg0 : tensor<8xf32>) outs(%0 : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %4 = math.exp %in : f32
    linalg.yield %4 : f32
  } -> tensor<8xf32>
  %2 = tensor.empty() : tensor<8xf32>
  %3 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%1 : tensor<8xf32>) outs(%2 : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %4 = arith.negf %in : f32
    linalg.yield %4 : f32
  } -> tensor<8xf32>
  return %1, %3 : tensor<8xf32>, tensor<8xf32>
}

// -----

// fuse.reshape -> fuse.matmul -> fuse.add (bias) -> fuse.reshape -> fuse.relu.
// linalg.matmul stays a named op: the reshapes around it are not propagated
// through it (upstream's reshape-by-collapsing/expansion patterns would turn
// it into a linalg.generic), and it fuses with neither neighbour.
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-LABEL: func @matmul_stays_named
// CHECK-SAME: (%[[X:[^:]*]]: tensor<2x3x4xf32>, %[[W:[^:]*]]: tensor<4x5xf32>, %[[B:[^:]*]]: tensor<5xf32>)
// CHECK: %[[FLAT:.*]] = tensor.collapse_shape %[[X]]
// CHECK: %[[LHS:.*]] = tensor.expand_shape %[[FLAT]] {{\[}}[0, 1]] output_shape [6, 4]
// CHECK: %[[ACC:.*]] = linalg.fill
// CHECK: %[[MM:.*]] = linalg.matmul ins(%[[LHS]], %[[W]] : tensor<6x4xf32>, tensor<4x5xf32>) outs(%[[ACC]] : tensor<6x5xf32>) -> tensor<6x5xf32>
// CHECK: %[[BIASED:.*]] = linalg.generic
// CHECK-SAME: ins(%[[MM]], %[[B]] : tensor<6x5xf32>, tensor<5xf32>)
// CHECK: arith.addf
// CHECK: tensor.collapse_shape %[[BIASED]]
// CHECK: tensor.expand_shape
// CHECK: linalg.generic
// CHECK: arith.maximumf
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @matmul_stays_named(%arg0: tensor<2x3x4xf32>, %arg1: tensor<4x5xf32>, %arg2: tensor<5xf32>) -> tensor<2x3x5xf32> {
  %collapsed = tensor.collapse_shape %arg0 [[0, 1, 2]] : tensor<2x3x4xf32> into tensor<24xf32>
  %expanded = tensor.expand_shape %collapsed [[0, 1]] output_shape [6, 4] : tensor<24xf32> into tensor<6x4xf32>
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<6x5xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<6x5xf32>) -> tensor<6x5xf32>
  %2 = linalg.matmul ins(%expanded, %arg1 : tensor<6x4xf32>, tensor<4x5xf32>) outs(%1 : tensor<6x5xf32>) -> tensor<6x5xf32>
  %3 = tensor.empty() : tensor<6x5xf32>
  %4 = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%2, %arg2 : tensor<6x5xf32>, tensor<5xf32>) outs(%3 : tensor<6x5xf32>) {
  ^bb0(%in: f32, %in_2: f32, %out: f32):
    %7 = arith.addf %in, %in_2 : f32
    linalg.yield %7 : f32
  } -> tensor<6x5xf32>
  %collapsed_0 = tensor.collapse_shape %4 [[0, 1]] : tensor<6x5xf32> into tensor<30xf32>
  %expanded_1 = tensor.expand_shape %collapsed_0 [[0, 1, 2]] output_shape [2, 3, 5] : tensor<30xf32> into tensor<2x3x5xf32>
  %5 = tensor.empty() : tensor<2x3x5xf32>
  %6 = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%expanded_1 : tensor<2x3x5xf32>) outs(%5 : tensor<2x3x5xf32>) {
  ^bb0(%in: f32, %out: f32):
    %cst_2 = arith.constant 0.000000e+00 : f32
    %7 = arith.maximumf %in, %cst_2 : f32
    linalg.yield %7 : f32
  } -> tensor<2x3x5xf32>
  return %6 : tensor<2x3x5xf32>
}

// -----

// An element-wise producer of a matmul operand (fuse.relu, then fuse.matmul
// with transpose_lhs) is not fused into the named op either.
#id = affine_map<(d0, d1) -> (d0, d1)>
#lhs_t = affine_map<(d0, d1, d2) -> (d2, d0)>
#rhs = affine_map<(d0, d1, d2) -> (d2, d1)>
#out = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func @producer_of_matmul
// CHECK: %[[R:.*]] = linalg.generic
// CHECK: arith.maximumf
// CHECK: linalg.matmul indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}] ins(%[[R]], %{{.*}} : tensor<4x6xf32>, tensor<4x5xf32>)
func.func @producer_of_matmul(%arg0: tensor<4x6xf32>, %arg1: tensor<4x5xf32>) -> tensor<6x5xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<4x6xf32>
  %1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%arg0 : tensor<4x6xf32>) outs(%0 : tensor<4x6xf32>) {
  ^bb0(%in: f32, %out: f32):
    %5 = arith.maximumf %in, %cst : f32
    linalg.yield %5 : f32
  } -> tensor<4x6xf32>
  %2 = tensor.empty() : tensor<6x5xf32>
  %3 = linalg.fill ins(%cst : f32) outs(%2 : tensor<6x5xf32>) -> tensor<6x5xf32>
  %4 = linalg.matmul indexing_maps = [#lhs_t, #rhs, #out] ins(%1, %arg1 : tensor<4x6xf32>, tensor<4x5xf32>) outs(%3 : tensor<6x5xf32>) -> tensor<6x5xf32>
  return %4 : tensor<6x5xf32>
}

// -----

// fuse.relu -> fuse.conv2d: the convolution stays named too.
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func @producer_of_conv
// CHECK: %[[R:.*]] = linalg.generic
// CHECK: linalg.conv_2d_nhwc_hwcf
// CHECK-SAME: ins(%[[R]], %{{.*}} : tensor<1x6x6x2xf32>, tensor<3x3x2x4xf32>)
func.func @producer_of_conv(%arg0: tensor<1x6x6x2xf32>, %arg1: tensor<3x3x2x4xf32>) -> tensor<1x4x4x4xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<1x6x6x2xf32>
  %1 = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg0 : tensor<1x6x6x2xf32>) outs(%0 : tensor<1x6x6x2xf32>) {
  ^bb0(%in: f32, %out: f32):
    %5 = arith.maximumf %in, %cst : f32
    linalg.yield %5 : f32
  } -> tensor<1x6x6x2xf32>
  %2 = tensor.empty() : tensor<1x4x4x4xf32>
  %3 = linalg.fill ins(%cst : f32) outs(%2 : tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  %4 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%1, %arg1 : tensor<1x6x6x2xf32>, tensor<3x3x2x4xf32>) outs(%3 : tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  return %4 : tensor<1x4x4x4xf32>
}

// -----

// fuse.broadcast_to then fuse.add: the broadcast generic folds into the add,
// whose map for the row operand becomes (d1). No broadcast copy remains.
#row = affine_map<(d0, d1) -> (d1)>
#id = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[$ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[$ROW:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func @broadcast_then_add
// CHECK-SAME: (%[[V:[^:]*]]: tensor<4xf32>, %[[Y:[^:]*]]: tensor<3x4xf32>)
// CHECK: linalg.generic {indexing_maps = [#[[$ROW]], #[[$ID]], #[[$ID]]]
// CHECK-SAME: ins(%[[V]], %[[Y]] : tensor<4xf32>, tensor<3x4xf32>)
// CHECK: arith.addf
// CHECK-NOT: linalg.generic
func.func @broadcast_then_add(%arg0: tensor<4xf32>, %arg1: tensor<3x4xf32>) -> tensor<3x4xf32> {
  %0 = tensor.empty() : tensor<3x4xf32>
  %1 = linalg.generic {indexing_maps = [#row, #id], iterator_types = ["parallel", "parallel"]} ins(%arg0 : tensor<4xf32>) outs(%0 : tensor<3x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<3x4xf32>
  %2 = tensor.empty() : tensor<3x4xf32>
  %3 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%1, %arg1 : tensor<3x4xf32>, tensor<3x4xf32>) outs(%2 : tensor<3x4xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %4 = arith.addf %in, %in_0 : f32
    linalg.yield %4 : f32
  } -> tensor<3x4xf32>
  return %3 : tensor<3x4xf32>
}

// -----

// Softmax: the row maximum feeds two consumers and stays a separate
// reduction; reductions never fuse into their consumers.
#id = affine_map<(d0, d1) -> (d0, d1)>
#rows = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func @softmax
// CHECK: %[[MAX:.*]] = linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "reduction"]
// CHECK: arith.maximumf
// CHECK: %[[SUM:.*]] = linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "reduction"]
// CHECK: math.exp
// CHECK: linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "parallel"]
// CHECK-SAME: ins(%{{.*}}, %[[MAX]], %[[SUM]] : tensor<4x10xf32>, tensor<4xf32>, tensor<4xf32>)
func.func @softmax(%arg0: tensor<4x10xf32>) -> tensor<4x10xf32> {
  %cst = arith.constant 0xFF800000 : f32
  %0 = tensor.empty() : tensor<4xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<4xf32>) -> tensor<4xf32>
  %2 = linalg.generic {indexing_maps = [#id, #rows], iterator_types = ["parallel", "reduction"]} ins(%arg0 : tensor<4x10xf32>) outs(%1 : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %8 = arith.maximumf %out, %in : f32
    linalg.yield %8 : f32
  } -> tensor<4xf32>
  %cst_0 = arith.constant 0.000000e+00 : f32
  %3 = tensor.empty() : tensor<4xf32>
  %4 = linalg.fill ins(%cst_0 : f32) outs(%3 : tensor<4xf32>) -> tensor<4xf32>
  %5 = linalg.generic {indexing_maps = [#id, #rows, #rows], iterator_types = ["parallel", "reduction"]} ins(%arg0, %2 : tensor<4x10xf32>, tensor<4xf32>) outs(%4 : tensor<4xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %8 = arith.subf %in, %in_1 : f32
    %9 = math.exp %8 : f32
    %10 = arith.addf %out, %9 : f32
    linalg.yield %10 : f32
  } -> tensor<4xf32>
  %6 = tensor.empty() : tensor<4x10xf32>
  %7 = linalg.generic {indexing_maps = [#id, #rows, #rows, #id], iterator_types = ["parallel", "parallel"]} ins(%arg0, %2, %5 : tensor<4x10xf32>, tensor<4xf32>, tensor<4xf32>) outs(%6 : tensor<4x10xf32>) {
  ^bb0(%in: f32, %in_1: f32, %in_2: f32, %out: f32):
    %8 = arith.subf %in, %in_1 : f32
    %9 = math.exp %8 : f32
    %10 = arith.divf %9, %in_2 : f32
    linalg.yield %10 : f32
  } -> tensor<4x10xf32>
  return %7 : tensor<4x10xf32>
}

// -----

// A producer read through a broadcasting map is not fused: its work would be
// redone for every element it is broadcast to (here exp of an 8-element
// vector would be computed 64 * 8 times instead of 8; think rsqrt(var + eps)
// of a normalization, recomputed per element of each row).
// CHECK-LABEL: func @broadcast_producer
// CHECK-SAME: (%[[X:[^:]*]]: tensor<64x8xf32>, %[[V:[^:]*]]: tensor<8xf32>)
// CHECK: %[[E:.*]] = linalg.generic
// CHECK-SAME: ins(%[[V]] : tensor<8xf32>)
// CHECK: math.exp
// CHECK: linalg.generic
// CHECK-SAME: ins(%[[X]], %[[E]] : tensor<64x8xf32>, tensor<8xf32>)
// CHECK-NOT: math.exp
// CHECK: arith.addf
// CHECK-NOT: math.exp
// CHECK: return
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>
#vec = affine_map<(d0) -> (d0)>
func.func @broadcast_producer(%arg0: tensor<64x8xf32>, %arg1: tensor<8xf32>) -> tensor<64x8xf32> {
  %0 = tensor.empty() : tensor<8xf32>
  %1 = linalg.generic {indexing_maps = [#vec, #vec], iterator_types = ["parallel"]} ins(%arg1 : tensor<8xf32>) outs(%0 : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %4 = math.exp %in : f32
    linalg.yield %4 : f32
  } -> tensor<8xf32>
  %2 = tensor.empty() : tensor<64x8xf32>
  %3 = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%arg0, %1 : tensor<64x8xf32>, tensor<8xf32>) outs(%2 : tensor<64x8xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %4 = arith.addf %in, %in_0 : f32
    linalg.yield %4 : f32
  } -> tensor<64x8xf32>
  return %3 : tensor<64x8xf32>
}

// -----

// An out the body never reads becomes a tensor.empty (upstream's clean-up);
// when its result is what the loop carries (a master weight's bf16 copy,
// written by the optimizer's update), it goes back to being the carried
// value, so that bufferization writes it in place. The f32 out, read by
// the body, keeps its operand.
// CHECK-LABEL: func.func @carried_destination
// CHECK: scf.for {{.*}} iter_args(%[[P:.*]] = %{{.*}}, %[[C:.*]] = %{{.*}}) -> (tensor<8xf32>, tensor<8xbf16>)
// CHECK: linalg.generic {{.*}} outs(%[[P]], %[[C]] : tensor<8xf32>, tensor<8xbf16>)
// CHECK: arith.truncf
#id = affine_map<(d0) -> (d0)>
func.func @carried_destination(%p: tensor<8xf32>, %c: tensor<8xbf16>, %g: tensor<8xf32>, %n: index) -> (tensor<8xf32>, tensor<8xbf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%pi = %p, %ci = %c) -> (tensor<8xf32>, tensor<8xbf16>) {
    %u:2 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]} ins(%g : tensor<8xf32>) outs(%pi, %ci : tensor<8xf32>, tensor<8xbf16>) {
    ^bb0(%in: f32, %out: f32, %out_c: bf16):
      %d = arith.subf %out, %in : f32
      %t = arith.truncf %d : f32 to bf16
      linalg.yield %d, %t : f32, bf16
    }  -> (tensor<8xf32>, tensor<8xbf16>)
    scf.yield %u#0, %u#1 : tensor<8xf32>, tensor<8xbf16>
  }
  return %r#0, %r#1 : tensor<8xf32>, tensor<8xbf16>
}

// -----

// Likewise a function result marked fuse.in_place computed into an out the
// body never reads (the join of a split weight's halves after the K-step
// loop): the out becomes the argument, so that bufferization writes the
// result into it instead of into a new buffer copied back. A result not in
// place keeps its tensor.empty.
// CHECK-LABEL: func.func @in_place_destination
// CHECK-SAME: (%[[W:[^:]*]]: tensor<8xf32>,
// CHECK: linalg.generic {{.*}} outs(%[[W]] : tensor<8xf32>)
// CHECK: %[[E:.*]] = tensor.empty() : tensor<8xf32>
// CHECK: linalg.generic {{.*}} outs(%[[E]] : tensor<8xf32>)
#id = affine_map<(d0) -> (d0)>
func.func @in_place_destination(%w: tensor<8xf32>, %t: tensor<8xbf16>, %l: tensor<8xi16>)
    -> (tensor<8xf32> {fuse.in_place = 0 : i64}, tensor<8xf32>) {
  %e = tensor.empty() : tensor<8xf32>
  %j = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]} ins(%t, %l : tensor<8xbf16>, tensor<8xi16>) outs(%e : tensor<8xf32>) {
  ^bb0(%a: bf16, %b: i16, %out: f32):
    %x = arith.extf %a : bf16 to f32
    linalg.yield %x : f32
  } -> tensor<8xf32>
  %e2 = tensor.empty() : tensor<8xf32>
  %k = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]} ins(%t, %l : tensor<8xbf16>, tensor<8xi16>) outs(%e2 : tensor<8xf32>) {
  ^bb0(%a: bf16, %b: i16, %out: f32):
    %x = arith.extf %a : bf16 to f32
    %y = arith.negf %x : f32
    linalg.yield %y : f32
  } -> tensor<8xf32>
  return %j, %k : tensor<8xf32>, tensor<8xf32>
}

// -----

// A materialized producer (fuse.materialize: a ReLU's byte mask the forward
// pass keeps) is not fused into its reader, which reads its bytes rather
// than recomputing them from the f32 input; its own producers still fuse
// into it.
// CHECK-LABEL: func @materialized
// CHECK-SAME: (%[[X:[^:]*]]: tensor<4x8xf32>, %[[G:[^:]*]]: tensor<4x8xf32>)
// CHECK: %[[K:.*]] = linalg.generic
// CHECK-SAME: ins(%[[X]] : tensor<4x8xf32>)
// CHECK-SAME: fuse.materialize
// CHECK: arith.cmpf ogt
// CHECK: arith.extui
// CHECK: linalg.generic
// CHECK-SAME: ins(%[[K]], %[[G]] : tensor<4x8xi8>, tensor<4x8xf32>)
// CHECK-NOT: linalg.generic
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @materialized(%x: tensor<4x8xf32>, %g: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<4x8xi1>
  %m = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xf32>) outs(%e1 : tensor<4x8xi1>) {
  ^bb0(%a: f32, %o: i1):
    %c = arith.cmpf ogt, %a, %zero : f32
    linalg.yield %c : i1
  } -> tensor<4x8xi1>
  %e8 = tensor.empty() : tensor<4x8xi8>
  %k = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%m : tensor<4x8xi1>) outs(%e8 : tensor<4x8xi8>) attrs = {fuse.materialize} {
  ^bb0(%a: i1, %o: i8):
    %c = arith.extui %a : i1 to i8
    linalg.yield %c : i8
  } -> tensor<4x8xi8>
  %ef = tensor.empty() : tensor<4x8xf32>
  %r = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%k, %g : tensor<4x8xi8>, tensor<4x8xf32>) outs(%ef : tensor<4x8xf32>) {
  ^bb0(%a: i8, %b: f32, %o: f32):
    %z = arith.constant 0 : i8
    %c = arith.cmpi ne, %a, %z : i8
    %s = arith.select %c, %b, %zero : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}
