// RUN: fuse-opt %s --fuse-lower-to-linalg --split-input-file | FileCheck %s

// convert-fuse-to-linalg, then element-wise fusion, canonicalize and CSE:
// contractions stay named linalg ops and each chain of element-wise work
// becomes a single linalg.generic.

// A dense layer: matmul, then bias add and relu fused into one generic that
// reads the matmul result and the bias (broadcast by its map) once.
// CHECK-DAG: #[[$ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[$ROW:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func @dense
// CHECK-SAME: (%[[X:[^:]*]]: tensor<8x16xf32>, %[[W:[^:]*]]: tensor<16x4xf32>, %[[B:[^:]*]]: tensor<4xf32>) -> tensor<8x4xf32>
// CHECK: %[[ACC:.*]] = linalg.fill
// CHECK: %[[MM:.*]] = linalg.matmul ins(%[[X]], %[[W]] : tensor<8x16xf32>, tensor<16x4xf32>) outs(%[[ACC]] : tensor<8x4xf32>)
// CHECK: %[[R:.*]] = linalg.generic {indexing_maps = [#[[$ID]], #[[$ROW]], #[[$ID]]], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME: ins(%[[MM]], %[[B]] : tensor<8x4xf32>, tensor<4xf32>)
// CHECK: arith.addf
// CHECK-NEXT: arith.maximumf
// CHECK-NEXT: linalg.yield
// CHECK-NOT: linalg.generic
// CHECK: return %[[R]]
func.func @dense(%x: tensor<8x16xf32>, %w: tensor<16x4xf32>, %b: tensor<4xf32>) -> tensor<8x4xf32> {
  %h = fuse.matmul %x, %w : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  %hb = fuse.add %h, %b : (tensor<8x4xf32>, tensor<4xf32>) -> tensor<8x4xf32>
  %a = fuse.relu %hb : tensor<8x4xf32>
  return %a : tensor<8x4xf32>
}

// -----

// Element-wise work feeding a reduction fuses into it: |p - t| is summed in
// the same loop nest, then divided by the element count.
// CHECK-LABEL: func @mean_abs_error
// CHECK-SAME: (%[[P:[^:]*]]: tensor<4x3xf32>, %[[T:[^:]*]]: tensor<4x3xf32>) -> tensor<f32>
// CHECK-DAG: %[[COUNT:.*]] = arith.constant 1.200000e+01 : f32
// CHECK: %[[SUM:.*]] = linalg.generic
// CHECK-SAME: iterator_types = ["reduction", "reduction"]
// CHECK-SAME: ins(%[[P]], %[[T]] : tensor<4x3xf32>, tensor<4x3xf32>)
// CHECK: arith.subf
// CHECK-NEXT: math.absf
// CHECK-NEXT: arith.addf
// CHECK: %[[MEAN:.*]] = linalg.generic
// CHECK-SAME: ins(%[[SUM]] : tensor<f32>)
// CHECK: arith.divf %{{.*}}, %[[COUNT]] : f32
// CHECK: return %[[MEAN]]
func.func @mean_abs_error(%p: tensor<4x3xf32>, %t: tensor<4x3xf32>) -> tensor<f32> {
  %d = fuse.sub %p, %t : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  %a = fuse.abs %d : tensor<4x3xf32>
  %m = fuse.reduce_mean %a {axes = array<i64: 0, 1>} : (tensor<4x3xf32>) -> tensor<f32>
  return %m : tensor<f32>
}

// -----

// Conv + bias + relu + pool: the padded convolution and the pool stay named,
// bias and relu are one generic between them. CSE shares the constants.
// CHECK-LABEL: func @conv_block
// CHECK-DAG: %[[NEG_INF:.*]] = arith.constant 0xFF800000 : f32
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[P:.*]] = tensor.pad %{{.*}} low[0, 1, 1, 0] high[0, 1, 1, 0]
// CHECK: tensor.yield %[[ZERO]]
// CHECK: %[[C:.*]] = linalg.conv_2d_nhwc_hwcf
// CHECK-SAME: ins(%[[P]], %{{.*}} : tensor<1x10x10x1xf32>, tensor<3x3x1x2xf32>)
// CHECK: %[[R:.*]] = linalg.generic
// CHECK-SAME: ins(%[[C]], %{{.*}} : tensor<1x8x8x2xf32>, tensor<2xf32>)
// CHECK: arith.addf
// CHECK-NEXT: arith.maximumf
// CHECK: linalg.fill ins(%[[NEG_INF]] : f32)
// CHECK: %[[POOL:.*]] = linalg.pooling_nhwc_max
// CHECK-SAME: ins(%[[R]], %{{.*}} : tensor<1x8x8x2xf32>, tensor<2x2xf32>)
// CHECK: return %[[POOL]]
func.func @conv_block(%x: tensor<1x8x8x1xf32>, %k: tensor<3x3x1x2xf32>, %b: tensor<2xf32>) -> tensor<1x4x4x2xf32> {
  %c = fuse.conv2d %x, %k {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x8x8x1xf32>, tensor<3x3x1x2xf32>) -> tensor<1x8x8x2xf32>
  %cb = fuse.add %c, %b : (tensor<1x8x8x2xf32>, tensor<2xf32>) -> tensor<1x8x8x2xf32>
  %r = fuse.relu %cb : tensor<1x8x8x2xf32>
  %p = fuse.max_pool2d %r {window = array<i64: 2, 2>} : (tensor<1x8x8x2xf32>) -> tensor<1x4x4x2xf32>
  return %p : tensor<1x4x4x2xf32>
}

// -----

// Dropout feeding softmax cross-entropy: the dropout generic has three users
// (row max, exp-sum, label pick) and is computed once; four reductions and a
// final division follow. Nothing of the fuse dialect is left.
// CHECK-LABEL: func @dropout_loss
// CHECK-NOT: fuse.
// CHECK: %[[D:.*]] = linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "parallel"]
// CHECK: linalg.index 0
// CHECK: arith.select
// CHECK: linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "reduction"]
// CHECK-SAME: ins(%[[D]] : tensor<8x10xf32>)
// CHECK: arith.maximumf
// CHECK: linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "reduction"]
// CHECK: math.exp
// CHECK: linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "reduction"]
// CHECK-SAME: ins(%[[D]], %{{.*}} : tensor<8x10xf32>, tensor<8xi32>)
// CHECK: linalg.index 1
// CHECK: linalg.generic
// CHECK-SAME: iterator_types = ["reduction"]
// CHECK: math.log
// CHECK: linalg.generic
// CHECK-SAME: iterator_types = []
// CHECK: arith.divf
// CHECK-NOT: fuse.
// CHECK: return %{{.*}} : tensor<f32>
func.func @dropout_loss(%x: tensor<8x10xf32>, %y: tensor<8xi32>, %step: tensor<i64>) -> tensor<f32> {
  %d = fuse.dropout %x, %step {rate = 0.2 : f32, seed = 7 : i64} : tensor<8x10xf32>
  %l = fuse.softmax_cross_entropy %d, %y : (tensor<8x10xf32>, tensor<8xi32>) -> tensor<f32>
  return %l : tensor<f32>
}
