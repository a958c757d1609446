// Symbolic sizes as SSA values: what both readers build when an int computed from sizes
// (`x.shape[1] * 2`) is an operand of an op.
#ifndef TGC_LIB_FRONTEND_COMMON_SYMBOLICSIZES_H
#define TGC_LIB_FRONTEND_COMMON_SYMBOLICSIZES_H

#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/STLFunctionalExtras.h"

namespace tgc::frontend {

/// Computes `size`, an expression of size symbols, as an i64 value at the builder's
/// insertion point. A symbol is `unbacked(symbol)` when that gives a value (a size the
/// program computed, `tgc.bind_symbol`), else a `tgc.sym_size` of the first argument of
/// the enclosing function that has it as a dimension, read at the function's entry (so
/// that inside a torch.cond branch the size is a value from outside, which the branch
/// lifts). The expression becomes arith ops, `%` with Python's sign rule.
mlir::FailureOr<mlir::Value>
materializeSize(mlir::OpBuilder &builder, mlir::Location loc, mlir::AffineExpr size,
                llvm::function_ref<mlir::Value(unsigned)> unbacked,
                llvm::function_ref<mlir::InFlightDiagnostic()> emitError);

} // namespace tgc::frontend

#endif // TGC_LIB_FRONTEND_COMMON_SYMBOLICSIZES_H
