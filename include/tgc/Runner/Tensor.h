//===- Tensor.h - Tensors the runner owns on the host -----------*- C++ -*-===//
//
// Gradients summed over the graphs of a program, buffers copied between them
// and the tensors `tgc run` reads and writes are contiguous host tensors the
// runner owns; models see them as DLTensor views.
//
//===----------------------------------------------------------------------===//

#ifndef TGC_RUNNER_TENSOR_H
#define TGC_RUNNER_TENSOR_H

#include "tgc/Runner/Model.h"
#include "tgc/Runner/Status.h"

#include <dlpack/dlpack.h>

#include <cstdint>
#include <string>
#include <vector>

namespace tgc::runner {

/// A contiguous (row-major) tensor in host memory.
struct HostTensor {
  DLDataType dtype{kDLFloat, 32, 1};
  std::vector<int64_t> shape;
  std::vector<char> data;

  /// Product of the shape (1 for a scalar).
  int64_t numElements() const;
  /// A DLTensor viewing this tensor (valid while it lives and keeps its size).
  DLTensor view();
};

/// Bytes per element of `dtype` (lanes included).
size_t elementSize(DLDataType dtype);

/// A contiguous copy of the (possibly strided) host tensor `tensor`; errors name
/// it `what`.
Status copyToHost(const DLTensor &tensor, const std::string &what, HostTensor &copy);

/// Zeros of the dtype and sizes of `like`.
HostTensor zerosLike(const DLTensor &like);

/// Adds `addend` into `sum` (f32 or f64, same sizes); errors name the tensor
/// `what`.
Status addInto(HostTensor &sum, const HostTensor &addend, const std::string &what);

/// `bool()` of a one-element host tensor.
Status truthOf(const DLTensor &tensor, bool &truth);

/// A DLManagedTensor that owns `tensor` (its deleter frees it).
ManagedTensor toManaged(HostTensor tensor);

} // namespace tgc::runner

#endif // TGC_RUNNER_TENSOR_H
