// Metadata inference of elementwise ops: promotion, broadcasting, where, masked_fill,
// to_dtype, native_dropout.
#include "Helpers.h"

using namespace mlir;
using namespace tgc;
using namespace tgc::inference;

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
                                TypeList &types) {
  BaseTensorType t = tensorOf(self);
  if (failed(requireTensor(loc, t, "self")))
    return failure();
  TensorMeta meta = freshLike(t, t.getSizes());
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
