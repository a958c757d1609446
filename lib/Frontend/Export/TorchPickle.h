// A strict reader for the pickle that torch.save writes for a dict of tensors.
#ifndef TGC_LIB_FRONTEND_EXPORT_TORCHPICKLE_H
#define TGC_LIB_FRONTEND_EXPORT_TORCHPICKLE_H

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace tgc::pt2 {

/// One tensor of a pickled state dict: which storage of the `torch.save` zip holds its
/// data (member `data/<storageKey>`) and the view of that storage it is. Archives
/// written by torch 2.6 - 2.8 store parameters, buffers and constants this way.
struct PickledTensor {
  /// The storage's key (its file name under `data/`).
  std::string storageKey;
  /// torch's name of the element type (`float32`, `int64`, `float8_e4m3fn`, ...),
  /// which is also the name export's schema gives it.
  std::string dtype;
  /// Bytes per element of `dtype`.
  unsigned elementBytes = 0;
  /// The size of the whole storage as the pickle claims it, in bytes; the storage
  /// file must have exactly this size.
  uint64_t storageBytes = 0;
  /// Where torch.save found the storage (`cpu`, `cuda:0`); the data is on disk anyway.
  std::string location;
  /// The view, in elements.
  int64_t storageOffset = 0;
  llvm::SmallVector<int64_t> sizes;
  llvm::SmallVector<int64_t> strides;
  bool requiresGrad = false;
  /// Whether it was an nn.Parameter (rebuilt through `_rebuild_parameter`).
  bool isParameter = false;
};

/// The entries of a pickled `dict[str, Tensor]`, in the pickle's order.
using PickledTensorDict = std::vector<std::pair<std::string, PickledTensor>>;

/// Reads `data.pkl` of a `torch.save(dict_of_tensors)` zip: pickle protocols 2 - 5 as
/// torch.save writes them (plain or ordered dicts of dense tensors and parameters,
/// storages as persistent ids). It is deliberately no general unpickler: any opcode,
/// global or call outside that subset is an error naming the opcode and its byte
/// offset, and malformed input (truncated, out-of-range memo references, stack
/// underflow) is an error too, never a crash or an out-of-bounds read.
llvm::Expected<PickledTensorDict> readTorchSavePickle(llvm::StringRef pickle);

} // namespace tgc::pt2

#endif // TGC_LIB_FRONTEND_EXPORT_TORCHPICKLE_H
