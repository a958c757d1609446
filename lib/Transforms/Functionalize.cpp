// Functionalization: capture-level tensors with views and in-place ops become pure
// value-level ops, with one write-back result per mutated graph input.
#include "tgc/Dialect/Attributes.h"
#include "tgc/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

namespace tgc {
#define GEN_PASS_DEF_FUNCTIONALIZEPASS
#include "tgc/Transforms/Passes.h.inc"
} // namespace tgc

using namespace mlir;
using namespace tgc;

namespace {

/// Rebuilds one function over value tensors. Every capture-level value of the old body
/// is a view (possibly the identity) of a *base*: a function argument or the result of
/// an op that creates storage. Each base has a current value and a version; reading a
/// view replays its view ops on the base's current value, writing one scatters the new
/// value back through the view ops into a new value of the base.
class FunctionRebuilder {
public:
  FunctionRebuilder(func::FuncOp oldFunc) : oldFunc(oldFunc), builder(oldFunc) {}

  FailureOr<func::FuncOp> run();

private:
  /// Rebuilds a branch of a tgc.cond into `newBlock` (a block of the new op).
  explicit FunctionRebuilder(Block *newBlock) : builder(newBlock, newBlock->end()) {}

  void bindArguments(Block &oldBlock, Block &newBlock);
  void bindResults(ValueRange oldResults, ValueRange newResults);
  LogicalResult visit(Operation *op);
  LogicalResult visitCond(CondOp op);
  FailureOr<Value> valueOf(Value old);
  LogicalResult visitInPlace(InPlaceOpInterface op);
  LogicalResult visitReturn(func::ReturnOp op);
  Operation *clonePure(Operation *op);
  FailureOr<Value> materialize(Value ref);
  LogicalResult writeBack(Value ref, Value newValue);
  Value baseOf(Value ref) { return bases.lookup(resolve(ref)); }
  Value resolve(Value ref) {
    while (Value same = sameAs.lookup(ref))
      ref = same;
    return ref;
  }
  Value mapOperand(Value old) {
    return llvm::isa<RefTensorType>(old.getType()) ? Value() : mapping.lookup(old);
  }

  func::FuncOp oldFunc;
  OpBuilder builder;
  IRMapping mapping;                 // non-reference values: old -> new
  DenseMap<Value, Value> bases;      // old reference value -> its base
  DenseMap<Value, Value> sameAs;     // in-place results -> the operand they return
  DenseMap<Value, Value> current;    // base -> its current value
  DenseMap<Value, unsigned> version; // base -> number of writes so far
  DenseMap<Value, std::pair<unsigned, Value>> cache;
  SmallVector<Value> returned;
};

FailureOr<func::FuncOp> FunctionRebuilder::run() {
  MLIRContext *ctx = oldFunc.getContext();
  Block &oldBody = oldFunc.getBody().front();
  SmallVector<Type> argTypes;
  for (BlockArgument arg : oldBody.getArguments()) {
    Type type = arg.getType();
    if (auto ref = llvm::dyn_cast<RefTensorType>(type))
      type = llvm::cast<BaseTensorType>(ref).toValue();
    argTypes.push_back(type);
  }
  auto newFunc = func::FuncOp::create(builder, oldFunc.getLoc(), oldFunc.getName(),
                                      FunctionType::get(ctx, argTypes, {}));
  newFunc->setAttrs(oldFunc->getAttrs());
  newFunc.setFunctionType(FunctionType::get(ctx, argTypes, {}));
  Block *body = newFunc.addEntryBlock();
  builder.setInsertionPointToStart(body);
  bindArguments(oldBody, *body);
  for (Operation &op : oldBody.without_terminator())
    if (failed(visit(&op))) {
      newFunc.erase();
      return failure();
    }
  if (failed(visitReturn(llvm::cast<func::ReturnOp>(oldBody.getTerminator())))) {
    newFunc.erase();
    return failure();
  }
  return newFunc;
}

/// Arguments of the old block: reference ones are bases whose current value is the
/// new block's argument, others map to it.
void FunctionRebuilder::bindArguments(Block &oldBlock, Block &newBlock) {
  for (auto [oldArg, newArg] : llvm::zip(oldBlock.getArguments(), newBlock.getArguments())) {
    if (!llvm::isa<RefTensorType>(oldArg.getType())) {
      mapping.map(oldArg, newArg);
      continue;
    }
    bases[oldArg] = oldArg;
    current[oldArg] = newArg;
  }
}

/// Results of an op that creates storage: reference ones are new bases.
void FunctionRebuilder::bindResults(ValueRange oldResults, ValueRange newResults) {
  for (auto [oldResult, newResult] : llvm::zip(oldResults, newResults)) {
    if (!llvm::isa<RefTensorType>(oldResult.getType())) {
      mapping.map(oldResult, newResult);
      continue;
    }
    bases[oldResult] = oldResult;
    current[oldResult] = newResult;
  }
}

/// The value-level version of an old operand.
FailureOr<Value> FunctionRebuilder::valueOf(Value old) {
  if (Value mapped = mapOperand(old))
    return mapped;
  return materialize(old);
}

/// A tgc.cond: each branch is rebuilt on its own (the regions are isolated, so a branch
/// sees only its arguments), and must not write into its inputs.
LogicalResult FunctionRebuilder::visitCond(CondOp op) {
  SmallVector<Value> operands;
  for (Value operand : op->getOperands()) {
    FailureOr<Value> value = valueOf(operand);
    if (failed(value))
      return failure();
    operands.push_back(*value);
  }
  auto toValueType = [](Type type) -> Type {
    if (auto ref = llvm::dyn_cast<RefTensorType>(type))
      return llvm::cast<BaseTensorType>(ref).toValue();
    return type;
  };
  SmallVector<Type> resultTypes = llvm::map_to_vector(op->getResultTypes(), toValueType);
  size_t numInputs = op.getInputs().size();
  auto cond = CondOp::create(builder, op.getLoc(), resultTypes, operands[0],
                             ArrayRef(operands).slice(1, numInputs),
                             ArrayRef(operands).drop_front(1 + numInputs), op.getSymbolsAttr());
  for (unsigned index = 0; index < 2; ++index) {
    Block &oldBlock = op->getRegion(index).front();
    SmallVector<Type> argTypes = llvm::map_to_vector(oldBlock.getArgumentTypes(), toValueType);
    SmallVector<Location> argLocs(argTypes.size(), op.getLoc());
    Block *newBlock = new Block();
    cond->getRegion(index).push_back(newBlock);
    newBlock->addArguments(argTypes, argLocs);
    FunctionRebuilder branch(newBlock);
    branch.bindArguments(oldBlock, *newBlock);
    for (Operation &inner : oldBlock.without_terminator())
      if (failed(branch.visit(&inner)))
        return failure();
    SmallVector<Value> yielded;
    for (Value value : oldBlock.getTerminator()->getOperands()) {
      FailureOr<Value> newValue = branch.valueOf(value);
      if (failed(newValue))
        return failure();
      yielded.push_back(*newValue);
    }
    YieldOp::create(branch.builder, oldBlock.getTerminator()->getLoc(), yielded);
    for (BlockArgument arg : oldBlock.getArguments())
      if (llvm::isa<RefTensorType>(arg.getType()) && branch.version.lookup(arg) != 0)
        return op.emitOpError("functionalize: the ")
               << (index == 0 ? "then" : "else") << " branch writes into its input #"
               << arg.getArgNumber() << "; branches must not mutate their inputs";
  }
  bindResults(op->getResults(), cond->getResults());
  return success();
}

/// A tgc.view that copies: reshape of a tensor whose storage no view with the new sizes
/// reinterprets (a flatten of a transposed matrix). Its result is a tensor of its own,
/// as in eager, and a write to it reaches nothing else.
static bool viewCopies(Operation *op) {
  auto view = llvm::dyn_cast<ViewOp>(op);
  if (!view)
    return false;
  TensorMeta in = llvm::cast<BaseTensorType>(view.getSelf().getType()).getMeta();
  auto result = llvm::cast<BaseTensorType>(view.getResult().getType());
  return !viewStrides(in.sizes, in.strides, result.getSizes(), op->getContext());
}

LogicalResult FunctionRebuilder::visit(Operation *op) {
  if (auto cond = llvm::dyn_cast<CondOp>(op))
    return visitCond(cond);
  if (auto inPlace = llvm::dyn_cast<InPlaceOpInterface>(op))
    if (!inPlace.getMutatedOperandIndices().empty())
      return visitInPlace(inPlace);
  bool isView = llvm::isa<ViewOpInterface, SplitOp, UnbindOp>(op) && !viewCopies(op);
  if (isView && llvm::isa<RefTensorType>(op->getOperand(0).getType())) {
    // Views are replayed lazily, on the base's value current at the time of use.
    for (Value result : op->getResults())
      bases[result] = baseOf(op->getOperand(0));
    return success();
  }
  Operation *clone = clonePure(op);
  if (!clone)
    return failure();
  bindResults(op->getResults(), clone->getResults());
  return success();
}

/// Replays the view `viewOp` on `source` (a value tensor) with its value-level op: the
/// op itself, or the pure view for a metadata-changing in-place op (`t_` -> `t`).
static Operation *buildValueView(OpBuilder &builder, Operation *viewOp, Value source) {
  StringRef name = viewOp->getName().getStringRef();
  if (auto view = llvm::dyn_cast<ViewOpInterface>(viewOp))
    name = view.getValueViewOpName();
  OperationState state(viewOp->getLoc(), name);
  state.addOperands(source);
  state.addOperands(viewOp->getOperands().drop_front());
  state.addAttributes(viewOp->getAttrDictionary().getValue());
  state.addTypes(viewOp->getResultTypes()); // replaced by the inferred types below
  Operation *clone = builder.create(state);
  if (failed(refreshResultTypes(clone))) {
    clone->erase();
    return nullptr;
  }
  return clone;
}

/// Clones `op` on the value-level versions of its operands; tgc ops get their result
/// types re-inferred (so they become value tensors).
Operation *FunctionRebuilder::clonePure(Operation *op) {
  IRMapping operands;
  for (Value operand : op->getOperands()) {
    if (Value mapped = mapOperand(operand)) {
      operands.map(operand, mapped);
      continue;
    }
    FailureOr<Value> value = materialize(operand);
    if (failed(value))
      return nullptr;
    operands.map(operand, *value);
  }
  if (auto view = llvm::dyn_cast<ViewOpInterface>(op);
      view && view.getValueViewOpName() != op->getName().getStringRef())
    return buildValueView(builder, op, operands.lookup(op->getOperand(0)));
  Operation *clone = builder.clone(*op, operands);
  if (llvm::isa<InferTypeOpInterface>(clone) && clone->getDialect() &&
      llvm::isa<TgcDialect>(clone->getDialect()) && failed(refreshResultTypes(clone)))
    return nullptr;
  // Ops whose results come from elsewhere (tgc.autograd_function: its template) make
  // new storage; their values are the value-level versions of the same types.
  if (!llvm::isa<InferTypeOpInterface>(clone))
    for (Value result : clone->getResults())
      if (auto ref = llvm::dyn_cast<RefTensorType>(result.getType()))
        result.setType(llvm::cast<BaseTensorType>(ref).toValue());
  return clone;
}

FailureOr<Value> FunctionRebuilder::materialize(Value ref) {
  ref = resolve(ref);
  Value base = bases.lookup(ref);
  if (!base)
    return emitError(ref.getLoc(), "functionalize: a tensor with no known storage");
  if (ref == base)
    return current[base];
  unsigned ver = version.lookup(base);
  auto it = cache.find(ref);
  if (it != cache.end() && it->second.first == ver)
    return it->second.second;
  Operation *viewOp = ref.getDefiningOp();
  FailureOr<Value> source = materialize(viewOp->getOperand(0));
  if (failed(source))
    return failure();
  Operation *clone = buildValueView(builder, viewOp, *source);
  if (!clone)
    return failure();
  Value value = clone->getResult(llvm::cast<OpResult>(ref).getResultNumber());
  cache[ref] = {ver, value};
  return value;
}

LogicalResult FunctionRebuilder::writeBack(Value ref, Value newValue) {
  ref = resolve(ref);
  Value base = bases.lookup(ref);
  // diagonal() and as_strided() are views in eager, so a write through one reaches their
  // input; tgc computes them as copies (they have no scatter here), where the write
  // would be lost: refused rather than a wrong answer.
  if (Operation *producer = base ? base.getDefiningOp() : nullptr;
      producer && llvm::isa<DiagonalOp, AsStridedOp>(producer) &&
      llvm::isa<RefTensorType>(producer->getOperand(0).getType()))
    return producer->emitError("writing through the result of ")
           << (llvm::isa<DiagonalOp>(producer) ? "diagonal()" : "as_strided()")
           << " is not supported: in eager it is a view, whose writes reach its input, and tgc "
              "computes it as a copy";
  if (ref == base) {
    current[base] = newValue;
    ++version[base];
    return success();
  }
  Operation *viewOp = ref.getDefiningOp();
  auto view = llvm::dyn_cast<ViewOpInterface>(viewOp);
  if (!view)
    return viewOp->emitOpError("functionalize: cannot write through this view");
  Value source = viewOp->getOperand(0);
  FailureOr<Value> sourceValue = materialize(source);
  if (failed(sourceValue))
    return failure();
  FailureOr<Value> newSource = view.buildScatter(builder, *sourceValue, newValue);
  if (failed(newSource))
    return failure();
  return writeBack(source, *newSource);
}

LogicalResult FunctionRebuilder::visitInPlace(InPlaceOpInterface op) {
  SmallVector<Value> operands;
  for (Value operand : op->getOperands()) {
    if (Value mapped = mapOperand(operand)) {
      operands.push_back(mapped);
      continue;
    }
    FailureOr<Value> value = materialize(operand);
    if (failed(value))
      return failure();
    operands.push_back(*value);
  }
  SmallVector<Value> newValues, results;
  if (failed(op.buildFunctional(builder, operands, newValues, results)))
    return failure();
  SmallVector<unsigned> mutated = op.getMutatedOperandIndices();
  for (auto [index, newValue] : llvm::zip(mutated, newValues))
    if (failed(writeBack(op->getOperand(index), newValue)))
      return failure();
  for (auto [oldResult, newResult] : llvm::zip(op->getResults(), results)) {
    if (!newResult) { // the op returns the tensor it wrote
      sameAs[oldResult] = op->getOperand(mutated.front());
      continue;
    }
    bases[oldResult] = oldResult;
    current[oldResult] = newResult;
  }
  return success();
}

LogicalResult FunctionRebuilder::visitReturn(func::ReturnOp op) {
  SmallVector<Value> values;
  for (Value operand : op.getOperands()) {
    if (Value mapped = mapOperand(operand)) {
      values.push_back(mapped);
      continue;
    }
    FailureOr<Value> value = materialize(operand);
    if (failed(value))
      return failure();
    values.push_back(*value);
  }
  auto newFunc = llvm::cast<func::FuncOp>(builder.getInsertionBlock()->getParentOp());
  SmallVector<DictionaryAttr> resultAttrs;
  for (unsigned i = 0, e = op.getNumOperands(); i < e; ++i)
    resultAttrs.push_back(oldFunc.getResultAttrDict(i));
  // One write-back per mutated graph input, in argument order.
  MLIRContext *ctx = op.getContext();
  for (BlockArgument arg : oldFunc.getArguments()) {
    if (!llvm::isa<RefTensorType>(arg.getType()) || version.lookup(arg) == 0)
      continue;
    auto kind = oldFunc.getArgAttrOfType<StringAttr>(arg.getArgNumber(), attr::kKind);
    auto name = oldFunc.getArgAttrOfType<StringAttr>(arg.getArgNumber(), attr::kName);
    StringRef mutationKind =
        kind && kind.getValue() == "buffer" ? "buffer_mutation" : "user_input_mutation";
    if (kind && (kind.getValue() == "parameter" || kind.getValue() == "constant"))
      return oldFunc.emitError("functionalize: the program writes into ")
             << kind.getValue() << " '" << (name ? name.getValue() : "") << "'";
    values.push_back(current[arg]);
    NamedAttrList attrs;
    attrs.set(attr::kKind, StringAttr::get(ctx, mutationKind));
    if (name)
      attrs.set(attr::kTarget, name);
    resultAttrs.push_back(attrs.getDictionary(ctx));
  }
  func::ReturnOp::create(builder, op.getLoc(), values);
  newFunc.setFunctionType(
      FunctionType::get(ctx, newFunc.getArgumentTypes(), ValueRange(values).getTypes()));
  newFunc.setAllResultAttrs(resultAttrs);
  return success();
}

static bool usesReferences(func::FuncOp func) {
  auto isRef = [](Type t) { return llvm::isa<RefTensorType>(t); };
  if (llvm::any_of(func.getArgumentTypes(), isRef))
    return true;
  WalkResult walk = func.walk([&](Operation *op) {
    return llvm::any_of(op->getResultTypes(), isRef) ? WalkResult::interrupt()
                                                     : WalkResult::advance();
  });
  return walk.wasInterrupted();
}

struct FunctionalizePass : public tgc::impl::FunctionalizePassBase<FunctionalizePass> {
  void runOnOperation() override {
    SmallVector<func::FuncOp> funcs;
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (!func.isExternal() && usesReferences(func))
        funcs.push_back(func);
    for (func::FuncOp func : funcs) {
      if (!func.getBody().hasOneBlock()) {
        func.emitError("functionalize: functions with control flow are not supported yet");
        return signalPassFailure();
      }
      FailureOr<func::FuncOp> rebuilt = FunctionRebuilder(func).run();
      if (failed(rebuilt))
        return signalPassFailure();
      func.erase();
    }
  }
};

} // namespace
