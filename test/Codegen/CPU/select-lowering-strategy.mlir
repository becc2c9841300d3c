// RUN: fuse-opt %s --fuse-select-lowering-strategy=vector-bits=512 --split-input-file | FileCheck %s
// RUN: fuse-opt %s --fuse-select-lowering-strategy="vector-bits=512 winograd=true" --split-input-file | FileCheck %s --check-prefix=WINO
// RUN: fuse-opt %s --fuse-select-lowering-strategy=vector-bits=256 --split-input-file | FileCheck %s --check-prefix=AVX2

// With 512-bit vectors an f32 register holds 16 lanes (8 with 256 bits).

// 64 rows have no divisor of 9 to 12: tiles of 12 rows x 2 registers for
// 60 rows, then 4 rows x 4 registers; the vector level is one tile that
// divides the whole product (8 rows). AVX2 has 16 registers, not 32: tiles
// of 6 rows x 2 registers for 60 rows, then 4 rows x 2 registers. B is a
// tall weight (k = 784 >= 4 n): the threads share blocks of the reduction,
// the 4 blocks of 196 rows its weight gradient's update is shared by
// (weight_gradient_rows below), so that each reads the weight rows it
// wrote.
// CHECK-LABEL: func @matmul_bands
// CHECK: linalg.matmul {fuse.lowering_config = #fuse.lowering_config<strategy = matmul_tiles, distribution = [0, 0, 196], cache = [0, 0, 0], registers = [12, 32, 1, 4, 64, 1], vector = [8, 32, 1]>}
// AVX2-LABEL: func @matmul_bands
// AVX2: strategy = matmul_tiles, distribution = [0, 0, 196], cache = [0, 0, 0], registers = [6, 16, 1, 4, 16, 1], vector = [4, 16, 1]>
func.func @matmul_bands(%a: tensor<64x784xf32>, %b: tensor<784x128xf32>) -> tensor<64x128xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x128xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<64x128xf32>) -> tensor<64x128xf32>
  %r = linalg.matmul ins(%a, %b : tensor<64x784xf32>, tensor<784x128xf32>) outs(%f : tensor<64x128xf32>) -> tensor<64x128xf32>
  return %r : tensor<64x128xf32>
}

// -----

// The reduction's blocks depend on k and n only: one example (m = 1) is
// summed in the same blocks as a batch, so its outputs have the same bits
// in any batch (fuse-tile-matmuls runs its blocks in turn: too little work
// for the threads).
// CHECK-LABEL: func @reduction_blocks_any_batch
// CHECK: strategy = matmul_tiles, distribution = [0, 0, 196]
func.func @reduction_blocks_any_batch(%a: tensor<1x784xf32>, %b: tensor<784x128xf32>) -> tensor<1x128xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x128xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x128xf32>) -> tensor<1x128xf32>
  %r = linalg.matmul ins(%a, %b : tensor<1x784xf32>, tensor<784x128xf32>) outs(%f : tensor<1x128xf32>) -> tensor<1x128xf32>
  return %r : tensor<1x128xf32>
}

// -----

// A weight no taller than 4 n (k = 256): blocks of columns, the smallest
// multiple of both bands' tiles that leaves at least two blocks of 256K
// multiply-adds; each output is summed whole by one thread.
// CHECK-LABEL: func @column_blocks
// CHECK: strategy = matmul_tiles, distribution = [0, 64, 0]
// AVX2-LABEL: func @column_blocks
// AVX2: strategy = matmul_tiles, distribution = [0, 16, 0]
func.func @column_blocks(%a: tensor<64x256xf32>, %b: tensor<256x128xf32>) -> tensor<64x128xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x128xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<64x128xf32>) -> tensor<64x128xf32>
  %r = linalg.matmul ins(%a, %b : tensor<64x256xf32>, tensor<256x128xf32>) outs(%f : tensor<64x128xf32>) -> tensor<64x128xf32>
  return %r : tensor<64x128xf32>
}

// -----

// A weight gradient (m = 784 inputs, n = 128 units, k = 64 examples): B is
// smaller than A, so the threads share blocks of rows, each reading its own
// rows of A and writing whole rows of the update's outputs. 8 blocks of 98
// rows would tile their last 2 rows apart; 4 blocks of 196 rows have the
// whole product's bands (16 tiles of 12 rows, then 4 rows). The AVX2 tiles
// (6 rows) band 196 rows as 32 tiles and 4 rows: the same blocks.
// CHECK-LABEL: func @weight_gradient_rows
// CHECK: strategy = matmul_tiles, distribution = [196, 0, 0], cache = [0, 0, 0], registers = [12, 32, 1, 4, 64, 1]
// AVX2-LABEL: func @weight_gradient_rows
// AVX2: strategy = matmul_tiles, distribution = [196, 0, 0], cache = [0, 0, 0], registers = [6, 16, 1, 4, 16, 1]
func.func @weight_gradient_rows(%x: tensor<64x784xf32>, %d: tensor<64x128xf32>) -> tensor<784x128xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<784x128xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<784x128xf32>) -> tensor<784x128xf32>
  %r = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %d : tensor<64x784xf32>, tensor<64x128xf32>) outs(%f : tensor<784x128xf32>) -> tensor<784x128xf32>
  return %r : tensor<784x128xf32>
}

// -----

// bf16 operands summed into f32 on a target with AVX512_BF16: register
// tiles of two reduction steps (a bf16 pair, vdpbf16ps); the same product
// without the feature, or with an odd reduction size, steps one at a time.
// CHECK-LABEL: func @bf16_pairs
// CHECK: strategy = matmul_tiles, distribution = [0, 64, 0], cache = [0, 0, 0], registers = [12, 32, 2, 4, 64, 2], vector = [8, 32, 1]>
// CHECK: strategy = matmul_tiles, {{.*}} registers = [12, 32, 1, 4, 64, 1]
module attributes {fuse.target = {cpu = "cooperlake", features = "+avx512f,+avx512bw,+avx512vl,+avx512bf16", triple = "x86_64-unknown-linux-gnu"}} {
  func.func @bf16_pairs(%a: tensor<64x784xbf16>, %b: tensor<784x128xbf16>, %c: tensor<64x128xf32>,
                        %p: tensor<64x785xbf16>, %q: tensor<785x128xbf16>) -> (tensor<64x128xf32>, tensor<64x128xf32>) {
    %r = linalg.matmul ins(%a, %b : tensor<64x784xbf16>, tensor<784x128xbf16>) outs(%c : tensor<64x128xf32>) -> tensor<64x128xf32>
    %s = linalg.matmul ins(%p, %q : tensor<64x785xbf16>, tensor<785x128xbf16>) outs(%c : tensor<64x128xf32>) -> tensor<64x128xf32>
    return %r, %s : tensor<64x128xf32>, tensor<64x128xf32>
  }
}

// -----

// CHECK-LABEL: func @bf16_no_feature
// CHECK: strategy = matmul_tiles, distribution = [0, 64, 0], cache = [0, 0, 0], registers = [12, 32, 1, 4, 64, 1], vector = [8, 32, 1]>
module attributes {fuse.target = {cpu = "skylake-avx512", features = "+avx512f,+avx512vl,-avx512bf16", triple = "x86_64-unknown-linux-gnu"}} {
  func.func @bf16_no_feature(%a: tensor<64x784xbf16>, %b: tensor<784x128xbf16>, %c: tensor<64x128xf32>) -> tensor<64x128xf32> {
    %r = linalg.matmul ins(%a, %b : tensor<64x784xbf16>, tensor<784x128xbf16>) outs(%c : tensor<64x128xf32>) -> tensor<64x128xf32>
    return %r : tensor<64x128xf32>
  }
}

// -----

// One row against a transposed B: dot products of 16 rows of B per tile,
// one register of k per step. Its fill: 4 registers along the row.
// CHECK-LABEL: func @dot_products
// CHECK: linalg.fill {fuse.lowering_config = #fuse.lowering_config<strategy = elementwise, distribution = [0, 0], cache = [0, 0], registers = [1, 64], vector = [1, 64]>}
// CHECK: strategy = dot_products, distribution = [0, 0, 0], cache = [0, 0, 0], registers = [1, 16, 16], vector = [1, 16, 16]>
func.func @dot_products(%a: tensor<1x128xf32>, %b: tensor<784x128xf32>) -> tensor<1x784xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x784xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x784xf32>) -> tensor<1x784xf32>
  %r = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%a, %b : tensor<1x128xf32>, tensor<784x128xf32>) outs(%f : tensor<1x784xf32>) -> tensor<1x784xf32>
  return %r : tensor<1x784xf32>
}

// -----

// A B larger than half of L2 (1024 x 1024 floats) with enough rows: packed.
// Two NC blocks of 512 columns are too few to share: the threads take 4
// blocks of 256 columns.
// CHECK-LABEL: func @packed
// CHECK: strategy = packed_matmul, distribution = [0, 256, 0], cache = [60, 512, 256], registers = [12, 32, 1], vector = [12, 32, 1]>
func.func @packed(%a: tensor<64x1024xf32>, %b: tensor<1024x1024xf32>, %c: tensor<64x1024xf32>) -> tensor<64x1024xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<64x1024xf32>, tensor<1024x1024xf32>) outs(%c : tensor<64x1024xf32>) -> tensor<64x1024xf32>
  return %r : tensor<64x1024xf32>
}

// -----

// CHECK-LABEL: func @batch_matmul
// CHECK: strategy = batch_matmul_tiles, distribution = [0, 0, 0, 0], cache = [0, 0, 0, 0], registers = [1, 8, 32, 1], vector = [1, 8, 32, 1]>
func.func @batch_matmul(%a: tensor<4x16x64xf32>, %b: tensor<4x64x64xf32>, %c: tensor<4x16x64xf32>) -> tensor<4x16x64xf32> {
  %r = linalg.batch_matmul ins(%a, %b : tensor<4x16x64xf32>, tensor<4x64x64xf32>) outs(%c : tensor<4x16x64xf32>) -> tensor<4x16x64xf32>
  return %r : tensor<4x16x64xf32>
}

// -----

// A 3x3 convolution with whole registers of channels and filters: direct
// tiles of 8 columns x 2 registers of filters, or Winograd (its levels are
// its own) with the option.
// CHECK-LABEL: func @conv
// CHECK: strategy = direct_conv, distribution = [1, 0, 0, 0, 0, 0, 0], cache = [0, 0, 0, 0, 0, 0, 0], registers = [1, 1, 8, 32, 1, 1, 1], vector = [1, 1, 8, 32, 1, 1, 1]>
// WINO-LABEL: func @conv
// WINO: strategy = winograd_conv, distribution = [0, 0, 0, 0, 0, 0, 0], cache = [0, 0, 0, 0, 0, 0, 0], registers = [0, 0, 0, 0, 0, 0, 0], vector = [0, 0, 0, 0, 0, 0, 0]>
func.func @conv(%x: tensor<2x26x26x32xf32>, %k: tensor<3x3x32x32xf32>, %c: tensor<2x24x24x32xf32>) -> tensor<2x24x24x32xf32> {
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%x, %k : tensor<2x26x26x32xf32>, tensor<3x3x32x32xf32>) outs(%c : tensor<2x24x24x32xf32>) -> tensor<2x24x24x32xf32>
  return %r : tensor<2x24x24x32xf32>
}

// -----

// A transpose that moves the innermost dim: square blocks of 16 lanes.
// CHECK-LABEL: func @transpose
// CHECK: strategy = transpose, distribution = [0, 0], cache = [0, 0], registers = [16, 16], vector = [16, 16]>
func.func @transpose(%x: tensor<64x128xf32>) -> tensor<128x64xf32> {
  %e = tensor.empty() : tensor<128x64xf32>
  %r = linalg.transpose ins(%x : tensor<64x128xf32>) outs(%e : tensor<128x64xf32>) permutation = [1, 0]
  return %r : tensor<128x64xf32>
}

// -----

// A config written by hand is kept; a dynamic op gets none.
// CHECK-LABEL: func @kept
// CHECK: linalg.fill {fuse.lowering_config = #fuse.lowering_config<strategy = elementwise, distribution = [0], cache = [0], registers = [8], vector = [8]>}
// CHECK: linalg.fill ins
// CHECK-NOT: lowering_config
func.func @kept(%n: index) -> (tensor<100xf32>, tensor<?xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<100xf32>
  %f = linalg.fill {fuse.lowering_config = #fuse.lowering_config<strategy = elementwise, distribution = [0], cache = [0], registers = [8], vector = [8]>}
      ins(%zero : f32) outs(%e : tensor<100xf32>) -> tensor<100xf32>
  %d = tensor.empty(%n) : tensor<?xf32>
  %g = linalg.fill ins(%zero : f32) outs(%d : tensor<?xf32>) -> tensor<?xf32>
  return %f, %g : tensor<100xf32>, tensor<?xf32>
}

// -----

// 26 columns: a band of whole 8-column tiles (one image each), then the 2
// columns left in tiles of both images; the vector level is one tile that
// divides the whole output (2 columns, 2 images). Not distributed: a block
// of images must hold whole tiles of both bands, here both images.
// CHECK-LABEL: func @conv_bands
// CHECK: strategy = direct_conv, distribution = [0, 0, 0, 0, 0, 0, 0], cache = [0, 0, 0, 0, 0, 0, 0], registers = [1, 1, 8, 32, 1, 1, 1, 2, 1, 2, 32, 1, 1, 1], vector = [2, 1, 2, 32, 1, 1, 1]>
func.func @conv_bands(%x: tensor<2x28x28x8xf32>, %k: tensor<3x3x8x32xf32>, %c: tensor<2x26x26x32xf32>) -> tensor<2x26x26x32xf32> {
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%x, %k : tensor<2x28x28x8xf32>, tensor<3x3x8x32xf32>) outs(%c : tensor<2x26x26x32xf32>) -> tensor<2x26x26x32xf32>
  return %r : tensor<2x26x26x32xf32>
}

// -----

// Element-wise ops and reductions of 32K output elements or more are
// distributed: their outermost parallel loop in the most tiles of at least
// 16K elements that divide it (256 rows of 1024: tiles of 16 rows), never a
// reduction loop. Smaller ones stay on one thread.
// CHECK-LABEL: func @distributed
// CHECK: linalg.generic
// CHECK-SAME: #fuse.lowering_config<strategy = elementwise, distribution = [16, 0], cache = [0, 0], registers = [1, 64], vector = [1, 64]>
// CHECK: linalg.generic
// CHECK-SAME: #fuse.lowering_config<strategy = elementwise, distribution = [0, 0], cache = [0, 0], registers = [1, 64], vector = [1, 64]>
// CHECK: linalg.generic
// CHECK-SAME: iterator_types = ["reduction", "parallel"]
// CHECK-SAME: #fuse.lowering_config<strategy = elementwise, distribution = [0, 0],
func.func @distributed(%x: tensor<256x1024xf32>, %small: tensor<64x128xf32>, %col: tensor<1024xf32>)
    -> (tensor<256x1024xf32>, tensor<64x128xf32>, tensor<1024xf32>) {
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<256x1024xf32>) outs(%x : tensor<256x1024xf32>) {
  ^bb0(%in: f32, %out: f32):
    %e = math.exp %in : f32
    linalg.yield %e : f32
  } -> tensor<256x1024xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%small : tensor<64x128xf32>) outs(%small : tensor<64x128xf32>) {
  ^bb0(%in: f32, %out: f32):
    %e = math.exp %in : f32
    linalg.yield %e : f32
  } -> tensor<64x128xf32>
  // Column sums: 1024 outputs, too few to split (the reduction never is).
  %c = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>],
                       iterator_types = ["reduction", "parallel"]}
      ins(%x : tensor<256x1024xf32>) outs(%col : tensor<1024xf32>) {
  ^bb0(%in: f32, %out: f32):
    %a = arith.addf %in, %out : f32
    linalg.yield %a : f32
  } -> tensor<1024xf32>
  return %r, %s, %c : tensor<256x1024xf32>, tensor<64x128xf32>, tensor<1024xf32>
}

// -----

// A filter gradient's contraction (kh, kw, c, f | n, oh, ow): per image and
// tap, register tiles of 8 channels x 2 registers of filters. (8 channels
// are not a whole register: not Winograd, even with the option.) The
// threads share groups of 2 images (295K multiply-adds each), each summed
// into a partial of its own: a tile on the reduction loop n.
// CHECK-LABEL: func @filter_gradient
// CHECK: strategy = filter_gradient, distribution = [0, 0, 0, 0, 2, 0, 0], cache = [0, 0, 0, 0, 0, 0, 0], registers = [1, 1, 8, 32, 1, 1, 1], vector = [1, 1, 8, 32, 1, 1, 1]>
// WINO-LABEL: func @filter_gradient
// WINO: strategy = filter_gradient, {{.*}}, registers = [1, 1, 8, 32, 1, 1, 1]
#fgX = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d0 + d5, d1 + d6, d2)>
#fgY = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d5, d6, d3)>
#fgW = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>
func.func @filter_gradient(%x: tensor<4x10x10x8xf32>, %dy: tensor<4x8x8x32xf32>, %w: tensor<3x3x8x32xf32>) -> tensor<3x3x8x32xf32> {
  %r = linalg.generic {indexing_maps = [#fgX, #fgY, #fgW], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %dy : tensor<4x10x10x8xf32>, tensor<4x8x8x32xf32>) outs(%w : tensor<3x3x8x32xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %p = arith.mulf %in, %in_0 : f32
    %s = arith.addf %out, %p : f32
    linalg.yield %s : f32
  } -> tensor<3x3x8x32xf32>
  return %r : tensor<3x3x8x32xf32>
}

// -----

// The CNN's second filter gradient at batch 64 (32 channels and filters,
// 24x24 outputs). Direct: 8 groups of 8 images (5.3M multiply-adds an
// image, 9K-element partials). Winograd (F(4x4, 3x3): 36 positions, 144
// output tiles): 8 groups of 8 images too, weighed by its own work (36 x
// 36 tile products of 32 x 32, 1.3M multiply-adds an image) and partials
// (P, 36 x 32 x 32 elements).
// CHECK-LABEL: func @filter_gradient_cnn
// CHECK: strategy = filter_gradient, distribution = [0, 0, 0, 0, 8, 0, 0]
// WINO-LABEL: func @filter_gradient_cnn
// WINO: strategy = winograd_filter_gradient, distribution = [0, 0, 0, 0, 8, 0, 0], cache = [0, 0, 0, 0, 0, 0, 0], registers = [0, 0, 0, 0, 0, 0, 0], vector = [0, 0, 0, 0, 0, 0, 0]>
#fgXc = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d0 + d5, d1 + d6, d2)>
#fgYc = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d5, d6, d3)>
#fgWc = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>
func.func @filter_gradient_cnn(%x: tensor<64x26x26x32xf32>, %dy: tensor<64x24x24x32xf32>, %w: tensor<3x3x32x32xf32>) -> tensor<3x3x32x32xf32> {
  %r = linalg.generic {indexing_maps = [#fgXc, #fgYc, #fgWc], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %dy : tensor<64x26x26x32xf32>, tensor<64x24x24x32xf32>) outs(%w : tensor<3x3x32x32xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %p = arith.mulf %in, %in_0 : f32
    %s = arith.addf %out, %p : f32
    linalg.yield %s : f32
  } -> tensor<3x3x32x32xf32>
  return %r : tensor<3x3x32x32xf32>
}

// -----

// Four 8x8 images of 16 channels and 32 filters: one image of the direct
// filter gradient (295K multiply-adds) is worth a group of its own, but
// Winograd's is not (4 output tiles x 36 positions x 16 x 32: 74K
// multiply-adds, fewer than 64 a partial's element), nor are two: it stays
// on one thread.
// CHECK-LABEL: func @filter_gradient_small
// CHECK: strategy = filter_gradient, distribution = [0, 0, 0, 0, 1, 0, 0]
// WINO-LABEL: func @filter_gradient_small
// WINO: strategy = winograd_filter_gradient, distribution = [0, 0, 0, 0, 0, 0, 0]
#fgXs = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d0 + d5, d1 + d6, d2)>
#fgYs = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d5, d6, d3)>
#fgWs = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>
func.func @filter_gradient_small(%x: tensor<4x10x10x16xf32>, %dy: tensor<4x8x8x32xf32>, %w: tensor<3x3x16x32xf32>) -> tensor<3x3x16x32xf32> {
  %r = linalg.generic {indexing_maps = [#fgXs, #fgYs, #fgWs], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %dy : tensor<4x10x10x16xf32>, tensor<4x8x8x32xf32>) outs(%w : tensor<3x3x16x32xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %p = arith.mulf %in, %in_0 : f32
    %s = arith.addf %out, %p : f32
    linalg.yield %s : f32
  } -> tensor<3x3x16x32xf32>
  return %r : tensor<3x3x16x32xf32>
}

// -----

// A max pool of 64 images is distributed like an element-wise op: its
// outermost parallel loop (images) in tiles of at least 16K outputs, 4
// images of 12x12x32; its window loops never.
// CHECK-LABEL: func @pool_distributed
// CHECK: linalg.pooling_nhwc_max
// CHECK-SAME: #fuse.lowering_config<strategy = pool, distribution = [4, 0, 0, 0, 0, 0],
func.func @pool_distributed(%x: tensor<64x24x24x32xf32>, %w: tensor<2x2xf32>, %out: tensor<64x12x12x32xf32>) -> tensor<64x12x12x32xf32> {
  %r = linalg.pooling_nhwc_max {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>}
      ins(%x, %w : tensor<64x24x24x32xf32>, tensor<2x2xf32>) outs(%out : tensor<64x12x12x32xf32>) -> tensor<64x12x12x32xf32>
  return %r : tensor<64x12x12x32xf32>
}

// -----

// One image: its convolution and filter gradient stay on one thread (a
// filter gradient's batch is not split in fewer than two groups).
// CHECK-LABEL: func @one_image
// CHECK: strategy = direct_conv, distribution = [0, 0, 0, 0, 0, 0, 0]
// CHECK: strategy = filter_gradient, distribution = [0, 0, 0, 0, 0, 0, 0]
#fgX1 = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d0 + d5, d1 + d6, d2)>
#fgY1 = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d5, d6, d3)>
#fgW1 = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>
func.func @one_image(%x: tensor<1x26x26x32xf32>, %k: tensor<3x3x32x32xf32>, %c: tensor<1x24x24x32xf32>) -> (tensor<1x24x24x32xf32>, tensor<3x3x32x32xf32>) {
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%x, %k : tensor<1x26x26x32xf32>, tensor<3x3x32x32xf32>) outs(%c : tensor<1x24x24x32xf32>) -> tensor<1x24x24x32xf32>
  %g = linalg.generic {indexing_maps = [#fgX1, #fgY1, #fgW1], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %c : tensor<1x26x26x32xf32>, tensor<1x24x24x32xf32>) outs(%k : tensor<3x3x32x32xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %p = arith.mulf %in, %in_0 : f32
    %s = arith.addf %out, %p : f32
    linalg.yield %s : f32
  } -> tensor<3x3x32x32xf32>
  return %r, %g : tensor<1x24x24x32xf32>, tensor<3x3x32x32xf32>
}

// -----

// An optimizer's update (fuse.optimizer_update) is distributed in chunks of
// at most 4096 elements, the largest that divide it and start on a cache
// line (16 f32): 25 chunks of 4000 elements, 5 of 2000 (not 4 of 2500,
// which would start mid-line), 28 chunks of 28 rows x 128; a size with no
// such divisor near 4096 (4099, a prime) stays whole, as does an update of
// one chunk.
// CHECK-LABEL: func @update_chunks
// CHECK: linalg.generic
// CHECK-SAME: fuse.lowering_config = #fuse.lowering_config<strategy = elementwise, distribution = [4000],
// CHECK: linalg.generic
// CHECK-SAME: fuse.lowering_config = #fuse.lowering_config<strategy = elementwise, distribution = [2000],
// CHECK: linalg.generic
// CHECK-SAME: fuse.lowering_config = #fuse.lowering_config<strategy = elementwise, distribution = [28, 0],
// CHECK: linalg.generic
// CHECK-SAME: fuse.lowering_config = #fuse.lowering_config<strategy = elementwise, distribution = [0],
// CHECK: linalg.generic
// CHECK-SAME: fuse.lowering_config = #fuse.lowering_config<strategy = elementwise, distribution = [0, 0],
#id1 = affine_map<(i) -> (i)>
#id2 = affine_map<(i, j) -> (i, j)>
func.func @update_chunks(%g0: tensor<100000xf32>, %p0: tensor<100000xf32>, %g4: tensor<10000xf32>, %p4: tensor<10000xf32>, %g1: tensor<784x128xf32>, %p1: tensor<784x128xf32>, %g2: tensor<4099xf32>, %p2: tensor<4099xf32>, %g3: tensor<10x3xf32>, %p3: tensor<10x3xf32>) -> (tensor<100000xf32>, tensor<10000xf32>, tensor<784x128xf32>, tensor<4099xf32>, tensor<10x3xf32>) {
  %r0 = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]} ins(%g0 : tensor<100000xf32>) outs(%p0 : tensor<100000xf32>) attrs = {fuse.optimizer_update} {
  ^bb0(%g: f32, %p: f32):
    %n = arith.subf %p, %g : f32
    linalg.yield %n : f32
  } -> tensor<100000xf32>
  %r4 = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]} ins(%g4 : tensor<10000xf32>) outs(%p4 : tensor<10000xf32>) attrs = {fuse.optimizer_update} {
  ^bb0(%g: f32, %p: f32):
    %n = arith.subf %p, %g : f32
    linalg.yield %n : f32
  } -> tensor<10000xf32>
  %r1 = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%g1 : tensor<784x128xf32>) outs(%p1 : tensor<784x128xf32>) attrs = {fuse.optimizer_update} {
  ^bb0(%g: f32, %p: f32):
    %n = arith.subf %p, %g : f32
    linalg.yield %n : f32
  } -> tensor<784x128xf32>
  %r2 = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]} ins(%g2 : tensor<4099xf32>) outs(%p2 : tensor<4099xf32>) attrs = {fuse.optimizer_update} {
  ^bb0(%g: f32, %p: f32):
    %n = arith.subf %p, %g : f32
    linalg.yield %n : f32
  } -> tensor<4099xf32>
  %r3 = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%g3 : tensor<10x3xf32>) outs(%p3 : tensor<10x3xf32>) attrs = {fuse.optimizer_update} {
  ^bb0(%g: f32, %p: f32):
    %n = arith.subf %p, %g : f32
    linalg.yield %n : f32
  } -> tensor<10x3xf32>
  return %r0, %r4, %r1, %r2, %r3 : tensor<100000xf32>, tensor<10000xf32>, tensor<784x128xf32>, tensor<4099xf32>, tensor<10x3xf32>
}

// -----

// Tall packed products (a transformer's gradients, 2,048 tokens): the
// threads share blocks of rows of at least 4 panels, 4 or more of them,
// MC each, so that B is packed once for all and A once in all. Too few
// rows for that (M = 128): blocks of columns.
// CHECK-LABEL: func @packed_rows
// CHECK: strategy = packed_matmul, distribution = [408, 0, 0], cache = [408, 128, 256], registers = [12, 32, 1], vector = [12, 32, 1]>
// CHECK: strategy = packed_matmul, distribution = [84, 0, 0], cache = [84, 128, 256], registers = [12, 32, 1], vector = [12, 32, 1]>
// CHECK: strategy = packed_matmul, distribution = [0, 128, 0], cache = [120, 512, 256], registers = [12, 32, 1], vector = [12, 32, 1]>
// AVX2-LABEL: func @packed_rows
// AVX2: strategy = packed_matmul, distribution = [186, 0, 0], cache = [186, 128, 256], registers = [6, 16, 1], vector = [6, 16, 1]>
// AVX2: strategy = packed_matmul, distribution = [102, 0, 0], cache = [102, 128, 256], registers = [6, 16, 1], vector = [6, 16, 1]>
// AVX2: strategy = packed_matmul, distribution = [0, 128, 0], cache = [126, 512, 256], registers = [6, 16, 1], vector = [6, 16, 1]>
func.func @packed_rows(%a: tensor<2048x512xf32>, %b: tensor<128x512xf32>, %c: tensor<2048x128xf32>, %x: tensor<2048x128xf32>, %d: tensor<2048x512xf32>) -> (tensor<2048x128xf32>, tensor<512x128xf32>, tensor<128x512xf32>) {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<2048x128xf32>
  %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<2048x128xf32>) -> tensor<2048x128xf32>
  %dx = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%a, %b : tensor<2048x512xf32>, tensor<128x512xf32>) outs(%f0 : tensor<2048x128xf32>) -> tensor<2048x128xf32>
  %e1 = tensor.empty() : tensor<512x128xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<512x128xf32>) -> tensor<512x128xf32>
  %dw = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%a, %c : tensor<2048x512xf32>, tensor<2048x128xf32>) outs(%f1 : tensor<512x128xf32>) -> tensor<512x128xf32>
  %e2 = tensor.empty() : tensor<128x512xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<128x512xf32>) -> tensor<128x512xf32>
  %dw1 = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %d : tensor<2048x128xf32>, tensor<2048x512xf32>) outs(%f2 : tensor<128x512xf32>) -> tensor<128x512xf32>
  return %dx, %dw, %dw1 : tensor<2048x128xf32>, tensor<512x128xf32>, tensor<128x512xf32>
}
