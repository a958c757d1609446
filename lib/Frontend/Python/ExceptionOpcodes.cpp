// Opcodes of `with` blocks, `raise` and `assert`. tgc captures programs that do not raise:
// a `with` block's `__exit__` is the call the compiler emits at the block's normal end.
#include "Frame.h"
#include "Interpreter.h"

using namespace mlir;
using namespace tgc;
using namespace tgc::py;

/// Pushes the manager's `__exit__`, then the result of its `__enter__()`.
static LogicalResult beforeWith(ExecutionStep &step) {
  Interpreter &interpreter = step.interpreter;
  Var manager = step.frame.pop();
  FailureOr<Var> exit = interpreter.getAttribute(manager, "__exit__", step.loc);
  FailureOr<Var> enter = failure();
  if (succeeded(exit))
    enter = interpreter.getAttribute(manager, "__enter__", step.loc);
  if (failed(enter))
    return failure();
  step.frame.push(*exit);
  return step.push(interpreter.call(*enter, {}, step.loc));
}

static LogicalResult raiseVarargs(ExecutionStep &step) {
  return step.error() << "the program raises an exception here (tgc captures programs that do "
                         "not raise)";
}

static LogicalResult loadAssertionError(ExecutionStep &step) {
  step.frame.push(makeExternal("builtins.AssertionError"));
  return success();
}

void tgc::py::registerExceptionOpcodes(OpcodeTable &table) {
  table.add({Opcode::BEFORE_WITH}, beforeWith);
  table.add({Opcode::RAISE_VARARGS}, raiseVarargs);
  table.add({Opcode::LOAD_ASSERTION_ERROR}, loadAssertionError);
}
