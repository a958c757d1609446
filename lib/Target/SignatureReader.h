// Reading a lowered model's calling signature from its `tgc.abi` attribute.
#ifndef TGC_LIB_TARGET_SIGNATUREREADER_H
#define TGC_LIB_TARGET_SIGNATUREREADER_H

#include "tgc/Target/Signature.h"

#include "mlir/IR/BuiltinOps.h"

#include <string>

namespace tgc {

/// What Target needs of a model beyond its code: the signature, the weights blob (state
/// initial values at the offsets the signature gives) and the entry functions.
struct ModelAbi {
  ModelSignature signature;
  std::string weights;
  /// The symbols of the entry functions (`_mlir_ciface_<symbol>` after lowering); the
  /// backward's is empty for an inference model.
  std::string forwardEntry;
  std::string backwardEntry;
};

/// Reads `module`'s `tgc.abi` (tgc-prepare-entries) and the Python-level module
/// attributes (replay list, guards, state sources, output structure, input metadata)
/// into the signature of model `name`, and verifies it (verifySignature). Errors are
/// diagnostics on the module.
mlir::FailureOr<ModelAbi> readModelAbi(mlir::ModuleOp module, llvm::StringRef name);

} // namespace tgc

#endif // TGC_LIB_TARGET_SIGNATUREREADER_H
