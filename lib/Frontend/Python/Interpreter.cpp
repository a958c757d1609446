// The CPython 3.12 bytecode interpreter: frames, instructions and trace objects.
#include "Interpreter.h"

#include <optional>

#include "Frontend/Common/DTypes.h"
#include "Frontend/Common/Json.h"
#include "tgc/Dialect/TgcDialect.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace tgc;
using namespace tgc::frontend;
using namespace tgc::py;
using py::Opcode;

/// How deep inlined calls may nest, and how many instructions a capture may run,
/// before the program is judged not to terminate symbolically.
static constexpr unsigned kMaxDepth = 200;
static constexpr uint64_t kMaxSteps = 5'000'000;

struct Interpreter::Frame {
  std::shared_ptr<py::DecodedCode> code;
  /// co_localsplus slots; null means unbound.
  std::vector<Var> locals;
  std::vector<Var> stack;
  ObjectId globals = 0;
  /// The cells of the function's free variables (COPY_FREE_VARS copies them in).
  std::vector<Var> closure;
  /// Names of the keyword arguments of the next CALL (KW_NAMES).
  std::vector<std::string> kwNames;
  size_t position = 0;
  /// A generator function's frame, run to completion when called: what it yields.
  std::optional<std::vector<Var>> yielded;

  Var pop() {
    Var v = stack.back();
    stack.pop_back();
    return v;
  }
  std::vector<Var> popN(size_t n) {
    std::vector<Var> values(stack.end() - n, stack.end());
    stack.resize(stack.size() - n);
    return values;
  }
  void push(Var v) { stack.push_back(std::move(v)); }
};

ObjectTable::~ObjectTable() = default;

Interpreter::Interpreter(const ObjectTable &objects, OpBuilder &builder,
                         TensorSource tensorSource)
    : objects(objects), builder(builder), ctx(builder.getContext()),
      tensorSource(std::move(tensorSource)), atenBuilder(builder) {}

Location Interpreter::locationOf(const Frame &frame, const py::Instruction &instruction) const {
  const py::CodeObject &code = *frame.code->code;
  int line = instruction.line >= 0 ? instruction.line : code.firstLineNo;
  return FileLineColLoc::get(ctx, code.filename, line, 0);
}

//===----------------------------------------------------------------------===//
// Objects from the trace
//===----------------------------------------------------------------------===//

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
  return emitError(FileLineColLoc::get(ctx, objects.getPath(), 0, 0))
         << "unsupported value in the trace: " << value.dump();
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

FailureOr<Var> Interpreter::convertObject(int64_t id, const Json &object) {
  std::string kind = object.at("kind").get<std::string>();
  Location fileLoc = FileLineColLoc::get(ctx, objects.getPath(), 0, 0);
  // Objects with identity are registered before their contents are read, so cycles
  // (a module whose attribute refers back to it) resolve to the same object.
  auto allocate = [&](HeapObject::Kind heapKind) {
    HeapObject h;
    h.kind = heapKind;
    h.traceId = id;
    ObjectId oid = newObject(std::move(h));
    Var var = makeObject(oid);
    traceObjects[id] = var;
    return std::make_pair(oid, var);
  };
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
  if (kind == "list" || kind == "set" || kind == "frozenset" || kind == "dict") {
    auto heapKind = kind == "list" ? HeapObject::Kind::List
                    : kind == "dict" ? HeapObject::Kind::Dict
                                     : HeapObject::Kind::Set;
    auto [oid, var] = allocate(heapKind);
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
  if (kind == "ellipsis")
    return makeEllipsis();
  if (kind == "code") {
    llvm::Expected<py::CodeRef> code = objects.getCode(id);
    if (!code)
      return emitError(fileLoc) << llvm::toString(code.takeError());
    Variable v;
    v.kind = Variable::Kind::Code;
    v.code = *code;
    return makeVar(std::move(v));
  }
  if (kind == "function") {
    auto [oid, var] = allocate(HeapObject::Kind::Function);
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
    if (failed(defaults) || failed(closure) || failed(kwDefaults) || failed(attributes))
      return failure();
    HeapObject &h = heap.mutate(oid);
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
  if (kind == "cell") {
    auto [oid, var] = allocate(HeapObject::Kind::Cell);
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
    auto [oid, var] = allocate(isGlobals ? HeapObject::Kind::Globals : HeapObject::Kind::Module);
    std::string name = object.at(isGlobals ? "module" : "name").get<std::string>();
    heap.mutate(oid).name = name;
    if (isGlobals)
      globalsByModule[name] = oid;
    FailureOr<std::vector<std::pair<std::string, Var>>> attributes =
        readNamedValues(object.at(isGlobals ? "entries" : "attributes"));
    if (failed(attributes))
      return failure();
    heap.mutate(oid).attributes = std::move(*attributes);
    return var;
  }
  if (kind == "class") {
    auto [oid, var] = allocate(HeapObject::Kind::Class);
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
    h.qualname = object.at("module").get<std::string>() + "." +
                 object.at("qualname").get<std::string>();
    h.bases = std::move(*bases);
    h.mro = std::move(*mro);
    h.attributes = std::move(*attributes);
    return var;
  }
  if (kind == "object") {
    auto [oid, var] = allocate(HeapObject::Kind::Instance);
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
  if (kind == "staticmethod" || kind == "classmethod" || kind == "property") {
    auto heapKind = kind == "staticmethod"  ? HeapObject::Kind::StaticMethod
                    : kind == "classmethod" ? HeapObject::Kind::ClassMethod
                                            : HeapObject::Kind::Property;
    auto [oid, var] = allocate(heapKind);
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
  if (kind == "external") {
    std::string module = object.at("module").get<std::string>();
    std::string qualname = object.at("qualname").get<std::string>();
    return makeExternal(qualname.empty() ? module : module + "." + qualname);
  }
  if (kind == "dtype") {
    std::string name = object.at("name").get<std::string>();
    std::optional<TorchDType> dtype = lookupDTypeByName(name, ctx);
    if (!dtype || !dtype->type)
      return emitError(fileLoc) << "dtype torch." << name << " is not supported";
    Variable v;
    v.kind = Variable::Kind::DType;
    v.type = dtype->type;
    v.name = name;
    return makeVar(std::move(v));
  }
  if (kind == "device") {
    Variable v;
    v.kind = Variable::Kind::Device;
    v.name = object.at("type").get<std::string>();
    if (!object.at("index").is_null())
      v.name += ":" + std::to_string(object.at("index").get<int64_t>());
    return makeVar(std::move(v));
  }
  if (kind == "tensor") {
    FailureOr<Value> value = tensorSource(id, object);
    if (failed(value))
      return failure();
    HeapObject tensor;
    tensor.kind = HeapObject::Kind::Tensor;
    tensor.traceId = id;
    tensor.tensor = *value;
    return makeTensorObject(newObject(std::move(tensor)));
  }
  if (kind == "opaque" || kind == "storage" || kind == "bytes" || kind == "complex") {
    auto [oid, var] = allocate(HeapObject::Kind::Opaque);
    HeapObject &h = heap.mutate(oid);
    h.name = object.value("type", kind);
    h.repr = object.value("repr", std::string());
    return var;
  }
  return emitError(fileLoc) << "object " << id << " has an unknown kind '" << kind << "'";
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
  case K::Code: {
    Variable v;
    v.kind = Variable::Kind::Code;
    v.code = constant->code;
    return makeVar(std::move(v));
  }
  default:
    break;
  }
  HeapObject h;
  h.kind = HeapObject::Kind::Opaque;
  h.name = constant->kind == K::Int ? "int" : constant->kind == K::Bytes ? "bytes" : "complex";
  h.repr = constant->bigInt;
  return makeObject(newObject(std::move(h)));
}

//===----------------------------------------------------------------------===//
// Frames
//===----------------------------------------------------------------------===//

/// Binds call arguments to a code object's parameters as CPython does.
static LogicalResult bindParameters(const py::CodeObject &code, const HeapObject &function,
                                    CallArguments &arguments, std::vector<Var> &locals,
                                    std::function<InFlightDiagnostic()> emitError) {
  size_t numPositional = code.argCount;
  size_t numKwOnly = code.kwOnlyArgCount;
  bool varArgs = code.flags & py::kVarArgs;
  std::vector<Var> extra;
  for (auto [i, arg] : llvm::enumerate(arguments.positional)) {
    if (i < numPositional)
      locals[i] = arg;
    else if (varArgs)
      extra.push_back(arg);
    else
      return emitError() << function.qualname << "() takes " << numPositional
                         << " positional arguments but " << arguments.positional.size()
                         << " were given";
  }
  for (auto &[name, value] : arguments.keywords) {
    auto begin = code.localsPlusNames.begin() + code.posOnlyArgCount;
    auto end = code.localsPlusNames.begin() + numPositional + numKwOnly;
    auto it = std::find(begin, end, name);
    if (it == end) {
      return emitError() << function.qualname << "() got an unexpected keyword argument '"
                         << name << "'";
    }
    size_t slot = it - code.localsPlusNames.begin();
    if (locals[slot])
      return emitError() << function.qualname << "() got multiple values for argument '" << name
                         << "'";
    locals[slot] = value;
  }
  size_t firstDefault = numPositional - std::min(numPositional, function.defaults.size());
  for (size_t i = 0; i < numPositional; ++i) {
    if (locals[i])
      continue;
    if (i < firstDefault)
      return emitError() << function.qualname << "() missing required argument '"
                         << code.localsPlusNames[i] << "'";
    locals[i] = function.defaults[i - firstDefault];
  }
  for (size_t i = numPositional; i < numPositional + numKwOnly; ++i) {
    if (locals[i])
      continue;
    auto it = llvm::find_if(function.kwDefaults,
                            [&](auto &d) { return d.first == code.localsPlusNames[i]; });
    if (it == function.kwDefaults.end())
      return emitError() << function.qualname << "() missing required keyword argument '"
                         << code.localsPlusNames[i] << "'";
    locals[i] = it->second;
  }
  size_t next = numPositional + numKwOnly;
  // The **kwargs dict is a new object: callFunction allocates it.
  if (varArgs)
    locals[next] = makeTuple(std::move(extra));
  return success();
}

FailureOr<Var> Interpreter::callFunction(ObjectId functionId, CallArguments arguments,
                                         Location loc) {
  const HeapObject &function = heap.get(functionId);
  py::CodeRef code = function.code;
  if (code->flags & (py::kCoroutine | py::kAsyncGenerator))
    return error(loc) << "calling coroutine or async generator function '" << function.qualname
                      << "' is not supported";
  if (depth >= kMaxDepth)
    return error(loc) << "calls nest deeper than " << kMaxDepth << " frames";
  auto &decodedCode = decoded[code.get()];
  if (!decodedCode) {
    llvm::Expected<py::DecodedCode> result = py::decode(code);
    if (!result)
      return error(loc) << "cannot decode " << function.qualname << ": "
                        << llvm::toString(result.takeError());
    decodedCode = std::make_shared<py::DecodedCode>(std::move(*result));
  }
  Frame frame;
  frame.code = decodedCode;
  frame.locals.resize(code->localsPlusNames.size());
  frame.globals = function.globals;
  frame.closure = function.closure;
  // **kwargs collects the keywords no parameter names.
  std::vector<std::pair<std::string, Var>> extraKeywords;
  if (code->flags & py::kVarKeywords) {
    size_t named = code->argCount + code->kwOnlyArgCount;
    auto isParameter = [&](const std::string &name) {
      auto begin = code->localsPlusNames.begin() + code->posOnlyArgCount;
      return std::find(begin, code->localsPlusNames.begin() + named, name) !=
             code->localsPlusNames.begin() + named;
    };
    llvm::erase_if(arguments.keywords, [&](auto &keyword) {
      if (isParameter(keyword.first))
        return false;
      extraKeywords.push_back(keyword);
      return true;
    });
  }
  if (failed(bindParameters(*code, function, arguments, frame.locals,
                            [&]() { return error(loc); })))
    return failure();
  if (code->flags & py::kVarKeywords) {
    size_t slot = code->argCount + code->kwOnlyArgCount + ((code->flags & py::kVarArgs) ? 1 : 0);
    HeapObject dict;
    dict.kind = HeapObject::Kind::Dict;
    for (auto &[name, value] : extraKeywords)
      dict.entries.emplace_back(makeStr(name), value);
    frame.locals[slot] = makeObject(newObject(std::move(dict)));
  }
  // A generator (a generator expression, a function with `yield`) runs to completion at
  // the call: its values are all yielded before the consumer sees the first. That is
  // Python's result for a consumer that reads it to the end (sum, list, join, a for
  // loop); a generator whose values depend on what the consumer does in between
  // would differ, which programs rarely do.
  if (code->flags & py::kGenerator)
    frame.yielded.emplace();
  ++depth;
  FailureOr<Var> result = run(frame);
  --depth;
  if (failed(result) || !frame.yielded)
    return result;
  HeapObject iterator;
  iterator.kind = HeapObject::Kind::Iterator;
  iterator.items = std::move(*frame.yielded);
  return makeObject(newObject(std::move(iterator)));
}

FailureOr<Var> Interpreter::run(Frame &frame) {
  const std::vector<py::Instruction> &instructions = frame.code->instructions;
  while (frame.position < instructions.size()) {
    if (++steps > kMaxSteps)
      return error(locationOf(frame, instructions[frame.position]))
             << "the program runs more than " << kMaxSteps
             << " instructions; loops must end on values known at capture time";
    const py::Instruction &instruction = instructions[frame.position++];
    bool returned = false;
    Var result;
    if (failed(step(frame, instruction, returned, result)))
      return failure();
    if (returned)
      return result;
  }
  return error(FileLineColLoc::get(ctx, frame.code->code->filename, 0, 0))
         << "fell off the end of " << frame.code->code->qualname;
}

LogicalResult Interpreter::step(Frame &frame, const py::Instruction &instruction, bool &returned,
                                Var &result) {
  const py::CodeObject &code = *frame.code->code;
  Location loc = locationOf(frame, instruction);
  uint32_t arg = instruction.arg;
  auto jumpTo = [&](unsigned index) -> LogicalResult {
    int position = frame.code->positionAt(index);
    if (position < 0)
      return error(loc) << "jump into the middle of an instruction";
    frame.position = position;
    return success();
  };
  auto name = [&](uint32_t index) -> llvm::StringRef { return code.names.at(index); };
  auto pushResult = [&](FailureOr<Var> value) -> LogicalResult {
    if (failed(value))
      return failure();
    frame.push(*value);
    return success();
  };
  // BINARY_SLICE / STORE_SLICE: container[start:stop].
  auto popSlice = [&]() {
    Variable slice;
    slice.kind = Variable::Kind::Slice;
    Var stop = frame.pop();
    Var start = frame.pop();
    slice.items = {start, stop, makeNone()};
    return makeVar(std::move(slice));
  };
  auto cellAt = [&](uint32_t slot) -> FailureOr<ObjectId> {
    Var cell = frame.locals.at(slot);
    if (!cell || !cell->is(Variable::Kind::Object) ||
        heap.get(cell->object).kind != HeapObject::Kind::Cell)
      return error(loc) << "slot " << slot << " holds no cell";
    return cell->object;
  };
  if (frame.stack.size() > static_cast<size_t>(code.stackSize) + 4)
    return error(loc) << "stack overflow in " << code.qualname;

  switch (instruction.opcode) {
  case Opcode::RETURN_GENERATOR:
    // The generator object is returned to the caller and resumed at once: the value
    // sent in (None) is what the next instruction pops.
    if (!frame.yielded)
      return error(loc) << "RETURN_GENERATOR outside a generator";
    frame.push(makeNone());
    return success();
  case Opcode::YIELD_VALUE:
    if (!frame.yielded)
      return error(loc) << "yield outside a generator";
    frame.yielded->push_back(frame.pop());
    frame.push(makeNone()); // the value sent back in
    return success();
  case Opcode::NOP:
  case Opcode::RESUME:
  case Opcode::CACHE:
  case Opcode::EXTENDED_ARG:
    return success();
  case Opcode::POP_TOP:
    frame.pop();
    return success();
  case Opcode::END_FOR:
    frame.popN(2);
    return success();
  case Opcode::PUSH_NULL:
    frame.push(makeNull());
    return success();
  case Opcode::COPY:
    frame.push(frame.stack.at(frame.stack.size() - arg));
    return success();
  case Opcode::SWAP:
    std::swap(frame.stack.back(), frame.stack.at(frame.stack.size() - arg));
    return success();
  case Opcode::LOAD_CONST:
    frame.push(constantOf(code.consts.at(arg)));
    return success();
  case Opcode::RETURN_CONST:
    returned = true;
    result = constantOf(code.consts.at(arg));
    return success();
  case Opcode::RETURN_VALUE:
    returned = true;
    result = frame.pop();
    return success();
  case Opcode::LOAD_FAST:
  case Opcode::LOAD_FAST_CHECK:
    if (!frame.locals.at(arg))
      return error(loc) << "local variable '" << code.localsPlusNames.at(arg)
                        << "' is referenced before assignment";
    frame.push(frame.locals[arg]);
    return success();
  case Opcode::LOAD_FAST_AND_CLEAR:
    frame.push(frame.locals.at(arg) ? frame.locals[arg] : makeNull());
    frame.locals[arg] = nullptr;
    return success();
  case Opcode::STORE_FAST: {
    Var value = frame.pop();
    frame.locals.at(arg) = value->is(Variable::Kind::Null) ? nullptr : value;
    return success();
  }
  case Opcode::DELETE_FAST:
    frame.locals.at(arg) = nullptr;
    return success();
  case Opcode::MAKE_CELL: {
    HeapObject cell;
    cell.kind = HeapObject::Kind::Cell;
    cell.contents = frame.locals.at(arg);
    frame.locals[arg] = makeObject(newObject(std::move(cell)));
    return success();
  }
  case Opcode::COPY_FREE_VARS: {
    size_t first = frame.locals.size() - arg;
    if (frame.closure.size() != arg)
      return error(loc) << code.qualname << " expects " << arg << " closure cells, has "
                        << frame.closure.size();
    for (uint32_t i = 0; i < arg; ++i)
      frame.locals[first + i] = frame.closure[i];
    return success();
  }
  case Opcode::LOAD_CLOSURE: {
    FailureOr<ObjectId> cell = cellAt(arg);
    if (failed(cell))
      return failure();
    frame.push(frame.locals[arg]);
    return success();
  }
  case Opcode::LOAD_DEREF: {
    FailureOr<ObjectId> cell = cellAt(arg);
    if (failed(cell))
      return failure();
    Var contents = heap.get(*cell).contents;
    if (!contents)
      return error(loc) << "free variable '" << code.localsPlusNames.at(arg)
                        << "' is referenced before assignment";
    noteRead(GuardRead::Step::Cell, *cell, "", nullptr, contents, loc);
    frame.push(contents);
    return success();
  }
  case Opcode::STORE_DEREF:
  case Opcode::DELETE_DEREF: {
    FailureOr<ObjectId> cell = cellAt(arg);
    if (failed(cell))
      return failure();
    Var value = instruction.opcode == Opcode::STORE_DEREF ? frame.pop() : nullptr;
    mutateObject(*cell, SideEffect::Kind::SetCell, code.localsPlusNames.at(arg), value, loc)
        .contents = value;
    return success();
  }
  case Opcode::LOAD_GLOBAL: {
    llvm::StringRef global = name(arg >> 1);
    Var value = heap.get(frame.globals).getAttribute(global);
    if (value)
      noteRead(GuardRead::Step::Global, frame.globals, global, nullptr, value, loc);
    else
      value = makeExternal(("builtins." + global).str());
    if (arg & 1)
      frame.push(makeNull());
    frame.push(value);
    return success();
  }
  case Opcode::STORE_GLOBAL:
  case Opcode::DELETE_GLOBAL: {
    Var value = instruction.opcode == Opcode::STORE_GLOBAL ? frame.pop() : nullptr;
    HeapObject &globals =
        mutateObject(frame.globals, SideEffect::Kind::SetGlobal, name(arg), value, loc);
    if (value)
      globals.setAttribute(name(arg), value);
    else
      globals.eraseAttribute(name(arg));
    return success();
  }
  case Opcode::LOAD_ATTR: {
    Var owner = frame.pop();
    FailureOr<Var> value = getAttribute(owner, name(arg >> 1), loc);
    if (failed(value))
      return failure();
    if (arg & 1) {
      // A method load pushes (function, self) for bound methods, else (NULL, value).
      frame.push(makeNull());
    }
    frame.push(*value);
    return success();
  }
  case Opcode::STORE_ATTR: {
    Var owner = frame.pop();
    Var value = frame.pop();
    return setAttribute(owner, name(arg), value, loc);
  }
  case Opcode::DELETE_ATTR: {
    Var owner = frame.pop();
    return setAttribute(owner, name(arg), nullptr, loc);
  }
  case Opcode::LOAD_SUPER_ATTR: {
    Var self = frame.pop();
    Var cls = frame.pop();
    frame.pop(); // the global `super`
    Variable super;
    super.kind = Variable::Kind::Super;
    super.items = {cls, self};
    FailureOr<Var> value = getAttribute(makeVar(std::move(super)), name(arg >> 2), loc);
    if (failed(value))
      return failure();
    if (arg & 1)
      frame.push(makeNull());
    frame.push(*value);
    return success();
  }
  case Opcode::KW_NAMES: {
    frame.kwNames.clear();
    for (const py::ConstantRef &item : code.consts.at(arg)->items)
      frame.kwNames.push_back(item->bytes);
    return success();
  }
  case Opcode::CALL: {
    std::vector<Var> args = frame.popN(arg);
    Var second = frame.pop();
    Var first = frame.pop();
    Var callable = first;
    if (first->is(Variable::Kind::Null))
      callable = second;
    else
      args.insert(args.begin(), second);
    CallArguments call;
    size_t numKeywords = frame.kwNames.size();
    call.positional.assign(args.begin(), args.end() - numKeywords);
    for (size_t i = 0; i < numKeywords; ++i)
      call.keywords.emplace_back(frame.kwNames[i], args[args.size() - numKeywords + i]);
    frame.kwNames.clear();
    return pushResult(this->call(callable, std::move(call), loc));
  }
  case Opcode::CALL_FUNCTION_EX: {
    Var kwargs = (arg & 1) ? frame.pop() : nullptr;
    Var args = frame.pop();
    Var callable = frame.pop();
    frame.pop(); // NULL
    CallArguments call;
    FailureOr<std::vector<Var>> positional = unpack(args, loc);
    if (failed(positional))
      return failure();
    call.positional = std::move(*positional);
    if (kwargs) {
      if (!kwargs->is(Variable::Kind::Object) ||
          heap.get(kwargs->object).kind != HeapObject::Kind::Dict)
        return error(loc) << "** arguments must be a dict";
      for (auto &[key, value] : heap.get(kwargs->object).entries) {
        if (!key->is(Variable::Kind::Str))
          return error(loc) << "keywords must be strings";
        call.keywords.emplace_back(key->name, value);
      }
    }
    return pushResult(this->call(callable, std::move(call), loc));
  }
  case Opcode::CALL_INTRINSIC_1: {
    Var operand = frame.pop();
    if (arg == 6) { // INTRINSIC_LIST_TO_TUPLE
      FailureOr<std::vector<Var>> items = unpack(operand, loc);
      if (failed(items))
        return failure();
      frame.push(makeTuple(std::move(*items)));
      return success();
    }
    if (arg == 5) // INTRINSIC_UNARY_POSITIVE
      return pushResult(unaryOp("+", operand, loc));
    return error(loc) << "intrinsic " << arg << " is not supported";
  }
  case Opcode::MAKE_FUNCTION: {
    Var codeVar = frame.pop();
    HeapObject function;
    function.kind = HeapObject::Kind::Function;
    function.code = codeVar->code;
    function.globals = frame.globals;
    function.name = codeVar->code->name;
    function.qualname = codeVar->code->qualname;
    if (arg & 0x08) {
      Var closure = frame.pop();
      function.closure = closure->items;
    }
    if (arg & 0x04)
      frame.pop(); // annotations
    if (arg & 0x02) {
      Var kwDefaults = frame.pop();
      for (auto &[key, value] : heap.get(kwDefaults->object).entries)
        function.kwDefaults.emplace_back(key->name, value);
    }
    if (arg & 0x01)
      function.defaults = frame.pop()->items;
    frame.push(makeObject(newObject(std::move(function))));
    return success();
  }
  case Opcode::BINARY_OP: {
    Var rhs = frame.pop();
    Var lhs = frame.pop();
    return pushResult(binaryOp(arg, lhs, rhs, loc));
  }
  case Opcode::COMPARE_OP: {
    static const char *const kCompareOps[] = {"<", "<=", "==", "!=", ">", ">="};
    Var rhs = frame.pop();
    Var lhs = frame.pop();
    if ((arg >> 4) >= 6)
      return error(loc) << "unknown comparison " << arg;
    return pushResult(compareOp(kCompareOps[arg >> 4], lhs, rhs, loc));
  }
  case Opcode::IS_OP: {
    Var rhs = frame.pop();
    Var lhs = frame.pop();
    frame.push(makeBool(identical(lhs, rhs) != (arg == 1)));
    return success();
  }
  case Opcode::CONTAINS_OP: {
    Var container = frame.pop();
    Var item = frame.pop();
    FailureOr<std::vector<Var>> items = failure();
    if (container->is(Variable::Kind::Object) &&
        heap.get(container->object).kind == HeapObject::Kind::Dict) {
      std::vector<Var> keys;
      for (auto &entry : heap.get(container->object).entries)
        keys.push_back(entry.first);
      items = keys;
    } else {
      items = unpack(container, loc);
    }
    if (failed(items))
      return failure();
    bool found = false;
    for (const Var &candidate : *items) {
      FailureOr<bool> same = equals(candidate, item, loc);
      if (failed(same))
        return failure();
      found |= *same;
    }
    frame.push(makeBool(found != (arg == 1)));
    return success();
  }
  case Opcode::UNARY_NEGATIVE:
    return pushResult(unaryOp("-", frame.pop(), loc));
  case Opcode::UNARY_INVERT:
    return pushResult(unaryOp("~", frame.pop(), loc));
  case Opcode::UNARY_NOT: {
    FailureOr<bool> value = truth(frame.pop(), loc);
    if (failed(value))
      return failure();
    frame.push(makeBool(!*value));
    return success();
  }
  case Opcode::BUILD_TUPLE:
    frame.push(makeTuple(frame.popN(arg)));
    return success();
  case Opcode::BUILD_LIST:
  case Opcode::BUILD_SET: {
    HeapObject list;
    list.kind = instruction.opcode == Opcode::BUILD_LIST ? HeapObject::Kind::List
                                                         : HeapObject::Kind::Set;
    list.items = frame.popN(arg);
    frame.push(makeObject(newObject(std::move(list))));
    return success();
  }
  case Opcode::BUILD_MAP: {
    std::vector<Var> flat = frame.popN(2 * arg);
    HeapObject dict;
    dict.kind = HeapObject::Kind::Dict;
    for (uint32_t i = 0; i < arg; ++i)
      dict.entries.emplace_back(flat[2 * i], flat[2 * i + 1]);
    frame.push(makeObject(newObject(std::move(dict))));
    return success();
  }
  case Opcode::BUILD_CONST_KEY_MAP: {
    Var keys = frame.pop();
    std::vector<Var> values = frame.popN(arg);
    HeapObject dict;
    dict.kind = HeapObject::Kind::Dict;
    for (uint32_t i = 0; i < arg; ++i)
      dict.entries.emplace_back(keys->items.at(i), values[i]);
    frame.push(makeObject(newObject(std::move(dict))));
    return success();
  }
  case Opcode::BUILD_SLICE: {
    Variable slice;
    slice.kind = Variable::Kind::Slice;
    slice.items = frame.popN(arg);
    if (arg == 2)
      slice.items.push_back(makeNone());
    frame.push(makeVar(std::move(slice)));
    return success();
  }
  case Opcode::BUILD_STRING: {
    std::string text;
    for (const Var &part : frame.popN(arg)) {
      if (!part->is(Variable::Kind::Str))
        return error(loc) << "f-string part is not a string";
      text += part->name;
    }
    frame.push(makeStr(text));
    return success();
  }
  case Opcode::FORMAT_VALUE: {
    Var spec = (arg & 0x04) != 0 ? frame.pop() : makeStr("");
    Var value = frame.pop();
    if (!spec->is(Variable::Kind::Str))
      return error(loc) << "an f-string format spec that is not a constant string";
    FailureOr<std::string> text = formatValue(value, spec->name, arg & 0x03, loc);
    if (failed(text))
      return failure();
    frame.push(makeStr(*text));
    return success();
  }
  case Opcode::LIST_APPEND:
  case Opcode::SET_ADD: {
    Var value = frame.pop();
    Var list = frame.stack.at(frame.stack.size() - arg);
    heap.mutate(list->object).items.push_back(value);
    return success();
  }
  case Opcode::LIST_EXTEND:
  case Opcode::SET_UPDATE: {
    Var iterable = frame.pop();
    FailureOr<std::vector<Var>> items = unpack(iterable, loc);
    if (failed(items))
      return failure();
    Var list = frame.stack.at(frame.stack.size() - arg);
    llvm::append_range(heap.mutate(list->object).items, *items);
    return success();
  }
  case Opcode::MAP_ADD: {
    Var value = frame.pop();
    Var key = frame.pop();
    Var dict = frame.stack.at(frame.stack.size() - arg);
    return storeSubscript(dict, key, value, loc);
  }
  case Opcode::DICT_UPDATE:
  case Opcode::DICT_MERGE: {
    Var update = frame.pop();
    Var dict = frame.stack.at(frame.stack.size() - arg);
    if (!update->is(Variable::Kind::Object) ||
        heap.get(update->object).kind != HeapObject::Kind::Dict)
      return error(loc) << "dict update with a non-dict";
    for (auto [key, value] : heap.get(update->object).entries)
      if (failed(storeSubscript(dict, key, value, loc)))
        return failure();
    return success();
  }
  case Opcode::UNPACK_SEQUENCE: {
    FailureOr<std::vector<Var>> items = unpack(frame.pop(), loc);
    if (failed(items))
      return failure();
    if (items->size() != arg)
      return error(loc) << "cannot unpack " << items->size() << " values into " << arg;
    for (auto it = items->rbegin(); it != items->rend(); ++it)
      frame.push(*it);
    return success();
  }
  case Opcode::UNPACK_EX: {
    FailureOr<std::vector<Var>> items = unpack(frame.pop(), loc);
    if (failed(items))
      return failure();
    size_t before = arg & 0xff, after = arg >> 8;
    if (items->size() < before + after)
      return error(loc) << "not enough values to unpack";
    HeapObject rest;
    rest.kind = HeapObject::Kind::List;
    rest.items.assign(items->begin() + before, items->end() - after);
    for (size_t i = 0; i < after; ++i)
      frame.push((*items)[items->size() - 1 - i]);
    frame.push(makeObject(newObject(std::move(rest))));
    for (size_t i = before; i-- > 0;)
      frame.push((*items)[i]);
    return success();
  }
  case Opcode::BINARY_SUBSCR: {
    Var key = frame.pop();
    Var container = frame.pop();
    return pushResult(subscript(container, key, loc));
  }
  case Opcode::STORE_SUBSCR: {
    Var key = frame.pop();
    Var container = frame.pop();
    Var value = frame.pop();
    return storeSubscript(container, key, value, loc);
  }
  case Opcode::DELETE_SUBSCR: {
    Var key = frame.pop();
    Var container = frame.pop();
    return deleteSubscript(container, key, loc);
  }
  case Opcode::BINARY_SLICE: {
    Var slice = popSlice();
    Var container = frame.pop();
    return pushResult(subscript(container, slice, loc));
  }
  case Opcode::STORE_SLICE: {
    Var slice = popSlice();
    Var container = frame.pop();
    Var value = frame.pop();
    return storeSubscript(container, slice, value, loc);
  }
  case Opcode::GET_ITER:
    return pushResult(iterate(frame.pop(), loc));
  case Opcode::FOR_ITER: {
    Var iterator = frame.stack.back();
    const HeapObject &state = heap.get(iterator->object);
    if (state.position < state.items.size()) {
      Var item = state.items[state.position];
      heap.mutate(iterator->object).position++;
      frame.push(item);
      return success();
    }
    frame.pop();
    // Exhausted: jump past the END_FOR at the target.
    if (failed(jumpTo(frame.code->jumpTarget(instruction))))
      return failure();
    if (frame.position < frame.code->instructions.size() &&
        frame.code->instructions[frame.position].opcode == Opcode::END_FOR)
      ++frame.position;
    return success();
  }
  case Opcode::JUMP_FORWARD:
  case Opcode::JUMP_BACKWARD:
  case Opcode::JUMP_BACKWARD_NO_INTERRUPT:
    return jumpTo(frame.code->jumpTarget(instruction));
  case Opcode::POP_JUMP_IF_FALSE:
  case Opcode::POP_JUMP_IF_TRUE: {
    Var condition = frame.pop();
    if (condition->is(Variable::Kind::Tensor) && !canBreakGraph())
      return error(loc) << "graph break: the branch depends on a tensor's value (data-dependent "
                           "control flow; use torch.cond or torch.where, or compile with "
                           "--allow-graph-breaks)";
    FailureOr<bool> value = truth(condition, loc);
    if (failed(value))
      return failure();
    if (*value == (instruction.opcode == Opcode::POP_JUMP_IF_TRUE))
      return jumpTo(frame.code->jumpTarget(instruction));
    return success();
  }
  case Opcode::POP_JUMP_IF_NONE:
  case Opcode::POP_JUMP_IF_NOT_NONE: {
    bool isNone = frame.pop()->is(Variable::Kind::None);
    if (isNone == (instruction.opcode == Opcode::POP_JUMP_IF_NONE))
      return jumpTo(frame.code->jumpTarget(instruction));
    return success();
  }
  case Opcode::LOAD_ASSERTION_ERROR:
    frame.push(makeExternal("builtins.AssertionError"));
    return success();
  case Opcode::RAISE_VARARGS:
    return error(loc) << "the program raises an exception here (tgc captures programs that do "
                         "not raise)";
  case Opcode::BEFORE_WITH: {
    Var manager = frame.pop();
    FailureOr<Var> exit = getAttribute(manager, "__exit__", loc);
    FailureOr<Var> enter = failure();
    if (succeeded(exit))
      enter = getAttribute(manager, "__enter__", loc);
    if (failed(enter))
      return failure();
    frame.push(*exit);
    return pushResult(this->call(*enter, {}, loc));
  }
  default:
    return error(loc) << "bytecode " << py::getOpcodeName(static_cast<uint8_t>(instruction.opcode))
                      << " is not supported";
  }
}
