//===- RunProgram.cpp - `tgc run` of a program with graph breaks ----------===//
//
// Runs the program's graphs with the executor (Program.h). The calls between
// graphs (print) are not performed: they are written to `<output stem>.replay.json`
// under "calls", their tensors to the outputs file as `call.<i>.<k>`.
//
//===----------------------------------------------------------------------===//

#include "Files.h"
#include "tgc/Runner/Program.h"
#include "tgc/Runner/Run.h"

#include <set>

using namespace tgc;
using namespace tgc::runner;

namespace {

/// One `tgc run` of a program: the files and the executor.
class ProgramRun {
public:
  explicit ProgramRun(const RunOptions &options) : options(options) {}
  Status run();

private:
  Status bindInputs();
  Status recordCall(const ProgramCall &call);
  Status save(const std::string &name, const DLTensor &tensor);
  Status saveOutputs();
  Status runBackward();
  Status saveMutatedInputs();
  Status saveBuffers();
  Status writeReplay();

  const RunOptions &options;
  std::unique_ptr<Program> program;
  SafetensorsFile inputs;
  std::vector<DLTensor> inputViews;
  SafetensorsFile results;
  nlohmann::json calls = nlohmann::json::array();
};

Status ProgramRun::bindInputs() {
  const std::vector<std::string> &names = program->inputNames();
  for (size_t i = 0; i < names.size(); ++i) {
    SafetensorsTensor *found = findInput(inputs, names[i], i);
    if (!found)
      return Status::error(options.inputsPath + ": no tensor '" + names[i] + "' or 'input." +
                           std::to_string(i) + "' for input #" + std::to_string(i));
    inputViews.push_back(viewTensor(*found));
  }
  return Status::success();
}

Status ProgramRun::save(const std::string &name, const DLTensor &tensor) {
  SafetensorsTensor saved;
  if (Status status = saveTensor(name, tensor, saved))
    return status;
  results.tensors.push_back(std::move(saved));
  if (std::string strides = nonRowMajorStrides(tensor); !strides.empty())
    results.metadata["strides." + name] = strides;
  return Status::success();
}

/// Names each tensor argument of a call by its key in the outputs file.
void nameCallTensors(nlohmann::json &value, const std::string &prefix) {
  if (value.is_array()) {
    for (nlohmann::json &item : value)
      nameCallTensors(item, prefix);
    return;
  }
  if (!value.is_object())
    return;
  if (value.value("type", "") == "tensor" && value.contains("index")) {
    value["tensor"] = prefix + std::to_string(value["index"].get<size_t>());
    value.erase("index");
    return;
  }
  if (value.contains("items"))
    nameCallTensors(value["items"], prefix);
}

Status ProgramRun::recordCall(const ProgramCall &call) {
  std::string prefix = "call." + std::to_string(calls.size()) + ".";
  for (size_t k = 0; k < call.tensors.size(); ++k)
    if (Status status = save(prefix + std::to_string(k), *call.tensors[k]))
      return status;
  nlohmann::json recorded = call.call;
  nameCallTensors(recorded["args"], prefix);
  nameCallTensors(recorded["kwargs"], prefix);
  calls.push_back(recorded);
  return Status::success();
}

/// The result graph's outputs are the program's (docs/replay.md for its Python
/// state).
Status ProgramRun::saveOutputs() {
  const nlohmann::json &signature = program->json()["graphs"][program->resultGraph()];
  nlohmann::json entries = signature.value("outputs", nlohmann::json::array());
  std::vector<ManagedTensor> &outputs = program->outputs();
  for (size_t k = 0; k < outputs.size(); ++k) {
    bool state = k < entries.size() && entries[k].is_object() &&
                 entries[k].value("kind", "") == "python_state";
    if (Status status =
            save((state ? "replay." : "output.") + std::to_string(k), outputs[k]->dl_tensor))
      return status;
  }
  return Status::success();
}

/// The program's output gradients (output.N of --grad-outputs) into the
/// backward; the gradients as `grad.<fqn>` and `grad.input.N`.
Status ProgramRun::runBackward() {
  llvm::Expected<SafetensorsFile> file = readSafetensors(options.gradOutputsPath);
  if (!file)
    return toStatus(file.takeError());
  std::vector<DLTensor> views(program->outputs().size());
  std::vector<const DLTensor *> gradOutputs(views.size(), nullptr);
  for (size_t k = 0; k < views.size(); ++k) {
    if (!program->outputHasGradient(k))
      continue;
    std::string name = "output." + std::to_string(k);
    SafetensorsTensor *found = findInput(*file, name, k);
    if (!found)
      return Status::error(options.gradOutputsPath + ": no tensor '" + name +
                           "' for the gradient of output #" + std::to_string(k));
    views[k] = viewTensor(*found);
    gradOutputs[k] = &views[k];
  }
  std::vector<ManagedTensor> grads;
  if (Status status = program->backward(gradOutputs, grads))
    return status;
  for (size_t g = 0; g < grads.size(); ++g)
    if (grads[g])
      if (Status status = save("grad." + program->gradientNames()[g], grads[g]->dl_tensor))
        return status;
  return Status::success();
}

Status ProgramRun::saveMutatedInputs() {
  for (size_t i = 0; i < inputViews.size(); ++i)
    if (program->inputIsMutated(i))
      if (Status status = save("mutated." + program->inputNames()[i], inputViews[i]))
        return status;
  return Status::success();
}

/// Buffers, each once (the graphs hold the same values); not the tensors of
/// Python objects (state with a `source`).
Status ProgramRun::saveBuffers() {
  std::set<std::string> sourced;
  for (const nlohmann::json &graph : program->json()["graphs"])
    for (const std::string &name : sourcedState(graph))
      sourced.insert(name);
  for (const StateEntry &entry : program->state()) {
    if (entry.kind != TGC_STATE_BUFFER || sourced.count(entry.name))
      continue;
    HostTensor value;
    SafetensorsTensor saved;
    if (Status status = program->readState(entry.name, value))
      return status;
    if (Status status = saveState(entry.name, value, saved))
      return status;
    results.tensors.push_back(std::move(saved));
  }
  return Status::success();
}

Status ProgramRun::writeReplay() {
  const nlohmann::json &signature = program->json()["graphs"][program->resultGraph()];
  nlohmann::json replay = signature.value("replay", nlohmann::json());
  nlohmann::json written;
  if (!replay.is_null()) {
    nameReplayTensors(replay);
    written["replay"] = replay;
  }
  written["calls"] = calls;
  return writeReplayJson(options.outputPath, written);
}

Status ProgramRun::run() {
  if (options.train && options.gradOutputsPath.empty())
    return Status::error("--train needs --grad-outputs (the gradient of each output, named "
                         "output.N)");
  llvm::Expected<SafetensorsFile> file = readSafetensors(options.inputsPath);
  if (!file)
    return toStatus(file.takeError());
  inputs = std::move(*file);
  if (Status status = Program::open(options.soPath, program))
    return status;
  if (Status status = bindInputs())
    return status;
  if (Status status = program->run(inputViews, options.train,
                                   [&](const ProgramCall &call) { return recordCall(call); }))
    return status;
  results.metadata["model"] = program->json().value("name", "");
  if (Status status = saveOutputs())
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

Status tgc::runner::runProgram(const RunOptions &options) { return ProgramRun(options).run(); }
