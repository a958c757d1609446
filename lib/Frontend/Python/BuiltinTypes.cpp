// Python's builtin types called as constructors in the bytecode interpreter: range,
// enumerate, zip, reversed, list, tuple, set, dict, int, float, bool, str and super.
#include "Interpreter.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include <cmath>

using namespace mlir;
using namespace tgc;
using namespace tgc::py;

using K = Variable::Kind;
using H = HeapObject::Kind;

static CallResult range(Interpreter &in, ExternalCall &call) {
  std::vector<Var> &args = call.args;
  if (failed(call.checkArity(1, 3)))
    return failure();
  MLIRContext *ctx = in.getContext();
  Variable range;
  range.kind = K::Range;
  if (args.size() == 1)
    range.items = {makeInt(0, ctx), args[0], makeInt(1, ctx)};
  else
    range.items = {args[0], args[1], args.size() == 3 ? args[2] : makeInt(1, ctx)};
  return makeVar(std::move(range));
}

/// enumerate(), zip() and reversed(): iterators over what their arguments yield.
static CallResult iterators(Interpreter &in, ExternalCall &call) {
  std::vector<Var> &args = call.args;
  std::vector<std::vector<Var>> sequences;
  for (const Var &arg : args) {
    FailureOr<std::vector<Var>> items = in.unpack(arg, call.loc);
    if (failed(items))
      return failure();
    sequences.push_back(std::move(*items));
  }
  std::vector<Var> items;
  if (call.name == "builtins.reversed") {
    if (failed(call.checkArity(1, 1)))
      return failure();
    items.assign(sequences[0].rbegin(), sequences[0].rend());
  } else if (call.name == "builtins.enumerate") {
    if (failed(call.checkArity(1, 2)))
      return failure();
    int64_t start = 0;
    if (args.size() == 2) {
      FailureOr<int64_t> s = constantIntArgument(args[1], "enumerate's start", call.loc);
      if (failed(s))
        return failure();
      start = *s;
    }
    for (auto [i, item] : llvm::enumerate(sequences[0]))
      items.push_back(makeTuple({makeInt(start + static_cast<int64_t>(i), in.getContext()), item}));
  } else {
    size_t n = sequences.empty() ? 0 : SIZE_MAX;
    for (auto &sequence : sequences)
      n = std::min(n, sequence.size());
    for (size_t i = 0; i < n; ++i) {
      std::vector<Var> tuple;
      for (auto &sequence : sequences)
        tuple.push_back(sequence[i]);
      items.push_back(makeTuple(std::move(tuple)));
    }
  }
  return in.makeSequence(H::Iterator, std::move(items));
}

/// list(), tuple() and set() of an iterable.
static CallResult sequence(Interpreter &in, ExternalCall &call) {
  std::vector<Var> &args = call.args;
  if (failed(call.checkArity(0, 1)))
    return failure();
  std::vector<Var> items;
  if (!args.empty()) {
    FailureOr<std::vector<Var>> unpacked = in.unpack(args[0], call.loc);
    if (failed(unpacked))
      return failure();
    items = std::move(*unpacked);
  }
  if (call.name == "builtins.tuple")
    return makeTuple(std::move(items));
  if (call.name == "builtins.list")
    return in.makeList(std::move(items));
  // A frozenset is a set here (no program it runs can tell them apart but by mutating it).
  return in.makeSet(items, call.loc);
}

/// dict() of a dict or of key/value pairs, and keywords.
static CallResult dict(Interpreter &in, ExternalCall &call) {
  std::vector<Var> &args = call.args;
  HeapObject dict;
  dict.kind = H::Dict;
  if (!args.empty()) {
    if (in.getHeap().kindOf(args[0]) == H::Dict) {
      dict.entries = in.getHeap().get(args[0]->object).entries;
    } else {
      FailureOr<std::vector<Var>> pairs = in.unpack(args[0], call.loc);
      if (failed(pairs))
        return failure();
      for (const Var &pair : *pairs) {
        FailureOr<std::vector<Var>> kv = in.unpack(pair, call.loc);
        if (failed(kv) || kv->size() != 2)
          return call.error() << "dict() needs key/value pairs";
        dict.entries.emplace_back((*kv)[0], (*kv)[1]);
      }
    }
  }
  for (auto &[key, value] : call.arguments.keywords)
    dict.entries.emplace_back(makeStr(key), value);
  return makeObject(in.newObject(std::move(dict)));
}

/// float() of a string: Python's spellings of infinities and NaN, and decimals.
static CallResult parseFloat(ExternalCall &call, const std::string &original) {
  std::string text = llvm::StringRef(original).trim().lower();
  if (text == "inf" || text == "+inf" || text == "infinity")
    return makeFloat(INFINITY);
  if (text == "-inf" || text == "-infinity")
    return makeFloat(-INFINITY);
  if (text == "nan")
    return makeFloat(std::nan(""));
  double parsed;
  if (!llvm::StringRef(text).getAsDouble(parsed))
    return makeFloat(parsed);
  return call.error() << "could not convert string to float: '" << original << "'";
}

/// int(), float(), bool() and operator.index() of one value.
static CallResult number(Interpreter &in, ExternalCall &call) {
  std::vector<Var> &args = call.args;
  llvm::StringRef name = call.name;
  if (failed(call.checkArity(1, 1)))
    return failure();
  if (name == "builtins.bool") {
    FailureOr<bool> b = in.truth(args[0], call.loc);
    if (failed(b))
      return failure();
    return makeBool(*b);
  }
  if (args[0]->is(K::Int) && name != "builtins.float")
    return args[0];
  // int()/float() of a number from a tensor's value: a cast (int() truncates).
  if (args[0]->is(K::Tensor) && args[0]->number != Variable::Number::None)
    return in.asNumber(args[0],
                       name == "builtins.float" ? Variable::Number::Float : Variable::Number::Int,
                       call.loc);
  if (args[0]->is(K::Str) && name == "builtins.float")
    return parseFloat(call, args[0]->name);
  std::optional<double> number = args[0]->getNumber();
  if (!number)
    return call.error() << name << "() of " << describe(in.getHeap(), args[0])
                        << " is not supported (a tensor's value is not known at capture time)";
  if (name == "builtins.float")
    return makeFloat(*number);
  return makeInt(static_cast<int64_t>(std::trunc(*number)), in.getContext());
}

static CallResult str(Interpreter &in, ExternalCall &call) {
  std::vector<Var> &args = call.args;
  if (failed(call.checkArity(1, 1)))
    return failure();
  if (args[0]->is(K::Str))
    return args[0];
  if (std::optional<int64_t> i = args[0]->getConstantInt(); i && args[0]->is(K::Int))
    return makeStr(std::to_string(*i));
  // An object: its class's __str__, else an exception's message.
  if (in.getHeap().kindOf(args[0]) == HeapObject::Kind::Instance) {
    FailureOr<Var> method = in.userSpecialMethod(args[0], "__str__", call.loc);
    if (failed(method))
      return failure();
    if (*method)
      return in.call(*method, {}, call.loc);
    FailureOr<Var> cls = in.getClassOf(args[0]);
    if (failed(cls))
      return failure();
    if (in.isExceptionClass(*cls)) {
      // KeyError shows its one argument as repr() does (`'k'`).
      Var exceptionArgs = in.getHeap().get(args[0]->object).getAttribute("args");
      if (in.isSubclass(*cls, "builtins.KeyError") && exceptionArgs &&
          exceptionArgs->is(K::Tuple) && exceptionArgs->items.size() == 1) {
        FailureOr<std::string> text = formatPythonValue(exceptionArgs->items[0], "", 2, call.loc);
        if (failed(text))
          return failure();
        return makeStr(*text);
      }
      return makeStr(exceptionText(in.getHeap(), args[0], call.loc));
    }
  }
  // A class: "<class 'module.QualName'>" (its qualname holds the module; transformers
  // keys a registry on it).
  if (in.getHeap().kindOf(args[0]) == HeapObject::Kind::Class)
    return makeStr("<class '" + in.getHeap().get(args[0]->object).qualname + "'>");
  // A library class known by name (`str(type(x))` of a tensor: transformers guesses the
  // framework from it): builtins' types by their own name, others by their dotted name.
  // Classes are told from functions by name, as Python's naming conventions do
  // (CamelCase classes; lowercase functions).
  if (args[0]->is(K::External)) {
    auto [module, last] = llvm::StringRef(args[0]->name).rsplit('.');
    if (module == "builtins" &&
        llvm::is_contained({"int", "float", "bool", "str", "bytes", "complex", "list", "tuple",
                            "dict", "set", "frozenset", "object", "type", "NoneType", "slice",
                            "range"},
                           last))
      return makeStr(("<class '" + last + "'>").str());
    if (!last.empty() && llvm::isUpper(last.front()))
      return makeStr("<class '" + args[0]->name + "'>");
  }
  return call.error() << "str() of " << describe(in.getHeap(), args[0]) << " is not supported";
}

/// repr(value): a constant as Python shows it (strings quoted), a user object through its
/// class's `__repr__`, an exception as its class and arguments (`KeyError('k')`).
static CallResult repr(Interpreter &in, ExternalCall &call) {
  if (failed(call.checkArity(1, 1)) || failed(call.checkKeywords({})))
    return failure();
  Var value = call.args[0];
  if (in.getHeap().kindOf(value) == HeapObject::Kind::Instance) {
    FailureOr<Var> method = in.userSpecialMethod(value, "__repr__", call.loc);
    if (failed(method))
      return failure();
    if (*method)
      return in.call(*method, {}, call.loc);
    FailureOr<Var> cls = in.getClassOf(value);
    if (failed(cls))
      return failure();
    Var exceptionArgs = in.getHeap().get(value->object).getAttribute("args");
    if (in.isExceptionClass(*cls) && exceptionArgs && exceptionArgs->is(K::Tuple)) {
      std::vector<std::string> items;
      for (const Var &item : exceptionArgs->items) {
        FailureOr<std::string> text = formatPythonValue(item, "", 2, call.loc);
        if (failed(text))
          return failure();
        items.push_back(*text);
      }
      std::string name = (*cls)->is(K::External)
                             ? llvm::StringRef((*cls)->name).rsplit('.').second.str()
                             : in.getHeap().get((*cls)->object).name;
      return makeStr(name + "(" + llvm::join(items, ", ") + ")");
    }
  }
  FailureOr<std::string> text = formatPythonValue(value, "", 2, call.loc);
  if (failed(text))
    return failure();
  return makeStr(*text);
}

/// slice(stop), slice(start, stop[, step]): what `a:b:c` builds (BUILD_SLICE).
static CallResult slice(Interpreter &, ExternalCall &call) {
  if (failed(call.checkArity(1, 3)))
    return failure();
  if (!call.arguments.keywords.empty())
    return call.error() << "slice() takes no keyword arguments";
  Variable slice;
  slice.kind = K::Slice;
  if (call.args.size() == 1)
    slice.items = {makeNone(), call.args[0], makeNone()};
  else
    slice.items = {call.args[0], call.args[1], call.args.size() == 3 ? call.args[2] : makeNone()};
  return makeVar(std::move(slice));
}

/// super(cls, self); the argument-less form is LOAD_SUPER_ATTR's.
static CallResult super(Interpreter &, ExternalCall &call) {
  if (failed(call.checkArity(2, 2)))
    return call.error() << "super() without arguments outside a method";
  Variable super;
  super.kind = K::Super;
  super.items = {call.args[0], call.args[1]};
  return makeVar(std::move(super));
}

void tgc::py::registerBuiltinTypes(CallRegistry &registry) {
  registry.add("builtins.range", range);
  registry.add("builtins.enumerate", iterators);
  registry.add("builtins.zip", iterators);
  registry.add("builtins.reversed", iterators);
  registry.add("builtins.list", sequence);
  registry.add("builtins.tuple", sequence);
  registry.add("builtins.set", sequence);
  registry.add("builtins.frozenset", sequence);
  registry.add("builtins.dict", dict);
  registry.add("builtins.int", number);
  registry.add("builtins.float", number);
  registry.add("builtins.bool", number);
  registry.add("operator.index", number);
  registry.add("builtins.str", str);
  registry.add("builtins.repr", repr);
  registry.add("builtins.super", super);
  registry.add("builtins.slice", slice);
}
