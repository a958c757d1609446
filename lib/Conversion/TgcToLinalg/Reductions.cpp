// Lowering of reductions (sum, amax, amin) to linalg.reduce.
#include "tgc/Conversion/TgcToLinalg.h"
#include "tgc/Dialect/ScalarBuilder.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"

#include <limits>

using namespace mlir;
using namespace tgc;

namespace {

enum class Combiner { Sum, Max, Min, Or, And };

/// The identity of `combiner` in `type`.
Value identity(OpBuilder &b, Location loc, Type type, Combiner combiner) {
  if (combiner == Combiner::Sum || combiner == Combiner::Or)
    return scalarConstant(b, loc, type, 0);
  if (combiner == Combiner::And)
    return scalarConstant(b, loc, type, 1);
  bool max = combiner == Combiner::Max;
  if (auto f = llvm::dyn_cast<FloatType>(type))
    return arith::ConstantOp::create(
        b, loc,
        b.getFloatAttr(f, max ? -std::numeric_limits<double>::infinity()
                              : std::numeric_limits<double>::infinity()));
  unsigned width = type.getIntOrFloatBitWidth();
  APInt value = max ? APInt::getSignedMinValue(width) : APInt::getSignedMaxValue(width);
  if (width == 1)
    value = APInt(1, max ? 0 : 1);
  return arith::ConstantOp::create(b, loc, b.getIntegerAttr(type, value));
}

Value combine(OpBuilder &b, Location loc, Value x, Value acc, Combiner combiner) {
  switch (combiner) {
  case Combiner::Sum:
    return addScalars(b, loc, x, acc);
  case Combiner::Max:
    return maxScalars(b, loc, x, acc);
  case Combiner::Min:
    return minScalars(b, loc, x, acc);
  case Combiner::Or:
    return arith::OrIOp::create(b, loc, x, acc);
  case Combiner::And:
    return arith::AndIOp::create(b, loc, x, acc);
  }
  llvm_unreachable("unknown combiner");
}

template <typename OpTy, Combiner combiner> struct ReductionLowering : TgcLoweringPattern<OpTy> {
  using TgcLoweringPattern<OpTy>::TgcLoweringPattern;
  LogicalResult matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto inputType = llvm::cast<BaseTensorType>(op.getSelf().getType());
    auto resultType = llvm::cast<BaseTensorType>(op.getType());
    int64_t rank = inputType.getRank();
    SmallVector<bool> reduced(rank, !op.getDimAttr() || op.getDimAttr().empty());
    if (op.getDimAttr())
      for (int64_t d : op.getDimAttr().asArrayRef())
        reduced[*normalizeDim(d, rank)] = true;
    SmallVector<int64_t> dims;
    TensorMeta kept = resultType.getMeta();
    kept.sizes.clear();
    for (int64_t i = 0; i < rank; ++i) {
      if (reduced[i])
        dims.push_back(i);
      else
        kept.sizes.push_back(inputType.getSizes()[i]);
    }
    BaseTensorType keptType = resultType.withMeta(kept);
    Value input = adaptor.getSelf();
    Type element = this->lowering.convertTensorType(resultType).getElementType();
    if (llvm::cast<RankedTensorType>(input.getType()).getElementType() != element) {
      FailureOr<Value> cast =
          broadcastTo(rewriter, this->lowering, op, input, inputType, inputType, element);
      if (failed(cast))
        return failure();
      input = *cast;
    }
    // A float sum accumulates in f64 and rounds once at the end: a sequential f32 sum of
    // many elements loses digits that eager's pairwise sums keep.
    Type accumulator = element;
    if (combiner == Combiner::Sum && isa<FloatType>(element) && !element.isF64())
      accumulator = rewriter.getF64Type();
    TensorMeta accMeta = kept;
    accMeta.dtype = accumulator;
    FailureOr<Value> init = this->lowering.filledTensor(
        rewriter, op, resultType.withMeta(accMeta), identity(rewriter, loc, accumulator, combiner));
    if (failed(init))
      return failure();
    auto reduce = linalg::ReduceOp::create(
        rewriter, loc, input, *init, dims, [&](OpBuilder &b, Location l, ValueRange args) {
          Value x = castScalar(b, l, args[0], accumulator);
          linalg::YieldOp::create(b, l, combine(b, l, x, args[1], combiner));
        });
    Value result = reduce.getResult(0);
    if (accumulator != element) {
      FailureOr<Value> rounded = broadcastTo(rewriter, this->lowering, op, result,
                                             resultType.withMeta(accMeta), keptType, element);
      if (failed(rounded))
        return failure();
      result = *rounded;
    }
    if (op.getKeepdim()) {
      FailureOr<Value> reshaped = this->lowering.reshapeTo(rewriter, op, result, resultType);
      if (failed(reshaped))
        return failure();
      result = *reshaped;
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void tgc::populateReductionPatterns(const LoweringContext &lowering, RewritePatternSet &patterns) {
  patterns.add<ReductionLowering<SumOp, Combiner::Sum>, ReductionLowering<AmaxOp, Combiner::Max>,
               ReductionLowering<AminOp, Combiner::Min>, ReductionLowering<AnyOp, Combiner::Or>,
               ReductionLowering<AllOp, Combiner::And>>(lowering, patterns.getContext());
}
