//===- ParallelLoopsToOpenMP.cpp - fuse-parallel-loops-to-openmp ----------===//
//
// The threads' loops (scf.parallel, from fuse-distribute's scf.forall) as
// OpenMP parallel regions that split the iterations themselves, and as plain
// loops when the call runs on one thread. Neither allocates: upstream's
// convert-scf-to-openmp goes through omp.wsloop, whose
// __kmpc_for_static_init, like a serialized region's fork, mallocs on every
// region, and a training step must not allocate.
//
//===----------------------------------------------------------------------===//

#include "fuse/Codegen/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/OpenMP/OpenMPDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
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

struct ParallelLoopsToOpenMPPass
    : fuse::impl::FuseParallelLoopsToOpenMPBase<ParallelLoopsToOpenMPPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<scf::ParallelOp> loops;
    // Outermost first; a loop nested in another's body runs on the thread
    // that runs the iteration (nested regions would be serialized anyway).
    module.walk<WalkOrder::PreOrder>([&](scf::ParallelOp loop) {
      loops.push_back(loop);
      return WalkResult::skip();
    });
    if (loops.empty())
      return;
    func::FuncOp maxThreads = ompQuery(module, "omp_get_max_threads");
    func::FuncOp threadNum = ompQuery(module, "omp_get_thread_num");
    func::FuncOp numThreads = ompQuery(module, "omp_get_num_threads");
    for (scf::ParallelOp loop : loops) {
      if (loop.getNumReductions() != 0 || loop->getNumResults() != 0) {
        loop.emitError("a parallel loop with reductions is not supported");
        return signalPassFailure();
      }
      Location loc = loop.getLoc();
      OpBuilder b(loop);
      // The loop's iterations, linearized.
      SmallVector<Value> tripCounts;
      Value total = arith::ConstantIndexOp::create(b, loc, 1);
      for (auto [lower, upper, step] : llvm::zip(
               loop.getLowerBound(), loop.getUpperBound(), loop.getStep())) {
        Value span = arith::SubIOp::create(b, loc, upper, lower);
        Value trips = arith::CeilDivUIOp::create(b, loc, span, step);
        tripCounts.push_back(trips);
        total = arith::MulIOp::create(b, loc, total, trips);
      }
      Value zero = arith::ConstantIndexOp::create(b, loc, 0);
      Value one = arith::ConstantIndexOp::create(b, loc, 1);
      Value threads = callQuery(b, loc, maxThreads);
      Value several = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt,
                                            threads, one);
      auto branch = scf::IfOp::create(b, loc, several, /*withElse=*/true);
      {
        // Each thread takes one contiguous block of the iterations.
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(branch.thenBlock());
        auto region = omp::ParallelOp::create(b, loc);
        Block *body = b.createBlock(&region.getRegion());
        b.setInsertionPointToStart(body);
        Value id = callQuery(b, loc, threadNum);
        Value count = callQuery(b, loc, numThreads);
        Value chunk = arith::CeilDivUIOp::create(b, loc, total, count);
        Value begin = arith::MinUIOp::create(
            b, loc, arith::MulIOp::create(b, loc, id, chunk), total);
        Value end = arith::MinUIOp::create(
            b, loc, arith::AddIOp::create(b, loc, begin, chunk), total);
        emitIterations(b, loc, loop, tripCounts, begin, end);
        omp::TerminatorOp::create(b, loc);
      }
      {
        // One thread: the iterations in order, no call into the runtime.
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(branch.elseBlock());
        emitIterations(b, loc, loop, tripCounts, zero, total);
      }
      LLVM_DEBUG(llvm::dbgs() << "parallel loop at " << loc << "\n");
      loop.erase();
    }
  }
};

} // namespace
