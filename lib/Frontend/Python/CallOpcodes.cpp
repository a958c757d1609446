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

/// 3.13's CALL_KW: the keyword names of the CALL that follows are the tuple on top.
static LogicalResult popKwNames(ExecutionStep &step) {
  Var names = step.frame.pop();
  step.frame.kwNames.clear();
  for (const Var &item : names->items) {
    if (!item->is(Variable::Kind::Str))
      return step.error() << "keyword names must be strings";
    step.frame.kwNames.push_back(item->name);
  }
  return success();
}

/// The callable under a call's arguments, as the two slots below them hold it: NULL and
/// the callable (3.11, 3.12), the callable and NULL (3.13), or a method and its self
/// (all three), which goes first into `args`.
static Var popCallable(Frame &frame, std::vector<Var> &args) {
  Var second = frame.pop();
  Var first = frame.pop();
  if (first->is(Variable::Kind::Null))
    return second;
  if (!second->is(Variable::Kind::Null))
    args.insert(args.begin(), second);
  return first;
}

/// `super()` without arguments, as CPython's super_init_without_args finds them in the
/// calling frame: the `__class__` cell the compiler makes for methods that name `super`,
/// and the first argument (from its cell if a closure captured it). 3.12 and 3.13
/// compile `super().name` to LOAD_SUPER_ATTR; 3.11 calls `super` like any global.
static FailureOr<std::vector<Var>> superArguments(ExecutionStep &step) {
  const CodeObject &code = step.code();
  Heap &heap = step.interpreter.getHeap();
  auto slot = llvm::find(code.localsPlusNames, "__class__");
  if (code.argCount == 0 || slot == code.localsPlusNames.end())
    return step.error() << "super() without arguments outside a method";
  FailureOr<ObjectId> classCell = step.cellAt(slot - code.localsPlusNames.begin());
  if (failed(classCell))
    return failure();
  Var cls = heap.get(*classCell).contents;
  Var self = step.frame.locals.at(0);
  if (self && (code.localsPlusKinds.at(0) & kFastCell)) {
    FailureOr<ObjectId> selfCell = step.cellAt(0);
    if (failed(selfCell))
      return failure();
    self = heap.get(*selfCell).contents;
  }
  if (!cls || !self)
    return step.error() << "super(): empty __class__ cell or first argument";
  return std::vector<Var>{cls, self};
}

/// CALL: the callable's two slots (popCallable), then the arguments, the last of them
/// named by the preceding KW_NAMES or CALL_KW.
static LogicalResult callOpcode(ExecutionStep &step) {
  Frame &frame = step.frame;
  std::vector<Var> args = frame.popN(step.arg());
  Var callable = popCallable(frame, args);
  if (args.empty() && frame.kwNames.empty() && callable->is(Variable::Kind::External) &&
      callable->name == "builtins.super") {
    FailureOr<std::vector<Var>> superArgs = superArguments(step);
    if (failed(superArgs))
      return failure();
    args = std::move(*superArgs);
  }
  CallArguments call;
  size_t numKeywords = frame.kwNames.size();
  if (numKeywords > args.size())
    return step.error() << "malformed bytecode: " << step.instruction.sourceName << " "
                        << step.arg() << " names " << numKeywords << " keywords";
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
  std::vector<Var> self;
  Var callable = popCallable(frame, self);
  CallArguments call;
  FailureOr<std::vector<Var>> positional = interpreter.unpack(args, step.loc);
  if (failed(positional))
    return failure();
  call.positional = std::move(self);
  llvm::append_range(call.positional, *positional);
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
  if (!codeVar->is(Variable::Kind::Code) || !codeVar->code)
    return step.error() << "malformed bytecode: MAKE_FUNCTION of a value that is not a code "
                           "object ("
                        << describe(step.interpreter.getHeap(), codeVar) << ")";
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

/// 3.13's SET_FUNCTION_ATTRIBUTE: MAKE_FUNCTION's flags one at a time, the value under
/// the function.
static LogicalResult setFunctionAttribute(ExecutionStep &step) {
  Frame &frame = step.frame;
  Var functionVar = frame.pop();
  Var value = frame.pop();
  Heap &heap = step.interpreter.getHeap();
  if (!functionVar->is(Variable::Kind::Object) ||
      heap.get(functionVar->object).kind != HeapObject::Kind::Function)
    return step.error() << "SET_FUNCTION_ATTRIBUTE on a value that is not a function";
  HeapObject &function = heap.mutate(functionVar->object);
  switch (step.arg()) {
  case 0x08:
    function.closure = value->items;
    break;
  case 0x04: // annotations
    break;
  case 0x02:
    function.kwDefaults.clear();
    for (auto &[key, item] : heap.get(value->object).entries)
      function.kwDefaults.emplace_back(key->name, item);
    break;
  case 0x01:
    function.defaults = value->items;
    break;
  default:
    return step.error() << "SET_FUNCTION_ATTRIBUTE " << step.arg() << " is not supported";
  }
  frame.push(functionVar);
  return success();
}

void tgc::py::registerCallOpcodes(OpcodeTable &table) {
  table.add({Opcode::KW_NAMES}, kwNames);
  table.add({Opcode::CALL}, callOpcode);
  table.add({Opcode::CALL_FUNCTION_EX}, callFunctionEx);
  table.add({Opcode::CALL_INTRINSIC_1}, callIntrinsic1);
  table.add({Opcode::MAKE_FUNCTION}, makeFunction);
  table.add({Opcode::SET_FUNCTION_ATTRIBUTE}, setFunctionAttribute);
  table.add({Opcode::POP_KW_NAMES}, popKwNames);
}
