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
/// (the decoder's target is past the loop's END_FOR where the version has one).
static LogicalResult forIter(ExecutionStep &step) {
  Frame &frame = step.frame;
  Var iterator = frame.stack.back();
  FailureOr<Var> item = step.interpreter.nextItem(iterator, step.loc);
  if (failed(item))
    return failure();
  if (*item) {
    frame.push(*item);
    return success();
  }
  frame.pop();
  return step.jump();
}

static LogicalResult jump(ExecutionStep &step) { return step.jump(); }

/// The truth of a branch's condition: a branch on a tensor's value is a graph break.
static FailureOr<bool> branchCondition(ExecutionStep &step, const Var &condition) {
  if (condition->is(Variable::Kind::Tensor) && !step.interpreter.canBreakGraph())
    return step.error() << "graph break: the branch depends on a tensor's value (data-dependent "
                           "control flow; use torch.cond or torch.where, or compile with "
                           "--allow-graph-breaks)";
  return step.interpreter.truth(condition, step.loc);
}

/// POP_JUMP_IF_FALSE and POP_JUMP_IF_TRUE.
static LogicalResult popJumpIf(ExecutionStep &step) {
  FailureOr<bool> value = branchCondition(step, step.frame.pop());
  if (failed(value))
    return failure();
  if (*value == (step.instruction.opcode == Opcode::POP_JUMP_IF_TRUE))
    return step.jump();
  return success();
}

/// 3.11's JUMP_IF_FALSE_OR_POP and JUMP_IF_TRUE_OR_POP (`a and b`, `a or b`): the
/// condition stays on the stack when the jump is taken.
static LogicalResult jumpIfOrPop(ExecutionStep &step) {
  FailureOr<bool> value = branchCondition(step, step.frame.stack.back());
  if (failed(value))
    return failure();
  if (*value == (step.instruction.opcode == Opcode::JUMP_IF_TRUE_OR_POP))
    return step.jump();
  step.frame.pop();
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
  table.add({Opcode::JUMP_IF_FALSE_OR_POP, Opcode::JUMP_IF_TRUE_OR_POP}, jumpIfOrPop);
}
