// tgc-autodiff: the joint forward+backward function from a value-level @forward, by
// reverse-mode differentiation over DifferentiableOpInterface formulas.
#include "tgc/Dialect/Attributes.h"
#include "tgc/Transforms/Passes.h"

#include "JointGraph.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace tgc {
#define GEN_PASS_DEF_AUTODIFFPASS
#include "tgc/Transforms/Passes.h.inc"
} // namespace tgc

using namespace mlir;
using namespace tgc;

namespace {

/// A floating-point tensor: the only values gradients flow through.
bool isDifferentiable(Value v) {
  auto type = llvm::dyn_cast<BaseTensorType>(v.getType());
  return type && llvm::isa<FloatType>(type.getDtype());
}

/// `type` as a gradient or tangent: the same sizes and dtype, not requiring grad.
Type gradientType(Type type) {
  auto tensor = llvm::cast<BaseTensorType>(type);
  TensorMeta meta = tensor.toValue().getMeta();
  meta.requiresGrad = false;
  return BaseTensorType::get(type.getContext(), /*isRef=*/false, meta);
}

StringAttr stringAttrOf(DictionaryAttr attrs, StringRef name) {
  return attrs ? attrs.getAs<StringAttr>(name) : StringAttr();
}

class JointBuilder {
public:
  explicit JointBuilder(func::FuncOp func) : func(func) {}

  LogicalResult run();

private:
  /// Values that depend on an argument that requires grad.
  void propagateNeedsGrad();
  void accumulate(Value value, Value grad, OpBuilder &b, Location loc);
  /// The mutation result attributes (kind, target, `tgc.pass = "backward"`) of a write
  /// `op`'s backward makes into operand `index`: the storage that operand is the value
  /// of must be a graph input, and its value just after `op` must be its final forward
  /// value (eager's backward reads and writes the buffer as it is when backward runs).
  FailureOr<DictionaryAttr> backwardWriteAttrs(Operation *op, unsigned index, func::ReturnOp ret);

  /// The pack/unpack templates of the module's scoped `tgc.saved_tensors_hooks`.
  LogicalResult collectScopedHooks();
  /// Makes the derivative ops of `op` (those after `before`, up to `end`) read `op`'s
  /// operands and results through its scope's hooks, as PyTorch unpacks what an op
  /// saved with the hooks active when it ran.
  LogicalResult readSavedThroughHooks(Operation *op, int64_t scope, Operation *before,
                                      Operation *end);
  /// `unpack(pack(value))` of scope `scope`, built once before `insertBefore`; null
  /// when the scope has no pair for `value`'s dtype.
  FailureOr<Value> hookedValue(int64_t scope, Value value, Operation *insertBefore);
  /// Removes the scope tags and the scoped hooks, which have done their work.
  void eraseScopedHooks();

  func::FuncOp func;
  llvm::DenseSet<Value> needsGrad;
  llvm::DenseMap<Value, Value> grads;
  struct HookPair {
    func::FuncOp pack, unpack;
  };
  /// By scope and the dtype pack takes.
  llvm::DenseMap<std::pair<int64_t, Type>, HookPair> scopedHooks;
  llvm::DenseMap<std::pair<int64_t, Value>, Value> hooked;
};

LogicalResult JointBuilder::collectScopedHooks() {
  auto module = func->getParentOfType<ModuleOp>();
  for (SavedTensorsHooksOp hooks : module.getOps<SavedTensorsHooksOp>()) {
    if (!hooks.getScope())
      continue;
    auto pack = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(hooks, hooks.getPackAttr());
    auto unpack = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(hooks, hooks.getUnpackAttr());
    if (!pack || !unpack || pack.getNumArguments() != 1 || unpack.getNumArguments() != 1)
      return hooks.emitOpError("pack and unpack must be functions of one tensor");
    auto input = llvm::dyn_cast<BaseTensorType>(pack.getArgumentTypes()[0]);
    if (!input)
      return hooks.emitOpError("pack must take a tensor");
    if (!scopedHooks.try_emplace({*hooks.getScope(), input.getDtype()}, HookPair{pack, unpack})
             .second)
      return hooks.emitOpError("is a second pair for scope ")
             << *hooks.getScope() << " and dtype " << input.getDtype();
  }
  return success();
}

FailureOr<Value> JointBuilder::hookedValue(int64_t scope, Value value, Operation *insertBefore) {
  auto [it, inserted] = hooked.try_emplace({scope, value}, Value());
  if (!inserted)
    return it->second;
  auto type = llvm::dyn_cast<BaseTensorType>(value.getType());
  auto pair = type ? scopedHooks.find({scope, type.getDtype()}) : scopedHooks.end();
  if (pair == scopedHooks.end())
    return Value();
  OpBuilder b(insertBefore);
  Location loc = value.getLoc();
  FailureOr<SmallVector<Value>> packed = instantiateFunction(b, loc, pair->second.pack, {value});
  if (failed(packed))
    return failure();
  if (packed->size() != 1 || !llvm::isa<BaseTensorType>(packed->front().getType()))
    return pair->second.pack.emitOpError("must return one tensor");
  FailureOr<SmallVector<Value>> unpacked =
      instantiateFunction(b, loc, pair->second.unpack, *packed);
  if (failed(unpacked))
    return failure();
  auto restored = unpacked->size() == 1
                      ? llvm::dyn_cast<BaseTensorType>(unpacked->front().getType())
                      : BaseTensorType();
  if (!restored || restored.getSizes() != type.getSizes() || restored.getDtype() != type.getDtype())
    return pair->second.unpack.emitOpError("must give back a tensor of the saved value's "
                                           "sizes and dtype (")
           << type << ")";
  hooked[{scope, value}] = unpacked->front();
  return unpacked->front();
}

LogicalResult JointBuilder::readSavedThroughHooks(Operation *op, int64_t scope, Operation *before,
                                                  Operation *end) {
  SmallVector<Operation *> derivative;
  for (Operation *it = before->getNextNode(); it != end; it = it->getNextNode())
    derivative.push_back(it);
  if (derivative.empty())
    return success();
  llvm::SmallPtrSet<Value, 8> primal;
  primal.insert(op->operand_begin(), op->operand_end());
  primal.insert(op->result_begin(), op->result_end());
  for (Operation *user : derivative) {
    // Reading only the sizes keeps nothing alive: nothing is saved for it.
    if (llvm::isa<SymSizeOp, FullLikeOp>(user))
      continue;
    for (OpOperand &use : user->getOpOperands()) {
      if (!primal.contains(use.get()))
        continue;
      FailureOr<Value> value = hookedValue(scope, use.get(), derivative.front());
      if (failed(value))
        return failure();
      if (*value)
        use.set(*value);
    }
  }
  return success();
}

void JointBuilder::eraseScopedHooks() {
  StringRef tagName = SavedTensorsHooksOp::getScopeTagName();
  func.walk([&](Operation *op) { op->removeAttr(tagName); });
  eraseSavedTensorsHooks(func->getParentOfType<ModuleOp>(),
                         [](SavedTensorsHooksOp hooks) { return hooks.getScope().has_value(); });
}

void JointBuilder::propagateNeedsGrad() {
  for (BlockArgument arg : func.getArguments()) {
    auto type = llvm::dyn_cast<BaseTensorType>(arg.getType());
    if (type && type.getMeta().requiresGrad && isDifferentiable(arg))
      needsGrad.insert(arg);
  }
  for (Operation &op : func.getBody().front()) {
    if (llvm::none_of(op.getOperands(), [&](Value v) { return needsGrad.contains(v); }))
      continue;
    for (Value result : op.getResults())
      if (isDifferentiable(result))
        needsGrad.insert(result);
  }
}

void JointBuilder::accumulate(Value value, Value grad, OpBuilder &b, Location loc) {
  auto [it, inserted] = grads.try_emplace(value, grad);
  if (!inserted)
    it->second = AddOp::create(b, loc, it->second, grad, Attribute());
}

FailureOr<DictionaryAttr> JointBuilder::backwardWriteAttrs(Operation *op, unsigned index,
                                                           func::ReturnOp ret) {
  MLIRContext *ctx = func.getContext();
  Value operand = op->getOperand(index);
  // The operand's value once `op` ran: its forward write, if any.
  Value after = operand;
  if (auto function = llvm::dyn_cast<AutogradFunctionOp>(op)) {
    unsigned write = 0;
    for (int64_t written : function.getForwardMutates()) {
      if (written == index)
        after = function.getForwardWrites()[write];
      ++write;
    }
  }
  NamedAttrList attrs;
  attrs.set(attr::kPass, StringAttr::get(ctx, joint::kBackward));
  StringAttr target;
  for (auto [i, value] : llvm::enumerate(ret.getOperands())) {
    DictionaryAttr resultAttrs = func.getResultAttrDict(i);
    StringAttr kind = stringAttrOf(resultAttrs, attr::kKind);
    if (!kind || !joint::isMutationKind(kind.getValue()) || value != after)
      continue;
    attrs.set(attr::kKind, kind);
    target = stringAttrOf(resultAttrs, attr::kTarget);
  }
  auto arg = llvm::dyn_cast<BlockArgument>(operand);
  if (!target && arg && arg.getOwner()->getParentOp() == func) {
    StringAttr name = stringAttrOf(func.getArgAttrDict(arg.getArgNumber()), attr::kName);
    StringAttr kind = stringAttrOf(func.getArgAttrDict(arg.getArgNumber()), attr::kKind);
    bool written = llvm::any_of(llvm::seq(func.getNumResults()), [&](unsigned i) {
      return stringAttrOf(func.getResultAttrDict(i), attr::kTarget) == name;
    });
    if (name && kind && !written) {
      if (kind.getValue() != "buffer" && kind.getValue() != "user_input")
        return op->emitOpError("backward writes into ")
               << kind.getValue() << " '" << name.getValue() << "'";
      target = name;
      attrs.set(attr::kKind,
                StringAttr::get(ctx, kind.getValue() == "buffer" ? "buffer_mutation"
                                                                 : "user_input_mutation"));
    }
  }
  if (!target)
    return op->emitOpError("backward writes into operand ")
           << index << ", which is not a graph input whose final forward value is the one "
           << "the op leaves (the program writes it again after the op, or it is a view or "
              "a temporary): eager's backward would write the buffer as it is then";
  attrs.set(attr::kTarget, target);
  return attrs.getDictionary(ctx);
}

LogicalResult JointBuilder::run() {
  if (!func.getBody().hasOneBlock())
    return func.emitError("tgc-autodiff: @forward must have a single block");
  Block &body = func.getBody().front();
  auto ret = llvm::cast<func::ReturnOp>(body.getTerminator());
  MLIRContext *ctx = func.getContext();
  for (BlockArgument arg : func.getArguments())
    if (auto type = llvm::dyn_cast<BaseTensorType>(arg.getType()); type && type.isRef())
      return func.emitError("tgc-autodiff: @forward must be functionalized first (argument ")
             << arg.getArgNumber() << " is a reference tensor)";
  propagateNeedsGrad();
  if (failed(collectScopedHooks()))
    return failure();

  // One tangent per differentiable user output, in output order.
  SmallVector<Operation *> forwardOps;
  for (Operation &op : body.without_terminator())
    forwardOps.push_back(&op);
  OpBuilder b(ret);
  int64_t userOutput = 0;
  unsigned numArgs = func.getNumArguments();
  SmallVector<std::pair<Value, BlockArgument>> seeds;
  for (auto [i, value] : llvm::enumerate(ret.getOperands())) {
    StringAttr kind = stringAttrOf(func.getResultAttrDict(i), attr::kKind);
    if (!kind || kind.getValue() != "user_output")
      continue;
    int64_t index = userOutput++;
    if (!needsGrad.contains(value))
      continue;
    NamedAttrList attrs;
    attrs.set(attr::kKind, StringAttr::get(ctx, "tangent"));
    attrs.set(attr::kOutput, IntegerAttr::get(IntegerType::get(ctx, 64), index));
    unsigned position = func.getNumArguments();
    if (failed(func.insertArgument(position, gradientType(value.getType()),
                                   attrs.getDictionary(ctx), value.getLoc())))
      return failure();
    seeds.push_back({value, func.getArgument(position)});
  }
  for (auto [value, tangent] : seeds)
    accumulate(value, tangent, b, value.getLoc());

  // Reverse sweep: each op turns its results' gradients into its operands'. Writes its
  // backward makes come out in the order backward runs them.
  SmallVector<std::pair<Value, DictionaryAttr>> backwardWrites;
  for (Operation *op : llvm::reverse(forwardOps)) {
    SmallVector<Value> resultGrads;
    bool anyGrad = false;
    for (Value result : op->getResults()) {
      resultGrads.push_back(grads.lookup(result));
      anyGrad |= static_cast<bool>(resultGrads.back());
    }
    SmallVector<bool> wants;
    for (Value operand : op->getOperands())
      wants.push_back(needsGrad.contains(operand));
    if (!anyGrad || llvm::none_of(wants, [](bool w) { return w; }))
      continue;
    auto differentiable = llvm::dyn_cast<DifferentiableOpInterface>(op);
    if (!differentiable)
      return op->emitOpError("has no derivative formula (needed by --train)");
    SmallVector<Value> operandGrads;
    SmallVector<std::pair<unsigned, Value>> operandWrites;
    Operation *before = ret->getPrevNode();
    if (failed(differentiable.buildVjp(b, resultGrads, wants, operandGrads, operandWrites)))
      return failure();
    for (auto [index, value] : operandWrites) {
      FailureOr<DictionaryAttr> attrs = backwardWriteAttrs(op, index, ret);
      if (failed(attrs))
        return failure();
      backwardWrites.push_back({value, *attrs});
    }
    if (auto scope = op->getAttrOfType<IntegerAttr>(SavedTensorsHooksOp::getScopeTagName()))
      if (failed(readSavedThroughHooks(op, scope.getInt(), before, ret)))
        return failure();
    for (auto [operand, grad] : llvm::zip(op->getOperands(), operandGrads))
      if (grad && needsGrad.contains(operand))
        accumulate(operand, grad, b, op->getLoc());
  }

  // One gradient per argument that requires grad, in argument order.
  SmallVector<Value> results(ret.getOperands());
  SmallVector<DictionaryAttr> resultAttrs;
  for (unsigned i = 0; i < results.size(); ++i)
    resultAttrs.push_back(func.getResultAttrDict(i));
  for (unsigned i = 0; i < numArgs; ++i) {
    BlockArgument arg = func.getArgument(i);
    if (!needsGrad.contains(arg))
      continue;
    Value grad = grads.lookup(arg);
    if (!grad)
      grad = FullLikeOp::create(b, arg.getLoc(), arg, b.getF64FloatAttr(0.0), TypeAttr());
    NamedAttrList attrs;
    attrs.set(attr::kKind, StringAttr::get(ctx, "gradient"));
    if (StringAttr name = stringAttrOf(func.getArgAttrDict(i), attr::kName))
      attrs.set(attr::kTarget, name);
    results.push_back(grad);
    resultAttrs.push_back(attrs.getDictionary(ctx));
  }
  // Then the backward's writes, last (`tgc-place-mutations` versions them after the
  // forward writes of their target).
  for (auto [value, attrs] : backwardWrites) {
    results.push_back(value);
    resultAttrs.push_back(attrs);
  }
  func::ReturnOp::create(b, ret.getLoc(), results);
  ret.erase();
  func.setFunctionType(
      FunctionType::get(ctx, func.getArgumentTypes(), ValueRange(results).getTypes()));
  func.setAllResultAttrs(resultAttrs);
  func.setSymName("joint");

  // Gradient hooks have done their work: forward sees the plain values, and hook
  // functions nothing refers to any more go away.
  SmallVector<func::FuncOp> hooks;
  func.walk([&](GradHookOp op) {
    if (auto hook = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(op, op.getHookAttr()))
      if (!llvm::is_contained(hooks, hook))
        hooks.push_back(hook);
    op.replaceAllUsesWith(op.getSelf());
    op.erase();
  });
  for (func::FuncOp hook : hooks)
    if (hook.isPrivate() && SymbolTable::symbolKnownUseEmpty(hook, func->getParentOp()))
      hook.erase();
  eraseScopedHooks();
  return success();
}

struct AutodiffPass : public tgc::impl::AutodiffPassBase<AutodiffPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto forward = module.lookupSymbol<func::FuncOp>("forward");
    if (!forward) {
      module.emitError("tgc-autodiff: the module has no @forward function");
      return signalPassFailure();
    }
    if (module.lookupSymbol("joint")) {
      module.emitError("tgc-autodiff: the module already has a @joint function");
      return signalPassFailure();
    }
    // The backward would need the symbol's value, which only the forward computes.
    WalkResult unbacked = forward.walk([](BindSymbolOp bind) {
      bind.emitError("tgc-autodiff: training a program with a size from a tensor's value "
                     "(Tensor.item() used as a size) is not supported");
      return WalkResult::interrupt();
    });
    if (unbacked.wasInterrupted())
      return signalPassFailure();
    if (failed(JointBuilder(forward).run()))
      signalPassFailure();
  }
};

} // namespace
