//===- Model.h - One compiled model loaded from its model.so ----*- C++ -*-===//
//
// A model.so carries its own copy of the runtime, so its tgc_model_* functions
// are looked up in that library (dlopen/dlsym) rather than linked: an instance
// belongs to the runtime copy inside its own .so (docs/abi.md).
//
//===----------------------------------------------------------------------===//

#ifndef TGC_RUNNER_MODEL_H
#define TGC_RUNNER_MODEL_H

#include "tgc/Runner/Status.h"
#include "tgc/Runtime/tgc_runtime.h"

#include <nlohmann/json.hpp>

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tgc::runner {

struct HostTensor;

/// The runtime functions of one loaded model.so.
struct ModelApi {
  decltype(&tgc_model_destroy) destroy = nullptr;
  decltype(&tgc_model_last_error) lastError = nullptr;
  decltype(&tgc_model_num_inputs) numInputs = nullptr;
  decltype(&tgc_model_num_outputs) numOutputs = nullptr;
  decltype(&tgc_model_input_name) inputName = nullptr;
  decltype(&tgc_model_input_is_mutated) inputIsMutated = nullptr;
  decltype(&tgc_model_run) run = nullptr;
  decltype(&tgc_model_num_state) numState = nullptr;
  decltype(&tgc_model_state_name) stateName = nullptr;
  decltype(&tgc_model_state_kind) stateKind = nullptr;
  decltype(&tgc_model_state_dtype) stateDType = nullptr;
  decltype(&tgc_model_state_shape) stateShape = nullptr;
  decltype(&tgc_model_get_state) getState = nullptr;
  decltype(&tgc_model_set_state) setState = nullptr;
  // Training (absent from models of ABI version 1).
  decltype(&tgc_model_is_trainable) isTrainable = nullptr;
  decltype(&tgc_model_run_train) runTrain = nullptr;
  decltype(&tgc_model_backward) backward = nullptr;
  decltype(&tgc_model_num_gradients) numGradients = nullptr;
  decltype(&tgc_model_gradient_name) gradientName = nullptr;
  decltype(&tgc_model_output_has_gradient) outputHasGradient = nullptr;
  // Devices (absent from models built before the CUDA target: CPU models).
  decltype(&tgc_model_device_type) deviceType = nullptr;
  decltype(&tgc_model_copy_to_device) copyToDevice = nullptr;
  decltype(&tgc_model_copy_to_host) copyToHost = nullptr;
};

/// Frees a DLManagedTensor through its own deleter.
struct ManagedDeleter {
  void operator()(DLManagedTensor *tensor) const {
    if (tensor && tensor->deleter)
      tensor->deleter(tensor);
  }
};
/// A tensor a model returned (or the runner made), freed when dropped.
using ManagedTensor = std::unique_ptr<DLManagedTensor, ManagedDeleter>;

/// One instance of one model of a model.so. The library stays loaded after the
/// instance is destroyed: the deleters of the tensors it returned live there.
class Model {
public:
  Model() = default;
  Model(const Model &) = delete;
  Model &operator=(const Model &) = delete;
  ~Model();

  /// Loads `soPath` and creates an instance of model `modelName` (by default
  /// the "name" in X.json beside it, else the file stem).
  Status load(const std::string &soPath, std::optional<std::string> modelName = std::nullopt);

  /// Whether the model has a backward (compiled with --train).
  bool isTrainable() const;
  /// Whether the model runs on a GPU (compiled with --target=cuda): its inputs and
  /// outputs are device tensors, which run() and the helpers below copy.
  bool onDevice() const;
  /// Replaces each non-null host tensor of `tensors` by a copy on the model's device,
  /// kept alive in `copies`. False when a copy fails (error() says why).
  bool toDevice(std::vector<DLTensor *> &tensors, std::vector<ManagedTensor> &copies);
  /// Replaces each non-null tensor of `tensors` (on the model's device) by a host copy.
  bool toHost(std::vector<ManagedTensor> &tensors);
  /// Runs tgc_model_run (or _run_train when `train`) on `inputs`; `outputs` gets
  /// one entry per output. False when it fails (error() says why). A GPU model gets
  /// device copies of the inputs; its outputs, and the inputs it writes, come back to
  /// the host.
  bool run(std::vector<DLTensor> &inputs, bool train, std::vector<ManagedTensor> &outputs);
  /// Whether the model has state (a parameter, buffer or constant) `name`.
  bool hasState(const std::string &name) const;
  /// Copies state `name` into `value` (its dtype and sizes).
  Status readState(const std::string &name, HostTensor &value) const;
  /// The model's last error, prefixed by `what`.
  Status error(const std::string &what) const;

  ModelApi api;
  tgc_model *model = nullptr;
  std::string name;

private:
  void *handle = nullptr;
  std::string path;
  /// A GPU model's inputs of the last run, on the device.
  std::vector<ManagedTensor> deviceInputs;
};

/// X.json beside X.so (`soPath`), or null when there is none; errors name the
/// JSON file.
Status readModelJson(const std::string &soPath, nlohmann::json &json);

/// The state entries (of a model.json object) with a `source`: tensors read
/// from Python objects, not a module's buffers.
std::vector<std::string> sourcedState(const nlohmann::json &json);

} // namespace tgc::runner

#endif // TGC_RUNNER_MODEL_H
