// RUN: fuse-opt %s --fuse-tile-matmuls=vector-bits=512 --split-input-file | FileCheck %s

// Two bands of register tiles from the config (12 x 32 for 60 rows, 4 x 64
// for the 4 left), without a consumer: one product per band, each tile
// zeroed in registers (a register_tile fill) and run over the reduction one
// step at a time. The step products carry no config: fuse-tile-registers
// gives them their own.
// CHECK-LABEL: func @bands
// CHECK-DAG: %[[C12:.*]] = arith.constant 12 : index
// CHECK-DAG: %[[C32:.*]] = arith.constant 32 : index
// CHECK-DAG: %[[C60:.*]] = arith.constant 60 : index
// CHECK: scf.for %{{.*}} to %[[C60]] step %[[C12]]
// CHECK: scf.for %{{.*}} step %[[C32]]
// CHECK: linalg.fill {fuse.lowering_config = #fuse.lowering_config<strategy = register_tile, distribution = [], cache = [], registers = [], vector = []>} {{.*}} -> tensor<12x32xf32>
// CHECK: scf.for
// CHECK: linalg.matmul ins({{.*}} : tensor<12x1xf32>, tensor<1x32xf32>) outs({{.*}} : tensor<12x32xf32>)
// CHECK-DAG: %[[C4:.*]] = arith.constant 4 : index
// CHECK-DAG: %[[C64:.*]] = arith.constant 64 : index
// CHECK: scf.for %{{.*}} step %[[C64]]
// CHECK: linalg.fill {fuse.lowering_config = #fuse.lowering_config<strategy = register_tile, {{.*}} -> tensor<4x64xf32>
// CHECK: linalg.matmul ins({{.*}} : tensor<4x1xf32>, tensor<1x64xf32>) outs({{.*}} : tensor<4x64xf32>)
func.func @bands(%a: tensor<64x784xf32>, %b: tensor<784x128xf32>) -> tensor<64x128xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x128xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<64x128xf32>) -> tensor<64x128xf32>
  %r = linalg.matmul {fuse.lowering_config = #fuse.lowering_config<strategy = matmul_tiles, distribution = [0, 0, 0], cache = [0, 0, 0], registers = [12, 32, 1, 4, 64, 1], vector = [8, 32, 1]>}
      ins(%a, %b : tensor<64x784xf32>, tensor<784x128xf32>) outs(%f : tensor<64x128xf32>) -> tensor<64x128xf32>
  return %r : tensor<64x128xf32>
}

// -----

// A config of one band written by hand (8 x 16, not the library's): the
// product's consumer, a bias add, is fused into each tile, whose product
// fuse-tile-registers then tiles along the reduction.
// CHECK-LABEL: func @consumer
// CHECK-DAG: %[[C8:.*]] = arith.constant 8 : index
// CHECK-DAG: %[[C16:.*]] = arith.constant 16 : index
// CHECK: scf.for %{{.*}} step %[[C8]]
// CHECK: scf.for %{{.*}} step %[[C16]]
// CHECK: linalg.fill {{.*}}register_tile{{.*}} -> tensor<8x16xf32>
// CHECK: linalg.matmul ins({{.*}} : tensor<8x64xf32>, tensor<64x16xf32>) outs({{.*}} : tensor<8x16xf32>)
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<8x16xf32>, tensor<8x16xf32>) outs(%{{.*}} : tensor<8x16xf32>)
// CHECK-NOT: linalg.matmul
func.func @consumer(%a: tensor<16x64xf32>, %b: tensor<64x32xf32>, %bias: tensor<16x32xf32>) -> tensor<16x32xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x32xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<16x32xf32>) -> tensor<16x32xf32>
  %p = linalg.matmul {fuse.lowering_config = #fuse.lowering_config<strategy = matmul_tiles, distribution = [0, 0, 0], cache = [0, 0, 0], registers = [8, 16, 1], vector = [8, 16, 1]>}
      ins(%a, %b : tensor<16x64xf32>, tensor<64x32xf32>) outs(%f : tensor<16x32xf32>) -> tensor<16x32xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%p, %bias : tensor<16x32xf32>, tensor<16x32xf32>) outs(%e : tensor<16x32xf32>) {
  ^bb0(%x: f32, %y: f32, %out: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<16x32xf32>
  return %r : tensor<16x32xf32>
}

// -----

// A product fused with its consumer (a bias add) in the blocks of columns
// its config's distribution level names (32 here, not the library's 64):
// an scf.forall over the blocks, whose body runs the band's tiles of its
// columns and inserts its block of the consumer's output back.
// CHECK-LABEL: func @distributed
// CHECK: scf.forall (%[[J:.*]]) = (0) to (128) step (32) shared_outs(%[[OUT:.*]] = %{{.*}}) -> (tensor<24x128xf32>)
// CHECK: scf.for %{{.*}} iter_args(%{{.*}} = %[[OUT]])
// CHECK: arith.addi %[[J]], %{{.*}} : index
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<12x32xf32>)
// CHECK: tensor.extract_slice %{{.*}}[0, %[[J]]] [24, 32] [1, 1]
// CHECK: scf.forall.in_parallel
// CHECK: tensor.parallel_insert_slice %{{.*}} into %[[OUT]][0, %[[J]]] [24, 32] [1, 1]
func.func @distributed(%a: tensor<24x512xf32>, %b: tensor<512x128xf32>, %bias: tensor<128xf32>) -> tensor<24x128xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<24x128xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<24x128xf32>) -> tensor<24x128xf32>
  %p = linalg.matmul {fuse.lowering_config = #fuse.lowering_config<strategy = matmul_tiles, distribution = [0, 32, 0], cache = [0, 0, 0], registers = [12, 32, 1], vector = [12, 32, 1]>}
      ins(%a, %b : tensor<24x512xf32>, tensor<512x128xf32>) outs(%f : tensor<24x128xf32>) -> tensor<24x128xf32>
  %o = tensor.empty() : tensor<24x128xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%p, %bias : tensor<24x128xf32>, tensor<128xf32>) outs(%o : tensor<24x128xf32>) {
  ^bb0(%x: f32, %c: f32, %out: f32):
    %s = arith.addf %x, %c : f32
    linalg.yield %s : f32
  } -> tensor<24x128xf32>
  return %r : tensor<24x128xf32>
}

// -----

// Blocks of rows (the config's distribution level names 12): the forall
// runs over the rows, each block's band of tiles offset by its first row,
// and inserts whole rows of the consumer's output back.
// CHECK-LABEL: func @distributed_rows
// CHECK: scf.forall (%[[I:.*]]) = (0) to (24) step (12) shared_outs(%[[OUT:.*]] = %{{.*}}) -> (tensor<24x128xf32>)
// CHECK: arith.addi %[[I]], %{{.*}} : index
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<12x32xf32>)
// CHECK: tensor.extract_slice %{{.*}}[%[[I]], 0] [12, 128] [1, 1]
// CHECK: scf.forall.in_parallel
// CHECK: tensor.parallel_insert_slice %{{.*}} into %[[OUT]][%[[I]], 0] [12, 128] [1, 1]
func.func @distributed_rows(%a: tensor<24x512xf32>, %b: tensor<512x128xf32>, %bias: tensor<128xf32>) -> tensor<24x128xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<24x128xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<24x128xf32>) -> tensor<24x128xf32>
  %p = linalg.matmul {fuse.lowering_config = #fuse.lowering_config<strategy = matmul_tiles, distribution = [12, 0, 0], cache = [0, 0, 0], registers = [12, 32, 1], vector = [12, 32, 1]>}
      ins(%a, %b : tensor<24x512xf32>, tensor<512x128xf32>) outs(%f : tensor<24x128xf32>) -> tensor<24x128xf32>
  %o = tensor.empty() : tensor<24x128xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%p, %bias : tensor<24x128xf32>, tensor<128xf32>) outs(%o : tensor<24x128xf32>) {
  ^bb0(%x: f32, %c: f32, %out: f32):
    %s = arith.addf %x, %c : f32
    linalg.yield %s : f32
  } -> tensor<24x128xf32>
  return %r : tensor<24x128xf32>
}

// -----

// A bf16 product without a consumer keeps its register tiles' two
// reduction steps (the pair vdpbf16ps multiplies) in both bands, tiled
// with its fill: tile products of 12x2 and 4x2 bf16, not 12x1.
// CHECK-LABEL: func @bf16_pairs_without_consumer
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<12x2xbf16>, tensor<2x32xbf16>) outs(%{{.*}} : tensor<12x32xf32>)
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<4x2xbf16>, tensor<2x64xbf16>) outs(%{{.*}} : tensor<4x64xf32>)
// CHECK-NOT: tensor<12x1xbf16>
func.func @bf16_pairs_without_consumer(%a: tensor<16x64xbf16>, %b: tensor<64x128xbf16>) -> tensor<16x128xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x128xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<16x128xf32>) -> tensor<16x128xf32>
  %p = linalg.matmul {fuse.lowering_config = #fuse.lowering_config<strategy = matmul_tiles, distribution = [0, 0, 0], cache = [0, 0, 0], registers = [12, 32, 2, 4, 64, 2], vector = [8, 32, 1]>}
      ins(%a, %b : tensor<16x64xbf16>, tensor<64x128xbf16>) outs(%f : tensor<16x128xf32>) -> tensor<16x128xf32>
  return %p : tensor<16x128xf32>
}

// -----

// Blocks of the reduction (the config's distribution level names 256 of
// 512): an scf.forall over the 2 blocks, each packing its columns of A,
// multiplying them by its rows of B into a zero fill of its own and copying
// the tiles into its rows of the partial sums; then the bias add reads the
// blocks' sums in block order, fused into one generic.
// CHECK-LABEL: func @reduction_blocks
// CHECK: %[[P:.*]] = scf.forall (%[[B:.*]]) in (2) shared_outs(%[[OUT:.*]] = %{{.*}}) -> (tensor<48x128xf32>)
// CHECK: %[[K:.*]] = arith.muli %[[B]], %{{.*}} : index
// CHECK: tensor.extract_slice %{{.*}}[0, %[[K]]] [24, 256] [1, 1] : tensor<24x512xf32> to tensor<24x256xf32>
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<24x256xf32>)
// CHECK: tensor.extract_slice %{{.*}}[%[[K]], 0] [256, 128] [1, 1] : tensor<512x128xf32> to tensor<256x128xf32>
// CHECK: scf.forall.in_parallel
// CHECK: tensor.parallel_insert_slice %{{.*}} into %[[OUT]][%{{.*}}, 0] [24, 128] [1, 1]
// CHECK-DAG: %[[P0:.*]] = tensor.extract_slice %[[P]][0, 0] [24, 128] [1, 1]
// CHECK-DAG: %[[P1:.*]] = tensor.extract_slice %[[P]][24, 0] [24, 128] [1, 1]
// CHECK: linalg.generic {{.*}} ins(%[[P0]], %[[P1]], %{{.*}} : tensor<24x128xf32>, tensor<24x128xf32>, tensor<128xf32>)
// CHECK-NEXT: ^bb0(%[[X0:.*]]: f32, %[[X1:.*]]: f32, %[[C:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[X0]], %[[X1]] : f32
// CHECK-NEXT: arith.addf %[[S]], %[[C]] : f32
// CHECK-NOT: linalg.matmul ins(%{{.*}} : tensor<24x512xf32>
func.func @reduction_blocks(%a: tensor<24x512xf32>, %b: tensor<512x128xf32>, %bias: tensor<128xf32>) -> tensor<24x128xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<24x128xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<24x128xf32>) -> tensor<24x128xf32>
  %p = linalg.matmul {fuse.lowering_config = #fuse.lowering_config<strategy = matmul_tiles, distribution = [0, 0, 256], cache = [0, 0, 0], registers = [12, 32, 1], vector = [12, 32, 1]>}
      ins(%a, %b : tensor<24x512xf32>, tensor<512x128xf32>) outs(%f : tensor<24x128xf32>) -> tensor<24x128xf32>
  %o = tensor.empty() : tensor<24x128xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%p, %bias : tensor<24x128xf32>, tensor<128xf32>) outs(%o : tensor<24x128xf32>) {
  ^bb0(%x: f32, %c: f32, %out: f32):
    %s = arith.addf %x, %c : f32
    linalg.yield %s : f32
  } -> tensor<24x128xf32>
  return %r : tensor<24x128xf32>
}

// -----

// The same blocks with too little work for the threads (one row: 32K
// multiply-adds a block): an scf.for runs them in turn, with the same
// partial sums, added in the same order.
// CHECK-LABEL: func @reduction_blocks_in_turn
// CHECK-NOT: scf.forall
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%{{.*}} = %{{.*}}) -> (tensor<2x128xf32>)
// CHECK: scf.yield
// CHECK: linalg.generic
// CHECK: arith.addf
func.func @reduction_blocks_in_turn(%a: tensor<1x512xf32>, %b: tensor<512x128xf32>) -> tensor<1x128xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x128xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x128xf32>) -> tensor<1x128xf32>
  %p = linalg.matmul {fuse.lowering_config = #fuse.lowering_config<strategy = matmul_tiles, distribution = [0, 0, 256], cache = [0, 0, 0], registers = [1, 128, 1], vector = [1, 128, 1]>}
      ins(%a, %b : tensor<1x512xf32>, tensor<512x128xf32>) outs(%f : tensor<1x128xf32>) -> tensor<1x128xf32>
  return %p : tensor<1x128xf32>
}
