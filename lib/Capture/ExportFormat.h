// What torch.export writes into a .pt2's JSON, independent of the IR built from it.
#ifndef TGC_LIB_CAPTURE_EXPORTFORMAT_H
#define TGC_LIB_CAPTURE_EXPORTFORMAT_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Types.h"
#include "llvm/ADT/StringRef.h"
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace tgc {

/// The archive's JSON, with object keys kept in file order so that everything derived
/// from it (symbol order, for one) is deterministic and reads like the file.
using Json = nlohmann::ordered_json;

/// The key of a one-key union object (`{"as_tensor": {...}}`), or "" if `value` is
/// not one. Arguments, outputs and signature specs are such unions.
std::string unionKind(const Json &value);

/// The value of a one-key union object; null (which every typed access rejects with an
/// exception, reported as a malformed archive) when `value` is not one.
const Json &unionValue(const Json &value);

/// A dtype of torch/_export/serde/schema.py's ScalarType (not c10's numbering).
struct ExportDType {
  llvm::StringLiteral name;
  /// The MLIR element type, or null for dtypes tgc does not support (complex).
  mlir::Type type;
};

/// The dtype of `code`, or nullopt for a code the schema does not define.
std::optional<ExportDType> lookupDType(int64_t code, mlir::MLIRContext *ctx);

/// The dtype torch calls `torch.<name>` (`float32`, `int64`, ...), as torch.save's
/// pickles name dtypes, or nullopt for a name tgc does not know.
std::optional<ExportDType> lookupDTypeByName(llvm::StringRef name, mlir::MLIRContext *ctx);

/// The dtype whose MLIR element type is `type` (`float32` for f32), or nullopt.
std::optional<ExportDType> lookupDTypeByType(mlir::Type type);

/// The attributes of a graph input argument of @forward (`tgc.kind`, `tgc.name` and,
/// for parameters, buffers and constants, `tgc.global` naming its global), as both
/// readers write them.
mlir::DictionaryAttr getGraphInputAttrs(mlir::MLIRContext *ctx, llvm::StringRef kind,
                                        llvm::StringRef name);

/// A resource name for `fqn` (a parameter's dotted name) that is a valid identifier in
/// the IR's text form, for the dense_resource blobs of `tgc.global`s.
std::string getResourceName(llvm::StringRef fqn);

/// Bytes per element of `dtype` in a storage (bool and 8-bit floats take one).
unsigned getElementBytes(mlir::Type dtype);

/// A float argument: a number, or one of the strings torch writes for non-finite
/// values (`"Infinity"`, `"-Infinity"`, `"NaN"`).
std::optional<double> parseFloat(const Json &value);

/// Python's json module writes non-finite floats as the bare tokens `NaN`, `Infinity`
/// and `-Infinity` unless told not to (older torch releases did); strict JSON parsers
/// reject them, so this turns them into the strings newer releases write.
std::string quoteNonFiniteLiterals(llvm::StringRef text);

/// The user's source line in a node's `stack_trace`: the innermost frame outside
/// PyTorch itself (a library module's forward, such as nn.Linear's, is the innermost
/// frame of most nodes), else the innermost frame; nullopt without frames.
std::optional<std::pair<std::string, unsigned>> findUserFrame(llvm::StringRef stackTrace);

} // namespace tgc

#endif // TGC_LIB_CAPTURE_EXPORTFORMAT_H
