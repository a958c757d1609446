// Python's builtin types called as constructors in the bytecode interpreter: range,
// enumerate, zip, reversed, list, tuple, set, dict, int, float, bool, str and super.
#include "Formatting.h"
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
  bool isEnumerate = call.name == "builtins.enumerate";
  if (failed(call.checkKeywords(isEnumerate ? std::initializer_list<llvm::StringRef>{"start"}
                                : call.name == "builtins.zip"
                                    ? std::initializer_list<llvm::StringRef>{"strict"}
                                    : std::initializer_list<llvm::StringRef>{})))
    return failure();
  std::vector<std::vector<Var>> sequences;
  Var strict = call.keyword("strict");
  bool zipRows =
      call.name == "builtins.zip" && !(strict && strict->is(K::Bool) && strict->boolValue);
  if (zipRows) {
    // Rows as long as the shortest finite argument (itertools.count pairs with a list).
    FailureOr<std::vector<std::vector<Var>>> columns = in.unpackZipped(args, call.loc);
    if (failed(columns))
      return failure();
    sequences = std::move(*columns);
  }
  // enumerate's second argument is its start, not an iterable; zip(strict=True) reads
  // every argument to its end.
  for (const Var &arg : llvm::ArrayRef(args).take_front(isEnumerate ? 1
                                                        : zipRows   ? 0
                                                                    : args.size())) {
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
    if (Var given = args.size() == 2 ? args[1] : call.keyword("start")) {
      FailureOr<int64_t> s = constantIntArgument(given, "enumerate's start", call.loc);
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
    // zip(..., strict=True): iterables of different lengths are a ValueError.
    if (!zipRows && call.name == "builtins.zip" &&
        llvm::any_of(sequences, [&](auto &s) { return s.size() != n; }))
      return call.error() << "zip(strict=True): the arguments have different lengths";
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

/// dict() of a dict or of key/value pairs, and keywords (a key given again keeps its
/// first position and takes the last value).
static CallResult dict(Interpreter &in, ExternalCall &call) {
  std::vector<Var> &args = call.args;
  if (failed(call.checkArity(0, 1)))
    return failure();
  HeapObject object;
  object.kind = H::Dict;
  Var dict = makeObject(in.newObject(std::move(object)));
  std::vector<std::pair<Var, Var>> entries;
  if (!args.empty()) {
    if (in.getHeap().kindOf(args[0]) == H::Dict) {
      entries = in.getHeap().get(args[0]->object).entries;
    } else {
      FailureOr<std::vector<Var>> pairs = in.unpack(args[0], call.loc);
      if (failed(pairs))
        return failure();
      for (const Var &pair : *pairs) {
        FailureOr<std::vector<Var>> kv = in.unpack(pair, call.loc);
        if (failed(kv) || kv->size() != 2)
          return call.error() << "dict() needs key/value pairs";
        entries.emplace_back((*kv)[0], (*kv)[1]);
      }
    }
  }
  for (auto &[key, value] : call.arguments.keywords)
    entries.emplace_back(makeStr(key), value);
  for (auto &[key, value] : entries)
    if (failed(in.storeSubscript(dict, key, value, call.loc, /*raw=*/true)))
      return failure();
  return dict;
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

/// int(text, base) as Python parses it: surrounding whitespace, a sign, underscores
/// between digits, a 0x/0o/0b prefix (required for base 0, allowed for its own base).
static CallResult parseInt(Interpreter &in, ExternalCall &call, llvm::StringRef original,
                           int64_t base) {
  llvm::StringRef text = llvm::StringRef(original).trim();
  bool negative = text.consume_front("-");
  if (!negative)
    text.consume_front("+");
  auto prefixBase = [&]() -> int64_t {
    llvm::StringRef lower = text.take_front(2);
    if (lower.equals_insensitive("0x"))
      return 16;
    if (lower.equals_insensitive("0o"))
      return 8;
    if (lower.equals_insensitive("0b"))
      return 2;
    return 0;
  };
  int64_t prefixed = prefixBase();
  if (base == 0)
    base = prefixed ? prefixed : 10;
  if (prefixed && prefixed == base)
    text = text.drop_front(2);
  std::string digits;
  bool valid =
      !text.empty() && !text.starts_with("_") && !text.ends_with("_") && !text.contains("__");
  for (char c : text)
    if (c != '_')
      digits.push_back(c);
  uint64_t magnitude;
  if (!valid || llvm::StringRef(digits).getAsInteger(base, magnitude) ||
      magnitude > static_cast<uint64_t>(INT64_MAX) + (negative ? 1 : 0))
    return call.error() << "invalid literal for int() with base " << base << ": '" << original
                        << "' (or one past 64 bits)";
  return makeInt(negative ? static_cast<int64_t>(0 - magnitude) : static_cast<int64_t>(magnitude),
                 in.getContext());
}

/// int(), float(), bool() and operator.index() of one value; int(str, base).
static CallResult number(Interpreter &in, ExternalCall &call) {
  std::vector<Var> &args = call.args;
  llvm::StringRef name = call.name;
  if (name == "builtins.int" && !args.empty() && args[0]->is(K::Str)) {
    if (failed(call.checkArity(1, 2)) || failed(call.checkKeywords({"base"})))
      return failure();
    int64_t base = 10;
    if (Var given = args.size() == 2 ? args[1] : call.keyword("base")) {
      FailureOr<int64_t> b = constantIntArgument(given, "int()'s base", call.loc);
      if (failed(b))
        return failure();
      if (*b != 0 && (*b < 2 || *b > 36))
        return call.error() << "int() base must be >= 2 and <= 36, or 0";
      base = *b;
    }
    return parseInt(in, call, args[0]->name, base);
  }
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

/// ord() of a one-character str and chr() of a code point.
static CallResult characterCode(Interpreter &in, ExternalCall &call) {
  if (failed(call.checkArity(1, 1)))
    return failure();
  const Var &arg = call.args[0];
  if (call.name == "builtins.ord") {
    if (!arg->is(K::Str) || strCharacters(arg->name).size() != 1)
      return call.error() << "ord() expected a character, got " << describe(in.getHeap(), arg);
    // Decode the character's UTF-8 bytes.
    llvm::StringRef bytes = arg->name;
    auto lead = static_cast<unsigned char>(bytes[0]);
    uint32_t code = bytes.size() == 1 ? lead : lead & (0x7F >> bytes.size());
    for (char c : bytes.drop_front())
      code = (code << 6) | (static_cast<unsigned char>(c) & 0x3F);
    return makeInt(code, in.getContext());
  }
  std::optional<int64_t> code = arg->getConstantInt();
  if (!code || !arg->is(K::Int))
    return call.error() << "chr() takes an int, got " << describe(in.getHeap(), arg);
  if (*code < 0 || *code > 0x10FFFF)
    return call.error() << "chr() arg not in range(0x110000) (ValueError)";
  std::string text;
  auto c = static_cast<uint32_t>(*code);
  if (c < 0x80) {
    text.push_back(static_cast<char>(c));
  } else if (c < 0x800) {
    text.push_back(static_cast<char>(0xC0 | (c >> 6)));
    text.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else if (c < 0x10000) {
    text.push_back(static_cast<char>(0xE0 | (c >> 12)));
    text.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    text.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else {
    text.push_back(static_cast<char>(0xF0 | (c >> 18)));
    text.push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
    text.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    text.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  }
  return makeStr(text);
}

/// dict.fromkeys(iterable, value=None): each key mapped to the same value.
static CallResult dictFromKeys(Interpreter &in, ExternalCall &call) {
  if (failed(call.checkArity(1, 2)))
    return failure();
  FailureOr<std::vector<Var>> keys = in.unpack(call.args[0], call.loc);
  if (failed(keys))
    return failure();
  Var value = call.args.size() == 2 ? call.args[1] : makeNone();
  HeapObject object;
  object.kind = H::Dict;
  Var dict = makeObject(in.newObject(std::move(object)));
  for (const Var &key : *keys)
    if (failed(in.storeSubscript(dict, key, value, call.loc, /*raw=*/true)))
      return failure();
  return dict;
}

static CallResult str(Interpreter &in, ExternalCall &call) {
  std::vector<Var> &args = call.args;
  if (failed(call.checkArity(1, 1)))
    return failure();
  if (args[0]->is(K::Str))
    return args[0];
  if (std::optional<int64_t> i = args[0]->getConstantInt(); i && args[0]->is(K::Int))
    return makeStr(std::to_string(*i));
  // A list or dict (a tuple holding one): str() is its repr().
  if (holdsPlainContainer(in.getHeap(), args[0])) {
    FailureOr<std::string> text = containerRepr(in.getHeap(), args[0], call.loc);
    if (failed(text))
      return failure();
    return makeStr(*text);
  }
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
  FailureOr<std::string> text = holdsPlainContainer(in.getHeap(), value)
                                    ? containerRepr(in.getHeap(), value, call.loc)
                                    : formatPythonValue(value, "", 2, call.loc);
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
  registry.add("builtins.ord", characterCode);
  registry.add("builtins.chr", characterCode);
  registry.add("builtins.dict.fromkeys", dictFromKeys);
  registry.add("builtins.repr", repr);
  registry.add("builtins.super", super);
  registry.add("builtins.slice", slice);
}
