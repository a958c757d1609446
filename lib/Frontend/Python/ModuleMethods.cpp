// Methods of torch.nn.Module that the bytecode interpreter models rather than interprets:
// __init__, add_module, and the iterators over children, parameters, buffers and modules.
// (Methods torch writes in Python, such as nn.Sequential.__iter__, are interpreted.)
#include "Interpreter.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace tgc;
using namespace tgc::py;

using K = Variable::Kind;
using H = HeapObject::Kind;

/// nn.Module.__init__: the dicts torch's modules keep their state in, and `training`.
static CallResult init(Interpreter &in, ExternalCall &call) {
  std::vector<Var> &args = call.args;
  if (args.empty() || !args[0]->is(K::Object))
    return call.error() << "nn.Module.__init__ without a module";
  for (const char *store : {"_parameters", "_buffers", "_modules", "_forward_hooks",
                            "_forward_pre_hooks", "_backward_hooks"}) {
    HeapObject dict;
    dict.kind = H::Dict;
    Var value = makeObject(in.newObject(std::move(dict)));
    if (failed(in.setAttribute(args[0], store, value, call.loc)))
      return failure();
  }
  if (failed(in.setAttribute(args[0], "training", makeBool(true), call.loc)))
    return failure();
  return makeNone();
}

/// add_module(name, module) and register_module.
static CallResult addModule(Interpreter &in, ExternalCall &call) {
  std::vector<Var> &args = call.args;
  if (args.size() != 3 || !args[1]->is(K::Str))
    return call.error() << "add_module(name, module) needs a constant name";
  FailureOr<Var> modules = in.getAttribute(args[0], "_modules", call.loc);
  if (failed(modules) || failed(in.storeSubscript(*modules, args[1], args[2], call.loc)))
    return failure();
  return makeNone();
}

/// children() and named_children(): the direct submodules.
static CallResult children(Interpreter &in, ExternalCall &call) {
  if (call.args.size() != 1)
    return call.error() << call.name << "() takes no arguments";
  FailureOr<Var> modules = in.getAttribute(call.args[0], "_modules", call.loc);
  if (failed(modules))
    return failure();
  bool named = call.name == "torch.nn.Module.named_children";
  std::vector<Var> items;
  for (const auto &[key, module] : in.getHeap().get((*modules)->object).entries) {
    if (module->is(K::None))
      continue;
    items.push_back(named ? makeTuple({key, module}) : module);
  }
  return in.makeSequence(H::Iterator, std::move(items));
}

namespace {
/// What parameters(), buffers() and modules() and their named_ forms collect, walking
/// the module tree depth-first as torch's named_* iterate (duplicates once).
struct ModuleWalk {
  Interpreter &in;
  Location loc;
  /// `_parameters` or `_buffers`; null for the modules themselves.
  const char *store;
  bool named;
  std::vector<Var> items, seen;

  void addOnce(Var value, const std::string &itemName) {
    if (llvm::any_of(seen, [&](const Var &s) { return in.identical(s, value); }))
      return;
    seen.push_back(value);
    items.push_back(named ? makeTuple({makeStr(itemName), value}) : value);
  }

  LogicalResult walk(Var module, const std::string &prefix) {
    if (!store)
      addOnce(module, prefix.empty() ? prefix : prefix.substr(0, prefix.size() - 1));
    if (store) {
      FailureOr<Var> entries = in.getAttribute(module, store, loc);
      if (failed(entries))
        return failure();
      for (const auto &[key, value] : in.getHeap().get((*entries)->object).entries)
        if (!value->is(K::None) && key->is(K::Str))
          addOnce(value, prefix + key->name);
    }
    FailureOr<Var> children = in.getAttribute(module, "_modules", loc);
    if (failed(children))
      return failure();
    for (const auto &[key, child] : in.getHeap().get((*children)->object).entries)
      if (!child->is(K::None) && key->is(K::Str) && failed(walk(child, prefix + key->name + ".")))
        return failure();
    return success();
  }
};
} // namespace

/// parameters(), buffers(), modules() and their named_ forms, without arguments.
static CallResult members(Interpreter &in, ExternalCall &call) {
  if (call.args.size() != 1)
    return call.error() << call.name << "() with arguments is not supported";
  llvm::StringRef what = call.name.rsplit('.').second;
  bool named = what.consume_front("named_");
  const char *store = what == "parameters" ? "_parameters"
                      : what == "buffers"  ? "_buffers"
                                           : nullptr;
  ModuleWalk walk{in, call.loc, store, named, {}, {}};
  if (failed(walk.walk(call.args[0], "")))
    return failure();
  return in.makeSequence(H::Iterator, std::move(walk.items));
}

void tgc::py::registerModuleMethods(CallRegistry &registry) {
  registry.add("torch.nn.Module.__init__", init);
  registry.add("torch.nn.Module.add_module", addModule);
  registry.add("torch.nn.Module.register_module", addModule);
  registry.add("torch.nn.Module.children", children);
  registry.add("torch.nn.Module.named_children", children);
  for (llvm::StringRef what : {"parameters", "buffers", "modules"}) {
    registry.add(("torch.nn.Module." + what).str(), members);
    registry.add(("torch.nn.Module.named_" + what).str(), members);
  }
}
