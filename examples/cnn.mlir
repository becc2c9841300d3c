// The seed's Keras CNN for 28x28x1 images (Fashion-MNIST):
//   conv 3x3 32 relu -> conv 3x3 32 relu -> max-pool 2 -> dropout 0.25
//   -> flatten -> dense 128 relu -> dropout 0.5 -> dense 10
//   -> softmax cross-entropy with integer labels.
// Filters are HWIO, images NHWC; every parameter starts as Keras' defaults
// (Glorot-uniform kernels, zero biases). @train is one Adam step, as Keras'
// Adam; `fusec train examples/cnn.mlir` trains it on Fashion-MNIST.

func.func @loss(%k1: tensor<3x3x1x32xf32>, %c1: tensor<32xf32>,
                %k2: tensor<3x3x32x32xf32>, %c2: tensor<32xf32>,
                %w1: tensor<4608x128xf32>, %b1: tensor<128xf32>,
                %w2: tensor<128x10xf32>, %b2: tensor<10xf32>,
                %x: tensor<?x28x28x1xf32>, %y: tensor<?xi32>,
                %step: tensor<i64>) -> tensor<f32> {
  %h1 = fuse.conv2d %x, %k1
      : (tensor<?x28x28x1xf32>, tensor<3x3x1x32xf32>) -> tensor<?x26x26x32xf32>
  %h1b = fuse.add %h1, %c1
      : (tensor<?x26x26x32xf32>, tensor<32xf32>) -> tensor<?x26x26x32xf32>
  %a1 = fuse.relu %h1b : tensor<?x26x26x32xf32>
  %h2 = fuse.conv2d %a1, %k2
      : (tensor<?x26x26x32xf32>, tensor<3x3x32x32xf32>) -> tensor<?x24x24x32xf32>
  %h2b = fuse.add %h2, %c2
      : (tensor<?x24x24x32xf32>, tensor<32xf32>) -> tensor<?x24x24x32xf32>
  %a2 = fuse.relu %h2b : tensor<?x24x24x32xf32>
  %p = fuse.max_pool2d %a2 {window = array<i64: 2, 2>}
      : (tensor<?x24x24x32xf32>) -> tensor<?x12x12x32xf32>
  %d1 = fuse.dropout %p, %step {rate = 0.25 : f32, seed = 11 : i64}
      : tensor<?x12x12x32xf32>
  %flat = fuse.reshape %d1 : (tensor<?x12x12x32xf32>) -> tensor<?x4608xf32>
  %h3 = fuse.matmul %flat, %w1
      : (tensor<?x4608xf32>, tensor<4608x128xf32>) -> tensor<?x128xf32>
  %h3b = fuse.add %h3, %b1
      : (tensor<?x128xf32>, tensor<128xf32>) -> tensor<?x128xf32>
  %a3 = fuse.relu %h3b : tensor<?x128xf32>
  %d2 = fuse.dropout %a3, %step {rate = 0.5 : f32, seed = 12 : i64}
      : tensor<?x128xf32>
  %o = fuse.matmul %d2, %w2
      : (tensor<?x128xf32>, tensor<128x10xf32>) -> tensor<?x10xf32>
  %ob = fuse.add %o, %b2
      : (tensor<?x10xf32>, tensor<10xf32>) -> tensor<?x10xf32>
  %l = fuse.softmax_cross_entropy %ob, %y
      : (tensor<?x10xf32>, tensor<?xi32>) -> tensor<f32>
  return %l : tensor<f32>
}

fuse.train_step @train {loss = @loss,
                        params = array<i64: 0, 1, 2, 3, 4, 5, 6, 7>,
                        optimizer = "adam", step_arg = 10,
                        hyperparameters = {eps = 1.0e-7 : f64}}
