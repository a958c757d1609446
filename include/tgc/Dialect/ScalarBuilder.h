// Scalar arithmetic on arith/math values, typed like PyTorch's elementwise kernels.
#ifndef TGC_DIALECT_SCALARBUILDER_H
#define TGC_DIALECT_SCALARBUILDER_H

#include "mlir/IR/Builders.h"

namespace tgc {

/// Converts a scalar between integer, bool and float types as a PyTorch dtype
/// conversion does (bool from a number is `!= 0`; float to int truncates).
mlir::Value castScalar(mlir::OpBuilder &b, mlir::Location loc, mlir::Value v, mlir::Type to);

/// A constant of type `type` holding `value`.
mlir::Value scalarConstant(mlir::OpBuilder &b, mlir::Location loc, mlir::Type type, double value);

/// `attr` (an IntegerAttr/FloatAttr/BoolAttr) as a constant of `type`, or `dflt` when null.
mlir::Value scalarFromAttr(mlir::OpBuilder &b, mlir::Location loc, mlir::Attribute attr,
                           mlir::Type type, double dflt);

/// Arithmetic that picks the float or integer op by the operands' type.
mlir::Value addScalars(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x, mlir::Value y);
mlir::Value subScalars(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x, mlir::Value y);
mlir::Value mulScalars(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x, mlir::Value y);
mlir::Value maxScalars(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x, mlir::Value y);
mlir::Value minScalars(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x, mlir::Value y);

} // namespace tgc

#endif // TGC_DIALECT_SCALARBUILDER_H
