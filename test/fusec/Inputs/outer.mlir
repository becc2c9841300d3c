// Each argument fits; with the shapes given, their broadcast sum does not.
func.func @outer(%a: tensor<?x1xf32>, %b: tensor<1x?xf32>) -> tensor<?x?xf32> {
  %y = fuse.add %a, %b : (tensor<?x1xf32>, tensor<1x?xf32>) -> tensor<?x?xf32>
  return %y : tensor<?x?xf32>
}

// A small argument, a result too large for it: 2^62 rows of it.
func.func @grow(%x: tensor<?xf32>) -> tensor<4611686018427387904x?xf32> {
  %y = fuse.broadcast_to %x : (tensor<?xf32>) -> tensor<4611686018427387904x?xf32>
  return %y : tensor<4611686018427387904x?xf32>
}
