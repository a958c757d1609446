// Operators in the bytecode interpreter: truth, identity and equality, comparisons of
// symbolic sizes over their ranges, and the unary, binary and comparison operators.
#include "Interpreter.h"

#include "TorchFunctions.h"

#include "llvm/ADT/StringSwitch.h"
#include <cmath>

using namespace mlir;
using namespace tgc;
using namespace tgc::frontend;
using namespace tgc::py;

using K = Variable::Kind;
using H = HeapObject::Kind;

bool Interpreter::identical(const Var &lhs, const Var &rhs) const {
  if (lhs == rhs)
    return true;
  if (lhs->kind != rhs->kind)
    return false;
  switch (lhs->kind) {
  case K::None:
  case K::Null:
  case K::Ellipsis:
    return true;
  case K::Bool:
    return lhs->boolValue == rhs->boolValue;
  case K::Int:
    return lhs->size == rhs->size;
  case K::DType:
    // A tensor's `.dtype` has its element type only; a dtype object read from the
    // trace has its name too (and no element type when tgc has none for it).
    if (lhs->type && rhs->type)
      return lhs->type == rhs->type;
    return lhs->name == rhs->name && !lhs->name.empty();
  case K::Str:
  case K::External:
  case K::Device:
    return lhs->name == rhs->name;
  case K::Object:
  case K::Tensor:
    return lhs->object == rhs->object;
  default:
    return false;
  }
}

/// Bounds of a size expression over the symbols' ranges; nullopt for unbounded.
struct SizeInterval {
  std::optional<int64_t> lo, hi;
};

static SizeInterval boundsOf(AffineExpr e, llvm::ArrayRef<SymbolRange> ranges) {
  if (auto c = llvm::dyn_cast<AffineConstantExpr>(e))
    return {c.getValue(), c.getValue()};
  if (auto sym = llvm::dyn_cast<AffineSymbolExpr>(e)) {
    if (sym.getPosition() >= ranges.size())
      return {};
    return {ranges[sym.getPosition()].min, ranges[sym.getPosition()].max};
  }
  auto binary = llvm::cast<AffineBinaryOpExpr>(e);
  SizeInterval a = boundsOf(binary.getLHS(), ranges), b = boundsOf(binary.getRHS(), ranges);
  auto both = [](std::optional<int64_t> x, std::optional<int64_t> y, auto fn) {
    return x && y ? std::optional<int64_t>(fn(*x, *y)) : std::nullopt;
  };
  std::optional<int64_t> c = b.lo && b.lo == b.hi ? b.lo : std::nullopt;
  switch (binary.getKind()) {
  case AffineExprKind::Add:
    return {both(a.lo, b.lo, std::plus<int64_t>()), both(a.hi, b.hi, std::plus<int64_t>())};
  case AffineExprKind::Mul:
    if (c && *c >= 0)
      return {both(a.lo, c, std::multiplies<int64_t>()), both(a.hi, c, std::multiplies<int64_t>())};
    if (c)
      return {both(a.hi, c, std::multiplies<int64_t>()), both(a.lo, c, std::multiplies<int64_t>())};
    if (a.lo && *a.lo >= 0 && b.lo && *b.lo >= 0)
      return {*a.lo * *b.lo, both(a.hi, b.hi, std::multiplies<int64_t>())};
    return {};
  case AffineExprKind::FloorDiv:
  case AffineExprKind::CeilDiv: {
    if (!c || *c <= 0)
      return {};
    bool floor = binary.getKind() == AffineExprKind::FloorDiv;
    auto div = [&](std::optional<int64_t> x) -> std::optional<int64_t> {
      if (!x)
        return std::nullopt;
      return floor ? llvm::divideFloorSigned(*x, *c) : llvm::divideCeilSigned(*x, *c);
    };
    return {div(a.lo), div(a.hi)};
  }
  case AffineExprKind::Mod:
    if (c && *c > 0) {
      if (a.lo && *a.lo >= 0 && a.hi && *a.hi < *c)
        return a;
      return {0, *c - 1};
    }
    return {};
  default:
    return {};
  }
}

/// Decides `lhs op rhs` for sizes over the symbols' ranges (what the trace recorded for
/// `--dynamic` dimensions): true or false when it holds, or fails, for every size in
/// the range; otherwise the program would need a guard, which is an error.
FailureOr<bool> Interpreter::compareSizes(llvm::StringRef op, AffineExpr lhs, AffineExpr rhs,
                                          Location loc) {
  SizeInterval d = boundsOf(lhs - rhs, symbolRanges);
  auto below = [](std::optional<int64_t> x, int64_t v) { return x && *x < v; };
  auto above = [](std::optional<int64_t> x, int64_t v) { return x && *x > v; };
  std::optional<bool> result;
  if (lhs == rhs)
    result = op == "==" || op == "<=" || op == ">=";
  else if (op == "==" || op == "!=") {
    if (below(d.hi, 0) || above(d.lo, 0))
      result = op == "!=";
  } else if (op == "<" || op == ">=") {
    if (below(d.hi, 0))
      result = op == "<";
    else if (d.lo && *d.lo >= 0)
      result = op == ">=";
  } else if (op == "<=" || op == ">") {
    if (d.hi && *d.hi <= 0)
      result = op == "<=";
    else if (above(d.lo, 0))
      result = op == ">";
  }
  if (result)
    return *result;
  return error(loc) << "the comparison " << printSize(lhs) << " " << op << " " << printSize(rhs)
                    << " depends on the value of a dynamic size (it differs within the "
                       "--dynamic range); tgc does not guard on sizes yet";
}

/// A user class's binary special method: `lhs.method(rhs)`, else `rhs.reflected(lhs)`,
/// skipping a side whose class does not define it or whose call returns NotImplemented;
/// null when neither answers.
static FailureOr<Var> reflectedSpecialMethod(Interpreter &in, Var lhs, Var rhs,
                                             llvm::StringRef method, llvm::StringRef reflected,
                                             Location loc) {
  for (auto [self, other, name] : {std::tuple(lhs, rhs, method), std::tuple(rhs, lhs, reflected)}) {
    if (in.getHeap().kindOf(self) != H::Instance)
      continue;
    FailureOr<Var> bound = in.userSpecialMethod(self, name, loc);
    if (failed(bound))
      return failure();
    if (!*bound)
      continue;
    FailureOr<Var> result = in.call(*bound, CallArguments{{other}, {}}, loc);
    if (failed(result) ||
        !((*result)->is(K::External) && (*result)->name == "builtins.NotImplemented"))
      return result;
  }
  return Var();
}

FailureOr<bool> Interpreter::equals(Var lhs, Var rhs, Location loc) {
  if (identical(lhs, rhs))
    return true;
  // A class's own __eq__ (list.index, `in` a list, set membership).
  FailureOr<Var> equal = reflectedSpecialMethod(*this, lhs, rhs, "__eq__", "__eq__", loc);
  if (failed(equal))
    return failure();
  if (*equal)
    return truth(*equal, loc);
  std::optional<double> a = lhs->getNumber(), b = rhs->getNumber();
  if (a && b)
    return *a == *b;
  if (lhs->is(K::Int) && rhs->is(K::Int))
    return compareSizes("==", lhs->size, rhs->size, loc);
  if (lhs->is(K::Tuple) && rhs->is(K::Tuple)) {
    if (lhs->items.size() != rhs->items.size())
      return false;
    for (auto [x, y] : llvm::zip(lhs->items, rhs->items)) {
      FailureOr<bool> same = equals(x, y, loc);
      if (failed(same) || !*same)
        return same;
    }
    return true;
  }
  return false;
}

FailureOr<bool> Interpreter::truth(Var value, Location loc) {
  switch (value->kind) {
  case K::None:
    return false;
  case K::Bool:
    return value->boolValue;
  case K::Int: {
    std::optional<int64_t> i = value->getConstantInt();
    if (!i)
      return compareSizes("!=", value->size, getAffineConstantExpr(0, ctx), loc);
    return *i != 0;
  }
  case K::Float:
    return value->floatValue != 0;
  case K::Str:
    return !value->name.empty();
  case K::Tuple:
    return !value->items.empty();
  case K::Tensor:
    if (canBreakGraph())
      return breakOnTensorTruth(value, loc);
    return error(loc) << "graph break: the truth of a tensor depends on its values";
  case K::Object: {
    const HeapObject &h = heap.get(value->object);
    if (h.kind == H::List || h.kind == H::Set || h.kind == H::Dict) {
      size_t n = h.kind == H::Dict ? h.entries.size() : h.items.size();
      noteRead(GuardRead::Step::Length, value->object, "", nullptr, makeInt(n, ctx), loc);
      return n != 0;
    }
    if (h.kind == H::Instance) {
      FailureOr<Var> len = lookupAttribute(value, "__len__", loc);
      if (succeeded(len) && *len) {
        FailureOr<Var> n = call(*len, {}, loc);
        if (failed(n))
          return failure();
        return truth(*n, loc);
      }
    }
    return true;
  }
  default:
    return true;
  }
}

//===----------------------------------------------------------------------===//
// Operators
//===----------------------------------------------------------------------===//

/// The `operator` module function of BINARY_OP's argument, for tensors.
static const char *const kOperatorNames[] = {
    "add",    "and_", "floordiv", "lshift", "matmul",  "mul",  "mod",       "or_",     "pow",
    "rshift", "sub",  "truediv",  "xor",    "iadd",    "iand", "ifloordiv", "ilshift", "imatmul",
    "imul",   "imod", "ior",      "ipow",   "irshift", "isub", "itruediv",  "ixor"};

/// BINARY_OP's argument as Python spells it (NB_* in pycore_opcode_utils.h).
static llvm::StringRef binaryOpSymbol(unsigned op) {
  static const char *const kSymbols[] = {
      "+",  "&",  "//",  "<<",  "@",  "*",  "%",  "|",  "**",  ">>",  "-",  "/",  "^",
      "+=", "&=", "//=", "<<=", "@=", "*=", "%=", "|=", "**=", ">>=", "-=", "/=", "^="};
  return op < 26 ? kSymbols[op] : "?";
}

FailureOr<Var> Interpreter::binaryOp(unsigned op, Var lhs, Var rhs, Location loc) {
  if (op >= 26)
    return error(loc) << "unknown binary operator " << op;
  if (lhs->is(K::Tensor) || rhs->is(K::Tensor))
    return tensorBinaryOp(op, lhs, rhs, loc);
  FailureOr<Var> dunder = dunderBinaryOp(op, lhs, rhs, loc);
  if (failed(dunder) || *dunder)
    return dunder;
  FailureOr<Var> sequence = sequenceBinaryOp(op, lhs, rhs, loc);
  if (failed(sequence) || *sequence)
    return sequence;
  unsigned base = op % 13;
  // `/`, `//` and `%` by a zero number raise ZeroDivisionError, which programs catch.
  if ((base == 11 || base == 2 || base == 6) && rhs->getNumber() == 0.0 &&
      (lhs->is(K::Int) || lhs->is(K::Bool) || lhs->is(K::Float))) {
    bool ints = !lhs->is(K::Float) && !rhs->is(K::Float);
    std::string message = base == 11  ? "division by zero"
                          : ints      ? "integer division or modulo by zero"
                          : base == 2 ? "float floor division by zero"
                                      : "float modulo";
    return raiseBuiltinException("builtins.ZeroDivisionError", {makeStr(message)}, loc,
                                 message + " (ZeroDivisionError)");
  }
  // Ints (possibly symbolic sizes) stay ints as affine expressions.
  if ((lhs->is(K::Int) || lhs->is(K::Bool)) && (rhs->is(K::Int) || rhs->is(K::Bool)))
    return intBinaryOp(op, lhs, rhs, loc);
  std::optional<double> a = lhs->getNumber(), b = rhs->getNumber();
  if (a && b) {
    switch (base) {
    case 0:
      return makeFloat(*a + *b);
    case 10:
      return makeFloat(*a - *b);
    case 5:
      return makeFloat(*a * *b);
    case 11:
      return makeFloat(*a / *b);
    case 2:
      return makeFloat(std::floor(*a / *b));
    case 6:
      return makeFloat(*a - std::floor(*a / *b) * *b);
    case 8:
      return makeFloat(std::pow(*a, *b));
    default:
      break;
    }
  }
  return error(loc) << "the operator " << binaryOpSymbol(op) << " on " << describe(heap, lhs)
                    << " and " << describe(heap, rhs) << " is not supported";
}

/// An operator with a tensor operand: the `operator` module function as a torch call.
FailureOr<Var> Interpreter::tensorBinaryOp(unsigned op, Var lhs, Var rhs, Location loc) {
  // Python numbers are immutable: `s += 1` on a number tensor rebinds.
  if (lhs->number != Variable::Number::None && op >= 13)
    op -= 13;
  std::string name = std::string("operator.") + kOperatorNames[op];
  CallArguments arguments{{lhs, rhs}, {}};
  if (!lhs->is(K::Tensor)) {
    // A reflected operator: `2 - x` is x.__rsub__(2).
    name = std::string("operator.r") + kOperatorNames[op % 13];
    arguments.positional = {rhs, lhs};
  }
  if (!isKnownTorchFunction(name))
    return error(loc) << "the tensor operator " << name << " is not supported";
  FailureOr<Var> result = callTorchFunction(name, arguments, loc);
  if (failed(result))
    return failure();
  return numberResult(*result, lhs, rhs, kOperatorNames[op % 13], loc);
}

FailureOr<Var> Interpreter::dunderBinaryOp(unsigned op, Var lhs, Var rhs, Location loc) {
  // User classes define operators with dunder methods: x.__iadd__(y), then
  // x.__add__(y), then y.__radd__(x).
  static const char *const kDunders[] = {"add", "and",     "floordiv", "lshift", "matmul",
                                         "mul", "mod",     "or",       "pow",    "rshift",
                                         "sub", "truediv", "xor"};
  if (heap.kindOf(lhs) != H::Instance && heap.kindOf(rhs) != H::Instance)
    return Var();
  std::string dunder = kDunders[op % 13];
  auto tryMethod = [&](Var self, Var other, const std::string &method) -> FailureOr<Var> {
    if (heap.kindOf(self) != H::Instance)
      return Var();
    FailureOr<Var> found = lookupInClass(heap.get(self->object).classObject, method);
    if (failed(found) || !*found)
      return found;
    FailureOr<Var> bound = bindDescriptor(*found, self, heap.get(self->object).classObject, loc);
    if (failed(bound))
      return failure();
    return call(*bound, CallArguments{{other}, {}}, loc);
  };
  for (auto [self, other, method] :
       {std::make_tuple(lhs, rhs, op >= 13 ? "__i" + dunder + "__" : std::string()),
        std::make_tuple(lhs, rhs, "__" + dunder + "__"),
        std::make_tuple(rhs, lhs, "__r" + dunder + "__")}) {
    if (method.empty())
      continue;
    FailureOr<Var> result = tryMethod(self, other, method);
    if (failed(result))
      return failure();
    if (*result && !(*result)->is(K::External))
      return *result;
  }
  return Var();
}

/// `+=` on a list (which extends it), and `+` and `*` on strings, tuples and lists; null
/// for other operands.
FailureOr<Var> Interpreter::sequenceBinaryOp(unsigned op, Var lhs, Var rhs, Location loc) {
  unsigned base = op % 13;
  bool inPlace = op >= 13;
  // In-place operators on lists extend them; everything else rebinds.
  if (inPlace && base == 0 && heap.kindOf(lhs) == H::List) {
    FailureOr<std::vector<Var>> items = unpack(rhs, loc);
    if (failed(items))
      return failure();
    llvm::append_range(
        mutateObject(lhs->object, SideEffect::Kind::SetContents, "", nullptr, loc).items, *items);
    return lhs;
  }
  // Set algebra: | & - ^ are set's union, intersection, difference and
  // symmetric_difference; their in-place forms update the left set.
  if (heap.kindOf(lhs) == H::Set && heap.kindOf(rhs) == H::Set &&
      (base == 7 || base == 1 || base == 10 || base == 12)) {
    llvm::StringRef method = base == 7    ? "union"
                             : base == 1  ? "intersection"
                             : base == 10 ? "difference"
                                          : "symmetric_difference";
    std::string name = ("builtins.set." + method).str();
    if (inPlace)
      name = method == "union" ? "builtins.set.update" : name + "_update";
    FailureOr<Var> result = callExternal(*makeExternal(name), CallArguments{{lhs, rhs}, {}}, loc);
    if (failed(result))
      return failure();
    return inPlace ? lhs : *result;
  }
  // Dict merge (3.9): `a | b` is a new dict of a's items updated by b's, `a |= b`
  // updates a.
  if (base == 7 && heap.kindOf(lhs) == H::Dict && heap.kindOf(rhs) == H::Dict) {
    Var target = lhs;
    if (!inPlace) {
      FailureOr<Var> copy =
          callExternal(*makeExternal("builtins.dict"), CallArguments{{lhs}, {}}, loc);
      if (failed(copy))
        return failure();
      target = *copy;
    }
    FailureOr<Var> updated =
        callExternal(*makeExternal("builtins.dict.update"), CallArguments{{target, rhs}, {}}, loc);
    if (failed(updated))
      return failure();
    return target;
  }
  if (base == 0 && lhs->is(K::Str) && rhs->is(K::Str))
    return makeStr(lhs->name + rhs->name);
  if (base == 6 && lhs->is(K::Str))
    return percentFormat(lhs->name, rhs, loc);
  if (base == 0 && (lhs->is(K::Tuple) || heap.kindOf(lhs) == H::List)) {
    FailureOr<std::vector<Var>> a = unpack(lhs, loc), b = unpack(rhs, loc);
    if (failed(a) || failed(b))
      return failure();
    llvm::append_range(*a, *b);
    if (lhs->is(K::Tuple))
      return makeTuple(std::move(*a));
    return makeList(std::move(*a));
  }
  if (base == 5 && (lhs->is(K::Tuple) || heap.kindOf(lhs) == H::List) && rhs->is(K::Int)) {
    FailureOr<std::vector<Var>> a = unpack(lhs, loc);
    FailureOr<int64_t> n = constantIntArgument(rhs, "the repeat count", loc);
    if (failed(a) || failed(n))
      return failure();
    std::vector<Var> items;
    for (int64_t i = 0; i < *n; ++i)
      llvm::append_range(items, *a);
    if (lhs->is(K::Tuple))
      return makeTuple(std::move(items));
    return makeList(std::move(items));
  }
  return Var();
}

/// Ints and bools: symbolic sizes stay affine expressions where the operator keeps them
/// affine; other operators need constants.
FailureOr<Var> Interpreter::intBinaryOp(unsigned op, Var lhs, Var rhs, Location loc) {
  unsigned base = op % 13;
  AffineExpr a = lhs->is(K::Bool) ? getAffineConstantExpr(lhs->boolValue, ctx) : lhs->size;
  AffineExpr b = rhs->is(K::Bool) ? getAffineConstantExpr(rhs->boolValue, ctx) : rhs->size;
  std::optional<int64_t> cb = rhs->getConstantInt(), ca = lhs->getConstantInt();
  switch (base) {
  case 0:
    return makeInt(a + b);
  case 10:
    return makeInt(a - b);
  case 5:
    return makeInt(a * b);
  case 2:
    if (cb && *cb > 0)
      return makeInt(a.floorDiv(*cb));
    if (ca && cb && *cb != 0)
      return makeInt(llvm::divideFloorSigned(*ca, *cb), ctx);
    break;
  case 6:
    if (cb && *cb > 0)
      return makeInt(a % *cb);
    break;
  case 8:
    if (ca && cb && *cb >= 0) {
      int64_t result = 1;
      for (int64_t i = 0; i < *cb; ++i)
        result *= *ca;
      return makeInt(result, ctx);
    }
    break;
  case 11:
    if (ca && cb && *cb != 0)
      return makeFloat(static_cast<double>(*ca) / static_cast<double>(*cb));
    break;
  case 1:
  case 7:
  case 12:
  case 3:
  case 9:
    if (ca && cb) {
      int64_t x = *ca, y = *cb;
      int64_t r = base == 1    ? (x & y)
                  : base == 7  ? (x | y)
                  : base == 12 ? (x ^ y)
                  : base == 3  ? (x << y)
                               : (x >> y);
      if (lhs->is(K::Bool) && rhs->is(K::Bool) && (base == 1 || base == 7 || base == 12))
        return makeBool(r != 0);
      return makeInt(r, ctx);
    }
    break;
  default:
    break;
  }
  return error(loc) << "the operator " << binaryOpSymbol(op) << " on sizes " << printSize(a)
                    << " and " << printSize(b) << " is not supported";
}

FailureOr<Var> Interpreter::compareOp(llvm::StringRef op, Var lhs, Var rhs, Location loc) {
  if (lhs->is(K::Tensor) || rhs->is(K::Tensor)) {
    static const std::pair<llvm::StringLiteral, llvm::StringLiteral> kNames[] = {
        {"<", "lt"}, {"<=", "le"}, {"==", "eq"}, {"!=", "ne"}, {">", "gt"}, {">=", "ge"}};
    static const std::pair<llvm::StringLiteral, llvm::StringLiteral> kSwapped[] = {
        {"<", ">"}, {"<=", ">="}, {"==", "=="}, {"!=", "!="}, {">", "<"}, {">=", "<="}};
    if (!lhs->is(K::Tensor)) {
      for (auto [from, to] : kSwapped)
        if (from == op) {
          op = to;
          break;
        }
      std::swap(lhs, rhs);
    }
    for (auto [symbol, fn] : kNames)
      if (symbol == op) {
        CallArguments arguments{{lhs, rhs}, {}};
        std::string name = ("operator." + fn).str();
        if (!isKnownTorchFunction(name))
          return error(loc) << "tensor comparison " << op << " is not supported";
        FailureOr<Var> result = callTorchFunction(name, arguments, loc);
        if (failed(result))
          return failure();
        return numberResult(*result, lhs, rhs, "compare", loc);
      }
  }
  // Rich comparisons of a class that defines them: lhs's method, then rhs's reflected
  // one. `!=` without an answer negates `==`; `==` without one (and `!=` then) is
  // identity, which equals() gives.
  if (heap.kindOf(lhs) == H::Instance || heap.kindOf(rhs) == H::Instance) {
    static const std::tuple<llvm::StringLiteral, llvm::StringLiteral, llvm::StringLiteral>
        kDunders[] = {{"<", "__lt__", "__gt__"},  {"<=", "__le__", "__ge__"},
                      {"==", "__eq__", "__eq__"}, {"!=", "__ne__", "__ne__"},
                      {">", "__gt__", "__lt__"},  {">=", "__ge__", "__le__"}};
    for (auto [symbol, method, reflected] : kDunders) {
      if (symbol != op)
        continue;
      FailureOr<Var> result = reflectedSpecialMethod(*this, lhs, rhs, method, reflected, loc);
      if (failed(result) || *result)
        return result;
      if (op == "!=") {
        FailureOr<bool> same = equals(lhs, rhs, loc);
        if (failed(same))
          return failure();
        return makeBool(!*same);
      }
      if (op == "==")
        return makeBool(identical(lhs, rhs));
    }
  }
  if (op == "==" || op == "!=") {
    FailureOr<bool> same = equals(lhs, rhs, loc);
    if (failed(same))
      return failure();
    return makeBool(*same == (op == "=="));
  }
  if (lhs->is(K::Int) && rhs->is(K::Int) && (!lhs->getConstantInt() || !rhs->getConstantInt())) {
    FailureOr<bool> holds = compareSizes(op, lhs->size, rhs->size, loc);
    if (failed(holds))
      return failure();
    return makeBool(*holds);
  }
  std::optional<double> a = lhs->getNumber(), b = rhs->getNumber();
  if (a && b)
    return makeBool(llvm::StringSwitch<bool>(op)
                        .Case("<", *a < *b)
                        .Case("<=", *a <= *b)
                        .Case(">", *a > *b)
                        .Case(">=", *a >= *b)
                        .Default(false));
  if (lhs->is(K::Str) && rhs->is(K::Str))
    return makeBool(llvm::StringSwitch<bool>(op)
                        .Case("<", lhs->name < rhs->name)
                        .Case("<=", lhs->name <= rhs->name)
                        .Case(">", lhs->name > rhs->name)
                        .Case(">=", lhs->name >= rhs->name)
                        .Default(false));
  // Tuples with tuples, lists with lists: lexicographic, as Python orders sequences (the
  // first items that differ decide, else the lengths).
  auto sequence = [&](const Var &v) -> std::optional<std::vector<Var>> {
    if (v->is(K::Tuple))
      return v->items;
    if (heap.kindOf(v) == H::List)
      return heap.get(v->object).items;
    return std::nullopt;
  };
  std::optional<std::vector<Var>> left = sequence(lhs), right = sequence(rhs);
  if (left && right && lhs->is(K::Tuple) == rhs->is(K::Tuple)) {
    for (size_t i = 0; i < std::min(left->size(), right->size()); ++i) {
      FailureOr<bool> same = equals((*left)[i], (*right)[i], loc);
      if (failed(same))
        return failure();
      if (!*same)
        return compareOp(op, (*left)[i], (*right)[i], loc);
    }
    return compareOp(op, makeInt(left->size(), ctx), makeInt(right->size(), ctx), loc);
  }
  return error(loc) << "comparison " << op << " of " << describe(heap, lhs) << " and "
                    << describe(heap, rhs) << " is not supported";
}

FailureOr<Var> Interpreter::unaryOp(llvm::StringRef op, Var operand, Location loc) {
  if (operand->is(K::Tensor)) {
    std::string fn = op == "-" ? "operator.neg" : op == "~" ? "operator.invert" : "operator.pos";
    if (op == "+")
      return operand;
    CallArguments arguments{{operand}, {}};
    if (!isKnownTorchFunction(fn))
      return error(loc) << "the tensor operator " << fn << " is not supported";
    FailureOr<Var> result = callTorchFunction(fn, arguments, loc);
    if (failed(result))
      return failure();
    return numberResult(*result, operand, nullptr, fn, loc);
  }
  // A class's own __neg__, __pos__ and __invert__.
  if (heap.kindOf(operand) == H::Instance) {
    FailureOr<Var> method = userSpecialMethod(operand,
                                              op == "-"   ? "__neg__"
                                              : op == "~" ? "__invert__"
                                                          : "__pos__",
                                              loc);
    if (failed(method))
      return failure();
    if (*method)
      return call(*method, {}, loc);
  }
  if (op == "+")
    return operand;
  if (operand->is(K::Int) || operand->is(K::Bool)) {
    AffineExpr size =
        operand->is(K::Bool) ? getAffineConstantExpr(operand->boolValue, ctx) : operand->size;
    if (op == "-")
      return makeInt(-size);
    if (std::optional<int64_t> i = operand->getConstantInt())
      return makeInt(~*i, ctx);
  }
  if (operand->is(K::Float) && op == "-")
    return makeFloat(-operand->floatValue);
  return error(loc) << "unary " << op << " of " << describe(heap, operand) << " is not supported";
}
