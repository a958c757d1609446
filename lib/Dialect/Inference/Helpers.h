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

/// Dense strides for `shape` in TensorIterator's order (reorder_dimensions) over the
/// operands' strides broadcast to `shape` (0 along broadcast dimensions): the dimensions
/// from the fastest by the first operand whose strides tell two apart, equal strides
/// putting the smaller size first. Empty when that order is row-major.
llvm::SmallVector<mlir::AffineExpr>
iteratorOrderStrides(mlir::MLIRContext *ctx, llvm::ArrayRef<int64_t> shape,
                     llvm::ArrayRef<llvm::SmallVector<int64_t>> operandStrides);

/// The strides of a copy of `self` in `memoryFormat` (a torch.memory_format name; null:
/// contiguous), as ATen lays out clone / empty_like / to: row-major (empty), the
/// channels-last strides, or for preserve_format `self`'s own strides when they are
/// non-overlapping and dense, else dense ones in `self`'s order (infer_dense_strides).
/// Empty for value tensors and symbolic layouts; an error for an unknown format or one
/// that does not apply to `self`'s rank.
mlir::FailureOr<llvm::SmallVector<mlir::AffineExpr>> copyStrides(InferLoc loc, BaseTensorType self,
                                                                 mlir::StringAttr memoryFormat);

/// The strides of a result of `sizes` that ATen lays out in its input's
/// suggest_memory_format() (convolution, pooling, batch / group norm, upsampling,
/// padding): channels-last ones when one of the capture-level `sources` suggests
/// channels_last (or _3d) and `sizes` has that format's rank, else empty (row-major).
llvm::SmallVector<mlir::AffineExpr> suggestedLayout(llvm::ArrayRef<mlir::AffineExpr> sizes,
                                                    llvm::ArrayRef<BaseTensorType> sources);

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
