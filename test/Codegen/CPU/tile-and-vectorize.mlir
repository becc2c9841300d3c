// RUN: fuse-opt %s --fuse-tile-and-vectorize="vector-bits=512 winograd=true" --split-input-file | FileCheck %s
// RUN: fuse-opt %s --fuse-tile-and-vectorize="vector-bits=512 winograd=true" --split-input-file | FileCheck %s --check-prefix=GLOBAL
// RUN: fuse-opt %s --fuse-tile-and-vectorize=vector-bits=512 --split-input-file | FileCheck %s --check-prefix=NOWINO

// Whatever the op, no vector.mask region survives the pass (masks are folded
// into the transfers), and no named contraction, convolution or pool is left
// on tensors. (The i1 case at the end keeps a scalar linalg.generic.)
// GLOBAL-NOT: {{vector\.mask[^a-z_]}}
// GLOBAL-NOT: linalg.matmul
// GLOBAL-NOT: linalg.conv
// GLOBAL-NOT: linalg.pooling
// GLOBAL-NOT: linalg.fill

// Inputs are `fuse-opt --fuse-lower-to-linalg` output of small fuse
// functions (the fuse op is in the comment above each case). With 512-bit
// vectors an f32 register holds 16 lanes.

// fuse.matmul (48x256) x (256x128), a right-hand side small
// enough for L2 (not packed): tiles of 12 rows x 32 columns (two
// registers, the micro-kernel), each zeroed in place of the fill of the whole output, then
// one vector.contract per step of the reduction, of a 12x1 column of the
// lhs and a 1x32 row of the rhs into the 12x32 accumulator tile.
// CHECK-LABEL: func @matmul
// CHECK-SAME: (%[[A:[^:]*]]: tensor<48x256xf32>, %[[B:[^:]*]]: tensor<256x128xf32>)
// CHECK-DAG: %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : vector<12x32xf32>
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[C12:.*]] = arith.constant 12 : index
// CHECK-DAG: %[[C32:.*]] = arith.constant 32 : index
// CHECK-DAG: %[[C48:.*]] = arith.constant 48 : index
// CHECK-DAG: %[[C128:.*]] = arith.constant 128 : index
// CHECK-DAG: %[[C256:.*]] = arith.constant 256 : index
// CHECK-NOT: linalg.fill
// CHECK: scf.for %[[I:[^ ]+]] = %{{.*}} to %[[C48]] step %[[C12]]
// CHECK: scf.for %[[J:[^ ]+]] = %{{.*}} to %[[C128]] step %[[C32]] iter_args(%[[OUT:[^ ]+]] =
// CHECK: %[[TILE:.*]] = tensor.extract_slice %[[OUT]][%[[I]], %[[J]]] [12, 32]
// CHECK: %[[ZEROED:.*]] = vector.transfer_write %[[ZERO]], %[[TILE]]
// CHECK: scf.for %[[K:[^ ]+]] = %{{.*}} to %[[C256]] step %[[C1]] iter_args(%[[ACC:[^ ]+]] = %[[ZEROED]]) -> (tensor<12x32xf32>)
// CHECK-DAG: %[[LHS:.*]] = vector.transfer_read %[[A]][%[[I]], %[[K]]]{{.*}} : tensor<48x256xf32>, vector<12x1xf32>
// CHECK-DAG: vector.transfer_read %[[B]][%[[K]], %[[J]]]{{.*}} : tensor<256x128xf32>, vector<{{(1x)?}}32xf32>
// CHECK-DAG: %[[C:.*]] = vector.transfer_read %[[ACC]]{{.*}} : tensor<12x32xf32>, vector<12x32xf32>
// CHECK: %[[R:.*]] = vector.contract {{{.*}}iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>} %[[LHS]], %{{.*}}, %[[C]] : vector<12x1xf32>, vector<1x32xf32> into vector<12x32xf32>
// CHECK: %[[W:.*]] = vector.transfer_write %[[R]], %[[ACC]]{{.*}} : vector<12x32xf32>, tensor<12x32xf32>
// CHECK: scf.yield %[[W]]
// CHECK: tensor.insert_slice
// CHECK-NOT: linalg.
// CHECK: return
func.func @matmul(%arg0: tensor<48x256xf32>, %arg1: tensor<256x128xf32>) -> tensor<48x128xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<48x128xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<48x128xf32>) -> tensor<48x128xf32>
  %2 = linalg.matmul ins(%arg0, %arg1 : tensor<48x256xf32>, tensor<256x128xf32>) outs(%1 : tensor<48x128xf32>) -> tensor<48x128xf32>
  return %2 : tensor<48x128xf32>
}

// -----

// fuse.matmul (240x784) x (784x256): the right-hand side (784 KiB) does not
// fit in half of L2, so the product is cache-blocked. For each block of 112
// steps of the reduction (the largest multiple of 16 under 256 dividing
// 784), the block of B is packed into [8][112][32] panels of two registers
// (B's pack reads its block row by row, writing a row's 8 panels in turn);
// the threads then share 4 blocks of 60 rows (one MC block each), each
// packing its rows of A into [5][112][12] k-major panels of the
// micro-kernel's 12 rows; then each 12x32 accumulator tile runs the 112
// steps, one vector.contract of a packed 12-float row of A and a packed
// 32-float row of B per step. A's panel is the outer loop (it stays in L1),
// B's panels the inner (they stream from L2).
// CHECK-LABEL: func @matmul_blocked
// CHECK-DAG: %[[C112:.*]] = arith.constant 112 : index
// CHECK-DAG: %[[C784:.*]] = arith.constant 784 : index
// CHECK-DAG: %[[C5:.*]] = arith.constant 5 : index
// CHECK-DAG: %[[C8:.*]] = arith.constant 8 : index
// CHECK: scf.for %[[K0:[^ ]+]] = %{{.*}} to %[[C784]] step %[[C112]]
// CHECK: tensor.expand_shape {{.*}} : tensor<112x256xf32> into tensor<112x8x32xf32>
// CHECK: tensor.empty() : tensor<8x112x32xf32>
// CHECK: scf.for %[[ROW:[^ ]+]] = %{{.*}} to %[[C112]]
// CHECK: scf.for %[[PANEL:[^ ]+]] = %{{.*}} to %[[C8]]
// CHECK: vector.transfer_read %{{.*}}[%[[ROW]], %[[PANEL]], %{{.*}}]
// CHECK: vector.transfer_write {{.*}}[%[[PANEL]], %[[ROW]], %{{.*}}] {{.*}} : vector<32xf32>, tensor<8x112x32xf32>
// CHECK: scf.forall (%{{.*}}) = (0) to (240) step (60)
// CHECK: tensor.expand_shape {{.*}} : tensor<60x112xf32> into tensor<5x12x112xf32>
// CHECK: tensor.empty() : tensor<5x112x12xf32>
// CHECK: vector.transfer_write {{.*}} : vector<16x12xf32>, tensor<5x112x12xf32>
// CHECK: scf.for %{{.*}} to %[[C5]] step
// CHECK: scf.for %{{.*}} to %[[C8]] step
// CHECK: scf.for {{.*}} -> (tensor<12x32xf32>)
// CHECK: vector.contract {{.*}} : vector<1x12xf32>, vector<1x32xf32> into vector<12x32xf32>
// CHECK: scf.forall.in_parallel
// CHECK-NOT: linalg.
// CHECK: return
func.func @matmul_blocked(%arg0: tensor<240x784xf32>, %arg1: tensor<784x256xf32>) -> tensor<240x256xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<240x256xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<240x256xf32>) -> tensor<240x256xf32>
  %2 = linalg.matmul ins(%arg0, %arg1 : tensor<240x784xf32>, tensor<784x256xf32>) outs(%1 : tensor<240x256xf32>) -> tensor<240x256xf32>
  return %2 : tensor<240x256xf32>
}

// -----

// fuse.matmul (13x100) x (40x100)^T: a transposed right-hand side is always
// packed (transposed into panels by the pack); its 40 columns are one panel
// of 32 and an edge product of the last 8, and its 13 rows one panel of 12
// and a row left over. The leftover row is multiplied, unpacked, with the
// same packed panel of B (B is packed once); the 8 columns' edge is a
// product on slices, tiled as usual after a whole transpose of its B. The
// 100 steps are one block of the reduction, so each 12x32 tile of C starts
// from zeros in registers instead of C being zeroed in memory first.
#mapA = affine_map<(d0, d1, d2) -> (d0, d2)>
#mapB = affine_map<(d0, d1, d2) -> (d1, d2)>
#mapC = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func @matmul_transposed_rhs_edges
// CHECK: tensor.empty() : tensor<1x100x32xf32>
// CHECK: tensor.empty() : tensor<1x100x12xf32>
// CHECK: vector.transfer_write %{{.*}} : vector<12x32xf32>, tensor<12x32xf32>
// CHECK-NEXT: scf.for {{.*}} -> (tensor<12x32xf32>)
// CHECK: vector.contract {{.*}} : vector<1x12xf32>, vector<1x32xf32> into vector<12x32xf32>
// CHECK-NOT: tensor.empty() : tensor<1x100x32xf32>
// CHECK: vector.contract {{.*}} : vector<1xf32>, vector<1x32xf32> into vector<32xf32>
// CHECK: tensor.empty() : tensor<100x8xf32>
// CHECK: vector.contract {{.*}} : vector<1xf32>, vector<1x8xf32> into vector<8xf32>
// CHECK-NOT: linalg.
// CHECK: return
func.func @matmul_transposed_rhs_edges(%arg0: tensor<13x100xf32>, %arg1: tensor<40x100xf32>) -> tensor<13x40xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<13x40xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<13x40xf32>) -> tensor<13x40xf32>
  %2 = linalg.matmul indexing_maps = [#mapA, #mapB, #mapC] ins(%arg0, %arg1 : tensor<13x100xf32>, tensor<40x100xf32>) outs(%1 : tensor<13x40xf32>) -> tensor<13x40xf32>
  return %2 : tensor<13x40xf32>
}

// -----

// fuse.matmul (1x128) x (784x128)^T, the input gradient of a batch of 1:
// no packing of B, whose transpose would cost as much as the product.
// Instead, per tile of 16 rows of B, a register of partial sums per output
// takes one FMA per register of k, from rows of A and B read as stored;
// then the partial sums are transposed in registers, and 16 vector adds sum
// their lanes.
#mapA = affine_map<(d0, d1, d2) -> (d0, d2)>
#mapB = affine_map<(d0, d1, d2) -> (d1, d2)>
#mapC = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func @matmul_dot_products
// CHECK-SAME: (%[[A:[^:]*]]: tensor<1x128xf32>, %[[B:[^:]*]]: tensor<784x128xf32>)
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[C16:.*]] = arith.constant 16 : index
// CHECK-DAG: %[[C128:.*]] = arith.constant 128 : index
// CHECK-DAG: %[[C784:.*]] = arith.constant 784 : index
// CHECK: scf.for %[[N:[^ ]+]] = %{{.*}} to %[[C784]] step %[[C16]]
// CHECK: scf.for %[[K:[^ ]+]] = %{{.*}} to %[[C128]] step %[[C16]] iter_args(%{{.*}}) -> (tensor<1x16x16xf32>)
// CHECK-DAG: %[[ROW:.*]] = vector.transfer_read %[[A]][%{{.*}}, %[[K]]]{{.*}} : tensor<1x128xf32>, vector<16x16xf32>
// CHECK-DAG: %[[ROWS:.*]] = vector.transfer_read %[[B]][%[[N]], %[[K]]]{{.*}} : tensor<784x128xf32>, vector<16x16xf32>
// CHECK: math.fma %[[ROW]], %[[ROWS]], %{{.*}} : vector<16x16xf32>
// CHECK: vector.transfer_read {{.*}}permutation_map{{.*}} : tensor<1x16x16xf32>, vector<16x16xf32>
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[C16]] step %[[C1]] iter_args(%{{.*}}) -> (tensor<1x16xf32>)
// CHECK: arith.addf {{.*}} : vector<16xf32>
// CHECK-NOT: linalg.
// CHECK: return
func.func @matmul_dot_products(%arg0: tensor<1x128xf32>, %arg1: tensor<784x128xf32>) -> tensor<1x784xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<1x784xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<1x784xf32>) -> tensor<1x784xf32>
  %2 = linalg.matmul indexing_maps = [#mapA, #mapB, #mapC] ins(%arg0, %arg1 : tensor<1x128xf32>, tensor<784x128xf32>) outs(%1 : tensor<1x784xf32>) -> tensor<1x784xf32>
  return %2 : tensor<1x784xf32>
}

// -----

// fuse.matmul (1x784) x (784x128), a batch of 1: a tile of one row takes
// all 128 columns (8 registers, 8 independent FMAs per step) instead of 2,
// whose FMAs would wait on each other.
// CHECK-LABEL: func @matmul_single_row
// CHECK: scf.for {{.*}} -> (tensor<1x128xf32>)
// CHECK: vector.contract {{.*}} : vector<1xf32>, vector<1x128xf32> into vector<128xf32>
func.func @matmul_single_row(%arg0: tensor<1x784xf32>, %arg1: tensor<784x128xf32>) -> tensor<1x128xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<1x128xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<1x128xf32>) -> tensor<1x128xf32>
  %2 = linalg.matmul ins(%arg0, %arg1 : tensor<1x784xf32>, tensor<784x128xf32>) outs(%1 : tensor<1x128xf32>) -> tensor<1x128xf32>
  return %2 : tensor<1x128xf32>
}

// -----

// A gradient that only an optimizer update reads, as dW = x^T dy is read by
// the update of W: the update is fused into the product's register tiles.
// The loops carry the update's outputs (here p and a momentum m); each 12x32
// tile is zeroed, accumulated over the reduction in a tile-sized tensor,
// and updates its tiles of p and m: the gradient never exists whole.
#mapT = affine_map<(d0, d1, d2) -> (d2, d0)>
#mapR = affine_map<(d0, d1, d2) -> (d2, d1)>
#mapO = affine_map<(d0, d1, d2) -> (d0, d1)>
#id = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func @matmul_consumer
// CHECK-SAME: (%[[X:[^:]*]]: tensor<64x24xf32>, %[[DY:[^:]*]]: tensor<64x32xf32>, %[[P:[^:]*]]: tensor<24x32xf32>, %[[M:[^:]*]]: tensor<24x32xf32>)
// CHECK-NOT: tensor.empty() : tensor<24x32xf32>
// CHECK: scf.for %[[I:[^ ]+]] = {{.*}} iter_args(%[[P0:[^ ]+]] = %[[P]], %[[M0:[^ ]+]] = %[[M]]) -> (tensor<24x32xf32>, tensor<24x32xf32>)
// CHECK: tensor.empty() : tensor<12x32xf32>
// CHECK: vector.contract {{.*}} into vector<12x32xf32>
// CHECK: arith.subf
// CHECK: %[[NEWP:.*]] = tensor.insert_slice %{{.*}} into %{{.*}}[%[[I]], %{{.*}}] [12, 32]
// CHECK: %[[NEWM:.*]] = tensor.insert_slice %{{.*}} into %{{.*}}[%[[I]], %{{.*}}] [12, 32]
// CHECK: scf.yield %[[NEWP]], %[[NEWM]]
// CHECK-NOT: linalg.
// CHECK: return
func.func @matmul_consumer(%x: tensor<64x24xf32>, %dy: tensor<64x32xf32>, %p: tensor<24x32xf32>, %m: tensor<24x32xf32>) -> (tensor<24x32xf32>, tensor<24x32xf32>) {
  %cst = arith.constant 0.000000e+00 : f32
  %lr = arith.constant 1.000000e-01 : f32
  %beta = arith.constant 9.000000e-01 : f32
  %0 = tensor.empty() : tensor<24x32xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<24x32xf32>) -> tensor<24x32xf32>
  %g = linalg.matmul indexing_maps = [#mapT, #mapR, #mapO] ins(%x, %dy : tensor<64x24xf32>, tensor<64x32xf32>) outs(%1 : tensor<24x32xf32>) -> tensor<24x32xf32>
  %2:2 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%g : tensor<24x32xf32>) outs(%p, %m : tensor<24x32xf32>, tensor<24x32xf32>) {
  ^bb0(%gi: f32, %pi: f32, %mi: f32):
    %3 = arith.mulf %beta, %mi : f32
    %4 = arith.addf %3, %gi : f32
    %5 = arith.mulf %lr, %4 : f32
    %6 = arith.subf %pi, %5 : f32
    linalg.yield %6, %4 : f32, f32
  } -> (tensor<24x32xf32>, tensor<24x32xf32>)
  return %2#0, %2#1 : tensor<24x32xf32>, tensor<24x32xf32>
}

// -----

// fuse.matmul (64x256) x (256x128) with its bias add fused: 64 rows have no
// divisor near 12 (their best, 8, leaves 16 accumulators), so the rows are
// two bands: 60 in 12 x 32 tiles (24 accumulators) and the last 4 in 4 x 64
// tiles. Both nests carry the consumer's output: the bias add stays fused.
// The product (2M multiply-adds) is split for the threads into two blocks
// of 64 columns, a multiple of both bands' tiles; each block runs both
// nests (the second band's one 4 x 64 tile per block) and is inserted back.
#idB = affine_map<(d0, d1) -> (d0, d1)>
#rowB = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func @matmul_row_bands
// CHECK-DAG: %[[C12:.*]] = arith.constant 12 : index
// CHECK-DAG: %[[C60:.*]] = arith.constant 60 : index
// CHECK: scf.forall (%[[J:.*]]) = (0) to (128) step (64) shared_outs(%[[OUT:.*]] = %{{.*}})
// CHECK: %[[BAND:.*]] = scf.for %{{.*}} = %{{.*}} to %[[C60]] step %[[C12]] iter_args(%{{.*}} = %[[OUT]])
// CHECK: vector.contract {{.*}} : vector<12x1xf32>, vector<1x32xf32> into vector<12x32xf32>
// CHECK: arith.addf {{.*}} : vector<32xf32>
// CHECK: tensor.extract_slice %[[BAND]][%[[C60]], %[[J]]] [4, 64]
// CHECK: vector.contract {{.*}} : vector<4x1xf32>, vector<1x64xf32> into vector<4x64xf32>
// CHECK: arith.addf {{.*}} : vector<64xf32>
// CHECK: tensor.insert_slice %{{.*}} into %[[BAND]][%[[C60]], %[[J]]] [4, 64]
// CHECK: scf.forall.in_parallel
// CHECK: tensor.parallel_insert_slice %{{.*}} into %[[OUT]][0, %[[J]]] [64, 64]
// CHECK-NOT: linalg.
// CHECK: return
func.func @matmul_row_bands(%arg0: tensor<64x256xf32>, %arg1: tensor<256x128xf32>, %b: tensor<128xf32>) -> tensor<64x128xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<64x128xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<64x128xf32>) -> tensor<64x128xf32>
  %2 = linalg.matmul ins(%arg0, %arg1 : tensor<64x256xf32>, tensor<256x128xf32>) outs(%1 : tensor<64x128xf32>) -> tensor<64x128xf32>
  %3 = linalg.generic {indexing_maps = [#idB, #rowB, #idB], iterator_types = ["parallel", "parallel"]} ins(%2, %b : tensor<64x128xf32>, tensor<128xf32>) outs(%0 : tensor<64x128xf32>) {
  ^bb0(%x: f32, %y: f32, %out: f32):
    %4 = arith.addf %x, %y : f32
    linalg.yield %4 : f32
  } -> tensor<64x128xf32>
  return %3 : tensor<64x128xf32>
}

// -----

// fuse.matmul (13x7) x (7x10): contraction tiles divide the iteration space,
// so no masks. M = 13 is prime: instead of row tiles of 1, a product over 12
// rows (one tile of the micro-kernel's height) and one over the last row.
// N = 10 is narrower than a register: all 10 columns in one tile (no column
// loop). Each part zeroes its own tile. The last row's unit dim is cast
// away: its accumulator is a vector<10xf32>.
// CHECK-LABEL: func @matmul_divisor_tiles
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[C7:.*]] = arith.constant 7 : index
// CHECK-NOT: linalg.fill
// CHECK: vector.transfer_write {{.*}} : vector<12x10xf32>, tensor<12x10xf32>
// CHECK-NEXT: scf.for %{{.*}} = %{{.*}} to %[[C7]] step %[[C1]]
// CHECK-NOT: vector.create_mask
// CHECK: vector.contract {{.*}} : vector<12x1xf32>, vector<1x10xf32> into vector<12x10xf32>
// CHECK: tensor.insert_slice {{.*}}[0, 0] [12, 10] [1, 1] : tensor<12x10xf32> into tensor<13x10xf32>
// CHECK: vector.transfer_write {{.*}} : vector<10xf32>, tensor<1x10xf32>
// CHECK-NEXT: scf.for %{{.*}} = %{{.*}} to %[[C7]] step %[[C1]]
// CHECK-NOT: create_mask
// CHECK: vector.contract {{.*}} into vector<10xf32>
// CHECK: tensor.insert_slice {{.*}}[12, 0] [1, 10] [1, 1] : tensor<1x10xf32> into tensor<13x10xf32>
// CHECK-NOT: linalg.
// CHECK: return
func.func @matmul_divisor_tiles(%arg0: tensor<13x7xf32>, %arg1: tensor<7x10xf32>) -> tensor<13x10xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<13x10xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<13x10xf32>) -> tensor<13x10xf32>
  %2 = linalg.matmul ins(%arg0, %arg1 : tensor<13x7xf32>, tensor<7x10xf32>) outs(%1 : tensor<13x10xf32>) -> tensor<13x10xf32>
  return %2 : tensor<13x10xf32>
}

// -----

// fuse.matmul (13x5) x (5x37): 37 columns are two registers and 5 left, 13
// rows a tile of 12 and one left. Divisor tiles would be 1 x 1 (scalar
// FMAs); instead four products over slices, each zeroing its own tile:
// 12 x 32 (the micro-kernel's 24 accumulators), 1 x 32, 12 x 5 and 1 x 5.
// CHECK-LABEL: func @matmul_whole_tiles
// CHECK-NOT: linalg.fill
// CHECK: vector.transfer_write {{.*}} : vector<12x32xf32>, tensor<12x32xf32>
// CHECK: vector.contract {{.*}} : vector<12x1xf32>, vector<1x32xf32> into vector<12x32xf32>
// CHECK: tensor.insert_slice {{.*}}[0, 0] [12, 32] [1, 1] : tensor<12x32xf32> into tensor<13x32xf32>
// CHECK: vector.contract {{.*}} : vector<1xf32>, vector<1x32xf32> into vector<32xf32>
// CHECK: tensor.insert_slice {{.*}}[12, 0] [1, 32] [1, 1] : tensor<1x32xf32> into tensor<13x32xf32>
// CHECK: tensor.insert_slice {{.*}}[0, 0] [13, 32] [1, 1] : tensor<13x32xf32> into tensor<13x37xf32>
// CHECK: vector.contract {{.*}} : vector<12x1xf32>, vector<1x5xf32> into vector<12x5xf32>
// CHECK: vector.contract {{.*}} : vector<1xf32>, vector<1x5xf32> into vector<5xf32>
// CHECK: tensor.insert_slice {{.*}}[0, 32] [13, 5] [1, 1] : tensor<13x5xf32> into tensor<13x37xf32>
// CHECK-NOT: linalg.
// CHECK: return
func.func @matmul_whole_tiles(%arg0: tensor<13x5xf32>, %arg1: tensor<5x37xf32>) -> tensor<13x37xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<13x37xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<13x37xf32>) -> tensor<13x37xf32>
  %2 = linalg.matmul ins(%arg0, %arg1 : tensor<13x5xf32>, tensor<5x37xf32>) outs(%1 : tensor<13x37xf32>) -> tensor<13x37xf32>
  return %2 : tensor<13x37xf32>
}

// -----

// fuse.matmul (64x128) x (128x784): 784 columns are 49 registers, whose
// only divisor up to two is one: tiles of one register would make 12
// broadcasts serve 12 FMAs. Instead 768 columns in whole tiles of two
// registers, and one register's edge. The 4 rows left by tiles of 12 take
// more columns, but no more than leave their row of B and a broadcast room
// in the registers: 4 x 64 (16 accumulators), not 4 x 96 (24, which spill).
// CHECK-LABEL: func @matmul_odd_registers
// CHECK: vector.contract {{.*}} : vector<12x1xf32>, vector<1x32xf32> into vector<12x32xf32>
// CHECK: vector.contract {{.*}} : vector<4x1xf32>, vector<1x64xf32> into vector<4x64xf32>
// CHECK: tensor.insert_slice {{.*}}[0, 0] [64, 768] [1, 1] : tensor<64x768xf32> into tensor<64x784xf32>
// CHECK: vector.contract {{.*}} : vector<12x1xf32>, vector<1x16xf32> into vector<12x16xf32>
// CHECK: tensor.insert_slice {{.*}}[0, 768] [64, 16] [1, 1] : tensor<64x16xf32> into tensor<64x784xf32>
// CHECK: return
func.func @matmul_odd_registers(%arg0: tensor<64x128xf32>, %arg1: tensor<128x784xf32>) -> tensor<64x784xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<64x784xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<64x784xf32>) -> tensor<64x784xf32>
  %2 = linalg.matmul ins(%arg0, %arg1 : tensor<64x128xf32>, tensor<128x784xf32>) outs(%1 : tensor<64x784xf32>) -> tensor<64x784xf32>
  return %2 : tensor<64x784xf32>
}

// -----

// linalg.batch_matmul 2 x (11x5) x (5x37): tiles of up to 8 rows and two
// registers of columns; 11 rows are a tile of 8 and 3 left, 37 columns two
// registers and 5 left: four products over slices, each zeroing its tiles.
// CHECK-LABEL: func @batch_matmul_whole_tiles
// CHECK-NOT: linalg.fill
// CHECK: vector.contract {{.*}} : vector<8x1xf32>, vector<1x32xf32> into vector<8x32xf32>
// CHECK: vector.contract {{.*}} : vector<3x1xf32>, vector<1x32xf32> into vector<3x32xf32>
// CHECK: tensor.insert_slice {{.*}}[0, 0, 0] [2, 11, 32] [1, 1, 1] : tensor<2x11x32xf32> into tensor<2x11x37xf32>
// CHECK: vector.contract {{.*}} : vector<8x1xf32>, vector<1x5xf32> into vector<8x5xf32>
// CHECK: vector.contract {{.*}} : vector<3x1xf32>, vector<1x5xf32> into vector<3x5xf32>
// CHECK: tensor.insert_slice {{.*}}[0, 0, 32] [2, 11, 5] [1, 1, 1] : tensor<2x11x5xf32> into tensor<2x11x37xf32>
// CHECK-NOT: linalg.
// CHECK: return
func.func @batch_matmul_whole_tiles(%arg0: tensor<2x11x5xf32>, %arg1: tensor<2x5x37xf32>) -> tensor<2x11x37xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<2x11x37xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<2x11x37xf32>) -> tensor<2x11x37xf32>
  %2 = linalg.batch_matmul ins(%arg0, %arg1 : tensor<2x11x5xf32>, tensor<2x5x37xf32>) outs(%1 : tensor<2x11x37xf32>) -> tensor<2x11x37xf32>
  return %2 : tensor<2x11x37xf32>
}

// -----

// fuse.add on tensor<1000xf32>: tiles of four registers (64 lanes); 1000 =
// 15 * 64 + 40, so the op is split at 960: 15 whole tiles, unmasked, then
// one static tile of 40 (no mask at every step). The output tile, written
// and never read, is written through its slice.
#map = affine_map<(d0) -> (d0)>
// CHECK-LABEL: func @elementwise_partial_tile
// CHECK-SAME: (%[[X:[^:]*]]: tensor<1000xf32>, %[[Y:[^:]*]]: tensor<1000xf32>)
// CHECK-DAG: %[[C64:.*]] = arith.constant 64 : index
// CHECK-DAG: %[[C960:.*]] = arith.constant 960 : index
// CHECK: scf.for %[[I:[^ ]+]] = %{{.*}} to %[[C960]] step %[[C64]]
// CHECK: %[[A:.*]] = vector.transfer_read %[[X]][%[[I]]], %{{.*}} {in_bounds = [true]} : tensor<1000xf32>, vector<64xf32>
// CHECK: %[[B:.*]] = vector.transfer_read %[[Y]][%[[I]]], %{{.*}} {in_bounds = [true]} : tensor<1000xf32>, vector<64xf32>
// CHECK: %[[S:.*]] = arith.addf %[[A]], %[[B]] : vector<64xf32>
// CHECK: vector.transfer_write %[[S]], %{{.*}} {in_bounds = [true]} : vector<64xf32>, tensor<960xf32>
// CHECK: vector.transfer_read %[[X]][%[[C960]]], %{{.*}} {in_bounds = [true]} : tensor<1000xf32>, vector<40xf32>
// CHECK: arith.addf %{{.*}}, %{{.*}} : vector<40xf32>
// CHECK-NOT: vector.create_mask
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @elementwise_partial_tile(%arg0: tensor<1000xf32>, %arg1: tensor<1000xf32>) -> tensor<1000xf32> {
  %0 = tensor.empty() : tensor<1000xf32>
  %1 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel"]} ins(%arg0, %arg1 : tensor<1000xf32>, tensor<1000xf32>) outs(%0 : tensor<1000xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %2 = arith.addf %in, %in_0 : f32
    linalg.yield %2 : f32
  } -> tensor<1000xf32>
  return %1 : tensor<1000xf32>
}

// -----

// fuse.add (row broadcast) then fuse.relu on tensor<4x64xf32>: tiles of
// [1, 64], whose leading unit dim is cast away: 1-D vectors only, no mask.
#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func @elementwise_2d
// CHECK-SAME: (%[[X:[^:]*]]: tensor<4x64xf32>, %[[B:[^:]*]]: tensor<64xf32>)
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[C4:.*]] = arith.constant 4 : index
// CHECK-NOT: vector<1x
// CHECK: scf.for %[[I:[^ ]+]] = %{{.*}} to %[[C4]] step %[[C1]]
// CHECK-NOT: vector<1x
// CHECK-DAG: %[[XV:.*]] = vector.transfer_read %[[X]][%[[I]], %{{.*}}]{{.*}} : tensor<4x64xf32>, vector<64xf32>
// CHECK-DAG: %[[BV:.*]] = vector.transfer_read %[[B]][%{{.*}}]{{.*}} : tensor<64xf32>, vector<64xf32>
// CHECK: %[[S:.*]] = arith.addf %[[XV]], %[[BV]] : vector<64xf32>
// CHECK: %[[R:.*]] = arith.maximumf %[[S]], %{{.*}} : vector<64xf32>
// CHECK: vector.transfer_write %[[R]], {{.*}} : vector<64xf32>, tensor<{{.*}}>
// CHECK-NOT: vector<1x
// CHECK-NOT: create_mask
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @elementwise_2d(%arg0: tensor<4x64xf32>, %arg1: tensor<64xf32>) -> tensor<4x64xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<4x64xf32>
  %1 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel"]} ins(%arg0, %arg1 : tensor<4x64xf32>, tensor<64xf32>) outs(%0 : tensor<4x64xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %2 = arith.addf %in, %in_0 : f32
    %3 = arith.maximumf %2, %cst : f32
    linalg.yield %3 : f32
  } -> tensor<4x64xf32>
  return %1 : tensor<4x64xf32>
}

// -----

// fuse.reduce_sum {axes = [1]} of tensor<4x64xf32>: one row of 64 per step,
// reduced in a vector (multi-reduction or reduction) into the accumulator.
#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func @row_reduction
// CHECK-SAME: (%[[X:[^:]*]]: tensor<4x64xf32>)
// CHECK: scf.for %[[I:[^ ]+]] =
// CHECK: vector.transfer_read %[[X]][%[[I]], %{{.*}}]{{.*}} : tensor<4x64xf32>, vector<64xf32>
// CHECK: {{vector.multi_reduction <add>, .* \[1\] : vector<1x64xf32> to vector<1xf32>|vector.reduction <add>, .* : vector<64xf32> into f32}}
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @row_reduction(%arg0: tensor<4x64xf32>) -> tensor<4xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<4xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<4xf32>) -> tensor<4xf32>
  %2 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "reduction"]} ins(%arg0 : tensor<4x64xf32>) outs(%1 : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %3 = arith.addf %out, %in : f32
    linalg.yield %3 : f32
  } -> tensor<4xf32>
  return %2 : tensor<4xf32>
}

// -----

// fuse.conv2d (1x10x10x3 input, 3x3x3x16 kernel, valid): tiles of one output
// row x 8 output columns x 16 channels, with loops over the 3x3 window and
// the 3 input channels. The tile's size-1 window is decomposed to a 1-D
// convolution and vectorized: an outer product of 8 input pixels and 16
// kernel channels accumulated into the 8x16 output tile.
// CHECK-LABEL: func @conv2d
// CHECK-SAME: (%[[X:[^:]*]]: tensor<1x10x10x3xf32>, %[[K:[^:]*]]: tensor<3x3x3x16xf32>)
// CHECK-DAG: %[[C3:.*]] = arith.constant 3 : index
// CHECK-DAG: %[[C8:.*]] = arith.constant 8 : index
// CHECK: scf.for %{{.*}} to %[[C8]]
// CHECK: scf.for %{{.*}} to %[[C3]]
// CHECK: scf.for %{{.*}} to %[[C3]]
// CHECK: scf.for %{{.*}} to %[[C3]]
// CHECK-DAG: vector.transfer_read %[[X]]{{.*}} : tensor<1x10x10x3xf32>, vector<8x1xf32>
// CHECK-DAG: vector.transfer_read %[[K]]{{.*}} : tensor<3x3x3x16xf32>, vector<{{(1x)?}}16xf32>
// CHECK-DAG: vector.transfer_read {{.*}} : tensor<1x8x16xf32>, vector<8x16xf32>
// CHECK: {{vector.contract .* : vector<8x1xf32>, vector<1x16xf32> into vector<8x16xf32>|vector.fma}}
// CHECK: vector.transfer_write {{.*}} : vector<8x16xf32>
// CHECK-NOT: linalg.
// CHECK: return
func.func @conv2d(%arg0: tensor<1x10x10x3xf32>, %arg1: tensor<3x3x3x16xf32>) -> tensor<1x8x8x16xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<1x8x8x16xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<1x8x8x16xf32>) -> tensor<1x8x8x16xf32>
  %2 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%arg0, %arg1 : tensor<1x10x10x3xf32>, tensor<3x3x3x16xf32>) outs(%1 : tensor<1x8x8x16xf32>) -> tensor<1x8x8x16xf32>
  return %2 : tensor<1x8x8x16xf32>
}

// -----

// fuse.max_pool2d {window = [2, 2]} of tensor<1x8x8x16xf32>: tiles of one
// output row x 4 columns x 16 channels, loops over the 2x2 window, 1-D
// pooling vectorized as element-wise maxima of 16-lane vectors.
// CHECK-LABEL: func @max_pool
// CHECK-SAME: (%[[X:[^:]*]]: tensor<1x8x8x16xf32>)
// CHECK-DAG: %[[C2:.*]] = arith.constant 2 : index
// CHECK-DAG: %[[C4:.*]] = arith.constant 4 : index
// CHECK: scf.for %{{.*}} to %[[C4]]
// CHECK: scf.for %{{.*}} to %[[C2]]
// CHECK: scf.for %{{.*}} to %[[C2]]
// CHECK: vector.transfer_read %[[X]]{{.*}} : tensor<1x8x8x16xf32>, vector<{{[0-9]+}}x16xf32>
// CHECK: arith.maximumf {{.*}} : vector<16xf32>
// CHECK: vector.transfer_write {{.*}} : vector<4x16xf32>
// CHECK-NOT: linalg.
// CHECK: return
func.func @max_pool(%arg0: tensor<1x8x8x16xf32>) -> tensor<1x4x4x16xf32> {
  %cst = arith.constant 0xFF800000 : f32
  %0 = tensor.empty() : tensor<2x2xf32>
  %1 = tensor.empty() : tensor<1x4x4x16xf32>
  %2 = linalg.fill ins(%cst : f32) outs(%1 : tensor<1x4x4x16xf32>) -> tensor<1x4x4x16xf32>
  %3 = linalg.pooling_nhwc_max {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ins(%arg0, %0 : tensor<1x8x8x16xf32>, tensor<2x2xf32>) outs(%2 : tensor<1x4x4x16xf32>) -> tensor<1x4x4x16xf32>
  return %3 : tensor<1x4x4x16xf32>
}

// -----

// %m = fuse.compare gt, %x, %y returned and used by fuse.select: the ops that
// read or write i1 tensors are tiled but stay scalar linalg.generic ops (LLVM
// packs vectors of i1 into bits in memory, tensors of i1 use a byte per
// element).
#map = affine_map<(d0) -> (d0)>
// CHECK-LABEL: func @boolean_tensors
// CHECK-NOT: vector.
// CHECK: scf.for
// CHECK: %[[M:.*]] = linalg.generic
// CHECK-SAME: outs(%{{.*}} : tensor<256xi1>)
// CHECK: arith.cmpf ogt, %{{.*}}, %{{.*}} : f32
// CHECK: tensor.insert_slice %[[M]]
// CHECK: scf.for
// CHECK: linalg.generic
// CHECK-SAME: ins(%{{.*}}, %{{.*}}, %{{.*}} : tensor<64xi1>, tensor<64xf32>, tensor<64xf32>)
// CHECK: arith.select %{{.*}}, %{{.*}}, %{{.*}} : f32
// CHECK-NOT: vector.
// CHECK: return
func.func @boolean_tensors(%arg0: tensor<1000xf32>, %arg1: tensor<1000xf32>) -> (tensor<1000xi1>, tensor<1000xf32>) {
  %0 = tensor.empty() : tensor<1000xi1>
  %1 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel"]} ins(%arg0, %arg1 : tensor<1000xf32>, tensor<1000xf32>) outs(%0 : tensor<1000xi1>) {
  ^bb0(%in: f32, %in_0: f32, %out: i1):
    %4 = arith.cmpf ogt, %in, %in_0 : f32
    linalg.yield %4 : i1
  } -> tensor<1000xi1>
  %2 = tensor.empty() : tensor<1000xf32>
  %3 = linalg.generic {indexing_maps = [#map, #map, #map, #map], iterator_types = ["parallel"]} ins(%1, %arg0, %arg1 : tensor<1000xi1>, tensor<1000xf32>, tensor<1000xf32>) outs(%2 : tensor<1000xf32>) {
  ^bb0(%in: i1, %in_0: f32, %in_1: f32, %out: f32):
    %4 = arith.select %in, %in_0, %in_1 : f32
    linalg.yield %4 : f32
  } -> tensor<1000xf32>
  return %1, %3 : tensor<1000xi1>, tensor<1000xf32>
}

// -----

// conv_2d_nhwc_hwcf with 26 output columns: a loop nest over the first 24
// (tiles of 8 columns x 32 channels, 16 accumulators) and one over the last
// 2, whose tiles take both images, instead of 13 tiles of 2 columns. Each
// tile zeroes its slice of the output: no fill of the whole output is left.
// (8 input channels, less than a register: no Winograd.)
// CHECK-LABEL: func @conv_split_columns
// CHECK-DAG: %[[C8:.*]] = arith.constant 8 : index
// CHECK-DAG: %[[C24:.*]] = arith.constant 24 : index
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[C24]] step %[[C8]] iter_args(%{{.*}}) -> (tensor<2x26x26x32xf32>)
// CHECK: tensor.extract_slice %{{.*}} [1, 1, 8, 32] [1, 1, 1, 1] : tensor<2x26x26x32xf32> to tensor<1x1x8x32xf32>
// CHECK: vector.transfer_write %{{.*}} : vector<8x32xf32>, tensor<1x1x8x32xf32>
// CHECK: vector.contract {{.*}} : vector<8x1xf32>, vector<1x32xf32> into vector<8x32xf32>
// CHECK: tensor.insert_slice %{{.*}} into %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] [1, 1, 8, 32]
// CHECK: tensor.extract_slice %{{.*}} [2, 1, 2, 32] [1, 1, 1, 1] : tensor<2x26x26x32xf32> to tensor<2x1x2x32xf32>
// CHECK: vector.contract {{.*}} : vector<2x2x1xf32>, vector<1x32xf32> into vector<2x2x32xf32>
// CHECK: tensor.insert_slice %{{.*}} into %{{.*}}[%{{.*}}, %{{.*}}, %[[C24]], %{{.*}}] [2, 1, 2, 32]
// CHECK-NOT: linalg.conv
// CHECK: return
func.func @conv_split_columns(%arg0: tensor<2x28x28x8xf32>, %arg1: tensor<3x3x8x32xf32>) -> tensor<2x26x26x32xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<2x26x26x32xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<2x26x26x32xf32>) -> tensor<2x26x26x32xf32>
  %2 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%arg0, %arg1 : tensor<2x28x28x8xf32>, tensor<3x3x8x32xf32>) outs(%1 : tensor<2x26x26x32xf32>) -> tensor<2x26x26x32xf32>
  return %2 : tensor<2x26x26x32xf32>
}

// -----

// conv2d + bias + relu (fuse-elementwise-fusion makes the last two one
// generic): the element-wise consumer is applied to each output tile right
// after its reduction, reading the tile, not a full-size convolution
// result. Only the consumer's output is inserted into.
#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#map1 = affine_map<(d0, d1, d2, d3) -> (d3)>
// CHECK-LABEL: func @conv_epilogue
// CHECK-SAME: (%[[X:[^:]*]]: tensor<1x10x10x4xf32>, %[[K:[^:]*]]: tensor<3x3x4x16xf32>, %[[B:[^:]*]]: tensor<16xf32>)
// CHECK: %[[OUT:.*]] = tensor.empty() : tensor<1x8x8x16xf32>
// CHECK: scf.for {{.*}} iter_args(%[[ACC:.*]] = %[[OUT]])
// CHECK: %[[SLICE:.*]] = tensor.extract_slice %[[ACC]]
// CHECK: vector.contract {{.*}} : vector<8x1xf32>, vector<1x16xf32> into vector<8x16xf32>
// CHECK: scf.for {{.*}} iter_args(%[[DEST:.*]] = %[[SLICE]])
// CHECK: %[[T:.*]] = vector.transfer_read {{.*}} : tensor<1x1x8x16xf32>, vector<16xf32>
// CHECK: %[[BV:.*]] = vector.transfer_read %[[B]]
// CHECK: %[[SUM:.*]] = arith.addf %[[T]], %[[BV]] : vector<16xf32>
// CHECK: arith.maximumf %[[SUM]], %{{.*}} : vector<16xf32>
// CHECK: tensor.insert_slice %{{.*}} into %[[ACC]]
// CHECK-NOT: linalg.
// CHECK: return
func.func @conv_epilogue(%arg0: tensor<1x10x10x4xf32>, %arg1: tensor<3x3x4x16xf32>, %arg2: tensor<16xf32>) -> tensor<1x8x8x16xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<1x8x8x16xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<1x8x8x16xf32>) -> tensor<1x8x8x16xf32>
  %2 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%arg0, %arg1 : tensor<1x10x10x4xf32>, tensor<3x3x4x16xf32>) outs(%1 : tensor<1x8x8x16xf32>) -> tensor<1x8x8x16xf32>
  %3 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%2, %arg2 : tensor<1x8x8x16xf32>, tensor<16xf32>) outs(%0 : tensor<1x8x8x16xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %4 = arith.addf %in, %in_0 : f32
    %5 = arith.maximumf %4, %cst : f32
    linalg.yield %5 : f32
  } -> tensor<1x8x8x16xf32>
  return %3 : tensor<1x8x8x16xf32>
}

// -----

// The convolution of a filter gradient (the seed CNN's second layer): its
// "filter", the output gradient, is 4.5 MiB. The loop over its rows (24) is
// outermost, so each 192 KiB row stays in L2 across all output tiles. Its
// output rows are 3 wide, so each tile takes 4 images (X's channels): 12
// rows x 32 channels of accumulators, not 3 x 32.
// CHECK-LABEL: func @conv_large_filter
// CHECK-DAG: %[[C4:.*]] = arith.constant 4 : index
// CHECK-DAG: %[[C24:.*]] = arith.constant 24 : index
// CHECK-DAG: %[[C32:.*]] = arith.constant 32 : index
// CHECK-DAG: %[[C64:.*]] = arith.constant 64 : index
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[C24]] step
// CHECK-NEXT: scf.for %{{.*}} = %{{.*}} to %[[C32]] step %[[C4]]
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[C64]] step
// CHECK: vector.contract {{.*}} : vector<4x3x1xf32>, vector<1x32xf32> into vector<4x3x32xf32>
// CHECK: return
func.func @conv_large_filter(%arg0: tensor<32x26x26x64xf32>, %arg1: tensor<24x24x64x32xf32>) -> tensor<32x3x3x32xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<32x3x3x32xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<32x3x3x32xf32>) -> tensor<32x3x3x32xf32>
  %2 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%arg0, %arg1 : tensor<32x26x26x64xf32>, tensor<24x24x64x32xf32>) outs(%1 : tensor<32x3x3x32xf32>) -> tensor<32x3x3x32xf32>
  return %2 : tensor<32x3x3x32xf32>
}

// -----

// fuse.conv2d_filter_grad (X 2x9x9x16, dY 2x7x7x32, 3x3 filter; an odd
// output, so not Winograd): loops over images, filter taps and tiles of 8
// channels x 32 filters; each tile accumulates, over the output rows and
// columns, an outer product of 8 channels of one X pixel (read in place,
// no transpose) and 32 filters of one dY pixel.
#map = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d0 + d5, d1 + d6, d2)>
#map1 = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d5, d6, d3)>
#map2 = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func @filter_gradient
// CHECK-SAME: (%[[X:[^:]*]]: tensor<2x9x9x16xf32>, %[[G:[^:]*]]: tensor<2x7x7x32xf32>)
// CHECK-DAG: %[[C2:.*]] = arith.constant 2 : index
// CHECK-DAG: %[[C3:.*]] = arith.constant 3 : index
// CHECK-DAG: %[[C7:.*]] = arith.constant 7 : index
// CHECK-DAG: %[[C8:.*]] = arith.constant 8 : index
// CHECK-DAG: %[[C16:.*]] = arith.constant 16 : index
// CHECK: scf.for %{{.*}} to %[[C2]]
// CHECK: scf.for %{{.*}} to %[[C3]]
// CHECK: scf.for %{{.*}} to %[[C3]]
// CHECK: scf.for %{{.*}} to %[[C16]] step %[[C8]]
// CHECK: tensor.extract_slice {{.*}} [1, 1, 8, 32] [1, 1, 1, 1] : tensor<3x3x16x32xf32> to tensor<8x32xf32>
// CHECK: scf.for %{{.*}} to %[[C7]]
// CHECK: scf.for %{{.*}} to %[[C7]]
// CHECK-DAG: vector.transfer_read %[[X]]{{.*}} : tensor<2x9x9x16xf32>, vector<8xf32>
// CHECK-DAG: vector.transfer_read %[[G]]{{.*}} : tensor<2x7x7x32xf32>, vector<32xf32>
// CHECK: vector.contract {{.*}} : vector<1x8xf32>, vector<1x32xf32> into vector<8x32xf32>
// CHECK-NOT: linalg.transpose
// CHECK: return
func.func @filter_gradient(%arg0: tensor<2x9x9x16xf32>, %arg1: tensor<2x7x7x32xf32>) -> tensor<3x3x16x32xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<3x3x16x32xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<3x3x16x32xf32>) -> tensor<3x3x16x32xf32>
  %2 = linalg.generic {indexing_maps = [#map, #map1, #map2], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%arg0, %arg1 : tensor<2x9x9x16xf32>, tensor<2x7x7x32xf32>) outs(%1 : tensor<3x3x16x32xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %3 = arith.mulf %in, %in_0 : f32
    %4 = arith.addf %out, %3 : f32
    linalg.yield %4 : f32
  } -> tensor<3x3x16x32xf32>
  return %2 : tensor<3x3x16x32xf32>
}

// -----

// The same with an output gradient of 8 x 8 (X 2x10x10x16, dY 2x8x8x32):
// the transpose of Winograd's F(4x4, 3x3). Per image, X's 6x6 tiles become
// V[4 tiles, 37, 16 channels] (36 positions padded to 37) and dY's 4x4
// tiles D[4 tiles, 37, 32 filters]; 36 products accumulate
// P[p] += V[:, p]^T D[:, p] over the images (a reduction over the tiles,
// the lhs read transposed; 12 + 4 channels); then dW = G^T P G is added to
// dW's init.
#map = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d0 + d5, d1 + d6, d2)>
#map1 = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d5, d6, d3)>
#map2 = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func @filter_gradient_winograd
// CHECK-SAME: (%[[X:[^:]*]]: tensor<2x10x10x16xf32>, %[[G:[^:]*]]: tensor<2x8x8x32xf32>)
// CHECK: %[[P0:.*]] = scf.for {{.*}} -> (tensor<36x16x32xf32>)
// CHECK: %[[P:.*]] = scf.for {{.*}} iter_args(%{{.*}} = %[[P0]]) -> (tensor<36x16x32xf32>)
// CHECK: vector.transfer_read %[[X]]
// CHECK: vector.fma
// CHECK: vector.transfer_write {{.*}} : vector<16xf32>, tensor<4x37x16xf32>
// CHECK: vector.transfer_read %[[G]]
// CHECK: vector.transfer_write {{.*}} : vector<16xf32>, tensor<4x37x32xf32>
// CHECK: vector.contract {{.*}} : vector<1x12xf32>, vector<1x32xf32> into vector<12x32xf32>
// CHECK: vector.contract {{.*}} : vector<1x4xf32>, vector<1x32xf32> into vector<4x32xf32>
// CHECK: scf.for {{.*}} -> (tensor<3x3x16x32xf32>)
// CHECK: vector.transfer_read %[[P]]
// CHECK-COUNT-9: vector.transfer_write {{.*}} : vector<16xf32>, tensor<3x3x16x32xf32>
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @filter_gradient_winograd(%arg0: tensor<2x10x10x16xf32>, %arg1: tensor<2x8x8x32xf32>) -> tensor<3x3x16x32xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<3x3x16x32xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<3x3x16x32xf32>) -> tensor<3x3x16x32xf32>
  %2 = linalg.generic {indexing_maps = [#map, #map1, #map2], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%arg0, %arg1 : tensor<2x10x10x16xf32>, tensor<2x8x8x32xf32>) outs(%1 : tensor<3x3x16x32xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %3 = arith.mulf %in, %in_0 : f32
    %4 = arith.addf %out, %3 : f32
    linalg.yield %4 : f32
  } -> tensor<3x3x16x32xf32>
  return %2 : tensor<3x3x16x32xf32>
}

// -----

// The same with a single-channel X (a first layer's): its 9 taps are the
// rows of one 9x32 register tile. Per image and output row, the taps' rows
// of X are copied into a 9x8 tensor (9 small memcpys once bufferized), and
// one product with the dY row accumulates all of dW (viewed as 9x32).
#map = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d0 + d5, d1 + d6, d2)>
#map1 = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d5, d6, d3)>
#map2 = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func @filter_gradient_single_channel
// CHECK: tensor.collapse_shape {{.*}} : tensor<3x3x1x32xf32> into tensor<9x32xf32>
// CHECK: scf.for {{.*}} -> (tensor<9x32xf32>)
// CHECK: scf.for {{.*}} -> (tensor<9x32xf32>)
// CHECK-COUNT-9: tensor.insert_slice {{.*}} : tensor<8xf32> into tensor<9x8xf32>
// CHECK: vector.contract {{.*}} into vector<9x32xf32>
// CHECK: tensor.expand_shape {{.*}} : tensor<9x32xf32> into tensor<3x3x1x32xf32>
func.func @filter_gradient_single_channel(%arg0: tensor<2x10x10x1xf32>, %arg1: tensor<2x8x8x32xf32>) -> tensor<3x3x1x32xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<3x3x1x32xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<3x3x1x32xf32>) -> tensor<3x3x1x32xf32>
  %2 = linalg.generic {indexing_maps = [#map, #map1, #map2], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%arg0, %arg1 : tensor<2x10x10x1xf32>, tensor<2x8x8x32xf32>) outs(%1 : tensor<3x3x1x32xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %3 = arith.mulf %in, %in_0 : f32
    %4 = arith.addf %out, %3 : f32
    linalg.yield %4 : f32
  } -> tensor<3x3x1x32xf32>
  return %2 : tensor<3x3x1x32xf32>
}

// -----

// A filter gradient and, beside it, the bias gradient (the sum of the same
// output gradient over images, rows and columns): one loop over images
// carries both, and each image's sum runs while its rows of dY are in L2.
// The images are split into two groups for the threads, each summing into
// partials of its own; the partials are then added in group order.
#fgX = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d0 + d5, d1 + d6, d2)>
#fgY = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d5, d6, d3)>
#fgW = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>
#fgId = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#fgF = affine_map<(d0, d1, d2, d3) -> (d3)>
// CHECK-LABEL: func @filter_gradient_with_bias
// CHECK-SAME: (%{{[^:]*}}: tensor<4x10x10x8xf32>, %[[DY:[^:]*]]: tensor<4x8x8x32xf32>)
// CHECK: %[[PARTS:.*]]:2 = scf.forall (%[[G:[^)]+]]) in (2) shared_outs({{.*}}) -> (tensor<2x3x3x8x32xf32>, tensor<2x32xf32>)
// CHECK: %[[FIRST:.*]] = affine.apply #{{.*}}(%[[G]])
// CHECK: scf.for %[[I:[^ ]+]] = %c0 to %c2 {{.*}} -> (tensor<3x3x8x32xf32>, tensor<32xf32>)
// CHECK: %[[N:.*]] = arith.addi %[[FIRST]], %[[I]]
// CHECK: vector.contract {{.*}} into vector<8x32xf32>
// CHECK: vector.transfer_read %[[DY]][%[[N]], %{{.*}}, %{{.*}}, %{{.*}}]{{.*}} : tensor<4x8x8x32xf32>, vector<32xf32>
// CHECK: vector.multi_reduction <add>, {{.*}} [0, 1, 2] : vector<1x1x1x32xf32> to vector<32xf32>
// CHECK: scf.yield %{{.*}}, %{{.*}} : tensor<3x3x8x32xf32>, tensor<32xf32>
// CHECK: tensor.parallel_insert_slice {{.*}} into %{{.*}}[%[[G]], 0, 0, 0, 0] [1, 3, 3, 8, 32]
// CHECK: tensor.parallel_insert_slice {{.*}} into %{{.*}}[%[[G]], 0] [1, 32]
// CHECK: %[[DW:.*]] = scf.for %[[G2:[^ ]+]] = %c0 to %c2
// CHECK: vector.transfer_read %[[PARTS]]#0[%[[G2]],
// CHECK: %[[DB:.*]] = scf.for %[[G3:[^ ]+]] = %c0 to %c2
// CHECK: vector.transfer_read %[[PARTS]]#1[%[[G3]],
// CHECK: return %[[DW]], %[[DB]]
func.func @filter_gradient_with_bias(%arg0: tensor<4x10x10x8xf32>, %arg1: tensor<4x8x8x32xf32>) -> (tensor<3x3x8x32xf32>, tensor<32xf32>) {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<3x3x8x32xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<3x3x8x32xf32>) -> tensor<3x3x8x32xf32>
  %2 = linalg.generic {indexing_maps = [#fgX, #fgY, #fgW], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%arg0, %arg1 : tensor<4x10x10x8xf32>, tensor<4x8x8x32xf32>) outs(%1 : tensor<3x3x8x32xf32>) {
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

// Two matmuls accumulate into one fill (CSE merged theirs). Each gets its
// own fill, the second into a fresh allocation that CSE cannot merge back:
// otherwise bufferization copies the filled tensor before the first write.
// The fills are then fused into the products' tiles.
// CHECK-LABEL: func @shared_fill
// CHECK-DAG: %[[EMPTY:.*]] = tensor.empty() : tensor<48x32xf32>
// CHECK-DAG: %[[ALLOC:.*]] = bufferization.alloc_tensor() : tensor<48x32xf32>
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %[[ALLOC]])
// CHECK: vector.transfer_write %{{.*}} : vector<12x32xf32>, tensor<12x32xf32>
// CHECK: vector.contract
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %[[EMPTY]])
// CHECK: vector.transfer_write %{{.*}} : vector<12x32xf32>, tensor<12x32xf32>
// CHECK: vector.contract
func.func @shared_fill(%a: tensor<48x128xf32>, %b: tensor<128x32xf32>, %c: tensor<128x32xf32>) -> (tensor<48x32xf32>, tensor<48x32xf32>) {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<48x32xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<48x32xf32>) -> tensor<48x32xf32>
  %2 = linalg.matmul ins(%a, %b : tensor<48x128xf32>, tensor<128x32xf32>) outs(%1 : tensor<48x32xf32>) -> tensor<48x32xf32>
  %3 = linalg.matmul ins(%a, %c : tensor<48x128xf32>, tensor<128x32xf32>) outs(%1 : tensor<48x32xf32>) -> tensor<48x32xf32>
  return %2, %3 : tensor<48x32xf32>, tensor<48x32xf32>
}

// -----

// tensor.pad (the padded output gradient of a convolution's input gradient)
// becomes vectorized fills of the padded tensor's border and a vectorized
// copy into its interior slice, which bufferizes in place; a pad left to
// bufferization becomes an element-by-element strided copy.
// CHECK-LABEL: func @pad
// CHECK-NOT: tensor.pad
// CHECK: scf.for
// CHECK: vector.transfer_write %{{.*}} : vector<32xf32>, tensor<2x1x6x32xf32>
// CHECK: vector.transfer_write %{{.*}} : vector<32xf32>, tensor<2x1x6x32xf32>
// CHECK: vector.transfer_write %{{.*}} : vector<32xf32>, tensor<2x4x1x32xf32>
// CHECK: vector.transfer_write %{{.*}} : vector<32xf32>, tensor<2x4x1x32xf32>
// CHECK: %[[FILLED:.*]] = tensor.insert_slice %{{.*}}[0, 1, 5, 0] [2, 4, 1, 32]
// CHECK: %[[INTERIOR:.*]] = tensor.extract_slice %[[FILLED]][0, 1, 1, 0] [2, 4, 4, 32] [1, 1, 1, 1]
// CHECK: %[[COPIED:.*]] = scf.for {{.*}} iter_args(%{{.*}} = %[[INTERIOR]])
// CHECK: vector.transfer_read %{{.*}} : tensor<2x4x4x32xf32>, vector<32xf32>
// CHECK: tensor.insert_slice %[[COPIED]] into %[[FILLED]][0, 1, 1, 0] [2, 4, 4, 32] [1, 1, 1, 1]
func.func @pad(%x: tensor<2x4x4x32xf32>) -> tensor<2x6x6x32xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %p = tensor.pad %x low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %cst : f32
  } : tensor<2x4x4x32xf32> to tensor<2x6x6x32xf32>
  return %p : tensor<2x6x6x32xf32>
}

// -----

// A pad of a value that an element-wise op computes: the op writes
// straight into the interior of the tensor whose border is filled, and its
// other user (a linalg op that reads it) reads it there. No copy.
#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func @pad_producer
// CHECK-NOT: tensor.pad
// CHECK: vector.transfer_write %{{.*}} : vector<32xf32>, tensor<2x1x6x32xf32>
// CHECK: vector.transfer_write %{{.*}} : vector<32xf32>, tensor<2x4x1x32xf32>
// CHECK: %[[FILLED:.*]] = tensor.insert_slice %{{.*}}[0, 1, 5, 0] [2, 4, 1, 32]
// CHECK: %[[INTERIOR:.*]] = tensor.extract_slice %[[FILLED]][0, 1, 1, 0] [2, 4, 4, 32] [1, 1, 1, 1]
// CHECK: %[[RELU:.*]] = scf.for {{.*}} iter_args(%{{.*}} = %[[INTERIOR]])
// CHECK: arith.maximumf
// CHECK: %[[PADDED:.*]] = tensor.insert_slice %[[RELU]] into %[[FILLED]][0, 1, 1, 0] [2, 4, 4, 32] [1, 1, 1, 1]
// CHECK: vector.transfer_read %[[RELU]]
// CHECK: arith.addf
// CHECK-NOT: scf.for
// CHECK: return %[[PADDED]]
func.func @pad_producer(%x: tensor<2x4x4x32xf32>) -> (tensor<2x6x6x32xf32>, tensor<2x4x4x32xf32>) {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<2x4x4x32xf32>
  %r = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x : tensor<2x4x4x32xf32>) outs(%0 : tensor<2x4x4x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    %1 = arith.maximumf %in, %cst : f32
    linalg.yield %1 : f32
  } -> tensor<2x4x4x32xf32>
  %p = tensor.pad %r low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %cst : f32
  } : tensor<2x4x4x32xf32> to tensor<2x6x6x32xf32>
  %d = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%r : tensor<2x4x4x32xf32>) outs(%0 : tensor<2x4x4x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    %1 = arith.addf %in, %in : f32
    linalg.yield %1 : f32
  } -> tensor<2x4x4x32xf32>
  return %p, %d : tensor<2x6x6x32xf32>, tensor<2x4x4x32xf32>
}

// -----

// A tile read from a slice that takes every other element: the read stays
// on the slice (bufferized as a strided view), since a read of the source
// from the slice's offset would take the skipped elements too.
#map = affine_map<(d0) -> (d0)>
// CHECK-LABEL: func @strided_slice_read
// CHECK: %[[SLICE:.*]] = tensor.extract_slice %{{.*}}[0] [16] [2] : tensor<32xf32> to tensor<16xf32>
// CHECK: vector.transfer_read %[[SLICE]]
// CHECK-NOT: vector.transfer_read {{.*}} : tensor<32xf32>
func.func @strided_slice_read(%arg0: tensor<32xf32>) -> tensor<16xf32> {
  %s = tensor.extract_slice %arg0[0] [16] [2] : tensor<32xf32> to tensor<16xf32>
  %0 = tensor.empty() : tensor<16xf32>
  %1 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]} ins(%s : tensor<16xf32>) outs(%0 : tensor<16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %2 = arith.mulf %in, %in : f32
    linalg.yield %2 : f32
  } -> tensor<16xf32>
  return %1 : tensor<16xf32>
}

// -----

// A 3x3 convolution with an 8 x 8 output and whole registers of channels
// and filters, as Winograd's F(4x4, 3x3): the filter's transform U[36, c,
// f] once, then per image the 6x6 input tiles' transform V[4 tiles, 37, c]
// (36 positions padded to 37; FMAs for B^T's coefficients 4 and 5), 36
// products M[:, p] = V[:, p] U[p] of 4 rows, and the output transform into
// the image's slice, which the bias add and ReLU finish before it is
// inserted.
#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#map1 = affine_map<(d0, d1, d2, d3) -> (d3)>
// CHECK-LABEL: func @conv_winograd
// CHECK-SAME: (%[[X:[^:]*]]: tensor<2x10x10x16xf32>, %[[K:[^:]*]]: tensor<3x3x16x32xf32>
// CHECK: %[[U0:.*]] = bufferization.alloc_tensor() : tensor<36x16x32xf32>
// CHECK: %[[U:.*]] = scf.for {{.*}} iter_args(%{{.*}} = %[[U0]])
// CHECK: vector.transfer_read %[[K]]
// CHECK: vector.transfer_write {{.*}} : vector<16xf32>, tensor<36x16x32xf32>
// CHECK: scf.for {{.*}} -> (tensor<2x8x8x32xf32>, tensor<1x8x8x32xf32>)
// CHECK: bufferization.alloc_tensor() : tensor<4x37x16xf32>
// CHECK: %[[V:.*]] = scf.for
// CHECK: vector.transfer_read %[[X]]
// CHECK: vector.fma {{.*}} : vector<16xf32>
// CHECK: vector.transfer_write {{.*}} : vector<16xf32>, tensor<4x37x16xf32>
// CHECK: %[[M:.*]] = scf.for %[[P:.*]] = %{{.*}} to %c36
// CHECK: tensor.extract_slice %{{.*}}[0, %[[P]], 0] [4, 1, 32] [1, 1, 1] : tensor<4x37x32xf32> to tensor<4x32xf32>
// CHECK-DAG: vector.transfer_read %[[V]][%{{.*}}, %[[P]], %{{.*}}]{{.*}} : tensor<4x37x16xf32>, vector<4x1xf32>
// CHECK-DAG: vector.transfer_read %[[U]][%[[P]], %{{.*}}, %{{.*}}]{{.*}} : tensor<36x16x32xf32>, vector<32xf32>
// CHECK: vector.contract {{.*}} : vector<4x1xf32>, vector<1x32xf32> into vector<4x32xf32>
// CHECK: vector.transfer_read %[[M]]{{.*}} : tensor<4x37x32xf32>, vector<16xf32>
// CHECK: vector.transfer_write {{.*}} : vector<16xf32>, tensor<1x8x8x32xf32>
// CHECK: arith.maximumf {{.*}} : vector<32xf32>
// CHECK: tensor.insert_slice {{.*}} [1, 8, 8, 32] [1, 1, 1, 1] : tensor<1x8x8x32xf32> into tensor<2x8x8x32xf32>
// CHECK-NOT: linalg.
// CHECK: return
func.func @conv_winograd(%x: tensor<2x10x10x16xf32>, %k: tensor<3x3x16x32xf32>, %b: tensor<32xf32>) -> tensor<2x8x8x32xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<2x8x8x32xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<2x8x8x32xf32>) -> tensor<2x8x8x32xf32>
  %2 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %k : tensor<2x10x10x16xf32>, tensor<3x3x16x32xf32>) outs(%1 : tensor<2x8x8x32xf32>) -> tensor<2x8x8x32xf32>
  %3 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%2, %b : tensor<2x8x8x32xf32>, tensor<32xf32>) outs(%0 : tensor<2x8x8x32xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %4 = arith.addf %in, %in_0 : f32
    %5 = arith.maximumf %4, %cst : f32
    linalg.yield %5 : f32
  } -> tensor<2x8x8x32xf32>
  return %3 : tensor<2x8x8x32xf32>
}

// -----

// A 6 x 6 output, even but not a multiple of 4: F(4x4, 3x3) on its 4 x 4
// block (one tile, 36 positions), F(2x2, 3x3) on the 4 x 2 strip to its
// right (2 tiles) and the 2 x 6 strip below (3 tiles), each with its own
// V and M, all written into the image's outputs before they are inserted.
// CHECK-LABEL: func @conv_winograd_blocks
// CHECK-SAME: (%[[X:[^:]*]]: tensor<2x8x8x16xf32>
// CHECK-DAG: bufferization.alloc_tensor() : tensor<36x16x32xf32>
// CHECK-DAG: bufferization.alloc_tensor() : tensor<16x16x32xf32>
// CHECK: scf.for {{.*}} -> (tensor<2x6x6x32xf32>)
// CHECK: bufferization.alloc_tensor() : tensor<1x37x16xf32>
// CHECK: vector.fma
// CHECK: bufferization.alloc_tensor() : tensor<2x17x16xf32>
// CHECK: vector.contract {{.*}} : vector<2x1xf32>, vector<1x32xf32> into vector<2x32xf32>
// CHECK: bufferization.alloc_tensor() : tensor<3x17x16xf32>
// CHECK: vector.contract {{.*}} : vector<3x1xf32>, vector<1x32xf32> into vector<3x32xf32>
// CHECK: tensor.insert_slice {{.*}} [1, 6, 6, 32] [1, 1, 1, 1] : tensor<1x6x6x32xf32> into tensor<2x6x6x32xf32>
// CHECK-NOT: linalg.
// CHECK: return
func.func @conv_winograd_blocks(%x: tensor<2x8x8x16xf32>, %k: tensor<3x3x16x32xf32>) -> tensor<2x6x6x32xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<2x6x6x32xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<2x6x6x32xf32>) -> tensor<2x6x6x32xf32>
  %2 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %k : tensor<2x8x8x16xf32>, tensor<3x3x16x32xf32>) outs(%1 : tensor<2x6x6x32xf32>) -> tensor<2x6x6x32xf32>
  return %2 : tensor<2x6x6x32xf32>
}

// -----

// A 2 x 6 output has no block of 4 x 4: F(2x2, 3x3) throughout, 3 tiles of
// 4x4 inputs whose transform is additions and subtractions only.
// CHECK-LABEL: func @conv_winograd_2x2
// CHECK-SAME: (%[[X:[^:]*]]: tensor<2x4x8x16xf32>
// CHECK: bufferization.alloc_tensor() : tensor<16x16x32xf32>
// CHECK-NOT: tensor<36x
// CHECK: scf.for {{.*}} -> (tensor<2x2x6x32xf32>)
// CHECK: vector.transfer_read %[[X]]
// CHECK-NOT: vector.fma
// CHECK: vector.transfer_write {{.*}} : vector<16xf32>, tensor<3x17x16xf32>
// CHECK: vector.contract {{.*}} : vector<3x1xf32>, vector<1x32xf32> into vector<3x32xf32>
// CHECK: vector.transfer_read {{.*}} : tensor<3x17x32xf32>, vector<16xf32>
// CHECK-NOT: linalg.
// CHECK: return
func.func @conv_winograd_2x2(%x: tensor<2x4x8x16xf32>, %k: tensor<3x3x16x32xf32>) -> tensor<2x2x6x32xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<2x2x6x32xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<2x2x6x32xf32>) -> tensor<2x2x6x32xf32>
  %2 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %k : tensor<2x4x8x16xf32>, tensor<3x3x16x32xf32>) outs(%1 : tensor<2x2x6x32xf32>) -> tensor<2x2x6x32xf32>
  return %2 : tensor<2x2x6x32xf32>
}

// -----

// A padded input (an input gradient's) is padded image by image: the border
// of one carried image is filled once, and each image is copied into its
// interior, where the transform reads it. The batch is never padded.
// CHECK-LABEL: func @conv_winograd_padded
// CHECK-SAME: (%[[X:[^:]*]]: tensor<2x4x4x16xf32>
// CHECK-NOT: tensor.pad
// CHECK: %[[IMAGE:.*]] = bufferization.alloc_tensor() : tensor<1x8x8x16xf32>
// CHECK: %[[BORDER:.*]] = scf.for {{.*}} iter_args(%{{.*}} = %[[IMAGE]])
// CHECK: scf.for %[[N:.*]] = {{.*}} iter_args(%{{.*}} = %{{.*}}, %[[PADDED:.*]] = %[[BORDER]])
// CHECK: %[[INTERIOR:.*]] = tensor.extract_slice %[[PADDED]][0, 2, 2, 0] [1, 4, 4, 16]
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %[[INTERIOR]])
// CHECK: vector.transfer_read %[[X]][%[[N]],
// CHECK: %[[COPIED:.*]] = tensor.insert_slice %{{.*}} into %[[PADDED]][0, 2, 2, 0] [1, 4, 4, 16]
// CHECK: vector.transfer_read %[[COPIED]]
// CHECK: scf.yield %{{.*}}, %[[COPIED]]
// CHECK-NOT: tensor<2x8x8x16xf32>
// CHECK: return
func.func @conv_winograd_padded(%x: tensor<2x4x4x16xf32>, %k: tensor<3x3x16x32xf32>) -> tensor<2x6x6x32xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %p = tensor.pad %x low[0, 2, 2, 0] high[0, 2, 2, 0] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %cst : f32
  } : tensor<2x4x4x16xf32> to tensor<2x8x8x16xf32>
  %0 = tensor.empty() : tensor<2x6x6x32xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<2x6x6x32xf32>) -> tensor<2x6x6x32xf32>
  %2 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%p, %k : tensor<2x8x8x16xf32>, tensor<3x3x16x32xf32>) outs(%1 : tensor<2x6x6x32xf32>) -> tensor<2x6x6x32xf32>
  return %2 : tensor<2x6x6x32xf32>
}

// -----

// A 56 x 56 output: an image's V and M for F(4x4) (196 tiles x 37 x (16 + 32)
// floats, 1.4 MiB) would not fit in L2, so it stays direct.
// CHECK-LABEL: func @conv_winograd_large
// CHECK-NOT: alloc_tensor
// CHECK: vector.contract {{.*}} : vector<8x1xf32>, vector<1x32xf32> into vector<8x32xf32>
// CHECK-NOT: linalg.conv
// CHECK: return
func.func @conv_winograd_large(%x: tensor<1x58x58x16xf32>, %k: tensor<3x3x16x32xf32>) -> tensor<1x56x56x32xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<1x56x56x32xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<1x56x56x32xf32>) -> tensor<1x56x56x32xf32>
  %2 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %k : tensor<1x58x58x16xf32>, tensor<3x3x16x32xf32>) outs(%1 : tensor<1x56x56x32xf32>) -> tensor<1x56x56x32xf32>
  return %2 : tensor<1x56x56x32xf32>
}

// -----

// Without winograd=true (the default), the direct form: loops over tiles of
// 8 columns.
// NOWINO-LABEL: func @conv_winograd_off
// NOWINO-NOT: alloc_tensor
// NOWINO: vector.contract {{.*}} : vector<8x1xf32>, vector<1x32xf32> into vector<8x32xf32>
// NOWINO-NOT: linalg.conv
// NOWINO: return
func.func @conv_winograd_off(%x: tensor<2x10x10x16xf32>, %k: tensor<3x3x16x32xf32>) -> tensor<2x8x8x32xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<2x8x8x32xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<2x8x8x32xf32>) -> tensor<2x8x8x32xf32>
  %2 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %k : tensor<2x10x10x16xf32>, tensor<3x3x16x32xf32>) outs(%1 : tensor<2x8x8x32xf32>) -> tensor<2x8x8x32xf32>
  return %2 : tensor<2x8x8x32xf32>
}

// -----

// The seed CNN's backward pass into its first convolution: the input
// gradient (Winograd, padded image by image, the ReLU mask per image) and
// the single-channel filter gradient with its bias gradient are two loops
// over the images; they become one, the masked gradient passes image by
// image in a buffer of one image, and the batch-sized tensor is gone.
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#bias = affine_map<(d0, d1, d2, d3) -> (d3)>
#fg_x = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d0 + d5, d1 + d6, d2)>
#fg_g = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d5, d6, d3)>
#fg_w = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func @image_loops_fused
// CHECK-NOT: tensor.empty() : tensor<2x10x10x16xf32>
// CHECK: scf.for {{.*}} -> (tensor<1x10x10x16xf32>, tensor<1x12x12x16xf32>, tensor<9x16xf32>, tensor<16xf32>)
// CHECK: bufferization.alloc_tensor() : tensor<1x10x10x16xf32>
// CHECK: scf.yield {{.*}} : tensor<1x10x10x16xf32>, tensor<1x12x12x16xf32>, tensor<9x16xf32>, tensor<16xf32>
// CHECK-NOT: scf.for
// CHECK: return
func.func @image_loops_fused(%dy: tensor<2x8x8x16xf32>, %k: tensor<3x3x16x16xf32>, %a1: tensor<2x10x10x16xf32>, %x: tensor<2x12x12x1xf32>) -> (tensor<16xf32>, tensor<3x3x1x16xf32>) {
  %cst = arith.constant 0.000000e+00 : f32
  %p = tensor.pad %dy low[0, 2, 2, 0] high[0, 2, 2, 0] {
  ^bb0(%i: index, %j: index, %l: index, %m: index):
    tensor.yield %cst : f32
  } : tensor<2x8x8x16xf32> to tensor<2x12x12x16xf32>
  %e = tensor.empty() : tensor<2x10x10x16xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<2x10x10x16xf32>) -> tensor<2x10x10x16xf32>
  %dx = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%p, %k : tensor<2x12x12x16xf32>, tensor<3x3x16x16xf32>) outs(%f : tensor<2x10x10x16xf32>) -> tensor<2x10x10x16xf32>
  %e2 = tensor.empty() : tensor<2x10x10x16xf32>
  %dz = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%a1, %dx : tensor<2x10x10x16xf32>, tensor<2x10x10x16xf32>) outs(%e2 : tensor<2x10x10x16xf32>) {
  ^bb0(%in: f32, %in_12: f32, %out: f32):
    %81 = arith.cmpf ogt, %in, %cst : f32
    %82 = arith.select %81, %in_12, %cst : f32
    linalg.yield %82 : f32
  } -> tensor<2x10x10x16xf32>
  %be = tensor.empty() : tensor<16xf32>
  %bf = linalg.fill ins(%cst : f32) outs(%be : tensor<16xf32>) -> tensor<16xf32>
  %db = linalg.generic {indexing_maps = [#id, #bias], iterator_types = ["reduction", "reduction", "reduction", "parallel"]} ins(%dz : tensor<2x10x10x16xf32>) outs(%bf : tensor<16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %81 = arith.addf %out, %in : f32
    linalg.yield %81 : f32
  } -> tensor<16xf32>
  %we = tensor.empty() : tensor<3x3x1x16xf32>
  %wf = linalg.fill ins(%cst : f32) outs(%we : tensor<3x3x1x16xf32>) -> tensor<3x3x1x16xf32>
  %dw = linalg.generic {indexing_maps = [#fg_x, #fg_g, #fg_w], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%x, %dz : tensor<2x12x12x1xf32>, tensor<2x10x10x16xf32>) outs(%wf : tensor<3x3x1x16xf32>) {
  ^bb0(%in: f32, %in_12: f32, %out: f32):
    %81 = arith.mulf %in, %in_12 : f32
    %82 = arith.addf %out, %81 : f32
    linalg.yield %82 : f32
  } -> tensor<3x3x1x16xf32>
  return %db, %dw : tensor<16xf32>, tensor<3x3x1x16xf32>
}

// -----

// A 2x2 max pool of a Winograd convolution's activation runs in the
// convolution's image loop, on the image just computed, its output filled
// per image. Nothing else reads the activation, so no batch of it is kept:
// each image goes to a buffer of one image.
#pool_id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#pool_bias = affine_map<(d0, d1, d2, d3) -> (d3)>
// CHECK-LABEL: func @image_loop_pool
// CHECK-NOT: tensor<2x8x8x16xf32>
// CHECK: %[[POOLED:.*]] = bufferization.alloc_tensor() : tensor<2x4x4x16xf32>
// CHECK: scf.for %[[N:.*]] = {{.*}} iter_args({{.*}}, %[[ACC:.*]] = %[[POOLED]]) -> (tensor<1x8x8x16xf32>, tensor<2x4x4x16xf32>)
// CHECK: %[[IMAGE:.*]] = bufferization.alloc_tensor() : tensor<1x8x8x16xf32>
// CHECK: %[[ACTIVATION:.*]] = scf.for {{.*}} -> (tensor<1x8x8x16xf32>)
// CHECK: %[[TILE:.*]] = tensor.extract_slice %[[ACC]][%[[N]], 0, 0, 0] [1, 4, 4, 16]
// CHECK: vector.transfer_write %{{.*}} : vector<16xf32>, tensor<1x4x4x16xf32>
// CHECK: vector.transfer_read %[[ACTIVATION]]
// CHECK: arith.maximumf
// CHECK: tensor.insert_slice %{{.*}} into %[[ACC]][%[[N]], 0, 0, 0] [1, 4, 4, 16]
// CHECK-NOT: tensor<2x8x8x16xf32>
// CHECK: return
func.func @image_loop_pool(%x: tensor<2x10x10x16xf32>, %k: tensor<3x3x16x16xf32>, %b: tensor<16xf32>) -> tensor<2x4x4x16xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<2x8x8x16xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<2x8x8x16xf32>) -> tensor<2x8x8x16xf32>
  %y = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %k : tensor<2x10x10x16xf32>, tensor<3x3x16x16xf32>) outs(%f : tensor<2x8x8x16xf32>) -> tensor<2x8x8x16xf32>
  %e2 = tensor.empty() : tensor<2x8x8x16xf32>
  %a = linalg.generic {indexing_maps = [#pool_id, #pool_bias, #pool_id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%y, %b : tensor<2x8x8x16xf32>, tensor<16xf32>) outs(%e2 : tensor<2x8x8x16xf32>) {
  ^bb0(%in: f32, %c: f32, %out: f32):
    %s = arith.addf %in, %c : f32
    %r = arith.maximumf %s, %cst : f32
    linalg.yield %r : f32
  } -> tensor<2x8x8x16xf32>
  %w = tensor.empty() : tensor<2x2xf32>
  %pe = tensor.empty() : tensor<2x4x4x16xf32>
  %pf = linalg.fill ins(%ninf : f32) outs(%pe : tensor<2x4x4x16xf32>) -> tensor<2x4x4x16xf32>
  %p = linalg.pooling_nhwc_max {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ins(%a, %w : tensor<2x8x8x16xf32>, tensor<2x2xf32>) outs(%pf : tensor<2x4x4x16xf32>) -> tensor<2x4x4x16xf32>
  return %p : tensor<2x4x4x16xf32>
}

// -----

// A pool's argmax (fuse.max_pool2d_indices: the window offsets as strided
// maps) joins the same image loop as the pool, and reads the image through
// strided slices, which vectorize (and fold into the vector reads). Neither
// keeps a batch of the activation: each image goes to a buffer of one.
#ix_id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#ix_bias = affine_map<(d0, d1, d2, d3) -> (d3)>
#ix_00 = affine_map<(d0, d1, d2, d3) -> (d0, d1 * 2, d2 * 2, d3)>
#ix_01 = affine_map<(d0, d1, d2, d3) -> (d0, d1 * 2, d2 * 2 + 1, d3)>
#ix_10 = affine_map<(d0, d1, d2, d3) -> (d0, d1 * 2 + 1, d2 * 2, d3)>
#ix_11 = affine_map<(d0, d1, d2, d3) -> (d0, d1 * 2 + 1, d2 * 2 + 1, d3)>
// CHECK-LABEL: func @image_loop_pool_indices
// CHECK-NOT: tensor<2x8x8x16xf32>
// CHECK: scf.for %[[N:.*]] = {{.*}} -> (tensor<1x8x8x16xf32>, tensor<2x4x4x16xf32>, tensor<2x4x4x16xi8>)
// CHECK: arith.maximumf
// CHECK: %[[W00:.*]] = vector.transfer_read {{.*}} : tensor<1x8x8x16xf32>, vector<16xf32>
// CHECK: %[[W01:.*]] = vector.transfer_read {{.*}} : tensor<1x8x8x16xf32>, vector<16xf32>
// CHECK: arith.cmpf ogt, %[[W01]], %[[W00]] : vector<16xf32>
// CHECK: vector.transfer_write %{{.*}} : vector<16xi8>, tensor<1x4x4x16xi8>
// CHECK-NOT: tensor<2x8x8x16xf32>
// CHECK: return
func.func @image_loop_pool_indices(%x: tensor<2x10x10x16xf32>, %k: tensor<3x3x16x16xf32>, %bias: tensor<16xf32>) -> (tensor<2x4x4x16xf32>, tensor<2x4x4x16xi8>) {
  %cst = arith.constant 0.000000e+00 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<2x8x8x16xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<2x8x8x16xf32>) -> tensor<2x8x8x16xf32>
  %h = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %k : tensor<2x10x10x16xf32>, tensor<3x3x16x16xf32>) outs(%f : tensor<2x8x8x16xf32>) -> tensor<2x8x8x16xf32>
  %e2 = tensor.empty() : tensor<2x8x8x16xf32>
  %y = linalg.generic {indexing_maps = [#ix_id, #ix_bias, #ix_id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%h, %bias : tensor<2x8x8x16xf32>, tensor<16xf32>) outs(%e2 : tensor<2x8x8x16xf32>) {
  ^bb0(%in: f32, %c: f32, %out: f32):
    %s = arith.addf %in, %c : f32
    linalg.yield %s : f32
  } -> tensor<2x8x8x16xf32>
  %w = tensor.empty() : tensor<2x2xf32>
  %pe = tensor.empty() : tensor<2x4x4x16xf32>
  %pf = linalg.fill ins(%ninf : f32) outs(%pe : tensor<2x4x4x16xf32>) -> tensor<2x4x4x16xf32>
  %p = linalg.pooling_nhwc_max {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ins(%y, %w : tensor<2x8x8x16xf32>, tensor<2x2xf32>) outs(%pf : tensor<2x4x4x16xf32>) -> tensor<2x4x4x16xf32>
  %ie = tensor.empty() : tensor<2x4x4x16xi8>
  %i = linalg.generic {indexing_maps = [#ix_00, #ix_01, #ix_10, #ix_11, #ix_id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%y, %y, %y, %y : tensor<2x8x8x16xf32>, tensor<2x8x8x16xf32>, tensor<2x8x8x16xf32>, tensor<2x8x8x16xf32>) outs(%ie : tensor<2x4x4x16xi8>) {
  ^bb0(%a: f32, %b: f32, %c: f32, %d: f32, %out: i8):
    %c0 = arith.constant 0 : i8
    %c1 = arith.constant 1 : i8
    %c2 = arith.constant 2 : i8
    %c3 = arith.constant 3 : i8
    %g1 = arith.cmpf ogt, %b, %a : f32
    %m1 = arith.select %g1, %b, %a : f32
    %i1 = arith.select %g1, %c1, %c0 : i8
    %g2 = arith.cmpf ogt, %c, %m1 : f32
    %m2 = arith.select %g2, %c, %m1 : f32
    %i2 = arith.select %g2, %c2, %i1 : i8
    %g3 = arith.cmpf ogt, %d, %m2 : f32
    %i3 = arith.select %g3, %c3, %i2 : i8
    linalg.yield %i3 : i8
  } -> tensor<2x4x4x16xi8>
  return %p, %i : tensor<2x4x4x16xf32>, tensor<2x4x4x16xi8>
}

// -----

// An element-wise producer that reads less than half the bytes it writes
// (a pool's gradient, here a broadcast) is computed in the image loop that
// reads it, on the loop's image: its batch is never stored.
#pf_id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#pf_row = affine_map<(d0, d1, d2, d3) -> (d0, d3)>
// CHECK-LABEL: func @image_loop_producer
// CHECK-NOT: tensor<2x10x10x16xf32>
// CHECK: scf.for %[[N:.*]] = %c0 to %c2
// CHECK: %[[BUFFER:.*]] = bufferization.alloc_tensor() : tensor<1x10x10x16xf32>
// CHECK: %[[IMAGE:.*]] = scf.for {{.*}} iter_args(%{{.*}} = %[[BUFFER]]) -> (tensor<1x10x10x16xf32>)
// CHECK: vector.transfer_read %{{.*}}[%[[N]], %{{.*}}]{{.*}} : tensor<2x16xf32>, vector<16xf32>
// CHECK: arith.maximumf
// CHECK: vector.transfer_read %[[IMAGE]]
// CHECK-NOT: tensor<2x10x10x16xf32>
// CHECK: return
func.func @image_loop_producer(%v: tensor<2x16xf32>, %k: tensor<3x3x16x16xf32>) -> tensor<2x8x8x16xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %e0 = tensor.empty() : tensor<2x10x10x16xf32>
  %x = linalg.generic {indexing_maps = [#pf_row, #pf_id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%v : tensor<2x16xf32>) outs(%e0 : tensor<2x10x10x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.maximumf %in, %cst : f32
    linalg.yield %r : f32
  } -> tensor<2x10x10x16xf32>
  %e = tensor.empty() : tensor<2x8x8x16xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<2x8x8x16xf32>) -> tensor<2x8x8x16xf32>
  %y = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %k : tensor<2x10x10x16xf32>, tensor<3x3x16x16xf32>) outs(%f : tensor<2x8x8x16xf32>) -> tensor<2x8x8x16xf32>
  return %y : tensor<2x8x8x16xf32>
}

// -----

// A producer that reads as many bytes as it writes is computed once, for
// the batch, before the loop.
#pk_id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func @image_loop_producer_kept
// CHECK: %[[X:.*]] = scf.for {{.*}} -> (tensor<2x10x10x16xf32>)
// CHECK: arith.maximumf
// CHECK: scf.for {{.*}} -> (tensor<2x8x8x16xf32>)
// CHECK: vector.transfer_read %[[X]]
// CHECK: return
func.func @image_loop_producer_kept(%v: tensor<2x10x10x16xf32>, %k: tensor<3x3x16x16xf32>) -> tensor<2x8x8x16xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %e0 = tensor.empty() : tensor<2x10x10x16xf32>
  %x = linalg.generic {indexing_maps = [#pk_id, #pk_id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%v : tensor<2x10x10x16xf32>) outs(%e0 : tensor<2x10x10x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.maximumf %in, %cst : f32
    linalg.yield %r : f32
  } -> tensor<2x10x10x16xf32>
  %e = tensor.empty() : tensor<2x8x8x16xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<2x8x8x16xf32>) -> tensor<2x8x8x16xf32>
  %y = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %k : tensor<2x10x10x16xf32>, tensor<3x3x16x16xf32>) outs(%f : tensor<2x8x8x16xf32>) -> tensor<2x8x8x16xf32>
  return %y : tensor<2x8x8x16xf32>
}

// -----

// A sum over the batch (its first loop a reduction) does not compute image
// by image: it stays after the convolution's image loop, which stores the
// batch.
#nid = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#nsum = affine_map<(d0, d1, d2, d3) -> (d3)>
// CHECK-LABEL: func @image_loop_batch_sum
// CHECK: %[[Y:.*]] = scf.for {{.*}} -> (tensor<2x8x8x16xf32>)
// CHECK: scf.yield {{.*}} : tensor<2x8x8x16xf32>
// CHECK: scf.for {{.*}} -> (tensor<16xf32>)
// CHECK: vector.transfer_read %[[Y]]
// CHECK: return
func.func @image_loop_batch_sum(%x: tensor<2x10x10x16xf32>, %k: tensor<3x3x16x16xf32>) -> tensor<16xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %e = tensor.empty() : tensor<2x8x8x16xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<2x8x8x16xf32>) -> tensor<2x8x8x16xf32>
  %y = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %k : tensor<2x10x10x16xf32>, tensor<3x3x16x16xf32>) outs(%f : tensor<2x8x8x16xf32>) -> tensor<2x8x8x16xf32>
  %se = tensor.empty() : tensor<16xf32>
  %sf = linalg.fill ins(%cst : f32) outs(%se : tensor<16xf32>) -> tensor<16xf32>
  %s = linalg.generic {indexing_maps = [#nid, #nsum], iterator_types = ["reduction", "reduction", "reduction", "parallel"]} ins(%y : tensor<2x8x8x16xf32>) outs(%sf : tensor<16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %a = arith.addf %out, %in : f32
    linalg.yield %a : f32
  } -> tensor<16xf32>
  return %s : tensor<16xf32>
}

// -----

// An op that reads the batch's first image for every image (the first dim
// of an operand not indexed by the image) does not compute image by image:
// it stays after the convolution's image loop and reads the stored batch.
#first = affine_map<(d0, d1, d2, d3) -> (0, d1, d2, d3)>
#all = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func @image_loop_first_image
// CHECK: %[[Y:.*]] = scf.for {{.*}} -> (tensor<2x8x8x16xf32>)
// CHECK: scf.yield {{.*}} : tensor<2x8x8x16xf32>
// CHECK: vector.transfer_read %[[Y]][%c0,
// CHECK: return
func.func @image_loop_first_image(%x: tensor<2x10x10x16xf32>, %k: tensor<3x3x16x16xf32>) -> tensor<2x8x8x16xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %e = tensor.empty() : tensor<2x8x8x16xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<2x8x8x16xf32>) -> tensor<2x8x8x16xf32>
  %y = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %k : tensor<2x10x10x16xf32>, tensor<3x3x16x16xf32>) outs(%f : tensor<2x8x8x16xf32>) -> tensor<2x8x8x16xf32>
  %e2 = tensor.empty() : tensor<2x8x8x16xf32>
  %z = linalg.generic {indexing_maps = [#first, #all, #all], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%y, %y : tensor<2x8x8x16xf32>, tensor<2x8x8x16xf32>) outs(%e2 : tensor<2x8x8x16xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %s = arith.subf %b, %a : f32
    linalg.yield %s : f32
  } -> tensor<2x8x8x16xf32>
  return %z : tensor<2x8x8x16xf32>
}
