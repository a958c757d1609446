// Attributes and classes in the bytecode interpreter: Python's lookup through the MRO,
// descriptors and properties, super(), and nn.Module's __getattr__ and __setattr__.
#include "Interpreter.h"

using namespace mlir;
using namespace tgc;
using namespace tgc::frontend;
using namespace tgc::py;

using K = Variable::Kind;
using H = HeapObject::Kind;

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
    return cls->name == externalName || (externalName == "builtins.object") ||
           isBuiltinExceptionSubclass(cls->name, externalName) ||
           (externalName == "builtins.int" && cls->name == "builtins.bool") ||
           (externalName == kTensorClass && cls->name == "torch.nn.Parameter");
  if (heap.kindOf(cls) != H::Class)
    return false;
  for (const Var &base : heap.get(cls->object).mro)
    if (base->is(K::External) ? isSubclass(base, externalName)
                              : heap.get(base->object).qualname == externalName)
      return true;
  return false;
}

FailureOr<Var> Interpreter::lookupInClass(Var cls, llvm::StringRef name) {
  if (heap.kindOf(cls) != H::Class)
    return Var();
  for (const Var &base : heap.get(cls->object).mro) {
    if (heap.kindOf(base) != H::Class)
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
  std::optional<H> kind = heap.kindOf(attribute);
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

/// The attributes of a code object that programs read (`co_varnames`, `co_argcount`...);
/// null for others.
static Var codeAttribute(const py::CodeObject &code, llvm::StringRef name, MLIRContext *ctx) {
  // A tuple of the names of the local slots of `kind` (all of co_names for 0).
  auto names = [&](uint8_t kind) {
    std::vector<Var> items;
    if (kind == 0)
      llvm::transform(code.names, std::back_inserter(items), makeStr);
    for (auto [local, kinds] : llvm::zip(code.localsPlusNames, code.localsPlusKinds))
      if (kind && (kinds & kind))
        items.push_back(makeStr(local));
    return makeTuple(std::move(items));
  };
  if (name == "co_varnames")
    return names(py::kFastLocal);
  if (name == "co_cellvars")
    return names(py::kFastCell);
  if (name == "co_freevars")
    return names(py::kFastFree);
  if (name == "co_names")
    return names(0);
  if (name == "co_name")
    return makeStr(code.name);
  if (name == "co_qualname")
    return makeStr(code.qualname);
  if (name == "co_filename")
    return makeStr(code.filename);
  for (auto [field, value] : {std::pair<llvm::StringRef, int64_t>{"co_argcount", code.argCount},
                              {"co_posonlyargcount", code.posOnlyArgCount},
                              {"co_kwonlyargcount", code.kwOnlyArgCount},
                              {"co_flags", code.flags},
                              {"co_firstlineno", code.firstLineNo}})
    if (name == field)
      return makeInt(value, ctx);
  return Var();
}

/// `obj.__dict__` of an instance: a new dict of its attributes, in order. It is a copy
/// (reading it is exact; a write into it does not reach the object), as programs read it
/// (`self.__dict__.get(name)` in transformers' ModelOutput).
static Var instanceDict(Interpreter &in, const Var &object) {
  HeapObject dict;
  dict.kind = H::Dict;
  for (const auto &[name, value] : in.getHeap().get(object->object).attributes)
    dict.entries.emplace_back(makeStr(name), value);
  return makeObject(in.newObject(std::move(dict)));
}

Var tgc::py::externalBase(const Heap &heap, const Var &cls) {
  if (cls->is(K::External))
    return cls;
  if (!cls->is(K::Object) || heap.get(cls->object).kind != H::Class)
    return nullptr;
  for (const Var &base : heap.get(cls->object).mro)
    if (base->is(K::External) && base->name != "builtins.object")
      return base;
  return nullptr;
}

std::optional<std::vector<std::string>> tgc::py::namedTupleFields(const Heap &heap,
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

FailureOr<Var> Interpreter::lookupAttribute(Var object, llvm::StringRef name, Location loc) {
  // The class of a value held by the interpreter itself (a tensor, a number, a string):
  // what type() returns.
  if (name == "__class__" && !object->is(K::Object) && !object->is(K::External))
    return getClassOf(object);
  if (object->is(K::Tensor))
    return tensorAttribute(object, name, loc);
  if (object->is(K::External)) {
    if (name == "__name__")
      return makeStr(llvm::StringRef(object->name).rsplit('.').second);
    std::string qualified = (object->name + "." + name).str();
    // An overload of a torch.ops operator packet (`torch.ops.aten.gelu.default`).
    if (auto it = operatorOverloads.find(object->name);
        it != operatorOverloads.end() && !operatorOverloads.contains(qualified) &&
        llvm::StringRef(object->name).starts_with("torch.ops.")) {
      std::string target = it->first().drop_front(strlen("torch.ops.")).str() + "." + name.str();
      auto overload =
          llvm::find_if(it->second, [&](const OperatorOverload &o) { return o.target == target; });
      if (overload == it->second.end())
        return error(loc) << "the operator " << object->name << " has no overload '" << name << "'";
      OperatorOverload found = *overload;
      operatorOverloads[qualified] = {std::move(found)};
    }
    return makeExternal(qualified);
  }
  // A namedtuple: its fields by name, else its class's attributes (`_fields`).
  if (object->is(K::Tuple) && object->tupleClass && object->tupleClass->is(K::Object)) {
    if (std::optional<std::vector<std::string>> fields =
            namedTupleFields(heap, object->tupleClass)) {
      auto it = llvm::find(*fields, name);
      if (it != fields->end() && size_t(it - fields->begin()) < object->items.size())
        return object->items[it - fields->begin()];
      // `_replace` and `_asdict` are collections' own (recorded by name where the class
      // was made outside the program) unless a subclass defines its own.
      Var value = heap.get(object->tupleClass->object).getAttribute(name);
      bool standard = !value || (value->is(K::External) &&
                                 llvm::StringRef(value->name).starts_with("collections."));
      if ((name == "_replace" || name == "_asdict") && standard)
        return makeMethod(makeExternal(("collections.namedtuple." + name).str()), object);
      if (value)
        return value;
    }
  }
  if (object->is(K::Tuple) && (name == "index" || name == "count"))
    return makeMethod(makeExternal(("builtins.tuple." + name).str()), object);
  if (object->is(K::Tuple) && object->tupleClass && object->tupleClass->is(K::External) &&
      object->tupleClass->name == "torch.Size" && name == "numel")
    return makeMethod(makeExternal("torch.Size.numel"), object);
  // torch.return_types.max / min: named fields of (values, indices); aminmax's (min, max).
  if (object->is(K::Tuple) && object->tupleClass && object->tupleClass->is(K::External) &&
      llvm::StringRef(object->tupleClass->name).starts_with("torch.return_types.") &&
      object->items.size() == 2) {
    bool aminmax = object->tupleClass->name == "torch.return_types.aminmax";
    if (name == (aminmax ? "min" : "values") || name == (aminmax ? "max" : "indices"))
      return object->items[name == "values" || name == "min" ? 0 : 1];
  }
  if (object->is(K::Str) && isStringMethod(name))
    return makeMethod(makeExternal(("builtins.str." + name).str()), object);
  if (object->is(K::Code))
    return codeAttribute(*object->code, name, ctx);
  // torch.device: its `type` ("cpu", "cuda") and `index` (None when it has none).
  if (object->is(K::Device) && (name == "type" || name == "index")) {
    auto [type, index] = llvm::StringRef(object->name).split(':');
    if (name == "type")
      return makeStr(type);
    int64_t i;
    return index.empty() || index.getAsInteger(10, i) ? makeNone() : makeInt(i, ctx);
  }
  if (object->is(K::Method)) {
    if (name == "__self__")
      return object->items[1];
    if (name == "__func__")
      return object->items[0];
    return lookupAttribute(object->items[0], name, loc);
  }
  if (object->is(K::Super)) {
    Var cls = object->items[0], self = object->items[1];
    FailureOr<Var> selfClass = self->is(K::Object) && heap.kindOf(self) == H::Class
                                   ? FailureOr<Var>(self)
                                   : getClassOf(self);
    if (failed(selfClass))
      return failure();
    if (heap.kindOf(*selfClass) != H::Class)
      return error(loc) << "super() outside a user class";
    const std::vector<Var> &mro = heap.get((*selfClass)->object).mro;
    auto it = llvm::find_if(mro, [&](const Var &c) { return identical(c, cls); });
    if (it == mro.end())
      return error(loc) << "super(): the class is not in the MRO of its argument";
    for (++it; it != mro.end(); ++it) {
      if ((*it)->is(K::External)) {
        // A list, dict or set subclass: its base's methods are the container's (an
        // OrderedDict's `__setitem__` is dict's), unless tgc models the base's own.
        std::string qualified = (*it)->name + "." + name.str();
        std::optional<H> selfKind = heap.kindOf(self);
        if ((selfKind == H::List || selfKind == H::Dict || selfKind == H::Set) &&
            !getCallRegistry().lookup(qualified))
          qualified = (selfKind == H::List   ? "builtins.list."
                       : selfKind == H::Dict ? "builtins.dict."
                                             : "builtins.set.") +
                      name.str();
        return makeMethod(makeExternal(qualified), self);
      }
      if (Var value = heap.get((*it)->object).getAttribute(name))
        return bindDescriptor(value, heap.kindOf(self) == H::Class ? Var() : self, *selfClass, loc);
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
    if (name == "__qualname__" && h.kind == H::Function)
      return makeStr(h.qualname);
    // A function's module is its globals' `__name__` (torchvision's API-usage logging),
    // its code its code object (transformers reads `func.__code__.co_varnames`).
    if (h.kind == H::Function && !h.getAttribute(name)) {
      if (name == "__module__" && h.globals)
        if (Var module = heap.get(h.globals).getAttribute("__name__"))
          return module;
      if (name == "__class__")
        return getClassOf(object);
      if (name == "__code__" && h.code)
        return makeCode(h.code);
    }
    if (Var value = h.getAttribute(name)) {
      noteRead(h.kind == H::Globals ? GuardRead::Step::Global : GuardRead::Step::Attribute,
               object->object, name, nullptr, value, loc);
      return value;
    }
    // An attribute of torch the capture did not record (it records the names the bytecode
    // mentions; `getattr(torch, "_subclasses")` names none): torch's callables and
    // classes are known by name.
    if (h.kind == H::Module && (h.name == "torch" || llvm::StringRef(h.name).starts_with("torch.")))
      return makeExternal((h.name + "." + name).str());
    return Var();
  case H::Class: {
    FailureOr<Var> value = lookupInClass(object, name);
    if (failed(value))
      return failure();
    if (*value) {
      std::optional<H> kind = heap.kindOf(*value);
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
    if (*classValue && heap.kindOf(*classValue) == H::Property)
      return bindDescriptor(*classValue, object, cls, loc);
    if (Var value = h.getAttribute(name)) {
      noteRead(GuardRead::Step::Attribute, object->object, name, nullptr, value, loc);
      return value;
    }
    if (*classValue)
      return bindDescriptor(*classValue, object, cls, loc);
    if (name == "__class__")
      return cls;
    // An enum member's `value` and `name` (enum.Enum's properties) are its `_value_` and
    // `_name_`.
    if ((name == "value" || name == "name") && isSubclass(cls, "enum.Enum"))
      if (Var value = h.getAttribute(name == "value" ? "_value_" : "_name_")) {
        noteRead(GuardRead::Step::Attribute, object->object, name, nullptr, value, loc);
        return value;
      }
    if (name == "__dict__" && !isSubclass(cls, kModuleClass))
      return instanceDict(*this, object);
    if (isSubclass(cls, kModuleClass))
      for (const char *store : {"_parameters", "_buffers", "_modules"})
        if (Var dict = h.getAttribute(store); dict && heap.kindOf(dict) == H::Dict)
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
    // An instance of a user subclass of list, dict or set: what its class defines
    // first (transformers' registry overrides dict.get).
    // Such an instance has attributes too (transformers' ModelOutput), which come
    // after the class's properties and before its other attributes.
    if (h.classObject && heap.kindOf(h.classObject) == H::Class) {
      Var cls = h.classObject;
      FailureOr<Var> classValue = lookupInClass(cls, name);
      if (failed(classValue))
        return failure();
      if (*classValue && heap.kindOf(*classValue) == H::Property)
        return bindDescriptor(*classValue, object, cls, loc);
      if (Var value = h.getAttribute(name)) {
        noteRead(GuardRead::Step::Attribute, object->object, name, nullptr, value, loc);
        return value;
      }
      if (*classValue)
        return bindDescriptor(*classValue, object, cls, loc);
      if (name == "__class__")
        return cls;
      if (name == "__dict__")
        return instanceDict(*this, object);
    }
    // A container of a standard library class (collections.deque, OrderedDict,
    // defaultdict): the class's own methods first, the list's or dict's otherwise.
    if (h.classObject && h.classObject->is(K::External)) {
      std::string own = h.classObject->name + "." + name.str();
      if (getCallRegistry().lookup(own))
        return makeMethod(makeExternal(own), object);
      if (name == "maxlen" || name == "default_factory")
        if (Var value = h.getAttribute(name))
          return value;
    }
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
  if (!*value) {
    // A program that catches the AttributeError relies on the attribute being absent.
    if (object->is(K::Object))
      noteRead(GuardRead::Step::HasAttribute, object->object, name, nullptr, makeBool(false), loc);
    return raiseBuiltinException("builtins.AttributeError", {makeStr(name)}, loc,
                                 describe(heap, object) + " has no attribute '" + name + "'");
  }
  return *value;
}

FailureOr<Var> Interpreter::userSpecialMethod(Var object, llvm::StringRef name, Location loc) {
  std::optional<H> kind = heap.kindOf(object);
  if (kind != H::Instance && kind != H::List && kind != H::Dict && kind != H::Set)
    return Var();
  Var cls = heap.get(object->object).classObject;
  if (!cls || heap.kindOf(cls) != H::Class || isSubclass(cls, kModuleClass))
    return Var();
  FailureOr<Var> method = lookupInClass(cls, name);
  if (failed(method) || !*method || heap.kindOf(*method) != H::Function)
    return method;
  return bindDescriptor(*method, object, cls, loc);
}

LogicalResult Interpreter::setAttribute(Var object, llvm::StringRef name, Var value, Location loc) {
  // A class's own `__setattr__` / `__delattr__` (transformers' ModelOutput keeps its dict
  // in step with its fields).
  FailureOr<Var> hook = userSpecialMethod(object, value ? "__setattr__" : "__delattr__", loc);
  if (failed(hook))
    return failure();
  if (*hook) {
    CallArguments arguments{{makeStr(name)}, {}};
    if (value)
      arguments.positional.push_back(value);
    return success(succeeded(call(*hook, std::move(arguments), loc)));
  }
  return setInstanceAttribute(object, name, value, loc);
}

LogicalResult Interpreter::setInstanceAttribute(Var object, llvm::StringRef name, Var value,
                                                Location loc) {
  std::optional<H> kind = heap.kindOf(object);
  // Instances of list, dict and set subclasses have attributes too.
  bool userContainer = (kind == H::List || kind == H::Dict || kind == H::Set) &&
                       heap.get(object->object).classObject &&
                       heap.kindOf(heap.get(object->object).classObject) == H::Class;
  if (object->is(K::Tensor) || kind == H::Instance || kind == H::Class || kind == H::Function ||
      kind == H::Module || userContainer) {
    if (kind == H::Instance || userContainer) {
      FailureOr<Var> classValue = lookupInClass(heap.get(object->object).classObject, name);
      if (failed(classValue))
        return failure();
      if (*classValue && heap.kindOf(*classValue) == H::Property) {
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
          if (Var dict = h.getAttribute(store); dict && heap.kindOf(dict) == H::Dict)
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
