// The model artifact: model.so (generated code + embedded state + the runtime),
// model.h and model.json, from a value-level tgc module.
#ifndef TGC_TARGET_ARTIFACT_H
#define TGC_TARGET_ARTIFACT_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"
#include "tgc/Target/Signature.h"
#include <string>

namespace tgc {

struct ArtifactOptions {
  /// Where model.so goes; model.h and model.json are written beside it.
  std::string libraryPath;
  /// The C identifier prefixing the model's API (`<name>_create`).
  std::string name;
  /// The static runtime library linked into model.so.
  std::string runtimeLibrary;
  /// The compiler driver used as linker.
  std::string linker;
  /// Extra linker inputs (e.g. -lopenblas).
  std::vector<std::string> linkLibraries = {"-lopenblas", "-lm"};
  /// Keep the object file next to the library (for debugging).
  bool keepObject = false;
  /// When set, receives the training report (`tgc compile --report`,
  /// writeTrainingReport) of a trainable model.
  llvm::raw_ostream *report = nullptr;
};

/// Reads the model's signature (inputs, outputs, state with initial values, size
/// symbols) from `module`, a value-level tgc module with one public `func.func`,
/// or, for a trainable model, public `@forward` and `@backward` as the partition
/// leaves them (docs/training.md): then also the saved values (a parameter or
/// constant argument returned as is is saved by reference), tangents, gradients
/// and backward mutations. Initial values are appended to `weights`.
mlir::FailureOr<ModelSignature> extractSignature(mlir::ModuleOp module, llvm::StringRef name,
                                                 std::string &weights);

/// Compiles `module` (value-level tgc, after decomposition, or after the partition
/// when it has `@backward`) to the artifact: lowers it
/// through the pipeline's remaining phases, emits the object in process with the
/// signature and weights embedded, links model.so, and writes model.h and model.json.
mlir::LogicalResult emitArtifact(mlir::ModuleOp module, const ArtifactOptions &options);

/// The C name of graph `index` of a program with graph breaks named `name`.
inline std::string graphModelName(llvm::StringRef name, size_t index) {
  return (name + "_g" + llvm::Twine(index)).str();
}

/// The artifact of a program with graph breaks (docs/graph-breaks.md): one model per
/// graph (`<name>_g<i>_create`, each compiled like `emitArtifact`'s) in one model.so;
/// model.json holds `programJson` (how the caller runs them) and each graph's
/// signature, model.h each graph's constructor.
mlir::LogicalResult emitProgramArtifact(llvm::ArrayRef<mlir::ModuleOp> graphs,
                                        llvm::StringRef programJson,
                                        const ArtifactOptions &options);

} // namespace tgc

#endif // TGC_TARGET_ARTIFACT_H
