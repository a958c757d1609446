//===- Tensor.cpp - Tensors the runner owns on the host -------------------===//

#include "tgc/Runner/Tensor.h"

#include <algorithm>
#include <cstring>

using namespace tgc::runner;

int64_t HostTensor::numElements() const {
  int64_t count = 1;
  for (int64_t size : shape)
    count *= size;
  return count;
}

DLTensor HostTensor::view() {
  DLTensor view{};
  view.data = data.empty() ? nullptr : data.data();
  view.device = {kDLCPU, 0};
  view.ndim = int32_t(shape.size());
  view.dtype = dtype;
  view.shape = shape.data();
  view.strides = nullptr;
  view.byte_offset = 0;
  return view;
}

size_t tgc::runner::elementSize(DLDataType dtype) {
  return size_t((dtype.bits + 7) / 8) * std::max<size_t>(dtype.lanes, 1);
}

Status tgc::runner::copyToHost(const DLTensor &tensor, const std::string &what, HostTensor &copy) {
  if (tensor.device.device_type != kDLCPU && tensor.device.device_type != kDLCUDAHost)
    return Status::error("'" + what + "' is not in host memory (device type " +
                         std::to_string(tensor.device.device_type) + ")");
  copy.dtype = tensor.dtype;
  copy.shape.assign(tensor.shape, tensor.shape + tensor.ndim);
  size_t elemSize = elementSize(tensor.dtype);
  int64_t count = copy.numElements();
  copy.data.resize(size_t(count) * elemSize);
  const char *base = static_cast<const char *>(tensor.data) + tensor.byte_offset;
  std::vector<int64_t> index(size_t(tensor.ndim), 0);
  for (int64_t linear = 0; linear < count; ++linear) {
    int64_t offset = linear;
    if (tensor.strides) {
      offset = 0;
      for (int32_t d = 0; d < tensor.ndim; ++d)
        offset += index[d] * tensor.strides[d];
      for (int32_t d = tensor.ndim - 1; d >= 0 && ++index[d] == tensor.shape[d]; --d)
        index[d] = 0;
    }
    std::memcpy(&copy.data[size_t(linear) * elemSize], base + offset * int64_t(elemSize), elemSize);
  }
  return Status::success();
}

HostTensor tgc::runner::zerosLike(const DLTensor &like) {
  HostTensor zeros;
  zeros.dtype = like.dtype;
  zeros.shape.assign(like.shape, like.shape + like.ndim);
  zeros.data.assign(size_t(zeros.numElements()) * elementSize(like.dtype), 0);
  return zeros;
}

namespace {

template <typename T> void addElements(HostTensor &sum, const HostTensor &addend) {
  auto *a = reinterpret_cast<T *>(sum.data.data());
  auto *b = reinterpret_cast<const T *>(addend.data.data());
  for (int64_t i = 0, n = sum.numElements(); i < n; ++i)
    a[i] += b[i];
}

bool sameDType(DLDataType a, DLDataType b) {
  return a.code == b.code && a.bits == b.bits && a.lanes == b.lanes;
}

} // namespace

Status tgc::runner::addInto(HostTensor &sum, const HostTensor &addend, const std::string &what) {
  if (!sameDType(sum.dtype, addend.dtype) || sum.shape != addend.shape)
    return Status::error("the gradients of '" + what + "' have different dtypes or sizes");
  if (sameDType(sum.dtype, DLDataType{kDLFloat, 32, 1}))
    addElements<float>(sum, addend);
  else if (sameDType(sum.dtype, DLDataType{kDLFloat, 64, 1}))
    addElements<double>(sum, addend);
  else
    return Status::error("summing the gradients of '" + what + "': only f32 and f64 are supported");
  return Status::success();
}

Status tgc::runner::truthOf(const DLTensor &tensor, bool &truth) {
  HostTensor value;
  if (Status status = copyToHost(tensor, "branch condition", value))
    return status;
  if (value.numElements() != 1)
    return Status::error("a branch condition has " + std::to_string(value.numElements()) +
                         " elements");
  truth = std::any_of(value.data.begin(), value.data.end(), [](char byte) { return byte != 0; });
  if (sameDType(value.dtype, DLDataType{kDLFloat, 32, 1})) {
    float f;
    std::memcpy(&f, value.data.data(), sizeof f);
    truth = f != 0;
  } else if (sameDType(value.dtype, DLDataType{kDLFloat, 64, 1})) {
    double d;
    std::memcpy(&d, value.data.data(), sizeof d);
    truth = d != 0;
  }
  return Status::success();
}

namespace {
/// The DLManagedTensor of toManaged and the tensor it owns.
struct OwnedTensor {
  DLManagedTensor managed;
  HostTensor tensor;
};
} // namespace

ManagedTensor tgc::runner::toManaged(HostTensor tensor) {
  auto *owned = new OwnedTensor{DLManagedTensor{}, std::move(tensor)};
  owned->managed.dl_tensor = owned->tensor.view();
  owned->managed.manager_ctx = owned;
  owned->managed.deleter = [](DLManagedTensor *self) {
    delete static_cast<OwnedTensor *>(self->manager_ctx);
  };
  return ManagedTensor(&owned->managed);
}
