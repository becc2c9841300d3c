// fusec --profile times every operation of the compiled code.
// RUN: env FUSE_CACHE_DIR=off fusec run %s --entry=layer --arg=4x16xf32=iota --arg=16x8xf32=ones --arg=8xf32=0.5 --repeat=3 --profile | FileCheck %s --check-prefix=CALLS
// The profile's code is its own specialization: a disk cache filled without
// timers is not reused.
// RUN: rm -rf %t && mkdir -p %t
// RUN: env FUSE_CACHE_DIR=%t fusec run %s --entry=layer --arg=4x16xf32=iota --arg=16x8xf32=ones --arg=8xf32=0.5 --print-limit=0
// RUN: env FUSE_CACHE_DIR=%t fusec run %s --entry=layer --arg=4x16xf32=iota --arg=16x8xf32=ones --arg=8xf32=0.5 --repeat=2 --profile | FileCheck %s --check-prefix=CACHED
// RUN: fusec %s --emit=llvm-mlir --entry=layer --shape=x=4x16 --profile | FileCheck %s --check-prefix=IR
// A K-step function compiles with its stacked dims left dynamic.
// RUN: fusec %S/Inputs/mlp-hidden64.mlir --emit=linalg --entry=train_steps --shape=x=8x32x28x28 --shape=y=8x32 | FileCheck %s --check-prefix=STEPS

func.func @layer(%x: tensor<?x16xf32>, %w: tensor<16x8xf32>,
                 %b: tensor<8xf32>) -> tensor<?x8xf32> {
  %h = fuse.matmul %x, %w : (tensor<?x16xf32>, tensor<16x8xf32>) -> tensor<?x8xf32>
  %hb = fuse.add %h, %b : (tensor<?x8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
  %a = fuse.relu %hb : tensor<?x8xf32>
  return %a : tensor<?x8xf32>
}

// The results of the first call; then 3 timed calls, each op 3 times.
// CALLS: result #0: tensor<4x8xf32> = [120.5, 120.5,
// CALLS: 3 calls: {{[0-9.]+}} us per call (median {{[0-9.]+}}, fastest {{[0-9.]+}})
// CALLS: ms      %    calls    us/call  region
// CALLS-DAG: 3 {{ *[0-9.]+}}  layer: linalg.matmul 4x8xf32 profile.mlir:[[@LINE-10]]:8
// CALLS-DAG: 3 {{ *[0-9.]+}}  layer: linalg.fill 4x8xf32 profile.mlir:[[@LINE-11]]:8
// CALLS-DAG: 3 {{ *[0-9.]+}}  layer: linalg.generic 4x8xf32 profile.mlir:
// CALLS: 100.00 {{ *}}timed total

// CACHED: 2 {{ *[0-9.]+}}  layer: linalg.matmul 4x8xf32

// IR: llvm.call @fuse_timer_start()
// IR: llvm.call @fuse_timer_stop(

// STEPS: func.func @train_steps(
// STEPS-SAME: tensor<?x32x28x28xf32>
// STEPS: scf.for
