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

Expected<std::vector<char>> tgc::frontend::copyStridedToContiguous(StringRef storage,
                                                                   ArrayRef<int64_t> sizes,
                                                                   ArrayRef<int64_t> strides,
                                                                   int64_t storageOffset,
                                                                   unsigned elementBytes) {
  if (sizes.size() != strides.size())
    return createStringError("the view has %zu sizes but %zu strides", sizes.size(),
                             strides.size());
  auto extent = viewExtent(sizes, strides, storageOffset);
  std::optional<int64_t> bytesNeeded =
      extent ? checkedMul<int64_t>(extent->second, elementBytes) : std::nullopt;
  if (!bytesNeeded)
    return createStringError("the view has a negative or overflowing size, stride or offset");
  if (static_cast<uint64_t>(*bytesNeeded) > storage.size())
    return createStringError("the view needs %lld bytes of storage but the archive holds %zu",
                             static_cast<long long>(*bytesNeeded), storage.size());
  std::vector<char> out(static_cast<size_t>(extent->first) * elementBytes);
  if (out.empty())
    return out;
  if (isRowMajor(sizes, strides)) {
    std::memcpy(out.data(), storage.data() + storageOffset * elementBytes, out.size());
    return out;
  }
  // Odometer over the row-major index; `source` is the element index in the storage.
  SmallVector<int64_t> index(sizes.size(), 0);
  int64_t source = storageOffset;
  for (size_t element = 0, e = extent->first; element < e; ++element) {
    std::memcpy(out.data() + element * elementBytes, storage.data() + source * elementBytes,
                elementBytes);
    for (int64_t d = static_cast<int64_t>(sizes.size()) - 1; d >= 0; --d) {
      source += strides[d];
      if (++index[d] < sizes[d])
        break;
      source -= strides[d] * sizes[d];
      index[d] = 0;
    }
  }
  return out;
}
