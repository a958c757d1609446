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

/// torch.memory_format: the layout a copy gets (`clone(memory_format=...)`, `to`,
/// `empty_like`, `contiguous`). Preserve keeps the source's layout (docs/bytecode.md,
/// *Layouts*).
enum class MemoryFormat { Contiguous, Preserve, ChannelsLast, ChannelsLast3d };

/// The format torch names so (`contiguous_format`, `preserve_format`, `channels_last`,
/// `channels_last_3d`: `torch.channels_last` without the module), or nullopt.
std::optional<MemoryFormat> parseMemoryFormat(llvm::StringRef name);
llvm::StringRef stringifyMemoryFormat(MemoryFormat format);

/// The strides of a dense tensor of `sizes` in `format` (not Preserve): row-major, or
/// the channels (dimension 1) fastest and then the others from the last (NHWC, NDHWC),
/// as ATen's get_channels_last_strides_2d / _3d. Empty when the format does not apply to
/// that rank (channels_last needs 4, channels_last_3d 5).
llvm::SmallVector<mlir::AffineExpr> memoryFormatStrides(MemoryFormat format,
                                                        llvm::ArrayRef<mlir::AffineExpr> sizes,
                                                        mlir::MLIRContext *ctx);

/// Whether `strides` lay `sizes` out in `format` (not Preserve) as ATen's
/// is_contiguous(memory_format) decides: dense in the format's order, where a dimension
/// of size 1 may have any stride; false for a rank the format does not apply to.
bool isContiguousAs(llvm::ArrayRef<mlir::AffineExpr> sizes,
                    llvm::ArrayRef<mlir::AffineExpr> strides, MemoryFormat format);

/// The format ATen's suggest_memory_format() reads from `strides` (empty: row-major):
/// ChannelsLast for a rank-4 layout like channels-last (is_channels_last_strides_2d,
/// ambiguous cases such as N111 counting as contiguous), ChannelsLast3d likewise at
/// rank 5, else Contiguous (also for symbolic strides).
MemoryFormat suggestMemoryFormat(llvm::ArrayRef<mlir::AffineExpr> sizes,
                                 llvm::ArrayRef<mlir::AffineExpr> strides);

/// The strides with which a tensor of `sizes` and `strides` (empty: row-major) can be
/// viewed as `newSizes` without a copy, as ATen's computeStride finds them (view and
/// reshape of a non-contiguous tensor), or nullopt where no view of its storage has
/// those sizes: reshape then copies and view is an error. Sizes and strides must be
/// constants unless the tensor is row-major; the same element count is the caller's.
std::optional<llvm::SmallVector<mlir::AffineExpr>>
viewStrides(llvm::ArrayRef<mlir::AffineExpr> sizes, llvm::ArrayRef<mlir::AffineExpr> strides,
            llvm::ArrayRef<mlir::AffineExpr> newSizes, mlir::MLIRContext *ctx);

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
