// Unit tests for the marshal reader and the CPython 3.11 to 3.13 bytecode decoder, against
// what each CPython itself said about the same bytes
// (test/unit/Inputs/bytecode/make_inputs.py).
#include "Frontend/Python/Bytecode.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MemoryBuffer.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstring>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

using namespace tgc::py;
using Json = nlohmann::json;

namespace {

const char *const kPrograms[] = {"constants",  "closures", "loops",
                                 "exceptions", "calls",    "extended"};

/// The Python versions of the inputs and their directories.
const std::pair<int, const char *> kVersions[] = {{12, ""}, {11, "py311/"}, {13, "py313/"}};

std::string inputPath(llvm::StringRef name) {
  return std::string(TGC_SOURCE_DIR) + "/test/unit/Inputs/bytecode/" + name.str();
}

std::vector<uint8_t> readBytes(llvm::StringRef name) {
  auto buffer = llvm::MemoryBuffer::getFile(inputPath(name), /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  REQUIRE(buffer);
  llvm::StringRef data = (*buffer)->getBuffer();
  return std::vector<uint8_t>(data.begin(), data.end());
}

Json readJson(llvm::StringRef name) {
  std::vector<uint8_t> bytes = readBytes(name);
  return Json::parse(bytes.begin(), bytes.end());
}

std::vector<uint8_t> fromHex(const std::string &hex) {
  std::vector<uint8_t> bytes;
  for (size_t i = 0; i + 1 < hex.size(); i += 2)
    bytes.push_back(uint8_t(std::stoi(hex.substr(i, 2), nullptr, 16)));
  return bytes;
}

/// The error text of `value`, or "" if it is not an error.
template <typename T> std::string errorText(llvm::Expected<T> &value) {
  return value ? "" : llvm::toString(value.takeError());
}

/// The code object and its nested ones, depth first in constant order (as the script's
/// all_codes lists them).
void collectCodes(const CodeRef &code, std::vector<CodeRef> &codes) {
  codes.push_back(code);
  for (const ConstantRef &constant : code->consts)
    if (constant->kind == Constant::Kind::Code)
      collectCodes(constant->code, codes);
}

/// A program's code objects, read from its .bin (of 3.`minor` in `dir`).
std::vector<CodeRef> readProgram(llvm::StringRef name, int minor = 12, llvm::StringRef dir = "") {
  llvm::Expected<ConstantRef> top = readMarshal(readBytes(dir.str() + name.str() + ".bin"), minor);
  INFO(name.str());
  REQUIRE(errorText(top) == "");
  REQUIRE((*top)->kind == Constant::Kind::Code);
  std::vector<CodeRef> codes;
  collectCodes((*top)->code, codes);
  return codes;
}

bool sameDouble(const std::string &expected, double actual) {
  double value = std::strtod(expected.c_str(), nullptr);
  if (std::isnan(value))
    return std::isnan(actual);
  return std::memcmp(&value, &actual, sizeof(double)) == 0;
}

/// "" if `actual` is the constant make_inputs.py encoded as `expected`, else what
/// differs. `codes` numbers the code objects as the encoding does.
std::string compareConstant(const Json &expected, const Constant &actual,
                            const std::vector<CodeRef> &codes) {
  using Kind = Constant::Kind;
  std::string kind = expected.begin().key();
  const Json &payload = expected.begin().value();
  auto mismatch = [&] { return "expected " + expected.dump(); };
  auto items = [&]() -> std::string {
    if (actual.items.size() != payload.size())
      return mismatch() + " with another item count";
    for (size_t i = 0; i < payload.size(); ++i)
      if (std::string diff = compareConstant(payload[i], *actual.items[i], codes); !diff.empty())
        return diff;
    return "";
  };
  if (kind == "None")
    return actual.kind == Kind::None ? "" : mismatch();
  if (kind == "Ellipsis")
    return actual.kind == Kind::Ellipsis ? "" : mismatch();
  if (kind == "StopIteration")
    return actual.kind == Kind::StopIteration ? "" : mismatch();
  if (kind == "Bool")
    return actual.kind == Kind::Bool && actual.boolValue == payload.get<bool>() ? "" : mismatch();
  if (kind == "Int") {
    std::string text = actual.bigInt.empty() ? std::to_string(actual.intValue) : actual.bigInt;
    return actual.kind == Kind::Int && text == payload.get<std::string>()
               ? ""
               : mismatch() + ", got " + text;
  }
  if (kind == "Float")
    return actual.kind == Kind::Float && sameDouble(payload, actual.floatValue) ? "" : mismatch();
  if (kind == "Complex")
    return actual.kind == Kind::Complex && sameDouble(payload[0], actual.floatValue) &&
                   sameDouble(payload[1], actual.imagValue)
               ? ""
               : mismatch();
  if (kind == "Str")
    return actual.kind == Kind::Str && actual.bytes == payload.get<std::string>()
               ? ""
               : mismatch() + ", got '" + actual.bytes + "'";
  if (kind == "Bytes") {
    std::vector<uint8_t> bytes = fromHex(payload);
    return actual.kind == Kind::Bytes && actual.bytes == std::string(bytes.begin(), bytes.end())
               ? ""
               : mismatch();
  }
  if (kind == "Tuple")
    return actual.kind == Kind::Tuple ? items() : mismatch();
  if (kind == "FrozenSet") {
    // marshal writes sets sorted by their marshalled bytes, not in iteration order.
    if (actual.kind != Kind::FrozenSet || actual.items.size() != payload.size())
      return mismatch();
    for (const Json &item : payload)
      if (llvm::none_of(actual.items, [&](const ConstantRef &candidate) {
            return compareConstant(item, *candidate, codes).empty();
          }))
        return mismatch() + ", missing " + item.dump();
    return "";
  }
  if (kind == "Code")
    return actual.kind == Kind::Code && actual.code == codes[payload.get<size_t>()] ? ""
                                                                                    : mismatch();
  return "unknown encoding " + kind;
}

/// Runs `check(expectedCode, code, decoded)` for every code object of every program of
/// every version.
template <typename Check> void forEachCode(Check check) {
  for (const auto &[minor, dir] : kVersions) {
    for (const char *program : kPrograms) {
      Json expected = readJson(std::string(dir) + program + ".json");
      std::vector<CodeRef> codes = readProgram(program, minor, dir);
      REQUIRE(codes.size() == expected["codes"].size());
      for (size_t i = 0; i < codes.size(); ++i) {
        INFO("3." << minor << " " << program << ": " << codes[i]->qualname);
        CHECK(codes[i]->pythonMinor == minor);
        llvm::Expected<DecodedCode> decoded = decode(codes[i]);
        REQUIRE(errorText(decoded) == "");
        check(expected["codes"][i], codes, *decoded);
      }
    }
  }
}

/// The decoded instructions of the source instruction at code unit `index` (one, or two
/// for a 3.13 superinstruction).
std::vector<const Instruction *> instructionsAt(const DecodedCode &decoded, unsigned index) {
  std::vector<const Instruction *> found;
  for (const Instruction &instruction : decoded.instructions)
    if (instruction.index == index)
      found.push_back(&instruction);
  return found;
}

/// The value of opcode `name` in CPython 3.`minor`.
uint8_t sourceValue(int minor, llvm::StringRef name) {
  for (unsigned value = 0; value < 256; ++value)
    if (const SourceOpcode *source = getSourceOpcode(minor, uint8_t(value)))
      if (source->name == name)
        return uint8_t(value);
  FAIL("3." << minor << " has no opcode " << name.str());
  return 0;
}

Json valueCase(const Json &cases, const std::string &name) {
  for (const Json &entry : cases)
    if (entry["name"] == name)
      return entry;
  FAIL("no value case " << name);
  return {};
}

/// A code object with the given code units (opcode, arg pairs) and no tables.
CodeRef makeCode(std::vector<uint8_t> units) {
  auto code = std::make_shared<CodeObject>();
  code->name = "handmade";
  code->code = std::move(units);
  return code;
}

} // namespace

TEST_CASE("readMarshal reads every value that marshal.dumps writes for constants") {
  for (const Json &entry : readJson("values.json")) {
    if (entry["expect"].contains("error"))
      continue;
    INFO(entry["name"].get<std::string>());
    llvm::Expected<ConstantRef> value = readMarshal(fromHex(entry["hex"]));
    REQUIRE(errorText(value) == "");
    CHECK(compareConstant(entry["expect"], **value, {}) == "");
  }
}

TEST_CASE("readMarshal reports malformed and mutable values with the byte offset") {
  for (const Json &entry : readJson("values.json")) {
    if (!entry["expect"].contains("error"))
      continue;
    INFO(entry["name"].get<std::string>());
    llvm::Expected<ConstantRef> value = readMarshal(fromHex(entry["hex"]));
    std::string message = errorText(value);
    CHECK_THAT(message, Catch::Contains("bad marshal data at offset"));
    CHECK_THAT(message, Catch::Contains(entry["expect"]["error"].get<std::string>()));
  }
}

TEST_CASE("readMarshal makes back-referenced objects one shared constant") {
  Json entry = valueCase(readJson("values.json"), "shared references");
  llvm::Expected<ConstantRef> value = readMarshal(fromHex(entry["hex"]));
  REQUIRE(errorText(value) == "");
  const auto &items = (*value)->items;
  REQUIRE(items.size() == 3);
  CHECK(items[0].get() == items[1].get());
  CHECK(items[0]->items[0].get() == items[2].get());
}

TEST_CASE("readMarshal rejects nesting deeper than marshal's limit") {
  auto nested = [](size_t depth) {
    std::vector<uint8_t> bytes;
    for (size_t i = 0; i < depth; ++i)
      bytes.insert(bytes.end(), {')', 1});
    bytes.push_back('N');
    return bytes;
  };
  llvm::Expected<ConstantRef> shallow = readMarshal(nested(100));
  CHECK(errorText(shallow) == "");
  llvm::Expected<ConstantRef> deep = readMarshal(nested(100000));
  CHECK_THAT(errorText(deep), Catch::Contains("nesting deeper than 2000"));
}

TEST_CASE("readMarshal reads every field of CPython's code objects") {
  forEachCode(
      [](const Json &expected, const std::vector<CodeRef> &codes, const DecodedCode &decoded) {
        const CodeObject &code = *decoded.code;
        CHECK(code.name == expected["name"]);
        CHECK(code.qualname == expected["qualname"]);
        CHECK(code.filename == expected["filename"]);
        CHECK(code.firstLineNo == expected["firstlineno"]);
        CHECK(code.argCount == expected["argcount"]);
        CHECK(code.posOnlyArgCount == expected["posonlyargcount"]);
        CHECK(code.kwOnlyArgCount == expected["kwonlyargcount"]);
        CHECK(code.stackSize == expected["stacksize"]);
        CHECK(code.flags == expected["flags"]);
        CHECK(code.code == fromHex(expected["code"]));
        CHECK(code.names == expected["names"].get<std::vector<std::string>>());
        CHECK(code.localsPlusNames == expected["localsplusnames"].get<std::vector<std::string>>());
        REQUIRE(code.consts.size() == expected["consts"].size());
        for (size_t i = 0; i < code.consts.size(); ++i)
          CHECK(compareConstant(expected["consts"][i], *code.consts[i], codes) == "");
      });
}

TEST_CASE("local kinds agree with co_varnames, co_cellvars and co_freevars") {
  forEachCode([](const Json &expected, const std::vector<CodeRef> &, const DecodedCode &decoded) {
    const CodeObject &code = *decoded.code;
    auto contains = [&](const char *key, const std::string &name) {
      for (const Json &entry : expected[key])
        if (entry == name)
          return true;
      return false;
    };
    for (size_t i = 0; i < code.localsPlusNames.size(); ++i) {
      const std::string &name = code.localsPlusNames[i];
      INFO(name);
      uint8_t kind = code.localsPlusKinds[i];
      CHECK(bool(kind & kFastLocal) == contains("varnames", name));
      CHECK(bool(kind & kFastCell) == contains("cellvars", name));
      CHECK(bool(kind & kFastFree) == contains("freevars", name));
    }
  });
}

TEST_CASE("decode folds EXTENDED_ARG, skips caches and agrees with dis") {
  std::set<int> sawExtendedArg;
  forEachCode([&](const Json &expected, const std::vector<CodeRef> &, const DecodedCode &decoded) {
    const Json &instructions = expected["instructions"];
    size_t position = 0;
    for (size_t i = 0; i < instructions.size(); ++i) {
      const Json &want = instructions[i];
      INFO("instruction " << i << " at byte offset " << want["offset"]);
      std::vector<const Instruction *> group =
          instructionsAt(decoded, want["offset"].get<unsigned>() / 2);
      // 3.13's superinstructions and CALL_KW become two; every other opcode one.
      std::string op = want["op"];
      bool two = op == "LOAD_FAST_LOAD_FAST" || op == "STORE_FAST_LOAD_FAST" ||
                 op == "STORE_FAST_STORE_FAST" || op == "CALL_KW";
      REQUIRE(group.size() == (two ? 2u : 1u));
      CHECK(decoded.positionAt(group[0]->startIndex) == int(position));
      position += group.size();
      unsigned next = i + 1 < instructions.size() ? instructions[i + 1]["start"].get<unsigned>() / 2
                                                  : unsigned(decoded.code->code.size() / 2);
      for (const Instruction *actual : group) {
        CHECK(actual->sourceName == want["op"].get<std::string>());
        // An opcode the instruction set has under its own name keeps its argument, except
        // the comparisons and attribute loads of 3.11 and 3.13 (shifted; tested below).
        bool shifted = decoded.code->pythonMinor != 12 &&
                       (actual->sourceName == "COMPARE_OP" || actual->sourceName == "LOAD_ATTR");
        if (getOpcodeName(uint8_t(actual->opcode)) == actual->sourceName && !shifted)
          CHECK(actual->arg == want["arg"]);
        CHECK(2 * actual->startIndex == want["start"]);
        CHECK(actual->line == want["line"]);
        CHECK(actual->nextIndex == next);
        if (actual->startIndex != actual->index)
          sawExtendedArg.insert(decoded.code->pythonMinor);
      }
    }
    CHECK(position == decoded.instructions.size());
  });
  CHECK(sawExtendedArg == std::set<int>{11, 12, 13});
}

TEST_CASE("jumpTarget agrees with dis for forward, backward and extended jumps") {
  std::map<int, std::set<std::string>> jumpKinds;
  forEachCode([&](const Json &expected, const std::vector<CodeRef> &, const DecodedCode &decoded) {
    int minor = decoded.code->pythonMinor;
    for (const Json &want : expected["instructions"]) {
      const Instruction &actual = *instructionsAt(decoded, want["offset"].get<unsigned>() / 2)[0];
      INFO("3." << minor << " " << actual.sourceName.str() << " at " << want["offset"]);
      REQUIRE(isJump(actual.opcode) == !want["jump"].is_null());
      if (want["jump"].is_null())
        continue;
      jumpKinds[minor].insert(actual.sourceName.str());
      // An exhausted FOR_ITER goes past END_FOR (3.12) and the POP_TOP after it (3.13).
      unsigned skip = actual.sourceName == "FOR_ITER" ? unsigned(minor - 11) : 0;
      CHECK(2 * decoded.jumpTarget(actual) == want["jump"].get<unsigned>() + 2 * skip);
      CHECK(decoded.positionAt(decoded.jumpTarget(actual)) >= 0);
    }
  });
  for (const char *kind : {"FOR_ITER", "JUMP_FORWARD", "POP_JUMP_IF_FALSE", "POP_JUMP_IF_TRUE",
                           "JUMP_BACKWARD", "JUMP_BACKWARD_NO_INTERRUPT", "SEND"})
    CHECK(jumpKinds[12].count(kind));
  for (const char *kind : {"FOR_ITER", "JUMP_FORWARD", "POP_JUMP_FORWARD_IF_FALSE",
                           "POP_JUMP_BACKWARD_IF_TRUE", "JUMP_IF_FALSE_OR_POP", "JUMP_BACKWARD"})
    CHECK(jumpKinds[11].count(kind));
  for (const char *kind : {"FOR_ITER", "POP_JUMP_IF_FALSE", "JUMP_BACKWARD", "SEND"})
    CHECK(jumpKinds[13].count(kind));
}

TEST_CASE("3.11 and 3.13 opcodes become the instruction set's") {
  auto decodeUnits = [](int minor, std::vector<std::pair<const char *, uint8_t>> units) {
    auto code = std::make_shared<CodeObject>();
    code->name = "handmade";
    code->pythonMinor = minor;
    for (auto [name, arg] : units) {
      code->code.push_back(sourceValue(minor, name));
      code->code.push_back(arg);
      for (unsigned i = 0; i < getSourceOpcode(minor, sourceValue(minor, name))->caches; ++i)
        code->code.insert(code->code.end(), {0, 0});
    }
    llvm::Expected<DecodedCode> decoded = decode(code);
    REQUIRE(errorText(decoded) == "");
    std::vector<std::pair<std::string, uint32_t>> result;
    for (const Instruction &instruction : decoded->instructions)
      result.emplace_back(getOpcodeName(uint8_t(instruction.opcode)).str(), instruction.arg);
    return result;
  };
  using Expected = std::vector<std::pair<std::string, uint32_t>>;
  CHECK(decodeUnits(13, {{"LOAD_FAST_LOAD_FAST", 0x12},
                         {"STORE_FAST_STORE_FAST", 0x34},
                         {"TO_BOOL", 0},
                         {"COMPARE_OP", (2 << 5) | 16},
                         {"CALL_KW", 3},
                         {"CONVERT_VALUE", 2},
                         {"FORMAT_WITH_SPEC", 0},
                         {"SET_FUNCTION_ATTRIBUTE", 8}}) ==
        Expected{{"LOAD_FAST", 1},
                 {"LOAD_FAST", 2},
                 {"STORE_FAST", 3},
                 {"STORE_FAST", 4},
                 {"NOP", 0},
                 {"COMPARE_OP", 2 << 4},
                 {"POP_KW_NAMES", 0},
                 {"CALL", 3},
                 {"FORMAT_VALUE", 2},
                 {"FORMAT_VALUE", 4},
                 {"SET_FUNCTION_ATTRIBUTE", 8}});
  CHECK(decodeUnits(11, {{"LOAD_METHOD", 3},
                         {"LOAD_ATTR", 3},
                         {"PRECALL", 1},
                         {"COMPARE_OP", 2},
                         {"UNARY_POSITIVE", 0},
                         {"LIST_TO_TUPLE", 0},
                         {"LOAD_CLASSDEREF", 1}}) == Expected{{"LOAD_ATTR", 7},
                                                              {"LOAD_ATTR", 6},
                                                              {"NOP", 0},
                                                              {"COMPARE_OP", 2 << 4},
                                                              {"CALL_INTRINSIC_1", 5},
                                                              {"CALL_INTRINSIC_1", 6},
                                                              {"UNSUPPORTED_OPCODE", 1}});
  // A version tgc does not read is an error, not a guess.
  auto code = std::make_shared<CodeObject>();
  code->name = "handmade";
  code->pythonMinor = 14;
  llvm::Expected<DecodedCode> unsupported = decode(code);
  CHECK_THAT(errorText(unsupported), Catch::Contains("Python 3.14 bytecode is not supported"));
}

TEST_CASE("decodeLineTable agrees with co_lines") {
  forEachCode([](const Json &expected, const std::vector<CodeRef> &, const DecodedCode &decoded) {
    llvm::Expected<std::vector<int>> lines = decoded.code->decodeLineTable();
    REQUIRE(errorText(lines) == "");
    CHECK(*lines == expected["lines"].get<std::vector<int>>());
  });
}

TEST_CASE("decodeExceptionTable agrees with dis's exception table parser") {
  size_t entries = 0;
  forEachCode([&](const Json &expected, const std::vector<CodeRef> &, const DecodedCode &decoded) {
    const Json &want = expected["exceptions"];
    REQUIRE(decoded.exceptionTable.size() == want.size());
    for (size_t i = 0; i < want.size(); ++i) {
      const ExceptionEntry &entry = decoded.exceptionTable[i];
      CHECK(2 * entry.start == want[i][0]);
      CHECK(2 * entry.end == want[i][1]);
      CHECK(2 * entry.target == want[i][2]);
      CHECK(entry.depth == want[i][3]);
      CHECK(entry.pushLasti == want[i][4]);
      ++entries;
    }
  });
  CHECK(entries > 10);
}

TEST_CASE("the opcode tables and cache counts are each CPython's") {
  for (const auto &[minor, dir] : kVersions) {
    Json table = readJson(std::string(dir) + "opcodes.json");
    size_t named = 0;
    for (unsigned value = 0; value < 256; ++value)
      named += getSourceOpcode(minor, uint8_t(value)) != nullptr;
    CHECK(named == table["opmap"].size());
    for (const auto &[name, value] : table["opmap"].items()) {
      INFO("3." << minor << " " << name);
      const SourceOpcode *source = getSourceOpcode(minor, value.get<uint8_t>());
      REQUIRE(source);
      CHECK(source->name == name);
      CHECK(source->caches == table["caches"][name]);
      bool relative = false;
      for (const Json &jump : table["hasjrel"])
        relative |= jump == name;
      CHECK((source->jump != SourceOpcode::None) == relative);
      CHECK((source->jump == SourceOpcode::Backward) ==
            (name.find("BACKWARD") != std::string::npos));
    }
  }
  // The instruction set is 3.12's opcodes and tgc's own.
  Json table = readJson("opcodes.json");
  for (const auto &[name, value] : table["opmap"].items())
    CHECK(getOpcodeName(value.get<uint8_t>()) == name);
  CHECK(getOpcodeName(uint8_t(Opcode::POP_KW_NAMES)) == "POP_KW_NAMES");
  CHECK(getOpcodeName(250).empty());
  CHECK(getSourceOpcode(10, 1) == nullptr);
}

TEST_CASE("decode reports malformed bytecode with its byte offset") {
  uint8_t nop = uint8_t(Opcode::NOP), extendedArg = uint8_t(Opcode::EXTENDED_ARG);
  struct Case {
    std::vector<uint8_t> code;
    const char *message;
  } cases[] = {
      {{nop, 0, 0xFE, 0}, "unknown opcode 254 at byte offset 2"},
      {{nop, 0, uint8_t(Opcode::CACHE), 0}, "unexpected opcode CACHE at byte offset 2"},
      {{nop, 0, extendedArg, 1}, "EXTENDED_ARG at byte offset 2 ends the code"},
      {{extendedArg, 1, extendedArg, 1, extendedArg, 1, extendedArg, 1, nop, 0},
       "more than three EXTENDED_ARG prefixes at byte offset 0"},
      {{nop, 0, uint8_t(Opcode::LOAD_GLOBAL), 0, 0, 0},
       "the caches of LOAD_GLOBAL at byte offset 2 run past the end"},
      {{uint8_t(Opcode::JUMP_FORWARD), 5, nop, 0}, "JUMP_FORWARD at byte offset 0 jumps outside"},
      {{nop, 0, uint8_t(Opcode::JUMP_BACKWARD), 3}, "JUMP_BACKWARD at byte offset 2 jumps outside"},
      {{extendedArg, 0xFF, extendedArg, 0xFF, extendedArg, 0xFF, uint8_t(Opcode::JUMP_FORWARD),
        0xFF},
       "JUMP_FORWARD at byte offset 6 jumps outside"},
  };
  for (const Case &c : cases) {
    INFO(c.message);
    llvm::Expected<DecodedCode> decoded = decode(makeCode(c.code));
    std::string message = errorText(decoded);
    CHECK_THAT(message, Catch::StartsWith("code object 'handmade': "));
    CHECK_THAT(message, Catch::Contains(c.message));
  }
}

TEST_CASE("malformed line and exception tables are errors naming the entry") {
  auto code = std::make_shared<CodeObject>();
  code->name = "handmade";
  code->code = {uint8_t(Opcode::NOP), 0, uint8_t(Opcode::NOP), 0};
  code->lineTable = {0x01};
  auto lines = code->decodeLineTable();
  CHECK_THAT(errorText(lines), Catch::Contains("line table entry at byte 0 does not start"));
  // A no-columns entry (code 13) of three units for a two-unit code.
  code->lineTable = {0x80 | (13 << 3) | 2, 0};
  lines = code->decodeLineTable();
  CHECK_THAT(errorText(lines), Catch::Contains("covers code units past the end"));
  // A long-form entry (code 14) without its varints.
  code->lineTable = {0x80 | (14 << 3), 2};
  lines = code->decodeLineTable();
  CHECK_THAT(errorText(lines), Catch::Contains("line table entry at byte 0 is truncated"));
  code->lineTable = {};
  code->exceptionTable = {0x80, 0x41};
  auto entries = code->decodeExceptionTable();
  CHECK_THAT(errorText(entries), Catch::Contains("exception table entry at byte 0 is truncated"));
  // start 0, length 1, target 7 (past the code), depth 0.
  code->exceptionTable = {0x80, 1, 7, 0};
  auto decoded = decode(code);
  CHECK_THAT(errorText(decoded), Catch::Contains("exception table entry [0, 2) -> 14 does not "
                                                 "fit the code"));
}

TEST_CASE("every truncation of a marshalled module is an error, not a crash") {
  for (const char *program : kPrograms) {
    std::vector<uint8_t> bytes = readBytes(std::string(program) + ".bin");
    for (size_t length = 0; length < bytes.size(); ++length) {
      llvm::Expected<ConstantRef> value =
          readMarshal(llvm::ArrayRef<uint8_t>(bytes).take_front(length));
      INFO(program << " truncated to " << length << " bytes");
      CHECK_THAT(errorText(value), Catch::Contains("bad marshal data at offset"));
    }
  }
}

TEST_CASE("random byte flips in marshalled modules are errors or valid code, never crashes") {
  std::mt19937 random(4);
  size_t rejected = 0, trials = 0;
  for (const char *program : kPrograms) {
    std::vector<uint8_t> original = readBytes(std::string(program) + ".bin");
    for (int trial = 0; trial < 400; ++trial, ++trials) {
      std::vector<uint8_t> bytes = original;
      for (int flip = 0; flip < 3; ++flip)
        bytes[random() % bytes.size()] ^= uint8_t(1u << (random() % 8));
      llvm::Expected<ConstantRef> value = readMarshal(bytes);
      if (!value || (*value)->kind != Constant::Kind::Code) {
        llvm::consumeError(value.takeError());
        ++rejected;
        continue;
      }
      std::vector<CodeRef> codes;
      collectCodes((*value)->code, codes);
      for (const CodeRef &code : codes) {
        llvm::Expected<DecodedCode> decoded = decode(code);
        if (!decoded) {
          llvm::consumeError(decoded.takeError());
          ++rejected;
          continue;
        }
        for (const Instruction &instruction : decoded->instructions)
          if (isJump(instruction.opcode))
            CHECK(decoded->positionAt(decoded->jumpTarget(instruction)) >= 0);
      }
    }
  }
  CHECK(rejected > trials / 4);
}
