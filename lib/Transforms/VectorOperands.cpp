#include "VectorOperands.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;

std::optional<unsigned> tgc::memoryElementBits(Type type) {
  if (type.isF32() || type.isF64())
    return type.getIntOrFloatBitWidth();
  if (auto integer = dyn_cast<IntegerType>(type))
    if (llvm::is_contained({8u, 16u, 32u, 64u}, integer.getWidth()))
      return integer.getWidth();
  return std::nullopt;
}

std::optional<tgc::InnerAccess> tgc::innerAccess(linalg::GenericOp op, OpOperand &operand,
                                                 unsigned inner) {
  auto type = dyn_cast<MemRefType>(operand.get().getType());
  if (!type || !memoryElementBits(type.getElementType()))
    return std::nullopt;
  AffineMap map = op.getMatchingIndexingMap(&operand);
  if (!map.isProjectedPermutation(/*allowZeroInResults=*/true))
    return std::nullopt;
  if (!map.isFunctionOfDim(inner))
    return InnerAccess::Broadcast;
  if (map.getResults().back() != getAffineDimExpr(inner, op.getContext()))
    return std::nullopt;
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset)) || strides.back() != 1)
    return std::nullopt;
  return InnerAccess::Contiguous;
}

bool tgc::hasVectorBody(linalg::GenericOp op) {
  auto isBodyType = [](Type type) {
    return type.isIndex() || type.isInteger(1) || memoryElementBits(type).has_value();
  };
  for (Operation &bodyOp : op.getBody()->getOperations()) {
    Dialect *dialect = bodyOp.getDialect();
    bool allowed = isa<linalg::YieldOp, linalg::IndexOp>(bodyOp) ||
                   (dialect && isa<arith::ArithDialect, math::MathDialect>(dialect));
    if (!allowed || bodyOp.getNumRegions() != 0 ||
        !llvm::all_of(bodyOp.getResultTypes(), isBodyType))
      return false;
  }
  return true;
}
