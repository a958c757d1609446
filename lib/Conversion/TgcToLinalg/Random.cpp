// Lowering of random ops: a counter-based generator (Philox4x32-10) evaluated per
// element in a linalg.generic, so results do not depend on loop order.
#include "tgc/Conversion/TgcToLinalg.h"

#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <array>
#include <cmath>

using namespace mlir;
using namespace tgc;

namespace {

/// Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3"; the
/// Random123 reference): the four 32-bit words of the block for `counter` (64 bits,
/// as words c0, c1; c2 = c3 = 0) under `key` (64 bits, as k0, k1).
std::array<Value, 4> philoxBlock(OpBuilder &b, Location loc, Value counter, Value key) {
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
    // The 64-bit products as i64 multiplications (not arith.mului_extended, which the
    // LLVM conversion does not take on the 2-d vectors the vectorizer makes of a body).
    Value lo0, hi0, lo1, hi1;
    auto product = [&](uint32_t m, Value x, Value &lo, Value &hi) {
      Value wide =
          arith::MulIOp::create(b, loc, arith::ConstantOp::create(b, loc, b.getIntegerAttr(i64, m)),
                                arith::ExtUIOp::create(b, loc, i64, x));
      split(wide, lo, hi);
    };
    product(0xD2511F53, c[0], lo0, hi0);
    product(0xCD9E8D57, c[2], lo1, hi1);
    Value next[4] = {
        arith::XOrIOp::create(b, loc, arith::XOrIOp::create(b, loc, hi1, c[1]), k[0]), lo1,
        arith::XOrIOp::create(b, loc, arith::XOrIOp::create(b, loc, hi0, c[3]), k[1]), lo0};
    std::copy(std::begin(next), std::end(next), std::begin(c));
  }
  return {c[0], c[1], c[2], c[3]};
}

/// The result of random op `op` (of tgc type `resultType`): a linalg.generic whose body
/// gets each element's Philox block (counter = state[1] + offset + the row-major linear
/// index, key = state[0]) and yields the element.
FailureOr<Value>
generateFromBlocks(ConversionPatternRewriter &rewriter, const LoweringContext &lowering,
                   Operation *op, BaseTensorType resultType, Value state, Value offset,
                   llvm::function_ref<Value(OpBuilder &, Location, std::array<Value, 4>)> element) {
  Location loc = op->getLoc();
  FailureOr<Value> init = lowering.emptyTensor(rewriter, op, resultType);
  FailureOr<SmallVector<OpFoldResult>> sizes = lowering.mixedSizes(rewriter, op, resultType);
  if (failed(init) || failed(sizes))
    return failure();
  auto at = [&](int64_t i) {
    return tensor::ExtractOp::create(rewriter, loc, state,
                                     ValueRange{arith::ConstantIndexOp::create(rewriter, loc, i)});
  };
  Value seed = at(0);
  Value base = arith::AddIOp::create(rewriter, loc, at(1), offset);
  SmallVector<Value> sizeValues;
  for (OpFoldResult s : *sizes)
    sizeValues.push_back(getValueOrCreateConstantIndexOp(rewriter, loc, s));
  int64_t rank = sizes->size();
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
        linalg::YieldOp::create(b, l, element(b, l, philoxBlock(b, l, counter, seed)));
      });
  return generic.getResult(0);
}

/// The top `bits` bits of the 32-bit `word` as a float of `type` in [0, 1):
/// (word >> (32 - bits)) * 2^-bits, exact for bits up to the significand's.
Value unitFloat(OpBuilder &b, Location loc, Value word, int bits, FloatType type) {
  Value top = arith::ShRUIOp::create(
      b, loc, word, arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(32 - bits)));
  return arith::MulFOp::create(
      b, loc, arith::UIToFPOp::create(b, loc, type, top),
      arith::ConstantOp::create(b, loc, b.getFloatAttr(type, std::ldexp(1.0, -bits))));
}

/// mask[i] = u(i) < p with u(i) the top 24 bits of the block's first word as a float
/// in [0, 1).
struct RandBernoulliLowering : TgcLoweringPattern<RandBernoulliOp> {
  using TgcLoweringPattern::TgcLoweringPattern;
  LogicalResult matchAndRewrite(RandBernoulliOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    double p = op.getP().convertToDouble();
    FailureOr<Value> mask = generateFromBlocks(
        rewriter, lowering, op, tgcType(op.getResult()), adaptor.getState(), adaptor.getOffset(),
        [&](OpBuilder &b, Location l, std::array<Value, 4> words) -> Value {
          Value u = unitFloat(b, l, words[0], 24, b.getF64Type());
          return arith::CmpFOp::create(b, l, arith::CmpFPredicate::OLT, u,
                                       arith::ConstantOp::create(b, l, b.getF64FloatAttr(p)));
        });
    if (failed(mask))
      return failure();
    rewriter.replaceOp(op, *mask);
    return success();
  }
};

/// Uniform: the significand's worth of random bits as a float in [0, 1) (f64: 32 bits
/// of one word and 21 of the next). Normal: sqrt(-2 ln u1) cos(2 pi u2) with u1 in
/// (0, 1] and u2 in [0, 1) from two words, in f32 (f64 for f64), converted.
struct RandDrawLowering : TgcLoweringPattern<RandDrawOp> {
  using TgcLoweringPattern::TgcLoweringPattern;
  LogicalResult matchAndRewrite(RandDrawOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    BaseTensorType resultType = tgcType(op.getResult());
    auto dtype = llvm::cast<FloatType>(lowering.convertTensorType(resultType).getElementType());
    bool normal = op.getNormal();
    auto element = [&](OpBuilder &b, Location l, std::array<Value, 4> words) -> Value {
      FloatType compute = dtype.isF64() ? b.getF64Type() : b.getF32Type();
      Value value;
      if (normal) {
        int bits = dtype.isF64() ? 32 : 24;
        Value one = arith::ConstantOp::create(b, l, b.getFloatAttr(compute, 1.0));
        Value u1 = arith::SubFOp::create(b, l, one, unitFloat(b, l, words[0], bits, compute));
        Value u2 = unitFloat(b, l, words[1], bits, compute);
        Value radius = math::SqrtOp::create(
            b, l,
            arith::MulFOp::create(b, l,
                                  arith::ConstantOp::create(b, l, b.getFloatAttr(compute, -2.0)),
                                  math::LogOp::create(b, l, u1)));
        Value angle = arith::MulFOp::create(
            b, l, arith::ConstantOp::create(b, l, b.getFloatAttr(compute, 2 * M_PI)), u2);
        value = arith::MulFOp::create(b, l, radius, math::CosOp::create(b, l, angle));
      } else if (dtype.isF64()) {
        // (w0 * 2^21 + (w1 >> 11)) * 2^-53.
        Value high = unitFloat(b, l, words[0], 32, compute);
        Value low = unitFloat(b, l, words[1], 21, compute);
        value = arith::AddFOp::create(
            b, l, high,
            arith::MulFOp::create(
                b, l, low,
                arith::ConstantOp::create(b, l, b.getF64FloatAttr(std::ldexp(1.0, -32)))));
      } else {
        value = unitFloat(b, l, words[0], dtype.getFPMantissaWidth(), compute);
      }
      if (compute == dtype)
        return value;
      return arith::TruncFOp::create(b, l, dtype, value);
    };
    FailureOr<Value> drawn = generateFromBlocks(rewriter, lowering, op, resultType,
                                                adaptor.getState(), adaptor.getOffset(), element);
    if (failed(drawn))
      return failure();
    rewriter.replaceOp(op, *drawn);
    return success();
  }
};

} // namespace

void tgc::populateRandomPatterns(const LoweringContext &lowering, RewritePatternSet &patterns) {
  patterns.add<RandBernoulliLowering, RandDrawLowering>(lowering, patterns.getContext());
}
