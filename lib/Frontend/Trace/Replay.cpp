// The Python state replay list (docs/replay.md): side effects -> `tgc.replay`.
#include "Replay.h"

#include "Frontend/Common/DTypes.h"
#include "Frontend/Common/Json.h"

#include "tgc/Dialect/Attributes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/StringExtras.h"
#include <deque>
#include <functional>
#include <map>
#include <tuple>

using namespace mlir;
using namespace tgc;
using namespace tgc::frontend;
using namespace tgc::py;
using namespace tgc::trace;

namespace rp = tgc::replay;
using K = Variable::Kind;
using H = HeapObject::Kind;

//===----------------------------------------------------------------------===//
// Sources
//===----------------------------------------------------------------------===//

/// A Python string literal for `s`, as repr() writes printable text: single quotes,
/// backslash escapes for `\`, `'` and control characters.
static std::string pyRepr(llvm::StringRef s) {
  std::string out = "'";
  for (unsigned char c : s) {
    switch (c) {
    case '\\':
      out += "\\\\";
      break;
    case '\'':
      out += "\\'";
      break;
    case '\n':
      out += "\\n";
      break;
    case '\r':
      out += "\\r";
      break;
    case '\t':
      out += "\\t";
      break;
    default:
      if (c < 0x20 || c == 0x7f) {
        out += "\\x";
        out += llvm::hexdigit(c >> 4, /*LowerCase=*/true);
        out += llvm::hexdigit(c & 15, /*LowerCase=*/true);
      } else {
        out += char(c);
      }
    }
  }
  return out + "'";
}

static bool isIdentifier(llvm::StringRef s) {
  if (s.empty() || llvm::isDigit(s.front()))
    return false;
  return llvm::all_of(s, [](char c) { return llvm::isAlnum(c) || c == '_'; });
}

/// `.name` when `name` is an identifier, else `.__dict__['name']`.
static std::string attributeStep(llvm::StringRef name) {
  return isIdentifier(name) ? "." + name.str() : ".__dict__[" + pyRepr(name) + "]";
}

/// A subscript step for a JSON dict key (str or int), or "" for keys without one.
static std::string keyStep(const Json &key) {
  if (key.is_string())
    return "[" + pyRepr(key.get<std::string>()) + "]";
  if (key.is_number_integer())
    return "[" + std::to_string(key.get<int64_t>()) + "]";
  return "";
}

std::vector<std::string> tgc::trace::computeSources(const TraceFile &trace) {
  size_t count = trace.getNumObjects();
  std::vector<std::string> paths(count);
  std::vector<bool> seen(count, false);
  std::deque<size_t> queue;
  auto visit = [&](const Json &value, const std::string &path) {
    if (!value.is_object() || !value.contains("ref") || !value.at("ref").is_number_integer())
      return;
    int64_t id = value.at("ref").get<int64_t>();
    if (id < 0 || size_t(id) >= count || seen[id])
      return;
    seen[id] = true;
    paths[id] = path;
    queue.push_back(id);
  };
  auto object = [&](size_t id) -> const Json * {
    llvm::Expected<const Json *> json = trace.getObject(id);
    if (!json) {
      llvm::consumeError(json.takeError());
      return nullptr;
    }
    return *json;
  };
  const Json &header = trace.header();
  const Json empty = Json::object();
  const Json &entry = header.contains("entry") ? header.at("entry") : empty;
  // Roots, all at depth 0: the callable, its arguments, every module namespace, the
  // imported modules.
  if (entry.contains("callable"))
    visit(entry.at("callable"), "fn");
  if (entry.contains("args") && entry.at("args").is_array())
    for (auto [i, arg] : llvm::enumerate(entry.at("args")))
      visit(arg, "args[" + std::to_string(i) + "]");
  if (entry.contains("kwargs") && entry.at("kwargs").is_object())
    for (auto &[name, arg] : entry.at("kwargs").items())
      visit(arg, "kwargs[" + pyRepr(name) + "]");
  for (size_t id = 0; id < count; ++id)
    if (const Json *o = object(id); o && o->value("kind", "") == "globals" &&
                                    o->contains("module") && o->at("module").is_string())
      visit(Json{{"ref", id}}, "globals[" + pyRepr(o->at("module").get<std::string>()) + "]");
  if (header.contains("modules") && header.at("modules").is_object()) {
    std::map<std::string, Json> sorted;
    for (auto &[name, value] : header.at("modules").items())
      sorted.emplace(name, value);
    for (auto &[name, value] : sorted)
      visit(value, "modules[" + pyRepr(name) + "]");
  }
  auto each = [](const Json &o, const char *key) -> const Json & {
    static const Json nothing;
    return o.contains(key) ? o.at(key) : nothing;
  };
  while (!queue.empty()) {
    size_t id = queue.front();
    queue.pop_front();
    const Json *o = object(id);
    if (!o || !o->is_object())
      continue;
    std::string kind = o->value("kind", ""), path = paths[id];
    auto items = [&](const char *key, const std::string &prefix) {
      const Json &list = each(*o, key);
      if (list.is_array())
        for (auto [i, item] : llvm::enumerate(list))
          visit(item, path + prefix + "[" + std::to_string(i) + "]");
    };
    auto named = [&](const char *key, auto step) {
      const Json &dict = each(*o, key);
      if (dict.is_object())
        for (auto &[name, value] : dict.items())
          visit(value, path + step(name));
    };
    if (kind == "tuple" || kind == "list") {
      items("items", "");
    } else if (kind == "dict") {
      const Json &list = each(*o, "items");
      if (list.is_array())
        for (const Json &item : list)
          if (item.is_array() && item.size() == 2)
            if (std::string step = keyStep(item.at(0)); !step.empty())
              visit(item.at(1), path + step);
    } else if (kind == "function") {
      items("closure", ".__closure__");
      items("defaults", ".__defaults__");
      named("kwdefaults",
            [](const std::string &n) { return ".__kwdefaults__[" + pyRepr(n) + "]"; });
      named("dict", attributeStep);
      visit(each(*o, "globals"), path + ".__globals__");
      visit(each(*o, "code"), path + ".__code__");
    } else if (kind == "cell") {
      visit(each(*o, "contents"), path + ".cell_contents");
    } else if (kind == "globals") {
      named("entries", [](const std::string &n) { return "[" + pyRepr(n) + "]"; });
    } else if (kind == "module") {
      named("attributes", attributeStep);
    } else if (kind == "class") {
      named("dict", [](const std::string &n) { return ".__dict__[" + pyRepr(n) + "]"; });
      items("bases", ".__bases__");
    } else if (kind == "object") {
      named("dict", attributeStep);
      visit(each(*o, "class"), path + ".__class__");
    } else if (kind == "method") {
      visit(each(*o, "function"), path + ".__func__");
      visit(each(*o, "self"), path + ".__self__");
    } else if (kind == "staticmethod" || kind == "classmethod") {
      visit(each(*o, "function"), path + ".__func__");
    } else if (kind == "property") {
      for (const char *key : {"fget", "fset", "fdel"})
        visit(each(*o, key), path + "." + key);
    }
  }
  return paths;
}

//===----------------------------------------------------------------------===//
// Values
//===----------------------------------------------------------------------===//

namespace {

/// Encodes final values as builtin attributes (docs/replay.md).
class ReplayBuilder {
public:
  ReplayBuilder(const TraceFile &trace, const Interpreter &interpreter, unsigned firstOutput,
                const llvm::DenseMap<int64_t, std::string> &userInputs, MLIRContext *ctx)
      : trace(trace), heap(interpreter.getHeap()), sources(computeSources(trace)),
        firstOutput(firstOutput), userInputs(userInputs), ctx(ctx), b(ctx) {}

  FailureOr<Replay> build(llvm::ArrayRef<SideEffect> effects, llvm::ArrayRef<Var> returned,
                          Location returnLoc);

private:
  /// The value `value`, which lives at `path` after the call; errors at `loc`.
  FailureOr<Attribute> encode(const Var &value, const std::string &path, Location loc);
  /// `[[name, value]...]` of an object's or function's attributes at `path`.
  FailureOr<Attribute> encodeAttributes(llvm::ArrayRef<std::pair<std::string, Var>> attributes,
                                        const std::string &path, Location loc);
  /// The contents of container `h` (a list, dict or set) as a value without identity.
  FailureOr<Attribute> encodeContents(const HeapObject &h, const std::string &path, Location loc,
                                      std::optional<int64_t> id);
  /// The source of a trace object, or an error.
  FailureOr<std::string> sourceOf(const HeapObject &h, const std::string &what, Location loc);
  /// A function the program created (`MAKE_FUNCTION`), with replay id `id`.
  FailureOr<Attribute> encodeFunction(const HeapObject &h, const std::string &path, Location loc,
                                      int64_t id);
  /// A tensor value the program computed, which lives at `path` after the call: a
  /// python_state output (one per heap object).
  Attribute encodeStateTensor(ObjectId object, Value tensor, const std::string &path,
                              Variable::Number number);
  /// The source of a code object: a trace `code` object's, or a constant of one
  /// (`.co_consts[i]`, nested); "" if no sourced code object holds it.
  std::string codeSource(const py::CodeObject *code);
  DictionaryAttr dict(llvm::ArrayRef<NamedAttribute> entries) {
    return b.getDictionaryAttr(entries);
  }
  NamedAttribute named(llvm::StringRef key, Attribute value) { return b.getNamedAttr(key, value); }
  InFlightDiagnostic fail(Location loc, const std::string &path) {
    return emitError(loc) << "cannot replay the Python state '" << path << "' the program leaves: ";
  }

  const TraceFile &trace;
  const Heap &heap;
  std::vector<std::string> sources;
  /// Sources of the code objects reachable from the trace's sourced `code` objects,
  /// filled on first use.
  std::optional<llvm::DenseMap<const py::CodeObject *, std::string>> codeSources;
  unsigned firstOutput;
  /// The user inputs' names, by trace object id.
  const llvm::DenseMap<int64_t, std::string> &userInputs;
  MLIRContext *ctx;
  Builder b;
  /// Program-created objects already described, with their replay ids.
  llvm::DenseMap<ObjectId, int64_t> newIds;
  /// New closure cells with an id but not yet described (encodeFunction numbers a
  /// function's new cells before any of their values, as the loader creates them).
  llvm::DenseSet<ObjectId> reserved;
  /// Program-created tensors, by heap object, with their index in `replay.tensors`.
  llvm::DenseMap<ObjectId, unsigned> tensorIndex;
  Replay replay;
};

} // namespace

static const char *heapKindName(H kind) {
  switch (kind) {
  case H::List:
    return "list";
  case H::Dict:
    return "dict";
  case H::Set:
    return "set";
  case H::Cell:
    return "cell";
  case H::Instance:
    return "object";
  case H::Class:
    return "class";
  case H::Function:
    return "function";
  case H::Globals:
    return "module namespace";
  case H::Module:
    return "module";
  case H::Iterator:
    return "iterator";
  case H::StaticMethod:
    return "staticmethod";
  case H::ClassMethod:
    return "classmethod";
  case H::Property:
    return "property";
  case H::Opaque:
    return "opaque object";
  case H::Tensor:
    return "tensor";
  }
  return "object";
}

FailureOr<std::string> ReplayBuilder::sourceOf(const HeapObject &h, const std::string &what,
                                               Location loc) {
  if (h.traceId >= 0 && size_t(h.traceId) < sources.size() && !sources[h.traceId].empty())
    return sources[h.traceId];
  return emitError(loc) << "cannot replay a write to " << what << ": trace object #" << h.traceId
                        << " (a " << heapKindName(h.kind)
                        << ") is not reachable from the entry's callable, arguments, "
                           "module globals or modules";
}

FailureOr<Attribute> ReplayBuilder::encodeContents(const HeapObject &h, const std::string &path,
                                                   Location loc, std::optional<int64_t> id) {
  SmallVector<NamedAttribute> entries;
  SmallVector<Attribute> items;
  StringRef type;
  if (h.kind == H::List || h.kind == H::Set) {
    type = h.kind == H::List ? rp::kList : rp::kSet;
    for (auto [i, item] : llvm::enumerate(h.items)) {
      FailureOr<Attribute> v =
          encode(item, h.kind == H::List ? path + "[" + std::to_string(i) + "]" : path, loc);
      if (failed(v))
        return failure();
      items.push_back(*v);
    }
  } else if (h.kind == H::Dict) {
    type = rp::kDict;
    for (const auto &[key, value] : h.entries) {
      std::string step = key->is(K::Str) ? "[" + pyRepr(key->name) + "]"
                         : key->getConstantInt()
                             ? "[" + std::to_string(*key->getConstantInt()) + "]"
                             : "[?]";
      FailureOr<Attribute> k = encode(key, path + "<key>", loc);
      if (failed(k))
        return failure();
      FailureOr<Attribute> v = encode(value, path + step, loc);
      if (failed(v))
        return failure();
      items.push_back(b.getArrayAttr({*k, *v}));
    }
  } else {
    return fail(loc, path) << "the contents of a " << heapKindName(h.kind);
  }
  entries.push_back(named(rp::kTypeKey, b.getStringAttr(type)));
  entries.push_back(named(rp::kItemsKey, b.getArrayAttr(items)));
  if (id)
    entries.push_back(named(rp::kIdKey, b.getI64IntegerAttr(*id)));
  return Attribute(dict(entries));
}

FailureOr<Attribute> ReplayBuilder::encode(const Var &value, const std::string &path,
                                           Location loc) {
  switch (value->kind) {
  case K::None:
    return Attribute(UnitAttr::get(ctx));
  case K::Bool:
    return Attribute(b.getBoolAttr(value->boolValue));
  case K::Int:
    if (std::optional<int64_t> i = value->getConstantInt())
      return Attribute(b.getI64IntegerAttr(*i));
    return fail(loc, path) << "a symbolic int (one that depends on a dynamic size) is not "
                              "supported yet";
  case K::Float:
    return Attribute(b.getF64FloatAttr(value->floatValue));
  case K::Str:
    return Attribute(b.getStringAttr(value->name));
  case K::Tuple: {
    SmallVector<NamedAttribute> entries{named(rp::kTypeKey, b.getStringAttr(rp::kTuple))};
    if (value->tupleClass) {
      FailureOr<Attribute> cls = encode(value->tupleClass, path + ".__class__", loc);
      if (failed(cls))
        return failure();
      entries.push_back(named(rp::kClassKey, *cls));
    }
    SmallVector<Attribute> items;
    for (auto [i, item] : llvm::enumerate(value->items)) {
      FailureOr<Attribute> v = encode(item, path + "[" + std::to_string(i) + "]", loc);
      if (failed(v))
        return failure();
      items.push_back(*v);
    }
    entries.push_back(named(rp::kItemsKey, b.getArrayAttr(items)));
    return Attribute(dict(entries));
  }
  case K::DType: {
    std::string name = value->name;
    if (name.empty())
      if (std::optional<TorchDType> dtype = lookupDTypeByType(value->type))
        name = dtype->name.str();
    if (name.empty())
      return fail(loc, path) << "a dtype tgc has no torch name for";
    return Attribute(dict({named(rp::kTypeKey, b.getStringAttr(rp::kDType)),
                           named(rp::kNameKey, b.getStringAttr(name))}));
  }
  case K::External:
    return Attribute(dict({named(rp::kTypeKey, b.getStringAttr(rp::kExternal)),
                           named(rp::kNameKey, b.getStringAttr(value->name))}));
  case K::Device:
    return Attribute(dict({named(rp::kTypeKey, b.getStringAttr(rp::kDevice)),
                           named(rp::kNameKey, b.getStringAttr(value->name))}));
  case K::Tensor:
  case K::Object:
    break;
  default:
    return fail(loc, path) << "this kind of value (Variable kind " << int(value->kind)
                           << ") is not supported yet";
  }
  const HeapObject &h = heap.get(value->object);
  if (h.traceId >= 0) {
    FailureOr<std::string> source = sourceOf(h, "'" + path + "'", loc);
    if (failed(source))
      return failure();
    return Attribute(dict({named(rp::kTypeKey, b.getStringAttr(rp::kRef)),
                           named(rp::kSourceKey, b.getStringAttr(*source))}));
  }
  if (h.kind == H::Tensor)
    return encodeStateTensor(value->object, h.tensor, path, value->number);
  int64_t id = newIds.size();
  if (auto it = newIds.find(value->object); it != newIds.end()) {
    // A closure cell whose id encodeFunction reserved is described here, once.
    if (!reserved.erase(value->object))
      return Attribute(dict({named(rp::kTypeKey, b.getStringAttr(rp::kSame)),
                             named(rp::kIdKey, b.getI64IntegerAttr(it->second))}));
    id = it->second;
  } else {
    newIds[value->object] = id;
  }
  switch (h.kind) {
  case H::List:
  case H::Dict:
  case H::Set:
    if (h.classObject)
      return fail(loc, path) << "a " << heapKindName(h.kind)
                             << " subclass the program created is not supported yet";
    return encodeContents(h, path, loc, id);
  case H::Instance: {
    if (!h.classObject)
      return fail(loc, path) << "an object without a class";
    FailureOr<Attribute> cls = encode(h.classObject, path + ".__class__", loc);
    if (failed(cls))
      return failure();
    FailureOr<Attribute> attributes = encodeAttributes(h.attributes, path, loc);
    if (failed(attributes))
      return failure();
    return Attribute(dict({named(rp::kTypeKey, b.getStringAttr(rp::kObject)),
                           named(rp::kIdKey, b.getI64IntegerAttr(id)), named(rp::kClassKey, *cls),
                           named(rp::kAttributesKey, *attributes)}));
  }
  case H::Cell: {
    SmallVector<NamedAttribute> entries{named(rp::kTypeKey, b.getStringAttr(rp::kCell)),
                                        named(rp::kIdKey, b.getI64IntegerAttr(id))};
    if (h.contents) {
      FailureOr<Attribute> v = encode(h.contents, path + ".cell_contents", loc);
      if (failed(v))
        return failure();
      entries.push_back(named(rp::kValueKey, *v));
    }
    return Attribute(dict(entries));
  }
  case H::Function:
    return encodeFunction(h, path, loc, id);
  default:
    return fail(loc, path) << "a " << heapKindName(h.kind)
                           << " the program created is not supported yet";
  }
}

Attribute ReplayBuilder::encodeStateTensor(ObjectId object, Value tensor, const std::string &path,
                                           Variable::Number number) {
  auto [it, inserted] = tensorIndex.try_emplace(object, replay.tensors.size());
  if (inserted)
    replay.tensors.push_back({tensor, path});
  SmallVector<NamedAttribute> entries = {
      named(rp::kTypeKey, b.getStringAttr(rp::kTensor)),
      named(rp::kOutputKey, b.getI64IntegerAttr(firstOutput + it->second))};
  if (number != Variable::Number::None)
    entries.push_back(named(rp::kNumberKey, b.getStringAttr(numberName(number))));
  return dict(entries);
}

std::string ReplayBuilder::codeSource(const py::CodeObject *code) {
  if (!codeSources) {
    codeSources.emplace();
    // Trace code objects by their source's length (shortest first), then id.
    std::vector<std::pair<size_t, size_t>> roots;
    for (size_t id = 0; id < sources.size(); ++id) {
      if (sources[id].empty())
        continue;
      if (llvm::Expected<const Json *> json = trace.getObject(id); !json)
        llvm::consumeError(json.takeError());
      else if ((*json)->value("kind", "") == "code")
        roots.push_back({sources[id].size(), id});
    }
    llvm::sort(roots);
    std::function<void(const py::CodeObject *, const std::string &)> walk =
        [&](const py::CodeObject *c, const std::string &source) {
          if (!codeSources->try_emplace(c, source).second)
            return;
          for (auto [i, constant] : llvm::enumerate(c->consts))
            if (constant && constant->kind == py::Constant::Kind::Code && constant->code)
              walk(constant->code.get(), source + ".co_consts[" + std::to_string(i) + "]");
        };
    for (auto [length, id] : roots) {
      llvm::Expected<py::CodeRef> c = trace.getCode(id);
      if (!c) {
        llvm::consumeError(c.takeError());
        continue;
      }
      walk(c->get(), sources[id] + "");
    }
  }
  auto it = codeSources->find(code);
  return it == codeSources->end() ? "" : it->second;
}

FailureOr<Attribute> ReplayBuilder::encodeFunction(const HeapObject &h, const std::string &path,
                                                   Location loc, int64_t id) {
  std::string code = h.code ? codeSource(h.code.get()) : "";
  if (code.empty())
    return fail(loc, path) << "the code object of function '" << h.qualname
                           << "' is not a constant of any code object reachable from the "
                              "entry's callable, arguments, module globals or modules";
  const HeapObject &globals = heap.get(h.globals);
  FailureOr<std::string> globalsSource = sourceOf(globals, "'" + path + ".__globals__'", loc);
  if (failed(globalsSource))
    return failure();
  SmallVector<NamedAttribute> entries{named(rp::kTypeKey, b.getStringAttr(rp::kFunction)),
                                      named(rp::kIdKey, b.getI64IntegerAttr(id)),
                                      named(rp::kCodeKey, b.getStringAttr(code)),
                                      named(rp::kGlobalsKey, b.getStringAttr(*globalsSource)),
                                      named(rp::kNameKey, b.getStringAttr(h.name)),
                                      named(rp::kQualnameKey, b.getStringAttr(h.qualname))};
  // Defaults and kwdefaults before the closure: the loader builds them before the
  // function and fills the closure's new cells after it (so a cell may hold it).
  auto values = [&](llvm::ArrayRef<Var> list, const std::string &prefix) -> FailureOr<Attribute> {
    if (list.empty())
      return Attribute(UnitAttr::get(ctx));
    SmallVector<Attribute> items;
    for (auto [i, item] : llvm::enumerate(list)) {
      FailureOr<Attribute> v = encode(item, path + prefix + "[" + std::to_string(i) + "]", loc);
      if (failed(v))
        return failure();
      items.push_back(*v);
    }
    return Attribute(b.getArrayAttr(items));
  };
  FailureOr<Attribute> defaults = values(h.defaults, ".__defaults__");
  if (failed(defaults))
    return failure();
  entries.push_back(named(rp::kDefaultsKey, *defaults));
  Attribute kwDefaults = UnitAttr::get(ctx);
  if (!h.kwDefaults.empty()) {
    SmallVector<Attribute> items;
    for (const auto &[name, value] : h.kwDefaults) {
      FailureOr<Attribute> v = encode(value, path + ".__kwdefaults__[" + pyRepr(name) + "]", loc);
      if (failed(v))
        return failure();
      items.push_back(b.getArrayAttr({b.getStringAttr(name), *v}));
    }
    kwDefaults = b.getArrayAttr(items);
  }
  entries.push_back(named(rp::kKwDefaultsKey, kwDefaults));
  for (const Var &cell : h.closure) {
    if (heap.kindOf(cell) != H::Cell)
      return fail(loc, path) << "a closure item of function '" << h.qualname << "' is not a cell";
    if (heap.get(cell->object).traceId < 0 && !newIds.count(cell->object)) {
      int64_t next = newIds.size();
      newIds[cell->object] = next;
      reserved.insert(cell->object);
    }
  }
  FailureOr<Attribute> closure = values(h.closure, ".__closure__");
  if (failed(closure))
    return failure();
  entries.push_back(named(rp::kClosureKey, *closure));
  FailureOr<Attribute> attributes = encodeAttributes(h.attributes, path, loc);
  if (failed(attributes))
    return failure();
  entries.push_back(named(rp::kAttributesKey, *attributes));
  return Attribute(dict(entries));
}

FailureOr<Attribute>
ReplayBuilder::encodeAttributes(llvm::ArrayRef<std::pair<std::string, Var>> attributes,
                                const std::string &path, Location loc) {
  SmallVector<Attribute> pairs;
  for (const auto &[name, attribute] : attributes) {
    FailureOr<Attribute> v = encode(attribute, path + attributeStep(name), loc);
    if (failed(v))
      return failure();
    pairs.push_back(b.getArrayAttr({b.getStringAttr(name), *v}));
  }
  return Attribute(b.getArrayAttr(pairs));
}

FailureOr<Replay> ReplayBuilder::build(llvm::ArrayRef<SideEffect> effects,
                                       llvm::ArrayRef<Var> returned, Location returnLoc) {
  // One target per (group, object, name), in order of its first write, with its last
  // write (where errors about the replayed value go; a hook registration's hook).
  enum Group { Attribute_, Contents, Cell, Global, Storage, Hook, GradHook };
  using Key = std::tuple<int, ObjectId, std::string>;
  llvm::MapVector<Key, const SideEffect *, std::map<Key, unsigned>> targets;
  for (const SideEffect &effect : effects) {
    Group group = Attribute_;
    switch (effect.kind) {
    case SideEffect::Kind::SetAttribute:
    case SideEffect::Kind::DeleteAttribute:
      group = Attribute_;
      break;
    case SideEffect::Kind::SetContents:
      group = Contents;
      break;
    case SideEffect::Kind::SetCell:
      group = Cell;
      break;
    case SideEffect::Kind::SetGlobal:
      group = Global;
      break;
    case SideEffect::Kind::Resize:
      group = Storage;
      break;
    case SideEffect::Kind::RegisterHook:
      group = Hook;
      break;
    case SideEffect::Kind::GradHook:
      group = GradHook;
      break;
    }
    // Every hook registration is an action of its own (`name` numbers them).
    std::string name = group == Attribute_ || group == Global || group == Hook || group == GradHook
                           ? effect.name
                           : "";
    auto [it, inserted] = targets.insert({Key{group, effect.object, name}, &effect});
    if (!inserted)
      it->second = &effect;
  }
  SmallVector<Attribute> actions;
  for (const auto &[key, last] : targets) {
    auto &[group, object, name] = key;
    Location loc = last->loc;
    if (group == GradHook) {
      // A hook the caller keeps for the backward's `grad_hook` steps (the tensor has no
      // source: the program computes it).
      std::string path = "the gradient hook #" + name;
      FailureOr<Attribute> hook = encode(last->value, path, loc);
      if (failed(hook))
        return failure();
      actions.push_back(
          dict({named(rp::kKindKey, b.getStringAttr(rp::kGradHook)),
                named(rp::kPathKey, b.getStringAttr(path)), named(rp::kValueKey, *hook)}));
      continue;
    }
    const HeapObject &h = heap.get(object);
    FailureOr<std::string> source = sourceOf(h, "a " + std::string(heapKindName(h.kind)), loc);
    if (failed(source))
      return failure();
    SmallVector<NamedAttribute> entries;
    std::string path;
    StringRef kind;
    Var finalValue;
    bool contents = false;
    switch (group) {
    case Attribute_:
      path = *source + attributeStep(name);
      finalValue = h.getAttribute(name);
      kind = finalValue ? rp::kSetAttr : rp::kDelAttr;
      break;
    case Global:
      path = *source + "[" + pyRepr(name) + "]";
      finalValue = h.getAttribute(name);
      kind = finalValue ? rp::kSetGlobal : rp::kDelGlobal;
      break;
    case Cell:
      path = *source + ".cell_contents";
      finalValue = h.contents;
      kind = finalValue ? rp::kSetCell : rp::kDelCell;
      break;
    case Contents:
      path = *source;
      kind = rp::kSetContents;
      contents = true;
      break;
    case Storage: {
      // The caller's tensor gets the sizes and values the program left in it. Only a
      // user input can: a parameter's or buffer's storage is the model's state.
      path = *source;
      auto input = userInputs.find(h.traceId);
      if (input == userInputs.end())
        return fail(loc, path) << "out= resizes a tensor that is not an input of the program "
                                  "(only an input's new sizes and values can be replayed)";
      actions.push_back(dict({named(rp::kKindKey, b.getStringAttr(rp::kResize)),
                              named(rp::kSourceKey, b.getStringAttr(*source)),
                              named(rp::kPathKey, b.getStringAttr(path)),
                              named(rp::kInputKey, b.getStringAttr(input->second)),
                              named(rp::kValueKey, encodeStateTensor(object, h.tensor, path,
                                                                     Variable::Number::None))}));
      continue;
    }
    case GradHook:
      llvm_unreachable("handled above");
    case Hook: {
      // The hook itself (a function the program made, or one that existed) is
      // registered on the live tensor, where autograd runs it in backward.
      path = *source;
      FailureOr<Attribute> hook = encode(last->value, path + ".register_hook()", loc);
      if (failed(hook))
        return failure();
      actions.push_back(
          dict({named(rp::kKindKey, b.getStringAttr(rp::kRegisterHook)),
                named(rp::kSourceKey, b.getStringAttr(*source)),
                named(rp::kPathKey, b.getStringAttr(path)), named(rp::kValueKey, *hook)}));
      continue;
    }
    }
    entries.push_back(named(rp::kKindKey, b.getStringAttr(kind)));
    entries.push_back(named(rp::kSourceKey, b.getStringAttr(*source)));
    entries.push_back(named(rp::kPathKey, b.getStringAttr(path)));
    if (group == Attribute_ || group == Global)
      entries.push_back(named(rp::kNameKey, b.getStringAttr(name)));
    if (contents || finalValue) {
      FailureOr<Attribute> value =
          contents ? encodeContents(h, path, loc, std::nullopt) : encode(finalValue, path, loc);
      if (failed(value))
        return failure();
      entries.push_back(named(rp::kValueKey, *value));
    }
    actions.push_back(dict(entries));
  }
  // The parts of the returned value that only these values describe (an object or a
  // function the program made, a number from a tensor), after the state they may share
  // objects with.
  for (auto [i, value] : llvm::enumerate(returned)) {
    FailureOr<Attribute> encoded =
        encode(value, "the returned value #" + std::to_string(i), returnLoc);
    if (failed(encoded))
      return failure();
    actions.push_back(
        dict({named(rp::kKindKey, b.getStringAttr(rp::kReturn)), named(rp::kValueKey, *encoded)}));
  }
  replay.actions = b.getArrayAttr(actions);
  return std::move(replay);
}

FailureOr<Replay> tgc::trace::buildReplay(const TraceFile &trace, const Interpreter &interpreter,
                                          unsigned firstOutput,
                                          const llvm::DenseMap<int64_t, std::string> &userInputs,
                                          MLIRContext *ctx, Location loc) {
  return ReplayBuilder(trace, interpreter, firstOutput, userInputs, ctx)
      .build(interpreter.getSideEffects(), interpreter.getReturnedValues(), loc);
}

std::string tgc::trace::sourceStringLiteral(llvm::StringRef s) { return pyRepr(s); }

std::string tgc::trace::sourceAttributeStep(llvm::StringRef name) { return attributeStep(name); }

bool tgc::trace::throughHookDict(llvm::StringRef source) {
  for (size_t at = source.find("hooks["); at != llvm::StringRef::npos;
       at = source.find("hooks[", at + 1)) {
    size_t dot = source.rfind('.', at);
    if (dot != llvm::StringRef::npos &&
        source.slice(dot + 1, at).find_first_of("[]'\"") == llvm::StringRef::npos)
      return true;
  }
  return false;
}
