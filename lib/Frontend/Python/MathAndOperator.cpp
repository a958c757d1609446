// The `math` and `operator` modules in the bytecode interpreter: math functions of
// constant numbers, and operator functions of values that are not tensors (on tensors,
// both are torch calls, which the handlers decline).
#include "Interpreter.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include <cmath>
#include <numeric>

using namespace mlir;
using namespace tgc;
using namespace tgc::py;

using K = Variable::Kind;

//===----------------------------------------------------------------------===//
// math
//===----------------------------------------------------------------------===//

/// The arguments as numbers; nullopt when one is not a constant number.
static std::optional<std::vector<double>> numberArguments(const ExternalCall &call) {
  std::vector<double> numbers;
  for (const Var &arg : call.args) {
    std::optional<double> number = arg->getNumber();
    if (!number)
      return std::nullopt;
    numbers.push_back(*number);
  }
  return numbers;
}

static CallResult notSupported(ExternalCall &call) {
  return call.error() << call.name << " is not supported";
}

/// A math function of one float (`math.sqrt`).
static CallHandler unaryFunction(double (*fn)(double)) {
  return [fn](Interpreter &, ExternalCall &call) -> CallResult {
    std::optional<std::vector<double>> x = numberArguments(call);
    if (!x)
      return CallResult::declined();
    if (x->size() == 2 && call.name == "math.log") // log(x, base)
      return makeFloat(std::log((*x)[0]) / std::log((*x)[1]));
    if (x->size() != 1)
      return notSupported(call);
    return makeFloat(fn((*x)[0]));
  };
}

/// math.floor and math.ceil, which give ints.
static CallResult rounding(Interpreter &in, ExternalCall &call) {
  std::optional<std::vector<double>> x = numberArguments(call);
  if (!x)
    return CallResult::declined();
  if (x->size() != 1)
    return notSupported(call);
  double rounded = call.name == "math.floor" ? std::floor((*x)[0]) : std::ceil((*x)[0]);
  return makeInt(static_cast<int64_t>(rounded), in.getContext());
}

/// math.prod: the product with Python's `*`, starting from the int 1.
static CallResult product(Interpreter &in, ExternalCall &call) {
  if (failed(call.checkArity(1, 1)))
    return failure();
  FailureOr<std::vector<Var>> items = in.unpack(call.args[0], call.loc);
  if (failed(items))
    return failure();
  Var product = makeInt(1, in.getContext());
  for (const Var &item : *items) {
    FailureOr<Var> next = in.binaryOp(5, product, item, call.loc); // operator.mul
    if (failed(next))
      return failure();
    product = *next;
  }
  return product;
}

/// math.fsum(iterable) of constant numbers: the correctly rounded sum (Shewchuk's
/// partials, as CPython computes it).
static CallResult exactSum(Interpreter &in, ExternalCall &call) {
  if (failed(call.checkArity(1, 1)))
    return failure();
  FailureOr<std::vector<Var>> items = in.unpack(call.args[0], call.loc);
  if (failed(items))
    return failure();
  std::vector<double> partials;
  for (const Var &item : *items) {
    std::optional<double> value = item->getNumber();
    if (!value || item->is(K::Tensor))
      return call.error() << "math.fsum() of " << describe(in.getHeap(), item)
                          << " is not supported (constant numbers are)";
    double x = *value;
    size_t kept = 0;
    for (double y : partials) {
      if (std::fabs(x) < std::fabs(y))
        std::swap(x, y);
      double high = x + y, low = y - (high - x);
      if (low != 0)
        partials[kept++] = low;
      x = high;
    }
    partials.resize(kept);
    partials.push_back(x);
  }
  // The partials from the top until the sum becomes inexact, then half-even rounding
  // across the next partial (math_fsum).
  size_t n = partials.size();
  double total = n ? partials[--n] : 0.0, low = 0;
  while (n > 0) {
    double x = total, y = partials[--n];
    total = x + y;
    low = y - (total - x);
    if (low != 0.0)
      break;
  }
  if (n > 0 && ((low < 0.0 && partials[n - 1] < 0.0) || (low > 0.0 && partials[n - 1] > 0.0))) {
    double y = low * 2.0, x = total + y;
    if (y == x - total)
      total = x;
  }
  return makeFloat(total);
}

/// A math function of two floats (`math.pow`, `math.atan2`, ...; `math.log(x, base)` is
/// unaryFunction's).
static CallResult binaryMath(Interpreter &, ExternalCall &call) {
  std::optional<std::vector<double>> x = numberArguments(call);
  if (!x)
    return CallResult::declined();
  if (x->size() != 2)
    return notSupported(call);
  double a = (*x)[0], b = (*x)[1];
  return makeFloat(llvm::StringSwitch<double>(call.name)
                       .Case("math.pow", std::pow(a, b))
                       .Case("math.atan2", std::atan2(a, b))
                       .Case("math.hypot", std::hypot(a, b))
                       .Case("math.copysign", std::copysign(a, b))
                       .Case("math.fmod", std::fmod(a, b))
                       .Case("math.remainder", std::remainder(a, b))
                       .Default(std::nan("")));
}

/// math.isnan / isinf / isfinite, and math.isclose(a, b, *, rel_tol=1e-09, abs_tol=0.0).
static CallResult mathPredicate(Interpreter &, ExternalCall &call) {
  std::optional<std::vector<double>> x = numberArguments(call);
  if (!x)
    return CallResult::declined();
  if (call.name == "math.isclose") {
    if (x->size() != 2 || failed(call.checkKeywords({"rel_tol", "abs_tol"})))
      return notSupported(call);
    double rel = 1e-9, abs = 0.0;
    if (Var r = call.keyword("rel_tol"); r && r->getNumber())
      rel = *r->getNumber();
    if (Var t = call.keyword("abs_tol"); t && t->getNumber())
      abs = *t->getNumber();
    double a = (*x)[0], b = (*x)[1];
    if (a == b)
      return makeBool(true);
    if (std::isinf(a) || std::isinf(b))
      return makeBool(false);
    double diff = std::fabs(b - a);
    return makeBool(diff <= std::fabs(rel * b) || diff <= std::fabs(rel * a) || diff <= abs);
  }
  if (x->size() != 1)
    return notSupported(call);
  double v = (*x)[0];
  return makeBool(call.name == "math.isnan"   ? std::isnan(v)
                  : call.name == "math.isinf" ? std::isinf(v)
                                              : std::isfinite(v));
}

/// math.trunc (an int) and math.gcd of ints.
static CallResult integerMath(Interpreter &in, ExternalCall &call) {
  std::optional<std::vector<double>> x = numberArguments(call);
  if (!x)
    return CallResult::declined();
  if (call.name == "math.trunc") {
    if (x->size() != 1)
      return notSupported(call);
    return makeInt(static_cast<int64_t>(std::trunc((*x)[0])), in.getContext());
  }
  int64_t g = 0;
  for (const Var &arg : call.args) {
    std::optional<int64_t> i = arg->getConstantInt();
    if (!i)
      return call.error() << "math.gcd() takes ints";
    g = std::gcd(g, *i < 0 ? -*i : *i);
  }
  return makeInt(g, in.getContext());
}

/// math.isqrt, factorial, comb, perm and lcm of constant ints (exact, as Python's
/// arbitrary-precision ints are; a result past int64 is an error).
static CallResult exactIntegerMath(Interpreter &in, ExternalCall &call) {
  llvm::SmallVector<int64_t> n;
  for (const Var &arg : call.args) {
    std::optional<int64_t> i = arg->getConstantInt();
    if (!i || !(arg->is(K::Int) || arg->is(K::Bool)))
      return CallResult::declined();
    n.push_back(*i);
  }
  llvm::StringRef name = call.name;
  size_t arity = name == "math.isqrt" || name == "math.factorial" ? 1
                 : name == "math.lcm"                             ? n.size()
                                                                  : 2;
  if (!call.arguments.keywords.empty() || n.size() != arity ||
      (name == "math.perm" && n.size() == 1))
    return notSupported(call);
  auto overflow = [&]() {
    return call.error() << name << "(): the result does not fit in 64 bits";
  };
  for (int64_t v : n)
    if (v < 0 && name != "math.lcm")
      return call.error() << name << "() is not defined for negative values (ValueError)";
  int64_t result = 1;
  if (name == "math.isqrt") {
    auto root = static_cast<int64_t>(std::sqrt(static_cast<double>(n[0])));
    while (root > 0 && root > n[0] / root)
      --root;
    while ((root + 1) <= n[0] / (root + 1))
      ++root;
    result = root;
  } else if (name == "math.factorial") {
    for (int64_t k = 2; k <= n[0]; ++k)
      if (__builtin_mul_overflow(result, k, &result))
        return overflow();
  } else if (name == "math.lcm") {
    for (int64_t v : n) {
      v = v < 0 ? -v : v;
      if (v == 0 || result == 0) {
        result = 0;
        continue;
      }
      if (__builtin_mul_overflow(result / std::gcd(result, v), v, &result))
        return overflow();
    }
  } else { // comb(n, k) and perm(n, k): 0 when k > n
    int64_t total = n[0], k = n[1];
    if (k > total)
      result = 0;
    else if (name == "math.perm")
      for (int64_t i = 0; i < k; ++i) {
        if (__builtin_mul_overflow(result, total - i, &result))
          return overflow();
      }
    else
      // C(total, i + 1) = C(total, i) * (total - i) / (i + 1), exact at each step.
      for (int64_t i = 0; i < std::min(k, total - k); ++i) {
        __int128 next = static_cast<__int128>(result) * (total - i) / (i + 1);
        if (next > INT64_MAX)
          return overflow();
        result = static_cast<int64_t>(next);
      }
  }
  return makeInt(result, in.getContext());
}

/// Other math functions of numbers.
static CallResult otherMathFunction(Interpreter &, ExternalCall &call) {
  if (!numberArguments(call))
    return CallResult::declined();
  return notSupported(call);
}

//===----------------------------------------------------------------------===//
// operator
//===----------------------------------------------------------------------===//

/// Whether the call has two operands, neither a tensor (on tensors the operator
/// functions are torch calls).
static bool onTwoValues(const ExternalCall &call) {
  return call.args.size() == 2 &&
         llvm::none_of(call.args, [](const Var &v) { return v->is(K::Tensor); });
}

/// `operator.add` and the others BINARY_OP computes (`op` in its numbering).
static CallHandler binaryFunction(unsigned op) {
  return [op](Interpreter &in, ExternalCall &call) -> CallResult {
    if (!onTwoValues(call))
      return CallResult::declined();
    return in.binaryOp(op, call.args[0], call.args[1], call.loc);
  };
}

/// `operator.lt` and the other comparisons (`op` as COMPARE_OP spells it).
static CallHandler compareFunction(llvm::StringLiteral op) {
  return [op](Interpreter &in, ExternalCall &call) -> CallResult {
    if (!onTwoValues(call))
      return CallResult::declined();
    return in.compareOp(op, call.args[0], call.args[1], call.loc);
  };
}

static CallResult getItem(Interpreter &in, ExternalCall &call) {
  if (call.args.size() != 2)
    return CallResult::declined();
  return in.subscript(call.args[0], call.args[1], call.loc);
}

/// itemgetter(*items), attrgetter(*names), methodcaller(name, *args, **kwargs): an object
/// of the class with what it was made from (`items`; `name`, `args`, `kwargs`), which
/// tgc-capture records the same way for one made outside the program.
static CallResult getterNew(Interpreter &in, ExternalCall &call) {
  bool caller = call.name == "operator.methodcaller";
  if (call.args.empty())
    return call.error() << call.name << " expected at least 1 argument, got 0";
  if (!caller && !call.arguments.keywords.empty())
    return call.error() << call.name << "() takes no keyword arguments";
  if (caller ? !call.args[0]->is(K::Str)
             : call.name == "operator.attrgetter" &&
                   !llvm::all_of(call.args, [](const Var &arg) { return arg->is(K::Str); }))
    return call.error() << (caller ? "method name" : "attribute name") << " must be a string";
  HeapObject getter;
  getter.kind = HeapObject::Kind::Instance;
  getter.classObject = makeExternal(call.name);
  if (caller) {
    HeapObject keywords;
    keywords.kind = HeapObject::Kind::Dict;
    for (const auto &[key, value] : call.arguments.keywords)
      keywords.entries.emplace_back(makeStr(key), value);
    getter.attributes = {
        {"name", call.args[0]},
        {"args", makeTuple(std::vector<Var>(call.args.begin() + 1, call.args.end()))},
        {"kwargs", makeObject(in.newObject(std::move(keywords)))}};
  } else {
    getter.attributes = {{"items", makeTuple(call.args)}};
  }
  return makeObject(in.newObject(std::move(getter)));
}

/// Calling an itemgetter or attrgetter: the item or attribute (a dotted name follows
/// each), or a tuple of them when it was made with several; a methodcaller calls the
/// method.
static CallResult getterCall(Interpreter &in, ExternalCall &call) {
  if (call.args.size() != 2 || in.getHeap().kindOf(call.args[0]) != HeapObject::Kind::Instance)
    return call.error() << "an operator getter takes exactly one argument";
  const HeapObject &getter = in.getHeap().get(call.args[0]->object);
  Var object = call.args[1];
  llvm::StringRef kind = llvm::StringRef(getter.classObject->name).rsplit('.').second;
  if (kind == "methodcaller") {
    Var name = getter.getAttribute("name"), args = getter.getAttribute("args"),
        kwargs = getter.getAttribute("kwargs");
    if (!name || !name->is(K::Str) || !args || !args->is(K::Tuple) ||
        in.getHeap().kindOf(kwargs) != HeapObject::Kind::Dict)
      return call.error() << "an operator.methodcaller whose attributes tgc does not know";
    FailureOr<Var> method = in.getAttribute(object, name->name, call.loc);
    if (failed(method))
      return failure();
    CallArguments arguments{args->items, {}};
    for (const auto &[key, value] : in.getHeap().get(kwargs->object).entries)
      if (key->is(K::Str))
        arguments.keywords.emplace_back(key->name, value);
    return in.call(*method, std::move(arguments), call.loc);
  }
  Var items = getter.getAttribute("items");
  if (!items || !items->is(K::Tuple) || items->items.empty())
    return call.error() << "an operator." << kind << " whose items tgc does not know";
  std::vector<Var> results;
  for (const Var &item : items->items) {
    FailureOr<Var> result = failure();
    if (kind == "itemgetter") {
      result = in.subscript(object, item, call.loc);
    } else {
      if (!item->is(K::Str))
        return call.error() << "attribute name must be a string";
      llvm::SmallVector<llvm::StringRef> path;
      llvm::StringRef(item->name).split(path, '.');
      result = object;
      for (llvm::StringRef part : path)
        if (succeeded(result))
          result = in.getAttribute(*result, part, call.loc);
    }
    if (failed(result))
      return failure();
    results.push_back(*result);
  }
  if (results.size() == 1)
    return results.front();
  return makeTuple(std::move(results));
}

void tgc::py::registerMathAndOperator(CallRegistry &registry) {
  static const std::pair<llvm::StringLiteral, double (*)(double)> kUnary[] = {
      {"math.sqrt", [](double x) { return std::sqrt(x); }},
      {"math.exp", [](double x) { return std::exp(x); }},
      {"math.log", [](double x) { return std::log(x); }},
      {"math.cos", [](double x) { return std::cos(x); }},
      {"math.sin", [](double x) { return std::sin(x); }},
      {"math.tanh", [](double x) { return std::tanh(x); }},
      {"math.erf", [](double x) { return std::erf(x); }},
      {"math.fabs", [](double x) { return std::fabs(x); }},
      {"math.tan", [](double x) { return std::tan(x); }},
      {"math.asin", [](double x) { return std::asin(x); }},
      {"math.acos", [](double x) { return std::acos(x); }},
      {"math.atan", [](double x) { return std::atan(x); }},
      {"math.sinh", [](double x) { return std::sinh(x); }},
      {"math.cosh", [](double x) { return std::cosh(x); }},
      {"math.asinh", [](double x) { return std::asinh(x); }},
      {"math.acosh", [](double x) { return std::acosh(x); }},
      {"math.atanh", [](double x) { return std::atanh(x); }},
      {"math.cbrt", [](double x) { return std::cbrt(x); }},
      {"math.exp2", [](double x) { return std::exp2(x); }},
      {"math.log2", [](double x) { return std::log2(x); }},
      {"math.log10", [](double x) { return std::log10(x); }},
      {"math.log1p", [](double x) { return std::log1p(x); }},
      {"math.expm1", [](double x) { return std::expm1(x); }},
      {"math.erfc", [](double x) { return std::erfc(x); }},
      {"math.lgamma", [](double x) { return std::lgamma(x); }},
      {"math.gamma", [](double x) { return std::tgamma(x); }},
      {"math.radians", [](double x) { return x * M_PI / 180.0; }},
      {"math.degrees", [](double x) { return x * 180.0 / M_PI; }}};
  for (auto [name, fn] : kUnary)
    registry.add(name, unaryFunction(fn));
  registry.add("math.floor", rounding);
  registry.add("math.ceil", rounding);
  registry.add("math.prod", product);
  registry.add("math.fsum", exactSum);
  for (llvm::StringRef name :
       {"math.pow", "math.atan2", "math.hypot", "math.copysign", "math.fmod", "math.remainder"})
    registry.add(name, binaryMath);
  for (llvm::StringRef name : {"math.isnan", "math.isinf", "math.isfinite", "math.isclose"})
    registry.add(name, mathPredicate);
  registry.add("math.trunc", integerMath);
  registry.add("math.gcd", integerMath);
  for (llvm::StringRef name :
       {"math.isqrt", "math.factorial", "math.comb", "math.perm", "math.lcm"})
    registry.add(name, exactIntegerMath);
  registry.addPrefix("math.", otherMathFunction);

  // In BINARY_OP's numbering (NB_* in pycore_opcode_utils.h).
  static const llvm::StringLiteral kBinary[] = {
      "operator.add", "operator.and_",    "operator.floordiv", "operator.lshift", "operator.matmul",
      "operator.mul", "operator.mod",     "operator.or_",      "operator.pow",    "operator.rshift",
      "operator.sub", "operator.truediv", "operator.xor"};
  for (auto [op, name] : llvm::enumerate(kBinary))
    registry.add(name, binaryFunction(op));
  static const std::pair<llvm::StringLiteral, llvm::StringLiteral> kCompare[] = {
      {"operator.lt", "<"},  {"operator.le", "<="}, {"operator.eq", "=="},
      {"operator.ne", "!="}, {"operator.gt", ">"},  {"operator.ge", ">="}};
  for (auto [name, op] : kCompare)
    registry.add(name, compareFunction(op));
  registry.add("operator.getitem", getItem);
  for (llvm::StringRef getter :
       {"operator.itemgetter", "operator.attrgetter", "operator.methodcaller"}) {
    registry.add(getter, getterNew);
    registry.add((getter + ".__call__").str(), getterCall);
  }
}
