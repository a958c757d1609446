// Calls in the bytecode interpreter: inlined user functions and bound methods, classes
// (instances and namedtuples), nn.Module's __call__ with its hooks, and externals by name.
#include "Interpreter.h"

#include "TorchFunctions.h"

#include "llvm/ADT/StringSwitch.h"

using namespace mlir;
using namespace tgc;
using namespace tgc::frontend;
using namespace tgc::py;

using K = Variable::Kind;
using H = HeapObject::Kind;

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
    // An object of a standard library class tgc models (functools.partial): its
    // registered `__call__`, with the object first.
    if (h.classObject && h.classObject->is(K::External)) {
      arguments.positional.insert(arguments.positional.begin(), callable);
      return callExternal(*makeExternal(h.classObject->name + ".__call__"), std::move(arguments),
                          loc);
    }
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
  if (Var dict = module.getAttribute(name); dict && heap.kindOf(dict) == H::Dict)
    for (const auto &entry : heap.get(dict->object).entries)
      hooks.push_back(entry.second);
  return hooks;
}

/// nn.Module.__call__: forward pre-hooks (which may replace the positional arguments),
/// `forward`, then forward hooks (which may replace the output); a hook returning None
/// changes nothing.
FailureOr<Var> Interpreter::callModule(Var module, CallArguments arguments, Location loc) {
  const HeapObject &h = heap.get(module->object);
  // The entry module's own full backward hooks and backward pre-hooks run in Python:
  // tgc.load wraps each call in them as nn.Module.__call__ does, with tgc's gradients.
  bool entry = depth == 0 && entryCallable && entryCallable->is(K::Object) &&
               entryCallable->object == module->object;
  if (entry && !hookValues(heap, h, "_backward_hooks").empty()) {
    Var full = h.getAttribute("_is_full_backward_hook");
    if (!full || !full->is(K::Bool) || !full->boolValue)
      return error(loc) << "register_backward_hook (a non-full module backward hook) is not "
                           "supported; register_full_backward_hook is";
  }
  if (!entry)
    for (const char *backward : {"_backward_hooks", "_backward_pre_hooks"})
      if (!hookValues(heap, h, backward).empty())
        return error(loc) << "module hooks (" << backward
                          << ") are not supported yet on a submodule: a module backward hook "
                             "is supported on the compiled module itself (tgc.load runs it)";
  for (const char *withKwargs : {"_forward_hooks_with_kwargs", "_forward_pre_hooks_with_kwargs"}) {
    for (const Var &flag : hookValues(heap, h, withKwargs)) {
      FailureOr<bool> set = truth(flag, loc);
      if (failed(set) || *set)
        return error(loc) << "module hooks (" << withKwargs << ") are not supported yet";
    }
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
    arguments.positional = (*result)->is(K::Tuple) ? (*result)->items : std::vector<Var>{*result};
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

FailureOr<Var> Interpreter::instantiate(Var cls, CallArguments arguments, Location loc) {
  // A namedtuple: its generated __new__ binds the fields (with `_field_defaults`) and
  // makes a tuple of the class.
  if (std::optional<std::vector<std::string>> fields = namedTupleFields(heap, cls)) {
    std::vector<Var> items(fields->size());
    if (arguments.positional.size() > fields->size())
      return error(loc) << describe(heap, cls) << " takes " << fields->size() << " fields, got "
                        << arguments.positional.size();
    for (auto [i, value] : llvm::enumerate(arguments.positional))
      items[i] = value;
    for (auto &[name, value] : arguments.keywords) {
      auto it = llvm::find(*fields, name);
      if (it == fields->end() || items[it - fields->begin()])
        return error(loc) << describe(heap, cls) << " got an unexpected or repeated field '" << name
                          << "'";
      items[it - fields->begin()] = value;
    }
    Var defaults = heap.get(cls->object).getAttribute("_field_defaults");
    for (auto [i, item] : llvm::enumerate(items)) {
      if (item)
        continue;
      if (defaults && heap.kindOf(defaults) == H::Dict)
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
  // An instance of a subclass of dict, list or set is that container, of its class
  // (transformers' ModelOutput is an OrderedDict).
  HeapObject instance;
  instance.kind = H::Instance;
  if (Var base = externalBase(heap, cls))
    instance.kind = llvm::StringSwitch<H>(base->name)
                        .Cases({"builtins.dict", "collections.OrderedDict"}, H::Dict)
                        .Case("builtins.list", H::List)
                        .Case("builtins.set", H::Set)
                        .Default(H::Instance);
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
  if (const CallHandler *handler = getCallRegistry().lookup(name)) {
    ExternalCall call(name, arguments, loc);
    CallResult result = (*handler)(*this, call);
    if (!result.isDeclined())
      return result.takeResult();
  }
  if (isKnownTorchFunction(name) || operatorOverloads.contains(name))
    return callTorchFunction(name, arguments, loc);
  return error(loc) << "graph break: calling " << name << " is not supported";
}

FailureOr<std::vector<Var>> Interpreter::sortKeys(llvm::ArrayRef<Var> items, Var key,
                                                  Location loc) {
  std::vector<Var> keys;
  if (!key)
    return keys;
  for (const Var &item : items) {
    FailureOr<Var> k = call(key, CallArguments{{item}, {}}, loc);
    if (failed(k))
      return failure();
    keys.push_back(*k);
  }
  return keys;
}
