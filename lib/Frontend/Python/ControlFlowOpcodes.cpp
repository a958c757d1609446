// Opcodes of control flow: jumps, branches and `for` loops.
#include "Frame.h"
#include "Interpreter.h"

using namespace mlir;
using namespace tgc;
using namespace tgc::py;

static LogicalResult getIter(ExecutionStep &step) {
  return step.push(step.interpreter.iterate(step.frame.pop(), step.loc));
}

/// The next item of the iterator on top of the stack; when exhausted, pops it and jumps
/// past the END_FOR at the target.
static LogicalResult forIter(ExecutionStep &step) {
  Frame &frame = step.frame;
  Heap &heap = step.interpreter.getHeap();
  Var iterator = frame.stack.back();
  const HeapObject &state = heap.get(iterator->object);
  if (state.position < state.items.size()) {
    Var item = state.items[state.position];
    heap.mutate(iterator->object).position++;
    frame.push(item);
    return success();
  }
  frame.pop();
  if (failed(step.jump()))
    return failure();
  if (frame.position < frame.code->instructions.size() &&
      frame.code->instructions[frame.position].opcode == Opcode::END_FOR)
    ++frame.position;
  return success();
}

static LogicalResult jump(ExecutionStep &step) { return step.jump(); }

/// POP_JUMP_IF_FALSE and POP_JUMP_IF_TRUE: a branch on a tensor's value is a graph break.
static LogicalResult popJumpIf(ExecutionStep &step) {
  Var condition = step.frame.pop();
  if (condition->is(Variable::Kind::Tensor) && !step.interpreter.canBreakGraph())
    return step.error() << "graph break: the branch depends on a tensor's value (data-dependent "
                           "control flow; use torch.cond or torch.where, or compile with "
                           "--allow-graph-breaks)";
  FailureOr<bool> value = step.interpreter.truth(condition, step.loc);
  if (failed(value))
    return failure();
  if (*value == (step.instruction.opcode == Opcode::POP_JUMP_IF_TRUE))
    return step.jump();
  return success();
}

/// POP_JUMP_IF_NONE and POP_JUMP_IF_NOT_NONE.
static LogicalResult popJumpIfNone(ExecutionStep &step) {
  bool isNone = step.frame.pop()->is(Variable::Kind::None);
  if (isNone == (step.instruction.opcode == Opcode::POP_JUMP_IF_NONE))
    return step.jump();
  return success();
}

void tgc::py::registerControlFlowOpcodes(OpcodeTable &table) {
  table.add({Opcode::GET_ITER}, getIter);
  table.add({Opcode::FOR_ITER}, forIter);
  table.add({Opcode::JUMP_FORWARD, Opcode::JUMP_BACKWARD, Opcode::JUMP_BACKWARD_NO_INTERRUPT},
            jump);
  table.add({Opcode::POP_JUMP_IF_FALSE, Opcode::POP_JUMP_IF_TRUE}, popJumpIf);
  table.add({Opcode::POP_JUMP_IF_NONE, Opcode::POP_JUMP_IF_NOT_NONE}, popJumpIfNone);
}
