// tgc-autodiff: the joint forward+backward function from a value-level @forward, by
// reverse-mode differentiation over DifferentiableOpInterface formulas.
#include "tgc/Dialect/Attributes.h"
#include "tgc/Transforms/Passes.h"

#include "JointGraph.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/SetVector.h"

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

/// Adds the values of `block` that depend on one already in `needsGrad` (in program
/// order: an op's differentiable results, when one of its operands needs grad).
void propagateThrough(Block &block, llvm::DenseSet<Value> &needsGrad) {
  for (Operation &op : block) {
    if (llvm::none_of(op.getOperands(), [&](Value v) { return needsGrad.contains(v); }))
      continue;
    for (Value result : op.getResults())
      if (isDifferentiable(result))
        needsGrad.insert(result);
  }
}

void accumulateInto(llvm::DenseMap<Value, Value> &grads, Value value, Value grad, OpBuilder &b,
                    Location loc) {
  auto [it, inserted] = grads.try_emplace(value, grad);
  if (!inserted)
    it->second = AddOp::create(b, loc, it->second, grad, Attribute());
}

/// Zeros of `type` (a branch's result that the other branch does not compute).
Value zerosOf(OpBuilder &b, Location loc, Type type) {
  auto tensor = llvm::cast<BaseTensorType>(type);
  TensorMeta meta = tensor.getMeta();
  Attribute zero = llvm::isa<FloatType>(meta.dtype) ? Attribute(b.getF64FloatAttr(0.0))
                   : meta.dtype.isInteger(1)        ? Attribute(b.getBoolAttr(false))
                                                    : Attribute(b.getI64IntegerAttr(0));
  return FullOp::create(b, loc, type, ShapeAttr::get(b.getContext(), meta.sizes), zero,
                        TypeAttr::get(meta.dtype), llvm::dyn_cast_or_null<DeviceAttr>(meta.device));
}

class JointBuilder {
public:
  explicit JointBuilder(func::FuncOp func) : func(func) {}

  LogicalResult run();

private:
  /// Values that depend on an argument that requires grad.
  void propagateNeedsGrad();
  void accumulate(Value value, Value grad, OpBuilder &b, Location loc) {
    accumulateInto(grads, value, grad, b, loc);
  }
  /// The reverse sweep over `ops` (in program order) with `b` at the backward's
  /// insertion point: each op turns its results' gradients in `grads` into its
  /// operands'. `ret` is @forward's return (null inside a cond branch, where backward
  /// writes and saved-tensor hook scopes are errors).
  LogicalResult sweep(ArrayRef<Operation *> ops, OpBuilder &b, const llvm::DenseSet<Value> &needs,
                      llvm::DenseMap<Value, Value> &grads, func::ReturnOp ret);
  /// The derivative of a `tgc.cond`: the op is replaced by one that also returns each
  /// branch's saved values (zeros from the branch not taken), and a second cond on the
  /// same predicate, built with `b`, runs the taken branch's backward on them. Sets
  /// `inputGrads[j]` to the gradient of input j (null where none is wanted).
  LogicalResult differentiateCond(CondOp cond, ArrayRef<Value> resultGrads,
                                  const llvm::DenseSet<Value> &needs, OpBuilder &b,
                                  SmallVectorImpl<Value> &inputGrads);
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
  /// Writes the backward makes into graph inputs, in the order backward runs them.
  SmallVector<std::pair<Value, DictionaryAttr>> backwardWrites;
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
  propagateThrough(func.getBody().front(), needsGrad);
}

LogicalResult JointBuilder::sweep(ArrayRef<Operation *> ops, OpBuilder &b,
                                  const llvm::DenseSet<Value> &needs,
                                  llvm::DenseMap<Value, Value> &grads, func::ReturnOp ret) {
  for (Operation *op : llvm::reverse(ops)) {
    SmallVector<Value> resultGrads;
    bool anyGrad = false;
    for (Value result : op->getResults()) {
      resultGrads.push_back(grads.lookup(result));
      anyGrad |= static_cast<bool>(resultGrads.back());
    }
    SmallVector<bool> wants;
    for (Value operand : op->getOperands())
      wants.push_back(needs.contains(operand));
    if (!anyGrad || llvm::none_of(wants, [](bool w) { return w; }))
      continue;
    if (auto cond = llvm::dyn_cast<CondOp>(op)) {
      SmallVector<Value> inputs(cond.getInputs());
      SmallVector<Value> inputGrads;
      if (failed(differentiateCond(cond, resultGrads, needs, b, inputGrads)))
        return failure();
      for (auto [input, grad] : llvm::zip(inputs, inputGrads))
        if (grad)
          accumulateInto(grads, input, grad, b, input.getLoc());
      continue;
    }
    auto differentiable = llvm::dyn_cast<DifferentiableOpInterface>(op);
    if (!differentiable)
      return op->emitOpError("has no derivative formula (needed by --train)");
    SmallVector<Value> operandGrads;
    SmallVector<std::pair<unsigned, Value>> operandWrites;
    Operation *before = b.getInsertionPoint() == b.getInsertionBlock()->begin()
                            ? nullptr
                            : &*std::prev(b.getInsertionPoint());
    if (failed(differentiable.buildVjp(b, resultGrads, wants, operandGrads, operandWrites)))
      return failure();
    if (!operandWrites.empty() && !ret)
      return op->emitOpError("writes into an operand in backward inside a torch.cond branch, "
                             "which training does not support");
    for (auto [index, value] : operandWrites) {
      FailureOr<DictionaryAttr> attrs = backwardWriteAttrs(op, index, ret);
      if (failed(attrs))
        return failure();
      backwardWrites.push_back({value, *attrs});
    }
    if (auto scope = op->getAttrOfType<IntegerAttr>(SavedTensorsHooksOp::getScopeTagName())) {
      if (!ret)
        return op->emitOpError("is under saved-tensor hooks inside a torch.cond branch, "
                               "which training does not support");
      if (failed(readSavedThroughHooks(op, scope.getInt(), before, ret)))
        return failure();
    }
    for (auto [operand, grad] : llvm::zip(op->getOperands(), operandGrads))
      if (grad && needs.contains(operand))
        accumulateInto(grads, operand, grad, b, op->getLoc());
  }
  return success();
}

LogicalResult JointBuilder::differentiateCond(CondOp cond, ArrayRef<Value> resultGrads,
                                              const llvm::DenseSet<Value> &needs, OpBuilder &b,
                                              SmallVectorImpl<Value> &inputGrads) {
  Location loc = cond.getLoc();
  unsigned numInputs = cond.getInputs().size(), numSizes = cond.getSizes().size();
  SmallVector<Value> tangents;
  SmallVector<unsigned> tangentResults;
  for (auto [i, grad] : llvm::enumerate(resultGrads))
    if (grad) {
      tangents.push_back(grad);
      tangentResults.push_back(i);
    }
  SmallVector<bool> wants;
  SmallVector<Type> gradTypes;
  for (Value input : cond.getInputs()) {
    wants.push_back(needs.contains(input) && isDifferentiable(input));
    if (wants.back())
      gradTypes.push_back(gradientType(input.getType()));
  }

  // Each branch's backward is built into a region of a placeholder cond, whose blocks
  // take the tangents only; it reads the branch's values, and those it reads become
  // the branch's saved values. The real backward cond takes the regions over.
  auto holder = CondOp::create(b, loc, gradTypes, cond.getPred(), tangents, ValueRange{},
                               b.getDenseI64ArrayAttr({}));
  struct Branch {
    Block *backward;
    SmallVector<Value> inputGrads; // per wanted input
    SetVector<Value> saved;        // results of the branch's ops, in first-use order
  };
  Branch branches[2];
  for (unsigned r = 0; r < 2; ++r) {
    Region &region = cond->getRegion(r);
    Block &forward = region.front();
    Branch &branch = branches[r];
    OpBuilder bb(holder);
    branch.backward = bb.createBlock(&holder->getRegion(r), holder->getRegion(r).end(),
                                     ValueRange(tangents).getTypes(),
                                     SmallVector<Location>(tangents.size(), loc));
    llvm::DenseSet<Value> branchNeeds;
    for (unsigned j = 0; j < numInputs; ++j)
      if (wants[j])
        branchNeeds.insert(forward.getArgument(j));
    propagateThrough(forward, branchNeeds);
    llvm::DenseMap<Value, Value> branchGrads;
    Operation *yield = forward.getTerminator();
    for (auto [k, i] : llvm::enumerate(tangentResults)) {
      Value yielded = yield->getOperand(i);
      if (branchNeeds.contains(yielded))
        accumulateInto(branchGrads, yielded, branch.backward->getArgument(k), bb, loc);
    }
    SmallVector<Operation *> ops;
    for (Operation &op : forward.without_terminator())
      ops.push_back(&op);
    if (failed(sweep(ops, bb, branchNeeds, branchGrads, func::ReturnOp())))
      return failure();
    for (unsigned j = 0; j < numInputs; ++j) {
      if (!wants[j])
        continue;
      Value arg = forward.getArgument(j);
      Value grad = branchGrads.lookup(arg);
      if (!grad)
        grad = FullLikeOp::create(bb, loc, arg, bb.getF64FloatAttr(0.0), TypeAttr());
      branch.inputGrads.push_back(grad);
    }
    YieldOp::create(bb, loc, branch.inputGrads);
    // The branch's values the backward reads (not its arguments: the backward cond
    // gets the inputs and sizes again) are saved.
    WalkResult walk = branch.backward->walk([&](Operation *op) {
      for (Value operand : op->getOperands()) {
        if (operand.getParentRegion() != &region || llvm::isa<BlockArgument>(operand))
          continue;
        if (!llvm::isa<BaseTensorType>(operand.getType())) {
          op->emitOpError("reads a number computed inside a torch.cond branch in backward, "
                          "which training does not support");
          return WalkResult::interrupt();
        }
        branch.saved.insert(operand);
      }
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return failure();
  }

  // The inputs either backward reads (its sizes are all passed: they are scalars, and
  // the branch types may use every symbol).
  SmallVector<unsigned> readInputs;
  for (unsigned j = 0; j < numInputs; ++j)
    if (llvm::any_of(llvm::seq(2u), [&](unsigned r) {
          return llvm::any_of(cond->getRegion(r).front().getArgument(j).getUses(),
                              [&](OpOperand &use) { return holder->isAncestor(use.getOwner()); });
        }))
      readInputs.push_back(j);

  // The forward cond also returns both branches' saved values.
  OpBuilder fb(cond);
  SmallVector<Type> forwardTypes(cond.getResultTypes());
  for (Branch &branch : branches)
    for (Value saved : branch.saved)
      forwardTypes.push_back(saved.getType());
  auto forwardCond = CondOp::create(fb, loc, forwardTypes, cond.getPred(), cond.getInputs(),
                                    cond.getSizes(), cond.getSymbolsAttr());
  for (unsigned r = 0; r < 2; ++r) {
    Region &region = forwardCond->getRegion(r);
    region.takeBody(cond->getRegion(r));
    Operation *yield = region.front().getTerminator();
    OpBuilder yb(yield);
    SmallVector<Value> values(yield->getOperands());
    for (unsigned other = 0; other < 2; ++other)
      for (Value saved : branches[other].saved)
        values.push_back(other == r ? saved : zerosOf(yb, loc, saved.getType()));
    YieldOp::create(yb, yield->getLoc(), values);
    yield->erase();
  }
  cond.replaceAllUsesWith(forwardCond.getResults().take_front(cond.getNumResults()));

  // The backward cond: tangents, both branches' saved values, the inputs it reads, then
  // the sizes; the wanted inputs' gradients.
  SmallVector<Value> operands(tangents);
  llvm::append_range(operands, forwardCond.getResults().drop_front(cond.getNumResults()));
  for (unsigned j : readInputs)
    operands.push_back(cond.getInputs()[j]);
  auto backwardCond = CondOp::create(b, loc, gradTypes, cond.getPred(), operands, cond.getSizes(),
                                     cond.getSymbolsAttr());
  unsigned numSaved0 = branches[0].saved.size();
  unsigned firstInput = operands.size() - readInputs.size();
  for (unsigned r = 0; r < 2; ++r) {
    Branch &branch = branches[r];
    Region &region = backwardCond->getRegion(r);
    region.takeBody(holder->getRegion(r));
    Block *block = branch.backward;
    for (Value operand : ValueRange(operands).drop_front(tangents.size()))
      block->addArgument(operand.getType(), loc);
    for (unsigned i = 0; i < numSizes; ++i)
      block->addArgument(b.getI64Type(), loc);
    auto inBlock = [&](OpOperand &use) { return backwardCond->isAncestor(use.getOwner()); };
    unsigned savedBase = tangents.size() + (r == 0 ? 0 : numSaved0);
    for (auto [m, saved] : llvm::enumerate(branch.saved))
      Value(saved).replaceUsesWithIf(block->getArgument(savedBase + m), inBlock);
    Block &forward = forwardCond->getRegion(r).front();
    for (auto [k, j] : llvm::enumerate(readInputs))
      forward.getArgument(j).replaceUsesWithIf(block->getArgument(firstInput + k), inBlock);
    for (unsigned i = 0; i < numSizes; ++i)
      forward.getArgument(numInputs + i)
          .replaceUsesWithIf(block->getArgument(operands.size() + i), inBlock);
  }
  holder.erase();
  b.setInsertionPointAfter(backwardCond);
  unsigned next = 0;
  for (unsigned j = 0; j < numInputs; ++j)
    inputGrads.push_back(wants[j] ? backwardCond.getResult(next++) : Value());
  cond.erase();
  return success();
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
  if (failed(sweep(forwardOps, b, needsGrad, grads, ret)))
    return failure();

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
