// Output layouts (OutputLayouts.h).
#include "OutputLayouts.h"

#include "llvm/ADT/STLExtras.h"

#include <vector>

using namespace mlir;
using namespace tgc;

/// Whether the elements of a tensor of `sizes` and `strides` each have their own place
/// (torch.empty_strided makes such a tensor and copy_ fills it), but for broadcast
/// dimensions (stride 0: tgc.load expands a tensor of size 1 there). Dense layouts (a
/// transpose, channels-last) are such, and so are views with gaps (a slice, a step):
/// from the smallest stride, each dimension at or past the extent of those before it;
/// where that does not decide (`x[:, ::2]` of a 4x5 matrix interleaves its rows), the
/// places of a tensor of up to 2^20 elements are compared one by one.
static bool placesElementsApart(ArrayRef<int64_t> sizes, ArrayRef<int64_t> strides) {
  SmallVector<int64_t> order;
  for (auto [d, size] : llvm::enumerate(sizes)) {
    if (size == 0)
      return true; // no elements: any layout will do
    if (size != 1 && strides[d] != 0)
      order.push_back(d);
  }
  if (llvm::any_of(order, [&](int64_t d) { return strides[d] < 0; }))
    return false;
  llvm::stable_sort(order, [&](int64_t a, int64_t b) { return strides[a] < strides[b]; });
  int64_t extent = 1;
  bool apart = true;
  for (int64_t d : order) {
    apart &= strides[d] >= extent;
    extent = strides[d] * sizes[d];
  }
  if (apart)
    return true;
  // Too many elements or too wide a span to compare: a row-major copy.
  constexpr int64_t kMaxElements = 1 << 20, kMaxSpan = 1 << 24;
  int64_t elements = 1, last = 0;
  for (int64_t d : order) {
    if (elements > kMaxElements / sizes[d] || strides[d] > kMaxSpan / sizes[d])
      return false;
    elements *= sizes[d];
    last += (sizes[d] - 1) * strides[d];
  }
  if (last >= kMaxSpan)
    return false;
  std::vector<bool> taken(last + 1, false);
  SmallVector<int64_t> index(order.size(), 0);
  for (int64_t n = 0, offset = 0; n < elements; ++n) {
    if (taken[offset])
      return false;
    taken[offset] = true;
    for (size_t k = 0; k < order.size(); ++k) { // the next index, the last dimension fastest
      int64_t d = order[order.size() - 1 - k];
      if (++index[order.size() - 1 - k] < sizes[d]) {
        offset += strides[d];
        break;
      }
      offset -= (sizes[d] - 1) * strides[d];
      index[order.size() - 1 - k] = 0;
    }
  }
  return true;
}

ArrayAttr tgc::frontend::outputLayoutsAttr(Builder &builder,
                                           ArrayRef<std::pair<int64_t, TensorMeta>> outputs) {
  SmallVector<Attribute> layouts;
  for (const auto &[index, meta] : outputs) {
    if (meta.strides.empty() ||
        llvm::equal(meta.strides, TensorMeta::contiguousStrides(meta.sizes, builder.getContext())))
      continue;
    SmallVector<int64_t> sizes, strides;
    for (auto [size, stride] : llvm::zip(meta.sizes, meta.strides)) {
      std::optional<int64_t> n = getConstantSize(size), s = getConstantSize(stride);
      if (!n || !s)
        break;
      sizes.push_back(*n);
      strides.push_back(*s);
    }
    if (strides.size() != meta.strides.size())
      continue; // a symbolic layout stays row-major
    if (!placesElementsApart(sizes, strides))
      continue;
    layouts.push_back(builder.getDictionaryAttr(
        {builder.getNamedAttr("output", builder.getI64IntegerAttr(index)),
         builder.getNamedAttr("strides", builder.getI64ArrayAttr(strides))}));
  }
  return layouts.empty() ? ArrayAttr() : builder.getArrayAttr(layouts);
}
