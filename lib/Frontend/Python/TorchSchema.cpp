// Function schemas in native_functions.yaml syntax, parsed for the table of torch
// callables (TorchFunctions.cpp): names, typed arguments with defaults, and returns.
#include "TorchFunctionTable.h"
#include "TorchFunctions.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;
using namespace tgc;
using namespace tgc::frontend;
using namespace tgc::py;

/// Splits `text` at the commas outside brackets, parentheses and quotes.
static llvm::Expected<SmallVector<llvm::StringRef>> splitTopLevel(llvm::StringRef text) {
  SmallVector<llvm::StringRef> parts;
  int depth = 0;
  char quote = 0;
  size_t start = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (quote) {
      quote = c == quote ? 0 : quote;
      continue;
    }
    if (c == '\'' || c == '"')
      quote = c;
    else if (c == '(' || c == '[')
      ++depth;
    else if (c == ')' || c == ']')
      --depth;
    else if (c == ',' && depth == 0) {
      parts.push_back(text.slice(start, i).trim());
      start = i + 1;
    }
    if (depth < 0)
      return bindingError("unbalanced brackets in '" + text + "'");
  }
  if (depth != 0 || quote)
    return bindingError("unbalanced brackets or quotes in '" + text + "'");
  if (!text.trim().empty())
    parts.push_back(text.drop_front(start).trim());
  return parts;
}

static bool isIdentifier(llvm::StringRef name) {
  return !name.empty() && !llvm::isDigit(name.front()) &&
         llvm::all_of(name, [](char c) { return llvm::isAlnum(c) || c == '_'; });
}

/// A type without its alias annotation: `Tensor(a!)` -> `Tensor`, `Tensor(a)[]` ->
/// `Tensor[]`.
static std::string stripAliasAnnotation(llvm::StringRef type) {
  size_t open = type.find('(');
  if (open == llvm::StringRef::npos)
    return type.str();
  size_t close = type.find(')', open);
  return (type.take_front(open) + type.drop_front(close + 1)).str();
}

/// Whether a type is one tgc's tables may use: a base type, optionally a list (with a
/// size) and optional (`int[2]?`, `Tensor?[]`).
static bool isKnownType(llvm::StringRef type) {
  static constexpr llvm::StringLiteral kBaseTypes[] = {
      "Tensor", "int",    "SymInt",     "float",  "bool",         "str",
      "Scalar", "Device", "ScalarType", "Layout", "MemoryFormat", "Generator"};
  type.consume_back("?");
  if (type.consume_back("]")) {
    size_t open = type.rfind('[');
    if (open == llvm::StringRef::npos)
      return false;
    llvm::StringRef size = type.drop_front(open + 1);
    if (!size.empty() && !llvm::all_of(size, llvm::isDigit))
      return false;
    type = type.take_front(open);
    type.consume_back("?");
  }
  return llvm::is_contained(kBaseTypes, type);
}

static llvm::Expected<FunctionSchema::Argument> parseArgument(llvm::StringRef text,
                                                              bool keywordOnly) {
  FunctionSchema::Argument argument;
  argument.keywordOnly = keywordOnly;
  auto [declaration, defaultValue] = text.split('=');
  if (text.contains('=')) {
    defaultValue = defaultValue.trim();
    if (defaultValue.empty())
      return bindingError("argument '" + text + "' has an empty default");
    argument.defaultValue = defaultValue.str();
  }
  declaration = declaration.trim();
  size_t space = declaration.rfind(' ');
  if (space == llvm::StringRef::npos)
    return bindingError("argument '" + text + "' needs a type and a name");
  argument.name = declaration.drop_front(space + 1).str();
  argument.type = stripAliasAnnotation(declaration.take_front(space).trim());
  if (!isIdentifier(argument.name))
    return bindingError("argument '" + text + "' has no valid name");
  if (!isKnownType(argument.type))
    return bindingError("argument '" + text + "' has unknown type '" + argument.type + "'");
  return argument;
}

llvm::Expected<FunctionSchema> tgc::py::parseFunctionSchema(llvm::StringRef text) {
  text = text.trim();
  FunctionSchema schema;
  size_t open = text.find('(');
  size_t arrow = text.rfind("->");
  if (open == llvm::StringRef::npos || arrow == llvm::StringRef::npos || arrow < open)
    return bindingError("schema '" + text + "' must read 'name(arguments) -> returns'");
  llvm::StringRef head = text.take_front(open).trim();
  auto [name, overload] = head.split('.');
  if (!isIdentifier(name) || (head.contains('.') && !isIdentifier(overload)))
    return bindingError("schema '" + text + "' has no valid name");
  schema.name = name.str();
  schema.overload = overload.str();
  llvm::StringRef signature = text.slice(open, arrow).trim();
  if (!signature.consume_front("(") || !signature.consume_back(")"))
    return bindingError("schema '" + text + "' must read 'name(arguments) -> returns'");
  llvm::Expected<SmallVector<llvm::StringRef>> parts = splitTopLevel(signature);
  if (!parts)
    return parts.takeError();
  bool keywordOnly = false, sawDefault = false;
  llvm::StringSet<> names;
  for (llvm::StringRef part : *parts) {
    if (part == "*") {
      if (keywordOnly)
        return bindingError("schema '" + text + "' has two '*'");
      keywordOnly = true;
      continue;
    }
    llvm::Expected<FunctionSchema::Argument> argument = parseArgument(part, keywordOnly);
    if (!argument)
      return argument.takeError();
    if (!names.insert(argument->name).second)
      return bindingError("schema '" + text + "' has two arguments named '" + argument->name + "'");
    if (!keywordOnly && !argument->defaultValue && sawDefault)
      return bindingError("schema '" + text + "': required argument '" + argument->name +
                          "' follows one with a default");
    sawDefault |= !keywordOnly && argument->defaultValue.has_value();
    schema.arguments.push_back(std::move(*argument));
  }
  llvm::StringRef returns = text.drop_front(arrow + 2).trim();
  if (returns.empty())
    return bindingError("schema '" + text + "' has no return type");
  if (returns.consume_front("(")) {
    if (!returns.consume_back(")"))
      return bindingError("schema '" + text + "' has unbalanced returns");
    llvm::Expected<SmallVector<llvm::StringRef>> results = splitTopLevel(returns);
    if (!results)
      return results.takeError();
    schema.numReturns = results->size();
  } else {
    schema.numReturns = 1;
    schema.returnsList = returns.starts_with("Tensor") && returns.ends_with("[]");
  }
  return schema;
}
