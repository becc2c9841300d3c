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
