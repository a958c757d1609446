// Building tgc ops from ATen calls: what the .pt2 reader and the bytecode interpreter share.
//
// A call maps onto a tgc op generically through AtenOpInterface: operands and attributes
// are named after the ATen schema's arguments, and the op's own property conversion and
// type inference decide which attribute form fits and what the results are.
// NodeAdapters.cpp holds the few targets that need their arguments reshaped.
#include "AtenCall.h"

#include "Composites.h"
#include "NodeAdapters.h"
#include "SymbolicSizes.h"
#include "tgc/Dialect/TgcDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>

using namespace mlir;
using namespace tgc;
using namespace tgc::frontend;

//===----------------------------------------------------------------------===//
// AtenValue
//===----------------------------------------------------------------------===//

AtenValue AtenValue::tensor(Value v) {
  AtenValue value;
  value.kind = Kind::Tensor;
  value.values = {v};
  return value;
}

AtenValue AtenValue::tensors(ArrayRef<Value> vs) {
  AtenValue value;
  value.kind = Kind::Tensors;
  value.values.assign(vs.begin(), vs.end());
  return value;
}

AtenValue AtenValue::integer(AffineExpr size) {
  AtenValue value;
  value.kind = Kind::Int;
  value.size = size;
  return value;
}

AtenValue AtenValue::floating(double f) {
  AtenValue value;
  value.kind = Kind::Float;
  value.floatValue = f;
  return value;
}

AtenValue AtenValue::boolean(bool b) {
  AtenValue value;
  value.kind = Kind::Bool;
  value.boolValue = b;
  return value;
}

AtenValue AtenValue::str(llvm::StringRef s) {
  AtenValue value;
  value.kind = Kind::String;
  value.string = s.str();
  return value;
}

AtenValue AtenValue::ints(ArrayRef<AffineExpr> sizes) {
  AtenValue value;
  value.kind = Kind::Ints;
  value.sizes.assign(sizes.begin(), sizes.end());
  return value;
}

AtenValue AtenValue::floatList(ArrayRef<double> fs) {
  AtenValue value;
  value.kind = Kind::Floats;
  value.floats.assign(fs.begin(), fs.end());
  return value;
}

AtenValue AtenValue::boolList(ArrayRef<bool> bs) {
  AtenValue value;
  value.kind = Kind::Bools;
  value.bools.assign(bs.begin(), bs.end());
  return value;
}

AtenValue AtenValue::dtype(Type t) {
  AtenValue value;
  value.kind = Kind::DType;
  value.type = t;
  return value;
}

AtenValue AtenValue::device(Attribute d) {
  AtenValue value;
  value.kind = Kind::Device;
  value.attribute = d;
  return value;
}

AtenValue AtenValue::memoryFormat(MemoryFormat format) {
  AtenValue value;
  value.kind = Kind::MemoryFormat;
  value.string = stringifyMemoryFormat(format).str();
  return value;
}

/// How diagnostics name a value's kind.
static llvm::StringRef kindName(AtenValue::Kind kind) {
  switch (kind) {
  case AtenValue::Kind::None:
    return "None";
  case AtenValue::Kind::Tensor:
    return "Tensor";
  case AtenValue::Kind::Tensors:
    return "Tensor[]";
  case AtenValue::Kind::Int:
    return "int";
  case AtenValue::Kind::Float:
    return "float";
  case AtenValue::Kind::Bool:
    return "bool";
  case AtenValue::Kind::String:
    return "str";
  case AtenValue::Kind::Ints:
    return "int[]";
  case AtenValue::Kind::Floats:
    return "float[]";
  case AtenValue::Kind::Bools:
    return "bool[]";
  case AtenValue::Kind::DType:
    return "ScalarType";
  case AtenValue::Kind::Device:
    return "Device";
  case AtenValue::Kind::MemoryFormat:
    return "MemoryFormat";
  }
  return "?";
}

//===----------------------------------------------------------------------===//
// AtenCallBuilder
//===----------------------------------------------------------------------===//

namespace {

/// A call ready to become an op: its arguments resolved into MLIR values and attribute
/// candidates. Nothing is created before all of it is known to fit, so no half-built
/// op is left behind.
struct OpSpec {
  OperationName name;
  SmallVector<Value> operands;
  SmallVector<int32_t> segmentSizes;
  /// Per attribute, the forms a value may take (an int may be an I64Attr or a
  /// one-element #tgc.shape); the first one the op's properties accept wins.
  SmallVector<std::pair<std::string, SmallVector<Attribute>>> attributes;
  NamedAttrList fixedAttributes;
};

/// Turns one call into an op: the generic mapping through AtenOpInterface.
class OpSpecBuilder {
public:
  OpSpecBuilder(OpBuilder &builder, Location loc, const AtenCallBuilder::ErrorFn &emitError)
      : builder(builder), ctx(builder.getContext()), loc(loc), emitError(emitError) {}

  FailureOr<OpSpec> prepare(OperationName opName, llvm::StringRef target,
                            std::vector<AtenArgument> arguments, NamedAttrList fixed);
  FailureOr<Operation *> create(OpSpec &spec, size_t minResults);
  /// Erases the scalar constants made for a call that failed.
  void eraseConstants() {
    for (Operation *op : llvm::reverse(pendingConstants))
      op->erase();
    pendingConstants.clear();
  }

private:
  FailureOr<SmallVector<Value>> operandValues(const AtenValue &value, llvm::StringRef name);
  FailureOr<SmallVector<Attribute>> attributeCandidates(const AtenValue &value,
                                                        llvm::StringRef name);

  OpBuilder &builder;
  MLIRContext *ctx;
  Location loc;
  const AtenCallBuilder::ErrorFn &emitError;
  /// Scalars made operands, created only once the op is known to fit.
  SmallVector<Operation *> pendingConstants;
};

} // namespace

/// The operand(s) a value stands for: tensors, none (an absent optional tensor), or a
/// Python scalar given to a Tensor parameter (an arith.constant).
FailureOr<SmallVector<Value>> OpSpecBuilder::operandValues(const AtenValue &value,
                                                           llvm::StringRef name) {
  auto constant = [&](TypedAttr attr) -> SmallVector<Value> {
    Operation *op = arith::ConstantOp::create(builder, loc, attr);
    pendingConstants.push_back(op);
    return {op->getResult(0)};
  };
  switch (value.kind) {
  case AtenValue::Kind::Tensor:
  case AtenValue::Kind::Tensors:
    return SmallVector<Value>(value.values);
  case AtenValue::Kind::None:
    return SmallVector<Value>{};
  case AtenValue::Kind::Int:
    if (!value.values.empty()) // computed at run time (an integer item())
      return SmallVector<Value>(value.values);
    if (std::optional<int64_t> c = getConstantSize(value.size))
      return constant(builder.getI64IntegerAttr(*c));
    // A size computed from symbols (a .pt2 node's sym_size result): read from the
    // graph inputs that have them.
    if (FailureOr<Value> computed = materializeSize(builder, loc, value.size, {}, emitError);
        succeeded(computed))
      return SmallVector<Value>{*computed};
    return failure();
  case AtenValue::Kind::Bool:
    return constant(builder.getBoolAttr(value.boolValue));
  case AtenValue::Kind::Float:
    if (!value.values.empty()) // computed at run time (item())
      return SmallVector<Value>(value.values);
    return constant(builder.getF64FloatAttr(value.floatValue));
  default:
    break;
  }
  return emitError() << "argument '" << name << "' of kind '" << kindName(value.kind)
                     << "' cannot be a tensor operand";
}

/// The attribute forms a value may take, most natural first.
FailureOr<SmallVector<Attribute>> OpSpecBuilder::attributeCandidates(const AtenValue &value,
                                                                     llvm::StringRef name) {
  // A size list is a #tgc.shape, or a plain array where every size is a constant.
  auto listForms = [&](ArrayRef<AffineExpr> sizes) {
    SmallVector<Attribute> forms = {ShapeAttr::get(ctx, sizes)};
    SmallVector<int64_t> constants;
    for (AffineExpr size : sizes)
      if (std::optional<int64_t> c = getConstantSize(size))
        constants.push_back(*c);
    if (constants.size() == sizes.size())
      forms.push_back(builder.getDenseI64ArrayAttr(constants));
    return forms;
  };
  switch (value.kind) {
  case AtenValue::Kind::Int: {
    if (!value.values.empty())
      return emitError() << "argument '" << name
                         << "' is an integer computed at run time; tgc needs a constant here";
    SmallVector<Attribute> forms;
    if (std::optional<int64_t> c = getConstantSize(value.size))
      forms = {builder.getI64IntegerAttr(*c), builder.getF64FloatAttr(static_cast<double>(*c))};
    llvm::append_range(forms, listForms({value.size}));
    return forms;
  }
  case AtenValue::Kind::Float:
    if (!value.values.empty())
      return emitError() << "argument '" << name
                         << "' is a float computed at run time; tgc needs a constant here";
    return SmallVector<Attribute>{builder.getF64FloatAttr(value.floatValue)};
  case AtenValue::Kind::Bool:
    return SmallVector<Attribute>{builder.getBoolAttr(value.boolValue)};
  case AtenValue::Kind::String:
  case AtenValue::Kind::MemoryFormat:
    return SmallVector<Attribute>{builder.getStringAttr(value.string)};
  case AtenValue::Kind::Ints:
    return listForms(value.sizes);
  case AtenValue::Kind::Floats:
    return SmallVector<Attribute>{builder.getDenseF64ArrayAttr(value.floats)};
  case AtenValue::Kind::Bools:
    return SmallVector<Attribute>{builder.getDenseBoolArrayAttr(value.bools)};
  case AtenValue::Kind::DType:
    return SmallVector<Attribute>{TypeAttr::get(value.type)};
  case AtenValue::Kind::Device:
    // The CPU is what an absent device means, as in tensor types.
    return value.attribute ? SmallVector<Attribute>{value.attribute} : SmallVector<Attribute>{};
  case AtenValue::Kind::None:
    return SmallVector<Attribute>{};
  default:
    break;
  }
  return emitError() << "argument '" << name << "' of kind '" << kindName(value.kind)
                     << "' is not supported";
}

FailureOr<OpSpec> OpSpecBuilder::prepare(OperationName opName, llvm::StringRef target,
                                         std::vector<AtenArgument> arguments, NamedAttrList fixed) {
  auto *aten = opName.getInterface<AtenOpInterface>();
  if (!aten)
    return emitError() << opName << " does not describe its ATen arguments";
  OpSpec spec{opName, {}, {}, {}, std::move(fixed)};
  auto take = [&](llvm::StringRef name) -> std::optional<AtenValue> {
    auto it = llvm::find_if(arguments, [&](const AtenArgument &a) { return a.name == name; });
    if (it == arguments.end())
      return std::nullopt;
    AtenValue value = std::move(it->value);
    arguments.erase(it);
    return value;
  };
  // Operands, in the op's order (= schema order); omitted ones are absent optionals.
  for (llvm::StringRef operand : aten->getAtenOperands()) {
    bool optional = operand.consume_back("?");
    bool variadic = operand.consume_back("[]");
    std::optional<AtenValue> argument = take(operand);
    FailureOr<SmallVector<Value>> operands =
        argument ? operandValues(*argument, operand) : SmallVector<Value>{};
    if (failed(operands))
      return failure();
    if (operands->empty() && !optional && !variadic)
      return emitError() << target << " without argument '" << operand << "' is not supported ("
                         << opName << " needs it)";
    if (operands->size() > 1 && !variadic)
      return emitError() << "argument '" << operand << "' of " << target
                         << " must be one tensor, got " << operands->size();
    llvm::append_range(spec.operands, *operands);
    spec.segmentSizes.push_back(operands->size());
  }
  ArrayRef<StringAttr> attrNames = opName.getAttributeNames();
  for (const AtenArgument &argument : arguments) {
    bool declared = llvm::any_of(attrNames, [&](StringAttr n) { return n == argument.name; });
    if (!declared && isIgnorableArgument(argument))
      continue;
    if (!declared)
      return emitError() << "argument '" << argument.name << "' of " << target
                         << " has no counterpart on " << opName;
    FailureOr<SmallVector<Attribute>> forms = attributeCandidates(argument.value, argument.name);
    if (failed(forms))
      return failure();
    if (!forms->empty())
      spec.attributes.push_back({argument.name, std::move(*forms)});
  }
  for (llvm::StringRef required : aten->getAtenRequiredAttrNames()) {
    bool given = spec.fixedAttributes.get(required) ||
                 llvm::any_of(spec.attributes, [&](auto &a) { return a.first == required; });
    if (!given)
      return emitError() << target << " without argument '" << required << "' is not supported ("
                         << opName << " needs it)";
  }
  return spec;
}

/// Runs `fn`, keeping the first diagnostic it emits in `message` instead of reporting
/// it, so that the caller can report it once, naming the call.
template <typename Fn>
static LogicalResult captureDiagnostic(MLIRContext *ctx, std::string &message, Fn fn) {
  ScopedDiagnosticHandler handler(ctx, [&](Diagnostic &diag) {
    if (message.empty())
      message = diag.str();
    return success();
  });
  return fn();
}

/// Result types at the capture level: creation ops infer value tensors, but every
/// tensor of a captured program is a reference with a layout.
static Type toCaptureLevel(Type type) {
  auto tensor = llvm::dyn_cast<BaseTensorType>(type);
  if (!tensor || tensor.isRef())
    return type;
  TensorMeta meta = tensor.getMeta();
  if (meta.strides.empty())
    meta.strides = TensorMeta::contiguousStrides(meta.sizes, type.getContext());
  return BaseTensorType::get(type.getContext(), /*isRef=*/true, meta);
}

FailureOr<Operation *> OpSpecBuilder::create(OpSpec &spec, size_t minResults) {
  // A detached probe holds the operands and properties so that the op's own property
  // conversion decides which attribute form fits, and inference sees exactly what the
  // op will hold. It never has results, so nothing can use it.
  Operation *probe = Operation::create(loc, spec.name, {}, spec.operands, NamedAttrList(),
                                       OpaqueProperties(nullptr), {}, 0);
  auto discardProbe = [&]() {
    probe->destroy();
    return emitError();
  };
  if (spec.name.hasTrait<mlir::OpTrait::AttrSizedOperandSegments>())
    probe->setAttr("operandSegmentSizes", builder.getDenseI32ArrayAttr(spec.segmentSizes));
  for (NamedAttribute attr : spec.fixedAttributes)
    probe->setAttr(attr.getName(), attr.getValue());
  for (auto &[name, forms] : spec.attributes) {
    bool accepted = llvm::any_of(forms, [&, &name = name](Attribute form) {
      probe->setAttr(name, form);
      std::optional<Attribute> held = probe->getInherentAttr(name);
      return held && *held == form;
    });
    if (!accepted)
      return discardProbe() << "argument '" << name << "' has a form " << spec.name
                            << " does not accept";
  }
  NamedAttrList attrs(probe->getAttrDictionary());
  std::string message;
  SmallVector<Type> types;
  LogicalResult inferred = captureDiagnostic(ctx, message, [&]() -> LogicalResult {
    if (failed(spec.name.verifyInherentAttrs(attrs, [&]() { return mlir::emitError(loc); })))
      return failure();
    auto infer = llvm::dyn_cast<InferTypeOpInterface>(probe);
    if (!infer)
      return mlir::emitError(loc) << spec.name << " does not infer its result types";
    return infer.inferReturnTypes(ctx, loc, probe->getOperands(), probe->getRawDictionaryAttrs(),
                                  probe->getPropertiesStorage(), probe->getRegions(), types);
  });
  if (failed(inferred))
    return discardProbe() << message;
  if (types.size() < minResults)
    return discardProbe() << "the call uses " << minResults << " results but " << spec.name
                          << " has " << types.size();
  SmallVector<Type> resultTypes = llvm::map_to_vector(types, toCaptureLevel);
  Operation *op = Operation::create(loc, spec.name, resultTypes, spec.operands,
                                    probe->getDiscardableAttrDictionary(),
                                    probe->getPropertiesStorage(), {}, 0);
  probe->destroy();
  builder.insert(op);
  if (succeeded(captureDiagnostic(ctx, message, [&] { return verify(op); })))
    return op;
  op->erase();
  return emitError() << message;
}

std::optional<OperationName> AtenCallBuilder::lookupAtenOp(llvm::StringRef target) {
  MLIRContext *ctx = builder.getContext();
  if (atenOps.empty())
    for (RegisteredOperationName name : ctx->getRegisteredOperations())
      if (auto *aten = name.getInterface<AtenOpInterface>())
        for (llvm::StringRef atenTarget : aten->getAtenTargets())
          atenOps.try_emplace(atenTarget, name);
  auto it = atenOps.find(target);
  if (it == atenOps.end())
    return std::nullopt;
  return it->second;
}

bool AtenCallBuilder::hasOp(llvm::StringRef target) {
  const NodeAdapter *adapter = findNodeAdapter(target);
  return (adapter && !adapter->opName.empty()) || lookupAtenOp(target);
}

/// The functional overload of the in-place `target` (`aten.addcmul_.default` ->
/// `aten.addcmul.default`); none for other targets and the dunder ones (`__iand__`).
static std::optional<std::string> functionalOfInPlace(llvm::StringRef target) {
  auto [ns, rest] = target.split('.');
  auto [name, overload] = rest.split('.');
  if (!name.ends_with("_") || name.ends_with("__") || overload.empty())
    return std::nullopt;
  return (ns + "." + name.drop_back() + "." + overload).str();
}

/// Whether an in-place op may write a result of dtype `from` into a tensor of dtype
/// `to` (c10::canCast): not floating point into an integer, not a complex number into a
/// real one, not a number into a bool.
static bool canCastInPlace(Type from, Type to) {
  if (isa<FloatType>(from) && isa<IntegerType>(to))
    return false;
  if (isa<ComplexType>(from) && !isa<ComplexType>(to))
    return false;
  return !(to.isInteger(1) && !from.isInteger(1));
}

/// Fails, as ATen does, unless `result` can be written into `destination` (an in-place
/// op's `self`, an out= op's `out`) as it is: the same sizes and a dtype it casts to.
static LogicalResult checkWritable(Value result, Value destination,
                                   const AtenCallBuilder::ErrorFn &emitError) {
  auto from = cast<BaseTensorType>(result.getType());
  auto to = cast<BaseTensorType>(destination.getType());
  if (from.getSizes() != to.getSizes()) {
    auto shape = [](ArrayRef<AffineExpr> sizes) {
      std::string text;
      llvm::raw_string_ostream os(text);
      os << "[";
      llvm::interleaveComma(sizes, os);
      os << "]";
      return text;
    };
    return emitError() << "output with shape " << shape(to.getSizes())
                       << " doesn't match the broadcast shape " << shape(from.getSizes());
  }
  if (!canCastInPlace(from.getDtype(), to.getDtype()))
    return emitError() << "result type " << from.getDtype()
                       << " can't be cast to the desired output type " << to.getDtype();
  return success();
}

/// The composite of `target` in a composite library (Composites.h), or null.
static LibraryComposite findLibraryComposite(llvm::StringRef target) {
  if (LibraryComposite composite = findSequenceComposite(target))
    return composite;
  return findShapeComposite(target);
}

bool AtenCallBuilder::supports(llvm::StringRef target) {
  if (const AtenAlias *alias = findAtenAlias(target))
    target = alias->target;
  if (hasOp(target) || functionalOverload(target) || findComposite(target) ||
      findMultiComposite(target) || findLibraryComposite(target))
    return true;
  std::optional<std::string> functional = functionalOfInPlace(target);
  return functional && supports(*functional);
}

/// The builder `table` lists for `target`, or null.
template <typename Builder, size_t N>
static Builder lookupBuilder(const std::pair<llvm::StringLiteral, Builder> (&table)[N],
                             llvm::StringRef target) {
  for (const auto &[name, builder] : table)
    if (name == target)
      return builder;
  return nullptr;
}

AtenCallBuilder::CompositeBuilder AtenCallBuilder::findComposite(llvm::StringRef target) {
  static const std::pair<llvm::StringLiteral, CompositeBuilder> kComposites[] = {
      {"aten.softplus.default", &AtenCallBuilder::buildSoftplus},
      {"aten.im2col.default", &AtenCallBuilder::buildIm2col},
      {"aten.take.default", &AtenCallBuilder::buildTake},
      {"aten.max_pool1d.default", &AtenCallBuilder::buildMaxPool1d},
      {"aten.uniform_.default", &AtenCallBuilder::buildRandomFill},
      {"aten.normal_.default", &AtenCallBuilder::buildRandomFill},
      {"aten.exponential_.default", &AtenCallBuilder::buildRandomFill},
      {"aten.narrow.default", &AtenCallBuilder::buildNarrow},
      {"aten.narrow_copy.default", &AtenCallBuilder::buildNarrow},
      {"aten.unfold.default", &AtenCallBuilder::buildUnfold},
      {"aten.std.dim", &AtenCallBuilder::buildStd},
      {"aten.std.correction", &AtenCallBuilder::buildStd},
      {"aten.std.default", &AtenCallBuilder::buildStd},
      {"aten.outer.default", &AtenCallBuilder::buildOuter},
      {"aten.logsumexp.default", &AtenCallBuilder::buildLogsumexp},
      {"aten.nan_to_num.default", &AtenCallBuilder::buildNanToNum},
      {"aten.mish.default", &AtenCallBuilder::buildMish},
      {"aten.log_sigmoid.default", &AtenCallBuilder::buildLogSigmoid},
      {"aten.fmax.default", &AtenCallBuilder::buildNanExtremum},
      {"aten.fmin.default", &AtenCallBuilder::buildNanExtremum},
      {"aten.isfinite.default", &AtenCallBuilder::buildIsfinite},
      {"aten.nansum.default", &AtenCallBuilder::buildNansum},
      {"aten.adaptive_max_pool2d.default", &AtenCallBuilder::buildAdaptiveMaxPool2d},
      {"aten.rms_norm.default", &AtenCallBuilder::buildRmsNorm},
      {"aten.glu.default", &AtenCallBuilder::buildGlu},
      {"aten.prelu.default", &AtenCallBuilder::buildPrelu},
      {"aten.one_hot.default", &AtenCallBuilder::buildOneHot},
      {"aten.cosine_similarity.default", &AtenCallBuilder::buildCosineSimilarity},
      {"aten.pixel_shuffle.default", &AtenCallBuilder::buildPixelShuffle},
      {"aten.pixel_unshuffle.default", &AtenCallBuilder::buildPixelShuffle},
      {"aten.channel_shuffle.default", &AtenCallBuilder::buildPixelShuffle},
      {"aten.native_channel_shuffle.default", &AtenCallBuilder::buildPixelShuffle},
      {"aten.instance_norm.default", &AtenCallBuilder::buildInstanceNorm},
      {"aten.threshold.default", &AtenCallBuilder::buildThreshold},
      {"aten.feature_dropout.default", &AtenCallBuilder::buildFeatureDropout},
      {"aten.alpha_dropout.default", &AtenCallBuilder::buildFeatureDropout},
      {"aten.feature_alpha_dropout.default", &AtenCallBuilder::buildFeatureDropout},
      {"aten.hardshrink.default", &AtenCallBuilder::buildShrink},
      {"aten.softshrink.default", &AtenCallBuilder::buildShrink},
      {"aten.pairwise_distance.default", &AtenCallBuilder::buildPairwiseDistance},
      {"aten.soft_margin_loss.default", &AtenCallBuilder::buildLoss},
      {"aten.kl_div.default", &AtenCallBuilder::buildLoss},
      {"aten.hinge_embedding_loss.default", &AtenCallBuilder::buildLoss},
      {"aten.margin_ranking_loss.default", &AtenCallBuilder::buildLoss},
      {"aten.poisson_nll_loss.default", &AtenCallBuilder::buildLoss},
      {"aten.cosine_embedding_loss.default", &AtenCallBuilder::buildLoss},
      {"aten.triplet_margin_loss.default", &AtenCallBuilder::buildLoss},
      {"aten.eye.default", &AtenCallBuilder::buildEye},
      {"aten.eye.m", &AtenCallBuilder::buildEye},
      {"aten.rrelu.default", &AtenCallBuilder::buildRrelu},
      {"aten.lerp.Scalar", &AtenCallBuilder::buildPointwise},
      {"aten.lerp.Tensor", &AtenCallBuilder::buildPointwise},
      {"aten.addcmul.default", &AtenCallBuilder::buildPointwise},
      {"aten.addcdiv.default", &AtenCallBuilder::buildPointwise},
      {"aten.xlogy.Tensor", &AtenCallBuilder::buildPointwise},
      {"aten.xlogy.Scalar_Other", &AtenCallBuilder::buildPointwise},
      {"aten.copysign.Tensor", &AtenCallBuilder::buildPointwise},
      {"aten.copysign.Scalar", &AtenCallBuilder::buildPointwise},
      {"aten.frac.default", &AtenCallBuilder::buildPointwise},
      {"aten.deg2rad.default", &AtenCallBuilder::buildPointwise},
      {"aten.rad2deg.default", &AtenCallBuilder::buildPointwise},
      {"aten.signbit.default", &AtenCallBuilder::buildPointwise},
      {"aten.sinc.default", &AtenCallBuilder::buildPointwise},
      {"aten.logaddexp.default", &AtenCallBuilder::buildPointwise},
      {"aten.logaddexp2.default", &AtenCallBuilder::buildPointwise},
      {"aten.logit.default", &AtenCallBuilder::buildPointwise},
      {"aten.hypot.default", &AtenCallBuilder::buildPointwise},
      {"aten.heaviside.default", &AtenCallBuilder::buildPointwise},
      {"aten.float_power.Tensor_Scalar", &AtenCallBuilder::buildPointwise},
      {"aten.float_power.Tensor_Tensor", &AtenCallBuilder::buildPointwise},
      {"aten.isclose.default", &AtenCallBuilder::buildPointwise},
      {"aten.trace.default", &AtenCallBuilder::buildMatrixOp},
      {"aten.diag.default", &AtenCallBuilder::buildMatrixOp},
      {"aten.rot90.default", &AtenCallBuilder::buildMatrixOp},
      {"aten.tile.default", &AtenCallBuilder::buildMatrixOp},
      {"aten.count_nonzero.default", &AtenCallBuilder::buildMatrixOp},
      {"aten.count_nonzero.dim_IntList", &AtenCallBuilder::buildMatrixOp},
      {"aten.dist.default", &AtenCallBuilder::buildMatrixOp},
      {"aten.addmv.default", &AtenCallBuilder::buildMatrixOp},
      {"aten.special_xlog1py.default", &AtenCallBuilder::buildPointwise},
      {"aten.special_xlog1py.other_scalar", &AtenCallBuilder::buildPointwise},
      {"aten.sgn.default", &AtenCallBuilder::buildMathOp},
      {"aten.erfinv.default", &AtenCallBuilder::buildMathOp},
      {"aten.kron.default", &AtenCallBuilder::buildMathOp},
      {"aten.cdist.default", &AtenCallBuilder::buildMathOp},
      {"aten._cdist_forward.default", &AtenCallBuilder::buildMathOp},
      {"aten.linalg_cross.default", &AtenCallBuilder::buildMathOp},
      {"aten.cross.default", &AtenCallBuilder::buildMathOp},
      {"aten.renorm.default", &AtenCallBuilder::buildMathOp},
      {"aten.bucketize.Tensor", &AtenCallBuilder::buildMathOp},
      {"aten.searchsorted.Tensor", &AtenCallBuilder::buildMathOp},
      {"aten.round.decimals", &AtenCallBuilder::buildMathOp},
      {"aten.linalg_matrix_norm.default", &AtenCallBuilder::buildMathOp},
      {"aten.linalg_matrix_norm.str_ord", &AtenCallBuilder::buildMathOp},
      {"aten.linalg_norm.default", &AtenCallBuilder::buildMathOp},
      {"aten.linalg_norm.ord_str", &AtenCallBuilder::buildMathOp},
      {"aten.linspace.default", &AtenCallBuilder::buildMathOp}};
  return lookupBuilder(kComposites, target);
}

/// The target `target` stands for (an alias's: `aten.special_expit` -> `aten.sigmoid`),
/// with `arguments` renamed to its schema's names.
static llvm::StringRef resolveAlias(llvm::StringRef target, std::vector<AtenArgument> &arguments) {
  while (const AtenAlias *alias = findAtenAlias(target)) {
    for (AtenArgument &argument : arguments)
      for (auto [from, to] : alias->renames)
        if (!from.empty() && argument.name == from)
          argument.name = to.str();
    target = alias->target;
  }
  return target;
}

/// The layout a copy gets (the ops' `memory_format`, absent for contiguous_format):
/// where the call names none (or None), ATen's default: clone, to and the *_like
/// creations preserve their input's, contiguous() asks for contiguous_format.
/// preserve_format of a row-major (or value) tensor is contiguous_format too.
static void setCopyLayout(llvm::StringRef target, std::vector<AtenArgument> &arguments) {
  static constexpr llvm::StringLiteral kPreserving[] = {
      "aten.clone.default",      "aten.lift_fresh_copy.default", "aten._to_copy.default",
      "aten.to.dtype",           "aten.to.dtype_layout",         "aten.to.device",
      "aten.type_as.default",    "aten.full_like.default",       "aten.ones_like.default",
      "aten.zeros_like.default", "aten.empty_like.default"};
  bool preserving = llvm::is_contained(kPreserving, target);
  if (!preserving && target != "aten.contiguous.default")
    return;
  auto find = [&](llvm::StringRef name) {
    return llvm::find_if(arguments, [&](const AtenArgument &a) { return a.name == name; });
  };
  auto given = find("memory_format");
  std::optional<MemoryFormat> format;
  if (given != arguments.end() && given->value.kind == AtenValue::Kind::MemoryFormat)
    format = parseMemoryFormat(given->value.string);
  else if (given == arguments.end() || given->value.kind == AtenValue::Kind::None)
    format = preserving ? MemoryFormat::Preserve : MemoryFormat::Contiguous;
  if (!format)
    return; // not a memory format: the op's attribute refuses it
  if (*format == MemoryFormat::Preserve) {
    auto self = find("self");
    BaseTensorType type = self != arguments.end() && self->value.kind == AtenValue::Kind::Tensor
                              ? dyn_cast<BaseTensorType>(self->value.values.front().getType())
                              : BaseTensorType();
    if (type && (!type.isRef() || type.getMeta().strides.empty() ||
                 isContiguousAs(type.getSizes(), type.getMeta().strides, MemoryFormat::Contiguous)))
      format = MemoryFormat::Contiguous;
  }
  if (given != arguments.end())
    arguments.erase(given);
  if (*format != MemoryFormat::Contiguous)
    arguments.push_back({"memory_format", AtenValue::memoryFormat(*format)});
}

FailureOr<SmallVector<Value>> AtenCallBuilder::buildResults(Location loc, llvm::StringRef target,
                                                            std::vector<AtenArgument> arguments,
                                                            size_t minResults,
                                                            const ErrorFn &emitError,
                                                            ArrayRef<RecordedResult> recorded) {
  setCopyLayout(target, arguments);
  target = resolveAlias(target, arguments);
  if (MultiCompositeBuilder composite = findMultiComposite(target))
    return (this->*composite)(loc, target, std::move(arguments), emitError);
  if (LibraryComposite composite = findLibraryComposite(target))
    return composite(*this, loc, target, std::move(arguments), emitError);
  FailureOr<Operation *> op =
      build(loc, target, std::move(arguments), minResults, emitError, recorded);
  if (failed(op))
    return failure();
  return SmallVector<Value>((*op)->getResults());
}

FailureOr<Value> AtenCallBuilder::buildValue(Location loc, llvm::StringRef target,
                                             std::vector<AtenArgument> arguments,
                                             const ErrorFn &emitError) {
  FailureOr<Operation *> op = build(loc, target, std::move(arguments), 1, emitError);
  if (failed(op))
    return failure();
  return (*op)->getResult(0);
}

/// softplus(x, beta=1, threshold=20): x where beta x > threshold, else
/// log1p(exp(beta x)) / beta, as ATen computes it; its derivative is that of the ops.
FailureOr<Operation *> AtenCallBuilder::buildSoftplus(Location loc, llvm::StringRef target,
                                                      std::vector<AtenArgument> arguments,
                                                      const ErrorFn &emitError) {
  Value x;
  double beta = 1, threshold = 20;
  for (const AtenArgument &argument : arguments) {
    const AtenValue &value = argument.value;
    std::optional<double> number;
    if (value.kind == AtenValue::Kind::Float && value.values.empty())
      number = value.floatValue;
    else if (value.kind == AtenValue::Kind::Int && getConstantSize(value.size))
      number = static_cast<double>(*getConstantSize(value.size));
    if (argument.name == "self" && value.kind == AtenValue::Kind::Tensor)
      x = value.values.front();
    else if ((argument.name == "beta" || argument.name == "threshold") && number)
      (argument.name == "beta" ? beta : threshold) = *number;
    else
      return emitError() << "softplus: argument '" << argument.name
                         << "' must be a tensor (self) or a constant number";
  }
  if (!x)
    return emitError() << "softplus needs a tensor 'self'";
  if (beta == 0)
    return emitError() << "softplus's beta must not be 0";
  auto call = [&](llvm::StringRef callee, std::vector<AtenArgument> args) {
    return buildValue(loc, callee, std::move(args), emitError);
  };
  FailureOr<Value> scaled =
      beta == 1 ? FailureOr<Value>(x)
                : call("aten.mul.Tensor",
                       {{"self", AtenValue::tensor(x)}, {"other", AtenValue::floating(beta)}});
  if (failed(scaled))
    return failure();
  FailureOr<Value> exp = call("aten.exp.default", {{"self", AtenValue::tensor(*scaled)}});
  if (failed(exp))
    return failure();
  FailureOr<Value> soft = call("aten.log1p.default", {{"self", AtenValue::tensor(*exp)}});
  if (succeeded(soft) && beta != 1)
    soft = call("aten.div.Tensor",
                {{"self", AtenValue::tensor(*soft)}, {"other", AtenValue::floating(beta)}});
  if (failed(soft))
    return failure();
  FailureOr<Value> linear = call("aten.gt.Scalar", {{"self", AtenValue::tensor(*scaled)},
                                                    {"other", AtenValue::floating(threshold)}});
  if (failed(linear))
    return failure();
  return build(loc, "aten.where.self",
               {{"condition", AtenValue::tensor(*linear)},
                {"self", AtenValue::tensor(x)},
                {"other", AtenValue::tensor(*soft)}},
               1, emitError);
}

/// std.dim / std.correction: the square root of var with the same arguments (as ATen's
/// std is; its derivative is that of the ops).
FailureOr<Operation *> AtenCallBuilder::buildStd(Location loc, llvm::StringRef target,
                                                 std::vector<AtenArgument> arguments,
                                                 const ErrorFn &emitError) {
  // std(self, unbiased) is var.dim's, without a dim.
  llvm::StringRef overload = target.rsplit('.').second;
  std::string var = ("aten.var." + (overload == "default" ? "dim" : overload)).str();
  FailureOr<Value> variance = buildValue(loc, var, std::move(arguments), emitError);
  if (failed(variance))
    return failure();
  return build(loc, "aten.sqrt.default", {{"self", AtenValue::tensor(*variance)}}, 1, emitError);
}

/// outer(self [n], vec2 [m]): self[:, None] * vec2, [n, m].
FailureOr<Operation *> AtenCallBuilder::buildOuter(Location loc, llvm::StringRef target,
                                                   std::vector<AtenArgument> arguments,
                                                   const ErrorFn &emitError) {
  Value self, other;
  for (const AtenArgument &argument : arguments) {
    if (argument.value.kind != AtenValue::Kind::Tensor)
      return emitError() << "outer: argument '" << argument.name << "' must be a tensor";
    (argument.name == "self" ? self : other) = argument.value.values.front();
  }
  auto rank = [](Value v) { return llvm::cast<BaseTensorType>(v.getType()).getRank(); };
  if (!self || !other || rank(self) != 1 || rank(other) != 1)
    return emitError() << "outer needs two 1-d tensors";
  FailureOr<Value> column =
      buildValue(loc, "aten.unsqueeze.default",
                 {{"self", AtenValue::tensor(self)},
                  {"dim", AtenValue::integer(getAffineConstantExpr(1, builder.getContext()))}},
                 emitError);
  if (failed(column))
    return failure();
  return build(loc, "aten.mul.Tensor",
               {{"self", AtenValue::tensor(*column)}, {"other", AtenValue::tensor(other)}}, 1,
               emitError);
}

/// logsumexp(self, dim, keepdim=False) as ATen computes it: m = amax(self, dim) (0 where
/// it is infinite), log(sum(exp(self - m), dim)) + m; its derivative is that of the ops.
FailureOr<Operation *> AtenCallBuilder::buildLogsumexp(Location loc, llvm::StringRef target,
                                                       std::vector<AtenArgument> arguments,
                                                       const ErrorFn &emitError) {
  Value self;
  AtenValue dims = AtenValue::ints({});
  bool keepdim = false;
  for (const AtenArgument &argument : arguments) {
    const AtenValue &value = argument.value;
    if (argument.name == "self" && value.kind == AtenValue::Kind::Tensor)
      self = value.values.front();
    else if (argument.name == "dim" && value.kind == AtenValue::Kind::Ints)
      dims = value;
    else if (argument.name == "dim" && value.kind == AtenValue::Kind::Int)
      dims = AtenValue::ints({value.size});
    else if (argument.name == "keepdim" && value.kind == AtenValue::Kind::Bool)
      keepdim = value.boolValue;
    else
      return emitError() << "logsumexp: unsupported argument '" << argument.name << "'";
  }
  if (!self)
    return emitError() << "logsumexp needs a tensor 'self'";
  auto call = [&](llvm::StringRef callee, std::vector<AtenArgument> args) {
    return buildValue(loc, callee, std::move(args), emitError);
  };
  auto t = [](Value v) { return AtenValue::tensor(v); };
  FailureOr<Value> maxes =
      call("aten.amax.default",
           {{"self", t(self)}, {"dim", dims}, {"keepdim", AtenValue::boolean(true)}});
  if (failed(maxes))
    return failure();
  FailureOr<Value> infinite = call("aten.isinf.default", {{"self", t(*maxes)}});
  if (failed(infinite))
    return failure();
  FailureOr<Value> shift =
      call("aten.masked_fill.Scalar",
           {{"self", t(*maxes)}, {"mask", t(*infinite)}, {"value", AtenValue::floating(0)}});
  if (failed(shift))
    return failure();
  FailureOr<Value> shifted = call("aten.sub.Tensor", {{"self", t(self)}, {"other", t(*shift)}});
  FailureOr<Value> exps = failed(shifted) ? FailureOr<Value>(failure())
                                          : call("aten.exp.default", {{"self", t(*shifted)}});
  if (failed(exps))
    return failure();
  AtenValue keep = AtenValue::boolean(keepdim);
  FailureOr<Value> sums =
      call("aten.sum.dim_IntList", {{"self", t(*exps)}, {"dim", dims}, {"keepdim", keep}});
  FailureOr<Value> logs =
      failed(sums) ? FailureOr<Value>(failure()) : call("aten.log.default", {{"self", t(*sums)}});
  // The maxes with the reduced dimensions dropped unless kept (a sum over size-1 dimensions).
  FailureOr<Value> offset =
      failed(logs)
          ? FailureOr<Value>(failure())
          : call("aten.sum.dim_IntList", {{"self", t(*shift)}, {"dim", dims}, {"keepdim", keep}});
  if (failed(offset))
    return failure();
  return build(loc, "aten.add.Tensor", {{"self", t(*logs)}, {"other", t(*offset)}}, 1, emitError);
}

/// nan_to_num(self, nan=0, posinf=max, neginf=lowest): NaN, +inf and -inf replaced (by
/// default with 0 and the dtype's largest and lowest finite values); integers unchanged.
FailureOr<Operation *> AtenCallBuilder::buildNanToNum(Location loc, llvm::StringRef target,
                                                      std::vector<AtenArgument> arguments,
                                                      const ErrorFn &emitError) {
  Value self;
  std::optional<double> replacement[3];
  for (const AtenArgument &argument : arguments) {
    const AtenValue &value = argument.value;
    int slot = argument.name == "nan"      ? 0
               : argument.name == "posinf" ? 1
               : argument.name == "neginf" ? 2
                                           : -1;
    if (argument.name == "self" && value.kind == AtenValue::Kind::Tensor)
      self = value.values.front();
    else if (slot >= 0 && value.kind == AtenValue::Kind::None)
      continue;
    else if (slot >= 0 && value.kind == AtenValue::Kind::Float && value.values.empty())
      replacement[slot] = value.floatValue;
    else if (slot >= 0 && value.kind == AtenValue::Kind::Int && getConstantSize(value.size))
      replacement[slot] = static_cast<double>(*getConstantSize(value.size));
    else
      return emitError() << "nan_to_num: argument '" << argument.name
                         << "' must be a tensor (self) or a constant number";
  }
  if (!self)
    return emitError() << "nan_to_num needs a tensor 'self'";
  auto floatType = dyn_cast<FloatType>(cast<BaseTensorType>(self.getType()).getDtype());
  if (!floatType) // integers and bools have no NaN or infinities
    return build(loc, "aten.clone.default", {{"self", AtenValue::tensor(self)}}, 1, emitError);
  const llvm::fltSemantics &semantics = floatType.getFloatSemantics();
  double largest = llvm::APFloat::getLargest(semantics).convertToDouble();
  double defaults[3] = {0, largest, -largest};
  Value result = self;
  for (int slot = 0; slot < 3; ++slot) {
    FailureOr<Value> mask =
        slot == 0
            ? buildValue(loc, "aten.isnan.default", {{"self", AtenValue::tensor(self)}}, emitError)
            : buildValue(loc, "aten.eq.Scalar",
                         {{"self", AtenValue::tensor(self)},
                          {"other", AtenValue::floating(slot == 1 ? INFINITY : -INFINITY)}},
                         emitError);
    if (failed(mask))
      return failure();
    AtenValue fill = AtenValue::floating(replacement[slot].value_or(defaults[slot]));
    if (slot == 2)
      return build(loc, "aten.masked_fill.Scalar",
                   {{"self", AtenValue::tensor(result)},
                    {"mask", AtenValue::tensor(*mask)},
                    {"value", fill}},
                   1, emitError);
    FailureOr<Value> filled = buildValue(
        loc, "aten.masked_fill.Scalar",
        {{"self", AtenValue::tensor(result)}, {"mask", AtenValue::tensor(*mask)}, {"value", fill}},
        emitError);
    if (failed(filled))
      return failure();
    result = *filled;
  }
  llvm_unreachable("the loop returns at its last slot");
}

/// The tensor `self`, the only argument of a unary composite named `name`.
static FailureOr<Value> unaryOperand(llvm::StringRef name, llvm::ArrayRef<AtenArgument> arguments,
                                     const AtenCallBuilder::ErrorFn &emitError) {
  Value self;
  for (const AtenArgument &argument : arguments) {
    if (argument.name != "self" || argument.value.kind != AtenValue::Kind::Tensor)
      return emitError() << name << ": unsupported argument '" << argument.name << "'";
    self = argument.value.values.front();
  }
  if (!self)
    return emitError() << name << " needs a tensor 'self'";
  return self;
}

/// mish(x) = x tanh(softplus(x)), as ATen computes it (x tanh(log1p(exp(x)))); softplus's
/// threshold (x above 20) changes no f32 result, since tanh is then 1, and keeps the
/// derivative finite where exp(x) overflows.
FailureOr<Operation *> AtenCallBuilder::buildMish(Location loc, llvm::StringRef target,
                                                  std::vector<AtenArgument> arguments,
                                                  const ErrorFn &emitError) {
  FailureOr<Value> x = unaryOperand("mish", arguments, emitError);
  if (failed(x))
    return failure();
  auto t = [](Value v) { return AtenValue::tensor(v); };
  FailureOr<Value> soft = buildValue(loc, "aten.softplus.default", {{"self", t(*x)}}, emitError);
  FailureOr<Value> tanh =
      failed(soft) ? FailureOr<Value>(failure())
                   : buildValue(loc, "aten.tanh.default", {{"self", t(*soft)}}, emitError);
  if (failed(tanh))
    return failure();
  return build(loc, "aten.mul.Tensor", {{"self", t(*x)}, {"other", t(*tanh)}}, 1, emitError);
}

/// log_sigmoid(x) = min(x, 0) - log1p(exp(-|x|)), ATen's stable form.
FailureOr<Operation *> AtenCallBuilder::buildLogSigmoid(Location loc, llvm::StringRef target,
                                                        std::vector<AtenArgument> arguments,
                                                        const ErrorFn &emitError) {
  FailureOr<Value> x = unaryOperand("log_sigmoid", arguments, emitError);
  if (failed(x))
    return failure();
  auto t = [](Value v) { return AtenValue::tensor(v); };
  auto call = [&](llvm::StringRef callee, std::vector<AtenArgument> args) {
    return buildValue(loc, callee, std::move(args), emitError);
  };
  FailureOr<Value> low =
      call("aten.clamp.default",
           {{"self", t(*x)}, {"min", AtenValue::none()}, {"max", AtenValue::floating(0)}});
  FailureOr<Value> abs = failed(low) ? low : call("aten.abs.default", {{"self", t(*x)}});
  FailureOr<Value> neg = failed(abs) ? abs : call("aten.neg.default", {{"self", t(*abs)}});
  FailureOr<Value> exp = failed(neg) ? neg : call("aten.exp.default", {{"self", t(*neg)}});
  FailureOr<Value> log = failed(exp) ? exp : call("aten.log1p.default", {{"self", t(*exp)}});
  if (failed(log))
    return failure();
  return build(loc, "aten.sub.Tensor", {{"self", t(*low)}, {"other", t(*log)}}, 1, emitError);
}

/// fmax(a, b) / fmin(a, b): the larger (smaller) of the two, or the one that is not NaN
/// (NaN where both are): a where a >= b (a <= b) or b is NaN, else b. Types promote as
/// in `where`. The derivative goes to the chosen operand (ATen's gives a tie's to both).
FailureOr<Operation *> AtenCallBuilder::buildNanExtremum(Location loc, llvm::StringRef target,
                                                         std::vector<AtenArgument> arguments,
                                                         const ErrorFn &emitError) {
  bool isMax = target == "aten.fmax.default";
  llvm::StringRef name = isMax ? "fmax" : "fmin";
  Value self, other;
  for (const AtenArgument &argument : arguments) {
    if (argument.value.kind != AtenValue::Kind::Tensor ||
        (argument.name != "self" && argument.name != "other"))
      return emitError() << name << ": argument '" << argument.name << "' must be a tensor";
    (argument.name == "self" ? self : other) = argument.value.values.front();
  }
  if (!self || !other)
    return emitError() << name << " needs tensors 'self' and 'other'";
  auto t = [](Value v) { return AtenValue::tensor(v); };
  auto call = [&](llvm::StringRef callee, std::vector<AtenArgument> args) {
    return buildValue(loc, callee, std::move(args), emitError);
  };
  FailureOr<Value> ordered =
      call(isMax ? "aten.ge.Tensor" : "aten.le.Tensor", {{"self", t(self)}, {"other", t(other)}});
  FailureOr<Value> nan =
      failed(ordered) ? ordered : call("aten.isnan.default", {{"self", t(other)}});
  FailureOr<Value> keep =
      failed(nan) ? nan
                  : call("aten.logical_or.default", {{"self", t(*ordered)}, {"other", t(*nan)}});
  if (failed(keep))
    return failure();
  return build(loc, "aten.where.self",
               {{"condition", t(*keep)}, {"self", t(self)}, {"other", t(other)}}, 1, emitError);
}

/// isfinite(x): x == x and |x| != inf for floating point; every element of an integer
/// or bool tensor (x == x).
FailureOr<Operation *> AtenCallBuilder::buildIsfinite(Location loc, llvm::StringRef target,
                                                      std::vector<AtenArgument> arguments,
                                                      const ErrorFn &emitError) {
  FailureOr<Value> x = unaryOperand("isfinite", arguments, emitError);
  if (failed(x))
    return failure();
  auto t = [](Value v) { return AtenValue::tensor(v); };
  bool floating = isa<FloatType>(cast<BaseTensorType>(x->getType()).getDtype());
  FailureOr<Value> number =
      buildValue(loc, "aten.eq.Tensor", {{"self", t(*x)}, {"other", t(*x)}}, emitError);
  if (failed(number))
    return failure();
  if (!floating)
    return number->getDefiningOp();
  FailureOr<Value> abs = buildValue(loc, "aten.abs.default", {{"self", t(*x)}}, emitError);
  FailureOr<Value> bounded =
      failed(abs)
          ? abs
          : buildValue(loc, "aten.ne.Scalar",
                       {{"self", t(*abs)}, {"other", AtenValue::floating(INFINITY)}}, emitError);
  if (failed(bounded))
    return failure();
  return build(loc, "aten.logical_and.default", {{"self", t(*number)}, {"other", t(*bounded)}}, 1,
               emitError);
}

/// nansum(self, dim=None, keepdim=False, *, dtype=None): sum with NaN counted as 0.
FailureOr<Operation *> AtenCallBuilder::buildNansum(Location loc, llvm::StringRef target,
                                                    std::vector<AtenArgument> arguments,
                                                    const ErrorFn &emitError) {
  auto self = llvm::find_if(arguments, [](const AtenArgument &argument) {
    return argument.name == "self" && argument.value.kind == AtenValue::Kind::Tensor;
  });
  if (self == arguments.end())
    return emitError() << "nansum needs a tensor 'self'";
  Value x = self->value.values.front();
  if (isa<FloatType>(cast<BaseTensorType>(x.getType()).getDtype())) {
    FailureOr<Value> nan =
        buildValue(loc, "aten.isnan.default", {{"self", AtenValue::tensor(x)}}, emitError);
    FailureOr<Value> zeroed = failed(nan) ? nan
                                          : buildValue(loc, "aten.masked_fill.Scalar",
                                                       {{"self", AtenValue::tensor(x)},
                                                        {"mask", AtenValue::tensor(*nan)},
                                                        {"value", AtenValue::floating(0)}},
                                                       emitError);
    if (failed(zeroed))
      return failure();
    self->value = AtenValue::tensor(*zeroed);
  }
  // Without dims (absent or None), the sum of every element.
  bool allDims = llvm::none_of(arguments, [](const AtenArgument &argument) {
    return argument.name == "dim" && argument.value.kind != AtenValue::Kind::None;
  });
  if (allDims)
    llvm::erase_if(arguments, [](const AtenArgument &argument) {
      return argument.name == "dim" || argument.name == "keepdim";
    });
  return build(loc, allDims ? "aten.sum.default" : "aten.sum.dim_IntList", std::move(arguments), 1,
               emitError);
}

/// adaptive_max_pool2d(self [N, C, H, W] or [C, H, W], output_size [oh, ow]) -> (values,
/// indices): where the output size divides the input's, every window is
/// [H / oh, W / ow] with that stride, which is max_pool2d_with_indices; other sizes
/// (windows of varying size) are not supported.
FailureOr<Operation *> AtenCallBuilder::buildAdaptiveMaxPool2d(Location loc, llvm::StringRef target,
                                                               std::vector<AtenArgument> arguments,
                                                               const ErrorFn &emitError) {
  MLIRContext *ctx = builder.getContext();
  Value self;
  SmallVector<AffineExpr> outputSize;
  for (const AtenArgument &argument : arguments) {
    const AtenValue &value = argument.value;
    if (argument.name == "self" && value.kind == AtenValue::Kind::Tensor)
      self = value.values.front();
    else if (argument.name == "output_size" && value.kind == AtenValue::Kind::Ints)
      outputSize.assign(value.sizes.begin(), value.sizes.end());
    else
      return emitError() << "adaptive_max_pool2d: unsupported argument '" << argument.name << "'";
  }
  auto type = self ? dyn_cast<BaseTensorType>(self.getType()) : BaseTensorType();
  if (!type || (type.getRank() != 3 && type.getRank() != 4) || outputSize.size() != 2)
    return emitError() << "adaptive_max_pool2d needs a 3-d or 4-d tensor 'self' and two "
                          "output sizes";
  SmallVector<AffineExpr> window;
  for (int i = 0; i < 2; ++i) {
    std::optional<int64_t> in = getConstantSize(type.getSizes()[type.getRank() - 2 + i]);
    std::optional<int64_t> out = getConstantSize(outputSize[i]);
    if (!in || !out || *out <= 0 || *in % *out != 0) {
      std::string sizes;
      llvm::raw_string_ostream os(sizes);
      os << "input " << type.getSizes()[type.getRank() - 2 + i] << ", output " << outputSize[i];
      return emitError() << "adaptive_max_pool2d: the output size must divide the input's "
                            "(windows of varying size are not supported); "
                         << sizes;
    }
    window.push_back(getAffineConstantExpr(*in / *out, ctx));
  }
  AffineExpr zero = getAffineConstantExpr(0, ctx), one = getAffineConstantExpr(1, ctx);
  return build(loc, "aten.max_pool2d_with_indices.default",
               {{"self", AtenValue::tensor(self)},
                {"kernel_size", AtenValue::ints(window)},
                {"stride", AtenValue::ints(window)},
                {"padding", AtenValue::ints({zero, zero})},
                {"dilation", AtenValue::ints({one, one})},
                {"ceil_mode", AtenValue::boolean(false)}},
               2, emitError);
}

/// rms_norm(input, normalized_shape, weight=None, eps=None): input * rsqrt(mean(input^2
/// over the normalized trailing dims) + eps) * weight, eps by default the dtype's machine
/// epsilon (torch.finfo(dtype).eps), as ATen's composite computes it.
FailureOr<Operation *> AtenCallBuilder::buildRmsNorm(Location loc, llvm::StringRef target,
                                                     std::vector<AtenArgument> arguments,
                                                     const ErrorFn &emitError) {
  NamedArguments args("rms_norm", arguments, emitError);
  FailureOr<Value> x = args.tensor("input");
  FailureOr<Value> weight = args.tensor("weight", /*required=*/false);
  const AtenValue *shape = args.find("normalized_shape");
  if (failed(x) || failed(weight))
    return failure();
  auto floatType = dyn_cast<FloatType>(cast<BaseTensorType>(x->getType()).getDtype());
  if (!floatType)
    return emitError() << "rms_norm needs a floating-point input";
  int64_t count = !shape                                 ? 0
                  : shape->kind == AtenValue::Kind::Ints ? int64_t(shape->sizes.size())
                  : shape->kind == AtenValue::Kind::Int  ? 1
                                                         : -1;
  if (count <= 0 || count > rankOf(*x))
    return emitError() << "rms_norm: 'normalized_shape' must name 1 to " << rankOf(*x)
                       << " trailing dimensions";
  int precision = int(llvm::APFloat::semanticsPrecision(floatType.getFloatSemantics()));
  FailureOr<double> eps = args.number("eps", std::ldexp(1.0, 1 - precision));
  if (failed(eps))
    return failure();
  SmallVector<AffineExpr> dims;
  for (int64_t d = rankOf(*x) - count; d < rankOf(*x); ++d)
    dims.push_back(getAffineConstantExpr(d, builder.getContext()));
  auto call = [&](llvm::StringRef callee, std::vector<AtenArgument> callArgs) {
    return buildValue(loc, callee, std::move(callArgs), emitError);
  };
  FailureOr<Value> squares =
      call("aten.mul.Tensor", {{"self", tensorValue(*x)}, {"other", tensorValue(*x)}});
  FailureOr<Value> mean = failed(squares)
                              ? squares
                              : call("aten.mean.dim", {{"self", tensorValue(*squares)},
                                                       {"dim", AtenValue::ints(dims)},
                                                       {"keepdim", AtenValue::boolean(true)}});
  FailureOr<Value> shifted =
      failed(mean) ? mean
                   : call("aten.add.Tensor",
                          {{"self", tensorValue(*mean)}, {"other", AtenValue::floating(*eps)}});
  FailureOr<Value> scale =
      failed(shifted) ? shifted : call("aten.rsqrt.default", {{"self", tensorValue(*shifted)}});
  if (failed(scale))
    return failure();
  if (!*weight)
    return build(loc, "aten.mul.Tensor",
                 {{"self", tensorValue(*x)}, {"other", tensorValue(*scale)}}, 1, emitError);
  FailureOr<Value> normed =
      call("aten.mul.Tensor", {{"self", tensorValue(*x)}, {"other", tensorValue(*scale)}});
  if (failed(normed))
    return failure();
  return build(loc, "aten.mul.Tensor",
               {{"self", tensorValue(*normed)}, {"other", tensorValue(*weight)}}, 1, emitError);
}

/// glu(self, dim=-1): the first half along `dim` times the sigmoid of the second.
FailureOr<Operation *> AtenCallBuilder::buildGlu(Location loc, llvm::StringRef target,
                                                 std::vector<AtenArgument> arguments,
                                                 const ErrorFn &emitError) {
  NamedArguments args("glu", arguments, emitError);
  FailureOr<Value> x = args.tensor("self");
  FailureOr<int64_t> dim = args.integer("dim", -1);
  if (failed(x) || failed(dim))
    return failure();
  std::optional<int64_t> axis = wrappedDim(*dim, rankOf(*x));
  if (!axis || rankOf(*x) == 0)
    return emitError() << "glu: dim " << *dim << " is out of range for rank " << rankOf(*x);
  MLIRContext *ctx = builder.getContext();
  AffineExpr size = cast<BaseTensorType>(x->getType()).getSizes()[*axis];
  std::optional<int64_t> constant = getConstantSize(size);
  if (!constant || *constant % 2 != 0)
    return emitError() << "glu: the halved dimension must have an even, constant size";
  auto half = [&](int64_t begin, int64_t end) {
    return buildValue(loc, "aten.slice.Tensor",
                      {{"self", tensorValue(*x)},
                       {"dim", AtenValue::integer(getAffineConstantExpr(*axis, ctx))},
                       {"start", AtenValue::integer(getAffineConstantExpr(begin, ctx))},
                       {"end", AtenValue::integer(getAffineConstantExpr(end, ctx))},
                       {"step", AtenValue::integer(getAffineConstantExpr(1, ctx))}},
                      emitError);
  };
  FailureOr<Value> first = half(0, *constant / 2);
  FailureOr<Value> second = failed(first) ? first : half(*constant / 2, *constant);
  FailureOr<Value> gate = failed(second) ? second
                                         : buildValue(loc, "aten.sigmoid.default",
                                                      {{"self", tensorValue(*second)}}, emitError);
  if (failed(gate))
    return failure();
  return build(loc, "aten.mul.Tensor",
               {{"self", tensorValue(*first)}, {"other", tensorValue(*gate)}}, 1, emitError);
}

/// prelu(self, weight): self where it is positive, else weight * self, the weight (one
/// value, or one per channel: dimension 1) broadcast over the other dimensions.
FailureOr<Operation *> AtenCallBuilder::buildPrelu(Location loc, llvm::StringRef target,
                                                   std::vector<AtenArgument> arguments,
                                                   const ErrorFn &emitError) {
  NamedArguments args("prelu", arguments, emitError);
  FailureOr<Value> x = args.tensor("self");
  FailureOr<Value> weight = args.tensor("weight");
  if (failed(x) || failed(weight))
    return failure();
  MLIRContext *ctx = builder.getContext();
  Value slope = *weight;
  auto weightType = cast<BaseTensorType>(weight->getType());
  std::optional<int64_t> count =
      weightType.getRank() == 1 ? getConstantSize(weightType.getSizes()[0]) : std::nullopt;
  if (weightType.getRank() > 1)
    return emitError() << "prelu: the weight must have one value or one per channel";
  if (count && *count != 1 && rankOf(*x) >= 2) {
    // [C] viewed [C, 1, ..., 1] against [N, C, ...].
    SmallVector<AffineExpr> shape(rankOf(*x) - 1, getAffineConstantExpr(1, ctx));
    shape[0] = getAffineConstantExpr(*count, ctx);
    FailureOr<Value> viewed =
        buildValue(loc, "aten.view.default",
                   {{"self", tensorValue(slope)}, {"size", AtenValue::ints(shape)}}, emitError);
    if (failed(viewed))
      return failure();
    slope = *viewed;
  }
  FailureOr<Value> positive =
      buildValue(loc, "aten.gt.Scalar",
                 {{"self", tensorValue(*x)}, {"other", AtenValue::floating(0)}}, emitError);
  FailureOr<Value> scaled =
      failed(positive)
          ? positive
          : buildValue(loc, "aten.mul.Tensor",
                       {{"self", tensorValue(*x)}, {"other", tensorValue(slope)}}, emitError);
  if (failed(scaled))
    return failure();
  return build(loc, "aten.where.self",
               {{"condition", tensorValue(*positive)},
                {"self", tensorValue(*x)},
                {"other", tensorValue(*scaled)}},
               1, emitError);
}

/// one_hot(self, num_classes): int64 [..., num_classes], 1 where the class is self's. The
/// number of classes must be given (-1, the largest value plus one, depends on the data).
FailureOr<Operation *> AtenCallBuilder::buildOneHot(Location loc, llvm::StringRef target,
                                                    std::vector<AtenArgument> arguments,
                                                    const ErrorFn &emitError) {
  NamedArguments args("one_hot", arguments, emitError);
  FailureOr<Value> x = args.tensor("self");
  FailureOr<int64_t> classes = args.integer("num_classes", -1);
  if (failed(x) || failed(classes))
    return failure();
  if (*classes < 0)
    return emitError() << "one_hot: give num_classes (with -1 the result's shape depends on "
                          "the data)";
  MLIRContext *ctx = builder.getContext();
  Type i64 = builder.getI64Type();
  FailureOr<Value> column = buildValue(
      loc, "aten.unsqueeze.default",
      {{"self", tensorValue(*x)}, {"dim", AtenValue::integer(getAffineConstantExpr(-1, ctx))}},
      emitError);
  FailureOr<Value> range =
      failed(column)
          ? column
          : buildValue(loc, "aten.arange.default",
                       {{"end", AtenValue::integer(getAffineConstantExpr(*classes, ctx))},
                        {"dtype", AtenValue::dtype(i64)}},
                       emitError);
  FailureOr<Value> hits =
      failed(range)
          ? range
          : buildValue(loc, "aten.eq.Tensor",
                       {{"self", tensorValue(*column)}, {"other", tensorValue(*range)}}, emitError);
  if (failed(hits))
    return failure();
  return build(loc, "aten._to_copy.default",
               {{"self", tensorValue(*hits)}, {"dtype", AtenValue::dtype(i64)}}, 1, emitError);
}

/// cosine_similarity(x1, x2, dim=1, eps=1e-8): sum((x1 / max(|x1|, eps)) * (x2 / max(|x2|,
/// eps)), dim), the norms 2-norms along `dim`, as ATen computes it.
FailureOr<Operation *> AtenCallBuilder::buildCosineSimilarity(Location loc, llvm::StringRef target,
                                                              std::vector<AtenArgument> arguments,
                                                              const ErrorFn &emitError) {
  NamedArguments args("cosine_similarity", arguments, emitError);
  FailureOr<Value> x1 = args.tensor("x1"), x2 = args.tensor("x2");
  FailureOr<int64_t> dim = args.integer("dim", 1);
  FailureOr<double> eps = args.number("eps", 1e-8);
  if (failed(x1) || failed(x2) || failed(dim) || failed(eps))
    return failure();
  MLIRContext *ctx = builder.getContext();
  AtenValue dims = AtenValue::ints({getAffineConstantExpr(*dim, ctx)});
  auto unit = [&](Value v) -> FailureOr<Value> {
    FailureOr<Value> norm = buildValue(loc, "aten.linalg_vector_norm.default",
                                       {{"self", tensorValue(v)},
                                        {"ord", AtenValue::floating(2)},
                                        {"dim", dims},
                                        {"keepdim", AtenValue::boolean(true)}},
                                       emitError);
    FailureOr<Value> clamped =
        failed(norm)
            ? norm
            : buildValue(loc, "aten.clamp_min.default",
                         {{"self", tensorValue(*norm)}, {"min", AtenValue::floating(*eps)}},
                         emitError);
    if (failed(clamped))
      return failure();
    return buildValue(loc, "aten.div.Tensor",
                      {{"self", tensorValue(v)}, {"other", tensorValue(*clamped)}}, emitError);
  };
  FailureOr<Value> u1 = unit(*x1);
  FailureOr<Value> u2 = failed(u1) ? u1 : unit(*x2);
  FailureOr<Value> products =
      failed(u2) ? u2
                 : buildValue(loc, "aten.mul.Tensor",
                              {{"self", tensorValue(*u1)}, {"other", tensorValue(*u2)}}, emitError);
  if (failed(products))
    return failure();
  return build(
      loc, "aten.sum.dim_IntList",
      {{"self", tensorValue(*products)}, {"dim", dims}, {"keepdim", AtenValue::boolean(false)}}, 1,
      emitError);
}

/// pixel_shuffle(self, upscale_factor) [..., C r^2, H, W] -> [..., C, H r, W r];
/// pixel_unshuffle(self, downscale_factor) back; channel_shuffle(self, groups)
/// [N, g k, ...] -> [N, k g, ...] (channel c = i k + j moves to j g + i): each a view
/// that splits dimensions, a permutation and a reshape that merges them.
FailureOr<Operation *> AtenCallBuilder::buildPixelShuffle(Location loc, llvm::StringRef target,
                                                          std::vector<AtenArgument> arguments,
                                                          const ErrorFn &emitError) {
  bool channels = target.contains("channel_shuffle");
  bool unshuffle = target == "aten.pixel_unshuffle.default";
  llvm::StringRef op = target.drop_front(5).rsplit('.').first; // without "aten."
  NamedArguments args(op, arguments, emitError);
  FailureOr<Value> x = args.tensor("self");
  FailureOr<int64_t> factor = args.integer(channels    ? "groups"
                                           : unshuffle ? "downscale_factor"
                                                       : "upscale_factor",
                                           std::nullopt);
  if (failed(x) || failed(factor))
    return failure();
  int64_t rank = rankOf(*x);
  if (*factor <= 0 || rank < (channels ? 2 : 3))
    return emitError() << op << " needs a factor above 0 and a tensor of rank "
                       << (channels ? 2 : 3) << " or more";
  MLIRContext *ctx = builder.getContext();
  SmallVector<AffineExpr> sizes(cast<BaseTensorType>(x->getType()).getSizes());
  AffineExpr r = getAffineConstantExpr(*factor, ctx);
  SmallVector<AffineExpr> split, merged;
  SmallVector<int64_t> order;
  int64_t batch = channels ? 1 : rank - 3; // dimensions before the channel
  for (int64_t d = 0; d < batch; ++d) {
    split.push_back(sizes[d]);
    merged.push_back(sizes[d]);
    order.push_back(d);
  }
  if (channels) {
    // [N, g, k, rest...] -> [N, k, g, rest...]
    AffineExpr c = sizes[1];
    split.append({r, c.floorDiv(r)});
    order.append({2, 1});
    merged.push_back(c);
    for (int64_t d = 2; d < rank; ++d) {
      split.push_back(sizes[d]);
      order.push_back(d + 1);
      merged.push_back(sizes[d]);
    }
  } else if (!unshuffle) {
    // [.., C, r, r, H, W] -> [.., C, H, r, W, r]
    AffineExpr c = sizes[batch].floorDiv(r * r), h = sizes[batch + 1], w = sizes[batch + 2];
    split.append({c, r, r, h, w});
    for (int64_t d : {0, 3, 1, 4, 2})
      order.push_back(batch + d);
    merged.append({c, h * r, w * r});
  } else {
    // [.., C, H, r, W, r] -> [.., C, r, r, H, W]
    AffineExpr c = sizes[batch], h = sizes[batch + 1].floorDiv(r), w = sizes[batch + 2].floorDiv(r);
    split.append({c, h, r, w, r});
    for (int64_t d : {0, 2, 4, 1, 3})
      order.push_back(batch + d);
    merged.append({c * r * r, h, w});
  }
  // The factor must divide what it splits.
  int64_t product = 1, original = 1;
  for (AffineExpr e : split)
    product = getConstantSize(e) && product >= 0 ? product * *getConstantSize(e) : -1;
  for (AffineExpr e : sizes)
    original = getConstantSize(e) && original >= 0 ? original * *getConstantSize(e) : -1;
  if (product >= 0 && original >= 0 && product != original)
    return emitError() << op << ": the factor " << *factor << " does not divide the sizes";
  SmallVector<AffineExpr> orderExprs;
  for (int64_t d : order)
    orderExprs.push_back(getAffineConstantExpr(d, ctx));
  FailureOr<Value> viewed =
      buildValue(loc, "aten.reshape.default",
                 {{"self", tensorValue(*x)}, {"shape", AtenValue::ints(split)}}, emitError);
  FailureOr<Value> permuted =
      failed(viewed)
          ? viewed
          : buildValue(loc, "aten.permute.default",
                       {{"self", tensorValue(*viewed)}, {"dims", AtenValue::ints(orderExprs)}},
                       emitError);
  if (failed(permuted))
    return failure();
  return build(loc, "aten.reshape.default",
               {{"self", tensorValue(*permuted)}, {"shape", AtenValue::ints(merged)}}, 1,
               emitError);
}

/// instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum,
/// eps, cudnn_enabled) with the input's statistics and no running ones
/// (nn.InstanceNorm's default): group norm with a group per channel.
FailureOr<Operation *> AtenCallBuilder::buildInstanceNorm(Location loc, llvm::StringRef target,
                                                          std::vector<AtenArgument> arguments,
                                                          const ErrorFn &emitError) {
  NamedArguments args("instance_norm", arguments, emitError);
  FailureOr<Value> x = args.tensor("input");
  FailureOr<Value> weight = args.tensor("weight", false), bias = args.tensor("bias", false);
  FailureOr<double> eps = args.number("eps", 1e-5);
  if (failed(x) || failed(weight) || failed(bias) || failed(eps))
    return failure();
  if (args.find("running_mean") || args.find("running_var") || !args.flag("use_input_stats", true))
    return emitError() << "instance_norm with running statistics (track_running_stats=True) is "
                          "not supported";
  if (rankOf(*x) < 2)
    return emitError() << "instance_norm needs an input of rank 2 or more";
  AffineExpr channels = cast<BaseTensorType>(x->getType()).getSizes()[1];
  std::vector<AtenArgument> groupArgs = {{"input", tensorValue(*x)},
                                         {"num_groups", AtenValue::integer(channels)},
                                         {"eps", AtenValue::floating(*eps)}};
  if (*weight)
    groupArgs.push_back({"weight", tensorValue(*weight)});
  if (*bias)
    groupArgs.push_back({"bias", tensorValue(*bias)});
  return build(loc, "aten.group_norm.default", std::move(groupArgs), 1, emitError);
}

/// threshold(self, threshold, value): `value` where self <= threshold, else self (NaN
/// stays NaN).
FailureOr<Operation *> AtenCallBuilder::buildThreshold(Location loc, llvm::StringRef target,
                                                       std::vector<AtenArgument> arguments,
                                                       const ErrorFn &emitError) {
  NamedArguments args("threshold", arguments, emitError);
  FailureOr<Value> x = args.tensor("self");
  FailureOr<double> threshold = args.number("threshold", std::nullopt);
  FailureOr<double> value = args.number("value", std::nullopt);
  if (failed(x) || failed(threshold) || failed(value))
    return failure();
  FailureOr<Value> below = buildValue(
      loc, "aten.le.Scalar",
      {{"self", tensorValue(*x)}, {"other", AtenValue::floating(*threshold)}}, emitError);
  if (failed(below))
    return failure();
  return build(loc, "aten.masked_fill.Scalar",
               {{"self", tensorValue(*x)},
                {"mask", tensorValue(*below)},
                {"value", AtenValue::floating(*value)}},
               1, emitError);
}

/// feature_dropout / alpha_dropout / feature_alpha_dropout(input, p, train): in
/// evaluation the input; in training they are not supported.
FailureOr<Operation *> AtenCallBuilder::buildFeatureDropout(Location loc, llvm::StringRef target,
                                                            std::vector<AtenArgument> arguments,
                                                            const ErrorFn &emitError) {
  llvm::StringRef op = target.drop_front(5).rsplit('.').first;
  NamedArguments args(op, arguments, emitError);
  FailureOr<Value> x = args.tensor("input");
  if (failed(x))
    return failure();
  if (args.flag("train", true))
    return emitError() << op << " in training mode is not supported (dropout is)";
  return build(loc, "aten.clone.default", {{"self", tensorValue(*x)}}, 1, emitError);
}

/// hardshrink(self, lambd=0.5): 0 where -lambd <= self <= lambd, else self;
/// softshrink(self, lambd=0.5): 0 there, else self - lambd above and self + lambd below
/// (NaN stays NaN), as ATen computes them.
FailureOr<Operation *> AtenCallBuilder::buildShrink(Location loc, llvm::StringRef target,
                                                    std::vector<AtenArgument> arguments,
                                                    const ErrorFn &emitError) {
  bool soft = target == "aten.softshrink.default";
  NamedArguments args(soft ? "softshrink" : "hardshrink", arguments, emitError);
  FailureOr<Value> x = args.tensor("self");
  FailureOr<double> lambd = args.number("lambd", 0.5);
  if (failed(x) || failed(lambd))
    return failure();
  OpChain c(*this, loc, emitError);
  Value inside = c.scalar("aten.le.Scalar", c.unary("aten.abs.default", *x), *lambd);
  Value kept = *x;
  if (soft)
    kept = c("aten.where.self", {{"condition", tensorValue(c.scalar("aten.gt.Scalar", *x, *lambd))},
                                 {"self", tensorValue(c.scalar("aten.sub.Scalar", *x, *lambd))},
                                 {"other", tensorValue(c.scalar("aten.add.Scalar", *x, *lambd))}});
  return c.finish("aten.masked_fill.Scalar", {{"self", tensorValue(kept)},
                                              {"mask", tensorValue(inside)},
                                              {"value", AtenValue::floating(0)}});
}

/// pairwise_distance(x1, x2, p=2, eps=1e-6, keepdim=False): the p-norm of x1 - x2 + eps
/// along the last dimension, as ATen computes it.
FailureOr<Operation *> AtenCallBuilder::buildPairwiseDistance(Location loc, llvm::StringRef target,
                                                              std::vector<AtenArgument> arguments,
                                                              const ErrorFn &emitError) {
  NamedArguments args("pairwise_distance", arguments, emitError);
  FailureOr<Value> x1 = args.tensor("x1"), x2 = args.tensor("x2");
  FailureOr<double> p = args.number("p", 2), eps = args.number("eps", 1e-6);
  if (failed(x1) || failed(x2) || failed(p) || failed(eps))
    return failure();
  int64_t rank = std::max(rankOf(*x1), rankOf(*x2));
  if (rank == 0)
    return emitError() << "pairwise_distance needs tensors of rank 1 or more";
  OpChain c(*this, loc, emitError);
  Value shifted = c.scalar("aten.add.Scalar", c.binary("aten.sub.Tensor", *x1, *x2), *eps);
  return c.finish(
      "aten.linalg_vector_norm.default",
      {{"self", tensorValue(shifted)},
       {"ord", AtenValue::floating(*p)},
       {"dim", AtenValue::ints({getAffineConstantExpr(rank - 1, builder.getContext())})},
       {"keepdim", AtenValue::boolean(args.flag("keepdim", false))}});
}

/// The losses ATen composes of other ops (torch.nn.functional calls them through
/// torch's bindings), each as ATen's composite computes it, then `reduction` (0 none, 1
/// mean, 2 sum):
///   soft_margin_loss(self, target): log1p(exp(-target self));
///   kl_div(self, target, log_target=False): xlogy(target, target) - target self, or
///     exp(target) (target - self) with log_target;
///   hinge_embedding_loss(self, target, margin=1): max(margin - self, 0) where target is
///     not 1, plus self where target is not -1;
///   margin_ranking_loss(input1, input2, target, margin=0): max(-target (input1 -
///     input2) + margin, 0);
///   poisson_nll_loss(input, target, log_input, full, eps): exp(input) - target input, or
///     input - target log(input + eps); with `full` the Stirling term where target > 1;
///   cosine_embedding_loss(input1, input2, target, margin=0): 1 - cos where target is 1,
///     max(cos - margin, 0) where it is -1 (cos along the last dimension, squared norms
///     plus 1e-12);
///   triplet_margin_loss(anchor, positive, negative, margin=1, p=2, eps=1e-6,
///     swap=False): max(margin + d(anchor, positive) - d(anchor, negative), 0), d the
///     pairwise distance (with swap the smaller of d(a, n) and d(p, n)).
FailureOr<Operation *> AtenCallBuilder::buildLoss(Location loc, llvm::StringRef target,
                                                  std::vector<AtenArgument> arguments,
                                                  const ErrorFn &emitError) {
  llvm::StringRef op = target.drop_front(5).rsplit('.').first;
  NamedArguments args(op, arguments, emitError);
  FailureOr<int64_t> reduction = args.integer("reduction", 1);
  if (failed(reduction))
    return failure();
  if (*reduction < 0 || *reduction > 2)
    return emitError() << op << ": reduction must be 0 (none), 1 (mean) or 2 (sum)";
  OpChain c(*this, loc, emitError);
  MLIRContext *ctx = builder.getContext();
  auto where = [&](Value condition, Value x, Value y) {
    return c("aten.where.self", {{"condition", tensorValue(condition)},
                                 {"self", tensorValue(x)},
                                 {"other", tensorValue(y)}});
  };
  Value loss;
  if (op == "soft_margin_loss" || op == "kl_div" || op == "hinge_embedding_loss") {
    FailureOr<Value> x = args.tensor("self"), t = args.tensor("target");
    FailureOr<double> margin = args.number("margin", 1.0);
    if (failed(x) || failed(t) || failed(margin))
      return failure();
    if (op == "soft_margin_loss") {
      Value e = c.unary("aten.exp.default",
                        c.unary("aten.neg.default", c.binary("aten.mul.Tensor", *t, *x)));
      loss = c.unary("aten.log1p.default", e);
    } else if (op == "kl_div" && args.flag("log_target", false)) {
      loss = c.binary("aten.mul.Tensor", c.unary("aten.exp.default", *t),
                      c.binary("aten.sub.Tensor", *t, *x));
    } else if (op == "kl_div") {
      // xlogy(t, t): 0 where t is 0 (the log of 1 there keeps its derivative finite).
      Value zero = c.scalar("aten.eq.Scalar", *t, 0);
      Value safe = c("aten.masked_fill.Scalar", {{"self", tensorValue(*t)},
                                                 {"mask", tensorValue(zero)},
                                                 {"value", AtenValue::floating(1)}});
      Value entropy = c.binary("aten.mul.Tensor", *t, c.unary("aten.log.default", safe));
      loss = c.binary("aten.sub.Tensor", entropy, c.binary("aten.mul.Tensor", *t, *x));
    } else {
      Value below = c.clampMin(c("aten.rsub.Scalar", {{"self", tensorValue(*x)},
                                                      {"other", AtenValue::floating(*margin)}}),
                               0);
      Value marginPart = c.fill(below, c.scalar("aten.eq.Scalar", *t, 1), 0);
      Value selfPart = c.fill(*x, c.scalar("aten.eq.Scalar", *t, -1), 0);
      loss = c.binary("aten.add.Tensor", marginPart, selfPart);
    }
  } else if (op == "margin_ranking_loss" || op == "cosine_embedding_loss") {
    FailureOr<Value> x1 = args.tensor("input1"), x2 = args.tensor("input2"),
                     t = args.tensor("target");
    FailureOr<double> margin = args.number("margin", 0.0);
    if (failed(x1) || failed(x2) || failed(t) || failed(margin))
      return failure();
    if (op == "margin_ranking_loss") {
      Value gap = c.binary("aten.mul.Tensor", c.unary("aten.neg.default", *t),
                           c.binary("aten.sub.Tensor", *x1, *x2));
      loss = c.clampMin(c.scalar("aten.add.Scalar", gap, *margin), 0);
    } else {
      int64_t rank = rankOf(*x1);
      if (rank < 1 || rankOf(*x2) != rank)
        return emitError() << op << " needs two inputs of the same rank, 1 or more";
      AtenValue last = AtenValue::ints({getAffineConstantExpr(rank - 1, ctx)});
      auto rowSum = [&](Value a, Value b) {
        return c("aten.sum.dim_IntList", {{"self", tensorValue(c.binary("aten.mul.Tensor", a, b))},
                                          {"dim", last},
                                          {"keepdim", AtenValue::boolean(false)}});
      };
      Value products = rowSum(*x1, *x2);
      Value squares1 = c.scalar("aten.add.Scalar", rowSum(*x1, *x1), 1e-12);
      Value squares2 = c.scalar("aten.add.Scalar", rowSum(*x2, *x2), 1e-12);
      Value cos =
          c.binary("aten.div.Tensor", products,
                   c.unary("aten.sqrt.default", c.binary("aten.mul.Tensor", squares1, squares2)));
      Value zeros = c.unary("aten.zeros_like.default", cos);
      Value positive = where(
          c.scalar("aten.eq.Scalar", *t, 1),
          c("aten.rsub.Scalar", {{"self", tensorValue(cos)}, {"other", AtenValue::floating(1)}}),
          zeros);
      Value negative = where(c.scalar("aten.eq.Scalar", *t, -1),
                             c.clampMin(c.scalar("aten.sub.Scalar", cos, *margin), 0), zeros);
      loss = c.binary("aten.add.Tensor", positive, negative);
    }
  } else if (op == "poisson_nll_loss") {
    FailureOr<Value> x = args.tensor("input"), t = args.tensor("target");
    FailureOr<double> eps = args.number("eps", 1e-8);
    if (failed(x) || failed(t) || failed(eps))
      return failure();
    if (args.flag("log_input", true))
      loss = c.binary("aten.sub.Tensor", c.unary("aten.exp.default", *x),
                      c.binary("aten.mul.Tensor", *t, *x));
    else
      loss = c.binary("aten.sub.Tensor", *x,
                      c.binary("aten.mul.Tensor", *t,
                               c.unary("aten.log.default", c.scalar("aten.add.Scalar", *x, *eps))));
    if (args.flag("full", false)) {
      // t log(t) - t + 0.5 log(2 pi t) where t > 1, else 0.
      Value low = c.scalar("aten.le.Scalar", *t, 1);
      Value safe = c.fill(*t, low, 1);
      Value logT = c.unary("aten.log.default", safe);
      Value stirling = c.binary(
          "aten.add.Tensor",
          c.binary("aten.sub.Tensor", c.binary("aten.mul.Tensor", safe, logT), safe),
          c.scalar("aten.mul.Scalar",
                   c.scalar("aten.add.Scalar", logT, std::log(2 * llvm::numbers::pi)), 0.5));
      loss = c.binary("aten.add.Tensor", loss, c.fill(stirling, low, 0));
    }
  } else if (op == "triplet_margin_loss") {
    FailureOr<Value> a = args.tensor("anchor"), pos = args.tensor("positive"),
                     neg = args.tensor("negative");
    FailureOr<double> margin = args.number("margin", 1.0), p = args.number("p", 2),
                      eps = args.number("eps", 1e-6);
    if (failed(a) || failed(pos) || failed(neg) || failed(margin) || failed(p) || failed(eps))
      return failure();
    auto distance = [&](Value x1, Value x2) {
      return c("aten.pairwise_distance.default", {{"x1", tensorValue(x1)},
                                                  {"x2", tensorValue(x2)},
                                                  {"p", AtenValue::floating(*p)},
                                                  {"eps", AtenValue::floating(*eps)}});
    };
    Value toPositive = distance(*a, *pos), toNegative = distance(*a, *neg);
    if (args.flag("swap", false))
      toNegative = c.binary("aten.minimum.default", toNegative, distance(*pos, *neg));
    loss = c.clampMin(
        c.scalar("aten.add.Scalar", c.binary("aten.sub.Tensor", toPositive, toNegative), *margin),
        0);
  } else {
    return emitError() << op << " is not a composite loss";
  }
  return c.reduce(loss, *reduction);
}

/// eye(n, m=n, dtype=None): 1 on the diagonal, 0 elsewhere: arange(n)[:, None] ==
/// arange(m), converted to `dtype` (float32 by default); n and m may be symbolic sizes.
FailureOr<Operation *> AtenCallBuilder::buildEye(Location loc, llvm::StringRef target,
                                                 std::vector<AtenArgument> arguments,
                                                 const ErrorFn &emitError) {
  NamedArguments args("eye", arguments, emitError);
  const AtenValue *n = args.find("n"), *m = args.find("m");
  if (!n || n->kind != AtenValue::Kind::Int || (m && m->kind != AtenValue::Kind::Int))
    return emitError() << "eye needs ints 'n' (and 'm')";
  const AtenValue *dtype = args.find("dtype");
  if (dtype && dtype->kind != AtenValue::Kind::DType)
    return emitError() << "eye: argument 'dtype' must be a dtype";
  MLIRContext *ctx = builder.getContext();
  Type i64 = builder.getI64Type();
  OpChain c(*this, loc, emitError);
  auto range = [&](const AtenValue &end) {
    return c("aten.arange.default", {{"end", end}, {"dtype", AtenValue::dtype(i64)}});
  };
  Value rows =
      c("aten.unsqueeze.default", {{"self", tensorValue(range(*n))},
                                   {"dim", AtenValue::integer(getAffineConstantExpr(1, ctx))}});
  Value diagonal = c.binary("aten.eq.Tensor", rows, range(m ? *m : *n));
  return c.finish("aten._to_copy.default",
                  {{"self", tensorValue(diagonal)},
                   {"dtype", AtenValue::dtype(dtype ? dtype->type : builder.getF32Type())}});
}

/// rrelu(self, lower=1/8, upper=1/3, training=False): in evaluation leaky_relu with the
/// mean slope (lower + upper) / 2; in training the slope is random per element, which
/// is not supported.
FailureOr<Operation *> AtenCallBuilder::buildRrelu(Location loc, llvm::StringRef target,
                                                   std::vector<AtenArgument> arguments,
                                                   const ErrorFn &emitError) {
  NamedArguments args("rrelu", arguments, emitError);
  FailureOr<Value> x = args.tensor("self");
  FailureOr<double> lower = args.number("lower", 1.0 / 8), upper = args.number("upper", 1.0 / 3);
  if (failed(x) || failed(lower) || failed(upper))
    return failure();
  if (args.flag("training", false))
    return emitError() << "rrelu in training mode (a random slope per element) is not "
                          "supported; in evaluation it is";
  return build(
      loc, "aten.leaky_relu.default",
      {{"self", tensorValue(*x)}, {"negative_slope", AtenValue::floating((*lower + *upper) / 2)}},
      1, emitError);
}

/// Pointwise ops ATen composes of others (or computes with a formula of ops tgc has),
/// each as ATen computes it:
///   lerp(self, end, weight): self + weight (end - self) where |weight| < 0.5, else
///     end - (end - self) (1 - weight);
///   addcmul / addcdiv(self, tensor1, tensor2, value=1): self + value tensor1 * / tensor2;
///   xlogy(self, other): 0 where self is 0, else self log(other) (NaN where other is);
///   copysign(self, other): |self| with the sign of other (of -0.0 too);
///   frac: self - trunc(self); deg2rad / rad2deg; signbit: self < 0, or -0.0;
///   sinc: sin(pi x) / (pi x), 1 at 0;
///   logaddexp(self, other): max + log1p(exp(-|self - other|)), self where both are the
///     same infinity; logaddexp2 the same in base 2;
///   logit(self, eps=None): log(z / (1 - z)), z = self clamped to [eps, 1 - eps];
///   hypot: sqrt(self^2 + other^2); heaviside(self, values): values where self is 0,
///     else self > 0;
///   float_power(self, exponent): pow in float64;
///   isclose(self, other, rtol=1e-5, atol=1e-8, equal_nan=False): self == other, or both
///     finite and |self - other| <= atol + rtol |other| (or both NaN with equal_nan).
FailureOr<Operation *> AtenCallBuilder::buildPointwise(Location loc, llvm::StringRef target,
                                                       std::vector<AtenArgument> arguments,
                                                       const ErrorFn &emitError) {
  auto [op, overload] = target.drop_front(5).rsplit('.');
  NamedArguments args(op, arguments, emitError);
  OpChain c(*this, loc, emitError);
  FailureOr<Value> x = args.tensor("self");
  if (failed(x))
    return failure();
  // A Python number where ATen takes a tensor (`x.xlogy_(2.0)`, the Scalar overloads) is
  // a wrapped number: `self`'s dtype, or the default float one for a float and an
  // integer `self`.
  auto other = [&](llvm::StringRef name) -> FailureOr<Value> {
    const AtenValue *value = args.find(name);
    if (!value || (value->kind != AtenValue::Kind::Float && value->kind != AtenValue::Kind::Int))
      return args.tensor(name);
    FailureOr<double> number = args.number(name, std::nullopt);
    if (failed(number))
      return failure();
    Type dtype = cast<BaseTensorType>(x->getType()).getDtype();
    if (value->kind == AtenValue::Kind::Float && !isa<FloatType>(dtype))
      dtype = Float32Type::get(builder.getContext());
    Value filled = c("aten.full_like.default", {{"self", tensorValue(*x)},
                                                {"fill_value", AtenValue::floating(*number)},
                                                {"dtype", AtenValue::dtype(dtype)}});
    if (!filled)
      return failure();
    return filled;
  };
  if (op == "lerp") {
    FailureOr<Value> end = other("end");
    if (failed(end))
      return failure();
    Value diff = c.binary("aten.sub.Tensor", *end, *x);
    if (overload == "Scalar") {
      FailureOr<double> w = args.number("weight", std::nullopt);
      if (failed(w))
        return failure();
      if (std::abs(*w) < 0.5)
        return c.finish("aten.add.Tensor",
                        {{"self", tensorValue(*x)},
                         {"other", tensorValue(c.scalar("aten.mul.Scalar", diff, *w))}});
      return c.finish("aten.sub.Tensor",
                      {{"self", tensorValue(*end)},
                       {"other", tensorValue(c.scalar("aten.mul.Scalar", diff, 1 - *w))}});
    }
    FailureOr<Value> w = other("weight");
    if (failed(w))
      return failure();
    Value low = c.binary("aten.add.Tensor", *x, c.binary("aten.mul.Tensor", *w, diff));
    Value oneMinus =
        c("aten.rsub.Scalar", {{"self", tensorValue(*w)}, {"other", AtenValue::floating(1)}});
    Value high = c.binary("aten.sub.Tensor", *end, c.binary("aten.mul.Tensor", diff, oneMinus));
    Value small = c.scalar("aten.lt.Scalar", c.unary("aten.abs.default", *w), 0.5);
    return c.finish("aten.where.self", {{"condition", tensorValue(small)},
                                        {"self", tensorValue(low)},
                                        {"other", tensorValue(high)}});
  }
  if (op == "addcmul" || op == "addcdiv") {
    FailureOr<Value> t1 = other("tensor1"), t2 = other("tensor2");
    FailureOr<double> value = args.number("value", 1.0);
    if (failed(t1) || failed(t2) || failed(value))
      return failure();
    Value term = c.binary(op == "addcmul" ? "aten.mul.Tensor" : "aten.div.Tensor", *t1, *t2);
    if (*value != 1)
      term = c.scalar("aten.mul.Scalar", term, *value);
    return c.finish("aten.add.Tensor", {{"self", tensorValue(*x)}, {"other", tensorValue(term)}});
  }
  if (op == "xlogy" || op == "special_xlog1py" || op == "copysign" || op == "logaddexp" ||
      op == "logaddexp2" || op == "hypot" || op == "heaviside" || op == "isclose") {
    FailureOr<Value> y = other(op == "heaviside" ? "values" : "other");
    if (failed(y))
      return failure();
    if (op == "xlogy" || op == "special_xlog1py") {
      Value product =
          c.binary("aten.mul.Tensor", *x,
                   c.unary(op == "xlogy" ? "aten.log.default" : "aten.log1p.default", *y));
      Value zero = c.fill(product, c.scalar("aten.eq.Scalar", *x, 0), 0);
      return c.finish("aten.masked_fill.Scalar",
                      {{"self", tensorValue(zero)},
                       {"mask", tensorValue(c.unary("aten.isnan.default", *y))},
                       {"value", AtenValue::floating(std::nan(""))}});
    }
    if (op == "copysign") {
      // other < 0, or other is -0.0 (1 / -0.0 is -inf).
      Value negative =
          c("aten.logical_or.default",
            {{"self", tensorValue(c.scalar("aten.lt.Scalar", *y, 0))},
             {"other",
              tensorValue(c.scalar("aten.lt.Scalar", c.unary("aten.reciprocal.default", *y), 0))}});
      Value magnitude = c.unary("aten.abs.default", *x);
      return c.finish("aten.where.self",
                      {{"condition", tensorValue(negative)},
                       {"self", tensorValue(c.unary("aten.neg.default", magnitude))},
                       {"other", tensorValue(magnitude)}});
    }
    if (op == "logaddexp" || op == "logaddexp2") {
      double ln2 = std::log(2.0);
      Value distance = c.unary("aten.abs.default", c.binary("aten.sub.Tensor", *x, *y));
      if (op == "logaddexp2")
        distance = c.scalar("aten.mul.Scalar", distance, ln2);
      Value tail = c.unary("aten.log1p.default",
                           c.unary("aten.exp.default", c.unary("aten.neg.default", distance)));
      if (op == "logaddexp2")
        tail = c.scalar("aten.mul.Scalar", tail, 1 / ln2);
      Value sum = c.binary("aten.add.Tensor", c.binary("aten.maximum.default", *x, *y), tail);
      Value sameInfinity = c("aten.logical_and.default",
                             {{"self", tensorValue(c.unary("aten.isinf.default", *x))},
                              {"other", tensorValue(c.binary("aten.eq.Tensor", *x, *y))}});
      return c.finish("aten.where.self", {{"condition", tensorValue(sameInfinity)},
                                          {"self", tensorValue(*x)},
                                          {"other", tensorValue(sum)}});
    }
    if (op == "hypot")
      return c.finish(
          "aten.sqrt.default",
          {{"self", tensorValue(c.binary("aten.add.Tensor", c.binary("aten.mul.Tensor", *x, *x),
                                         c.binary("aten.mul.Tensor", *y, *y)))}});
    if (op == "heaviside") {
      Value positive =
          c("aten._to_copy.default",
            {{"self", tensorValue(c.scalar("aten.gt.Scalar", *x, 0))},
             {"dtype", AtenValue::dtype(cast<BaseTensorType>(x->getType()).getDtype())}});
      return c.finish("aten.where.self",
                      {{"condition", tensorValue(c.scalar("aten.eq.Scalar", *x, 0))},
                       {"self", tensorValue(*y)},
                       {"other", tensorValue(positive)}});
    }
    FailureOr<double> rtol = args.number("rtol", 1e-5), atol = args.number("atol", 1e-8);
    if (failed(rtol) || failed(atol))
      return failure();
    Value tolerance =
        c.scalar("aten.add.Scalar",
                 c.scalar("aten.mul.Scalar", c.unary("aten.abs.default", *y), *rtol), *atol);
    Value near =
        c.binary("aten.le.Tensor", c.unary("aten.abs.default", c.binary("aten.sub.Tensor", *x, *y)),
                 tolerance);
    auto any = [&](Value a, Value b) {
      return c("aten.logical_or.default", {{"self", tensorValue(a)}, {"other", tensorValue(b)}});
    };
    Value close = any(c.binary("aten.eq.Tensor", *x, *y),
                      c("aten.logical_and.default",
                        {{"self", tensorValue(near)},
                         {"other", tensorValue(c.unary("aten.isfinite.default", *y))}}));
    if (args.flag("equal_nan", false))
      close = any(close, c("aten.logical_and.default",
                           {{"self", tensorValue(c.unary("aten.isnan.default", *x))},
                            {"other", tensorValue(c.unary("aten.isnan.default", *y))}}));
    return c.result(close);
  }
  if (op == "frac")
    return c.finish("aten.sub.Tensor", {{"self", tensorValue(*x)},
                                        {"other", tensorValue(c.unary("aten.trunc.default", *x))}});
  if (op == "deg2rad" || op == "rad2deg")
    return c.finish("aten.mul.Scalar",
                    {{"self", tensorValue(*x)},
                     {"other", AtenValue::floating(op == "deg2rad" ? llvm::numbers::pi / 180
                                                                   : 180 / llvm::numbers::pi)}});
  if (op == "signbit")
    return c.finish("aten.logical_or.default",
                    {{"self", tensorValue(c.scalar("aten.lt.Scalar", *x, 0))},
                     {"other", tensorValue(c.scalar("aten.lt.Scalar",
                                                    c.unary("aten.reciprocal.default", *x), 0))}});
  if (op == "sinc") {
    Value scaled = c.scalar("aten.mul.Scalar", *x, llvm::numbers::pi);
    Value ratio = c.binary("aten.div.Tensor", c.unary("aten.sin.default", scaled), scaled);
    return c.finish("aten.masked_fill.Scalar",
                    {{"self", tensorValue(ratio)},
                     {"mask", tensorValue(c.scalar("aten.eq.Scalar", *x, 0))},
                     {"value", AtenValue::floating(1)}});
  }
  if (op == "logit") {
    Value z = *x;
    if (args.find("eps")) {
      FailureOr<double> eps = args.number("eps", std::nullopt);
      if (failed(eps))
        return failure();
      z = c("aten.clamp.default", {{"self", tensorValue(z)},
                                   {"min", AtenValue::floating(*eps)},
                                   {"max", AtenValue::floating(1 - *eps)}});
    }
    Value rest =
        c("aten.rsub.Scalar", {{"self", tensorValue(z)}, {"other", AtenValue::floating(1)}});
    return c.finish("aten.log.default",
                    {{"self", tensorValue(c.binary("aten.div.Tensor", z, rest))}});
  }
  if (op == "float_power") {
    Type f64 = builder.getF64Type();
    Value wide =
        c("aten._to_copy.default", {{"self", tensorValue(*x)}, {"dtype", AtenValue::dtype(f64)}});
    if (overload == "Tensor_Tensor") {
      FailureOr<Value> exponent = other("exponent");
      if (failed(exponent))
        return failure();
      Value wideExponent = c("aten._to_copy.default",
                             {{"self", tensorValue(*exponent)}, {"dtype", AtenValue::dtype(f64)}});
      return c.finish("aten.pow.Tensor_Tensor",
                      {{"self", tensorValue(wide)}, {"exponent", tensorValue(wideExponent)}});
    }
    FailureOr<double> exponent = args.number("exponent", std::nullopt);
    if (failed(exponent))
      return failure();
    return c.finish("aten.pow.Tensor_Scalar",
                    {{"self", tensorValue(wide)}, {"exponent", AtenValue::floating(*exponent)}});
  }
  return emitError() << op << " is not a composite pointwise op";
}

/// Matrix and layout ops ATen composes of others, as ATen computes them:
///   trace(self): the sum of the main diagonal;
///   diag(self, diagonal=0): a 2-d self's diagonal (a copy), or the square matrix with a
///     1-d self on its main diagonal;
///   rot90(self, k=1, dims=[0, 1]): flips and a transpose (a copy);
///   tile(self, dims): repeat, dims padded with leading 1s to self's rank;
///   count_nonzero(self, dim=None): the sum of self != 0 (int64);
///   dist(self, other, p=2): the p-norm of self - other;
///   addmv(self, mat, vec, beta=1, alpha=1): beta self + alpha mat @ vec.
FailureOr<Operation *> AtenCallBuilder::buildMatrixOp(Location loc, llvm::StringRef target,
                                                      std::vector<AtenArgument> arguments,
                                                      const ErrorFn &emitError) {
  auto [op, overload] = target.drop_front(5).rsplit('.');
  NamedArguments args(op, arguments, emitError);
  OpChain c(*this, loc, emitError);
  MLIRContext *ctx = builder.getContext();
  FailureOr<Value> x = args.tensor("self");
  if (failed(x))
    return failure();
  int64_t rank = rankOf(*x);
  auto constant = [&](int64_t v) { return getAffineConstantExpr(v, ctx); };
  auto flip = [&](Value v, llvm::ArrayRef<int64_t> dims) {
    return c("aten.flip.default", {{"self", tensorValue(v)}, {"dims", constantInts(ctx, dims)}});
  };
  if (op == "trace" || op == "diag") {
    FailureOr<int64_t> offset = args.integer("diagonal", 0);
    if (failed(offset))
      return failure();
    if (rank == 2) {
      Value diagonal =
          c("aten.diagonal.default",
            {{"self", tensorValue(*x)}, {"offset", AtenValue::integer(constant(*offset))}});
      if (op == "trace")
        return c.finish("aten.sum.default", {{"self", tensorValue(diagonal)}});
      return c.finish("aten.clone.default", {{"self", tensorValue(diagonal)}});
    }
    if (op == "trace" || rank != 1 || *offset != 0)
      return emitError() << op << " needs a matrix"
                         << (op == "diag" ? " (or a vector, for the main diagonal)" : "");
    // where(eye(n), self, 0): self[j] at (j, j).
    Value mask = c("aten.eye.default",
                   {{"n", AtenValue::integer(cast<BaseTensorType>(x->getType()).getSizes()[0])},
                    {"dtype", AtenValue::dtype(builder.getI1Type())}});
    return c.finish("aten.where.self",
                    {{"condition", tensorValue(mask)},
                     {"self", tensorValue(*x)},
                     {"other", tensorValue(c.unary("aten.zeros_like.default", *x))}});
  }
  if (op == "rot90") {
    FailureOr<int64_t> k = args.integer("k", 1);
    const AtenValue *dims = args.find("dims");
    SmallVector<int64_t> plane = {0, 1};
    if (dims) {
      plane.clear();
      for (AffineExpr d :
           dims->kind == AtenValue::Kind::Ints ? dims->sizes : SmallVector<AffineExpr>())
        if (auto value = llvm::dyn_cast<AffineConstantExpr>(d))
          plane.push_back(value.getValue());
    }
    if (failed(k))
      return failure();
    std::optional<int64_t> d0 = plane.size() == 2 ? wrappedDim(plane[0], rank) : std::nullopt;
    std::optional<int64_t> d1 = plane.size() == 2 ? wrappedDim(plane[1], rank) : std::nullopt;
    if (rank < 2 || !d0 || !d1 || *d0 == *d1)
      return emitError() << "rot90 needs two different dimensions of a tensor of rank 2 or more";
    int64_t turns = ((*k % 4) + 4) % 4;
    if (turns == 0) // ATen: a contiguous clone
      return c.finish("aten.clone.default",
                      {{"self", tensorValue(*x)},
                       {"memory_format", AtenValue::memoryFormat(MemoryFormat::Contiguous)}});
    if (turns == 2)
      return c.finish("aten.clone.default", {{"self", tensorValue(flip(*x, {*d0, *d1}))}});
    Value flipped = flip(*x, {turns == 1 ? *d1 : *d0});
    Value turned = c("aten.transpose.int", {{"self", tensorValue(flipped)},
                                            {"dim0", AtenValue::integer(constant(*d0))},
                                            {"dim1", AtenValue::integer(constant(*d1))}});
    return c.finish("aten.clone.default", {{"self", tensorValue(turned)}});
  }
  if (op == "tile") {
    const AtenValue *dims = args.find("dims");
    if (!dims || dims->kind != AtenValue::Kind::Ints)
      return emitError() << "tile needs ints 'dims'";
    SmallVector<AffineExpr> repeats;
    for (int64_t i = int64_t(dims->sizes.size()); i < rank; ++i)
      repeats.push_back(constant(1));
    repeats.append(dims->sizes.begin(), dims->sizes.end());
    return c.finish("aten.repeat.default",
                    {{"self", tensorValue(*x)}, {"repeats", AtenValue::ints(repeats)}});
  }
  if (op == "count_nonzero") {
    Value nonzero = c.scalar("aten.ne.Scalar", *x, 0);
    const AtenValue *dim = args.find("dim");
    if (!dim)
      return c.finish("aten.sum.default", {{"self", tensorValue(nonzero)}});
    AtenValue dims = dim->kind == AtenValue::Kind::Int ? AtenValue::ints({dim->size}) : *dim;
    return c.finish("aten.sum.dim_IntList", {{"self", tensorValue(nonzero)}, {"dim", dims}});
  }
  if (op == "dist") {
    FailureOr<Value> y = args.tensor("other");
    FailureOr<double> p = args.number("p", 2);
    if (failed(y) || failed(p))
      return failure();
    return c.finish("aten.linalg_vector_norm.default",
                    {{"self", tensorValue(c.binary("aten.sub.Tensor", *x, *y))},
                     {"ord", AtenValue::floating(*p)}});
  }
  if (op == "addmv") {
    FailureOr<Value> mat = args.tensor("mat"), vec = args.tensor("vec");
    FailureOr<double> beta = args.number("beta", 1), alpha = args.number("alpha", 1);
    if (failed(mat) || failed(vec) || failed(beta) || failed(alpha))
      return failure();
    if (rankOf(*mat) != 2 || rankOf(*vec) != 1)
      return emitError() << "addmv needs a matrix 'mat' and a vector 'vec'";
    Value product =
        c("aten.matmul.default", {{"self", tensorValue(*mat)}, {"other", tensorValue(*vec)}});
    if (*alpha != 1)
      product = c.scalar("aten.mul.Scalar", product, *alpha);
    if (*beta == 0)
      return c.result(product);
    Value base = *beta == 1 ? *x : c.scalar("aten.mul.Scalar", *x, *beta);
    return c.finish("aten.add.Tensor",
                    {{"self", tensorValue(base)}, {"other", tensorValue(product)}});
  }
  return emitError() << op << " is not a composite matrix op";
}

/// Math and layout composites, as ATen computes them:
///   sgn(self): sign, for the real tensors tgc has;
///   erfinv(self): Giles' single-precision approximation (relative error below 3e-7),
///     +-inf at +-1 and NaN outside [-1, 1];
///   kron(self, other): the block product, one broadcast product of the interleaved views;
///   cdist(x1, x2, p=2) / _cdist_forward: the p-norm of each pair of rows' difference
///     (linalg_vector_norm, whose derivative is 0 at a zero distance, as cdist's is);
///   linalg_cross(self, other, dim=-1) / cross(dim=None: the first dim of size 3):
///     roll(a, -1) roll(b, -2) - roll(a, -2) roll(b, -1) along dim;
///   renorm(self, p, dim, maxnorm): each slice along dim whose p-norm exceeds maxnorm
///     scaled by maxnorm / (norm + 1e-7);
///   bucketize(self, boundaries, out_int32, right) / searchsorted(sorted_sequence, self,
///     out_int32, right, side): how many boundaries lie below (right: at or below) each
///     value, by comparisons with all of them;
///   round(self, decimals): round(self * 10^d) / 10^d (round(self / 10^-d) * 10^-d below 0);
///   linalg_matrix_norm(self, ord, dim=(-2, -1), keepdim): 'fro' the 2-norm of the
///     entries, 1 / -1 the largest / smallest column sum of |self|, inf / -inf of row sums.
FailureOr<Operation *> AtenCallBuilder::buildMathOp(Location loc, llvm::StringRef target,
                                                    std::vector<AtenArgument> arguments,
                                                    const ErrorFn &emitError) {
  auto [op, overload] = target.drop_front(5).rsplit('.');
  NamedArguments args(op, arguments, emitError);
  OpChain c(*this, loc, emitError);
  MLIRContext *ctx = builder.getContext();
  auto constant = [&](int64_t v) { return getAffineConstantExpr(v, ctx); };
  auto dims = [&](llvm::ArrayRef<int64_t> values) { return constantInts(ctx, values); };
  if (op == "linspace") {
    // As ATen's kernel: start + i * step in the first half, end - (steps - 1 - i) * step in
    // the second, step = (end - start) / (steps - 1) (one step: start); computed in the
    // floating dtype (an integer dtype gets the float32 values converted).
    FailureOr<double> start = args.number("start", std::nullopt);
    FailureOr<double> end = args.number("end", std::nullopt);
    FailureOr<int64_t> steps = args.integer("steps", std::nullopt);
    if (failed(start) || failed(end) || failed(steps))
      return failure();
    if (*steps < 0)
      return emitError() << "linspace: number of steps must be non-negative";
    const AtenValue *dtype = args.find("dtype");
    Type result =
        dtype && dtype->kind == AtenValue::Kind::DType ? dtype->type : builder.getF32Type();
    Type compute = isa<FloatType>(result) ? result : builder.getF32Type();
    Value index = c("aten.arange.default", {{"end", AtenValue::integer(constant(*steps))},
                                            {"dtype", AtenValue::dtype(compute)}});
    double step = *steps > 1 ? (*end - *start) / double(*steps - 1) : 0.0;
    Value low = c.scalar("aten.add.Scalar", c.scalar("aten.mul.Scalar", index, step), *start);
    Value high =
        c("aten.rsub.Scalar",
          {{"self", tensorValue(c.scalar(
                        "aten.mul.Scalar",
                        c("aten.rsub.Scalar", {{"self", tensorValue(index)},
                                               {"other", AtenValue::floating(double(*steps - 1))}}),
                        step))},
           {"other", AtenValue::floating(*end)}});
    Value values = c(
        "aten.where.self",
        {{"condition",
          tensorValue(c.scalar("aten.lt.Scalar", index, double(std::max<int64_t>(*steps / 2, 1))))},
         {"self", tensorValue(low)},
         {"other", tensorValue(high)}});
    if (result == compute)
      return c.result(values);
    return c.finish("aten._to_copy.default",
                    {{"self", tensorValue(values)}, {"dtype", AtenValue::dtype(result)}});
  }
  bool cdist = op == "cdist" || op == "_cdist_forward";
  FailureOr<Value> x = args.tensor(cdist                  ? "x1"
                                   : op == "searchsorted" ? "sorted_sequence"
                                                          : "self");
  if (failed(x))
    return failure();
  int64_t rank = rankOf(*x);
  if (op == "sgn")
    return c.finish("aten.sign.default", {{"self", tensorValue(*x)}});
  if (op == "erfinv") {
    // w = -log((1 - x)(1 + x)); p(w - 2.5) below 5, else q(sqrt(w) - 3); erfinv = p x.
    Value w = c.unary(
        "aten.neg.default",
        c.unary("aten.log.default", c.binary("aten.mul.Tensor", c.scalar("aten.rsub.Scalar", *x, 1),
                                             c.scalar("aten.add.Scalar", *x, 1))));
    auto polynomial = [&](Value t, llvm::ArrayRef<double> coefficients) {
      Value p = c("aten.full_like.default",
                  {{"self", tensorValue(t)}, {"fill_value", AtenValue::floating(coefficients[0])}});
      for (double coefficient : coefficients.drop_front())
        p = c.scalar("aten.add.Scalar", c.binary("aten.mul.Tensor", p, t), coefficient);
      return p;
    };
    Value central =
        polynomial(c.scalar("aten.sub.Scalar", w, 2.5),
                   {2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087,
                    -0.00125372503, -0.00417768164, 0.246640727, 1.50140941});
    // The tail's square root of w at 5 or more, which is where it is used: below, w may
    // be -0 or a rounding below it (x near 0), whose sqrt has an infinite or NaN
    // derivative that the where's zero gradient would turn into NaN.
    Value tailW = c.clampMin(w, 5);
    Value tail = polynomial(c.scalar("aten.sub.Scalar", c.unary("aten.sqrt.default", tailW), 3),
                            {-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844,
                             0.00573950773, -0.0076224613, 0.00943887047, 1.00167406, 2.83297682});
    Value p = c("aten.where.self", {{"condition", tensorValue(c.scalar("aten.lt.Scalar", w, 5))},
                                    {"self", tensorValue(central)},
                                    {"other", tensorValue(tail)}});
    Value approximation = c.binary("aten.mul.Tensor", p, *x);
    Value infinite = c.scalar("aten.mul.Scalar", c.unary("aten.sign.default", *x),
                              std::numeric_limits<double>::infinity());
    Value edge = c.scalar("aten.eq.Scalar", c.unary("aten.abs.default", *x), 1);
    return c.finish("aten.where.self", {{"condition", tensorValue(edge)},
                                        {"self", tensorValue(infinite)},
                                        {"other", tensorValue(approximation)}});
  }
  if (op == "kron") {
    FailureOr<Value> y = args.tensor("other");
    if (failed(y))
      return failure();
    // Both at the larger rank; a as [a0, 1, a1, 1, ...], b as [1, b0, 1, b1, ...].
    int64_t n = std::max(rank, rankOf(*y));
    auto padded = [&](Value v) {
      ArrayRef<AffineExpr> sizes = cast<BaseTensorType>(v.getType()).getSizes();
      SmallVector<AffineExpr> full(n - sizes.size(), constant(1));
      full.append(sizes.begin(), sizes.end());
      return full;
    };
    SmallVector<AffineExpr> a = padded(*x), b = padded(*y), left, right, product;
    for (int64_t d = 0; d < n; ++d) {
      left.append({a[d], constant(1)});
      right.append({constant(1), b[d]});
      product.push_back(a[d] * b[d]);
    }
    auto view = [&](Value v, SmallVector<AffineExpr> sizes) {
      return c("aten.reshape.default",
               {{"self", tensorValue(v)}, {"shape", AtenValue::ints(sizes)}});
    };
    return c.finish(
        "aten.reshape.default",
        {{"self", tensorValue(c.binary("aten.mul.Tensor", view(*x, left), view(*y, right)))},
         {"shape", AtenValue::ints(product)}});
  }
  if (cdist) {
    FailureOr<Value> y = args.tensor("x2");
    FailureOr<double> p = args.number("p", 2.0);
    if (failed(y) || failed(p))
      return failure();
    if (rank < 2 || rankOf(*y) < 2)
      return emitError() << "cdist needs tensors of at least 2 dimensions";
    if (*p < 0)
      return emitError() << "cdist only supports non-negative p values";
    Value difference =
        c.binary("aten.sub.Tensor",
                 c("aten.unsqueeze.default",
                   {{"self", tensorValue(*x)}, {"dim", AtenValue::integer(constant(-2))}}),
                 c("aten.unsqueeze.default",
                   {{"self", tensorValue(*y)}, {"dim", AtenValue::integer(constant(-3))}}));
    return c.finish(
        "aten.linalg_vector_norm.default",
        {{"self", tensorValue(difference)}, {"ord", AtenValue::floating(*p)}, {"dim", dims({-1})}});
  }
  if (op == "linalg_cross" || op == "cross") {
    FailureOr<Value> y = args.tensor("other");
    if (failed(y))
      return failure();
    ArrayRef<AffineExpr> sizes = cast<BaseTensorType>(x->getType()).getSizes();
    std::optional<int64_t> dim;
    if (args.find("dim")) {
      FailureOr<int64_t> given = args.integer("dim", std::nullopt);
      if (failed(given))
        return failure();
      dim = wrappedDim(*given, rank);
    } else if (op == "linalg_cross") {
      dim = wrappedDim(-1, rank);
    } else {
      for (int64_t d = 0; d < rank && !dim; ++d)
        if (getConstantSize(sizes[d]) == 3)
          dim = d;
    }
    if (!dim || getConstantSize(sizes[*dim]) != 3)
      return emitError() << op << ": the dimension must have size 3";
    auto roll = [&](Value v, int64_t shift) {
      return c("aten.roll.default",
               {{"self", tensorValue(v)}, {"shifts", dims({shift})}, {"dims", dims({*dim})}});
    };
    return c.finish(
        "aten.sub.Tensor",
        {{"self", tensorValue(c.binary("aten.mul.Tensor", roll(*x, -1), roll(*y, -2)))},
         {"other", tensorValue(c.binary("aten.mul.Tensor", roll(*x, -2), roll(*y, -1)))}});
  }
  if (op == "renorm") {
    FailureOr<double> p = args.number("p", std::nullopt);
    FailureOr<int64_t> dim = args.integer("dim", std::nullopt);
    FailureOr<double> maxnorm = args.number("maxnorm", std::nullopt);
    if (failed(p) || failed(dim) || failed(maxnorm))
      return failure();
    std::optional<int64_t> kept = wrappedDim(*dim, rank);
    if (!kept || *p <= 0 || *maxnorm < 0)
      return emitError() << "renorm needs a dim of self, p > 0 and maxnorm >= 0";
    SmallVector<int64_t> others;
    for (int64_t d = 0; d < rank; ++d)
      if (d != *kept)
        others.push_back(d);
    Value norms = c("aten.linalg_vector_norm.default", {{"self", tensorValue(*x)},
                                                        {"ord", AtenValue::floating(*p)},
                                                        {"dim", dims(others)},
                                                        {"keepdim", AtenValue::boolean(true)}});
    Value scale = c("aten.reciprocal.default",
                    {{"self", tensorValue(c.scalar("aten.add.Scalar", norms, 1e-7))}});
    Value factor = c("aten.where.self",
                     {{"condition", tensorValue(c.scalar("aten.gt.Scalar", norms, *maxnorm))},
                      {"self", tensorValue(c.scalar("aten.mul.Scalar", scale, *maxnorm))},
                      {"other", tensorValue(c.unary("aten.ones_like.default", norms))}});
    return c.finish("aten.mul.Tensor", {{"self", tensorValue(*x)}, {"other", tensorValue(factor)}});
  }
  if (op == "bucketize" || op == "searchsorted") {
    FailureOr<Value> values = op == "bucketize" ? x : args.tensor("self");
    FailureOr<Value> sequence = op == "bucketize" ? args.tensor("boundaries") : x;
    if (failed(values) || failed(sequence))
      return failure();
    bool right = args.flag("right", false);
    if (const AtenValue *side = args.find("side"); side && side->kind == AtenValue::Kind::String)
      right = side->string == "right";
    if (args.find("sorter"))
      return emitError() << op << " with a sorter is not supported";
    int64_t sequenceRank = rankOf(*sequence);
    if (sequenceRank == 0 || (sequenceRank > 1 && sequenceRank != rankOf(*values)))
      return emitError() << op
                         << " needs a 1-d sequence, or one with the values' leading dimensions";
    // values[..., None] against the sequence (1-d, or [..., 1, M] along the values' rows).
    Value column = c("aten.unsqueeze.default",
                     {{"self", tensorValue(*values)}, {"dim", AtenValue::integer(constant(-1))}});
    Value rows = sequenceRank == 1
                     ? *sequence
                     : c("aten.unsqueeze.default", {{"self", tensorValue(*sequence)},
                                                    {"dim", AtenValue::integer(constant(-2))}});
    Value below = c.binary(right ? "aten.le.Tensor" : "aten.lt.Tensor", rows, column);
    Type index =
        args.flag("out_int32", false) ? builder.getIntegerType(32) : builder.getIntegerType(64);
    return c.finish(
        "aten.sum.dim_IntList",
        {{"self", tensorValue(below)}, {"dim", dims({-1})}, {"dtype", AtenValue::dtype(index)}});
  }
  if (op == "round") {
    FailureOr<int64_t> decimals = args.integer("decimals", 0);
    if (failed(decimals))
      return failure();
    if (*decimals == 0)
      return c.finish("aten.round.default", {{"self", tensorValue(*x)}});
    double scale = std::pow(10.0, std::abs(*decimals));
    bool negative = *decimals < 0;
    Value scaled = c.scalar(negative ? "aten.div.Scalar" : "aten.mul.Scalar", *x, scale);
    return c.finish(negative ? "aten.mul.Scalar" : "aten.div.Scalar",
                    {{"self", tensorValue(c.unary("aten.round.default", scaled))},
                     {"other", AtenValue::floating(scale)}});
  }
  if (op == "linalg_matrix_norm") {
    SmallVector<int64_t> matrix{-2, -1};
    if (const AtenValue *dim = args.find("dim")) {
      if (dim->kind != AtenValue::Kind::Ints || dim->sizes.size() != 2)
        return emitError() << "linalg_matrix_norm needs two dims";
      for (auto [i, size] : llvm::enumerate(dim->sizes)) {
        std::optional<int64_t> d = getConstantSize(size);
        if (!d)
          return emitError() << "linalg_matrix_norm needs constant dims";
        matrix[i] = *d;
      }
    }
    std::optional<int64_t> rows = wrappedDim(matrix[0], rank),
                           columns = wrappedDim(matrix[1], rank);
    if (rank < 2 || !rows || !columns || *rows == *columns)
      return emitError() << "linalg_matrix_norm needs two different dims of a matrix";
    bool keepdim = args.flag("keepdim", false);
    std::string ord = "fro";
    if (const AtenValue *given = args.find("ord")) {
      if (given->kind == AtenValue::Kind::String) {
        ord = given->string;
      } else {
        FailureOr<double> number = args.number("ord", std::nullopt);
        if (failed(number))
          return failure();
        ord = std::isinf(*number) ? (*number > 0 ? "inf" : "-inf")
                                  : std::to_string(static_cast<int64_t>(*number));
        if (*number != std::trunc(*number) && !std::isinf(*number))
          ord = "?";
      }
    }
    if (ord == "fro")
      return c.finish("aten.linalg_vector_norm.default",
                      {{"self", tensorValue(*x)},
                       {"ord", AtenValue::floating(2)},
                       {"dim", dims({*rows, *columns})},
                       {"keepdim", AtenValue::boolean(keepdim)}});
    if (ord != "1" && ord != "-1" && ord != "inf" && ord != "-inf")
      return emitError() << "linalg_matrix_norm: ord " << ord
                         << " is not supported (tgc has 'fro', 1, -1, inf and -inf; 'nuc' and 2 "
                            "need singular values)";
    // 1: the sums over rows (one per column); inf: over columns. Then the extreme one.
    bool byColumn = ord == "1" || ord == "-1";
    int64_t summed = byColumn ? *rows : *columns, extreme = byColumn ? *columns : *rows;
    Value sums = c("aten.sum.dim_IntList", {{"self", tensorValue(c.unary("aten.abs.default", *x))},
                                            {"dim", dims({summed})},
                                            {"keepdim", AtenValue::boolean(true)}});
    Value norm = c(ord.front() == '-' ? "aten.amin.default" : "aten.amax.default",
                   {{"self", tensorValue(sums)},
                    {"dim", dims({extreme})},
                    {"keepdim", AtenValue::boolean(true)}});
    if (keepdim)
      return c.result(norm);
    return c.finish("aten.squeeze.dims",
                    {{"self", tensorValue(norm)}, {"dim", dims({*rows, *columns})}});
  }
  if (op == "linalg_norm") {
    // A matrix norm for a str ord, two dims, or a numeric ord of a matrix without dims;
    // else the vector norm (2 without ord) over dim, or over every entry.
    const AtenValue *ord = args.find("ord");
    const AtenValue *dim = args.find("dim");
    bool stringOrd = ord && ord->kind == AtenValue::Kind::String;
    bool matrix = stringOrd ||
                  (dim && dim->kind == AtenValue::Kind::Ints && dim->sizes.size() == 2) ||
                  (ord && !dim && rank == 2);
    if (ord && !dim && !matrix && rank != 1)
      return emitError() << "linalg.norm: input must be 1-D or 2-D when ord is given and dim "
                            "is None";
    std::vector<AtenArgument> forwarded;
    for (const AtenArgument &argument : arguments)
      if (argument.value.kind != AtenValue::Kind::None)
        forwarded.push_back(argument);
    if (matrix)
      return c.finish(stringOrd || !ord ? "aten.linalg_matrix_norm.str_ord"
                                        : "aten.linalg_matrix_norm.default",
                      std::move(forwarded));
    if (!ord)
      forwarded.push_back({"ord", AtenValue::floating(2)});
    return c.finish("aten.linalg_vector_norm.default", std::move(forwarded));
  }
  return emitError() << op << " is not a composite math op";
}

//===----------------------------------------------------------------------===//
// Composites of several results
//===----------------------------------------------------------------------===//

AtenCallBuilder::MultiCompositeBuilder AtenCallBuilder::findMultiComposite(llvm::StringRef target) {
  static const std::pair<llvm::StringLiteral, MultiCompositeBuilder> kComposites[] = {
      {"aten.std_mean.correction", &AtenCallBuilder::buildMoments},
      {"aten.std_mean.dim", &AtenCallBuilder::buildMoments},
      {"aten.std_mean.default", &AtenCallBuilder::buildMoments},
      {"aten.var_mean.correction", &AtenCallBuilder::buildMoments},
      {"aten.var_mean.dim", &AtenCallBuilder::buildMoments},
      {"aten.var_mean.default", &AtenCallBuilder::buildMoments},
      {"aten.aminmax.default", &AtenCallBuilder::buildAminmax},
      {"aten.median.dim", &AtenCallBuilder::buildOrderStatistic},
      {"aten.nanmedian.dim", &AtenCallBuilder::buildOrderStatistic},
      {"aten.kthvalue.default", &AtenCallBuilder::buildOrderStatistic}};
  return lookupBuilder(kComposites, target);
}

/// std_mean / var_mean(self, dim, unbiased or correction, keepdim): std (var) as
/// aten.std (aten.var) computes it, and mean over the same dims.
FailureOr<SmallVector<Value>> AtenCallBuilder::buildMoments(Location loc, llvm::StringRef target,
                                                            std::vector<AtenArgument> arguments,
                                                            const ErrorFn &emitError) {
  auto [op, overload] = target.drop_front(5).rsplit('.');
  std::string spread = (op.starts_with("std") ? "aten.std." : "aten.var.") +
                       (overload == "correction" ? std::string("correction") : "dim");
  std::vector<AtenArgument> meanArguments;
  for (const AtenArgument &argument : arguments)
    if (argument.name == "self" || argument.name == "dim" || argument.name == "keepdim")
      meanArguments.push_back(argument);
  FailureOr<Value> deviation = buildValue(loc, spread, std::move(arguments), emitError);
  if (failed(deviation))
    return failure();
  FailureOr<Value> mean = buildValue(loc, "aten.mean.dim", std::move(meanArguments), emitError);
  if (failed(mean))
    return failure();
  return SmallVector<Value>{*deviation, *mean};
}

/// aminmax(self, *, dim=None, keepdim=False): (amin, amax) over dim (all of them when
/// None), NaN where a NaN is.
FailureOr<SmallVector<Value>> AtenCallBuilder::buildAminmax(Location loc, llvm::StringRef target,
                                                            std::vector<AtenArgument> arguments,
                                                            const ErrorFn &emitError) {
  NamedArguments args("aminmax", arguments, emitError);
  FailureOr<Value> x = args.tensor("self");
  if (failed(x))
    return failure();
  std::vector<AtenArgument> reduced{{"self", tensorValue(*x)},
                                    {"keepdim", AtenValue::boolean(args.flag("keepdim", false))}};
  if (const AtenValue *dim = args.find("dim")) {
    if (dim->kind != AtenValue::Kind::Int)
      return emitError() << "aminmax: argument 'dim' must be an int";
    reduced.push_back({"dim", AtenValue::ints({dim->size})});
  }
  OpChain c(*this, loc, emitError);
  Value min = c("aten.amin.default", reduced), max = c("aten.amax.default", reduced);
  if (!min || !max)
    return failure();
  return SmallVector<Value>{min, max};
}

/// median.dim / nanmedian.dim / kthvalue(self, k, dim=-1, keepdim=False): (values,
/// indices) at one position of a stable ascending sort along dim, where NaN sorts last.
/// kthvalue takes position k - 1; median the lower middle, (n - 1) / 2, or the first NaN
/// where there is one (eager's value NaN and that NaN's index); nanmedian the lower middle
/// of the numbers, (count - 1) / 2.
FailureOr<SmallVector<Value>>
AtenCallBuilder::buildOrderStatistic(Location loc, llvm::StringRef target,
                                     std::vector<AtenArgument> arguments,
                                     const ErrorFn &emitError) {
  llvm::StringRef op = target.drop_front(5).split('.').first;
  NamedArguments args(op, arguments, emitError);
  OpChain c(*this, loc, emitError);
  MLIRContext *ctx = builder.getContext();
  FailureOr<Value> x = args.tensor("self");
  FailureOr<int64_t> dim =
      args.integer("dim", op == "kthvalue" ? std::optional<int64_t>(-1) : std::nullopt);
  if (failed(x) || failed(dim))
    return failure();
  bool keepdim = args.flag("keepdim", false);
  int64_t rank = rankOf(*x);
  std::optional<int64_t> d = wrappedDim(*dim, rank);
  if (!d)
    return emitError() << op << ": dim " << *dim << " is out of range for a " << rank
                       << "-d tensor";
  // A 0-d tensor is one row of one.
  Value input = *x;
  if (rank == 0) {
    input =
        c("aten.unsqueeze.default",
          {{"self", tensorValue(*x)}, {"dim", AtenValue::integer(getAffineConstantExpr(0, ctx))}});
    keepdim = false;
  }
  AtenValue along = AtenValue::integer(getAffineConstantExpr(*d, ctx));
  FailureOr<Operation *> sort = input ? build(loc, "aten.sort.stable",
                                              {{"self", tensorValue(input)},
                                               {"stable", AtenValue::boolean(true)},
                                               {"dim", along},
                                               {"descending", AtenValue::boolean(false)}},
                                              2, emitError)
                                      : FailureOr<Operation *>(failure());
  if (failed(sort))
    return failure();
  Value sorted = (*sort)->getResult(0), order = (*sort)->getResult(1);
  SmallVector<Value> results;
  if (op == "kthvalue") {
    FailureOr<int64_t> k = args.integer("k", std::nullopt);
    if (failed(k))
      return failure();
    std::optional<int64_t> n =
        getConstantSize(cast<BaseTensorType>(input.getType()).getSizes()[*d]);
    if (*k < 1 || (n && *k > *n))
      return emitError() << "kthvalue(): selected number k out of range for dimension " << *dim;
    for (Value v : {sorted, order}) {
      Value picked =
          c("aten.select.int", {{"self", tensorValue(v)},
                                {"dim", along},
                                {"index", AtenValue::integer(getAffineConstantExpr(*k - 1, ctx))}});
      results.push_back(
          keepdim ? c("aten.unsqueeze.default", {{"self", tensorValue(picked)}, {"dim", along}})
                  : picked);
    }
  } else {
    // Counts along dim (int64, kept as a dim of 1): the NaNs and all entries.
    auto count = [&](Value mask) {
      return c("aten.sum.dim_IntList", {{"self", tensorValue(mask)},
                                        {"dim", constantInts(ctx, {*d})},
                                        {"keepdim", AtenValue::boolean(true)},
                                        {"dtype", AtenValue::dtype(builder.getIntegerType(64))}});
    };
    Value nan = c.unary("aten.isnan.default", input);
    Value nans = count(nan);
    Value numbers = count(c.unary("aten.logical_not.default", nan));
    auto lowerMiddle = [&](Value n) {
      return c.clampMin(
          c("aten.div.Scalar_mode", {{"self", tensorValue(c.scalar("aten.sub.Scalar", n, 1))},
                                     {"other", AtenValue::floating(2)},
                                     {"rounding_mode", AtenValue::str("floor")}}),
          0);
    };
    Value position;
    if (op == "nanmedian") {
      position = lowerMiddle(numbers);
    } else {
      Value all = c.binary("aten.add.Tensor", numbers, nans);
      position =
          c("aten.where.self", {{"condition", tensorValue(c.scalar("aten.gt.Scalar", nans, 0))},
                                {"self", tensorValue(numbers)},
                                {"other", tensorValue(lowerMiddle(all))}});
    }
    if (position)
      position =
          c("aten._to_copy.default", {{"self", tensorValue(position)},
                                      {"dtype", AtenValue::dtype(builder.getIntegerType(64))}});
    for (Value v : {sorted, order}) {
      Value picked =
          c("aten.gather.default",
            {{"self", tensorValue(v)}, {"dim", along}, {"index", tensorValue(position)}});
      results.push_back(
          keepdim ? picked
                  : c("aten.squeeze.dim", {{"self", tensorValue(picked)}, {"dim", along}}));
    }
  }
  if (!results[0] || !results[1])
    return failure();
  return results;
}

std::optional<std::string> AtenCallBuilder::functionalOverload(llvm::StringRef target) {
  if (!target.consume_back(".out"))
    return std::nullopt;
  for (llvm::StringRef overload : {".default", ".Tensor", ".Scalar"}) {
    std::string name = (target + overload).str();
    if (hasOp(name))
      return name;
  }
  return std::nullopt;
}

/// im2col(self [N, C, H, W] or [C, H, W], kernel_size, dilation, padding, stride):
/// [N, C * kh * kw, oh * ow], the window elements of each output position in (channel,
/// kernel row, kernel column) order. Built as one strided slice of the padded input per
/// kernel offset, stacked after the channel and flattened; its derivative is theirs.
FailureOr<Operation *> AtenCallBuilder::buildIm2col(Location loc, llvm::StringRef target,
                                                    std::vector<AtenArgument> arguments,
                                                    const ErrorFn &emitError) {
  MLIRContext *ctx = builder.getContext();
  Value x;
  llvm::StringMap<std::array<int64_t, 2>> pairs = {
      {"kernel_size", {0, 0}}, {"dilation", {1, 1}}, {"padding", {0, 0}}, {"stride", {1, 1}}};
  for (const AtenArgument &argument : arguments) {
    const AtenValue &value = argument.value;
    if (argument.name == "self" && value.kind == AtenValue::Kind::Tensor) {
      x = value.values.front();
      continue;
    }
    auto pair = pairs.find(argument.name);
    SmallVector<AffineExpr> exprs;
    if (value.kind == AtenValue::Kind::Int)
      exprs = {value.size, value.size};
    else if (value.kind == AtenValue::Kind::Ints && value.sizes.size() == 1)
      exprs = {value.sizes[0], value.sizes[0]};
    else if (value.kind == AtenValue::Kind::Ints)
      exprs.assign(value.sizes.begin(), value.sizes.end());
    if (pair == pairs.end() || exprs.size() != 2 || !getConstantSize(exprs[0]) ||
        !getConstantSize(exprs[1]))
      return emitError() << "im2col: argument '" << argument.name
                         << "' must be one or two constant ints";
    pair->second = {*getConstantSize(exprs[0]), *getConstantSize(exprs[1])};
  }
  auto type = x ? llvm::dyn_cast<BaseTensorType>(x.getType()) : BaseTensorType();
  if (!type || (type.getRank() != 3 && type.getRank() != 4))
    return emitError() << "im2col needs a 3-d or 4-d tensor 'self'";
  auto [kh, kw] = pairs["kernel_size"];
  auto [dh, dw] = pairs["dilation"];
  auto [ph, pw] = pairs["padding"];
  auto [sh, sw] = pairs["stride"];
  if (kh <= 0 || kw <= 0 || dh <= 0 || dw <= 0 || sh <= 0 || sw <= 0 || ph < 0 || pw < 0)
    return emitError() << "im2col: kernel_size, dilation and stride must be positive and "
                          "padding not negative";
  auto call = [&](llvm::StringRef callee, std::vector<AtenArgument> args) {
    return buildValue(loc, callee, std::move(args), emitError);
  };
  auto constant = [&](int64_t v) { return getAffineConstantExpr(v, ctx); };
  bool batched = type.getRank() == 4;
  SmallVector<AffineExpr> sizes(type.getSizes());
  if (!batched) {
    sizes.insert(sizes.begin(), constant(1));
    FailureOr<Value> viewed = call(
        "aten.view.default", {{"self", AtenValue::tensor(x)}, {"size", AtenValue::ints(sizes)}});
    if (failed(viewed))
      return failure();
    x = *viewed;
  }
  AffineExpr oh = (sizes[2] + 2 * ph - dh * (kh - 1) - 1).floorDiv(sh) + 1;
  AffineExpr ow = (sizes[3] + 2 * pw - dw * (kw - 1) - 1).floorDiv(sw) + 1;
  if (getConstantSize(oh).value_or(1) <= 0 || getConstantSize(ow).value_or(1) <= 0)
    return emitError() << "im2col: the kernel does not fit the padded input";
  if (ph || pw) {
    FailureOr<Value> padded =
        call("aten.constant_pad_nd.default",
             {{"self", AtenValue::tensor(x)},
              {"pad", AtenValue::ints({constant(pw), constant(pw), constant(ph), constant(ph)})},
              {"value", AtenValue::floating(0)}});
    if (failed(padded))
      return failure();
    x = *padded;
  }
  auto slice = [&](Value v, int64_t dim, int64_t start, AffineExpr count,
                   int64_t step) -> FailureOr<Value> {
    AffineExpr end = (count - 1) * step + start + 1;
    return call("aten.slice.Tensor", {{"self", AtenValue::tensor(v)},
                                      {"dim", AtenValue::integer(constant(dim))},
                                      {"start", AtenValue::integer(constant(start))},
                                      {"end", AtenValue::integer(end)},
                                      {"step", AtenValue::integer(constant(step))}});
  };
  SmallVector<Value> windows;
  for (int64_t i = 0; i < kh; ++i)
    for (int64_t j = 0; j < kw; ++j) {
      FailureOr<Value> rows = slice(x, 2, i * dh, oh, sh);
      FailureOr<Value> window = succeeded(rows) ? slice(*rows, 3, j * dw, ow, sw) : rows;
      if (failed(window))
        return failure();
      windows.push_back(*window);
    }
  FailureOr<Value> stacked = call("aten.stack.default", {{"tensors", AtenValue::tensors(windows)},
                                                         {"dim", AtenValue::integer(constant(2))}});
  if (failed(stacked))
    return failure();
  SmallVector<AffineExpr> result = {sizes[1] * (kh * kw), oh * ow};
  if (batched)
    result.insert(result.begin(), sizes[0]);
  return build(loc, "aten.view.default",
               {{"self", AtenValue::tensor(*stacked)}, {"size", AtenValue::ints(result)}}, 1,
               emitError);
}

/// take(self, index): self flattened, indexed by `index` (negative positions count from
/// the end, as index.Tensor's do).
FailureOr<Operation *> AtenCallBuilder::buildTake(Location loc, llvm::StringRef target,
                                                  std::vector<AtenArgument> arguments,
                                                  const ErrorFn &emitError) {
  Value self, index;
  for (const AtenArgument &argument : arguments)
    if (argument.value.kind == AtenValue::Kind::Tensor)
      (argument.name == "self" ? self : index) = argument.value.values.front();
  auto type = self ? llvm::dyn_cast<BaseTensorType>(self.getType()) : BaseTensorType();
  if (!type || !index)
    return emitError() << "take needs the tensors 'self' and 'index'";
  AffineExpr numel = getAffineConstantExpr(1, builder.getContext());
  for (AffineExpr size : type.getSizes())
    numel = numel * size;
  FailureOr<Value> flat = buildValue(
      loc, "aten.view.default",
      {{"self", AtenValue::tensor(self)}, {"size", AtenValue::ints({numel})}}, emitError);
  if (failed(flat))
    return failure();
  return build(loc, "aten.index.Tensor",
               {{"self", AtenValue::tensor(*flat)}, {"indices", AtenValue::tensors({index})}}, 1,
               emitError);
}

/// max_pool1d(self [N, C, L] or [C, L], kernel_size, stride, padding, dilation,
/// ceil_mode): max_pool2d over the input viewed with a height of 1, whose window is 1
/// high (stride 1, no padding, dilation 1 along it).
FailureOr<Operation *> AtenCallBuilder::buildMaxPool1d(Location loc, llvm::StringRef target,
                                                       std::vector<AtenArgument> arguments,
                                                       const ErrorFn &emitError) {
  MLIRContext *ctx = builder.getContext();
  Value self;
  std::vector<AtenArgument> pool;
  for (const AtenArgument &argument : arguments) {
    const AtenValue &value = argument.value;
    if (argument.name == "self" && value.kind == AtenValue::Kind::Tensor) {
      self = value.values.front();
      continue;
    }
    if (argument.name == "ceil_mode") {
      pool.push_back(argument);
      continue;
    }
    // One int (or a one-element list) along the length; the height's is fixed.
    SmallVector<AffineExpr> along;
    if (value.kind == AtenValue::Kind::Int)
      along = {value.size};
    else if (value.kind == AtenValue::Kind::Ints)
      along.assign(value.sizes.begin(), value.sizes.end());
    if (along.empty() && argument.name == "stride")
      continue; // the default: the kernel size
    if (along.size() != 1)
      return emitError() << "max_pool1d: argument '" << argument.name << "' must be one int";
    int64_t height = argument.name == "padding" ? 0 : 1;
    pool.push_back(
        {argument.name, AtenValue::ints({getAffineConstantExpr(height, ctx), along[0]})});
  }
  auto type = self ? llvm::dyn_cast<BaseTensorType>(self.getType()) : BaseTensorType();
  if (!type || (type.getRank() != 2 && type.getRank() != 3))
    return emitError() << "max_pool1d needs a 2-d or 3-d tensor 'self'";
  // [N, C, L] (a batch of 1 for an unbatched input) viewed [N, C, 1, L].
  SmallVector<AffineExpr> sizes(type.getSizes());
  if (type.getRank() == 2)
    sizes.insert(sizes.begin(), getAffineConstantExpr(1, ctx));
  SmallVector<AffineExpr> image(sizes);
  image.insert(image.begin() + 2, getAffineConstantExpr(1, ctx));
  FailureOr<Value> viewed =
      buildValue(loc, "aten.view.default",
                 {{"self", AtenValue::tensor(self)}, {"size", AtenValue::ints(image)}}, emitError);
  if (failed(viewed))
    return failure();
  pool.insert(pool.begin(), {"self", AtenValue::tensor(*viewed)});
  FailureOr<Value> pooled = buildValue(loc, "aten.max_pool2d.default", pool, emitError);
  if (failed(pooled))
    return failure();
  SmallVector<AffineExpr> result(llvm::cast<BaseTensorType>(pooled->getType()).getSizes());
  result.erase(result.begin() + 2);
  if (type.getRank() == 2)
    result.erase(result.begin());
  return build(loc, "aten.view.default",
               {{"self", AtenValue::tensor(*pooled)}, {"size", AtenValue::ints(result)}}, 1,
               emitError);
}

/// `self.uniform_(from=0, to=1)`, `self.normal_(mean=0, std=1)` and
/// `self.exponential_(lambd=1)`: a draw of the instance's generator like `self`
/// (rand_like, randn_like) made into the distribution (`from + (to - from) u`,
/// `mean + std n`, `-log1p(-u) / lambd`) and copied into `self`, which is the result.
/// A `generator` argument is not supported.
FailureOr<Operation *> AtenCallBuilder::buildRandomFill(Location loc, llvm::StringRef target,
                                                        std::vector<AtenArgument> arguments,
                                                        const ErrorFn &emitError) {
  Value self;
  llvm::StringMap<double> parameters;
  for (const AtenArgument &argument : arguments) {
    const AtenValue &value = argument.value;
    if (argument.name == "self" && value.kind == AtenValue::Kind::Tensor) {
      self = value.values.front();
    } else if (argument.name == "generator" && value.kind == AtenValue::Kind::None) {
      continue;
    } else if (value.kind == AtenValue::Kind::Float && value.values.empty()) {
      parameters[argument.name] = value.floatValue;
    } else if (value.kind == AtenValue::Kind::Int && getConstantSize(value.size)) {
      parameters[argument.name] = static_cast<double>(*getConstantSize(value.size));
    } else {
      return emitError() << target << ": argument '" << argument.name
                         << "' must be a constant number (an explicit generator is not "
                            "supported)";
    }
  }
  if (!self)
    return emitError() << target << " needs a tensor 'self'";
  auto parameter = [&](llvm::StringRef name, double fallback) {
    auto it = parameters.find(name);
    return it == parameters.end() ? fallback : it->second;
  };
  auto call = [&](llvm::StringRef callee, std::vector<AtenArgument> args) {
    return buildValue(loc, callee, std::move(args), emitError);
  };
  auto affine = [&](Value v, double scale, double shift) -> FailureOr<Value> {
    FailureOr<Value> scaled =
        scale == 1 ? FailureOr<Value>(v)
                   : call("aten.mul.Tensor",
                          {{"self", AtenValue::tensor(v)}, {"other", AtenValue::floating(scale)}});
    if (failed(scaled) || shift == 0)
      return scaled;
    return call("aten.add.Tensor",
                {{"self", AtenValue::tensor(*scaled)}, {"other", AtenValue::floating(shift)}});
  };
  bool normal = target == "aten.normal_.default";
  FailureOr<Value> draw = call(normal ? "aten.randn_like.default" : "aten.rand_like.default",
                               {{"self", AtenValue::tensor(self)}});
  if (failed(draw))
    return failure();
  FailureOr<Value> sample = failure();
  if (normal) {
    sample = affine(*draw, parameter("std", 1), parameter("mean", 0));
  } else if (target == "aten.uniform_.default") {
    double from = parameter("from", 0), to = parameter("to", 1);
    sample = affine(*draw, to - from, from);
  } else {
    double lambd = parameter("lambd", 1);
    if (lambd <= 0)
      return emitError() << "exponential_: lambd must be positive";
    FailureOr<Value> negated = affine(*draw, -1, 0);
    FailureOr<Value> log = succeeded(negated)
                               ? call("aten.log1p.default", {{"self", AtenValue::tensor(*negated)}})
                               : negated;
    sample = succeeded(log) ? affine(*log, -1 / lambd, 0) : log;
  }
  if (failed(sample))
    return failure();
  return build(loc, "aten.copy_.default",
               {{"self", AtenValue::tensor(self)}, {"src", AtenValue::tensor(*sample)}}, 1,
               emitError);
}

/// `dim` of a `rank`-d tensor counted from the front (a negative one counts from the
/// end), or an error naming `op`.
static FailureOr<int64_t> wrapDim(int64_t dim, int64_t rank, llvm::StringRef op,
                                  const AtenCallBuilder::ErrorFn &emitError) {
  if (dim < -rank || dim >= rank)
    return emitError() << op << ": dim " << dim << " is out of range for a " << rank << "-d tensor";
  return dim < 0 ? dim + rank : dim;
}

/// Tensor.unfold(dimension, size, step): the windows of `size` entries every `step` along
/// `dimension`, which becomes their count n = (length - size) / step + 1, with a new last
/// dimension of `size`. One gather by the constant positions [n, size] (i * step + k),
/// whose result dimensions [n, size] stand where `dimension` was; the window dimension
/// then moves last. Its derivative is index's (windows that overlap add up).
FailureOr<Operation *> AtenCallBuilder::buildUnfold(Location loc, llvm::StringRef target,
                                                    std::vector<AtenArgument> arguments,
                                                    const ErrorFn &emitError) {
  MLIRContext *ctx = builder.getContext();
  Value self;
  llvm::StringMap<int64_t> ints;
  for (const AtenArgument &argument : arguments) {
    const AtenValue &value = argument.value;
    if (argument.name == "self" && value.kind == AtenValue::Kind::Tensor)
      self = value.values.front();
    else if (value.kind == AtenValue::Kind::Int && value.values.empty() &&
             getConstantSize(value.size))
      ints[argument.name] = *getConstantSize(value.size);
    else
      return emitError() << "unfold: argument '" << argument.name
                         << "' must be a tensor (self) or a constant int";
  }
  auto type = self ? llvm::dyn_cast<BaseTensorType>(self.getType()) : BaseTensorType();
  if (!type || !ints.count("dimension") || !ints.count("size") || !ints.count("step"))
    return emitError() << "unfold needs self, dimension, size and step";
  int64_t rank = type.getRank(), dim = ints["dimension"], size = ints["size"], step = ints["step"];
  // A 0-d tensor unfolds as one of one element.
  FailureOr<int64_t> wrapped = wrapDim(dim, std::max<int64_t>(rank, 1), "unfold", emitError);
  if (failed(wrapped))
    return failure();
  dim = *wrapped;
  std::optional<int64_t> length =
      rank == 0 ? std::optional<int64_t>(1) : getConstantSize(type.getSizes()[dim]);
  if (!length)
    return emitError() << "unfold of a dimension of symbolic size is not supported";
  if (step <= 0 || size < 0 || size > *length)
    return emitError() << "unfold: size " << size << " and step " << step
                       << " do not fit a dimension of " << *length;
  int64_t count = (*length - size) / step + 1;
  auto integer = [&](int64_t v) { return AtenValue::integer(getAffineConstantExpr(v, ctx)); };
  auto call = [&](llvm::StringRef callee, std::vector<AtenArgument> args) {
    return buildValue(loc, callee, std::move(args), emitError);
  };
  if (rank == 0) {
    FailureOr<Value> one = call("aten.view.default",
                                {{"self", AtenValue::tensor(self)}, {"size", AtenValue::ints({})}});
    if (failed(one))
      return failure();
    return build(loc, "aten.unsqueeze.default",
                 {{"self", AtenValue::tensor(*one)}, {"dim", integer(0)}}, 1, emitError);
  }
  // positions[i, k] = i * step + k
  FailureOr<Value> starts =
      call("aten.arange.start_step", {{"start", integer(0)},
                                      {"end", integer(count * step)},
                                      {"step", integer(step)},
                                      {"dtype", AtenValue::dtype(builder.getI64Type())}});
  FailureOr<Value> column = succeeded(starts)
                                ? call("aten.unsqueeze.default",
                                       {{"self", AtenValue::tensor(*starts)}, {"dim", integer(1)}})
                                : starts;
  FailureOr<Value> offsets =
      call("aten.arange.default",
           {{"end", integer(size)}, {"dtype", AtenValue::dtype(builder.getI64Type())}});
  if (failed(column) || failed(offsets))
    return failure();
  FailureOr<Value> positions = call("aten.add.Tensor", {{"self", AtenValue::tensor(*column)},
                                                        {"other", AtenValue::tensor(*offsets)}});
  if (failed(positions))
    return failure();
  FailureOr<Operation *> windows = buildIndexAlong(loc, self, dim, *positions, emitError);
  if (failed(windows))
    return failure();
  return build(loc, "aten.movedim.int",
               {{"self", AtenValue::tensor((*windows)->getResult(0))},
                {"source", integer(dim + 1)},
                {"destination", integer(-1)}},
               1, emitError);
}

/// narrow(self, dim, start, length) and narrow_copy: `length` entries of `dim` from
/// `start` (negative counts from the end). A constant start is a slice; one computed at run time
/// (an item()) gathers the positions start + arange(length), which count from the end as narrow's
/// do when start is negative. The length must be a constant: it is a size.
FailureOr<Operation *> AtenCallBuilder::buildNarrow(Location loc, llvm::StringRef target,
                                                    std::vector<AtenArgument> arguments,
                                                    const ErrorFn &emitError) {
  MLIRContext *ctx = builder.getContext();
  Value self;
  std::optional<int64_t> dim;
  std::optional<AtenValue> start, length;
  for (const AtenArgument &argument : arguments) {
    const AtenValue &value = argument.value;
    bool constantInt =
        value.kind == AtenValue::Kind::Int && value.values.empty() && getConstantSize(value.size);
    if (argument.name == "self" && value.kind == AtenValue::Kind::Tensor)
      self = value.values.front();
    else if (argument.name == "dim" && constantInt)
      dim = getConstantSize(value.size);
    else if (argument.name == "start" && value.kind == AtenValue::Kind::Int)
      start = value;
    else if (argument.name == "length" && value.kind == AtenValue::Kind::Int &&
             value.values.empty())
      length = value;
    else
      return emitError() << "narrow: argument '" << argument.name
                         << "' must be a tensor (self), a constant dim, an int start and a "
                            "length that is a size";
  }
  auto type = self ? llvm::dyn_cast<BaseTensorType>(self.getType()) : BaseTensorType();
  if (!type || !dim || !start || !length)
    return emitError() << "narrow needs self, dim, start and length";
  FailureOr<int64_t> wrapped = wrapDim(*dim, type.getRank(), "narrow", emitError);
  if (failed(wrapped))
    return failure();
  int64_t d = *wrapped;
  // narrow_copy: the same values in a tensor of their own, not a view.
  auto copyIfAsked = [&](Operation *view) -> FailureOr<Operation *> {
    if (target != "aten.narrow_copy.default")
      return view;
    return build(loc, "aten.clone.default",
                 {{"self", AtenValue::tensor(view->getResult(0))},
                  {"memory_format", AtenValue::memoryFormat(MemoryFormat::Contiguous)}},
                 1, emitError);
  };
  AffineExpr size = type.getSizes()[d];
  auto integer = [&](int64_t v) { return AtenValue::integer(getAffineConstantExpr(v, ctx)); };
  bool runtimeStart = !start->values.empty() || !getConstantSize(start->size);
  if (!runtimeStart || !getConstantSize(length->size)) {
    if (runtimeStart)
      return emitError() << "narrow: a start computed at run time needs a constant length";
    AffineExpr begin = start->size;
    if (getConstantSize(begin) && *getConstantSize(begin) < 0)
      begin = begin + size;
    FailureOr<Operation *> slice = build(loc, "aten.slice.Tensor",
                                         {{"self", AtenValue::tensor(self)},
                                          {"dim", integer(d)},
                                          {"start", AtenValue::integer(begin)},
                                          {"end", AtenValue::integer(begin + length->size)}},
                                         1, emitError);
    return succeeded(slice) ? copyIfAsked(*slice) : slice;
  }
  // A gather is a new tensor already (narrow_copy's too).
  return buildGatherRun(loc, self, d, *start, *getConstantSize(length->size), 1, emitError);
}

/// self.select(dim, n) with n computed at run time (an item(), or a size expression of
/// one): advanced indexing of `dim` by a 0-d int64 tensor filled with n, which drops the
/// dimension as select does. As for any tgc.index, a negative n counts from the end and
/// one outside the dimension reads a clamped position (the archive's `_assert_scalar`
/// range checks are not run). Its derivative is index's.
FailureOr<Operation *> AtenCallBuilder::buildRuntimeSelect(Location loc, llvm::StringRef target,
                                                           std::vector<AtenArgument> arguments,
                                                           const ErrorFn &emitError) {
  MLIRContext *ctx = builder.getContext();
  Value self;
  std::optional<AtenValue> index;
  std::optional<int64_t> dim;
  for (const AtenArgument &argument : arguments) {
    const AtenValue &value = argument.value;
    if (argument.name == "self" && value.kind == AtenValue::Kind::Tensor)
      self = value.values.front();
    else if (argument.name == "dim" && value.kind == AtenValue::Kind::Int && value.values.empty())
      dim = getConstantSize(value.size);
    else if (argument.name == "index" && value.kind == AtenValue::Kind::Int)
      index = value;
  }
  auto type = self ? llvm::dyn_cast<BaseTensorType>(self.getType()) : BaseTensorType();
  if (!type || !index || !dim)
    return emitError() << "select needs a tensor 'self', a constant 'dim' and an 'index'";
  FailureOr<int64_t> wrapped = wrapDim(*dim, type.getRank(), "select", emitError);
  if (failed(wrapped))
    return failure();
  int64_t d = *wrapped;
  FailureOr<Value> zero =
      buildValue(loc, "aten.full.default",
                 {{"size", AtenValue::ints({})},
                  {"fill_value", AtenValue::integer(getAffineConstantExpr(0, ctx))},
                  {"dtype", AtenValue::dtype(builder.getI64Type())}},
                 emitError);
  FailureOr<Value> position =
      succeeded(zero)
          ? buildValue(loc, "aten.fill.Scalar",
                       {{"self", AtenValue::tensor(*zero)}, {"value", *index}}, emitError)
          : zero;
  if (failed(position))
    return failure();
  return buildIndexAlong(loc, self, d, *position, emitError);
}

AtenCallBuilder::CompositeBuilder
AtenCallBuilder::findRuntimeIntBuilder(llvm::StringRef target,
                                       llvm::ArrayRef<AtenArgument> arguments) {
  static const std::tuple<llvm::StringLiteral, llvm::StringLiteral, CompositeBuilder>
      kRuntimeInts[] = {{"aten.select.int", "index", &AtenCallBuilder::buildRuntimeSelect},
                        {"aten.slice.Tensor", "start", &AtenCallBuilder::buildRuntimeSlice},
                        {"aten.slice.Tensor", "end", &AtenCallBuilder::buildRuntimeSlice}};
  for (const auto &[name, argumentName, runtimeBuilder] : kRuntimeInts) {
    if (name != target)
      continue;
    for (const AtenArgument &argument : arguments)
      if (argument.name == argumentName && argument.value.kind == AtenValue::Kind::Int &&
          !argument.value.values.empty())
        return runtimeBuilder;
  }
  return nullptr;
}

FailureOr<Operation *> AtenCallBuilder::buildIndexAlong(Location loc, Value self, int64_t dim,
                                                        Value positions, const ErrorFn &emitError) {
  AtenValue indices = AtenValue::tensors({positions});
  indices.bools.assign(dim + 1, false);
  indices.bools.back() = true;
  return build(loc, "aten.index.Tensor", {{"self", AtenValue::tensor(self)}, {"indices", indices}},
               1, emitError);
}

/// self[start:end:step] along `dim` where start or end is computed at run time: a gather
/// of start + step * arange(n), when the recorded expressions of the two bounds differ by
/// a constant (`x[n:n + 4]`, `u0 - 22` to `u0 - 20`), which makes the length n a
/// constant. As for tgc.index, the positions are not clamped to the dimension as a slice's
/// bounds would be (the archive's range checks say they are inside); a negative start
/// counts from the end.
FailureOr<Operation *> AtenCallBuilder::buildRuntimeSlice(Location loc, llvm::StringRef target,
                                                          std::vector<AtenArgument> arguments,
                                                          const ErrorFn &emitError) {
  Value self;
  std::optional<int64_t> dim = 0, step = 1;
  std::optional<AtenValue> start, end;
  for (const AtenArgument &argument : arguments) {
    const AtenValue &value = argument.value;
    bool isInt = value.kind == AtenValue::Kind::Int;
    if (argument.name == "self" && value.kind == AtenValue::Kind::Tensor)
      self = value.values.front();
    else if ((argument.name == "dim" || argument.name == "step") && isInt && value.values.empty())
      (argument.name == "dim" ? dim : step) = getConstantSize(value.size);
    else if ((argument.name == "start" || argument.name == "end") && isInt)
      (argument.name == "start" ? start : end) = value;
  }
  auto type = self ? llvm::dyn_cast<BaseTensorType>(self.getType()) : BaseTensorType();
  if (!type || !dim || !step || *step <= 0)
    return emitError() << "slice: a bound computed at run time needs a tensor, a constant dim "
                          "and a constant positive step";
  FailureOr<int64_t> wrapped = wrapDim(*dim, type.getRank(), "slice", emitError);
  if (failed(wrapped))
    return failure();
  std::optional<int64_t> length;
  if (start && end) {
    AffineExpr difference = end->size - start->size;
    unsigned symbols = 0;
    difference.walk([&](AffineExpr e) {
      if (auto symbol = llvm::dyn_cast<AffineSymbolExpr>(e))
        symbols = std::max(symbols, symbol.getPosition() + 1);
    });
    length = getConstantSize(simplifyAffineExpr(difference, 0, symbols));
  }
  if (!length || *length < 0)
    return emitError() << "slice: a bound computed at run time (an item()) needs the other "
                          "bound to differ from it by a constant, so that the length is "
                          "known";
  int64_t count = (*length + *step - 1) / *step;
  return buildGatherRun(loc, self, *wrapped, *start, count, *step, emitError);
}

FailureOr<Operation *> AtenCallBuilder::buildGatherRun(Location loc, Value self, int64_t dim,
                                                       const AtenValue &start, int64_t count,
                                                       int64_t step, const ErrorFn &emitError) {
  MLIRContext *ctx = builder.getContext();
  auto integer = [&](int64_t v) { return AtenValue::integer(getAffineConstantExpr(v, ctx)); };
  FailureOr<Value> positions = buildValue(loc, "aten.arange.start_step",
                                          {{"start", integer(0)},
                                           {"end", integer(count * step)},
                                           {"step", integer(step)},
                                           {"dtype", AtenValue::dtype(builder.getI64Type())}},
                                          emitError);
  if (succeeded(positions))
    positions = buildValue(loc, "aten.add.Tensor",
                           {{"self", AtenValue::tensor(*positions)}, {"other", start}}, emitError);
  if (failed(positions))
    return failure();
  return buildIndexAlong(loc, self, dim, *positions, emitError);
}

FailureOr<Operation *> AtenCallBuilder::build(Location loc, llvm::StringRef target,
                                              std::vector<AtenArgument> arguments,
                                              size_t minResults, const ErrorFn &emitError,
                                              ArrayRef<RecordedResult> recorded) {
  MLIRContext *ctx = builder.getContext();
  setCopyLayout(target, arguments);
  target = resolveAlias(target, arguments);
  if (findMultiComposite(target) || findLibraryComposite(target))
    return emitError() << "this form of " << target.drop_front(5).split('.').first
                       << " is not supported (tgc composes it of several ops)";
  if (CompositeBuilder composite = findComposite(target))
    return (this->*composite)(loc, target, std::move(arguments), emitError);
  if (CompositeBuilder runtime = findRuntimeIntBuilder(target, arguments))
    return (this->*runtime)(loc, target, std::move(arguments), emitError);
  const NodeAdapter *adapter = findNodeAdapter(target);
  std::optional<OperationName> opName =
      adapter && !adapter->opName.empty()
          ? std::optional<OperationName>(OperationName(adapter->opName, ctx))
          : lookupAtenOp(target);
  if (!opName) {
    // An in-place form of an op tgc builds functionally (`x.addcmul_(a, b)`, composed):
    // the functional op on the same arguments, copied into `self` (converted to its dtype,
    // as the in-place op writes it), which is the result.
    if (std::optional<std::string> functional = functionalOfInPlace(target);
        functional && supports(*functional)) {
      auto self = llvm::find_if(arguments, [](const AtenArgument &a) { return a.name == "self"; });
      if (self == arguments.end() || self->value.kind != AtenValue::Kind::Tensor ||
          self->value.values.size() != 1)
        return emitError() << "the in-place form needs a `self` tensor";
      Value destination = self->value.values.front();
      FailureOr<SmallVector<Value>> computed =
          buildResults(loc, *functional, std::move(arguments), 1, emitError, recorded);
      if (failed(computed))
        return failure();
      if (computed->size() != 1)
        return emitError() << "the in-place form of an op with several results is not supported";
      if (failed(checkWritable(computed->front(), destination, emitError)))
        return failure();
      return CopyInPlaceOp::create(builder, loc, destination, computed->front()).getOperation();
    }
    // An out= variant (`aten.atan2.out(a, b, out=buf)`): the functional op, copied into
    // `out`, which is the result.
    std::optional<std::string> functional = functionalOverload(target);
    if (!functional)
      return emitError() << "unsupported operator " << target;
    auto out = llvm::find_if(arguments, [](const AtenArgument &a) { return a.name == "out"; });
    if (out == arguments.end() || out->value.kind != AtenValue::Kind::Tensor ||
        out->value.values.size() != 1)
      return emitError() << target << " needs one `out` tensor";
    Value destination = out->value.values.front();
    arguments.erase(out);
    FailureOr<Operation *> computed =
        build(loc, *functional, std::move(arguments), 1, emitError, recorded);
    if (failed(computed))
      return failure();
    if ((*computed)->getNumResults() != 1)
      return emitError() << target
                         << ": the out= form of an op with several results is not "
                            "supported";
    if (failed(checkWritable((*computed)->getResult(0), destination, emitError)))
      return failure();
    return CopyInPlaceOp::create(builder, loc, destination, (*computed)->getResult(0))
        .getOperation();
  }
  NamedAttrList fixed;
  if (adapter) {
    AdapterCall call{ctx, arguments, recorded, fixed, emitError};
    if (failed(adapter->adapt(call)))
      return failure();
  }
  OpSpecBuilder specBuilder(builder, loc, emitError);
  FailureOr<OpSpec> spec = specBuilder.prepare(*opName, target, std::move(arguments), fixed);
  FailureOr<Operation *> op =
      succeeded(spec) ? specBuilder.create(*spec, minResults) : FailureOr<Operation *>(failure());
  if (failed(op))
    specBuilder.eraseConstants();
  return op;
}
