// RUN: fuse-opt %s --fuse-lower-vectors --split-input-file | FileCheck %s
// RUN: fuse-opt %s --fuse-lower-vectors --split-input-file | FileCheck %s --check-prefix=GLOBAL

// What convert-vector-to-llvm does not take is gone, in every case.
// GLOBAL-NOT: vector.contract
// GLOBAL-NOT: vector.multi_reduction
// GLOBAL-NOT: vector.transfer_read
// GLOBAL-NOT: vector.transfer_write
// GLOBAL-NOT: vector.outerproduct
// GLOBAL-NOT: vector.shape_cast
// GLOBAL-NOT: {{vector\.mask[^a-z_]}}

// Unless said otherwise, the inputs are the IR the fuse-lower-to-llvm
// pipeline hands to this pass (after bufferization and
// buffer-results-to-out-params; vector-bits=512) for a small fuse function.

// The micro-kernel of a matmul whose output buffer has no other (view) user:
// the 8x32 accumulator tile is loaded before the reduction loop, carried in
// registers through it (iter_args), and stored after it; the vector.contract
// becomes one FMA per accumulator row (a broadcast lhs element times the rhs
// row). The reduction loop is unrolled by 4: 32 FMAs per iteration.
#lhs = affine_map<(d0, d1, d2) -> (d0, d2)>
#rhs = affine_map<(d0, d1, d2) -> (d2, d1)>
#acc = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func @hoist_accumulator
// CHECK-SAME: (%[[A:[^:]*]]: memref<64x784xf32>, %[[B:[^:]*]]: memref<784x128xf32>, %[[C:[^:]*]]: memref<64x128xf32>)
// CHECK: %[[C4:.*]] = arith.constant 4 : index
// CHECK: scf.for %[[I:[^ ]+]] =
// CHECK-NEXT: scf.for %[[J:[^ ]+]] =
// CHECK-COUNT-8: vector.load %[[C]][{{.*}}, %[[J]]] : memref<64x128xf32>, vector<32xf32>
// CHECK: %[[R:.*]] = scf.for %{{[^ ]+}} = %{{.*}} to %{{.*}} step %[[C4]] iter_args(%[[ACC:[^ ]+]] = %{{.*}}) -> (vector<8x32xf32>)
// CHECK-NOT: %[[C]][
// CHECK: %[[ROW:.*]] = vector.load %[[B]][{{.*}}] : memref<784x128xf32>, vector<32xf32>
// CHECK-NOT: %[[C]][
// CHECK-COUNT-8: vector.fma %{{.*}}, %[[ROW]], %{{.*}} : vector<32xf32>
// CHECK-NOT: %[[C]][
// CHECK-COUNT-24: vector.fma
// CHECK-NOT: vector.fma
// CHECK: scf.yield %{{.*}} : vector<8x32xf32>
// CHECK-NEXT: }
// CHECK-COUNT-8: vector.store %{{.*}}, %[[C]][{{.*}}, %[[J]]] : memref<64x128xf32>, vector<32xf32>
func.func @hoist_accumulator(%arg0: memref<64x784xf32>, %arg1: memref<784x128xf32>, %arg2: memref<64x128xf32>) {
  %c32 = arith.constant 32 : index
  %c8 = arith.constant 8 : index
  %c784 = arith.constant 784 : index
  %c1 = arith.constant 1 : index
  %c128 = arith.constant 128 : index
  %c64 = arith.constant 64 : index
  %c0 = arith.constant 0 : index
  %cst = arith.constant 0.000000e+00 : f32
  scf.for %i = %c0 to %c64 step %c8 {
    scf.for %j = %c0 to %c128 step %c32 {
      scf.for %k = %c0 to %c784 step %c1 {
        %0 = vector.transfer_read %arg0[%i, %k], %cst {in_bounds = [true, true]} : memref<64x784xf32>, vector<8x1xf32>
        %1 = vector.transfer_read %arg1[%k, %j], %cst {in_bounds = [true]} : memref<784x128xf32>, vector<32xf32>
        %2 = vector.broadcast %1 : vector<32xf32> to vector<1x32xf32>
        %3 = vector.transfer_read %arg2[%i, %j], %cst {in_bounds = [true, true]} : memref<64x128xf32>, vector<8x32xf32>
        %4 = vector.contract {indexing_maps = [#lhs, #rhs, #acc], iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>} %0, %2, %3 : vector<8x1xf32>, vector<1x32xf32> into vector<8x32xf32>
        vector.transfer_write %4, %arg2[%i, %j] {in_bounds = [true, true]} : vector<8x32xf32>, memref<64x128xf32>
      }
    }
  }
  return
}

// -----

// A register tile whose zero fill fuse-tile-and-vectorize fused: the zeros
// written before the reduction loop are what the hoisted accumulator read
// would load back, and the store after the loop overwrites them. The loop
// starts from the zero constant, and the only stores are the results.
// CHECK-LABEL: func @fill_forwarded
// CHECK-SAME: (%{{[^:]*}}: memref<24x32xf32>, %{{[^:]*}}: memref<32x64xf32>, %[[C:[^:]*]]: memref<24x64xf32>)
// CHECK: %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : vector<12x32xf32>
// CHECK-NOT: vector.store
// CHECK-NOT: vector.load %[[C]]
// CHECK: scf.for %{{.*}} iter_args(%{{.*}} = %[[ZERO]]) -> (vector<12x32xf32>)
// CHECK-NOT: vector.load %[[C]]
// CHECK: scf.yield
// CHECK-COUNT-12: vector.store %{{.*}}, %[[C]]
// CHECK-NOT: vector.store
// CHECK: return
#lhs = affine_map<(d0, d1, d2) -> (d0, d2)>
#rhs = affine_map<(d0, d1, d2) -> (d2, d1)>
#acc = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @fill_forwarded(%arg0: memref<24x32xf32>, %arg1: memref<32x64xf32>, %arg2: memref<24x64xf32>) {
  %zero = arith.constant dense<0.000000e+00> : vector<12x32xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c12 = arith.constant 12 : index
  %c24 = arith.constant 24 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %cst = arith.constant 0.000000e+00 : f32
  scf.for %i = %c0 to %c24 step %c12 {
    scf.for %j = %c0 to %c64 step %c32 {
      vector.transfer_write %zero, %arg2[%i, %j] {in_bounds = [true, true]} : vector<12x32xf32>, memref<24x64xf32>
      scf.for %k = %c0 to %c32 step %c1 {
        %0 = vector.transfer_read %arg0[%i, %k], %cst {in_bounds = [true, true]} : memref<24x32xf32>, vector<12x1xf32>
        %1 = vector.transfer_read %arg1[%k, %j], %cst {in_bounds = [true]} : memref<32x64xf32>, vector<32xf32>
        %2 = vector.broadcast %1 : vector<32xf32> to vector<1x32xf32>
        %3 = vector.transfer_read %arg2[%i, %j], %cst {in_bounds = [true, true]} : memref<24x64xf32>, vector<12x32xf32>
        %4 = vector.contract {indexing_maps = [#lhs, #rhs, #acc], iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>} %0, %2, %3 : vector<12x1xf32>, vector<1x32xf32> into vector<12x32xf32>
        vector.transfer_write %4, %arg2[%i, %j] {in_bounds = [true, true]} : vector<12x32xf32>, memref<24x64xf32>
      }
    }
  }
  return
}

// -----

// fuse.matmul (64x784) x (784x128), as the pipeline produces it: the
// contraction becomes 8 FMAs per step of the reduction loop.
// The tiled fill and the accumulator reads go through subviews of the output;
// folding those views lets the 8x32 tile stay in registers across the
// reduction loop.
#lhs = affine_map<(d0, d1, d2) -> (d0, d2)>
#rhs = affine_map<(d0, d1, d2) -> (d2, d1)>
#acc = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func @matmul_accumulator_with_views
// CHECK-SAME: (%[[A:[^:]*]]: memref<64x784xf32>, %[[B:[^:]*]]: memref<784x128xf32>, %[[C:[^:]*]]: memref<64x128xf32>)
// CHECK: scf.for
// CHECK: scf.for
// CHECK: scf.for {{.*}} iter_args(%{{.*}}) -> (vector<8x32xf32>)
// CHECK-NOT: vector.load %[[C]]
// CHECK: %[[ROW:.*]] = vector.load %[[B]][{{.*}}] : memref<784x128xf32>, vector<32xf32>
// CHECK-COUNT-8: vector.fma %{{.*}}, %[[ROW]], %{{.*}} : vector<32xf32>
// CHECK: scf.yield %{{.*}} : vector<8x32xf32>
// CHECK: return
func.func @matmul_accumulator_with_views(%arg0: memref<64x784xf32>, %arg1: memref<784x128xf32>, %arg2: memref<64x128xf32>) {
  %cst = arith.constant dense<0.000000e+00> : vector<64xf32>
  %c32 = arith.constant 32 : index
  %c8 = arith.constant 8 : index
  %c784 = arith.constant 784 : index
  %c1 = arith.constant 1 : index
  %c128 = arith.constant 128 : index
  %c64 = arith.constant 64 : index
  %c0 = arith.constant 0 : index
  %cst_0 = arith.constant 0.000000e+00 : f32
  scf.for %arg3 = %c0 to %c64 step %c1 {
    scf.for %arg4 = %c0 to %c128 step %c64 {
      %subview = memref.subview %arg2[%arg3, %arg4] [1, 64] [1, 1] : memref<64x128xf32> to memref<1x64xf32, strided<[128, 1], offset: ?>>
      vector.transfer_write %cst, %subview[%c0, %c0] {in_bounds = [true]} : vector<64xf32>, memref<1x64xf32, strided<[128, 1], offset: ?>>
    }
  }
  scf.for %arg3 = %c0 to %c64 step %c8 {
    scf.for %arg4 = %c0 to %c128 step %c32 {
      scf.for %arg5 = %c0 to %c784 step %c1 {
        %0 = vector.transfer_read %arg0[%arg3, %arg5], %cst_0 {in_bounds = [true, true]} : memref<64x784xf32>, vector<8x1xf32>
        %1 = vector.transfer_read %arg1[%arg5, %arg4], %cst_0 {in_bounds = [true]} : memref<784x128xf32>, vector<32xf32>
        %2 = vector.broadcast %1 : vector<32xf32> to vector<1x32xf32>
        %3 = vector.transfer_read %arg2[%arg3, %arg4], %cst_0 {in_bounds = [true, true]} : memref<64x128xf32>, vector<8x32xf32>
        %4 = vector.contract {indexing_maps = [#lhs, #rhs, #acc], iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>} %0, %2, %3 : vector<8x1xf32>, vector<1x32xf32> into vector<8x32xf32>
        vector.transfer_write %4, %arg2[%arg3, %arg4] {in_bounds = [true, true]} : vector<8x32xf32>, memref<64x128xf32>
      }
    }
  }
  return
}

// -----

// fuse.conv2d (1x10x10x3 input, 3x3x3x16 kernel): the 1-D convolution's
// vector.contract (8 pixels x 16 channels) becomes 8 FMAs of a broadcast
// input pixel and the 16 kernel channels.
// The 8x16 accumulator tile of a conv is loaded once per output row and
// carried in registers across the window and channel loops.
#sum = affine_map<(d0, d1) -> (d0 + d1)>
#lhs = affine_map<(d0, d1, d2) -> (d0, d2)>
#rhs = affine_map<(d0, d1, d2) -> (d2, d1)>
#acc = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func @conv2d
// CHECK-SAME: (%[[X:[^:]*]]: memref<1x10x10x3xf32>, %[[K:[^:]*]]: memref<3x3x3x16xf32>, %[[OUT:[^:]*]]: memref<1x8x8x16xf32>)
// CHECK-COUNT-8: vector.load %[[OUT]]
// CHECK: scf.for {{.*}} iter_args(%{{.*}}) -> (vector<8x16xf32>)
// CHECK: %[[KV:.*]] = vector.load %[[K]][{{.*}}] : memref<3x3x3x16xf32>, vector<16xf32>
// CHECK-COUNT-8: vector.fma %{{.*}}, %[[KV]], %{{.*}} : vector<16xf32>
// CHECK: scf.yield %{{.*}} : vector<8x16xf32>
// CHECK-COUNT-8: vector.store %{{.*}}, %[[OUT]]
// CHECK: return
func.func @conv2d(%arg0: memref<1x10x10x3xf32>, %arg1: memref<3x3x3x16xf32>, %arg2: memref<1x8x8x16xf32>) {
  %cst = arith.constant dense<0.000000e+00> : vector<16xf32>
  %c3 = arith.constant 3 : index
  %c8 = arith.constant 8 : index
  %c1 = arith.constant 1 : index
  %c0 = arith.constant 0 : index
  %cst_0 = arith.constant 0.000000e+00 : f32
  scf.for %arg3 = %c0 to %c8 step %c1 {
    scf.for %arg4 = %c0 to %c8 step %c1 {
      %subview = memref.subview %arg2[0, %arg3, %arg4, 0] [1, 1, 1, 16] [1, 1, 1, 1] : memref<1x8x8x16xf32> to memref<1x1x1x16xf32, strided<[1024, 128, 16, 1], offset: ?>>
      vector.transfer_write %cst, %subview[%c0, %c0, %c0, %c0] {in_bounds = [true]} : vector<16xf32>, memref<1x1x1x16xf32, strided<[1024, 128, 16, 1], offset: ?>>
    }
  }
  scf.for %arg3 = %c0 to %c8 step %c1 {
    scf.for %arg4 = %c0 to %c3 step %c1 {
      scf.for %arg5 = %c0 to %c3 step %c1 {
        scf.for %arg6 = %c0 to %c3 step %c1 {
          %subview = memref.subview %arg2[0, %arg3, 0, 0] [1, 1, 8, 16] [1, 1, 1, 1] : memref<1x8x8x16xf32> to memref<1x1x8x16xf32, strided<[1024, 128, 16, 1], offset: ?>>
          %subview_1 = memref.subview %subview[0, 0, 0, 0] [1, 1, 8, 16] [1, 1, 1, 1] : memref<1x1x8x16xf32, strided<[1024, 128, 16, 1], offset: ?>> to memref<1x8x16xf32, strided<[1024, 16, 1], offset: ?>>
          %0 = affine.apply #sum(%arg3, %arg4)
          %1 = vector.transfer_read %arg0[%c0, %0, %arg5, %arg6], %cst_0 {in_bounds = [true, true]} : memref<1x10x10x3xf32>, vector<8x1xf32>
          %2 = vector.transfer_read %arg1[%arg4, %arg5, %arg6, %c0], %cst_0 {in_bounds = [true]} : memref<3x3x3x16xf32>, vector<16xf32>
          %3 = vector.transfer_read %arg2[%c0, %arg3, %c0, %c0], %cst_0 {in_bounds = [true, true]} : memref<1x8x8x16xf32>, vector<8x16xf32>
          %4 = vector.broadcast %2 : vector<16xf32> to vector<1x16xf32>
          %5 = vector.contract {indexing_maps = [#lhs, #rhs, #acc], iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>} %1, %4, %3 : vector<8x1xf32>, vector<1x16xf32> into vector<8x16xf32>
          vector.transfer_write %5, %subview_1[%c0, %c0, %c0] {in_bounds = [true, true]} : vector<8x16xf32>, memref<1x8x16xf32, strided<[1024, 16, 1], offset: ?>>
        }
      }
    }
  }
  return
}

// -----

// A 2-D transfer (hand-written) becomes one 1-D load or store per row.
// CHECK-LABEL: func @transfer_2d
// CHECK-SAME: (%[[X:[^:]*]]: memref<4x64xf32>, %[[Y:[^:]*]]: memref<4x64xf32>)
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[C2:.*]] = arith.constant 2 : index
// CHECK-DAG: %[[C3:.*]] = arith.constant 3 : index
// CHECK-DAG: %[[C16:.*]] = arith.constant 16 : index
// CHECK: vector.load %[[X]][%[[C0]], %[[C16]]] : memref<4x64xf32>, vector<16xf32>
// CHECK: vector.load %[[X]][%[[C1]], %[[C16]]] : memref<4x64xf32>, vector<16xf32>
// CHECK: vector.load %[[X]][%[[C2]], %[[C16]]] : memref<4x64xf32>, vector<16xf32>
// CHECK: vector.load %[[X]][%[[C3]], %[[C16]]] : memref<4x64xf32>, vector<16xf32>
// CHECK: vector.store %{{.*}}, %[[Y]][%[[C0]], %[[C16]]] : memref<4x64xf32>, vector<16xf32>
// CHECK: vector.store %{{.*}}, %[[Y]][%[[C1]], %[[C16]]] : memref<4x64xf32>, vector<16xf32>
// CHECK: vector.store %{{.*}}, %[[Y]][%[[C2]], %[[C16]]] : memref<4x64xf32>, vector<16xf32>
// CHECK: vector.store %{{.*}}, %[[Y]][%[[C3]], %[[C16]]] : memref<4x64xf32>, vector<16xf32>
// CHECK-NOT: vector<4x16xf32>, memref
// CHECK: return
func.func @transfer_2d(%arg0: memref<4x64xf32>, %arg1: memref<4x64xf32>) {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %cst = arith.constant 0.000000e+00 : f32
  %0 = vector.transfer_read %arg0[%c0, %c16], %cst {in_bounds = [true, true]} : memref<4x64xf32>, vector<4x16xf32>
  %1 = arith.negf %0 : vector<4x16xf32>
  vector.transfer_write %1, %arg1[%c0, %c16] {in_bounds = [true, true]} : vector<4x16xf32>, memref<4x64xf32>
  return
}

// -----

// fuse.add on tensor<1000xf32>: the masked transfers of the partial tiles
// become masked loads and a masked store (the mask is kept as computed).
#tile = affine_map<(d0) -> (-d0 + 1000, 64)>
// CHECK-LABEL: func @masked_partial_tile
// CHECK: scf.for
// CHECK: %[[N:.*]] = affine.min
// CHECK-NOT: memref.subview
// CHECK: %[[MASK:.*]] = vector.create_mask %[[N]] : vector<64xi1>
// CHECK: %[[A:.*]] = vector.maskedload %arg0[%{{.*}}], %[[MASK]], %{{.*}} : memref<1000xf32>, vector<64xi1>, vector<64xf32> into vector<64xf32>
// CHECK: %[[B:.*]] = vector.maskedload %arg1[%{{.*}}], %[[MASK]], %{{.*}} : memref<1000xf32>, vector<64xi1>, vector<64xf32> into vector<64xf32>
// CHECK: %[[S:.*]] = arith.addf %[[A]], %[[B]] : vector<64xf32>
// CHECK: vector.maskedstore %arg2[%{{.*}}], %[[MASK]], %[[S]] : memref<1000xf32>, vector<64xi1>, vector<64xf32>
func.func @masked_partial_tile(%arg0: memref<1000xf32>, %arg1: memref<1000xf32>, %arg2: memref<1000xf32>) {
  %0 = ub.poison : f32
  %c64 = arith.constant 64 : index
  %c1000 = arith.constant 1000 : index
  %c0 = arith.constant 0 : index
  scf.for %arg3 = %c0 to %c1000 step %c64 {
    %1 = affine.min #tile(%arg3)
    %subview = memref.subview %arg0[%arg3] [%1] [1] : memref<1000xf32> to memref<?xf32, strided<[1], offset: ?>>
    %subview_0 = memref.subview %arg1[%arg3] [%1] [1] : memref<1000xf32> to memref<?xf32, strided<[1], offset: ?>>
    %subview_1 = memref.subview %arg2[%arg3] [%1] [1] : memref<1000xf32> to memref<?xf32, strided<[1], offset: ?>>
    %2 = vector.create_mask %1 : vector<64xi1>
    %3 = vector.transfer_read %subview[%c0], %0, %2 {in_bounds = [true]} : memref<?xf32, strided<[1], offset: ?>>, vector<64xf32>
    %4 = vector.transfer_read %subview_0[%c0], %0, %2 {in_bounds = [true]} : memref<?xf32, strided<[1], offset: ?>>, vector<64xf32>
    %5 = arith.addf %3, %4 : vector<64xf32>
    vector.transfer_write %5, %subview_1[%c0], %2 {in_bounds = [true]} : vector<64xf32>, memref<?xf32, strided<[1], offset: ?>>
  }
  return
}

// -----

// fuse.reduce_sum {axes = [1]} of tensor<4x64xf32>: the multi-reduction of
// each row is lowered to plain vector arithmetic.
// Each row becomes one vector.reduction (a tree of adds after
// convert-vector-to-llvm with reassociation).
// CHECK-LABEL: func @row_reduction
// CHECK: scf.for
// CHECK: vector.load %arg0[%{{.*}}] : memref<4x64xf32>, vector<64xf32>
// CHECK: vector.reduction <add>, %{{.*}} : vector<64xf32> into f32
// CHECK: vector.store %{{.*}}, %arg1[%{{.*}}] : memref<4xf32>, vector<1xf32>
// CHECK: return
func.func @row_reduction(%arg0: memref<4x64xf32>, %arg1: memref<4xf32>) {
  %cst = arith.constant dense<0.000000e+00> : vector<4xf32>
  %0 = ub.poison : f32
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c0 = arith.constant 0 : index
  vector.transfer_write %cst, %arg1[%c0] {in_bounds = [true]} : vector<4xf32>, memref<4xf32>
  scf.for %arg2 = %c0 to %c4 step %c1 {
    %1 = vector.transfer_read %arg0[%arg2, %c0], %0 {in_bounds = [true]} : memref<4x64xf32>, vector<64xf32>
    %2 = vector.broadcast %1 : vector<64xf32> to vector<1x64xf32>
    %3 = vector.transfer_read %arg1[%arg2], %0 {in_bounds = [true]} : memref<4xf32>, vector<1xf32>
    %4 = vector.multi_reduction <add>, %2, %3 [1] : vector<1x64xf32> to vector<1xf32>
    vector.transfer_write %4, %arg1[%arg2] {in_bounds = [true]} : vector<1xf32>, memref<4xf32>
  }
  return
}

// -----

// A masked tile of a 4-d transpose: the map reads source dims 3, 0, 2 (a
// unit dim dropped in between), the mask is in the source's order. It is
// read in the source's order (four masked rows along the masked dim 3)
// and transposed, never unrolled along the vector's dims with the mask
// indexed in the wrong order.
// CHECK-LABEL: func @masked_transposed_read
// CHECK-SAME: %[[SRC:[^:]*]]: memref<2x3x4x5xi64>, %[[DST:[^:]*]]: memref<4x1x4xi64>, %[[N:[^:]*]]: index
// CHECK: %[[MASK:.*]] = vector.create_mask %[[N]] : vector<4xi1>
// CHECK-COUNT-4: vector.maskedload %[[SRC]][{{.*}}], %[[MASK]]
// CHECK: vector.shuffle {{.*}} [0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15]
// CHECK-COUNT-4: vector.store %{{.*}}, %[[DST]]
// CHECK-NOT: scf.if
func.func @masked_transposed_read(%src: memref<2x3x4x5xi64>, %dst: memref<4x1x4xi64>, %n: index, %i: index, %j: index, %k: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %pad = ub.poison : i64
  %mask = vector.create_mask %c1, %c4, %n : vector<1x4x4xi1>
  %v = vector.transfer_read %src[%i, %j, %c0, %k], %pad, %mask {in_bounds = [true, true, true], permutation_map = affine_map<(d0, d1, d2, d3) -> (d3, d0, d2)>} : memref<2x3x4x5xi64>, vector<4x1x4xi64>
  vector.transfer_write %v, %dst[%c0, %c0, %c0] {in_bounds = [true, true, true]} : vector<4x1x4xi64>, memref<4x1x4xi64>
  return
}
