//===- LoweringStrategy.cpp - The CPU strategy's decisions ----------------===//

#include "LoweringStrategy.h"

#include "fuse/ABI.h"

#include "BF16DotProducts.h"
#include "ConvolutionTiling.h"
#include "DotProductTiling.h"
#include "MatmulPacking.h"
#include "TileLoops.h"
#include "WinogradConvolution.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Debug.h"
#include "llvm/TargetParser/Host.h"

#include <limits>
#include <numeric>

#define DEBUG_TYPE "fuse-select-lowering-strategy"

using namespace mlir;
using namespace fuse;

namespace {

/// The widest vector register a CPU with `features` has, in bits.
unsigned widestVectorBits(const llvm::StringMap<bool> &features) {
  if (features.lookup("avx512f"))
    return 512;
  if (features.lookup("avx") || features.lookup("avx2"))
    return 256;
  return 128;
}

/// The vector width of `func`'s module's target, else the host's.
unsigned targetVectorBits(func::FuncOp func) {
  auto module = func->getParentOfType<ModuleOp>();
  auto target =
      module ? module->getAttrOfType<DictionaryAttr>(abi::kTargetAttrName)
             : DictionaryAttr();
  auto features =
      target ? target.getAs<StringAttr>(abi::kTargetFeaturesKey) : StringAttr();
  if (!features) {
    unsigned bits = widestVectorBits(llvm::sys::getHostCPUFeatures());
    LLVM_DEBUG(llvm::dbgs()
               << "vector width " << bits << " bits: the host's (no "
               << abi::kTargetAttrName << ")\n");
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
                          << target.get(abi::kTargetCpuKey) << "\n");
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
/// more than 27 of AVX-512's 32 registers live, the unrolled steps spill
/// (tiles of 4 rows x 6 registers: 856 of the loop's 1,430 instructions on
/// the stack); the same 5 stay free of AVX2's 16.
int64_t matmulTileColumns(int64_t n, int64_t rows, int64_t lanes,
                          unsigned vectorBits) {
  if (n % lanes != 0)
    return vectorTile(n, lanes);
  int64_t maxLiveRegisters = vectorRegisters(vectorBits) - 5;
  int64_t registers = std::min(2 * microKernelRows(vectorBits) / rows,
                               (maxLiveRegisters - 1) / (rows + 1));
  return largestDivisorAtMost(n / lanes, std::max<int64_t>(2, registers)) *
         lanes;
}

/// The row bands of an m x n matmul's register tiles: all rows in tiles of
/// the largest divisor of m up to the micro-kernel's height (12 rows with
/// AVX-512) when that is 2/3 of it or more, else tiles of its height and a
/// band of the rows left (64 rows: 60 in tiles of 12, 24 accumulators, and
/// 4 in one, instead of tiles of 8 with 16 accumulators; 13 rows: 12 and 1
/// instead of tiles of 1).
SmallVector<RowBand> matmulRowBands(int64_t m, int64_t n, int64_t lanes,
                                    unsigned vectorBits) {
  int64_t height = microKernelRows(vectorBits);
  int64_t rows = largestDivisorAtMost(m, height);
  auto columns = [&](int64_t rows) {
    return matmulTileColumns(n, rows, lanes, vectorBits);
  };
  if (m <= height || rows > height * 2 / 3)
    return {{0, m, rows, columns(rows)}};
  int64_t main = m / height * height;
  return {{0, main, height, columns(height)},
          {main, m, m - main, columns(m - main)}};
}

/// The lanes of a register of `op`'s output elements.
int64_t outputLanes(linalg::LinalgOp op, unsigned vectorBits) {
  return vectorLanes(getElementTypeOrSelf(op.getDpsInits()[0].getType()),
                     vectorBits);
}

/// Tile sizes for `op`: one per loop, each at most the loop's range.
SmallVector<int64_t> chooseTileSizes(linalg::LinalgOp op, unsigned vectorBits) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  int64_t lanes = outputLanes(op, vectorBits);
  auto clamp = [&](SmallVector<int64_t> sizes) {
    for (auto [size, range] : llvm::zip(sizes, ranges))
      size = std::max<int64_t>(1, std::min(size, range));
    return sizes;
  };
  // Contractions, convolutions and pools get tiles that divide their
  // iteration space exactly: their tiles are static, need no masks, and the
  // 1-D decomposition of convolutions sees static shapes.
  if (isa<linalg::MatmulOp>(op)) { // m, n, k
    int64_t rows = largestDivisorAtMost(ranges[0], microKernelRows(vectorBits));
    return {rows, matmulTileColumns(ranges[1], rows, lanes, vectorBits), 1};
  }
  if (isa<linalg::BatchMatmulOp>(op)) // b, m, n, k
    return {1, largestDivisorAtMost(ranges[1], batchMatmulTileRows(vectorBits)),
            vectorTile(ranges[2], lanes), 1};
  if (isa<linalg::Conv2DNhwcHwcfOp>(op)) { // n, oh, ow, f, kh, kw, c
    ConvTile tile =
        chooseConvTile(ranges[0], ranges[2], ranges[3], vectorBits, lanes);
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

/// The order of the tile loops: the op's own (empty), except for a packing
/// transpose and a convolution whose filter does not fit in L2 (the filter
/// gradient's, whose "filter" is the output gradient). Its filter rows are
/// then the outermost loop, so that one row of the filter (in L2) serves
/// every output tile before the next is read, instead of the whole filter
/// streaming from memory once per output tile.
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
  if (!conv || !hasLargeFilter(conv))
    return {};
  // n, oh, ow, f, kh, kw, c -> kh, n, oh, ow, f, kw, c.
  return {4, 0, 1, 2, 3, 5, 6};
}

/// Whether the strategy lowers `op` at all: static linalg ops on tensors
/// with loops.
bool isLowered(linalg::LinalgOp op) {
  return op.hasPureTensorSemantics() && !op.hasDynamicShape() &&
         op.getNumLoops() > 0;
}

/// A config of `strategy` whose register tiles are `registers` (one or
/// more tiles of one size per loop) and whose vector sizes are `vector`.
/// An empty `cache` or `distribution` is all zeros (one thread).
LoweringConfigAttr makeConfig(linalg::LinalgOp op, LoweringStrategy strategy,
                              ArrayRef<int64_t> registers,
                              ArrayRef<int64_t> vector,
                              ArrayRef<int64_t> interchange = {},
                              ArrayRef<int64_t> cache = {},
                              ArrayRef<int64_t> distribution = {}) {
  SmallVector<int64_t> zeros(op.getNumLoops(), 0);
  auto orZeros = [&](ArrayRef<int64_t> level) {
    return level.empty() ? ArrayRef<int64_t>(zeros) : level;
  };
  return LoweringConfigAttr::get(op->getContext(), strategy,
                                 orZeros(distribution), orZeros(cache),
                                 registers, vector, interchange);
}

/// A config of a rewrite strategy whose helper keeps its own tile sizes.
LoweringConfigAttr makeRewriteConfig(linalg::LinalgOp op,
                                     LoweringStrategy strategy) {
  SmallVector<int64_t> zeros(op.getNumLoops(), 0);
  return makeConfig(op, strategy, zeros, zeros);
}

/// Whether Winograd's transforms apply to a 3x3 filter of `shape` (kh, kw,
/// c, f) with unit strides and dilations: whole registers of channels and
/// of filters. (WinogradConvolution.cpp then checks the output's blocks and
/// that one image's transformed tiles fit in L2; where they do not, the
/// Winograd pass gives the op its direct config.)
bool isWinogradShape(ArrayRef<int64_t> shape, int64_t lanes) {
  return shape.size() == 4 && shape[0] == 3 && shape[1] == 3 && shape[2] != 0 &&
         shape[2] % lanes == 0 && shape[3] != 0 && shape[3] % lanes == 0;
}

bool allOnes(DenseIntElementsAttr attr) {
  return llvm::all_of(attr.getValues<int64_t>(),
                      [](int64_t v) { return v == 1; });
}

/// The least work of one distributed tile, in output elements: with a
/// fork/join of ~0.3 us (2 threads, docs/performance.md "Choosing the
/// parallel runtime") a tile of 16K f32 elements (about 1 us of streaming
/// from L2) gains more than the fork costs; smaller ops stay on one thread.
constexpr int64_t kMinDistributedElements = 16384;

/// The distribution level of an element-wise op or reduction (a
/// linalg.generic) or a pool with register tiles `registers`: its outermost
/// parallel loop that can be split into at least two tiles of
/// kMinDistributedElements or more, each a whole number of register tiles
/// and all of one size (so that every tile is static), is split into the
/// most such tiles; the loops outside it into tiles of 1. Reduction loops
/// are never split, so each output element is reduced whole by one thread,
/// and the tiles depend on the shapes only: the bits do not depend on the
/// thread count. All zeros (not distributed) when no loop allows it.
SmallVector<int64_t> chooseDistribution(linalg::LinalgOp op,
                                        ArrayRef<int64_t> registers) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  SmallVector<int64_t> sizes(ranges.size(), 0);
  if (!isa<linalg::GenericOp, linalg::PoolingNhwcMaxOp,
           linalg::PoolingNhwcSumOp>(op))
    return sizes;
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  auto parallel = [&](size_t d) {
    return iterators[d] == utils::IteratorType::parallel;
  };
  // The output elements of one iteration of each loop: the product of the
  // parallel ranges inside it.
  SmallVector<int64_t> inner(ranges.size() + 1, 1);
  for (size_t d = ranges.size(); d-- > 0;)
    inner[d] = parallel(d) ? inner[d + 1] * ranges[d] : inner[d + 1];
  if (inner[0] < 2 * kMinDistributedElements)
    return sizes;
  for (size_t d = 0; d < ranges.size(); ++d) {
    if (!parallel(d))
      continue;
    int64_t step = std::max<int64_t>(1, registers[d]);
    for (int64_t tile = step; tile <= ranges[d] / 2; tile += step) {
      if (ranges[d] % tile != 0 ||
          tile * inner[d + 1] < kMinDistributedElements)
        continue;
      for (size_t outer = 0; outer < d; ++outer)
        sizes[outer] = parallel(outer) ? 1 : 0;
      sizes[d] = tile;
      return sizes;
    }
    // Each iteration of the loops outside a later candidate must hold at
    // least one tile's work on its own: stop once a loop is too short.
    if (inner[d + 1] < kMinDistributedElements)
      break;
  }
  return SmallVector<int64_t>(ranges.size(), 0);
}

/// The elements of one chunk of an optimizer's update: 16 KiB of f32
/// parameters, 64 KiB with Adam's gradient and moments, in L2 with room to
/// spare.
constexpr int64_t kUpdateChunkElements = 4096;

/// The distribution level of an optimizer's update (fuse.optimizer_update,
/// all loops parallel): chunks of at most kUpdateChunkElements, the largest
/// that divide the update and start on a cache line (a chunk at an odd
/// offset reads every vector across two lines: 1.5x slower in cache), IPEX's
/// scheme. Loops whose iterations each hold more than a chunk are split into
/// tiles of 1, the next loop into the chunks. The updates of all parameters
/// are independent, so their chunks share one parallel region
/// (fuse-parallel-loops-to-openmp): even a small update is split, and its
/// chunks join the large ones'. Not split (all zeros) when that would leave
/// one chunk, or chunks of less than a quarter of kUpdateChunkElements (a
/// size with no such divisor near it).
SmallVector<int64_t> chooseUpdateChunks(linalg::LinalgOp op) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  SmallVector<int64_t> sizes(ranges.size(), 0);
  // Chunks of whole cache lines of every output (the narrowest, a bf16
  // copy of a master weight, has the most elements per line).
  int64_t narrowest = 0;
  for (Value init : op.getDpsInits()) {
    Type element = getElementTypeOrSelf(init.getType());
    if (!element.isIntOrFloat())
      return sizes;
    int64_t bits = element.getIntOrFloatBitWidth();
    narrowest = narrowest ? std::min(narrowest, bits) : bits;
  }
  if (op.getNumParallelLoops() != op.getNumLoops() || !narrowest)
    return sizes;
  int64_t lineElements =
      std::max<int64_t>(1, 64 / std::max<int64_t>(1, narrowest / 8));
  SmallVector<int64_t> inner(ranges.size() + 1, 1);
  for (size_t d = ranges.size(); d-- > 0;)
    inner[d] = inner[d + 1] * ranges[d];
  for (size_t d = 0; d < ranges.size(); ++d) {
    if (inner[d + 1] > kUpdateChunkElements) {
      sizes[d] = 1;
      continue;
    }
    for (int64_t tile = kUpdateChunkElements / inner[d + 1];
         tile * inner[d + 1] >= kUpdateChunkElements / 4; --tile) {
      if (ranges[d] % tile != 0 || (tile * inner[d + 1]) % lineElements != 0)
        continue;
      if (tile * inner[d + 1] == inner[0])
        break;
      sizes[d] = tile;
      return sizes;
    }
    break;
  }
  return SmallVector<int64_t>(ranges.size(), 0);
}

/// The least work of one distributed block of a product, in multiply-adds:
/// about 1 us on one core, three times a fork/join.
constexpr int64_t kMinDistributedMultiplyAdds = 1 << 18;

/// The smallest multiple of `unit` that divides `n` into at least two and
/// at most `maxBlocks` blocks, each of at least kMinDistributedMultiplyAdds
/// (`workPerIndex` per index of the block); 0 (not distributed) if none.
int64_t smallestBlock(int64_t n, int64_t unit, int64_t workPerIndex,
                      int64_t maxBlocks = std::numeric_limits<int64_t>::max()) {
  for (int64_t block = unit; block <= n / 2; block += unit)
    if (n % block == 0 && n / block <= maxBlocks &&
        block * workPerIndex >= kMinDistributedMultiplyAdds)
      return block;
  return 0;
}

/// The columns of each thread's block of an m x n x k matmul whose register
/// tiles are `bands`: the smallest multiple of every band's columns that
/// divides n into at least two blocks of kMinDistributedMultiplyAdds or
/// more; 0 (not distributed) if none. Each block holds whole register
/// tiles, so every output is computed as on one thread.
int64_t chooseColumnBlocks(ArrayRef<int64_t> ranges, ArrayRef<RowBand> bands) {
  int64_t unit = 1;
  for (const RowBand &band : bands)
    unit = std::lcm(unit, band.columns);
  return smallestBlock(ranges[1], unit, ranges[0] * ranges[2]);
}

/// Rows per thread block of an m x n x k matmul with an element-wise
/// consumer whose register tiles are `bands`: the rows of the most blocks
/// (8, 4 or 2) that divide m into blocks of kMinDistributedMultiplyAdds or
/// more whose own bands are `bands` (the same tiles, so that a block is
/// tiled as the whole was); 0 (not distributed by rows) if none. Rows are
/// the better split when B (k x n) is no larger than A (m x k): each thread
/// then reads its own rows of A and writes whole rows of the outputs,
/// contiguous streams, where blocks of columns each read all of A and
/// write every row in part. That is a weight gradient with its optimizer's
/// update (m, the layer's inputs, against n, its units): its update streams
/// the weight and the optimizer's state through memory.
int64_t chooseRowBlocks(ArrayRef<int64_t> ranges, ArrayRef<RowBand> bands,
                        int64_t lanes, unsigned vectorBits,
                        int64_t minWork = kMinDistributedMultiplyAdds) {
  if (ranges[1] > ranges[0])
    return 0;
  for (int64_t blocks : {8, 4, 2}) {
    if (ranges[0] % blocks != 0)
      continue;
    int64_t block = ranges[0] / blocks;
    if (block * ranges[1] * ranges[2] < minWork)
      continue;
    SmallVector<RowBand> own =
        matmulRowBands(block, ranges[1], lanes, vectorBits);
    if (own.size() == bands.size() &&
        llvm::all_of(llvm::zip(own, bands), [](auto pair) {
          auto [a, b] = pair;
          return a.rows == b.rows && a.columns == b.columns;
        }))
      return block;
  }
  return 0;
}

/// The least a reduction block of a weight holds, in elements (16 KiB of
/// f32): smaller products are not worth partial sums.
constexpr int64_t kMinReductionBlockElements = 1 << 12;

/// Reduction steps per block of an m x n x k f32 matmul whose B (k x n, a
/// layer's weight) is tall, k >= 4 n (the MLP's 784 x 128 input layer; a larger
/// one, such as the CNN's 4608 x 128, is packed instead): the rows per block
/// that chooseRowBlocks gives the k x n product of its weight gradient,
/// ignoring the batch, so that each thread reads the rows of the weight it
/// wrote in the last update (rows last written by the other core cost a
/// transfer to read and another to write back); 0 if none. The blocks' partial
/// products are summed in block order after them. The partition depends on k
/// and n only, never on m (the batch) nor the thread count, so an example's
/// outputs have the same bits in any batch, on any number of threads.
int64_t chooseReductionBlocks(ArrayRef<int64_t> ranges, int64_t lanes,
                              unsigned vectorBits, int64_t steps) {
  int64_t n = ranges[1], k = ranges[2];
  if (k < 4 * n)
    return 0;
  SmallVector<int64_t> gradient = {k, n, 1};
  int64_t block =
      chooseRowBlocks(gradient, matmulRowBands(k, n, lanes, vectorBits), lanes,
                      vectorBits, /*minWork=*/0);
  if (block == 0 || block % steps != 0 ||
      block * n < kMinReductionBlockElements)
    return 0;
  return block;
}

/// Images per thread block of a direct convolution (loops n, oh, ow, f, kh,
/// kw, c) whose register tiles span `unit` images: the smallest multiple of
/// `unit` that divides the batch into at least two blocks of
/// kMinDistributedMultiplyAdds or more; 0 (not distributed) if none. The
/// images of a convolution are independent, so the blocks change no sums.
int64_t chooseImageBlocks(ArrayRef<int64_t> ranges, int64_t unit) {
  int64_t perImage = 1;
  for (int64_t range : llvm::drop_begin(ranges))
    perImage *= range;
  return smallestBlock(ranges[0], unit, perImage);
}

/// Columns per thread block of a packed m x n x k matmul (BLIS's loop nest,
/// MatmulPacking.cpp) with column panels of `nr` and cache blocks of `nc`
/// columns: the fewest that divide the whole panels' columns into at least
/// two blocks of kMinDistributedMultiplyAdds or more and at most as many
/// blocks as NC blocks, or 4 if that is more; 0 if none. A block narrower
/// than NC packs A once more per block, so blocks stay as wide as the NC
/// blocks unless there are too few of those to share. Each column is
/// computed whole by one thread, in the same order.
int64_t choosePackedColumnBlocks(ArrayRef<int64_t> ranges, int64_t nr,
                                 int64_t nc) {
  int64_t columns = ranges[1] / nr * nr;
  if (nc <= 0 || columns == 0)
    return 0;
  return smallestBlock(columns, nr, ranges[0] * ranges[2],
                       std::max<int64_t>(4, columns / nc));
}

/// Rows per thread block of a packed m x n x k matmul with panels of A of
/// `mr` rows and cache blocks of `mc` rows: the largest multiple of `mr`
/// up to `mc` that divides the whole panels' rows into at least 4 blocks
/// (balanced enough for 2 or 3 threads) of at least 4 panels and
/// kMinDistributedMultiplyAdds each; 0 if none. Row blocks share one packed
/// block of B and pack only their own rows of A, where blocks of columns
/// each pack all of A again: rows are preferred when there are enough.
int64_t choosePackedRowBlocks(ArrayRef<int64_t> ranges, int64_t mr,
                              int64_t mc) {
  int64_t rows = ranges[0] / mr * mr;
  for (int64_t block = std::min(mc, rows / 4) / mr * mr; block >= 4 * mr;
       block -= mr)
    if (rows % block == 0 &&
        block * ranges[1] * ranges[2] >= kMinDistributedMultiplyAdds)
      return block;
  return 0;
}

/// The most groups a filter gradient's images are split into. Each group
/// sums its images into a partial filter gradient of its own, so that the
/// threads share the groups; the partials are added in group order after
/// they join. More groups balance more thread counts (8 groups: 4 + 4 on 2
/// threads, 3 + 3 + 2 on 3) and cost a partial each.
constexpr int64_t kMaxFilterGradientGroups = 8;

/// The partials' bytes a filter gradient may take at most.
constexpr int64_t kMaxPartialBytes = int64_t(16) << 20;

/// Images per group of a sum over `images` images of `perImage`
/// multiply-adds each into a partial of `partial` elements: the fewest that
/// split the batch into at most kMaxFilterGradientGroups groups, each of at
/// least kMinDistributedMultiplyAdds and of at least 64 multiply-adds per
/// element of its partial (so that adding the partials costs little), and
/// whose partials fit in kMaxPartialBytes; 0 (one loop over all images) if
/// none splits the batch in two. The groups depend on the shapes only:
/// every thread count adds the same partials in the same order.
int64_t chooseGroupImages(int64_t images, int64_t perImage, int64_t partial,
                          int64_t elementBytes) {
  for (int64_t group = 1; group <= images / 2; ++group) {
    int64_t groups = images / group;
    if (images % group != 0 || groups > kMaxFilterGradientGroups ||
        group * perImage < kMinDistributedMultiplyAdds ||
        group * perImage < 64 * partial ||
        groups * partial * elementBytes > kMaxPartialBytes)
      continue;
    return group;
  }
  return 0;
}

/// Images per group of a direct filter gradient (loops kh, kw, c, f | n,
/// oh, ow): its partials are whole filter gradients, its work per image
/// every multiply-add of the contraction (chooseGroupImages).
int64_t chooseImageGroups(ArrayRef<int64_t> ranges, int64_t elementBytes) {
  int64_t images = ranges[4], filter = 1, perImage = 1;
  for (int64_t d = 0; d < 4; ++d)
    filter *= ranges[d];
  for (int64_t range : ranges)
    perImage *= range;
  perImage /= std::max<int64_t>(1, images);
  return chooseGroupImages(images, perImage, filter, elementBytes);
}

/// Images per group of a Winograd filter gradient (loops kh, kw, c, f | n,
/// oh, ow; F(m x m, 3x3), winogradGradientTile): its partials are P, the
/// (m+2)^2 positions' c x f sums, and its work per image the products
/// accumulating them, one per position and output tile (the transforms
/// add some more; chooseGroupImages). 0 if the rewrite does not apply.
int64_t chooseWinogradImageGroups(ArrayRef<int64_t> ranges,
                                  int64_t elementBytes) {
  int64_t m = winogradGradientTile(ranges[5], ranges[6]);
  if (m == 0)
    return 0;
  int64_t positions = (m + 2) * (m + 2);
  int64_t partial = positions * ranges[2] * ranges[3];
  int64_t perImage = ranges[5] / m * (ranges[6] / m) * partial;
  return chooseGroupImages(ranges[4], perImage, partial, elementBytes);
}

} // namespace

/// The most query rows or keys of an attention block. A block's scores
/// (64 x 64 f32, 16 KiB) and the rows of queries, keys, values and
/// accumulators it reads (64 x D each) stay in L1 and L2 for the head
/// dimensions transformers use (D <= 128), and its products are large
/// enough for whole register tiles.
constexpr int64_t kAttentionBlock = 64;

LoweringConfigAttr fuse::chooseAttentionConfig(Operation *op) {
  auto query = dyn_cast<RankedTensorType>(op->getOperand(0).getType());
  auto key = dyn_cast<RankedTensorType>(op->getOperand(1).getType());
  if (!query || !key || !query.hasStaticShape() || !key.hasStaticShape() ||
      query.getRank() < 2)
    return {};
  int64_t rows = query.getDimSize(query.getRank() - 2);
  int64_t keys = key.getDimSize(key.getRank() - 2);
  SmallVector<int64_t> zeros(3, 0);
  SmallVector<int64_t> cache = {1, largestDivisorAtMost(rows, kAttentionBlock),
                                largestDivisorAtMost(keys, kAttentionBlock)};
  return LoweringConfigAttr::get(op->getContext(),
                                 LoweringStrategy::attention_blocks, zeros,
                                 cache, zeros, zeros, /*interchange=*/{});
}

bool fuse::isWorthDistributing(int64_t multiplyAdds) {
  return multiplyAdds >= kMinDistributedMultiplyAdds;
}

int64_t fuse::chooseImageLoopBlock(int64_t images, int64_t workPerImage) {
  return smallestBlock(images, 1, workPerImage);
}

unsigned fuse::resolveVectorBits(func::FuncOp func, unsigned option) {
  return option ? option : targetVectorBits(func);
}

LoweringConfigAttr fuse::chooseTiledConfig(linalg::LinalgOp op,
                                           unsigned vectorBits) {
  if (!isLowered(op))
    return {};
  SmallVector<int64_t> sizes = chooseTileSizes(op, vectorBits);
  SmallVector<int64_t> order = chooseLoopOrder(op);
  if (isa<linalg::MatmulOp>(op)) {
    // The register tiles are bands of rows; the vector sizes, one tile that
    // divides the whole product, tile it when it cannot be banded.
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    SmallVector<int64_t> registers;
    int64_t lanes = outputLanes(op, vectorBits);
    SmallVector<RowBand> bands =
        matmulRowBands(ranges[0], ranges[1], lanes, vectorBits);
    // Two reduction steps (a bf16 pair, vdpbf16ps) where the target has
    // AVX512_BF16 and the operands are bf16, else one.
    int64_t steps = registerTileReductionSteps(op);
    for (const RowBand &band : bands)
      registers.append({band.rows, band.columns, steps});
    // Blocks of rows, else of the reduction, else of columns for the
    // threads (fuse-tile-matmuls applies rows and columns to a product it
    // fuses with its consumer, reduction blocks to any).
    SmallVector<int64_t> distribution = {
        chooseRowBlocks(ranges, bands, lanes, vectorBits), 0, 0};
    if (distribution[0] == 0 && isa<linalg::MatmulOp>(op) &&
        !op.hasUserDefinedMaps() &&
        llvm::all_of(op->getOperandTypes(), [](Type type) {
          return getElementTypeOrSelf(type).isF32();
        }))
      distribution[2] = chooseReductionBlocks(ranges, lanes, vectorBits, steps);
    if (distribution[0] == 0 && distribution[2] == 0)
      distribution[1] = chooseColumnBlocks(ranges, bands);
    return makeConfig(op, LoweringStrategy::matmul_tiles, registers, sizes,
                      /*interchange=*/{}, /*cache=*/{}, distribution);
  }
  if (auto conv = dyn_cast<linalg::Conv2DNhwcHwcfOp>(op.getOperation());
      conv && !hasLargeFilter(conv)) {
    // Bands of columns: whole tiles of convTileColumns, then the columns
    // left (26 columns with AVX-512: 3 tiles of 8 and one of 2, each with 16
    // accumulators, instead of 13 tiles of 2); the vector sizes, one tile
    // that divides the whole output, tile it if it cannot be banded.
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    int64_t lanes = outputLanes(op, vectorBits);
    int64_t width = ranges[2];
    int64_t tileColumns = convTileColumns(vectorBits);
    int64_t main =
        width >= tileColumns ? width / tileColumns * tileColumns : width;
    SmallVector<int64_t> registers;
    auto band = [&](int64_t columns) {
      ConvTile tile =
          chooseConvTile(ranges[0], columns, ranges[3], vectorBits, lanes);
      registers.append({tile.images, 1, tile.columns, tile.filters, 1, 1, 1});
    };
    band(main);
    if (main < width)
      band(width - main);
    // Blocks of images for the threads, each of whole register tiles.
    int64_t unit = 1;
    for (size_t i = 0; i < registers.size(); i += ranges.size())
      unit = std::lcm(unit, registers[i]);
    SmallVector<int64_t> distribution(ranges.size(), 0);
    distribution[0] = chooseImageBlocks(ranges, unit);
    return makeConfig(op, LoweringStrategy::direct_conv, registers, sizes,
                      order, /*cache=*/{}, distribution);
  }
  LoweringStrategy strategy = LoweringStrategy::elementwise;
  if (isa<linalg::BatchMatmulOp>(op))
    strategy = LoweringStrategy::batch_matmul_tiles;
  else if (isa<linalg::Conv2DNhwcHwcfOp>(op))
    strategy = LoweringStrategy::direct_conv;
  else if (isa<linalg::PoolingNhwcMaxOp, linalg::PoolingNhwcSumOp>(op))
    strategy = LoweringStrategy::pool;
  else if (isa<linalg::TransposeOp>(op))
    strategy = LoweringStrategy::transpose;
  SmallVector<int64_t> distribution;
  if (op->hasAttr(kOptimizerUpdateAttrName))
    distribution = chooseUpdateChunks(op);
  else if (strategy == LoweringStrategy::elementwise ||
           strategy == LoweringStrategy::pool)
    distribution = chooseDistribution(op, sizes);
  return makeConfig(op, strategy, sizes, sizes, order, /*cache=*/{},
                    distribution);
}

LoweringConfigAttr fuse::chooseLoweringConfig(linalg::LinalgOp op,
                                              unsigned vectorBits,
                                              const LoweringOptions &options) {
  if (!isLowered(op))
    return {};
  int64_t lanes = outputLanes(op, vectorBits);
  if (auto matmul = dyn_cast<linalg::MatmulOp>(op.getOperation())) {
    // Rows of A against rows of a transposed B, or BLIS's loop nest.
    if (std::optional<int64_t> rows = dotProductTileRows(matmul, vectorBits)) {
      SmallVector<int64_t> tile = {op.getStaticLoopRanges()[0], *rows, lanes};
      return makeConfig(op, LoweringStrategy::dot_products, tile, tile);
    }
    if (std::optional<PackedBlocks> blocks =
            choosePackedBlocks(matmul, vectorBits)) {
      // The micro-kernel's tile; the cache blocks MC, NC, KC; blocks of
      // columns for the threads.
      int64_t mr = microKernelRows(vectorBits);
      SmallVector<int64_t> tile = {mr, 2 * lanes, 1};
      SmallVector<int64_t> ranges = op.getStaticLoopRanges();
      SmallVector<int64_t> distribution = {0, 0, 0};
      if (int64_t rows = choosePackedRowBlocks(ranges, mr, blocks->mc)) {
        distribution[0] = rows;
        blocks->mc = rows;
      } else {
        distribution[1] =
            choosePackedColumnBlocks(ranges, 2 * lanes, blocks->nc);
      }
      return makeConfig(op, LoweringStrategy::packed_matmul, tile, tile, {},
                        {blocks->mc, blocks->nc, blocks->kc}, distribution);
    }
  }
  if (auto conv = dyn_cast<linalg::Conv2DNhwcHwcfOp>(op.getOperation())) {
    auto filter = cast<ShapedType>(conv.getDpsInputs()[1].getType());
    if (options.winograd && isWinogradShape(filter.getShape(), lanes) &&
        allOnes(conv.getStrides()) && allOnes(conv.getDilations()))
      return makeRewriteConfig(op, LoweringStrategy::winograd_conv);
  }
  if (auto generic = dyn_cast<linalg::GenericOp>(op.getOperation())) {
    if (std::optional<FilterGradientForm> form = matchFilterGradient(generic)) {
      auto gradient = cast<ShapedType>(generic->getResult(0).getType());
      bool unit = form->strides[0] == 1 && form->strides[1] == 1 &&
                  form->dilations[0] == 1 && form->dilations[1] == 1;
      int64_t elementBytes =
          std::max<int64_t>(1, gradient.getElementTypeBitWidth() / 8);
      // Groups of images for the threads: a tile on the reduction loop n,
      // each group's sum a partial of its own.
      SmallVector<int64_t> distribution(7, 0);
      if (options.winograd && unit &&
          isWinogradShape(gradient.getShape(), lanes)) {
        // WinogradConvolution.cpp keeps its own tiles; the groups are the
        // strategy's.
        distribution[4] =
            chooseWinogradImageGroups(op.getStaticLoopRanges(), elementBytes);
        SmallVector<int64_t> zeros(7, 0);
        return makeConfig(op, LoweringStrategy::winograd_filter_gradient, zeros,
                          zeros, /*interchange=*/{}, /*cache=*/{},
                          distribution);
      }
      // kh, kw, c, f | n, oh, ow: per image and tap, register tiles of up
      // to the micro-kernel's rows of channels x 2 registers of filters.
      ArrayRef<int64_t> shape = gradient.getShape();
      int64_t rows =
          largestDivisorAtMost(shape[2], microKernelRows(vectorBits));
      int64_t columns = largestDivisorAtMost(shape[3], 2 * lanes);
      SmallVector<int64_t> tile = {1, 1, rows, columns, 1, 1, 1};
      distribution[4] =
          chooseImageGroups(op.getStaticLoopRanges(), elementBytes);
      return makeConfig(op, LoweringStrategy::filter_gradient, tile, tile,
                        /*interchange=*/{}, /*cache=*/{}, distribution);
    }
  }
  return chooseTiledConfig(op, vectorBits);
}

LoweringConfigAttr fuse::getOrChooseTiledConfig(linalg::LinalgOp op,
                                                unsigned vectorBits) {
  if (LoweringConfigAttr config = LoweringConfigAttr::lookup(op))
    return config;
  LoweringConfigAttr config = chooseTiledConfig(op, vectorBits);
  setLoweringConfig(op, config);
  return config;
}

void fuse::setLoweringConfig(Operation *op, LoweringConfigAttr config) {
  if (config)
    op->setAttr(LoweringConfigAttr::kAttrName, config);
  else
    op->removeAttr(LoweringConfigAttr::kAttrName);
}

void fuse::markRegisterTile(Operation *op) {
  setLoweringConfig(op, LoweringConfigAttr::get(op->getContext(),
                                                LoweringStrategy::register_tile,
                                                {}, {}, {}, {}, {}));
}

bool fuse::hasStrategy(Operation *op, LoweringStrategy strategy) {
  LoweringConfigAttr config = LoweringConfigAttr::lookup(op);
  return config && config.getStrategy() == strategy;
}

bool fuse::isRegisterTile(Operation *op) {
  return hasStrategy(op, LoweringStrategy::register_tile);
}

SmallVector<RowBand> fuse::getRowBands(LoweringConfigAttr config, int64_t m) {
  SmallVector<ArrayRef<int64_t>> tiles = config.getRegisterTiles();
  if (tiles.size() == 1)
    return {{0, m, tiles[0][0], tiles[0][1]}};
  int64_t main = m / tiles[0][0] * tiles[0][0];
  return {{0, main, tiles[0][0], tiles[0][1]},
          {main, m, tiles[1][0], tiles[1][1]}};
}

void DropClonedConfigs::notifyOperationInserted(
    Operation *op, OpBuilder::InsertPoint previous) {
  if (!previous.isSet() && !isRegisterTile(op))
    op->removeAttr(LoweringConfigAttr::kAttrName);
}
