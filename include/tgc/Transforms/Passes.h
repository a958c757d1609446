// Passes over the tgc dialect; declarations generated from dialects/Passes.td.
#ifndef TGC_TRANSFORMS_PASSES_H
#define TGC_TRANSFORMS_PASSES_H

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Pass/Pass.h"
#include "tgc/Dialect/TgcDialect.h"

namespace tgc {

#define GEN_PASS_DECL
#include "tgc/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "tgc/Transforms/Passes.h.inc"

} // namespace tgc

#endif // TGC_TRANSFORMS_PASSES_H
