//===- WinogradConvolution.cpp - Winograd F(2x2, 3x3) convolutions --------===//
//
// Lavin and Gray's F(2x2, 3x3): a 2x2 output tile of a 3x3 correlation with
// filter g, from its 4x4 input tile d, is
//
//   Y = A^T [(G g G^T) .* (B^T d B)] A
//
//   B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1]
//   G   = [1 0 0; 1/2 1/2 1/2; 1/2 -1/2 1/2; 0 0 1]
//   A^T = [1 1 1 0; 0 1 -1 -1]
//
// Summed over the input channels, the element-wise product of the 16
// transformed positions becomes 16 matrix products of (tiles x c) and
// (c x f): 16 multiply-adds per tile, channel and filter instead of 36.
// The transforms are additions (the filter's also halvings) on vectors
// along the channels or filters, about a tenth of the products' work at 32
// channels. Per image, the transformed input and the products (tiles x 17
// x 32 floats each, 313 KiB for a 24 x 24 output) stay in L2.
//
//===----------------------------------------------------------------------===//

#include "WinogradConvolution.h"

#include "TileLoops.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/TilingInterface.h"

using namespace mlir;

namespace {

constexpr int64_t kOutputTile = 2, kInputTile = 4, kTaps = 3;
constexpr int64_t kPositions = kInputTile * kInputTile;

/// The vector arithmetic, reads and writes of the transforms.
struct VectorBuilder {
  OpBuilder &b;
  Location loc;
  VectorType type;

  Value add(Value x, Value y) { return arith::AddFOp::create(b, loc, x, y); }
  Value sub(Value x, Value y) { return arith::SubFOp::create(b, loc, x, y); }
  Value half(Value x) {
    Attribute attr = b.getFloatAttr(type.getElementType(), 0.5);
    Value c = arith::ConstantOp::create(
        b, loc, type, DenseElementsAttr::get(type, ArrayRef<Attribute>{attr}));
    return arith::MulFOp::create(b, loc, x, c);
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
};

// The 1-D transforms: B^T d, G g and A^T m of one column.
SmallVector<Value> transformInput(VectorBuilder &v, ArrayRef<Value> d) {
  return {v.sub(d[0], d[2]), v.add(d[1], d[2]), v.sub(d[2], d[1]),
          v.sub(d[1], d[3])};
}
SmallVector<Value> transformFilter(VectorBuilder &v, ArrayRef<Value> g) {
  Value outer = v.add(g[0], g[2]);
  return {g[0], v.half(v.add(outer, g[1])), v.half(v.sub(outer, g[1])), g[2]};
}
SmallVector<Value> transformOutput(VectorBuilder &v, ArrayRef<Value> m) {
  return {v.add(v.add(m[0], m[1]), m[2]), v.sub(v.sub(m[1], m[2]), m[3])};
}

using Transform1D = SmallVector<Value> (*)(VectorBuilder &, ArrayRef<Value>);

/// T x T^T for a 1-D transform T: T applied to each column of the square
/// `tile` (row-major), then to each row of the result. Row-major too.
SmallVector<Value> transform2D(VectorBuilder &v, ArrayRef<Value> tile,
                               int64_t size, Transform1D transform) {
  SmallVector<SmallVector<Value>> columns;
  for (int64_t j = 0; j < size; ++j) {
    SmallVector<Value> column;
    for (int64_t i = 0; i < size; ++i)
      column.push_back(tile[i * size + j]);
    columns.push_back(transform(v, column));
  }
  SmallVector<Value> result;
  for (size_t i = 0, e = columns.front().size(); i < e; ++i) {
    SmallVector<Value> row;
    for (SmallVector<Value> &column : columns)
      row.push_back(column[i]);
    result.append(transform(v, row));
  }
  return result;
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
  auto type = cast<RankedTensorType>(op->getResult(0).getType());
  auto elementType = dyn_cast<FloatType>(type.getElementType());
  if (!elementType)
    return failure();
  Value input = op.getDpsInputs()[0], filter = op.getDpsInputs()[1];
  ArrayRef<int64_t> shape = type.getShape(); // n, oh, ow, f
  ArrayRef<int64_t> filterShape =
      cast<RankedTensorType>(filter.getType()).getShape(); // kh, kw, c, f
  int64_t lanes = vectorLanes(elementType, vectorBits);
  int64_t channels = filterShape[2], filters = filterShape[3];
  if (filterShape[0] != kTaps || filterShape[1] != kTaps ||
      !allOnes(op.getStrides()) || !allOnes(op.getDilations()) ||
      channels == 0 || channels % lanes != 0 || filters % lanes != 0 ||
      llvm::is_contained(shape, 0) || shape[1] % kOutputTile != 0 ||
      shape[2] % kOutputTile != 0)
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
  int64_t tileRows = shape[1] / kOutputTile,
          tileColumns = shape[2] / kOutputTile;
  int64_t tiles = tileRows * tileColumns;
  // V and M are [tiles, positions, c or f]: a transform writes or reads
  // its tile's 16 vectors in one run of 2 KiB, not in 16 lines a position
  // (18 KiB at 144 tiles) apart. A product's rows are then a tile apart: 17
  // positions rather than 16, so that its 12 rows fall in distinct sets of
  // L1 (2 KiB apart, they would share two).
  constexpr int64_t kPaddedPositions = kPositions + 1;
  auto vectorType = VectorType::get({lanes}, elementType);
  auto index = [&](OpBuilder &b, int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  AffineExpr d0, d1;
  bindDims(context, d0, d1);
  auto apply = [&](OpBuilder &b, AffineExpr expr, ValueRange operands) {
    return affine::makeComposedAffineApply(b, loc, expr,
                                           getAsOpFoldResult(operands))
        .getResult();
  };
  auto loop = [&](OpBuilder &b, int64_t upper, int64_t step, Value init,
                  TileLoopBody body) {
    return buildTileLoop(b, loc, 0, upper, step, init, body);
  };

  // U[p, c, f] = (G g G^T)[p] for each channel and filter.
  // Allocations, not tensor.empty: CSE would merge empties of one type
  // (V and M at as many channels as filters), and so would their buffers.
  auto allocate = [&](ArrayRef<int64_t> shape) -> Value {
    return bufferization::AllocTensorOp::create(
        rewriter, loc, RankedTensorType::get(shape, elementType), ValueRange{});
  };
  Value u = allocate({kPositions, channels, filters});
  u = loop(rewriter, channels, 1, u, [&](OpBuilder &b, Value c, Value u) {
    return loop(b, filters, lanes, u, [&](OpBuilder &b, Value f, Value u) {
      VectorBuilder v{b, loc, vectorType};
      SmallVector<Value> g;
      for (int64_t i = 0; i < kTaps; ++i)
        for (int64_t j = 0; j < kTaps; ++j)
          g.push_back(v.read(filter, {index(b, i), index(b, j), c, f}));
      for (auto [p, value] :
           llvm::enumerate(transform2D(v, g, kTaps, transformFilter)))
        u = v.write(value, u, {index(b, p), c, f});
      return u;
    });
  });

  // Per image: V = B^T d B, M[p] = V[p] U[p], Y = A^T M A.
  Value out = epilogue ? epilogue.getDpsInits()[0] : allocate(shape);
  SmallVector<int64_t> imageShape = {1, shape[1], shape[2], shape[3]};
  SmallVector<Value> inits = {out,
                              allocate({tiles, kPaddedPositions, channels}),
                              allocate({tiles, kPaddedPositions, filters})};
  if (epilogue)
    inits.push_back(allocate(imageShape));
  bool failedTile = false;
  auto image = [&](OpBuilder &b, Value n,
                   ValueRange carried) -> SmallVector<Value> {
    auto attr = [&](int64_t v) -> OpFoldResult { return b.getIndexAttr(v); };
    OpFoldResult zero = attr(0), one = attr(1);
    Value transformed = loop(
        b, tileRows, 1, carried[1], [&](OpBuilder &b, Value th, Value acc) {
          return loop(
              b, tileColumns, 1, acc, [&](OpBuilder &b, Value tw, Value acc) {
                return loop(
                    b, channels, lanes, acc,
                    [&](OpBuilder &b, Value c, Value acc) {
                      VectorBuilder v{b, loc, vectorType};
                      SmallVector<Value> d;
                      for (int64_t i = 0; i < kInputTile; ++i) {
                        Value row = apply(b, d0 * kOutputTile + i, th);
                        for (int64_t j = 0; j < kInputTile; ++j)
                          d.push_back(v.read(
                              input,
                              {n, row, apply(b, d0 * kOutputTile + j, tw), c}));
                      }
                      Value tile = apply(b, d0 * tileColumns + d1, {th, tw});
                      for (auto [p, value] : llvm::enumerate(
                               transform2D(v, d, kInputTile, transformInput)))
                        acc = v.write(value, acc, {tile, index(b, p), c});
                      return acc;
                    });
              });
        });
    Value products = loop(
        b, kPositions, 1, carried[2], [&](OpBuilder &b, Value p, Value acc) {
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
    SmallVector<OpFoldResult> offsets = {n, zero, zero, zero};
    SmallVector<OpFoldResult> sizes =
        getAsIndexOpFoldResult(context, imageShape);
    SmallVector<OpFoldResult> unit(4, one);
    Value dest = epilogue ? carried[3]
                          : tensor::ExtractSliceOp::create(b, loc, carried[0],
                                                           offsets, sizes, unit)
                                .getResult();
    Value y =
        loop(b, tileRows, 1, dest, [&](OpBuilder &b, Value th, Value acc) {
          return loop(
              b, tileColumns, 1, acc, [&](OpBuilder &b, Value tw, Value acc) {
                return loop(
                    b, filters, lanes, acc,
                    [&](OpBuilder &b, Value f, Value acc) {
                      VectorBuilder v{b, loc, vectorType};
                      Value tile = apply(b, d0 * tileColumns + d1, {th, tw});
                      SmallVector<Value> m;
                      for (int64_t p = 0; p < kPositions; ++p)
                        m.push_back(v.read(products, {tile, index(b, p), f}));
                      SmallVector<Value> values =
                          transform2D(v, m, kInputTile, transformOutput);
                      for (int64_t i = 0; i < kOutputTile; ++i) {
                        Value row = apply(b, d0 * kOutputTile + i, th);
                        for (int64_t j = 0; j < kOutputTile; ++j)
                          acc =
                              v.write(values[i * kOutputTile + j], acc,
                                      {index(b, 0), row,
                                       apply(b, d0 * kOutputTile + j, tw), f});
                      }
                      return acc;
                    });
              });
        });
    SmallVector<Value> next = {Value(), transformed, products};
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
    return next;
  };
  SmallVector<Value> results =
      buildTileLoop(rewriter, loc, 0, shape[0], 1, inits, image);
  if (failedTile) {
    rewriter.eraseOp(results.front().getDefiningOp());
    rewriter.eraseOp(u.getDefiningOp());
    return failure();
  }
  if (epilogue) {
    rewriter.replaceOp(epilogue, results.front());
    rewriter.eraseOp(op);
  } else {
    rewriter.replaceOp(op, results.front());
  }
  if (fill->use_empty())
    rewriter.eraseOp(fill);
  return success();
}
