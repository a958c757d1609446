// f-strings: FORMAT_VALUE formats constants with Python's format-spec mini-language
// (`[[fill]align][sign][0][width][.precision][type]`), BUILD_STRING joins the parts;
// `text % values` formats printf-style with the same formatter.
#include "Formatting.h"
#include "Frame.h"
#include "Frontend/Common/DTypes.h"
#include "Interpreter.h"

#include "llvm/ADT/StringExtras.h"
#include <charconv>
#include <cmath>

using namespace mlir;
using namespace tgc;
using namespace tgc::frontend;
using namespace tgc::py;

using K = Variable::Kind;

/// Python's repr() of a float: the shortest digits that round-trip, with ".0" on
/// integral values.
static std::string floatRepr(double value) {
  if (std::isnan(value))
    return "nan";
  if (std::isinf(value))
    return value < 0 ? "-inf" : "inf";
  char buffer[64];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);
  std::string text(buffer, ec == std::errc() ? end : buffer);
  // Python switches to exponent notation from 1e16 and below 1e-4.
  double magnitude = std::fabs(value);
  if (magnitude != 0 && (magnitude >= 1e16 || magnitude < 1e-4)) {
    auto [expEnd, expEc] =
        std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::scientific);
    text.assign(buffer, expEc == std::errc() ? expEnd : buffer);
    size_t e = text.find('e');
    if (e != std::string::npos) { // "1e-05", "1.5e+16": two exponent digits at least
      std::string mantissa = text.substr(0, e), exponent = text.substr(e + 1);
      char sign = exponent[0] == '-' ? '-' : '+';
      if (exponent[0] == '-' || exponent[0] == '+')
        exponent = exponent.substr(1);
      if (exponent.size() < 2)
        exponent = "0" + exponent;
      text = mantissa + "e" + sign + exponent;
    }
    return text;
  }
  if (text.find_first_of(".e") == std::string::npos)
    text += ".0";
  return text;
}

/// `value` as str() (`conversion` 0 or 1) or repr() (2, 3) gives it: what a spec-less
/// field shows.
static FailureOr<std::string> plainText(const Var &value, int conversion, Location loc) {
  if (value->is(K::Str)) {
    if (conversion != 2 && conversion != 3)
      return value->name;
    if (llvm::StringRef(value->name).find_first_of("'\\\n\r\t") != llvm::StringRef::npos)
      return emitError(loc) << "repr() of a string with quotes or escapes in an f-string is "
                               "not supported";
    return "'" + value->name + "'";
  }
  if (value->is(K::Bool))
    return std::string(value->boolValue ? "True" : "False");
  if (value->is(K::None))
    return std::string("None");
  if (value->is(K::Int) && value->getConstantInt())
    return std::to_string(*value->getConstantInt());
  if (value->is(K::Float))
    return floatRepr(value->floatValue);
  if (value->is(K::DType)) {
    if (!value->type)
      return ("torch." + value->name);
    std::optional<TorchDType> dtype = lookupDTypeByType(value->type);
    if (!dtype)
      return emitError(loc) << "formatting this dtype in an f-string is not supported";
    return ("torch." + dtype->name).str();
  }
  if (value->is(K::Tuple) && (!value->tupleClass || (value->tupleClass->is(K::External) &&
                                                     value->tupleClass->name == "torch.Size"))) {
    // repr() of the items: "(1, 'a')", "(4,)", "torch.Size([4, 8])".
    std::vector<std::string> items;
    for (const Var &item : value->items) {
      FailureOr<std::string> text = plainText(item, 2, loc);
      if (failed(text))
        return failure();
      items.push_back(*text);
    }
    std::string joined = llvm::join(items, ", ");
    return value->tupleClass ? "torch.Size([" + joined + "])"
                             : "(" + joined + (items.size() == 1 ? ",)" : ")");
  }
  return emitError(loc) << "formatting this value in an f-string is not supported (a "
                           "constant string, number, bool, None, dtype or tuple is)";
}

namespace {
/// A format spec taken apart:
/// `[[fill]align][sign][z][#][0][width][grouping][.precision][type]`.
struct FormatSpec {
  char fill = ' ', align = 0, sign = '-', type = 0;
  /// `#`: 0b/0o/0x prefixes; `,` or `_` between digit groups; `z`: no -0.
  bool alternate = false, noNegativeZero = false;
  char grouping = 0;
  size_t width = 0;
  std::optional<int> precision;
};
} // namespace

static FailureOr<FormatSpec> parseSpec(llvm::StringRef spec, Location loc) {
  FormatSpec parsed;
  llvm::StringRef rest = spec;
  if (rest.size() >= 2 && llvm::StringRef("<>^=").contains(rest[1])) {
    parsed.fill = rest[0];
    parsed.align = rest[1];
    rest = rest.drop_front(2);
  } else if (!rest.empty() && llvm::StringRef("<>^=").contains(rest[0])) {
    parsed.align = rest[0];
    rest = rest.drop_front();
  }
  if (!rest.empty() && llvm::StringRef("+- ").contains(rest[0])) {
    parsed.sign = rest[0];
    rest = rest.drop_front();
  }
  if (rest.consume_front("z"))
    parsed.noNegativeZero = true;
  if (rest.consume_front("#"))
    parsed.alternate = true;
  if (!rest.empty() && rest[0] == '0' && !parsed.align) {
    parsed.fill = '0';
    parsed.align = '=';
  }
  while (!rest.empty() && llvm::isDigit(rest[0])) {
    parsed.width = parsed.width * 10 + (rest[0] - '0');
    rest = rest.drop_front();
  }
  if (!rest.empty() && (rest[0] == ',' || rest[0] == '_')) {
    parsed.grouping = rest[0];
    rest = rest.drop_front();
  }
  if (rest.starts_with(".")) {
    rest = rest.drop_front();
    int p = 0;
    while (!rest.empty() && llvm::isDigit(rest[0])) {
      p = p * 10 + (rest[0] - '0');
      rest = rest.drop_front();
    }
    parsed.precision = p;
  }
  parsed.type = rest.empty() ? 0 : rest[0];
  if (rest.size() > 1 || (parsed.type && !llvm::StringRef("dfFeEgGs%bxXo").contains(parsed.type)))
    return emitError(loc) << "the f-string format spec '" << spec << "' is not supported";
  return parsed;
}

/// `digits` with `separator` between groups of `size` digits from the right.
static std::string groupDigits(llvm::StringRef digits, char separator, size_t size) {
  std::string grouped;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % size == 0)
      grouped += separator;
    grouped += digits[i];
  }
  return grouped;
}

/// A number as `spec` shows it, with its sign, before padding.
static FailureOr<std::string> formatNumber(const Var &value, double x, const FormatSpec &spec,
                                           llvm::StringRef specText, Location loc) {
  bool negative = std::signbit(x) && !std::isnan(x);
  double magnitude = std::fabs(x);
  bool integral = value->is(K::Int) || value->is(K::Bool);
  std::string body;
  if (spec.type && llvm::StringRef("bxXo").contains(spec.type)) {
    // Binary, hex and octal digits of an int, `#` adding 0b / 0x / 0X / 0o.
    if (!integral)
      return emitError(loc) << "format spec '" << specText << "' for a float";
    auto n = static_cast<uint64_t>(magnitude);
    unsigned base = spec.type == 'b' ? 2 : spec.type == 'o' ? 8 : 16;
    std::string digits;
    do {
      digits.insert(digits.begin(), "0123456789abcdef"[n % base]);
      n /= base;
    } while (n);
    if (spec.type == 'X')
      digits = llvm::StringRef(digits).upper();
    if (spec.grouping == ',')
      return emitError(loc) << "format spec '" << specText << "': ',' with '" << spec.type
                            << "' (ValueError)";
    std::string prefix = spec.alternate ? std::string("0") + spec.type : "";
    body = prefix + digits; // grouped below, with the other types
  } else if (spec.type == 'd' || (!spec.type && integral && !spec.precision)) {
    if (!integral)
      return emitError(loc) << "format spec '" << specText << "' for a float";
    body = std::to_string(static_cast<int64_t>(magnitude));
  } else if (!spec.type && !spec.precision) {
    body = integral ? std::to_string(static_cast<int64_t>(magnitude)) : floatRepr(magnitude);
  } else {
    char t = spec.type ? spec.type : 'g';
    double shown = t == '%' ? magnitude * 100 : magnitude;
    std::string format = "%." + std::to_string(spec.precision.value_or(6)) + (t == '%' ? 'f' : t);
    char buffer[512];
    snprintf(buffer, sizeof buffer, format.c_str(), shown);
    body = buffer;
    if (t == '%')
      body += "%";
  }
  if (spec.grouping) {
    // Separators in the integral part (after a 0x prefix, before '.', 'e' or '%'); zero
    // padding with grouping pads the digits, separators included ('-000,042').
    bool radix = spec.type && llvm::StringRef("bxXo").contains(spec.type);
    size_t begin = radix && spec.alternate ? 2 : 0;
    size_t end = body.find_first_not_of(radix ? "0123456789abcdefABCDEF_" : "0123456789", begin);
    if (end == std::string::npos)
      end = body.size();
    std::string digits;
    for (char c : llvm::StringRef(body).slice(begin, end))
      if (c != '_')
        digits += c;
    char separator = radix ? '_' : spec.grouping;
    size_t size = radix ? 4 : 3;
    size_t signSize = negative || spec.sign == '+' || spec.sign == ' ' ? 1 : 0;
    size_t around = signSize + begin + (body.size() - end);
    if (spec.align == '=' && spec.fill == '0')
      while (around + groupDigits(digits, separator, size).size() < spec.width)
        digits.insert(digits.begin(), '0');
    body = body.substr(0, begin) + groupDigits(digits, separator, size) + body.substr(end);
  }
  if (spec.noNegativeZero && negative && body.find_first_not_of("0.,_%eE+-") == std::string::npos)
    negative = false;
  if (negative)
    return "-" + body;
  if (spec.sign == '+' || spec.sign == ' ')
    return std::string(1, spec.sign) + body;
  return body;
}

/// `format(value, spec)` after conversion `conversion` (FORMAT_VALUE's: 0 none, 1 str,
/// 2 repr, 3 ascii) for constant strings, ints, floats, bools, None, dtypes and tuples.
static FailureOr<std::string> formatValue(const Var &value, llvm::StringRef specText,
                                          int conversion, Location loc) {
  FailureOr<std::string> plain = plainText(value, conversion, loc);
  if (failed(plain) || specText.empty())
    return plain;
  FailureOr<FormatSpec> spec = parseSpec(specText, loc);
  if (failed(spec))
    return failure();
  std::optional<double> number = value->getNumber();
  FailureOr<std::string> body = failure();
  if (value->is(K::Str)) {
    if (spec->type && spec->type != 's')
      return emitError(loc) << "format spec '" << specText << "' for a string";
    body = spec->precision ? plain->substr(0, *spec->precision) : *plain;
    if (!spec->align)
      spec->align = '<';
  } else if (number && !value->is(K::None)) {
    body = formatNumber(value, *number, *spec, specText, loc);
    if (!spec->align)
      spec->align = '>';
  } else {
    return emitError(loc) << "format spec '" << specText << "' for this value is not supported";
  }
  if (failed(body) || body->size() >= spec->width)
    return body;
  size_t pad = spec->width - body->size();
  char fill = spec->fill;
  switch (spec->align) {
  case '<':
    return *body + std::string(pad, fill);
  case '^':
    return std::string(pad / 2, fill) + *body + std::string(pad - pad / 2, fill);
  case '=': {
    // Padding goes after the sign and a 0b / 0o / 0x prefix.
    size_t signSize = !body->empty() && llvm::StringRef("+- ").contains((*body)[0]) ? 1 : 0;
    if (spec->alternate && body->size() >= signSize + 2 && (*body)[signSize] == '0' &&
        llvm::StringRef("bxXo").contains((*body)[signSize + 1]))
      signSize += 2;
    return body->substr(0, signSize) + std::string(pad, fill) + body->substr(signSize);
  }
  default:
    return std::string(pad, fill) + *body;
  }
}

FailureOr<std::string> tgc::py::formatPythonValue(const Var &value, llvm::StringRef spec,
                                                  int conversion, Location loc) {
  return formatValue(value, spec, conversion, loc);
}

/// `text % values`, printf-style: `%[flags][width][.precision]type` with the types s, r,
/// d, i, f, F, e, E, g, G, x, X, o and `%%`, each taking the next of the values (a
/// tuple, or one value); flags `-` (left-aligned), `+`, ` ` and `0`.
FailureOr<Var> Interpreter::percentFormat(llvm::StringRef text, Var values, Location loc) {
  std::vector<Var> args = values->is(K::Tuple) ? values->items : std::vector<Var>{values};
  size_t next = 0;
  std::string result;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '%') {
      result += text[i];
      continue;
    }
    if (i + 1 < text.size() && (text[i + 1] == '(' || text[i + 1] == '*'))
      return error(loc) << "%-formatting with a mapping key or a '*' width is not supported";
    size_t end = text.find_first_of("srdiFfEeGgXxo%", i + 1);
    if (end == llvm::StringRef::npos)
      return error(loc) << "incomplete format (ValueError)";
    llvm::StringRef spec = text.slice(i + 1, end);
    char type = text[end];
    i = end;
    if (type == '%' && spec.empty()) {
      result += '%';
      continue;
    }
    if (next >= args.size())
      return error(loc) << "not enough arguments for format string (TypeError)";
    Var value = args[next++];
    std::string flags, rest = spec.str();
    while (!rest.empty() && llvm::StringRef("-+ 0#").contains(rest[0])) {
      flags += rest[0];
      rest.erase(0, 1);
    }
    std::string formatSpec;
    if (flags.find('-') != std::string::npos)
      formatSpec += '<';
    for (char sign : {'+', ' '})
      if (flags.find(sign) != std::string::npos)
        formatSpec += sign;
    if (flags.find('0') != std::string::npos && flags.find('-') == std::string::npos)
      formatSpec += '0';
    formatSpec += rest;
    int conversion = 0;
    if (type == 's' || type == 'r') {
      conversion = type == 's' ? 1 : 2;
    } else {
      if (type == 'd' || type == 'i') {
        std::optional<double> number = value->getNumber();
        if (!number || value->is(K::None))
          return error(loc) << "%" << type << " format: a real number is required (TypeError)";
        value = makeInt(static_cast<int64_t>(*number), ctx);
        type = 'd';
      }
      formatSpec += type;
    }
    FailureOr<std::string> formatted = formatPythonValue(value, formatSpec, conversion, loc);
    if (failed(formatted))
      return failure();
    result += *formatted;
  }
  if (next < args.size())
    return error(loc) << "not all arguments converted during string formatting (TypeError)";
  return makeStr(result);
}

bool tgc::py::holdsPlainContainer(const Heap &heap, const Var &value) {
  if (value->is(K::Tuple))
    return llvm::any_of(value->items,
                        [&](const Var &item) { return holdsPlainContainer(heap, item); });
  std::optional<HeapObject::Kind> kind = heap.kindOf(value);
  return (kind == HeapObject::Kind::List || kind == HeapObject::Kind::Dict) &&
         !heap.get(value->object).classObject;
}

static FailureOr<std::string> containerRepr(const Heap &heap, const Var &value, Location loc,
                                            llvm::SmallVectorImpl<ObjectId> &open) {
  auto itemRepr = [&](const Var &item) {
    return holdsPlainContainer(heap, item) ? containerRepr(heap, item, loc, open)
                                           : formatPythonValue(item, "", 2, loc);
  };
  std::vector<std::string> parts;
  if (value->is(K::Tuple)) {
    for (const Var &item : value->items) {
      FailureOr<std::string> text = itemRepr(item);
      if (failed(text))
        return failure();
      parts.push_back(*text);
    }
    return "(" + llvm::join(parts, ", ") + (parts.size() == 1 ? ",)" : ")");
  }
  const HeapObject &object = heap.get(value->object);
  bool isList = object.kind == HeapObject::Kind::List;
  if (llvm::is_contained(open, value->object)) // it holds itself
    return std::string(isList ? "[...]" : "{...}");
  open.push_back(value->object);
  if (isList) {
    for (const Var &item : object.items) {
      FailureOr<std::string> text = itemRepr(item);
      if (failed(text))
        return failure();
      parts.push_back(*text);
    }
  } else {
    for (const auto &[key, item] : object.entries) {
      FailureOr<std::string> keyText = itemRepr(key), itemText = itemRepr(item);
      if (failed(keyText) || failed(itemText))
        return failure();
      parts.push_back(*keyText + ": " + *itemText);
    }
  }
  open.pop_back();
  std::string joined = llvm::join(parts, ", ");
  return isList ? "[" + joined + "]" : "{" + joined + "}";
}

FailureOr<std::string> tgc::py::containerRepr(const Heap &heap, const Var &value, Location loc) {
  llvm::SmallVector<ObjectId> open;
  return ::containerRepr(heap, value, loc, open);
}

static LogicalResult formatValueOpcode(ExecutionStep &step) {
  uint32_t arg = step.arg();
  Var spec = (arg & 0x04) != 0 ? step.frame.pop() : makeStr("");
  Var value = step.frame.pop();
  if (!spec->is(K::Str))
    return step.error() << "an f-string format spec that is not a constant string";
  // An object formats as str() makes it: its class's __str__, an exception's message.
  if (step.interpreter.getHeap().kindOf(value) == HeapObject::Kind::Instance &&
      spec->name.empty() && (arg & 0x03) <= 1) {
    FailureOr<Var> text =
        step.interpreter.call(makeExternal("builtins.str"), CallArguments{{value}, {}}, step.loc);
    if (failed(text))
      return failure();
    value = *text;
  }
  // A list or dict shows as repr() (str() of one is its repr()); a spec is a TypeError.
  if (holdsPlainContainer(step.interpreter.getHeap(), value)) {
    if (!spec->name.empty())
      return step.error() << "unsupported format string passed to "
                          << describe(step.interpreter.getHeap(), value)
                          << ".__format__ (TypeError)";
    FailureOr<std::string> text = containerRepr(step.interpreter.getHeap(), value, step.loc);
    if (failed(text))
      return failure();
    step.frame.push(makeStr(*text));
    return success();
  }
  FailureOr<std::string> text = formatValue(value, spec->name, arg & 0x03, step.loc);
  if (failed(text))
    return failure();
  step.frame.push(makeStr(*text));
  return success();
}

static LogicalResult buildString(ExecutionStep &step) {
  std::string text;
  for (const Var &part : step.frame.popN(step.arg())) {
    if (!part->is(K::Str))
      return step.error() << "f-string part is not a string";
    text += part->name;
  }
  step.frame.push(makeStr(text));
  return success();
}

void tgc::py::registerFormatOpcodes(OpcodeTable &table) {
  table.add({Opcode::FORMAT_VALUE}, formatValueOpcode);
  table.add({Opcode::BUILD_STRING}, buildString);
}
