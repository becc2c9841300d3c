//===- InPlaceResults.cpp - The fuse-in-place-results pass ----------------===//
//
// After bufferization a result marked `fuse.in_place = N` should be
// returned as argument N's buffer itself (fuse-distinct-results made that
// argument writable). The result leaves the signature: the caller finds it
// in the argument. If bufferization computed it elsewhere, it is copied
// into the argument, and that is reported, never silent.
//
//===----------------------------------------------------------------------===//

#include "fuse/Codegen/Passes.h"
#include "fuse/SourceNames.h"

#include "Fuse/IR/FuseDialect.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "llvm/ADT/BitVector.h"

namespace fuse {
#define GEN_PASS_DEF_FUSEINPLACERESULTS
#include "fuse/Codegen/Passes.h.inc"
} // namespace fuse

using namespace mlir;

namespace {

Value stripCasts(Value value) {
  while (auto cast = value.getDefiningOp<memref::CastOp>())
    value = cast.getSource();
  return value;
}

struct FuseInPlaceResultsPass
    : fuse::impl::FuseInPlaceResultsBase<FuseInPlaceResultsPass> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (!func.isExternal() && failed(dropInPlaceResults(func)))
        return signalPassFailure();
  }

  LogicalResult dropInPlaceResults(func::FuncOp func) {
    llvm::BitVector drop(func.getNumResults());
    for (unsigned j = 0; j < func.getNumResults(); ++j) {
      auto index =
          func.getResultAttrOfType<IntegerAttr>(j, fuse::kInPlaceAttrName);
      if (!index)
        continue;
      unsigned i = index.getInt();
      BlockArgument arg = func.getArgument(i);
      func.walk([&](func::ReturnOp ret) {
        Value value = ret.getOperand(j);
        if (stripCasts(value) == arg)
          return;
        emitWarning(arg.getLoc())
            << fuse::describeArgument(func, i) << " of '" << func.getSymName()
            << "' cannot be updated in place: result #" << j
            << " is computed in another buffer and copied into it (is the "
               "argument still read after its update?)";
        OpBuilder b(ret);
        memref::CopyOp::create(b, ret.getLoc(), value, arg);
      });
      drop.set(j);
    }
    if (drop.none())
      return success();
    func.walk([&](func::ReturnOp ret) { ret->eraseOperands(drop); });
    return func.eraseResults(drop);
  }
};

} // namespace
