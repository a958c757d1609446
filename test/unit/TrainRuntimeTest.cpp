//===- TrainRuntimeTest.cpp - The runtime's training API (ABI version 2) --===//
//
// tgc_model_run_train / tgc_model_backward on the hand-written "scale" model
// (TinyModel.c), and the checks that creation does on a backward signature.
//
//===----------------------------------------------------------------------===//

#include "Internal.h"
#include "TinyModel.h"
#include "TinyModelSignature.h"

#include "tgc/Runtime/tgc_runtime.h"
#include "tgc/Target/Signature.h"

#include "DLTensors.h"

#include <catch2/catch.hpp>

#include <memory>
#include <random>
#include <string>
#include <vector>

using namespace tgc;
using namespace tgc::test;

namespace {

struct Deleter {
  void operator()(DLManagedTensor *t) const {
    if (t)
      t->deleter(t);
  }
};
using Managed = std::unique_ptr<DLManagedTensor, Deleter>;

std::vector<float> values(const Managed &t) {
  const DLTensor &d = t->dl_tensor;
  int64_t n = 1;
  for (int32_t i = 0; i < d.ndim; ++i)
    n *= d.shape[i];
  const float *p = static_cast<const float *>(d.data);
  return std::vector<float>(p, p + n);
}

/// The scale model with input x (batch x 4) and gradient dy of output 0.
struct ScaleFixture {
  explicit ScaleFixture(int64_t batch = 2, bool withBackward = true)
      : signature(scaleSignature(weights)), blob(encodeSignatureBlob(signature)), xShape{batch, 4},
        dyShape{batch, 4}, xData(size_t(batch * 4)), dyData(size_t(batch * 4)) {
    desc = {TGC_ABI_VERSION,
            "scale",
            reinterpret_cast<const uint8_t *>(blob.data()),
            blob.size(),
            reinterpret_cast<const uint8_t *>(weights.data()),
            weights.size(),
            scale_forward,
            withBackward ? scale_backward : nullptr};
    status = tgc_rt_create(&desc, &model);
    for (size_t i = 0; i < xData.size(); ++i) {
      xData[i] = float(i + 1);
      dyData[i] = 0.5f * float(i % 3);
    }
    x = cpuTensor(xData.data(), kF32, xShape);
    dy = cpuTensor(dyData.data(), kF32, dyShape);
  }
  ~ScaleFixture() { tgc_model_destroy(model); }

  /// Runs the forward (run_train, or plain run) and returns "" or the error.
  std::string forward(bool train = true) {
    DLTensor *inputs[] = {&x};
    DLManagedTensor *raw[2] = {nullptr, nullptr};
    int rc = train ? tgc_model_run_train(model, inputs, 1, raw, 2)
                   : tgc_model_run(model, inputs, 1, raw, 2);
    outputs.clear();
    for (DLManagedTensor *t : raw)
      outputs.emplace_back(t);
    return rc == 0 ? "" : tgc_model_last_error(model);
  }

  /// Runs the backward with `gradOutputs` and returns "" or the error.
  std::string backward(std::vector<DLTensor *> gradOutputs) {
    DLManagedTensor *raw[2] = {nullptr, nullptr};
    int rc = tgc_model_backward(model, gradOutputs.data(), int64_t(gradOutputs.size()), raw, 2);
    grads.clear();
    for (DLManagedTensor *t : raw)
      grads.emplace_back(t);
    if (rc != 0)
      for (DLManagedTensor *t : raw)
        CHECK(t == nullptr);
    return rc == 0 ? "" : tgc_model_last_error(model);
  }
  std::string backward() { return backward({&dy, nullptr}); }

  std::vector<float> state4(const char *name) {
    std::vector<float> v(4);
    std::vector<int64_t> shape{4};
    DLTensor t = cpuTensor(v.data(), kF32, shape);
    REQUIRE(tgc_model_get_state(model, name, &t) == 0);
    return v;
  }
  int64_t calls() {
    int64_t value = -1;
    std::vector<int64_t> shape;
    DLTensor t = cpuTensor(&value, kI64, shape);
    REQUIRE(tgc_model_get_state(model, "calls", &t) == 0);
    return value;
  }

  std::string weights;
  ModelSignature signature;
  std::string blob;
  tgc_model_desc desc;
  tgc_model *model = nullptr;
  int status = 1;
  std::vector<int64_t> xShape, dyShape;
  std::vector<float> xData, dyData;
  DLTensor x, dy;
  std::vector<Managed> outputs, grads;
};

std::string createError(const ModelSignature &sig, const std::string &weights,
                        bool withBackward = true) {
  std::string blob = encodeSignatureBlob(sig);
  tgc_model_desc desc{TGC_ABI_VERSION,
                      "scale",
                      reinterpret_cast<const uint8_t *>(blob.data()),
                      blob.size(),
                      reinterpret_cast<const uint8_t *>(weights.data()),
                      weights.size(),
                      scale_forward,
                      withBackward ? scale_backward : nullptr};
  tgc_model *model = nullptr;
  int rc = tgc_rt_create(&desc, &model);
  tgc_model_destroy(model);
  return rc == 0 ? "" : tgc_model_last_error(nullptr);
}

} // namespace

TEST_CASE("A trainable model describes its backward", "[runtime][train]") {
  ScaleFixture f;
  REQUIRE(f.status == 0);
  CHECK(tgc_model_is_trainable(f.model) == 1);
  CHECK(tgc_model_num_gradients(f.model) == 2);
  CHECK(std::string(tgc_model_gradient_name(f.model, 0)) == "w");
  CHECK(std::string(tgc_model_gradient_name(f.model, 1)) == "input.0");
  CHECK(tgc_model_gradient_name(f.model, 2) == nullptr);
  CHECK(tgc_model_gradient_name(f.model, -1) == nullptr);
  CHECK(tgc_model_output_has_gradient(f.model, 0) == 1);
  CHECK(tgc_model_output_has_gradient(f.model, 1) == 0);
  CHECK(tgc_model_output_has_gradient(f.model, 2) == -1);
  CHECK(tgc_model_saved_count(f.model) == 3);
  CHECK(tgc_model_saved_bytes(f.model) == 0);
  // x is rewritten by the backward only.
  CHECK(tgc_model_input_is_mutated(f.model, 0) == 1);
}

TEST_CASE("run_train then backward computes gradients and applies the "
          "mutations of both passes",
          "[runtime][train]") {
  ScaleFixture f(3);
  REQUIRE(f.status == 0);
  std::vector<float> x0 = f.xData;
  REQUIRE(f.forward() == "");
  CHECK(values(f.outputs[0]) == std::vector<float>{1, 4, 9, 16, 5, 12, 21, 32, 9, 20, 33, 48});
  CHECK(*static_cast<int64_t *>(f.outputs[1]->dl_tensor.data) == 0);
  CHECK(f.calls() == 1);
  // x (3 x 4 floats) and acc (4 floats) are copied; w is passed by reference.
  CHECK(tgc_model_saved_bytes(f.model) == 3 * 4 * 4 + 4 * 4);
  // The forward does not touch x; the backward does.
  CHECK(f.xData == x0);

  REQUIRE(f.backward() == "");
  std::vector<float> gw(4, 0), gx(12), newX(12);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j) {
      float dy = f.dyData[size_t(i * 4 + j)];
      gw[size_t(j)] += dy * x0[size_t(i * 4 + j)];
      gx[size_t(i * 4 + j)] = dy * kScaleW[j];
      newX[size_t(i * 4 + j)] = x0[size_t(i * 4 + j)] - dy * kScaleW[j];
    }
  CHECK(values(f.grads[0]) == gw);
  CHECK(values(f.grads[1]) == gx);
  CHECK(std::vector<int64_t>(f.grads[1]->dl_tensor.shape, f.grads[1]->dl_tensor.shape + 2) ==
        std::vector<int64_t>{3, 4});
  std::vector<float> acc(4);
  for (int j = 0; j < 4; ++j)
    acc[size_t(j)] = kScaleAcc[j] + gw[size_t(j)];
  CHECK(f.state4("acc") == acc);
  CHECK(f.xData == newX);
  CHECK(f.calls() == 1);
  CHECK(scale_descriptor_problems() == 0);
}

TEST_CASE("A backward needs the saved values of a run_train and consumes "
          "them",
          "[runtime][train]") {
  ScaleFixture f;
  REQUIRE(f.status == 0);
  std::string noForward = "no saved values for the backward: call tgc_model_run_train first "
                          "(each backward consumes the values of one run_train)";
  CHECK(f.backward() == noForward);
  // A plain run saves nothing for the backward.
  REQUIRE(f.forward(/*train=*/false) == "");
  CHECK(f.backward() == noForward);
  REQUIRE(f.forward() == "");
  REQUIRE(f.backward() == "");
  CHECK(f.backward() == noForward);
  CHECK(f.state4("acc") != std::vector<float>(kScaleAcc, kScaleAcc + 4));
}

TEST_CASE("A plain run between run_train and backward keeps the pending "
          "values",
          "[runtime][train]") {
  ScaleFixture f;
  REQUIRE(f.status == 0);
  REQUIRE(f.forward() == "");
  std::vector<float> x0 = f.xData;
  std::vector<float> other(8, 100.0f);
  DLTensor otherX = cpuTensor(other.data(), kF32, f.xShape);
  DLTensor *inputs[] = {&otherX};
  DLManagedTensor *raw[2] = {nullptr, nullptr};
  REQUIRE(tgc_model_run(f.model, inputs, 1, raw, 2) == 0);
  for (DLManagedTensor *t : raw)
    t->deleter(t);
  REQUIRE(f.backward() == "");
  // grad w comes from the x of the run_train, not the 100s of the plain run.
  float gw0 = f.dyData[0] * x0[0] + f.dyData[4] * x0[4];
  CHECK(values(f.grads[0])[0] == gw0);
}

TEST_CASE("Grad outputs are checked against the forward's outputs", "[runtime][train]") {
  ScaleFixture f;
  REQUIRE(f.status == 0);
  REQUIRE(f.forward() == "");
  std::vector<float> acc0 = f.state4("acc");

  SECTION("a missing gradient of a differentiable output") {
    CHECK(f.backward({nullptr, nullptr}) ==
          "grad output 'output.0' (#0): the tensor is NULL, but the output "
          "has a gradient");
  }
  SECTION("a wrong shape") {
    std::vector<int64_t> shape{3, 4};
    std::vector<float> data(12);
    DLTensor g = cpuTensor(data.data(), kF32, shape);
    CHECK(f.backward({&g, nullptr}) == "grad output 'output.0' (#0): expected shape [2, 4] (the "
                                       "output's), got [3, 4]");
  }
  SECTION("a wrong rank") {
    std::vector<int64_t> shape{8};
    DLTensor g = cpuTensor(f.dyData.data(), kF32, shape);
    CHECK(f.backward({&g, nullptr}) == "grad output 'output.0' (#0): expected shape [2, 4] (the "
                                       "output's), got [8]");
  }
  SECTION("a wrong dtype") {
    f.dy.dtype = kI64;
    CHECK(f.backward() == "grad output 'output.0' (#0): expected dtype float32, got int64");
  }
  SECTION("another device") {
    f.dy.device.device_type = kDLCUDA;
    CHECK(f.backward() == "grad output 'output.0' (#0): expected a CPU "
                          "tensor (kDLCPU), got device type 2");
  }
  SECTION("wrong counts") {
    DLTensor *grads[] = {&f.dy};
    DLManagedTensor *raw[2] = {nullptr, nullptr};
    CHECK(tgc_model_backward(f.model, grads, 1, raw, 2) != 0);
    CHECK(std::string(tgc_model_last_error(f.model)) ==
          "expected 2 grad outputs (one per output), got 1");
    DLTensor *both[] = {&f.dy, nullptr};
    CHECK(tgc_model_backward(f.model, both, 2, raw, 1) != 0);
    CHECK(std::string(tgc_model_last_error(f.model)) == "expected room for 2 gradients, got 1");
  }
  // Nothing changed and the saved values are still pending.
  CHECK(f.state4("acc") == acc0);
  f.dy.dtype = kF32;
  f.dy.device.device_type = kDLCPU;
  CHECK(f.backward() == "");
}

TEST_CASE("Strided grad outputs are packed", "[runtime][train]") {
  ScaleFixture a, b;
  REQUIRE(a.status == 0);
  REQUIRE(b.status == 0);
  REQUIRE(a.forward() == "");
  REQUIRE(b.forward() == "");
  // b's dy is the transpose of a 4 x 2 array holding the same values.
  std::vector<float> transposed(8);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 4; ++j)
      transposed[size_t(j * 2 + i)] = a.dyData[size_t(i * 4 + j)];
  int64_t strides[] = {1, 2};
  DLTensor g = cpuTensor(transposed.data(), kF32, b.dyShape, strides);
  REQUIRE(a.backward() == "");
  REQUIRE(b.backward({&g, nullptr}) == "");
  CHECK(values(a.grads[0]) == values(b.grads[0]));
  CHECK(values(a.grads[1]) == values(b.grads[1]));
}

TEST_CASE("set_state of a parameter saved by reference drops the pending "
          "values",
          "[runtime][train]") {
  ScaleFixture f;
  REQUIRE(f.status == 0);
  REQUIRE(f.forward() == "");
  std::vector<float> w(4, 1.0f);
  std::vector<int64_t> shape{4};
  DLTensor t = cpuTensor(w.data(), kF32, shape);
  REQUIRE(tgc_model_set_state(f.model, "w", &t) == 0);
  CHECK(f.backward().rfind("no saved values", 0) == 0);
  // Buffers are not saved by reference: setting one keeps them.
  REQUIRE(f.forward() == "");
  REQUIRE(tgc_model_set_state(f.model, "acc", &t) == 0);
  CHECK(f.backward() == "");
}

TEST_CASE("Inference models refuse the training calls", "[runtime][train]") {
  std::string weights;
  ModelSignature sig = tinySignature(weights);
  std::string blob = encodeSignatureBlob(sig);
  tgc_model_desc desc{TGC_ABI_VERSION,
                      "tiny",
                      reinterpret_cast<const uint8_t *>(blob.data()),
                      blob.size(),
                      reinterpret_cast<const uint8_t *>(weights.data()),
                      weights.size(),
                      tiny_forward,
                      nullptr};
  tgc_model *model = nullptr;
  REQUIRE(tgc_rt_create(&desc, &model) == 0);
  CHECK(tgc_model_is_trainable(model) == 0);
  CHECK(tgc_model_num_gradients(model) == 0);
  CHECK(tgc_model_saved_count(model) == 0);
  CHECK(tgc_model_output_has_gradient(model, 0) == 0);
  DLManagedTensor *raw[2] = {nullptr, nullptr};
  CHECK(tgc_model_run_train(model, nullptr, 0, raw, 2) != 0);
  CHECK(std::string(tgc_model_last_error(model)) ==
        "model 'tiny' is not trainable (compile it with `tgc compile "
        "--train`)");
  CHECK(tgc_model_backward(model, nullptr, 0, raw, 0) != 0);
  CHECK(std::string(tgc_model_last_error(model)) ==
        "model 'tiny' is not trainable (compile it with `tgc compile "
        "--train`)");
  tgc_model_destroy(model);
}

TEST_CASE("Backward signatures the runtime cannot honour are rejected at "
          "creation",
          "[runtime][train]") {
  std::string weights;
  ModelSignature sig = scaleSignature(weights);
  REQUIRE(verifySignature(sig) == "");
  REQUIRE(createError(sig, weights) == "");

  SECTION("the descriptor and the blob disagree about the backward") {
    CHECK(createError(sig, weights, /*withBackward=*/false) ==
          "invalid signature: signature 'scale': it has a backward but the "
          "descriptor has no backward entry");
    ModelSignature inference = sig;
    inference.backward.reset();
    CHECK(createError(inference, weights) ==
          "invalid signature: signature 'scale': the descriptor has a "
          "backward entry but the signature has no backward");
  }
  SECTION("a buffer saved by reference") {
    sig.backward->saved[2].arg = 2;
    CHECK(verifySignature(sig) == "saved value '#2': only parameters and constants are saved by "
                                  "reference");
    CHECK(createError(sig, weights) == "invalid signature: saved value '#2': only parameters and "
                                       "constants are saved by reference");
  }
  SECTION("a tangent of an output that does not exist") {
    sig.backward->tangents = {2};
    CHECK(verifySignature(sig) == "tangent '#0': user output out of range");
    CHECK(createError(sig, weights) == "invalid signature: tangent '#0': user output out of range");
  }
  SECTION("a gradient of a buffer") {
    sig.backward->results[0].target = 1;
    sig.backward->results[0].dtype = DType::int64();
    sig.backward->results[0].sizes = {};
    CHECK(verifySignature(sig) == "gradient of 'w': target argument has the wrong kind");
    CHECK(createError(sig, weights) ==
          "invalid signature: gradient of 'w': target argument has the "
          "wrong kind");
  }
  SECTION("a user output among the backward's results") {
    sig.backward->results[0].kind = ResultKind::UserOutput;
    CHECK(createError(sig, weights) ==
          "invalid signature: result 'w': unknown kind for a result of the "
          "backward entry");
  }
  SECTION("a saved reference of another shape") {
    sig.backward->saved[0].sizes = {SizeExpr::constant(5)};
    CHECK(verifySignature(sig) == "saved value '#0': dtype or shape differs "
                                  "from the argument it refers to");
    CHECK(createError(sig, weights) ==
          "invalid signature: saved value '#0': its shape differs from the "
          "argument it refers to");
  }
}

TEST_CASE("Every truncation of a training signature blob fails cleanly", "[runtime][train]") {
  std::string weights;
  std::string blob = encodeSignatureBlob(scaleSignature(weights));
  tgc_model_desc desc{TGC_ABI_VERSION,
                      "scale",
                      nullptr,
                      0,
                      reinterpret_cast<const uint8_t *>(weights.data()),
                      weights.size(),
                      scale_forward,
                      scale_backward};
  for (size_t size = 0; size < blob.size(); ++size) {
    std::string truncated = blob.substr(0, size);
    desc.signature = reinterpret_cast<const uint8_t *>(truncated.data());
    desc.signature_size = truncated.size();
    tgc_model *model = nullptr;
    INFO("truncated to " << size << " bytes");
    CHECK(tgc_rt_create(&desc, &model) != 0);
    CHECK(std::string(tgc_model_last_error(nullptr)).rfind("malformed signature blob: ", 0) == 0);
  }
}

TEST_CASE("model.json and the report describe the backward", "[signature][train]") {
  std::string weights;
  ModelSignature sig = scaleSignature(weights);
  std::string json = writeSignatureJson(sig);
  CHECK(json.find("\"saved_count\": 3,\n  \"saved_bytes\": null,") != std::string::npos);
  CHECK(json.find("\"reference\": \"w\"") != std::string::npos);
  sig.backward->savedBytes = 1234;
  CHECK(writeTrainingReport(sig) == "saved count: 3\n"
                                    "saved bytes: 1234\n"
                                    "saved #0: float32[4] = parameter 'w' (by reference)\n"
                                    "saved #1: float32[batch, 4]\n"
                                    "saved #2: float32[4]\n");
  // The blob ends with the backward section.
  std::string blob = encodeSignatureBlob(sig);
  sig.backward.reset();
  std::string inference = encodeSignatureBlob(sig);
  CHECK(inference.back() == '\0');
  CHECK(blob.compare(0, inference.size() - 1, inference, 0, inference.size() - 1) == 0);
  CHECK(blob[inference.size() - 1] == '\1');
}

TEST_CASE("Corrupted training signature blobs fail or load, never crash", "[runtime][train]") {
  std::string weights;
  std::string blob = encodeSignatureBlob(scaleSignature(weights));
  tgc_model_desc desc{TGC_ABI_VERSION,
                      "scale",
                      nullptr,
                      0,
                      reinterpret_cast<const uint8_t *>(weights.data()),
                      weights.size(),
                      scale_forward,
                      scale_backward};
  std::mt19937 random(7);
  int failures = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    std::string corrupt = blob;
    for (int flips = 1 + trial % 3; flips > 0; --flips)
      corrupt[random() % corrupt.size()] = char(random());
    desc.signature = reinterpret_cast<const uint8_t *>(corrupt.data());
    desc.signature_size = corrupt.size();
    tgc_model *model = nullptr;
    failures += tgc_rt_create(&desc, &model) != 0;
    tgc_model_destroy(model);
  }
  CHECK(failures > 0);
}
