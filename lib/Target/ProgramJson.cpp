// model.json's "program" (docs/graph-breaks.md) from the program attributes of the
// graphs of a program with graph breaks.
#include "tgc/Target/ProgramJson.h"

#include "tgc/Dialect/Attributes.h"

#include "llvm/ADT/SmallString.h"

#include <nlohmann/json.hpp>

#include <cmath>

using namespace mlir;
using namespace tgc;

using Json = nlohmann::ordered_json;

/// A call step's argument as JSON: constants as themselves (floats as
/// {"type": "float", "value": ...} when JSON would lose that they are floats), tuples
/// as {"type": "tuple", "items": [...]}, tensors as {"type": "tensor", "value": V}
/// where V is the program value `tensors` gives at the argument's `tensor` index.
static Json argumentJson(Attribute arg, ArrayRef<int64_t> tensors) {
  if (isa<UnitAttr>(arg))
    return nullptr;
  if (auto b = dyn_cast<BoolAttr>(arg))
    return b.getValue();
  if (auto i = dyn_cast<IntegerAttr>(arg))
    return i.getInt();
  if (auto f = dyn_cast<FloatAttr>(arg)) {
    double value = f.getValueAsDouble();
    if (std::isfinite(value) && value != std::trunc(value))
      return value;
    llvm::SmallString<32> text;
    f.getValue().toString(text);
    std::string repr = std::isnan(value)   ? "nan"
                       : std::isinf(value) ? (value < 0 ? "-inf" : "inf")
                                           : text.str().str();
    if (std::isfinite(value) && repr.find_first_of(".eE") == std::string::npos)
      repr += ".0";
    return Json{{"type", "float"}, {"value", repr}};
  }
  if (auto s = dyn_cast<StringAttr>(arg))
    return s.str();
  if (auto tuple = dyn_cast<ArrayAttr>(arg)) {
    Json items = Json::array();
    for (Attribute item : tuple)
      items.push_back(argumentJson(item, tensors));
    return Json{{"type", "tuple"}, {"items", items}};
  }
  auto dict = cast<DictionaryAttr>(arg);
  if (auto cls = dict.getAs<StringAttr>("class")) {
    Json items = argumentJson(dict.get("items"), tensors).at("items");
    return Json{{"type", "tuple"},
                {"class", Json{{"type", "external"}, {"name", cls.str()}}},
                {"items", items}};
  }
  int64_t index = dict.getAs<IntegerAttr>("tensor").getInt();
  Json tensor{{"type", "tensor"}, {"value", tensors[index]}};
  if (auto number = dict.getAs<StringAttr>("number"))
    tensor["number"] = number.str();
  return tensor;
}

/// Whether every `{tensor = i}` in `arg` indexes `tensors`, and every dictionary is a
/// tensor or a named tuple, so that argumentJson can write it.
static bool isWellFormedArgument(Attribute arg, size_t numTensors) {
  if (auto tuple = dyn_cast<ArrayAttr>(arg))
    return llvm::all_of(tuple,
                        [&](Attribute item) { return isWellFormedArgument(item, numTensors); });
  auto dict = dyn_cast<DictionaryAttr>(arg);
  if (!dict)
    return isa<UnitAttr, BoolAttr, IntegerAttr, FloatAttr, StringAttr>(arg);
  if (dict.getAs<StringAttr>("class"))
    return dict.getAs<ArrayAttr>("items") && isWellFormedArgument(dict.get("items"), numTensors);
  auto index = dict.getAs<IntegerAttr>("tensor");
  return index && index.getInt() >= 0 && uint64_t(index.getInt()) < numTensors;
}

/// A call step: `callee(*args, **kwargs)`, then node `next`.
static FailureOr<Json> callJson(ModuleOp graph, DictionaryAttr step) {
  auto callee = step.getAs<StringAttr>(program::kCalleeKey);
  auto args = step.getAs<ArrayAttr>(program::kArgsKey);
  auto kwargs = step.getAs<DictionaryAttr>(program::kKwargsKey);
  auto tensorsAttr = step.getAs<DenseI64ArrayAttr>(program::kTensorsKey);
  auto next = step.getAs<IntegerAttr>(program::kNextKey);
  if (!callee || !args || !kwargs || !tensorsAttr || !next)
    return graph.emitError("malformed tgc.step: a call needs callee, args, kwargs, "
                           "tensors and next");
  ArrayRef<int64_t> tensors = tensorsAttr.asArrayRef();
  auto wellFormed = [&](Attribute arg) { return isWellFormedArgument(arg, tensors.size()); };
  if (!llvm::all_of(args, wellFormed) ||
      !llvm::all_of(kwargs, [&](NamedAttribute kwarg) { return wellFormed(kwarg.getValue()); }))
    return graph.emitError("malformed tgc.step: an argument of the call is no constant, "
                           "tuple or tensor of the call");
  Json json;
  json[program::kKindKey.str()] = program::kCall.str();
  json[program::kCalleeKey.str()] = callee.str();
  Json argsJson = Json::array(), kwargsJson = Json::array();
  for (Attribute arg : args)
    argsJson.push_back(argumentJson(arg, tensors));
  for (NamedAttribute kwarg : kwargs)
    kwargsJson.push_back(
        Json::array({kwarg.getName().str(), argumentJson(kwarg.getValue(), tensors)}));
  json[program::kArgsKey.str()] = argsJson;
  json[program::kKwargsKey.str()] = kwargsJson;
  json[program::kNextKey.str()] = next.getInt();
  return json;
}

/// A branch step: node `true` or `false` by `bool()` of program value `condition`.
static FailureOr<Json> branchJson(ModuleOp graph, DictionaryAttr step) {
  auto condition = step.getAs<IntegerAttr>(program::kConditionKey);
  auto ifTrue = step.getAs<IntegerAttr>(program::kTrueKey);
  auto ifFalse = step.getAs<IntegerAttr>(program::kFalseKey);
  if (!condition || !ifTrue || !ifFalse)
    return graph.emitError("malformed tgc.step: a branch needs condition, true and false");
  Json json;
  json[program::kKindKey.str()] = program::kBranch.str();
  json[program::kConditionKey.str()] = condition.getInt();
  json[program::kTrueKey.str()] = ifTrue.getInt();
  json[program::kFalseKey.str()] = ifFalse.getInt();
  return json;
}

/// A gradient hook step: nothing in the forward but node `next`; in backward, hook number
/// `hook` on the gradient of program value `tensor`.
static FailureOr<Json> gradHookJson(ModuleOp graph, DictionaryAttr step) {
  auto tensor = step.getAs<IntegerAttr>(program::kTensorKey);
  auto hook = step.getAs<IntegerAttr>(program::kHookKey);
  auto next = step.getAs<IntegerAttr>(program::kNextKey);
  if (!tensor || !hook || !next)
    return graph.emitError("malformed tgc.step: a grad_hook needs tensor, hook and next");
  Json json;
  json[program::kKindKey.str()] = program::kGradHook.str();
  json[program::kTensorKey.str()] = tensor.getInt();
  json[program::kHookKey.str()] = hook.getInt();
  json[program::kNextKey.str()] = next.getInt();
  return json;
}

/// A module hook step: program values `results` are `tensors` and node `next` runs; in
/// backward, the module's hooks (number `hook`) at stage `stage`.
static FailureOr<Json> moduleHookJson(ModuleOp graph, DictionaryAttr step) {
  auto stage = step.getAs<StringAttr>(program::kStageKey);
  auto hook = step.getAs<IntegerAttr>(program::kHookKey);
  auto tensors = step.getAs<DenseI64ArrayAttr>(program::kTensorsKey);
  auto results = step.getAs<DenseI64ArrayAttr>(program::kResultsKey);
  auto positions = step.getAs<DenseI64ArrayAttr>(program::kPositionsKey);
  auto arity = step.getAs<IntegerAttr>(program::kArityKey);
  auto next = step.getAs<IntegerAttr>(program::kNextKey);
  if (!stage || !hook || !tensors || !results || !positions || !arity || !next ||
      tensors.size() != results.size() || tensors.size() != positions.size())
    return graph.emitError("malformed tgc.step: a module_hook needs stage, hook, next and as "
                           "many tensors, results and positions");
  auto list = [](DenseI64ArrayAttr values) {
    return Json(std::vector<int64_t>(values.asArrayRef().begin(), values.asArrayRef().end()));
  };
  Json json;
  json[program::kKindKey.str()] = program::kModuleHook.str();
  json[program::kStageKey.str()] = stage.str();
  json[program::kHookKey.str()] = hook.getInt();
  json[program::kTensorsKey.str()] = list(tensors);
  json[program::kResultsKey.str()] = list(results);
  json[program::kPositionsKey.str()] = list(positions);
  json[program::kArityKey.str()] = arity.getInt();
  json[program::kNextKey.str()] = next.getInt();
  return json;
}

/// What the caller does after `graph` (its `tgc.step`).
static FailureOr<Json> stepJson(ModuleOp graph) {
  auto step = graph->getAttrOfType<DictionaryAttr>(program::kStep);
  auto kind = step ? step.getAs<StringAttr>(program::kKindKey) : StringAttr();
  if (!kind)
    return graph.emitError("a graph of the program has no tgc.step with a kind");
  FailureOr<Json> json = failure();
  if (kind.getValue() == program::kReturn)
    json = Json{{program::kKindKey.str(), program::kReturn.str()}};
  else if (kind.getValue() == program::kCall)
    json = callJson(graph, step);
  else if (kind.getValue() == program::kBranch)
    json = branchJson(graph, step);
  else if (kind.getValue() == program::kGradHook)
    json = gradHookJson(graph, step);
  else if (kind.getValue() == program::kModuleHook)
    json = moduleHookJson(graph, step);
  else
    return graph.emitError("malformed tgc.step: unknown kind '") << kind.getValue() << "'";
  if (failed(json))
    return failure();
  if (auto where = step.getAs<StringAttr>(program::kWhereKey))
    (*json)[program::kWhereKey.str()] = where.str();
  return json;
}

/// A program value list attribute of `graph` as JSON.
static FailureOr<Json> valuesJson(ModuleOp graph, StringRef name) {
  auto values = graph->getAttrOfType<DenseI64ArrayAttr>(name);
  if (!values)
    return graph.emitError("a graph of the program has no ") << name;
  return Json(std::vector<int64_t>(values.asArrayRef().begin(), values.asArrayRef().end()));
}

FailureOr<std::string> tgc::writeProgramJson(ArrayRef<ModuleOp> graphs,
                                             ArrayRef<std::string> graphNames) {
  if (graphs.empty())
    return failure();
  ModuleOp first = graphs.front();
  auto inputNames = first->getAttrOfType<ArrayAttr>(program::kProgramInputs);
  if (!inputNames || !llvm::all_of(inputNames, llvm::IsaPred<StringAttr>))
    return first.emitError("the program's first graph has no ")
           << program::kProgramInputs << " (a list of names)";
  Json inputs = Json::array();
  for (auto name : inputNames.getAsRange<StringAttr>())
    inputs.push_back(name.str());
  Json nodes = Json::array();
  for (auto [graph, name] : llvm::zip_equal(graphs, graphNames)) {
    FailureOr<Json> graphInputs = valuesJson(graph, program::kGraphInputs);
    FailureOr<Json> graphOutputs = valuesJson(graph, program::kGraphOutputs);
    FailureOr<Json> step = stepJson(graph);
    if (failed(graphInputs) || failed(graphOutputs) || failed(step))
      return failure();
    Json node;
    node[program::kGraphKey.str()] = name;
    node[program::kInputsKey.str()] = std::move(*graphInputs);
    node[program::kOutputsKey.str()] = std::move(*graphOutputs);
    node[program::kThenKey.str()] = std::move(*step);
    nodes.push_back(std::move(node));
  }
  Json result;
  result[program::kInputsKey.str()] = std::move(inputs);
  result[program::kNodesKey.str()] = std::move(nodes);
  return result.dump();
}
