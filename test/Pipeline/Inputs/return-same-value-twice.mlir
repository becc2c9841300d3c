// BUG: not run by the suite (Inputs/ is excluded from discovery); see the
// BUG note in ../fuse-lower-to-llvm.mlir.
//
// Two results that are the same SSA value (here after CSE merges the two
// identical exps) crash fuse-lower-to-llvm with a segfault in
// buffer-results-to-out-params (BaseMemRefType::hasRank on a null type): with
// hoist-static-allocs the pass replaces the returned alloc by the first
// out-parameter and erases it, then visits the same alloc again for the
// second result. Upstream MLIR 22 reproduces it on its own:
//
//   func.func @f() -> (memref<4xf32>, memref<4xf32>) {
//     %a = memref.alloc() : memref<4xf32>
//     return %a, %a : memref<4xf32>, memref<4xf32>
//   }
//   fuse-opt --buffer-results-to-out-params="hoist-static-allocs modify-public-functions"
//
// Expected once fixed: one ptr per argument and per result, no crash.
//
// CHECK-LABEL: llvm.func @same_twice
// CHECK-SAME: (%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr) {
// CHECK: llvm.return{{$}}
func.func @same_twice(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = fuse.exp %x : tensor<4xf32>
  %1 = fuse.exp %x : tensor<4xf32>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}
