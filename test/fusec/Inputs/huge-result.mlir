// A result of 2^36 f32 (256 GiB) from a scalar: fusec run must report it
// cannot be allocated, not crash writing it; a small one under the same
// bound is computed.
func.func @huge(%x: tensor<f32>) -> tensor<4294967296x4x4xf32> {
  %y = fuse.broadcast_to %x : (tensor<f32>) -> tensor<4294967296x4x4xf32>
  return %y : tensor<4294967296x4x4xf32>
}
func.func @fits(%x: tensor<f32>) -> tensor<2x2xf32> {
  %y = fuse.broadcast_to %x : (tensor<f32>) -> tensor<2x2xf32>
  return %y : tensor<2x2xf32>
}
