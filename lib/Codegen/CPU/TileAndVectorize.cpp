//===- TileAndVectorize.cpp - The fuse-tile-and-vectorize pass ------------===//
//
// The CPU code-generation strategy: tile sizes per op kind, chosen from the
// vector width, then vectorization of every tile.
//
//===----------------------------------------------------------------------===//

#include "fuse/Codegen/Passes.h"

#include "fuse/ABI.h"

#include "ConvolutionTiling.h"
#include "DotProductTiling.h"
#include "ImageLoopFusion.h"
#include "MatmulPacking.h"
#include "MatmulTiling.h"
#include "TileLoops.h"
#include "WinogradConvolution.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Affine/ViewLikeInterfaceUtils.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Debug.h"
#include "llvm/TargetParser/Host.h"

#define DEBUG_TYPE "fuse-tile-and-vectorize"

namespace fuse {
#define GEN_PASS_DEF_FUSETILEANDVECTORIZE
#include "fuse/Codegen/Passes.h.inc"
} // namespace fuse

using namespace mlir;
using fuse::largestDivisorAtMost;

namespace {

constexpr llvm::StringLiteral kVectorSizes = "fuse.vector_sizes";

/// The widest vector register a CPU with `features` has, in bits.
unsigned widestVectorBits(const llvm::StringMap<bool> &features) {
  if (features.lookup("avx512f"))
    return 512;
  if (features.lookup("avx") || features.lookup("avx2"))
    return 256;
  return 128;
}

/// The vector width for `func`: its module's target (abi::kTargetAttrName,
/// set by the compile driver), else the host's (a bare fuse-opt run).
unsigned targetVectorBits(func::FuncOp func) {
  auto module = func->getParentOfType<ModuleOp>();
  auto target =
      module ? module->getAttrOfType<DictionaryAttr>(fuse::abi::kTargetAttrName)
             : DictionaryAttr();
  auto features = target
                      ? target.getAs<StringAttr>(fuse::abi::kTargetFeaturesKey)
                      : StringAttr();
  if (!features) {
    unsigned bits = widestVectorBits(llvm::sys::getHostCPUFeatures());
    LLVM_DEBUG(llvm::dbgs()
               << "vector width " << bits << " bits: the host's (no "
               << fuse::abi::kTargetAttrName << ")\n");
    return bits;
  }
  // A later entry overrides an earlier one, as in LLVM's feature strings.
  llvm::StringMap<bool> enabled;
  SmallVector<StringRef> entries;
  features.getValue().split(entries, ',', -1, /*KeepEmpty=*/false);
  for (StringRef entry : entries)
    enabled[entry.ltrim("+-")] = !entry.starts_with("-");
  unsigned bits = widestVectorBits(enabled);
  LLVM_DEBUG(llvm::dbgs() << "vector width " << bits << " bits: target cpu "
                          << target.get(fuse::abi::kTargetCpuKey) << "\n");
  return bits;
}

/// A tile size for a vectorized dim of size `n` that divides it: two or one
/// full vector registers when possible, the whole dim when it is narrower
/// than a register, else the largest divisor that fits in two registers.
int64_t vectorTile(int64_t n, int64_t lanes) {
  for (int64_t candidate : {2 * lanes, lanes})
    if (n % candidate == 0)
      return candidate;
  if (n < lanes)
    return n;
  return largestDivisorAtMost(n, 2 * lanes);
}

/// The columns of a matmul tile of `rows` rows: two registers, or for
/// fewer rows than the micro-kernel's, as many more as keep its number of
/// accumulators. A row of two registers alone (batch 1) would wait on two
/// chains of dependent FMAs, 4 cycles each, with both FMA units mostly idle.
/// A step of the tile also holds its row of B and a broadcast of A: with
/// more than 27 of the 32 registers live, the unrolled steps spill (tiles of
/// 4 rows x 6 registers: 856 of the loop's 1,430 instructions on the stack).
int64_t matmulTileColumns(int64_t n, int64_t rows, int64_t lanes) {
  if (n % lanes != 0)
    return vectorTile(n, lanes);
  constexpr int64_t kMaxLiveRegisters = 27;
  int64_t registers = std::min(2 * fuse::kMicroKernelRows / rows,
                               (kMaxLiveRegisters - 1) / (rows + 1));
  return largestDivisorAtMost(n / lanes, std::max<int64_t>(2, registers)) *
         lanes;
}

/// The row bands of an m x n matmul's register tiles: all rows in tiles of
/// the largest divisor of m up to the micro-kernel's 12 rows when that is 9
/// or more, else tiles of 12 rows and a band of the rows left (64 rows: 60
/// in tiles of 12, 24 accumulators, and 4 in one, instead of tiles of 8
/// with 16 accumulators; 13 rows: 12 and 1 instead of tiles of 1).
SmallVector<fuse::RowBand> matmulRowBands(int64_t m, int64_t n, int64_t lanes) {
  constexpr int64_t height = fuse::kMicroKernelRows;
  int64_t rows = largestDivisorAtMost(m, height);
  if (m <= height || rows > height * 2 / 3)
    return {{0, m, rows, matmulTileColumns(n, rows, lanes)}};
  int64_t main = m / height * height;
  return {{0, main, height, matmulTileColumns(n, height, lanes)},
          {main, m, m - main, matmulTileColumns(n, m - main, lanes)}};
}

/// Whether `op` reads or writes i1 buffers: LLVM packs vectors of i1 into
/// bits in memory, while tensors of i1 use one byte per element, so such ops
/// stay scalar (an i1 value between fused ops never reaches memory).
bool touchesBooleanMemory(linalg::LinalgOp op) {
  return llvm::any_of(op->getOperandTypes(), [](Type type) {
    return getElementTypeOrSelf(type).isInteger(1);
  });
}

/// Tile sizes for `op`: one per loop, each at most the loop's range.
SmallVector<int64_t> chooseTileSizes(linalg::LinalgOp op, unsigned vectorBits) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  Type elementType = getElementTypeOrSelf(op.getDpsInits()[0].getType());
  int64_t lanes = fuse::vectorLanes(elementType, vectorBits);
  auto clamp = [&](SmallVector<int64_t> sizes) {
    for (auto [size, range] : llvm::zip(sizes, ranges))
      size = std::max<int64_t>(1, std::min(size, range));
    return sizes;
  };
  // Contractions, convolutions and pools get tiles that divide their
  // iteration space exactly: their tiles are static, need no masks, and the
  // 1-D decomposition of convolutions sees static shapes.
  if (isa<linalg::MatmulOp>(op)) { // m, n, k
    int64_t rows = largestDivisorAtMost(ranges[0], fuse::kMicroKernelRows);
    return {rows, matmulTileColumns(ranges[1], rows, lanes), 1};
  }
  if (isa<linalg::BatchMatmulOp>(op)) // b, m, n, k
    return {1, largestDivisorAtMost(ranges[1], fuse::kBatchMatmulTileRows),
            vectorTile(ranges[2], lanes), 1};
  if (isa<linalg::Conv2DNhwcHwcfOp>(op)) { // n, oh, ow, f, kh, kw, c
    fuse::ConvTile tile =
        fuse::chooseConvTile(ranges[0], ranges[2], ranges[3], lanes);
    return {tile.images, 1, tile.columns, tile.filters, 1, 1, 1};
  }
  if (isa<linalg::PoolingNhwcMaxOp, linalg::PoolingNhwcSumOp>(op))
    return {1,
            1,
            largestDivisorAtMost(ranges[2], 8),
            largestDivisorAtMost(ranges[3], 2 * lanes),
            1,
            1};
  // Transposes that move the input's contiguous dim away from the
  // innermost: square blocks of one register's lanes over the output's
  // innermost dim and the dim the input's innermost becomes, which read
  // whole input rows and lower to in-register shuffles. (Tiles along the
  // output's innermost alone would gather the input element by element.)
  if (auto transpose = dyn_cast<linalg::TransposeOp>(op.getOperation())) {
    ArrayRef<int64_t> perm = transpose.getPermutation();
    int64_t rank = perm.size();
    int64_t inner = llvm::find(perm, rank - 1) - perm.begin();
    if (rank >= 2 && inner != rank - 1) {
      SmallVector<int64_t> sizes(rank, 1);
      sizes[inner] = sizes[rank - 1] = lanes;
      return clamp(sizes);
    }
  }
  // Element-wise ops, reductions, fills, other transposes: up to four vectors
  // along the innermost loop. A partial tile is masked, except along a
  // reduced loop, whose tiles divide it exactly: a masked-off lane must not
  // reach a reduction.
  SmallVector<int64_t> sizes(ranges.size(), 1);
  if (sizes.empty())
    return sizes;
  int64_t inner = ranges.back();
  bool reduced =
      op.getIteratorTypesArray().back() == utils::IteratorType::reduction;
  sizes.back() = reduced ? (inner % (4 * lanes) == 0 ? 4 * lanes
                                                     : vectorTile(inner, lanes))
                         : 4 * lanes;
  return clamp(sizes);
}

/// The order of the tile loops: the op's own, except for a packing
/// transpose (below) and a convolution
/// whose filter does not fit in L2 (the filter gradient's, whose "filter"
/// is the output gradient). Its filter rows are then the outermost loop, so
/// that one row of the filter (in L2) serves every output tile before the
/// next is read, instead of the whole filter streaming from memory once per
/// output tile.
SmallVector<int64_t> chooseLoopOrder(linalg::LinalgOp op) {
  // A transpose that keeps the innermost dim (packing panels of a matrix)
  // follows its input's layout: one sequential read of the source, as a
  // stream from memory, instead of one strided pass per panel.
  if (auto transpose = dyn_cast<linalg::TransposeOp>(op.getOperation())) {
    ArrayRef<int64_t> perm = transpose.getPermutation();
    if (perm.empty() || perm.back() != int64_t(perm.size()) - 1)
      return {};
    SmallVector<int64_t> order(perm.size());
    for (auto [outputDim, inputDim] : llvm::enumerate(perm))
      order[inputDim] = outputDim;
    return order;
  }
  auto conv = dyn_cast<linalg::Conv2DNhwcHwcfOp>(op.getOperation());
  if (!conv || !fuse::hasLargeFilter(conv))
    return {};
  // n, oh, ow, f, kh, kw, c -> kh, n, oh, ow, f, kw, c.
  return {4, 0, 1, 2, 3, 5, 6};
}

/// Packs a transposed right-hand side of a matmul (read as [n, k]) into
/// [k, n]: the micro-kernel loads rows of the right-hand side as vectors, and
/// a transposed one would be gathered element by element. The O(n k) copy
/// pays for itself against the O(m n k) product. Returns the product on the
/// packed operand, or `op` if there is nothing to pack.
linalg::LinalgOp packTransposedRhs(RewriterBase &rewriter,
                                   linalg::LinalgOp op) {
  if (!isa<linalg::MatmulOp, linalg::BatchMatmulOp>(op))
    return op;
  unsigned batch = isa<linalg::BatchMatmulOp>(op) ? 1 : 0;
  MLIRContext *context = op->getContext();
  unsigned rank = batch + 3;
  auto dim = [&](unsigned d) { return getAffineDimExpr(d, context); };
  SmallVector<AffineExpr> prefix;
  for (unsigned d = 0; d < batch; ++d)
    prefix.push_back(dim(d));
  auto map = [&](AffineExpr a, AffineExpr b) {
    SmallVector<AffineExpr> exprs(prefix);
    exprs.push_back(a);
    exprs.push_back(b);
    return AffineMap::get(rank, 0, exprs, context);
  };
  AffineExpr m = dim(batch), n = dim(batch + 1), k = dim(batch + 2);
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  if (maps[1] != map(n, k))
    return op;
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  Value rhs = op.getDpsInputs()[1];
  auto rhsType = cast<RankedTensorType>(rhs.getType());
  SmallVector<int64_t> packedShape(rhsType.getShape());
  std::swap(packedShape[batch], packedShape[batch + 1]);
  SmallVector<int64_t> permutation;
  for (unsigned d = 0; d < batch; ++d)
    permutation.push_back(d);
  permutation.push_back(batch + 1);
  permutation.push_back(batch);
  Value init = tensor::EmptyOp::create(rewriter, loc, packedShape,
                                       rhsType.getElementType());
  Value packed =
      linalg::TransposeOp::create(rewriter, loc, rhs, init, permutation)
          ->getResult(0);
  SmallVector<AffineMap> newMaps = {maps[0], map(k, n), map(m, n)};
  SmallVector<NamedAttribute> attrs = {rewriter.getNamedAttr(
      "indexing_maps", rewriter.getAffineMapArrayAttr(newMaps))};
  Value lhs = op.getDpsInputs()[0];
  Value acc = op.getDpsInits()[0];
  Operation *replacement =
      batch ? linalg::BatchMatmulOp::create(rewriter, loc,
                                            TypeRange{acc.getType()},
                                            ValueRange{lhs, packed}, acc, attrs)
                  .getOperation()
            : linalg::MatmulOp::create(rewriter, loc, TypeRange{acc.getType()},
                                       ValueRange{lhs, packed}, acc, attrs)
                  .getOperation();
  rewriter.replaceOp(op, replacement->getResults());
  return cast<linalg::LinalgOp>(replacement);
}

/// Splits a convolution whose output rows are not a whole number of
/// fuse::kConvTileColumns into one over the whole tiles and one over the
/// rest, each a convolution on slices. Tiles must divide a convolution (see
/// chooseTileSizes): unsplit, a width of 26 would get tiles of 2 columns,
/// 4 accumulators instead of 16.
void splitConvolutionColumns(RewriterBase &rewriter,
                             linalg::Conv2DNhwcHwcfOp op) {
  if (!op.hasPureTensorSemantics() || op.hasDynamicShape())
    return;
  int64_t width =
      cast<RankedTensorType>(op.getDpsInits()[0].getType()).getDimSize(2);
  int64_t main = width / fuse::kConvTileColumns * fuse::kConvTileColumns;
  if (main == 0 || main == width)
    return;
  // n, oh, ow, f, kh, kw, c: split along ow.
  (void)fuse::splitWithFills(rewriter, op, {{2, main}});
}

/// Rewrites a tensor.pad with a constant value and static shapes as a fill
/// of the padded tensor and a linalg.copy of the source into its interior
/// (or the source's producer writing there), which are tiled and
/// vectorized like any op. (Left alone, the pad becomes a strided
/// memref.copy, which runs element by element in MLIR's C runtime: 9 ms for
/// the seed CNN's 5 MiB input gradient.)
void decomposePad(RewriterBase &rewriter, tensor::PadOp pad) {
  Value value = fuse::paddingValue(pad);
  RankedTensorType type = pad.getResultType();
  auto sourceType = cast<RankedTensorType>(pad.getSource().getType());
  if (!value || !type.hasStaticShape() || !sourceType.hasStaticShape())
    return;
  // A source that a linalg op computes without reading its output's old
  // contents is computed straight into the interior, which its other users,
  // linalg ops that only read it, then read there: no copy at all. (A
  // returned source would be copied out of the interior, slice by slice.)
  auto producer = pad.getSource().getDefiningOp<linalg::LinalgOp>();
  auto onlyRead = [&](OpOperand &use) {
    auto user = dyn_cast<linalg::LinalgOp>(use.getOwner());
    return use.getOwner() == pad || (user && user.isDpsInput(&use));
  };
  bool intoInterior =
      producer && producer.hasPureTensorSemantics() &&
      producer->getNumResults() == 1 && producer.getNumDpsInits() == 1 &&
      producer->getBlock() == pad->getBlock() &&
      !producer.payloadUsesValueFromOperand(producer.getDpsInitOperand(0)) &&
      llvm::all_of(pad.getSource().getUses(), onlyRead);
  Location loc = pad.getLoc();
  rewriter.setInsertionPoint(intoInterior ? producer.getOperation() : pad);
  Value empty = tensor::EmptyOp::create(rewriter, loc, type.getShape(),
                                        type.getElementType());
  Value filled =
      linalg::FillOp::create(rewriter, loc, value, empty)->getResult(0);
  SmallVector<OpFoldResult> offsets = pad.getMixedLowPad();
  SmallVector<OpFoldResult> sizes =
      getAsIndexOpFoldResult(rewriter.getContext(), sourceType.getShape());
  SmallVector<OpFoldResult> unit(type.getRank(), rewriter.getIndexAttr(1));
  Value interior = tensor::ExtractSliceOp::create(rewriter, loc, filled,
                                                  offsets, sizes, unit);
  Value source = pad.getSource();
  rewriter.setInsertionPoint(pad);
  if (intoInterior)
    rewriter.modifyOpInPlace(
        producer, [&] { producer.getDpsInitsMutable()[0].set(interior); });
  else
    source =
        linalg::CopyOp::create(rewriter, loc, source, interior)->getResult(0);
  rewriter.replaceOpWithNewOp<tensor::InsertSliceOp>(pad, source, filled,
                                                     offsets, sizes, unit);
}

/// The stride and offset of a map result `d * stride + offset` (or `d`,
/// `d + offset`, `d * stride`) with constant stride > 0 and offset >= 0.
std::optional<std::tuple<unsigned, int64_t, int64_t>>
matchStridedDim(AffineExpr expr) {
  int64_t offset = 0;
  if (auto sum = dyn_cast<AffineBinaryOpExpr>(expr);
      sum && sum.getKind() == AffineExprKind::Add) {
    auto constant = dyn_cast<AffineConstantExpr>(sum.getRHS());
    if (!constant || constant.getValue() < 0)
      return std::nullopt;
    offset = constant.getValue();
    expr = sum.getLHS();
  }
  int64_t stride = 1;
  if (auto product = dyn_cast<AffineBinaryOpExpr>(expr);
      product && product.getKind() == AffineExprKind::Mul) {
    auto constant = dyn_cast<AffineConstantExpr>(product.getRHS());
    if (!constant || constant.getValue() <= 0)
      return std::nullopt;
    stride = constant.getValue();
    expr = product.getLHS();
  }
  auto dim = dyn_cast<AffineDimExpr>(expr);
  if (!dim)
    return std::nullopt;
  return std::make_tuple(dim.getPosition(), stride, offset);
}

/// Reads each input of `op` that a map of strided dims indexes (`d * s +
/// k`, a pool's window offset) through a strided slice instead, indexed by
/// the bare loop indices: the vectorizer takes only such maps.
void sliceStridedInputs(RewriterBase &rewriter, linalg::GenericOp op) {
  if (op.hasDynamicShape() || !op.hasPureTensorSemantics())
    return;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  bool changed = false;
  MLIRContext *context = op.getContext();
  for (OpOperand *input : op.getDpsInputOperands()) {
    AffineMap map = maps[input->getOperandNumber()];
    if (map.isProjectedPermutation())
      continue;
    SmallVector<int64_t> offsets, sizes, strides;
    SmallVector<AffineExpr> results;
    for (AffineExpr expr : map.getResults()) {
      auto strided = matchStridedDim(expr);
      if (!strided)
        break;
      auto [dim, stride, offset] = *strided;
      offsets.push_back(offset);
      sizes.push_back(ranges[dim]);
      strides.push_back(stride);
      results.push_back(getAffineDimExpr(dim, context));
    }
    AffineMap sliced = AffineMap::get(map.getNumDims(), 0, results, context);
    if (results.size() != map.getNumResults() ||
        !sliced.isProjectedPermutation())
      continue;
    rewriter.setInsertionPoint(op);
    Value slice = tensor::ExtractSliceOp::create(
        rewriter, op.getLoc(), input->get(),
        getAsIndexOpFoldResult(context, offsets),
        getAsIndexOpFoldResult(context, sizes),
        getAsIndexOpFoldResult(context, strides));
    rewriter.modifyOpInPlace(op, [&] { input->set(slice); });
    maps[input->getOperandNumber()] = sliced;
    changed = true;
  }
  if (changed)
    rewriter.modifyOpInPlace(op, [&] {
      op.setIndexingMapsAttr(rewriter.getAffineMapArrayAttr(maps));
    });
}

/// Reads a tile through its slice's source: `transfer_read(extract_slice(t))`
/// becomes `transfer_read(t)`. Only for a slice read and nothing else: a
/// slice that is also written (the tile of an `outs` operand, updated in
/// place) must be read through the slice, or bufferization sees a read of
/// the whole tensor after a write to part of it and copies the tensor.
struct FoldReadOnlySliceIntoTransferRead
    : OpRewritePattern<vector::TransferReadOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(vector::TransferReadOp read,
                                PatternRewriter &rewriter) const override {
    auto slice = read.getBase().getDefiningOp<tensor::ExtractSliceOp>();
    if (!slice || !slice->hasOneUse() || read.hasOutOfBoundsDim())
      return failure();
    // The vector runs along the source's dims only where the slice takes
    // every element: along a strided dim it would read the skipped ones.
    llvm::SmallBitVector dropped = slice.getDroppedDims();
    SmallVector<int64_t> sourceDim;
    for (unsigned d = 0; d < dropped.size(); ++d)
      if (!dropped.test(d))
        sourceDim.push_back(d);
    SmallVector<OpFoldResult> strides = slice.getMixedStrides();
    for (AffineExpr result : read.getPermutationMap().getResults())
      if (auto dim = dyn_cast<AffineDimExpr>(result);
          dim && !isOneInteger(strides[sourceDim[dim.getPosition()]]))
        return failure();
    SmallVector<Value> indices;
    affine::resolveIndicesIntoOpWithOffsetsAndStrides(
        rewriter, read.getLoc(), slice.getMixedOffsets(),
        slice.getMixedStrides(), slice.getDroppedDims(),
        getAsOpFoldResult(read.getIndices()), indices);
    rewriter.replaceOpWithNewOp<vector::TransferReadOp>(
        read, read.getVectorType(), slice.getSource(), indices,
        AffineMapAttr::get(expandDimsToRank(read.getPermutationMap(),
                                            slice.getSourceType().getRank(),
                                            slice.getDroppedDims())),
        read.getPadding(), read.getMask(), read.getInBoundsAttr());
    return success();
  }
};

/// Writes a tile straight into the tensor it is inserted into:
/// `insert_slice(transfer_write(v, t), x)` becomes `transfer_write(v, x)`
/// when the write covers all of `t`, whose old contents then do not matter.
struct FoldInsertSliceOfTransferWrite
    : OpRewritePattern<tensor::InsertSliceOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tensor::InsertSliceOp insert,
                                PatternRewriter &rewriter) const override {
    auto write = insert.getSource().getDefiningOp<vector::TransferWriteOp>();
    if (!write || !write->hasOneUse() || write.getMask() ||
        write.hasOutOfBoundsDim() ||
        !write.getPermutationMap().isMinorIdentity() ||
        insert.getSourceType().getRank() != insert.getType().getRank() ||
        !insert.hasUnitStride())
      return failure();
    // The vector covers the whole tile: leading tile dims of 1, trailing
    // dims equal to the vector's, written from index 0.
    auto tile = cast<RankedTensorType>(write.getBase().getType());
    ArrayRef<int64_t> vector = write.getVectorType().getShape();
    int64_t lead = tile.getRank() - static_cast<int64_t>(vector.size());
    for (int64_t d = 0; d < tile.getRank(); ++d)
      if (tile.getDimSize(d) != (d < lead ? 1 : vector[d - lead]))
        return failure();
    if (!llvm::all_of(write.getIndices(),
                      [](Value i) { return isZeroInteger(i); }))
      return failure();
    SmallVector<Value> indices = getValueOrCreateConstantIndexOp(
        rewriter, insert.getLoc(), insert.getMixedOffsets());
    rewriter.replaceOpWithNewOp<vector::TransferWriteOp>(
        insert, write.getVector(), insert.getDest(), indices,
        AffineMapAttr::get(AffineMap::getMinorIdentityMap(
            insert.getType().getRank(), vector.size(), getContext())),
        write.getInBoundsAttr());
    return success();
  }
};

struct FuseTileAndVectorizePass
    : fuse::impl::FuseTileAndVectorizeBase<FuseTileAndVectorizePass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    MLIRContext *context = &getContext();
    unsigned bits = vectorBits ? unsigned(vectorBits) : targetVectorBits(func);
    IRRewriter rewriter(context);

    // 0. One fill per use: CSE merges identical fills, and when two ops
    //    accumulate into one filled tensor, bufferization copies it (5 MiB
    //    for a convolution of the seed CNN) before the first one writes.
    //    Each copy fills its own allocation, which CSE leaves distinct (a
    //    tensor.empty would be merged again, and so would the fills).
    SmallVector<linalg::FillOp> fills;
    func.walk([&](linalg::FillOp fill) {
      if (fill.hasPureTensorSemantics())
        fills.push_back(fill);
    });
    for (linalg::FillOp fill : fills) {
      SmallVector<OpOperand *> inits;
      for (OpOperand &use : fill->getResult(0).getUses())
        if (auto user = dyn_cast<linalg::LinalgOp>(use.getOwner());
            user && user.isDpsInit(&use))
          inits.push_back(&use);
      // (A fill that no linalg op takes as output, only slices, has none.)
      if (inits.size() < 2)
        continue;
      for (OpOperand *use : llvm::drop_begin(inits)) {
        rewriter.setInsertionPoint(use->getOwner());
        auto type = cast<RankedTensorType>(fill.getResult(0).getType());
        if (!type.hasStaticShape())
          break;
        Value init = bufferization::AllocTensorOp::create(
            rewriter, fill.getLoc(), type, ValueRange{});
        auto copy = cast<linalg::FillOp>(rewriter.clone(*fill));
        copy.getDpsInitsMutable()[0].set(init);
        rewriter.modifyOpInPlace(use->getOwner(),
                                 [&] { use->set(copy->getResult(0)); });
      }
    }

    //    Convolutions and filter gradients. (Only the 7-loop generics are
    //    listed: a filter gradient's rewrite erases the 4-loop bias
    //    gradient beside it.)
    SmallVector<linalg::Conv2DNhwcHwcfOp> convolutions;
    SmallVector<linalg::GenericOp> generics;
    func.walk([&](Operation *op) {
      if (auto conv = dyn_cast<linalg::Conv2DNhwcHwcfOp>(op))
        convolutions.push_back(conv);
      else if (auto generic = dyn_cast<linalg::GenericOp>(op);
               generic && generic.getNumLoops() == 7)
        generics.push_back(generic);
    });

    //    3x3 ones as Winograd's F(4x4, 3x3) or F(2x2, 3x3), whose
    //    products then take the products' strategy.
    //    (Before the pads are decomposed: a padded input is padded image by
    //    image.)
    if (winograd) {
      DominanceInfo dominance(func);
      llvm::erase_if(convolutions, [&](linalg::Conv2DNhwcHwcfOp conv) {
        return succeeded(
            fuse::tileWinogradConvolution(rewriter, conv, bits, dominance));
      });
    }

    //    Pads become a fill and a copy.
    SmallVector<tensor::PadOp> pads;
    func.walk([&](tensor::PadOp pad) { pads.push_back(pad); });
    for (tensor::PadOp pad : pads)
      decomposePad(rewriter, pad);

    if (winograd) {
      llvm::erase_if(generics, [&](linalg::GenericOp generic) {
        return succeeded(
            fuse::tileWinogradFilterGradient(rewriter, generic, bits));
      });
    }

    //    Products: batch-1 dot products, cache blocking and packing,
    //    transposed right-hand sides packed, and awkward sizes split into
    //    whole tiles and edges. (Only products are listed: the splits erase
    //    the fills of the products they split.)
    SmallVector<linalg::LinalgOp> contractions;
    func.walk([&](linalg::LinalgOp op) {
      if (isa<linalg::MatmulOp, linalg::BatchMatmulOp>(op) &&
          op.hasPureTensorSemantics())
        contractions.push_back(op);
    });
    while (!contractions.empty()) {
      linalg::LinalgOp op = contractions.pop_back_val();
      if (auto matmul = dyn_cast<linalg::MatmulOp>(op.getOperation())) {
        if (succeeded(fuse::tileAsDotProducts(rewriter, matmul, bits)))
          continue;
        FailureOr<SmallVector<linalg::MatmulOp>> edges =
            fuse::blockAndPackMatmul(rewriter, matmul, bits);
        if (succeeded(edges)) {
          contractions.append(edges->begin(), edges->end());
          continue;
        }
      }
      // Packed before the split, B is transposed once for all parts.
      op = packTransposedRhs(rewriter, op);
      FailureOr<SmallVector<linalg::LinalgOp>> parts =
          fuse::splitIntoWholeTiles(rewriter, op, bits);
      if (succeeded(parts))
        contractions.append(parts->begin(), parts->end());
    }

    //    The other convolutions become loops over register tiles, with
    //    their fills and element-wise consumers fused (the others, with a
    //    filter too large for L2, are split into whole tiles), and filter
    //    gradients loops of products over images and filter taps (with the
    //    bias gradient beside them).
    for (linalg::GenericOp generic : generics)
      (void)fuse::tileFilterGradient(rewriter, generic, bits);
    DominanceInfo dominance(func);
    for (linalg::Conv2DNhwcHwcfOp conv : convolutions)
      if (failed(fuse::tileConvolution(rewriter, conv, bits, dominance)))
        splitConvolutionColumns(rewriter, conv);

    //    Loops over images that pass images from one to the next become one.
    fuse::fuseImageLoops(rewriter, func);

    //    Strided reads (a pool's window offsets) become strided slices.
    func.walk([&](linalg::GenericOp op) { sliceStridedInputs(rewriter, op); });

    // 1. Tile, and record the vector sizes of each tile: first the products
    //    with their fills (and their element-wise consumers), then the rest.
    SmallVector<linalg::LinalgOp> products;
    func.walk([&](linalg::LinalgOp op) {
      if (isa<linalg::MatmulOp, linalg::BatchMatmulOp>(op) &&
          op.hasPureTensorSemantics() && !op.hasDynamicShape() &&
          !op->hasAttr(fuse::kRegisterTileAttr))
        products.push_back(op);
    });
    DominanceInfo productDominance(func);
    for (linalg::LinalgOp op : products) {
      SmallVector<int64_t> sizes = chooseTileSizes(op, bits);
      auto matmul = dyn_cast<linalg::MatmulOp>(op.getOperation());
      if (!matmul) {
        (void)fuse::tileWithFusedFill(rewriter, op, sizes);
        continue;
      }
      SmallVector<int64_t> ranges = op.getStaticLoopRanges();
      Type elementType = getElementTypeOrSelf(op.getDpsInits()[0].getType());
      SmallVector<fuse::RowBand> bands = matmulRowBands(
          ranges[0], ranges[1], fuse::vectorLanes(elementType, bits));
      if (succeeded(fuse::tileMatmulWithConsumer(rewriter, matmul, bands,
                                                 productDominance)))
        continue;
      if (bands.size() == 1 || llvm::is_contained(ranges, 0)) {
        (void)fuse::tileWithFusedFill(rewriter, op, sizes);
        continue;
      }
      // No consumer: one product per band, each tiled with its fill.
      SmallVector<linalg::LinalgOp> parts =
          fuse::splitWithFills(rewriter, op, {{0, bands[1].begin}});
      for (auto [part, band] : llvm::zip(parts, bands))
        (void)fuse::tileWithFusedFill(rewriter, part,
                                      {band.rows, band.columns, 1});
    }
    SmallVector<linalg::LinalgOp> ops;
    func.walk([&](linalg::LinalgOp op) {
      if (op.hasPureTensorSemantics() && op.getNumLoops() > 0 &&
          !op->hasAttr(fuse::kRegisterTileAttr))
        ops.push_back(op);
    });
    for (linalg::LinalgOp op : ops) {
      if (op.hasDynamicShape())
        continue;
      SmallVector<int64_t> sizes = chooseTileSizes(op, bits);
      scf::SCFTilingOptions options;
      options.setTileSizes(getAsIndexOpFoldResult(context, sizes));
      options.setLoopType(scf::SCFTilingOptions::LoopType::ForOp);
      options.setInterchange(chooseLoopOrder(op));
      rewriter.setInsertionPoint(op);
      FailureOr<scf::SCFTilingResult> tiled = scf::tileUsingSCF(
          rewriter, cast<TilingInterface>(op.getOperation()), options);
      if (failed(tiled))
        continue;
      for (Operation *tile : tiled->tiledOps)
        tile->setAttr(kVectorSizes, rewriter.getDenseI64ArrayAttr(sizes));
      rewriter.replaceOp(op, tiled->replacements);
    }

    // 2. Decompose size-1 windows of conv/pool tiles into 1-D ops, and fold
    //    the tiles' static sizes.
    {
      RewritePatternSet patterns(context);
      linalg::populateDecomposeConvolutionPatterns(patterns);
      affine::AffineMinOp::getCanonicalizationPatterns(patterns, context);
      tensor::ExtractSliceOp::getCanonicalizationPatterns(patterns, context);
      if (failed(applyPatternsGreedily(func, std::move(patterns))))
        return signalPassFailure();
    }

    // 3. Vectorize every tile: exactly when its shape is static, with masks
    //    of the recorded sizes when it is a partial tile.
    SmallVector<linalg::LinalgOp> tiles;
    func.walk([&](linalg::LinalgOp op) {
      if (op.hasPureTensorSemantics())
        tiles.push_back(op);
    });
    for (linalg::LinalgOp op : tiles) {
      SmallVector<int64_t> sizes;
      if (op.hasDynamicShape()) {
        auto recorded = op->getAttrOfType<DenseI64ArrayAttr>(kVectorSizes);
        if (!recorded)
          continue;
        sizes.assign(recorded.asArrayRef().begin(),
                     recorded.asArrayRef().end());
      }
      op->removeAttr(kVectorSizes);
      SmallVector<bool> scalable(sizes.size(), false);
      if (touchesBooleanMemory(op) ||
          failed(linalg::vectorizeOpPrecondition(op, sizes, scalable)))
        continue;
      rewriter.setInsertionPoint(op);
      // Contractions become vector.contract, which lowers to FMAs.
      FailureOr<linalg::VectorizationResult> vectorized = linalg::vectorize(
          rewriter, op, sizes, scalable, /*vectorizeNDExtract=*/false,
          /*flatten1DDepthwiseConv=*/false,
          /*assumeDynamicDimsMatchVecSizes=*/false,
          /*createNamedContraction=*/true);
      if (succeeded(vectorized))
        rewriter.replaceOp(op, vectorized->replacements);
    }
    func.walk([](Operation *op) {
      op->removeAttr(kVectorSizes);
      op->removeAttr(fuse::kRegisterTileAttr);
    });

    // 4. Fold the tensor slices into the vector transfers, and masks into
    //    the masked transfers.
    RewritePatternSet patterns(context);
    vector::populateVectorMaskLoweringPatternsForSideEffectingOps(patterns);
    // Tiles of [1, ..., 1, n] become 1-D vectors, which every lowering takes.
    vector::populateCastAwayVectorLeadingOneDimPatterns(patterns);
    patterns
        .add<FoldReadOnlySliceIntoTransferRead, FoldInsertSliceOfTransferWrite>(
            context);
    vector::populateVectorTransferDropUnitDimsPatterns(patterns);
    vector::TransferReadOp::getCanonicalizationPatterns(patterns, context);
    vector::TransferWriteOp::getCanonicalizationPatterns(patterns, context);
    scf::ForOp::getCanonicalizationPatterns(patterns, context);
    if (failed(applyPatternsGreedily(func, std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
