// Helpers shared by the metadata inference files (Helpers.h).
#include "Helpers.h"

using namespace mlir;
using namespace tgc;

namespace tgc::inference {

BaseTensorType tensorOf(Value v) {
  return v ? llvm::dyn_cast<BaseTensorType>(v.getType()) : BaseTensorType();
}

/// An expression as text, for diagnostics.
std::string exprStr(AffineExpr e) {
  std::string text;
  llvm::raw_string_ostream os(text);
  e.print(os);
  return text;
}

Type defaultFloat(MLIRContext *ctx) { return Float32Type::get(ctx); }

AffineExpr cst(int64_t v, MLIRContext *ctx) { return getAffineConstantExpr(v, ctx); }

/// Adds a result type of form `isRef`: capture-level results get contiguous strides
/// unless the meta states them; value-level results carry no layout.
void addResult(MLIRContext *ctx, bool isRef, TensorMeta meta, TypeList &types) {
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
TensorMeta freshLike(BaseTensorType self, ArrayRef<AffineExpr> sizes) {
  TensorMeta meta;
  meta.sizes.assign(sizes.begin(), sizes.end());
  meta.dtype = self.getDtype();
  TensorMeta in = self.getMeta();
  meta.device = in.device;
  meta.requiresGrad = in.requiresGrad;
  return meta;
}

TensorMeta indicesLike(BaseTensorType self, ArrayRef<AffineExpr> sizes) {
  TensorMeta meta = freshLike(self, sizes);
  meta.dtype = IntegerType::get(self.getContext(), 64);
  meta.requiresGrad = false;
  return meta;
}

LogicalResult requireIndexOfRank(InferLoc loc, StringRef op, BaseTensorType self,
                                 BaseTensorType index) {
  if (getCategory(index.getDtype()) != DTypeCategory::Integer || index.getDtype().isInteger(1))
    return emitOptionalError(loc, op, ": index must be an integer tensor, got ", index.getDtype());
  if (index.getRank() != self.getRank())
    return emitOptionalError(loc, op, ": index rank ", index.getRank(), " differs from self's ",
                             self.getRank());
  return success();
}

/// The strides a capture-level input has (contiguous when unspecified).
SmallVector<AffineExpr> stridesOf(const TensorMeta &meta, MLIRContext *ctx) {
  if (!meta.strides.empty())
    return meta.strides;
  return TensorMeta::contiguousStrides(meta.sizes, ctx);
}

SmallVector<AffineExpr> iteratorOrderStrides(MLIRContext *ctx, ArrayRef<int64_t> shape,
                                             ArrayRef<SmallVector<int64_t>> operandStrides) {
  int64_t rank = shape.size();
  auto shouldSwap = [&](int64_t dim0, int64_t dim1) {
    for (const SmallVector<int64_t> &s : operandStrides) {
      if (s[dim0] == 0 || s[dim1] == 0)
        continue;
      if (s[dim0] < s[dim1])
        return -1;
      if (s[dim0] > s[dim1])
        return 1;
      if (shape[dim0] > shape[dim1])
        return 1;
    }
    return 0;
  };
  // perm[0] is the fastest dimension.
  SmallVector<int64_t> perm;
  for (int64_t d = rank - 1; d >= 0; --d)
    perm.push_back(d);
  for (int64_t i = 1; i < rank; ++i) {
    int64_t dim1 = i;
    for (int64_t dim0 = i - 1; dim0 >= 0; --dim0) {
      int comparison = shouldSwap(perm[dim0], perm[dim1]);
      if (comparison > 0) {
        std::swap(perm[dim0], perm[dim1]);
        dim1 = dim0;
      } else if (comparison < 0) {
        break;
      }
    }
  }
  bool rowMajor = true;
  for (int64_t j = 0; j < rank; ++j)
    rowMajor &= perm[j] == rank - 1 - j;
  if (rowMajor)
    return {};
  SmallVector<AffineExpr> result(rank);
  int64_t next = 1;
  for (int64_t d : perm) {
    result[d] = cst(next, ctx);
    next *= shape[d];
  }
  return result;
}

/// Whether constant `strides` address each element of `shape` once with no gaps
/// (ATen's compute_non_overlapping_and_dense).
static bool nonOverlappingAndDense(ArrayRef<int64_t> shape, ArrayRef<int64_t> strides) {
  SmallVector<int64_t> order;
  for (auto [d, size] : llvm::enumerate(shape)) {
    if (size == 0)
      return true;
    if (size != 1)
      order.push_back(d);
  }
  llvm::stable_sort(order, [&](int64_t a, int64_t b) { return strides[a] < strides[b]; });
  int64_t expected = 1;
  for (int64_t d : order) {
    if (strides[d] != expected)
      return false;
    expected *= shape[d];
  }
  return true;
}

FailureOr<SmallVector<AffineExpr>> copyStrides(InferLoc loc, BaseTensorType self,
                                               StringAttr memoryFormat) {
  std::optional<MemoryFormat> format = MemoryFormat::Contiguous;
  if (memoryFormat) {
    format = parseMemoryFormat(memoryFormat.getValue());
    if (!format)
      return emitOptionalError(loc, "unknown memory format '", memoryFormat.getValue(), "'");
  }
  const TensorMeta &meta = self.getMeta();
  MLIRContext *ctx = self.getContext();
  if (*format == MemoryFormat::ChannelsLast || *format == MemoryFormat::ChannelsLast3d) {
    int64_t rank = *format == MemoryFormat::ChannelsLast ? 4 : 5;
    if (meta.rank() != rank)
      return emitOptionalError(loc, "required rank ", rank, " tensor to use ",
                               stringifyMemoryFormat(*format), " format");
    if (!self.isRef())
      return SmallVector<AffineExpr>{};
    return memoryFormatStrides(*format, meta.sizes, ctx);
  }
  if (*format == MemoryFormat::Contiguous || !self.isRef() || meta.strides.empty())
    return SmallVector<AffineExpr>{};
  // preserve_format: dense strides kept as they are, others made dense in their order.
  SmallVector<int64_t> shape, strides;
  for (auto [size, stride] : llvm::zip(meta.sizes, meta.strides)) {
    std::optional<int64_t> s = getConstantSize(size), t = getConstantSize(stride);
    if (!s || !t)
      return SmallVector<AffineExpr>{};
    shape.push_back(*s);
    strides.push_back(*t);
  }
  if (nonOverlappingAndDense(shape, strides))
    return SmallVector<AffineExpr>(meta.strides);
  return iteratorOrderStrides(ctx, shape, {strides});
}

SmallVector<AffineExpr> suggestedLayout(ArrayRef<AffineExpr> sizes,
                                        ArrayRef<BaseTensorType> sources) {
  for (BaseTensorType source : sources) {
    if (!source || !source.isRef())
      continue;
    const TensorMeta &meta = source.getMeta();
    MemoryFormat format = suggestMemoryFormat(meta.sizes, meta.strides);
    if (format != MemoryFormat::Contiguous && meta.rank() == static_cast<int64_t>(sizes.size()))
      return memoryFormatStrides(format, sizes, source.getContext());
  }
  return {};
}

LogicalResult requireTensor(InferLoc loc, BaseTensorType t, StringRef what) {
  if (t)
    return success();
  return emitOptionalError(loc, what, " must be a tgc tensor");
}

FailureOr<int64_t> dimIn(InferLoc loc, int64_t dim, int64_t rank) {
  std::optional<int64_t> d = normalizeDim(dim, rank);
  if (!d)
    return emitOptionalError(loc, "dimension ", dim, " is out of range for a tensor of rank ",
                             rank);
  return *d;
}

PromotionOperand promotionOperand(Value v) {
  if (auto t = tensorOf(v))
    return {t.getDtype(),
            t.getRank() == 0 ? PromotionOperand::ZeroDim : PromotionOperand::Dimensioned};
  return {v.getType(), PromotionOperand::WrappedNumber};
}

bool anyRequiresGrad(std::initializer_list<BaseTensorType> ts) {
  for (BaseTensorType t : ts)
    if (t && t.getMeta().requiresGrad)
      return true;
  return false;
}

bool sameSizes(ArrayRef<AffineExpr> a, ArrayRef<AffineExpr> b) {
  return a.size() == b.size() && llvm::equal(a, b);
}

std::string sizesStr(ArrayRef<AffineExpr> sizes) {
  std::string text = "[";
  for (auto [i, s] : llvm::enumerate(sizes))
    text += (i ? ", " : "") + exprStr(s);
  return text + "]";
}

} // namespace tgc::inference
