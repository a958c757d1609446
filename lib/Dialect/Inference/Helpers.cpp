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
