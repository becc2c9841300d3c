// A small vision transformer for 28x28 images (Fashion-MNIST): the same
// blocks as examples/gpt.mlir, on images.
//   4x4 patches (49 of 16 pixels) -> linear 64 + learned position
//   embedding -> 2 pre-LN blocks of multi-head attention (fuse.attention, 4 heads
//   of 16, not causal) and a GELU MLP 64 -> 128 -> 64 -> layer norm -> mean over
//   the patches -> dense 10 -> softmax cross-entropy with integer labels.
// 71946 parameters. @train is one AdamW step (weight decay 0.05, none on
// biases and layer norms); `fusec train examples/vit.mlir --epochs 5`
// trains it on Fashion-MNIST.

func.func @loss(
    %wp: tensor<16x64xf32> {fuse.init = #fuse.init<glorot_uniform>},
    %bp: tensor<64xf32> {fuse.init = #fuse.init<zeros>},
    %pos: tensor<49x64xf32> {fuse.init = #fuse.init<normal, stddev = 0.02>},
    %ln1_g0: tensor<64xf32> {fuse.init = #fuse.init<ones>},
    %ln1_b0: tensor<64xf32> {fuse.init = #fuse.init<zeros>},
    %wqkv0: tensor<64x192xf32> {fuse.init = #fuse.init<glorot_uniform>},
    %bqkv0: tensor<192xf32> {fuse.init = #fuse.init<zeros>},
    %wo0: tensor<64x64xf32> {fuse.init = #fuse.init<glorot_uniform>},
    %bo0: tensor<64xf32> {fuse.init = #fuse.init<zeros>},
    %ln2_g0: tensor<64xf32> {fuse.init = #fuse.init<ones>},
    %ln2_b0: tensor<64xf32> {fuse.init = #fuse.init<zeros>},
    %w10: tensor<64x128xf32> {fuse.init = #fuse.init<glorot_uniform>},
    %b10: tensor<128xf32> {fuse.init = #fuse.init<zeros>},
    %w20: tensor<128x64xf32> {fuse.init = #fuse.init<glorot_uniform>},
    %b20: tensor<64xf32> {fuse.init = #fuse.init<zeros>},
    %ln1_g1: tensor<64xf32> {fuse.init = #fuse.init<ones>},
    %ln1_b1: tensor<64xf32> {fuse.init = #fuse.init<zeros>},
    %wqkv1: tensor<64x192xf32> {fuse.init = #fuse.init<glorot_uniform>},
    %bqkv1: tensor<192xf32> {fuse.init = #fuse.init<zeros>},
    %wo1: tensor<64x64xf32> {fuse.init = #fuse.init<glorot_uniform>},
    %bo1: tensor<64xf32> {fuse.init = #fuse.init<zeros>},
    %ln2_g1: tensor<64xf32> {fuse.init = #fuse.init<ones>},
    %ln2_b1: tensor<64xf32> {fuse.init = #fuse.init<zeros>},
    %w11: tensor<64x128xf32> {fuse.init = #fuse.init<glorot_uniform>},
    %b11: tensor<128xf32> {fuse.init = #fuse.init<zeros>},
    %w21: tensor<128x64xf32> {fuse.init = #fuse.init<glorot_uniform>},
    %b21: tensor<64xf32> {fuse.init = #fuse.init<zeros>},
    %lnf_g: tensor<64xf32> {fuse.init = #fuse.init<ones>},
    %lnf_b: tensor<64xf32> {fuse.init = #fuse.init<zeros>},
    %wh: tensor<64x10xf32> {fuse.init = #fuse.init<glorot_uniform>},
    %bh: tensor<10xf32> {fuse.init = #fuse.init<zeros>},
    %x: tensor<?x28x28xf32>, %y: tensor<?xi32>) -> tensor<f32> {
  // Patches: [B, 7, 4, 7, 4] -> [B, 7, 7, 4, 4] -> [B * 49, 16].
  %x5 = fuse.reshape %x : (tensor<?x28x28xf32>) -> tensor<?x7x4x7x4xf32>
  %xt = fuse.transpose %x5 {permutation = array<i64: 0, 1, 3, 2, 4>} : (tensor<?x7x4x7x4xf32>) -> tensor<?x7x7x4x4xf32>
  %xp = fuse.reshape %xt : (tensor<?x7x7x4x4xf32>) -> tensor<?x16xf32>
  %e = fuse.matmul %xp, %wp : (tensor<?x16xf32>, tensor<16x64xf32>) -> tensor<?x64xf32>
  %eb = fuse.add %e, %bp : (tensor<?x64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
  %e3 = fuse.reshape %eb : (tensor<?x64xf32>) -> tensor<?x49x64xf32>
  %h0 = fuse.add %e3, %pos : (tensor<?x49x64xf32>, tensor<49x64xf32>) -> tensor<?x49x64xf32>
  // Block 0: attention.
  %ln1_0 = fuse.layer_norm %h0, %ln1_g0, %ln1_b0 : (tensor<?x49x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<?x49x64xf32>
  %a0 = fuse.reshape %ln1_0 : (tensor<?x49x64xf32>) -> tensor<?x64xf32>
  %qkv0 = fuse.matmul %a0, %wqkv0 : (tensor<?x64xf32>, tensor<64x192xf32>) -> tensor<?x192xf32>
  %qkvb0 = fuse.add %qkv0, %bqkv0 : (tensor<?x192xf32>, tensor<192xf32>) -> tensor<?x192xf32>
  %qkv3_0 = fuse.reshape %qkvb0 : (tensor<?x192xf32>) -> tensor<?x49x192xf32>
  %qs0 = fuse.slice %qkv3_0 {offsets = array<i64: 0, 0, 0>} : (tensor<?x49x192xf32>) -> tensor<?x49x64xf32>
  %qh04 = fuse.reshape %qs0 : (tensor<?x49x64xf32>) -> tensor<?x49x4x16xf32>
  %qh0t = fuse.transpose %qh04 {permutation = array<i64: 0, 2, 1, 3>} : (tensor<?x49x4x16xf32>) -> tensor<?x4x49x16xf32>
  %ks0 = fuse.slice %qkv3_0 {offsets = array<i64: 0, 0, 64>} : (tensor<?x49x192xf32>) -> tensor<?x49x64xf32>
  %kh04 = fuse.reshape %ks0 : (tensor<?x49x64xf32>) -> tensor<?x49x4x16xf32>
  %kh0t = fuse.transpose %kh04 {permutation = array<i64: 0, 2, 1, 3>} : (tensor<?x49x4x16xf32>) -> tensor<?x4x49x16xf32>
  %vs0 = fuse.slice %qkv3_0 {offsets = array<i64: 0, 0, 128>} : (tensor<?x49x192xf32>) -> tensor<?x49x64xf32>
  %vh04 = fuse.reshape %vs0 : (tensor<?x49x64xf32>) -> tensor<?x49x4x16xf32>
  %vh0t = fuse.transpose %vh04 {permutation = array<i64: 0, 2, 1, 3>} : (tensor<?x49x4x16xf32>) -> tensor<?x4x49x16xf32>
  %att4_0 = fuse.attention %qh0t, %kh0t, %vh0t : (tensor<?x4x49x16xf32>, tensor<?x4x49x16xf32>, tensor<?x4x49x16xf32>) -> tensor<?x4x49x16xf32>
  %attt0 = fuse.transpose %att4_0 {permutation = array<i64: 0, 2, 1, 3>} : (tensor<?x4x49x16xf32>) -> tensor<?x49x4x16xf32>
  %attf0 = fuse.reshape %attt0 : (tensor<?x49x4x16xf32>) -> tensor<?x64xf32>
  %o0 = fuse.matmul %attf0, %wo0 : (tensor<?x64xf32>, tensor<64x64xf32>) -> tensor<?x64xf32>
  %ob0 = fuse.add %o0, %bo0 : (tensor<?x64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
  %o3_0 = fuse.reshape %ob0 : (tensor<?x64xf32>) -> tensor<?x49x64xf32>
  %r0 = fuse.add %h0, %o3_0 : (tensor<?x49x64xf32>, tensor<?x49x64xf32>) -> tensor<?x49x64xf32>
  // Block 0: MLP.
  %ln2_0 = fuse.layer_norm %r0, %ln2_g0, %ln2_b0 : (tensor<?x49x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<?x49x64xf32>
  %m0 = fuse.reshape %ln2_0 : (tensor<?x49x64xf32>) -> tensor<?x64xf32>
  %u0 = fuse.matmul %m0, %w10 : (tensor<?x64xf32>, tensor<64x128xf32>) -> tensor<?x128xf32>
  %ub0 = fuse.add %u0, %b10 : (tensor<?x128xf32>, tensor<128xf32>) -> tensor<?x128xf32>
  %g0 = fuse.gelu %ub0 : tensor<?x128xf32>
  %dn0 = fuse.matmul %g0, %w20 : (tensor<?x128xf32>, tensor<128x64xf32>) -> tensor<?x64xf32>
  %dnb0 = fuse.add %dn0, %b20 : (tensor<?x64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
  %dn3_0 = fuse.reshape %dnb0 : (tensor<?x64xf32>) -> tensor<?x49x64xf32>
  %h1 = fuse.add %r0, %dn3_0 : (tensor<?x49x64xf32>, tensor<?x49x64xf32>) -> tensor<?x49x64xf32>
  // Block 1: attention.
  %ln1_1 = fuse.layer_norm %h1, %ln1_g1, %ln1_b1 : (tensor<?x49x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<?x49x64xf32>
  %a1 = fuse.reshape %ln1_1 : (tensor<?x49x64xf32>) -> tensor<?x64xf32>
  %qkv1 = fuse.matmul %a1, %wqkv1 : (tensor<?x64xf32>, tensor<64x192xf32>) -> tensor<?x192xf32>
  %qkvb1 = fuse.add %qkv1, %bqkv1 : (tensor<?x192xf32>, tensor<192xf32>) -> tensor<?x192xf32>
  %qkv3_1 = fuse.reshape %qkvb1 : (tensor<?x192xf32>) -> tensor<?x49x192xf32>
  %qs1 = fuse.slice %qkv3_1 {offsets = array<i64: 0, 0, 0>} : (tensor<?x49x192xf32>) -> tensor<?x49x64xf32>
  %qh14 = fuse.reshape %qs1 : (tensor<?x49x64xf32>) -> tensor<?x49x4x16xf32>
  %qh1t = fuse.transpose %qh14 {permutation = array<i64: 0, 2, 1, 3>} : (tensor<?x49x4x16xf32>) -> tensor<?x4x49x16xf32>
  %ks1 = fuse.slice %qkv3_1 {offsets = array<i64: 0, 0, 64>} : (tensor<?x49x192xf32>) -> tensor<?x49x64xf32>
  %kh14 = fuse.reshape %ks1 : (tensor<?x49x64xf32>) -> tensor<?x49x4x16xf32>
  %kh1t = fuse.transpose %kh14 {permutation = array<i64: 0, 2, 1, 3>} : (tensor<?x49x4x16xf32>) -> tensor<?x4x49x16xf32>
  %vs1 = fuse.slice %qkv3_1 {offsets = array<i64: 0, 0, 128>} : (tensor<?x49x192xf32>) -> tensor<?x49x64xf32>
  %vh14 = fuse.reshape %vs1 : (tensor<?x49x64xf32>) -> tensor<?x49x4x16xf32>
  %vh1t = fuse.transpose %vh14 {permutation = array<i64: 0, 2, 1, 3>} : (tensor<?x49x4x16xf32>) -> tensor<?x4x49x16xf32>
  %att4_1 = fuse.attention %qh1t, %kh1t, %vh1t : (tensor<?x4x49x16xf32>, tensor<?x4x49x16xf32>, tensor<?x4x49x16xf32>) -> tensor<?x4x49x16xf32>
  %attt1 = fuse.transpose %att4_1 {permutation = array<i64: 0, 2, 1, 3>} : (tensor<?x4x49x16xf32>) -> tensor<?x49x4x16xf32>
  %attf1 = fuse.reshape %attt1 : (tensor<?x49x4x16xf32>) -> tensor<?x64xf32>
  %o1 = fuse.matmul %attf1, %wo1 : (tensor<?x64xf32>, tensor<64x64xf32>) -> tensor<?x64xf32>
  %ob1 = fuse.add %o1, %bo1 : (tensor<?x64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
  %o3_1 = fuse.reshape %ob1 : (tensor<?x64xf32>) -> tensor<?x49x64xf32>
  %r1 = fuse.add %h1, %o3_1 : (tensor<?x49x64xf32>, tensor<?x49x64xf32>) -> tensor<?x49x64xf32>
  // Block 1: MLP.
  %ln2_1 = fuse.layer_norm %r1, %ln2_g1, %ln2_b1 : (tensor<?x49x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<?x49x64xf32>
  %m1 = fuse.reshape %ln2_1 : (tensor<?x49x64xf32>) -> tensor<?x64xf32>
  %u1 = fuse.matmul %m1, %w11 : (tensor<?x64xf32>, tensor<64x128xf32>) -> tensor<?x128xf32>
  %ub1 = fuse.add %u1, %b11 : (tensor<?x128xf32>, tensor<128xf32>) -> tensor<?x128xf32>
  %g1 = fuse.gelu %ub1 : tensor<?x128xf32>
  %dn1 = fuse.matmul %g1, %w21 : (tensor<?x128xf32>, tensor<128x64xf32>) -> tensor<?x64xf32>
  %dnb1 = fuse.add %dn1, %b21 : (tensor<?x64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
  %dn3_1 = fuse.reshape %dnb1 : (tensor<?x64xf32>) -> tensor<?x49x64xf32>
  %h2 = fuse.add %r1, %dn3_1 : (tensor<?x49x64xf32>, tensor<?x49x64xf32>) -> tensor<?x49x64xf32>
  // Head: layer norm, the mean over the patches, dense 10.
  %lnf = fuse.layer_norm %h2, %lnf_g, %lnf_b : (tensor<?x49x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<?x49x64xf32>
  %pool = fuse.reduce_mean %lnf {axes = array<i64: 1>} : (tensor<?x49x64xf32>) -> tensor<?x64xf32>
  %logits = fuse.matmul %pool, %wh : (tensor<?x64xf32>, tensor<64x10xf32>) -> tensor<?x10xf32>
  %lb = fuse.add %logits, %bh : (tensor<?x10xf32>, tensor<10xf32>) -> tensor<?x10xf32>
  %l = fuse.softmax_cross_entropy %lb, %y : (tensor<?x10xf32>, tensor<?xi32>) -> tensor<f32>
  return %l : tensor<f32>
}

fuse.train_step @train {loss = @loss,
    params = array<i64: 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30>,
    optimizer = "adam", no_decay = array<i64: 1, 3, 4, 6, 8, 9, 10, 12, 14, 15, 16, 18, 20, 21, 22, 24, 26, 27, 28, 30>,
    hyperparameters = {decoupled, weight_decay = 0.05 : f64}}
