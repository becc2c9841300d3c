// --fusion=false compiles op by op: Adam's update becomes one loop nest per
// arithmetic operation instead of one per parameter. `fusec run` agrees.
// RUN: fusec %s --emit=linalg | FileCheck %s --check-prefix=FUSED
// RUN: fusec %s --emit=linalg --fusion=false | FileCheck %s --check-prefix=UNFUSED
// RUN: fusec run %s --entry=step --arg=f32=0.1 --arg=i64=0 --arg=4xf32=iota --arg=4xf32=ones --arg=4xf32=zeros --arg=4xf32=zeros | FileCheck %s --check-prefix=CALL
// RUN: fusec run %s --fusion=false --entry=step --arg=f32=0.1 --arg=i64=0 --arg=4xf32=iota --arg=4xf32=ones --arg=4xf32=zeros --arg=4xf32=zeros | FileCheck %s --check-prefix=CALL

// FUSED-LABEL: func.func @step
// FUSED-COUNT-1: linalg.generic
// FUSED-NOT: linalg.generic
// UNFUSED-LABEL: func.func @step
// UNFUSED-COUNT-8: linalg.generic
// Adam's first step moves every parameter by lr against its gradient's sign,
// in both modes with the same bits (PyTorch's to f32 rounding: the bias
// corrections are computed in f64).
// CALL: result #0: tensor<4xf32> = [-0.1, 0.9, 1.9, 2.9]
// CALL: result #2: tensor<4xf32> = [0.001, 0.001, 0.001, 0.001]
func.func @step(%lr: tensor<f32>, %step: tensor<i64>, %p: tensor<4xf32>,
                %g: tensor<4xf32>, %m: tensor<4xf32>, %v: tensor<4xf32>)
    -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %r:3 = fuse.adam %lr, %step params(%p : tensor<4xf32>)
      grads(%g : tensor<4xf32>) states(%m, %v : tensor<4xf32>, tensor<4xf32>)
      -> tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
  return %r#0, %r#1, %r#2 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}
