// torch.cond in the interpreter: both branches are speculated from one checkpoint and
// traced into the two regions of a `tgc.cond`, whose free values and free size symbols
// are then lifted into operands (docs/bytecode.md, "torch.cond").
#include "Frontend/Common/CondRegions.h"
#include "Interpreter.h"

#include "tgc/Dialect/TgcDialect.h"

#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/SaveAndRestore.h"

using namespace mlir;
using namespace tgc;
using namespace tgc::frontend;
using namespace tgc::py;

using K = Variable::Kind;
using H = HeapObject::Kind;

FailureOr<Var>
Interpreter::mergeBranchResults(Var onTrue, Var onFalse, Location loc,
                                llvm::function_ref<FailureOr<Var>(Var, Var)> mergeTensors) {
  if (onTrue->is(K::Tensor) && onFalse->is(K::Tensor))
    return mergeTensors(onTrue, onFalse);
  bool sequences = (onTrue->is(K::Tuple) && onFalse->is(K::Tuple)) ||
                   (heap.kindOf(onTrue) == H::List && heap.kindOf(onFalse) == H::List);
  if (sequences) {
    FailureOr<std::vector<Var>> a = unpack(onTrue, loc), b = unpack(onFalse, loc);
    if (failed(a) || failed(b))
      return failure();
    if (a->size() != b->size())
      return error(loc) << "torch.cond branches return sequences of different lengths";
    std::vector<Var> merged;
    for (auto [x, y] : llvm::zip(*a, *b)) {
      FailureOr<Var> item = mergeBranchResults(x, y, loc, mergeTensors);
      if (failed(item))
        return failure();
      merged.push_back(*item);
    }
    if (onTrue->is(K::Tuple))
      return makeTuple(std::move(merged));
    return makeList(std::move(merged));
  }
  FailureOr<bool> same = equals(onTrue, onFalse, loc);
  if (failed(same))
    return failure();
  if (!*same)
    return error(loc) << "torch.cond branches return different non-tensor values";
  return onTrue;
}

/// The tensors of one branch's result, in the order mergeBranchResults visits them.
FailureOr<SmallVector<Value>> Interpreter::branchResultTensors(Var result, Location loc) {
  SmallVector<Value> tensors;
  FailureOr<Var> visited = mergeBranchResults(result, result, loc, [&](Var t, Var) {
    tensors.push_back(heap.get(t->object).tensor);
    return FailureOr<Var>(t);
  });
  if (failed(visited))
    return failure();
  return tensors;
}

/// Checks what a speculated branch did to the state that existed before it: no tensor
/// object from before the call may now be a value computed in the branch (an in-place
/// metadata change such as `x.t_()`), and no op in it may write into outside storage.
LogicalResult Interpreter::checkBranchWrites(CondOp cond, Region &region, size_t objectsBefore,
                                             Location loc) {
  if (Operation *write = findOutsideWrite(region)) {
    InFlightDiagnostic diag = error(loc)
                              << "a torch.cond branch writes into a tensor from outside the "
                                 "branch; torch.cond branches must not mutate their inputs";
    diag.attachNote(write->getLoc()) << "the write";
    return diag;
  }
  for (ObjectId id = 0; id < objectsBefore; ++id) {
    const HeapObject &object = heap.get(id);
    Value tensor = object.tensor;
    if (object.kind == H::Tensor && tensor &&
        cond->isAncestor(tensor.getParentRegion()->getParentOp()))
      return error(loc) << "a torch.cond branch changes a tensor from outside the branch in "
                           "place; torch.cond branches must not mutate their inputs";
  }
  return success();
}

/// torch.cond(pred, true_fn, false_fn, operands). A Python predicate picks its branch.
/// A tensor predicate speculates both branches from the same interpreter state (the
/// heap and the side-effect log are checkpointed and restored between them), each
/// traced into a region of one `tgc.cond`; the branches must have the same Python side
/// effects and must not write into tensors from outside.
FailureOr<Var> Interpreter::callCond(CallArguments &arguments, Location loc) {
  std::vector<Var> args = arguments.positional;
  static const char *const kNames[] = {"pred", "true_fn", "false_fn", "operands"};
  args.resize(4);
  for (auto &[keyword, value] : arguments.keywords) {
    auto it = llvm::find(kNames, keyword);
    if (it == std::end(kNames))
      return error(loc) << "torch.cond() got an unexpected keyword argument '" << keyword << "'";
    args[it - std::begin(kNames)] = value;
  }
  if (!args[0] || !args[1] || !args[2])
    return error(loc) << "torch.cond(pred, true_fn, false_fn, operands) needs its first three "
                         "arguments";
  std::vector<Var> operands;
  if (args[3]) {
    FailureOr<std::vector<Var>> unpacked = unpack(args[3], loc);
    if (failed(unpacked))
      return failure();
    operands = std::move(*unpacked);
  }
  if (!args[0]->is(K::Tensor)) {
    FailureOr<bool> pred = truth(args[0], loc);
    if (failed(pred))
      return failure();
    return call(*pred ? args[1] : args[2], CallArguments{operands, {}}, loc);
  }
  Value predicate = heap.get(args[0]->object).tensor;
  auto predType = llvm::cast<BaseTensorType>(predicate.getType());
  if (!llvm::all_of(predType.getSizes(),
                    [](AffineExpr size) { return getConstantSize(size) == 1; }))
    return error(loc) << "torch.cond's predicate must be a tensor with one element";

  // The branches are traced into the regions of a placeholder op, which liftCond
  // replaces by the real one once the results and the free values are known.
  Block *callerBlock = builder.getInsertionBlock();
  Block::iterator callerPoint = builder.getInsertionPoint();
  auto holder = CondOp::create(builder, loc, TypeRange{}, predicate, ValueRange{}, ValueRange{},
                               builder.getDenseI64ArrayAttr({}));
  Block *thenBlock = builder.createBlock(&holder.getThenRegion());
  Block *elseBlock = builder.createBlock(&holder.getElseRegion());
  llvm::scope_exit restoreInsertion([&] { builder.setInsertionPoint(callerBlock, callerPoint); });

  // What the branches raise, only they may catch (raiseException).
  llvm::SaveAndRestore floor(handlerFloor, activeFrames.size());
  Heap checkpoint = heap;
  size_t effectsMark = sideEffects.size();
  llvm::DenseMap<int64_t, Var> traceCheckpoint = traceObjects;
  builder.setInsertionPointToEnd(thenBlock);
  FailureOr<Var> onTrue = call(args[1], CallArguments{operands, {}}, loc);
  if (failed(onTrue) ||
      failed(checkBranchWrites(holder, holder.getThenRegion(), checkpoint.size(), loc)))
    return failure();
  FailureOr<SmallVector<Value>> thenValues = branchResultTensors(*onTrue, loc);
  if (failed(thenValues))
    return failure();
  std::vector<SideEffect> trueEffects(sideEffects.begin() + effectsMark, sideEffects.end());
  // The state each branch leaves in the objects it writes must be the same.
  std::vector<std::pair<ObjectId, HeapObject>> trueStates;
  for (const SideEffect &effect : trueEffects)
    if (llvm::none_of(trueStates, [&](auto &s) { return s.first == effect.object; }))
      trueStates.emplace_back(effect.object, heap.get(effect.object));
  heap.restore(checkpoint);
  sideEffects.erase(sideEffects.begin() + effectsMark, sideEffects.end());
  traceObjects = traceCheckpoint;
  builder.setInsertionPointToEnd(elseBlock);
  FailureOr<Var> onFalse = call(args[2], CallArguments{operands, {}}, loc);
  if (failed(onFalse) ||
      failed(checkBranchWrites(holder, holder.getElseRegion(), checkpoint.size(), loc)))
    return failure();
  llvm::ArrayRef<SideEffect> falseEffects =
      llvm::ArrayRef<SideEffect>(sideEffects).drop_front(effectsMark);
  bool sameEffects =
      trueEffects.size() == falseEffects.size() &&
      llvm::all_of(llvm::zip(trueEffects, falseEffects), [&](auto pair) {
        const SideEffect &a = std::get<0>(pair), &b = std::get<1>(pair);
        return a.kind == b.kind && a.object == b.object && a.name == b.name &&
               ((!a.value && !b.value) || (a.value && b.value && identical(a.value, b.value)));
      });
  auto sameVars = [&](const std::vector<Var> &a, const std::vector<Var> &b) {
    return a.size() == b.size() && llvm::all_of(llvm::zip(a, b), [&](auto pair) {
             return identical(std::get<0>(pair), std::get<1>(pair));
           });
  };
  for (const auto &[id, state] : trueStates) {
    const HeapObject &now = heap.get(id);
    std::vector<Var> a = state.items, b = now.items;
    for (const auto &[key, value] : state.entries)
      a.insert(a.end(), {key, value});
    for (const auto &[key, value] : now.entries)
      b.insert(b.end(), {key, value});
    for (const auto &[name, value] : state.attributes)
      a.insert(a.end(), {makeStr(name), value});
    for (const auto &[name, value] : now.attributes)
      b.insert(b.end(), {makeStr(name), value});
    a.push_back(state.contents ? state.contents : makeNull());
    b.push_back(now.contents ? now.contents : makeNull());
    sameEffects &= sameVars(a, b);
  }
  if (!sameEffects)
    return error(loc) << "torch.cond branches must have the same Python side effects";

  // Pair the results up (same structure, equal non-tensor values) and yield them.
  SmallVector<Value> elseValues;
  SmallVector<Type> resultTypes;
  FailureOr<Var> checked =
      mergeBranchResults(*onTrue, *onFalse, loc, [&](Var t, Var f) -> FailureOr<Var> {
        Value tv = (*thenValues)[elseValues.size()], fv = heap.get(f->object).tensor;
        auto tType = llvm::cast<BaseTensorType>(tv.getType());
        auto fType = llvm::cast<BaseTensorType>(fv.getType());
        std::optional<Type> type = condResultType(tType, fType);
        if (!type)
          return error(loc) << "torch.cond branches return tensors of different sizes or "
                               "dtypes ("
                            << tType << " and " << fType << ")";
        elseValues.push_back(fv);
        resultTypes.push_back(*type);
        return t;
      });
  if (failed(checked))
    return failure();
  builder.setInsertionPointToEnd(thenBlock);
  YieldOp::create(builder, loc, *thenValues);
  builder.setInsertionPointToEnd(elseBlock);
  YieldOp::create(builder, loc, elseValues);

  FailureOr<CondOp> cond = liftCond(builder, holder, resultTypes, loc,
                                    [&](AffineExpr size) { return materializeSize(size, loc); });
  if (failed(cond))
    return failure();
  size_t next = 0;
  return mergeBranchResults(*onTrue, *onFalse, loc, [&](Var t, Var f) -> FailureOr<Var> {
    HeapObject tensor;
    tensor.kind = H::Tensor;
    tensor.tensor = cond->getResult(next++);
    Var result = makeTensorObject(newObject(std::move(tensor)));
    if (t->number != Variable::Number::None && t->number == f->number) {
      Variable marked = *result;
      marked.number = t->number;
      result = makeVar(std::move(marked));
    }
    return result;
  });
}

static CallResult cond(Interpreter &in, ExternalCall &call) {
  return in.callCond(call.arguments, call.loc);
}

void tgc::py::registerCond(CallRegistry &registry) { registry.add("torch.cond", cond); }
