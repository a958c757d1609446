// The interpreter's opcode table: which opcodes of Opcodes.def have handlers, duplicates
// caught, and handmade code objects run through it.
#include "InterpreterFixture.h"

#include "Frontend/Python/Frame.h"

#include <catch2/catch.hpp>

#include <set>

using namespace mlir;
using namespace tgc;
using namespace tgc::py;

namespace {

/// Every opcode of Opcodes.def, with its name.
const std::vector<std::pair<std::string, Opcode>> &allOpcodes() {
  static const std::vector<std::pair<std::string, Opcode>> opcodes = {
#define TGC_OPCODE(name, value) {#name, Opcode::name},
#include "Frontend/Python/Opcodes.def"
  };
  return opcodes;
}

LogicalResult nothing(ExecutionStep &) { return success(); }
LogicalResult fail(ExecutionStep &) { return failure(); }

ConstantRef intConstant(int64_t value) {
  auto constant = std::make_shared<Constant>();
  constant->kind = Constant::Kind::Int;
  constant->intValue = value;
  return constant;
}

ConstantRef constantOf(Constant::Kind kind, bool value = false) {
  auto constant = std::make_shared<Constant>();
  constant->kind = kind;
  constant->boolValue = value;
  return constant;
}

/// Calls a function over a handmade code object (code units: opcode, argument pairs).
FailureOr<Var> run(InterpreterFixture &fixture, std::vector<uint8_t> units,
                   std::vector<ConstantRef> consts, std::vector<std::string> names = {}) {
  auto code = std::make_shared<CodeObject>();
  code->name = code->qualname = "handmade";
  code->filename = "handmade.py";
  code->firstLineNo = 1;
  code->stackSize = 4;
  code->code = std::move(units);
  code->consts = std::move(consts);
  code->names = std::move(names);
  HeapObject globals;
  globals.kind = HeapObject::Kind::Globals;
  HeapObject function;
  function.kind = HeapObject::Kind::Function;
  function.code = code;
  function.globals = fixture.interpreter.newObject(std::move(globals));
  function.name = function.qualname = "handmade";
  Var callable = makeObject(fixture.interpreter.newObject(std::move(function)));
  return fixture.interpreter.call(callable, {}, fixture.loc());
}

uint8_t op(Opcode opcode) { return static_cast<uint8_t>(opcode); }

} // namespace

TEST_CASE("Exactly the opcodes the interpreter executes have handlers", "[interp]") {
  // The opcodes of CPython 3.12 that tgc's interpreter supports.
  static const std::set<std::string> kExecuted = {"BEFORE_WITH",
                                                  "BINARY_OP",
                                                  "BINARY_SLICE",
                                                  "BINARY_SUBSCR",
                                                  "BUILD_CONST_KEY_MAP",
                                                  "BUILD_LIST",
                                                  "BUILD_MAP",
                                                  "BUILD_SET",
                                                  "BUILD_SLICE",
                                                  "BUILD_STRING",
                                                  "BUILD_TUPLE",
                                                  "CACHE",
                                                  "CALL",
                                                  "CALL_FUNCTION_EX",
                                                  "CALL_INTRINSIC_1",
                                                  "CHECK_EXC_MATCH",
                                                  "COMPARE_OP",
                                                  "CONTAINS_OP",
                                                  "COPY",
                                                  "COPY_FREE_VARS",
                                                  "DELETE_ATTR",
                                                  "DELETE_DEREF",
                                                  "DELETE_FAST",
                                                  "DELETE_GLOBAL",
                                                  "DELETE_SUBSCR",
                                                  "DICT_MERGE",
                                                  "DICT_UPDATE",
                                                  "END_FOR",
                                                  "EXTENDED_ARG",
                                                  "FORMAT_VALUE",
                                                  "FOR_ITER",
                                                  "GET_ITER",
                                                  "GET_LEN",
                                                  "IMPORT_FROM",
                                                  "IMPORT_NAME",
                                                  "IS_OP",
                                                  "JUMP_BACKWARD",
                                                  "JUMP_BACKWARD_NO_INTERRUPT",
                                                  "JUMP_FORWARD",
                                                  "JUMP_IF_FALSE_OR_POP",
                                                  "JUMP_IF_TRUE_OR_POP",
                                                  "KW_NAMES",
                                                  "LIST_APPEND",
                                                  "LIST_EXTEND",
                                                  "LOAD_ASSERTION_ERROR",
                                                  "LOAD_ATTR",
                                                  "LOAD_CLOSURE",
                                                  "LOAD_CONST",
                                                  "LOAD_DEREF",
                                                  "LOAD_FAST",
                                                  "LOAD_FAST_AND_CLEAR",
                                                  "LOAD_FAST_CHECK",
                                                  "LOAD_GLOBAL",
                                                  "LOAD_SUPER_ATTR",
                                                  "MAKE_CELL",
                                                  "MAKE_FUNCTION",
                                                  "MAP_ADD",
                                                  "MATCH_CLASS",
                                                  "MATCH_KEYS",
                                                  "MATCH_MAPPING",
                                                  "MATCH_SEQUENCE",
                                                  "NOP",
                                                  "POP_EXCEPT",
                                                  "POP_JUMP_IF_FALSE",
                                                  "POP_JUMP_IF_NONE",
                                                  "POP_JUMP_IF_NOT_NONE",
                                                  "POP_JUMP_IF_TRUE",
                                                  "POP_KW_NAMES",
                                                  "POP_TOP",
                                                  "PUSH_EXC_INFO",
                                                  "PUSH_NULL",
                                                  "RAISE_VARARGS",
                                                  "RERAISE",
                                                  "RESUME",
                                                  "RETURN_CONST",
                                                  "RETURN_GENERATOR",
                                                  "RETURN_VALUE",
                                                  "SET_ADD",
                                                  "SET_FUNCTION_ATTRIBUTE",
                                                  "SET_UPDATE",
                                                  "STORE_ATTR",
                                                  "STORE_DEREF",
                                                  "STORE_FAST",
                                                  "STORE_GLOBAL",
                                                  "STORE_SLICE",
                                                  "STORE_SUBSCR",
                                                  "SWAP",
                                                  "UNARY_INVERT",
                                                  "UNARY_NEGATIVE",
                                                  "UNARY_NOT",
                                                  "UNPACK_EX",
                                                  "UNPACK_SEQUENCE",
                                                  "WITH_EXCEPT_START",
                                                  "YIELD_VALUE"};
  const OpcodeTable &table = getOpcodeTable();
  CHECK(table.getDuplicates().empty());
  size_t handled = 0;
  for (const auto &[name, opcode] : allOpcodes()) {
    INFO(name);
    CHECK(static_cast<bool>(table.lookup(opcode)) == kExecuted.count(name));
    handled += static_cast<bool>(table.lookup(opcode));
  }
  CHECK(handled == kExecuted.size());
}

TEST_CASE("An opcode registered twice keeps its first handler and is listed", "[interp]") {
  OpcodeTable table;
  table.add({Opcode::NOP, Opcode::POP_TOP}, nothing);
  table.add({Opcode::POP_TOP, Opcode::COPY}, fail);
  CHECK(table.lookup(Opcode::NOP) == &nothing);
  CHECK(table.lookup(Opcode::POP_TOP) == &nothing);
  CHECK(table.lookup(Opcode::COPY) == &fail);
  CHECK_FALSE(table.lookup(Opcode::SWAP));
  CHECK(table.getDuplicates() == llvm::ArrayRef<Opcode>{Opcode::POP_TOP});
}

TEST_CASE("Instructions run through their handlers", "[interp]") {
  InterpreterFixture fixture;
  SECTION("constants and a binary operator") {
    // return 2 + 3 (BINARY_OP has one inline cache).
    FailureOr<Var> result =
        run(fixture,
            {op(Opcode::RESUME), 0, op(Opcode::LOAD_CONST), 0, op(Opcode::LOAD_CONST), 1,
             op(Opcode::BINARY_OP), 0, op(Opcode::CACHE), 0, op(Opcode::RETURN_VALUE), 0},
            {intConstant(2), intConstant(3)});
    REQUIRE(succeeded(result));
    CHECK((*result)->getConstantInt() == 5);
  }
  SECTION("a global that is a builtin, called") {
    // return len((1, 2, 3)): LOAD_GLOBAL pushes NULL and builtins.len.
    auto tuple = std::make_shared<Constant>();
    tuple->kind = Constant::Kind::Tuple;
    tuple->items = {intConstant(1), intConstant(2), intConstant(3)};
    std::vector<uint8_t> units = {op(Opcode::LOAD_GLOBAL), 1};
    units.insert(units.end(), 8, 0); // 4 caches
    units.insert(units.end(), {op(Opcode::LOAD_CONST), 0, op(Opcode::CALL), 1});
    units.insert(units.end(), 6, 0); // 3 caches
    units.insert(units.end(), {op(Opcode::RETURN_VALUE), 0});
    FailureOr<Var> result = run(fixture, units, {tuple}, {"len"});
    REQUIRE(succeeded(result));
    CHECK((*result)->getConstantInt() == 3);
  }
  SECTION("a branch") {
    // if True: return 'taken'; return 'not taken' (the jump skips one code unit).
    auto text = [](const char *s) {
      auto constant = std::make_shared<Constant>();
      constant->kind = Constant::Kind::Str;
      constant->bytes = s;
      return ConstantRef(constant);
    };
    FailureOr<Var> result =
        run(fixture,
            {op(Opcode::LOAD_CONST), 0, op(Opcode::POP_JUMP_IF_TRUE), 1, op(Opcode::RETURN_CONST),
             1, op(Opcode::RETURN_CONST), 2},
            {constantOf(Constant::Kind::Bool, true), text("not taken"), text("taken")});
    REQUIRE(succeeded(result));
    CHECK((*result)->name == "taken");
  }
  CHECK(fixture.diagnostics.empty());
}

TEST_CASE("An opcode without a handler is an error naming it", "[interp]") {
  InterpreterFixture fixture;
  REQUIRE_FALSE(getOpcodeTable().lookup(Opcode::SETUP_ANNOTATIONS));
  FailureOr<Var> result =
      run(fixture, {op(Opcode::SETUP_ANNOTATIONS), 0, op(Opcode::RETURN_CONST), 0},
          {constantOf(Constant::Kind::None)});
  CHECK(failed(result));
  CHECK(fixture.diagnostics ==
        std::vector<std::string>{"bytecode SETUP_ANNOTATIONS of Python 3.12 is not supported"});
}
