//===- DistributeImageLoops.cpp - fuse-distribute-image-loops -------------===//
//
// Runs the image loops that fuse-image-loop-fusion leaves (a Winograd
// convolution with its fused ReLU, pool and dropout, a filter gradient's
// per-image work) on the threads: each becomes an scf.forall over blocks of
// images, each block a loop over its images as before. An image's work does
// not depend on another's, so the bits do not depend on the thread count.
//
//===----------------------------------------------------------------------===//

#include "fuse/Codegen/Passes.h"

#include "ImageLoopFusion.h"
#include "LoweringStrategy.h"
#include "TileLoops.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "fuse-distribute-image-loops"

namespace fuse {
#define GEN_PASS_DEF_FUSEDISTRIBUTEIMAGELOOPS
#include "fuse/Codegen/Passes.h.inc"
} // namespace fuse

using namespace mlir;

namespace {

/// How an iteration of an image loop uses a tensor it carries.
enum class Carried {
  /// A batch-sized result whose image n iteration n inserts: shared by the
  /// threads, each writing its images.
  Images,
  /// A buffer the loop's iterations reuse (an image's scratch, created
  /// empty or filled before the loop, its result unused): one per block.
  Scratch,
  /// A tensor every iteration yields as it gets it (a batch no longer
  /// stored once its consumer was fused): the block reads the loop's init.
  Unchanged,
};

/// Whether `init` is a new buffer: empty, or filled with a value (a padded
/// image's zero border, which the iterations keep), so that each block can
/// create its own.
bool createsScratch(Value init) {
  Operation *op = init.getDefiningOp();
  if (auto fill = dyn_cast_or_null<linalg::FillOp>(op)) {
    if (!fill.hasPureTensorSemantics())
      return false;
    op = fill.getDpsInits()[0].getDefiningOp();
  }
  return op && op->getNumOperands() == 0 &&
         isa<tensor::EmptyOp, bufferization::AllocTensorOp>(op);
}

/// A new buffer in place of `init` (createsScratch), at the builder's
/// insertion point.
Value cloneScratch(OpBuilder &rewriter, Value init) {
  auto fill = init.getDefiningOp<linalg::FillOp>();
  Operation *buffer = (fill ? fill.getDpsInits()[0] : init).getDefiningOp();
  Value created = rewriter.clone(*buffer)->getResult(0);
  if (!fill)
    return created;
  IRMapping map;
  map.map(buffer->getResult(0), created);
  return rewriter.clone(*fill, map)->getResult(0);
}

/// The kind of each tensor `loop` carries, or nothing if one is neither.
std::optional<SmallVector<Carried>> classify(scf::ForOp loop) {
  SmallVector<Carried> kinds;
  for (unsigned i = 0; i < loop.getNumRegionIterArgs(); ++i) {
    if (fuse::storedImage(loop, i)) {
      kinds.push_back(Carried::Images);
      continue;
    }
    if (loop.getYieldedValues()[i] == loop.getRegionIterArgs()[i]) {
      kinds.push_back(Carried::Unchanged);
      continue;
    }
    if (createsScratch(loop.getInitArgs()[i]) &&
        loop->getResult(i).use_empty()) {
      kinds.push_back(Carried::Scratch);
      continue;
    }
    LLVM_DEBUG(llvm::dbgs()
               << "image loop at " << loop.getLoc() << ": carries tensor " << i
               << " across images; not distributed\n");
    return std::nullopt;
  }
  return kinds;
}

/// The work of one iteration of `loop`: the iterations of every linalg op
/// in its body times the trips of the loops around it inside the body.
int64_t workPerIteration(scf::ForOp loop) {
  int64_t work = 0;
  loop.getBody()->walk([&](linalg::LinalgOp op) {
    int64_t size = 1;
    for (int64_t range : op.getStaticLoopRanges())
      size *= ShapedType::isDynamic(range) ? 1 : range;
    for (Operation *parent = op->getParentOp(); parent != loop;
         parent = parent->getParentOp())
      if (auto inner = dyn_cast<scf::ForOp>(parent)) {
        std::optional<int64_t> lower =
            getConstantIntValue(inner.getLowerBound());
        std::optional<int64_t> upper =
            getConstantIntValue(inner.getUpperBound());
        std::optional<int64_t> step = getConstantIntValue(inner.getStep());
        if (lower && upper && step && *step > 0 && *upper > *lower)
          size *= (*upper - *lower + *step - 1) / *step;
      }
    work += size;
  });
  return work;
}

/// Rewrites `loop` (an image loop over `images` images) into an scf.forall
/// over blocks of `block` images.
void distribute(RewriterBase &rewriter, scf::ForOp loop, int64_t block,
                ArrayRef<Carried> kinds) {
  Location loc = loop.getLoc();
  int64_t images = *getConstantIntValue(loop.getUpperBound());
  SmallVector<Value> shared;
  for (auto [init, kind] : llvm::zip(loop.getInitArgs(), kinds))
    if (kind == Carried::Images)
      shared.push_back(init);
  rewriter.setInsertionPoint(loop);
  scf::ForallOp forall = fuse::buildBlockLoop(
      rewriter, loc, images, block, /*dim=*/0, shared,
      [&](OpBuilder &b, Value first,
          ValueRange sharedArgs) -> SmallVector<Value> {
        // The block's loop carries the shared tensors and scratch of its
        // own.
        SmallVector<Value> inits;
        unsigned next = 0;
        for (auto [init, kind] : llvm::zip(loop.getInitArgs(), kinds)) {
          if (kind == Carried::Images)
            inits.push_back(sharedArgs[next++]);
          else if (kind == Carried::Scratch)
            inits.push_back(cloneScratch(b, init));
          else
            inits.push_back(init);
        }
        Value zero = arith::ConstantIndexOp::create(b, loc, 0);
        Value count = arith::ConstantIndexOp::create(b, loc, block);
        Value one = arith::ConstantIndexOp::create(b, loc, 1);
        auto inner = scf::ForOp::create(b, loc, zero, count, one, inits);
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(inner.getBody());
        IRMapping map;
        map.map(loop.getInductionVar(),
                arith::AddIOp::create(b, loc, first, inner.getInductionVar())
                    .getResult());
        map.map(loop.getRegionIterArgs(), inner.getRegionIterArgs());
        for (Operation &op : loop.getBody()->without_terminator())
          b.clone(op, map);
        auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
        SmallVector<Value> yielded;
        for (Value value : yield.getOperands())
          yielded.push_back(map.lookupOrDefault(value));
        scf::YieldOp::create(b, loc, yielded);
        // Each block inserts its images of the shared tensors.
        SmallVector<Value> results;
        for (auto [result, kind] : llvm::zip(inner.getResults(), kinds))
          if (kind == Carried::Images)
            results.push_back(result);
        return results;
      });
  // The loop's results: the shared tensors' from the forall, the unchanged
  // ones' inits; scratch ones are unused.
  unsigned next = 0;
  for (auto [result, init, kind] :
       llvm::zip(loop.getResults(), loop.getInitArgs(), kinds)) {
    if (kind == Carried::Images)
      rewriter.replaceAllUsesWith(result, forall.getResult(next++));
    else if (kind == Carried::Unchanged)
      rewriter.replaceAllUsesWith(result, init);
  }
  rewriter.eraseOp(loop);
}

struct DistributeImageLoopsPass
    : fuse::impl::FuseDistributeImageLoopsBase<DistributeImageLoopsPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    IRRewriter rewriter(&getContext());
    SmallVector<scf::ForOp> loops;
    func.walk([&](scf::ForOp loop) {
      if (loop->hasAttr(fuse::kImageLoopAttrName))
        loops.push_back(loop);
    });
    for (scf::ForOp loop : loops) {
      loop->removeAttr(fuse::kImageLoopAttrName);
      std::optional<int64_t> images = getConstantIntValue(loop.getUpperBound());
      if (!images || !isZeroInteger(loop.getLowerBound()) ||
          getConstantIntValue(loop.getStep()) != 1)
        continue;
      std::optional<SmallVector<Carried>> kinds = classify(loop);
      if (!kinds)
        continue;
      int64_t block =
          fuse::chooseImageLoopBlock(*images, workPerIteration(loop));
      LLVM_DEBUG(llvm::dbgs() << "image loop at " << loop.getLoc()
                              << ": blocks of " << block << " images\n");
      if (block != 0)
        distribute(rewriter, loop, block, *kinds);
    }
  }
};

} // namespace
