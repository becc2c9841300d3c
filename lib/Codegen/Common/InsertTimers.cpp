//===- InsertTimers.cpp - The fuse-insert-timers pass ---------------------===//
//
// Brackets each top-level linalg op, tensor.pad and attention (still a fuse
// op here: fuse-tile-attention lowers it later) with calls to the JIT's
// timer functions, for a per-op profile of compiled code.
//
//===----------------------------------------------------------------------===//

#include "fuse/ABI.h"
#include "fuse/Codegen/Passes.h"

#include "Fuse/IR/FuseOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/raw_ostream.h"

namespace fuse {
#define GEN_PASS_DEF_FUSEINSERTTIMERS
#include "fuse/Codegen/Passes.h.inc"
} // namespace fuse

using namespace mlir;

namespace {

/// The first file location in `loc` (through names, fusions and call
/// sites), as `file:line:col` with the file's directory dropped.
std::string sourceLocation(Location loc) {
  std::string text;
  loc->walk([&](Location inner) {
    auto file = dyn_cast<FileLineColLoc>(inner);
    if (!file)
      return WalkResult::advance();
    StringRef name = file.getFilename().getValue();
    text = (name.substr(name.find_last_of('/') + 1) + ":" +
            Twine(file.getLine()) + ":" + Twine(file.getColumn()))
               .str();
    return WalkResult::interrupt();
  });
  return text;
}

/// `train: linalg.matmul 64x128xf32 mlp.mlir:20:9`: what a profile row
/// shows.
std::string regionName(StringRef function, Operation *op) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << function << ": " << op->getName();
  if (op->getNumResults() >= 1)
    if (auto type = dyn_cast<RankedTensorType>(op->getResult(0).getType())) {
      os << " ";
      llvm::interleave(type.getShape(), os, "x");
      os << (type.getRank() ? "x" : "") << type.getElementType();
    }
  std::string where = sourceLocation(op->getLoc());
  if (!where.empty())
    os << " " << where;
  return text;
}

/// The declaration of `name`, added to `module` if absent.
func::FuncOp declare(ModuleOp module, StringRef name, FunctionType type) {
  if (auto existing = module.lookupSymbol<func::FuncOp>(name))
    return existing;
  OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
  auto decl = func::FuncOp::create(b, module.getLoc(), name, type);
  decl.setPrivate();
  return decl;
}

struct FuseInsertTimersPass
    : fuse::impl::FuseInsertTimersBase<FuseInsertTimersPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    Builder types(ctx);
    Type i64 = types.getI64Type();
    Type ptr = LLVM::LLVMPointerType::get(ctx);

    SmallVector<std::pair<Operation *, std::string>> timed;
    for (auto func : module.getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      StringRef function = label.empty() ? func.getSymName() : label;
      func.walk<WalkOrder::PreOrder>([&](Operation *op) {
        if (!isa<linalg::LinalgOp, tensor::PadOp, fuse::AttentionOp,
                 fuse::AttentionGradOp>(op))
          return WalkResult::advance();
        timed.emplace_back(op, regionName(function, op));
        return WalkResult::skip();
      });
    }
    if (timed.empty())
      return;

    func::FuncOp start = declare(module, fuse::abi::kTimerStartSymbol,
                                 FunctionType::get(ctx, {}, {i64}));
    func::FuncOp stop = declare(module, fuse::abi::kTimerStopSymbol,
                                FunctionType::get(ctx, {i64, ptr}, {}));
    // One string per distinct name: ops with the same name (one source op
    // lowered to two identical ops) share it, and one profile row.
    llvm::StringMap<std::string> symbols;
    OpBuilder globals = OpBuilder::atBlockBegin(module.getBody());
    for (auto &[op, name] : timed) {
      OpBuilder b(op);
      Location loc = op->getLoc();
      Value begin =
          func::CallOp::create(b, loc, start, ValueRange{}).getResult(0);
      b.setInsertionPointAfter(op);
      auto [it, inserted] = symbols.try_emplace(name);
      if (inserted) {
        it->second = "fuse_timer_region_" + std::to_string(symbols.size() - 1);
        std::string text = name + '\0';
        auto type = LLVM::LLVMArrayType::get(types.getI8Type(), text.size());
        LLVM::GlobalOp::create(globals, loc, type, /*isConstant=*/true,
                               LLVM::Linkage::Internal, it->second,
                               types.getStringAttr(text));
      }
      Value text = LLVM::AddressOfOp::create(b, loc, ptr, it->second);
      func::CallOp::create(b, loc, stop, ValueRange{begin, text});
    }
  }
};

} // namespace
