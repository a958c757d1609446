// Helpers shared by the metadata inference files of lib/Dialect/Inference (private).
#ifndef TGC_LIB_DIALECT_INFERENCE_HELPERS_H
#define TGC_LIB_DIALECT_INFERENCE_HELPERS_H

#include "tgc/Dialect/TgcDialect.h"

#include "mlir/IR/Diagnostics.h"

#include <initializer_list>
#include <string>

namespace tgc::inference {

/// `v`'s tgc tensor type, or null when `v` is null or not a tgc tensor.
BaseTensorType tensorOf(mlir::Value v);

/// An expression as text, for diagnostics.
std::string exprStr(mlir::AffineExpr e);

/// Sizes as text ("[2, s0]"), for diagnostics.
std::string sizesStr(llvm::ArrayRef<mlir::AffineExpr> sizes);

/// The dtype of float results when nothing else decides it (f32).
mlir::Type defaultFloat(mlir::MLIRContext *ctx);

/// The size expression of the constant `v`.
mlir::AffineExpr cst(int64_t v, mlir::MLIRContext *ctx);

/// Adds a result type of form `isRef`: capture-level results get contiguous strides
/// unless the meta states them; value-level results carry no layout.
void addResult(mlir::MLIRContext *ctx, bool isRef, TensorMeta meta, TypeList &types);

/// A fresh (non-aliasing) result shaped `sizes` with `self`'s dtype, device and form.
TensorMeta freshLike(BaseTensorType self, llvm::ArrayRef<mlir::AffineExpr> sizes);

/// Like freshLike, for positions: int64 elements, no gradient (argmax, sort indices).
TensorMeta indicesLike(BaseTensorType self, llvm::ArrayRef<mlir::AffineExpr> sizes);

/// `op`'s index (gather, scatter): a non-bool integer tensor of `self`'s rank.
mlir::LogicalResult requireIndexOfRank(InferLoc loc, llvm::StringRef op, BaseTensorType self,
                                       BaseTensorType index);

/// The strides a capture-level input has (contiguous when unspecified).
llvm::SmallVector<mlir::AffineExpr> stridesOf(const TensorMeta &meta, mlir::MLIRContext *ctx);

/// Fails with "`what` must be a tgc tensor" when `t` is null.
mlir::LogicalResult requireTensor(InferLoc loc, BaseTensorType t, llvm::StringRef what);

/// `dim` normalized for a tensor of `rank` (negative counts from the end), or an error.
mlir::FailureOr<int64_t> dimIn(InferLoc loc, int64_t dim, int64_t rank);

/// How `v` takes part in dtype promotion: a tensor (0-d or not) or a wrapped number.
PromotionOperand promotionOperand(mlir::Value v);

/// True if any of the (possibly null) tensors requires grad.
bool anyRequiresGrad(std::initializer_list<BaseTensorType> ts);

/// True if `a` and `b` are the same size expressions.
bool sameSizes(llvm::ArrayRef<mlir::AffineExpr> a, llvm::ArrayRef<mlir::AffineExpr> b);

} // namespace tgc::inference

#endif // TGC_LIB_DIALECT_INFERENCE_HELPERS_H
