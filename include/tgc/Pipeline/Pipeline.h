// The whole compile pipeline, built from one options struct.
#ifndef TGC_PIPELINE_PIPELINE_H
#define TGC_PIPELINE_PIPELINE_H

#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringRef.h"
#include <optional>
#include <string>

namespace tgc {

/// The pipeline's phases, in order. `--compile-to=<phase>` stops after that phase.
enum class Phase {
  Capture,       ///< what the reader produced: capture-level tgc
  Functionalize, ///< value-level tgc, mutations as extra results
  Decompose,     ///< compound ops rewritten into primitive tgc ops
  Autodiff,      ///< training only: `@joint`, the forward and backward in one function
  Partition,     ///< training only: `@forward` + `@backward` with an explicit saved list
  Lower,         ///< linalg/tensor/arith/math on builtin tensors
  Kernels,       ///< fusion groups outlined as `tgc.kernel` functions
  Bufferize,     ///< memrefs, destination-passing entry points
  GPU,           ///< CUDA only: device work as GPU kernels in one binary (docs/cuda.md)
  LLVM,          ///< LLVM dialect, ready for translation
};

std::optional<Phase> parsePhase(llvm::StringRef name);
llvm::StringRef stringifyPhase(Phase phase);

/// What the code is generated for (`tgc compile --target`).
enum class Target {
  CPU,  ///< the host's CPU (`--cpu` picks which)
  CUDA, ///< NVIDIA GPUs: kernels as a cubin for `gpuChip` plus PTX (docs/cuda.md)
};

struct PipelineOptions {
  /// Phases after this one run (Capture: all of them).
  Phase startAfter = Phase::Capture;
  /// The last phase that runs.
  Phase compileTo = Phase::LLVM;
  /// Training (`--train`): run the autodiff and partition phases, which are skipped
  /// otherwise (docs/training.md).
  bool train = false;
  /// Training: the bytes the saved values may take (0: no budget); over it, the
  /// partition recomputes more.
  int64_t activationBudget = 0;
  /// Training: built-in saved-tensor hooks compressing saved f32 activations ("bf16",
  /// "fp8"), or "" for none.
  std::string packSaved;
  /// The model's C name: the llvm phase names the entries `<name>_forward` and
  /// `<name>_backward` ("" keeps their names).
  std::string modelName;
  /// Bits of the target's vector registers (`tgc compile --cpu`: 512 with AVX-512, 256
  /// with AVX2): elementwise kernels become vectors of this size.
  unsigned vectorBits = 512;
  /// GEMMs call the runtime's library helpers (OpenBLAS, oneDNN: fast, but their kernels
  /// are the host's, and so are the last bits), or become generated loops
  /// (tgc-generate-gemms: the same bits on every host). `tgc compile --gemm`.
  bool libraryGemm = true;
  /// The target (`tgc compile --target`).
  Target target = Target::CPU;
  /// CUDA: the GPU architecture the cubin is for (`--target=cuda:sm_XX`).
  std::string gpuChip = "sm_90";
  /// CUDA: the toolkit whose ptxas and fatbinary build the binary ("": MLIR's default).
  std::string cudaToolkit;
  /// CUDA: run the launches as host loops instead (`--emulate-gpu`): a CPU model that
  /// computes what the CUDA mapping computes, for checking it without a GPU.
  bool emulateGpu = false;
  /// CUDA: fp32 GEMMs may use TF32 tensor cores (`--allow-tf32`; off: fp32 as eager's
  /// default).
  bool allowTf32 = false;
};

/// Adds the passes of every phase in (`startAfter`, `compileTo`] to `pm`.
void buildPipeline(mlir::OpPassManager &pm, const PipelineOptions &options);

/// Whether `chip` names a CUDA architecture MLIR's NVVM target takes: `sm_<digits>`,
/// optionally with an `a` or `f` suffix (sm_90a).
bool isCudaChip(llvm::StringRef chip);

/// Registers `tgc-pipeline` (with `compile-to`, `train`, `activation-budget`,
/// `pack-saved`, `model-name`, `vector-bits`, `target` and `chip` options) for tgc-opt; an
/// unknown phase or target is an error.
void registerPipelines();

} // namespace tgc

#endif // TGC_PIPELINE_PIPELINE_H
