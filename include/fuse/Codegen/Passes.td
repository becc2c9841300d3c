//===- Passes.td - Fuse codegen passes ------------------------------------===//
//
// Code generation on linalg and below: fusion, the CPU strategy and
// its tiling, bufferization helpers, vector lowering, the calling convention.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_CODEGEN_PASSES_TD
#define FUSE_CODEGEN_PASSES_TD

include "mlir/Pass/PassBase.td"

def FuseElementwiseFusion
    : Pass<"fuse-elementwise-fusion", "::mlir::func::FuncOp"> {
  let summary = "Fuse element-wise linalg.generic producers into consumers";
  let description = [{
    Fuses a `linalg.generic` producer into the `linalg.generic` that consumes
    it, so chains of element-wise work (and element-wise work feeding a
    reduction) become one loop nest that reads and writes memory once.
    Unlike upstream `linalg-fuse-elementwise-ops`, it does not propagate
    reshapes through named ops: `linalg.matmul` and convolutions stay named
    for the contraction code generator. Each fused op is built once, every
    body cloned once: linear in the chain. An out that a body never reads
    becomes a `tensor.empty` (upstream's clean-up), except where its result
    is what an enclosing `scf.for` carries to the next iteration (a master
    weight's `bf16` copy, written by the optimizer's update): that out is
    the iteration's carried value, so it bufferizes in place instead of
    into a new buffer copied back each iteration; likewise where its result
    is a function result marked `fuse.in_place = N` (the join of a split
    master weight's halves after the K-step loop): that out is argument N,
    so the result is written into the argument, not copied into it. The work done is counted in pass
    statistics (`--mlir-pass-statistics`, with an LLVM built with
    statistics; Debian's is not) and, with option `report`, in a remark per
    function.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
  let options = [
    Option<"report", "report", "bool", /*default=*/"false",
           "Emit a remark per function: generics built and absorbed, body "
           "operations cloned">,
  ];
  let statistics = [
    Statistic<"numBuilt", "built-generics", "Fused generics built">,
    Statistic<"numAbsorbed", "absorbed-generics",
              "Generics fused into another">,
    Statistic<"numClonedOps", "cloned-body-ops",
              "Body operations cloned into fused generics">,
  ];
}

def FuseInsertTimers : Pass<"fuse-insert-timers", "::mlir::ModuleOp"> {
  let summary = "Time every linalg op and tensor.pad (a per-op profile)";
  let description = [{
    Profiling instrumentation, as XLA's HLO profile: each `linalg` op and
    `tensor.pad` of a function body (not the ops nested inside one) gets a
    call to `fuse_timer_start` before it and to `fuse_timer_stop` after it.
    The stop call passes the start time and a constant string naming the
    region: the function (or `label`), the op, its result type and its
    source location (a backward op carries the location of the forward op
    it differentiates). Runs on tensor-level linalg, before tiling, so each
    region times the whole loop nest the op becomes, and any copy that
    bufferization inserts for its operands. The JIT defines both functions;
    `fuse::profile()` reads the totals, and `fusec run --profile` and
    `fusec train --profile` print them.
  }];
  let options = [
    Option<"label", "label", "std::string", /*default=*/"",
           "Names each region's function (default: its symbol)">
  ];
  let dependentDialects = [
    "::mlir::func::FuncDialect", "::mlir::LLVM::LLVMDialect"
  ];
}

// The CPU strategy (fuse-tile-and-vectorize, a pipeline of the passes below
// in this order, built by fuse::buildTileAndVectorizePipeline): one pass
// chooses a #fuse.lowering_config per op, the others apply it
// (docs/codegen.md).

def FuseWidenBF16Operands
    : Pass<"fuse-widen-bf16-operands", "::mlir::func::FuncOp"> {
  let summary = "Widen the bf16 operands of f32 contractions the target cannot pair";
  let description = [{
    A linalg contraction (matmul, batch_matmul, convolution, or a generic
    such as a convolution's filter gradient) with bf16 inputs and an f32
    output, on a target that does not pair bf16 products (without
    AVX512_BF16 in `fuse.target`'s features, the host's without one, or
    whose CPU's LLVM scheduling model has FMAs do at least as many
    multiply-adds per cycle as vdpbf16ps: `fuse::targetPairsBF16Products`),
    reads f32 copies of its bf16 inputs, each widened once by an
    element-wise `arith.extf` (exact), and becomes the f32 op: the f32
    micro-kernels run unchanged, instead of widening each operand element
    inside the reduction loop (a bf16 scalar cannot be broadcast from
    memory as an f32 one). The sums are the same. Each bf16 value is
    widened once, right after its definition, for the contractions that
    read it; a reader after a contraction that does not read the value
    gets a copy of its own, made right before it, when the copy takes 1
    MiB or more (a layer's activation, read by its forward product and
    again by its weight gradient, is not kept in f32 across the loss). An
    element-wise generic that reads a bf16 input only widened reads the
    copy made for the contraction before it instead, when no other
    contraction came between (a ReLU's mask taken from its bf16 output
    after the filter gradient read it: the bf16 value then dies at the
    copy). A value that is a cast of an f32 tensor is not widened but
    rounded again from that tensor in one pass (truncf then extf: the same
    bits), and the cast goes when nothing else reads it. Widening commutes
    with a constant `tensor.pad`: a padded bf16 value's copy is the pad of
    its source's copy (by the f32 padding value). Where pairs win, `linalg.matmul` keeps its bf16 inputs
    (vdpbf16ps, docs/codegen.md) and the other contractions (batched
    products, convolutions and both convolution gradients) are widened.
    Runs first in `fuse-tile-and-vectorize`.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

def FuseSelectLoweringStrategy
    : Pass<"fuse-select-lowering-strategy", "::mlir::func::FuncOp"> {
  let summary = "Choose the CPU lowering config of every linalg op";
  let description = [{
    Sets `fuse.lowering_config` (a `#fuse.lowering_config`: the strategy and
    the tile sizes of each level, docs/codegen.md) on every static linalg op
    on tensors that has loops and no config yet, from the strategy library
    (lib/Codegen/CPU/LoweringStrategy.cpp), which holds every decision of
    the CPU code generator: matmuls of 1 to 3 rows against a transposed B
    as dot products, matmuls whose B is transposed or exceeds half of L2
    packed (BLIS), other matmuls in register tiles of up to 12 x (2
    vectors) (fewer rows take more columns; rows with no divisor of 9 to 12
    in two bands), batch_matmuls, convolutions (Winograd with `winograd`
    for 3x3 filters with unit strides and whole registers of channels and
    filters; else direct tiles; the filter rows outermost for a filter
    larger than half of L2), filter gradients, pools, transposes, and
    element-wise ops and reductions (up to 4 vectors along the innermost
    loop; an optimizer's update, `fuse.optimizer_update`, distributed in
    chunks of up to 4096 elements fixed by its shape). Ops the apply passes
    create get their configs from the same library. `vector-bits` is the
    register width; 0 takes the module's `fuse.target` features (512 with
    avx512f, 256 with avx or avx2, else 128), or the host CPU's when the
    module has none. `-debug-only=` the
    pass's name prints each choice.
  }];
  let options = [
    Option<"vectorBits", "vector-bits", "unsigned", /*default=*/"0",
           "Vector register width in bits (0: the target's)">,
    Option<"winograd", "winograd", "bool", /*default=*/"false",
           "Compute the 3x3 convolutions (and filter gradients) that "
           "allow it with Winograd's F(4x4, 3x3) or F(2x2, 3x3)">
  ];
  let dependentDialects = ["::fuse::FuseDialect"];
}

def FuseSplitSharedFills
    : Pass<"fuse-split-shared-fills", "::mlir::func::FuncOp"> {
  let summary = "One fill per linalg op that accumulates into it";
  let description = [{
    CSE merges identical fills, and when two ops accumulate into one filled
    tensor, bufferization copies it (5 MiB for a convolution of the seed
    CNN) before the first one writes. Each op after the first that takes a
    static fill as its output gets a copy of the fill into its own
    `bufferization.alloc_tensor` (a `tensor.empty` would be merged again by
    CSE, and so would the fills).
  }];
  let dependentDialects = [
    "::fuse::FuseDialect", "::mlir::affine::AffineDialect",
    "::mlir::arith::ArithDialect",
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::linalg::LinalgDialect", "::mlir::math::MathDialect",
    "::mlir::scf::SCFDialect", "::mlir::tensor::TensorDialect",
    "::mlir::vector::VectorDialect"
  ];
}

def FuseWinogradConvolution
    : Pass<"fuse-winograd-convolution", "::mlir::func::FuncOp"> {
  let summary = "Apply the winograd_conv and winograd_filter_gradient configs";
  let description = [{
    Rewrites each conv2d whose config is `winograd_conv`, then each filter
    gradient whose config is `winograd_filter_gradient`
    (WinogradConvolution.cpp). Winograd's sums are rounded differently from
    direct ones, and are not exactly 0 where the exact sum is, which a
    ReLU's gradient at 0 tells apart: hence the option (`fusec --winograd`).
    A conv2d with a 3x3 filter, unit strides and dilations, an even output
    and whole registers of channels and filters becomes Winograd's F(4x4,
    3x3) on the output's largest block whose sides 4 divides, F(2x2, 3x3)
    on the strips of 2 left below and to its right. The filter is
    transformed once; per image, each (m+2)x(m+2) input tile is transformed
    with vector arithmetic into V[tiles, positions, c], one matmul per
    position gives M[tiles, positions, f], and the output transform writes
    the image's m x m output tiles, which the element-wise consumer then
    finishes while they are in L2: 4x (F(4x4)) or 2.25x (F(2x2)) fewer
    multiply-adds than the direct form. A zero-padded input (an input
    gradient's) is padded image by image. Filter gradients (even output
    gradients; F(4x4) when 4 divides them, else F(2x2), no blocks) are the
    transpose: per image, X's tiles become V and dY's m x m tiles D[tiles,
    positions, f], one matmul per position accumulates P[p] += V[:, p]^T
    D[:, p] over the images (with the bias gradient beside it in the same
    image loop), and dW = G^T P G. The config's groups of images
    (`distribution` on n, the strategy's) run on the threads, each summing
    its images into partials of P and db of its own, added in group order:
    the same bits for any thread count. Images whose transformed tiles would not
    fit in L2 stay direct: the op gets its direct config. The block choice
    and the L2 check stay inside WinogradConvolution.cpp.
  }];
  let options = [
    Option<"vectorBits", "vector-bits", "unsigned", /*default=*/"0",
           "Vector register width in bits (0: the target's)">
  ];
  let dependentDialects = [
    "::fuse::FuseDialect", "::mlir::affine::AffineDialect",
    "::mlir::arith::ArithDialect",
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::linalg::LinalgDialect", "::mlir::math::MathDialect",
    "::mlir::scf::SCFDialect", "::mlir::tensor::TensorDialect",
    "::mlir::vector::VectorDialect"
  ];
}

def FuseTileAttention : Pass<"fuse-tile-attention", "::mlir::func::FuncOp"> {
  let summary = "Compute attention block by block (FlashAttention)";
  let description = [{
    Rewrites each `fuse.attention` and `fuse.attention_grad` into an image
    loop over its heads (folded leading dimensions) in the blocks of its
    `attention_blocks` config (`cache = [1, rows, keys]`, chosen by
    `fuse-select-lowering-strategy`, or by the strategy library when the op
    has none): in each head, a loop over blocks of query rows and inside it
    one over blocks of keys (with a causal mask, only those at or before the
    block's last row). The forward pass keeps the online softmax's running
    row maxima, sums and output block; the backward pass recomputes each
    block's probabilities from each row's log-sum-exp, accumulating the
    query block's gradient and the key and value gradients of the head.
    When the gradient differentiates a forward attention of the same block
    (a training step), the forward pass keeps the log-sum-exp (`[heads,
    rows]`, a second result of its loop) for it; otherwise the backward
    pass computes it in a first sweep over the keys, as the forward pass
    does. Each block is linalg ops on tiles that the
    other passes tile and vectorize; the `T x S` scores never exist as a
    tensor. `fuse-distribute-image-loops` shares the heads among the
    threads; the sums run in an order fixed by the shapes.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect", "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

def FuseDecomposePads : Pass<"fuse-decompose-pads", "::mlir::func::FuncOp"> {
  let summary = "Rewrite constant tensor.pads as a fill and a copy";
  let description = [{
    A `tensor.pad` with a constant value and static shapes becomes a fill of
    the padded tensor and a `linalg.copy` of the source into its interior,
    which are tiled and vectorized like any op; when only linalg ops read
    the source, its producer writes straight into the interior instead (no
    copy). Left alone, the pad would become a strided `memref.copy`, which
    runs element by element in MLIR's C runtime (9 ms for the seed CNN's
    5 MiB input gradient).
  }];
  let dependentDialects = [
    "::fuse::FuseDialect", "::mlir::affine::AffineDialect",
    "::mlir::arith::ArithDialect",
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::linalg::LinalgDialect", "::mlir::math::MathDialect",
    "::mlir::scf::SCFDialect", "::mlir::tensor::TensorDialect",
    "::mlir::vector::VectorDialect"
  ];
}

def FuseBlockAndPackMatmuls
    : Pass<"fuse-block-and-pack-matmuls", "::mlir::func::FuncOp"> {
  let summary = "Apply the dot_products and packed_matmul configs; pack "
                "transposed right-hand sides; split awkward sizes";
  let description = [{
    For each matmul and batch_matmul (those a rewrite created get their
    config from the strategy library):

    - `dot_products` (DotProductTiling.cpp), a matmul of 1 to 3 rows
      against a transposed B, as a batch-1 backward pass computes
      dx = dy W^T: dot products of rows of A and rows of B, both read
      contiguously along k. Each tile of up to 16 rows of B keeps a
      register of partial sums per output, one FMA per register of k, then
      sums its lanes;
    - `packed_matmul` (MatmulPacking.cpp): BLIS's loop nest, with the
      config's cache level as its blocks (MC, NC, KC). For each block
      of NC columns and KC steps of the reduction, B's block is packed into
      contiguous panels of 2 vectors (transposing a transposed B on the
      way), then for each block of MC rows A's block is packed into k-major
      panels of 12 rows; each panel of A, kept in L1, meets every panel of
      B's block, streamed from L2, in a 12 x (2 vectors) accumulator tile.
      Rows left over by whole panels of A are multiplied unpacked with the
      same packed panels of B; columns and reduction steps left over are
      edge products on slices, which get their own configs;
    - other products: a transposed right-hand side is packed into [k, n]
      by a linalg.transpose (the micro-kernel loads rows of B as vectors);
      then columns (and a batch_matmul's rows) whose best divisor would
      leave most of a tile unused (1009), or columns of an odd number of
      registers (784), are split into a product over whole tiles and edge
      products over the rest, each zeroing its own part and getting its
      own config (MatmulTiling.cpp; that choice stays in the helper).
  }];
  let options = [
    Option<"vectorBits", "vector-bits", "unsigned", /*default=*/"0",
           "Vector register width in bits (0: the target's)">
  ];
  let dependentDialects = [
    "::fuse::FuseDialect", "::mlir::affine::AffineDialect",
    "::mlir::arith::ArithDialect",
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::linalg::LinalgDialect", "::mlir::math::MathDialect",
    "::mlir::scf::SCFDialect", "::mlir::tensor::TensorDialect",
    "::mlir::vector::VectorDialect"
  ];
}

def FuseTileConvolutions
    : Pass<"fuse-tile-convolutions", "::mlir::func::FuncOp"> {
  let summary = "Apply the filter_gradient and direct_conv configs";
  let description = [{
    First each filter gradient's contraction over (kh, kw, c, f | n, oh, ow)
    whose config is `filter_gradient` (ConvolutionTiling.cpp): loops over
    images, filter taps and 8 x (2 vectors) tiles of (c, f), each
    accumulating over the output rows a matmul of an X row (strided, read
    transposed) and a dY row: X and dY are read in their own layouts, one
    image at a time. With a single-channel X (a first layer's) the filter
    taps are the tile's rows instead. A bias gradient beside it (the sum of
    the same dY over images, rows and columns) is carried by the image loop
    and sums each image's dY while it is in cache. Then each conv2d whose
    config is `direct_conv`: loops over its register tiles (the config's: 8
    columns x 2 vectors of filters; narrower rows take several images per
    tile; a width that is not a whole number of 8-column tiles gets a second
    loop nest for the rest). Each tile zeroes its accumulator, runs the
    reduction with the tile in registers, and applies the convolution's
    element-wise consumer, if it is its only user, while the tile is in
    cache. A convolution whose filter does not fit in L2 is only split into
    whole tiles and the rest, and tiled by fuse-tile-registers with its
    filter rows outermost.
  }];
  let options = [
    Option<"vectorBits", "vector-bits", "unsigned", /*default=*/"0",
           "Vector register width in bits (0: the target's)">
  ];
  let dependentDialects = [
    "::fuse::FuseDialect", "::mlir::affine::AffineDialect",
    "::mlir::arith::ArithDialect",
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::linalg::LinalgDialect", "::mlir::math::MathDialect",
    "::mlir::scf::SCFDialect", "::mlir::tensor::TensorDialect",
    "::mlir::vector::VectorDialect"
  ];
}

def FuseImageLoopFusion
    : Pass<"fuse-image-loop-fusion", "::mlir::func::FuncOp"> {
  let summary = "Fuse the loops over a batch's images that pass images on";
  let description = [{
    The image loops that fuse-winograd-convolution and
    fuse-tile-convolutions build (marked `fuse.image_loop`; ImageLoopFusion.cpp):
    one that reads another's result only image by image, at its own image,
    runs in the other's iterations, on the image just computed, and so does
    a linalg op that computes each image of its output from the same image
    of its operands (a pool, an element-wise op); a result nothing else
    reads then goes to a buffer of one image and is not stored for the
    batch. An element-wise op that reads at most half the bytes it writes
    and that only image loops read, each at its own image (the max-pool
    gradient), is computed anew in each of those loops on its image, and
    its batch is never stored. Keeps the marks for
    fuse-distribute-image-loops.
  }];
  let dependentDialects = [
    "::fuse::FuseDialect", "::mlir::affine::AffineDialect",
    "::mlir::arith::ArithDialect",
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::linalg::LinalgDialect", "::mlir::math::MathDialect",
    "::mlir::scf::SCFDialect", "::mlir::tensor::TensorDialect",
    "::mlir::vector::VectorDialect"
  ];
}

def FuseSliceStridedInputs
    : Pass<"fuse-slice-strided-inputs", "::mlir::func::FuncOp"> {
  let summary = "Read inputs indexed by strided maps through strided slices";
  let description = [{
    Each input of a static `linalg.generic` on tensors read through a map
    of strided loop indices (`d * s + k`, a pool's window offsets in
    `fuse.max_pool2d_indices`) is read through a strided `tensor.extract_slice`
    instead, by the bare indices: the vectorizer takes only such maps.
  }];
  let dependentDialects = [
    "::fuse::FuseDialect", "::mlir::affine::AffineDialect",
    "::mlir::arith::ArithDialect",
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::linalg::LinalgDialect", "::mlir::math::MathDialect",
    "::mlir::scf::SCFDialect", "::mlir::tensor::TensorDialect",
    "::mlir::vector::VectorDialect"
  ];
}

def FuseTileMatmuls : Pass<"fuse-tile-matmuls", "::mlir::func::FuncOp"> {
  let summary = "Register tiles of matmuls, with their fill and consumer";
  let description = [{
    Tiles each static matmul and batch_matmul on tensors (not a
    `register_tile`) by its config's register tiles (MatmulTiling.cpp).
    When the output is a fill, the fill is fused into the tiles: each
    starts from zeros in registers, with no pass over the output before the
    product. When the product's only reader is an element-wise op (a bias
    add, the optimizer's update of the weight whose gradient it is), that
    op is fused too: each tile is finished while in registers and L1, one
    loop nest per band of rows, and the product never reaches memory.
    Without a consumer, a matmul of two bands becomes one product per band,
    and each tile is tiled along the reduction here (with one,
    fuse-tile-registers does it): one vector.contract per step after
    vectorization.
  }];
  let options = [
    Option<"vectorBits", "vector-bits", "unsigned", /*default=*/"0",
           "Vector register width in bits (0: the target's)">
  ];
  let dependentDialects = [
    "::fuse::FuseDialect", "::mlir::affine::AffineDialect",
    "::mlir::arith::ArithDialect",
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::linalg::LinalgDialect", "::mlir::math::MathDialect",
    "::mlir::scf::SCFDialect", "::mlir::tensor::TensorDialect",
    "::mlir::vector::VectorDialect"
  ];
}

def FuseTileRegisters : Pass<"fuse-tile-registers", "::mlir::func::FuncOp"> {
  let summary = "Tile linalg ops by their config's register level";
  let description = [{
    Tiles every static linalg op on tensors with loops that is not a
    `register_tile` with `scf.for` loops of its config's register tile (a
    matmul of two bands, which only a zero-size dim keeps from banding: its
    vector level), in its config's `interchange` order. Each tile carries
    the config, whose vector level sizes the masks of a partial tile. An
    element-wise `linalg.generic` whose innermost loop its tile does not
    divide is first split at the last whole tile (`linalg::splitOp`): the
    first part's tiles are static and unmasked, the rest is one static
    tile, instead of every tile being masked.
  }];
  let options = [
    Option<"vectorBits", "vector-bits", "unsigned", /*default=*/"0",
           "Vector register width in bits (0: the target's)">
  ];
  let dependentDialects = [
    "::fuse::FuseDialect", "::mlir::affine::AffineDialect",
    "::mlir::arith::ArithDialect",
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::linalg::LinalgDialect", "::mlir::math::MathDialect",
    "::mlir::scf::SCFDialect", "::mlir::tensor::TensorDialect",
    "::mlir::vector::VectorDialect"
  ];
}

def FuseVectorizeTiles
    : Pass<"fuse-vectorize-tiles", "::mlir::func::FuncOp"> {
  let summary = "Vectorize every tile and fold its slices and masks";
  let description = [{
    Decomposes the size-1 windows of convolution and pool tiles into 1-D
    ops and folds the tiles' static sizes; vectorizes every linalg op on
    tensors, exactly when its shape is static, with masks of its config's
    vector level when it is a partial tile (contractions become
    vector.contract, which lowers to FMAs; ops on i1 stay scalar: LLVM packs
    vectors of i1 into bits in memory); removes the configs; then folds
    tensor slices into the vector transfers (tiles of [1, ..., 1, n] become
    1-D vectors) and masks into the masked transfers.
  }];
  let dependentDialects = [
    "::fuse::FuseDialect", "::mlir::affine::AffineDialect",
    "::mlir::arith::ArithDialect",
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::linalg::LinalgDialect", "::mlir::math::MathDialect",
    "::mlir::scf::SCFDialect", "::mlir::tensor::TensorDialect",
    "::mlir::vector::VectorDialect"
  ];
}

def FuseLowerVectors : Pass<"fuse-lower-vectors", "::mlir::func::FuncOp"> {
  let summary = "Lower vector ops on buffers to loads, stores and FMAs";
  let description = [{
    Runs after bufferization: hoists loop-invariant vector transfers (the
    accumulator tile of a matmul stays in registers across the reduction
    loop), unrolls by 4 the innermost loops around a vector.contract (the
    loop's own increment, compare and branch would otherwise compete with
    the micro-kernel's loads and FMAs for the front end), lowers vector.contract to outer products (FMAs),
    multi-dimensional and permuted transfers to 1-D loads and stores, masks,
    multi-reductions, broadcasts and transposes, leaving what
    `convert-vector-to-llvm` handles.

    When the module's target pairs bf16 products (`avx512bf16`, and a CPU
    whose scheduling model has vdpbf16ps outrun FMAs), a contraction of `bf16`
    operands into `f32` accumulators whose register tile has an even
    reduction size and 16-lane rows becomes `vdpbf16ps` instead
    (`llvm.x86.avx512bf16.dpbf16ps.512`): each pair of reduction steps one
    instruction per row, the right-hand side's two rows interleaved into the
    bf16 pairs it multiplies and the left-hand side's pair broadcast. Without
    it, the operands widen to `f32` and the FMAs stay.
  }];
  let dependentDialects = [
    "::mlir::memref::MemRefDialect", "::mlir::scf::SCFDialect",
    "::mlir::vector::VectorDialect", "::mlir::LLVM::LLVMDialect"
  ];
}

def FuseDistinctResults
    : Pass<"fuse-distinct-results", "::mlir::func::FuncOp"> {
  let summary = "Make every function result a distinct, computed tensor";
  let description = [{
    Each result of a compiled function is written straight into its own
    caller-owned out-parameter (`buffer-results-to-out-params` with hoisted
    allocations), which needs every result to be computed into a buffer of
    its own. A value returned twice (common after CSE), a function argument,
    a constant or a view (reshape, slice) is copied into a new tensor with
    `bufferization.materialize_in_destination` (a memcpy). It runs after
    vectorization, whose folds would remove a copy made earlier.

    Arguments are the caller's and read-only (`bufferization.writable =
    false`), except those a result is tied to with `fuse.in_place`, which
    bufferization may update in place.

    Likewise a value an `scf.for` carries (the K-step function's parameters
    and optimizer states) is materialized in its iteration argument at the
    yield, so it stays in one buffer across iterations however the step
    computed it (the unfused optimizer writes new tensors), unless it is
    computed into that argument already (through destination-passing ops'
    `outs` and loop inits).
  }];
  let dependentDialects = [
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

def FuseInPlaceResults : Pass<"fuse-in-place-results", "::mlir::ModuleOp"> {
  let summary = "Drop results that bufferization placed in their argument";
  let description = [{
    Runs after bufferization. A result marked `fuse.in_place = N` is
    removed from the signature: the caller finds it in argument N, whose
    buffer bufferization may write (fuse-distinct-results marks it
    writable). When the value was computed in another buffer (say, because
    the argument is still read after its update), it is copied into the
    argument and a warning names the argument.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def FuseWorkspace : Pass<"fuse-workspace", "::mlir::func::FuncOp"> {
  let summary = "Take intermediate buffers from the caller, sharing bytes "
                "across disjoint lifetimes; mark pointers noalias";
  let description = [{
    Runs after buffer deallocation and fixes the calling convention's last
    part. Every statically shaped `memref.alloc` freed by a `memref.dealloc`
    in its own block gets its bytes from a new trailing argument, a slot
    (the deallocs go), and the function gets `fuse.workspace = array<i64:
    bytes...>`, the sizes of those arguments rounded up to 64. A caller that
    keeps one workspace per compiled function, carved into these disjoint
    slots, calls it without any heap allocation. Every other memref
    argument is marked `llvm.noalias`.

    Buffers whose lifetimes are disjoint share bytes (`reuse`, on by
    default), in slots: lifetimes are intervals in program order from a
    buffer's first use to its last, a use inside a loop that does not hold
    the allocation covering that whole loop (K-step, parallel and tile
    loops alike); the largest buffers are placed first, each in the
    smallest slot whose buffers all live at other times. Every buffer
    stays an argument of its own type. A buffer alone in its slot is
    `llvm.noalias`; the buffers of a shared slot are not (LLVM's noalias
    holds for the whole call) and carry `fuse.workspace_slot = N`; their
    sizes are 0 but the last's, the slot's, so that the caller, carving
    the arguments in order, gives them all the slot's address. Two buffers
    live at the same time never share a slot. A buffer whose address
    escapes (a call, `extract_aligned_pointer_as_index`) shares none.
    Other allocations are left alone.
  }];
  let options = [
    Option<"reuse", "reuse", "bool", /*default=*/"true",
           "Let buffers with disjoint lifetimes share a slot (false: one "
           "slot per buffer)">,
  ];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def FuseBarePointerArguments
    : Pass<"fuse-bare-pointer-arguments", "::mlir::func::FuncOp"> {
  let summary = "Make every memref argument passable as a bare pointer";
  let description = [{
    Compiled functions take bare pointers, which the LLVM lowering only
    allows for memrefs with static shapes and strides. This pass rewrites
    the arguments it cannot take:

    - a dynamic memref (`memref<?x64x784xf32>`, the stacked batches of a
      K-step function) becomes `memref<f32>` (its base pointer) plus one
      trailing `index` argument per dynamic dim, and is rebuilt at the
      entry with `memref.reinterpret_cast`. The function gets
      `fuse.dynamic_sizes = array<i64: arg, dim, ...>`, which says which
      argument's dim each size argument carries, in order;
    - a zero-sized dim after the first (`memref<4x0xf32>`, which has no
      static strides) becomes `memref<0xT>`, expanded back at the entry. It
      holds no data either way.

    The step-function argument attributes (`fuse.per_step`,
    `fuse.step_counter`, `fuse.stacked`) go: the signature is final.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def FuseApproximateMath : Pass<"fuse-approximate-math"> {
  let summary = "Replace f32 transcendental math by polynomial approximations";
  let description = [{
    Rewrites f32 `math` ops (exp, log, tanh, erf, ...) into polynomial
    approximations made of plain arithmetic, scalar or vector, so that the
    code vectorizes instead of calling libm element by element. f64 ops are
    left to libm. On targets without AVX512_BF16 (`fuse.target`, else the
    host), also rewrites `arith.truncf` to bf16 and `arith.extf` from it
    into integer arithmetic on the bits (upstream's bf16 expansion: round
    to nearest even), which vectorizes, instead of LLVM's call of
    `__truncsfbf2` per element.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::math::MathDialect",
    "::mlir::vector::VectorDialect"
  ];
}

def FuseDistributeImageLoops
    : Pass<"fuse-distribute-image-loops", "::mlir::func::FuncOp"> {
  let summary = "Share the image loops' images among the threads";
  let description = [{
    Rewrites each loop marked `fuse.image_loop` (after
    fuse-image-loop-fusion: a Winograd convolution with the ReLU, pool and
    dropout fused into it, say) into an `scf.forall` over blocks of images,
    each block a loop over its images with the loop's body as it was. Every
    tensor the loop carries must be a batch-sized result whose image n
    iteration n inserts (the threads share it, each inserting its block), a
    scratch buffer created empty (or filled) before the loop whose result
    is unused (each block gets its own), or a tensor every iteration yields
    unchanged; a loop that carries anything else across images (a sum over
    them) stays as it is. The block is the strategy's
    (`chooseImageLoopBlock`, from the work of an iteration's linalg ops):
    the fewest images with enough work to pay for a fork. Images do not
    depend on each other, so results are bitwise the same for any thread
    count. Removes the marks.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

def FuseDistribute : Pass<"fuse-distribute", "::mlir::func::FuncOp"> {
  let summary = "Split linalg ops into the tiles the threads share";
  let description = [{
    Tiles every linalg op whose `#fuse.lowering_config` has a nonzero
    `distribution` level by those sizes, as an `scf.forall`: after
    bufferization it becomes an `scf.parallel` and then an OpenMP
    worksharing loop, whose iterations the threads of a call share
    (EngineOptions::threads, `fusec --threads`). The strategy distributes
    only parallel loops, so each tile, reductions included, is computed
    whole by one thread, and the tiles are fixed by the shapes: results are
    bitwise the same for any thread count. The tiles keep the other levels
    of the config (their distribution set to zeros) for the register tiling
    and vectorization that follow.
  }];
  let dependentDialects = ["::mlir::scf::SCFDialect"];
}

def FuseParallelLoopsToOpenMP
    : Pass<"fuse-parallel-loops-to-openmp", "::mlir::ModuleOp"> {
  let summary = "Run the threads' loops in OpenMP parallel regions, without "
                "allocating";
  let description = [{
    Rewrites each outermost `scf.parallel` (after bufferization, from
    `fuse-distribute`'s `scf.forall`; no reductions) as an `omp.parallel`
    region forked only when `omp_get_max_threads()` is above one (its `if`),
    in which each thread runs one contiguous block of the linearized
    iterations (from `omp_get_thread_num()` and `omp_get_num_threads()`);
    with one thread, the compile driver calls the region's outlined body
    directly (`fuse::translateToLLVMIR`) and the body takes all of the
    iterations without calling the runtime. The loops' code exists once.
    The iterations are independent, so the bits do not depend on which
    thread runs which. Stack buffers at the top of the body (fuse-workspace
    puts each iteration's there) are taken once per thread, before its
    loop.

    Adjacent loops of one block that touch disjoint buffers, with only
    operations free of memory effects between them, share one region (the
    chunks of every parameter's optimizer update), with no barrier between
    them. Loops whose bodies are the same code (the same operations,
    attributes, types and constants: the updates of parameters of one
    shape) form a class whose iterations are laid end to end, and each
    thread runs one contiguous block of each class: whole tensors, in long
    runs of memory, and only its own loops' code. A loop unlike the others
    is a class of its own. Class j's blocks start at thread j (mod the
    count), so that the shorter last blocks are not all one thread's. Buffers are told apart by the memref
    each access views: distinct function arguments never overlap
    (fuse-workspace's contract), nor do distinct allocations; a loop with
    an access traced to anything else (a call, a loaded memref) keeps its
    own region, as do loops whose stack buffers would exceed 256 KiB per
    thread together.

    Upstream's `convert-scf-to-openmp` is not used: its `omp.wsloop` calls
    `__kmpc_for_static_init`, which mallocs on every region, as does the
    fork of a serialized (one-thread) region, and a training step allocates
    nothing.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::func::FuncDialect",
    "::mlir::omp::OpenMPDialect", "::mlir::scf::SCFDialect"
  ];
}

def FuseParallelFPMode : Pass<"fuse-parallel-fp-mode", "::mlir::ModuleOp"> {
  let summary = "Run the threads of each parallel region in the caller's "
                "floating-point mode";
  let description = [{
    The engine runs compiled code with denormals flushed to zero (MXCSR's
    FTZ and DAZ bits, set on the calling thread only), and a caller may
    choose its own rounding mode. The runtime's worker threads keep their
    own mode, so without this pass a tile computed on a worker could round
    differently from the same tile computed on the caller, and results
    would depend on the thread count. On x86 targets (the module's
    `fuse.target` triple, else the host's), each `omp.parallel` reads the
    caller's MXCSR before the region; each thread of the region saves its
    own, loads the caller's, and restores its own at the end of the region.
    Elsewhere the pass does nothing.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

#endif // FUSE_CODEGEN_PASSES_TD
