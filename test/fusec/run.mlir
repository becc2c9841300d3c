// fusec run JIT-compiles a function and calls it.
// RUN: rm -rf %t && mkdir -p %t
// RUN: env FUSE_CACHE_DIR=%t fusec run %s --entry=affine --arg=2x3xf32=iota --arg=3xf32=1.5 --stats | FileCheck %s --check-prefix=FIRST
// A second process loads the object from the disk cache: no code generation.
// RUN: env FUSE_CACHE_DIR=%t fusec run %s --entry=affine --arg=2x3xf32=iota --arg=3xf32=1.5 --stats | FileCheck %s --check-prefix=SECOND
// RUN: env FUSE_CACHE_DIR=off fusec run %s --entry=affine --arg=2x3xf32=iota --arg=3xf32=1.5 --npy-out=%t/out --print-limit=2 | FileCheck %s --check-prefix=LIMIT
// RUN: env FUSE_CACHE_DIR=off fusec run %s --entry=affine --arg=@%t/out0.npy --arg=3xf32=ones | FileCheck %s --check-prefix=NPY
// RUN: env FUSE_CACHE_DIR=off fusec run %s --entry=total --arg=4xi32=iota | FileCheck %s --check-prefix=INT

func.func @affine(%x: tensor<?x3xf32>, %b: tensor<3xf32>) -> tensor<?x3xf32> {
  %y = fuse.add %x, %b : (tensor<?x3xf32>, tensor<3xf32>) -> tensor<?x3xf32>
  return %y : tensor<?x3xf32>
}

func.func @total(%x: tensor<?xi32>) -> tensor<i32> {
  %s = fuse.reduce_sum %x {axes = array<i64: 0>} : (tensor<?xi32>) -> tensor<i32>
  return %s : tensor<i32>
}

// FIRST: result #0: tensor<2x3xf32> = [1.5, 2.5, 3.5, 4.5, 5.5, 6.5]
// FIRST: stats: signatures 1, misses 1, disk hits 0

// SECOND: result #0: tensor<2x3xf32> = [1.5, 2.5, 3.5, 4.5, 5.5, 6.5]
// SECOND: stats: signatures 1, misses 1, disk hits 1

// LIMIT: result #0: tensor<2x3xf32> = [1.5, 2.5, ... (6 elements)]  min 1.5 max 6.5 mean 4

// NPY: result #0: tensor<2x3xf32> = [2.5, 3.5, 4.5, 5.5, 6.5, 7.5]

// INT: result #0: tensor<i32> = [6]
