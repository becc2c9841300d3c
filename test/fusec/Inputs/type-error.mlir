func.func @f(%x: tensor<?x784xf32>, %w: tensor<128x10xf32>) -> tensor<?x10xf32> {
  %0 = fuse.matmul %x, %w : (tensor<?x784xf32>, tensor<128x10xf32>) -> tensor<?x10xf32>
  return %0 : tensor<?x10xf32>
}
