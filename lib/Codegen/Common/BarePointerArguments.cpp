//===- BarePointerArguments.cpp - fuse-bare-pointer-arguments -------------===//
//
// The bare-pointer calling convention takes only memrefs with static shapes
// and strides. Dynamic memrefs become a base pointer plus their sizes as
// trailing index arguments; zero-sized ones with no static strides become
// flat.
//
//===----------------------------------------------------------------------===//

#include "fuse/ABI.h"
#include "fuse/Codegen/Passes.h"

#include "Fuse/IR/FuseDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace fuse {
#define GEN_PASS_DEF_FUSEBAREPOINTERARGUMENTS
#include "fuse/Codegen/Passes.h.inc"
} // namespace fuse

using namespace mlir;

namespace {

/// `memref<4x0xf32>` as `memref<0xf32>`, expanded back at the entry.
void flattenEmpty(OpBuilder &b, BlockArgument arg, MemRefType type) {
  auto flat = MemRefType::get({0}, type.getElementType());
  arg.setType(flat);
  SmallVector<ReassociationIndices> all = {
      llvm::to_vector(llvm::seq<int64_t>(0, type.getRank()))};
  Value shaped = memref::ExpandShapeOp::create(b, arg.getLoc(), type, arg, all);
  arg.replaceAllUsesExcept(shaped, shaped.getDefiningOp());
}

/// A dynamic `memref<?x64xf32>` as its base pointer `memref<f32>` and one
/// new index argument per dynamic dim, rebuilt at the entry with
/// row-major strides. Returns the new size arguments.
SmallVector<BlockArgument> passSizes(OpBuilder &b, func::FuncOp func,
                                     BlockArgument arg, MemRefType type) {
  Location loc = arg.getLoc();
  arg.setType(MemRefType::get({}, type.getElementType(), nullptr,
                              type.getMemorySpace()));
  SmallVector<BlockArgument> sizeArgs;
  SmallVector<OpFoldResult> sizes;
  for (int64_t size : type.getShape()) {
    if (!ShapedType::isDynamic(size)) {
      sizes.push_back(b.getIndexAttr(size));
      continue;
    }
    unsigned index = func.getNumArguments();
    (void)func.insertArgument(index, b.getIndexType(), {}, loc);
    sizeArgs.push_back(func.getArgument(index));
    sizes.push_back(sizeArgs.back());
  }
  auto multiply = [&](OpFoldResult x, OpFoldResult y) -> OpFoldResult {
    std::optional<int64_t> a = getConstantIntValue(x);
    std::optional<int64_t> c = getConstantIntValue(y);
    if (a && c)
      return b.getIndexAttr(*a * *c);
    return arith::MulIOp::create(b, loc,
                                 getValueOrCreateConstantIndexOp(b, loc, x),
                                 getValueOrCreateConstantIndexOp(b, loc, y))
        .getResult();
  };
  // Row-major: each stride is the product of the sizes after its dim.
  SmallVector<OpFoldResult> strides(type.getRank(), b.getIndexAttr(1));
  for (int64_t d = type.getRank() - 1; d > 0; --d)
    strides[d - 1] = multiply(strides[d], sizes[d]);
  Value shaped = memref::ReinterpretCastOp::create(
      b, loc, type, arg, b.getIndexAttr(0), sizes, strides);
  arg.replaceAllUsesExcept(shaped, shaped.getDefiningOp());
  return sizeArgs;
}

struct FuseBarePointerArgumentsPass
    : fuse::impl::FuseBarePointerArgumentsBase<FuseBarePointerArgumentsPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    Block &entry = func.front();
    OpBuilder b = OpBuilder::atBlockBegin(&entry);
    SmallVector<int64_t> dynamicSizes;
    unsigned numArgs = func.getNumArguments();
    for (unsigned i = 0; i < numArgs; ++i) {
      BlockArgument arg = func.getArgument(i);
      auto type = dyn_cast<MemRefType>(arg.getType());
      if (!type || !type.getLayout().isIdentity())
        continue;
      if (!type.hasStaticShape()) {
        SmallVector<BlockArgument> sizes = passSizes(b, func, arg, type);
        for (auto [d, size] : llvm::enumerate(type.getShape()))
          if (ShapedType::isDynamic(size))
            dynamicSizes.append(
                {static_cast<int64_t>(i), static_cast<int64_t>(d)});
        continue;
      }
      if (type.getRank() >= 2 && type.getNumElements() == 0)
        flattenEmpty(b, arg, type);
    }
    // The signature is final: the attributes that described the arguments'
    // roles (stacked dims are now size arguments) have no LLVM meaning.
    for (unsigned i = 0; i < numArgs; ++i)
      for (StringRef name : {fuse::kStackedAttrName, fuse::kPerStepAttrName,
                             fuse::kStepCounterAttrName})
        func.removeArgAttr(i, name);
    func.setType(FunctionType::get(&getContext(), entry.getArgumentTypes(),
                                   func.getResultTypes()));
    if (!dynamicSizes.empty())
      func->setAttr(fuse::abi::kDynamicSizesAttrName,
                    b.getDenseI64ArrayAttr(dynamicSizes));
  }
};

} // namespace
