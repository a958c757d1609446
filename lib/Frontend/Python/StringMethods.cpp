// Methods of constant strings in the bytecode interpreter (`builtins.str.*`, which
// lookupAttribute binds to strings): join, upper, lower, strip/lstrip/rstrip, split/rsplit,
// count/find/rfind/index/rindex, partition/rpartition, the is* predicates, capitalize,
// title, zfill, startswith, endswith, replace and format. Other str methods on a string
// are an error naming the method.
#include "Interpreter.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include <algorithm>

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

/// upper(), lower() and casefold() (which is lower() for ASCII) of ASCII text; tgc has no
/// Unicode case tables, and a non-ASCII letter left as it is would be a wrong answer.
static CallResult changeCase(Interpreter &, ExternalCall &call) {
  if (!onString(call))
    return CallResult::declined();
  llvm::StringRef self = call.args[0]->name;
  if (llvm::any_of(self, [](char c) { return static_cast<unsigned char>(c) >= 0x80; }))
    return call.error() << "str." << methodOf(call) << "() of a string with non-ASCII characters "
                        << "is not supported";
  return makeStr(methodOf(call) == "upper" ? self.upper() : self.lower());
}

/// strip(), lstrip() and rstrip(), of whitespace or of the given characters.
static CallResult strip(Interpreter &, ExternalCall &call) {
  if (!onString(call))
    return CallResult::declined();
  if (call.args.size() > 2)
    return unsupported(call);
  llvm::StringRef self = call.args[0]->name, method = methodOf(call);
  llvm::StringRef chars = " \t\n\v\f\r";
  if (call.args.size() == 2 && !call.args[1]->is(K::None)) {
    FailureOr<llvm::StringRef> given = stringArgument(call, 1);
    if (failed(given))
      return failure();
    chars = *given;
  }
  if (method != "rstrip")
    self = self.ltrim(chars);
  if (method != "lstrip")
    self = self.rtrim(chars);
  return makeStr(self);
}

/// split() and rsplit(): at a separator, or at runs of whitespace (no empty parts),
/// at most `maxsplit` times.
static CallResult split(Interpreter &in, ExternalCall &call) {
  if (!onString(call))
    return CallResult::declined();
  if (failed(call.checkKeywords({"sep", "maxsplit"})))
    return failure();
  Var sep = call.args.size() > 1 ? call.args[1] : call.keyword("sep");
  Var max = call.args.size() > 2 ? call.args[2] : call.keyword("maxsplit");
  if ((sep && !sep->is(K::None) && (!sep->is(K::Str) || sep->name.empty())) ||
      (max && !max->getConstantInt()))
    return unsupported(call);
  int64_t maxsplit = max ? *max->getConstantInt() : -1;
  bool fromRight = methodOf(call) == "rsplit";
  llvm::StringRef rest = call.args[0]->name;
  std::vector<std::string> parts;
  bool whitespace = !sep || sep->is(K::None);
  llvm::StringRef spaces = " \t\n\v\f\r";
  while (maxsplit < 0 || static_cast<int64_t>(parts.size()) < maxsplit) {
    if (whitespace)
      rest = fromRight ? rest.rtrim(spaces) : rest.ltrim(spaces);
    if (whitespace && rest.empty())
      break;
    size_t at = whitespace ? (fromRight ? rest.find_last_of(spaces) : rest.find_first_of(spaces))
                           : (fromRight ? rest.rfind(sep->name) : rest.find(sep->name));
    if (at == llvm::StringRef::npos)
      break;
    size_t width = whitespace ? 1 : sep->name.size();
    parts.push_back((fromRight ? rest.drop_front(at + width) : rest.take_front(at)).str());
    rest = fromRight ? rest.take_front(at) : rest.drop_front(at + width);
  }
  if (whitespace)
    rest = rest.trim(spaces);
  if (!whitespace || !rest.empty())
    parts.push_back(rest.str());
  if (fromRight)
    std::reverse(parts.begin(), parts.end());
  std::vector<Var> items;
  for (const std::string &part : parts)
    items.push_back(makeStr(part));
  return in.makeList(std::move(items));
}

/// count(), find(), rfind(), index() and rindex() of a substring.
static CallResult search(Interpreter &in, ExternalCall &call) {
  if (!onString(call))
    return CallResult::declined();
  if (call.args.size() != 2)
    return unsupported(call);
  FailureOr<llvm::StringRef> needle = stringArgument(call, 1);
  if (failed(needle))
    return failure();
  llvm::StringRef self = call.args[0]->name, method = methodOf(call);
  if (method == "count") {
    if (needle->empty())
      return makeInt(strCharacters(self).size() + 1, in.getContext());
    return makeInt(self.count(*needle), in.getContext());
  }
  size_t at = method.starts_with("r") ? self.rfind(*needle) : self.find(*needle);
  if (at == llvm::StringRef::npos) {
    if (method.ends_with("index"))
      return call.error() << "substring not found (ValueError)";
    return makeInt(-1, in.getContext());
  }
  // In characters, not bytes.
  return makeInt(strCharacters(self.take_front(at)).size(), in.getContext());
}

/// partition() and rpartition(): (head, separator, tail).
static CallResult partition(Interpreter &, ExternalCall &call) {
  if (!onString(call))
    return CallResult::declined();
  FailureOr<llvm::StringRef> sep = stringArgument(call, 1);
  if (failed(sep) || sep->empty() || call.args.size() != 2)
    return unsupported(call);
  llvm::StringRef self = call.args[0]->name;
  bool right = methodOf(call) == "rpartition";
  size_t at = right ? self.rfind(*sep) : self.find(*sep);
  if (at == llvm::StringRef::npos)
    return right ? makeTuple({makeStr(""), makeStr(""), makeStr(self)})
                 : makeTuple({makeStr(self), makeStr(""), makeStr("")});
  return makeTuple(
      {makeStr(self.take_front(at)), makeStr(*sep), makeStr(self.drop_front(at + sep->size()))});
}

/// isdigit(), isalpha(), isalnum(), isspace(), isupper(), islower() of ASCII text.
static CallResult predicate(Interpreter &, ExternalCall &call) {
  if (!onString(call))
    return CallResult::declined();
  if (call.args.size() != 1)
    return unsupported(call);
  llvm::StringRef self = call.args[0]->name, method = methodOf(call);
  if (method == "isupper" || method == "islower") {
    bool cased = llvm::any_of(self, [](char c) { return llvm::isAlpha(c); });
    bool upper = method == "isupper";
    return makeBool(cased && llvm::none_of(self, [&](char c) {
                      return upper ? llvm::isLower(c) : llvm::isUpper(c);
                    }));
  }
  auto test = [&](char c) {
    if (method == "isdigit")
      return llvm::isDigit(c);
    if (method == "isalpha")
      return llvm::isAlpha(c);
    if (method == "isalnum")
      return llvm::isAlnum(c);
    return llvm::isSpace(c);
  };
  return makeBool(!self.empty() && llvm::all_of(self, test));
}

/// capitalize(), title(), zfill(width).
static CallResult reshape(Interpreter &, ExternalCall &call) {
  if (!onString(call))
    return CallResult::declined();
  std::string self = call.args[0]->name;
  llvm::StringRef method = methodOf(call);
  if (method == "zfill") {
    std::optional<int64_t> width =
        call.args.size() == 2 ? call.args[1]->getConstantInt() : std::nullopt;
    if (!width)
      return unsupported(call);
    if (static_cast<int64_t>(self.size()) >= *width)
      return makeStr(self);
    size_t sign = !self.empty() && (self[0] == '-' || self[0] == '+') ? 1 : 0;
    return makeStr(self.substr(0, sign) + std::string(*width - self.size(), '0') +
                   self.substr(sign));
  }
  if (call.args.size() != 1)
    return unsupported(call);
  bool start = true;
  for (char &c : self) {
    bool letter = llvm::isAlpha(c);
    c = start ? llvm::toUpper(c) : llvm::toLower(c);
    start = method == "title" ? !letter : false;
  }
  return makeStr(self);
}

/// str.format(*args, **kwargs): `{}` (numbered in turn), `{0}`, `{name}`, each with an
/// optional `!r`/`!s` conversion and a format spec; `{{` and `}}` are braces.
static CallResult format(Interpreter &, ExternalCall &call) {
  if (!onString(call))
    return CallResult::declined();
  llvm::StringRef text = call.args[0]->name;
  std::string result;
  size_t next = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '}' && i + 1 < text.size() && text[i + 1] == '}') {
      result += '}';
      ++i;
      continue;
    }
    if (c != '{') {
      result += c;
      continue;
    }
    if (i + 1 < text.size() && text[i + 1] == '{') {
      result += '{';
      ++i;
      continue;
    }
    size_t close = text.find('}', i);
    if (close == llvm::StringRef::npos)
      return call.error() << "str.format(): single '{' encountered in format string";
    llvm::StringRef field = text.slice(i + 1, close);
    i = close;
    auto [head, spec] = field.split(':');
    auto [name, conversionText] = head.split('!');
    int conversion = conversionText == "r" ? 2 : conversionText == "s" ? 1 : 0;
    if (!conversionText.empty() && conversion == 0)
      return unsupported(call);
    Var value;
    unsigned index = 0;
    if (name.empty()) {
      index = next++;
    } else if (name.getAsInteger(10, index)) {
      value = call.keyword(name);
      if (!value)
        return call.error() << "str.format(): no argument named '" << name << "' (KeyError)";
    }
    if (!value) {
      if (index + 1 >= call.args.size())
        return call.error() << "str.format(): replacement index " << index
                            << " out of range (IndexError)";
      value = call.args[index + 1];
    }
    FailureOr<std::string> formatted = formatPythonValue(value, spec, conversion, call.loc);
    if (failed(formatted))
      return failure();
    result += *formatted;
  }
  return makeStr(result);
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

static const char *const kMethods[] = {
    "upper",     "lower",      "strip",      "lstrip",  "rstrip",  "split",
    "rsplit",    "count",      "find",       "rfind",   "index",   "rindex",
    "partition", "rpartition", "isdigit",    "isalpha", "isalnum", "isspace",
    "isupper",   "islower",    "capitalize", "title",   "zfill",   "startswith",
    "endswith",  "replace",    "join",       "format",  "casefold"};

bool tgc::py::isStringMethod(llvm::StringRef name) { return llvm::is_contained(kMethods, name); }

void tgc::py::registerStringMethods(CallRegistry &registry) {
  registry.add("builtins.str.upper", changeCase);
  registry.add("builtins.str.lower", changeCase);
  registry.add("builtins.str.casefold", changeCase);
  for (llvm::StringRef name : {"strip", "lstrip", "rstrip"})
    registry.add(("builtins.str." + name).str(), strip);
  registry.add("builtins.str.split", split);
  registry.add("builtins.str.rsplit", split);
  for (llvm::StringRef name : {"count", "find", "rfind", "index", "rindex"})
    registry.add(("builtins.str." + name).str(), search);
  registry.add("builtins.str.partition", partition);
  registry.add("builtins.str.rpartition", partition);
  for (llvm::StringRef name : {"isdigit", "isalpha", "isalnum", "isspace", "isupper", "islower"})
    registry.add(("builtins.str." + name).str(), predicate);
  for (llvm::StringRef name : {"capitalize", "title", "zfill"})
    registry.add(("builtins.str." + name).str(), reshape);
  registry.add("builtins.str.format", format);
  registry.add("builtins.str.startswith", affix);
  registry.add("builtins.str.endswith", affix);
  registry.add("builtins.str.replace", replace);
  registry.add("builtins.str.join", join);
  registry.addPrefix(kPrefix, otherMethod);
}
