// tgc ops: verifiers, and the view / in-place interfaces functionalization relies on.
#include "tgc/Dialect/TgcDialect.h"

#include "tgc/Dialect/TensorMeta.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"

#include <cmath>

using namespace mlir;
using namespace tgc;

#define GET_OP_CLASSES
#include "tgc/Dialect/TgcOps.cpp.inc"

//===----------------------------------------------------------------------===//
// Verifiers
//===----------------------------------------------------------------------===//

LogicalResult GeluOp::verify() {
  if (getApproximate() != "none" && getApproximate() != "tanh")
    return emitOpError("approximate must be 'none' or 'tanh', got '") << getApproximate() << "'";
  return success();
}

LogicalResult DivOp::verify() {
  std::optional<StringRef> mode = getRoundingMode();
  if (mode && *mode != "trunc" && *mode != "floor")
    return emitOpError("rounding_mode must be 'trunc' or 'floor', got '") << *mode << "'";
  return success();
}

/// Bitwise ops take integer and bool operands (tensors or scalars) only.
static LogicalResult verifyBitwise(Operation *op) {
  for (Value operand : op->getOperands()) {
    Type type = operand.getType();
    if (auto tensor = llvm::dyn_cast<BaseTensorType>(type))
      type = tensor.getDtype();
    if (!llvm::isa<IntegerType>(type))
      return op->emitOpError("takes integer or bool operands, got ") << type;
  }
  return success();
}
LogicalResult BitwiseAndOp::verify() { return verifyBitwise(*this); }
LogicalResult BitwiseOrOp::verify() { return verifyBitwise(*this); }
LogicalResult BitwiseXorOp::verify() { return verifyBitwise(*this); }
LogicalResult BitwiseLeftShiftOp::verify() { return verifyBitwise(*this); }
LogicalResult BitwiseRightShiftOp::verify() { return verifyBitwise(*this); }
LogicalResult BitwiseNotOp::verify() { return verifyBitwise(*this); }

LogicalResult ScatterReduceOp::verify() {
  if (!llvm::is_contained({"sum", "prod", "mean", "amax", "amin", "add", "multiply"}, getReduce()))
    return emitOpError("reduce must be sum, prod, mean, amax, amin, add or multiply, got '")
           << getReduce() << "'";
  return success();
}

/// Whether every size of `type` is the constant 1 (a one-element tensor).
static bool hasOneElement(BaseTensorType type) {
  return llvm::all_of(type.getSizes(), [](AffineExpr size) { return getConstantSize(size) == 1; });
}

LogicalResult BreakBranchOp::verify() {
  auto type = cast<BaseTensorType>(getCondition().getType());
  if (!hasOneElement(type))
    return emitOpError("condition must have exactly one element, got ") << type;
  return success();
}

LogicalResult BindSymbolOp::verify() {
  auto type = cast<BaseTensorType>(getValue().getType());
  if (!hasOneElement(type))
    return emitOpError("value must have exactly one element, got ") << type;
  auto integer = dyn_cast<IntegerType>(type.getDtype());
  if (!integer || integer.getWidth() == 1)
    return emitOpError("value must be an integer tensor, got ") << type;
  if (static_cast<int64_t>(getSymbol()) < 0)
    return emitOpError("symbol must not be negative");
  return success();
}

LogicalResult CondOp::verify() {
  auto predType = cast<BaseTensorType>(getPred().getType());
  if (!hasOneElement(predType))
    return emitOpError("predicate must have exactly one element, got ") << predType;
  ArrayRef<int64_t> symbols = getSymbols();
  if (symbols.size() != getSizes().size())
    return emitOpError("has ") << getSizes().size() << " sizes but " << symbols.size()
                               << " symbols";
  for (auto [i, symbol] : llvm::enumerate(symbols)) {
    if (symbol < 0)
      return emitOpError("symbol #") << i << " is negative";
    if (llvm::is_contained(symbols.take_front(i), symbol))
      return emitOpError("lifts symbol s") << symbol << " more than once";
  }
  return success();
}

LogicalResult CondOp::verifyRegions() {
  SmallVector<Type> argTypes(getInputs().getTypes());
  argTypes.append(getSizes().size(), IntegerType::get(getContext(), 64));
  ArrayRef<int64_t> lifted = getSymbols();
  for (auto [index, region] : llvm::enumerate(getRegions())) {
    StringRef name = index == 0 ? "then" : "else";
    Block &block = region->front();
    if (TypeRange(block.getArgumentTypes()) != TypeRange(argTypes))
      return emitOpError("the ") << name << " region's arguments must be the inputs' "
                                 << "types, then one i64 per size";
    auto yield = dyn_cast<YieldOp>(block.getTerminator());
    if (!yield)
      return emitOpError("the ") << name << " region must end in tgc.yield";
    if (yield.getValues().size() != getNumResults())
      return yield.emitOpError("yields ") << yield.getValues().size() << " values, the cond has "
                                          << getNumResults() << " results";
    for (auto [i, value, result] : llvm::enumerate(yield.getValues(), getResults())) {
      auto type = dyn_cast<BaseTensorType>(value.getType());
      auto resultType = cast<BaseTensorType>(result.getType());
      if (!type || type.isRef() != resultType.isRef() || type.getSizes() != resultType.getSizes() ||
          type.getDtype() != resultType.getDtype())
        return yield.emitOpError("value #")
               << i << " has type " << value.getType()
               << ", which differs from the result's sizes, dtype or form " << resultType;
    }
    // Every size symbol the branch's types mention must be lifted: the branch is a
    // subgraph that binds them itself.
    SmallVector<unsigned> used;
    for (Type type : block.getArgumentTypes())
      collectSymbols(type, used);
    region->walk([&](Operation *op) {
      if (op->getParentOfType<CondOp>() != *this)
        return;
      for (Type type : op->getResultTypes())
        collectSymbols(type, used);
      for (Region &nested : op->getRegions())
        for (Block &b : nested)
          for (Type type : b.getArgumentTypes())
            collectSymbols(type, used);
    });
    for (unsigned symbol : used)
      if (!llvm::is_contained(lifted, static_cast<int64_t>(symbol)))
        return emitOpError("the ") << name << " region uses size symbol s" << symbol
                                   << ", which is not lifted into `sizes`";
  }
  return success();
}

/// Checks one argument of a `tgc.break_call`: a constant, a tuple of arguments, or
/// `{tensor = i}` naming an operand.
static LogicalResult verifyBreakCallArgument(BreakCallOp op, Attribute arg) {
  if (isa<UnitAttr, BoolAttr, IntegerAttr, FloatAttr, StringAttr>(arg))
    return success();
  if (auto tuple = dyn_cast<ArrayAttr>(arg)) {
    for (Attribute item : tuple)
      if (failed(verifyBreakCallArgument(op, item)))
        return failure();
    return success();
  }
  auto dict = dyn_cast<DictionaryAttr>(arg);
  if (dict && dict.size() == 2 && dict.getAs<StringAttr>("class") && dict.getAs<ArrayAttr>("items"))
    return verifyBreakCallArgument(op, dict.get("items"));
  auto index = dict ? dict.getAs<IntegerAttr>("tensor") : IntegerAttr();
  auto number = dict ? dict.getAs<StringAttr>("number") : StringAttr();
  if (number && number.getValue() != "float" && number.getValue() != "int" &&
      number.getValue() != "bool")
    return op.emitOpError("argument's number must be float, int or bool, got ") << number;
  if (!index || dict.size() != 1 + (number ? 1 : 0))
    return op.emitOpError("argument must be a constant, an array, {class = \"name\", items = "
                          "[...]} or {tensor = i}, got ")
           << arg;
  if (index.getInt() < 0 || index.getInt() >= int64_t(op.getTensors().size()))
    return op.emitOpError("argument names tensor ")
           << index.getInt() << " of " << op.getTensors().size();
  return success();
}

LogicalResult BreakCallOp::verify() {
  for (Attribute arg : getArgs())
    if (failed(verifyBreakCallArgument(*this, arg)))
      return failure();
  for (NamedAttribute kwarg : getKwargs())
    if (failed(verifyBreakCallArgument(*this, kwarg.getValue())))
      return failure();
  return success();
}

LogicalResult BreakHookOp::verify() {
  if (int64_t hook = getHookAttr().getInt(); hook < 0)
    return emitOpError("hook number must be non-negative, got ") << hook;
  return success();
}

LogicalResult BreakModuleHookOp::verify() {
  if (getStage() != "input" && getStage() != "output")
    return emitOpError("stage must be \"input\" or \"output\", got \"") << getStage() << "\"";
  if (int64_t hook = getHookAttr().getInt(); hook < 0)
    return emitOpError("hook number must be non-negative, got ") << hook;
  if (getResults().getTypes() != getTensors().getTypes())
    return emitOpError("results must have the types of the operands");
  ArrayRef<int64_t> positions = getPositions();
  if (positions.size() != getTensors().size())
    return emitOpError("has ") << getTensors().size() << " tensors but " << positions.size()
                               << " positions";
  int64_t arity = getArityAttr().getInt();
  for (size_t i = 0; i < positions.size(); ++i)
    if (positions[i] < 0 || positions[i] >= arity || (i > 0 && positions[i] <= positions[i - 1]))
      return emitOpError("positions must increase within [0, arity = ") << arity << ")";
  return success();
}

LogicalResult ConvolutionOp::verify() {
  auto input = llvm::cast<BaseTensorType>(getInput().getType());
  auto weight = llvm::cast<BaseTensorType>(getWeight().getType());
  int64_t groups = getGroups();
  if (groups < 1)
    return emitOpError("groups must be positive, got ") << groups;
  std::optional<int64_t> inChannels = getConstantSize(input.getSizes()[1]);
  std::optional<int64_t> perGroup = getConstantSize(weight.getSizes()[getTransposed() ? 0 : 1]);
  if (!getTransposed() && inChannels && perGroup && *inChannels != *perGroup * groups)
    return emitOpError("input has ")
           << *inChannels << " channels but weight expects " << *perGroup * groups;
  return success();
}

LogicalResult BatchNormOp::verify() {
  if (getTraining() && !getRunningMean() && getFunctional())
    return emitOpError("the functional form needs running statistics");
  if (!getTraining() && !getRunningMean())
    return emitOpError("eval mode needs running statistics");
  return success();
}

template <typename OpTy> static LogicalResult verifyInPlaceTarget(OpTy op) {
  if (!llvm::isa<RefTensorType>(op.getSelf().getType()))
    return op.emitOpError("writes its operand, which must be a capture-level !tgc.tensor");
  return success();
}

LogicalResult AddInPlaceOp::verify() { return verifyInPlaceTarget(*this); }
LogicalResult SubInPlaceOp::verify() { return verifyInPlaceTarget(*this); }
LogicalResult MulInPlaceOp::verify() { return verifyInPlaceTarget(*this); }
LogicalResult DivInPlaceOp::verify() { return verifyInPlaceTarget(*this); }

LogicalResult AvgPool2dOp::verify() {
  if (std::optional<uint64_t> divisor = getDivisorOverride(); divisor && *divisor == 0)
    return emitOpError("divisor_override must be positive");
  return success();
}

LogicalResult AvgPool3dOp::verify() {
  if (std::optional<uint64_t> divisor = getDivisorOverride(); divisor && *divisor == 0)
    return emitOpError("divisor_override must be positive");
  return success();
}

LogicalResult AvgPool2dBackwardOp::verify() {
  if (std::optional<uint64_t> divisor = getDivisorOverride(); divisor && *divisor == 0)
    return emitOpError("divisor_override must be positive");
  return success();
}

LogicalResult CrossEntropyLossOp::verify() {
  double smoothing = getLabelSmoothing().convertToDouble();
  if (!(smoothing >= 0 && smoothing <= 1))
    return emitOpError("label_smoothing must be in [0, 1], got ") << smoothing;
  return success();
}

LogicalResult EmbeddingBackwardOp::verify() {
  int64_t padding = getPaddingIdx();
  if (padding >= static_cast<int64_t>(getNumWeights()))
    return emitOpError("padding_idx ")
           << padding << " is not below num_weights " << getNumWeights();
  return success();
}

LogicalResult GlobalOp::verify() {
  StringRef kind = getKind();
  if (kind != "parameter" && kind != "buffer" && kind != "constant")
    return emitOpError("kind must be parameter, buffer or constant, got '") << kind << "'";
  auto type = llvm::dyn_cast<BaseTensorType>(getType());
  if (!type)
    return emitOpError("type must be a tgc tensor type");
  auto shaped = llvm::cast<ShapedType>(getInitialValue().getType());
  if (shaped.getElementType() != type.getDtype() ||
      SmallVector<int64_t>(shaped.getShape()) != type.getStaticSizes())
    return emitOpError("initial value of type ")
           << shaped << " does not match the global's type " << type;
  return success();
}

//===----------------------------------------------------------------------===//
// ViewOpInterface: writing a view back into its base
//===----------------------------------------------------------------------===//

static ShapeAttr shapeOf(Value v) {
  return ShapeAttr::get(v.getContext(), llvm::cast<BaseTensorType>(v.getType()).getSizes());
}

FailureOr<Value> ViewOp::buildScatter(OpBuilder &b, Value base, Value newView) {
  return ViewOp::create(b, getLoc(), newView, shapeOf(base)).getResult();
}

FailureOr<Value> SqueezeOp::buildScatter(OpBuilder &b, Value base, Value newView) {
  return ViewOp::create(b, getLoc(), newView, shapeOf(base)).getResult();
}

FailureOr<Value> PermuteOp::buildScatter(OpBuilder &b, Value, Value newView) {
  ArrayRef<int64_t> dims = getDims();
  int64_t rank = dims.size();
  SmallVector<int64_t> inverse(rank);
  for (int64_t i = 0; i < rank; ++i)
    inverse[*normalizeDim(dims[i], rank)] = i;
  return PermuteOp::create(b, getLoc(), newView, inverse).getResult();
}

FailureOr<Value> TransposeOp::buildScatter(OpBuilder &b, Value, Value newView) {
  return TransposeOp::create(b, getLoc(), newView, getDim0(), getDim1()).getResult();
}

FailureOr<Value> TOp::buildScatter(OpBuilder &b, Value, Value newView) {
  return TOp::create(b, getLoc(), newView).getResult();
}

FailureOr<Value> ExpandOp::buildScatter(OpBuilder &, Value, Value) {
  return emitOpError("cannot write through an expanded view: its elements alias each other");
}

FailureOr<Value> UnsqueezeOp::buildScatter(OpBuilder &b, Value base, Value newView) {
  return ViewOp::create(b, getLoc(), newView, shapeOf(base)).getResult();
}

FailureOr<Value> SliceOp::buildScatter(OpBuilder &b, Value base, Value newView) {
  return SliceScatterOp::create(b, getLoc(), base, newView, getDim(), getStartAttr(), getEndAttr(),
                                getStep())
      .getResult();
}

FailureOr<Value> SelectOp::buildScatter(OpBuilder &b, Value base, Value newView) {
  return SelectScatterOp::create(b, getLoc(), base, newView, getDim(), getIndex()).getResult();
}

FailureOr<Value> TInPlaceOp::buildScatter(OpBuilder &b, Value, Value newView) {
  return TOp::create(b, getLoc(), newView).getResult();
}

FailureOr<Value> TransposeInPlaceOp::buildScatter(OpBuilder &b, Value, Value newView) {
  return TransposeOp::create(b, getLoc(), newView, getDim0(), getDim1()).getResult();
}

FailureOr<Value> SqueezeInPlaceOp::buildScatter(OpBuilder &b, Value base, Value newView) {
  return ViewOp::create(b, getLoc(), newView, shapeOf(base)).getResult();
}

FailureOr<Value> UnsqueezeInPlaceOp::buildScatter(OpBuilder &b, Value base, Value newView) {
  return ViewOp::create(b, getLoc(), newView, shapeOf(base)).getResult();
}

#define TGC_METADATA_INPLACE(InPlace)                                                              \
  StringRef InPlace::getValueViewOpName() { return getFunctionalOpName(); }
TGC_METADATA_INPLACE(TInPlaceOp)
TGC_METADATA_INPLACE(TransposeInPlaceOp)
TGC_METADATA_INPLACE(SqueezeInPlaceOp)
TGC_METADATA_INPLACE(UnsqueezeInPlaceOp)
#undef TGC_METADATA_INPLACE

FailureOr<Value> AliasOp::buildScatter(OpBuilder &, Value, Value newView) { return newView; }

FailureOr<Value> DetachOp::buildScatter(OpBuilder &, Value, Value newView) { return newView; }

//===----------------------------------------------------------------------===//
// InPlaceOpInterface: pure equivalents of in-place ops
//===----------------------------------------------------------------------===//

/// Re-infers an op's result types after it was created generically.
static LogicalResult refreshTypes(Operation *op) {
  auto infer = llvm::cast<InferTypeOpInterface>(op);
  SmallVector<Type> types;
  if (failed(infer.inferReturnTypes(op->getContext(), op->getLoc(), op->getOperands(),
                                    op->getAttrDictionary(), op->getPropertiesStorage(),
                                    op->getRegions(), types)))
    return failure();
  for (auto [result, type] : llvm::zip(op->getResults(), types))
    result.setType(type);
  return success();
}

/// Converts `value` to `target`'s dtype and sizes, as a write into `target` does.
static Value castToTarget(OpBuilder &b, Location loc, Value value, Value target) {
  auto targetType = llvm::cast<BaseTensorType>(target.getType());
  auto valueType = llvm::cast<BaseTensorType>(value.getType());
  if (valueType.getSizes() != targetType.getSizes())
    value = ExpandOp::create(b, loc, value, shapeOf(target)).getResult();
  if (valueType.getDtype() != targetType.getDtype())
    value = ToDTypeOp::create(b, loc, value, TypeAttr::get(targetType.getDtype())).getResult();
  return value;
}

/// The functional op `name` on `operands` with `attrs`, its result type inferred.
static FailureOr<Value> createFunctional(OpBuilder &b, Location loc, StringRef name,
                                         ValueRange operands, ArrayRef<NamedAttribute> attrs) {
  OperationState state(loc, name);
  state.addOperands(operands);
  state.addAttributes(attrs);
  state.addTypes(operands[0].getType()); // replaced by the inferred type below
  Operation *functional = b.create(state);
  if (failed(refreshTypes(functional)))
    return failure();
  return functional->getResult(0);
}

/// The `alpha` attribute of a binary op, if it has one.
static SmallVector<NamedAttribute> alphaOf(Operation *op) {
  SmallVector<NamedAttribute> attrs;
  if (Attribute alpha = op->getAttr("alpha"))
    attrs.push_back(NamedAttribute(StringAttr::get(op->getContext(), "alpha"), alpha));
  return attrs;
}

template <typename FunctionalOp, typename InPlaceOp>
static LogicalResult buildFunctionalBinary(InPlaceOp op, OpBuilder &b, ValueRange operands,
                                           SmallVectorImpl<Value> &newValues,
                                           SmallVectorImpl<Value> &results) {
  FailureOr<Value> result = createFunctional(b, op.getLoc(), FunctionalOp::getOperationName(),
                                             {operands[0], operands[1]}, alphaOf(op));
  if (failed(result))
    return failure();
  newValues.push_back(castToTarget(b, op.getLoc(), *result, operands[0]));
  results.push_back(nullptr);
  return success();
}

#define TGC_INPLACE_BINARY(InPlace, Functional)                                                    \
  SmallVector<unsigned> InPlace::getMutatedOperandIndices() { return {0}; }                        \
  LogicalResult InPlace::buildFunctional(OpBuilder &b, ValueRange operands,                        \
                                         SmallVectorImpl<Value> &newValues,                        \
                                         SmallVectorImpl<Value> &results) {                        \
    return buildFunctionalBinary<Functional>(*this, b, operands, newValues, results);              \
  }
TGC_INPLACE_BINARY(AddInPlaceOp, AddOp)
TGC_INPLACE_BINARY(SubInPlaceOp, SubOp)
TGC_INPLACE_BINARY(MulInPlaceOp, MulOp)
TGC_INPLACE_BINARY(DivInPlaceOp, DivOp)
#undef TGC_INPLACE_BINARY

/// `self.op_()`: the functional op (by name) on the same operands and attributes.
template <typename InPlaceOp>
static LogicalResult buildFunctionalUnary(InPlaceOp op, OpBuilder &b, ValueRange operands,
                                          SmallVectorImpl<Value> &newValues,
                                          SmallVectorImpl<Value> &results) {
  FailureOr<Value> result = createFunctional(b, op.getLoc(), InPlaceOp::getFunctionalOpName(),
                                             operands, op->getAttrDictionary().getValue());
  if (failed(result))
    return failure();
  newValues.push_back(castToTarget(b, op.getLoc(), *result, operands[0]));
  results.push_back(nullptr);
  return success();
}

#define TGC_INPLACE_UNARY(InPlace)                                                                 \
  SmallVector<unsigned> InPlace::getMutatedOperandIndices() { return {0}; }                        \
  LogicalResult InPlace::buildFunctional(OpBuilder &b, ValueRange operands,                        \
                                         SmallVectorImpl<Value> &newValues,                        \
                                         SmallVectorImpl<Value> &results) {                        \
    return buildFunctionalUnary(*this, b, operands, newValues, results);                           \
  }
TGC_INPLACE_UNARY(ReluInPlaceOp)
TGC_INPLACE_UNARY(DetachInPlaceOp)
TGC_INPLACE_UNARY(SigmoidInPlaceOp)
TGC_INPLACE_UNARY(TanhInPlaceOp)
TGC_INPLACE_UNARY(SiluInPlaceOp)
TGC_INPLACE_UNARY(HardtanhInPlaceOp)
TGC_INPLACE_UNARY(HardsigmoidInPlaceOp)
TGC_INPLACE_UNARY(HardswishInPlaceOp)
TGC_INPLACE_UNARY(LeakyReluInPlaceOp)
TGC_INPLACE_UNARY(DropoutInPlaceOp)
TGC_INPLACE_UNARY(BernoulliInPlaceOp)
TGC_INPLACE_UNARY(MaskedFillInPlaceOp)
TGC_INPLACE_UNARY(IndexPutInPlaceOp)
TGC_INPLACE_UNARY(ClampInPlaceOp)
#undef TGC_INPLACE_UNARY

SmallVector<unsigned> CopyInPlaceOp::getMutatedOperandIndices() { return {0}; }
LogicalResult CopyInPlaceOp::buildFunctional(OpBuilder &b, ValueRange operands,
                                             SmallVectorImpl<Value> &newValues,
                                             SmallVectorImpl<Value> &results) {
  newValues.push_back(castToTarget(b, getLoc(), operands[1], operands[0]));
  results.push_back(nullptr);
  return success();
}

SmallVector<unsigned> FillInPlaceOp::getMutatedOperandIndices() { return {0}; }
LogicalResult FillInPlaceOp::buildFunctional(OpBuilder &b, ValueRange operands,
                                             SmallVectorImpl<Value> &newValues,
                                             SmallVectorImpl<Value> &results) {
  Attribute value = getValueAttr() ? getValueAttr() : b.getI64IntegerAttr(0);
  newValues.push_back(FullLikeOp::create(b, getLoc(), operands[0], value, TypeAttr()).getResult());
  results.push_back(nullptr);
  return success();
}

/// Writes `result` (an out= op's functional result) into `out`: same sizes required,
/// converted to `out`'s dtype.
static LogicalResult writeOutResult(Operation *op, OpBuilder &b, Value result, Value out,
                                    SmallVectorImpl<Value> &newValues,
                                    SmallVectorImpl<Value> &results) {
  auto resultType = llvm::cast<BaseTensorType>(result.getType());
  auto outType = llvm::cast<BaseTensorType>(out.getType());
  if (resultType.getSizes() != outType.getSizes())
    return op->emitOpError("out= with a resize is not supported: the result has sizes ")
           << ShapeAttr::get(op->getContext(), resultType.getSizes()) << ", out has "
           << ShapeAttr::get(op->getContext(), outType.getSizes());
  newValues.push_back(castToTarget(b, op->getLoc(), result, out));
  results.push_back(nullptr);
  return success();
}

template <typename FunctionalOp, typename OutOp>
static LogicalResult buildFunctionalOutBinary(OutOp op, OpBuilder &b, ValueRange operands,
                                              SmallVectorImpl<Value> &newValues,
                                              SmallVectorImpl<Value> &results) {
  FailureOr<Value> result = createFunctional(b, op.getLoc(), FunctionalOp::getOperationName(),
                                             {operands[0], operands[1]}, alphaOf(op));
  if (failed(result))
    return failure();
  return writeOutResult(op, b, *result, operands[2], newValues, results);
}

#define TGC_OUT_BINARY(Out, Functional)                                                            \
  SmallVector<unsigned> Out::getMutatedOperandIndices() {                                          \
    return {getOutMutable().getOperandNumber()};                                                   \
  }                                                                                                \
  LogicalResult Out::buildFunctional(OpBuilder &b, ValueRange operands,                            \
                                     SmallVectorImpl<Value> &newValues,                            \
                                     SmallVectorImpl<Value> &results) {                            \
    return buildFunctionalOutBinary<Functional>(*this, b, operands, newValues, results);           \
  }
TGC_OUT_BINARY(AddOutOp, AddOp)
TGC_OUT_BINARY(SubOutOp, SubOp)
TGC_OUT_BINARY(MulOutOp, MulOp)
TGC_OUT_BINARY(DivOutOp, DivOp)
#undef TGC_OUT_BINARY

/// `op(self, out=out)`: the functional op (by name) on self, written into out.
template <typename OutOp>
static LogicalResult buildFunctionalOutUnary(OutOp op, OpBuilder &b, ValueRange operands,
                                             SmallVectorImpl<Value> &newValues,
                                             SmallVectorImpl<Value> &results) {
  FailureOr<Value> result = createFunctional(b, op.getLoc(), OutOp::getFunctionalOpName(),
                                             operands[0], op->getAttrDictionary().getValue());
  if (failed(result))
    return failure();
  return writeOutResult(op, b, *result, operands[1], newValues, results);
}

#define TGC_OUT_UNARY(Out)                                                                         \
  SmallVector<unsigned> Out::getMutatedOperandIndices() { return {1}; }                            \
  LogicalResult Out::buildFunctional(OpBuilder &b, ValueRange operands,                            \
                                     SmallVectorImpl<Value> &newValues,                            \
                                     SmallVectorImpl<Value> &results) {                            \
    return buildFunctionalOutUnary(*this, b, operands, newValues, results);                        \
  }
TGC_OUT_UNARY(SigmoidOutOp)
TGC_OUT_UNARY(TanhOutOp)
TGC_OUT_UNARY(ExpOutOp)
#undef TGC_OUT_UNARY

SmallVector<unsigned> BatchNormOp::getMutatedOperandIndices() {
  if (!getTraining() || getFunctional() || !getRunningMean())
    return {};
  auto index = [](OpOperand &operand) { return operand.getOperandNumber(); };
  return {index(getRunningMeanMutable()[0]), index(getRunningVarMutable()[0])};
}

LogicalResult BatchNormOp::buildFunctional(OpBuilder &b, ValueRange operands,
                                           SmallVectorImpl<Value> &newValues,
                                           SmallVectorImpl<Value> &results) {
  auto operandAt = [&](OpOperand &operand) { return operands[operand.getOperandNumber()]; };
  auto optional = [&](MutableOperandRange range) {
    return range.empty() ? Value() : operandAt(range[0]);
  };
  bool mutates = !getMutatedOperandIndices().empty();
  auto functional =
      BatchNormOp::create(b, getLoc(), operandAt(getInputMutable()), optional(getWeightMutable()),
                          optional(getBiasMutable()), optional(getRunningMeanMutable()),
                          optional(getRunningVarMutable()), getTraining(), getMomentum(), getEps(),
                          /*functional=*/mutates);
  for (unsigned i = 0; i < 3; ++i)
    results.push_back(functional.getResult(i));
  if (mutates) {
    // The functional form's statistics are f32 for bf16/f16 inputs (ATen's opmath);
    // written in place they take the running buffers' dtype, as ATen's copy does.
    auto into = [&](Value v, OpOperand &target) -> Value {
      Type dtype = llvm::cast<BaseTensorType>(operandAt(target).getType()).getDtype();
      if (llvm::cast<BaseTensorType>(v.getType()).getDtype() == dtype)
        return v;
      return ToDTypeOp::create(b, getLoc(), v, TypeAttr::get(dtype));
    };
    newValues.push_back(into(functional.getResult(3), getRunningMeanMutable()[0]));
    newValues.push_back(into(functional.getResult(4), getRunningVarMutable()[0]));
  }
  return success();
}

//===----------------------------------------------------------------------===//
// autograd_function
//===----------------------------------------------------------------------===//

unsigned AutogradFunctionOp::getNumForwardWrites() {
  return llvm::count_if(getForwardMutates(), [&](int64_t index) {
    return index >= 0 && index < static_cast<int64_t>(getInputs().size()) &&
           !llvm::isa<RefTensorType>(getInputs()[index].getType());
  });
}

/// `indices` are operand indices of `op` (below `numInputs`), each listed once, and
/// increasing when `increasing`; an error naming `what` otherwise.
static LogicalResult verifyOperandIndices(AutogradFunctionOp op, llvm::StringRef what,
                                          ArrayRef<int64_t> indices, size_t numInputs,
                                          bool increasing) {
  for (auto [i, index] : llvm::enumerate(indices)) {
    if (index < 0 || index >= static_cast<int64_t>(numInputs))
      return op.emitOpError() << what << " lists " << index << ", which is not an operand index";
    if (increasing && i > 0 && index <= indices[i - 1])
      return op.emitOpError() << what << " must list operand indices in increasing order, got "
                              << index << " after " << indices[i - 1];
    if (llvm::is_contained(indices.take_front(i), index))
      return op.emitOpError() << what << " lists operand " << index << " twice";
  }
  return success();
}

LogicalResult AutogradFunctionOp::verify() {
  size_t numInputs = getInputs().size();
  if (failed(verifyOperandIndices(*this, "gradient_of", getGradientOf(), numInputs, true)) ||
      failed(
          verifyOperandIndices(*this, "forward_mutates", getForwardMutates(), numInputs, true)) ||
      failed(
          verifyOperandIndices(*this, "backward_mutates", getBackwardMutates(), numInputs, false)))
    return failure();
  int64_t numOutputs = getNumOutputs();
  int64_t numFixed = numOutputs + getNumForwardWrites();
  if (numOutputs < 0 || numFixed > static_cast<int64_t>(getNumResults()))
    return emitOpError("num_outputs (")
           << numOutputs << ") plus the forward writes (" << getNumForwardWrites()
           << ") must be at most the number of results (" << getNumResults() << ")";
  if (!getBackwardFnAttr() && !getGradientOf().empty())
    return emitOpError("gradient_of must be empty without a backward function");
  if (!getBackwardFnAttr() && !getBackwardMutates().empty())
    return emitOpError("backward_mutates must be empty without a backward function");
  return success();
}

/// `fn`'s signature has `numArgs` arguments and `numResults` results, or an error.
static LogicalResult verifyTemplate(AutogradFunctionOp op, func::FuncOp fn, FlatSymbolRefAttr name,
                                    size_t numArgs, size_t numResults) {
  if (fn.getNumArguments() != numArgs || fn.getNumResults() != numResults)
    return op.emitOpError() << name << " must take " << numArgs << " arguments and return "
                            << numResults << " results, has " << fn.getNumArguments() << " and "
                            << fn.getNumResults();
  return success();
}

LogicalResult AutogradFunctionOp::verifySymbolUses(SymbolTableCollection &symbols) {
  size_t numSaved = getSaved().size();
  auto forward = symbols.lookupNearestSymbolFrom<func::FuncOp>(*this, getForwardFnAttr());
  if (!forward)
    return emitOpError() << getForwardFnAttr() << " is not a function";
  if (failed(
          verifyTemplate(*this, forward, getForwardFnAttr(), getInputs().size(), getNumResults())))
    return failure();
  FlatSymbolRefAttr name = getBackwardFnAttr();
  if (!name)
    return success();
  auto backward = symbols.lookupNearestSymbolFrom<func::FuncOp>(*this, name);
  if (!backward)
    return emitOpError() << name << " is not a function";
  // A template over reference tensors writes into its arguments in place; its value-level
  // version returns the written values after the gradients.
  bool capture = llvm::any_of(backward.getArgumentTypes(),
                              [](Type type) { return llvm::isa<RefTensorType>(type); });
  return verifyTemplate(*this, backward, name, numSaved + getNumOutputs(),
                        getGradientOf().size() + (capture ? 0 : getBackwardMutates().size()));
}

SmallVector<unsigned> AutogradFunctionOp::getMutatedOperandIndices() {
  SmallVector<unsigned> indices;
  for (int64_t index : getForwardMutates())
    if (llvm::isa<RefTensorType>(getInputs()[index].getType()))
      indices.push_back(index);
  return indices;
}

/// The value-level op: the same templates, one more result per written operand.
LogicalResult AutogradFunctionOp::buildFunctional(OpBuilder &b, ValueRange operands,
                                                  SmallVectorImpl<Value> &newValues,
                                                  SmallVectorImpl<Value> &results) {
  SmallVector<Type> types;
  for (Type type : getResultTypes())
    types.push_back(llvm::cast<BaseTensorType>(type).toValue());
  SmallVector<unsigned> written = getMutatedOperandIndices();
  for (unsigned index : written)
    types.push_back(llvm::cast<BaseTensorType>(getInputs()[index].getType()).toValue());
  auto op = AutogradFunctionOp::create(
      b, getLoc(), types, operands, getForwardFnAttr(), getBackwardFnAttr(), getNumOutputsAttr(),
      getGradientOfAttr(), getForwardMutatesAttr(), getBackwardMutatesAttr());
  llvm::append_range(results, op.getResults().drop_back(written.size()));
  llvm::append_range(newValues, op.getResults().take_back(written.size()));
  return success();
}

Value tgc::aliasedSource(Value ref, bool throughViews) {
  Operation *def = ref.getDefiningOp();
  if (!def)
    return Value();
  if (throughViews && isa<ViewOpInterface, SplitOp, UnbindOp>(def) &&
      isa<RefTensorType>(def->getOperand(0).getType()))
    return def->getOperand(0);
  auto inPlace = dyn_cast<InPlaceOpInterface>(def);
  SmallVector<unsigned> written =
      inPlace ? inPlace.getMutatedOperandIndices() : SmallVector<unsigned>();
  if (written.empty() || def->getOperand(written.front()).getType() != ref.getType())
    return Value();
  return def->getOperand(written.front());
}

std::optional<double> ScaledDotProductAttentionOp::resolvedScale() {
  if (FloatAttr scale = getScaleAttr())
    return scale.getValueAsDouble();
  auto q = llvm::cast<BaseTensorType>(getQuery().getType());
  if (std::optional<int64_t> embed = getConstantSize(q.getSizes().back()))
    return 1.0 / std::sqrt(static_cast<double>(*embed));
  return std::nullopt;
}

Value ScaledDotProductAttentionOp::buildScores(OpBuilder &b) {
  std::optional<double> scale = resolvedScale();
  if (!scale || getEnableGqa())
    return Value();
  Location loc = getLoc();
  MLIRContext *ctx = b.getContext();
  auto q = llvm::cast<BaseTensorType>(getQuery().getType());
  auto k = llvm::cast<BaseTensorType>(getKey().getType());
  auto f64 = [&](double v) -> Value {
    return arith::ConstantOp::create(b, loc, b.getF64FloatAttr(v));
  };
  int64_t rank = q.getRank();
  Value keyT = TransposeOp::create(b, loc, getKey(), rank - 2, rank - 1);
  Value scores = MatmulOp::create(b, loc, getQuery(), keyT);
  scores = MulOp::create(b, loc, scores, f64(*scale));
  Value negInf = f64(-std::numeric_limits<double>::infinity());
  if (getIsCausal()) {
    AffineExpr l = q.getSizes()[rank - 2], s = k.getSizes()[rank - 2];
    Value ones = FullOp::create(b, loc, ShapeAttr::get(ctx, {l, s}), b.getBoolAttr(true),
                                TypeAttr::get(b.getI1Type()), DeviceAttr());
    Value drop = LogicalNotOp::create(b, loc, TrilOp::create(b, loc, ones, 0));
    scores = MaskedFillOp::create(b, loc, scores, drop, negInf);
  }
  if (Value mask = getAttnMask()) {
    auto maskType = llvm::cast<BaseTensorType>(mask.getType());
    if (maskType.getDtype().isInteger(1))
      scores = MaskedFillOp::create(b, loc, scores, LogicalNotOp::create(b, loc, mask), negInf);
    else
      scores = AddOp::create(b, loc, scores, mask, Attribute());
  }
  return scores;
}

bool ScaledDotProductAttentionOp::hasFusedLowering() {
  if (!getDropoutP().isZero() || getEnableGqa())
    return false;
  auto q = llvm::cast<BaseTensorType>(getQuery().getType());
  auto k = llvm::cast<BaseTensorType>(getKey().getType());
  auto v = llvm::cast<BaseTensorType>(getValue().getType());
  int64_t rank = q.getRank();
  Type dtype = q.getDtype();
  if (rank < 2 || k.getRank() != rank || v.getRank() != rank || !(dtype.isF32() || dtype.isF64()) ||
      k.getDtype() != dtype || v.getDtype() != dtype)
    return false;
  for (BaseTensorType t : {q, k, v})
    for (AffineExpr size : t.getSizes().take_back(2))
      if (!getConstantSize(size))
        return false;
  if (q.getSizes().drop_back(2) != k.getSizes().drop_back(2) ||
      q.getSizes().drop_back(2) != v.getSizes().drop_back(2) ||
      q.getSizes().back() != k.getSizes().back() ||
      k.getSizes()[rank - 2] != v.getSizes()[rank - 2])
    return false;
  Value mask = getAttnMask();
  if (!mask)
    return true;
  auto m = llvm::cast<BaseTensorType>(mask.getType());
  if (m.getRank() > rank || !(m.getDtype().isInteger(1) || m.getDtype() == dtype))
    return false;
  // Each mask dimension is 1 or the size of the [batch..., L, S] dimension it aligns with.
  SmallVector<AffineExpr> full(q.getSizes().drop_back());
  full.push_back(k.getSizes()[rank - 2]);
  for (auto [size, target] : llvm::zip(llvm::reverse(m.getSizes()), llvm::reverse(full)))
    if (size != target && getConstantSize(size) != 1)
      return false;
  return true;
}

bool AsStridedOp::isRestride() {
  return isAsStridedRestride(getSelf(), getSize(), getStride(), getStorageOffsetAttr());
}

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }

namespace {
/// cat without the operands it skips (`isSkippedByCat`) when others remain; the result
/// type, dtype included, stays.
struct DropSkippedCatOperands : OpRewritePattern<CatOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(CatOp op, PatternRewriter &rewriter) const override {
    if (llvm::cast<BaseTensorType>(op.getType()).getRank() == 1)
      return failure(); // a [0] operand of a 1-d cat is an ordinary empty piece
    SmallVector<Value> kept;
    for (Value v : op.getTensors())
      if (!isSkippedByCat(llvm::cast<BaseTensorType>(v.getType())))
        kept.push_back(v);
    if (kept.empty() || kept.size() == op.getTensors().size())
      return failure();
    // Only where the dropped operands do not decide the dtype: the lowering and the
    // derivative skip them too.
    SmallVector<Type, 1> inferred;
    if (failed(
            inferCat(getContext(), std::nullopt, kept, op.getDim(), /*stack=*/false, inferred)) ||
        inferred.size() != 1 || inferred[0] != op.getType())
      return failure();
    rewriter.replaceOpWithNewOp<CatOp>(op, op.getType(), kept, op.getDimAttr());
    return success();
  }
};
} // namespace

void CatOp::getCanonicalizationPatterns(RewritePatternSet &patterns, MLIRContext *ctx) {
  patterns.add<DropSkippedCatOperands>(ctx);
}
