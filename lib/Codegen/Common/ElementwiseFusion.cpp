//===- ElementwiseFusion.cpp - The fuse-elementwise-fusion pass -----------===//
//
// Upstream's pairwise fusion builds a new op per fused pair, cloning both
// bodies, so a chain of N element-wise ops costs O(N^2) (20,000 ops: 81 s).
// Here every producer that would fuse is first assigned to the generic it
// ends up in (its root), and each root's fused op is then built once,
// cloning every body once: linear in the size of the function per round.
// Rounds repeat, with upstream's clean-up patterns between them, until none
// fuses anything (a clean-up such as removing a duplicate operand can give
// a producer its single use).
//
//===----------------------------------------------------------------------===//

#include "fuse/Codegen/Passes.h"

#include "Fuse/IR/FuseDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "fuse-elementwise-fusion"

namespace fuse {
#define GEN_PASS_DEF_FUSEELEMENTWISEFUSION
#include "fuse/Codegen/Passes.h.inc"
} // namespace fuse

using namespace mlir;

namespace {

/// A generic that is fused into a root: the map from the root's loops to
/// its loops (a permutation, as every map along the way is one).
struct Member {
  linalg::GenericOp root;
  AffineMap rootToLoops;
};

/// The fusion groups of one round: which generic each fusable producer
/// joins, through which operand.
class FusionPlan {
public:
  explicit FusionPlan(Operation *scope);
  bool empty() const { return absorbed_.empty(); }
  /// Work done by apply(), for the pass statistics.
  struct Counts {
    uint64_t built = 0, absorbed = 0, clonedOps = 0;
  };
  /// Builds each root's fused op and erases the generics it replaces.
  Counts apply(RewriterBase &rewriter);

private:
  /// Whether the producer of `operand` (an input of `consumer`, a member of
  /// `root`'s group) joins the group.
  bool joins(OpOperand *operand, linalg::GenericOp root,
             AffineMap rootToConsumer);
  /// The producer whose result `operand` reads, when it has joined.
  linalg::GenericOp absorbedProducer(OpOperand *operand) const {
    return absorbed_.contains(operand)
               ? operand->get().getDefiningOp<linalg::GenericOp>()
               : linalg::GenericOp();
  }
  void build(RewriterBase &rewriter, linalg::GenericOp root, Counts &counts);

  llvm::DenseMap<Operation *, Member> members_;
  llvm::DenseSet<OpOperand *> absorbed_;
  /// Per root, per loop: how many of its fused op's operands would index
  /// that loop by a plain dim (each loop needs one, for its bounds).
  llvm::DenseMap<Operation *, SmallVector<int64_t>> coverage_;
  /// The roots with at least one producer, in the order found; the
  /// members of each group, consumers before their producers.
  SmallVector<linalg::GenericOp> roots_;
  llvm::DenseMap<Operation *, SmallVector<linalg::GenericOp>> groups_;
};

void addCoverage(SmallVector<int64_t> &coverage, AffineMap map, int64_t by) {
  for (AffineExpr result : map.getResults())
    if (auto dim = dyn_cast<AffineDimExpr>(result))
      coverage[dim.getPosition()] += by;
}

FusionPlan::FusionPlan(Operation *scope) {
  // Producers dominate their consumers, so a pre-order walk lists every
  // consumer after its producers; visiting in reverse settles a consumer's
  // group before its producers are considered.
  SmallVector<linalg::GenericOp> generics;
  scope->walk<WalkOrder::PreOrder>(
      [&](linalg::GenericOp op) { generics.push_back(op); });
  for (linalg::GenericOp op : llvm::reverse(generics)) {
    auto it = members_.find(op);
    linalg::GenericOp root = it == members_.end() ? op : it->second.root;
    AffineMap rootToLoops = it == members_.end()
                                ? AffineMap::getMultiDimIdentityMap(
                                      op.getNumLoops(), op.getContext())
                                : it->second.rootToLoops;
    for (OpOperand *operand : op.getDpsInputOperands())
      if (joins(operand, root, rootToLoops)) {
        if (root == op && !groups_.count(op))
          roots_.push_back(op);
        groups_[root].push_back(
            operand->get().getDefiningOp<linalg::GenericOp>());
      }
  }
}

bool FusionPlan::joins(OpOperand *operand, linalg::GenericOp root,
                       AffineMap rootToConsumer) {
  auto producer = operand->get().getDefiningOp<linalg::GenericOp>();
  auto consumer = cast<linalg::GenericOp>(operand->getOwner());
  // Only what is computed once either way: a producer with one user, read
  // through a permutation (a producer read through a broadcast would be
  // recomputed for every element it is broadcast to). Upstream's
  // conditions otherwise (areElementwiseOpsFusable), and no producer result
  // that would have to stay (its init read by its body).
  // A materialized value (fuse.materialize: a byte mask the forward pass
  // keeps for the backward pass) is read from memory, never recomputed
  // from the wider values it is taken from.
  if (!producer || !producer->hasOneUse() ||
      producer->hasAttr(fuse::kMaterializeAttrName) ||
      !isa<RankedTensorType>(operand->get().getType()) ||
      !producer.hasPureTensorSemantics() ||
      producer.getNumParallelLoops() != producer.getNumLoops())
    return false;
  AffineMap consumerMap = consumer.getMatchingIndexingMap(operand);
  AffineMap resultMap =
      producer.getIndexingMapMatchingResult(cast<OpResult>(operand->get()));
  if (!consumerMap.isPermutation() || !resultMap.isPermutation() ||
      consumerMap.getNumResults() != producer.getNumLoops())
    return false;
  for (OpOperand &init : producer.getDpsInitsMutable())
    if (producer.payloadUsesValueFromOperand(&init))
      return false;

  // Root loops -> producer loops, and the producer's inputs in root loops.
  AffineMap rootToOperand = consumerMap.compose(rootToConsumer);
  AffineMap rootToProducer =
      inversePermutation(resultMap).compose(rootToOperand);
  SmallVector<AffineMap> inputMaps;
  for (OpOperand *input : producer.getDpsInputOperands())
    inputMaps.push_back(
        producer.getMatchingIndexingMap(input).compose(rootToProducer));

  // The fused op must still index every loop by a plain dim somewhere:
  // the operand leaves, the producer's inputs come in.
  auto [it, fresh] = coverage_.try_emplace(root.getOperation());
  SmallVector<int64_t> &coverage = it->second;
  if (fresh) {
    coverage.assign(root.getNumLoops(), 0);
    for (AffineMap map : root.getIndexingMapsArray())
      addCoverage(coverage, map, 1);
  }
  addCoverage(coverage, rootToOperand, -1);
  for (AffineMap map : inputMaps)
    addCoverage(coverage, map, 1);
  if (llvm::is_contained(coverage, 0)) {
    addCoverage(coverage, rootToOperand, 1);
    for (AffineMap map : inputMaps)
      addCoverage(coverage, map, -1);
    return false;
  }
  members_[producer] = {root, rootToProducer};
  absorbed_.insert(operand);
  return true;
}

FusionPlan::Counts FusionPlan::apply(RewriterBase &rewriter) {
  Counts counts;
  for (linalg::GenericOp root : roots_)
    build(rewriter, root, counts);
  return counts;
}

void FusionPlan::build(RewriterBase &rewriter, linalg::GenericOp root,
                       Counts &counts) {
  auto rootToLoops = [&](linalg::GenericOp op) {
    return op == root ? AffineMap::getMultiDimIdentityMap(root.getNumLoops(),
                                                          root.getContext())
                      : members_.lookup(op).rootToLoops;
  };
  // The inputs: each absorbed operand replaced by its producer's inputs,
  // recursively, in operand order (as pairwise fusion orders them). An
  // explicit stack: a chain can be as long as the function.
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  SmallVector<BlockArgument> inputArgs;
  struct Frame {
    linalg::GenericOp op;
    int64_t next; // getNumDpsInputs()'s type: clang rejects narrowing it
  };
  SmallVector<Frame> stack = {{root, 0}};
  while (!stack.empty()) {
    Frame &frame = stack.back();
    if (frame.next == frame.op.getNumDpsInputs()) {
      stack.pop_back();
      continue;
    }
    OpOperand *operand = frame.op.getDpsInputOperand(frame.next++);
    if (linalg::GenericOp producer = absorbedProducer(operand)) {
      stack.push_back({producer, 0});
      continue;
    }
    inputs.push_back(operand->get());
    maps.push_back(frame.op.getMatchingIndexingMap(operand).compose(
        rootToLoops(frame.op)));
    inputArgs.push_back(frame.op.getMatchingBlockArgument(operand));
  }
  for (OpOperand &init : root.getDpsInitsMutable())
    maps.push_back(root.getMatchingIndexingMap(&init));

  rewriter.setInsertionPoint(root);
  auto fused = linalg::GenericOp::create(
      rewriter, root.getLoc(), root->getResultTypes(), inputs,
      root.getDpsInits(), rewriter.getAffineMapArrayAttr(maps),
      root.getIteratorTypes(), /*doc=*/nullptr, /*library_call=*/nullptr);
  // What the root is (an optimizer's update) it stays.
  fused->setDiscardableAttrs(root->getDiscardableAttrDictionary());
  Block *block = rewriter.createBlock(&fused.getRegion());
  IRMapping mapping;
  for (BlockArgument arg : inputArgs)
    mapping.map(arg, block->addArgument(arg.getType(), arg.getLoc()));
  for (OpOperand &init : root.getDpsInitsMutable()) {
    BlockArgument arg = root.getMatchingBlockArgument(&init);
    mapping.map(arg, block->addArgument(arg.getType(), arg.getLoc()));
  }
  // A member's loop indices are root loops, permuted.
  SmallVector<Value> rootIndices;
  auto indexOf = [&](linalg::IndexOp index, AffineMap toLoops) -> Value {
    if (rootIndices.empty()) {
      OpBuilder::InsertionGuard guard(rewriter);
      rewriter.setInsertionPointToStart(block);
      for (unsigned d = 0; d < root.getNumLoops(); ++d)
        rootIndices.push_back(
            linalg::IndexOp::create(rewriter, index.getLoc(), d));
    }
    return rootIndices[toLoops.getDimPosition(index.getDim())];
  };

  // The bodies, producers before their consumer; a consumer's producers in
  // reverse operand order, as pairwise fusion (first operand first) leaves
  // them.
  stack = {{root, root.getNumDpsInputs()}};
  while (!stack.empty()) {
    Frame &frame = stack.back();
    if (frame.next > 0) {
      OpOperand *operand = frame.op.getDpsInputOperand(--frame.next);
      if (linalg::GenericOp producer = absorbedProducer(operand))
        stack.push_back({producer, producer.getNumDpsInputs()});
      continue;
    }
    linalg::GenericOp op = frame.op;
    stack.pop_back();
    Block &body = op.getRegion().front();
    // Each absorbed operand is the value its producer yields.
    for (OpOperand *operand : op.getDpsInputOperands())
      if (linalg::GenericOp producer = absorbedProducer(operand)) {
        auto yield =
            cast<linalg::YieldOp>(producer.getRegion().front().getTerminator());
        Value yielded =
            yield.getOperand(cast<OpResult>(operand->get()).getResultNumber());
        mapping.map(op.getMatchingBlockArgument(operand),
                    mapping.lookupOrDefault(yielded));
      }
    AffineMap toLoops = rootToLoops(op);
    for (Operation &nested : body.without_terminator()) {
      auto index = dyn_cast<linalg::IndexOp>(nested);
      if (index && op != root)
        mapping.map(index.getResult(), indexOf(index, toLoops));
      else {
        rewriter.clone(nested, mapping);
        ++counts.clonedOps;
      }
    }
  }
  auto yield = cast<linalg::YieldOp>(root.getRegion().front().getTerminator());
  SmallVector<Value> yielded;
  for (Value value : yield.getOperands())
    yielded.push_back(mapping.lookupOrDefault(value));
  linalg::YieldOp::create(rewriter, yield.getLoc(), yielded);

  rewriter.replaceOp(root, fused->getResults());
  ++counts.built;
  // Consumers before producers: each is unused when erased.
  for (linalg::GenericOp member : groups_[root]) {
    rewriter.eraseOp(member);
    ++counts.absorbed;
  }
}

/// The clean-ups replace an out that the body never reads with a
/// tensor.empty (upstream's RemoveOutsDependency). When the result is what
/// a loop carries to its next iteration (a master weight's bf16 copy, which
/// the optimizer's update writes without reading), the out goes back to
/// being the iteration's carried value, so that bufferization writes it in
/// place instead of into a new buffer copied back at every iteration.
/// Returns how many outs it changed.
unsigned reuseCarriedDestinations(Operation *root) {
  unsigned changed = 0;
  root->walk([&](linalg::GenericOp generic) {
    auto loop = dyn_cast<scf::ForOp>(generic->getParentOp());
    if (!loop)
      return;
    for (OpOperand &init : generic.getDpsInitsMutable()) {
      if (!init.get().getDefiningOp<tensor::EmptyOp>() ||
          generic.payloadUsesValueFromOperand(&init))
        continue;
      OpResult result = generic.getTiedOpResult(&init);
      if (!result.hasOneUse())
        continue;
      OpOperand &use = *result.getUses().begin();
      if (use.getOwner() != loop.getBody()->getTerminator())
        continue;
      BlockArgument carried = loop.getRegionIterArgs()[use.getOperandNumber()];
      if (carried.getType() != init.get().getType())
        continue;
      init.set(carried);
      ++changed;
    }
  });
  return changed;
}

/// Likewise for a function's result marked `fuse.in_place = N` computed by
/// a generic into a `tensor.empty` it never reads (the join of a split
/// weight's halves, `fuse.join_halves`): the out becomes argument N, so
/// that bufferization writes the result into the argument's buffer rather
/// than into a new one copied into it (fuse-in-place-results). Returns how
/// many outs it changed.
unsigned reuseInPlaceArguments(Operation *root) {
  unsigned changed = 0;
  root->walk([&](func::FuncOp func) {
    if (func.isExternal())
      return;
    func.walk([&](func::ReturnOp ret) {
      for (unsigned j = 0; j < ret.getNumOperands(); ++j) {
        auto index =
            func.getResultAttrOfType<IntegerAttr>(j, fuse::kInPlaceAttrName);
        auto result = dyn_cast<OpResult>(ret.getOperand(j));
        auto generic =
            result ? dyn_cast<linalg::GenericOp>(result.getOwner()) : nullptr;
        if (!index || !generic || !result.hasOneUse())
          continue;
        OpOperand *init = generic.getDpsInitOperand(result.getResultNumber());
        Value arg = func.getArgument(index.getInt());
        if (!init->get().getDefiningOp<tensor::EmptyOp>() ||
            generic.payloadUsesValueFromOperand(init) ||
            arg.getType() != init->get().getType())
          continue;
        LLVM_DEBUG(llvm::dbgs() << "in-place result #" << j << " of "
                                << func.getSymName() << " written into "
                                << "argument #" << index.getInt() << "\n");
        init->set(arg);
        ++changed;
      }
    });
  });
  return changed;
}

struct FuseElementwiseFusionPass
    : fuse::impl::FuseElementwiseFusionBase<FuseElementwiseFusionPass> {
  using Base::Base;
  void runOnOperation() override {
    MLIRContext *context = &getContext();
    RewritePatternSet patterns(context);
    // Upstream's fusion patterns without its pairwise fusion (the control
    // function refuses every pair): the clean-ups (fills and splat constants
    // folded in, unused outs, duplicate and dead operands) stay.
    linalg::populateElementwiseOpsFusionPatterns(
        patterns, [](OpOperand *) { return false; });
    linalg::populateEraseUnusedOperandsAndResultsPatterns(patterns);
    linalg::GenericOp::getCanonicalizationPatterns(patterns, context);
    tensor::EmptyOp::getCanonicalizationPatterns(patterns, context);
    FrozenRewritePatternSet cleanUps(std::move(patterns));

    IRRewriter rewriter(context);
    FusionPlan::Counts total;
    while (true) {
      if (failed(applyPatternsGreedily(getOperation(), cleanUps))) {
        signalPassFailure();
        return;
      }
      FusionPlan plan(getOperation());
      if (plan.empty())
        break;
      FusionPlan::Counts counts = plan.apply(rewriter);
      total.built += counts.built;
      total.absorbed += counts.absorbed;
      total.clonedOps += counts.clonedOps;
    }
    reuseCarriedDestinations(getOperation());
    reuseInPlaceArguments(getOperation());
    numBuilt += total.built;
    numAbsorbed += total.absorbed;
    numClonedOps += total.clonedOps;
    if (report)
      getOperation().emitRemark()
          << "element-wise fusion: " << total.built << " generics built, "
          << total.absorbed << " absorbed, " << total.clonedOps
          << " body operations cloned";
  }
};
} // namespace
