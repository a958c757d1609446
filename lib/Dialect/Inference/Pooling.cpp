// Metadata inference of pooling: windows, max/avg pool2d, adaptive pool2d, and the
// pool2d backward.
#include "Helpers.h"

using namespace mlir;
using namespace tgc;
using namespace tgc::inference;

FailureOr<Window> tgc::expandWindow(InferLoc loc, ArrayRef<int64_t> kernel,
                                    ArrayRef<int64_t> stride, ArrayRef<int64_t> padding,
                                    ArrayRef<int64_t> dilation, unsigned spatial) {
  auto expand = [&](ArrayRef<int64_t> v, ArrayRef<int64_t> dflt,
                    SmallVector<int64_t, 2> &out) -> LogicalResult {
    out.assign(v.begin(), v.end());
    if (out.empty())
      out.assign(dflt.begin(), dflt.end());
    if (out.size() == 1)
      out.assign(spatial, out[0]);
    return success(out.size() == spatial);
  };
  Window w;
  if (failed(expand(kernel, {}, w.kernel)) || failed(expand(stride, w.kernel, w.stride)) ||
      failed(expand(padding, {0}, w.padding)) || failed(expand(dilation, {1}, w.dilation)))
    return emitOptionalError(loc, "pooling window parameters must have 1 or ", spatial, " entries");
  for (unsigned i = 0; i < spatial; ++i)
    if (w.kernel[i] <= 0 || w.stride[i] <= 0 || w.padding[i] < 0 || w.dilation[i] <= 0 ||
        2 * w.padding[i] > w.kernel[i])
      return emitOptionalError(loc, "invalid pooling window");
  return w;
}

LogicalResult tgc::inferPool(MLIRContext *ctx, InferLoc loc, Value self, unsigned spatial,
                             ArrayRef<int64_t> kernel, ArrayRef<int64_t> stride,
                             ArrayRef<int64_t> padding, ArrayRef<int64_t> dilation, bool ceilMode,
                             bool withIndices, TypeList &types) {
  BaseTensorType x = tensorOf(self);
  if (failed(requireTensor(loc, x, "self")))
    return failure();
  if (x.getRank() != spatial + 2 && x.getRank() != spatial + 1)
    return emitOptionalError(loc, spatial, "-d pooling expects a ", spatial + 1, "-d or ",
                             spatial + 2, "-d input");
  FailureOr<Window> w = expandWindow(loc, kernel, stride, padding, dilation, spatial);
  if (failed(w))
    return failure();
  SmallVector<AffineExpr> sizes(x.getSizes());
  int64_t first = x.getRank() - spatial;
  for (unsigned i = 0; i < spatial; ++i) {
    std::optional<int64_t> in = getConstantSize(sizes[first + i]);
    if (!in)
      return emitOptionalError(loc, "pooling over a symbolic spatial size is not supported");
    int64_t span = *in + 2 * w->padding[i] - w->dilation[i] * (w->kernel[i] - 1) - 1;
    int64_t out = (ceilMode ? (span + w->stride[i] - 1) / w->stride[i] : span / w->stride[i]) + 1;
    // With ceil_mode, the last window must start inside the input or left padding.
    if (ceilMode && (out - 1) * w->stride[i] >= *in + w->padding[i])
      --out;
    if (out <= 0)
      return emitOptionalError(loc, "pooling window larger than its input");
    sizes[first + i] = cst(out, ctx);
  }
  TensorMeta result = freshLike(x, sizes);
  result.strides = suggestedLayout(sizes, {x});
  addResult(ctx, x.isRef(), result, types);
  if (withIndices) {
    TensorMeta indices = result;
    indices.dtype = IntegerType::get(ctx, 64);
    indices.requiresGrad = false;
    addResult(ctx, x.isRef(), indices, types);
  }
  return success();
}

LogicalResult tgc::inferPool2d(MLIRContext *ctx, InferLoc loc, Value self, ArrayRef<int64_t> kernel,
                               ArrayRef<int64_t> stride, ArrayRef<int64_t> padding,
                               ArrayRef<int64_t> dilation, bool ceilMode, bool withIndices,
                               TypeList &types) {
  return inferPool(ctx, loc, self, 2, kernel, stride, padding, dilation, ceilMode, withIndices,
                   types);
}

LogicalResult tgc::inferAdaptivePool(MLIRContext *ctx, InferLoc loc, Value self,
                                     ArrayRef<int64_t> outputSize, TypeList &types) {
  BaseTensorType x = tensorOf(self);
  if (failed(requireTensor(loc, x, "self")))
    return failure();
  int64_t spatial = outputSize.size();
  if (spatial < 1 || (x.getRank() != spatial + 1 && x.getRank() != spatial + 2))
    return emitOptionalError(loc, "adaptive ", spatial, "-d pooling expects a ", spatial + 1,
                             "-d or ", spatial + 2, "-d input");
  SmallVector<AffineExpr> sizes(x.getSizes());
  for (int64_t i = 0; i < spatial; ++i) {
    if (outputSize[i] <= 0)
      return emitOptionalError(loc, "adaptive pooling: output sizes must be positive");
    sizes[x.getRank() - spatial + i] = cst(outputSize[i], ctx);
  }
  TensorMeta result = freshLike(x, sizes);
  result.strides = suggestedLayout(sizes, {x});
  addResult(ctx, x.isRef(), result, types);
  return success();
}

LogicalResult tgc::inferAdaptivePoolBackward(MLIRContext *ctx, InferLoc loc, Value gradOutput,
                                             Value self, TypeList &types) {
  BaseTensorType g = tensorOf(gradOutput), x = tensorOf(self);
  if (failed(requireTensor(loc, g, "grad_output")) || failed(requireTensor(loc, x, "self")))
    return failure();
  if (g.getRank() != x.getRank() || g.getRank() < 3)
    return emitOptionalError(loc, "adaptive pooling backward: grad_output and self must have "
                                  "equal ranks >= 3");
  TensorMeta meta = freshLike(x, x.getSizes());
  meta.dtype = g.getDtype();
  meta.requiresGrad = anyRequiresGrad({g, x});
  addResult(ctx, x.isRef(), meta, types);
  return success();
}

LogicalResult tgc::inferPool2dBackward(MLIRContext *ctx, InferLoc loc, Value gradOutput, Value self,
                                       Value indices, ArrayRef<int64_t> kernel,
                                       ArrayRef<int64_t> stride, ArrayRef<int64_t> padding,
                                       ArrayRef<int64_t> dilation, bool ceilMode, TypeList &types) {
  BaseTensorType g = tensorOf(gradOutput), x = tensorOf(self);
  if (failed(requireTensor(loc, g, "grad_output")))
    return failure();
  SmallVector<Type> forward;
  if (failed(inferPool2d(ctx, loc, self, kernel, stride, padding, dilation, ceilMode,
                         /*withIndices=*/false, forward)))
    return failure();
  ArrayRef<AffineExpr> outSizes = llvm::cast<BaseTensorType>(forward[0]).getSizes();
  if (!sameSizes(g.getSizes(), outSizes))
    return emitOptionalError(loc, "pooling backward: grad_output has sizes ",
                             sizesStr(g.getSizes()), " but the pooling's output has ",
                             sizesStr(outSizes));
  if (indices) {
    BaseTensorType i = tensorOf(indices);
    if (!i || !i.getDtype().isInteger(64) || !sameSizes(i.getSizes(), outSizes))
      return emitOptionalError(loc, "pooling backward: indices must be i64 of the output's "
                                    "sizes");
  }
  TensorMeta meta = freshLike(x, x.getSizes());
  meta.dtype = g.getDtype();
  meta.requiresGrad = g.getMeta().requiresGrad;
  addResult(ctx, x.isRef(), meta, types);
  return success();
}
