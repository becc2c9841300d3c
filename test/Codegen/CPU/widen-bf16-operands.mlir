// RUN: fuse-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(fuse-widen-bf16-operands))' | FileCheck %s

// Without AVX512_BF16, a matmul of bf16 inputs into f32 reads f32 copies
// widened once (exact) and is the f32 matmul.
// CHECK-LABEL: func @no_pairs
// CHECK: %[[A:.*]] = linalg.generic {{.*}} ins(%arg0 : tensor<12x8xbf16>) outs(%{{.*}} : tensor<12x8xf32>)
// CHECK: arith.extf %{{.*}} : bf16 to f32
// CHECK: %[[B:.*]] = linalg.generic {{.*}} ins(%arg1 : tensor<8x32xbf16>) outs(%{{.*}} : tensor<8x32xf32>)
// CHECK: linalg.matmul ins(%[[A]], %[[B]] : tensor<12x8xf32>, tensor<8x32xf32>) outs(%{{.*}} : tensor<12x32xf32>)
module attributes {fuse.target = {cpu = "x86-64-v3", features = "+avx2,+fma,-avx512f,-avx512bf16", triple = "x86_64-unknown-linux-gnu"}} {
  func.func @no_pairs(%a: tensor<12x8xbf16>, %b: tensor<8x32xbf16>, %c: tensor<12x32xf32>) -> tensor<12x32xf32> {
    %r = linalg.matmul ins(%a, %b : tensor<12x8xbf16>, tensor<8x32xbf16>) outs(%c : tensor<12x32xf32>) -> tensor<12x32xf32>
    return %r : tensor<12x32xf32>
  }
}

// -----

// With AVX512_BF16 on a CPU whose LLVM scheduling model has vdpbf16ps do
// more multiply-adds per cycle than FMAs (Cooper Lake: one of each per
// half cycle), linalg.matmul keeps its bf16 inputs (vdpbf16ps); a
// batch_matmul, whose tiles do not pair steps, is widened.
// CHECK-LABEL: func @pairs
// CHECK: linalg.generic {{.*}} ins(%arg3 : tensor<2x4x8xbf16>)
// CHECK: linalg.generic {{.*}} ins(%arg4 : tensor<2x8x16xbf16>)
// CHECK: linalg.matmul ins(%arg0, %arg1 : tensor<12x8xbf16>, tensor<8x32xbf16>)
// CHECK: linalg.batch_matmul ins(%{{.*}}, %{{.*}} : tensor<2x4x8xf32>, tensor<2x8x16xf32>)
module attributes {fuse.target = {cpu = "cooperlake", features = "+avx512f,+avx512bw,+avx512vl,+avx512bf16", triple = "x86_64-unknown-linux-gnu"}} {
  func.func @pairs(%a: tensor<12x8xbf16>, %b: tensor<8x32xbf16>, %c: tensor<12x32xf32>,
                   %p: tensor<2x4x8xbf16>, %q: tensor<2x8x16xbf16>, %r: tensor<2x4x16xf32>) -> (tensor<12x32xf32>, tensor<2x4x16xf32>) {
    %0 = linalg.matmul ins(%a, %b : tensor<12x8xbf16>, tensor<8x32xbf16>) outs(%c : tensor<12x32xf32>) -> tensor<12x32xf32>
    %1 = linalg.batch_matmul ins(%p, %q : tensor<2x4x8xbf16>, tensor<2x8x16xbf16>) outs(%r : tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
    return %0, %1 : tensor<12x32xf32>, tensor<2x4x16xf32>
  }
}

// -----

// The same features on Sapphire Rapids, whose model (as measured on an
// Emerald Rapids core) runs one vdpbf16ps per 2 cycles against two FMAs
// per cycle: pairs would do half the multiply-adds, so the matmul is
// widened too.
// CHECK-LABEL: func @pairs_slower_than_fmas
// CHECK: %[[A:.*]] = linalg.generic {{.*}} ins(%arg0 : tensor<12x8xbf16>) outs(%{{.*}} : tensor<12x8xf32>)
// CHECK: %[[B:.*]] = linalg.generic {{.*}} ins(%arg1 : tensor<8x32xbf16>) outs(%{{.*}} : tensor<8x32xf32>)
// CHECK: linalg.matmul ins(%[[A]], %[[B]] : tensor<12x8xf32>, tensor<8x32xf32>) outs(%{{.*}} : tensor<12x32xf32>)
module attributes {fuse.target = {cpu = "sapphirerapids", features = "+avx512f,+avx512bw,+avx512vl,+avx512bf16", triple = "x86_64-unknown-linux-gnu"}} {
  func.func @pairs_slower_than_fmas(%a: tensor<12x8xbf16>, %b: tensor<8x32xbf16>, %c: tensor<12x32xf32>) -> tensor<12x32xf32> {
    %r = linalg.matmul ins(%a, %b : tensor<12x8xbf16>, tensor<8x32xbf16>) outs(%c : tensor<12x32xf32>) -> tensor<12x32xf32>
    return %r : tensor<12x32xf32>
  }
}

// -----

// Contractions of one element type are left alone.
// CHECK-LABEL: func @same_types
// CHECK-NOT: linalg.generic
// CHECK: linalg.matmul ins(%arg0, %arg1 : tensor<4x8xbf16>, tensor<8x16xbf16>) outs(%arg2 : tensor<4x16xbf16>)
module attributes {fuse.target = {cpu = "x86-64-v3", features = "+avx2,-avx512bf16", triple = "x86_64-unknown-linux-gnu"}} {
  func.func @same_types(%a: tensor<4x8xbf16>, %b: tensor<8x16xbf16>, %c: tensor<4x16xbf16>) -> tensor<4x16xbf16> {
    %r = linalg.matmul ins(%a, %b : tensor<4x8xbf16>, tensor<8x16xbf16>) outs(%c : tensor<4x16xbf16>) -> tensor<4x16xbf16>
    return %r : tensor<4x16xbf16>
  }
}

// -----

// The bf16 policy's convolution gradients, also with AVX512_BF16: the input
// gradient (a convolution of the padded output gradient with the flipped
// filter) and the filter gradient (a contraction generic whose body widens
// each factor) read f32 copies widened once and are the f32 ops, so the f32
// strategies (direct, Winograd, filter-gradient tiles) run unchanged.
// CHECK-LABEL: func @conv_grads
// CHECK: %[[G:.*]] = linalg.generic {{.*}} ins(%arg0 : tensor<2x10x10x4xbf16>) outs(%{{.*}} : tensor<2x10x10x4xf32>)
// CHECK: %[[K:.*]] = linalg.generic {{.*}} ins(%arg1 : tensor<3x3x4x3xbf16>) outs(%{{.*}} : tensor<3x3x4x3xf32>)
// CHECK: %[[X:.*]] = linalg.generic {{.*}} ins(%arg2 : tensor<2x8x8x3xbf16>) outs(%{{.*}} : tensor<2x8x8x3xf32>)
// CHECK: %[[D:.*]] = linalg.generic {{.*}} ins(%arg3 : tensor<2x6x6x4xbf16>) outs(%{{.*}} : tensor<2x6x6x4xf32>)
// CHECK: linalg.conv_2d_nhwc_hwcf {{.*}} ins(%[[G]], %[[K]] : tensor<2x10x10x4xf32>, tensor<3x3x4x3xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[X]], %[[D]] : tensor<2x8x8x3xf32>, tensor<2x6x6x4xf32>) outs(%{{.*}} : tensor<3x3x3x4xf32>)
// CHECK-NEXT: ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32, %[[C:.*]]: f32):
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[A]], %[[B]] : f32
// CHECK-NEXT: arith.addf %[[C]], %[[P]] : f32
#flt = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d0 + d5, d1 + d6, d2)>
#grd = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d5, d6, d3)>
#out = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>
module attributes {fuse.target = {cpu = "cooperlake", features = "+avx512f,+avx512bw,+avx512vl,+avx512bf16", triple = "x86_64-unknown-linux-gnu"}} {
  func.func @conv_grads(%g: tensor<2x10x10x4xbf16>, %k: tensor<3x3x4x3xbf16>, %x: tensor<2x8x8x3xbf16>, %d: tensor<2x6x6x4xbf16>,
                        %dx: tensor<2x8x8x3xf32>, %dk: tensor<3x3x3x4xf32>) -> (tensor<2x8x8x3xf32>, tensor<3x3x3x4xf32>) {
    %0 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%g, %k : tensor<2x10x10x4xbf16>, tensor<3x3x4x3xbf16>) outs(%dx : tensor<2x8x8x3xf32>) -> tensor<2x8x8x3xf32>
    %1 = linalg.generic {indexing_maps = [#flt, #grd, #out], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%x, %d : tensor<2x8x8x3xbf16>, tensor<2x6x6x4xbf16>) outs(%dk : tensor<3x3x3x4xf32>) {
    ^bb0(%a: bf16, %b: bf16, %c: f32):
      %aw = arith.extf %a : bf16 to f32
      %bw = arith.extf %b : bf16 to f32
      %p = arith.mulf %aw, %bw : f32
      %s = arith.addf %c, %p : f32
      linalg.yield %s : f32
    } -> tensor<3x3x3x4xf32>
    return %0, %1 : tensor<2x8x8x3xf32>, tensor<3x3x3x4xf32>
  }
}

// -----

// A bf16 value two contractions read one after the other is widened once,
// right after its definition, and the copy serves both. A value that is a cast of f32 is not
// widened: the copy rounds the cast's f32 source to bf16 and back in one
// pass (the same bits), and the cast goes when nothing else reads it.
// CHECK-LABEL: func @widened_once
// CHECK: %[[A:.*]] = linalg.generic {{.*}} ins(%arg0 : tensor<12x8xbf16>) outs(%{{.*}} : tensor<12x8xf32>)
// CHECK: %[[R:.*]] = linalg.generic {{.*}} ins(%arg1 : tensor<8x32xf32>) outs(%{{.*}} : tensor<8x32xf32>)
// CHECK-NEXT: ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[T:.*]] = arith.truncf %[[X]] : f32 to bf16
// CHECK-NEXT: %[[E:.*]] = arith.extf %[[T]] : bf16 to f32
// CHECK-NEXT: linalg.yield %[[E]] : f32
// CHECK-NOT: tensor<8x32xbf16>
// CHECK: linalg.matmul ins(%[[A]], %[[R]] : tensor<12x8xf32>, tensor<8x32xf32>)
// CHECK-NOT: ins(%arg0 : tensor<12x8xbf16>)
// CHECK: linalg.generic {{.*}} ins(%[[A]], %arg2 : tensor<12x8xf32>, tensor<12x32xf32>)
module attributes {fuse.target = {cpu = "x86-64-v3", features = "+avx2,+fma,-avx512f,-avx512bf16", triple = "x86_64-unknown-linux-gnu"}} {
  func.func @widened_once(%a: tensor<12x8xbf16>, %w: tensor<8x32xf32>, %d: tensor<12x32xf32>,
                          %c: tensor<12x32xf32>, %g: tensor<8x32xf32>) -> (tensor<12x32xf32>, tensor<8x32xf32>) {
    %e = tensor.empty() : tensor<8x32xbf16>
    %b = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                         iterator_types = ["parallel", "parallel"]}
        ins(%w : tensor<8x32xf32>) outs(%e : tensor<8x32xbf16>) {
    ^bb0(%x: f32, %o: bf16):
      %t = arith.truncf %x : f32 to bf16
      linalg.yield %t : bf16
    } -> tensor<8x32xbf16>
    %0 = linalg.matmul ins(%a, %b : tensor<12x8xbf16>, tensor<8x32xbf16>) outs(%c : tensor<12x32xf32>) -> tensor<12x32xf32>
    %1 = linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (k, i)>, affine_map<(i, j, k) -> (k, j)>, affine_map<(i, j, k) -> (i, j)>],
                         iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%a, %d : tensor<12x8xbf16>, tensor<12x32xf32>) outs(%g : tensor<8x32xf32>) {
    ^bb0(%x: bf16, %y: f32, %acc: f32):
      %xw = arith.extf %x : bf16 to f32
      %p = arith.mulf %xw, %y : f32
      %s = arith.addf %acc, %p : f32
      linalg.yield %s : f32
    } -> tensor<8x32xf32>
    return %0, %1 : tensor<12x32xf32>, tensor<8x32xf32>
  }
}

// -----

// Widening commutes with a constant pad: the input gradient's padded
// output gradient is the pad (by an f32 zero) of the copy the filter
// gradient reads, here the cast's f32 source rounded again; the bf16 pad
// and the cast go.
// CHECK-LABEL: func @padded_cast
// CHECK: %[[R:.*]] = linalg.generic {{.*}} ins(%arg0 : tensor<2x6x6x4xf32>) outs(%{{.*}} : tensor<2x6x6x4xf32>)
// CHECK: arith.truncf
// CHECK: arith.extf
// CHECK: %[[P:.*]] = tensor.pad %[[R]] low[0, 2, 2, 0] high[0, 2, 2, 0]
// CHECK: tensor.yield %{{.*}} : f32
// CHECK-NEXT: } : tensor<2x6x6x4xf32> to tensor<2x10x10x4xf32>
// CHECK-NOT: bf16
// CHECK: linalg.conv_2d_nhwc_hwcf {{.*}} ins(%[[P]], %{{.*}} : tensor<2x10x10x4xf32>, tensor<3x3x4x3xf32>)
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %[[R]] : tensor<2x8x8x3xf32>, tensor<2x6x6x4xf32>)
#flt = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d0 + d5, d1 + d6, d2)>
#grd = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d5, d6, d3)>
#out = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>
module attributes {fuse.target = {cpu = "x86-64-v3", features = "+avx2,+fma,-avx512f,-avx512bf16", triple = "x86_64-unknown-linux-gnu"}} {
  func.func @padded_cast(%g: tensor<2x6x6x4xf32>, %k: tensor<3x3x4x3xbf16>, %x: tensor<2x8x8x3xbf16>,
                         %dx: tensor<2x8x8x3xf32>, %dk: tensor<3x3x3x4xf32>) -> (tensor<2x8x8x3xf32>, tensor<3x3x3x4xf32>) {
    %e = tensor.empty() : tensor<2x6x6x4xbf16>
    %d = linalg.generic {indexing_maps = [affine_map<(a, b, c, d) -> (a, b, c, d)>, affine_map<(a, b, c, d) -> (a, b, c, d)>],
                         iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
        ins(%g : tensor<2x6x6x4xf32>) outs(%e : tensor<2x6x6x4xbf16>) {
    ^bb0(%v: f32, %o: bf16):
      %t = arith.truncf %v : f32 to bf16
      linalg.yield %t : bf16
    } -> tensor<2x6x6x4xbf16>
    %zero = arith.constant 0.0 : bf16
    %p = tensor.pad %d low[0, 2, 2, 0] high[0, 2, 2, 0] {
    ^bb0(%i: index, %j: index, %l: index, %m: index):
      tensor.yield %zero : bf16
    } : tensor<2x6x6x4xbf16> to tensor<2x10x10x4xbf16>
    %0 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%p, %k : tensor<2x10x10x4xbf16>, tensor<3x3x4x3xbf16>) outs(%dx : tensor<2x8x8x3xf32>) -> tensor<2x8x8x3xf32>
    %1 = linalg.generic {indexing_maps = [#flt, #grd, #out], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%x, %d : tensor<2x8x8x3xbf16>, tensor<2x6x6x4xbf16>) outs(%dk : tensor<3x3x3x4xf32>) {
    ^bb0(%a: bf16, %b: bf16, %c: f32):
      %aw = arith.extf %a : bf16 to f32
      %bw = arith.extf %b : bf16 to f32
      %pr = arith.mulf %aw, %bw : f32
      %s = arith.addf %c, %pr : f32
      linalg.yield %s : f32
    } -> tensor<3x3x3x4xf32>
    return %0, %1 : tensor<2x8x8x3xf32>, tensor<3x3x3x4xf32>
  }
}

// -----

// Readers separated by a contraction that does not read the value (a
// layer's activation: its forward product, then the rest of the step, then
// its weight gradient) each get a copy made right before them, so that no
// f32 copy is live across the other work (the first group's copy is made
// right after the value, as above); the cast then stays, the one bf16
// value kept, and each copy widens it. Only copies of 1 MiB or more: a
// smaller one is shared (@widened_once).
// CHECK-LABEL: func @widened_per_reader_group
// CHECK: %[[A1:.*]] = linalg.generic {{.*}} ins(%arg0 : tensor<512x512xbf16>) outs(%{{.*}} : tensor<512x512xf32>)
// CHECK: %[[B:.*]] = linalg.generic {{.*}} ins(%arg1 : tensor<512x512xf32>) outs(%{{.*}} : tensor<512x512xbf16>)
// CHECK: %[[B1:.*]] = linalg.generic {{.*}} ins(%[[B]] : tensor<512x512xbf16>) outs(%{{.*}} : tensor<512x512xf32>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.extf
// CHECK: linalg.matmul ins(%[[A1]], %[[B1]] : tensor<512x512xf32>, tensor<512x512xf32>)
// CHECK: linalg.matmul ins(%arg2, %arg3 : tensor<4x4xf32>, tensor<4x4xf32>)
// CHECK: %[[B2:.*]] = linalg.generic {{.*}} ins(%[[B]] : tensor<512x512xbf16>) outs(%{{.*}} : tensor<512x512xf32>)
// CHECK: linalg.matmul ins(%[[B2]], %{{.*}} : tensor<512x512xf32>, tensor<512x16xf32>)
// CHECK: %[[A2:.*]] = linalg.generic {{.*}} ins(%arg0 : tensor<512x512xbf16>) outs(%{{.*}} : tensor<512x512xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[A2]], %arg5 : tensor<512x512xf32>, tensor<512x32xf32>)
module attributes {fuse.target = {cpu = "x86-64-v3", features = "+avx2,+fma,-avx512f,-avx512bf16", triple = "x86_64-unknown-linux-gnu"}} {
  func.func @widened_per_reader_group(%a: tensor<512x512xbf16>, %w: tensor<512x512xf32>, %u: tensor<4x4xf32>, %v: tensor<4x4xf32>,
                                      %t: tensor<512x16xbf16>, %d: tensor<512x32xf32>, %c: tensor<512x512xf32>, %cu: tensor<4x4xf32>,
                                      %ct: tensor<512x16xf32>, %g: tensor<512x32xf32>)
      -> (tensor<512x512xf32>, tensor<4x4xf32>, tensor<512x16xf32>, tensor<512x32xf32>) {
    %e = tensor.empty() : tensor<512x512xbf16>
    %b = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                         iterator_types = ["parallel", "parallel"]}
        ins(%w : tensor<512x512xf32>) outs(%e : tensor<512x512xbf16>) {
    ^bb0(%x: f32, %o: bf16):
      %r = arith.truncf %x : f32 to bf16
      linalg.yield %r : bf16
    } -> tensor<512x512xbf16>
    %0 = linalg.matmul ins(%a, %b : tensor<512x512xbf16>, tensor<512x512xbf16>) outs(%c : tensor<512x512xf32>) -> tensor<512x512xf32>
    %1 = linalg.matmul ins(%u, %v : tensor<4x4xf32>, tensor<4x4xf32>) outs(%cu : tensor<4x4xf32>) -> tensor<4x4xf32>
    %2 = linalg.matmul ins(%b, %t : tensor<512x512xbf16>, tensor<512x16xbf16>) outs(%ct : tensor<512x16xf32>) -> tensor<512x16xf32>
    %3 = linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (k, i)>, affine_map<(i, j, k) -> (k, j)>, affine_map<(i, j, k) -> (i, j)>],
                         iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%a, %d : tensor<512x512xbf16>, tensor<512x32xf32>) outs(%g : tensor<512x32xf32>) {
    ^bb0(%x: bf16, %y: f32, %acc: f32):
      %xw = arith.extf %x : bf16 to f32
      %p = arith.mulf %xw, %y : f32
      %s = arith.addf %acc, %p : f32
      linalg.yield %s : f32
    } -> tensor<512x32xf32>
    return %0, %1, %2, %3 : tensor<512x512xf32>, tensor<4x4xf32>, tensor<512x16xf32>, tensor<512x32xf32>
  }
}

// -----

// An element-wise reader that widens a bf16 value in its own loop reads the
// copy made for the contraction just before it (the mask of a ReLU taken
// from its bf16 output after the filter gradient read that output), so the
// bf16 value need not live beside the copy; after another contraction it
// reads the bf16 value, as before.
// CHECK-LABEL: func @elementwise_reads_group_copy
// CHECK: %[[B:.*]] = linalg.generic {{.*}} ins(%arg0 : tensor<512x512xf32>) outs(%{{.*}} : tensor<512x512xbf16>)
// CHECK: %[[B1:.*]] = linalg.generic {{.*}} ins(%[[B]] : tensor<512x512xbf16>) outs(%{{.*}} : tensor<512x512xf32>)
// CHECK: linalg.matmul ins(%[[B1]], %{{.*}} : tensor<512x512xf32>, tensor<512x16xf32>)
// CHECK: linalg.matmul ins(%arg2, %arg3 : tensor<4x4xf32>, tensor<4x4xf32>)
// CHECK: %[[B2:.*]] = linalg.generic {{.*}} ins(%[[B]] : tensor<512x512xbf16>) outs(%{{.*}} : tensor<512x512xf32>)
// CHECK: linalg.matmul ins(%[[B2]], %{{.*}} : tensor<512x512xf32>, tensor<512x16xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[B2]], %arg6 : tensor<512x512xf32>, tensor<512x512xf32>)
// CHECK-NEXT: ^bb0(%{{.*}}: f32, %{{.*}}: f32, %{{.*}}: f32):
// CHECK-NEXT: arith.mulf
// CHECK: linalg.matmul ins(%arg2, %arg3 : tensor<4x4xf32>, tensor<4x4xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[B]] : tensor<512x512xbf16>)
// CHECK-NEXT: ^bb0(%{{.*}}: bf16, %{{.*}}: f32):
// CHECK-NEXT: arith.extf
module attributes {fuse.target = {cpu = "x86-64-v3", features = "+avx2,+fma,-avx512f,-avx512bf16", triple = "x86_64-unknown-linux-gnu"}} {
  func.func @elementwise_reads_group_copy(%w: tensor<512x512xf32>, %t: tensor<512x16xbf16>, %u: tensor<4x4xf32>, %v: tensor<4x4xf32>,
                                          %cu: tensor<4x4xf32>, %ct: tensor<512x16xf32>, %o: tensor<512x512xf32>)
      -> (tensor<512x16xf32>, tensor<4x4xf32>, tensor<512x16xf32>, tensor<512x512xf32>, tensor<4x4xf32>, tensor<512x512xf32>) {
    %e = tensor.empty() : tensor<512x512xbf16>
    %b = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                         iterator_types = ["parallel", "parallel"]}
        ins(%w : tensor<512x512xf32>) outs(%e : tensor<512x512xbf16>) {
    ^bb0(%x: f32, %out: bf16):
      %r = arith.truncf %x : f32 to bf16
      linalg.yield %r : bf16
    } -> tensor<512x512xbf16>
    %0 = linalg.matmul ins(%b, %t : tensor<512x512xbf16>, tensor<512x16xbf16>) outs(%ct : tensor<512x16xf32>) -> tensor<512x16xf32>
    %1 = linalg.matmul ins(%u, %v : tensor<4x4xf32>, tensor<4x4xf32>) outs(%cu : tensor<4x4xf32>) -> tensor<4x4xf32>
    %2 = linalg.matmul ins(%b, %t : tensor<512x512xbf16>, tensor<512x16xbf16>) outs(%ct : tensor<512x16xf32>) -> tensor<512x16xf32>
    %f = tensor.empty() : tensor<512x512xf32>
    %3 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                         iterator_types = ["parallel", "parallel"]}
        ins(%b, %o : tensor<512x512xbf16>, tensor<512x512xf32>) outs(%f : tensor<512x512xf32>) {
    ^bb0(%x: bf16, %y: f32, %out: f32):
      %xw = arith.extf %x : bf16 to f32
      %p = arith.mulf %xw, %y : f32
      linalg.yield %p : f32
    } -> tensor<512x512xf32>
    %4 = linalg.matmul ins(%u, %v : tensor<4x4xf32>, tensor<4x4xf32>) outs(%cu : tensor<4x4xf32>) -> tensor<4x4xf32>
    %5 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                         iterator_types = ["parallel", "parallel"]}
        ins(%b : tensor<512x512xbf16>) outs(%f : tensor<512x512xf32>) {
    ^bb0(%x: bf16, %out: f32):
      %xw = arith.extf %x : bf16 to f32
      %n = arith.negf %xw : f32
      linalg.yield %n : f32
    } -> tensor<512x512xf32>
    return %0, %1, %2, %3, %4, %5 : tensor<512x16xf32>, tensor<4x4xf32>, tensor<512x16xf32>, tensor<512x512xf32>, tensor<4x4xf32>, tensor<512x512xf32>
  }
}
