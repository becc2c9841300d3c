//===- WinogradConvolution.cpp - Winograd convolutions --------------------===//
//
// Lavin and Gray's F(m x m, 3x3): an m x m output tile of a 3x3 correlation
// with filter g, from its alpha x alpha input tile d (alpha = m + 2), is
//
//   Y = A^T [(G g G^T) .* (B^T d B)] A
//
// with constant matrices B^T (alpha x alpha), G (alpha x 3) and A^T
// (m x alpha); for F(2x2, 3x3)
//
//   B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1]
//   G   = [1 0 0; 1/2 1/2 1/2; 1/2 -1/2 1/2; 0 0 1]
//   A^T = [1 1 1 0; 0 1 -1 -1]
//
// Summed over the input channels, the element-wise product of the alpha^2
// transformed positions becomes alpha^2 matrix products of (tiles x c) and
// (c x f): 16 multiply-adds per 2x2 tile, channel and filter instead of 36,
// or 36 per 4x4 tile instead of 144. The transforms are vector arithmetic
// along the channels or filters (additions for the coefficients +-1, FMAs
// for the others, with the sums and differences that rows or columns of
// the matrices share computed once). Per image, the transformed input and the
// products (tiles x (alpha^2 + 1) x 32 floats each, 306 KiB for F(2x2) of a 24
// x 24 output, 166.5 KiB for F(4x4)) stay in L2.
//
// F(4x4, 3x3) multiplies less, but its coefficients (up to 8, and 1/6,
// 1/24) round more. A convolution's even output takes F(4x4) on its
// largest block whose sides 4 divides and F(2x2) on the strips of 2 left;
// a filter gradient takes F(4x4) when 4 divides its output gradient's
// height and width, else F(2x2) throughout.
//
// A filter gradient dW = sum over images and pixels of X (shifted by the
// tap) times dY is the same bilinear algorithm transposed (F(3x3, m x m)):
//
//   dW = G^T [sum over tiles of (A dY A^T) .* (B^T X B)] G
//
// with dY's m x m tiles and X's alpha x alpha tiles, so per position p the
// sum over tiles and channels is one matrix product V[:, p]^T D[:, p] of
// (c x tiles) and (tiles x f), accumulated over the images.
//
//===----------------------------------------------------------------------===//

#include "WinogradConvolution.h"

#include "fuse/Codegen/Passes.h"

#include "PassDetail.h"

#include "ConvolutionTiling.h"
#include "ImageLoopFusion.h"
#include "LoweringStrategy.h"
#include "TileLoops.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/TilingInterface.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "fuse-winograd-convolution"

namespace fuse {
#define GEN_PASS_DEF_FUSEWINOGRADCONVOLUTION
#include "fuse/Codegen/Passes.h.inc"
} // namespace fuse

using namespace mlir;

namespace {

constexpr int64_t kTaps = 3;

/// F(m x m, 3x3): a m x m output tile from an alpha x alpha input tile
/// (alpha = m + 2), with alpha^2 multiplications per channel and filter.
/// Its matrices, row-major: B^T (alpha x alpha), G (alpha x 3) and A^T
/// (m x alpha), Lavin and Gray's.
struct Scheme {
  int64_t m;
  ArrayRef<double> bt, g, at;

  int64_t alpha() const { return m + kTaps - 1; }
  int64_t positions() const { return alpha() * alpha(); }
  // V, D and M are [tiles, positions, c or f]: a transform writes or reads
  // its tile's vectors in one run, not one line a position (18 KiB at 144
  // tiles) apart. A product's rows are then a tile apart: one position
  // more, an odd number of lines at 32 floats, so that its 12 rows fall in
  // distinct sets of L1 (2 KiB apart, they would share two).
  int64_t paddedPositions() const { return positions() + 1; }

  /// Whether an image's V and M (or V and D) fit in L2 when its
  /// height x width block has `depth` channels and filters together.
  /// Larger images would stream them from memory (and the workspace would
  /// hold tens of MiB of them); those stay direct until their tiles are
  /// blocked by rows.
  bool fitsInL2(int64_t height, int64_t width, int64_t depth,
                int64_t elementBytes) const {
    constexpr int64_t kL2Bytes = 1024 * 1024;
    return height / m * (width / m) * paddedPositions() * depth *
               elementBytes <=
           kL2Bytes;
  }
};

constexpr double kBT2[] = {1, 0, -1, 0, 0, 1, 1, 0, 0, -1, 1, 0, 0, 1, 0, -1};
constexpr double kG2[] = {1, 0, 0, 0.5, 0.5, 0.5, 0.5, -0.5, 0.5, 0, 0, 1};
constexpr double kAT2[] = {1, 1, 1, 0, 0, 1, -1, -1};
constexpr double kBT4[] = {4, 0, -5, 0,  1, 0, 0, -4, -4, 1,  1, 0,
                           0, 4, -4, -1, 1, 0, 0, -2, -1, 2,  1, 0,
                           0, 2, -1, -2, 1, 0, 0, 4,  0,  -5, 0, 1};
constexpr double kG4[] = {1.0 / 4,  0,        0,        -1.0 / 6,  -1.0 / 6,
                          -1.0 / 6, -1.0 / 6, 1.0 / 6,  -1.0 / 6,  1.0 / 24,
                          1.0 / 12, 1.0 / 6,  1.0 / 24, -1.0 / 12, 1.0 / 6,
                          0,        0,        1};
constexpr double kAT4[] = {1, 1, 1, 1, 1, 0, 0, 1, -1, 2, -2, 0,
                           0, 1, 1, 4, 4, 0, 0, 1, -1, 8, -8, 1};

/// F(4x4, 3x3) when 4 divides both output dims, else F(2x2, 3x3) when 2
/// does: 4 and 2.25 times fewer multiplications than the direct form.
std::optional<Scheme> chooseScheme(int64_t height, int64_t width) {
  if (height % 4 == 0 && width % 4 == 0)
    return Scheme{4, kBT4, kG4, kAT4};
  if (height % 2 == 0 && width % 2 == 0)
    return Scheme{2, kBT2, kG2, kAT2};
  return std::nullopt;
}

/// A block of a convolution's output computed with one scheme.
struct OutputBlock {
  int64_t row, column, height, width;
  Scheme scheme;
};

/// The blocks of an even height x width output: F(4x4) on the largest
/// block whose sides 4 divides, F(2x2) on the strips of 2 left below and
/// to its right (26 x 26: 24 x 24, 24 x 2 and 2 x 26; 4x fewer
/// multiplications on 85% of it).
SmallVector<OutputBlock> chooseBlocks(int64_t height, int64_t width) {
  std::optional<Scheme> whole = chooseScheme(height, width);
  if (!whole)
    return {};
  int64_t mainHeight = height / 4 * 4, mainWidth = width / 4 * 4;
  if (whole->m == 4 || mainHeight == 0 || mainWidth == 0)
    return {{0, 0, height, width, *whole}};
  SmallVector<OutputBlock> blocks = {
      {0, 0, mainHeight, mainWidth, *chooseScheme(mainHeight, mainWidth)}};
  if (mainWidth < width)
    blocks.push_back({0, mainWidth, mainHeight, width - mainWidth, *whole});
  if (mainHeight < height)
    blocks.push_back({mainHeight, 0, height - mainHeight, width, *whole});
  return blocks;
}

/// The vector arithmetic, reads and writes of the transforms.
struct VectorBuilder {
  OpBuilder &b;
  Location loc;
  VectorType type;

  Value splat(double value) {
    Attribute attr = b.getFloatAttr(type.getElementType(), value);
    return arith::ConstantOp::create(
        b, loc, type, DenseElementsAttr::get(type, ArrayRef<Attribute>{attr}));
  }
  Value read(Value source, ValueRange indices) {
    return vector::TransferReadOp::create(b, loc, type, source, indices,
                                          std::nullopt, ArrayRef<bool>{true});
  }
  Value write(Value vector, Value dest, ValueRange indices) {
    return vector::TransferWriteOp::create(b, loc, vector, dest, indices,
                                           ArrayRef<bool>{true})
        ->getResult(0);
  }
  Value add(Value x, Value y) { return arith::AddFOp::create(b, loc, x, y); }

  /// A coefficient times a vector.
  struct Term {
    double coefficient;
    Value value;
  };

  /// The sum of `terms`: additions and subtractions for the coefficients of
  /// +-1, FMAs for the others. It starts from a term of coefficient 1, or
  /// else a product, so that the other products are FMAs into it.
  Value combine(ArrayRef<Term> terms) {
    SmallVector<Term> ordered(terms);
    auto first = llvm::find_if(
        ordered, [](const Term &t) { return t.coefficient == 1; });
    if (first == ordered.end())
      first = llvm::find_if(
          ordered, [](const Term &t) { return std::abs(t.coefficient) != 1; });
    if (first != ordered.end())
      std::rotate(ordered.begin(), first, first + 1);
    Value sum;
    for (auto [c, x] : ordered) {
      if (!sum)
        sum = c == 1 ? x
              : c == -1
                  ? arith::NegFOp::create(b, loc, x).getResult()
                  : arith::MulFOp::create(b, loc, splat(c), x).getResult();
      else if (c == 1)
        sum = arith::AddFOp::create(b, loc, sum, x);
      else if (c == -1)
        sum = arith::SubFOp::create(b, loc, sum, x);
      else
        sum = vector::FMAOp::create(b, loc, splat(c), x, sum);
    }
    return sum ? sum : splat(0);
  }

  /// y = M x for the `rows` x `cols` row-major `matrix` (or M^T x for its
  /// transpose, `matrix` being cols x rows), none for zero coefficients,
  /// sharing what Winograd's matrices let rows share:
  /// - two columns whose coefficients match up to sign in every row (A^T's
  ///   1 and 2, 3 and 4) enter as x_j + x_j' and x_j - x_j', once each;
  /// - two rows whose terms match up to sign (B^T's 1 and 2, 3 and 4) are
  ///   E + O and E - O, E the terms of equal sign, O the others.
  SmallVector<Value> multiply(ArrayRef<double> matrix, int64_t rows,
                              int64_t cols, bool transposed,
                              ArrayRef<Value> x) {
    auto coefficient = [&](int64_t i, int64_t j) {
      return transposed ? matrix[j * rows + i] : matrix[i * cols + j];
    };
    SmallVector<SmallVector<Term>> terms(rows);
    SmallVector<bool> paired(cols, false);
    for (int64_t j = 0; j < cols; ++j) {
      for (int64_t k = j + 1; k < cols && !paired[j]; ++k) {
        int64_t users = 0;
        bool matches = !paired[k];
        for (int64_t i = 0; i < rows && matches; ++i) {
          matches = std::abs(coefficient(i, j)) == std::abs(coefficient(i, k));
          users += coefficient(i, j) != 0;
        }
        if (!matches || users < 2)
          continue;
        paired[j] = paired[k] = true;
        Value sum, difference;
        for (int64_t i = 0; i < rows; ++i) {
          double c = coefficient(i, j);
          if (c == 0)
            continue;
          Value &shared = coefficient(i, k) == c ? sum : difference;
          if (!shared)
            shared =
                &shared == &sum
                    ? arith::AddFOp::create(b, loc, x[j], x[k]).getResult()
                    : arith::SubFOp::create(b, loc, x[j], x[k]).getResult();
          terms[i].push_back({c, shared});
        }
      }
    }
    for (int64_t j = 0; j < cols; ++j)
      for (int64_t i = 0; i < rows && !paired[j]; ++i)
        if (coefficient(i, j) != 0)
          terms[i].push_back({coefficient(i, j), x[j]});

    SmallVector<Value> y(rows);
    for (int64_t i = 0; i < rows; ++i) {
      if (y[i])
        continue;
      for (int64_t k = i + 1; k < rows && !y[i]; ++k) {
        if (y[k] || terms[k].size() != terms[i].size())
          continue;
        SmallVector<Term> equal, opposite;
        SmallVector<bool> matched(terms[k].size(), false);
        for (const Term &t : terms[i]) {
          size_t u = 0;
          while (u < terms[k].size() &&
                 (matched[u] || terms[k][u].value != t.value ||
                  std::abs(terms[k][u].coefficient) != std::abs(t.coefficient)))
            ++u;
          if (u == terms[k].size())
            break;
          matched[u] = true;
          (terms[k][u].coefficient == t.coefficient ? equal : opposite)
              .push_back(t);
        }
        if (equal.size() + opposite.size() != terms[i].size() ||
            equal.empty() || opposite.empty())
          continue;
        Value e = combine(equal), o = combine(opposite);
        y[i] = arith::AddFOp::create(b, loc, e, o);
        y[k] = arith::SubFOp::create(b, loc, e, o);
      }
      if (!y[i])
        y[i] = combine(terms[i]);
    }
    return y;
  }

  /// T X T^T for the `rows` x `cols` matrix T (see multiply) and the square
  /// `tile` X (cols x cols, row-major): T applied to each column, then to
  /// each row of the result. Row-major, rows x rows.
  SmallVector<Value> transform(ArrayRef<double> matrix, int64_t rows,
                               int64_t cols, bool transposed,
                               ArrayRef<Value> tile) {
    SmallVector<SmallVector<Value>> columns;
    for (int64_t j = 0; j < cols; ++j) {
      SmallVector<Value> column;
      for (int64_t i = 0; i < cols; ++i)
        column.push_back(tile[i * cols + j]);
      columns.push_back(multiply(matrix, rows, cols, transposed, column));
    }
    SmallVector<Value> result;
    for (int64_t i = 0; i < rows; ++i) {
      SmallVector<Value> row;
      for (SmallVector<Value> &column : columns)
        row.push_back(column[i]);
      result.append(multiply(matrix, rows, cols, transposed, row));
    }
    return result;
  }
};

Value constantIndex(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

Value applyExpr(OpBuilder &b, Location loc, AffineExpr expr,
                ValueRange operands) {
  return affine::makeComposedAffineApply(b, loc, expr,
                                         getAsOpFoldResult(operands))
      .getResult();
}

/// For each of the tileRows x tileColumns tiles of image `n` of `source`
/// (NHWC; tile (i, j) is the `size` x `size` block at rowOrigin + m i,
/// columnOrigin + m j) and each
/// register of its channels (`depth` of them), the 2-D transform T X T^T
/// of the tile (T: `rows` x `size`, see VectorBuilder::multiply), written
/// to dest[tile, position, channels].
Value transformTiles(OpBuilder &b, Location loc, VectorType type, Value source,
                     Value n, Value dest, int64_t tileRows, int64_t tileColumns,
                     int64_t m, int64_t size, ArrayRef<double> matrix,
                     int64_t rows, bool transposed, int64_t depth,
                     int64_t rowOrigin = 0, int64_t columnOrigin = 0) {
  AffineExpr d0, d1;
  bindDims(b.getContext(), d0, d1);
  auto loop = [&](OpBuilder &b, int64_t upper, int64_t step, Value init,
                  fuse::TileLoopBody body) {
    return fuse::buildTileLoop(b, loc, 0, upper, step, init, body);
  };
  return loop(b, tileRows, 1, dest, [&](OpBuilder &b, Value th, Value acc) {
    return loop(b, tileColumns, 1, acc, [&](OpBuilder &b, Value tw, Value acc) {
      return loop(
          b, depth, type.getNumElements(), acc,
          [&](OpBuilder &b, Value c, Value acc) {
            VectorBuilder v{b, loc, type};
            SmallVector<Value> tile;
            for (int64_t i = 0; i < size; ++i) {
              Value row = applyExpr(b, loc, d0 * m + rowOrigin + i, th);
              for (int64_t j = 0; j < size; ++j)
                tile.push_back(v.read(
                    source,
                    {n, row, applyExpr(b, loc, d0 * m + columnOrigin + j, tw),
                     c}));
            }
            Value t = applyExpr(b, loc, d0 * tileColumns + d1, {th, tw});
            for (auto [p, value] : llvm::enumerate(
                     v.transform(matrix, rows, size, transposed, tile)))
              acc = v.write(value, acc, {t, constantIndex(b, loc, p), c});
            return acc;
          });
    });
  });
}

/// The float type that `result` and every one of `operands` have (one
/// vector type reads and writes them all), or null.
FloatType sharedFloatType(Value result, ValueRange operands) {
  auto type = dyn_cast<FloatType>(getElementTypeOrSelf(result.getType()));
  if (!type || llvm::any_of(operands, [&](Value operand) {
        return getElementTypeOrSelf(operand.getType()) != type;
      }))
    return {};
  return type;
}

/// Whether a filter of `shape` (kh, kw, c, f) is 3x3 with whole registers of
/// `lanes` channels and filters.
bool isWinogradFilter(ArrayRef<int64_t> shape, int64_t lanes) {
  return shape[0] == kTaps && shape[1] == kTaps && shape[2] != 0 &&
         shape[2] % lanes == 0 && shape[3] != 0 && shape[3] % lanes == 0;
}

/// A pad of `input`'s rows and columns only, with a constant, and static
/// shapes: the image loop then pads one image at a time into a buffer that
/// stays in L2, rather than reading a padded copy of the whole batch (an
/// input gradient's: 6 MiB filled, then written, for the seed CNN).
tensor::PadOp matchImagePadding(Value input) {
  auto pad = input.getDefiningOp<tensor::PadOp>();
  if (!pad || !pad->hasOneUse() || !fuse::paddingValue(pad) ||
      !pad.getResultType().hasStaticShape() ||
      !pad.getSourceType().hasStaticShape())
    return {};
  ArrayRef<int64_t> low = pad.getStaticLow(), high = pad.getStaticHigh();
  if (ShapedType::isDynamicShape(low) || ShapedType::isDynamicShape(high) ||
      low[0] != 0 || high[0] != 0 || low[3] != 0 || high[3] != 0)
    return {};
  return pad;
}

bool allOnes(DenseIntElementsAttr attr) {
  return llvm::all_of(attr.getValues<int64_t>(),
                      [](int64_t v) { return v == 1; });
}

} // namespace

LogicalResult fuse::tileWinogradConvolution(RewriterBase &rewriter,
                                            linalg::Conv2DNhwcHwcfOp op,
                                            unsigned vectorBits,
                                            DominanceInfo &dominance) {
  if (!op.hasPureTensorSemantics() || op.hasDynamicShape())
    return failure();
  auto fill = op.getDpsInits()[0].getDefiningOp<linalg::FillOp>();
  if (!fill || !matchPattern(fill.value(), m_AnyZeroFloat()))
    return failure();
  Value input = op.getDpsInputs()[0], filter = op.getDpsInputs()[1];
  FloatType elementType = sharedFloatType(op->getResult(0), op.getDpsInputs());
  if (!elementType)
    return failure();
  ArrayRef<int64_t> shape =
      cast<RankedTensorType>(op->getResult(0).getType()).getShape();
  ArrayRef<int64_t> filterShape =
      cast<RankedTensorType>(filter.getType()).getShape(); // kh, kw, c, f
  int64_t lanes = vectorLanes(elementType, vectorBits);
  int64_t channels = filterShape[2], filters = filterShape[3];
  if (!isWinogradFilter(filterShape, lanes) || !allOnes(op.getStrides()) ||
      !allOnes(op.getDilations()) || llvm::is_contained(shape, 0))
    return failure();
  SmallVector<OutputBlock> blocks = chooseBlocks(shape[1], shape[2]);
  int64_t elementBytes = elementType.getWidth() / 8;
  if (blocks.empty() || llvm::any_of(blocks, [&](const OutputBlock &block) {
        return !block.scheme.fitsInL2(block.height, block.width,
                                      channels + filters, elementBytes);
      }))
    return failure();
  // The consumer, if it has one output: the image loop carries one tensor
  // of outputs.
  linalg::GenericOp epilogue;
  std::optional<unsigned> consumed = matchElementwiseConsumer(op, epilogue);
  if (consumed && epilogue.getNumDpsInits() != 1)
    epilogue = {};

  Location loc = op.getLoc();
  MLIRContext *context = op.getContext();
  rewriter.setInsertionPoint(fusedNestAnchor(op, epilogue, dominance));
  auto vectorType = VectorType::get({lanes}, elementType);
  auto index = [&](OpBuilder &b, int64_t v) {
    return constantIndex(b, loc, v);
  };
  AffineExpr d0, d1;
  bindDims(context, d0, d1);
  auto apply = [&](OpBuilder &b, AffineExpr expr, ValueRange operands) {
    return ::applyExpr(b, loc, expr, operands);
  };
  auto loop = [&](OpBuilder &b, int64_t upper, int64_t step, Value init,
                  TileLoopBody body) {
    return buildTileLoop(b, loc, 0, upper, step, init, body);
  };
  // Allocations, not tensor.empty: CSE would merge empties of one type
  // (V and M at as many channels as filters), and so would their buffers.
  auto allocate = [&](OpBuilder &b, ArrayRef<int64_t> shape) -> Value {
    return bufferization::AllocTensorOp::create(
        b, loc, RankedTensorType::get(shape, elementType), ValueRange{});
  };

  // U[p, c, f] = (G g G^T)[p] for each channel and filter, per scheme.
  llvm::SmallDenseMap<int64_t, Value> transformedFilters;
  for (const OutputBlock &block : blocks) {
    const Scheme &scheme = block.scheme;
    if (transformedFilters.count(scheme.m))
      continue;
    Value u = allocate(rewriter, {scheme.positions(), channels, filters});
    transformedFilters[scheme.m] =
        loop(rewriter, channels, 1, u, [&](OpBuilder &b, Value c, Value u) {
          return loop(
              b, filters, lanes, u, [&](OpBuilder &b, Value f, Value u) {
                VectorBuilder v{b, loc, vectorType};
                SmallVector<Value> g;
                for (int64_t i = 0; i < kTaps; ++i)
                  for (int64_t j = 0; j < kTaps; ++j)
                    g.push_back(
                        v.read(filter, {index(b, i), index(b, j), c, f}));
                for (auto [p, value] : llvm::enumerate(v.transform(
                         scheme.g, scheme.alpha(), kTaps, false, g)))
                  u = v.write(value, u, {index(b, p), c, f});
                return u;
              });
        });
  }

  // One block of image n into `dest` (the image's outputs): V = B^T d B,
  // M[:, p] = V[:, p] U[p], Y = A^T M A.
  auto convolveBlock = [&](OpBuilder &b, Value image, Value n,
                           const OutputBlock &block, Value dest) -> Value {
    const Scheme &scheme = block.scheme;
    const int64_t m = scheme.m, alpha = scheme.alpha();
    int64_t tileRows = block.height / m, tileColumns = block.width / m;
    int64_t tiles = tileRows * tileColumns;
    auto attr = [&](int64_t v) -> OpFoldResult { return b.getIndexAttr(v); };
    OpFoldResult zero = attr(0), one = attr(1);
    Value transformed =
        transformTiles(b, loc, vectorType, image, n,
                       allocate(b, {tiles, scheme.paddedPositions(), channels}),
                       tileRows, tileColumns, m, alpha, scheme.bt, alpha, false,
                       channels, block.row, block.column);
    Value u = transformedFilters[m];
    Value products = loop(
        b, scheme.positions(), 1,
        allocate(b, {tiles, scheme.paddedPositions(), filters}),
        [&](OpBuilder &b, Value p, Value acc) {
          // Position p of [tiles, positions, n] or of U[positions, c, f].
          auto tilesAt = [&](Value source, int64_t columns) {
            return tensor::ExtractSliceOp::create(
                b, loc, RankedTensorType::get({tiles, columns}, elementType),
                source, {zero, p, zero}, {attr(tiles), one, attr(columns)},
                {one, one, one});
          };
          Value weights = tensor::ExtractSliceOp::create(
              b, loc, RankedTensorType::get({channels, filters}, elementType),
              u, {p, zero, zero}, {one, attr(channels), attr(filters)},
              {one, one, one});
          Value init = linalg::FillOp::create(b, loc, fill.value(),
                                              Value(tilesAt(acc, filters)))
                           ->getResult(0);
          Value product =
              linalg::MatmulOp::create(
                  b, loc, TypeRange{init.getType()},
                  ValueRange{tilesAt(transformed, channels), weights}, init)
                  ->getResult(0);
          return tensor::InsertSliceOp::create(
                     b, loc, product, acc, {zero, p, zero},
                     {attr(tiles), one, attr(filters)}, {one, one, one})
              .getResult();
        });
    return loop(b, tileRows, 1, dest, [&](OpBuilder &b, Value th, Value acc) {
      return loop(
          b, tileColumns, 1, acc, [&](OpBuilder &b, Value tw, Value acc) {
            return loop(
                b, filters, lanes, acc, [&](OpBuilder &b, Value f, Value acc) {
                  VectorBuilder v{b, loc, vectorType};
                  Value tile = apply(b, d0 * tileColumns + d1, {th, tw});
                  SmallVector<Value> sums;
                  for (int64_t p = 0; p < scheme.positions(); ++p)
                    sums.push_back(v.read(products, {tile, index(b, p), f}));
                  SmallVector<Value> values =
                      v.transform(scheme.at, m, alpha, false, sums);
                  for (int64_t i = 0; i < m; ++i) {
                    Value row = apply(b, d0 * m + block.row + i, th);
                    for (int64_t j = 0; j < m; ++j)
                      acc =
                          v.write(values[i * m + j], acc,
                                  {index(b, 0), row,
                                   apply(b, d0 * m + block.column + j, tw), f});
                  }
                  return acc;
                });
          });
    });
  };

  // Per image: each block into the image's outputs, then the consumer.
  Value out = epilogue ? epilogue.getDpsInits()[0] : allocate(rewriter, shape);
  SmallVector<int64_t> imageShape = {1, shape[1], shape[2], shape[3]};
  SmallVector<Value> inits = {out};
  if (epilogue)
    inits.push_back(allocate(rewriter, imageShape));
  // The padded image, carried so that its border is filled once.
  tensor::PadOp padding = matchImagePadding(input);
  if (padding) {
    ArrayRef<int64_t> padded = padding.getResultType().getShape();
    inits.push_back(
        linalg::FillOp::create(
            rewriter, loc, paddingValue(padding),
            allocate(rewriter, {1, padded[1], padded[2], padded[3]}))
            ->getResult(0));
  }
  bool failedTile = false;
  auto image = [&](OpBuilder &b, Value n,
                   ValueRange carried) -> SmallVector<Value> {
    OpFoldResult zero = b.getIndexAttr(0), one = b.getIndexAttr(1);
    SmallVector<OpFoldResult> offsets = {n, zero, zero, zero};
    SmallVector<OpFoldResult> sizes =
        getAsIndexOpFoldResult(context, imageShape);
    SmallVector<OpFoldResult> unit(4, one);
    Value y = epilogue ? carried[1]
                       : tensor::ExtractSliceOp::create(b, loc, carried[0],
                                                        offsets, sizes, unit)
                             .getResult();
    // Image n of the input, or of its padding's source copied into the
    // carried image's interior.
    Value source = input, imageIndex = n;
    if (padding) {
      ArrayRef<int64_t> unpadded = padding.getSourceType().getShape();
      SmallVector<OpFoldResult> sourceSizes = getAsIndexOpFoldResult(
          context, {1, unpadded[1], unpadded[2], unpadded[3]});
      SmallVector<OpFoldResult> interiorOffsets = padding.getMixedLowPad();
      Value slice = tensor::ExtractSliceOp::create(b, loc, padding.getSource(),
                                                   offsets, sourceSizes, unit);
      Value interior = tensor::ExtractSliceOp::create(
          b, loc, carried.back(), interiorOffsets, sourceSizes, unit);
      Value copied =
          linalg::CopyOp::create(b, loc, slice, interior)->getResult(0);
      source = tensor::InsertSliceOp::create(
          b, loc, copied, carried.back(), interiorOffsets, sourceSizes, unit);
      imageIndex = constantIndex(b, loc, 0);
    }
    for (const OutputBlock &block : blocks)
      y = convolveBlock(b, source, imageIndex, block, y);
    SmallVector<Value> next = {Value()};
    if (epilogue) {
      // The consumer's tile reads the image's outputs in L2 and writes the
      // carried outputs' slice.
      Value outSlice = tensor::ExtractSliceOp::create(b, loc, carried[0],
                                                      offsets, sizes, unit);
      FailureOr<TilingResult> finished =
          cast<TilingInterface>(epilogue.getOperation())
              .getTiledImplementation(b, offsets, sizes);
      if (failed(finished)) {
        failedTile = true;
        return SmallVector<Value>(carried);
      }
      auto finishing = cast<linalg::LinalgOp>(finished->tiledOps.front());
      replaceOperand(finishing->getOpOperand(*consumed), y);
      replaceOperand(finishing.getDpsInitsMutable()[0], outSlice);
      next.push_back(y);
      y = finishing->getResult(0);
    }
    next[0] = tensor::InsertSliceOp::create(b, loc, y, carried[0], offsets,
                                            sizes, unit);
    if (padding)
      next.push_back(source);
    return next;
  };
  SmallVector<Value> results =
      buildTileLoop(rewriter, loc, 0, shape[0], 1, inits, image);
  if (failedTile) {
    // The loops and the allocations made for them go (constants are left
    // to canonicalization; the consumer's output is not ours).
    SmallVector<Operation *> loops = {results.front().getDefiningOp()};
    for (auto [m, u] : transformedFilters)
      loops.push_back(u.getDefiningOp());
    // Each init is an allocation, or a fill of one (the padded image).
    SmallVector<Operation *> inits;
    for (Operation *loop : loops)
      for (Value init : cast<scf::ForOp>(loop).getInitArgs()) {
        if (auto filled = init.getDefiningOp<linalg::FillOp>()) {
          inits.push_back(filled);
          init = filled.getDpsInits()[0];
        }
        if (auto allocation =
                init.getDefiningOp<bufferization::AllocTensorOp>())
          inits.push_back(allocation);
      }
    for (Operation *loop : loops)
      rewriter.eraseOp(loop);
    for (Operation *init : inits)
      if (init->use_empty())
        rewriter.eraseOp(init);
    return failure();
  }
  markImageLoop(results.front().getDefiningOp<scf::ForOp>());
  if (epilogue) {
    rewriter.replaceOp(epilogue, results.front());
    rewriter.eraseOp(op);
  } else {
    rewriter.replaceOp(op, results.front());
  }
  if (fill->use_empty())
    rewriter.eraseOp(fill);
  if (padding && padding->use_empty())
    rewriter.eraseOp(padding);
  return success();
}

int64_t fuse::winogradGradientTile(int64_t height, int64_t width) {
  std::optional<Scheme> scheme = chooseScheme(height, width);
  return scheme ? scheme->m : 0;
}

LogicalResult fuse::tileWinogradFilterGradient(RewriterBase &rewriter,
                                               linalg::GenericOp op,
                                               unsigned vectorBits,
                                               int64_t groupImages) {
  std::optional<FilterGradientForm> form = matchFilterGradient(op);
  if (!form || form->strides[0] != 1 || form->strides[1] != 1 ||
      form->dilations[0] != 1 || form->dilations[1] != 1)
    return failure();
  Value x = op.getDpsInputs()[0], grad = op.getDpsInputs()[1];
  FloatType elementType = sharedFloatType(op->getResult(0), op.getDpsInputs());
  if (!elementType)
    return failure();
  ArrayRef<int64_t> shape =
      cast<RankedTensorType>(op->getResult(0).getType()).getShape(); // dW
  ArrayRef<int64_t> gradShape =
      cast<RankedTensorType>(grad.getType()).getShape(); // n, oh, ow, f
  int64_t lanes = vectorLanes(elementType, vectorBits);
  int64_t channels = shape[2], filters = shape[3];
  if (!isWinogradFilter(shape, lanes) || llvm::is_contained(gradShape, 0))
    return failure();
  std::optional<Scheme> scheme = chooseScheme(gradShape[1], gradShape[2]);
  if (!scheme ||
      !scheme->fitsInL2(gradShape[1], gradShape[2], channels + filters,
                        elementType.getWidth() / 8))
    return failure();
  const int64_t m = scheme->m, alpha = scheme->alpha(),
                positions = scheme->positions();

  Location loc = op.getLoc();
  MLIRContext *context = op.getContext();
  int64_t tileRows = gradShape[1] / m, tileColumns = gradShape[2] / m;
  int64_t tiles = tileRows * tileColumns;
  auto vectorType = VectorType::get({lanes}, elementType);
  auto allocate = [&](OpBuilder &b, ArrayRef<int64_t> shape) -> Value {
    return bufferization::AllocTensorOp::create(
        b, loc, RankedTensorType::get(shape, elementType), ValueRange{});
  };
  rewriter.setInsertionPoint(op);
  // P[p, c, f], the sum over images and tiles of V[:, p]^T D[:, p].
  Value zero = arith::ConstantOp::create(rewriter, loc, elementType,
                                         rewriter.getFloatAttr(elementType, 0));
  Value acc =
      linalg::FillOp::create(rewriter, loc, zero,
                             allocate(rewriter, {positions, channels, filters}))
          ->getResult(0);
  AffineExpr row, column, k;
  bindDims(context, row, column, k);
  ArrayAttr maps = rewriter.getAffineMapArrayAttr(
      {AffineMap::get(3, 0, {k, row}, context),
       AffineMap::get(3, 0, {k, column}, context),
       AffineMap::get(3, 0, {row, column}, context)});
  Value products = buildImageLoop(
      rewriter, op, acc, groupImages,
      [&](OpBuilder &b, Value image, Value acc) {
        Value v = transformTiles(
            b, loc, vectorType, x, image,
            allocate(b, {tiles, scheme->paddedPositions(), channels}), tileRows,
            tileColumns, m, alpha, scheme->bt, alpha, false, channels);
        Value d = transformTiles(
            b, loc, vectorType, grad, image,
            allocate(b, {tiles, scheme->paddedPositions(), filters}), tileRows,
            tileColumns, m, m, scheme->at, alpha, true, filters);
        return buildTileLoop(
            b, loc, 0, positions, 1, acc,
            [&](OpBuilder &b, Value p, Value acc) {
              auto attr = [&](int64_t v) -> OpFoldResult {
                return b.getIndexAttr(v);
              };
              OpFoldResult zero = attr(0), one = attr(1);
              auto tilesAt = [&](Value source, int64_t columns) {
                return tensor::ExtractSliceOp::create(
                    b, loc,
                    RankedTensorType::get({tiles, columns}, elementType),
                    source, {zero, p, zero}, {attr(tiles), one, attr(columns)},
                    {one, one, one});
              };
              SmallVector<OpFoldResult> offsets = {p, zero, zero};
              SmallVector<OpFoldResult> sizes = {one, attr(channels),
                                                 attr(filters)};
              SmallVector<OpFoldResult> unit(3, one);
              Value sum = tensor::ExtractSliceOp::create(
                  b, loc,
                  RankedTensorType::get({channels, filters}, elementType), acc,
                  offsets, sizes, unit);
              Value product =
                  linalg::MatmulOp::create(
                      b, loc, TypeRange{sum.getType()},
                      ValueRange{tilesAt(v, channels), tilesAt(d, filters)},
                      sum,
                      SmallVector<NamedAttribute>{
                          b.getNamedAttr("indexing_maps", maps)})
                      ->getResult(0);
              return tensor::InsertSliceOp::create(b, loc, product, acc,
                                                   offsets, sizes, unit)
                  .getResult();
            });
      });

  // dW = init + G^T P G, per channel and register of filters.
  rewriter.setInsertionPointAfter(products.getDefiningOp());
  Value result = buildTileLoop(
      rewriter, loc, 0, channels, 1, op.getDpsInits()[0],
      [&](OpBuilder &b, Value c, Value out) {
        return buildTileLoop(
            b, loc, 0, filters, lanes, out,
            [&](OpBuilder &b, Value f, Value out) {
              VectorBuilder v{b, loc, vectorType};
              SmallVector<Value> sums;
              for (int64_t p = 0; p < positions; ++p)
                sums.push_back(
                    v.read(products, {constantIndex(b, loc, p), c, f}));
              SmallVector<Value> taps =
                  v.transform(scheme->g, kTaps, alpha, true, sums);
              for (int64_t i = 0; i < kTaps; ++i)
                for (int64_t j = 0; j < kTaps; ++j) {
                  SmallVector<Value> indices = {constantIndex(b, loc, i),
                                                constantIndex(b, loc, j), c, f};
                  out =
                      v.write(v.add(v.read(out, indices), taps[i * kTaps + j]),
                              out, indices);
                }
              return out;
            });
      });
  rewriter.replaceOp(op, result);
  return success();
}

namespace {

/// fuse-winograd-convolution: the convolutions, then the filter gradients,
/// whose config says Winograd. One that the rewrite refuses (blocks, L2)
/// gets its direct config.
struct WinogradConvolutionPass
    : fuse::impl::FuseWinogradConvolutionBase<WinogradConvolutionPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    unsigned bits = fuse::resolveVectorBits(func, vectorBits);
    fuse::DropClonedConfigs listener;
    IRRewriter rewriter(&getContext(), &listener);
    SmallVector<linalg::Conv2DNhwcHwcfOp> convolutions;
    SmallVector<linalg::GenericOp> gradients;
    func.walk([&](Operation *op) {
      if (auto conv = dyn_cast<linalg::Conv2DNhwcHwcfOp>(op);
          conv && fuse::hasStrategy(op, fuse::LoweringStrategy::winograd_conv))
        convolutions.push_back(conv);
      else if (auto generic = dyn_cast<linalg::GenericOp>(op);
               generic &&
               fuse::hasStrategy(
                   op, fuse::LoweringStrategy::winograd_filter_gradient))
        gradients.push_back(generic);
    });
    auto direct = [&](linalg::LinalgOp op) {
      LLVM_DEBUG(llvm::dbgs() << op->getName() << " at " << op->getLoc()
                              << ": stays direct\n");
      fuse::setLoweringConfig(op, fuse::chooseLoweringConfig(op, bits, {}));
    };
    DominanceInfo dominance(func);
    for (linalg::Conv2DNhwcHwcfOp conv : convolutions)
      if (failed(
              fuse::tileWinogradConvolution(rewriter, conv, bits, dominance)))
        direct(conv);
    // kh, kw, c, f | n, oh, ow: groups of images for the threads.
    for (linalg::GenericOp gradient : gradients) {
      int64_t groupImages =
          fuse::LoweringConfigAttr::lookup(gradient).getDistribution()[4];
      LLVM_DEBUG(llvm::dbgs() << "filter gradient at " << gradient.getLoc()
                              << ": groups of " << groupImages << " images\n");
      if (failed(fuse::tileWinogradFilterGradient(rewriter, gradient, bits,
                                                  groupImages)))
        direct(gradient);
    }
  }
};

} // namespace
