//===- FuseDialect.cpp - The fuse dialect ---------------------------------===//

#include "Fuse/IR/FuseDialect.h"
#include "Fuse/IR/FuseOps.h"

using namespace mlir;
using namespace fuse;

#include "Fuse/FuseOpsDialect.cpp.inc"

void FuseDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "Fuse/FuseOps.cpp.inc"
      >();
}

Operation *FuseDialect::materializeConstant(OpBuilder &builder, Attribute value,
                                            Type type, Location loc) {
  auto elements = dyn_cast<ElementsAttr>(value);
  if (!elements || elements.getType() != type)
    return nullptr;
  return ConstantOp::create(builder, loc, elements);
}
