// RUN: fuse-opt %s --fuse-mark-class-labels --split-input-file | FileCheck %s

// An integer argument feeding cross-entropy's labels gets the logits' class
// count; other arguments nothing.
// CHECK-LABEL: func.func @direct
// CHECK-SAME: (%{{[^:]*}}: tensor<?x10xf32>, %{{[^:]*}}: tensor<?xi32> {fuse.class_labels = 10 : i64}, %{{[^:]*}}: tensor<?xi32>)
func.func @direct(%logits: tensor<?x10xf32>, %y: tensor<?xi32>, %other: tensor<?xi32>) -> tensor<f32> {
  %l = fuse.softmax_cross_entropy %logits, %y : (tensor<?x10xf32>, tensor<?xi32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// Through a step's slice of stacked labels and a reshape; the gradient's
// labels count too.
// CHECK-LABEL: func.func @stacked
// CHECK-SAME: (%{{[^:]*}}: tensor<?x4x7xf32>, %{{[^:]*}}: tensor<?x2x2xi64> {fuse.class_labels = 7 : i64}, %{{[^:]*}}: index)
func.func @stacked(%logits: tensor<?x4x7xf32>, %y: tensor<?x2x2xi64>, %k: index) -> tensor<4x7xf32> {
  %slice = tensor.extract_slice %y[%k, 0, 0] [1, 2, 2] [1, 1, 1] : tensor<?x2x2xi64> to tensor<2x2xi64>
  %flat = fuse.reshape %slice : (tensor<2x2xi64>) -> tensor<4xi64>
  %x = tensor.extract_slice %logits[%k, 0, 0] [1, 4, 7] [1, 1, 1] : tensor<?x4x7xf32> to tensor<4x7xf32>
  %one = fuse.constant dense<1.0> : tensor<f32>
  %g = fuse.softmax_cross_entropy_grad %x, %flat, %one : (tensor<4x7xf32>, tensor<4xi64>, tensor<f32>) -> tensor<4x7xf32>
  return %g : tensor<4x7xf32>
}

// -----

// Labels of two losses must fit both: the smaller count. Dynamic class
// counts give nothing to check.
// CHECK-LABEL: func.func @two_losses
// CHECK-SAME: (%{{[^:]*}}: tensor<?x10xf32>, %{{[^:]*}}: tensor<?x5xf32>, %{{[^:]*}}: tensor<?x?xf32>, %{{[^:]*}}: tensor<?xi8> {fuse.class_labels = 5 : i64}, %{{[^:]*}}: tensor<?xi32>)
func.func @two_losses(%a: tensor<?x10xf32>, %b: tensor<?x5xf32>, %c: tensor<?x?xf32>, %y: tensor<?xi8>, %z: tensor<?xi32>) -> (tensor<f32>, tensor<f32>, tensor<f32>) {
  %0 = fuse.softmax_cross_entropy %a, %y : (tensor<?x10xf32>, tensor<?xi8>) -> tensor<f32>
  %1 = fuse.softmax_cross_entropy %b, %y : (tensor<?x5xf32>, tensor<?xi8>) -> tensor<f32>
  %2 = fuse.softmax_cross_entropy %c, %z : (tensor<?x?xf32>, tensor<?xi32>) -> tensor<f32>
  return %0, %1, %2 : tensor<f32>, tensor<f32>, tensor<f32>
}

// -----

// A sequence model's batch: integer tokens [B, T] compared with the class
// ids (a one-hot) are inputs, not labels; the next tokens [B, T] reach the
// loss through a reshape to B*T and get the vocabulary's 256.
// CHECK-LABEL: func.func @tokens
// CHECK-SAME: (%{{[^:]*}}: tensor<?x8x256xf32>, %{{[^:]*}}: tensor<?x8xi32>, %{{[^:]*}}: tensor<?x8xi32> {fuse.class_labels = 256 : i64})
func.func @tokens(%logits: tensor<?x8x256xf32>, %x: tensor<?x8xi32>, %y: tensor<?x8xi32>) -> (tensor<f32>, tensor<?x8x256xi1>) {
  %ids = fuse.constant dense<7> : tensor<256xi32>
  %column = fuse.expand_dims %x {axes = array<i64: 2>} : (tensor<?x8xi32>) -> tensor<?x8x1xi32>
  %hot = fuse.compare eq, %column, %ids : (tensor<?x8x1xi32>, tensor<256xi32>) -> tensor<?x8x256xi1>
  %rows = fuse.reshape %logits : (tensor<?x8x256xf32>) -> tensor<?x256xf32>
  %labels = fuse.reshape %y : (tensor<?x8xi32>) -> tensor<?xi32>
  %l = fuse.softmax_cross_entropy %rows, %labels : (tensor<?x256xf32>, tensor<?xi32>) -> tensor<f32>
  return %l, %hot : tensor<f32>, tensor<?x8x256xi1>
}

// -----

// A token window sliced into inputs and next tokens inside the loss: the
// embedding's indices (16 rows) and the cross-entropy's labels (16
// classes) both reach the argument through fuse.slice.
// CHECK-LABEL: func.func @sliced_tokens
// CHECK-SAME: (%{{[^:]*}}: tensor<16x4xf32>, %{{[^:]*}}: tensor<?x9xi32> {fuse.class_labels = 16 : i64})
func.func @sliced_tokens(%e: tensor<16x4xf32>, %tokens: tensor<?x9xi32>) -> tensor<f32> {
  %x = fuse.slice %tokens {offsets = array<i64: 0, 0>} : (tensor<?x9xi32>) -> tensor<?x8xi32>
  %y = fuse.slice %tokens {offsets = array<i64: 0, 1>} : (tensor<?x9xi32>) -> tensor<?x8xi32>
  %h = fuse.gather %e, %x : (tensor<16x4xf32>, tensor<?x8xi32>) -> tensor<?x8x4xf32>
  %f = fuse.reshape %h : (tensor<?x8x4xf32>) -> tensor<?x4xf32>
  %o = fuse.matmul %f, %e {transpose_rhs} : (tensor<?x4xf32>, tensor<16x4xf32>) -> tensor<?x16xf32>
  %labels = fuse.reshape %y : (tensor<?x8xi32>) -> tensor<?xi32>
  %l = fuse.softmax_cross_entropy %o, %labels : (tensor<?x16xf32>, tensor<?xi32>) -> tensor<f32>
  return %l : tensor<f32>
}
