// An argument meant to be updated in place that cannot be (its old value is
// also returned) is a warning naming it, with its location; compilation
// still succeeds, copying the new value into it.
// RUN: fusec %s --emit=llvm-mlir -o /dev/null 2>&1 | FileCheck %s
// CHECK: in-place-warning.mlir:[[@LINE+2]]:{{[0-9]+}}: warning: argument 'p' (#2) of 'keeps_old' cannot be updated in place: result #0 is computed in another buffer and copied into it
// CHECK-NOT: warning
func.func @keeps_old(%lr: tensor<f32>, %step: tensor<i64>, %p: tensor<5xf32>,
                     %g: tensor<5xf32>)
    -> (tensor<5xf32> {fuse.in_place = 2}, tensor<5xf32>) {
  %q = fuse.sgd %lr, %step params(%p : tensor<5xf32>)
      grads(%g : tensor<5xf32>) states() -> tensor<5xf32>
  return %q, %p : tensor<5xf32>, tensor<5xf32>
}
