// fusec run JIT-compiles a function and calls it.
// RUN: rm -rf %t && mkdir -p %t
// RUN: env FUSE_CACHE_DIR=%t fusec run %s --entry=affine --arg=2x3xf32=iota --arg=3xf32=1.5 --stats | FileCheck %s --check-prefix=FIRST
// A second process loads the object from the disk cache: no code generation.
// RUN: env FUSE_CACHE_DIR=%t fusec run %s --entry=affine --arg=2x3xf32=iota --arg=3xf32=1.5 --stats | FileCheck %s --check-prefix=SECOND
// RUN: env FUSE_CACHE_DIR=off fusec run %s --entry=affine --arg=2x3xf32=iota --arg=3xf32=1.5 --npy-out=%t/out --print-limit=2 | FileCheck %s --check-prefix=LIMIT
// RUN: env FUSE_CACHE_DIR=off fusec run %s --entry=affine --arg=@%t/out0.npy --arg=3xf32=ones | FileCheck %s --check-prefix=NPY
// RUN: env FUSE_CACHE_DIR=off fusec run %s --entry=total --arg=4xi32=iota | FileCheck %s --check-prefix=INT
// Results of every dtype print as numbers: f16 and bf16 (converted), i64
// exactly (beyond 2^53); an f16 .npy result reads back.
// RUN: env FUSE_CACHE_DIR=off fusec run %s --entry=twice_f16 --arg=3xf16=iota --npy-out=%t/half | FileCheck %s --check-prefix=F16
// RUN: env FUSE_CACHE_DIR=off fusec run %s --entry=twice_f16 --arg=@%t/half0.npy | FileCheck %s --check-prefix=F16NPY
// RUN: env FUSE_CACHE_DIR=off fusec run %s --entry=twice_bf16 --arg=2xbf16=-1.5 | FileCheck %s --check-prefix=BF16
// bf16 .npy files hold the bits as '<u2' (fuse/Npy.h): a result written
// reads back as bf16; an f32 file where the signature says bf16 is refused.
// RUN: env FUSE_CACHE_DIR=off fusec run %s --entry=twice_bf16 --arg=3xbf16=iota --npy-out=%t/bf | FileCheck %s --check-prefix=BF16IOTA
// RUN: head -c 64 %t/bf0.npy | FileCheck %s --check-prefix=BF16DESCR
// RUN: env FUSE_CACHE_DIR=off fusec run %s --entry=twice_bf16 --arg=@%t/bf0.npy | FileCheck %s --check-prefix=BF16NPY
// RUN: not env FUSE_CACHE_DIR=off fusec run %s --entry=twice_bf16 --arg=@%t/out0.npy 2>&1 | FileCheck %s --check-prefix=BF16WRONG
// RUN: env FUSE_CACHE_DIR=off fusec run %s --entry=twice_i64 --arg=2xi64=4503599627370497 | FileCheck %s --check-prefix=I64

func.func @affine(%x: tensor<?x3xf32>, %b: tensor<3xf32>) -> tensor<?x3xf32> {
  %y = fuse.add %x, %b : (tensor<?x3xf32>, tensor<3xf32>) -> tensor<?x3xf32>
  return %y : tensor<?x3xf32>
}

func.func @twice_f16(%x: tensor<?xf16>) -> tensor<?xf16> {
  %y = fuse.add %x, %x : (tensor<?xf16>, tensor<?xf16>) -> tensor<?xf16>
  return %y : tensor<?xf16>
}

func.func @twice_bf16(%x: tensor<?xbf16>) -> tensor<?xbf16> {
  %y = fuse.add %x, %x : (tensor<?xbf16>, tensor<?xbf16>) -> tensor<?xbf16>
  return %y : tensor<?xbf16>
}

func.func @twice_i64(%x: tensor<?xi64>) -> tensor<?xi64> {
  %y = fuse.add %x, %x : (tensor<?xi64>, tensor<?xi64>) -> tensor<?xi64>
  return %y : tensor<?xi64>
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

// F16: result #0: tensor<3xf16> = [0, 2, 4]  min 0 max 4 mean 2
// F16NPY: result #0: tensor<3xf16> = [0, 4, 8]  min 0 max 8 mean 4
// BF16: result #0: tensor<2xbf16> = [-3, -3]  min -3 max -3 mean -3
// BF16IOTA: result #0: tensor<3xbf16> = [0, 2, 4]
// BF16DESCR: 'descr': '<u2'
// BF16NPY: result #0: tensor<3xbf16> = [0, 4, 8]
// BF16WRONG: error: {{.*}}expected tensor<?xbf16>, got dtype f32
// I64: result #0: tensor<2xi64> = [9007199254740994, 9007199254740994]
