// RUN: fuse-opt %s --fuse-approximate-math --split-input-file | FileCheck %s

// f32 transcendental math becomes plain arithmetic (polynomials built from
// fma, bit casts and shifts), so it vectorizes; f64 stays for libm.

// CHECK-LABEL: func @exp_f32
// CHECK-SAME: (%[[X:.*]]: f32) -> f32
// CHECK-NOT: math.exp
// CHECK: math.fma
// CHECK: arith.bitcast %{{.*}} : i32 to f32
// CHECK-NOT: math.exp
// CHECK: return %{{.*}} : f32
func.func @exp_f32(%x: f32) -> f32 {
  %0 = math.exp %x : f32
  return %0 : f32
}

// -----

// CHECK-LABEL: func @tanh_f32
// CHECK-SAME: (%[[X:.*]]: f32) -> f32
// CHECK-NOT: math.tanh
// CHECK: math.fma
// CHECK-NOT: math.tanh
// CHECK: return %{{.*}} : f32
func.func @tanh_f32(%x: f32) -> f32 {
  %0 = math.tanh %x : f32
  return %0 : f32
}

// -----

// CHECK-LABEL: func @log_f32
// CHECK-SAME: (%[[X:.*]]: f32) -> f32
// CHECK-NOT: math.log
// CHECK: arith.bitcast %{{.*}} : f32 to i32
// CHECK: math.fma
// CHECK-NOT: math.log
// CHECK: return %{{.*}} : f32
func.func @log_f32(%x: f32) -> f32 {
  %0 = math.log %x : f32
  return %0 : f32
}

// -----

// The approximations stay on vectors: every intermediate is vector<16xf32>
// (or its i32 bit pattern), never unrolled to scalars.
// CHECK-LABEL: func @vector_f32
// CHECK-SAME: (%[[V:.*]]: vector<16xf32>) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>)
// CHECK-NOT: math.exp
// CHECK-NOT: math.tanh
// CHECK-NOT: math.log
// CHECK-NOT: vector.extract
// CHECK: math.fma %{{.*}}, %{{.*}}, %{{.*}} : vector<16xf32>
// CHECK: arith.bitcast %{{.*}} : vector<16xi32> to vector<16xf32>
// CHECK-NOT: math.exp
// CHECK-NOT: math.tanh
// CHECK-NOT: math.log
// CHECK-NOT: vector.extract
// CHECK: return %{{.*}}, %{{.*}}, %{{.*}} : vector<16xf32>, vector<16xf32>, vector<16xf32>
func.func @vector_f32(%v: vector<16xf32>) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>) {
  %0 = math.exp %v : vector<16xf32>
  %1 = math.tanh %v : vector<16xf32>
  %2 = math.log %v : vector<16xf32>
  return %0, %1, %2 : vector<16xf32>, vector<16xf32>, vector<16xf32>
}

// -----

// f64 is left to libm, scalar or vector.
// CHECK-LABEL: func @f64_untouched
// CHECK-SAME: (%[[D:.*]]: f64, %[[V:.*]]: vector<4xf64>)
// CHECK-NEXT: %[[E:.*]] = math.exp %[[D]] : f64
// CHECK-NEXT: %[[T:.*]] = math.tanh %[[D]] : f64
// CHECK-NEXT: %[[L:.*]] = math.log %[[D]] : f64
// CHECK-NEXT: %[[EV:.*]] = math.exp %[[V]] : vector<4xf64>
// CHECK-NEXT: return %[[E]], %[[T]], %[[L]], %[[EV]]
func.func @f64_untouched(%d: f64, %v: vector<4xf64>) -> (f64, f64, f64, vector<4xf64>) {
  %0 = math.exp %d : f64
  %1 = math.tanh %d : f64
  %2 = math.log %d : f64
  %3 = math.exp %v : vector<4xf64>
  return %0, %1, %2, %3 : f64, f64, f64, vector<4xf64>
}

// -----

// Mixed: only the f32 ops change.
// CHECK-LABEL: func @mixed
// CHECK: %[[D:.*]] = math.exp %{{.*}} : f64
// CHECK-NOT: math.exp %{{.*}} : f32
// CHECK: return %{{.*}}, %[[D]] : f32, f64
func.func @mixed(%x: f32, %d: f64) -> (f32, f64) {
  %0 = math.exp %x : f32
  %1 = math.exp %d : f64
  return %0, %1 : f32, f64
}

// -----

// Inside a linalg.generic body, as the pipeline sees it after lowering.
// CHECK-LABEL: func @in_generic
// CHECK: linalg.generic
// CHECK-NOT: math.exp
// CHECK: math.fma
// CHECK: linalg.yield
func.func @in_generic(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  %0 = tensor.empty() : tensor<8xf32>
  %1 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%arg0 : tensor<8xf32>) outs(%0 : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %2 = math.exp %in : f32
    linalg.yield %2 : f32
  } -> tensor<8xf32>
  return %1 : tensor<8xf32>
}

// -----

// bf16 roundings: without AVX512_BF16 in the target, arith.truncf to bf16
// (scalar or vector) becomes integer arithmetic on the bits (round to
// nearest even), which vectorizes, instead of LLVM's call of __truncsfbf2
// per element; with it, vcvtneps2bf16 does it and the op stays.
// CHECK-LABEL: func @truncf_bf16_avx2
// CHECK-NOT: arith.truncf
// CHECK: arith.bitcast %{{.*}} : vector<16xf32> to vector<16xi32>
// CHECK: arith.shrui
// CHECK: arith.trunci %{{.*}} : vector<16xi32> to vector<16xi16>
// CHECK: arith.bitcast %{{.*}} : vector<16xi16> to vector<16xbf16>
// CHECK-NOT: arith.truncf
module attributes {fuse.target = {cpu = "x86-64-v3", features = "+avx2,+fma", triple = "x86_64-unknown-linux-gnu"}} {
  func.func @truncf_bf16_avx2(%x: vector<16xf32>) -> vector<16xbf16> {
    %0 = arith.truncf %x : vector<16xf32> to vector<16xbf16>
    return %0 : vector<16xbf16>
  }
}

// -----

// CHECK-LABEL: func @truncf_bf16_native
// CHECK: arith.truncf %{{.*}} : vector<16xf32> to vector<16xbf16>
module attributes {fuse.target = {cpu = "znver4", features = "+avx512f,+avx512bw,+avx512vl,+avx512bf16", triple = "x86_64-unknown-linux-gnu"}} {
  func.func @truncf_bf16_native(%x: vector<16xf32>) -> vector<16xbf16> {
    %0 = arith.truncf %x : vector<16xf32> to vector<16xbf16>
    return %0 : vector<16xbf16>
  }
}
