// Bad input gives a located diagnostic and exit code 1, never a crash.
// RUN: not fuse-opt %s 2>&1 | FileCheck %s
// RUN: not fuse-opt %S/does-not-exist.mlir 2>&1 | FileCheck %s --check-prefix=MISSING

// MISSING: cannot open input file '{{.*}}does-not-exist.mlir': No such file or directory

// CHECK: errors.mlir:[[@LINE+2]]:8: error: custom op 'fuse.frobnicate' is unknown
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = fuse.frobnicate %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}
