// torch.cond as both readers build it: the branches are converted into the regions of a
// placeholder `tgc.cond`, whose free values and free size symbols are then lifted into
// operands (liftCond).
#ifndef TGC_LIB_FRONTEND_COMMON_CONDREGIONS_H
#define TGC_LIB_FRONTEND_COMMON_CONDREGIONS_H

#include "tgc/Dialect/TgcDialect.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <optional>

namespace tgc::frontend {

/// The op in `region` that writes into storage from outside it (through views and
/// in-place results defined in it), if any: what PyTorch's torch.cond rejects as input
/// mutation.
mlir::Operation *findOutsideWrite(mlir::Region &region);

/// The type of a `tgc.cond` result whose branches give `a` and `b`: a fresh contiguous
/// tensor (every branch result is new storage); nothing when their sizes or dtypes
/// differ.
std::optional<mlir::Type> condResultType(BaseTensorType a, BaseTensorType b);

/// Makes `holder` (whose regions, each ending in a `tgc.yield`, use values from above)
/// into an isolated `tgc.cond` with `resultTypes`: every value the branches use from
/// outside becomes an input, except the sizes of symbols (`tgc.sym_size` of a dimension
/// that is exactly a symbol, `tgc.bind_symbol`), which with every other symbol the
/// branches' types mention become `sizes`, one per symbol; `materialize` computes a
/// symbol no value gives. Erases `holder`.
mlir::FailureOr<CondOp>
liftCond(mlir::OpBuilder &builder, CondOp holder, mlir::TypeRange resultTypes, mlir::Location loc,
         llvm::function_ref<mlir::FailureOr<mlir::Value>(mlir::AffineExpr)> materialize);

} // namespace tgc::frontend

#endif // TGC_LIB_FRONTEND_COMMON_CONDREGIONS_H
