// RUN: fuse-opt %s --fuse-specialize="function=f arg-types=tensor<3x4xf32>,tensor<5x4xf32>" --split-input-file --verify-diagnostics

// A type that does not parse is reported by the type parser (in a buffer of
// its own, which --verify-diagnostics cannot annotate), then by the pass.
// RUN: not fuse-opt %s --fuse-specialize="function=f arg-types=tensor<3x4xf32>,tensor<5x4xfoo>" --split-input-file 2>&1 | FileCheck %s --check-prefix=PARSE
// PARSE: tensor<5x4xfoo>:1:{{[0-9]+}}: error:
// PARSE: error: fuse-specialize: cannot parse type 'tensor<5x4xfoo>'
// RUN: not fuse-opt %s --fuse-specialize="function=f arg-types=tensor<3x4xf32>x,tensor<5x4xf32>" --split-input-file 2>&1 | FileCheck %s --check-prefix=TRAILING
// TRAILING: error: found trailing characters: 'x'
// TRAILING: error: fuse-specialize: cannot parse type 'tensor<3x4xf32>x'

// Every case below is checked with arg-types = (tensor<3x4xf32>, tensor<5x4xf32>).

// expected-error @below {{fuse-specialize: no function named 'f'}}
module {
  func.func @g(%a: tensor<?x4xf32>, %b: tensor<?x4xf32>) -> tensor<?x4xf32> {
    return %a : tensor<?x4xf32>
  }
}

// -----

// expected-error @below {{expected 3 argument types, got 2}}
func.func @f(%a: tensor<?x4xf32>, %b: tensor<?x4xf32>, %c: tensor<?x4xf32>) {
  return
}

// -----

// A static dim must be kept.
// expected-error @below {{of type 'tensor<3x4xf32>' does not fit the declared 'tensor<?x5xf32>'}}
func.func @f(%a: tensor<?x5xf32>, %b: tensor<?x4xf32>) {
  return
}

// -----

// So must the element type ...
// expected-error @below {{of type 'tensor<5x4xf32>' does not fit the declared 'tensor<?x4xi32>'}}
func.func @f(%a: tensor<?x4xf32>, %b: tensor<?x4xi32>) {
  return
}

// -----

// ... and the rank.
// expected-error @below {{of type 'tensor<5x4xf32>' does not fit the declared 'tensor<?x?x4xf32>'}}
func.func @f(%a: tensor<?x4xf32>, %b: tensor<?x?x4xf32>) {
  return
}

// -----

// ?x4 + ?x4 is fine until the two '?' become 3 and 5.
func.func @f(%a: tensor<?x4xf32>, %b: tensor<?x4xf32>) -> tensor<?x4xf32> {
  // expected-error @below {{operand shapes 3x4 and 5x4 are not broadcast-compatible}}
  %0 = fuse.add %a, %b : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// -----

// The conflict is found wherever it becomes visible, here after a valid op.
func.func @f(%a: tensor<?x4xf32>, %b: tensor<?x4xf32>) -> tensor<4x4xf32> {
  %0 = fuse.relu %a : tensor<?x4xf32>
  // expected-error @below {{contraction dimensions differ: 3 (lhs) vs 5 (rhs)}}
  %1 = fuse.matmul %0, %b {transpose_lhs} : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<4x4xf32>
  return %1 : tensor<4x4xf32>
}

// -----

func.func @f(%a: tensor<?x4xf32>, %b: tensor<?x4xf32>) -> tensor<?x3xf32> {
  // expected-error @below {{cannot reshape 'tensor<5x4xf32>' (20 elements) into 'tensor<?x3xf32>'}}
  %0 = fuse.reshape %b : (tensor<?x4xf32>) -> tensor<?x3xf32>
  return %0 : tensor<?x3xf32>
}

// -----

// A dynamic broadcast_to dim with no input dim to take its size from.
func.func @f(%a: tensor<?x4xf32>, %b: tensor<?x4xf32>) -> tensor<?x?x4xf32> {
  // expected-error @below {{cannot infer the size of dynamic result dim 0 from input 'tensor<3x4xf32>'}}
  %0 = fuse.broadcast_to %a : (tensor<?x4xf32>) -> tensor<?x?x4xf32>
  return %0 : tensor<?x?x4xf32>
}

// -----

// A static broadcast_to result the specialized input no longer fits: the
// verifier reports it after the pass.
func.func @f(%a: tensor<?x4xf32>, %b: tensor<?x4xf32>) -> tensor<2x5x4xf32> {
  // expected-error @below {{cannot broadcast shape 3x4 to 2x5x4}}
  %0 = fuse.broadcast_to %a : (tensor<?x4xf32>) -> tensor<2x5x4xf32>
  return %0 : tensor<2x5x4xf32>
}

// -----

// Ops whose result types the pass cannot recompute.
func.func @f(%a: tensor<?x4xf32>, %b: tensor<?x4xf32>) -> tensor<?x?xf32> {
  // expected-error @below {{'tensor.cast' op cannot be specialized to concrete shapes}}
  %0 = tensor.cast %a : tensor<?x4xf32> to tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

// expected-error @below {{can only specialize single-block functions}}
func.func @f(%a: tensor<?x4xf32>, %b: tensor<?x4xf32>) -> tensor<?x4xf32> {
  cf.br ^bb1
^bb1:
  return %a : tensor<?x4xf32>
}

// -----

// A declaration has no body to specialize.
// expected-error @below {{can only specialize single-block functions}}
func.func private @f(tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
