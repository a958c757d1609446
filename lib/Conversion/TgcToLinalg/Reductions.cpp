// Lowering of reductions (sum, amax, amin) to linalg.reduce, and of cumsum.
#include "tgc/Conversion/TgcToLinalg.h"
#include "tgc/Dialect/ScalarBuilder.h"

#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <limits>

#include <type_traits>

using namespace mlir;
using namespace tgc;

namespace {

enum class Combiner { Sum, Max, Min, Or, And, Mul };

/// The identity of `combiner` in `type`.
Value identity(OpBuilder &b, Location loc, Type type, Combiner combiner) {
  if (combiner == Combiner::Sum || combiner == Combiner::Or)
    return scalarConstant(b, loc, type, 0);
  if (combiner == Combiner::And || combiner == Combiner::Mul)
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
  case Combiner::Mul:
    return mulScalars(b, loc, x, acc);
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
        if (rank > 0) // a 0-d tensor's dimension 0 or -1
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
    if ((combiner == Combiner::Sum || combiner == Combiner::Mul) && isa<FloatType>(element) &&
        !element.isF64())
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

/// The reduced dimension of max.dim/min.dim (always one) and argmax/argmin (none: all).
template <typename OpTy> std::optional<int64_t> extremumDim(OpTy op) {
  if constexpr (std::is_same_v<OpTy, MaxDimOp> || std::is_same_v<OpTy, MinDimOp>)
    return op.getDim();
  else
    return op.getDim() ? std::optional<int64_t>(*op.getDim()) : std::nullopt;
}

/// max.dim, min.dim, argmax, argmin: one linalg.generic over the input whose reduction
/// carries the extremum and the index of its first occurrence (linear over the reduced
/// dimensions). The choice does not depend on the visiting order: a NaN beats any
/// number, and equal values (or NaNs) go to the lower index, as ATen's kernels choose.
template <typename OpTy> struct ExtremumLowering : TgcLoweringPattern<OpTy> {
  using TgcLoweringPattern<OpTy>::TgcLoweringPattern;
  LogicalResult matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    auto inputType = llvm::cast<BaseTensorType>(op.getSelf().getType());
    int64_t rank = inputType.getRank();
    std::optional<int64_t> dim = extremumDim(op);
    if (dim)
      dim = *normalizeDim(*dim, std::max<int64_t>(rank, 1));
    SmallVector<bool> reduced(rank, !dim);
    if (dim && rank > 0)
      reduced[*dim] = true;
    auto indexType = llvm::cast<BaseTensorType>(op->getResults().back().getType());
    TensorMeta keptIdx = indexType.getMeta();
    keptIdx.sizes.clear();
    SmallVector<AffineExpr> outExprs;
    SmallVector<utils::IteratorType> iterators;
    for (int64_t i = 0; i < rank; ++i) {
      iterators.push_back(reduced[i] ? utils::IteratorType::reduction
                                     : utils::IteratorType::parallel);
      if (!reduced[i]) {
        keptIdx.sizes.push_back(inputType.getSizes()[i]);
        outExprs.push_back(getAffineDimExpr(i, ctx));
      }
    }
    TensorMeta keptVal = keptIdx;
    keptVal.dtype = inputType.getDtype();
    Value input = adaptor.getSelf();
    Type element = llvm::cast<RankedTensorType>(input.getType()).getElementType();
    Type i64 = rewriter.getI64Type();
    FailureOr<Value> initV = this->lowering.filledTensor(
        rewriter, op, indexType.withMeta(keptVal),
        identity(rewriter, loc, element, OpTy::isMax ? Combiner::Max : Combiner::Min));
    FailureOr<Value> initI = this->lowering.filledTensor(
        rewriter, op, indexType.withMeta(keptIdx),
        arith::ConstantOp::create(rewriter, loc,
                                  rewriter.getI64IntegerAttr(std::numeric_limits<int64_t>::max())));
    if (failed(initV) || failed(initI))
      return failure();
    // Row-major strides of the reduced dimensions, for the linear index.
    SmallVector<std::pair<int64_t, Value>> strides;
    Value stride = arith::ConstantIndexOp::create(rewriter, loc, 1);
    for (int64_t i = rank - 1; i >= 0; --i) {
      if (!reduced[i])
        continue;
      strides.push_back({i, stride});
      Value size = tensor::DimOp::create(rewriter, loc, input, i);
      stride = arith::MulIOp::create(rewriter, loc, stride, size);
    }
    AffineMap inMap = AffineMap::getMultiDimIdentityMap(rank, ctx);
    AffineMap outMap = AffineMap::get(rank, 0, outExprs, ctx);
    bool isFloat = llvm::isa<FloatType>(element), isBool = element.isInteger(1);
    auto generic = linalg::GenericOp::create(
        rewriter, loc, TypeRange{(*initV).getType(), (*initI).getType()}, ValueRange{input},
        ValueRange{*initV, *initI}, ArrayRef<AffineMap>{inMap, outMap, outMap}, iterators,
        [&](OpBuilder &b, Location l, ValueRange args) {
          Value x = args[0], accV = args[1], accI = args[2];
          Value linear = arith::ConstantIndexOp::create(b, l, 0);
          for (auto [d, st] : strides)
            linear = arith::AddIOp::create(
                b, l, linear, arith::MulIOp::create(b, l, linalg::IndexOp::create(b, l, d), st));
          Value index = arith::IndexCastOp::create(b, l, i64, linear);
          Value earlier = arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, index, accI);
          Value take;
          if (isFloat) {
            auto cmp = [&](arith::CmpFPredicate p, Value u, Value v) {
              return arith::CmpFOp::create(b, l, p, u, v).getResult();
            };
            Value better =
                cmp(OpTy::isMax ? arith::CmpFPredicate::OGT : arith::CmpFPredicate::OLT, x, accV);
            Value tie =
                arith::AndIOp::create(b, l, cmp(arith::CmpFPredicate::OEQ, x, accV), earlier);
            Value xNan = cmp(arith::CmpFPredicate::UNO, x, x);
            Value accNan = cmp(arith::CmpFPredicate::UNO, accV, accV);
            Value nanWins = arith::AndIOp::create(
                b, l, xNan,
                arith::OrIOp::create(
                    b, l,
                    arith::XOrIOp::create(b, l, accNan,
                                          arith::ConstantOp::create(b, l, b.getBoolAttr(true))),
                    earlier));
            take = arith::OrIOp::create(b, l, nanWins, arith::OrIOp::create(b, l, better, tie));
          } else {
            auto gt = isBool ? arith::CmpIPredicate::ugt : arith::CmpIPredicate::sgt;
            auto lt = isBool ? arith::CmpIPredicate::ult : arith::CmpIPredicate::slt;
            Value better = arith::CmpIOp::create(b, l, OpTy::isMax ? gt : lt, x, accV);
            Value tie = arith::AndIOp::create(
                b, l, arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, x, accV), earlier);
            take = arith::OrIOp::create(b, l, better, tie);
          }
          linalg::YieldOp::create(b, l,
                                  ValueRange{arith::SelectOp::create(b, l, take, x, accV),
                                             arith::SelectOp::create(b, l, take, index, accI)});
        });
    SmallVector<Value> results;
    for (Value r : generic.getResults())
      results.push_back(r);
    if (op->getNumResults() == 1)
      results.erase(results.begin());
    if (op.getKeepdim())
      for (auto [r, type] : llvm::zip(results, op->getResultTypes())) {
        FailureOr<Value> reshaped =
            this->lowering.reshapeTo(rewriter, op, r, llvm::cast<BaseTensorType>(type));
        if (failed(reshaped))
          return failure();
        r = *reshaped;
      }
    rewriter.replaceOp(op, results);
    return success();
  }
};

/// cumsum (cumprod) as an scf.for over `dim` that carries the result and the running
/// sum (product): a slice of size 1 along `dim`, in f64 for floats as ATen's CPU kernel
/// accumulates. Each step combines a slice of the input into the running value and
/// inserts it into the result.
template <typename OpTy, bool isProduct> struct ScanLowering : TgcLoweringPattern<OpTy> {
  using TgcLoweringPattern<OpTy>::TgcLoweringPattern;
  using TgcLoweringPattern<OpTy>::lowering;
  LogicalResult matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
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
    Value running =
        linalg::FillOp::create(
            rewriter, loc, scalarConstant(rewriter, loc, accumulator, isProduct ? 1 : 0),
            ValueRange{tensor::EmptyOp::create(rewriter, loc, sliceSizes, accumulator)})
            .getResult(0);
    Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
    Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
    Value count = getValueOrCreateConstantIndexOp(rewriter, loc, sizes[dim]);
    auto identity = AffineMap::getMultiDimIdentityMap(rank, rewriter.getContext());
    SmallVector<utils::IteratorType> parallel(rank, utils::IteratorType::parallel);
    bool reverse = false;
    if constexpr (std::is_same_v<OpTy, CumsumOp>)
      reverse = op.getReverse();
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
              linalg::GenericOp::create(b, l, carried[1].getType(), slice, carried[1],
                                        {identity, identity}, parallel,
                                        [&](OpBuilder &nb, Location nl, ValueRange args) {
                                          Value x = castScalar(nb, nl, args[0], accumulator);
                                          Value combined;
                                          if (!isProduct)
                                            combined = addScalars(nb, nl, x, args[1]);
                                          else if (isa<FloatType>(accumulator))
                                            combined = arith::MulFOp::create(nb, nl, x, args[1]);
                                          else
                                            combined = arith::MulIOp::create(nb, nl, x, args[1]);
                                          linalg::YieldOp::create(nb, nl, combined);
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
               ReductionLowering<AllOp, Combiner::And>, ReductionLowering<ProdOp, Combiner::Mul>,
               ExtremumLowering<MaxDimOp>, ExtremumLowering<MinDimOp>, ExtremumLowering<ArgmaxOp>,
               ExtremumLowering<ArgminOp>, ScanLowering<CumsumOp, false>,
               ScanLowering<CumprodOp, true>>(lowering, patterns.getContext());
}
