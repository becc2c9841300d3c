// A bigram model as nanoGPT writes it: each token's next-token logits are
// its row of an embedding table (fuse.gather), windows of 32 tokens. Both
// batch inputs are integer arguments with a class count (the tokens index
// the table's 256 rows, the next tokens feed the cross-entropy's 256
// classes): fit takes the second for the labels.
func.func @loss(%w: tensor<256x256xf32>, %x: tensor<?x32xi32>,
                %y: tensor<?x32xi32>) -> tensor<f32> {
  %e = fuse.gather %w, %x
      : (tensor<256x256xf32>, tensor<?x32xi32>) -> tensor<?x32x256xf32>
  %logits = fuse.reshape %e : (tensor<?x32x256xf32>) -> tensor<?x256xf32>
  %labels = fuse.reshape %y : (tensor<?x32xi32>) -> tensor<?xi32>
  %l = fuse.softmax_cross_entropy %logits, %labels
      : (tensor<?x256xf32>, tensor<?xi32>) -> tensor<f32>
  return %l : tensor<f32>
}

fuse.train_step @train {loss = @loss, params = array<i64: 0>,
                        optimizer = "adam"}
