// Object emission: a lowered model translated to LLVM IR, given its model interface,
// optimized and compiled in process for the host.
#ifndef TGC_LIB_TARGET_OBJECTEMISSION_H
#define TGC_LIB_TARGET_OBJECTEMISSION_H

#include "SignatureReader.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/Timing.h"

namespace tgc {

/// Translates `module` (the LLVM dialect, as the pipeline's llvm phase leaves it) to
/// LLVM IR, adds the interface of `model` (addModelInterface), splits it into parts that
/// are optimized and compiled for the host CPU in parallel, and returns their object
/// files, `<objectStem>.<i>.o`. With `timing`, the steps are timed under it.
mlir::FailureOr<std::vector<std::string>> emitModelObjects(mlir::ModuleOp module,
                                                           const ModelAbi &model,
                                                           llvm::StringRef objectStem,
                                                           mlir::TimingScope *timing = nullptr);

} // namespace tgc

#endif // TGC_LIB_TARGET_OBJECTEMISSION_H
