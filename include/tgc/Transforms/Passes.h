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

/// Re-infers the result types of `op` (an InferTypeOpInterface op whose operands were
/// replaced) and sets them; fails with a diagnostic on `op` when inference fails.
mlir::LogicalResult refreshResultTypes(mlir::Operation *op);

/// Function argument / result attribute names describing the graph signature.
namespace attr {
/// "parameter" | "buffer" | "constant" | "user_input" on arguments;
/// "user_output" | "buffer_mutation" | "user_input_mutation" on results.
inline constexpr llvm::StringLiteral kKind = "tgc.kind";
/// The argument's name: the fqn of a parameter/buffer/constant or the input's name.
inline constexpr llvm::StringLiteral kName = "tgc.name";
/// On mutation results: the name of the argument they overwrite.
inline constexpr llvm::StringLiteral kTarget = "tgc.target";
/// On parameter/buffer/constant arguments: the `tgc.global` holding the initial value.
inline constexpr llvm::StringLiteral kGlobal = "tgc.global";
} // namespace attr

} // namespace tgc

#endif // TGC_TRANSFORMS_PASSES_H
