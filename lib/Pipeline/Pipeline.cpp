// The compile pipeline: every phase, in order, from capture-level tgc to LLVM.
#include "tgc/Pipeline/Pipeline.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"
#include "tgc/Transforms/Passes.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace tgc;

static constexpr std::pair<Phase, llvm::StringLiteral> kPhaseNames[] = {
    {Phase::Capture, "capture"},
    {Phase::Functionalize, "functionalize"},
    {Phase::Decompose, "decompose"},
    {Phase::Autodiff, "autodiff"},
    {Phase::Partition, "partition"},
    {Phase::Lower, "lower"},
    {Phase::Kernels, "kernels"},
    {Phase::Bufferize, "bufferize"},
    {Phase::GPU, "gpu"},
    {Phase::LLVM, "llvm"},
};

std::optional<Phase> tgc::parsePhase(llvm::StringRef name) {
  for (auto [phase, phaseName] : kPhaseNames)
    if (phaseName == name)
      return phase;
  return std::nullopt;
}

llvm::StringRef tgc::stringifyPhase(Phase phase) {
  for (auto [p, phaseName] : kPhaseNames)
    if (p == phase)
      return phaseName;
  return "";
}

/// Views and in-place ops become pure value-level ops.
static void populateFunctionalize(OpPassManager &pm) {
  pm.addPass(createFunctionalizePass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

/// Random ops get the RNG state; compound ops (linear, matmul, norms, softmax, mean)
/// become primitive tgc ops.
static void populateDecompose(OpPassManager &pm, bool train) {
  pm.addPass(createMaterializeRngPass());
  // Attention written out by hand becomes one fused attention, before its matmuls and
  // softmax are decomposed.
  pm.addPass(createFuseAttentionPass());
  DecomposePassOptions decompose;
  decompose.keepAttention = true;
  decompose.onePassStatistics = !train;
  pm.addPass(createDecomposePass(decompose));
  // Inference: custom autograd.Functions are their forward (training: after autodiff).
  if (!train)
    pm.addPass(createInlineAutogradFunctionsPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

/// The joint forward+backward function `@joint` from `@forward` (docs/training.md).
static void populateAutodiff(OpPassManager &pm) {
  pm.addPass(createAutodiffPass());
  pm.addPass(createInlineAutogradFunctionsPass());
  // The backward's compound ops (none today) and dead forward-only values.
  DecomposePassOptions decompose;
  decompose.keepAttention = true;
  pm.addPass(createDecomposePass(decompose));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

/// `@joint` becomes `@forward` + `@backward` with an explicit saved list.
static void populatePartition(OpPassManager &pm, const PipelineOptions &options) {
  pm.addPass(createPlaceMutationsPass());
  PartitionPassOptions partition;
  partition.activationBudget = options.activationBudget;
  pm.addPass(createPartitionPass(partition));
  InlineSavedHooksPassOptions hooks;
  hooks.packDtype = options.packSaved;
  pm.addPass(createInlineSavedHooksPass(hooks));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

/// The signature is recorded (`tgc.abi`) and the entries shaped for the runtime; tgc on
/// value tensors becomes linalg/tensor/arith/math on builtin tensors.
static void populateLower(OpPassManager &pm, const PipelineOptions &options) {
  PrepareEntriesPassOptions entries;
  entries.modelName = options.modelName;
  pm.addPass(createPrepareEntriesPass(entries));
  pm.addPass(createConvertTgcToLinalgPass());
  // bf16/f16 products and convolutions sum in f32, as ATen's kernels do.
  pm.addPass(createWidenAccumulatorsPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

/// Elementwise chains fuse and each fusion group becomes a kernel function
/// (docs/kernels.md).
static void populateKernels(OpPassManager &pm) {
  pm.addPass(createFormKernelsPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

/// Tensors become memrefs; results become caller-provided out-parameters (the
/// destination-passing entry the runtime calls); temporaries are freed.
static void populateBufferize(OpPassManager &pm, const PipelineOptions &options) {
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion = bufferization::LayoutMapOption::IdentityLayoutMap;
  // A loop may carry a value that is not computed in place of its iteration argument
  // (cumsum's running sum, through a kernel call): it gets a buffer of its own.
  bufferize.allowReturnAllocsFromLoops = true;
  pm.addPass(createSeparateFillsPass());
  pm.addPass(createDestinationPassingPass());
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  // Kernels write their outputs into their arguments: the calls return nothing.
  pm.addPass(bufferization::createDropEquivalentBufferResultsPass());
  pm.addPass(createCanonicalizerPass());
  // Results are computed in the caller's buffers, not copied there at the end.
  pm.addPass(createElideResultCopiesPass());
  // Static temporaries become views of the entry's arena; the rest are freed.
  pm.addPass(createPlanMemoryPass());
  if (options.target == Target::CPU) {
    bufferization::BufferDeallocationPipelineOptions dealloc;
    bufferization::buildBufferDeallocationPipeline(pm, dealloc);
    return;
  }
  // CUDA: upstream's deallocation pipeline, except that `bufferization.dealloc` ops are
  // lowered in the gpu phase, after the device work is in launches: the host's own
  // bookkeeping of what to free is not device work.
  memref::ExpandReallocPassOptions realloc;
  realloc.emitDeallocs = false;
  pm.addPass(memref::createExpandReallocPass(realloc));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(bufferization::createOwnershipBasedBufferDeallocationPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(bufferization::createBufferDeallocationSimplificationPass());
}

/// CUDA: the device work becomes kernels of one `gpu.module`, compiled to a fatbin (a
/// cubin for the chip and its PTX, for newer chips); host code launches them.
static void populateGPU(OpPassManager &pm, const PipelineOptions &options) {
  // f32/f64 GEMMs call the runtime's helpers, which run cuBLAS in a CUDA call (on the CPU
  // library when emulating); the rest becomes launches.
  if (options.libraryGemm)
    pm.addPass(createConvertLinalgToBlasPass());
  // Reductions carry their accumulators in registers (scalars: a thread's loop), not
  // through the output in memory at every step.
  LowerReductionsPassOptions reductions;
  reductions.vectorBits = 0;
  pm.addPass(createLowerReductionsPass(reductions));
  pm.addPass(createMapKernelsToGPUPass());
  // The launches as host loops (--emulate-gpu), or as kernels of one GPU module.
  if (options.emulateGpu) {
    pm.addPass(createEmulateGPULaunchesPass());
  } else {
    pm.addPass(createGpuKernelOutliningPass());
    pm.addPass(createMergeGPUModulesPass());
  }
  pm.addPass(createLowerDeallocationsOnHostPass());
  pm.addPass(createCSEPass());
  pm.addPass(createCanonicalizerPass());
  if (options.emulateGpu)
    return;
  GpuNVVMAttachTargetOptions attach;
  attach.chip = options.gpuChip;
  attach.optLevel = 3;
  pm.addPass(createGpuNVVMAttachTarget(attach));
  OpPassManager &device = pm.nest<gpu::GPUModuleOp>();
  device.addPass(memref::createExpandStridedMetadataPass());
  device.addPass(createLowerAffinePass());
  device.addPass(createSCFToControlFlowPass());
  // Math of f16/bf16 values in f32 (libdevice has f32 and f64 functions), bf16
  // conversions as integer arithmetic.
  device.addPass(math::createMathExtendToSupportedTypes());
  arith::ArithExpandOpsPassOptions expandArith;
  expandArith.includeBf16 = true;
  device.addPass(arith::createArithExpandOpsPass(expandArith));
  device.addPass(createConvertGpuOpsToNVVMOps());
  // Math the NVVM conversion leaves (math.trunc, math.absi) as LLVM intrinsics, which
  // the NVPTX backend lowers.
  device.addPass(createConvertMathToLLVMPass());
  device.addPass(createReconcileUnrealizedCastsPass());
  device.addPass(createCanonicalizerPass());
  GpuModuleToBinaryPassOptions binary;
  binary.toolkitPath = options.cudaToolkit;
  binary.compilationTarget = "fatbin";
  pm.addPass(createGpuModuleToBinaryPass(binary));
  pm.addPass(createDropGPUObjectPropertiesPass());
  pm.addPass(createCanonicalizerPass());
}

/// The entries get their C interface; GEMMs to OpenBLAS/oneDNN (or generated loops), the
/// rest to loops, then the LLVM dialect: what Target translates into model.so.
static void populateLLVM(OpPassManager &pm, const PipelineOptions &options) {
  // CUDA: launches, read-backs and the kernels' binary as runtime calls and data; the
  // CPU's passes below then find no structured ops left and lower the host code.
  if (options.target == Target::CUDA && !options.emulateGpu) {
    LowerGPUToRuntimePassOptions runtime;
    runtime.allowTf32 = options.allowTf32;
    pm.addPass(createLowerGPUToRuntimePass(runtime));
  }
  pm.addPass(createFinalizeEntriesPass());
  // Tiled kernels (an scf.forall over tiles) run their tiles on threads.
  pm.addPass(createForallToParallelLoopPass());
  if (options.libraryGemm)
    pm.addPass(createConvertLinalgToBlasPass());
  else
    pm.addPass(createGenerateGemmsPass());
  // Reductions along the innermost loop as vector code, the others as loops that
  // carry their accumulators.
  LowerReductionsPassOptions reductions;
  reductions.vectorBits = options.vectorBits;
  pm.addPass(createLowerReductionsPass(reductions));
  // Elementwise kernels as vector code (full vectors + a scalar remainder).
  VectorizeKernelsPassOptions vectorize;
  vectorize.vectorBits = options.vectorBits;
  pm.addPass(createVectorizeKernelsPass(vectorize));
  pm.addPass(createConvertLinalgToParallelLoopsPass());
  pm.addPass(createParallelizeKernelsPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  // Math functions of f16/bf16 values are computed in f32 (libm and the polynomial
  // approximations have no narrow versions), as ATen computes them.
  pm.addPass(math::createMathExtendToSupportedTypes());
  // bf16 and fp8 conversions as integer arithmetic: no compiler-rt helper at link time.
  pm.addPass(createExpandFloat8Pass());
  arith::ArithExpandOpsPassOptions expandArith;
  expandArith.includeBf16 = true;
  pm.addPass(arith::createArithExpandOpsPass(expandArith));
  // rsqrt has no libm function: expand it. f32 exp, tanh and erf become inline
  // polynomials (their loops vectorize). Then LLVM intrinsics where LLVM has them (sqrt,
  // fma, floor, fabs, ctlz, ...: they vectorize too), libm calls for the rest.
  math::MathExpandOpsPassOptions expand;
  expand.opMnemonics = {"rsqrt"};
  pm.addPass(math::createMathExpandOpsPass(expand));
  pm.addPass(createApproximateMathPass());
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
  // Vector transfers (in bounds, unit stride) become loads and stores.
  pm.addPass(createConvertVectorToLLVMPass());
  pm.addPass(createUBToLLVMConversionPass()); // the transfers' (unused) padding values
  // Temporaries through the runtime's scratch cache (_mlir_memref_to_llvm_alloc/free).
  FinalizeMemRefToLLVMConversionPassOptions memrefToLLVM;
  memrefToLLVM.useGenericFunctions = true;
  pm.addPass(createFinalizeMemRefToLLVMConversionPass(memrefToLLVM));
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createCanonicalizerPass());
}

void tgc::buildPipeline(OpPassManager &pm, const PipelineOptions &options) {
  auto runs = [&](Phase phase) { return options.startAfter < phase && phase <= options.compileTo; };
  if (runs(Phase::Functionalize))
    populateFunctionalize(pm);
  if (runs(Phase::Decompose))
    populateDecompose(pm, options.train);
  if (options.train && runs(Phase::Autodiff))
    populateAutodiff(pm);
  if (options.train && runs(Phase::Partition))
    populatePartition(pm, options);
  if (runs(Phase::Lower))
    populateLower(pm, options);
  if (runs(Phase::Kernels))
    populateKernels(pm);
  if (runs(Phase::Bufferize))
    populateBufferize(pm, options);
  if (options.target == Target::CUDA && runs(Phase::GPU))
    populateGPU(pm, options);
  if (runs(Phase::LLVM))
    populateLLVM(pm, options);
}

bool tgc::isCudaChip(llvm::StringRef chip) {
  if (!chip.consume_front("sm_"))
    return false;
  if (chip.ends_with("a") || chip.ends_with("f"))
    chip = chip.drop_back();
  unsigned version;
  return !chip.empty() && llvm::all_of(chip, llvm::isDigit) && !chip.getAsInteger(10, version) &&
         version >= 50;
}

namespace {
struct PipelineCLOptions : public PassPipelineOptions<PipelineCLOptions> {
  Option<std::string> compileTo{*this, "compile-to", llvm::cl::desc("Stop after this phase"),
                                llvm::cl::init("llvm")};
  Option<bool> train{*this, "train", llvm::cl::desc("Run the training phases"),
                     llvm::cl::init(false)};
  Option<int64_t> activationBudget{*this, "activation-budget",
                                   llvm::cl::desc("Bytes the saved values may take (0: no budget)"),
                                   llvm::cl::init(0)};
  Option<std::string> packSaved{*this, "pack-saved",
                                llvm::cl::desc("Compress saved activations: bf16 or fp8"),
                                llvm::cl::init("")};
  Option<std::string> modelName{*this, "model-name",
                                llvm::cl::desc("The model's C name, prefixing the entries"),
                                llvm::cl::init("")};
  Option<unsigned> vectorBits{*this, "vector-bits",
                              llvm::cl::desc("Bits of the target's vector registers"),
                              llvm::cl::init(512)};
  Option<std::string> target{*this, "target", llvm::cl::desc("cpu or cuda"), llvm::cl::init("cpu")};
  Option<std::string> chip{*this, "chip", llvm::cl::desc("CUDA: the GPU architecture (sm_XX)"),
                           llvm::cl::init("sm_90")};
  Option<bool> emulateGpu{*this, "emulate-gpu",
                          llvm::cl::desc("CUDA: run the launches as host loops"),
                          llvm::cl::init(false)};
};
} // namespace

/// Builds `tgc-pipeline` from its textual options; an unknown phase is an error.
static LogicalResult buildPipelineFromText(OpPassManager &pm, StringRef text,
                                           function_ref<LogicalResult(const Twine &)> error) {
  PipelineCLOptions cl;
  if (failed(cl.parseFromString(text)))
    return failure();
  std::optional<Phase> phase = parsePhase(cl.compileTo);
  if (!phase) {
    std::string known;
    for (auto [p, phaseName] : kPhaseNames)
      known += (known.empty() ? "" : ", ") + phaseName.str();
    return error("unknown phase '" + cl.compileTo + "' for compile-to: expected one of " + known);
  }
  PipelineOptions options;
  options.compileTo = *phase;
  options.train = cl.train;
  options.activationBudget = cl.activationBudget;
  options.packSaved = cl.packSaved;
  options.modelName = cl.modelName;
  options.vectorBits = cl.vectorBits;
  if (cl.target != "cpu" && cl.target != "cuda")
    return error("unknown target '" + cl.target + "': expected cpu or cuda");
  options.target = cl.target == "cuda" ? Target::CUDA : Target::CPU;
  if (!isCudaChip(cl.chip))
    return error("unknown CUDA architecture '" + cl.chip + "': expected sm_<number>");
  options.gpuChip = cl.chip;
  options.emulateGpu = cl.emulateGpu;
  buildPipeline(pm, options);
  return success();
}

void tgc::registerPipelines() {
  registerPassPipeline("tgc-pipeline", "The whole tgc compile pipeline", buildPipelineFromText,
                       [](function_ref<void(const mlir::detail::PassOptions &)> handler) {
                         handler(PipelineCLOptions());
                       });
}
