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
    for (auto [size, stride] : llvm::zip(meta.sizes, meta.strides)) {
      std::optional<int64_t> s = getConstantSize(stride);
      if (!getConstantSize(size) || !s)
        break;
      strides.push_back(*s);
    }
    if (strides.size() != meta.strides.size())
      continue; // a symbolic layout stays row-major
    // The runtime copies the row-major values into storage of this layout (docs/abi.md).
    // Places that several elements share (a broadcast, overlapping windows) are one
    // element of the view's base in eager, so they receive equal values.
    if (llvm::any_of(strides, [](int64_t stride) { return stride < 0; }))
      continue;
    layouts.push_back(builder.getDictionaryAttr(
        {builder.getNamedAttr("output", builder.getI64IntegerAttr(index)),
         builder.getNamedAttr("strides", builder.getI64ArrayAttr(strides))}));
  }
  return layouts.empty() ? ArrayAttr() : builder.getArrayAttr(layouts);
}
