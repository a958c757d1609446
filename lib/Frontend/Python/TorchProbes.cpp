// torch's questions about the run, answered as a compiled graph would answer them
// (`torch.is_grad_enabled()`, `torch.jit.is_scripting()`, `torch.compiler.is_compiling()`),
// the numeric limits of dtypes (`torch.finfo`, `torch.iinfo`), `torch.tensor(data)` of
// Python values, and the grad-mode and autocast context managers
// (`with torch.no_grad():`, `with torch.autocast("cpu"):`).
#include "Interpreter.h"

#include "Frontend/Common/DTypes.h"

#include "llvm/ADT/APFloat.h"
#include <cmath>

using namespace mlir;
using namespace tgc;
using namespace tgc::py;

using K = Variable::Kind;
using H = HeapObject::Kind;

static CallResult isTensor(Interpreter &, ExternalCall &call) {
  if (call.args.size() != 1)
    return CallResult::declined();
  return makeBool(call.args[0]->is(K::Tensor));
}

static CallResult isGradEnabled(Interpreter &in, ExternalCall &) {
  return makeBool(in.readGradMode());
}

/// A probe whose answer is the constant `value`.
static CallHandler constant(Var value) {
  return [value](Interpreter &, ExternalCall &) -> CallResult { return value; };
}

//===----------------------------------------------------------------------===//
// Grad modes
//===----------------------------------------------------------------------===//

/// `torch.no_grad()`, `torch.enable_grad()`, `torch.set_grad_enabled(b)` and
/// `torch.inference_mode(mode=True)`: a manager object holding the mode it enters.
static CallResult gradModeManager(Interpreter &in, ExternalCall &call) {
  llvm::StringRef manager = call.name;
  bool enabled = manager.ends_with("enable_grad");
  if (manager.ends_with("set_grad_enabled") || manager.ends_with("inference_mode")) {
    Var mode = call.args.empty() ? makeBool(manager.ends_with("inference_mode")) : call.args[0];
    if (!mode->is(K::Bool))
      return call.error() << call.name << "() needs a constant bool";
    enabled = manager.ends_with("inference_mode") ? !mode->boolValue : mode->boolValue;
  }
  HeapObject instance;
  instance.kind = H::Instance;
  instance.classObject = makeExternal(manager);
  instance.setAttribute("enabled", makeBool(enabled));
  return makeObject(in.newObject(std::move(instance)));
}

/// The grad mode the grad-mode manager `manager` enters. One the program made holds it
/// (`enabled`); one made outside it (a `@torch.no_grad()` decorator's, recorded with its
/// state by tgc-capture) has its class and, for set_grad_enabled and inference_mode, its
/// `mode`. None for anything else.
static std::optional<bool> managedGradMode(Interpreter &in, const Var &manager) {
  if (in.getHeap().kindOf(manager) != H::Instance)
    return std::nullopt;
  const HeapObject &object = in.getHeap().get(manager->object);
  if (Var enabled = object.getAttribute("enabled"); enabled && enabled->is(K::Bool))
    return enabled->boolValue;
  if (!object.classObject || !object.classObject->is(K::External))
    return std::nullopt;
  // The class as torch exports it (`torch.no_grad`) or where it is defined.
  llvm::StringRef name = object.classObject->name;
  if (!name.consume_front("torch.autograd.grad_mode.") && !name.consume_front("torch."))
    return std::nullopt;
  Var mode = object.getAttribute("mode");
  if (name == "no_grad")
    return false;
  if (name == "enable_grad")
    return true;
  if (name == "set_grad_enabled" && mode && mode->is(K::Bool))
    return mode->boolValue;
  if (name == "inference_mode" && mode && mode->is(K::Bool))
    return !mode->boolValue;
  return std::nullopt;
}

/// The manager's `__enter__` pushes its mode, `__exit__` pops it.
static CallResult enterOrExitGradMode(Interpreter &in, ExternalCall &call) {
  std::optional<bool> mode = call.args.empty() ? std::nullopt : managedGradMode(in, call.args[0]);
  if (!mode)
    return call.error() << call.name << " needs the context manager";
  if (call.name.ends_with("__enter__")) {
    in.pushGradMode(*mode);
    return makeNone();
  }
  if (!in.popGradMode())
    return call.error() << call.name << " without __enter__";
  return makeBool(false);
}

/// `manager.clone()`: a new manager of the same class and mode, which the wrapper of a
/// function decorated with `@torch.no_grad()` (torch.utils._contextlib.context_decorator)
/// enters around each call.
static CallResult cloneGradModeManager(Interpreter &in, ExternalCall &call) {
  std::optional<bool> mode =
      call.args.size() == 1 ? managedGradMode(in, call.args[0]) : std::nullopt;
  if (!mode)
    return CallResult::declined();
  HeapObject instance;
  instance.kind = H::Instance;
  instance.classObject = in.getHeap().get(call.args[0]->object).classObject;
  instance.setAttribute("enabled", makeBool(*mode));
  return makeObject(in.newObject(std::move(instance)));
}

//===----------------------------------------------------------------------===//
// Autocast
//===----------------------------------------------------------------------===//

/// `torch.autocast(device_type, dtype=None, enabled=True, cache_enabled=None)`, and
/// `torch.cpu.amp.autocast` / `torch.cuda.amp.autocast(enabled=True, dtype=...,
/// cache_enabled=True)`, whose device is fixed: a manager object holding the block.
static CallResult autocastManager(Interpreter &in, ExternalCall &call) {
  llvm::StringRef name = call.name;
  std::optional<llvm::StringRef> fixedDevice;
  if (name.contains(".cpu.amp."))
    fixedDevice = "cpu";
  else if (name.contains(".cuda.amp."))
    fixedDevice = "cuda";
  SmallVector<llvm::StringRef, 4> order =
      fixedDevice
          ? SmallVector<llvm::StringRef, 4>{"enabled", "dtype", "cache_enabled"}
          : SmallVector<llvm::StringRef, 4>{"device_type", "dtype", "enabled", "cache_enabled"};
  llvm::StringMap<Var> values;
  if (call.args.size() > order.size())
    return call.error() << call.name << "() takes at most " << order.size()
                        << " positional arguments";
  for (auto [i, value] : llvm::enumerate(call.args))
    values[order[i]] = value;
  for (auto &[keyword, value] : call.arguments.keywords) {
    if (!llvm::is_contained(order, keyword))
      return call.error() << call.name << "() got an unexpected keyword argument '" << keyword
                          << "'";
    values[keyword] = value;
  }
  HeapObject instance;
  instance.kind = H::Instance;
  instance.classObject = makeExternal(call.name);
  Var device = fixedDevice ? makeStr(*fixedDevice) : values.lookup("device_type");
  if (!device || !device->is(K::Str))
    return call.error() << call.name << "() needs a constant device_type string";
  llvm::StringRef deviceType = llvm::StringRef(device->name).split(':').first;
  instance.setAttribute("device_type", makeStr(deviceType));
  Var dtype = values.lookup("dtype");
  if (dtype && !dtype->is(K::DType) && !dtype->is(K::None))
    return call.error() << call.name << "() needs a dtype";
  if (dtype && dtype->is(K::DType) && !dtype->type)
    return call.error() << "dtype torch." << dtype->name << " is not supported";
  instance.setAttribute("dtype", dtype ? dtype : makeNone());
  Var enabled = values.lookup("enabled");
  if (enabled && !enabled->is(K::Bool))
    return call.error() << call.name << "() needs a constant bool 'enabled'";
  instance.setAttribute("enabled", makeBool(!enabled || enabled->boolValue));
  return makeObject(in.newObject(std::move(instance)));
}

/// `torch.is_autocast_enabled(device_type="cuda")`: whether the innermost block for the
/// device turns autocast on.
static CallResult isAutocastEnabled(Interpreter &in, ExternalCall &call) {
  if (call.args.size() > 1 || !call.arguments.keywords.empty())
    return CallResult::declined();
  if (!call.args.empty() && !call.args[0]->is(K::Str))
    return call.error() << call.name << "() needs a constant device_type string";
  llvm::StringRef device = call.args.empty() ? "cuda" : llvm::StringRef(call.args[0]->name);
  const frontend::AutocastRegion *region =
      frontend::findAutocastRegion(in.getAutocastRegions(), device.split(':').first);
  return makeBool(region && region->enabled);
}

/// The manager's `__enter__` enters its block, `__exit__` leaves it.
static CallResult enterOrExitAutocast(Interpreter &in, ExternalCall &call) {
  if (call.args.empty() || in.getHeap().kindOf(call.args[0]) != H::Instance)
    return call.error() << call.name << " needs the context manager";
  if (call.name.ends_with("__enter__")) {
    const HeapObject &manager = in.getHeap().get(call.args[0]->object);
    frontend::AutocastRegion region;
    region.deviceType = manager.getAttribute("device_type")->name;
    region.enabled = manager.getAttribute("enabled")->boolValue;
    Var dtype = manager.getAttribute("dtype");
    MLIRContext *ctx = call.loc.getContext();
    // torch's default autocast dtypes: bf16 on the CPU, f16 elsewhere.
    region.dtype = dtype->is(K::DType)          ? dtype->type
                   : region.deviceType == "cpu" ? Type(BFloat16Type::get(ctx))
                                                : Type(Float16Type::get(ctx));
    in.pushAutocast(std::move(region));
    return makeNone();
  }
  if (!in.popAutocast())
    return call.error() << call.name << " without __enter__";
  return makeBool(false);
}

/// `torch._assert(condition, message)` (torchvision's shape checks): a condition known at
/// capture time holds or is the user's error; one on a tensor's value is not checked,
/// as a compiled graph does not check it either.
static CallResult torchAssert(Interpreter &in, ExternalCall &call) {
  if (failed(call.checkArity(2, 2)))
    return failure();
  if (call.args[0]->is(K::Tensor))
    return makeNone();
  FailureOr<bool> holds = in.truth(call.args[0], call.loc);
  if (failed(holds))
    return failure();
  if (!*holds)
    return call.error() << "assertion failed: "
                        << (call.args[1]->is(K::Str) ? call.args[1]->name : "torch._assert");
  return makeNone();
}

/// torch._check(cond, message=None) and torch._check_with(error_type, cond, message=None):
/// as torch._assert, with the message a callable that returns the text.
static CallResult torchCheck(Interpreter &in, ExternalCall &call) {
  bool with = call.name.ends_with("_check_with");
  size_t first = with ? 1 : 0;
  if (failed(call.checkArity(first + 1, first + 2)))
    return failure();
  Var condition = call.args[first];
  if (condition->is(K::Tensor))
    return makeNone();
  FailureOr<bool> holds = in.truth(condition, call.loc);
  if (failed(holds))
    return failure();
  if (*holds)
    return makeNone();
  std::string message = call.name.str();
  if (call.args.size() > first + 1 && !call.args[first + 1]->is(K::None)) {
    FailureOr<Var> text = in.call(call.args[first + 1], {}, call.loc);
    if (failed(text))
      return failure();
    if ((*text)->is(K::Str))
      message = (*text)->name;
  }
  return call.error() << "check failed: " << message;
}

/// A dtype value for `torch.<name>`.
static Var dtypeVar(Interpreter &in, llvm::StringRef name) {
  std::optional<frontend::TorchDType> known = frontend::lookupDTypeByName(name, in.getContext());
  return makeDType(known ? known->type : Type(), name);
}

/// torch.Size(sizes): a size tuple of ints.
static CallResult torchSize(Interpreter &in, ExternalCall &call) {
  if (failed(call.checkArity(0, 1)) || failed(call.checkKeywords({})))
    return failure();
  std::vector<Var> sizes;
  if (!call.args.empty()) {
    FailureOr<std::vector<Var>> items = in.unpack(call.args[0], call.loc);
    if (failed(items))
      return failure();
    for (const Var &item : *items) {
      if (!item->is(Variable::Kind::Int) && !item->is(Variable::Kind::Bool))
        return call.error() << "torch.Size() takes an iterable of 'int' (item is "
                            << describe(in.getHeap(), item) << ")";
      sizes.push_back(item->is(Variable::Kind::Bool) ? makeInt(item->boolValue, in.getContext())
                                                     : item);
    }
  }
  return makeSize(std::move(sizes));
}

/// torch.Size.numel(): the product of the sizes.
static CallResult sizeNumel(Interpreter &in, ExternalCall &call) {
  if (call.args.size() != 1 || !call.args[0]->is(Variable::Kind::Tuple))
    return call.error() << "torch.Size.numel() takes no arguments";
  AffineExpr product = getAffineConstantExpr(1, in.getContext());
  for (const Var &size : call.args[0]->items) {
    if (!size->is(Variable::Kind::Int))
      return call.error() << "torch.Size.numel() of a size that is not an int";
    product = product * size->size;
  }
  return makeInt(product);
}

/// torch.finfo(dtype) and torch.iinfo(dtype): an object of the limits of a floating
/// (bits, eps, max, min, tiny, smallest_normal, resolution, dtype) or an integer (bits,
/// max, min, dtype) dtype, computed from its element type.
static CallResult numericLimits(Interpreter &in, ExternalCall &call) {
  if (failed(call.checkArity(0, 1)))
    return failure();
  bool floating = call.name == "torch.finfo";
  Var dtype = call.args.empty() ? (floating ? dtypeVar(in, "float32") : Var()) : call.args[0];
  if (!dtype || !dtype->is(K::DType) || !dtype->type)
    return call.error() << call.name << "() needs a dtype tgc knows";
  std::optional<frontend::TorchDType> known = frontend::lookupDTypeByType(dtype->type);
  HeapObject limits;
  limits.kind = H::Instance;
  limits.classObject = makeExternal(call.name.str());
  MLIRContext *ctx = in.getContext();
  if (auto type = llvm::dyn_cast<FloatType>(dtype->type); floating && type) {
    const llvm::fltSemantics &semantics = type.getFloatSemantics();
    double max = llvm::APFloat::getLargest(semantics).convertToDouble();
    double tiny = llvm::APFloat::getSmallestNormalized(semantics).convertToDouble();
    double eps = std::ldexp(1.0, 1 - int(llvm::APFloat::semanticsPrecision(semantics)));
    limits.setAttribute("bits", makeInt(llvm::APFloat::semanticsSizeInBits(semantics), ctx));
    limits.setAttribute("eps", makeFloat(eps));
    limits.setAttribute("max", makeFloat(max));
    limits.setAttribute("min", makeFloat(-max));
    limits.setAttribute("tiny", makeFloat(tiny));
    limits.setAttribute("smallest_normal", makeFloat(tiny));
    limits.setAttribute("resolution", makeFloat(std::pow(10.0, -std::floor(-std::log10(eps)))));
  } else if (auto type = llvm::dyn_cast<IntegerType>(dtype->type);
             !floating && type && type.getWidth() > 1 && type.getWidth() <= 64) {
    unsigned bits = type.getWidth();
    bool isUnsigned = type.isUnsigned();
    int64_t max = isUnsigned ? (bits == 64 ? -1 : int64_t((uint64_t(1) << bits) - 1))
                             : int64_t((uint64_t(1) << (bits - 1)) - 1);
    if (isUnsigned && bits == 64)
      return call.error() << "torch.iinfo(torch.uint64).max is beyond int64";
    limits.setAttribute("bits", makeInt(bits, ctx));
    limits.setAttribute("max", makeInt(max, ctx));
    limits.setAttribute("min", makeInt(isUnsigned ? 0 : -max - 1, ctx));
  } else {
    return call.error() << call.name << "() of " << (known ? known->name : "a dtype")
                        << ", which is not " << (floating ? "a floating" : "an integer") << " type";
  }
  limits.setAttribute("dtype", makeStr(known ? known->name.str() : ""));
  return makeObject(in.newObject(std::move(limits)));
}

/// The Python values of `data` (a number, or nested lists/tuples of them), flattened in
/// order, with the nesting's sizes; fails on anything else.
static LogicalResult flattenData(Var data, std::vector<Var> &values, SmallVector<int64_t> &sizes,
                                 unsigned depth, Interpreter &in, Location loc) {
  std::optional<H> kind = in.getHeap().kindOf(data);
  if (data->is(K::Tuple) || kind == H::List) {
    const std::vector<Var> &items =
        data->is(K::Tuple) ? data->items : in.getHeap().get(data->object).items;
    if (sizes.size() == depth)
      sizes.push_back(items.size());
    else if (sizes[depth] != int64_t(items.size()))
      return emitError(loc) << "torch.tensor(): the nested lists are ragged";
    for (const Var &item : items)
      if (failed(flattenData(item, values, sizes, depth + 1, in, loc)))
        return failure();
    return success();
  }
  if (!data->is(K::Int) && !data->is(K::Float) && !data->is(K::Bool))
    return emitError(loc) << "torch.tensor() of " << describe(in.getHeap(), data)
                          << " is not supported (Python numbers and lists of them are)";
  if (depth != sizes.size())
    return emitError(loc) << "torch.tensor(): the nested lists are ragged";
  values.push_back(data);
  return success();
}

/// torch.as_tensor(data, dtype=None, device=None): a tensor itself (converted when the
/// dtype differs, as Tensor.to does), else torch.tensor(data, dtype=dtype).
static CallResult asTensor(Interpreter &in, ExternalCall &call) {
  if (failed(call.checkArity(1, 1)) || failed(call.checkKeywords({"dtype", "device"})))
    return failure();
  Var data = call.args[0], dtype = call.keyword("dtype");
  bool converts = dtype && !dtype->is(K::None);
  if (data->is(K::Tensor)) {
    if (!converts)
      return data;
    CallArguments cast{{data}, {{"dtype", dtype}}};
    return in.callTorchFunction("torch.Tensor.to", cast, call.loc);
  }
  CallArguments arguments{{data}, {}};
  if (converts)
    arguments.keywords.emplace_back("dtype", dtype);
  return in.call(makeExternal("torch.tensor"), std::move(arguments), call.loc);
}

/// torch.tensor(data, dtype=None, device=None, requires_grad=False) of Python values
/// known at capture time (numbers, symbolic sizes among them, and nested lists of them):
/// each value a `scalar_tensor`, stacked and shaped as the nesting. The dtype is eager's:
/// float32 when a value is a float, else int64, bool when all are bools. A tensor
/// argument is copied (`clone().detach()`), as eager does with a warning.
static CallResult torchTensor(Interpreter &in, ExternalCall &call) {
  if (failed(call.checkArity(1, 1)) ||
      failed(call.checkKeywords({"dtype", "device", "requires_grad", "pin_memory"})))
    return failure();
  Var data = call.args[0];
  Var dtype = call.keyword("dtype");
  if (data->is(K::Tensor)) {
    CallArguments clone{{data}, {}};
    FailureOr<Var> copy = in.callTorchFunction("torch.Tensor.clone", clone, call.loc);
    if (failed(copy))
      return failure();
    CallArguments detach{{*copy}, {}};
    FailureOr<Var> result = in.callTorchFunction("torch.Tensor.detach", detach, call.loc);
    if (failed(result) || !dtype || dtype->is(K::None))
      return result;
    CallArguments cast{{*result}, {{"dtype", dtype}}};
    return in.callTorchFunction("torch.Tensor.to", cast, call.loc);
  }
  std::vector<Var> values;
  SmallVector<int64_t> sizes;
  if (failed(flattenData(data, values, sizes, 0, in, call.loc)))
    return failure();
  if (!dtype || dtype->is(K::None)) {
    bool anyFloat = llvm::any_of(values, [](const Var &v) { return v->is(K::Float); });
    bool allBool =
        !values.empty() && llvm::all_of(values, [](const Var &v) { return v->is(K::Bool); });
    dtype = dtypeVar(in, anyFloat || values.empty() ? "float32" : allBool ? "bool" : "int64");
  }
  std::vector<Var> scalars;
  for (const Var &value : values) {
    CallArguments scalar{{value}, {{"dtype", dtype}}};
    FailureOr<Var> tensor = in.callTorchFunction("torch.scalar_tensor", scalar, call.loc);
    if (failed(tensor))
      return failure();
    scalars.push_back(*tensor);
  }
  if (sizes.empty())
    return scalars.front();
  if (scalars.empty()) {
    // `torch.tensor([])`: float32 zeros of the nesting's sizes ([0]).
    std::vector<Var> shape;
    for (int64_t size : sizes)
      shape.push_back(makeInt(size, in.getContext()));
    CallArguments zeros{{makeTuple(std::move(shape))}, {{"dtype", dtype}}};
    return in.callTorchFunction("torch.zeros", zeros, call.loc);
  }
  CallArguments stack{{in.makeList(std::move(scalars))}, {}};
  FailureOr<Var> flat = in.callTorchFunction("torch.stack", stack, call.loc);
  if (failed(flat) || sizes.size() == 1)
    return flat;
  std::vector<Var> shape;
  for (int64_t size : sizes)
    shape.push_back(makeInt(size, in.getContext()));
  CallArguments reshape{{*flat, makeTuple(std::move(shape))}, {}};
  return in.callTorchFunction("torch.Tensor.reshape", reshape, call.loc);
}

/// F._none_or_dtype(t) (nn.MultiheadAttention's mask checks): None, or t's dtype.
static CallResult noneOrDtype(Interpreter &in, ExternalCall &call) {
  if (failed(call.checkArity(1, 1)))
    return failure();
  if (call.args[0]->is(K::None))
    return makeNone();
  if (!call.args[0]->is(K::Tensor))
    return call.error() << "input to _none_or_dtype() must be None or torch.Tensor";
  return in.getAttribute(call.args[0], "dtype", call.loc);
}

void tgc::py::registerTorchProbes(CallRegistry &registry) {
  registry.add("torch.nn.functional._none_or_dtype", noneOrDtype);
  registry.add("torch.is_tensor", isTensor);
  registry.add("torch._assert", torchAssert);
  registry.add("torch._check", torchCheck);
  registry.add("torch.finfo", numericLimits);
  registry.add("torch.Size", torchSize);
  registry.add("torch.Size.numel", sizeNumel);
  registry.add("torch.iinfo", numericLimits);
  registry.add("torch.tensor", torchTensor);
  registry.add("torch.as_tensor", asTensor);
  registry.add("torch._check_with", torchCheck);
  // torch's API-usage logging (torchvision calls it from every constructor and op).
  registry.add("torch._C._log_api_usage_once", constant(makeNone()));
  registry.add("torch.is_grad_enabled", isGradEnabled);
  // Scripting and tracing are off; a compiler is compiling.
  // torch.jit.is_scripting is torch._jit_internal.is_scripting (its own name), and
  // torch.jit.is_tracing torch.jit._trace.is_tracing.
  for (llvm::StringRef name : {"torch.jit.is_scripting", "torch._jit_internal.is_scripting",
                               "torch.jit.is_tracing", "torch.jit._trace.is_tracing"})
    registry.add(name, constant(makeBool(false)));
  registry.add("torch._C._get_tracing_state", constant(makeNone()));
  registry.add("torch.compiler.is_compiling", constant(makeBool(true)));
  registry.add("torch._dynamo.is_compiling", constant(makeBool(true)));
  registry.add("torch.compiler.is_exporting", constant(makeBool(false)));
  // nn.MultiheadAttention's fast path (torch._native_multi_head_attention) is eager's
  // choice of kernel; a traced program takes the composite path, as make_fx and
  // torch.export do (the same values, up to rounding).
  registry.add("torch.backends.mha.get_fastpath_enabled", constant(makeBool(false)));
  // No argument overrides torch functions (__torch_function__).
  for (llvm::StringRef name :
       {"torch._C._has_torch_function", "torch._C._has_torch_function_unary",
        "torch._C._has_torch_function_variadic", "torch.overrides.has_torch_function",
        "torch.overrides.has_torch_function_unary", "torch.overrides.has_torch_function_variadic"})
    registry.add(name, constant(makeBool(false)));
  for (llvm::StringRef manager :
       {"torch.no_grad", "torch.enable_grad", "torch.set_grad_enabled", "torch.inference_mode",
        "torch.autograd.grad_mode.no_grad", "torch.autograd.grad_mode.enable_grad",
        "torch.autograd.grad_mode.set_grad_enabled", "torch.autograd.grad_mode.inference_mode"}) {
    registry.add(manager, gradModeManager);
    registry.add((manager + ".__enter__").str(), enterOrExitGradMode);
    registry.add((manager + ".__exit__").str(), enterOrExitGradMode);
  }
  for (llvm::StringRef clone : {"torch.utils._contextlib._DecoratorContextManager.clone",
                                "torch.autograd.grad_mode.set_grad_enabled.clone",
                                "torch.autograd.grad_mode.inference_mode.clone",
                                "torch.set_grad_enabled.clone", "torch.inference_mode.clone"})
    registry.add(clone, cloneGradModeManager);
  for (llvm::StringRef manager :
       {"torch.autocast", "torch.amp.autocast", "torch.amp.autocast_mode.autocast",
        "torch.cpu.amp.autocast", "torch.cpu.amp.autocast_mode.autocast", "torch.cuda.amp.autocast",
        "torch.cuda.amp.autocast_mode.autocast"}) {
    registry.add(manager, autocastManager);
    registry.add((manager + ".__enter__").str(), enterOrExitAutocast);
    registry.add((manager + ".__exit__").str(), enterOrExitAutocast);
  }
  registry.add("torch.is_autocast_enabled", isAutocastEnabled);
}
