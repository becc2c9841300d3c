//===- FlattenEmptyArguments.cpp - The fuse-flatten-empty-arguments pass --===//

#include "fuse/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace fuse {
#define GEN_PASS_DEF_FUSEFLATTENEMPTYARGUMENTS
#include "fuse/Passes.h.inc"
} // namespace fuse

using namespace mlir;

namespace {
struct FuseFlattenEmptyArgumentsPass
    : fuse::impl::FuseFlattenEmptyArgumentsBase<FuseFlattenEmptyArgumentsPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    Block &entry = func.front();
    OpBuilder b = OpBuilder::atBlockBegin(&entry);
    SmallVector<Type> inputs(func.getArgumentTypes());
    for (auto [i, arg] : llvm::enumerate(entry.getArguments())) {
      auto type = dyn_cast<MemRefType>(arg.getType());
      if (!type || type.getRank() < 2 || !type.hasStaticShape() ||
          type.getNumElements() != 0 || !type.getLayout().isIdentity())
        continue;
      auto flat = MemRefType::get({0}, type.getElementType());
      arg.setType(flat);
      inputs[i] = flat;
      SmallVector<ReassociationIndices> all = {
          llvm::to_vector(llvm::seq<int64_t>(0, type.getRank()))};
      Value shaped =
          memref::ExpandShapeOp::create(b, func.getLoc(), type, arg, all);
      arg.replaceAllUsesExcept(shaped, shaped.getDefiningOp());
    }
    func.setType(
        FunctionType::get(&getContext(), inputs, func.getResultTypes()));
  }
};
} // namespace
