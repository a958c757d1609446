// The interpreter's call registry: names and prefixes resolve to their handlers, a name
// registered twice is caught, and a call goes to its handler, then (declined) to the
// schema-bound torch functions, then is a graph break.
#include "InterpreterFixture.h"

#include "Frontend/Python/CallRegistry.h"
#include "Frontend/Python/Interpreter.h"

#include <catch2/catch.hpp>

using namespace mlir;
using namespace tgc;
using namespace tgc::py;

namespace {

/// A handler that returns the string `tag`, to tell handlers apart.
CallHandler returning(llvm::StringRef tag) {
  std::string text = tag.str();
  return [text](Interpreter &, ExternalCall &) -> CallResult { return makeStr(text); };
}

/// What `registry` calls for `name`: the tag of its handler, or "" for none.
std::string resolve(const CallRegistry &registry, llvm::StringRef name,
                    InterpreterFixture &fixture) {
  const CallHandler *handler = registry.lookup(name);
  if (!handler)
    return "";
  CallArguments arguments;
  ExternalCall call(name, arguments, fixture.loc());
  CallResult result = (*handler)(fixture.interpreter, call);
  REQUIRE_FALSE(result.isDeclined());
  FailureOr<Var> value = result.takeResult();
  REQUIRE(succeeded(value));
  return (*value)->name;
}

} // namespace

TEST_CASE("A registered name resolves to its handler and other names to none", "[interp]") {
  InterpreterFixture fixture;
  CallRegistry registry;
  registry.add("builtins.len", returning("len"));
  registry.add("builtins.list.append", returning("append"));
  CHECK(resolve(registry, "builtins.len", fixture) == "len");
  CHECK(resolve(registry, "builtins.list.append", fixture) == "append");
  CHECK(resolve(registry, "builtins.list", fixture).empty());
  CHECK(resolve(registry, "builtins.len.x", fixture).empty());
  CHECK(registry.size() == 2);
}

TEST_CASE("A prefix catches its family's names that have no handler, the longest first",
          "[interp]") {
  InterpreterFixture fixture;
  CallRegistry registry;
  registry.addPrefix("math.", returning("math"));
  registry.addPrefix("torch.", returning("torch"));
  registry.addPrefix("torch.autograd.", returning("autograd"));
  registry.add("torch.autograd.grad", returning("grad"));
  CHECK(resolve(registry, "math.gamma", fixture) == "math");
  CHECK(resolve(registry, "torch.autograd.grad", fixture) == "grad");
  CHECK(resolve(registry, "torch.autograd.backward", fixture) == "autograd");
  CHECK(resolve(registry, "torch.relu", fixture) == "torch");
  CHECK(resolve(registry, "mathematics", fixture).empty());
  CHECK(resolve(registry, "builtins.math.x", fixture).empty());
}

TEST_CASE("A name or prefix registered twice keeps its first handler and is listed", "[interp]") {
  InterpreterFixture fixture;
  CallRegistry registry;
  registry.add("builtins.sum", returning("first"));
  registry.add("builtins.sum", returning("second"));
  registry.addPrefix("math.", returning("first"));
  registry.addPrefix("math.", returning("second"));
  registry.add("math.", returning("name"));
  CHECK(resolve(registry, "builtins.sum", fixture) == "first");
  CHECK(resolve(registry, "math.sin", fixture) == "first");
  CHECK(registry.getDuplicates() == llvm::ArrayRef<std::string>{"builtins.sum", "math."});
}

TEST_CASE("The interpreter's registry has every family and no name twice", "[interp]") {
  const CallRegistry &registry = getCallRegistry();
  CHECK(registry.getDuplicates().empty());
  for (llvm::StringRef name : {"builtins.sum",
                               "builtins.isinstance",
                               "builtins.range",
                               "builtins.str.join",
                               "builtins.str.format",
                               "math.sqrt",
                               "math.gamma",
                               "operator.getitem",
                               "builtins.list.append",
                               "builtins.dict.setdefault",
                               "builtins.set.add",
                               "torch.nn.Module.children",
                               "torch.nn.Module.named_parameters",
                               "builtins.KeyError",
                               "builtins.ValueError.__init__",
                               "contextlib.suppress.__exit__",
                               "torch.Tensor.size",
                               "torch.argmax",
                               "torch.is_grad_enabled",
                               "torch.no_grad.__enter__",
                               "torch.cond",
                               "torch.autograd.Function.apply",
                               "torch.autograd.function.FunctionCtx.mark_dirty",
                               "torch.autograd.graph.saved_tensors_hooks.__exit__"}) {
    INFO(name.str());
    CHECK(registry.lookup(name));
  }
  // Schema-bound torch calls have no handler: callTorchFunction is the fallback.
  for (llvm::StringRef name : {"torch.relu", "torch.Tensor.add", "operator.neg"}) {
    INFO(name.str());
    CHECK_FALSE(registry.lookup(name));
  }
}

TEST_CASE("A call result is a value, a failure or declined", "[interp]") {
  CallResult value(makeNone());
  CHECK_FALSE(value.isDeclined());
  CHECK(succeeded(value.takeResult()));
  CallResult failed(failure());
  CHECK_FALSE(failed.isDeclined());
  CHECK(mlir::failed(failed.takeResult()));
  CHECK(CallResult::declined().isDeclined());
}

TEST_CASE("A builtin runs its handler, and a declined call goes on to the torch function",
          "[interp]") {
  InterpreterFixture fixture;
  Interpreter &interpreter = fixture.interpreter;
  // len((1, 2, 3)) by its handler.
  Var tuple =
      makeTuple({makeInt(1, &fixture.ctx), makeInt(2, &fixture.ctx), makeInt(3, &fixture.ctx)});
  FailureOr<Var> length =
      interpreter.call(makeExternal("builtins.len"), CallArguments{{tuple}, {}}, fixture.loc());
  REQUIRE(succeeded(length));
  CHECK((*length)->getConstantInt() == 3);
  // abs(x) of a tensor: the handler declines, the table's builtins.abs is aten.abs.
  FailureOr<Var> absolute = interpreter.call(makeExternal("builtins.abs"),
                                             CallArguments{{fixture.tensor()}, {}}, fixture.loc());
  REQUIRE(succeeded(absolute));
  REQUIRE((*absolute)->is(Variable::Kind::Tensor));
  Value result = interpreter.getHeap().get((*absolute)->object).tensor;
  REQUIRE(result.getDefiningOp());
  CHECK(result.getDefiningOp()->getName().getStringRef() == "tgc.abs");
  CHECK(fixture.diagnostics.empty());
}

TEST_CASE("A call nothing handles is a graph break naming it, and a handler reports its own errors",
          "[interp]") {
  InterpreterFixture fixture;
  Interpreter &interpreter = fixture.interpreter;
  // min() of tensors: declined, and no torch function is builtins.min.
  Var x = fixture.tensor();
  CHECK(failed(
      interpreter.call(makeExternal("builtins.min"), CallArguments{{x, x}, {}}, fixture.loc())));
  CHECK(failed(interpreter.call(makeExternal("itertools.tee"), {}, fixture.loc())));
  // A str method tgc does not model, on a string: the family's prefix handler.
  CHECK(failed(interpreter.call(makeExternal("builtins.str.swapcase"),
                                CallArguments{{makeStr("aB")}, {}}, fixture.loc())));
  // A modelled one reports its own error: format's field without an argument.
  CHECK(failed(interpreter.call(makeExternal("builtins.str.format"),
                                CallArguments{{makeStr("{}")}, {}}, fixture.loc())));
  CHECK(failed(
      interpreter.call(makeExternal("builtins.len"), CallArguments{{x, x}, {}}, fixture.loc())));
  CHECK(fixture.diagnostics ==
        std::vector<std::string>{"graph break: calling builtins.min is not supported",
                                 "graph break: calling itertools.tee is not supported",
                                 "str.swapcase() with these arguments is not supported",
                                 "str.format(): replacement index 0 out of range (IndexError)",
                                 "builtins.len() takes 1 to 1 arguments, got 2"});
}

TEST_CASE("Every registered callable called with too few or too many arguments fails cleanly",
          "[interp]") {
  // Programs call builtins and methods with any number of arguments; a handler must check
  // what it reads and report an error (or decline), never read past the arguments.
  std::vector<std::string> names = getCallRegistry().getNames();
  REQUIRE(names.size() > 100);
  for (const std::string &name : names) {
    for (size_t count : {0, 1, 2, 3, 6}) {
      for (llvm::StringRef kind : {"None", "tensor", "str"}) {
        INFO(name << " with " << count << " arguments, each a " << kind.str());
        InterpreterFixture fixture;
        CallArguments arguments;
        for (size_t i = 0; i < count; ++i)
          arguments.positional.push_back(kind == "tensor" ? fixture.tensor()
                                         : kind == "str"  ? makeStr("x")
                                                          : makeNone());
        FailureOr<Var> result =
            fixture.interpreter.call(makeExternal(name), std::move(arguments), fixture.loc());
        // A failure names its reason.
        if (failed(result))
          CHECK_FALSE(fixture.diagnostics.empty());
      }
    }
  }
}

TEST_CASE("Builtin exception classes follow Python's hierarchy", "[interp]") {
  CHECK(isBuiltinExceptionSubclass("builtins.KeyError", "builtins.KeyError"));
  CHECK(isBuiltinExceptionSubclass("builtins.KeyError", "builtins.LookupError"));
  CHECK(isBuiltinExceptionSubclass("builtins.IndexError", "builtins.Exception"));
  CHECK(isBuiltinExceptionSubclass("builtins.NotImplementedError", "builtins.RuntimeError"));
  CHECK(isBuiltinExceptionSubclass("builtins.ZeroDivisionError", "builtins.ArithmeticError"));
  CHECK(isBuiltinExceptionSubclass("builtins.KeyboardInterrupt", "builtins.BaseException"));
  CHECK(isBuiltinExceptionSubclass("builtins.ModuleNotFoundError", "builtins.ImportError"));
  // Siblings, the other direction, and classes that are not exceptions.
  CHECK_FALSE(isBuiltinExceptionSubclass("builtins.ValueError", "builtins.LookupError"));
  CHECK_FALSE(isBuiltinExceptionSubclass("builtins.Exception", "builtins.KeyError"));
  CHECK_FALSE(isBuiltinExceptionSubclass("builtins.KeyboardInterrupt", "builtins.Exception"));
  CHECK_FALSE(isBuiltinExceptionSubclass("builtins.int", "builtins.BaseException"));
  CHECK_FALSE(isBuiltinExceptionSubclass("torch.KeyError", "builtins.KeyError"));
}
