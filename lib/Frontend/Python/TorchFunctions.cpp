// The Python-level torch API (torch.*, Tensor methods, operators, torch.nn.functional) as
// ATen calls: schemas, overload resolution and argument binding for the interpreter.
//
// Each callable lists its overloads in the order torch's Python argument parser tries
// them, each a signature in native_functions.yaml syntax (for torch.* functions and
// Tensor methods the ATen schema itself, copied from native_functions.yaml; for
// torch.nn.functional the Python signature from torch/nn/functional.py), the ATen target
// it calls and, where the two differ, a small rewrite of the bound arguments.
#include "TorchFunctions.h"

#include "tgc/Dialect/TensorMeta.h"
#include "tgc/Dialect/TgcDialect.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace tgc;
using namespace tgc::frontend;
using namespace tgc::py;

static llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

//===----------------------------------------------------------------------===//
// Schema parsing
//===----------------------------------------------------------------------===//

/// Splits `text` at the commas outside brackets, parentheses and quotes.
static llvm::Expected<SmallVector<llvm::StringRef>> splitTopLevel(llvm::StringRef text) {
  SmallVector<llvm::StringRef> parts;
  int depth = 0;
  char quote = 0;
  size_t start = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (quote) {
      quote = c == quote ? 0 : quote;
      continue;
    }
    if (c == '\'' || c == '"')
      quote = c;
    else if (c == '(' || c == '[')
      ++depth;
    else if (c == ')' || c == ']')
      --depth;
    else if (c == ',' && depth == 0) {
      parts.push_back(text.slice(start, i).trim());
      start = i + 1;
    }
    if (depth < 0)
      return makeError("unbalanced brackets in '" + text + "'");
  }
  if (depth != 0 || quote)
    return makeError("unbalanced brackets or quotes in '" + text + "'");
  if (!text.trim().empty())
    parts.push_back(text.drop_front(start).trim());
  return parts;
}

static bool isIdentifier(llvm::StringRef name) {
  return !name.empty() && !llvm::isDigit(name.front()) &&
         llvm::all_of(name, [](char c) { return llvm::isAlnum(c) || c == '_'; });
}

/// A type without its alias annotation: `Tensor(a!)` -> `Tensor`, `Tensor(a)[]` ->
/// `Tensor[]`.
static std::string stripAliasAnnotation(llvm::StringRef type) {
  size_t open = type.find('(');
  if (open == llvm::StringRef::npos)
    return type.str();
  size_t close = type.find(')', open);
  return (type.take_front(open) + type.drop_front(close + 1)).str();
}

/// Whether a type is one tgc's tables may use: a base type, optionally a list (with a
/// size) and optional (`int[2]?`, `Tensor?[]`).
static bool isKnownType(llvm::StringRef type) {
  static constexpr llvm::StringLiteral kBaseTypes[] = {
      "Tensor", "int",    "SymInt",     "float",  "bool",         "str",
      "Scalar", "Device", "ScalarType", "Layout", "MemoryFormat", "Generator"};
  type.consume_back("?");
  if (type.consume_back("]")) {
    size_t open = type.rfind('[');
    if (open == llvm::StringRef::npos)
      return false;
    llvm::StringRef size = type.drop_front(open + 1);
    if (!size.empty() && !llvm::all_of(size, llvm::isDigit))
      return false;
    type = type.take_front(open);
    type.consume_back("?");
  }
  return llvm::is_contained(kBaseTypes, type);
}

static llvm::Expected<FunctionSchema::Argument> parseArgument(llvm::StringRef text,
                                                              bool keywordOnly) {
  FunctionSchema::Argument argument;
  argument.keywordOnly = keywordOnly;
  auto [declaration, defaultValue] = text.split('=');
  if (text.contains('=')) {
    defaultValue = defaultValue.trim();
    if (defaultValue.empty())
      return makeError("argument '" + text + "' has an empty default");
    argument.defaultValue = defaultValue.str();
  }
  declaration = declaration.trim();
  size_t space = declaration.rfind(' ');
  if (space == llvm::StringRef::npos)
    return makeError("argument '" + text + "' needs a type and a name");
  argument.name = declaration.drop_front(space + 1).str();
  argument.type = stripAliasAnnotation(declaration.take_front(space).trim());
  if (!isIdentifier(argument.name))
    return makeError("argument '" + text + "' has no valid name");
  if (!isKnownType(argument.type))
    return makeError("argument '" + text + "' has unknown type '" + argument.type + "'");
  return argument;
}

llvm::Expected<FunctionSchema> tgc::py::parseFunctionSchema(llvm::StringRef text) {
  text = text.trim();
  FunctionSchema schema;
  size_t open = text.find('(');
  size_t arrow = text.rfind("->");
  if (open == llvm::StringRef::npos || arrow == llvm::StringRef::npos || arrow < open)
    return makeError("schema '" + text + "' must read 'name(arguments) -> returns'");
  llvm::StringRef head = text.take_front(open).trim();
  auto [name, overload] = head.split('.');
  if (!isIdentifier(name) || (head.contains('.') && !isIdentifier(overload)))
    return makeError("schema '" + text + "' has no valid name");
  schema.name = name.str();
  schema.overload = overload.str();
  llvm::StringRef signature = text.slice(open, arrow).trim();
  if (!signature.consume_front("(") || !signature.consume_back(")"))
    return makeError("schema '" + text + "' must read 'name(arguments) -> returns'");
  llvm::Expected<SmallVector<llvm::StringRef>> parts = splitTopLevel(signature);
  if (!parts)
    return parts.takeError();
  bool keywordOnly = false, sawDefault = false;
  llvm::StringSet<> names;
  for (llvm::StringRef part : *parts) {
    if (part == "*") {
      if (keywordOnly)
        return makeError("schema '" + text + "' has two '*'");
      keywordOnly = true;
      continue;
    }
    llvm::Expected<FunctionSchema::Argument> argument = parseArgument(part, keywordOnly);
    if (!argument)
      return argument.takeError();
    if (!names.insert(argument->name).second)
      return makeError("schema '" + text + "' has two arguments named '" + argument->name + "'");
    if (!keywordOnly && !argument->defaultValue && sawDefault)
      return makeError("schema '" + text + "': required argument '" + argument->name +
                       "' follows one with a default");
    sawDefault |= !keywordOnly && argument->defaultValue.has_value();
    schema.arguments.push_back(std::move(*argument));
  }
  llvm::StringRef returns = text.drop_front(arrow + 2).trim();
  if (returns.empty())
    return makeError("schema '" + text + "' has no return type");
  if (returns.consume_front("(")) {
    if (!returns.consume_back(")"))
      return makeError("schema '" + text + "' has unbalanced returns");
    llvm::Expected<SmallVector<llvm::StringRef>> results = splitTopLevel(returns);
    if (!results)
      return results.takeError();
    schema.numReturns = results->size();
  } else {
    schema.numReturns = 1;
    schema.returnsList = returns.starts_with("Tensor") && returns.ends_with("[]");
  }
  return schema;
}

//===----------------------------------------------------------------------===//
// Argument kinds and parameter types
//===----------------------------------------------------------------------===//

/// How torch's error messages name a Python value's type.
static llvm::StringRef pythonTypeName(const AtenValue &value) {
  switch (value.kind) {
  case AtenValue::Kind::None:
    return "NoneType";
  case AtenValue::Kind::Tensor:
    return "Tensor";
  case AtenValue::Kind::Tensors:
    return "tuple of Tensors";
  case AtenValue::Kind::Int:
    return "int";
  case AtenValue::Kind::Float:
    return "float";
  case AtenValue::Kind::Bool:
    return "bool";
  case AtenValue::Kind::String:
    return "str";
  case AtenValue::Kind::Ints:
    return "tuple of ints";
  case AtenValue::Kind::Floats:
    return "tuple of floats";
  case AtenValue::Kind::Bools:
    return "tuple of bools";
  case AtenValue::Kind::DType:
    return "torch.dtype";
  case AtenValue::Kind::Device:
    return "torch.device";
  }
  return "object";
}

namespace {

/// A parameter type taken apart: `int[2]?` is base `int`, a list of 2, optional.
struct ParameterType {
  llvm::StringRef base;
  bool optional = false;
  bool list = false;
  std::optional<size_t> listSize;

  explicit ParameterType(llvm::StringRef type) {
    optional = type.consume_back("?");
    if (type.consume_back("]")) {
      list = true;
      size_t open = type.rfind('[');
      size_t size = 0;
      if (!type.drop_front(open + 1).getAsInteger(10, size))
        listSize = size;
      type = type.take_front(open);
      type.consume_back("?");
    }
    base = type;
  }
  bool isIntList() const { return list && (base == "int" || base == "SymInt"); }
};

} // namespace

static bool isNumber(const AtenValue &value) {
  return value.kind == AtenValue::Kind::Int || value.kind == AtenValue::Kind::Float ||
         value.kind == AtenValue::Kind::Bool;
}

/// The value a parameter of `type` receives from `value`, or nullopt when the value's
/// kind does not fit. `numbersAsTensors` lets a Python number stand for a Tensor (a
/// wrapped scalar), which the second round of overload resolution allows.
static std::optional<AtenValue> fitValue(const AtenValue &value, llvm::StringRef typeText,
                                         bool numbersAsTensors) {
  ParameterType type(typeText);
  using Kind = AtenValue::Kind;
  if (value.kind == Kind::None)
    return type.optional || type.base == "Layout" || type.base == "MemoryFormat"
               ? std::optional<AtenValue>(value)
               : std::nullopt;
  if (type.list) {
    if (type.base == "Tensor")
      return value.kind == Kind::Tensors ? std::optional<AtenValue>(value) : std::nullopt;
    if (type.isIntList() && value.kind == Kind::Ints)
      return value;
    if (type.isIntList() && value.kind == Kind::Int && type.listSize)
      return AtenValue::ints(SmallVector<AffineExpr>(*type.listSize, value.size));
    if (type.base == "float" && value.kind == Kind::Floats)
      return value;
    if (type.base == "bool" && value.kind == Kind::Bools)
      return value;
    return std::nullopt;
  }
  llvm::StringRef base = type.base;
  bool fits = false;
  if (base == "Tensor")
    fits = value.kind == Kind::Tensor || (numbersAsTensors && isNumber(value));
  else if (base == "Scalar")
    fits = isNumber(value);
  else if (base == "int" || base == "SymInt")
    fits = value.kind == Kind::Int;
  else if (base == "float") {
    std::optional<int64_t> constant =
        value.kind == Kind::Int ? getConstantSize(value.size) : std::nullopt;
    if (constant)
      return AtenValue::floating(static_cast<double>(*constant));
    fits = value.kind == Kind::Float;
  } else if (base == "bool")
    fits = value.kind == Kind::Bool;
  else if (base == "str")
    fits = value.kind == Kind::String;
  else if (base == "ScalarType")
    fits = value.kind == Kind::DType;
  else if (base == "Device")
    fits = value.kind == Kind::Device;
  else if (base == "Layout" || base == "MemoryFormat")
    fits = value.kind != Kind::Tensor && value.kind != Kind::Tensors;
  return fits ? std::optional<AtenValue>(value) : std::nullopt;
}

/// The MLIR context of the values in a call (for the constants defaults need).
static MLIRContext *findContext(llvm::ArrayRef<AtenValue> values) {
  for (const AtenValue &value : values) {
    if (!value.values.empty())
      return value.values.front().getContext();
    if (value.size)
      return value.size.getContext();
    if (!value.sizes.empty())
      return value.sizes.front().getContext();
    if (value.type)
      return value.type.getContext();
  }
  return nullptr;
}

/// A default as a schema writes it (`1`, `0.1`, `False`, `[0, 1]`, `'mean'`), as the
/// value of a parameter of `type`.
static llvm::Expected<AtenValue> parseDefault(llvm::StringRef text, llvm::StringRef typeText,
                                              MLIRContext *ctx) {
  ParameterType type(typeText);
  auto integer = [&](llvm::StringRef s) -> std::optional<AffineExpr> {
    int64_t v;
    if (!ctx || s.trim().getAsInteger(10, v))
      return std::nullopt;
    return getAffineConstantExpr(v, ctx);
  };
  auto fail = [&]() {
    return makeError("cannot use the default '" + text + "' of a " + typeText + " parameter");
  };
  if (text == "None")
    return AtenValue::none();
  if (text == "True" || text == "False")
    return AtenValue::boolean(text == "True");
  if ((text.starts_with("'") && text.ends_with("'")) ||
      (text.starts_with("\"") && text.ends_with("\"")))
    return AtenValue::str(text.drop_front().drop_back());
  if (type.isIntList()) {
    SmallVector<AffineExpr> sizes;
    if (text.consume_front("[") && text.consume_back("]")) {
      SmallVector<llvm::StringRef> elements;
      if (!text.trim().empty())
        text.split(elements, ',');
      for (llvm::StringRef element : elements) {
        std::optional<AffineExpr> size = integer(element);
        if (!size)
          return fail();
        sizes.push_back(*size);
      }
      return AtenValue::ints(sizes);
    }
    std::optional<AffineExpr> size = integer(text);
    if (!size)
      return fail();
    return AtenValue::ints(SmallVector<AffineExpr>(type.listSize.value_or(1), *size));
  }
  if (std::optional<AffineExpr> size = integer(text); size && type.base != "float")
    return AtenValue::integer(*size);
  double f;
  if (!text.getAsDouble(f) || (text.ends_with(".") && !text.drop_back().getAsDouble(f)))
    return AtenValue::floating(f);
  return fail();
}

//===----------------------------------------------------------------------===//
// The table
//===----------------------------------------------------------------------===//

namespace {

/// A change to a bound call where the Python-level API and the ATen operator differ.
using Rewrite = llvm::Error (*)(BoundCall &call);

/// One way to call a Python callable.
struct Overload {
  /// The Python-level signature in schema syntax; parameter names are ATen's (the
  /// keyword `input` also names a `self` parameter, as torch's parser allows).
  llvm::StringLiteral signature;
  llvm::StringLiteral target;
  Rewrite rewrite = nullptr;
  /// Whether omitted parameters with a non-None default are passed with it, for
  /// Python signatures whose defaults ATen does not have (F.batch_norm's training).
  bool passDefaults = false;
};

/// Callables that share their overloads (`torch.add`, `torch.Tensor.add`).
struct TorchFunction {
  std::vector<llvm::StringLiteral> names;
  std::vector<Overload> overloads;
};

/// An overload with its signature parsed (or why it does not parse).
struct ParsedOverload {
  const Overload *overload;
  std::optional<FunctionSchema> schema;
  std::string error;
};

} // namespace

/// The bound argument `name`, if given.
static AtenValue *findArgument(BoundCall &call, llvm::StringRef name) {
  auto it = llvm::find_if(call.arguments, [&](const AtenArgument &a) { return a.name == name; });
  return it == call.arguments.end() ? nullptr : &it->value;
}

/// Removes the bound argument `name`, returning its value (None when not given).
static AtenValue takeArgument(BoundCall &call, llvm::StringRef name) {
  AtenValue value;
  if (AtenValue *found = findArgument(call, name))
    value = *found;
  llvm::erase_if(call.arguments, [&](const AtenArgument &a) { return a.name == name; });
  return value;
}

static void renameArgument(BoundCall &call, llvm::StringRef from, llvm::StringRef to) {
  for (AtenArgument &argument : call.arguments)
    if (argument.name == from)
      argument.name = to.str();
}

static bool isTrue(const AtenValue &value) {
  return value.kind == AtenValue::Kind::Bool && value.boolValue;
}

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

/// F.dropout(input, p, training, inplace): aten.dropout's `train`.
static llvm::Error dropoutArguments(BoundCall &call) {
  if (isTrue(takeArgument(call, "inplace")))
    return makeError("dropout(inplace=True) is not supported");
  renameArgument(call, "training", "train");
  return llvm::Error::success();
}

/// F.softmax(input, dim, _stacklevel, dtype): the implicit dim of a None `dim` is
/// deprecated in torch and not supported.
static llvm::Error softmaxArguments(BoundCall &call) {
  takeArgument(call, "_stacklevel");
  if (AtenValue *dim = findArgument(call, "dim"); !dim || dim->kind == AtenValue::Kind::None)
    return makeError(call.target + " without 'dim' is not supported (torch deprecated the "
                                   "implicit dimension)");
  return llvm::Error::success();
}

/// The int aten's losses take for a `reduction` string.
static llvm::Error reductionAsEnum(BoundCall &call) {
  for (llvm::StringRef deprecated : {"size_average", "reduce"})
    if (takeArgument(call, deprecated).kind != AtenValue::Kind::None)
      return makeError("the deprecated argument '" + deprecated +
                       "' is not supported; use "
                       "'reduction'");
  AtenValue reduction = takeArgument(call, "reduction");
  if (reduction.kind == AtenValue::Kind::None)
    return llvm::Error::success();
  static constexpr llvm::StringLiteral kReductions[] = {"none", "mean", "sum"};
  const auto *it =
      llvm::find_if(kReductions, [&](llvm::StringRef name) { return name == reduction.string; });
  if (reduction.kind != AtenValue::Kind::String || it == std::end(kReductions))
    return makeError("reduction must be 'none', 'mean' or 'sum', not '" + reduction.string + "'");
  std::vector<AtenValue> values;
  for (const AtenArgument &argument : call.arguments)
    values.push_back(argument.value);
  MLIRContext *ctx = findContext(values);
  if (!ctx)
    return makeError("reduction needs a tensor argument");
  call.arguments.push_back(
      {"reduction", AtenValue::integer(getAffineConstantExpr(it - std::begin(kReductions), ctx))});
  return llvm::Error::success();
}

/// F.embedding(input, weight, padding_idx, max_norm, norm_type, ...): aten.embedding's
/// `indices`; a negative padding_idx counts from the end of `weight`, as torch does.
static llvm::Error embeddingArguments(BoundCall &call) {
  if (takeArgument(call, "max_norm").kind != AtenValue::Kind::None)
    return makeError("embedding with max_norm is not supported");
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
    return makeError("embedding: a negative padding_idx needs a weight with a constant size");
  paddingIdx->size = getAffineConstantExpr(*rows + *index, paddingIdx->size.getContext());
  return llvm::Error::success();
}

/// F.max_pool2d(..., return_indices): the argmax comes from max_pool2d_with_indices.
static llvm::Error maxPoolArguments(BoundCall &call) {
  if (isTrue(takeArgument(call, "return_indices")))
    call.target = "aten.max_pool2d_with_indices.default";
  if (AtenValue *stride = findArgument(call, "stride");
      stride && stride->kind == AtenValue::Kind::None)
    takeArgument(call, "stride");
  return llvm::Error::success();
}

/// Tensor.split/torch.split: an int is the chunk size, a list the sizes.
static llvm::Error splitSizeArgument(BoundCall &call) {
  renameArgument(call, "split_size_or_sections", "split_size");
  return llvm::Error::success();
}
static llvm::Error splitSectionsArgument(BoundCall &call) {
  renameArgument(call, "split_size_or_sections", "split_sizes");
  renameArgument(call, "split_size", "split_sizes");
  return llvm::Error::success();
}

/// narrow(self, dim, start, length) is slice(self, dim, start, start + length).
static llvm::Error narrowAsSlice(BoundCall &call) {
  AtenValue length = takeArgument(call, "length");
  AtenValue *start = findArgument(call, "start");
  if (!start || start->kind != AtenValue::Kind::Int || length.kind != AtenValue::Kind::Int)
    return makeError("narrow needs int start and length");
  call.arguments.push_back({"end", AtenValue::integer(start->size + length.size)});
  return llvm::Error::success();
}

/// `//`: division rounding down.
static llvm::Error floorRounding(BoundCall &call) {
  call.arguments.push_back({"rounding_mode", AtenValue::str("floor")});
  return llvm::Error::success();
}

/// `&`, `|`, `~` are bitwise; tgc has only their logical forms, the same on bool tensors.
static llvm::Error boolTensorsOnly(BoundCall &call) {
  for (const AtenArgument &argument : call.arguments) {
    if (argument.value.kind != AtenValue::Kind::Tensor)
      return makeError("bitwise operators on a non-tensor operand are not supported");
    auto type = llvm::dyn_cast<BaseTensorType>(argument.value.values.front().getType());
    if (!type || !type.getDtype().isInteger(1))
      return makeError("bitwise operators on non-bool tensors are not supported");
  }
  return llvm::Error::success();
}

/// Tensor.float() and the like: a conversion to one dtype.
template <unsigned bits, bool isFloat> static llvm::Error convertTo(BoundCall &call) {
  AtenValue *self = findArgument(call, "self");
  if (!self || self->kind != AtenValue::Kind::Tensor)
    return makeError("expected a tensor");
  MLIRContext *ctx = self->values.front().getContext();
  Type dtype;
  if (isFloat)
    dtype = bits == 16   ? Type(Float16Type::get(ctx))
            : bits == 32 ? Type(Float32Type::get(ctx))
                         : Type(Float64Type::get(ctx));
  else
    dtype = IntegerType::get(ctx, bits, bits == 1 ? IntegerType::Signless : IntegerType::Signed);
  takeArgument(call, "memory_format");
  call.arguments.push_back({"dtype", AtenValue::dtype(dtype)});
  return llvm::Error::success();
}

/// The schema of a Python-level function that has no return type of its own.
#define SCHEMA(signature) signature " -> Tensor"
/// Callables that return a list of tensors (split, chunk, unbind).
#define LIST_SCHEMA(signature) signature " -> Tensor[]"

// Overload lists shared by several callables.
static std::vector<Overload> binary(llvm::StringLiteral tensorSig, llvm::StringLiteral tensorTarget,
                                    llvm::StringLiteral scalarSig,
                                    llvm::StringLiteral scalarTarget) {
  return {{tensorSig, tensorTarget}, {scalarSig, scalarTarget}};
}

static const std::vector<TorchFunction> &torchFunctions() {
  static const std::vector<TorchFunction> table = {
      // Elementwise unary.
      {{"torch.relu", "torch.Tensor.relu"}, {{SCHEMA("relu(Tensor self)"), "aten.relu.default"}}},
      {{"torch.relu_", "torch.Tensor.relu_", "torch.nn.functional.relu_"},
       {{SCHEMA("relu_(Tensor self)"), "aten.relu_.default"}}},
      {{"torch.neg", "torch.Tensor.neg", "operator.neg"},
       {{SCHEMA("neg(Tensor self)"), "aten.neg.default"}}},
      {{"torch.abs", "torch.Tensor.abs", "builtins.abs"},
       {{SCHEMA("abs(Tensor self)"), "aten.abs.default"}}},
      {{"torch.tanh", "torch.Tensor.tanh", "torch.nn.functional.tanh"},
       {{SCHEMA("tanh(Tensor self)"), "aten.tanh.default"}}},
      {{"torch.tanh_", "torch.Tensor.tanh_"},
       {{SCHEMA("tanh_(Tensor self)"), "aten.tanh_.default"}}},
      {{"torch.sigmoid", "torch.Tensor.sigmoid", "torch.nn.functional.sigmoid"},
       {{SCHEMA("sigmoid(Tensor self)"), "aten.sigmoid.default"}}},
      {{"torch.sigmoid_", "torch.Tensor.sigmoid_"},
       {{SCHEMA("sigmoid_(Tensor self)"), "aten.sigmoid_.default"}}},
      {{"torch.exp", "torch.Tensor.exp"}, {{SCHEMA("exp(Tensor self)"), "aten.exp.default"}}},
      {{"torch.log", "torch.Tensor.log"}, {{SCHEMA("log(Tensor self)"), "aten.log.default"}}},
      {{"torch.sqrt", "torch.Tensor.sqrt"}, {{SCHEMA("sqrt(Tensor self)"), "aten.sqrt.default"}}},
      {{"torch.rsqrt", "torch.Tensor.rsqrt"},
       {{SCHEMA("rsqrt(Tensor self)"), "aten.rsqrt.default"}}},
      {{"torch.erf", "torch.Tensor.erf"}, {{SCHEMA("erf(Tensor self)"), "aten.erf.default"}}},
      {{"torch.reciprocal", "torch.Tensor.reciprocal"},
       {{SCHEMA("reciprocal(Tensor self)"), "aten.reciprocal.default"}}},
      {{"torch.sin", "torch.Tensor.sin"}, {{SCHEMA("sin(Tensor self)"), "aten.sin.default"}}},
      {{"torch.cos", "torch.Tensor.cos"}, {{SCHEMA("cos(Tensor self)"), "aten.cos.default"}}},
      {{"torch.logical_not", "torch.Tensor.logical_not"},
       {{SCHEMA("logical_not(Tensor self)"), "aten.logical_not.default"}}},
      {{"operator.invert", "torch.Tensor.__invert__"},
       {{SCHEMA("invert(Tensor self)"), "aten.logical_not.default", boolTensorsOnly}}},
      {{"torch.clamp", "torch.clip", "torch.Tensor.clamp", "torch.Tensor.clip"},
       {{SCHEMA("clamp(Tensor self, Scalar? min=None, Scalar? max=None)"), "aten.clamp.default"}}},
      {{"torch.clamp_", "torch.Tensor.clamp_", "torch.Tensor.clip_"},
       {{SCHEMA("clamp_(Tensor(a!) self, Scalar? min=None, Scalar? max=None)"),
         "aten.clamp_.default"}}},
      {{"torch.clamp_min", "torch.Tensor.clamp_min"},
       {{SCHEMA("clamp_min(Tensor self, Scalar min)"), "aten.clamp_min.default"}}},
      {{"torch.clamp_max", "torch.Tensor.clamp_max"},
       {{SCHEMA("clamp_max(Tensor self, Scalar max)"), "aten.clamp_max.default"}}},
      {{"torch.Tensor.clamp_min_"},
       {{SCHEMA("clamp_min_(Tensor(a!) self, Scalar min)"), "aten.clamp_min_.default"}}},
      {{"torch.Tensor.clamp_max_"},
       {{SCHEMA("clamp_max_(Tensor(a!) self, Scalar max)"), "aten.clamp_max_.default"}}},

      // Elementwise binary.
      {{"torch.add", "torch.Tensor.add", "operator.add", "operator.radd", "torch.Tensor.__add__",
        "torch.Tensor.__radd__"},
       binary(SCHEMA("add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1)"), "aten.add.Tensor",
              SCHEMA("add.Scalar(Tensor self, Scalar other, Scalar alpha=1)"), "aten.add.Scalar")},
      {{"torch.Tensor.add_", "operator.iadd", "torch.Tensor.__iadd__"},
       binary(SCHEMA("add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1)"),
              "aten.add_.Tensor",
              SCHEMA("add_.Scalar(Tensor(a!) self, Scalar other, Scalar alpha=1)"),
              "aten.add_.Scalar")},
      {{"torch.sub", "torch.subtract", "torch.Tensor.sub", "operator.sub", "torch.Tensor.__sub__"},
       binary(SCHEMA("sub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1)"), "aten.sub.Tensor",
              SCHEMA("sub.Scalar(Tensor self, Scalar other, Scalar alpha=1)"), "aten.sub.Scalar")},
      {{"torch.Tensor.sub_", "operator.isub", "torch.Tensor.__isub__"},
       binary(SCHEMA("sub_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1)"),
              "aten.sub_.Tensor",
              SCHEMA("sub_.Scalar(Tensor(a!) self, Scalar other, Scalar alpha=1)"),
              "aten.sub_.Scalar")},
      {{"torch.rsub", "operator.rsub", "torch.Tensor.__rsub__"},
       binary(SCHEMA("rsub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1)"),
              "aten.rsub.Tensor", SCHEMA("rsub.Scalar(Tensor self, Scalar other, Scalar alpha=1)"),
              "aten.rsub.Scalar")},
      {{"torch.mul", "torch.multiply", "torch.Tensor.mul", "operator.mul", "operator.rmul",
        "torch.Tensor.__mul__", "torch.Tensor.__rmul__"},
       binary(SCHEMA("mul.Tensor(Tensor self, Tensor other)"), "aten.mul.Tensor",
              SCHEMA("mul.Scalar(Tensor self, Scalar other)"), "aten.mul.Scalar")},
      {{"torch.Tensor.mul_", "operator.imul", "torch.Tensor.__imul__"},
       binary(SCHEMA("mul_.Tensor(Tensor(a!) self, Tensor other)"), "aten.mul_.Tensor",
              SCHEMA("mul_.Scalar(Tensor(a!) self, Scalar other)"), "aten.mul_.Scalar")},
      {{"torch.div", "torch.divide", "torch.true_divide", "torch.Tensor.div", "torch.Tensor.divide",
        "torch.Tensor.true_divide", "operator.truediv", "torch.Tensor.__truediv__"},
       {{SCHEMA("div.Tensor(Tensor self, Tensor other)"), "aten.div.Tensor"},
        {SCHEMA("div.Scalar(Tensor self, Scalar other)"), "aten.div.Scalar"},
        {SCHEMA("div.Tensor_mode(Tensor self, Tensor other, *, str? rounding_mode)"),
         "aten.div.Tensor_mode"},
        {SCHEMA("div.Scalar_mode(Tensor self, Scalar other, *, str? rounding_mode)"),
         "aten.div.Scalar_mode"}}},
      {{"operator.rtruediv", "torch.Tensor.__rtruediv__"},
       {{SCHEMA("rtruediv(Tensor other, Tensor self)"), "aten.div.Tensor"}}},
      {{"torch.Tensor.div_", "operator.itruediv", "torch.Tensor.__itruediv__"},
       binary(SCHEMA("div_.Tensor(Tensor(a!) self, Tensor other)"), "aten.div_.Tensor",
              SCHEMA("div_.Scalar(Tensor(a!) self, Scalar other)"), "aten.div_.Scalar")},
      {{"torch.floor_divide", "torch.Tensor.floor_divide", "operator.floordiv",
        "torch.Tensor.__floordiv__"},
       {{SCHEMA("floordiv(Tensor self, Tensor other)"), "aten.div.Tensor_mode", floorRounding},
        {SCHEMA("floordiv(Tensor self, Scalar other)"), "aten.div.Scalar_mode", floorRounding}}},
      {{"torch.pow", "torch.Tensor.pow", "operator.pow", "torch.Tensor.__pow__"},
       {{SCHEMA("pow.Tensor_Tensor(Tensor self, Tensor exponent)"), "aten.pow.Tensor_Tensor"},
        {SCHEMA("pow.Tensor_Scalar(Tensor self, Scalar exponent)"), "aten.pow.Tensor_Scalar"},
        {SCHEMA("pow.Scalar(Scalar self, Tensor exponent)"), "aten.pow.Scalar"}}},
      {{"operator.rpow", "torch.Tensor.__rpow__"},
       {{SCHEMA("rpow(Tensor exponent, Scalar self)"), "aten.pow.Scalar"},
        {SCHEMA("rpow(Tensor exponent, Tensor self)"), "aten.pow.Tensor_Tensor"}}},
      {{"torch.maximum", "torch.Tensor.maximum"},
       {{SCHEMA("maximum(Tensor self, Tensor other)"), "aten.maximum.default"}}},
      {{"torch.minimum", "torch.Tensor.minimum"},
       {{SCHEMA("minimum(Tensor self, Tensor other)"), "aten.minimum.default"}}},
      // max.dim / min.dim come before .other, as in torch's parser: `x.max(0)` is a
      // reduction over dim 0 (values and indices), never maximum(x, 0).
      {{"torch.max", "torch.Tensor.max"},
       {{SCHEMA("max(Tensor self)"), "aten.amax.default"},
        {"max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor "
         "indices)",
         "aten.max.dim"},
        {SCHEMA("max.other(Tensor self, Tensor other)"), "aten.maximum.default"}}},
      {{"torch.min", "torch.Tensor.min"},
       {{SCHEMA("min(Tensor self)"), "aten.amin.default"},
        {"min.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor "
         "indices)",
         "aten.min.dim"},
        {SCHEMA("min.other(Tensor self, Tensor other)"), "aten.minimum.default"}}},
      {{"torch.eq", "torch.Tensor.eq", "operator.eq", "torch.Tensor.__eq__"},
       binary(SCHEMA("eq.Tensor(Tensor self, Tensor other)"), "aten.eq.Tensor",
              SCHEMA("eq.Scalar(Tensor self, Scalar other)"), "aten.eq.Scalar")},
      {{"torch.ne", "torch.not_equal", "torch.Tensor.ne", "operator.ne", "torch.Tensor.__ne__"},
       binary(SCHEMA("ne.Tensor(Tensor self, Tensor other)"), "aten.ne.Tensor",
              SCHEMA("ne.Scalar(Tensor self, Scalar other)"), "aten.ne.Scalar")},
      {{"torch.lt", "torch.less", "torch.Tensor.lt", "operator.lt", "torch.Tensor.__lt__"},
       binary(SCHEMA("lt.Tensor(Tensor self, Tensor other)"), "aten.lt.Tensor",
              SCHEMA("lt.Scalar(Tensor self, Scalar other)"), "aten.lt.Scalar")},
      {{"torch.le", "torch.less_equal", "torch.Tensor.le", "operator.le", "torch.Tensor.__le__"},
       binary(SCHEMA("le.Tensor(Tensor self, Tensor other)"), "aten.le.Tensor",
              SCHEMA("le.Scalar(Tensor self, Scalar other)"), "aten.le.Scalar")},
      {{"torch.gt", "torch.greater", "torch.Tensor.gt", "operator.gt", "torch.Tensor.__gt__"},
       binary(SCHEMA("gt.Tensor(Tensor self, Tensor other)"), "aten.gt.Tensor",
              SCHEMA("gt.Scalar(Tensor self, Scalar other)"), "aten.gt.Scalar")},
      {{"torch.ge", "torch.greater_equal", "torch.Tensor.ge", "operator.ge", "torch.Tensor.__ge__"},
       binary(SCHEMA("ge.Tensor(Tensor self, Tensor other)"), "aten.ge.Tensor",
              SCHEMA("ge.Scalar(Tensor self, Scalar other)"), "aten.ge.Scalar")},
      {{"torch.logical_and", "torch.Tensor.logical_and"},
       {{SCHEMA("logical_and(Tensor self, Tensor other)"), "aten.logical_and.default"}}},
      {{"torch.logical_or", "torch.Tensor.logical_or"},
       {{SCHEMA("logical_or(Tensor self, Tensor other)"), "aten.logical_or.default"}}},
      {{"operator.and_", "torch.Tensor.__and__"},
       {{SCHEMA("and_(Tensor self, Tensor other)"), "aten.logical_and.default", boolTensorsOnly}}},
      {{"operator.or_", "torch.Tensor.__or__"},
       {{SCHEMA("or_(Tensor self, Tensor other)"), "aten.logical_or.default", boolTensorsOnly}}},
      {{"torch.where", "torch.Tensor.where"},
       {{SCHEMA("where.self(Tensor condition, Tensor self, Tensor other)"), "aten.where.self"},
        {SCHEMA("where.ScalarOther(Tensor condition, Tensor self, Scalar other)"),
         "aten.where.ScalarOther"},
        {SCHEMA("where.ScalarSelf(Tensor condition, Scalar self, Tensor other)"),
         "aten.where.ScalarSelf"},
        {SCHEMA("where.Scalar(Tensor condition, Scalar self, Scalar other)"),
         "aten.where.Scalar"}}},
      {{"torch.masked_fill", "torch.Tensor.masked_fill"},
       binary(SCHEMA("masked_fill.Scalar(Tensor self, Tensor mask, Scalar value)"),
              "aten.masked_fill.Scalar",
              SCHEMA("masked_fill.Tensor(Tensor self, Tensor mask, Tensor value)"),
              "aten.masked_fill.Tensor")},
      {{"torch.Tensor.masked_fill_"},
       binary(SCHEMA("masked_fill_.Scalar(Tensor(a!) self, Tensor mask, Scalar value)"),
              "aten.masked_fill_.Scalar",
              SCHEMA("masked_fill_.Tensor(Tensor(a!) self, Tensor mask, Tensor value)"),
              "aten.masked_fill_.Tensor")},
      {{"torch.type_as", "torch.Tensor.type_as"},
       {{SCHEMA("type_as(Tensor self, Tensor other)"), "aten.type_as.default"}}},
      {{"torch.Tensor.to"},
       {{SCHEMA("to.dtype(Tensor(a) self, ScalarType dtype, bool non_blocking=False, bool "
                "copy=False, MemoryFormat? memory_format=None)"),
         "aten.to.dtype"},
        {SCHEMA("to.device(Tensor(a) self, Device? device=None, ScalarType? dtype=None, bool "
                "non_blocking=False, bool copy=False, *, MemoryFormat? memory_format=None)"),
         "aten._to_copy.default"}}},
      {{"torch.Tensor.float"},
       {{SCHEMA("float(Tensor self, MemoryFormat? memory_format=None)"), "aten.to.dtype",
         convertTo<32, true>}}},
      {{"torch.Tensor.double"},
       {{SCHEMA("double(Tensor self, MemoryFormat? memory_format=None)"), "aten.to.dtype",
         convertTo<64, true>}}},
      {{"torch.Tensor.half"},
       {{SCHEMA("half(Tensor self, MemoryFormat? memory_format=None)"), "aten.to.dtype",
         convertTo<16, true>}}},
      {{"torch.Tensor.int"},
       {{SCHEMA("int(Tensor self, MemoryFormat? memory_format=None)"), "aten.to.dtype",
         convertTo<32, false>}}},
      {{"torch.Tensor.long"},
       {{SCHEMA("long(Tensor self, MemoryFormat? memory_format=None)"), "aten.to.dtype",
         convertTo<64, false>}}},
      {{"torch.Tensor.bool"},
       {{SCHEMA("bool(Tensor self, MemoryFormat? memory_format=None)"), "aten.to.dtype",
         convertTo<1, false>}}},

      // Linear algebra.
      {{"torch.matmul", "torch.Tensor.matmul", "operator.matmul", "torch.Tensor.__matmul__"},
       {{SCHEMA("matmul(Tensor self, Tensor other)"), "aten.matmul.default"}}},
      {{"torch.mm", "torch.Tensor.mm"},
       {{SCHEMA("mm(Tensor self, Tensor mat2)"), "aten.mm.default"}}},
      {{"torch.bmm", "torch.Tensor.bmm"},
       {{SCHEMA("bmm(Tensor self, Tensor mat2)"), "aten.bmm.default"}}},
      {{"torch.addmm", "torch.Tensor.addmm"},
       {{SCHEMA("addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1)"),
         "aten.addmm.default"}}},
      {{"torch.nn.functional.linear", "torch._C._nn.linear"},
       {{SCHEMA("linear(Tensor input, Tensor weight, Tensor? bias=None)"), "aten.linear.default"}}},
      {{"torch.conv1d", "torch.nn.functional.conv1d"},
       {{SCHEMA("conv1d(Tensor input, Tensor weight, Tensor? bias=None, SymInt[1] stride=1, "
                "SymInt[1] padding=0, SymInt[1] dilation=1, SymInt groups=1)"),
         "aten.conv1d.default"}}},
      {{"torch.conv2d", "torch.nn.functional.conv2d"},
       {{SCHEMA("conv2d(Tensor input, Tensor weight, Tensor? bias=None, SymInt[2] stride=1, "
                "SymInt[2] padding=0, SymInt[2] dilation=1, SymInt groups=1)"),
         "aten.conv2d.default"}}},
      {{"torch.conv3d", "torch.nn.functional.conv3d"},
       {{SCHEMA("conv3d(Tensor input, Tensor weight, Tensor? bias=None, SymInt[3] stride=1, "
                "SymInt[3] padding=0, SymInt[3] dilation=1, SymInt groups=1)"),
         "aten.conv3d.default"}}},

      // Reductions.
      {{"torch.sum", "torch.Tensor.sum"},
       {{SCHEMA("sum(Tensor self, *, ScalarType? dtype=None)"), "aten.sum.default"},
        {SCHEMA("sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? "
                "dtype=None)"),
         "aten.sum.dim_IntList"}}},
      {{"torch.mean", "torch.Tensor.mean"},
       {{SCHEMA("mean(Tensor self, *, ScalarType? dtype=None)"), "aten.mean.default"},
        {SCHEMA(
             "mean.dim(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None)"),
         "aten.mean.dim"}}},
      {{"torch.amax", "torch.Tensor.amax"},
       {{SCHEMA("amax(Tensor self, int[1] dim=[], bool keepdim=False)"), "aten.amax.default"}}},
      {{"torch.amin", "torch.Tensor.amin"},
       {{SCHEMA("amin(Tensor self, int[1] dim=[], bool keepdim=False)"), "aten.amin.default"}}},
      {{"torch.any", "torch.Tensor.any"},
       {{SCHEMA("any(Tensor self)"), "aten.any.default"},
        {SCHEMA("any.dim(Tensor self, int dim, bool keepdim=False)"), "aten.any.dim"},
        {SCHEMA("any.dims(Tensor self, int[]? dim=None, bool keepdim=False)"), "aten.any.dims"}}},
      {{"torch.all", "torch.Tensor.all"},
       {{SCHEMA("all(Tensor self)"), "aten.all.default"},
        {SCHEMA("all.dim(Tensor self, int dim, bool keepdim=False)"), "aten.all.dim"},
        {SCHEMA("all.dims(Tensor self, int[]? dim=None, bool keepdim=False)"), "aten.all.dims"}}},
      {{"torch.var", "torch.Tensor.var"},
       {{SCHEMA("var.dim(Tensor self, int[1]? dim, bool unbiased=True, bool keepdim=False)"),
         "aten.var.dim"},
        {SCHEMA("var(Tensor self, bool unbiased=True)"), "aten.var.dim"},
        {SCHEMA("var.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool "
                "keepdim=False)"),
         "aten.var.correction"}}},

      // Normalization, softmax, losses.
      {{"torch.softmax", "torch.Tensor.softmax", "torch._softmax"},
       {{SCHEMA("softmax.int(Tensor self, int dim, ScalarType? dtype=None)"), "aten.softmax.int"}}},
      {{"torch.log_softmax", "torch.Tensor.log_softmax"},
       {{SCHEMA("log_softmax.int(Tensor self, int dim, ScalarType? dtype=None)"),
         "aten.log_softmax.int"}}},
      {{"torch.nn.functional.softmax"},
       {{SCHEMA("softmax(Tensor self, int? dim=None, int _stacklevel=3, ScalarType? dtype=None)"),
         "aten.softmax.int", softmaxArguments}}},
      {{"torch.nn.functional.log_softmax"},
       {{SCHEMA(
             "log_softmax(Tensor self, int? dim=None, int _stacklevel=3, ScalarType? dtype=None)"),
         "aten.log_softmax.int", softmaxArguments}}},
      {{"torch.layer_norm", "torch.nn.functional.layer_norm"},
       {{SCHEMA("layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight=None, Tensor? "
                "bias=None, float eps=1e-05)"),
         "aten.layer_norm.default"}}},
      {{"torch.batch_norm"},
       {{SCHEMA("batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, "
                "Tensor? running_var, bool training, float momentum, float eps, bool "
                "cudnn_enabled)"),
         "aten.batch_norm.default"}}},
      {{"torch.nn.functional.batch_norm"},
       {{SCHEMA("batch_norm(Tensor input, Tensor? running_mean, Tensor? running_var, Tensor? "
                "weight=None, Tensor? bias=None, bool training=False, float momentum=0.1, float "
                "eps=1e-05)"),
         "aten.batch_norm.default", nullptr, /*passDefaults=*/true}}},
      {{"torch.nn.functional.cross_entropy"},
       {{SCHEMA(
             "cross_entropy(Tensor self, Tensor target, Tensor? weight=None, bool? "
             "size_average=None, int ignore_index=-100, bool? reduce=None, str reduction='mean', "
             "float label_smoothing=0.0)"),
         "aten.cross_entropy_loss.default", reductionAsEnum}}},
      {{"torch.nn.functional.nll_loss"},
       {{SCHEMA(
             "nll_loss(Tensor self, Tensor target, Tensor? weight=None, bool? size_average=None, "
             "int ignore_index=-100, bool? reduce=None, str reduction='mean')"),
         "aten.nll_loss.default", reductionAsEnum}}},
      {{"torch.nn.functional.scaled_dot_product_attention"},
       {{SCHEMA("scaled_dot_product_attention(Tensor query, Tensor key, Tensor value, Tensor? "
                "attn_mask=None, float dropout_p=0., bool is_causal=False, *, float? scale=None, "
                "bool enable_gqa=False)"),
         "aten.scaled_dot_product_attention.default"}}},
      {{"torch.dropout"},
       {{SCHEMA("dropout(Tensor input, float p, bool train)"), "aten.dropout.default"}}},
      {{"torch.nn.functional.dropout"},
       {{SCHEMA("dropout(Tensor input, float p=0.5, bool training=True, bool inplace=False)"),
         "aten.dropout.default", dropoutArguments, /*passDefaults=*/true}}},
      {{"torch.embedding"},
       {{SCHEMA("embedding(Tensor weight, Tensor indices, SymInt padding_idx=-1, bool "
                "scale_grad_by_freq=False, bool sparse=False)"),
         "aten.embedding.default"}}},
      {{"torch.nn.functional.embedding"},
       {{SCHEMA(
             "embedding(Tensor input, Tensor weight, int? padding_idx=None, float? max_norm=None, "
             "float norm_type=2.0, bool scale_grad_by_freq=False, bool sparse=False)"),
         "aten.embedding.default", embeddingArguments}}},
      {{"torch.gather", "torch.Tensor.gather"},
       {{SCHEMA("gather(Tensor self, int dim, Tensor index, *, bool sparse_grad=False)"),
         "aten.gather.default"}}},

      // Activations of torch.nn.functional.
      {{"torch.nn.functional.relu"},
       {{SCHEMA("relu(Tensor self, bool inplace=False)"), "aten.relu.default", inplaceFlag}}},
      {{"torch.nn.functional.silu"},
       {{SCHEMA("silu(Tensor self, bool inplace=False)"), "aten.silu.default", inplaceFlag}}},
      {{"torch.nn.functional.gelu"},
       {{SCHEMA("gelu(Tensor self, *, str approximate='none')"), "aten.gelu.default"}}},
      {{"torch.nn.functional.leaky_relu"},
       {{SCHEMA("leaky_relu(Tensor self, Scalar negative_slope=0.01, bool inplace=False)"),
         "aten.leaky_relu.default", inplaceFlag}}},
      {{"torch.nn.functional.leaky_relu_"},
       {{SCHEMA("leaky_relu_(Tensor self, Scalar negative_slope=0.01)"),
         "aten.leaky_relu_.default"}}},
      {{"torch.nn.functional.hardtanh"},
       {{SCHEMA("hardtanh(Tensor self, Scalar min_val=-1., Scalar max_val=1., bool inplace=False)"),
         "aten.hardtanh.default", inplaceFlag}}},
      {{"torch.nn.functional.hardtanh_"},
       {{SCHEMA("hardtanh_(Tensor self, Scalar min_val=-1., Scalar max_val=1.)"),
         "aten.hardtanh_.default"}}},
      {{"torch.nn.functional.relu6"},
       {{SCHEMA("relu6(Tensor self, bool inplace=False)"), "aten.hardtanh.default",
         relu6AsHardtanh}}},

      // Pooling.
      {{"torch.nn.functional.max_pool2d", "torch.max_pool2d", "torch.nn.functional._max_pool2d"},
       {{SCHEMA(
             "max_pool2d(Tensor self, int[2] kernel_size, int[2]? stride=None, int[2] padding=0, "
             "int[2] dilation=1, bool ceil_mode=False, bool return_indices=False)"),
         "aten.max_pool2d.default", maxPoolArguments}}},
      {{"torch.nn.functional.avg_pool2d", "torch._C._nn.avg_pool2d"},
       {{SCHEMA("avg_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, "
                "bool ceil_mode=False, bool count_include_pad=True, int? divisor_override=None)"),
         "aten.avg_pool2d.default"}}},
      {{"torch.nn.functional.adaptive_avg_pool2d", "torch._C._nn.adaptive_avg_pool2d"},
       {{SCHEMA("adaptive_avg_pool2d(Tensor self, SymInt[2] output_size)"),
         "aten.adaptive_avg_pool2d.default"}}},

      // Views and shapes.
      {{"torch.Tensor.view"},
       {{SCHEMA("view(Tensor(a) self, SymInt[] size)"), "aten.view.default"}}},
      {{"torch.reshape", "torch.Tensor.reshape"},
       {{SCHEMA("reshape(Tensor(a) self, SymInt[] shape)"), "aten.reshape.default"}}},
      {{"torch.permute", "torch.Tensor.permute"},
       {{SCHEMA("permute(Tensor(a) self, int[] dims)"), "aten.permute.default"}}},
      {{"torch.transpose", "torch.swapaxes", "torch.swapdims", "torch.Tensor.transpose",
        "torch.Tensor.swapaxes", "torch.Tensor.swapdims"},
       {{SCHEMA("transpose.int(Tensor(a) self, int dim0, int dim1)"), "aten.transpose.int"}}},
      {{"torch.Tensor.transpose_"},
       {{SCHEMA("transpose_(Tensor(a!) self, int dim0, int dim1)"), "aten.transpose_.default"}}},
      {{"torch.t", "torch.Tensor.t"}, {{SCHEMA("t(Tensor(a) self)"), "aten.t.default"}}},
      {{"torch.Tensor.t_"}, {{SCHEMA("t_(Tensor(a!) self)"), "aten.t_.default"}}},
      {{"torch.Tensor.expand"},
       {{SCHEMA("expand(Tensor(a) self, SymInt[] size, *, bool implicit=False)"),
         "aten.expand.default"}}},
      {{"torch.unsqueeze", "torch.Tensor.unsqueeze"},
       {{SCHEMA("unsqueeze(Tensor(a) self, int dim)"), "aten.unsqueeze.default"}}},
      {{"torch.Tensor.unsqueeze_"},
       {{SCHEMA("unsqueeze_(Tensor(a!) self, int dim)"), "aten.unsqueeze_.default"}}},
      {{"torch.squeeze", "torch.Tensor.squeeze"},
       {{SCHEMA("squeeze(Tensor(a) self)"), "aten.squeeze.default"},
        {SCHEMA("squeeze.dim(Tensor(a) self, int dim)"), "aten.squeeze.dim"},
        {SCHEMA("squeeze.dims(Tensor(a) self, int[] dim)"), "aten.squeeze.dims"}}},
      {{"torch.Tensor.squeeze_"},
       {{SCHEMA("squeeze_(Tensor(a!) self)"), "aten.squeeze_.default"},
        {SCHEMA("squeeze_.dim(Tensor(a!) self, int dim)"), "aten.squeeze_.dim"},
        {SCHEMA("squeeze_.dims(Tensor(a!) self, int[] dim)"), "aten.squeeze_.dims"}}},
      {{"torch.flatten", "torch.Tensor.flatten"},
       {{SCHEMA("flatten.using_ints(Tensor(a) self, int start_dim=0, int end_dim=-1)"),
         "aten.flatten.using_ints"}}},
      {{"torch.unflatten", "torch.Tensor.unflatten"},
       {{SCHEMA("unflatten.int(Tensor(a) self, int dim, SymInt[] sizes)"), "aten.unflatten.int"}}},
      {{"torch.select", "torch.Tensor.select"},
       {{SCHEMA("select.int(Tensor(a) self, int dim, SymInt index)"), "aten.select.int"}}},
      {{"torch.narrow", "torch.Tensor.narrow"},
       {{SCHEMA("narrow(Tensor(a) self, int dim, SymInt start, SymInt length)"),
         "aten.slice.Tensor", narrowAsSlice}}},
      {{"torch.Tensor.split"},
       {{LIST_SCHEMA("split.Tensor(Tensor(a -> *) self, SymInt split_size, int dim=0)"),
         "aten.split.Tensor"},
        {LIST_SCHEMA("split_with_sizes(Tensor(a -> *) self, SymInt[] split_size, int dim=0)"),
         "aten.split_with_sizes.default", splitSectionsArgument}}},
      {{"torch.split"},
       {{LIST_SCHEMA("split(Tensor self, SymInt split_size_or_sections, int dim=0)"),
         "aten.split.Tensor", splitSizeArgument},
        {LIST_SCHEMA("split(Tensor self, SymInt[] split_size_or_sections, int dim=0)"),
         "aten.split_with_sizes.default", splitSectionsArgument}}},
      {{"torch.split_with_sizes", "torch.Tensor.split_with_sizes"},
       {{LIST_SCHEMA("split_with_sizes(Tensor(a -> *) self, SymInt[] split_sizes, int dim=0)"),
         "aten.split_with_sizes.default"}}},
      {{"torch.chunk", "torch.Tensor.chunk"},
       {{LIST_SCHEMA("chunk(Tensor(a -> *) self, int chunks, int dim=0)"), "aten.chunk.default"}}},
      {{"torch.Tensor.contiguous"},
       {{SCHEMA("contiguous(Tensor(a) self, *, MemoryFormat memory_format=0)"),
         "aten.contiguous.default"}}},
      {{"torch.clone", "torch.Tensor.clone"},
       {{SCHEMA("clone(Tensor self, *, MemoryFormat? memory_format=None)"), "aten.clone.default"}}},
      {{"torch.detach", "torch.Tensor.detach"},
       {{SCHEMA("detach(Tensor(a) self)"), "aten.detach.default"}}},
      {{"torch.cat", "torch.concat", "torch.concatenate"},
       {{SCHEMA("cat(Tensor[] tensors, int dim=0)"), "aten.cat.default"}}},
      {{"torch.stack"}, {{SCHEMA("stack(Tensor[] tensors, int dim=0)"), "aten.stack.default"}}},
      {{"torch.tril", "torch.Tensor.tril"},
       {{SCHEMA("tril(Tensor self, SymInt diagonal=0)"), "aten.tril.default"}}},
      {{"torch.triu", "torch.Tensor.triu"},
       {{SCHEMA("triu(Tensor self, SymInt diagonal=0)"), "aten.triu.default"}}},

      // In-place writes.
      {{"torch.Tensor.copy_"},
       {{SCHEMA("copy_(Tensor(a!) self, Tensor src, bool non_blocking=False)"),
         "aten.copy_.default"}}},
      {{"torch.Tensor.fill_"},
       {{SCHEMA("fill_.Scalar(Tensor(a!) self, Scalar value)"), "aten.fill_.Scalar"}}},
      {{"torch.Tensor.zero_"}, {{SCHEMA("zero_(Tensor(a!) self)"), "aten.zero_.default"}}},

      // Creation.
      {{"torch.zeros"},
       {{SCHEMA("zeros(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? "
                "device=None, bool? pin_memory=None, bool requires_grad=False)"),
         "aten.zeros.default"}}},
      {{"torch.ones"},
       {{SCHEMA("ones(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? "
                "device=None, bool? pin_memory=None, bool requires_grad=False)"),
         "aten.ones.default"}}},
      {{"torch.empty"},
       {{SCHEMA(
             "empty.memory_format(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, "
             "Device? device=None, bool? pin_memory=None, bool requires_grad=False, "
             "MemoryFormat? memory_format=None)"),
         "aten.empty.memory_format"}}},
      {{"torch.full"},
       {{SCHEMA(
             "full(SymInt[] size, Scalar fill_value, *, ScalarType? dtype=None, Layout? "
             "layout=None, Device? device=None, bool? pin_memory=None, bool requires_grad=False)"),
         "aten.full.default"}}},
      {{"torch.zeros_like"},
       {{SCHEMA("zeros_like(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? "
                "device=None, bool? pin_memory=None, bool requires_grad=False, MemoryFormat? "
                "memory_format=None)"),
         "aten.zeros_like.default"}}},
      {{"torch.ones_like"},
       {{SCHEMA("ones_like(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? "
                "device=None, bool? pin_memory=None, bool requires_grad=False, MemoryFormat? "
                "memory_format=None)"),
         "aten.ones_like.default"}}},
      {{"torch.empty_like"},
       {{SCHEMA("empty_like(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? "
                "device=None, bool? pin_memory=None, bool requires_grad=False, MemoryFormat? "
                "memory_format=None)"),
         "aten.empty_like.default"}}},
      {{"torch.full_like"},
       {{SCHEMA(
             "full_like(Tensor self, Scalar fill_value, *, ScalarType? dtype=None, Layout? "
             "layout=None, Device? device=None, bool? pin_memory=None, bool requires_grad=False, "
             "MemoryFormat? memory_format=None)"),
         "aten.full_like.default"}}},
      {{"torch.Tensor.new_zeros"},
       {{SCHEMA(
             "new_zeros(Tensor self, SymInt[] size, *, ScalarType? dtype=None, Layout? "
             "layout=None, Device? device=None, bool? pin_memory=None, bool requires_grad=False)"),
         "aten.new_zeros.default"}}},
      {{"torch.Tensor.new_ones"},
       {{SCHEMA(
             "new_ones(Tensor self, SymInt[] size, *, ScalarType? dtype=None, Layout? "
             "layout=None, Device? device=None, bool? pin_memory=None, bool requires_grad=False)"),
         "aten.new_ones.default"}}},
      {{"torch.arange"},
       {{SCHEMA("arange(Scalar end, *, ScalarType? dtype=None, Layout? layout=None, Device? "
                "device=None, bool? pin_memory=None, bool requires_grad=False)"),
         "aten.arange.default"},
        {SCHEMA(
             "arange.start(Scalar start, Scalar end, *, ScalarType? dtype=None, Layout? "
             "layout=None, Device? device=None, bool? pin_memory=None, bool requires_grad=False)"),
         "aten.arange.start"},
        {SCHEMA("arange.start_step(Scalar start, Scalar end, Scalar step=1, *, ScalarType? "
                "dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, bool "
                "requires_grad=False)"),
         "aten.arange.start_step"}}},
      {{"torch.scalar_tensor"},
       {{SCHEMA("scalar_tensor(Scalar s, *, ScalarType? dtype=None, Layout? layout=None, Device? "
                "device=None, bool? pin_memory=None, bool requires_grad=False)"),
         "aten.scalar_tensor.default"}}},
  };
  return table;
}

#undef SCHEMA

/// The parsed overloads of each Python name.
static const llvm::StringMap<std::vector<const ParsedOverload *>> &overloadsByName() {
  static const auto *byName = [] {
    auto *parsed = new std::vector<std::unique_ptr<ParsedOverload>>();
    auto *map = new llvm::StringMap<std::vector<const ParsedOverload *>>();
    for (const TorchFunction &function : torchFunctions()) {
      std::vector<const ParsedOverload *> overloads;
      for (const Overload &overload : function.overloads) {
        auto entry = std::make_unique<ParsedOverload>();
        entry->overload = &overload;
        if (llvm::Expected<FunctionSchema> schema = parseFunctionSchema(overload.signature))
          entry->schema = std::move(*schema);
        else
          entry->error = llvm::toString(schema.takeError());
        parsed->push_back(std::move(entry));
        overloads.push_back(parsed->back().get());
      }
      for (llvm::StringRef name : function.names)
        (*map)[name] = overloads;
    }
    return map;
  }();
  return *byName;
}

//===----------------------------------------------------------------------===//
// Binding
//===----------------------------------------------------------------------===//

/// Binds a call to one overload, or explains why it does not fit.
static llvm::Expected<BoundCall> bindOverload(llvm::StringRef callee, const Overload &overload,
                                              const FunctionSchema &schema,
                                              llvm::ArrayRef<AtenValue> positional,
                                              llvm::ArrayRef<AtenArgument> keywords,
                                              bool numbersAsTensors) {
  const auto &params = schema.arguments;
  std::vector<std::optional<AtenValue>> bound(params.size());
  auto mismatch = [&](size_t param, const AtenValue &value) {
    return makeError(callee + "(): argument '" + params[param].name + "' must be " +
                     params[param].type + ", not " + pythonTypeName(value));
  };
  SmallVector<size_t> positionalParams;
  for (size_t i = 0; i < params.size(); ++i)
    if (!params[i].keywordOnly)
      positionalParams.push_back(i);
  for (size_t i = 0; i < positional.size(); ++i) {
    if (i >= positionalParams.size())
      return makeError(llvm::formatv("{0}() takes {1} positional arguments but {2} were given",
                                     callee, positionalParams.size(), positional.size())
                           .str());
    size_t param = positionalParams[i];
    ParameterType type(params[param].type);
    // Varargs int lists: `x.view(2, 3)` when the list is the last positional parameter.
    bool varargs = type.isIntList() && i + 1 == positionalParams.size() &&
                   positional.size() > i + 1 && positional[i].kind == AtenValue::Kind::Int;
    if (varargs) {
      SmallVector<AffineExpr> sizes;
      for (const AtenValue &value : positional.drop_front(i)) {
        if (value.kind != AtenValue::Kind::Int)
          return mismatch(param, value);
        sizes.push_back(value.size);
      }
      bound[param] = AtenValue::ints(sizes);
      break;
    }
    if (i + 1 == positionalParams.size() && type.isIntList() && !type.listSize &&
        positional[i].kind == AtenValue::Kind::Int) {
      bound[param] = AtenValue::ints({positional[i].size});
      continue;
    }
    std::optional<AtenValue> value = fitValue(positional[i], params[param].type, numbersAsTensors);
    if (!value)
      return mismatch(param, positional[i]);
    bound[param] = std::move(*value);
  }
  for (const AtenArgument &keyword : keywords) {
    auto it = llvm::find_if(params, [&](const auto &p) { return p.name == keyword.name; });
    // torch's parser accepts `input` for a `self` parameter.
    if (it == params.end() && keyword.name == "input")
      it = llvm::find_if(params, [](const auto &p) { return p.name == "self"; });
    if (it == params.end())
      return makeError(callee + "() got an unexpected keyword argument '" + keyword.name + "'");
    size_t param = it - params.begin();
    if (bound[param])
      return makeError(callee + "() got multiple values for argument '" + it->name + "'");
    std::optional<AtenValue> value = fitValue(keyword.value, it->type, numbersAsTensors);
    if (!value)
      return mismatch(param, keyword.value);
    bound[param] = std::move(*value);
  }
  BoundCall call{overload.target.str(), {}, schema.numReturns, schema.returnsList};
  std::vector<AtenValue> given;
  for (const std::optional<AtenValue> &value : bound)
    if (value)
      given.push_back(*value);
  MLIRContext *ctx = findContext(given);
  for (size_t i = 0; i < params.size(); ++i) {
    if (!bound[i] && !params[i].defaultValue)
      return makeError(callee + "() missing required argument '" + params[i].name + "'");
    if (bound[i]) {
      call.arguments.push_back({params[i].name, std::move(*bound[i])});
      continue;
    }
    if (!overload.passDefaults || *params[i].defaultValue == "None")
      continue;
    llvm::Expected<AtenValue> value = parseDefault(*params[i].defaultValue, params[i].type, ctx);
    if (!value)
      return value.takeError();
    call.arguments.push_back({params[i].name, std::move(*value)});
  }
  // Whether a result needs gradients is the autodiff phase's business, not the op's.
  llvm::erase_if(call.arguments, [](const AtenArgument &a) { return a.name == "requires_grad"; });
  if (overload.rewrite)
    if (llvm::Error error = overload.rewrite(call))
      return makeError(callee + "(): " + llvm::toString(std::move(error)));
  return call;
}

std::optional<llvm::Expected<BoundCall>> tgc::py::bindTorchCall(llvm::StringRef qualifiedName,
                                                            llvm::ArrayRef<AtenValue> positional,
                                                            llvm::ArrayRef<AtenArgument> keywords) {
  const auto &byName = overloadsByName();
  auto it = byName.find(qualifiedName);
  if (it == byName.end())
    return std::nullopt;
  llvm::StringRef callee = qualifiedName.rsplit('.').second;
  std::vector<std::string> reasons;
  // Like torch's parser, a Python number fits a Tensor parameter only when no overload
  // takes it as a Scalar.
  for (bool numbersAsTensors : {false, true}) {
    for (const ParsedOverload *parsed : it->second) {
      if (!parsed->schema)
        return makeError("tgc's signature of " + qualifiedName + " is malformed: " + parsed->error);
      llvm::Expected<BoundCall> call = bindOverload(callee, *parsed->overload, *parsed->schema,
                                                    positional, keywords, numbersAsTensors);
      if (call)
        return std::move(call);
      std::string reason = llvm::toString(call.takeError());
      if (!llvm::is_contained(reasons, reason))
        reasons.push_back(reason);
    }
  }
  if (reasons.size() == 1)
    return makeError(reasons.front());
  std::string message = callee.str() + "() received an invalid combination of arguments (";
  SmallVector<std::string> kinds;
  for (const AtenValue &value : positional)
    kinds.push_back(pythonTypeName(value).str());
  for (const AtenArgument &keyword : keywords)
    kinds.push_back(keyword.name + "=" + pythonTypeName(keyword.value).str());
  message += llvm::join(kinds, ", ") + "); tried:";
  for (const std::string &reason : reasons)
    message += "\n  " + reason;
  return makeError(message);
}

bool tgc::py::isKnownTorchFunction(llvm::StringRef qualifiedName) {
  return overloadsByName().contains(qualifiedName);
}

std::vector<TorchOverloadInfo> tgc::py::listTorchOverloads() {
  std::vector<TorchOverloadInfo> overloads;
  for (const TorchFunction &function : torchFunctions())
    for (const Overload &overload : function.overloads)
      for (llvm::StringRef name : function.names)
        overloads.push_back({name.str(), overload.signature.str(), overload.target.str()});
  return overloads;
}
