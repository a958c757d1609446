// Objects of the trace as trackers: what the interpreter reads from an ObjectTable the
// first time the program touches an object, and the constants of code objects.
#include "Interpreter.h"

#include "Frontend/Common/DTypes.h"
#include "Frontend/Common/Json.h"

using namespace mlir;
using namespace tgc;
using namespace tgc::frontend;
using namespace tgc::py;

ObjectTable::~ObjectTable() = default;

FailureOr<Var> Interpreter::readValue(const Json &value) {
  if (value.is_null())
    return makeNone();
  if (value.is_boolean())
    return makeBool(value.get<bool>());
  if (value.is_number_integer())
    return makeInt(value.get<int64_t>(), ctx);
  if (value.is_number_float())
    return makeFloat(value.get<double>());
  if (value.is_string())
    return makeStr(value.get<std::string>());
  if (value.is_object() && value.contains("ref"))
    return readObject(value.at("ref").get<int64_t>());
  if (value.is_object() && value.contains("float")) {
    std::string text = value.at("float").get<std::string>();
    double f = text == "nan" ? std::nan("") : text == "-inf" ? -INFINITY : INFINITY;
    return makeFloat(f);
  }
  if (value.is_object() && value.contains("int") && value.at("int").is_string()) {
    // An int beyond int64 (a library's constant, such as a mask 2**100): an opaque value,
    // as in code constants; computing with it is an error where the program does.
    HeapObject h;
    h.kind = HeapObject::Kind::Opaque;
    h.name = "int";
    h.repr = value.at("int").get<std::string>();
    return makeObject(newObject(std::move(h)));
  }
  return emitError(FileLineColLoc::get(ctx, objects.getPath(), 0, 0))
         << "unsupported value in the trace: " << value.dump();
}

FailureOr<Var> Interpreter::importModule(llvm::StringRef name, Location loc) {
  auto it = importableModules.find(name.str());
  if (it == importableModules.end())
    return error(loc) << "import of '" << name
                      << "': the module was not in sys.modules when the program was captured";
  return readValue(*it);
}

FailureOr<std::vector<Var>> Interpreter::readValues(const Json &values) {
  std::vector<Var> result;
  if (values.is_null())
    return result;
  for (const Json &value : values) {
    FailureOr<Var> v = readValue(value);
    if (failed(v))
      return failure();
    result.push_back(*v);
  }
  return result;
}

FailureOr<std::vector<std::pair<std::string, Var>>>
Interpreter::readNamedValues(const Json &values) {
  std::vector<std::pair<std::string, Var>> result;
  if (values.is_null())
    return result;
  for (auto it = values.begin(); it != values.end(); ++it) {
    FailureOr<Var> v = readValue(it.value());
    if (failed(v))
      return failure();
    result.emplace_back(it.key(), *v);
  }
  return result;
}

FailureOr<Var> Interpreter::readObject(int64_t id) {
  auto it = traceObjects.find(id);
  if (it != traceObjects.end()) {
    if (!it->second)
      return emitError(FileLineColLoc::get(ctx, objects.getPath(), 0, 0))
             << "object " << id << " of the trace contains itself through immutable objects";
    return it->second;
  }
  llvm::Expected<const Json *> object = objects.getObject(id);
  if (!object)
    return emitError(FileLineColLoc::get(ctx, objects.getPath(), 0, 0))
           << llvm::toString(object.takeError());
  traceObjects[id] = nullptr;
  FailureOr<Var> var = failure();
  try {
    var = convertObject(id, **object);
  } catch (const Json::exception &e) {
    return emitError(FileLineColLoc::get(ctx, objects.getPath(), 0, 0))
           << "malformed object " << id << " in the trace: " << e.what();
  }
  if (failed(var))
    return failure();
  traceObjects[id] = *var;
  return *var;
}

std::pair<ObjectId, Var> Interpreter::allocateTraceObject(int64_t id, HeapObject::Kind kind) {
  HeapObject h;
  h.kind = kind;
  h.traceId = id;
  ObjectId oid = newObject(std::move(h));
  Var var = makeObject(oid);
  traceObjects[id] = var;
  return std::make_pair(oid, var);
}

FailureOr<Var> Interpreter::convertObject(int64_t id, const Json &object) {
  std::string kind = object.at("kind").get<std::string>();
  Location fileLoc = FileLineColLoc::get(ctx, objects.getPath(), 0, 0);
  if (kind == "tuple" || kind == "list" || kind == "set" || kind == "frozenset" || kind == "dict" ||
      kind == "range" || kind == "slice")
    return convertContainer(id, kind, object);
  if (kind == "ellipsis")
    return makeEllipsis();
  if (kind == "code") {
    llvm::Expected<py::CodeRef> code = objects.getCode(id);
    if (!code)
      return emitError(fileLoc) << llvm::toString(code.takeError());
    return makeCode(*code);
  }
  if (kind == "function")
    return convertFunction(id, object);
  if (kind == "cell") {
    auto [oid, var] = allocateTraceObject(id, HeapObject::Kind::Cell);
    if (object.contains("contents")) {
      FailureOr<Var> contents = readValue(object.at("contents"));
      if (failed(contents))
        return failure();
      heap.mutate(oid).contents = *contents;
    }
    return var;
  }
  if (kind == "globals" || kind == "module") {
    bool isGlobals = kind == "globals";
    auto [oid, var] =
        allocateTraceObject(id, isGlobals ? HeapObject::Kind::Globals : HeapObject::Kind::Module);
    // A namespace without a module name (the globals of code that `exec` made, as
    // dataclasses' generated `__init__`) is no module's.
    const Json &moduleName = object.at(isGlobals ? "module" : "name");
    std::string name = moduleName.is_null() ? "" : moduleName.get<std::string>();
    heap.mutate(oid).name = name;
    if (isGlobals && !name.empty())
      globalsByModule[name] = oid;
    FailureOr<std::vector<std::pair<std::string, Var>>> attributes =
        readNamedValues(object.at(isGlobals ? "entries" : "attributes"));
    if (failed(attributes))
      return failure();
    heap.mutate(oid).attributes = std::move(*attributes);
    return var;
  }
  if (kind == "class" || kind == "object" || kind == "method" || kind == "staticmethod" ||
      kind == "classmethod" || kind == "property")
    return convertClass(id, kind, object);
  if (kind == "external" || kind == "dtype" || kind == "device" || kind == "tensor")
    return convertTorchValue(id, kind, object);
  if (kind == "opaque" || kind == "storage" || kind == "bytes" || kind == "complex") {
    auto [oid, var] = allocateTraceObject(id, HeapObject::Kind::Opaque);
    HeapObject &h = heap.mutate(oid);
    h.name = object.value("type", kind);
    h.repr = object.value("repr", std::string());
    return var;
  }
  return emitError(fileLoc) << "object " << id << " has an unknown kind '" << kind << "'";
}

/// Tuples, lists, sets, dicts, ranges and slices. Objects with identity are registered
/// before their contents are read, so cycles (a list that contains itself) resolve to
/// the same object.
FailureOr<Var> Interpreter::convertContainer(int64_t id, llvm::StringRef kind, const Json &object) {
  if (kind == "tuple") {
    FailureOr<std::vector<Var>> items = readValues(object.at("items"));
    if (failed(items))
      return failure();
    if (!object.contains("class"))
      return makeTuple(std::move(*items));
    FailureOr<Var> cls = readValue(object.at("class"));
    if (failed(cls))
      return failure();
    Variable v;
    v.kind = Variable::Kind::Tuple;
    v.items = std::move(*items);
    v.tupleClass = *cls;
    return makeVar(std::move(v));
  }
  if (kind == "range" || kind == "slice") {
    Variable v;
    v.kind = kind == "range" ? Variable::Kind::Range : Variable::Kind::Slice;
    for (const char *key : {"start", "stop", "step"}) {
      FailureOr<Var> part = readValue(object.at(key));
      if (failed(part))
        return failure();
      v.items.push_back(*part);
    }
    return makeVar(std::move(v));
  }
  auto heapKind = kind == "list"   ? HeapObject::Kind::List
                  : kind == "dict" ? HeapObject::Kind::Dict
                                   : HeapObject::Kind::Set;
  auto [oid, var] = allocateTraceObject(id, heapKind);
  if (object.contains("class")) {
    FailureOr<Var> cls = readValue(object.at("class"));
    if (failed(cls))
      return failure();
    heap.mutate(oid).classObject = *cls;
  }
  if (kind != "dict") {
    FailureOr<std::vector<Var>> items = readValues(object.at("items"));
    if (failed(items))
      return failure();
    heap.mutate(oid).items = std::move(*items);
    return var;
  }
  std::vector<std::pair<Var, Var>> entries;
  for (const Json &entry : object.at("items")) {
    FailureOr<Var> key = readValue(entry.at(0));
    FailureOr<Var> value = failure();
    if (succeeded(key))
      value = readValue(entry.at(1));
    if (failed(value))
      return failure();
    entries.emplace_back(*key, *value);
  }
  heap.mutate(oid).entries = std::move(entries);
  return var;
}

FailureOr<Var> Interpreter::convertFunction(int64_t id, const Json &object) {
  Location fileLoc = FileLineColLoc::get(ctx, objects.getPath(), 0, 0);
  auto [oid, var] = allocateTraceObject(id, HeapObject::Kind::Function);
  FailureOr<Var> code = readValue(object.at("code"));
  FailureOr<Var> globals = failure();
  if (succeeded(code))
    globals = readValue(object.at("globals"));
  if (failed(globals))
    return failure();
  if (!(*code)->is(Variable::Kind::Code) || !(*globals)->is(Variable::Kind::Object))
    return emitError(fileLoc) << "function object " << id << " has no code or globals";
  FailureOr<std::vector<Var>> defaults = readValues(object.value("defaults", Json()));
  FailureOr<std::vector<Var>> closure = readValues(object.value("closure", Json()));
  FailureOr<std::vector<std::pair<std::string, Var>>> kwDefaults =
      readNamedValues(object.value("kwdefaults", Json()));
  FailureOr<std::vector<std::pair<std::string, Var>>> attributes =
      readNamedValues(object.value("dict", Json()));
  FailureOr<Var> constantResult = Var();
  if (object.contains("constant_result"))
    constantResult = readValue(object.at("constant_result"));
  if (failed(defaults) || failed(closure) || failed(kwDefaults) || failed(attributes) ||
      failed(constantResult))
    return failure();
  HeapObject &h = heap.mutate(oid);
  h.constantResult = *constantResult;
  h.code = (*code)->code;
  h.globals = (*globals)->object;
  h.defaults = std::move(*defaults);
  h.closure = std::move(*closure);
  h.kwDefaults = std::move(*kwDefaults);
  h.attributes = std::move(*attributes);
  h.name = object.at("name").get<std::string>();
  h.qualname = object.at("qualname").get<std::string>();
  return var;
}

/// Classes, their instances, bound methods and the descriptors of class dicts.
FailureOr<Var> Interpreter::convertClass(int64_t id, llvm::StringRef kind, const Json &object) {
  if (kind == "class") {
    auto [oid, var] = allocateTraceObject(id, HeapObject::Kind::Class);
    FailureOr<std::vector<Var>> bases = readValues(object.at("bases"));
    FailureOr<std::vector<Var>> mro = failure();
    if (succeeded(bases))
      mro = readValues(object.at("mro"));
    FailureOr<std::vector<std::pair<std::string, Var>>> attributes = failure();
    if (succeeded(mro))
      attributes = readNamedValues(object.at("dict"));
    if (failed(attributes))
      return failure();
    HeapObject &h = heap.mutate(oid);
    h.name = object.at("name").get<std::string>();
    h.qualname =
        object.at("module").get<std::string>() + "." + object.at("qualname").get<std::string>();
    h.bases = std::move(*bases);
    h.mro = std::move(*mro);
    h.attributes = std::move(*attributes);
    return var;
  }
  if (kind == "object") {
    auto [oid, var] = allocateTraceObject(id, HeapObject::Kind::Instance);
    FailureOr<Var> cls = readValue(object.at("class"));
    FailureOr<std::vector<std::pair<std::string, Var>>> attributes = failure();
    if (succeeded(cls))
      attributes = readNamedValues(object.at("dict"));
    if (failed(attributes))
      return failure();
    HeapObject &h = heap.mutate(oid);
    h.classObject = *cls;
    h.attributes = std::move(*attributes);
    return var;
  }
  if (kind == "method") {
    FailureOr<Var> function = readValue(object.at("function"));
    FailureOr<Var> self = failure();
    if (succeeded(function))
      self = readValue(object.at("self"));
    if (failed(self))
      return failure();
    return makeMethod(*function, *self);
  }
  auto heapKind = kind == "staticmethod"  ? HeapObject::Kind::StaticMethod
                  : kind == "classmethod" ? HeapObject::Kind::ClassMethod
                                          : HeapObject::Kind::Property;
  auto [oid, var] = allocateTraceObject(id, heapKind);
  std::vector<Var> items;
  for (const char *key : kind == "property" ? std::vector<const char *>{"fget", "fset", "fdel"}
                                            : std::vector<const char *>{"function"}) {
    FailureOr<Var> item = readValue(object.value(key, Json()));
    if (failed(item))
      return failure();
    items.push_back(*item);
  }
  heap.mutate(oid).items = std::move(items);
  return var;
}

/// `[[target, schema]...]` of an operator's overloads, or failure (reported at `loc`).
static FailureOr<std::vector<OperatorOverload>> readOverloads(const Json &list, Location loc) {
  std::vector<OperatorOverload> overloads;
  if (!list.is_array())
    return emitError(loc) << "malformed overload list (want [[target, schema]...])";
  for (const Json &overload : list) {
    if (!overload.is_array() || overload.size() != 2 || !overload.at(0).is_string() ||
        !overload.at(1).is_string())
      return emitError(loc) << "malformed overload (want [target, schema])";
    overloads.push_back({overload.at(0).get<std::string>(), overload.at(1).get<std::string>()});
  }
  return overloads;
}

LogicalResult Interpreter::setTensorMethodOverloads(const Json &methods, Location loc) {
  if (!methods.is_object())
    return emitError(loc) << "malformed trace header: tensor_methods is not an object";
  for (auto &[name, list] : methods.items()) {
    FailureOr<std::vector<OperatorOverload>> overloads = readOverloads(list, loc);
    if (failed(overloads))
      return failure();
    operatorOverloads["torch.Tensor." + name] = std::move(*overloads);
  }
  return success();
}

/// Callables known by name, dtypes, devices and tensors (whose SSA value the reader
/// supplies).
FailureOr<Var> Interpreter::convertTorchValue(int64_t id, llvm::StringRef kind,
                                              const Json &object) {
  Location fileLoc = FileLineColLoc::get(ctx, objects.getPath(), 0, 0);
  if (kind == "external") {
    std::string module = object.at("module").get<std::string>();
    std::string qualname = object.at("qualname").get<std::string>();
    std::string name = qualname.empty() ? module : module + "." + qualname;
    // A torch.ops operator: its overloads' targets and schemas.
    if (object.contains("overloads")) {
      FailureOr<std::vector<OperatorOverload>> overloads =
          readOverloads(object.at("overloads"), fileLoc);
      if (failed(overloads))
        return failure();
      operatorOverloads[name] = std::move(*overloads);
    }
    // A library function in Python (torch.nn.functional's): the function itself, which a
    // call runs when tgc has no binding of its own (callExternal).
    if (object.contains("python"))
      pythonFallbacks[name] = object.at("python");
    return makeExternal(name);
  }
  if (kind == "dtype") {
    std::string name = object.at("name").get<std::string>();
    std::optional<TorchDType> dtype = lookupDTypeByName(name, ctx);
    // A dtype tgc has no element type for (the quantized ones, which libraries' globals
    // reach) is a value without one: comparing it works, computing with it is an
    // error where the program does (toAtenValue).
    return makeDType(dtype ? dtype->type : Type(), name);
  }
  if (kind == "device") {
    Variable v;
    v.kind = Variable::Kind::Device;
    v.name = object.at("type").get<std::string>();
    if (!object.at("index").is_null())
      v.name += ":" + std::to_string(object.at("index").get<int64_t>());
    return makeVar(std::move(v));
  }
  FailureOr<Value> value = tensorSource(id, object);
  if (failed(value))
    return failure();
  HeapObject tensor;
  tensor.kind = HeapObject::Kind::Tensor;
  tensor.traceId = id;
  tensor.tensor = *value;
  return makeTensorObject(newObject(std::move(tensor)));
}

Var Interpreter::constantOf(const py::ConstantRef &constant) {
  using K = py::Constant::Kind;
  switch (constant->kind) {
  case K::None:
    return makeNone();
  case K::Ellipsis:
    return makeEllipsis();
  case K::Bool:
    return makeBool(constant->boolValue);
  case K::Int:
    if (constant->bigInt.empty())
      return makeInt(constant->intValue, ctx);
    break;
  case K::Float:
    return makeFloat(constant->floatValue);
  case K::Str:
    return makeStr(constant->bytes);
  case K::Tuple:
  case K::FrozenSet: {
    std::vector<Var> items;
    for (const py::ConstantRef &item : constant->items)
      items.push_back(constantOf(item));
    return makeTuple(std::move(items));
  }
  case K::Code:
    return makeCode(constant->code);
  default:
    break;
  }
  HeapObject h;
  h.kind = HeapObject::Kind::Opaque;
  h.name = constant->kind == K::Int ? "int" : constant->kind == K::Bytes ? "bytes" : "complex";
  h.repr = constant->bigInt;
  return makeObject(newObject(std::move(h)));
}
