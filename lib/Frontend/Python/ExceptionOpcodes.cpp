// Opcodes of `with` blocks, `raise`, `assert` and exception handlers. A raise unwinds to
// the handler of the exception table (Interpreter::raiseException, Exceptions.cpp); the
// handler's code runs these opcodes: PUSH_EXC_INFO, CHECK_EXC_MATCH, POP_EXCEPT, RERAISE
// and, for a `with` block left by an exception, WITH_EXCEPT_START.
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

/// The exception `raise value` raises: `value` itself when it is an exception, a new
/// instance when it is an exception class (`raise KeyError`).
static FailureOr<Var> toException(ExecutionStep &step, Var value) {
  Interpreter &interpreter = step.interpreter;
  const Heap &heap = interpreter.getHeap();
  if (interpreter.isExceptionClass(value))
    return interpreter.call(value, {}, step.loc);
  if (heap.kindOf(value) == HeapObject::Kind::Instance) {
    FailureOr<Var> cls = interpreter.getClassOf(value);
    if (failed(cls))
      return failure();
    if (interpreter.isExceptionClass(*cls))
      return value;
  }
  return step.error() << "exceptions must derive from BaseException, not " << describe(heap, value);
}

/// `raise` (0: re-raise the exception being handled), `raise exc` (1), `raise exc from
/// cause` (2).
static LogicalResult raiseVarargs(ExecutionStep &step) {
  Interpreter &interpreter = step.interpreter;
  if (step.arg() == 0) {
    Var handled = interpreter.getHandledException();
    if (!handled)
      return step.error() << "RuntimeError: no active exception to re-raise";
    return interpreter.raiseException(handled, step.loc);
  }
  if (step.arg() > 2)
    return step.error() << "malformed bytecode: RAISE_VARARGS " << step.arg();
  Var cause = step.arg() == 2 ? step.frame.pop() : Var();
  FailureOr<Var> exception = toException(step, step.frame.pop());
  if (failed(exception))
    return failure();
  if (cause) {
    FailureOr<Var> causeException =
        cause->is(Variable::Kind::None) ? FailureOr<Var>(cause) : toException(step, cause);
    if (failed(causeException) ||
        failed(
            interpreter.setInstanceAttribute(*exception, "__cause__", *causeException, step.loc)) ||
        failed(interpreter.setInstanceAttribute(*exception, "__suppress_context__", makeBool(true),
                                                step.loc)))
      return failure();
  }
  return interpreter.raiseException(*exception, step.loc);
}

/// An exception handler's start: saves the exception being handled (below the new one)
/// and makes the new one current.
static LogicalResult pushExcInfo(ExecutionStep &step) {
  Interpreter &interpreter = step.interpreter;
  Var exception = step.frame.pop();
  Var previous = interpreter.getHandledException();
  step.frame.push(previous ? previous : makeNone());
  interpreter.setHandledException(exception);
  step.frame.push(exception);
  return success();
}

/// A handler's end: the saved exception is current again.
static LogicalResult popExcept(ExecutionStep &step) {
  Var previous = step.frame.pop();
  step.interpreter.setHandledException(previous->is(Variable::Kind::None) ? Var() : previous);
  return success();
}

/// `except cls:`: whether the exception below is an instance of `cls` (a class or a
/// tuple of them); the exception stays.
static LogicalResult checkExcMatch(ExecutionStep &step) {
  Interpreter &interpreter = step.interpreter;
  Var cls = step.frame.pop();
  Var exception = step.frame.peek(1);
  for (const Var &candidate : cls->is(Variable::Kind::Tuple) ? cls->items : std::vector{cls}) {
    if (!interpreter.isExceptionClass(candidate))
      return step.error() << "catching classes that do not inherit from BaseException is not "
                             "allowed ("
                          << describe(interpreter.getHeap(), candidate) << ")";
  }
  return step.push(interpreter.call(makeExternal("builtins.isinstance"),
                                    CallArguments{{exception, cls}, {}}, step.loc));
}

/// Re-raises the exception on top (a handler that did not match, a `finally` block's
/// end); with an argument, the raising instruction's offset sits below it (CPython
/// restores it for the traceback; tgc reports the first raise's place).
static LogicalResult reraise(ExecutionStep &step) {
  return step.interpreter.raiseException(step.frame.pop(), step.loc);
}

/// A `with` block left by an exception: calls `__exit__(type, value, traceback)` (below
/// the saved lasti and the previous exception) and pushes its result; a true result
/// swallows the exception.
static LogicalResult withExceptStart(ExecutionStep &step) {
  Interpreter &interpreter = step.interpreter;
  Var exit = step.frame.peek(4);
  Var exception = step.frame.peek(1);
  FailureOr<Var> cls = interpreter.getClassOf(exception);
  if (failed(cls))
    return failure();
  return step.push(
      interpreter.call(exit, CallArguments{{*cls, exception, makeNone()}, {}}, step.loc));
}

static LogicalResult loadAssertionError(ExecutionStep &step) {
  step.frame.push(makeExternal("builtins.AssertionError"));
  return success();
}

void tgc::py::registerExceptionOpcodes(OpcodeTable &table) {
  table.add({Opcode::BEFORE_WITH}, beforeWith);
  table.add({Opcode::RAISE_VARARGS}, raiseVarargs);
  table.add({Opcode::LOAD_ASSERTION_ERROR}, loadAssertionError);
  table.add({Opcode::PUSH_EXC_INFO}, pushExcInfo);
  table.add({Opcode::POP_EXCEPT}, popExcept);
  table.add({Opcode::CHECK_EXC_MATCH}, checkExcMatch);
  table.add({Opcode::RERAISE}, reraise);
  table.add({Opcode::WITH_EXCEPT_START}, withExceptStart);
}
