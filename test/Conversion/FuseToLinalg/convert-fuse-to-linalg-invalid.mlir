// RUN: fuse-opt %s --convert-fuse-to-linalg --split-input-file --verify-diagnostics

// A fuse op with a dynamic dimension cannot be lowered: the function must be
// specialized to concrete shapes first.

func.func @dynamic_operand_and_result(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  // expected-error @below {{'fuse.relu' op has dynamic dimensions; specialize the function to concrete shapes first}}
  %0 = fuse.relu %x : tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// -----

func.func @dynamic_batch(%x: tensor<?x784xf32>, %w: tensor<784x128xf32>) -> tensor<?x128xf32> {
  // expected-error @below {{'fuse.matmul' op has dynamic dimensions; specialize the function to concrete shapes first}}
  %0 = fuse.matmul %x, %w : (tensor<?x784xf32>, tensor<784x128xf32>) -> tensor<?x128xf32>
  return %0 : tensor<?x128xf32>
}

// -----

// Only the result is dynamic.
func.func @dynamic_result(%x: tensor<2x6xf32>) -> tensor<?x3xf32> {
  // expected-error @below {{'fuse.reshape' op has dynamic dimensions; specialize the function to concrete shapes first}}
  %0 = fuse.reshape %x : (tensor<2x6xf32>) -> tensor<?x3xf32>
  return %0 : tensor<?x3xf32>
}

// -----

// The first offending op is reported, even after static ones.
func.func @after_static_ops(%x: tensor<4x10xf32>, %y: tensor<?xi32>) -> tensor<f32> {
  %0 = fuse.relu %x : tensor<4x10xf32>
  // expected-error @below {{'fuse.softmax_cross_entropy' op has dynamic dimensions; specialize the function to concrete shapes first}}
  %1 = fuse.softmax_cross_entropy %0, %y : (tensor<4x10xf32>, tensor<?xi32>) -> tensor<f32>
  return %1 : tensor<f32>
}

// -----

// Dynamic shapes outside fuse ops are no concern of this pass; the fuse op
// itself is static here, so this case lowers without a diagnostic.
func.func @dynamic_non_fuse(%x: tensor<4xf32>) -> tensor<?xf32> {
  %0 = fuse.exp %x : tensor<4xf32>
  %1 = tensor.cast %0 : tensor<4xf32> to tensor<?xf32>
  return %1 : tensor<?xf32>
}

// -----

func.func @erf_f64(%x: tensor<4xf64>) -> tensor<4xf64> {
  // expected-error @below {{'fuse.gelu' op on f64 is not supported: erf is computed in f32; cast the operand to f32 (fuse.cast), or use gelu's tanh form}}
  %0 = fuse.gelu %x : tensor<4xf64>
  return %0 : tensor<4xf64>
}
