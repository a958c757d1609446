// The training partition: @joint becomes @forward and @backward, with the values the backward needs
// from the forward chosen by a minimum cut (docs/training.md).
#include "JointGraph.h"
#include "tgc/Dialect/Attributes.h"
#include "tgc/Transforms/MinCut.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/MathExtras.h"

namespace tgc {
#define GEN_PASS_DEF_PARTITIONPASS
#include "tgc/Transforms/Passes.h.inc"
} // namespace tgc

using namespace mlir;
using namespace tgc;

namespace {

/// The largest factor by which the activation budget scales the cost of saving values other than
/// references; it keeps capacities far below MinCutGraph::kInfinite.
constexpr int64_t kMaxBudgetFactor = 4096;
/// What saving a scalar argument costs (an i64 or f64).
constexpr int64_t kScalarBytes = 8;
/// Sizes are capped at 1 TiB so that capacities times kMaxBudgetFactor, summed over a graph, stay
/// far below MinCutGraph::kInfinite.
constexpr int64_t kMaxValueBytes = int64_t(1) << 40;

/// What the cut chose.
struct Partition {
  /// Values the forward returns and the backward receives, in @joint order.
  SmallVector<Value> saved;
  /// The bytes the saved values take beyond what the caller holds anyway: the sum of their sizes at
  /// the symbols' hints, less primal arguments no forward mutation writes (the artifact passes
  /// those by reference).
  int64_t savedBytes = 0;
};

/// Splits one @joint; see docs/training.md for the signatures it produces.
class Partitioner {
public:
  Partitioner(func::FuncOp joint, int64_t activationBudget)
      : joint(joint), body(joint.getBody().front()), activationBudget(activationBudget) {}

  LogicalResult run();

private:
  LogicalResult classifySignature();
  void findReferencedArgs();
  void computeSymbolValues();
  std::optional<int64_t> getByteSize(Value value) const;
  int64_t getSavedBytes(Value value) const;
  std::optional<MinCutGraph::Cut> cutAt(int64_t factor);
  FailureOr<Partition> choosePartition();
  bool isShapeOnlyRead(Operation *op);
  FailureOr<func::FuncOp> buildForward(const Partition &partition, OpBuilder &builder);
  SmallVector<Value> getBackwardResultValues();
  SetVector<Operation *> collectBackwardOps(const Partition &partition);
  FailureOr<func::FuncOp> buildBackward(const Partition &partition, OpBuilder &builder);

  func::FuncOp joint;
  Block &body;
  int64_t activationBudget;

  SmallVector<unsigned> primalArgs, tangentArgs;
  SmallVector<unsigned> forwardResults, backwardResults;
  DenseSet<Value> tangentDependent;
  /// Parameters and constants no forward mutation writes: the artifact passes them to the
  /// backward by reference when saved (docs/abi.md).
  DenseSet<Value> referencedArgs;
  /// The value cost models use for each size symbol, as constant expressions.
  SmallVector<AffineExpr> symbolValues;

  /// The cut's nodes: block arguments, then op results, in program order.
  SmallVector<Value> nodeValues;
  DenseMap<Value, unsigned> nodeOf;
};

} // namespace

static DictionaryAttr savedAttrs(MLIRContext *ctx) {
  Builder builder(ctx);
  return builder.getDictionaryAttr(
      builder.getNamedAttr(attr::kKind, builder.getStringAttr(joint::kSaved)));
}

LogicalResult Partitioner::classifySignature() {
  for (unsigned i = 0, e = joint.getNumArguments(); i < e; ++i)
    (joint::getArgKind(joint, i) == joint::kTangent ? tangentArgs : primalArgs).push_back(i);
  tangentDependent = joint::getTangentDependentValues(joint);

  Operation *terminator = body.getTerminator();
  for (unsigned i = 0, e = joint.getNumResults(); i < e; ++i) {
    StringRef kind = joint::getResultKind(joint, i);
    if (joint::isMutationKind(kind)) {
      auto pass = joint.getResultAttrOfType<StringAttr>(i, attr::kPass);
      if (!pass || (pass.getValue() != joint::kForward && pass.getValue() != joint::kBackward))
        return joint.emitError() << "mutation result " << i << " has no '" << attr::kPass
                                 << "' = \"forward\" | \"backward\"; run "
                                    "tgc-place-mutations first";
      (pass.getValue() == joint::kForward ? forwardResults : backwardResults).push_back(i);
    } else if (kind == joint::kUserOutput || kind == attr::kPythonState) {
      forwardResults.push_back(i);
    } else if (kind == joint::kGradient) {
      backwardResults.push_back(i);
    } else {
      return joint.emitError() << "result " << i << " of @joint has tgc.kind '" << kind
                               << "'; expected user_output, python_state, gradient or a mutation";
    }
  }
  // Backward results are @joint's gradients, then its backward mutations, each in order.
  SmallVector<unsigned> gradients, mutations;
  for (unsigned i : backwardResults)
    (joint::getResultKind(joint, i) == joint::kGradient ? gradients : mutations).push_back(i);
  backwardResults = gradients;
  backwardResults.append(mutations);

  for (unsigned i : forwardResults)
    if (tangentDependent.contains(terminator->getOperand(i)))
      return joint.emitError() << "forward result " << i << " depends on a tangent";
  findReferencedArgs();
  for (Operation &op : body.without_terminator())
    if ((op.getNumRegions() != 0 && !llvm::isa<CondOp>(op)) || op.getNumResults() == 0)
      return op.emitError("tgc-partition supports ops with results and no regions (but "
                          "tgc.cond) only");
  return success();
}

/// Parameters and constants that no forward mutation writes (by `tgc.target` = `tgc.name`).
void Partitioner::findReferencedArgs() {
  llvm::StringSet<> targets;
  for (unsigned i : forwardResults)
    if (auto target = joint.getResultAttrOfType<StringAttr>(i, attr::kTarget);
        target && joint::isMutationKind(joint::getResultKind(joint, i)))
      targets.insert(target.getValue());
  for (unsigned i : primalArgs) {
    StringRef kind = joint::getArgKind(joint, i);
    auto name = joint.getArgAttrOfType<StringAttr>(i, attr::kName);
    if ((kind == joint::kParameter || kind == joint::kConstant) &&
        !(name && targets.contains(name.getValue())))
      referencedArgs.insert(joint.getArgument(i));
  }
}

/// Each symbol's value for cost purposes: its hint, else min(max, 1024).
void Partitioner::computeSymbolValues() {
  auto module = joint->getParentOfType<ModuleOp>();
  auto symbols = module->getAttrOfType<ArrayAttr>(TgcDialect::kSymbolsAttrName);
  if (!symbols)
    return;
  for (Attribute symbol : symbols) {
    auto attr = llvm::dyn_cast<SymbolAttr>(symbol);
    symbolValues.push_back(
        getAffineConstantExpr(attr ? attr.getTypicalValue() : 1024, joint.getContext()));
  }
}

/// numel * element size of a tensor value at the symbols' typical values, at most kMaxValueBytes;
/// std::nullopt for scalars (never saved).
std::optional<int64_t> Partitioner::getByteSize(Value value) const {
  auto type = llvm::dyn_cast<BaseTensorType>(value.getType());
  if (!type)
    return std::nullopt;
  Type dtype = type.getDtype();
  int64_t bytes = dtype.isIntOrFloat()
                      ? std::max<unsigned>(1, (dtype.getIntOrFloatBitWidth() + 7) / 8)
                      : kScalarBytes;
  for (AffineExpr size : type.getSizes()) {
    // A size over symbols the module does not declare counts as an unbounded symbol.
    std::optional<int64_t> known = getConstantSize(size.replaceSymbols(symbolValues));
    uint64_t dim = known ? std::max<int64_t>(*known, 0) : 1024;
    bytes = std::min<uint64_t>(llvm::SaturatingMultiply<uint64_t>(bytes, dim), kMaxValueBytes);
  }
  return bytes;
}

/// What saving `value` adds to the memory the forward leaves for the backward: nothing for
/// a value passed by reference, its size otherwise.
int64_t Partitioner::getSavedBytes(Value value) const {
  if (referencedArgs.contains(value))
    return 0;
  return getByteSize(value).value_or(kScalarBytes);
}

/// The size `op` reads.
static AffineExpr getReadSize(SymSizeOp op) {
  auto type = llvm::cast<BaseTensorType>(op.getSelf().getType());
  std::optional<int64_t> dim = normalizeDim(op.getDim(), type.getRank());
  return dim ? type.getSizes()[*dim] : AffineExpr();
}

/// A dimension of one of `values` that is exactly `size`.
static std::optional<std::pair<Value, int64_t>> findDimension(ValueRange values, AffineExpr size) {
  for (Value value : values) {
    auto type = llvm::dyn_cast<BaseTensorType>(value.getType());
    if (!type)
      continue;
    for (auto [index, dimSize] : llvm::enumerate(type.getSizes()))
      if (dimSize == size)
        return std::make_pair(value, static_cast<int64_t>(index));
  }
  return std::nullopt;
}

/// Whether the backward can compute `op` without the tensor it reads, which then is not
/// kept alive for its shape: a `tgc.full_like` (built as a `tgc.full` of its sizes), or a
/// `tgc.sym_size` whose size is a constant or a dimension of a tangent.
bool Partitioner::isShapeOnlyRead(Operation *op) {
  if (llvm::isa<FullLikeOp>(op))
    return true;
  auto symSize = llvm::dyn_cast<SymSizeOp>(op);
  if (!symSize)
    return false;
  AffineExpr size = getReadSize(symSize);
  if (!size)
    return false;
  SmallVector<Value> tangents;
  for (unsigned i : tangentArgs)
    tangents.push_back(joint.getArgument(i));
  return getConstantSize(size) || findDimension(tangents, size);
}

/// The minimum cut with values `factor` times as costly to save as the parameters and constants
/// passed by reference; std::nullopt when every cut is infinite.
std::optional<MinCutGraph::Cut> Partitioner::cutAt(int64_t factor) {
  MinCutGraph graph;
  nodeValues.clear();
  nodeOf.clear();
  auto addNode = [&](Value value, bool isPrimalArg) {
    // Scalars are recomputed, never saved, except those the caller passes in.
    std::optional<int64_t> bytes = getByteSize(value);
    int64_t capacity = !bytes ? (isPrimalArg ? kScalarBytes : MinCutGraph::kInfinite)
                       : referencedArgs.contains(value) ? *bytes
                                                        : *bytes * factor;
    nodeOf[value] = graph.addNode(capacity);
    nodeValues.push_back(value);
    if (tangentDependent.contains(value))
      graph.tieInputToSink(nodeOf[value]);
  };
  for (BlockArgument arg : joint.getArguments())
    addNode(arg, joint::getArgKind(joint, arg.getArgNumber()) != joint::kTangent);
  for (unsigned i : primalArgs)
    graph.tieToSource(nodeOf[joint.getArgument(i)]);

  for (Operation &op : body.without_terminator()) {
    for (Value result : op.getResults())
      addNode(result, /*isPrimalArg=*/false);
    // A size the backward can read elsewhere does not keep its tensor alive.
    bool shapeOnly = isShapeOnlyRead(&op);
    for (Value operand : op.getOperands())
      for (Value result : op.getResults())
        if (!shapeOnly)
          graph.addUse(nodeOf[operand], nodeOf[result]);
    // A cond is not recomputed either: its forward returns what its backward needs.
    if (op.hasTrait<tgc::OpTrait::NoRecompute>() || llvm::isa<CondOp>(op))
      for (Value result : op.getResults())
        if (!tangentDependent.contains(result))
          graph.tieToSource(nodeOf[result]);
  }

  Operation *terminator = body.getTerminator();
  for (unsigned i : forwardResults)
    if (joint::isMutationKind(joint::getResultKind(joint, i)))
      graph.tieToSource(nodeOf[terminator->getOperand(i)]);
  for (unsigned i : backwardResults)
    graph.tieOutputToSink(nodeOf[terminator->getOperand(i)]);
  return graph.solve();
}

FailureOr<Partition> Partitioner::choosePartition() {
  std::optional<Partition> best;
  for (int64_t factor = 1; factor <= kMaxBudgetFactor; factor *= 4) {
    std::optional<MinCutGraph::Cut> cut = cutAt(factor);
    if (!cut)
      return joint.emitError("internal error: the joint graph has no finite cut");
    Partition partition;
    for (unsigned node : cut->cutNodes) {
      partition.saved.push_back(nodeValues[node]);
      partition.savedBytes += getSavedBytes(nodeValues[node]);
    }
    if (!best || partition.savedBytes < best->savedBytes)
      best = std::move(partition);
    if (activationBudget <= 0 || best->savedBytes <= activationBudget)
      return *best;
  }
  joint.emitWarning() << "the saved values take " << best->savedBytes
                      << " bytes, over the activation budget of " << activationBudget
                      << " bytes, even with all cheap ops recomputed";
  return *best;
}

/// Collects the ops computing `roots` from `available` values, in program order.
static SetVector<Operation *> collectOps(Block &block, ArrayRef<Value> roots,
                                         const DenseSet<Value> &available,
                                         function_ref<bool(Operation *)> isLeaf) {
  DenseSet<Operation *> needed;
  SmallVector<Value> worklist(roots.begin(), roots.end());
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    if (available.contains(value))
      continue;
    Operation *def = value.getDefiningOp();
    if (!def || !needed.insert(def).second || isLeaf(def))
      continue;
    worklist.append(def->getOperands().begin(), def->getOperands().end());
  }
  SetVector<Operation *> ordered;
  for (Operation &op : block)
    if (needed.contains(&op))
      ordered.insert(&op);
  return ordered;
}

/// Copies one attribute dictionary per index, from `from` via `get`.
template <typename Get>
static SmallVector<DictionaryAttr> attrsOf(ArrayRef<unsigned> indices, Get get) {
  SmallVector<DictionaryAttr> attrs;
  for (unsigned i : indices)
    attrs.push_back(get(i));
  return attrs;
}

/// Creates `@name(argTypes) -> resultTypes` with the given attributes and an empty body.
static func::FuncOp createFunction(OpBuilder &builder, Location loc, StringRef name,
                                   TypeRange argTypes, TypeRange resultTypes,
                                   ArrayRef<DictionaryAttr> argAttrs,
                                   ArrayRef<DictionaryAttr> resultAttrs) {
  auto func =
      func::FuncOp::create(builder, loc, name, builder.getFunctionType(argTypes, resultTypes));
  func.setAllArgAttrs(argAttrs);
  func.setAllResultAttrs(resultAttrs);
  func.addEntryBlock();
  return func;
}

FailureOr<func::FuncOp> Partitioner::buildForward(const Partition &partition, OpBuilder &builder) {
  Operation *terminator = body.getTerminator();
  SmallVector<Value> results;
  for (unsigned i : forwardResults)
    results.push_back(terminator->getOperand(i));
  results.append(partition.saved.begin(), partition.saved.end());

  DenseSet<Value> available;
  for (unsigned i : primalArgs)
    available.insert(joint.getArgument(i));
  for (Value result : results)
    if (auto arg = llvm::dyn_cast<BlockArgument>(result); arg && !available.contains(arg))
      return joint.emitError("internal error: the forward needs a tangent");
  SetVector<Operation *> ops =
      collectOps(body, results, available, [](Operation *) { return false; });

  SmallVector<Type> argTypes, resultTypes;
  for (unsigned i : primalArgs)
    argTypes.push_back(joint.getArgument(i).getType());
  for (Value result : results)
    resultTypes.push_back(result.getType());
  SmallVector<DictionaryAttr> resultAttrs =
      attrsOf(forwardResults, [&](unsigned i) { return joint.getResultAttrDict(i); });
  resultAttrs.append(partition.saved.size(), savedAttrs(joint.getContext()));
  func::FuncOp forward = createFunction(
      builder, joint.getLoc(), "forward", argTypes, resultTypes,
      attrsOf(primalArgs, [&](unsigned i) { return joint.getArgAttrDict(i); }), resultAttrs);

  IRMapping mapping;
  for (auto [index, i] : llvm::enumerate(primalArgs))
    mapping.map(joint.getArgument(i), forward.getArgument(index));
  OpBuilder bodyBuilder = OpBuilder::atBlockEnd(&forward.getBody().front());
  for (Operation *op : ops)
    bodyBuilder.clone(*op, mapping);
  SmallVector<Value> mapped;
  for (Value result : results)
    mapped.push_back(mapping.lookupOrNull(result));
  if (llvm::is_contained(mapped, Value()))
    return joint.emitError("internal error: a forward result is not computed in forward");
  func::ReturnOp::create(bodyBuilder, joint.getLoc(), mapped);
  return forward;
}

/// The values @backward returns, in its result order.
SmallVector<Value> Partitioner::getBackwardResultValues() {
  SmallVector<Value> results;
  for (unsigned i : backwardResults)
    results.push_back(body.getTerminator()->getOperand(i));
  return results;
}

/// The ops of @joint the backward clones, in program order.
SetVector<Operation *> Partitioner::collectBackwardOps(const Partition &partition) {
  DenseSet<Value> available(partition.saved.begin(), partition.saved.end());
  for (unsigned i : tangentArgs)
    available.insert(joint.getArgument(i));
  return collectOps(body, getBackwardResultValues(), available,
                    [&](Operation *op) { return isShapeOnlyRead(op); });
}

/// Builds a shape-only read (isShapeOnlyRead) without its tensor: a `tgc.full` of the
/// sizes, a constant size, or the size of an argument of that size.
static FailureOr<Value> buildFromShape(Operation *op, OpBuilder &builder, ValueRange arguments) {
  Location loc = op->getLoc();
  if (auto fullLike = llvm::dyn_cast<FullLikeOp>(op)) {
    auto type = llvm::cast<BaseTensorType>(fullLike.getType());
    TensorMeta meta = type.getMeta();
    return FullOp::create(builder, loc, type, ShapeAttr::get(op->getContext(), meta.sizes),
                          fullLike.getFillValue(), TypeAttr::get(meta.dtype),
                          llvm::dyn_cast_or_null<DeviceAttr>(meta.device))
        .getResult();
  }
  AffineExpr size = getReadSize(llvm::cast<SymSizeOp>(op));
  if (std::optional<int64_t> constant = getConstantSize(size))
    return arith::ConstantOp::create(builder, loc, builder.getI64IntegerAttr(*constant))
        .getResult();
  if (auto found = findDimension(arguments, size))
    return SymSizeOp::create(builder, loc, found->first, found->second).getResult();
  return op->emitError("internal error: no argument of @backward has this size");
}

FailureOr<func::FuncOp> Partitioner::buildBackward(const Partition &partition, OpBuilder &builder) {
  SmallVector<Value> results = getBackwardResultValues();
  SetVector<Operation *> ops = collectBackwardOps(partition);

  SmallVector<Type> argTypes, resultTypes;
  for (Value saved : partition.saved)
    argTypes.push_back(saved.getType());
  for (unsigned i : tangentArgs)
    argTypes.push_back(joint.getArgument(i).getType());
  for (Value result : results)
    resultTypes.push_back(result.getType());
  SmallVector<DictionaryAttr> argAttrs(partition.saved.size(), savedAttrs(joint.getContext()));
  llvm::append_range(argAttrs,
                     attrsOf(tangentArgs, [&](unsigned i) { return joint.getArgAttrDict(i); }));
  func::FuncOp backward = createFunction(
      builder, joint.getLoc(), "backward", argTypes, resultTypes, argAttrs,
      attrsOf(backwardResults, [&](unsigned i) { return joint.getResultAttrDict(i); }));

  IRMapping mapping;
  for (auto [index, saved] : llvm::enumerate(partition.saved))
    mapping.map(saved, backward.getArgument(index));
  for (auto [index, i] : llvm::enumerate(tangentArgs))
    mapping.map(joint.getArgument(i), backward.getArgument(partition.saved.size() + index));
  OpBuilder bodyBuilder = OpBuilder::atBlockEnd(&backward.getBody().front());
  for (Operation *op : ops) {
    if (isShapeOnlyRead(op)) {
      FailureOr<Value> value = buildFromShape(op, bodyBuilder, backward.getArguments());
      if (failed(value))
        return failure();
      mapping.map(op->getResult(0), *value);
      continue;
    }
    for (Value operand : op->getOperands())
      if (!mapping.contains(operand))
        return op->emitError("internal error: the backward needs a value the partition "
                             "neither saved nor recomputes");
    bodyBuilder.clone(*op, mapping);
  }
  SmallVector<Value> mapped;
  for (Value result : results) {
    if (!mapping.contains(result))
      return joint.emitError("internal error: a backward result is not computed in backward");
    mapped.push_back(mapping.lookup(result));
  }
  func::ReturnOp::create(bodyBuilder, joint.getLoc(), mapped);
  return backward;
}

LogicalResult Partitioner::run() {
  if (failed(classifySignature()))
    return failure();
  computeSymbolValues();
  FailureOr<Partition> partition = choosePartition();
  if (failed(partition))
    return failure();

  OpBuilder builder(joint);
  FailureOr<func::FuncOp> forward = buildForward(*partition, builder);
  if (failed(forward))
    return failure();
  FailureOr<func::FuncOp> backward = buildBackward(*partition, builder);
  if (failed(backward)) {
    forward->erase();
    return failure();
  }
  auto module = joint->getParentOfType<ModuleOp>();
  module->setAttr(attr::kSavedCount, builder.getI64IntegerAttr(partition->saved.size()));
  module->setAttr(attr::kSavedBytes, builder.getI64IntegerAttr(partition->savedBytes));
  joint.erase();
  return success();
}

namespace {
class PartitionPass : public tgc::impl::PartitionPassBase<PartitionPass> {
public:
  using PartitionPassBase::PartitionPassBase;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<func::FuncOp> joint = joint::lookupJoint(module);
    if (failed(joint))
      return signalPassFailure();
    if (module.lookupSymbol("forward") || module.lookupSymbol("backward")) {
      module.emitError("@joint cannot be partitioned into a module that already has "
                       "@forward or @backward");
      return signalPassFailure();
    }
    if (failed(Partitioner(*joint, activationBudget).run()))
      signalPassFailure();
  }
};
} // namespace
