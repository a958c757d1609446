// Opcodes of containers: subscripts and slices, building tuples, lists, sets, dicts and
// slices, unpacking sequences, and the structural tests of `match` statements.
#include "Frame.h"
#include "Interpreter.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace tgc;
using namespace tgc::py;

//===----------------------------------------------------------------------===//
// Subscripts and slices
//===----------------------------------------------------------------------===//

static LogicalResult binarySubscr(ExecutionStep &step) {
  Var key = step.frame.pop();
  Var container = step.frame.pop();
  return step.push(step.interpreter.subscript(container, key, step.loc));
}

static LogicalResult storeSubscr(ExecutionStep &step) {
  Var key = step.frame.pop();
  Var container = step.frame.pop();
  Var value = step.frame.pop();
  return step.interpreter.storeSubscript(container, key, value, step.loc);
}

static LogicalResult deleteSubscr(ExecutionStep &step) {
  Var key = step.frame.pop();
  Var container = step.frame.pop();
  return step.interpreter.deleteSubscript(container, key, step.loc);
}

/// BINARY_SLICE / STORE_SLICE: container[start:stop], the bounds on top of the stack.
static Var popSlice(Frame &frame) {
  Variable slice;
  slice.kind = Variable::Kind::Slice;
  Var stop = frame.pop();
  Var start = frame.pop();
  slice.items = {start, stop, makeNone()};
  return makeVar(std::move(slice));
}

static LogicalResult binarySlice(ExecutionStep &step) {
  Var slice = popSlice(step.frame);
  Var container = step.frame.pop();
  return step.push(step.interpreter.subscript(container, slice, step.loc));
}

static LogicalResult storeSlice(ExecutionStep &step) {
  Var slice = popSlice(step.frame);
  Var container = step.frame.pop();
  Var value = step.frame.pop();
  return step.interpreter.storeSubscript(container, slice, value, step.loc);
}

//===----------------------------------------------------------------------===//
// Building
//===----------------------------------------------------------------------===//

static LogicalResult buildTuple(ExecutionStep &step) {
  step.frame.push(makeTuple(step.frame.popN(step.arg())));
  return success();
}

/// BUILD_LIST and BUILD_SET (a set keeps the first of equal items).
static LogicalResult buildList(ExecutionStep &step) {
  std::vector<Var> items = step.frame.popN(step.arg());
  if (step.instruction.opcode == Opcode::BUILD_SET)
    return step.push(step.interpreter.makeSet(items, step.loc));
  step.frame.push(step.interpreter.makeList(std::move(items)));
  return success();
}

static LogicalResult buildMap(ExecutionStep &step) {
  uint32_t arg = step.arg();
  std::vector<Var> flat = step.frame.popN(2 * arg);
  HeapObject dict;
  dict.kind = HeapObject::Kind::Dict;
  for (uint32_t i = 0; i < arg; ++i)
    dict.entries.emplace_back(flat[2 * i], flat[2 * i + 1]);
  step.frame.push(makeObject(step.interpreter.newObject(std::move(dict))));
  return success();
}

static LogicalResult buildConstKeyMap(ExecutionStep &step) {
  uint32_t arg = step.arg();
  Var keys = step.frame.pop();
  std::vector<Var> values = step.frame.popN(arg);
  HeapObject dict;
  dict.kind = HeapObject::Kind::Dict;
  for (uint32_t i = 0; i < arg; ++i)
    dict.entries.emplace_back(keys->items.at(i), values[i]);
  step.frame.push(makeObject(step.interpreter.newObject(std::move(dict))));
  return success();
}

static LogicalResult buildSlice(ExecutionStep &step) {
  Variable slice;
  slice.kind = Variable::Kind::Slice;
  slice.items = step.frame.popN(step.arg());
  if (step.arg() == 2)
    slice.items.push_back(makeNone());
  step.frame.push(makeVar(std::move(slice)));
  return success();
}

/// LIST_APPEND and SET_ADD into the list or set a comprehension is building (a set
/// only takes an item it does not hold).
static LogicalResult listAppend(ExecutionStep &step) {
  Var value = step.frame.pop();
  Var list = step.frame.peek(step.arg());
  Heap &heap = step.interpreter.getHeap();
  if (step.instruction.opcode == Opcode::SET_ADD) {
    // (A comparison may allocate: the set's items are updated after it.)
    std::vector<Var> items = heap.get(list->object).items;
    if (failed(step.interpreter.addToSet(items, {value}, step.loc)))
      return failure();
    heap.mutate(list->object).items = std::move(items);
    return success();
  }
  heap.mutate(list->object).items.push_back(value);
  return success();
}

/// LIST_EXTEND and SET_UPDATE.
static LogicalResult listExtend(ExecutionStep &step) {
  Var iterable = step.frame.pop();
  FailureOr<std::vector<Var>> items = step.interpreter.unpack(iterable, step.loc);
  if (failed(items))
    return failure();
  Var list = step.frame.peek(step.arg());
  Heap &heap = step.interpreter.getHeap();
  if (step.instruction.opcode == Opcode::SET_UPDATE) {
    std::vector<Var> set = heap.get(list->object).items;
    if (failed(step.interpreter.addToSet(set, *items, step.loc)))
      return failure();
    heap.mutate(list->object).items = std::move(set);
    return success();
  }
  llvm::append_range(heap.mutate(list->object).items, *items);
  return success();
}

static LogicalResult mapAdd(ExecutionStep &step) {
  Var value = step.frame.pop();
  Var key = step.frame.pop();
  Var dict = step.frame.peek(step.arg());
  return step.interpreter.storeSubscript(dict, key, value, step.loc);
}

/// DICT_UPDATE and DICT_MERGE.
static LogicalResult dictUpdate(ExecutionStep &step) {
  Interpreter &interpreter = step.interpreter;
  Var update = step.frame.pop();
  Var dict = step.frame.peek(step.arg());
  if (!update->is(Variable::Kind::Object) ||
      interpreter.getHeap().get(update->object).kind != HeapObject::Kind::Dict)
    return step.error() << "dict update with a non-dict";
  for (auto [key, value] : interpreter.getHeap().get(update->object).entries)
    if (failed(interpreter.storeSubscript(dict, key, value, step.loc)))
      return failure();
  return success();
}

//===----------------------------------------------------------------------===//
// Unpacking
//===----------------------------------------------------------------------===//

static LogicalResult unpackSequence(ExecutionStep &step) {
  FailureOr<std::vector<Var>> items = step.interpreter.unpack(step.frame.pop(), step.loc);
  if (failed(items))
    return failure();
  if (items->size() != step.arg())
    return step.error() << "cannot unpack " << items->size() << " values into " << step.arg();
  for (auto it = items->rbegin(); it != items->rend(); ++it)
    step.frame.push(*it);
  return success();
}

/// `a, *rest, b = ...`: the starred part is a new list.
static LogicalResult unpackEx(ExecutionStep &step) {
  Frame &frame = step.frame;
  FailureOr<std::vector<Var>> items = step.interpreter.unpack(frame.pop(), step.loc);
  if (failed(items))
    return failure();
  size_t before = step.arg() & 0xff, after = step.arg() >> 8;
  if (items->size() < before + after)
    return step.error() << "not enough values to unpack";
  std::vector<Var> rest(items->begin() + before, items->end() - after);
  for (size_t i = 0; i < after; ++i)
    frame.push((*items)[items->size() - 1 - i]);
  frame.push(step.interpreter.makeList(std::move(rest)));
  for (size_t i = before; i-- > 0;)
    frame.push((*items)[i]);
  return success();
}

//===----------------------------------------------------------------------===//
// Pattern matching (`match` statements)
//===----------------------------------------------------------------------===//

using H = HeapObject::Kind;

/// GET_LEN: len() of the subject, which stays below it.
static LogicalResult getLen(ExecutionStep &step) {
  Var subject = step.frame.peek(1);
  return step.push(
      step.interpreter.call(makeExternal("builtins.len"), CallArguments{{subject}, {}}, step.loc));
}

/// MATCH_SEQUENCE / MATCH_MAPPING: whether the subject is a sequence (a tuple, list,
/// range, deque; not a str) or a mapping (a dict), pushed above it.
static LogicalResult matchKind(ExecutionStep &step) {
  Var subject = step.frame.peek(1);
  std::optional<H> kind = step.interpreter.getHeap().kindOf(subject);
  bool matches = step.instruction.opcode == Opcode::MATCH_SEQUENCE
                     ? subject->is(Variable::Kind::Tuple) || subject->is(Variable::Kind::Range) ||
                           kind == H::List
                     : kind == H::Dict;
  step.frame.push(makeBool(matches));
  return success();
}

/// MATCH_KEYS: the values of the keys on top in the mapping below them, or None when
/// one is missing.
static LogicalResult matchKeys(ExecutionStep &step) {
  Interpreter &interpreter = step.interpreter;
  Var keys = step.frame.peek(1);
  Var subject = step.frame.peek(2);
  if (!keys->is(Variable::Kind::Tuple) || interpreter.getHeap().kindOf(subject) != H::Dict)
    return step.error() << "malformed bytecode: MATCH_KEYS of "
                        << describe(interpreter.getHeap(), subject);
  std::vector<Var> values;
  for (const Var &key : keys->items) {
    Var found;
    for (const auto &[candidate, value] : interpreter.getHeap().get(subject->object).entries) {
      FailureOr<bool> same = interpreter.equals(candidate, key, step.loc);
      if (failed(same))
        return failure();
      if (*same) {
        found = value;
        break;
      }
    }
    if (!found) {
      step.frame.push(makeNone());
      return success();
    }
    values.push_back(found);
  }
  step.frame.push(makeTuple(std::move(values)));
  return success();
}

/// MATCH_CLASS count: the subject's attributes a class pattern names (the first
/// `count` positionally, through the class's __match_args__, then the keywords on top),
/// or None when the subject is not an instance of the class or lacks one of them.
static LogicalResult matchClass(ExecutionStep &step) {
  Interpreter &interpreter = step.interpreter;
  Var names = step.frame.pop();
  Var cls = step.frame.pop();
  Var subject = step.frame.pop();
  // The truth of builtins.<function>(args...).
  auto test = [&](llvm::StringRef function, std::vector<Var> args) -> FailureOr<bool> {
    FailureOr<Var> result = interpreter.call(makeExternal(("builtins." + function).str()),
                                             CallArguments{std::move(args), {}}, step.loc);
    if (failed(result))
      return failure();
    return interpreter.truth(*result, step.loc);
  };
  FailureOr<bool> isInstance = test("isinstance", {subject, cls});
  if (failed(isInstance))
    return failure();
  if (!*isInstance) {
    step.frame.push(makeNone());
    return success();
  }
  std::vector<std::string> attributes;
  size_t count = step.arg();
  // bool, int, float, str, tuple, list, dict, set...: one positional pattern is the
  // subject itself.
  static constexpr llvm::StringLiteral kSelfMatching[] = {
      "builtins.bool",  "builtins.bytearray", "builtins.bytes", "builtins.dict",
      "builtins.float", "builtins.frozenset", "builtins.int",   "builtins.list",
      "builtins.set",   "builtins.str",       "builtins.tuple"};
  std::vector<Var> extracted;
  bool selfMatching = cls->is(Variable::Kind::External) &&
                      llvm::is_contained(kSelfMatching, llvm::StringRef(cls->name));
  if (count > 0 && selfMatching) {
    if (count > 1)
      return step.error() << describe(interpreter.getHeap(), cls) << "() accepts 1 positional "
                          << "sub-pattern (" << count << " given) (TypeError)";
    extracted.push_back(subject);
  } else if (count > 0) {
    FailureOr<bool> hasMatchArgs = test("hasattr", {cls, makeStr("__match_args__")});
    if (failed(hasMatchArgs))
      return failure();
    Var matchArgs;
    if (*hasMatchArgs) {
      FailureOr<Var> read = interpreter.getAttribute(cls, "__match_args__", step.loc);
      if (failed(read))
        return failure();
      matchArgs = *read;
    }
    if (!matchArgs || !matchArgs->is(Variable::Kind::Tuple) || matchArgs->items.size() < count)
      return step.error() << describe(interpreter.getHeap(), cls) << "() accepts "
                          << (matchArgs && matchArgs->is(Variable::Kind::Tuple)
                                  ? matchArgs->items.size()
                                  : 0)
                          << " positional sub-patterns (" << count << " given) (TypeError)";
    for (size_t i = 0; i < count; ++i) {
      if (!matchArgs->items[i]->is(Variable::Kind::Str))
        return step.error() << "__match_args__ elements must be strings (TypeError)";
      attributes.push_back(matchArgs->items[i]->name);
    }
  }
  if (!names->is(Variable::Kind::Tuple))
    return step.error() << "malformed bytecode: MATCH_CLASS without its keyword names";
  for (const Var &name : names->items)
    attributes.push_back(name->name);
  for (const std::string &attribute : attributes) {
    FailureOr<bool> present = test("hasattr", {subject, makeStr(attribute)});
    if (failed(present))
      return failure();
    if (!*present) {
      step.frame.push(makeNone());
      return success();
    }
    FailureOr<Var> value = interpreter.getAttribute(subject, attribute, step.loc);
    if (failed(value))
      return failure();
    extracted.push_back(*value);
  }
  step.frame.push(makeTuple(std::move(extracted)));
  return success();
}

void tgc::py::registerContainerOpcodes(OpcodeTable &table) {
  table.add({Opcode::BINARY_SUBSCR}, binarySubscr);
  table.add({Opcode::STORE_SUBSCR}, storeSubscr);
  table.add({Opcode::DELETE_SUBSCR}, deleteSubscr);
  table.add({Opcode::BINARY_SLICE}, binarySlice);
  table.add({Opcode::STORE_SLICE}, storeSlice);
  table.add({Opcode::BUILD_TUPLE}, buildTuple);
  table.add({Opcode::BUILD_LIST, Opcode::BUILD_SET}, buildList);
  table.add({Opcode::BUILD_MAP}, buildMap);
  table.add({Opcode::BUILD_CONST_KEY_MAP}, buildConstKeyMap);
  table.add({Opcode::BUILD_SLICE}, buildSlice);
  table.add({Opcode::LIST_APPEND, Opcode::SET_ADD}, listAppend);
  table.add({Opcode::LIST_EXTEND, Opcode::SET_UPDATE}, listExtend);
  table.add({Opcode::MAP_ADD}, mapAdd);
  table.add({Opcode::DICT_UPDATE, Opcode::DICT_MERGE}, dictUpdate);
  table.add({Opcode::UNPACK_SEQUENCE}, unpackSequence);
  table.add({Opcode::UNPACK_EX}, unpackEx);
  table.add({Opcode::GET_LEN}, getLen);
  table.add({Opcode::MATCH_SEQUENCE, Opcode::MATCH_MAPPING}, matchKind);
  table.add({Opcode::MATCH_KEYS}, matchKeys);
  table.add({Opcode::MATCH_CLASS}, matchClass);
}
