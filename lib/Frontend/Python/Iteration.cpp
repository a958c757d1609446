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
    if (it.endless != HeapObject::Endless::No)
      return error(loc) << it.name
                        << "() never ends: tgc reads it through next(), a for loop that breaks, "
                           "or zip(), map() or islice() with a finite bound";
    std::vector<Var> rest(it.items.begin() + it.position, it.items.end());
    heap.mutate(iterable->object).position = it.items.size();
    return rest;
  }
  FailureOr<Var> iterator = iterate(iterable, loc);
  if (failed(iterator))
    return failure();
  return unpack(*iterator, loc);
}

FailureOr<Var> Interpreter::nextItem(Var iterator, Location loc) {
  const HeapObject &it = heap.get(iterator->object);
  switch (it.endless) {
  case HeapObject::Endless::No: {
    if (it.position >= it.items.size())
      return Var();
    Var item = it.items[it.position];
    heap.mutate(iterator->object).position++;
    return item;
  }
  case HeapObject::Endless::Cycle: {
    Var item = it.items[it.position % it.items.size()];
    heap.mutate(iterator->object).position++;
    return item;
  }
  case HeapObject::Endless::Repeat:
    return it.contents;
  case HeapObject::Endless::Count: {
    Var item = it.contents;
    FailureOr<Var> next = binaryOp(/*add*/ 0, item, it.step, loc);
    if (failed(next))
      return failure();
    heap.mutate(iterator->object).contents = *next;
    return item;
  }
  }
  llvm_unreachable("an endless iterator of no kind");
}

FailureOr<std::vector<std::vector<Var>>> Interpreter::unpackZipped(ArrayRef<Var> iterables,
                                                                   Location loc) {
  std::vector<Var> iterators;
  size_t rows = SIZE_MAX;
  for (const Var &iterable : iterables) {
    FailureOr<Var> iterator = iterate(iterable, loc);
    if (failed(iterator))
      return failure();
    iterators.push_back(*iterator);
    const HeapObject &it = heap.get((*iterator)->object);
    if (it.endless == HeapObject::Endless::No)
      rows = std::min(rows, it.items.size() - std::min(it.position, it.items.size()));
  }
  if (rows == SIZE_MAX && !iterators.empty())
    return error(loc) << "zip of endless iterators (" << heap.get(iterators[0]->object).name
                      << ") never ends";
  if (iterators.empty())
    rows = 0;
  std::vector<std::vector<Var>> columns(iterators.size());
  for (size_t row = 0; row < rows; ++row)
    for (auto [column, iterator] : llvm::zip(columns, iterators)) {
      FailureOr<Var> item = nextItem(iterator, loc);
      if (failed(item))
        return failure();
      column.push_back(*item);
    }
  // The round that ends the zip: it advances the arguments before the exhausted one.
  for (const Var &iterator : iterators) {
    FailureOr<Var> item = nextItem(iterator, loc);
    if (failed(item))
      return failure();
    if (!*item)
      break;
  }
  return columns;
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
