//===- DistinctResults.cpp - The fuse-distinct-results pass ---------------===//

#include "fuse/Codegen/Passes.h"

#include "Fuse/IR/FuseDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "llvm/ADT/DenseSet.h"

namespace fuse {
#define GEN_PASS_DEF_FUSEDISTINCTRESULTS
#include "fuse/Codegen/Passes.h.inc"
} // namespace fuse

using namespace mlir;

namespace {
/// Whether `value` is computed into `destination`: reached from it through
/// destination-passing ops (their tied `outs`) and the inits of loops.
/// Bufferization then keeps it in the destination's buffer.
bool computedInto(Value value, Value destination) {
  while (value != destination) {
    auto result = dyn_cast<OpResult>(value);
    if (!result)
      return false;
    Operation *op = result.getOwner();
    if (auto dps = dyn_cast<DestinationStyleOpInterface>(op))
      value = dps.getTiedOpOperand(result)->get();
    else if (auto loop = dyn_cast<scf::ForOp>(op))
      value = loop.getInits()[result.getResultNumber()];
    else if (auto materialize =
                 dyn_cast<bufferization::MaterializeInDestinationOp>(op))
      value = materialize.getDest();
    else
      return false;
  }
  return true;
}

struct FuseDistinctResultsPass
    : fuse::impl::FuseDistinctResultsBase<FuseDistinctResultsPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    // Arguments are the caller's: read-only, unless a result is tied to one.
    SmallVector<Value> tiedArg(func.getNumResults());
    llvm::DenseSet<unsigned> writable;
    for (unsigned j = 0; j < func.getNumResults(); ++j)
      if (auto index = func.getResultAttrOfType<IntegerAttr>(
              j, fuse::kInPlaceAttrName)) {
        tiedArg[j] = func.getArgument(index.getInt());
        writable.insert(index.getInt());
      }
    Builder builder(func.getContext());
    for (unsigned i = 0; i < func.getNumArguments(); ++i)
      if (isa<TensorType>(func.getArgument(i).getType()))
        func.setArgAttr(i,
                        bufferization::BufferizationDialect::kWritableAttrName,
                        builder.getBoolAttr(writable.contains(i)));

    // A loop's carried value (the K-step function's parameters and states)
    // must end each iteration in the buffer it started in, however it was
    // computed: one written into a new tensor (the unfused optimizer's
    // update) is copied into it at the yield.
    func.walk([&](scf::ForOp loop) {
      auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
      OpBuilder b(yield);
      for (auto [operand, iterArg] :
           llvm::zip_equal(yield->getOpOperands(), loop.getRegionIterArgs())) {
        Value value = operand.get();
        if (!isa<RankedTensorType>(value.getType()) ||
            computedInto(value, iterArg))
          continue;
        operand.set(bufferization::MaterializeInDestinationOp::create(
                        b, yield.getLoc(), value, iterArg)
                        .getResult());
      }
    });

    func.walk([&](func::ReturnOp ret) {
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
        // A tied result is computed in its argument's buffer where
        // bufferization can (fuse-in-place-results checks), unless it is
        // that argument unchanged. Another argument (say, two parameters
        // swapped) is copied first, so the copies into the arguments that
        // follow never read an argument already overwritten.
        if (Value arg = tiedArg[operand.getOperandNumber()]) {
          if (value == arg || (seen.insert(value).second && !borrowed))
            continue;
        } else if (seen.insert(value).second && !borrowed) {
          continue;
        }
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
