// Metadata inference of views: view, permute, transpose, expand, (un)squeeze, slice,
// select, alias, detach, split, and clone.
#include "Helpers.h"

using namespace mlir;
using namespace tgc;
using namespace tgc::inference;

/// The result of a view: `self`'s dtype, device and requires_grad with new sizes,
/// strides and offset (dropped again for value tensors).
static LogicalResult addView(MLIRContext *ctx, BaseTensorType self, ArrayRef<AffineExpr> sizes,
                             ArrayRef<AffineExpr> strides, AffineExpr offset, TypeList &types) {
  TensorMeta meta = freshLike(self, sizes);
  meta.strides.assign(strides.begin(), strides.end());
  meta.storageOffset = offset;
  addResult(ctx, self.isRef(), meta, types);
  return success();
}

static bool isContiguous(const TensorMeta &meta, MLIRContext *ctx) {
  return meta.strides.empty() || meta.strides == TensorMeta::contiguousStrides(meta.sizes, ctx);
}

/// `expr` as a constant times a product of symbols and dimensions, if it is one.
static bool asMonomial(AffineExpr expr, int64_t &constant, SmallVectorImpl<AffineExpr> &factors) {
  if (auto c = llvm::dyn_cast<AffineConstantExpr>(expr)) {
    constant *= c.getValue();
    return true;
  }
  if (llvm::isa<AffineSymbolExpr, AffineDimExpr>(expr)) {
    factors.push_back(expr);
    return true;
  }
  auto binary = llvm::dyn_cast<AffineBinaryOpExpr>(expr);
  return binary && binary.getKind() == AffineExprKind::Mul &&
         asMonomial(binary.getLHS(), constant, factors) &&
         asMonomial(binary.getRHS(), constant, factors);
}

/// numerator / denominator, cancelling common symbolic factors of two monomials
/// ((s0 * 64) / (s0 * 32) = 2), else a floordiv.
static AffineExpr divideSizes(AffineExpr numerator, AffineExpr denominator) {
  int64_t n = 1, d = 1;
  SmallVector<AffineExpr> nf, df;
  if (asMonomial(numerator, n, nf) && asMonomial(denominator, d, df) && d != 0 && n % d == 0) {
    for (AffineExpr f : df) {
      auto *it = llvm::find(nf, f);
      if (it == nf.end())
        return numerator.floorDiv(denominator);
      nf.erase(it);
    }
    AffineExpr result = getAffineConstantExpr(n / d, numerator.getContext());
    for (AffineExpr f : nf)
      result = result * f;
    return result;
  }
  return numerator.floorDiv(denominator);
}

/// A size expression simplified (`s0 - (s0 - 1)` is 1).
static AffineExpr simplifySize(AffineExpr expr) {
  unsigned symbols = 0, dims = 0;
  expr.walk([&](AffineExpr e) {
    if (auto s = llvm::dyn_cast<AffineSymbolExpr>(e))
      symbols = std::max(symbols, s.getPosition() + 1);
    if (auto d = llvm::dyn_cast<AffineDimExpr>(e))
      dims = std::max(dims, d.getPosition() + 1);
  });
  return simplifyAffineExpr(expr, dims, symbols);
}

LogicalResult tgc::inferView(MLIRContext *ctx, InferLoc loc, Value self, ShapeAttr size,
                             TypeList &types) {
  BaseTensorType x = tensorOf(self);
  if (failed(requireTensor(loc, x, "self")))
    return failure();
  TensorMeta in = x.getMeta();
  SmallVector<AffineExpr> sizes(size.getSizes());
  AffineExpr known = cst(1, ctx);
  int64_t inferred = -1;
  for (auto [i, s] : llvm::enumerate(sizes)) {
    if (getConstantSize(s) == -1) {
      if (inferred >= 0)
        return emitOptionalError(loc, "view: only one size may be -1");
      inferred = i;
      continue;
    }
    known = known * s;
  }
  AffineExpr numel = in.numel(ctx);
  if (inferred >= 0)
    sizes[inferred] = divideSizes(numel, known);
  else if (getConstantSize(numel) && getConstantSize(known) && numel != known)
    return emitOptionalError(loc, "view: shape ", size, " is invalid for a tensor of ",
                             exprStr(numel), " elements");
  // A view from the same offset with ATen's strides where the storage allows one (a
  // row-major tensor always does); otherwise reshape copies, giving a fresh contiguous
  // tensor (functionalization reads the same viewStrides to tell the two apart).
  if (std::optional<SmallVector<AffineExpr>> strides =
          viewStrides(in.sizes, in.strides, sizes, ctx))
    return addView(ctx, x, sizes, *strides, in.storageOffset, types);
  return addView(ctx, x, sizes, TensorMeta::contiguousStrides(sizes, ctx), AffineExpr(), types);
}

LogicalResult tgc::inferPermute(MLIRContext *ctx, InferLoc loc, Value self, ArrayRef<int64_t> dims,
                                TypeList &types) {
  BaseTensorType x = tensorOf(self);
  if (failed(requireTensor(loc, x, "self")))
    return failure();
  int64_t rank = x.getRank();
  if ((int64_t)dims.size() != rank)
    return emitOptionalError(loc, "permute: expected ", rank, " dims, got ", dims.size());
  TensorMeta in = x.getMeta();
  SmallVector<AffineExpr> inStrides = stridesOf(in, ctx), sizes, strides;
  SmallVector<bool> seen(rank, false);
  for (int64_t d : dims) {
    FailureOr<int64_t> nd = dimIn(loc, d, rank);
    if (failed(nd))
      return failure();
    if (seen[*nd])
      return emitOptionalError(loc, "permute: dimension ", d, " repeats");
    seen[*nd] = true;
    sizes.push_back(in.sizes[*nd]);
    strides.push_back(inStrides[*nd]);
  }
  return addView(ctx, x, sizes, strides, in.storageOffset, types);
}

LogicalResult tgc::inferTranspose(MLIRContext *ctx, InferLoc loc, Value self, int64_t dim0,
                                  int64_t dim1, TypeList &types) {
  BaseTensorType x = tensorOf(self);
  if (failed(requireTensor(loc, x, "self")))
    return failure();
  int64_t rank = x.getRank();
  if (rank < 2) // t() of a 0-d or 1-d tensor is itself
    return inferAlias(ctx, loc, self, types);
  FailureOr<int64_t> d0 = dimIn(loc, dim0, rank), d1 = dimIn(loc, dim1, rank);
  if (failed(d0) || failed(d1))
    return failure();
  TensorMeta in = x.getMeta();
  SmallVector<AffineExpr> sizes = in.sizes, strides = stridesOf(in, ctx);
  std::swap(sizes[*d0], sizes[*d1]);
  std::swap(strides[*d0], strides[*d1]);
  return addView(ctx, x, sizes, strides, in.storageOffset, types);
}

LogicalResult tgc::inferExpand(MLIRContext *ctx, InferLoc loc, Value self, ShapeAttr size,
                               TypeList &types) {
  BaseTensorType x = tensorOf(self);
  if (failed(requireTensor(loc, x, "self")))
    return failure();
  TensorMeta in = x.getMeta();
  SmallVector<AffineExpr> inStrides = stridesOf(in, ctx);
  ArrayRef<AffineExpr> target = size.getSizes();
  int64_t rank = target.size(), lead = rank - in.rank();
  if (lead < 0)
    return emitOptionalError(loc, "expand: target rank ", rank, " is below the input rank ",
                             in.rank());
  SmallVector<AffineExpr> sizes, strides;
  for (int64_t i = 0; i < rank; ++i) {
    AffineExpr t = target[i];
    if (i < lead) {
      if (getConstantSize(t) == -1)
        return emitOptionalError(loc, "expand: -1 is not allowed for a new leading dimension");
      sizes.push_back(t);
      strides.push_back(cst(0, ctx));
      continue;
    }
    AffineExpr s = in.sizes[i - lead];
    if (getConstantSize(t) == -1 || t == s) {
      sizes.push_back(s);
      strides.push_back(inStrides[i - lead]);
      continue;
    }
    if (getConstantSize(s) != 1)
      return emitOptionalError(loc, "expand: size ", exprStr(s), " of dimension ", i,
                               " cannot expand to ", exprStr(t));
    sizes.push_back(t);
    strides.push_back(cst(0, ctx));
  }
  return addView(ctx, x, sizes, strides, in.storageOffset, types);
}

LogicalResult tgc::inferUnsqueeze(MLIRContext *ctx, InferLoc loc, Value self, int64_t dim,
                                  TypeList &types) {
  BaseTensorType x = tensorOf(self);
  if (failed(requireTensor(loc, x, "self")))
    return failure();
  TensorMeta in = x.getMeta();
  FailureOr<int64_t> d = dimIn(loc, dim, in.rank() + 1);
  if (failed(d))
    return failure();
  SmallVector<AffineExpr> sizes = in.sizes, strides = stridesOf(in, ctx);
  AffineExpr stride = *d < in.rank() ? strides[*d] * sizes[*d] : cst(1, ctx);
  sizes.insert(sizes.begin() + *d, cst(1, ctx));
  strides.insert(strides.begin() + *d, stride);
  return addView(ctx, x, sizes, strides, in.storageOffset, types);
}

LogicalResult tgc::inferSqueeze(MLIRContext *ctx, InferLoc loc, Value self, DenseI64ArrayAttr dims,
                                TypeList &types) {
  BaseTensorType x = tensorOf(self);
  if (failed(requireTensor(loc, x, "self")))
    return failure();
  TensorMeta in = x.getMeta();
  SmallVector<AffineExpr> inStrides = stridesOf(in, ctx);
  SmallVector<bool> candidate(in.rank(), !dims);
  if (dims)
    for (int64_t d : dims.asArrayRef()) {
      FailureOr<int64_t> nd = dimIn(loc, d, in.rank());
      if (failed(nd))
        return failure();
      if (in.rank() > 0)
        candidate[*nd] = true;
    }
  SmallVector<AffineExpr> sizes, strides;
  for (int64_t i = 0; i < in.rank(); ++i) {
    if (candidate[i] && getConstantSize(in.sizes[i]) == 1)
      continue;
    sizes.push_back(in.sizes[i]);
    strides.push_back(inStrides[i]);
  }
  return addView(ctx, x, sizes, strides, in.storageOffset, types);
}

/// Resolves a slice bound as Python does: negative counts from the end, clamped to
/// [0, size]; INT64_MAX-like ends mean the end.
AffineExpr tgc::resolveSliceBound(ShapeAttr bound, AffineExpr size, bool isEnd, MLIRContext *ctx) {
  int64_t dflt = 0;
  if (!bound || bound.getSizes().size() != 1)
    return isEnd ? size : cst(dflt, ctx);
  AffineExpr b = bound.getSizes()[0];
  std::optional<int64_t> c = getConstantSize(b);
  if (!c)
    return b;
  std::optional<int64_t> n = getConstantSize(size);
  if (*c < 0) {
    if (n)
      return cst(std::max<int64_t>(*n + *c, 0), ctx);
    return size + *c;
  }
  if (n)
    return cst(std::min(*c, *n), ctx);
  // A symbolic size: a constant bound past any plausible size means "to the end".
  return *c >= (int64_t(1) << 40) ? size : b;
}

LogicalResult tgc::inferSlice(MLIRContext *ctx, InferLoc loc, Value self, int64_t dim,
                              ShapeAttr start, ShapeAttr end, int64_t step, TypeList &types) {
  BaseTensorType x = tensorOf(self);
  if (failed(requireTensor(loc, x, "self")))
    return failure();
  TensorMeta in = x.getMeta();
  FailureOr<int64_t> d = dimIn(loc, dim, in.rank());
  if (failed(d))
    return failure();
  if (step <= 0)
    return emitOptionalError(loc, "slice step must be positive, got ", step);
  AffineExpr size = in.sizes[*d];
  AffineExpr lo = resolveSliceBound(start, size, /*isEnd=*/false, ctx);
  AffineExpr hi = resolveSliceBound(end, size, /*isEnd=*/true, ctx);
  AffineExpr length = simplifySize((hi - lo).ceilDiv(step));
  if (auto c = getConstantSize(length); c && *c < 0)
    length = cst(0, ctx);
  SmallVector<AffineExpr> sizes = in.sizes, strides = stridesOf(in, ctx);
  AffineExpr offset = (in.storageOffset ? in.storageOffset : cst(0, ctx)) + lo * strides[*d];
  sizes[*d] = length;
  strides[*d] = strides[*d] * step;
  return addView(ctx, x, sizes, strides, offset, types);
}

LogicalResult tgc::inferSelect(MLIRContext *ctx, InferLoc loc, Value self, int64_t dim,
                               int64_t index, TypeList &types) {
  BaseTensorType x = tensorOf(self);
  if (failed(requireTensor(loc, x, "self")))
    return failure();
  TensorMeta in = x.getMeta();
  if (in.rank() == 0)
    return emitOptionalError(loc, "select of a 0-d tensor");
  FailureOr<int64_t> d = dimIn(loc, dim, in.rank());
  if (failed(d))
    return failure();
  SmallVector<AffineExpr> sizes = in.sizes, strides = stridesOf(in, ctx);
  AffineExpr idx = index < 0 ? sizes[*d] + index : cst(index, ctx);
  if (auto n = getConstantSize(sizes[*d]); n && (index >= *n || index < -*n))
    return emitOptionalError(loc, "select: index ", index, " is out of range for size ", *n);
  AffineExpr offset = (in.storageOffset ? in.storageOffset : cst(0, ctx)) + idx * strides[*d];
  sizes.erase(sizes.begin() + *d);
  strides.erase(strides.begin() + *d);
  return addView(ctx, x, sizes, strides, offset, types);
}

LogicalResult tgc::inferUnbind(MLIRContext *ctx, InferLoc loc, Value self, int64_t dim,
                               TypeList &types) {
  BaseTensorType x = tensorOf(self);
  if (failed(requireTensor(loc, x, "self")))
    return failure();
  if (x.getRank() == 0)
    return emitOptionalError(loc, "unbind of a 0-d tensor");
  FailureOr<int64_t> d = dimIn(loc, dim, x.getRank());
  if (failed(d))
    return failure();
  std::optional<int64_t> size = getConstantSize(x.getSizes()[*d]);
  if (!size)
    return emitOptionalError(loc, "unbind: dimension ", dim, " must have a static size");
  for (int64_t i = 0; i < *size; ++i)
    if (failed(inferSelect(ctx, loc, self, *d, i, types)))
      return failure();
  return success();
}

LogicalResult tgc::inferAlias(MLIRContext *ctx, InferLoc loc, Value self, TypeList &types) {
  BaseTensorType x = tensorOf(self);
  if (failed(requireTensor(loc, x, "self")))
    return failure();
  TensorMeta in = x.getMeta();
  return addView(ctx, x, in.sizes, stridesOf(in, ctx), in.storageOffset, types);
}

LogicalResult tgc::inferDetach(MLIRContext *ctx, InferLoc loc, Value self, TypeList &types) {
  if (failed(inferAlias(ctx, loc, self, types)))
    return failure();
  auto type = llvm::cast<BaseTensorType>(types.back());
  TensorMeta meta = type.getMeta();
  meta.requiresGrad = false;
  types.back() = type.withMeta(meta);
  return success();
}

LogicalResult tgc::inferSplit(MLIRContext *ctx, InferLoc loc, Value self,
                              ArrayRef<int64_t> splitSizes, int64_t dim, TypeList &types) {
  BaseTensorType x = tensorOf(self);
  if (failed(requireTensor(loc, x, "self")))
    return failure();
  TensorMeta in = x.getMeta();
  FailureOr<int64_t> d = dimIn(loc, dim, in.rank());
  if (failed(d))
    return failure();
  int64_t total = 0;
  for (int64_t s : splitSizes)
    total += s;
  if (auto n = getConstantSize(in.sizes[*d]); n && *n != total)
    return emitOptionalError(loc, "split: sizes add up to ", total, " but the dimension has ", *n);
  SmallVector<AffineExpr> strides = stridesOf(in, ctx);
  int64_t start = 0;
  for (int64_t s : splitSizes) {
    SmallVector<AffineExpr> sizes = in.sizes;
    sizes[*d] = cst(s, ctx);
    AffineExpr offset = (in.storageOffset ? in.storageOffset : cst(0, ctx)) + strides[*d] * start;
    (void)addView(ctx, x, sizes, strides, offset, types);
    start += s;
  }
  return success();
}

LogicalResult tgc::inferClone(MLIRContext *ctx, InferLoc loc, Value self, TypeList &types,
                              StringAttr memoryFormat) {
  BaseTensorType x = tensorOf(self);
  if (failed(requireTensor(loc, x, "self")))
    return failure();
  TensorMeta meta = freshLike(x, x.getSizes());
  FailureOr<SmallVector<AffineExpr>> strides = copyStrides(loc, x, memoryFormat);
  if (failed(strides))
    return failure();
  meta.strides = std::move(*strides);
  addResult(ctx, x.isRef(), meta, types);
  return success();
}

bool tgc::isAsStridedRestride(Value self, ShapeAttr size, ShapeAttr stride,
                              ShapeAttr storageOffset) {
  BaseTensorType x = tensorOf(self);
  if (!x)
    return false;
  TensorMeta in = x.getMeta();
  MLIRContext *ctx = self.getContext();
  SmallVector<AffineExpr> strides = stridesOf(in, ctx);
  AffineExpr offset = in.storageOffset ? in.storageOffset : cst(0, ctx);
  AffineExpr wanted = storageOffset && !storageOffset.getSizes().empty()
                          ? storageOffset.getSizes()[0]
                          : cst(0, ctx);
  if (size.getSizes() != ArrayRef<AffineExpr>(in.sizes) ||
      stride.getSizes().size() != in.sizes.size() || wanted != offset)
    return false;
  for (auto [d, s] : llvm::enumerate(in.sizes))
    if (getConstantSize(s) != 1 && stride.getSizes()[d] != strides[d])
      return false;
  return true;
}

LogicalResult tgc::inferAsStrided(MLIRContext *ctx, InferLoc loc, Value self, ShapeAttr size,
                                  ShapeAttr stride, ShapeAttr storageOffset, TypeList &types) {
  BaseTensorType x = tensorOf(self);
  if (failed(requireTensor(loc, x, "self")))
    return failure();
  ArrayRef<AffineExpr> sizes = size.getSizes(), strides = stride.getSizes();
  if (sizes.size() != strides.size())
    return emitOptionalError(loc, "as_strided: ", sizes.size(), " sizes but ", strides.size(),
                             " strides");
  if (!isAsStridedRestride(self, size, stride, storageOffset)) {
    const TensorMeta &in = x.getMeta();
    if (!isContiguous(in, ctx) || (in.storageOffset && getConstantSize(in.storageOffset) != 0))
      return emitOptionalError(loc, "as_strided of a tensor that is not row-major is "
                                    "supported only as a change of strides");
    int64_t numel = 1, last = 0;
    for (AffineExpr s : x.getSizes()) {
      std::optional<int64_t> c = getConstantSize(s);
      if (!c)
        return emitOptionalError(loc, "as_strided: the input's sizes must be static");
      numel *= *c;
    }
    if (storageOffset && !storageOffset.getSizes().empty()) {
      std::optional<int64_t> c = getConstantSize(storageOffset.getSizes()[0]);
      if (!c)
        return emitOptionalError(loc, "as_strided: the storage offset must be static");
      last = *c;
    }
    bool empty = false;
    for (auto [s, st] : llvm::zip(sizes, strides)) {
      std::optional<int64_t> n = getConstantSize(s), k = getConstantSize(st);
      if (!n || !k || *n < 0 || *k < 0)
        return emitOptionalError(loc, "as_strided: sizes and strides must be static and "
                                      "non-negative");
      empty |= *n == 0;
      last += *n > 0 ? (*n - 1) * *k : 0;
    }
    if (!empty && (last < 0 || last >= numel))
      return emitOptionalError(loc, "as_strided: position ", last, " is outside the input's ",
                               numel, " elements");
  }
  // A view with the strides and offset it names (the offset defaults to the input's).
  AffineExpr offset = storageOffset && !storageOffset.getSizes().empty()
                          ? storageOffset.getSizes()[0]
                          : x.getMeta().storageOffset;
  return addView(ctx, x, sizes, strides, offset, types);
}
