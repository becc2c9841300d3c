//===- BF16DotProducts.cpp - bf16 pairs on AVX512_BF16 --------------------===//

#include "BF16DotProducts.h"

#include "fuse/Codegen/Passes.h"

#include "PassDetail.h"

#include "fuse/ABI.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/MC/MCInstrInfo.h"
#include "llvm/MC/MCSchedule.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/Debug.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/Triple.h"

#include <functional>
#include <memory>
#include <mutex>
#include <optional>

#define DEBUG_TYPE "fuse-bf16-dot-products"

namespace fuse {
#define GEN_PASS_DEF_FUSEWIDENBF16OPERANDS
#include "fuse/Codegen/Passes.h.inc"
} // namespace fuse

using namespace mlir;

/// The f32 bytes from which a bf16 value read again after other
/// contractions is widened again rather than its copy kept (1 MiB).
static constexpr int64_t kMinRewidenBytes = int64_t(1) << 20;

/// Lanes of f32 (and pairs of bf16) in a 512-bit register.
static constexpr int64_t kLanes = 16;

namespace {

/// `func`'s module's target (else null: the host's).
DictionaryAttr targetOf(func::FuncOp func) {
  auto module = func ? func->getParentOfType<ModuleOp>() : ModuleOp();
  return module
             ? module->getAttrOfType<DictionaryAttr>(fuse::abi::kTargetAttrName)
             : DictionaryAttr();
}

/// An entry of the target dictionary, or "".
StringRef targetEntry(DictionaryAttr target, StringRef key) {
  auto value = target ? target.getAs<StringAttr>(key) : StringAttr();
  return value ? value.getValue() : StringRef();
}

/// Whether LLVM's scheduling model of `cpu` has `vdpbf16ps` do more
/// multiply-adds per cycle than `vfmadd231ps` on f32 (both on 512-bit
/// registers): 32 against 16 per instruction, so pairs win when their
/// reciprocal throughput is less than twice the FMA's. Cooper Lake's model
/// says 0.5 and 0.5 cycles (pairs twice as fast); Sapphire and Emerald
/// Rapids' 2.0 against 1.0, and measured on an Emerald Rapids core, one
/// vdpbf16ps every 2 cycles against two FMAs per cycle: pairs run at half
/// the FMAs' multiply-adds, and the widened operands' FMAs are faster.
/// Without a model of both instructions, the feature decides (true).
bool modelPrefersPairs(StringRef triple, StringRef cpu, StringRef features) {
  static std::once_flag once;
  std::call_once(once, [] { llvm::InitializeNativeTarget(); });
  std::string error;
  llvm::Triple parsed(triple);
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(parsed, error);
  if (!target)
    return true;
  std::unique_ptr<llvm::MCSubtargetInfo> subtarget(
      target->createMCSubtargetInfo(parsed, cpu, features));
  std::unique_ptr<llvm::MCInstrInfo> instructions(target->createMCInstrInfo());
  if (!subtarget || !instructions ||
      !subtarget->getSchedModel().hasInstrSchedModel())
    return true;
  const llvm::MCSchedModel &model = subtarget->getSchedModel();
  auto cycles = [&](StringRef name) -> std::optional<double> {
    for (unsigned opcode = 0, e = instructions->getNumOpcodes(); opcode < e;
         ++opcode) {
      if (instructions->getName(opcode) != name)
        continue;
      const llvm::MCSchedClassDesc *sched =
          model.getSchedClassDesc(instructions->get(opcode).getSchedClass());
      if (!sched || !sched->isValid() || sched->isVariant())
        return std::nullopt;
      return llvm::MCSchedModel::getReciprocalThroughput(*subtarget, *sched);
    }
    return std::nullopt;
  };
  std::optional<double> pair = cycles("VDPBF16PSZr");
  std::optional<double> fma = cycles("VFMADD231PSZr");
  bool prefers = !pair || !fma || *pair < 2 * *fma;
  LLVM_DEBUG(llvm::dbgs() << "bf16 products on " << cpu << ": vdpbf16ps "
                          << (pair ? *pair : -1.0) << " cycles, vfmadd231ps "
                          << (fma ? *fma : -1.0) << " -> "
                          << (prefers ? "pairs" : "widened FMAs") << "\n");
  return prefers;
}

/// Whether `features` (an LLVM feature string; empty: the host's) have
/// AVX512_BF16 with AVX-512F and VL.
bool hasAVX512BF16(StringRef features) {
  llvm::StringMap<bool> enabled;
  if (features.empty()) {
    enabled = llvm::sys::getHostCPUFeatures();
  } else {
    // A later entry overrides an earlier one, as in LLVM's feature strings.
    SmallVector<StringRef> entries;
    features.split(entries, ',', -1, /*KeepEmpty=*/false);
    for (StringRef entry : entries)
      enabled[entry.ltrim("+-")] = !entry.starts_with("-");
  }
  // Every CPU with AVX512_BF16 has AVX512VL; LLVM 22 cannot select some
  // 256-bit bf16 shuffles of these tiles without it (a feature string
  // naming avx512bf16 alone keeps the widening code).
  return enabled.lookup("avx512bf16") && enabled.lookup("avx512f") &&
         enabled.lookup("avx512vl");
}

} // namespace

bool fuse::targetHasAVX512BF16(func::FuncOp func) {
  return hasAVX512BF16(
      targetEntry(targetOf(func), fuse::abi::kTargetFeaturesKey));
}

bool fuse::targetPairsBF16Products(StringRef triple, StringRef cpu,
                                   StringRef features) {
  if (!hasAVX512BF16(features))
    return false;
  std::string tripleName =
      triple.empty() ? llvm::sys::getProcessTriple() : triple.str();
  std::string cpuName =
      cpu.empty() ? llvm::sys::getHostCPUName().str() : cpu.str();
  // One query per target: every function of a compile asks.
  static std::mutex mutex;
  static llvm::StringMap<bool> verdicts;
  std::string key = tripleName + "|" + cpuName + "|" + features.str();
  std::lock_guard<std::mutex> lock(mutex);
  auto [it, inserted] = verdicts.try_emplace(key, false);
  if (inserted)
    it->second = modelPrefersPairs(tripleName, cpuName, features);
  return it->second;
}

bool fuse::targetPairsBF16Products(func::FuncOp func) {
  DictionaryAttr target = targetOf(func);
  return targetPairsBF16Products(
      targetEntry(target, fuse::abi::kTargetTripleKey),
      targetEntry(target, fuse::abi::kTargetCpuKey),
      targetEntry(target, fuse::abi::kTargetFeaturesKey));
}

int64_t fuse::registerTileReductionSteps(linalg::LinalgOp op) {
  if (op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1)
    return 1;
  auto elementOf = [](Value v) { return getElementTypeOrSelf(v.getType()); };
  if (!elementOf(op.getDpsInputs()[0]).isBF16() ||
      !elementOf(op.getDpsInputs()[1]).isBF16() ||
      !elementOf(op.getDpsInits()[0]).isF32())
    return 1;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  SmallVector<unsigned> reductions;
  op.getReductionDims(reductions);
  if (reductions.size() != 1 || ShapedType::isDynamic(ranges[reductions[0]]) ||
      ranges[reductions[0]] % 2 != 0)
    return 1;
  if (!targetPairsBF16Products(op->getParentOfType<func::FuncOp>()))
    return 1;
  return 2;
}

namespace {

/// Whether `contract` is C(m, n) += A(m, k) B(k, n) with A and B bf16, C
/// f32, k = 2 and n a multiple of 16 (the maps of a row-major matmul tile).
bool isPairTile(vector::ContractionOp contract) {
  auto lhs = dyn_cast<VectorType>(contract.getLhsType());
  auto rhs = dyn_cast<VectorType>(contract.getRhsType());
  auto acc = dyn_cast<VectorType>(contract.getAccType());
  if (!lhs || !rhs || !acc || lhs.getRank() != 2 || rhs.getRank() != 2 ||
      acc.getRank() != 2 || !lhs.getElementType().isBF16() ||
      !rhs.getElementType().isBF16() || !acc.getElementType().isF32() ||
      contract.getKind() != vector::CombiningKind::ADD)
    return false;
  MLIRContext *context = contract.getContext();
  AffineExpr m, n, k;
  bindDims(context, m, n, k);
  SmallVector<SmallVector<AffineExpr, 4>> exprs = {{m, k}, {k, n}, {m, n}};
  SmallVector<AffineMap> maps = AffineMap::inferFromExprList(
      ArrayRef<SmallVector<AffineExpr, 4>>(exprs), context);
  if (contract.getIndexingMapsArray() != ArrayRef<AffineMap>(maps))
    return false;
  return lhs.getDimSize(1) == 2 && rhs.getDimSize(0) == 2 &&
         rhs.getDimSize(1) % kLanes == 0 && !lhs.isScalable() &&
         !rhs.isScalable();
}

struct ContractToBF16DotProducts : OpRewritePattern<vector::ContractionOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(vector::ContractionOp contract,
                                PatternRewriter &rewriter) const override {
    if (!isPairTile(contract) || isa<vector::MaskOp>(contract->getParentOp()))
      return failure();
    Location loc = contract.getLoc();
    auto acc = cast<VectorType>(contract.getAccType());
    int64_t rows = acc.getDimSize(0), columns = acc.getDimSize(1);
    Type bf16 = rewriter.getBF16Type();
    auto pairs = VectorType::get({2 * kLanes}, bf16);
    auto lanes = VectorType::get({kLanes}, rewriter.getF32Type());
    auto words = VectorType::get({kLanes}, rewriter.getI32Type());
    auto intrinsic = rewriter.getStringAttr("llvm.x86.avx512bf16.dpbf16ps.512");

    // The right-hand side's two rows, 16 columns at a time, interleaved:
    // (b[0][j], b[1][j]) is the pair lane j multiplies.
    Value rhs0 = vector::ExtractOp::create(rewriter, loc, contract.getRhs(), 0);
    Value rhs1 = vector::ExtractOp::create(rewriter, loc, contract.getRhs(), 1);
    SmallVector<int64_t> interleave;
    for (int64_t j = 0; j < kLanes; ++j)
      interleave.append({j, kLanes + j});
    SmallVector<Value> rhsPairs;
    for (int64_t c = 0; c < columns; c += kLanes) {
      Value first = vector::ExtractStridedSliceOp::create(
          rewriter, loc, rhs0, ArrayRef<int64_t>{c}, ArrayRef<int64_t>{kLanes},
          ArrayRef<int64_t>{1});
      Value second = vector::ExtractStridedSliceOp::create(
          rewriter, loc, rhs1, ArrayRef<int64_t>{c}, ArrayRef<int64_t>{kLanes},
          ArrayRef<int64_t>{1});
      rhsPairs.push_back(
          vector::ShuffleOp::create(rewriter, loc, first, second, interleave));
    }

    Value result = contract.getAcc();
    for (int64_t r = 0; r < rows; ++r) {
      // The row's pair (a[r][0], a[r][1]) as one 32-bit word, broadcast.
      Value pair =
          vector::ExtractOp::create(rewriter, loc, contract.getLhs(), r);
      Value word = vector::BitCastOp::create(
          rewriter, loc, VectorType::get({1}, rewriter.getI32Type()), pair);
      Value scalar = vector::ExtractOp::create(rewriter, loc, word, 0);
      Value broadcast =
          vector::BroadcastOp::create(rewriter, loc, words, scalar);
      Value lhsPairs =
          vector::BitCastOp::create(rewriter, loc, pairs, broadcast);
      Value row = vector::ExtractOp::create(rewriter, loc, result, r);
      for (auto [i, rhsPair] : llvm::enumerate(rhsPairs)) {
        int64_t c = static_cast<int64_t>(i) * kLanes;
        Value sums = vector::ExtractStridedSliceOp::create(
            rewriter, loc, row, ArrayRef<int64_t>{c}, ArrayRef<int64_t>{kLanes},
            ArrayRef<int64_t>{1});
        Value dot =
            LLVM::CallIntrinsicOp::create(rewriter, loc, lanes, intrinsic,
                                          ValueRange{sums, lhsPairs, rhsPair})
                .getResult(0);
        row = vector::InsertStridedSliceOp::create(rewriter, loc, dot, row,
                                                   ArrayRef<int64_t>{c},
                                                   ArrayRef<int64_t>{1});
      }
      result = vector::InsertOp::create(rewriter, loc, row, result, r);
    }
    LLVM_DEBUG(llvm::dbgs()
               << "vdpbf16ps: " << rows << " x " << columns << " tile\n");
    rewriter.replaceOp(contract, result);
    return success();
  }
};
} // namespace

void fuse::populateBF16DotProductPatterns(RewritePatternSet &patterns) {
  patterns.add<ContractToBF16DotProducts>(patterns.getContext(),
                                          /*benefit=*/3);
}

namespace {

/// Whether `op` sums products of bf16 inputs into an f32 output.
bool isMixedContraction(linalg::LinalgOp op) {
  if (!op.hasPureTensorSemantics() || op.getNumDpsInits() != 1 ||
      op.getNumReductionLoops() == 0 ||
      !getElementTypeOrSelf(op.getDpsInits()[0].getType()).isF32())
    return false;
  bool any = false;
  for (Value input : op.getDpsInputs()) {
    Type element = getElementTypeOrSelf(input.getType());
    if (element.isBF16())
      any = true;
    else if (!element.isF32())
      return false;
  }
  return any;
}

/// Whether every bf16 input of `op` is read only through its widening to
/// f32.
bool readsBF16OnlyWidened(linalg::LinalgOp op) {
  Block &body = op->getRegion(0).front();
  for (OpOperand *input : op.getDpsInputOperands())
    if (getElementTypeOrSelf(input->get().getType()).isBF16())
      for (Operation *user :
           body.getArgument(input->getOperandNumber()).getUsers()) {
        auto extf = dyn_cast<arith::ExtFOp>(user);
        if (!extf || !extf.getType().isF32())
          return false;
      }
  return true;
}

/// Whether `op` is an element-wise generic (parallel loops, identity maps,
/// static shapes) reading some static bf16 input only widened to f32.
bool isElementwiseWideningReader(linalg::LinalgOp op) {
  auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
  if (!generic || !generic.hasPureTensorSemantics() ||
      generic.getNumParallelLoops() != generic.getNumLoops() ||
      !llvm::all_of(generic.getIndexingMapsArray(),
                    [](AffineMap map) { return map.isIdentity(); }))
    return false;
  bool any = llvm::any_of(generic.getDpsInputs(), [](Value v) {
    auto type = cast<ShapedType>(v.getType());
    return type.getElementType().isBF16() && type.hasStaticShape();
  });
  return any && readsBF16OnlyWidened(op);
}

/// An f32 tensor of `value`'s static shape, each element `element(x)` of
/// `value`'s: one element-wise generic with identity maps.
Value mapToF32(OpBuilder &b, Location loc, Value value,
               function_ref<Value(OpBuilder &, Location, Value)> element) {
  auto type = cast<RankedTensorType>(value.getType());
  auto wide = type.clone(b.getF32Type());
  Value init = tensor::EmptyOp::create(b, loc, wide.getShape(), b.getF32Type());
  SmallVector<AffineMap> maps(2, b.getMultiDimIdentityMap(type.getRank()));
  SmallVector<utils::IteratorType> iterators(type.getRank(),
                                             utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             b, loc, wide, value, init, maps, iterators,
             [&](OpBuilder &nested, Location nestedLoc, ValueRange args) {
               linalg::YieldOp::create(nested, nestedLoc,
                                       element(nested, nestedLoc, args[0]));
             })
      .getResult(0);
}

/// `value` (a static bf16 tensor) widened to f32 by an element-wise extf.
Value widen(OpBuilder &b, Location loc, Value value) {
  return mapToF32(b, loc, value, [](OpBuilder &b, Location loc, Value x) {
    return arith::ExtFOp::create(b, loc, b.getF32Type(), x).getResult();
  });
}

/// The f32 tensor `value` is the rounding of, when `value` is a cast: an
/// element-wise generic (identity maps) whose body only rounds its one f32
/// input to bf16. Else null.
Value roundedSource(Value value) {
  auto producer = value.getDefiningOp<linalg::GenericOp>();
  if (!producer || producer.getNumDpsInputs() != 1 ||
      producer.getNumDpsInits() != 1 ||
      producer.getNumParallelLoops() != producer.getNumLoops() ||
      !llvm::all_of(producer.getIndexingMapsArray(),
                    [](AffineMap map) { return map.isIdentity(); }))
    return {};
  Value source = producer.getDpsInputs()[0];
  if (!getElementTypeOrSelf(source.getType()).isF32() ||
      !cast<ShapedType>(source.getType()).hasStaticShape())
    return {};
  Block &body = producer->getRegion(0).front();
  if (body.getOperations().size() != 2)
    return {};
  auto trunc = dyn_cast<arith::TruncFOp>(&body.front());
  if (!trunc || trunc.getIn() != body.getArgument(0) ||
      trunc.getRoundingmodeAttr() ||
      body.getTerminator()->getOperand(0) != trunc.getResult())
    return {};
  return source;
}

/// The f32 tensor `source` rounded to bf16 and widened back (exact), in
/// one element-wise pass: the bits of widening its bf16 cast.
Value roundInPlace(OpBuilder &b, Location loc, Value source) {
  return mapToF32(b, loc, source, [](OpBuilder &b, Location loc, Value x) {
    Value rounded = arith::TruncFOp::create(b, loc, b.getBF16Type(), x);
    return arith::ExtFOp::create(b, loc, b.getF32Type(), rounded).getResult();
  });
}

/// Whether `pad` pads a static bf16 tensor with a constant.
bool isWidenablePad(tensor::PadOp pad) {
  FloatAttr value;
  return pad.getResultType().hasStaticShape() &&
         pad.getSourceType().getElementType().isBF16() &&
         matchPattern(pad.getConstantPaddingValue(), m_Constant(&value));
}

/// `pad` of `source` (its source's f32 copy) with the f32 padding value.
Value widenPad(OpBuilder &b, tensor::PadOp pad, Value source) {
  FloatAttr value;
  (void)matchPattern(pad.getConstantPaddingValue(), m_Constant(&value));
  bool lost = false;
  APFloat wide = value.getValue();
  wide.convert(APFloat::IEEEsingle(), APFloat::rmNearestTiesToEven, &lost);
  Location loc = pad.getLoc();
  Value padding = arith::ConstantOp::create(
      b, loc, b.getF32FloatAttr(wide.convertToFloat()));
  return tensor::PadOp::create(b, loc,
                               pad.getResultType().clone(b.getF32Type()),
                               source, pad.getMixedLowPad(),
                               pad.getMixedHighPad(), padding, pad.getNofold())
      .getResult();
}

struct FuseWidenBF16OperandsPass
    : fuse::impl::FuseWidenBF16OperandsBase<FuseWidenBF16OperandsPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    bool pairs = fuse::targetPairsBF16Products(func);
    SmallVector<linalg::LinalgOp> ops;
    // Element-wise readers that read a bf16 input only widened: they may
    // read a copy made for a contraction instead (below).
    DenseSet<Operation *> elementwise;
    func.walk([&](linalg::LinalgOp op) {
      if (isElementwiseWideningReader(op)) {
        ops.push_back(op);
        elementwise.insert(op);
        return;
      }
      if (!isMixedContraction(op))
        return;
      // vdpbf16ps takes linalg.matmul's bf16 operands as they are.
      if (pairs && isa<linalg::MatmulOp>(op.getOperation()))
        return;
      if (!llvm::all_of(op.getDpsInputs(), [](Value v) {
            return cast<ShapedType>(v.getType()).hasStaticShape();
          }))
        return;
      // The body reads each bf16 input only through its widening.
      if (!readsBF16OnlyWidened(op))
        return;
      ops.push_back(op);
    });
    // The readers of each bf16 value (a contraction reading it directly or
    // through a constant pad) fall into groups, each served by one f32 copy
    // made right before the group's first reader: a layer's input gradient
    // and filter gradient, which read the same output gradient one after
    // the other, share a copy. A reader after a contraction that does not
    // read the value starts a new group: a layer's activation, read by its
    // forward product and again by its weight gradient after the rest of
    // the forward and backward passes, is widened twice rather than kept
    // in f32 across the loss (the bf16 policy keeps activations in bf16,
    // half the bytes; the second copy costs one more pass over them).
    // Only copies of kMinRewidenBytes or more: a smaller one is not what
    // sets the workspace's peak (the seed MLP's 196 KiB input: no byte
    // saved, 2-4% of its step lost to the second pass).
    // An element-wise reader (which widens in its own loop) falls into a
    // group as a contraction would, and reads the group's copy when one
    // was made for an earlier contraction of the group: a ReLU's mask taken
    // from its bf16 output after the filter gradient read that output lets
    // the bf16 value die at the copy, rather than live beside it.
    DenseMap<Value, Operation *> lastReader;
    DenseMap<Value, unsigned> groups;
    DenseMap<std::pair<Operation *, Value>, unsigned> groupOf;
    // An element-wise reader after a contraction reads no group's copy.
    constexpr unsigned kNoGroup = ~0u;
    auto assignGroup = [&](Value value, Operation *reader, bool contraction) {
      Block *block = value.getParentBlock();
      Operation *at = block->findAncestorOpInBlock(*reader);
      auto last = lastReader.find(value);
      // Whether a contraction runs between the value's last contraction
      // reader and this reader.
      bool intervening = false;
      if (last != lastReader.end() && last->second != at)
        for (Operation *op = last->second->getNextNode(); op != at;
             op = op->getNextNode()) {
          WalkResult found = op->walk([](linalg::LinalgOp inner) {
            return inner.getNumReductionLoops() > 0 ? WalkResult::interrupt()
                                                    : WalkResult::advance();
          });
          if (found.wasInterrupted()) {
            intervening = true;
            break;
          }
        }
      if (!contraction) {
        groupOf[{reader, value}] = last == lastReader.end() || intervening
                                       ? kNoGroup
                                       : groups.lookup(value);
        return;
      }
      unsigned &group = groups[value];
      auto type = cast<ShapedType>(value.getType());
      bool large = type.hasStaticShape() &&
                   type.getNumElements() * 4 >= kMinRewidenBytes;
      if (intervening && large)
        ++group;
      lastReader[value] = at;
      groupOf[{reader, value}] = group;
    };
    auto sourceOf = [](Value value) -> Value {
      if (auto pad = value.getDefiningOp<tensor::PadOp>();
          pad && isWidenablePad(pad))
        return pad.getSource();
      return value;
    };
    for (linalg::LinalgOp op : ops)
      for (OpOperand *input : op.getDpsInputOperands())
        if (getElementTypeOrSelf(input->get().getType()).isBF16()) {
          assignGroup(sourceOf(input->get()), op, !elementwise.contains(op));
          if (sourceOf(input->get()) != input->get())
            groupOf[{op, input->get()}] = groupOf[{op, sourceOf(input->get())}];
        }

    DenseMap<std::pair<Value, unsigned>, Value> widened;
    DenseMap<Block *, Operation *> lastArgumentCopy;
    // Casts and pads whose copies replaced them, erased when unread.
    llvm::SetVector<Operation *> dropped;
    std::function<Value(Value, unsigned, Operation *, Location)> widenFor =
        [&](Value value, unsigned group, Operation *reader, Location loc) {
          if (Value copy = widened.lookup({value, group}))
            return copy;
          // The first group's copy right after the value (a block's
          // arguments' copies at its start, in the order they are made),
          // a later group's right before its first reader.
          OpBuilder b(func.getContext());
          Block *block = nullptr;
          if (group != 0) {
            b.setInsertionPoint(
                value.getParentBlock()->findAncestorOpInBlock(*reader));
          } else if (Operation *def = value.getDefiningOp()) {
            b.setInsertionPointAfter(def);
          } else {
            block = cast<BlockArgument>(value).getOwner();
            if (Operation *last = lastArgumentCopy.lookup(block))
              b.setInsertionPointAfter(last);
            else
              b.setInsertionPointToStart(block);
          }
          Value copy;
          Value source = roundedSource(value);
          if (source && groups.lookup(value) == 0) {
            // A cast that one copy serves: the copy rounds the cast's f32
            // source instead (one pass), and the cast goes if nothing else
            // reads it. With several copies the cast stays, and each
            // copy widens its half-size bytes.
            copy = roundInPlace(b, loc, source);
            dropped.insert(value.getDefiningOp());
          } else if (auto pad = value.getDefiningOp<tensor::PadOp>();
                     pad && isWidenablePad(pad)) {
            // Widening commutes with a constant pad: pad the source's copy
            // (the input gradient's padded output gradient reads the copy
            // the filter gradient reads too).
            Value padded = widenFor(pad.getSource(), group, reader, loc);
            copy = widenPad(b, pad, padded);
            dropped.insert(pad);
          } else {
            copy = widen(b, loc, value);
          }
          widened[{value, group}] = copy;
          if (block)
            lastArgumentCopy[block] = copy.getDefiningOp();
          return copy;
        };
    for (linalg::LinalgOp op : ops) {
      Block &body = op->getRegion(0).front();
      bool reader = elementwise.contains(op);
      bool changed = false;
      for (OpOperand *input : op.getDpsInputOperands()) {
        if (!getElementTypeOrSelf(input->get().getType()).isBF16())
          continue;
        unsigned group = groupOf.lookup({op.getOperation(), input->get()});
        if (reader) {
          Value copy = group == kNoGroup
                           ? Value()
                           : widened.lookup({input->get(), group});
          if (!copy)
            continue;
          input->set(copy);
        } else {
          input->set(widenFor(input->get(), group, op, op.getLoc()));
        }
        changed = true;
        // The body's widening of this input is now the identity.
        BlockArgument arg = body.getArgument(input->getOperandNumber());
        arg.setType(Float32Type::get(func.getContext()));
        for (Operation *user : llvm::make_early_inc_range(arg.getUsers())) {
          auto extf = dyn_cast<arith::ExtFOp>(user);
          if (extf && extf.getType().isF32()) {
            extf.replaceAllUsesWith(arg);
            extf.erase();
          }
        }
      }
      if (!changed)
        continue;
      LLVM_DEBUG(llvm::dbgs() << "widened the bf16 operands of " << op << "\n");
      if (failed(mlir::verify(op.getOperation()))) {
        op.emitOpError("could not widen its bf16 operands");
        return signalPassFailure();
      }
    }
    // (A pad's source may be a dropped cast: pads first.)
    for (Operation *op : llvm::reverse(dropped))
      if (op->use_empty())
        op->erase();
  }
};

} // namespace
