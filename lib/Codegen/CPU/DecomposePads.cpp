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
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "fuse-decompose-pads"

namespace fuse {
#define GEN_PASS_DEF_FUSEDECOMPOSEPADS
#include "fuse/Codegen/Passes.h.inc"
} // namespace fuse

using namespace mlir;

namespace {

/// `empty` (of `type`) with its border around the interior at `low` x
/// `sizes` filled with `value`: per padded dim, in order, the slab before
/// the interior and the slab after it, each across the interior of the dims
/// before and the whole of the dims after. The interior is left for its
/// writer: filling it too would write most of the tensor twice (the seed
/// CNN's padded output gradient, 28 x 28 around 24 x 24, is 73% interior).
Value fillBorder(OpBuilder &b, Location loc, Value value, Value empty,
                 RankedTensorType type, ArrayRef<int64_t> low,
                 ArrayRef<int64_t> sizes) {
  int64_t rank = type.getRank();
  Value result = empty;
  SmallVector<int64_t> offsets(rank, 0), extents(type.getShape());
  for (int64_t d = 0; d < rank; ++d) {
    int64_t high = type.getDimSize(d) - low[d] - sizes[d];
    for (auto [begin, size] :
         {std::pair{int64_t(0), low[d]}, std::pair{low[d] + sizes[d], high}}) {
      if (size == 0 || llvm::is_contained(extents, 0))
        continue;
      offsets[d] = begin;
      extents[d] = size;
      SmallVector<OpFoldResult> at =
          getAsIndexOpFoldResult(b.getContext(), offsets);
      SmallVector<OpFoldResult> extent =
          getAsIndexOpFoldResult(b.getContext(), extents);
      SmallVector<OpFoldResult> unit(rank, b.getIndexAttr(1));
      Value slab =
          tensor::ExtractSliceOp::create(b, loc, result, at, extent, unit);
      Value filled = linalg::FillOp::create(b, loc, value, slab)->getResult(0);
      result = tensor::InsertSliceOp::create(b, loc, filled, result, at, extent,
                                             unit);
    }
    // The dims after this one see only its interior.
    offsets[d] = low[d];
    extents[d] = sizes[d];
  }
  return result;
}

/// Rewrites a tensor.pad with a constant value and static shapes as fills
/// of the padded tensor's border and a linalg.copy of the source into its
/// interior (or the source's producer writing there), which are tiled and
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
  // So is a source that collapses such an op's result (a pool's gradient,
  // computed over windows): the op writes an expanded view of the interior.
  auto collapse = pad.getSource().getDefiningOp<tensor::CollapseShapeOp>();
  Value computed = collapse ? collapse.getSrc() : pad.getSource();
  auto producer = computed.getDefiningOp<linalg::LinalgOp>();
  auto onlyRead = [&](OpOperand &use) {
    auto user = dyn_cast<linalg::LinalgOp>(use.getOwner());
    return use.getOwner() == pad || use.getOwner() == collapse ||
           (user && user.isDpsInput(&use));
  };
  bool intoInterior =
      producer && producer.hasPureTensorSemantics() &&
      producer->getNumResults() == 1 && producer.getNumDpsInits() == 1 &&
      producer->getBlock() == pad->getBlock() &&
      !producer.payloadUsesValueFromOperand(producer.getDpsInitOperand(0)) &&
      llvm::all_of(pad.getSource().getUses(), onlyRead) &&
      llvm::all_of(computed.getUses(), onlyRead);
  Location loc = pad.getLoc();
  rewriter.setInsertionPoint(intoInterior ? producer.getOperation() : pad);
  Value empty = tensor::EmptyOp::create(rewriter, loc, type.getShape(),
                                        type.getElementType());
  SmallVector<OpFoldResult> offsets = pad.getMixedLowPad();
  std::optional<SmallVector<int64_t>> low = getConstantIntValues(offsets);
  Value filled =
      low ? fillBorder(rewriter, loc, value, empty, type, *low,
                       sourceType.getShape())
          : linalg::FillOp::create(rewriter, loc, value, empty)->getResult(0);
  SmallVector<OpFoldResult> sizes =
      getAsIndexOpFoldResult(rewriter.getContext(), sourceType.getShape());
  SmallVector<OpFoldResult> unit(type.getRank(), rewriter.getIndexAttr(1));
  Value interior = tensor::ExtractSliceOp::create(rewriter, loc, filled,
                                                  offsets, sizes, unit);
  Value source = pad.getSource();
  rewriter.setInsertionPoint(pad);
  if (intoInterior) {
    Value init = interior;
    if (collapse) {
      rewriter.setInsertionPoint(producer);
      init = tensor::ExpandShapeOp::create(rewriter, loc, computed.getType(),
                                           interior,
                                           collapse.getReassociationIndices());
      rewriter.setInsertionPoint(pad);
    }
    rewriter.modifyOpInPlace(
        producer, [&] { producer.getDpsInitsMutable()[0].set(init); });
  } else
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
