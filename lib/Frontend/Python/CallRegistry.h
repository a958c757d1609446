// Calls of external callables (builtins, container and string methods, torch's probes and
// nn.Module methods) dispatched by qualified name to registered handlers.
#ifndef TGC_LIB_FRONTEND_PYTHON_CALLREGISTRY_H
#define TGC_LIB_FRONTEND_PYTHON_CALLREGISTRY_H

#include "Variables.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/StringMap.h"
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace tgc::py {

class Interpreter;

/// Positional and keyword arguments of a call.
struct CallArguments {
  std::vector<Var> positional;
  std::vector<std::pair<std::string, Var>> keywords;
};

/// A call of an external callable, as its handler sees it.
struct ExternalCall {
  ExternalCall(llvm::StringRef name, CallArguments &arguments, mlir::Location loc)
      : name(name), arguments(arguments), args(arguments.positional), loc(loc) {}

  /// The qualified name called (`builtins.len`): a handler registered under several names
  /// or under a prefix tells them apart by it.
  llvm::StringRef name;
  CallArguments &arguments;
  /// The positional arguments (`arguments.positional`), which most handlers read.
  std::vector<Var> &args;
  /// Where the call is: errors point there.
  mlir::Location loc;

  mlir::InFlightDiagnostic error() const { return mlir::emitError(loc); }
  /// Fails, naming the expected count, unless there are `min` to `max` positional
  /// arguments.
  mlir::LogicalResult checkArity(size_t min, size_t max) const;
  /// Fails, naming it, when a keyword argument is not one of `allowed`.
  mlir::LogicalResult checkKeywords(std::initializer_list<llvm::StringRef> allowed) const;
  /// The keyword argument `name`, or null.
  Var keyword(llvm::StringRef name) const;
};

/// What a call handler did: a value, a failure (already diagnosed), or `declined()` when
/// the arguments are not ones the handler models (`min` of tensors, a list method on a
/// dict), so that the call goes on to the schema-bound torch functions
/// (`callTorchFunction`) and, failing those, is a graph break. Converts implicitly from
/// what handlers return: a Var, a FailureOr<Var>, `failure()` and an error diagnostic.
class CallResult {
public:
  CallResult(Var value) : result(mlir::FailureOr<Var>(std::move(value))) {}
  CallResult(mlir::FailureOr<Var> value) : result(std::move(value)) {}
  /// `failure()`: a handler's callee already reported the error.
  CallResult(mlir::LogicalResult failure) : result(mlir::FailureOr<Var>(failure)) {}
  /// `return call.error() << ...;`: the diagnostic is reported as the temporary dies.
  CallResult(mlir::InFlightDiagnostic &&) : result(mlir::FailureOr<Var>(mlir::failure())) {}

  /// The call is not the handler's.
  static CallResult declined() { return CallResult(); }
  bool isDeclined() const { return !result.has_value(); }
  /// The value or failure of a call that was not declined.
  mlir::FailureOr<Var> takeResult() { return std::move(*result); }

private:
  CallResult() = default;
  std::optional<mlir::FailureOr<Var>> result;
};

/// A handler of external calls. Handlers are free functions over the Interpreter's
/// object-model API (the public section of Interpreter.h), so that adding a builtin takes
/// one function and one registration.
using CallHandler = std::function<CallResult(Interpreter &interpreter, ExternalCall &call)>;

/// External callables by qualified name, filled by the `registerX` functions below, each
/// beside its handlers.
class CallRegistry {
public:
  /// Registers `handler` for calls of `name`. A name registered twice keeps its first
  /// handler and is listed by getDuplicates() (a bug, which the unit tests catch).
  void add(llvm::StringRef name, CallHandler handler);
  /// Registers `handler` for the names that start with `prefix` and have no handler of
  /// their own: a family's fallback (`builtins.str.` for the str methods tgc does not
  /// model), which may decline or name what is not supported.
  void addPrefix(llvm::StringRef prefix, CallHandler handler);

  /// The handler of `name`: its own, else that of the longest registered prefix of it;
  /// null when there is none.
  const CallHandler *lookup(llvm::StringRef name) const;
  /// The names (and prefixes) that were registered more than once.
  llvm::ArrayRef<std::string> getDuplicates() const { return duplicates; }
  /// The names with a handler of their own, sorted (prefixes are not listed).
  std::vector<std::string> getNames() const;
  /// How many names and prefixes have handlers.
  size_t size() const { return handlers.size() + prefixes.size(); }

private:
  llvm::StringMap<CallHandler> handlers;
  llvm::StringMap<CallHandler> prefixes;
  std::vector<std::string> duplicates;
};

/// The interpreter's registry: every registerX function below applied once.
const CallRegistry &getCallRegistry();

/// `builtins.*` functions and types (Builtins.cpp, BuiltinTypes.cpp).
void registerBuiltins(CallRegistry &registry);
void registerBuiltinTypes(CallRegistry &registry);
/// Methods of constant strings, `builtins.str.*` (StringMethods.cpp).
void registerStringMethods(CallRegistry &registry);
/// Whether `name` is a str method registerStringMethods models (`s.split` binds it).
bool isStringMethod(llvm::StringRef name);
/// `math.*` on constant numbers and `operator.*` on non-tensors (MathAndOperator.cpp).
void registerMathAndOperator(CallRegistry &registry);
/// `builtins.list.*`, `builtins.dict.*`, `builtins.set.*` (ContainerMethods.cpp).
void registerContainerMethods(CallRegistry &registry);
/// collections.deque / OrderedDict / defaultdict, functools.partial / reduce and the
/// basic itertools (Collections.cpp).
void registerCollections(CallRegistry &registry);
/// The builtin exception classes: construction, `__init__` (Exceptions.cpp).
void registerExceptions(CallRegistry &registry);
/// Methods of torch.nn.Module the interpreter models (ModuleMethods.cpp).
void registerModuleMethods(CallRegistry &registry);
/// Tensor methods that read metadata or leave the graph, and reductions with indices
/// (TensorMethods.cpp).
void registerTensorMethods(CallRegistry &registry);
/// torch's questions about the run (`torch.is_grad_enabled`, `torch.jit.is_scripting`)
/// and the grad-mode context managers (TorchProbes.cpp).
void registerTorchProbes(CallRegistry &registry);
/// `torch.cond` (Cond.cpp).
void registerCond(CallRegistry &registry);
/// `torch.autograd.Function.apply` and the methods of its `ctx` (AutogradFunction.cpp).
void registerAutogradFunction(CallRegistry &registry);
/// `torch.autograd.graph.saved_tensors_hooks` (SavedTensorsHooks.cpp).
void registerSavedTensorsHooks(CallRegistry &registry);

} // namespace tgc::py

#endif // TGC_LIB_FRONTEND_PYTHON_CALLREGISTRY_H
