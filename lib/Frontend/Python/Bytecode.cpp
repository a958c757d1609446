// The CPython 3.12 bytecode decoder: instructions, jump targets, the exception table
// (Objects/exception_handling_notes.txt) and the location table (Objects/locations.md).
#include "Bytecode.h"

#include "llvm/Support/FormatVariadic.h"

#include <array>

using namespace tgc;
using namespace tgc::py;

namespace {

/// Opcode names by value; "" where 3.12 has no opcode.
const std::array<llvm::StringRef, 256> &getOpcodeNames() {
  static const std::array<llvm::StringRef, 256> names = [] {
    std::array<llvm::StringRef, 256> table{};
#define TGC_OPCODE(name, value) table[value] = #name;
#include "Opcodes.def"
    return table;
  }();
  return names;
}

/// Opcodes from HAVE_ARGUMENT (90) on use their argument; below, dis shows none.
constexpr uint8_t kHaveArgument = 90;

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

unsigned tgc::py::getCacheCount(Opcode opcode) {
  // Lib/opcode.py's _cache_format of 3.12 (opcode._inline_cache_entries).
  switch (opcode) {
  case Opcode::LOAD_ATTR:
    return 9;
  case Opcode::LOAD_GLOBAL:
  case Opcode::STORE_ATTR:
    return 4;
  case Opcode::CALL:
    return 3;
  case Opcode::BINARY_SUBSCR:
  case Opcode::STORE_SUBSCR:
  case Opcode::UNPACK_SEQUENCE:
  case Opcode::FOR_ITER:
  case Opcode::COMPARE_OP:
  case Opcode::BINARY_OP:
  case Opcode::SEND:
  case Opcode::LOAD_SUPER_ATTR:
    return 1;
  default:
    return 0;
  }
}

bool tgc::py::isBackwardJump(Opcode opcode) {
  return opcode == Opcode::JUMP_BACKWARD || opcode == Opcode::JUMP_BACKWARD_NO_INTERRUPT;
}

bool tgc::py::isJump(Opcode opcode) {
  // opcode.hasjrel of 3.12 (which has no absolute jumps).
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
    return true;
  default:
    return false;
  }
}

unsigned DecodedCode::jumpTarget(const Instruction &instruction) const {
  // dis._get_jump_target: relative to the instruction after the inline caches.
  unsigned next = instruction.index + 1 + getCacheCount(instruction.opcode);
  return isBackwardJump(instruction.opcode) ? next - instruction.arg : next + instruction.arg;
}

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

  unsigned unit = 0;
  while (unit < numUnits) {
    Instruction instruction;
    instruction.startIndex = unit;
    uint32_t arg = 0;
    unsigned prefixes = 0;
    // Fold the EXTENDED_ARG prefixes into the argument.
    while (unit < numUnits && bytes[2 * unit] == uint8_t(Opcode::EXTENDED_ARG)) {
      if (++prefixes > 3)
        return makeError(*code, llvm::formatv("more than three EXTENDED_ARG prefixes at byte "
                                              "offset {0}",
                                              2 * instruction.startIndex));
      arg = (arg << 8) | bytes[2 * unit + 1];
      ++unit;
    }
    if (unit == numUnits)
      return makeError(*code, llvm::formatv("EXTENDED_ARG at byte offset {0} ends the code",
                                            2 * instruction.startIndex));
    uint8_t value = bytes[2 * unit];
    llvm::StringRef name = getOpcodeName(value);
    if (name.empty() || value == uint8_t(Opcode::CACHE))
      return makeError(*code,
                       llvm::formatv("{0} opcode {1} at byte offset {2}",
                                     name.empty() ? "unknown" : "unexpected",
                                     name.empty() ? std::to_string(value) : name.str(), 2 * unit));
    instruction.opcode = Opcode(value);
    instruction.index = unit;
    instruction.arg = value >= kHaveArgument ? (arg << 8) | bytes[2 * unit + 1] : 0;
    instruction.nextIndex = unit + 1 + getCacheCount(instruction.opcode);
    if (instruction.nextIndex > numUnits)
      return makeError(*code, llvm::formatv("the caches of {0} at byte offset {1} run past "
                                            "the end of the code",
                                            name, 2 * unit));
    instruction.line = (*lines)[unit];
    decoded.positionOfIndex[instruction.startIndex] = int(decoded.instructions.size());
    decoded.instructions.push_back(instruction);
    unit = instruction.nextIndex;
  }

  // Every jump and every handler lands on an instruction.
  for (const Instruction &instruction : decoded.instructions) {
    if (!isJump(instruction.opcode))
      continue;
    int64_t next = instruction.index + 1 + getCacheCount(instruction.opcode);
    int64_t target = isBackwardJump(instruction.opcode) ? next - int64_t(instruction.arg)
                                                        : next + int64_t(instruction.arg);
    if (target < 0 || target >= int64_t(numUnits) || decoded.positionAt(target) < 0)
      return makeError(*code, llvm::formatv("{0} at byte offset {1} jumps outside the "
                                            "instructions",
                                            getOpcodeName(uint8_t(instruction.opcode)),
                                            2 * instruction.index));
  }
  for (const ExceptionEntry &entry : decoded.exceptionTable) {
    if (entry.start > entry.end || entry.end > numUnits || decoded.positionAt(entry.target) < 0)
      return makeError(*code, llvm::formatv("exception table entry [{0}, {1}) -> {2} does "
                                            "not fit the code",
                                            2 * entry.start, 2 * entry.end, 2 * entry.target));
  }
  return decoded;
}
