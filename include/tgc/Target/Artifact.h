// The model artifact: model.so (generated code + embedded state + the runtime),
// model.h and model.json, from a module the pipeline has lowered to the LLVM dialect.
#ifndef TGC_TARGET_ARTIFACT_H
#define TGC_TARGET_ARTIFACT_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/Timing.h"
#include "tgc/Target/Signature.h"
#include "llvm/Support/raw_ostream.h"
#include <string>

namespace tgc {

/// What the model's objects become (`tgc compile --emit`).
enum class LibraryKind {
  /// model.so: the objects linked with the runtime and its libraries.
  Shared,
  /// libX.a: an archive of the model's objects alone; the program that links it links
  /// the runtime (libtgc_runtime.a, once for all its models) and its libraries.
  Static,
};

struct ArtifactOptions {
  /// Where model.so (or the archive) goes; model.h and model.json are written beside it.
  std::string libraryPath;
  LibraryKind kind = LibraryKind::Shared;
  /// The C identifier prefixing the model's API (`<name>_create`).
  std::string name;
  /// The static runtime library linked into model.so.
  std::string runtimeLibrary;
  /// The compiler driver used as linker.
  std::string linker;
  /// Extra linker inputs (e.g. -lopenblas).
  std::vector<std::string> linkLibraries = {"-lopenblas", "-lm"};
  /// Flags for the linker driver before the objects (`-fuse-ld=lld` where the build
  /// found LLD: it links a model with large weights in half the time of GNU ld).
  std::vector<std::string> linkerFlags;
  /// The CPU code is generated for (`tgc compile --cpu`): `native` (the machine that
  /// compiles, all its features) or an LLVM CPU name for portable code (`x86-64-v3`).
  std::string cpu = "native";
  /// How the code computes GEMMs (`tgc compile --gemm`): "library" or "generated".
  std::string gemm = "library";
  /// CUDA models (`tgc compile --target=cuda`): the GPU architecture; "" for the CPU.
  std::string cudaChip;
  /// CUDA models: whether fp32 GEMMs may use TF32 (`--allow-tf32`).
  bool allowTf32 = false;
  /// Keep the object file next to the library (for debugging).
  bool keepObject = false;
  /// When set, receives the training report (`tgc compile --report`,
  /// writeTrainingReport) of a trainable model.
  llvm::raw_ostream *report = nullptr;
  /// When set (`tgc compile --timing`), translation, LLVM optimization, code generation
  /// and the link are timed under it.
  mlir::TimingScope *timing = nullptr;
};

/// Builds model `options.name` from `module`, which the whole pipeline has lowered to
/// the LLVM dialect (its signature in `tgc.abi`, recorded by tgc-prepare-entries):
/// translates it to LLVM IR, adds the model interface with the signature and weights
/// embedded, emits the object in process, links model.so (or archives the objects), and
/// writes model.h and model.json.
mlir::LogicalResult emitArtifact(mlir::ModuleOp module, const ArtifactOptions &options);

/// Bits of the vector registers of the CPU `tgc compile --cpu` names (`native`: this
/// machine): 512 with AVX-512, 256 with AVX or another 256-bit unit, else 128. An
/// unknown CPU is an error at `loc`.
mlir::FailureOr<unsigned> cpuVectorBits(llvm::StringRef cpu, mlir::Location loc);

/// The C name of graph `index` of a program with graph breaks named `name`.
inline std::string graphModelName(llvm::StringRef name, size_t index) {
  return (name + "_g" + llvm::Twine(index)).str();
}

/// The artifact of a program with graph breaks (docs/graph-breaks.md): one model per
/// graph (`<name>_g<i>_create`, each built like `emitArtifact`'s, its entries named
/// `<name>_g<i>_forward`) in one model.so; model.json holds the program
/// (writeProgramJson) and each graph's signature, model.h each graph's constructor.
mlir::LogicalResult emitProgramArtifact(llvm::ArrayRef<mlir::ModuleOp> graphs,
                                        const ArtifactOptions &options);

} // namespace tgc

#endif // TGC_TARGET_ARTIFACT_H
