//===- SignatureVerifier.cpp - What the runtime checks, at compile time ---===//

#include "SignatureInternal.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <stdexcept>

using namespace tgc;
using namespace tgc::detail;

namespace {
constexpr uint32_t kMaxRank = 64;
} // namespace

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
  auto scale = [](std::optional<Affine> a, int64_t factor) -> std::optional<Affine> {
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
      if (__builtin_add_overflow(a->coefficient, b->coefficient, &r.coefficient) ||
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
  return std::any_of(expr.ops().begin(), expr.ops().end(), [&](const ExprOp &op) {
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

bool isStorableDType(DType dtype) { return dtype.bits != 0 && dtype.bits % 8 == 0; }

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
  bool fail(const std::string &what, const std::string &name, const std::string &why) {
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

  bool verifyTensor(const std::string &what, const std::string &name, DType dtype,
                    const std::vector<SizeExpr> &sizes) {
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
        return fail(argKindName(arg.kind), arg.name, "its shape depends on a symbol");
      int64_t value;
      try {
        value = size.constantValue();
      } catch (const std::domain_error &error) {
        return fail(argKindName(arg.kind), arg.name, error.what());
      }
      if (value < 0 || __builtin_mul_overflow(bytes, uint64_t(value), &bytes))
        return fail(argKindName(arg.kind), arg.name, "its shape is not a valid size");
    }
    if (bytes != arg.dataSize)
      return fail(argKindName(arg.kind), arg.name,
                  "dataSize " + std::to_string(arg.dataSize) +
                      " does not match its dtype and shape (" + std::to_string(bytes) + " bytes)");
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

  /// A layout is for a user output: a stride per dimension, none negative.
  bool verifyStrides(const ResultInfo &result) {
    const char *what = resultKindName(result.kind);
    if (result.strides.empty())
      return true;
    if (result.kind != ResultKind::UserOutput)
      return fail(what, result.name, "only user outputs have a layout");
    if (result.strides.size() != result.sizes.size())
      return fail(what, result.name, "its layout has a stride count other than its rank");
    if (std::any_of(result.strides.begin(), result.strides.end(),
                    [](int64_t stride) { return stride < 0; }))
      return fail(what, result.name, "its layout has a negative stride");
    return true;
  }

  bool verifyTarget(const ResultInfo &result, std::set<uint32_t> &rewritten) {
    const char *what = resultKindName(result.kind);
    if (!verifyStrides(result))
      return false;
    if (result.kind == ResultKind::UserOutput)
      return true;
    if (result.target >= sig.args.size())
      return fail(what, result.name, "target argument out of range");
    const ArgInfo &target = sig.args[result.target];
    bool kindOk = result.kind == ResultKind::BufferMutation ? target.kind == ArgKind::Buffer
                  : result.kind == ResultKind::UserInputMutation
                      ? target.kind == ArgKind::UserInput
                      : target.kind == ArgKind::Parameter || target.kind == ArgKind::UserInput;
    if (!kindOk)
      return fail(what, result.name, "target argument has the wrong kind");
    if (target.dtype != result.dtype || target.sizes.size() != result.sizes.size())
      return fail(what, result.name, "dtype or rank differs from the target argument");
    if (!rewritten.insert(result.target).second)
      return fail(what, result.name, "target is rewritten twice");
    return true;
  }

  bool verifyResults() {
    std::set<uint32_t> rewritten;
    for (const ResultInfo &result : sig.results) {
      if (result.kind > ResultKind::UserInputMutation)
        return fail("result", result.name, "unknown kind for a result of the forward entry");
      if (!verifyTensor(resultKindName(result.kind), result.name, result.dtype, result.sizes) ||
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
        return fail("saved value", name, "only parameters and constants are saved by reference");
      if (arg.dtype != saved.dtype || !(arg.sizes == saved.sizes))
        return fail("saved value", name, "dtype or shape differs from the argument it refers to");
    }
    size_t numOutputs =
        std::count_if(sig.results.begin(), sig.results.end(),
                      [](const ResultInfo &r) { return r.kind == ResultKind::UserOutput; });
    for (size_t i = 0; i < bw.tangents.size(); ++i) {
      std::string name = "#" + std::to_string(i);
      if (bw.tangents[i] >= numOutputs)
        return fail("tangent", name, "user output out of range");
      if (i > 0 && bw.tangents[i] <= bw.tangents[i - 1])
        return fail("tangent", name, "user outputs are not in increasing order");
    }
    std::set<uint32_t> rewritten, differentiated;
    for (const ResultInfo &result : bw.results) {
      if (result.kind == ResultKind::UserOutput || result.kind > ResultKind::Gradient)
        return fail("result", result.name, "unknown kind for a result of the backward entry");
      if (!verifyTensor(resultKindName(result.kind), result.name, result.dtype, result.sizes) ||
          !verifyTarget(result, result.kind == ResultKind::Gradient ? differentiated : rewritten))
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
          bindable |= arg.kind == ArgKind::UserInput && affine && affine->symbol == int(s);
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
