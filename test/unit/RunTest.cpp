//===- RunTest.cpp - Tests of `tgc run` (tgc::runner) on a real model.so --===//

#include "TinyModelSignature.h"

#include "tgc/Runner/Run.h"

#include "tgc/Support/Safetensors.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <catch2/catch.hpp>

#include <cstdio>
#include <cstring>
#include <dlfcn.h>
#include <fstream>
#include <sstream>
#include <unistd.h>

using namespace tgc;
using namespace tgc::runner;
using namespace tgc::test;

namespace {

/// "" for a value, else the error's message (consuming it).
template <typename T> std::string messageOf(llvm::Expected<T> &value) {
  if (value)
    return "";
  return llvm::toString(value.takeError());
}

/// A scratch directory removed at the end of the test.
class TempDir {
public:
  TempDir() {
    llvm::SmallString<128> dir;
    REQUIRE_FALSE(llvm::sys::fs::createUniqueDirectory("tgc-run-test", dir));
    path = std::string(dir);
  }
  ~TempDir() { llvm::sys::fs::remove_directories(path); }
  std::string file(const std::string &name) const { return path + "/" + name; }

  std::string path;
};

template <typename T>
SafetensorsTensor tensor(const std::string &name, SafetensorsDType dtype,
                         std::vector<int64_t> shape, std::vector<T> values) {
  SafetensorsTensor t;
  t.name = name;
  t.dtype = dtype;
  t.shape = std::move(shape);
  t.data.assign(reinterpret_cast<const char *>(values.data()), values.size() * sizeof(T));
  return t;
}

template <typename T> std::vector<T> valuesOf(const SafetensorsTensor &t) {
  std::vector<T> values(t.data.size() / sizeof(T));
  std::memcpy(values.data(), t.data.data(), t.data.size());
  return values;
}

/// Inputs for the tiny model with batch 2, named `xName` and `yName`.
SafetensorsFile tinyInputs(const std::string &xName, const std::string &yName) {
  SafetensorsFile file;
  file.tensors.push_back(
      tensor<float>(xName, SafetensorsDType::F32, {2, 4}, {0, 1, 2, 3, 4, 5, 6, 7}));
  file.tensors.push_back(tensor<float>(yName, SafetensorsDType::F32, {2}, {10, 20}));
  return file;
}

/// What `tgc run` would exit with and print to stderr.
struct RunResult {
  int status;
  std::string stderrText;
};

RunResult runCaptured(const RunOptions &options) {
  if (Status status = runModel(options))
    return {1, "error: " + status.message() + "\n"};
  return {0, ""};
}

/// Writes `inputs`, runs the tiny model on them and returns the result.
RunResult runTiny(const TempDir &dir, const SafetensorsFile &inputs,
                  const std::string &soPath = TGC_TINY_MODEL_SO) {
  RunOptions options;
  options.soPath = soPath;
  options.inputsPath = dir.file("in.safetensors");
  options.outputPath = dir.file("out.safetensors");
  REQUIRE(llvm::toString(writeSafetensors(options.inputsPath, inputs)) == "");
  return runCaptured(options);
}

SafetensorsFile readOutputs(const TempDir &dir) {
  llvm::Expected<SafetensorsFile> file = readSafetensors(dir.file("out.safetensors"));
  REQUIRE(messageOf(file) == "");
  return std::move(*file);
}

} // namespace

TEST_CASE("tgc run writes outputs, mutated inputs and buffers", "[run]") {
  TempDir dir;
  RunResult result = runTiny(dir, tinyInputs("x", "y"));
  INFO(result.stderrText);
  REQUIRE(result.status == 0);
  CHECK(result.stderrText == "");
  SafetensorsFile out = readOutputs(dir);
  CHECK(out.metadata.at("model") == "tiny");

  const SafetensorsTensor *out0 = out.find("output.0");
  REQUIRE(out0);
  CHECK(out0->shape == std::vector<int64_t>{2, 4});
  std::vector<float> expected;
  for (int i = 0; i < 8; ++i)
    expected.push_back(2.0f * float(i) + kTinyW[i % 4] + (i < 4 ? 10 : 20) + kTinyBias);
  CHECK(valuesOf<float>(*out0) == expected);

  const SafetensorsTensor *out1 = out.find("output.1");
  REQUIRE(out1);
  CHECK(valuesOf<float>(*out1) == std::vector<float>{10, 20, 10, 20, 0});

  const SafetensorsTensor *mutated = out.find("mutated.x");
  REQUIRE(mutated);
  CHECK(valuesOf<float>(*mutated) == std::vector<float>{1, 2, 3, 4, 4, 5, 6, 7});
  CHECK(out.find("mutated.y") == nullptr);

  const SafetensorsTensor *count = out.find("state.count");
  REQUIRE(count);
  CHECK(count->dtype == SafetensorsDType::I64);
  CHECK(count->shape.empty());
  CHECK(valuesOf<int64_t>(*count) == std::vector<int64_t>{1});
  CHECK(out.find("state.w") == nullptr);
  CHECK(out.find("state.bias") == nullptr);
  CHECK(out.tensors.size() == 4);
}

TEST_CASE("tgc run takes inputs by position when names are absent", "[run]") {
  TempDir dir;
  RunResult result = runTiny(dir, tinyInputs("input.0", "input.1"));
  INFO(result.stderrText);
  REQUIRE(result.status == 0);
  CHECK(readOutputs(dir).find("output.0") != nullptr);
}

TEST_CASE("tgc run reports a missing input by name and position", "[run]") {
  TempDir dir;
  SafetensorsFile inputs = tinyInputs("x", "z");
  RunResult result = runTiny(dir, inputs);
  CHECK(result.status == 1);
  CHECK(result.stderrText == "error: " + dir.file("in.safetensors") +
                                 ": no tensor 'y' or 'input.1' for input #1 "
                                 "of model 'tiny'\n");
}

TEST_CASE("tgc run reports the model's input checks", "[run]") {
  TempDir dir;
  SafetensorsFile inputs = tinyInputs("x", "y");
  inputs.tensors[1] = tensor<int64_t>("y", SafetensorsDType::I64, {2}, {10, 20});
  RunResult result = runTiny(dir, inputs);
  CHECK(result.status == 1);
  CHECK(result.stderrText == "error: running model 'tiny': input 'y' (#1): "
                             "expected dtype float32, got int64\n");
}

TEST_CASE("tgc run names the model after the file stem without X.json", "[run]") {
  TempDir dir;
  std::string copy = dir.file("tiny.so");
  REQUIRE_FALSE(llvm::sys::fs::copy_file(TGC_TINY_MODEL_SO, copy));
  RunResult result = runTiny(dir, tinyInputs("x", "y"), copy);
  INFO(result.stderrText);
  CHECK(result.status == 0);

  std::string renamed = dir.file("other.so");
  REQUIRE_FALSE(llvm::sys::fs::copy_file(TGC_TINY_MODEL_SO, renamed));
  result = runTiny(dir, tinyInputs("x", "y"), renamed);
  CHECK(result.status == 1);
  CHECK(result.stderrText ==
        "error: " + renamed + ": no function 'other_create' (is it a model compiled by tgc?)\n");
}

TEST_CASE("tgc run rejects files that are not loadable models", "[run]") {
  TempDir dir;
  std::string bogus = dir.file("bogus.so");
  std::ofstream(bogus) << "not a shared library";
  RunResult result = runTiny(dir, tinyInputs("x", "y"), bogus);
  CHECK(result.status == 1);
  CHECK(result.stderrText.rfind("error: cannot load " + bogus + ": ", 0) == 0);

  RunOptions options;
  options.soPath = TGC_TINY_MODEL_SO;
  options.inputsPath = dir.file("missing.safetensors");
  options.outputPath = dir.file("out.safetensors");
  result = runCaptured(options);
  CHECK(result.status == 1);
  CHECK(result.stderrText.rfind("error: " + options.inputsPath + ": cannot read: ", 0) == 0);
}

TEST_CASE("tgc run --train needs --grad-outputs and a trainable model", "[run]") {
  TempDir dir;
  RunOptions options;
  options.soPath = TGC_TINY_MODEL_SO;
  options.inputsPath = dir.file("in.safetensors");
  options.outputPath = dir.file("out.safetensors");
  options.train = true;
  RunResult result = runCaptured(options);
  CHECK(result.status == 1);
  CHECK(result.stderrText == "error: --train needs --grad-outputs (the "
                             "gradient of each output, named output.N)\n");

  options.train = false;
  options.gradOutputsPath = dir.file("grads.safetensors");
  result = runCaptured(options);
  CHECK(result.status == 1);
  CHECK(result.stderrText == "error: --grad-outputs needs --train\n");

  SafetensorsFile inputs = tinyInputs("x", "y");
  REQUIRE(llvm::toString(writeSafetensors(options.inputsPath, inputs)) == "");
  REQUIRE(llvm::toString(writeSafetensors(options.gradOutputsPath, inputs)) == "");
  options.train = true;
  result = runCaptured(options);
  CHECK(result.status == 1);
  CHECK(result.stderrText == "error: --train: model 'tiny' is not trainable (compile it with "
                             "`tgc compile --train`)\n");
}

TEST_CASE("A model.so exports only the tgc_model API and <name>_create", "[run]") {
  void *handle = dlopen(TGC_TINY_MODEL_SO, RTLD_NOW | RTLD_LOCAL);
  REQUIRE(handle);
  for (const char *exported :
       {"tiny_create", "tgc_model_run", "tgc_model_destroy", "tgc_model_last_error",
        "tgc_model_state_kind", "tgc_model_set_state"})
    CHECK(dlsym(handle, exported) != nullptr);
  for (const char *hidden :
       {"tgc_rt_create", "memrefCopy", "tiny_forward", "tgc_signature_decode", "tgc_copy_strided"})
    CHECK(dlsym(handle, hidden) == nullptr);
  dlclose(handle);
}
