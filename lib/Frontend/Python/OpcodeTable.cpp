// The opcode table: the handler of each opcode the interpreter executes, registered by the
// file of its family, and the helpers handlers share.
#include "Frame.h"
#include "Interpreter.h"

#include "llvm/ADT/STLExtras.h"
#include <cassert>

using namespace mlir;
using namespace tgc;
using namespace tgc::py;

void OpcodeTable::add(std::initializer_list<Opcode> opcodes, OpcodeHandler handler) {
  for (Opcode opcode : opcodes) {
    OpcodeHandler &slot = handlers[static_cast<uint8_t>(opcode)];
    if (slot)
      duplicates.push_back(opcode);
    else
      slot = handler;
  }
}

const OpcodeTable &tgc::py::getOpcodeTable() {
  static const OpcodeTable table = [] {
    OpcodeTable t;
    registerStackOpcodes(t);
    registerNameOpcodes(t);
    registerContainerOpcodes(t);
    registerCallOpcodes(t);
    registerControlFlowOpcodes(t);
    registerOperatorOpcodes(t);
    registerExceptionOpcodes(t);
    registerFormatOpcodes(t);
    assert(t.getDuplicates().empty() && "an opcode has two handlers");
    return t;
  }();
  return table;
}

LogicalResult ExecutionStep::push(FailureOr<Var> value) {
  if (failed(value))
    return failure();
  frame.push(*value);
  return success();
}

void ExecutionStep::pushCallable(Var value, bool withNull) {
  bool nullFirst = code().pythonMinor < 13;
  if (withNull && nullFirst)
    frame.push(makeNull());
  frame.push(std::move(value));
  if (withNull && !nullFirst)
    frame.push(makeNull());
}

LogicalResult ExecutionStep::jumpTo(unsigned index) {
  int position = frame.code->positionAt(index);
  if (position < 0)
    return error() << "jump into the middle of an instruction";
  frame.position = position;
  return success();
}

FailureOr<ObjectId> ExecutionStep::cellAt(uint32_t slot) {
  Var cell = frame.locals.at(slot);
  if (!cell || !cell->is(Variable::Kind::Object) ||
      interpreter.getHeap().get(cell->object).kind != HeapObject::Kind::Cell)
    return error() << "slot " << slot << " holds no cell";
  return cell->object;
}
