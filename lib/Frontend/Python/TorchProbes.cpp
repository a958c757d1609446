// torch's questions about the run, answered as a compiled graph would answer them
// (`torch.is_grad_enabled()`, `torch.jit.is_scripting()`, `torch.compiler.is_compiling()`),
// and the grad-mode context managers (`with torch.no_grad():`).
#include "Interpreter.h"

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
  return makeBool(in.isGradEnabled());
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

/// The manager's `__enter__` pushes its mode, `__exit__` pops it.
static CallResult enterOrExitGradMode(Interpreter &in, ExternalCall &call) {
  if (call.args.empty() || in.getHeap().kindOf(call.args[0]) != H::Instance)
    return call.error() << call.name << " needs the context manager";
  if (call.name.ends_with("__enter__")) {
    in.pushGradMode(in.getHeap().get(call.args[0]->object).getAttribute("enabled")->boolValue);
    return makeNone();
  }
  if (!in.popGradMode())
    return call.error() << call.name << " without __enter__";
  return makeBool(false);
}

void tgc::py::registerTorchProbes(CallRegistry &registry) {
  registry.add("torch.is_tensor", isTensor);
  registry.add("torch.is_grad_enabled", isGradEnabled);
  // Scripting and tracing are off; a compiler is compiling.
  registry.add("torch.jit.is_scripting", constant(makeBool(false)));
  registry.add("torch.jit.is_tracing", constant(makeBool(false)));
  registry.add("torch._C._get_tracing_state", constant(makeNone()));
  registry.add("torch.compiler.is_compiling", constant(makeBool(true)));
  registry.add("torch._dynamo.is_compiling", constant(makeBool(true)));
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
}
