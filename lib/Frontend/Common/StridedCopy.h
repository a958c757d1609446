// Gathering a strided view of a raw tensor storage into a contiguous row-major buffer.
#ifndef TGC_LIB_FRONTEND_COMMON_STRIDEDCOPY_H
#define TGC_LIB_FRONTEND_COMMON_STRIDEDCOPY_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include <vector>

namespace tgc::frontend {

/// Copies the elements of the view (`sizes`, `strides`, `storageOffset`, all in
/// elements of `elementBytes` bytes) of `storage` into a contiguous row-major buffer
/// of `allocate(bytes)` (uninitialized memory: the weights of a model are hundreds of
/// MB, each copy and zero fill of which costs). Archives store whole storages, so a parameter that
/// shares its storage with others, or is a non-contiguous view of it, is read this way. Fails,
/// without reading out of bounds, when the view does not fit in the storage or a stride or the
/// offset is negative.
llvm::Error copyStrided(llvm::StringRef storage, llvm::ArrayRef<int64_t> sizes,
                        llvm::ArrayRef<int64_t> strides, int64_t storageOffset,
                        unsigned elementBytes, llvm::function_ref<char *(size_t)> allocate);

/// As copyStrided, into a new vector.
llvm::Expected<std::vector<char>> copyStridedToContiguous(llvm::StringRef storage,
                                                          llvm::ArrayRef<int64_t> sizes,
                                                          llvm::ArrayRef<int64_t> strides,
                                                          int64_t storageOffset,
                                                          unsigned elementBytes);

} // namespace tgc::frontend

#endif // TGC_LIB_FRONTEND_COMMON_STRIDEDCOPY_H
