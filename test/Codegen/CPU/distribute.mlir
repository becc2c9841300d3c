// RUN: fuse-opt %s --fuse-distribute --split-input-file | FileCheck %s

// An op whose config has a distribution level becomes an scf.forall over
// those tiles; each tile keeps the other levels, its distribution zeroed.
// CHECK-LABEL: func @by_config
// CHECK: scf.forall (%[[I:.*]]) = (0) to (256) step (64) shared_outs(%[[OUT:.*]] = %{{.*}}) -> (tensor<256x1024xf32>)
// CHECK:   %[[X:.*]] = tensor.extract_slice %{{.*}}[%[[I]], 0] [64, 1024] [1, 1]
// CHECK:   %[[R:.*]] = linalg.generic {{.*}} ins(%[[X]] : tensor<64x1024xf32>)
// CHECK-SAME: fuse.lowering_config = #fuse.lowering_config<strategy = elementwise, distribution = [0, 0], cache = [0, 0], registers = [1, 64], vector = [1, 64]>
// CHECK:   scf.forall.in_parallel
// CHECK:     tensor.parallel_insert_slice %[[R]] into %[[OUT]][%[[I]], 0] [64, 1024] [1, 1]
func.func @by_config(%x: tensor<256x1024xf32>, %y: tensor<256x1024xf32>) -> tensor<256x1024xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"],
                       fuse.lowering_config = #fuse.lowering_config<strategy = elementwise, distribution = [64, 0], cache = [0, 0], registers = [1, 64], vector = [1, 64]>}
      ins(%x : tensor<256x1024xf32>) outs(%y : tensor<256x1024xf32>) {
  ^bb0(%in: f32, %out: f32):
    %e = math.exp %in : f32
    linalg.yield %e : f32
  } -> tensor<256x1024xf32>
  return %r : tensor<256x1024xf32>
}

// -----

// A reduction is split along its parallel loop only: each tile reduces its
// rows whole, so the sums do not depend on the number of threads.
// CHECK-LABEL: func @rows
// CHECK: scf.forall (%[[I:.*]]) = (0) to (512) step (32)
// CHECK:   linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
// CHECK-SAME: ins(%{{.*}} : tensor<32x1024xf32>) outs(%{{.*}} : tensor<32xf32>)
func.func @rows(%x: tensor<512x1024xf32>, %y: tensor<512xf32>) -> tensor<512xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>],
                       iterator_types = ["parallel", "reduction"],
                       fuse.lowering_config = #fuse.lowering_config<strategy = elementwise, distribution = [32, 0], cache = [0, 0], registers = [1, 64], vector = [1, 64]>}
      ins(%x : tensor<512x1024xf32>) outs(%y : tensor<512xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %in, %out : f32
    linalg.yield %s : f32
  } -> tensor<512xf32>
  return %r : tensor<512xf32>
}

// -----

// No distribution level (all zeros), or no config: left alone.
// CHECK-LABEL: func @not_distributed
// CHECK-NOT: scf.forall
// CHECK: linalg.generic
// CHECK: linalg.generic
func.func @not_distributed(%x: tensor<256x1024xf32>, %y: tensor<256x1024xf32>) -> (tensor<256x1024xf32>, tensor<256x1024xf32>) {
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"],
                       fuse.lowering_config = #fuse.lowering_config<strategy = elementwise, distribution = [0, 0], cache = [0, 0], registers = [1, 64], vector = [1, 64]>}
      ins(%x : tensor<256x1024xf32>) outs(%y : tensor<256x1024xf32>) {
  ^bb0(%in: f32, %out: f32):
    %e = math.exp %in : f32
    linalg.yield %e : f32
  } -> tensor<256x1024xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<256x1024xf32>) outs(%y : tensor<256x1024xf32>) {
  ^bb0(%in: f32, %out: f32):
    %e = math.exp %in : f32
    linalg.yield %e : f32
  } -> tensor<256x1024xf32>
  return %r, %s : tensor<256x1024xf32>, tensor<256x1024xf32>
}
