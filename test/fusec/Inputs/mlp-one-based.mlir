// The seed MLP with 1-based labels: the loss subtracts 1, so no argument
// is marked with a class count and fusec train cannot check the data.

func.func @loss(%w1: tensor<784x128xf32>, %b1: tensor<128xf32>,
                %w2: tensor<128x10xf32>, %b2: tensor<10xf32>,
                %x: tensor<?x28x28xf32>, %y: tensor<?xi32>,
                %step: tensor<i64>) -> tensor<f32> {
  %flat = fuse.reshape %x : (tensor<?x28x28xf32>) -> tensor<?x784xf32>
  %h = fuse.matmul %flat, %w1
      : (tensor<?x784xf32>, tensor<784x128xf32>) -> tensor<?x128xf32>
  %hb = fuse.add %h, %b1
      : (tensor<?x128xf32>, tensor<128xf32>) -> tensor<?x128xf32>
  %a = fuse.relu %hb : tensor<?x128xf32>
  %d = fuse.dropout %a, %step {rate = 0.2 : f32, seed = 7 : i64}
      : tensor<?x128xf32>
  %o = fuse.matmul %d, %w2
      : (tensor<?x128xf32>, tensor<128x10xf32>) -> tensor<?x10xf32>
  %ob = fuse.add %o, %b2
      : (tensor<?x10xf32>, tensor<10xf32>) -> tensor<?x10xf32>
  %one = fuse.constant dense<1> : tensor<i32>
  %y0 = fuse.sub %y, %one : (tensor<?xi32>, tensor<i32>) -> tensor<?xi32>
  %l = fuse.softmax_cross_entropy %ob, %y0
      : (tensor<?x10xf32>, tensor<?xi32>) -> tensor<f32>
  return %l : tensor<f32>
}

fuse.train_step @train {loss = @loss, params = array<i64: 0, 1, 2, 3>,
                        optimizer = "adam", step_arg = 6,
                        hyperparameters = {eps = 1.0e-7 : f64}}
