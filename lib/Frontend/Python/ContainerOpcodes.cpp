// Opcodes of containers: subscripts and slices, building tuples, lists, sets, dicts and
// slices, and unpacking sequences.
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
}
