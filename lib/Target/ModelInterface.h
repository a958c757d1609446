// The model interface of a translated model: its packed entries, descriptor and
// `<name>_create`, what the runtime calls (docs/abi.md).
#ifndef TGC_LIB_TARGET_MODELINTERFACE_H
#define TGC_LIB_TARGET_MODELINTERFACE_H

#include "SignatureReader.h"

#include "mlir/IR/Location.h"
#include "llvm/IR/Module.h"

namespace tgc {

/// Adds to `m` (the translated model) `tgc_entry_forward` (and `tgc_entry_backward`),
/// the name, signature and weights blobs, the model descriptor and `<name>_create`;
/// everything else `m` defines becomes internal to model.so.
mlir::LogicalResult addModelInterface(llvm::Module &m, const ModelAbi &model,
                                      llvm::ArrayRef<std::string> cpuFeatures, mlir::Location loc);

} // namespace tgc

#endif // TGC_LIB_TARGET_MODELINTERFACE_H
