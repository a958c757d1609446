//===- Model.cpp - One compiled model loaded from its model.so ------------===//

#include "tgc/Runner/Model.h"
#include "tgc/Runner/Tensor.h"

#include <cerrno>
#include <cstring>
#include <dlfcn.h>
#include <filesystem>
#include <fstream>
#include <sstream>

using namespace tgc::runner;

namespace {

/// X.json beside X.so.
std::string jsonPathOf(const std::string &soPath) {
  return std::filesystem::path(soPath).replace_extension("json").string();
}

/// The model's name: "name" in X.json beside X.so, else the file stem.
Status readModelName(const std::string &soPath, std::string &name) {
  nlohmann::json json;
  if (Status status = readModelJson(soPath, json))
    return status;
  if (json.is_null()) {
    name = std::filesystem::path(soPath).stem().string();
    return Status::success();
  }
  if (json.is_object() && json.contains("name") && json["name"].is_string()) {
    name = json["name"].get<std::string>();
    return Status::success();
  }
  return Status::error(jsonPathOf(soPath) + ": no string \"name\"");
}

/// The address of `symbol` in `handle` as an F, or null.
template <typename F> F lookupOrNull(void *handle, const char *symbol, F) {
  return reinterpret_cast<F>(dlsym(handle, symbol));
}

} // namespace

Status tgc::runner::readModelJson(const std::string &soPath, nlohmann::json &json) {
  json = nullptr;
  std::string jsonPath = jsonPathOf(soPath);
  std::error_code ec;
  if (!std::filesystem::exists(jsonPath, ec))
    return Status::success();
  std::ifstream in(jsonPath);
  if (!in)
    return Status::error(jsonPath + ": cannot read: " + std::strerror(errno));
  std::stringstream text;
  text << in.rdbuf();
  try {
    json = nlohmann::json::parse(text.str());
  } catch (const nlohmann::json::exception &error) {
    return Status::error(jsonPath + ": invalid JSON: " + error.what());
  }
  return Status::success();
}

std::vector<std::string> tgc::runner::sourcedState(const nlohmann::json &json) {
  std::vector<std::string> names;
  if (json.is_object() && json.contains("state") && json["state"].is_array())
    for (const nlohmann::json &entry : json["state"])
      if (entry.is_object() && entry.contains("source") && entry.contains("name"))
        names.push_back(entry["name"].get<std::string>());
  return names;
}

// The library stays loaded (no dlclose): tensors the model returned may outlive the
// instance, and their deleters are code of the model.so.
Model::~Model() {
  if (model && api.destroy)
    api.destroy(model);
}

Status Model::load(const std::string &soPath, std::optional<std::string> modelName) {
  std::error_code ec;
  std::filesystem::path absolute = std::filesystem::absolute(soPath, ec);
  if (ec)
    return Status::error(soPath + ": " + ec.message());
  path = soPath;
  if (modelName)
    name = *modelName;
  else if (Status status = readModelName(soPath, name))
    return status;
  // An absolute path keeps dlopen from searching the library path.
  handle = dlopen(absolute.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle)
    return Status::error("cannot load " + soPath + ": " + dlerror());
  std::string createName = name + "_create";
  auto create = lookupOrNull(handle, createName.c_str(), (int (*)(tgc_model **)) nullptr);
  if (!create)
    return Status::error(path + ": no function '" + createName +
                         "' (is it a model compiled by tgc?)");
  const char *missing = nullptr;
  auto find = [&](const char *symbol, auto &function) {
    if (!missing && !(function = lookupOrNull(handle, symbol, function)))
      missing = symbol;
  };
  find("tgc_model_destroy", api.destroy);
  find("tgc_model_last_error", api.lastError);
  find("tgc_model_num_inputs", api.numInputs);
  find("tgc_model_num_outputs", api.numOutputs);
  find("tgc_model_input_name", api.inputName);
  find("tgc_model_input_is_mutated", api.inputIsMutated);
  find("tgc_model_run", api.run);
  find("tgc_model_num_state", api.numState);
  find("tgc_model_state_name", api.stateName);
  find("tgc_model_state_kind", api.stateKind);
  find("tgc_model_state_dtype", api.stateDType);
  find("tgc_model_state_shape", api.stateShape);
  find("tgc_model_get_state", api.getState);
  find("tgc_model_set_state", api.setState);
  if (missing)
    return Status::error(path + ": no function '" + missing + "' (is it a model compiled by tgc?)");
  api.isTrainable = lookupOrNull(handle, "tgc_model_is_trainable", api.isTrainable);
  api.runTrain = lookupOrNull(handle, "tgc_model_run_train", api.runTrain);
  api.backward = lookupOrNull(handle, "tgc_model_backward", api.backward);
  api.numGradients = lookupOrNull(handle, "tgc_model_num_gradients", api.numGradients);
  api.gradientName = lookupOrNull(handle, "tgc_model_gradient_name", api.gradientName);
  api.outputHasGradient =
      lookupOrNull(handle, "tgc_model_output_has_gradient", api.outputHasGradient);
  api.deviceType = lookupOrNull(handle, "tgc_model_device_type", api.deviceType);
  api.copyToDevice = lookupOrNull(handle, "tgc_model_copy_to_device", api.copyToDevice);
  api.copyToHost = lookupOrNull(handle, "tgc_model_copy_to_host", api.copyToHost);
  if (create(&model) != 0)
    return Status::error("cannot create model '" + name + "': " + api.lastError(nullptr));
  return Status::success();
}

bool Model::isTrainable() const {
  return api.isTrainable && api.runTrain && api.backward && api.numGradients && api.gradientName &&
         api.outputHasGradient && api.isTrainable(model);
}

bool Model::onDevice() const {
  return api.deviceType && api.copyToDevice && api.copyToHost && api.deviceType(model) == kDLCUDA;
}

bool Model::toDevice(std::vector<DLTensor *> &tensors, std::vector<ManagedTensor> &copies) {
  copies.clear();
  for (DLTensor *&tensor : tensors) {
    DLManagedTensor *copy = nullptr;
    if (tensor && api.copyToDevice(model, tensor, &copy) != 0)
      return false;
    copies.emplace_back(copy);
    if (copy)
      tensor = &copy->dl_tensor;
  }
  return true;
}

bool Model::toHost(std::vector<ManagedTensor> &tensors) {
  for (ManagedTensor &tensor : tensors) {
    DLManagedTensor *copy = nullptr;
    if (tensor && api.copyToHost(model, &tensor->dl_tensor, &copy) != 0)
      return false;
    if (copy)
      tensor.reset(copy);
  }
  return true;
}

bool Model::run(std::vector<DLTensor> &inputs, bool train, std::vector<ManagedTensor> &outputs) {
  std::vector<DLTensor *> pointers;
  for (DLTensor &view : inputs)
    pointers.push_back(&view);
  outputs.clear();
  bool device = onDevice();
  if (device && !toDevice(pointers, deviceInputs))
    return false;
  int64_t numOutputs = api.numOutputs(model);
  std::vector<DLManagedTensor *> raw(size_t(numOutputs), nullptr);
  auto function = train ? api.runTrain : api.run;
  int rc = function(model, pointers.data(), int64_t(pointers.size()), raw.data(), numOutputs);
  for (DLManagedTensor *output : raw)
    outputs.emplace_back(output);
  if (rc != 0 || !device)
    return rc == 0;
  // The inputs the model wrote, back into the caller's (contiguous host) tensors.
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (api.inputIsMutated(model, int64_t(i)) != 1)
      continue;
    std::vector<ManagedTensor> written;
    written.emplace_back(deviceInputs[i].release());
    if (!toHost(written))
      return false;
    const DLTensor &host = written.front()->dl_tensor;
    size_t bytes = elementSize(host.dtype);
    for (int32_t d = 0; d < host.ndim; ++d)
      bytes *= size_t(host.shape[d]);
    std::memcpy(static_cast<char *>(inputs[i].data) + inputs[i].byte_offset, host.data, bytes);
  }
  return toHost(outputs);
}

Status Model::error(const std::string &what) const {
  return Status::error(what + ": " + api.lastError(model));
}

bool Model::hasState(const std::string &name) const {
  DLDataType dtype;
  return api.stateDType(model, name.c_str(), &dtype) == 0;
}

Status Model::readState(const std::string &name, HostTensor &value) const {
  int64_t rank = 0;
  value.shape.assign(16, 0);
  if (api.stateDType(model, name.c_str(), &value.dtype) != 0 ||
      api.stateShape(model, name.c_str(), &rank, value.shape.data(), 16) != 0)
    return error("state '" + name + "'");
  value.shape.resize(size_t(rank));
  value.data.assign(size_t(value.numElements()) * elementSize(value.dtype), 0);
  DLTensor view = value.view();
  if (api.getState(model, name.c_str(), &view) != 0)
    return error("state '" + name + "'");
  return Status::success();
}
