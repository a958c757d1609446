// Frames of the bytecode interpreter and the opcode table: each opcode of Opcodes.def that
// tgc executes has a handler, registered by the file of its family.
#ifndef TGC_LIB_FRONTEND_PYTHON_FRAME_H
#define TGC_LIB_FRONTEND_PYTHON_FRAME_H

#include "Bytecode.h"
#include "Variables.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/Support/LLVM.h"
#include <array>
#include <initializer_list>
#include <optional>
#include <stdexcept>

namespace tgc::py {

class Interpreter;

/// The state of one running Python function.
struct Frame {
  std::shared_ptr<DecodedCode> code;
  /// co_localsplus slots; null means unbound.
  std::vector<Var> locals;
  std::vector<Var> stack;
  ObjectId globals = 0;
  /// The cells of the function's free variables (COPY_FREE_VARS copies them in).
  std::vector<Var> closure;
  /// Names of the keyword arguments of the next CALL (KW_NAMES).
  std::vector<std::string> kwNames;
  size_t position = 0;
  /// The position of the instruction being executed (a raise looks up its handler).
  size_t current = 0;
  /// A generator function's frame, run to completion when called: what it yields.
  std::optional<std::vector<Var>> yielded;
  /// A generator that a `contextlib.contextmanager` drives: YIELD_VALUE returns the value
  /// from `run` with the frame suspended after it, and the next `run` resumes it with the
  /// value sent in on its stack.
  bool suspendAtYield = false;
  bool suspended = false;

  /// Malformed bytecode that pops more than its stack holds throws std::out_of_range,
  /// as `at()` does for operands out of range; Interpreter::execute reports it.
  Var pop() {
    if (stack.empty())
      throw std::out_of_range("the value stack is empty");
    Var v = stack.back();
    stack.pop_back();
    return v;
  }
  std::vector<Var> popN(size_t n) {
    if (n > stack.size())
      throw std::out_of_range("the value stack holds fewer values than popped");
    std::vector<Var> values(stack.end() - n, stack.end());
    stack.resize(stack.size() - n);
    return values;
  }
  void push(Var v) { stack.push_back(std::move(v)); }
  /// The stack entry `depth` from the top (1: the top), as COPY and LIST_APPEND count.
  Var &peek(size_t depth) { return stack.at(stack.size() - depth); }
};

/// One instruction being executed: what an opcode handler works on.
struct ExecutionStep {
  ExecutionStep(Interpreter &interpreter, Frame &frame, const Instruction &instruction,
                mlir::Location loc)
      : interpreter(interpreter), frame(frame), instruction(instruction), loc(loc) {}

  Interpreter &interpreter;
  Frame &frame;
  const Instruction &instruction;
  /// The instruction's place in the user's source: errors point there.
  mlir::Location loc;
  /// Set by the return opcodes: the frame returns `result` after this instruction.
  bool returned = false;
  Var result;

  uint32_t arg() const { return instruction.arg; }
  const CodeObject &code() const { return *frame.code->code; }
  /// co_names[index].
  llvm::StringRef name(uint32_t index) const { return code().names.at(index); }
  mlir::InFlightDiagnostic error() const { return mlir::emitError(loc); }
  /// Pushes `value`, or fails with it.
  mlir::LogicalResult push(mlir::FailureOr<Var> value);
  /// Pushes a callable loaded for a CALL: with `withNull`, also the NULL slot that says
  /// it has no self, below it up to 3.12 and above it from 3.13 on.
  void pushCallable(Var value, bool withNull);
  /// Continues at the instruction at code-unit `index`.
  mlir::LogicalResult jumpTo(unsigned index);
  /// Continues at the target of this (jump) instruction.
  mlir::LogicalResult jump() { return jumpTo(frame.code->jumpTarget(instruction)); }
  /// The cell object in local slot `slot`, or an error.
  mlir::FailureOr<ObjectId> cellAt(uint32_t slot);
};

/// Executes one instruction (the frame's position already points past it).
using OpcodeHandler = mlir::LogicalResult (*)(ExecutionStep &step);

/// The handlers of the opcodes tgc executes, indexed by opcode (Opcodes.def gives every
/// opcode of the instruction set its value); an opcode without one is not supported.
class OpcodeTable {
public:
  /// Registers `handler` for each of `opcodes`. An opcode registered twice keeps its
  /// first handler and is listed by getDuplicates() (a bug, which the unit tests catch).
  void add(std::initializer_list<Opcode> opcodes, OpcodeHandler handler);
  /// The handler of `opcode`, null when tgc does not execute it.
  OpcodeHandler lookup(Opcode opcode) const { return handlers[static_cast<uint8_t>(opcode)]; }
  llvm::ArrayRef<Opcode> getDuplicates() const { return duplicates; }

private:
  std::array<OpcodeHandler, 256> handlers{};
  llvm::SmallVector<Opcode> duplicates;
};

/// The interpreter's table: every registerXOpcodes function below applied once.
const OpcodeTable &getOpcodeTable();

/// NOP, stack shuffles, constants, returns and generators (StackOpcodes.cpp).
void registerStackOpcodes(OpcodeTable &table);
/// Loads, stores and deletes of locals, cells, globals and attributes (NameOpcodes.cpp).
void registerNameOpcodes(OpcodeTable &table);
/// Subscripts, slices and the building and unpacking of containers
/// (ContainerOpcodes.cpp).
void registerContainerOpcodes(OpcodeTable &table);
/// Calls and function creation (CallOpcodes.cpp).
void registerCallOpcodes(OpcodeTable &table);
/// Jumps, branches and iteration (ControlFlowOpcodes.cpp).
void registerControlFlowOpcodes(OpcodeTable &table);
/// Unary, binary, comparison, identity and membership operators (OperatorOpcodes.cpp).
void registerOperatorOpcodes(OpcodeTable &table);
/// `with` blocks, `raise` and `assert` (ExceptionOpcodes.cpp).
void registerExceptionOpcodes(OpcodeTable &table);
/// f-strings: FORMAT_VALUE and BUILD_STRING (FormatOpcodes.cpp).
void registerFormatOpcodes(OpcodeTable &table);

} // namespace tgc::py

#endif // TGC_LIB_FRONTEND_PYTHON_FRAME_H
