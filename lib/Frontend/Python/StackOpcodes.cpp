// Opcodes that shuffle the stack, push constants, return, and run generators.
#include "Frame.h"
#include "Interpreter.h"

using namespace mlir;
using namespace tgc;
using namespace tgc::py;

static LogicalResult nothing(ExecutionStep &) { return success(); }

static LogicalResult popTop(ExecutionStep &step) {
  step.frame.pop();
  return success();
}

/// END_FOR pops the exhausted iterator's two slots.
static LogicalResult endFor(ExecutionStep &step) {
  step.frame.popN(2);
  return success();
}

static LogicalResult pushNull(ExecutionStep &step) {
  step.frame.push(makeNull());
  return success();
}

static LogicalResult copy(ExecutionStep &step) {
  step.frame.push(step.frame.peek(step.arg()));
  return success();
}

static LogicalResult swap(ExecutionStep &step) {
  std::swap(step.frame.stack.back(), step.frame.peek(step.arg()));
  return success();
}

static LogicalResult loadConst(ExecutionStep &step) {
  step.frame.push(step.interpreter.constantOf(step.code().consts.at(step.arg())));
  return success();
}

static LogicalResult returnConst(ExecutionStep &step) {
  step.returned = true;
  step.result = step.interpreter.constantOf(step.code().consts.at(step.arg()));
  return success();
}

static LogicalResult returnValue(ExecutionStep &step) {
  step.returned = true;
  step.result = step.frame.pop();
  return success();
}

/// The generator object is returned to the caller and resumed at once: the value sent
/// in (None) is what the next instruction pops.
static LogicalResult returnGenerator(ExecutionStep &step) {
  if (!step.frame.yielded)
    return step.error() << "RETURN_GENERATOR outside a generator";
  step.frame.push(makeNone());
  return success();
}

static LogicalResult yieldValue(ExecutionStep &step) {
  if (!step.frame.yielded)
    return step.error() << "yield outside a generator";
  if (step.frame.suspendAtYield) {
    step.returned = true;
    step.result = step.frame.pop();
    step.frame.suspended = true;
    return success();
  }
  step.frame.yielded->push_back(step.frame.pop());
  step.frame.push(makeNone()); // the value sent back in
  return success();
}

void tgc::py::registerStackOpcodes(OpcodeTable &table) {
  table.add({Opcode::NOP, Opcode::RESUME, Opcode::CACHE, Opcode::EXTENDED_ARG}, nothing);
  table.add({Opcode::POP_TOP}, popTop);
  table.add({Opcode::END_FOR}, endFor);
  table.add({Opcode::PUSH_NULL}, pushNull);
  table.add({Opcode::COPY}, copy);
  table.add({Opcode::SWAP}, swap);
  table.add({Opcode::LOAD_CONST}, loadConst);
  table.add({Opcode::RETURN_CONST}, returnConst);
  table.add({Opcode::RETURN_VALUE}, returnValue);
  table.add({Opcode::RETURN_GENERATOR}, returnGenerator);
  table.add({Opcode::YIELD_VALUE}, yieldValue);
}
