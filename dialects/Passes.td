// Passes over the tgc dialect and its conversions.
#ifndef TGC_PASSES_TD
#define TGC_PASSES_TD

include "mlir/Pass/PassBase.td"

def FunctionalizePass : Pass<"tgc-functionalize", "::mlir::ModuleOp"> {
  let summary = "Turn views and in-place ops into pure value-level ops";
  let description = [{
    Before: functions over `!tgc.tensor` (references to storage) with in-place ops and
    views. After: functions over `!tgc.vtensor` whose ops are pure; every graph input that
    was written gets one write-back: the function returns its final value as an extra
    result tagged `tgc.kind = "buffer_mutation"` / `"user_input_mutation"` (with
    `tgc.target` naming the input). A write through a view is a write to its base: the
    view is scattered back with its `buildScatter`, and later reads of other views of the
    same base are replayed on the new base value.
  }];
  let dependentDialects = ["::tgc::TgcDialect"];
}

def MaterializeRngPass : Pass<"tgc-materialize-rng", "::mlir::ModuleOp"> {
  let summary = "Give functions with random ops the instance's RNG state";
  let description = [{
    Before: value-level functions with random dropout (`tgc.dropout` / `tgc.native_dropout`
    in training mode with p > 0). After: such a function takes the buffer argument
    `tgc.rng_state` (i64[2]: seed, offset; `tgc.kind = "buffer"`, initial value
    `tgc.global @"tgc.rng_state"` = [0, 0]) and returns its new value (offset advanced by
    the number of random numbers drawn) as a `buffer_mutation` result. Each dropout
    becomes `input * mask * 1/(1-p)` with `mask = tgc.rand_bernoulli(state, offset) {p = 1-p}`,
    each random op drawing from its own offset range, so every call of an instance draws
    new numbers and `set_state` of `tgc.rng_state` replays them.
  }];
  let dependentDialects = ["::tgc::TgcDialect"];
}

def DecomposePass : Pass<"tgc-decompose"> {
  let summary = "Rewrite compound ATen ops into simpler tgc ops";
  let description = [{
    linear -> mm/matmul + add, addmm -> mm + add, matmul -> bmm/mm with views,
    layer_norm / batch_norm / softmax / gelu -> elementwise ops and reductions, so the
    lowering sees a small set of primitive ops. Runs on value-level functions.
  }];
  let options = [
    Option<"keepAttention", "keep-attention", "bool", "false",
           "keep the scaled_dot_product_attention ops the lowering takes as fused kernels "
           "(their backward is tgc.scaled_dot_product_attention_backward, fused too)">,
    Option<"onePassStatistics", "one-pass-statistics", "bool", "false",
           "batch and layer norm statistics of f32 tensors in one pass, as f64 sums of x "
           "and x^2 (inference; training differentiates the two-pass form)">
  ];
  let dependentDialects = ["::tgc::TgcDialect"];
}

def FuseAttentionPass : Pass<"tgc-fuse-attention"> {
  let summary = "Recognize attention written out (softmax(q @ k^T * s + mask) @ v) as one "
                "scaled_dot_product_attention";
  let description = [{
    The attention models write by hand (nanoGPT's, transformers' eager attention):
    `matmul(softmax(masked(matmul(q, transpose(k, -2, -1)) * s), -1), v)`, where the
    scale is a constant multiplier or divisor (or absent), the masking a
    `masked_fill(cond, -inf)` (a boolean SDPA mask `!cond`) or the addition of a
    floating mask, and between the softmax and the second matmul only a conversion to
    the same dtype or a dropout that drops nothing. Each intermediate value has no
    other user. The match becomes one `tgc.scaled_dot_product_attention` with an
    explicit scale, which the lowering takes as a fused kernel in inference and in
    training (Inductor's `fuse_attention` patterns do the same). f32 and f64 only.
  }];
  let dependentDialects = ["::tgc::TgcDialect"];
}

def AutodiffPass : Pass<"tgc-autodiff", "::mlir::ModuleOp"> {
  let summary = "Build the joint forward+backward function @joint from @forward";
  let description = [{
    Reverse-mode differentiation of a value-level, decomposed `@forward`: arguments
    whose type requires grad (parameters, user inputs) are differentiated; every user
    output that depends on them gets a tangent argument (`tgc.kind = "tangent"`,
    `tgc.output = N`), and each such argument a gradient result (`tgc.kind =
    "gradient"`, `tgc.target = <name>`). Ops contribute through
    DifferentiableOpInterface; the backward ops follow the forward ops in the same
    block. The function is renamed `@joint` (docs/training.md).
  }];
  let dependentDialects = ["::tgc::TgcDialect"];
}

def InlineAutogradFunctionsPass : Pass<"tgc-inline-autograd-functions", "::mlir::ModuleOp"> {
  let summary = "Replace each tgc.autograd_function by its forward template's body";
  let description = [{
    Every `tgc.autograd_function` (in any function, templates included) becomes the
    body of its `@forward_fn`, instantiated on its operands (types re-inferred); the
    template functions no other op refers to are then erased. The pipeline runs it at
    the end of `decompose` for inference and right after `tgc-autodiff` for training
    (the backward has been instantiated from `@backward_fn` by then).
  }];
  let dependentDialects = ["::tgc::TgcDialect"];
}

def InlineSavedHooksPass : Pass<"tgc-inline-saved-hooks", "::mlir::ModuleOp"> {
  let summary = "Apply saved-tensor pack/unpack hooks to the partitioned forward and backward";
  let description = [{
    Runs after tgc-partition. For the module's `tgc.saved_tensors_hooks` (or the
    built-in pair of `pack-dtype`: cast f32 activations to bf16 / fp8 (e4m3fn) and back),
    instantiates `@pack` at the end of `@forward` on each saved value it applies to and
    saves its result instead, and instantiates `@unpack` at the start of `@backward` on
    the corresponding argument; `tgc.saved_bytes` is updated to the packed sizes. The
    hook op and functions are removed.
  }];
  let options = [
    Option<"packDtype", "pack-dtype", "std::string", /*default=*/"\"\"",
           "Built-in hooks: compress saved f32 activations to bf16 or fp8">,
  ];
  let dependentDialects = ["::tgc::TgcDialect"];
}

def ApproximateMathPass : Pass<"tgc-approximate-math"> {
  let summary = "f32 exp, tanh and erf as inline polynomials";
  let description = [{
    Rewrites the f32 `math` functions whose upstream polynomial approximations keep
    PyTorch's fp32 accuracy (a few ulp over the whole domain; exp flushes results below
    FLT_MIN to zero) into arithmetic, on scalars or vectors. Run after linalg has become loops and before `convert-math-to-libm`: a
    libm call in a loop body keeps LLVM from vectorizing the loop, inline arithmetic
    does not. f64 and the other functions keep their libm calls.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::math::MathDialect",
                           "::mlir::vector::VectorDialect"];
}

def LowerReductionsPass : Pass<"tgc-lower-reductions"> {
  let summary = "Reductions as loops that carry their accumulators in registers";
  let description = [{
    On memrefs (llvm phase), before the other linalg ops become loops: a
    `linalg.generic` whose loops are its parallel dimensions followed by its reduction
    dimensions (tgc-form-kernels orders reductions so when their innermost dimension
    is a reduction) becomes an `scf.parallel` over the parallel dimensions that loads
    each output element once, an `scf.for` nest over the reduction dimensions that
    carries it as an iteration argument, and a store. linalg's own lowering loads and
    stores the output in every iteration, which LLVM cannot keep in a register (the
    output may alias an input), so the loop is a chain of scalar adds through memory.
    When the innermost loop reduces, its inputs are read contiguously along it (or
    not at all), its body is arith and math ops, and each output is used once, by the
    op that combines it (`arith.addf`, `mulf`, `maximumf`, `minimumf`, `maxnumf`,
    `minnumf`, `addi`, `muli`, the integer min/max, `andi`, `ori`) with a value that
    does not depend on it, that loop is vector code: vectors of 4 registers' worth of
    lanes (`vector-bits` / the widest element's bits), then of one register, carrying
    accumulators that start at the combiner's identity, then scalars; the vector
    accumulators are combined by halves at the end. Other reductions keep scalar code,
    whose combining op gets the `reassoc` flag, so LLVM may vectorize it with partial
    results. The order of the partial results depends only on the generated code, not
    on the thread count: results stay bit-identical from run to run and across thread
    counts.
  }];
  let options = [
    Option<"vectorBits", "vector-bits", "unsigned", /*default=*/"512",
           "bits of a vector register; 0 leaves every reduction scalar">,
  ];
  let dependentDialects = ["::mlir::affine::AffineDialect", "::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect", "::mlir::scf::SCFDialect",
                           "::mlir::vector::VectorDialect"];
}

def VectorizeKernelsPass : Pass<"tgc-vectorize-kernels"> {
  let summary = "Elementwise kernels as vector-dialect code, one vector register per step";
  let description = [{
    On memrefs (llvm phase), before linalg becomes loops: a `linalg.generic` of a
    `tgc.kernel` function whose loops are all parallel, whose operands are f32, f64 or
    8- to 64-bit integers read and written contiguously along its innermost loop (or
    broadcast along it), and whose body is arith and math ops, becomes
      * an `scf.parallel` over the outer loops and over the innermost one in steps of
        `vector-bits` / (the widest element's bits) lanes, whose body is the op on a
        [1, ..., 1, lanes] tile vectorized by linalg's vectorizer (full vectors,
        unmasked), then reduced to 1-d vectors;
      * for the last `size mod lanes` elements of each row, the op on that slice, which
        becomes a scalar loop like any other linalg op.
    The outer `scf.parallel` is what tgc-parallelize-kernels runs on the threads.
    Vectorizing changes no result bit: each element is computed by the same ops.
  }];
  let options = [
    Option<"vectorBits", "vector-bits", "unsigned", /*default=*/"512",
           "bits of a vector register (512: AVX-512; 256 for AVX2, where LLVM splits the "
           "512-bit default into two registers)">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect", "::mlir::vector::VectorDialect"];
}

def ParallelizeKernelsPass : Pass<"tgc-parallelize-kernels", "::mlir::ModuleOp"> {
  let summary = "Run the outermost parallel loop of each kernel on the runtime's threads";
  let description = [{
    After linalg has become `scf.parallel` loops (memrefs, llvm phase): in each
    `tgc.kernel` function, a top-level `scf.parallel` with enough work (2^15 innermost
    iterations, the elements of a vector counting as iterations) is outlined. Its outer
    dimensions (enough for 64 iterations, never the innermost unless it is the only one)
    are linearized; the task function
    `void(ptr ctx, i64 begin, i64 end)` runs outer iterations [begin, end), each with
    the remaining dimensions as an inner loop, and loads the values the body uses from
    outside from a context record (LLVM-typed fields, bridged with
    `unrealized_conversion_cast`s that the conversion to LLVM folds away); constants
    are cloned into it. The loop becomes `tgc_rt_parallel_for(task, ctx, n)`. Every
    iteration of an `scf.parallel` is independent, so the result does not depend on how
    [0, n) is split.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::func::FuncDialect",
                           "::mlir::LLVM::LLVMDialect", "::mlir::scf::SCFDialect"];
}

def WidenAccumulatorsPass : Pass<"tgc-widen-accumulators"> {
  let summary = "Accumulate bf16 and f16 matrix products and convolutions in f32";
  let description = [{
    A `linalg` matmul, batch matmul or convolution whose output is bf16 or f16 sums its
    products in f32 and rounds once, as ATen's CPU kernels (oneDNN, its opmath) do: the
    op is rebuilt with an f32 accumulator (a fill of the same constant, or the old one
    widened) and its result truncated. Without it each partial sum would be rounded to
    8 (bf16) or 11 (f16) significant bits.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def ExpandFloat8Pass : Pass<"tgc-expand-float8"> {
  let summary = "Expand conversions to and from float8_e4m3fn into integer arithmetic";
  let description = [{
    `arith.truncf` to `f8E4M3FN` and `arith.extf` from it, on scalars (after linalg has
    become loops), as bit manipulation on i32 with c10::Float8_e4m3fn's rounding (to
    nearest even, NaN from 464 up): LLVM has neither instructions nor libcalls for them.
    `arith.truncf` from f64 to bf16 or f16 goes through f32 rounded to odd (correctly
    rounded; no `__truncdfbf2` at link time).
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::math::MathDialect"];
}

def ConvertTgcToLinalgPass : Pass<"convert-tgc-to-linalg", "::mlir::ModuleOp"> {
  let summary = "Lower value-level tgc ops to linalg/tensor/arith/math";
  let description = [{
    Converts `!tgc.vtensor` to builtin `tensor`, size symbols to `index` values computed
    from the entry function's arguments, and each op family to upstream ops:
    elementwise to `linalg.generic`, matmuls to `linalg.matmul`/`batch_matmul`,
    convolution to `linalg.conv_2d_nchw_fchw` on padded inputs, reductions to
    `linalg.reduce`/`linalg.generic`, views to `tensor` reshapes/slices/`linalg.transpose`.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect", "::mlir::tensor::TensorDialect",
                           "::mlir::arith::ArithDialect", "::mlir::math::MathDialect",
                           "::mlir::func::FuncDialect", "::mlir::bufferization::BufferizationDialect",
                           "::mlir::scf::SCFDialect"];
}

def DestinationPassingPass : Pass<"tgc-destination-passing", "::mlir::ModuleOp"> {
  let summary = "Make entry functions write their results into caller-provided buffers";
  let description = [{
    Before: `func.func @forward(%x: tensor<?x4xf32>) -> tensor<?x8xf32>`. After:
    `func.func @forward(%x: tensor<?x4xf32>, %out: memref<?x8xf32>)` ending in
    `bufferization.materialize_in_destination %r in restrict writable %out`, so that
    one-shot bufferization computes results in place in the caller's buffers (dynamic
    sizes included) and the model ABI passes inputs then outputs. Result attributes move
    to the new arguments.
  }];
  let dependentDialects = ["::mlir::bufferization::BufferizationDialect",
                           "::mlir::memref::MemRefDialect"];
}

def SeparateFillsPass : Pass<"tgc-separate-fills"> {
  let summary = "One linalg.fill per destination, so bufferization copies no fill";
  let description = [{
    On tensors, before one-shot bufferization: a `linalg.fill` of a `tensor.empty`
    that is the destination of several ops (the init of a destination-style op, an
    `scf.for` iteration argument's initial value) is cloned, with its empty, right
    before each of them but the first. CSE merges equal fills (the zero accumulators
    of a tiled kernel's GEMMs), and bufferization would give each later writer a copy
    of the filled buffer; a fill of its own writes once, and a zero fill right before
    a GEMM then becomes the GEMM's beta = 0 (convert-linalg-to-blas).
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect", "::mlir::tensor::TensorDialect"];
}

def ElideResultCopiesPass : Pass<"tgc-elide-result-copies", "::mlir::ModuleOp"> {
  let summary = "Compute results in their out-parameters instead of copying them there";
  let description = [{
    On bufferized functions that are not kernels (the entries), before
    tgc-plan-memory: a `memref.copy %t, %out` whose source is a `memref.alloc` of the
    entry's body and whose target is an argument used by nothing else (an
    out-parameter of tgc-destination-passing, which the runtime allocates apart from
    every other buffer: the `restrict` of its materialize_in_destination) is removed,
    and the allocation's uses take `%out` instead, so the kernels write the result
    where the caller reads it. It applies when the copy is the last use of the
    allocation and of every view of it, so no later read sees the result buffer in
    place of the temporary, when no other alias of it exists (one returned, yielded,
    or made by an op that returns a memref that is not a view of it, the rule
    tgc-plan-memory uses too), and when both have the same type. A temporary copied into
    several out-parameters is computed in the one it is copied into last.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def PlanMemoryPass : Pass<"tgc-plan-memory", "::mlir::ModuleOp"> {
  let summary = "Place the entries' temporaries in one arena, reusing memory by liveness";
  let description = [{
    On the bufferized entries named by `tgc.abi`, before buffer deallocation: each
    `memref.alloc` of a static shape whose aliases (views, casts, reshapes) are only
    read and written by ops in the entry becomes a `memref.view` into a new last
    argument of the entry, `memref<Nxi8>`, the arena that the runtime allocates once
    per model instance. A buffer is live from its allocation to the last op of the
    entry's body that uses it or an alias; buffers whose live ranges overlap get
    disjoint byte ranges, 64-byte aligned. Placement is greedy by size (largest first,
    each in the smallest gap that fits among the buffers it overlaps), which is
    deterministic. Allocations of dynamic size, or whose aliases escape (returned,
    yielded, or passed to an op that returns a memref it might alias), stay
    allocations. `tgc.abi`'s `memory` records, per entry, the arena's size, the
    buffers in it, their total size and the allocations left.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::memref::MemRefDialect"];
}

def GenerateGemmsPass : Pass<"tgc-generate-gemms", "::mlir::ModuleOp"> {
  let summary = "GEMMs as generated loops, the same bits on every host";
  let description = [{
    Instead of convert-linalg-to-blas (`tgc compile --gemm=generated`, the default of a
    portable `--cpu`; docs/kernels.md): contractions on buffers whose last loop is their
    one reduction and whose loop before it is the output's innermost dimension
    (`linalg.matmul`, `linalg.batch_matmul`, their transposed forms) become
    `linalg.generic`, each in a `tgc.kernel` function of its own when it is in an entry
    (kernels are what code generation optimizes). When every input runs along the
    reduction (`A[i, k] @ B[j, k]`) each output element is a dot product, which
    tgc-lower-reductions turns into vector code; otherwise the two loops are swapped, so
    the innermost loop updates a row of the output from a row of B. Either way the order
    of every sum is fixed by the code compiled for the named CPU, so it gives the same
    bits on every machine that runs it, which a library whose kernels the host picks
    (OpenBLAS, oneDNN) does not.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def ConvertLinalgToBlasPass : Pass<"convert-linalg-to-blas", "::mlir::ModuleOp"> {
  let summary = "Call the runtime's BLAS GEMM for f32/f64 matmuls on buffers";
  let description = [{
    After bufferization, `linalg.matmul` and `linalg.batch_matmul` on f32 or f64 memrefs
    whose rows are contiguous become calls to `tgc_rt_gemm_<t>` /
    `tgc_rt_gemm_batched_<t>` (docs/abi.md), which call oneDNN or OpenBLAS: C += A @ B
    with pointers, offsets and leading dimensions taken from the memrefs' strided
    metadata. A matmul right after a `linalg.fill` of zero into the same buffer takes
    the fill with it: the call computes C = A @ B (beta 0). Other matmuls (integers,
    non-unit inner strides) stay linalg ops.
  }];
  let dependentDialects = ["::mlir::func::FuncDialect", "::mlir::memref::MemRefDialect",
                           "::mlir::LLVM::LLVMDialect", "::mlir::arith::ArithDialect"];
}

def PlaceMutationsPass : Pass<"tgc-place-mutations", "::mlir::ModuleOp"> {
  let summary = "Decide in which pass (forward/backward) each mutation of @joint is written";
  let description = [{
    On `@joint` (docs/training.md): every result tagged `tgc.kind = "buffer_mutation"` /
    `"user_input_mutation"` gets `tgc.pass = "forward"`, or `"backward"` when its value
    depends on a tangent argument, and `tgc.version`: the writes of one target are
    numbered 1..n, forward writes first, and within a pass a write that reads another
    write's value after it. Two writes of one target in one pass that do not depend on
    each other leave the final value ambiguous: an error.
  }];
}

def PartitionPass : Pass<"tgc-partition", "::mlir::ModuleOp"> {
  let summary = "Split @joint into @forward and @backward with a min-cut saved list";
  let description = [{
    Before: `@joint(primals, tangents) -> (forward results, gradients)` with mutation
    results placed by `tgc-place-mutations`. After: `@forward(primals) -> (forward
    results, saved)` and `@backward(saved, tangents) -> (gradients, backward mutations)`
    (docs/training.md). The saved values are a minimum cut of the joint graph weighted
    by byte sizes (at the size symbols' hints): cheap ops are recomputed in backward,
    matmuls/convolutions (`NoRecompute`) and the values mutations write never are.
    The module gets `tgc.saved_count` and `tgc.saved_bytes`.
  }];
  let options = [
    Option<"activationBudget", "activation-budget", "int64_t", /*default=*/"0",
           "Bytes the saved values may take (0: no budget); over it, recompute more">
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def PrepareEntriesPass : Pass<"tgc-prepare-entries", "::mlir::ModuleOp"> {
  let summary = "Record the model's calling signature as `tgc.abi` and shape its entries for lowering";
  let description = [{
    The first pass of the lower phase, on value-level tgc after decomposition (after the
    partition for a trainable model). It finds the entry functions (the one public
    function, or public `@forward` and `@backward`), checks their `tgc.kind` / `tgc.name`
    / `tgc.target` / `tgc.output` attributes, and records what the artifact needs to
    describe model.so as the module attribute `tgc.abi` (keys in `tgc::abi`,
    docs/abi.md): the arguments with kinds, names, value tensor types and initial values
    of state, the results with their kinds and targets, the backward's saved values,
    tangents and gradients, the size symbols (moved from `tgc.symbols`) and the
    partition's saved totals (moved from `tgc.saved_count` / `tgc.saved_bytes`). Then the
    entries become what the runtime calls: `@forward` no longer returns the saved values
    that are parameters or constants returned as is (the backward reads them in place),
    and `@backward` gets one `!tgc.vtensor<[sK], i8>` argument per size symbol, which the
    runtime passes without data so that lowering can bind every symbol.
  }];
  let options = [
    Option<"modelName", "model-name", "std::string", /*default=*/"\"\"",
           "The model's C name; tgc-finalize-entries names the entries <name>_forward "
           "and <name>_backward (empty: they keep their names)">
  ];
}

def FinalizeEntriesPass : Pass<"tgc-finalize-entries", "::mlir::ModuleOp"> {
  let summary = "Strip what translation to LLVM IR cannot take and give the entries a C interface";
  let description = [{
    The first pass of the llvm phase, after bufferization. With the signature in
    `tgc.abi` (tgc-prepare-entries), what remains of it in the IR would only confuse
    translation: the `tgc.global` ops (their initial values are in `tgc.abi`) are erased
    and the entries' argument and result attributes dropped. Each entry is renamed
    `<name>_<entry>` (the name `tgc.abi` holds, unless empty; `tgc.abi` follows) and gets
    `llvm.emit_c_interface`, so that its `_mlir_ciface_` wrapper takes one memref
    descriptor pointer per argument, the runtime's calling convention. Kernels
    (`tgc.kernel`, tgc-form-kernels) get internal linkage and `no_inline`, so that each
    stays a function of its own through LLVM's optimizer and code generator.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def FormKernelsPass : Pass<"tgc-form-kernels", "::mlir::ModuleOp"> {
  let summary = "Fuse linalg ops into groups and outline each group as a kernel function";
  let description = [{
    The kernels phase, on linalg over builtin tensors (after convert-tgc-to-linalg).
    Named structured ops other than fills, contractions and convolutions are generalized
    and chains of elementwise `linalg.generic`s are fused into their consumers where the
    producer has no other use (reductions take their elementwise prologue). Each
    remaining structured op is the root of a fusion group: the group holds the root, the
    fills that initialize its outputs and the view ops (reshape, expand/collapse shape,
    extract_slice, cast) and constants its operands come through; it is outlined into a
    private function `@<function>_kernel<N>` marked `tgc.kernel`, called from where the
    group was. Output tensors (`tensor.empty`) stay with the caller, so kernels are in
    destination-passing style and every allocation is the caller's. Kernels hold no
    target-specific IR: the CPU and the CUDA target generate code per kernel.
  }];
  let dependentDialects = ["::mlir::func::FuncDialect", "::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect", "::mlir::arith::ArithDialect"];
}

def MapKernelsToGPUPass : Pass<"tgc-map-kernels-to-gpu", "::mlir::ModuleOp"> {
  let summary = "Run a bufferized model's memory work as GPU launches (CUDA target)";
  let description = [{
    After bufferization (docs/cuda.md). Host functions keep allocations, views,
    descriptor arithmetic, calls and the loops around launches; what reads or writes a
    buffer's contents runs on the device. `scf.forall` chunk loops become sequential
    loops; `memref.copy` becomes a copy `linalg.generic`; every structured op becomes
    parallel loops (reduction dimensions as sequential loops inside), and each outermost
    parallel loop a `gpu.launch` with one thread per iteration, numbered row-major
    (neighbouring threads take neighbouring innermost iterations), in blocks of
    `block-size` threads, guarded against the last block's excess threads. Parallel loops
    nested in a launch run sequentially in its threads. The scalar memory work left in
    host code (a 0-d kernel's loads and stores) becomes one-thread launches, taking the
    index arithmetic it needs; a value read from a buffer that the host uses (a branch
    on a tensor's value) is an error. Launches read constant tensors through their own
    `memref.get_global`, which `tgc-merge-gpu-modules` gives the device module.
  }];
  let options = [
    Option<"blockSize", "block-size", "int64_t", "256",
           "Threads per block of a launched loop nest (1..1024)">,
  ];
  let dependentDialects = ["::mlir::gpu::GPUDialect", "::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect", "::mlir::memref::MemRefDialect",
                           "::mlir::linalg::LinalgDialect"];
}

def MergeGPUModulesPass : Pass<"tgc-merge-gpu-modules", "::mlir::ModuleOp"> {
  let summary = "Merge the outlined GPU modules into one `gpu.module @tgc_kernels`";
  let description = [{
    After `gpu-kernel-outlining`, which makes a `gpu.module` per launch: their kernels
    move into one module (one binary to load, one ptxas run), each named after the module
    it came from, and the `gpu.launch_func` ops are renamed with them. A constant
    `memref.global` that a kernel reads is copied into the module.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
}

def DropGPUObjectPropertiesPass : Pass<"tgc-drop-gpu-object-properties", "::mlir::ModuleOp"> {
  let summary = "Drop the properties of the objects in `gpu.binary` ops";
  let description = [{
    After `gpu-module-to-binary`, which records in each object's properties how long
    LLVM and ptxas took: without them, the same input gives the same bytes.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
}

def LowerGPUToRuntimePass : Pass<"tgc-lower-gpu-to-runtime", "::mlir::ModuleOp"> {
  let summary = "The host side of GPU launches, read-backs and the binary as runtime calls";
  let description = [{
    After the gpu phase (docs/cuda.md). The fatbin of `gpu.binary` becomes the internal
    global `tgc_cuda_fatbin` (section `.nv_fatbin`, where cuobjdump finds it), and the
    kernels' names, in the order of their first launch, the NUL-separated
    `tgc_cuda_kernel_names`: Target hands both to `tgc_rt_create_for_cuda`. Each
    `gpu.launch_func` becomes `tgc_rt_cuda_launch(kernel, grid x/y/z, block x/y/z,
    shared bytes, params)`, where `params` points at one stack slot per kernel parameter
    as convert-gpu-to-nvvm lays the kernel's signature out (a memref's descriptor fields,
    an index as i64). Each `gpu.memcpy` of one element into a host stack buffer becomes
    `tgc_rt_cuda_read(dst, src, bytes)`. `tgc_cuda_flags` holds the image's flags
    (`allow-tf32`: TGC_CUDA_ALLOW_TF32).
  }];
  let options = [
    Option<"allowTf32", "allow-tf32", "bool", "false",
           "fp32 GEMMs may round their inputs to TF32 (cuBLAS's TF32 tensor-op math)">,
  ];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect", "::mlir::func::FuncDialect",
                           "::mlir::arith::ArithDialect", "::mlir::memref::MemRefDialect"];
}

def EmulateGPULaunchesPass : Pass<"tgc-emulate-gpu-launches", "::mlir::ModuleOp"> {
  let summary = "Run GPU launches as sequential host loops (checking the mapping on a CPU)";
  let description = [{
    Each `gpu.launch` becomes six nested `scf.for` loops over its blocks and threads
    whose body is the launch's; each `gpu.memcpy` a `memref.copy`. The kernels that
    `tgc-map-kernels-to-gpu` forms use no barriers or shared memory, so the program
    computes what the GPU would: `tgc compile --target=cuda --emulate-gpu` builds a CPU
    model.so from the CUDA mapping, which the e2e tests compare with PyTorch where no
    GPU is available (docs/cuda.md).
  }];
  let dependentDialects = ["::mlir::scf::SCFDialect", "::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect"];
}

def LowerDeallocationsOnHostPass : Pass<"tgc-lower-deallocations-on-host", "::mlir::ModuleOp"> {
  let summary = "bufferization-lower-deallocations, with its bookkeeping on the host stack";
  let description = [{
    CUDA's gpu phase (docs/cuda.md): upstream's lowering of `bufferization.dealloc`, then
    the buffers it allocated for its bookkeeping (arrays of pointers and ownership flags,
    static and small, written and read by host code) become `memref.alloca` and their
    deallocations go. In a CUDA call `memref.alloc` is device memory, which host code
    cannot write; the model's own buffers (allocated before the lowering) stay on the
    device.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect", "::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect", "::mlir::func::FuncDialect"];
}

#endif // TGC_PASSES_TD
