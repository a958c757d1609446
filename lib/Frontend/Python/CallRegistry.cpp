// The registry of external calls: handlers by qualified name and by prefix, filled once
// by the registerX functions of the files that hold the handlers.
#include "CallRegistry.h"

#include "llvm/ADT/STLExtras.h"

#include <cassert>

using namespace mlir;
using namespace tgc;
using namespace tgc::py;

LogicalResult ExternalCall::checkArity(size_t min, size_t max) const {
  if (args.size() < min || args.size() > max)
    return error() << name << "() takes " << min << " to " << max << " arguments, got "
                   << args.size();
  return success();
}

LogicalResult ExternalCall::checkKeywords(std::initializer_list<llvm::StringRef> allowed) const {
  for (const auto &[key, value] : arguments.keywords)
    if (!llvm::is_contained(allowed, llvm::StringRef(key)))
      return error() << name << "() got an unexpected keyword argument '" << key << "'";
  return success();
}

Var ExternalCall::keyword(llvm::StringRef key) const {
  for (const auto &[name, value] : arguments.keywords)
    if (name == key)
      return value;
  return Var();
}

void CallRegistry::add(llvm::StringRef name, CallHandler handler) {
  if (!handlers.try_emplace(name, std::move(handler)).second)
    duplicates.push_back(name.str());
}

void CallRegistry::addPrefix(llvm::StringRef prefix, CallHandler handler) {
  if (!prefixes.try_emplace(prefix, std::move(handler)).second)
    duplicates.push_back(prefix.str());
}

const CallHandler *CallRegistry::lookup(llvm::StringRef name) const {
  auto it = handlers.find(name);
  if (it != handlers.end())
    return &it->second;
  // The longest registered prefix (there are a few: a scan is cheap).
  const CallHandler *found = nullptr;
  size_t foundLength = 0;
  for (const auto &prefix : prefixes) {
    if (name.starts_with(prefix.getKey()) && prefix.getKey().size() >= foundLength) {
      found = &prefix.getValue();
      foundLength = prefix.getKey().size();
    }
  }
  return found;
}

std::vector<std::string> CallRegistry::getNames() const {
  std::vector<std::string> names;
  for (const auto &entry : handlers)
    names.push_back(entry.getKey().str());
  llvm::sort(names);
  return names;
}

const CallRegistry &tgc::py::getCallRegistry() {
  static const CallRegistry registry = [] {
    CallRegistry r;
    registerBuiltins(r);
    registerBuiltinTypes(r);
    registerStringMethods(r);
    registerMathAndOperator(r);
    registerContainerMethods(r);
    registerCollections(r);
    registerExceptions(r);
    registerModuleMethods(r);
    registerTensorMethods(r);
    registerTorchProbes(r);
    registerCond(r);
    registerAutogradFunction(r);
    registerSavedTensorsHooks(r);
    assert(r.getDuplicates().empty() && "a name has two call handlers");
    return r;
  }();
  return registry;
}
