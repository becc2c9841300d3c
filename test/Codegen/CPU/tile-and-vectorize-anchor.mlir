// RUN: fuse-opt %s --pass-pipeline='builtin.module(func.func(fuse-tile-and-vectorize{vector-bits=512}))' | FileCheck %s
// RUN: fuse-opt %s --fuse-tile-and-vectorize=vector-bits=512 | FileCheck %s

// The pipeline runs on a module (nesting on its functions) or inside a
// function's pass manager, with the same result: the product in register
// tiles of vector.contract, and no config left.
// CHECK-LABEL: func @matmul
// CHECK: vector.contract {{.*}} : vector<12x1xf32>, vector<1x32xf32> into vector<12x32xf32>
// CHECK-NOT: linalg.matmul
// CHECK-NOT: lowering_config
func.func @matmul(%a: tensor<24x64xf32>, %b: tensor<64x64xf32>) -> tensor<24x64xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<24x64xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<24x64xf32>) -> tensor<24x64xf32>
  %r = linalg.matmul ins(%a, %b : tensor<24x64xf32>, tensor<64x64xf32>) outs(%f : tensor<24x64xf32>) -> tensor<24x64xf32>
  return %r : tensor<24x64xf32>
}
