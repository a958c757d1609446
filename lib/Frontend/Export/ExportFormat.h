// What torch.export writes into a .pt2's JSON, independent of the IR built from it.
#ifndef TGC_LIB_FRONTEND_EXPORT_EXPORTFORMAT_H
#define TGC_LIB_FRONTEND_EXPORT_EXPORTFORMAT_H

#include "Frontend/Common/Json.h"

#include "llvm/ADT/StringRef.h"
#include <optional>
#include <string>

namespace tgc::pt2 {

using frontend::Json;

/// The key of a one-key union object (`{"as_tensor": {...}}`), or "" if `value` is
/// not one. Arguments, outputs and signature specs are such unions.
std::string unionKind(const Json &value);

/// The value of a one-key union object; null (which every typed access rejects with an
/// exception, reported as a malformed archive) when `value` is not one.
const Json &unionValue(const Json &value);

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

} // namespace tgc::pt2

#endif // TGC_LIB_FRONTEND_EXPORT_EXPORTFORMAT_H
