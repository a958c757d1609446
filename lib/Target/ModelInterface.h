// The model interface of a translated model: its packed entries, descriptor and
// `<name>_create`, what the runtime calls (docs/abi.md).
#ifndef TGC_LIB_TARGET_MODELINTERFACE_H
#define TGC_LIB_TARGET_MODELINTERFACE_H

#include "SignatureReader.h"

#include "mlir/IR/Location.h"
#include "llvm/IR/Module.h"

#include <string>
#include <vector>

namespace tgc {

/// Bytes model.so holds outside the LLVM module (weights, large constant arrays): the
/// module declares `name`, a hidden global, and the data object defines it
/// (ObjectEmission.cpp). `bytes` must outlive the object's emission.
struct OutlinedData {
  std::string name;
  llvm::StringRef bytes;
  uint64_t align;
  /// Visible outside model.so (default visibility); else hidden.
  bool exported = false;
};

/// Constant data this large and more is outlined: instruction selection would emit it
/// element by element (non-i8 arrays) and splitting would copy it through bitcode.
constexpr uint64_t kOutlinedDataBytes = 4 << 10;

/// Adds to `m` (the translated model) `tgc_entry_forward` (and `tgc_entry_backward`),
/// the name, signature and weights blobs, the model descriptor and `<name>_create`;
/// everything else `m` defines becomes internal to model.so. Weights of
/// kOutlinedDataBytes and more are declared only and added to `outlined`, pointing into
/// `model`.
mlir::LogicalResult addModelInterface(llvm::Module &m, const ModelAbi &model,
                                      llvm::ArrayRef<std::string> cpuFeatures, mlir::Location loc,
                                      std::vector<OutlinedData> &outlined);

} // namespace tgc

#endif // TGC_LIB_TARGET_MODELINTERFACE_H
