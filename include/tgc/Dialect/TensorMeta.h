// Fake-tensor metadata as tgc's types carry it, and the inference helpers over it.
#ifndef TGC_DIALECT_TENSORMETA_H
#define TGC_DIALECT_TENSORMETA_H

#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/Types.h"
#include "llvm/ADT/SmallVector.h"
#include <optional>

namespace tgc {

/// What PyTorch's fake tensors know about a tensor. Sizes and strides are affine
/// expressions over the program's size symbols so that a dynamic batch dimension stays
/// one symbol through every op; a constant expression is a static size.
struct TensorMeta {
  llvm::SmallVector<mlir::AffineExpr> sizes;
  /// Empty when the layout is unspecified (value tensors, fresh results).
  llvm::SmallVector<mlir::AffineExpr> strides;
  /// Null means 0.
  mlir::AffineExpr storageOffset;
  mlir::Type dtype;
  mlir::Attribute device;
  bool requiresGrad = false;

  int64_t rank() const { return static_cast<int64_t>(sizes.size()); }
  /// Row-major strides for `sizes`.
  static llvm::SmallVector<mlir::AffineExpr>
  contiguousStrides(llvm::ArrayRef<mlir::AffineExpr> sizes, mlir::MLIRContext *ctx);
  /// The number of elements, as an expression.
  mlir::AffineExpr numel(mlir::MLIRContext *ctx) const;
};

/// The constant value of `e` if it has one.
std::optional<int64_t> getConstantSize(mlir::AffineExpr e);

/// Normalizes `dim` (which may be negative, Python style) against `rank`.
std::optional<int64_t> normalizeDim(int64_t dim, int64_t rank);

/// Broadcasts two size lists as NumPy/PyTorch do; fails when two sizes differ and neither
/// is 1 (symbolic sizes broadcast only against an equal expression or 1).
mlir::FailureOr<llvm::SmallVector<mlir::AffineExpr>>
broadcastSizes(llvm::ArrayRef<mlir::AffineExpr> a, llvm::ArrayRef<mlir::AffineExpr> b);

/// PyTorch's type-promotion categories.
enum class DTypeCategory { Bool, Integer, Floating };
DTypeCategory getCategory(mlir::Type dtype);

/// One participant in type promotion: a dimensioned tensor, a 0-d tensor or a Python
/// scalar ("wrapped number"), per torch.result_type.
struct PromotionOperand {
  mlir::Type dtype;
  enum Kind { Dimensioned, ZeroDim, WrappedNumber } kind;
};

/// torch.result_type over several operands; `defaultFloat` is torch's default dtype.
mlir::Type promoteTypes(llvm::ArrayRef<PromotionOperand> operands, mlir::Type defaultFloat);

/// Promotes two dtypes with the same category lattice as torch.promote_types.
mlir::Type promoteDTypes(mlir::Type a, mlir::Type b);

} // namespace tgc

#endif // TGC_DIALECT_TENSORMETA_H
