// RUN: fuse-opt %s --fuse-apply-precision-policy --split-input-file --verify-diagnostics | FileCheck %s --check-prefixes=CHECK,FLUSH
// RUN: fuse-opt %s --fuse-apply-precision-policy=flushed-denormals=false --split-input-file --verify-diagnostics | FileCheck %s --check-prefixes=CHECK,KEEP

// A bf16 step: both factors of every matmul (forward and the two
// gradients) read bf16 copies; a value read by several contractions is
// cast once; results, the bias add, the loss and the update stay f32.
// CHECK-LABEL: func.func @step
// CHECK-SAME: attributes {fuse.precision = "bf16"}
// CHECK-DAG: %[[WB:.*]] = fuse.cast %arg0 : (tensor<6x4xf32>) -> tensor<6x4xbf16>
// CHECK-DAG: %[[XB:.*]] = fuse.cast %arg1 : (tensor<8x6xf32>) -> tensor<8x6xbf16>
// CHECK: %[[Y:.*]] = fuse.matmul %[[XB]], %[[WB]] : (tensor<8x6xbf16>, tensor<6x4xbf16>) -> tensor<8x4xf32>
// CHECK: %[[G:.*]] = fuse.add %[[Y]], %arg2 : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
// CHECK: %[[GB:.*]] = fuse.cast %[[G]] : (tensor<8x4xf32>) -> tensor<8x4xbf16>
// CHECK: fuse.matmul %[[XB]], %[[GB]] {transpose_lhs} : (tensor<8x6xbf16>, tensor<8x4xbf16>) -> tensor<6x4xf32>
// CHECK: fuse.matmul %[[GB]], %[[WB]] {transpose_rhs} : (tensor<8x4xbf16>, tensor<6x4xbf16>) -> tensor<8x6xf32>
// CHECK-NOT: fuse.cast
func.func @step(%w: tensor<6x4xf32>, %x: tensor<8x6xf32>, %b: tensor<8x4xf32>) -> (tensor<6x4xf32>, tensor<8x6xf32>) attributes {fuse.precision = "bf16"} {
  %y = fuse.matmul %x, %w : (tensor<8x6xf32>, tensor<6x4xf32>) -> tensor<8x4xf32>
  %g = fuse.add %y, %b : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
  %dw = fuse.matmul %x, %g {transpose_lhs} : (tensor<8x6xf32>, tensor<8x4xf32>) -> tensor<6x4xf32>
  %dx = fuse.matmul %g, %w {transpose_rhs} : (tensor<8x4xf32>, tensor<6x4xf32>) -> tensor<8x6xf32>
  return %dw, %dx : tensor<6x4xf32>, tensor<8x6xf32>
}

// -----

// Without the attribute (or with f32) nothing changes.
// CHECK-LABEL: func.func @f32_step
// CHECK-NOT: fuse.cast
// CHECK: fuse.matmul %arg1, %arg0 : (tensor<8x6xf32>, tensor<6x4xf32>) -> tensor<8x4xf32>
func.func @f32_step(%w: tensor<6x4xf32>, %x: tensor<8x6xf32>) -> tensor<8x4xf32> attributes {fuse.precision = "f32"} {
  %y = fuse.matmul %x, %w : (tensor<8x6xf32>, tensor<6x4xf32>) -> tensor<8x4xf32>
  return %y : tensor<8x4xf32>
}
// CHECK-LABEL: func.func @unmarked
// CHECK-NOT: fuse.cast
func.func @unmarked(%w: tensor<6x4xf32>, %x: tensor<8x6xf32>) -> tensor<8x4xf32> {
  %y = fuse.matmul %x, %w : (tensor<8x6xf32>, tensor<6x4xf32>) -> tensor<8x4xf32>
  return %y : tensor<8x4xf32>
}

// -----

// Batched products, convolutions and their gradients: the two factors
// bf16, the result f32. The gradients read the forward's casts (one per
// value: the input gradient the filter's, the filter gradient the input's,
// both the output gradient's one cast); their third operand only gives the
// result's type and stays f32.
// CHECK-LABEL: func.func @conv_step
// CHECK-DAG: %[[KB:.*]] = fuse.cast %arg0 : (tensor<3x3x2x4xf32>) -> tensor<3x3x2x4xbf16>
// CHECK-DAG: %[[XB:.*]] = fuse.cast %arg1 : (tensor<2x6x6x2xf32>) -> tensor<2x6x6x2xbf16>
// CHECK-DAG: %[[DB:.*]] = fuse.cast %arg2 : (tensor<2x4x4x4xf32>) -> tensor<2x4x4x4xbf16>
// CHECK: fuse.conv2d %[[XB]], %[[KB]] : (tensor<2x6x6x2xbf16>, tensor<3x3x2x4xbf16>) -> tensor<2x4x4x4xf32>
// CHECK: fuse.conv2d_input_grad %[[DB]], %[[KB]], %arg1 : (tensor<2x4x4x4xbf16>, tensor<3x3x2x4xbf16>, tensor<2x6x6x2xf32>) -> tensor<2x6x6x2xf32>
// CHECK: fuse.conv2d_filter_grad %[[XB]], %[[DB]], %arg0 : (tensor<2x6x6x2xbf16>, tensor<2x4x4x4xbf16>, tensor<3x3x2x4xf32>) -> tensor<3x3x2x4xf32>
// CHECK: fuse.batch_matmul %{{.*}}, %{{.*}} : (tensor<2x3x5xbf16>, tensor<2x5x4xbf16>) -> tensor<2x3x4xf32>
// CHECK-NOT: fuse.cast
func.func @conv_step(%k: tensor<3x3x2x4xf32>, %x: tensor<2x6x6x2xf32>, %d: tensor<2x4x4x4xf32>, %p: tensor<2x3x5xf32>, %q: tensor<2x5x4xf32>) -> (tensor<2x4x4x4xf32>, tensor<2x6x6x2xf32>, tensor<3x3x2x4xf32>, tensor<2x3x4xf32>) attributes {fuse.precision = "bf16"} {
  %y = fuse.conv2d %x, %k : (tensor<2x6x6x2xf32>, tensor<3x3x2x4xf32>) -> tensor<2x4x4x4xf32>
  %dx = fuse.conv2d_input_grad %d, %k, %x : (tensor<2x4x4x4xf32>, tensor<3x3x2x4xf32>, tensor<2x6x6x2xf32>) -> tensor<2x6x6x2xf32>
  %dk = fuse.conv2d_filter_grad %x, %d, %k : (tensor<2x6x6x2xf32>, tensor<2x4x4x4xf32>, tensor<3x3x2x4xf32>) -> tensor<3x3x2x4xf32>
  %r = fuse.batch_matmul %p, %q : (tensor<2x3x5xf32>, tensor<2x5x4xf32>) -> tensor<2x3x4xf32>
  return %y, %dx, %dk, %r : tensor<2x4x4x4xf32>, tensor<2x6x6x2xf32>, tensor<3x3x2x4xf32>, tensor<2x3x4xf32>
}

// -----

// Master weights: the update of a weight whose bf16 copy the step reads
// also writes the next step's copy (copies, copy_params); the bias, never
// cast, gets none, and neither does a weight whose new value is not
// returned in place of its argument.
// CHECK-LABEL: func.func @update_step
// CHECK-DAG: %[[WB:.*]] = fuse.cast %arg0 : (tensor<6x4xf32>) -> tensor<6x4xbf16>
// CHECK-DAG: %[[VB:.*]] = fuse.cast %arg2 : (tensor<4x4xf32>) -> tensor<4x4xbf16>
// CHECK: %[[U:.*]]:3 = fuse.sgd %arg4, %arg5 params(%arg0, %arg1 : tensor<6x4xf32>, tensor<4xf32>) grads(%{{.*}}, %{{.*}} : tensor<6x4xf32>, tensor<4xf32>) states() copies(%[[WB]] : tensor<6x4xbf16>) {copy_params = array<i64: 0>} -> tensor<6x4xf32>, tensor<4xf32>, tensor<6x4xbf16>
// CHECK: %[[V:.*]] = fuse.sgd %arg4, %arg5 params(%arg2 : tensor<4x4xf32>) grads(%{{.*}} : tensor<4x4xf32>) states() -> tensor<4x4xf32>
// CHECK: return %[[U]]#0, %[[U]]#1, %[[V]]
func.func @update_step(%w: tensor<6x4xf32>, %b: tensor<4xf32>, %v: tensor<4x4xf32>, %x: tensor<8x6xf32>, %lr: tensor<f32>, %s: tensor<i64>)
    -> (tensor<6x4xf32> {fuse.in_place = 0}, tensor<4xf32> {fuse.in_place = 1}, tensor<4x4xf32>) attributes {fuse.precision = "bf16"} {
  %y = fuse.matmul %x, %w : (tensor<8x6xf32>, tensor<6x4xf32>) -> tensor<8x4xf32>
  %z = fuse.matmul %y, %v : (tensor<8x4xf32>, tensor<4x4xf32>) -> tensor<8x4xf32>
  %dw = fuse.matmul %x, %z {transpose_lhs} : (tensor<8x6xf32>, tensor<8x4xf32>) -> tensor<6x4xf32>
  %db = fuse.reduce_sum %z {axes = array<i64: 0>} : (tensor<8x4xf32>) -> tensor<4xf32>
  %u:2 = fuse.sgd %lr, %s params(%w, %b : tensor<6x4xf32>, tensor<4xf32>) grads(%dw, %db : tensor<6x4xf32>, tensor<4xf32>) states() -> tensor<6x4xf32>, tensor<4xf32>
  %nv = fuse.sgd %lr, %s params(%v : tensor<4x4xf32>) grads(%v : tensor<4x4xf32>) states() -> tensor<4x4xf32>
  return %u#0, %u#1, %nv : tensor<6x4xf32>, tensor<4xf32>, tensor<4x4xf32>
}

// -----

// IPEX's split layout (fuse.master_weights = "split"): a weight whose
// update is in place is split into its top half (fuse.high_half, which the
// products read: truncated, not rounded) and its low half, no cast of it is
// left, and the update reads and writes the pair (split_copies: the tops,
// then the lows). Other operands are cast as with copies; the bias, never
// a product's operand, is not split.
// CHECK-LABEL: func.func @split_step
// CHECK-SAME: attributes {fuse.master_weights = "split", fuse.precision = "bf16"}
// CHECK-DAG: %[[WT:.*]] = fuse.high_half %arg0 : (tensor<6x4xf32>) -> tensor<6x4xbf16>
// CHECK-DAG: %[[WL:.*]] = fuse.low_half %arg0 : (tensor<6x4xf32>) -> tensor<6x4xi16>
// CHECK-DAG: %[[XB:.*]] = fuse.cast %arg2 : (tensor<8x6xf32>) -> tensor<8x6xbf16>
// CHECK-NOT: fuse.cast %arg0
// CHECK: fuse.matmul %[[XB]], %[[WT]] : (tensor<8x6xbf16>, tensor<6x4xbf16>) -> tensor<8x4xf32>
// CHECK-NOT: fuse.cast %arg0
// CHECK: %[[U:.*]]:4 = fuse.sgd %arg3, %arg4 params(%arg0, %arg1 : tensor<6x4xf32>, tensor<4xf32>) grads(%{{.*}}, %{{.*}} : tensor<6x4xf32>, tensor<4xf32>) states() copies(%[[WT]], %[[WL]] : tensor<6x4xbf16>, tensor<6x4xi16>) {copy_params = array<i64: 0>, split_copies} -> tensor<6x4xf32>, tensor<4xf32>, tensor<6x4xbf16>, tensor<6x4xi16>
// CHECK: return %[[U]]#0, %[[U]]#1
func.func @split_step(%w: tensor<6x4xf32>, %b: tensor<4xf32>, %x: tensor<8x6xf32>, %lr: tensor<f32>, %s: tensor<i64>)
    -> (tensor<6x4xf32> {fuse.in_place = 0}, tensor<4xf32> {fuse.in_place = 1}) attributes {fuse.precision = "bf16", fuse.master_weights = "split"} {
  %y = fuse.matmul %x, %w : (tensor<8x6xf32>, tensor<6x4xf32>) -> tensor<8x4xf32>
  %dw = fuse.matmul %x, %y {transpose_lhs} : (tensor<8x6xf32>, tensor<8x4xf32>) -> tensor<6x4xf32>
  %db = fuse.reduce_sum %y {axes = array<i64: 0>} : (tensor<8x4xf32>) -> tensor<4xf32>
  %u:2 = fuse.sgd %lr, %s params(%w, %b : tensor<6x4xf32>, tensor<4xf32>) grads(%dw, %db : tensor<6x4xf32>, tensor<4xf32>) states() -> tensor<6x4xf32>, tensor<4xf32>
  return %u#0, %u#1 : tensor<6x4xf32>, tensor<4xf32>
}

// -----

// Master weights of a convolution: the forward convolution and the input
// gradient read the filter's one bf16 copy, which its update writes (with
// split: its top half, which both read; no cast of the filter is left).
// CHECK-LABEL: func.func @conv_update_step
// CHECK: %[[KB:.*]] = fuse.cast %arg0 : (tensor<3x3x2x4xf32>) -> tensor<3x3x2x4xbf16>
// CHECK: fuse.conv2d %{{.*}}, %[[KB]] :
// CHECK: fuse.conv2d_input_grad %{{.*}}, %[[KB]], %arg1 :
// CHECK: fuse.sgd %arg3, %arg4 params(%arg0 : tensor<3x3x2x4xf32>) grads(%{{.*}} : tensor<3x3x2x4xf32>) states() copies(%[[KB]] : tensor<3x3x2x4xbf16>) {copy_params = array<i64: 0>}
func.func @conv_update_step(%k: tensor<3x3x2x4xf32>, %x: tensor<2x6x6x2xf32>, %d: tensor<2x4x4x4xf32>, %lr: tensor<f32>, %s: tensor<i64>)
    -> (tensor<3x3x2x4xf32> {fuse.in_place = 0}, tensor<2x4x4x4xf32>, tensor<2x6x6x2xf32>) attributes {fuse.precision = "bf16"} {
  %y = fuse.conv2d %x, %k : (tensor<2x6x6x2xf32>, tensor<3x3x2x4xf32>) -> tensor<2x4x4x4xf32>
  %dx = fuse.conv2d_input_grad %d, %k, %x : (tensor<2x4x4x4xf32>, tensor<3x3x2x4xf32>, tensor<2x6x6x2xf32>) -> tensor<2x6x6x2xf32>
  %dk = fuse.conv2d_filter_grad %x, %d, %k : (tensor<2x6x6x2xf32>, tensor<2x4x4x4xf32>, tensor<3x3x2x4xf32>) -> tensor<3x3x2x4xf32>
  %u = fuse.sgd %lr, %s params(%k : tensor<3x3x2x4xf32>) grads(%dk : tensor<3x3x2x4xf32>) states() -> tensor<3x3x2x4xf32>
  return %u, %y, %dx : tensor<3x3x2x4xf32>, tensor<2x4x4x4xf32>, tensor<2x6x6x2xf32>
}
// CHECK-LABEL: func.func @conv_split_step
// CHECK-DAG: %[[KT:.*]] = fuse.high_half %arg0 : (tensor<3x3x2x4xf32>) -> tensor<3x3x2x4xbf16>
// CHECK-DAG: %[[KL:.*]] = fuse.low_half %arg0
// CHECK-NOT: fuse.cast %arg0
// CHECK: fuse.conv2d %{{.*}}, %[[KT]] :
// CHECK-NOT: fuse.cast %arg0
// CHECK: fuse.conv2d_input_grad %{{.*}}, %[[KT]], %arg1 :
// CHECK-NOT: fuse.cast %arg0
// CHECK: fuse.sgd {{.*}} copies(%[[KT]], %[[KL]] : tensor<3x3x2x4xbf16>, tensor<3x3x2x4xi16>) {copy_params = array<i64: 0>, split_copies}
func.func @conv_split_step(%k: tensor<3x3x2x4xf32>, %x: tensor<2x6x6x2xf32>, %d: tensor<2x4x4x4xf32>, %lr: tensor<f32>, %s: tensor<i64>)
    -> (tensor<3x3x2x4xf32> {fuse.in_place = 0}, tensor<2x4x4x4xf32>, tensor<2x6x6x2xf32>) attributes {fuse.precision = "bf16", fuse.master_weights = "split"} {
  %y = fuse.conv2d %x, %k : (tensor<2x6x6x2xf32>, tensor<3x3x2x4xf32>) -> tensor<2x4x4x4xf32>
  %dx = fuse.conv2d_input_grad %d, %k, %x : (tensor<2x4x4x4xf32>, tensor<3x3x2x4xf32>, tensor<2x6x6x2xf32>) -> tensor<2x6x6x2xf32>
  %dk = fuse.conv2d_filter_grad %x, %d, %k : (tensor<2x6x6x2xf32>, tensor<2x4x4x4xf32>, tensor<3x3x2x4xf32>) -> tensor<3x3x2x4xf32>
  %u = fuse.sgd %lr, %s params(%k : tensor<3x3x2x4xf32>) grads(%dk : tensor<3x3x2x4xf32>) states() -> tensor<3x3x2x4xf32>
  return %u, %y, %dx : tensor<3x3x2x4xf32>, tensor<2x4x4x4xf32>, tensor<2x6x6x2xf32>
}

// -----

// expected-error @+1 {{unknown master weights layout 'halves' (expected "copy" or "split")}}
func.func @bad_layout(%x: tensor<2xf32>) -> tensor<2xf32> attributes {fuse.precision = "bf16", fuse.master_weights = "halves"} {
  return %x : tensor<2xf32>
}

// -----

// expected-error @+1 {{unknown precision 'fp8'}}
func.func @bad(%x: tensor<2xf32>) -> tensor<2xf32> attributes {fuse.precision = "fp8"} {
  return %x : tensor<2xf32>
}

// -----

// A ReLU's mask without its f32 output after the loss (the next product
// reads its bf16 copy). With subnormals flushed (FLUSH, the default) the
// gradient compares the bf16 copy, widened, with 0. Otherwise (KEEP) the
// comparison of the f32 output moves to right after the ReLU, its result
// kept as i8 (fuse.materialize); the backward pass compares the bytes
// with 0.
// CHECK-LABEL: func.func @relu_mask
// CHECK: %[[H:.*]] = fuse.relu
// KEEP: %[[M:.*]] = fuse.compare gt, %[[H]], %{{.*}} : (tensor<8x4xf32>, tensor<f32>) -> tensor<8x4xi1>
// KEEP-NEXT: %[[K:.*]] = fuse.cast %[[M]] {fuse.materialize} : (tensor<8x4xi1>) -> tensor<8x4xi8>
// CHECK: %[[HB:.*]] = fuse.cast %[[H]] : (tensor<8x4xf32>) -> tensor<8x4xbf16>
// CHECK: fuse.matmul %[[HB]]
// FLUSH-NOT: fuse.materialize
// FLUSH: %[[W:.*]] = fuse.cast %[[HB]] : (tensor<8x4xbf16>) -> tensor<8x4xf32>
// FLUSH-NEXT: %[[MASK:.*]] = fuse.compare gt, %[[W]], %{{.*}} : (tensor<8x4xf32>, tensor<f32>) -> tensor<8x4xi1>
// KEEP-NOT: fuse.compare gt
// KEEP: %[[Z:.*]] = fuse.constant dense<0> : tensor<i8>
// KEEP: %[[MASK:.*]] = fuse.compare ne, %[[K]], %[[Z]] : (tensor<8x4xi8>, tensor<i8>) -> tensor<8x4xi1>
// CHECK: fuse.select %[[MASK]], %arg3
func.func @relu_mask(%x: tensor<8x6xf32>, %w: tensor<6x4xf32>, %v: tensor<4x2xf32>, %g: tensor<8x4xf32>)
    -> (tensor<8x2xf32>, tensor<8x4xf32>) attributes {fuse.precision = "bf16"} {
  %y = fuse.matmul %x, %w : (tensor<8x6xf32>, tensor<6x4xf32>) -> tensor<8x4xf32>
  %h = fuse.relu %y : tensor<8x4xf32>
  %z = fuse.matmul %h, %v : (tensor<8x4xf32>, tensor<4x2xf32>) -> tensor<8x2xf32>
  %zero = fuse.constant dense<0.0> : tensor<f32>
  %m = fuse.compare gt, %h, %zero : (tensor<8x4xf32>, tensor<f32>) -> tensor<8x4xi1>
  %dh = fuse.select %m, %g, %zero : (tensor<8x4xi1>, tensor<8x4xf32>, tensor<f32>) -> tensor<8x4xf32>
  return %z, %dh : tensor<8x2xf32>, tensor<8x4xf32>
}

// -----

// Where the f32 output is read after the mask anyway (here by an add), the
// mask stays where it is: kept bytes would be extra.
// CHECK-LABEL: func.func @relu_read_later
// CHECK-NOT: fuse.materialize
// CHECK: fuse.compare gt, %{{.*}}, %{{.*}} : (tensor<8x4xf32>, tensor<f32>)
// CHECK: fuse.add
func.func @relu_read_later(%y: tensor<8x4xf32>, %g: tensor<8x4xf32>) -> (tensor<8x4xf32>, tensor<8x4xf32>)
    attributes {fuse.precision = "bf16"} {
  %h = fuse.relu %y : tensor<8x4xf32>
  %zero = fuse.constant dense<0.0> : tensor<f32>
  %m = fuse.compare gt, %h, %zero : (tensor<8x4xf32>, tensor<f32>) -> tensor<8x4xi1>
  %dh = fuse.select %m, %g, %zero : (tensor<8x4xi1>, tensor<8x4xf32>, tensor<f32>) -> tensor<8x4xf32>
  %s = fuse.add %h, %g : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
  return %dh, %s : tensor<8x4xf32>, tensor<8x4xf32>
}

// -----

// Without a bf16 copy of the ReLU's output (a sum reads it, no product),
// the mask is kept as bytes even with subnormals flushed.
// CHECK-LABEL: func.func @relu_mask_no_copy
// CHECK: %[[M:.*]] = fuse.compare gt, %{{.*}}, %{{.*}} : (tensor<8x4xf32>, tensor<f32>) -> tensor<8x4xi1>
// CHECK-NEXT: %[[K:.*]] = fuse.cast %[[M]] {fuse.materialize}
// CHECK: fuse.reduce_sum
// CHECK: fuse.compare ne, %[[K]]
func.func @relu_mask_no_copy(%y: tensor<8x4xf32>, %g: tensor<8x4xf32>) -> (tensor<4xf32>, tensor<8x4xf32>)
    attributes {fuse.precision = "bf16"} {
  %h = fuse.relu %y : tensor<8x4xf32>
  %s = fuse.reduce_sum %h {axes = array<i64: 0>} : (tensor<8x4xf32>) -> tensor<4xf32>
  %zero = fuse.constant dense<0.0> : tensor<f32>
  %m = fuse.compare gt, %h, %zero : (tensor<8x4xf32>, tensor<f32>) -> tensor<8x4xi1>
  %dh = fuse.select %m, %g, %zero : (tensor<8x4xi1>, tensor<8x4xf32>, tensor<f32>) -> tensor<8x4xf32>
  return %s, %dh : tensor<4xf32>, tensor<8x4xf32>
}

// -----

// A bound other than 0 is not the bf16 copy's to decide (rounding moves
// values across it): the mask is kept as bytes.
// CHECK-LABEL: func.func @compare_nonzero_bound
// CHECK: fuse.compare gt, %{{.*}}, %{{.*}} : (tensor<8x4xf32>, tensor<f32>)
// CHECK-NEXT: fuse.cast %{{.*}} {fuse.materialize}
func.func @compare_nonzero_bound(%x: tensor<8x6xf32>, %w: tensor<6x4xf32>, %v: tensor<4x2xf32>, %g: tensor<8x4xf32>)
    -> (tensor<8x2xf32>, tensor<8x4xf32>) attributes {fuse.precision = "bf16"} {
  %y = fuse.matmul %x, %w : (tensor<8x6xf32>, tensor<6x4xf32>) -> tensor<8x4xf32>
  %h = fuse.relu %y : tensor<8x4xf32>
  %z = fuse.matmul %h, %v : (tensor<8x4xf32>, tensor<4x2xf32>) -> tensor<8x2xf32>
  %bound = fuse.constant dense<0.5> : tensor<f32>
  %zero = fuse.constant dense<0.0> : tensor<f32>
  %m = fuse.compare gt, %h, %bound : (tensor<8x4xf32>, tensor<f32>) -> tensor<8x4xi1>
  %dh = fuse.select %m, %g, %zero : (tensor<8x4xi1>, tensor<8x4xf32>, tensor<f32>) -> tensor<8x4xf32>
  return %z, %dh : tensor<8x2xf32>, tensor<8x4xf32>
}
