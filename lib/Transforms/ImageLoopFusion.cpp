//===- ImageLoopFusion.cpp - Fusing loops over a batch's images -----------===//

#include "ImageLoopFusion.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;

void fuse::markImageLoop(scf::ForOp loop) {
  loop->setAttr(kImageLoopAttr, UnitAttr::get(loop.getContext()));
}

namespace {

bool isImage(OpFoldResult offset, Value iv) {
  return dyn_cast<Value>(offset) == iv;
}

/// The image that an iteration of `loop` stores as its result `i`: the
/// source of the insert_slice it yields, at [iv, 0, ...] and one image in
/// size, or null.
Value storedImage(scf::ForOp loop, unsigned i) {
  auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
  auto insert = yield.getOperand(i).getDefiningOp<tensor::InsertSliceOp>();
  if (!insert || insert.getDest() != loop.getRegionIterArgs()[i] ||
      !insert.hasUnitStride() ||
      insert.getSourceType().getRank() != insert.getType().getRank())
    return {};
  SmallVector<OpFoldResult> offsets = insert.getMixedOffsets();
  SmallVector<OpFoldResult> sizes = insert.getMixedSizes();
  if (!isImage(offsets[0], loop.getInductionVar()) ||
      getConstantIntValue(sizes[0]) != 1)
    return {};
  for (int64_t d = 1; d < insert.getType().getRank(); ++d)
    if (!isZeroInteger(offsets[d]) ||
        getConstantIntValue(sizes[d]) != insert.getType().getDimSize(d))
      return {};
  return insert.getSource();
}

/// Whether `slice` reads one image of its source: the one at `iv`.
bool readsImage(tensor::ExtractSliceOp slice, Value iv) {
  return isImage(slice.getMixedOffsets()[0], iv) &&
         getConstantIntValue(slice.getMixedSizes()[0]) == 1;
}

bool sameConstant(Value a, Value b) {
  std::optional<int64_t> value = getConstantIntValue(a);
  return value && value == getConstantIntValue(b);
}

/// Whether `consumer`, an image loop after `producer` in its block, can take
/// `producer`'s iterations into its own: it reads producer's results only as
/// images that producer stores, one at its own image, and nothing between
/// the two or before reads them.
bool canFuse(scf::ForOp producer, scf::ForOp consumer) {
  if (producer->getBlock() != consumer->getBlock() ||
      !producer->isBeforeInBlock(consumer) ||
      !sameConstant(producer.getLowerBound(), consumer.getLowerBound()) ||
      !sameConstant(producer.getUpperBound(), consumer.getUpperBound()) ||
      !sameConstant(producer.getStep(), consumer.getStep()))
    return false;
  bool consumes = false;
  for (OpResult result : producer->getResults()) {
    for (OpOperand &use : result.getUses()) {
      Operation *user = use.getOwner();
      if (consumer->isProperAncestor(user)) {
        auto slice = dyn_cast<tensor::ExtractSliceOp>(user);
        if (!slice || !readsImage(slice, consumer.getInductionVar()) ||
            !storedImage(producer, result.getResultNumber()))
          return false;
        consumes = true;
        continue;
      }
      Operation *ancestor = consumer->getBlock()->findAncestorOpInBlock(*user);
      if (!ancestor || !consumer->isBeforeInBlock(ancestor))
        return false;
    }
  }
  return consumes;
}

/// Whether every use of `iterArg` in its loop's body, but `store`, is a
/// slice that only a linalg op's output takes, without reading it: then
/// those outputs can go to a buffer of one image instead.
bool onlyWrittenThrough(BlockArgument iterArg, Operation *store) {
  for (Operation *user : iterArg.getUsers()) {
    if (user == store)
      continue;
    auto slice = dyn_cast<tensor::ExtractSliceOp>(user);
    if (!slice || !slice.getType().hasStaticShape())
      return false;
    for (OpOperand &use : slice->getUses()) {
      auto writer = dyn_cast<linalg::LinalgOp>(use.getOwner());
      if (!writer || !writer.isDpsInit(&use) ||
          writer.payloadUsesValueFromOperand(&use))
        return false;
    }
  }
  return true;
}

/// Fuses `producer` into `consumer` (see canFuse): one loop at the
/// consumer, whose iteration runs the producer's body and then the
/// consumer's, reading the images the producer's body has just stored.
scf::ForOp fuseLoops(RewriterBase &rewriter, scf::ForOp producer,
                     scf::ForOp consumer) {
  unsigned count = producer.getNumRegionIterArgs();
  SmallVector<Value> inits(producer.getInitArgs());
  llvm::append_range(inits, consumer.getInitArgs());
  SmallVector<Value> images(count);
  rewriter.setInsertionPoint(consumer);
  auto fused = scf::ForOp::create(
      rewriter, consumer.getLoc(), consumer.getLowerBound(),
      consumer.getUpperBound(), consumer.getStep(), inits,
      [&](OpBuilder &b, Location loc, Value iv, ValueRange carried) {
        IRMapping map;
        SmallVector<Value> yields;
        for (auto [loop, args] :
             {std::pair(producer, carried.take_front(count)),
              std::pair(consumer, carried.drop_front(count))}) {
          map.map(loop.getInductionVar(), iv);
          map.map(loop.getRegionIterArgs(), args);
          for (Operation &op : loop.getBody()->without_terminator())
            b.clone(op, map);
          for (Value v : loop.getBody()->getTerminator()->getOperands())
            yields.push_back(map.lookupOrDefault(v));
        }
        for (unsigned i = 0; i < count; ++i)
          if (Value image = storedImage(producer, i))
            images[i] = map.lookup(image);
        scf::YieldOp::create(b, loc, yields);
      });
  fuse::markImageLoop(fused);

  // The consumer's reads of an image take it from the producer's body.
  SmallVector<tensor::ExtractSliceOp> reads;
  fused.walk([&](tensor::ExtractSliceOp slice) {
    if (auto result = dyn_cast<OpResult>(slice.getSource());
        result && result.getOwner() == producer)
      reads.push_back(slice);
  });
  for (tensor::ExtractSliceOp slice : reads) {
    SmallVector<OpFoldResult> offsets = slice.getMixedOffsets();
    offsets[0] = rewriter.getIndexAttr(0);
    rewriter.setInsertionPoint(slice);
    rewriter.replaceOpWithNewOp<tensor::ExtractSliceOp>(
        slice, slice.getType(),
        images[cast<OpResult>(slice.getSource()).getResultNumber()], offsets,
        slice.getMixedSizes(), slice.getMixedStrides());
  }
  rewriter.replaceOp(producer, fused.getResults().take_front(count));
  rewriter.replaceOp(consumer, fused.getResults().drop_front(count));

  // A result that nothing reads any more is not stored: its images go to a
  // buffer of one image (the loop-carried tensor then goes to
  // canonicalization).
  auto yield = cast<scf::YieldOp>(fused.getBody()->getTerminator());
  for (unsigned i = 0; i < count; ++i) {
    BlockArgument iterArg = fused.getRegionIterArgs()[i];
    Operation *store = yield.getOperand(i).getDefiningOp();
    if (!images[i] || !fused.getResult(i).use_empty() ||
        !onlyWrittenThrough(iterArg, store))
      continue;
    rewriter.modifyOpInPlace(yield, [&] { yield->setOperand(i, iterArg); });
    rewriter.eraseOp(store);
    for (Operation *user : llvm::make_early_inc_range(iterArg.getUsers())) {
      if (user == yield)
        continue;
      rewriter.setInsertionPoint(user);
      rewriter.replaceOpWithNewOp<bufferization::AllocTensorOp>(
          user, cast<RankedTensorType>(user->getResult(0).getType()),
          ValueRange{});
    }
  }
  return fused;
}

} // namespace

void fuse::fuseImageLoops(RewriterBase &rewriter, func::FuncOp func) {
  bool changed = true;
  while (changed) {
    changed = false;
    SmallVector<scf::ForOp> loops;
    func.walk([&](scf::ForOp loop) {
      if (loop->hasAttr(kImageLoopAttr))
        loops.push_back(loop);
    });
    for (scf::ForOp consumer : loops) {
      for (scf::ForOp producer : loops) {
        if (producer == consumer || !canFuse(producer, consumer))
          continue;
        (void)fuseLoops(rewriter, producer, consumer);
        changed = true;
        break;
      }
      if (changed)
        break;
    }
  }
  func.walk([](scf::ForOp loop) { loop->removeAttr(kImageLoopAttr); });
}
