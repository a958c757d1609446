// Subscripts in the bytecode interpreter: indexing, slicing, item assignment and
// deletion of sequences, dicts, tensors and user objects.
#include "Interpreter.h"

using namespace mlir;
using namespace tgc;
using namespace tgc::frontend;
using namespace tgc::py;

using K = Variable::Kind;
using H = HeapObject::Kind;

/// Python's slice.indices for a constant length.
static LogicalResult sliceIndices(const Variable &slice, int64_t length, int64_t &start,
                                  int64_t &stop, int64_t &step, Location loc) {
  auto part = [&](const Var &v, int64_t fallback, int64_t &out) -> LogicalResult {
    if (v->is(K::None)) {
      out = fallback;
      return success();
    }
    FailureOr<int64_t> i = constantIntArgument(v, "a slice bound", loc);
    if (failed(i))
      return failure();
    out = *i;
    return success();
  };
  if (failed(part(slice.items[2], 1, step)))
    return failure();
  if (step == 0)
    return emitError(loc) << "slice step cannot be zero";
  int64_t lower = step < 0 ? -1 : 0, upper = step < 0 ? length - 1 : length;
  auto clampIndex = [&](int64_t i) {
    if (i < 0)
      i += length;
    return std::clamp(i, lower, upper);
  };
  if (failed(part(slice.items[0], step < 0 ? upper : lower, start)) ||
      failed(part(slice.items[1], step < 0 ? lower : upper, stop)))
    return failure();
  if (!slice.items[0]->is(K::None))
    start = clampIndex(start);
  if (!slice.items[1]->is(K::None))
    stop = clampIndex(stop);
  return success();
}

FailureOr<std::optional<size_t>> Interpreter::findDictEntry(ObjectId dict, Var key, Location loc) {
  for (auto [i, entry] : llvm::enumerate(heap.get(dict).entries)) {
    FailureOr<bool> same = equals(entry.first, key, loc);
    if (failed(same))
      return failure();
    if (*same)
      return std::optional<size_t>(i);
  }
  return std::optional<size_t>();
}

FailureOr<Var> Interpreter::subscript(Var container, Var key, Location loc, bool raw) {
  if (container->is(K::Tensor))
    return tensorIndex(container, key, loc);
  std::optional<H> kind = heap.kindOf(container);
  if (!raw && kind != H::Instance) {
    FailureOr<Var> getItem = userSpecialMethod(container, "__getitem__", loc);
    if (failed(getItem))
      return failure();
    if (*getItem)
      return call(*getItem, CallArguments{{key}, {}}, loc);
  }
  if (kind == H::Dict) {
    FailureOr<std::optional<size_t>> found = findDictEntry(container->object, key, loc);
    if (failed(found))
      return failure();
    if (!*found) {
      // collections.defaultdict: a missing key gets default_factory(), stored; a
      // collections.Counter counts it 0.
      const HeapObject &dict = heap.get(container->object);
      if (dict.classObject && dict.classObject->is(K::External) &&
          dict.classObject->name == "collections.Counter")
        return makeInt(0, ctx);
      Var factory = dict.classObject && dict.classObject->is(K::External) &&
                            dict.classObject->name == "collections.defaultdict"
                        ? dict.getAttribute("default_factory")
                        : Var();
      if (!factory || factory->is(K::None)) {
        // A program that catches the KeyError relies on the key being absent.
        std::vector<Var> keys;
        for (const auto &entry : dict.entries)
          keys.push_back(entry.first);
        noteRead(GuardRead::Step::Keys, container->object, "", nullptr, makeTuple(keys), loc);
        return raiseBuiltinException("builtins.KeyError", {key}, loc,
                                     "key not found in dict (KeyError)");
      }
      FailureOr<Var> value = call(factory, CallArguments{}, loc);
      if (failed(value) || failed(storeSubscript(container, key, *value, loc)))
        return failure();
      return *value;
    }
    const auto &[foundKey, value] = heap.get(container->object).entries[**found];
    noteRead(GuardRead::Step::Item, container->object, "", foundKey, value, loc);
    return value;
  }
  if (kind == H::Instance) {
    FailureOr<Var> getItem = getAttribute(container, "__getitem__", loc);
    if (failed(getItem))
      return failure();
    return call(*getItem, CallArguments{{key}, {}}, loc);
  }
  if (!container->is(K::Tuple) && kind != H::List && !container->is(K::Str))
    return error(loc) << describe(heap, container) << " is not subscriptable";
  std::vector<Var> items;
  if (container->is(K::Str)) {
    for (llvm::StringRef c : strCharacters(container->name))
      items.push_back(makeStr(c));
  } else {
    FailureOr<std::vector<Var>> unpacked = unpack(container, loc);
    if (failed(unpacked))
      return failure();
    items = std::move(*unpacked);
  }
  int64_t length = items.size();
  if (key->is(K::Slice)) {
    int64_t start, stop, step;
    if (failed(sliceIndices(*key, length, start, stop, step, loc)))
      return failure();
    std::vector<Var> result;
    for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step)
      result.push_back(items[i]);
    if (container->is(K::Str)) {
      std::string text;
      for (const Var &c : result)
        text += c->name;
      return makeStr(text);
    }
    if (container->is(K::Tuple))
      return makeTuple(std::move(result));
    return makeList(std::move(result));
  }
  FailureOr<int64_t> index = constantIntArgument(key, "a sequence index", loc);
  if (failed(index))
    return failure();
  int64_t i = *index < 0 ? *index + length : *index;
  if (i < 0 || i >= length) {
    if (kind == H::List)
      noteRead(GuardRead::Step::Length, container->object, "", nullptr, makeInt(length, ctx), loc);
    return raiseBuiltinException(
        "builtins.IndexError",
        {makeStr(container->is(K::Str) ? "string index out of range" : "index out of range")}, loc,
        "index " + llvm::Twine(*index) + " out of range for a sequence of " + llvm::Twine(length));
  }
  if (kind == H::List)
    noteRead(GuardRead::Step::Item, container->object, "", makeInt(i, ctx), items[i], loc);
  return items[i];
}

LogicalResult Interpreter::storeSubscript(Var container, Var key, Var value, Location loc,
                                          bool raw) {
  std::optional<H> kind = heap.kindOf(container);
  if (!raw && kind != H::Instance) {
    FailureOr<Var> setItem = userSpecialMethod(container, "__setitem__", loc);
    if (failed(setItem))
      return failure();
    if (*setItem)
      return success(succeeded(call(*setItem, CallArguments{{key, value}, {}}, loc)));
  }
  if (kind == H::Dict) {
    FailureOr<std::optional<size_t>> found = findDictEntry(container->object, key, loc);
    if (failed(found))
      return failure();
    HeapObject &dict =
        mutateObject(container->object, SideEffect::Kind::SetContents, "", nullptr, loc);
    if (*found)
      dict.entries[**found].second = value;
    else
      dict.entries.emplace_back(key, value);
    return success();
  }
  if (kind == H::List && key->is(K::Slice)) {
    // l[a:b] = items replaces the range; l[a:b:c] = items needs as many items as the
    // extended slice selects (ValueError otherwise), as in Python.
    int64_t length = heap.get(container->object).items.size();
    int64_t start, stop, step;
    if (failed(sliceIndices(*key, length, start, stop, step, loc)))
      return failure();
    FailureOr<std::vector<Var>> items = unpack(value, loc);
    if (failed(items))
      return failure();
    HeapObject &list =
        mutateObject(container->object, SideEffect::Kind::SetContents, "", nullptr, loc);
    if (step == 1) {
      stop = std::max(start, stop);
      list.items.erase(list.items.begin() + start, list.items.begin() + stop);
      list.items.insert(list.items.begin() + start, items->begin(), items->end());
      return success();
    }
    std::vector<int64_t> indices;
    for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step)
      indices.push_back(i);
    if (indices.size() != items->size())
      return error(loc) << "attempt to assign a sequence of size " << items->size()
                        << " to an extended slice of size " << indices.size() << " (ValueError)";
    for (auto [i, item] : llvm::zip(indices, *items))
      list.items[i] = item;
    return success();
  }
  if (kind == H::List) {
    int64_t length = heap.get(container->object).items.size();
    FailureOr<int64_t> index = constantIntArgument(key, "a list index", loc);
    if (failed(index))
      return failure();
    int64_t i = *index < 0 ? *index + length : *index;
    if (i < 0 || i >= length)
      return error(loc) << "list assignment index out of range";
    mutateObject(container->object, SideEffect::Kind::SetContents, "", nullptr, loc).items[i] =
        value;
    return success();
  }
  if (container->is(K::Tensor))
    return storeTensorIndex(container, key, value, loc);
  if (kind == H::Instance) {
    FailureOr<Var> setItem = getAttribute(container, "__setitem__", loc);
    if (failed(setItem))
      return failure();
    return success(succeeded(call(*setItem, CallArguments{{key, value}, {}}, loc)));
  }
  return error(loc) << describe(heap, container) << " does not support item assignment";
}

LogicalResult Interpreter::deleteSubscript(Var container, Var key, Location loc, bool raw) {
  std::optional<H> kind = heap.kindOf(container);
  if (!raw && kind != H::Instance) {
    FailureOr<Var> delItem = userSpecialMethod(container, "__delitem__", loc);
    if (failed(delItem))
      return failure();
    if (*delItem)
      return success(succeeded(call(*delItem, CallArguments{{key}, {}}, loc)));
  }
  if (kind == H::Dict) {
    FailureOr<std::optional<size_t>> found = findDictEntry(container->object, key, loc);
    if (failed(found))
      return failure();
    if (!*found)
      return error(loc) << "del of a missing key (KeyError)";
    HeapObject &dict =
        mutateObject(container->object, SideEffect::Kind::SetContents, "", nullptr, loc);
    dict.entries.erase(dict.entries.begin() + **found);
    return success();
  }
  if (kind == H::List) {
    int64_t length = heap.get(container->object).items.size();
    std::vector<int64_t> indices;
    if (key->is(K::Slice)) {
      int64_t start, stop, step;
      if (failed(sliceIndices(*key, length, start, stop, step, loc)))
        return failure();
      for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step)
        indices.push_back(i);
    } else {
      FailureOr<int64_t> index = constantIntArgument(key, "a list index", loc);
      if (failed(index))
        return failure();
      int64_t i = *index < 0 ? *index + length : *index;
      if (i < 0 || i >= length)
        return error(loc) << "list assignment index out of range";
      indices.push_back(i);
    }
    llvm::sort(indices, std::greater<int64_t>());
    HeapObject &list =
        mutateObject(container->object, SideEffect::Kind::SetContents, "", nullptr, loc);
    for (int64_t i : indices)
      list.items.erase(list.items.begin() + i);
    return success();
  }
  if (kind == H::Instance) {
    FailureOr<Var> delItem = getAttribute(container, "__delitem__", loc);
    if (failed(delItem))
      return failure();
    return success(succeeded(call(*delItem, CallArguments{{key}, {}}, loc)));
  }
  return error(loc) << describe(heap, container) << " does not support item deletion";
}
