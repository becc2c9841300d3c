//===- DistinctResults.cpp - The fuse-distinct-results pass ---------------===//

#include "fuse/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
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
        bool computed =
            isa_and_nonnull<linalg::LinalgOp>(value.getDefiningOp());
        if (seen.insert(value).second && computed)
          continue;
        Value init = tensor::EmptyOp::create(b, ret.getLoc(), type.getShape(),
                                             type.getElementType());
        operand.set(
            linalg::CopyOp::create(b, ret.getLoc(), value, init).getResult(0));
      }
    });
  }
};
} // namespace
