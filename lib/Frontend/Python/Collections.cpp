// The standard library's containers and function tools in the bytecode interpreter:
// collections.deque, OrderedDict, defaultdict and Counter (a list or dict object whose class is
// the external type, so that their own methods come first and the list's or dict's
// apply otherwise), functools.partial and reduce, and the itertools that programs use
// to build loops over constants (product, chain, zip_longest, islice, accumulate,
// repeat). Each works on what the interpreter holds at capture time; an argument it
// cannot model is a clear error at the call.
#include "Interpreter.h"

#include "llvm/ADT/STLExtras.h"

#include <functional>
#include <limits>
#include <numeric>
#include <set>

using namespace mlir;
using namespace tgc;
using namespace tgc::py;

using K = Variable::Kind;
using H = HeapObject::Kind;

static constexpr llvm::StringLiteral kDeque = "collections.deque";
static constexpr llvm::StringLiteral kOrderedDict = "collections.OrderedDict";
static constexpr llvm::StringLiteral kDefaultDict = "collections.defaultdict";
static constexpr llvm::StringLiteral kPartial = "functools.partial";
static constexpr llvm::StringLiteral kCounter = "collections.Counter";

/// The object of `call.args[0]` when it is a `kind` object of class `cls`.
static std::optional<ObjectId> selfOfClass(Interpreter &in, const ExternalCall &call, H kind,
                                           llvm::StringRef cls) {
  if (call.args.empty() || in.getHeap().kindOf(call.args[0]) != kind)
    return std::nullopt;
  const Var &classObject = in.getHeap().get(call.args[0]->object).classObject;
  if (!classObject || !classObject->is(K::External) || classObject->name != cls)
    return std::nullopt;
  return call.args[0]->object;
}

//===----------------------------------------------------------------------===//
// collections.deque
//===----------------------------------------------------------------------===//

/// The deque's maxlen, or nullopt when it is unbounded.
static std::optional<int64_t> dequeMaxlen(const HeapObject &deque) {
  Var maxlen = deque.getAttribute("maxlen");
  if (!maxlen || maxlen->is(K::None))
    return std::nullopt;
  return maxlen->getConstantInt();
}

/// deque(iterable=(), maxlen=None): a list object of class collections.deque.
static CallResult dequeNew(Interpreter &in, ExternalCall &call) {
  if (failed(call.checkArity(0, 2)) || failed(call.checkKeywords({"iterable", "maxlen"})))
    return failure();
  Var iterable = call.args.size() >= 1 ? call.args[0] : call.keyword("iterable");
  Var maxlen = call.args.size() == 2 ? call.args[1] : call.keyword("maxlen");
  if (!maxlen)
    maxlen = makeNone();
  if (!maxlen->is(K::None) && (!maxlen->getConstantInt() || *maxlen->getConstantInt() < 0))
    return call.error() << "deque's maxlen must be None or a constant int >= 0";
  std::vector<Var> items;
  if (iterable) {
    FailureOr<std::vector<Var>> unpacked = in.unpack(iterable, call.loc);
    if (failed(unpacked))
      return failure();
    items = std::move(*unpacked);
  }
  HeapObject deque;
  deque.kind = H::List;
  deque.classObject = makeExternal(kDeque);
  deque.attributes.emplace_back("maxlen", maxlen);
  if (std::optional<int64_t> n = dequeMaxlen(deque); n && static_cast<int64_t>(items.size()) > *n)
    items.erase(items.begin(), items.end() - *n);
  deque.items = std::move(items);
  return makeObject(in.newObject(std::move(deque)));
}

/// append, appendleft, extend, extendleft: items added at one end drop as many from the
/// other once maxlen is reached.
static CallResult dequeAdd(Interpreter &in, ExternalCall &call) {
  std::optional<ObjectId> id = selfOfClass(in, call, H::List, kDeque);
  if (!id || call.args.size() != 2 || !call.arguments.keywords.empty())
    return CallResult::declined();
  llvm::StringRef method = call.name.rsplit('.').second;
  bool left = method.ends_with("left");
  std::vector<Var> added = {call.args[1]};
  if (method.starts_with("extend")) {
    FailureOr<std::vector<Var>> unpacked = in.unpack(call.args[1], call.loc);
    if (failed(unpacked))
      return failure();
    added = std::move(*unpacked);
  }
  std::optional<int64_t> maxlen = dequeMaxlen(in.getHeap().get(*id));
  HeapObject &deque = in.mutateObject(*id, SideEffect::Kind::SetContents, "", nullptr, call.loc);
  for (Var &item : added) {
    if (left)
      deque.items.insert(deque.items.begin(), item);
    else
      deque.items.push_back(item);
    if (maxlen && static_cast<int64_t>(deque.items.size()) > *maxlen) {
      if (left)
        deque.items.pop_back();
      else
        deque.items.erase(deque.items.begin());
    }
  }
  return makeNone();
}

static CallResult dequePopLeft(Interpreter &in, ExternalCall &call) {
  std::optional<ObjectId> id = selfOfClass(in, call, H::List, kDeque);
  if (!id || call.args.size() != 1 || !call.arguments.keywords.empty())
    return CallResult::declined();
  if (in.getHeap().get(*id).items.empty())
    return call.error() << "pop from an empty deque (IndexError)";
  HeapObject &deque = in.mutateObject(*id, SideEffect::Kind::SetContents, "", nullptr, call.loc);
  Var item = deque.items.front();
  deque.items.erase(deque.items.begin());
  return item;
}

static CallResult dequeRotate(Interpreter &in, ExternalCall &call) {
  std::optional<ObjectId> id = selfOfClass(in, call, H::List, kDeque);
  if (!id || call.args.size() > 2 || !call.arguments.keywords.empty())
    return CallResult::declined();
  int64_t n = 1;
  if (call.args.size() == 2) {
    FailureOr<int64_t> steps = constantIntArgument(call.args[1], "rotate's n", call.loc);
    if (failed(steps))
      return failure();
    n = *steps;
  }
  HeapObject &deque = in.mutateObject(*id, SideEffect::Kind::SetContents, "", nullptr, call.loc);
  int64_t size = deque.items.size();
  if (size) {
    int64_t shift = ((n % size) + size) % size;
    std::rotate(deque.items.begin(), deque.items.end() - shift, deque.items.end());
  }
  return makeNone();
}

//===----------------------------------------------------------------------===//
// collections.OrderedDict and defaultdict
//===----------------------------------------------------------------------===//

/// The entries of dict(*args, **keywords) as builtins.dict builds them.
static FailureOr<Var> plainDict(Interpreter &in, const ExternalCall &call,
                                llvm::ArrayRef<Var> args) {
  CallArguments arguments{std::vector<Var>(args.begin(), args.end()), call.arguments.keywords};
  return in.call(makeExternal("builtins.dict"), std::move(arguments), call.loc);
}

/// OrderedDict(...): a dict (insertion-ordered, as every dict is) of class OrderedDict.
static CallResult orderedDictNew(Interpreter &in, ExternalCall &call) {
  if (failed(call.checkArity(0, 1)))
    return failure();
  FailureOr<Var> dict = plainDict(in, call, call.args);
  if (failed(dict))
    return failure();
  in.getHeap().mutate((*dict)->object).classObject = makeExternal(kOrderedDict);
  return *dict;
}

/// move_to_end(key, last=True).
static CallResult orderedDictMoveToEnd(Interpreter &in, ExternalCall &call) {
  std::optional<ObjectId> id = selfOfClass(in, call, H::Dict, kOrderedDict);
  if (!id || call.args.size() < 2 || call.args.size() > 3 || failed(call.checkKeywords({"last"})))
    return CallResult::declined();
  Var lastArg = call.args.size() == 3 ? call.args[2] : call.keyword("last");
  bool last = true;
  if (lastArg) {
    FailureOr<bool> truth = in.truth(lastArg, call.loc);
    if (failed(truth))
      return failure();
    last = *truth;
  }
  FailureOr<std::optional<size_t>> found = in.findDictEntry(*id, call.args[1], call.loc);
  if (failed(found))
    return failure();
  if (!*found)
    return call.error() << "move_to_end() of a missing key (KeyError)";
  HeapObject &dict = in.mutateObject(*id, SideEffect::Kind::SetContents, "", nullptr, call.loc);
  auto entry = dict.entries[**found];
  dict.entries.erase(dict.entries.begin() + **found);
  dict.entries.insert(last ? dict.entries.end() : dict.entries.begin(), entry);
  return makeNone();
}

/// defaultdict(default_factory=None, ...): a dict of class defaultdict whose missing
/// keys get default_factory() (Interpreter::subscript).
static CallResult defaultDictNew(Interpreter &in, ExternalCall &call) {
  if (failed(call.checkArity(0, 2)))
    return failure();
  Var factory = call.args.empty() ? makeNone() : call.args[0];
  FailureOr<Var> dict =
      plainDict(in, call, llvm::ArrayRef<Var>(call.args).drop_front(call.args.empty() ? 0 : 1));
  if (failed(dict))
    return failure();
  HeapObject &h = in.getHeap().mutate((*dict)->object);
  h.classObject = makeExternal(kDefaultDict);
  h.attributes.emplace_back("default_factory", factory);
  return *dict;
}

//===----------------------------------------------------------------------===//
// collections.Counter
//===----------------------------------------------------------------------===//

/// Adds the counts of `source` to the Counter `counter`: a mapping's values, else one
/// per item of the iterable (Counter.update's rule). Counts are constant ints.
static LogicalResult addCounts(Interpreter &in, Var counter, Var source, int64_t sign,
                               Location loc) {
  std::vector<std::pair<Var, int64_t>> added;
  if (in.getHeap().kindOf(source) == H::Dict) {
    for (const auto &[key, value] : in.getHeap().get(source->object).entries) {
      std::optional<int64_t> count = value->getConstantInt();
      if (!count)
        return emitError(loc) << "collections.Counter: the count of a key must be a constant int";
      added.emplace_back(key, *count);
    }
  } else {
    FailureOr<std::vector<Var>> items = in.unpack(source, loc);
    if (failed(items))
      return failure();
    for (const Var &item : *items)
      added.emplace_back(item, 1);
  }
  for (const auto &[key, count] : added) {
    FailureOr<std::optional<size_t>> found = in.findDictEntry(counter->object, key, loc);
    if (failed(found))
      return failure();
    int64_t old = 0;
    if (*found)
      old = in.getHeap().get(counter->object).entries[**found].second->getConstantInt().value_or(0);
    if (failed(in.storeSubscript(counter, key, makeInt(old + sign * count, in.getContext()), loc)))
      return failure();
  }
  return success();
}

/// Counter(iterable_or_mapping=None, **counts): a dict of class Counter from element to
/// count, whose missing keys count 0 (Interpreter::subscript).
static CallResult counterNew(Interpreter &in, ExternalCall &call) {
  if (failed(call.checkArity(0, 1)))
    return failure();
  FailureOr<Var> counter = plainDict(in, call, {});
  if (failed(counter))
    return failure();
  in.getHeap().mutate((*counter)->object).classObject = makeExternal(kCounter);
  if (!call.args.empty() && !call.args[0]->is(K::None) &&
      failed(addCounts(in, *counter, call.args[0], 1, call.loc)))
    return failure();
  return *counter;
}

/// update(iterable_or_mapping) / subtract(...): counts added or subtracted.
static CallResult counterUpdate(Interpreter &in, ExternalCall &call) {
  std::optional<ObjectId> id = selfOfClass(in, call, H::Dict, kCounter);
  if (!id || call.args.size() != 2 || !call.arguments.keywords.empty())
    return CallResult::declined();
  int64_t sign = llvm::StringRef(call.name).ends_with(".subtract") ? -1 : 1;
  if (failed(addCounts(in, call.args[0], call.args[1], sign, call.loc)))
    return failure();
  return makeNone();
}

/// most_common(n=None): (element, count) pairs, the largest counts first, elements of
/// equal counts in insertion order.
static CallResult counterMostCommon(Interpreter &in, ExternalCall &call) {
  std::optional<ObjectId> id = selfOfClass(in, call, H::Dict, kCounter);
  if (!id || call.args.size() > 2 || !call.arguments.keywords.empty())
    return CallResult::declined();
  std::vector<std::pair<Var, int64_t>> counts;
  for (const auto &[key, value] : in.getHeap().get(*id).entries) {
    std::optional<int64_t> count = value->getConstantInt();
    if (!count)
      return call.error() << "Counter.most_common: the count of a key must be a constant int";
    counts.emplace_back(key, *count);
  }
  // (Equal counts keep insertion order: the entries' positions break ties.)
  std::vector<size_t> order(counts.size());
  std::iota(order.begin(), order.end(), 0);
  llvm::sort(order, [&](size_t a, size_t b) {
    return counts[a].second != counts[b].second ? counts[a].second > counts[b].second : a < b;
  });
  std::vector<std::pair<Var, int64_t>> sorted;
  for (size_t i : order)
    sorted.push_back(counts[i]);
  counts = std::move(sorted);
  if (call.args.size() == 2 && !call.args[1]->is(K::None)) {
    FailureOr<int64_t> n = constantIntArgument(call.args[1], "most_common's n", call.loc);
    if (failed(n))
      return failure();
    counts.resize(std::min<size_t>(counts.size(), std::max<int64_t>(*n, 0)));
  }
  std::vector<Var> pairs;
  for (const auto &[key, count] : counts)
    pairs.push_back(makeTuple({key, makeInt(count, in.getContext())}));
  return in.makeSequence(H::List, std::move(pairs));
}

/// total(): the sum of the counts.
static CallResult counterTotal(Interpreter &in, ExternalCall &call) {
  std::optional<ObjectId> id = selfOfClass(in, call, H::Dict, kCounter);
  if (!id || call.args.size() != 1 || !call.arguments.keywords.empty())
    return CallResult::declined();
  int64_t total = 0;
  for (const auto &entry : in.getHeap().get(*id).entries) {
    std::optional<int64_t> count = entry.second->getConstantInt();
    if (!count)
      return call.error() << "Counter.total: the count of a key must be a constant int";
    total += *count;
  }
  return makeInt(total, in.getContext());
}

//===----------------------------------------------------------------------===//
// collections.namedtuple
//===----------------------------------------------------------------------===//

/// namedtuple(typename, field_names, *, defaults=None, rename=False, module=None): a
/// class whose base is tuple, with `_fields` and `_field_defaults`, which
/// Interpreter::instantiate makes tuples of (as it does for namedtuple classes the
/// program reaches).
static CallResult namedTupleNew(Interpreter &in, ExternalCall &call) {
  if (failed(call.checkArity(2, 2)) || failed(call.checkKeywords({"defaults", "rename", "module"})))
    return failure();
  if (!call.args[0]->is(K::Str))
    return call.error() << "namedtuple's typename must be a str";
  std::vector<Var> fieldVars;
  if (call.args[1]->is(K::Str)) {
    llvm::SmallVector<llvm::StringRef> parts;
    llvm::StringRef(call.args[1]->name).split(parts, ',', -1, /*KeepEmpty=*/false);
    for (llvm::StringRef part : parts) {
      llvm::SmallVector<llvm::StringRef> words;
      part.split(words, ' ', -1, /*KeepEmpty=*/false);
      for (llvm::StringRef word : words)
        fieldVars.push_back(makeStr(word.trim()));
    }
  } else {
    FailureOr<std::vector<Var>> items = in.unpack(call.args[1], call.loc);
    if (failed(items))
      return failure();
    fieldVars = std::move(*items);
  }
  std::set<std::string> seen;
  for (const Var &field : fieldVars)
    if (!field->is(K::Str) || field->name.empty() || field->name[0] == '_' ||
        !seen.insert(field->name).second)
      return call.error() << "namedtuple's field names must be distinct str identifiers that do "
                             "not start with '_' (ValueError; rename=True is not supported)";
  if (Var rename = call.keyword("rename")) {
    FailureOr<bool> renaming = in.truth(rename, call.loc);
    if (failed(renaming))
      return failure();
    if (*renaming)
      return call.error() << "namedtuple(rename=True) is not supported";
  }
  std::vector<Var> defaults;
  if (Var given = call.keyword("defaults"); given && !given->is(K::None)) {
    FailureOr<std::vector<Var>> items = in.unpack(given, call.loc);
    if (failed(items))
      return failure();
    if (items->size() > fieldVars.size())
      return call.error() << "namedtuple got more defaults than fields (TypeError)";
    defaults = std::move(*items);
  }
  HeapObject defaultsDict;
  defaultsDict.kind = H::Dict;
  for (auto [i, value] : llvm::enumerate(defaults))
    defaultsDict.entries.emplace_back(fieldVars[fieldVars.size() - defaults.size() + i], value);
  HeapObject cls;
  cls.kind = H::Class;
  cls.name = call.args[0]->name;
  cls.qualname = cls.name;
  cls.bases = {makeExternal("builtins.tuple")};
  cls.attributes = {{"_fields", makeTuple(fieldVars)},
                    {"_field_defaults", makeObject(in.newObject(std::move(defaultsDict)))}};
  Var classVar = makeObject(in.newObject(std::move(cls)));
  in.getHeap().mutate(classVar->object).mro = {classVar, makeExternal("builtins.tuple"),
                                               makeExternal("builtins.object")};
  return classVar;
}

/// A namedtuple's `_replace(**fields)` (a new tuple of its class with those fields
/// replaced) and `_asdict()` (a dict of its fields in order).
static CallResult namedTupleMethod(Interpreter &in, ExternalCall &call) {
  if (call.args.size() != 1 || !call.args[0]->is(K::Tuple))
    return call.error() << call.name << " needs the namedtuple";
  Var self = call.args[0];
  std::optional<std::vector<std::string>> fields =
      self->tupleClass ? namedTupleFields(in.getHeap(), self->tupleClass) : std::nullopt;
  if (!fields || fields->size() != self->items.size())
    return call.error() << call.name << " needs a namedtuple";
  if (call.name.ends_with("_asdict")) {
    if (!call.arguments.keywords.empty())
      return call.error() << "_asdict() takes no arguments";
    HeapObject dict;
    dict.kind = H::Dict;
    for (auto [field, value] : llvm::zip(*fields, self->items))
      dict.entries.emplace_back(makeStr(field), value);
    return makeObject(in.newObject(std::move(dict)));
  }
  Variable replaced = *self;
  for (const auto &[name, value] : call.arguments.keywords) {
    auto it = llvm::find(*fields, name);
    if (it == fields->end())
      return call.error() << "_replace() got an unexpected field name '" << name
                          << "' (ValueError)";
    replaced.items[it - fields->begin()] = value;
  }
  return makeVar(std::move(replaced));
}

//===----------------------------------------------------------------------===//
// functools
//===----------------------------------------------------------------------===//

/// partial(func, *args, **keywords): an object of class functools.partial with the
/// attributes `func`, `args` and `keywords`; calling it calls func with args before the
/// call's and the keywords updated by the call's.
static CallResult partialNew(Interpreter &in, ExternalCall &call) {
  if (call.args.empty())
    return call.error() << "functools.partial() needs a callable";
  HeapObject partial;
  partial.kind = H::Instance;
  partial.classObject = makeExternal(kPartial);
  HeapObject keywords;
  keywords.kind = H::Dict;
  for (const auto &[key, value] : call.arguments.keywords)
    keywords.entries.emplace_back(makeStr(key), value);
  partial.attributes = {
      {"func", call.args[0]},
      {"args", makeTuple(std::vector<Var>(call.args.begin() + 1, call.args.end()))},
      {"keywords", makeObject(in.newObject(std::move(keywords)))}};
  return makeObject(in.newObject(std::move(partial)));
}

static CallResult partialCall(Interpreter &in, ExternalCall &call) {
  if (call.args.empty() || in.getHeap().kindOf(call.args[0]) != H::Instance)
    return CallResult::declined();
  const HeapObject &partial = in.getHeap().get(call.args[0]->object);
  Var func = partial.getAttribute("func"), args = partial.getAttribute("args"),
      keywords = partial.getAttribute("keywords");
  if (!func || !args || !args->is(K::Tuple) || in.getHeap().kindOf(keywords) != H::Dict)
    return call.error() << "a functools.partial whose attributes tgc does not know";
  CallArguments arguments;
  arguments.positional = args->items;
  arguments.positional.insert(arguments.positional.end(), call.args.begin() + 1, call.args.end());
  for (const auto &[key, value] : in.getHeap().get(keywords->object).entries) {
    if (!key->is(K::Str))
      return call.error() << "a functools.partial keyword that is not a string";
    arguments.keywords.emplace_back(key->name, value);
  }
  for (const auto &keyword : call.arguments.keywords) {
    auto it =
        llvm::find_if(arguments.keywords, [&](const auto &k) { return k.first == keyword.first; });
    if (it != arguments.keywords.end())
      it->second = keyword.second;
    else
      arguments.keywords.push_back(keyword);
  }
  return in.call(func, std::move(arguments), call.loc);
}

/// lru_cache(maxsize=128, typed=False), lru_cache(function), cache(function): the
/// function itself, as Dynamo traces through the cache (a cached call returns what the
/// uncached call computes); the decorator lru_cache(maxsize) returns is functools.cache.
static CallResult lruCache(Interpreter &, ExternalCall &call) {
  if (failed(call.checkArity(0, 2)))
    return failure();
  bool decorates = call.args.size() == 1 && call.arguments.keywords.empty() &&
                   !call.args[0]->is(K::Int) && !call.args[0]->is(K::None);
  if (call.name == "functools.cache" || decorates) {
    if (call.args.size() != 1)
      return call.error() << call.name << "() takes one function";
    return call.args[0];
  }
  return makeExternal("functools.cache");
}

/// reduce(function, iterable[, initial]).
static CallResult reduce(Interpreter &in, ExternalCall &call) {
  if (failed(call.checkArity(2, 3)) || failed(call.checkKeywords({})))
    return failure();
  FailureOr<std::vector<Var>> items = in.unpack(call.args[1], call.loc);
  if (failed(items))
    return failure();
  Var accumulated = call.args.size() == 3 ? call.args[2] : Var();
  for (const Var &item : *items) {
    if (!accumulated) {
      accumulated = item;
      continue;
    }
    FailureOr<Var> next = in.call(call.args[0], CallArguments{{accumulated, item}, {}}, call.loc);
    if (failed(next))
      return failure();
    accumulated = *next;
  }
  if (!accumulated)
    return call.error() << "reduce() of an empty iterable with no initial value (TypeError)";
  return accumulated;
}

//===----------------------------------------------------------------------===//
// itertools (on what the interpreter can list at capture time)
//===----------------------------------------------------------------------===//

/// The items of each positional argument from `first` on.
static FailureOr<std::vector<std::vector<Var>>> unpackAll(Interpreter &in, const ExternalCall &call,
                                                          size_t first = 0) {
  std::vector<std::vector<Var>> sequences;
  for (size_t i = first; i < call.args.size(); ++i) {
    FailureOr<std::vector<Var>> items = in.unpack(call.args[i], call.loc);
    if (failed(items))
      return failure();
    sequences.push_back(std::move(*items));
  }
  return sequences;
}

/// product(*iterables, repeat=1): tuples in lexicographic order.
static CallResult product(Interpreter &in, ExternalCall &call) {
  if (failed(call.checkKeywords({"repeat"})))
    return failure();
  FailureOr<std::vector<std::vector<Var>>> pools = unpackAll(in, call);
  if (failed(pools))
    return failure();
  int64_t repeat = 1;
  if (Var r = call.keyword("repeat")) {
    FailureOr<int64_t> n = constantIntArgument(r, "product's repeat", call.loc);
    if (failed(n))
      return failure();
    repeat = std::max<int64_t>(*n, 0);
  }
  std::vector<std::vector<Var>> all;
  for (int64_t i = 0; i < repeat; ++i)
    llvm::append_range(all, *pools);
  std::vector<std::vector<Var>> tuples = {{}};
  for (const std::vector<Var> &pool : all) {
    std::vector<std::vector<Var>> next;
    for (const std::vector<Var> &prefix : tuples)
      for (const Var &item : pool) {
        next.push_back(prefix);
        next.back().push_back(item);
      }
    tuples = std::move(next);
  }
  std::vector<Var> items;
  for (std::vector<Var> &tuple : tuples)
    items.push_back(makeTuple(std::move(tuple)));
  return in.makeSequence(H::Iterator, std::move(items));
}

/// chain(*iterables) and chain.from_iterable(iterable).
static CallResult chain(Interpreter &in, ExternalCall &call) {
  if (failed(call.checkKeywords({})))
    return failure();
  std::vector<Var> iterables = call.args;
  if (call.name.ends_with("from_iterable")) {
    if (failed(call.checkArity(1, 1)))
      return failure();
    FailureOr<std::vector<Var>> outer = in.unpack(call.args[0], call.loc);
    if (failed(outer))
      return failure();
    iterables = std::move(*outer);
  }
  std::vector<Var> items;
  for (const Var &iterable : iterables) {
    FailureOr<std::vector<Var>> inner = in.unpack(iterable, call.loc);
    if (failed(inner))
      return failure();
    llvm::append_range(items, *inner);
  }
  return in.makeSequence(H::Iterator, std::move(items));
}

/// zip_longest(*iterables, fillvalue=None).
static CallResult zipLongest(Interpreter &in, ExternalCall &call) {
  if (failed(call.checkKeywords({"fillvalue"})))
    return failure();
  FailureOr<std::vector<std::vector<Var>>> sequences = unpackAll(in, call);
  if (failed(sequences))
    return failure();
  Var fill = call.keyword("fillvalue");
  if (!fill)
    fill = makeNone();
  size_t n = 0;
  for (const auto &sequence : *sequences)
    n = std::max(n, sequence.size());
  std::vector<Var> items;
  for (size_t i = 0; i < n; ++i) {
    std::vector<Var> tuple;
    for (const auto &sequence : *sequences)
      tuple.push_back(i < sequence.size() ? sequence[i] : fill);
    items.push_back(makeTuple(std::move(tuple)));
  }
  return in.makeSequence(H::Iterator, std::move(items));
}

/// islice(iterable, stop) and islice(iterable, start, stop[, step]) with constant or
/// None bounds.
static CallResult islice(Interpreter &in, ExternalCall &call) {
  if (failed(call.checkArity(2, 4)) || failed(call.checkKeywords({})))
    return failure();
  // Of an endless iterator (itertools.count), the items up to the stop, taken as
  // islice takes them.
  std::optional<std::vector<Var>> pulled;
  if (in.isEndless(call.args[0])) {
    Var stopArg = call.args[call.args.size() == 2 ? 1 : 2];
    if (stopArg->is(K::None))
      return call.error() << "islice() without a stop of an endless iterator never ends";
    FailureOr<int64_t> stop = constantIntArgument(stopArg, "an islice bound", call.loc);
    if (failed(stop))
      return failure();
    pulled.emplace();
    for (int64_t i = 0; i < *stop; ++i) {
      FailureOr<Var> item = in.nextItem(call.args[0], call.loc);
      if (failed(item))
        return failure();
      pulled->push_back(*item);
    }
  }
  FailureOr<std::vector<Var>> items =
      pulled ? FailureOr<std::vector<Var>>(std::move(*pulled)) : in.unpack(call.args[0], call.loc);
  if (failed(items))
    return failure();
  int64_t size = items->size();
  auto bound = [&](size_t i, int64_t fallback) -> FailureOr<int64_t> {
    if (i >= call.args.size() || call.args[i]->is(K::None))
      return fallback;
    FailureOr<int64_t> v = constantIntArgument(call.args[i], "an islice bound", call.loc);
    if (succeeded(v) && *v < 0)
      return call.error() << "islice() bounds must be None or >= 0 (ValueError)";
    return v;
  };
  bool onlyStop = call.args.size() == 2;
  FailureOr<int64_t> start = onlyStop ? FailureOr<int64_t>(0) : bound(1, 0);
  FailureOr<int64_t> stop = bound(onlyStop ? 1 : 2, size);
  FailureOr<int64_t> step = onlyStop ? FailureOr<int64_t>(1) : bound(3, 1);
  if (failed(start) || failed(stop) || failed(step))
    return failure();
  if (*step == 0)
    return call.error() << "islice()'s step must be positive (ValueError)";
  std::vector<Var> sliced;
  for (int64_t i = *start; i < std::min(*stop, size); i += *step)
    sliced.push_back((*items)[i]);
  return in.makeSequence(H::Iterator, std::move(sliced));
}

/// accumulate(iterable, func=operator.add, *, initial=None).
static CallResult accumulate(Interpreter &in, ExternalCall &call) {
  if (failed(call.checkArity(1, 2)) || failed(call.checkKeywords({"func", "initial"})))
    return failure();
  FailureOr<std::vector<Var>> items = in.unpack(call.args[0], call.loc);
  if (failed(items))
    return failure();
  Var func = call.args.size() == 2 ? call.args[1] : call.keyword("func");
  if (func && func->is(K::None))
    func = Var();
  Var total = call.keyword("initial");
  if (total && total->is(K::None))
    total = Var();
  std::vector<Var> sums;
  if (total)
    sums.push_back(total);
  for (const Var &item : *items) {
    if (!total) {
      total = item;
    } else {
      FailureOr<Var> next = func ? in.call(func, CallArguments{{total, item}, {}}, call.loc)
                                 : in.binaryOp(/*add*/ 0, total, item, call.loc);
      if (failed(next))
        return failure();
      total = *next;
    }
    sums.push_back(total);
  }
  return in.makeSequence(H::Iterator, std::move(sums));
}

/// The r-length selections of `pool` in itertools' order: combinations (increasing
/// positions), with `replacement` (non-decreasing ones), or permutations (distinct ones).
static std::vector<Var> selections(const std::vector<Var> &pool, int64_t r, bool ordered,
                                   bool replacement) {
  std::vector<Var> tuples;
  int64_t n = pool.size();
  std::vector<int64_t> positions;
  std::vector<bool> used(n, false);
  std::function<void(int64_t)> extend = [&](int64_t first) {
    if (static_cast<int64_t>(positions.size()) == r) {
      std::vector<Var> tuple;
      for (int64_t p : positions)
        tuple.push_back(pool[p]);
      tuples.push_back(makeTuple(std::move(tuple)));
      return;
    }
    for (int64_t p = ordered ? 0 : first; p < n; ++p) {
      if (ordered && used[p])
        continue;
      positions.push_back(p);
      if (ordered)
        used[p] = true;
      extend(replacement ? p : p + 1);
      if (ordered)
        used[p] = false;
      positions.pop_back();
    }
  };
  if (r >= 0 && (replacement || r <= n) && (n > 0 || r == 0))
    extend(0);
  return tuples;
}

/// combinations(iterable, r), combinations_with_replacement(iterable, r) and
/// permutations(iterable, r=None).
static CallResult combinatorics(Interpreter &in, ExternalCall &call) {
  bool permutations = call.name == "itertools.permutations";
  if (failed(call.checkArity(1, 2)) || failed(call.checkKeywords({"r"})))
    return failure();
  FailureOr<std::vector<Var>> pool = in.unpack(call.args[0], call.loc);
  if (failed(pool))
    return failure();
  Var r = call.args.size() == 2 ? call.args[1] : call.keyword("r");
  int64_t length = pool->size();
  if (r && !(permutations && r->is(K::None))) {
    FailureOr<int64_t> n = constantIntArgument(r, "r", call.loc);
    if (failed(n))
      return failure();
    if (*n < 0)
      return call.error() << "r must be non-negative (ValueError)";
    length = *n;
  } else if (!permutations) {
    return call.error() << call.name << "() needs r";
  }
  return in.makeSequence(H::Iterator, selections(*pool, length, permutations,
                                                 call.name.ends_with("with_replacement")));
}

/// pairwise(iterable): (a, b), (b, c), ...
static CallResult pairwise(Interpreter &in, ExternalCall &call) {
  if (failed(call.checkArity(1, 1)) || failed(call.checkKeywords({})))
    return failure();
  FailureOr<std::vector<Var>> items = in.unpack(call.args[0], call.loc);
  if (failed(items))
    return failure();
  std::vector<Var> pairs;
  for (size_t i = 1; i < items->size(); ++i)
    pairs.push_back(makeTuple({(*items)[i - 1], (*items)[i]}));
  return in.makeSequence(H::Iterator, std::move(pairs));
}

/// starmap(function, iterable): function(*item) for each item.
static CallResult starmap(Interpreter &in, ExternalCall &call) {
  if (failed(call.checkArity(2, 2)) || failed(call.checkKeywords({})))
    return failure();
  FailureOr<std::vector<Var>> items = in.unpack(call.args[1], call.loc);
  if (failed(items))
    return failure();
  std::vector<Var> results;
  for (const Var &item : *items) {
    FailureOr<std::vector<Var>> arguments = in.unpack(item, call.loc);
    FailureOr<Var> result = succeeded(arguments)
                                ? in.call(call.args[0], CallArguments{*arguments, {}}, call.loc)
                                : FailureOr<Var>(failure());
    if (failed(result))
      return failure();
    results.push_back(*result);
  }
  return in.makeSequence(H::Iterator, std::move(results));
}

/// Calling a weak reference (`ref()`): its referent as tgc-capture recorded it (None
/// once it was dead).
static CallResult weakReferent(Interpreter &in, ExternalCall &call) {
  if (call.args.size() != 1 || in.getHeap().kindOf(call.args[0]) != H::Instance)
    return CallResult::declined();
  Var referent = in.getHeap().get(call.args[0]->object).getAttribute("referent");
  if (!referent)
    return call.error() << "a weak reference whose referent the trace does not record";
  return referent;
}

/// The builtin map(function, *iterables): function of the items at each position, up to
/// the shortest iterable.
static CallResult mapItems(Interpreter &in, ExternalCall &call) {
  if (failed(call.checkKeywords({})))
    return failure();
  if (call.args.size() < 2)
    return call.error() << "map() must have at least two arguments";
  FailureOr<std::vector<std::vector<Var>>> zipped =
      in.unpackZipped(llvm::ArrayRef(call.args).drop_front(), call.loc);
  if (failed(zipped))
    return failure();
  std::vector<std::vector<Var>> &iterables = *zipped;
  size_t n = iterables.front().size();
  std::vector<Var> results;
  for (size_t i = 0; i < n; ++i) {
    CallArguments arguments;
    for (const std::vector<Var> &items : iterables)
      arguments.positional.push_back(items[i]);
    FailureOr<Var> result = in.call(call.args[0], std::move(arguments), call.loc);
    if (failed(result))
      return failure();
    results.push_back(*result);
  }
  return in.makeSequence(H::Iterator, std::move(results));
}

/// takewhile / dropwhile / filterfalse(predicate, iterable), compress(data, selectors)
/// and the builtin filter(predicate or None, iterable): the items the predicate's truth
/// (or the selector's) keeps.
static CallResult filtering(Interpreter &in, ExternalCall &call) {
  if (failed(call.checkArity(2, 2)) || failed(call.checkKeywords({})))
    return failure();
  bool compress = call.name == "itertools.compress";
  FailureOr<std::vector<Var>> items = in.unpack(call.args[compress ? 0 : 1], call.loc);
  if (failed(items))
    return failure();
  std::optional<std::vector<Var>> selectors;
  if (compress) {
    FailureOr<std::vector<Var>> unpacked = in.unpack(call.args[1], call.loc);
    if (failed(unpacked))
      return failure();
    selectors = std::move(*unpacked);
  }
  std::vector<Var> kept;
  bool dropping = call.name == "itertools.dropwhile";
  for (auto [i, item] : llvm::enumerate(*items)) {
    if (compress && i >= selectors->size())
      break;
    if (call.name == "itertools.dropwhile" && !dropping) {
      kept.push_back(item);
      continue;
    }
    // filter(None, iterable) keeps the true items.
    FailureOr<Var> test = compress ? FailureOr<Var>((*selectors)[i])
                          : call.args[0]->is(K::None)
                              ? FailureOr<Var>(item)
                              : in.call(call.args[0], CallArguments{{item}, {}}, call.loc);
    FailureOr<bool> truth =
        succeeded(test) ? in.truth(*test, call.loc) : FailureOr<bool>(failure());
    if (failed(truth))
      return failure();
    if (call.name == "itertools.takewhile") {
      if (!*truth)
        break;
      kept.push_back(item);
    } else if (call.name == "itertools.dropwhile") {
      dropping = *truth;
      if (!dropping)
        kept.push_back(item);
    } else if (*truth != (call.name == "itertools.filterfalse")) {
      kept.push_back(item);
    }
  }
  return in.makeSequence(H::Iterator, std::move(kept));
}

/// repeat(object, times): an unbounded repeat cannot be listed at capture time.
static CallResult repeat(Interpreter &in, ExternalCall &call) {
  if (failed(call.checkKeywords({"times"})))
    return failure();
  Var times = call.args.size() == 2 ? call.args[1] : call.keyword("times");
  if (call.args.empty() || call.args.size() > 2)
    return call.error() << "itertools.repeat() takes an object and an optional count";
  if (!times) {
    HeapObject iterator;
    iterator.kind = H::Iterator;
    iterator.endless = HeapObject::Endless::Repeat;
    iterator.name = "itertools.repeat";
    iterator.contents = call.args[0];
    return makeObject(in.newObject(std::move(iterator)));
  }
  FailureOr<int64_t> n = constantIntArgument(times, "repeat's times", call.loc);
  if (failed(n))
    return failure();
  return in.makeSequence(H::Iterator, std::vector<Var>(std::max<int64_t>(*n, 0), call.args[0]));
}

/// itertools.count(start=0, step=1): start, start + step, ... without end.
static CallResult count(Interpreter &in, ExternalCall &call) {
  if (failed(call.checkArity(0, 2)) || failed(call.checkKeywords({"start", "step"})))
    return failure();
  MLIRContext *ctx = in.getContext();
  Var start = !call.args.empty() ? call.args[0] : call.keyword("start");
  Var step = call.args.size() == 2 ? call.args[1] : call.keyword("step");
  HeapObject iterator;
  iterator.kind = H::Iterator;
  iterator.endless = HeapObject::Endless::Count;
  iterator.name = "itertools.count";
  iterator.contents = start ? start : makeInt(0, ctx);
  iterator.step = step ? step : makeInt(1, ctx);
  for (const Var &number : {iterator.contents, iterator.step})
    if (!number->is(K::Int) && !number->is(K::Float) && !number->is(K::Bool))
      return call.error() << "itertools.count() of " << describe(in.getHeap(), number)
                          << ": tgc counts with Python numbers";
  return makeObject(in.newObject(std::move(iterator)));
}

/// itertools.groupby(iterable, key=None): (key, group) for each run of consecutive items
/// whose keys are equal. The groups are listed at the call, so one read after the next
/// group was taken still has its items (in CPython it is then empty).
static CallResult groupBy(Interpreter &in, ExternalCall &call) {
  if (failed(call.checkArity(1, 2)) || failed(call.checkKeywords({"key"})))
    return failure();
  FailureOr<std::vector<Var>> items = in.unpack(call.args[0], call.loc);
  if (failed(items))
    return failure();
  Var key = call.args.size() == 2 ? call.args[1] : call.keyword("key");
  if (key && key->is(K::None))
    key = Var();
  std::vector<Var> groups;
  Var runKey;
  std::vector<Var> run;
  auto closeRun = [&] {
    if (runKey)
      groups.push_back(makeTuple({runKey, in.makeSequence(H::Iterator, std::move(run))}));
    run.clear();
  };
  for (const Var &item : *items) {
    Var itemKey = item;
    if (key) {
      FailureOr<Var> computed = in.call(key, CallArguments{{item}, {}}, call.loc);
      if (failed(computed))
        return failure();
      itemKey = *computed;
    }
    if (runKey) {
      FailureOr<bool> same = in.equals(runKey, itemKey, call.loc);
      if (failed(same))
        return failure();
      if (!*same)
        closeRun();
    }
    if (run.empty())
      runKey = itemKey;
    run.push_back(item);
  }
  closeRun();
  return in.makeSequence(H::Iterator, std::move(groups));
}

/// itertools.cycle(iterable): its items over and over (none when it has none).
static CallResult cycle(Interpreter &in, ExternalCall &call) {
  if (failed(call.checkArity(1, 1)) || failed(call.checkKeywords({})))
    return failure();
  FailureOr<std::vector<Var>> items = in.unpack(call.args[0], call.loc);
  if (failed(items))
    return failure();
  HeapObject iterator;
  iterator.kind = H::Iterator;
  iterator.name = "itertools.cycle";
  if (!items->empty())
    iterator.endless = HeapObject::Endless::Cycle;
  iterator.items = std::move(*items);
  return makeObject(in.newObject(std::move(iterator)));
}

/// collections.abc.Mapping's `get`, which a subclass that defines `__getitem__` and
/// `__iter__` inherits (transformers' AttentionInterface): the item when the key is one
/// the mapping iterates, else the default.
static CallResult mappingGet(Interpreter &in, ExternalCall &call) {
  if (failed(call.checkArity(2, 3)))
    return failure();
  Var self = call.args[0], key = call.args[1];
  FailureOr<std::vector<Var>> keys = in.unpack(self, call.loc);
  if (failed(keys))
    return failure();
  for (const Var &candidate : *keys) {
    FailureOr<bool> same = in.equals(candidate, key, call.loc);
    if (failed(same))
      return failure();
    if (*same) {
      FailureOr<Var> getItem = in.getAttribute(self, "__getitem__", call.loc);
      if (failed(getItem))
        return failure();
      return in.call(*getItem, CallArguments{{key}, {}}, call.loc);
    }
  }
  return call.args.size() == 3 ? call.args[2] : makeNone();
}

/// collections.abc.Sequence's `__iter__` for a subclass that defines `__len__` and
/// `__getitem__` (transformers' per-layer config list): self[0], ..., self[len - 1].
static CallResult sequenceIter(Interpreter &in, ExternalCall &call) {
  if (call.args.size() != 1 || !call.arguments.keywords.empty())
    return CallResult::declined();
  Var self = call.args[0];
  FailureOr<Var> length = in.getAttribute(self, "__len__", call.loc);
  FailureOr<Var> n = succeeded(length) ? in.call(*length, {}, call.loc) : length;
  if (failed(n))
    return failure();
  std::optional<int64_t> count = (*n)->getConstantInt();
  if (!count)
    return call.error() << "iterating a Sequence whose len() is not known at capture time";
  FailureOr<Var> getItem = in.getAttribute(self, "__getitem__", call.loc);
  if (failed(getItem))
    return failure();
  std::vector<Var> items;
  for (int64_t i = 0; i < *count; ++i) {
    FailureOr<Var> item =
        in.call(*getItem, CallArguments{{makeInt(i, in.getContext())}, {}}, call.loc);
    if (failed(item))
      return failure();
    items.push_back(*item);
  }
  return in.makeSequence(H::Iterator, std::move(items));
}

/// The dataclass fields of a class or of an instance's class: the values of its
/// `__dataclass_fields__` (dataclasses.Field objects, which tgc-capture records with
/// their attributes) that are fields proper (not ClassVar or InitVar pseudo-fields);
/// null when it is no dataclass.
static FailureOr<Var> dataclassFields(Interpreter &in, Var value) {
  Var cls = value;
  if (in.getHeap().kindOf(value) != H::Class) {
    FailureOr<Var> type = in.getClassOf(value);
    if (failed(type))
      return failure();
    cls = *type;
  }
  if (in.getHeap().kindOf(cls) != H::Class)
    return Var();
  FailureOr<Var> dict = in.lookupInClass(cls, "__dataclass_fields__");
  if (failed(dict) || !*dict || in.getHeap().kindOf(*dict) != H::Dict)
    return dict;
  std::vector<Var> fields;
  for (const auto &entry : in.getHeap().get((*dict)->object).entries) {
    const Var &field = entry.second;
    if (in.getHeap().kindOf(field) == H::Instance)
      if (Var kind = in.getHeap().get(field->object).getAttribute("_field_type");
          kind && in.getHeap().kindOf(kind) == H::Opaque &&
          in.getHeap().get(kind->object).repr != "_FIELD")
        continue;
    fields.push_back(field);
  }
  return makeTuple(std::move(fields));
}

/// dataclasses.fields(x) and dataclasses.is_dataclass(x) (transformers' ModelOutput).
static CallResult dataclassProbe(Interpreter &in, ExternalCall &call) {
  if (failed(call.checkArity(1, 1)))
    return failure();
  FailureOr<Var> fields = dataclassFields(in, call.args[0]);
  if (failed(fields))
    return failure();
  if (call.name == "dataclasses.is_dataclass")
    return makeBool(static_cast<bool>(*fields));
  if (!*fields)
    return call.error() << "dataclasses.fields() of something that is not a dataclass";
  return *fields;
}

/// dataclasses.replace(obj, **changes): a new instance of obj's class, built by its
/// `__init__` from the changes and obj's values of the other init fields.
static CallResult dataclassReplace(Interpreter &in, ExternalCall &call) {
  if (failed(call.checkArity(1, 1)))
    return failure();
  Var object = call.args[0];
  FailureOr<Var> fields = in.getHeap().kindOf(object) == H::Instance ? dataclassFields(in, object)
                                                                     : FailureOr<Var>(Var());
  if (failed(fields))
    return failure();
  if (!*fields)
    return call.error() << "dataclasses.replace() of " << describe(in.getHeap(), object)
                        << ", which is not a dataclass instance";
  std::vector<std::pair<std::string, Var>> changes = call.arguments.keywords;
  CallArguments arguments;
  for (const Var &field : (*fields)->items) {
    Var name = in.getHeap().kindOf(field) == H::Instance
                   ? in.getHeap().get(field->object).getAttribute("name")
                   : Var();
    Var init = name ? in.getHeap().get(field->object).getAttribute("init") : Var();
    if (!name || !name->is(K::Str))
      return call.error() << "dataclasses.replace(): a field of " << describe(in.getHeap(), object)
                          << " has no name";
    auto change = llvm::find_if(changes, [&](auto &c) { return c.first == name->name; });
    if (init && init->is(K::Bool) && !init->boolValue) {
      if (change != changes.end())
        return call.error() << "dataclasses.replace(): field '" << name->name
                            << "' is declared with init=False and cannot be replaced";
      continue;
    }
    Var value;
    if (change != changes.end()) {
      value = change->second;
      changes.erase(change);
    } else {
      FailureOr<Var> current = in.getAttribute(object, name->name, call.loc);
      if (failed(current))
        return failure();
      value = *current;
    }
    arguments.keywords.emplace_back(name->name, value);
  }
  if (!changes.empty())
    return call.error() << "dataclasses.replace(): " << describe(in.getHeap(), object)
                        << " has no init field '" << changes.front().first << "'";
  FailureOr<Var> cls = in.getClassOf(object);
  if (failed(cls))
    return failure();
  return in.call(*cls, std::move(arguments), call.loc);
}

/// dataclasses.asdict / astuple's copy of `value`: a dataclass instance as a dict of its
/// fields (a tuple for astuple), lists, tuples (namedtuples keep their class) and dicts
/// copied item by item, a tensor cloned (deepcopy's copy), anything else as it is.
static FailureOr<Var> dataclassCopy(Interpreter &in, Var value, bool asDict, Location loc) {
  Heap &heap = in.getHeap();
  auto copyAll = [&](const std::vector<Var> &items) -> FailureOr<std::vector<Var>> {
    std::vector<Var> copies;
    for (const Var &item : items) {
      FailureOr<Var> copy = dataclassCopy(in, item, asDict, loc);
      if (failed(copy))
        return failure();
      copies.push_back(*copy);
    }
    return copies;
  };
  if (value->is(K::Tensor)) {
    if (cast<BaseTensorType>(heap.get(value->object).tensor.getType()).getMeta().requiresGrad)
      return emitError(loc) << "dataclasses.asdict() and astuple() deep-copy tensors, which "
                               "tgc does not do for a tensor that requires grad";
    CallArguments clone{{value}, {}};
    return in.callTorchFunction("torch.Tensor.clone", clone, loc);
  }
  if (value->is(K::Tuple)) {
    FailureOr<std::vector<Var>> items = copyAll(value->items);
    if (failed(items))
      return failure();
    Variable tuple = *value;
    tuple.items = std::move(*items);
    return makeVar(std::move(tuple));
  }
  std::optional<H> kind = heap.kindOf(value);
  if (kind == H::List) {
    FailureOr<std::vector<Var>> items = copyAll(heap.get(value->object).items);
    if (failed(items))
      return failure();
    return in.makeSequence(H::List, std::move(*items));
  }
  if (kind == H::Dict) {
    HeapObject dict;
    dict.kind = H::Dict;
    dict.classObject = heap.get(value->object).classObject;
    for (const auto &[key, item] : std::vector(heap.get(value->object).entries)) {
      FailureOr<Var> copyKey = dataclassCopy(in, key, asDict, loc);
      FailureOr<Var> copyItem =
          succeeded(copyKey) ? dataclassCopy(in, item, asDict, loc) : FailureOr<Var>(failure());
      if (failed(copyItem))
        return failure();
      dict.entries.emplace_back(*copyKey, *copyItem);
    }
    return makeObject(in.newObject(std::move(dict)));
  }
  if (kind != H::Instance)
    return value;
  FailureOr<Var> fields = dataclassFields(in, value);
  if (failed(fields) || !*fields)
    return fields;
  HeapObject dict;
  dict.kind = H::Dict;
  std::vector<Var> items;
  for (const Var &field : std::vector((*fields)->items)) {
    Var name =
        heap.kindOf(field) == H::Instance ? heap.get(field->object).getAttribute("name") : Var();
    if (!name || !name->is(K::Str))
      return emitError(loc) << "a field of " << describe(heap, value) << " has no name";
    FailureOr<Var> attribute = in.getAttribute(value, name->name, loc);
    FailureOr<Var> copy =
        succeeded(attribute) ? dataclassCopy(in, *attribute, asDict, loc) : attribute;
    if (failed(copy))
      return failure();
    dict.entries.emplace_back(name, *copy);
    items.push_back(*copy);
  }
  if (!asDict)
    return makeTuple(std::move(items));
  return makeObject(in.newObject(std::move(dict)));
}

/// dataclasses.asdict(obj) / astuple(obj) of a dataclass instance.
static CallResult dataclassAsDict(Interpreter &in, ExternalCall &call) {
  if (failed(call.checkArity(1, 1)) || failed(call.checkKeywords({})))
    return failure();
  FailureOr<Var> fields = in.getHeap().kindOf(call.args[0]) == H::Instance
                              ? dataclassFields(in, call.args[0])
                              : FailureOr<Var>(Var());
  if (failed(fields))
    return failure();
  if (!*fields)
    return call.error() << call.name << "() should be called on dataclass instances";
  return dataclassCopy(in, call.args[0], call.name == "dataclasses.asdict", call.loc);
}

/// inspect.signature(fn) of a Python function or bound method: an inspect.Signature whose
/// `parameters` maps each parameter's name, in order (self dropped for a bound method),
/// to an opaque inspect.Parameter (transformers counts them; reading one's default or
/// kind is an error where the program does).
static CallResult inspectSignature(Interpreter &in, ExternalCall &call) {
  if (failed(call.checkArity(1, 1)))
    return failure();
  Var fn = call.args[0];
  bool bound = fn->is(K::Method);
  if (bound)
    fn = fn->items[0];
  if (in.getHeap().kindOf(fn) != H::Function)
    return call.error() << "inspect.signature() of " << describe(in.getHeap(), fn)
                        << " is not supported (a Python function or method is)";
  const py::CodeObject &code = *in.getHeap().get(fn->object).code;
  size_t count = code.argCount + code.kwOnlyArgCount + bool(code.flags & py::kVarArgs) +
                 bool(code.flags & py::kVarKeywords);
  HeapObject parameters;
  parameters.kind = H::Dict;
  parameters.classObject = makeExternal(kOrderedDict);
  for (size_t i = bound ? 1 : 0; i < count && i < code.localsPlusNames.size(); ++i) {
    HeapObject parameter;
    parameter.kind = H::Opaque;
    parameter.name = "inspect.Parameter";
    parameter.repr = code.localsPlusNames[i];
    parameters.entries.emplace_back(makeStr(code.localsPlusNames[i]),
                                    makeObject(in.newObject(std::move(parameter))));
  }
  HeapObject signature;
  signature.kind = H::Instance;
  signature.classObject = makeExternal("inspect.Signature");
  signature.attributes = {{"parameters", makeObject(in.newObject(std::move(parameters)))}};
  return makeObject(in.newObject(std::move(signature)));
}

void tgc::py::registerCollections(CallRegistry &registry) {
  registry.add("inspect.signature", inspectSignature);
  registry.add("dataclasses.fields", dataclassProbe);
  registry.add("collections.abc.Sequence.__iter__", sequenceIter);
  registry.add("dataclasses.is_dataclass", dataclassProbe);
  registry.add("dataclasses.replace", dataclassReplace);
  registry.add("dataclasses.asdict", dataclassAsDict);
  registry.add("dataclasses.astuple", dataclassAsDict);
  registry.add("collections.abc.Mapping.get", mappingGet);
  registry.add("collections.abc.MutableMapping.get", mappingGet);
  registry.add(kDeque, dequeNew);
  for (llvm::StringRef method : {"append", "appendleft", "extend", "extendleft"})
    registry.add((kDeque + "." + method).str(), dequeAdd);
  registry.add((kDeque + ".popleft").str(), dequePopLeft);
  registry.add((kDeque + ".rotate").str(), dequeRotate);
  registry.add(kOrderedDict, orderedDictNew);
  registry.add((kOrderedDict + ".move_to_end").str(), orderedDictMoveToEnd);
  registry.add(kDefaultDict, defaultDictNew);
  registry.add("collections.namedtuple", namedTupleNew);
  registry.add("collections.namedtuple._replace", namedTupleMethod);
  registry.add("collections.namedtuple._asdict", namedTupleMethod);
  registry.add(kCounter, counterNew);
  registry.add((kCounter + ".update").str(), counterUpdate);
  registry.add((kCounter + ".subtract").str(), counterUpdate);
  registry.add((kCounter + ".most_common").str(), counterMostCommon);
  registry.add((kCounter + ".total").str(), counterTotal);
  registry.add(kPartial, partialNew);
  registry.add((kPartial + ".__call__").str(), partialCall);
  registry.add("functools.reduce", reduce);
  registry.add("functools.lru_cache", lruCache);
  registry.add("functools.cache", lruCache);
  registry.add("itertools.product", product);
  registry.add("itertools.chain", chain);
  registry.add("itertools.chain.from_iterable", chain);
  registry.add("itertools.zip_longest", zipLongest);
  registry.add("itertools.islice", islice);
  registry.add("itertools.accumulate", accumulate);
  registry.add("itertools.repeat", repeat);
  registry.add("itertools.count", count);
  registry.add("itertools.cycle", cycle);
  registry.add("itertools.groupby", groupBy);
  for (llvm::StringRef name : {"itertools.combinations", "itertools.combinations_with_replacement",
                               "itertools.permutations"})
    registry.add(name, combinatorics);
  registry.add("itertools.pairwise", pairwise);
  registry.add("itertools.starmap", starmap);
  for (llvm::StringRef name : {"itertools.takewhile", "itertools.dropwhile",
                               "itertools.filterfalse", "itertools.compress", "builtins.filter"})
    registry.add(name, filtering);
  registry.add("builtins.map", mapItems);
  registry.add("weakref.ReferenceType.__call__", weakReferent);
  registry.add("weakref.ref.__call__", weakReferent);
}
