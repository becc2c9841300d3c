// RUN: fuse-opt %s --convert-fuse-optimizers-to-linalg=max-group-size=4 --split-input-file | FileCheck %s
// RUN: fuse-opt %s --convert-fuse-optimizers-to-linalg --split-input-file | FileCheck %s --check-prefix=DEFAULT
// RUN: fuse-opt %s --convert-fuse-optimizers-to-linalg=max-group-size=2 --split-input-file | FileCheck %s --check-prefix=GROUP2
// RUN: fuse-opt %s --convert-fuse-optimizers-to-linalg=fuse=false --split-input-file | FileCheck %s --check-prefix=UNFUSED

// Each optimizer op becomes one linalg.generic per group of parameters of
// the same type: gradients are its only inputs, the parameters and their
// states its outs (so they bufferize in place), and per-call scalars (bias
// corrections, step sizes) are computed once, outside the loops. The order
// of operations inside a body follows the C++ compiler's evaluation order of
// arguments, so bodies are only checked for a key operation.

// Adam on two parameters of different shapes: one generic each, reading the
// gradient and updating the parameter, m and v (the arguments themselves:
// no tensor.empty, no intermediate tensor). 1 - beta^t and the reciprocal
// of its square root are computed once, in f64 (as PyTorch does), before
// the loops, rounded to f32 there, and both bodies multiply by it (no divide
// by a per-call constant per element). Without fusion, one fuse op per
// arithmetic operation, on whole tensors, and no loop of its own.
// CHECK-LABEL: func @adam
// CHECK-SAME: (%[[LR:[^:]*]]: tensor<f32>, %[[STEP:[^:]*]]: tensor<i64>, %[[W:[^:]*]]: tensor<4x3xf32>, %[[B:[^:]*]]: tensor<3xf32>, %[[GW:[^:]*]]: tensor<4x3xf32>, %[[GB:[^:]*]]: tensor<3xf32>, %[[MW:[^:]*]]: tensor<4x3xf32>, %[[MB:[^:]*]]: tensor<3xf32>, %[[VW:[^:]*]]: tensor<4x3xf32>, %[[VB:[^:]*]]: tensor<3xf32>)
// CHECK-NOT: tensor.empty
// CHECK: math.powf %{{.*}} : f64
// CHECK: math.powf %{{.*}} : f64
// CHECK: %[[SQRT2:.*]] = math.sqrt %{{.*}} : f64
// CHECK: %[[CORRECTION2_F64:.*]] = arith.divf %{{.*}}, %[[SQRT2]] : f64
// CHECK: %[[CORRECTION2:.*]] = arith.truncf %[[CORRECTION2_F64]] : f64 to f32
// CHECK-NOT: tensor.empty
// CHECK: %[[RW:.*]]:3 = linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]} ins(%[[GW]] : tensor<4x3xf32>) outs(%[[W]], %[[MW]], %[[VW]] : tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>)
// CHECK: math.sqrt
// CHECK: arith.mulf %{{.*}}, %[[CORRECTION2]] : f32
// CHECK: linalg.yield
// CHECK-NOT: math.powf
// CHECK-NOT: tensor.empty
// CHECK: %[[RB:.*]]:3 = linalg.generic {{.*}} iterator_types = ["parallel"]} ins(%[[GB]] : tensor<3xf32>) outs(%[[B]], %[[MB]], %[[VB]] : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>)
// CHECK: arith.mulf %{{.*}}, %[[CORRECTION2]] : f32
// CHECK-NOT: math.powf
// CHECK-NOT: tensor.empty
// CHECK-NOT: linalg.generic
// CHECK: return %[[RW]]#0, %[[RB]]#0, %[[RW]]#1, %[[RB]]#1, %[[RW]]#2, %[[RB]]#2 :

// UNFUSED-LABEL: func @adam
// UNFUSED-SAME: (%{{[^:]*}}: tensor<f32>, %{{[^:]*}}: tensor<i64>, %[[W:[^:]*]]: tensor<4x3xf32>, %[[B:[^:]*]]: tensor<3xf32>
// UNFUSED-NOT: linalg.generic
// UNFUSED-DAG: fuse.mul {{.*}} -> tensor<4x3xf32>
// UNFUSED-DAG: fuse.add {{.*}} -> tensor<4x3xf32>
// UNFUSED-DAG: fuse.sqrt {{.*}} : tensor<4x3xf32>
// UNFUSED-DAG: fuse.div {{.*}} -> tensor<4x3xf32>
// UNFUSED: %[[NW:.*]] = fuse.sub %[[W]], %{{.*}} : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
// UNFUSED-NOT: linalg.generic
// UNFUSED-DAG: fuse.mul {{.*}} -> tensor<3xf32>
// UNFUSED-DAG: fuse.add {{.*}} -> tensor<3xf32>
// UNFUSED-DAG: fuse.sqrt {{.*}} : tensor<3xf32>
// UNFUSED-DAG: fuse.div {{.*}} -> tensor<3xf32>
// UNFUSED: %[[NB:.*]] = fuse.sub %[[B]], %{{.*}} : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
// UNFUSED-NOT: linalg.generic
// UNFUSED: return %[[NW]], %[[NB]],
func.func @adam(%lr: tensor<f32>, %step: tensor<i64>, %w: tensor<4x3xf32>, %b: tensor<3xf32>, %gw: tensor<4x3xf32>, %gb: tensor<3xf32>, %mw: tensor<4x3xf32>, %mb: tensor<3xf32>, %vw: tensor<4x3xf32>, %vb: tensor<3xf32>) -> (tensor<4x3xf32>, tensor<3xf32>, tensor<4x3xf32>, tensor<3xf32>, tensor<4x3xf32>, tensor<3xf32>) {
  %r:6 = fuse.adam %lr, %step params(%w, %b : tensor<4x3xf32>, tensor<3xf32>) grads(%gw, %gb : tensor<4x3xf32>, tensor<3xf32>) states(%mw, %mb, %vw, %vb : tensor<4x3xf32>, tensor<3xf32>, tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>, tensor<3xf32>, tensor<4x3xf32>, tensor<3xf32>, tensor<4x3xf32>, tensor<3xf32>
  return %r#0, %r#1, %r#2, %r#3, %r#4, %r#5 : tensor<4x3xf32>, tensor<3xf32>, tensor<4x3xf32>, tensor<3xf32>, tensor<4x3xf32>, tensor<3xf32>
}

// -----

// Master weights: a parameter's bf16 copy is one more out of its update's
// generic (the current copy, overwritten in place), the new parameter
// rounded by the same loop that writes it: no second pass over the
// weight. In a group, only the copied parameter has the extra out; the
// copies come last among the results. Unfused, the copy is a fuse.cast of
// the new parameter.
// CHECK-LABEL: func @sgd_copies
// CHECK-SAME: (%{{[^:]*}}: tensor<f32>, %{{[^:]*}}: tensor<i64>, %[[P0:[^:]*]]: tensor<8xf32>, %[[P1:[^:]*]]: tensor<8xf32>, %[[G0:[^:]*]]: tensor<8xf32>, %[[G1:[^:]*]]: tensor<8xf32>, %[[B0:[^:]*]]: tensor<8xf32>, %[[B1:[^:]*]]: tensor<8xf32>, %[[C1:[^:]*]]: tensor<8xbf16>)
// CHECK: %[[R:.*]]:5 = linalg.generic
// CHECK-SAME: ins(%[[G0]], %[[G1]] : tensor<8xf32>, tensor<8xf32>)
// CHECK-SAME: outs(%[[P0]], %[[B0]], %[[P1]], %[[B1]], %[[C1]] : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xbf16>)
// CHECK: arith.subf
// CHECK-NOT: arith.truncf
// CHECK: %[[NEW1:.*]] = arith.subf
// CHECK-NEXT: %[[ROUNDED:.*]] = arith.truncf %[[NEW1]] : f32 to bf16
// CHECK-NEXT: linalg.yield %{{.*}}, %{{.*}}, %[[NEW1]], %{{.*}}, %[[ROUNDED]] : f32, f32, f32, f32, bf16
// CHECK: return %[[R]]#0, %[[R]]#2, %[[R]]#1, %[[R]]#3, %[[R]]#4 :
// UNFUSED-LABEL: func @sgd_copies
// UNFUSED: %[[NEW1:.*]] = fuse.sub %arg3, %{{.*}} : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
// UNFUSED: %[[ROUNDED:.*]] = fuse.cast %[[NEW1]] : (tensor<8xf32>) -> tensor<8xbf16>
// UNFUSED: return %{{.*}}, %[[NEW1]], %{{.*}}, %{{.*}}, %[[ROUNDED]] :
func.func @sgd_copies(%lr: tensor<f32>, %step: tensor<i64>, %p0: tensor<8xf32>, %p1: tensor<8xf32>, %g0: tensor<8xf32>, %g1: tensor<8xf32>, %b0: tensor<8xf32>, %b1: tensor<8xf32>, %c1: tensor<8xbf16>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xbf16>) {
  %r:5 = fuse.sgd %lr, %step params(%p0, %p1 : tensor<8xf32>, tensor<8xf32>) grads(%g0, %g1 : tensor<8xf32>, tensor<8xf32>) states(%b0, %b1 : tensor<8xf32>, tensor<8xf32>) copies(%c1 : tensor<8xbf16>) {momentum = 0.9 : f64, copy_params = array<i64: 1>} -> tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xbf16>
  return %r#0, %r#1, %r#2, %r#3, %r#4 : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xbf16>
}

// -----

// IPEX's split layout (split_copies): the split parameter's outs are its
// momentum buffer and its two halves, not the f32 parameter (whose operand
// is not read); the body joins the halves exactly ((zext(top) << 16) |
// zext(low), as f32), runs the f32 update and writes the new top half
// (the high 16 bits: truncated, no truncf) and low half. Its f32 result is
// the join of the new halves, after the generic. Unfused: the same with
// fuse.join_halves, fuse.high_half and fuse.low_half on tensors.
// CHECK-LABEL: func @sgd_split
// CHECK-SAME: (%{{[^:]*}}: tensor<f32>, %{{[^:]*}}: tensor<i64>, %[[P0:[^:]*]]: tensor<8xf32>, %[[P1:[^:]*]]: tensor<8xf32>, %[[G0:[^:]*]]: tensor<8xf32>, %[[G1:[^:]*]]: tensor<8xf32>, %[[B0:[^:]*]]: tensor<8xf32>, %[[B1:[^:]*]]: tensor<8xf32>, %[[T1:[^:]*]]: tensor<8xbf16>, %[[L1:[^:]*]]: tensor<8xi16>)
// CHECK: %[[R:.*]]:5 = linalg.generic
// CHECK-SAME: ins(%[[G0]], %[[G1]] : tensor<8xf32>, tensor<8xf32>)
// CHECK-SAME: outs(%[[P0]], %[[B0]], %[[B1]], %[[T1]], %[[L1]] : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xbf16>, tensor<8xi16>)
// CHECK-NEXT: ^bb0(%{{[^:]*}}: f32, %{{[^:]*}}: f32, %{{[^:]*}}: f32, %{{[^:]*}}: f32, %{{[^:]*}}: f32, %[[TOP:[^:]*]]: bf16, %[[LOW:[^:]*]]: i16):
// CHECK: arith.subf
// CHECK: %[[TOPBITS:.*]] = arith.bitcast %[[TOP]] : bf16 to i16
// CHECK: %[[WIDE:.*]] = arith.extui %[[TOPBITS]] : i16 to i32
// CHECK: %[[HIGH:.*]] = arith.shli %[[WIDE]]
// CHECK: %[[LOWBITS:.*]] = arith.extui %[[LOW]] : i16 to i32
// CHECK: %[[BITS:.*]] = arith.ori %[[HIGH]], %[[LOWBITS]] : i32
// CHECK: %[[P:.*]] = arith.bitcast %[[BITS]] : i32 to f32
// CHECK-NOT: arith.truncf
// CHECK: %[[NEW:.*]] = arith.subf %[[P]], %{{.*}} : f32
// CHECK: %[[NEWBITS:.*]] = arith.bitcast %[[NEW]] : f32 to i32
// CHECK: %[[SHIFTED:.*]] = arith.shrui %[[NEWBITS]]
// CHECK: %[[NEWTOP:.*]] = arith.bitcast %{{.*}} : i16 to bf16
// CHECK: %[[NEWLOW:.*]] = arith.trunci %{{.*}} : i32 to i16
// CHECK-NEXT: linalg.yield %{{.*}}, %{{.*}}, %{{.*}}, %[[NEWTOP]], %[[NEWLOW]] : f32, f32, f32, bf16, i16
// CHECK: %[[JOINED:.*]] = fuse.join_halves %[[R]]#3, %[[R]]#4 : (tensor<8xbf16>, tensor<8xi16>) -> tensor<8xf32>
// CHECK: return %[[R]]#0, %[[JOINED]], %[[R]]#1, %[[R]]#2, %[[R]]#3, %[[R]]#4 :
// UNFUSED-LABEL: func @sgd_split
// UNFUSED: %[[P:.*]] = fuse.join_halves %arg8, %arg9 : (tensor<8xbf16>, tensor<8xi16>) -> tensor<8xf32>
// UNFUSED: %[[NEW1:.*]] = fuse.sub %[[P]], %{{.*}} : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
// UNFUSED: %[[TOP:.*]] = fuse.high_half %[[NEW1]] : (tensor<8xf32>) -> tensor<8xbf16>
// UNFUSED: %[[LOW:.*]] = fuse.low_half %[[NEW1]] : (tensor<8xf32>) -> tensor<8xi16>
// UNFUSED: return %{{.*}}, %[[NEW1]], %{{.*}}, %{{.*}}, %[[TOP]], %[[LOW]] :
func.func @sgd_split(%lr: tensor<f32>, %step: tensor<i64>, %p0: tensor<8xf32>, %p1: tensor<8xf32>, %g0: tensor<8xf32>, %g1: tensor<8xf32>, %b0: tensor<8xf32>, %b1: tensor<8xf32>, %t1: tensor<8xbf16>, %l1: tensor<8xi16>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xbf16>, tensor<8xi16>) {
  %r:6 = fuse.sgd %lr, %step params(%p0, %p1 : tensor<8xf32>, tensor<8xf32>) grads(%g0, %g1 : tensor<8xf32>, tensor<8xf32>) states(%b0, %b1 : tensor<8xf32>, tensor<8xf32>) copies(%t1, %l1 : tensor<8xbf16>, tensor<8xi16>) {momentum = 0.9 : f64, copy_params = array<i64: 1>, split_copies} -> tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xbf16>, tensor<8xi16>
  return %r#0, %r#1, %r#2, %r#3, %r#4, %r#5 : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xbf16>, tensor<8xi16>
}

// -----

// Horizontal fusion: three parameters of the same type, SGD with momentum,
// are updated by ONE generic (ins: the 3 gradients; outs: each parameter
// followed by its momentum buffer). The results are picked back out of it in
// the op's layout (parameters, then buffers). With max-group-size=2, the
// first two share a generic and the third gets its own.
// CHECK-LABEL: func @sgd_momentum
// CHECK-SAME: (%{{[^:]*}}: tensor<f32>, %{{[^:]*}}: tensor<i64>, %[[P0:[^:]*]]: tensor<8xf32>, %[[P1:[^:]*]]: tensor<8xf32>, %[[P2:[^:]*]]: tensor<8xf32>, %[[G0:[^:]*]]: tensor<8xf32>, %[[G1:[^:]*]]: tensor<8xf32>, %[[G2:[^:]*]]: tensor<8xf32>, %[[B0:[^:]*]]: tensor<8xf32>, %[[B1:[^:]*]]: tensor<8xf32>, %[[B2:[^:]*]]: tensor<8xf32>)
// CHECK: %[[FIRST:.*]] = arith.cmpi eq
// CHECK: %[[R:.*]]:6 = linalg.generic
// CHECK-SAME: ins(%[[G0]], %[[G1]], %[[G2]] : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>)
// CHECK-SAME: outs(%[[P0]], %[[B0]], %[[P1]], %[[B1]], %[[P2]], %[[B2]] :
// CHECK-COUNT-3: arith.select %[[FIRST]]
// CHECK: linalg.yield
// CHECK-NOT: linalg.generic
// CHECK: return %[[R]]#0, %[[R]]#2, %[[R]]#4, %[[R]]#1, %[[R]]#3, %[[R]]#5 :

// By default, one generic per parameter, each marked for the strategy,
// which splits it into chunks (a group's many streams spill registers).
// DEFAULT-LABEL: func @sgd_momentum
// DEFAULT-SAME: (%{{[^:]*}}: tensor<f32>, %{{[^:]*}}: tensor<i64>, %[[P0:[^:]*]]: tensor<8xf32>, %[[P1:[^:]*]]: tensor<8xf32>, %[[P2:[^:]*]]: tensor<8xf32>, %[[G0:[^:]*]]: tensor<8xf32>, %[[G1:[^:]*]]: tensor<8xf32>, %[[G2:[^:]*]]: tensor<8xf32>, %[[B0:[^:]*]]: tensor<8xf32>, %[[B1:[^:]*]]: tensor<8xf32>, %[[B2:[^:]*]]: tensor<8xf32>)
// DEFAULT: %[[R0:.*]]:2 = linalg.generic
// DEFAULT-SAME: ins(%[[G0]] : tensor<8xf32>) outs(%[[P0]], %[[B0]] : tensor<8xf32>, tensor<8xf32>) attrs =  {fuse.optimizer_update}
// DEFAULT: %[[R1:.*]]:2 = linalg.generic
// DEFAULT-SAME: ins(%[[G1]] : tensor<8xf32>) outs(%[[P1]], %[[B1]] : tensor<8xf32>, tensor<8xf32>) attrs =  {fuse.optimizer_update}
// DEFAULT: %[[R2:.*]]:2 = linalg.generic
// DEFAULT-SAME: ins(%[[G2]] : tensor<8xf32>) outs(%[[P2]], %[[B2]] : tensor<8xf32>, tensor<8xf32>) attrs =  {fuse.optimizer_update}
// DEFAULT-NOT: linalg.generic
// DEFAULT: return %[[R0]]#0, %[[R1]]#0, %[[R2]]#0, %[[R0]]#1, %[[R1]]#1, %[[R2]]#1 :

// GROUP2-LABEL: func @sgd_momentum
// GROUP2-SAME: (%{{[^:]*}}: tensor<f32>, %{{[^:]*}}: tensor<i64>, %[[P0:[^:]*]]: tensor<8xf32>, %[[P1:[^:]*]]: tensor<8xf32>, %[[P2:[^:]*]]: tensor<8xf32>, %[[G0:[^:]*]]: tensor<8xf32>, %[[G1:[^:]*]]: tensor<8xf32>, %[[G2:[^:]*]]: tensor<8xf32>, %[[B0:[^:]*]]: tensor<8xf32>, %[[B1:[^:]*]]: tensor<8xf32>, %[[B2:[^:]*]]: tensor<8xf32>)
// GROUP2: %[[R01:.*]]:4 = linalg.generic
// GROUP2-SAME: ins(%[[G0]], %[[G1]] : tensor<8xf32>, tensor<8xf32>)
// GROUP2-SAME: outs(%[[P0]], %[[B0]], %[[P1]], %[[B1]] :
// GROUP2: %[[R2:.*]]:2 = linalg.generic
// GROUP2-SAME: ins(%[[G2]] : tensor<8xf32>)
// GROUP2-SAME: outs(%[[P2]], %[[B2]] :
// GROUP2-NOT: linalg.generic
// GROUP2: return %[[R01]]#0, %[[R01]]#2, %[[R2]]#0, %[[R01]]#1, %[[R01]]#3, %[[R2]]#1 :
func.func @sgd_momentum(%lr: tensor<f32>, %step: tensor<i64>, %p0: tensor<8xf32>, %p1: tensor<8xf32>, %p2: tensor<8xf32>, %g0: tensor<8xf32>, %g1: tensor<8xf32>, %g2: tensor<8xf32>, %b0: tensor<8xf32>, %b1: tensor<8xf32>, %b2: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
  %r:6 = fuse.sgd %lr, %step params(%p0, %p1, %p2 : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) grads(%g0, %g1, %g2 : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) states(%b0, %b1, %b2 : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {momentum = 0.9 : f64} -> tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
  return %r#0, %r#1, %r#2, %r#3, %r#4, %r#5 : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
}

// -----

// Adagrad: the decayed learning rate lr / (1 + step * lr_decay) is computed
// once outside, in f64, and rounded to f32 there; one generic updates the
// parameter and its accumulator.
// CHECK-LABEL: func @adagrad
// CHECK-SAME: (%{{[^:]*}}: tensor<f32>, %{{[^:]*}}: tensor<i64>, %[[P:[^:]*]]: tensor<8xf32>, %[[G:[^:]*]]: tensor<8xf32>, %[[S:[^:]*]]: tensor<8xf32>)
// CHECK: %[[CLR_F64:.*]] = arith.divf %{{.*}}, %{{.*}} : f64
// CHECK-NEXT: %[[CLR:.*]] = arith.truncf %[[CLR_F64]] : f64 to f32
// CHECK: %[[R:.*]]:2 = linalg.generic
// CHECK-SAME: ins(%[[G]] : tensor<8xf32>) outs(%[[P]], %[[S]] : tensor<8xf32>, tensor<8xf32>)
// CHECK: math.sqrt
// CHECK: arith.mulf %[[CLR]],
// CHECK: linalg.yield
// CHECK-NOT: linalg.generic
// CHECK: return %[[R]]#0, %[[R]]#1
func.func @adagrad(%lr: tensor<f32>, %step: tensor<i64>, %p: tensor<8xf32>, %g: tensor<8xf32>, %s: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %r:2 = fuse.adagrad %lr, %step params(%p : tensor<8xf32>) grads(%g : tensor<8xf32>) states(%s : tensor<8xf32>) {lr_decay = 0.01 : f64} -> tensor<8xf32>, tensor<8xf32>
  return %r#0, %r#1 : tensor<8xf32>, tensor<8xf32>
}

// -----

// Centered RMSprop with momentum: three states (square_avg, grad_avg,
// momentum buffer), all outs of one generic with the parameter.
// CHECK-LABEL: func @rmsprop
// CHECK-SAME: (%{{[^:]*}}: tensor<f32>, %{{[^:]*}}: tensor<i64>, %[[P:[^:]*]]: tensor<8xf32>, %[[G:[^:]*]]: tensor<8xf32>, %[[SQ:[^:]*]]: tensor<8xf32>, %[[AVG:[^:]*]]: tensor<8xf32>, %[[BUF:[^:]*]]: tensor<8xf32>)
// CHECK-NOT: tensor.empty
// CHECK: %[[R:.*]]:4 = linalg.generic
// CHECK-SAME: ins(%[[G]] : tensor<8xf32>) outs(%[[P]], %[[SQ]], %[[AVG]], %[[BUF]] : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>)
// CHECK: math.sqrt
// CHECK: linalg.yield
// CHECK-NOT: linalg.generic
// CHECK: return %[[R]]#0, %[[R]]#1, %[[R]]#2, %[[R]]#3
func.func @rmsprop(%lr: tensor<f32>, %step: tensor<i64>, %p: tensor<8xf32>, %g: tensor<8xf32>, %sq: tensor<8xf32>, %avg: tensor<8xf32>, %buf: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
  %r:4 = fuse.rmsprop %lr, %step params(%p : tensor<8xf32>) grads(%g : tensor<8xf32>) states(%sq, %avg, %buf : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {centered, momentum = 0.5 : f64} -> tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
  return %r#0, %r#1, %r#2, %r#3 : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
}

// -----

// SGD with Nesterov momentum and weight decay on a 2-d parameter: one
// generic, the first-step test (step == 0) computed once outside it.
// CHECK-LABEL: func @sgd_nesterov
// CHECK-SAME: (%{{[^:]*}}: tensor<f32>, %{{[^:]*}}: tensor<i64>, %[[P:[^:]*]]: tensor<2x4xf32>, %[[G:[^:]*]]: tensor<2x4xf32>, %[[BUF:[^:]*]]: tensor<2x4xf32>)
// CHECK: %[[FIRST:.*]] = arith.cmpi eq
// CHECK: %[[R:.*]]:2 = linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]}
// CHECK-SAME: ins(%[[G]] : tensor<2x4xf32>) outs(%[[P]], %[[BUF]] : tensor<2x4xf32>, tensor<2x4xf32>)
// CHECK: arith.select %[[FIRST]]
// CHECK: linalg.yield
// CHECK-NOT: linalg.generic
// CHECK: return %[[R]]#0, %[[R]]#1
func.func @sgd_nesterov(%lr: tensor<f32>, %step: tensor<i64>, %p: tensor<2x4xf32>, %g: tensor<2x4xf32>, %b: tensor<2x4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>) {
  %r:2 = fuse.sgd %lr, %step params(%p : tensor<2x4xf32>) grads(%g : tensor<2x4xf32>) states(%b : tensor<2x4xf32>) {momentum = 0.9 : f64, nesterov, weight_decay = 1.0e-4 : f64} -> tensor<2x4xf32>, tensor<2x4xf32>
  return %r#0, %r#1 : tensor<2x4xf32>, tensor<2x4xf32>
}

// -----

// LAMB on two parameters of the same type, in two passes over memory. Per
// parameter, one full reduction reads p, g, m and v and gives both squared
// norms (of the parameter and of its update direction, whose new moments
// stay in registers) as 0-d tensors, then the trust ratio in f64 scalars; then
// one generic recomputes the moments and direction and updates both
// parameters and their moments in place. The direction is never stored: no
// tensor of the parameters' shape other than the update's results.
// CHECK-LABEL: func @lamb
// CHECK-SAME: (%[[LR:[^:]*]]: tensor<f32>, %{{[^:]*}}: tensor<i64>, %[[P0:[^:]*]]: tensor<4x3xf32>, %[[P1:[^:]*]]: tensor<4x3xf32>, %[[G0:[^:]*]]: tensor<4x3xf32>, %[[G1:[^:]*]]: tensor<4x3xf32>, %[[M0:[^:]*]]: tensor<4x3xf32>, %[[M1:[^:]*]]: tensor<4x3xf32>, %[[V0:[^:]*]]: tensor<4x3xf32>, %[[V1:[^:]*]]: tensor<4x3xf32>)
// CHECK-NOT: tensor.empty() : tensor<4x3xf32>
// CHECK: %[[LRV:.*]] = tensor.extract %[[LR]][] : tensor<f32>
// CHECK: %[[LR64:.*]] = arith.extf %[[LRV]] : f32 to f64
// CHECK-NOT: -> tensor<4x3xf32>
// CHECK: %[[NORMS0:.*]]:2 = linalg.generic {{.*}} iterator_types = ["reduction", "reduction"]}
// CHECK-SAME: ins(%[[P0]], %[[G0]], %[[M0]], %[[V0]] : tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>) outs(%{{.*}}, %{{.*}} : tensor<f32>, tensor<f32>)
// CHECK: math.sqrt
// CHECK: } -> (tensor<f32>, tensor<f32>)
// CHECK: %[[STEP0_F64:.*]] = arith.mulf %[[LR64]], %{{.*}} : f64
// CHECK-NEXT: %[[STEP0:.*]] = arith.truncf %[[STEP0_F64]] : f64 to f32
// CHECK-NOT: tensor.empty() : tensor<4x3xf32>
// CHECK-NOT: -> tensor<4x3xf32>
// CHECK: %[[NORMS1:.*]]:2 = linalg.generic {{.*}} iterator_types = ["reduction", "reduction"]}
// CHECK-SAME: ins(%[[P1]], %[[G1]], %[[M1]], %[[V1]] : tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>) outs(%{{.*}}, %{{.*}} : tensor<f32>, tensor<f32>)
// CHECK: } -> (tensor<f32>, tensor<f32>)
// CHECK: %[[STEP1_F64:.*]] = arith.mulf %[[LR64]], %{{.*}} : f64
// CHECK-NEXT: %[[STEP1:.*]] = arith.truncf %[[STEP1_F64]] : f64 to f32
// CHECK-NOT: tensor.empty() : tensor<4x3xf32>
// CHECK: %[[NEW:.*]]:6 = linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]}
// CHECK-SAME: ins(%[[G0]], %[[G1]] : tensor<4x3xf32>, tensor<4x3xf32>) outs(%[[P0]], %[[M0]], %[[V0]], %[[P1]], %[[M1]], %[[V1]] :
// CHECK-DAG: arith.mulf %[[STEP0]],
// CHECK-DAG: arith.mulf %[[STEP1]],
// CHECK: linalg.yield
// CHECK-NOT: linalg.generic
// CHECK: return %[[NEW]]#0, %[[NEW]]#3, %[[NEW]]#1, %[[NEW]]#4, %[[NEW]]#2, %[[NEW]]#5 :
func.func @lamb(%lr: tensor<f32>, %step: tensor<i64>, %p0: tensor<4x3xf32>, %p1: tensor<4x3xf32>, %g0: tensor<4x3xf32>, %g1: tensor<4x3xf32>, %m0: tensor<4x3xf32>, %m1: tensor<4x3xf32>, %v0: tensor<4x3xf32>, %v1: tensor<4x3xf32>) -> (tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>) {
  %r:6 = fuse.lamb %lr, %step params(%p0, %p1 : tensor<4x3xf32>, tensor<4x3xf32>) grads(%g0, %g1 : tensor<4x3xf32>, tensor<4x3xf32>) states(%m0, %m1, %v0, %v1 : tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>) {weight_decay = 0.01 : f64} -> tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>
  return %r#0, %r#1, %r#2, %r#3, %r#4, %r#5 : tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>
}

// -----

// A cosine schedule with warmup: scalar f64 arithmetic on the step counter,
// rounded to f32 once, the rate a 0-d tensor again for the optimizer.
// CHECK-LABEL: func.func @cosine_schedule
// CHECK: %[[LR:.*]] = tensor.extract %{{.*}}[] : tensor<f32>
// CHECK: %[[STEP:.*]] = tensor.extract %{{.*}}[] : tensor<i64>
// CHECK: %[[LR64:.*]] = arith.extf %[[LR]] : f32 to f64
// CHECK: %[[SINCE:.*]] = arith.subi %[[STEP]], %{{.*}} : i64
// CHECK: arith.maxsi %[[SINCE]]
// CHECK: arith.minsi
// CHECK: math.cos %{{.*}} : f64
// CHECK: %[[WARM:.*]] = arith.cmpi slt, %[[STEP]]
// CHECK: %[[FACTOR:.*]] = arith.select %[[WARM]]
// CHECK: %[[SCALED:.*]] = arith.mulf %[[LR64]], %[[FACTOR]] : f64
// CHECK: %[[R:.*]] = arith.truncf %[[SCALED]] : f64 to f32
// CHECK: tensor.from_elements %[[R]] : tensor<f32>
// CHECK-NOT: fuse.lr_schedule
func.func @cosine_schedule(%lr: tensor<f32>, %s: tensor<i64>) -> tensor<f32> {
  %0 = fuse.lr_schedule %lr, %s {schedule = #fuse.lr_schedule<cosine, warmup = 10, decay_steps = 100, min = 0.1>}
  return %0 : tensor<f32>
}

// -----

// Step decay: gamma^(since / D) with an integer quotient; no warmup, no select.
// CHECK-LABEL: func.func @step_schedule
// CHECK: %[[Q:.*]] = arith.divsi %{{.*}}, %{{.*}} : i64
// CHECK: %[[QF:.*]] = arith.sitofp %[[Q]] : i64 to f64
// CHECK: math.powf %{{.*}}, %[[QF]] : f64
// CHECK-NOT: arith.select
// CHECK: tensor.from_elements
func.func @step_schedule(%lr: tensor<f32>, %s: tensor<i64>) -> tensor<f32> {
  %0 = fuse.lr_schedule %lr, %s {schedule = #fuse.lr_schedule<step, decay_steps = 30, gamma = 0.5>}
  return %0 : tensor<f32>
}

// -----

// Clipping by global norm and value: one sum of squares per gradient, their
// f64 sum, min(1, c / (norm + 1e-6)), then one element-wise pass per
// gradient scaling and clamping it.
// CHECK-LABEL: func.func @clip
// CHECK-SAME: (%[[G:.*]]: tensor<4xf32>, %[[H:.*]]: tensor<2x3xf32>)
// CHECK: %[[SG:.*]] = linalg.generic {{.*}}iterator_types = ["reduction"]{{.*}} ins(%[[G]] : tensor<4xf32>)
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: %[[SH:.*]] = linalg.generic {{.*}}iterator_types = ["reduction", "reduction"]{{.*}} ins(%[[H]] : tensor<2x3xf32>)
// CHECK: %[[NORM:.*]] = math.sqrt %{{.*}} : f64
// CHECK: %[[D:.*]] = arith.addf %[[NORM]], %{{.*}} : f64
// CHECK: %[[RATIO:.*]] = arith.divf %{{.*}}, %[[D]] : f64
// CHECK: %[[SCALE:.*]] = arith.minimumf %{{.*}}, %[[RATIO]] : f64
// CHECK: %[[S32:.*]] = arith.truncf %[[SCALE]] : f64 to f32
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel"]{{.*}} ins(%[[G]] : tensor<4xf32>)
// CHECK: arith.mulf %{{.*}}, %[[S32]] : f32
// CHECK: arith.maximumf
// CHECK: arith.minimumf
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]{{.*}} ins(%[[H]] : tensor<2x3xf32>)
// CHECK-NOT: fuse.clip_gradients
func.func @clip(%g: tensor<4xf32>, %h: tensor<2x3xf32>) -> (tensor<4xf32>, tensor<2x3xf32>) {
  %0:2 = fuse.clip_gradients %g, %h {clip_norm = 1.0 : f64, clip_value = 0.5 : f64} : tensor<4xf32>, tensor<2x3xf32>
  return %0#0, %0#1 : tensor<4xf32>, tensor<2x3xf32>
}

// -----

// By value only: no reduction.
// CHECK-LABEL: func.func @clip_value
// CHECK-NOT: "reduction"
// CHECK: linalg.generic
// CHECK-NOT: arith.mulf
// CHECK: arith.maximumf
// CHECK: arith.minimumf
func.func @clip_value(%g: tensor<4xf32>) -> tensor<4xf32> {
  %0 = fuse.clip_gradients %g {clip_value = 0.5 : f64} : tensor<4xf32>
  return %0 : tensor<4xf32>
}
