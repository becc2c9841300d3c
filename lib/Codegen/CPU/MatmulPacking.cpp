//===- MatmulPacking.cpp - Cache blocking and packing of matmuls ----------===//
//
// BLIS's loop nest, for a matmul whose right-hand side B is larger than half
// of L2 or is transposed:
//
//   for n0 in N step NC:
//     for k0 in K step KC:
//       Bp = pack(B[k0:+KC, n0:+NC])        [NC/NR][KC][NR], contiguous
//       for m0 in M step MC:
//         Ap = pack(A[m0:+MC, k0:+KC])      [MC/MR][KC][MR]
//         for i in MC/MR:                     Ap[i] stays in L1 ...
//           for j in NC/NR:                   ... while Bp streams from L2
//             C[m0+i*MR:+MR, n0+j*NR:+NR] += Ap[i] * Bp[j]
//       for j in NC/NR:                       rows left over by whole panels
//         C[M-R:, n0+j*NR:+NR] += A[M-R:, k0:+KC] * Bp[j]
//
// The innermost product is a linalg.matmul that the pass then tiles into the
// MR x NR register micro-kernel. Per reduction step, the micro-kernel
// broadcasts MR floats of A's panel and loads NR of B's: the smaller panel
// (MR x KC, 12 KiB) is the one kept in L1. Unpacked, a
// column panel of B is KC rows a whole row of B apart: at N = 1024 they all
// fall in the same L1 set, and every step of the micro-kernel misses. A
// transposed B is transposed by the packing, 16 x 16 blocks at a time in
// registers.
//
//===----------------------------------------------------------------------===//

#include "MatmulPacking.h"
#include "TileLoops.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;

namespace {

/// Block caps, in elements, for 32 KiB of L1 and 1 MiB of L2 per core, as
/// BLIS blocks for Skylake-X: a micro-panel of A (KC x MR floats, 12 KiB)
/// stays in L1 while the packed block of B (KC x NC, 512 KiB) streams from
/// L2, once per panel of A. A's block is read once per block of B, panel by
/// panel, so MC only bounds the packing buffer. (With B's 32 KiB micro-panel
/// meant for L1 instead, and A's panels streaming, 1024^3 ran 8% slower.)
constexpr int64_t kMaxKC = 256;
constexpr int64_t kMaxMC = 1024;
constexpr int64_t kMaxNC = 512;

/// Right-hand sides up to this many elements (512 KiB of f32, half of L2)
/// stay in L2 unpacked: packing them would cost more than it saves, and
/// the element-wise consumer of an unpacked product fuses into its tiles.
/// (The seed MLP's 784 x 128 weight: its forward product with the bias and
/// ReLU is 15% faster unpacked; at 1 MiB and more, unpacked products run at
/// half the speed.)
constexpr int64_t kPackThreshold = 128 * 1024;

/// The largest multiple of `unit` that divides `n` and is at most `cap`, or
/// 0 if there is none.
int64_t blockSize(int64_t n, int64_t cap, int64_t unit) {
  for (int64_t d = std::min(n, cap) / unit * unit; d >= unit; d -= unit)
    if (n % d == 0)
      return d;
  return 0;
}

/// A block of a dim of size `n`: all of it when it fits under `cap`, else
/// the largest divisor under `cap`, preferring multiples of 16 (whole vector
/// blocks for the transposing pack), or all of it when the only divisors are
/// too small to be worth a loop.
int64_t chooseBlock(int64_t n, int64_t cap) {
  if (n <= cap)
    return n;
  if (int64_t d = blockSize(n, cap, 16))
    return d;
  int64_t d = blockSize(n, cap, 1);
  return d >= cap / 4 ? d : n;
}

/// source[r0:+rows, c0:+cols] of a matrix stored as is, or of one stored
/// transposed (source[c0:+cols, r0:+rows]).
Value slice2d(OpBuilder &b, Location loc, Value source, bool transposed,
              OpFoldResult r0, int64_t rows, OpFoldResult c0, int64_t cols) {
  if (transposed) {
    std::swap(r0, c0);
    std::swap(rows, cols);
  }
  OpFoldResult one = b.getIndexAttr(1);
  return tensor::ExtractSliceOp::create(
      b, loc, source, {r0, c0}, {b.getIndexAttr(rows), b.getIndexAttr(cols)},
      {one, one});
}

/// Packs the 2-D `block` into panels `width` wide along dim `panelDim`:
/// [size of panelDim / width][other][width], each panel contiguous, one row
/// of `width` per step of the other dim.
Value packPanels(OpBuilder &b, Location loc, Value block, unsigned panelDim,
                 int64_t width) {
  auto type = cast<RankedTensorType>(block.getType());
  Type elementType = type.getElementType();
  ArrayRef<int64_t> sizes = type.getShape();
  int64_t panels = sizes[panelDim] / width, other = sizes[1 - panelDim];
  // Panels along the rows: [P * W, O] -> [P, W, O] -> [P, O, W].
  // Panels along the columns: [O, P * W] -> [O, P, W] -> [P, O, W].
  bool rows = panelDim == 0;
  SmallVector<int64_t> expandedShape =
      rows ? SmallVector<int64_t>{panels, width, other}
           : SmallVector<int64_t>{other, panels, width};
  SmallVector<ReassociationIndices> groups =
      rows ? SmallVector<ReassociationIndices>{{0, 1}, {2}}
           : SmallVector<ReassociationIndices>{{0}, {1, 2}};
  SmallVector<int64_t> permutation =
      rows ? SmallVector<int64_t>{0, 2, 1} : SmallVector<int64_t>{1, 0, 2};
  Value expanded = tensor::ExpandShapeOp::create(
      b, loc, RankedTensorType::get(expandedShape, elementType), block, groups);
  Value init =
      tensor::EmptyOp::create(b, loc, {panels, other, width}, elementType);
  return linalg::TransposeOp::create(b, loc, expanded, init, permutation)
      ->getResult(0);
}

/// Panel `index` of packed panels, as a [other, width] tensor.
Value panelAt(OpBuilder &b, Location loc, Value packed, Value index) {
  auto type = cast<RankedTensorType>(packed.getType());
  ArrayRef<int64_t> shape = type.getShape();
  OpFoldResult zero = b.getIndexAttr(0), one = b.getIndexAttr(1);
  return tensor::ExtractSliceOp::create(
      b, loc,
      RankedTensorType::get({shape[1], shape[2]}, type.getElementType()),
      packed, {index, zero, zero},
      {one, b.getIndexAttr(shape[1]), b.getIndexAttr(shape[2])},
      {one, one, one});
}

} // namespace

int64_t fuse::microKernelRows(unsigned vectorBits) {
  return vectorRegisters(vectorBits) * 3 / 4 / 2;
}

std::optional<fuse::MatmulForm> fuse::matchMatmul(linalg::MatmulOp op) {
  if (!op.hasPureTensorSemantics() || op.hasDynamicShape())
    return std::nullopt;
  MLIRContext *context = op.getContext();
  AffineExpr m, n, k;
  bindDims(context, m, n, k);
  auto map = [&](AffineExpr a, AffineExpr b) {
    return AffineMap::get(3, 0, {a, b}, context);
  };
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  MatmulForm form;
  if (maps[2] != map(m, n))
    return std::nullopt;
  if (maps[0] == map(k, m))
    form.lhsTransposed = true;
  else if (maps[0] != map(m, k))
    return std::nullopt;
  if (maps[1] == map(n, k))
    form.rhsTransposed = true;
  else if (maps[1] != map(k, n))
    return std::nullopt;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  form.m = ranges[0];
  form.n = ranges[1];
  form.k = ranges[2];
  return form;
}

bool fuse::paysToBlockAndPack(linalg::MatmulOp op, unsigned vectorBits) {
  std::optional<MatmulForm> form = matchMatmul(op);
  if (!form || form->m == 0 || form->n == 0 || form->k == 0)
    return false;
  Type elementType =
      cast<RankedTensorType>(op.getDpsInits()[0].getType()).getElementType();
  if (!elementType.isIntOrFloat())
    return false;
  int64_t lanes = vectorLanes(elementType, vectorBits);
  // A transposed B is packed anyway; a plain one only when it does not fit
  // in L2 and enough rows of A reuse each packed panel. (Panels are two
  // registers wide, the micro-kernel's width.)
  return form->n >= 2 * lanes &&
         (form->rhsTransposed ||
          (form->k * form->n > kPackThreshold && form->m >= 2 * lanes));
}

std::optional<fuse::PackedBlocks>
fuse::choosePackedBlocks(linalg::MatmulOp op, unsigned vectorBits) {
  if (!paysToBlockAndPack(op, vectorBits))
    return std::nullopt;
  std::optional<MatmulForm> form = matchMatmul(op);
  Type elementType =
      cast<RankedTensorType>(op.getDpsInits()[0].getType()).getElementType();
  // Column panels two registers wide, the micro-kernel's width; A's rows in
  // panels of its height (below).
  int64_t nr = 2 * vectorLanes(elementType, vectorBits);
  int64_t mr = microKernelRows(vectorBits);
  int64_t kc = chooseBlock(form->k, kMaxKC);
  if (kc == form->k && form->k > kMaxKC)
    kc = kMaxKC;
  int64_t mainN = form->n / nr * nr;
  int64_t mainM = form->m >= mr ? form->m / mr * mr : form->m;
  int64_t mc =
      form->m >= mr ? blockSize(mainM, kMaxMC, mr) : chooseBlock(mainM, kMaxMC);
  return PackedBlocks{mc, blockSize(mainN, kMaxNC, nr), kc};
}

FailureOr<SmallVector<linalg::MatmulOp>>
fuse::blockAndPackMatmul(RewriterBase &rewriter, linalg::MatmulOp op,
                         const PackedBlocks &blocks, unsigned vectorBits,
                         int64_t distributedColumns, int64_t distributedRows) {
  std::optional<MatmulForm> form = matchMatmul(op);
  if (!form || form->m == 0 || form->n == 0 || form->k == 0 || blocks.mc <= 0 ||
      blocks.nc <= 0 || blocks.kc <= 0)
    return failure();
  Type elementType =
      cast<RankedTensorType>(op.getDpsInits()[0].getType()).getElementType();
  if (!elementType.isIntOrFloat())
    return failure();
  int64_t lanes = vectorLanes(elementType, vectorBits);
  // Column panels two registers wide, the micro-kernel's width.
  int64_t nr = 2 * lanes;
  // A's rows are packed in panels of the micro-kernel's height, k-major.
  // Stored transposed, A's rows come contiguous already, but a whole row of
  // A apart for each k: at M = 1024 they fall in one L1 set.
  int64_t mr = microKernelRows(vectorBits);
  bool packLhs = form->m >= mr;
  int64_t kc = blocks.kc;
  // Whole panels and blocks; the columns and reduction steps left over are
  // edge products, the rows left over a product per panel of B (below).
  int64_t mainN = form->n / nr * nr;
  int64_t mainK = form->k / kc * kc;
  int64_t mainM = packLhs ? form->m / mr * mr : form->m;
  int64_t mc = blocks.mc, nc = blocks.nc;
  if (mainN == 0 || mainK == 0 || mainN % nc != 0 || mainM % mc != 0 ||
      (packLhs && mc % mr != 0) || nc % nr != 0)
    return failure();
  // The threads' blocks of columns, each of whole NC blocks (NC shrinks to
  // fit one): the order of every sum stays the same.
  int64_t block = distributedColumns;
  if (block <= 0 || block % nr != 0 || mainN % block != 0 || block == mainN)
    block = 0;
  if (block != 0 && block % nc != 0)
    nc = blockSize(block, nc, nr);
  // Or the threads' blocks of rows: whole panels of A, MC each.
  bool rowBlocks = block == 0 && packLhs && distributedRows > 0 &&
                   distributedRows % mr == 0 && mainM % distributedRows == 0 &&
                   distributedRows < mainM;
  if (rowBlocks)
    mc = distributedRows;
  SmallVector<linalg::MatmulOp> edges;
  if (mainN < form->n || mainK < form->k) {
    SmallVector<SplitPoint> points;
    if (mainN < form->n)
      points.push_back({1, mainN});
    if (mainK < form->k)
      points.push_back({2, mainK});
    SmallVector<linalg::LinalgOp> parts = splitWithFills(rewriter, op, points);
    op = cast<linalg::MatmulOp>(parts.front().getOperation());
    for (linalg::LinalgOp edge : llvm::drop_begin(parts))
      edges.push_back(cast<linalg::MatmulOp>(edge.getOperation()));
    form->n = mainN;
    form->k = mainK;
  }

  Location loc = op.getLoc();
  MLIRContext *context = op.getContext();
  rewriter.setInsertionPoint(op);
  Value lhs = op.getDpsInputs()[0], rhs = op.getDpsInputs()[1];
  Value acc = op.getDpsInits()[0];
  // With one block of the reduction, each block of C is computed once: it
  // is filled there, in registers, rather than all of C in memory first.
  auto fill = acc.getDefiningOp<linalg::FillOp>();
  if (fill && kc == form->k)
    acc = fill.getDpsInits()[0];
  else
    fill = {};
  auto attr = [&](OpBuilder &b, int64_t v) -> OpFoldResult {
    return b.getIndexAttr(v);
  };
  AffineExpr m, n, k;
  bindDims(context, m, n, k);
  auto map = [&](AffineExpr a, AffineExpr b) {
    return AffineMap::get(3, 0, {a, b}, context);
  };
  // The inner products read packed panels as [k, m] and [k, n], and A
  // unpacked as it is stored.
  AffineMap storedLhsMap = form->lhsTransposed ? map(k, m) : map(m, k);
  AffineMap packedLhsMap = packLhs ? map(k, m) : storedLhsMap;

  auto loop = [&](OpBuilder &b, int64_t upper, int64_t step, Value init,
                  TileLoopBody body) {
    return buildTileLoop(b, loc, 0, upper, step, init, body);
  };
  auto add = [&](OpBuilder &b, Value base, Value i, int64_t scale) {
    return affine::makeComposedFoldedAffineApply(
        b, loc,
        getAffineDimExpr(0, context) + getAffineDimExpr(1, context) * scale,
        {base, i});
  };
  // acc[row:+rows, column:+nr] += lhs * rhs, as a linalg.matmul.
  auto product = [&](OpBuilder &b, Value acc, Value lhs, AffineMap lhsMap,
                     Value rhs, OpFoldResult row, int64_t rows,
                     OpFoldResult column) -> Value {
    SmallVector<OpFoldResult> offsets = {row, column};
    SmallVector<OpFoldResult> sizes = {attr(b, rows), attr(b, nr)};
    SmallVector<OpFoldResult> unit(2, attr(b, 1));
    Value block =
        tensor::ExtractSliceOp::create(b, loc, acc, offsets, sizes, unit);
    if (fill)
      block = linalg::FillOp::create(b, loc, fill.value(), block)->getResult(0);
    SmallVector<NamedAttribute> attrs = {b.getNamedAttr(
        "indexing_maps",
        b.getAffineMapArrayAttr({lhsMap, map(k, n), map(m, n)}))};
    Value result = linalg::MatmulOp::create(b, loc, TypeRange{block.getType()},
                                            ValueRange{lhs, rhs}, block, attrs)
                       ->getResult(0);
    return tensor::InsertSliceOp::create(b, loc, result, acc, offsets, sizes,
                                         unit)
        .getResult();
  };

  int64_t rowsLeft = form->m - mainM;
  // The nest over `columns` columns from `first` (0 when null).
  auto nest = [&](OpBuilder &b, Value first, int64_t columns, Value acc) {
    return loop(b, columns, nc, acc, [&](OpBuilder &b, Value n0, Value c) {
      if (first)
        n0 = arith::AddIOp::create(b, loc, first, n0);
      return loop(b, form->k, kc, c, [&](OpBuilder &b, Value k0, Value c) {
        Value packedRhs = packPanels(
            b, loc, slice2d(b, loc, rhs, form->rhsTransposed, k0, kc, n0, nc),
            form->rhsTransposed ? 0 : 1, nr);
        auto rowBlock = [&](OpBuilder &b, Value m0, Value c) {
          Value lhsBlock =
              slice2d(b, loc, lhs, form->lhsTransposed, m0, mc, k0, kc);
          if (packLhs)
            lhsBlock =
                packPanels(b, loc, lhsBlock, form->lhsTransposed ? 1 : 0, mr);
          auto panels = [&](OpBuilder &b, Value c, Value lhsPanel,
                            OpFoldResult row, int64_t rows) {
            return loop(b, nc / nr, 1, c, [&](OpBuilder &b, Value j, Value c) {
              return product(b, c, lhsPanel, packedLhsMap,
                             panelAt(b, loc, packedRhs, j), row, rows,
                             add(b, n0, j, nr));
            });
          };
          if (!packLhs)
            return panels(b, c, lhsBlock, m0, mc);
          return loop(b, mc / mr, 1, c, [&](OpBuilder &b, Value i, Value c) {
            return panels(b, c, panelAt(b, loc, lhsBlock, i), add(b, m0, i, mr),
                          mr);
          });
        };
        if (rowBlocks) {
          // Each thread's MC blocks against the shared packed block of B.
          IRRewriter rewriter(b);
          c = buildBlockLoop(rewriter, loc, mainM, mc, /*dim=*/0, ValueRange{c},
                             [&](OpBuilder &b, Value m0, ValueRange shared) {
                               return SmallVector<Value>{
                                   rowBlock(b, m0, shared[0])};
                             })
                  .getResult(0);
        } else {
          c = loop(b, mainM, mc, c, rowBlock);
        }
        if (!rowsLeft)
          return c;
        // The rows left over by whole panels of A, unpacked, against the
        // same packed panels of B.
        Value lhsRows = slice2d(b, loc, lhs, form->lhsTransposed,
                                attr(b, mainM), rowsLeft, k0, kc);
        return loop(b, nc / nr, 1, c, [&](OpBuilder &b, Value j, Value c) {
          return product(b, c, lhsRows, storedLhsMap,
                         panelAt(b, loc, packedRhs, j), attr(b, mainM),
                         rowsLeft, add(b, n0, j, nr));
        });
      });
    });
  };
  Value result;
  if (block == 0) {
    result = nest(rewriter, Value(), form->n, acc);
  } else {
    // Each thread's block: the nest over its columns of the shared C.
    scf::ForallOp forall = buildBlockLoop(
        rewriter, loc, form->n, block, /*dim=*/1, ValueRange{acc},
        [&](OpBuilder &b, Value first, ValueRange shared) {
          return SmallVector<Value>{nest(b, first, block, shared[0])};
        });
    result = forall.getResult(0);
  }
  rewriter.replaceOp(op, result);
  if (fill && fill->use_empty())
    rewriter.eraseOp(fill);
  return edges;
}
