// RUN: fuse-opt %s --pass-pipeline='builtin.module(func.func(fuse-tile-attention))' --split-input-file | FileCheck %s

// A causal attention over 2 x 3 heads of 8 queries and keys, in blocks of 4
// rows and 4 keys (the config's cache level): an image loop over the 6
// heads; in each, the queries scaled once, a loop over the 2 row blocks and,
// inside, one over the key blocks at or before the row block. Each block's
// scores are a 4 x 4 product; no 8 x 8 tensor exists.
// CHECK-LABEL: func @causal
// CHECK: %[[Q:.*]] = tensor.collapse_shape %{{.*}} {{\[}}[0, 1], [2], [3]] : tensor<2x3x8x16xf32> into tensor<6x8x16xf32>
// CHECK: scf.for %[[H:.*]] = %c0 to %c6 step %c1 iter_args(%{{.*}} = %{{.*}}) -> (tensor<6x8x16xf32>)
// CHECK: tensor.extract_slice %[[Q]][%[[H]], 0, 0] [1, 8, 16] [1, 1, 1] : tensor<6x8x16xf32> to tensor<8x16xf32>
// CHECK: arith.constant 2.500000e-01 : f32
// CHECK: scf.for %{{.*}} = %c0{{.*}} to %c2{{.*}} step
// CHECK: %[[END:.*]] = arith.ceildivui
// CHECK: %[[N:.*]] = arith.minui %[[END]], %c2{{.*}}
// CHECK: scf.for %{{.*}} = %c0{{.*}} to %[[N]] step
// CHECK: linalg.matmul {{.*}} ins(%{{.*}}, %{{.*}} : tensor<4x16xf32>, tensor<4x16xf32>) outs(%{{.*}} : tensor<4x4xf32>)
// CHECK: arith.cmpi ugt
// CHECK: arith.maximumf
// CHECK: math.exp
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<4x4xf32>, tensor<4x16xf32>) outs(%{{.*}} : tensor<4x16xf32>)
// CHECK: math.fma
// CHECK: arith.divf
// CHECK: } {fuse.image_loop}
// CHECK: tensor.expand_shape %{{.*}} {{\[}}[0, 1], [2], [3]] output_shape [2, 3, 8, 16] : tensor<6x8x16xf32> into tensor<2x3x8x16xf32>
// CHECK-NOT: tensor<8x8xf32>
// CHECK-NOT: fuse.attention
func.func @causal(%q: tensor<2x3x8x16xf32>, %k: tensor<2x3x8x16xf32>, %v: tensor<2x3x8x16xf32>) -> tensor<2x3x8x16xf32> {
  %0 = fuse.attention %q, %k, %v {causal, fuse.lowering_config = #fuse.lowering_config<strategy = attention_blocks, distribution = [0, 0, 0], cache = [1, 4, 4], registers = [0, 0, 0], vector = [0, 0, 0]>}
      : (tensor<2x3x8x16xf32>, tensor<2x3x8x16xf32>, tensor<2x3x8x16xf32>) -> tensor<2x3x8x16xf32>
  return %0 : tensor<2x3x8x16xf32>
}

// -----

// Without a config the strategy library's blocks (at most 64 rows and keys)
// apply; a 2-d attention is one head; the key loop runs over every block.
// CHECK-LABEL: func @cross
// CHECK: tensor.expand_shape %{{.*}} {{\[}}[0, 1], [2]] output_shape [1, 96, 8]
// CHECK: scf.for %{{.*}} = %c0{{.*}} to %c1{{.*}} step
// CHECK: scf.for %{{.*}} = %c0{{.*}} to %c2{{.*}} step
// CHECK-NOT: arith.minui
// CHECK: scf.for %{{.*}} = %c0{{.*}} to %c2{{.*}} step
// CHECK: linalg.matmul {{.*}} ins(%{{.*}}, %{{.*}} : tensor<48x8xf32>, tensor<40x8xf32>) outs(%{{.*}} : tensor<48x40xf32>)
// CHECK-NOT: arith.cmpi
// CHECK: } {fuse.image_loop}
func.func @cross(%q: tensor<96x8xf32>, %k: tensor<80x8xf32>, %v: tensor<80x4xf32>) -> tensor<96x4xf32> {
  %0 = fuse.attention %q, %k, %v {scale = 0.5 : f64} : (tensor<96x8xf32>, tensor<80x8xf32>, tensor<80x4xf32>) -> tensor<96x4xf32>
  return %0 : tensor<96x4xf32>
}

// -----

// The backward pass of an attention not in the function: per row block, the
// row term sum(dO * O), a first sweep
// for the log-sum-exp, a second for the gradients (five products a block:
// the scores again, P^T dO, dO V^T, dS K and dS^T Q); the three gradients
// are the image loop's results.
// CHECK-LABEL: func @backward
// CHECK: scf.for %{{.*}} -> (tensor<2x8x4xf32>, tensor<2x8x4xf32>, tensor<2x8x4xf32>)
// CHECK: scf.for %{{.*}} -> (tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>)
// CHECK: math.fma
// CHECK: scf.for %{{.*}} -> (tensor<4xf32>, tensor<4xf32>)
// CHECK: math.log
// CHECK: scf.for %{{.*}} -> (tensor<4x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>)
// CHECK-COUNT-5: linalg.matmul
// CHECK: } {fuse.image_loop}
// CHECK-NOT: tensor<8x8xf32>
func.func @backward(%q: tensor<2x8x4xf32>, %o: tensor<2x8x4xf32>, %g: tensor<2x8x4xf32>) -> (tensor<2x8x4xf32>, tensor<2x8x4xf32>, tensor<2x8x4xf32>) {
  %0:3 = fuse.attention_grad %q, %q, %q, %o, %g {causal, scale = 0.5 : f64, fuse.lowering_config = #fuse.lowering_config<strategy = attention_blocks, distribution = [0, 0, 0], cache = [1, 4, 4], registers = [0, 0, 0], vector = [0, 0, 0]>}
      : (tensor<2x8x4xf32>, tensor<2x8x4xf32>, tensor<2x8x4xf32>, tensor<2x8x4xf32>, tensor<2x8x4xf32>) -> (tensor<2x8x4xf32>, tensor<2x8x4xf32>, tensor<2x8x4xf32>)
  return %0#0, %0#1, %0#2 : tensor<2x8x4xf32>, tensor<2x8x4xf32>, tensor<2x8x4xf32>
}

// -----

// A forward attention whose gradient is in the same block keeps each row's
// log-sum-exp ([heads, rows], a second result of its image loop), and the
// gradient reads it: no first sweep over the keys (one product a block and
// the softmax's statistics less).
// CHECK-LABEL: func @forward_and_backward
// CHECK: %[[FWD:.*]]:2 = scf.for %{{.*}} -> (tensor<2x8x4xf32>, tensor<2x8xf32>)
// CHECK: math.log
// CHECK: tensor.insert_slice %{{.*}} into %{{.*}}[%{{.*}}] [4] [1] : tensor<4xf32> into tensor<8xf32>
// CHECK: } {fuse.image_loop}
// CHECK: scf.for %{{.*}} -> (tensor<2x8x4xf32>, tensor<2x8x4xf32>, tensor<2x8x4xf32>)
// CHECK: tensor.extract_slice %[[FWD]]#1[%{{.*}}, 0] [1, 8] [1, 1] : tensor<2x8xf32> to tensor<8xf32>
// CHECK-NOT: math.log
// CHECK: scf.for %{{.*}} -> (tensor<4x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>)
// CHECK-COUNT-5: linalg.matmul
// CHECK-NOT: linalg.matmul
// CHECK: } {fuse.image_loop}
func.func @forward_and_backward(%q: tensor<2x8x4xf32>, %g: tensor<2x8x4xf32>) -> (tensor<2x8x4xf32>, tensor<2x8x4xf32>, tensor<2x8x4xf32>, tensor<2x8x4xf32>) {
  %o = fuse.attention %q, %q, %q {causal, scale = 0.5 : f64, fuse.lowering_config = #fuse.lowering_config<strategy = attention_blocks, distribution = [0, 0, 0], cache = [1, 4, 4], registers = [0, 0, 0], vector = [0, 0, 0]>}
      : (tensor<2x8x4xf32>, tensor<2x8x4xf32>, tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
  %0:3 = fuse.attention_grad %q, %q, %q, %o, %g {causal, scale = 0.5 : f64, fuse.lowering_config = #fuse.lowering_config<strategy = attention_blocks, distribution = [0, 0, 0], cache = [1, 4, 4], registers = [0, 0, 0], vector = [0, 0, 0]>}
      : (tensor<2x8x4xf32>, tensor<2x8x4xf32>, tensor<2x8x4xf32>, tensor<2x8x4xf32>, tensor<2x8x4xf32>) -> (tensor<2x8x4xf32>, tensor<2x8x4xf32>, tensor<2x8x4xf32>)
  return %o, %0#0, %0#1, %0#2 : tensor<2x8x4xf32>, tensor<2x8x4xf32>, tensor<2x8x4xf32>, tensor<2x8x4xf32>
}

// -----

// A gradient of another attention's result (different scale) sweeps for
// the log-sum-exp itself.
// CHECK-LABEL: func @other_forward
// CHECK: scf.for %{{.*}} -> (tensor<2x8x4xf32>) {
// CHECK: } {fuse.image_loop}
// CHECK: scf.for %{{.*}} -> (tensor<4xf32>, tensor<4xf32>)
// CHECK: math.log
// CHECK: scf.for %{{.*}} -> (tensor<4x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>)
// CHECK-COUNT-5: linalg.matmul
func.func @other_forward(%q: tensor<2x8x4xf32>, %g: tensor<2x8x4xf32>) -> (tensor<2x8x4xf32>, tensor<2x8x4xf32>, tensor<2x8x4xf32>) {
  %o = fuse.attention %q, %q, %q {causal, scale = 0.25 : f64, fuse.lowering_config = #fuse.lowering_config<strategy = attention_blocks, distribution = [0, 0, 0], cache = [1, 4, 4], registers = [0, 0, 0], vector = [0, 0, 0]>}
      : (tensor<2x8x4xf32>, tensor<2x8x4xf32>, tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
  %0:3 = fuse.attention_grad %q, %q, %q, %o, %g {causal, scale = 0.5 : f64, fuse.lowering_config = #fuse.lowering_config<strategy = attention_blocks, distribution = [0, 0, 0], cache = [1, 4, 4], registers = [0, 0, 0], vector = [0, 0, 0]>}
      : (tensor<2x8x4xf32>, tensor<2x8x4xf32>, tensor<2x8x4xf32>, tensor<2x8x4xf32>, tensor<2x8x4xf32>) -> (tensor<2x8x4xf32>, tensor<2x8x4xf32>, tensor<2x8x4xf32>)
  return %0#0, %0#1, %0#2 : tensor<2x8x4xf32>, tensor<2x8x4xf32>, tensor<2x8x4xf32>
}
