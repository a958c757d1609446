// Lowering of elementwise tgc ops: one linalg.generic with broadcasting maps, whose body
// each op builds through ElementwiseOpInterface.
#include "tgc/Conversion/TgcToLinalg.h"
#include "tgc/Dialect/ScalarBuilder.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace tgc;

namespace {

struct ElementwiseLowering : OpInterfaceConversionPattern<ElementwiseOpInterface> {
  ElementwiseLowering(const LoweringContext &lowering, MLIRContext *ctx)
      : OpInterfaceConversionPattern(lowering.getTypeConverter(), ctx), lowering(lowering) {}

  LogicalResult matchAndRewrite(ElementwiseOpInterface op, ArrayRef<Value> operands,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    auto resultType = llvm::cast<BaseTensorType>(op->getResult(0).getType());
    FailureOr<Value> init = lowering.emptyTensor(rewriter, op, resultType);
    if (failed(init))
      return failure();
    Type resultElement = llvm::cast<RankedTensorType>(init->getType()).getElementType();
    Type computeType = op.getComputeType();
    if (auto i = llvm::dyn_cast<IntegerType>(computeType))
      computeType = IntegerType::get(ctx, i.getWidth());

    // Tensors become inputs of the generic; scalars are used from the body directly.
    SmallVector<Value> inputs;
    SmallVector<AffineMap> maps;
    SmallVector<int> inputIndex(operands.size(), -1);
    for (auto [i, operand] : llvm::enumerate(op->getOperands())) {
      auto type = llvm::dyn_cast<BaseTensorType>(operand.getType());
      if (!type)
        continue;
      inputIndex[i] = inputs.size();
      inputs.push_back(operands[i]);
      maps.push_back(broadcastMap(type.getSizes(), resultType.getSizes(), ctx));
    }
    int64_t rank = resultType.getRank();
    maps.push_back(AffineMap::getMultiDimIdentityMap(rank, ctx));
    SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
    auto generic = linalg::GenericOp::create(
        rewriter, loc, init->getType(), inputs, *init, maps, iterators,
        [&](OpBuilder &b, Location l, ValueRange blockArgs) {
          SmallVector<Value> args;
          for (auto [i, operand] : llvm::enumerate(operands)) {
            Value v = inputIndex[i] >= 0 ? blockArgs[inputIndex[i]] : operand;
            args.push_back(op.keepsOperandType(i) ? v : castScalar(b, l, v, computeType));
          }
          Value result = op.buildScalar(b, l, args, computeType);
          linalg::YieldOp::create(b, l, castScalar(b, l, result, resultElement));
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }

  const LoweringContext &lowering;
};

} // namespace

void tgc::populateElementwisePatterns(const LoweringContext &lowering,
                                      RewritePatternSet &patterns) {
  patterns.add<ElementwiseLowering>(lowering, patterns.getContext());
}
