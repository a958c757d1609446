// What the tgc-decompose patterns share: small builders of tgc ops.
#ifndef TGC_LIB_TRANSFORMS_DECOMPOSEUTILS_H
#define TGC_LIB_TRANSFORMS_DECOMPOSEUTILS_H

#include "tgc/Dialect/TgcDialect.h"

#include "mlir/IR/PatternMatch.h"

namespace tgc::decompose {

/// The tgc tensor type of `v`.
BaseTensorType typeOf(mlir::Value v);

/// An f64 scalar constant.
mlir::Value f64(mlir::OpBuilder &b, mlir::Location loc, double v);

/// A #tgc.shape of `sizes`.
ShapeAttr shapeAttr(mlir::MLIRContext *ctx, mlir::ArrayRef<mlir::AffineExpr> sizes);

/// The number of elements in dimensions `dims` of `x`, as an i64 scalar.
mlir::Value countElements(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x,
                          mlir::ArrayRef<int64_t> dims);

/// A tgc.constant of `shape` holding `values` (row-major) as `type`, f32 or f64.
mlir::Value floatConstant(mlir::OpBuilder &b, mlir::Location loc, mlir::ArrayRef<int64_t> shape,
                          mlir::FloatType type, mlir::ArrayRef<double> values);
/// A tgc.constant of `shape` holding the int64 `values` (row-major).
mlir::Value int64Constant(mlir::OpBuilder &b, mlir::Location loc, mlir::ArrayRef<int64_t> shape,
                          mlir::ArrayRef<int64_t> values);
/// `v` converted to `dtype` (itself when it has it).
mlir::Value castTo(mlir::OpBuilder &b, mlir::Location loc, mlir::Value v, mlir::Type dtype);

/// `x` in the dtype normalizations compute in: f32 for bf16 and f16 (ATen's opmath
/// type, so that the statistics and the output are rounded once), else `x`.
mlir::Value toComputationDtype(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x);

/// Replaces `op` with `results`, each converted to the dtype of the result it replaces.
void replaceWithCast(mlir::PatternRewriter &rewriter, mlir::Operation *op,
                     mlir::SmallVector<mlir::Value> results);

/// Dimensions `[from, rank)`.
mlir::SmallVector<int64_t> trailingDims(int64_t from, int64_t rank);

/// mean and biased variance of `x` over `dims`, kept as size-1 dimensions. With
/// `onePass` (inference) an f32 `x` is read once: its sum and its sum of squares, both
/// of x widened to f64 (so that E[x^2] - E[x]^2 does not cancel in f32 precision; the
/// relative error of the variance is about 1e-16 * mean^2 / variance), clamped at 0.
/// Otherwise, and for other dtypes, the variance is the mean of (x - mean)^2, a second
/// pass after the mean.
std::pair<mlir::Value, mlir::Value> meanAndVariance(mlir::OpBuilder &b, mlir::Location loc,
                                                    mlir::Value x, mlir::ArrayRef<int64_t> dims,
                                                    bool onePass);

/// Drops the size-1 dimensions `dims` that a keepdim reduction left.
mlir::Value squeezeDims(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x,
                        mlir::ArrayRef<int64_t> dims);

/// Reshapes a per-channel vector [C] to broadcast against an NC... tensor of `rank`.
mlir::Value channelView(mlir::OpBuilder &b, mlir::Location loc, mlir::Value v, int64_t rank);

} // namespace tgc::decompose

namespace tgc {
/// The normalization and convolution decompositions (DecomposeNN.cpp); `onePass` as
/// tgc-decompose's one-pass statistics option.
void populateDecomposeNNPatterns(mlir::RewritePatternSet &patterns, bool onePass);
} // namespace tgc

#endif // TGC_LIB_TRANSFORMS_DECOMPOSEUTILS_H
