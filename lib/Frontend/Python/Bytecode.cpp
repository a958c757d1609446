// The CPython 3.11 to 3.13 bytecode decoder: each version's opcodes mapped onto the
// interpreter's instruction set (3.12's and tgc's own, Opcodes.def), jump targets, the
// exception table (Objects/exception_handling_notes.txt) and the location table
// (Objects/locations.md); the three versions share both tables' formats.
#include "Bytecode.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FormatVariadic.h"

#include <array>
#include <optional>
#include <tuple>

using namespace tgc;
using namespace tgc::py;

namespace {

/// Opcode names of the instruction set by value; "" where it has no opcode.
const std::array<llvm::StringRef, 256> &getOpcodeNames() {
  static const std::array<llvm::StringRef, 256> names = [] {
    std::array<llvm::StringRef, 256> table{};
#define TGC_OPCODE(name, value) table[value] = #name;
#include "Opcodes.def"
    return table;
  }();
  return names;
}

/// The instruction-set opcode of each name.
const llvm::StringMap<Opcode> &getOpcodesByName() {
  static const llvm::StringMap<Opcode> opcodes = [] {
    llvm::StringMap<Opcode> map;
#define TGC_OPCODE(name, value) map[#name] = Opcode(value);
#include "Opcodes.def"
    return map;
  }();
  return opcodes;
}

using SourceTable = std::array<std::optional<SourceOpcode>, 256>;

SourceTable makeSourceTable(std::initializer_list<std::tuple<const char *, int, int, int>> rows) {
  SourceTable table;
  for (auto [name, value, caches, jump] : rows)
    table[value] = SourceOpcode{name, uint8_t(caches), SourceOpcode::Jump(jump)};
  return table;
}

/// Opcodes from HAVE_ARGUMENT on use their argument; below, dis shows none.
uint8_t getHaveArgument(int pythonMinor) { return pythonMinor >= 13 ? 44 : 90; }

llvm::Error makeError(const CodeObject &code, const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "code object '" + code.name + "': " + message);
}

/// Reads the big-endian 6-bit-chunk varint of the exception table (bit 6 continues).
bool readExceptionVarint(llvm::ArrayRef<uint8_t> table, size_t &pos, unsigned &value) {
  if (pos >= table.size())
    return false;
  uint8_t byte = table[pos++];
  uint64_t result = byte & 63;
  while (byte & 64) {
    if (pos >= table.size() || result >> 26)
      return false;
    byte = table[pos++];
    result = (result << 6) | (byte & 63);
  }
  value = unsigned(result);
  return true;
}

/// Reads the little-endian 6-bit-chunk varint of the location table.
bool readLineVarint(llvm::ArrayRef<uint8_t> table, size_t &pos, unsigned &value) {
  if (pos >= table.size())
    return false;
  uint8_t byte = table[pos++];
  uint64_t result = byte & 63;
  unsigned shift = 0;
  while (byte & 64) {
    shift += 6;
    if (pos >= table.size() || shift > 30)
      return false;
    byte = table[pos++];
    result |= uint64_t(byte & 63) << shift;
  }
  value = unsigned(result);
  return true;
}

bool readLineSignedVarint(llvm::ArrayRef<uint8_t> table, size_t &pos, int &value) {
  unsigned raw;
  if (!readLineVarint(table, pos, raw))
    return false;
  value = (raw & 1) ? -int(raw >> 1) : int(raw >> 1);
  return true;
}

/// Location entry codes (PyCodeLocationInfoKind).
enum LocationCode : unsigned {
  kLocationOneLine0 = 10,
  kLocationOneLine2 = 12,
  kLocationNoColumns = 13,
  kLocationLong = 14,
  kLocationNone = 15,
};

} // namespace

llvm::StringRef tgc::py::getOpcodeName(uint8_t value) { return getOpcodeNames()[value]; }

const SourceOpcode *tgc::py::getSourceOpcode(int pythonMinor, uint8_t value) {
#define TGC_PY_OPCODE(name, value, caches, jump) {#name, value, caches, jump},
  static const SourceTable v311 = makeSourceTable({
#include "PyOpcodes311.def"
  });
  static const SourceTable v312 = makeSourceTable({
#include "PyOpcodes312.def"
  });
  static const SourceTable v313 = makeSourceTable({
#include "PyOpcodes313.def"
  });
#undef TGC_PY_OPCODE
  const SourceTable *table = pythonMinor == 11   ? &v311
                             : pythonMinor == 12 ? &v312
                             : pythonMinor == 13 ? &v313
                                                 : nullptr;
  if (!table || !(*table)[value])
    return nullptr;
  return &*(*table)[value];
}

bool tgc::py::isJump(Opcode opcode) {
  switch (opcode) {
  case Opcode::FOR_ITER:
  case Opcode::JUMP_FORWARD:
  case Opcode::POP_JUMP_IF_FALSE:
  case Opcode::POP_JUMP_IF_TRUE:
  case Opcode::SEND:
  case Opcode::POP_JUMP_IF_NOT_NONE:
  case Opcode::POP_JUMP_IF_NONE:
  case Opcode::JUMP_BACKWARD_NO_INTERRUPT:
  case Opcode::JUMP_BACKWARD:
  case Opcode::JUMP_IF_FALSE_OR_POP:
  case Opcode::JUMP_IF_TRUE_OR_POP:
    return true;
  default:
    return false;
  }
}

namespace {

/// Maps one opcode of CPython 3.`minor` onto the instruction set: the instructions it
/// becomes, in order, as (opcode, argument). docs/bytecode.md lists the mapping.
llvm::SmallVector<std::pair<Opcode, uint32_t>, 2> translate(int minor, llvm::StringRef name,
                                                            uint32_t arg) {
  using Result = llvm::SmallVector<std::pair<Opcode, uint32_t>, 2>;
  if (minor == 11) {
    // 3.11: methods have their own load, comparisons no shift, conditional jumps a
    // direction, and the unary intrinsics of 3.12 opcodes of their own.
    if (name == "PRECALL")
      return Result{{Opcode::NOP, 0}};
    if (name == "LOAD_METHOD")
      return Result{{Opcode::LOAD_ATTR, (arg << 1) | 1}};
    if (name == "LOAD_ATTR")
      return Result{{Opcode::LOAD_ATTR, arg << 1}};
    if (name == "COMPARE_OP")
      return Result{{Opcode::COMPARE_OP, arg << 4}};
    static const std::pair<llvm::StringRef, Opcode> kBranches[] = {
        {"POP_JUMP_FORWARD_IF_FALSE", Opcode::POP_JUMP_IF_FALSE},
        {"POP_JUMP_BACKWARD_IF_FALSE", Opcode::POP_JUMP_IF_FALSE},
        {"POP_JUMP_FORWARD_IF_TRUE", Opcode::POP_JUMP_IF_TRUE},
        {"POP_JUMP_BACKWARD_IF_TRUE", Opcode::POP_JUMP_IF_TRUE},
        {"POP_JUMP_FORWARD_IF_NONE", Opcode::POP_JUMP_IF_NONE},
        {"POP_JUMP_BACKWARD_IF_NONE", Opcode::POP_JUMP_IF_NONE},
        {"POP_JUMP_FORWARD_IF_NOT_NONE", Opcode::POP_JUMP_IF_NOT_NONE},
        {"POP_JUMP_BACKWARD_IF_NOT_NONE", Opcode::POP_JUMP_IF_NOT_NONE}};
    for (const auto &[from, to] : kBranches)
      if (name == from)
        return Result{{to, arg}};
    // CALL_INTRINSIC_1's operands (Include/internal/pycore_intrinsics.h of 3.12).
    static const std::pair<llvm::StringRef, uint32_t> kIntrinsics[] = {
        {"PRINT_EXPR", 1},     {"IMPORT_STAR", 2},    {"STOPITERATION_ERROR", 3},
        {"ASYNC_GEN_WRAP", 4}, {"UNARY_POSITIVE", 5}, {"LIST_TO_TUPLE", 6}};
    for (const auto &[from, intrinsic] : kIntrinsics)
      if (name == from)
        return Result{{Opcode::CALL_INTRINSIC_1, intrinsic}};
  } else if (minor == 13) {
    // 3.13: superinstructions of two local accesses (4-bit slots), TO_BOOL before every
    // branch (the branch itself takes the truth), comparisons shifted by 5 with a
    // to-bool bit, keyword names on the stack, function attributes set one by one,
    // f-string conversion and formatting split, and an END_FOR that pops one value.
    if (name == "LOAD_FAST_LOAD_FAST")
      return Result{{Opcode::LOAD_FAST, arg >> 4}, {Opcode::LOAD_FAST, arg & 15}};
    if (name == "STORE_FAST_LOAD_FAST")
      return Result{{Opcode::STORE_FAST, arg >> 4}, {Opcode::LOAD_FAST, arg & 15}};
    if (name == "STORE_FAST_STORE_FAST")
      return Result{{Opcode::STORE_FAST, arg >> 4}, {Opcode::STORE_FAST, arg & 15}};
    if (name == "TO_BOOL")
      return Result{{Opcode::NOP, 0}};
    if (name == "COMPARE_OP")
      return Result{{Opcode::COMPARE_OP, (arg >> 5) << 4}};
    if (name == "CALL_KW")
      return Result{{Opcode::POP_KW_NAMES, 0}, {Opcode::CALL, arg}};
    if (name == "CONVERT_VALUE")
      return Result{{Opcode::FORMAT_VALUE, arg}};
    if (name == "FORMAT_SIMPLE")
      return Result{{Opcode::FORMAT_VALUE, 0}};
    if (name == "FORMAT_WITH_SPEC")
      return Result{{Opcode::FORMAT_VALUE, 4}};
    if (name == "END_FOR")
      return Result{{Opcode::POP_TOP, 0}};
  }
  const llvm::StringMap<Opcode> &byName = getOpcodesByName();
  auto it = byName.find(name);
  // The names tgc gives its own opcodes are theirs in 3.11 and 3.13 (JUMP_IF_FALSE_OR_POP,
  // SET_FUNCTION_ATTRIBUTE); POP_KW_NAMES and UNSUPPORTED_OPCODE are no version's.
  if (it == byName.end() || it->second == Opcode::POP_KW_NAMES ||
      it->second == Opcode::UNSUPPORTED_OPCODE)
    return Result{{Opcode::UNSUPPORTED_OPCODE, arg}};
  return Result{{it->second, arg}};
}

} // namespace

llvm::Expected<std::vector<ExceptionEntry>> CodeObject::decodeExceptionTable() const {
  std::vector<ExceptionEntry> entries;
  size_t pos = 0;
  while (pos < exceptionTable.size()) {
    size_t entryOffset = pos;
    unsigned start, length, target, depthAndLasti;
    if (!readExceptionVarint(exceptionTable, pos, start) ||
        !readExceptionVarint(exceptionTable, pos, length) ||
        !readExceptionVarint(exceptionTable, pos, target) ||
        !readExceptionVarint(exceptionTable, pos, depthAndLasti) ||
        uint64_t(start) + length > UINT32_MAX)
      return makeError(*this, llvm::formatv("exception table entry at byte {0} is truncated "
                                            "or out of range",
                                            entryOffset));
    ExceptionEntry entry;
    entry.start = start;
    entry.end = start + length;
    entry.target = target;
    entry.depth = depthAndLasti >> 1;
    entry.pushLasti = depthAndLasti & 1;
    entries.push_back(entry);
  }
  return entries;
}

llvm::Expected<std::vector<int>> CodeObject::decodeLineTable() const {
  size_t numUnits = code.size() / 2;
  std::vector<int> lines(numUnits, -1);
  llvm::ArrayRef<uint8_t> table = lineTable;
  size_t pos = 0, unit = 0;
  int line = firstLineNo;
  while (pos < table.size()) {
    size_t entryOffset = pos;
    uint8_t first = table[pos++];
    auto fail = [&](llvm::StringRef what) {
      return makeError(*this, llvm::formatv("line table entry at byte {0} {1}", entryOffset, what));
    };
    if (!(first & 0x80))
      return fail("does not start an entry");
    unsigned locationCode = (first >> 3) & 15;
    size_t length = (first & 7) + 1;
    bool hasLine = locationCode != kLocationNone;
    unsigned ignored;
    int delta = 0;
    if (locationCode == kLocationLong) {
      // Line delta, end-line delta, column + 1, end column + 1.
      if (!readLineSignedVarint(table, pos, delta) || !readLineVarint(table, pos, ignored) ||
          !readLineVarint(table, pos, ignored) || !readLineVarint(table, pos, ignored))
        return fail("is truncated");
    } else if (locationCode == kLocationNoColumns) {
      if (!readLineSignedVarint(table, pos, delta))
        return fail("is truncated");
    } else if (locationCode >= kLocationOneLine0 && locationCode <= kLocationOneLine2) {
      // The line delta is in the code; two bytes of columns follow.
      delta = int(locationCode - kLocationOneLine0);
      pos += 2;
    } else if (locationCode < kLocationOneLine0) {
      // Short form: same line, one byte of columns.
      pos += 1;
    }
    if (pos > table.size())
      return fail("is truncated");
    line += delta;
    if (unit + length > numUnits)
      return fail(
          llvm::formatv("covers code units past the end of the code ({0})", numUnits).str());
    for (size_t i = 0; i < length; ++i)
      lines[unit + i] = hasLine ? line : -1;
    unit += length;
  }
  return lines;
}

llvm::Expected<DecodedCode> tgc::py::decode(CodeRef code) {
  DecodedCode decoded;
  decoded.code = code;
  int minor = code->pythonMinor;
  if (!isSupportedPythonMinor(minor))
    return makeError(*code, llvm::formatv("Python 3.{0} bytecode is not supported (tgc reads "
                                          "3.{1} to 3.{2})",
                                          minor, kOldestPythonMinor, kNewestPythonMinor));
  // The parameters are the first local slots; the interpreter binds arguments to them.
  size_t parameters = size_t(std::max(code->argCount, 0)) +
                      size_t(std::max(code->kwOnlyArgCount, 0)) + ((code->flags & kVarArgs) != 0) +
                      ((code->flags & kVarKeywords) != 0);
  if (code->argCount < 0 || code->posOnlyArgCount < 0 || code->kwOnlyArgCount < 0 ||
      code->stackSize < 0 || code->posOnlyArgCount > code->argCount ||
      parameters > code->localsPlusNames.size() ||
      code->localsPlusKinds.size() != code->localsPlusNames.size())
    return makeError(*code, llvm::formatv("a malformed code object: {0} parameters ({1} "
                                          "positional, {2} positional-only, {3} keyword-only) "
                                          "for {4} local slots with {5} kinds",
                                          parameters, code->argCount, code->posOnlyArgCount,
                                          code->kwOnlyArgCount, code->localsPlusNames.size(),
                                          code->localsPlusKinds.size()));
  const std::vector<uint8_t> &bytes = code->code;
  size_t numUnits = bytes.size() / 2;
  auto lines = code->decodeLineTable();
  if (!lines)
    return lines.takeError();
  auto exceptionTable = code->decodeExceptionTable();
  if (!exceptionTable)
    return exceptionTable.takeError();
  decoded.exceptionTable = std::move(*exceptionTable);
  decoded.positionOfIndex.assign(numUnits, -1);
  auto nameAt = [&](size_t unit) -> llvm::StringRef {
    const SourceOpcode *source =
        unit < numUnits ? getSourceOpcode(minor, bytes[2 * unit]) : nullptr;
    return source ? source->name : "";
  };

  unsigned unit = 0;
  while (unit < numUnits) {
    unsigned startIndex = unit;
    uint32_t arg = 0;
    unsigned prefixes = 0;
    // Fold the EXTENDED_ARG prefixes into the argument.
    while (unit < numUnits && nameAt(unit) == "EXTENDED_ARG") {
      if (++prefixes > 3)
        return makeError(*code, llvm::formatv("more than three EXTENDED_ARG prefixes at byte "
                                              "offset {0}",
                                              2 * startIndex));
      arg = (arg << 8) | bytes[2 * unit + 1];
      ++unit;
    }
    if (unit == numUnits)
      return makeError(
          *code, llvm::formatv("EXTENDED_ARG at byte offset {0} ends the code", 2 * startIndex));
    uint8_t value = bytes[2 * unit];
    const SourceOpcode *source = getSourceOpcode(minor, value);
    if (!source || source->name == "CACHE")
      return makeError(*code, llvm::formatv("{0} opcode {1} at byte offset {2}",
                                            source ? "unexpected" : "unknown",
                                            source ? source->name.str() : std::to_string(value),
                                            2 * unit));
    arg = value >= getHaveArgument(minor) ? (arg << 8) | bytes[2 * unit + 1] : 0;
    unsigned next = unit + 1 + source->caches;
    if (next > numUnits)
      return makeError(*code, llvm::formatv("the caches of {0} at byte offset {1} run past "
                                            "the end of the code",
                                            source->name, 2 * unit));
    // dis._get_jump_target: relative to the instruction after the inline caches.
    int64_t target = 0;
    if (source->jump != SourceOpcode::None) {
      target = source->jump == SourceOpcode::Backward ? int64_t(next) - int64_t(arg)
                                                      : int64_t(next) + int64_t(arg);
      if (target < 0 || target >= int64_t(numUnits))
        return makeError(*code, llvm::formatv("{0} at byte offset {1} jumps outside the "
                                              "instructions",
                                              source->name, 2 * unit));
      // An exhausted FOR_ITER continues past the loop's END_FOR (3.12) and the POP_TOP
      // after it (3.13); 3.11 has neither.
      if (source->name == "FOR_ITER" && minor >= 12) {
        if (nameAt(target) != "END_FOR" || (minor == 13 && nameAt(target + 1) != "POP_TOP"))
          return makeError(*code, llvm::formatv("FOR_ITER at byte offset {0} does not jump to "
                                                "the loop's END_FOR",
                                                2 * unit));
        target += minor == 12 ? 1 : 2;
      }
    }
    decoded.positionOfIndex[startIndex] = int(decoded.instructions.size());
    for (auto [opcode, instructionArg] : translate(minor, source->name, arg)) {
      Instruction instruction;
      instruction.opcode = opcode;
      instruction.arg = instructionArg;
      instruction.sourceName = source->name;
      instruction.target = unsigned(target);
      instruction.index = unit;
      instruction.startIndex = startIndex;
      instruction.nextIndex = next;
      instruction.line = (*lines)[unit];
      decoded.instructions.push_back(instruction);
    }
    unit = next;
  }

  // Every jump and every handler lands on an instruction.
  for (const Instruction &instruction : decoded.instructions) {
    if (isJump(instruction.opcode) && decoded.positionAt(instruction.target) < 0)
      return makeError(*code, llvm::formatv("{0} at byte offset {1} jumps into the middle of "
                                            "an instruction",
                                            instruction.sourceName, 2 * instruction.index));
  }
  for (const ExceptionEntry &entry : decoded.exceptionTable) {
    if (entry.start > entry.end || entry.end > numUnits || decoded.positionAt(entry.target) < 0)
      return makeError(*code, llvm::formatv("exception table entry [{0}, {1}) -> {2} does "
                                            "not fit the code",
                                            2 * entry.start, 2 * entry.end, 2 * entry.target));
  }
  return decoded;
}
