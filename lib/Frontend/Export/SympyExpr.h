// Parser for the sympy expressions (srepr form) that torch.export writes for symbolic sizes.
#ifndef TGC_LIB_FRONTEND_EXPORT_SYMPYEXPR_H
#define TGC_LIB_FRONTEND_EXPORT_SYMPYEXPR_H

#include "mlir/IR/AffineExpr.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

namespace tgc::pt2 {

/// Parses `text`, a `sympy.srepr` string such as
/// `Mul(Integer(8), Symbol('s77', positive=True, integer=True))`, into an affine
/// expression. Sizes in tgc types are affine expressions over the program's size
/// symbols, so only what maps onto them is accepted: `Integer`, `Symbol`, `Add`, `Mul`,
/// `Pow` with a non-negative integer exponent, and `FloorDiv`/`CleanDiv`/`Mod`/`PythonMod`
/// by a positive integer. `getSymbol` maps a symbol's name (`s77`) to the affine symbol
/// standing for it. Anything else (`Max`, `Rational`, a division by a symbol, ...) is an
/// error naming the offending part.
llvm::Expected<mlir::AffineExpr>
parseSympyExpr(llvm::StringRef text, mlir::MLIRContext *ctx,
               llvm::function_ref<mlir::AffineExpr(llvm::StringRef)> getSymbol);

} // namespace tgc::pt2

#endif // TGC_LIB_FRONTEND_EXPORT_SYMPYEXPR_H
