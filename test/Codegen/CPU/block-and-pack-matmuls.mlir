// RUN: fuse-opt %s --fuse-block-and-pack-matmuls=vector-bits=512 --split-input-file | FileCheck %s

// dot_products with 8 rows of B per tile (the config's, not the library's
// 16): per tile, a register of partial sums per row of B, one register of
// k per step, then the lane sums.
// CHECK-LABEL: func @dot_products
// CHECK: %[[C8:.*]] = arith.constant 8 : index
// CHECK: scf.for %{{.*}} step %[[C8]]
// CHECK: linalg.fill {fuse.lowering_config = #fuse.lowering_config<strategy = register_tile, {{.*}} -> tensor<1x8x16xf32>
// CHECK: %[[C16:.*]] = arith.constant 16 : index
// CHECK: scf.for %{{.*}} step %[[C16]]
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<1x16xf32>, tensor<8x16xf32>) outs(%{{.*}} : tensor<1x8x16xf32>)
// CHECK-NOT: linalg.matmul
func.func @dot_products(%a: tensor<1x128xf32>, %b: tensor<784x128xf32>) -> tensor<1x784xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x784xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x784xf32>) -> tensor<1x784xf32>
  %r = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      {fuse.lowering_config = #fuse.lowering_config<strategy = dot_products, distribution = [0, 0, 0], cache = [0, 0, 0], registers = [1, 8, 16], vector = [1, 8, 16]>}
      ins(%a, %b : tensor<1x128xf32>, tensor<784x128xf32>) outs(%f : tensor<1x784xf32>) -> tensor<1x784xf32>
  return %r : tensor<1x784xf32>
}

// -----

// matmul_tiles with a transposed B: B packed into [k, n] by a transpose
// (configured later, when it is tiled); the product keeps its config.
// CHECK-LABEL: func @transposed
// CHECK-SAME: %[[B:[^:]*]]: tensor<64x128xf32>
// CHECK: %[[T:.*]] = linalg.transpose ins(%[[B]] : tensor<64x128xf32>) outs(%{{.*}} : tensor<128x64xf32>) permutation = [1, 0]
// CHECK-NOT: lowering_config
// CHECK: linalg.matmul {fuse.lowering_config = #fuse.lowering_config<strategy = matmul_tiles, distribution = [0, 0, 0], cache = [0, 0, 0], registers = [8, 32, 1], vector = [8, 32, 1]>} ins(%{{.*}}, %[[T]] : tensor<16x128xf32>, tensor<128x64xf32>)
func.func @transposed(%a: tensor<16x128xf32>, %b: tensor<64x128xf32>) -> tensor<16x64xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x64xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<16x64xf32>) -> tensor<16x64xf32>
  %r = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      {fuse.lowering_config = #fuse.lowering_config<strategy = matmul_tiles, distribution = [0, 0, 0], cache = [0, 0, 0], registers = [8, 32, 1], vector = [8, 32, 1]>}
      ins(%a, %b : tensor<16x128xf32>, tensor<64x128xf32>) outs(%f : tensor<16x64xf32>) -> tensor<16x64xf32>
  return %r : tensor<16x64xf32>
}

// -----

// 784 columns, an odd number of registers (49): whole tiles of two
// registers over 768 columns, an edge of one register, each zeroing its
// own part and configured by the library (no config on the input; the
// whole tiles' part in two blocks of 384 columns for the threads).
// CHECK-LABEL: func @split
// CHECK: linalg.fill {{.*}} -> tensor<12x768xf32>
// CHECK: linalg.matmul {fuse.lowering_config = #fuse.lowering_config<strategy = matmul_tiles, distribution = [0, 384, 0], cache = [0, 0, 0], registers = [12, 32, 1], vector = [12, 32, 1]>} {{.*}} -> tensor<12x768xf32>
// CHECK: linalg.fill {{.*}} -> tensor<12x16xf32>
// CHECK: linalg.matmul {fuse.lowering_config = #fuse.lowering_config<strategy = matmul_tiles, distribution = [0, 0, 0], cache = [0, 0, 0], registers = [12, 16, 1], vector = [12, 16, 1]>} {{.*}} -> tensor<12x16xf32>
func.func @split(%a: tensor<12x64xf32>, %b: tensor<64x784xf32>) -> tensor<12x784xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<12x784xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<12x784xf32>) -> tensor<12x784xf32>
  %r = linalg.matmul ins(%a, %b : tensor<12x64xf32>, tensor<64x784xf32>) outs(%f : tensor<12x784xf32>) -> tensor<12x784xf32>
  return %r : tensor<12x784xf32>
}

// -----

// packed_matmul with the config's blocks (MC 60, NC 256, KC 128; the
// library's NC and KC would be 512 and 256): per block of B, its panels of
// 2 registers packed; per block of A, its panels of 12 rows; one 12 x 32
// product per pair of panels; the 4 rows left by whole panels of A meet the
// packed panels of B unpacked.
// CHECK-LABEL: func @packed
// CHECK: scf.for {{.*}} step %c256
// CHECK: scf.for {{.*}} step %c128
// CHECK: linalg.transpose ins(%{{.*}} : tensor<128x8x32xf32>) outs(%{{.*}} : tensor<8x128x32xf32>) permutation = [1, 0, 2]
// CHECK: scf.for {{.*}} to %c60{{(_[0-9]+)?}} step %c60
// CHECK: linalg.transpose ins(%{{.*}} : tensor<5x12x128xf32>) outs(%{{.*}} : tensor<5x128x12xf32>) permutation = [0, 2, 1]
// CHECK: linalg.matmul {{.*}} ins(%{{.*}} : tensor<128x12xf32>, tensor<128x32xf32>) outs(%{{.*}} : tensor<12x32xf32>)
// CHECK: linalg.matmul ins(%{{.*}} : tensor<4x128xf32>, tensor<128x32xf32>) outs(%{{.*}} : tensor<4x32xf32>)
func.func @packed(%a: tensor<64x1024xf32>, %b: tensor<1024x1024xf32>, %c: tensor<64x1024xf32>) -> tensor<64x1024xf32> {
  %r = linalg.matmul {fuse.lowering_config = #fuse.lowering_config<strategy = packed_matmul, distribution = [0, 0, 0], cache = [60, 256, 128], registers = [12, 32, 1], vector = [12, 32, 1]>}
      ins(%a, %b : tensor<64x1024xf32>, tensor<1024x1024xf32>) outs(%c : tensor<64x1024xf32>) -> tensor<64x1024xf32>
  return %r : tensor<64x1024xf32>
}

// -----

// packed_matmul distributed in blocks of 128 columns (the config's
// distribution level): an scf.forall over the 8 blocks, each running the
// nest over its columns with NC shrunk to the block (128, not 256), then
// inserting its columns of C. Every output is computed by one thread in the
// same order as without threads.
// CHECK-LABEL: func @packed_distributed
// CHECK: scf.forall (%[[FIRST:[^)]+]]) = (0) to (1024) step (128) shared_outs(%[[C:[^ ]+]] = %{{.*}}) -> (tensor<64x1024xf32>)
// CHECK: scf.for {{.*}} step %c128
// CHECK: linalg.transpose ins(%{{.*}} : tensor<128x4x32xf32>) outs(%{{.*}} : tensor<4x128x32xf32>) permutation = [1, 0, 2]
// CHECK: linalg.matmul {{.*}} ins(%{{.*}} : tensor<128x12xf32>, tensor<128x32xf32>) outs(%{{.*}} : tensor<12x32xf32>)
// CHECK: %[[BLOCK:.*]] = tensor.extract_slice %{{.*}}[0, %[[FIRST]]] [64, 128] [1, 1]
// CHECK: scf.forall.in_parallel
// CHECK-NEXT: tensor.parallel_insert_slice %[[BLOCK]] into %[[C]][0, %[[FIRST]]] [64, 128] [1, 1]
func.func @packed_distributed(%a: tensor<64x1024xf32>, %b: tensor<1024x1024xf32>, %c: tensor<64x1024xf32>) -> tensor<64x1024xf32> {
  %r = linalg.matmul {fuse.lowering_config = #fuse.lowering_config<strategy = packed_matmul, distribution = [0, 128, 0], cache = [60, 256, 128], registers = [12, 32, 1], vector = [12, 32, 1]>}
      ins(%a, %b : tensor<64x1024xf32>, tensor<1024x1024xf32>) outs(%c : tensor<64x1024xf32>) -> tensor<64x1024xf32>
  return %r : tensor<64x1024xf32>
}

// -----

// packed_matmul distributed in blocks of rows (MC 60, 4 blocks of the 240
// whole panels' rows; the 4 rows left run after them): B's block is packed
// once per NC and KC block, then an scf.forall over the blocks of rows,
// each packing its rows of A and inserting its rows of C.
// CHECK-LABEL: func @packed_rows
// CHECK: scf.for {{.*}} step %c256
// CHECK: scf.for {{.*}} step %c128
// CHECK: linalg.transpose ins(%{{.*}} : tensor<128x8x32xf32>) outs(%{{.*}} : tensor<8x128x32xf32>) permutation = [1, 0, 2]
// CHECK: scf.forall (%[[FIRST:[^)]+]]) = (0) to (240) step (60) shared_outs(%[[C:[^ ]+]] = %{{.*}}) -> (tensor<244x1024xf32>)
// CHECK: linalg.transpose ins(%{{.*}} : tensor<5x12x128xf32>) outs(%{{.*}} : tensor<5x128x12xf32>) permutation = [0, 2, 1]
// CHECK: linalg.matmul {{.*}} ins(%{{.*}} : tensor<128x12xf32>, tensor<128x32xf32>) outs(%{{.*}} : tensor<12x32xf32>)
// CHECK: %[[BLOCK:.*]] = tensor.extract_slice %{{.*}}[%[[FIRST]], 0] [60, 1024] [1, 1]
// CHECK: scf.forall.in_parallel
// CHECK-NEXT: tensor.parallel_insert_slice %[[BLOCK]] into %[[C]][%[[FIRST]], 0] [60, 1024] [1, 1]
// CHECK: linalg.matmul ins(%{{.*}} : tensor<4x128xf32>, tensor<128x32xf32>) outs(%{{.*}} : tensor<4x32xf32>)
func.func @packed_rows(%a: tensor<244x1024xf32>, %b: tensor<1024x1024xf32>, %c: tensor<244x1024xf32>) -> tensor<244x1024xf32> {
  %r = linalg.matmul {fuse.lowering_config = #fuse.lowering_config<strategy = packed_matmul, distribution = [60, 0, 0], cache = [60, 256, 128], registers = [12, 32, 1], vector = [12, 32, 1]>}
      ins(%a, %b : tensor<244x1024xf32>, tensor<1024x1024xf32>) outs(%c : tensor<244x1024xf32>) -> tensor<244x1024xf32>
  return %r : tensor<244x1024xf32>
}
