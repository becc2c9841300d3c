// A decoder-only transformer (GPT-2's layout), byte-level: 256 tokens.
//   token embedding + learned position embedding
//   -> 4 blocks of [pre-LN causal multi-head attention (4 heads of 32; one
//                    fuse.attention, computed in blocks, never storing
//                    the 128 x 128 scores),
//                    pre-LN MLP 128 -> 512 -> 128 with GELU (tanh form)]
//   -> final layer norm -> logits through the token embedding (tied)
//   -> next-token cross-entropy over every position.
// d = 128, context T = 128: about 0.84M parameters. Weights start as GPT-2's
// (normal, stddev 0.02; the residual projections 0.02 / sqrt(2 L)), layer
// norms at scale 1 and bias 0. @train is one AdamW step (decoupled weight
// decay 0.1 on the matrices and embeddings, none on biases and layer
// norms; betas 0.9, 0.95). `fusec train examples/gpt.mlir --format=text`
// trains it on Debian's fortunes.

func.func @loss(
    %wte: tensor<256x128xf32> {fuse.init = #fuse.init<normal, stddev = 0.02>},
    %wpe: tensor<128x128xf32> {fuse.init = #fuse.init<normal, stddev = 0.01>},
    %ln1_g0: tensor<128xf32> {fuse.init = #fuse.init<ones>},
    %ln1_b0: tensor<128xf32> {fuse.init = #fuse.init<zeros>},
    %wqkv0: tensor<128x384xf32> {fuse.init = #fuse.init<normal, stddev = 0.02>},
    %bqkv0: tensor<384xf32> {fuse.init = #fuse.init<zeros>},
    %wo0: tensor<128x128xf32> {fuse.init = #fuse.init<normal, stddev = 0.007071>},
    %bo0: tensor<128xf32> {fuse.init = #fuse.init<zeros>},
    %ln2_g0: tensor<128xf32> {fuse.init = #fuse.init<ones>},
    %ln2_b0: tensor<128xf32> {fuse.init = #fuse.init<zeros>},
    %w10: tensor<128x512xf32> {fuse.init = #fuse.init<normal, stddev = 0.02>},
    %b10: tensor<512xf32> {fuse.init = #fuse.init<zeros>},
    %w20: tensor<512x128xf32> {fuse.init = #fuse.init<normal, stddev = 0.007071>},
    %b20: tensor<128xf32> {fuse.init = #fuse.init<zeros>},
    %ln1_g1: tensor<128xf32> {fuse.init = #fuse.init<ones>},
    %ln1_b1: tensor<128xf32> {fuse.init = #fuse.init<zeros>},
    %wqkv1: tensor<128x384xf32> {fuse.init = #fuse.init<normal, stddev = 0.02>},
    %bqkv1: tensor<384xf32> {fuse.init = #fuse.init<zeros>},
    %wo1: tensor<128x128xf32> {fuse.init = #fuse.init<normal, stddev = 0.007071>},
    %bo1: tensor<128xf32> {fuse.init = #fuse.init<zeros>},
    %ln2_g1: tensor<128xf32> {fuse.init = #fuse.init<ones>},
    %ln2_b1: tensor<128xf32> {fuse.init = #fuse.init<zeros>},
    %w11: tensor<128x512xf32> {fuse.init = #fuse.init<normal, stddev = 0.02>},
    %b11: tensor<512xf32> {fuse.init = #fuse.init<zeros>},
    %w21: tensor<512x128xf32> {fuse.init = #fuse.init<normal, stddev = 0.007071>},
    %b21: tensor<128xf32> {fuse.init = #fuse.init<zeros>},
    %ln1_g2: tensor<128xf32> {fuse.init = #fuse.init<ones>},
    %ln1_b2: tensor<128xf32> {fuse.init = #fuse.init<zeros>},
    %wqkv2: tensor<128x384xf32> {fuse.init = #fuse.init<normal, stddev = 0.02>},
    %bqkv2: tensor<384xf32> {fuse.init = #fuse.init<zeros>},
    %wo2: tensor<128x128xf32> {fuse.init = #fuse.init<normal, stddev = 0.007071>},
    %bo2: tensor<128xf32> {fuse.init = #fuse.init<zeros>},
    %ln2_g2: tensor<128xf32> {fuse.init = #fuse.init<ones>},
    %ln2_b2: tensor<128xf32> {fuse.init = #fuse.init<zeros>},
    %w12: tensor<128x512xf32> {fuse.init = #fuse.init<normal, stddev = 0.02>},
    %b12: tensor<512xf32> {fuse.init = #fuse.init<zeros>},
    %w22: tensor<512x128xf32> {fuse.init = #fuse.init<normal, stddev = 0.007071>},
    %b22: tensor<128xf32> {fuse.init = #fuse.init<zeros>},
    %ln1_g3: tensor<128xf32> {fuse.init = #fuse.init<ones>},
    %ln1_b3: tensor<128xf32> {fuse.init = #fuse.init<zeros>},
    %wqkv3: tensor<128x384xf32> {fuse.init = #fuse.init<normal, stddev = 0.02>},
    %bqkv3: tensor<384xf32> {fuse.init = #fuse.init<zeros>},
    %wo3: tensor<128x128xf32> {fuse.init = #fuse.init<normal, stddev = 0.007071>},
    %bo3: tensor<128xf32> {fuse.init = #fuse.init<zeros>},
    %ln2_g3: tensor<128xf32> {fuse.init = #fuse.init<ones>},
    %ln2_b3: tensor<128xf32> {fuse.init = #fuse.init<zeros>},
    %w13: tensor<128x512xf32> {fuse.init = #fuse.init<normal, stddev = 0.02>},
    %b13: tensor<512xf32> {fuse.init = #fuse.init<zeros>},
    %w23: tensor<512x128xf32> {fuse.init = #fuse.init<normal, stddev = 0.007071>},
    %b23: tensor<128xf32> {fuse.init = #fuse.init<zeros>},
    %lnf_g: tensor<128xf32> {fuse.init = #fuse.init<ones>},
    %lnf_b: tensor<128xf32> {fuse.init = #fuse.init<zeros>},
    %x: tensor<?x128xi32>, %y: tensor<?x128xi32>) -> tensor<f32> {
  // Embeddings: a token's row plus its position's.
  %tok = fuse.gather %wte, %x : (tensor<256x128xf32>, tensor<?x128xi32>) -> tensor<?x128x128xf32>
  %h0 = fuse.add %tok, %wpe : (tensor<?x128x128xf32>, tensor<128x128xf32>) -> tensor<?x128x128xf32>
  // Block 0: attention.
  %ln1_0 = fuse.layer_norm %h0, %ln1_g0, %ln1_b0 : (tensor<?x128x128xf32>, tensor<128xf32>, tensor<128xf32>) -> tensor<?x128x128xf32>
  %a0 = fuse.reshape %ln1_0 : (tensor<?x128x128xf32>) -> tensor<?x128xf32>
  %qkv0 = fuse.matmul %a0, %wqkv0 : (tensor<?x128xf32>, tensor<128x384xf32>) -> tensor<?x384xf32>
  %qkvb0 = fuse.add %qkv0, %bqkv0 : (tensor<?x384xf32>, tensor<384xf32>) -> tensor<?x384xf32>
  %qkv3_0 = fuse.reshape %qkvb0 : (tensor<?x384xf32>) -> tensor<?x128x384xf32>
  %qs0 = fuse.slice %qkv3_0 {offsets = array<i64: 0, 0, 0>} : (tensor<?x128x384xf32>) -> tensor<?x128x128xf32>
  %qh04 = fuse.reshape %qs0 : (tensor<?x128x128xf32>) -> tensor<?x128x4x32xf32>
  %qh0t = fuse.transpose %qh04 {permutation = array<i64: 0, 2, 1, 3>} : (tensor<?x128x4x32xf32>) -> tensor<?x4x128x32xf32>
  %ks0 = fuse.slice %qkv3_0 {offsets = array<i64: 0, 0, 128>} : (tensor<?x128x384xf32>) -> tensor<?x128x128xf32>
  %kh04 = fuse.reshape %ks0 : (tensor<?x128x128xf32>) -> tensor<?x128x4x32xf32>
  %kh0t = fuse.transpose %kh04 {permutation = array<i64: 0, 2, 1, 3>} : (tensor<?x128x4x32xf32>) -> tensor<?x4x128x32xf32>
  %vs0 = fuse.slice %qkv3_0 {offsets = array<i64: 0, 0, 256>} : (tensor<?x128x384xf32>) -> tensor<?x128x128xf32>
  %vh04 = fuse.reshape %vs0 : (tensor<?x128x128xf32>) -> tensor<?x128x4x32xf32>
  %vh0t = fuse.transpose %vh04 {permutation = array<i64: 0, 2, 1, 3>} : (tensor<?x128x4x32xf32>) -> tensor<?x4x128x32xf32>
  %att4_0 = fuse.attention %qh0t, %kh0t, %vh0t {causal} : (tensor<?x4x128x32xf32>, tensor<?x4x128x32xf32>, tensor<?x4x128x32xf32>) -> tensor<?x4x128x32xf32>
  %attt0 = fuse.transpose %att4_0 {permutation = array<i64: 0, 2, 1, 3>} : (tensor<?x4x128x32xf32>) -> tensor<?x128x4x32xf32>
  %attf0 = fuse.reshape %attt0 : (tensor<?x128x4x32xf32>) -> tensor<?x128xf32>
  %o0 = fuse.matmul %attf0, %wo0 : (tensor<?x128xf32>, tensor<128x128xf32>) -> tensor<?x128xf32>
  %ob0 = fuse.add %o0, %bo0 : (tensor<?x128xf32>, tensor<128xf32>) -> tensor<?x128xf32>
  %o3_0 = fuse.reshape %ob0 : (tensor<?x128xf32>) -> tensor<?x128x128xf32>
  %r0 = fuse.add %h0, %o3_0 : (tensor<?x128x128xf32>, tensor<?x128x128xf32>) -> tensor<?x128x128xf32>
  // Block 0: MLP.
  %ln2_0 = fuse.layer_norm %r0, %ln2_g0, %ln2_b0 : (tensor<?x128x128xf32>, tensor<128xf32>, tensor<128xf32>) -> tensor<?x128x128xf32>
  %m0 = fuse.reshape %ln2_0 : (tensor<?x128x128xf32>) -> tensor<?x128xf32>
  %u0 = fuse.matmul %m0, %w10 : (tensor<?x128xf32>, tensor<128x512xf32>) -> tensor<?x512xf32>
  %ub0 = fuse.add %u0, %b10 : (tensor<?x512xf32>, tensor<512xf32>) -> tensor<?x512xf32>
  %g0 = fuse.gelu %ub0 {approximate = "tanh"} : tensor<?x512xf32>
  %dn0 = fuse.matmul %g0, %w20 : (tensor<?x512xf32>, tensor<512x128xf32>) -> tensor<?x128xf32>
  %dnb0 = fuse.add %dn0, %b20 : (tensor<?x128xf32>, tensor<128xf32>) -> tensor<?x128xf32>
  %dn3_0 = fuse.reshape %dnb0 : (tensor<?x128xf32>) -> tensor<?x128x128xf32>
  %h1 = fuse.add %r0, %dn3_0 : (tensor<?x128x128xf32>, tensor<?x128x128xf32>) -> tensor<?x128x128xf32>
  // Block 1: attention.
  %ln1_1 = fuse.layer_norm %h1, %ln1_g1, %ln1_b1 : (tensor<?x128x128xf32>, tensor<128xf32>, tensor<128xf32>) -> tensor<?x128x128xf32>
  %a1 = fuse.reshape %ln1_1 : (tensor<?x128x128xf32>) -> tensor<?x128xf32>
  %qkv1 = fuse.matmul %a1, %wqkv1 : (tensor<?x128xf32>, tensor<128x384xf32>) -> tensor<?x384xf32>
  %qkvb1 = fuse.add %qkv1, %bqkv1 : (tensor<?x384xf32>, tensor<384xf32>) -> tensor<?x384xf32>
  %qkv3_1 = fuse.reshape %qkvb1 : (tensor<?x384xf32>) -> tensor<?x128x384xf32>
  %qs1 = fuse.slice %qkv3_1 {offsets = array<i64: 0, 0, 0>} : (tensor<?x128x384xf32>) -> tensor<?x128x128xf32>
  %qh14 = fuse.reshape %qs1 : (tensor<?x128x128xf32>) -> tensor<?x128x4x32xf32>
  %qh1t = fuse.transpose %qh14 {permutation = array<i64: 0, 2, 1, 3>} : (tensor<?x128x4x32xf32>) -> tensor<?x4x128x32xf32>
  %ks1 = fuse.slice %qkv3_1 {offsets = array<i64: 0, 0, 128>} : (tensor<?x128x384xf32>) -> tensor<?x128x128xf32>
  %kh14 = fuse.reshape %ks1 : (tensor<?x128x128xf32>) -> tensor<?x128x4x32xf32>
  %kh1t = fuse.transpose %kh14 {permutation = array<i64: 0, 2, 1, 3>} : (tensor<?x128x4x32xf32>) -> tensor<?x4x128x32xf32>
  %vs1 = fuse.slice %qkv3_1 {offsets = array<i64: 0, 0, 256>} : (tensor<?x128x384xf32>) -> tensor<?x128x128xf32>
  %vh14 = fuse.reshape %vs1 : (tensor<?x128x128xf32>) -> tensor<?x128x4x32xf32>
  %vh1t = fuse.transpose %vh14 {permutation = array<i64: 0, 2, 1, 3>} : (tensor<?x128x4x32xf32>) -> tensor<?x4x128x32xf32>
  %att4_1 = fuse.attention %qh1t, %kh1t, %vh1t {causal} : (tensor<?x4x128x32xf32>, tensor<?x4x128x32xf32>, tensor<?x4x128x32xf32>) -> tensor<?x4x128x32xf32>
  %attt1 = fuse.transpose %att4_1 {permutation = array<i64: 0, 2, 1, 3>} : (tensor<?x4x128x32xf32>) -> tensor<?x128x4x32xf32>
  %attf1 = fuse.reshape %attt1 : (tensor<?x128x4x32xf32>) -> tensor<?x128xf32>
  %o1 = fuse.matmul %attf1, %wo1 : (tensor<?x128xf32>, tensor<128x128xf32>) -> tensor<?x128xf32>
  %ob1 = fuse.add %o1, %bo1 : (tensor<?x128xf32>, tensor<128xf32>) -> tensor<?x128xf32>
  %o3_1 = fuse.reshape %ob1 : (tensor<?x128xf32>) -> tensor<?x128x128xf32>
  %r1 = fuse.add %h1, %o3_1 : (tensor<?x128x128xf32>, tensor<?x128x128xf32>) -> tensor<?x128x128xf32>
  // Block 1: MLP.
  %ln2_1 = fuse.layer_norm %r1, %ln2_g1, %ln2_b1 : (tensor<?x128x128xf32>, tensor<128xf32>, tensor<128xf32>) -> tensor<?x128x128xf32>
  %m1 = fuse.reshape %ln2_1 : (tensor<?x128x128xf32>) -> tensor<?x128xf32>
  %u1 = fuse.matmul %m1, %w11 : (tensor<?x128xf32>, tensor<128x512xf32>) -> tensor<?x512xf32>
  %ub1 = fuse.add %u1, %b11 : (tensor<?x512xf32>, tensor<512xf32>) -> tensor<?x512xf32>
  %g1 = fuse.gelu %ub1 {approximate = "tanh"} : tensor<?x512xf32>
  %dn1 = fuse.matmul %g1, %w21 : (tensor<?x512xf32>, tensor<512x128xf32>) -> tensor<?x128xf32>
  %dnb1 = fuse.add %dn1, %b21 : (tensor<?x128xf32>, tensor<128xf32>) -> tensor<?x128xf32>
  %dn3_1 = fuse.reshape %dnb1 : (tensor<?x128xf32>) -> tensor<?x128x128xf32>
  %h2 = fuse.add %r1, %dn3_1 : (tensor<?x128x128xf32>, tensor<?x128x128xf32>) -> tensor<?x128x128xf32>
  // Block 2: attention.
  %ln1_2 = fuse.layer_norm %h2, %ln1_g2, %ln1_b2 : (tensor<?x128x128xf32>, tensor<128xf32>, tensor<128xf32>) -> tensor<?x128x128xf32>
  %a2 = fuse.reshape %ln1_2 : (tensor<?x128x128xf32>) -> tensor<?x128xf32>
  %qkv2 = fuse.matmul %a2, %wqkv2 : (tensor<?x128xf32>, tensor<128x384xf32>) -> tensor<?x384xf32>
  %qkvb2 = fuse.add %qkv2, %bqkv2 : (tensor<?x384xf32>, tensor<384xf32>) -> tensor<?x384xf32>
  %qkv3_2 = fuse.reshape %qkvb2 : (tensor<?x384xf32>) -> tensor<?x128x384xf32>
  %qs2 = fuse.slice %qkv3_2 {offsets = array<i64: 0, 0, 0>} : (tensor<?x128x384xf32>) -> tensor<?x128x128xf32>
  %qh24 = fuse.reshape %qs2 : (tensor<?x128x128xf32>) -> tensor<?x128x4x32xf32>
  %qh2t = fuse.transpose %qh24 {permutation = array<i64: 0, 2, 1, 3>} : (tensor<?x128x4x32xf32>) -> tensor<?x4x128x32xf32>
  %ks2 = fuse.slice %qkv3_2 {offsets = array<i64: 0, 0, 128>} : (tensor<?x128x384xf32>) -> tensor<?x128x128xf32>
  %kh24 = fuse.reshape %ks2 : (tensor<?x128x128xf32>) -> tensor<?x128x4x32xf32>
  %kh2t = fuse.transpose %kh24 {permutation = array<i64: 0, 2, 1, 3>} : (tensor<?x128x4x32xf32>) -> tensor<?x4x128x32xf32>
  %vs2 = fuse.slice %qkv3_2 {offsets = array<i64: 0, 0, 256>} : (tensor<?x128x384xf32>) -> tensor<?x128x128xf32>
  %vh24 = fuse.reshape %vs2 : (tensor<?x128x128xf32>) -> tensor<?x128x4x32xf32>
  %vh2t = fuse.transpose %vh24 {permutation = array<i64: 0, 2, 1, 3>} : (tensor<?x128x4x32xf32>) -> tensor<?x4x128x32xf32>
  %att4_2 = fuse.attention %qh2t, %kh2t, %vh2t {causal} : (tensor<?x4x128x32xf32>, tensor<?x4x128x32xf32>, tensor<?x4x128x32xf32>) -> tensor<?x4x128x32xf32>
  %attt2 = fuse.transpose %att4_2 {permutation = array<i64: 0, 2, 1, 3>} : (tensor<?x4x128x32xf32>) -> tensor<?x128x4x32xf32>
  %attf2 = fuse.reshape %attt2 : (tensor<?x128x4x32xf32>) -> tensor<?x128xf32>
  %o2 = fuse.matmul %attf2, %wo2 : (tensor<?x128xf32>, tensor<128x128xf32>) -> tensor<?x128xf32>
  %ob2 = fuse.add %o2, %bo2 : (tensor<?x128xf32>, tensor<128xf32>) -> tensor<?x128xf32>
  %o3_2 = fuse.reshape %ob2 : (tensor<?x128xf32>) -> tensor<?x128x128xf32>
  %r2 = fuse.add %h2, %o3_2 : (tensor<?x128x128xf32>, tensor<?x128x128xf32>) -> tensor<?x128x128xf32>
  // Block 2: MLP.
  %ln2_2 = fuse.layer_norm %r2, %ln2_g2, %ln2_b2 : (tensor<?x128x128xf32>, tensor<128xf32>, tensor<128xf32>) -> tensor<?x128x128xf32>
  %m2 = fuse.reshape %ln2_2 : (tensor<?x128x128xf32>) -> tensor<?x128xf32>
  %u2 = fuse.matmul %m2, %w12 : (tensor<?x128xf32>, tensor<128x512xf32>) -> tensor<?x512xf32>
  %ub2 = fuse.add %u2, %b12 : (tensor<?x512xf32>, tensor<512xf32>) -> tensor<?x512xf32>
  %g2 = fuse.gelu %ub2 {approximate = "tanh"} : tensor<?x512xf32>
  %dn2 = fuse.matmul %g2, %w22 : (tensor<?x512xf32>, tensor<512x128xf32>) -> tensor<?x128xf32>
  %dnb2 = fuse.add %dn2, %b22 : (tensor<?x128xf32>, tensor<128xf32>) -> tensor<?x128xf32>
  %dn3_2 = fuse.reshape %dnb2 : (tensor<?x128xf32>) -> tensor<?x128x128xf32>
  %h3 = fuse.add %r2, %dn3_2 : (tensor<?x128x128xf32>, tensor<?x128x128xf32>) -> tensor<?x128x128xf32>
  // Block 3: attention.
  %ln1_3 = fuse.layer_norm %h3, %ln1_g3, %ln1_b3 : (tensor<?x128x128xf32>, tensor<128xf32>, tensor<128xf32>) -> tensor<?x128x128xf32>
  %a3 = fuse.reshape %ln1_3 : (tensor<?x128x128xf32>) -> tensor<?x128xf32>
  %qkv3 = fuse.matmul %a3, %wqkv3 : (tensor<?x128xf32>, tensor<128x384xf32>) -> tensor<?x384xf32>
  %qkvb3 = fuse.add %qkv3, %bqkv3 : (tensor<?x384xf32>, tensor<384xf32>) -> tensor<?x384xf32>
  %qkv3_3 = fuse.reshape %qkvb3 : (tensor<?x384xf32>) -> tensor<?x128x384xf32>
  %qs3 = fuse.slice %qkv3_3 {offsets = array<i64: 0, 0, 0>} : (tensor<?x128x384xf32>) -> tensor<?x128x128xf32>
  %qh34 = fuse.reshape %qs3 : (tensor<?x128x128xf32>) -> tensor<?x128x4x32xf32>
  %qh3t = fuse.transpose %qh34 {permutation = array<i64: 0, 2, 1, 3>} : (tensor<?x128x4x32xf32>) -> tensor<?x4x128x32xf32>
  %ks3 = fuse.slice %qkv3_3 {offsets = array<i64: 0, 0, 128>} : (tensor<?x128x384xf32>) -> tensor<?x128x128xf32>
  %kh34 = fuse.reshape %ks3 : (tensor<?x128x128xf32>) -> tensor<?x128x4x32xf32>
  %kh3t = fuse.transpose %kh34 {permutation = array<i64: 0, 2, 1, 3>} : (tensor<?x128x4x32xf32>) -> tensor<?x4x128x32xf32>
  %vs3 = fuse.slice %qkv3_3 {offsets = array<i64: 0, 0, 256>} : (tensor<?x128x384xf32>) -> tensor<?x128x128xf32>
  %vh34 = fuse.reshape %vs3 : (tensor<?x128x128xf32>) -> tensor<?x128x4x32xf32>
  %vh3t = fuse.transpose %vh34 {permutation = array<i64: 0, 2, 1, 3>} : (tensor<?x128x4x32xf32>) -> tensor<?x4x128x32xf32>
  %att4_3 = fuse.attention %qh3t, %kh3t, %vh3t {causal} : (tensor<?x4x128x32xf32>, tensor<?x4x128x32xf32>, tensor<?x4x128x32xf32>) -> tensor<?x4x128x32xf32>
  %attt3 = fuse.transpose %att4_3 {permutation = array<i64: 0, 2, 1, 3>} : (tensor<?x4x128x32xf32>) -> tensor<?x128x4x32xf32>
  %attf3 = fuse.reshape %attt3 : (tensor<?x128x4x32xf32>) -> tensor<?x128xf32>
  %o3 = fuse.matmul %attf3, %wo3 : (tensor<?x128xf32>, tensor<128x128xf32>) -> tensor<?x128xf32>
  %ob3 = fuse.add %o3, %bo3 : (tensor<?x128xf32>, tensor<128xf32>) -> tensor<?x128xf32>
  %o3_3 = fuse.reshape %ob3 : (tensor<?x128xf32>) -> tensor<?x128x128xf32>
  %r3 = fuse.add %h3, %o3_3 : (tensor<?x128x128xf32>, tensor<?x128x128xf32>) -> tensor<?x128x128xf32>
  // Block 3: MLP.
  %ln2_3 = fuse.layer_norm %r3, %ln2_g3, %ln2_b3 : (tensor<?x128x128xf32>, tensor<128xf32>, tensor<128xf32>) -> tensor<?x128x128xf32>
  %m3 = fuse.reshape %ln2_3 : (tensor<?x128x128xf32>) -> tensor<?x128xf32>
  %u3 = fuse.matmul %m3, %w13 : (tensor<?x128xf32>, tensor<128x512xf32>) -> tensor<?x512xf32>
  %ub3 = fuse.add %u3, %b13 : (tensor<?x512xf32>, tensor<512xf32>) -> tensor<?x512xf32>
  %g3 = fuse.gelu %ub3 {approximate = "tanh"} : tensor<?x512xf32>
  %dn3 = fuse.matmul %g3, %w23 : (tensor<?x512xf32>, tensor<512x128xf32>) -> tensor<?x128xf32>
  %dnb3 = fuse.add %dn3, %b23 : (tensor<?x128xf32>, tensor<128xf32>) -> tensor<?x128xf32>
  %dn3_3 = fuse.reshape %dnb3 : (tensor<?x128xf32>) -> tensor<?x128x128xf32>
  %h4 = fuse.add %r3, %dn3_3 : (tensor<?x128x128xf32>, tensor<?x128x128xf32>) -> tensor<?x128x128xf32>
  // Output: final layer norm, logits through the token embedding.
  %lnf = fuse.layer_norm %h4, %lnf_g, %lnf_b : (tensor<?x128x128xf32>, tensor<128xf32>, tensor<128xf32>) -> tensor<?x128x128xf32>
  %hf = fuse.reshape %lnf : (tensor<?x128x128xf32>) -> tensor<?x128xf32>
  %logits = fuse.matmul %hf, %wte {transpose_rhs} : (tensor<?x128xf32>, tensor<256x128xf32>) -> tensor<?x256xf32>
  %labels = fuse.reshape %y : (tensor<?x128xi32>) -> tensor<?xi32>
  %l = fuse.softmax_cross_entropy %logits, %labels : (tensor<?x256xf32>, tensor<?xi32>) -> tensor<f32>
  return %l : tensor<f32>
}

fuse.train_step @train {loss = @loss,
    params = array<i64: 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51>,
    optimizer = "adam", no_decay = array<i64: 2, 3, 5, 7, 8, 9, 11, 13, 14, 15, 17, 19, 20, 21, 23, 25, 26, 27, 29, 31, 32, 33, 35, 37, 38, 39, 41, 43, 44, 45, 47, 49, 50, 51>,
    hyperparameters = {decoupled, weight_decay = 0.1 : f64, beta2 = 0.95 : f64}}
