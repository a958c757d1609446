// The scalar computation of each elementwise tgc op (ElementwiseOpInterface).
#include "tgc/Dialect/ScalarBuilder.h"
#include "tgc/Dialect/TgcDialect.h"

#include "mlir/Dialect/Math/IR/Math.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace tgc;

//===----------------------------------------------------------------------===//
// Scalar helpers
//===----------------------------------------------------------------------===//

static bool isFloat(Type t) { return llvm::isa<FloatType>(t); }

Value tgc::castScalar(OpBuilder &b, Location loc, Value v, Type to) {
  Type from = v.getType();
  if (from == to)
    return v;
  if (to.isInteger(1)) {
    Value zero = scalarConstant(b, loc, from, 0);
    if (isFloat(from))
      return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE, v, zero);
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, v, zero);
  }
  if (isFloat(from) && isFloat(to)) {
    if (from.getIntOrFloatBitWidth() < to.getIntOrFloatBitWidth())
      return arith::ExtFOp::create(b, loc, to, v);
    if (from.getIntOrFloatBitWidth() > to.getIntOrFloatBitWidth())
      return arith::TruncFOp::create(b, loc, to, v);
    // f16 <-> bf16: through f32.
    Value wide = arith::ExtFOp::create(b, loc, b.getF32Type(), v);
    return arith::TruncFOp::create(b, loc, to, wide);
  }
  if (isFloat(to))
    return from.isInteger(1) ? arith::UIToFPOp::create(b, loc, to, v).getResult()
                             : arith::SIToFPOp::create(b, loc, to, v).getResult();
  if (isFloat(from))
    return arith::FPToSIOp::create(b, loc, to, v);
  unsigned fw = from.getIntOrFloatBitWidth(), tw = to.getIntOrFloatBitWidth();
  if (fw < tw)
    return from.isInteger(1) ? arith::ExtUIOp::create(b, loc, to, v).getResult()
                             : arith::ExtSIOp::create(b, loc, to, v).getResult();
  return arith::TruncIOp::create(b, loc, to, v);
}

Value tgc::scalarConstant(OpBuilder &b, Location loc, Type type, double value) {
  if (auto f = llvm::dyn_cast<FloatType>(type))
    return arith::ConstantOp::create(b, loc, b.getFloatAttr(f, value));
  return arith::ConstantOp::create(b, loc, b.getIntegerAttr(type, static_cast<int64_t>(value)));
}

Value tgc::scalarFromAttr(OpBuilder &b, Location loc, Attribute attr, Type type, double dflt) {
  double value = dflt;
  if (auto f = llvm::dyn_cast_or_null<FloatAttr>(attr))
    value = f.getValueAsDouble();
  else if (auto bo = llvm::dyn_cast_or_null<BoolAttr>(attr))
    value = bo.getValue();
  else if (auto i = llvm::dyn_cast_or_null<IntegerAttr>(attr))
    value = static_cast<double>(i.getInt());
  return scalarConstant(b, loc, type, value);
}

Value tgc::addScalars(OpBuilder &b, Location loc, Value x, Value y) {
  if (isFloat(x.getType()))
    return arith::AddFOp::create(b, loc, x, y);
  if (x.getType().isInteger(1))
    return arith::OrIOp::create(b, loc, x, y);
  return arith::AddIOp::create(b, loc, x, y);
}

Value tgc::subScalars(OpBuilder &b, Location loc, Value x, Value y) {
  if (isFloat(x.getType()))
    return arith::SubFOp::create(b, loc, x, y);
  return arith::SubIOp::create(b, loc, x, y);
}

Value tgc::mulScalars(OpBuilder &b, Location loc, Value x, Value y) {
  if (isFloat(x.getType()))
    return arith::MulFOp::create(b, loc, x, y);
  if (x.getType().isInteger(1))
    return arith::AndIOp::create(b, loc, x, y);
  return arith::MulIOp::create(b, loc, x, y);
}

Value tgc::maxScalars(OpBuilder &b, Location loc, Value x, Value y) {
  if (isFloat(x.getType()))
    return arith::MaximumFOp::create(b, loc, x, y);
  return arith::MaxSIOp::create(b, loc, x, y);
}

Value tgc::minScalars(OpBuilder &b, Location loc, Value x, Value y) {
  if (isFloat(x.getType()))
    return arith::MinimumFOp::create(b, loc, x, y);
  return arith::MinSIOp::create(b, loc, x, y);
}

/// `other * alpha` when alpha is present.
static Value scaleByAlpha(OpBuilder &b, Location loc, Value other, Attribute alpha) {
  if (!alpha)
    return other;
  return mulScalars(b, loc, other, scalarFromAttr(b, loc, alpha, other.getType(), 1));
}

static Value sigmoid(OpBuilder &b, Location loc, Value x) {
  Value one = scalarConstant(b, loc, x.getType(), 1);
  Value e = math::ExpOp::create(b, loc, arith::NegFOp::create(b, loc, x));
  return arith::DivFOp::create(b, loc, one, arith::AddFOp::create(b, loc, one, e));
}

//===----------------------------------------------------------------------===//
// Unary
//===----------------------------------------------------------------------===//

Value ReluOp::buildScalar(OpBuilder &b, Location loc, ValueRange args, Type type) {
  return maxScalars(b, loc, args[0], scalarConstant(b, loc, type, 0));
}
Value NegOp::buildScalar(OpBuilder &b, Location loc, ValueRange args, Type type) {
  if (isFloat(type))
    return arith::NegFOp::create(b, loc, args[0]);
  return arith::SubIOp::create(b, loc, scalarConstant(b, loc, type, 0), args[0]);
}
Value AbsOp::buildScalar(OpBuilder &b, Location loc, ValueRange args, Type type) {
  if (isFloat(type))
    return math::AbsFOp::create(b, loc, args[0]);
  return math::AbsIOp::create(b, loc, args[0]);
}

#define TGC_UNARY_MATH(Op, MathOp)                                                                 \
  Value Op::buildScalar(OpBuilder &b, Location loc, ValueRange args, Type) {                       \
    return math::MathOp::create(b, loc, args[0]);                                                  \
  }
TGC_UNARY_MATH(TanhOp, TanhOp)
TGC_UNARY_MATH(ExpOp, ExpOp)
TGC_UNARY_MATH(LogOp, LogOp)
TGC_UNARY_MATH(SqrtOp, SqrtOp)
TGC_UNARY_MATH(RsqrtOp, RsqrtOp)
TGC_UNARY_MATH(ErfOp, ErfOp)
TGC_UNARY_MATH(SinOp, SinOp)
TGC_UNARY_MATH(CosOp, CosOp)
TGC_UNARY_MATH(TanOp, TanOp)
TGC_UNARY_MATH(AsinOp, AsinOp)
TGC_UNARY_MATH(AcosOp, AcosOp)
TGC_UNARY_MATH(AtanOp, AtanOp)
TGC_UNARY_MATH(SinhOp, SinhOp)
TGC_UNARY_MATH(CoshOp, CoshOp)
TGC_UNARY_MATH(AsinhOp, AsinhOp)
TGC_UNARY_MATH(AcoshOp, AcoshOp)
TGC_UNARY_MATH(AtanhOp, AtanhOp)
TGC_UNARY_MATH(Expm1Op, ExpM1Op)
TGC_UNARY_MATH(Log1pOp, Log1pOp)
TGC_UNARY_MATH(Log2Op, Log2Op)
TGC_UNARY_MATH(Log10Op, Log10Op)
#undef TGC_UNARY_MATH

/// Rounding ops: the identity on integers and bools.
#define TGC_ROUNDING(Op, MathOp)                                                                   \
  Value Op::buildScalar(OpBuilder &b, Location loc, ValueRange args, Type type) {                  \
    if (!isFloat(type))                                                                            \
      return args[0];                                                                              \
    return math::MathOp::create(b, loc, args[0]);                                                  \
  }
TGC_ROUNDING(CeilOp, CeilOp)
TGC_ROUNDING(FloorOp, FloorOp)
TGC_ROUNDING(RoundOp, RoundEvenOp)
TGC_ROUNDING(TruncOp, TruncOp)
#undef TGC_ROUNDING

/// (0 < x) - (x < 0): NaN gives 0; bools are their own sign.
Value SignOp::buildScalar(OpBuilder &b, Location loc, ValueRange args, Type type) {
  Value x = args[0];
  if (type.isInteger(1))
    return x;
  Value zero = scalarConstant(b, loc, type, 0);
  Value pos, neg;
  if (isFloat(type)) {
    pos = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, x, zero);
    neg = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, x, zero);
  } else {
    pos = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, x, zero);
    neg = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, x, zero);
  }
  return subScalars(b, loc, castScalar(b, loc, pos, type), castScalar(b, loc, neg, type));
}

Type IsnanOp::getComputeType() { return cast<BaseTensorType>(getSelf().getType()).getDtype(); }
Value IsnanOp::buildScalar(OpBuilder &b, Location loc, ValueRange args, Type type) {
  if (!isFloat(type))
    return arith::ConstantOp::create(b, loc, b.getBoolAttr(false));
  return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, args[0], args[0]);
}
Type IsinfOp::getComputeType() { return cast<BaseTensorType>(getSelf().getType()).getDtype(); }
Value IsinfOp::buildScalar(OpBuilder &b, Location loc, ValueRange args, Type type) {
  if (!isFloat(type))
    return arith::ConstantOp::create(b, loc, b.getBoolAttr(false));
  Value inf = arith::ConstantOp::create(
      b, loc, b.getFloatAttr(type, std::numeric_limits<double>::infinity()));
  return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ,
                               math::AbsFOp::create(b, loc, args[0]), inf);
}

Value SigmoidOp::buildScalar(OpBuilder &b, Location loc, ValueRange args, Type) {
  return sigmoid(b, loc, args[0]);
}
Value SiluOp::buildScalar(OpBuilder &b, Location loc, ValueRange args, Type) {
  return arith::MulFOp::create(b, loc, args[0], sigmoid(b, loc, args[0]));
}
Value ReciprocalOp::buildScalar(OpBuilder &b, Location loc, ValueRange args, Type type) {
  return arith::DivFOp::create(b, loc, scalarConstant(b, loc, type, 1), args[0]);
}

/// gelu(x) = x * Phi(x), with Phi exact (erf) or its tanh approximation.
Value GeluOp::buildScalar(OpBuilder &b, Location loc, ValueRange args, Type type) {
  Value x = args[0];
  auto c = [&](double v) { return scalarConstant(b, loc, type, v); };
  Value inner;
  if (getApproximate() == "tanh") {
    Value x3 = arith::MulFOp::create(b, loc, arith::MulFOp::create(b, loc, x, x), x);
    Value poly = arith::AddFOp::create(b, loc, x, arith::MulFOp::create(b, loc, c(0.044715), x3));
    inner =
        math::TanhOp::create(b, loc, arith::MulFOp::create(b, loc, c(std::sqrt(2.0 / M_PI)), poly));
  } else {
    inner = math::ErfOp::create(b, loc, arith::MulFOp::create(b, loc, x, c(M_SQRT1_2)));
  }
  Value half = arith::MulFOp::create(b, loc, c(0.5), x);
  return arith::MulFOp::create(b, loc, half, arith::AddFOp::create(b, loc, c(1.0), inner));
}

//===----------------------------------------------------------------------===//
// Binary
//===----------------------------------------------------------------------===//

Value AddOp::buildScalar(OpBuilder &b, Location loc, ValueRange args, Type) {
  return addScalars(b, loc, args[0], scaleByAlpha(b, loc, args[1], getAlphaAttr()));
}
Value SubOp::buildScalar(OpBuilder &b, Location loc, ValueRange args, Type) {
  return subScalars(b, loc, args[0], scaleByAlpha(b, loc, args[1], getAlphaAttr()));
}
Value RsubOp::buildScalar(OpBuilder &b, Location loc, ValueRange args, Type) {
  return subScalars(b, loc, args[1], scaleByAlpha(b, loc, args[0], getAlphaAttr()));
}
Value MulOp::buildScalar(OpBuilder &b, Location loc, ValueRange args, Type) {
  return mulScalars(b, loc, args[0], args[1]);
}
Value DivOp::buildScalar(OpBuilder &b, Location loc, ValueRange args, Type type) {
  std::optional<StringRef> mode = getRoundingMode();
  if (!isFloat(type)) {
    // Integer quotients (a rounding mode is set: true division is float). x86's idiv
    // traps on a zero divisor and on MIN / -1: those divide by 1 instead, and the
    // results are 0 and -x (wrapping MIN to itself).
    Value x = args[0], d = args[1];
    Value zero = scalarConstant(b, loc, type, 0), one = scalarConstant(b, loc, type, 1);
    Value byZero = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, d, zero);
    Value byMinusOne = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, d,
                                             scalarConstant(b, loc, type, -1));
    Value special = arith::OrIOp::create(b, loc, byZero, byMinusOne);
    Value safe = arith::SelectOp::create(b, loc, special, one, d);
    Value q = mode == "floor" ? arith::FloorDivSIOp::create(b, loc, x, safe).getResult()
                              : arith::DivSIOp::create(b, loc, x, safe).getResult();
    Value negated = arith::SubIOp::create(b, loc, zero, x);
    q = arith::SelectOp::create(b, loc, byMinusOne, negated, q);
    return arith::SelectOp::create(b, loc, byZero, zero, q);
  }
  Value q = arith::DivFOp::create(b, loc, args[0], args[1]);
  if (mode == "trunc")
    return math::TruncOp::create(b, loc, q);
  if (mode == "floor")
    return math::FloorOp::create(b, loc, q);
  return q;
}
Value PowOp::buildScalar(OpBuilder &b, Location loc, ValueRange args, Type type) {
  if (isFloat(type))
    return math::PowFOp::create(b, loc, args[0], args[1]);
  return math::IPowIOp::create(b, loc, args[0], args[1]);
}
Value MaximumOp::buildScalar(OpBuilder &b, Location loc, ValueRange args, Type) {
  return maxScalars(b, loc, args[0], args[1]);
}
Value MinimumOp::buildScalar(OpBuilder &b, Location loc, ValueRange args, Type) {
  return minScalars(b, loc, args[0], args[1]);
}
static Value fmodScalars(OpBuilder &b, Location loc, Value x, Value y, Type type) {
  if (isFloat(type))
    return arith::RemFOp::create(b, loc, x, y);
  return arith::RemSIOp::create(b, loc, x, y);
}
Value Atan2Op::buildScalar(OpBuilder &b, Location loc, ValueRange args, Type) {
  return math::Atan2Op::create(b, loc, args[0], args[1]);
}

Value FmodOp::buildScalar(OpBuilder &b, Location loc, ValueRange args, Type type) {
  return fmodScalars(b, loc, args[0], args[1], type);
}
Value RemainderOp::buildScalar(OpBuilder &b, Location loc, ValueRange args, Type type) {
  // fmod, plus the divisor where the remainder is non-zero with the other sign.
  Value r = fmodScalars(b, loc, args[0], args[1], type);
  Value zero = scalarConstant(b, loc, type, 0);
  auto less = [&](Value x) -> Value {
    if (isFloat(type))
      return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, x, zero);
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, x, zero);
  };
  Value nonZero =
      isFloat(type) ? arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE, r, zero).getResult()
                    : arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, r, zero).getResult();
  Value fix =
      arith::AndIOp::create(b, loc, nonZero, arith::XOrIOp::create(b, loc, less(r), less(args[1])));
  return arith::SelectOp::create(b, loc, fix, addScalars(b, loc, r, args[1]), r);
}

/// Comparisons compute in the promoted dtype of their operands.
static Type comparisonType(Operation *op) {
  SmallVector<PromotionOperand> operands;
  for (Value v : op->getOperands()) {
    if (auto t = llvm::dyn_cast<BaseTensorType>(v.getType()))
      operands.push_back({t.getDtype(), t.getRank() == 0 ? PromotionOperand::ZeroDim
                                                         : PromotionOperand::Dimensioned});
    else
      operands.push_back({v.getType(), PromotionOperand::WrappedNumber});
  }
  return promoteTypes(operands, Float32Type::get(op->getContext()));
}

static Value compare(OpBuilder &b, Location loc, ValueRange args, arith::CmpFPredicate fp,
                     arith::CmpIPredicate ip) {
  if (isFloat(args[0].getType()))
    return arith::CmpFOp::create(b, loc, fp, args[0], args[1]);
  return arith::CmpIOp::create(b, loc, ip, args[0], args[1]);
}

#define TGC_COMPARISON(Op, FP, IP)                                                                 \
  Type Op::getComputeType() { return comparisonType(*this); }                                      \
  Value Op::buildScalar(OpBuilder &b, Location loc, ValueRange args, Type) {                       \
    return compare(b, loc, args, arith::CmpFPredicate::FP, arith::CmpIPredicate::IP);              \
  }
TGC_COMPARISON(EqOp, OEQ, eq)
TGC_COMPARISON(NeOp, UNE, ne)
TGC_COMPARISON(LtOp, OLT, slt)
TGC_COMPARISON(LeOp, OLE, sle)
TGC_COMPARISON(GtOp, OGT, sgt)
TGC_COMPARISON(GeOp, OGE, sge)
#undef TGC_COMPARISON

Type LogicalXorOp::getComputeType() { return IntegerType::get(getContext(), 1); }
Value LogicalXorOp::buildScalar(OpBuilder &b, Location loc, ValueRange args, Type) {
  return arith::XOrIOp::create(b, loc, args[0], args[1]);
}
Type LogicalAndOp::getComputeType() { return IntegerType::get(getContext(), 1); }
Value LogicalAndOp::buildScalar(OpBuilder &b, Location loc, ValueRange args, Type) {
  return arith::AndIOp::create(b, loc, args[0], args[1]);
}
Type LogicalOrOp::getComputeType() { return IntegerType::get(getContext(), 1); }
Value LogicalOrOp::buildScalar(OpBuilder &b, Location loc, ValueRange args, Type) {
  return arith::OrIOp::create(b, loc, args[0], args[1]);
}

Value BitwiseAndOp::buildScalar(OpBuilder &b, Location loc, ValueRange args, Type) {
  return arith::AndIOp::create(b, loc, args[0], args[1]);
}
Value BitwiseOrOp::buildScalar(OpBuilder &b, Location loc, ValueRange args, Type) {
  return arith::OrIOp::create(b, loc, args[0], args[1]);
}
Value BitwiseXorOp::buildScalar(OpBuilder &b, Location loc, ValueRange args, Type) {
  return arith::XOrIOp::create(b, loc, args[0], args[1]);
}
/// Whether shift amount `amount` lies outside [0, limit).
static Value shiftOutOfRange(OpBuilder &b, Location loc, Value amount, Type type, int64_t limit) {
  Value negative = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, amount,
                                         scalarConstant(b, loc, type, 0));
  Value past = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, amount,
                                     scalarConstant(b, loc, type, limit));
  return arith::OrIOp::create(b, loc, negative, past);
}
/// ATen's lshift: 0 for a shift outside [0, bits).
Value BitwiseLeftShiftOp::buildScalar(OpBuilder &b, Location loc, ValueRange args, Type type) {
  int64_t bits = type.getIntOrFloatBitWidth();
  Value shifted = arith::ShLIOp::create(b, loc, args[0], args[1]);
  return arith::SelectOp::create(b, loc, shiftOutOfRange(b, loc, args[1], type, bits),
                                 scalarConstant(b, loc, type, 0), shifted);
}
/// ATen's rshift: a shift outside [0, max) shifts by max, the bit width (unsigned) or
/// one less (signed, arithmetic).
Value BitwiseRightShiftOp::buildScalar(OpBuilder &b, Location loc, ValueRange args, Type type) {
  bool isUnsigned = type.isUnsignedInteger();
  int64_t limit = type.getIntOrFloatBitWidth() - (isUnsigned ? 0 : 1);
  Value amount = arith::SelectOp::create(b, loc, shiftOutOfRange(b, loc, args[1], type, limit),
                                         scalarConstant(b, loc, type, limit), args[1]);
  if (isUnsigned)
    return arith::SelectOp::create(b, loc,
                                   arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, amount,
                                                         scalarConstant(b, loc, type, limit)),
                                   scalarConstant(b, loc, type, 0),
                                   arith::ShRUIOp::create(b, loc, args[0], amount));
  return arith::ShRSIOp::create(b, loc, args[0], amount);
}
/// x ^ all ones: !x of a bool, ~x of an integer.
Value BitwiseNotOp::buildScalar(OpBuilder &b, Location loc, ValueRange args, Type type) {
  Value ones = arith::ConstantOp::create(b, loc, b.getIntegerAttr(type, -1));
  return arith::XOrIOp::create(b, loc, args[0], ones);
}

//===----------------------------------------------------------------------===//
// Selection, conversion, clamp
//===----------------------------------------------------------------------===//

bool WhereOp::keepsOperandType(unsigned index) { return index == 0; }
Value WhereOp::buildScalar(OpBuilder &b, Location loc, ValueRange args, Type) {
  return arith::SelectOp::create(b, loc, args[0], args[1], args[2]);
}

bool MaskedFillOp::keepsOperandType(unsigned index) { return index == 1; }
Value MaskedFillOp::buildScalar(OpBuilder &b, Location loc, ValueRange args, Type) {
  return arith::SelectOp::create(b, loc, args[1], args[2], args[0]);
}

Value FillOp::buildScalar(OpBuilder &, Location, ValueRange args, Type) { return args[1]; }

Value ToDTypeOp::buildScalar(OpBuilder &, Location, ValueRange args, Type) { return args[0]; }

/// min(max(x, lo), hi) with NaN propagation from any operand, as ATen's clamp.Tensor.
Value ClampTensorOp::buildScalar(OpBuilder &b, Location loc, ValueRange args, Type) {
  Value x = args[0];
  unsigned next = 1;
  if (getMin())
    x = maxScalars(b, loc, x, args[next++]);
  if (getMax())
    x = minScalars(b, loc, x, args[next]);
  return x;
}

Value ClampOp::buildScalar(OpBuilder &b, Location loc, ValueRange args, Type type) {
  Value x = args[0];
  if (getMinAttr())
    x = maxScalars(b, loc, x, scalarFromAttr(b, loc, getMinAttr(), type, 0));
  if (getMaxAttr())
    x = minScalars(b, loc, x, scalarFromAttr(b, loc, getMaxAttr(), type, 0));
  return x;
}

//===----------------------------------------------------------------------===//
// Parametrized activations
//===----------------------------------------------------------------------===//

Value HardtanhOp::buildScalar(OpBuilder &b, Location loc, ValueRange args, Type type) {
  Value lo = scalarConstant(b, loc, type, getMinVal().convertToDouble());
  Value hi = scalarConstant(b, loc, type, getMaxVal().convertToDouble());
  return minScalars(b, loc, maxScalars(b, loc, args[0], lo), hi);
}

/// relu6(x + 3) / 6.
static Value hardsigmoid(OpBuilder &b, Location loc, Value x, Type type) {
  Value shifted = arith::AddFOp::create(b, loc, x, scalarConstant(b, loc, type, 3));
  Value clamped = minScalars(b, loc, maxScalars(b, loc, shifted, scalarConstant(b, loc, type, 0)),
                             scalarConstant(b, loc, type, 6));
  return arith::DivFOp::create(b, loc, clamped, scalarConstant(b, loc, type, 6));
}

Value HardsigmoidOp::buildScalar(OpBuilder &b, Location loc, ValueRange args, Type type) {
  return hardsigmoid(b, loc, args[0], type);
}

Value HardswishOp::buildScalar(OpBuilder &b, Location loc, ValueRange args, Type type) {
  return arith::MulFOp::create(b, loc, args[0], hardsigmoid(b, loc, args[0], type));
}

Value EluOp::buildScalar(OpBuilder &b, Location loc, ValueRange args, Type type) {
  Value x = args[0];
  auto c = [&](double v) { return scalarConstant(b, loc, type, v); };
  double scale = getScale().convertToDouble();
  Value neg = math::ExpM1Op::create(
      b, loc, arith::MulFOp::create(b, loc, x, c(getInputScale().convertToDouble())));
  neg = arith::MulFOp::create(b, loc, neg, c(scale * getAlpha().convertToDouble()));
  Value pos = arith::MulFOp::create(b, loc, x, c(scale));
  Value positive = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, x, c(0));
  return arith::SelectOp::create(b, loc, positive, pos, neg);
}

Value LeakyReluOp::buildScalar(OpBuilder &b, Location loc, ValueRange args, Type type) {
  Value x = args[0];
  Value zero = scalarConstant(b, loc, type, 0);
  Value scaled = arith::MulFOp::create(
      b, loc, x, scalarConstant(b, loc, type, getNegativeSlope().convertToDouble()));
  Value positive = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, x, zero);
  return arith::SelectOp::create(b, loc, positive, x, scaled);
}

Type LogicalNotOp::getComputeType() { return IntegerType::get(getContext(), 1); }
Value LogicalNotOp::buildScalar(OpBuilder &b, Location loc, ValueRange args, Type) {
  Value one = arith::ConstantOp::create(b, loc, b.getBoolAttr(true));
  return arith::XOrIOp::create(b, loc, args[0], one);
}
