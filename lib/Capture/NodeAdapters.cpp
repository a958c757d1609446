// The few ATen targets whose arguments need reshaping before they map onto a tgc op.
#include "NodeAdapters.h"

#include "tgc/Dialect/TgcDialect.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace tgc;

//===----------------------------------------------------------------------===//
// Argument helpers
//===----------------------------------------------------------------------===//

static const Json *findArgument(const std::vector<NodeArgument> &arguments, llvm::StringRef name) {
  auto it = llvm::find_if(arguments, [&](const NodeArgument &a) { return a.name == name; });
  return it == arguments.end() ? nullptr : it->value;
}

/// Removes argument `name` (if present) and returns its value.
static const Json *takeArgument(std::vector<NodeArgument> &arguments, llvm::StringRef name) {
  const Json *value = findArgument(arguments, name);
  llvm::erase_if(arguments, [&](const NodeArgument &a) { return a.name == name; });
  return value;
}

static FailureOr<TensorMeta> firstOutputMeta(AdapterNode &node) {
  if (node.outputs.empty() || !node.outputs.front().meta)
    return node.emitError() << "expected a tensor result";
  return *node.outputs.front().meta;
}

//===----------------------------------------------------------------------===//
// Adapters
//===----------------------------------------------------------------------===//

/// split.Tensor(self, split_size, dim): the chunk sizes, which the last chunk makes
/// uneven, are those of the outputs.
static LogicalResult splitSizesFromOutputs(AdapterNode &node) {
  takeArgument(node.arguments, "split_size");
  takeArgument(node.arguments, "chunks");
  const Json *dimArgument = findArgument(node.arguments, "dim");
  int64_t dim = dimArgument ? dimArgument->at("as_int").get<int64_t>() : 0;
  SmallVector<int64_t> sizes;
  for (const NodeOutput &output : node.outputs) {
    if (!output.meta)
      return node.emitError() << "split result '" << output.name << "' has no metadata";
    std::optional<int64_t> d = normalizeDim(dim, output.meta->rank());
    std::optional<int64_t> size = d ? getConstantSize(output.meta->sizes[*d]) : std::nullopt;
    if (!size)
      return node.emitError() << "split along a symbolic or invalid dimension " << dim
                              << " is not supported";
    sizes.push_back(*size);
  }
  node.attributes.set("split_sizes", DenseI64ArrayAttr::get(node.ctx, sizes));
  return success();
}

/// max_pool2d_with_indices: max pooling that also returns the argmax.
static LogicalResult setWithIndices(AdapterNode &node) {
  node.attributes.set("with_indices", UnitAttr::get(node.ctx));
  return success();
}

/// any.dim / all.dim(self, int dim, keepdim): one reduced dimension, as a list.
static LogicalResult dimAsList(AdapterNode &node) {
  const Json *dim = takeArgument(node.arguments, "dim");
  if (dim)
    node.attributes.set("dim", DenseI64ArrayAttr::get(node.ctx, {dim->at("as_int").get<int64_t>()}));
  return success();
}

/// flatten/unflatten/reshape: a view to the sizes the export computed for the result.
static LogicalResult viewToOutputSizes(AdapterNode &node) {
  FailureOr<TensorMeta> meta = firstOutputMeta(node);
  if (failed(meta))
    return failure();
  llvm::erase_if(node.arguments, [](const NodeArgument &a) { return a.name != "self"; });
  node.attributes.set("size", ShapeAttr::get(node.ctx, meta->sizes));
  return success();
}

/// _native_batch_norm_legit_functional: also returns the new running statistics.
static LogicalResult setFunctional(AdapterNode &node) {
  node.attributes.set("functional", UnitAttr::get(node.ctx));
  return success();
}

/// native_layer_norm: returns (output, mean, rstd).
static LogicalResult setNative(AdapterNode &node) {
  node.attributes.set("native", UnitAttr::get(node.ctx));
  return success();
}

/// _native_batch_norm_legit_no_training: batch norm with `training` fixed to false.
static LogicalResult setEvalMode(AdapterNode &node) {
  node.attributes.set("training", BoolAttr::get(node.ctx, false));
  return success();
}

/// _softmax / _log_softmax(self, dim, half_to_float): a true `half_to_float` asks for
/// an f32 result.
static LogicalResult halfToFloatAsDtype(AdapterNode &node) {
  const Json *halfToFloat = takeArgument(node.arguments, "half_to_float");
  if (halfToFloat && halfToFloat->at("as_bool").get<bool>())
    node.attributes.set("dtype", TypeAttr::get(Float32Type::get(node.ctx)));
  return success();
}

/// pow's second argument is called `exponent` in the schema, `other` on tgc.pow.
static LogicalResult exponentAsOther(AdapterNode &node) {
  for (NodeArgument &argument : node.arguments)
    if (argument.name == "exponent")
      argument.name = "other";
  return success();
}

/// var.dim(self, dim, unbiased=True, keepdim): `unbiased` is correction 1 (else 0).
static LogicalResult unbiasedAsCorrection(AdapterNode &node) {
  const Json *unbiased = takeArgument(node.arguments, "unbiased");
  bool isUnbiased = !unbiased || unbiased->at("as_bool").get<bool>();
  node.attributes.set("correction",
                      IntegerAttr::get(IntegerType::get(node.ctx, 64), isUnbiased ? 1 : 0));
  return success();
}

/// The dtype of the result, as the export computed it (defaults included).
static LogicalResult dtypeFromOutput(AdapterNode &node) {
  FailureOr<TensorMeta> meta = firstOutputMeta(node);
  if (failed(meta))
    return failure();
  takeArgument(node.arguments, "dtype");
  node.attributes.set("dtype", TypeAttr::get(meta->dtype));
  return success();
}

/// ones/zeros/empty and their `_like` forms: tgc.full(_like) with a fill value.
template <int64_t fill> static LogicalResult filledWith(AdapterNode &node) {
  node.attributes.set("fill_value", IntegerAttr::get(IntegerType::get(node.ctx, 64), fill));
  return dtypeFromOutput(node);
}

/// new_ones/new_zeros(self, size): `self` only gives the default dtype.
template <int64_t fill> static LogicalResult newFilledWith(AdapterNode &node) {
  takeArgument(node.arguments, "self");
  return filledWith<fill>(node);
}

/// type_as(self, other): a conversion to `other`'s dtype.
static LogicalResult typeAsOutput(AdapterNode &node) {
  takeArgument(node.arguments, "other");
  return dtypeFromOutput(node);
}

static const NodeAdapter kNodeAdapters[] = {
    {"aten.split.Tensor", "", splitSizesFromOutputs},
    {"aten.chunk.default", "tgc.split", splitSizesFromOutputs},
    {"aten.max_pool2d_with_indices.default", "", setWithIndices},
    {"aten.any.dim", "", dimAsList},
    {"aten.all.dim", "", dimAsList},
    {"aten.flatten.using_ints", "tgc.view", viewToOutputSizes},
    {"aten.unflatten.int", "tgc.view", viewToOutputSizes},
    {"aten.reshape.default", "tgc.view", viewToOutputSizes},
    {"aten._native_batch_norm_legit_functional.default", "", setFunctional},
    {"aten._native_batch_norm_legit_no_training.default", "", setEvalMode},
    {"aten.native_layer_norm.default", "", setNative},
    {"aten._softmax.default", "", halfToFloatAsDtype},
    {"aten._log_softmax.default", "", halfToFloatAsDtype},
    {"aten.pow.Tensor_Scalar", "", exponentAsOther},
    {"aten.pow.Tensor_Tensor", "", exponentAsOther},
    {"aten.pow.Scalar", "", exponentAsOther},
    {"aten.var.dim", "", unbiasedAsCorrection},
    {"aten.ones.default", "", filledWith<1>},
    {"aten.zeros.default", "", filledWith<0>},
    {"aten.empty.memory_format", "", filledWith<0>},
    {"aten.ones_like.default", "", filledWith<1>},
    {"aten.zeros_like.default", "", filledWith<0>},
    {"aten.empty_like.default", "", filledWith<0>},
    {"aten.new_ones.default", "", newFilledWith<1>},
    {"aten.new_zeros.default", "", newFilledWith<0>},
    {"aten.type_as.default", "", typeAsOutput},
};

const NodeAdapter *tgc::findNodeAdapter(llvm::StringRef target) {
  const auto *it =
      llvm::find_if(kNodeAdapters, [&](const NodeAdapter &a) { return a.target == target; });
  return it == std::end(kNodeAdapters) ? nullptr : it;
}

bool tgc::isSymbolicIntTarget(llvm::StringRef target) {
  static constexpr llvm::StringLiteral kTargets[] = {
      "aten.sym_size.int",      "aten.sym_stride.int",
      "aten.sym_numel.default", "aten.sym_storage_offset.default",
      "_operator.add",          "_operator.sub",
      "_operator.mul",          "_operator.floordiv",
      "_operator.mod",          "_operator.neg",
      "_operator.pos"};
  return llvm::is_contained(kTargets, target);
}

bool tgc::isIgnorableArgument(const NodeArgument &argument) {
  static constexpr llvm::StringLiteral kIgnorable[] = {
      "layout",        "pin_memory", "memory_format", "non_blocking", "cudnn_enable",
      "cudnn_enabled", "implicit",   "device",        "copy"};
  if (llvm::is_contained(kIgnorable, argument.name))
    return true;
  // half_to_float=False is the default behaviour; True changes the result dtype.
  return argument.name == "half_to_float" && argument.value->contains("as_bool") &&
         argument.value->at("as_bool").is_boolean() && !argument.value->at("as_bool").get<bool>();
}
