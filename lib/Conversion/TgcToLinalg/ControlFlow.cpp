// Lowering of tgc.cond to scf.if: the branch whose predicate holds runs, the other not.
#include "tgc/Conversion/TgcToLinalg.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace tgc;

namespace {

/// `bool(pred)` of the predicate's one element, as Python computes it (NaN is true).
Value truthOf(OpBuilder &b, Location loc, Value element) {
  Type type = element.getType();
  if (type.isInteger(1))
    return element;
  Value zero;
  if (auto f = llvm::dyn_cast<FloatType>(type)) {
    zero = arith::ConstantOp::create(b, loc, b.getFloatAttr(f, 0.0));
    return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE, element, zero);
  }
  zero = arith::ConstantOp::create(b, loc, b.getIntegerAttr(type, 0));
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, element, zero);
}

/// The regions are inlined into the scf.if; their arguments become the cond's operands
/// again (the isolation was for the passes before lowering), and the size symbols they
/// use are bound by the function's arguments like every other size.
struct CondLowering : TgcLoweringPattern<CondOp> {
  using TgcLoweringPattern::TgcLoweringPattern;
  LogicalResult matchAndRewrite(CondOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    SmallVector<Type> resultTypes;
    for (Type type : op.getResultTypes()) {
      RankedTensorType converted = lowering.convertTensorType(type);
      if (!converted)
        return rewriter.notifyMatchFailure(op, "result type not converted");
      resultTypes.push_back(converted);
    }
    auto predType = llvm::dyn_cast<RankedTensorType>(adaptor.getPred().getType());
    if (!predType)
      return rewriter.notifyMatchFailure(op, "predicate not converted yet");
    SmallVector<Value> zeros(predType.getRank(), arith::ConstantIndexOp::create(rewriter, loc, 0));
    Value element = tensor::ExtractOp::create(rewriter, loc, adaptor.getPred(), zeros);
    auto ifOp = scf::IfOp::create(rewriter, loc, resultTypes, truthOf(rewriter, loc, element),
                                  /*addThenBlock=*/false, /*addElseBlock=*/false);
    SmallVector<Value> arguments(op.getInputs());
    llvm::append_range(arguments, op.getSizes());
    for (unsigned index = 0; index < 2; ++index) {
      Region &target = ifOp->getRegion(index);
      Block *block = rewriter.createBlock(&target);
      rewriter.mergeBlocks(&op->getRegion(index).front(), block, arguments);
    }
    rewriter.replaceOp(op, ifOp.getResults());
    return success();
  }
};

struct YieldLowering : TgcLoweringPattern<YieldOp> {
  using TgcLoweringPattern::TgcLoweringPattern;
  LogicalResult matchAndRewrite(YieldOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<scf::YieldOp>(op, adaptor.getValues());
    return success();
  }
};

} // namespace

void tgc::populateControlFlowPatterns(const LoweringContext &lowering,
                                      RewritePatternSet &patterns) {
  patterns.add<CondLowering, YieldLowering>(lowering, patterns.getContext());
}
