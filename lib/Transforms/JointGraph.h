// Reading the signature of the training graphs (`@joint`, docs/training.md): shared by
// tgc-place-mutations and tgc-partition.
#ifndef TGC_LIB_TRANSFORMS_JOINTGRAPH_H
#define TGC_LIB_TRANSFORMS_JOINTGRAPH_H

#include "tgc/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/DenseSet.h"

namespace tgc::joint {

/// Values of `tgc.kind` and `tgc.pass` the training passes read and write.
inline constexpr llvm::StringLiteral kTangent = "tangent";
inline constexpr llvm::StringLiteral kSaved = "saved";
inline constexpr llvm::StringLiteral kParameter = "parameter";
inline constexpr llvm::StringLiteral kConstant = "constant";
inline constexpr llvm::StringLiteral kUserOutput = "user_output";
inline constexpr llvm::StringLiteral kGradient = "gradient";
inline constexpr llvm::StringLiteral kBufferMutation = "buffer_mutation";
inline constexpr llvm::StringLiteral kUserInputMutation = "user_input_mutation";
inline constexpr llvm::StringLiteral kForward = "forward";
inline constexpr llvm::StringLiteral kBackward = "backward";

/// The module's `@joint` with a single-block body; an error on the module otherwise.
mlir::FailureOr<mlir::func::FuncOp> lookupJoint(mlir::ModuleOp module);

/// The `tgc.kind` of argument / result `index` of `func`, or "" when it has none.
llvm::StringRef getArgKind(mlir::func::FuncOp func, unsigned index);
llvm::StringRef getResultKind(mlir::func::FuncOp func, unsigned index);

/// Whether a result kind is a write-back of a graph input.
inline bool isMutationKind(llvm::StringRef kind) {
  return kind == kBufferMutation || kind == kUserInputMutation;
}

/// The values of `func`'s body that depend, through operands, on a tangent argument (the tangents
/// included).
llvm::DenseSet<mlir::Value> getTangentDependentValues(mlir::func::FuncOp func);

/// Whether `value` is `ancestor` or computed from it (within one block).
bool dependsOn(mlir::Value value, mlir::Value ancestor);

/// The bytes a tensor of `type` takes with every size symbol at its typical value
/// (`#tgc.symbol::getTypicalValue`, from the module's `tgc.symbols`).
int64_t getTypicalByteSize(BaseTensorType type, mlir::ModuleOp module);

} // namespace tgc::joint

#endif // TGC_LIB_TRANSFORMS_JOINTGRAPH_H
