// fusec prints the verified, simplified IR of the seed model.
// RUN: fusec %examples/mlp.mlir | FileCheck %s
// RUN: fusec %examples/mlp.mlir -o %t.mlir && FileCheck %s < %t.mlir
// RUN: fusec --version | FileCheck %s --check-prefix=VERSION

// CHECK-LABEL: func.func @loss
// CHECK: fuse.reshape
// CHECK: fuse.matmul
// CHECK: fuse.relu
// CHECK: fuse.dropout
// CHECK: fuse.softmax_cross_entropy
// CHECK: return

// VERSION: fusec (Fuse) {{[0-9]+\.[0-9]+\.[0-9]+}}
// VERSION: LLVM/MLIR 22.
