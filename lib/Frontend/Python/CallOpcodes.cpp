// Opcodes of calls and function creation.
#include "Frame.h"
#include "Interpreter.h"

using namespace mlir;
using namespace tgc;
using namespace tgc::py;

/// The keyword names of the next CALL.
static LogicalResult kwNames(ExecutionStep &step) {
  step.frame.kwNames.clear();
  for (const ConstantRef &item : step.code().consts.at(step.arg())->items)
    step.frame.kwNames.push_back(item->bytes);
  return success();
}

/// CALL: callable (or NULL and callable, or method and self), then the arguments, the
/// last of them named by the preceding KW_NAMES.
static LogicalResult callOpcode(ExecutionStep &step) {
  Frame &frame = step.frame;
  std::vector<Var> args = frame.popN(step.arg());
  Var second = frame.pop();
  Var first = frame.pop();
  Var callable = first;
  if (first->is(Variable::Kind::Null))
    callable = second;
  else
    args.insert(args.begin(), second);
  CallArguments call;
  size_t numKeywords = frame.kwNames.size();
  call.positional.assign(args.begin(), args.end() - numKeywords);
  for (size_t i = 0; i < numKeywords; ++i)
    call.keywords.emplace_back(frame.kwNames[i], args[args.size() - numKeywords + i]);
  frame.kwNames.clear();
  return step.push(step.interpreter.call(callable, std::move(call), step.loc));
}

/// `f(*args, **kwargs)`.
static LogicalResult callFunctionEx(ExecutionStep &step) {
  Frame &frame = step.frame;
  Interpreter &interpreter = step.interpreter;
  Var kwargs = (step.arg() & 1) ? frame.pop() : nullptr;
  Var args = frame.pop();
  Var callable = frame.pop();
  frame.pop(); // NULL
  CallArguments call;
  FailureOr<std::vector<Var>> positional = interpreter.unpack(args, step.loc);
  if (failed(positional))
    return failure();
  call.positional = std::move(*positional);
  if (kwargs) {
    if (!kwargs->is(Variable::Kind::Object) ||
        interpreter.getHeap().get(kwargs->object).kind != HeapObject::Kind::Dict)
      return step.error() << "** arguments must be a dict";
    for (auto &[key, value] : interpreter.getHeap().get(kwargs->object).entries) {
      if (!key->is(Variable::Kind::Str))
        return step.error() << "keywords must be strings";
      call.keywords.emplace_back(key->name, value);
    }
  }
  return step.push(interpreter.call(callable, std::move(call), step.loc));
}

static LogicalResult callIntrinsic1(ExecutionStep &step) {
  Var operand = step.frame.pop();
  if (step.arg() == 6) { // INTRINSIC_LIST_TO_TUPLE
    FailureOr<std::vector<Var>> items = step.interpreter.unpack(operand, step.loc);
    if (failed(items))
      return failure();
    step.frame.push(makeTuple(std::move(*items)));
    return success();
  }
  if (step.arg() == 5) // INTRINSIC_UNARY_POSITIVE
    return step.push(step.interpreter.unaryOp("+", operand, step.loc));
  return step.error() << "intrinsic " << step.arg() << " is not supported";
}

/// A function over the code object on the stack, with what the flags say lies under it:
/// closure cells (0x08), annotations (0x04), keyword-only defaults (0x02), defaults (0x01).
static LogicalResult makeFunction(ExecutionStep &step) {
  Frame &frame = step.frame;
  uint32_t arg = step.arg();
  Var codeVar = frame.pop();
  HeapObject function;
  function.kind = HeapObject::Kind::Function;
  function.code = codeVar->code;
  function.globals = frame.globals;
  function.name = codeVar->code->name;
  function.qualname = codeVar->code->qualname;
  if (arg & 0x08) {
    Var closure = frame.pop();
    function.closure = closure->items;
  }
  if (arg & 0x04)
    frame.pop(); // annotations
  if (arg & 0x02) {
    Var kwDefaults = frame.pop();
    for (auto &[key, value] : step.interpreter.getHeap().get(kwDefaults->object).entries)
      function.kwDefaults.emplace_back(key->name, value);
  }
  if (arg & 0x01)
    function.defaults = frame.pop()->items;
  frame.push(makeObject(step.interpreter.newObject(std::move(function))));
  return success();
}

void tgc::py::registerCallOpcodes(OpcodeTable &table) {
  table.add({Opcode::KW_NAMES}, kwNames);
  table.add({Opcode::CALL}, callOpcode);
  table.add({Opcode::CALL_FUNCTION_EX}, callFunctionEx);
  table.add({Opcode::CALL_INTRINSIC_1}, callIntrinsic1);
  table.add({Opcode::MAKE_FUNCTION}, makeFunction);
}
