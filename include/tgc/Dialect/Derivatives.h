// Derivative formulas of tgc ops (DifferentiableOpInterface external models).
#ifndef TGC_DIALECT_DERIVATIVES_H
#define TGC_DIALECT_DERIVATIVES_H

namespace mlir {
class MLIRContext;
} // namespace mlir

namespace tgc {

/// Attaches the DifferentiableOpInterface models of every differentiable tgc op;
/// called when the dialect is loaded.
void attachDerivatives(mlir::MLIRContext *ctx);

} // namespace tgc

#endif // TGC_DIALECT_DERIVATIVES_H
