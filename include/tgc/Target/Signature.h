//===- Signature.h - The calling signature of a compiled model --*- C++ -*-===//
//
// The compiler describes a model's entry (state, inputs, outputs, mutations,
// symbolic sizes) with a ModelSignature, and from it writes the three
// artifacts that carry the signature: the binary blob the runtime decodes
// (docs/abi.md), model.json for tools and people, and model.h for C callers.
// Plain C++17 with no MLIR dependency, so that tools and tests can use it.
//
//===----------------------------------------------------------------------===//

#ifndef TGC_TARGET_SIGNATURE_H
#define TGC_TARGET_SIGNATURE_H

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tgc {

/// Operations of a size expression, a postfix program on an i64 stack; the
/// numbering is the blob's (docs/abi.md).
enum class ExprOpcode : uint8_t {
  Const = 0,
  Sym = 1,
  Add = 2,
  Mul = 3,
  FloorDiv = 4,
  CeilDiv = 5,
  Mod = 6,
  Neg = 7,
};

/// One instruction of a size expression.
struct ExprOp {
  ExprOpcode opcode;
  int64_t operand = 0;

  bool operator==(const ExprOp &other) const {
    return opcode == other.opcode && operand == other.operand;
  }
};

/// A tensor dimension as a function of the model's symbols, e.g. `2*s0 + 1`.
/// Built with the factories and operators below rather than by hand, so
/// programs are always well formed.
class SizeExpr {
public:
  /// A constant size.
  static SizeExpr constant(int64_t value);
  /// Symbol `index` of ModelSignature::symbols.
  static SizeExpr symbol(uint32_t index);
  static SizeExpr add(const SizeExpr &lhs, const SizeExpr &rhs);
  static SizeExpr mul(const SizeExpr &lhs, const SizeExpr &rhs);
  /// Python `//` (rounds toward negative infinity).
  static SizeExpr floorDiv(const SizeExpr &lhs, const SizeExpr &rhs);
  /// Division rounding toward positive infinity.
  static SizeExpr ceilDiv(const SizeExpr &lhs, const SizeExpr &rhs);
  /// Python `%` (the result has the sign of the divisor).
  static SizeExpr mod(const SizeExpr &lhs, const SizeExpr &rhs);
  static SizeExpr neg(const SizeExpr &operand);

  /// A size expression from raw operations, for decoders and tests; use
  /// verifySignature to check it.
  static SizeExpr fromOps(std::vector<ExprOp> ops);

  const std::vector<ExprOp> &ops() const { return program; }
  /// True if the expression mentions no symbol.
  bool isConstant() const;
  /// The value of a symbol-free expression; throws std::domain_error on
  /// division by zero or overflow.
  int64_t constantValue() const;
  /// Evaluates with the given symbol values; throws std::domain_error on
  /// division by zero, overflow or a missing symbol.
  int64_t evaluate(const std::vector<int64_t> &symbolValues) const;

  bool operator==(const SizeExpr &other) const { return program == other.program; }

private:
  std::vector<ExprOp> program;
};

SizeExpr operator+(const SizeExpr &lhs, const SizeExpr &rhs);
SizeExpr operator*(const SizeExpr &lhs, const SizeExpr &rhs);
SizeExpr operator-(const SizeExpr &operand);

/// A tensor's element type as DLPack spells it (code, bits); bool is code 6
/// (kDLBool), bits 8.
struct DType {
  uint8_t code = 2; // kDLFloat
  uint8_t bits = 32;

  static DType float32() { return {2, 32}; }
  static DType float64() { return {2, 64}; }
  static DType float16() { return {2, 16}; }
  static DType bfloat16() { return {4, 16}; }
  /// DLPack 1.1's kDLFloat8_e4m3fn (saved values of --pack-saved=fp8).
  static DType float8e4m3fn() { return {10, 8}; }
  static DType int64() { return {0, 64}; }
  static DType int32() { return {0, 32}; }
  static DType int16() { return {0, 16}; }
  static DType int8() { return {0, 8}; }
  static DType uint8() { return {1, 8}; }
  static DType boolean() { return {6, 8}; }

  bool operator==(const DType &other) const { return code == other.code && bits == other.bits; }
  bool operator!=(const DType &other) const { return !(*this == other); }
};

/// PyTorch's name for a dtype ("float32", "bool"); "dtype(code=C, bits=B)"
/// for others.
std::string dtypeName(DType dtype);

/// A dynamic dimension with its range constraint (inclusive bounds).
struct SymbolInfo {
  std::string name;
  int64_t min = 0;
  /// std::numeric_limits<int64_t>::max() means unbounded.
  int64_t max = std::numeric_limits<int64_t>::max();
};

/// What an argument of the packed entry is; numbering is the blob's.
enum class ArgKind : uint8_t {
  Parameter = 0,
  Buffer = 1,
  Constant = 2,
  UserInput = 3,
};

/// What a result of the packed entry is; numbering is the blob's.
enum class ResultKind : uint8_t {
  UserOutput = 0,
  BufferMutation = 1,
  UserInputMutation = 2,
  /// A result of the backward entry: the gradient of argument `target`.
  Gradient = 3,
};

/// An argument of the packed entry: instance state (with its initial value
/// in the weights blob) or a user input.
struct ArgInfo {
  ArgKind kind = ArgKind::UserInput;
  DType dtype;
  /// Fully qualified name for state, the input's name for user inputs.
  std::string name;
  std::vector<SizeExpr> sizes;
  /// Where the initial value lies in the weights blob (state only).
  uint64_t dataOffset = 0;
  uint64_t dataSize = 0;
};

/// Marks a result that overwrites no argument.
constexpr uint32_t kNoTarget = 0xFFFFFFFFu;

/// A result of a packed entry: a user output, the new value of a buffer or
/// user input, or (backward entry only) the gradient of an argument;
/// `target` is that argument's index.
struct ResultInfo {
  ResultKind kind = ResultKind::UserOutput;
  DType dtype;
  std::string name;
  uint32_t target = kNoTarget;
  std::vector<SizeExpr> sizes;
  /// The strides (in elements, one per dimension) in which the runtime hands out a
  /// user output that eager lays out other than row-major (model.json's
  /// "output_layouts"); empty: row-major.
  std::vector<int64_t> strides;
};

/// A value the forward entry keeps for the backward entry (docs/training.md).
struct SavedInfo {
  DType dtype;
  std::vector<SizeExpr> sizes;
  /// The parameter or constant argument the value is (returned as is by the
  /// forward), which the backward then reads in place; kNoTarget when the
  /// forward entry writes the value into a buffer of its own.
  uint32_t arg = kNoTarget;
};

/// The temporaries of one packed entry (tgc-plan-memory). The entry's last argument is
/// an arena of `arenaBytes` bytes, which the runtime allocates once per instance; the
/// other figures are reported in model.json, not encoded in the blob.
struct MemoryPlan {
  uint64_t arenaBytes = 0;
  /// The temporaries placed in the arena, and their sizes added up (what they would
  /// take without reuse).
  int64_t buffers = 0;
  int64_t bufferBytes = 0;
  /// Allocations left to the scratch allocator (escaping, in a parallel loop, or of a
  /// size not known at the entry's start).
  int64_t unplanned = 0;
  /// Temporaries of dynamic size, placed at run time above the static ones.
  int64_t dynamicBuffers = 0;
};

/// The backward entry of a trainable model: arguments are the saved values
/// then the tangents, results are gradients and backward mutations.
struct BackwardInfo {
  std::vector<SavedInfo> saved;
  /// Per tangent argument, the index (among the user outputs) of the output
  /// it is the gradient of; strictly increasing.
  std::vector<uint32_t> tangents;
  /// Gradients (ResultKind::Gradient) and backward mutations, in packed-entry
  /// order. A gradient's name is its target's: the state fqn, or `input.N`
  /// for user input N.
  std::vector<ResultInfo> results;
  /// What the partition chose (`tgc.saved_count`, `tgc.saved_bytes`); -1 if
  /// unknown. Reported in model.json, not encoded in the blob.
  int64_t savedCount = -1;
  int64_t savedBytes = -1;
  MemoryPlan memory;
};

/// The whole calling signature of a compiled model. Args and results are in
/// the forward packed entry's order.
struct ModelSignature {
  /// A C identifier: the model's functions are named `<name>_create` etc.
  std::string name;
  std::vector<SymbolInfo> symbols;
  std::vector<ArgInfo> args;
  std::vector<ResultInfo> results;
  /// The forward entry's temporaries.
  MemoryPlan memory;
  /// Present for trainable models (`tgc compile --train`).
  std::optional<BackwardInfo> backward;
  /// User outputs that hold a tensor of the Python state the program leaves
  /// (`tgc.kind = "python_state"`, docs/replay.md), by index in `results`: where
  /// the tensor lives, e.g. `fn.cache[0]`. Not encoded in the blob (the runtime
  /// sees user outputs); model.json and model.h show it.
  std::map<uint32_t, std::string> slots;
  /// The Python state replay list (docs/replay.md) as JSON text (an array), written as
  /// model.json's "replay"; empty when the program leaves no Python state.
  std::string replayJson;
  /// State name -> the Python source its live value comes from (model.json state
  /// entries' `source`; docs/replay.md sources).
  std::map<std::string, std::string> stateSources;
  /// model.json's "input_metadata" (JSON): inputs whose sizes/strides the program
  /// changes in place; empty when none.
  std::string inputMetadataJson;
  /// model.json's "output_layouts" (JSON): user outputs eager lays out other than
  /// row-major; empty when none.
  std::string outputLayoutsJson;
  /// model.json's "output_structure" (JSON), empty when the module has none.
  std::string outputStructureJson;
  /// The guard list (docs/guards.md) as JSON text (an array), written as model.json's
  /// "guards"; empty when the program reads no Python state.
  std::string guardsJson;
};

/// Checks what the runtime will check when it loads the blob (well-formed
/// expressions, constant state shapes, valid mutation targets, unique names,
/// every symbol bindable from an input dimension, a C identifier for the
/// name), so that a bad signature fails at compile time. Returns an empty
/// string if valid, else the first problem.
std::string verifySignature(const ModelSignature &signature);

/// The signature blob of docs/abi.md. Expects a verified signature.
std::string encodeSignatureBlob(const ModelSignature &signature);

/// The alignment of every value in a weights blob.
constexpr uint64_t kWeightsAlignment = 64;

/// Appends `bytes` to a weights blob at the next kWeightsAlignment boundary and points
/// `arg`'s dataOffset/dataSize at them.
void appendWeights(std::string &weightsBlob, ArgInfo &arg, std::string_view bytes);

/// A size expression in infix form with symbol names ("2*s0 + 1",
/// "ceildiv(s0, 4)"), as model.json and messages show it.
std::string printSizeExpr(const SizeExpr &expr, const std::vector<SymbolInfo> &symbols);

/// The `tgc compile --report` text: saved count and bytes, then one line per
/// saved value with its type (zero counts for models without a backward).
std::string writeTrainingReport(const ModelSignature &signature);

/// model.json: name, inputs, outputs, state, symbols and mutations (and for
/// trainable models the saved values, tangents and gradients), with
/// shapes as integers or expression strings. Deterministic: keys in a fixed
/// order, entries in signature order.
std::string writeSignatureJson(const ModelSignature &signature);

/// model.h: the C API of docs/abi.md plus `<name>_create`, with comments
/// listing the inputs and outputs.
std::string writeModelHeader(const ModelSignature &signature);

/// model.json of a program with graph breaks: `{"name", "program": programJson,
/// "graphs": [each graph's writeSignatureJson]}` (docs/graph-breaks.md).
std::string writeProgramSignatureJson(const std::string &name, const std::string &programJson,
                                      const std::vector<ModelSignature> &graphs);

/// model.h of a program with graph breaks: the C API and each graph's constructor.
std::string writeProgramHeader(const std::string &name, const std::vector<ModelSignature> &graphs);

} // namespace tgc

#endif // TGC_TARGET_SIGNATURE_H
