// Metadata inference of ops that create tensors: full, full_like, arange, constant,
// cat/stack, rand_bernoulli.
#include "Helpers.h"

using namespace mlir;
using namespace tgc;
using namespace tgc::inference;

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
                                 TypeList &types, StringAttr memoryFormat) {
  BaseTensorType x = tensorOf(self);
  if (failed(requireTensor(loc, x, "self")))
    return failure();
  TensorMeta meta = freshLike(x, x.getSizes());
  FailureOr<SmallVector<AffineExpr>> strides = copyStrides(loc, x, memoryFormat);
  if (failed(strides))
    return failure();
  meta.strides = std::move(*strides);
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
                               Attribute step, TypeAttr dtype, DeviceAttr device, TypeList &types) {
  if (auto symbolic = llvm::dyn_cast<ShapeAttr>(end)) {
    // A symbolic end: integer start and positive step.
    if (symbolic.getSizes().size() != 1 || llvm::isa_and_nonnull<FloatAttr>(start) ||
        llvm::isa_and_nonnull<FloatAttr>(step))
      return emitOptionalError(loc, "arange: a symbolic end needs an integer start and step");
    int64_t lo = start ? llvm::cast<IntegerAttr>(start).getInt() : 0;
    int64_t st = step ? llvm::cast<IntegerAttr>(step).getInt() : 1;
    if (st <= 0)
      return emitOptionalError(loc, "arange: a symbolic end needs a positive step, got ", st);
    TensorMeta meta;
    AffineExpr size = (symbolic.getSizes()[0] - lo).ceilDiv(st);
    if (std::optional<int64_t> c = getConstantSize(size); c && *c < 0)
      size = cst(0, ctx);
    meta.sizes.push_back(size);
    meta.dtype = dtype ? dtype.getValue() : IntegerType::get(ctx, 64);
    meta.device = device;
    addResult(ctx, /*isRef=*/false, meta, types);
    return success();
  }
  double lo = scalarValue(start).value_or(0), hi = scalarValue(end).value_or(0);
  double st = scalarValue(step).value_or(1);
  if (st == 0 || (hi - lo) / st < 0)
    return emitOptionalError(loc, "arange: the range [", lo, ", ", hi, ") with step ", st,
                             " is invalid");
  TensorMeta meta;
  meta.sizes.push_back(cst(static_cast<int64_t>(std::ceil((hi - lo) / st)), ctx));
  bool anyFloat = llvm::isa_and_nonnull<FloatAttr>(start) || llvm::isa<FloatAttr>(end) ||
                  llvm::isa_and_nonnull<FloatAttr>(step);
  meta.dtype =
      dtype ? dtype.getValue() : (anyFloat ? defaultFloat(ctx) : IntegerType::get(ctx, 64));
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

LogicalResult tgc::inferDiff(MLIRContext *ctx, InferLoc loc, Value self, int64_t n, int64_t dim,
                             Value prepend, Value append, TypeList &types) {
  SmallVector<Value> parts;
  for (Value part : {prepend, self, append})
    if (part)
      parts.push_back(part);
  SmallVector<Type> joined;
  if (failed(inferCat(ctx, loc, parts, dim, /*stack=*/false, joined)))
    return failure();
  BaseTensorType x = tensorOf(self), all = llvm::cast<BaseTensorType>(joined[0]);
  if (all.getDtype() != x.getDtype())
    return emitOptionalError(loc, "diff: prepend and append must have the input's dtype");
  if (n < 0)
    return emitOptionalError(loc, "diff: n must be non-negative, got ", n);
  int64_t d = *dimIn(loc, dim, x.getRank());
  SmallVector<AffineExpr> sizes(all.getSizes());
  std::optional<int64_t> length = getConstantSize(sizes[d]);
  sizes[d] = length ? cst(std::max<int64_t>(*length - n, 0), ctx) : sizes[d] - n;
  TensorMeta meta = freshLike(all, sizes);
  addResult(ctx, x.isRef(), meta, types);
  return success();
}

LogicalResult tgc::inferRepeat(MLIRContext *ctx, InferLoc loc, Value self,
                               ArrayRef<int64_t> repeats, TypeList &types) {
  BaseTensorType x = tensorOf(self);
  if (failed(requireTensor(loc, x, "self")))
    return failure();
  int64_t lead = static_cast<int64_t>(repeats.size()) - x.getRank();
  if (lead < 0)
    return emitOptionalError(loc, "repeat: ", repeats.size(), " repeats for a tensor of rank ",
                             x.getRank());
  SmallVector<AffineExpr> sizes;
  for (auto [d, r] : llvm::enumerate(repeats)) {
    if (r < 0)
      return emitOptionalError(loc, "repeat: negative repeat count ", r);
    int64_t i = static_cast<int64_t>(d) - lead;
    sizes.push_back((i < 0 ? cst(1, ctx) : x.getSizes()[i]) * r);
  }
  addResult(ctx, x.isRef(), freshLike(x, sizes), types);
  return success();
}

LogicalResult tgc::inferRoll(MLIRContext *ctx, InferLoc loc, Value self, ArrayRef<int64_t> shifts,
                             ArrayRef<int64_t> dims, TypeList &types) {
  BaseTensorType x = tensorOf(self);
  if (failed(requireTensor(loc, x, "self")))
    return failure();
  if (dims.empty() ? shifts.size() != 1 : shifts.size() != dims.size())
    return emitOptionalError(loc, "roll: ", shifts.size(), " shifts for ", dims.size(), " dims");
  for (int64_t d : dims) {
    FailureOr<int64_t> dim = dimIn(loc, d, x.getRank());
    if (failed(dim))
      return failure();
    if (!getConstantSize(x.getSizes()[*dim]))
      return emitOptionalError(loc, "roll: dimension ", *dim, " must have a static size");
  }
  if (dims.empty())
    for (AffineExpr s : x.getSizes())
      if (!getConstantSize(s))
        return emitOptionalError(loc, "roll of the flattened tensor needs static sizes");
  addResult(ctx, x.isRef(), freshLike(x, x.getSizes()), types);
  return success();
}

LogicalResult tgc::inferUpsample(MLIRContext *ctx, InferLoc loc, Value input,
                                 DenseI64ArrayAttr outputSize, DenseF64ArrayAttr scaleFactors,
                                 StringRef mode, TypeList &types) {
  BaseTensorType x = tensorOf(input);
  if (failed(requireTensor(loc, x, "input")))
    return failure();
  if (!llvm::is_contained({"nearest", "nearest_exact", "linear", "cubic"}, mode))
    return emitOptionalError(loc, "upsample: unknown mode '", mode, "'");
  if (getCategory(x.getDtype()) != DTypeCategory::Floating)
    return emitOptionalError(loc, "upsample: the input must be floating point, got ", x.getDtype());
  int64_t spatial = outputSize ? outputSize.size() : scaleFactors ? scaleFactors.size() : 0;
  if (spatial < 1 || spatial > 3 || x.getRank() != spatial + 2)
    return emitOptionalError(loc,
                             "upsample: expected 1 to 3 output sizes or scale factors for "
                             "an input of rank ",
                             spatial + 2, ", got ", spatial, " for rank ", x.getRank());
  if (mode == "cubic" && spatial != 2)
    return emitOptionalError(loc, "upsample: cubic resampling is 2-d, got ", spatial,
                             " resampled dimensions");
  if (outputSize && scaleFactors && scaleFactors.size() != outputSize.size())
    return emitOptionalError(loc, "upsample: output_size and scale_factors differ in length");
  SmallVector<AffineExpr> sizes(x.getSizes());
  for (int64_t i = 0; i < spatial; ++i) {
    int64_t d = x.getRank() - spatial + i;
    std::optional<int64_t> in = getConstantSize(sizes[d]);
    if (!in)
      return emitOptionalError(loc, "upsample: the resampled dimensions must have static sizes");
    int64_t out =
        outputSize ? outputSize[i] : static_cast<int64_t>(std::floor(*in * scaleFactors[i]));
    if (out <= 0)
      return emitOptionalError(loc, "upsample: output size ", out, " must be positive");
    sizes[d] = cst(out, ctx);
  }
  TensorMeta result = freshLike(x, sizes);
  result.strides = suggestedLayout(sizes, {x});
  addResult(ctx, x.isRef(), result, types);
  return success();
}

LogicalResult tgc::inferPad(MLIRContext *ctx, InferLoc loc, Value self, ArrayRef<int64_t> pad,
                            StringRef mode, TypeList &types) {
  BaseTensorType x = tensorOf(self);
  if (failed(requireTensor(loc, x, "self")))
    return failure();
  if (!llvm::is_contained({"constant", "reflect", "replicate", "circular"}, mode))
    return emitOptionalError(loc, "pad: unknown mode '", mode,
                             "' (expected constant, reflect, replicate or circular)");
  int64_t rank = x.getRank();
  if (pad.size() % 2 != 0 || static_cast<int64_t>(pad.size()) > 2 * rank)
    return emitOptionalError(loc,
                             "pad: expected an even number of amounts, at most 2 per "
                             "dimension of the rank-",
                             rank, " input, got ", pad.size());
  SmallVector<AffineExpr> sizes(x.getSizes());
  for (size_t i = 0; i < pad.size() / 2; ++i) {
    int64_t d = rank - 1 - static_cast<int64_t>(i);
    int64_t before = pad[2 * i], after = pad[2 * i + 1];
    std::optional<int64_t> size = getConstantSize(sizes[d]);
    if (mode != "constant") {
      // Negative amounts crop (as for constant padding); the rest pads what remains.
      if (size)
        size = *size + std::min<int64_t>(before, 0) + std::min<int64_t>(after, 0);
      int64_t grow = std::max<int64_t>({before, after, 0});
      int64_t limit = mode == "reflect" ? 1 : 0;
      if (mode != "replicate" && size && grow > 0 && grow + limit > *size)
        return emitOptionalError(loc, "pad: ", mode, " padding of ", grow,
                                 " is too large for dimension ", d, " of size ", *size);
      if (mode == "replicate" && size && *size <= 0 && grow > 0)
        return emitOptionalError(loc, "pad: replicate padding of an empty dimension ", d);
    }
    AffineExpr padded = sizes[d] + before + after;
    if (auto c = getConstantSize(padded); c && *c < 0)
      return emitOptionalError(loc, "pad: dimension ", d, " would have negative size ", *c);
    sizes[d] = padded;
  }
  TensorMeta result = freshLike(x, sizes);
  result.strides = suggestedLayout(sizes, {x});
  addResult(ctx, x.isRef(), result, types);
  return success();
}

bool tgc::isSkippedByCat(BaseTensorType piece) {
  return piece && piece.getRank() == 1 && getConstantSize(piece.getSizes()[0]) == 0;
}

LogicalResult tgc::inferCat(MLIRContext *ctx, InferLoc loc, ValueRange tensors, int64_t dim,
                            bool stack, TypeList &types) {
  if (tensors.empty())
    return emitOptionalError(loc, "cat/stack of no tensors");
  // cat takes its rank and sizes from the first operand it does not skip.
  auto kept =
      llvm::find_if(tensors, [&](Value v) { return stack || !isSkippedByCat(tensorOf(v)); });
  BaseTensorType first = tensorOf(kept == tensors.end() ? tensors[0] : *kept);
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
    if (!stack && isSkippedByCat(t) && rank != 1) {
      promotion.push_back({t.getDtype(), PromotionOperand::Dimensioned});
      requiresGrad |= t.getMeta().requiresGrad;
      continue;
    }
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
  // cat's result has the operands' memory format when they all suggest the same one.
  if (!stack && llvm::all_of(tensors, [&](Value v) {
        BaseTensorType t = tensorOf(v);
        return t.isRef() && t.getRank() == rank &&
               suggestMemoryFormat(t.getSizes(), t.getMeta().strides) ==
                   suggestMemoryFormat(first.getSizes(), first.getMeta().strides);
      }))
    meta.strides = suggestedLayout(sizes, {first});
  addResult(ctx, first.isRef(), meta, types);
  return success();
}

LogicalResult tgc::inferItem(MLIRContext *ctx, InferLoc loc, Value self, TypeList &types) {
  BaseTensorType x = tensorOf(self);
  if (failed(requireTensor(loc, x, "self")))
    return failure();
  for (AffineExpr size : x.getSizes())
    if (getConstantSize(size) != 1)
      return emitOptionalError(loc, "item: expects a tensor of one element, got ",
                               sizesStr(x.getSizes()));
  Type dtype = x.getDtype();
  if (llvm::isa<FloatType>(dtype))
    types.push_back(Float64Type::get(ctx));
  else if (dtype.isInteger(1))
    types.push_back(IntegerType::get(ctx, 1));
  else if (dtype.isIntOrIndex())
    types.push_back(IntegerType::get(ctx, 64));
  else
    return emitOptionalError(loc, "item: elements of ", dtype, " are not supported");
  return success();
}

LogicalResult tgc::inferRand(MLIRContext *ctx, InferLoc loc, ShapeAttr size, TypeAttr dtype,
                             DeviceAttr device, TypeList &types) {
  TensorMeta meta;
  meta.sizes.assign(size.getSizes().begin(), size.getSizes().end());
  for (AffineExpr s : meta.sizes)
    if (auto c = getConstantSize(s); c && *c < 0)
      return emitOptionalError(loc, "negative size ", *c);
  meta.dtype = dtype ? dtype.getValue() : defaultFloat(ctx);
  if (!llvm::isa<FloatType>(meta.dtype))
    return emitOptionalError(loc, "rand: random numbers of dtype ", meta.dtype,
                             " are not supported (a float dtype is)");
  meta.device = device;
  addResult(ctx, /*isRef=*/false, meta, types);
  return success();
}

LogicalResult tgc::inferRandperm(MLIRContext *ctx, InferLoc loc, int64_t n, TypeAttr dtype,
                                 DeviceAttr device, TypeList &types) {
  if (n < 0)
    return emitOptionalError(loc, "randperm: n must be non-negative, got ", n);
  TensorMeta meta;
  meta.sizes = {cst(n, ctx)};
  meta.dtype = dtype ? dtype.getValue() : IntegerType::get(ctx, 64);
  meta.device = device;
  addResult(ctx, /*isRef=*/false, meta, types);
  return success();
}

LogicalResult tgc::inferRandDraw(MLIRContext *ctx, InferLoc loc, Value state, ShapeAttr size,
                                 Type dtype, TypeList &types) {
  BaseTensorType s = tensorOf(state);
  if (failed(requireTensor(loc, s, "state")))
    return failure();
  if (s.getRank() != 1 || getConstantSize(s.getSizes()[0]) != 2 || !s.getDtype().isInteger(64))
    return emitOptionalError(loc, "rand_draw: the RNG state must be i64[2] (seed, offset)");
  if (!llvm::isa<FloatType>(dtype) || dtype.getIntOrFloatBitWidth() < 16)
    return emitOptionalError(loc, "rand_draw: ", dtype, " is not a float dtype of 16 bits or more");
  TensorMeta meta = freshLike(s, size.getSizes());
  meta.dtype = dtype;
  meta.requiresGrad = false;
  addResult(ctx, s.isRef(), meta, types);
  return success();
}

LogicalResult tgc::inferRandBernoulli(MLIRContext *ctx, InferLoc loc, Value state, ShapeAttr size,
                                      double p, TypeList &types) {
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

LogicalResult tgc::inferRepeatInterleave(MLIRContext *ctx, InferLoc loc, Value self,
                                         int64_t repeats, IntegerAttr dim, TypeList &types) {
  BaseTensorType x = tensorOf(self);
  if (failed(requireTensor(loc, x, "self")))
    return failure();
  if (repeats < 0)
    return emitOptionalError(loc, "repeat_interleave: repeats must not be negative, got ", repeats);
  SmallVector<AffineExpr> sizes;
  if (!dim) {
    sizes.push_back(x.getMeta().numel(ctx) * repeats);
  } else {
    FailureOr<int64_t> d = dimIn(loc, dim.getInt(), std::max<int64_t>(x.getRank(), 1));
    if (failed(d))
      return failure();
    sizes.assign(x.getSizes().begin(), x.getSizes().end());
    if (sizes.empty())
      sizes.push_back(cst(1, ctx));
    sizes[*d] = sizes[*d] * repeats;
  }
  addResult(ctx, x.isRef(), freshLike(x, sizes), types);
  return success();
}
