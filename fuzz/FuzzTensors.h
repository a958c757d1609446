//===- FuzzTensors.h - DLTensors decoded from fuzz input --------*- C++ -*-===//
//
// The tensors the tgc_model_run harnesses pass: any dtype, device, rank, sizes (zero,
// negative, huge), strides (negative, zero, overlapping) and byte offsets (misaligned).
// Each tensor's memory covers exactly what its sizes and strides reach, so any read or
// write outside it is reported; where the sizes reach more than a few thousand
// elements the data is one byte, which a correct runtime never reads, since such sizes
// cannot match the model.
//
//===----------------------------------------------------------------------===//

#ifndef TGC_FUZZ_FUZZTENSORS_H
#define TGC_FUZZ_FUZZTENSORS_H

#include <dlpack/dlpack.h>
#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <memory>
#include <vector>

namespace tgc::fuzz {

/// A tensor argument and the memory it views.
struct Argument {
  DLTensor tensor{};
  std::vector<int64_t> shape, strides;
  std::vector<uint8_t> memory;
};

inline constexpr int64_t kMaxElements = 4096;

inline DLDataType dtypeFrom(FuzzedDataProvider &in) {
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

inline int64_t sizeFrom(FuzzedDataProvider &in) {
  switch (in.ConsumeIntegralInRange<int>(0, 15)) {
  case 0:
    return in.ConsumeIntegral<int64_t>(); // anything, negative and huge included
  case 1:
    return int64_t(1) << in.ConsumeIntegralInRange<int>(16, 62);
  default:
    return in.ConsumeIntegralInRange<int64_t>(0, 9);
  }
}

inline void build(FuzzedDataProvider &in, Argument &arg) {
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

/// `count` tensor arguments (kept in `args`): now and then one is the first passed again,
/// and one of them NULL.
inline std::vector<DLTensor *> inputsFrom(FuzzedDataProvider &in, int64_t count,
                                          std::vector<std::unique_ptr<Argument>> &args) {
  std::vector<DLTensor *> inputs;
  for (int64_t i = 0; i < count; ++i) {
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
  return inputs;
}

} // namespace tgc::fuzz

#endif // TGC_FUZZ_FUZZTENSORS_H
