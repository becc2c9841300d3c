//===- ParallelLoopsToOpenMP.cpp - fuse-parallel-loops-to-openmp ----------===//
//
// The threads' loops (scf.parallel, from fuse-distribute's scf.forall) as
// OpenMP parallel regions that split the iterations themselves, forked only
// when the call may use several threads (`if`); on one thread the compile
// driver calls the region's outlined body directly (fuse::translateToLLVMIR),
// which then takes every iteration. Neither allocates: upstream's
// convert-scf-to-openmp goes through omp.wsloop, whose
// __kmpc_for_static_init, like a serialized region's fork, mallocs on every
// region, and a training step must not allocate. Adjacent loops that touch
// disjoint buffers (an optimizer's update of each parameter) share one
// region: one fork/join, no barrier between them.
//
//===----------------------------------------------------------------------===//

#include "fuse/ABI.h"
#include "fuse/Codegen/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/OpenMP/OpenMPDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "fuse-parallel-loops-to-openmp"

namespace fuse {
#define GEN_PASS_DEF_FUSEPARALLELLOOPSTOOPENMP
#include "fuse/Codegen/Passes.h.inc"
} // namespace fuse

using namespace mlir;

namespace {

/// The declaration of libomp's `int name(void)`, added to `module` once.
func::FuncOp ompQuery(ModuleOp module, StringRef name) {
  if (auto existing = module.lookupSymbol<func::FuncOp>(name))
    return existing;
  OpBuilder builder(module.getBodyRegion());
  builder.setInsertionPointToStart(module.getBody());
  auto decl =
      func::FuncOp::create(builder, module.getLoc(), name,
                           builder.getFunctionType({}, {builder.getI32Type()}));
  decl.setPrivate();
  return decl;
}

Value callQuery(OpBuilder &b, Location loc, func::FuncOp decl) {
  Value count = func::CallOp::create(b, loc, decl, ValueRange{}).getResult(0);
  return arith::IndexCastOp::create(b, loc, b.getIndexType(), count);
}

/// Emits `loop`'s body for the linear iterations [begin, end) of its space,
/// each delinearized into the loop's induction variables (the last one
/// fastest). Stack buffers at the top of the body (fuse-workspace's, one
/// per iteration, dead at its end) are taken once, before the loop.
void emitIterations(OpBuilder &b, Location loc, scf::ParallelOp loop,
                    ArrayRef<Value> tripCounts, Value begin, Value end) {
  IRMapping mapping;
  for (Operation &op : loop.getBody()->without_terminator())
    if (auto buffer = dyn_cast<memref::AllocaOp>(op);
        buffer && buffer->getNumOperands() == 0)
      mapping.map(buffer.getResult(), b.clone(op)->getResult(0));
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  auto serial = scf::ForOp::create(b, loc, begin, end, one);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(serial.getBody());
  Value rest = serial.getInductionVar();
  SmallVector<Value> ivs(tripCounts.size());
  for (size_t d = tripCounts.size(); d-- > 0;) {
    Value index = rest;
    if (d > 0) {
      index = arith::RemUIOp::create(b, loc, rest, tripCounts[d]);
      rest = arith::DivUIOp::create(b, loc, rest, tripCounts[d]);
    }
    Value scaled = arith::MulIOp::create(b, loc, index, loop.getStep()[d]);
    ivs[d] = arith::AddIOp::create(b, loc, loop.getLowerBound()[d], scaled);
  }
  for (auto [iv, value] : llvm::zip(loop.getInductionVars(), ivs))
    mapping.map(iv, value);
  for (Operation &op : loop.getBody()->without_terminator())
    if (op.getNumResults() != 1 || !mapping.contains(op.getResult(0)))
      b.clone(op, mapping);
}

/// The buffers a loop reads and writes, by the memref each access views,
/// and the bytes of the stack buffers each thread takes for it.
struct Accesses {
  llvm::DenseSet<Value> reads, writes;
  int64_t stackBytes = 0;
};

/// The most stack a region's loops take per thread: what fuse-workspace
/// gives one loop (libomp's worker stacks are 4 MiB).
constexpr int64_t kMaxRegionStackBytes = 256 * 1024;

/// The memref `value` is a view of: a function argument (the caller's
/// buffers never overlap, fuse-workspace's contract, but for the buffers
/// of one workspace slot, which share bytes and stand for each other here:
/// the slot's first argument), an allocation, a global, or (unknown)
/// anything else.
Value rootBuffer(Value value) {
  while (Operation *def = value.getDefiningOp()) {
    if (auto view = dyn_cast<ViewLikeOpInterface>(def))
      value = view.getViewSource();
    else if (auto metadata = dyn_cast<memref::ExtractStridedMetadataOp>(def))
      value = metadata.getSource();
    else
      break;
  }
  auto argument = dyn_cast<BlockArgument>(value);
  if (!argument || !argument.getOwner()->isEntryBlock())
    return value;
  auto func = dyn_cast<func::FuncOp>(argument.getOwner()->getParentOp());
  if (!func)
    return value;
  auto slot = func.getArgAttrOfType<IntegerAttr>(
      argument.getArgNumber(), fuse::abi::kWorkspaceSlotAttrName);
  if (!slot)
    return value;
  for (BlockArgument other : func.getArguments())
    if (func.getArgAttr(other.getArgNumber(),
                        fuse::abi::kWorkspaceSlotAttrName) == slot)
      return other;
  return value;
}

bool isKnownBuffer(Value root) {
  if (auto argument = dyn_cast<BlockArgument>(root))
    return argument.getOwner()->isEntryBlock() &&
           isa<func::FuncOp>(argument.getOwner()->getParentOp());
  return root.getDefiningOp<memref::AllocOp>() ||
         root.getDefiningOp<memref::AllocaOp>() ||
         root.getDefiningOp<memref::GetGlobalOp>();
}

/// What `loop` reads and writes outside its own buffers; nullopt when an
/// access cannot be traced to a buffer (a call, an unknown effect).
std::optional<Accesses> accessesOf(scf::ParallelOp loop) {
  Accesses result;
  for (Operation &op : loop.getBody()->without_terminator())
    if (auto buffer = dyn_cast<memref::AllocaOp>(op);
        buffer && buffer->getNumOperands() == 0) {
      MemRefType type = buffer.getType();
      if (!type.hasStaticShape() || !type.getElementType().isIntOrFloat())
        return std::nullopt;
      result.stackBytes +=
          type.getNumElements() *
          std::max<int64_t>(1, type.getElementTypeBitWidth() / 8);
    }
  llvm::DenseSet<Value> local;
  WalkResult walk = loop.getBody()->walk([&](Operation *op) {
    if (op->hasTrait<OpTrait::HasRecursiveMemoryEffects>())
      return WalkResult::advance();
    auto effects = dyn_cast<MemoryEffectOpInterface>(op);
    if (!effects)
      return WalkResult::interrupt();
    SmallVector<MemoryEffects::EffectInstance> instances;
    effects.getEffects(instances);
    for (const MemoryEffects::EffectInstance &effect : instances) {
      Value value = effect.getValue();
      if (isa<MemoryEffects::Allocate, MemoryEffects::Free>(
              effect.getEffect())) {
        if (value)
          local.insert(value);
        continue;
      }
      if (!value)
        return WalkResult::interrupt();
      Value root = rootBuffer(value);
      if (local.contains(root))
        continue;
      bool write = isa<MemoryEffects::Write>(effect.getEffect());
      // Two get_globals of one symbol are different values: globals are
      // only read.
      if (!isKnownBuffer(root) ||
          (write && root.getDefiningOp<memref::GetGlobalOp>()))
        return WalkResult::interrupt();
      (write ? result.writes : result.reads).insert(root);
    }
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return std::nullopt;
  return result;
}

/// Whether loops with accesses `a` and `b` may run at once: neither writes
/// a buffer the other touches.
bool independent(const Accesses &a, const Accesses &b) {
  auto touches = [](const Accesses &x, Value buffer) {
    return x.reads.contains(buffer) || x.writes.contains(buffer);
  };
  return llvm::none_of(a.writes, [&](Value v) { return touches(b, v); }) &&
         llvm::none_of(b.writes, [&](Value v) { return touches(a, v); });
}

/// The outermost parallel loops in runs that can share one region: loops
/// of one block, each independent of the others, with only operations free
/// of memory effects between them (constants, index arithmetic), which stay
/// where they are, and stack buffers of kMaxRegionStackBytes at most in
/// all. The region replaces the run's last loop, where every
/// value a loop of the run uses is defined.
SmallVector<SmallVector<scf::ParallelOp>> regionRuns(ModuleOp module) {
  SmallVector<SmallVector<scf::ParallelOp>> runs;
  // The accesses of the last run's loops.
  SmallVector<Accesses> runAccesses;
  module.walk<WalkOrder::PreOrder>([&](scf::ParallelOp loop) {
    std::optional<Accesses> mine = accessesOf(loop);
    bool continues = mine && !runs.empty() && !runAccesses.empty() &&
                     runs.back().back()->getBlock() == loop->getBlock();
    for (Operation *op = continues ? runs.back().back()->getNextNode()
                                   : loop.getOperation();
         op != loop.getOperation(); op = op->getNextNode())
      continues &= isMemoryEffectFree(op);
    int64_t stack = mine ? mine->stackBytes : 0;
    for (const Accesses &other : runAccesses)
      stack += other.stackBytes;
    continues = continues && stack <= kMaxRegionStackBytes &&
                llvm::all_of(runAccesses, [&](const Accesses &a) {
                  return independent(*mine, a);
                });
    if (continues) {
      runs.back().push_back(loop);
    } else {
      runs.push_back({loop});
      runAccesses.clear();
    }
    // A loop whose accesses are unknown ends its run.
    if (mine)
      runAccesses.push_back(std::move(*mine));
    else
      runAccesses.clear();
    return WalkResult::skip();
  });
  return runs;
}

/// A loop's iterations, linearized.
struct Linearized {
  SmallVector<Value> tripCounts;
  Value total;
};

Linearized linearize(OpBuilder &b, Location loc, scf::ParallelOp loop) {
  Linearized result;
  result.total = arith::ConstantIndexOp::create(b, loc, 1);
  for (auto [lower, upper, step] :
       llvm::zip(loop.getLowerBound(), loop.getUpperBound(), loop.getStep())) {
    Value span = arith::SubIOp::create(b, loc, upper, lower);
    Value trips = arith::CeilDivUIOp::create(b, loc, span, step);
    result.tripCounts.push_back(trips);
    result.total = arith::MulIOp::create(b, loc, result.total, trips);
  }
  return result;
}

/// Whether `a` and `b` run the same code per iteration: bodies of the same
/// operations, attributes and types, reading values from outside of the
/// same type (and the same constants, which canonicalization hoists out of
/// the bodies). Their iterations then cost the same, whatever their
/// buffers (the updates of parameters of one shape).
bool sameBody(scf::ParallelOp a, scf::ParallelOp b) {
  if (a.getNumLoops() != b.getNumLoops())
    return false;
  llvm::DenseMap<Value, Value> mapped;
  auto inside = [](Value value, scf::ParallelOp loop) {
    return loop->isAncestor(value.getParentRegion()->getParentOp());
  };
  auto check = [&](Value lhs, Value rhs) -> LogicalResult {
    if (auto it = mapped.find(lhs); it != mapped.end())
      return success(it->second == rhs);
    if (lhs.getType() != rhs.getType() || inside(lhs, a) || inside(rhs, b))
      return failure();
    Attribute lhsConstant, rhsConstant;
    bool lhsIsConstant = matchPattern(lhs, m_Constant(&lhsConstant));
    bool rhsIsConstant = matchPattern(rhs, m_Constant(&rhsConstant));
    if (lhsIsConstant || rhsIsConstant)
      return success(lhsIsConstant && rhsIsConstant &&
                     lhsConstant == rhsConstant);
    return success();
  };
  auto mark = [&](Value lhs, Value rhs) { mapped[lhs] = rhs; };
  return OperationEquivalence::isRegionEquivalentTo(
      &a.getRegion(), &b.getRegion(), check, mark,
      OperationEquivalence::IgnoreLocations);
}

/// The loops of a run in classes of the same code (sameBody), each class
/// in the order of its first loop: `classOf[k]` is loop k's.
SmallVector<unsigned> classesOf(ArrayRef<scf::ParallelOp> run,
                                unsigned &numClasses) {
  SmallVector<unsigned> classOf(run.size());
  SmallVector<scf::ParallelOp> representatives;
  for (auto [k, loop] : llvm::enumerate(run)) {
    auto *same = llvm::find_if(representatives, [&](scf::ParallelOp other) {
      return sameBody(other, loop);
    });
    classOf[k] = same - representatives.begin();
    if (same == representatives.end())
      representatives.push_back(loop);
  }
  numClasses = representatives.size();
  return classOf;
}

struct ParallelLoopsToOpenMPPass
    : fuse::impl::FuseParallelLoopsToOpenMPBase<ParallelLoopsToOpenMPPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    // Outermost first; a loop nested in another's body runs on the thread
    // that runs the iteration (nested regions would be serialized anyway).
    SmallVector<SmallVector<scf::ParallelOp>> runs = regionRuns(module);
    if (runs.empty())
      return;
    func::FuncOp maxThreads = ompQuery(module, "omp_get_max_threads");
    func::FuncOp threadNum = ompQuery(module, "omp_get_thread_num");
    func::FuncOp numThreads = ompQuery(module, "omp_get_num_threads");
    for (ArrayRef<scf::ParallelOp> run : runs) {
      for (scf::ParallelOp loop : run)
        if (loop.getNumReductions() != 0 || loop->getNumResults() != 0) {
          loop.emitError("a parallel loop with reductions is not supported");
          return signalPassFailure();
        }
      scf::ParallelOp last = run.back();
      Location loc = last.getLoc();
      OpBuilder b(last);
      SmallVector<Linearized> spaces;
      for (scf::ParallelOp loop : run)
        spaces.push_back(linearize(b, loc, loop));
      // The iterations of each class's loops, laid end to end: loop k's
      // start at firsts[k] of its class's totals[classOf[k]].
      unsigned numClasses = 0;
      SmallVector<unsigned> classOf = classesOf(run, numClasses);
      SmallVector<Value> totals(numClasses), firsts(run.size());
      SmallVector<unsigned> classSizes(numClasses, 0);
      for (auto [k, space] : llvm::enumerate(spaces)) {
        Value &total = totals[classOf[k]];
        firsts[k] = total;
        total =
            total
                ? arith::AddIOp::create(b, loc, total, space.total).getResult()
                : space.total;
        ++classSizes[classOf[k]];
      }
      Value one = arith::ConstantIndexOp::create(b, loc, 1);
      Value threads = callQuery(b, loc, maxThreads);
      Value several = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt,
                                            threads, one);
      // One region, forked only with several threads: with one, the
      // compile driver calls its outlined body directly (no serialized
      // region, which allocates), so the loops' code exists once.
      auto region = omp::ParallelOp::create(b, loc);
      region.getIfExprMutable().assign(several);
      {
        // Each thread takes one contiguous block of the iterations of each
        // class of loops with the same code, laid end to end: with many
        // parameters of one shape, each thread updates whole tensors, in
        // long runs of memory, and runs the code of its own loops only.
        // Loops of different code (different costs per iteration) are
        // classes of their own. Class j's blocks start at thread j (mod the
        // count), so that the shorter last blocks, and the single
        // iterations of small loops, are not all one thread's. One thread
        // takes them all, in order, without asking the runtime.
        OpBuilder::InsertionGuard guard(b);
        Block *body = b.createBlock(&region.getRegion());
        b.setInsertionPointToStart(body);
        auto team = scf::IfOp::create(
            b, loc, TypeRange{b.getIndexType(), b.getIndexType()}, several,
            /*withElse=*/true);
        b.setInsertionPointToStart(team.thenBlock());
        scf::YieldOp::create(b, loc,
                             ValueRange{callQuery(b, loc, threadNum),
                                        callQuery(b, loc, numThreads)});
        b.setInsertionPointToStart(team.elseBlock());
        scf::YieldOp::create(
            b, loc,
            ValueRange{arith::ConstantIndexOp::create(b, loc, 0),
                       arith::ConstantIndexOp::create(b, loc, 1)});
        b.setInsertionPointAfter(team);
        Value id = team.getResult(0);
        Value count = team.getResult(1);
        // Each class's block: [begin, end) of its iterations end to end.
        SmallVector<std::pair<Value, Value>> blocks;
        for (unsigned j = 0; j < numClasses; ++j) {
          Value block = id;
          if (j != 0)
            block = arith::RemUIOp::create(
                b, loc,
                arith::AddIOp::create(
                    b, loc, id,
                    arith::ConstantIndexOp::create(b, loc, int64_t(j))),
                count);
          Value chunk = arith::CeilDivUIOp::create(b, loc, totals[j], count);
          Value begin = arith::MinUIOp::create(
              b, loc, arith::MulIOp::create(b, loc, block, chunk), totals[j]);
          Value end = arith::MinUIOp::create(
              b, loc, arith::AddIOp::create(b, loc, begin, chunk), totals[j]);
          blocks.push_back({begin, end});
        }
        for (auto [k, loop] : llvm::enumerate(run)) {
          auto [begin, end] = blocks[classOf[k]];
          if (classSizes[classOf[k]] > 1) {
            // The part of the class's block in loop k's iterations:
            // clamp(x, first, first + total) - first, for each bound.
            Value first =
                firsts[k]
                    ? firsts[k]
                    : arith::ConstantIndexOp::create(b, loc, 0).getResult();
            Value last = arith::AddIOp::create(b, loc, first, spaces[k].total);
            auto local = [&](Value bound) -> Value {
              Value clamped = arith::MinUIOp::create(
                  b, loc, arith::MaxUIOp::create(b, loc, bound, first), last);
              return arith::SubIOp::create(b, loc, clamped, first);
            };
            begin = local(begin);
            end = local(end);
          }
          emitIterations(b, loc, loop, spaces[k].tripCounts, begin, end);
        }
        omp::TerminatorOp::create(b, loc);
      }
      LLVM_DEBUG(llvm::dbgs()
                 << "parallel region of " << run.size() << " loop(s) in "
                 << numClasses << " class(es) of the same code at " << loc
                 << "\n");
      for (scf::ParallelOp loop : run)
        loop.erase();
    }
  }
};

} // namespace
