// tgc-expand-float8: conversions to and from float8_e4m3fn as integer arithmetic, which
// LLVM has no instructions or libcalls for (the arith-expand patterns cover bf16 only),
// and f64 -> bf16/f16 through f32 rounded to odd.
#include "tgc/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace tgc {
#define GEN_PASS_DEF_EXPANDFLOAT8PASS
#include "tgc/Transforms/Passes.h.inc"
} // namespace tgc

using namespace mlir;
using namespace tgc;

namespace {

struct I32 {
  OpBuilder &b;
  Location loc;
  Value c(uint32_t v) {
    return arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(static_cast<int32_t>(v)));
  }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value sub(Value x, Value y) { return arith::SubIOp::create(b, loc, x, y); }
  Value band(Value x, Value y) { return arith::AndIOp::create(b, loc, x, y); }
  Value bor(Value x, Value y) { return arith::OrIOp::create(b, loc, x, y); }
  Value bxor(Value x, Value y) { return arith::XOrIOp::create(b, loc, x, y); }
  Value shl(Value x, Value y) { return arith::ShLIOp::create(b, loc, x, y); }
  Value lshr(Value x, Value y) { return arith::ShRUIOp::create(b, loc, x, y); }
  Value ashr(Value x, Value y) { return arith::ShRSIOp::create(b, loc, x, y); }
  Value ult(Value x, Value y) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, x, y);
  }
  Value uge(Value x, Value y) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, x, y);
  }
  Value ugt(Value x, Value y) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt, x, y);
  }
  Value select(Value c, Value x, Value y) { return arith::SelectOp::create(b, loc, c, x, y); }
  Value bitsOf(Value f32) { return arith::BitcastOp::create(b, loc, b.getI32Type(), f32); }
  Value floatOf(Value bits) { return arith::BitcastOp::create(b, loc, b.getF32Type(), bits); }
};

/// f64 -> f32 rounding to odd: truncated toward zero, with the last bit set when that
/// was inexact. Rounding that to a narrower type (to nearest even) then rounds the f64
/// correctly; two round-to-nearest steps would not (double rounding).
Value truncToF32Odd(OpBuilder &b, Location loc, Value f64) {
  I32 i{b, loc};
  Value nearest = arith::TruncFOp::create(b, loc, b.getF32Type(), f64);
  Value back = arith::ExtFOp::create(b, loc, b.getF64Type(), nearest);
  // Ordered: NaN stays as it is.
  Value inexact = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::ONE, back, f64);
  Value awayFromZero =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, math::AbsFOp::create(b, loc, back),
                            math::AbsFOp::create(b, loc, f64));
  Value bits = i.bitsOf(nearest);
  Value towardZero = i.select(awayFromZero, i.sub(bits, i.c(1)), bits);
  return i.floatOf(i.select(inexact, i.bor(towardZero, i.c(1)), bits));
}

/// `value` (any float) as f32.
Value toF32(OpBuilder &b, Location loc, Value value) {
  auto type = llvm::cast<FloatType>(value.getType());
  if (type.isF32())
    return value;
  if (type.isF64())
    return truncToF32Odd(b, loc, value);
  if (type.getWidth() > 32)
    return arith::TruncFOp::create(b, loc, b.getF32Type(), value);
  return arith::ExtFOp::create(b, loc, b.getF32Type(), value);
}

/// `value` (f32) as `type`.
Value fromF32(OpBuilder &b, Location loc, Value value, Type type) {
  auto target = llvm::cast<FloatType>(type);
  if (target.isF32())
    return value;
  if (target.getWidth() > 32)
    return arith::ExtFOp::create(b, loc, target, value);
  return arith::TruncFOp::create(b, loc, target, value);
}

/// f32 -> float8_e4m3fn, rounding to nearest even; magnitudes from 464 up (and NaN)
/// become NaN, as c10::Float8_e4m3fn does (there is no infinity).
struct TruncToE4M3FN : OpRewritePattern<arith::TruncFOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(arith::TruncFOp op, PatternRewriter &rewriter) const override {
    if (!llvm::isa<Float8E4M3FNType>(op.getType()))
      return failure();
    Location loc = op.getLoc();
    I32 i{rewriter, loc};
    Value bits = i.bitsOf(toF32(rewriter, loc, op.getIn()));
    Value sign = i.band(bits, i.c(0x80000000u));
    Value magnitude = i.bxor(bits, sign);
    // Subnormal results: let the float adder round into the low bits.
    Value denormMagic = i.c(141u << 23);
    Value denormSum = i.bitsOf(
        arith::AddFOp::create(rewriter, loc, i.floatOf(magnitude), i.floatOf(denormMagic)));
    Value denorm = i.sub(denormSum, denormMagic);
    // Normal results: rebias the exponent and round the mantissa to 3 bits, ties to even.
    Value mantOdd = i.band(i.lshr(magnitude, i.c(20)), i.c(1));
    Value rebiased = i.add(magnitude, i.c(((uint32_t)(7 - 127) << 23) + 0x7FFFFu));
    Value normal = i.lshr(i.add(rebiased, mantOdd), i.c(20));
    Value small = i.ult(magnitude, i.c(121u << 23));
    Value value = i.select(small, denorm, normal);
    Value overflow = i.uge(magnitude, i.c(1087u << 20));
    value = i.select(overflow, i.c(0x7F), value);
    value = i.bor(i.band(value, i.c(0xFF)), i.lshr(sign, i.c(24)));
    Value byte = arith::TruncIOp::create(rewriter, loc, rewriter.getI8Type(), value);
    rewriter.replaceOpWithNewOp<arith::BitcastOp>(op, op.getType(), byte);
    return success();
  }
};

/// float8_e4m3fn -> f32 (exact), then to the result type.
struct ExtFromE4M3FN : OpRewritePattern<arith::ExtFOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(arith::ExtFOp op, PatternRewriter &rewriter) const override {
    if (!llvm::isa<Float8E4M3FNType>(op.getIn().getType()))
      return failure();
    Location loc = op.getLoc();
    I32 i{rewriter, loc};
    Value byte = arith::BitcastOp::create(rewriter, loc, rewriter.getI8Type(), op.getIn());
    Value w = i.shl(arith::ExtUIOp::create(rewriter, loc, rewriter.getI32Type(), byte), i.c(24));
    Value sign = i.band(w, i.c(0x80000000u));
    Value nonsign = i.band(w, i.c(0x7FFFFFFFu));
    // Subnormals are renormalized by shifting out the leading zeros.
    Value leading = math::CountLeadingZerosOp::create(rewriter, loc, nonsign);
    Value shift = i.select(i.ugt(leading, i.c(4)), i.sub(leading, i.c(4)), i.c(0));
    Value infNan = i.band(i.ashr(i.add(nonsign, i.c(0x01000000u)), i.c(8)), i.c(0x7F800000u));
    Value zero = i.ashr(i.sub(nonsign, i.c(1)), i.c(31));
    Value mantissa = i.lshr(i.shl(nonsign, shift), i.c(4));
    Value exponent = i.shl(i.sub(i.c(0x78), shift), i.c(23));
    Value body = i.bor(i.add(mantissa, exponent), infNan);
    Value notZero = i.bxor(zero, i.c(0xFFFFFFFFu));
    Value result = i.floatOf(i.bor(sign, i.band(body, notZero)));
    rewriter.replaceOp(op, fromF32(rewriter, loc, result, op.getType()));
    return success();
  }
};

/// f64 -> bf16 or f16: through f32 rounded to odd, then to nearest even (LLVM would call
/// __truncdfbf2, which older runtime libraries lack, and arith-expand covers f32 only).
struct TruncF64ToHalf : OpRewritePattern<arith::TruncFOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(arith::TruncFOp op, PatternRewriter &rewriter) const override {
    if (!op.getIn().getType().isF64() || !(op.getType().isBF16() || op.getType().isF16()))
      return failure();
    Value odd = truncToF32Odd(rewriter, op.getLoc(), op.getIn());
    rewriter.replaceOpWithNewOp<arith::TruncFOp>(op, op.getType(), odd);
    return success();
  }
};

struct ExpandFloat8Pass : public tgc::impl::ExpandFloat8PassBase<ExpandFloat8Pass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<TruncToE4M3FN, ExtFromE4M3FN, TruncF64ToHalf>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns)))) {
      getOperation()->emitError() << getArgument() << ": the rewriting did not converge";
      signalPassFailure();
    }
  }
};

} // namespace
