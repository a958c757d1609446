//===- ModelRun.cpp - Fuzzes tgc_model_run's handling of its arguments ----===//
//
// tgc_model_run of the hand-written tiny model (test/unit/TinyModel.c: inputs
// x f32[batch, 4], mutated, and y f32[batch]) on DLTensors built from the
// input: any number of them, any dtype, device, rank, sizes (zero, negative,
// huge), strides (negative, zero, overlapping), byte offsets (misaligned) and
// the same tensor passed twice (FuzzTensors.h). The call must run or fail with
// a message; when it runs, the entry must have seen only descriptors the ABI
// promises (tiny_descriptor_problems).
//
//===----------------------------------------------------------------------===//

#include "FuzzTensors.h"
#include "TinyModel.h"
#include "tgc/Runtime/tgc_runtime.h"

#include <cstdlib>
#include <memory>
#include <vector>

extern "C" int tiny_create(tgc_model **out);

using namespace tgc::fuzz;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static tgc_model *model = [] {
    tgc_model *created = nullptr;
    if (tiny_create(&created) != 0)
      std::abort();
    return created;
  }();
  FuzzedDataProvider in(data, size);
  int64_t numInputs = in.ConsumeIntegralInRange<int64_t>(0, 3);
  std::vector<std::unique_ptr<Argument>> args;
  std::vector<DLTensor *> inputs = inputsFrom(in, numInputs, args);
  int64_t numOutputs = in.ConsumeIntegralInRange<int>(0, 7) ? 2 : in.ConsumeIntegralInRange(0, 3);
  DLManagedTensor *outputs[3] = {};
  int before = tiny_descriptor_problems();
  int rc = tgc_model_run(model, inputs.data(), numInputs, outputs, numOutputs);
  if (rc == 0) {
    if (tiny_descriptor_problems() != before)
      std::abort(); // the runtime handed the entry a descriptor the ABI does not allow
    for (int64_t k = 0; k < numOutputs; ++k)
      if (outputs[k])
        outputs[k]->deleter(outputs[k]);
  } else {
    for (DLManagedTensor *out : outputs)
      if (out)
        std::abort(); // a failed call leaves every output NULL
  }
  return 0;
}
