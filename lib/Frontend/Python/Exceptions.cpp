// Exceptions in the bytecode interpreter: raising (`raise`, and the errors of builtin
// operations that programs catch: KeyError, IndexError, AttributeError, StopIteration),
// unwinding the frames to the handler CPython's exception table names, and the builtin
// exception classes; contextlib's managers (suppress, contextmanager). docs/bytecode.md,
// "Exceptions".
#include "Frame.h"
#include "Interpreter.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSwitch.h"

using namespace mlir;
using namespace tgc;
using namespace tgc::py;
using K = Variable::Kind;
using H = HeapObject::Kind;

/// The builtin exception classes tgc models, each with its base (Python's hierarchy,
/// "Exception hierarchy" in the library reference), "builtins." left out.
static constexpr std::pair<const char *, const char *> kBuiltinExceptions[] = {
    {"BaseException", "object"},
    {"Exception", "BaseException"},
    {"GeneratorExit", "BaseException"},
    {"KeyboardInterrupt", "BaseException"},
    {"SystemExit", "BaseException"},
    {"ArithmeticError", "Exception"},
    {"FloatingPointError", "ArithmeticError"},
    {"OverflowError", "ArithmeticError"},
    {"ZeroDivisionError", "ArithmeticError"},
    {"AssertionError", "Exception"},
    {"AttributeError", "Exception"},
    {"BufferError", "Exception"},
    {"EOFError", "Exception"},
    {"ImportError", "Exception"},
    {"ModuleNotFoundError", "ImportError"},
    {"LookupError", "Exception"},
    {"IndexError", "LookupError"},
    {"KeyError", "LookupError"},
    {"MemoryError", "Exception"},
    {"NameError", "Exception"},
    {"UnboundLocalError", "NameError"},
    {"OSError", "Exception"},
    {"FileNotFoundError", "OSError"},
    {"PermissionError", "OSError"},
    {"TimeoutError", "OSError"},
    {"ReferenceError", "Exception"},
    {"RuntimeError", "Exception"},
    {"NotImplementedError", "RuntimeError"},
    {"RecursionError", "RuntimeError"},
    {"StopIteration", "Exception"},
    {"StopAsyncIteration", "Exception"},
    {"TypeError", "Exception"},
    {"ValueError", "Exception"},
    {"UnicodeError", "ValueError"},
    {"Warning", "Exception"},
    {"DeprecationWarning", "Warning"},
    {"FutureWarning", "Warning"},
    {"RuntimeWarning", "Warning"},
    {"UserWarning", "Warning"},
};

bool tgc::py::isBuiltinExceptionSubclass(llvm::StringRef cls, llvm::StringRef base) {
  if (!cls.consume_front("builtins.") || !base.consume_front("builtins."))
    return false;
  while (cls != base) {
    const auto *it =
        llvm::find_if(kBuiltinExceptions, [&](auto &entry) { return cls == entry.first; });
    if (it == std::end(kBuiltinExceptions))
      return false;
    cls = it->second;
  }
  return true;
}

//===----------------------------------------------------------------------===//
// Raising and unwinding
//===----------------------------------------------------------------------===//

/// The exception table entry that handles an exception raised by the instruction at
/// code unit `index`, or null. CPython's entries do not overlap: the innermost `try`
/// splits the ranges of those around it.
static const ExceptionEntry *findHandler(const DecodedCode &code, unsigned index) {
  for (const ExceptionEntry &entry : code.exceptionTable)
    if (index >= entry.start && index < entry.end)
      return &entry;
  return nullptr;
}

/// The class name Python prints for `exception`'s class ("ValueError").
static std::string exceptionClassName(const Heap &heap, const Var &cls) {
  if (cls->is(K::External))
    return llvm::StringRef(cls->name).rsplit('.').second.str();
  if (heap.kindOf(cls) == H::Class)
    return heap.get(cls->object).name;
  return "exception";
}

std::string tgc::py::exceptionText(const Heap &heap, const Var &exception, Location loc) {
  Var args = heap.kindOf(exception) == H::Instance
                 ? heap.get(exception->object).getAttribute("args")
                 : Var();
  if (!args || !args->is(K::Tuple) || args->items.empty())
    return "";
  // str(e): its one argument as str() prints it, else the tuple of them as repr() does.
  ScopedDiagnosticHandler quiet(loc->getContext(), [](Diagnostic &) { return success(); });
  FailureOr<std::string> text = args->items.size() == 1
                                    ? formatPythonValue(args->items.front(), "", 1, loc)
                                    : formatPythonValue(args, "", 2, loc);
  return succeeded(text) ? *text : "...";
}

Var Interpreter::newException(Var cls, std::vector<Var> args) {
  HeapObject instance;
  instance.kind = H::Instance;
  instance.classObject = std::move(cls);
  instance.setAttribute("args", makeTuple(std::move(args)));
  instance.setAttribute("__cause__", makeNone());
  instance.setAttribute("__context__", makeNone());
  return makeObject(newObject(std::move(instance)));
}

std::pair<Location, std::string> Interpreter::raisedAt(const Var &exception, Location fallback) {
  if (exception->is(K::Object))
    if (auto it = raiseSites.find(exception->object); it != raiseSites.end())
      return it->second;
  std::string text = exceptionText(heap, exception, fallback);
  FailureOr<Var> cls = getClassOf(exception);
  std::string name = succeeded(cls) ? exceptionClassName(heap, *cls) : "exception";
  return {fallback, "the program raises " + name + (text.empty() ? "" : ": " + text) +
                        " and does not catch it (tgc captures programs that do not raise, "
                        "or that catch what they raise)"};
}

LogicalResult Interpreter::raiseException(Var exception, Location loc, const llvm::Twine &message) {
  if (exception->is(K::Object))
    raiseSites.try_emplace(exception->object, loc, message.str());
  // Only frames above the innermost region being traced (a cond branch, an
  // autograd.Function's forward) may catch it: the ops of a handler below would land in
  // the region.
  for (size_t i = activeFrames.size(); i > handlerFloor; --i) {
    const Frame &frame = *activeFrames[i - 1];
    if (findHandler(*frame.code, frame.code->instructions[frame.current].index)) {
      pendingException = exception;
      return failure();
    }
  }
  auto [site, text] = raisedAt(exception, loc);
  emitError(site) << text;
  return failure();
}

LogicalResult Interpreter::raiseException(Var exception, Location loc) {
  auto [site, message] = raisedAt(exception, loc);
  return raiseException(exception, site, message);
}

LogicalResult Interpreter::raiseBuiltinException(llvm::StringRef className, std::vector<Var> args,
                                                 Location loc, const llvm::Twine &message) {
  return raiseException(newException(makeExternal(className), std::move(args)), loc, message);
}

LogicalResult Interpreter::unwindTo(Frame &frame) {
  const py::Instruction &instruction = frame.code->instructions[frame.current];
  const ExceptionEntry *entry = findHandler(*frame.code, instruction.index);
  if (!entry)
    return failure();
  if (frame.stack.size() < entry->depth)
    return error(locationOf(frame, instruction))
           << "malformed bytecode: an exception handler expects " << entry->depth
           << " values on the stack, which holds " << frame.stack.size();
  int position = frame.code->positionAt(entry->target);
  if (position < 0)
    return error(locationOf(frame, instruction))
           << "malformed bytecode: an exception handler starts inside an instruction";
  frame.stack.resize(entry->depth);
  if (entry->pushLasti)
    frame.push(makeInt(instruction.index, ctx));
  frame.push(pendingException);
  pendingException = nullptr;
  frame.position = position;
  return success();
}

//===----------------------------------------------------------------------===//
// The builtin exception classes
//===----------------------------------------------------------------------===//

/// `ValueError(*args)`: a new exception of the class.
static CallResult constructException(Interpreter &in, ExternalCall &call) {
  if (!call.arguments.keywords.empty())
    return call.error() << call.name << "() takes no keyword arguments";
  return in.newException(makeExternal(call.name), call.args);
}

/// `ValueError.__init__(self, *args)`, as a user subclass's `super().__init__(...)`
/// calls it: sets `self.args`.
static CallResult initException(Interpreter &in, ExternalCall &call) {
  if (call.args.empty() || !call.arguments.keywords.empty())
    return call.error() << call.name << "() takes the exception and positional arguments";
  std::vector<Var> args(call.args.begin() + 1, call.args.end());
  if (failed(
          in.setInstanceAttribute(call.args.front(), "args", makeTuple(std::move(args)), call.loc)))
    return failure();
  return makeNone();
}

/// `ValueError.with_traceback(tb)`: the exception itself (tgc keeps no tracebacks).
static CallResult withTraceback(Interpreter &, ExternalCall &call) {
  if (call.args.size() != 2)
    return call.error() << "with_traceback() takes one argument";
  return call.args.front();
}

/// `contextlib.suppress(*exceptions)`: a manager whose `__exit__` swallows exceptions of
/// those classes.
static CallResult suppress(Interpreter &in, ExternalCall &call) {
  if (!call.arguments.keywords.empty())
    return call.error() << "contextlib.suppress() takes no keyword arguments";
  for (const Var &cls : call.args)
    if (!in.isExceptionClass(cls))
      return call.error() << "contextlib.suppress() of " << describe(in.getHeap(), cls)
                          << ", which is not an exception class";
  HeapObject manager;
  manager.kind = H::Instance;
  manager.classObject = makeExternal(call.name);
  manager.setAttribute("_exceptions", makeTuple(call.args));
  return makeObject(in.newObject(std::move(manager)));
}

static CallResult suppressEnterOrExit(Interpreter &in, ExternalCall &call) {
  if (call.args.empty() || in.getHeap().kindOf(call.args[0]) != H::Instance)
    return call.error() << call.name << " needs the context manager";
  if (call.name.ends_with("__enter__"))
    return makeNone();
  if (call.args.size() != 4)
    return call.error() << call.name << " takes the exception's type, value and traceback";
  if (call.args[1]->is(K::None))
    return makeBool(false);
  Var classes = in.getHeap().get(call.args[0]->object).getAttribute("_exceptions");
  return in.call(makeExternal("builtins.issubclass"), CallArguments{{call.args[1], classes}, {}},
                 call.loc);
}

//===----------------------------------------------------------------------===//
// contextlib.contextmanager
//===----------------------------------------------------------------------===//

static constexpr llvm::StringLiteral kGeneratorManager = "contextlib._GeneratorContextManager";

/// A _GeneratorContextManager of `func` called with `args` (a tuple) and `kwds` (a dict).
static Var newGeneratorManager(Interpreter &in, Var func, Var args, Var kwds) {
  HeapObject manager;
  manager.kind = H::Instance;
  manager.classObject = makeExternal(kGeneratorManager);
  manager.attributes = {{"func", func}, {"args", args}, {"kwds", kwds}};
  return makeObject(in.newObject(std::move(manager)));
}

/// `contextlib.contextmanager(func)`: a callable whose calls make the managers of func's
/// generator.
static CallResult contextManager(Interpreter &in, ExternalCall &call) {
  if (failed(call.checkArity(1, 1)) || failed(call.checkKeywords({})))
    return failure();
  HeapObject factory;
  factory.kind = H::Instance;
  factory.classObject = makeExternal(call.name);
  factory.setAttribute("func", call.args[0]);
  return makeObject(in.newObject(std::move(factory)));
}

static CallResult contextManagerCall(Interpreter &in, ExternalCall &call) {
  if (call.args.empty() || in.getHeap().kindOf(call.args[0]) != H::Instance)
    return call.error() << call.name << " needs the decorated function";
  Var func = in.getHeap().get(call.args[0]->object).getAttribute("func");
  if (!func)
    return call.error() << "a contextlib.contextmanager without its function";
  HeapObject kwds;
  kwds.kind = H::Dict;
  for (const auto &[key, value] : call.arguments.keywords)
    kwds.entries.emplace_back(makeStr(key), value);
  return newGeneratorManager(in, func,
                             makeTuple(std::vector<Var>(call.args.begin() + 1, call.args.end())),
                             makeObject(in.newObject(std::move(kwds))));
}

/// _GeneratorContextManager(func, args, kwds), which contextlib's own wrapper makes for a
/// function decorated outside the program.
static CallResult generatorManagerNew(Interpreter &in, ExternalCall &call) {
  if (call.args.size() != 3 || !call.arguments.keywords.empty())
    return call.error() << kGeneratorManager << "() takes func, args and kwds";
  return newGeneratorManager(in, call.args[0], call.args[1], call.args[2]);
}

/// `__enter__` runs the generator to its `yield` and returns the value; `__exit__`
/// without an exception runs it on to its end (RuntimeError if it yields again). An
/// exception leaving the block would be thrown into the generator, which tgc does not
/// do: that is an error.
static CallResult generatorManagerEnterOrExit(Interpreter &in, ExternalCall &call) {
  if (call.args.empty() || in.getHeap().kindOf(call.args[0]) != H::Instance)
    return call.error() << call.name << " needs the context manager";
  ObjectId self = call.args[0]->object;
  if (call.name.ends_with("__enter__")) {
    const HeapObject &manager = in.getHeap().get(self);
    Var func = manager.getAttribute("func"), args = manager.getAttribute("args"),
        kwds = manager.getAttribute("kwds");
    if (!func || !args || !args->is(K::Tuple) || in.getHeap().kindOf(kwds) != H::Dict)
      return call.error() << "a context manager whose generator tgc does not know";
    CallArguments arguments{args->items, {}};
    for (const auto &[key, value] : in.getHeap().get(kwds->object).entries) {
      if (!key->is(K::Str))
        return call.error() << "a keyword that is not a string";
      arguments.keywords.emplace_back(key->name, value);
    }
    return in.startGenerator(self, func, std::move(arguments), call.loc);
  }
  if (call.args.size() != 4)
    return call.error() << call.name << " takes the exception's type, value and traceback";
  if (!call.args[1]->is(K::None))
    return call.error() << "an exception leaving the block of a contextlib.contextmanager is "
                           "not supported (tgc does not throw it into the generator)";
  FailureOr<bool> finished = in.resumeGenerator(self, call.loc);
  if (failed(finished))
    return failure();
  if (!*finished)
    return in.raiseBuiltinException("builtins.RuntimeError", {makeStr("generator didn't stop")},
                                    call.loc, "generator didn't stop (RuntimeError)");
  return makeBool(false);
}

void tgc::py::registerExceptions(CallRegistry &registry) {
  registry.add("contextlib.contextmanager", contextManager);
  registry.add("contextlib.contextmanager.__call__", contextManagerCall);
  registry.add(kGeneratorManager, generatorManagerNew);
  registry.add((kGeneratorManager + ".__enter__").str(), generatorManagerEnterOrExit);
  registry.add((kGeneratorManager + ".__exit__").str(), generatorManagerEnterOrExit);
  registry.add("contextlib.suppress", suppress);
  registry.add("contextlib.suppress.__enter__", suppressEnterOrExit);
  registry.add("contextlib.suppress.__exit__", suppressEnterOrExit);
  for (const auto &[name, base] : kBuiltinExceptions) {
    std::string qualified = std::string("builtins.") + name;
    registry.add(qualified, constructException);
    registry.add(qualified + ".__init__", initException);
    registry.add(qualified + ".with_traceback", withTraceback);
  }
}
