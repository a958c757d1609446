// Lowering of value-level tgc ops to linalg/tensor/arith/math: shared pieces.
#ifndef TGC_CONVERSION_TGCTOLINALG_H
#define TGC_CONVERSION_TGCTOLINALG_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Transforms/DialectConversion.h"
#include "tgc/Dialect/TgcDialect.h"

namespace tgc {

/// Where each size symbol of a function can be read at run time: argument `argIndex`,
/// dimension `dim`. Computed before conversion, while argument types still carry the
/// symbolic sizes.
struct SymbolBinding {
  unsigned argIndex;
  unsigned dim;
};
using SymbolBindings = llvm::DenseMap<mlir::Operation *, llvm::SmallVector<SymbolBinding>>;

/// The context lowering patterns share: the type converter and symbol bindings.
class LoweringContext {
public:
  LoweringContext(mlir::TypeConverter &converter, const SymbolBindings &bindings)
      : converter(converter), bindings(bindings) {}

  mlir::TypeConverter &getTypeConverter() const { return converter; }

  /// The builtin tensor type for a tgc tensor type.
  mlir::RankedTensorType convertTensorType(mlir::Type type) const;

  /// An `index` value for size expression `size` at the rewriter's insertion point.
  mlir::FailureOr<mlir::Value> materializeSize(mlir::ConversionPatternRewriter &rewriter,
                                               mlir::Operation *op, mlir::AffineExpr size) const;

  /// The dynamic sizes of `type` (the operands a `tensor.empty` of it needs).
  mlir::FailureOr<llvm::SmallVector<mlir::Value>>
  dynamicSizes(mlir::ConversionPatternRewriter &rewriter, mlir::Operation *op,
               BaseTensorType type) const;

  /// All sizes of `type` as OpFoldResults (attributes where static).
  mlir::FailureOr<llvm::SmallVector<mlir::OpFoldResult>>
  mixedSizes(mlir::ConversionPatternRewriter &rewriter, mlir::Operation *op,
             BaseTensorType type) const;

  /// `tensor.empty` shaped like `type`.
  mlir::FailureOr<mlir::Value> emptyTensor(mlir::ConversionPatternRewriter &rewriter,
                                           mlir::Operation *op, BaseTensorType type) const;

  /// A tensor shaped like `type` filled with `value` (a scalar of its element type).
  mlir::FailureOr<mlir::Value> filledTensor(mlir::ConversionPatternRewriter &rewriter,
                                            mlir::Operation *op, BaseTensorType type,
                                            mlir::Value value) const;

  /// A zero-filled tensor shaped like `type`: the accumulator of a product or sum.
  mlir::FailureOr<mlir::Value> zeroTensor(mlir::ConversionPatternRewriter &rewriter,
                                          mlir::Operation *op, BaseTensorType type) const;

  /// Reshapes `value` to the sizes of `type` (tensor.reshape, any ranks).
  mlir::FailureOr<mlir::Value> reshapeTo(mlir::ConversionPatternRewriter &rewriter,
                                         mlir::Operation *op, mlir::Value value,
                                         BaseTensorType type) const;

private:
  mlir::TypeConverter &converter;
  const SymbolBindings &bindings;
};

/// The tgc tensor type of a (not yet converted) value.
inline BaseTensorType tgcType(mlir::Value v) { return llvm::cast<BaseTensorType>(v.getType()); }

/// Broadcasting copy of `input` (a builtin tensor whose tgc type is `inputType`) into
/// the shape of `resultType`, converting elements to `elementType` when given.
mlir::FailureOr<mlir::Value> broadcastTo(mlir::ConversionPatternRewriter &rewriter,
                                         const LoweringContext &lowering, mlir::Operation *op,
                                         mlir::Value input, BaseTensorType inputType,
                                         BaseTensorType resultType, mlir::Type elementType = {});

/// Indexing map reading an operand of sizes `operandSizes` inside a loop nest over
/// `resultSizes`, with NumPy broadcasting (size-1 dimensions read index 0).
mlir::AffineMap broadcastMap(llvm::ArrayRef<mlir::AffineExpr> operandSizes,
                             llvm::ArrayRef<mlir::AffineExpr> resultSizes, mlir::MLIRContext *ctx);

/// One window position that reads an input element, as `windowGather` hands it to its
/// callback: the input element n, c, h, w, and the output position (oh, ow) whose window
/// reads it at kernel offset (kh, kw). `valid` says whether such an output position
/// exists; when it does not, oh and ow are 0 and kh, kw are in the kernel (safe to
/// read).
struct WindowPosition {
  mlir::Value n, c, h, w, kh, kw, oh, ow, valid;
};

/// The gather form of a windowed op's backward (col2im, pooling backward): a
/// linalg.generic over `init` [N, C, H, W] (parallel) and the window `w` (reduction)
/// adding, at each input element, `contribution(position)` for every output position
/// (oh, ow) < `outputSizes` whose window reads it:
/// h + padding = oh * stride + kh * dilation (likewise w), in decreasing oh, then ow.
/// Invalid positions add 0. Without dilation the reduction runs over the
/// ceil(kernel / stride) windows that can read an element, not over the kernel.
mlir::Value windowGather(
    mlir::OpBuilder &b, mlir::Location loc, mlir::Value init, const Window &w,
    llvm::ArrayRef<int64_t> outputSizes,
    llvm::function_ref<mlir::Value(mlir::OpBuilder &, mlir::Location, const WindowPosition &)>
        contribution);

/// Replaces `op` with a linalg.generic over its result's index space (identity maps for
/// `inputs`) whose body computes each element from the indices and the input elements.
mlir::LogicalResult
lowerIndexGeneric(mlir::ConversionPatternRewriter &rewriter, const LoweringContext &lowering,
                  mlir::Operation *op, mlir::ValueRange inputs,
                  llvm::function_ref<mlir::Value(mlir::OpBuilder &, mlir::Location,
                                                 mlir::ValueRange, mlir::ValueRange)>
                      body);

void populateElementwisePatterns(const LoweringContext &lowering,
                                 mlir::RewritePatternSet &patterns);
void populateLinearAlgebraPatterns(const LoweringContext &lowering,
                                   mlir::RewritePatternSet &patterns);
void populateAttentionPatterns(const LoweringContext &lowering, mlir::RewritePatternSet &patterns);
void populateReductionPatterns(const LoweringContext &lowering, mlir::RewritePatternSet &patterns);
void populateViewPatterns(const LoweringContext &lowering, mlir::RewritePatternSet &patterns);
void populatePoolingPatterns(const LoweringContext &lowering, mlir::RewritePatternSet &patterns);
void populateLossPatterns(const LoweringContext &lowering, mlir::RewritePatternSet &patterns);
void populateIndexingPatterns(const LoweringContext &lowering, mlir::RewritePatternSet &patterns);
void populateRandomPatterns(const LoweringContext &lowering, mlir::RewritePatternSet &patterns);
void populateCreationPatterns(const LoweringContext &lowering, mlir::RewritePatternSet &patterns);
void populateControlFlowPatterns(const LoweringContext &lowering,
                                 mlir::RewritePatternSet &patterns);

/// A conversion pattern for a tgc op with access to the shared lowering context.
template <typename OpTy> struct TgcLoweringPattern : mlir::OpConversionPattern<OpTy> {
  TgcLoweringPattern(const LoweringContext &lowering, mlir::MLIRContext *ctx)
      : mlir::OpConversionPattern<OpTy>(lowering.getTypeConverter(), ctx), lowering(lowering) {}
  const LoweringContext &lowering;
};

} // namespace tgc

#endif // TGC_CONVERSION_TGCTOLINALG_H
