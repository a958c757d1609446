// Metadata inference for tgc ops, one function per op family.
//
// Each op's InferTypeOpInterface::inferReturnTypes calls one of these, so readers, the
// verifier and builders all agree on result sizes, strides and dtypes.
#ifndef TGC_DIALECT_INFERENCE_H
#define TGC_DIALECT_INFERENCE_H

#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Value.h"
#include "mlir/Support/LLVM.h"
#include <optional>

namespace tgc {
class ShapeAttr;
class DeviceAttr;

using InferLoc = std::optional<mlir::Location>;
using TypeList = llvm::SmallVectorImpl<mlir::Type>;

/// How an elementwise op picks its result dtype from its promoted operands.
enum class ResultDType {
  Promoted,      ///< torch.result_type of the operands.
  FloatPromoted, ///< as Promoted, but integer results become the default float.
  Bool,          ///< comparisons: i1.
};
enum class MatmulKind { Mm, Bmm, Matmul };
enum class ReductionKind { sum, mean, amax, amin, var, any, all, prod };

mlir::LogicalResult inferElementwise(mlir::MLIRContext *ctx, InferLoc loc,
                                     mlir::ValueRange operands, ResultDType rule, TypeList &types);
mlir::LogicalResult inferWhere(mlir::MLIRContext *ctx, InferLoc loc, mlir::Value condition,
                               mlir::Value self, mlir::Value other, TypeList &types);
mlir::LogicalResult inferMaskedFill(mlir::MLIRContext *ctx, InferLoc loc, mlir::Value self,
                                    mlir::Value mask, TypeList &types);
mlir::LogicalResult inferToDType(mlir::MLIRContext *ctx, InferLoc loc, mlir::Value self,
                                 mlir::TypeAttr dtype, TypeList &types,
                                 mlir::StringAttr memoryFormat = {});
mlir::LogicalResult inferLinear(mlir::MLIRContext *ctx, InferLoc loc, mlir::Value input,
                                mlir::Value weight, mlir::Value bias, TypeList &types);
mlir::LogicalResult inferMatmul(mlir::MLIRContext *ctx, InferLoc loc, mlir::Value lhs,
                                mlir::Value rhs, MatmulKind kind, TypeList &types);
/// addmm (kind Mm) and baddbmm (kind Bmm): the product's sizes, `self` broadcasting.
mlir::LogicalResult inferAddmm(mlir::MLIRContext *ctx, InferLoc loc, mlir::Value self,
                               mlir::Value mat1, mlir::Value mat2, TypeList &types,
                               MatmulKind kind = MatmulKind::Mm);
/// repeat_interleave.self_int: `dim` `repeats` times longer (the flattened input
/// without `dim`).
mlir::LogicalResult inferRepeatInterleave(mlir::MLIRContext *ctx, InferLoc loc, mlir::Value self,
                                          int64_t repeats, mlir::IntegerAttr dim, TypeList &types);
mlir::LogicalResult inferConvolution(mlir::MLIRContext *ctx, InferLoc loc, mlir::Value input,
                                     mlir::Value weight, llvm::ArrayRef<int64_t> stride,
                                     llvm::ArrayRef<int64_t> padding,
                                     llvm::ArrayRef<int64_t> dilation, bool transposed,
                                     mlir::DenseI64ArrayAttr outputPadding, int64_t groups,
                                     TypeList &types);
mlir::LogicalResult inferBatchNorm(mlir::MLIRContext *ctx, InferLoc loc, mlir::Value input,
                                   bool training, bool functional, TypeList &types);
mlir::LogicalResult inferLayerNorm(mlir::MLIRContext *ctx, InferLoc loc, mlir::Value input,
                                   llvm::ArrayRef<int64_t> normalizedShape, bool native,
                                   TypeList &types);
/// group_norm: the output, and with `native` mean and rstd [N, group].
mlir::LogicalResult inferGroupNorm(mlir::MLIRContext *ctx, InferLoc loc, mlir::Value input,
                                   int64_t group, bool native, TypeList &types);
/// Gradients of layer norm (`normalizedShape`: the weight's sizes) and group norm
/// (empty: the weight is [C]): grad_input like `input`, grad_weight and grad_bias.
mlir::LogicalResult inferNormBackward(mlir::MLIRContext *ctx, InferLoc loc, mlir::Value gradOut,
                                      mlir::Value input, llvm::ArrayRef<int64_t> normalizedShape,
                                      TypeList &types);
mlir::LogicalResult inferSoftmax(mlir::MLIRContext *ctx, InferLoc loc, mlir::Value self,
                                 int64_t dim, mlir::TypeAttr dtype, TypeList &types);
mlir::LogicalResult inferCumsum(mlir::MLIRContext *ctx, InferLoc loc, mlir::Value self, int64_t dim,
                                mlir::TypeAttr dtype, TypeList &types);
mlir::LogicalResult inferReduction(mlir::MLIRContext *ctx, InferLoc loc, mlir::Value self,
                                   mlir::DenseI64ArrayAttr dims, bool keepdim, mlir::TypeAttr dtype,
                                   ReductionKind kind, TypeList &types);
/// max.dim/min.dim (values and int64 indices, `withValues`) and argmax/argmin (indices
/// only; over every dimension when `dim` is null).
mlir::LogicalResult inferArgReduction(mlir::MLIRContext *ctx, InferLoc loc, mlir::Value self,
                                      mlir::IntegerAttr dim, bool keepdim, bool withValues,
                                      TypeList &types);
mlir::LogicalResult inferView(mlir::MLIRContext *ctx, InferLoc loc, mlir::Value self,
                              ShapeAttr size, TypeList &types);
mlir::LogicalResult inferPermute(mlir::MLIRContext *ctx, InferLoc loc, mlir::Value self,
                                 llvm::ArrayRef<int64_t> dims, TypeList &types);
mlir::LogicalResult inferTranspose(mlir::MLIRContext *ctx, InferLoc loc, mlir::Value self,
                                   int64_t dim0, int64_t dim1, TypeList &types);
mlir::LogicalResult inferExpand(mlir::MLIRContext *ctx, InferLoc loc, mlir::Value self,
                                ShapeAttr size, TypeList &types);
mlir::LogicalResult inferUnsqueeze(mlir::MLIRContext *ctx, InferLoc loc, mlir::Value self,
                                   int64_t dim, TypeList &types);
mlir::LogicalResult inferSqueeze(mlir::MLIRContext *ctx, InferLoc loc, mlir::Value self,
                                 mlir::DenseI64ArrayAttr dims, TypeList &types);
mlir::LogicalResult inferSlice(mlir::MLIRContext *ctx, InferLoc loc, mlir::Value self, int64_t dim,
                               ShapeAttr start, ShapeAttr end, int64_t step, TypeList &types);
mlir::LogicalResult inferUnbind(mlir::MLIRContext *ctx, InferLoc loc, mlir::Value self, int64_t dim,
                                TypeList &types);
mlir::LogicalResult inferSelect(mlir::MLIRContext *ctx, InferLoc loc, mlir::Value self, int64_t dim,
                                int64_t index, TypeList &types);
mlir::LogicalResult inferAlias(mlir::MLIRContext *ctx, InferLoc loc, mlir::Value self,
                               TypeList &types);
/// detach: an alias that does not require grad.
mlir::LogicalResult inferDetach(mlir::MLIRContext *ctx, InferLoc loc, mlir::Value self,
                                TypeList &types);
mlir::LogicalResult inferSplit(mlir::MLIRContext *ctx, InferLoc loc, mlir::Value self,
                               llvm::ArrayRef<int64_t> splitSizes, int64_t dim, TypeList &types);
mlir::LogicalResult inferClone(mlir::MLIRContext *ctx, InferLoc loc, mlir::Value self,
                               TypeList &types, mlir::StringAttr memoryFormat = {});
mlir::LogicalResult inferFull(mlir::MLIRContext *ctx, InferLoc loc, ShapeAttr size,
                              mlir::Attribute fillValue, mlir::TypeAttr dtype, DeviceAttr device,
                              TypeList &types);
mlir::LogicalResult inferFullLike(mlir::MLIRContext *ctx, InferLoc loc, mlir::Value self,
                                  mlir::TypeAttr dtype, TypeList &types,
                                  mlir::StringAttr memoryFormat = {});
mlir::LogicalResult inferArange(mlir::MLIRContext *ctx, InferLoc loc, mlir::Attribute start,
                                mlir::Attribute end, mlir::Attribute step, mlir::TypeAttr dtype,
                                DeviceAttr device, TypeList &types);
mlir::LogicalResult inferConstant(mlir::MLIRContext *ctx, InferLoc loc, mlir::ElementsAttr value,
                                  TypeList &types);

mlir::LogicalResult inferRepeat(mlir::MLIRContext *ctx, InferLoc loc, mlir::Value self,
                                llvm::ArrayRef<int64_t> repeats, TypeList &types);
mlir::LogicalResult inferAsStrided(mlir::MLIRContext *ctx, InferLoc loc, mlir::Value self,
                                   ShapeAttr size, ShapeAttr stride, ShapeAttr storageOffset,
                                   TypeList &types);
/// Whether as_strided(self, size, stride, storageOffset) reads `self`'s elements in
/// `self`'s own order: the same sizes, offset and (for dimensions of size > 1) strides.
bool isAsStridedRestride(mlir::Value self, ShapeAttr size, ShapeAttr stride,
                         ShapeAttr storageOffset);
mlir::LogicalResult inferRoll(mlir::MLIRContext *ctx, InferLoc loc, mlir::Value self,
                              llvm::ArrayRef<int64_t> shifts, llvm::ArrayRef<int64_t> dims,
                              TypeList &types);
mlir::LogicalResult inferUpsample(mlir::MLIRContext *ctx, InferLoc loc, mlir::Value input,
                                  mlir::DenseI64ArrayAttr outputSize,
                                  mlir::DenseF64ArrayAttr scaleFactors, llvm::StringRef mode,
                                  TypeList &types);
mlir::LogicalResult inferPad(mlir::MLIRContext *ctx, InferLoc loc, mlir::Value self,
                             llvm::ArrayRef<int64_t> pad, llvm::StringRef mode, TypeList &types);
mlir::LogicalResult inferDiff(mlir::MLIRContext *ctx, InferLoc loc, mlir::Value self, int64_t n,
                              int64_t dim, mlir::Value prepend, mlir::Value append,
                              TypeList &types);
mlir::LogicalResult inferEinsum(mlir::MLIRContext *ctx, InferLoc loc, llvm::StringRef equation,
                                mlir::ValueRange tensors, TypeList &types);
mlir::LogicalResult inferCat(mlir::MLIRContext *ctx, InferLoc loc, mlir::ValueRange tensors,
                             int64_t dim, bool stack, TypeList &types);
/// Whether cat skips `piece` (ATen's legacy rule): a 1-d tensor of size 0 is left out
/// whatever the other operands' rank, as when a model concatenates its first keys onto
/// an empty cache. It still takes part in the result's dtype.
bool isSkippedByCat(BaseTensorType piece);
mlir::LogicalResult inferAttention(mlir::MLIRContext *ctx, InferLoc loc, mlir::Value query,
                                   mlir::Value key, mlir::Value value, bool withLogsumexp,
                                   TypeList &types);
mlir::LogicalResult inferAttentionBackward(mlir::MLIRContext *ctx, InferLoc loc, mlir::Value query,
                                           mlir::Value key, mlir::Value value, bool withMaskGrad,
                                           TypeList &types);
mlir::LogicalResult inferPool2d(mlir::MLIRContext *ctx, InferLoc loc, mlir::Value self,
                                llvm::ArrayRef<int64_t> kernel, llvm::ArrayRef<int64_t> stride,
                                llvm::ArrayRef<int64_t> padding, llvm::ArrayRef<int64_t> dilation,
                                bool ceilMode, bool withIndices, TypeList &types);
/// Pooling of the last `spatial` dimensions (the input has one or two more).
mlir::LogicalResult inferPool(mlir::MLIRContext *ctx, InferLoc loc, mlir::Value self,
                              unsigned spatial, llvm::ArrayRef<int64_t> kernel,
                              llvm::ArrayRef<int64_t> stride, llvm::ArrayRef<int64_t> padding,
                              llvm::ArrayRef<int64_t> dilation, bool ceilMode, bool withIndices,
                              TypeList &types);
mlir::LogicalResult inferAdaptivePool(mlir::MLIRContext *ctx, InferLoc loc, mlir::Value self,
                                      llvm::ArrayRef<int64_t> outputSize, TypeList &types);
mlir::LogicalResult inferAdaptivePoolBackward(mlir::MLIRContext *ctx, InferLoc loc,
                                              mlir::Value gradOutput, mlir::Value self,
                                              TypeList &types);

/// Which operand of a convolution a backward op differentiates.
enum class ConvolutionGradient { Input, Weight };

/// convolution_backward_input/_weight: `other` is the weight (Input) or the input
/// (Weight); `size` the sizes of the other one, which the result has.
mlir::LogicalResult inferConvolutionBackward(mlir::MLIRContext *ctx, InferLoc loc,
                                             mlir::Value gradOutput, mlir::Value other,
                                             ShapeAttr size, llvm::ArrayRef<int64_t> stride,
                                             llvm::ArrayRef<int64_t> padding,
                                             llvm::ArrayRef<int64_t> dilation, int64_t groups,
                                             ConvolutionGradient which, TypeList &types);
/// convolution_backward: gradients like `input` and `weight`, and the bias's [F].
mlir::LogicalResult inferConvolutionBackwardAll(mlir::MLIRContext *ctx, InferLoc loc,
                                                mlir::Value gradOutput, mlir::Value input,
                                                mlir::Value weight, TypeList &types);
/// masked_scatter: `self` and `mask` broadcast together, in `self`'s dtype.
mlir::LogicalResult inferMaskedScatter(mlir::MLIRContext *ctx, InferLoc loc, mlir::Value self,
                                       mlir::Value mask, mlir::Value source, TypeList &types);
mlir::LogicalResult inferCdist(mlir::MLIRContext *ctx, InferLoc loc, mlir::Value x1, mlir::Value x2,
                               TypeList &types);
mlir::LogicalResult inferPdist(mlir::MLIRContext *ctx, InferLoc loc, mlir::Value self,
                               TypeList &types);
mlir::LogicalResult inferCol2Im(mlir::MLIRContext *ctx, InferLoc loc, mlir::Value self,
                                llvm::ArrayRef<int64_t> outputSize, llvm::ArrayRef<int64_t> kernel,
                                llvm::ArrayRef<int64_t> dilation, llvm::ArrayRef<int64_t> padding,
                                llvm::ArrayRef<int64_t> stride, TypeList &types);
/// nll_loss (with its total weight) and cross_entropy_loss (without).
/// mse_loss, l1_loss, ... (Tgc_PointwiseLossOp): `operands` are self, target and the
/// optional weights, which broadcast together; a scalar unless `reduction` is 0 (none).
mlir::LogicalResult inferPointwiseLoss(mlir::MLIRContext *ctx, InferLoc loc,
                                       mlir::ValueRange operands, int64_t reduction,
                                       TypeList &types);
mlir::LogicalResult inferNllLoss(mlir::MLIRContext *ctx, InferLoc loc, mlir::Value self,
                                 mlir::Value target, mlir::Value weight, int64_t reduction,
                                 bool withTotalWeight, TypeList &types);
mlir::LogicalResult inferNllLossBackward(mlir::MLIRContext *ctx, InferLoc loc,
                                         mlir::Value gradOutput, mlir::Value self,
                                         mlir::Value target, mlir::Value weight,
                                         mlir::Value totalWeight, int64_t reduction,
                                         TypeList &types);
mlir::LogicalResult inferIndexSelect(mlir::MLIRContext *ctx, InferLoc loc, mlir::Value self,
                                     int64_t dim, mlir::Value index, TypeList &types);
mlir::LogicalResult inferIndex(mlir::MLIRContext *ctx, InferLoc loc, mlir::Value self,
                               mlir::ValueRange indices, mlir::DenseI64ArrayAttr dims,
                               TypeList &types);
/// The scatter family: the result is `self`'s; `index` and `src` (null for a scalar
/// value) have its rank.
mlir::LogicalResult inferScatter(mlir::MLIRContext *ctx, InferLoc loc, mlir::Value self,
                                 int64_t dim, mlir::Value index, mlir::Value src, TypeList &types);
mlir::LogicalResult inferHistc(mlir::MLIRContext *ctx, InferLoc loc, mlir::Value self, int64_t bins,
                               double min, double max, TypeList &types);
mlir::LogicalResult inferGroupedMm(mlir::MLIRContext *ctx, InferLoc loc, mlir::Value input,
                                   mlir::Value weight, mlir::Value offs, TypeList &types);
mlir::LogicalResult inferFlip(mlir::MLIRContext *ctx, InferLoc loc, mlir::Value self,
                              llvm::ArrayRef<int64_t> dims, TypeList &types);
mlir::LogicalResult inferDiagonal(mlir::MLIRContext *ctx, InferLoc loc, mlir::Value self,
                                  int64_t offset, int64_t dim1, int64_t dim2, TypeList &types);
/// sort (k absent) and topk: values like `self` (k along `dim`) and int64 indices.
mlir::LogicalResult inferSortTopk(mlir::MLIRContext *ctx, InferLoc loc, mlir::Value self,
                                  int64_t dim, std::optional<int64_t> k, TypeList &types);
mlir::LogicalResult inferGather(mlir::MLIRContext *ctx, InferLoc loc, mlir::Value self, int64_t dim,
                                mlir::Value index, TypeList &types);
mlir::LogicalResult inferEmbedding(mlir::MLIRContext *ctx, InferLoc loc, mlir::Value weight,
                                   mlir::Value indices, TypeList &types);
mlir::LogicalResult inferEmbeddingBackward(mlir::MLIRContext *ctx, InferLoc loc,
                                           mlir::Value gradOutput, mlir::Value indices,
                                           int64_t numWeights, TypeList &types);
/// _embedding_bag: the bags [B, D] and the bookkeeping results, sized as ATen's CPU
/// kernel (and its meta function) sizes them.
mlir::LogicalResult inferEmbeddingBag(mlir::MLIRContext *ctx, InferLoc loc, mlir::Value weight,
                                      mlir::Value indices, mlir::Value offsets,
                                      mlir::Value perSampleWeights, int64_t mode,
                                      bool includeLastOffset, int64_t paddingIdx, TypeList &types);
/// affine_grid_generator: [N, spatial..., k] from theta [N, k, k + 1].
mlir::LogicalResult inferAffineGrid(mlir::MLIRContext *ctx, InferLoc loc, mlir::Value theta,
                                    llvm::ArrayRef<int64_t> size, TypeList &types);
/// grid_sampler_2d: [N, C, Ho, Wo] from input [N, C, H, W] and grid [N, Ho, Wo, 2].
mlir::LogicalResult inferGridSampler2d(mlir::MLIRContext *ctx, InferLoc loc, mlir::Value input,
                                       mlir::Value grid, int64_t interpolationMode,
                                       int64_t paddingMode, TypeList &types);
mlir::LogicalResult inferNativeDropout(mlir::MLIRContext *ctx, InferLoc loc, mlir::Value input,
                                       TypeList &types);
/// item / _local_scalar_dense: the Python number type of `self`'s one element.
mlir::LogicalResult inferItem(mlir::MLIRContext *ctx, InferLoc loc, mlir::Value self,
                              TypeList &types);
/// rand/randn: float numbers of `size` (f32 unless `dtype` says otherwise).
mlir::LogicalResult inferRand(mlir::MLIRContext *ctx, InferLoc loc, ShapeAttr size,
                              mlir::TypeAttr dtype, DeviceAttr device, TypeList &types);
/// randperm: [n] positions (int64 unless `dtype` says otherwise).
mlir::LogicalResult inferRandperm(mlir::MLIRContext *ctx, InferLoc loc, int64_t n,
                                  mlir::TypeAttr dtype, DeviceAttr device, TypeList &types);
/// rand_draw: float numbers of `size` and `dtype` from the RNG `state`.
mlir::LogicalResult inferRandDraw(mlir::MLIRContext *ctx, InferLoc loc, mlir::Value state,
                                  ShapeAttr size, mlir::Type dtype, TypeList &types);
mlir::LogicalResult inferRandBernoulli(mlir::MLIRContext *ctx, InferLoc loc, mlir::Value state,
                                       ShapeAttr size, double p, TypeList &types);
/// max_pool2d_backward (with `indices`) and avg_pool2d_backward (without).
mlir::LogicalResult
inferPool2dBackward(mlir::MLIRContext *ctx, InferLoc loc, mlir::Value gradOutput, mlir::Value self,
                    mlir::Value indices, llvm::ArrayRef<int64_t> kernel,
                    llvm::ArrayRef<int64_t> stride, llvm::ArrayRef<int64_t> padding,
                    llvm::ArrayRef<int64_t> dilation, bool ceilMode, TypeList &types);

/// Pooling/convolution window parameters expanded to one entry per spatial dimension
/// (a single value applies to all; an empty stride means the kernel size).
struct Window {
  llvm::SmallVector<int64_t, 2> kernel, stride, padding, dilation;
};
mlir::FailureOr<Window> expandWindow(InferLoc loc, llvm::ArrayRef<int64_t> kernel,
                                     llvm::ArrayRef<int64_t> stride,
                                     llvm::ArrayRef<int64_t> padding,
                                     llvm::ArrayRef<int64_t> dilation, unsigned spatial);

/// A slice bound resolved as Python does: absent means 0 (start) or the size (end),
/// negative counts from the end, and the result is clamped to [0, size].
mlir::AffineExpr resolveSliceBound(ShapeAttr bound, mlir::AffineExpr size, bool isEnd,
                                   mlir::MLIRContext *ctx);

} // namespace tgc

#endif // TGC_DIALECT_INFERENCE_H
