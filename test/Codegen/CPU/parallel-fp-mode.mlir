// RUN: fuse-opt %s --fuse-parallel-fp-mode --split-input-file | FileCheck %s

// On x86, the caller's MXCSR is read before the region; each thread saves
// its own, takes the caller's, and restores its own before the region ends.
// The caller's slot is one static alloca in the function's entry block,
// shared by its regions (a region's fork and its slot then never fall in
// different parts of the function's parallel code generation).

// CHECK-LABEL: func.func @region
// CHECK-NEXT:    llvm.mlir.constant(1 : i64)
// CHECK-NEXT:    %[[CALLER:.*]] = llvm.alloca
// CHECK-NOT:     llvm.alloca
// CHECK:         llvm.call_intrinsic "llvm.x86.sse.stmxcsr"(%[[CALLER]])
// CHECK-NEXT:    omp.parallel {
// CHECK:           %[[OWN:.*]] = llvm.alloca
// CHECK:           llvm.call_intrinsic "llvm.x86.sse.stmxcsr"(%[[OWN]])
// CHECK:           llvm.call_intrinsic "llvm.x86.sse.ldmxcsr"(%[[CALLER]])
// CHECK:           omp.wsloop
// CHECK:           llvm.call_intrinsic "llvm.x86.sse.ldmxcsr"(%[[OWN]])
// CHECK-NEXT:      omp.terminator
module attributes {fuse.target = {cpu = "znver5", features = "+avx512f", triple = "x86_64-unknown-linux-gnu"}} {
  func.func @region(%buf: memref<8xf32>, %v: f32) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    omp.parallel {
      omp.wsloop {
        omp.loop_nest (%i) : index = (%c0) to (%c8) step (%c1) {
          memref.store %v, %buf[%i] : memref<8xf32>
          omp.yield
        }
      }
      omp.terminator
    }
    return
  }
}

// -----

// Two regions, the second in a loop: both read the caller's mode into the
// entry block's one slot, right before each region (no alloca in the loop).
// A region nested in another region keeps a slot of its own beside it: the
// outer region's threads would all write the function's one.

// CHECK-LABEL: func.func @regions
// CHECK-NEXT:    llvm.mlir.constant(1 : i64)
// CHECK-NEXT:    %[[CALLER:.*]] = llvm.alloca
// CHECK:         llvm.call_intrinsic "llvm.x86.sse.stmxcsr"(%[[CALLER]])
// CHECK-NEXT:    omp.parallel {
// CHECK:           llvm.call_intrinsic "llvm.x86.sse.ldmxcsr"(%[[CALLER]])
// CHECK:           omp.terminator
// CHECK:         scf.for
// CHECK-NOT:       llvm.alloca
// CHECK:           llvm.call_intrinsic "llvm.x86.sse.stmxcsr"(%[[CALLER]])
// CHECK-NEXT:      omp.parallel {
// CHECK:             %[[OWN:.*]] = llvm.alloca
// CHECK:             llvm.call_intrinsic "llvm.x86.sse.ldmxcsr"(%[[CALLER]])
// CHECK:             %[[INNER:.*]] = llvm.alloca
// CHECK-NEXT:        llvm.call_intrinsic "llvm.x86.sse.stmxcsr"(%[[INNER]])
// CHECK-NEXT:        omp.parallel {
// CHECK:               llvm.call_intrinsic "llvm.x86.sse.ldmxcsr"(%[[INNER]])
module attributes {fuse.target = {cpu = "znver5", features = "+avx512f", triple = "x86_64-unknown-linux-gnu"}} {
  func.func @regions(%buf: memref<8xf32>, %v: f32) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c8 = arith.constant 8 : index
    omp.parallel {
      omp.wsloop {
        omp.loop_nest (%i) : index = (%c0) to (%c8) step (%c1) {
          memref.store %v, %buf[%i] : memref<8xf32>
          omp.yield
        }
      }
      omp.terminator
    }
    scf.for %k = %c0 to %c4 step %c1 {
      omp.parallel {
        omp.parallel {
          omp.wsloop {
            omp.loop_nest (%i) : index = (%c0) to (%c8) step (%c1) {
              memref.store %v, %buf[%i] : memref<8xf32>
              omp.yield
            }
          }
          omp.terminator
        }
        omp.terminator
      }
    }
    return
  }
}

// -----

// Other targets keep their regions as they are.

// CHECK-LABEL: func.func @other_target
// CHECK-NOT:     llvm.call_intrinsic
// CHECK:         omp.parallel
module attributes {fuse.target = {cpu = "generic", features = "", triple = "aarch64-unknown-linux-gnu"}} {
  func.func @other_target(%buf: memref<8xf32>, %v: f32) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    omp.parallel {
      omp.wsloop {
        omp.loop_nest (%i) : index = (%c0) to (%c8) step (%c1) {
          memref.store %v, %buf[%i] : memref<8xf32>
          omp.yield
        }
      }
      omp.terminator
    }
    return
  }
}

