// TensorMeta utilities: size expressions, broadcasting and dtype promotion
// (include/tgc/Dialect/TensorMeta.h).
#include "tgc/Dialect/TgcDialect.h"

using namespace mlir;
using namespace tgc;

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
  if (getCategory(higher) == DTypeCategory::Bool || getCategory(lower) == DTypeCategory::Floating)
    return promoteDTypes(higher, lower);
  return higher;
}

Type tgc::promoteTypes(ArrayRef<PromotionOperand> operands, Type defaultFloat) {
  Type tiers[3] = {};
  for (const PromotionOperand &op : operands) {
    Type dtype = op.dtype;
    if (op.kind == PromotionOperand::WrappedNumber && getCategory(dtype) == DTypeCategory::Floating)
      dtype = defaultFloat;
    tiers[op.kind] = promoteDTypes(tiers[op.kind], dtype);
  }
  return combineCategories(tiers[0], combineCategories(tiers[1], tiers[2]));
}
