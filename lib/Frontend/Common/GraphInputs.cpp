// The argument attributes and global resource names both readers give @forward.
#include "GraphInputs.h"
#include "tgc/Dialect/Attributes.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace tgc;

std::string tgc::frontend::getResourceName(llvm::StringRef fqn) {
  std::string name = fqn.str();
  for (char &c : name)
    if (!llvm::isAlnum(c) && c != '_' && c != '.')
      c = '_';
  if (name.empty() || llvm::isDigit(name.front()) || name.front() == '.')
    name.insert(0, "_");
  return name;
}

DictionaryAttr tgc::frontend::getGraphInputAttrs(MLIRContext *ctx, llvm::StringRef kind,
                                                 llvm::StringRef name) {
  Builder builder(ctx);
  NamedAttrList attrs;
  attrs.set(attr::kKind, builder.getStringAttr(kind));
  attrs.set(attr::kName, builder.getStringAttr(name));
  if (kind != "user_input")
    attrs.set(attr::kGlobal, FlatSymbolRefAttr::get(ctx, name));
  return attrs.getDictionary(ctx);
}
