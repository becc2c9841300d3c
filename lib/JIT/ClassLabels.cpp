//===- ClassLabels.cpp - The engine's check of class labels ---------------===//

#include "ClassLabels.h"

#include "fuse/LabelRange.h"
#include "fuse/Passes.h"

#include "Fuse/IR/FuseDialect.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/PassManager.h"

using namespace fuse;

std::vector<int64_t> fuse::classLabelCounts(mlir::ModuleOp module,
                                            llvm::StringRef function) {
  std::vector<int64_t> classes;
  auto func = module.lookupSymbol<mlir::func::FuncOp>(function);
  if (!func)
    return classes;
  for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i) {
    auto count =
        func.getArgAttrOfType<mlir::IntegerAttr>(i, kClassLabelsAttrName);
    classes.push_back(count ? count.getInt() : 0);
  }
  return classes;
}

llvm::Error
fuse::checkClassLabels(llvm::ArrayRef<Tensor> args,
                       llvm::ArrayRef<void *> pointers,
                       llvm::ArrayRef<int64_t> classes,
                       llvm::function_ref<std::string(size_t)> describe) {
  for (auto [i, arg] : llvm::enumerate(args)) {
    if (i >= classes.size() || classes[i] <= 0)
      continue;
    Tensor data = Tensor::view(pointers[i], arg.dtype(), arg.shape());
    std::optional<BadLabel> bad = findLabelOutside(data, classes[i]);
    if (!bad)
      continue;
    return llvm::createStringError(
        describe(i) + ": label [" + labelPosition(arg.shape(), bad->index) +
        "] is " + llvm::Twine(bad->value) + ", outside [0, " +
        llvm::Twine(classes[i]) + ") for " + llvm::Twine(classes[i]) +
        " classes");
  }
  return llvm::Error::success();
}
