// The `math` and `operator` modules in the bytecode interpreter: math functions of
// constant numbers, and operator functions of values that are not tensors (on tensors,
// both are torch calls, which the handlers decline).
#include "Interpreter.h"

#include "llvm/ADT/STLExtras.h"
#include <cmath>

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

static CallResult power(Interpreter &, ExternalCall &call) {
  std::optional<std::vector<double>> x = numberArguments(call);
  if (!x)
    return CallResult::declined();
  if (x->size() != 2)
    return notSupported(call);
  return makeFloat(std::pow((*x)[0], (*x)[1]));
}

/// math.prod: the product with Python's `*`, starting from the int 1.
static CallResult product(Interpreter &in, ExternalCall &call) {
  if (!numberArguments(call))
    return CallResult::declined();
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

void tgc::py::registerMathAndOperator(CallRegistry &registry) {
  static const std::pair<llvm::StringLiteral, double (*)(double)> kUnary[] = {
      {"math.sqrt", [](double x) { return std::sqrt(x); }},
      {"math.exp", [](double x) { return std::exp(x); }},
      {"math.log", [](double x) { return std::log(x); }},
      {"math.cos", [](double x) { return std::cos(x); }},
      {"math.sin", [](double x) { return std::sin(x); }},
      {"math.tanh", [](double x) { return std::tanh(x); }},
      {"math.erf", [](double x) { return std::erf(x); }},
      {"math.fabs", [](double x) { return std::fabs(x); }}};
  for (auto [name, fn] : kUnary)
    registry.add(name, unaryFunction(fn));
  registry.add("math.floor", rounding);
  registry.add("math.ceil", rounding);
  registry.add("math.pow", power);
  registry.add("math.prod", product);
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
}
