// Metadata inference of elementwise ops: promotion, broadcasting, where, masked_fill,
// to_dtype, native_dropout.
#include "Helpers.h"

using namespace mlir;
using namespace tgc;
using namespace tgc::inference;

/// The strides eager gives an elementwise result of `sizes` over capture-level
/// `operands` (TensorIterator's reorder_dimensions, iteratorOrderStrides; a broadcast
/// dimension, stride 0, tells nothing). Empty (contiguous) when that order is row-major
/// or a size or stride is symbolic.
static SmallVector<AffineExpr> iteratorStrides(MLIRContext *ctx, ValueRange operands,
                                               ArrayRef<AffineExpr> sizes) {
  int64_t rank = sizes.size();
  SmallVector<int64_t> shape;
  for (AffineExpr size : sizes) {
    std::optional<int64_t> c = getConstantSize(size);
    if (!c)
      return {};
    shape.push_back(*c);
  }
  // Each tensor operand's strides broadcast to `sizes` (0 along broadcast dimensions).
  SmallVector<SmallVector<int64_t>> strides;
  for (Value v : operands) {
    BaseTensorType t = tensorOf(v);
    if (!t || !t.isRef())
      continue;
    const TensorMeta &meta = t.getMeta();
    SmallVector<AffineExpr> own = stridesOf(meta, ctx);
    SmallVector<int64_t> broadcast(rank, 0);
    for (int64_t i = 0; i < meta.rank(); ++i) {
      int64_t d = rank - meta.rank() + i;
      std::optional<int64_t> size = getConstantSize(meta.sizes[i]);
      std::optional<int64_t> stride = getConstantSize(own[i]);
      if (!size || !stride)
        return {};
      broadcast[d] = *size == 1 && shape[d] != 1 ? 0 : *stride;
    }
    strides.push_back(std::move(broadcast));
  }
  return iteratorOrderStrides(ctx, shape, strides);
}

LogicalResult tgc::inferElementwise(MLIRContext *ctx, InferLoc loc, ValueRange operands,
                                    ResultDType rule, TypeList &types) {
  BaseTensorType first;
  SmallVector<AffineExpr> sizes;
  SmallVector<PromotionOperand> promotion;
  bool requiresGrad = false;
  for (Value v : operands) {
    promotion.push_back(promotionOperand(v));
    BaseTensorType t = tensorOf(v);
    if (!t)
      continue;
    if (!first)
      first = t;
    FailureOr<SmallVector<AffineExpr>> b = broadcastSizes(sizes, t.getSizes());
    if (failed(b))
      return emitOptionalError(loc, "operand sizes do not broadcast");
    sizes = *b;
    requiresGrad |= t.getMeta().requiresGrad;
  }
  if (!first)
    return emitOptionalError(loc, "expected at least one tensor operand");
  TensorMeta meta = freshLike(first, sizes);
  meta.dtype = promoteTypes(promotion, defaultFloat(ctx));
  if (rule == ResultDType::FloatPromoted && getCategory(meta.dtype) != DTypeCategory::Floating)
    meta.dtype = defaultFloat(ctx);
  if (rule == ResultDType::Bool)
    meta.dtype = IntegerType::get(ctx, 1);
  meta.requiresGrad = requiresGrad && getCategory(meta.dtype) == DTypeCategory::Floating;
  if (first.isRef())
    meta.strides = iteratorStrides(ctx, operands, sizes);
  addResult(ctx, first.isRef(), meta, types);
  return success();
}

LogicalResult tgc::inferWhere(MLIRContext *ctx, InferLoc loc, Value condition, Value self,
                              Value other, TypeList &types) {
  BaseTensorType cond = tensorOf(condition);
  if (failed(requireTensor(loc, cond, "condition")))
    return failure();
  SmallVector<AffineExpr> sizes(cond.getSizes());
  for (Value v : {self, other})
    if (auto t = tensorOf(v)) {
      FailureOr<SmallVector<AffineExpr>> b = broadcastSizes(sizes, t.getSizes());
      if (failed(b))
        return emitOptionalError(loc, "operand sizes do not broadcast");
      sizes = *b;
    }
  TensorMeta meta = freshLike(cond, sizes);
  meta.dtype = promoteTypes({promotionOperand(self), promotionOperand(other)}, defaultFloat(ctx));
  meta.requiresGrad = false;
  for (Value v : {self, other})
    if (auto t = tensorOf(v))
      meta.requiresGrad |= t.getMeta().requiresGrad;
  addResult(ctx, cond.isRef(), meta, types);
  return success();
}

LogicalResult tgc::inferMaskedFill(MLIRContext *ctx, InferLoc loc, Value self, Value mask,
                                   TypeList &types) {
  BaseTensorType t = tensorOf(self), m = tensorOf(mask);
  if (failed(requireTensor(loc, t, "self")) || failed(requireTensor(loc, m, "mask")))
    return failure();
  FailureOr<SmallVector<AffineExpr>> b = broadcastSizes(t.getSizes(), m.getSizes());
  if (failed(b) || *b != SmallVector<AffineExpr>(t.getSizes()))
    return emitOptionalError(loc, "mask does not broadcast to the sizes of self");
  if (!m.getDtype().isInteger(1))
    return emitOptionalError(loc, "mask must be a bool tensor, got ", m.getDtype());
  addResult(ctx, t.isRef(), freshLike(t, t.getSizes()), types);
  return success();
}

LogicalResult tgc::inferToDType(MLIRContext *ctx, InferLoc loc, Value self, TypeAttr dtype,
                                TypeList &types, StringAttr memoryFormat) {
  BaseTensorType t = tensorOf(self);
  if (failed(requireTensor(loc, t, "self")))
    return failure();
  TensorMeta meta = freshLike(t, t.getSizes());
  FailureOr<SmallVector<AffineExpr>> strides = copyStrides(loc, t, memoryFormat);
  if (failed(strides))
    return failure();
  meta.strides = std::move(*strides);
  if (dtype)
    meta.dtype = dtype.getValue();
  meta.requiresGrad &= getCategory(meta.dtype) == DTypeCategory::Floating;
  addResult(ctx, t.isRef(), meta, types);
  return success();
}

LogicalResult tgc::inferNativeDropout(MLIRContext *ctx, InferLoc loc, Value input,
                                      TypeList &types) {
  BaseTensorType x = tensorOf(input);
  if (failed(requireTensor(loc, x, "input")))
    return failure();
  addResult(ctx, x.isRef(), freshLike(x, x.getSizes()), types);
  TensorMeta mask = freshLike(x, x.getSizes());
  mask.dtype = IntegerType::get(ctx, 1);
  mask.requiresGrad = false;
  addResult(ctx, x.isRef(), mask, types);
  return success();
}
