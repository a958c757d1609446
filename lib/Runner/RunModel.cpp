//===- RunModel.cpp - `tgc run` of one compiled model ---------------------===//

#include "Files.h"
#include "tgc/Runner/Program.h"
#include "tgc/Runner/Run.h"

#include <map>
#include <set>

using namespace tgc;
using namespace tgc::runner;

namespace {

/// The Python state of a model (docs/replay.md): which outputs hold its tensors
/// (`"kind": "python_state"` in X.json) and the replay list.
struct ModelReplay {
  std::vector<bool> isState;
  nlohmann::json actions;
  /// State read from Python objects: not a module's buffer, so not written as
  /// `state.<name>`.
  std::set<std::string> sourced;
  /// Outputs that are an input's new value after `out=` resized it (a `resize`
  /// action): written as `mutated.<input>`, by output index.
  std::map<int64_t, std::string> resized;
};

ModelReplay readModelReplay(const nlohmann::json &json) {
  ModelReplay replay;
  if (!json.is_object())
    return replay;
  if (json.contains("outputs") && json["outputs"].is_array())
    for (const nlohmann::json &output : json["outputs"])
      replay.isState.push_back(output.is_object() && output.value("kind", "") == "python_state");
  if (json.contains("replay"))
    replay.actions = json["replay"];
  if (replay.actions.is_array())
    for (const nlohmann::json &action : replay.actions) {
      if (!action.is_object() || action.value("kind", "") != "resize" ||
          !action.contains("input") || !action["input"].is_string() || !action.contains("value") ||
          !action["value"].is_object())
        continue;
      const nlohmann::json &value = action["value"];
      if (value.contains("output") && value["output"].is_number_integer())
        replay.resized[value["output"].get<int64_t>()] =
            "mutated." + action["input"].get<std::string>();
    }
  for (const std::string &name : sourcedState(json))
    replay.sourced.insert(name);
  return replay;
}

/// One `tgc run` of a model: the inputs file, the loaded model and the results.
class ModelRun {
public:
  explicit ModelRun(const RunOptions &options) : options(options) {}
  Status run();

private:
  Status readFiles();
  Status bindInputs();
  Status runBackward();
  Status save(const std::string &name, const DLTensor &tensor);
  Status saveOutputs(std::vector<ManagedTensor> &outputs);
  Status saveMutatedInputs();
  Status saveBuffers();
  Status writeReplay();

  const RunOptions &options;
  Model model;
  SafetensorsFile inputs;
  /// The tensors bound to the model's inputs, in input order.
  std::vector<SafetensorsTensor *> inputTensors;
  std::vector<DLTensor> inputViews;
  SafetensorsFile results;
  SafetensorsFile gradOutputs;
  ModelReplay replay;
};

Status ModelRun::bindInputs() {
  int64_t count = model.api.numInputs(model.model);
  for (int64_t i = 0; i < count; ++i) {
    std::string name = model.api.inputName(model.model, i);
    SafetensorsTensor *found = findInput(inputs, name, size_t(i));
    if (!found)
      return Status::error(options.inputsPath + ": no tensor '" + name + "' or 'input." +
                           std::to_string(i) + "' for input #" + std::to_string(i) + " of model '" +
                           model.name + "'");
    inputTensors.push_back(found);
  }
  for (SafetensorsTensor *tensor : inputTensors)
    inputViews.push_back(viewTensor(*tensor));
  return Status::success();
}

Status ModelRun::save(const std::string &name, const DLTensor &tensor) {
  SafetensorsTensor saved;
  if (Status status = saveTensor(name, tensor, saved))
    return status;
  results.tensors.push_back(std::move(saved));
  if (std::string strides = nonRowMajorStrides(tensor); !strides.empty())
    results.metadata["strides." + name] = strides;
  return Status::success();
}

/// Feeds each output's gradient (`output.N` in --grad-outputs) to the
/// backward and saves the gradients as `grad.<name>`.
Status ModelRun::runBackward() {
  const ModelApi &api = model.api;
  int64_t numOutputs = api.numOutputs(model.model);
  std::vector<DLTensor> views(static_cast<size_t>(numOutputs));
  std::vector<DLTensor *> pointers(size_t(numOutputs), nullptr);
  for (int64_t k = 0; k < numOutputs; ++k) {
    if (api.outputHasGradient(model.model, k) != 1)
      continue;
    std::string name = "output." + std::to_string(k);
    SafetensorsTensor *found = findInput(gradOutputs, name, size_t(k));
    if (!found)
      return Status::error(options.gradOutputsPath + ": no tensor '" + name +
                           "' for the gradient of output #" + std::to_string(k) + " of model '" +
                           model.name + "'");
    views[size_t(k)] = viewTensor(*found);
    pointers[size_t(k)] = &views[size_t(k)];
  }
  // A GPU model takes its gradients on the device and returns them there.
  std::vector<ManagedTensor> onDevice;
  if (model.onDevice() && !model.toDevice(pointers, onDevice))
    return model.error("copying the grad outputs of model '" + model.name + "' to the GPU");
  int64_t numGradients = api.numGradients(model.model);
  std::vector<DLManagedTensor *> raw(size_t(numGradients), nullptr);
  int rc = api.backward(model.model, pointers.data(), numOutputs, raw.data(), numGradients);
  std::vector<ManagedTensor> grads;
  for (DLManagedTensor *grad : raw)
    grads.emplace_back(grad);
  if (rc != 0)
    return model.error("running the backward of model '" + model.name + "'");
  if (model.onDevice() && !model.toHost(grads))
    return model.error("copying the gradients of model '" + model.name + "' from the GPU");
  for (int64_t g = 0; g < numGradients; ++g)
    if (Status status = save(std::string("grad.") + api.gradientName(model.model, g),
                             grads[size_t(g)]->dl_tensor))
      return status;
  return Status::success();
}

Status ModelRun::saveOutputs(std::vector<ManagedTensor> &outputs) {
  for (size_t k = 0; k < outputs.size(); ++k) {
    bool state = k < replay.isState.size() && replay.isState[k];
    auto resized = replay.resized.find(int64_t(k));
    std::string name = resized != replay.resized.end()
                           ? resized->second
                           : (state ? "replay." : "output.") + std::to_string(k);
    if (Status status = save(name, outputs[k]->dl_tensor))
      return status;
  }
  return Status::success();
}

/// Mutated inputs were written back into the input buffers by the run (an input that
/// `out=` also resized has its final value among the outputs).
Status ModelRun::saveMutatedInputs() {
  for (size_t i = 0; i < inputTensors.size(); ++i) {
    if (model.api.inputIsMutated(model.model, int64_t(i)) != 1)
      continue;
    std::string name = std::string("mutated.") + model.api.inputName(model.model, int64_t(i));
    if (llvm::is_contained(llvm::make_second_range(replay.resized), name))
      continue;
    if (Status status = save(name, inputViews[i]))
      return status;
  }
  return Status::success();
}

/// Buffers are what a run changes; parameters and constants are not saved.
Status ModelRun::saveBuffers() {
  int64_t count = model.api.numState(model.model);
  for (int64_t i = 0; i < count; ++i) {
    std::string name = model.api.stateName(model.model, i);
    if (model.api.stateKind(model.model, i) != TGC_STATE_BUFFER || replay.sourced.count(name))
      continue;
    HostTensor value;
    SafetensorsTensor saved;
    if (Status status = model.readState(name, value))
      return status;
    if (Status status = saveState(name, value, saved))
      return status;
    results.tensors.push_back(std::move(saved));
  }
  return Status::success();
}

/// `<output stem>.replay.json` beside the outputs: the replay list, each tensor
/// value naming its safetensors key (nothing when the model has no replay list).
Status ModelRun::writeReplay() {
  if (replay.actions.is_null())
    return Status::success();
  nlohmann::json actions = replay.actions;
  nameReplayTensors(actions);
  for (nlohmann::json &action : actions)
    if (action.is_object() && action.contains("value") && action["value"].is_object() &&
        action["value"].contains("output") && action["value"]["output"].is_number_integer())
      if (auto resized = replay.resized.find(action["value"]["output"].get<int64_t>());
          resized != replay.resized.end())
        action["value"]["tensor"] = resized->second;
  return writeReplayJson(options.outputPath, actions);
}

Status ModelRun::readFiles() {
  if (options.train && options.gradOutputsPath.empty())
    return Status::error("--train needs --grad-outputs (the gradient of each output, named "
                         "output.N)");
  if (!options.train && !options.gradOutputsPath.empty())
    return Status::error("--grad-outputs needs --train");
  llvm::Expected<SafetensorsFile> file = readSafetensors(options.inputsPath);
  if (!file)
    return toStatus(file.takeError());
  inputs = std::move(*file);
  if (options.train) {
    llvm::Expected<SafetensorsFile> grads = readSafetensors(options.gradOutputsPath);
    if (!grads)
      return toStatus(grads.takeError());
    gradOutputs = std::move(*grads);
  }
  return Status::success();
}

Status ModelRun::run() {
  if (Status status = readFiles())
    return status;
  if (Status status = model.load(options.soPath))
    return status;
  // --device names where the model is expected to run: a mismatch is an error, not a
  // silent copy to the other device.
  const char *device = model.onDevice() ? "cuda" : "cpu";
  if (!options.device.empty() && options.device != device)
    return Status::error("model '" + model.name + "' runs on " + device + ", not " +
                         options.device + " (compile it with --target=" + options.device + ")");
  nlohmann::json json;
  if (Status status = readModelJson(options.soPath, json))
    return status;
  replay = readModelReplay(json);
  if (options.train && !model.isTrainable())
    return Status::error("--train: model '" + model.name +
                         "' is not trainable (compile it with `tgc compile --train`)");
  if (Status status = bindInputs())
    return status;

  std::vector<ManagedTensor> outputs;
  if (!model.run(inputViews, options.train, outputs))
    return model.error("running model '" + model.name + "'");
  results.metadata["model"] = model.name;
  if (Status status = saveOutputs(outputs))
    return status;
  if (options.train)
    if (Status status = runBackward())
      return status;
  if (Status status = saveMutatedInputs())
    return status;
  if (Status status = saveBuffers())
    return status;
  if (Status status = toStatus(writeSafetensors(options.outputPath, results)))
    return status;
  return writeReplay();
}

} // namespace

Status tgc::runner::runModel(const RunOptions &options) {
  nlohmann::json json;
  if (Status status = readModelJson(options.soPath, json))
    return status;
  try {
    if (json.is_object() && json.contains("program"))
      return runProgram(options);
    return ModelRun(options).run();
  } catch (const nlohmann::json::exception &error) {
    return Status::error(options.soPath + ": malformed model.json: " + error.what());
  }
}
