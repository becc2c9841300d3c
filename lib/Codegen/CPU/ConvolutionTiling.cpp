//===- ConvolutionTiling.cpp - Register tiles of convolutions -------------===//
//
// A convolution, its accumulator's zero fill and its element-wise consumer
// (bias add and ReLU, or the ReLU mask of a gradient) each make a pass over
// an output that, for the seed CNN, does not fit in L2:
//
//   acc = fill(0)                       write 5.5 MiB
//   y = conv(x, k, acc)                 read and write 5.5 MiB
//   z = relu(y + c)                     read 5.5 MiB, write 5.5 MiB
//
// Fused, each output tile (a few KiB) is filled, accumulated in registers
// and finished in cache, and only z reaches memory:
//
//   for n, oh, ow, f in tiles:
//     t = fill(0) of a tile-sized tensor
//     t = conv(x[window of the tile], k[:, :, :, f:+F], t)
//     z[tile] = relu(t + c[f:+F])
//
//===----------------------------------------------------------------------===//

#include "ConvolutionTiling.h"

#include "ImageLoopFusion.h"
#include "MatmulPacking.h"
#include "TileLoops.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/TilingInterface.h"

using namespace mlir;

namespace {

/// The bias gradient beside the filter gradient `op`: a generic in op's
/// block that sums op's output gradient over images, rows and columns into
/// [f]. The image loop that computes both goes where the later of the two
/// is, so the earlier one's users must all follow it. Or null.
linalg::GenericOp matchBiasGradient(linalg::GenericOp op) {
  using utils::IteratorType;
  Value grad = op.getDpsInputs()[1];
  MLIRContext *context = op.getContext();
  Block *block = op->getBlock();
  for (Operation *user : grad.getUsers()) {
    auto sum = dyn_cast<linalg::GenericOp>(user);
    if (!sum || sum == op || sum->getBlock() != block ||
        !sum.hasPureTensorSemantics() || sum.getNumDpsInputs() != 1 ||
        sum.getNumDpsInits() != 1 || sum.getDpsInputs()[0] != grad ||
        sum.getIteratorTypesArray() !=
            SmallVector<IteratorType>{
                IteratorType::reduction, IteratorType::reduction,
                IteratorType::reduction, IteratorType::parallel})
      continue;
    SmallVector<AffineMap> maps = sum.getIndexingMapsArray();
    if (!maps[0].isIdentity() ||
        maps[1] !=
            AffineMap::get(4, 0, {getAffineDimExpr(3, context)}, context))
      continue;
    Block *body = sum.getBlock();
    auto add = dyn_cast<arith::AddFOp>(body->front());
    if (!add || body->getOperations().size() != 2 ||
        body->getTerminator()->getOperand(0) != add.getResult() ||
        !llvm::is_contained(add->getOperands(), body->getArgument(0)) ||
        !llvm::is_contained(add->getOperands(), body->getArgument(1)))
      continue;
    Operation *first = sum, *last = op;
    if (op->isBeforeInBlock(sum))
      std::swap(first, last);
    if (llvm::any_of(first->getUsers(), [&](Operation *user) {
          Operation *ancestor = block->findAncestorOpInBlock(*user);
          return !ancestor || !last->isBeforeInBlock(ancestor);
        }))
      continue;
    return sum;
  }
  return {};
}

} // namespace

std::optional<fuse::FilterGradientForm>
fuse::matchFilterGradient(linalg::GenericOp op) {
  using utils::IteratorType;
  if (!op.hasPureTensorSemantics() || op.hasDynamicShape() ||
      op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 ||
      op.getNumLoops() != 7)
    return std::nullopt;
  SmallVector<IteratorType> iterators = op.getIteratorTypesArray();
  for (unsigned d = 0; d < 7; ++d)
    if (iterators[d] !=
        (d < 4 ? IteratorType::parallel : IteratorType::reduction))
      return std::nullopt;
  if (!linalg::detail::isContractionBody(
          *op.getBlock(), [](Operation *first, Operation *second) {
            return isa<arith::MulFOp>(first) && isa<arith::AddFOp>(second);
          }))
    return std::nullopt;
  MLIRContext *context = op.getContext();
  auto dim = [&](unsigned d) { return getAffineDimExpr(d, context); };
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  if (maps[2] !=
          AffineMap::get(7, 0, {dim(0), dim(1), dim(2), dim(3)}, context) ||
      maps[1] !=
          AffineMap::get(7, 0, {dim(4), dim(5), dim(6), dim(3)}, context) ||
      maps[0].getNumResults() != 4 || maps[0].getResult(0) != dim(4) ||
      maps[0].getResult(3) != dim(2))
    return std::nullopt;
  // A spatial index of X: the output position times the stride plus the
  // filter tap times the dilation.
  auto coefficient = [&](AffineExpr expr, unsigned d) -> int64_t {
    SmallVector<AffineExpr> values(7, getAffineConstantExpr(0, context));
    values[d] = getAffineConstantExpr(1, context);
    auto constant = dyn_cast<AffineConstantExpr>(simplifyAffineExpr(
        expr.replaceDims(values), /*numDims=*/7, /*numSymbols=*/0));
    return constant ? constant.getValue() : 0;
  };
  FilterGradientForm form;
  for (unsigned i = 0; i < 2; ++i) {
    AffineExpr expr = maps[0].getResult(1 + i);
    form.strides[i] = coefficient(expr, 5 + i);
    form.dilations[i] = coefficient(expr, i);
    if (form.strides[i] < 1 || form.dilations[i] < 1 ||
        expr != dim(5 + i) * form.strides[i] + dim(i) * form.dilations[i])
      return std::nullopt;
  }
  return form;
}

/// The sum over its leading dim of `partials` ([groups, ...]) added to
/// `init`, one group after the other in order: a linalg.generic whose
/// outermost loop is the reduction.
static Value sumPartials(OpBuilder &b, Location loc, Value partials,
                         Value init) {
  auto type = cast<RankedTensorType>(init.getType());
  int64_t rank = type.getRank();
  MLIRContext *context = b.getContext();
  SmallVector<AffineExpr> inner;
  for (int64_t d = 1; d <= rank; ++d)
    inner.push_back(getAffineDimExpr(d, context));
  SmallVector<AffineMap> maps = {
      AffineMap::getMultiDimIdentityMap(rank + 1, context),
      AffineMap::get(rank + 1, 0, inner, context)};
  SmallVector<utils::IteratorType> iterators(rank + 1,
                                             utils::IteratorType::parallel);
  iterators[0] = utils::IteratorType::reduction;
  return linalg::GenericOp::create(
             b, loc, TypeRange{type}, ValueRange{partials}, ValueRange{init},
             maps, iterators,
             [](OpBuilder &b, Location loc, ValueRange args) {
               Value sum = arith::AddFOp::create(b, loc, args[1], args[0]);
               linalg::YieldOp::create(b, loc, sum);
             })
      ->getResult(0);
}

Value fuse::buildImageLoop(RewriterBase &rewriter, linalg::GenericOp op,
                           Value acc, int64_t groupImages, TileLoopBody body) {
  Location loc = op.getLoc();
  Value grad = op.getDpsInputs()[1];
  auto gradType = cast<RankedTensorType>(grad.getType());
  int64_t images = gradType.getDimSize(0);
  linalg::GenericOp bias = matchBiasGradient(op);
  if (bias && op->isBeforeInBlock(bias))
    rewriter.setInsertionPoint(bias);
  // The sums over `count` images from `first` (from 0 when null) of dW and
  // of db, from `outs`.
  auto imageLoop = [&](OpBuilder &b, Value first, int64_t count,
                       ValueRange outs) {
    return fuse::buildTileLoop(
        b, loc, 0, count, 1, outs,
        [&](OpBuilder &b, Value image, ValueRange outs) -> SmallVector<Value> {
          if (first)
            image = arith::AddIOp::create(b, loc, first, image);
          Value dw = body(b, image, outs[0]);
          if (!bias)
            return {dw};
          SmallVector<OpFoldResult> offsets(4, b.getIndexAttr(0));
          offsets[0] = image;
          SmallVector<OpFoldResult> sizes = getAsIndexOpFoldResult(
              b.getContext(), {1, gradType.getDimSize(1),
                               gradType.getDimSize(2), gradType.getDimSize(3)});
          SmallVector<OpFoldResult> unit(4, b.getIndexAttr(1));
          Value slice = tensor::ExtractSliceOp::create(b, loc, grad, offsets,
                                                       sizes, unit);
          IRMapping map;
          map.map(grad, slice);
          map.map(bias.getDpsInits()[0], outs[1]);
          return {dw, b.clone(*bias, map)->getResult(0)};
        });
  };
  SmallVector<Value> inits = {acc};
  if (bias)
    inits.push_back(bias.getDpsInits()[0]);
  SmallVector<Value> results;
  if (groupImages <= 0 || groupImages >= images || images % groupImages != 0) {
    results = imageLoop(rewriter, Value(), images, inits);
    fuse::markImageLoop(results[0].getDefiningOp<scf::ForOp>());
  } else {
    // Groups of images for the threads: each sums its images into partials
    // of its own, from zero; then the partials are added to the
    // accumulators in group order, the same for every thread count.
    int64_t groups = images / groupImages;
    SmallVector<Value> partials;
    for (Value init : inits) {
      auto type = cast<RankedTensorType>(init.getType());
      SmallVector<int64_t> shape = {groups};
      llvm::append_range(shape, type.getShape());
      partials.push_back(
          tensor::EmptyOp::create(rewriter, loc, shape, type.getElementType()));
    }
    auto forall = scf::ForallOp::create(
        rewriter, loc, ArrayRef<OpFoldResult>{rewriter.getIndexAttr(0)},
        ArrayRef<OpFoldResult>{rewriter.getIndexAttr(groups)},
        ArrayRef<OpFoldResult>{rewriter.getIndexAttr(1)}, partials,
        std::nullopt);
    {
      OpBuilder::InsertionGuard guard(rewriter);
      rewriter.setInsertionPointToStart(forall.getBody());
      Value group = forall.getInductionVars().front();
      Value first = affine::makeComposedAffineApply(
          rewriter, loc,
          getAffineDimExpr(0, rewriter.getContext()) * groupImages, {group});
      // Group g's partial of each: a zeroed slice of its shared tensor.
      SmallVector<
          std::pair<SmallVector<OpFoldResult>, SmallVector<OpFoldResult>>>
          places;
      SmallVector<Value> zeros;
      for (auto [init, shared] : llvm::zip(inits, forall.getRegionIterArgs())) {
        auto type = cast<RankedTensorType>(init.getType());
        SmallVector<OpFoldResult> offsets(type.getRank() + 1,
                                          rewriter.getIndexAttr(0));
        offsets[0] = group;
        SmallVector<OpFoldResult> sizes = {rewriter.getIndexAttr(1)};
        llvm::append_range(sizes, getAsIndexOpFoldResult(rewriter.getContext(),
                                                         type.getShape()));
        Value slice = tensor::ExtractSliceOp::create(
            rewriter, loc, type, shared, offsets, sizes,
            SmallVector<OpFoldResult>(sizes.size(), rewriter.getIndexAttr(1)));
        Value zero = arith::ConstantOp::create(
            rewriter, loc, rewriter.getZeroAttr(type.getElementType()));
        zeros.push_back(
            linalg::FillOp::create(rewriter, loc, zero, slice).getResult(0));
        places.push_back({offsets, sizes});
      }
      SmallVector<Value> sums = imageLoop(rewriter, first, groupImages, zeros);
      rewriter.setInsertionPointToStart(forall.getTerminator().getBody());
      for (auto [sum, shared, place] :
           llvm::zip(sums, forall.getRegionIterArgs(), places))
        tensor::ParallelInsertSliceOp::create(
            rewriter, loc, sum, shared, place.first, place.second,
            SmallVector<OpFoldResult>(place.second.size(),
                                      rewriter.getIndexAttr(1)));
    }
    for (auto [partial, init] : llvm::zip(forall.getResults(), inits))
      results.push_back(sumPartials(rewriter, loc, partial, init));
  }
  if (bias)
    rewriter.replaceOp(bias, results[1]);
  return results[0];
}

int64_t fuse::largestDivisorAtMost(int64_t n, int64_t cap) {
  for (int64_t d = std::min(n, cap); d > 1; --d)
    if (n % d == 0)
      return d;
  return 1;
}

int64_t fuse::convTileColumns(unsigned vectorBits) {
  return vectorRegisters(vectorBits) / 4;
}

fuse::ConvTile fuse::chooseConvTile(int64_t batch, int64_t width,
                                    int64_t filters, unsigned vectorBits,
                                    int64_t lanes) {
  int64_t tileColumns = convTileColumns(vectorBits);
  int64_t columns = largestDivisorAtMost(width, tileColumns);
  int64_t images =
      columns < tileColumns
          ? largestDivisorAtMost(batch, microKernelRows(vectorBits) / columns)
          : 1;
  return {images, columns, largestDivisorAtMost(filters, 2 * lanes)};
}

bool fuse::hasLargeFilter(linalg::Conv2DNhwcHwcfOp op) {
  constexpr int64_t kL2HalfBytes = 512 * 1024;
  auto filter = cast<RankedTensorType>(op.getDpsInputs()[1].getType());
  return filter.hasStaticShape() &&
         filter.getNumElements() *
                 std::max<int64_t>(1, filter.getElementTypeBitWidth() / 8) >
             kL2HalfBytes;
}

LogicalResult fuse::tileConvolution(RewriterBase &rewriter,
                                    linalg::Conv2DNhwcHwcfOp op,
                                    ArrayRef<ConvTile> bands,
                                    DominanceInfo &dominance,
                                    int64_t distributedImages) {
  if (!op.hasPureTensorSemantics() || op.hasDynamicShape() ||
      hasLargeFilter(op) || bands.empty() || bands.size() > 2)
    return failure();
  auto fill = op.getDpsInits()[0].getDefiningOp<linalg::FillOp>();
  if (!fill)
    return failure();
  auto type = cast<RankedTensorType>(op->getResult(0).getType());
  if (!type.getElementType().isIntOrFloat())
    return failure();
  ArrayRef<int64_t> shape = type.getShape(); // n, oh, ow, f
  ArrayRef<int64_t> filterShape =
      cast<RankedTensorType>(op.getDpsInputs()[1].getType()).getShape();
  if (llvm::is_contained(shape, 0))
    return failure();
  // The consumer, if it has one output: the nest carries one tensor.
  linalg::GenericOp epilogue;
  std::optional<unsigned> consumed = matchElementwiseConsumer(op, epilogue);
  if (consumed && epilogue.getNumDpsInits() != 1)
    epilogue = {};
  unsigned input = consumed.value_or(0);

  Location loc = op.getLoc();
  rewriter.setInsertionPoint(fusedNestAnchor(op, epilogue, dominance));
  Value out = epilogue ? epilogue.getDpsInits()[0]
                       : tensor::EmptyOp::create(rewriter, loc, shape,
                                                 type.getElementType())
                             .getResult();

  auto loop = [&](OpBuilder &b, int64_t lower, int64_t upper, int64_t step,
                  Value init, TileLoopBody body) {
    return buildTileLoop(b, loc, lower, upper, step, init, body);
  };
  // One output tile: fill, convolve, finish, insert.
  auto tile = [&](OpBuilder &b, ValueRange ivs, const ConvTile &sizes,
                  Value out) -> FailureOr<Value> {
    SmallVector<OpFoldResult> offsets(ivs.begin(), ivs.end());
    SmallVector<OpFoldResult> tileSizes = getAsIndexOpFoldResult(
        b.getContext(), {sizes.images, 1, sizes.columns, sizes.filters});
    SmallVector<OpFoldResult> convOffsets(offsets), convSizes(tileSizes);
    for (int64_t d : {0, 1, 2}) {
      convOffsets.push_back(b.getIndexAttr(0));
      convSizes.push_back(b.getIndexAttr(filterShape[d]));
    }
    FailureOr<SmallVector<Value>> next = buildFusedTile(
        b, loc, cast<TilingInterface>(op.getOperation()), fill, convOffsets,
        convSizes, epilogue, input, offsets, tileSizes, out);
    if (failed(next))
      return failure();
    return next->front();
  };
  // The columns [begin, end) of `images` images from `first` (the batch
  // when null) in tiles of `sizes`.
  bool failedTile = false;
  auto nest = [&](OpBuilder &b, Value first, int64_t images, int64_t begin,
                  int64_t end, const ConvTile &sizes, Value out) {
    return loop(
        b, 0, images, sizes.images, out, [&](OpBuilder &b, Value n, Value out) {
          if (first)
            n = arith::AddIOp::create(b, loc, first, n);
          return loop(
              b, 0, shape[1], 1, out, [&](OpBuilder &b, Value h, Value out) {
                return loop(b, begin, end, sizes.columns, out,
                            [&](OpBuilder &b, Value w, Value out) {
                              return loop(
                                  b, 0, shape[3], sizes.filters, out,
                                  [&](OpBuilder &b, Value f, Value out) {
                                    FailureOr<Value> next =
                                        tile(b, {n, h, w, f}, sizes, out);
                                    if (succeeded(next))
                                      return *next;
                                    failedTile = true;
                                    return out;
                                  });
                            });
              });
        });
  };
  // Each band's tiles must divide its part of the output.
  int64_t main = bands.size() == 1
                     ? shape[2]
                     : shape[2] / bands[0].columns * bands[0].columns;
  // A thread's block of images holds whole tiles of every band.
  int64_t block = distributedImages;
  if (block != 0 && (shape[0] % block != 0 || block == shape[0] ||
                     llvm::any_of(bands, [&](const ConvTile &tile) {
                       return tile.images <= 0 || block % tile.images != 0;
                     })))
    block = 0;
  int64_t images = block ? block : shape[0];
  auto divides = [&](const ConvTile &tile, int64_t columns) {
    return tile.images > 0 && tile.columns > 0 && tile.filters > 0 &&
           images % tile.images == 0 && columns % tile.columns == 0 &&
           shape[3] % tile.filters == 0;
  };
  if (!divides(bands[0], main) ||
      (bands.size() == 2 && !divides(bands[1], shape[2] - main)))
    return failure();
  // The nests of both bands over `images` images from `first`.
  SmallVector<Operation *> built;
  auto nests = [&](OpBuilder &b, Value first, Value out) {
    Value result = nest(b, first, images, 0, main, bands[0], out);
    built.push_back(result.getDefiningOp());
    if (main < shape[2]) {
      result = nest(b, first, images, main, shape[2], bands[1], result);
      built.push_back(result.getDefiningOp());
    }
    return result;
  };
  Value result;
  if (block == 0) {
    result = nests(rewriter, Value(), out);
  } else {
    // Each thread's block: the nests over its images of the shared output.
    scf::ForallOp forall = buildBlockLoop(
        rewriter, loc, shape[0], block, /*dim=*/0, ValueRange{out},
        [&](OpBuilder &b, Value first, ValueRange shared) {
          return SmallVector<Value>{nests(b, first, shared[0])};
        });
    result = forall.getResult(0);
    built = {forall};
  }
  if (failedTile) {
    for (Operation *op : llvm::reverse(built))
      rewriter.eraseOp(op);
    return failure();
  }
  if (epilogue) {
    rewriter.replaceOp(epilogue, result);
    rewriter.eraseOp(op);
  } else {
    rewriter.replaceOp(op, result);
  }
  return success();
}

/// The filter gradient of a single-channel input (a first layer's, on
/// grayscale images) with unit column stride, whose taps fit in the
/// micro-kernel's rows. Tiled per channel like any other, its tiles would
/// have one row: two accumulators waiting on each other's FMAs. Instead,
/// per image and output row, the taps' input rows are copied into one
/// [taps, width] tensor (each a contiguous row of X: a small memcpy), and
/// one matmul with the output gradient's row accumulates all of dW[taps, f]
/// in registers.
static LogicalResult
tileSingleChannelFilterGradient(RewriterBase &rewriter, linalg::GenericOp op,
                                const fuse::FilterGradientForm &form,
                                int64_t groupImages) {
  auto type = cast<RankedTensorType>(op->getResult(0).getType());
  ArrayRef<int64_t> shape = type.getShape(); // kh, kw, 1, f
  ArrayRef<int64_t> gradShape =
      cast<RankedTensorType>(op.getDpsInputs()[1].getType()).getShape();
  int64_t taps = shape[0] * shape[1], width = gradShape[2];
  Type elementType = type.getElementType();
  Location loc = op.getLoc();
  MLIRContext *context = op.getContext();
  Value x = op.getDpsInputs()[0], grad = op.getDpsInputs()[1];
  auto tapsType = RankedTensorType::get({taps, shape[3]}, elementType);
  SmallVector<ReassociationIndices> groups = {{0, 1, 2}, {3}};
  rewriter.setInsertionPoint(op);
  Value acc = tensor::CollapseShapeOp::create(rewriter, loc, tapsType,
                                              op.getDpsInits()[0], groups);
  auto loop = [&](OpBuilder &b, int64_t upper, Value init,
                  fuse::TileLoopBody body) {
    return fuse::buildTileLoop(b, loc, 0, upper, 1, init, body);
  };
  Value result = fuse::buildImageLoop(
      rewriter, op, acc, groupImages,
      [&](OpBuilder &b, Value image, Value acc) {
        return loop(
            b, gradShape[1], acc, [&](OpBuilder &b, Value oh, Value acc) {
              auto attr = [&](int64_t v) -> OpFoldResult {
                return b.getIndexAttr(v);
              };
              OpFoldResult one = attr(1), zero = attr(0);
              Value rows =
                  tensor::EmptyOp::create(b, loc, {taps, width}, elementType);
              auto rowType = RankedTensorType::get({width}, elementType);
              for (int64_t kh = 0; kh < shape[0]; ++kh)
                for (int64_t kw = 0; kw < shape[1]; ++kw) {
                  OpFoldResult h = affine::makeComposedFoldedAffineApply(
                      b, loc,
                      getAffineDimExpr(0, context) * form.strides[0] +
                          kh * form.dilations[0],
                      {oh});
                  // A contiguous row of X: a memcpy once bufferized.
                  Value source = tensor::ExtractSliceOp::create(
                      b, loc, rowType, x,
                      {image, h, attr(kw * form.dilations[1]), zero},
                      {one, one, attr(width), one}, {one, one, one, one});
                  rows = tensor::InsertSliceOp::create(
                      b, loc, source, rows, {attr(kh * shape[1] + kw), zero},
                      {one, attr(width)}, {one, one});
                }
              Value gradRow = tensor::ExtractSliceOp::create(
                  b, loc, RankedTensorType::get({width, shape[3]}, elementType),
                  grad, {image, oh, zero, zero},
                  {one, one, attr(width), attr(shape[3])},
                  {one, one, one, one});
              return linalg::MatmulOp::create(b, loc, TypeRange{tapsType},
                                              ValueRange{rows, gradRow}, acc)
                  ->getResult(0);
            });
      });
  rewriter.replaceOpWithNewOp<tensor::ExpandShapeOp>(op, type, result, groups);
  return success();
}

/// Filter gradients of a single channel with up to this many taps are a
/// product of the taps' rows of X and the gradient (a register tile of
/// AVX-512's micro-kernel holds them all).
constexpr int64_t kMaxSingleChannelTaps = 12;

LogicalResult fuse::tileFilterGradient(RewriterBase &rewriter,
                                       linalg::GenericOp op, int64_t rows,
                                       int64_t columns, int64_t groupImages) {
  std::optional<FilterGradientForm> form = matchFilterGradient(op);
  if (!form)
    return failure();
  auto type = cast<RankedTensorType>(op->getResult(0).getType());
  ArrayRef<int64_t> shape = type.getShape(); // kh, kw, c, f
  ArrayRef<int64_t> gradShape =
      cast<RankedTensorType>(op.getDpsInputs()[1].getType()).getShape();
  if (llvm::is_contained(shape, 0) || llvm::is_contained(gradShape, 0))
    return failure();
  if (shape[2] == 1 && form->strides[1] == 1 && shape[0] * shape[1] > 1 &&
      shape[0] * shape[1] <= kMaxSingleChannelTaps)
    return tileSingleChannelFilterGradient(rewriter, op, *form, groupImages);
  if (rows <= 0 || columns <= 0 || shape[2] % rows != 0 ||
      shape[3] % columns != 0)
    return failure();
  Type elementType = type.getElementType();
  int64_t height = gradShape[1], width = gradShape[2];

  Location loc = op.getLoc();
  MLIRContext *context = op.getContext();
  Value x = op.getDpsInputs()[0], grad = op.getDpsInputs()[1];
  auto loop = [&](OpBuilder &b, int64_t upper, int64_t step, Value init,
                  TileLoopBody body) {
    return buildTileLoop(b, loc, 0, upper, step, init, body);
  };
  auto scaled = [&](OpBuilder &b, Value v, int64_t factor) -> OpFoldResult {
    return affine::makeComposedFoldedAffineApply(
        b, loc, getAffineDimExpr(0, context) * factor, {v});
  };
  // (m, n, k) = (c, f, ow): dW[c, f] += X[ow, c] * dY[ow, f], one output
  // row at a time; the accumulators stay in registers across the rows.
  AffineExpr m, n, k;
  bindDims(context, m, n, k);
  ArrayAttr maps =
      rewriter.getAffineMapArrayAttr({AffineMap::get(3, 0, {k, m}, context),
                                      AffineMap::get(3, 0, {k, n}, context),
                                      AffineMap::get(3, 0, {m, n}, context)});
  // One image, one filter tap, one register tile of (c, f).
  auto tile = [&](OpBuilder &b, Value image, Value kh, Value kw, Value c,
                  Value f, Value acc) -> Value {
    auto attr = [&](int64_t v) -> OpFoldResult { return b.getIndexAttr(v); };
    OpFoldResult one = attr(1);
    SmallVector<OpFoldResult> offsets = {kh, kw, c, f};
    SmallVector<OpFoldResult> sizes = {one, one, attr(rows), attr(columns)};
    SmallVector<OpFoldResult> unit(4, one);
    Value accTile = tensor::ExtractSliceOp::create(
        b, loc, RankedTensorType::get({rows, columns}, elementType), acc,
        offsets, sizes, unit);
    Value product =
        loop(b, height, 1, accTile, [&](OpBuilder &b, Value oh, Value accTile) {
          OpFoldResult row = affine::makeComposedFoldedAffineApply(
              b, loc,
              getAffineDimExpr(0, context) * form->strides[0] +
                  getAffineDimExpr(1, context) * form->dilations[0],
              {oh, kh});
          Value xs = tensor::ExtractSliceOp::create(
              b, loc, RankedTensorType::get({width, rows}, elementType), x,
              {image, row, scaled(b, kw, form->dilations[1]), c},
              {one, one, attr(width), attr(rows)},
              {one, one, attr(form->strides[1]), one});
          Value gs = tensor::ExtractSliceOp::create(
              b, loc, RankedTensorType::get({width, columns}, elementType),
              grad, {image, oh, attr(0), f},
              {one, one, attr(width), attr(columns)}, unit);
          return linalg::MatmulOp::create(
                     b, loc, TypeRange{accTile.getType()}, ValueRange{xs, gs},
                     accTile,
                     SmallVector<NamedAttribute>{
                         b.getNamedAttr("indexing_maps", maps)})
              ->getResult(0);
        });
    return tensor::InsertSliceOp::create(b, loc, product, acc, offsets, sizes,
                                         unit)
        .getResult();
  };
  rewriter.setInsertionPoint(op);
  Value result = buildImageLoop(
      rewriter, op, op.getDpsInits()[0], groupImages,
      [&](OpBuilder &b, Value image, Value acc) {
        return loop(
            b, shape[0], 1, acc, [&](OpBuilder &b, Value kh, Value acc) {
              return loop(
                  b, shape[1], 1, acc, [&](OpBuilder &b, Value kw, Value acc) {
                    return loop(b, shape[2], rows, acc,
                                [&](OpBuilder &b, Value c, Value acc) {
                                  return loop(
                                      b, shape[3], columns, acc,
                                      [&](OpBuilder &b, Value f, Value acc) {
                                        return tile(b, image, kh, kw, c, f,
                                                    acc);
                                      });
                                });
                  });
            });
      });
  rewriter.replaceOp(op, result);
  return success();
}
