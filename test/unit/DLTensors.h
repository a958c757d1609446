//===- DLTensors.h - DLPack tensors for the runtime tests -----------------===//
//
// CPU DLTensors over caller-owned data, shared by the runtime tests.
//
//===----------------------------------------------------------------------===//

#ifndef TGC_TEST_UNIT_DLTENSORS_H
#define TGC_TEST_UNIT_DLTENSORS_H

#include <dlpack/dlpack.h>

#include <cstdint>
#include <vector>

namespace tgc::test {

inline constexpr DLDataType kF32{kDLFloat, 32, 1};
inline constexpr DLDataType kI64{kDLInt, 64, 1};

/// A CPU tensor over caller-owned data and sizes.
inline DLTensor cpuTensor(void *data, DLDataType dtype, std::vector<int64_t> &shape,
                          int64_t *strides = nullptr) {
  DLTensor t{};
  t.data = data;
  t.device = {kDLCPU, 0};
  t.ndim = int32_t(shape.size());
  t.dtype = dtype;
  t.shape = shape.data();
  t.strides = strides;
  return t;
}

} // namespace tgc::test

#endif // TGC_TEST_UNIT_DLTENSORS_H
