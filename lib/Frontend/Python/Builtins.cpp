// Python's builtin functions in the bytecode interpreter: len, isinstance, min and max,
// sum, sorted, getattr and friends, iter and next, print. Each is a handler registered
// under its qualified name (`builtins.len`).
#include "Interpreter.h"

#include "Sorting.h"
#include "llvm/ADT/StringSwitch.h"

#include "llvm/ADT/STLExtras.h"
#include <cmath>
#include <cstdio>
#include <cstdlib>

using namespace mlir;
using namespace tgc;
using namespace tgc::py;

using K = Variable::Kind;
using H = HeapObject::Kind;

/// The attributes of torch.nn.Module itself (`dir(torch.nn.Module)` without dunders, torch
/// 2.11): what hasattr/getattr find on a module that its instance and class do not have.
static bool isModuleAttribute(llvm::StringRef name) {
  static const llvm::StringRef kNames[] = {"T_destination",
                                           "_apply",
                                           "_call_impl",
                                           "_compiled_call_impl",
                                           "_get_backward_hooks",
                                           "_get_backward_pre_hooks",
                                           "_get_name",
                                           "_load_from_state_dict",
                                           "_maybe_warn_non_full_backward_hook",
                                           "_named_members",
                                           "_register_load_state_dict_pre_hook",
                                           "_register_state_dict_hook",
                                           "_replicate_for_data_parallel",
                                           "_save_to_state_dict",
                                           "_slow_forward",
                                           "_version",
                                           "_wrapped_call_impl",
                                           "add_module",
                                           "apply",
                                           "bfloat16",
                                           "buffers",
                                           "call_super_init",
                                           "children",
                                           "compile",
                                           "cpu",
                                           "cuda",
                                           "double",
                                           "dump_patches",
                                           "eval",
                                           "extra_repr",
                                           "float",
                                           "forward",
                                           "get_buffer",
                                           "get_extra_state",
                                           "get_parameter",
                                           "get_submodule",
                                           "half",
                                           "ipu",
                                           "load_state_dict",
                                           "modules",
                                           "mtia",
                                           "named_buffers",
                                           "named_children",
                                           "named_modules",
                                           "named_parameters",
                                           "parameters",
                                           "register_backward_hook",
                                           "register_buffer",
                                           "register_forward_hook",
                                           "register_forward_pre_hook",
                                           "register_full_backward_hook",
                                           "register_full_backward_pre_hook",
                                           "register_load_state_dict_post_hook",
                                           "register_load_state_dict_pre_hook",
                                           "register_module",
                                           "register_parameter",
                                           "register_state_dict_post_hook",
                                           "register_state_dict_pre_hook",
                                           "requires_grad_",
                                           "set_extra_state",
                                           "set_submodule",
                                           "share_memory",
                                           "state_dict",
                                           "to",
                                           "to_empty",
                                           "train",
                                           "type",
                                           "xpu",
                                           "zero_grad"};
  return llvm::is_contained(kNames, name);
}

//===----------------------------------------------------------------------===//
// Sizes and types
//===----------------------------------------------------------------------===//

static CallResult len(Interpreter &in, ExternalCall &call) {
  std::vector<Var> &args = call.args;
  if (failed(call.checkArity(1, 1)))
    return failure();
  Heap &heap = in.getHeap();
  if (args[0]->is(K::Tensor)) {
    auto type = llvm::cast<BaseTensorType>(heap.get(args[0]->object).tensor.getType());
    if (type.getSizes().empty())
      return call.error() << "len() of a 0-d tensor";
    return makeInt(type.getSizes()[0]);
  }
  if (heap.kindOf(args[0]) == H::Dict) {
    Var n = makeInt(heap.get(args[0]->object).entries.size(), in.getContext());
    in.noteRead(GuardRead::Step::Length, args[0]->object, "", nullptr, n, call.loc);
    return n;
  }
  if (heap.kindOf(args[0]) == H::Instance) {
    FailureOr<Var> len = in.getAttribute(args[0], "__len__", call.loc);
    if (failed(len))
      return failure();
    return in.call(*len, {}, call.loc);
  }
  FailureOr<std::vector<Var>> items = in.unpack(args[0], call.loc);
  if (failed(items))
    return failure();
  return makeInt(items->size(), in.getContext());
}

/// Whether `value` is an instance of the collections.abc protocol `abc` (for the values
/// the interpreter models).
static bool isAbstractInstance(const Heap &heap, const Var &value, llvm::StringRef abc) {
  std::optional<H> kind = heap.kindOf(value);
  bool isMapping = kind == H::Dict;
  bool isSequence =
      value->is(K::Tuple) || value->is(K::Str) || value->is(K::Range) || kind == H::List;
  bool isCollection = isMapping || isSequence || kind == H::Set || value->is(K::Tensor);
  bool isIterable = isCollection || kind == H::Iterator;
  bool isNumber = value->is(K::Int) || value->is(K::Bool) || value->is(K::Float);
  bool isCallable =
      kind == H::Function || kind == H::Class || value->is(K::External) || value->is(K::Method);
  // Hashable: what is not a list, dict or set (a tensor hashes by identity).
  bool isHashable = kind != H::List && kind != H::Dict && kind != H::Set;
  return llvm::StringSwitch<bool>(abc)
      .Case("collections.abc.Iterable", isIterable)
      .Cases({"collections.abc.Collection", "collections.abc.Sized", "collections.abc.Container"},
             isCollection)
      .Case("collections.abc.Sequence", isSequence)
      .Case("collections.abc.MutableSequence", kind == H::List)
      .Cases({"collections.abc.Mapping", "collections.abc.MutableMapping"}, isMapping)
      .Cases({"collections.abc.Set", "collections.abc.MutableSet"}, kind == H::Set)
      .Case("collections.abc.Iterator", kind == H::Iterator)
      .Case("collections.abc.Callable", isCallable)
      .Case("collections.abc.Hashable", isHashable)
      .Cases({"numbers.Number", "numbers.Complex", "numbers.Real"}, isNumber)
      .Case("numbers.Integral", value->is(K::Int) || value->is(K::Bool))
      .Default(false);
}

/// The class a bare alias of the typing module stands for (`typing.Sequence` is
/// collections.abc.Sequence, `typing.List` list); other names unchanged.
static llvm::StringRef typingOrigin(llvm::StringRef name) {
  if (!name.consume_front("typing."))
    return name;
  return llvm::StringSwitch<llvm::StringRef>(name)
      .Case("List", "builtins.list")
      .Case("Dict", "builtins.dict")
      .Case("Tuple", "builtins.tuple")
      .Case("Set", "builtins.set")
      .Case("FrozenSet", "builtins.frozenset")
      .Case("Type", "builtins.type")
      .Case("Text", "builtins.str")
      .Case("DefaultDict", "collections.defaultdict")
      .Case("OrderedDict", "collections.OrderedDict")
      .Case("Deque", "collections.deque")
      .Case("Counter", "collections.Counter")
      .Case("AbstractSet", "collections.abc.Set")
      .Cases({"Sequence", "MutableSequence", "Mapping", "MutableMapping", "Iterable", "Iterator",
              "Collection", "Sized", "Container", "Callable", "Hashable", "MutableSet"},
             "")
      .Default("?");
}

/// isinstance() and issubclass(), with a class or a tuple of them.
static CallResult isInstance(Interpreter &in, ExternalCall &call) {
  std::vector<Var> &args = call.args;
  if (failed(call.checkArity(2, 2)))
    return failure();
  bool instance = call.name == "builtins.isinstance";
  FailureOr<Var> cls = instance ? in.getClassOf(args[0]) : args[0];
  if (failed(cls))
    return failure();
  const Heap &heap = in.getHeap();
  // A tuple of a tuple subclass (a namedtuple, torch.Size, a torch.return_types) is also
  // an instance of its class and of what that class derives from.
  std::vector<Var> classes{*cls};
  if (instance && args[0]->is(K::Tuple) && args[0]->tupleClass)
    classes.push_back(args[0]->tupleClass);
  std::vector<Var> candidates = args[1]->is(K::Tuple) ? args[1]->items : std::vector{args[1]};
  for (Var candidate : candidates) {
    if (candidate->is(K::External) && llvm::StringRef(candidate->name).starts_with("typing.")) {
      llvm::StringRef origin = typingOrigin(candidate->name);
      if (origin == "?")
        return call.error() << call.name << "() against " << candidate->name << " is not supported";
      candidate = makeExternal(
          origin.empty() ? ("collections.abc." +
                            llvm::StringRef(candidate->name).drop_front(strlen("typing.")))
                               .str()
                         : origin.str());
    }
    if (candidate->is(K::External) && instance &&
        isAbstractInstance(heap, args[0], candidate->name))
      return makeBool(true);
    std::string qualname = candidate->is(K::External) ? candidate->name
                           : heap.kindOf(candidate) == H::Class
                               ? heap.get(candidate->object).qualname
                               : "";
    for (const Var &of : classes)
      if (in.identical(of, candidate) || (!qualname.empty() && in.isSubclass(of, qualname)))
        return makeBool(true);
  }
  return makeBool(false);
}

static CallResult type(Interpreter &in, ExternalCall &call) {
  if (failed(call.checkArity(1, 1)))
    return failure();
  // A namedtuple's class (type(t)(*items) rebuilds one), torch.Size, a return type.
  if (call.args[0]->is(K::Tuple) && call.args[0]->tupleClass)
    return call.args[0]->tupleClass;
  return in.getClassOf(call.args[0]);
}

//===----------------------------------------------------------------------===//
// Numbers
//===----------------------------------------------------------------------===//

/// min() and max() of constants, with `key=` and `default=` (the first of equal items
/// wins, as in Python); of tensors they are torch calls.
static CallResult minMax(Interpreter &in, ExternalCall &call) {
  std::vector<Var> &args = call.args;
  if (failed(call.checkKeywords({"key", "default"})))
    return failure();
  Var key = call.keyword("key"), fallback = call.keyword("default");
  if (key && key->is(K::None))
    key = Var();
  std::vector<Var> items = args;
  if (args.size() == 1) {
    FailureOr<std::vector<Var>> unpacked = in.unpack(args[0], call.loc);
    if (failed(unpacked))
      return failure();
    items = std::move(*unpacked);
  } else if (fallback) {
    return call.error() << call.name
                        << "() cannot take a default with multiple positional arguments";
  }
  if (items.empty()) {
    if (fallback)
      return fallback;
    return call.error() << call.name << "() of an empty sequence";
  }
  if (!key && llvm::any_of(items, [](const Var &v) { return v->is(K::Tensor); }))
    return CallResult::declined();
  FailureOr<std::vector<Var>> keys = in.sortKeys(items, key, call.loc);
  if (failed(keys))
    return failure();
  const std::vector<Var> &ranked = key ? *keys : items;
  size_t best = 0;
  for (size_t i = 1; i < items.size(); ++i) {
    FailureOr<Var> better =
        in.compareOp(call.name == "builtins.min" ? "<" : ">", ranked[i], ranked[best], call.loc);
    if (failed(better))
      return failure();
    FailureOr<bool> holds = in.truth(*better, call.loc);
    if (failed(holds))
      return failure();
    if (*holds)
      best = i;
  }
  return items[best];
}

/// round(x) (an int, halves to even) and round(x, n) (a float for a float, an int for an
/// int) of constants; of a tensor, a torch call.
static CallResult roundNumber(Interpreter &in, ExternalCall &call) {
  if (failed(call.checkArity(1, 2)))
    return failure();
  if (call.args[0]->is(K::Tensor))
    return CallResult::declined();
  std::optional<double> x = call.args[0]->getNumber();
  bool isInt = call.args[0]->is(K::Int) || call.args[0]->is(K::Bool);
  if (!x)
    return call.error() << "round() of " << describe(in.getHeap(), call.args[0]);
  Var digitsVar = call.args.size() == 2 ? call.args[1] : Var();
  if (!digitsVar || digitsVar->is(K::None)) {
    if (isInt)
      return makeInt(static_cast<int64_t>(*x), in.getContext());
    return makeInt(static_cast<int64_t>(std::nearbyint(*x)), in.getContext());
  }
  std::optional<int64_t> digits = digitsVar->getConstantInt();
  if (!digits)
    return call.error() << "round(): the number of digits must be an int";
  if (isInt) {
    // Exactly, halves to even: round(25, -1) is 20, round(35, -1) is 40.
    std::optional<int64_t> n = call.args[0]->getConstantInt();
    if (!n)
      return call.error() << "round() of a symbolic int";
    if (*digits >= 0)
      return makeInt(*n, in.getContext());
    if (*digits < -18)
      return makeInt(0, in.getContext());
    int64_t unit = 1;
    for (int64_t i = 0; i < -*digits; ++i)
      unit *= 10;
    int64_t quotient = *n / unit, remainder = *n % unit;
    if (remainder < 0) {
      quotient -= 1;
      remainder += unit;
    }
    if (2 * remainder > unit || (2 * remainder == unit && quotient % 2 != 0))
      quotient += 1;
    return makeInt(quotient * unit, in.getContext());
  }
  if (*digits >= 0 && std::isfinite(*x)) {
    // As CPython: the decimal nearest the double's exact value, halves to even
    // (round(2.675, 2) is 2.67: the double is 2.67499999...), read back.
    char text[400];
    std::snprintf(text, sizeof text, "%.*f", static_cast<int>(std::min<int64_t>(*digits, 340)), *x);
    return makeFloat(std::strtod(text, nullptr));
  }
  double scale = std::pow(10.0, static_cast<double>(*digits));
  return makeFloat(std::nearbyint(*x * scale) / scale);
}

/// CPython's hash of a constant int, bool, float, or a tuple of them (Objects/
/// longobject.c, Python/pyhash.c's _Py_HashDouble, tupleobject.c's xxHash-based
/// tuplehash); nullopt for values whose hash depends on the process (str and bytes are
/// salted, objects hash by address, NaN by identity).
static std::optional<uint64_t> pythonHash(const Var &value) {
  constexpr unsigned kBits = 61;
  constexpr uint64_t kModulus = (uint64_t(1) << kBits) - 1;
  auto finish = [](uint64_t x) { return x == uint64_t(-1) ? uint64_t(-2) : x; };
  auto hashInt = [&](int64_t n) {
    uint64_t magnitude = n < 0 ? uint64_t(0) - uint64_t(n) : uint64_t(n);
    uint64_t x = magnitude % kModulus;
    return finish(n < 0 ? uint64_t(0) - x : x);
  };
  if (value->is(K::Bool))
    return hashInt(value->boolValue);
  if (value->is(K::Int)) {
    std::optional<int64_t> n = value->getConstantInt();
    return n ? std::optional<uint64_t>(hashInt(*n)) : std::nullopt;
  }
  if (value->is(K::Float)) {
    double v = value->floatValue;
    if (std::isnan(v))
      return std::nullopt;
    if (std::isinf(v))
      return v > 0 ? uint64_t(314159) : uint64_t(-314159);
    int e = 0;
    double m = std::frexp(v, &e);
    int64_t sign = 1;
    if (m < 0) {
      sign = -1;
      m = -m;
    }
    uint64_t x = 0;
    while (m != 0) { // 28 bits at a time
      x = ((x << 28) & kModulus) | x >> (kBits - 28);
      m *= 268435456.0;
      e -= 28;
      auto y = static_cast<uint64_t>(m);
      m -= static_cast<double>(y);
      x += y;
      if (x >= kModulus)
        x -= kModulus;
    }
    e = e >= 0 ? e % int(kBits) : int(kBits) - 1 - ((-1 - e) % int(kBits));
    x = ((x << e) & kModulus) | x >> (kBits - e);
    return finish(x * uint64_t(sign));
  }
  if (value->is(K::Tuple)) {
    constexpr uint64_t kPrime1 = 11400714785074694791ULL, kPrime2 = 14029467366897019727ULL,
                       kPrime5 = 2870177450012600261ULL;
    uint64_t acc = kPrime5;
    for (const Var &item : value->items) {
      std::optional<uint64_t> lane = pythonHash(item);
      if (!lane)
        return std::nullopt;
      acc += *lane * kPrime2;
      acc = (acc << 31) | (acc >> 33);
      acc *= kPrime1;
    }
    acc += value->items.size() ^ (kPrime5 ^ 3527539UL);
    return acc == uint64_t(-1) ? uint64_t(1546275796) : acc;
  }
  return std::nullopt;
}

/// hash(value) of a constant int, bool, float or a tuple of them.
static CallResult hash(Interpreter &in, ExternalCall &call) {
  if (failed(call.checkArity(1, 1)) || failed(call.checkKeywords({})))
    return failure();
  std::optional<uint64_t> h = pythonHash(call.args[0]);
  if (!h)
    return call.error() << "hash() of " << describe(in.getHeap(), call.args[0])
                        << " is not supported (tgc hashes ints, floats, bools and tuples of "
                           "them; a str's hash is salted per process)";
  return makeInt(static_cast<int64_t>(*h), in.getContext());
}

/// divmod(a, b) of numbers: (a // b, a % b), with Python's rules.
static CallResult divMod(Interpreter &in, ExternalCall &call) {
  if (failed(call.checkArity(2, 2)))
    return failure();
  if (llvm::any_of(call.args, [](const Var &v) { return v->is(K::Tensor); }))
    return CallResult::declined();
  FailureOr<Var> quotient = in.binaryOp(2, call.args[0], call.args[1], call.loc); // floordiv
  if (failed(quotient))
    return failure();
  FailureOr<Var> remainder = in.binaryOp(6, call.args[0], call.args[1], call.loc); // mod
  if (failed(remainder))
    return failure();
  return makeTuple({*quotient, *remainder});
}

/// pow(base, exp[, mod]): base ** exp (a tensor's too, as the operator), then % mod.
static CallResult power(Interpreter &in, ExternalCall &call) {
  if (failed(call.checkArity(2, 3)) || failed(call.checkKeywords({})))
    return failure();
  FailureOr<Var> result = in.binaryOp(8, call.args[0], call.args[1], call.loc); // pow
  if (failed(result) || call.args.size() == 2 || call.args[2]->is(K::None))
    return result;
  return in.binaryOp(6, *result, call.args[2], call.loc); // mod
}

/// abs() of a constant, or of a number from a tensor's value; of a tensor, a torch call.
static CallResult absoluteValue(Interpreter &in, ExternalCall &call) {
  std::vector<Var> &args = call.args;
  if (failed(call.checkArity(1, 1)))
    return failure();
  if (args[0]->is(K::Tensor)) {
    if (args[0]->number == Variable::Number::None)
      return CallResult::declined();
    CallArguments absArguments{{args[0]}, {}};
    FailureOr<Var> result = in.callTorchFunction("torch.abs", absArguments, call.loc);
    if (failed(result))
      return failure();
    return in.asNumber(*result,
                       args[0]->number == Variable::Number::Float ? Variable::Number::Float
                                                                  : Variable::Number::Int,
                       call.loc);
  }
  if (std::optional<int64_t> i = args[0]->getConstantInt(); i && !args[0]->is(K::Float))
    return makeInt(std::abs(*i), in.getContext());
  if (args[0]->is(K::Float))
    return makeFloat(std::fabs(args[0]->floatValue));
  return call.error() << "abs() of " << describe(in.getHeap(), args[0]);
}

/// sum(iterable, start=0): `start + item0 + item1 ...` with Python's operators.
static CallResult sum(Interpreter &in, ExternalCall &call) {
  std::vector<Var> &args = call.args;
  if (failed(call.checkArity(1, 2)))
    return failure();
  FailureOr<std::vector<Var>> items = in.unpack(args[0], call.loc);
  if (failed(items))
    return failure();
  Var total = args.size() == 2 ? args[1] : makeInt(0, in.getContext());
  for (const Var &item : *items) {
    FailureOr<Var> next = in.binaryOp(0, total, item, call.loc); // operator.add
    if (failed(next))
      return failure();
    total = *next;
  }
  return total;
}

//===----------------------------------------------------------------------===//
// Iterables
//===----------------------------------------------------------------------===//

/// sorted() of constants (numbers or strings), or of anything by a key function whose
/// results are constants, with reverse=.
static CallResult sorted(Interpreter &in, ExternalCall &call) {
  if (failed(call.checkArity(1, 1)))
    return failure();
  std::string unsupported;
  Var key;
  std::optional<bool> reverse = sortReverse(call.arguments.keywords, unsupported, key);
  if (!reverse)
    return call.error() << "sorted() with " << unsupported << "= is not supported";
  FailureOr<std::vector<Var>> items = in.unpack(call.args[0], call.loc);
  if (failed(items))
    return failure();
  std::vector<Var> sortedItems = *items;
  FailureOr<std::vector<Var>> keys = in.sortKeys(sortedItems, key, call.loc);
  if (failed(keys))
    return failure();
  if (!sortConstants(sortedItems, *reverse, key ? &*keys : nullptr))
    return call.error() << "sorted() of values whose order is not known at capture time "
                           "(constant numbers, strings and tuples of them sort)";
  return in.makeList(std::move(sortedItems));
}

/// any() and all().
static CallResult anyAll(Interpreter &in, ExternalCall &call) {
  if (failed(call.checkArity(1, 1)))
    return failure();
  FailureOr<std::vector<Var>> items = in.unpack(call.args[0], call.loc);
  if (failed(items))
    return failure();
  bool isAny = call.name == "builtins.any";
  for (const Var &item : *items) {
    FailureOr<bool> b = in.truth(item, call.loc);
    if (failed(b))
      return failure();
    if (*b == isAny)
      return makeBool(isAny);
  }
  return makeBool(!isAny);
}

static CallResult iter(Interpreter &in, ExternalCall &call) {
  if (failed(call.checkArity(1, 1)))
    return failure();
  return in.iterate(call.args[0], call.loc);
}

static CallResult next(Interpreter &in, ExternalCall &call) {
  std::vector<Var> &args = call.args;
  if (failed(call.checkArity(1, 2)))
    return failure();
  Heap &heap = in.getHeap();
  if (heap.kindOf(args[0]) != H::Iterator)
    return call.error() << "next() of a non-iterator";
  FailureOr<Var> item = in.nextItem(args[0], call.loc);
  if (failed(item))
    return failure();
  if (*item)
    return *item;
  if (args.size() == 2)
    return args[1];
  return in.raiseBuiltinException("builtins.StopIteration", {}, call.loc,
                                  "next() of an exhausted iterator raises StopIteration");
}

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

/// callable(x): functions, methods, classes, callables known by name, and instances whose
/// class defines `__call__` (modules, functools.partial).
static CallResult isCallable(Interpreter &in, ExternalCall &call) {
  if (failed(call.checkArity(1, 1)))
    return failure();
  const Var &value = call.args[0];
  if (value->is(K::External) || value->is(K::Method))
    return makeBool(true);
  std::optional<H> kind = in.getHeap().kindOf(value);
  if (kind == H::Function || kind == H::Class)
    return makeBool(true);
  if (kind != H::Instance)
    return makeBool(false);
  Var cls = in.getHeap().get(value->object).classObject;
  if (cls->is(K::External))
    return makeBool(bool(getCallRegistry().lookup((cls->name + ".__call__"))));
  if (in.isSubclass(cls, kModuleClass))
    return makeBool(true);
  FailureOr<Var> dunderCall = in.lookupInClass(cls, "__call__");
  if (failed(dunderCall))
    return failure();
  return makeBool(bool(*dunderCall));
}

/// getattr() and hasattr() with a constant name. Whether the object has the attribute
/// decides the program, so it is a guard (unless the program itself set or deleted it).
static CallResult getAttr(Interpreter &in, ExternalCall &call) {
  std::vector<Var> &args = call.args;
  llvm::StringRef name = call.name;
  bool isHasattr = name == "builtins.hasattr";
  if (failed(call.checkArity(2, isHasattr ? 2 : 3)))
    return failure();
  if (!args[1]->is(K::Str))
    return call.error() << name << "() needs a constant attribute name";
  FailureOr<Var> value = in.lookupAttribute(args[0], args[1]->name, call.loc);
  if (failed(value))
    return failure();
  // An attribute found only as a method of a library base class (lookupAttribute's
  // fallback): whether the class has it decides hasattr and getattr's default.
  if (*value && (*value)->is(K::Method) && (*value)->items[0]->is(K::External) &&
      (isHasattr || args.size() == 3)) {
    llvm::StringRef method = (*value)->items[0]->name;
    auto [base, attribute] = method.rsplit('.');
    // A tensor answers from torch.Tensor's attributes as the capture listed them, a
    // module from nn.Module's; for other classes it is not known.
    bool listed = base == kTensorClass && in.hasTensorAttributeList();
    if (attribute == args[1]->name) {
      if (base != kModuleClass && !listed)
        return call.error() << name << "(): whether " << describe(in.getHeap(), args[0]) << " (a "
                            << base << ") has attribute '" << attribute
                            << "' is not known at capture time";
      if (listed ? !in.isTensorAttribute(attribute) : !isModuleAttribute(attribute))
        *value = Var();
    }
  }
  if ((isHasattr || args.size() == 3) && args[0]->is(K::Object))
    in.noteRead(GuardRead::Step::HasAttribute, args[0]->object, args[1]->name, nullptr,
                makeBool(*value != nullptr), call.loc);
  if (isHasattr)
    return makeBool(*value != nullptr);
  if (*value)
    return *value;
  if (args.size() == 3)
    return args[2];
  return in.raiseBuiltinException("builtins.AttributeError", {args[1]}, call.loc,
                                  describe(in.getHeap(), args[0]) + " has no attribute '" +
                                      args[1]->name + "'");
}

/// setattr(object, name, value) and delattr(object, name) with a constant name.
static CallResult setAttr(Interpreter &in, ExternalCall &call) {
  std::vector<Var> &args = call.args;
  bool isSet = call.name == "builtins.setattr";
  if (failed(call.checkArity(isSet ? 3 : 2, isSet ? 3 : 2)))
    return failure();
  if (!args[1]->is(K::Str))
    return call.error() << call.name << "() needs a constant attribute name";
  if (failed(in.setAttribute(args[0], args[1]->name, isSet ? args[2] : Var(), call.loc)))
    return failure();
  return makeNone();
}

//===----------------------------------------------------------------------===//
// Side effects
//===----------------------------------------------------------------------===//

/// `object.__init__` and `AssertionError(...)` (of an `assert` that holds) do nothing.
static CallResult returnNone(Interpreter &, ExternalCall &) { return makeNone(); }

/// print() runs between graphs with --allow-graph-breaks; else it is a graph break.
static CallResult print(Interpreter &in, ExternalCall &call) {
  if (!in.canBreakGraph())
    return call.error() << "graph break: print() is a side effect tgc does not replay "
                           "(compile with --allow-graph-breaks to run it between graphs)";
  if (failed(in.breakOnCall(call.name, call.args, call.arguments.keywords, call.loc)))
    return failure();
  return makeNone();
}

void tgc::py::registerBuiltins(CallRegistry &registry) {
  registry.add("builtins.len", len);
  registry.add("builtins.isinstance", isInstance);
  registry.add("builtins.issubclass", isInstance);
  registry.add("builtins.type", type);
  registry.add("builtins.divmod", divMod);
  registry.add("builtins.pow", power);
  registry.add("builtins.round", roundNumber);
  registry.add("builtins.hash", hash);
  registry.add("builtins.min", minMax);
  registry.add("builtins.max", minMax);
  registry.add("builtins.abs", absoluteValue);
  registry.add("builtins.sum", sum);
  registry.add("builtins.sorted", sorted);
  registry.add("builtins.any", anyAll);
  registry.add("builtins.all", anyAll);
  registry.add("builtins.iter", iter);
  registry.add("builtins.next", next);
  registry.add("builtins.callable", isCallable);
  // typing.cast(type, value) only informs type checkers: the value.
  registry.add("typing.cast", [](Interpreter &, ExternalCall &call) -> CallResult {
    if (failed(call.checkArity(2, 2)) || failed(call.checkKeywords({})))
      return failure();
    return call.args[1];
  });
  registry.add("builtins.getattr", getAttr);
  registry.add("builtins.hasattr", getAttr);
  registry.add("builtins.setattr", setAttr);
  registry.add("builtins.delattr", setAttr);
  registry.add("builtins.object.__init__", returnNone);
  registry.add("builtins.print", print);
}
