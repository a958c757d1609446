// Lowering of reductions (sum, amax, amin) to linalg.reduce, and of cumsum.
#include "tgc/Conversion/TgcToLinalg.h"
#include "tgc/Dialect/ScalarBuilder.h"

#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

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

/// cumsum as an scf.for over `dim` that carries the result and the running sum (a
/// slice of size 1 along `dim`, in f64 for floats as ATen's CPU kernel accumulates): each
/// step adds a slice of the input to the running sum and inserts it into the result.
struct CumsumLowering : TgcLoweringPattern<CumsumOp> {
  using TgcLoweringPattern::TgcLoweringPattern;
  LogicalResult matchAndRewrite(CumsumOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto inputType = llvm::cast<BaseTensorType>(op.getSelf().getType());
    auto resultType = llvm::cast<BaseTensorType>(op.getType());
    Type element = lowering.convertTensorType(resultType).getElementType();
    Value input = adaptor.getSelf();
    int64_t rank = inputType.getRank();
    if (rank == 0) {
      FailureOr<Value> cast =
          broadcastTo(rewriter, lowering, op, input, inputType, inputType, element);
      if (failed(cast))
        return failure();
      rewriter.replaceOp(op, *cast);
      return success();
    }
    int64_t dim = *normalizeDim(op.getDim(), rank);
    Type accumulator =
        isa<FloatType>(element) && !element.isF64() ? rewriter.getF64Type() : element;
    SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(rewriter, loc, input);
    SmallVector<OpFoldResult> sliceSizes = sizes;
    sliceSizes[dim] = rewriter.getIndexAttr(1);
    Value result = tensor::EmptyOp::create(rewriter, loc, sizes, element);
    Value running = linalg::FillOp::create(
                        rewriter, loc, scalarConstant(rewriter, loc, accumulator, 0),
                        ValueRange{tensor::EmptyOp::create(rewriter, loc, sliceSizes, accumulator)})
                        .getResult(0);
    Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
    Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
    Value count = getValueOrCreateConstantIndexOp(rewriter, loc, sizes[dim]);
    auto identity = AffineMap::getMultiDimIdentityMap(rank, rewriter.getContext());
    SmallVector<utils::IteratorType> parallel(rank, utils::IteratorType::parallel);
    bool reverse = op.getReverse();
    auto loop = scf::ForOp::create(
        rewriter, loc, zero, count, one, ValueRange{result, running},
        [&](OpBuilder &b, Location l, Value step, ValueRange carried) {
          Value at = step;
          if (reverse)
            at = arith::SubIOp::create(b, l, arith::SubIOp::create(b, l, count, one), step);
          SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0));
          offsets[dim] = at;
          SmallVector<OpFoldResult> strides(rank, b.getIndexAttr(1));
          Value slice = tensor::ExtractSliceOp::create(b, l, input, offsets, sliceSizes, strides);
          Value sum =
              linalg::GenericOp::create(
                  b, l, carried[1].getType(), slice, carried[1], {identity, identity}, parallel,
                  [&](OpBuilder &nb, Location nl, ValueRange args) {
                    Value x = castScalar(nb, nl, args[0], accumulator);
                    linalg::YieldOp::create(nb, nl, addScalars(nb, nl, x, args[1]));
                  })
                  .getResult(0);
          Value out = sum;
          if (accumulator != element)
            out = linalg::GenericOp::create(
                      b, l,
                      TypeRange{RankedTensorType::get(
                          cast<RankedTensorType>(sum.getType()).getShape(), element)},
                      ValueRange{sum},
                      ValueRange{tensor::EmptyOp::create(b, l, sliceSizes, element).getResult()},
                      {identity, identity}, parallel,
                      [&](OpBuilder &nb, Location nl, ValueRange args) {
                        linalg::YieldOp::create(nb, nl, castScalar(nb, nl, args[0], element));
                      })
                      .getResult(0);
          Value inserted =
              tensor::InsertSliceOp::create(b, l, out, carried[0], offsets, sliceSizes, strides);
          scf::YieldOp::create(b, l, ValueRange{inserted, sum});
        });
    rewriter.replaceOp(op, loop.getResult(0));
    return success();
  }
};

} // namespace

void tgc::populateReductionPatterns(const LoweringContext &lowering, RewritePatternSet &patterns) {
  patterns.add<ReductionLowering<SumOp, Combiner::Sum>, ReductionLowering<AmaxOp, Combiner::Max>,
               ReductionLowering<AminOp, Combiner::Min>, ReductionLowering<AnyOp, Combiner::Or>,
               ReductionLowering<AllOp, Combiner::And>, CumsumLowering>(lowering,
                                                                        patterns.getContext());
}
