// torch.autocast's cast policies (see Autocast.h).
//
// The tables are torch's registrations for the AutocastCPU and AutocastCUDA dispatch
// keys (ATen's autocast_mode.cpp and autocast_mode.h): what
// `torch._C._dispatch_get_registrations_for_dispatch_key("AutocastCPU")` lists, each
// with the policy it was registered under. An op the table does not name runs as it is
// (a fallthrough in torch).
#include "Autocast.h"

#include "tgc/Dialect/TgcDialect.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/StringSwitch.h"

using namespace mlir;
using namespace tgc;
using namespace tgc::frontend;

/// The schema name of `target` as the dispatcher registers it: `aten.linear.default` is
/// `linear`, `aten.conv2d.padding` is `conv2d.padding`.
static llvm::StringRef registrationName(llvm::StringRef target) {
  target.consume_front("aten.");
  target.consume_back(".default");
  return target;
}

static AutocastPolicy cpuPolicy(llvm::StringRef name) {
  using P = AutocastPolicy;
  return llvm::StringSwitch<P>(name)
      // lower_precision_fp
      .Cases({"_addmm_activation",
              "_convolution.deprecated",
              "_native_multi_head_attention",
              "addbmm",
              "addmm",
              "baddbmm",
              "bmm",
              "conv1d",
              "conv1d.padding",
              "conv2d",
              "conv2d.padding",
              "conv3d",
              "conv3d.padding",
              "conv_tbc",
              "conv_transpose1d",
              "conv_transpose2d.input",
              "conv_transpose3d.input",
              "linalg_vecdot",
              "linear",
              "matmul",
              "mkldnn_rnn_layer",
              "mm",
              "prelu",
              "scaled_dot_product_attention"},
             P::LowerPrecision)
      // promote
      .Cases({"cat", "stack", "index_copy"}, P::Promote)
      // fp32 (the FFT and linalg families are matched below)
      .Cases({"_grid_sampler_2d_cpu_fallback",
              "_lu_with_info",
              "adaptive_avg_pool3d",
              "adaptive_max_pool3d",
              "avg_pool3d",
              "binary_cross_entropy",
              "binary_cross_entropy_with_logits",
              "cdist",
              "cholesky_inverse",
              "cholesky_solve",
              "cosine_embedding_loss",
              "cross_entropy_loss",
              "ctc_loss.IntList",
              "ctc_loss.Tensor",
              "fake_quantize_per_tensor_affine",
              "fractional_max_pool2d",
              "fractional_max_pool3d",
              "geqrf",
              "grid_sampler",
              "grid_sampler_2d",
              "grid_sampler_3d",
              "hinge_embedding_loss",
              "huber_loss",
              "inverse",
              "kl_div",
              "l1_loss",
              "lu_solve",
              "margin_ranking_loss",
              "max_pool3d",
              "max_unpool2d",
              "max_unpool3d",
              "mse_loss",
              "multi_margin_loss",
              "multilabel_margin_loss",
              "multilabel_margin_loss_forward",
              "nanquantile",
              "nanquantile.scalar",
              "nll_loss",
              "nll_loss2d",
              "orgqr",
              "ormqr",
              "pinverse",
              "poisson_nll_loss",
              "polar",
              "prod",
              "prod.dim_int",
              "quantile",
              "quantile.scalar",
              "reflection_pad1d",
              "reflection_pad2d",
              "replication_pad1d",
              "replication_pad2d",
              "replication_pad3d",
              "smooth_l1_loss",
              "soft_margin_loss",
              "stft",
              "stft.center",
              "svd",
              "trace",
              "triangular_solve",
              "triplet_margin_loss",
              "view_as_complex"},
             P::Fp32)
      .Default(name.starts_with("fft_") || name.starts_with("linalg_") ? P::Fp32 : P::None);
}

static AutocastPolicy cudaPolicy(llvm::StringRef name) {
  using P = AutocastPolicy;
  return llvm::StringSwitch<P>(name)
      // lower_precision_fp
      .Cases({"_convolution",
              "_convolution.deprecated",
              "_cudnn_rnn",
              "_scaled_dot_product_flash_attention",
              "_thnn_fused_gru_cell",
              "_thnn_fused_lstm_cell",
              "addbmm",
              "addmm",
              "addmv",
              "addr",
              "baddbmm",
              "bmm",
              "chain_matmul",
              "conv1d",
              "conv2d",
              "conv3d",
              "conv_tbc",
              "conv_transpose1d",
              "conv_transpose2d.input",
              "conv_transpose3d.input",
              "convolution",
              "cudnn_convolution",
              "cudnn_convolution_transpose",
              "einsum",
              "gru_cell",
              "linalg_multi_dot",
              "linalg_vecdot",
              "linear",
              "lstm_cell",
              "matmul",
              "mm",
              "mv",
              "prelu",
              "rnn_relu_cell",
              "rnn_tanh_cell",
              "scaled_dot_product_attention"},
             P::LowerPrecision)
      // fp32_set_opt_dtype
      .Cases({"cumprod", "cumsum", "linalg_matrix_norm", "linalg_matrix_norm.str_ord",
              "linalg_vector_norm", "log_softmax.int", "prod", "prod.dim_int", "softmax.int", "sum",
              "sum.dim_IntList"},
             P::Fp32OptDType)
      // promote
      .Cases({"addcdiv", "addcmul", "atan2", "bilinear", "cross", "dot", "grid_sampler",
              "index_put", "scatter_add", "tensordot", "vdot"},
             P::Promote)
      // fp32
      .Cases({"_upsample_bicubic2d_aa",
              "_upsample_bilinear2d_aa",
              "_upsample_nearest_exact1d",
              "_upsample_nearest_exact2d",
              "_upsample_nearest_exact3d",
              "acos",
              "asin",
              "binary_cross_entropy",
              "binary_cross_entropy_with_logits",
              "cdist",
              "cosh",
              "cosine_embedding_loss",
              "cosine_similarity",
              "dist",
              "erfinv",
              "exp",
              "expm1",
              "frobenius_norm.dim",
              "group_norm",
              "hinge_embedding_loss",
              "huber_loss",
              "kl_div",
              "l1_loss",
              "layer_norm",
              "linalg_matrix_sqrth",
              "log",
              "log10",
              "log1p",
              "log2",
              "logsumexp",
              "margin_ranking_loss",
              "mse_loss",
              "multi_margin_loss",
              "multilabel_margin_loss",
              "native_layer_norm",
              "nll_loss",
              "nll_loss2d",
              "norm.Scalar",
              "norm.ScalarOpt_dim",
              "nuclear_norm",
              "nuclear_norm.dim",
              "pdist",
              "poisson_nll_loss",
              "pow.Scalar",
              "pow.Tensor_Scalar",
              "pow.Tensor_Tensor",
              "reciprocal",
              "renorm",
              "rms_norm",
              "rsqrt",
              "sinh",
              "smooth_l1_loss",
              "soft_margin_loss",
              "softplus",
              "tan",
              "triplet_margin_loss",
              "upsample_bicubic2d",
              "upsample_bilinear2d",
              "upsample_linear1d",
              "upsample_nearest1d",
              "upsample_nearest2d",
              "upsample_nearest3d",
              "upsample_trilinear3d"},
             P::Fp32)
      .Default(P::None);
}

AutocastPolicy tgc::frontend::getAutocastPolicy(llvm::StringRef deviceType,
                                                llvm::StringRef target) {
  if (!target.starts_with("aten."))
    return AutocastPolicy::None;
  if (deviceType == "cpu")
    return cpuPolicy(registrationName(target));
  if (deviceType == "cuda")
    return cudaPolicy(registrationName(target));
  return AutocastPolicy::None;
}

const AutocastRegion *tgc::frontend::findAutocastRegion(llvm::ArrayRef<AutocastRegion> regions,
                                                        llvm::StringRef deviceType) {
  for (const AutocastRegion &region : llvm::reverse(regions))
    if (region.deviceType == deviceType)
      return &region;
  return nullptr;
}

/// The device type of a tensor's metadata ("cpu" when the type leaves it implicit).
static llvm::StringRef deviceTypeOf(Value tensor) {
  auto device = llvm::dyn_cast_if_present<DeviceAttr>(
      llvm::cast<BaseTensorType>(tensor.getType()).getMeta().device);
  return device ? device.getKind() : llvm::StringRef("cpu");
}

/// Whether autocast casts `tensor` in a region on `deviceType` (ATen's is_eligible): a
/// floating-point tensor on that device, f64 excepted.
static bool isEligible(Value tensor, llvm::StringRef deviceType) {
  Type dtype = llvm::cast<BaseTensorType>(tensor.getType()).getDtype();
  return llvm::isa<FloatType>(dtype) && !dtype.isF64() && deviceTypeOf(tensor) == deviceType;
}

/// The type two floating-point dtypes promote to (f16 with bf16 is f32).
static Type promoteFloat(Type a, Type b) {
  if (!a || a == b)
    return b;
  unsigned width = std::max(a.getIntOrFloatBitWidth(), b.getIntOrFloatBitWidth());
  if (width <= 16)
    return Float32Type::get(a.getContext());
  return a.getIntOrFloatBitWidth() >= b.getIntOrFloatBitWidth() ? a : b;
}

LogicalResult tgc::frontend::applyAutocast(AtenCallBuilder &calls, Location loc,
                                           llvm::ArrayRef<AutocastRegion> regions,
                                           llvm::StringRef target,
                                           std::vector<AtenArgument> &arguments,
                                           const AtenCallBuilder::ErrorFn &emitError) {
  if (regions.empty())
    return success();
  // The device the op runs on: its first tensor argument's.
  Value first;
  for (const AtenArgument &argument : arguments)
    if (!argument.value.values.empty() &&
        llvm::isa<BaseTensorType>(argument.value.values[0].getType())) {
      first = argument.value.values[0];
      break;
    }
  if (!first)
    return success();
  llvm::StringRef deviceType = deviceTypeOf(first);
  const AutocastRegion *region = findAutocastRegion(regions, deviceType);
  if (!region || !region->enabled)
    return success();
  AutocastPolicy policy = getAutocastPolicy(deviceType, target);
  MLIRContext *ctx = loc.getContext();
  Type target32 = Float32Type::get(ctx);

  auto forEachTensor = [&](auto &&fn) {
    for (AtenArgument &argument : arguments)
      if (argument.value.kind == AtenValue::Kind::Tensor ||
          argument.value.kind == AtenValue::Kind::Tensors)
        for (Value &tensor : argument.value.values)
          fn(tensor);
  };
  Type castTo;
  switch (policy) {
  case AutocastPolicy::None:
    return success();
  case AutocastPolicy::LowerPrecision:
    castTo = region->dtype;
    break;
  case AutocastPolicy::Fp32:
    castTo = target32;
    break;
  case AutocastPolicy::Fp32OptDType: {
    // `sum(x)` becomes `sum(x, dtype=f32)` unless the call names a dtype.
    auto dtype = llvm::find_if(arguments, [](const AtenArgument &a) { return a.name == "dtype"; });
    if (dtype != arguments.end() && dtype->value.kind != AtenValue::Kind::None)
      return success();
    Type self = llvm::cast<BaseTensorType>(first.getType()).getDtype();
    if (!llvm::isa<FloatType>(self) || deviceTypeOf(first) != deviceType)
      return success();
    if (dtype != arguments.end())
      dtype->value = AtenValue::dtype(target32);
    else
      arguments.push_back({"dtype", AtenValue::dtype(target32)});
    return success();
  }
  case AutocastPolicy::Promote:
    forEachTensor([&](Value &tensor) {
      if (isEligible(tensor, deviceType))
        castTo = promoteFloat(castTo, llvm::cast<BaseTensorType>(tensor.getType()).getDtype());
    });
    break;
  }
  if (!castTo)
    return success();
  LogicalResult result = success();
  forEachTensor([&](Value &tensor) {
    if (failed(result) || !isEligible(tensor, deviceType) ||
        llvm::cast<BaseTensorType>(tensor.getType()).getDtype() == castTo)
      return;
    std::vector<AtenArgument> cast = {{"self", AtenValue::tensor(tensor)},
                                      {"dtype", AtenValue::dtype(castTo)}};
    FailureOr<Value> casted =
        calls.buildValue(loc, "aten._to_copy.default", std::move(cast), emitError);
    if (failed(casted))
      result = failure();
    else
      tensor = *casted;
  });
  return result;
}
