// Iteration in the bytecode interpreter: iter() of every iterable the interpreter models,
// and unpacking what an iterable yields.
#include "Interpreter.h"

using namespace mlir;
using namespace tgc;
using namespace tgc::frontend;
using namespace tgc::py;

using K = Variable::Kind;
using H = HeapObject::Kind;

FailureOr<std::vector<Var>> Interpreter::unpack(Var iterable, Location loc) {
  if (iterable->is(K::Tuple))
    return iterable->items;
  std::optional<H> kind = heap.kindOf(iterable);
  if (kind == H::List || kind == H::Set) {
    const std::vector<Var> &items = heap.get(iterable->object).items;
    noteRead(GuardRead::Step::Length, iterable->object, "", nullptr, makeInt(items.size(), ctx),
             loc);
    return items;
  }
  if (kind == H::Iterator) {
    const HeapObject &it = heap.get(iterable->object);
    std::vector<Var> rest(it.items.begin() + it.position, it.items.end());
    heap.mutate(iterable->object).position = it.items.size();
    return rest;
  }
  FailureOr<Var> iterator = iterate(iterable, loc);
  if (failed(iterator))
    return failure();
  return unpack(*iterator, loc);
}

FailureOr<Var> Interpreter::iterate(Var iterable, Location loc) {
  HeapObject iterator;
  iterator.kind = H::Iterator;
  std::optional<H> kind = heap.kindOf(iterable);
  if (kind == H::Iterator)
    return iterable;
  if (iterable->is(K::Tuple) || kind == H::List || kind == H::Set) {
    FailureOr<std::vector<Var>> items = unpack(iterable, loc);
    if (failed(items))
      return failure();
    iterator.items = std::move(*items);
  } else if (kind == H::Dict) {
    for (const auto &entry : heap.get(iterable->object).entries)
      iterator.items.push_back(entry.first);
    noteRead(GuardRead::Step::Keys, iterable->object, "", nullptr, makeTuple(iterator.items), loc);
  } else if (iterable->is(K::Range)) {
    FailureOr<int64_t> start = constantIntArgument(iterable->items[0], "range()'s start", loc);
    FailureOr<int64_t> stop = constantIntArgument(iterable->items[1], "range()'s stop", loc);
    FailureOr<int64_t> step = constantIntArgument(iterable->items[2], "range()'s step", loc);
    if (failed(start) || failed(stop) || failed(step))
      return failure();
    if (*step == 0)
      return error(loc) << "range() step must not be zero";
    for (int64_t i = *start; *step > 0 ? i < *stop : i > *stop; i += *step)
      iterator.items.push_back(makeInt(i, ctx));
  } else if (iterable->is(K::Str)) {
    for (llvm::StringRef c : strCharacters(iterable->name))
      iterator.items.push_back(makeStr(c));
  } else if (iterable->is(K::Tensor)) {
    auto type = llvm::cast<BaseTensorType>(heap.get(iterable->object).tensor.getType());
    if (type.getSizes().empty())
      return error(loc) << "iteration over a 0-d tensor";
    std::optional<int64_t> n = getConstantSize(type.getSizes()[0]);
    if (!n)
      return error(loc) << "iterating over a tensor with a symbolic first dimension";
    for (int64_t i = 0; i < *n; ++i) {
      FailureOr<Var> row = tensorIndex(iterable, makeInt(i, ctx), loc);
      if (failed(row))
        return failure();
      iterator.items.push_back(*row);
    }
  } else if (kind == H::Class && isSubclass(iterable, "enum.Enum")) {
    // An enum class: its members in definition order (aliases left out), as
    // EnumType.__iter__ gives them.
    FailureOr<Var> names = lookupInClass(iterable, "_member_names_");
    FailureOr<Var> members = failed(names) ? names : lookupInClass(iterable, "_member_map_");
    if (failed(members))
      return failure();
    if (!*names || !*members || heap.kindOf(*names) != H::List || heap.kindOf(*members) != H::Dict)
      return error(loc) << describe(heap, iterable)
                        << " has no member list (_member_names_, _member_map_) to iterate";
    for (const Var &name : heap.get((*names)->object).items) {
      FailureOr<Var> member = subscript(*members, name, loc);
      if (failed(member))
        return failure();
      iterator.items.push_back(*member);
    }
  } else if (kind == H::Instance) {
    FailureOr<Var> iter = getAttribute(iterable, "__iter__", loc);
    if (failed(iter))
      return failure();
    FailureOr<Var> result = call(*iter, {}, loc);
    if (failed(result))
      return failure();
    return iterate(*result, loc);
  } else {
    return error(loc) << describe(heap, iterable) << " is not iterable";
  }
  return makeObject(newObject(std::move(iterator)));
}
