// RUN: fuse-opt %s --split-input-file --verify-diagnostics | FileCheck %s

// The config prints as it parses; interchange is optional.
// CHECK-LABEL: func @round_trip
// CHECK: #fuse.lowering_config<strategy = matmul_tiles, distribution = [0, 0, 0], cache = [0, 0, 0], registers = [12, 32, 1, 4, 64, 1], vector = [8, 32, 1]>
// CHECK: #fuse.lowering_config<strategy = transpose, distribution = [0, 0], cache = [0, 0], registers = [1, 16], vector = [1, 16], interchange = [1, 0]>
// CHECK: #fuse.lowering_config<strategy = register_tile, distribution = [], cache = [], registers = [], vector = []>
func.func @round_trip() attributes {
    a = #fuse.lowering_config<strategy = matmul_tiles, distribution = [0, 0, 0], cache = [0, 0, 0], registers = [12, 32, 1, 4, 64, 1], vector = [8, 32, 1]>,
    b = #fuse.lowering_config<strategy = transpose, distribution = [0, 0], cache = [0, 0], registers = [1, 16], vector = [1, 16], interchange = [1, 0]>,
    c = #fuse.lowering_config<strategy = register_tile, distribution = [], cache = [], registers = [], vector = []>} {
  return
}

// -----

// expected-error @below {{lowering config tile sizes must be non-negative}}
func.func @negative() attributes {a = #fuse.lowering_config<strategy = elementwise, distribution = [0], cache = [0], registers = [-1], vector = [8]>}

// -----

// expected-error @below {{lowering config levels 'distribution', 'cache' and 'vector' must have one size per loop}}
func.func @lengths() attributes {a = #fuse.lowering_config<strategy = elementwise, distribution = [0, 0], cache = [0], registers = [8], vector = [8]>}

// -----

// expected-error @below {{lowering config level 'registers' must hold one or more tiles of one size per loop}}
func.func @bands() attributes {a = #fuse.lowering_config<strategy = matmul_tiles, distribution = [0, 0, 0], cache = [0, 0, 0], registers = [12, 32, 1, 4], vector = [8, 32, 1]>}

// -----

// expected-error @below {{a lowering config has no levels exactly when its strategy is register_tile}}
func.func @register_tile() attributes {a = #fuse.lowering_config<strategy = register_tile, distribution = [0], cache = [0], registers = [8], vector = [8]>}

// -----

// expected-error @below {{lowering config 'interchange' must be a permutation of the loops}}
func.func @interchange() attributes {a = #fuse.lowering_config<strategy = transpose, distribution = [0, 0], cache = [0, 0], registers = [1, 16], vector = [1, 16], interchange = [1, 1]>}

// -----

// expected-error @below {{unknown lowering strategy 'tiles'}}
func.func @strategy() attributes {a = #fuse.lowering_config<strategy = tiles, distribution = [0], cache = [0], registers = [8], vector = [8]>}

// -----

func.func @not_a_config(%y: tensor<4xf32>) -> tensor<4xf32> {
  %zero = arith.constant 0.0 : f32
  // expected-error @below {{'fuse.lowering_config' must be a #fuse.lowering_config}}
  %r = linalg.fill {fuse.lowering_config = [4]} ins(%zero : f32) outs(%y : tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

func.func @loop_count(%y: tensor<4xf32>) -> tensor<4xf32> {
  %zero = arith.constant 0.0 : f32
  // expected-error @below {{has a lowering config sized for 2 loops, not its 1}}
  %r = linalg.fill {fuse.lowering_config = #fuse.lowering_config<strategy = elementwise, distribution = [0, 0], cache = [0, 0], registers = [1, 4], vector = [1, 4]>}
      ins(%zero : f32) outs(%y : tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// The image loop mark is a unit attribute on an scf.for.
// CHECK-LABEL: func @image_loop
// CHECK: } {fuse.image_loop}
func.func @image_loop(%n: index, %x: tensor<4xf32>) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%a = %x) -> (tensor<4xf32>) {
    scf.yield %a : tensor<4xf32>
  } {fuse.image_loop}
  return %r : tensor<4xf32>
}

// -----

func.func @image_loop_value(%n: index, %x: tensor<4xf32>) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-error @below {{'fuse.image_loop' must be a unit attribute on an scf.for}}
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%a = %x) -> (tensor<4xf32>) {
    scf.yield %a : tensor<4xf32>
  } {fuse.image_loop = 1}
  return %r : tensor<4xf32>
}

// -----

// expected-error @below {{'fuse.image_loop' must be a unit attribute on an scf.for}}
func.func @image_loop_on_func() attributes {fuse.image_loop} {
  return
}
