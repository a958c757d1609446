// Helpers the signature writers share (lib/Target): size-expression programs, the
// names of kinds, and which arguments a signature rewrites. Private to lib/Target.
#ifndef TGC_LIB_TARGET_SIGNATUREINTERNAL_H
#define TGC_LIB_TARGET_SIGNATUREINTERNAL_H

#include "tgc/Target/Signature.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tgc::detail {

/// True for the two-operand opcodes (Add through Mod).
bool isBinary(ExprOpcode opcode);

/// Why `ops` is not a well-formed program over `numSymbols` symbols, or
/// nothing if it is.
std::optional<std::string> checkProgram(const std::vector<ExprOp> &ops, size_t numSymbols);

/// `a <op> b` for a binary opcode, with Python's rounding; throws
/// std::domain_error on division by zero or overflow.
int64_t applyBinary(ExprOpcode opcode, int64_t a, int64_t b);

/// How messages and model.json name an argument kind ("parameter", "input").
const char *argKindName(ArgKind kind);

/// How messages name a result kind ("output", "gradient of").
const char *resultKindName(ResultKind kind);

/// A buffer or user-input mutation (not an output or gradient).
bool isMutation(const ResultInfo &result);

/// Whether argument `index` is rewritten by some result of either entry.
bool isMutated(const ModelSignature &signature, size_t index);

/// The compile-time saved count and bytes: the partition's numbers when it
/// recorded them, else counted here (bytes only when every shape is static).
std::pair<int64_t, std::optional<int64_t>> savedTotals(const BackwardInfo &backward);

} // namespace tgc::detail

#endif // TGC_LIB_TARGET_SIGNATUREINTERNAL_H
