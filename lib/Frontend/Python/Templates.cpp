// Templates in the bytecode interpreter: Python functions traced into module-level
// functions over tensors (hooks, saved-tensor hooks), and gradient hooks on tensors.
#include "Interpreter.h"

#include "tgc/Dialect/TgcDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/SaveAndRestore.h"

using namespace mlir;
using namespace tgc;
using namespace tgc::py;

using H = HeapObject::Kind;
using K = Variable::Kind;

FailureOr<func::FuncOp> Interpreter::traceTemplate(Var function, llvm::StringRef baseName,
                                                   TypeRange argumentTypes, Location loc,
                                                   bool allowSideEffects, bool *changesState) {
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
  size_t firstGuardRead = guardReads.size();
  std::optional<Heap> checkpoint;
  std::set<std::tuple<ObjectId, int, std::string>> writtenCheckpoint;
  llvm::DenseMap<int64_t, Var> traceCheckpoint;
  if (changesState) {
    checkpoint = heap;
    writtenCheckpoint = writtenTargets;
    traceCheckpoint = traceObjects;
  }
  // What the template's function raises, only it may catch (raiseException).
  llvm::SaveAndRestore floor(handlerFloor, activeFrames.size());
  FailureOr<Var> result = this->call(function, std::move(call), loc);
  if (failed(result))
    return failure();
  // A hook runs in backward, after the call: a Python side effect there (on an object
  // that outlives the hook) is not something the forward's replay list can hold.
  if (!allowSideEffects)
    for (size_t i = firstEffect; i < sideEffects.size(); ++i) {
      if (sideEffects[i].object >= firstObject)
        continue;
      if (!changesState)
        return error(sideEffects[i].loc)
               << "a " << baseName
               << " that changes Python state is not supported on a tensor the program "
                  "computes here (it would run in backward, inside the compiled graph; on "
                  "an input or a parameter it runs in Python; compile with "
                  "--allow-graph-breaks to run it between two graphs' backwards)";
      *changesState = true;
      heap.restore(*checkpoint);
      sideEffects.erase(sideEffects.begin() + firstEffect, sideEffects.end());
      guardReads.erase(guardReads.begin() + firstGuardRead, guardReads.end());
      writtenTargets = std::move(writtenCheckpoint);
      traceObjects = std::move(traceCheckpoint);
      fn.erase();
      return func::FuncOp();
    }
  SmallVector<Value> results;
  if ((*result)->is(K::None) && body->getNumArguments() > 0)
    results.push_back(body->getArgument(0));
  else if (failed(flattenTensors(*result, results, loc)))
    return failure();
  func::ReturnOp::create(builder, loc, results);
  fn.setFunctionType(builder.getFunctionType(argumentTypes, ValueRange(results).getTypes()));
  return fn;
}

LogicalResult Interpreter::applyGradHooks(Var tensor, ArrayRef<Var> hooks, Location loc,
                                          HookOrigin origin) {
  bool existing = heap.get(tensor->object).traceId >= 0;
  for (const Var &hook : hooks) {
    Value self = heap.get(tensor->object).tensor;
    bool changesState = false;
    FailureOr<func::FuncOp> fn =
        traceTemplate(hook, "grad_hook", self.getType(), loc, /*allowSideEffects=*/false,
                      existing || canBreakGraph() ? &changesState : nullptr);
    if (failed(fn))
      return failure();
    if (changesState && existing) {
      // Python runs it on the live tensor's gradient, in backward as in eager.
      if (origin == HookOrigin::Program)
        sideEffects.push_back({SideEffect::Kind::RegisterHook, tensor->object,
                               std::to_string(sideEffects.size()), hook, loc});
      continue;
    }
    if (changesState) {
      // On a tensor the program computes: a graph break after which the caller runs it
      // on the gradient, between the backwards of the graphs after and before the break
      // (the hook itself is a `grad_hook` replay action, numbered in program order).
      int64_t number = llvm::count_if(sideEffects, [](const SideEffect &effect) {
        return effect.kind == SideEffect::Kind::GradHook;
      });
      BreakHookOp::create(builder, loc, self, builder.getI64IntegerAttr(number));
      sideEffects.push_back(
          {SideEffect::Kind::GradHook, tensor->object, std::to_string(number), hook, loc});
      continue;
    }
    if ((*fn).getNumResults() != 1)
      return error(loc) << "a gradient hook must return one tensor or None";
    Value hooked =
        GradHookOp::create(builder, loc, self, FlatSymbolRefAttr::get(ctx, (*fn).getSymName()));
    heap.mutate(tensor->object).tensor = hooked;
  }
  return success();
}
