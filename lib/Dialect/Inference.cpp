// Metadata inference for tgc ops: sizes, strides, dtype, device, requires_grad.
#include "tgc/Dialect/TgcDialect.h"

#include "mlir/IR/Diagnostics.h"

using namespace mlir;
using namespace tgc;

//===----------------------------------------------------------------------===//
// TensorMeta utilities
//===----------------------------------------------------------------------===//

std::optional<int64_t> tgc::getConstantSize(AffineExpr e) {
  if (auto c = llvm::dyn_cast_or_null<AffineConstantExpr>(e))
    return c.getValue();
  return std::nullopt;
}

std::optional<int64_t> tgc::normalizeDim(int64_t dim, int64_t rank) {
  int64_t bound = std::max<int64_t>(rank, 1);
  if (dim < -bound || dim >= bound)
    return std::nullopt;
  return dim < 0 ? dim + bound : dim;
}

SmallVector<AffineExpr> TensorMeta::contiguousStrides(ArrayRef<AffineExpr> sizes,
                                                      MLIRContext *ctx) {
  SmallVector<AffineExpr> strides(sizes.size());
  AffineExpr running = getAffineConstantExpr(1, ctx);
  for (int64_t i = static_cast<int64_t>(sizes.size()) - 1; i >= 0; --i) {
    strides[i] = running;
    // A size-1 (or 0) dimension does not change the stride of the next one, as in
    // PyTorch's contiguous strides: max(size, 1).
    if (getConstantSize(sizes[i]).value_or(2) > 1 || !getConstantSize(sizes[i]))
      running = running * sizes[i];
  }
  return strides;
}

AffineExpr TensorMeta::numel(MLIRContext *ctx) const {
  AffineExpr n = getAffineConstantExpr(1, ctx);
  for (AffineExpr size : sizes)
    n = n * size;
  return n;
}

FailureOr<SmallVector<AffineExpr>> tgc::broadcastSizes(ArrayRef<AffineExpr> a,
                                                       ArrayRef<AffineExpr> b) {
  size_t rank = std::max(a.size(), b.size());
  SmallVector<AffineExpr> result(rank);
  for (size_t i = 0; i < rank; ++i) {
    AffineExpr x = i < rank - a.size() ? AffineExpr() : a[i - (rank - a.size())];
    AffineExpr y = i < rank - b.size() ? AffineExpr() : b[i - (rank - b.size())];
    if (!x || getConstantSize(x) == 1) {
      result[i] = y ? y : x;
      continue;
    }
    if (!y || getConstantSize(y) == 1 || x == y) {
      result[i] = x;
      continue;
    }
    return failure();
  }
  return result;
}

DTypeCategory tgc::getCategory(Type dtype) {
  if (dtype.isInteger(1))
    return DTypeCategory::Bool;
  if (dtype.isIntOrIndex())
    return DTypeCategory::Integer;
  return DTypeCategory::Floating;
}

Type tgc::promoteDTypes(Type a, Type b) {
  if (!a)
    return b;
  if (!b || a == b)
    return a;
  DTypeCategory ca = getCategory(a), cb = getCategory(b);
  if (ca != cb)
    return ca > cb ? a : b;
  if (ca == DTypeCategory::Floating) {
    unsigned wa = a.getIntOrFloatBitWidth(), wb = b.getIntOrFloatBitWidth();
    if (wa == wb) // f16 with bf16
      return Float32Type::get(a.getContext());
    return wa > wb ? a : b;
  }
  auto ia = llvm::cast<IntegerType>(a), ib = llvm::cast<IntegerType>(b);
  if (ia.isUnsigned() == ib.isUnsigned())
    return ia.getWidth() >= ib.getWidth() ? a : b;
  // Mixed signedness: the signed type if it is wider, else the next wider signed one.
  IntegerType sgn = ia.isUnsigned() ? ib : ia, uns = ia.isUnsigned() ? ia : ib;
  if (sgn.getWidth() > uns.getWidth())
    return sgn;
  return IntegerType::get(a.getContext(), std::min(uns.getWidth() * 2, 64u));
}

/// torch's combine_categories: the lower tier wins only where it is of a higher
/// category than the higher tier.
static Type combineCategories(Type higher, Type lower) {
  if (!higher)
    return lower;
  if (!lower)
    return higher;
  if (getCategory(higher) == DTypeCategory::Floating)
    return higher;
  if (getCategory(higher) == DTypeCategory::Bool ||
      getCategory(lower) == DTypeCategory::Floating)
    return promoteDTypes(higher, lower);
  return higher;
}

Type tgc::promoteTypes(ArrayRef<PromotionOperand> operands, Type defaultFloat) {
  Type tiers[3] = {};
  for (const PromotionOperand &op : operands) {
    Type dtype = op.dtype;
    if (op.kind == PromotionOperand::WrappedNumber &&
        getCategory(dtype) == DTypeCategory::Floating)
      dtype = defaultFloat;
    tiers[op.kind] = promoteDTypes(tiers[op.kind], dtype);
  }
  return combineCategories(tiers[0], combineCategories(tiers[1], tiers[2]));
}

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

static BaseTensorType tensorOf(Value v) {
  return v ? llvm::dyn_cast<BaseTensorType>(v.getType()) : BaseTensorType();
}

/// An expression as text, for diagnostics.
static std::string exprStr(AffineExpr e) {
  std::string text;
  llvm::raw_string_ostream os(text);
  e.print(os);
  return text;
}

static Type defaultFloat(MLIRContext *ctx) { return Float32Type::get(ctx); }

static AffineExpr cst(int64_t v, MLIRContext *ctx) { return getAffineConstantExpr(v, ctx); }

/// Adds a result type of form `isRef`: capture-level results get contiguous strides
/// unless the meta states them; value-level results carry no layout.
static void addResult(MLIRContext *ctx, bool isRef, TensorMeta meta, TypeList &types) {
  if (isRef && meta.strides.empty())
    meta.strides = TensorMeta::contiguousStrides(meta.sizes, ctx);
  if (!isRef) {
    meta.strides.clear();
    meta.storageOffset = {};
  }
  if (meta.storageOffset && getConstantSize(meta.storageOffset) == 0)
    meta.storageOffset = {};
  types.push_back(BaseTensorType::get(ctx, isRef, meta));
}

/// A fresh (non-aliasing) result shaped `sizes` with `self`'s dtype, device and form.
static TensorMeta freshLike(BaseTensorType self, ArrayRef<AffineExpr> sizes) {
  TensorMeta meta;
  meta.sizes.assign(sizes.begin(), sizes.end());
  meta.dtype = self.getDtype();
  TensorMeta in = self.getMeta();
  meta.device = in.device;
  meta.requiresGrad = in.requiresGrad;
  return meta;
}

/// The strides a capture-level input has (contiguous when unspecified).
static SmallVector<AffineExpr> stridesOf(const TensorMeta &meta, MLIRContext *ctx) {
  if (!meta.strides.empty())
    return meta.strides;
  return TensorMeta::contiguousStrides(meta.sizes, ctx);
}

static LogicalResult requireTensor(InferLoc loc, BaseTensorType t, StringRef what) {
  if (t)
    return success();
  return emitOptionalError(loc, what, " must be a tgc tensor");
}

static FailureOr<int64_t> dimIn(InferLoc loc, int64_t dim, int64_t rank) {
  std::optional<int64_t> d = normalizeDim(dim, rank);
  if (!d)
    return emitOptionalError(loc, "dimension ", dim, " is out of range for a tensor of rank ",
                             rank);
  return *d;
}

static PromotionOperand promotionOperand(Value v) {
  if (auto t = tensorOf(v))
    return {t.getDtype(),
            t.getRank() == 0 ? PromotionOperand::ZeroDim : PromotionOperand::Dimensioned};
  return {v.getType(), PromotionOperand::WrappedNumber};
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

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

//===----------------------------------------------------------------------===//
// Linear algebra and convolution
//===----------------------------------------------------------------------===//

static bool anyRequiresGrad(std::initializer_list<BaseTensorType> ts) {
  for (BaseTensorType t : ts)
    if (t && t.getMeta().requiresGrad)
      return true;
  return false;
}

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

LogicalResult tgc::inferAddmm(MLIRContext *ctx, InferLoc loc, Value self, Value mat1,
                              Value mat2, TypeList &types) {
  SmallVector<Type> mm;
  if (failed(inferMatmul(ctx, loc, mat1, mat2, MatmulKind::Mm, mm)))
    return failure();
  BaseTensorType s = tensorOf(self);
  if (failed(requireTensor(loc, s, "self")))
    return failure();
  auto product = llvm::cast<BaseTensorType>(mm[0]);
  FailureOr<SmallVector<AffineExpr>> b = broadcastSizes(s.getSizes(), product.getSizes());
  if (failed(b) || *b != SmallVector<AffineExpr>(product.getSizes()))
    return emitOptionalError(loc, "addmm: self does not broadcast to the product's sizes");
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
  addResult(ctx, x.isRef(), meta, types);
  return success();
}

//===----------------------------------------------------------------------===//
// Normalization, softmax
//===----------------------------------------------------------------------===//

LogicalResult tgc::inferBatchNorm(MLIRContext *ctx, InferLoc loc, Value input, bool training,
                                  bool functional, TypeList &types) {
  BaseTensorType x = tensorOf(input);
  if (failed(requireTensor(loc, x, "input")))
    return failure();
  if (x.getRank() < 2)
    return emitOptionalError(loc, "batch_norm expects an input of rank >= 2");
  AffineExpr channels = x.getSizes()[1];
  addResult(ctx, x.isRef(), freshLike(x, x.getSizes()), types);
  SmallVector<AffineExpr> statSizes = {training ? channels : cst(0, ctx)};
  TensorMeta stat = freshLike(x, statSizes);
  addResult(ctx, x.isRef(), stat, types);
  addResult(ctx, x.isRef(), stat, types);
  if (functional) {
    TensorMeta running = freshLike(x, {channels});
    running.requiresGrad = false;
    addResult(ctx, x.isRef(), running, types);
    addResult(ctx, x.isRef(), running, types);
  }
  return success();
}

LogicalResult tgc::inferLayerNorm(MLIRContext *ctx, InferLoc loc, Value input,
                                  ArrayRef<int64_t> normalizedShape, bool native,
                                  TypeList &types) {
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

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

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
  else if (kind == ReductionKind::sum && getCategory(meta.dtype) != DTypeCategory::Floating)
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

//===----------------------------------------------------------------------===//
// Views
//===----------------------------------------------------------------------===//

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
  return meta.strides.empty() ||
         meta.strides == TensorMeta::contiguousStrides(meta.sizes, ctx);
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
    sizes[inferred] = numel.floorDiv(known);
  else if (getConstantSize(numel) && getConstantSize(known) && numel != known)
    return emitOptionalError(loc, "view: shape ", size, " is invalid for a tensor of ", exprStr(numel),
                             " elements");
  // A view of a contiguous tensor is contiguous from the same offset; reshape of a
  // non-contiguous tensor copies, giving a fresh contiguous tensor.
  AffineExpr offset = isContiguous(in, ctx) ? in.storageOffset : AffineExpr();
  return addView(ctx, x, sizes, TensorMeta::contiguousStrides(sizes, ctx), offset, types);
}

LogicalResult tgc::inferPermute(MLIRContext *ctx, InferLoc loc, Value self,
                                ArrayRef<int64_t> dims, TypeList &types) {
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

LogicalResult tgc::inferSqueeze(MLIRContext *ctx, InferLoc loc, Value self,
                                DenseI64ArrayAttr dims, TypeList &types) {
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
AffineExpr tgc::resolveSliceBound(ShapeAttr bound, AffineExpr size, bool isEnd,
                                  MLIRContext *ctx) {
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
  AffineExpr length = (hi - lo).ceilDiv(step);
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
    return emitOptionalError(loc, "split: sizes add up to ", total, " but the dimension has ",
                             *n);
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

LogicalResult tgc::inferClone(MLIRContext *ctx, InferLoc loc, Value self, TypeList &types) {
  BaseTensorType x = tensorOf(self);
  if (failed(requireTensor(loc, x, "self")))
    return failure();
  addResult(ctx, x.isRef(), freshLike(x, x.getSizes()), types);
  return success();
}

//===----------------------------------------------------------------------===//
// Creation
//===----------------------------------------------------------------------===//

static Type dtypeOfScalarAttr(Attribute value, MLIRContext *ctx) {
  if (llvm::isa_and_nonnull<FloatAttr>(value))
    return defaultFloat(ctx);
  if (llvm::isa_and_nonnull<BoolAttr>(value))
    return IntegerType::get(ctx, 1);
  return IntegerType::get(ctx, 64);
}

LogicalResult tgc::inferFull(MLIRContext *ctx, InferLoc loc, ShapeAttr size, Attribute fillValue,
                             TypeAttr dtype, DeviceAttr device, TypeList &types) {
  TensorMeta meta;
  meta.sizes.assign(size.getSizes().begin(), size.getSizes().end());
  for (AffineExpr s : meta.sizes)
    if (auto c = getConstantSize(s); c && *c < 0)
      return emitOptionalError(loc, "negative size ", *c);
  meta.dtype = dtype ? dtype.getValue() : dtypeOfScalarAttr(fillValue, ctx);
  meta.device = device;
  addResult(ctx, /*isRef=*/false, meta, types);
  return success();
}

LogicalResult tgc::inferFullLike(MLIRContext *ctx, InferLoc loc, Value self, TypeAttr dtype,
                                 TypeList &types) {
  BaseTensorType x = tensorOf(self);
  if (failed(requireTensor(loc, x, "self")))
    return failure();
  TensorMeta meta = freshLike(x, x.getSizes());
  meta.requiresGrad = false;
  if (dtype)
    meta.dtype = dtype.getValue();
  addResult(ctx, x.isRef(), meta, types);
  return success();
}

static std::optional<double> scalarValue(Attribute a) {
  if (auto f = llvm::dyn_cast_or_null<FloatAttr>(a))
    return f.getValueAsDouble();
  if (auto i = llvm::dyn_cast_or_null<IntegerAttr>(a))
    return static_cast<double>(i.getInt());
  return std::nullopt;
}

LogicalResult tgc::inferArange(MLIRContext *ctx, InferLoc loc, Attribute start, Attribute end,
                               Attribute step, TypeAttr dtype, DeviceAttr device,
                               TypeList &types) {
  double lo = scalarValue(start).value_or(0), hi = scalarValue(end).value_or(0);
  double st = scalarValue(step).value_or(1);
  if (st == 0 || (hi - lo) / st < 0)
    return emitOptionalError(loc, "arange: the range [", lo, ", ", hi, ") with step ", st,
                             " is invalid");
  TensorMeta meta;
  meta.sizes.push_back(cst(static_cast<int64_t>(std::ceil((hi - lo) / st)), ctx));
  bool anyFloat = llvm::isa_and_nonnull<FloatAttr>(start) || llvm::isa<FloatAttr>(end) ||
                  llvm::isa_and_nonnull<FloatAttr>(step);
  meta.dtype = dtype ? dtype.getValue()
                     : (anyFloat ? defaultFloat(ctx) : IntegerType::get(ctx, 64));
  meta.device = device;
  addResult(ctx, /*isRef=*/false, meta, types);
  return success();
}

LogicalResult tgc::inferConstant(MLIRContext *ctx, InferLoc loc, ElementsAttr value,
                                 TypeList &types) {
  auto shaped = llvm::cast<ShapedType>(value.getType());
  TensorMeta meta;
  for (int64_t s : shaped.getShape())
    meta.sizes.push_back(cst(s, ctx));
  meta.dtype = shaped.getElementType();
  addResult(ctx, /*isRef=*/false, meta, types);
  return success();
}

//===----------------------------------------------------------------------===//
// Concatenation, attention, pooling
//===----------------------------------------------------------------------===//

LogicalResult tgc::inferCat(MLIRContext *ctx, InferLoc loc, ValueRange tensors, int64_t dim,
                            bool stack, TypeList &types) {
  if (tensors.empty())
    return emitOptionalError(loc, "cat/stack of no tensors");
  BaseTensorType first = tensorOf(tensors[0]);
  if (failed(requireTensor(loc, first, "tensors")))
    return failure();
  int64_t rank = first.getRank();
  FailureOr<int64_t> d = dimIn(loc, dim, stack ? rank + 1 : rank);
  if (failed(d))
    return failure();
  SmallVector<PromotionOperand> promotion;
  SmallVector<AffineExpr> sizes(first.getSizes());
  AffineExpr total = cst(0, ctx);
  bool requiresGrad = false;
  for (Value v : tensors) {
    BaseTensorType t = tensorOf(v);
    if (!t || t.getRank() != rank)
      return emitOptionalError(loc, "cat/stack operands must have equal ranks");
    for (int64_t i = 0; i < rank; ++i)
      if ((stack || i != *d) && t.getSizes()[i] != sizes[i])
        return emitOptionalError(loc, "cat/stack operands differ in dimension ", i);
    if (!stack)
      total = total + t.getSizes()[*d];
    promotion.push_back({t.getDtype(), PromotionOperand::Dimensioned});
    requiresGrad |= t.getMeta().requiresGrad;
  }
  if (stack)
    sizes.insert(sizes.begin() + *d, cst(tensors.size(), ctx));
  else
    sizes[*d] = total;
  TensorMeta meta = freshLike(first, sizes);
  meta.dtype = promoteTypes(promotion, defaultFloat(ctx));
  meta.requiresGrad = requiresGrad;
  addResult(ctx, first.isRef(), meta, types);
  return success();
}

LogicalResult tgc::inferAttention(MLIRContext *ctx, InferLoc loc, Value query, Value key,
                                  Value value, TypeList &types) {
  BaseTensorType q = tensorOf(query), k = tensorOf(key), v = tensorOf(value);
  if (failed(requireTensor(loc, q, "query")) || failed(requireTensor(loc, k, "key")) ||
      failed(requireTensor(loc, v, "value")))
    return failure();
  if (q.getRank() < 2 || k.getRank() != q.getRank() || v.getRank() != q.getRank())
    return emitOptionalError(loc, "attention operands must have equal ranks >= 2");
  if (q.getSizes().back() != k.getSizes().back())
    return emitOptionalError(loc, "attention: query and key embeddings differ");
  SmallVector<AffineExpr> sizes(q.getSizes().drop_back());
  sizes.push_back(v.getSizes().back());
  TensorMeta meta = freshLike(q, sizes);
  meta.requiresGrad = anyRequiresGrad({q, k, v});
  addResult(ctx, q.isRef(), meta, types);
  return success();
}

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
    return emitOptionalError(loc, "pooling window parameters must have 1 or ", spatial,
                             " entries");
  for (unsigned i = 0; i < spatial; ++i)
    if (w.kernel[i] <= 0 || w.stride[i] <= 0 || w.padding[i] < 0 || w.dilation[i] <= 0 ||
        2 * w.padding[i] > w.kernel[i])
      return emitOptionalError(loc, "invalid pooling window");
  return w;
}

LogicalResult tgc::inferPool2d(MLIRContext *ctx, InferLoc loc, Value self,
                               ArrayRef<int64_t> kernel, ArrayRef<int64_t> stride,
                               ArrayRef<int64_t> padding, ArrayRef<int64_t> dilation,
                               bool ceilMode, bool withIndices, TypeList &types) {
  BaseTensorType x = tensorOf(self);
  if (failed(requireTensor(loc, x, "self")))
    return failure();
  if (x.getRank() != 4 && x.getRank() != 3)
    return emitOptionalError(loc, "2-d pooling expects a 3-d or 4-d input");
  FailureOr<Window> w = expandWindow(loc, kernel, stride, padding, dilation, 2);
  if (failed(w))
    return failure();
  SmallVector<AffineExpr> sizes(x.getSizes());
  int64_t first = x.getRank() - 2;
  for (int i = 0; i < 2; ++i) {
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
  addResult(ctx, x.isRef(), freshLike(x, sizes), types);
  if (withIndices) {
    TensorMeta indices = freshLike(x, sizes);
    indices.dtype = IntegerType::get(ctx, 64);
    indices.requiresGrad = false;
    addResult(ctx, x.isRef(), indices, types);
  }
  return success();
}

LogicalResult tgc::inferAdaptivePool2d(MLIRContext *ctx, InferLoc loc, Value self,
                                       ArrayRef<int64_t> outputSize, TypeList &types) {
  BaseTensorType x = tensorOf(self);
  if (failed(requireTensor(loc, x, "self")))
    return failure();
  if ((x.getRank() != 4 && x.getRank() != 3) || outputSize.size() != 2)
    return emitOptionalError(loc, "adaptive 2-d pooling expects a 3-d or 4-d input and two "
                                  "output sizes");
  SmallVector<AffineExpr> sizes(x.getSizes());
  sizes[sizes.size() - 2] = cst(outputSize[0], ctx);
  sizes[sizes.size() - 1] = cst(outputSize[1], ctx);
  addResult(ctx, x.isRef(), freshLike(x, sizes), types);
  return success();
}

//===----------------------------------------------------------------------===//
// Training: backward ops, losses, embedding, random
//===----------------------------------------------------------------------===//

/// Convolution parameters with one entry per spatial dimension: a single value
/// applies to all, an empty list means `fill`.
static SmallVector<int64_t> expandConvParam(ArrayRef<int64_t> v, int64_t fill,
                                            int64_t spatial) {
  SmallVector<int64_t> out(v);
  if (out.size() == 1)
    out.assign(spatial, out[0]);
  if (out.empty())
    out.assign(spatial, fill);
  return out;
}

static bool sameSizes(ArrayRef<AffineExpr> a, ArrayRef<AffineExpr> b) {
  return a.size() == b.size() && llvm::equal(a, b);
}

static std::string sizesStr(ArrayRef<AffineExpr> sizes) {
  std::string text = "[";
  for (auto [i, s] : llvm::enumerate(sizes))
    text += (i ? ", " : "") + exprStr(s);
  return text + "]";
}

LogicalResult tgc::inferConvolutionBackward(MLIRContext *ctx, InferLoc loc, Value gradOutput,
                                            Value other, ShapeAttr size,
                                            ArrayRef<int64_t> stride, ArrayRef<int64_t> padding,
                                            ArrayRef<int64_t> dilation, int64_t groups,
                                            ConvolutionGradient which, TypeList &types) {
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
  if ((int64_t)s.size() != spatial || (int64_t)p.size() != spatial ||
      (int64_t)d.size() != spatial)
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
    return emitOptionalError(loc, "convolution backward: ", *filters,
                             " filters do not split into ", groups, " groups");
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

/// The sizes of `self` without its class dimension (1, or 0 for a 1-d `self`).
static SmallVector<AffineExpr> withoutClassDim(BaseTensorType self) {
  SmallVector<AffineExpr> sizes(self.getSizes());
  sizes.erase(sizes.begin() + (self.getRank() == 1 ? 0 : 1));
  return sizes;
}

/// Checks nll_loss's operands; returns the sizes of the unreduced loss.
static FailureOr<SmallVector<AffineExpr>> checkNllOperands(InferLoc loc, BaseTensorType x,
                                                           BaseTensorType t,
                                                           BaseTensorType w,
                                                           int64_t reduction,
                                                           bool allowProbabilities) {
  if (failed(requireTensor(loc, x, "self")) || failed(requireTensor(loc, t, "target")))
    return failure();
  if (x.getRank() < 1)
    return emitOptionalError(loc, "nll_loss: self must have a class dimension");
  if (getCategory(x.getDtype()) != DTypeCategory::Floating)
    return emitOptionalError(loc, "nll_loss: self must be floating-point, got ", x.getDtype());
  if (reduction < 0 || reduction > 2)
    return emitOptionalError(loc, "nll_loss: reduction must be 0 (none), 1 (mean) or 2 (sum), "
                                  "got ",
                             reduction);
  SmallVector<AffineExpr> lossSizes = withoutClassDim(x);
  bool probabilities = getCategory(t.getDtype()) == DTypeCategory::Floating;
  if (probabilities && !(allowProbabilities && sameSizes(t.getSizes(), x.getSizes())))
    return emitOptionalError(loc, "nll_loss: target must hold class indices of sizes ",
                             sizesStr(lossSizes));
  if (!probabilities && getCategory(t.getDtype()) != DTypeCategory::Integer)
    return emitOptionalError(loc, "nll_loss: target must be an integer tensor, got ",
                             t.getDtype());
  if (!probabilities && !sameSizes(t.getSizes(), lossSizes))
    return emitOptionalError(loc, "nll_loss: target has sizes ", sizesStr(t.getSizes()),
                             " but self without its class dimension has ",
                             sizesStr(lossSizes));
  AffineExpr classes = x.getSizes()[x.getRank() == 1 ? 0 : 1];
  if (w && (w.getRank() != 1 || w.getSizes()[0] != classes))
    return emitOptionalError(loc, "nll_loss: weight must have one entry per class (",
                             exprStr(classes), ")");
  return lossSizes;
}

LogicalResult tgc::inferNllLoss(MLIRContext *ctx, InferLoc loc, Value self, Value target,
                                Value weight, int64_t reduction, bool withTotalWeight,
                                TypeList &types) {
  BaseTensorType x = tensorOf(self), t = tensorOf(target), w = tensorOf(weight);
  FailureOr<SmallVector<AffineExpr>> lossSizes =
      checkNllOperands(loc, x, t, w, reduction, /*allowProbabilities=*/!withTotalWeight);
  if (failed(lossSizes))
    return failure();
  TensorMeta meta = freshLike(x, reduction == 0 ? ArrayRef<AffineExpr>(*lossSizes)
                                                : ArrayRef<AffineExpr>{});
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
                                        Value self, Value target, Value weight,
                                        Value totalWeight, int64_t reduction,
                                        TypeList &types) {
  BaseTensorType g = tensorOf(gradOutput), x = tensorOf(self), t = tensorOf(target),
                 w = tensorOf(weight), total = tensorOf(totalWeight);
  FailureOr<SmallVector<AffineExpr>> lossSizes =
      checkNllOperands(loc, x, t, w, reduction, /*allowProbabilities=*/false);
  if (failed(lossSizes) || failed(requireTensor(loc, g, "grad_output")) ||
      failed(requireTensor(loc, total, "total_weight")))
    return failure();
  if (!sameSizes(g.getSizes(), reduction == 0 ? ArrayRef<AffineExpr>(*lossSizes)
                                              : ArrayRef<AffineExpr>{}))
    return emitOptionalError(loc, "nll_loss_backward: grad_output has sizes ",
                             sizesStr(g.getSizes()), ", not those of the loss");
  if (total.getRank() != 0)
    return emitOptionalError(loc, "nll_loss_backward: total_weight must be 0-d");
  TensorMeta meta = freshLike(x, x.getSizes());
  meta.requiresGrad = anyRequiresGrad({g, w});
  addResult(ctx, x.isRef(), meta, types);
  return success();
}

LogicalResult tgc::inferGather(MLIRContext *ctx, InferLoc loc, Value self, int64_t dim,
                               Value index, TypeList &types) {
  BaseTensorType x = tensorOf(self), i = tensorOf(index);
  if (failed(requireTensor(loc, x, "self")) || failed(requireTensor(loc, i, "index")) ||
      failed(dimIn(loc, dim, x.getRank())))
    return failure();
  if (!i.getDtype().isInteger(64))
    return emitOptionalError(loc, "gather: index must be i64, got ", i.getDtype());
  if (i.getRank() != x.getRank())
    return emitOptionalError(loc, "gather: index rank ", i.getRank(), " differs from self's ",
                             x.getRank());
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

LogicalResult tgc::inferRandBernoulli(MLIRContext *ctx, InferLoc loc, Value state,
                                      ShapeAttr size, double p, TypeList &types) {
  BaseTensorType s = tensorOf(state);
  if (failed(requireTensor(loc, s, "state")))
    return failure();
  if (s.getRank() != 1 || getConstantSize(s.getSizes()[0]) != 2 || !s.getDtype().isInteger(64))
    return emitOptionalError(loc, "rand_bernoulli: the RNG state must be i64[2] (seed, offset)");
  if (!(p >= 0 && p <= 1))
    return emitOptionalError(loc, "rand_bernoulli: p must be in [0, 1], got ", p);
  TensorMeta meta = freshLike(s, size.getSizes());
  meta.dtype = IntegerType::get(ctx, 1);
  meta.requiresGrad = false;
  addResult(ctx, s.isRef(), meta, types);
  return success();
}

LogicalResult tgc::inferPool2dBackward(MLIRContext *ctx, InferLoc loc, Value gradOutput,
                                       Value self, Value indices, ArrayRef<int64_t> kernel,
                                       ArrayRef<int64_t> stride, ArrayRef<int64_t> padding,
                                       ArrayRef<int64_t> dilation, bool ceilMode,
                                       TypeList &types) {
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
