// One causal attention over a learned projection of the tokens' features,
// for fusec summary: x [B, 8, 16] -> q = k = v = x w [B, 1, 8, 16] ->
// attention -> mean over the positions -> logits [B, 4].
func.func @loss(%w: tensor<16x16xf32>, %o: tensor<16x4xf32>,
                %x: tensor<?x8x16xf32>, %y: tensor<?xi32>) -> tensor<f32> {
  %flat = fuse.reshape %x : (tensor<?x8x16xf32>) -> tensor<?x16xf32>
  %p = fuse.matmul %flat, %w
      : (tensor<?x16xf32>, tensor<16x16xf32>) -> tensor<?x16xf32>
  %q = fuse.reshape %p : (tensor<?x16xf32>) -> tensor<?x1x8x16xf32>
  %a = fuse.attention %q, %q, %q {causal}
      : (tensor<?x1x8x16xf32>, tensor<?x1x8x16xf32>, tensor<?x1x8x16xf32>)
      -> tensor<?x1x8x16xf32>
  %r = fuse.reshape %a : (tensor<?x1x8x16xf32>) -> tensor<?x8x16xf32>
  %m = fuse.reduce_mean %r {axes = array<i64: 1>}
      : (tensor<?x8x16xf32>) -> tensor<?x16xf32>
  %l = fuse.matmul %m, %o
      : (tensor<?x16xf32>, tensor<16x4xf32>) -> tensor<?x4xf32>
  %loss = fuse.softmax_cross_entropy %l, %y
      : (tensor<?x4xf32>, tensor<?xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}
fuse.train_step @train {loss = @loss, params = array<i64: 0, 1>,
                        optimizer = "sgd"}
