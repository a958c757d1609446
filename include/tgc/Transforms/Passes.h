// Passes over the tgc dialect; declarations generated from dialects/Passes.td.
#ifndef TGC_TRANSFORMS_PASSES_H
#define TGC_TRANSFORMS_PASSES_H

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Pass/Pass.h"
#include "tgc/Dialect/TgcDialect.h"

namespace tgc {

#define GEN_PASS_DECL
#include "tgc/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "tgc/Transforms/Passes.h.inc"

/// Function argument / result attribute names describing the graph signature.
namespace attr {
/// "parameter" | "buffer" | "constant" | "user_input" on arguments;
/// "user_output" | "buffer_mutation" | "user_input_mutation" on results; training adds
/// "tangent" / "saved" arguments and "gradient" / "saved" results (docs/training.md).
inline constexpr llvm::StringLiteral kKind = "tgc.kind";
/// The argument's name: the fqn of a parameter/buffer/constant or the input's name.
inline constexpr llvm::StringLiteral kName = "tgc.name";
/// On mutation results: the name of the argument they overwrite.
inline constexpr llvm::StringLiteral kTarget = "tgc.target";
/// On parameter/buffer/constant arguments: the `tgc.global` holding the initial value.
inline constexpr llvm::StringLiteral kGlobal = "tgc.global";
/// On tangent arguments (training): the index of the user output they are the gradient of.
inline constexpr llvm::StringLiteral kOutput = "tgc.output";
/// On mutation results of `@joint`: "forward" | "backward", the pass that writes.
inline constexpr llvm::StringLiteral kPass = "tgc.pass";
/// On mutation results of `@joint`: the version of the target the write produces.
inline constexpr llvm::StringLiteral kVersion = "tgc.version";
/// Module attributes tgc-partition sets (i64): how many values @forward saves for
/// @backward, and the bytes they add at the size symbols' hints (docs/training.md).
inline constexpr llvm::StringLiteral kSavedCount = "tgc.saved_count";
inline constexpr llvm::StringLiteral kSavedBytes = "tgc.saved_bytes";
} // namespace attr

} // namespace tgc

#endif // TGC_TRANSFORMS_PASSES_H
