//===- CompiledRun.cpp - Fuzzes tgc_model_run of a compiled model --------===//
//
// tgc_model_run of a model `tgc compile` generated at build time (the mutate fixture,
// test/fixtures/mutate/core.pt2: an input x f32[4, 6] the model writes, and two
// buffers), linked as an archive (--emit=static, --cpu x86-64-v2), on DLTensors decoded
// from the input (FuzzTensors.h): any count, dtype, device, rank, sizes, strides,
// offsets, the same tensor twice, NULL. The call must run or fail with a message and
// every output NULL; when it runs, the generated entry read and wrote only the memory
// the runtime gave it, the caller's tensor was written back through its strides (the
// sanitizers see any byte outside), and each output is a contiguous CPU tensor.
//
//===----------------------------------------------------------------------===//

#include "FuzzTensors.h"
#include "tgc/Runtime/tgc_runtime.h"

#include <cstdlib>
#include <memory>
#include <vector>

extern "C" int fuzzed_create(tgc_model **out);

using namespace tgc::fuzz;

namespace {

/// Whether `t` is what a successful run returns: a CPU tensor with a shape, contiguous
/// row-major strides and data for its elements.
bool isResult(const DLTensor &t) {
  if (t.device.device_type != kDLCPU || t.ndim < 0 || (t.ndim > 0 && (!t.shape || !t.strides)))
    return false;
  int64_t expected = 1;
  for (int d = t.ndim - 1; d >= 0; --d) {
    if (t.shape[d] < 0 || (t.shape[d] > 1 && t.strides[d] != expected))
      return false;
    expected *= t.shape[d] > 0 ? t.shape[d] : 1;
  }
  return t.data != nullptr || expected == 0;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static tgc_model *model = [] {
    tgc_model *created = nullptr;
    if (fuzzed_create(&created) != 0)
      std::abort();
    return created;
  }();
  FuzzedDataProvider in(data, size);
  int64_t numInputs = in.ConsumeIntegralInRange<int>(0, 7) ? 1 : in.ConsumeIntegralInRange(0, 3);
  std::vector<std::unique_ptr<Argument>> args;
  std::vector<DLTensor *> inputs = inputsFrom(in, numInputs, args);
  int64_t expectedOutputs = tgc_model_num_outputs(model);
  int64_t numOutputs =
      in.ConsumeIntegralInRange<int>(0, 7) ? expectedOutputs : in.ConsumeIntegralInRange(0, 3);
  std::vector<DLManagedTensor *> outputs(4, nullptr);
  int rc = tgc_model_run(model, inputs.data(), numInputs, outputs.data(), numOutputs);
  for (int64_t k = 0; k < int64_t(outputs.size()); ++k) {
    DLManagedTensor *out = outputs[size_t(k)];
    if (rc != 0 && out)
      std::abort(); // a failed call leaves every output NULL
    if (rc == 0 && k < numOutputs && (!out || !isResult(out->dl_tensor)))
      std::abort(); // a run returns each output, as the ABI describes it
    if (out)
      out->deleter(out);
  }
  return 0;
}
