// Methods of constant strings in the bytecode interpreter (`builtins.str.*`, which
// lookupAttribute binds to strings): join, upper, lower, strip, startswith, endswith,
// replace. Other str methods on a string are an error naming the method.
#include "Interpreter.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace tgc;
using namespace tgc::py;

using K = Variable::Kind;

static constexpr llvm::StringLiteral kPrefix = "builtins.str.";

/// The method's name (`upper` of `builtins.str.upper`).
static llvm::StringRef methodOf(const ExternalCall &call) {
  return call.name.drop_front(kPrefix.size());
}

/// Whether the call has a string to call the method on; others are not the handlers'.
static bool onString(const ExternalCall &call) {
  return !call.args.empty() && call.args[0]->is(K::Str);
}

static CallResult unsupported(ExternalCall &call) {
  return call.error() << "str." << methodOf(call) << "() with these arguments is not supported";
}

/// Argument `i`, which must be a string.
static FailureOr<llvm::StringRef> stringArgument(ExternalCall &call, size_t i) {
  if (i >= call.args.size() || !call.args[i]->is(K::Str))
    return call.error() << "str." << methodOf(call) << "() needs string arguments here";
  return llvm::StringRef(call.args[i]->name);
}

/// upper() and lower().
static CallResult changeCase(Interpreter &, ExternalCall &call) {
  if (!onString(call))
    return CallResult::declined();
  llvm::StringRef self = call.args[0]->name;
  return makeStr(methodOf(call) == "upper" ? self.upper() : self.lower());
}

static CallResult strip(Interpreter &, ExternalCall &call) {
  if (!onString(call))
    return CallResult::declined();
  if (call.args.size() != 1)
    return unsupported(call);
  return makeStr(llvm::StringRef(call.args[0]->name).trim());
}

/// startswith() and endswith() of one string.
static CallResult affix(Interpreter &, ExternalCall &call) {
  if (!onString(call))
    return CallResult::declined();
  llvm::StringRef self = call.args[0]->name;
  FailureOr<llvm::StringRef> affix = stringArgument(call, 1);
  if (failed(affix))
    return failure();
  return makeBool(methodOf(call) == "startswith" ? self.starts_with(*affix)
                                                 : self.ends_with(*affix));
}

static CallResult replace(Interpreter &, ExternalCall &call) {
  if (!onString(call))
    return CallResult::declined();
  llvm::StringRef self = call.args[0]->name;
  FailureOr<llvm::StringRef> from = stringArgument(call, 1), to = stringArgument(call, 2);
  if (failed(from) || failed(to) || from->empty())
    return call.error() << "str.replace() needs two strings, the first non-empty";
  std::string result;
  for (llvm::StringRef rest = self;;) {
    auto [head, tail] = rest.split(*from);
    result += head.str();
    if (head.size() == rest.size())
      break;
    result += to->str();
    rest = tail;
  }
  return makeStr(result);
}

static CallResult join(Interpreter &in, ExternalCall &call) {
  if (!onString(call))
    return CallResult::declined();
  if (call.args.size() != 2)
    return unsupported(call);
  llvm::StringRef self = call.args[0]->name;
  FailureOr<std::vector<Var>> items = in.unpack(call.args[1], call.loc);
  if (failed(items))
    return failure();
  std::string result;
  for (auto [i, item] : llvm::enumerate(*items)) {
    if (!item->is(K::Str))
      return call.error() << "str.join() of a non-string item";
    result += (i ? self.str() : "") + item->name;
  }
  return makeStr(result);
}

/// Any other str method called on a string.
static CallResult otherMethod(Interpreter &, ExternalCall &call) {
  if (!onString(call))
    return CallResult::declined();
  return unsupported(call);
}

void tgc::py::registerStringMethods(CallRegistry &registry) {
  registry.add("builtins.str.upper", changeCase);
  registry.add("builtins.str.lower", changeCase);
  registry.add("builtins.str.strip", strip);
  registry.add("builtins.str.startswith", affix);
  registry.add("builtins.str.endswith", affix);
  registry.add("builtins.str.replace", replace);
  registry.add("builtins.str.join", join);
  registry.addPrefix(kPrefix, otherMethod);
}
