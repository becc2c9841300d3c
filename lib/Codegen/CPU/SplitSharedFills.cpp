//===- SplitSharedFills.cpp - fuse-split-shared-fills ---------------------===//
//
// One fill per linalg op that accumulates into it.
//
//===----------------------------------------------------------------------===//

#include "fuse/Codegen/Passes.h"

#include "PassDetail.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "fuse-split-shared-fills"

namespace fuse {
#define GEN_PASS_DEF_FUSESPLITSHAREDFILLS
#include "fuse/Codegen/Passes.h.inc"
} // namespace fuse

using namespace mlir;

namespace {

struct SplitSharedFillsPass
    : fuse::impl::FuseSplitSharedFillsBase<SplitSharedFillsPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    IRRewriter rewriter(&getContext());
    SmallVector<linalg::FillOp> fills;
    func.walk([&](linalg::FillOp fill) {
      if (fill.hasPureTensorSemantics())
        fills.push_back(fill);
    });
    for (linalg::FillOp fill : fills) {
      SmallVector<OpOperand *> inits;
      for (OpOperand &use : fill->getResult(0).getUses())
        if (auto user = dyn_cast<linalg::LinalgOp>(use.getOwner());
            user && user.isDpsInit(&use))
          inits.push_back(&use);
      // (A fill that no linalg op takes as output, only slices, has none.)
      if (inits.size() < 2)
        continue;
      LLVM_DEBUG(llvm::dbgs() << "fill at " << fill.getLoc() << ": "
                              << inits.size() << " accumulating users\n");
      // Each copy fills its own allocation, which CSE leaves distinct.
      for (OpOperand *use : llvm::drop_begin(inits)) {
        rewriter.setInsertionPoint(use->getOwner());
        auto type = cast<RankedTensorType>(fill.getResult(0).getType());
        if (!type.hasStaticShape())
          break;
        Value init = bufferization::AllocTensorOp::create(
            rewriter, fill.getLoc(), type, ValueRange{});
        auto copy = cast<linalg::FillOp>(rewriter.clone(*fill));
        copy.getDpsInitsMutable()[0].set(init);
        rewriter.modifyOpInPlace(use->getOwner(),
                                 [&] { use->set(copy->getResult(0)); });
      }
    }
  }
};

} // namespace
