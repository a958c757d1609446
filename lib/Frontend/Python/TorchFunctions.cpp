// The Python-level torch API (torch.*, Tensor methods, operators, torch.nn.functional) as
// ATen calls: overload resolution and argument binding for the interpreter.
//
// Each callable of the table (TorchFunctionTable.h, filled by op family in
// TorchFunctions<Family>.cpp) lists its overloads in the order torch's Python argument
// parser tries them, each a signature in native_functions.yaml syntax (for torch.*
// functions and Tensor methods the ATen schema itself, copied from native_functions.yaml;
// for torch.nn.functional the Python signature from torch/nn/functional.py), the ATen
// target it calls and, where the two differ, a small rewrite of the bound arguments.
#include "TorchFunctions.h"
#include "TorchFunctionTable.h"

#include "tgc/Dialect/TensorMeta.h"
#include "tgc/Dialect/TgcDialect.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace tgc;
using namespace tgc::frontend;
using namespace tgc::py;

llvm::Error tgc::py::bindingError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
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
  case AtenValue::Kind::MemoryFormat:
    return "torch.memory_format";
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

/// A device as torch's argument parser reads a string: `cpu`, `cuda`, `cuda:1`; nullopt
/// for another string (or a non-CPU device without a context to make it in).
static std::optional<AtenValue> parseDevice(llvm::StringRef text, MLIRContext *ctx) {
  auto [type, index] = text.split(':');
  int64_t ordinal = 0;
  if (type.empty() || !llvm::all_of(type, [](char c) { return llvm::isAlpha(c); }) ||
      (!index.empty() && (index.getAsInteger(10, ordinal) || ordinal < 0)))
    return std::nullopt;
  if (type == "cpu")
    return AtenValue::device(Attribute());
  if (!ctx)
    return std::nullopt;
  return AtenValue::device(DeviceAttr::get(ctx, type, ordinal));
}

/// The value a parameter of `type` receives from `value`, or nullopt when the value's
/// kind does not fit. `numbersAsTensors` lets a Python number stand for a Tensor (a
/// wrapped scalar), which the second round of overload resolution allows.
static std::optional<AtenValue> fitValue(const AtenValue &value, llvm::StringRef typeText,
                                         bool numbersAsTensors, MLIRContext *ctx) {
  ParameterType type(typeText);
  using Kind = AtenValue::Kind;
  if (value.kind == Kind::None)
    return type.optional || type.base == "Layout" || type.base == "MemoryFormat"
               ? std::optional<AtenValue>(value)
               : std::nullopt;
  if (type.list) {
    // An empty tuple or list (`new_ones(())`: a 0-d tensor) is a list of any type.
    bool empty = (value.kind == Kind::Tensors && value.values.empty()) ||
                 (value.kind == Kind::Ints && value.sizes.empty()) ||
                 (value.kind == Kind::Floats && value.floats.empty()) ||
                 (value.kind == Kind::Bools && value.bools.empty());
    if (empty && !type.listSize) {
      if (type.base == "Tensor")
        return AtenValue::tensors({});
      if (type.isIntList())
        return AtenValue::ints({});
      if (type.base == "float")
        return AtenValue::floatList({});
      if (type.base == "bool")
        return AtenValue::boolList({});
    }
    if (type.base == "Tensor")
      return value.kind == Kind::Tensors ? std::optional<AtenValue>(value) : std::nullopt;
    if (type.isIntList() && value.kind == Kind::Ints)
      return value;
    if (type.isIntList() && value.kind == Kind::Int && type.listSize)
      return AtenValue::ints(SmallVector<AffineExpr>(*type.listSize, value.size));
    if (type.base == "float" && value.kind == Kind::Floats)
      return value;
    // A number for a sized float list: each entry (F.interpolate's scale_factor).
    if (type.base == "float" && type.listSize && isNumber(value) && value.kind != Kind::Bool) {
      std::optional<int64_t> constant =
          value.kind == Kind::Int ? getConstantSize(value.size) : std::nullopt;
      if (value.kind == Kind::Int && !constant)
        return std::nullopt;
      return AtenValue::floatList(
          SmallVector<double>(*type.listSize, constant ? double(*constant) : value.floatValue));
    }
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
  else if (base == "Device" && value.kind == Kind::String)
    return parseDevice(value.string, ctx); // torch's parser takes `"cpu"`, `"cuda:0"`
  else if (base == "Device")
    fits = value.kind == Kind::Device;
  else if (base == "MemoryFormat")
    fits = value.kind == Kind::MemoryFormat;
  else if (base == "Layout")
    fits = value.kind != Kind::Tensor && value.kind != Kind::Tensors;
  return fits ? std::optional<AtenValue>(value) : std::nullopt;
}

/// The MLIR context of the values in a call (for the constants defaults need).
MLIRContext *tgc::py::findContext(llvm::ArrayRef<AtenValue> values) {
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
    return bindingError("cannot use the default '" + text + "' of a " + typeText + " parameter");
  };
  if (text == "None")
    return AtenValue::none();
  if (type.base == "MemoryFormat") { // c10::MemoryFormat's codes; only 0 is a default
    if (text != "0")
      return fail();
    return AtenValue::memoryFormat(MemoryFormat::Contiguous);
  }
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
/// An overload with its signature parsed (or why it does not parse).
struct ParsedOverload {
  const Overload *overload;
  std::optional<FunctionSchema> schema;
  std::string error;
};
} // namespace

AtenValue *tgc::py::findArgument(BoundCall &call, llvm::StringRef name) {
  auto it = llvm::find_if(call.arguments, [&](const AtenArgument &a) { return a.name == name; });
  return it == call.arguments.end() ? nullptr : &it->value;
}

AtenValue tgc::py::takeArgument(BoundCall &call, llvm::StringRef name) {
  AtenValue value;
  if (AtenValue *found = findArgument(call, name))
    value = *found;
  llvm::erase_if(call.arguments, [&](const AtenArgument &a) { return a.name == name; });
  return value;
}

void tgc::py::renameArgument(BoundCall &call, llvm::StringRef from, llvm::StringRef to) {
  for (AtenArgument &argument : call.arguments)
    if (argument.name == from)
      argument.name = to.str();
}

bool tgc::py::isTrue(const AtenValue &value) {
  return value.kind == AtenValue::Kind::Bool && value.boolValue;
}

/// Every callable tgc knows, by op family.
static const std::vector<TorchFunction> &torchFunctions() {
  static const std::vector<TorchFunction> table = [] {
    std::vector<TorchFunction> functions;
    addElementwiseTorchFunctions(functions);
    addNNTorchFunctions(functions);
    addShapeTorchFunctions(functions);
    return functions;
  }();
  return table;
}

/// The parsed overloads of each Python name (built once and never freed: `table` keeps
/// the overloads reachable).
static const llvm::StringMap<std::vector<const ParsedOverload *>> &overloadsByName() {
  struct Table {
    std::vector<std::unique_ptr<ParsedOverload>> parsed;
    llvm::StringMap<std::vector<const ParsedOverload *>> byName;
  };
  static const Table *table = [] {
    auto *built = new Table();
    for (const TorchFunction &function : torchFunctions()) {
      std::vector<const ParsedOverload *> overloads;
      for (const Overload &overload : function.overloads) {
        auto entry = std::make_unique<ParsedOverload>();
        entry->overload = &overload;
        if (llvm::Expected<FunctionSchema> schema = parseFunctionSchema(overload.signature))
          entry->schema = std::move(*schema);
        else
          entry->error = llvm::toString(schema.takeError());
        built->parsed.push_back(std::move(entry));
        overloads.push_back(built->parsed.back().get());
      }
      for (llvm::StringRef name : function.names)
        built->byName[name] = overloads;
    }
    return built;
  }();
  return table->byName;
}

//===----------------------------------------------------------------------===//
// Binding
//===----------------------------------------------------------------------===//

namespace {
/// An overload to try: its schema, ATen target and rewrite.
struct Candidate {
  const FunctionSchema *schema;
  llvm::StringRef target;
  Rewrite rewrite = nullptr;
  bool passDefaults = false;
};
} // namespace

/// Binds a call to one overload, or explains why it does not fit.
static llvm::Expected<BoundCall> bindOverload(llvm::StringRef callee, const Candidate &overload,
                                              llvm::ArrayRef<AtenValue> positional,
                                              llvm::ArrayRef<AtenArgument> keywords,
                                              bool numbersAsTensors) {
  const FunctionSchema &schema = *overload.schema;
  const auto &params = schema.arguments;
  std::vector<std::optional<AtenValue>> bound(params.size());
  auto mismatch = [&](size_t param, const AtenValue &value) {
    return bindingError(callee + "(): argument '" + params[param].name + "' must be " +
                        params[param].type + ", not " + pythonTypeName(value));
  };
  std::vector<AtenValue> all(positional.begin(), positional.end());
  for (const AtenArgument &keyword : keywords)
    all.push_back(keyword.value);
  MLIRContext *argumentsContext = findContext(all);
  SmallVector<size_t> positionalParams;
  for (size_t i = 0; i < params.size(); ++i)
    if (!params[i].keywordOnly)
      positionalParams.push_back(i);
  for (size_t i = 0; i < positional.size(); ++i) {
    if (i >= positionalParams.size())
      return bindingError(llvm::formatv("{0}() takes {1} positional arguments but {2} were given",
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
    std::optional<AtenValue> value =
        fitValue(positional[i], params[param].type, numbersAsTensors, argumentsContext);
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
      return bindingError(callee + "() got an unexpected keyword argument '" + keyword.name + "'");
    size_t param = it - params.begin();
    if (bound[param])
      return bindingError(callee + "() got multiple values for argument '" + it->name + "'");
    std::optional<AtenValue> value =
        fitValue(keyword.value, it->type, numbersAsTensors, argumentsContext);
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
      return bindingError(callee + "() missing required argument '" + params[i].name + "'");
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
      return bindingError(callee + "(): " + llvm::toString(std::move(error)));
  return call;
}

/// Binds a call to the first of `overloads` that accepts its arguments, or explains why
/// none does.
static llvm::Expected<BoundCall> bindFirst(llvm::StringRef callee,
                                           llvm::ArrayRef<Candidate> overloads,
                                           llvm::ArrayRef<AtenValue> positional,
                                           llvm::ArrayRef<AtenArgument> keywords) {
  std::vector<std::string> reasons;
  // Like torch's parser, a Python number fits a Tensor parameter only when no overload
  // takes it as a Scalar.
  for (bool numbersAsTensors : {false, true}) {
    for (const Candidate &overload : overloads) {
      llvm::Expected<BoundCall> call =
          bindOverload(callee, overload, positional, keywords, numbersAsTensors);
      if (call)
        return call;
      std::string reason = llvm::toString(call.takeError());
      if (!llvm::is_contained(reasons, reason))
        reasons.push_back(reason);
    }
  }
  if (reasons.size() == 1)
    return bindingError(reasons.front());
  std::string message = callee.str() + "() received an invalid combination of arguments (";
  SmallVector<std::string> kinds;
  for (const AtenValue &value : positional)
    kinds.push_back(pythonTypeName(value).str());
  for (const AtenArgument &keyword : keywords)
    kinds.push_back(keyword.name + "=" + pythonTypeName(keyword.value).str());
  message += llvm::join(kinds, ", ") + "); tried:";
  for (const std::string &reason : reasons)
    message += "\n  " + reason;
  return bindingError(message);
}

std::optional<llvm::Expected<BoundCall>>
tgc::py::bindTorchCall(llvm::StringRef qualifiedName, llvm::ArrayRef<AtenValue> positional,
                       llvm::ArrayRef<AtenArgument> keywords) {
  const auto &byName = overloadsByName();
  auto it = byName.find(qualifiedName);
  if (it == byName.end())
    return std::nullopt;
  std::vector<Candidate> overloads;
  for (const ParsedOverload *parsed : it->second) {
    if (!parsed->schema)
      return bindingError("tgc's signature of " + qualifiedName +
                          " is malformed: " + parsed->error);
    overloads.push_back({&*parsed->schema, parsed->overload->target, parsed->overload->rewrite,
                         parsed->overload->passDefaults});
  }
  return bindFirst(qualifiedName.rsplit('.').second, overloads, positional, keywords);
}

llvm::Expected<BoundCall> tgc::py::bindOperatorCall(llvm::StringRef qualifiedName,
                                                    llvm::ArrayRef<OperatorOverload> overloads,
                                                    llvm::ArrayRef<AtenValue> positional,
                                                    llvm::ArrayRef<AtenArgument> keywords) {
  std::vector<FunctionSchema> schemas;
  std::vector<llvm::StringRef> targets;
  std::vector<std::string> skipped;
  for (const OperatorOverload &overload : overloads) {
    // Overloads that write into an argument other than self (`out=`): tgc calls the
    // functional ones. (In-place ones, `add_`, write into self.)
    llvm::StringRef schemaText = overload.schema;
    size_t firstComma = schemaText.find(',');
    if (firstComma != llvm::StringRef::npos &&
        schemaText.drop_front(firstComma).split("->").first.contains("!)")) {
      skipped.push_back(overload.target + " (it writes into an argument)");
      continue;
    }
    llvm::Expected<FunctionSchema> schema = parseFunctionSchema(overload.schema);
    if (!schema) {
      skipped.push_back(overload.target + " (" + llvm::toString(schema.takeError()) + ")");
      continue;
    }
    schemas.push_back(std::move(*schema));
    targets.push_back(overload.target);
  }
  llvm::StringRef callee = qualifiedName.drop_front(qualifiedName.find('.') + 1);
  if (schemas.empty())
    return bindingError(callee + ": no overload tgc can call: " + llvm::join(skipped, ", "));
  std::vector<Candidate> candidates;
  for (auto [schema, target] : llvm::zip(schemas, targets))
    candidates.push_back({&schema, target});
  return bindFirst(callee, candidates, positional, keywords);
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
std::vector<std::string> tgc::py::listDuplicateTorchNames() {
  llvm::StringMap<unsigned> entries;
  std::vector<std::string> duplicates;
  for (const TorchFunction &function : torchFunctions())
    for (llvm::StringRef name : function.names)
      if (++entries[name] == 2)
        duplicates.push_back(name.str());
  return duplicates;
}
