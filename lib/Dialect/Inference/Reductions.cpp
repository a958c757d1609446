// Metadata inference of reductions: normalization, softmax, sum/mean/var/...,
// and the nll_loss family.
#include "Helpers.h"

using namespace mlir;
using namespace tgc;
using namespace tgc::inference;

LogicalResult tgc::inferBatchNorm(MLIRContext *ctx, InferLoc loc, Value input, bool training,
                                  bool functional, TypeList &types) {
  BaseTensorType x = tensorOf(input);
  if (failed(requireTensor(loc, x, "input")))
    return failure();
  if (x.getRank() < 2)
    return emitOptionalError(loc, "batch_norm expects an input of rank >= 2");
  AffineExpr channels = x.getSizes()[1];
  TensorMeta output = freshLike(x, x.getSizes());
  output.strides = suggestedLayout(x.getSizes(), {x});
  addResult(ctx, x.isRef(), output, types);
  SmallVector<AffineExpr> statSizes = {training ? channels : cst(0, ctx)};
  TensorMeta stat = freshLike(x, statSizes);
  addResult(ctx, x.isRef(), stat, types);
  addResult(ctx, x.isRef(), stat, types);
  if (functional) {
    // The new running statistics are in the computation dtype (f32 for bf16/f16
    // inputs), as ATen's functional batch norm returns them.
    TensorMeta running = freshLike(x, {channels});
    if (running.dtype.isBF16() || running.dtype.isF16())
      running.dtype = Float32Type::get(ctx);
    running.requiresGrad = false;
    addResult(ctx, x.isRef(), running, types);
    addResult(ctx, x.isRef(), running, types);
  }
  return success();
}

LogicalResult tgc::inferLayerNorm(MLIRContext *ctx, InferLoc loc, Value input,
                                  ArrayRef<int64_t> normalizedShape, bool native, TypeList &types) {
  BaseTensorType x = tensorOf(input);
  if (failed(requireTensor(loc, x, "input")))
    return failure();
  int64_t n = normalizedShape.size(), rank = x.getRank();
  if (n > rank)
    return emitOptionalError(loc, "layer_norm: normalized_shape is longer than the input rank");
  for (int64_t i = 0; i < n; ++i)
    if (getConstantSize(x.getSizes()[rank - n + i]) != normalizedShape[i])
      return emitOptionalError(loc, "layer_norm: normalized_shape does not match the input's "
                                    "trailing sizes");
  addResult(ctx, x.isRef(), freshLike(x, x.getSizes()), types);
  if (!native)
    return success();
  SmallVector<AffineExpr> statSizes(x.getSizes());
  for (int64_t i = rank - n; i < rank; ++i)
    statSizes[i] = cst(1, ctx);
  addResult(ctx, x.isRef(), freshLike(x, statSizes), types);
  addResult(ctx, x.isRef(), freshLike(x, statSizes), types);
  return success();
}

LogicalResult tgc::inferGroupNorm(MLIRContext *ctx, InferLoc loc, Value input, int64_t group,
                                  bool native, TypeList &types) {
  BaseTensorType x = tensorOf(input);
  if (failed(requireTensor(loc, x, "input")))
    return failure();
  if (x.getRank() < 2)
    return emitOptionalError(loc, "group_norm expects an input of rank >= 2");
  std::optional<int64_t> channels = getConstantSize(x.getSizes()[1]);
  if (group < 1 || (channels && *channels % group != 0))
    return emitOptionalError(loc, "group_norm: ", group, " groups do not divide the channels");
  TensorMeta output = freshLike(x, x.getSizes());
  output.strides = suggestedLayout(x.getSizes(), {x});
  addResult(ctx, x.isRef(), output, types);
  if (!native)
    return success();
  TensorMeta stat = freshLike(x, {x.getSizes()[0], cst(group, ctx)});
  addResult(ctx, x.isRef(), stat, types);
  addResult(ctx, x.isRef(), stat, types);
  return success();
}

LogicalResult tgc::inferNormBackward(MLIRContext *ctx, InferLoc loc, Value gradOut, Value input,
                                     ArrayRef<int64_t> normalizedShape, TypeList &types) {
  BaseTensorType g = tensorOf(gradOut), x = tensorOf(input);
  if (failed(requireTensor(loc, g, "grad_out")) || failed(requireTensor(loc, x, "input")))
    return failure();
  if (!sameSizes(g.getSizes(), x.getSizes()))
    return emitOptionalError(loc, "norm backward: grad_out has sizes ", sizesStr(g.getSizes()),
                             " but the input ", sizesStr(x.getSizes()));
  if (x.getRank() < 2 && normalizedShape.empty())
    return emitOptionalError(loc, "group_norm backward expects an input of rank >= 2");
  SmallVector<AffineExpr> param;
  for (int64_t size : normalizedShape)
    param.push_back(cst(size, ctx));
  if (normalizedShape.empty())
    param.push_back(x.getSizes()[1]);
  TensorMeta gradInput = freshLike(x, x.getSizes());
  gradInput.requiresGrad = anyRequiresGrad({g, x});
  addResult(ctx, x.isRef(), gradInput, types);
  TensorMeta gradParam = freshLike(x, param);
  gradParam.requiresGrad = gradInput.requiresGrad;
  addResult(ctx, x.isRef(), gradParam, types);
  addResult(ctx, x.isRef(), gradParam, types);
  return success();
}

LogicalResult tgc::inferSoftmax(MLIRContext *ctx, InferLoc loc, Value self, int64_t dim,
                                TypeAttr dtype, TypeList &types) {
  BaseTensorType x = tensorOf(self);
  if (failed(requireTensor(loc, x, "self")) || failed(dimIn(loc, dim, x.getRank())))
    return failure();
  TensorMeta meta = freshLike(x, x.getSizes());
  if (dtype)
    meta.dtype = dtype.getValue();
  if (getCategory(meta.dtype) != DTypeCategory::Floating)
    return emitOptionalError(loc, "softmax needs a floating-point dtype, got ", meta.dtype);
  addResult(ctx, x.isRef(), meta, types);
  return success();
}

LogicalResult tgc::inferCumsum(MLIRContext *ctx, InferLoc loc, Value self, int64_t dim,
                               TypeAttr dtype, TypeList &types) {
  BaseTensorType x = tensorOf(self);
  if (failed(requireTensor(loc, x, "self")) ||
      failed(dimIn(loc, dim, std::max<int64_t>(x.getRank(), 1))))
    return failure();
  TensorMeta meta = freshLike(x, x.getSizes());
  if (dtype)
    meta.dtype = dtype.getValue();
  else if (getCategory(meta.dtype) != DTypeCategory::Floating)
    meta.dtype = IntegerType::get(ctx, 64);
  addResult(ctx, x.isRef(), meta, types);
  return success();
}

LogicalResult tgc::inferReduction(MLIRContext *ctx, InferLoc loc, Value self,
                                  DenseI64ArrayAttr dims, bool keepdim, TypeAttr dtype,
                                  ReductionKind kind, TypeList &types) {
  BaseTensorType x = tensorOf(self);
  if (failed(requireTensor(loc, x, "self")))
    return failure();
  int64_t rank = x.getRank();
  SmallVector<bool> reduced(rank, !dims || dims.empty());
  if (dims)
    for (int64_t d : dims.asArrayRef()) {
      FailureOr<int64_t> nd = dimIn(loc, d, rank);
      if (failed(nd))
        return failure();
      if (rank > 0)
        reduced[*nd] = true;
    }
  SmallVector<AffineExpr> sizes;
  for (int64_t i = 0; i < rank; ++i) {
    if (!reduced[i])
      sizes.push_back(x.getSizes()[i]);
    else if (keepdim)
      sizes.push_back(cst(1, ctx));
  }
  TensorMeta meta = freshLike(x, sizes);
  if (dtype)
    meta.dtype = dtype.getValue();
  else if ((kind == ReductionKind::sum || kind == ReductionKind::prod) &&
           getCategory(meta.dtype) != DTypeCategory::Floating)
    meta.dtype = IntegerType::get(ctx, 64);
  if (kind == ReductionKind::any || kind == ReductionKind::all) {
    meta.dtype = IntegerType::get(ctx, 1);
    meta.requiresGrad = false;
  }
  if ((kind == ReductionKind::mean || kind == ReductionKind::var) &&
      getCategory(meta.dtype) != DTypeCategory::Floating)
    return emitOptionalError(loc, "mean/var need a floating-point dtype, got ", meta.dtype);
  addResult(ctx, x.isRef(), meta, types);
  return success();
}

LogicalResult tgc::inferArgReduction(MLIRContext *ctx, InferLoc loc, Value self, IntegerAttr dim,
                                     bool keepdim, bool withValues, TypeList &types) {
  BaseTensorType x = tensorOf(self);
  if (failed(requireTensor(loc, x, "self")))
    return failure();
  int64_t rank = x.getRank();
  std::optional<int64_t> reducedDim;
  if (dim) {
    FailureOr<int64_t> d = dimIn(loc, dim.getInt(), rank);
    if (failed(d))
      return failure();
    reducedDim = *d;
  }
  SmallVector<AffineExpr> sizes;
  for (int64_t i = 0; i < rank; ++i) {
    bool reduced = !reducedDim || *reducedDim == i;
    if (reduced && !keepdim)
      continue;
    std::optional<int64_t> size = getConstantSize(x.getSizes()[i]);
    if (reduced && size && *size == 0)
      return emitOptionalError(loc, "cannot take the extremum of an empty dimension ", i);
    sizes.push_back(reduced ? cst(1, ctx) : x.getSizes()[i]);
  }
  if (withValues)
    addResult(ctx, x.isRef(), freshLike(x, sizes), types);
  addResult(ctx, x.isRef(), indicesLike(x, sizes), types);
  return success();
}

/// The sizes of `self` without its class dimension (1, or 0 for a 1-d `self`).
static SmallVector<AffineExpr> withoutClassDim(BaseTensorType self) {
  SmallVector<AffineExpr> sizes(self.getSizes());
  sizes.erase(sizes.begin() + (self.getRank() == 1 ? 0 : 1));
  return sizes;
}

/// Checks nll_loss's operands; returns the sizes of the unreduced loss.
static FailureOr<SmallVector<AffineExpr>> checkNllOperands(InferLoc loc, BaseTensorType x,
                                                           BaseTensorType t, BaseTensorType w,
                                                           int64_t reduction,
                                                           bool allowProbabilities) {
  if (failed(requireTensor(loc, x, "self")) || failed(requireTensor(loc, t, "target")))
    return failure();
  if (x.getRank() < 1)
    return emitOptionalError(loc, "nll_loss: self must have a class dimension");
  if (getCategory(x.getDtype()) != DTypeCategory::Floating)
    return emitOptionalError(loc, "nll_loss: self must be floating-point, got ", x.getDtype());
  if (reduction < 0 || reduction > 2)
    return emitOptionalError(loc,
                             "nll_loss: reduction must be 0 (none), 1 (mean) or 2 (sum), "
                             "got ",
                             reduction);
  SmallVector<AffineExpr> lossSizes = withoutClassDim(x);
  bool probabilities = getCategory(t.getDtype()) == DTypeCategory::Floating;
  if (probabilities && !(allowProbabilities && sameSizes(t.getSizes(), x.getSizes())))
    return emitOptionalError(loc, "nll_loss: target must hold class indices of sizes ",
                             sizesStr(lossSizes));
  if (!probabilities && getCategory(t.getDtype()) != DTypeCategory::Integer)
    return emitOptionalError(loc, "nll_loss: target must be an integer tensor, got ", t.getDtype());
  if (!probabilities && !sameSizes(t.getSizes(), lossSizes))
    return emitOptionalError(loc, "nll_loss: target has sizes ", sizesStr(t.getSizes()),
                             " but self without its class dimension has ", sizesStr(lossSizes));
  AffineExpr classes = x.getSizes()[x.getRank() == 1 ? 0 : 1];
  if (w && (w.getRank() != 1 || w.getSizes()[0] != classes))
    return emitOptionalError(loc, "nll_loss: weight must have one entry per class (",
                             exprStr(classes), ")");
  return lossSizes;
}

LogicalResult tgc::inferPointwiseLoss(MLIRContext *ctx, InferLoc loc, ValueRange operands,
                                      int64_t reduction, TypeList &types) {
  if (reduction < 0 || reduction > 2)
    return emitOptionalError(loc, "reduction must be 0 (none), 1 (mean) or 2 (sum), not ",
                             reduction);
  SmallVector<Type, 1> elementwise;
  if (failed(inferElementwise(ctx, loc, operands, ResultDType::FloatPromoted, elementwise)))
    return failure();
  if (reduction == 0) {
    types.append(elementwise.begin(), elementwise.end());
    return success();
  }
  auto loss = llvm::cast<BaseTensorType>(elementwise.front());
  TensorMeta meta = freshLike(loss, {});
  meta.requiresGrad = loss.getMeta().requiresGrad;
  addResult(ctx, loss.isRef(), meta, types);
  return success();
}

LogicalResult tgc::inferNllLoss(MLIRContext *ctx, InferLoc loc, Value self, Value target,
                                Value weight, int64_t reduction, bool withTotalWeight,
                                TypeList &types) {
  BaseTensorType x = tensorOf(self), t = tensorOf(target), w = tensorOf(weight);
  FailureOr<SmallVector<AffineExpr>> lossSizes =
      checkNllOperands(loc, x, t, w, reduction, /*allowProbabilities=*/!withTotalWeight);
  if (failed(lossSizes))
    return failure();
  TensorMeta meta =
      freshLike(x, reduction == 0 ? ArrayRef<AffineExpr>(*lossSizes) : ArrayRef<AffineExpr>{});
  meta.requiresGrad = anyRequiresGrad({x, w});
  addResult(ctx, x.isRef(), meta, types);
  if (withTotalWeight) {
    TensorMeta total = freshLike(x, {});
    total.requiresGrad = false;
    addResult(ctx, x.isRef(), total, types);
  }
  return success();
}

LogicalResult tgc::inferNllLossBackward(MLIRContext *ctx, InferLoc loc, Value gradOutput,
                                        Value self, Value target, Value weight, Value totalWeight,
                                        int64_t reduction, TypeList &types) {
  BaseTensorType g = tensorOf(gradOutput), x = tensorOf(self), t = tensorOf(target),
                 w = tensorOf(weight), total = tensorOf(totalWeight);
  FailureOr<SmallVector<AffineExpr>> lossSizes =
      checkNllOperands(loc, x, t, w, reduction, /*allowProbabilities=*/false);
  if (failed(lossSizes) || failed(requireTensor(loc, g, "grad_output")) ||
      failed(requireTensor(loc, total, "total_weight")))
    return failure();
  if (!sameSizes(g.getSizes(),
                 reduction == 0 ? ArrayRef<AffineExpr>(*lossSizes) : ArrayRef<AffineExpr>{}))
    return emitOptionalError(loc, "nll_loss_backward: grad_output has sizes ",
                             sizesStr(g.getSizes()), ", not those of the loss");
  if (total.getRank() != 0)
    return emitOptionalError(loc, "nll_loss_backward: total_weight must be 0-d");
  TensorMeta meta = freshLike(x, x.getSizes());
  meta.requiresGrad = anyRequiresGrad({g, w});
  addResult(ctx, x.isRef(), meta, types);
  return success();
}
