// Opcodes of operators: unary, binary, comparison, identity and membership.
#include "Frame.h"
#include "Interpreter.h"

using namespace mlir;
using namespace tgc;
using namespace tgc::py;

static LogicalResult binaryOp(ExecutionStep &step) {
  Var rhs = step.frame.pop();
  Var lhs = step.frame.pop();
  return step.push(step.interpreter.binaryOp(step.arg(), lhs, rhs, step.loc));
}

/// COMPARE_OP: the comparison is the argument's high bits.
static LogicalResult compareOp(ExecutionStep &step) {
  static const char *const kCompareOps[] = {"<", "<=", "==", "!=", ">", ">="};
  Var rhs = step.frame.pop();
  Var lhs = step.frame.pop();
  if ((step.arg() >> 4) >= 6)
    return step.error() << "unknown comparison " << step.arg();
  return step.push(step.interpreter.compareOp(kCompareOps[step.arg() >> 4], lhs, rhs, step.loc));
}

/// `is` (argument 0) and `is not` (1).
static LogicalResult isOp(ExecutionStep &step) {
  Var rhs = step.frame.pop();
  Var lhs = step.frame.pop();
  step.frame.push(makeBool(step.interpreter.identical(lhs, rhs) != (step.arg() == 1)));
  return success();
}

/// `in` (argument 0) and `not in` (1): a dict's keys, or the items of an iterable.
static LogicalResult containsOp(ExecutionStep &step) {
  Interpreter &interpreter = step.interpreter;
  Var container = step.frame.pop();
  Var item = step.frame.pop();
  bool negated = step.arg() == 1;
  // A string holds its substrings.
  if (container->is(Variable::Kind::Str)) {
    if (!item->is(Variable::Kind::Str))
      return step.error() << "'in <string>' requires a string as its left operand";
    step.frame.push(makeBool(llvm::StringRef(container->name).contains(item->name) != negated));
    return success();
  }
  // A class's own `__contains__`.
  FailureOr<Var> contains = interpreter.userSpecialMethod(container, "__contains__", step.loc);
  if (failed(contains))
    return failure();
  if (*contains) {
    FailureOr<Var> result = interpreter.call(*contains, CallArguments{{item}, {}}, step.loc);
    if (failed(result))
      return failure();
    FailureOr<bool> truth = interpreter.truth(*result, step.loc);
    if (failed(truth))
      return failure();
    step.frame.push(makeBool(*truth != negated));
    return success();
  }
  FailureOr<std::vector<Var>> items = failure();
  if (container->is(Variable::Kind::Object) &&
      interpreter.getHeap().get(container->object).kind == HeapObject::Kind::Dict) {
    std::vector<Var> keys;
    for (auto &entry : interpreter.getHeap().get(container->object).entries)
      keys.push_back(entry.first);
    items = keys;
  } else {
    items = interpreter.unpack(container, step.loc);
  }
  if (failed(items))
    return failure();
  bool found = false;
  for (const Var &candidate : *items) {
    FailureOr<bool> same = interpreter.equals(candidate, item, step.loc);
    if (failed(same))
      return failure();
    found |= *same;
  }
  step.frame.push(makeBool(found != negated));
  return success();
}

/// UNARY_NEGATIVE and UNARY_INVERT.
static LogicalResult unaryOp(ExecutionStep &step) {
  llvm::StringRef op = step.instruction.opcode == Opcode::UNARY_NEGATIVE ? "-" : "~";
  return step.push(step.interpreter.unaryOp(op, step.frame.pop(), step.loc));
}

static LogicalResult unaryNot(ExecutionStep &step) {
  FailureOr<bool> value = step.interpreter.truth(step.frame.pop(), step.loc);
  if (failed(value))
    return failure();
  step.frame.push(makeBool(!*value));
  return success();
}

void tgc::py::registerOperatorOpcodes(OpcodeTable &table) {
  table.add({Opcode::BINARY_OP}, binaryOp);
  table.add({Opcode::COMPARE_OP}, compareOp);
  table.add({Opcode::IS_OP}, isOp);
  table.add({Opcode::CONTAINS_OP}, containsOp);
  table.add({Opcode::UNARY_NEGATIVE, Opcode::UNARY_INVERT}, unaryOp);
  table.add({Opcode::UNARY_NOT}, unaryNot);
}
