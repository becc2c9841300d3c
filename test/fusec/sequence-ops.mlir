// The transformer ops from the command line: an embedding lookup with a
// learned position table, a causal mask, layer norm and gelu, compiled and
// run by fusec; an out-of-range token is an error naming the argument.
// RUN: env FUSE_CACHE_DIR=off fusec run %s --entry=embed --arg=1x3xi32=iota --arg=5x2xf32=iota | FileCheck %s --check-prefix=EMBED
// RUN: env FUSE_CACHE_DIR=off fusec run %s --entry=mask --arg=3x3xf32=ones | FileCheck %s --check-prefix=MASK
// RUN: env FUSE_CACHE_DIR=off fusec run %s --entry=norm --arg=2x4xf32=iota | FileCheck %s --check-prefix=NORM
// RUN: not env FUSE_CACHE_DIR=off fusec run %s --entry=embed --arg=2x3xi32=7 --arg=5x2xf32=iota 2>&1 | FileCheck %s --check-prefix=RANGE

func.func @embed(%tokens: tensor<?x3xi32>, %wte: tensor<5x2xf32>) -> tensor<?x3x4xf32> {
  %e = fuse.gather %wte, %tokens : (tensor<5x2xf32>, tensor<?x3xi32>) -> tensor<?x3x2xf32>
  %p = fuse.slice %e {offsets = array<i64: 0, 0, 0>} : (tensor<?x3x2xf32>) -> tensor<?x3x2xf32>
  %c = fuse.concat %e, %p {axis = 2 : i64} : (tensor<?x3x2xf32>, tensor<?x3x2xf32>) -> tensor<?x3x4xf32>
  return %c : tensor<?x3x4xf32>
}
// Tokens 0, 1, 2: rows [0, 1], [2, 3], [4, 5], each twice; token 7 of a
// 5-row table is rejected before the call.
// EMBED: result #0: tensor<1x3x4xf32> = [0, 1, 0, 1, 2, 3, 2, 3, 4, 5, 4, 5]
// RANGE: fusec run: error: argument 'tokens' (#0) of 'embed': label [0, 0] is 7, outside [0, 5) for 5 classes

func.func @mask(%x: tensor<3x3xf32>) -> tensor<3x3xf32> {
  %r = fuse.iota {axis = 0 : i64} : tensor<3x3xi32>
  %c = fuse.iota {axis = 1 : i64} : tensor<3x3xi32>
  %m = fuse.compare ge, %r, %c : (tensor<3x3xi32>, tensor<3x3xi32>) -> tensor<3x3xi1>
  %zero = fuse.constant dense<0.0> : tensor<f32>
  %y = fuse.select %m, %x, %zero : (tensor<3x3xi1>, tensor<3x3xf32>, tensor<f32>) -> tensor<3x3xf32>
  return %y : tensor<3x3xf32>
}
// MASK: result #0: tensor<3x3xf32> = [1, 0, 0, 1, 1, 0, 1, 1, 1]

func.func @norm(%x: tensor<2x4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>) {
  %s = fuse.constant dense<2.0> : tensor<4xf32>
  %b = fuse.constant dense<1.0> : tensor<4xf32>
  %y = fuse.layer_norm %x, %s, %b {epsilon = 0.0 : f64} : (tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %g = fuse.gelu %x : tensor<2x4xf32>
  return %y, %g : tensor<2x4xf32>, tensor<2x4xf32>
}
// Each row is k, k+1, k+2, k+3: (x - mean) / sqrt(1.25) * 2 + 1.
// NORM: result #0: tensor<2x4xf32> = [-1.68{{[0-9]*}}, 0.105{{[0-9]*}}, 1.89{{[0-9]*}}, 3.68{{[0-9]*}}, -1.68{{[0-9]*}}, 0.105{{[0-9]*}}, 1.89{{[0-9]*}}, 3.68{{[0-9]*}}]
// NORM: result #1: tensor<2x4xf32> = [0, 0.841{{[0-9]*}}, 1.95{{[0-9]*}}, 2.99{{[0-9]*}}, 3.99{{[0-9]*}}, 5, 6, 7]
