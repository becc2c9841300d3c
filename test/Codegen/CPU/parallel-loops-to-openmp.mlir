// RUN: fuse-opt %s --fuse-parallel-loops-to-openmp --split-input-file | FileCheck %s

// A parallel loop becomes one omp.parallel region, forked only with several
// threads (`if`), in which each thread runs one contiguous block of the
// iterations (no worksharing loop, whose runtime calls allocate); with one
// thread the region's body runs once, directly (fuse::translateToLLVMIR),
// and takes all of them in order without asking the runtime. A stack buffer
// of an iteration is taken once per thread, before its loop.
// CHECK-LABEL: func.func @blocks
// CHECK:         %[[MAX:.*]] = call @omp_get_max_threads() : () -> i32
// CHECK:         %[[N:.*]] = arith.index_cast %[[MAX]]
// CHECK:         %[[SEVERAL:.*]] = arith.cmpi ugt, %[[N]], %{{.*}}
// CHECK:         omp.parallel if(%[[SEVERAL]]) {
// CHECK:           %[[TEAM:.*]]:2 = scf.if %[[SEVERAL]] -> (index, index) {
// CHECK:             call @omp_get_thread_num()
// CHECK:             call @omp_get_num_threads()
// CHECK:           } else {
// CHECK:             %[[ZERO:.*]] = arith.constant 0 : index
// CHECK:             %[[ONE:.*]] = arith.constant 1 : index
// CHECK:             scf.yield %[[ZERO]], %[[ONE]]
// CHECK:           arith.ceildivui %{{.*}}, %[[TEAM]]#1
// CHECK:           %[[BUF:.*]] = memref.alloca() {alignment = 64 : i64} : memref<16xf32>
// CHECK:           scf.for
// CHECK:             memref.store %{{.*}}, %[[BUF]]
// CHECK:           omp.terminator
// CHECK-NOT:     scf.for
// CHECK-NOT:     scf.parallel
// CHECK:         func.func private @omp_get_max_threads() -> i32
func.func @blocks(%out: memref<64x16xf32>, %v: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c64 = arith.constant 64 : index
  scf.parallel (%i) = (%c0) to (%c64) step (%c8) {
    %buf = memref.alloca() {alignment = 64 : i64} : memref<16xf32>
    memref.store %v, %buf[%c0] : memref<16xf32>
    %x = memref.load %buf[%c0] : memref<16xf32>
    memref.store %x, %out[%i, %c0] : memref<64x16xf32>
    scf.reduce
  }
  return
}

// -----

// Several dimensions are linearized, the last one fastest.
// CHECK-LABEL: func.func @two_dims
// CHECK:         omp.parallel
// CHECK:           scf.for %[[K:.*]] =
// CHECK:             %[[J:.*]] = arith.remui %[[K]], %{{.*}}
// CHECK:             %[[I:.*]] = arith.divui %[[K]], %{{.*}}
// CHECK:             memref.store %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}]
func.func @two_dims(%out: memref<4x8xf32>, %v: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c8) step (%c1, %c1) {
    memref.store %v, %out[%i, %j] : memref<4x8xf32>
    scf.reduce
  }
  return
}

// -----

// Adjacent loops that write disjoint buffers (two parameters' updates) share
// one region: each thread takes its block of each loop (of different code:
// a class each), the second loop's blocks starting at the next thread, with no barrier between them. With
// one thread, both loops run in order.
// CHECK-LABEL: func.func @independent
// CHECK:         omp.parallel if(
// CHECK:           arith.remui
// CHECK:           scf.for
// CHECK:             memref.subview %arg0
// CHECK:           scf.for
// CHECK:             memref.store %{{.*}}, %arg1
// CHECK:           omp.terminator
// CHECK-NOT:     omp.terminator
// CHECK-NOT:     omp.parallel
// CHECK:         return
func.func @independent(%a: memref<64xf32>, %b: memref<32xf32>, %v: f32) {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %c64 = arith.constant 64 : index
  scf.parallel (%i) = (%c0) to (%c64) step (%c8) {
    %s = memref.subview %a[%i] [8] [1] : memref<64xf32> to memref<8xf32, strided<[1], offset: ?>>
    memref.store %v, %s[%c0] : memref<8xf32, strided<[1], offset: ?>>
    scf.reduce
  }
  %c32 = arith.constant 32 : index
  scf.parallel (%i) = (%c0) to (%c32) step (%c8) {
    memref.store %v, %b[%i] : memref<32xf32>
    scf.reduce
  }
  return
}

// -----

// The second loop reads what the first writes: two regions, the barrier of
// the first between them.
// CHECK-LABEL: func.func @dependent
// CHECK:         omp.parallel
// CHECK:         omp.terminator
// CHECK:         omp.parallel
// CHECK:         omp.terminator
func.func @dependent(%a: memref<64xf32>, %b: memref<64xf32>, %v: f32) {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %c64 = arith.constant 64 : index
  scf.parallel (%i) = (%c0) to (%c64) step (%c8) {
    memref.store %v, %a[%i] : memref<64xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c64) step (%c8) {
    %x = memref.load %a[%i] : memref<64xf32>
    memref.store %x, %b[%i] : memref<64xf32>
    scf.reduce
  }
  return
}

// -----

// Two buffers of one workspace slot (fuse-workspace) share bytes: a loop
// writing one and a loop writing the other may not run at once, though
// they are different arguments. Two regions, as for @dependent; buffers of
// different slots (or none) would share one, as in @independent.
// CHECK-LABEL: func.func @one_slot
// CHECK:         omp.parallel
// CHECK:         omp.terminator
// CHECK:         omp.parallel
// CHECK:         omp.terminator
func.func @one_slot(%a: memref<64xf32> {fuse.workspace_slot = 0 : i64}, %b: memref<32xf32> {fuse.workspace_slot = 0 : i64}, %v: f32) {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %c64 = arith.constant 64 : index
  scf.parallel (%i) = (%c0) to (%c64) step (%c8) {
    memref.store %v, %a[%i] : memref<64xf32>
    scf.reduce
  }
  %c32 = arith.constant 32 : index
  scf.parallel (%i) = (%c0) to (%c32) step (%c8) {
    memref.store %v, %b[%i] : memref<32xf32>
    scf.reduce
  }
  return
}

// -----

// Buffers of different slots are different buffers: one region.
// CHECK-LABEL: func.func @two_slots
// CHECK:         omp.parallel
// CHECK:         omp.terminator
// CHECK-NOT:     omp.parallel
// CHECK:         return
func.func @two_slots(%a: memref<64xf32> {fuse.workspace_slot = 0 : i64}, %b: memref<32xf32> {fuse.workspace_slot = 1 : i64}, %v: f32) {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %c64 = arith.constant 64 : index
  scf.parallel (%i) = (%c0) to (%c64) step (%c8) {
    memref.store %v, %a[%i] : memref<64xf32>
    scf.reduce
  }
  %c32 = arith.constant 32 : index
  scf.parallel (%i) = (%c0) to (%c32) step (%c8) {
    memref.store %v, %b[%i] : memref<32xf32>
    scf.reduce
  }
  return
}

// -----

// A call between two loops (it may touch any buffer) ends the run.
// CHECK-LABEL: func.func @call_between
// CHECK:         omp.parallel
// CHECK:         call @touch
// CHECK:         omp.parallel
func.func private @touch()
func.func @call_between(%a: memref<64xf32>, %b: memref<64xf32>, %v: f32) {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %c64 = arith.constant 64 : index
  scf.parallel (%i) = (%c0) to (%c64) step (%c8) {
    memref.store %v, %a[%i] : memref<64xf32>
    scf.reduce
  }
  func.call @touch() : () -> ()
  scf.parallel (%i) = (%c0) to (%c64) step (%c8) {
    memref.store %v, %b[%i] : memref<64xf32>
    scf.reduce
  }
  return
}

// -----

// Loops of the same code (two updates of parameters of one shape) form one
// class: their iterations are laid end to end and each thread takes one
// block of the whole, clamped to each loop's part (its first iteration at
// 8, the first loop's total); a loop of other code is its own class, whose
// blocks start at the next thread.
// CHECK-LABEL: func.func @same_code
// CHECK:         %[[N0:.*]] = arith.muli %{{.*}}, %{{.*}} : index
// CHECK:         %[[N1:.*]] = arith.muli %{{.*}}, %{{.*}} : index
// CHECK:         %[[N2:.*]] = arith.muli %{{.*}}, %{{.*}} : index
// CHECK:         %[[TOTAL:.*]] = arith.addi %[[N0]], %[[N1]]
// CHECK:         omp.parallel if(
// CHECK:           %[[TEAM:.*]]:2 = scf.if
// CHECK:           %[[CHUNK:.*]] = arith.ceildivui %[[TOTAL]], %[[TEAM]]#1
// CHECK:           %[[MUL:.*]] = arith.muli %[[TEAM]]#0, %[[CHUNK]]
// CHECK:           %[[BEGIN:.*]] = arith.minui %[[MUL]], %[[TOTAL]]
// CHECK:           %[[ADD:.*]] = arith.addi %[[BEGIN]], %[[CHUNK]]
// CHECK:           %[[END:.*]] = arith.minui %[[ADD]], %[[TOTAL]]
// CHECK:           %[[NEXT:.*]] = arith.addi %[[TEAM]]#0, %{{.*}}
// CHECK:           %[[BLOCK2:.*]] = arith.remui %[[NEXT]], %[[TEAM]]#1
// CHECK:           %[[CHUNK2:.*]] = arith.ceildivui %[[N2]], %[[TEAM]]#1
// CHECK:           arith.muli %[[BLOCK2]], %[[CHUNK2]]
// CHECK:           scf.for
// CHECK:             memref.store %{{.*}}, %arg0
// CHECK:           %[[LAST:.*]] = arith.addi %[[N0]], %[[N1]]
// CHECK:           %[[LO:.*]] = arith.maxui %[[BEGIN]], %[[N0]]
// CHECK:           %[[CL:.*]] = arith.minui %[[LO]], %[[LAST]]
// CHECK:           %[[B1:.*]] = arith.subi %[[CL]], %[[N0]]
// CHECK:           %[[HI:.*]] = arith.maxui %[[END]], %[[N0]]
// CHECK:           %[[CH:.*]] = arith.minui %[[HI]], %[[LAST]]
// CHECK:           %[[E1:.*]] = arith.subi %[[CH]], %[[N0]]
// CHECK:           scf.for %{{.*}} = %[[B1]] to %[[E1]]
// CHECK:             memref.store %{{.*}}, %arg1
// CHECK:           scf.for
// CHECK:             arith.addf
// CHECK:             memref.store %{{.*}}, %arg2
// CHECK:           omp.terminator
func.func @same_code(%a: memref<64xf32>, %b: memref<64xf32>, %c: memref<64xf32>, %v: f32) {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %c64 = arith.constant 64 : index
  scf.parallel (%i) = (%c0) to (%c64) step (%c8) {
    memref.store %v, %a[%i] : memref<64xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c64) step (%c8) {
    memref.store %v, %b[%i] : memref<64xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c64) step (%c8) {
    %w = arith.addf %v, %v : f32
    memref.store %w, %c[%i] : memref<64xf32>
    scf.reduce
  }
  return
}
