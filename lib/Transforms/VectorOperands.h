// What the passes that write vector-dialect code (tgc-vectorize-kernels,
// tgc-lower-reductions) may take from a linalg.generic on memrefs: its element types,
// how its operands are read along the innermost loop, and its body.
#ifndef TGC_TRANSFORMS_VECTOROPERANDS_H
#define TGC_TRANSFORMS_VECTOROPERANDS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"

#include <optional>

namespace tgc {

/// Bits of an element of memory type `type` when vectors of it are made: f32, f64 and
/// 8- to 64-bit integers. (i1 is stored a byte per element but loaded as packed bits by
/// a vector load; narrow floats are widened by passes that take scalars only.)
std::optional<unsigned> memoryElementBits(mlir::Type type);

/// How a memref operand is read along loop `inner`.
enum class InnerAccess {
  Broadcast,  ///< not along it: one element per vector
  Contiguous, ///< as its own innermost dimension, unit stride: a vector load
};

/// How `operand` of `op` is read along loop `inner`, or nullopt when no vector may be
/// made of it: an element type other than those of memoryElementBits, a map that is not
/// a projected permutation, or a read along `inner` that is not contiguous.
std::optional<InnerAccess> innerAccess(mlir::linalg::GenericOp op, mlir::OpOperand &operand,
                                       unsigned inner);

/// Whether every op of `op`'s body may work on vectors: arith and math ops (no regions)
/// on index, i1 and memoryElementBits types, linalg.index and the yield.
bool hasVectorBody(mlir::linalg::GenericOp op);

} // namespace tgc

#endif // TGC_TRANSFORMS_VECTOROPERANDS_H
