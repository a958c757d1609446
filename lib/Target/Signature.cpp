//===- Signature.cpp - Signature blob, model.json and model.h writers -----===//

#include "tgc/Target/Signature.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>

using namespace tgc;

namespace {
constexpr uint32_t kSignatureVersion = 2;
constexpr uint32_t kMaxRank = 64;
constexpr uint64_t kWeightsAlignment = 64;
} // namespace

//===----------------------------------------------------------------------===//
// SizeExpr
//===----------------------------------------------------------------------===//

SizeExpr SizeExpr::constant(int64_t value) {
  return fromOps({{ExprOpcode::Const, value}});
}

SizeExpr SizeExpr::symbol(uint32_t index) {
  return fromOps({{ExprOpcode::Sym, index}});
}

SizeExpr SizeExpr::fromOps(std::vector<ExprOp> ops) {
  SizeExpr expr;
  expr.program = std::move(ops);
  return expr;
}

static SizeExpr binary(ExprOpcode opcode, const SizeExpr &lhs,
                       const SizeExpr &rhs) {
  std::vector<ExprOp> ops = lhs.ops();
  ops.insert(ops.end(), rhs.ops().begin(), rhs.ops().end());
  ops.push_back({opcode, 0});
  return SizeExpr::fromOps(std::move(ops));
}

SizeExpr SizeExpr::add(const SizeExpr &lhs, const SizeExpr &rhs) {
  return binary(ExprOpcode::Add, lhs, rhs);
}
SizeExpr SizeExpr::mul(const SizeExpr &lhs, const SizeExpr &rhs) {
  return binary(ExprOpcode::Mul, lhs, rhs);
}
SizeExpr SizeExpr::floorDiv(const SizeExpr &lhs, const SizeExpr &rhs) {
  return binary(ExprOpcode::FloorDiv, lhs, rhs);
}
SizeExpr SizeExpr::ceilDiv(const SizeExpr &lhs, const SizeExpr &rhs) {
  return binary(ExprOpcode::CeilDiv, lhs, rhs);
}
SizeExpr SizeExpr::mod(const SizeExpr &lhs, const SizeExpr &rhs) {
  return binary(ExprOpcode::Mod, lhs, rhs);
}
SizeExpr SizeExpr::neg(const SizeExpr &operand) {
  std::vector<ExprOp> ops = operand.ops();
  ops.push_back({ExprOpcode::Neg, 0});
  return fromOps(std::move(ops));
}

SizeExpr tgc::operator+(const SizeExpr &lhs, const SizeExpr &rhs) {
  return SizeExpr::add(lhs, rhs);
}
SizeExpr tgc::operator*(const SizeExpr &lhs, const SizeExpr &rhs) {
  return SizeExpr::mul(lhs, rhs);
}
SizeExpr tgc::operator-(const SizeExpr &operand) {
  return SizeExpr::neg(operand);
}

bool SizeExpr::isConstant() const {
  return std::none_of(program.begin(), program.end(), [](const ExprOp &op) {
    return op.opcode == ExprOpcode::Sym;
  });
}

int64_t SizeExpr::constantValue() const { return evaluate({}); }

static bool isBinary(ExprOpcode opcode) {
  return opcode >= ExprOpcode::Add && opcode <= ExprOpcode::Mod;
}

/// Why `ops` is not a well-formed program over `numSymbols` symbols, or
/// nothing if it is.
static std::optional<std::string> checkProgram(const std::vector<ExprOp> &ops,
                                               size_t numSymbols) {
  size_t depth = 0;
  for (size_t i = 0; i < ops.size(); ++i) {
    const ExprOp &op = ops[i];
    if (op.opcode > ExprOpcode::Neg)
      return "unknown opcode " + std::to_string(unsigned(op.opcode));
    if (op.opcode == ExprOpcode::Sym &&
        (op.operand < 0 || uint64_t(op.operand) >= numSymbols))
      return "symbol index " + std::to_string(op.operand) + " out of range";
    size_t pops = isBinary(op.opcode) ? 2 : op.opcode == ExprOpcode::Neg;
    if (depth < pops)
      return "stack underflow at operation " + std::to_string(i);
    depth = depth - pops + 1;
  }
  if (depth != 1)
    return std::to_string(depth) + " values left on the stack";
  return std::nullopt;
}

[[noreturn]] static void throwOverflow() {
  throw std::domain_error("size expression overflows");
}

static int64_t applyBinary(ExprOpcode opcode, int64_t a, int64_t b) {
  int64_t result = 0;
  if (opcode == ExprOpcode::Add && __builtin_add_overflow(a, b, &result))
    throwOverflow();
  if (opcode == ExprOpcode::Mul && __builtin_mul_overflow(a, b, &result))
    throwOverflow();
  if (opcode == ExprOpcode::Add || opcode == ExprOpcode::Mul)
    return result;
  if (b == 0)
    throw std::domain_error("size expression divides by zero");
  if (opcode == ExprOpcode::Mod) {
    if (b == -1)
      return 0;
    int64_t r = a % b;
    return r != 0 && (r < 0) != (b < 0) ? r + b : r;
  }
  if (a == std::numeric_limits<int64_t>::min() && b == -1)
    throwOverflow();
  int64_t q = a / b;
  bool inexact = a % b != 0, sameSign = (a < 0) == (b < 0);
  if (opcode == ExprOpcode::FloorDiv && inexact && !sameSign)
    --q;
  if (opcode == ExprOpcode::CeilDiv && inexact && sameSign)
    ++q;
  return q;
}

int64_t SizeExpr::evaluate(const std::vector<int64_t> &symbolValues) const {
  if (auto problem = checkProgram(program, symbolValues.size()))
    throw std::domain_error("malformed size expression: " + *problem);
  std::vector<int64_t> stack;
  for (const ExprOp &op : program) {
    switch (op.opcode) {
    case ExprOpcode::Const:
      stack.push_back(op.operand);
      break;
    case ExprOpcode::Sym:
      stack.push_back(symbolValues[op.operand]);
      break;
    case ExprOpcode::Neg:
      if (stack.back() == std::numeric_limits<int64_t>::min())
        throwOverflow();
      stack.back() = -stack.back();
      break;
    default: {
      int64_t rhs = stack.back();
      stack.pop_back();
      stack.back() = applyBinary(op.opcode, stack.back(), rhs);
      break;
    }
    }
  }
  return stack.back();
}

//===----------------------------------------------------------------------===//
// Printing
//===----------------------------------------------------------------------===//

namespace {
/// Precedence: sums < products < negation < atoms; the same rules as the
/// runtime's messages (lib/Runtime/Expr.c).
enum Precedence { PrecAdd = 1, PrecMul = 2, PrecNeg = 3, PrecAtom = 4 };

/// The postfix program as a tree of operand positions, printed recursively.
class ExprPrinter {
public:
  ExprPrinter(const SizeExpr &expr, const std::vector<SymbolInfo> &symbols)
      : ops(expr.ops()), symbols(symbols), lhs(ops.size()), rhs(ops.size()) {
    std::vector<size_t> stack;
    for (size_t i = 0; i < ops.size(); ++i) {
      if (isBinary(ops[i].opcode)) {
        rhs[i] = stack.back();
        stack.pop_back();
        lhs[i] = stack.back();
        stack.pop_back();
      } else if (ops[i].opcode == ExprOpcode::Neg) {
        lhs[i] = stack.back();
        stack.pop_back();
      }
      stack.push_back(i);
    }
  }

  std::string print() {
    node(ops.size() - 1);
    return out.str();
  }

private:
  static int precedence(const ExprOp &op) {
    switch (op.opcode) {
    case ExprOpcode::Const:
      return op.operand < 0 ? PrecNeg : PrecAtom;
    case ExprOpcode::Add:
      return PrecAdd;
    case ExprOpcode::Mul:
    case ExprOpcode::FloorDiv:
    case ExprOpcode::Mod:
      return PrecMul;
    case ExprOpcode::Neg:
      return PrecNeg;
    default:
      return PrecAtom;
    }
  }

  void operand(size_t i, int minPrecedence) {
    if (precedence(ops[i]) >= minPrecedence)
      return node(i);
    out << '(';
    node(i);
    out << ')';
  }

  /// a + b, written a - c when b is -c or a negative constant.
  void sum(size_t i) {
    operand(lhs[i], PrecAdd);
    const ExprOp &right = ops[rhs[i]];
    if (right.opcode == ExprOpcode::Const && right.operand < 0 &&
        right.operand != std::numeric_limits<int64_t>::min()) {
      out << " - " << -right.operand;
      return;
    }
    if (right.opcode == ExprOpcode::Neg) {
      out << " - ";
      operand(lhs[rhs[i]], PrecMul);
      return;
    }
    out << " + ";
    operand(rhs[i], PrecAdd);
  }

  void node(size_t i) {
    const ExprOp &op = ops[i];
    switch (op.opcode) {
    case ExprOpcode::Const:
      out << op.operand;
      return;
    case ExprOpcode::Sym:
      out << symbols[op.operand].name;
      return;
    case ExprOpcode::Neg:
      out << '-';
      return operand(lhs[i], PrecAtom);
    case ExprOpcode::Add:
      return sum(i);
    case ExprOpcode::CeilDiv:
      out << "ceildiv(";
      node(lhs[i]);
      out << ", ";
      node(rhs[i]);
      out << ')';
      return;
    default:
      operand(lhs[i], PrecMul);
      out << (op.opcode == ExprOpcode::Mul        ? "*"
              : op.opcode == ExprOpcode::FloorDiv ? "//"
                                                  : "%");
      // Right operands of * // % need parentheses at equal precedence.
      return operand(rhs[i], PrecMul + 1);
    }
  }

  const std::vector<ExprOp> &ops;
  const std::vector<SymbolInfo> &symbols;
  std::vector<size_t> lhs, rhs;
  std::ostringstream out;
};
} // namespace

std::string tgc::printSizeExpr(const SizeExpr &expr,
                               const std::vector<SymbolInfo> &symbols) {
  if (auto problem = checkProgram(expr.ops(), symbols.size()))
    return "<malformed: " + *problem + ">";
  return ExprPrinter(expr, symbols).print();
}

std::string tgc::dtypeName(DType dtype) {
  static const std::map<std::pair<int, int>, const char *> names = {
      {{2, 16}, "float16"},   {{2, 32}, "float32"},     {{2, 64}, "float64"},
      {{4, 16}, "bfloat16"},  {{0, 8}, "int8"},         {{0, 16}, "int16"},
      {{0, 32}, "int32"},     {{0, 64}, "int64"},       {{1, 8}, "uint8"},
      {{1, 16}, "uint16"},    {{1, 32}, "uint32"},      {{1, 64}, "uint64"},
      {{5, 64}, "complex64"}, {{5, 128}, "complex128"}, {{6, 8}, "bool"},
      {{10, 8}, "float8_e4m3fn"}};
  auto it = names.find({dtype.code, dtype.bits});
  if (it != names.end())
    return it->second;
  return "dtype(code=" + std::to_string(dtype.code) +
         ", bits=" + std::to_string(dtype.bits) + ")";
}

//===----------------------------------------------------------------------===//
// Verification
//===----------------------------------------------------------------------===//

namespace {
/// coefficient * symbol + constant, as the runtime's binder solves it.
struct Affine {
  int symbol = -1;
  int64_t coefficient = 0;
  int64_t constant = 0;
};

/// The expression as an affine function of at most one symbol, if it is
/// one (mirrors tgc_expr_affine in lib/Runtime/Expr.c).
std::optional<Affine> asAffine(const SizeExpr &expr) {
  std::vector<std::optional<Affine>> stack;
  auto scale = [](std::optional<Affine> a,
                  int64_t factor) -> std::optional<Affine> {
    if (!a)
      return std::nullopt;
    Affine r{a->symbol, 0, 0};
    if (__builtin_mul_overflow(a->coefficient, factor, &r.coefficient) ||
        __builtin_mul_overflow(a->constant, factor, &r.constant))
      return std::nullopt;
    return r;
  };
  auto combine = [&](ExprOpcode opcode, std::optional<Affine> a,
                     std::optional<Affine> b) -> std::optional<Affine> {
    if (!a || !b)
      return std::nullopt;
    if (opcode == ExprOpcode::Add) {
      if (a->symbol >= 0 && b->symbol >= 0 && a->symbol != b->symbol)
        return std::nullopt;
      Affine r{a->symbol >= 0 ? a->symbol : b->symbol, 0, 0};
      if (__builtin_add_overflow(a->coefficient, b->coefficient,
                                 &r.coefficient) ||
          __builtin_add_overflow(a->constant, b->constant, &r.constant))
        return std::nullopt;
      return r;
    }
    if (opcode == ExprOpcode::Mul && b->symbol < 0)
      return scale(a, b->constant);
    if (opcode == ExprOpcode::Mul && a->symbol < 0)
      return scale(b, a->constant);
    if (a->symbol >= 0 || b->symbol >= 0)
      return std::nullopt;
    try {
      return Affine{-1, 0, applyBinary(opcode, a->constant, b->constant)};
    } catch (const std::domain_error &) {
      return std::nullopt;
    }
  };
  for (const ExprOp &op : expr.ops()) {
    if (op.opcode == ExprOpcode::Const) {
      stack.push_back(Affine{-1, 0, op.operand});
    } else if (op.opcode == ExprOpcode::Sym) {
      stack.push_back(Affine{int(op.operand), 1, 0});
    } else if (op.opcode == ExprOpcode::Neg) {
      stack.back() = scale(stack.back(), -1);
    } else {
      std::optional<Affine> rhs = stack.back();
      stack.pop_back();
      stack.back() = combine(op.opcode, stack.back(), rhs);
    }
  }
  std::optional<Affine> result = stack.back();
  if (result && result->coefficient == 0)
    result->symbol = -1;
  return result;
}

bool usesSymbol(const SizeExpr &expr, size_t symbol) {
  return std::any_of(
      expr.ops().begin(), expr.ops().end(), [&](const ExprOp &op) {
        return op.opcode == ExprOpcode::Sym && uint64_t(op.operand) == symbol;
      });
}

bool isCIdentifier(const std::string &name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0])))
    return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

bool isStorableDType(DType dtype) {
  return dtype.bits != 0 && dtype.bits % 8 == 0;
}

const char *argKindName(ArgKind kind) {
  switch (kind) {
  case ArgKind::Parameter:
    return "parameter";
  case ArgKind::Buffer:
    return "buffer";
  case ArgKind::Constant:
    return "constant";
  case ArgKind::UserInput:
    return "input";
  }
  return "argument";
}

const char *resultKindName(ResultKind kind) {
  switch (kind) {
  case ResultKind::UserOutput:
    return "output";
  case ResultKind::BufferMutation:
    return "new value of buffer";
  case ResultKind::UserInputMutation:
    return "new value of input";
  case ResultKind::Gradient:
    return "gradient of";
  }
  return "result";
}

/// Collects the first problem of a signature.
class Verifier {
public:
  explicit Verifier(const ModelSignature &signature) : sig(signature) {}

  std::string run() {
    (void)(verifyName() && verifySymbols() && verifyArgs() && verifyResults() &&
           verifyUniqueNames() && verifyBackward() && verifyBindable());
    return problem;
  }

private:
  bool fail(const std::string &what, const std::string &name,
            const std::string &why) {
    problem = what + " '" + name + "': " + why;
    return false;
  }

  bool verifyName() {
    if (isCIdentifier(sig.name))
      return true;
    return fail("model", sig.name, "the name is not a C identifier");
  }

  bool verifySymbols() {
    std::set<std::string> seen;
    for (const SymbolInfo &symbol : sig.symbols) {
      if (symbol.min > symbol.max)
        return fail("symbol", symbol.name, "its minimum exceeds its maximum");
      if (!seen.insert(symbol.name).second)
        return fail("symbol", symbol.name, "the name is used twice");
    }
    return true;
  }

  bool verifyTensor(const std::string &what, const std::string &name,
                    DType dtype, const std::vector<SizeExpr> &sizes) {
    if (name.find('\0') != std::string::npos)
      return fail(what, name, "the name contains a NUL byte");
    if (!isStorableDType(dtype))
      return fail(what, name, "unsupported dtype " + dtypeName(dtype));
    if (sizes.size() > kMaxRank)
      return fail(what, name, "rank is larger than 64");
    for (const SizeExpr &size : sizes)
      if (auto why = checkProgram(size.ops(), sig.symbols.size()))
        return fail(what, name, "malformed size expression: " + *why);
    return true;
  }

  /// State lives in the instance from creation on, so its shape is fixed
  /// and its initial value must fill exactly dataSize bytes.
  bool verifyStateShape(const ArgInfo &arg) {
    uint64_t bytes = arg.dtype.bits / 8;
    for (const SizeExpr &size : arg.sizes) {
      if (!size.isConstant())
        return fail(argKindName(arg.kind), arg.name,
                    "its shape depends on a symbol");
      int64_t value;
      try {
        value = size.constantValue();
      } catch (const std::domain_error &error) {
        return fail(argKindName(arg.kind), arg.name, error.what());
      }
      if (value < 0 || __builtin_mul_overflow(bytes, uint64_t(value), &bytes))
        return fail(argKindName(arg.kind), arg.name,
                    "its shape is not a valid size");
    }
    if (bytes != arg.dataSize)
      return fail(argKindName(arg.kind), arg.name,
                  "dataSize " + std::to_string(arg.dataSize) +
                      " does not match its dtype and shape (" +
                      std::to_string(bytes) + " bytes)");
    return true;
  }

  bool verifyArgs() {
    for (const ArgInfo &arg : sig.args) {
      if (arg.kind > ArgKind::UserInput)
        return fail("argument", arg.name, "unknown kind");
      if (!verifyTensor(argKindName(arg.kind), arg.name, arg.dtype, arg.sizes))
        return false;
      if (arg.kind != ArgKind::UserInput && !verifyStateShape(arg))
        return false;
    }
    return true;
  }

  bool verifyTarget(const ResultInfo &result, std::set<uint32_t> &rewritten) {
    const char *what = resultKindName(result.kind);
    if (result.kind == ResultKind::UserOutput)
      return true;
    if (result.target >= sig.args.size())
      return fail(what, result.name, "target argument out of range");
    const ArgInfo &target = sig.args[result.target];
    bool kindOk = result.kind == ResultKind::BufferMutation
                      ? target.kind == ArgKind::Buffer
                  : result.kind == ResultKind::UserInputMutation
                      ? target.kind == ArgKind::UserInput
                      : target.kind == ArgKind::Parameter ||
                            target.kind == ArgKind::UserInput;
    if (!kindOk)
      return fail(what, result.name, "target argument has the wrong kind");
    if (target.dtype != result.dtype ||
        target.sizes.size() != result.sizes.size())
      return fail(what, result.name,
                  "dtype or rank differs from the target argument");
    if (!rewritten.insert(result.target).second)
      return fail(what, result.name, "target is rewritten twice");
    return true;
  }

  bool verifyResults() {
    std::set<uint32_t> rewritten;
    for (const ResultInfo &result : sig.results) {
      if (result.kind > ResultKind::UserInputMutation)
        return fail("result", result.name,
                    "unknown kind for a result of the forward entry");
      if (!verifyTensor(resultKindName(result.kind), result.name, result.dtype,
                        result.sizes) ||
          !verifyTarget(result, rewritten))
        return false;
    }
    return true;
  }

  bool verifyUniqueNames() {
    std::set<std::string> inputs, state;
    for (const ArgInfo &arg : sig.args) {
      auto &seen = arg.kind == ArgKind::UserInput ? inputs : state;
      if (!seen.insert(arg.name).second)
        return fail(argKindName(arg.kind), arg.name, "the name is used twice");
    }
    return true;
  }

  /// Saved values match what they refer to, tangents name distinct user
  /// outputs in order, and backward results are gradients of parameters or
  /// user inputs, or mutations (each target at most once per entry).
  bool verifyBackward() {
    if (!sig.backward)
      return true;
    const BackwardInfo &bw = *sig.backward;
    for (size_t i = 0; i < bw.saved.size(); ++i) {
      const SavedInfo &saved = bw.saved[i];
      std::string name = "#" + std::to_string(i);
      if (!verifyTensor("saved value", name, saved.dtype, saved.sizes))
        return false;
      if (saved.arg == kNoTarget)
        continue;
      if (saved.arg >= sig.args.size())
        return fail("saved value", name, "argument out of range");
      const ArgInfo &arg = sig.args[saved.arg];
      if (arg.kind != ArgKind::Parameter && arg.kind != ArgKind::Constant)
        return fail("saved value", name,
                    "only parameters and constants are saved by reference");
      if (arg.dtype != saved.dtype || !(arg.sizes == saved.sizes))
        return fail("saved value", name,
                    "dtype or shape differs from the argument it refers to");
    }
    size_t numOutputs = std::count_if(
        sig.results.begin(), sig.results.end(),
        [](const ResultInfo &r) { return r.kind == ResultKind::UserOutput; });
    for (size_t i = 0; i < bw.tangents.size(); ++i) {
      std::string name = "#" + std::to_string(i);
      if (bw.tangents[i] >= numOutputs)
        return fail("tangent", name, "user output out of range");
      if (i > 0 && bw.tangents[i] <= bw.tangents[i - 1])
        return fail("tangent", name,
                    "user outputs are not in increasing order");
    }
    std::set<uint32_t> rewritten, differentiated;
    for (const ResultInfo &result : bw.results) {
      if (result.kind == ResultKind::UserOutput ||
          result.kind > ResultKind::Gradient)
        return fail("result", result.name,
                    "unknown kind for a result of the backward entry");
      if (!verifyTensor(resultKindName(result.kind), result.name, result.dtype,
                        result.sizes) ||
          !verifyTarget(result, result.kind == ResultKind::Gradient
                                    ? differentiated
                                    : rewritten))
        return false;
    }
    return true;
  }

  /// The runtime gets each symbol's value from an input dimension that is
  /// affine in that symbol alone.
  bool verifyBindable() {
    for (size_t s = 0; s < sig.symbols.size(); ++s) {
      std::string user;
      bool bindable = false;
      for (const ArgInfo &arg : sig.args) {
        for (const SizeExpr &size : arg.sizes) {
          if (!usesSymbol(size, s))
            continue;
          if (user.empty())
            user = arg.name;
          std::optional<Affine> affine = asAffine(size);
          bindable |= arg.kind == ArgKind::UserInput && affine &&
                      affine->symbol == int(s);
        }
      }
      for (const ResultInfo &result : sig.results)
        for (const SizeExpr &size : result.sizes)
          if (user.empty() && usesSymbol(size, s))
            user = result.name;
      if (sig.backward) {
        for (const SavedInfo &saved : sig.backward->saved)
          for (const SizeExpr &size : saved.sizes)
            if (user.empty() && usesSymbol(size, s))
              user = "saved value";
        for (const ResultInfo &result : sig.backward->results)
          for (const SizeExpr &size : result.sizes)
            if (user.empty() && usesSymbol(size, s))
              user = result.name;
      }
      if (!user.empty() && !bindable)
        return fail("symbol", sig.symbols[s].name,
                    "(used by '" + user +
                        "') is not a size of any input dimension, so it "
                        "cannot be bound");
    }
    return true;
  }

  const ModelSignature &sig;
  std::string problem;
};
} // namespace

std::string tgc::verifySignature(const ModelSignature &signature) {
  return Verifier(signature).run();
}

//===----------------------------------------------------------------------===//
// Blob
//===----------------------------------------------------------------------===//

namespace {
/// Little-endian writer for the blob's fixed-width fields.
class BlobWriter {
public:
  void u8(uint8_t v) { bytes.push_back(char(v)); }
  void u32(uint32_t v) { le(v, 4); }
  void u64(uint64_t v) { le(v, 8); }
  void i64(int64_t v) { le(uint64_t(v), 8); }
  void str(const std::string &s) {
    u32(uint32_t(s.size()));
    bytes += s;
  }
  void dtype(DType d) {
    u8(d.code);
    u8(d.bits);
  }
  void sizes(const std::vector<SizeExpr> &sizes) {
    u32(uint32_t(sizes.size()));
    for (const SizeExpr &size : sizes) {
      u32(uint32_t(size.ops().size()));
      for (const ExprOp &op : size.ops()) {
        u8(uint8_t(op.opcode));
        i64(op.operand);
      }
    }
  }
  void result(const ResultInfo &result) {
    u8(uint8_t(result.kind));
    dtype(result.dtype);
    str(result.name);
    u32(result.kind == ResultKind::UserOutput ? kNoTarget : result.target);
    sizes(result.sizes);
  }
  std::string take() { return std::move(bytes); }

private:
  void le(uint64_t v, unsigned width) {
    for (unsigned i = 0; i < width; ++i)
      bytes.push_back(char((v >> (8 * i)) & 0xff));
  }
  std::string bytes;
};
} // namespace

std::string tgc::encodeSignatureBlob(const ModelSignature &signature) {
  BlobWriter w;
  w.u8('T');
  w.u8('G');
  w.u8('C');
  w.u8('S');
  w.u32(kSignatureVersion);
  w.u32(uint32_t(signature.symbols.size()));
  for (const SymbolInfo &symbol : signature.symbols) {
    w.str(symbol.name);
    w.i64(symbol.min);
    w.i64(symbol.max);
  }
  w.u32(uint32_t(signature.args.size()));
  for (const ArgInfo &arg : signature.args) {
    w.u8(uint8_t(arg.kind));
    w.dtype(arg.dtype);
    w.str(arg.name);
    w.sizes(arg.sizes);
    bool state = arg.kind != ArgKind::UserInput;
    w.u64(state ? arg.dataOffset : 0);
    w.u64(state ? arg.dataSize : 0);
  }
  w.u32(uint32_t(signature.results.size()));
  for (const ResultInfo &result : signature.results)
    w.result(result);
  w.u8(signature.backward ? 1 : 0);
  if (!signature.backward)
    return w.take();
  const BackwardInfo &bw = *signature.backward;
  w.u32(uint32_t(bw.saved.size()));
  for (const SavedInfo &saved : bw.saved) {
    w.dtype(saved.dtype);
    w.u32(saved.arg);
    w.sizes(saved.sizes);
  }
  w.u32(uint32_t(bw.tangents.size()));
  for (uint32_t output : bw.tangents)
    w.u32(output);
  w.u32(uint32_t(bw.results.size()));
  for (const ResultInfo &result : bw.results)
    w.result(result);
  return w.take();
}

void tgc::appendWeights(std::string &weightsBlob, ArgInfo &arg,
                        std::string_view bytes) {
  size_t offset = (weightsBlob.size() + kWeightsAlignment - 1) /
                  kWeightsAlignment * kWeightsAlignment;
  weightsBlob.resize(offset, '\0');
  weightsBlob.append(bytes.data(), bytes.size());
  arg.dataOffset = offset;
  arg.dataSize = bytes.size();
}

//===----------------------------------------------------------------------===//
// model.json
//===----------------------------------------------------------------------===//

using OrderedJson = nlohmann::ordered_json;

static OrderedJson shapeJson(const std::vector<SizeExpr> &sizes,
                             const std::vector<SymbolInfo> &symbols) {
  OrderedJson shape = OrderedJson::array();
  for (const SizeExpr &size : sizes) {
    if (size.isConstant() && !checkProgram(size.ops(), 0))
      shape.push_back(size.constantValue());
    else
      shape.push_back(printSizeExpr(size, symbols));
  }
  return shape;
}

static OrderedJson tensorJson(const std::string &name, DType dtype,
                              const std::vector<SizeExpr> &sizes,
                              const std::vector<SymbolInfo> &symbols) {
  OrderedJson tensor;
  tensor["name"] = name;
  tensor["dtype"] = dtypeName(dtype);
  tensor["shape"] = shapeJson(sizes, symbols);
  return tensor;
}

static bool isMutation(const ResultInfo &result) {
  return result.kind == ResultKind::BufferMutation ||
         result.kind == ResultKind::UserInputMutation;
}

/// Whether argument `index` is rewritten by some result of either entry.
static bool isMutated(const ModelSignature &sig, size_t index) {
  auto rewrites = [&](const ResultInfo &result) {
    return isMutation(result) && result.target == index;
  };
  return std::any_of(sig.results.begin(), sig.results.end(), rewrites) ||
         (sig.backward && std::any_of(sig.backward->results.begin(),
                                      sig.backward->results.end(), rewrites));
}

static OrderedJson mutationJson(const ModelSignature &signature,
                                const ResultInfo &result) {
  OrderedJson mutation;
  mutation["kind"] =
      result.kind == ResultKind::BufferMutation ? "buffer" : "user_input";
  mutation["target"] = result.target < signature.args.size()
                           ? signature.args[result.target].name
                           : result.name;
  return mutation;
}

/// The bytes of a tensor whose sizes are constants, if they are.
static std::optional<int64_t>
constantBytes(DType dtype, const std::vector<SizeExpr> &sizes) {
  int64_t bytes = dtype.bits / 8;
  for (const SizeExpr &size : sizes) {
    if (!size.isConstant() || checkProgram(size.ops(), 0))
      return std::nullopt;
    try {
      if (__builtin_mul_overflow(bytes, size.constantValue(), &bytes))
        return std::nullopt;
    } catch (const std::domain_error &) {
      return std::nullopt;
    }
  }
  return bytes;
}

/// The compile-time saved count and bytes: the partition's numbers when it
/// recorded them, else counted here (bytes only when every shape is static).
static std::pair<int64_t, std::optional<int64_t>>
savedTotals(const BackwardInfo &bw) {
  int64_t count = bw.savedCount >= 0 ? bw.savedCount : int64_t(bw.saved.size());
  if (bw.savedBytes >= 0)
    return {count, bw.savedBytes};
  int64_t total = 0;
  for (const SavedInfo &saved : bw.saved) {
    std::optional<int64_t> bytes = constantBytes(saved.dtype, saved.sizes);
    if (!bytes || __builtin_add_overflow(total, *bytes, &total))
      return {count, std::nullopt};
  }
  return {count, total};
}

static void addTrainingJson(const ModelSignature &signature,
                            OrderedJson &root) {
  const BackwardInfo &bw = *signature.backward;
  auto [count, bytes] = savedTotals(bw);
  root["saved_count"] = count;
  if (bytes)
    root["saved_bytes"] = *bytes;
  else
    root["saved_bytes"] = nullptr;
  OrderedJson saved = OrderedJson::array(), tangents = OrderedJson::array(),
              gradients = OrderedJson::array(),
              mutations = OrderedJson::array();
  for (const SavedInfo &value : bw.saved) {
    OrderedJson entry;
    entry["dtype"] = dtypeName(value.dtype);
    entry["shape"] = shapeJson(value.sizes, signature.symbols);
    if (value.arg < signature.args.size())
      entry["reference"] = signature.args[value.arg].name;
    else
      entry["reference"] = nullptr;
    saved.push_back(std::move(entry));
  }
  for (uint32_t output : bw.tangents) {
    OrderedJson entry;
    entry["output"] = output;
    tangents.push_back(std::move(entry));
  }
  for (const ResultInfo &result : bw.results) {
    if (isMutation(result)) {
      mutations.push_back(mutationJson(signature, result));
      continue;
    }
    OrderedJson entry =
        tensorJson(result.name, result.dtype, result.sizes, signature.symbols);
    entry["target"] = result.target < signature.args.size()
                          ? signature.args[result.target].name
                          : result.name;
    gradients.push_back(std::move(entry));
  }
  root["saved"] = std::move(saved);
  root["tangents"] = std::move(tangents);
  root["gradients"] = std::move(gradients);
  root["backward_mutations"] = std::move(mutations);
}

std::string tgc::writeSignatureJson(const ModelSignature &signature) {
  OrderedJson inputs = OrderedJson::array(), outputs = OrderedJson::array(),
              state = OrderedJson::array(), symbols = OrderedJson::array(),
              mutations = OrderedJson::array();
  for (size_t i = 0; i < signature.args.size(); ++i) {
    const ArgInfo &arg = signature.args[i];
    OrderedJson tensor =
        tensorJson(arg.name, arg.dtype, arg.sizes, signature.symbols);
    if (arg.kind == ArgKind::UserInput) {
      tensor["mutated"] = isMutated(signature, i);
      inputs.push_back(std::move(tensor));
      continue;
    }
    tensor["kind"] = argKindName(arg.kind);
    if (auto it = signature.stateSources.find(arg.name); it != signature.stateSources.end())
      tensor["source"] = it->second;
    state.push_back(std::move(tensor));
  }
  for (size_t r = 0; r < signature.results.size(); ++r) {
    const ResultInfo &result = signature.results[r];
    if (result.kind == ResultKind::UserOutput) {
      OrderedJson output = tensorJson(result.name, result.dtype, result.sizes,
                                      signature.symbols);
      if (auto slot = signature.slots.find(uint32_t(r));
          slot != signature.slots.end()) {
        output["kind"] = "python_state";
        output["slot"] = slot->second;
      }
      outputs.push_back(std::move(output));
      continue;
    }
    mutations.push_back(mutationJson(signature, result));
  }
  for (const SymbolInfo &symbol : signature.symbols) {
    OrderedJson entry;
    entry["name"] = symbol.name;
    entry["min"] = symbol.min;
    if (symbol.max == std::numeric_limits<int64_t>::max())
      entry["max"] = nullptr;
    else
      entry["max"] = symbol.max;
    symbols.push_back(std::move(entry));
  }
  OrderedJson root;
  root["name"] = signature.name;
  root["abi_version"] = 2;
  root["inputs"] = std::move(inputs);
  root["outputs"] = std::move(outputs);
  root["state"] = std::move(state);
  root["symbols"] = std::move(symbols);
  root["mutations"] = std::move(mutations);
  if (signature.backward)
    addTrainingJson(signature, root);
  if (!signature.inputMetadataJson.empty())
    root["input_metadata"] = OrderedJson::parse(signature.inputMetadataJson);
  if (!signature.outputStructureJson.empty())
    root["output_structure"] = OrderedJson::parse(signature.outputStructureJson);
  if (!signature.replayJson.empty())
    root["replay"] = OrderedJson::parse(signature.replayJson);
  if (!signature.guardsJson.empty())
    root["guards"] = OrderedJson::parse(signature.guardsJson);
  return root.dump(2) + "\n";
}

std::string tgc::writeTrainingReport(const ModelSignature &signature) {
  if (!signature.backward)
    return "saved count: 0\nsaved bytes: 0\n";
  const BackwardInfo &bw = *signature.backward;
  auto [count, bytes] = savedTotals(bw);
  std::ostringstream out;
  out << "saved count: " << count << "\n"
      << "saved bytes: " << (bytes ? std::to_string(*bytes) : "unknown")
      << "\n";
  for (size_t i = 0; i < bw.saved.size(); ++i) {
    const SavedInfo &saved = bw.saved[i];
    out << "saved #" << i << ": " << dtypeName(saved.dtype) << "[";
    for (size_t d = 0; d < saved.sizes.size(); ++d)
      out << (d ? ", " : "")
          << printSizeExpr(saved.sizes[d], signature.symbols);
    out << "]";
    if (saved.arg < signature.args.size())
      out << " = " << argKindName(signature.args[saved.arg].kind) << " '"
          << signature.args[saved.arg].name << "' (by reference)";
    out << "\n";
  }
  return out.str();
}

//===----------------------------------------------------------------------===//
// model.h
//===----------------------------------------------------------------------===//

/// The user API, identical to the TGC_MODEL_API_V2 block of
/// include/tgc/Runtime/tgc_runtime.h (less the export attributes), so that
/// several model headers and the runtime header can be included together.
static const char *const kModelApi = R"(#ifndef TGC_MODEL_API_V2
#define TGC_MODEL_API_V2

/* An instance of a compiled model (not thread-safe: one call at a time). */
typedef struct tgc_model tgc_model;

/* Frees an instance (NULL allowed); outputs already returned stay valid. */
void tgc_model_destroy(tgc_model *m);
/* The last error on m, or with m == NULL the last failed create on this
   thread; "" if none. */
const char *tgc_model_last_error(const tgc_model *m);
const char *tgc_model_name(const tgc_model *m);
int64_t tgc_model_num_inputs(const tgc_model *m);
int64_t tgc_model_num_outputs(const tgc_model *m);
const char *tgc_model_input_name(const tgc_model *m, int64_t i);
const char *tgc_model_output_name(const tgc_model *m, int64_t i);
/* 1 if run writes new values into input i in place, 0 if not, -1 if out of
   range. */
int tgc_model_input_is_mutated(const tgc_model *m, int64_t i);
/* Runs the model on CPU tensors (any strides). Each outputs[i] is a new
   contiguous tensor; free it with outputs[i]->deleter(outputs[i]).
   Returns 0, or non-zero with tgc_model_last_error(m) set. */
int tgc_model_run(tgc_model *m, DLTensor *const *inputs, int64_t num_inputs,
                  DLManagedTensor **outputs, int64_t num_outputs);
/* Parameters, buffers and constants, by fully qualified name. */
int64_t tgc_model_num_state(const tgc_model *m);
const char *tgc_model_state_name(const tgc_model *m, int64_t i);
/* 0 parameter, 1 buffer, 2 constant; -1 if out of range. */
int tgc_model_state_kind(const tgc_model *m, int64_t i);
int tgc_model_state_dtype(tgc_model *m, const char *name, DLDataType *dtype);
/* Sets *rank; fills sizes[0..rank) if rank <= max_rank, else fails. */
int tgc_model_state_shape(tgc_model *m, const char *name, int64_t *rank,
                          int64_t *sizes, int64_t max_rank);
int tgc_model_get_state(tgc_model *m, const char *name, DLTensor *dst);
int tgc_model_set_state(tgc_model *m, const char *name, const DLTensor *src);

/* Training (models compiled with --train). */
int tgc_model_is_trainable(const tgc_model *m);
/* run that keeps the saved values for one tgc_model_backward. */
int tgc_model_run_train(tgc_model *m, DLTensor *const *inputs,
                        int64_t num_inputs, DLManagedTensor **outputs,
                        int64_t num_outputs);
int64_t tgc_model_num_gradients(const tgc_model *m);
/* The parameter fqn, or input.N for user input N. */
const char *tgc_model_gradient_name(const tgc_model *m, int64_t i);
/* One gradient per user output (NULL allowed where the output has none);
   consumes the saved values and returns num_gradients new tensors. */
int tgc_model_backward(tgc_model *m, DLTensor *const *grad_outputs,
                       int64_t num_grad_outputs, DLManagedTensor **grads,
                       int64_t num_grads);
/* 1 if output i takes a gradient in backward, 0 if not, -1 out of range. */
int tgc_model_output_has_gradient(const tgc_model *m, int64_t i);
int64_t tgc_model_saved_count(const tgc_model *m);
/* Bytes kept by the last run_train. */
int64_t tgc_model_saved_bytes(const tgc_model *m);

#endif /* TGC_MODEL_API_V2 */
)";

/// Text safe inside a C block comment.
static std::string commentSafe(const std::string &text) {
  std::string safe;
  for (size_t i = 0; i < text.size(); ++i) {
    safe += text[i];
    if (text[i] == '*' && i + 1 < text.size() && text[i + 1] == '/')
      safe += ' ';
  }
  return safe;
}

static std::string describeTensor(const std::string &name, DType dtype,
                                  const std::vector<SizeExpr> &sizes,
                                  const std::vector<SymbolInfo> &symbols) {
  std::string text = commentSafe(name) + ": " + dtypeName(dtype) + "[";
  for (size_t d = 0; d < sizes.size(); ++d)
    text += (d ? ", " : "") + commentSafe(printSizeExpr(sizes[d], symbols));
  return text + "]";
}

/// The comment describing `signature`'s model and its `<name>_create` prototype.
static void describeModel(std::ostringstream &out, const ModelSignature &signature) {
  out << "/* Creates an instance of '" << signature.name
      << "' (returns 0; on failure *out is NULL and\n"
      << "   tgc_model_last_error(NULL) says why).\n";
  bool anyInput = false, anyMutated = false;
  for (size_t i = 0; i < signature.args.size(); ++i) {
    const ArgInfo &arg = signature.args[i];
    if (arg.kind != ArgKind::UserInput)
      continue;
    out << (anyInput ? "" : "   Inputs, in order:\n") << "     "
        << describeTensor(arg.name, arg.dtype, arg.sizes, signature.symbols)
        << (isMutated(signature, i) ? "  (updated in place)" : "") << "\n";
    anyInput = true;
    anyMutated |= isMutated(signature, i);
  }
  bool anyOutput = false;
  int anyGradient = 0;
  for (const ResultInfo &result : signature.results) {
    if (result.kind != ResultKind::UserOutput)
      continue;
    out << (anyOutput ? "" : "   Outputs, in order:\n") << "     "
        << describeTensor(result.name, result.dtype, result.sizes,
                          signature.symbols)
        << (signature.slots.count(uint32_t(&result - &signature.results[0]))
                ? "  (Python state " +
                      commentSafe(signature.slots.at(
                          uint32_t(&result - &signature.results[0]))) +
                      ")"
                : "")
        << "\n";
    anyOutput = true;
  }
  for (const SymbolInfo &symbol : signature.symbols) {
    out << "   Symbol " << commentSafe(symbol.name) << " in [" << symbol.min
        << ", ";
    if (symbol.max == std::numeric_limits<int64_t>::max())
      out << "inf";
    else
      out << symbol.max;
    out << "]\n";
  }
  if (signature.backward)
    for (const ResultInfo &result : signature.backward->results)
      if (result.kind == ResultKind::Gradient)
        out << (anyGradient++
                    ? ""
                    : "   Gradients (tgc_model_backward), in order:\n")
            << "     "
            << describeTensor(result.name, result.dtype, result.sizes,
                              signature.symbols)
            << "\n";
  if (anyMutated)
    out << "   Inputs marked 'updated in place' receive new values on each "
           "run.\n";
  out << " */\n"
      << "int " << signature.name << "_create(tgc_model **out);\n\n";
}

/// model.h's opening: the include guard of `name`, the includes and the C API.
static std::string headerGuard(const std::string &name) {
  std::string guard = "TGC_MODEL_" + name + "_H";
  std::transform(guard.begin(), guard.end(), guard.begin(),
                 [](unsigned char c) { return std::toupper(c); });
  return guard;
}

static void openHeader(std::ostringstream &out, const std::string &name,
                       const std::string &guard) {
  out << "/* " << name << ".h - C API of the tgc-compiled model '" << name
      << "'. Generated by tgc; do not edit. */\n"
      << "#ifndef " << guard << "\n#define " << guard << "\n\n"
      << "#include <dlpack/dlpack.h>\n#include <stdint.h>\n\n"
      << "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n"
      << kModelApi << "\n";
}

static void closeHeader(std::ostringstream &out, const std::string &guard) {
  out << "#ifdef __cplusplus\n} /* extern \"C\" */\n#endif\n\n"
      << "#endif /* " << guard << " */\n";
}

std::string tgc::writeModelHeader(const ModelSignature &signature) {
  std::string guard = headerGuard(signature.name);
  std::ostringstream out;
  openHeader(out, signature.name, guard);
  describeModel(out, signature);
  closeHeader(out, guard);
  return out.str();
}

std::string tgc::writeProgramHeader(const std::string &name,
                                    const std::vector<ModelSignature> &graphs) {
  std::string guard = headerGuard(name);
  std::ostringstream out;
  openHeader(out, name, guard);
  out << "/* '" << name << "' has graph breaks: it is " << graphs.size()
      << " models, run in the order\n   " << name
      << ".json's \"program\" says (docs/graph-breaks.md). */\n\n";
  for (const ModelSignature &graph : graphs)
    describeModel(out, graph);
  closeHeader(out, guard);
  return out.str();
}

std::string tgc::writeProgramSignatureJson(const std::string &name,
                                           const std::string &programJson,
                                           const std::vector<ModelSignature> &graphs) {
  OrderedJson json;
  json["name"] = name;
  json["program"] = OrderedJson::parse(programJson);
  OrderedJson list = OrderedJson::array();
  for (const ModelSignature &graph : graphs)
    list.push_back(OrderedJson::parse(writeSignatureJson(graph)));
  json["graphs"] = list;
  return json.dump(2) + "\n";
}
