// Methods of lists, dicts and sets in the bytecode interpreter (`builtins.list.append`,
// which lookupAttribute binds to the container). A change to a container that existed
// before the call is a side effect.
#include "Interpreter.h"
#include "Sorting.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace tgc;
using namespace tgc::py;

using K = Variable::Kind;
using H = HeapObject::Kind;

/// The container a method is called on: the first argument, when it is an object of
/// `kind` and the call has `minArgs` to `maxArgs` arguments; else the call is not the
/// method's.
/// Keyword arguments are the method's only where it reads them (`keywords`; `**` for
/// any): a call with others is not modelled, rather than silently ignoring them.
static std::optional<ObjectId> selfOf(Interpreter &in, const ExternalCall &call, H kind,
                                      size_t minArgs = 1, size_t maxArgs = SIZE_MAX,
                                      std::initializer_list<llvm::StringRef> keywords = {}) {
  if (call.args.empty() || !call.args[0]->is(K::Object) ||
      in.getHeap().get(call.args[0]->object).kind != kind || call.args.size() < minArgs ||
      call.args.size() > maxArgs)
    return std::nullopt;
  for (const auto &[name, value] : call.arguments.keywords)
    if (!llvm::is_contained(keywords, llvm::StringRef(name)) &&
        !llvm::is_contained(keywords, llvm::StringRef("**")))
      return std::nullopt;
  return call.args[0]->object;
}

/// The container, ready to change its contents (a side effect where one is seen).
static HeapObject &changeContents(Interpreter &in, ObjectId id, Location loc) {
  return in.mutateObject(id, SideEffect::Kind::SetContents, "", nullptr, loc);
}

//===----------------------------------------------------------------------===//
// list
//===----------------------------------------------------------------------===//

static CallResult listSort(Interpreter &in, ExternalCall &call) {
  std::optional<ObjectId> id = selfOf(in, call, H::List, 1, 1, {"key", "reverse"});
  if (!id)
    return CallResult::declined();
  std::string unsupported;
  Var key;
  std::optional<bool> reverse = sortReverse(call.arguments.keywords, unsupported, key);
  if (!reverse)
    return call.error() << "list.sort() with " << unsupported << "= is not supported";
  std::vector<Var> items = in.getHeap().get(*id).items;
  FailureOr<std::vector<Var>> keys = in.sortKeys(items, key, call.loc);
  if (failed(keys))
    return failure();
  if (!sortConstants(items, *reverse, key ? &*keys : nullptr))
    return call.error() << "list.sort() of values whose order is not known at capture time";
  changeContents(in, *id, call.loc).items = std::move(items);
  return makeNone();
}

static CallResult listAppend(Interpreter &in, ExternalCall &call) {
  std::optional<ObjectId> id = selfOf(in, call, H::List, 2, 2);
  if (!id)
    return CallResult::declined();
  changeContents(in, *id, call.loc).items.push_back(call.args[1]);
  return makeNone();
}

static CallResult listExtend(Interpreter &in, ExternalCall &call) {
  std::optional<ObjectId> id = selfOf(in, call, H::List, 2, 2);
  if (!id)
    return CallResult::declined();
  FailureOr<std::vector<Var>> items = in.unpack(call.args[1], call.loc);
  if (failed(items))
    return failure();
  llvm::append_range(changeContents(in, *id, call.loc).items, *items);
  return makeNone();
}

static CallResult listInsert(Interpreter &in, ExternalCall &call) {
  std::optional<ObjectId> id = selfOf(in, call, H::List, 3, 3);
  if (!id)
    return CallResult::declined();
  FailureOr<int64_t> index = constantIntArgument(call.args[1], "the index", call.loc);
  if (failed(index))
    return failure();
  int64_t size = in.getHeap().get(*id).items.size();
  int64_t at = std::clamp(*index < 0 ? *index + size : *index, int64_t(0), size);
  HeapObject &list = changeContents(in, *id, call.loc);
  list.items.insert(list.items.begin() + at, call.args[2]);
  return makeNone();
}

static CallResult listPop(Interpreter &in, ExternalCall &call) {
  std::optional<ObjectId> id = selfOf(in, call, H::List, 1, 2);
  if (!id)
    return CallResult::declined();
  int64_t size = in.getHeap().get(*id).items.size();
  int64_t index = size - 1;
  if (call.args.size() == 2) {
    FailureOr<int64_t> i = constantIntArgument(call.args[1], "the index", call.loc);
    if (failed(i))
      return failure();
    index = *i < 0 ? *i + size : *i;
  }
  if (index < 0 || index >= size)
    return in.raiseBuiltinException("builtins.IndexError", {makeStr("pop index out of range")},
                                    call.loc, "pop index out of range");
  HeapObject &list = changeContents(in, *id, call.loc);
  Var item = list.items[index];
  list.items.erase(list.items.begin() + index);
  return item;
}

static CallResult listClear(Interpreter &in, ExternalCall &call) {
  std::optional<ObjectId> id = selfOf(in, call, H::List, 1, 1);
  if (!id)
    return CallResult::declined();
  changeContents(in, *id, call.loc).items.clear();
  return makeNone();
}

static CallResult listCopy(Interpreter &in, ExternalCall &call) {
  std::optional<ObjectId> id = selfOf(in, call, H::List, 1, 1);
  if (!id)
    return CallResult::declined();
  return in.makeList(in.getHeap().get(*id).items);
}

static CallResult listLength(Interpreter &in, ExternalCall &call) {
  std::optional<ObjectId> id = selfOf(in, call, H::List, 1, 1);
  if (!id)
    return CallResult::declined();
  return makeInt(in.getHeap().get(*id).items.size(), in.getContext());
}

static CallResult listReverse(Interpreter &in, ExternalCall &call) {
  std::optional<ObjectId> id = selfOf(in, call, H::List, 1, 1);
  if (!id)
    return CallResult::declined();
  std::vector<Var> &items = changeContents(in, *id, call.loc).items;
  std::reverse(items.begin(), items.end());
  return makeNone();
}

/// The position of the first item equal to `value` in `items`, or nullopt.
static FailureOr<std::optional<size_t>> findItem(Interpreter &in, llvm::ArrayRef<Var> items,
                                                 const Var &value, Location loc) {
  for (auto [i, item] : llvm::enumerate(items)) {
    FailureOr<bool> same = in.equals(item, value, loc);
    if (failed(same))
      return failure();
    if (*same)
      return std::optional<size_t>(i);
  }
  return std::optional<size_t>();
}

/// index(), count() and remove() of a value (compared as Python compares it).
static CallResult listSearch(Interpreter &in, ExternalCall &call) {
  // (tuple.index and tuple.count too: the same search over the tuple's items.)
  bool tuple = !call.args.empty() && call.args[0]->is(K::Tuple);
  std::optional<ObjectId> id = tuple ? std::nullopt : selfOf(in, call, H::List, 2, 2);
  if (tuple ? call.args.size() != 2 || !call.arguments.keywords.empty() : !id)
    return CallResult::declined();
  llvm::StringRef method = call.name.rsplit('.').second;
  std::vector<Var> items = tuple ? call.args[0]->items : in.getHeap().get(*id).items;
  if (method == "count") {
    int64_t count = 0;
    for (const Var &item : items) {
      FailureOr<bool> same = in.equals(item, call.args[1], call.loc);
      if (failed(same))
        return failure();
      count += *same;
    }
    return makeInt(count, in.getContext());
  }
  FailureOr<std::optional<size_t>> found = findItem(in, items, call.args[1], call.loc);
  if (failed(found))
    return failure();
  if (!*found) {
    std::string message =
        (tuple ? "tuple." : "list.") + method.str() + "(x): x not in " + (tuple ? "tuple" : "list");
    return in.raiseBuiltinException("builtins.ValueError", {makeStr(message)}, call.loc,
                                    message + " (ValueError)");
  }
  if (method == "index")
    return makeInt(static_cast<int64_t>(**found), in.getContext());
  HeapObject &list = changeContents(in, *id, call.loc);
  list.items.erase(list.items.begin() + **found);
  return makeNone();
}

//===----------------------------------------------------------------------===//
// dict
//===----------------------------------------------------------------------===//

/// keys(), values() and items(), as tuples.
static CallResult dictView(Interpreter &in, ExternalCall &call) {
  std::optional<ObjectId> id = selfOf(in, call, H::Dict);
  if (!id)
    return CallResult::declined();
  llvm::StringRef view = call.name.rsplit('.').second;
  std::vector<Var> items;
  for (const auto &[key, value] : in.getHeap().get(*id).entries)
    items.push_back(view == "keys" ? key : view == "values" ? value : makeTuple({key, value}));
  return makeTuple(std::move(items));
}

/// get(), pop() and setdefault() of a key, with a default.
static CallResult dictGet(Interpreter &in, ExternalCall &call) {
  std::optional<ObjectId> id = selfOf(in, call, H::Dict, 2);
  if (!id)
    return CallResult::declined();
  llvm::StringRef method = call.name.rsplit('.').second;
  FailureOr<std::optional<size_t>> found = in.findDictEntry(*id, call.args[1], call.loc);
  if (failed(found))
    return failure();
  if (*found) {
    Var value = in.getHeap().get(*id).entries[**found].second;
    if (method == "pop") {
      HeapObject &dict = changeContents(in, *id, call.loc);
      dict.entries.erase(dict.entries.begin() + **found);
    }
    return value;
  }
  Var fallback = call.args.size() >= 3 ? call.args[2] : makeNone();
  if (method == "pop" && call.args.size() < 3)
    return in.raiseBuiltinException("builtins.KeyError", {call.args[1]}, call.loc,
                                    "dict.pop() of a missing key raises KeyError");
  if (method == "setdefault")
    changeContents(in, *id, call.loc).entries.emplace_back(call.args[1], fallback);
  return fallback;
}

/// update(other=(), **keywords): a dict or key/value pairs, then the keywords (read as
/// dict() reads them), each stored as `d[key] = value`.
static CallResult dictUpdate(Interpreter &in, ExternalCall &call) {
  std::optional<ObjectId> id = selfOf(in, call, H::Dict, 1, 2, {"**"});
  if (!id)
    return CallResult::declined();
  CallArguments arguments{std::vector<Var>(call.args.begin() + 1, call.args.end()),
                          call.arguments.keywords};
  FailureOr<Var> other = in.call(makeExternal("builtins.dict"), std::move(arguments), call.loc);
  if (failed(other))
    return failure();
  for (auto [key, value] : in.getHeap().get((*other)->object).entries)
    if (failed(in.storeSubscript(call.args[0], key, value, call.loc)))
      return failure();
  return makeNone();
}

/// popitem(): the last entry (OrderedDict's popitem(last=False) is not modelled).
static CallResult dictPopItem(Interpreter &in, ExternalCall &call) {
  std::optional<ObjectId> id = selfOf(in, call, H::Dict, 1, 1);
  if (!id)
    return CallResult::declined();
  if (in.getHeap().get(*id).entries.empty())
    return call.error() << "popitem(): dictionary is empty (KeyError)";
  HeapObject &dict = changeContents(in, *id, call.loc);
  auto [key, value] = dict.entries.back();
  dict.entries.pop_back();
  return makeTuple({key, value});
}

static CallResult dictCopy(Interpreter &in, ExternalCall &call) {
  std::optional<ObjectId> id = selfOf(in, call, H::Dict);
  if (!id)
    return CallResult::declined();
  HeapObject copy;
  copy.kind = H::Dict;
  copy.entries = in.getHeap().get(*id).entries;
  return makeObject(in.newObject(std::move(copy)));
}

static CallResult dictClear(Interpreter &in, ExternalCall &call) {
  std::optional<ObjectId> id = selfOf(in, call, H::Dict);
  if (!id)
    return CallResult::declined();
  changeContents(in, *id, call.loc).entries.clear();
  return makeNone();
}

//===----------------------------------------------------------------------===//
// set
//===----------------------------------------------------------------------===//

/// The items of `items` whose membership in `other` is `member` (Python equality).
static FailureOr<std::vector<Var>> filterBy(Interpreter &in, llvm::ArrayRef<Var> items,
                                            llvm::ArrayRef<Var> other, bool member, Location loc) {
  std::vector<Var> kept;
  for (const Var &item : items) {
    FailureOr<std::optional<size_t>> found = findItem(in, other, item, loc);
    if (failed(found))
      return failure();
    if (found->has_value() == member)
      kept.push_back(item);
  }
  return kept;
}

LogicalResult Interpreter::addToSet(std::vector<Var> &set, llvm::ArrayRef<Var> items,
                                    Location loc) {
  for (const Var &item : items) {
    FailureOr<std::vector<Var>> fresh = filterBy(*this, {item}, set, false, loc);
    if (failed(fresh))
      return failure();
    llvm::append_range(set, *fresh);
  }
  return success();
}

FailureOr<Var> Interpreter::makeSet(llvm::ArrayRef<Var> items, Location loc) {
  std::vector<Var> set;
  if (failed(addToSet(set, items, loc)))
    return failure();
  return makeSequence(H::Set, std::move(set));
}

static CallResult setAdd(Interpreter &in, ExternalCall &call) {
  std::optional<ObjectId> id = selfOf(in, call, H::Set, 2, 2);
  if (!id)
    return CallResult::declined();
  std::vector<Var> items = in.getHeap().get(*id).items;
  if (failed(in.addToSet(items, {call.args[1]}, call.loc)))
    return failure();
  if (items.size() != in.getHeap().get(*id).items.size())
    changeContents(in, *id, call.loc).items = std::move(items);
  return makeNone();
}

/// The items of a set, or of any iterable the interpreter can list.
static FailureOr<std::vector<Var>> itemsOf(Interpreter &in, const Var &iterable, Location loc) {
  if (in.getHeap().kindOf(iterable) == H::Set)
    return in.getHeap().get(iterable->object).items;
  return in.unpack(iterable, loc);
}

/// discard(x), remove(x) and pop().
static CallResult setTake(Interpreter &in, ExternalCall &call) {
  llvm::StringRef method = call.name.rsplit('.').second;
  bool pop = method == "pop";
  std::optional<ObjectId> id = selfOf(in, call, H::Set, pop ? 1 : 2, pop ? 1 : 2);
  if (!id)
    return CallResult::declined();
  std::vector<Var> items = in.getHeap().get(*id).items;
  if (pop) {
    if (items.empty())
      return in.raiseBuiltinException("builtins.KeyError", {makeStr("pop from an empty set")},
                                      call.loc, "pop from an empty set (KeyError)");
    HeapObject &set = changeContents(in, *id, call.loc);
    Var item = set.items.front();
    set.items.erase(set.items.begin());
    return item;
  }
  FailureOr<std::optional<size_t>> found = findItem(in, items, call.args[1], call.loc);
  if (failed(found))
    return failure();
  if (!*found) {
    if (method == "remove")
      return in.raiseBuiltinException("builtins.KeyError", {call.args[1]}, call.loc,
                                      "set.remove(x): x not in set (KeyError)");
    return makeNone();
  }
  HeapObject &set = changeContents(in, *id, call.loc);
  set.items.erase(set.items.begin() + **found);
  return makeNone();
}

/// union, intersection, difference and symmetric_difference (new sets, in Python's
/// iteration order of a set built that way), their in-place `_update` forms and update(),
/// issubset, issuperset, isdisjoint, copy and clear.
static CallResult setAlgebra(Interpreter &in, ExternalCall &call) {
  std::optional<ObjectId> id = selfOf(in, call, H::Set);
  if (!id)
    return CallResult::declined();
  llvm::StringRef method = call.name.rsplit('.').second;
  std::vector<Var> result = in.getHeap().get(*id).items;
  if (method == "clear" || method == "copy") {
    if (call.args.size() != 1)
      return CallResult::declined();
    if (method == "copy")
      return in.makeSequence(H::Set, result);
    changeContents(in, *id, call.loc).items.clear();
    return makeNone();
  }
  bool predicate = method == "issubset" || method == "issuperset" || method == "isdisjoint";
  if (predicate && call.args.size() != 2)
    return CallResult::declined();
  bool inPlace = method == "update" || method.ends_with("_update");
  llvm::StringRef operation = method == "update" ? "union" : method.split("_update").first;
  for (const Var &other : llvm::ArrayRef<Var>(call.args).drop_front()) {
    FailureOr<std::vector<Var>> items = itemsOf(in, other, call.loc);
    if (failed(items))
      return failure();
    FailureOr<std::vector<Var>> next = result;
    if (operation == "issubset" || operation == "isdisjoint" || operation == "intersection" ||
        operation == "difference")
      next = filterBy(in, result, *items, operation == "isdisjoint" || operation == "intersection",
                      call.loc);
    else if (operation == "issuperset")
      next = filterBy(in, *items, result, false, call.loc);
    else if (operation == "symmetric_difference")
      next = filterBy(in, result, *items, false, call.loc);
    else if (operation != "union")
      return CallResult::declined();
    if (failed(next))
      return failure();
    if (predicate)
      return makeBool(next->empty());
    // union adds the other's new items; symmetric_difference those not in the set.
    if (operation == "union" || operation == "symmetric_difference") {
      FailureOr<std::vector<Var>> added =
          operation == "union" ? *items : filterBy(in, *items, result, false, call.loc);
      if (failed(added) || failed(in.addToSet(*next, *added, call.loc)))
        return failure();
    }
    result = std::move(*next);
  }
  if (!inPlace)
    return in.makeSequence(H::Set, std::move(result));
  changeContents(in, *id, call.loc).items = std::move(result);
  return makeNone();
}

/// `dict.__getitem__(self, key)`, `__setitem__`, `__delitem__` (and list's): the
/// container's own item access, past what a subclass defines (`super().__setitem__`).
static CallResult rawItem(Interpreter &in, ExternalCall &call) {
  llvm::StringRef method = call.name.rsplit('.').second;
  size_t arity = method == "__setitem__" ? 3 : 2;
  if (call.args.size() != arity || !call.arguments.keywords.empty())
    return CallResult::declined();
  if (method == "__getitem__")
    return in.subscript(call.args[0], call.args[1], call.loc, /*raw=*/true);
  LogicalResult done =
      method == "__setitem__"
          ? in.storeSubscript(call.args[0], call.args[1], call.args[2], call.loc, /*raw=*/true)
          : in.deleteSubscript(call.args[0], call.args[1], call.loc, /*raw=*/true);
  if (failed(done))
    return failure();
  return makeNone();
}

/// `object.__setattr__(self, name, value)` and `__delattr__` (also through a list, dict
/// or set base): the attribute itself, past a `__setattr__` the class defines.
static CallResult rawSetAttribute(Interpreter &in, ExternalCall &call) {
  bool set = call.name.ends_with("__setattr__");
  if (call.args.size() != (set ? 3u : 2u) || !call.args[1]->is(K::Str))
    return CallResult::declined();
  if (failed(in.setInstanceAttribute(call.args[0], call.args[1]->name, set ? call.args[2] : Var(),
                                     call.loc)))
    return failure();
  return makeNone();
}

/// `dict.__init__(self, ...)`, list's and set's (a subclass's `super().__init__(...)`):
/// the contents from the arguments, as update / extend do.
static CallResult containerInit(Interpreter &in, ExternalCall &call) {
  if (call.args.empty())
    return CallResult::declined();
  llvm::StringRef type = call.name.starts_with("builtins.list.")  ? "list"
                         : call.name.starts_with("builtins.set.") ? "set"
                                                                  : "dict";
  if (call.args.size() == 1 && call.arguments.keywords.empty())
    return makeNone();
  std::string fill = ("builtins." + type + (type == "list" ? ".extend" : ".update")).str();
  FailureOr<Var> done = in.call(makeExternal(fill), call.arguments, call.loc);
  if (failed(done))
    return failure();
  return makeNone();
}

void tgc::py::registerContainerMethods(CallRegistry &registry) {
  for (llvm::StringRef type : {"list", "dict", "set"})
    registry.add(("builtins." + type + ".__init__").str(), containerInit);
  for (llvm::StringRef type : {"list", "dict"})
    for (llvm::StringRef method : {"__getitem__", "__setitem__", "__delitem__"})
      registry.add(("builtins." + type + "." + method).str(), rawItem);
  for (llvm::StringRef type : {"object", "list", "dict", "set"})
    for (llvm::StringRef method : {"__setattr__", "__delattr__"})
      registry.add(("builtins." + type + "." + method).str(), rawSetAttribute);
  registry.add("builtins.list.sort", listSort);
  registry.add("builtins.list.append", listAppend);
  registry.add("builtins.list.extend", listExtend);
  registry.add("builtins.list.insert", listInsert);
  registry.add("builtins.list.pop", listPop);
  registry.add("builtins.list.clear", listClear);
  registry.add("builtins.list.copy", listCopy);
  registry.add("builtins.list.__len__", listLength);
  registry.add("builtins.list.reverse", listReverse);
  for (llvm::StringRef method : {"index", "count", "remove"})
    registry.add(("builtins.list." + method).str(), listSearch);
  for (llvm::StringRef method : {"index", "count"})
    registry.add(("builtins.tuple." + method).str(), listSearch);
  for (llvm::StringRef view : {"keys", "values", "items"})
    registry.add(("builtins.dict." + view).str(), dictView);
  for (llvm::StringRef method : {"get", "pop", "setdefault"})
    registry.add(("builtins.dict." + method).str(), dictGet);
  registry.add("builtins.dict.update", dictUpdate);
  registry.add("builtins.dict.copy", dictCopy);
  registry.add("builtins.dict.clear", dictClear);
  registry.add("builtins.dict.popitem", dictPopItem);
  registry.add("builtins.set.add", setAdd);
  for (llvm::StringRef method : {"discard", "remove", "pop"})
    registry.add(("builtins.set." + method).str(), setTake);
  for (llvm::StringRef method :
       {"union", "intersection", "difference", "symmetric_difference", "update",
        "intersection_update", "difference_update", "symmetric_difference_update", "issubset",
        "issuperset", "isdisjoint", "copy", "clear"})
    registry.add(("builtins.set." + method).str(), setAlgebra);
}
