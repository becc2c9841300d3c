//===- DistinctResults.cpp - The fuse-distinct-results pass ---------------===//

#include "fuse/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/DenseSet.h"

namespace fuse {
#define GEN_PASS_DEF_FUSEDISTINCTRESULTS
#include "fuse/Passes.h.inc"
} // namespace fuse

using namespace mlir;

namespace {
struct FuseDistinctResultsPass
    : fuse::impl::FuseDistinctResultsBase<FuseDistinctResultsPass> {
  void runOnOperation() override {
    getOperation().walk([](func::ReturnOp ret) {
      llvm::DenseSet<Value> seen;
      OpBuilder b(ret);
      for (OpOperand &operand : ret->getOpOperands()) {
        Value value = operand.get();
        auto type = dyn_cast<RankedTensorType>(value.getType());
        if (!type)
          continue;
        // Arguments, constants and views have no buffer of their own.
        Operation *def = value.getDefiningOp();
        bool borrowed =
            !def || isa<arith::ConstantOp, tensor::CollapseShapeOp,
                        tensor::ExpandShapeOp, tensor::CastOp,
                        tensor::ExtractSliceOp, tensor::ReshapeOp>(def);
        if (seen.insert(value).second && !borrowed)
          continue;
        Value init = tensor::EmptyOp::create(b, ret.getLoc(), type.getShape(),
                                             type.getElementType());
        operand.set(bufferization::MaterializeInDestinationOp::create(
                        b, ret.getLoc(), value, init)
                        .getResult());
      }
    });
  }
};
} // namespace
