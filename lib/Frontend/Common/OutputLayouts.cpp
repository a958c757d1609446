// Output layouts (OutputLayouts.h).
#include "OutputLayouts.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace tgc;

ArrayAttr tgc::frontend::outputLayoutsAttr(Builder &builder,
                                           ArrayRef<std::pair<int64_t, TensorMeta>> outputs) {
  SmallVector<Attribute> layouts;
  for (const auto &[index, meta] : outputs) {
    if (meta.strides.empty() ||
        llvm::equal(meta.strides, TensorMeta::contiguousStrides(meta.sizes, builder.getContext())))
      continue;
    SmallVector<int64_t> strides;
    for (AffineExpr stride : meta.strides)
      if (std::optional<int64_t> c = getConstantSize(stride))
        strides.push_back(*c);
    if (strides.size() != meta.strides.size())
      continue; // a symbolic layout stays row-major
    // Layouts whose elements each have their own place (torch.empty_strided makes
    // them): each dimension of size above 1, from the smallest stride, at or past the
    // extent of the ones before it. Dense layouts (a transpose, channels-last) are such,
    // and so are views with gaps (a slice, a step); a broadcast (stride 0) is not, and
    // comes back row-major. Without elements, any layout will do.
    SmallVector<int64_t> order;
    bool empty = false;
    for (auto [d, size] : llvm::enumerate(meta.sizes)) {
      std::optional<int64_t> n = getConstantSize(size);
      empty |= n == 0;
      if (n != std::optional<int64_t>(1))
        order.push_back(d);
    }
    llvm::stable_sort(order, [&](int64_t a, int64_t b) { return strides[a] < strides[b]; });
    int64_t extent = 1;
    bool separate = true;
    for (int64_t d : order) {
      std::optional<int64_t> size = getConstantSize(meta.sizes[d]);
      separate &= size && strides[d] >= extent;
      if (separate)
        extent = strides[d] * *size;
    }
    if (!separate && !empty)
      continue;
    layouts.push_back(builder.getDictionaryAttr(
        {builder.getNamedAttr("output", builder.getI64IntegerAttr(index)),
         builder.getNamedAttr("strides", builder.getI64ArrayAttr(strides))}));
  }
  return layouts.empty() ? ArrayAttr() : builder.getArrayAttr(layouts);
}
