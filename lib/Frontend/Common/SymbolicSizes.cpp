// Symbolic sizes as SSA values.
#include "SymbolicSizes.h"

#include "tgc/Dialect/TgcDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

using namespace mlir;
using namespace tgc;

FailureOr<Value>
tgc::frontend::materializeSize(OpBuilder &builder, Location loc, AffineExpr size,
                               llvm::function_ref<Value(unsigned)> unbacked,
                               llvm::function_ref<InFlightDiagnostic()> emitError) {
  if (auto constant = llvm::dyn_cast<AffineConstantExpr>(size))
    return arith::ConstantOp::create(builder, loc, builder.getI64IntegerAttr(constant.getValue()))
        .getResult();
  if (auto symbol = llvm::dyn_cast<AffineSymbolExpr>(size)) {
    if (unbacked)
      if (Value value = unbacked(symbol.getPosition()))
        return value;
    Block *block = builder.getInsertionBlock();
    auto func = block ? block->getParent()->getParentOfType<func::FuncOp>() : func::FuncOp();
    if (!func)
      return emitError() << "symbolic size outside a function";
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToStart(&func.getBody().front());
    for (BlockArgument arg : func.getArguments()) {
      auto type = llvm::dyn_cast<BaseTensorType>(arg.getType());
      if (!type)
        continue;
      for (auto [dim, argSize] : llvm::enumerate(type.getSizes()))
        if (argSize == size)
          return SymSizeOp::create(builder, loc, arg, static_cast<int64_t>(dim)).getResult();
    }
    return emitError() << "no graph input has the symbolic size s" << symbol.getPosition();
  }
  auto binary = llvm::cast<AffineBinaryOpExpr>(size);
  FailureOr<Value> lhs = materializeSize(builder, loc, binary.getLHS(), unbacked, emitError);
  FailureOr<Value> rhs = failed(lhs)
                             ? FailureOr<Value>(failure())
                             : materializeSize(builder, loc, binary.getRHS(), unbacked, emitError);
  if (failed(rhs))
    return failure();
  switch (binary.getKind()) {
  case AffineExprKind::Add:
    return arith::AddIOp::create(builder, loc, *lhs, *rhs).getResult();
  case AffineExprKind::Mul:
    return arith::MulIOp::create(builder, loc, *lhs, *rhs).getResult();
  case AffineExprKind::FloorDiv:
    return arith::FloorDivSIOp::create(builder, loc, *lhs, *rhs).getResult();
  case AffineExprKind::CeilDiv:
    return arith::CeilDivSIOp::create(builder, loc, *lhs, *rhs).getResult();
  case AffineExprKind::Mod: {
    // Python's %: the result has the divisor's sign (sizes are non-negative anyway).
    Value rem = arith::RemSIOp::create(builder, loc, *lhs, *rhs);
    Value shifted = arith::AddIOp::create(builder, loc, rem, *rhs);
    return arith::RemSIOp::create(builder, loc, shifted, *rhs).getResult();
  }
  default:
    return emitError() << "cannot compute this symbolic size";
  }
}
