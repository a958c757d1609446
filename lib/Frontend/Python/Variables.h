// Variable trackers of the bytecode interpreter: immutable Python values, and the heap of
// mutable objects whose state checkpoints copy cheaply.
#ifndef TGC_LIB_FRONTEND_PYTHON_VARIABLES_H
#define TGC_LIB_FRONTEND_PYTHON_VARIABLES_H

#include "Bytecode.h"

#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tgc::py {

struct Variable;
/// A tracked Python value. Immutable: an operation that changes a value (even a tensor's
/// metadata, as `x.t_()` does) makes a new Variable; objects with identity and mutable
/// state refer to the Heap by id.
using Var = std::shared_ptr<const Variable>;

/// Index of an object in the Heap.
using ObjectId = unsigned;

struct Variable {
  enum class Kind {
    Null, ///< the NULL CPython pushes before callables (PUSH_NULL, LOAD_GLOBAL)
    None,
    Bool,
    Int, ///< `size`: a constant, or an expression over the size symbols (SymInt)
    Float,
    Str,
    Ellipsis,
    Tensor,   ///< `object`: a HeapObject::Kind::Tensor (tensors have identity: `x.t_()`
              ///< changes what every alias of `x` sees)
    Tuple,    ///< `items` (`tupleClass` set when it has a class: torch.Size, namedtuples)
    Slice,    ///< `items`: start, stop, step
    Range,    ///< `items`: start, stop, step (Ints)
    DType,    ///< `type`
    Device,   ///< `name`: "cpu", "cuda:0"
    Object,   ///< anything with identity and state: `object` (see HeapObject::Kind)
    Method,   ///< a bound method: `items` = {function, self}
    External, ///< a callable or class known by name: `name` ("torch.relu")
    Super,    ///< super(): `items` = {class, self}
    Code,     ///< `code`
  };
  Kind kind = Kind::None;
  bool boolValue = false;
  mlir::AffineExpr size;
  double floatValue = 0;
  std::string name;
  mlir::Type type;
  std::vector<Var> items;
  ObjectId object = 0;
  /// For Tuple: its class when it is an instance of a tuple subclass (external
  /// `torch.Size`, a namedtuple's class object); null for a plain tuple.
  Var tupleClass;
  /// For Tensor: the Python number it stands for, when it is one computed from tensor
  /// values (`t.item()` and arithmetic on it, Dynamo's unbacked SymFloat/SymInt): a 0-d
  /// tensor of f64 (Float), i64 (Int) or i1 (Bool). None for real tensors.
  enum class Number { None, Float, Int, Bool };
  Number number = Number::None;
  py::CodeRef code;

  bool is(Kind k) const { return kind == k; }
  /// The constant int, if this is an Int with a constant size.
  std::optional<int64_t> getConstantInt() const;
  /// The numeric value of a Bool/Int/Float constant.
  std::optional<double> getNumber() const;
};

/// "float", "int" or "bool" (the Python type a number tensor stands for); "" for None.
llvm::StringRef numberName(Variable::Number number);

Var makeNull();
Var makeNone();
Var makeBool(bool b);
Var makeInt(mlir::AffineExpr size);
Var makeInt(int64_t i, mlir::MLIRContext *ctx);
Var makeFloat(double f);
Var makeStr(llvm::StringRef s);
/// The characters (code points) of UTF-8 `text`, each as its bytes: what Python's
/// len(), iteration and indexing of a str count.
std::vector<llvm::StringRef> strCharacters(llvm::StringRef text);
/// A torch dtype; `type` is null for one tgc has no element type for (comparing it works,
/// computing with it is an error). `name` is its torch name, where known.
Var makeDType(mlir::Type type, llvm::StringRef name = "");
Var makeEllipsis();
Var makeTuple(std::vector<Var> items);
/// A code object as a value (a function's `__code__`, a code constant).
Var makeCode(py::CodeRef code);
/// A torch.Size of `sizes` (a tuple whose `tupleClass` is external `torch.Size`).
Var makeSize(std::vector<Var> sizes);
Var makeObject(ObjectId id);
/// The tracker of the tensor object `id` (a HeapObject::Kind::Tensor).
Var makeTensorObject(ObjectId id);
Var makeExternal(llvm::StringRef qualifiedName);
Var makeMethod(Var function, Var self);
Var makeVar(Variable v);

/// A mutable Python object: its state lives here so that checkpoints copy pointers,
/// not objects, and rollback restores it exactly.
struct HeapObject {
  enum class Kind {
    List,
    Dict,
    Set,
    Cell,
    Instance, ///< a user object or nn.Module: `classObject`, `attributes`
    Class,    ///< `name`, `bases`, `mro`, `attributes` (the class dict)
    Function, ///< `code`, `globals`, `defaults`, `kwDefaults`, `closure`, `attributes`
    Globals,  ///< a module's namespace: `name` (the module), `attributes`
    Module,   ///< an imported module: `name`, `attributes`
    Iterator, ///< `items` to yield from `position`, then what `endless` makes
    StaticMethod,
    ClassMethod,
    Property, ///< `items` = {fget, fset, fdel}
    Opaque,   ///< `name` is the type, `repr` what it printed as
    Tensor,   ///< `tensor`: the current SSA value (its type is the fake-tensor metadata)
  };
  Kind kind = Kind::List;
  std::string name, qualname, repr;
  std::vector<Var> items;
  /// Dict entries in insertion order; Instance/Class/Function/Globals/Module attributes.
  std::vector<std::pair<Var, Var>> entries;
  std::vector<std::pair<std::string, Var>> attributes;
  /// Cell contents (null when the cell is empty).
  Var contents;
  /// Instance: its class; Dict/List/Tuple subclasses: their class (may be null).
  Var classObject;
  std::vector<Var> bases, mro;
  /// Function parts.
  py::CodeRef code;
  ObjectId globals = 0;
  std::vector<Var> defaults;
  std::vector<std::pair<std::string, Var>> kwDefaults;
  std::vector<Var> closure;
  /// Function: the result tgc-capture recorded for a call without arguments of a
  /// function marked `torch._dynamo.assume_constant_result` (null otherwise).
  Var constantResult;
  size_t position = 0;
  /// Iterator: what an endless one yields, which is never listed: itertools.count yields
  /// `contents`, then `contents` + `step` and so on; cycle yields `items` over again;
  /// repeat without a count yields `contents`. `name` is the function that made it.
  enum class Endless { No, Count, Cycle, Repeat };
  Endless endless = Endless::No;
  Var step;
  mlir::Value tensor;
  /// The trace object this one was read from, -1 for objects the program created.
  int64_t traceId = -1;

  /// The attribute `name`, or null.
  Var getAttribute(llvm::StringRef name) const;
  void setAttribute(llvm::StringRef name, Var value);
  bool eraseAttribute(llvm::StringRef name);
};

/// The interpreter's mutable objects, copy-on-write: a checkpoint is a copy of the
/// pointer table, and `mutate` clones an object before its first change after one.
class Heap {
public:
  ObjectId allocate(HeapObject object);
  const HeapObject &get(ObjectId id) const { return *objects[id]; }
  /// The kind of the object `v` names, if it names one (tensors excepted).
  std::optional<HeapObject::Kind> kindOf(const Var &v) const {
    if (!v->is(Variable::Kind::Object))
      return std::nullopt;
    return objects[v->object]->kind;
  }
  /// The object, ready to change (cloned if a checkpoint shares it).
  HeapObject &mutate(ObjectId id);
  size_t size() const { return objects.size(); }
  /// Rolls the objects that existed at `checkpoint` back to their state then. Objects
  /// created since keep their ids (and state), so trackers of them stay valid: a
  /// speculated branch's results survive the rollback before the other branch runs.
  void restore(const Heap &checkpoint);

private:
  std::vector<std::shared_ptr<HeapObject>> objects;
};

/// How error messages name a value's type ("list", "function f", "str 'a'").
std::string describe(const Heap &heap, const Var &value);
/// The constant int `value`, or an error at `loc` saying `what` must be one.
mlir::FailureOr<int64_t> constantIntArgument(const Var &value, llvm::StringRef what,
                                             mlir::Location loc);
/// An int expression as Python would print it.
std::string printSize(mlir::AffineExpr size);

} // namespace tgc::py

#endif // TGC_LIB_FRONTEND_PYTHON_VARIABLES_H
