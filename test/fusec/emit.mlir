// Every --emit level of fusec on one specialized function.
// RUN: fusec %s --emit=linalg --shape=x=8x4 | FileCheck %s --check-prefix=LINALG
// RUN: fusec %s --emit=llvm-mlir --shape=x=8x4 | FileCheck %s --check-prefix=LLVMMLIR
// RUN: fusec %s --emit=llvm-ir --shape=0=8x4 | FileCheck %s --check-prefix=LLVMIR
// RUN: fusec %s --emit=asm --shape=x=8x4 | FileCheck %s --check-prefix=ASM
// RUN: fusec %s --emit=obj --shape=x=8x4 -o %t.o && test -s %t.o
// RUN: fusec %s --entry=scale --shape=x=8x4 | FileCheck %s --check-prefix=FUSE
// A train step's arguments carry fuse attributes (fuse.init, ...) down to
// the LLVM dialect; translation drops them without a warning.
// RUN: fusec %S/Inputs/mlp-hidden64.mlir --entry=train --shape=x=4x28x28 --shape=y=4 --emit=llvm-ir 2>&1 | FileCheck %s --check-prefix=TRAIN

func.func @scale(%x: tensor<?x4xf32>, %w: tensor<4xf32>) -> tensor<?x4xf32> {
  %y = fuse.mul %x, %w : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  %z = fuse.relu %y : tensor<?x4xf32>
  return %z : tensor<?x4xf32>
}

// LINALG-LABEL: func.func @scale
// LINALG-SAME: tensor<8x4xf32>
// LINALG: linalg.generic
// LINALG-NOT: fuse.

// LLVMMLIR: llvm.func @scale(%{{.*}}: !llvm.ptr {llvm.noalias}, %{{.*}}: !llvm.ptr {llvm.noalias}, %{{.*}}: !llvm.ptr {llvm.noalias})
// LLVMMLIR-NOT: linalg.

// LLVMIR: define void @scale(ptr

// ASM: scale:

// FUSE-LABEL: func.func @scale(%{{.*}}: tensor<8x4xf32>, %{{.*}}: tensor<4xf32>) -> tensor<8x4xf32>

// TRAIN-NOT: warning
// TRAIN: define void @train(
// TRAIN-NOT: fuse.init
