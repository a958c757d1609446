// Lowering of the negative log-likelihood loss and its gradient to linalg.generic over
// the targets, reading log-probabilities and class weights with tensor.extract.
#include "tgc/Conversion/TgcToLinalg.h"
#include "tgc/Dialect/ScalarBuilder.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace tgc;

namespace {

enum Reduction : int64_t { None = 0, Mean = 1, Sum = 2 };

/// The class dimension of nll_loss's `self`: 1, or 0 for a single sample [C].
int64_t classDim(Value self) { return tgcType(self).getRank() == 1 ? 0 : 1; }

/// What one element of nll_loss sees: its target class as an index clamped into
/// [0, C) (so reads stay in bounds) and whether it is ignored.
struct TargetClass {
  Value index, ignored;
};

TargetClass targetClass(OpBuilder &b, Location loc, Value target, int64_t ignoreIndex,
                        Value numClasses) {
  Value asI64 = castScalar(b, loc, target, b.getI64Type());
  Value ignore = arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(ignoreIndex));
  Value ignored = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, asI64, ignore);
  Value index = arith::IndexCastOp::create(b, loc, b.getIndexType(), asI64);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value last = arith::SubIOp::create(b, loc, numClasses, arith::ConstantIndexOp::create(b, loc, 1));
  index = arith::MaxSIOp::create(b, loc, arith::MinSIOp::create(b, loc, index, last), zero);
  return {index, ignored};
}

/// The weight of class `index` (1 without a weight tensor), 0 when `ignored`.
Value classWeight(OpBuilder &b, Location loc, Value weight, const TargetClass &cls, Type element) {
  Value w = weight ? tensor::ExtractOp::create(b, loc, weight, cls.index).getResult()
                   : scalarConstant(b, loc, element, 1);
  return arith::SelectOp::create(b, loc, cls.ignored, scalarConstant(b, loc, element, 0), w);
}

/// A 0-d tensor holding `value`.
Value scalarTensor(OpBuilder &b, Location loc, Value value) {
  return tensor::FromElementsOp::create(b, loc, RankedTensorType::get({}, value.getType()), value);
}

/// Per element: loss = -weight[t] * self[.., t, ..] (0 when ignored), accumulated into
/// the per-element output (none) or into a sum of losses and a sum of weights.
struct NllLossLowering : TgcLoweringPattern<NllLossOp> {
  using TgcLoweringPattern::TgcLoweringPattern;
  LogicalResult matchAndRewrite(NllLossOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    Value self = adaptor.getSelf(), target = adaptor.getTarget(), weight = adaptor.getWeight();
    int64_t dim = classDim(op.getSelf()), reduction = op.getReduction();
    int64_t rank = tgcType(op.getTarget()).getRank();
    RankedTensorType outputType = lowering.convertTensorType(op.getOutput().getType());
    Type element = outputType.getElementType();
    Value zero = scalarConstant(rewriter, loc, element, 0);
    Value numClasses = tensor::DimOp::create(rewriter, loc, self, dim);

    SmallVector<Value> inits;
    AffineMap identity = AffineMap::getMultiDimIdentityMap(rank, ctx);
    SmallVector<AffineMap> maps = {identity};
    SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
    if (reduction == None) {
      FailureOr<Value> init = lowering.filledTensor(rewriter, op, tgcType(op.getOutput()), zero);
      if (failed(init))
        return failure();
      inits.push_back(*init);
      maps.push_back(identity);
    } else {
      for (int i = 0; i < 2; ++i) {
        Value empty = tensor::EmptyOp::create(rewriter, loc, ArrayRef<int64_t>{}, element);
        inits.push_back(linalg::FillOp::create(rewriter, loc, zero, empty).getResult(0));
        maps.push_back(AffineMap::get(rank, 0, {}, ctx));
      }
      iterators.assign(rank, utils::IteratorType::reduction);
    }
    auto generic = linalg::GenericOp::create(
        rewriter, loc, ValueRange(inits).getTypes(), target, inits, maps, iterators,
        [&](OpBuilder &b, Location l, ValueRange args) {
          TargetClass cls = targetClass(b, l, args[0], op.getIgnoreIndex(), numClasses);
          SmallVector<Value> indices;
          for (int64_t i = 0; i < rank; ++i)
            indices.push_back(linalg::IndexOp::create(b, l, i));
          indices.insert(indices.begin() + dim, cls.index);
          Value logProb = tensor::ExtractOp::create(b, l, self, indices);
          Value w = classWeight(b, l, weight, cls, element);
          Value loss = arith::NegFOp::create(b, l, mulScalars(b, l, w, logProb));
          loss = arith::SelectOp::create(b, l, cls.ignored, scalarConstant(b, l, element, 0), loss);
          SmallVector<Value> yields = {loss};
          if (reduction != None)
            yields = {addScalars(b, l, args[1], loss), addScalars(b, l, args[2], w)};
          linalg::YieldOp::create(b, l, yields);
        });
    if (reduction == None) {
      Value empty = tensor::EmptyOp::create(rewriter, loc, ArrayRef<int64_t>{}, element);
      Value totalWeight = linalg::FillOp::create(rewriter, loc, zero, empty).getResult(0);
      rewriter.replaceOp(op, {generic.getResult(0), totalWeight});
      return success();
    }
    Value totalWeight = generic.getResult(1), output = generic.getResult(0);
    if (reduction == Mean) {
      Value sum = tensor::ExtractOp::create(rewriter, loc, output, ValueRange{});
      Value total = tensor::ExtractOp::create(rewriter, loc, totalWeight, ValueRange{});
      output = scalarTensor(rewriter, loc, arith::DivFOp::create(rewriter, loc, sum, total));
    }
    rewriter.replaceOp(op, {output, totalWeight});
    return success();
  }
};

/// A generic over `self`'s sizes: -weight[t] * g at each element's target class, 0
/// elsewhere; g is grad_output (per element for none), divided by the total weight for
/// mean.
struct NllLossBackwardLowering : TgcLoweringPattern<NllLossBackwardOp> {
  using TgcLoweringPattern::TgcLoweringPattern;
  LogicalResult matchAndRewrite(NllLossBackwardOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    BaseTensorType resultType = tgcType(op.getResult());
    int64_t dim = classDim(op.getSelf()), rank = resultType.getRank();
    int64_t reduction = op.getReduction();
    FailureOr<Value> init = lowering.emptyTensor(rewriter, op, resultType);
    if (failed(init))
      return failure();
    Type element = llvm::cast<RankedTensorType>(init->getType()).getElementType();
    Value weight = adaptor.getWeight();
    Value numClasses = tensor::DimOp::create(rewriter, loc, adaptor.getSelf(), dim);
    // The target (and a per-element grad_output) is indexed by every dimension but
    // the class dimension.
    SmallVector<AffineExpr> perElement;
    for (int64_t i = 0; i < rank; ++i)
      if (i != dim)
        perElement.push_back(getAffineDimExpr(i, ctx));
    AffineMap elementMap = AffineMap::get(rank, 0, perElement, ctx);
    AffineMap scalarMap = AffineMap::get(rank, 0, {}, ctx);
    SmallVector<AffineMap> maps = {elementMap, reduction == None ? elementMap : scalarMap,
                                   scalarMap, AffineMap::getMultiDimIdentityMap(rank, ctx)};
    auto generic = linalg::GenericOp::create(
        rewriter, loc, init->getType(),
        ValueRange{adaptor.getTarget(), adaptor.getGradOutput(), adaptor.getTotalWeight()}, *init,
        maps, SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
        [&](OpBuilder &b, Location l, ValueRange args) {
          TargetClass cls = targetClass(b, l, args[0], op.getIgnoreIndex(), numClasses);
          Value here = linalg::IndexOp::create(b, l, dim);
          Value hit = arith::AndIOp::create(
              b, l, arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, here, cls.index),
              arith::XOrIOp::create(b, l, cls.ignored, arith::ConstantIntOp::create(b, l, 1, 1)));
          Value grad = args[1];
          if (reduction == Mean)
            grad = arith::DivFOp::create(b, l, grad, args[2]);
          Value w = classWeight(b, l, weight, cls, element);
          Value value = arith::NegFOp::create(b, l, mulScalars(b, l, w, grad));
          linalg::YieldOp::create(
              b, l,
              arith::SelectOp::create(b, l, hit, value, scalarConstant(b, l, element, 0))
                  .getResult());
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }
};

} // namespace

void tgc::populateLossPatterns(const LoweringContext &lowering, RewritePatternSet &patterns) {
  patterns.add<NllLossLowering, NllLossBackwardLowering>(lowering, patterns.getContext());
}
