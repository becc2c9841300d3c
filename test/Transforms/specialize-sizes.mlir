// RUN: fuse-opt %s --fuse-specialize="function=f arg-types=tensor<4294967296x1xf32>,tensor<1x4294967296xf32>" --split-input-file --verify-diagnostics
// RUN: not fuse-opt %s --fuse-specialize="function=f arg-types=tensor<4294967296x4294967296xf32>,tensor<1x4xf32>" 2>&1 | FileCheck %s --check-prefix=ARG
// ARG: error: argument {{.*}}#0{{.*}} of type 'tensor<4294967296x4294967296xf32>' is too large: its size in bytes does not fit in 64 bits

// Shapes given at call time (the engine's, fusec --shape) make types the
// loaded module did not hold: each is checked as it is made, before the
// next op computes from it, as the load checks the module's own.

// Each argument fits (2^34 bytes); their broadcast sum does not.
func.func @f(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>) -> tensor<?x?xf32> {
  // expected-error @below {{'fuse.add' op result #0 has type tensor<4294967296x4294967296xf32>, too large: its size in bytes does not fit in 64 bits}}
  %y = fuse.add %a, %b : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  return %y : tensor<?x?xf32>
}
