// RUN: fuse-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(fuse-widen-bf16-operands))' | FileCheck %s

// Without AVX512_BF16, a matmul of bf16 inputs into f32 reads f32 copies
// widened once (exact) and is the f32 matmul.
// CHECK-LABEL: func @no_pairs
// CHECK: %[[A:.*]] = linalg.generic {{.*}} ins(%arg0 : tensor<12x8xbf16>) outs(%{{.*}} : tensor<12x8xf32>)
// CHECK: arith.extf %{{.*}} : bf16 to f32
// CHECK: %[[B:.*]] = linalg.generic {{.*}} ins(%arg1 : tensor<8x32xbf16>) outs(%{{.*}} : tensor<8x32xf32>)
// CHECK: linalg.matmul ins(%[[A]], %[[B]] : tensor<12x8xf32>, tensor<8x32xf32>) outs(%{{.*}} : tensor<12x32xf32>)
module attributes {fuse.target = {cpu = "x86-64-v3", features = "+avx2,+fma,-avx512f,-avx512bf16", triple = "x86_64-unknown-linux-gnu"}} {
  func.func @no_pairs(%a: tensor<12x8xbf16>, %b: tensor<8x32xbf16>, %c: tensor<12x32xf32>) -> tensor<12x32xf32> {
    %r = linalg.matmul ins(%a, %b : tensor<12x8xbf16>, tensor<8x32xbf16>) outs(%c : tensor<12x32xf32>) -> tensor<12x32xf32>
    return %r : tensor<12x32xf32>
  }
}

// -----

// With AVX512_BF16, linalg.matmul keeps its bf16 inputs (vdpbf16ps); a
// batch_matmul, whose tiles do not pair steps, is widened.
// CHECK-LABEL: func @pairs
// CHECK: linalg.matmul ins(%arg0, %arg1 : tensor<12x8xbf16>, tensor<8x32xbf16>)
// CHECK: linalg.generic {{.*}} ins(%arg3 : tensor<2x4x8xbf16>)
// CHECK: linalg.generic {{.*}} ins(%arg4 : tensor<2x8x16xbf16>)
// CHECK: linalg.batch_matmul ins(%{{.*}}, %{{.*}} : tensor<2x4x8xf32>, tensor<2x8x16xf32>)
module attributes {fuse.target = {cpu = "znver4", features = "+avx512f,+avx512bw,+avx512vl,+avx512bf16", triple = "x86_64-unknown-linux-gnu"}} {
  func.func @pairs(%a: tensor<12x8xbf16>, %b: tensor<8x32xbf16>, %c: tensor<12x32xf32>,
                   %p: tensor<2x4x8xbf16>, %q: tensor<2x8x16xbf16>, %r: tensor<2x4x16xf32>) -> (tensor<12x32xf32>, tensor<2x4x16xf32>) {
    %0 = linalg.matmul ins(%a, %b : tensor<12x8xbf16>, tensor<8x32xbf16>) outs(%c : tensor<12x32xf32>) -> tensor<12x32xf32>
    %1 = linalg.batch_matmul ins(%p, %q : tensor<2x4x8xbf16>, tensor<2x8x16xbf16>) outs(%r : tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
    return %0, %1 : tensor<12x32xf32>, tensor<2x4x16xf32>
  }
}

// -----

// Contractions of one element type are left alone.
// CHECK-LABEL: func @same_types
// CHECK-NOT: linalg.generic
// CHECK: linalg.matmul ins(%arg0, %arg1 : tensor<4x8xbf16>, tensor<8x16xbf16>) outs(%arg2 : tensor<4x16xbf16>)
module attributes {fuse.target = {cpu = "x86-64-v3", features = "+avx2,-avx512bf16", triple = "x86_64-unknown-linux-gnu"}} {
  func.func @same_types(%a: tensor<4x8xbf16>, %b: tensor<8x16xbf16>, %c: tensor<4x16xbf16>) -> tensor<4x16xbf16> {
    %r = linalg.matmul ins(%a, %b : tensor<4x8xbf16>, tensor<8x16xbf16>) outs(%c : tensor<4x16xbf16>) -> tensor<4x16xbf16>
    return %r : tensor<4x16xbf16>
  }
}
