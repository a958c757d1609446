// Metadata inference of indexing: gather, embedding and its backward.
#include "Helpers.h"

using namespace mlir;
using namespace tgc;
using namespace tgc::inference;

LogicalResult tgc::inferIndex(MLIRContext *ctx, InferLoc loc, Value self, ValueRange indices,
                              DenseI64ArrayAttr dimsAttr, TypeList &types) {
  BaseTensorType x = tensorOf(self);
  if (failed(requireTensor(loc, x, "self")))
    return failure();
  int64_t rank = x.getRank();
  if (indices.empty() || static_cast<int64_t>(indices.size()) > rank)
    return emitOptionalError(loc, "index: ", indices.size(), " index tensors for a tensor of rank ",
                             rank);
  SmallVector<int64_t> dims;
  if (dimsAttr) {
    dims.assign(dimsAttr.asArrayRef().begin(), dimsAttr.asArrayRef().end());
    if (dims.size() != indices.size())
      return emitOptionalError(loc, "index: ", dims.size(), " dims for ", indices.size(),
                               " index tensors");
    for (auto [i, d] : llvm::enumerate(dims))
      if (d < 0 || d >= rank || (i > 0 && d <= dims[i - 1]))
        return emitOptionalError(loc, "index: dims must increase within the rank ", rank);
  } else {
    for (int64_t d = 0; d < static_cast<int64_t>(indices.size()); ++d)
      dims.push_back(d);
  }
  SmallVector<AffineExpr> broadcast;
  for (Value index : indices) {
    BaseTensorType i = tensorOf(index);
    if (failed(requireTensor(loc, i, "indices")))
      return failure();
    if (i.getDtype().isInteger(1))
      return emitOptionalError(loc, "index: boolean mask indices (a data-dependent shape) are "
                                    "not supported");
    if (getCategory(i.getDtype()) != DTypeCategory::Integer)
      return emitOptionalError(loc, "index: indices must be integer tensors, got ", i.getDtype());
    FailureOr<SmallVector<AffineExpr>> joined = broadcastSizes(broadcast, i.getSizes());
    if (failed(joined))
      return emitOptionalError(loc, "index: index tensors of sizes ", sizesStr(broadcast), " and ",
                               sizesStr(i.getSizes()), " do not broadcast");
    broadcast = *joined;
  }
  // Adjacent indexed dimensions are replaced in place; separated ones go first.
  bool adjacent = dims.back() - dims.front() + 1 == static_cast<int64_t>(dims.size());
  SmallVector<AffineExpr> sizes;
  ArrayRef<AffineExpr> in = x.getSizes();
  if (adjacent)
    llvm::append_range(sizes, in.take_front(dims.front()));
  llvm::append_range(sizes, broadcast);
  for (int64_t d = adjacent ? dims.back() + 1 : 0; d < rank; ++d)
    if (!llvm::is_contained(dims, d))
      sizes.push_back(in[d]);
  TensorMeta meta = freshLike(x, sizes);
  meta.requiresGrad = x.getMeta().requiresGrad;
  addResult(ctx, x.isRef(), meta, types);
  return success();
}

LogicalResult tgc::inferIndexSelect(MLIRContext *ctx, InferLoc loc, Value self, int64_t dim,
                                    Value index, TypeList &types) {
  BaseTensorType x = tensorOf(self), i = tensorOf(index);
  if (failed(requireTensor(loc, x, "self")) || failed(requireTensor(loc, i, "index")))
    return failure();
  FailureOr<int64_t> d = dimIn(loc, dim, std::max<int64_t>(x.getRank(), 1));
  if (failed(d))
    return failure();
  if (i.getRank() > 1 || getCategory(i.getDtype()) != DTypeCategory::Integer ||
      i.getDtype().isInteger(1))
    return emitOptionalError(loc, "index_select: index must be a 1-d or 0-d integer tensor");
  SmallVector<AffineExpr> sizes(x.getSizes());
  if (x.getRank() == 0) { // a 0-d self is selected by its only index, 0
    if (std::optional<int64_t> n = i.getRank() ? getConstantSize(i.getSizes()[0]) : 1; n && *n != 1)
      return emitOptionalError(loc, "index_select of a 0-d tensor takes one index, got ", *n);
  } else {
    sizes[*d] = i.getRank() ? i.getSizes()[0] : cst(1, ctx);
  }
  addResult(ctx, x.isRef(), freshLike(x, sizes), types);
  return success();
}

LogicalResult tgc::inferScatter(MLIRContext *ctx, InferLoc loc, Value self, int64_t dim,
                                Value index, Value src, TypeList &types) {
  BaseTensorType x = tensorOf(self), i = tensorOf(index);
  if (failed(requireTensor(loc, x, "self")) || failed(requireTensor(loc, i, "index")) ||
      failed(dimIn(loc, dim, std::max<int64_t>(x.getRank(), 1))))
    return failure();
  if (failed(requireIndexOfRank(loc, "scatter", x, i)))
    return failure();
  if (src) {
    BaseTensorType s = tensorOf(src);
    if (failed(requireTensor(loc, s, "src")))
      return failure();
    if (s.getRank() != x.getRank())
      return emitOptionalError(loc, "scatter: src rank ", s.getRank(), " differs from self's ",
                               x.getRank());
  }
  addResult(ctx, x.isRef(), freshLike(x, x.getSizes()), types);
  return success();
}

LogicalResult tgc::inferSortTopk(MLIRContext *ctx, InferLoc loc, Value self, int64_t dim,
                                 std::optional<int64_t> k, TypeList &types) {
  BaseTensorType x = tensorOf(self);
  if (failed(requireTensor(loc, x, "self")))
    return failure();
  FailureOr<int64_t> d = dimIn(loc, dim, std::max<int64_t>(x.getRank(), 1));
  if (failed(d))
    return failure();
  SmallVector<AffineExpr> sizes(x.getSizes());
  std::optional<int64_t> n = x.getRank() ? getConstantSize(sizes[*d]) : 1;
  if (!n)
    return emitOptionalError(loc, "sort/topk: dimension ", *d, " must have a static size");
  if (k) {
    if (*k < 0 || *k > *n)
      return emitOptionalError(loc, "topk: k = ", *k, " is outside [0, ", *n, "]");
    if (x.getRank())
      sizes[*d] = cst(*k, ctx);
  }
  addResult(ctx, x.isRef(), freshLike(x, sizes), types);
  addResult(ctx, x.isRef(), indicesLike(x, sizes), types);
  return success();
}

LogicalResult tgc::inferHistc(MLIRContext *ctx, InferLoc loc, Value self, int64_t bins, double min,
                              double max, TypeList &types) {
  BaseTensorType x = tensorOf(self);
  if (failed(requireTensor(loc, x, "self")))
    return failure();
  if (!llvm::isa<FloatType>(x.getDtype()))
    return emitOptionalError(loc, "histc: self must be a floating tensor");
  if (bins <= 0)
    return emitOptionalError(loc, "histc: bins must be positive, got ", bins);
  if (!(min < max))
    return emitOptionalError(loc, "histc: only a given range (min < max) is supported, got [", min,
                             ", ", max, "]");
  TensorMeta meta = freshLike(x, {cst(bins, ctx)});
  meta.requiresGrad = false;
  addResult(ctx, x.isRef(), meta, types);
  return success();
}

LogicalResult tgc::inferGroupedMm(MLIRContext *ctx, InferLoc loc, Value input, Value weight,
                                  Value offs, TypeList &types) {
  BaseTensorType a = tensorOf(input), w = tensorOf(weight), o = tensorOf(offs);
  if (failed(requireTensor(loc, a, "input")) || failed(requireTensor(loc, w, "weight")) ||
      failed(requireTensor(loc, o, "offs")))
    return failure();
  if (a.getRank() != 2 || w.getRank() != 3 || o.getRank() != 1)
    return emitOptionalError(loc,
                             "grouped_mm expects input [S, K], weight [E, K, N] and offs "
                             "[E], got ranks ",
                             a.getRank(), ", ", w.getRank(), " and ", o.getRank());
  if (!llvm::isa<IntegerType>(o.getDtype()))
    return emitOptionalError(loc, "grouped_mm: offs must be an integer tensor");
  if (a.getSizes()[1] != w.getSizes()[1] || w.getSizes()[0] != o.getSizes()[0])
    return emitOptionalError(loc, "grouped_mm: sizes do not match (input [",
                             exprStr(a.getSizes()[0]), ", ", exprStr(a.getSizes()[1]),
                             "], weight [", exprStr(w.getSizes()[0]), ", ",
                             exprStr(w.getSizes()[1]), ", ", exprStr(w.getSizes()[2]), "], offs [",
                             exprStr(o.getSizes()[0]), "])");
  if (!getConstantSize(w.getSizes()[0]) || !getConstantSize(w.getSizes()[1]))
    return emitOptionalError(loc, "grouped_mm: the number of groups and K must be static");
  TensorMeta meta = freshLike(a, {a.getSizes()[0], w.getSizes()[2]});
  meta.dtype = promoteDTypes(a.getDtype(), w.getDtype());
  meta.requiresGrad = anyRequiresGrad({a, w});
  addResult(ctx, a.isRef(), meta, types);
  return success();
}

LogicalResult tgc::inferFlip(MLIRContext *ctx, InferLoc loc, Value self, ArrayRef<int64_t> dims,
                             TypeList &types) {
  BaseTensorType x = tensorOf(self);
  if (failed(requireTensor(loc, x, "self")))
    return failure();
  for (int64_t d : dims) {
    FailureOr<int64_t> dim = dimIn(loc, d, std::max<int64_t>(x.getRank(), 1));
    if (failed(dim))
      return failure();
    if (x.getRank() && !getConstantSize(x.getSizes()[*dim]))
      return emitOptionalError(loc, "flip: dimension ", *dim, " must have a static size");
  }
  addResult(ctx, x.isRef(), freshLike(x, x.getSizes()), types);
  return success();
}

LogicalResult tgc::inferDiagonal(MLIRContext *ctx, InferLoc loc, Value self, int64_t offset,
                                 int64_t dim1, int64_t dim2, TypeList &types) {
  BaseTensorType x = tensorOf(self);
  if (failed(requireTensor(loc, x, "self")))
    return failure();
  FailureOr<int64_t> d1 = dimIn(loc, dim1, x.getRank()), d2 = dimIn(loc, dim2, x.getRank());
  if (failed(d1) || failed(d2))
    return failure();
  if (*d1 == *d2)
    return emitOptionalError(loc, "diagonal: dim1 and dim2 are both ", *d1);
  std::optional<int64_t> s1 = getConstantSize(x.getSizes()[*d1]),
                         s2 = getConstantSize(x.getSizes()[*d2]);
  if (!s1 || !s2)
    return emitOptionalError(loc, "diagonal: dimensions ", *d1, " and ", *d2,
                             " must have static sizes");
  int64_t length = offset >= 0 ? std::min(*s1, *s2 - offset) : std::min(*s1 + offset, *s2);
  // A view: the other dimensions' strides, then one stepping along both dimensions,
  // from the first element of the diagonal (ATen's diagonal).
  const TensorMeta &in = x.getMeta();
  SmallVector<AffineExpr> inStrides = stridesOf(in, ctx), sizes, strides;
  for (int64_t d = 0; d < x.getRank(); ++d)
    if (d != *d1 && d != *d2) {
      sizes.push_back(x.getSizes()[d]);
      strides.push_back(inStrides[d]);
    }
  sizes.push_back(cst(std::max<int64_t>(length, 0), ctx));
  strides.push_back(inStrides[*d1] + inStrides[*d2]);
  TensorMeta meta = freshLike(x, sizes);
  meta.strides = strides;
  AffineExpr start = in.storageOffset ? in.storageOffset : cst(0, ctx);
  if (length > 0)
    start = start + (offset >= 0 ? inStrides[*d2] * offset : inStrides[*d1] * -offset);
  meta.storageOffset = start;
  addResult(ctx, x.isRef(), meta, types);
  return success();
}

LogicalResult tgc::inferGather(MLIRContext *ctx, InferLoc loc, Value self, int64_t dim, Value index,
                               TypeList &types) {
  BaseTensorType x = tensorOf(self), i = tensorOf(index);
  if (failed(requireTensor(loc, x, "self")) || failed(requireTensor(loc, i, "index")) ||
      failed(dimIn(loc, dim, x.getRank())))
    return failure();
  if (failed(requireIndexOfRank(loc, "gather", x, i)))
    return failure();
  addResult(ctx, x.isRef(), freshLike(x, i.getSizes()), types);
  return success();
}

LogicalResult tgc::inferEmbedding(MLIRContext *ctx, InferLoc loc, Value weight, Value indices,
                                  TypeList &types) {
  BaseTensorType w = tensorOf(weight), i = tensorOf(indices);
  if (failed(requireTensor(loc, w, "weight")) || failed(requireTensor(loc, i, "indices")))
    return failure();
  if (w.getRank() != 2)
    return emitOptionalError(loc, "embedding: weight must be 2-d, got rank ", w.getRank());
  if (getCategory(i.getDtype()) != DTypeCategory::Integer)
    return emitOptionalError(loc, "embedding: indices must be an integer tensor, got ",
                             i.getDtype());
  SmallVector<AffineExpr> sizes(i.getSizes());
  sizes.push_back(w.getSizes()[1]);
  TensorMeta meta = freshLike(w, sizes);
  addResult(ctx, w.isRef(), meta, types);
  return success();
}

LogicalResult tgc::inferEmbeddingBackward(MLIRContext *ctx, InferLoc loc, Value gradOutput,
                                          Value indices, int64_t numWeights, TypeList &types) {
  BaseTensorType g = tensorOf(gradOutput), i = tensorOf(indices);
  if (failed(requireTensor(loc, g, "grad_output")) || failed(requireTensor(loc, i, "indices")))
    return failure();
  if (getCategory(i.getDtype()) != DTypeCategory::Integer)
    return emitOptionalError(loc, "embedding_backward: indices must be an integer tensor");
  if (g.getRank() != i.getRank() + 1 || !sameSizes(g.getSizes().drop_back(), i.getSizes()))
    return emitOptionalError(loc, "embedding_backward: grad_output has sizes ",
                             sizesStr(g.getSizes()), ", not the indices' sizes plus one");
  if (numWeights < 0)
    return emitOptionalError(loc, "embedding_backward: num_weights must not be negative");
  TensorMeta meta = freshLike(g, {cst(numWeights, ctx), g.getSizes().back()});
  addResult(ctx, g.isRef(), meta, types);
  return success();
}

LogicalResult tgc::inferMaskedScatter(MLIRContext *ctx, InferLoc loc, Value self, Value mask,
                                      Value source, TypeList &types) {
  BaseTensorType x = tensorOf(self), m = tensorOf(mask), src = tensorOf(source);
  if (failed(requireTensor(loc, x, "self")) || failed(requireTensor(loc, m, "mask")) ||
      failed(requireTensor(loc, src, "source")))
    return failure();
  if (!m.getDtype().isInteger(1) || src.getDtype() != x.getDtype())
    return emitOptionalError(loc, "masked_scatter: expects a bool mask and a source of self's "
                                  "dtype");
  FailureOr<SmallVector<AffineExpr>> sizes = broadcastSizes(x.getSizes(), m.getSizes());
  if (failed(sizes))
    return emitOptionalError(loc, "masked_scatter: self ", sizesStr(x.getSizes()), " and mask ",
                             sizesStr(m.getSizes()), " do not broadcast");
  TensorMeta meta = freshLike(x, *sizes);
  meta.requiresGrad = anyRequiresGrad({x, src});
  addResult(ctx, x.isRef(), meta, types);
  return success();
}

LogicalResult tgc::inferEmbeddingBag(MLIRContext *ctx, InferLoc loc, Value weight, Value indices,
                                     Value offsets, Value perSampleWeights, int64_t mode,
                                     bool includeLastOffset, int64_t paddingIdx, TypeList &types) {
  BaseTensorType w = tensorOf(weight), i = tensorOf(indices), o = tensorOf(offsets);
  if (failed(requireTensor(loc, w, "weight")) || failed(requireTensor(loc, i, "indices")) ||
      failed(requireTensor(loc, o, "offsets")))
    return failure();
  if (w.getRank() != 2 || getCategory(w.getDtype()) != DTypeCategory::Floating)
    return emitOptionalError(loc, "embedding_bag: weight must be a 2-d float tensor");
  if (i.getRank() != 1 || o.getRank() != 1 || getCategory(i.getDtype()) != DTypeCategory::Integer ||
      getCategory(o.getDtype()) != DTypeCategory::Integer)
    return emitOptionalError(loc, "embedding_bag: indices and offsets must be 1-d integer "
                                  "tensors");
  if (mode < 0 || mode > 2)
    return emitOptionalError(loc,
                             "embedding_bag: mode must be 0 (sum), 1 (mean) or 2 (max), "
                             "got ",
                             mode);
  bool weighted = static_cast<bool>(perSampleWeights);
  if (weighted) {
    BaseTensorType p = tensorOf(perSampleWeights);
    if (failed(requireTensor(loc, p, "per_sample_weights")))
      return failure();
    if (mode != 0 || p.getRank() != 1 || !sameSizes(p.getSizes(), i.getSizes()))
      return emitOptionalError(loc, "embedding_bag: per_sample_weights needs mode 0 (sum) and "
                                    "one weight per index");
  }
  AffineExpr bags = o.getSizes()[0];
  if (includeLastOffset)
    bags = bags - 1;
  AffineExpr features = w.getSizes()[1];
  TensorMeta out = freshLike(w, {bags, features});
  out.requiresGrad = anyRequiresGrad({w, weighted ? tensorOf(perSampleWeights) : BaseTensorType()});
  addResult(ctx, w.isRef(), out, types);
  // ATen's CPU kernel leaves offset2bag empty on its fast path: a sum of f32 or f16 rows
  // without padding_idx.
  bool fastSum = mode == 0 && paddingIdx < 0 && (w.getDtype().isF32() || w.getDtype().isF16());
  TensorMeta offset2bag = freshLike(o, {fastSum ? cst(0, ctx) : i.getSizes()[0]});
  offset2bag.requiresGrad = false;
  addResult(ctx, w.isRef(), offset2bag, types);
  TensorMeta bagSize = freshLike(o, {bags});
  bagSize.requiresGrad = false;
  addResult(ctx, w.isRef(), bagSize, types);
  TensorMeta maxIndices = freshLike(o, mode == 2 ? SmallVector<AffineExpr>{bags, features}
                                                 : SmallVector<AffineExpr>{bags});
  maxIndices.requiresGrad = false;
  addResult(ctx, w.isRef(), maxIndices, types);
  return success();
}

LogicalResult tgc::inferGridSampler2d(MLIRContext *ctx, InferLoc loc, Value input, Value grid,
                                      int64_t interpolationMode, int64_t paddingMode,
                                      TypeList &types) {
  BaseTensorType x = tensorOf(input), g = tensorOf(grid);
  if (failed(requireTensor(loc, x, "input")) || failed(requireTensor(loc, g, "grid")))
    return failure();
  if (interpolationMode < 0 || interpolationMode > 2 || paddingMode < 0 || paddingMode > 2)
    return emitOptionalError(loc,
                             "grid_sampler_2d: interpolation_mode and padding_mode must "
                             "be 0, 1 or 2, got ",
                             interpolationMode, " and ", paddingMode);
  if (x.getRank() != 4 || g.getRank() != 4 || getConstantSize(g.getSizes()[3]) != 2 ||
      x.getSizes()[0] != g.getSizes()[0])
    return emitOptionalError(loc,
                             "grid_sampler_2d: expects input [N, C, H, W] and grid "
                             "[N, Ho, Wo, 2], got ",
                             sizesStr(x.getSizes()), " and ", sizesStr(g.getSizes()));
  if (getCategory(x.getDtype()) != DTypeCategory::Floating || g.getDtype() != x.getDtype())
    return emitOptionalError(loc, "grid_sampler_2d: input and grid must be float tensors of "
                                  "one dtype");
  ArrayRef<AffineExpr> xs = x.getSizes(), gs = g.getSizes();
  TensorMeta meta = freshLike(x, {xs[0], xs[1], gs[1], gs[2]});
  meta.requiresGrad = anyRequiresGrad({x, g});
  addResult(ctx, x.isRef(), meta, types);
  return success();
}

LogicalResult tgc::inferAffineGrid(MLIRContext *ctx, InferLoc loc, Value theta,
                                   ArrayRef<int64_t> size, TypeList &types) {
  BaseTensorType t = tensorOf(theta);
  if (failed(requireTensor(loc, t, "theta")))
    return failure();
  int64_t k = static_cast<int64_t>(size.size()) - 2;
  ArrayRef<AffineExpr> ts = t.getSizes();
  if ((k != 2 && k != 3) || t.getRank() != 3 || getConstantSize(ts[0]) != size[0] ||
      getConstantSize(ts[1]) != k || getConstantSize(ts[2]) != k + 1)
    return emitOptionalError(loc,
                             "affine_grid_generator: expects theta [N, k, k + 1] and a "
                             "size [N, C, spatial...] with k = 2 or 3 spatial sizes, got ",
                             sizesStr(ts), " and ", size.size(), " sizes");
  if (getCategory(t.getDtype()) != DTypeCategory::Floating)
    return emitOptionalError(loc, "affine_grid_generator: theta must be a float tensor");
  SmallVector<AffineExpr> out = {cst(size[0], ctx)};
  for (int64_t s : size.drop_front(2))
    out.push_back(cst(s, ctx));
  out.push_back(cst(k, ctx));
  addResult(ctx, t.isRef(), freshLike(t, out), types);
  return success();
}
