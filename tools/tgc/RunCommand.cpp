//===- RunCommand.cpp - `tgc run`: run a compiled model.so on files -------===//

#include "RunCommand.h"

#include "tgc/Runtime/tgc_runtime.h"
#include "tgc/Support/Safetensors.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstring>
#include <deque>
#include <map>
#include <set>
#include <dlfcn.h>
#include <memory>
#include <optional>
#include <vector>

using namespace tgc;

namespace {

llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

//===----------------------------------------------------------------------===//
// Dtypes between safetensors and DLPack
//===----------------------------------------------------------------------===//

struct DTypePair {
  SafetensorsDType safetensors;
  uint8_t code;
  uint8_t bits;
};

constexpr DTypePair kDTypePairs[] = {
    {SafetensorsDType::F32, kDLFloat, 32},
    {SafetensorsDType::F64, kDLFloat, 64},
    {SafetensorsDType::F16, kDLFloat, 16},
    {SafetensorsDType::BF16, kDLBfloat, 16},
    {SafetensorsDType::I64, kDLInt, 64},
    {SafetensorsDType::I32, kDLInt, 32},
    {SafetensorsDType::I16, kDLInt, 16},
    {SafetensorsDType::I8, kDLInt, 8},
    {SafetensorsDType::U8, kDLUInt, 8},
    {SafetensorsDType::U16, kDLUInt, 16},
    {SafetensorsDType::U32, kDLUInt, 32},
    {SafetensorsDType::U64, kDLUInt, 64},
    {SafetensorsDType::BOOL, TGC_DL_BOOL, 8},
};

DLDataType toDLDataType(SafetensorsDType dtype) {
  for (const DTypePair &pair : kDTypePairs)
    if (pair.safetensors == dtype)
      return DLDataType{pair.code, pair.bits, 1};
  return DLDataType{kDLFloat, 32, 1};
}

std::optional<SafetensorsDType> fromDLDataType(DLDataType dtype) {
  if (dtype.lanes != 1)
    return std::nullopt;
  for (const DTypePair &pair : kDTypePairs)
    if (pair.code == dtype.code && pair.bits == dtype.bits)
      return pair.safetensors;
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// The model.so's API
//===----------------------------------------------------------------------===//

/// The runtime functions of one loaded model.so. They are looked up in that
/// library (not linked into tgc) because an instance belongs to the runtime
/// copy inside its own .so.
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
};

/// Owns the dlopen handle and the instance.
class LoadedModel {
public:
  LoadedModel() = default;
  LoadedModel(const LoadedModel &) = delete;
  LoadedModel &operator=(const LoadedModel &) = delete;
  ~LoadedModel() {
    if (model && api.destroy)
      api.destroy(model);
    if (handle)
      dlclose(handle);
  }

  /// Loads `soPath` and creates an instance of model `modelName` (by default the
  /// name in X.json beside it, else the file stem).
  llvm::Error load(llvm::StringRef soPath, std::optional<std::string> modelName = std::nullopt);

  ModelApi api;
  tgc_model *model = nullptr;
  std::string name;

private:
  /// The address of `symbol` in the library as an F, or null.
  template <typename F> F lookupOrNull(const char *symbol, F);
  template <typename F> llvm::Error lookup(const char *symbol, F &function);

  void *handle = nullptr;
  std::string path;
};

/// The model's name: "name" in X.json beside X.so, else the file stem.
llvm::Expected<std::string> readModelName(llvm::StringRef soPath) {
  llvm::SmallString<256> jsonPath(soPath);
  llvm::sys::path::replace_extension(jsonPath, "json");
  std::string stem = llvm::sys::path::stem(soPath).str();
  if (!llvm::sys::fs::exists(jsonPath))
    return stem;
  auto buffer = llvm::MemoryBuffer::getFile(jsonPath, /*IsText=*/true);
  if (!buffer)
    return makeError(jsonPath +
                     ": cannot read: " + buffer.getError().message());
  try {
    nlohmann::json json = nlohmann::json::parse((*buffer)->getBuffer().str());
    if (json.is_object() && json.contains("name") && json["name"].is_string())
      return json["name"].get<std::string>();
    return makeError(jsonPath + ": no string \"name\"");
  } catch (const nlohmann::json::exception &error) {
    return makeError(jsonPath + ": invalid JSON: " + error.what());
  }
}

/// The Python state of a model (docs/replay.md): which outputs hold its tensors
/// (`"kind": "python_state"` in X.json) and the replay list.
struct ModelReplay {
  std::vector<bool> isState;
  nlohmann::json actions;
  /// State read from Python objects (model.json state entries with a `source`): not a
  /// module's buffer, so not written as `state.<name>`.
  std::set<std::string> sourced;
};

/// The state entries of a model.json object that have a `source`.
std::set<std::string> sourcedState(const nlohmann::json &json) {
  std::set<std::string> names;
  if (json.is_object() && json.contains("state") && json["state"].is_array())
    for (const nlohmann::json &entry : json["state"])
      if (entry.is_object() && entry.contains("source") && entry.contains("name"))
        names.insert(entry["name"].get<std::string>());
  return names;
}

llvm::Expected<ModelReplay> readModelReplay(llvm::StringRef soPath) {
  llvm::SmallString<256> jsonPath(soPath);
  llvm::sys::path::replace_extension(jsonPath, "json");
  ModelReplay replay;
  if (!llvm::sys::fs::exists(jsonPath))
    return replay;
  auto buffer = llvm::MemoryBuffer::getFile(jsonPath, /*IsText=*/true);
  if (!buffer)
    return makeError(jsonPath +
                     ": cannot read: " + buffer.getError().message());
  try {
    nlohmann::json json = nlohmann::json::parse((*buffer)->getBuffer().str());
    if (json.contains("outputs") && json["outputs"].is_array())
      for (const nlohmann::json &output : json["outputs"])
        replay.isState.push_back(output.is_object() &&
                                 output.value("kind", "") == "python_state");
    if (json.contains("replay"))
      replay.actions = json["replay"];
    replay.sourced = sourcedState(json);
    return replay;
  } catch (const nlohmann::json::exception &error) {
    return makeError(jsonPath + ": invalid JSON: " + error.what());
  }
}

/// Names each tensor value of a replay list by the safetensors key `tgc run`
/// writes it under: `"tensor": "replay.<output>"`.
void nameReplayTensors(nlohmann::json &value) {
  if (value.is_array()) {
    for (nlohmann::json &item : value)
      nameReplayTensors(item);
    return;
  }
  if (!value.is_object())
    return;
  if (value.value("type", "") == "tensor" && value.contains("output") &&
      value["output"].is_number_integer()) {
    value["tensor"] =
        "replay." + std::to_string(value["output"].get<int64_t>());
    return;
  }
  for (auto &[key, item] : value.items())
    nameReplayTensors(item);
}

template <typename F> F LoadedModel::lookupOrNull(const char *symbol, F) {
  return reinterpret_cast<F>(dlsym(handle, symbol));
}

template <typename F>
llvm::Error LoadedModel::lookup(const char *symbol, F &function) {
  function = lookupOrNull(symbol, function);
  if (!function)
    return makeError(path + ": no function '" + symbol +
                     "' (is it a model compiled by tgc?)");
  return llvm::Error::success();
}

llvm::Error LoadedModel::load(llvm::StringRef soPath, std::optional<std::string> modelName) {
  llvm::SmallString<256> absolute(soPath);
  if (std::error_code ec = llvm::sys::fs::make_absolute(absolute))
    return makeError(soPath + ": " + ec.message());
  path = soPath.str();
  if (modelName) {
    name = *modelName;
  } else {
    llvm::Expected<std::string> jsonName = readModelName(soPath);
    if (!jsonName)
      return jsonName.takeError();
    name = *jsonName;
  }
  // An absolute path keeps dlopen from searching the library path.
  handle = dlopen(absolute.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle)
    return makeError(llvm::Twine("cannot load ") + soPath + ": " + dlerror());
  int (*create)(tgc_model **) = nullptr;
  std::string createName = name + "_create";
  if (llvm::Error error = lookup(createName.c_str(), create))
    return error;
  const char *missing = nullptr;
  auto find = [&](const char *symbol, auto &function) {
    if (!missing && !(function = lookupOrNull(symbol, function)))
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
    return makeError(path + ": no function '" + missing +
                     "' (is it a model compiled by tgc?)");
  api.isTrainable = lookupOrNull("tgc_model_is_trainable", api.isTrainable);
  api.runTrain = lookupOrNull("tgc_model_run_train", api.runTrain);
  api.backward = lookupOrNull("tgc_model_backward", api.backward);
  api.numGradients = lookupOrNull("tgc_model_num_gradients", api.numGradients);
  api.gradientName = lookupOrNull("tgc_model_gradient_name", api.gradientName);
  api.outputHasGradient =
      lookupOrNull("tgc_model_output_has_gradient", api.outputHasGradient);
  if (create(&model) != 0)
    return makeError(llvm::Twine("cannot create model '") + name +
                     "': " + api.lastError(nullptr));
  return llvm::Error::success();
}

//===----------------------------------------------------------------------===//
// Running
//===----------------------------------------------------------------------===//

/// A DLTensor viewing a safetensors tensor's bytes (contiguous, CPU).
DLTensor viewTensor(SafetensorsTensor &tensor) {
  DLTensor view{};
  view.data = tensor.data.empty() ? nullptr : &tensor.data[0];
  view.device = {kDLCPU, 0};
  view.ndim = int32_t(tensor.shape.size());
  view.dtype = toDLDataType(tensor.dtype);
  view.shape = tensor.shape.data();
  view.strides = nullptr;
  view.byte_offset = 0;
  return view;
}

/// Copies a (possibly strided) CPU tensor into a named safetensors tensor.
llvm::Expected<SafetensorsTensor> saveTensor(const std::string &name,
                                             const DLTensor &t) {
  std::optional<SafetensorsDType> dtype = fromDLDataType(t.dtype);
  if (!dtype)
    return makeError("'" + name +
                     "' has a dtype safetensors cannot store "
                     "(code " +
                     llvm::Twine(t.dtype.code) + ", bits " +
                     llvm::Twine(t.dtype.bits) + ")");
  SafetensorsTensor tensor;
  tensor.name = name;
  tensor.dtype = *dtype;
  tensor.shape.assign(t.shape, t.shape + t.ndim);
  size_t elemSize = safetensorsDTypeSize(*dtype);
  int64_t count = tensor.numElements();
  tensor.data.resize(size_t(count) * elemSize);
  const char *base = static_cast<const char *>(t.data) + t.byte_offset;
  std::vector<int64_t> index(size_t(t.ndim), 0);
  for (int64_t linear = 0; linear < count; ++linear) {
    int64_t offset = linear;
    if (t.strides) {
      offset = 0;
      for (int32_t d = 0; d < t.ndim; ++d)
        offset += index[d] * t.strides[d];
      for (int32_t d = t.ndim - 1; d >= 0 && ++index[d] == t.shape[d]; --d)
        index[d] = 0;
    }
    std::memcpy(&tensor.data[size_t(linear) * elemSize],
                base + offset * int64_t(elemSize), elemSize);
  }
  return tensor;
}

struct ManagedDeleter {
  void operator()(DLManagedTensor *tensor) const {
    if (tensor && tensor->deleter)
      tensor->deleter(tensor);
  }
};
using ManagedTensor = std::unique_ptr<DLManagedTensor, ManagedDeleter>;

/// Runs `model` (tgc_model_run, or _run_train when `train`) on `inputs`: its outputs, or
/// null entries and false when it fails (the model's last error says why).
bool runModel(LoadedModel &model, std::vector<DLTensor> &inputs, bool train,
              std::vector<ManagedTensor> &outputs) {
  std::vector<DLTensor *> pointers;
  for (DLTensor &view : inputs)
    pointers.push_back(&view);
  int64_t numOutputs = model.api.numOutputs(model.model);
  std::vector<DLManagedTensor *> raw(size_t(numOutputs), nullptr);
  auto run = train ? model.api.runTrain : model.api.run;
  int rc = run(model.model, pointers.data(), int64_t(pointers.size()), raw.data(), numOutputs);
  outputs.clear();
  for (DLManagedTensor *output : raw)
    outputs.emplace_back(output);
  return rc == 0;
}

/// One `tgc run`: the inputs file, the loaded model and the results file.
class Runner {
public:
  explicit Runner(const RunOptions &options) : options(options) {}
  llvm::Error run();

private:
  llvm::Error bindInputs();
  llvm::Error checkTrainable();
  llvm::Error runBackward();
  llvm::Error saveOutputs(std::vector<ManagedTensor> &outputs);
  llvm::Error saveMutatedInputs();
  llvm::Error saveBuffers();
  llvm::Error writeReplay();
  llvm::Error saveBuffer(const char *name);
  llvm::Error modelError(const llvm::Twine &what) {
    return makeError(what + ": " + model.api.lastError(model.model));
  }

  const RunOptions &options;
  LoadedModel model;
  SafetensorsFile inputs;
  /// The tensors bound to the model's inputs, in input order.
  std::vector<SafetensorsTensor *> inputTensors;
  std::vector<DLTensor> inputViews;
  SafetensorsFile results;
  SafetensorsFile gradOutputs;
  ModelReplay replay;
};

llvm::Error Runner::bindInputs() {
  int64_t count = model.api.numInputs(model.model);
  for (int64_t i = 0; i < count; ++i) {
    std::string name = model.api.inputName(model.model, i);
    std::string positional = "input." + std::to_string(i);
    auto found = std::find_if(
        inputs.tensors.begin(), inputs.tensors.end(),
        [&](const SafetensorsTensor &t) { return t.name == name; });
    if (found == inputs.tensors.end())
      found = std::find_if(
          inputs.tensors.begin(), inputs.tensors.end(),
          [&](const SafetensorsTensor &t) { return t.name == positional; });
    if (found == inputs.tensors.end())
      return makeError(options.inputsPath + ": no tensor '" + name + "' or '" +
                       positional + "' for input #" + llvm::Twine(i) +
                       " of model '" + model.name + "'");
    inputTensors.push_back(&*found);
  }
  for (SafetensorsTensor *tensor : inputTensors)
    inputViews.push_back(viewTensor(*tensor));
  return llvm::Error::success();
}

llvm::Error Runner::checkTrainable() {
  const ModelApi &api = model.api;
  if (!api.isTrainable || !api.runTrain || !api.backward || !api.numGradients ||
      !api.gradientName || !api.outputHasGradient ||
      !api.isTrainable(model.model))
    return makeError("--train: model '" + model.name +
                     "' is not trainable (compile it with `tgc compile "
                     "--train`)");
  return llvm::Error::success();
}

/// Feeds each output's gradient (`output.N` in --grad-outputs) to the
/// backward and saves the gradients as `grad.<name>`.
llvm::Error Runner::runBackward() {
  const ModelApi &api = model.api;
  int64_t numOutputs = api.numOutputs(model.model);
  std::vector<DLTensor> views(static_cast<size_t>(numOutputs));
  std::vector<DLTensor *> pointers(size_t(numOutputs), nullptr);
  for (int64_t k = 0; k < numOutputs; ++k) {
    if (api.outputHasGradient(model.model, k) != 1)
      continue;
    std::string name = "output." + std::to_string(k);
    auto found = std::find_if(
        gradOutputs.tensors.begin(), gradOutputs.tensors.end(),
        [&](const SafetensorsTensor &t) { return t.name == name; });
    if (found == gradOutputs.tensors.end())
      return makeError(options.gradOutputsPath + ": no tensor '" + name +
                       "' for the gradient of output #" + llvm::Twine(k) +
                       " of model '" + model.name + "'");
    views[size_t(k)] = viewTensor(*found);
    pointers[size_t(k)] = &views[size_t(k)];
  }
  int64_t numGradients = api.numGradients(model.model);
  std::vector<DLManagedTensor *> raw(size_t(numGradients), nullptr);
  if (api.backward(model.model, pointers.data(), numOutputs, raw.data(),
                   numGradients) != 0)
    return modelError("running the backward of model '" + model.name + "'");
  std::vector<ManagedTensor> grads;
  for (DLManagedTensor *grad : raw)
    grads.emplace_back(grad);
  for (int64_t g = 0; g < numGradients; ++g) {
    auto tensor =
        saveTensor(std::string("grad.") + api.gradientName(model.model, g),
                   grads[size_t(g)]->dl_tensor);
    if (!tensor)
      return tensor.takeError();
    results.tensors.push_back(std::move(*tensor));
  }
  return llvm::Error::success();
}

llvm::Error Runner::saveOutputs(std::vector<ManagedTensor> &outputs) {
  for (size_t k = 0; k < outputs.size(); ++k) {
    bool state = k < replay.isState.size() && replay.isState[k];
    auto tensor = saveTensor((state ? "replay." : "output.") + std::to_string(k),
                             outputs[k]->dl_tensor);
    if (!tensor)
      return tensor.takeError();
    results.tensors.push_back(std::move(*tensor));
  }
  return llvm::Error::success();
}

/// Mutated inputs were written back into the input buffers by the run.
llvm::Error Runner::saveMutatedInputs() {
  for (size_t i = 0; i < inputTensors.size(); ++i) {
    if (model.api.inputIsMutated(model.model, int64_t(i)) != 1)
      continue;
    std::string name =
        std::string("mutated.") + model.api.inputName(model.model, int64_t(i));
    auto tensor = saveTensor(name, inputViews[i]);
    if (!tensor)
      return tensor.takeError();
    results.tensors.push_back(std::move(*tensor));
  }
  return llvm::Error::success();
}

llvm::Error Runner::saveBuffer(const char *name) {
  DLDataType dtype;
  if (model.api.stateDType(model.model, name, &dtype) != 0)
    return modelError(llvm::Twine("state '") + name + "'");
  std::optional<SafetensorsDType> stDType = fromDLDataType(dtype);
  if (!stDType)
    return makeError(llvm::Twine("buffer '") + name +
                     "' has a dtype safetensors cannot store");
  SafetensorsTensor tensor;
  tensor.name = std::string("state.") + name;
  tensor.dtype = *stDType;
  int64_t rank = 0;
  tensor.shape.resize(8);
  if (model.api.stateShape(model.model, name, &rank, tensor.shape.data(), 8)) {
    tensor.shape.resize(size_t(rank));
    if (model.api.stateShape(model.model, name, &rank, tensor.shape.data(),
                             rank))
      return modelError(llvm::Twine("state '") + name + "'");
  }
  tensor.shape.resize(size_t(rank));
  tensor.data.resize(size_t(tensor.numElements()) *
                     safetensorsDTypeSize(*stDType));
  DLTensor view = viewTensor(tensor);
  if (model.api.getState(model.model, name, &view) != 0)
    return modelError(llvm::Twine("state '") + name + "'");
  results.tensors.push_back(std::move(tensor));
  return llvm::Error::success();
}

/// Buffers are what a run changes; parameters and constants are not saved.
llvm::Error Runner::saveBuffers() {
  int64_t count = model.api.numState(model.model);
  for (int64_t i = 0; i < count; ++i) {
    if (model.api.stateKind(model.model, i) != TGC_STATE_BUFFER ||
        replay.sourced.count(model.api.stateName(model.model, i)))
      continue;
    if (llvm::Error error = saveBuffer(model.api.stateName(model.model, i)))
      return error;
  }
  return llvm::Error::success();
}

/// Writes `value` to `<output stem>.replay.json` beside the outputs file.
llvm::Error writeReplayJson(llvm::StringRef outputPath, const nlohmann::json &value) {
  llvm::SmallString<256> path(outputPath);
  llvm::sys::path::replace_extension(path, "replay.json");
  std::error_code ec;
  llvm::raw_fd_ostream out(path, ec, llvm::sys::fs::OF_Text);
  if (ec)
    return makeError(path + ": cannot write: " + ec.message());
  out << value.dump(2) << "\n";
  return llvm::Error::success();
}

/// `<output stem>.replay.json` beside the outputs: the replay list, each tensor
/// value naming its safetensors key (nothing when the model has no replay list).
llvm::Error Runner::writeReplay() {
  if (replay.actions.is_null())
    return llvm::Error::success();
  nlohmann::json actions = replay.actions;
  nameReplayTensors(actions);
  return writeReplayJson(options.outputPath, actions);
}

llvm::Error Runner::run() {
  if (options.train && options.gradOutputsPath.empty())
    return makeError("--train needs --grad-outputs (the gradient of each "
                     "output, named output.N)");
  if (!options.train && !options.gradOutputsPath.empty())
    return makeError("--grad-outputs needs --train");
  llvm::Expected<SafetensorsFile> file = readSafetensors(options.inputsPath);
  if (!file)
    return file.takeError();
  inputs = std::move(*file);
  if (options.train) {
    llvm::Expected<SafetensorsFile> grads =
        readSafetensors(options.gradOutputsPath);
    if (!grads)
      return grads.takeError();
    gradOutputs = std::move(*grads);
  }
  if (llvm::Error error = model.load(options.soPath))
    return error;
  llvm::Expected<ModelReplay> modelReplay = readModelReplay(options.soPath);
  if (!modelReplay)
    return modelReplay.takeError();
  replay = std::move(*modelReplay);
  if (options.train)
    if (llvm::Error error = checkTrainable())
      return error;
  if (llvm::Error error = bindInputs())
    return error;

  std::vector<ManagedTensor> outputs;
  if (!runModel(model, inputViews, options.train, outputs))
    return modelError("running model '" + model.name + "'");

  results.metadata["model"] = model.name;
  if (llvm::Error error = saveOutputs(outputs))
    return error;
  if (options.train)
    if (llvm::Error error = runBackward())
      return error;
  if (llvm::Error error = saveMutatedInputs())
    return error;
  if (llvm::Error error = saveBuffers())
    return error;
  if (llvm::Error error = writeSafetensors(options.outputPath, results))
    return error;
  return writeReplay();
}


//===----------------------------------------------------------------------===//
// Programs with graph breaks (docs/graph-breaks.md)
//===----------------------------------------------------------------------===//

/// X.json beside X.so, or null when there is none.
llvm::Expected<nlohmann::json> readModelJson(llvm::StringRef soPath) {
  llvm::SmallString<256> jsonPath(soPath);
  llvm::sys::path::replace_extension(jsonPath, "json");
  if (!llvm::sys::fs::exists(jsonPath))
    return nlohmann::json();
  auto buffer = llvm::MemoryBuffer::getFile(jsonPath, /*IsText=*/true);
  if (!buffer)
    return makeError(jsonPath + ": cannot read: " + buffer.getError().message());
  try {
    return nlohmann::json::parse((*buffer)->getBuffer().str());
  } catch (const nlohmann::json::exception &error) {
    return makeError(jsonPath + ": invalid JSON: " + error.what());
  }
}

/// `tgc run` of a program with graph breaks: runs its graphs as model.json's
/// "program" says. The calls between graphs (print) are not performed: they are
/// written to `<output stem>.replay.json` under "calls", their tensors to the outputs
/// file as `call.<i>.<k>`.
class ProgramRunner {
public:
  ProgramRunner(const RunOptions &options, nlohmann::json json)
      : options(options), json(std::move(json)) {}
  llvm::Error run();

private:
  llvm::Error runGraph(size_t node, std::vector<ManagedTensor> &outputs);
  llvm::Error syncBuffers(size_t graph, const char *mutationsKey);
  llvm::Error runBackward();
  llvm::Error accumulate(std::map<std::string, SafetensorsTensor> &into, const std::string &key,
                         const DLTensor &gradient);
  llvm::Expected<nlohmann::json> callArgument(const nlohmann::json &arg, size_t call,
                                              size_t &tensors);
  llvm::Expected<SafetensorsTensor *> glue(const nlohmann::json &index);
  llvm::Error fail(size_t graph, const llvm::Twine &what) {
    return makeError(what + ": " + models[graph]->api.lastError(models[graph]->model));
  }

  const RunOptions &options;
  nlohmann::json json;
  std::vector<std::unique_ptr<LoadedModel>> models;
  std::map<std::string, size_t> graphIndex;
  SafetensorsFile inputs;
  /// Glue values: the program's inputs (in `inputs`), then graph outputs.
  std::vector<SafetensorsTensor *> values;
  std::deque<SafetensorsTensor> owned;
  std::set<size_t> mutatedInputs;
  SafetensorsFile results;
  nlohmann::json calls = nlohmann::json::array();
  /// The nodes run, in order (for the backward).
  std::vector<size_t> trail;
};

llvm::Expected<SafetensorsTensor *> ProgramRunner::glue(const nlohmann::json &index) {
  if (!index.is_number_integer() || index.get<int64_t>() < 0 ||
      size_t(index.get<int64_t>()) >= values.size() || !values[index.get<size_t>()])
    return makeError("model.json: program value " + index.dump() +
                     " is not defined where it is used");
  return values[index.get<size_t>()];
}

/// Copies each buffer graph `graph` mutated into every other graph that has it.
llvm::Error ProgramRunner::syncBuffers(size_t graph, const char *mutationsKey) {
  const nlohmann::json &mutations =
      json["graphs"][graph].value(mutationsKey, nlohmann::json());
  if (!mutations.is_array())
    return llvm::Error::success();
  LoadedModel &from = *models[graph];
  for (const nlohmann::json &mutation : mutations) {
    if (mutation.value("kind", "") != "buffer")
      continue;
    std::string name = mutation.value("target", "");
    DLDataType dtype;
    int64_t rank = 0;
    std::vector<int64_t> shape(16);
    if (from.api.stateDType(from.model, name.c_str(), &dtype) != 0 ||
        from.api.stateShape(from.model, name.c_str(), &rank, shape.data(), 16) != 0)
      return fail(graph, "state '" + name + "'");
    shape.resize(size_t(rank));
    int64_t count = 1;
    for (int64_t size : shape)
      count *= size;
    std::vector<char> bytes(size_t(count) * ((dtype.bits + 7) / 8));
    DLTensor view{};
    view.data = bytes.empty() ? nullptr : bytes.data();
    view.device = {kDLCPU, 0};
    view.ndim = int32_t(rank);
    view.dtype = dtype;
    view.shape = shape.data();
    if (from.api.getState(from.model, name.c_str(), &view) != 0)
      return fail(graph, "state '" + name + "'");
    for (size_t other = 0; other < models.size(); ++other) {
      if (other == graph)
        continue;
      LoadedModel &to = *models[other];
      DLDataType otherDType;
      if (to.api.stateDType(to.model, name.c_str(), &otherDType) != 0)
        continue; // not one of its buffers
      if (to.api.setState(to.model, name.c_str(), &view) != 0)
        return fail(other, "state '" + name + "'");
    }
  }
  return llvm::Error::success();
}

llvm::Error ProgramRunner::runGraph(size_t node, std::vector<ManagedTensor> &outputs) {
  const nlohmann::json &entry = json["program"]["nodes"][node];
  auto it = graphIndex.find(entry.value("graph", ""));
  if (it == graphIndex.end())
    return makeError("model.json: program node " + llvm::Twine(node) + " names no graph");
  size_t graph = it->second;
  LoadedModel &model = *models[graph];
  std::vector<DLTensor> views;
  for (const nlohmann::json &index : entry["inputs"]) {
    llvm::Expected<SafetensorsTensor *> value = glue(index);
    if (!value)
      return value.takeError();
    views.push_back(viewTensor(**value));
  }
  if (options.train && (!model.api.runTrain || !model.api.isTrainable ||
                        !model.api.isTrainable(model.model)))
    return makeError("--train: graph '" + model.name + "' is not trainable (compile the " +
                     "program with `tgc compile --train --allow-graph-breaks`)");
  if (!runModel(model, views, options.train, outputs))
    return fail(graph, "running graph '" + model.name + "'");
  trail.push_back(node);
  for (size_t i = 0; i < entry["inputs"].size(); ++i)
    if (model.api.inputIsMutated(model.model, int64_t(i)) == 1 &&
        entry["inputs"][i].get<size_t>() < inputs.tensors.size())
      mutatedInputs.insert(entry["inputs"][i].get<size_t>());
  return syncBuffers(graph, "mutations");
}

/// Adds `gradient` into `into[key]` (f32 or f64, contiguous result).
llvm::Error ProgramRunner::accumulate(std::map<std::string, SafetensorsTensor> &into,
                                      const std::string &key, const DLTensor &gradient) {
  llvm::Expected<SafetensorsTensor> copy = saveTensor(key, gradient);
  if (!copy)
    return copy.takeError();
  auto [it, inserted] = into.try_emplace(key, std::move(*copy));
  if (inserted)
    return llvm::Error::success();
  SafetensorsTensor &sum = it->second;
  if (sum.dtype != copy->dtype || sum.shape != copy->shape)
    return makeError("the gradients of '" + key + "' have different dtypes or sizes");
  int64_t n = sum.numElements();
  if (sum.dtype == SafetensorsDType::F32) {
    auto *a = reinterpret_cast<float *>(sum.data.data());
    auto *b = reinterpret_cast<const float *>(copy->data.data());
    for (int64_t i = 0; i < n; ++i)
      a[i] += b[i];
  } else if (sum.dtype == SafetensorsDType::F64) {
    auto *a = reinterpret_cast<double *>(sum.data.data());
    auto *b = reinterpret_cast<const double *>(copy->data.data());
    for (int64_t i = 0; i < n; ++i)
      a[i] += b[i];
  } else {
    return makeError("summing the gradients of '" + key + "': only f32 and f64 are supported");
  }
  return llvm::Error::success();
}

/// The backward of each graph run, last first: the program's output gradients (output.N
/// of --grad-outputs) into the last graph, each graph's input gradients into the graphs
/// that returned those values; parameter gradients are summed over the graphs.
llvm::Error ProgramRunner::runBackward() {
  llvm::Expected<SafetensorsFile> file = readSafetensors(options.gradOutputsPath);
  if (!file)
    return file.takeError();
  std::map<std::string, SafetensorsTensor> valueGrads, paramGrads;
  const nlohmann::json &nodes = json["program"]["nodes"];
  for (size_t step = trail.size(); step-- > 0;) {
    size_t node = trail[step];
    const nlohmann::json &entry = nodes[node];
    size_t graph = graphIndex.at(entry["graph"].get<std::string>());
    LoadedModel &model = *models[graph];
    bool last = step + 1 == trail.size();
    int64_t numOutputs = model.api.numOutputs(model.model);
    std::vector<DLTensor> views(static_cast<size_t>(numOutputs));
    std::vector<DLTensor *> pointers(size_t(numOutputs), nullptr);
    std::vector<SafetensorsTensor> zeros;
    zeros.reserve(size_t(numOutputs));
    for (int64_t k = 0; k < numOutputs; ++k) {
      if (model.api.outputHasGradient(model.model, k) != 1)
        continue;
      SafetensorsTensor *grad = nullptr;
      std::string key;
      if (last) {
        key = "output." + std::to_string(k);
        auto found = std::find_if(file->tensors.begin(), file->tensors.end(),
                                  [&](const SafetensorsTensor &t) { return t.name == key; });
        if (found == file->tensors.end())
          return makeError(options.gradOutputsPath + ": no tensor '" + key +
                           "' for the gradient of output #" + llvm::Twine(k));
        grad = &*found;
      } else {
        key = "value." + entry["outputs"][size_t(k)].dump();
        auto it = valueGrads.find(key);
        if (it != valueGrads.end()) {
          grad = &it->second;
        } else { // nothing after used it differentiably: zeros of its sizes
          SafetensorsTensor &value = *values[entry["outputs"][size_t(k)].get<size_t>()];
          SafetensorsTensor zero = value;
          std::fill(zero.data.begin(), zero.data.end(), 0);
          zeros.push_back(std::move(zero));
          grad = &zeros.back();
        }
      }
      views[size_t(k)] = viewTensor(*grad);
      pointers[size_t(k)] = &views[size_t(k)];
    }
    int64_t numGradients = model.api.numGradients(model.model);
    std::vector<DLManagedTensor *> raw(size_t(numGradients), nullptr);
    if (model.api.backward(model.model, pointers.data(), numOutputs, raw.data(),
                           numGradients) != 0)
      return fail(graph, "running the backward of graph '" + model.name + "'");
    std::vector<ManagedTensor> grads;
    for (DLManagedTensor *g : raw)
      grads.emplace_back(g);
    for (int64_t g = 0; g < numGradients; ++g) {
      std::string name = model.api.gradientName(model.model, g);
      llvm::Error error = llvm::Error::success();
      if (llvm::StringRef(name).starts_with("input.")) {
        size_t input = std::stoul(name.substr(6));
        error = accumulate(valueGrads, "value." + entry["inputs"][input].dump(),
                           grads[size_t(g)]->dl_tensor);
      } else {
        error = accumulate(paramGrads, name, grads[size_t(g)]->dl_tensor);
      }
      if (error)
        return error;
    }
    if (llvm::Error error = syncBuffers(graph, "backward_mutations"))
      return error;
  }
  for (auto &[name, grad] : paramGrads) {
    grad.name = "grad." + name;
    results.tensors.push_back(std::move(grad));
  }
  for (size_t i = 0; i < inputs.tensors.size() && i < json["program"]["inputs"].size(); ++i) {
    auto it = valueGrads.find("value." + std::to_string(i));
    if (it == valueGrads.end())
      continue;
    it->second.name = "grad.input." + std::to_string(i);
    results.tensors.push_back(std::move(it->second));
  }
  return llvm::Error::success();
}

llvm::Expected<nlohmann::json> ProgramRunner::callArgument(const nlohmann::json &arg,
                                                           size_t call, size_t &tensors) {
  if (!arg.is_object())
    return arg;
  if (arg.value("type", "") == "tuple") {
    nlohmann::json items = nlohmann::json::array();
    for (const nlohmann::json &item : arg["items"]) {
      llvm::Expected<nlohmann::json> converted = callArgument(item, call, tensors);
      if (!converted)
        return converted.takeError();
      items.push_back(*converted);
    }
    nlohmann::json tuple = arg;
    tuple["items"] = items;
    return tuple;
  }
  if (arg.value("type", "") != "tensor")
    return arg;
  llvm::Expected<SafetensorsTensor *> value = glue(arg["value"]);
  if (!value)
    return value.takeError();
  std::string key = "call." + std::to_string(call) + "." + std::to_string(tensors++);
  DLTensor view = viewTensor(**value);
  llvm::Expected<SafetensorsTensor> copy = saveTensor(key, view);
  if (!copy)
    return copy.takeError();
  results.tensors.push_back(std::move(*copy));
  nlohmann::json tensor{{"type", "tensor"}, {"tensor", key}};
  if (arg.contains("number"))
    tensor["number"] = arg["number"];
  return tensor;
}

llvm::Error ProgramRunner::run() {
  if (options.train && options.gradOutputsPath.empty())
    return makeError("--train needs --grad-outputs (the gradient of each output, named "
                     "output.N)");
  llvm::Expected<SafetensorsFile> file = readSafetensors(options.inputsPath);
  if (!file)
    return file.takeError();
  inputs = std::move(*file);
  const nlohmann::json &program = json["program"];
  if (!json["graphs"].is_array() || !program["nodes"].is_array() || program["nodes"].empty())
    return makeError(options.soPath + ": model.json has a malformed \"program\"");
  for (const nlohmann::json &graph : json["graphs"]) {
    auto model = std::make_unique<LoadedModel>();
    if (llvm::Error error = model->load(options.soPath, graph.value("name", "")))
      return error;
    graphIndex[model->name] = models.size();
    models.push_back(std::move(model));
  }
  // The program's inputs by name (or input.N), as glue values 0..n-1.
  for (size_t i = 0; i < program["inputs"].size(); ++i) {
    const nlohmann::json &name = program["inputs"][i];
    std::string positional = "input." + std::to_string(i);
    auto found = std::find_if(inputs.tensors.begin(), inputs.tensors.end(),
                              [&](const SafetensorsTensor &t) {
                                return t.name == name.get<std::string>() ||
                                       t.name == positional;
                              });
    if (found == inputs.tensors.end())
      return makeError(options.inputsPath + ": no tensor '" + name.get<std::string>() +
                       "' or '" + positional + "' for input #" + llvm::Twine(i));
    values.push_back(&*found);
  }

  std::vector<ManagedTensor> outputs;
  size_t node = 0, steps = 0;
  while (true) {
    if (++steps > program["nodes"].size())
      return makeError("model.json: the program does not end");
    if (llvm::Error error = runGraph(node, outputs))
      return error;
    const nlohmann::json &entry = program["nodes"][node];
    const nlohmann::json &then = entry["then"];
    std::string kind = then.value("kind", "");
    if (kind == "return")
      break;
    const nlohmann::json &defined = entry["outputs"];
    if (!defined.is_array() || defined.size() != outputs.size())
      return makeError("model.json: program node " + llvm::Twine(node) + " lists " +
                       llvm::Twine(defined.size()) + " outputs, its graph has " +
                       llvm::Twine(outputs.size()));
    for (size_t k = 0; k < outputs.size(); ++k) {
      size_t index = defined[k].get<size_t>();
      llvm::Expected<SafetensorsTensor> copy =
          saveTensor("value." + std::to_string(index), outputs[k]->dl_tensor);
      if (!copy)
        return copy.takeError();
      owned.push_back(std::move(*copy));
      if (values.size() <= index)
        values.resize(index + 1, nullptr);
      values[index] = &owned.back();
    }
    if (kind == "call") {
      nlohmann::json call{{"callee", then["callee"]}};
      size_t tensors = 0;
      nlohmann::json args = nlohmann::json::array(), kwargs = nlohmann::json::array();
      for (const nlohmann::json &arg : then["args"]) {
        llvm::Expected<nlohmann::json> value = callArgument(arg, calls.size(), tensors);
        if (!value)
          return value.takeError();
        args.push_back(*value);
      }
      for (const nlohmann::json &kwarg : then["kwargs"]) {
        llvm::Expected<nlohmann::json> value = callArgument(kwarg[1], calls.size(), tensors);
        if (!value)
          return value.takeError();
        kwargs.push_back(nlohmann::json::array({kwarg[0], *value}));
      }
      call["args"] = args;
      call["kwargs"] = kwargs;
      calls.push_back(call);
      node = then["next"].get<size_t>();
    } else if (kind == "branch") {
      llvm::Expected<SafetensorsTensor *> condition = glue(then["condition"]);
      if (!condition)
        return condition.takeError();
      bool truth = llvm::any_of((*condition)->data, [](char byte) { return byte != 0; });
      if ((*condition)->numElements() != 1)
        return makeError("a branch condition has " +
                         llvm::Twine((*condition)->numElements()) + " elements");
      if ((*condition)->dtype == SafetensorsDType::F32) {
        float f;
        std::memcpy(&f, (*condition)->data.data(), sizeof f);
        truth = f != 0;
      } else if ((*condition)->dtype == SafetensorsDType::F64) {
        double d;
        std::memcpy(&d, (*condition)->data.data(), sizeof d);
        truth = d != 0;
      }
      node = (truth ? then["true"] : then["false"]).get<size_t>();
    } else {
      return makeError("model.json: unknown program step '" + kind + "'");
    }
    if (node >= program["nodes"].size())
      return makeError("model.json: program step to node " + llvm::Twine(node) +
                       ", which does not exist");
  }

  // The last graph's results are the program's (docs/replay.md for its Python state).
  size_t last = graphIndex.at(program["nodes"][node]["graph"].get<std::string>());
  const nlohmann::json &signature = json["graphs"][last];
  nlohmann::json replay = signature.value("replay", nlohmann::json());
  const nlohmann::json &outputEntries = signature.value("outputs", nlohmann::json::array());
  results.metadata["model"] = json.value("name", "");
  for (size_t k = 0; k < outputs.size(); ++k) {
    bool state = k < outputEntries.size() && outputEntries[k].is_object() &&
                 outputEntries[k].value("kind", "") == "python_state";
    auto tensor = saveTensor((state ? "replay." : "output.") + std::to_string(k),
                             outputs[k]->dl_tensor);
    if (!tensor)
      return tensor.takeError();
    results.tensors.push_back(std::move(*tensor));
  }
  if (options.train)
    if (llvm::Error error = runBackward())
      return error;
  for (size_t i : mutatedInputs) {
    DLTensor view = viewTensor(*values[i]);
    auto tensor = saveTensor("mutated." + program["inputs"][i].get<std::string>(), view);
    if (!tensor)
      return tensor.takeError();
    results.tensors.push_back(std::move(*tensor));
  }
  // Buffers, each once (the graphs hold the same values after syncBuffers).
  std::set<std::string> saved;
  for (const nlohmann::json &graph : json["graphs"])
    for (const std::string &name : sourcedState(graph))
      saved.insert(name); // Python objects' tensors, not module buffers
  for (auto &model : models) {
    int64_t count = model->api.numState(model->model);
    for (int64_t i = 0; i < count; ++i) {
      if (model->api.stateKind(model->model, i) != TGC_STATE_BUFFER)
        continue;
      std::string name = model->api.stateName(model->model, i);
      if (!saved.insert(name).second)
        continue;
      DLDataType dtype;
      int64_t rank = 0;
      std::vector<int64_t> shape(16);
      if (model->api.stateDType(model->model, name.c_str(), &dtype) != 0 ||
          model->api.stateShape(model->model, name.c_str(), &rank, shape.data(), 16) != 0)
        return makeError("state '" + name + "'");
      std::optional<SafetensorsDType> stDType = fromDLDataType(dtype);
      if (!stDType)
        return makeError("buffer '" + name + "' has a dtype safetensors cannot store");
      SafetensorsTensor tensor;
      tensor.name = "state." + name;
      tensor.dtype = *stDType;
      tensor.shape.assign(shape.begin(), shape.begin() + rank);
      tensor.data.resize(size_t(tensor.numElements()) * safetensorsDTypeSize(*stDType));
      DLTensor view = viewTensor(tensor);
      if (model->api.getState(model->model, name.c_str(), &view) != 0)
        return makeError("state '" + name + "'");
      results.tensors.push_back(std::move(tensor));
    }
  }
  if (llvm::Error error = writeSafetensors(options.outputPath, results))
    return error;

  nlohmann::json written;
  if (!replay.is_null()) {
    nameReplayTensors(replay);
    written["replay"] = replay;
  }
  written["calls"] = calls;
  return writeReplayJson(options.outputPath, written);
}

} // namespace

int tgc::runModelCommand(const RunOptions &options) {
  llvm::Expected<nlohmann::json> json = readModelJson(options.soPath);
  if (!json) {
    llvm::errs() << "error: " << llvm::toString(json.takeError()) << "\n";
    return 1;
  }
  if (json->is_object() && json->contains("program")) {
    ProgramRunner runner(options, std::move(*json));
    if (llvm::Error error = runner.run()) {
      llvm::errs() << "error: " << llvm::toString(std::move(error)) << "\n";
      return 1;
    }
    return 0;
  }
  Runner runner(options);
  if (llvm::Error error = runner.run()) {
    llvm::errs() << "error: " << llvm::toString(std::move(error)) << "\n";
    return 1;
  }
  return 0;
}
