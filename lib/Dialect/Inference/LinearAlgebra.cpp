// Metadata inference of linear algebra: linear, matmuls, addmm, attention, and
// convolution with its backward.
#include "Helpers.h"

#include "tgc/Dialect/Einsum.h"

using namespace mlir;
using namespace tgc;
using namespace tgc::inference;

LogicalResult tgc::inferLinear(MLIRContext *ctx, InferLoc loc, Value input, Value weight,
                               Value bias, TypeList &types) {
  BaseTensorType x = tensorOf(input), w = tensorOf(weight), b = tensorOf(bias);
  if (failed(requireTensor(loc, x, "input")) || failed(requireTensor(loc, w, "weight")))
    return failure();
  if (x.getRank() < 1 || w.getRank() < 1 || w.getRank() > 2)
    return emitOptionalError(loc, "linear expects input of rank >= 1 and weight of rank 1 or 2");
  AffineExpr inFeatures = w.getSizes().back();
  if (x.getSizes().back() != inFeatures)
    return emitOptionalError(loc, "linear: input has ", exprStr(x.getSizes().back()),
                             " features but weight expects ", exprStr(inFeatures));
  SmallVector<AffineExpr> sizes(x.getSizes().drop_back());
  if (w.getRank() == 2)
    sizes.push_back(w.getSizes()[0]);
  TensorMeta meta = freshLike(x, sizes);
  meta.dtype = promoteDTypes(x.getDtype(), w.getDtype());
  meta.requiresGrad = anyRequiresGrad({x, w, b});
  addResult(ctx, x.isRef(), meta, types);
  return success();
}

LogicalResult tgc::inferMatmul(MLIRContext *ctx, InferLoc loc, Value lhs, Value rhs,
                               MatmulKind kind, TypeList &types) {
  BaseTensorType a = tensorOf(lhs), b = tensorOf(rhs);
  if (failed(requireTensor(loc, a, "self")) || failed(requireTensor(loc, b, "other")))
    return failure();
  ArrayRef<AffineExpr> sa = a.getSizes(), sb = b.getSizes();
  int64_t ra = a.getRank(), rb = b.getRank();
  if (kind == MatmulKind::Mm && (ra != 2 || rb != 2))
    return emitOptionalError(loc, "mm expects 2-d tensors, got ranks ", ra, " and ", rb);
  if (kind == MatmulKind::Bmm && (ra != 3 || rb != 3 || sa[0] != sb[0]))
    return emitOptionalError(loc, "bmm expects 3-d tensors with equal batch sizes");
  if (ra == 0 || rb == 0)
    return emitOptionalError(loc, "matmul does not take 0-d tensors");
  AffineExpr k1 = sa.back(), k2 = rb == 1 ? sb[0] : sb[rb - 2];
  if (k1 != k2)
    return emitOptionalError(loc, "matmul: contraction sizes differ (", exprStr(k1), " vs ",
                             exprStr(k2), ")");
  SmallVector<AffineExpr> batchA(ra > 2 ? sa.drop_back(2) : ArrayRef<AffineExpr>{});
  SmallVector<AffineExpr> batchB(rb > 2 ? sb.drop_back(2) : ArrayRef<AffineExpr>{});
  FailureOr<SmallVector<AffineExpr>> batch = broadcastSizes(batchA, batchB);
  if (failed(batch))
    return emitOptionalError(loc, "matmul: batch sizes do not broadcast");
  SmallVector<AffineExpr> sizes = *batch;
  if (ra >= 2)
    sizes.push_back(sa[ra - 2]);
  if (rb >= 2)
    sizes.push_back(sb.back());
  TensorMeta meta = freshLike(a, sizes);
  meta.dtype = promoteDTypes(a.getDtype(), b.getDtype());
  meta.requiresGrad = anyRequiresGrad({a, b});
  addResult(ctx, a.isRef(), meta, types);
  return success();
}

LogicalResult tgc::inferAddmm(MLIRContext *ctx, InferLoc loc, Value self, Value mat1, Value mat2,
                              TypeList &types, MatmulKind kind) {
  SmallVector<Type> mm;
  if (failed(inferMatmul(ctx, loc, mat1, mat2, kind, mm)))
    return failure();
  BaseTensorType s = tensorOf(self);
  if (failed(requireTensor(loc, s, "self")))
    return failure();
  auto product = llvm::cast<BaseTensorType>(mm[0]);
  FailureOr<SmallVector<AffineExpr>> b = broadcastSizes(s.getSizes(), product.getSizes());
  if (failed(b) || *b != SmallVector<AffineExpr>(product.getSizes()))
    return emitOptionalError(loc, kind == MatmulKind::Mm ? "addmm" : "baddbmm",
                             ": self does not broadcast to the product's sizes");
  TensorMeta meta = product.getMeta();
  meta.requiresGrad |= s.getMeta().requiresGrad;
  addResult(ctx, product.isRef(), meta, types);
  return success();
}

LogicalResult tgc::inferConvolution(MLIRContext *ctx, InferLoc loc, Value input, Value weight,
                                    ArrayRef<int64_t> stride, ArrayRef<int64_t> padding,
                                    ArrayRef<int64_t> dilation, bool transposed,
                                    DenseI64ArrayAttr outputPadding, int64_t groups,
                                    TypeList &types) {
  BaseTensorType x = tensorOf(input), w = tensorOf(weight);
  if (failed(requireTensor(loc, x, "input")) || failed(requireTensor(loc, w, "weight")))
    return failure();
  int64_t spatial = w.getRank() - 2;
  if (spatial < 1 || x.getRank() != w.getRank())
    return emitOptionalError(loc, "convolution: input rank ", x.getRank(),
                             " does not match weight rank ", w.getRank());
  auto expand = [&](ArrayRef<int64_t> v, int64_t fill) {
    SmallVector<int64_t> out(v);
    if (out.size() == 1)
      out.assign(spatial, out[0]);
    if (out.empty())
      out.assign(spatial, fill);
    return out;
  };
  SmallVector<int64_t> s = expand(stride, 1), p = expand(padding, 0), d = expand(dilation, 1);
  SmallVector<int64_t> op =
      expand(outputPadding ? outputPadding.asArrayRef() : ArrayRef<int64_t>{}, 0);
  if ((int64_t)s.size() != spatial || (int64_t)p.size() != spatial ||
      (int64_t)d.size() != spatial || (int64_t)op.size() != spatial)
    return emitOptionalError(loc, "convolution: stride/padding/dilation must have ", spatial,
                             " entries");
  ArrayRef<AffineExpr> xs = x.getSizes(), ws = w.getSizes();
  SmallVector<AffineExpr> sizes = {xs[0]};
  sizes.push_back(transposed ? ws[1] * groups : ws[0]);
  for (int64_t i = 0; i < spatial; ++i) {
    AffineExpr in = xs[2 + i], k = ws[2 + i];
    if (transposed)
      sizes.push_back((in - 1) * s[i] - 2 * p[i] + (k - 1) * d[i] + op[i] + 1);
    else
      sizes.push_back((in + 2 * p[i] - (k - 1) * d[i] - 1).floorDiv(s[i]) + 1);
  }
  TensorMeta meta = freshLike(x, sizes);
  meta.requiresGrad = anyRequiresGrad({x, w});
  // ATen's CPU convolution writes channels-last when the input or weight is.
  meta.strides = suggestedLayout(sizes, {x, w});
  addResult(ctx, x.isRef(), meta, types);
  return success();
}

/// Checks the operands of an attention (or its backward).
static LogicalResult checkAttentionOperands(InferLoc loc, BaseTensorType q, BaseTensorType k,
                                            BaseTensorType v) {
  if (failed(requireTensor(loc, q, "query")) || failed(requireTensor(loc, k, "key")) ||
      failed(requireTensor(loc, v, "value")))
    return failure();
  if (q.getRank() < 2 || k.getRank() != q.getRank() || v.getRank() != q.getRank())
    return emitOptionalError(loc, "attention operands must have equal ranks >= 2");
  if (q.getSizes().back() != k.getSizes().back())
    return emitOptionalError(loc, "attention: query and key embeddings differ");
  return success();
}

/// A result like `like` of `sizes` that autograd does not differentiate.
static void addNoGradResult(MLIRContext *ctx, BaseTensorType like, ArrayRef<AffineExpr> sizes,
                            TypeList &types) {
  TensorMeta meta = freshLike(like, sizes);
  meta.requiresGrad = false;
  addResult(ctx, like.isRef(), meta, types);
}

LogicalResult tgc::inferAttention(MLIRContext *ctx, InferLoc loc, Value query, Value key,
                                  Value value, bool withLogsumexp, TypeList &types) {
  BaseTensorType q = tensorOf(query), k = tensorOf(key), v = tensorOf(value);
  if (failed(checkAttentionOperands(loc, q, k, v)))
    return failure();
  SmallVector<AffineExpr> sizes(q.getSizes().drop_back());
  sizes.push_back(v.getSizes().back());
  TensorMeta meta = freshLike(q, sizes);
  meta.requiresGrad = anyRequiresGrad({q, k, v});
  addResult(ctx, q.isRef(), meta, types);
  // The log-sum-exp, [batch..., L]: its only user is the backward.
  if (withLogsumexp)
    addNoGradResult(ctx, q, q.getSizes().drop_back(), types);
  return success();
}

LogicalResult tgc::inferAttentionBackward(MLIRContext *ctx, InferLoc loc, Value query, Value key,
                                          Value value, bool withMaskGrad, TypeList &types) {
  BaseTensorType q = tensorOf(query), k = tensorOf(key), v = tensorOf(value);
  if (failed(checkAttentionOperands(loc, q, k, v)))
    return failure();
  for (BaseTensorType operand : {q, k, v})
    addNoGradResult(ctx, operand, operand.getSizes(), types);
  if (withMaskGrad) {
    SmallVector<AffineExpr> scores(q.getSizes().drop_back());
    scores.push_back(k.getSizes()[k.getRank() - 2]);
    addNoGradResult(ctx, q, scores, types);
  }
  return success();
}

/// Convolution parameters with one entry per spatial dimension: a single value
/// applies to all, an empty list means `fill`.
static SmallVector<int64_t> expandConvParam(ArrayRef<int64_t> v, int64_t fill, int64_t spatial) {
  SmallVector<int64_t> out(v);
  if (out.size() == 1)
    out.assign(spatial, out[0]);
  if (out.empty())
    out.assign(spatial, fill);
  return out;
}

LogicalResult tgc::inferConvolutionBackward(MLIRContext *ctx, InferLoc loc, Value gradOutput,
                                            Value other, ShapeAttr size, ArrayRef<int64_t> stride,
                                            ArrayRef<int64_t> padding, ArrayRef<int64_t> dilation,
                                            int64_t groups, ConvolutionGradient which,
                                            TypeList &types) {
  BaseTensorType g = tensorOf(gradOutput), o = tensorOf(other);
  if (failed(requireTensor(loc, g, "grad_output")) || failed(requireTensor(loc, o, "operand")))
    return failure();
  ArrayRef<AffineExpr> sizes = size.getSizes();
  int64_t rank = g.getRank(), spatial = rank - 2;
  if (spatial < 1 || o.getRank() != rank || (int64_t)sizes.size() != rank)
    return emitOptionalError(loc, "convolution backward: grad_output, operand and sizes must "
                                  "have equal ranks >= 3");
  bool forInput = which == ConvolutionGradient::Input;
  ArrayRef<AffineExpr> in = forInput ? sizes : o.getSizes();
  ArrayRef<AffineExpr> w = forInput ? o.getSizes() : sizes;
  SmallVector<int64_t> s = expandConvParam(stride, 1, spatial);
  SmallVector<int64_t> p = expandConvParam(padding, 0, spatial);
  SmallVector<int64_t> d = expandConvParam(dilation, 1, spatial);
  if ((int64_t)s.size() != spatial || (int64_t)p.size() != spatial || (int64_t)d.size() != spatial)
    return emitOptionalError(loc, "convolution backward: stride/padding/dilation must have ",
                             spatial, " entries");
  if (groups < 1)
    return emitOptionalError(loc, "convolution backward: groups must be positive");
  std::optional<int64_t> channels = getConstantSize(in[1]), perGroup = getConstantSize(w[1]);
  std::optional<int64_t> filters = getConstantSize(w[0]);
  if (channels && perGroup && *channels != *perGroup * groups)
    return emitOptionalError(loc, "convolution backward: input has ", *channels,
                             " channels but the weight expects ", *perGroup * groups);
  if (filters && *filters % groups != 0)
    return emitOptionalError(loc, "convolution backward: ", *filters, " filters do not split into ",
                             groups, " groups");
  SmallVector<AffineExpr> expected = {in[0], w[0]};
  for (int64_t i = 0; i < spatial; ++i)
    expected.push_back((in[2 + i] + 2 * p[i] - (w[2 + i] - 1) * d[i] - 1).floorDiv(s[i]) + 1);
  if (!sameSizes(expected, g.getSizes()))
    return emitOptionalError(loc, "convolution backward: grad_output has sizes ",
                             sizesStr(g.getSizes()), " but the convolution's output has ",
                             sizesStr(expected));
  TensorMeta meta = freshLike(g, sizes);
  meta.requiresGrad = anyRequiresGrad({g, o});
  addResult(ctx, g.isRef(), meta, types);
  return success();
}

LogicalResult tgc::inferConvolutionBackwardAll(MLIRContext *ctx, InferLoc loc, Value gradOutput,
                                               Value input, Value weight, TypeList &types) {
  BaseTensorType g = tensorOf(gradOutput), x = tensorOf(input), w = tensorOf(weight);
  if (failed(requireTensor(loc, g, "grad_output")) || failed(requireTensor(loc, x, "input")) ||
      failed(requireTensor(loc, w, "weight")))
    return failure();
  if (g.getRank() < 3 || x.getRank() != g.getRank() || w.getRank() != g.getRank())
    return emitOptionalError(loc, "convolution_backward: grad_output, input and weight must "
                                  "have equal ranks >= 3");
  bool requiresGrad = anyRequiresGrad({g, x, w});
  for (BaseTensorType like : {x, w}) {
    TensorMeta meta = freshLike(like, like.getSizes());
    meta.dtype = g.getDtype();
    meta.requiresGrad = requiresGrad;
    addResult(ctx, g.isRef(), meta, types);
  }
  TensorMeta bias = freshLike(g, {g.getSizes()[1]});
  bias.requiresGrad = requiresGrad;
  addResult(ctx, g.isRef(), bias, types);
  return success();
}

LogicalResult tgc::inferCdist(MLIRContext *ctx, InferLoc loc, Value x1, Value x2, TypeList &types) {
  BaseTensorType a = tensorOf(x1), b = tensorOf(x2);
  if (failed(requireTensor(loc, a, "x1")) || failed(requireTensor(loc, b, "x2")))
    return failure();
  if (a.getRank() < 2 || a.getRank() != b.getRank() || a.getDtype() != b.getDtype() ||
      !llvm::isa<FloatType>(a.getDtype()))
    return emitOptionalError(loc, "cdist: x1 and x2 must be float tensors of one dtype and "
                                  "equal ranks >= 2");
  ArrayRef<AffineExpr> as = a.getSizes(), bs = b.getSizes();
  if (as.back() != bs.back())
    return emitOptionalError(loc, "cdist: x1 and x2 must have rows of equal size");
  FailureOr<SmallVector<AffineExpr>> batch = broadcastSizes(as.drop_back(2), bs.drop_back(2));
  if (failed(batch))
    return emitOptionalError(loc, "cdist: batch sizes do not broadcast");
  SmallVector<AffineExpr> sizes(*batch);
  sizes.append({as[as.size() - 2], bs[bs.size() - 2]});
  TensorMeta meta = freshLike(a, sizes);
  meta.requiresGrad = anyRequiresGrad({a, b});
  addResult(ctx, a.isRef(), meta, types);
  return success();
}

LogicalResult tgc::inferPdist(MLIRContext *ctx, InferLoc loc, Value self, TypeList &types) {
  BaseTensorType x = tensorOf(self);
  if (failed(requireTensor(loc, x, "self")))
    return failure();
  std::optional<int64_t> rows = x.getRank() == 2 ? getConstantSize(x.getSizes()[0]) : std::nullopt;
  if (!rows || !llvm::isa<FloatType>(x.getDtype()))
    return emitOptionalError(loc, "pdist: expects a float [N, M] tensor with a static N");
  addResult(ctx, x.isRef(), freshLike(x, {cst(*rows * (*rows - 1) / 2, ctx)}), types);
  return success();
}

LogicalResult tgc::inferCol2Im(MLIRContext *ctx, InferLoc loc, Value self,
                               ArrayRef<int64_t> outputSize, ArrayRef<int64_t> kernel,
                               ArrayRef<int64_t> dilation, ArrayRef<int64_t> padding,
                               ArrayRef<int64_t> stride, TypeList &types) {
  BaseTensorType x = tensorOf(self);
  if (failed(requireTensor(loc, x, "self")))
    return failure();
  if ((x.getRank() != 2 && x.getRank() != 3) || outputSize.size() != 2 || kernel.size() != 2 ||
      dilation.size() != 2 || padding.size() != 2 || stride.size() != 2)
    return emitOptionalError(loc, "col2im: expects a 2-d or 3-d input and two entries per "
                                  "window parameter");
  ArrayRef<AffineExpr> sizes = x.getSizes();
  std::optional<int64_t> rows = getConstantSize(sizes[sizes.size() - 2]);
  std::optional<int64_t> columns = getConstantSize(sizes.back());
  int64_t patch = kernel[0] * kernel[1], blocks = 1;
  for (int i = 0; i < 2; ++i) {
    if (kernel[i] <= 0 || dilation[i] <= 0 || stride[i] <= 0 || padding[i] < 0)
      return emitOptionalError(loc, "col2im: invalid window");
    blocks *= (outputSize[i] + 2 * padding[i] - dilation[i] * (kernel[i] - 1) - 1) / stride[i] + 1;
  }
  if (!rows || !columns || *rows % patch != 0 || *columns != blocks)
    return emitOptionalError(loc, "col2im: expects [.., C * ", patch, ", ", blocks,
                             "] for this window and output size, got ", sizesStr(sizes));
  SmallVector<AffineExpr> out(sizes.drop_back(2));
  out.append({cst(*rows / patch, ctx), cst(outputSize[0], ctx), cst(outputSize[1], ctx)});
  addResult(ctx, x.isRef(), freshLike(x, out), types);
  return success();
}

LogicalResult tgc::inferEinsum(MLIRContext *ctx, InferLoc loc, StringRef equation,
                               ValueRange tensors, TypeList &types) {
  if (tensors.empty())
    return emitOptionalError(loc, "einsum needs at least one operand");
  SmallVector<BaseTensorType> operands;
  SmallVector<int64_t> ranks;
  for (Value t : tensors) {
    BaseTensorType x = tensorOf(t);
    if (failed(requireTensor(loc, x, "tensors")))
      return failure();
    operands.push_back(x);
    ranks.push_back(x.getRank());
  }
  EinsumSpec spec;
  std::string error;
  if (!parseEinsum(equation, ranks, spec, error))
    return emitOptionalError(loc, error);
  // Each label's size: the operands agree, or broadcast a size of 1.
  DenseMap<int, AffineExpr> sizes;
  AffineExpr one = cst(1, ctx);
  for (auto [i, x, labels] : llvm::enumerate(operands, spec.inputs)) {
    // A label repeated within an operand (a diagonal) has one size there.
    for (auto [k, label] : llvm::enumerate(labels))
      for (size_t j = 0; j < k; ++j)
        if (labels[j] == label && x.getSizes()[j] != x.getSizes()[k])
          return emitOptionalError(loc, "einsum '", equation, "': a subscript repeated in operand ",
                                   i, " has sizes ", exprStr(x.getSizes()[j]), " and ",
                                   exprStr(x.getSizes()[k]));
    for (auto [label, size] : llvm::zip(labels, x.getSizes())) {
      auto [it, inserted] = sizes.try_emplace(label, size);
      if (inserted || it->second == size || size == one)
        continue;
      if (it->second == one) {
        it->second = size;
        continue;
      }
      return emitOptionalError(loc, "einsum '", equation, "': a label has sizes ",
                               exprStr(it->second), " and ", exprStr(size));
    }
  }
  SmallVector<AffineExpr> out;
  for (int label : spec.output)
    out.push_back(sizes.lookup(label));
  TensorMeta meta = freshLike(operands.front(), out);
  for (BaseTensorType x : operands) {
    meta.dtype = promoteDTypes(meta.dtype, x.getDtype());
    meta.requiresGrad |= x.getMeta().requiresGrad;
  }
  addResult(ctx, operands.front().isRef(), meta, types);
  return success();
}
