// RUN: fuse-opt %s --fuse-tile-registers=vector-bits=512 --split-input-file | FileCheck %s

// Tiled by the config's register level (here 2 x 32, not the library's
// 1 x 64), in its interchange order (columns outermost); the tile carries
// the config, whose vector level sizes its masks.
// CHECK-LABEL: func @by_config
// CHECK-DAG: %[[C2:.*]] = arith.constant 2 : index
// CHECK-DAG: %[[C32:.*]] = arith.constant 32 : index
// CHECK: scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %[[C32]]
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %[[C2]]
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<2x32xf32>)
// CHECK-SAME: fuse.lowering_config = #fuse.lowering_config<strategy = elementwise, distribution = [0, 0], cache = [0, 0], registers = [2, 32], vector = [2, 32], interchange = [1, 0]>
func.func @by_config(%x: tensor<8x96xf32>, %y: tensor<8x96xf32>) -> tensor<8x96xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"],
                       fuse.lowering_config = #fuse.lowering_config<strategy = elementwise, distribution = [0, 0], cache = [0, 0], registers = [2, 32], vector = [2, 32], interchange = [1, 0]>}
      ins(%x : tensor<8x96xf32>) outs(%y : tensor<8x96xf32>) {
  ^bb0(%in: f32, %out: f32):
    %e = math.exp %in : f32
    linalg.yield %e : f32
  } -> tensor<8x96xf32>
  return %r : tensor<8x96xf32>
}

// -----

// An element-wise op whose innermost loop (100) its tile (32) does not
// divide is split at the last whole tile: 3 static tiles of 2 x 32, then
// one static tile of 2 x 4 per row pair, no partial (masked) tile.
// CHECK-LABEL: func @partial_tile
// CHECK: scf.for
// CHECK: scf.for {{.*}} -> (tensor<8x96xf32>)
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<2x32xf32>)
// CHECK: scf.for
// CHECK: scf.for {{.*}} -> (tensor<8x4xf32>)
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<2x4xf32>)
// CHECK-SAME: registers = [2, 32]
// CHECK-NOT: tensor<2x?xf32>
// CHECK: return
func.func @partial_tile(%x: tensor<8x100xf32>, %y: tensor<8x100xf32>) -> tensor<8x100xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"],
                       fuse.lowering_config = #fuse.lowering_config<strategy = elementwise, distribution = [0, 0], cache = [0, 0], registers = [2, 32], vector = [2, 32]>}
      ins(%x : tensor<8x100xf32>) outs(%y : tensor<8x100xf32>) {
  ^bb0(%in: f32, %out: f32):
    %e = math.exp %in : f32
    linalg.yield %e : f32
  } -> tensor<8x100xf32>
  return %r : tensor<8x100xf32>
}

// -----

// An op a rewrite created without a config gets the library's: 4 registers
// along the innermost loop (a partial last tile of 36).
// CHECK-LABEL: func @library
// CHECK-DAG: %[[C64:.*]] = arith.constant 64 : index
// CHECK: scf.for %{{.*}} step %[[C64]]
// CHECK: linalg.fill {fuse.lowering_config = #fuse.lowering_config<strategy = elementwise, distribution = [0], cache = [0], registers = [64], vector = [64]>} {{.*}} -> tensor<?xf32>
func.func @library(%y: tensor<100xf32>) -> tensor<100xf32> {
  %zero = arith.constant 0.0 : f32
  %r = linalg.fill ins(%zero : f32) outs(%y : tensor<100xf32>) -> tensor<100xf32>
  return %r : tensor<100xf32>
}

// -----

// A register tile is not tiled again.
// CHECK-LABEL: func @register_tile
// CHECK-NOT: scf.for
// CHECK: linalg.fill {fuse.lowering_config = #fuse.lowering_config<strategy = register_tile
func.func @register_tile(%y: tensor<12x32xf32>) -> tensor<12x32xf32> {
  %zero = arith.constant 0.0 : f32
  %r = linalg.fill {fuse.lowering_config = #fuse.lowering_config<strategy = register_tile, distribution = [], cache = [], registers = [], vector = []>}
      ins(%zero : f32) outs(%y : tensor<12x32xf32>) -> tensor<12x32xf32>
  return %r : tensor<12x32xf32>
}
