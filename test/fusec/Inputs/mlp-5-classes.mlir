// The seed MLP with 5 classes instead of 10: the IDX test data's labels go
// up to 9, which `fusec train` must reject against this model.

func.func @loss(%w1: tensor<784x128xf32>, %b1: tensor<128xf32>,
                %w2: tensor<128x5xf32>, %b2: tensor<5xf32>,
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
      : (tensor<?x128xf32>, tensor<128x5xf32>) -> tensor<?x5xf32>
  %ob = fuse.add %o, %b2
      : (tensor<?x5xf32>, tensor<5xf32>) -> tensor<?x5xf32>
  %l = fuse.softmax_cross_entropy %ob, %y
      : (tensor<?x5xf32>, tensor<?xi32>) -> tensor<f32>
  return %l : tensor<f32>
}

fuse.train_step @train {loss = @loss, params = array<i64: 0, 1, 2, 3>,
                        optimizer = "adam", step_arg = 6,
                        hyperparameters = {eps = 1.0e-7 : f64}}
