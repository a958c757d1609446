// The neural-network part of the table of torch callables: linear algebra, reductions,
// normalization, softmax, losses, torch.nn.functional's activations, and pooling.
#include "TorchFunctionTable.h"

#include "tgc/Dialect/TgcDialect.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace tgc;
using namespace tgc::frontend;
using namespace tgc::py;

/// `aten.relu.default` -> `aten.relu_.default`.
static std::string inPlaceTarget(llvm::StringRef target) {
  auto [ns, rest] = target.split('.');
  auto [name, overload] = rest.split('.');
  return (ns + "." + name + "_." + overload).str();
}

/// F.relu(input, inplace=False) and the like: `inplace=True` calls the in-place op.
static llvm::Error inplaceFlag(BoundCall &call) {
  if (isTrue(takeArgument(call, "inplace")))
    call.target = inPlaceTarget(call.target);
  return llvm::Error::success();
}

/// F.relu6: hardtanh between 0 and 6.
static llvm::Error relu6AsHardtanh(BoundCall &call) {
  call.arguments.push_back({"min_val", AtenValue::floating(0)});
  call.arguments.push_back({"max_val", AtenValue::floating(6)});
  return inplaceFlag(call);
}

/// F.dropout(input, p, training, inplace): aten.dropout's `train`; in place, dropout_.
static llvm::Error dropoutArguments(BoundCall &call) {
  renameArgument(call, "training", "train");
  if (AtenValue *inplace = findArgument(call, "inplace"); inplace && isTrue(*inplace))
    renameArgument(call, "input", "self");
  return inplaceFlag(call);
}

/// F.interpolate(input, size, scale_factor, mode, align_corners, recompute_scale_factor,
/// antialias): the `.vec` upsample op of the mode for the input's 1 to 3 resampled
/// dimensions, a single size or scale applying to each, as F.interpolate does.
static llvm::Error interpolateArguments(BoundCall &call) {
  AtenValue *input = findArgument(call, "input");
  auto type = input && input->kind == AtenValue::Kind::Tensor
                  ? llvm::dyn_cast<BaseTensorType>(input->values.front().getType())
                  : BaseTensorType();
  if (!type || type.getRank() < 3 || type.getRank() > 5)
    return bindingError("interpolate needs a 3-d to 5-d input");
  int64_t spatial = type.getRank() - 2;
  AtenValue modeValue = takeArgument(call, "mode");
  std::string mode = modeValue.kind == AtenValue::Kind::String ? modeValue.string : "nearest";
  AtenValue alignCorners = takeArgument(call, "align_corners");
  if (isTrue(takeArgument(call, "antialias")))
    return bindingError("interpolate(antialias=True) is not supported");
  AtenValue recompute = takeArgument(call, "recompute_scale_factor");
  renameArgument(call, "size", "output_size");
  renameArgument(call, "scale_factor", "scale_factors");
  AtenValue *size = findArgument(call, "output_size");
  AtenValue *scale = findArgument(call, "scale_factors");
  bool hasSize = size && size->kind != AtenValue::Kind::None;
  bool hasScale = scale && scale->kind != AtenValue::Kind::None;
  if (hasSize == hasScale)
    return bindingError("interpolate needs exactly one of size and scale_factor");
  if (hasSize && size->sizes.size() == 1)
    size->sizes.assign(spatial, size->sizes.front());
  if (hasScale && scale->floats.size() == 1)
    scale->floats.assign(spatial, scale->floats.front());
  if ((hasSize && int64_t(size->sizes.size()) != spatial) ||
      (hasScale && int64_t(scale->floats.size()) != spatial))
    return bindingError("interpolate: size or scale_factor must have one entry per resampled "
                        "dimension (" +
                        llvm::Twine(spatial) + ")");
  if (hasScale && isTrue(recompute)) {
    // The output size from the scales, which then no longer take part.
    SmallVector<AffineExpr> sizes;
    for (int64_t i = 0; i < spatial; ++i) {
      std::optional<int64_t> in = getConstantSize(type.getSizes()[2 + i]);
      if (!in)
        return bindingError("interpolate(recompute_scale_factor=True) needs static sizes");
      sizes.push_back(
          getAffineConstantExpr(int64_t(double(*in) * scale->floats[i]), type.getContext()));
    }
    *scale = AtenValue::none();
    *size = AtenValue::ints(sizes);
  }
  static const char *const kLinear[] = {"linear", "bilinear", "trilinear"};
  static const char *const kLinearOps[] = {"upsample_linear1d", "upsample_bilinear2d",
                                           "upsample_trilinear3d"};
  std::string op;
  bool takesAlignCorners = false;
  if (mode == "nearest") {
    op = "upsample_nearest" + std::to_string(spatial) + "d";
  } else if (mode == "nearest-exact") {
    op = "_upsample_nearest_exact" + std::to_string(spatial) + "d";
  } else if (mode == kLinear[spatial - 1]) {
    op = kLinearOps[spatial - 1];
    takesAlignCorners = true;
  } else if (mode == "bicubic" && spatial == 2) {
    op = "upsample_bicubic2d";
    takesAlignCorners = true;
  } else {
    return bindingError("interpolate: mode '" + mode + "' is not supported for a " +
                        llvm::Twine(type.getRank()) + "-d input");
  }
  if (takesAlignCorners)
    call.arguments.push_back({"align_corners", AtenValue::boolean(isTrue(alignCorners))});
  else if (alignCorners.kind != AtenValue::Kind::None)
    return bindingError("interpolate: align_corners only goes with the linear and cubic modes");
  call.target = "aten." + op + ".vec";
  return llvm::Error::success();
}

/// F.softmax(input, dim, _stacklevel, dtype): the implicit dim of a None `dim` is
/// deprecated in torch and not supported.
static llvm::Error softmaxArguments(BoundCall &call) {
  takeArgument(call, "_stacklevel");
  if (AtenValue *dim = findArgument(call, "dim"); !dim || dim->kind == AtenValue::Kind::None)
    return bindingError(call.target + " without 'dim' is not supported (torch deprecated the "
                                      "implicit dimension)");
  return llvm::Error::success();
}

/// The int aten's losses take for a `reduction` string.
static llvm::Error reductionAsEnum(BoundCall &call) {
  for (llvm::StringRef deprecated : {"size_average", "reduce"})
    if (takeArgument(call, deprecated).kind != AtenValue::Kind::None)
      return bindingError("the deprecated argument '" + deprecated +
                          "' is not supported; use "
                          "'reduction'");
  AtenValue reduction = takeArgument(call, "reduction");
  if (reduction.kind == AtenValue::Kind::None)
    return llvm::Error::success();
  static constexpr llvm::StringLiteral kReductions[] = {"none", "mean", "sum"};
  const auto *it =
      llvm::find_if(kReductions, [&](llvm::StringRef name) { return name == reduction.string; });
  if (reduction.kind != AtenValue::Kind::String || it == std::end(kReductions))
    return bindingError("reduction must be 'none', 'mean' or 'sum', not '" + reduction.string +
                        "'");
  std::vector<AtenValue> values;
  for (const AtenArgument &argument : call.arguments)
    values.push_back(argument.value);
  MLIRContext *ctx = findContext(values);
  if (!ctx)
    return bindingError("reduction needs a tensor argument");
  call.arguments.push_back(
      {"reduction", AtenValue::integer(getAffineConstantExpr(it - std::begin(kReductions), ctx))});
  return llvm::Error::success();
}

/// F.embedding(input, weight, padding_idx, max_norm, norm_type, ...): aten.embedding's
/// `indices`; a negative padding_idx counts from the end of `weight`, as torch does.
static llvm::Error embeddingArguments(BoundCall &call) {
  if (takeArgument(call, "max_norm").kind != AtenValue::Kind::None)
    return bindingError("embedding with max_norm is not supported");
  takeArgument(call, "norm_type");
  renameArgument(call, "input", "indices");
  AtenValue *paddingIdx = findArgument(call, "padding_idx");
  if (paddingIdx && paddingIdx->kind == AtenValue::Kind::None) {
    takeArgument(call, "padding_idx");
    return llvm::Error::success();
  }
  std::optional<int64_t> index = paddingIdx ? getConstantSize(paddingIdx->size) : std::nullopt;
  if (!index || *index >= 0)
    return llvm::Error::success();
  AtenValue *weight = findArgument(call, "weight");
  auto type = weight && weight->kind == AtenValue::Kind::Tensor
                  ? llvm::dyn_cast<BaseTensorType>(weight->values.front().getType())
                  : BaseTensorType();
  std::optional<int64_t> rows =
      type && type.getRank() > 0 ? getConstantSize(type.getSizes().front()) : std::nullopt;
  if (!rows)
    return bindingError("embedding: a negative padding_idx needs a weight with a constant size");
  paddingIdx->size = getAffineConstantExpr(*rows + *index, paddingIdx->size.getContext());
  return llvm::Error::success();
}

/// F.max_pool1d/2d(..., return_indices): the argmax comes from max_poolNd_with_indices.
static llvm::Error maxPoolArguments(BoundCall &call) {
  if (isTrue(takeArgument(call, "return_indices")))
    call.target = (llvm::StringRef(call.target).rsplit('.').first + "_with_indices.default").str();
  if (AtenValue *stride = findArgument(call, "stride");
      stride && stride->kind == AtenValue::Kind::None)
    takeArgument(call, "stride");
  return llvm::Error::success();
}

/// F.adaptive_max_pool2d(input, output_size, return_indices=False): the values, and the
/// indices too with `return_indices`.
static llvm::Error adaptiveMaxPoolArguments(BoundCall &call) {
  call.numReturns = isTrue(takeArgument(call, "return_indices")) ? 2 : 1;
  return llvm::Error::success();
}

/// Linear algebra.
static void addLinearAlgebra(std::vector<TorchFunction> &table) {
  std::vector<TorchFunction> functions = {
      {{"torch.matmul", "torch.Tensor.matmul", "operator.matmul", "torch.Tensor.__matmul__"},
       {{TGC_SCHEMA("matmul(Tensor self, Tensor other)"), "aten.matmul.default"}}},
      {{"torch.mm", "torch.Tensor.mm"},
       {{TGC_SCHEMA("mm(Tensor self, Tensor mat2)"), "aten.mm.default"}}},
      {{"torch.bmm", "torch.Tensor.bmm"},
       {{TGC_SCHEMA("bmm(Tensor self, Tensor mat2)"), "aten.bmm.default"}}},
      {{"torch.addmm", "torch.Tensor.addmm"},
       {{TGC_SCHEMA(
             "addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1)"),
         "aten.addmm.default"}}},
      {{"torch.einsum", "torch.functional.einsum"},
       {{TGC_SCHEMA("einsum(str equation, Tensor[] tensors, *, int[]? path=None)"),
         "aten.einsum.default"}}},
      // torch.cdist is Python (torch.functional) over the ATen operator; compute_mode
      // (a string here) only picks eager's kernel, which the composite does not need.
      {{"torch.cdist", "torch.functional.cdist"},
       {{TGC_SCHEMA("cdist(Tensor x1, Tensor x2, float p=2., str? compute_mode=None)"),
         "aten.cdist.default"}}},
      // nn.LSTM / nn.GRU's fused kernels (tgc composes them, unrolled).
      {{"torch._VF.lstm"},
       {{"lstm.input(Tensor input, Tensor[] hx, Tensor[] params, bool has_biases, int "
         "num_layers, float dropout, bool train, bool bidirectional, bool batch_first) -> "
         "(Tensor, Tensor, Tensor)",
         "aten.lstm.input"}}},
      {{"torch._VF.gru"},
       {{"gru.input(Tensor input, Tensor hx, Tensor[] params, bool has_biases, int num_layers, "
         "float dropout, bool train, bool bidirectional, bool batch_first) -> (Tensor, Tensor)",
         "aten.gru.input"}}},
      {{"torch.baddbmm", "torch.Tensor.baddbmm"},
       {{TGC_SCHEMA("baddbmm(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, "
                    "Scalar alpha=1)"),
         "aten.baddbmm.default"}}},
      {{"torch.nn.functional.linear", "torch._C._nn.linear"},
       {{TGC_SCHEMA("linear(Tensor input, Tensor weight, Tensor? bias=None)"),
         "aten.linear.default"}}},
      {{"torch.conv1d", "torch.nn.functional.conv1d"},
       {{TGC_SCHEMA("conv1d(Tensor input, Tensor weight, Tensor? bias=None, SymInt[1] stride=1, "
                    "SymInt[1] padding=0, SymInt[1] dilation=1, SymInt groups=1)"),
         "aten.conv1d.default"}}},
      {{"torch.conv2d", "torch.nn.functional.conv2d"},
       {{TGC_SCHEMA("conv2d(Tensor input, Tensor weight, Tensor? bias=None, SymInt[2] stride=1, "
                    "SymInt[2] padding=0, SymInt[2] dilation=1, SymInt groups=1)"),
         "aten.conv2d.default"}}},
      {{"torch.conv3d", "torch.nn.functional.conv3d"},
       {{TGC_SCHEMA("conv3d(Tensor input, Tensor weight, Tensor? bias=None, SymInt[3] stride=1, "
                    "SymInt[3] padding=0, SymInt[3] dilation=1, SymInt groups=1)"),
         "aten.conv3d.default"}}},
  };
  llvm::append_range(table, functions);
}

/// Reductions.
/// torch.norm / Tensor.norm's `p` is linalg_vector_norm's `ord` (a number: `'fro'` and
/// `'nuc'` are matrix norms).
static llvm::Error normOrder(BoundCall &call) {
  renameArgument(call, "p", "ord");
  return llvm::Error::success();
}

static void addReductions(std::vector<TorchFunction> &table) {
  std::vector<TorchFunction> functions = {
      {{"torch.linalg.vector_norm", "torch._C._linalg.linalg_vector_norm"},
       {{TGC_SCHEMA("linalg_vector_norm(Tensor self, Scalar ord=2, int[1]? dim=None, bool "
                    "keepdim=False, *, ScalarType? dtype=None)"),
         "aten.linalg_vector_norm.default"}}},
      {{"torch.norm", "torch.Tensor.norm"},
       {{TGC_SCHEMA("norm(Tensor self, Scalar? p=2, int[1]? dim=None, bool keepdim=False, *, "
                    "ScalarType? dtype=None)"),
         "aten.linalg_vector_norm.default", normOrder}}},
      {{"torch._weight_norm"},
       {{TGC_SCHEMA("_weight_norm(Tensor v, Tensor g, int dim=0)"), "aten._weight_norm.default"}}},
      {{"torch.histc", "torch.Tensor.histc"},
       {{TGC_SCHEMA("histc(Tensor self, int bins=100, Scalar min=0, Scalar max=0)"),
         "aten.histc.default"}}},
      {{"torch.cumsum", "torch.Tensor.cumsum"},
       {{TGC_SCHEMA("cumsum(Tensor self, int dim, *, ScalarType? dtype=None)"),
         "aten.cumsum.default"}}},
      {{"torch.cumprod", "torch.Tensor.cumprod"},
       {{TGC_SCHEMA("cumprod(Tensor self, int dim, *, ScalarType? dtype=None)"),
         "aten.cumprod.default"}}},
      {{"torch.sum", "torch.Tensor.sum"},
       {{TGC_SCHEMA("sum(Tensor self, *, ScalarType? dtype=None)"), "aten.sum.default"},
        {TGC_SCHEMA("sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? "
                    "dtype=None)"),
         "aten.sum.dim_IntList"}}},
      {{"torch.nansum", "torch.Tensor.nansum"},
       {{TGC_SCHEMA("nansum(Tensor self, int[1]? dim=None, bool keepdim=False, *, ScalarType? "
                    "dtype=None)"),
         "aten.nansum.default"}}},
      {{"torch.mean", "torch.Tensor.mean"},
       {{TGC_SCHEMA("mean(Tensor self, *, ScalarType? dtype=None)"), "aten.mean.default"},
        {TGC_SCHEMA(
             "mean.dim(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None)"),
         "aten.mean.dim"}}},
      {{"torch.amax", "torch.Tensor.amax"},
       {{TGC_SCHEMA("amax(Tensor self, int[1] dim=[], bool keepdim=False)"), "aten.amax.default"}}},
      {{"torch.amin", "torch.Tensor.amin"},
       {{TGC_SCHEMA("amin(Tensor self, int[1] dim=[], bool keepdim=False)"), "aten.amin.default"}}},
      {{"torch.any", "torch.Tensor.any"},
       {{TGC_SCHEMA("any(Tensor self)"), "aten.any.default"},
        {TGC_SCHEMA("any.dim(Tensor self, int dim, bool keepdim=False)"), "aten.any.dim"},
        {TGC_SCHEMA("any.dims(Tensor self, int[]? dim=None, bool keepdim=False)"),
         "aten.any.dims"}}},
      {{"torch.all", "torch.Tensor.all"},
       {{TGC_SCHEMA("all(Tensor self)"), "aten.all.default"},
        {TGC_SCHEMA("all.dim(Tensor self, int dim, bool keepdim=False)"), "aten.all.dim"},
        {TGC_SCHEMA("all.dims(Tensor self, int[]? dim=None, bool keepdim=False)"),
         "aten.all.dims"}}},
      {{"torch.var", "torch.Tensor.var"},
       {{TGC_SCHEMA("var.dim(Tensor self, int[1]? dim, bool unbiased=True, bool keepdim=False)"),
         "aten.var.dim"},
        {TGC_SCHEMA("var(Tensor self, bool unbiased=True)"), "aten.var.dim"},
        {TGC_SCHEMA(
             "var.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool "
             "keepdim=False)"),
         "aten.var.correction"}}},
  };
  llvm::append_range(table, functions);
}

/// Normalization, softmax, losses.
static void addNormalizationAndLosses(std::vector<TorchFunction> &table) {
  std::vector<TorchFunction> functions = {
      {{"torch.softmax", "torch.Tensor.softmax", "torch._softmax"},
       {{TGC_SCHEMA("softmax.int(Tensor self, int dim, ScalarType? dtype=None)"),
         "aten.softmax.int"}}},
      {{"torch.log_softmax", "torch.Tensor.log_softmax"},
       {{TGC_SCHEMA("log_softmax.int(Tensor self, int dim, ScalarType? dtype=None)"),
         "aten.log_softmax.int"}}},
      {{"torch.nn.functional.softmax"},
       {{TGC_SCHEMA(
             "softmax(Tensor self, int? dim=None, int _stacklevel=3, ScalarType? dtype=None)"),
         "aten.softmax.int", softmaxArguments}}},
      {{"torch.nn.functional.log_softmax"},
       {{TGC_SCHEMA(
             "log_softmax(Tensor self, int? dim=None, int _stacklevel=3, ScalarType? dtype=None)"),
         "aten.log_softmax.int", softmaxArguments}}},
      {{"torch.group_norm", "torch.nn.functional.group_norm"},
       {{TGC_SCHEMA("group_norm(Tensor input, int num_groups, Tensor? weight=None, Tensor? "
                    "bias=None, float eps=1e-05, bool cudnn_enabled=True)"),
         "aten.group_norm.default"}}},
      {{"torch.layer_norm", "torch.nn.functional.layer_norm"},
       {{TGC_SCHEMA(
             "layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight=None, Tensor? "
             "bias=None, float eps=1e-05)"),
         "aten.layer_norm.default"}}},
      {{"torch.batch_norm"},
       {{TGC_SCHEMA("batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, "
                    "Tensor? running_var, bool training, float momentum, float eps, bool "
                    "cudnn_enabled)"),
         "aten.batch_norm.default"}}},
      {{"torch.nn.functional.batch_norm"},
       {{TGC_SCHEMA(
             "batch_norm(Tensor input, Tensor? running_mean, Tensor? running_var, Tensor? "
             "weight=None, Tensor? bias=None, bool training=False, float momentum=0.1, float "
             "eps=1e-05)"),
         "aten.batch_norm.default", nullptr, /*passDefaults=*/true}}},
      {{"torch.nn.functional.cross_entropy"},
       {{TGC_SCHEMA(
             "cross_entropy(Tensor self, Tensor target, Tensor? weight=None, bool? "
             "size_average=None, int ignore_index=-100, bool? reduce=None, str reduction='mean', "
             "float label_smoothing=0.0)"),
         "aten.cross_entropy_loss.default", reductionAsEnum}}},
      {{"torch.nn.functional.nll_loss"},
       {{TGC_SCHEMA(
             "nll_loss(Tensor self, Tensor target, Tensor? weight=None, bool? size_average=None, "
             "int ignore_index=-100, bool? reduce=None, str reduction='mean')"),
         "aten.nll_loss.default", reductionAsEnum}}},
      {{"torch.nn.functional.unfold"},
       {{TGC_SCHEMA("unfold(Tensor self, int[2] kernel_size, int[2] dilation=1, int[2] "
                    "padding=0, int[2] stride=1)"),
         "aten.im2col.default"}}},
      {{"torch.nn.functional.softplus"},
       {{TGC_SCHEMA("softplus(Tensor self, Scalar beta=1, Scalar threshold=20)"),
         "aten.softplus.default"}}},
      {{"torch.nn.functional.mse_loss"},
       {{TGC_SCHEMA("mse_loss(Tensor self, Tensor target, bool? size_average=None, bool? "
                    "reduce=None, str reduction='mean')"),
         "aten.mse_loss.default", reductionAsEnum}}},
      {{"torch.nn.functional.l1_loss"},
       {{TGC_SCHEMA("l1_loss(Tensor self, Tensor target, bool? size_average=None, bool? "
                    "reduce=None, str reduction='mean')"),
         "aten.l1_loss.default", reductionAsEnum}}},
      {{"torch.nn.functional.smooth_l1_loss"},
       {{TGC_SCHEMA("smooth_l1_loss(Tensor self, Tensor target, bool? size_average=None, bool? "
                    "reduce=None, str reduction='mean', float beta=1.0)"),
         "aten.smooth_l1_loss.default", reductionAsEnum}}},
      {{"torch.nn.functional.huber_loss"},
       {{TGC_SCHEMA("huber_loss(Tensor self, Tensor target, str reduction='mean', float "
                    "delta=1.0)"),
         "aten.huber_loss.default", reductionAsEnum}}},
      {{"torch.nn.functional.binary_cross_entropy"},
       {{TGC_SCHEMA("binary_cross_entropy(Tensor self, Tensor target, Tensor? weight=None, "
                    "bool? size_average=None, bool? reduce=None, str reduction='mean')"),
         "aten.binary_cross_entropy.default", reductionAsEnum}}},
      {{"torch.nn.functional.binary_cross_entropy_with_logits"},
       {{TGC_SCHEMA("binary_cross_entropy_with_logits(Tensor self, Tensor target, Tensor? "
                    "weight=None, bool? size_average=None, bool? reduce=None, str "
                    "reduction='mean', Tensor? pos_weight=None)"),
         "aten.binary_cross_entropy_with_logits.default", reductionAsEnum}}},
      {{"torch.nn.functional.scaled_dot_product_attention"},
       {{TGC_SCHEMA(
             "scaled_dot_product_attention(Tensor query, Tensor key, Tensor value, Tensor? "
             "attn_mask=None, float dropout_p=0., bool is_causal=False, *, float? scale=None, "
             "bool enable_gqa=False)"),
         "aten.scaled_dot_product_attention.default"}}},
      {{"torch.dropout"},
       {{TGC_SCHEMA("dropout(Tensor input, float p, bool train)"), "aten.dropout.default"}}},
      {{"torch.nn.functional.dropout"},
       {{TGC_SCHEMA("dropout(Tensor input, float p=0.5, bool training=True, bool inplace=False)"),
         "aten.dropout.default", dropoutArguments, /*passDefaults=*/true}}},
      {{"torch.nn.functional.dropout1d", "torch.nn.functional.dropout2d",
        "torch.nn.functional.dropout3d"},
       {{TGC_SCHEMA("feature_dropout(Tensor input, float p=0.5, bool training=True, bool "
                    "inplace=False)"),
         "aten.feature_dropout.default", dropoutArguments, /*passDefaults=*/true}}},
      {{"torch.nn.functional.alpha_dropout"},
       {{TGC_SCHEMA("alpha_dropout(Tensor input, float p=0.5, bool training=False, bool "
                    "inplace=False)"),
         "aten.alpha_dropout.default", dropoutArguments, /*passDefaults=*/true}}},
      {{"torch.nn.functional.feature_alpha_dropout"},
       {{TGC_SCHEMA("feature_alpha_dropout(Tensor input, float p=0.5, bool training=False, bool "
                    "inplace=False)"),
         "aten.feature_alpha_dropout.default", dropoutArguments, /*passDefaults=*/true}}},
      {{"torch.nn.functional.glu"},
       {{TGC_SCHEMA("glu(Tensor self, int dim=-1)"), "aten.glu.default"}}},
      {{"torch.nn.functional.rms_norm"},
       {{TGC_SCHEMA("rms_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight=None, "
                    "float? eps=None)"),
         "aten.rms_norm.default"}}},
      {{"torch.nn.functional.instance_norm"},
       {{TGC_SCHEMA("instance_norm(Tensor input, Tensor? running_mean=None, Tensor? "
                    "running_var=None, Tensor? weight=None, Tensor? bias=None, bool "
                    "use_input_stats=True, float momentum=0.1, float eps=1e-05)"),
         "aten.instance_norm.default", /*rewrite=*/nullptr, /*passDefaults=*/true}}},
      {{"torch.nn.functional.threshold", "torch.nn.functional._threshold"},
       {{TGC_SCHEMA("threshold(Tensor self, Scalar threshold, Scalar value, bool inplace=False)"),
         "aten.threshold.default", inplaceFlag}}},
      {{"torch.embedding"},
       {{TGC_SCHEMA("embedding(Tensor weight, Tensor indices, SymInt padding_idx=-1, bool "
                    "scale_grad_by_freq=False, bool sparse=False)"),
         "aten.embedding.default"}}},
      {{"torch.nn.functional.embedding"},
       {{TGC_SCHEMA(
             "embedding(Tensor input, Tensor weight, int? padding_idx=None, float? max_norm=None, "
             "float norm_type=2.0, bool scale_grad_by_freq=False, bool sparse=False)"),
         "aten.embedding.default", embeddingArguments}}},
      {{"torch.gather", "torch.Tensor.gather"},
       {{TGC_SCHEMA("gather(Tensor self, int dim, Tensor index, *, bool sparse_grad=False)"),
         "aten.gather.default"}}},
  };
  llvm::append_range(table, functions);
}

/// Activations of torch.nn.functional, and pooling.
static void addActivationsAndPooling(std::vector<TorchFunction> &table) {
  std::vector<TorchFunction> functions = {
      {{"torch.nn.functional.relu"},
       {{TGC_SCHEMA("relu(Tensor self, bool inplace=False)"), "aten.relu.default", inplaceFlag}}},
      {{"torch.nn.functional.silu"},
       {{TGC_SCHEMA("silu(Tensor self, bool inplace=False)"), "aten.silu.default", inplaceFlag}}},
      {{"torch.nn.functional.gelu"},
       {{TGC_SCHEMA("gelu(Tensor self, *, str approximate='none')"), "aten.gelu.default"}}},
      {{"torch.nn.functional.leaky_relu"},
       {{TGC_SCHEMA("leaky_relu(Tensor self, Scalar negative_slope=0.01, bool inplace=False)"),
         "aten.leaky_relu.default", inplaceFlag}}},
      {{"torch.nn.functional.leaky_relu_"},
       {{TGC_SCHEMA("leaky_relu_(Tensor self, Scalar negative_slope=0.01)"),
         "aten.leaky_relu_.default"}}},
      {{"torch.nn.functional.hardtanh"},
       {{TGC_SCHEMA(
             "hardtanh(Tensor self, Scalar min_val=-1., Scalar max_val=1., bool inplace=False)"),
         "aten.hardtanh.default", inplaceFlag}}},
      {{"torch.nn.functional.hardtanh_"},
       {{TGC_SCHEMA("hardtanh_(Tensor self, Scalar min_val=-1., Scalar max_val=1.)"),
         "aten.hardtanh_.default"}}},
      {{"torch.nn.functional.hardswish"},
       {{TGC_SCHEMA("hardswish(Tensor self, bool inplace=False)"), "aten.hardswish.default",
         inplaceFlag}}},
      {{"torch.nn.functional.hardsigmoid"},
       {{TGC_SCHEMA("hardsigmoid(Tensor self, bool inplace=False)"), "aten.hardsigmoid.default",
         inplaceFlag}}},
      {{"torch.nn.functional.elu"},
       {{TGC_SCHEMA("elu(Tensor self, Scalar alpha=1., bool inplace=False)"), "aten.elu.default",
         inplaceFlag}}},
      {{"torch.nn.functional.selu"},
       {{TGC_SCHEMA("selu(Tensor self, bool inplace=False)"), "aten.selu.default", inplaceFlag}}},
      {{"torch.nn.functional.celu"},
       {{TGC_SCHEMA("celu(Tensor self, Scalar alpha=1., bool inplace=False)"), "aten.celu.default",
         inplaceFlag}}},
      {{"torch.nn.functional.mish"},
       {{TGC_SCHEMA("mish(Tensor self, bool inplace=False)"), "aten.mish.default", inplaceFlag}}},
      {{"torch.nn.functional.logsigmoid", "torch._C._nn.log_sigmoid"},
       {{TGC_SCHEMA("log_sigmoid(Tensor self)"), "aten.log_sigmoid.default"}}},
      {{"torch.nn.functional.relu6"},
       {{TGC_SCHEMA("relu6(Tensor self, bool inplace=False)"), "aten.hardtanh.default",
         relu6AsHardtanh}}},

      // Pooling.
      {{"torch.nn.functional.max_pool3d", "torch.max_pool3d", "torch.nn.functional._max_pool3d"},
       {{TGC_SCHEMA("max_pool3d(Tensor self, int[3] kernel_size, int[3]? stride=None, int[3] "
                    "padding=0, int[3] dilation=1, bool ceil_mode=False, bool "
                    "return_indices=False)"),
         "aten.max_pool3d.default", maxPoolArguments}}},
      {{"torch.nn.functional.max_pool1d", "torch.max_pool1d", "torch.nn.functional._max_pool1d"},
       {{TGC_SCHEMA("max_pool1d(Tensor self, int[1] kernel_size, int[1]? stride=None, int[1] "
                    "padding=0, int[1] dilation=1, bool ceil_mode=False, bool "
                    "return_indices=False)"),
         "aten.max_pool1d.default", maxPoolArguments}}},
      {{"torch.nn.functional.max_pool2d", "torch.max_pool2d", "torch.nn.functional._max_pool2d"},
       {{TGC_SCHEMA(
             "max_pool2d(Tensor self, int[2] kernel_size, int[2]? stride=None, int[2] padding=0, "
             "int[2] dilation=1, bool ceil_mode=False, bool return_indices=False)"),
         "aten.max_pool2d.default", maxPoolArguments}}},
      {{"torch.nn.functional.avg_pool2d", "torch._C._nn.avg_pool2d"},
       {{TGC_SCHEMA(
             "avg_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, "
             "bool ceil_mode=False, bool count_include_pad=True, int? divisor_override=None)"),
         "aten.avg_pool2d.default"}}},
      {{"torch.nn.functional.adaptive_max_pool2d",
        "torch.nn.functional.adaptive_max_pool2d_with_indices",
        "torch.nn.functional._adaptive_max_pool2d"},
       {{"adaptive_max_pool2d(Tensor self, int[2] output_size, bool return_indices=False) -> "
         "(Tensor, Tensor)",
         "aten.adaptive_max_pool2d.default", adaptiveMaxPoolArguments}}},
      {{"torch._C._nn.adaptive_max_pool2d"},
       {{"adaptive_max_pool2d(Tensor self, int[2] output_size) -> (Tensor, Tensor)",
         "aten.adaptive_max_pool2d.default"}}},
      {{"torch.nn.functional.adaptive_avg_pool2d", "torch._C._nn.adaptive_avg_pool2d"},
       {{TGC_SCHEMA("adaptive_avg_pool2d(Tensor self, SymInt[2] output_size)"),
         "aten.adaptive_avg_pool2d.default"}}},
      {{"torch.nn.functional.adaptive_avg_pool1d", "torch.adaptive_avg_pool1d"},
       {{TGC_SCHEMA("adaptive_avg_pool1d(Tensor self, int[1] output_size)"),
         "aten.adaptive_avg_pool1d.default"}}},
      {{"torch.nn.functional.adaptive_avg_pool3d", "torch._C._nn.adaptive_avg_pool3d"},
       {{TGC_SCHEMA("adaptive_avg_pool3d(Tensor self, SymInt[3] output_size)"),
         "aten.adaptive_avg_pool3d.default"}}},
      {{"torch.nn.functional.avg_pool1d", "torch.avg_pool1d"},
       {{TGC_SCHEMA("avg_pool1d(Tensor self, int[1] kernel_size, int[1] stride=[], int[1] "
                    "padding=0, bool ceil_mode=False, bool count_include_pad=True)"),
         "aten.avg_pool1d.default"}}},
      {{"torch.nn.functional.avg_pool3d", "torch._C._nn.avg_pool3d"},
       {{TGC_SCHEMA(
             "avg_pool3d(Tensor self, int[3] kernel_size, int[3] stride=[], int[3] padding=0, "
             "bool ceil_mode=False, bool count_include_pad=True, int? divisor_override=None)"),
         "aten.avg_pool3d.default"}}},
      {{"torch.nn.functional.pad", "torch._C._nn.pad"},
       {{TGC_SCHEMA("pad(Tensor self, SymInt[] pad, str mode='constant', float? value=None)"),
         "aten.pad.default"}}},
      {{"torch.nn.functional.interpolate"},
       {{TGC_SCHEMA("interpolate(Tensor input, SymInt[1]? size=None, float[1]? scale_factor=None, "
                    "str mode='nearest', bool? align_corners=None, bool? "
                    "recompute_scale_factor=None, bool antialias=False)"),
         // The rewrite picks the op of the mode and rank; this is the 2-d nearest one.
         "aten.upsample_nearest2d.vec", interpolateArguments}}},
  };
  llvm::append_range(table, functions);
}

void tgc::py::addNNTorchFunctions(std::vector<TorchFunction> &table) {
  addLinearAlgebra(table);
  addReductions(table);
  addNormalizationAndLosses(table);
  addActivationsAndPooling(table);
}
