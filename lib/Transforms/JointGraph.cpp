// Reading the signature of the training graphs (`@joint`, docs/training.md).
#include "JointGraph.h"
#include "tgc/Dialect/Attributes.h"

#include "llvm/ADT/SmallPtrSet.h"

using namespace mlir;
using namespace tgc;

FailureOr<func::FuncOp> joint::lookupJoint(ModuleOp module) {
  auto func = module.lookupSymbol<func::FuncOp>("joint");
  if (!func)
    return module.emitError("expected a func.func @joint (the joint forward-backward "
                            "graph tgc-autodiff produces)");
  if (!llvm::hasSingleElement(func.getBody()))
    return func.emitError("@joint must have a body of one block");
  return func;
}

static StringRef getKind(DictionaryAttr attrs) {
  if (!attrs)
    return "";
  auto kind = attrs.getAs<StringAttr>(attr::kKind);
  return kind ? kind.getValue() : "";
}

StringRef joint::getArgKind(func::FuncOp func, unsigned index) {
  return getKind(func.getArgAttrDict(index));
}

StringRef joint::getResultKind(func::FuncOp func, unsigned index) {
  return getKind(func.getResultAttrDict(index));
}

DenseSet<Value> joint::getTangentDependentValues(func::FuncOp func) {
  DenseSet<Value> dependent;
  for (BlockArgument arg : func.getArguments())
    if (getArgKind(func, arg.getArgNumber()) == kTangent)
      dependent.insert(arg);
  // One sweep in program order suffices: operands are defined before their users.
  for (Operation &op : func.getBody().front()) {
    bool reads = llvm::any_of(op.getOperands(), [&](Value v) { return dependent.contains(v); });
    if (reads)
      dependent.insert(op.getResults().begin(), op.getResults().end());
  }
  return dependent;
}

bool joint::dependsOn(Value value, Value ancestor) {
  SmallVector<Value> worklist{value};
  llvm::SmallPtrSet<Operation *, 16> visited;
  while (!worklist.empty()) {
    Value current = worklist.pop_back_val();
    if (current == ancestor)
      return true;
    Operation *def = current.getDefiningOp();
    if (def && visited.insert(def).second)
      worklist.append(def->getOperands().begin(), def->getOperands().end());
  }
  return false;
}

int64_t joint::getTypicalByteSize(BaseTensorType type, ModuleOp module) {
  SmallVector<AffineExpr> values;
  if (auto symbols = module->getAttrOfType<ArrayAttr>(TgcDialect::kSymbolsAttrName))
    for (Attribute symbol : symbols) {
      auto attr = llvm::dyn_cast<SymbolAttr>(symbol);
      values.push_back(
          getAffineConstantExpr(attr ? attr.getTypicalValue() : 1024, module.getContext()));
    }
  Type dtype = type.getDtype();
  uint64_t bytes = std::max<unsigned>(1, (dtype.getIntOrFloatBitWidth() + 7) / 8);
  for (AffineExpr size : type.getSizes()) {
    std::optional<int64_t> known = getConstantSize(size.replaceSymbols(values));
    bytes = llvm::SaturatingMultiply<uint64_t>(bytes, known ? std::max<int64_t>(*known, 0) : 1024);
  }
  return static_cast<int64_t>(std::min<uint64_t>(bytes, INT64_MAX));
}
