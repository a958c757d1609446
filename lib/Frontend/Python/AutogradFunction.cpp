// torch.autograd.Function in the bytecode interpreter: `MyFunction.apply(...)` traces
// `forward` and `backward` into template functions tied by one tgc.autograd_function op
// (docs/bytecode.md, docs/training.md).
#include "Interpreter.h"

#include "tgc/Dialect/TgcDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace tgc;
using namespace tgc::frontend;
using namespace tgc::py;

using K = Variable::Kind;
using H = HeapObject::Kind;

namespace {
/// The class of `ctx` objects, whose methods (`save_for_backward`, ...) come here.
constexpr llvm::StringLiteral kCtxClass = "torch.autograd.function.FunctionCtx";
/// The attribute `save_for_backward` stores its tensors in (as PyTorch's FunctionCtx).
constexpr llvm::StringLiteral kToSave = "to_save";
} // namespace

/// The kind of heap object `v` refers to, if any.
static std::optional<H> heapKind(const Heap &heap, const Var &v) {
  if (!v->is(K::Object))
    return std::nullopt;
  return heap.get(v->object).kind;
}

/// A fresh tensor object over SSA value `value`.
static Var newTensor(Heap &heap, Value value) {
  HeapObject tensor;
  tensor.kind = H::Tensor;
  tensor.tensor = value;
  return makeTensorObject(heap.allocate(std::move(tensor)));
}

/// Whether the items of tuple, list or dict `value` include a tensor.
bool Interpreter::containsTensor(const Var &value) const {
  std::vector<Var> items;
  if (value->is(K::Tuple))
    items = value->items;
  else if (heapKind(heap, value) == H::List)
    items = heap.get(value->object).items;
  else if (heapKind(heap, value) == H::Dict)
    for (const auto &entry : heap.get(value->object).entries)
      items.push_back(entry.second);
  return llvm::any_of(items, [](const Var &item) { return item->is(K::Tensor); });
}

/// A new module-level private function before the one `builder` inserts into, with an
/// entry block over `argumentTypes`; `builder` is moved into that block.
static func::FuncOp createTemplate(OpBuilder &builder, Location loc, llvm::StringRef name,
                                   TypeRange argumentTypes) {
  auto enclosing = builder.getInsertionBlock()->getParent()->getParentOfType<func::FuncOp>();
  builder.setInsertionPoint(enclosing);
  auto fn = func::FuncOp::create(builder, loc, name, builder.getFunctionType(argumentTypes, {}));
  fn.setPrivate();
  builder.setInsertionPointToEnd(fn.addEntryBlock());
  return fn;
}

/// Ends template `fn` with `results`; an error if its body uses a value from outside
/// (a tensor the Function reached other than through its arguments).
static LogicalResult finishTemplate(OpBuilder &builder, func::FuncOp fn, ValueRange results,
                                    Location loc, llvm::StringRef what) {
  func::ReturnOp::create(builder, loc, results);
  fn.setFunctionType(builder.getFunctionType(fn.getArgumentTypes(), results.getTypes()));
  WalkResult walk = fn.walk([&](Operation *op) {
    for (Value operand : op->getOperands())
      if (!fn->isAncestor(operand.getParentRegion()->getParentOp()))
        return WalkResult::interrupt();
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return emitError(loc) << what
                          << " uses a tensor that is not one of its arguments (a global, "
                             "parameter or closure); pass it to apply() instead";
  return success();
}

/// The argument of `fn` whose storage `value` is: the argument itself, an in-place op's
/// result that returns the tensor it wrote and, with `throughViews`, a view of it. Null
/// for other values.
static BlockArgument storageArgument(func::FuncOp fn, Value value, bool throughViews) {
  while (value) {
    if (auto arg = llvm::dyn_cast<BlockArgument>(value))
      return arg.getOwner() == &fn.getBody().front() ? arg : BlockArgument();
    value = aliasedSource(value, throughViews);
  }
  return BlockArgument();
}

/// The arguments of `fn` its body writes into (directly or through views), increasing:
/// the ones functionalization gives a write-back result, in that order.
static SmallVector<int64_t> writtenArguments(func::FuncOp fn) {
  llvm::SmallSetVector<int64_t, 4> written;
  fn.walk([&](InPlaceOpInterface op) {
    for (unsigned index : op.getMutatedOperandIndices())
      if (BlockArgument arg = storageArgument(fn, op->getOperand(index), true))
        written.insert(arg.getArgNumber());
  });
  SmallVector<int64_t> sorted(written.begin(), written.end());
  llvm::sort(sorted);
  return sorted;
}

FailureOr<Var> Interpreter::callAutogradFunction(llvm::StringRef name, CallArguments &arguments,
                                                 Location loc, bool &handled) {
  handled = true;
  std::vector<Var> &args = arguments.positional;
  if (name == "torch.autograd.Function.apply" ||
      name == "torch.autograd.function.Function.apply")
    return applyAutogradFunction(arguments, loc);
  if (!name.consume_front(kCtxClass) || !name.consume_front(".") || args.empty() ||
      heapKind(heap, args[0]) != H::Instance) {
    handled = false;
    return failure();
  }
  Var ctxObject = args[0];
  if (name == "save_for_backward") {
    if (!arguments.keywords.empty())
      return error(loc) << "ctx.save_for_backward() takes tensors only";
    for (const Var &saved : llvm::ArrayRef(args).drop_front())
      if (!saved->is(K::Tensor) && !saved->is(K::None))
        return error(loc) << "ctx.save_for_backward() takes tensors or None";
    heap.mutate(ctxObject->object)
        .setAttribute(kToSave, makeTuple(std::vector<Var>(args.begin() + 1, args.end())));
    return makeNone();
  }
  // Accepted as no-ops: every output is differentiable here, and gradients that do not
  // reach an output are always materialized as zeros.
  if (name == "mark_non_differentiable" || name == "set_materialize_grads")
    return makeNone();
  if (name == "mark_dirty")
    return error(loc) << "ctx.mark_dirty(): an autograd.Function that returns an input it "
                         "wrote is not supported (writing an input or buffer in forward or "
                         "backward without returning it is)";
  return error(loc) << "graph break: ctx." << name << "() is not supported";
}

FailureOr<Var> Interpreter::applyAutogradFunction(CallArguments &arguments, Location loc) {
  std::vector<Var> &args = arguments.positional;
  if (args.empty() || heapKind(heap, args[0]) != H::Class)
    return error(loc) << "autograd.Function.apply() must be called on a Function subclass";
  if (!arguments.keywords.empty())
    return error(loc) << "autograd.Function.apply() takes positional arguments only";
  Var cls = args[0];
  std::vector<Var> inputs(args.begin() + 1, args.end());
  std::string className = heap.get(cls->object).name;
  FailureOr<Var> forward = getAttribute(cls, "forward", loc);
  FailureOr<Var> backward = failed(forward) ? forward : getAttribute(cls, "backward", loc);
  if (failed(backward))
    return failure();
  FailureOr<Var> setupContext = lookupAttribute(cls, "setup_context", loc);
  if (failed(setupContext))
    return failure();
  // `setup_context` defined by the class (not the base's): forward takes no ctx.
  FailureOr<Var> ownSetup = lookupInClass(cls, "setup_context");
  if (failed(ownSetup))
    return failure();
  bool separateSetup = static_cast<bool>(*ownSetup);

  // The tensor arguments are the op's operands; the others are constants of the trace.
  SmallVector<Value> operands;
  SmallVector<int64_t> operandOf(inputs.size(), -1);
  std::vector<Var> needsInputGrad;
  for (auto [i, input] : llvm::enumerate(inputs)) {
    bool needs = false;
    if (input->is(K::Tensor)) {
      operandOf[i] = operands.size();
      operands.push_back(heap.get(input->object).tensor);
      auto type = llvm::cast<BaseTensorType>(operands.back().getType());
      needs = type.getMeta().requiresGrad && llvm::isa<FloatType>(type.getDtype());
    }
    needsInputGrad.push_back(makeBool(needs));
  }
  bool anyNeedsGrad = llvm::any_of(needsInputGrad, [](const Var &v) { return v->boolValue; });

  HeapObject ctxState;
  ctxState.kind = H::Instance;
  ctxState.classObject = makeExternal(kCtxClass);
  ctxState.setAttribute("needs_input_grad", makeTuple(needsInputGrad));
  Var ctxObject = makeObject(newObject(std::move(ctxState)));

  // forward(ctx, *args) -> (outputs..., saved...) over the tensor arguments.
  unsigned &count = templateNames[className];
  unsigned index = count++;
  std::string forwardName = className + "_forward_" + std::to_string(index);
  std::string backwardName = className + "_backward_" + std::to_string(index);
  Block *callerBlock = builder.getInsertionBlock();
  Block::iterator callerPoint = builder.getInsertionPoint();
  llvm::scope_exit restore([&] { builder.setInsertionPoint(callerBlock, callerPoint); });
  func::FuncOp forwardFn =
      createTemplate(builder, loc, forwardName, ValueRange(operands).getTypes());
  CallArguments forwardCall;
  if (!separateSetup)
    forwardCall.positional.push_back(ctxObject);
  std::vector<Var> templateInputs;
  for (auto [i, input] : llvm::enumerate(inputs))
    templateInputs.push_back(operandOf[i] < 0
                                 ? input
                                 : newTensor(heap, forwardFn.getArgument(operandOf[i])));
  llvm::append_range(forwardCall.positional, templateInputs);
  FailureOr<Var> output = call(*forward, std::move(forwardCall), loc);
  if (failed(output))
    return failure();
  if (separateSetup) {
    CallArguments setup;
    setup.positional = {ctxObject, makeTuple(templateInputs), *output};
    if (failed(call(*setupContext, std::move(setup), loc)))
      return failure();
  }

  // The outputs: one tensor, or a tuple/list whose tensors are outputs.
  bool singleOutput = (*output)->is(K::Tensor);
  std::vector<Var> outputItems;
  if (singleOutput) {
    outputItems.push_back(*output);
  } else {
    std::optional<H> kind = heapKind(heap, *output);
    if (!(*output)->is(K::Tuple) && kind != H::List)
      return error(loc) << className
                        << ".forward must return a tensor or a tuple of them for now";
    FailureOr<std::vector<Var>> items = unpack(*output, loc);
    if (failed(items))
      return failure();
    outputItems = std::move(*items);
  }
  SmallVector<Value> results;
  for (const Var &item : outputItems)
    if (item->is(K::Tensor))
      results.push_back(heap.get(item->object).tensor);
  int64_t numOutputs = results.size();

  // The saved tensors: save_for_backward's, then tensors stored as ctx attributes.
  const HeapObject &ctxAfter = heap.get(ctxObject->object);
  std::vector<Var> toSave;
  if (Var saved = ctxAfter.getAttribute(kToSave))
    toSave = saved->items;
  std::vector<std::pair<std::string, Var>> attributes = ctxAfter.attributes;
  for (const Var &saved : toSave)
    if (saved->is(K::Tensor))
      results.push_back(heap.get(saved->object).tensor);
  for (const auto &[attribute, value] : attributes) {
    if (attribute == kToSave)
      continue;
    if (value->is(K::Tensor))
      results.push_back(heap.get(value->object).tensor);
    else if (containsTensor(value))
      return error(loc) << className << ": ctx." << attribute
                        << " holds tensors in a container; store tensors on ctx one by one "
                           "or use ctx.save_for_backward()";
  }
  if (failed(finishTemplate(builder, forwardFn, results, loc, className + ".forward")))
    return failure();
  SmallVector<int64_t> forwardMutates = writtenArguments(forwardFn);
  // The operand each saved result is the storage of (the argument itself, possibly
  // written in place), or -1: backward may write into those.
  SmallVector<int64_t> savedOperand;
  for (Value saved : ValueRange(results).drop_front(numOutputs)) {
    BlockArgument arg = storageArgument(forwardFn, saved, /*throughViews=*/false);
    savedOperand.push_back(arg ? static_cast<int64_t>(arg.getArgNumber()) : -1);
  }
  SmallVector<Type> savedTypes(forwardFn.getResultTypes().drop_front(numOutputs));

  // backward(ctx, *grads) over (saved..., output grads...), when a gradient can flow.
  FlatSymbolRefAttr backwardAttr;
  SmallVector<int64_t> gradientOf, backwardMutates;
  if (anyNeedsGrad) {
    SmallVector<Type> backwardTypes(savedTypes);
    for (Value result : ValueRange(results).take_front(numOutputs)) {
      auto type = llvm::cast<BaseTensorType>(result.getType());
      TensorMeta meta = type.getMeta();
      meta.requiresGrad = false;
      backwardTypes.push_back(BaseTensorType::get(ctx, type.isRef(), meta));
    }
    builder.setInsertionPoint(callerBlock, callerPoint);
    func::FuncOp backwardFn = createTemplate(builder, loc, backwardName, backwardTypes);
    // ctx in backward: the forward's attributes, saved tensors as the template's.
    HeapObject backwardState;
    backwardState.kind = H::Instance;
    backwardState.classObject = makeExternal(kCtxClass);
    // A saved operand is one tensor in backward however often it was saved (ctx.buf
    // and save_for_backward(buf)): its first saved argument.
    unsigned argument = 0;
    DenseMap<int64_t, Var> operandTensor;
    auto savedTensor = [&]() {
      int64_t operand = savedOperand[argument];
      Var tensor = newTensor(heap, backwardFn.getArgument(argument++));
      if (operand < 0)
        return tensor;
      return operandTensor.try_emplace(operand, tensor).first->second;
    };
    std::vector<Var> savedTensors;
    for (const Var &saved : toSave)
      savedTensors.push_back(saved->is(K::Tensor) ? savedTensor() : saved);
    for (const auto &[attribute, value] : attributes) {
      if (attribute == kToSave)
        continue;
      backwardState.setAttribute(attribute, value->is(K::Tensor) ? savedTensor() : value);
    }
    backwardState.setAttribute("saved_tensors", makeTuple(savedTensors));
    CallArguments backwardCall;
    backwardCall.positional.push_back(makeObject(newObject(std::move(backwardState))));
    unsigned gradArgument = savedTypes.size();
    for (const Var &item : outputItems)
      backwardCall.positional.push_back(
          item->is(K::Tensor) ? newTensor(heap, backwardFn.getArgument(gradArgument++))
                              : makeNone());
    FailureOr<Var> grads = call(*backward, std::move(backwardCall), loc);
    if (failed(grads))
      return failure();
    std::vector<Var> gradItems;
    if ((*grads)->is(K::Tuple) || heapKind(heap, *grads) == H::List) {
      FailureOr<std::vector<Var>> items = unpack(*grads, loc);
      if (failed(items))
        return failure();
      gradItems = std::move(*items);
    } else {
      gradItems.push_back(*grads);
    }
    // PyTorch accepts extra trailing Nones.
    while (gradItems.size() > inputs.size() && gradItems.back()->is(K::None))
      gradItems.pop_back();
    if (gradItems.size() != inputs.size())
      return error(loc) << className << ".backward returned " << gradItems.size()
                        << " gradients for " << inputs.size() << " inputs";
    SmallVector<Value> gradients;
    for (auto [i, grad] : llvm::enumerate(gradItems)) {
      if (grad->is(K::None))
        continue;
      if (!grad->is(K::Tensor) || operandOf[i] < 0)
        return error(loc) << className << ".backward returned a gradient at position " << i
                          << " for an input that is not a tensor";
      gradientOf.push_back(operandOf[i]);
      gradients.push_back(heap.get(grad->object).tensor);
    }
    if (failed(finishTemplate(builder, backwardFn, gradients, loc, className + ".backward")))
      return failure();
    for (int64_t written : writtenArguments(backwardFn)) {
      if (written >= static_cast<int64_t>(savedOperand.size()) || savedOperand[written] < 0)
        return error(loc) << className << ".backward writes into "
                          << (written >= static_cast<int64_t>(savedOperand.size())
                                  ? "a gradient it was given"
                                  : "a saved tensor that is not an argument of apply()")
                          << "; only tensors passed to apply() (saved or stored on ctx as "
                             "they are) can be written in backward";
      backwardMutates.push_back(savedOperand[written]);
    }
    backwardAttr = FlatSymbolRefAttr::get(ctx, backwardFn.getSymName());
  }

  // The op in the caller; its outputs replace forward's tensors in the returned value.
  builder.setInsertionPoint(callerBlock, callerPoint);
  auto op = AutogradFunctionOp::create(
      builder, loc, forwardFn.getResultTypes(), operands,
      FlatSymbolRefAttr::get(ctx, forwardFn.getSymName()), backwardAttr,
      builder.getI64IntegerAttr(numOutputs), builder.getDenseI64ArrayAttr(gradientOf),
      builder.getDenseI64ArrayAttr(forwardMutates), builder.getDenseI64ArrayAttr(backwardMutates));
  std::vector<Var> replaced;
  unsigned next = 0;
  for (const Var &item : outputItems)
    replaced.push_back(item->is(K::Tensor) ? newTensor(heap, op.getResult(next++)) : item);
  if (singleOutput)
    return replaced.front();
  if (heapKind(heap, *output) == H::List) {
    return makeList(std::move(replaced));
  }
  return makeTuple(std::move(replaced));
}
