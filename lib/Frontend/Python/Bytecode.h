// CPython 3.11 to 3.13 code objects: the marshal reader and the bytecode decoder.
#ifndef TGC_LIB_FRONTEND_PYTHON_BYTECODE_H
#define TGC_LIB_FRONTEND_PYTHON_BYTECODE_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tgc::py {

struct CodeObject;

/// A constant of a code object, as `marshal` writes it. Immutable and shared: marshal's
/// back-references (FLAG_REF) make two constants the same object.
struct Constant {
  enum class Kind {
    None,
    Ellipsis,
    StopIteration,
    Bool,
    Int,
    Float,
    Complex,
    Str,
    Bytes,
    Tuple,
    FrozenSet,
    Code
  };
  Kind kind = Kind::None;
  bool boolValue = false;
  /// For Int within int64.
  int64_t intValue = 0;
  /// For Int beyond int64: the decimal digits (with a leading '-'); empty otherwise.
  std::string bigInt;
  /// Float, and the real part of Complex.
  double floatValue = 0;
  double imagValue = 0;
  /// Str (UTF-8) and Bytes.
  std::string bytes;
  /// Tuple and FrozenSet items.
  std::vector<std::shared_ptr<const Constant>> items;
  std::shared_ptr<const CodeObject> code;
};
using ConstantRef = std::shared_ptr<const Constant>;

/// CO_* flags of co_flags that the interpreter looks at.
enum CodeFlags : uint32_t {
  kOptimized = 0x1,
  kNewLocals = 0x2,
  kVarArgs = 0x4,
  kVarKeywords = 0x8,
  kNested = 0x10,
  kGenerator = 0x20,
  kCoroutine = 0x80,
  kIterableCoroutine = 0x100,
  kAsyncGenerator = 0x200,
};

/// The kinds of `co_localspluskinds` (CO_FAST_*).
enum LocalKind : uint8_t {
  kFastHidden = 0x10,
  kFastLocal = 0x20,
  kFastCell = 0x40,
  kFastFree = 0x80,
};

/// One entry of the exception table: instructions in [start, end) (in code units)
/// jump to `target` with the stack cut to `depth` (plus the offset of the raising
/// instruction when `pushLasti`).
struct ExceptionEntry {
  unsigned start = 0, end = 0, target = 0, depth = 0;
  bool pushLasti = false;
};

/// The CPython versions whose bytecode tgc reads, by minor version (3.11 to 3.13).
constexpr int kOldestPythonMinor = 11, kNewestPythonMinor = 13;
inline bool isSupportedPythonMinor(int minor) {
  return minor >= kOldestPythonMinor && minor <= kNewestPythonMinor;
}

/// A code object as marshal stores it (the layout of 3.11 to 3.13).
struct CodeObject {
  /// The minor version of the CPython 3 that compiled it: what its opcodes mean.
  int pythonMinor = 12;
  int argCount = 0, posOnlyArgCount = 0, kwOnlyArgCount = 0, stackSize = 0;
  uint32_t flags = 0;
  /// co_code: 2-byte code units, with inline CACHE entries.
  std::vector<uint8_t> code;
  std::vector<ConstantRef> consts;
  std::vector<std::string> names;
  /// co_localsplusnames and co_localspluskinds (LocalKind bits), one per local slot.
  std::vector<std::string> localsPlusNames;
  std::vector<uint8_t> localsPlusKinds;
  std::string filename, name, qualname;
  int firstLineNo = 0;
  std::vector<uint8_t> lineTable, exceptionTable;

  /// The exception table, decoded.
  llvm::Expected<std::vector<ExceptionEntry>> decodeExceptionTable() const;
  /// The source line of each code unit (-1 where the table gives none).
  llvm::Expected<std::vector<int>> decodeLineTable() const;
};
using CodeRef = std::shared_ptr<const CodeObject>;

/// Reads `marshal.dumps(obj)` as CPython 3.`pythonMinor` writes it (3.11 to 3.13 share
/// the format); code objects record the version. The result is the top-level object (a
/// code object for what tgc-capture writes). Malformed input (truncated, unknown type
/// codes, bad back-references) is an error, never a crash.
llvm::Expected<ConstantRef> readMarshal(llvm::ArrayRef<uint8_t> bytes, int pythonMinor = 12);

/// The interpreter's instruction set (Opcodes.def): CPython 3.12's opcodes and tgc's own
/// for the forms of 3.11 and 3.13 that 3.12 lacks.
enum class Opcode : uint8_t {
#define TGC_OPCODE(name, value) name = value,
#include "Opcodes.def"
};

/// The opcode's name ("LOAD_FAST"), or "" if `value` is no opcode of the instruction set.
llvm::StringRef getOpcodeName(uint8_t value);

/// An opcode of one CPython version as its `opcode` module describes it
/// (PyOpcodesNNN.def): its name, its inline CACHE entries and whether it jumps.
struct SourceOpcode {
  llvm::StringRef name;
  uint8_t caches = 0;
  enum Jump : uint8_t { None, Forward, Backward } jump = None;
};
/// Opcode `value` of CPython 3.`pythonMinor`, or null if that version has none.
const SourceOpcode *getSourceOpcode(int pythonMinor, uint8_t value);

/// One decoded instruction of the instruction set: EXTENDED_ARG prefixes are folded into
/// `arg`, CACHE entries are skipped. A source opcode becomes one instruction or, for the
/// superinstructions of 3.13, two at the same index (a jump lands on the first).
struct Instruction {
  Opcode opcode;
  uint32_t arg = 0;
  /// The opcode as the code's Python version names it ("LOAD_FAST_LOAD_FAST").
  llvm::StringRef sourceName;
  /// For jumps, the code unit where execution continues when the jump is taken (for
  /// FOR_ITER, past the loop's END_FOR as each version's interpreter does).
  unsigned target = 0;
  /// Index (in 2-byte code units) of the instruction's own opcode, after its
  /// EXTENDED_ARG prefixes; what jumps and the exception table count in.
  unsigned index = 0;
  /// Index of the first code unit of the instruction (its first EXTENDED_ARG).
  unsigned startIndex = 0;
  /// Index of the next instruction (after the inline caches).
  unsigned nextIndex = 0;
  /// The source line, -1 if none.
  int line = -1;
};

/// A decoded code object: its instructions in order and a map from code-unit index to
/// instruction position, so jump targets resolve.
struct DecodedCode {
  CodeRef code;
  std::vector<Instruction> instructions;
  std::vector<ExceptionEntry> exceptionTable;
  /// Instruction position of each code-unit index (-1 inside an instruction).
  std::vector<int> positionOfIndex;

  /// The position of the instruction at code-unit `index`, or -1.
  int positionAt(unsigned index) const {
    return index < positionOfIndex.size() ? positionOfIndex[index] : -1;
  }
  /// The target code-unit index of a jump (relative jumps resolved, backward ones
  /// included); only valid for jump opcodes.
  unsigned jumpTarget(const Instruction &instruction) const { return instruction.target; }
};

/// Decodes `code` by the opcodes of its Python version into the instruction set; an
/// unknown opcode or a truncated instruction is an error naming the offset.
llvm::Expected<DecodedCode> decode(CodeRef code);

/// Whether an instruction of the instruction set jumps (conditionally or not).
bool isJump(Opcode opcode);

} // namespace tgc::py

#endif // TGC_LIB_FRONTEND_PYTHON_BYTECODE_H
