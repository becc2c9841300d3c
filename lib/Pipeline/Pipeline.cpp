//===- Pipeline.cpp - The one Fuse pass pipeline --------------------------===//

#include "fuse/Pipeline.h"
#include "fuse/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void fuse::buildDifferentiatePipeline(OpPassManager &pm,
                                      const DifferentiateOptions &options) {
  pm.addPass(createFuseDeriveEval());
  pm.addPass(createFuseDerivePredict());
  FuseExpandTrainStepOptions expand;
  expand.dataParallel = options.dataParallel;
  pm.addPass(createFuseExpandTrainStep(expand));
  // The forward pass in canonical form first: its rewrites shape the
  // backward pass (max_pool2d of a relu becomes relu of the pool, whose
  // gradient then keeps no activation of the pool's input size).
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createFuseAutodiff());
  FuseApplyPrecisionPolicyOptions precision;
  precision.flushedDenormals = options.flushedDenormals;
  pm.addPass(createFuseApplyPrecisionPolicy(precision));
  pm.addPass(createFuseWrapSteps());
  pm.addPass(createFuseMarkClassLabels());
}

namespace {
/// fuse-specialize for one entry of a whole module: the other functions are
/// dropped, the entry renamed and specialized (isolateAndSpecialize).
struct SpecializeEntryPass
    : PassWrapper<SpecializeEntryPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(SpecializeEntryPass)

  SpecializeEntryPass(StringRef name, TypeRange argTypes, StringRef symbol)
      : name(name.str()), argTypes(argTypes), symbol(symbol.str()) {}
  StringRef getArgument() const override { return "fuse-specialize-entry"; }
  void runOnOperation() override {
    if (failed(
            fuse::isolateAndSpecialize(getOperation(), name, argTypes, symbol)))
      signalPassFailure();
  }

  std::string name;
  SmallVector<Type> argTypes;
  std::string symbol;
};
} // namespace

void fuse::buildSpecializeEntryPipeline(OpPassManager &pm, StringRef name,
                                        TypeRange argTypes, StringRef symbol) {
  pm.addPass(std::make_unique<SpecializeEntryPass>(name, argTypes, symbol));
  // The call's shapes may make a dynamic class count static.
  pm.addPass(createFuseMarkClassLabels());
}

void fuse::buildSimplifyPipeline(OpPassManager &pm) {
  // Composite ops first, so that CSE shares what their gradients recompute.
  pm.addNestedPass<func::FuncOp>(createFuseDecomposeLayerNorm());
  // CSE can expose new folds (two identical values become one operand twice,
  // so `x - x` folds), hence canonicalize on both sides.
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addPass(createCanonicalizerPass());
}

void fuse::buildLowerToLinalgPipeline(OpPassManager &pm,
                                      const PipelineOptions &options) {
  // Collectives first: their packing is fuse ops the conversion lowers.
  ConvertFuseCollectivesOptions collectives;
  collectives.overlap = options.overlapCollectives;
  pm.addPass(createConvertFuseCollectives(collectives));
  OpPassManager &func = pm.nest<func::FuncOp>();
  ConvertFuseOptimizersToLinalgOptions optimizer;
  optimizer.fuse = options.fusion;
  func.addPass(createConvertFuseOptimizersToLinalg(optimizer));
  func.addPass(createConvertFuseToLinalg());
  if (options.fusion)
    func.addPass(createFuseElementwiseFusion());
  func.addPass(createCanonicalizerPass());
  func.addPass(createCSEPass());
}

// The phases of buildLowerToLLVMPipeline, apart for --stats.
namespace fuse {
/// The canonicalizer without its region simplification, which walks the
/// whole function after every round of rewrites: on structured code (scf
/// loops, one block per region) it finds nothing to do, and on the LLVM
/// dialect's CFG what it does (merging blocks, dropping dead block
/// arguments) LLVM's SimplifyCFG does too: the machine code is the same.
static std::unique_ptr<Pass> createCanonicalizerNoRegionSimplify() {
  GreedyRewriteConfig config;
  config.setRegionSimplificationLevel(GreedySimplifyRegionLevel::Disabled);
  return createCanonicalizerPass(config);
}

static void buildTileAndVectorizePhase(OpPassManager &pm,
                                       const PipelineOptions &options) {
  if (options.profile) {
    FuseInsertTimersOptions timers;
    timers.label = options.profileLabel;
    pm.addPass(createFuseInsertTimers(timers));
  }
  {
    OpPassManager &func = pm.nest<func::FuncOp>();
    TileAndVectorizeOptions strategy;
    strategy.winograd = options.winograd;
    buildTileAndVectorizePipeline(func, strategy);
    func.addPass(createCanonicalizerNoRegionSimplify());
    func.addPass(createCSEPass());
    func.addPass(createFuseDistinctResults());
  }
}

static void buildBufferizePhase(OpPassManager &pm) {
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  // Fold loop-carried buffers (CSE makes in-place tile copies self-copies),
  // so each result is visibly its allocation or its argument...
  pm.addPass(createCSEPass());
  pm.addPass(createCanonicalizerNoRegionSimplify());
  pm.addPass(createFuseInPlaceResults());
  // ... which then becomes the caller's out-parameter: results are written
  // straight into buffers the caller passes.
  bufferization::BufferResultsToOutParamsPassOptions outParams;
  outParams.hoistStaticAllocs = true;
  outParams.hoistDynamicAllocs = true;
  outParams.modifyPublicFunctions = true;
  pm.addPass(bufferization::createBufferResultsToOutParamsPass(outParams));
  bufferization::buildBufferDeallocationPipeline(pm);
}

static void buildLowerLoopsPhase(OpPassManager &pm) {
  OpPassManager &func = pm.nest<func::FuncOp>();
  // The threads' loops (fuse-distribute) as scf.parallel, for OpenMP.
  func.addPass(createForallToParallelLoopPass());
  func.addPass(createFuseWorkspace());
  func.addPass(createFuseBarePointerArguments());
  func.addPass(createFuseLowerVectors());
  func.addPass(createConvertLinalgToLoopsPass());
  func.addPass(createFuseApproximateMath());
  func.addPass(createLoopInvariantCodeMotionPass());
  func.addPass(createCanonicalizerNoRegionSimplify());
}

static void buildConvertToLLVMPhase(OpPassManager &pm) {
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  // Parallel loops fork into LLVM's OpenMP runtime, each thread in the
  // caller's floating-point mode.
  pm.addPass(createFuseParallelLoopsToOpenMP());
  pm.addPass(createFuseParallelFPMode());
  pm.addPass(createSCFToControlFlowPass());
  ConvertVectorToLLVMPassOptions vectorToLLVM;
  vectorToLLVM.reassociateFPReductions = true;
  pm.addPass(createConvertVectorToLLVMPass(vectorToLLVM));
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  ConvertFuncToLLVMPassOptions funcToLLVM;
  funcToLLVM.useBarePtrCallConv = true;
  pm.addPass(createConvertFuncToLLVMPass(funcToLLVM));
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createConvertOpenMPToLLVMPass());
  pm.addPass(createUBToLLVMConversionPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createCanonicalizerNoRegionSimplify());
}
} // namespace fuse

void fuse::buildLowerToLLVMPipeline(OpPassManager &pm,
                                    const PipelineOptions &options) {
  buildTileAndVectorizePhase(pm, options);
  buildBufferizePhase(pm);
  buildLowerLoopsPhase(pm);
  buildConvertToLLVMPhase(pm);
}

std::vector<fuse::PipelinePhase>
fuse::specializedPipelinePhases(Stage stage, const PipelineOptions &options) {
  std::vector<PipelinePhase> phases;
  phases.push_back({"simplify", buildSimplifyPipeline});
  if (stage >= Stage::Linalg)
    phases.push_back({"lower-to-linalg", [options](OpPassManager &pm) {
                        buildLowerToLinalgPipeline(pm, options);
                      }});
  if (stage < Stage::LLVMDialect)
    return phases;
  phases.push_back({"tile-and-vectorize", [options](OpPassManager &pm) {
                      buildTileAndVectorizePhase(pm, options);
                    }});
  phases.push_back({"bufferize", buildBufferizePhase});
  phases.push_back({"lower-loops", buildLowerLoopsPhase});
  phases.push_back({"convert-to-llvm", buildConvertToLLVMPhase});
  return phases;
}

void fuse::buildSpecializedPipeline(OpPassManager &pm, Stage stage,
                                    const PipelineOptions &options) {
  for (const PipelinePhase &phase : specializedPipelinePhases(stage, options))
    phase.build(pm);
}

void fuse::buildCompilePipeline(OpPassManager &pm,
                                const PipelineOptions &options) {
  buildDifferentiatePipeline(pm);
  buildSpecializedPipeline(pm, Stage::LLVMDialect, options);
}
