// torch.autograd.Function in the bytecode interpreter: `MyFunction.apply(...)` traces
// `forward` and `backward` into template functions tied by one tgc.autograd_function op
// (docs/bytecode.md, docs/training.md).
#include "Interpreter.h"

#include "tgc/Dialect/TgcDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/SaveAndRestore.h"

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

/// What tracing forward leaves for backward and for the op.
struct tgc::py::AutogradTrace {
  std::string className;
  /// apply()'s arguments after the class; the tensors among them are the op's operands
  /// (`operandOf` each input's operand, -1 for the others).
  std::vector<Var> inputs;
  SmallVector<Value> operands;
  SmallVector<int64_t> operandOf;
  /// The template names, `<Class>_forward_K` and `<Class>_backward_K`.
  std::string forwardName, backwardName;
  /// forward's template, its Python result and that result's items (one tensor, or the
  /// items of a tuple or list).
  func::FuncOp forwardFn;
  Var output;
  std::vector<Var> outputItems;
  /// forward's results: the output tensors (`numOutputs`), then the saved ones.
  SmallVector<Value> results;
  int64_t numOutputs = 0;
  /// save_for_backward's values and the other attributes of ctx after forward.
  std::vector<Var> toSave;
  std::vector<std::pair<std::string, Var>> attributes;
  /// The operand each saved result is the storage of, or -1.
  SmallVector<int64_t> savedOperand;
  /// What backward's trace gives the op.
  FlatSymbolRefAttr backwardAttr;
  SmallVector<int64_t> gradientOf, backwardMutates;
};

FailureOr<Var> Interpreter::applyAutogradFunction(CallArguments &arguments, Location loc) {
  std::vector<Var> &args = arguments.positional;
  if (args.empty() || heapKind(heap, args[0]) != H::Class)
    return error(loc) << "autograd.Function.apply() must be called on a Function subclass";
  if (!arguments.keywords.empty())
    return error(loc) << "autograd.Function.apply() takes positional arguments only";
  Var cls = args[0];
  AutogradTrace trace;
  trace.inputs.assign(args.begin() + 1, args.end());
  trace.className = heap.get(cls->object).name;
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

  // The tensor arguments are the op's operands; the others are constants of the trace.
  trace.operandOf.assign(trace.inputs.size(), -1);
  std::vector<Var> needsInputGrad;
  for (auto [i, input] : llvm::enumerate(trace.inputs)) {
    bool needs = false;
    if (input->is(K::Tensor)) {
      trace.operandOf[i] = trace.operands.size();
      trace.operands.push_back(heap.get(input->object).tensor);
      auto type = llvm::cast<BaseTensorType>(trace.operands.back().getType());
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

  unsigned &count = templateNames[trace.className];
  unsigned index = count++;
  trace.forwardName = trace.className + "_forward_" + std::to_string(index);
  trace.backwardName = trace.className + "_backward_" + std::to_string(index);
  Block *callerBlock = builder.getInsertionBlock();
  Block::iterator callerPoint = builder.getInsertionPoint();
  llvm::scope_exit restore([&] { builder.setInsertionPoint(callerBlock, callerPoint); });
  if (failed(
          traceAutogradForward(trace, ctxObject, *forward, *ownSetup ? *setupContext : Var(), loc)))
    return failure();
  // backward(ctx, *grads), when a gradient can flow.
  if (anyNeedsGrad) {
    builder.setInsertionPoint(callerBlock, callerPoint);
    if (failed(traceAutogradBackward(trace, *backward, loc)))
      return failure();
  }

  // The op in the caller; its outputs replace forward's tensors in the returned value.
  builder.setInsertionPoint(callerBlock, callerPoint);
  func::FuncOp forwardFn = trace.forwardFn;
  auto op = AutogradFunctionOp::create(
      builder, loc, forwardFn.getResultTypes(), trace.operands,
      FlatSymbolRefAttr::get(ctx, forwardFn.getSymName()), trace.backwardAttr,
      builder.getI64IntegerAttr(trace.numOutputs), builder.getDenseI64ArrayAttr(trace.gradientOf),
      builder.getDenseI64ArrayAttr(writtenArguments(forwardFn)),
      builder.getDenseI64ArrayAttr(trace.backwardMutates));
  std::vector<Var> replaced;
  unsigned next = 0;
  for (const Var &item : trace.outputItems)
    replaced.push_back(item->is(K::Tensor) ? newTensor(heap, op.getResult(next++)) : item);
  if (trace.output->is(K::Tensor))
    return replaced.front();
  if (heapKind(heap, trace.output) == H::List) {
    return makeList(std::move(replaced));
  }
  return makeTuple(std::move(replaced));
}

/// forward(ctx, *args) -> (outputs..., saved...) over the tensor arguments; with a
/// `setupContext` of the class, forward(*args) then setup_context(ctx, args, output).
LogicalResult Interpreter::traceAutogradForward(AutogradTrace &trace, Var ctxObject, Var forward,
                                                Var setupContext, Location loc) {
  llvm::StringRef className = trace.className;
  func::FuncOp forwardFn =
      createTemplate(builder, loc, trace.forwardName, ValueRange(trace.operands).getTypes());
  trace.forwardFn = forwardFn;
  CallArguments forwardCall;
  if (!setupContext)
    forwardCall.positional.push_back(ctxObject);
  std::vector<Var> templateInputs;
  for (auto [i, input] : llvm::enumerate(trace.inputs))
    templateInputs.push_back(trace.operandOf[i] < 0
                                 ? input
                                 : newTensor(heap, forwardFn.getArgument(trace.operandOf[i])));
  llvm::append_range(forwardCall.positional, templateInputs);
  // What forward and backward raise, only they may catch (raiseException).
  llvm::SaveAndRestore floor(handlerFloor, activeFrames.size());
  FailureOr<Var> output = call(forward, std::move(forwardCall), loc);
  if (failed(output))
    return failure();
  trace.output = *output;
  if (setupContext) {
    CallArguments setup;
    setup.positional = {ctxObject, makeTuple(templateInputs), *output};
    if (failed(call(setupContext, std::move(setup), loc)))
      return failure();
  }

  // The outputs: one tensor, or a tuple/list whose tensors are outputs.
  if ((*output)->is(K::Tensor)) {
    trace.outputItems.push_back(*output);
  } else {
    std::optional<H> kind = heapKind(heap, *output);
    if (!(*output)->is(K::Tuple) && kind != H::List)
      return error(loc) << className << ".forward must return a tensor or a tuple of them for now";
    FailureOr<std::vector<Var>> items = unpack(*output, loc);
    if (failed(items))
      return failure();
    trace.outputItems = std::move(*items);
  }
  SmallVector<Value> &results = trace.results;
  for (const Var &item : trace.outputItems)
    if (item->is(K::Tensor))
      results.push_back(heap.get(item->object).tensor);
  trace.numOutputs = results.size();

  // The saved tensors: save_for_backward's, then tensors stored as ctx attributes.
  const HeapObject &ctxAfter = heap.get(ctxObject->object);
  if (Var saved = ctxAfter.getAttribute(kToSave))
    trace.toSave = saved->items;
  trace.attributes = ctxAfter.attributes;
  for (const Var &saved : trace.toSave)
    if (saved->is(K::Tensor))
      results.push_back(heap.get(saved->object).tensor);
  for (const auto &[attribute, value] : trace.attributes) {
    if (attribute == kToSave)
      continue;
    if (value->is(K::Tensor))
      results.push_back(heap.get(value->object).tensor);
    else if (containsTensor(value))
      return error(loc) << className << ": ctx." << attribute
                        << " holds tensors in a container; store tensors on ctx one by one "
                           "or use ctx.save_for_backward()";
  }
  if (failed(finishTemplate(builder, forwardFn, results, loc, (className + ".forward").str())))
    return failure();
  // The operand each saved result is the storage of (the argument itself, possibly
  // written in place), or -1: backward may write into those.
  for (Value saved : ValueRange(results).drop_front(trace.numOutputs)) {
    BlockArgument arg = storageArgument(forwardFn, saved, /*throughViews=*/false);
    trace.savedOperand.push_back(arg ? static_cast<int64_t>(arg.getArgNumber()) : -1);
  }
  return success();
}

/// backward(ctx, *grads) over (saved..., output grads...): ctx has forward's attributes,
/// with the saved tensors as the template's arguments.
LogicalResult Interpreter::traceAutogradBackward(AutogradTrace &trace, Var backward, Location loc) {
  llvm::StringRef className = trace.className;
  SmallVector<Type> savedTypes(trace.forwardFn.getResultTypes().drop_front(trace.numOutputs));
  SmallVector<Type> backwardTypes(savedTypes);
  for (Value result : ValueRange(trace.results).take_front(trace.numOutputs)) {
    auto type = llvm::cast<BaseTensorType>(result.getType());
    TensorMeta meta = type.getMeta();
    meta.requiresGrad = false;
    backwardTypes.push_back(BaseTensorType::get(ctx, type.isRef(), meta));
  }
  func::FuncOp backwardFn = createTemplate(builder, loc, trace.backwardName, backwardTypes);
  HeapObject backwardState;
  backwardState.kind = H::Instance;
  backwardState.classObject = makeExternal(kCtxClass);
  // A saved operand is one tensor in backward however often it was saved (ctx.buf
  // and save_for_backward(buf)): its first saved argument.
  unsigned argument = 0;
  DenseMap<int64_t, Var> operandTensor;
  auto savedTensor = [&]() {
    int64_t operand = trace.savedOperand[argument];
    Var tensor = newTensor(heap, backwardFn.getArgument(argument++));
    if (operand < 0)
      return tensor;
    return operandTensor.try_emplace(operand, tensor).first->second;
  };
  std::vector<Var> savedTensors;
  for (const Var &saved : trace.toSave)
    savedTensors.push_back(saved->is(K::Tensor) ? savedTensor() : saved);
  for (const auto &[attribute, value] : trace.attributes) {
    if (attribute == kToSave)
      continue;
    backwardState.setAttribute(attribute, value->is(K::Tensor) ? savedTensor() : value);
  }
  backwardState.setAttribute("saved_tensors", makeTuple(savedTensors));
  CallArguments backwardCall;
  backwardCall.positional.push_back(makeObject(newObject(std::move(backwardState))));
  unsigned gradArgument = savedTypes.size();
  for (const Var &item : trace.outputItems)
    backwardCall.positional.push_back(
        item->is(K::Tensor) ? newTensor(heap, backwardFn.getArgument(gradArgument++)) : makeNone());
  llvm::SaveAndRestore floor(handlerFloor, activeFrames.size());
  FailureOr<Var> grads = call(backward, std::move(backwardCall), loc);
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
  const std::vector<Var> &inputs = trace.inputs;
  while (gradItems.size() > inputs.size() && gradItems.back()->is(K::None))
    gradItems.pop_back();
  if (gradItems.size() != inputs.size())
    return error(loc) << className << ".backward returned " << gradItems.size() << " gradients for "
                      << inputs.size() << " inputs";
  SmallVector<Value> gradients;
  for (auto [i, grad] : llvm::enumerate(gradItems)) {
    if (grad->is(K::None))
      continue;
    if (!grad->is(K::Tensor) || trace.operandOf[i] < 0)
      return error(loc) << className << ".backward returned a gradient at position " << i
                        << " for an input that is not a tensor";
    trace.gradientOf.push_back(trace.operandOf[i]);
    gradients.push_back(heap.get(grad->object).tensor);
  }
  if (failed(finishTemplate(builder, backwardFn, gradients, loc, (className + ".backward").str())))
    return failure();
  const SmallVector<int64_t> &savedOperand = trace.savedOperand;
  for (int64_t written : writtenArguments(backwardFn)) {
    if (written >= static_cast<int64_t>(savedOperand.size()) || savedOperand[written] < 0)
      return error(loc) << className << ".backward writes into "
                        << (written >= static_cast<int64_t>(savedOperand.size())
                                ? "a gradient it was given"
                                : "a saved tensor that is not an argument of apply()")
                        << "; only tensors passed to apply() (saved or stored on ctx as "
                           "they are) can be written in backward";
    trace.backwardMutates.push_back(savedOperand[written]);
  }
  trace.backwardAttr = FlatSymbolRefAttr::get(ctx, backwardFn.getSymName());
  return success();
}

//===----------------------------------------------------------------------===//
// Registration: apply, and the methods of ctx
//===----------------------------------------------------------------------===//

static CallResult apply(Interpreter &in, ExternalCall &call) {
  return in.applyAutogradFunction(call.arguments, call.loc);
}

/// The ctx object a method of FunctionCtx is called on; else the call is not the
/// handlers'.
static std::optional<ObjectId> ctxOf(Interpreter &in, const ExternalCall &call) {
  if (call.args.empty() || in.getHeap().kindOf(call.args[0]) != H::Instance)
    return std::nullopt;
  return call.args[0]->object;
}

/// save_for_backward(*tensors): stored in `ctx.to_save`, as PyTorch does.
static CallResult saveForBackward(Interpreter &in, ExternalCall &call) {
  std::optional<ObjectId> ctxObject = ctxOf(in, call);
  if (!ctxObject)
    return CallResult::declined();
  if (!call.arguments.keywords.empty())
    return call.error() << "ctx.save_for_backward() takes tensors only";
  for (const Var &saved : llvm::ArrayRef(call.args).drop_front())
    if (!saved->is(K::Tensor) && !saved->is(K::None))
      return call.error() << "ctx.save_for_backward() takes tensors or None";
  in.getHeap()
      .mutate(*ctxObject)
      .setAttribute(kToSave, makeTuple(std::vector<Var>(call.args.begin() + 1, call.args.end())));
  return makeNone();
}

/// Accepted as no-ops: every output is differentiable here, and gradients that do not
/// reach an output are always materialized as zeros.
static CallResult acceptedAsNoOp(Interpreter &in, ExternalCall &call) {
  if (!ctxOf(in, call))
    return CallResult::declined();
  return makeNone();
}

static CallResult markDirty(Interpreter &in, ExternalCall &call) {
  if (!ctxOf(in, call))
    return CallResult::declined();
  return call.error() << "ctx.mark_dirty(): an autograd.Function that returns an input it "
                         "wrote is not supported (writing an input or buffer in forward or "
                         "backward without returning it is)";
}

static CallResult otherCtxMethod(Interpreter &in, ExternalCall &call) {
  if (!ctxOf(in, call))
    return CallResult::declined();
  return call.error() << "graph break: ctx." << call.name.drop_front(kCtxClass.size() + 1)
                      << "() is not supported";
}

void tgc::py::registerAutogradFunction(CallRegistry &registry) {
  registry.add("torch.autograd.Function.apply", apply);
  registry.add("torch.autograd.function.Function.apply", apply);
  std::string ctxPrefix = (kCtxClass + ".").str();
  registry.add(ctxPrefix + "save_for_backward", saveForBackward);
  registry.add(ctxPrefix + "mark_non_differentiable", acceptedAsNoOp);
  registry.add(ctxPrefix + "set_materialize_grads", acceptedAsNoOp);
  registry.add(ctxPrefix + "mark_dirty", markDirty);
  registry.addPrefix(ctxPrefix, otherCtxMethod);
}
