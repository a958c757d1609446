// The layouts in which tgc.load returns a program's outputs (model.json's
// `output_layouts`, docs/replay.md), as both readers record them.
#ifndef TGC_LIB_FRONTEND_COMMON_OUTPUTLAYOUTS_H
#define TGC_LIB_FRONTEND_COMMON_OUTPUTLAYOUTS_H

#include "tgc/Dialect/TensorMeta.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"

#include <utility>

namespace tgc::frontend {

/// `tgc.output_layouts` for user outputs (their index among the returned tensors, and
/// the fake-tensor metadata eager gives them): `[{output, strides}]` for each whose
/// static strides are not row-major (a TensorIterator result of transposed inputs,
/// channels-last, a view with gaps, a broadcast, overlapping windows); null when there
/// is none. A symbolic layout comes back row-major.
mlir::ArrayAttr outputLayoutsAttr(mlir::Builder &builder,
                                  llvm::ArrayRef<std::pair<int64_t, TensorMeta>> outputs);

} // namespace tgc::frontend

#endif // TGC_LIB_FRONTEND_COMMON_OUTPUTLAYOUTS_H
