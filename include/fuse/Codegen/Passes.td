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
    body cloned once: linear in the chain. The work done is counted in pass
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

def FuseTileAndVectorize
    : Pass<"fuse-tile-and-vectorize", "::mlir::func::FuncOp"> {
  let summary = "Tile linalg ops for the host's vector width and vectorize";
  let description = [{
    The code-generation strategy for the CPU, in one place. Each linalg op on
    tensors is tiled with `scf.for` loops and its tile vectorized:

    - matmul whose right-hand side is transposed or larger than half of L2
      (MatmulPacking.cpp): BLIS's loop nest. For each block of NC columns
      and KC steps of the reduction, B's block is packed into contiguous
      panels of 2 vectors (transposing a transposed B on the way; B as
      stored is read row by row, each row's panels written in turn), then
      for each block of MC rows A's block is packed into k-major panels of 12
      rows. Each panel of A, kept in L1, then meets every panel of B's
      block, streamed from L2, in a 12 x (2 vectors) accumulator tile (24
      of the 32 zmm registers) that runs the KC steps. Rows left over by whole panels
      of A are multiplied unpacked with the same packed panels of B; columns
      and reduction steps left over are edge products on slices;
    - matmul of 1 to 3 rows against a transposed right-hand side, as a
      batch-1 backward pass computes dx = dy W^T (DotProductTiling.cpp):
      dot products of rows of A and rows of B, both read contiguously
      along k. Each tile of up to 16 rows of B keeps a register of partial
      sums per output, one FMA per register of k, then sums its lanes:
      packing B instead would cost as much as the product;
    - other matmuls and batch_matmul: up to 12 x (2 vectors) accumulator
      tiles that divide the shape (fewer rows take more columns, up to 24
      accumulators, as long as a step's row of B and broadcast of A still
      fit beside them in 27 registers), one vector.contract per reduction
      step, which later becomes FMAs on registers. A matmul whose rows have no divisor of 9
      to 12 (64, 784, 13) is tiled in two bands: 12-row tiles, then one
      band of the rows left. When the output is a fill, the fill is
      fused into the tiles: each starts from zeros in registers, with no
      pass over the output before the product. When the product's only
      reader is an element-wise op (a bias add, the optimizer's update of
      the weight whose gradient it is), that op is fused too
      (MatmulTiling.cpp): each tile is finished while in registers and L1,
      and the product never reaches memory. Columns (and a batch_matmul's
      rows) whose best divisor would leave most of a tile unused (1009),
      or columns of an odd number of registers (784: tiles one register
      wide), are split instead into a product over whole tiles and edge
      products over the rest, each zeroing its own part (their consumer is then not
      fused);
    - with `winograd=true` (off by default: its sums are rounded
      differently from direct ones, and are not exactly 0 where the exact
      sum is, which a ReLU's gradient at 0 tells apart), conv2d with a 3x3
      filter, unit strides and dilations, an even output and whole
      registers of channels and filters (WinogradConvolution.cpp):
      Winograd's F(4x4, 3x3) on the output's largest block whose sides 4
      divides, F(2x2, 3x3) on the strips of 2 left below and to its right.
      The filter is transformed once; per image, each
      (m+2)x(m+2) input tile is transformed with vector arithmetic into
      V[tiles, positions, c], one matmul per position (tiled as above)
      gives M[tiles, positions, f], and the output transform writes the
      image's m x m output tiles, which the element-wise consumer then
      finishes while they are in L2: 4x (F(4x4)) or 2.25x (F(2x2)) fewer
      multiply-adds than the direct form. Their filter gradients (even
      output gradients; F(4x4) when 4 divides them, else F(2x2), no
      blocks) are the transpose: per image, X's tiles become V
      and dY's m x m tiles D[tiles, positions, f], one matmul per position
      accumulates P[p] += V[:, p]^T D[:, p] over the images (with the bias
      gradient beside it in the same image loop), and dW = G^T P G.
      Images whose transformed tiles would not fit in L2 stay direct.
      A zero-padded input (an input gradient's) is padded image by image:
      one image's buffer, its border filled once, takes each image in its
      interior, instead of the whole batch being padded in memory.
      Without `winograd`, these are direct convolutions as below;
    - other conv2d (ConvolutionTiling.cpp): loops over output tiles of 8 columns
      x 2 vectors of filters (narrower rows take several images per tile;
      a width that is not a whole number of 8-column tiles gets a second
      loop nest for the rest). Each tile zeroes its accumulator, runs the
      reduction over filter rows, columns and channels with the tile in
      registers, and applies the convolution's element-wise consumer, if it
      is its only user (bias add and ReLU, a gradient's ReLU mask), while
      the tile is in cache. A convolution whose filter does not fit in L2
      keeps the one-pass tiling with its filter rows outermost;
    - a filter gradient's contraction over (kh, kw, c, f | n, oh, ow)
      (ConvolutionTiling.cpp): loops over images, filter taps and 8 x (2
      vectors) tiles of (c, f), each accumulating over the output rows a
      matmul of an X row (strided, read transposed) and a dY row: X and dY
      are read in their own layouts, one image at a time. With a
      single-channel X (a first layer's) the filter taps are the tile's
      rows instead: per image and output row, the taps' rows of X are
      copied into one [taps, width] tensor and one matmul with the dY row
      accumulates all of dW. A bias gradient beside it (the sum of the
      same dY over images, rows and columns) is carried by the image loop
      and sums each image's dY while it is in cache;
    - the loops over images built above (ImageLoopFusion.cpp): one that
      reads another's result only image by image, at its own image, runs
      in the other's iterations, on the image just computed, and so does
      a linalg op that computes each image of its output from the same
      image of its operands (a pool, an element-wise op); a result
      nothing else reads then goes to a buffer of one image and is not
      stored for the batch (the seed CNN's conv2 input gradient, ReLU mask
      applied, feeds conv1's filter and bias gradients this way, and its
      conv2 pre-activation its max pool and the pool's argmax). An
      element-wise op that reads at most half the bytes it writes and that
      only image loops read, each at its own image (the max-pool gradient,
      which both gradients of conv2 read), is computed anew in each of
      those loops on its image, and its batch is never stored;
    - inputs read through maps of strided loop indices (`d * s + k`, a
      pool's window offsets in `fuse.max_pool2d_indices`) become strided
      slices read by the bare indices, which the vectorizer takes;
    - pools: tiles of (8 output columns x 2 vectors of channels) whose
      size-1 window dims are decomposed to 1-D ops, then vectorized;
    - tensor.pad: a fill of the padded tensor, into whose interior the
      source's producer writes directly when only linalg ops read the
      source (else a vectorized copy writes it there);
    - everything else (element-wise, reductions, fills, transposes): vectors
      of up to 4 registers along the innermost loop.

    Partial tiles at the edges are vectorized with masks. `vector-bits` is
    the register width; 0 takes the module's `fuse.target` features (512
    with avx512f, 256 with avx or avx2, else 128), or the host CPU's when
    the module has none.
  }];
  let options = [
    Option<"vectorBits", "vector-bits", "unsigned", /*default=*/"0",
           "Vector register width in bits (0: the target's)">,
    Option<"winograd", "winograd", "bool", /*default=*/"false",
           "Compute the 3x3 convolutions (and filter gradients) that "
           "allow it with Winograd's F(4x4, 3x3) or F(2x2, 3x3)">
  ];
  let dependentDialects = [
    "::mlir::affine::AffineDialect", "::mlir::bufferization::BufferizationDialect",
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
  }];
  let dependentDialects = [
    "::mlir::memref::MemRefDialect", "::mlir::scf::SCFDialect",
    "::mlir::vector::VectorDialect"
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
  let summary = "Take intermediate buffers from the caller; mark pointers noalias";
  let description = [{
    Runs after buffer deallocation and fixes the calling convention's last
    part. Every statically shaped `memref.alloc` freed by a `memref.dealloc`
    in its own block becomes a new trailing argument (the deallocs go), and
    the function gets `fuse.workspace = array<i64: bytes...>`, the sizes of
    those arguments rounded up to 64. A caller that keeps one workspace per
    compiled function, carved into these disjoint buffers, calls it without
    any heap allocation. Every memref argument is marked `llvm.noalias`:
    the buffers a caller passes never overlap. (For that reason buffers do
    not share bytes even when their lifetimes are disjoint.) Other
    allocations are left alone.
  }];
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
    left to libm.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::math::MathDialect",
    "::mlir::vector::VectorDialect"
  ];
}

#endif // FUSE_CODEGEN_PASSES_TD
