// Lowering of tensor creation: full, arange, triangles and constants.
#include "tgc/Conversion/TgcToLinalg.h"
#include "tgc/Dialect/ScalarBuilder.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace tgc;

namespace {

/// A tensor of the op's result type filled with `value`.
LogicalResult lowerFill(ConversionPatternRewriter &rewriter, const LoweringContext &lowering,
                        Operation *op, Attribute value) {
  BaseTensorType type = tgcType(op->getResult(0));
  Type element = lowering.convertTensorType(type).getElementType();
  FailureOr<Value> result = lowering.filledTensor(
      rewriter, op, type, scalarFromAttr(rewriter, op->getLoc(), value, element, 0));
  if (failed(result))
    return failure();
  rewriter.replaceOp(op, *result);
  return success();
}

struct FullLowering : TgcLoweringPattern<FullOp> {
  using TgcLoweringPattern::TgcLoweringPattern;
  LogicalResult matchAndRewrite(FullOp op, OpAdaptor,
                                ConversionPatternRewriter &rewriter) const override {
    return lowerFill(rewriter, lowering, op, op.getFillValue());
  }
};

struct FullLikeLowering : TgcLoweringPattern<FullLikeOp> {
  using TgcLoweringPattern::TgcLoweringPattern;
  LogicalResult matchAndRewrite(FullLikeOp op, OpAdaptor,
                                ConversionPatternRewriter &rewriter) const override {
    return lowerFill(rewriter, lowering, op, op.getFillValue());
  }
};

struct ScalarTensorLowering : TgcLoweringPattern<ScalarTensorOp> {
  using TgcLoweringPattern::TgcLoweringPattern;
  LogicalResult matchAndRewrite(ScalarTensorOp op, OpAdaptor,
                                ConversionPatternRewriter &rewriter) const override {
    return lowerFill(rewriter, lowering, op, op.getS());
  }
};

struct ArangeLowering : TgcLoweringPattern<ArangeOp> {
  using TgcLoweringPattern::TgcLoweringPattern;
  LogicalResult matchAndRewrite(ArangeOp op, OpAdaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Type element = lowering.convertTensorType(op.getType()).getElementType();
    return lowerIndexGeneric(
        rewriter, lowering, op, {}, [&](OpBuilder &b, Location l, ValueRange idx, ValueRange) {
          // Computed in f64 (or i64) then converted, as ATen computes start + i * step.
          bool isFloat = llvm::isa<FloatAttr>(op.getEnd()) || // (a symbolic end is integral)
                         llvm::isa_and_nonnull<FloatAttr>(op.getStartAttr()) ||
                         llvm::isa_and_nonnull<FloatAttr>(op.getStepAttr());
          Type compute = isFloat ? Type(b.getF64Type()) : Type(b.getI64Type());
          Value i = arith::IndexCastOp::create(b, l, b.getI64Type(), idx[0]);
          Value start = scalarFromAttr(b, l, op.getStartAttr(), compute, 0);
          Value step = scalarFromAttr(b, l, op.getStepAttr(), compute, 1);
          Value v = addScalars(b, l, start, mulScalars(b, l, castScalar(b, l, i, compute), step));
          return castScalar(b, l, v, element);
        });
  }
};

template <typename OpTy, bool lower> struct TriangleLowering : TgcLoweringPattern<OpTy> {
  using TgcLoweringPattern<OpTy>::TgcLoweringPattern;
  LogicalResult matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    if (tgcType(op.getSelf()).getRank() < 2)
      return op.emitOpError("needs a tensor of rank >= 2");
    int64_t diagonal = op.getDiagonal();
    return lowerIndexGeneric(
        rewriter, this->lowering, op, adaptor.getSelf(),
        [&](OpBuilder &b, Location l, ValueRange idx, ValueRange args) {
          Value row = idx[idx.size() - 2], col = idx.back();
          // tril keeps col - row <= diagonal; triu keeps col - row >= diagonal.
          Value diff = arith::SubIOp::create(b, l, col, row);
          Value d = arith::ConstantIndexOp::create(b, l, diagonal);
          Value keep = arith::CmpIOp::create(
              b, l, lower ? arith::CmpIPredicate::sle : arith::CmpIPredicate::sge, diff, d);
          Value zero = scalarConstant(b, l, args[0].getType(), 0);
          return arith::SelectOp::create(b, l, keep, args[0], zero).getResult();
        });
  }
};

struct ConstantLowering : TgcLoweringPattern<ConstantOp> {
  using TgcLoweringPattern::TgcLoweringPattern;
  LogicalResult matchAndRewrite(ConstantOp op, OpAdaptor,
                                ConversionPatternRewriter &rewriter) const override {
    auto value = llvm::dyn_cast<TypedAttr>(op.getValue());
    if (!value)
      return op.emitOpError("constant value must be a typed elements attribute");
    rewriter.replaceOpWithNewOp<arith::ConstantOp>(op, value);
    return success();
  }
};

} // namespace

LogicalResult
tgc::lowerIndexGeneric(ConversionPatternRewriter &rewriter, const LoweringContext &lowering,
                       Operation *op, ValueRange inputs,
                       function_ref<Value(OpBuilder &, Location, ValueRange, ValueRange)> body) {
  auto resultType = tgcType(op->getResult(0));
  FailureOr<Value> init = lowering.emptyTensor(rewriter, op, resultType);
  if (failed(init))
    return failure();
  MLIRContext *ctx = rewriter.getContext();
  int64_t rank = resultType.getRank();
  SmallVector<AffineMap> maps(inputs.size() + 1, AffineMap::getMultiDimIdentityMap(rank, ctx));
  SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
  auto generic =
      linalg::GenericOp::create(rewriter, op->getLoc(), init->getType(), inputs, *init, maps,
                                iterators, [&](OpBuilder &b, Location l, ValueRange args) {
                                  SmallVector<Value> indices;
                                  for (int64_t d = 0; d < rank; ++d)
                                    indices.push_back(linalg::IndexOp::create(b, l, d));
                                  linalg::YieldOp::create(b, l, body(b, l, indices, args));
                                });
  rewriter.replaceOp(op, generic.getResult(0));
  return success();
}

void tgc::populateCreationPatterns(const LoweringContext &lowering, RewritePatternSet &patterns) {
  patterns.add<FullLowering, FullLikeLowering, ScalarTensorLowering, ArangeLowering,
               TriangleLowering<TrilOp, true>, TriangleLowering<TriuOp, false>, ConstantLowering>(
      lowering, patterns.getContext());
}
