// Cutting traced paths at their graph breaks (docs/graph-breaks.md): each path of a
// program with graph breaks is one `@forward` whose top-level ops are split by
// `tgc.break_branch` / `tgc.break_call` / `tgc.break_hook` / `tgc.break_module_hook`
// markers into segments. Segments that follow the same branch outcomes are the same ops on
// every path (the interpreter is deterministic), so they become one graph; a tensor a later
// segment uses crosses as an output of the graph that computes it and an input of the graph
// that uses it. The results of a `tgc.break_module_hook` are glue values of their own, which
// its step defines.
#include "GraphBreaks.h"

#include "Frontend/Common/GraphInputs.h"
#include "tgc/Dialect/Attributes.h"
#include "tgc/Dialect/TgcDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/SetVector.h"

#include <map>
#include <set>

using namespace mlir;
using namespace tgc;
using namespace tgc::frontend;
using namespace tgc::trace;

namespace {

/// A value of a path's `@forward` by where it is: argument `-1 - op` when `op < 0`,
/// else result `result` of top-level op number `op`. Paths that share a segment give
/// its values the same positions.
struct Position {
  int64_t op;
  unsigned result;
  bool operator<(const Position &other) const {
    return std::tie(op, result) < std::tie(other.op, other.result);
  }
  bool operator==(const Position &other) const { return op == other.op && result == other.result; }
};

/// A path's `@forward`, indexed.
struct PathFunction {
  func::FuncOp func;
  std::vector<Operation *> ops;     ///< top-level ops, terminator excluded
  std::vector<Operation *> markers; ///< the graph breaks, in order
  llvm::DenseMap<Operation *, int64_t> index;
  llvm::DenseMap<Operation *, unsigned> segment;
  std::vector<bool> decisions;

  Position positionOf(Value value) const {
    if (auto arg = dyn_cast<BlockArgument>(value))
      return {-1 - int64_t(arg.getArgNumber()), 0};
    auto result = cast<OpResult>(value);
    return {index.lookup(result.getOwner()), result.getResultNumber()};
  }
  Value valueAt(Position position) const {
    if (position.op < 0)
      return func::FuncOp(func).getArgument(-1 - position.op);
    return ops[position.op]->getResult(position.result);
  }
  /// The branch outcomes taken before segment `k`.
  std::vector<bool> prefix(unsigned k) const {
    unsigned branches = 0;
    for (unsigned i = 0; i < k; ++i)
      branches += isa<BreakBranchOp>(markers[i]);
    return std::vector<bool>(decisions.begin(), decisions.begin() + branches);
  }
};

/// One graph of the program while it is built: the glue value of each user input of
/// its `@forward`, the glue value each result defines (none for a graph that ends the
/// program, whose results are the program's), and the step after it.
struct GraphNode {
  OwningOpRef<ModuleOp> graph;
  std::vector<int64_t> inputs;
  std::vector<int64_t> outputs;
  DictionaryAttr step;
};

/// What segment `k` of a path needs from before it.
struct SegmentNeeds {
  /// Tensors computed by an earlier segment, by the node that computes them.
  llvm::SetVector<Value> imports;
  /// Views and scalars of earlier segments recomputed here (aliases stay aliases).
  llvm::SetVector<Operation *> clones;
  /// Results of earlier in-place ops, which are their mutated operand.
  llvm::DenseMap<Value, Value> aliases;
  /// Values the step after this segment passes to the caller.
  llvm::SetVector<Value> glueUses;
};

/// The operand an in-place op's result aliases: the mutated operand of the same type.
static Value aliasedOperand(OpResult result) {
  auto inPlace = dyn_cast<InPlaceOpInterface>(result.getOwner());
  if (!inPlace || isa<ViewOpInterface>(result.getOwner()))
    return nullptr;
  for (unsigned i : inPlace.getMutatedOperandIndices())
    if (result.getOwner()->getOperand(i).getType() == result.getType())
      return result.getOwner()->getOperand(i);
  return nullptr;
}

/// Whether `op` is a graph break: a branch, a call, a gradient hook or either side of a
/// submodule call with backward hooks.
static bool isBreakMarker(Operation *op) {
  return isa<BreakBranchOp, BreakCallOp, BreakHookOp, BreakModuleHookOp>(op);
}

/// Whether `op` can be recomputed in a later graph instead of crossing: views (so
/// aliases of a crossing tensor stay aliases) and side-effect-free scalar ops.
static bool isRecomputable(Operation *op) {
  if (isa<ViewOpInterface>(op))
    return true;
  return isMemoryEffectFree(op) && op->getNumRegions() == 0 &&
         llvm::none_of(op->getResultTypes(), [](Type t) { return isa<BaseTensorType>(t); });
}

class Splitter {
public:
  Splitter(std::vector<PathTrace> &paths, MLIRContext *ctx) : paths(paths), ctx(ctx) {}
  FailureOr<GraphProgram> run();

private:
  LogicalResult indexPath(PathTrace &trace, PathFunction &path);
  LogicalResult use(PathFunction &path, unsigned k, Value value, SegmentNeeds &needs, Location loc);
  LogicalResult glueUse(PathFunction &path, unsigned k, Value value, SegmentNeeds &needs,
                        Location loc);
  int64_t nodeOf(const PathFunction &path, unsigned k);
  FailureOr<GraphNode> buildGraph(unsigned node);
  /// The step after segment `k` of `path`, a graph break (`tgc.step`).
  FailureOr<DictionaryAttr>
  breakStep(PathFunction &path, unsigned k,
            function_ref<int64_t(const PathFunction &, unsigned, Value)> glueOf);

  std::vector<PathTrace> &paths;
  MLIRContext *ctx;
  std::vector<PathFunction> functions;
  /// Nodes by (segment, branch outcomes before it); each node's first (path, segment).
  std::map<std::pair<unsigned, std::vector<bool>>, int64_t> nodeIds;
  std::vector<std::pair<unsigned, unsigned>> nodeSource;
  /// Per node: the values later segments and steps need from it.
  std::vector<std::set<Position>> exports;
  /// Per node: the needs of its segment (from its first path; the same on every path).
  std::vector<SegmentNeeds> needs;
  /// The user inputs of @forward: argument number -> glue value.
  std::map<unsigned, int64_t> inputGlue;
  std::vector<std::string> inputNames;
};

} // namespace

LogicalResult Splitter::indexPath(PathTrace &trace, PathFunction &path) {
  path.func = trace.module->lookupSymbol<func::FuncOp>("forward");
  if (!path.func)
    return trace.module->emitError("a traced path has no @forward");
  path.decisions = trace.decisions;
  unsigned segment = 0;
  for (Operation &op : path.func.front().without_terminator()) {
    path.index[&op] = path.ops.size();
    path.segment[&op] = segment;
    path.ops.push_back(&op);
    if (isBreakMarker(&op)) {
      path.markers.push_back(&op);
      ++segment;
    }
  }
  path.segment[path.func.front().getTerminator()] = segment;
  return success();
}

int64_t Splitter::nodeOf(const PathFunction &path, unsigned k) {
  auto key = std::make_pair(k, path.prefix(k));
  auto [it, inserted] = nodeIds.try_emplace(key, int64_t(nodeSource.size()));
  if (inserted) {
    nodeSource.emplace_back(&path - functions.data(), k);
    exports.emplace_back();
    needs.emplace_back();
  }
  return it->second;
}

/// Records that segment `k` uses `value` (an operand of one of its ops).
LogicalResult Splitter::use(PathFunction &path, unsigned k, Value value, SegmentNeeds &segment,
                            Location loc) {
  auto result = dyn_cast<OpResult>(value);
  if (!result)
    return success(); // an argument of @forward: every graph may have it
  Operation *def = result.getOwner();
  if (def->getParentOp() != path.func.getOperation() || path.segment.lookup(def) == k)
    return success();
  if (Value alias = aliasedOperand(result)) {
    segment.aliases[value] = alias;
    return use(path, k, alias, segment, loc);
  }
  if (isRecomputable(def)) {
    if (segment.clones.contains(def))
      return success();
    for (Value operand : def->getOperands())
      if (failed(use(path, k, operand, segment, loc)))
        return failure();
    segment.clones.insert(def);
    return success();
  }
  if (!isa<BaseTensorType>(value.getType()))
    return emitError(loc) << "graph break: a Python scalar computed before the break ("
                          << def->getName() << ") is used after it";
  segment.imports.insert(value);
  if (isa<BreakModuleHookOp>(def))
    return success(); // the step defines it, not a graph
  exports[nodeOf(path, path.segment.lookup(def))].insert(path.positionOf(value));
  return success();
}

/// Records that the step after segment `k` passes `value` to the caller: the graph of
/// segment `k` returns it unless it is a user input or crossed already.
LogicalResult Splitter::glueUse(PathFunction &path, unsigned k, Value value, SegmentNeeds &segment,
                                Location loc) {
  if (auto arg = dyn_cast<BlockArgument>(value); arg && inputGlue.count(arg.getArgNumber()))
    return success();
  if (auto result = dyn_cast<OpResult>(value)) {
    if (Value alias = aliasedOperand(result))
      return glueUse(path, k, alias, segment, loc);
    Operation *def = result.getOwner();
    if (path.segment.lookup(def) != k && !isRecomputable(def)) {
      if (failed(use(path, k, value, segment, loc)))
        return failure();
      return success(); // crossed into this segment: the caller has it already
    }
    if (failed(use(path, k, value, segment, loc)))
      return failure();
  }
  segment.glueUses.insert(value);
  exports[nodeOf(path, k)].insert(path.positionOf(value));
  return success();
}

FailureOr<GraphProgram> Splitter::run() {
  functions.resize(paths.size());
  for (auto [trace, path] : llvm::zip(paths, functions))
    if (failed(indexPath(trace, path)))
      return failure();
  func::FuncOp first = functions.front().func;
  for (unsigned i = 0, e = first.getNumArguments(); i < e; ++i) {
    auto kind = first.getArgAttrOfType<StringAttr>(i, attr::kKind);
    auto name = first.getArgAttrOfType<StringAttr>(i, attr::kName);
    if (kind && kind.getValue() == "user_input") {
      inputGlue[i] = inputNames.size();
      inputNames.push_back(name ? name.str() : "input." + std::to_string(inputNames.size()));
    }
  }

  // What every segment needs from before it.
  for (PathFunction &path : functions) {
    for (unsigned k = 0; k <= path.markers.size(); ++k) {
      int64_t node = nodeOf(path, k);
      bool firstVisit = nodeSource[node].first == unsigned(&path - functions.data());
      SegmentNeeds segment;
      auto useAll = [&](Operation *op) -> LogicalResult {
        WalkResult walked = op->walk([&](Operation *nested) {
          for (Value operand : nested->getOperands())
            if (failed(use(path, k, operand, segment, op->getLoc())))
              return WalkResult::interrupt();
          return WalkResult::advance();
        });
        return failure(walked.wasInterrupted());
      };
      for (Operation *op : path.ops)
        if (path.segment.lookup(op) == k && !isBreakMarker(op) && failed(useAll(op)))
          return failure();
      if (k == path.markers.size()) {
        if (failed(useAll(path.func.front().getTerminator())))
          return failure();
      } else {
        for (Value operand : path.markers[k]->getOperands())
          if (failed(glueUse(path, k, operand, segment, path.markers[k]->getLoc())))
            return failure();
      }
      if (firstVisit)
        needs[node] = std::move(segment);
    }
  }

  // Glue values: the inputs, then each node's exports in position order, then the
  // results of each node's `tgc.break_module_hook` step.
  std::vector<std::map<Position, int64_t>> glue(nodeSource.size());
  int64_t nextGlue = inputNames.size();
  for (unsigned node = 0; node < nodeSource.size(); ++node)
    for (const Position &position : exports[node])
      glue[node][position] = nextGlue++;
  for (unsigned node = 0; node < nodeSource.size(); ++node) {
    auto [pathIndex, k] = nodeSource[node];
    const PathFunction &path = functions[pathIndex];
    if (k < path.markers.size() && isa<BreakModuleHookOp>(path.markers[k]))
      for (Value result : path.markers[k]->getResults())
        glue[node][path.positionOf(result)] = nextGlue++;
  }
  auto glueOf = [&](const PathFunction &path, unsigned k, Value value) -> int64_t {
    if (auto arg = dyn_cast<BlockArgument>(value); arg && inputGlue.count(arg.getArgNumber()))
      return inputGlue.at(arg.getArgNumber());
    if (auto result = dyn_cast<OpResult>(value))
      if (Value alias = aliasedOperand(result))
        value = alias;
    // The latest segment that returns it: this one (values of this segment, views
    // recomputed here), else the earlier one that computed it (or whose step did).
    Position position = path.positionOf(value);
    for (unsigned s = k + 1; s-- > 0;) {
      auto &table = glue[nodeOf(path, s)];
      if (auto it = table.find(position); it != table.end())
        return it->second;
    }
    return -1;
  };

  GraphProgram program;
  for (unsigned node = 0; node < nodeSource.size(); ++node) {
    auto [pathIndex, k] = nodeSource[node];
    PathFunction &path = functions[pathIndex];
    FailureOr<GraphNode> built = buildGraph(node);
    if (failed(built))
      return failure();
    for (const Position &position : exports[node])
      built->outputs.push_back(glue[node].at(position));
    for (int64_t &input : built->inputs)
      if (input < -1)
        input = glueOf(path, k, needs[node].imports[-2 - input]);
    // Crossing inputs are named by their glue value.
    auto graphFunc = built->graph->lookupSymbol<func::FuncOp>("forward");
    for (unsigned i = 0, j = 0, e = graphFunc.getNumArguments(); i < e; ++i) {
      auto kind = graphFunc.getArgAttrOfType<StringAttr>(i, attr::kKind);
      if (!kind || kind.getValue() != "user_input")
        continue;
      auto name = graphFunc.getArgAttrOfType<StringAttr>(i, attr::kName);
      if (name && name.getValue().starts_with("glue.") && j < built->inputs.size())
        graphFunc.setArgAttr(i, attr::kName,
                             StringAttr::get(ctx, "value." + std::to_string(built->inputs[j])));
      ++j;
    }
    if (k < path.markers.size()) {
      FailureOr<DictionaryAttr> step = breakStep(path, k, glueOf);
      if (failed(step))
        return failure();
      built->step = *step;
    } else {
      built->step = returnStep(ctx);
    }
    if (llvm::is_contained(built->inputs, -1))
      return path.func.emitError("graph break: internal error: a crossing value has no "
                                 "producer");
    recordProgramNode(*built->graph, built->inputs, built->outputs, built->step);
    program.graphs.push_back(std::move(built->graph));
  }
  recordProgramInputs(*program.graphs.front(), inputNames);
  return program;
}

FailureOr<DictionaryAttr>
Splitter::breakStep(PathFunction &path, unsigned k,
                    function_ref<int64_t(const PathFunction &, unsigned, Value)> glueOf) {
  Operation *marker = path.markers[k];
  Builder b(ctx);
  SmallVector<NamedAttribute> step;
  auto set = [&](StringRef key, Attribute value) { step.push_back(b.getNamedAttr(key, value)); };
  if (auto loc = dyn_cast<FileLineColLoc>(marker->getLoc()))
    set(program::kWhereKey,
        b.getStringAttr(loc.getFilename().str() + ":" + std::to_string(loc.getLine())));
  bool unknown = false;
  if (auto branch = dyn_cast<BreakBranchOp>(marker)) {
    int64_t condition = glueOf(path, k, branch.getCondition());
    std::vector<bool> prefix = path.prefix(k + 1);
    prefix.back() = true;
    auto ifTrue = nodeIds.find({k + 1, prefix});
    prefix.back() = false;
    auto ifFalse = nodeIds.find({k + 1, prefix});
    if (ifTrue == nodeIds.end() || ifFalse == nodeIds.end())
      return marker->emitError("graph break: a branch outcome was not traced");
    set(program::kKindKey, b.getStringAttr(program::kBranch));
    set(program::kConditionKey, b.getI64IntegerAttr(condition));
    set(program::kTrueKey, b.getI64IntegerAttr(ifTrue->second));
    set(program::kFalseKey, b.getI64IntegerAttr(ifFalse->second));
    unknown = condition < 0;
  } else if (auto moduleHook = dyn_cast<BreakModuleHookOp>(marker)) {
    SmallVector<int64_t> tensors, results;
    for (Value tensor : moduleHook.getTensors())
      tensors.push_back(glueOf(path, k, tensor));
    for (Value result : moduleHook.getResults())
      results.push_back(glueOf(path, k, result));
    set(program::kKindKey, b.getStringAttr(program::kModuleHook));
    set(program::kStageKey, moduleHook.getStageAttr());
    set(program::kHookKey, moduleHook.getHookAttr());
    set(program::kTensorsKey, b.getDenseI64ArrayAttr(tensors));
    set(program::kResultsKey, b.getDenseI64ArrayAttr(results));
    set(program::kPositionsKey, moduleHook.getPositionsAttr());
    set(program::kArityKey, moduleHook.getArityAttr());
    set(program::kNextKey, b.getI64IntegerAttr(nodeIds.at({k + 1, path.prefix(k + 1)})));
    unknown = llvm::is_contained(tensors, -1) || llvm::is_contained(results, -1);
  } else if (auto hook = dyn_cast<BreakHookOp>(marker)) {
    int64_t tensor = glueOf(path, k, hook.getTensor());
    set(program::kKindKey, b.getStringAttr(program::kGradHook));
    set(program::kTensorKey, b.getI64IntegerAttr(tensor));
    set(program::kHookKey, hook.getHookAttr());
    set(program::kNextKey, b.getI64IntegerAttr(nodeIds.at({k + 1, path.prefix(k + 1)})));
    unknown = tensor < 0;
  } else {
    auto call = cast<BreakCallOp>(marker);
    SmallVector<int64_t> tensors;
    for (Value tensor : call.getTensors())
      tensors.push_back(glueOf(path, k, tensor));
    set(program::kKindKey, b.getStringAttr(program::kCall));
    set(program::kCalleeKey, call.getCalleeAttr());
    set(program::kArgsKey, call.getArgs());
    set(program::kKwargsKey, call.getKwargs());
    set(program::kTensorsKey, b.getDenseI64ArrayAttr(tensors));
    set(program::kNextKey, b.getI64IntegerAttr(nodeIds.at({k + 1, path.prefix(k + 1)})));
    unknown = llvm::is_contained(tensors, -1);
  }
  if (unknown)
    return marker->emitError("graph break: internal error: a value the caller needs "
                             "has no producer");
  return b.getDictionaryAttr(step);
}

DictionaryAttr tgc::trace::returnStep(MLIRContext *ctx) {
  Builder b(ctx);
  return b.getDictionaryAttr(b.getNamedAttr(program::kKindKey, b.getStringAttr(program::kReturn)));
}

void tgc::trace::recordProgramNode(ModuleOp graph, ArrayRef<int64_t> inputs,
                                   ArrayRef<int64_t> outputs, DictionaryAttr step) {
  Builder b(graph.getContext());
  graph->setAttr(program::kGraphInputs, b.getDenseI64ArrayAttr(inputs));
  graph->setAttr(program::kGraphOutputs, b.getDenseI64ArrayAttr(outputs));
  graph->setAttr(program::kStep, step);
}

void tgc::trace::recordProgramInputs(ModuleOp first, ArrayRef<std::string> names) {
  Builder b(first.getContext());
  SmallVector<Attribute> attrs;
  for (const std::string &name : names)
    attrs.push_back(b.getStringAttr(name));
  first->setAttr(program::kProgramInputs, b.getArrayAttr(attrs));
}

FailureOr<GraphNode> Splitter::buildGraph(unsigned node) {
  auto [pathIndex, k] = nodeSource[node];
  PathFunction &path = functions[pathIndex];
  SegmentNeeds &segment = needs[node];
  bool isLast = k == path.markers.size();
  GraphNode result;
  result.graph = cast<ModuleOp>(paths[pathIndex].module->clone());
  ModuleOp module = *result.graph;
  auto oldFunc = module.lookupSymbol<func::FuncOp>("forward");
  OpBuilder builder(ctx);
  builder.setInsertionPoint(oldFunc);

  // Arguments: those of @forward (unused ones are dropped below), then the imports.
  SmallVector<Type> argTypes(oldFunc.getArgumentTypes());
  for (Value import : segment.imports)
    argTypes.push_back(import.getType());
  auto newFunc = func::FuncOp::create(builder, oldFunc.getLoc(), "graph",
                                      builder.getFunctionType(argTypes, {}));
  Block *body = newFunc.addEntryBlock();
  IRMapping mapping;
  // The path's values (in `paths[pathIndex]`), mapped onto the clone's: same indices.
  for (unsigned i = 0, e = oldFunc.getNumArguments(); i < e; ++i)
    mapping.map(path.func.getArgument(i), body->getArgument(i));
  for (auto [i, import] : llvm::enumerate(segment.imports))
    mapping.map(import, body->getArgument(oldFunc.getNumArguments() + i));
  builder.setInsertionPointToEnd(body);
  // Recomputed views and scalars, in program order, then the aliases of in-place results.
  SmallVector<Operation *> clones(segment.clones.begin(), segment.clones.end());
  llvm::sort(clones, [&](Operation *a, Operation *b) {
    return path.index.lookup(a) < path.index.lookup(b);
  });
  std::function<Value(Value)> lookup = [&](Value v) -> Value {
    if (Value mapped = mapping.lookupOrNull(v))
      return mapped;
    auto alias = segment.aliases.find(v);
    if (alias == segment.aliases.end())
      return nullptr;
    Value mapped = lookup(alias->second);
    if (mapped)
      mapping.map(v, mapped);
    return mapped;
  };
  // Operands are mapped first (an in-place result maps to its operand's value).
  auto cloneOp = [&](Operation *op) {
    op->walk([&](Operation *nested) {
      for (Value operand : nested->getOperands())
        (void)lookup(operand);
    });
    builder.clone(*op, mapping);
  };
  for (Operation *op : clones)
    cloneOp(op);
  for (Operation *op : path.ops)
    if (path.segment.lookup(op) == k && !isBreakMarker(op))
      cloneOp(op);

  // Results: the program's for the last segment of a path, else the exports.
  SmallVector<Value> results;
  SmallVector<DictionaryAttr> resultAttrs;
  if (isLast) {
    Operation *ret = path.func.front().getTerminator();
    for (auto [i, operand] : llvm::enumerate(ret->getOperands())) {
      results.push_back(lookup(operand));
      resultAttrs.push_back(oldFunc.getResultAttrDict(i));
    }
  } else {
    for (const Position &position : exports[node]) {
      results.push_back(lookup(path.valueAt(position)));
      resultAttrs.push_back(builder.getDictionaryAttr(
          builder.getNamedAttr(attr::kKind, builder.getStringAttr("user_output"))));
    }
  }
  if (llvm::is_contained(results, Value()))
    return path.func.emitError("graph break: internal error: a graph result is not computed "
                               "in its graph");
  func::ReturnOp::create(builder, oldFunc.getLoc(), results);
  newFunc.setFunctionType(builder.getFunctionType(argTypes, ValueRange(results).getTypes()));
  for (unsigned i = 0, e = oldFunc.getNumArguments(); i < e; ++i)
    newFunc.setArgAttrs(i, oldFunc.getArgAttrDict(i));
  for (unsigned i = 0, e = segment.imports.size(); i < e; ++i)
    newFunc.setArgAttrs(oldFunc.getNumArguments() + i,
                        getGraphInputAttrs(ctx, "user_input", "glue." + std::to_string(i)));
  for (auto [i, attrs] : llvm::enumerate(resultAttrs))
    if (attrs)
      newFunc.setResultAttrs(i, attrs);

  // Drop the arguments the graph does not use, and what only they referred to.
  llvm::BitVector unused(newFunc.getNumArguments());
  std::vector<int64_t> inputs;
  for (unsigned i = 0, e = newFunc.getNumArguments(); i < e; ++i) {
    if (newFunc.getArgument(i).use_empty()) {
      unused.set(i);
      continue;
    }
    if (i < oldFunc.getNumArguments()) {
      if (inputGlue.count(i))
        inputs.push_back(inputGlue.at(i));
    } else {
      inputs.push_back(-2 - int64_t(i - oldFunc.getNumArguments())); // import, resolved later
    }
  }
  if (failed(newFunc.eraseArguments(unused)))
    return failure();
  oldFunc.erase();
  newFunc.setName("forward");
  bool erased = true;
  while (erased) {
    erased = false;
    for (Operation &op : llvm::make_early_inc_range(module.getBody()->getOperations())) {
      auto symbol = dyn_cast<SymbolOpInterface>(op);
      if (!symbol || &op == newFunc.getOperation())
        continue;
      bool referenced = !SymbolTable::symbolKnownUseEmpty(symbol.getNameAttr(), module);
      if (isa<GlobalOp>(op))
        for (unsigned i = 0, e = newFunc.getNumArguments(); i < e; ++i)
          if (auto ref = newFunc.getArgAttrOfType<FlatSymbolRefAttr>(i, attr::kGlobal))
            referenced |= ref.getValue() == symbol.getName();
      if (!referenced) {
        op.erase();
        erased = true;
      }
    }
  }
  if (!isLast)
    module->removeAttr(attr::kReplay);
  // Program inputs by glue value, imports as -2 - i until `run` resolves them.
  result.inputs = std::move(inputs);
  return result;
}

FailureOr<GraphProgram> tgc::trace::splitGraphBreaks(std::vector<PathTrace> &paths,
                                                     MLIRContext *ctx) {
  return Splitter(paths, ctx).run();
}
