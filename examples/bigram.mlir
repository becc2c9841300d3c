// A character-level bigram language model: each byte's logits for the next
// byte are a row of a 256x256 table (plus a bias), read by a one-hot matmul.
//   tokens [B, 64] -> one-hot [B, 64, 256] (compare with 0..255, select 1/0)
//   -> [B*64, 256] @ w + b -> softmax cross-entropy with the next tokens.
// %x are windows of 64 byte tokens, %y the same windows shifted by one (the
// next token at each position). @train is one Adam step; `fusec train
// examples/bigram.mlir --format=text` trains it on Debian's fortunes, 64
// tokens per window (--context defaults to the model's 64), and reports the
// validation loss and bits per character.
func.func @loss(%w: tensor<256x256xf32>, %b: tensor<256xf32>,
                %x: tensor<?x64xi32>, %y: tensor<?x64xi32>) -> tensor<f32> {
  %ids = fuse.constant dense<[
      0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
      16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31,
      32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47,
      48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63,
      64, 65, 66, 67, 68, 69, 70, 71, 72, 73, 74, 75, 76, 77, 78, 79,
      80, 81, 82, 83, 84, 85, 86, 87, 88, 89, 90, 91, 92, 93, 94, 95,
      96, 97, 98, 99, 100, 101, 102, 103, 104, 105, 106, 107, 108, 109, 110, 111,
      112, 113, 114, 115, 116, 117, 118, 119, 120, 121, 122, 123, 124, 125, 126, 127,
      128, 129, 130, 131, 132, 133, 134, 135, 136, 137, 138, 139, 140, 141, 142, 143,
      144, 145, 146, 147, 148, 149, 150, 151, 152, 153, 154, 155, 156, 157, 158, 159,
      160, 161, 162, 163, 164, 165, 166, 167, 168, 169, 170, 171, 172, 173, 174, 175,
      176, 177, 178, 179, 180, 181, 182, 183, 184, 185, 186, 187, 188, 189, 190, 191,
      192, 193, 194, 195, 196, 197, 198, 199, 200, 201, 202, 203, 204, 205, 206, 207,
      208, 209, 210, 211, 212, 213, 214, 215, 216, 217, 218, 219, 220, 221, 222, 223,
      224, 225, 226, 227, 228, 229, 230, 231, 232, 233, 234, 235, 236, 237, 238, 239,
      240, 241, 242, 243, 244, 245, 246, 247, 248, 249, 250, 251, 252, 253, 254, 255]> : tensor<256xi32>
  %column = fuse.expand_dims %x {axes = array<i64: 2>}
      : (tensor<?x64xi32>) -> tensor<?x64x1xi32>
  %is = fuse.compare eq, %column, %ids
      : (tensor<?x64x1xi32>, tensor<256xi32>) -> tensor<?x64x256xi1>
  %one = fuse.constant dense<1.0> : tensor<f32>
  %zero = fuse.constant dense<0.0> : tensor<f32>
  %hot = fuse.select %is, %one, %zero
      : (tensor<?x64x256xi1>, tensor<f32>, tensor<f32>) -> tensor<?x64x256xf32>
  %rows = fuse.reshape %hot : (tensor<?x64x256xf32>) -> tensor<?x256xf32>
  %o = fuse.matmul %rows, %w
      : (tensor<?x256xf32>, tensor<256x256xf32>) -> tensor<?x256xf32>
  %logits = fuse.add %o, %b
      : (tensor<?x256xf32>, tensor<256xf32>) -> tensor<?x256xf32>
  %labels = fuse.reshape %y : (tensor<?x64xi32>) -> tensor<?xi32>
  %l = fuse.softmax_cross_entropy %logits, %labels
      : (tensor<?x256xf32>, tensor<?xi32>) -> tensor<f32>
  return %l : tensor<f32>
}

fuse.train_step @train {loss = @loss, params = array<i64: 0, 1>,
                        optimizer = "adam", hyperparameters = {eps = 1.0e-7 : f64}}
