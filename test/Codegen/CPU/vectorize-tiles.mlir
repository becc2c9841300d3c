// RUN: fuse-opt %s --fuse-vectorize-tiles --split-input-file | FileCheck %s
// RUN: fuse-opt %s --fuse-vectorize-tiles --split-input-file | FileCheck %s --check-prefix=GLOBAL

// No config survives the pass.
// GLOBAL-NOT: lowering_config

// A partial tile is vectorized with masks of its config's vector level,
// which fold into the transfers.
// CHECK-LABEL: func @masked
// CHECK: %[[MASK:.*]] = vector.create_mask %{{.*}} : vector<64xi1>
// CHECK: vector.transfer_read %{{.*}}, %[[MASK]] {in_bounds = [true]} : tensor<?xf32>, vector<64xf32>
// CHECK: math.exp %{{.*}} : vector<64xf32>
// CHECK: vector.transfer_write %{{.*}}, %[[MASK]] {in_bounds = [true]} : vector<64xf32>, tensor<?xf32>
func.func @masked(%x: tensor<?xf32>, %y: tensor<?xf32>) -> tensor<?xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                       iterator_types = ["parallel"],
                       fuse.lowering_config = #fuse.lowering_config<strategy = elementwise, distribution = [0], cache = [0], registers = [64], vector = [64]>}
      ins(%x : tensor<?xf32>) outs(%y : tensor<?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %e = math.exp %in : f32
    linalg.yield %e : f32
  } -> tensor<?xf32>
  return %r : tensor<?xf32>
}

// -----

// A dynamic op without a config (none of the strategy's tiles) stays.
// CHECK-LABEL: func @no_config
// CHECK: linalg.generic
func.func @no_config(%x: tensor<?xf32>, %y: tensor<?xf32>) -> tensor<?xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                       iterator_types = ["parallel"]}
      ins(%x : tensor<?xf32>) outs(%y : tensor<?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %e = math.exp %in : f32
    linalg.yield %e : f32
  } -> tensor<?xf32>
  return %r : tensor<?xf32>
}

// -----

// A static tile (here a register tile of a matmul) is vectorized whole: one
// vector.contract of a 12x1 column and a 1x32 row into the 12x32 tile.
// CHECK-LABEL: func @static
// CHECK: vector.contract {{.*}} : vector<12x1xf32>, vector<1x32xf32> into vector<12x32xf32>
// CHECK-NOT: linalg.matmul
func.func @static(%a: tensor<12x1xf32>, %b: tensor<1x32xf32>, %c: tensor<12x32xf32>) -> tensor<12x32xf32> {
  %r = linalg.matmul {fuse.lowering_config = #fuse.lowering_config<strategy = register_tile, distribution = [], cache = [], registers = [], vector = []>}
      ins(%a, %b : tensor<12x1xf32>, tensor<1x32xf32>) outs(%c : tensor<12x32xf32>) -> tensor<12x32xf32>
  return %r : tensor<12x32xf32>
}
