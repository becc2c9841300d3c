//===- MarkClassLabels.cpp - The fuse-mark-class-labels pass --------------===//
//
// Out-of-range class labels are not an error compiled code could report:
// cross-entropy would read no logit and return the row's logsumexp. The
// engine checks them before each call instead, for arguments this pass
// marks with their class count. An embedding's indices (fuse.gather) are
// checked the same way against the table's rows.
//
//===----------------------------------------------------------------------===//

#include "fuse/Transforms/Passes.h"

#include "Fuse/IR/FuseDialect.h"
#include "Fuse/IR/FuseOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace fuse {
#define GEN_PASS_DEF_FUSEMARKCLASSLABELS
#include "fuse/Transforms/Passes.h.inc"
} // namespace fuse

using namespace mlir;

namespace {

/// The logits' static class count of a labels operand, or 0.
int64_t classesOf(OpOperand &use) {
  Operation *user = use.getOwner();
  Value logits;
  if (auto op = dyn_cast<fuse::SoftmaxCrossEntropyOp>(user);
      op && &use == &op.getLabelsMutable())
    logits = op.getLogits();
  if (auto op = dyn_cast<fuse::SoftmaxCrossEntropyGradOp>(user);
      op && &use == &op.getLabelsMutable())
    logits = op.getLogits();
  // An embedding's indices: the table's rows are the classes.
  Value table;
  if (auto op = dyn_cast<fuse::GatherOp>(user);
      op && &use == &op.getIndicesMutable())
    table = op.getTable();
  if (auto op = dyn_cast<fuse::ScatterAddOp>(user);
      op && &use == &op.getIndicesMutable())
    table = op.getTable();
  if (table) {
    int64_t rows = cast<RankedTensorType>(table.getType()).getDimSize(0);
    return ShapedType::isDynamic(rows) ? 0 : rows;
  }
  if (!logits)
    return 0;
  int64_t classes = cast<RankedTensorType>(logits.getType()).getDimSize(1);
  return ShapedType::isDynamic(classes) ? 0 : classes;
}

/// The values holding `value`'s elements unchanged, in another shape or
/// slice: labels reach the loss through them (a K-step function slices one
/// step's batch out of the stacked labels).
void forwardedValues(OpOperand &use, SmallVectorImpl<Value> &out) {
  Operation *user = use.getOwner();
  if (auto slice = dyn_cast<tensor::ExtractSliceOp>(user)) {
    if (&use == &slice.getSourceMutable())
      out.push_back(slice.getResult());
    return;
  }
  if (isa<tensor::CastOp, tensor::CollapseShapeOp, tensor::ExpandShapeOp,
          fuse::ReshapeOp, fuse::ExpandDimsOp, fuse::SliceOp>(user) &&
      use.getOperandNumber() == 0)
    out.push_back(user->getResult(0));
}

/// The smallest class count of the losses `arg` reaches as labels, or 0.
int64_t classCount(BlockArgument arg) {
  int64_t classes = 0;
  SmallVector<Value> worklist = {arg};
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    for (OpOperand &use : value.getUses()) {
      if (int64_t c = classesOf(use))
        classes = classes ? std::min(classes, c) : c;
      forwardedValues(use, worklist);
    }
  }
  return classes;
}

struct FuseMarkClassLabelsPass
    : fuse::impl::FuseMarkClassLabelsBase<FuseMarkClassLabelsPass> {
  void runOnOperation() override {
    Builder builder(&getContext());
    getOperation().walk([&](func::FuncOp func) {
      if (func.isExternal())
        return;
      for (BlockArgument arg : func.getArguments()) {
        auto type = dyn_cast<RankedTensorType>(arg.getType());
        if (!type || !isa<IntegerType>(type.getElementType()))
          continue;
        int64_t classes = classCount(arg);
        if (!classes)
          continue;
        unsigned i = arg.getArgNumber();
        if (auto declared = func.getArgAttrOfType<IntegerAttr>(
                i, fuse::kClassLabelsAttrName))
          classes = std::min(classes, declared.getInt());
        func.setArgAttr(i, fuse::kClassLabelsAttrName,
                        builder.getI64IntegerAttr(classes));
      }
    });
  }
};

} // namespace
