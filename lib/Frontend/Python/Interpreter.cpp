// The CPython 3.11 to 3.13 bytecode interpreter: frames, and the loop that runs a frame's
// instructions through the opcode table.
#include "Interpreter.h"

#include "Frame.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/ScopeExit.h"

using namespace mlir;
using namespace tgc;
using namespace tgc::frontend;
using namespace tgc::py;
using py::Opcode;

/// How deep inlined calls may nest, and how many instructions a capture may run,
/// before the program is judged not to terminate symbolically.
static constexpr unsigned kMaxDepth = 200;
static constexpr uint64_t kMaxSteps = 5'000'000;

Interpreter::Interpreter(const ObjectTable &objects, OpBuilder &builder, TensorSource tensorSource)
    : objects(objects), builder(builder), ctx(builder.getContext()),
      tensorSource(std::move(tensorSource)), atenBuilder(builder) {}

Interpreter::~Interpreter() = default;

Location Interpreter::locationOf(const Frame &frame, const py::Instruction &instruction) const {
  const py::CodeObject &code = *frame.code->code;
  int line = instruction.line >= 0 ? instruction.line : code.firstLineNo;
  return FileLineColLoc::get(ctx, code.filename, line, 0);
}

//===----------------------------------------------------------------------===//
// Frames
//===----------------------------------------------------------------------===//

/// Binds call arguments to a code object's parameters as CPython does.
static LogicalResult bindParameters(const py::CodeObject &code, const HeapObject &function,
                                    CallArguments &arguments, std::vector<Var> &locals,
                                    std::function<InFlightDiagnostic()> emitError) {
  size_t numPositional = code.argCount;
  size_t numKwOnly = code.kwOnlyArgCount;
  bool varArgs = code.flags & py::kVarArgs;
  std::vector<Var> extra;
  for (auto [i, arg] : llvm::enumerate(arguments.positional)) {
    if (i < numPositional)
      locals[i] = arg;
    else if (varArgs)
      extra.push_back(arg);
    else
      return emitError() << function.qualname << "() takes " << numPositional
                         << " positional arguments but " << arguments.positional.size()
                         << " were given";
  }
  for (auto &[name, value] : arguments.keywords) {
    auto begin = code.localsPlusNames.begin() + code.posOnlyArgCount;
    auto end = code.localsPlusNames.begin() + numPositional + numKwOnly;
    auto it = std::find(begin, end, name);
    if (it == end) {
      return emitError() << function.qualname << "() got an unexpected keyword argument '" << name
                         << "'";
    }
    size_t slot = it - code.localsPlusNames.begin();
    if (locals[slot])
      return emitError() << function.qualname << "() got multiple values for argument '" << name
                         << "'";
    locals[slot] = value;
  }
  size_t firstDefault = numPositional - std::min(numPositional, function.defaults.size());
  for (size_t i = 0; i < numPositional; ++i) {
    if (locals[i])
      continue;
    if (i < firstDefault)
      return emitError() << function.qualname << "() missing required argument '"
                         << code.localsPlusNames[i] << "'";
    locals[i] = function.defaults[i - firstDefault];
  }
  for (size_t i = numPositional; i < numPositional + numKwOnly; ++i) {
    if (locals[i])
      continue;
    auto it = llvm::find_if(function.kwDefaults,
                            [&](auto &d) { return d.first == code.localsPlusNames[i]; });
    if (it == function.kwDefaults.end())
      return emitError() << function.qualname << "() missing required keyword argument '"
                         << code.localsPlusNames[i] << "'";
    locals[i] = it->second;
  }
  size_t next = numPositional + numKwOnly;
  // The **kwargs dict is a new object: callFunction allocates it.
  if (varArgs)
    locals[next] = makeTuple(std::move(extra));
  return success();
}

FailureOr<Var> Interpreter::callFunction(ObjectId functionId, CallArguments arguments,
                                         Location loc) {
  const HeapObject &function = heap.get(functionId);
  // torch._dynamo.assume_constant_result: the result Python computed at capture.
  if (function.constantResult && arguments.positional.empty() && arguments.keywords.empty())
    return function.constantResult;
  FailureOr<std::unique_ptr<Frame>> prepared = prepareFrame(functionId, arguments, loc);
  if (failed(prepared))
    return failure();
  Frame &frame = **prepared;
  // A generator (a generator expression, a function with `yield`) runs to completion at
  // the call: its values are all yielded before the consumer sees the first. That is
  // Python's result for a consumer that reads it to the end (sum, list, join, a for
  // loop); a generator whose values depend on what the consumer does in between
  // would differ, which programs rarely do. (A contextlib.contextmanager's generator
  // runs step by step: startGenerator.)
  if (frame.code->code->flags & py::kGenerator)
    frame.yielded.emplace();
  ++depth;
  FailureOr<Var> result = run(frame);
  --depth;
  if (failed(result) || !frame.yielded)
    return result;
  HeapObject iterator;
  iterator.kind = HeapObject::Kind::Iterator;
  iterator.items = std::move(*frame.yielded);
  return makeObject(newObject(std::move(iterator)));
}

FailureOr<std::unique_ptr<Frame>>
Interpreter::prepareFrame(ObjectId functionId, CallArguments &arguments, Location loc) {
  const HeapObject &function = heap.get(functionId);
  py::CodeRef code = function.code;
  if (code->flags & (py::kCoroutine | py::kAsyncGenerator))
    return error(loc) << "calling coroutine or async generator function '" << function.qualname
                      << "' is not supported";
  if (depth >= kMaxDepth)
    return error(loc) << "calls nest deeper than " << kMaxDepth << " frames";
  auto &decodedCode = decoded[code.get()];
  if (!decodedCode) {
    llvm::Expected<py::DecodedCode> result = py::decode(code);
    if (!result)
      return error(loc) << "cannot decode " << function.qualname << ": "
                        << llvm::toString(result.takeError());
    decodedCode = std::make_shared<py::DecodedCode>(std::move(*result));
  }
  auto prepared = std::make_unique<Frame>();
  Frame &frame = *prepared;
  frame.code = decodedCode;
  frame.locals.resize(code->localsPlusNames.size());
  frame.globals = function.globals;
  frame.closure = function.closure;
  // **kwargs collects the keywords no parameter names.
  std::vector<std::pair<std::string, Var>> extraKeywords;
  if (code->flags & py::kVarKeywords) {
    size_t named = code->argCount + code->kwOnlyArgCount;
    auto isParameter = [&](const std::string &name) {
      auto begin = code->localsPlusNames.begin() + code->posOnlyArgCount;
      return std::find(begin, code->localsPlusNames.begin() + named, name) !=
             code->localsPlusNames.begin() + named;
    };
    llvm::erase_if(arguments.keywords, [&](auto &keyword) {
      if (isParameter(keyword.first))
        return false;
      extraKeywords.push_back(keyword);
      return true;
    });
  }
  if (failed(
          bindParameters(*code, function, arguments, frame.locals, [&]() { return error(loc); })))
    return failure();
  if (code->flags & py::kVarKeywords) {
    size_t slot = code->argCount + code->kwOnlyArgCount + ((code->flags & py::kVarArgs) ? 1 : 0);
    HeapObject dict;
    dict.kind = HeapObject::Kind::Dict;
    for (auto &[name, value] : extraKeywords)
      dict.entries.emplace_back(makeStr(name), value);
    frame.locals[slot] = makeObject(newObject(std::move(dict)));
  }
  return prepared;
}

FailureOr<Var> Interpreter::startGenerator(ObjectId owner, Var function, CallArguments arguments,
                                           Location loc) {
  if (heap.kindOf(function) != HeapObject::Kind::Function)
    return error(loc) << "a contextlib.contextmanager of " << describe(heap, function)
                      << ", which is not a Python function, is not supported";
  if (!(heap.get(function->object).code->flags & py::kGenerator))
    return error(loc) << "a contextlib.contextmanager function must be a generator";
  FailureOr<std::unique_ptr<Frame>> prepared = prepareFrame(function->object, arguments, loc);
  if (failed(prepared))
    return failure();
  Frame &frame = **prepared;
  frame.yielded.emplace();
  frame.suspendAtYield = true;
  ++depth;
  FailureOr<Var> value = run(frame);
  --depth;
  if (failed(value))
    return failure();
  if (!frame.suspended)
    return raiseBuiltinException("builtins.RuntimeError", {makeStr("generator didn't yield")}, loc,
                                 "generator didn't yield (RuntimeError)");
  suspendedGenerators[owner] = std::move(*prepared);
  return value;
}

FailureOr<bool> Interpreter::resumeGenerator(ObjectId owner, Location loc) {
  auto it = suspendedGenerators.find(owner);
  if (it == suspendedGenerators.end())
    return error(loc) << "the generator of this context manager is not suspended";
  std::unique_ptr<Frame> frame = std::move(it->second);
  suspendedGenerators.erase(it);
  frame->suspended = false;
  frame->push(makeNone()); // the value sent in
  ++depth;
  FailureOr<Var> value = run(*frame);
  --depth;
  if (failed(value))
    return failure();
  if (!frame->suspended)
    return true;
  suspendedGenerators[owner] = std::move(frame);
  return false;
}

FailureOr<Var> Interpreter::run(Frame &frame) {
  const std::vector<py::Instruction> &instructions = frame.code->instructions;
  activeFrames.push_back(&frame);
  llvm::scope_exit leave([&] { activeFrames.pop_back(); });
  while (frame.position < instructions.size()) {
    if (++steps > kMaxSteps)
      return error(locationOf(frame, instructions[frame.position]))
             << "the program runs more than " << kMaxSteps
             << " instructions; loops must end on values known at capture time";
    frame.current = frame.position;
    const py::Instruction &instruction = instructions[frame.position++];
    ExecutionStep step{*this, frame, instruction, locationOf(frame, instruction)};
    if (failed(execute(step))) {
      // An exception this frame handles continues at its handler; one it does not
      // propagates to the caller's frame (raiseException made sure one handles it).
      if (!pendingException || failed(unwindTo(frame)))
        return failure();
      continue;
    }
    // A handler that recovered from an exception a callee raised (and did not let
    // through) leaves none pending.
    pendingException = nullptr;
    if (step.returned)
      return step.result;
  }
  return error(FileLineColLoc::get(ctx, frame.code->code->filename, 0, 0))
         << "fell off the end of " << frame.code->code->qualname;
}

LogicalResult Interpreter::execute(ExecutionStep &step) {
  const py::CodeObject &code = step.code();
  if (step.frame.stack.size() > static_cast<size_t>(code.stackSize) + 4)
    return step.error() << "stack overflow in " << code.qualname;
  OpcodeHandler handler = getOpcodeTable().lookup(step.instruction.opcode);
  if (!handler)
    return step.error() << "bytecode " << step.instruction.sourceName << " of Python 3."
                        << code.pythonMinor << " is not supported";
  // Operands are read with bounds checks (`at()`, Frame::pop): bytecode that reaches
  // outside its frame (a local, name, constant or stack entry that does not exist) is
  // malformed, which a trace from CPython never is.
  try {
    return handler(step);
  } catch (const std::out_of_range &) {
    return step.error() << "malformed bytecode: " << step.instruction.sourceName << " "
                        << step.instruction.arg
                        << " reaches outside its code object (a local, name, constant, cell "
                           "or stack entry it does not have)";
  }
}
