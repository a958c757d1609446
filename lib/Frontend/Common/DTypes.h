// torch's dtypes: their names, torch.export's serialization codes and tgc's element types.
#ifndef TGC_LIB_FRONTEND_COMMON_DTYPES_H
#define TGC_LIB_FRONTEND_COMMON_DTYPES_H

#include "mlir/IR/Types.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>

namespace tgc::frontend {

/// A torch dtype as the frontends know it.
struct TorchDType {
  /// What torch calls it: `torch.<name>` (`float32`, `int64`, `bool`, ...).
  llvm::StringLiteral name;
  /// The MLIR element type, or null for dtypes tgc does not support (complex).
  mlir::Type type;
};

/// The dtype of `code` in torch/_export/serde/schema.py's ScalarType (not c10's
/// numbering), or nullopt for a code the schema does not define.
std::optional<TorchDType> lookupDTypeByCode(int64_t code, mlir::MLIRContext *ctx);

/// The dtype torch calls `torch.<name>`, as pickles and traces name dtypes, or nullopt
/// for a name tgc does not know.
std::optional<TorchDType> lookupDTypeByName(llvm::StringRef name, mlir::MLIRContext *ctx);

/// The dtype whose MLIR element type is `type` (`float32` for f32), or nullopt.
std::optional<TorchDType> lookupDTypeByType(mlir::Type type);

/// Bytes per element of `dtype` in a storage (bool and 8-bit floats take one).
unsigned getElementBytes(mlir::Type dtype);

} // namespace tgc::frontend

#endif // TGC_LIB_FRONTEND_COMMON_DTYPES_H
