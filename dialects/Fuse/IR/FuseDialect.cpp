//===- FuseDialect.cpp - The fuse dialect ---------------------------------===//

#include "Fuse/IR/FuseDialect.h"
#include "Fuse/IR/FuseOps.h"

#include "mlir/Interfaces/FunctionInterfaces.h"

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

LogicalResult FuseDialect::verifyRegionResultAttribute(Operation *op,
                                                       unsigned regionIndex,
                                                       unsigned resultIndex,
                                                       NamedAttribute attr) {
  if (attr.getName() != kInPlaceAttrName)
    return op->emitError("unknown fuse result attribute '")
           << attr.getName().getValue() << "'";
  auto func = dyn_cast<FunctionOpInterface>(op);
  auto index = dyn_cast<IntegerAttr>(attr.getValue());
  if (!func || !index)
    return op->emitError("'")
           << kInPlaceAttrName
           << "' must be an integer (an argument index) on a function result";
  int64_t arg = index.getInt();
  ArrayRef<Type> args = func.getArgumentTypes();
  if (arg < 0 || arg >= static_cast<int64_t>(args.size()))
    return op->emitError("result #")
           << resultIndex << " is in place of argument #" << arg
           << ", but the function has " << args.size() << " arguments";
  Type result = func.getResultTypes()[resultIndex];
  if (args[arg] != result)
    return op->emitError("result #")
           << resultIndex << " (" << result << ") is in place of argument #"
           << arg << " of another type (" << args[arg] << ")";
  for (unsigned other = 0; other < resultIndex; ++other)
    if (auto earlier =
            func.getResultAttrOfType<IntegerAttr>(other, kInPlaceAttrName);
        earlier && earlier.getInt() == arg)
      return op->emitError("results #")
             << other << " and #" << resultIndex
             << " are both in place of argument #" << arg;
  return success();
}
