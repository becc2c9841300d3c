//===- DecomposePads.cpp - fuse-decompose-pads ----------------------------===//
//
// Constant tensor.pads as a fill and a copy into its interior.
//
//===----------------------------------------------------------------------===//

#include "fuse/Codegen/Passes.h"

#include "PassDetail.h"

#include "TileLoops.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "fuse-decompose-pads"

namespace fuse {
#define GEN_PASS_DEF_FUSEDECOMPOSEPADS
#include "fuse/Codegen/Passes.h.inc"
} // namespace fuse

using namespace mlir;

namespace {

/// Rewrites a tensor.pad with a constant value and static shapes as a fill
/// of the padded tensor and a linalg.copy of the source into its interior
/// (or the source's producer writing there), which are tiled and
/// vectorized like any op. (Left alone, the pad becomes a strided
/// memref.copy, which runs element by element in MLIR's C runtime: 9 ms for
/// the seed CNN's 5 MiB input gradient.)
void decomposePad(RewriterBase &rewriter, tensor::PadOp pad) {
  Value value = fuse::paddingValue(pad);
  RankedTensorType type = pad.getResultType();
  auto sourceType = cast<RankedTensorType>(pad.getSource().getType());
  if (!value || !type.hasStaticShape() || !sourceType.hasStaticShape())
    return;
  // A source that a linalg op computes without reading its output's old
  // contents is computed straight into the interior, which its other users,
  // linalg ops that only read it, then read there: no copy at all. (A
  // returned source would be copied out of the interior, slice by slice.)
  auto producer = pad.getSource().getDefiningOp<linalg::LinalgOp>();
  auto onlyRead = [&](OpOperand &use) {
    auto user = dyn_cast<linalg::LinalgOp>(use.getOwner());
    return use.getOwner() == pad || (user && user.isDpsInput(&use));
  };
  bool intoInterior =
      producer && producer.hasPureTensorSemantics() &&
      producer->getNumResults() == 1 && producer.getNumDpsInits() == 1 &&
      producer->getBlock() == pad->getBlock() &&
      !producer.payloadUsesValueFromOperand(producer.getDpsInitOperand(0)) &&
      llvm::all_of(pad.getSource().getUses(), onlyRead);
  Location loc = pad.getLoc();
  rewriter.setInsertionPoint(intoInterior ? producer.getOperation() : pad);
  Value empty = tensor::EmptyOp::create(rewriter, loc, type.getShape(),
                                        type.getElementType());
  Value filled =
      linalg::FillOp::create(rewriter, loc, value, empty)->getResult(0);
  SmallVector<OpFoldResult> offsets = pad.getMixedLowPad();
  SmallVector<OpFoldResult> sizes =
      getAsIndexOpFoldResult(rewriter.getContext(), sourceType.getShape());
  SmallVector<OpFoldResult> unit(type.getRank(), rewriter.getIndexAttr(1));
  Value interior = tensor::ExtractSliceOp::create(rewriter, loc, filled,
                                                  offsets, sizes, unit);
  Value source = pad.getSource();
  rewriter.setInsertionPoint(pad);
  if (intoInterior)
    rewriter.modifyOpInPlace(
        producer, [&] { producer.getDpsInitsMutable()[0].set(interior); });
  else
    source =
        linalg::CopyOp::create(rewriter, loc, source, interior)->getResult(0);
  rewriter.replaceOpWithNewOp<tensor::InsertSliceOp>(pad, source, filled,
                                                     offsets, sizes, unit);
}

struct DecomposePadsPass
    : fuse::impl::FuseDecomposePadsBase<DecomposePadsPass> {
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    SmallVector<tensor::PadOp> pads;
    getOperation().walk([&](tensor::PadOp pad) { pads.push_back(pad); });
    LLVM_DEBUG(llvm::dbgs() << pads.size() << " pads\n");
    for (tensor::PadOp pad : pads)
      decomposePad(rewriter, pad);
  }
};

} // namespace
