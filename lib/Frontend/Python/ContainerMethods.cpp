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
static std::optional<ObjectId> selfOf(Interpreter &in, const ExternalCall &call, H kind,
                                      size_t minArgs = 1, size_t maxArgs = SIZE_MAX) {
  if (call.args.empty() || !call.args[0]->is(K::Object) ||
      in.getHeap().get(call.args[0]->object).kind != kind || call.args.size() < minArgs ||
      call.args.size() > maxArgs)
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
  std::optional<ObjectId> id = selfOf(in, call, H::List, 1, 1);
  if (!id)
    return CallResult::declined();
  std::string unsupported;
  std::optional<bool> reverse = sortReverse(call.arguments.keywords, unsupported);
  if (!reverse)
    return call.error() << "list.sort() with " << unsupported << "= is not supported";
  std::vector<Var> items = in.getHeap().get(*id).items;
  if (!sortConstants(items, *reverse))
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
    return call.error() << "pop index out of range";
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
    return call.error() << "dict.pop() of a missing key raises KeyError";
  if (method == "setdefault")
    changeContents(in, *id, call.loc).entries.emplace_back(call.args[1], fallback);
  return fallback;
}

static CallResult dictUpdate(Interpreter &in, ExternalCall &call) {
  std::optional<ObjectId> id = selfOf(in, call, H::Dict, 2, 2);
  if (!id || in.getHeap().kindOf(call.args[1]) != H::Dict)
    return CallResult::declined();
  for (auto [key, value] : in.getHeap().get(call.args[1]->object).entries)
    if (failed(in.storeSubscript(call.args[0], key, value, call.loc)))
      return failure();
  return makeNone();
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

static CallResult setAdd(Interpreter &in, ExternalCall &call) {
  std::optional<ObjectId> id = selfOf(in, call, H::Set, 2, 2);
  if (!id)
    return CallResult::declined();
  for (const Var &item : in.getHeap().get(*id).items) {
    FailureOr<bool> same = in.equals(item, call.args[1], call.loc);
    if (failed(same))
      return failure();
    if (*same)
      return makeNone();
  }
  changeContents(in, *id, call.loc).items.push_back(call.args[1]);
  return makeNone();
}

void tgc::py::registerContainerMethods(CallRegistry &registry) {
  registry.add("builtins.list.sort", listSort);
  registry.add("builtins.list.append", listAppend);
  registry.add("builtins.list.extend", listExtend);
  registry.add("builtins.list.insert", listInsert);
  registry.add("builtins.list.pop", listPop);
  registry.add("builtins.list.clear", listClear);
  registry.add("builtins.list.copy", listCopy);
  registry.add("builtins.list.__len__", listLength);
  for (llvm::StringRef view : {"keys", "values", "items"})
    registry.add(("builtins.dict." + view).str(), dictView);
  for (llvm::StringRef method : {"get", "pop", "setdefault"})
    registry.add(("builtins.dict." + method).str(), dictGet);
  registry.add("builtins.dict.update", dictUpdate);
  registry.add("builtins.dict.copy", dictCopy);
  registry.add("builtins.dict.clear", dictClear);
  registry.add("builtins.set.add", setAdd);
}
