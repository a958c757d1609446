// Type re-inference after operands change, and functions used as templates (hooks).
#include "tgc/Dialect/TgcDialect.h"

#include "mlir/IR/IRMapping.h"

using namespace mlir;

LogicalResult tgc::refreshResultTypes(Operation *op) {
  auto infer = llvm::dyn_cast<InferTypeOpInterface>(op);
  if (!infer)
    return op->emitOpError("does not infer its result types");
  SmallVector<Type> types;
  if (failed(infer.inferReturnTypes(op->getContext(), op->getLoc(), op->getOperands(),
                                    op->getAttrDictionary(), op->getPropertiesStorage(),
                                    op->getRegions(), types)))
    return failure();
  if (types.size() != op->getNumResults())
    return op->emitOpError("inferred ") << types.size() << " results, has " << op->getNumResults();
  for (auto [result, type] : llvm::zip(op->getResults(), types))
    result.setType(type);
  return success();
}

FailureOr<SmallVector<Value>> tgc::instantiateFunction(OpBuilder &builder, Location loc,
                                                       func::FuncOp fn, ValueRange args) {
  if (fn.isExternal() || !fn.getBody().hasOneBlock())
    return emitError(loc) << "hook @" << fn.getSymName() << " must have a body of one block";
  Block &body = fn.getBody().front();
  if (body.getNumArguments() != args.size())
    return emitError(loc) << "hook @" << fn.getSymName() << " takes " << body.getNumArguments()
                          << " arguments, applied to " << args.size();
  IRMapping mapping;
  for (auto [param, arg] : llvm::zip(body.getArguments(), args)) {
    auto want = llvm::dyn_cast<BaseTensorType>(param.getType());
    auto have = llvm::dyn_cast<BaseTensorType>(arg.getType());
    if (want && have && want.getDtype() != have.getDtype())
      return emitError(loc) << "hook @" << fn.getSymName() << " takes " << want.getDtype()
                            << " tensors, applied to " << have.getDtype();
    mapping.map(param, arg);
  }
  for (Operation &op : body.without_terminator()) {
    Operation *clone = builder.clone(op, mapping);
    clone->setLoc(loc);
    bool hasTensorResult =
        llvm::any_of(clone->getResultTypes(), [](Type t) { return llvm::isa<BaseTensorType>(t); });
    if (hasTensorResult && failed(refreshResultTypes(clone)))
      return failure();
  }
  SmallVector<Value> results;
  for (Value v : body.getTerminator()->getOperands())
    results.push_back(mapping.lookupOrDefault(v));
  return results;
}

void tgc::eraseSavedTensorsHooks(ModuleOp module,
                                 llvm::function_ref<bool(SavedTensorsHooksOp)> shouldErase) {
  SmallVector<func::FuncOp> templates;
  for (auto hooks : llvm::make_early_inc_range(module.getOps<SavedTensorsHooksOp>())) {
    if (!shouldErase(hooks))
      continue;
    for (FlatSymbolRefAttr name : {hooks.getPackAttr(), hooks.getUnpackAttr()})
      if (auto fn = module.lookupSymbol<func::FuncOp>(name.getAttr()))
        if (!llvm::is_contained(templates, fn))
          templates.push_back(fn);
    hooks.erase();
  }
  for (func::FuncOp fn : templates)
    if (fn.isPrivate() && SymbolTable::symbolKnownUseEmpty(fn, module))
      fn.erase();
}
