// RUN: fuse-opt %s --fuse-distribute-image-loops --split-input-file | FileCheck %s

// An image loop whose iterations insert their image of a batch-sized result
// and reuse a scratch buffer of one image (filled before the loop, a padded
// image whose border stays zero): an scf.forall over blocks of one image
// (each holds enough work: 256K elements), each a loop over its images, with a scratch
// buffer of its own, inserting its images of the shared result. The mark is
// removed.
// CHECK-LABEL: func @images_and_scratch
// CHECK: %[[R:.*]] = scf.forall (%[[FIRST:[^)]+]]) in (4) shared_outs(%[[OUT:[^ ]+]] = %{{.*}}) -> (tensor<4x512x512xf32>)
// CHECK: %[[BUF:.*]] = bufferization.alloc_tensor() : tensor<1x514x512xf32>
// CHECK: %[[PAD:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[BUF]] : tensor<1x514x512xf32>)
// CHECK: %[[LOOP:.*]]:2 = scf.for %[[I:[^ ]+]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%{{.*}} = %[[OUT]], %{{.*}} = %[[PAD]])
// CHECK: %[[N:.*]] = arith.addi %[[FIRST]], %[[I]]
// CHECK: tensor.extract_slice %{{.*}}[%[[N]], 0, 0] [1, 512, 512]
// CHECK: linalg.generic
// CHECK: tensor.insert_slice %{{.*}}[%[[N]], 0, 0] [1, 512, 512]
// CHECK: %[[BLOCK:.*]] = tensor.extract_slice %[[LOOP]]#0[%[[FIRST]], 0, 0] [1, 512, 512]
// CHECK: scf.forall.in_parallel
// CHECK-NEXT: tensor.parallel_insert_slice %[[BLOCK]] into %[[OUT]][%[[FIRST]], 0, 0] [1, 512, 512]
// CHECK-NOT: fuse.image_loop
// CHECK: return %[[R]]
#id = affine_map<(a, b, c) -> (a, b, c)>
func.func @images_and_scratch(%x: tensor<4x512x512xf32>) -> tensor<4x512x512xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  %out = tensor.empty() : tensor<4x512x512xf32>
  %buf = bufferization.alloc_tensor() : tensor<1x514x512xf32>
  %pad = linalg.fill ins(%zero : f32) outs(%buf : tensor<1x514x512xf32>) -> tensor<1x514x512xf32>
  %r:2 = scf.for %n = %c0 to %c4 step %c1 iter_args(%acc = %out, %scratch = %pad) -> (tensor<4x512x512xf32>, tensor<1x514x512xf32>) {
    %xi = tensor.extract_slice %x[%n, 0, 0] [1, 512, 512] [1, 1, 1] : tensor<4x512x512xf32> to tensor<1x512x512xf32>
    %interior = tensor.extract_slice %scratch[0, 1, 0] [1, 512, 512] [1, 1, 1] : tensor<1x514x512xf32> to tensor<1x512x512xf32>
    %e = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]}
        ins(%xi : tensor<1x512x512xf32>) outs(%interior : tensor<1x512x512xf32>) {
    ^bb0(%in: f32, %o: f32):
      %v = math.exp %in : f32
      linalg.yield %v : f32
    } -> tensor<1x512x512xf32>
    %s = tensor.insert_slice %e into %scratch[0, 1, 0] [1, 512, 512] [1, 1, 1] : tensor<1x512x512xf32> into tensor<1x514x512xf32>
    %rows = tensor.extract_slice %s[0, 0, 0] [1, 512, 512] [1, 1, 1] : tensor<1x514x512xf32> to tensor<1x512x512xf32>
    %ins = tensor.insert_slice %rows into %acc[%n, 0, 0] [1, 512, 512] [1, 1, 1] : tensor<1x512x512xf32> into tensor<4x512x512xf32>
    scf.yield %ins, %s : tensor<4x512x512xf32>, tensor<1x514x512xf32>
  } {fuse.image_loop}
  return %r#0 : tensor<4x512x512xf32>
}

// -----

// A loop that sums across images (a filter gradient's accumulator) stays
// on one thread; its mark is removed.
// CHECK-LABEL: func @sum_across_images
// CHECK-NOT: scf.forall
// CHECK: scf.for
// CHECK-NOT: fuse.image_loop
#id2 = affine_map<(a, b) -> (a, b)>
func.func @sum_across_images(%x: tensor<4x64x64xf32>, %init: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %r = scf.for %n = %c0 to %c4 step %c1 iter_args(%acc = %init) -> (tensor<64x64xf32>) {
    %xi = tensor.extract_slice %x[%n, 0, 0] [1, 64, 64] [1, 1, 1] : tensor<4x64x64xf32> to tensor<64x64xf32>
    %s = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
        ins(%xi : tensor<64x64xf32>) outs(%acc : tensor<64x64xf32>) {
    ^bb0(%in: f32, %o: f32):
      %v = arith.addf %in, %o : f32
      linalg.yield %v : f32
    } -> tensor<64x64xf32>
    scf.yield %s : tensor<64x64xf32>
  } {fuse.image_loop}
  return %r : tensor<64x64xf32>
}

// -----

// Too little work per image to pay for a fork (64 elements): one thread.
// CHECK-LABEL: func @small_images
// CHECK-NOT: scf.forall
// CHECK: scf.for
#id3 = affine_map<(a, b, c) -> (a, b, c)>
func.func @small_images(%x: tensor<4x8x8xf32>) -> tensor<4x8x8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %out = tensor.empty() : tensor<4x8x8xf32>
  %r = scf.for %n = %c0 to %c4 step %c1 iter_args(%acc = %out) -> (tensor<4x8x8xf32>) {
    %xi = tensor.extract_slice %x[%n, 0, 0] [1, 8, 8] [1, 1, 1] : tensor<4x8x8xf32> to tensor<1x8x8xf32>
    %ei = tensor.empty() : tensor<1x8x8xf32>
    %e = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
        ins(%xi : tensor<1x8x8xf32>) outs(%ei : tensor<1x8x8xf32>) {
    ^bb0(%in: f32, %o: f32):
      %v = math.exp %in : f32
      linalg.yield %v : f32
    } -> tensor<1x8x8xf32>
    %ins = tensor.insert_slice %e into %acc[%n, 0, 0] [1, 8, 8] [1, 1, 1] : tensor<1x8x8xf32> into tensor<4x8x8xf32>
    scf.yield %ins : tensor<4x8x8xf32>
  } {fuse.image_loop}
  return %r : tensor<4x8x8xf32>
}
