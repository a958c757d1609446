// Calls in the bytecode interpreter: inlined user functions and bound methods, classes
// (instances and namedtuples), nn.Module's __call__ with its hooks, and externals by name.
#include "Interpreter.h"

#include "TorchFunctions.h"
#include "tgc/Dialect/Attributes.h"

#include "llvm/ADT/ScopeExit.h"
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
  // Frames nest at most kMaxDepth deep, each with a few nested calls; more is a callable
  // that resolves to itself (a staticmethod wrapping itself in a malformed trace).
  static constexpr unsigned kMaxCallNesting = 1024;
  if (callNesting >= kMaxCallNesting)
    return error(loc) << describe(heap, callable) << " resolves to more than " << kMaxCallNesting
                      << " nested calls (a callable that calls itself?)";
  ++callNesting;
  llvm::scope_exit nested([&] { --callNesting; });
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

/// The tensors among `items` (a submodule call's positional arguments or the items of
/// the tuple it returns) cross a `tgc.break_module_hook` of `stage` as fresh values,
/// which replace them in `items`: the graph break where torch's BackwardHook wraps
/// them. With `onlyIfGrad`, tensors none of which requires grad do not cross (the
/// input stage then takes none, as BackwardHook wraps none).
LogicalResult Interpreter::breakModuleHook(std::vector<Var> &items, StringRef stage, int64_t number,
                                           bool onlyIfGrad, Location loc) {
  SmallVector<Value> tensors;
  SmallVector<int64_t> positions;
  bool requiresGrad = false;
  for (auto [i, item] : llvm::enumerate(items)) {
    if (!item->is(K::Tensor))
      continue;
    tensors.push_back(heap.get(item->object).tensor);
    positions.push_back(int64_t(i));
    requiresGrad |= llvm::cast<BaseTensorType>(tensors.back().getType()).getMeta().requiresGrad;
  }
  if (onlyIfGrad && !requiresGrad) {
    tensors.clear();
    positions.clear();
  }
  auto marker = BreakModuleHookOp::create(
      builder, loc, ValueRange(tensors).getTypes(), tensors, builder.getStringAttr(stage),
      builder.getI64IntegerAttr(number), builder.getDenseI64ArrayAttr(positions),
      builder.getI64IntegerAttr(int64_t(items.size())));
  for (auto [position, fresh] : llvm::zip(positions, marker.getResults()))
    items[size_t(position)] = newTensorObject(fresh);
  return success();
}

/// nn.Module.__call__: forward pre-hooks (which may replace the positional arguments),
/// `forward`, then forward hooks (which may replace the output); a hook returning None
/// changes nothing. A submodule's backward hooks are graph breaks around the call
/// (breakModuleHook), where torch's BackwardHook sets them up.
FailureOr<Var> Interpreter::callModule(Var module, CallArguments arguments, Location loc) {
  const HeapObject &h = heap.get(module->object);
  // The entry module's own full backward hooks and backward pre-hooks run in Python:
  // tgc.load wraps each call in them as nn.Module.__call__ does, with tgc's gradients.
  bool entry = depth == 0 && entryCallable && entryCallable->is(K::Object) &&
               entryCallable->object == module->object;
  if (!hookValues(heap, h, "_backward_hooks").empty()) {
    Var full = h.getAttribute("_is_full_backward_hook");
    if (!full || !full->is(K::Bool) || !full->boolValue)
      return error(loc) << "register_backward_hook (a non-full module backward hook) is not "
                           "supported; register_full_backward_hook is";
  }
  bool backwardHooks = training && !entry && isGradEnabled() &&
                       (!hookValues(heap, h, "_backward_hooks").empty() ||
                        !hookValues(heap, h, "_backward_pre_hooks").empty());
  if (backwardHooks && !canBreakGraph())
    return error(loc) << "backward hooks on a submodule run in Python between the backwards "
                         "of the graphs before and after its call: compile with "
                         "--allow-graph-breaks (the compiled module's own backward hooks "
                         "need no graph break)";
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
  // The module's backward hooks are the `number`-th `grad_hook` replay action (its value
  // the module, whose live hooks the caller runs).
  int64_t number = llvm::count_if(sideEffects, [](const SideEffect &effect) {
    return effect.kind == SideEffect::Kind::GradHook;
  });
  if (backwardHooks) {
    if (failed(breakModuleHook(arguments.positional, program::kInputStage, number,
                               /*onlyIfGrad=*/true, loc)))
      return failure();
    sideEffects.push_back(
        {SideEffect::Kind::GradHook, module->object, std::to_string(number), module, loc});
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
  if (!backwardHooks)
    return output;
  // A tuple's tensor items cross (a tuple of the same class comes back), else the
  // result itself when it is a tensor; any other result has no tensor that crosses
  // (BackwardHook wraps none, and the hooks never run).
  if ((*output)->is(K::Tuple)) {
    Variable tuple = **output;
    if (failed(breakModuleHook(tuple.items, program::kOutputStage, number,
                               /*onlyIfGrad=*/false, loc)))
      return failure();
    return makeVar(std::move(tuple));
  }
  std::vector<Var> single{*output};
  if (failed(breakModuleHook(single, program::kOutputStage, number, /*onlyIfGrad=*/false, loc)))
    return failure();
  return single.front();
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
  // An enum class called with a value: its member of that value (EnumType.__call__),
  // found by `==` on the members' `_value_` in definition order.
  if (isSubclass(cls, "enum.Enum") && arguments.positional.size() == 1 &&
      arguments.keywords.empty()) {
    Var value = arguments.positional.front();
    FailureOr<Var> members = lookupInClass(cls, "_member_map_");
    if (failed(members))
      return failure();
    if (!*members || heap.kindOf(*members) != H::Dict)
      return error(loc) << describe(heap, cls) << " has no member map (_member_map_)";
    std::vector<Var> candidates;
    for (const auto &entry : heap.get((*members)->object).entries)
      candidates.push_back(entry.second);
    for (const Var &member : candidates) {
      if (identical(member, value))
        return member;
      Var memberValue = heap.kindOf(member) == H::Instance
                            ? heap.get(member->object).getAttribute("_value_")
                            : Var();
      if (!memberValue)
        continue;
      FailureOr<bool> same = equals(memberValue, value, loc);
      if (failed(same))
        return failure();
      if (*same)
        return member;
    }
    FailureOr<std::string> text = formatPythonValue(value, "", 2, loc);
    std::string message = (failed(text) ? std::string("the value") : *text) + " is not a valid " +
                          heap.get(cls->object).name;
    return raiseBuiltinException("builtins.ValueError", {makeStr(message)}, loc,
                                 message + " (ValueError)");
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
  // An exception's `args` are its constructor's arguments (BaseException.__new__), whatever
  // its `__init__` does.
  Var object = isExceptionClass(cls) ? newException(cls, arguments.positional)
                                     : makeObject(newObject(std::move(instance)));
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
  // A library function tgc does not model, written in Python: run its code, as Dynamo
  // inlines it.
  if (auto it = pythonFallbacks.find(name); it != pythonFallbacks.end()) {
    FailureOr<Var> function = readValue(it->second);
    if (failed(function))
      return failure();
    return call(*function, std::move(arguments), loc);
  }
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
