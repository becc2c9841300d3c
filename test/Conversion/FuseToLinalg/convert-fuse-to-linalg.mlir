// RUN: fuse-opt %s --convert-fuse-to-linalg --split-input-file | FileCheck %s

// Every fuse op lowers to tensor-level linalg / tensor / arith / math.
// Broadcasting is an indexing map (a dropped leading dim, or the constant 0
// for a stretched size-1 dim), never a materialized copy: the broadcast
// operand is always a direct input of the consuming linalg.generic.

// CHECK-LABEL: func @constant
func.func @constant() -> (tensor<2xf32>, tensor<3xi32>) {
  // CHECK-DAG: arith.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
  // CHECK-DAG: arith.constant dense<7> : tensor<3xi32>
  // CHECK-NOT: fuse.constant
  %0 = fuse.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %1 = fuse.constant dense<7> : tensor<3xi32>
  return %0, %1 : tensor<2xf32>, tensor<3xi32>
}

// -----

// CHECK-DAG: #[[$ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func @unary_float
// CHECK-SAME: (%[[X:[^:]*]]: tensor<2x4xf32>)
func.func @unary_float(%x: tensor<2x4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>) {
  // CHECK: %[[E0:.*]] = tensor.empty() : tensor<2x4xf32>
  // CHECK: %[[NEG:.*]] = linalg.generic {indexing_maps = [#[[$ID]], #[[$ID]]], iterator_types = ["parallel", "parallel"]}
  // CHECK-SAME: ins(%[[X]] : tensor<2x4xf32>) outs(%[[E0]] : tensor<2x4xf32>)
  // CHECK: ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32):
  // CHECK-NEXT: %[[R:.*]] = arith.negf %[[IN]] : f32
  // CHECK-NEXT: linalg.yield %[[R]] : f32
  // CHECK-NEXT: } -> tensor<2x4xf32>
  %0 = fuse.neg %x : tensor<2x4xf32>
  // CHECK: %[[ABS:.*]] = linalg.generic
  // CHECK: math.absf
  %1 = fuse.abs %x : tensor<2x4xf32>
  // CHECK: %[[SQUARE:.*]] = linalg.generic
  // CHECK: ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32):
  // CHECK-NEXT: arith.mulf %[[IN]], %[[IN]] : f32
  %2 = fuse.square %x : tensor<2x4xf32>
  // CHECK: %[[RELU:.*]] = linalg.generic
  // CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
  // CHECK-NEXT: arith.maximumf %{{.*}}, %[[ZERO]] : f32
  %3 = fuse.relu %x : tensor<2x4xf32>
  // CHECK: %[[EXP:.*]] = linalg.generic
  // CHECK: math.exp
  %4 = fuse.exp %x : tensor<2x4xf32>
  // CHECK: %[[LOG:.*]] = linalg.generic
  // CHECK: math.log
  %5 = fuse.log %x : tensor<2x4xf32>
  // CHECK: %[[SQRT:.*]] = linalg.generic
  // CHECK: math.sqrt
  %6 = fuse.sqrt %x : tensor<2x4xf32>
  // CHECK: %[[RSQRT:.*]] = linalg.generic
  // CHECK: math.rsqrt
  %7 = fuse.rsqrt %x : tensor<2x4xf32>
  // CHECK: %[[TANH:.*]] = linalg.generic
  // CHECK: math.tanh
  %8 = fuse.tanh %x : tensor<2x4xf32>
  // sigmoid(x) = 1 / (1 + exp(-x))
  // CHECK: %[[SIGMOID:.*]] = linalg.generic
  // CHECK: ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32):
  // CHECK-NEXT: %[[N:.*]] = arith.negf %[[IN]] : f32
  // CHECK-NEXT: %[[E:.*]] = math.exp %[[N]] : f32
  // CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
  // CHECK-NEXT: %[[D:.*]] = arith.addf %[[ONE]], %[[E]] : f32
  // CHECK-NEXT: %[[S:.*]] = arith.divf %[[ONE]], %[[D]] : f32
  // CHECK-NEXT: linalg.yield %[[S]] : f32
  %9 = fuse.sigmoid %x : tensor<2x4xf32>
  // CHECK: return %[[NEG]], %[[ABS]], %[[SQUARE]], %[[RELU]], %[[EXP]], %[[LOG]], %[[SQRT]], %[[RSQRT]], %[[TANH]], %[[SIGMOID]]
  // CHECK-NOT: fuse.
  return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9 : tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>
}

// -----

// Integer unary ops use integer arithmetic.
// CHECK-LABEL: func @unary_int
func.func @unary_int(%i: tensor<4xi32>) -> (tensor<4xi32>, tensor<4xi32>, tensor<4xi32>, tensor<4xi32>) {
  // CHECK: linalg.generic
  // CHECK: ^bb0(%[[IN:.*]]: i32, %{{.*}}: i32):
  // CHECK-NEXT: %[[Z:.*]] = arith.constant 0 : i32
  // CHECK-NEXT: arith.subi %[[Z]], %[[IN]] : i32
  %0 = fuse.neg %i : tensor<4xi32>
  // CHECK: linalg.generic
  // CHECK: math.absi %{{.*}} : i32
  %1 = fuse.abs %i : tensor<4xi32>
  // CHECK: linalg.generic
  // CHECK: arith.muli %{{.*}}, %{{.*}} : i32
  %2 = fuse.square %i : tensor<4xi32>
  // CHECK: linalg.generic
  // CHECK: %[[Z:.*]] = arith.constant 0 : i32
  // CHECK-NEXT: arith.maxsi %{{.*}}, %[[Z]] : i32
  %3 = fuse.relu %i : tensor<4xi32>
  // CHECK-NOT: arith.negf
  // CHECK-NOT: math.absf
  // CHECK-NOT: arith.maximumf
  return %0, %1, %2, %3 : tensor<4xi32>, tensor<4xi32>, tensor<4xi32>, tensor<4xi32>
}

// -----

// CHECK-DAG: #[[$ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[$ROW:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-DAG: #[[$COL:.*]] = affine_map<(d0, d1) -> (d0, 0)>
// CHECK-DAG: #[[$SCALAR:.*]] = affine_map<(d0, d1) -> ()>
// CHECK-LABEL: func @binary_float
// CHECK-SAME: (%[[X:[^:]*]]: tensor<3x4xf32>, %[[B:[^:]*]]: tensor<4xf32>, %[[C:[^:]*]]: tensor<3x1xf32>, %[[S:[^:]*]]: tensor<f32>)
func.func @binary_float(%x: tensor<3x4xf32>, %b: tensor<4xf32>, %c: tensor<3x1xf32>, %s: tensor<f32>) -> (tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>) {
  // A missing leading dim: the row vector is read at (d1).
  // CHECK: linalg.generic {indexing_maps = [#[[$ID]], #[[$ROW]], #[[$ID]]], iterator_types = ["parallel", "parallel"]}
  // CHECK-SAME: ins(%[[X]], %[[B]] : tensor<3x4xf32>, tensor<4xf32>)
  // CHECK: ^bb0(%[[L:.*]]: f32, %[[R:.*]]: f32, %{{.*}}: f32):
  // CHECK-NEXT: arith.addf %[[L]], %[[R]] : f32
  %0 = fuse.add %x, %b : (tensor<3x4xf32>, tensor<4xf32>) -> tensor<3x4xf32>
  // A stretched size-1 dim: the column is read at (d0, 0).
  // CHECK: linalg.generic {indexing_maps = [#[[$COL]], #[[$ID]], #[[$ID]]]
  // CHECK-SAME: ins(%[[C]], %[[X]] : tensor<3x1xf32>, tensor<3x4xf32>)
  // CHECK: ^bb0(%[[L:.*]]: f32, %[[R:.*]]: f32, %{{.*}}: f32):
  // CHECK-NEXT: arith.subf %[[L]], %[[R]] : f32
  %1 = fuse.sub %c, %x : (tensor<3x1xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  // A 0-d operand is read at ().
  // CHECK: linalg.generic {indexing_maps = [#[[$ID]], #[[$SCALAR]], #[[$ID]]]
  // CHECK-SAME: ins(%[[X]], %[[S]] : tensor<3x4xf32>, tensor<f32>)
  // CHECK: arith.mulf
  %2 = fuse.mul %x, %s : (tensor<3x4xf32>, tensor<f32>) -> tensor<3x4xf32>
  // CHECK: linalg.generic {indexing_maps = [#[[$ID]], #[[$ID]], #[[$ID]]]
  // CHECK: arith.divf
  %3 = fuse.div %x, %x : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  // max/min propagate NaN: maximumf/minimumf, not maxnumf/minnumf.
  // CHECK: linalg.generic {indexing_maps = [#[[$ID]], #[[$ROW]], #[[$ID]]]
  // CHECK: arith.maximumf
  %4 = fuse.max %x, %b : (tensor<3x4xf32>, tensor<4xf32>) -> tensor<3x4xf32>
  // CHECK: linalg.generic {indexing_maps = [#[[$ID]], #[[$ROW]], #[[$ID]]]
  // CHECK: arith.minimumf
  %5 = fuse.min %x, %b : (tensor<3x4xf32>, tensor<4xf32>) -> tensor<3x4xf32>
  // CHECK: linalg.generic {indexing_maps = [#[[$ID]], #[[$SCALAR]], #[[$ID]]]
  // CHECK: math.powf
  %6 = fuse.pow %x, %s : (tensor<3x4xf32>, tensor<f32>) -> tensor<3x4xf32>
  // CHECK-NOT: linalg.broadcast
  // CHECK-NOT: tensor.insert_slice
  // CHECK-NOT: linalg.copy
  // CHECK: return
  return %0, %1, %2, %3, %4, %5, %6 : tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>
}

// -----

// Both operands broadcast: an outer product of a column and a row.
// CHECK-DAG: #[[$COL:.*]] = affine_map<(d0, d1) -> (d0, 0)>
// CHECK-DAG: #[[$ROW:.*]] = affine_map<(d0, d1) -> (0, d1)>
// CHECK-DAG: #[[$ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func @outer_product
// CHECK-SAME: (%[[C:[^:]*]]: tensor<5x1xf32>, %[[R:[^:]*]]: tensor<1x4xf32>)
func.func @outer_product(%c: tensor<5x1xf32>, %r: tensor<1x4xf32>) -> tensor<5x4xf32> {
  // CHECK-NOT: linalg.broadcast
  // CHECK: %[[E:.*]] = tensor.empty() : tensor<5x4xf32>
  // CHECK: linalg.generic {indexing_maps = [#[[$COL]], #[[$ROW]], #[[$ID]]], iterator_types = ["parallel", "parallel"]}
  // CHECK-SAME: ins(%[[C]], %[[R]] : tensor<5x1xf32>, tensor<1x4xf32>) outs(%[[E]] : tensor<5x4xf32>)
  // CHECK: arith.mulf
  %0 = fuse.mul %c, %r : (tensor<5x1xf32>, tensor<1x4xf32>) -> tensor<5x4xf32>
  return %0 : tensor<5x4xf32>
}

// -----

// Integer binary ops: addi/subi/muli, signed division and signed max/min.
// CHECK-DAG: #[[$COL:.*]] = affine_map<(d0, d1) -> (d0, 0)>
// CHECK-DAG: #[[$ROW:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func @binary_int
func.func @binary_int(%c: tensor<3x1xi32>, %r: tensor<5xi32>) -> (tensor<3x5xi32>, tensor<3x5xi32>, tensor<3x5xi32>, tensor<3x5xi32>, tensor<3x5xi32>, tensor<3x5xi32>) {
  // CHECK: linalg.generic {indexing_maps = [#[[$COL]], #[[$ROW]], #{{.*}}]
  // CHECK-SAME: ins(%{{.*}}, %{{.*}} : tensor<3x1xi32>, tensor<5xi32>) outs(%{{.*}} : tensor<3x5xi32>)
  // CHECK: arith.addi %{{.*}}, %{{.*}} : i32
  %0 = fuse.add %c, %r : (tensor<3x1xi32>, tensor<5xi32>) -> tensor<3x5xi32>
  // CHECK: arith.subi %{{.*}}, %{{.*}} : i32
  %1 = fuse.sub %c, %r : (tensor<3x1xi32>, tensor<5xi32>) -> tensor<3x5xi32>
  // CHECK: arith.muli %{{.*}}, %{{.*}} : i32
  %2 = fuse.mul %c, %r : (tensor<3x1xi32>, tensor<5xi32>) -> tensor<3x5xi32>
  // Division never traps: 0 and INT_MIN / -1 divide by 1 instead, and x / 0
  // selects -1.
  // CHECK: ^bb0(%[[X:[^:]*]]: i32, %[[Y:[^:]*]]: i32,
  // CHECK-NEXT: %[[MONE:.*]] = arith.constant -1 : i32
  // CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0 : i32
  // CHECK-NEXT: %[[ISZERO:.*]] = arith.cmpi eq, %[[Y]], %[[ZERO]] : i32
  // CHECK-NEXT: %[[MIN:.*]] = arith.constant -2147483648 : i32
  // CHECK-NEXT: %[[ISMIN:.*]] = arith.cmpi eq, %[[X]], %[[MIN]] : i32
  // CHECK-NEXT: %[[ISMONE:.*]] = arith.cmpi eq, %[[Y]], %[[MONE]] : i32
  // CHECK-NEXT: %[[OVER:.*]] = arith.andi %[[ISMIN]], %[[ISMONE]] : i1
  // CHECK-NEXT: %[[UNSAFE:.*]] = arith.ori %[[ISZERO]], %[[OVER]] : i1
  // CHECK-NEXT: %[[ONE:.*]] = arith.constant 1 : i32
  // CHECK-NEXT: %[[SAFE:.*]] = arith.select %[[UNSAFE]], %[[ONE]], %[[Y]] : i32
  // CHECK-NEXT: %[[Q:.*]] = arith.divsi %[[X]], %[[SAFE]] : i32
  // CHECK-NEXT: arith.select %[[ISZERO]], %[[MONE]], %[[Q]] : i32
  %3 = fuse.div %c, %r : (tensor<3x1xi32>, tensor<5xi32>) -> tensor<3x5xi32>
  // CHECK: arith.maxsi %{{.*}}, %{{.*}} : i32
  %4 = fuse.max %c, %r : (tensor<3x1xi32>, tensor<5xi32>) -> tensor<3x5xi32>
  // CHECK: arith.minsi %{{.*}}, %{{.*}} : i32
  %5 = fuse.min %c, %r : (tensor<3x1xi32>, tensor<5xi32>) -> tensor<3x5xi32>
  // CHECK-NOT: arith.addf
  // CHECK-NOT: arith.divf
  // CHECK-NOT: arith.divui
  // CHECK-NOT: arith.maximumf
  return %0, %1, %2, %3, %4, %5 : tensor<3x5xi32>, tensor<3x5xi32>, tensor<3x5xi32>, tensor<3x5xi32>, tensor<3x5xi32>, tensor<3x5xi32>
}

// -----

// CHECK-DAG: #[[$ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[$SCALAR:.*]] = affine_map<(d0, d1) -> ()>
// CHECK-DAG: #[[$ROW:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func @compare_select
// CHECK-SAME: (%[[X:[^:]*]]: tensor<3x4xf32>, %[[S:[^:]*]]: tensor<f32>, %[[C:[^:]*]]: tensor<4xi1>)
func.func @compare_select(%x: tensor<3x4xf32>, %s: tensor<f32>, %c: tensor<4xi1>) -> (tensor<3x4xi1>, tensor<3x4xf32>, tensor<3x4xf32>) {
  // CHECK: %[[E:.*]] = tensor.empty() : tensor<3x4xi1>
  // CHECK: %[[M:.*]] = linalg.generic {indexing_maps = [#[[$ID]], #[[$SCALAR]], #[[$ID]]]
  // CHECK-SAME: ins(%[[X]], %[[S]] : tensor<3x4xf32>, tensor<f32>) outs(%[[E]] : tensor<3x4xi1>)
  // CHECK: ^bb0(%{{.*}}: f32, %{{.*}}: f32, %{{.*}}: i1):
  // CHECK-NEXT: %[[P:.*]] = arith.cmpf ogt, %{{.*}}, %{{.*}} : f32
  // CHECK-NEXT: linalg.yield %[[P]] : i1
  // CHECK-NEXT: } -> tensor<3x4xi1>
  %m = fuse.compare gt, %x, %s : (tensor<3x4xf32>, tensor<f32>) -> tensor<3x4xi1>
  // CHECK: linalg.generic {indexing_maps = [#[[$ID]], #[[$ID]], #[[$SCALAR]], #[[$ID]]]
  // CHECK-SAME: ins(%[[M]], %[[X]], %[[S]] : tensor<3x4xi1>, tensor<3x4xf32>, tensor<f32>)
  // CHECK: ^bb0(%[[P:.*]]: i1, %[[T:.*]]: f32, %[[F:.*]]: f32, %{{.*}}: f32):
  // CHECK-NEXT: arith.select %[[P]], %[[T]], %[[F]] : f32
  %0 = fuse.select %m, %x, %s : (tensor<3x4xi1>, tensor<3x4xf32>, tensor<f32>) -> tensor<3x4xf32>
  // A broadcast condition.
  // CHECK: linalg.generic {indexing_maps = [#[[$ROW]], #[[$ID]], #[[$SCALAR]], #[[$ID]]]
  // CHECK-SAME: ins(%[[C]], %[[X]], %[[S]] : tensor<4xi1>, tensor<3x4xf32>, tensor<f32>)
  // CHECK: arith.select
  %1 = fuse.select %c, %x, %s : (tensor<4xi1>, tensor<3x4xf32>, tensor<f32>) -> tensor<3x4xf32>
  return %m, %0, %1 : tensor<3x4xi1>, tensor<3x4xf32>, tensor<3x4xf32>
}

// -----

// Float predicates are ordered except `ne`; integer ones are signed.
// CHECK-LABEL: func @compare_predicates
func.func @compare_predicates(%a: tensor<4xf32>, %b: tensor<4xf32>, %i: tensor<4xi32>, %j: tensor<4xi32>) -> (tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>) {
  // CHECK: arith.cmpf oeq
  // CHECK: arith.cmpf une
  // CHECK: arith.cmpf olt
  // CHECK: arith.cmpf ole
  // CHECK: arith.cmpf ogt
  // CHECK: arith.cmpf oge
  // CHECK: arith.cmpi eq
  // CHECK: arith.cmpi ne
  // CHECK: arith.cmpi slt
  // CHECK: arith.cmpi sle
  // CHECK: arith.cmpi sgt
  // CHECK: arith.cmpi sge
  %0 = fuse.compare eq, %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  %1 = fuse.compare ne, %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  %2 = fuse.compare lt, %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  %3 = fuse.compare le, %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  %4 = fuse.compare gt, %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  %5 = fuse.compare ge, %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  %6 = fuse.compare eq, %i, %j : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi1>
  %7 = fuse.compare ne, %i, %j : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi1>
  %8 = fuse.compare lt, %i, %j : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi1>
  %9 = fuse.compare le, %i, %j : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi1>
  %10 = fuse.compare gt, %i, %j : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi1>
  %11 = fuse.compare ge, %i, %j : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi1>
  return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11 : tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>
}

// -----

// Reshapes are metadata only: collapse/expand_shape, no linalg op.
// CHECK-LABEL: func @reshape
// CHECK-SAME: (%[[X:[^:]*]]: tensor<2x28x28xf32>, %[[V:[^:]*]]: tensor<12xf32>, %[[S:[^:]*]]: tensor<f32>, %[[O:[^:]*]]: tensor<1x1xf32>)
func.func @reshape(%x: tensor<2x28x28xf32>, %v: tensor<12xf32>, %s: tensor<f32>, %o: tensor<1x1xf32>) -> (tensor<2x784xf32>, tensor<3x4xf32>, tensor<1x1xf32>, tensor<f32>, tensor<12xf32>) {
  // CHECK-NOT: linalg.
  // CHECK: %[[FLAT:.*]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1, 2]] : tensor<2x28x28xf32> into tensor<1568xf32>
  // CHECK: %[[R0:.*]] = tensor.expand_shape %[[FLAT]] {{\[}}[0, 1]] output_shape [2, 784] : tensor<1568xf32> into tensor<2x784xf32>
  %0 = fuse.reshape %x : (tensor<2x28x28xf32>) -> tensor<2x784xf32>
  // CHECK: %[[R1:.*]] = tensor.expand_shape %[[V]] {{\[}}[0, 1]] output_shape [3, 4] : tensor<12xf32> into tensor<3x4xf32>
  %1 = fuse.reshape %v : (tensor<12xf32>) -> tensor<3x4xf32>
  // Rank 0 to rank 2 and back.
  // CHECK: %[[S1:.*]] = tensor.expand_shape %[[S]] [] output_shape [1] : tensor<f32> into tensor<1xf32>
  // CHECK: %[[R2:.*]] = tensor.expand_shape %[[S1]] {{\[}}[0, 1]] output_shape [1, 1] : tensor<1xf32> into tensor<1x1xf32>
  %2 = fuse.reshape %s : (tensor<f32>) -> tensor<1x1xf32>
  // CHECK: %[[O1:.*]] = tensor.collapse_shape %[[O]] {{\[}}[0, 1]] : tensor<1x1xf32> into tensor<1xf32>
  // CHECK: %[[R3:.*]] = tensor.collapse_shape %[[O1]] [] : tensor<1xf32> into tensor<f32>
  %3 = fuse.reshape %o : (tensor<1x1xf32>) -> tensor<f32>
  // Same type: no op at all.
  %4 = fuse.reshape %v : (tensor<12xf32>) -> tensor<12xf32>
  // CHECK-NOT: linalg.
  // CHECK: return %[[R0]], %[[R1]], %[[R2]], %[[R3]], %[[V]]
  return %0, %1, %2, %3, %4 : tensor<2x784xf32>, tensor<3x4xf32>, tensor<1x1xf32>, tensor<f32>, tensor<12xf32>
}

// -----

// CHECK-LABEL: func @transpose
// CHECK-SAME: (%[[X:[^:]*]]: tensor<2x3x4xf32>)
func.func @transpose(%x: tensor<2x3x4xf32>) -> tensor<4x2x3xf32> {
  // CHECK: %[[E:.*]] = tensor.empty() : tensor<4x2x3xf32>
  // CHECK: %[[T:.*]] = linalg.transpose ins(%[[X]] : tensor<2x3x4xf32>) outs(%[[E]] : tensor<4x2x3xf32>) permutation = [2, 0, 1]
  // CHECK: return %[[T]]
  %0 = fuse.transpose %x {permutation = array<i64: 2, 0, 1>} : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
  return %0 : tensor<4x2x3xf32>
}

// -----

// broadcast_to is a generic that yields its input through a broadcasting map.
// CHECK-DAG: #[[$IN:.*]] = affine_map<(d0, d1, d2) -> (0, d2)>
// CHECK-DAG: #[[$OUT:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[$SIN:.*]] = affine_map<(d0) -> ()>
// CHECK-DAG: #[[$SOUT:.*]] = affine_map<(d0) -> (d0)>
// CHECK-LABEL: func @broadcast_to
// CHECK-SAME: (%[[Z:[^:]*]]: tensor<1x4xf32>, %[[S:[^:]*]]: tensor<f32>)
func.func @broadcast_to(%z: tensor<1x4xf32>, %s: tensor<f32>) -> (tensor<2x3x4xf32>, tensor<4xf32>) {
  // CHECK: linalg.generic {indexing_maps = [#[[$IN]], #[[$OUT]]], iterator_types = ["parallel", "parallel", "parallel"]}
  // CHECK-SAME: ins(%[[Z]] : tensor<1x4xf32>) outs(%{{.*}} : tensor<2x3x4xf32>)
  // CHECK: ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32):
  // CHECK-NEXT: linalg.yield %[[IN]] : f32
  %0 = fuse.broadcast_to %z : (tensor<1x4xf32>) -> tensor<2x3x4xf32>
  // CHECK: linalg.generic {indexing_maps = [#[[$SIN]], #[[$SOUT]]], iterator_types = ["parallel"]}
  // CHECK-SAME: ins(%[[S]] : tensor<f32>) outs(%{{.*}} : tensor<4xf32>)
  %1 = fuse.broadcast_to %s : (tensor<f32>) -> tensor<4xf32>
  // CHECK-NOT: linalg.broadcast
  return %0, %1 : tensor<2x3x4xf32>, tensor<4xf32>
}

// -----

// A plain matmul is linalg.matmul on a zero-filled accumulator.
// CHECK-LABEL: func @matmul
// CHECK-SAME: (%[[X:[^:]*]]: tensor<8x784xf32>, %[[W:[^:]*]]: tensor<784x128xf32>)
func.func @matmul(%x: tensor<8x784xf32>, %w: tensor<784x128xf32>) -> tensor<8x128xf32> {
  // CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
  // CHECK: %[[E:.*]] = tensor.empty() : tensor<8x128xf32>
  // CHECK: %[[ACC:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[E]] : tensor<8x128xf32>) -> tensor<8x128xf32>
  // CHECK: %[[MM:.*]] = linalg.matmul ins(%[[X]], %[[W]] : tensor<8x784xf32>, tensor<784x128xf32>) outs(%[[ACC]] : tensor<8x128xf32>) -> tensor<8x128xf32>
  // CHECK: return %[[MM]]
  %0 = fuse.matmul %x, %w : (tensor<8x784xf32>, tensor<784x128xf32>) -> tensor<8x128xf32>
  return %0 : tensor<8x128xf32>
}

// -----

// Transposed operands become indexing maps of linalg.matmul, not copies.
// CHECK-DAG: #[[$LHS_T:.*]] = affine_map<(d0, d1, d2) -> (d2, d0)>
// CHECK-DAG: #[[$RHS:.*]] = affine_map<(d0, d1, d2) -> (d2, d1)>
// CHECK-DAG: #[[$OUT:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func @matmul_transpose_lhs
// CHECK-SAME: (%[[X:[^:]*]]: tensor<8x784xf32>, %[[DY:[^:]*]]: tensor<8x128xf32>)
func.func @matmul_transpose_lhs(%x: tensor<8x784xf32>, %dy: tensor<8x128xf32>) -> tensor<784x128xf32> {
  // CHECK-NOT: linalg.transpose
  // CHECK: linalg.matmul indexing_maps = [#[[$LHS_T]], #[[$RHS]], #[[$OUT]]]
  // CHECK-SAME: ins(%[[X]], %[[DY]] : tensor<8x784xf32>, tensor<8x128xf32>)
  // CHECK-SAME: -> tensor<784x128xf32>
  %0 = fuse.matmul %x, %dy {transpose_lhs} : (tensor<8x784xf32>, tensor<8x128xf32>) -> tensor<784x128xf32>
  return %0 : tensor<784x128xf32>
}

// -----

// CHECK-DAG: #[[$LHS:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[$RHS_T:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG: #[[$OUT:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func @matmul_transpose_rhs
// CHECK-SAME: (%[[DY:[^:]*]]: tensor<8x128xf32>, %[[W:[^:]*]]: tensor<784x128xf32>)
func.func @matmul_transpose_rhs(%dy: tensor<8x128xf32>, %w: tensor<784x128xf32>) -> tensor<8x784xf32> {
  // CHECK-NOT: linalg.transpose
  // CHECK: linalg.matmul indexing_maps = [#[[$LHS]], #[[$RHS_T]], #[[$OUT]]]
  // CHECK-SAME: ins(%[[DY]], %[[W]] : tensor<8x128xf32>, tensor<784x128xf32>)
  // CHECK-SAME: -> tensor<8x784xf32>
  %0 = fuse.matmul %dy, %w {transpose_rhs} : (tensor<8x128xf32>, tensor<784x128xf32>) -> tensor<8x784xf32>
  return %0 : tensor<8x784xf32>
}

// -----

// Integer matmul: an integer zero accumulator.
// CHECK-LABEL: func @matmul_int
func.func @matmul_int(%a: tensor<2x3xi32>, %b: tensor<3x4xi32>) -> tensor<2x4xi32> {
  // CHECK: %[[ZERO:.*]] = arith.constant 0 : i32
  // CHECK: %[[ACC:.*]] = linalg.fill ins(%[[ZERO]] : i32)
  // CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<2x3xi32>, tensor<3x4xi32>) outs(%[[ACC]] : tensor<2x4xi32>)
  %0 = fuse.matmul %a, %b : (tensor<2x3xi32>, tensor<3x4xi32>) -> tensor<2x4xi32>
  return %0 : tensor<2x4xi32>
}

// -----

// CHECK-DAG: #[[$LHS:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
// CHECK-DAG: #[[$RHS_T:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>
// CHECK-DAG: #[[$LHS_T:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d3, d1)>
// CHECK-DAG: #[[$OUT:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-LABEL: func @batch_matmul
// CHECK-SAME: (%[[A:[^:]*]]: tensor<4x3x5xf32>, %[[B:[^:]*]]: tensor<4x5x7xf32>, %[[BT:[^:]*]]: tensor<4x7x5xf32>, %[[AT:[^:]*]]: tensor<4x5x3xf32>)
func.func @batch_matmul(%a: tensor<4x3x5xf32>, %b: tensor<4x5x7xf32>, %bt: tensor<4x7x5xf32>, %at: tensor<4x5x3xf32>) -> (tensor<4x3x7xf32>, tensor<4x3x7xf32>, tensor<4x3x7xf32>) {
  // CHECK: linalg.fill
  // CHECK: linalg.batch_matmul ins(%[[A]], %[[B]] : tensor<4x3x5xf32>, tensor<4x5x7xf32>) outs(%{{.*}} : tensor<4x3x7xf32>)
  %0 = fuse.batch_matmul %a, %b : (tensor<4x3x5xf32>, tensor<4x5x7xf32>) -> tensor<4x3x7xf32>
  // CHECK: linalg.fill
  // CHECK: linalg.batch_matmul indexing_maps = [#[[$LHS]], #[[$RHS_T]], #[[$OUT]]]
  // CHECK-SAME: ins(%[[A]], %[[BT]] : tensor<4x3x5xf32>, tensor<4x7x5xf32>)
  %1 = fuse.batch_matmul %a, %bt {transpose_rhs} : (tensor<4x3x5xf32>, tensor<4x7x5xf32>) -> tensor<4x3x7xf32>
  // CHECK: linalg.fill
  // CHECK: linalg.batch_matmul indexing_maps = [#[[$LHS_T]], #[[$RHS_T]], #[[$OUT]]]
  // CHECK-SAME: ins(%[[AT]], %[[BT]] : tensor<4x5x3xf32>, tensor<4x7x5xf32>)
  %2 = fuse.batch_matmul %at, %bt {transpose_lhs, transpose_rhs} : (tensor<4x5x3xf32>, tensor<4x7x5xf32>) -> tensor<4x3x7xf32>
  // CHECK-NOT: linalg.transpose
  return %0, %1, %2 : tensor<4x3x7xf32>, tensor<4x3x7xf32>, tensor<4x3x7xf32>
}

// -----

// CHECK-LABEL: func @conv2d
// CHECK-SAME: (%[[X:[^:]*]]: tensor<2x8x8x3xf32>, %[[K:[^:]*]]: tensor<3x3x3x4xf32>)
func.func @conv2d(%x: tensor<2x8x8x3xf32>, %k: tensor<3x3x3x4xf32>) -> tensor<2x6x6x4xf32> {
  // CHECK-NOT: tensor.pad
  // CHECK: %[[ACC:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<2x6x6x4xf32>)
  // CHECK: linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
  // CHECK-SAME: ins(%[[X]], %[[K]] : tensor<2x8x8x3xf32>, tensor<3x3x3x4xf32>) outs(%[[ACC]] : tensor<2x6x6x4xf32>)
  %0 = fuse.conv2d %x, %k : (tensor<2x8x8x3xf32>, tensor<3x3x3x4xf32>) -> tensor<2x6x6x4xf32>
  return %0 : tensor<2x6x6x4xf32>
}

// -----

// Padding is a zero tensor.pad of H and W; strides and dilations carry over.
// CHECK-LABEL: func @conv2d_padding_strides
// CHECK-SAME: (%[[X:[^:]*]]: tensor<2x8x8x3xf32>, %[[K:[^:]*]]: tensor<3x3x3x4xf32>)
func.func @conv2d_padding_strides(%x: tensor<2x8x8x3xf32>, %k: tensor<3x3x3x4xf32>) -> tensor<2x4x4x4xf32> {
  // CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
  // CHECK: %[[P:.*]] = tensor.pad %[[X]] low[0, 1, 1, 0] high[0, 1, 1, 0]
  // CHECK: tensor.yield %[[ZERO]] : f32
  // CHECK: } : tensor<2x8x8x3xf32> to tensor<2x10x10x3xf32>
  // CHECK: linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>}
  // CHECK-SAME: ins(%[[P]], %[[K]] : tensor<2x10x10x3xf32>, tensor<3x3x3x4xf32>)
  // CHECK-SAME: -> tensor<2x4x4x4xf32>
  %0 = fuse.conv2d %x, %k {padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<2x8x8x3xf32>, tensor<3x3x3x4xf32>) -> tensor<2x4x4x4xf32>
  return %0 : tensor<2x4x4x4xf32>
}

// -----

// padding = [top, bottom, left, right].
// CHECK-LABEL: func @conv2d_asymmetric_padding
func.func @conv2d_asymmetric_padding(%x: tensor<1x5x5x1xf32>, %k: tensor<2x2x1x1xf32>) -> tensor<1x5x7x1xf32> {
  // CHECK: %[[P:.*]] = tensor.pad %{{.*}} low[0, 0, 2, 0] high[0, 1, 1, 0]
  // CHECK: } : tensor<1x5x5x1xf32> to tensor<1x6x8x1xf32>
  // CHECK: linalg.conv_2d_nhwc_hwcf
  // CHECK-SAME: ins(%[[P]], %{{.*}} : tensor<1x6x8x1xf32>, tensor<2x2x1x1xf32>)
  %0 = fuse.conv2d %x, %k {padding = array<i64: 0, 1, 2, 1>} : (tensor<1x5x5x1xf32>, tensor<2x2x1x1xf32>) -> tensor<1x5x7x1xf32>
  return %0 : tensor<1x5x7x1xf32>
}

// -----

// CHECK-LABEL: func @conv2d_dilations
func.func @conv2d_dilations(%x: tensor<2x8x8x3xf32>, %k: tensor<3x3x3x4xf32>) -> tensor<2x4x4x4xf32> {
  // CHECK-NOT: tensor.pad
  // CHECK: linalg.conv_2d_nhwc_hwcf {dilations = dense<2> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
  // CHECK-SAME: -> tensor<2x4x4x4xf32>
  %0 = fuse.conv2d %x, %k {dilations = array<i64: 2, 2>} : (tensor<2x8x8x3xf32>, tensor<3x3x3x4xf32>) -> tensor<2x4x4x4xf32>
  return %0 : tensor<2x4x4x4xf32>
}

// -----

// Max pooling starts from -inf and pads with -inf; strides default to the window.
// CHECK-LABEL: func @max_pool2d
// CHECK-SAME: (%[[X:[^:]*]]: tensor<1x4x4x2xf32>)
func.func @max_pool2d(%x: tensor<1x4x4x2xf32>) -> (tensor<1x2x2x2xf32>, tensor<1x4x4x2xf32>) {
  // CHECK: %[[W:.*]] = tensor.empty() : tensor<2x2xf32>
  // CHECK: %[[NEG_INF:.*]] = arith.constant 0xFF800000 : f32
  // CHECK: %[[ACC:.*]] = linalg.fill ins(%[[NEG_INF]] : f32) outs(%{{.*}} : tensor<1x2x2x2xf32>)
  // CHECK: linalg.pooling_nhwc_max {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>}
  // CHECK-SAME: ins(%[[X]], %[[W]] : tensor<1x4x4x2xf32>, tensor<2x2xf32>) outs(%[[ACC]] : tensor<1x2x2x2xf32>)
  %0 = fuse.max_pool2d %x {window = array<i64: 2, 2>} : (tensor<1x4x4x2xf32>) -> tensor<1x2x2x2xf32>
  // CHECK: %[[PAD_VALUE:.*]] = arith.constant 0xFF800000 : f32
  // CHECK: %[[P:.*]] = tensor.pad %[[X]] low[0, 1, 1, 0] high[0, 1, 1, 0]
  // CHECK: tensor.yield %[[PAD_VALUE]] : f32
  // CHECK: } : tensor<1x4x4x2xf32> to tensor<1x6x6x2xf32>
  // CHECK: %[[W3:.*]] = tensor.empty() : tensor<3x3xf32>
  // CHECK: linalg.pooling_nhwc_max {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
  // CHECK-SAME: ins(%[[P]], %[[W3]] : tensor<1x6x6x2xf32>, tensor<3x3xf32>)
  %1 = fuse.max_pool2d %x {window = array<i64: 3, 3>, strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>} : (tensor<1x4x4x2xf32>) -> tensor<1x4x4x2xf32>
  return %0, %1 : tensor<1x2x2x2xf32>, tensor<1x4x4x2xf32>
}

// -----

// A pool's argmax reads each window offset through a strided map; the first
// maximum wins (strictly greater replaces it, and so does the first NaN, which
// the pool returns).
// CHECK-DAG: #[[K0:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1 * 2, d2 * 2, d3)>
// CHECK-DAG: #[[K3:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1 * 2 + 1, d2 * 2 + 1, d3)>
// CHECK-LABEL: func @max_pool2d_indices
// CHECK-SAME: (%[[X:[^:]*]]: tensor<1x4x4x2xf32>)
func.func @max_pool2d_indices(%x: tensor<1x4x4x2xf32>) -> tensor<1x2x2x2xi8> {
  // CHECK: linalg.generic {indexing_maps = [#[[K0]], #{{.*}}, #{{.*}}, #[[K3]], #{{.*}}]
  // CHECK-SAME: ins(%[[X]], %[[X]], %[[X]], %[[X]] : {{.*}}) outs(%{{.*}} : tensor<1x2x2x2xi8>)
  // CHECK: ^bb0(%[[A0:.*]]: f32, %[[A1:.*]]: f32, %{{.*}}: f32, %[[A3:.*]]: f32, %{{.*}}: i8):
  // CHECK: %[[ORD0:.*]] = arith.cmpf ord, %[[A0]], %[[A0]] : f32
  // CHECK: %[[NAN1:.*]] = arith.cmpf uno, %[[A1]], %[[A1]] : f32
  // CHECK: %[[FIRST_NAN:.*]] = arith.andi %[[NAN1]], %[[ORD0]] : i1
  // CHECK: %[[GT1:.*]] = arith.cmpf ogt, %[[A1]], %[[A0]] : f32
  // CHECK: %[[G1:.*]] = arith.ori %[[GT1]], %[[FIRST_NAN]] : i1
  // CHECK: %[[M1:.*]] = arith.select %[[G1]], %[[A1]], %[[A0]] : f32
  // CHECK: arith.cmpf ogt
  // CHECK: arith.cmpf ogt, %[[A3]], %{{.*}} : f32
  // CHECK: %[[G3:.*]] = arith.ori
  // CHECK: %[[C3:.*]] = arith.constant 3 : i8
  // CHECK: %[[I3:.*]] = arith.select %[[G3]], %[[C3]], %{{.*}} : i8
  // CHECK: linalg.yield %[[I3]] : i8
  %0 = fuse.max_pool2d_indices %x {window = array<i64: 2, 2>} : (tensor<1x4x4x2xf32>) -> tensor<1x2x2x2xi8>
  return %0 : tensor<1x2x2x2xi8>
}

// -----

// With stride 1, offset 0 reads the input by bare loop indices, which set
// the loop ranges: it reads a slice of the output's extent.
// CHECK-LABEL: func @max_pool2d_indices_stride_1
// CHECK-SAME: (%[[X:[^:]*]]: tensor<1x3x3x2xf32>)
func.func @max_pool2d_indices_stride_1(%x: tensor<1x3x3x2xf32>) -> tensor<1x2x2x2xi8> {
  // CHECK-DAG: %[[S00:.*]] = tensor.extract_slice %[[X]][0, 0, 0, 0] [1, 2, 2, 2] [1, 1, 1, 1]
  // CHECK-DAG: %[[S01:.*]] = tensor.extract_slice %[[X]][0, 0, 0, 0] [1, 2, 3, 2] [1, 1, 1, 1]
  // CHECK-DAG: %[[S10:.*]] = tensor.extract_slice %[[X]][0, 0, 0, 0] [1, 3, 2, 2] [1, 1, 1, 1]
  // CHECK: linalg.generic
  // CHECK-SAME: ins(%[[S00]], %[[S01]], %[[S10]], %[[X]] :
  %0 = fuse.max_pool2d_indices %x {window = array<i64: 2, 2>, strides = array<i64: 1, 1>} : (tensor<1x3x3x2xf32>) -> tensor<1x2x2x2xi8>
  return %0 : tensor<1x2x2x2xi8>
}

// -----

// Windows that tile the input: one pass over dx viewed as [n, oh, kh, ow, kw, c].
// CHECK-DAG: #[[POOLED:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d3, d5)>
// CHECK-DAG: #[[ALL:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d4, d5)>
// CHECK-LABEL: func @max_pool2d_grad
// CHECK-SAME: (%[[G:[^:]*]]: tensor<1x2x2x2xf32>, %[[I:[^:]*]]: tensor<1x2x2x2xi8>
func.func @max_pool2d_grad(%g: tensor<1x2x2x2xf32>, %i: tensor<1x2x2x2xi8>, %x: tensor<1x4x4x2xf32>) -> tensor<1x4x4x2xf32> {
  // CHECK-NOT: linalg.fill
  // CHECK: %[[W:.*]] = linalg.generic {indexing_maps = [#[[POOLED]], #[[POOLED]], #[[ALL]]]
  // CHECK-SAME: ins(%[[G]], %[[I]] : {{.*}}) outs(%{{.*}} : tensor<1x2x2x2x2x2xf32>)
  // CHECK: ^bb0(%[[GV:.*]]: f32, %[[IV:.*]]: i8, %{{.*}}: f32):
  // CHECK-DAG: %[[KW:.*]] = linalg.index 4 : index
  // CHECK-DAG: %[[KH:.*]] = linalg.index 2 : index
  // CHECK: %[[ROW:.*]] = arith.muli %[[KH]], %c2 : index
  // CHECK: %[[K:.*]] = arith.addi %[[ROW]], %[[KW]] : index
  // CHECK: %[[K8:.*]] = arith.index_cast %[[K]] : index to i8
  // CHECK: %[[HIT:.*]] = arith.cmpi eq, %[[K8]], %[[IV]] : i8
  // CHECK: arith.select %[[HIT]], %[[GV]], %{{.*}} : f32
  // CHECK: %[[R:.*]] = tensor.collapse_shape %[[W]] {{\[}}[0], [1, 2], [3, 4], [5]]
  // CHECK: return %[[R]]
  %0 = fuse.max_pool2d_grad %g, %i, %x {window = array<i64: 2, 2>} : (tensor<1x2x2x2xf32>, tensor<1x2x2x2xi8>, tensor<1x4x4x2xf32>) -> tensor<1x4x4x2xf32>
  return %0 : tensor<1x4x4x2xf32>
}

// -----

// Windows that leave a row and a column out: each window offset's strided
// slice of zero-filled dx takes g where the indices name the offset.
// CHECK-LABEL: func @max_pool2d_grad_uncovered
// CHECK-SAME: (%[[G:[^:]*]]: tensor<1x2x2x2xf32>, %[[I:[^:]*]]: tensor<1x2x2x2xi8>
func.func @max_pool2d_grad_uncovered(%g: tensor<1x2x2x2xf32>, %i: tensor<1x2x2x2xi8>, %x: tensor<1x5x5x2xf32>) -> tensor<1x5x5x2xf32> {
  // CHECK: %[[Z:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x5x5x2xf32>)
  // CHECK: %[[S0:.*]] = tensor.extract_slice %[[Z]][0, 0, 0, 0] [1, 2, 2, 2] [1, 2, 2, 1]
  // CHECK: %[[P0:.*]] = linalg.generic {{.*}} ins(%[[G]], %[[I]] : {{.*}}) outs(%[[S0]] : tensor<1x2x2x2xf32>)
  // CHECK: ^bb0(%[[GV:.*]]: f32, %[[IV:.*]]: i8, %{{.*}}: f32):
  // CHECK: %[[HIT:.*]] = arith.cmpi eq, %[[IV]], %c0_i8 : i8
  // CHECK: %[[T:.*]] = arith.select %[[HIT]], %[[GV]], %{{.*}} : f32
  // CHECK-NEXT: linalg.yield %[[T]] : f32
  // CHECK: %[[R0:.*]] = tensor.insert_slice %[[P0]] into %[[Z]][0, 0, 0, 0] [1, 2, 2, 2] [1, 2, 2, 1]
  // CHECK: tensor.extract_slice %[[R0]][0, 0, 1, 0] [1, 2, 2, 2] [1, 2, 2, 1]
  // CHECK: %[[R3:.*]] = tensor.insert_slice %{{.*}}[0, 1, 1, 0] [1, 2, 2, 2] [1, 2, 2, 1]
  // CHECK: return %[[R3]]
  %0 = fuse.max_pool2d_grad %g, %i, %x {window = array<i64: 2, 2>} : (tensor<1x2x2x2xf32>, tensor<1x2x2x2xi8>, tensor<1x5x5x2xf32>) -> tensor<1x5x5x2xf32>
  return %0 : tensor<1x5x5x2xf32>
}

// -----

// Overlapping windows add into zeros; padding is cut off at the end.
// CHECK-LABEL: func @max_pool2d_grad_overlapping
func.func @max_pool2d_grad_overlapping(%g: tensor<1x4x4x2xf32>, %i: tensor<1x4x4x2xi8>, %x: tensor<1x4x4x2xf32>) -> tensor<1x4x4x2xf32> {
  // CHECK: %[[Z:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x6x6x2xf32>)
  // CHECK: tensor.extract_slice %[[Z]][0, 0, 0, 0] [1, 4, 4, 2] [1, 1, 1, 1]
  // CHECK: ^bb0(%[[GV:.*]]: f32, %[[IV:.*]]: i8, %[[OUT:.*]]: f32):
  // CHECK: %[[HIT:.*]] = arith.cmpi eq, %[[IV]], %c0_i8 : i8
  // CHECK: %[[T:.*]] = arith.select %[[HIT]], %[[GV]], %{{.*}} : f32
  // CHECK: arith.addf %[[OUT]], %[[T]] : f32
  // CHECK: arith.cmpi eq, %{{.*}}, %c8_i8 : i8
  // CHECK: %[[ALL:.*]] = tensor.insert_slice %{{.*}}[0, 2, 2, 0] [1, 4, 4, 2] [1, 1, 1, 1]
  // CHECK: %[[R:.*]] = tensor.extract_slice %[[ALL]][0, 1, 1, 0] [1, 4, 4, 2] [1, 1, 1, 1] : tensor<1x6x6x2xf32> to tensor<1x4x4x2xf32>
  // CHECK: return %[[R]]
  %0 = fuse.max_pool2d_grad %g, %i, %x {window = array<i64: 3, 3>, strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>} : (tensor<1x4x4x2xf32>, tensor<1x4x4x2xi8>, tensor<1x4x4x2xf32>) -> tensor<1x4x4x2xf32>
  return %0 : tensor<1x4x4x2xf32>
}

// -----

// Average pooling sums windows, then divides by a constant (H, W) tensor of
// counts read through the map (n, h, w, c) -> (h, w).
// CHECK-DAG: #[[$ID:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[$HW:.*]] = affine_map<(d0, d1, d2, d3) -> (d1, d2)>
// CHECK-LABEL: func @avg_pool2d
// CHECK-SAME: (%[[X:[^:]*]]: tensor<1x4x4x2xf32>)
func.func @avg_pool2d(%x: tensor<1x4x4x2xf32>) -> tensor<1x2x2x2xf32> {
  // CHECK-NOT: tensor.pad
  // CHECK: %[[SUM:.*]] = linalg.pooling_nhwc_sum {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>}
  // CHECK-SAME: ins(%[[X]], %{{.*}} : tensor<1x4x4x2xf32>, tensor<2x2xf32>)
  // CHECK: %[[COUNT:.*]] = arith.constant dense<4.000000e+00> : tensor<2x2xf32>
  // CHECK: linalg.generic {indexing_maps = [#[[$ID]], #[[$HW]], #[[$ID]]], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
  // CHECK-SAME: ins(%[[SUM]], %[[COUNT]] : tensor<1x2x2x2xf32>, tensor<2x2xf32>)
  // CHECK: arith.divf
  %0 = fuse.avg_pool2d %x {window = array<i64: 2, 2>} : (tensor<1x4x4x2xf32>) -> tensor<1x2x2x2xf32>
  return %0 : tensor<1x2x2x2xf32>
}

// -----

// With padding, each output divides by the number of real (unpadded) input
// elements in its window: 4 in the corners, 6 on the edges, 9 inside.
// CHECK-DAG: #[[$ID:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[$HW:.*]] = affine_map<(d0, d1, d2, d3) -> (d1, d2)>
// CHECK-LABEL: func @avg_pool2d_padded
// CHECK-SAME: (%[[X:[^:]*]]: tensor<1x4x4x2xf32>)
func.func @avg_pool2d_padded(%x: tensor<1x4x4x2xf32>) -> tensor<1x4x4x2xf32> {
  // CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
  // CHECK: %[[P:.*]] = tensor.pad %[[X]] low[0, 1, 1, 0] high[0, 1, 1, 0]
  // CHECK: tensor.yield %[[ZERO]] : f32
  // CHECK: %[[SUM:.*]] = linalg.pooling_nhwc_sum {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
  // CHECK-SAME: ins(%[[P]], %{{.*}} : tensor<1x6x6x2xf32>, tensor<3x3xf32>)
  // CHECK: %[[COUNT:.*]] = arith.constant dense<{{\[}}[4.000000e+00, 6.000000e+00, 6.000000e+00, 4.000000e+00], [6.000000e+00, 9.000000e+00, 9.000000e+00, 6.000000e+00], [6.000000e+00, 9.000000e+00, 9.000000e+00, 6.000000e+00], [4.000000e+00, 6.000000e+00, 6.000000e+00, 4.000000e+00]]> : tensor<4x4xf32>
  // CHECK: linalg.generic {indexing_maps = [#[[$ID]], #[[$HW]], #[[$ID]]]
  // CHECK-SAME: ins(%[[SUM]], %[[COUNT]] : tensor<1x4x4x2xf32>, tensor<4x4xf32>)
  // CHECK: ^bb0(%[[S:.*]]: f32, %[[C:.*]]: f32, %{{.*}}: f32):
  // CHECK-NEXT: arith.divf %[[S]], %[[C]] : f32
  %0 = fuse.avg_pool2d %x {window = array<i64: 3, 3>, strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>} : (tensor<1x4x4x2xf32>) -> tensor<1x4x4x2xf32>
  return %0 : tensor<1x4x4x2xf32>
}

// -----

// CHECK-DAG: #[[$ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[$COLS:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func @reduce_sum
// CHECK-SAME: (%[[X:[^:]*]]: tensor<4x10xf32>)
func.func @reduce_sum(%x: tensor<4x10xf32>) -> tensor<10xf32> {
  // CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
  // CHECK: %[[ACC:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%{{.*}} : tensor<10xf32>)
  // CHECK: %[[R:.*]] = linalg.generic {indexing_maps = [#[[$ID]], #[[$COLS]]], iterator_types = ["reduction", "parallel"]}
  // CHECK-SAME: ins(%[[X]] : tensor<4x10xf32>) outs(%[[ACC]] : tensor<10xf32>)
  // CHECK: ^bb0(%[[IN:.*]]: f32, %[[OUT:.*]]: f32):
  // CHECK-NEXT: %[[S:.*]] = arith.addf %[[OUT]], %[[IN]] : f32
  // CHECK-NEXT: linalg.yield %[[S]] : f32
  // CHECK: return %[[R]]
  %0 = fuse.reduce_sum %x {axes = array<i64: 0>} : (tensor<4x10xf32>) -> tensor<10xf32>
  return %0 : tensor<10xf32>
}

// -----

// Mean divides by the reduced element count; keepdims re-inserts the reduced
// dim with tensor.expand_shape.
// CHECK-DAG: #[[$ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[$ROWS:.*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func @reduce_mean_keepdims
// CHECK-SAME: (%[[X:[^:]*]]: tensor<4x10xf32>)
func.func @reduce_mean_keepdims(%x: tensor<4x10xf32>) -> tensor<4x1xf32> {
  // CHECK: %[[SUM:.*]] = linalg.generic {indexing_maps = [#[[$ID]], #[[$ROWS]]], iterator_types = ["parallel", "reduction"]}
  // CHECK-SAME: ins(%[[X]] : tensor<4x10xf32>)
  // CHECK: arith.addf
  // CHECK: %[[MEAN:.*]] = linalg.generic
  // CHECK-SAME: ins(%[[SUM]] : tensor<4xf32>)
  // CHECK: %[[N:.*]] = arith.constant 1.000000e+01 : f32
  // CHECK-NEXT: arith.divf %{{.*}}, %[[N]] : f32
  // CHECK: %[[R:.*]] = tensor.expand_shape %[[MEAN]] {{\[}}[0, 1]] output_shape [4, 1] : tensor<4xf32> into tensor<4x1xf32>
  // CHECK: return %[[R]]
  %0 = fuse.reduce_mean %x {axes = array<i64: 1>, keepdims} : (tensor<4x10xf32>) -> tensor<4x1xf32>
  return %0 : tensor<4x1xf32>
}

// -----

// Integer max starts from INT_MIN and uses maxsi; reducing every axis gives a
// 0-d result.
// CHECK-DAG: #[[$ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[$NONE:.*]] = affine_map<(d0, d1) -> ()>
// CHECK-LABEL: func @reduce_max_int
func.func @reduce_max_int(%i: tensor<4x5xi64>) -> (tensor<i64>, tensor<4xi64>) {
  // CHECK: %[[MIN:.*]] = arith.constant -9223372036854775808 : i64
  // CHECK: %[[ACC:.*]] = linalg.fill ins(%[[MIN]] : i64) outs(%{{.*}} : tensor<i64>)
  // CHECK: linalg.generic {indexing_maps = [#[[$ID]], #[[$NONE]]], iterator_types = ["reduction", "reduction"]}
  // CHECK-SAME: outs(%[[ACC]] : tensor<i64>)
  // CHECK: arith.maxsi %{{.*}}, %{{.*}} : i64
  %0 = fuse.reduce_max %i {axes = array<i64: 0, 1>} : (tensor<4x5xi64>) -> tensor<i64>
  // CHECK: %[[Z:.*]] = arith.constant 0 : i64
  // CHECK: linalg.fill ins(%[[Z]] : i64)
  // CHECK: linalg.generic
  // CHECK-SAME: iterator_types = ["parallel", "reduction"]
  // CHECK: arith.addi %{{.*}}, %{{.*}} : i64
  %1 = fuse.reduce_sum %i {axes = array<i64: 1>} : (tensor<4x5xi64>) -> tensor<4xi64>
  return %0, %1 : tensor<i64>, tensor<4xi64>
}

// -----

// Unsorted axes with keepdims: the kept dim absorbs the reduced ones.
// CHECK-DAG: #[[$ID:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[$MID:.*]] = affine_map<(d0, d1, d2) -> (d1)>
// CHECK-LABEL: func @reduce_max_keepdims
func.func @reduce_max_keepdims(%z: tensor<2x3x4xf32>, %y: tensor<4x5xf32>) -> (tensor<1x3x1xf32>, tensor<1x1xf32>) {
  // CHECK: %[[NEG_INF:.*]] = arith.constant 0xFF800000 : f32
  // CHECK: linalg.fill ins(%[[NEG_INF]] : f32) outs(%{{.*}} : tensor<3xf32>)
  // CHECK: %[[M:.*]] = linalg.generic {indexing_maps = [#[[$ID]], #[[$MID]]], iterator_types = ["reduction", "parallel", "reduction"]}
  // CHECK: arith.maximumf
  // CHECK: tensor.expand_shape %[[M]] {{\[}}[0, 1, 2]] output_shape [1, 3, 1] : tensor<3xf32> into tensor<1x3x1xf32>
  %0 = fuse.reduce_max %z {axes = array<i64: 2, 0>, keepdims} : (tensor<2x3x4xf32>) -> tensor<1x3x1xf32>
  // CHECK: %[[S:.*]] = linalg.generic
  // CHECK-SAME: iterator_types = ["reduction", "reduction"]
  // CHECK: tensor.expand_shape %[[S]] [] output_shape [1, 1] : tensor<f32> into tensor<1x1xf32>
  %1 = fuse.reduce_sum %y {axes = array<i64: 0, 1>, keepdims} : (tensor<4x5xf32>) -> tensor<1x1xf32>
  return %0, %1 : tensor<1x3x1xf32>, tensor<1x1xf32>
}

// -----

// softmax(x) = exp(x - max) / sum(exp(x - max)): two reductions and one
// element-wise generic reading the row statistics through (d0).
// CHECK-DAG: #[[$ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[$ROWS:.*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func @softmax
// CHECK-SAME: (%[[X:[^:]*]]: tensor<4x10xf32>)
func.func @softmax(%x: tensor<4x10xf32>) -> tensor<4x10xf32> {
  // CHECK: %[[NEG_INF:.*]] = arith.constant 0xFF800000 : f32
  // CHECK: %[[MAX_INIT:.*]] = linalg.fill ins(%[[NEG_INF]] : f32)
  // CHECK: %[[MAX:.*]] = linalg.generic {indexing_maps = [#[[$ID]], #[[$ROWS]]], iterator_types = ["parallel", "reduction"]}
  // CHECK-SAME: ins(%[[X]] : tensor<4x10xf32>) outs(%[[MAX_INIT]] : tensor<4xf32>)
  // CHECK: arith.maximumf
  // CHECK: %[[SUM:.*]] = linalg.generic {indexing_maps = [#[[$ID]], #[[$ROWS]], #[[$ROWS]]], iterator_types = ["parallel", "reduction"]}
  // CHECK-SAME: ins(%[[X]], %[[MAX]] : tensor<4x10xf32>, tensor<4xf32>)
  // CHECK: %[[D:.*]] = arith.subf
  // CHECK-NEXT: %[[E:.*]] = math.exp %[[D]]
  // CHECK-NEXT: arith.addf %{{.*}}, %[[E]]
  // CHECK: %[[R:.*]] = linalg.generic {indexing_maps = [#[[$ID]], #[[$ROWS]], #[[$ROWS]], #[[$ID]]], iterator_types = ["parallel", "parallel"]}
  // CHECK-SAME: ins(%[[X]], %[[MAX]], %[[SUM]] : tensor<4x10xf32>, tensor<4xf32>, tensor<4xf32>)
  // CHECK: ^bb0(%[[IN:.*]]: f32, %[[M:.*]]: f32, %[[S:.*]]: f32, %{{.*}}: f32):
  // CHECK-NEXT: %[[D:.*]] = arith.subf %[[IN]], %[[M]] : f32
  // CHECK-NEXT: %[[E:.*]] = math.exp %[[D]] : f32
  // CHECK-NEXT: %[[Q:.*]] = arith.divf %[[E]], %[[S]] : f32
  // CHECK-NEXT: linalg.yield %[[Q]] : f32
  // CHECK: return %[[R]]
  %0 = fuse.softmax %x : tensor<4x10xf32>
  return %0 : tensor<4x10xf32>
}

// -----

// log_softmax along axis 0: x - max - log(sum(exp(x - max))), statistics
// indexed by (d1).
// CHECK-DAG: #[[$ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[$COLS:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func @log_softmax
func.func @log_softmax(%x: tensor<4x10xf32>) -> tensor<4x10xf32> {
  // CHECK: %[[MAX:.*]] = linalg.generic {indexing_maps = [#[[$ID]], #[[$COLS]]], iterator_types = ["reduction", "parallel"]}
  // CHECK: arith.maximumf
  // CHECK: %[[SUM:.*]] = linalg.generic {indexing_maps = [#[[$ID]], #[[$COLS]], #[[$COLS]]], iterator_types = ["reduction", "parallel"]}
  // CHECK: math.exp
  // CHECK: linalg.generic {indexing_maps = [#[[$ID]], #[[$COLS]], #[[$COLS]], #[[$ID]]], iterator_types = ["parallel", "parallel"]}
  // CHECK-SAME: ins(%{{.*}}, %[[MAX]], %[[SUM]] : tensor<4x10xf32>, tensor<10xf32>, tensor<10xf32>)
  // CHECK: ^bb0(%[[IN:.*]]: f32, %[[M:.*]]: f32, %[[S:.*]]: f32, %{{.*}}: f32):
  // CHECK-NEXT: %[[D:.*]] = arith.subf %[[IN]], %[[M]] : f32
  // CHECK-NEXT: %[[L:.*]] = math.log %[[S]] : f32
  // CHECK-NEXT: %[[R:.*]] = arith.subf %[[D]], %[[L]] : f32
  // CHECK-NEXT: linalg.yield %[[R]] : f32
  %0 = fuse.log_softmax %x {axis = 0} : tensor<4x10xf32>
  return %0 : tensor<4x10xf32>
}

// -----

// mean_i(max_i + log(sum_c exp(x_ic - max_i)) - x_{i,label_i}); the label's
// logit is picked by comparing linalg.index 1 with the label.
// CHECK-DAG: #[[$ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[$ROWS:.*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-DAG: #[[$VEC:.*]] = affine_map<(d0) -> (d0)>
// CHECK-DAG: #[[$TO_SCALAR:.*]] = affine_map<(d0) -> ()>
// CHECK-LABEL: func @softmax_cross_entropy
// CHECK-SAME: (%[[X:[^:]*]]: tensor<4x10xf32>, %[[Y:[^:]*]]: tensor<4xi32>)
func.func @softmax_cross_entropy(%x: tensor<4x10xf32>, %y: tensor<4xi32>) -> tensor<f32> {
  // CHECK: %[[MAX:.*]] = linalg.generic {indexing_maps = [#[[$ID]], #[[$ROWS]]], iterator_types = ["parallel", "reduction"]}
  // CHECK: arith.maximumf
  // CHECK: %[[SUM:.*]] = linalg.generic {indexing_maps = [#[[$ID]], #[[$ROWS]], #[[$ROWS]]], iterator_types = ["parallel", "reduction"]}
  // CHECK: math.exp
  // CHECK: %[[PICKED:.*]] = linalg.generic {indexing_maps = [#[[$ID]], #[[$ROWS]], #[[$ROWS]]], iterator_types = ["parallel", "reduction"]}
  // CHECK-SAME: ins(%[[X]], %[[Y]] : tensor<4x10xf32>, tensor<4xi32>)
  // CHECK: ^bb0(%[[LOGIT:.*]]: f32, %[[LABEL:.*]]: i32, %[[ACC:.*]]: f32):
  // CHECK-NEXT: %[[C:.*]] = linalg.index 1 : index
  // CHECK-NEXT: %[[L:.*]] = arith.index_cast %[[LABEL]] : i32 to index
  // CHECK-NEXT: %[[HIT:.*]] = arith.cmpi eq, %[[C]], %[[L]] : index
  // CHECK-NEXT: %[[Z:.*]] = arith.constant 0.000000e+00 : f32
  // CHECK-NEXT: %[[V:.*]] = arith.select %[[HIT]], %[[LOGIT]], %[[Z]] : f32
  // CHECK-NEXT: arith.addf %[[ACC]], %[[V]] : f32
  // A label outside [0, 10) makes its row NaN: one unsigned compare (a
  // negative label is huge) and a select per row.
  // CHECK: %[[TOTAL:.*]] = linalg.generic {indexing_maps = [#[[$VEC]], #[[$VEC]], #[[$VEC]], #[[$VEC]], #[[$TO_SCALAR]]], iterator_types = ["reduction"]}
  // CHECK-SAME: ins(%[[MAX]], %[[SUM]], %[[PICKED]], %[[Y]] : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xi32>) outs(%{{.*}} : tensor<f32>)
  // CHECK: ^bb0(%[[M:.*]]: f32, %[[S:.*]]: f32, %[[P:.*]]: f32, %[[YL:.*]]: i32, %[[A:.*]]: f32):
  // CHECK-NEXT: %[[GAP:.*]] = arith.subf %[[M]], %[[P]] : f32
  // CHECK-NEXT: %[[LOG:.*]] = math.log %[[S]] : f32
  // CHECK-NEXT: %[[NLL:.*]] = arith.addf %[[GAP]], %[[LOG]] : f32
  // CHECK-NEXT: %[[NAN:.*]] = arith.constant 0x7FC00000 : f32
  // CHECK-NEXT: %[[YI:.*]] = arith.index_cast %[[YL]] : i32 to index
  // CHECK-NEXT: %[[TEN:.*]] = arith.constant 10 : index
  // CHECK-NEXT: %[[OK:.*]] = arith.cmpi ult, %[[YI]], %[[TEN]] : index
  // CHECK-NEXT: %[[ROW:.*]] = arith.select %[[OK]], %[[NLL]], %[[NAN]] : f32
  // CHECK-NEXT: arith.addf %[[A]], %[[ROW]] : f32
  // CHECK: %[[MEAN:.*]] = linalg.generic
  // CHECK-SAME: ins(%[[TOTAL]] : tensor<f32>)
  // CHECK: %[[N:.*]] = arith.constant 4.000000e+00 : f32
  // CHECK-NEXT: arith.divf %{{.*}}, %[[N]] : f32
  // CHECK: return %[[MEAN]] : tensor<f32>
  %0 = fuse.softmax_cross_entropy %x, %y : (tensor<4x10xf32>, tensor<4xi32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// CHECK-DAG: #[[$ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[$NONE:.*]] = affine_map<(d0, d1) -> ()>
// CHECK-LABEL: func @mse_loss
// CHECK-SAME: (%[[P:[^:]*]]: tensor<4x10xf32>, %[[T:[^:]*]]: tensor<4x10xf32>)
func.func @mse_loss(%p: tensor<4x10xf32>, %t: tensor<4x10xf32>) -> tensor<f32> {
  // CHECK: %[[TOTAL:.*]] = linalg.generic {indexing_maps = [#[[$ID]], #[[$ID]], #[[$NONE]]], iterator_types = ["reduction", "reduction"]}
  // CHECK-SAME: ins(%[[P]], %[[T]] : tensor<4x10xf32>, tensor<4x10xf32>) outs(%{{.*}} : tensor<f32>)
  // CHECK: ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32, %[[ACC:.*]]: f32):
  // CHECK-NEXT: %[[D:.*]] = arith.subf %[[A]], %[[B]] : f32
  // CHECK-NEXT: %[[SQ:.*]] = arith.mulf %[[D]], %[[D]] : f32
  // CHECK-NEXT: arith.addf %[[ACC]], %[[SQ]] : f32
  // CHECK: linalg.generic
  // CHECK-SAME: ins(%[[TOTAL]] : tensor<f32>)
  // CHECK: %[[N:.*]] = arith.constant 4.000000e+01 : f32
  // CHECK-NEXT: arith.divf %{{.*}}, %[[N]] : f32
  %0 = fuse.mse_loss %p, %t : (tensor<4x10xf32>, tensor<4x10xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// Dropout recomputes its mask from (seed, step, row-major element index):
// the index comes from linalg.index, the 0-d step is read through a map to ().
// Kept elements are scaled by 1 / (1 - rate) = 1.25; the keep threshold is
// 0.2 * 2^24 on the top 24 bits of the hash.
// CHECK-DAG: #[[$ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[$NONE:.*]] = affine_map<(d0, d1) -> ()>
// CHECK-LABEL: func @dropout
// CHECK-SAME: (%[[X:[^:]*]]: tensor<4x10xf32>, %[[STEP:[^:]*]]: tensor<i64>)
func.func @dropout(%x: tensor<4x10xf32>, %step: tensor<i64>) -> tensor<4x10xf32> {
  // CHECK: linalg.generic {indexing_maps = [#[[$ID]], #[[$NONE]], #[[$ID]]], iterator_types = ["parallel", "parallel"]}
  // CHECK-SAME: ins(%[[X]], %[[STEP]] : tensor<4x10xf32>, tensor<i64>)
  // CHECK: ^bb0(%[[IN:.*]]: f32, %[[S:.*]]: i64, %{{.*}}: f32):
  // CHECK-DAG: linalg.index 0 : index
  // CHECK-DAG: linalg.index 1 : index
  // CHECK-DAG: arith.constant 10 : index
  // CHECK: %[[INDEX:.*]] = arith.index_castui %{{.*}} : index to i64
  // The per-step key: mix(mix(seed = 7) ^ step).
  // CHECK: %[[SEED:.*]] = arith.constant 7191089600892374487 : i64
  // CHECK-NEXT: arith.xori %[[SEED]], %[[S]] : i64
  // The element's draw: the top 24 bits of mix(key ^ index).
  // CHECK: %[[C40:.*]] = arith.constant 40 : i64
  // CHECK: arith.xori %{{.*}}, %[[INDEX]] : i64
  // CHECK: %[[DRAW:.*]] = arith.shrui %{{.*}}, %[[C40]] : i64
  // CHECK-NEXT: %[[THRESHOLD:.*]] = arith.constant 3355443 : i64
  // CHECK-NEXT: %[[KEEP:.*]] = arith.cmpi uge, %[[DRAW]], %[[THRESHOLD]] : i64
  // CHECK-NEXT: %[[SCALE:.*]] = arith.constant 1.250000e+00 : f32
  // CHECK-NEXT: %[[SCALED:.*]] = arith.mulf %[[IN]], %[[SCALE]] : f32
  // CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
  // CHECK-NEXT: %[[R:.*]] = arith.select %[[KEEP]], %[[SCALED]], %[[ZERO]] : f32
  // CHECK-NEXT: linalg.yield %[[R]] : f32
  %0 = fuse.dropout %x, %step {rate = 0.2 : f32, seed = 7 : i64} : tensor<4x10xf32>
  return %0 : tensor<4x10xf32>
}

// -----

// With an offset of o rows, element (i, j) draws the mask of element
// (o + i, j) of a larger tensor: o * 10 is added to its index.
// CHECK-LABEL: func @dropout_offset
// CHECK-SAME: (%[[X:[^:]*]]: tensor<4x10xf32>, %[[STEP:[^:]*]]: tensor<i64>, %[[OFF:[^:]*]]: tensor<i64>)
func.func @dropout_offset(%x: tensor<4x10xf32>, %step: tensor<i64>, %o: tensor<i64>) -> tensor<4x10xf32> {
  // CHECK: linalg.generic
  // CHECK-SAME: ins(%[[X]], %[[STEP]], %[[OFF]] : tensor<4x10xf32>, tensor<i64>, tensor<i64>)
  // CHECK: ^bb0(%{{.*}}: f32, %{{.*}}: i64, %[[O:.*]]: i64, %{{.*}}: f32):
  // CHECK: %[[LOCAL:.*]] = arith.index_castui %{{.*}} : index to i64
  // CHECK: %[[ROW:.*]] = arith.constant 10 : i64
  // CHECK: %[[SKIP:.*]] = arith.muli %[[O]], %[[ROW]] : i64
  // CHECK: %[[INDEX:.*]] = arith.addi %[[LOCAL]], %[[SKIP]] : i64
  // CHECK: arith.xori %{{.*}}, %[[INDEX]] : i64
  %0 = fuse.dropout %x, %step offset %o {rate = 0.2 : f32, seed = 7 : i64} : tensor<4x10xf32>
  return %0 : tensor<4x10xf32>
}

// -----

// Non-fuse ops are left alone; the result feeds them unchanged.
// CHECK-LABEL: func @mixed
func.func @mixed(%x: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: %[[R:.*]] = linalg.generic
  // CHECK: math.exp
  // CHECK: %[[C:.*]] = tensor.cast %[[R]] : tensor<4xf32> to tensor<?xf32>
  // CHECK: tensor.cast %[[C]] : tensor<?xf32> to tensor<4xf32>
  %0 = fuse.exp %x : tensor<4xf32>
  %1 = tensor.cast %0 : tensor<4xf32> to tensor<?xf32>
  %2 = tensor.cast %1 : tensor<?xf32> to tensor<4xf32>
  return %2 : tensor<4xf32>
}

// -----

// A static full_like folds to a constant before it is lowered.
// CHECK-LABEL: func @backward_ops
// CHECK: arith.constant dense<1.000000e+00> : tensor<4x10xf32>
// CHECK: tensor.expand_shape %{{.*}} : tensor<40xf32> into tensor<4x1x10xf32>
// The cross-entropy gradient: each row's scale grad / batch, NaN where the
// row's label is outside [0, 10), then one pass over the logits.
// CHECK: %[[SCALES:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<4xi32>, tensor<f32>) outs(%{{.*}} : tensor<4xf32>)
// CHECK: arith.divf %{{.*}}, %{{.*}} : f32
// CHECK: arith.cmpi ult
// CHECK: arith.select
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[SCALES]] : tensor<4x10xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xi32>, tensor<4xf32>)
// CHECK: math.exp
// CHECK: linalg.index 1
// CHECK: arith.cmpi eq
// CHECK-NOT: arith.cmpi ult
// CHECK: arith.mulf
func.func @backward_ops(%x: tensor<4x10xf32>, %y: tensor<4xi32>, %g: tensor<f32>) -> (tensor<4x10xf32>, tensor<4x1x10xf32>, tensor<4x10xf32>) {
  %0 = fuse.full_like %x {value = 1.0 : f64} : tensor<4x10xf32>
  %1 = fuse.expand_dims %x {axes = array<i64: 1>} : (tensor<4x10xf32>) -> tensor<4x1x10xf32>
  %2 = fuse.softmax_cross_entropy_grad %x, %y, %g : (tensor<4x10xf32>, tensor<4xi32>, tensor<f32>) -> tensor<4x10xf32>
  return %0, %1, %2 : tensor<4x10xf32>, tensor<4x1x10xf32>, tensor<4x10xf32>
}

// -----

// With stride 1, dX is a convolution of dY padded by the filter's reach
// minus the forward padding, with the filter flipped and its channels
// swapped.
// CHECK-DAG: #[[FLIP:.*]] = affine_map<(d0, d1, d2, d3) -> (-d0 + 2, -d1 + 2, d3, d2)>
// CHECK-LABEL: func @conv2d_input_grad
// CHECK: %[[G:.*]] = tensor.pad %{{.*}} low[0, 2, 2, 0] high[0, 2, 2, 0]
// CHECK: %[[K:.*]] = linalg.generic {indexing_maps = [#[[FLIP]], {{.*}}]{{.*}} ins(%{{.*}} : tensor<3x3x3x4xf32>) outs(%{{.*}} : tensor<3x3x4x3xf32>)
// CHECK: linalg.conv_2d_nhwc_hwcf {{.*}} ins(%[[G]], %[[K]] : tensor<2x10x10x4xf32>, tensor<3x3x4x3xf32>) {{.*}} -> tensor<2x8x8x3xf32>
func.func @conv2d_input_grad(%g: tensor<2x6x6x4xf32>, %k: tensor<3x3x3x4xf32>, %x: tensor<2x8x8x3xf32>) -> tensor<2x8x8x3xf32> {
  %0 = fuse.conv2d_input_grad %g, %k, %x : (tensor<2x6x6x4xf32>, tensor<3x3x3x4xf32>, tensor<2x8x8x3xf32>) -> tensor<2x8x8x3xf32>
  return %0 : tensor<2x8x8x3xf32>
}

// -----

// Strided: a reduction over the window (no convolution form yet).
// CHECK-LABEL: func @conv2d_input_grad_strided
// CHECK-NOT: linalg.conv_2d
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]
func.func @conv2d_input_grad_strided(%g: tensor<2x4x4x4xf32>, %k: tensor<3x3x3x4xf32>, %x: tensor<2x8x8x3xf32>) -> tensor<2x8x8x3xf32> {
  %0 = fuse.conv2d_input_grad %g, %k, %x {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 0>} : (tensor<2x4x4x4xf32>, tensor<3x3x3x4xf32>, tensor<2x8x8x3xf32>) -> tensor<2x8x8x3xf32>
  return %0 : tensor<2x8x8x3xf32>
}

// -----

// dK is one contraction over (kh, kw, c, f | n, oh, ow) that reads the
// padded X and dY as they are stored (no transposes): X's rows and columns
// at the output position times the stride plus the tap.
// CHECK-DAG: #[[XMAP:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d5 * 2 + d0, d6 * 2 + d1, d2)>
// CHECK-DAG: #[[GMAP:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d5, d6, d3)>
// CHECK-DAG: #[[KMAP:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func @conv2d_filter_grad
// CHECK-NOT: linalg.transpose
// CHECK: %[[X:.*]] = tensor.pad %{{.*}} low[0, 1, 1, 0] high[0, 1, 0, 0]
// CHECK: linalg.generic {indexing_maps = [#[[XMAP]], #[[GMAP]], #[[KMAP]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%[[X]], %{{.*}} : tensor<2x10x9x3xf32>, tensor<2x4x4x4xf32>)
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK-NOT: linalg.transpose
func.func @conv2d_filter_grad(%x: tensor<2x8x8x3xf32>, %g: tensor<2x4x4x4xf32>, %k: tensor<3x3x3x4xf32>) -> tensor<3x3x3x4xf32> {
  %0 = fuse.conv2d_filter_grad %x, %g, %k {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 0>} : (tensor<2x8x8x3xf32>, tensor<2x4x4x4xf32>, tensor<3x3x3x4xf32>) -> tensor<3x3x3x4xf32>
  return %0 : tensor<3x3x3x4xf32>
}

// -----

// The bf16 policy's gradients: bf16 factors (padded with bf16 zeros), f32
// sums. The input gradient's convolution and the filter gradient's
// contraction read the bf16 tensors and widen them in their bodies
// (fuse-widen-bf16-operands then widens each once); the strided input
// gradient, whose gathers no pass widens, reads f32 copies widened here.
// CHECK-LABEL: func @conv2d_grads_bf16
// CHECK: %[[G:.*]] = tensor.pad %arg0 low[0, 2, 2, 0] high[0, 2, 2, 0]
// CHECK: tensor.yield %{{.*}} : bf16
// CHECK: %[[K:.*]] = linalg.generic {{.*}} ins(%arg1 : tensor<3x3x3x4xbf16>) outs(%{{.*}} : tensor<3x3x4x3xbf16>)
// CHECK: linalg.conv_2d_nhwc_hwcf {{.*}} ins(%[[G]], %[[K]] : tensor<2x10x10x4xbf16>, tensor<3x3x4x3xbf16>) outs(%{{.*}} : tensor<2x8x8x3xf32>)
// CHECK: %[[GW:.*]] = linalg.generic {{.*}} ins(%arg3 : tensor<2x4x4x4xbf16>) outs(%{{.*}} : tensor<2x4x4x4xf32>)
// CHECK: arith.extf %{{.*}} : bf16 to f32
// CHECK: %[[KW:.*]] = linalg.generic {{.*}} ins(%arg1 : tensor<3x3x3x4xbf16>) outs(%{{.*}} : tensor<3x3x3x4xf32>)
// CHECK: arith.extf %{{.*}} : bf16 to f32
// CHECK: linalg.generic {{.*}} ins(%[[KW]] : tensor<3x3x3x4xf32>) outs(%{{.*}} : tensor<2x8x8x3xf32>)
// CHECK: tensor.extract %[[GW]]
// CHECK: %[[X:.*]] = tensor.pad %arg2 low[0, 1, 1, 0] high[0, 1, 0, 0]
// CHECK: tensor.yield %{{.*}} : bf16
// CHECK: linalg.generic {{.*}} ins(%[[X]], %arg3 : tensor<2x10x9x3xbf16>, tensor<2x4x4x4xbf16>) outs(%{{.*}} : tensor<3x3x3x4xf32>)
// CHECK-NEXT: ^bb0(%[[A:.*]]: bf16, %[[B:.*]]: bf16, %[[C:.*]]: f32):
// CHECK-DAG: %[[AW:.*]] = arith.extf %[[A]] : bf16 to f32
// CHECK-DAG: %[[BW:.*]] = arith.extf %[[B]] : bf16 to f32
// CHECK: %[[P:.*]] = arith.mulf %[[AW]], %[[BW]] : f32
// CHECK: arith.addf %[[C]], %[[P]] : f32
func.func @conv2d_grads_bf16(%g: tensor<2x6x6x4xbf16>, %k: tensor<3x3x3x4xbf16>, %x: tensor<2x8x8x3xbf16>, %gs: tensor<2x4x4x4xbf16>, %xf: tensor<2x8x8x3xf32>, %kf: tensor<3x3x3x4xf32>) -> (tensor<2x8x8x3xf32>, tensor<2x8x8x3xf32>, tensor<3x3x3x4xf32>) {
  %0 = fuse.conv2d_input_grad %g, %k, %xf : (tensor<2x6x6x4xbf16>, tensor<3x3x3x4xbf16>, tensor<2x8x8x3xf32>) -> tensor<2x8x8x3xf32>
  %1 = fuse.conv2d_input_grad %gs, %k, %xf {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 0>} : (tensor<2x4x4x4xbf16>, tensor<3x3x3x4xbf16>, tensor<2x8x8x3xf32>) -> tensor<2x8x8x3xf32>
  %2 = fuse.conv2d_filter_grad %x, %gs, %kf {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 0>} : (tensor<2x8x8x3xbf16>, tensor<2x4x4x4xbf16>, tensor<3x3x3x4xf32>) -> tensor<3x3x3x4xf32>
  return %0, %1, %2 : tensor<2x8x8x3xf32>, tensor<2x8x8x3xf32>, tensor<3x3x3x4xf32>
}

// -----

// A gather reads rows inside a parallel loop over the result, clamping the
// index and giving NaN where it is out of range.
// CHECK-LABEL: func @gather
// CHECK-SAME: (%[[T:[^:]*]]: tensor<16x8xf32>, %[[I:[^:]*]]: tensor<2x5xi32>)
func.func @gather(%t: tensor<16x8xf32>, %i: tensor<2x5xi32>) -> tensor<2x5x8xf32> {
  // CHECK: linalg.generic
  // CHECK-SAME: iterator_types = ["parallel", "parallel", "parallel"]
  // CHECK-SAME: ins(%[[I]] : tensor<2x5xi32>)
  // CHECK: arith.index_cast
  // CHECK: arith.cmpi sge
  // CHECK: arith.cmpi slt
  // CHECK: %[[J:.*]] = linalg.index 2 : index
  // CHECK: tensor.extract %[[T]][%{{.*}}, %[[J]]] : tensor<16x8xf32>
  // CHECK: arith.constant 0x7FC00000 : f32
  // CHECK: arith.select
  %0 = fuse.gather %t, %i : (tensor<16x8xf32>, tensor<2x5xi32>) -> tensor<2x5x8xf32>
  return %0 : tensor<2x5x8xf32>
}

// -----

// scatter_add: a zero table, then one row update per index in order.
// CHECK-LABEL: func @scatter_add
func.func @scatter_add(%g: tensor<2x5x8xf32>, %i: tensor<2x5xi32>, %t: tensor<16x8xf32>) -> tensor<16x8xf32> {
  // CHECK: linalg.fill
  // CHECK: %[[C10:.*]] = arith.constant 10 : index
  // CHECK: scf.for %[[P:.*]] = %{{.*}} to %[[C10]] step %{{.*}} iter_args(%[[ACC:.*]] = %{{.*}}) -> (tensor<16x8xf32>)
  // CHECK: tensor.extract %{{.*}}[%[[P]]] : tensor<10xi32>
  // CHECK: tensor.extract_slice %[[ACC]][%{{.*}}, 0] [1, 8] [1, 1]
  // CHECK: tensor.extract_slice %{{.*}}[%[[P]], 0] [1, 8] [1, 1]
  // CHECK: linalg.generic
  // CHECK: arith.addf
  // CHECK: tensor.insert_slice %{{.*}} into %[[ACC]][%{{.*}}, 0] [1, 8] [1, 1]
  // CHECK: scf.yield
  %0 = fuse.scatter_add %g, %i, %t : (tensor<2x5x8xf32>, tensor<2x5xi32>, tensor<16x8xf32>) -> tensor<16x8xf32>
  return %0 : tensor<16x8xf32>
}

// -----

// A slice is a copy of a strided extract_slice; a pad without interior
// padding is tensor.pad; a concat copies each input into its slice.
// CHECK-LABEL: func @slice_pad_concat
// CHECK-SAME: (%[[X:[^:]*]]: tensor<4x8xf32>
func.func @slice_pad_concat(%x: tensor<4x8xf32>, %y: tensor<4x2xf32>) -> (tensor<3x4xf32>, tensor<5x10xf32>, tensor<4x10xf32>, tensor<4x3xf32>) {
  // CHECK: %[[S:.*]] = tensor.extract_slice %[[X]][1, 1] [3, 4] [1, 2] : tensor<4x8xf32> to tensor<3x4xf32>
  // CHECK: linalg.generic {{.*}} ins(%[[S]] : tensor<3x4xf32>)
  %0 = fuse.slice %x {offsets = array<i64: 1, 1>, strides = array<i64: 1, 2>} : (tensor<4x8xf32>) -> tensor<3x4xf32>
  // A dim read from offset 0 with stride 1 (a prefix): valid linalg too.
  // CHECK: %[[P:.*]] = tensor.extract_slice %[[X]][0, 0] [4, 3] [1, 1] : tensor<4x8xf32> to tensor<4x3xf32>
  // CHECK: linalg.generic {{.*}} ins(%[[P]] : tensor<4x3xf32>)
  %3 = fuse.slice %x {offsets = array<i64: 0, 0>} : (tensor<4x8xf32>) -> tensor<4x3xf32>
  // CHECK: tensor.pad %{{.*}} low[1, 0] high[0, 2]
  // CHECK: tensor.yield %{{.*}} : f32
  %1 = fuse.pad %x {low = array<i64: 1, 0>, high = array<i64: 0, 2>, value = 3.0 : f64} : (tensor<4x8xf32>) -> tensor<5x10xf32>
  // CHECK: %[[E:.*]] = tensor.empty() : tensor<4x10xf32>
  // CHECK: %[[S0:.*]] = tensor.extract_slice %[[E]][0, 0] [4, 8] [1, 1]
  // CHECK: %[[C0:.*]] = linalg.generic {{.*}} outs(%[[S0]] : tensor<4x8xf32>)
  // CHECK: %[[R0:.*]] = tensor.insert_slice %[[C0]] into %[[E]][0, 0] [4, 8] [1, 1]
  // CHECK: %[[S1:.*]] = tensor.extract_slice %[[R0]][0, 8] [4, 2] [1, 1]
  // CHECK: %[[C1:.*]] = linalg.generic {{.*}} outs(%[[S1]] : tensor<4x2xf32>)
  // CHECK: tensor.insert_slice %[[C1]] into %[[R0]][0, 8] [4, 2] [1, 1]
  %2 = fuse.concat %x, %y {axis = 1 : i64} : (tensor<4x8xf32>, tensor<4x2xf32>) -> tensor<4x10xf32>
  return %0, %1, %2, %3 : tensor<3x4xf32>, tensor<5x10xf32>, tensor<4x10xf32>, tensor<4x3xf32>
}

// -----

// Interior padding reads the input where the index lands on an element.
// CHECK-LABEL: func @pad_interior
func.func @pad_interior(%x: tensor<3xf32>) -> tensor<7xf32> {
  // CHECK: linalg.generic
  // CHECK-NOT: ins(
  // CHECK: linalg.index 0
  // CHECK: arith.remsi
  // CHECK: tensor.extract
  // CHECK: arith.select
  %0 = fuse.pad %x {low = array<i64: 1>, high = array<i64: 1>, interior = array<i64: 1>} : (tensor<3xf32>) -> tensor<7xf32>
  return %0 : tensor<7xf32>
}

// -----

// CHECK-LABEL: func @iota_and_cast
func.func @iota_and_cast(%x: tensor<4xf32>) -> (tensor<2x3xf32>, tensor<4xi32>, tensor<4xbf16>) {
  // CHECK: linalg.generic
  // CHECK: linalg.index 1
  // CHECK: arith.sitofp
  %0 = fuse.iota {axis = 1 : i64} : tensor<2x3xf32>
  // Float to integer: clamped, NaN to 0, saturated.
  // CHECK: linalg.generic
  // CHECK: arith.cmpf uno
  // CHECK: arith.maximumf
  // CHECK: arith.minimumf
  // CHECK: arith.fptosi
  // CHECK: arith.cmpf oge
  // CHECK: arith.cmpf ole
  %1 = fuse.cast %x : (tensor<4xf32>) -> tensor<4xi32>
  // CHECK: linalg.generic
  // CHECK: arith.truncf %{{.*}} : f32 to bf16
  %2 = fuse.cast %x : (tensor<4xf32>) -> tensor<4xbf16>
  return %0, %1, %2 : tensor<2x3xf32>, tensor<4xi32>, tensor<4xbf16>
}

// -----

// IPEX's split layout: the top half is the high 16 bits (a shift, not a
// rounding), the low half the low 16 bits, and their join the f32 value.
// CHECK-LABEL: func @halves
func.func @halves(%x: tensor<4xf32>) -> (tensor<4xbf16>, tensor<4xi16>, tensor<4xf32>) {
  // CHECK: linalg.generic
  // CHECK: arith.bitcast %{{.*}} : f32 to i32
  // CHECK: arith.shrui
  // CHECK: arith.trunci %{{.*}} : i32 to i16
  // CHECK: arith.bitcast %{{.*}} : i16 to bf16
  // CHECK-NOT: arith.truncf
  %0 = fuse.high_half %x : (tensor<4xf32>) -> tensor<4xbf16>
  // CHECK: linalg.generic
  // CHECK: arith.bitcast %{{.*}} : f32 to i32
  // CHECK-NEXT: arith.trunci %{{.*}} : i32 to i16
  %1 = fuse.low_half %x : (tensor<4xf32>) -> tensor<4xi16>
  // CHECK: linalg.generic
  // CHECK: arith.shli
  // CHECK: arith.ori
  // CHECK: arith.bitcast %{{.*}} : i32 to f32
  %2 = fuse.join_halves %0, %1 : (tensor<4xbf16>, tensor<4xi16>) -> tensor<4xf32>
  return %0, %1, %2 : tensor<4xbf16>, tensor<4xi16>, tensor<4xf32>
}

// -----

// CHECK-LABEL: func @gelu_erf_leaky_relu
func.func @gelu_erf_leaky_relu(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  // CHECK: linalg.generic
  // CHECK: math.erf
  %0 = fuse.erf %x : tensor<4xf32>
  // CHECK: linalg.generic
  // CHECK: arith.constant 0.707106769 : f32
  // CHECK: math.erf
  %1 = fuse.gelu %x : tensor<4xf32>
  // CHECK: linalg.generic
  // CHECK: math.tanh
  %2 = fuse.gelu %x {approximate = "tanh"} : tensor<4xf32>
  // CHECK: linalg.generic
  // CHECK: arith.cmpf ogt
  // CHECK: arith.select
  %3 = fuse.leaky_relu %x : tensor<4xf32>
  return %0, %1, %2, %3 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}
