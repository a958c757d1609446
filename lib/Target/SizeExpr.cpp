//===- SizeExpr.cpp - Size expressions: building, evaluating, printing ----===//

#include "SignatureInternal.h"

#include <algorithm>
#include <limits>
#include <sstream>
#include <stdexcept>

using namespace tgc;
using namespace tgc::detail;

SizeExpr SizeExpr::constant(int64_t value) { return fromOps({{ExprOpcode::Const, value}}); }

SizeExpr SizeExpr::symbol(uint32_t index) { return fromOps({{ExprOpcode::Sym, index}}); }

SizeExpr SizeExpr::fromOps(std::vector<ExprOp> ops) {
  SizeExpr expr;
  expr.program = std::move(ops);
  return expr;
}

static SizeExpr binary(ExprOpcode opcode, const SizeExpr &lhs, const SizeExpr &rhs) {
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
SizeExpr tgc::operator-(const SizeExpr &operand) { return SizeExpr::neg(operand); }

bool SizeExpr::isConstant() const {
  return std::none_of(program.begin(), program.end(),
                      [](const ExprOp &op) { return op.opcode == ExprOpcode::Sym; });
}

int64_t SizeExpr::constantValue() const { return evaluate({}); }

bool detail::isBinary(ExprOpcode opcode) {
  return opcode >= ExprOpcode::Add && opcode <= ExprOpcode::Mod;
}

std::optional<std::string> detail::checkProgram(const std::vector<ExprOp> &ops, size_t numSymbols) {
  size_t depth = 0;
  for (size_t i = 0; i < ops.size(); ++i) {
    const ExprOp &op = ops[i];
    if (op.opcode > ExprOpcode::Neg)
      return "unknown opcode " + std::to_string(unsigned(op.opcode));
    if (op.opcode == ExprOpcode::Sym && (op.operand < 0 || uint64_t(op.operand) >= numSymbols))
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

[[noreturn]] static void throwOverflow() { throw std::domain_error("size expression overflows"); }

int64_t detail::applyBinary(ExprOpcode opcode, int64_t a, int64_t b) {
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
      out << (op.opcode == ExprOpcode::Mul ? "*" : op.opcode == ExprOpcode::FloorDiv ? "//" : "%");
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

std::string tgc::printSizeExpr(const SizeExpr &expr, const std::vector<SymbolInfo> &symbols) {
  if (auto problem = checkProgram(expr.ops(), symbols.size()))
    return "<malformed: " + *problem + ">";
  return ExprPrinter(expr, symbols).print();
}
