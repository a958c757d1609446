// Parser for sympy srepr text (`Mul(Integer(8), Symbol('s0', ...))`) into affine exprs.
#include "SympyExpr.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace tgc;
using namespace tgc::pt2;
using llvm::Expected;
using llvm::StringRef;

namespace {
/// A positional argument of a call: a quoted string (Symbol's name) or an expression.
struct CallArg {
  std::optional<std::string> string;
  AffineExpr expr;
};

/// The sympy functions tgc understands, and how each combines its arguments.
enum class SympyFunction { Integer, Symbol, Add, Mul, Pow, FloorDiv, Mod, Unknown };
} // namespace

static SympyFunction classify(StringRef name) {
  return llvm::StringSwitch<SympyFunction>(name)
      .Case("Integer", SympyFunction::Integer)
      .Case("Symbol", SympyFunction::Symbol)
      .Case("Add", SympyFunction::Add)
      .Case("Mul", SympyFunction::Mul)
      .Case("Pow", SympyFunction::Pow)
      .Case("FloorDiv", SympyFunction::FloorDiv)
      .Case("CleanDiv", SympyFunction::FloorDiv)
      .Case("Mod", SympyFunction::Mod)
      .Case("PythonMod", SympyFunction::Mod)
      .Default(SympyFunction::Unknown);
}

namespace {
/// Recursive descent over the call grammar srepr produces:
///   expr := integer | name '(' [arg (',' arg)*] ')'
///   arg  := name '=' value | string | expr        (keyword arguments are assumptions
///                                                  such as positive=True: ignored)
class SympyParser {
public:
  SympyParser(StringRef text, MLIRContext *ctx, llvm::function_ref<AffineExpr(StringRef)> getSymbol)
      : text(text), ctx(ctx), getSymbol(getSymbol) {}

  Expected<AffineExpr> parse() {
    Expected<AffineExpr> expr = parseExpr();
    if (!expr)
      return expr;
    skipSpace();
    if (pos != text.size())
      return error("unexpected text after the expression");
    return expr;
  }

private:
  /// Nesting bound, so that hostile input cannot exhaust the stack.
  static constexpr unsigned kMaxDepth = 200;

  llvm::Error error(const llvm::Twine &message) const {
    return llvm::createStringError(llvm::formatv("{0} (at offset {1})", message.str(), pos).str());
  }

  void skipSpace() {
    while (pos < text.size() && text[pos] == ' ')
      ++pos;
  }

  bool consume(char c) {
    skipSpace();
    if (pos >= text.size() || text[pos] != c)
      return false;
    ++pos;
    return true;
  }

  StringRef parseName() {
    skipSpace();
    size_t start = pos;
    while (pos < text.size() && (llvm::isAlnum(text[pos]) || text[pos] == '_'))
      ++pos;
    return text.slice(start, pos);
  }

  Expected<AffineExpr> parseInteger() {
    skipSpace();
    size_t start = pos;
    if (pos < text.size() && text[pos] == '-')
      ++pos;
    while (pos < text.size() && llvm::isDigit(text[pos]))
      ++pos;
    int64_t value;
    if (text.slice(start, pos).getAsInteger(10, value))
      return error("expected an integer that fits in 64 bits");
    return getAffineConstantExpr(value, ctx);
  }

  Expected<std::string> parseString() {
    skipSpace();
    char quote = text[pos++];
    size_t end = text.find(quote, pos);
    if (end == StringRef::npos)
      return error("unterminated string");
    std::string value = text.slice(pos, end).str();
    pos = end + 1;
    return value;
  }

  bool atString() {
    skipSpace();
    return pos < text.size() && (text[pos] == '\'' || text[pos] == '"');
  }

  bool atInteger() {
    skipSpace();
    return pos < text.size() && (llvm::isDigit(text[pos]) || text[pos] == '-');
  }

  /// After a name: whether it is a keyword argument (`name=`).
  bool atKeywordValue() {
    skipSpace();
    return pos + 1 < text.size() && text[pos] == '=' && text[pos + 1] != '=';
  }

  Expected<AffineExpr> parseExpr() {
    if (atInteger())
      return parseInteger();
    if (++depth > kMaxDepth)
      return error("expression nested too deeply");
    StringRef name = parseName();
    if (name.empty())
      return error("expected an integer or a sympy function call");
    if (!consume('('))
      return error(llvm::Twine("expected '(' after '") + name + "'");
    llvm::SmallVector<CallArg> args;
    if (llvm::Error err = parseArgs(args))
      return std::move(err);
    --depth;
    return apply(name, args);
  }

  llvm::Error parseArgs(llvm::SmallVectorImpl<CallArg> &args) {
    if (consume(')'))
      return llvm::Error::success();
    do {
      if (llvm::Error err = parseArg(args))
        return err;
    } while (consume(','));
    if (!consume(')'))
      return error("expected ',' or ')'");
    return llvm::Error::success();
  }

  llvm::Error parseArg(llvm::SmallVectorImpl<CallArg> &args) {
    if (atString()) {
      Expected<std::string> string = parseString();
      if (!string)
        return string.takeError();
      args.push_back({*string, AffineExpr()});
      return llvm::Error::success();
    }
    size_t start = pos;
    StringRef name = parseName();
    if (!name.empty() && atKeywordValue()) {
      ++pos; // '='
      return skipKeywordValue();
    }
    pos = start;
    Expected<AffineExpr> expr = parseExpr();
    if (!expr)
      return expr.takeError();
    args.push_back({std::nullopt, *expr});
    return llvm::Error::success();
  }

  /// Keyword values are assumptions (`True`, `False`, numbers, strings); skip them.
  llvm::Error skipKeywordValue() {
    if (atString())
      return parseString().takeError();
    if (atInteger())
      return parseInteger().takeError();
    if (parseName().empty())
      return error("expected a keyword argument value");
    return llvm::Error::success();
  }

  Expected<AffineExpr> apply(StringRef name, llvm::ArrayRef<CallArg> args) {
    SympyFunction function = classify(name);
    if (function == SympyFunction::Unknown)
      return error(llvm::Twine("'") + name +
                   "' is not supported in sizes (tgc sizes are affine expressions)");
    if (function == SympyFunction::Symbol) {
      if (args.size() != 1 || !args[0].string)
        return error("Symbol expects one quoted name");
      return getSymbol(*args[0].string);
    }
    if (args.empty() || llvm::any_of(args, [](const CallArg &a) { return a.string; }))
      return error(llvm::Twine("'") + name + "' expects expression arguments");
    switch (function) {
    case SympyFunction::Integer:
      if (args.size() != 1 || !llvm::isa<AffineConstantExpr>(args[0].expr))
        return error("Integer expects one integer literal");
      return args[0].expr;
    case SympyFunction::Add:
    case SympyFunction::Mul:
      return fold(function, args);
    case SympyFunction::Pow:
      return power(args);
    case SympyFunction::FloorDiv:
    case SympyFunction::Mod:
      return divide(name, function, args);
    default:
      return error("unreachable");
    }
  }

  Expected<AffineExpr> fold(SympyFunction function, llvm::ArrayRef<CallArg> args) {
    AffineExpr result = args[0].expr;
    for (const CallArg &arg : args.drop_front())
      result = function == SympyFunction::Add ? result + arg.expr : result * arg.expr;
    return result;
  }

  /// The constant value of `e` when it is a constant in [min, max].
  static std::optional<int64_t> constantIn(AffineExpr e, int64_t min, int64_t max) {
    auto c = llvm::dyn_cast<AffineConstantExpr>(e);
    if (!c || c.getValue() < min || c.getValue() > max)
      return std::nullopt;
    return c.getValue();
  }

  Expected<AffineExpr> power(llvm::ArrayRef<CallArg> args) {
    std::optional<int64_t> exponent =
        args.size() == 2 ? constantIn(args[1].expr, 0, 64) : std::nullopt;
    if (!exponent)
      return error("Pow is supported with an integer exponent in [0, 64] only");
    AffineExpr result = getAffineConstantExpr(1, ctx);
    for (int64_t i = 0; i < *exponent; ++i)
      result = result * args[0].expr;
    return result;
  }

  Expected<AffineExpr> divide(StringRef name, SympyFunction function,
                              llvm::ArrayRef<CallArg> args) {
    std::optional<int64_t> divisor =
        args.size() == 2 ? constantIn(args[1].expr, 1, INT64_MAX) : std::nullopt;
    if (!divisor)
      return error(llvm::Twine("'") + name + "' is supported by a positive integer only");
    if (function == SympyFunction::FloorDiv)
      return args[0].expr.floorDiv(*divisor);
    return args[0].expr % *divisor;
  }

  StringRef text;
  size_t pos = 0;
  unsigned depth = 0;
  MLIRContext *ctx;
  llvm::function_ref<AffineExpr(StringRef)> getSymbol;
};

} // namespace

Expected<AffineExpr> tgc::pt2::parseSympyExpr(StringRef text, MLIRContext *ctx,
                                              llvm::function_ref<AffineExpr(StringRef)> getSymbol) {
  return SympyParser(text, ctx, getSymbol).parse();
}
