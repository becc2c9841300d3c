// RUN: fuse-opt %s --fuse-lower-vectors --split-input-file | FileCheck %s

// fuse-lower-vectors on mixed-precision tiles (bf16 operands, f32
// accumulators): with AVX512_BF16 in the module's target, a tile of two
// reduction steps (the strategy gives bf16 matmuls two there) becomes
// vdpbf16ps; the lowering is chosen by the target, never at run time.

// Per 16 columns, the rhs's two rows interleaved into the pairs lane j
// multiplies (b[0][j], b[1][j]); per row, the lhs's pair as one 32-bit word
// broadcast to every lane; one dpbf16ps per row and 16 columns.
#lhs = affine_map<(d0, d1, d2) -> (d0, d2)>
#rhs = affine_map<(d0, d1, d2) -> (d2, d1)>
#acc = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func @pair_tile
// CHECK-COUNT-2: vector.shuffle %{{.*}}, %{{.*}} [0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31] : vector<16xbf16>, vector<16xbf16>
// CHECK: vector.bitcast %{{.*}} : vector<2xbf16> to vector<1xi32>
// CHECK: vector.broadcast %{{.*}} : i32 to vector<16xi32>
// CHECK: vector.bitcast %{{.*}} : vector<16xi32> to vector<32xbf16>
// CHECK-COUNT-2: llvm.call_intrinsic "llvm.x86.avx512bf16.dpbf16ps.512"(%{{.*}}, %{{.*}}, %{{.*}}) : (vector<16xf32>, vector<32xbf16>, vector<32xbf16>) -> vector<16xf32>
// CHECK: vector.bitcast %{{.*}} : vector<2xbf16> to vector<1xi32>
// CHECK-COUNT-2: llvm.call_intrinsic "llvm.x86.avx512bf16.dpbf16ps.512"
// CHECK-NOT: llvm.call_intrinsic
// CHECK-NOT: vector.contract
// CHECK-NOT: vector.fma
module attributes {fuse.target = {cpu = "cooperlake", features = "+avx512f,+avx512bw,+avx512vl,+avx512bf16", triple = "x86_64-unknown-linux-gnu"}} {
  func.func @pair_tile(%a: vector<2x2xbf16>, %b: vector<2x32xbf16>, %c: vector<2x32xf32>) -> vector<2x32xf32> {
    %r = vector.contract {indexing_maps = [#lhs, #rhs, #acc], iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>} %a, %b, %c : vector<2x2xbf16>, vector<2x32xbf16> into vector<2x32xf32>
    return %r : vector<2x32xf32>
  }
}

// -----

// Without AVX512_BF16 (here AVX-512F alone), the same tile widens to f32
// and becomes FMAs.
#lhs = affine_map<(d0, d1, d2) -> (d0, d2)>
#rhs = affine_map<(d0, d1, d2) -> (d2, d1)>
#acc = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func @no_bf16_feature
// CHECK-NOT: llvm.call_intrinsic
// CHECK: arith.extf %{{.*}} : vector<32xbf16> to vector<32xf32>
// CHECK: vector.fma
module attributes {fuse.target = {cpu = "skylake-avx512", features = "+avx512f,-avx512bf16", triple = "x86_64-unknown-linux-gnu"}} {
  func.func @no_bf16_feature(%a: vector<2x2xbf16>, %b: vector<2x32xbf16>, %c: vector<2x32xf32>) -> vector<2x32xf32> {
    %r = vector.contract {indexing_maps = [#lhs, #rhs, #acc], iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>} %a, %b, %c : vector<2x2xbf16>, vector<2x32xbf16> into vector<2x32xf32>
    return %r : vector<2x32xf32>
  }
}

// -----

// Tiles that are not bf16 pairs keep the FMAs: one reduction step (an odd
// reduction size), columns not a multiple of 16, f32 operands.
#lhs = affine_map<(d0, d1, d2) -> (d0, d2)>
#rhs = affine_map<(d0, d1, d2) -> (d2, d1)>
#acc = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func @not_pairs
// CHECK-NOT: llvm.call_intrinsic
// CHECK: return
module attributes {fuse.target = {cpu = "cooperlake", features = "+avx512f,+avx512bw,+avx512vl,+avx512bf16", triple = "x86_64-unknown-linux-gnu"}} {
  func.func @not_pairs(%a: vector<2x1xbf16>, %b: vector<1x32xbf16>, %c: vector<2x32xf32>,
                       %d: vector<2x2xbf16>, %e: vector<2x8xbf16>, %f: vector<2x8xf32>,
                       %g: vector<2x2xf32>, %h: vector<2x32xf32>) -> (vector<2x32xf32>, vector<2x8xf32>, vector<2x32xf32>) {
    %r = vector.contract {indexing_maps = [#lhs, #rhs, #acc], iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>} %a, %b, %c : vector<2x1xbf16>, vector<1x32xbf16> into vector<2x32xf32>
    %s = vector.contract {indexing_maps = [#lhs, #rhs, #acc], iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>} %d, %e, %f : vector<2x2xbf16>, vector<2x8xbf16> into vector<2x8xf32>
    %t = vector.contract {indexing_maps = [#lhs, #rhs, #acc], iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>} %g, %h, %c : vector<2x2xf32>, vector<2x32xf32> into vector<2x32xf32>
    return %r, %s, %t : vector<2x32xf32>, vector<2x8xf32>, vector<2x32xf32>
  }
}
