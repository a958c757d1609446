// Python semantics of the bytecode interpreter: attributes, calls, builtins, operators,
// containers, and the side effects they record.
#include "Interpreter.h"

#include "Frontend/Common/DTypes.h"
#include "Frontend/Common/Json.h"
#include "TorchFunctions.h"
#include "tgc/Dialect/TgcDialect.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include <charconv>
#include <cmath>

using namespace mlir;
using namespace tgc;
using namespace tgc::frontend;
using namespace tgc::py;

/// The external classes whose subclasses get torch's behaviour.
static constexpr llvm::StringLiteral kModuleClass = "torch.nn.Module";

/// Python's ordering of two constants: numbers, strings, tuples item by item; nullopt
/// when it is not known at capture time (a tie reaching a non-constant).
static std::optional<int> compareConstants(const Var &a, const Var &b) {
  if (a->is(Variable::Kind::Str) && b->is(Variable::Kind::Str))
    return a->name < b->name ? -1 : b->name < a->name ? 1 : 0;
  std::optional<double> x = a->getNumber(), y = b->getNumber();
  if (x && y)
    return *x < *y ? -1 : *y < *x ? 1 : 0;
  if (a->is(Variable::Kind::Tuple) && b->is(Variable::Kind::Tuple)) {
    for (size_t i = 0; i < a->items.size() && i < b->items.size(); ++i) {
      std::optional<int> c = compareConstants(a->items[i], b->items[i]);
      if (!c || *c != 0)
        return c;
    }
    return a->items.size() < b->items.size() ? -1 : int(a->items.size() > b->items.size());
  }
  return std::nullopt;
}

/// The `reverse=` of sorted() / list.sort(), which support no key function: nullopt,
/// with the keyword in `unsupported`, for any other keyword.
static std::optional<bool>
sortReverse(const std::vector<std::pair<std::string, Var>> &keywords, std::string &unsupported) {
  bool reverse = false;
  for (const auto &[keyword, value] : keywords) {
    if (keyword == "reverse" && value->is(Variable::Kind::Bool)) {
      reverse = value->boolValue;
    } else if (!(keyword == "key" && value->is(Variable::Kind::None))) {
      unsupported = keyword;
      return std::nullopt;
    }
  }
  return reverse;
}

/// Sorts `items` stably as Python would; false when their order is not known.
static bool sortConstants(std::vector<Var> &items, bool reverse) {
  bool decided = true;
  std::stable_sort(items.begin(), items.end(), [&](const Var &a, const Var &b) {
    std::optional<int> c = compareConstants(a, b);
    decided &= c.has_value();
    return c && (reverse ? *c > 0 : *c < 0);
  });
  return decided;
}

/// The attributes of torch.nn.Module itself (`dir(torch.nn.Module)` without dunders, torch
/// 2.11): what hasattr/getattr find on a module that its instance and class do not have.
static bool isModuleAttribute(llvm::StringRef name) {
  static const llvm::StringRef kNames[] = {
      "T_destination", "_apply", "_call_impl", "_compiled_call_impl", "_get_backward_hooks",
      "_get_backward_pre_hooks", "_get_name", "_load_from_state_dict",
      "_maybe_warn_non_full_backward_hook", "_named_members",
      "_register_load_state_dict_pre_hook", "_register_state_dict_hook",
      "_replicate_for_data_parallel", "_save_to_state_dict", "_slow_forward", "_version",
      "_wrapped_call_impl", "add_module", "apply", "bfloat16", "buffers", "call_super_init",
      "children", "compile", "cpu", "cuda", "double", "dump_patches", "eval", "extra_repr",
      "float", "forward", "get_buffer", "get_extra_state", "get_parameter", "get_submodule",
      "half", "ipu", "load_state_dict", "modules", "mtia", "named_buffers", "named_children",
      "named_modules", "named_parameters", "parameters", "register_backward_hook",
      "register_buffer", "register_forward_hook", "register_forward_pre_hook",
      "register_full_backward_hook", "register_full_backward_pre_hook",
      "register_load_state_dict_post_hook", "register_load_state_dict_pre_hook",
      "register_module", "register_parameter", "register_state_dict_post_hook",
      "register_state_dict_pre_hook", "requires_grad_", "set_extra_state", "set_submodule",
      "share_memory", "state_dict", "to", "to_empty", "train", "type", "xpu", "zero_grad"};
  return llvm::is_contained(kNames, name);
}
static constexpr llvm::StringLiteral kTensorClass = "torch.Tensor";

using K = Variable::Kind;
using H = HeapObject::Kind;

/// The heap kind of `v`, if it is an object.
static std::optional<H> heapKind(const Heap &heap, const Var &v) { return heap.kindOf(v); }

/// An int expression as Python would print it.
static std::string printSize(AffineExpr size) {
  std::string text;
  llvm::raw_string_ostream os(text);
  size.print(os);
  return text;
}

static std::string describe(const Heap &heap, const Var &v) {
  switch (v->kind) {
  case K::None:
    return "None";
  case K::Bool:
    return "bool";
  case K::Int:
    return "int";
  case K::Float:
    return "float";
  case K::Str:
    return "str '" + v->name + "'";
  case K::Tuple:
    return "tuple";
  case K::External:
    return v->name;
  case K::Tensor:
    return "Tensor";
  case K::Object: {
    const HeapObject &h = heap.get(v->object);
    switch (h.kind) {
    case H::List:
      return "list";
    case H::Dict:
      return "dict";
    case H::Function:
      return "function " + h.qualname;
    case H::Class:
      return "class " + h.qualname;
    case H::Instance:
      return h.classObject && h.classObject->is(K::Object)
                 ? heap.get(h.classObject->object).qualname + " object"
                 : "object";
    case H::Opaque:
      return h.name + " (" + h.repr + ")";
    default:
      return "object";
    }
  }
  default:
    return "value";
  }
}

HeapObject &Interpreter::mutateObject(ObjectId id, SideEffect::Kind kind, llvm::StringRef name,
                                      Var value, Location loc) {
  if (heap.get(id).traceId >= 0)
    sideEffects.push_back({kind, id, name.str(), value, loc});
  bool contents = kind == SideEffect::Kind::SetContents;
  writtenTargets.insert({id, contents ? 1 : 0,
                         contents || kind == SideEffect::Kind::SetCell ? "" : name.str()});
  return heap.mutate(id);
}

bool Interpreter::identical(const Var &lhs, const Var &rhs) const {
  if (lhs == rhs)
    return true;
  if (lhs->kind != rhs->kind)
    return false;
  switch (lhs->kind) {
  case K::None:
  case K::Null:
  case K::Ellipsis:
    return true;
  case K::Bool:
    return lhs->boolValue == rhs->boolValue;
  case K::Int:
    return lhs->size == rhs->size;
  case K::Str:
  case K::External:
  case K::DType:
  case K::Device:
    return lhs->name == rhs->name;
  case K::Object:
  case K::Tensor:
    return lhs->object == rhs->object;
  default:
    return false;
  }
}

/// Bounds of a size expression over the symbols' ranges; nullopt for unbounded.
struct SizeInterval {
  std::optional<int64_t> lo, hi;
};

static SizeInterval boundsOf(AffineExpr e, llvm::ArrayRef<SymbolRange> ranges) {
  if (auto c = llvm::dyn_cast<AffineConstantExpr>(e))
    return {c.getValue(), c.getValue()};
  if (auto sym = llvm::dyn_cast<AffineSymbolExpr>(e)) {
    if (sym.getPosition() >= ranges.size())
      return {};
    return {ranges[sym.getPosition()].min, ranges[sym.getPosition()].max};
  }
  auto binary = llvm::cast<AffineBinaryOpExpr>(e);
  SizeInterval a = boundsOf(binary.getLHS(), ranges), b = boundsOf(binary.getRHS(), ranges);
  auto both = [](std::optional<int64_t> x, std::optional<int64_t> y, auto fn) {
    return x && y ? std::optional<int64_t>(fn(*x, *y)) : std::nullopt;
  };
  std::optional<int64_t> c = b.lo && b.lo == b.hi ? b.lo : std::nullopt;
  switch (binary.getKind()) {
  case AffineExprKind::Add:
    return {both(a.lo, b.lo, std::plus<int64_t>()), both(a.hi, b.hi, std::plus<int64_t>())};
  case AffineExprKind::Mul:
    if (c && *c >= 0)
      return {both(a.lo, c, std::multiplies<int64_t>()), both(a.hi, c, std::multiplies<int64_t>())};
    if (c)
      return {both(a.hi, c, std::multiplies<int64_t>()), both(a.lo, c, std::multiplies<int64_t>())};
    if (a.lo && *a.lo >= 0 && b.lo && *b.lo >= 0)
      return {*a.lo * *b.lo, both(a.hi, b.hi, std::multiplies<int64_t>())};
    return {};
  case AffineExprKind::FloorDiv:
  case AffineExprKind::CeilDiv: {
    if (!c || *c <= 0)
      return {};
    bool floor = binary.getKind() == AffineExprKind::FloorDiv;
    auto div = [&](std::optional<int64_t> x) -> std::optional<int64_t> {
      if (!x)
        return std::nullopt;
      return floor ? llvm::divideFloorSigned(*x, *c) : llvm::divideCeilSigned(*x, *c);
    };
    return {div(a.lo), div(a.hi)};
  }
  case AffineExprKind::Mod:
    if (c && *c > 0) {
      if (a.lo && *a.lo >= 0 && a.hi && *a.hi < *c)
        return a;
      return {0, *c - 1};
    }
    return {};
  default:
    return {};
  }
}

/// Decides `lhs op rhs` for sizes over the symbols' ranges (what the trace recorded for
/// `--dynamic` dimensions): true or false when it holds, or fails, for every size in
/// the range; otherwise the program would need a guard, which is an error.
FailureOr<bool> Interpreter::compareSizes(llvm::StringRef op, AffineExpr lhs, AffineExpr rhs,
                                          Location loc) {
  SizeInterval d = boundsOf(lhs - rhs, symbolRanges);
  auto below = [](std::optional<int64_t> x, int64_t v) { return x && *x < v; };
  auto above = [](std::optional<int64_t> x, int64_t v) { return x && *x > v; };
  std::optional<bool> result;
  if (lhs == rhs)
    result = op == "==" || op == "<=" || op == ">=";
  else if (op == "==" || op == "!=") {
    if (below(d.hi, 0) || above(d.lo, 0))
      result = op == "!=";
  } else if (op == "<" || op == ">=") {
    if (below(d.hi, 0))
      result = op == "<";
    else if (d.lo && *d.lo >= 0)
      result = op == ">=";
  } else if (op == "<=" || op == ">") {
    if (d.hi && *d.hi <= 0)
      result = op == "<=";
    else if (above(d.lo, 0))
      result = op == ">";
  }
  if (result)
    return *result;
  return error(loc) << "the comparison " << printSize(lhs) << " " << op << " " << printSize(rhs)
                    << " depends on the value of a dynamic size (it differs within the "
                       "--dynamic range); tgc does not guard on sizes yet";
}

FailureOr<bool> Interpreter::equals(Var lhs, Var rhs, Location loc) {
  if (identical(lhs, rhs))
    return true;
  std::optional<double> a = lhs->getNumber(), b = rhs->getNumber();
  if (a && b)
    return *a == *b;
  if (lhs->is(K::Int) && rhs->is(K::Int))
    return compareSizes("==", lhs->size, rhs->size, loc);
  if (lhs->is(K::Tuple) && rhs->is(K::Tuple)) {
    if (lhs->items.size() != rhs->items.size())
      return false;
    for (auto [x, y] : llvm::zip(lhs->items, rhs->items)) {
      FailureOr<bool> same = equals(x, y, loc);
      if (failed(same) || !*same)
        return same;
    }
    return true;
  }
  return false;
}

FailureOr<bool> Interpreter::truth(Var value, Location loc) {
  switch (value->kind) {
  case K::None:
    return false;
  case K::Bool:
    return value->boolValue;
  case K::Int: {
    std::optional<int64_t> i = value->getConstantInt();
    if (!i)
      return compareSizes("!=", value->size, getAffineConstantExpr(0, ctx), loc);
    return *i != 0;
  }
  case K::Float:
    return value->floatValue != 0;
  case K::Str:
    return !value->name.empty();
  case K::Tuple:
    return !value->items.empty();
  case K::Tensor:
    if (canBreakGraph())
      return breakOnTensorTruth(value, loc);
    return error(loc) << "graph break: the truth of a tensor depends on its values";
  case K::Object: {
    const HeapObject &h = heap.get(value->object);
    if (h.kind == H::List || h.kind == H::Set || h.kind == H::Dict) {
      size_t n = h.kind == H::Dict ? h.entries.size() : h.items.size();
      noteRead(GuardRead::Step::Length, value->object, "", nullptr, makeInt(n, ctx), loc);
      return n != 0;
    }
    if (h.kind == H::Instance) {
      FailureOr<Var> len = lookupAttribute(value, "__len__", loc);
      if (succeeded(len) && *len) {
        FailureOr<Var> n = call(*len, {}, loc);
        if (failed(n))
          return failure();
        return truth(*n, loc);
      }
    }
    return true;
  }
  default:
    return true;
  }
}

//===----------------------------------------------------------------------===//
// Classes and attributes
//===----------------------------------------------------------------------===//

FailureOr<Var> Interpreter::getClassOf(Var value) {
  switch (value->kind) {
  case K::Tensor:
    return makeExternal(kTensorClass);
  case K::Int:
    return makeExternal("builtins.int");
  case K::Float:
    return makeExternal("builtins.float");
  case K::Bool:
    return makeExternal("builtins.bool");
  case K::Str:
    return makeExternal("builtins.str");
  case K::None:
    return makeExternal("builtins.NoneType");
  case K::Tuple:
    return makeExternal("builtins.tuple");
  case K::Slice:
    return makeExternal("builtins.slice");
  case K::Range:
    return makeExternal("builtins.range");
  case K::DType:
    return makeExternal("torch.dtype");
  case K::Device:
    return makeExternal("torch.device");
  case K::Object: {
    const HeapObject &h = heap.get(value->object);
    if (h.classObject)
      return h.classObject;
    switch (h.kind) {
    case H::List:
      return makeExternal("builtins.list");
    case H::Dict:
      return makeExternal("builtins.dict");
    case H::Set:
      return makeExternal("builtins.set");
    case H::Function:
      return makeExternal("builtins.function");
    case H::Class:
      return makeExternal("builtins.type");
    default:
      return makeExternal("builtins.object");
    }
  }
  default:
    return makeExternal("builtins.object");
  }
}

bool Interpreter::isSubclass(Var cls, llvm::StringRef externalName) {
  if (cls->is(K::External))
    return cls->name == externalName ||
           (externalName == "builtins.object") ||
           (externalName == "builtins.int" && cls->name == "builtins.bool") ||
           (externalName == kTensorClass && cls->name == "torch.nn.Parameter");
  if (heapKind(heap, cls) != H::Class)
    return false;
  for (const Var &base : heap.get(cls->object).mro)
    if (base->is(K::External) ? isSubclass(base, externalName)
                              : heap.get(base->object).qualname == externalName)
      return true;
  return false;
}

FailureOr<Var> Interpreter::lookupInClass(Var cls, llvm::StringRef name) {
  if (heapKind(heap, cls) != H::Class)
    return Var();
  for (const Var &base : heap.get(cls->object).mro) {
    if (heapKind(heap, base) != H::Class)
      continue;
    if (Var value = heap.get(base->object).getAttribute(name)) {
      noteRead(GuardRead::Step::ClassEntry, base->object, name, nullptr, value,
               UnknownLoc::get(ctx));
      return value;
    }
  }
  return Var();
}

FailureOr<Var> Interpreter::bindDescriptor(Var attribute, Var self, Var cls, Location loc) {
  std::optional<H> kind = heapKind(heap, attribute);
  if (kind == H::Function)
    return self ? makeMethod(attribute, self) : attribute;
  if (kind == H::StaticMethod)
    return heap.get(attribute->object).items[0];
  if (kind == H::ClassMethod)
    return makeMethod(heap.get(attribute->object).items[0], cls);
  if (kind == H::Property) {
    if (!self)
      return attribute;
    Var getter = heap.get(attribute->object).items[0];
    return call(getter, CallArguments{{self}, {}}, loc);
  }
  return attribute;
}

/// The external base class of `cls` whose methods an attribute falls back to (the
/// nearest external entry of its MRO other than `object`).
static Var externalBase(const Heap &heap, const Var &cls) {
  if (cls->is(K::External))
    return cls;
  if (!cls->is(K::Object) || heap.get(cls->object).kind != H::Class)
    return nullptr;
  for (const Var &base : heap.get(cls->object).mro)
    if (base->is(K::External) && base->name != "builtins.object")
      return base;
  return nullptr;
}

FailureOr<Var> Interpreter::lookupAttribute(Var object, llvm::StringRef name, Location loc) {
  if (object->is(K::Tensor))
    return tensorAttribute(object, name, loc);
  if (object->is(K::External)) {
    if (name == "__name__")
      return makeStr(llvm::StringRef(object->name).rsplit('.').second);
    return makeExternal((object->name + "." + name).str());
  }
  // torch.return_types.max / min: named fields of (values, indices).
  if (object->is(K::Tuple) && object->tupleClass && object->tupleClass->is(K::External) &&
      llvm::StringRef(object->tupleClass->name).starts_with("torch.return_types.") &&
      object->items.size() == 2 && (name == "values" || name == "indices"))
    return object->items[name == "values" ? 0 : 1];
  if (object->is(K::Str) && (name == "join" || name == "upper" || name == "lower" ||
                             name == "startswith" || name == "endswith" || name == "strip" ||
                             name == "replace"))
    return makeMethod(makeExternal(("builtins.str." + name).str()), object);
  if (object->is(K::Method)) {
    if (name == "__self__")
      return object->items[1];
    if (name == "__func__")
      return object->items[0];
    return lookupAttribute(object->items[0], name, loc);
  }
  if (object->is(K::Super)) {
    Var cls = object->items[0], self = object->items[1];
    FailureOr<Var> selfClass = self->is(K::Object) && heapKind(heap, self) == H::Class
                                   ? FailureOr<Var>(self)
                                   : getClassOf(self);
    if (failed(selfClass))
      return failure();
    if (heapKind(heap, *selfClass) != H::Class)
      return error(loc) << "super() outside a user class";
    const std::vector<Var> &mro = heap.get((*selfClass)->object).mro;
    auto it = llvm::find_if(mro, [&](const Var &c) { return identical(c, cls); });
    if (it == mro.end())
      return error(loc) << "super(): the class is not in the MRO of its argument";
    for (++it; it != mro.end(); ++it) {
      if ((*it)->is(K::External)) {
        Var function = makeExternal(((*it)->name + "." + name).str());
        return makeMethod(function, self);
      }
      if (Var value = heap.get((*it)->object).getAttribute(name))
        return bindDescriptor(value, heapKind(heap, self) == H::Class ? Var() : self, *selfClass,
                              loc);
    }
    return Var();
  }
  if (!object->is(K::Object))
    return Var();
  const HeapObject &h = heap.get(object->object);
  switch (h.kind) {
  case H::Module:
  case H::Globals:
  case H::Function:
    if (name == "__name__" && h.kind == H::Function)
      return makeStr(h.name);
    if (Var value = h.getAttribute(name)) {
      noteRead(h.kind == H::Globals ? GuardRead::Step::Global : GuardRead::Step::Attribute,
               object->object, name, nullptr, value, loc);
      return value;
    }
    return Var();
  case H::Class: {
    FailureOr<Var> value = lookupInClass(object, name);
    if (failed(value))
      return failure();
    if (*value) {
      std::optional<H> kind = heapKind(heap, *value);
      if (kind == H::ClassMethod || kind == H::StaticMethod)
        return bindDescriptor(*value, Var(), object, loc);
      return *value;
    }
    if (name == "__name__")
      return makeStr(h.name);
    if (Var base = externalBase(heap, object))
      return makeMethod(makeExternal((base->name + "." + name).str()), object);
    return Var();
  }
  case H::Instance: {
    Var cls = h.classObject;
    FailureOr<Var> classValue = lookupInClass(cls, name);
    if (failed(classValue))
      return failure();
    if (*classValue && heapKind(heap, *classValue) == H::Property)
      return bindDescriptor(*classValue, object, cls, loc);
    if (Var value = h.getAttribute(name)) {
      noteRead(GuardRead::Step::Attribute, object->object, name, nullptr, value, loc);
      return value;
    }
    if (*classValue)
      return bindDescriptor(*classValue, object, cls, loc);
    if (name == "__class__")
      return cls;
    if (isSubclass(cls, kModuleClass))
      for (const char *store : {"_parameters", "_buffers", "_modules"})
        if (Var dict = h.getAttribute(store); dict && heapKind(heap, dict) == H::Dict)
          for (const auto &[key, value] : heap.get(dict->object).entries)
            if (key->is(K::Str) && key->name == name) {
              noteRead(GuardRead::Step::Item, dict->object, "", key, value, loc);
              return value;
            }
    if (Var base = externalBase(heap, cls))
      if (base->name != "builtins.object")
        return makeMethod(makeExternal((base->name + "." + name).str()), object);
    return Var();
  }
  case H::List:
  case H::Dict:
  case H::Set: {
    llvm::StringRef type = h.kind == H::List ? "list" : h.kind == H::Dict ? "dict" : "set";
    return makeMethod(makeExternal(("builtins." + type + "." + name).str()), object);
  }
  default:
    return Var();
  }
}

FailureOr<Var> Interpreter::getAttribute(Var object, llvm::StringRef name, Location loc) {
  FailureOr<Var> value = lookupAttribute(object, name, loc);
  if (failed(value))
    return failure();
  if (!*value)
    return error(loc) << describe(heap, object) << " has no attribute '" << name << "'";
  return *value;
}

LogicalResult Interpreter::setAttribute(Var object, llvm::StringRef name, Var value,
                                        Location loc) {
  std::optional<H> kind = heapKind(heap, object);
  if (object->is(K::Tensor) || kind == H::Instance || kind == H::Class || kind == H::Function ||
      kind == H::Module) {
    if (kind == H::Instance) {
      FailureOr<Var> classValue = lookupInClass(heap.get(object->object).classObject, name);
      if (failed(classValue))
        return failure();
      if (*classValue && heapKind(heap, *classValue) == H::Property) {
        Var setter = heap.get((*classValue)->object).items[1];
        if (setter->is(K::None))
          return error(loc) << "property '" << name << "' has no setter";
        return call(setter, CallArguments{{object, value}, {}}, loc);
      }
      // nn.Module.__setattr__: a module attribute that names a parameter, buffer or
      // submodule replaces that entry.
      const HeapObject &h = heap.get(object->object);
      if (isSubclass(h.classObject, kModuleClass) && !h.getAttribute(name))
        for (const char *store : {"_parameters", "_buffers", "_modules"})
          if (Var dict = h.getAttribute(store); dict && heapKind(heap, dict) == H::Dict)
            for (const auto &[key, entry] : heap.get(dict->object).entries)
              if (key->is(K::Str) && key->name == name)
                return storeSubscript(dict, key, value, loc);
    }
    auto effect = value ? SideEffect::Kind::SetAttribute : SideEffect::Kind::DeleteAttribute;
    HeapObject &h = mutateObject(object->object, effect, name, value, loc);
    if (value)
      h.setAttribute(name, value);
    else if (!h.eraseAttribute(name))
      return error(loc) << describe(heap, object) << " has no attribute '" << name << "'";
    return success();
  }
  return error(loc) << "cannot set attribute '" << name << "' of " << describe(heap, object);
}

//===----------------------------------------------------------------------===//
// Calls
//===----------------------------------------------------------------------===//

FailureOr<Var> Interpreter::call(Var callable, CallArguments arguments, Location loc) {
  switch (callable->kind) {
  case K::Method: {
    arguments.positional.insert(arguments.positional.begin(), callable->items[1]);
    return call(callable->items[0], std::move(arguments), loc);
  }
  case K::External:
    return callExternal(*callable, std::move(arguments), loc);
  case K::Object:
    break;
  default:
    return error(loc) << describe(heap, callable) << " is not callable";
  }
  const HeapObject &h = heap.get(callable->object);
  switch (h.kind) {
  case H::Function:
    return callFunction(callable->object, std::move(arguments), loc);
  case H::StaticMethod:
    return call(h.items[0], std::move(arguments), loc);
  case H::Class:
    return instantiate(callable, std::move(arguments), loc);
  case H::Instance: {
    if (isSubclass(h.classObject, kModuleClass))
      return callModule(callable, std::move(arguments), loc);
    FailureOr<Var> method = lookupInClass(h.classObject, "__call__");
    if (failed(method))
      return failure();
    if (!*method)
      return error(loc) << describe(heap, callable) << " is not callable";
    FailureOr<Var> bound = bindDescriptor(*method, callable, h.classObject, loc);
    if (failed(bound))
      return failure();
    return call(*bound, std::move(arguments), loc);
  }
  default:
    return error(loc) << describe(heap, callable) << " is not callable";
  }
}

/// The entries of the dict attribute `name` of `module` (empty when it has none).
static std::vector<Var> hookValues(const Heap &heap, const HeapObject &module,
                                   llvm::StringRef name) {
  std::vector<Var> hooks;
  if (Var dict = module.getAttribute(name); dict && heapKind(heap, dict) == H::Dict)
    for (const auto &entry : heap.get(dict->object).entries)
      hooks.push_back(entry.second);
  return hooks;
}

/// nn.Module.__call__: forward pre-hooks (which may replace the positional arguments),
/// `forward`, then forward hooks (which may replace the output); a hook returning None
/// changes nothing.
FailureOr<Var> Interpreter::callModule(Var module, CallArguments arguments, Location loc) {
  const HeapObject &h = heap.get(module->object);
  for (const char *unsupported : {"_backward_hooks", "_backward_pre_hooks",
                                  "_forward_hooks_with_kwargs", "_forward_pre_hooks_with_kwargs"})
    for (const Var &flag : hookValues(heap, h, unsupported)) {
      FailureOr<bool> set = truth(flag, loc);
      if (failed(set) || *set)
        return error(loc) << "module hooks (" << unsupported << ") are not supported yet";
    }
  std::vector<Var> preHooks = hookValues(heap, h, "_forward_pre_hooks");
  std::vector<Var> hooks = hookValues(heap, h, "_forward_hooks");
  for (const Var &hook : preHooks) {
    Var args = makeTuple(arguments.positional);
    FailureOr<Var> result = call(hook, CallArguments{{module, args}, {}}, loc);
    if (failed(result))
      return failure();
    if ((*result)->is(K::None))
      continue;
    arguments.positional =
        (*result)->is(K::Tuple) ? (*result)->items : std::vector<Var>{*result};
  }
  Var args = makeTuple(arguments.positional);
  FailureOr<Var> forward = getAttribute(module, "forward", loc);
  if (failed(forward))
    return failure();
  FailureOr<Var> output = call(*forward, std::move(arguments), loc);
  if (failed(output))
    return failure();
  for (const Var &hook : hooks) {
    FailureOr<Var> result = call(hook, CallArguments{{module, args, *output}, {}}, loc);
    if (failed(result))
      return failure();
    if (!(*result)->is(K::None))
      output = *result;
  }
  return output;
}

/// The field names of a namedtuple class (a class whose external base is
/// builtins.tuple and whose `_fields` is a tuple of str), or nullopt.
static std::optional<std::vector<std::string>> namedTupleFields(const Heap &heap,
                                                                const Var &cls) {
  Var base = externalBase(heap, cls);
  if (!base || base->name != "builtins.tuple")
    return std::nullopt;
  Var fields = heap.get(cls->object).getAttribute("_fields");
  if (!fields || !fields->is(K::Tuple))
    return std::nullopt;
  std::vector<std::string> names;
  for (const Var &field : fields->items) {
    if (!field->is(K::Str))
      return std::nullopt;
    names.push_back(field->name);
  }
  return names;
}

FailureOr<Var> Interpreter::instantiate(Var cls, CallArguments arguments, Location loc) {
  // A namedtuple: its generated __new__ binds the fields (with `_field_defaults`) and
  // makes a tuple of the class.
  if (std::optional<std::vector<std::string>> fields = namedTupleFields(heap, cls)) {
    std::vector<Var> items(fields->size());
    if (arguments.positional.size() > fields->size())
      return error(loc) << describe(heap, cls) << " takes " << fields->size()
                        << " fields, got " << arguments.positional.size();
    for (auto [i, value] : llvm::enumerate(arguments.positional))
      items[i] = value;
    for (auto &[name, value] : arguments.keywords) {
      auto it = llvm::find(*fields, name);
      if (it == fields->end() || items[it - fields->begin()])
        return error(loc) << describe(heap, cls) << " got an unexpected or repeated field '"
                          << name << "'";
      items[it - fields->begin()] = value;
    }
    Var defaults = heap.get(cls->object).getAttribute("_field_defaults");
    for (auto [i, item] : llvm::enumerate(items)) {
      if (item)
        continue;
      if (defaults && heapKind(heap, defaults) == H::Dict)
        for (const auto &[key, value] : heap.get(defaults->object).entries)
          if (key->is(K::Str) && key->name == (*fields)[i])
            item = value;
      if (!item)
        return error(loc) << describe(heap, cls) << " is missing field '" << (*fields)[i] << "'";
    }
    Variable tuple;
    tuple.kind = K::Tuple;
    tuple.items = std::move(items);
    tuple.tupleClass = cls;
    return makeVar(std::move(tuple));
  }
  HeapObject instance;
  instance.kind = H::Instance;
  instance.classObject = cls;
  Var object = makeObject(newObject(std::move(instance)));
  FailureOr<Var> init = lookupInClass(cls, "__init__");
  if (failed(init))
    return failure();
  if (*init) {
    arguments.positional.insert(arguments.positional.begin(), object);
    FailureOr<Var> result = call(*init, std::move(arguments), loc);
    if (failed(result))
      return failure();
    return object;
  }
  if (Var base = externalBase(heap, cls)) {
    arguments.positional.insert(arguments.positional.begin(), object);
    FailureOr<Var> result =
        callExternal(*makeExternal(base->name + ".__init__"), std::move(arguments), loc);
    if (failed(result))
      return failure();
  }
  return object;
}

FailureOr<Var> Interpreter::callExternal(const Variable &external, CallArguments arguments,
                                         Location loc) {
  llvm::StringRef name = external.name;
  bool handled = false;
  FailureOr<Var> result = callBuiltin(name, arguments, loc, handled);
  if (handled)
    return result;
  result = callContainerMethod(name, arguments, loc, handled);
  if (handled)
    return result;
  result = callTorch(name, arguments, loc, handled);
  if (handled)
    return result;
  result = callTorchFunction(name, arguments, loc, handled);
  if (handled)
    return result;
  return error(loc) << "graph break: calling " << name << " is not supported";
}

/// An int argument (constant) or an error.
static FailureOr<int64_t> constantIntArgument(const Var &value, llvm::StringRef what,
                                              Location loc) {
  if (std::optional<int64_t> i = value->getConstantInt())
    return *i;
  return emitError(loc) << what << " must be an int known at capture time";
}

FailureOr<Var> Interpreter::callBuiltin(llvm::StringRef name, CallArguments &arguments,
                                        Location loc, bool &handled) {
  handled = true;
  std::vector<Var> &args = arguments.positional;
  auto arity = [&](size_t min, size_t max) -> LogicalResult {
    if (args.size() < min || args.size() > max)
      return error(loc) << name << "() takes " << min << " to " << max << " arguments, got "
                        << args.size();
    return success();
  };
  auto newList = [&](std::vector<Var> items, H kind = H::List) {
    HeapObject list;
    list.kind = kind;
    list.items = std::move(items);
    return makeObject(newObject(std::move(list)));
  };
  // str methods on constants (lookupAttribute binds them).
  if (name.starts_with("builtins.str.") && !args.empty() && args[0]->is(K::Str)) {
    llvm::StringRef method = name.drop_front(llvm::StringRef("builtins.str.").size());
    llvm::StringRef self = args[0]->name;
    auto strArg = [&](size_t i) -> FailureOr<llvm::StringRef> {
      if (i >= args.size() || !args[i]->is(K::Str))
        return error(loc) << "str." << method << "() needs string arguments here";
      return llvm::StringRef(args[i]->name);
    };
    if (method == "upper")
      return makeStr(self.upper());
    if (method == "lower")
      return makeStr(self.lower());
    if (method == "strip" && args.size() == 1)
      return makeStr(self.trim());
    if (method == "startswith" || method == "endswith") {
      FailureOr<llvm::StringRef> affix = strArg(1);
      if (failed(affix))
        return failure();
      return makeBool(method == "startswith" ? self.starts_with(*affix) : self.ends_with(*affix));
    }
    if (method == "replace") {
      FailureOr<llvm::StringRef> from = strArg(1), to = strArg(2);
      if (failed(from) || failed(to) || from->empty())
        return error(loc) << "str.replace() needs two strings, the first non-empty";
      std::string result;
      for (llvm::StringRef rest = self;;) {
        auto [head, tail] = rest.split(*from);
        result += head.str();
        if (head.size() == rest.size())
          break;
        result += to->str();
        rest = tail;
      }
      return makeStr(result);
    }
    if (method == "join" && args.size() == 2) {
      FailureOr<std::vector<Var>> items = unpack(args[1], loc);
      if (failed(items))
        return failure();
      std::string result;
      for (auto [i, item] : llvm::enumerate(*items)) {
        if (!item->is(K::Str))
          return error(loc) << "str.join() of a non-string item";
        result += (i ? self.str() : "") + item->name;
      }
      return makeStr(result);
    }
    return error(loc) << "str." << method << "() with these arguments is not supported";
  }
  if (name == "builtins.sum") {
    // sum(iterable, start=0): `start + item0 + item1 ...` with Python's operators.
    if (failed(arity(1, 2)))
      return failure();
    FailureOr<std::vector<Var>> items = unpack(args[0], loc);
    if (failed(items))
      return failure();
    Var total = args.size() == 2 ? args[1] : makeInt(0, ctx);
    for (const Var &item : *items) {
      FailureOr<Var> next = binaryOp(0, total, item, loc); // operator.add
      if (failed(next))
        return failure();
      total = *next;
    }
    return total;
  }
  if (name == "builtins.sorted") {
    // sorted() of constants (numbers or strings), with reverse=; no key function.
    if (failed(arity(1, 1)))
      return failure();
    std::string unsupported;
    std::optional<bool> reverse = sortReverse(arguments.keywords, unsupported);
    if (!reverse)
      return error(loc) << "sorted() with " << unsupported << "= is not supported";
    FailureOr<std::vector<Var>> items = unpack(args[0], loc);
    if (failed(items))
      return failure();
    std::vector<Var> sortedItems = *items;
    if (!sortConstants(sortedItems, *reverse))
      return error(loc) << "sorted() of values whose order is not known at capture time "
                           "(constant numbers, strings and tuples of them sort)";
    return makeList(std::move(sortedItems));
  }
  if (name == "builtins.len") {
    if (failed(arity(1, 1)))
      return failure();
    if (args[0]->is(K::Tensor)) {
      auto type = llvm::cast<BaseTensorType>(heap.get(args[0]->object).tensor.getType());
      if (type.getSizes().empty())
        return error(loc) << "len() of a 0-d tensor";
      return makeInt(type.getSizes()[0]);
    }
    if (heapKind(heap, args[0]) == H::Dict) {
      Var n = makeInt(heap.get(args[0]->object).entries.size(), ctx);
      noteRead(GuardRead::Step::Length, args[0]->object, "", nullptr, n, loc);
      return n;
    }
    if (heapKind(heap, args[0]) == H::Instance) {
      FailureOr<Var> len = getAttribute(args[0], "__len__", loc);
      if (failed(len))
        return failure();
      return call(*len, {}, loc);
    }
    FailureOr<std::vector<Var>> items = unpack(args[0], loc);
    if (failed(items))
      return failure();
    return makeInt(items->size(), ctx);
  }
  if (name == "builtins.isinstance" || name == "builtins.issubclass") {
    if (failed(arity(2, 2)))
      return failure();
    FailureOr<Var> cls = name == "builtins.isinstance" ? getClassOf(args[0]) : args[0];
    if (failed(cls))
      return failure();
    std::vector<Var> candidates = args[1]->is(K::Tuple) ? args[1]->items : std::vector{args[1]};
    for (const Var &candidate : candidates) {
      if (identical(*cls, candidate))
        return makeBool(true);
      // The collections.abc protocols, for the values the interpreter models.
      if (candidate->is(K::External) && name == "builtins.isinstance") {
        llvm::StringRef abc = candidate->name;
        std::optional<H> kind = heapKind(heap, args[0]);
        bool isMapping = kind == H::Dict;
        bool isSequence = args[0]->is(K::Tuple) || args[0]->is(K::Str) ||
                          args[0]->is(K::Range) || kind == H::List;
        bool isIterable = isMapping || isSequence || kind == H::Set || kind == H::Iterator ||
                          args[0]->is(K::Tensor);
        if ((abc == "collections.abc.Iterable" && isIterable) ||
            (abc == "collections.abc.Sequence" && isSequence) ||
            (abc == "collections.abc.Mapping" && isMapping) ||
            (abc == "collections.abc.Iterator" && kind == H::Iterator))
          return makeBool(true);
      }
      std::string qualname = candidate->is(K::External) ? candidate->name
                             : heapKind(heap, candidate) == H::Class
                                 ? heap.get(candidate->object).qualname
                                 : "";
      if (!qualname.empty() && isSubclass(*cls, qualname))
        return makeBool(true);
    }
    return makeBool(false);
  }
  if (name == "builtins.range") {
    if (failed(arity(1, 3)))
      return failure();
    Variable range;
    range.kind = K::Range;
    if (args.size() == 1)
      range.items = {makeInt(0, ctx), args[0], makeInt(1, ctx)};
    else
      range.items = {args[0], args[1], args.size() == 3 ? args[2] : makeInt(1, ctx)};
    return makeVar(std::move(range));
  }
  if (name == "builtins.enumerate" || name == "builtins.zip" || name == "builtins.reversed") {
    std::vector<std::vector<Var>> sequences;
    for (const Var &arg : args) {
      FailureOr<std::vector<Var>> items = unpack(arg, loc);
      if (failed(items))
        return failure();
      sequences.push_back(std::move(*items));
    }
    std::vector<Var> items;
    if (name == "builtins.reversed") {
      if (failed(arity(1, 1)))
        return failure();
      items.assign(sequences[0].rbegin(), sequences[0].rend());
    } else if (name == "builtins.enumerate") {
      if (failed(arity(1, 2)))
        return failure();
      int64_t start = 0;
      if (args.size() == 2) {
        FailureOr<int64_t> s = constantIntArgument(args[1], "enumerate's start", loc);
        if (failed(s))
          return failure();
        start = *s;
      }
      for (auto [i, item] : llvm::enumerate(sequences[0]))
        items.push_back(makeTuple({makeInt(start + static_cast<int64_t>(i), ctx), item}));
    } else {
      size_t n = sequences.empty() ? 0 : SIZE_MAX;
      for (auto &sequence : sequences)
        n = std::min(n, sequence.size());
      for (size_t i = 0; i < n; ++i) {
        std::vector<Var> tuple;
        for (auto &sequence : sequences)
          tuple.push_back(sequence[i]);
        items.push_back(makeTuple(std::move(tuple)));
      }
    }
    return newList(std::move(items), H::Iterator);
  }
  if (name == "builtins.list" || name == "builtins.tuple" || name == "builtins.set") {
    if (failed(arity(0, 1)))
      return failure();
    std::vector<Var> items;
    if (!args.empty()) {
      FailureOr<std::vector<Var>> unpacked = unpack(args[0], loc);
      if (failed(unpacked))
        return failure();
      items = std::move(*unpacked);
    }
    if (name == "builtins.tuple")
      return makeTuple(std::move(items));
    return newList(std::move(items), name == "builtins.list" ? H::List : H::Set);
  }
  if (name == "builtins.dict") {
    HeapObject dict;
    dict.kind = H::Dict;
    if (!args.empty()) {
      if (heapKind(heap, args[0]) == H::Dict) {
        dict.entries = heap.get(args[0]->object).entries;
      } else {
        FailureOr<std::vector<Var>> pairs = unpack(args[0], loc);
        if (failed(pairs))
          return failure();
        for (const Var &pair : *pairs) {
          FailureOr<std::vector<Var>> kv = unpack(pair, loc);
          if (failed(kv) || kv->size() != 2)
            return error(loc) << "dict() needs key/value pairs";
          dict.entries.emplace_back((*kv)[0], (*kv)[1]);
        }
      }
    }
    for (auto &[key, value] : arguments.keywords)
      dict.entries.emplace_back(makeStr(key), value);
    return makeObject(newObject(std::move(dict)));
  }
  if (name == "builtins.int" || name == "builtins.float" || name == "builtins.bool" ||
      name == "operator.index") {
    if (failed(arity(1, 1)))
      return failure();
    if (name == "builtins.bool") {
      FailureOr<bool> b = truth(args[0], loc);
      if (failed(b))
        return failure();
      return makeBool(*b);
    }
    if (args[0]->is(K::Int) && name != "builtins.float")
      return args[0];
    // int()/float() of a number from a tensor's value: a cast (int() truncates).
    if (args[0]->is(K::Tensor) && args[0]->number != Variable::Number::None)
      return asNumber(args[0],
                      name == "builtins.float" ? Variable::Number::Float : Variable::Number::Int,
                      loc);
    if (args[0]->is(K::Str) && name == "builtins.float") {
      std::string text = llvm::StringRef(args[0]->name).trim().lower();
      if (text == "inf" || text == "+inf" || text == "infinity")
        return makeFloat(INFINITY);
      if (text == "-inf" || text == "-infinity")
        return makeFloat(-INFINITY);
      if (text == "nan")
        return makeFloat(std::nan(""));
      double parsed;
      if (!llvm::StringRef(text).getAsDouble(parsed))
        return makeFloat(parsed);
      return error(loc) << "could not convert string to float: '" << args[0]->name << "'";
    }
    std::optional<double> number = args[0]->getNumber();
    if (!number)
      return error(loc) << name << "() of " << describe(heap, args[0])
                        << " is not supported (a tensor's value is not known at capture time)";
    if (name == "builtins.float")
      return makeFloat(*number);
    return makeInt(static_cast<int64_t>(std::trunc(*number)), ctx);
  }
  if (name == "builtins.str") {
    if (failed(arity(1, 1)))
      return failure();
    if (args[0]->is(K::Str))
      return args[0];
    if (std::optional<int64_t> i = args[0]->getConstantInt(); i && args[0]->is(K::Int))
      return makeStr(std::to_string(*i));
    return error(loc) << "str() of " << describe(heap, args[0]) << " is not supported";
  }
  if (name == "builtins.min" || name == "builtins.max") {
    std::vector<Var> items = args;
    if (args.size() == 1) {
      FailureOr<std::vector<Var>> unpacked = unpack(args[0], loc);
      if (failed(unpacked))
        return failure();
      items = std::move(*unpacked);
    }
    if (items.empty())
      return error(loc) << name << "() of an empty sequence";
    if (llvm::any_of(items, [](const Var &v) { return v->is(K::Tensor); })) {
      handled = false;
      return failure();
    }
    Var best = items[0];
    for (const Var &item : llvm::drop_begin(items)) {
      FailureOr<Var> less = compareOp(name == "builtins.min" ? "<" : ">", item, best, loc);
      if (failed(less))
        return failure();
      if ((*less)->boolValue)
        best = item;
    }
    return best;
  }
  if (name == "builtins.abs") {
    if (failed(arity(1, 1)))
      return failure();
    if (args[0]->is(K::Tensor)) {
      if (args[0]->number == Variable::Number::None) {
        handled = false;
        return failure();
      }
      CallArguments absArguments{{args[0]}, {}};
      FailureOr<Var> result = callTorchFunction("torch.abs", absArguments, loc, handled);
      if (failed(result))
        return failure();
      return asNumber(*result,
                      args[0]->number == Variable::Number::Float ? Variable::Number::Float
                                                                 : Variable::Number::Int,
                      loc);
    }
    if (std::optional<int64_t> i = args[0]->getConstantInt(); i && !args[0]->is(K::Float))
      return makeInt(std::abs(*i), ctx);
    if (args[0]->is(K::Float))
      return makeFloat(std::fabs(args[0]->floatValue));
    return error(loc) << "abs() of " << describe(heap, args[0]);
  }
  if (name == "builtins.getattr" || name == "builtins.hasattr") {
    if (failed(arity(2, 3)) || !args[1]->is(K::Str))
      return error(loc) << name << "() needs a constant attribute name";
    FailureOr<Var> value = lookupAttribute(args[0], args[1]->name, loc);
    if (failed(value))
      return failure();
    // An attribute found only as a method of a library base class (lookupAttribute's
    // fallback): whether the class has it decides hasattr and getattr's default.
    if (*value && (*value)->is(K::Method) && (*value)->items[0]->is(K::External) &&
        (name == "builtins.hasattr" || args.size() == 3)) {
      llvm::StringRef method = (*value)->items[0]->name;
      auto [base, attribute] = method.rsplit('.');
      if (attribute == args[1]->name) {
        if (base != kModuleClass)
          return error(loc) << name << "(): whether " << describe(heap, args[0])
                            << " (a " << base << ") has attribute '" << attribute
                            << "' is not known at capture time";
        if (!isModuleAttribute(attribute))
          *value = Var();
      }
    }
    // Whether it has the attribute decides the program: a guard (unless the program
    // itself set or deleted it).
    if ((name == "builtins.hasattr" || args.size() == 3) && args[0]->is(K::Object))
      noteRead(GuardRead::Step::HasAttribute, args[0]->object, args[1]->name, nullptr,
               makeBool(*value != nullptr), loc);
    if (name == "builtins.hasattr")
      return makeBool(*value != nullptr);
    if (*value)
      return *value;
    if (args.size() == 3)
      return args[2];
    return error(loc) << describe(heap, args[0]) << " has no attribute '" << args[1]->name << "'";
  }
  if (name == "builtins.setattr" || name == "builtins.delattr") {
    if (failed(arity(2, 3)) || !args[1]->is(K::Str))
      return error(loc) << name << "() needs a constant attribute name";
    if (failed(setAttribute(args[0], args[1]->name,
                            name == "builtins.setattr" ? args.at(2) : Var(), loc)))
      return failure();
    return makeNone();
  }
  if (name == "builtins.iter") {
    if (failed(arity(1, 1)))
      return failure();
    return iterate(args[0], loc);
  }
  if (name == "builtins.next") {
    if (failed(arity(1, 2)))
      return failure();
    if (heapKind(heap, args[0]) != H::Iterator)
      return error(loc) << "next() of a non-iterator";
    const HeapObject &it = heap.get(args[0]->object);
    if (it.position >= it.items.size()) {
      if (args.size() == 2)
        return args[1];
      return error(loc) << "next() of an exhausted iterator raises StopIteration";
    }
    Var item = it.items[it.position];
    heap.mutate(args[0]->object).position++;
    return item;
  }
  if (name == "builtins.super") {
    if (failed(arity(2, 2)))
      return error(loc) << "super() without arguments outside a method";
    Variable super;
    super.kind = K::Super;
    super.items = {args[0], args[1]};
    return makeVar(std::move(super));
  }
  if (name == "builtins.type") {
    if (failed(arity(1, 1)))
      return failure();
    return getClassOf(args[0]);
  }
  if (name == "builtins.any" || name == "builtins.all") {
    FailureOr<std::vector<Var>> items = unpack(args.at(0), loc);
    if (failed(items))
      return failure();
    bool isAny = name == "builtins.any";
    for (const Var &item : *items) {
      FailureOr<bool> b = truth(item, loc);
      if (failed(b))
        return failure();
      if (*b == isAny)
        return makeBool(isAny);
    }
    return makeBool(!isAny);
  }
  if (name == "builtins.object.__init__" || name == "builtins.AssertionError")
    return makeNone();
  if (name == "builtins.print") {
    if (!canBreakGraph())
      return error(loc) << "graph break: print() is a side effect tgc does not replay "
                           "(compile with --allow-graph-breaks to run it between graphs)";
    if (failed(breakOnCall(name, args, arguments.keywords, loc)))
      return failure();
    return makeNone();
  }
  if (name.starts_with("math.")) {
    llvm::StringRef fn = name.drop_front(5);
    std::vector<double> numbers;
    for (const Var &arg : args) {
      std::optional<double> number = arg->getNumber();
      if (!number) {
        handled = false;
        return failure();
      }
      numbers.push_back(*number);
    }
    auto unary = llvm::StringSwitch<double (*)(double)>(fn)
                     .Case("sqrt", [](double x) { return std::sqrt(x); })
                     .Case("exp", [](double x) { return std::exp(x); })
                     .Case("log", [](double x) { return std::log(x); })
                     .Case("cos", [](double x) { return std::cos(x); })
                     .Case("sin", [](double x) { return std::sin(x); })
                     .Case("tanh", [](double x) { return std::tanh(x); })
                     .Case("erf", [](double x) { return std::erf(x); })
                     .Case("fabs", [](double x) { return std::fabs(x); })
                     .Default(nullptr);
    if (unary && numbers.size() == 1)
      return makeFloat(unary(numbers[0]));
    if ((fn == "floor" || fn == "ceil") && numbers.size() == 1)
      return makeInt(static_cast<int64_t>(fn == "floor" ? std::floor(numbers[0])
                                                        : std::ceil(numbers[0])),
                     ctx);
    if (fn == "pow" && numbers.size() == 2)
      return makeFloat(std::pow(numbers[0], numbers[1]));
    if (fn == "prod") {
      FailureOr<std::vector<Var>> items = unpack(args.at(0), loc);
      if (failed(items))
        return failure();
      Var product = makeInt(1, ctx);
      for (const Var &item : *items) {
        FailureOr<Var> next = binaryOp(5, product, item, loc);
        if (failed(next))
          return failure();
        product = *next;
      }
      return product;
    }
    return error(loc) << name << " is not supported";
  }
  if (name.starts_with("operator.")) {
    static const llvm::StringLiteral kOperators[] = {
        "add", "and_", "floordiv", "lshift", "matmul", "mul", "mod",
        "or_", "pow",  "rshift",   "sub",    "truediv", "xor"};
    llvm::StringRef op = name.drop_front(9);
    bool anyTensor = llvm::any_of(args, [](const Var &v) { return v->is(K::Tensor); });
    if (!anyTensor && args.size() == 2)
      for (auto [i, candidate] : llvm::enumerate(kOperators))
        if (candidate == op)
          return binaryOp(i, args[0], args[1], loc);
    if (!anyTensor && args.size() == 2 && op == "getitem")
      return subscript(args[0], args[1], loc);
    if (!anyTensor && args.size() == 2) {
      std::string compare = llvm::StringSwitch<std::string>(op)
                                .Case("lt", "<")
                                .Case("le", "<=")
                                .Case("eq", "==")
                                .Case("ne", "!=")
                                .Case("gt", ">")
                                .Case("ge", ">=")
                                .Default("");
      if (!compare.empty())
        return compareOp(compare, args[0], args[1], loc);
    }
    if (op == "getitem" && args.size() == 2)
      return subscript(args[0], args[1], loc);
  }
  handled = false;
  return failure();
}

FailureOr<Var> Interpreter::callContainerMethod(llvm::StringRef name, CallArguments &arguments,
                                                Location loc, bool &handled) {
  handled = true;
  std::vector<Var> &args = arguments.positional;
  if (!name.consume_front("builtins.") || args.empty() || !args[0]->is(K::Object)) {
    handled = false;
    return failure();
  }
  ObjectId id = args[0]->object;
  const HeapObject &h = heap.get(id);
  auto contentsChanged = [&]() -> HeapObject & {
    return mutateObject(id, SideEffect::Kind::SetContents, "", nullptr, loc);
  };
  auto tupleOf = [&](auto fn) {
    std::vector<Var> items;
    for (const auto &entry : h.entries)
      items.push_back(fn(entry));
    return makeTuple(std::move(items));
  };
  if (h.kind == H::List) {
    if (name == "list.sort" && args.size() == 1) {
      std::string unsupported;
      std::optional<bool> reverse = sortReverse(arguments.keywords, unsupported);
      if (!reverse)
        return error(loc) << "list.sort() with " << unsupported << "= is not supported";
      std::vector<Var> items = h.items;
      if (!sortConstants(items, *reverse))
        return error(loc) << "list.sort() of values whose order is not known at capture time";
      contentsChanged().items = std::move(items);
      return makeNone();
    }
    if (name == "list.append" && args.size() == 2) {
      contentsChanged().items.push_back(args[1]);
      return makeNone();
    }
    if (name == "list.extend" && args.size() == 2) {
      FailureOr<std::vector<Var>> items = unpack(args[1], loc);
      if (failed(items))
        return failure();
      llvm::append_range(contentsChanged().items, *items);
      return makeNone();
    }
    if (name == "list.insert" && args.size() == 3) {
      FailureOr<int64_t> index = constantIntArgument(args[1], "the index", loc);
      if (failed(index))
        return failure();
      int64_t size = h.items.size();
      int64_t at = std::clamp(*index < 0 ? *index + size : *index, int64_t(0), size);
      HeapObject &list = contentsChanged();
      list.items.insert(list.items.begin() + at, args[2]);
      return makeNone();
    }
    if (name == "list.pop" && args.size() <= 2) {
      int64_t size = h.items.size();
      int64_t index = size - 1;
      if (args.size() == 2) {
        FailureOr<int64_t> i = constantIntArgument(args[1], "the index", loc);
        if (failed(i))
          return failure();
        index = *i < 0 ? *i + size : *i;
      }
      if (index < 0 || index >= size)
        return error(loc) << "pop index out of range";
      HeapObject &list = contentsChanged();
      Var item = list.items[index];
      list.items.erase(list.items.begin() + index);
      return item;
    }
    if (name == "list.clear" && args.size() == 1) {
      contentsChanged().items.clear();
      return makeNone();
    }
    if (name == "list.copy" && args.size() == 1) {
      HeapObject copy;
      copy.kind = H::List;
      copy.items = h.items;
      return makeObject(newObject(std::move(copy)));
    }
    if (name == "list.__len__" && args.size() == 1)
      return makeInt(h.items.size(), ctx);
  }
  if (h.kind == H::Dict) {
    if (name == "dict.keys")
      return tupleOf([](const auto &e) { return e.first; });
    if (name == "dict.values")
      return tupleOf([](const auto &e) { return e.second; });
    if (name == "dict.items")
      return tupleOf([](const auto &e) { return makeTuple({e.first, e.second}); });
    if ((name == "dict.get" || name == "dict.pop" || name == "dict.setdefault") &&
        args.size() >= 2) {
      FailureOr<std::optional<size_t>> found = findDictEntry(id, args[1], loc);
      if (failed(found))
        return failure();
      if (*found) {
        Var value = h.entries[**found].second;
        if (name == "dict.pop")
          contentsChanged().entries.erase(heap.get(id).entries.begin() + **found);
        return value;
      }
      Var fallback = args.size() >= 3 ? args[2] : makeNone();
      if (name == "dict.pop" && args.size() < 3)
        return error(loc) << "dict.pop() of a missing key raises KeyError";
      if (name == "dict.setdefault")
        contentsChanged().entries.emplace_back(args[1], fallback);
      return fallback;
    }
    if (name == "dict.update" && args.size() == 2 && heapKind(heap, args[1]) == H::Dict) {
      for (auto [key, value] : heap.get(args[1]->object).entries)
        if (failed(storeSubscript(args[0], key, value, loc)))
          return failure();
      return makeNone();
    }
    if (name == "dict.copy") {
      HeapObject copy;
      copy.kind = H::Dict;
      copy.entries = h.entries;
      return makeObject(newObject(std::move(copy)));
    }
    if (name == "dict.clear") {
      contentsChanged().entries.clear();
      return makeNone();
    }
  }
  if (h.kind == H::Set && name == "set.add" && args.size() == 2) {
    for (const Var &item : h.items) {
      FailureOr<bool> same = equals(item, args[1], loc);
      if (failed(same))
        return failure();
      if (*same)
        return makeNone();
    }
    contentsChanged().items.push_back(args[1]);
    return makeNone();
  }
  handled = false;
  return failure();
}

//===----------------------------------------------------------------------===//
// Operators
//===----------------------------------------------------------------------===//

/// The `operator` module function of BINARY_OP's argument, for tensors.
static const char *const kOperatorNames[] = {
    "add",  "and_",  "floordiv",  "lshift",  "matmul",  "mul",  "mod",
    "or_",  "pow",   "rshift",    "sub",     "truediv", "xor",  "iadd",
    "iand", "ifloordiv", "ilshift", "imatmul", "imul", "imod", "ior",
    "ipow", "irshift", "isub", "itruediv", "ixor"};

/// BINARY_OP's argument as Python spells it (NB_* in pycore_opcode_utils.h).
static llvm::StringRef binaryOpSymbol(unsigned op) {
  static const char *const kSymbols[] = {"+",   "&",   "//",  "<<",  "@",  "*",  "%",
                                         "|",   "**",  ">>",  "-",   "/",  "^",  "+=",
                                         "&=",  "//=", "<<=", "@=",  "*=", "%=", "|=",
                                         "**=", ">>=", "-=",  "/=",  "^="};
  return op < 26 ? kSymbols[op] : "?";
}

FailureOr<Var> Interpreter::binaryOp(unsigned op, Var lhs, Var rhs, Location loc) {
  if (op >= 26)
    return error(loc) << "unknown binary operator " << op;
  if (lhs->is(K::Tensor) || rhs->is(K::Tensor)) {
    // Python numbers are immutable: `s += 1` on a number tensor rebinds.
    if (lhs->number != Variable::Number::None && op >= 13)
      op -= 13;
    std::string name = std::string("operator.") + kOperatorNames[op];
    CallArguments arguments{{lhs, rhs}, {}};
    if (!lhs->is(K::Tensor)) {
      // A reflected operator: `2 - x` is x.__rsub__(2).
      name = std::string("operator.r") + kOperatorNames[op % 13];
      arguments.positional = {rhs, lhs};
    }
    bool handled = false;
    FailureOr<Var> result = callTorchFunction(name, arguments, loc, handled);
    if (!handled)
      return error(loc) << "the tensor operator " << name << " is not supported";
    if (failed(result))
      return failure();
    return numberResult(*result, lhs, rhs, kOperatorNames[op % 13], loc);
  }
  // User classes define operators with dunder methods: x.__iadd__(y), then
  // x.__add__(y), then y.__radd__(x).
  static const char *const kDunders[] = {"add", "and", "floordiv", "lshift", "matmul",
                                         "mul", "mod", "or", "pow", "rshift", "sub",
                                         "truediv", "xor"};
  if (heapKind(heap, lhs) == H::Instance || heapKind(heap, rhs) == H::Instance) {
    std::string dunder = kDunders[op % 13];
    auto tryMethod = [&](Var self, Var other, const std::string &method) -> FailureOr<Var> {
      if (heapKind(heap, self) != H::Instance)
        return Var();
      FailureOr<Var> found = lookupInClass(heap.get(self->object).classObject, method);
      if (failed(found) || !*found)
        return found;
      FailureOr<Var> bound =
          bindDescriptor(*found, self, heap.get(self->object).classObject, loc);
      if (failed(bound))
        return failure();
      return call(*bound, CallArguments{{other}, {}}, loc);
    };
    for (auto [self, other, method] :
         {std::make_tuple(lhs, rhs, op >= 13 ? "__i" + dunder + "__" : std::string()),
          std::make_tuple(lhs, rhs, "__" + dunder + "__"),
          std::make_tuple(rhs, lhs, "__r" + dunder + "__")}) {
      if (method.empty())
        continue;
      FailureOr<Var> result = tryMethod(self, other, method);
      if (failed(result))
        return failure();
      if (*result && !(*result)->is(K::External))
        return *result;
    }
  }
  unsigned base = op % 13;
  bool inPlace = op >= 13;
  // In-place operators on lists extend them; everything else rebinds.
  if (inPlace && base == 0 && heapKind(heap, lhs) == H::List) {
    FailureOr<std::vector<Var>> items = unpack(rhs, loc);
    if (failed(items))
      return failure();
    llvm::append_range(
        mutateObject(lhs->object, SideEffect::Kind::SetContents, "", nullptr, loc).items,
        *items);
    return lhs;
  }
  // Sequences.
  if (base == 0 && lhs->is(K::Str) && rhs->is(K::Str))
    return makeStr(lhs->name + rhs->name);
  if (base == 0 && (lhs->is(K::Tuple) || heapKind(heap, lhs) == H::List)) {
    FailureOr<std::vector<Var>> a = unpack(lhs, loc), b = unpack(rhs, loc);
    if (failed(a) || failed(b))
      return failure();
    llvm::append_range(*a, *b);
    if (lhs->is(K::Tuple))
      return makeTuple(std::move(*a));
    return makeList(std::move(*a));
  }
  if (base == 5 && (lhs->is(K::Tuple) || heapKind(heap, lhs) == H::List) && rhs->is(K::Int)) {
    FailureOr<std::vector<Var>> a = unpack(lhs, loc);
    FailureOr<int64_t> n = constantIntArgument(rhs, "the repeat count", loc);
    if (failed(a) || failed(n))
      return failure();
    std::vector<Var> items;
    for (int64_t i = 0; i < *n; ++i)
      llvm::append_range(items, *a);
    if (lhs->is(K::Tuple))
      return makeTuple(std::move(items));
    return makeList(std::move(items));
  }
  // Ints (possibly symbolic sizes) stay ints as affine expressions.
  bool ints = (lhs->is(K::Int) || lhs->is(K::Bool)) && (rhs->is(K::Int) || rhs->is(K::Bool));
  if (ints) {
    AffineExpr a = lhs->is(K::Bool) ? getAffineConstantExpr(lhs->boolValue, ctx) : lhs->size;
    AffineExpr b = rhs->is(K::Bool) ? getAffineConstantExpr(rhs->boolValue, ctx) : rhs->size;
    std::optional<int64_t> cb = rhs->getConstantInt(), ca = lhs->getConstantInt();
    switch (base) {
    case 0:
      return makeInt(a + b);
    case 10:
      return makeInt(a - b);
    case 5:
      return makeInt(a * b);
    case 2:
      if (cb && *cb > 0)
        return makeInt(a.floorDiv(*cb));
      if (ca && cb && *cb != 0)
        return makeInt(llvm::divideFloorSigned(*ca, *cb), ctx);
      break;
    case 6:
      if (cb && *cb > 0)
        return makeInt(a % *cb);
      break;
    case 8:
      if (ca && cb && *cb >= 0) {
        int64_t result = 1;
        for (int64_t i = 0; i < *cb; ++i)
          result *= *ca;
        return makeInt(result, ctx);
      }
      break;
    case 11:
      if (ca && cb && *cb != 0)
        return makeFloat(static_cast<double>(*ca) / static_cast<double>(*cb));
      break;
    case 1:
    case 7:
    case 12:
    case 3:
    case 9:
      if (ca && cb) {
        int64_t x = *ca, y = *cb;
        int64_t r = base == 1 ? (x & y) : base == 7 ? (x | y) : base == 12 ? (x ^ y)
                  : base == 3 ? (x << y) : (x >> y);
        if (lhs->is(K::Bool) && rhs->is(K::Bool) && (base == 1 || base == 7 || base == 12))
          return makeBool(r != 0);
        return makeInt(r, ctx);
      }
      break;
    default:
      break;
    }
    return error(loc) << "the operator " << binaryOpSymbol(op) << " on sizes " << printSize(a) << " and "
                      << printSize(b) << " is not supported";
  }
  std::optional<double> a = lhs->getNumber(), b = rhs->getNumber();
  if (a && b) {
    switch (base) {
    case 0:
      return makeFloat(*a + *b);
    case 10:
      return makeFloat(*a - *b);
    case 5:
      return makeFloat(*a * *b);
    case 11:
      return makeFloat(*a / *b);
    case 2:
      return makeFloat(std::floor(*a / *b));
    case 6:
      return makeFloat(*a - std::floor(*a / *b) * *b);
    case 8:
      return makeFloat(std::pow(*a, *b));
    default:
      break;
    }
  }
  return error(loc) << "the operator " << binaryOpSymbol(op) << " on " << describe(heap, lhs)
                    << " and " << describe(heap, rhs) << " is not supported";
}

FailureOr<Var> Interpreter::compareOp(llvm::StringRef op, Var lhs, Var rhs, Location loc) {
  if (lhs->is(K::Tensor) || rhs->is(K::Tensor)) {
    static const std::pair<llvm::StringLiteral, llvm::StringLiteral> kNames[] = {
        {"<", "lt"}, {"<=", "le"}, {"==", "eq"}, {"!=", "ne"}, {">", "gt"}, {">=", "ge"}};
    static const std::pair<llvm::StringLiteral, llvm::StringLiteral> kSwapped[] = {
        {"<", ">"}, {"<=", ">="}, {"==", "=="}, {"!=", "!="}, {">", "<"}, {">=", "<="}};
    if (!lhs->is(K::Tensor)) {
      for (auto [from, to] : kSwapped)
        if (from == op) {
          op = to;
          break;
        }
      std::swap(lhs, rhs);
    }
    for (auto [symbol, fn] : kNames)
      if (symbol == op) {
        bool handled = false;
        CallArguments arguments{{lhs, rhs}, {}};
        FailureOr<Var> result =
            callTorchFunction(("operator." + fn).str(), arguments, loc, handled);
        if (!handled)
          return error(loc) << "tensor comparison " << op << " is not supported";
        if (failed(result))
          return failure();
        return numberResult(*result, lhs, rhs, "compare", loc);
      }
  }
  if (op == "==" || op == "!=") {
    FailureOr<bool> same = equals(lhs, rhs, loc);
    if (failed(same))
      return failure();
    return makeBool(*same == (op == "=="));
  }
  if (lhs->is(K::Int) && rhs->is(K::Int) && (!lhs->getConstantInt() || !rhs->getConstantInt())) {
    FailureOr<bool> holds = compareSizes(op, lhs->size, rhs->size, loc);
    if (failed(holds))
      return failure();
    return makeBool(*holds);
  }
  std::optional<double> a = lhs->getNumber(), b = rhs->getNumber();
  if (a && b)
    return makeBool(llvm::StringSwitch<bool>(op)
                        .Case("<", *a < *b)
                        .Case("<=", *a <= *b)
                        .Case(">", *a > *b)
                        .Case(">=", *a >= *b)
                        .Default(false));
  if (lhs->is(K::Str) && rhs->is(K::Str))
    return makeBool(llvm::StringSwitch<bool>(op)
                        .Case("<", lhs->name < rhs->name)
                        .Case("<=", lhs->name <= rhs->name)
                        .Case(">", lhs->name > rhs->name)
                        .Case(">=", lhs->name >= rhs->name)
                        .Default(false));
  return error(loc) << "comparison " << op << " of " << describe(heap, lhs) << " and "
                    << describe(heap, rhs) << " is not supported";
}

FailureOr<Var> Interpreter::unaryOp(llvm::StringRef op, Var operand, Location loc) {
  if (operand->is(K::Tensor)) {
    std::string fn = op == "-" ? "operator.neg" : op == "~" ? "operator.invert" : "operator.pos";
    if (op == "+")
      return operand;
    bool handled = false;
    CallArguments arguments{{operand}, {}};
    FailureOr<Var> result = callTorchFunction(fn, arguments, loc, handled);
    if (!handled)
      return error(loc) << "the tensor operator " << fn << " is not supported";
    if (failed(result))
      return failure();
    return numberResult(*result, operand, nullptr, fn, loc);
  }
  if (op == "+")
    return operand;
  if (operand->is(K::Int) || operand->is(K::Bool)) {
    AffineExpr size = operand->is(K::Bool) ? getAffineConstantExpr(operand->boolValue, ctx)
                                           : operand->size;
    if (op == "-")
      return makeInt(-size);
    if (std::optional<int64_t> i = operand->getConstantInt())
      return makeInt(~*i, ctx);
  }
  if (operand->is(K::Float) && op == "-")
    return makeFloat(-operand->floatValue);
  return error(loc) << "unary " << op << " of " << describe(heap, operand) << " is not supported";
}

//===----------------------------------------------------------------------===//
// Containers
//===----------------------------------------------------------------------===//

/// Python's slice.indices for a constant length.
static LogicalResult sliceIndices(const Variable &slice, int64_t length, int64_t &start,
                                  int64_t &stop, int64_t &step, Location loc) {
  auto part = [&](const Var &v, int64_t fallback, int64_t &out) -> LogicalResult {
    if (v->is(K::None)) {
      out = fallback;
      return success();
    }
    FailureOr<int64_t> i = constantIntArgument(v, "a slice bound", loc);
    if (failed(i))
      return failure();
    out = *i;
    return success();
  };
  if (failed(part(slice.items[2], 1, step)))
    return failure();
  if (step == 0)
    return emitError(loc) << "slice step cannot be zero";
  int64_t lower = step < 0 ? -1 : 0, upper = step < 0 ? length - 1 : length;
  auto clampIndex = [&](int64_t i) {
    if (i < 0)
      i += length;
    return std::clamp(i, lower, upper);
  };
  if (failed(part(slice.items[0], step < 0 ? upper : lower, start)) ||
      failed(part(slice.items[1], step < 0 ? lower : upper, stop)))
    return failure();
  if (!slice.items[0]->is(K::None))
    start = clampIndex(start);
  if (!slice.items[1]->is(K::None))
    stop = clampIndex(stop);
  return success();
}

FailureOr<std::optional<size_t>> Interpreter::findDictEntry(ObjectId dict, Var key,
                                                            Location loc) {
  for (auto [i, entry] : llvm::enumerate(heap.get(dict).entries)) {
    FailureOr<bool> same = equals(entry.first, key, loc);
    if (failed(same))
      return failure();
    if (*same)
      return std::optional<size_t>(i);
  }
  return std::optional<size_t>();
}

FailureOr<Var> Interpreter::subscript(Var container, Var key, Location loc) {
  if (container->is(K::Tensor))
    return tensorIndex(container, key, loc);
  std::optional<H> kind = heapKind(heap, container);
  if (kind == H::Dict) {
    FailureOr<std::optional<size_t>> found = findDictEntry(container->object, key, loc);
    if (failed(found))
      return failure();
    if (!*found)
      return error(loc) << "key not found in dict (KeyError)";
    const auto &[foundKey, value] = heap.get(container->object).entries[**found];
    noteRead(GuardRead::Step::Item, container->object, "", foundKey, value, loc);
    return value;
  }
  if (kind == H::Instance) {
    FailureOr<Var> getItem = getAttribute(container, "__getitem__", loc);
    if (failed(getItem))
      return failure();
    return call(*getItem, CallArguments{{key}, {}}, loc);
  }
  if (!container->is(K::Tuple) && kind != H::List && !container->is(K::Str))
    return error(loc) << describe(heap, container) << " is not subscriptable";
  std::vector<Var> items;
  if (container->is(K::Str)) {
    for (char c : container->name)
      items.push_back(makeStr(std::string(1, c)));
  } else {
    FailureOr<std::vector<Var>> unpacked = unpack(container, loc);
    if (failed(unpacked))
      return failure();
    items = std::move(*unpacked);
  }
  int64_t length = items.size();
  if (key->is(K::Slice)) {
    int64_t start, stop, step;
    if (failed(sliceIndices(*key, length, start, stop, step, loc)))
      return failure();
    std::vector<Var> result;
    for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step)
      result.push_back(items[i]);
    if (container->is(K::Str)) {
      std::string text;
      for (const Var &c : result)
        text += c->name;
      return makeStr(text);
    }
    if (container->is(K::Tuple))
      return makeTuple(std::move(result));
    return makeList(std::move(result));
  }
  FailureOr<int64_t> index = constantIntArgument(key, "a sequence index", loc);
  if (failed(index))
    return failure();
  int64_t i = *index < 0 ? *index + length : *index;
  if (i < 0 || i >= length)
    return error(loc) << "index " << *index << " out of range for a sequence of " << length;
  if (kind == H::List)
    noteRead(GuardRead::Step::Item, container->object, "", makeInt(i, ctx), items[i], loc);
  return items[i];
}

LogicalResult Interpreter::storeSubscript(Var container, Var key, Var value, Location loc) {
  std::optional<H> kind = heapKind(heap, container);
  if (kind == H::Dict) {
    FailureOr<std::optional<size_t>> found = findDictEntry(container->object, key, loc);
    if (failed(found))
      return failure();
    HeapObject &dict =
        mutateObject(container->object, SideEffect::Kind::SetContents, "", nullptr, loc);
    if (*found)
      dict.entries[**found].second = value;
    else
      dict.entries.emplace_back(key, value);
    return success();
  }
  if (kind == H::List) {
    int64_t length = heap.get(container->object).items.size();
    FailureOr<int64_t> index = constantIntArgument(key, "a list index", loc);
    if (failed(index))
      return failure();
    int64_t i = *index < 0 ? *index + length : *index;
    if (i < 0 || i >= length)
      return error(loc) << "list assignment index out of range";
    mutateObject(container->object, SideEffect::Kind::SetContents, "", nullptr, loc).items[i] =
        value;
    return success();
  }
  if (container->is(K::Tensor)) {
    FailureOr<Var> view = tensorIndex(container, key, loc);
    if (failed(view))
      return failure();
    CallArguments arguments{{*view, value}, {}};
    bool handled = false;
    FailureOr<Var> copied = callTorchFunction(
        value->is(K::Tensor) ? "torch.Tensor.copy_" : "torch.Tensor.fill_", arguments, loc,
        handled);
    if (!handled)
      return error(loc) << "tensor item assignment is not supported";
    return success(succeeded(copied));
  }
  if (kind == H::Instance) {
    FailureOr<Var> setItem = getAttribute(container, "__setitem__", loc);
    if (failed(setItem))
      return failure();
    return success(succeeded(call(*setItem, CallArguments{{key, value}, {}}, loc)));
  }
  return error(loc) << describe(heap, container) << " does not support item assignment";
}

LogicalResult Interpreter::deleteSubscript(Var container, Var key, Location loc) {
  std::optional<H> kind = heapKind(heap, container);
  if (kind == H::Dict) {
    FailureOr<std::optional<size_t>> found = findDictEntry(container->object, key, loc);
    if (failed(found))
      return failure();
    if (!*found)
      return error(loc) << "del of a missing key (KeyError)";
    HeapObject &dict =
        mutateObject(container->object, SideEffect::Kind::SetContents, "", nullptr, loc);
    dict.entries.erase(dict.entries.begin() + **found);
    return success();
  }
  if (kind == H::List) {
    int64_t length = heap.get(container->object).items.size();
    std::vector<int64_t> indices;
    if (key->is(K::Slice)) {
      int64_t start, stop, step;
      if (failed(sliceIndices(*key, length, start, stop, step, loc)))
        return failure();
      for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step)
        indices.push_back(i);
    } else {
      FailureOr<int64_t> index = constantIntArgument(key, "a list index", loc);
      if (failed(index))
        return failure();
      int64_t i = *index < 0 ? *index + length : *index;
      if (i < 0 || i >= length)
        return error(loc) << "list assignment index out of range";
      indices.push_back(i);
    }
    llvm::sort(indices, std::greater<int64_t>());
    HeapObject &list =
        mutateObject(container->object, SideEffect::Kind::SetContents, "", nullptr, loc);
    for (int64_t i : indices)
      list.items.erase(list.items.begin() + i);
    return success();
  }
  if (kind == H::Instance) {
    FailureOr<Var> delItem = getAttribute(container, "__delitem__", loc);
    if (failed(delItem))
      return failure();
    return success(succeeded(call(*delItem, CallArguments{{key}, {}}, loc)));
  }
  return error(loc) << describe(heap, container) << " does not support item deletion";
}

FailureOr<std::vector<Var>> Interpreter::unpack(Var iterable, Location loc) {
  if (iterable->is(K::Tuple))
    return iterable->items;
  std::optional<H> kind = heapKind(heap, iterable);
  if (kind == H::List || kind == H::Set) {
    const std::vector<Var> &items = heap.get(iterable->object).items;
    noteRead(GuardRead::Step::Length, iterable->object, "", nullptr, makeInt(items.size(), ctx),
             loc);
    return items;
  }
  if (kind == H::Iterator) {
    const HeapObject &it = heap.get(iterable->object);
    std::vector<Var> rest(it.items.begin() + it.position, it.items.end());
    heap.mutate(iterable->object).position = it.items.size();
    return rest;
  }
  FailureOr<Var> iterator = iterate(iterable, loc);
  if (failed(iterator))
    return failure();
  return unpack(*iterator, loc);
}

FailureOr<Var> Interpreter::iterate(Var iterable, Location loc) {
  HeapObject iterator;
  iterator.kind = H::Iterator;
  std::optional<H> kind = heapKind(heap, iterable);
  if (kind == H::Iterator)
    return iterable;
  if (iterable->is(K::Tuple) || kind == H::List || kind == H::Set) {
    FailureOr<std::vector<Var>> items = unpack(iterable, loc);
    if (failed(items))
      return failure();
    iterator.items = std::move(*items);
  } else if (kind == H::Dict) {
    for (const auto &entry : heap.get(iterable->object).entries)
      iterator.items.push_back(entry.first);
    noteRead(GuardRead::Step::Keys, iterable->object, "", nullptr, makeTuple(iterator.items),
             loc);
  } else if (iterable->is(K::Range)) {
    FailureOr<int64_t> start = constantIntArgument(iterable->items[0], "range()'s start", loc);
    FailureOr<int64_t> stop = constantIntArgument(iterable->items[1], "range()'s stop", loc);
    FailureOr<int64_t> step = constantIntArgument(iterable->items[2], "range()'s step", loc);
    if (failed(start) || failed(stop) || failed(step))
      return failure();
    if (*step == 0)
      return error(loc) << "range() step must not be zero";
    for (int64_t i = *start; *step > 0 ? i < *stop : i > *stop; i += *step)
      iterator.items.push_back(makeInt(i, ctx));
  } else if (iterable->is(K::Str)) {
    for (char c : iterable->name)
      iterator.items.push_back(makeStr(std::string(1, c)));
  } else if (iterable->is(K::Tensor)) {
    auto type = llvm::cast<BaseTensorType>(heap.get(iterable->object).tensor.getType());
    if (type.getSizes().empty())
      return error(loc) << "iteration over a 0-d tensor";
    std::optional<int64_t> n = getConstantSize(type.getSizes()[0]);
    if (!n)
      return error(loc) << "iterating over a tensor with a symbolic first dimension";
    for (int64_t i = 0; i < *n; ++i) {
      FailureOr<Var> row = tensorIndex(iterable, makeInt(i, ctx), loc);
      if (failed(row))
        return failure();
      iterator.items.push_back(*row);
    }
  } else if (kind == H::Instance) {
    FailureOr<Var> iter = getAttribute(iterable, "__iter__", loc);
    if (failed(iter))
      return failure();
    FailureOr<Var> result = call(*iter, {}, loc);
    if (failed(result))
      return failure();
    return iterate(*result, loc);
  } else {
    return error(loc) << describe(heap, iterable) << " is not iterable";
  }
  return makeObject(newObject(std::move(iterator)));
}

/// Python's repr() of a float: the shortest digits that round-trip, with ".0" on
/// integral values.
static std::string floatRepr(double value) {
  if (std::isnan(value))
    return "nan";
  if (std::isinf(value))
    return value < 0 ? "-inf" : "inf";
  char buffer[64];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);
  std::string text(buffer, ec == std::errc() ? end : buffer);
  // Python switches to exponent notation from 1e16 and below 1e-4.
  double magnitude = std::fabs(value);
  if (magnitude != 0 && (magnitude >= 1e16 || magnitude < 1e-4)) {
    auto [expEnd, expEc] =
        std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::scientific);
    text.assign(buffer, expEc == std::errc() ? expEnd : buffer);
    size_t e = text.find('e');
    if (e != std::string::npos) { // "1e-05", "1.5e+16": two exponent digits at least
      std::string mantissa = text.substr(0, e), exponent = text.substr(e + 1);
      char sign = exponent[0] == '-' ? '-' : '+';
      if (exponent[0] == '-' || exponent[0] == '+')
        exponent = exponent.substr(1);
      if (exponent.size() < 2)
        exponent = "0" + exponent;
      text = mantissa + "e" + sign + exponent;
    }
    return text;
  }
  if (text.find_first_of(".e") == std::string::npos)
    text += ".0";
  return text;
}

FailureOr<std::string> Interpreter::formatValue(Var value, llvm::StringRef spec, int conversion,
                                                Location loc) {
  // The value as str() / repr() gives it (what a spec-less field shows).
  std::optional<double> number = value->getNumber();
  std::string plain;
  if (value->is(K::Str))
    plain = conversion == 2 || conversion == 3 ? "'" + value->name + "'" : value->name;
  else if (value->is(K::Bool))
    plain = value->boolValue ? "True" : "False";
  else if (value->is(K::None))
    plain = "None";
  else if (value->is(K::Int) && value->getConstantInt())
    plain = std::to_string(*value->getConstantInt());
  else if (value->is(K::Float))
    plain = floatRepr(value->floatValue);
  else if (value->is(K::DType)) {
    std::optional<TorchDType> dtype = lookupDTypeByType(value->type);
    if (!dtype)
      return error(loc) << "formatting this dtype in an f-string is not supported";
    plain = ("torch." + dtype->name).str();
  } else if (value->is(K::Tuple) &&
             (!value->tupleClass ||
              (value->tupleClass->is(K::External) && value->tupleClass->name == "torch.Size"))) {
    // repr() of the items: "(1, 'a')", "(4,)", "torch.Size([4, 8])".
    std::vector<std::string> items;
    for (const Var &item : value->items) {
      FailureOr<std::string> text = formatValue(item, "", 2, loc);
      if (failed(text))
        return failure();
      items.push_back(*text);
    }
    std::string joined = llvm::join(items, ", ");
    plain = value->tupleClass ? "torch.Size([" + joined + "])"
                              : "(" + joined + (items.size() == 1 ? ",)" : ")");
  } else
    return error(loc) << "formatting this value in an f-string is not supported (a "
                         "constant string, number, bool, None, dtype or tuple is)";
  if (value->is(K::Str) && (conversion == 2 || conversion == 3) &&
      llvm::StringRef(value->name).find_first_of("'\\\n\r\t") != llvm::StringRef::npos)
    return error(loc) << "repr() of a string with quotes or escapes in an f-string is not "
                         "supported";
  if (spec.empty())
    return plain;
  // [[fill]align][sign][#][0][width][,|_][.precision][type]
  llvm::StringRef rest = spec;
  char fill = ' ', align = 0;
  if (rest.size() >= 2 && llvm::StringRef("<>^=").contains(rest[1])) {
    fill = rest[0];
    align = rest[1];
    rest = rest.drop_front(2);
  } else if (!rest.empty() && llvm::StringRef("<>^=").contains(rest[0])) {
    align = rest[0];
    rest = rest.drop_front();
  }
  char sign = '-';
  if (!rest.empty() && llvm::StringRef("+- ").contains(rest[0])) {
    sign = rest[0];
    rest = rest.drop_front();
  }
  if (!rest.empty() && rest[0] == '0' && !align) {
    fill = '0';
    align = '=';
  }
  size_t width = 0;
  while (!rest.empty() && llvm::isDigit(rest[0])) {
    width = width * 10 + (rest[0] - '0');
    rest = rest.drop_front();
  }
  std::optional<int> precision;
  if (rest.starts_with(".")) {
    rest = rest.drop_front();
    int p = 0;
    while (!rest.empty() && llvm::isDigit(rest[0])) {
      p = p * 10 + (rest[0] - '0');
      rest = rest.drop_front();
    }
    precision = p;
  }
  char type = rest.empty() ? 0 : rest[0];
  if (rest.size() > 1 || (type && !llvm::StringRef("dfFeEgGs%").contains(type)))
    return error(loc) << "the f-string format spec '" << spec << "' is not supported";
  std::string body;
  bool negative = false;
  if (value->is(K::Str)) {
    if (type && type != 's')
      return error(loc) << "format spec '" << spec << "' for a string";
    body = precision ? plain.substr(0, *precision) : plain;
    if (!align)
      align = '<';
  } else if (number && !value->is(K::None)) {
    double x = *number;
    negative = std::signbit(x) && !std::isnan(x);
    double magnitude = std::fabs(x);
    char buffer[512];
    bool integral = value->is(K::Int) || value->is(K::Bool);
    if (type == 'd' || (!type && integral && !precision)) {
      if (!integral)
        return error(loc) << "format spec '" << spec << "' for a float";
      body = std::to_string(static_cast<int64_t>(magnitude));
    } else if (!type && !precision) {
      body = integral ? std::to_string(static_cast<int64_t>(magnitude)) : floatRepr(magnitude);
    } else {
      char t = type ? type : 'g';
      double shown = t == '%' ? magnitude * 100 : magnitude;
      std::string format = "%." + std::to_string(precision.value_or(6)) + (t == '%' ? 'f' : t);
      snprintf(buffer, sizeof buffer, format.c_str(), shown);
      body = buffer;
      if (t == '%')
        body += "%";
    }
    if (negative)
      body = "-" + body;
    else if (sign == '+' || sign == ' ')
      body = std::string(1, sign) + body;
    if (!align)
      align = '>';
  } else {
    return error(loc) << "format spec '" << spec << "' for this value is not supported";
  }
  if (body.size() >= width)
    return body;
  size_t pad = width - body.size();
  switch (align) {
  case '<':
    return body + std::string(pad, fill);
  case '^':
    return std::string(pad / 2, fill) + body + std::string(pad - pad / 2, fill);
  case '=': {
    size_t signSize = !body.empty() && llvm::StringRef("+- ").contains(body[0]) ? 1 : 0;
    return body.substr(0, signSize) + std::string(pad, fill) + body.substr(signSize);
  }
  default:
    return std::string(pad, fill) + body;
  }
}

