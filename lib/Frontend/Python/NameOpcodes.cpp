// Opcodes that load, store and delete names: locals, cells, globals and attributes.
#include "Frame.h"
#include "Interpreter.h"

using namespace mlir;
using namespace tgc;
using namespace tgc::py;

//===----------------------------------------------------------------------===//
// Locals and cells
//===----------------------------------------------------------------------===//

static LogicalResult loadFast(ExecutionStep &step) {
  Frame &frame = step.frame;
  uint32_t arg = step.arg();
  if (!frame.locals.at(arg))
    return step.error() << "local variable '" << step.code().localsPlusNames.at(arg)
                        << "' is referenced before assignment";
  frame.push(frame.locals[arg]);
  return success();
}

static LogicalResult loadFastAndClear(ExecutionStep &step) {
  Frame &frame = step.frame;
  uint32_t arg = step.arg();
  frame.push(frame.locals.at(arg) ? frame.locals[arg] : makeNull());
  frame.locals[arg] = nullptr;
  return success();
}

static LogicalResult storeFast(ExecutionStep &step) {
  Var value = step.frame.pop();
  step.frame.locals.at(step.arg()) = value->is(Variable::Kind::Null) ? nullptr : value;
  return success();
}

static LogicalResult deleteFast(ExecutionStep &step) {
  step.frame.locals.at(step.arg()) = nullptr;
  return success();
}

static LogicalResult makeCell(ExecutionStep &step) {
  Frame &frame = step.frame;
  HeapObject cell;
  cell.kind = HeapObject::Kind::Cell;
  cell.contents = frame.locals.at(step.arg());
  frame.locals[step.arg()] = makeObject(step.interpreter.newObject(std::move(cell)));
  return success();
}

static LogicalResult copyFreeVars(ExecutionStep &step) {
  Frame &frame = step.frame;
  uint32_t arg = step.arg();
  size_t first = frame.locals.size() - arg;
  if (frame.closure.size() != arg)
    return step.error() << step.code().qualname << " expects " << arg << " closure cells, has "
                        << frame.closure.size();
  for (uint32_t i = 0; i < arg; ++i)
    frame.locals[first + i] = frame.closure[i];
  return success();
}

static LogicalResult loadClosure(ExecutionStep &step) {
  FailureOr<ObjectId> cell = step.cellAt(step.arg());
  if (failed(cell))
    return failure();
  step.frame.push(step.frame.locals[step.arg()]);
  return success();
}

static LogicalResult loadDeref(ExecutionStep &step) {
  FailureOr<ObjectId> cell = step.cellAt(step.arg());
  if (failed(cell))
    return failure();
  Var contents = step.interpreter.getHeap().get(*cell).contents;
  if (!contents)
    return step.error() << "free variable '" << step.code().localsPlusNames.at(step.arg())
                        << "' is referenced before assignment";
  step.interpreter.noteRead(GuardRead::Step::Cell, *cell, "", nullptr, contents, step.loc);
  step.frame.push(contents);
  return success();
}

/// STORE_DEREF and DELETE_DEREF: a cell write, recorded as a side effect.
static LogicalResult storeDeref(ExecutionStep &step) {
  FailureOr<ObjectId> cell = step.cellAt(step.arg());
  if (failed(cell))
    return failure();
  Var value = step.instruction.opcode == Opcode::STORE_DEREF ? step.frame.pop() : nullptr;
  step.interpreter
      .mutateObject(*cell, SideEffect::Kind::SetCell, step.code().localsPlusNames.at(step.arg()),
                    value, step.loc)
      .contents = value;
  return success();
}

//===----------------------------------------------------------------------===//
// Globals
//===----------------------------------------------------------------------===//

/// A global the module does not define is a builtin.
static LogicalResult loadGlobal(ExecutionStep &step) {
  Frame &frame = step.frame;
  llvm::StringRef global = step.name(step.arg() >> 1);
  Var value = step.interpreter.getHeap().get(frame.globals).getAttribute(global);
  if (value)
    step.interpreter.noteRead(GuardRead::Step::Global, frame.globals, global, nullptr, value,
                              step.loc);
  else
    value = makeExternal(("builtins." + global).str());
  step.pushCallable(value, step.arg() & 1);
  return success();
}

/// STORE_GLOBAL and DELETE_GLOBAL, recorded as side effects.
static LogicalResult storeGlobal(ExecutionStep &step) {
  Frame &frame = step.frame;
  llvm::StringRef name = step.name(step.arg());
  Var value = step.instruction.opcode == Opcode::STORE_GLOBAL ? frame.pop() : nullptr;
  HeapObject &globals = step.interpreter.mutateObject(frame.globals, SideEffect::Kind::SetGlobal,
                                                      name, value, step.loc);
  if (value)
    globals.setAttribute(name, value);
  else
    globals.eraseAttribute(name);
  return success();
}

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

static LogicalResult loadAttr(ExecutionStep &step) {
  Var owner = step.frame.pop();
  FailureOr<Var> value = step.interpreter.getAttribute(owner, step.name(step.arg() >> 1), step.loc);
  if (failed(value))
    return failure();
  // A method load pushes (function, self) for bound methods, else the value and NULL;
  // tgc's values are bound methods already.
  step.pushCallable(*value, step.arg() & 1);
  return success();
}

static LogicalResult storeAttr(ExecutionStep &step) {
  Var owner = step.frame.pop();
  Var value = step.frame.pop();
  return step.interpreter.setAttribute(owner, step.name(step.arg()), value, step.loc);
}

static LogicalResult deleteAttr(ExecutionStep &step) {
  Var owner = step.frame.pop();
  return step.interpreter.setAttribute(owner, step.name(step.arg()), nullptr, step.loc);
}

/// `super().name`: the class and self the compiler loaded, over the global `super`.
static LogicalResult loadSuperAttr(ExecutionStep &step) {
  Frame &frame = step.frame;
  Var self = frame.pop();
  Var cls = frame.pop();
  frame.pop(); // the global `super`
  Variable super;
  super.kind = Variable::Kind::Super;
  super.items = {cls, self};
  FailureOr<Var> value = step.interpreter.getAttribute(makeVar(std::move(super)),
                                                       step.name(step.arg() >> 2), step.loc);
  if (failed(value))
    return failure();
  step.pushCallable(*value, step.arg() & 1);
  return success();
}

//===----------------------------------------------------------------------===//
// Imports
//===----------------------------------------------------------------------===//

/// `import a.b` (pushes `a`), `from a.b import c` and `from . import c` (push `a.b`, the
/// package): the module from the trace's `modules`, the relative level resolved against
/// the globals' `__package__`, as importlib does.
static LogicalResult importName(ExecutionStep &step) {
  Frame &frame = step.frame;
  Var fromList = frame.pop();
  Var level = frame.pop();
  std::string name = step.name(step.arg()).str();
  std::optional<int64_t> levelValue = level->getConstantInt();
  if (!levelValue || *levelValue < 0)
    return step.error() << "import with a non-constant level";
  if (*levelValue > 0) {
    Var package = step.interpreter.getHeap().get(frame.globals).getAttribute("__package__");
    if (!package || !package->is(Variable::Kind::Str))
      return step.error() << "relative import outside a package";
    llvm::StringRef base = package->name;
    for (int64_t i = 1; i < *levelValue; ++i)
      base = base.rsplit('.').first;
    name = name.empty() ? base.str() : (base + "." + name).str();
  }
  bool hasFromList = !fromList->is(Variable::Kind::None) && !fromList->items.empty();
  llvm::StringRef imported =
      hasFromList ? llvm::StringRef(name) : llvm::StringRef(name).split('.').first;
  return step.push(step.interpreter.importModule(imported, step.loc));
}

/// `from m import name`: the attribute, or the submodule `m.name`.
static LogicalResult importFrom(ExecutionStep &step) {
  Var module = step.frame.peek(1);
  llvm::StringRef name = step.name(step.arg());
  FailureOr<Var> value = step.interpreter.lookupAttribute(module, name, step.loc);
  if (failed(value))
    return failure();
  if (*value)
    return step.push(value);
  if (step.interpreter.getHeap().kindOf(module) != HeapObject::Kind::Module)
    return step.error() << "cannot import name '" << name << "'";
  return step.push(step.interpreter.importModule(
      (step.interpreter.getHeap().get(module->object).name + "." + name).str(), step.loc));
}

void tgc::py::registerNameOpcodes(OpcodeTable &table) {
  table.add({Opcode::IMPORT_NAME}, importName);
  table.add({Opcode::IMPORT_FROM}, importFrom);
  table.add({Opcode::LOAD_FAST, Opcode::LOAD_FAST_CHECK}, loadFast);
  table.add({Opcode::LOAD_FAST_AND_CLEAR}, loadFastAndClear);
  table.add({Opcode::STORE_FAST}, storeFast);
  table.add({Opcode::DELETE_FAST}, deleteFast);
  table.add({Opcode::MAKE_CELL}, makeCell);
  table.add({Opcode::COPY_FREE_VARS}, copyFreeVars);
  table.add({Opcode::LOAD_CLOSURE}, loadClosure);
  table.add({Opcode::LOAD_DEREF}, loadDeref);
  table.add({Opcode::STORE_DEREF, Opcode::DELETE_DEREF}, storeDeref);
  table.add({Opcode::LOAD_GLOBAL}, loadGlobal);
  table.add({Opcode::STORE_GLOBAL, Opcode::DELETE_GLOBAL}, storeGlobal);
  table.add({Opcode::LOAD_ATTR}, loadAttr);
  table.add({Opcode::STORE_ATTR}, storeAttr);
  table.add({Opcode::DELETE_ATTR}, deleteAttr);
  table.add({Opcode::LOAD_SUPER_ATTR}, loadSuperAttr);
}
