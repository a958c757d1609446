// TensorMeta utilities: size expressions, broadcasting and dtype promotion
// (include/tgc/Dialect/TensorMeta.h).
#include "tgc/Dialect/TgcDialect.h"

#include "llvm/ADT/StringSwitch.h"

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

std::optional<MemoryFormat> tgc::parseMemoryFormat(llvm::StringRef name) {
  return llvm::StringSwitch<std::optional<MemoryFormat>>(name)
      .Case("contiguous_format", MemoryFormat::Contiguous)
      .Case("preserve_format", MemoryFormat::Preserve)
      .Case("channels_last", MemoryFormat::ChannelsLast)
      .Case("channels_last_3d", MemoryFormat::ChannelsLast3d)
      .Default(std::nullopt);
}

llvm::StringRef tgc::stringifyMemoryFormat(MemoryFormat format) {
  switch (format) {
  case MemoryFormat::Contiguous:
    return "contiguous_format";
  case MemoryFormat::Preserve:
    return "preserve_format";
  case MemoryFormat::ChannelsLast:
    return "channels_last";
  case MemoryFormat::ChannelsLast3d:
    return "channels_last_3d";
  }
  llvm_unreachable("a memory format");
}

/// The dimensions from the fastest in `format`'s order for `rank`, or empty.
static SmallVector<int64_t> formatOrder(MemoryFormat format, int64_t rank) {
  switch (format) {
  case MemoryFormat::Contiguous: {
    SmallVector<int64_t> order;
    for (int64_t d = rank - 1; d >= 0; --d)
      order.push_back(d);
    return order;
  }
  case MemoryFormat::ChannelsLast:
    return rank == 4 ? SmallVector<int64_t>{1, 3, 2, 0} : SmallVector<int64_t>{};
  case MemoryFormat::ChannelsLast3d:
    return rank == 5 ? SmallVector<int64_t>{1, 4, 3, 2, 0} : SmallVector<int64_t>{};
  case MemoryFormat::Preserve:
    break;
  }
  return {};
}

SmallVector<AffineExpr> tgc::memoryFormatStrides(MemoryFormat format, ArrayRef<AffineExpr> sizes,
                                                 MLIRContext *ctx) {
  if (format == MemoryFormat::Contiguous)
    return TensorMeta::contiguousStrides(sizes, ctx);
  SmallVector<int64_t> order = formatOrder(format, sizes.size());
  if (order.empty())
    return {};
  // ATen multiplies the sizes as they are (a size-0 dimension zeroes the slower ones).
  SmallVector<AffineExpr> strides(sizes.size());
  AffineExpr running = getAffineConstantExpr(1, ctx);
  for (int64_t d : order) {
    strides[d] = running;
    running = running * sizes[d];
  }
  return strides;
}

bool tgc::isContiguousAs(ArrayRef<AffineExpr> sizes, ArrayRef<AffineExpr> strides,
                         MemoryFormat format) {
  SmallVector<int64_t> order = formatOrder(format, sizes.size());
  if (order.empty() && !sizes.empty())
    return false;
  if (strides.empty()) // unspecified: row-major
    return format == MemoryFormat::Contiguous ||
           llvm::all_of(sizes, [](AffineExpr s) { return getConstantSize(s) == 1; });
  if (format == MemoryFormat::Contiguous &&
      llvm::any_of(sizes, [](AffineExpr s) { return getConstantSize(s) == 0; }))
    return true; // no elements (ATen's compute_contiguous)
  if (sizes.empty())
    return true;
  AffineExpr expected = getAffineConstantExpr(1, sizes.front().getContext());
  for (int64_t d : order) {
    if (getConstantSize(sizes[d]) == 1)
      continue;
    if (strides[d] != expected)
      return false;
    expected = expected * sizes[d];
  }
  return true;
}

std::optional<SmallVector<AffineExpr>> tgc::viewStrides(ArrayRef<AffineExpr> sizes,
                                                        ArrayRef<AffineExpr> strides,
                                                        ArrayRef<AffineExpr> newSizes,
                                                        MLIRContext *ctx) {
  if (strides.empty() || strides == ArrayRef<AffineExpr>(TensorMeta::contiguousStrides(sizes, ctx)))
    return TensorMeta::contiguousStrides(newSizes, ctx);
  auto constants = [](ArrayRef<AffineExpr> exprs) -> std::optional<SmallVector<int64_t>> {
    SmallVector<int64_t> values;
    for (AffineExpr e : exprs) {
      std::optional<int64_t> v = getConstantSize(e);
      if (!v)
        return std::nullopt;
      values.push_back(*v);
    }
    return values;
  };
  std::optional<SmallVector<int64_t>> oldShape = constants(sizes), oldStride = constants(strides),
                                      newShape = constants(newSizes);
  if (!oldShape || !oldStride || !newShape || oldShape->size() != oldStride->size())
    return std::nullopt;
  auto asExprs = [&](ArrayRef<int64_t> values) {
    return llvm::map_to_vector(values, [&](int64_t v) { return getAffineConstantExpr(v, ctx); });
  };
  // ATen's computeStride_impl (TensorUtils.cpp), over the constants.
  int64_t rank = int64_t(newShape->size());
  SmallVector<int64_t> newStride(rank, 1);
  if (oldShape->empty()) // a 0-d tensor: any view of its one element
    return asExprs(newStride);
  int64_t numel = 1;
  for (int64_t s : *oldShape)
    numel *= s;
  if (numel == 0) {
    if (*oldShape == *newShape)
      return SmallVector<AffineExpr>(strides);
    for (int64_t d = rank - 2; d >= 0; --d)
      newStride[d] = std::max<int64_t>((*newShape)[d + 1], 1) * newStride[d + 1];
    return asExprs(newStride);
  }
  int64_t viewD = rank - 1;
  int64_t chunkBaseStride = oldStride->back(), tensorNumel = 1, viewNumel = 1;
  for (int64_t tensorD = int64_t(oldShape->size()) - 1; tensorD >= 0; --tensorD) {
    tensorNumel *= (*oldShape)[tensorD];
    // The end of a chunk: dimensions tensorD.. are laid out as one block.
    if (tensorD == 0 || ((*oldShape)[tensorD - 1] != 1 &&
                         (*oldStride)[tensorD - 1] != tensorNumel * chunkBaseStride)) {
      while (viewD >= 0 && (viewNumel < tensorNumel || (*newShape)[viewD] == 1)) {
        newStride[viewD] = viewNumel * chunkBaseStride;
        viewNumel *= (*newShape)[viewD];
        --viewD;
      }
      if (viewNumel != tensorNumel)
        return std::nullopt;
      if (tensorD > 0) {
        chunkBaseStride = (*oldStride)[tensorD - 1];
        tensorNumel = 1;
        viewNumel = 1;
      }
    }
  }
  if (viewD != -1)
    return std::nullopt;
  return asExprs(newStride);
}

MemoryFormat tgc::suggestMemoryFormat(ArrayRef<AffineExpr> sizes, ArrayRef<AffineExpr> strides) {
  if (strides.empty() || (sizes.size() != 4 && sizes.size() != 5))
    return MemoryFormat::Contiguous;
  SmallVector<int64_t> size, stride;
  for (auto [s, t] : llvm::zip(sizes, strides)) {
    std::optional<int64_t> cs = getConstantSize(s), ct = getConstantSize(t);
    if (!cs || !ct)
      return MemoryFormat::Contiguous;
    size.push_back(*cs);
    stride.push_back(*ct);
  }
  // is_channels_last_strides_2d_s4 / _3d_s5: the channels fastest, then the spatial
  // dimensions from the last, then the batch, each stride at least the previous one's
  // extent.
  if (stride[1] == 0)
    return MemoryFormat::Contiguous;
  MemoryFormat format =
      sizes.size() == 4 ? MemoryFormat::ChannelsLast : MemoryFormat::ChannelsLast3d;
  int64_t min = 0;
  for (int64_t d : formatOrder(format, sizes.size())) {
    if (size[d] == 0 || stride[d] < min)
      return MemoryFormat::Contiguous;
    // N111 (or a sliced N11W) is ambiguous: contiguous.
    if (d == 0 && min == stride[1])
      return MemoryFormat::Contiguous;
    min = stride[d];
    if (size[d] > 1)
      min *= size[d];
  }
  return format;
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
