//===- FuseAttrs.td - fuse dialect attributes -------------*- tablegen -*-===//

#ifndef FUSE_ATTRS_TD
#define FUSE_ATTRS_TD

include "mlir/IR/EnumAttr.td"

def Fuse_ComparePredicate : I32EnumAttr<"ComparePredicate",
    "element-wise comparison predicate", [
      I32EnumAttrCase<"eq", 0>,
      I32EnumAttrCase<"ne", 1>,
      I32EnumAttrCase<"lt", 2>,
      I32EnumAttrCase<"le", 3>,
      I32EnumAttrCase<"gt", 4>,
      I32EnumAttrCase<"ge", 5>
    ]> {
  let cppNamespace = "::fuse";
}

#endif // FUSE_ATTRS_TD
