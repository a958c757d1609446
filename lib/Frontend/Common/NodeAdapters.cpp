// The few ATen targets whose arguments need reshaping before they map onto a tgc op.
#include "NodeAdapters.h"

#include "tgc/Dialect/TgcDialect.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace tgc;
using namespace tgc::frontend;

//===----------------------------------------------------------------------===//
// Argument helpers
//===----------------------------------------------------------------------===//

static const AtenValue *findArgument(const std::vector<AtenArgument> &arguments,
                                     llvm::StringRef name) {
  auto it = llvm::find_if(arguments, [&](const AtenArgument &a) { return a.name == name; });
  return it == arguments.end() ? nullptr : &it->value;
}

/// Removes argument `name` (if present) and returns its value.
static std::optional<AtenValue> takeArgument(std::vector<AtenArgument> &arguments,
                                             llvm::StringRef name) {
  const AtenValue *found = findArgument(arguments, name);
  std::optional<AtenValue> value = found ? std::optional<AtenValue>(*found) : std::nullopt;
  llvm::erase_if(arguments, [&](const AtenArgument &a) { return a.name == name; });
  return value;
}

/// A constant int argument, `fallback` when absent or None.
static FailureOr<int64_t> constantInt(AdapterCall &call, llvm::StringRef name, int64_t fallback) {
  const AtenValue *value = findArgument(call.arguments, name);
  if (!value || value->kind == AtenValue::Kind::None)
    return fallback;
  std::optional<int64_t> constant =
      value->kind == AtenValue::Kind::Int ? getConstantSize(value->size) : std::nullopt;
  if (!constant)
    return call.emitError() << "argument '" << name << "' must be a constant int";
  return *constant;
}

/// The type of tensor argument `name`.
static FailureOr<BaseTensorType> tensorType(AdapterCall &call, llvm::StringRef name) {
  const AtenValue *value = findArgument(call.arguments, name);
  auto type = value && value->kind == AtenValue::Kind::Tensor && value->values.size() == 1
                  ? llvm::dyn_cast<BaseTensorType>(value->values.front().getType())
                  : BaseTensorType();
  if (!type)
    return call.emitError() << "argument '" << name << "' must be a tensor";
  return type;
}

static FailureOr<TensorMeta> firstOutputMeta(AdapterCall &call) {
  if (call.recorded.empty() || !call.recorded.front().meta)
    return call.emitError() << "expected a tensor result";
  return *call.recorded.front().meta;
}

//===----------------------------------------------------------------------===//
// Adapters
//===----------------------------------------------------------------------===//

/// The chunk sizes of a split as the recorded results have them.
static LogicalResult splitSizesFromRecords(AdapterCall &call, int64_t dim,
                                           SmallVectorImpl<int64_t> &sizes) {
  for (const RecordedResult &output : call.recorded) {
    if (!output.meta)
      return call.emitError() << "split result '" << output.name << "' has no metadata";
    std::optional<int64_t> d = normalizeDim(dim, output.meta->rank());
    std::optional<int64_t> size = d ? getConstantSize(output.meta->sizes[*d]) : std::nullopt;
    if (!size)
      return call.emitError() << "split along a symbolic or invalid dimension " << dim
                              << " is not supported";
    sizes.push_back(*size);
  }
  return success();
}

/// The chunk sizes of split(self, split_size, dim) or chunk(self, chunks, dim),
/// computed as torch does: chunks of `split_size` (chunk: ceil(size / chunks)), the
/// last one smaller.
static LogicalResult splitSizesFromOperands(AdapterCall &call, int64_t dim,
                                            std::optional<AtenValue> splitSize,
                                            std::optional<AtenValue> chunks,
                                            SmallVectorImpl<int64_t> &sizes) {
  FailureOr<BaseTensorType> self = tensorType(call, "self");
  if (failed(self))
    return failure();
  std::optional<int64_t> d = normalizeDim(dim, self->getRank());
  std::optional<int64_t> total = d ? getConstantSize(self->getSizes()[*d]) : std::nullopt;
  if (!total)
    return call.emitError() << "split along a symbolic or invalid dimension " << dim
                            << " is not supported";
  const std::optional<AtenValue> &given = splitSize ? splitSize : chunks;
  std::optional<int64_t> count =
      given && given->kind == AtenValue::Kind::Int ? getConstantSize(given->size) : std::nullopt;
  if (!count || *count <= 0)
    return call.emitError() << "split needs a positive constant "
                            << (splitSize ? "split_size" : "number of chunks");
  int64_t chunkSize = splitSize ? *count : std::max<int64_t>(1, (*total + *count - 1) / *count);
  for (int64_t start = 0; start < *total || (start == 0 && *total == 0); start += chunkSize)
    sizes.push_back(std::min(chunkSize, *total - start));
  return success();
}

/// split.Tensor(self, split_size, dim) and chunk(self, chunks, dim): the chunk sizes,
/// which the last chunk makes uneven, are those of the recorded results (else computed).
static LogicalResult splitSizes(AdapterCall &call) {
  std::optional<AtenValue> splitSize = takeArgument(call.arguments, "split_size");
  std::optional<AtenValue> chunks = takeArgument(call.arguments, "chunks");
  FailureOr<int64_t> dim = constantInt(call, "dim", 0);
  if (failed(dim))
    return failure();
  SmallVector<int64_t> sizes;
  if (failed(call.recorded.empty() ? splitSizesFromOperands(call, *dim, splitSize, chunks, sizes)
                                   : splitSizesFromRecords(call, *dim, sizes)))
    return failure();
  call.attributes.set("split_sizes", DenseI64ArrayAttr::get(call.ctx, sizes));
  return success();
}

/// max_pool2d_with_indices: max pooling that also returns the argmax.
static LogicalResult setWithIndices(AdapterCall &call) {
  call.attributes.set("with_indices", UnitAttr::get(call.ctx));
  return success();
}

/// _scaled_dot_product_flash_attention_for_cpu (core ATen): attention that also
/// returns each row's log-sum-exp.
static LogicalResult setWithLogsumexp(AdapterCall &call) {
  call.attributes.set("with_logsumexp", UnitAttr::get(call.ctx));
  return success();
}

/// any.dim / all.dim(self, int dim, keepdim): one reduced dimension, as a list.
static LogicalResult dimAsList(AdapterCall &call) {
  if (!findArgument(call.arguments, "dim"))
    return success();
  FailureOr<int64_t> dim = constantInt(call, "dim", 0);
  if (failed(dim))
    return failure();
  takeArgument(call.arguments, "dim");
  call.attributes.set("dim", DenseI64ArrayAttr::get(call.ctx, {*dim}));
  return success();
}

/// The sizes flatten(self, start_dim, end_dim) or unflatten(self, dim, sizes) give.
static FailureOr<SmallVector<AffineExpr>> viewSizesFromOperands(AdapterCall &call) {
  FailureOr<BaseTensorType> self = tensorType(call, "self");
  if (failed(self))
    return failure();
  SmallVector<AffineExpr> sizes(self->getSizes());
  int64_t rank = sizes.size();
  if (const AtenValue *shape = findArgument(call.arguments, "shape"))
    return SmallVector<AffineExpr>(shape->sizes); // reshape: view resolves a -1
  if (const AtenValue *unflattened = findArgument(call.arguments, "sizes")) {
    FailureOr<int64_t> dim = constantInt(call, "dim", 0);
    if (failed(dim))
      return failure();
    std::optional<int64_t> d = normalizeDim(*dim, rank);
    if (!d || *d >= rank)
      return call.emitError() << "unflatten of invalid dimension " << *dim;
    sizes.erase(sizes.begin() + *d);
    sizes.insert(sizes.begin() + *d, unflattened->sizes.begin(), unflattened->sizes.end());
    return sizes;
  }
  FailureOr<int64_t> start = constantInt(call, "start_dim", 0);
  FailureOr<int64_t> end = constantInt(call, "end_dim", -1);
  if (failed(start) || failed(end))
    return failure();
  if (rank == 0)
    return SmallVector<AffineExpr>{getAffineConstantExpr(1, call.ctx)};
  std::optional<int64_t> first = normalizeDim(*start, rank), last = normalizeDim(*end, rank);
  if (!first || !last || *first >= rank || *last >= rank || *first > *last)
    return call.emitError() << "flatten of invalid dimensions " << *start << " to " << *end;
  AffineExpr product = getAffineConstantExpr(1, call.ctx);
  for (int64_t i = *first; i <= *last; ++i)
    product = product * sizes[i];
  sizes.erase(sizes.begin() + *first, sizes.begin() + *last + 1);
  sizes.insert(sizes.begin() + *first, product);
  return sizes;
}

/// The call as `self` and a `size` attribute (a view or an expand to `sizes`).
static LogicalResult keepSelfWithSize(AdapterCall &call, ArrayRef<AffineExpr> sizes) {
  llvm::erase_if(call.arguments, [](const AtenArgument &a) { return a.name != "self"; });
  call.attributes.set("size", ShapeAttr::get(call.ctx, sizes));
  return success();
}

/// flatten/unflatten/reshape: a view to the sizes the export computed for the result
/// (else to those the arguments give).
static LogicalResult viewToResultSizes(AdapterCall &call) {
  FailureOr<SmallVector<AffineExpr>> sizes =
      call.recorded.empty() ? viewSizesFromOperands(call) : FailureOr<SmallVector<AffineExpr>>();
  if (!call.recorded.empty()) {
    FailureOr<TensorMeta> meta = firstOutputMeta(call);
    if (failed(meta))
      return failure();
    sizes = meta->sizes;
  }
  if (failed(sizes))
    return failure();
  return keepSelfWithSize(call, *sizes);
}

/// expand_as / view_as / reshape_as(self, other): an expand or a view to `other`'s sizes.
static LogicalResult sizesOfOther(AdapterCall &call) {
  FailureOr<BaseTensorType> other = tensorType(call, "other");
  if (failed(other))
    return failure();
  return keepSelfWithSize(call, other->getSizes());
}

/// _native_batch_norm_legit_functional: also returns the new running statistics.
static LogicalResult setFunctional(AdapterCall &call) {
  call.attributes.set("functional", UnitAttr::get(call.ctx));
  return success();
}

/// native_layer_norm: returns (output, mean, rstd).
static LogicalResult setNative(AdapterCall &call) {
  call.attributes.set("native", UnitAttr::get(call.ctx));
  return success();
}

/// movedim(self, source, destination) (ints or int lists): the permutation that puts
/// each source dimension at its destination and keeps the order of the others.
static LogicalResult movedimAsPermute(AdapterCall &call) {
  FailureOr<BaseTensorType> self = tensorType(call, "self");
  if (failed(self))
    return failure();
  int64_t rank = self->getRank();
  auto dims = [&](llvm::StringRef name) -> FailureOr<SmallVector<int64_t>> {
    std::optional<AtenValue> value = takeArgument(call.arguments, name);
    SmallVector<AffineExpr> exprs;
    if (value && value->kind == AtenValue::Kind::Int)
      exprs.push_back(value->size);
    else if (value && value->kind == AtenValue::Kind::Ints)
      exprs.assign(value->sizes.begin(), value->sizes.end());
    else
      return call.emitError() << "argument '" << name << "' must be an int or a list of ints";
    SmallVector<int64_t> normalized;
    for (AffineExpr expr : exprs) {
      std::optional<int64_t> dim = getConstantSize(expr);
      std::optional<int64_t> d = dim ? normalizeDim(*dim, rank) : std::nullopt;
      if (!d || llvm::is_contained(normalized, *d))
        return call.emitError() << "movedim: invalid or repeated dimension in '" << name << "'";
      normalized.push_back(*d);
    }
    return normalized;
  };
  FailureOr<SmallVector<int64_t>> source = dims("source"), destination = dims("destination");
  if (failed(source) || failed(destination))
    return failure();
  if (source->size() != destination->size())
    return call.emitError() << "movedim: source and destination have different lengths";
  SmallVector<int64_t> permutation(rank, -1);
  for (auto [s, d] : llvm::zip(*source, *destination))
    permutation[d] = s;
  int64_t next = 0;
  for (int64_t &slot : permutation) {
    if (slot != -1)
      continue;
    while (llvm::is_contained(*source, next))
      ++next;
    slot = next++;
  }
  call.attributes.set("dims", DenseI64ArrayAttr::get(call.ctx, permutation));
  return success();
}

/// selu: elu with ATen's fixed alpha and scale.
static LogicalResult seluConstants(AdapterCall &call) {
  call.attributes.set("alpha", FloatAttr::get(Float64Type::get(call.ctx), 1.6732632423543772));
  call.attributes.set("scale", FloatAttr::get(Float64Type::get(call.ctx), 1.0507009873554805));
  return success();
}

/// relu6(x): hardtanh between 0 and 6, as ATen defines it.
static LogicalResult relu6Bounds(AdapterCall &call) {
  call.attributes.set("min_val", FloatAttr::get(Float64Type::get(call.ctx), 0.0));
  call.attributes.set("max_val", FloatAttr::get(Float64Type::get(call.ctx), 6.0));
  return success();
}

/// celu(x, alpha): elu whose input scale is 1 / alpha.
static LogicalResult celuInputScale(AdapterCall &call) {
  const AtenValue *alpha = findArgument(call.arguments, "alpha");
  double value = 1.0;
  if (alpha && alpha->kind == AtenValue::Kind::Float)
    value = alpha->floatValue;
  else if (alpha && alpha->kind == AtenValue::Kind::Int && getConstantSize(alpha->size))
    value = static_cast<double>(*getConstantSize(alpha->size));
  else if (alpha && alpha->kind != AtenValue::Kind::None)
    return call.emitError() << "argument 'alpha' must be a constant number";
  if (value == 0)
    return call.emitError() << "celu's alpha must not be 0";
  call.attributes.set("input_scale", FloatAttr::get(Float64Type::get(call.ctx), 1.0 / value));
  return success();
}

/// _native_batch_norm_legit_no_training: batch norm with `training` fixed to false.
static LogicalResult setEvalMode(AdapterCall &call) {
  call.attributes.set("training", BoolAttr::get(call.ctx, false));
  return success();
}

/// native_group_norm(input, weight, bias, N, C, HxW, group, eps) and its backward: the
/// sizes N, C and HxW are the input's (tgc reads them from its type); the forward
/// returns (output, mean, rstd).
static LogicalResult groupNormSizes(AdapterCall &call) {
  for (llvm::StringRef name : {"N", "C", "HxW"})
    takeArgument(call.arguments, name);
  return success();
}
static LogicalResult nativeGroupNorm(AdapterCall &call) {
  call.attributes.set("native", UnitAttr::get(call.ctx));
  return groupNormSizes(call);
}

/// group_norm(input, num_groups, weight, bias, eps, cudnn_enabled): `num_groups` is
/// tgc.group_norm's `group`.
static LogicalResult numGroupsAsGroup(AdapterCall &call) {
  for (AtenArgument &argument : call.arguments)
    if (argument.name == "num_groups")
      argument.name = "group";
  return success();
}

/// floor_divide(self, other): div with rounding_mode "floor" (integers stay integers).
static LogicalResult floorRounding(AdapterCall &call) {
  call.attributes.set("rounding_mode", StringAttr::get(call.ctx, "floor"));
  return success();
}

/// conv_transpose1d/2d/3d: a convolution with `transposed` set.
static LogicalResult setTransposed(AdapterCall &call) {
  call.attributes.set("transposed", BoolAttr::get(call.ctx, true));
  return success();
}

/// _softmax / _log_softmax(self, dim, half_to_float): a true `half_to_float` asks for
/// an f32 result.
static LogicalResult halfToFloatAsDtype(AdapterCall &call) {
  std::optional<AtenValue> halfToFloat = takeArgument(call.arguments, "half_to_float");
  if (halfToFloat && halfToFloat->kind == AtenValue::Kind::Bool && halfToFloat->boolValue)
    call.attributes.set("dtype", TypeAttr::get(Float32Type::get(call.ctx)));
  return success();
}

/// pow's second argument is called `exponent` in the schema, `other` on tgc.pow.
static LogicalResult exponentAsOther(AdapterCall &call) {
  for (AtenArgument &argument : call.arguments)
    if (argument.name == "exponent")
      argument.name = "other";
  return success();
}

/// _grouped_mm(self, mat2, offs, bias, out_dtype): tgc.grouped_mm(input, weight, offs) for
/// the 2-d x 3-d form with offsets (the mixture-of-experts one) and no bias or out_dtype.
static LogicalResult groupedMmOperands(AdapterCall &call) {
  for (llvm::StringRef unsupported : {"bias", "out_dtype"})
    if (std::optional<AtenValue> v = takeArgument(call.arguments, unsupported);
        v && v->kind != AtenValue::Kind::None)
      return call.emitError() << "_grouped_mm with `" << unsupported << "` is not supported";
  for (AtenArgument &argument : call.arguments) {
    if (argument.name == "self")
      argument.name = "input";
    else if (argument.name == "mat2")
      argument.name = "weight";
  }
  return success();
}

/// square(self): pow(self, 2), which is self * self as ATen computes it.
static LogicalResult squareAsPow(AdapterCall &call) {
  AtenValue two;
  two.kind = AtenValue::Kind::Int;
  two.size = getAffineConstantExpr(2, call.ctx);
  call.arguments.push_back({"other", two});
  return success();
}

/// var.dim(self, dim, unbiased=True, keepdim): `unbiased` is correction 1 (else 0).
static LogicalResult unbiasedAsCorrection(AdapterCall &call) {
  std::optional<AtenValue> unbiased = takeArgument(call.arguments, "unbiased");
  bool isUnbiased = !unbiased || unbiased->kind != AtenValue::Kind::Bool || unbiased->boolValue;
  call.attributes.set("correction",
                      IntegerAttr::get(IntegerType::get(call.ctx, 64), isUnbiased ? 1 : 0));
  return success();
}

/// The dtype of the result: as the export recorded it (defaults included), else the
/// `dtype` argument, else that of tensor argument `like` (none: the op's default).
static LogicalResult setResultDtype(AdapterCall &call, llvm::StringRef like = "") {
  Type dtype;
  if (!call.recorded.empty()) {
    FailureOr<TensorMeta> meta = firstOutputMeta(call);
    if (failed(meta))
      return failure();
    dtype = meta->dtype;
  } else if (const AtenValue *given = findArgument(call.arguments, "dtype");
             given && given->kind == AtenValue::Kind::DType) {
    dtype = given->type;
  } else if (!like.empty()) {
    FailureOr<BaseTensorType> type = tensorType(call, like);
    if (failed(type))
      return failure();
    dtype = type->getDtype();
  }
  takeArgument(call.arguments, "dtype");
  if (dtype)
    call.attributes.set("dtype", TypeAttr::get(dtype));
  return success();
}

/// ones/zeros/empty and their `_like` forms: tgc.full(_like) with a fill value. Unlike
/// full (whose dtype follows the fill value), ones/zeros/empty without a dtype make
/// torch's default dtype, float32.
template <int64_t fill> static LogicalResult filledWith(AdapterCall &call) {
  call.attributes.set("fill_value", IntegerAttr::get(IntegerType::get(call.ctx, 64), fill));
  if (failed(setResultDtype(call)))
    return failure();
  if (!call.attributes.get("dtype") && !findArgument(call.arguments, "self"))
    call.attributes.set("dtype", TypeAttr::get(Float32Type::get(call.ctx)));
  return success();
}

/// empty_strided(size, stride): tgc values have no strides to honour; zeros.
static LogicalResult emptyStrided(AdapterCall &call) {
  takeArgument(call.arguments, "stride");
  return filledWith<0>(call);
}

/// empty_permuted(size, physical_layout): the layout only orders memory; zeros.
static LogicalResult emptyPermuted(AdapterCall &call) {
  takeArgument(call.arguments, "physical_layout");
  return filledWith<0>(call);
}

/// new_ones/new_zeros(self, size): `self` only gives the default dtype.
template <int64_t fill> static LogicalResult newFilledWith(AdapterCall &call) {
  call.attributes.set("fill_value", IntegerAttr::get(IntegerType::get(call.ctx, 64), fill));
  if (failed(setResultDtype(call, "self")))
    return failure();
  takeArgument(call.arguments, "self");
  return success();
}

/// new_full(self, size, fill_value): full with `self`'s dtype unless given.
static LogicalResult newFull(AdapterCall &call) {
  if (failed(setResultDtype(call, "self")))
    return failure();
  takeArgument(call.arguments, "self");
  return success();
}

/// type_as(self, other): a conversion to `other`'s dtype.
static LogicalResult typeAsOther(AdapterCall &call) {
  if (failed(setResultDtype(call, "other")))
    return failure();
  takeArgument(call.arguments, "other");
  return success();
}

/// randn: tgc.rand with `normal`.
static LogicalResult setNormal(AdapterCall &call) {
  call.attributes.set("normal", UnitAttr::get(call.ctx));
  return success();
}

/// rand_like / randn_like(self, dtype): tgc.rand of self's sizes (and dtype, unless
/// given).
template <bool normal> static LogicalResult randLike(AdapterCall &call) {
  FailureOr<BaseTensorType> self = tensorType(call, "self");
  if (failed(self) || failed(setResultDtype(call, "self")))
    return failure();
  call.attributes.set("size", ShapeAttr::get(call.ctx, self->getSizes()));
  takeArgument(call.arguments, "self");
  if (normal)
    call.attributes.set("normal", UnitAttr::get(call.ctx));
  return success();
}

/// reflection_padNd / replication_padNd(self, padding) and _pad_circular(self, pad): a
/// tgc.pad of that mode.
template <const char *mode> static LogicalResult padMode(AdapterCall &call) {
  if (std::optional<AtenValue> padding = takeArgument(call.arguments, "padding"))
    call.arguments.push_back(AtenArgument{"pad", *padding});
  call.attributes.set("mode", StringAttr::get(call.ctx, mode));
  return success();
}
static constexpr char kReflect[] = "reflect", kReplicate[] = "replicate", kCircular[] = "circular";

/// index.Tensor(self, Tensor?[] indices) and index_put: the dimensions the present index tensors
/// index, when a `None` entry comes before one of them.
static LogicalResult indexDims(AdapterCall &call) {
  const AtenValue *indices = findArgument(call.arguments, "indices");
  if (!indices || indices->kind != AtenValue::Kind::Tensors || indices->bools.empty())
    return success();
  SmallVector<int64_t> dims;
  for (auto [d, present] : llvm::enumerate(indices->bools))
    if (present)
      dims.push_back(static_cast<int64_t>(d));
  bool leading = llvm::all_of(llvm::enumerate(dims),
                              [](auto p) { return p.value() == static_cast<int64_t>(p.index()); });
  if (!leading)
    call.attributes.set("dims", DenseI64ArrayAttr::get(call.ctx, dims));
  return success();
}

/// upsample_*(input, output_size, [align_corners,] scale_factors) and their .default forms
/// (self, output_size, [align_corners,] scales_h, scales_w / scales): a tgc.upsample of
/// that mode; per-dimension scales become `scale_factors` when all are given.
template <const char *mode> static LogicalResult upsampleMode(AdapterCall &call) {
  if (std::optional<AtenValue> self = takeArgument(call.arguments, "self"))
    call.arguments.push_back(AtenArgument{"input", *self});
  SmallVector<double> scales;
  bool all = true, any = false;
  for (const char *name : {"scales_d", "scales_h", "scales_w", "scales"}) {
    std::optional<AtenValue> scale = takeArgument(call.arguments, name);
    if (!scale)
      continue;
    any = true;
    if (scale->kind == AtenValue::Kind::Float)
      scales.push_back(scale->floatValue);
    else
      all = false;
  }
  if (any && all && !scales.empty())
    call.attributes.set("scale_factors", DenseF64ArrayAttr::get(call.ctx, scales));
  call.attributes.set("mode", StringAttr::get(call.ctx, mode));
  return success();
}
static constexpr char kNearest[] = "nearest", kNearestExact[] = "nearest_exact",
                      kLinear[] = "linear", kCubic[] = "cubic";

static const NodeAdapter kNodeAdapters[] = {
    {"aten.split.Tensor", "", splitSizes},
    {"aten.chunk.default", "tgc.split", splitSizes},
    {"aten.max_pool2d_with_indices.default", "", setWithIndices},
    {"aten.max_pool3d_with_indices.default", "", setWithIndices},
    {"aten._scaled_dot_product_flash_attention_for_cpu.default", "", setWithLogsumexp},
    {"aten.any.dim", "", dimAsList},
    {"aten.all.dim", "", dimAsList},
    {"aten.flatten.using_ints", "tgc.view", viewToResultSizes},
    {"aten.unflatten.int", "tgc.view", viewToResultSizes},
    {"aten.reshape.default", "tgc.view", viewToResultSizes},
    {"aten._native_batch_norm_legit_functional.default", "", setFunctional},
    {"aten._native_batch_norm_legit_no_training.default", "", setEvalMode},
    {"aten.native_layer_norm.default", "", setNative},
    {"aten.randn.default", "", setNormal},
    {"aten.rand_like.default", "tgc.rand", randLike<false>},
    {"aten.randn_like.default", "tgc.rand", randLike<true>},
    {"aten.movedim.int", "tgc.permute", movedimAsPermute},
    {"aten.movedim.intlist", "tgc.permute", movedimAsPermute},
    {"aten.selu.default", "tgc.elu", seluConstants},
    {"aten.celu.default", "tgc.elu", celuInputScale},
    {"aten.relu6.default", "tgc.hardtanh", relu6Bounds},
    {"aten.floor_divide.default", "tgc.div", floorRounding},
    {"aten.floor_divide.Scalar", "tgc.div", floorRounding},
    {"aten._grouped_mm.default", "", groupedMmOperands},
    {"aten.conv_transpose1d.default", "", setTransposed},
    {"aten.conv_transpose2d.input", "", setTransposed},
    {"aten.conv_transpose3d.input", "", setTransposed},
    {"aten.native_group_norm.default", "", nativeGroupNorm},
    {"aten.native_group_norm_backward.default", "", groupNormSizes},
    {"aten.group_norm.default", "", numGroupsAsGroup},
    {"aten._softmax.default", "", halfToFloatAsDtype},
    {"aten._log_softmax.default", "", halfToFloatAsDtype},
    {"aten.pow.Tensor_Scalar", "", exponentAsOther},
    {"aten.pow.Tensor_Tensor", "", exponentAsOther},
    {"aten.pow.Scalar", "", exponentAsOther},
    {"aten.square.default", "tgc.pow", squareAsPow},
    {"aten.var.dim", "", unbiasedAsCorrection},
    {"aten.ones.default", "", filledWith<1>},
    {"aten.zeros.default", "", filledWith<0>},
    {"aten.empty.memory_format", "", filledWith<0>},
    {"aten.empty_strided.default", "", emptyStrided},
    {"aten.empty_permuted.default", "tgc.full", emptyPermuted},
    {"aten.ones_like.default", "", filledWith<1>},
    {"aten.zeros_like.default", "", filledWith<0>},
    {"aten.empty_like.default", "", filledWith<0>},
    {"aten.new_ones.default", "", newFilledWith<1>},
    {"aten.new_zeros.default", "", newFilledWith<0>},
    {"aten.new_empty.default", "", newFilledWith<0>},
    {"aten.new_full.default", "", newFull},
    {"aten.type_as.default", "", typeAsOther},
    {"aten.expand_as.default", "tgc.expand", sizesOfOther},
    {"aten.view_as.default", "tgc.view", sizesOfOther},
    {"aten.reshape_as.default", "tgc.view", sizesOfOther},
    {"aten.reflection_pad1d.default", "", padMode<kReflect>},
    {"aten.reflection_pad2d.default", "", padMode<kReflect>},
    {"aten.reflection_pad3d.default", "", padMode<kReflect>},
    {"aten.replication_pad1d.default", "", padMode<kReplicate>},
    {"aten.replication_pad2d.default", "", padMode<kReplicate>},
    {"aten.replication_pad3d.default", "", padMode<kReplicate>},
    {"aten._pad_circular.default", "", padMode<kCircular>},
    {"aten.index.Tensor", "", indexDims},
    {"aten.index_put.default", "", indexDims},
    {"aten.index_put_.default", "", indexDims},
    {"aten.upsample_nearest1d.vec", "", upsampleMode<kNearest>},
    {"aten._upsample_nearest_exact1d.vec", "", upsampleMode<kNearestExact>},
    {"aten.upsample_nearest2d.vec", "", upsampleMode<kNearest>},
    {"aten._upsample_nearest_exact2d.vec", "", upsampleMode<kNearestExact>},
    {"aten.upsample_linear1d.vec", "", upsampleMode<kLinear>},
    {"aten.upsample_bilinear2d.vec", "", upsampleMode<kLinear>},
    {"aten.upsample_nearest1d.default", "", upsampleMode<kNearest>},
    {"aten._upsample_nearest_exact1d.default", "", upsampleMode<kNearestExact>},
    {"aten.upsample_nearest2d.default", "", upsampleMode<kNearest>},
    {"aten._upsample_nearest_exact2d.default", "", upsampleMode<kNearestExact>},
    {"aten.upsample_linear1d.default", "", upsampleMode<kLinear>},
    {"aten.upsample_bilinear2d.default", "", upsampleMode<kLinear>},
    {"aten.upsample_nearest3d.vec", "", upsampleMode<kNearest>},
    {"aten.upsample_nearest3d.default", "", upsampleMode<kNearest>},
    {"aten._upsample_nearest_exact3d.vec", "", upsampleMode<kNearestExact>},
    {"aten._upsample_nearest_exact3d.default", "", upsampleMode<kNearestExact>},
    {"aten.upsample_trilinear3d.vec", "", upsampleMode<kLinear>},
    {"aten.upsample_trilinear3d.default", "", upsampleMode<kLinear>},
    {"aten.upsample_bicubic2d.vec", "", upsampleMode<kCubic>},
    {"aten.upsample_bicubic2d.default", "", upsampleMode<kCubic>},
};

/// ATen's aliases (native_functions.yaml's "alias for" entries) of ops tgc has.
static const AtenAlias kAtenAliases[] = {
    {"aten.multiply.Tensor", "aten.mul.Tensor"},
    {"aten.multiply.Scalar", "aten.mul.Scalar"},
    {"aten.multiply_.Tensor", "aten.mul_.Tensor"},
    {"aten.multiply_.Scalar", "aten.mul_.Scalar"},
    {"aten.divide.Tensor", "aten.div.Tensor"},
    {"aten.divide.Scalar", "aten.div.Scalar"},
    {"aten.divide.Tensor_mode", "aten.div.Tensor_mode"},
    {"aten.divide.Scalar_mode", "aten.div.Scalar_mode"},
    {"aten.divide_.Tensor", "aten.div_.Tensor"},
    {"aten.divide_.Scalar", "aten.div_.Scalar"},
    {"aten.true_divide.Tensor", "aten.div.Tensor"},
    {"aten.true_divide.Scalar", "aten.div.Scalar"},
    {"aten.subtract.Tensor", "aten.sub.Tensor"},
    {"aten.subtract.Scalar", "aten.sub.Scalar"},
    {"aten.subtract_.Tensor", "aten.sub_.Tensor"},
    {"aten.swapaxes.default", "aten.transpose.int", {{"axis0", "dim0"}, {"axis1", "dim1"}}},
    {"aten.swapdims.default", "aten.transpose.int"},
    {"aten.moveaxis.int", "aten.movedim.int"},
    {"aten.moveaxis.intlist", "aten.movedim.intlist"},
    {"aten.absolute.default", "aten.abs.default"},
    {"aten.negative.default", "aten.neg.default"},
    {"aten.arccos.default", "aten.acos.default"},
    {"aten.arcsin.default", "aten.asin.default"},
    {"aten.arctan.default", "aten.atan.default"},
    {"aten.arccosh.default", "aten.acosh.default"},
    {"aten.arcsinh.default", "aten.asinh.default"},
    {"aten.arctanh.default", "aten.atanh.default"},
    {"aten.arctan2.default", "aten.atan2.default"},
    {"aten.greater.Tensor", "aten.gt.Tensor"},
    {"aten.greater.Scalar", "aten.gt.Scalar"},
    {"aten.greater_equal.Tensor", "aten.ge.Tensor"},
    {"aten.greater_equal.Scalar", "aten.ge.Scalar"},
    {"aten.less.Tensor", "aten.lt.Tensor"},
    {"aten.less.Scalar", "aten.lt.Scalar"},
    {"aten.less_equal.Tensor", "aten.le.Tensor"},
    {"aten.less_equal.Scalar", "aten.le.Scalar"},
    {"aten.not_equal.Tensor", "aten.ne.Tensor"},
    {"aten.not_equal.Scalar", "aten.ne.Scalar"},
    {"aten.clip.default", "aten.clamp.default"},
    {"aten.clip.Tensor", "aten.clamp.Tensor"},
    {"aten.fix.default", "aten.trunc.default"},
    {"aten.concat.default", "aten.cat.default"},
    {"aten.concatenate.default", "aten.cat.default"},
    {"aten.special_expit.default", "aten.sigmoid.default"},
    {"aten.special_erf.default", "aten.erf.default"},
    {"aten.special_log1p.default", "aten.log1p.default"},
    {"aten.special_expm1.default", "aten.expm1.default"},
    {"aten.special_exp2.default", "aten.exp2.default"},
    {"aten.special_xlogy.default", "aten.xlogy.Tensor"},
    {"aten.special_sinc.default", "aten.sinc.default"},
    {"aten.special_logit.default", "aten.logit.default"},
    {"aten.special_round.default", "aten.round.default"},
    {"aten.special_log_softmax.default", "aten.log_softmax.int"},
    {"aten.special_softmax.default", "aten.softmax.int"},
};

const AtenAlias *tgc::frontend::findAtenAlias(llvm::StringRef target) {
  const auto *it =
      llvm::find_if(kAtenAliases, [&](const AtenAlias &a) { return a.alias == target; });
  return it == std::end(kAtenAliases) ? nullptr : it;
}

const NodeAdapter *tgc::frontend::findNodeAdapter(llvm::StringRef target) {
  const auto *it =
      llvm::find_if(kNodeAdapters, [&](const NodeAdapter &a) { return a.target == target; });
  return it == std::end(kNodeAdapters) ? nullptr : it;
}

bool tgc::frontend::isSymbolicIntTarget(llvm::StringRef target) {
  static constexpr llvm::StringLiteral kTargets[] = {
      "aten.sym_size.int",      "aten.sym_stride.int",
      "aten.sym_numel.default", "aten.sym_storage_offset.default",
      "_operator.add",          "_operator.sub",
      "_operator.mul",          "_operator.floordiv",
      "_operator.mod",          "_operator.neg",
      "_operator.pos"};
  return llvm::is_contained(kTargets, target);
}

bool tgc::frontend::isRuntimeCheckTarget(llvm::StringRef target) {
  static constexpr llvm::StringLiteral kTargets[] = {"_operator.ge",
                                                     "_operator.gt",
                                                     "_operator.le",
                                                     "_operator.lt",
                                                     "_operator.eq",
                                                     "_operator.ne",
                                                     "_operator.and_",
                                                     "_operator.or_",
                                                     "torch.sym_not",
                                                     "aten._assert_scalar.default",
                                                     "aten.sym_constrain_range.default",
                                                     "aten.sym_constrain_range_for_size.default"};
  return llvm::is_contained(kTargets, target);
}

bool tgc::frontend::isIgnorableArgument(const AtenArgument &argument) {
  static constexpr llvm::StringLiteral kIgnorable[] = {
      "layout",        "pin_memory", "memory_format", "non_blocking", "cudnn_enable",
      "cudnn_enabled", "implicit",   "device",        "copy"};
  if (llvm::is_contained(kIgnorable, argument.name))
    return true;
  // half_to_float=False is the default behaviour; True changes the result dtype.
  return argument.name == "half_to_float" && argument.value.kind == AtenValue::Kind::Bool &&
         !argument.value.boolValue;
}
