//===- RuntimeTest.cpp - Tests of the model.so runtime through its C ABI --===//

#include "Internal.h"
#include "TinyModel.h"
#include "TinyModelSignature.h"

#include "tgc/Runtime/tgc_runtime.h"
#include "tgc/Target/Signature.h"

#include "DLTensors.h"

#include <catch2/catch.hpp>

#include <dlfcn.h>

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <strings.h>
#include <thread>
#include <type_traits>
#include <vector>

using namespace tgc;
using namespace tgc::test;

namespace {

/// The descriptor a generated <name>_create hands the runtime for these blobs (which
/// must outlive it) and forward entry.
tgc_model_desc descriptor(const char *name, const std::string &signature,
                          const std::string &weights, void (*forward)(void **)) {
  return {TGC_ABI_VERSION,
          name,
          reinterpret_cast<const uint8_t *>(signature.data()),
          signature.size(),
          reinterpret_cast<const uint8_t *>(weights.data()),
          weights.size(),
          forward,
          nullptr};
}

/// A model created from a signature exactly as a generated <name>_create
/// would: blobs plus packed entry in a tgc_model_desc.
class Instance {
public:
  Instance(const ModelSignature &sig, std::string weightsBlob, void (*entry)(void **))
      : name(sig.name), signature(encodeSignatureBlob(sig)), weights(std::move(weightsBlob)) {
    desc = descriptor(name.c_str(), signature, weights, entry);
    status = tgc_rt_create(&desc, &model);
  }
  ~Instance() { tgc_model_destroy(model); }

  /// Runs and returns "" or the error message; outputs are kept in `outputs`.
  std::string run(std::vector<DLTensor *> inputs) {
    outputs.clear();
    size_t count = size_t(tgc_model_num_outputs(model));
    std::vector<DLManagedTensor *> raw(count, nullptr);
    int rc =
        tgc_model_run(model, inputs.data(), int64_t(inputs.size()), raw.data(), int64_t(count));
    for (DLManagedTensor *t : raw)
      outputs.emplace_back(t);
    if (rc == 0)
      return "";
    for (DLManagedTensor *t : raw)
      CHECK(t == nullptr);
    return tgc_model_last_error(model);
  }

  const float *output(size_t i) const {
    return static_cast<const float *>(outputs[i]->dl_tensor.data);
  }
  std::vector<int64_t> outputShape(size_t i) const {
    const DLTensor &t = outputs[i]->dl_tensor;
    return std::vector<int64_t>(t.shape, t.shape + t.ndim);
  }

  struct Deleter {
    void operator()(DLManagedTensor *t) const {
      if (t)
        t->deleter(t);
    }
  };

  std::string name;
  std::string signature, weights;
  tgc_model_desc desc;
  tgc_model *model = nullptr;
  int status = 1;
  std::vector<std::unique_ptr<DLManagedTensor, Deleter>> outputs;
};

/// The tiny model plus inputs x (batch x 4) and y (batch).
struct TinyFixture {
  explicit TinyFixture(int64_t batch = 2)
      : signature(tinySignature(weights)), instance(signature, weights, tiny_forward),
        xShape{batch, 4}, yShape{batch}, xData(size_t(batch * 4)), yData(size_t(batch)) {
    REQUIRE(instance.status == 0);
    for (size_t i = 0; i < xData.size(); ++i)
      xData[i] = float(i);
    for (size_t i = 0; i < yData.size(); ++i)
      yData[i] = 10.0f * float(i + 1);
    x = cpuTensor(xData.data(), kF32, xShape);
    y = cpuTensor(yData.data(), kF32, yShape);
  }

  std::string run() { return instance.run({&x, &y}); }

  int64_t count() {
    int64_t value = -1;
    std::vector<int64_t> shape;
    DLTensor t = cpuTensor(&value, kI64, shape);
    REQUIRE(tgc_model_get_state(instance.model, "count", &t) == 0);
    return value;
  }

  std::string weights;
  ModelSignature signature;
  Instance instance;
  std::vector<int64_t> xShape, yShape;
  std::vector<float> xData, yData;
  DLTensor x, y;
};

/// The tiny model with output 0 laid out in `strides`, run once on x = `x` (2 x 4) and
/// y = `y` (2), which it keeps (x is written back).
struct LaidOut {
  LaidOut(std::vector<int64_t> strides, std::vector<float> x, std::vector<float> y)
      : xData(std::move(x)), yData(std::move(y)) {
    ModelSignature sig = tinySignature(weights);
    sig.results[0].strides = std::move(strides);
    instance = std::make_unique<Instance>(sig, weights, tiny_forward);
    REQUIRE(instance->status == 0);
    DLTensor xt = cpuTensor(xData.data(), kF32, xShape), yt = cpuTensor(yData.data(), kF32, yShape);
    REQUIRE(instance->run({&xt, &yt}) == "");
  }
  std::string weights;
  std::vector<float> xData, yData;
  std::vector<int64_t> xShape = {2, 4}, yShape = {2};
  std::unique_ptr<Instance> instance;
};

std::string createError(const std::string &signature, const std::string &weights) {
  tgc_model_desc desc = descriptor("broken", signature, weights, tiny_forward);
  tgc_model *model = reinterpret_cast<tgc_model *>(&desc);
  int rc = tgc_rt_create(&desc, &model);
  if (rc == 0) {
    tgc_model_destroy(model);
    return "";
  }
  CHECK(model == nullptr);
  return tgc_model_last_error(nullptr);
}

} // namespace

//===----------------------------------------------------------------------===//
// Running
//===----------------------------------------------------------------------===//

TEST_CASE("A run computes outputs, updates buffers and writes back mutated "
          "inputs",
          "[runtime]") {
  TinyFixture f(3);
  std::vector<float> xBefore = f.xData;
  REQUIRE(f.run() == "");
  CHECK(tiny_descriptor_problems() == 0);

  REQUIRE(f.instance.outputShape(0) == std::vector<int64_t>{3, 4});
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t j = 0; j < 4; ++j)
      CHECK(f.instance.output(0)[i * 4 + j] ==
            2 * xBefore[size_t(i * 4 + j)] + kTinyW[j] + f.yData[size_t(i)] + kTinyBias);

  REQUIRE(f.instance.outputShape(1) == std::vector<int64_t>{7});
  const float *ys = f.instance.output(1);
  CHECK(std::vector<float>(ys, ys + 7) == std::vector<float>{10, 20, 30, 10, 20, 30, 0});

  CHECK(f.count() == 1);
  for (size_t i = 0; i < f.xData.size(); ++i)
    CHECK(f.xData[i] == xBefore[i] + (i < 4 ? 1.0f : 0.0f));
}

TEST_CASE("On a CPU model run_async runs with a NULL stream and refuses a CUDA stream",
          "[runtime]") {
  TinyFixture f(2);
  tgc_model *m = f.instance.model;
  CHECK(tgc_model_device_type(m) == kDLCPU);
  CHECK(tgc_model_device_type(nullptr) == 0);
  DLTensor *inputs[] = {&f.x, &f.y};
  DLManagedTensor *outputs[2] = {nullptr, nullptr};
  REQUIRE(tgc_model_run_async(m, nullptr, inputs, 2, outputs, 2) == 0);
  REQUIRE(outputs[0] != nullptr);
  CHECK(outputs[0]->dl_tensor.device.device_type == kDLCPU);
  CHECK(f.count() == 1);
  for (DLManagedTensor *t : outputs)
    t->deleter(t);

  int stream = 0; // any non-NULL pointer stands for a CUDA stream
  outputs[0] = outputs[1] = reinterpret_cast<DLManagedTensor *>(&stream);
  CHECK(tgc_model_run_async(m, &stream, inputs, 2, outputs, 2) != 0);
  CHECK(outputs[0] == nullptr);
  CHECK(outputs[1] == nullptr);
  CHECK(std::string(tgc_model_last_error(m)) ==
        "model 'tiny' runs on the CPU: tgc_model_run_async takes a NULL stream");
  CHECK(f.count() == 1);
  CHECK(tgc_model_set_cuda_stream(m, &stream) != 0);
  CHECK(std::string(tgc_model_last_error(m)) ==
        "model 'tiny' runs on the CPU: it has no CUDA stream");
  CHECK(tgc_model_set_cuda_stream(m, nullptr) == 0);
}

TEST_CASE("copy_to_device and copy_to_host make contiguous copies on a CPU model's device",
          "[runtime]") {
  TinyFixture f(2);
  tgc_model *m = f.instance.model;
  // A transposed view of a 3 x 2 array: the copies are row-major 2 x 3.
  std::vector<float> data = {1, 2, 3, 4, 5, 6};
  std::vector<int64_t> shape = {2, 3}, strides = {1, 2};
  DLTensor view = cpuTensor(data.data(), kF32, shape);
  view.strides = strides.data();
  for (auto copy : {tgc_model_copy_to_device, tgc_model_copy_to_host}) {
    DLManagedTensor *out = nullptr;
    REQUIRE(copy(m, &view, &out) == 0);
    REQUIRE(out != nullptr);
    CHECK(out->dl_tensor.device.device_type == kDLCPU);
    CHECK(std::vector<int64_t>(out->dl_tensor.shape, out->dl_tensor.shape + 2) == shape);
    const float *values = static_cast<const float *>(out->dl_tensor.data);
    CHECK(std::vector<float>(values, values + 6) == std::vector<float>{1, 3, 5, 2, 4, 6});
    out->deleter(out);
  }
  DLTensor cuda = view;
  cuda.device.device_type = kDLCUDA;
  DLManagedTensor *out = reinterpret_cast<DLManagedTensor *>(&cuda);
  CHECK(tgc_model_copy_to_device(m, &cuda, &out) != 0);
  CHECK(out == nullptr);
  CHECK(std::string(tgc_model_last_error(m)) == "expected a CPU tensor, got device type 2");
  CHECK(tgc_model_copy_to_host(m, nullptr, &out) != 0);
}

TEST_CASE("A call while another holds the instance is refused, with its own message",
          "[runtime][threads]") {
  TinyFixture f(2);
  REQUIRE(f.run() == "");
  // This thread holds the instance, as a long call would; another thread's calls on it
  // are refused (outputs NULL, the refusal its own message), and the holder's message and
  // state are untouched.
  REQUIRE(tgc_model_claim(f.instance.model) == 0);
  std::string runError, stateError;
  int stateRc = 0;
  std::thread other([&] {
    runError = f.run();
    int64_t value = -1;
    std::vector<int64_t> shape;
    DLTensor t = cpuTensor(&value, kI64, shape);
    stateRc = tgc_model_get_state(f.instance.model, "count", &t);
    stateError = tgc_model_last_error(f.instance.model);
  });
  other.join();
  std::string inUse = "the instance is in use by another call (another thread's): an "
                      "instance serves one call at a time; use one per thread";
  CHECK(runError == inUse);
  CHECK(stateRc == 1);
  CHECK(stateError == inUse);
  CHECK(std::string(tgc_model_last_error(f.instance.model)) == "");
  tgc_model_release(f.instance.model);
  // Free again: the next call runs, and clears the refusal.
  REQUIRE(f.run() == "");
  CHECK(f.count() == 2);
}

TEST_CASE("Separate instances of one model run at once from several threads",
          "[runtime][threads]") {
  // Each thread its own instance and inputs, many calls: every result is the one thread's
  // alone (test/Runtime/threads-tsan.test runs a compiled model this way under
  // ThreadSanitizer).
  constexpr int kThreads = 4, kCalls = 200;
  std::vector<std::string> errors(kThreads);
  std::vector<int64_t> counts(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      TinyFixture f(1 + t);
      for (int call = 0; call < kCalls && errors[size_t(t)].empty(); ++call) {
        f.yData.assign(f.yData.size(), float(t));
        errors[size_t(t)] = f.run();
        if (errors[size_t(t)].empty() && f.instance.output(1)[0] != float(t))
          errors[size_t(t)] = "a result of another thread's inputs";
      }
      counts[size_t(t)] = f.count();
    });
  for (std::thread &thread : threads)
    thread.join();
  for (int t = 0; t < kThreads; ++t) {
    CHECK(errors[size_t(t)] == "");
    CHECK(counts[size_t(t)] == kCalls);
  }
}

TEST_CASE("Outputs are contiguous, 64-byte aligned CPU tensors with shapes "
          "and strides",
          "[runtime]") {
  TinyFixture f(2);
  REQUIRE(f.run() == "");
  const DLTensor &out = f.instance.outputs[0]->dl_tensor;
  CHECK(reinterpret_cast<uintptr_t>(out.data) % 64 == 0);
  CHECK(out.device.device_type == kDLCPU);
  CHECK(out.dtype.code == kDLFloat);
  CHECK(out.dtype.bits == 32);
  CHECK(out.byte_offset == 0);
  REQUIRE(out.strides != nullptr);
  CHECK(out.strides[0] == 4);
  CHECK(out.strides[1] == 1);
}

TEST_CASE("An output with a layout comes out in it, with the row-major output's values",
          "[runtime]") {
  TinyFixture plain(2);
  REQUIRE(plain.run() == "");
  // out f32[2, 4] column-major, as eager returns `(a.t() + b.t()).t()`-like results.
  std::vector<float> xData(8), yData = {10.0f, 20.0f};
  for (size_t i = 0; i < xData.size(); ++i)
    xData[i] = float(i);
  LaidOut run({1, 2}, xData, yData);
  Instance &laid = *run.instance;
  const DLTensor &out = laid.outputs[0]->dl_tensor;
  REQUIRE(out.strides != nullptr);
  CHECK(out.strides[0] == 1);
  CHECK(out.strides[1] == 2);
  CHECK(reinterpret_cast<uintptr_t>(out.data) % 64 == 0);
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 4; ++j)
      CHECK(laid.output(0)[i + 2 * j] == plain.instance.output(0)[4 * i + j]);
  // The other output, without a layout, stays row-major.
  CHECK(laid.outputs[1]->dl_tensor.strides[0] == 1);
  CHECK(laid.output(1)[4] == plain.instance.output(1)[4]);
  CHECK(run.xData == plain.xData); // the mutated input is written back as before
}

TEST_CASE("A broadcast layout (stride 0) keeps one element in that dimension", "[runtime]") {
  std::vector<float> xData(8, 0.0f), yData = {10.0f, 10.0f};
  for (size_t i = 0; i < 4; ++i)
    xData[i] = xData[i + 4] = float(i); // equal rows, as an expand gives
  LaidOut run({0, 1}, xData, yData);
  Instance &laid = *run.instance;
  const DLTensor &out = laid.outputs[0]->dl_tensor;
  CHECK(out.strides[0] == 0);
  CHECK(out.strides[1] == 1);
  CHECK(out.shape[0] == 2);
  for (int64_t j = 0; j < 4; ++j)
    CHECK(laid.output(0)[j] == 2 * float(j) + kTinyW[j] + 10.0f + kTinyBias);
}

TEST_CASE("Buffers carry over between runs and instances do not share state", "[runtime]") {
  TinyFixture f(1), other(1);
  REQUIRE(f.run() == "");
  REQUIRE(f.run() == "");
  REQUIRE(f.run() == "");
  CHECK(f.count() == 3);
  CHECK(f.instance.output(1)[2] == 2.0f); // ys ends with the count before
  CHECK(other.count() == 0);
}

TEST_CASE("set_state replaces parameters and buffers and get_state reads "
          "them back",
          "[runtime]") {
  TinyFixture f(1);
  std::vector<float> w = {1, 1, 1, 1};
  std::vector<int64_t> wShape = {4}, scalar;
  DLTensor wTensor = cpuTensor(w.data(), kF32, wShape);
  REQUIRE(tgc_model_set_state(f.instance.model, "w", &wTensor) == 0);
  int64_t count = 41;
  DLTensor countTensor = cpuTensor(&count, kI64, scalar);
  REQUIRE(tgc_model_set_state(f.instance.model, "count", &countTensor) == 0);

  REQUIRE(f.run() == "");
  CHECK(f.instance.output(0)[1] == 2 * 1.0f + 1 + 10 + kTinyBias);
  CHECK(f.count() == 42);

  std::vector<float> back(4);
  DLTensor backTensor = cpuTensor(back.data(), kF32, wShape);
  REQUIRE(tgc_model_get_state(f.instance.model, "w", &backTensor) == 0);
  CHECK(back == w);
}

TEST_CASE("get_state and set_state honour the caller's strides", "[runtime]") {
  TinyFixture f(1);
  // Every other element of an 8-float array stands for w.
  std::vector<float> spread = {9, -1, 8, -1, 7, -1, 6, -1};
  std::vector<int64_t> shape = {4}, strides = {2};
  DLTensor view = cpuTensor(spread.data(), kF32, shape, strides.data());
  REQUIRE(tgc_model_set_state(f.instance.model, "w", &view) == 0);
  std::vector<float> out(8, 0);
  DLTensor outView = cpuTensor(out.data(), kF32, shape, strides.data());
  REQUIRE(tgc_model_get_state(f.instance.model, "w", &outView) == 0);
  CHECK(out == std::vector<float>{9, 0, 8, 0, 7, 0, 6, 0});
}

TEST_CASE("State access rejects unknown names and mismatched tensors", "[runtime]") {
  TinyFixture f(1);
  tgc_model *m = f.instance.model;
  std::vector<float> data(4);
  std::vector<int64_t> three = {3}, four = {4};
  DLTensor t = cpuTensor(data.data(), kF32, three);
  CHECK(tgc_model_get_state(m, "nope", &t) != 0);
  CHECK(std::string(tgc_model_last_error(m)) == "unknown state 'nope'");
  CHECK(tgc_model_get_state(m, "w", &t) != 0);
  CHECK(std::string(tgc_model_last_error(m)) == "state 'w': expected shape [4], got [3]");
  t = cpuTensor(data.data(), kI64, four);
  CHECK(tgc_model_set_state(m, "w", &t) != 0);
  CHECK(std::string(tgc_model_last_error(m)) == "state 'w': expected dtype float32, got int64");
  t = cpuTensor(data.data(), kF32, four);
  t.device.device_type = kDLCUDA;
  CHECK(tgc_model_set_state(m, "w", &t) != 0);
  CHECK(std::string(tgc_model_last_error(m)) ==
        "state 'w': expected a CPU tensor, got device type 2");
}

TEST_CASE("Queries describe inputs, outputs, mutations and state", "[runtime]") {
  TinyFixture f(1);
  tgc_model *m = f.instance.model;
  CHECK(std::string(tgc_model_name(m)) == "tiny");
  REQUIRE(tgc_model_num_inputs(m) == 2);
  CHECK(std::string(tgc_model_input_name(m, 0)) == "x");
  CHECK(std::string(tgc_model_input_name(m, 1)) == "y");
  CHECK(tgc_model_input_name(m, 2) == nullptr);
  CHECK(tgc_model_input_is_mutated(m, 0) == 1);
  CHECK(tgc_model_input_is_mutated(m, 1) == 0);
  CHECK(tgc_model_input_is_mutated(m, -1) == -1);
  REQUIRE(tgc_model_num_outputs(m) == 2);
  CHECK(std::string(tgc_model_output_name(m, 0)) == "out");
  CHECK(std::string(tgc_model_output_name(m, 1)) == "ys");
  REQUIRE(tgc_model_num_state(m) == 3);
  CHECK(std::string(tgc_model_state_name(m, 0)) == "w");
  CHECK(tgc_model_state_kind(m, 0) == TGC_STATE_PARAMETER);
  CHECK(tgc_model_state_kind(m, 1) == TGC_STATE_BUFFER);
  CHECK(tgc_model_state_kind(m, 2) == TGC_STATE_CONSTANT);
  CHECK(tgc_model_state_kind(m, 3) == -1);

  DLDataType dtype{};
  REQUIRE(tgc_model_state_dtype(m, "count", &dtype) == 0);
  CHECK((dtype.code == kDLInt && dtype.bits == 64 && dtype.lanes == 1));
  int64_t rank = -1, sizes[1] = {0};
  REQUIRE(tgc_model_state_shape(m, "w", &rank, sizes, 1) == 0);
  CHECK(rank == 1);
  CHECK(sizes[0] == 4);
  CHECK(tgc_model_state_shape(m, "w", &rank, sizes, 0) != 0);
  CHECK(rank == 1);
  REQUIRE(tgc_model_state_shape(m, "count", &rank, nullptr, 0) == 0);
  CHECK(rank == 0);
}

TEST_CASE("Strided inputs are packed and mutated strided inputs are written "
          "back through their strides",
          "[runtime]") {
  TinyFixture f(2);
  // x is the transpose of a 4x2 row-major array: strides {1, 2}.
  std::vector<float> storage = {0, 4, 1, 5, 2, 6, 3, 7};
  std::vector<int64_t> strides = {1, 2};
  f.x = cpuTensor(storage.data(), kF32, f.xShape, strides.data());
  // y is every other element of a 4-element array, with a byte offset.
  std::vector<float> yStorage = {-1, 10, -1, 20};
  std::vector<int64_t> yStrides = {2};
  f.y = cpuTensor(yStorage.data(), kF32, f.yShape, yStrides.data());
  f.y.byte_offset = sizeof(float);

  REQUIRE(f.run() == "");
  CHECK(tiny_descriptor_problems() == 0);
  // Logical x = [[0,1,2,3],[4,5,6,7]].
  CHECK(f.instance.output(0)[0] == 0 + kTinyW[0] + 10 + kTinyBias);
  CHECK(f.instance.output(0)[5] == 10 + kTinyW[1] + 20 + kTinyBias);
  // Row 0 (storage positions 0, 2, 4, 6) was incremented in place.
  CHECK(storage == std::vector<float>{1, 4, 2, 5, 3, 6, 4, 7});
  CHECK(yStorage == std::vector<float>{-1, 10, -1, 20});
}

TEST_CASE("Misaligned contiguous inputs are packed before the call", "[runtime]") {
  TinyFixture f(1);
  std::vector<char> raw(4 * sizeof(float) + 1);
  float values[4] = {1, 2, 3, 4};
  std::memcpy(raw.data() + 1, values, sizeof values);
  f.x = cpuTensor(raw.data(), kF32, f.xShape);
  f.x.byte_offset = 1;
  REQUIRE(f.run() == "");
  CHECK(f.instance.output(0)[3] == 2 * 4.0f + kTinyW[3] + 10 + kTinyBias);
  float after[4];
  std::memcpy(after, raw.data() + 1, sizeof after);
  CHECK(after[0] == 2.0f);
  CHECK(after[3] == 5.0f);
}

TEST_CASE("Dimensions of size zero or one take any stride", "[runtime]") {
  TinyFixture f(1);
  std::vector<int64_t> strides = {12345, 1};
  f.x.strides = strides.data();
  REQUIRE(f.run() == "");
  CHECK(f.instance.output(0)[0] == 0 + kTinyW[0] + 10 + kTinyBias);
}

TEST_CASE("Inputs that are only read may repeat elements, run backwards or alias", "[runtime]") {
  TinyFixture f(3);
  // y = [20, 20, 20]: one element, stride 0 (torch's expand).
  std::vector<float> one = {20};
  std::vector<int64_t> broadcast = {0};
  f.y = cpuTensor(one.data(), kF32, f.yShape, broadcast.data());
  REQUIRE(f.run() == "");
  for (int i = 0; i < 3; ++i)
    CHECK(f.instance.output(0)[4 * i + 1] == 2 * float(4 * i + 1) + kTinyW[1] + 20 + kTinyBias);

  // y = [30, 20, 10], read backwards from its last element.
  std::vector<float> forwards = {10, 20, 30};
  std::vector<int64_t> backwards = {-1};
  f.y = cpuTensor(forwards.data() + 2, kF32, f.yShape, backwards.data());
  // x's columns reversed (negative stride): x is written back through them.
  std::vector<float> xStorage(12);
  for (size_t i = 0; i < xStorage.size(); ++i)
    xStorage[i] = float(i);
  std::vector<int64_t> xStrides = {4, -1};
  f.x = cpuTensor(xStorage.data() + 3, kF32, f.xShape, xStrides.data());
  REQUIRE(f.run() == "");
  CHECK(tiny_descriptor_problems() == 0);
  // Logical x[0] = [3, 2, 1, 0], y[0] = 30.
  CHECK(f.instance.output(0)[0] == 2 * 3.0f + kTinyW[0] + 30 + kTinyBias);
  CHECK(f.instance.output(0)[3] == 0.0f + kTinyW[3] + 30 + kTinyBias);
  CHECK(f.instance.output(1)[0] == 30.0f);
  CHECK(f.instance.output(1)[2] == 10.0f);
  // x[0, :] += 1 landed on storage 0..3, the rest untouched.
  CHECK(xStorage == std::vector<float>{1, 2, 3, 4, 4, 5, 6, 7, 8, 9, 10, 11});
  CHECK(forwards == std::vector<float>{10, 20, 30});
}

TEST_CASE("An input the model writes may not share memory with itself or another input",
          "[runtime]") {
  TinyFixture f(2);
  std::vector<float> before = f.xData;
  // x (written: x[0, :] += 1) with its rows one memory (stride 0, torch's expand):
  // eager's in-place add refuses it too.
  std::vector<int64_t> rowsShared = {0, 1};
  f.x.strides = rowsShared.data();
  CHECK(f.run() == "input 'x' (#0): the model writes to it, and its strides make elements "
                   "share memory (a stride of 0, as from expand); pass a tensor whose elements "
                   "are distinct (e.g. a clone)");
  // Strides that let two index pairs meet (x[0, 2] and x[1, 0]).
  std::vector<int64_t> interleaved = {2, 1};
  f.x.strides = interleaved.data();
  CHECK(f.run().find("its strides make elements share memory") != std::string::npos);

  // y is x's own memory: eager would read y after the write to x, the compiled
  // program reads the value at the call.
  f.x.strides = nullptr;
  f.y = cpuTensor(f.xData.data() + 4, kF32, f.yShape);
  CHECK(f.run() == "input 'x' (#0): the model writes to it, and it shares memory with input "
                   "'y' (#1); pass separate tensors (e.g. a clone of one)");
  CHECK(f.xData == before);
  CHECK(f.count() == 0);

  // Memory just past x is not x's.
  std::vector<float> both(10, 1.0f);
  f.x = cpuTensor(both.data(), kF32, f.xShape);
  f.y = cpuTensor(both.data() + 8, kF32, f.yShape);
  CHECK(f.run() == "");
  // An empty tensor shares no memory.
  TinyFixture empty(1);
  std::vector<int64_t> noRows = {0, 4};
  empty.x = cpuTensor(empty.xData.data(), kF32, noRows);
  empty.y = cpuTensor(empty.xData.data(), kF32, empty.yShape);
  CHECK(empty.run().find("shares memory") == std::string::npos);
}

TEST_CASE("Strides whose extent overflows the address space are rejected", "[runtime]") {
  TinyFixture f(3);
  std::vector<int64_t> huge = {INT64_MAX / 2, 1};
  f.x.strides = huge.data();
  CHECK(f.run() == "input 'x' (#0): its strides and byte offset reach outside the address space");
  std::vector<int64_t> hugeNegative = {INT64_MIN / 4, 1};
  f.x.strides = hugeNegative.data();
  CHECK(f.run() == "input 'x' (#0): its strides and byte offset reach outside the address space");
  // Elements in range, but bytes past the end of memory.
  f.x.strides = nullptr;
  f.x.byte_offset = UINT64_MAX - 8;
  CHECK(f.run() == "input 'x' (#0): its strides and byte offset reach outside the address space");
  CHECK(f.count() == 0);
}

//===----------------------------------------------------------------------===//
// Input errors
//===----------------------------------------------------------------------===//

TEST_CASE("A wrong number of inputs or output slots is rejected", "[runtime]") {
  TinyFixture f(1);
  CHECK(f.instance.run({&f.x}) == "expected 2 inputs, got 1");
  DLManagedTensor *outputs[3] = {};
  DLTensor *inputs[2] = {&f.x, &f.y};
  CHECK(tgc_model_run(f.instance.model, inputs, 2, outputs, 3) != 0);
  CHECK(std::string(tgc_model_last_error(f.instance.model)) ==
        "expected room for 2 outputs, got 3");
  CHECK(f.instance.run({&f.x, nullptr}) == "input 'y' (#1): the tensor is NULL");
}

TEST_CASE("An input of the wrong dtype is rejected", "[runtime]") {
  TinyFixture f(1);
  f.x.dtype = kI64;
  CHECK(f.run() == "input 'x' (#0): expected dtype float32, got int64");
  f.x.dtype = {kDLFloat, 32, 4};
  CHECK(f.run() == "input 'x' (#0): expected dtype float32, got float32x4");
}

TEST_CASE("An input of the wrong rank is rejected", "[runtime]") {
  TinyFixture f(1);
  f.x.ndim = 1;
  CHECK(f.run() == "input 'x' (#0): expected rank 2, got 1");
}

TEST_CASE("An input on another device is rejected", "[runtime]") {
  TinyFixture f(1);
  f.y.device = {kDLCUDA, 0};
  CHECK(f.run() == "input 'y' (#1): expected a CPU tensor (kDLCPU), got device type 2");
}

TEST_CASE("A size outside a symbol's range is rejected", "[runtime]") {
  TinyFixture f(1);
  std::vector<float> big(100 * 4), bigY(100);
  std::vector<int64_t> xShape = {100, 4}, yShape = {100};
  f.x = cpuTensor(big.data(), kF32, xShape);
  f.y = cpuTensor(bigY.data(), kF32, yShape);
  CHECK(f.run() == "input 'x' (#0): dimension 0 is 100, outside the range "
                   "[1, 64] of symbol 'batch'");
  xShape[0] = yShape[0] = 0;
  CHECK(f.run() == "input 'x' (#0): dimension 0 is 0, outside the range "
                   "[1, 64] of symbol 'batch'");
}

TEST_CASE("Inconsistent symbolic dimensions are rejected", "[runtime]") {
  TinyFixture f(2);
  std::vector<float> y3(3);
  std::vector<int64_t> yShape = {3};
  f.y = cpuTensor(y3.data(), kF32, yShape);
  CHECK(f.run() == "input 'y' (#1): dimension 0 is 3, expected 2 = batch, "
                   "with batch = 2 from input 'x' dimension 0");
}

TEST_CASE("A static dimension of the wrong size is rejected", "[runtime]") {
  TinyFixture f(1);
  std::vector<float> x5(5);
  std::vector<int64_t> xShape = {1, 5};
  f.x = cpuTensor(x5.data(), kF32, xShape);
  CHECK(f.run() == "input 'x' (#0): dimension 1 is 5, expected 4");
}

TEST_CASE("Negative sizes and missing data are rejected", "[runtime]") {
  TinyFixture f(1);
  f.yShape[0] = -1;
  CHECK(f.run() == "input 'y' (#1): dimension 0 has negative size -1");
  f.yShape[0] = 1;
  f.y.data = nullptr;
  CHECK(f.run() == "input 'y' (#1): the data pointer is NULL");
}

TEST_CASE("A failed run leaves state and inputs untouched", "[runtime]") {
  TinyFixture f(1);
  std::vector<float> xBefore = f.xData;
  f.y.dtype = kI64;
  CHECK(f.run() != "");
  CHECK(f.count() == 0);
  CHECK(f.xData == xBefore);
}

//===----------------------------------------------------------------------===//
// Derived symbols
//===----------------------------------------------------------------------===//

TEST_CASE("A symbol is solved from a dimension affine in it", "[runtime]") {
  Instance halves(halvesSignature(), "", halves_forward);
  REQUIRE(halves.status == 0);
  std::vector<float> z = {0, 1, 2, 3, 4, 5, 6};
  std::vector<int64_t> shape = {7};
  DLTensor t = cpuTensor(z.data(), kF32, shape);
  REQUIRE(halves.run({&t}) == "");
  REQUIRE(halves.outputShape(0) == std::vector<int64_t>{3});
  CHECK(std::vector<float>(halves.output(0), halves.output(0) + 3) == std::vector<float>{1, 3, 5});

  shape[0] = 6;
  CHECK(halves.run({&t}) == "input 'z' (#0): dimension 0 is 6, which is not "
                            "2*n + 1 for any integer n");
  shape[0] = 1;
  REQUIRE(halves.run({&t}) == "");
  CHECK(halves.outputShape(0) == std::vector<int64_t>{0});
}

TEST_CASE("A solved symbol is checked against its range", "[runtime]") {
  ModelSignature sig = halvesSignature();
  std::vector<float> z(7);
  std::vector<int64_t> shape = {7};
  DLTensor t = cpuTensor(z.data(), kF32, shape);
  SECTION("bounded") {
    sig.symbols[0].max = 2;
    Instance halves(sig, "", halves_forward);
    REQUIRE(halves.status == 0);
    CHECK(halves.run({&t}) == "input 'z' (#0): dimension 0 is 7, so n = 3, "
                              "outside the range [0, 2] of symbol 'n'");
  }
  SECTION("unbounded above") {
    sig.symbols[0].min = 4;
    Instance halves(sig, "", halves_forward);
    REQUIRE(halves.status == 0);
    CHECK(halves.run({&t}) == "input 'z' (#0): dimension 0 is 7, so n = 3, "
                              "outside the range [4, inf] of symbol 'n'");
  }
}

//===----------------------------------------------------------------------===//
// Creation errors
//===----------------------------------------------------------------------===//

TEST_CASE("Every truncation of a signature blob fails cleanly", "[runtime]") {
  std::string weights;
  std::string blob = encodeSignatureBlob(tinySignature(weights));
  CHECK(createError(blob, weights) == "");
  for (size_t size = 0; size < blob.size(); ++size) {
    std::string error = createError(blob.substr(0, size), weights);
    INFO("truncated to " << size << " bytes");
    CHECK(error.rfind("malformed signature blob: ", 0) == 0);
  }
  CHECK(createError(blob + "x", weights) ==
        "malformed signature blob: trailing bytes after the signature (at "
        "byte " +
            std::to_string(blob.size()) + " of " + std::to_string(blob.size() + 1) + ")");
}

TEST_CASE("Corrupted signature blobs fail or load, never crash", "[runtime]") {
  std::string weights;
  std::string blob = encodeSignatureBlob(tinySignature(weights));
  std::mt19937 random(1234);
  int failures = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    std::string corrupt = blob;
    for (int flips = 1 + trial % 3; flips > 0; --flips)
      corrupt[random() % corrupt.size()] = char(random());
    failures += createError(corrupt, weights) != "";
  }
  CHECK(failures > 0);
}

TEST_CASE("A blob with a bad magic or version is rejected", "[runtime]") {
  std::string weights;
  std::string blob = encodeSignatureBlob(tinySignature(weights));
  std::string badMagic = blob, badVersion = blob;
  badMagic[0] = 'X';
  badVersion[4] = 3;
  CHECK(createError(badMagic, weights) ==
        "malformed signature blob: bad magic (expected \"TGCS\") (at byte 0 "
        "of " +
            std::to_string(blob.size()) + ")");
  CHECK(createError(badVersion, weights)
            .find("version 3 (this runtime "
                  "reads 4)") != std::string::npos);
}

TEST_CASE("Signatures the runtime cannot honour are rejected at creation", "[runtime]") {
  std::string weights;
  ModelSignature sig = tinySignature(weights);

  SECTION("weights outside the blob") {
    CHECK(createError(encodeSignatureBlob(sig), weights.substr(0, 68)) ==
          "invalid signature: buffer 'count': its data lies outside the "
          "weights blob");
  }
  SECTION("state with a symbolic shape") {
    sig.args[0].sizes = {SizeExpr::symbol(0)};
    CHECK(createError(encodeSignatureBlob(sig), weights) ==
          "invalid signature: parameter 'w': its shape depends on a symbol");
  }
  SECTION("a data size that does not match the shape") {
    sig.args[0].dataSize = 12;
    CHECK(createError(encodeSignatureBlob(sig), weights) ==
          "invalid signature: parameter 'w': its data size in the weights "
          "blob does not match its dtype and shape");
  }
  SECTION("a mutation of the wrong kind of argument") {
    sig.results[2].target = 0;
    sig.results[2].dtype = DType::float32();
    sig.results[2].sizes = {SizeExpr::constant(4)};
    CHECK(createError(encodeSignatureBlob(sig), weights) ==
          "invalid signature: new value of buffer 'count': target argument "
          "has the wrong kind");
  }
  SECTION("a symbol no input dimension determines") {
    sig.symbols.push_back({"k", 1, 8});
    sig.results[0].sizes[1] = SizeExpr::symbol(1);
    CHECK(createError(encodeSignatureBlob(sig), weights) ==
          "invalid signature: symbol 'k' (used by 'out') is not a size of any "
          "input dimension, so it cannot be bound");
  }
  SECTION("an expression that underflows its stack") {
    sig.results[0].sizes[1] = SizeExpr::fromOps({{ExprOpcode::Const, 1}, {ExprOpcode::Add, 0}});
    CHECK(createError(encodeSignatureBlob(sig), weights) ==
          "invalid signature: output 'out': stack underflow at operation 1");
  }
  SECTION("duplicate input names") {
    sig.args[4].name = "x";
    CHECK(createError(encodeSignatureBlob(sig), weights) ==
          "invalid signature: input 'x': the name is used twice");
  }
  SECTION("an arena no allocator can give") {
    // (the allocation fails: creation reports it rather than crashing later)
    sig.memory.arenaBytes = uint64_t(1) << 62;
    CHECK(createError(encodeSignatureBlob(sig), weights) == "out of memory");
  }
  SECTION("an arena whose size overflows with its alignment") {
    sig.memory.arenaBytes = UINT64_MAX - 8;
    CHECK(createError(encodeSignatureBlob(sig), weights) == "out of memory");
  }
  SECTION("a layout of a mutation") {
    sig.results[2].strides = {1};
    sig.results[2].sizes = {SizeExpr::constant(1)};
    CHECK(createError(encodeSignatureBlob(sig), weights) ==
          "invalid signature: new value of buffer 'count': only user outputs have a layout");
  }
  SECTION("a layout with a stride per dimension but one") {
    sig.results[0].strides = {1, 2, 3};
    CHECK(createError(encodeSignatureBlob(sig), weights) ==
          "invalid signature: output 'out': its layout has a stride count other than its rank");
  }
  SECTION("a layout with a negative stride") {
    sig.results[0].strides = {1, -2};
    CHECK(createError(encodeSignatureBlob(sig), weights) ==
          "invalid signature: output 'out': its layout has a negative stride");
  }
  SECTION("an unsupported dtype") {
    sig.args[4].dtype = {kDLFloat, 4};
    CHECK(createError(encodeSignatureBlob(sig), weights) ==
          "invalid signature: input 'y': unsupported dtype dtype(code=2, "
          "bits=4, lanes=1)");
  }
}

TEST_CASE("A descriptor of another ABI version is rejected", "[runtime]") {
  std::string weights;
  std::string blob = encodeSignatureBlob(tinySignature(weights));
  tgc_model_desc desc = descriptor("tiny", blob, weights, tiny_forward);
  desc.abi_version = TGC_ABI_VERSION + 1;
  tgc_model *model = nullptr;
  CHECK(tgc_rt_create(&desc, &model) != 0);
  CHECK(model == nullptr);
  CHECK(std::string(tgc_model_last_error(nullptr)) ==
        "model ABI version 3 is not supported by this runtime (version 2)");
}

//===----------------------------------------------------------------------===//
// Size expressions
//===----------------------------------------------------------------------===//

namespace {
int64_t evalRuntime(const SizeExpr &expr, std::vector<int64_t> values) {
  std::vector<tgc_expr_op> ops;
  for (const ExprOp &op : expr.ops())
    ops.push_back({uint8_t(op.opcode), op.operand});
  tgc_expr e{uint32_t(ops.size()), ops.data()};
  std::unique_ptr<bool[]> bound(new bool[values.size() + 1]);
  for (size_t i = 0; i < values.size(); ++i)
    bound[i] = true;
  int64_t result = 0;
  REQUIRE(tgc_expr_eval(&e, values.data(), bound.get(), &result) == TGC_EVAL_OK);
  return result;
}

std::string formatRuntime(const SizeExpr &expr, const std::vector<SymbolInfo> &symbols) {
  std::vector<tgc_expr_op> ops;
  for (const ExprOp &op : expr.ops())
    ops.push_back({uint8_t(op.opcode), op.operand});
  tgc_expr e{uint32_t(ops.size()), ops.data()};
  std::vector<tgc_symbol_sig> syms;
  for (const SymbolInfo &s : symbols)
    syms.push_back({const_cast<char *>(s.name.c_str()), s.min, s.max});
  char buf[256];
  tgc_expr_format(&e, syms.data(), buf, sizeof buf);
  return buf;
}
} // namespace

TEST_CASE("Runtime size expressions use Python's floor division and modulo", "[runtime]") {
  SizeExpr s = SizeExpr::symbol(0), t = SizeExpr::symbol(1);
  for (int64_t a : {-7, -6, -1, 0, 1, 6, 7}) {
    for (int64_t b : {-3, -2, 2, 3}) {
      INFO(a << " op " << b);
      CHECK(evalRuntime(SizeExpr::floorDiv(s, t), {a, b}) ==
            SizeExpr::floorDiv(s, t).evaluate({a, b}));
      CHECK(evalRuntime(SizeExpr::mod(s, t), {a, b}) == SizeExpr::mod(s, t).evaluate({a, b}));
      CHECK(evalRuntime(SizeExpr::ceilDiv(s, t), {a, b}) ==
            SizeExpr::ceilDiv(s, t).evaluate({a, b}));
    }
  }
  CHECK(evalRuntime(SizeExpr::floorDiv(s, t), {-7, 2}) == -4);
  CHECK(evalRuntime(SizeExpr::mod(s, t), {-7, 2}) == 1);
  CHECK(evalRuntime(SizeExpr::mod(s, t), {7, -2}) == -1);
  CHECK(evalRuntime(SizeExpr::ceilDiv(s, t), {7, 2}) == 4);
  CHECK(evalRuntime(-s + SizeExpr::constant(10), {3}) == 7);
}

TEST_CASE("Runtime size expressions report overflow and division by zero", "[runtime]") {
  SizeExpr s = SizeExpr::symbol(0), t = SizeExpr::symbol(1);
  auto status = [](const SizeExpr &expr, std::vector<int64_t> values) {
    std::vector<tgc_expr_op> ops;
    for (const ExprOp &op : expr.ops())
      ops.push_back({uint8_t(op.opcode), op.operand});
    tgc_expr e{uint32_t(ops.size()), ops.data()};
    bool bound[2] = {true, true};
    int64_t result;
    return tgc_expr_eval(&e, values.data(), bound, &result);
  };
  int64_t big = std::numeric_limits<int64_t>::max();
  CHECK(status(s * t, {big, 2}) == TGC_EVAL_OVERFLOW);
  CHECK(status(s + t, {big, 1}) == TGC_EVAL_OVERFLOW);
  CHECK(status(SizeExpr::floorDiv(s, t), {1, 0}) == TGC_EVAL_DIVISION_BY_ZERO);
  CHECK(status(SizeExpr::mod(s, t), {1, 0}) == TGC_EVAL_DIVISION_BY_ZERO);
  CHECK(status(SizeExpr::floorDiv(s, t), {std::numeric_limits<int64_t>::min(), -1}) ==
        TGC_EVAL_OVERFLOW);
}

TEST_CASE("Runtime messages print expressions like model.json does", "[runtime]") {
  std::vector<SymbolInfo> symbols = {{"s0", 0, 10}, {"s1", 0, 10}};
  SizeExpr s0 = SizeExpr::symbol(0), s1 = SizeExpr::symbol(1);
  SizeExpr c = SizeExpr::constant(2);
  std::vector<SizeExpr> exprs = {
      s0 * SizeExpr::constant(4),
      c * s0 + SizeExpr::constant(1),
      s0 + SizeExpr::constant(-1),
      s0 + -s1,
      SizeExpr::floorDiv(s0 + s1, c),
      SizeExpr::mod(s0, c * s1),
      SizeExpr::ceilDiv(s0, SizeExpr::constant(4)),
      -(s0 * s1),
      s0 * (s1 + c),
  };
  for (const SizeExpr &expr : exprs)
    CHECK(formatRuntime(expr, symbols) == printSizeExpr(expr, symbols));
  CHECK(formatRuntime(exprs[1], symbols) == "2*s0 + 1");
  CHECK(formatRuntime(exprs[3], symbols) == "s0 - s1");
}

//===----------------------------------------------------------------------===//
// Helpers for generated code
//===----------------------------------------------------------------------===//

namespace {
/// A ranked memref descriptor with room for rank 4.
struct Descriptor {
  void *allocated;
  void *aligned;
  int64_t offset;
  int64_t dims[8];
};
} // namespace

TEST_CASE("memrefCopy copies between strided memrefs like MLIR's", "[runtime]") {
  // src: a 2x3 view at offset 1 of a 4x4 array (strides 4, 1); dst: its
  // transpose layout (strides 1, 2) in a 6-element array.
  std::vector<int32_t> src(16), dst(6, -1);
  for (int i = 0; i < 16; ++i)
    src[size_t(i)] = i;
  Descriptor s{src.data(), src.data(), 1, {2, 3, 4, 1}};
  Descriptor d{dst.data(), dst.data(), 0, {2, 3, 1, 2}};
  tgc_unranked_memref us{2, &s}, ud{2, &d};
  memrefCopy(sizeof(int32_t), &us, &ud);
  // dst[i + 2j] = src[1 + 4i + j]
  CHECK(dst == std::vector<int32_t>{1, 5, 2, 6, 3, 7});

  SECTION("rank 0 copies one element") {
    int64_t a = 42, b = 0;
    Descriptor s0{&a, &a, 0, {}}, d0{&b, &b, 0, {}};
    tgc_unranked_memref u0{0, &s0}, v0{0, &d0};
    memrefCopy(sizeof(int64_t), &u0, &v0);
    CHECK(b == 42);
  }
  SECTION("an empty source shape copies nothing") {
    std::vector<int32_t> untouched(6, -1);
    Descriptor e{src.data(), src.data(), 0, {0, 3, 3, 1}};
    Descriptor u{untouched.data(), untouched.data(), 0, {2, 3, 3, 1}};
    tgc_unranked_memref ue{2, &e}, uu{2, &u};
    memrefCopy(sizeof(int32_t), &ue, &uu);
    CHECK(untouched == std::vector<int32_t>(6, -1));
  }
  SECTION("contiguous copies are exact") {
    std::vector<float> a(24), b(24, 0);
    for (size_t i = 0; i < a.size(); ++i)
      a[i] = float(i) * 0.5f;
    Descriptor sa{a.data(), a.data(), 0, {2, 3, 4, 12, 4, 1}};
    Descriptor sb{b.data(), b.data(), 0, {2, 3, 4, 12, 4, 1}};
    tgc_unranked_memref ua{3, &sa}, ub{3, &sb};
    memrefCopy(sizeof(float), &ua, &ub);
    CHECK(a == b);
  }
  SECTION("a strided innermost dimension copies each element, whatever its width") {
    // A 3x4 source spread into every second element of a 3x8 destination (a
    // stride-2 convolution's gradient spread into zeros), for 2- and 8-byte elements.
    std::vector<uint16_t> h(12), hd(24, 0);
    std::vector<double> w(12), wd(24, 0);
    for (size_t i = 0; i < 12; ++i) {
      h[i] = uint16_t(i + 1);
      w[i] = double(i) + 0.25;
    }
    Descriptor hs{h.data(), h.data(), 0, {3, 4, 4, 1}}, hdd{hd.data(), hd.data(), 1, {3, 4, 8, 2}};
    Descriptor ws{w.data(), w.data(), 0, {3, 4, 4, 1}}, wdd{wd.data(), wd.data(), 1, {3, 4, 8, 2}};
    tgc_unranked_memref uhs{2, &hs}, uhd{2, &hdd}, uws{2, &ws}, uwd{2, &wdd};
    memrefCopy(sizeof(uint16_t), &uhs, &uhd);
    memrefCopy(sizeof(double), &uws, &uwd);
    for (size_t r = 0; r < 3; ++r)
      for (size_t c = 0; c < 8; ++c) {
        bool written = c % 2 == 1;
        size_t from = r * 4 + c / 2;
        CHECK(hd[r * 8 + c] == (written ? h[from] : 0));
        CHECK(wd[r * 8 + c] == (written ? w[from] : 0.0));
      }
  }
}

namespace {
/// Fills with small integers so products are exact in float.
template <typename T> std::vector<T> pattern(size_t n, int seed) {
  std::vector<T> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = T(int((i * 7 + size_t(seed) * 3) % 11) - 5);
  return v;
}
} // namespace

TEMPLATE_TEST_CASE("GEMM helpers agree with the reference loop", "[runtime]", float, double) {
  using T = TestType;
  auto gemm = [](int64_t ta, int64_t tb, const T *A, int64_t offA, int64_t lda, const T *B,
                 int64_t offB, int64_t ldb, T *C, int64_t offC, int64_t ldc, int64_t M, int64_t N,
                 int64_t K, T alpha, T beta) {
    if constexpr (std::is_same_v<T, float>)
      tgc_rt_gemm_f32(ta, tb, A, offA, lda, B, offB, ldb, C, offC, ldc, M, N, K, alpha, beta);
    else
      tgc_rt_gemm_f64(ta, tb, A, offA, lda, B, offB, ldb, C, offC, ldc, M, N, K, alpha, beta);
  };
  auto loop = [](int64_t ta, int64_t tb, const T *A, int64_t lda, const T *B, int64_t ldb, T *C,
                 int64_t ldc, int64_t M, int64_t N, int64_t K, T alpha, T beta) {
    if constexpr (std::is_same_v<T, float>)
      tgc_gemm_loop_f32(ta, tb, A, lda, B, ldb, C, ldc, M, N, K, alpha, beta);
    else
      tgc_gemm_loop_f64(ta, tb, A, lda, B, ldb, C, ldc, M, N, K, alpha, beta);
  };
  const int64_t M = 5, N = 7, K = 3, pad = 2, off = 3;
  for (int64_t ta : {0, 1}) {
    for (int64_t tb : {0, 1}) {
      int64_t lda = (ta ? M : K) + pad, ldb = (tb ? K : N) + pad, ldc = N + pad;
      std::vector<T> A = pattern<T>(size_t(off + lda * (ta ? K : M)), 1);
      std::vector<T> B = pattern<T>(size_t(off + ldb * (tb ? N : K)), 2);
      std::vector<T> C = pattern<T>(size_t(off + ldc * M), 3), expected = C;
      gemm(ta, tb, A.data(), off, lda, B.data(), off, ldb, C.data(), off, ldc, M, N, K, T(2),
           T(0.5));
      loop(ta, tb, A.data() + off, lda, B.data() + off, ldb, expected.data() + off, ldc, M, N, K,
           T(2), T(0.5));
      INFO("transA " << ta << " transB " << tb);
      CHECK(C == expected);
    }
  }

  SECTION("beta 0 overwrites NaNs in C") {
    std::vector<T> A = pattern<T>(6, 1), B = pattern<T>(6, 2);
    std::vector<T> C(4, std::numeric_limits<T>::quiet_NaN());
    gemm(0, 0, A.data(), 0, 3, B.data(), 0, 2, C.data(), 0, 2, 2, 2, 3, T(1), T(0));
    for (T c : C)
      CHECK(!std::isnan(c));
  }
  SECTION("K = 0 scales C by beta") {
    std::vector<T> C = {1, 2, 3, 4};
    gemm(0, 0, nullptr, 0, 1, nullptr, 0, 2, C.data(), 0, 2, 2, 2, 0, T(1), T(3));
    CHECK(C == std::vector<T>{3, 6, 9, 12});
  }
}

TEST_CASE("Batched GEMM applies batch strides, and stride 0 broadcasts", "[runtime]") {
  const int64_t batch = 3, M = 2, N = 3, K = 4;
  std::vector<float> A = pattern<float>(size_t(batch * M * K), 1);
  std::vector<float> B = pattern<float>(size_t(K * N), 2); // shared
  std::vector<float> C(size_t(batch * M * N), 0), expected = C;
  tgc_rt_gemm_batched_f32(batch, 0, 0, A.data(), 0, M * K, K, B.data(), 0, 0, N, C.data(), 0, M * N,
                          N, M, N, K, 1.0f, 0.0f);
  for (int64_t b = 0; b < batch; ++b)
    tgc_gemm_loop_f32(0, 0, A.data() + b * M * K, K, B.data(), N, expected.data() + b * M * N, N, M,
                      N, K, 1.0f, 0.0f);
  CHECK(C == expected);
}

namespace {
/// Counts how often each index of [0, n) was visited, from any thread.
struct Visits {
  std::vector<std::atomic<int>> count;
  explicit Visits(int64_t n) : count(size_t(n)) {}
  static void visit(void *ctx, int64_t begin, int64_t end) {
    auto *v = static_cast<Visits *>(ctx);
    for (int64_t i = begin; i < end; ++i)
      v->count[size_t(i)]++;
  }
};
} // namespace

TEST_CASE("parallel_for visits every index once, for any thread count", "[runtime][threads]") {
  for (int threads : {1, 2, 3, 8}) {
    int previous = tgc_threads_enter(threads);
    for (int64_t n : {0, 1, 2, 7, 1000}) {
      Visits v(n);
      tgc_rt_parallel_for(&Visits::visit, &v, n);
      for (int64_t i = 0; i < n; ++i)
        CHECK(v.count[size_t(i)] == 1);
    }
    tgc_threads_leave(previous);
  }
  CHECK(tgc_threads_current() == 1); // outside a model call
}

// Dispatches of changing width in quick succession: a worker left out of one
// dispatch must not run a chunk of the next one twice, nor let a call return
// before its chunks have run (the call's context lives on the caller's stack).
TEST_CASE("parallel_for of alternating widths runs each chunk once", "[runtime][threads]") {
  int previous = tgc_threads_enter(1);
  int64_t wrong = 0;
  for (int rep = 0; rep < 20000; ++rep) {
    int threads = 2 + rep % 3; // 2, 3, 4: workers 2 and 3 sit some dispatches out
    tgc_threads_enter(threads);
    std::atomic<int> count[4] = {};
    tgc_rt_parallel_for(
        [](void *ctx, int64_t begin, int64_t end) {
          for (int64_t i = begin; i < end; ++i)
            static_cast<std::atomic<int> *>(ctx)[i]++;
        },
        count, threads);
    for (int i = 0; i < threads; ++i)
      wrong += count[i].load() != 1;
  }
  tgc_threads_leave(previous);
  CHECK(wrong == 0);
}

TEST_CASE("parallel_for from several threads at once: a busy pool runs the call inline",
          "[runtime][threads]") {
  std::vector<std::thread> callers;
  std::vector<std::unique_ptr<Visits>> visits;
  for (int t = 0; t < 4; ++t)
    visits.push_back(std::make_unique<Visits>(5000));
  for (int t = 0; t < 4; ++t)
    callers.emplace_back([&, t] {
      int previous = tgc_threads_enter(3);
      for (int rep = 0; rep < 50; ++rep)
        tgc_rt_parallel_for(&Visits::visit, visits[size_t(t)].get(), 5000);
      tgc_threads_leave(previous);
    });
  for (std::thread &c : callers)
    c.join();
  for (auto &v : visits)
    for (auto &c : v->count)
      CHECK(c == 50);
}

TEST_CASE("f32 products of some size go to oneDNN when libdnnl.so.2 loads", "[runtime]") {
  tgc_gemm_init();
  void *dnnl = dlopen("libdnnl.so.2", RTLD_NOW | RTLD_LOCAL);
  const char *env = std::getenv("TGC_GEMM");
  bool expected = dnnl && !(env && std::string(env) == "openblas");
  CHECK(std::string(tgc_gemm_f32_library()) == (expected ? "onednn" : "openblas"));
  if (dnnl)
    dlclose(dnnl);
}

extern "C" char *openblas_get_corename(void) __attribute__((weak));

// Run by CTest with OPENBLAS_CORETYPE set (test/unit/CMakeLists.txt): Prescott, which
// OpenBLAS falls back to on CPUs it does not know, sends products from 2^12
// multiply-adds to oneDNN; Haswell (AVX2 kernels) keeps OpenBLAS below 2^15.
TEST_CASE("an OpenBLAS on pre-AVX kernels gives oneDNN the small products",
          "[.][openblas-coretype]") {
  const char *core = std::getenv("OPENBLAS_CORETYPE");
  const char *want = std::getenv("TGC_TEST_ONEDNN_MIN_WORK");
  REQUIRE(core);
  REQUIRE(want);
  tgc_gemm_init();
  if (std::string(tgc_gemm_f32_library()) != "onednn" || !__builtin_cpu_supports("avx2")) {
    WARN("not checked: needs libdnnl.so.2 and a host with AVX2");
    return;
  }
  if (!openblas_get_corename || strcasecmp(openblas_get_corename(), core) != 0) {
    WARN("not checked: this BLAS does not dispatch by OPENBLAS_CORETYPE");
    return;
  }
  CHECK(tgc_gemm_f32_onednn_min_work() == std::stod(want));
}

TEST_CASE("GEMMs split across threads give the single thread's bits", "[runtime][threads]") {
  tgc_gemm_init(); // oneDNN where it is installed, as in a model
  // Large enough to be split: over rows (M > N), over columns (N > M), over the batch.
  struct Shape {
    int64_t batch, M, N, K, ta, tb;
  };
  for (Shape s : {Shape{1, 300, 70, 64, 0, 0}, Shape{1, 70, 300, 64, 1, 1},
                  Shape{1, 130, 33, 100, 1, 0}, Shape{5, 64, 64, 64, 0, 1}}) {
    std::vector<float> A = pattern<float>(size_t(s.batch * s.M * s.K), 1);
    std::vector<float> B = pattern<float>(size_t(s.batch * s.K * s.N), 2);
    int64_t lda = s.ta ? s.M : s.K, ldb = s.tb ? s.K : s.N;
    auto run = [&](int threads) {
      std::vector<float> C(size_t(s.batch * s.M * s.N), 1.0f);
      int previous = tgc_threads_enter(threads);
      tgc_rt_gemm_batched_f32(s.batch, s.ta, s.tb, A.data(), 0, s.M * s.K, lda, B.data(), 0,
                              s.K * s.N, ldb, C.data(), 0, s.M * s.N, s.N, s.M, s.N, s.K, 0.5f,
                              0.25f);
      tgc_threads_leave(previous);
      return C;
    };
    std::vector<float> one = run(1), expected(one.size(), 1.0f);
    for (int64_t b = 0; b < s.batch; ++b)
      tgc_gemm_loop_f32(s.ta, s.tb, A.data() + b * s.M * s.K, lda, B.data() + b * s.K * s.N, ldb,
                        expected.data() + b * s.M * s.N, s.N, s.M, s.N, s.K, 0.5f, 0.25f);
    for (size_t i = 0; i < one.size(); ++i)
      REQUIRE(std::abs(one[i] - expected[i]) <= 1e-4f * (1 + std::abs(expected[i])));
    CHECK(run(2) == one);
    CHECK(run(3) == one);
    CHECK(run(2) == run(2));
  }
}

TEST_CASE("Scratch blocks are aligned and large ones are reused by size", "[runtime]") {
  tgc_scratch_retain(); // as a live model instance does
  void *small = _mlir_memref_to_llvm_alloc(100);
  REQUIRE(small != nullptr);
  CHECK(reinterpret_cast<uintptr_t>(small) % TGC_ALIGNMENT == 0);
  std::memset(small, 1, 100);
  _mlir_memref_to_llvm_free(small);

  const size_t big = size_t(1) << 20;
  void *a = _mlir_memref_to_llvm_alloc(big);
  REQUIRE(a != nullptr);
  CHECK(reinterpret_cast<uintptr_t>(a) % TGC_ALIGNMENT == 0);
  std::memset(a, 2, big);
  _mlir_memref_to_llvm_free(a);
  void *other = _mlir_memref_to_llvm_alloc(big + 64); // another size: a new block
  void *again = _mlir_memref_to_llvm_alloc(big);      // the same size: the cached block
  CHECK(other != a);
  CHECK(again == a);
  _mlir_memref_to_llvm_free(other);
  _mlir_memref_to_llvm_free(again);
  _mlir_memref_to_llvm_free(nullptr);
  tgc_scratch_release();
  CHECK(_mlir_memref_to_llvm_alloc(SIZE_MAX - 8) == nullptr); // too large: NULL, no wrap
}

TEST_CASE("The storage of a deleted output is the next call's output of its size", "[runtime]") {
  tgc_scratch_retain();
  const int64_t sizes[2] = {512, 1024}; // 2 MiB of f32
  DLDataType f32{kDLFloat, 32, 1};
  DLManagedTensor *first = tgc_managed_tensor_new(f32, sizes, 2, 512 * 1024 * sizeof(float));
  REQUIRE(first != nullptr);
  void *data = first->dl_tensor.data;
  CHECK(reinterpret_cast<uintptr_t>(data) % TGC_ALIGNMENT == 0);
  std::memset(data, 3, 512 * 1024 * sizeof(float)); // every byte is writable
  first->deleter(first);
  DLManagedTensor *second = tgc_managed_tensor_new(f32, sizes, 2, 512 * 1024 * sizeof(float));
  REQUIRE(second != nullptr);
  CHECK(second->dl_tensor.data == data); // no fresh pages
  CHECK(second->dl_tensor.shape[1] == 1024);
  CHECK(second->dl_tensor.strides[0] == 1024);
  tgc_scratch_release();
  second->deleter(second); // after the last hold: back to malloc, not into the cache
}

//===----------------------------------------------------------------------===//
// CPU features
//===----------------------------------------------------------------------===//

TEST_CASE("A model compiled for CPU features this machine lacks is refused at creation",
          "[runtime]") {
  std::string weights;
  ModelSignature sig = tinySignature(weights);
  std::string blob = encodeSignatureBlob(sig);
  tgc_model_desc desc = descriptor("tiny", blob, weights, tiny_forward);
  // Features this machine has, and names the runtime cannot test, pass.
  tgc_model *model = nullptr;
  REQUIRE(tgc_rt_create_for_cpu(&desc, "sse4.2,64bit,not-a-feature,", &model) == 0);
  REQUIRE(model != nullptr);
  tgc_model_destroy(model);
  REQUIRE(tgc_rt_create_for_cpu(&desc, "", &model) == 0);
  tgc_model_destroy(model);

  // A feature it lacks (the first of these it does not have) fails with its name.
#if defined(__x86_64__) && defined(__clang__)
  __builtin_cpu_init();
  const char *missing = !__builtin_cpu_supports("avx512fp16")   ? "avx512fp16"
                        : !__builtin_cpu_supports("avxvnni")    ? "avxvnni"
                        : !__builtin_cpu_supports("avx512bf16") ? "avx512bf16"
                        : !__builtin_cpu_supports("avx512f")    ? "avx512f"
                                                                : nullptr;
  if (!missing) {
    WARN("this machine has every feature the test could ask for");
    return;
  }
  std::string features = std::string("sse4.2,") + missing + ",avx";
  model = reinterpret_cast<tgc_model *>(&desc);
  CHECK(tgc_rt_create_for_cpu(&desc, features.c_str(), &model) != 0);
  CHECK(model == nullptr);
  std::string error = tgc_model_last_error(nullptr);
  CHECK(error.find("model 'tiny' was compiled for CPU features this machine lacks: " +
                   std::string(missing) + " (") != std::string::npos);
  CHECK(error.find("--cpu") != std::string::npos);
#endif
}
