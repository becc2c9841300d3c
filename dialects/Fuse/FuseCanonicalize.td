//===- FuseCanonicalize.td - fuse rewrite patterns --------*- tablegen -*-===//
//
// Declarative canonicalization patterns. Folds live in IR/FuseFolders.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_CANONICALIZE_TD
#define FUSE_CANONICALIZE_TD

include "mlir/IR/PatternBase.td"
include "Fuse/FuseOps.td"

// x + (-y) -> x - y
def AddOfNeg : Pat<(Fuse_AddOp $x, (Fuse_NegOp $y)), (Fuse_SubOp $x, $y)>;

// x - (-y) -> x + y
def SubOfNeg : Pat<(Fuse_SubOp $x, (Fuse_NegOp $y)), (Fuse_AddOp $x, $y)>;

def HasOneUse : Constraint<CPred<"$0.hasOneUse()">, "has one use">;

// max_pool2d(relu(x)) -> relu(max_pool2d(x)): max commutes with the monotone
// relu (padding is smaller than the window, so every window holds an input
// element). The relu then runs on the pooled tensor, and the backward pass
// needs no activation of the input's size.
def MaxPoolOfRelu
    : Pat<(Fuse_MaxPool2DOp (Fuse_ReluOp:$relu $x), $window, $strides,
              $padding),
          (Fuse_ReluOp (Fuse_MaxPool2DOp $x, $window, $strides, $padding)),
          [(HasOneUse $relu)]>;

#endif // FUSE_CANONICALIZE_TD
