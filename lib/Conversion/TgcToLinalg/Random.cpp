// Lowering of random ops: a counter-based generator (Philox4x32-10) evaluated per
// element in a linalg.generic, so results do not depend on loop order.
#include "tgc/Conversion/TgcToLinalg.h"

#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace tgc;

namespace {

/// Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3"; the
/// Random123 reference): the first 32-bit word of the block for `counter` (64 bits,
/// as words c0, c1; c2 = c3 = 0) under `key` (64 bits, as k0, k1).
Value philoxFirstWord(OpBuilder &b, Location loc, Value counter, Value key) {
  Type i32 = b.getI32Type(), i64 = b.getI64Type();
  auto word = [&](uint32_t v) {
    return arith::ConstantOp::create(b, loc, b.getIntegerAttr(i32, v)).getResult();
  };
  auto split = [&](Value v, Value &lo, Value &hi) {
    lo = arith::TruncIOp::create(b, loc, i32, v);
    Value shifted = arith::ShRUIOp::create(
        b, loc, v, arith::ConstantOp::create(b, loc, b.getIntegerAttr(i64, 32)));
    hi = arith::TruncIOp::create(b, loc, i32, shifted);
  };
  Value c[4], k[2];
  split(counter, c[0], c[1]);
  c[2] = c[3] = word(0);
  split(key, k[0], k[1]);
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      k[0] = arith::AddIOp::create(b, loc, k[0], word(0x9E3779B9));
      k[1] = arith::AddIOp::create(b, loc, k[1], word(0xBB67AE85));
    }
    auto p0 = arith::MulUIExtendedOp::create(b, loc, word(0xD2511F53), c[0]);
    auto p1 = arith::MulUIExtendedOp::create(b, loc, word(0xCD9E8D57), c[2]);
    Value next[4] = {
        arith::XOrIOp::create(b, loc, arith::XOrIOp::create(b, loc, p1.getHigh(), c[1]), k[0]),
        p1.getLow(),
        arith::XOrIOp::create(b, loc, arith::XOrIOp::create(b, loc, p0.getHigh(), c[3]), k[1]),
        p0.getLow()};
    std::copy(std::begin(next), std::end(next), std::begin(c));
  }
  return c[0];
}

/// mask[i] = u(i) < p with u(i) = (philox(offset_base + i) >> 8) * 2^-24 in [0, 1),
/// i the row-major linear index, offset_base = state[1] + offset, key = state[0].
struct RandBernoulliLowering : TgcLoweringPattern<RandBernoulliOp> {
  using TgcLoweringPattern::TgcLoweringPattern;
  LogicalResult matchAndRewrite(RandBernoulliOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    BaseTensorType resultType = tgcType(op.getResult());
    FailureOr<Value> init = lowering.emptyTensor(rewriter, op, resultType);
    FailureOr<SmallVector<OpFoldResult>> sizes = lowering.mixedSizes(rewriter, op, resultType);
    if (failed(init) || failed(sizes))
      return failure();
    Value state = adaptor.getState();
    auto at = [&](int64_t i) {
      return tensor::ExtractOp::create(
          rewriter, loc, state, ValueRange{arith::ConstantIndexOp::create(rewriter, loc, i)});
    };
    Value seed = at(0);
    Value base = arith::AddIOp::create(rewriter, loc, at(1), adaptor.getOffset());
    SmallVector<Value> sizeValues;
    for (OpFoldResult s : *sizes)
      sizeValues.push_back(getValueOrCreateConstantIndexOp(rewriter, loc, s));
    int64_t rank = resultType.getRank();
    double p = op.getP().convertToDouble();
    auto generic = linalg::GenericOp::create(
        rewriter, loc, init->getType(), ValueRange{}, *init,
        AffineMap::getMultiDimIdentityMap(rank, rewriter.getContext()),
        SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
        [&](OpBuilder &b, Location l, ValueRange) {
          Value linear = arith::ConstantIndexOp::create(b, l, 0);
          for (int64_t i = 0; i < rank; ++i)
            linear = arith::AddIOp::create(b, l, arith::MulIOp::create(b, l, linear, sizeValues[i]),
                                           linalg::IndexOp::create(b, l, i));
          Value counter = arith::AddIOp::create(
              b, l, base, arith::IndexCastOp::create(b, l, b.getI64Type(), linear));
          Value bits = philoxFirstWord(b, l, counter, seed);
          Value top24 = arith::ShRUIOp::create(
              b, l, bits, arith::ConstantOp::create(b, l, b.getI32IntegerAttr(8)));
          Value u = arith::MulFOp::create(
              b, l, arith::UIToFPOp::create(b, l, b.getF64Type(), top24),
              arith::ConstantOp::create(b, l, b.getF64FloatAttr(1.0 / (1 << 24))));
          Value keep = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OLT, u,
                                             arith::ConstantOp::create(b, l, b.getF64FloatAttr(p)));
          linalg::YieldOp::create(b, l, keep);
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }
};

} // namespace

void tgc::populateRandomPatterns(const LoweringContext &lowering, RewritePatternSet &patterns) {
  patterns.add<RandBernoulliLowering>(lowering, patterns.getContext());
}
