// A result whose bytes do not fit in int64 (2^62 x 4 f32): every tool
// rejects the module where it loads it, naming the op and the type.
func.func @huge(%x: tensor<f32>) -> tensor<4611686018427387904x4xf32> {
  %y = fuse.broadcast_to %x : (tensor<f32>) -> tensor<4611686018427387904x4xf32>
  return %y : tensor<4611686018427387904x4xf32>
}

