//===- ProgramBackward.cpp - The backward of a program with graph breaks --===//
//
// The backwards of the graphs a training run ran, last first, chained like
// autograd's through Dynamo's graphs: the program's output gradients go into
// the last graph, each graph's `input.N` gradient is added to the gradient of
// the glue value it came from, parameter gradients are summed over the graphs
// (docs/graph-breaks.md, "Callers"); the caller's gradient hooks run between
// them.
//
//===----------------------------------------------------------------------===//

#include "tgc/Dialect/Attributes.h"
#include "tgc/Runner/Program.h"

#include "llvm/ADT/STLExtras.h"

#include <tuple>

using namespace tgc;
using namespace tgc::runner;

/// The gradient of each output of the graph `trail[step]` ran: the program's
/// for the last graph, else the sum of what later graphs gave its values
/// (zeros for a value nothing differentiable used).
Status Program::gradOutputsOf(size_t step, const std::vector<const DLTensor *> &gradOutputs,
                              std::map<size_t, HostTensor> &valueGrads,
                              std::vector<HostTensor> &zeros, std::vector<DLTensor> &views,
                              std::vector<DLTensor *> &pointers) {
  const nlohmann::json &entry = node(trail[step]);
  Model &model = *models[graphIndex.at(entry[program::kGraphKey.str()].get<std::string>())];
  bool last = step + 1 == trail.size();
  int64_t numOutputs = model.api.numOutputs(model.model);
  views.assign(size_t(numOutputs), DLTensor{});
  pointers.assign(size_t(numOutputs), nullptr);
  zeros.reserve(size_t(numOutputs));
  for (int64_t k = 0; k < numOutputs; ++k) {
    if (model.api.outputHasGradient(model.model, k) != 1)
      continue;
    if (last) {
      if (size_t(k) >= gradOutputs.size() || !gradOutputs[size_t(k)])
        return Status::error("no gradient for output #" + std::to_string(k) + " of the program");
      views[size_t(k)] = *gradOutputs[size_t(k)];
      pointers[size_t(k)] = &views[size_t(k)];
      continue;
    }
    size_t value = entry[program::kOutputsKey.str()][size_t(k)].get<size_t>();
    auto it = valueGrads.find(value);
    if (it != valueGrads.end()) {
      views[size_t(k)] = it->second.view();
      pointers[size_t(k)] = &views[size_t(k)];
      continue;
    }
    zeros.push_back(zerosLike(values[value].tensor));
    views[size_t(k)] = zeros.back().view();
    pointers[size_t(k)] = &views[size_t(k)];
  }
  return Status::success();
}

/// Runs the backward of the graph `trail[step]` ran and adds its gradients to
/// `valueGrads` (by glue value) and `paramGrads` (by name).
Status Program::backwardStep(size_t step, const std::vector<const DLTensor *> &gradOutputs,
                             std::map<size_t, HostTensor> &valueGrads,
                             std::map<std::string, HostTensor> &paramGrads) {
  const nlohmann::json &entry = node(trail[step]);
  size_t graph = graphIndex.at(entry[program::kGraphKey.str()].get<std::string>());
  Model &model = *models[graph];
  std::vector<HostTensor> zeros;
  std::vector<DLTensor> views;
  std::vector<DLTensor *> pointers;
  if (Status status = gradOutputsOf(step, gradOutputs, valueGrads, zeros, views, pointers))
    return status;
  int64_t numGradients = model.api.numGradients(model.model);
  std::vector<DLManagedTensor *> raw(size_t(numGradients), nullptr);
  int rc = model.api.backward(model.model, pointers.data(), int64_t(pointers.size()), raw.data(),
                              numGradients);
  std::vector<ManagedTensor> grads;
  for (DLManagedTensor *grad : raw)
    grads.emplace_back(grad);
  if (rc != 0)
    return fail(graph, "running the backward of graph '" + model.name + "'");
  for (int64_t g = 0; g < numGradients; ++g) {
    std::string name = model.api.gradientName(model.model, g);
    HostTensor copy;
    if (Status status = copyToHost(grads[size_t(g)]->dl_tensor, name, copy))
      return status;
    bool isInput = name.rfind("input.", 0) == 0;
    std::string what = name;
    size_t value = 0;
    if (isInput) {
      value = entry[program::kInputsKey.str()][std::stoul(name.substr(6))].get<size_t>();
      what = "value." + std::to_string(value);
    }
    HostTensor *sum = nullptr;
    if (isInput) {
      auto [it, inserted] = valueGrads.try_emplace(value, std::move(copy));
      if (inserted)
        continue;
      sum = &it->second;
    } else {
      auto [it, inserted] = paramGrads.try_emplace(name, std::move(copy));
      if (inserted)
        continue;
      sum = &it->second;
    }
    if (Status status = addInto(*sum, copy, what))
      return status;
  }
  return syncBuffers(graph, "backward_mutations");
}

/// The `grad_hook` steps of the run on values the graph `trail[step]` computed, with
/// the gradients later graphs gave them: the values last computed first (autograd reaches
/// them first), each value's hooks in the order the program registered them.
Status Program::runGradHooks(size_t step, std::map<size_t, HostTensor> &valueGrads,
                             const CallHook &hook) {
  const nlohmann::json &outputs = node(trail[step])[program::kOutputsKey.str()];
  // (value, registration order, step)
  std::vector<std::tuple<size_t, size_t, const nlohmann::json *>> hooks;
  for (size_t ran : trail) {
    const nlohmann::json &then = node(ran)[program::kThenKey.str()];
    if (!then.is_object() || then.value(program::kKindKey.str(), "") != program::kGradHook)
      continue;
    size_t value = then[program::kTensorKey.str()].get<size_t>();
    if (llvm::is_contained(outputs, value))
      hooks.emplace_back(value, hooks.size(), &then);
  }
  llvm::sort(hooks, [](const auto &a, const auto &b) {
    return std::get<0>(a) != std::get<0>(b) ? std::get<0>(a) > std::get<0>(b)
                                            : std::get<1>(a) < std::get<1>(b);
  });
  for (auto [value, order, then] : hooks) {
    auto grad = valueGrads.find(value);
    if (grad == valueGrads.end())
      continue; // no gradient reached it: autograd does not call its hooks
    DLTensor view = grad->second.view();
    ProgramCall call;
    call.call["hook"] = (*then)[program::kHookKey.str()];
    call.call["tensor"] = value;
    if (then->contains(program::kWhereKey.str()))
      call.call["where"] = (*then)[program::kWhereKey.str()];
    call.tensors.push_back(&view);
    if (Status status = hook(call))
      return status;
  }
  return Status::success();
}

/// The step after graph `trail[step]` when it is a `module_hook` (a submodule call with
/// backward hooks, docs/graph-breaks.md), as torch's BackwardHook runs it: at stage
/// "output", when a gradient reached any of the call's results, the caller runs the
/// module's backward pre-hooks on them (null where none reached it) and keeps what they
/// leave for stage "input"; there it runs the full hooks on the gradients of the call's
/// arguments through the call alone (zeros where none flowed) and those kept. At both
/// stages the gradients of the step's `results` then go to its `tensors`.
Status Program::moduleHookBackward(size_t step, std::map<size_t, HostTensor> &valueGrads,
                                   const CallHook &hook, std::map<int64_t, KeptGrads> &kept) {
  const nlohmann::json &then = node(trail[step])[program::kThenKey.str()];
  ModuleHookStep parsed;
  if (Status status = ModuleHookStep::parse(then, parsed))
    return status;
  bool output = parsed.stage == program::kOutputStage;
  // The positions and arity of the other stage of the same call.
  auto otherStage = [&](llvm::StringRef stage) {
    nlohmann::json found;
    for (size_t ran : trail) {
      const nlohmann::json &other = node(ran)[program::kThenKey.str()];
      ModuleHookStep parsedOther;
      if (other.is_object() && other.value(program::kKindKey.str(), "") == program::kModuleHook &&
          other.value(program::kStageKey.str(), "") == stage &&
          other.value(program::kHookKey.str(), nlohmann::json()) == parsed.hook &&
          !ModuleHookStep::parse(other, parsedOther))
        found = {{"positions", parsedOther.positions}, {"arity", parsedOther.arity}};
    }
    return found;
  };
  auto previous = kept.find(parsed.hook);
  bool fire = false;
  if (hook && output)
    fire = llvm::any_of(parsed.results, [&](size_t r) { return valueGrads.count(r) != 0; });
  else if (hook)
    fire = previous != kept.end() && !parsed.results.empty();
  if (fire) {
    ProgramCall call;
    call.call = {{"hook", parsed.hook},
                 {"stage", parsed.stage},
                 {"positions", parsed.positions},
                 {"arity", parsed.arity},
                 {output ? "inputs" : "outputs",
                  otherStage(output ? program::kInputStage : program::kOutputStage)}};
    if (then.contains(program::kWhereKey.str()))
      call.call["where"] = then[program::kWhereKey.str()];
    std::vector<DLTensor> views;
    views.reserve(parsed.results.size() + (output ? 0 : previous->second.size()));
    for (size_t result : parsed.results) {
      auto grad = valueGrads.find(result);
      if (grad == valueGrads.end() && !output) // an argument nothing in the call differentiated
        grad = valueGrads.emplace(result, zerosLike(values[result].tensor)).first;
      views.push_back(grad == valueGrads.end() ? DLTensor{} : grad->second.view());
      call.tensors.push_back(grad == valueGrads.end() ? nullptr : &views.back());
    }
    if (!output)
      for (std::optional<HostTensor> &grad : previous->second) {
        views.push_back(grad ? grad->view() : DLTensor{});
        call.tensors.push_back(grad ? &views.back() : nullptr);
      }
    if (Status status = hook(call))
      return status;
    if (output) {
      // What the pre-hooks left, for the full hooks at the input stage.
      KeptGrads &grads = kept[parsed.hook];
      grads.assign(parsed.results.size(), std::nullopt);
      for (size_t i = 0; i < parsed.results.size(); ++i)
        if (call.tensors[i])
          if (Status status = copyToHost(*call.tensors[i], "a gradient output", grads[i].emplace()))
            return status;
    }
  }
  if (!output && previous != kept.end())
    kept.erase(previous);
  for (auto [tensor, result] : llvm::zip(parsed.tensors, parsed.results)) {
    auto grad = valueGrads.find(result);
    if (grad == valueGrads.end())
      continue;
    HostTensor moved = std::move(grad->second);
    valueGrads.erase(grad);
    auto [it, inserted] = valueGrads.try_emplace(tensor, std::move(moved));
    if (!inserted)
      if (Status status = addInto(it->second, moved, "value." + std::to_string(tensor)))
        return status;
  }
  return Status::success();
}

Status Program::backward(const std::vector<const DLTensor *> &gradOutputs,
                         std::vector<ManagedTensor> &grads, const CallHook &hook) {
  grads.clear();
  if (trail.empty())
    return Status::error("backward before a run of the program");
  std::map<size_t, HostTensor> valueGrads;
  std::map<std::string, HostTensor> paramGrads;
  std::map<int64_t, KeptGrads> moduleGradOutputs;
  for (size_t step = trail.size(); step-- > 0;) {
    const nlohmann::json &then = node(trail[step])[program::kThenKey.str()];
    if (then.is_object() && then.value(program::kKindKey.str(), "") == program::kModuleHook)
      if (Status status = moduleHookBackward(step, valueGrads, hook, moduleGradOutputs))
        return status;
    if (hook)
      if (Status status = runGradHooks(step, valueGrads, hook))
        return status;
    if (Status status = backwardStep(step, gradOutputs, valueGrads, paramGrads))
      return status;
  }
  trail.clear(); // the graphs' saved values are gone
  for (const std::string &name : gradients) {
    if (name.rfind("input.", 0) == 0) {
      auto it = valueGrads.find(std::stoul(name.substr(6)));
      grads.push_back(it == valueGrads.end() ? nullptr : toManaged(std::move(it->second)));
      continue;
    }
    auto it = paramGrads.find(name);
    grads.push_back(it == paramGrads.end() ? nullptr : toManaged(std::move(it->second)));
  }
  return Status::success();
}
