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

#endif // FUSE_CANONICALIZE_TD
