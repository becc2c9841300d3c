//===- TileAttention.cpp - fuse-tile-attention ----------------------------===//
//
// Computes fuse.attention and fuse.attention_grad block by block, as
// FlashAttention does, in the blocks their attention_blocks configs name:
// one image loop over the heads (which fuse-distribute-image-loops shares
// among the threads), in each head a loop over blocks of query rows and,
// inside it, one over blocks of keys. The forward pass keeps a running row
// maximum, row sum and output accumulator (the online softmax); the
// backward pass recomputes each block's probabilities from each row's
// log-sum-exp in a sweep over the keys, which also accumulates the three
// gradients. The log-sum-exp is the forward pass's, kept when the gradient
// is in the same block (a training step), else a first sweep computes it. Only
// one block of scores exists at a time: no T x S tensor is ever created. Every
// sum runs in an order fixed by the shapes, so the bits do not depend on the
// thread count.
//
//===----------------------------------------------------------------------===//

#include "fuse/Codegen/Passes.h"

#include "ImageLoopFusion.h"
#include "LoweringStrategy.h"

#include "Fuse/IR/FuseOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/Support/Debug.h"

#include <limits>

#define DEBUG_TYPE "fuse-tile-attention"

namespace fuse {
#define GEN_PASS_DEF_FUSETILEATTENTION
#include "fuse/Codegen/Passes.h.inc"
} // namespace fuse

using namespace mlir;

namespace {

using BodyFn = function_ref<Value(OpBuilder &, Location, ValueRange)>;

/// Builds the linalg ops of one head's blocks (2-d tiles and their 1-d row
/// vectors, all of static shape) at the builder's insertion point.
class BlockBuilder {
public:
  BlockBuilder(OpBuilder &b, Location loc, Type element)
      : b(b), loc(loc), element(element) {}

  RankedTensorType type(ArrayRef<int64_t> shape) const {
    return RankedTensorType::get(shape, element);
  }

  Value constant(double value) const {
    return arith::ConstantOp::create(b, loc, b.getFloatAttr(element, value));
  }

  Value index(int64_t value) const {
    return arith::ConstantIndexOp::create(b, loc, value);
  }

  Value empty(ArrayRef<int64_t> shape) const {
    return tensor::EmptyOp::create(b, loc, shape, element);
  }

  Value filled(ArrayRef<int64_t> shape, double value) const {
    return linalg::FillOp::create(b, loc, ValueRange{constant(value)},
                                  ValueRange{empty(shape)})
        .getResult(0);
  }

  /// `op(lhs) x op(rhs)` into a new zero tile of `rows x cols`.
  Value matmul(Value lhs, Value rhs, bool transposeLhs, bool transposeRhs,
               int64_t rows, int64_t cols) const {
    MLIRContext *context = b.getContext();
    AffineExpr m = getAffineDimExpr(0, context),
               n = getAffineDimExpr(1, context),
               k = getAffineDimExpr(2, context);
    auto map = [&](AffineExpr r, AffineExpr c) {
      return AffineMap::get(3, 0, {r, c}, context);
    };
    SmallVector<NamedAttribute> attrs;
    if (transposeLhs || transposeRhs)
      attrs.push_back(b.getNamedAttr(
          "indexing_maps",
          b.getAffineMapArrayAttr({transposeLhs ? map(k, m) : map(m, k),
                                   transposeRhs ? map(n, k) : map(k, n),
                                   map(m, n)})));
    return linalg::MatmulOp::create(
               b, loc, TypeRange{type({rows, cols})}, ValueRange{lhs, rhs},
               ValueRange{filled({rows, cols}, 0.0)}, attrs)
        ->getResult(0);
  }

  /// An element-wise op over a `rows x cols` tile: `tiles` are read at
  /// (r, c), `rowVectors` at r; `body` gets them in that order (and then
  /// the output's element) and returns the result's element. With `into`,
  /// the result overwrites it (a loop's carried tensor is updated in place,
  /// as bufferization needs of what a loop yields); else a new tensor.
  Value map(ValueRange tiles, ValueRange rowVectors, int64_t rows, int64_t cols,
            BodyFn body, Value into = {}) const {
    SmallVector<Value> inputs(tiles);
    llvm::append_range(inputs, rowVectors);
    SmallVector<AffineMap> maps(tiles.size(), tileMap());
    maps.append(rowVectors.size(), rowMap());
    maps.push_back(tileMap());
    return generic(
        inputs, into ? into : empty({rows, cols}), maps,
        {utils::IteratorType::parallel, utils::IteratorType::parallel}, body);
  }

  /// An element-wise op over row vectors of `rows` elements (`into` as
  /// map's).
  Value mapRows(ValueRange rowVectors, int64_t rows, BodyFn body,
                Value into = {}) const {
    AffineMap identity = AffineMap::getMultiDimIdentityMap(1, b.getContext());
    SmallVector<AffineMap> maps(rowVectors.size() + 1, identity);
    return generic(rowVectors, into ? into : empty({rows}), maps,
                   {utils::IteratorType::parallel}, body);
  }

  /// Reduces each row of the `rows x cols` tiles into `init` (a row
  /// vector): `body` gets the tiles' elements and the accumulator and
  /// returns the new accumulator. The columns are taken in order.
  Value reduceRows(ValueRange tiles, Value init, BodyFn body) const {
    SmallVector<AffineMap> maps(tiles.size(), tileMap());
    maps.push_back(rowMap());
    return generic(
        tiles, init, maps,
        {utils::IteratorType::parallel, utils::IteratorType::reduction}, body);
  }

  /// `rows x cols` of the 2-d `source` from row `first`.
  Value rowsOf(Value source, Value first, int64_t rows, int64_t cols) const {
    return tensor::ExtractSliceOp::create(
        b, loc, type({rows, cols}), source,
        ArrayRef<OpFoldResult>{first, b.getIndexAttr(0)},
        ArrayRef<OpFoldResult>{b.getIndexAttr(rows), b.getIndexAttr(cols)},
        ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(1)});
  }

  /// `rows` elements of the row vector `source` from `first`.
  Value elementsOf(Value source, Value first, int64_t rows) const {
    return tensor::ExtractSliceOp::create(
        b, loc, type({rows}), source, ArrayRef<OpFoldResult>{first},
        ArrayRef<OpFoldResult>{b.getIndexAttr(rows)},
        ArrayRef<OpFoldResult>{b.getIndexAttr(1)});
  }

  /// The row vector `rows` written into the row vector `dest` from `first`.
  Value insertElements(Value rows, Value dest, Value first) const {
    auto shape = cast<RankedTensorType>(rows.getType()).getShape();
    return tensor::InsertSliceOp::create(
        b, loc, rows, dest, ArrayRef<OpFoldResult>{first},
        ArrayRef<OpFoldResult>{b.getIndexAttr(shape[0])},
        ArrayRef<OpFoldResult>{b.getIndexAttr(1)});
  }

  /// `tile` written into the 2-d `dest` from row `first`.
  Value insertRows(Value tile, Value dest, Value first) const {
    auto shape = cast<RankedTensorType>(tile.getType()).getShape();
    return tensor::InsertSliceOp::create(
        b, loc, tile, dest, ArrayRef<OpFoldResult>{first, b.getIndexAttr(0)},
        ArrayRef<OpFoldResult>{b.getIndexAttr(shape[0]),
                               b.getIndexAttr(shape[1])},
        ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(1)});
  }

  /// Head `head` of the 3-d `source`, as a 2-d tensor (of a 2-d
  /// [heads, rows] `source`, as a row vector).
  Value headOf(Value source, Value head) const {
    auto shape = cast<RankedTensorType>(source.getType()).getShape();
    if (shape.size() == 2)
      return tensor::ExtractSliceOp::create(
          b, loc, type({shape[1]}), source,
          ArrayRef<OpFoldResult>{head, b.getIndexAttr(0)},
          ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(shape[1])},
          ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(1)});
    return tensor::ExtractSliceOp::create(
        b, loc, type({shape[1], shape[2]}), source,
        ArrayRef<OpFoldResult>{head, b.getIndexAttr(0), b.getIndexAttr(0)},
        ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(shape[1]),
                               b.getIndexAttr(shape[2])},
        ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(1),
                               b.getIndexAttr(1)});
  }

  /// The 2-d `tile` stored as head `head` of the 3-d `dest` (the last step
  /// of an image loop's iteration); a row vector into a 2-d `dest`.
  Value insertHead(Value tile, Value dest, Value head) const {
    auto shape = cast<RankedTensorType>(tile.getType()).getShape();
    if (shape.size() == 1)
      return tensor::InsertSliceOp::create(
          b, loc, tile, dest, ArrayRef<OpFoldResult>{head, b.getIndexAttr(0)},
          ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(shape[0])},
          ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(1)});
    Value image = tensor::ExpandShapeOp::create(
        b, loc, type({1, shape[0], shape[1]}), tile,
        ArrayRef<ReassociationIndices>{{0, 1}, {2}});
    return tensor::InsertSliceOp::create(
        b, loc, image, dest,
        ArrayRef<OpFoldResult>{head, b.getIndexAttr(0), b.getIndexAttr(0)},
        ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(shape[0]),
                               b.getIndexAttr(shape[1])},
        ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(1),
                               b.getIndexAttr(1)});
  }

  OpBuilder &b;
  Location loc;
  Type element;

private:
  /// (r, c) -> (r, c) and (r, c) -> (r): a tile's and a row vector's.
  AffineMap tileMap() const {
    return AffineMap::getMultiDimIdentityMap(2, b.getContext());
  }
  AffineMap rowMap() const {
    return AffineMap::get(2, 0, {getAffineDimExpr(0, b.getContext())},
                          b.getContext());
  }

  /// A linalg.generic of one result written into `init`.
  Value generic(ValueRange inputs, Value init, ArrayRef<AffineMap> maps,
                ArrayRef<utils::IteratorType> iterators, BodyFn body) const {
    return linalg::GenericOp::create(
               b, loc, TypeRange{init.getType()}, inputs, ValueRange{init},
               maps, iterators,
               [&](OpBuilder &nested, Location nestedLoc, ValueRange args) {
                 linalg::YieldOp::create(nested, nestedLoc,
                                         body(nested, nestedLoc, args));
               })
        .getResult(0);
  }
};

/// The shapes of one attention: `heads` of `rows` queries and `keys` keys,
/// `features` per query and key and `values` per value; blocks of
/// `blockRows` queries and `blockKeys` keys.
struct AttentionShape {
  int64_t heads, rows, keys, features, values;
  int64_t blockRows, blockKeys;
  bool causal;
  double scale;
};

/// `value` ([..., a, b]) as a 3-d tensor of its leading dims folded into one.
Value toHeads(OpBuilder &b, Location loc, Value value) {
  auto type = cast<RankedTensorType>(value.getType());
  int64_t rank = type.getRank();
  ArrayRef<int64_t> shape = type.getShape();
  int64_t heads = 1;
  for (int64_t d = 0; d < rank - 2; ++d)
    heads *= shape[d];
  auto heads3 = RankedTensorType::get({heads, shape[rank - 2], shape[rank - 1]},
                                      type.getElementType());
  if (rank == 2)
    return tensor::ExpandShapeOp::create(
        b, loc, heads3, value, ArrayRef<ReassociationIndices>{{0, 1}, {2}});
  if (rank == 3)
    return value;
  ReassociationIndices leading =
      llvm::to_vector(llvm::seq<int64_t>(0, rank - 2));
  return tensor::CollapseShapeOp::create(
      b, loc, heads3, value,
      ArrayRef<ReassociationIndices>{leading, {rank - 2}, {rank - 1}});
}

/// The 3-d `value` back in `type`'s shape.
Value fromHeads(OpBuilder &b, Location loc, Value value,
                RankedTensorType type) {
  int64_t rank = type.getRank();
  if (rank == 3)
    return value;
  if (rank == 2)
    return tensor::CollapseShapeOp::create(
        b, loc, type, value, ArrayRef<ReassociationIndices>{{0, 1}, {2}});
  ReassociationIndices leading =
      llvm::to_vector(llvm::seq<int64_t>(0, rank - 2));
  return tensor::ExpandShapeOp::create(
      b, loc, type, value,
      ArrayRef<ReassociationIndices>{leading, {rank - 2}, {rank - 1}});
}

/// The number of key blocks that query block `block` sees: all, or with a
/// causal mask those holding a key at or before its last row.
Value keyBlocksOf(BlockBuilder &k, const AttentionShape &s, Value block) {
  int64_t all = s.keys / s.blockKeys;
  if (!s.causal)
    return k.index(all);
  // min(all, ceil((block + 1) * blockRows / blockKeys))
  OpBuilder &b = k.b;
  Value one = k.index(1);
  Value end = arith::MulIOp::create(b, k.loc,
                                    arith::AddIOp::create(b, k.loc, block, one),
                                    k.index(s.blockRows));
  Value blocks =
      arith::CeilDivUIOp::create(b, k.loc, end, k.index(s.blockKeys));
  return arith::MinUIOp::create(b, k.loc, blocks, k.index(all));
}

/// Whether the causal mask hides score (r, c) of the block whose first row
/// is `firstRow` and first key `firstKey` (inside a generic's body).
Value isMasked(OpBuilder &b, Location loc, Value firstRow, Value firstKey) {
  Value r = linalg::IndexOp::create(b, loc, 0);
  Value c = linalg::IndexOp::create(b, loc, 1);
  Value row = arith::AddIOp::create(b, loc, firstRow, r);
  Value key = arith::AddIOp::create(b, loc, firstKey, c);
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt, key, row);
}

/// The scores of a block, `queries x key^T` (the queries already scaled).
/// Masked ones are read as -inf by the consumers (isMasked).
struct ScoreBlock {
  Value scores, firstRow, firstKey;
};

ScoreBlock scoreBlock(BlockBuilder &k, const AttentionShape &s, Value queries,
                      Value keysOfHead, Value firstRow, Value keyBlock) {
  Value firstKey =
      arith::MulIOp::create(k.b, k.loc, keyBlock, k.index(s.blockKeys));
  Value keys = k.rowsOf(keysOfHead, firstKey, s.blockKeys, s.features);
  Value scores = k.matmul(queries, keys, false, true, s.blockRows, s.blockKeys);
  return {scores, firstRow, firstKey};
}

/// A score, -inf where the causal mask hides it (inside a generic's body).
Value maskedScore(const AttentionShape &s, OpBuilder &b, Location loc,
                  const ScoreBlock &block, Value score) {
  if (!s.causal)
    return score;
  Value masked = isMasked(b, loc, block.firstRow, block.firstKey);
  Value minusInf = arith::ConstantOp::create(
      b, loc,
      b.getFloatAttr(score.getType(),
                     -std::numeric_limits<double>::infinity()));
  return arith::SelectOp::create(b, loc, masked, minusInf, score);
}

/// The running statistics of the online softmax after one more block: the
/// row maxima `max` and the sums `sum` of exp(score - max); also the
/// probabilities exp(score - max) of the block (0 where masked) and the
/// factor exp(oldMax - max) by which older sums and accumulators shrink.
struct OnlineStep {
  Value max, sum, probabilities, rescale;
};

OnlineStep onlineStep(BlockBuilder &k, const AttentionShape &s,
                      const ScoreBlock &block, Value oldMax, Value oldSum) {
  double negInf = -std::numeric_limits<double>::infinity();
  int64_t rows = s.blockRows, cols = s.blockKeys;
  Value blockMax = k.reduceRows(
      block.scores, k.filled({rows}, negInf),
      [&](OpBuilder &b, Location loc, ValueRange args) -> Value {
        return arith::MaximumFOp::create(
            b, loc, maskedScore(s, b, loc, block, args[0]), args[1]);
      });
  // exp(oldMax - max(oldMax, blockMax)), read before oldMax is updated.
  Value rescale = k.mapRows(
      {oldMax, blockMax}, rows,
      [](OpBuilder &b, Location loc, ValueRange args) -> Value {
        Value max = arith::MaximumFOp::create(b, loc, args[0], args[1]);
        return math::ExpOp::create(b, loc,
                                   arith::SubFOp::create(b, loc, args[0], max));
      });
  // The carried statistics are updated in place.
  Value max = k.mapRows(
      blockMax, rows,
      [](OpBuilder &b, Location loc, ValueRange args) -> Value {
        return arith::MaximumFOp::create(b, loc, args[1], args[0]);
      },
      oldMax);
  Value probabilities =
      k.map(block.scores, max, rows, cols,
            [&](OpBuilder &b, Location loc, ValueRange args) -> Value {
              Value score = maskedScore(s, b, loc, block, args[0]);
              return math::ExpOp::create(
                  b, loc, arith::SubFOp::create(b, loc, score, args[1]));
            });
  Value scaledSum = k.mapRows(
      rescale, rows,
      [](OpBuilder &b, Location loc, ValueRange args) -> Value {
        return arith::MulFOp::create(b, loc, args[1], args[0]);
      },
      oldSum);
  Value sum =
      k.reduceRows(probabilities, scaledSum,
                   [](OpBuilder &b, Location loc, ValueRange args) -> Value {
                     return arith::AddFOp::create(b, loc, args[0], args[1]);
                   });
  return {max, sum, probabilities, rescale};
}

/// `queries * scale`, a head's or a block's.
Value scaled(BlockBuilder &k, const AttentionShape &s, Value queries,
             int64_t rows) {
  Value factor = k.constant(s.scale);
  return k.map(
      queries, {}, rows, s.features,
      [&](OpBuilder &b, Location loc, ValueRange args) {
        return arith::MulFOp::create(b, loc, args[0], factor).getResult();
      });
}

/// A loop from 0 to `count` (index values) carrying `inits`; `body` gets the
/// induction variable and the carried values and returns the next ones.
scf::ForOp buildLoop(BlockBuilder &k, Value count, ValueRange inits,
                     function_ref<SmallVector<Value>(Value, ValueRange)> body) {
  return scf::ForOp::create(
      k.b, k.loc, k.index(0), count, k.index(1), inits,
      [&](OpBuilder &nested, Location loc, Value iv, ValueRange args) {
        OpBuilder::InsertionGuard guard(k.b);
        k.b.setInsertionPoint(nested.getInsertionBlock(),
                              nested.getInsertionPoint());
        scf::YieldOp::create(k.b, loc, body(iv, args));
      });
}

/// Each row's log-sum-exp, max + log(sum), from the online softmax's
/// statistics after the last key block.
Value logSumExpOf(BlockBuilder &k, Value max, Value sum, int64_t rows) {
  return k.mapRows(
      {max, sum}, rows, [](OpBuilder &b, Location loc, ValueRange args) {
        return arith::AddFOp::create(b, loc, args[0],
                                     math::LogOp::create(b, loc, args[1]))
            .getResult();
      });
}

/// One head of the forward pass: the [rows, values] output and, with
/// `withLogSumExp`, each row's log-sum-exp (the [rows] statistics the
/// backward pass would otherwise compute again in a sweep of its own).
SmallVector<Value> forwardHead(BlockBuilder &k, const AttentionShape &s,
                               Value query, Value key, Value value,
                               bool withLogSumExp) {
  double negInf = -std::numeric_limits<double>::infinity();
  Value queries = scaled(k, s, query, s.rows);
  SmallVector<Value> outputs = {k.empty({s.rows, s.values})};
  if (withLogSumExp)
    outputs.push_back(k.empty({s.rows}));
  scf::ForOp rowLoop = buildLoop(
      k, k.index(s.rows / s.blockRows), outputs,
      [&](Value rowBlock, ValueRange output) -> SmallVector<Value> {
        Value firstRow =
            arith::MulIOp::create(k.b, k.loc, rowBlock, k.index(s.blockRows));
        Value rowsOfQ = k.rowsOf(queries, firstRow, s.blockRows, s.features);
        SmallVector<Value> inits = {k.filled({s.blockRows}, negInf),
                                    k.filled({s.blockRows}, 0.0),
                                    k.filled({s.blockRows, s.values}, 0.0)};
        scf::ForOp keyLoop = buildLoop(
            k, keyBlocksOf(k, s, rowBlock), inits,
            [&](Value keyBlock, ValueRange state) -> SmallVector<Value> {
              ScoreBlock block =
                  scoreBlock(k, s, rowsOfQ, key, firstRow, keyBlock);
              OnlineStep step = onlineStep(k, s, block, state[0], state[1]);
              Value values =
                  k.rowsOf(value, block.firstKey, s.blockKeys, s.values);
              Value product = k.matmul(step.probabilities, values, false, false,
                                       s.blockRows, s.values);
              Value accumulator = k.map(
                  product, step.rescale, s.blockRows, s.values,
                  [](OpBuilder &b, Location loc, ValueRange args) {
                    // acc * rescale + p x v
                    return math::FmaOp::create(b, loc, args[2], args[1],
                                               args[0])
                        .getResult();
                  },
                  state[2]);
              return {step.max, step.sum, accumulator};
            });
        Value rows =
            k.map(keyLoop.getResult(2), keyLoop.getResult(1), s.blockRows,
                  s.values, [](OpBuilder &b, Location loc, ValueRange args) {
                    return arith::DivFOp::create(b, loc, args[0], args[1])
                        .getResult();
                  });
        SmallVector<Value> stored = {k.insertRows(rows, output[0], firstRow)};
        if (withLogSumExp)
          stored.push_back(
              k.insertElements(logSumExpOf(k, keyLoop.getResult(0),
                                           keyLoop.getResult(1), s.blockRows),
                               output[1], firstRow));
        return stored;
      });
  return SmallVector<Value>(rowLoop.getResults());
}

/// One head of the backward pass: the gradients of query, key and value.
/// `logSumExp` is the forward pass's [rows] statistics, if it kept them;
/// else a first sweep over the keys computes them.
SmallVector<Value> backwardHead(BlockBuilder &k, const AttentionShape &s,
                                Value query, Value key, Value value,
                                Value output, Value outputGrad,
                                Value logSumExpOfHead) {
  double negInf = -std::numeric_limits<double>::infinity();
  int64_t br = s.blockRows, bc = s.blockKeys;
  Value queries = scaled(k, s, query, s.rows);
  SmallVector<Value> inits = {k.empty({s.rows, s.features}),
                              k.filled({s.keys, s.features}, 0.0),
                              k.filled({s.keys, s.values}, 0.0)};
  scf::ForOp rowLoop = buildLoop(
      k, k.index(s.rows / br), inits,
      [&](Value rowBlock, ValueRange grads) -> SmallVector<Value> {
        Value firstRow =
            arith::MulIOp::create(k.b, k.loc, rowBlock, k.index(br));
        Value rowsOfQ = k.rowsOf(queries, firstRow, br, s.features);
        Value rowsOfO = k.rowsOf(output, firstRow, br, s.values);
        Value rowsOfG = k.rowsOf(outputGrad, firstRow, br, s.values);
        Value keyBlocks = keyBlocksOf(k, s, rowBlock);
        // sum_c dO * O: the softmax gradient's row term.
        Value rowTerm = k.reduceRows(
            {rowsOfG, rowsOfO}, k.filled({br}, 0.0),
            [](OpBuilder &b, Location loc, ValueRange args) {
              return math::FmaOp::create(b, loc, args[0], args[1], args[2])
                  .getResult();
            });
        // Each row's log-sum-exp: the forward pass's, else a first sweep
        // computing it as the forward pass does (the same bits).
        Value logSumExp;
        if (logSumExpOfHead) {
          logSumExp = k.elementsOf(logSumExpOfHead, firstRow, br);
        } else {
          scf::ForOp statsLoop = buildLoop(
              k, keyBlocks, {k.filled({br}, negInf), k.filled({br}, 0.0)},
              [&](Value keyBlock, ValueRange state) -> SmallVector<Value> {
                ScoreBlock block =
                    scoreBlock(k, s, rowsOfQ, key, firstRow, keyBlock);
                OnlineStep step = onlineStep(k, s, block, state[0], state[1]);
                return {step.max, step.sum};
              });
          logSumExp = logSumExpOf(k, statsLoop.getResult(0),
                                  statsLoop.getResult(1), br);
        }
        // Second sweep: the probabilities again, and the gradients.
        scf::ForOp gradLoop = buildLoop(
            k, keyBlocks, {k.filled({br, s.features}, 0.0), grads[1], grads[2]},
            [&](Value keyBlock, ValueRange state) -> SmallVector<Value> {
              ScoreBlock block =
                  scoreBlock(k, s, rowsOfQ, key, firstRow, keyBlock);
              Value probabilities = k.map(
                  block.scores, logSumExp, br, bc,
                  [&](OpBuilder &b, Location loc, ValueRange args) -> Value {
                    Value score = maskedScore(s, b, loc, block, args[0]);
                    return math::ExpOp::create(
                        b, loc, arith::SubFOp::create(b, loc, score, args[1]));
                  });
              // Accumulates a product into a carried gradient, in place.
              auto add = [](OpBuilder &b, Location loc, ValueRange args) {
                return arith::AddFOp::create(b, loc, args[1], args[0])
                    .getResult();
              };
              // dV_j += P^T dO_i
              Value valueGrad = k.map(
                  k.matmul(probabilities, rowsOfG, true, false, bc, s.values),
                  {}, bc, s.values, add,
                  k.rowsOf(state[2], block.firstKey, bc, s.values));
              // dS = P * (dO_i V_j^T - rowTerm)
              Value values = k.rowsOf(value, block.firstKey, bc, s.values);
              Value scoreGrad = k.map(
                  {probabilities,
                   k.matmul(rowsOfG, values, false, true, br, bc)},
                  rowTerm, br, bc,
                  [](OpBuilder &b, Location loc, ValueRange args) {
                    return arith::MulFOp::create(
                               b, loc, args[0],
                               arith::SubFOp::create(b, loc, args[1], args[2]))
                        .getResult();
                  });
              // dQ_i += dS K_j (scaled at the end); dK_j += dS^T (Q_i scale)
              Value keys = k.rowsOf(key, block.firstKey, bc, s.features);
              Value queryGrad =
                  k.map(k.matmul(scoreGrad, keys, false, false, br, s.features),
                        {}, br, s.features, add, state[0]);
              Value keyGrad = k.map(
                  k.matmul(scoreGrad, rowsOfQ, true, false, bc, s.features), {},
                  bc, s.features, add,
                  k.rowsOf(state[1], block.firstKey, bc, s.features));
              return {queryGrad,
                      k.insertRows(keyGrad, state[1], block.firstKey),
                      k.insertRows(valueGrad, state[2], block.firstKey)};
            });
        Value queryGrad = scaled(k, s, gradLoop.getResult(0), br);
        return {k.insertRows(queryGrad, grads[0], firstRow),
                gradLoop.getResult(1), gradLoop.getResult(2)};
      });
  return SmallVector<Value>(rowLoop.getResults());
}

/// An image loop over the heads: `head` computes each head's results from
/// the heads of `operands` (3-d [heads, rows, cols], or 2-d [heads, rows]
/// row vectors); the loop's results are `resultTypes`, of the same forms.
SmallVector<Value> tileOverHeads(
    BlockBuilder &k, const AttentionShape &s, ValueRange operands,
    ArrayRef<RankedTensorType> resultTypes,
    function_ref<SmallVector<Value>(BlockBuilder &, ValueRange)> head) {
  SmallVector<Value> inits;
  for (RankedTensorType type : resultTypes)
    inits.push_back(k.empty(type.getShape()));
  scf::ForOp loop =
      buildLoop(k, k.index(s.heads), inits,
                [&](Value index, ValueRange outputs) -> SmallVector<Value> {
                  SmallVector<Value> heads;
                  for (Value operand : operands)
                    heads.push_back(k.headOf(operand, index));
                  SmallVector<Value> results = head(k, heads);
                  SmallVector<Value> stored;
                  for (auto [result, output] : llvm::zip(results, outputs))
                    stored.push_back(k.insertHead(result, output, index));
                  return stored;
                });
  fuse::markImageLoop(loop);
  return SmallVector<Value>(loop.getResults());
}

/// The [heads, rows, cols] form of `type` ([..., rows, cols]).
RankedTensorType headedType(RankedTensorType type) {
  int64_t rank = type.getRank();
  int64_t heads = 1;
  for (int64_t d = 0; d < rank - 2; ++d)
    heads *= type.getDimSize(d);
  return RankedTensorType::get(
      {heads, type.getDimSize(rank - 2), type.getDimSize(rank - 1)},
      type.getElementType());
}

std::optional<AttentionShape> shapeOf(Operation *op, bool causal,
                                      double scale) {
  auto config = fuse::LoweringConfigAttr::lookup(op);
  if (!config)
    config = fuse::chooseAttentionConfig(op);
  if (!config ||
      config.getStrategy() != fuse::LoweringStrategy::attention_blocks ||
      config.getCache().size() != 3)
    return std::nullopt;
  auto query = cast<RankedTensorType>(op->getOperand(0).getType());
  auto key = cast<RankedTensorType>(op->getOperand(1).getType());
  auto value = cast<RankedTensorType>(op->getOperand(2).getType());
  int64_t rank = query.getRank();
  AttentionShape s;
  s.heads = 1;
  for (int64_t d = 0; d < rank - 2; ++d)
    s.heads *= query.getDimSize(d);
  s.rows = query.getDimSize(rank - 2);
  s.features = query.getDimSize(rank - 1);
  s.keys = key.getDimSize(rank - 2);
  s.values = value.getDimSize(rank - 1);
  s.blockRows = config.getCache()[1];
  s.blockKeys = config.getCache()[2];
  s.causal = causal;
  s.scale = scale;
  if (s.blockRows <= 0 || s.blockKeys <= 0 || s.rows % s.blockRows != 0 ||
      s.keys % s.blockKeys != 0)
    return std::nullopt;
  return s;
}

/// The forward attention whose result `grad` differentiates, if it has
/// the gradient's operands, mask, scale and blocks: its log-sum-exp can be
/// kept for the gradient.
fuse::AttentionOp forwardOf(fuse::AttentionGradOp grad,
                            const AttentionShape &s) {
  auto forward = grad.getResult().getDefiningOp<fuse::AttentionOp>();
  if (!forward || forward.getQuery() != grad.getQuery() ||
      forward.getKey() != grad.getKey() ||
      forward.getValue() != grad.getValue() ||
      forward.getCausal() != grad.getCausal() ||
      forward.getScaleOrDefault() != grad.getScale().convertToDouble() ||
      forward->getBlock() != grad->getBlock())
    return {};
  std::optional<AttentionShape> f =
      shapeOf(forward, forward.getCausal(), forward.getScaleOrDefault());
  if (!f || f->blockRows != s.blockRows || f->blockKeys != s.blockKeys)
    return {};
  return forward;
}

struct TileAttentionPass
    : fuse::impl::FuseTileAttentionBase<TileAttentionPass> {
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    SmallVector<Operation *> ops;
    getOperation().walk([&](Operation *op) {
      if (isa<fuse::AttentionOp, fuse::AttentionGradOp>(op))
        ops.push_back(op);
    });
    // Forward passes whose gradient is in the same block keep each row's
    // log-sum-exp ([heads, rows]), which the gradient then reads instead of
    // sweeping over the keys to compute it again: one product and the
    // softmax's statistics less per block of the backward pass.
    // The forwards that keep it are the keys of logSumExps (their value set
    // once tiled).
    llvm::DenseMap<Operation *, Operation *> forwardOfGrad;
    llvm::DenseMap<Operation *, Value> logSumExps;
    for (Operation *op : ops) {
      auto grad = dyn_cast<fuse::AttentionGradOp>(op);
      if (!grad)
        continue;
      std::optional<AttentionShape> s =
          shapeOf(op, grad.getCausal(), grad.getScale().convertToDouble());
      if (!s)
        continue;
      if (fuse::AttentionOp forward = forwardOf(grad, *s)) {
        forwardOfGrad[op] = forward;
        logSumExps.try_emplace(forward);
      }
    }
    for (Operation *op : ops) {
      auto attention = dyn_cast<fuse::AttentionOp>(op);
      auto grad = dyn_cast<fuse::AttentionGradOp>(op);
      std::optional<AttentionShape> s =
          attention ? shapeOf(op, attention.getCausal(),
                              attention.getScaleOrDefault())
                    : shapeOf(op, grad.getCausal(),
                              grad.getScale().convertToDouble());
      if (!s) {
        op->emitOpError("cannot be tiled: it needs static shapes and an "
                        "attention_blocks config whose blocks divide the "
                        "query rows and keys");
        return signalPassFailure();
      }
      bool withLogSumExp = attention && logSumExps.contains(op);
      Value logSumExp =
          grad ? logSumExps.lookup(forwardOfGrad.lookup(op)) : Value();
      LLVM_DEBUG(llvm::dbgs()
                 << op->getName() << " at " << op->getLoc() << ": " << s->heads
                 << " heads, blocks of " << s->blockRows << " rows x "
                 << s->blockKeys << " keys"
                 << (withLogSumExp ? ", keeping the log-sum-exp" : "")
                 << (logSumExp ? ", reading the forward's log-sum-exp" : "")
                 << "\n");
      Location loc = op->getLoc();
      rewriter.setInsertionPoint(op);
      Type element =
          cast<RankedTensorType>(op->getOperand(0).getType()).getElementType();
      BlockBuilder k(rewriter, loc, element);
      SmallVector<Value> operands;
      for (Value operand : op->getOperands())
        operands.push_back(toHeads(rewriter, loc, operand));
      if (logSumExp)
        operands.push_back(logSumExp);
      SmallVector<RankedTensorType> resultTypes;
      for (Type type : op->getResultTypes())
        resultTypes.push_back(headedType(cast<RankedTensorType>(type)));
      if (withLogSumExp)
        resultTypes.push_back(k.type({s->heads, s->rows}));
      SmallVector<Value> results = tileOverHeads(
          k, *s, operands, resultTypes,
          [&](BlockBuilder &k, ValueRange heads) -> SmallVector<Value> {
            if (attention)
              return forwardHead(k, *s, heads[0], heads[1], heads[2],
                                 withLogSumExp);
            return backwardHead(k, *s, heads[0], heads[1], heads[2], heads[3],
                                heads[4], logSumExp ? heads[5] : Value());
          });
      if (withLogSumExp)
        logSumExps[op] = results.pop_back_val();
      SmallVector<Value> replacements;
      for (auto [result, type] : llvm::zip(results, op->getResultTypes()))
        replacements.push_back(
            fromHeads(rewriter, loc, result, cast<RankedTensorType>(type)));
      rewriter.replaceOp(op, replacements);
    }
  }
};

} // namespace
