//===- ModelRun.cpp - Fuzzes tgc_model_run's handling of its arguments ----===//
//
// tgc_model_run of the hand-written tiny model (test/unit/TinyModel.c: inputs
// x f32[batch, 4], mutated, and y f32[batch]) on DLTensors built from the
// input: any number of them, any dtype, device, rank, sizes (zero, negative,
// huge), strides (negative, zero, overlapping), byte offsets (misaligned) and
// the same tensor passed twice. The call must run or fail with a message;
// when it runs, the entry must have seen only descriptors the ABI promises
// (tiny_descriptor_problems). Each tensor's memory covers exactly what its
// sizes and strides reach, so any read or write outside it is reported; where
// the sizes reach more than a few thousand elements the data is one byte,
// which a correct runtime never reads, since such sizes cannot match the model.
//
//===----------------------------------------------------------------------===//

#include "TinyModel.h"
#include "tgc/Runtime/tgc_runtime.h"

#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <cstdlib>
#include <iterator>
#include <memory>
#include <vector>

extern "C" int tiny_create(tgc_model **out);

namespace {

/// A tensor argument and the memory it views.
struct Argument {
  DLTensor tensor{};
  std::vector<int64_t> shape, strides;
  std::vector<uint8_t> memory;
};

constexpr int64_t kMaxElements = 4096;

DLDataType dtypeFrom(FuzzedDataProvider &in) {
  static const DLDataType common[] = {{kDLFloat, 32, 1},
                                      {kDLFloat, 64, 1},
                                      {kDLInt, 64, 1},
                                      {kDLInt, 32, 1},
                                      {DLDataTypeCode(6), 8, 1} /* bool */,
                                      {kDLBfloat, 16, 1},
                                      {kDLFloat, 16, 1},
                                      {kDLUInt, 8, 1}};
  if (in.ConsumeIntegralInRange<int>(0, 9) > 0)
    return common[in.ConsumeIntegralInRange<size_t>(0, std::size(common) - 1)];
  return {in.ConsumeIntegral<uint8_t>(), in.ConsumeIntegral<uint8_t>(),
          in.ConsumeIntegral<uint16_t>()};
}

int64_t sizeFrom(FuzzedDataProvider &in) {
  switch (in.ConsumeIntegralInRange<int>(0, 15)) {
  case 0:
    return in.ConsumeIntegral<int64_t>(); // anything, negative and huge included
  case 1:
    return int64_t(1) << in.ConsumeIntegralInRange<int>(16, 62);
  default:
    return in.ConsumeIntegralInRange<int64_t>(0, 9);
  }
}

void build(FuzzedDataProvider &in, Argument &arg) {
  DLTensor &t = arg.tensor;
  t.dtype = dtypeFrom(in);
  t.device = {in.ConsumeIntegralInRange<int>(0, 15) ? kDLCPU : kDLCUDA, 0};
  t.ndim = in.ConsumeIntegralInRange<int32_t>(0, in.ConsumeBool() ? 3 : 12);
  arg.shape.resize(size_t(t.ndim));
  for (int64_t &size : arg.shape)
    size = sizeFrom(in);
  bool strided = in.ConsumeBool();
  arg.strides.resize(size_t(t.ndim));
  int64_t contiguous = 1;
  for (int d = t.ndim - 1; d >= 0; --d) {
    arg.strides[size_t(d)] = strided ? in.ConsumeIntegralInRange<int64_t>(-12, 12) : contiguous;
    int64_t size = arg.shape[size_t(d)];
    if (size > 0 && size <= kMaxElements && contiguous <= kMaxElements)
      contiguous *= size;
  }
  t.shape = arg.shape.data();
  t.strides = strided || in.ConsumeBool() ? arg.strides.data() : nullptr;
  t.byte_offset = in.ConsumeIntegralInRange<int>(0, 7) == 0 ? in.ConsumeIntegralInRange(1, 7) : 0;

  // The element offsets the sizes and strides reach: [low, high].
  size_t element = (size_t(t.dtype.bits) * t.dtype.lanes + 7) / 8;
  bool small = element > 0 && element <= 16, empty = false;
  int64_t low = 0, high = 0, count = 1;
  for (int d = 0; d < t.ndim && small; ++d) {
    int64_t size = arg.shape[size_t(d)], stride = arg.strides[size_t(d)];
    if (size == 0)
      empty = true;
    if (size < 0 || size > kMaxElements || (count *= std::max<int64_t>(size, 1)) > kMaxElements)
      small = false;
    else if (size > 0)
      (stride < 0 ? low : high) += stride * (size - 1);
  }
  if (!small || empty) {
    arg.memory.assign(1, 0);
    t.data = arg.memory.data();
    return;
  }
  size_t bytes = size_t(high - low + 1) * element + size_t(t.byte_offset);
  arg.memory.resize(bytes);
  for (uint8_t &byte : arg.memory)
    byte = in.ConsumeIntegral<uint8_t>();
  t.data = arg.memory.data() - low * int64_t(element);
}

} // namespace

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
  std::vector<DLTensor *> inputs;
  for (int64_t i = 0; i < numInputs; ++i) {
    if (i > 0 && in.ConsumeIntegralInRange<int>(0, 7) == 0) {
      inputs.push_back(inputs.front()); // the same tensor twice
      continue;
    }
    args.push_back(std::make_unique<Argument>());
    build(in, *args.back());
    inputs.push_back(&args.back()->tensor);
  }
  if (in.ConsumeIntegralInRange<int>(0, 15) == 0 && !inputs.empty())
    inputs[in.ConsumeIntegralInRange<size_t>(0, inputs.size() - 1)] = nullptr;
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
