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
    // Only dense layouts: each dimension of size above 1, from the smallest stride, at
    // the extent of the ones before it.
    SmallVector<int64_t> order;
    for (auto [d, size] : llvm::enumerate(meta.sizes))
      if (getConstantSize(size) != std::optional<int64_t>(1))
        order.push_back(d);
    llvm::stable_sort(order, [&](int64_t a, int64_t b) { return strides[a] < strides[b]; });
    int64_t expected = 1;
    bool dense = true;
    for (int64_t d : order) {
      std::optional<int64_t> size = getConstantSize(meta.sizes[d]);
      dense &= size && strides[d] == expected;
      expected *= size.value_or(0);
    }
    if (!dense)
      continue;
    layouts.push_back(builder.getDictionaryAttr(
        {builder.getNamedAttr("output", builder.getI64IntegerAttr(index)),
         builder.getNamedAttr("strides", builder.getI64ArrayAttr(strides))}));
  }
  return layouts.empty() ? ArrayAttr() : builder.getArrayAttr(layouts);
}
