// Gathering a strided view of a raw tensor storage into a contiguous row-major buffer.
#include "StridedCopy.h"

#include "llvm/Support/CheckedArithmetic.h"
#include <cstring>

using namespace llvm;
using namespace tgc;
using namespace tgc::frontend;

/// The number of elements, and the largest element index the view touches (plus one);
/// nullopt on overflow or negative input.
static std::optional<std::pair<int64_t, int64_t>>
viewExtent(ArrayRef<int64_t> sizes, ArrayRef<int64_t> strides, int64_t offset) {
  std::optional<int64_t> numel = 1, end = offset + 1;
  if (offset < 0)
    return std::nullopt;
  for (auto [size, stride] : llvm::zip(sizes, strides)) {
    if (size < 0 || stride < 0)
      return std::nullopt;
    numel = checkedMul(*numel, size);
    if (!numel)
      return std::nullopt;
    if (size == 0)
      continue;
    std::optional<int64_t> reach = checkedMul(size - 1, stride);
    end = reach ? checkedAdd(*end, *reach) : std::nullopt;
    if (!end)
      return std::nullopt;
  }
  return std::make_pair(*numel, *numel == 0 ? int64_t(0) : *end);
}

static bool isRowMajor(ArrayRef<int64_t> sizes, ArrayRef<int64_t> strides) {
  int64_t expected = 1;
  for (int64_t i = static_cast<int64_t>(sizes.size()) - 1; i >= 0; --i) {
    if (sizes[i] != 1 && strides[i] != expected)
      return false;
    expected *= sizes[i];
  }
  return true;
}

Error tgc::frontend::copyStrided(StringRef storage, ArrayRef<int64_t> sizes,
                                 ArrayRef<int64_t> strides, int64_t storageOffset,
                                 unsigned elementBytes, function_ref<char *(size_t)> allocate) {
  if (sizes.size() != strides.size())
    return createStringError("the view has %zu sizes but %zu strides", sizes.size(),
                             strides.size());
  auto extent = viewExtent(sizes, strides, storageOffset);
  std::optional<int64_t> bytesNeeded =
      extent ? checkedMul<int64_t>(extent->second, elementBytes) : std::nullopt;
  std::optional<int64_t> bytesOut =
      extent ? checkedMul<int64_t>(extent->first, elementBytes) : std::nullopt;
  if (!bytesNeeded || !bytesOut)
    return createStringError("the view has a negative or overflowing size, stride or offset");
  if (static_cast<uint64_t>(*bytesNeeded) > storage.size())
    return createStringError("the view needs %lld bytes of storage but the archive holds %zu",
                             static_cast<long long>(*bytesNeeded), storage.size());
  char *out = allocate(static_cast<size_t>(*bytesOut));
  if (*bytesOut == 0)
    return Error::success();
  if (isRowMajor(sizes, strides)) {
    std::memcpy(out, storage.data() + storageOffset * elementBytes, *bytesOut);
    return Error::success();
  }
  // Odometer over the row-major index; `source` is the element index in the storage.
  SmallVector<int64_t> index(sizes.size(), 0);
  int64_t source = storageOffset;
  for (size_t element = 0, e = extent->first; element < e; ++element) {
    std::memcpy(out + element * elementBytes, storage.data() + source * elementBytes, elementBytes);
    for (int64_t d = static_cast<int64_t>(sizes.size()) - 1; d >= 0; --d) {
      source += strides[d];
      if (++index[d] < sizes[d])
        break;
      source -= strides[d] * sizes[d];
      index[d] = 0;
    }
  }
  return Error::success();
}

Expected<std::vector<char>> tgc::frontend::copyStridedToContiguous(StringRef storage,
                                                                   ArrayRef<int64_t> sizes,
                                                                   ArrayRef<int64_t> strides,
                                                                   int64_t storageOffset,
                                                                   unsigned elementBytes) {
  std::vector<char> out;
  if (Error error =
          copyStrided(storage, sizes, strides, storageOffset, elementBytes, [&](size_t bytes) {
            out.resize(bytes);
            return out.data();
          }))
    return std::move(error);
  return out;
}
