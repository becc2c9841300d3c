//===- SelectLoweringStrategy.cpp - fuse-select-lowering-strategy ---------===//
//
// Sets each linalg op's #fuse.lowering_config from the strategy library.
//
//===----------------------------------------------------------------------===//

#include "fuse/Codegen/Passes.h"

#include "PassDetail.h"

#include "LoweringStrategy.h"

#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "fuse-select-lowering-strategy"

namespace fuse {
#define GEN_PASS_DEF_FUSESELECTLOWERINGSTRATEGY
#include "fuse/Codegen/Passes.h.inc"
} // namespace fuse

using namespace mlir;

namespace {

struct SelectLoweringStrategyPass
    : fuse::impl::FuseSelectLoweringStrategyBase<SelectLoweringStrategyPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    unsigned bits = fuse::resolveVectorBits(func, vectorBits);
    fuse::LoweringOptions options;
    options.winograd = winograd;
    // An op that has a config keeps it: hand-written ones, and those a
    // rewrite set on the ops it created.
    func.walk([&](Operation *op) {
      if (!isa<fuse::AttentionOp, fuse::AttentionGradOp>(op) ||
          fuse::LoweringConfigAttr::lookup(op))
        return;
      if (fuse::LoweringConfigAttr config = fuse::chooseAttentionConfig(op)) {
        fuse::setLoweringConfig(op, config);
        LLVM_DEBUG(llvm::dbgs() << op->getName() << " at " << op->getLoc()
                                << ": " << config << "\n");
      }
    });
    func.walk([&](linalg::LinalgOp op) {
      if (fuse::LoweringConfigAttr::lookup(op))
        return;
      fuse::LoweringConfigAttr config =
          fuse::chooseLoweringConfig(op, bits, options);
      if (!config)
        return;
      fuse::setLoweringConfig(op, config);
      LLVM_DEBUG(llvm::dbgs() << op->getName() << " at " << op->getLoc() << ": "
                              << config << "\n");
    });
  }
};

} // namespace
