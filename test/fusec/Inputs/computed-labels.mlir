// Cross-entropies whose class count or labels the engine sees only at a
// call: @dynamic's C is dynamic (known once the call specializes it),
// @one_based computes its labels (no argument to check: an out-of-range
// row is NaN).

func.func @dynamic(%x: tensor<?x?xf32>, %y: tensor<?xi32>) -> tensor<f32> {
  %l = fuse.softmax_cross_entropy %x, %y
      : (tensor<?x?xf32>, tensor<?xi32>) -> tensor<f32>
  return %l : tensor<f32>
}

func.func @one_based(%x: tensor<?x?xf32>, %y: tensor<?xi32>) -> tensor<f32> {
  %one = fuse.constant dense<1> : tensor<i32>
  %y0 = fuse.sub %y, %one : (tensor<?xi32>, tensor<i32>) -> tensor<?xi32>
  %l = fuse.softmax_cross_entropy %x, %y0
      : (tensor<?x?xf32>, tensor<?xi32>) -> tensor<f32>
  return %l : tensor<f32>
}
