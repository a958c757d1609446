//===- Program.cpp - Running a program with graph breaks ------------------===//
//
// Opening a program and its forward: the graphs in the order the steps say
// (docs/graph-breaks.md, "model.json, model.h, model.so").
//
//===----------------------------------------------------------------------===//

#include "tgc/Runner/Program.h"

#include "tgc/Dialect/Attributes.h"

#include "llvm/ADT/STLExtras.h"

using namespace tgc;
using namespace tgc::runner;

namespace {

/// model.json's key `name` as a string (the vocabulary is StringLiterals).
std::string key(llvm::StringRef name) { return name.str(); }

/// The kind of step a node ends with.
std::string stepKind(const nlohmann::json &then) {
  return then.is_object() ? then.value(key(program::kKindKey), "") : "";
}

/// Whether `value` is an array of unsigned integers, each below `bound`.
bool isValueList(const nlohmann::json &value, size_t bound) {
  return value.is_array() && llvm::all_of(value, [&](const nlohmann::json &v) {
           return v.is_number_unsigned() && v.get<size_t>() < bound;
         });
}

/// Whether `value` is an unsigned integer below `bound`.
bool isBelow(const nlohmann::json &value, size_t bound) {
  return value.is_number_unsigned() && value.get<size_t>() < bound;
}

/// Checks the form of model.json's "program" before the executor reads it, so that its
/// reads of nodes and steps find what they read (docs/graph-breaks.md): every node an
/// object with a graph name, inputs and outputs; every step of a known kind with its
/// keys; node numbers below the node count; program values below the number the program
/// can define (its inputs, the nodes' outputs and the module_hook steps' results).
Status checkProgram(const nlohmann::json &program) {
  const nlohmann::json &nodes = program[key(program::kNodesKey)];
  size_t numValues = program[key(program::kInputsKey)].size();
  for (const nlohmann::json &entry : nodes) {
    if (!entry.is_object())
      return Status::error("model.json: a program node is not an object");
    numValues += entry.value(key(program::kOutputsKey), nlohmann::json::array()).size();
    const nlohmann::json &then = entry.value(key(program::kThenKey), nlohmann::json());
    if (stepKind(then) == program::kModuleHook)
      numValues += then.value(key(program::kResultsKey), nlohmann::json::array()).size();
  }
  for (size_t index = 0; index < nodes.size(); ++index) {
    const nlohmann::json &entry = nodes[index];
    std::string where = "model.json: program node " + std::to_string(index);
    if (!entry.value(key(program::kGraphKey), nlohmann::json()).is_string() ||
        !isValueList(entry.value(key(program::kInputsKey), nlohmann::json()), numValues) ||
        !isValueList(entry.value(key(program::kOutputsKey), nlohmann::json()), numValues))
      return Status::error(where + " needs a graph name, and inputs and outputs that are "
                                   "program values");
    const nlohmann::json &then = entry.value(key(program::kThenKey), nlohmann::json());
    std::string kind = stepKind(then);
    auto has = [&](llvm::StringRef name, size_t bound) {
      return isBelow(then.value(key(name), nlohmann::json()), bound);
    };
    bool nextOk = has(program::kNextKey, nodes.size());
    bool ok = true;
    if (kind == program::kReturn) {
    } else if (kind == program::kCall) {
      const nlohmann::json &args = then.value(key(program::kArgsKey), nlohmann::json::array());
      const nlohmann::json &kwargs = then.value(key(program::kKwargsKey), nlohmann::json::array());
      // (null args or kwargs: none)
      ok = nextOk && then.value(key(program::kCalleeKey), nlohmann::json()).is_string() &&
           (args.is_array() || args.is_null()) && (kwargs.is_array() || kwargs.is_null()) &&
           llvm::all_of(kwargs, [](const nlohmann::json &kwarg) {
             return kwarg.is_array() && kwarg.size() == 2 && kwarg[0].is_string();
           });
    } else if (kind == program::kBranch) {
      ok = has(program::kConditionKey, numValues) && has(program::kTrueKey, nodes.size()) &&
           has(program::kFalseKey, nodes.size());
    } else if (kind == program::kGradHook) {
      ok = nextOk && has(program::kTensorKey, numValues) &&
           then.value(key(program::kHookKey), nlohmann::json()).is_number_unsigned();
    } else if (kind == program::kModuleHook) {
      ModuleHookStep step;
      if (Status status = ModuleHookStep::parse(then, step))
        return status;
      ok = nextOk && isValueList(then[key(program::kTensorsKey)], numValues) &&
           isValueList(then[key(program::kResultsKey)], numValues);
    } else {
      return Status::error(where + ": unknown program step '" + kind + "'");
    }
    if (!ok)
      return Status::error(where + ": a malformed '" + kind +
                           "' step (its keys: " + "docs/graph-breaks.md)");
  }
  return Status::success();
}

} // namespace

Status Program::open(const std::string &soPath, std::unique_ptr<Program> &program) {
  auto opened = std::unique_ptr<Program>(new Program());
  if (Status status = opened->load(soPath))
    return status;
  program = std::move(opened);
  return Status::success();
}

Status Program::load(const std::string &soPath) {
  if (Status status = readModelJson(soPath, document))
    return status;
  if (document.is_null())
    return Status::error(soPath + ": no model.json beside it (a program's graphs and steps)");
  if (!document.is_object() || !document.contains("program"))
    return Status::error(soPath + ": model.json has no \"program\" (not compiled with "
                                  "--allow-graph-breaks)");
  const nlohmann::json &program = document["program"];
  const nlohmann::json &nodes = program.value(key(program::kNodesKey), nlohmann::json());
  if (!document["graphs"].is_array() || !nodes.is_array() || nodes.empty() ||
      !llvm::all_of(document["graphs"], [](const nlohmann::json &g) { return g.is_object(); }) ||
      !program.value(key(program::kInputsKey), nlohmann::json()).is_array())
    return Status::error(soPath + ": model.json has a malformed \"program\"");
  if (Status status = checkProgram(program))
    return Status::error(soPath + ": " + status.message());
  for (const nlohmann::json &name : program[key(program::kInputsKey)])
    inputs.push_back(name.is_string() ? name.get<std::string>() : name.dump());
  std::set<std::string> seenState, seenGradients;
  std::vector<std::string> parameters;
  for (const nlohmann::json &graph : document["graphs"]) {
    auto model = std::make_unique<Model>();
    if (Status status = model->load(soPath, graph.value("name", "")))
      return status;
    for (int64_t i = 0, n = model->api.numState(model->model); i < n; ++i) {
      std::string name = model->api.stateName(model->model, i);
      if (seenState.insert(name).second)
        stateEntries.push_back({name, model->api.stateKind(model->model, i)});
    }
    if (model->isTrainable())
      for (int64_t g = 0, n = model->api.numGradients(model->model); g < n; ++g) {
        std::string name = model->api.gradientName(model->model, g);
        if (name.rfind("input.", 0) != 0 && seenGradients.insert(name).second)
          parameters.push_back(name);
      }
    graphIndex[model->name] = models.size();
    models.push_back(std::move(model));
  }
  for (size_t i = 0; i < inputs.size(); ++i)
    gradients.push_back("input." + std::to_string(i));
  gradients.insert(gradients.end(), parameters.begin(), parameters.end());
  return Status::success();
}

bool Program::isTrainable() const {
  for (const auto &model : models)
    if (!model->isTrainable())
      return false;
  return true;
}

bool Program::outputHasGradient(size_t k) const {
  const Model &model = *models[result];
  return model.isTrainable() && model.api.outputHasGradient(model.model, int64_t(k)) == 1;
}

Status Program::setState(const std::string &name, const DLTensor &value) {
  bool found = false;
  for (size_t graph = 0; graph < models.size(); ++graph) {
    Model &model = *models[graph];
    if (!model.hasState(name))
      continue;
    found = true;
    if (model.api.setState(model.model, name.c_str(), const_cast<DLTensor *>(&value)) != 0)
      return fail(graph, "state '" + name + "'");
  }
  return found ? Status::success() : Status::error("no graph has state '" + name + "'");
}

Status Program::getState(const std::string &name, DLTensor &value) {
  for (size_t graph = 0; graph < models.size(); ++graph) {
    Model &model = *models[graph];
    if (!model.hasState(name))
      continue;
    if (model.api.getState(model.model, name.c_str(), &value) != 0)
      return fail(graph, "state '" + name + "'");
    return Status::success();
  }
  return Status::error("no graph has state '" + name + "'");
}

Status Program::readState(const std::string &name, HostTensor &value) {
  for (const auto &model : models)
    if (model->hasState(name))
      return model->readState(name, value);
  return Status::error("no graph has state '" + name + "'");
}

/// Copies each buffer graph `graph` mutated into every other graph that has it.
Status Program::syncBuffers(size_t graph, const char *mutationsKey) {
  const nlohmann::json &mutations = document["graphs"][graph].value(mutationsKey, nlohmann::json());
  if (!mutations.is_array())
    return Status::success();
  for (const nlohmann::json &mutation : mutations) {
    if (mutation.value("kind", "") != "buffer")
      continue;
    std::string name = mutation.value("target", "");
    HostTensor value;
    if (Status status = models[graph]->readState(name, value))
      return status;
    if (Status status = setState(name, value.view()))
      return status;
  }
  return Status::success();
}

Status ModuleHookStep::parse(const nlohmann::json &step, ModuleHookStep &parsed) {
  auto bad = [] {
    return Status::error("model.json: a module_hook step needs stage (\"input\" or "
                         "\"output\"), hook, next, arity and as many tensors, results and "
                         "increasing positions below arity");
  };
  auto unsigned_ = [&](llvm::StringRef name) {
    const nlohmann::json &value = step.value(key(name), nlohmann::json());
    return value.is_number_unsigned();
  };
  if (!step.is_object() || !unsigned_(program::kHookKey) || !unsigned_(program::kNextKey) ||
      !unsigned_(program::kArityKey))
    return bad();
  parsed.stage = step.value(key(program::kStageKey), "");
  if (parsed.stage != program::kInputStage && parsed.stage != program::kOutputStage)
    return bad();
  parsed.hook = step[key(program::kHookKey)].get<int64_t>();
  parsed.next = step[key(program::kNextKey)].get<size_t>();
  parsed.arity = step[key(program::kArityKey)].get<int64_t>();
  const nlohmann::json &tensors = step.value(key(program::kTensorsKey), nlohmann::json());
  const nlohmann::json &results = step.value(key(program::kResultsKey), nlohmann::json());
  const nlohmann::json &positions = step.value(key(program::kPositionsKey), nlohmann::json());
  if (!tensors.is_array() || !results.is_array() || !positions.is_array() ||
      tensors.size() != results.size() || tensors.size() != positions.size())
    return bad();
  parsed.tensors.clear();
  parsed.results.clear();
  parsed.positions.clear();
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (!tensors[i].is_number_unsigned() || !results[i].is_number_unsigned() ||
        !positions[i].is_number_unsigned())
      return bad();
    int64_t position = positions[i].get<int64_t>();
    if (position >= parsed.arity || (i > 0 && position <= parsed.positions.back()))
      return bad();
    parsed.tensors.push_back(tensors[i].get<size_t>());
    parsed.results.push_back(results[i].get<size_t>());
    parsed.positions.push_back(position);
  }
  return Status::success();
}

const nlohmann::json &Program::node(size_t index) const {
  return document["program"][key(program::kNodesKey)][index];
}

Status Program::glue(const nlohmann::json &index, DLTensor *&tensor) {
  if (!index.is_number_integer() || index.get<int64_t>() < 0 ||
      size_t(index.get<int64_t>()) >= values.size() || !values[index.get<size_t>()].defined)
    return Status::error("model.json: program value " + index.dump() +
                         " is not defined where it is used");
  tensor = &values[index.get<size_t>()].tensor;
  return Status::success();
}

Status Program::runNode(size_t index, bool train) {
  const nlohmann::json &entry = node(index);
  auto it = graphIndex.find(entry.value(key(program::kGraphKey), ""));
  if (it == graphIndex.end())
    return Status::error("model.json: program node " + std::to_string(index) + " names no graph");
  size_t graph = it->second;
  Model &model = *models[graph];
  const nlohmann::json &graphInputs = entry[key(program::kInputsKey)];
  std::vector<DLTensor> views;
  for (const nlohmann::json &input : graphInputs) {
    DLTensor *tensor = nullptr;
    if (Status status = glue(input, tensor))
      return status;
    views.push_back(*tensor);
  }
  if (train && !model.isTrainable())
    return Status::error("--train: graph '" + model.name + "' is not trainable (compile the " +
                         "program with `tgc compile --train --allow-graph-breaks`)");
  if (!model.run(views, train, results))
    return fail(graph, "running graph '" + model.name + "'");
  trail.push_back(index);
  result = graph;
  for (size_t i = 0; i < graphInputs.size(); ++i)
    if (model.api.inputIsMutated(model.model, int64_t(i)) == 1 &&
        graphInputs[i].get<size_t>() < inputs.size())
      mutatedInputs.insert(graphInputs[i].get<size_t>());
  return syncBuffers(graph, "mutations");
}

/// The graph's outputs become the glue values the node's `outputs` name.
Status Program::defineOutputs(size_t index) {
  const nlohmann::json &defined = node(index)[key(program::kOutputsKey)];
  if (!defined.is_array() || defined.size() != results.size())
    return Status::error("model.json: program node " + std::to_string(index) + " lists " +
                         std::to_string(defined.size()) + " outputs, its graph has " +
                         std::to_string(results.size()));
  for (size_t k = 0; k < results.size(); ++k) {
    size_t value = defined[k].get<size_t>();
    if (values.size() <= value)
      values.resize(value + 1);
    values[value].tensor = results[k]->dl_tensor;
    values[value].owned = std::move(results[k]);
    values[value].defined = true;
  }
  results.clear();
  return Status::success();
}

Status Program::callArgument(const nlohmann::json &arg, ProgramCall &call,
                             nlohmann::json &converted) {
  converted = arg;
  if (arg.is_array()) {
    for (size_t i = 0; i < arg.size(); ++i)
      if (Status status = callArgument(arg[i], call, converted[i]))
        return status;
    return Status::success();
  }
  if (!arg.is_object())
    return Status::success();
  if (arg.value("type", "") == "tuple") {
    if (!arg.contains("items"))
      return Status::error("model.json: a tuple argument of a call has no items");
    return callArgument(arg["items"], call, converted["items"]);
  }
  if (arg.value("type", "") != "tensor")
    return Status::success();
  DLTensor *tensor = nullptr;
  if (Status status = glue(arg.value("value", nlohmann::json()), tensor))
    return status;
  converted.erase("value");
  converted["index"] = call.tensors.size();
  call.tensors.push_back(tensor);
  return Status::success();
}

Status Program::callStep(const nlohmann::json &step, const CallHook &hook) {
  ProgramCall call;
  call.call["callee"] = step[key(program::kCalleeKey)];
  nlohmann::json kwargs = nlohmann::json::array();
  if (Status status = callArgument(step.value(key(program::kArgsKey), nlohmann::json::array()),
                                   call, call.call["args"]))
    return status;
  for (const nlohmann::json &kwarg : step.value(key(program::kKwargsKey), kwargs)) {
    nlohmann::json value;
    if (Status status = callArgument(kwarg[1], call, value))
      return status;
    kwargs.push_back(nlohmann::json::array({kwarg[0], value}));
  }
  call.call["kwargs"] = kwargs;
  return hook ? hook(call) : Status::success();
}

/// After node `index` has run: `done` when it returns, else the node to run next.
Status Program::takeStep(size_t index, const CallHook &call, size_t &next, bool &done) {
  const nlohmann::json &then = node(index)[key(program::kThenKey)];
  std::string kind = stepKind(then);
  done = kind == program::kReturn;
  if (done)
    return Status::success();
  if (Status status = defineOutputs(index))
    return status;
  if (kind == program::kCall) {
    if (Status status = callStep(then, call))
      return status;
    next = then[key(program::kNextKey)].get<size_t>();
  } else if (kind == program::kGradHook) {
    // Nothing in the forward: the backward calls the hook (ProgramBackward.cpp).
    if (!then.value(key(program::kNextKey), nlohmann::json()).is_number_unsigned() ||
        !then.value(key(program::kTensorKey), nlohmann::json()).is_number_unsigned() ||
        !then.value(key(program::kHookKey), nlohmann::json()).is_number_unsigned())
      return Status::error("model.json: a grad_hook step needs tensor, hook and next");
    next = then[key(program::kNextKey)].get<size_t>();
  } else if (kind == program::kModuleHook) {
    // The call's tensors as fresh values (the same memory); its hooks run in backward.
    ModuleHookStep step;
    if (Status status = ModuleHookStep::parse(then, step))
      return status;
    for (auto [tensor, result] : llvm::zip(step.tensors, step.results)) {
      DLTensor *source = nullptr;
      if (Status status = glue(tensor, source))
        return status;
      DLTensor borrowed = *source; // before `values` grows
      if (values.size() <= result)
        values.resize(result + 1);
      values[result] = Glue{borrowed, ManagedTensor(), true};
    }
    next = step.next;
  } else if (kind == program::kBranch) {
    DLTensor *condition = nullptr;
    if (Status status = glue(then[key(program::kConditionKey)], condition))
      return status;
    bool truth = false;
    if (Status status = truthOf(*condition, truth))
      return status;
    next = then[key(truth ? program::kTrueKey : program::kFalseKey)].get<size_t>();
  } else {
    return Status::error("model.json: unknown program step '" + kind + "'");
  }
  if (next >= document["program"][key(program::kNodesKey)].size())
    return Status::error("model.json: program step to node " + std::to_string(next) +
                         ", which does not exist");
  return Status::success();
}

Status Program::run(const std::vector<DLTensor> &inputArgs, bool train, const CallHook &call) {
  values.clear();
  mutatedInputs.clear();
  results.clear();
  trail.clear();
  if (inputArgs.size() != inputs.size())
    return Status::error("the program takes " + std::to_string(inputs.size()) + " inputs, got " +
                         std::to_string(inputArgs.size()));
  for (const DLTensor &input : inputArgs) {
    values.emplace_back();
    values.back().tensor = input;
    values.back().defined = true;
  }
  size_t numNodes = document["program"][key(program::kNodesKey)].size();
  size_t index = 0;
  for (size_t steps = 1;; ++steps) {
    if (steps > numNodes)
      return Status::error("model.json: the program does not end");
    if (Status status = runNode(index, train))
      return status;
    bool done = false;
    if (Status status = takeStep(index, call, index, done))
      return status;
    if (done)
      return Status::success();
  }
}
