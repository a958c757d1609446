// The symbolic interpreter of CPython 3.11 to 3.13 bytecode: runs a captured program over
// variable trackers, emitting tgc ops for tensor work and recording Python side effects.
#ifndef TGC_LIB_FRONTEND_PYTHON_INTERPRETER_H
#define TGC_LIB_FRONTEND_PYTHON_INTERPRETER_H

#include "CallRegistry.h"
#include "Frontend/Common/AtenCall.h"
#include "Frontend/Common/Autocast.h"
#include "ObjectTable.h"
#include "TorchFunctions.h"
#include "Variables.h"

#include "tgc/Dialect/TgcDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Location.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringSet.h"
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <tuple>

namespace tgc::py {

/// Whether builtin exception class `cls` ("builtins.KeyError") is `base` or a subclass
/// of it (Python's exception hierarchy; Exceptions.cpp).
bool isBuiltinExceptionSubclass(llvm::StringRef cls, llvm::StringRef base);
/// `str(exception)` of an exception instance: its one argument, or its arguments' tuple.
std::string exceptionText(const Heap &heap, const Var &exception, mlir::Location loc);

/// `format(value, spec)` of a constant (str, int, float, bool, None, dtype, tuple) after
/// the conversion `conversion` (0 none, 1 str, 2 repr, 3 ascii), with Python's
/// format-spec mini-language (f-strings, str.format).
mlir::FailureOr<std::string> formatPythonValue(const Var &value, llvm::StringRef spec,
                                               int conversion, mlir::Location loc);

using frontend::AtenArgument;
using frontend::AtenCallBuilder;
using frontend::AtenValue;

struct Frame;
struct ExecutionStep;
struct AutogradTrace;

/// A Python side effect the program performed on an object that outlives it, in
/// program order. The replay list is made of these (docs/bytecode.md). `Resize`: a
/// tensor's storage was replaced by a value of other sizes (`fn(..., out=t)` resizing
/// `t`); its final value is the object's tensor. `RegisterHook`: `t.register_hook(value)`
/// on a tensor that existed before the call, with a hook that changes Python state: the
/// hook runs in Python during backward (`name` numbers the registrations).
struct SideEffect {
  enum class Kind {
    SetAttribute,
    DeleteAttribute,
    SetContents,
    SetCell,
    SetGlobal,
    Resize,
    RegisterHook,
    /// A gradient hook that changes Python state on a tensor the program computes
    /// (`name`: its number, `value`: the hook), run by the caller at a graph break; or
    /// a submodule call's backward hooks (`value`: the module, whose live hooks the
    /// caller runs at the `tgc.break_module_hook` steps of that number).
    GradHook
  };
  Kind kind;
  ObjectId object;
  std::string name;
  Var value;
  mlir::Location loc;
};

/// A Python value the program read from an object that existed before the call, which
/// the compiled graph assumes (docs/guards.md): the guard list is made of these.
struct GuardRead {
  enum class Step {
    Attribute,    ///< `name` of an instance, function or module (`.name`)
    ClassEntry,   ///< `name` of a class's dict (`.__dict__['name']`)
    Global,       ///< `name` of a module namespace (`['name']`)
    Cell,         ///< a cell's contents (`.cell_contents`)
    Item,         ///< item `key` of a list or dict (`[key]`)
    Length,       ///< the length of a list, set or dict: `value` is an Int
    Keys,         ///< the keys of a dict, in order: `value` is a tuple
    HasAttribute, ///< whether `name` is an attribute (hasattr, getattr with a default):
                  ///< `value` is a Bool
  };
  Step step;
  ObjectId object;
  std::string name;
  Var key;
  Var value;
  mlir::Location loc;
};

/// The range of a size symbol (a `--dynamic` dimension): min and max (none: unbounded).
struct SymbolRange {
  int64_t min = 0;
  std::optional<int64_t> max;
};

/// The outcomes of the data-dependent branches one run of the interpreter follows
/// (`tgc compile --allow-graph-breaks`, docs/graph-breaks.md). A run takes
/// `decisions[i]` at its i-th branch on a tensor's value; past the end it takes `true`
/// and appends the outcome, so the caller can enumerate every path.
struct GraphBreakPath {
  std::vector<bool> decisions;
  size_t next = 0;
  /// The most branches on tensor values one path may take (a `while` on a tensor
  /// would otherwise never end).
  size_t maxBranches = 16;
};

/// The interpreter: one per captured program. Tensors of the trace become graph values
/// through `TensorSource` (the reader decides which are inputs, parameters, constants).
///
/// Its public API has two parts: what the readers use (Frontend/Trace), and the Python
/// object model that the registered call handlers (CallRegistry.h) and opcode handlers
/// (Frame.h) are written against (docs/bytecode.md, "Handlers"). Frames, trace objects
/// and the bookkeeping behind side effects, guards and scopes stay private.
class Interpreter {
public:
  /// Supplies the SSA value of trace tensor `id` (an entry argument or a global).
  using TensorSource = std::function<mlir::FailureOr<mlir::Value>(int64_t id, const Json &object)>;

  Interpreter(const ObjectTable &objects, mlir::OpBuilder &builder, TensorSource tensorSource);
  ~Interpreter();

  //===--------------------------------------------------------------------===//
  // What the readers use
  //===--------------------------------------------------------------------===//

  /// The tracker of a trace value (an immediate or `{"ref": N}`), and of a list of them.
  mlir::FailureOr<Var> readValue(const Json &value);
  mlir::FailureOr<std::vector<Var>> readValues(const Json &values);

  /// Calls `callable` symbolically; `loc` is where the call is (errors point there).
  mlir::FailureOr<Var> call(Var callable, CallArguments arguments, mlir::Location loc);

  /// The modules an `import` in the program may import: the trace header's `modules`
  /// (name -> value), read when first imported.
  void setImportableModules(Json modules) { importableModules = std::move(modules); }
  /// torch.Tensor's attribute names (the trace header's `tensor_attributes`), which
  /// hasattr and getattr with a default on a tensor answer from.
  void setTensorAttributes(const std::vector<std::string> &names) {
    tensorAttributes.emplace();
    tensorAttributes->insert(names.begin(), names.end());
  }
  bool hasTensorAttributeList() const { return tensorAttributes.has_value(); }
  /// The ATen overloads of Tensor methods (the trace header's `tensor_methods`: name ->
  /// [[target, schema]...]), which bind method calls tgc's table has no entry for.
  mlir::LogicalResult setTensorMethodOverloads(const Json &methods, mlir::Location loc);
  bool isTensorAttribute(llvm::StringRef name) const {
    return tensorAttributes && tensorAttributes->contains(name);
  }

  /// The ranges of the size symbols, by symbol index: comparisons of sizes are decided
  /// over them.
  void setSymbolRanges(std::vector<SymbolRange> ranges) { symbolRanges = std::move(ranges); }

  /// The trace's entry callable: when it is an nn.Module, its own full backward hooks
  /// and backward pre-hooks are not compiled; tgc.load runs them around each call, as
  /// nn.Module.__call__ does (docs/replay.md).
  void setEntry(Var callable) { entryCallable = std::move(callable); }

  /// Makes graph breaks (a branch on a tensor's value, `print`) markers in the graph
  /// (`tgc.break_branch`, `tgc.break_call`) instead of errors, where they happen in
  /// `mainBlock` (not inside a template or a speculated `torch.cond` branch); branches
  /// follow `path`.
  /// Whether the program is compiled with a backward; without one, submodule backward
  /// hooks never run and are ignored.
  void setTraining(bool on) { training = on; }
  void enableGraphBreaks(GraphBreakPath *path, mlir::Block *mainBlock) {
    breakPath = path;
    breakBlock = mainBlock;
  }

  /// The side effects recorded so far, in program order.
  llvm::ArrayRef<SideEffect> getSideEffects() const { return sideEffects; }
  const Heap &getHeap() const { return heap; }
  /// The reads of pre-existing Python state recorded so far, in program order
  /// (Guards.cpp keeps only those of objects the program had not written before).
  llvm::ArrayRef<GuardRead> getGuardReads() const { return guardReads; }

  /// Traces `function` (a Python callable) into a new module-level `func.func` named
  /// after `baseName` whose arguments are tensors of `argumentTypes`: a template for
  /// hooks (`tgc.grad_hook`, saved-tensor hooks, autograd.Function backward), which
  /// passes instantiate on values of any sizes. A None result returns the first
  /// argument unchanged (as a hook returning None leaves the gradient alone).
  /// Unless `allowSideEffects`, a Python side effect on an object that existed before
  /// the template (a hook appending to a global list) is an error; or, with
  /// `changesState`, sets it, undoes the tracing (heap, side effects, guard reads, the
  /// template) and returns a null function.
  mlir::FailureOr<mlir::func::FuncOp>
  traceTemplate(Var function, llvm::StringRef baseName, mlir::TypeRange argumentTypes,
                mlir::Location loc, bool allowSideEffects = true, bool *changesState = nullptr);

  /// How a gradient hook reached the tensor: `register_hook` in the program, or
  /// registered on a graph input before the capture (the trace lists it).
  enum class HookOrigin { Program, BeforeCapture };
  /// Applies the gradient hooks `hooks` to tensor object `tensor` (`register_hook`): each
  /// becomes a `tgc.grad_hook` whose result the tensor object refers to from now on.
  /// A hook that changes Python state cannot be compiled; on a tensor that existed
  /// before the call it runs in Python instead: registered by the replay (a
  /// `RegisterHook` side effect) for `HookOrigin::Program`, already on the live tensor
  /// for `HookOrigin::BeforeCapture`. On any other tensor it is an error.
  mlir::LogicalResult applyGradHooks(Var tensor, llvm::ArrayRef<Var> hooks, mlir::Location loc,
                                     HookOrigin origin = HookOrigin::Program);

  /// Enters a `torch.autograd.graph.saved_tensors_hooks(pack, unpack)` scope (the
  /// `with` block's `__enter__`, or the hooks active when `capture` was called, around
  /// the whole call): the ops created until the matching exit belong to it.
  void enterSavedTensorsHooks(Var pack, Var unpack, mlir::Location loc);
  /// Leaves the innermost scope: tags its ops `tgc.saved_hooks_scope = N`, traces pack
  /// and unpack into templates (one pair per floating dtype its ops use) and emits
  /// `tgc.saved_tensors_hooks ... scope N` (docs/training.md).
  mlir::LogicalResult exitSavedTensorsHooks(mlir::Location loc);

  /// Tensors flattened out of `value` (tuples, lists, dicts), in order; an error for
  /// anything else that is not None or a constant, unless `allowReplayed`: then other
  /// values (objects, functions, numbers from tensors) are skipped, for the replay list
  /// to build (outputStructure).
  mlir::LogicalResult flattenTensors(Var value, llvm::SmallVectorImpl<mlir::Value> &tensors,
                                     mlir::Location loc, bool allowReplayed = false);

  /// The structure of the returned `value` for model.json's `output_structure`
  /// (`tgc.output_structure`): tensor i of flattenTensors' order is `i`; tuples, lists
  /// and dicts are `{tuple|list = [...]}`, `{dict = [[key, S]...]}`; None, bools,
  /// numbers and strings `{const = V}` (None: unit); any other value (an object the
  /// program created, a function, a number from a tensor's value) `{replayed = i}`,
  /// the i-th of getReturnedValues(), which the replay list builds (docs/replay.md).
  mlir::FailureOr<mlir::Attribute> outputStructure(Var value, int64_t &nextTensor,
                                                   mlir::Location loc);
  llvm::ArrayRef<Var> getReturnedValues() const { return returnedValues; }

  const std::vector<std::string> &getUnbackedSymbols() const { return unbackedNames; }
  const std::vector<SymbolRange> &getSymbolRanges() const { return symbolRanges; }

  //===--------------------------------------------------------------------===//
  // The Python object model: what call and opcode handlers use
  //===--------------------------------------------------------------------===//

  mlir::MLIRContext *getContext() const { return ctx; }
  /// The objects, for handlers that read them or change state the program cannot
  /// observe from outside (an iterator's position, a list being built).
  Heap &getHeap() { return heap; }
  /// A new object the program created (no side effect: nothing outside has seen it).
  ObjectId newObject(HeapObject object) { return heap.allocate(std::move(object)); }
  /// A new Python list of `items`, and a new object of `kind` over `items` (a set, an
  /// iterator).
  Var makeList(std::vector<Var> items) {
    return makeSequence(HeapObject::Kind::List, std::move(items));
  }
  /// A new Python set of `items` without repeats (the first of equal items stays).
  mlir::FailureOr<Var> makeSet(llvm::ArrayRef<Var> items, mlir::Location loc);
  /// `set` (a set's items) with those of `items` it does not hold yet appended, in order.
  mlir::LogicalResult addToSet(std::vector<Var> &set, llvm::ArrayRef<Var> items,
                               mlir::Location loc);
  Var makeSequence(HeapObject::Kind kind, std::vector<Var> items) {
    HeapObject object;
    object.kind = kind;
    object.items = std::move(items);
    return makeObject(newObject(std::move(object)));
  }
  /// Object `id`, ready to change: a change a pre-existing object's owner sees, which is
  /// recorded as a side effect `kind` of `name` to `value`.
  HeapObject &mutateObject(ObjectId id, SideEffect::Kind kind, llvm::StringRef name, Var value,
                           mlir::Location loc);
  /// Records a read for the guard list (Guards.cpp) when `object` existed before the call
  /// and the program has not written what is read.
  void noteRead(GuardRead::Step step, ObjectId object, llvm::StringRef name, Var key, Var value,
                mlir::Location loc);
  /// The tracker of a code object's constant.
  Var constantOf(const ConstantRef &constant);

  // Attributes and classes (Attributes.cpp).
  /// `object.name`, or an error naming what has no such attribute.
  mlir::FailureOr<Var> getAttribute(Var object, llvm::StringRef name, mlir::Location loc);
  /// The module `name` (absolute, dotted) as `import` finds it in sys.modules at capture.
  mlir::FailureOr<Var> importModule(llvm::StringRef name, mlir::Location loc);
  /// `object.name`, null when it has none.
  mlir::FailureOr<Var> lookupAttribute(Var object, llvm::StringRef name, mlir::Location loc);
  /// `object.name = value` (a null `value` deletes it), through properties and
  /// nn.Module's `__setattr__`, as a side effect where one is seen.
  mlir::LogicalResult setAttribute(Var object, llvm::StringRef name, Var value, mlir::Location loc);
  /// `object.__setattr__`/`__delattr__` of `object` (builtins.object's): the instance
  /// attribute itself, past a `__setattr__` the class defines.
  mlir::LogicalResult setInstanceAttribute(Var object, llvm::StringRef name, Var value,
                                           mlir::Location loc);
  /// Special method `name` (`__getitem__`, `__setitem__`, `__setattr__`...) that a user
  /// class defines for `object`, an instance or a list, dict or set of a user subclass,
  /// bound to it; null when only builtin classes (and torch.nn.Module, which tgc models
  /// itself) define it.
  mlir::FailureOr<Var> userSpecialMethod(Var object, llvm::StringRef name, mlir::Location loc);
  /// `name` in the MRO of class `cls`, null when no class there has it.
  mlir::FailureOr<Var> lookupInClass(Var cls, llvm::StringRef name);
  /// A class attribute bound as Python's descriptors bind it (methods, static and class
  /// methods, properties) for instance `self` (null on the class) of class `cls`.
  mlir::FailureOr<Var> bindDescriptor(Var attribute, Var self, Var cls, mlir::Location loc);
  /// `type(value)`.
  mlir::FailureOr<Var> getClassOf(Var value);
  /// Whether class `cls` is (a subclass of) the class named `externalName`.
  bool isSubclass(Var cls, llvm::StringRef externalName);

  // Operators (Operators.cpp).
  /// BINARY_OP's operator `op` (NB_* numbering: 0 `+` ... 12 `^`, +13 in place).
  mlir::FailureOr<Var> binaryOp(unsigned op, Var lhs, Var rhs, mlir::Location loc);
  /// `lhs op rhs` for op `<`, `<=`, `==`, `!=`, `>`, `>=`.
  mlir::FailureOr<Var> compareOp(llvm::StringRef op, Var lhs, Var rhs, mlir::Location loc);
  /// `op operand` for op `-`, `+`, `~`.
  mlir::FailureOr<Var> unaryOp(llvm::StringRef op, Var operand, mlir::Location loc);
  /// `bool(value)`; a branch on a tensor's value is a graph break.
  mlir::FailureOr<bool> truth(Var value, mlir::Location loc);
  /// `lhs == rhs` for values known at capture time (sizes decided over their ranges).
  mlir::FailureOr<bool> equals(Var lhs, Var rhs, mlir::Location loc);
  /// `lhs is rhs`.
  bool identical(const Var &lhs, const Var &rhs) const;

  // Subscripts and iteration (Subscripts.cpp, Iteration.cpp).
  /// The index of `key`'s entry in dict `dict`, if it has one.
  mlir::FailureOr<std::optional<size_t>> findDictEntry(ObjectId dict, Var key, mlir::Location loc);
  /// `container[key]`, `container[key] = value`, `del container[key]`: through the
  /// `__getitem__`... a list, dict or set subclass defines, unless `raw` (the
  /// container's own, as `dict.__getitem__(self, key)` is).
  mlir::FailureOr<Var> subscript(Var container, Var key, mlir::Location loc, bool raw = false);
  mlir::LogicalResult storeSubscript(Var container, Var key, Var value, mlir::Location loc,
                                     bool raw = false);
  mlir::LogicalResult deleteSubscript(Var container, Var key, mlir::Location loc, bool raw = false);
  /// `iter(iterable)`: an iterator object over the items it yields.
  mlir::FailureOr<Var> iterate(Var iterable, mlir::Location loc);
  /// The items `iterable` yields (what is left of an iterator); an error for an endless
  /// iterator (itertools.count).
  mlir::FailureOr<std::vector<Var>> unpack(Var iterable, mlir::Location loc);
  /// The next item of the iterator object `iterator`, or null when it is exhausted.
  mlir::FailureOr<Var> nextItem(Var iterator, mlir::Location loc);
  /// The items of `iterables` side by side as zip() takes them: as many rows as the
  /// shortest finite one has, an endless iterator giving what it makes, and as in
  /// CPython the arguments before the first exhausted one advanced once more. Endless
  /// iterators alone are an error: the rows would never end.
  mlir::FailureOr<std::vector<std::vector<Var>>> unpackZipped(llvm::ArrayRef<Var> iterables,
                                                              mlir::Location loc);
  /// Whether `v` is an endless iterator object.
  bool isEndless(const Var &v) const {
    return heap.kindOf(v) == HeapObject::Kind::Iterator &&
           heap.get(v->object).endless != HeapObject::Endless::No;
  }
  /// key(item) for each item (sorted() and list.sort()'s key=); none without a key.
  mlir::FailureOr<std::vector<Var>> sortKeys(llvm::ArrayRef<Var> items, Var key,
                                             mlir::Location loc);

  // Tensors (TensorCalls.cpp, TensorNumbers.cpp).
  /// Calls the torch callable `qualifiedName` that TorchFunctions' table knows (check
  /// with isKnownTorchFunction: others are an error) as an ATen op.
  mlir::FailureOr<Var> callTorchFunction(llvm::StringRef qualifiedName, CallArguments &arguments,
                                         mlir::Location loc);
  /// `tensor.item()`: a 0-d number tensor (f64/i64/i1) marked with the Python number.
  mlir::FailureOr<Var> tensorItem(Var tensor, mlir::Location loc);
  /// `tensor` cast to `kind`'s dtype and marked as that Python number.
  mlir::FailureOr<Var> asNumber(Var tensor, Variable::Number kind, mlir::Location loc);
  /// `x.max(dim)` / `x.min(dim)` (a (values, indices) tuple of class `className`,
  /// torch.return_types.max) or, without `wantValues`, `argmax`/`argmin`: indices of the
  /// first extremum, values gathered there (TensorNumbers.cpp).
  mlir::FailureOr<Var> reduceWithIndices(Var x, int64_t dim, bool keepdim, bool isMax,
                                         bool wantValues, llvm::StringRef className,
                                         mlir::Location loc);

  // torch.autocast blocks: the ATen calls inside get autocast's casts (applyAutocast).
  llvm::ArrayRef<frontend::AutocastRegion> getAutocastRegions() const { return autocastRegions; }
  void pushAutocast(frontend::AutocastRegion region) {
    autocastRegions.push_back(std::move(region));
  }
  /// Leaves the innermost block; false when there is none.
  bool popAutocast() {
    if (autocastRegions.empty())
      return false;
    autocastRegions.pop_back();
    return true;
  }

  // Grad modes (`torch.no_grad()` blocks): a torch call inside a no-grad block detaches
  // its new tensors. Outside every block the mode is the caller's, the one the trace was
  // captured in (`setEntryGradMode`).
  bool isGradEnabled() const { return gradModes.empty() ? entryGradMode : gradModes.back(); }
  /// The grad mode the program is called in (default: enabled).
  void setEntryGradMode(bool enabled) { entryGradMode = enabled; }
  /// `torch.is_grad_enabled()`: the mode, noting when the answer is the caller's mode,
  /// which the compiled program then assumes (a guard, docs/guards.md).
  bool readGradMode() {
    if (gradModes.empty())
      entryGradModeRead = true;
    return isGradEnabled();
  }
  /// The caller's grad mode when the program read it (`readGradMode` outside every
  /// block), or nullopt.
  std::optional<bool> getEntryGradModeRead() const {
    return entryGradModeRead ? std::optional<bool>(entryGradMode) : std::nullopt;
  }
  void pushGradMode(bool enabled) { gradModes.push_back(enabled); }
  /// Leaves the innermost block; false when there is none.
  bool popGradMode() {
    if (gradModes.empty())
      return false;
    gradModes.pop_back();
    return true;
  }

  // Graph breaks (GraphBreakMarkers.cpp, docs/graph-breaks.md).
  /// Whether a graph break here can be a marker rather than an error.
  bool canBreakGraph() const { return breakPath && builder.getInsertionBlock() == breakBlock; }
  /// `callee(*args, **kwargs)` run by the caller between graphs: emits `tgc.break_call`.
  mlir::LogicalResult breakOnCall(llvm::StringRef callee, llvm::ArrayRef<Var> args,
                                  llvm::ArrayRef<std::pair<std::string, Var>> kwargs,
                                  mlir::Location loc);

  // Exceptions (Exceptions.cpp, docs/bytecode.md "Exceptions").
  /// Raises `exception` (an instance of an exception class) at `loc`. When a running
  /// frame of the program handles it (`try`/`except`, `finally`, `with`), the frames in
  /// between unwind and execution continues at that frame's handler; otherwise the
  /// exception ends the capture with the error `message` at `loc`. Always a failure: the
  /// caller returns it, as it returns any error.
  mlir::LogicalResult raiseException(Var exception, mlir::Location loc, const llvm::Twine &message);
  /// `raise exception` in the program: where and with the message of its first raise
  /// when it was raised before (a re-raise), else at `loc` naming its class and message.
  mlir::LogicalResult raiseException(Var exception, mlir::Location loc);
  /// Raises a new instance of the builtin exception class `className`
  /// ("builtins.KeyError") with `args`; `message` as for raiseException.
  mlir::LogicalResult raiseBuiltinException(llvm::StringRef className, std::vector<Var> args,
                                            mlir::Location loc, const llvm::Twine &message);
  /// A new instance of exception class `cls` (builtin or a user subclass) whose `args`
  /// are `args`; a user class's `__init__` is not called.
  Var newException(Var cls, std::vector<Var> args);
  /// Whether `cls` is an exception class (BaseException or a subclass).
  bool isExceptionClass(Var cls) { return isSubclass(cls, "builtins.BaseException"); }
  /// The exception being handled (`sys.exc_info()[1]`: what PUSH_EXC_INFO saves and a
  /// bare `raise` re-raises); null outside handlers.
  Var getHandledException() const { return handledException; }
  void setHandledException(Var exception) { handledException = std::move(exception); }

  // Higher-order calls, which trace Python functions into regions and templates.
  /// `torch.cond(pred, true_fn, false_fn, operands)` (Cond.cpp).
  mlir::FailureOr<Var> callCond(CallArguments &arguments, mlir::Location loc);
  /// A generator function driven step by step (contextlib.contextmanager, Interpreter.cpp):
  /// `startGenerator` calls `function` and runs it to its first `yield`, whose value it
  /// returns, keeping the frame for `owner`; `resumeGenerator` sends None into it and runs
  /// it to its end (true) or its next `yield` (false, the frame kept).
  mlir::FailureOr<Var> startGenerator(ObjectId owner, Var function, CallArguments arguments,
                                      mlir::Location loc);
  mlir::FailureOr<bool> resumeGenerator(ObjectId owner, mlir::Location loc);
  /// `cls.apply(*args)`: traces forward and backward into templates of one
  /// `tgc.autograd_function` (`arguments` starts with the class; AutogradFunction.cpp).
  mlir::FailureOr<Var> applyAutogradFunction(CallArguments &arguments, mlir::Location loc);

private:
  // Frames and instructions (Interpreter.cpp).
  mlir::FailureOr<Var> callFunction(ObjectId function, CallArguments arguments, mlir::Location loc);
  /// The frame of a call of `function` with its parameters bound, ready to run.
  mlir::FailureOr<std::unique_ptr<Frame>> prepareFrame(ObjectId function, CallArguments &arguments,
                                                       mlir::Location loc);
  mlir::FailureOr<Var> run(Frame &frame);
  /// Executes one instruction through the opcode table (Frame.h).
  mlir::LogicalResult execute(ExecutionStep &step);
  mlir::Location locationOf(const Frame &frame, const py::Instruction &instruction) const;
  /// Continues `frame` at the handler of the pending exception for its current
  /// instruction, which raised it; failure when the frame has none there (the exception
  /// propagates).
  mlir::LogicalResult unwindTo(Frame &frame);
  /// Where and with what message `exception` was first raised (a re-raise reports it
  /// there); never raised, `fallback` and a message naming its class and text.
  std::pair<mlir::Location, std::string> raisedAt(const Var &exception, mlir::Location fallback);

  // Objects from the trace (TraceObjects.cpp).
  mlir::FailureOr<Var> readObject(int64_t id);
  mlir::FailureOr<Var> convertObject(int64_t id, const Json &object);
  mlir::FailureOr<Var> convertContainer(int64_t id, llvm::StringRef kind, const Json &object);
  mlir::FailureOr<Var> convertFunction(int64_t id, const Json &object);
  mlir::FailureOr<Var> convertClass(int64_t id, llvm::StringRef kind, const Json &object);
  mlir::FailureOr<Var> convertTorchValue(int64_t id, llvm::StringRef kind, const Json &object);
  /// A heap object of `kind` for trace object `id`, registered before its contents are
  /// read so that cycles resolve to it.
  std::pair<ObjectId, Var> allocateTraceObject(int64_t id, HeapObject::Kind kind);
  mlir::FailureOr<std::vector<std::pair<std::string, Var>>> readNamedValues(const Json &values);

  // Calls (Calls.cpp).
  mlir::FailureOr<Var> callModule(Var module, CallArguments arguments, mlir::Location loc);
  /// The tensors of a submodule call's arguments or results cross a
  /// `tgc.break_module_hook` of `stage` as fresh tensor objects (Calls.cpp).
  mlir::LogicalResult breakModuleHook(std::vector<Var> &items, llvm::StringRef stage,
                                      int64_t number, bool onlyIfGrad, mlir::Location loc);
  mlir::FailureOr<Var> instantiate(Var cls, CallArguments arguments, mlir::Location loc);
  /// A registered handler (CallRegistry.h), else the schema-bound torch function, else
  /// a graph break.
  mlir::FailureOr<Var> callExternal(const Variable &external, CallArguments arguments,
                                    mlir::Location loc);

  // Operators (Operators.cpp).
  mlir::FailureOr<bool> compareSizes(llvm::StringRef op, mlir::AffineExpr lhs, mlir::AffineExpr rhs,
                                     mlir::Location loc);
  mlir::FailureOr<Var> tensorBinaryOp(unsigned op, Var lhs, Var rhs, mlir::Location loc);
  /// A user class's dunder method for `op` (`__iadd__`, `__add__`, `__radd__`); null
  /// when neither operand defines one.
  mlir::FailureOr<Var> dunderBinaryOp(unsigned op, Var lhs, Var rhs, mlir::Location loc);
  mlir::FailureOr<Var> percentFormat(llvm::StringRef text, Var values, mlir::Location loc);
  mlir::FailureOr<Var> sequenceBinaryOp(unsigned op, Var lhs, Var rhs, mlir::Location loc);
  mlir::FailureOr<Var> intBinaryOp(unsigned op, Var lhs, Var rhs, mlir::Location loc);

  // torch.cond (Cond.cpp).
  /// Walks two branch results of the same structure (tuples, lists), checking that
  /// non-tensor values are equal, and rebuilds it with `mergeTensors` of each tensor pair.
  mlir::FailureOr<Var>
  mergeBranchResults(Var onTrue, Var onFalse, mlir::Location loc,
                     llvm::function_ref<mlir::FailureOr<Var>(Var, Var)> mergeTensors);
  mlir::FailureOr<llvm::SmallVector<mlir::Value>> branchResultTensors(Var result,
                                                                      mlir::Location loc);
  mlir::LogicalResult checkBranchWrites(CondOp cond, mlir::Region &region, size_t objectsBefore,
                                        mlir::Location loc);

  // autograd.Function (AutogradFunction.cpp).
  bool containsTensor(const Var &value) const;
  mlir::LogicalResult traceAutogradForward(AutogradTrace &trace, Var ctxObject, Var forward,
                                           Var setupContext, mlir::Location loc);
  mlir::LogicalResult traceAutogradBackward(AutogradTrace &trace, Var backward, mlir::Location loc);

  // Tensor calls (TensorCalls.cpp).
  mlir::FailureOr<AtenValue> toAtenValue(Var value, mlir::Location loc);
  mlir::FailureOr<mlir::Value> materializeSize(mlir::AffineExpr size, mlir::Location loc);
  mlir::FailureOr<Var> buildAten(llvm::StringRef target, std::vector<AtenArgument> arguments,
                                 mlir::Location loc);
  mlir::FailureOr<Var> callWithOut(llvm::StringRef qualifiedName, CallArguments arguments, Var out,
                                   mlir::Location loc);
  /// An ATen call's results as Python sees them: None, the tensor, or a tuple of them.
  Var resultsToVar(mlir::ValueRange results);
  /// A fresh tensor object over SSA value `value`.
  Var newTensorObject(mlir::Value value);
  /// `tensor[key]`. With `advanced`, the tensor indices are not applied: the result is
  /// the view the basic indices (ints, slices, None, ...) make, and `advanced` gets the
  /// tensor index of each of its dimensions (null where none; empty without any).
  mlir::FailureOr<Var> tensorIndex(Var tensor, Var key, mlir::Location loc,
                                   llvm::SmallVectorImpl<mlir::Value> *advanced = nullptr);
  /// `tensor[key] = value`: a copy into the view of basic indices, index_put_ with tensor
  /// indices.
  mlir::LogicalResult storeTensorIndex(Var tensor, Var key, Var value, mlir::Location loc);
  /// `tensor[key] = value` where one index of `key` is a boolean mask: the selected
  /// elements of the view of the other indices become `value` (broadcast over them).
  mlir::LogicalResult storeMasked(Var tensor, Var key, Var value, mlir::Location loc);
  /// What index_put_ writes into a tensor of `dtype`: a Python number as a 0-d tensor of
  /// that dtype; a tensor of another dtype is an error, as in eager.
  mlir::FailureOr<Var> indexPutValue(Var value, mlir::Type dtype, mlir::Location loc);
  mlir::FailureOr<Var> tensorAttribute(Var tensor, llvm::StringRef name, mlir::Location loc);

  // Saved-tensor hooks (SavedTensorsHooks.cpp).
  /// Traces the pack/unpack pair of scope `id` for values of `type` into templates and
  /// emits their `tgc.saved_tensors_hooks` op.
  mlir::LogicalResult traceSavedTensorsHooks(int64_t id, Var pack, Var unpack, mlir::Type type,
                                             mlir::Location loc);

  mlir::InFlightDiagnostic error(mlir::Location loc) { return mlir::emitError(loc); }

  // Python numbers computed from tensor values (TensorNumbers.cpp).
  /// A Python int number used as a size: an unbacked size symbol bound (tgc.bind_symbol)
  /// to the number clamped into [lower (0 if null), upper (unbounded if null)], returned
  /// as a symbolic Int. With `wrapBase` (a slice bound), a negative number first counts
  /// from it, as Python's slices do. The bounds are ints or int numbers.
  mlir::FailureOr<Var> numberAsSize(Var number, Var lower, Var upper, Var wrapBase,
                                    mlir::Location loc);
  /// `a` clamped to at least `lo` and at most `hi` (ints or int numbers; null: no bound).
  mlir::FailureOr<Var> clampNumber(Var a, Var lo, Var hi, mlir::Location loc);
  /// The tensor `result` of `lhs <op> rhs` (rhs null for unary ops; op "compare" for
  /// comparisons), marked as a Python number when both operands are numbers and one
  /// stands for a tensor's value; else `result` itself.
  mlir::FailureOr<Var> numberResult(Var result, Var lhs, Var rhs, llvm::StringRef op,
                                    mlir::Location loc);
  /// The sizes bound by numberAsSize: symbol index -> its i64 value.
  llvm::DenseMap<unsigned, mlir::Value> unbackedValues;
  /// Names of the symbols numberAsSize added after the trace's own (`u0`, `u1`, ...).
  std::vector<std::string> unbackedNames;

  // Graph breaks (GraphBreakMarkers.cpp).
  /// `bool(tensor)` at a graph break: emits `tgc.break_branch` and returns the outcome
  /// this path follows.
  mlir::FailureOr<bool> breakOnTensorTruth(Var tensor, mlir::Location loc);
  mlir::FailureOr<mlir::Attribute>
  breakCallArgument(Var value, llvm::SmallVectorImpl<mlir::Value> &tensors, mlir::Location loc);

  const ObjectTable &objects;
  Json importableModules = Json::object();
  /// torch.Tensor's attribute names, when the trace lists them.
  std::optional<llvm::StringSet<>> tensorAttributes;
  mlir::OpBuilder &builder;
  mlir::MLIRContext *ctx;
  TensorSource tensorSource;
  AtenCallBuilder atenBuilder;
  /// The overloads of the `torch.ops` operators the trace holds, by their external
  /// names (`torch.ops.aten.addmm`, `torch.ops.aten.addmm.default`).
  llvm::StringMap<std::vector<OperatorOverload>> operatorOverloads;
  /// The Python function (a trace value, `{"ref": N}`) of a library callable the trace
  /// records both by name and as code: what a call of it runs when no handler or torch
  /// binding takes it.
  llvm::StringMap<Json> pythonFallbacks;
  Heap heap;
  std::vector<SideEffect> sideEffects;
  /// Returned values that outputStructure leaves to the replay list.
  std::vector<Var> returnedValues;
  std::vector<GuardRead> guardReads;
  /// What the program has written: (object, 0, attribute/global name, "" for a cell) and
  /// (object, 1, "") for a container's contents.
  std::set<std::tuple<ObjectId, int, std::string>> writtenTargets;
  /// Trackers of trace objects read so far, by object id.
  llvm::DenseMap<int64_t, Var> traceObjects;
  /// Decoded code objects, by identity.
  std::map<const py::CodeObject *, std::shared_ptr<py::DecodedCode>> decoded;
  /// The globals object of each module, by module name.
  std::map<std::string, ObjectId> globalsByModule;
  std::vector<SymbolRange> symbolRanges;
  unsigned depth = 0;
  /// Nested `call`s: what resolving a callable (a method, a staticmethod, a partial) adds
  /// to the frames, bounded so that one that resolves to itself is an error, not a stack
  /// overflow.
  unsigned callNesting = 0;
  Var entryCallable;
  /// Names of the template functions traced so far, for unique symbols.
  llvm::StringMap<unsigned> templateNames;
  uint64_t steps = 0;
  /// The frames running now, innermost last (raiseException looks for a handler).
  std::vector<Frame *> activeFrames;
  /// Generators suspended at a `yield`, by the object that drives them.
  std::map<ObjectId, std::unique_ptr<Frame>> suspendedGenerators;
  /// How many of activeFrames are below the innermost region being traced: their
  /// handlers do not catch what the region's code raises.
  size_t handlerFloor = 0;
  /// The exception raised and not yet handled: the frames unwind to its handler.
  Var pendingException;
  Var handledException;
  /// Where each raised exception object was first raised, and its error message.
  llvm::DenseMap<ObjectId, std::pair<mlir::Location, std::string>> raiseSites;
  /// An active saved-tensor hooks scope: its ops are those after `last` (null: from
  /// the block's start) in `block` when it is left.
  struct SavedHooksScope {
    int64_t id;
    Var pack, unpack;
    mlir::Block *block;
    mlir::Operation *last;
  };
  /// Active scopes, innermost last; the next scope's number.
  std::vector<SavedHooksScope> savedHooksScopes;
  int64_t nextSavedHooksScope = 0;
  /// Grad modes of the active `torch.no_grad()` / `enable_grad()` blocks, innermost
  /// last (none: the caller's, entryGradMode).
  std::vector<bool> gradModes;
  bool entryGradMode = true;
  bool entryGradModeRead = false;
  /// The torch.autocast blocks the interpreter is in, outermost first.
  std::vector<frontend::AutocastRegion> autocastRegions;
  GraphBreakPath *breakPath = nullptr;
  mlir::Block *breakBlock = nullptr;
  bool training = true;
};

/// The library classes whose subclasses get torch's behaviour.
inline constexpr llvm::StringLiteral kModuleClass = "torch.nn.Module";
inline constexpr llvm::StringLiteral kTensorClass = "torch.Tensor";

/// The external base class of `cls` whose methods an attribute falls back to (the
/// nearest external entry of its MRO other than `object`); null when it has none.
Var externalBase(const Heap &heap, const Var &cls);
/// The field names of a namedtuple class (a class whose external base is
/// builtins.tuple and whose `_fields` is a tuple of str), or nullopt.
std::optional<std::vector<std::string>> namedTupleFields(const Heap &heap, const Var &cls);

} // namespace tgc::py

#endif // TGC_LIB_FRONTEND_PYTHON_INTERPRETER_H
