// Templates in the bytecode interpreter: Python functions traced into module-level
// functions over tensors (hooks, saved-tensor hooks), and gradient hooks on tensors.
#include "Interpreter.h"

#include "tgc/Dialect/TgcDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

using namespace mlir;
using namespace tgc;
using namespace tgc::py;

using H = HeapObject::Kind;
using K = Variable::Kind;

FailureOr<func::FuncOp> Interpreter::traceTemplate(Var function, llvm::StringRef baseName,
                                                   TypeRange argumentTypes, Location loc,
                                                   bool allowSideEffects) {
  auto enclosing = builder.getInsertionBlock()->getParent()->getParentOfType<func::FuncOp>();
  auto module = enclosing->getParentOfType<ModuleOp>();
  unsigned &count = templateNames[baseName];
  std::string name = (baseName + "_" + llvm::Twine(count++)).str();
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPoint(enclosing);
  auto fn = func::FuncOp::create(builder, loc, name, builder.getFunctionType(argumentTypes, {}));
  fn.setPrivate();
  (void)module;
  Block *body = fn.addEntryBlock();
  builder.setInsertionPointToEnd(body);
  CallArguments call;
  for (BlockArgument arg : body->getArguments()) {
    HeapObject tensor;
    tensor.kind = H::Tensor;
    tensor.tensor = arg;
    call.positional.push_back(makeTensorObject(newObject(std::move(tensor))));
  }
  size_t firstEffect = sideEffects.size(), firstObject = heap.size();
  FailureOr<Var> result = this->call(function, std::move(call), loc);
  if (failed(result))
    return failure();
  // A hook runs in backward, after the call: a Python side effect there (on an object
  // that outlives the hook) is not something the forward's replay list can hold.
  if (!allowSideEffects)
    for (size_t i = firstEffect; i < sideEffects.size(); ++i)
      if (sideEffects[i].object < firstObject)
        return error(sideEffects[i].loc)
               << "a " << baseName
               << " that changes Python state (it runs in backward, whose Python side "
                  "effects tgc does not replay) is not supported";
  SmallVector<Value> results;
  if ((*result)->is(K::None) && body->getNumArguments() > 0)
    results.push_back(body->getArgument(0));
  else if (failed(flattenTensors(*result, results, loc)))
    return failure();
  func::ReturnOp::create(builder, loc, results);
  fn.setFunctionType(builder.getFunctionType(argumentTypes, ValueRange(results).getTypes()));
  return fn;
}

LogicalResult Interpreter::applyGradHooks(Var tensor, ArrayRef<Var> hooks, Location loc) {
  for (const Var &hook : hooks) {
    Value self = heap.get(tensor->object).tensor;
    FailureOr<func::FuncOp> fn =
        traceTemplate(hook, "grad_hook", self.getType(), loc, /*allowSideEffects=*/false);
    if (failed(fn))
      return failure();
    if ((*fn).getNumResults() != 1)
      return error(loc) << "a gradient hook must return one tensor or None";
    Value hooked =
        GradHookOp::create(builder, loc, self, FlatSymbolRefAttr::get(ctx, (*fn).getSymName()));
    heap.mutate(tensor->object).tensor = hooked;
  }
  return success();
}
