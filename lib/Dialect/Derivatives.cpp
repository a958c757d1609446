// Derivative formulas (vector-Jacobian products) of the primitive tgc ops, attached as
// DifferentiableOpInterface external models. PyTorch's derivatives.yaml is the reference;
// the formulas are built from tgc ops on value tensors, so the backward goes through the
// same decomposition and lowering as the forward.
#include "tgc/Dialect/Derivatives.h"

#include "tgc/Dialect/ScalarBuilder.h"
#include "tgc/Dialect/TgcDialect.h"

#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"

#include <cmath>
#include <numeric>

using namespace mlir;
using namespace tgc;

namespace {

BaseTensorType typeOf(Value v) { return llvm::cast<BaseTensorType>(v.getType()); }
bool isTensor(Value v) { return llvm::isa<BaseTensorType>(v.getType()); }

/// What one formula works with: the builder, the op's location, its result gradients,
/// which operands want a gradient, and where the operand gradients go.
struct Vjp {
  OpBuilder &b;
  Location loc;
  ArrayRef<Value> grads;
  ArrayRef<bool> needs;
  SmallVectorImpl<Value> &out;
  /// Operands the backward writes into, with their new values.
  SmallVectorImpl<std::pair<unsigned, Value>> &writes;

  Value g(unsigned i = 0) const { return grads[i]; }
  bool wants(unsigned i) const { return needs[i]; }
  MLIRContext *ctx() const { return b.getContext(); }

  Value scalar(double v) { return arith::ConstantOp::create(b, loc, b.getF64FloatAttr(v)); }
  Value add(Value x, Value y) { return AddOp::create(b, loc, x, y, Attribute()); }
  Value sub(Value x, Value y) { return SubOp::create(b, loc, x, y, Attribute()); }
  /// `y - x`, with `y` possibly a scalar.
  Value rsub(Value x, Value y) { return RsubOp::create(b, loc, x, y, Attribute()); }
  Value mul(Value x, Value y) { return MulOp::create(b, loc, x, y); }
  Value mul(Value x, double y) { return mul(x, scalar(y)); }
  Value div(Value x, Value y) { return DivOp::create(b, loc, x, y, StringAttr()); }
  Value neg(Value x) { return NegOp::create(b, loc, x); }
  Value where(Value c, Value x, Value y) { return WhereOp::create(b, loc, c, x, y); }
  Value gt(Value x, Value y) { return GtOp::create(b, loc, x, y); }
  Value lt(Value x, Value y) { return LtOp::create(b, loc, x, y); }
  Value ge(Value x, Value y) { return GeOp::create(b, loc, x, y); }
  Value le(Value x, Value y) { return LeOp::create(b, loc, x, y); }
  Value eq(Value x, Value y) { return EqOp::create(b, loc, x, y); }
  Value logicalAnd(Value x, Value y) { return LogicalAndOp::create(b, loc, x, y); }
  Value zerosLike(Value x) {
    return FullLikeOp::create(b, loc, x, b.getF64FloatAttr(0.0), TypeAttr());
  }
  /// `g` where `cond` holds, 0 elsewhere.
  Value keepWhere(Value cond, Value grad) { return where(cond, grad, scalar(0.0)); }

  /// Reduces a gradient computed at the broadcast shape back to `operand`'s sizes (sums
  /// over broadcast dimensions) and dtype, as autograd does for broadcasting ops.
  Value like(Value grad, Value operand) {
    ArrayRef<AffineExpr> gs = typeOf(grad).getSizes(), os = typeOf(operand).getSizes();
    int64_t lead = static_cast<int64_t>(gs.size()) - static_cast<int64_t>(os.size());
    if (lead > 0) {
      SmallVector<int64_t> dims(lead);
      std::iota(dims.begin(), dims.end(), 0);
      grad = SumOp::create(b, loc, grad, b.getDenseI64ArrayAttr(dims), false, TypeAttr());
    }
    SmallVector<int64_t> ones;
    ArrayRef<AffineExpr> rest = typeOf(grad).getSizes();
    for (auto [d, size] : llvm::enumerate(os))
      if (getConstantSize(size) == 1 && getConstantSize(rest[d]) != 1)
        ones.push_back(d);
    if (!ones.empty())
      grad = SumOp::create(b, loc, grad, b.getDenseI64ArrayAttr(ones), true, TypeAttr());
    Type dtype = typeOf(operand).getDtype();
    if (typeOf(grad).getDtype() != dtype)
      grad = ToDTypeOp::create(b, loc, grad, TypeAttr::get(dtype));
    return grad;
  }
  /// Sets the gradient of operand `i` (brought to the operand's sizes and dtype).
  void set(unsigned i, Operation *op, Value grad) {
    if (grad && wants(i))
      out[i] = like(grad, op->getOperand(i));
  }
};

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

/// Unary ops: `formula(v, x, y, g)` is the gradient of `x` given the result `y`.
template <typename OpT, Value (*Formula)(Vjp &, OpT, Value, Value, Value)>
LogicalResult unary(Vjp &v, OpT op) {
  if (v.wants(0))
    v.set(0, op, Formula(v, op, op->getOperand(0), op->getResult(0), v.g()));
  return success();
}

Value dRelu(Vjp &v, ReluOp, Value, Value y, Value g) {
  return v.keepWhere(v.gt(y, v.scalar(0)), g);
}
Value dNeg(Vjp &v, NegOp, Value, Value, Value g) { return v.neg(g); }
Value dAbs(Vjp &v, AbsOp, Value x, Value, Value g) {
  Value zero = v.scalar(0);
  return v.where(v.gt(x, zero), g, v.where(v.lt(x, zero), v.neg(g), zero));
}
Value dTanh(Vjp &v, TanhOp, Value, Value y, Value g) {
  return v.mul(g, v.rsub(v.mul(y, y), v.scalar(1)));
}
Value dSigmoid(Vjp &v, SigmoidOp, Value, Value y, Value g) {
  return v.mul(v.mul(g, y), v.rsub(y, v.scalar(1)));
}
Value dExp(Vjp &v, ExpOp, Value, Value y, Value g) { return v.mul(g, y); }
Value dLog(Vjp &v, LogOp, Value x, Value, Value g) { return v.div(g, x); }
Value dLog1p(Vjp &v, Log1pOp, Value x, Value, Value g) { return v.div(g, v.add(x, v.scalar(1))); }
Value dLog2(Vjp &v, Log2Op, Value x, Value, Value g) { return v.div(g, v.mul(x, std::log(2.0))); }
Value dLog10(Vjp &v, Log10Op, Value x, Value, Value g) {
  return v.div(g, v.mul(x, std::log(10.0)));
}
Value dExpm1(Vjp &v, Expm1Op, Value, Value y, Value g) { return v.mul(g, v.add(y, v.scalar(1))); }
Value dTan(Vjp &v, TanOp, Value, Value y, Value g) {
  return v.mul(g, v.add(v.mul(y, y), v.scalar(1)));
}
/// 1 / sqrt(c - x^2) for asin (c = 1, sign 1) and acos (sign -1); x^2 + 1 for asinh and
/// x^2 - 1 for acosh (derivatives.yaml's rsqrt forms).
Value rsqrtOfSquare(Vjp &v, Value x, double squareSign, double constant) {
  Value square = v.mul(v.mul(x, x), squareSign);
  return RsqrtOp::create(v.b, v.loc, v.add(square, v.scalar(constant)));
}
Value dAsin(Vjp &v, AsinOp, Value x, Value, Value g) {
  return v.mul(g, rsqrtOfSquare(v, x, -1, 1));
}
Value dAcos(Vjp &v, AcosOp, Value x, Value, Value g) {
  return v.neg(v.mul(g, rsqrtOfSquare(v, x, -1, 1)));
}
Value dAsinh(Vjp &v, AsinhOp, Value x, Value, Value g) {
  return v.mul(g, rsqrtOfSquare(v, x, 1, 1));
}
Value dAcosh(Vjp &v, AcoshOp, Value x, Value, Value g) {
  return v.mul(g, rsqrtOfSquare(v, x, 1, -1));
}
Value dAtan(Vjp &v, AtanOp, Value x, Value, Value g) {
  return v.div(g, v.add(v.mul(x, x), v.scalar(1)));
}
Value dAtanh(Vjp &v, AtanhOp, Value x, Value, Value g) {
  return v.div(g, v.rsub(v.mul(x, x), v.scalar(1)));
}
Value dSinh(Vjp &v, SinhOp, Value x, Value, Value g) {
  return v.mul(g, CoshOp::create(v.b, v.loc, x));
}
Value dCosh(Vjp &v, CoshOp, Value x, Value, Value g) {
  return v.mul(g, SinhOp::create(v.b, v.loc, x));
}
/// elu_backward (is_result false): g * scale for x > 0, else
/// g * input_scale * alpha * scale * exp(x * input_scale).
Value dElu(Vjp &v, EluOp op, Value x, Value, Value g) {
  double alpha = op.getAlpha().convertToDouble(), scale = op.getScale().convertToDouble(),
         inputScale = op.getInputScale().convertToDouble();
  Value negative =
      v.mul(v.mul(g, ExpOp::create(v.b, v.loc, v.mul(x, inputScale))), inputScale * alpha * scale);
  return v.where(v.le(x, v.scalar(0)), negative, v.mul(g, scale));
}
Value dSqrt(Vjp &v, SqrtOp, Value, Value y, Value g) { return v.div(g, v.mul(y, 2.0)); }
Value dRsqrt(Vjp &v, RsqrtOp, Value, Value y, Value g) {
  return v.mul(v.mul(g, v.mul(v.mul(y, y), y)), -0.5);
}
Value dErf(Vjp &v, ErfOp, Value x, Value, Value g) {
  Value gauss = ExpOp::create(v.b, v.loc, v.neg(v.mul(x, x)));
  return v.mul(v.mul(g, gauss), 2.0 / std::sqrt(M_PI));
}
Value dReciprocal(Vjp &v, ReciprocalOp, Value, Value y, Value g) {
  return v.neg(v.mul(g, v.mul(y, y)));
}
Value dSilu(Vjp &v, SiluOp, Value x, Value, Value g) {
  Value s = SigmoidOp::create(v.b, v.loc, x);
  Value inner = v.add(v.mul(x, v.rsub(s, v.scalar(1))), v.scalar(1));
  return v.mul(v.mul(g, s), inner);
}
Value dSin(Vjp &v, SinOp, Value x, Value, Value g) {
  return v.mul(g, CosOp::create(v.b, v.loc, x));
}
Value dCos(Vjp &v, CosOp, Value x, Value, Value g) {
  return v.neg(v.mul(g, SinOp::create(v.b, v.loc, x)));
}
Value dHardtanh(Vjp &v, HardtanhOp op, Value x, Value, Value g) {
  Value inside = v.logicalAnd(v.gt(x, v.scalar(op.getMinVal().convertToDouble())),
                              v.lt(x, v.scalar(op.getMaxVal().convertToDouble())));
  return v.keepWhere(inside, g);
}
/// hardsigmoid_backward: g / 6 strictly inside (-3, 3), else 0.
Value dHardsigmoid(Vjp &v, HardsigmoidOp, Value x, Value, Value g) {
  Value inside = v.logicalAnd(v.gt(x, v.scalar(-3)), v.lt(x, v.scalar(3)));
  return v.keepWhere(inside, v.mul(g, 1.0 / 6));
}
/// hardswish_backward: 0 below -3, g * (x / 3 + 1/2) up to 3 (inclusive), g above.
Value dHardswish(Vjp &v, HardswishOp, Value x, Value, Value g) {
  Value ramp = v.mul(g, v.add(v.mul(x, 1.0 / 3), v.scalar(0.5)));
  return v.where(v.lt(x, v.scalar(-3)), v.scalar(0.0), v.where(v.le(x, v.scalar(3)), ramp, g));
}
Value dLeakyRelu(Vjp &v, LeakyReluOp op, Value x, Value, Value g) {
  return v.where(v.gt(x, v.scalar(0)), g, v.mul(g, op.getNegativeSlope().convertToDouble()));
}
/// gelu_backward, both the exact (erf) and the tanh approximation, as ATen computes it.
Value dGelu(Vjp &v, GeluOp op, Value x, Value, Value g) {
  if (op.getApproximate() == "tanh") {
    const double beta = std::sqrt(2.0 / M_PI), kappa = 0.044715;
    Value xSquared = v.mul(x, x);
    Value inner = v.mul(v.add(x, v.mul(v.mul(xSquared, x), kappa)), beta);
    Value t = TanhOp::create(v.b, v.loc, inner);
    Value left = v.mul(v.add(t, v.scalar(1)), 0.5);
    Value dInner = v.mul(v.add(v.mul(xSquared, 3 * kappa), v.scalar(1)), beta);
    Value right = v.mul(v.mul(v.mul(x, 0.5), v.rsub(v.mul(t, t), v.scalar(1))), dInner);
    return v.mul(g, v.add(left, right));
  }
  Value cdf = v.mul(v.add(ErfOp::create(v.b, v.loc, v.mul(x, M_SQRT1_2)), v.scalar(1)), 0.5);
  Value pdf =
      v.mul(ExpOp::create(v.b, v.loc, v.mul(v.mul(x, x), -0.5)), 1.0 / std::sqrt(2.0 * M_PI));
  return v.mul(g, v.add(cdf, v.mul(x, pdf)));
}

/// `alpha` of add/sub/rsub as a scalar value (1 when absent).
Value alphaOf(Vjp &v, Attribute alpha) {
  return scalarFromAttr(v.b, v.loc, alpha, v.b.getF64Type(), 1.0);
}

template <typename OpT, bool negateOther, bool negateSelf> LogicalResult additive(Vjp &v, OpT op) {
  Value g = v.g();
  Value scaled = op.getAlphaAttr() ? v.mul(g, alphaOf(v, op.getAlphaAttr())) : g;
  // add: self + alpha*other; sub: self - alpha*other; rsub: other - alpha*self.
  v.set(0, op, negateSelf ? v.neg(scaled) : g);
  v.set(1, op, negateOther ? v.neg(scaled) : (negateSelf ? g : scaled));
  return success();
}

LogicalResult mulVjp(Vjp &v, MulOp op) {
  if (v.wants(0))
    v.set(0, op, v.mul(v.g(), op.getOther()));
  if (v.wants(1))
    v.set(1, op, v.mul(v.g(), op.getSelf()));
  return success();
}

LogicalResult divVjp(Vjp &v, DivOp op) {
  if (op.getRoundingModeAttr())
    return success(); // floor/trunc division is piecewise constant: zero gradient
  if (v.wants(0))
    v.set(0, op, v.div(v.g(), op.getOther()));
  if (v.wants(1))
    v.set(1, op, v.neg(v.div(v.mul(v.g(), op.getResult()), op.getOther())));
  return success();
}

/// fmod and remainder: a - q * b with q = trunc(a / b) (fmod) or floor(a / b)
/// (remainder), piecewise constant: the gradients are g and -g * q.
template <typename OpT, bool floor> LogicalResult modVjp(Vjp &v, OpT op) {
  if (v.wants(0))
    v.set(0, op, v.g());
  if (v.wants(1)) {
    Value q = DivOp::create(v.b, v.loc, op.getSelf(), op.getOther(),
                            v.b.getStringAttr(floor ? "floor" : "trunc"));
    v.set(1, op, v.neg(v.mul(v.g(), q)));
  }
  return success();
}

/// atan2(a, b): g * b / (a^2 + b^2) and -g * a / (a^2 + b^2) (derivatives.yaml).
LogicalResult atan2Vjp(Vjp &v, Atan2Op op) {
  Value a = op.getSelf(), b = op.getOther();
  Value scaled = v.div(v.g(), v.add(v.mul(a, a), v.mul(b, b)));
  if (v.wants(0))
    v.set(0, op, v.mul(scaled, b));
  if (v.wants(1))
    v.set(1, op, v.neg(v.mul(scaled, a)));
  return success();
}

LogicalResult powVjp(Vjp &v, PowOp op) {
  Value base = op.getSelf(), exponent = op.getOther(), g = v.g();
  if (v.wants(0)) {
    // exponent * base^(exponent - 1); zero where exponent == 0 (derivatives.yaml).
    Value expMinusOne;
    if (isTensor(exponent))
      expMinusOne = v.sub(exponent, v.scalar(1));
    else
      expMinusOne =
          subScalars(v.b, v.loc, castScalar(v.b, v.loc, exponent, v.b.getF64Type()), v.scalar(1));
    Value d = v.mul(v.mul(g, exponent), PowOp::create(v.b, v.loc, base, expMinusOne));
    if (isTensor(exponent))
      d = v.where(v.eq(exponent, v.scalar(0)), v.scalar(0), d);
    v.set(0, op, d);
  }
  if (v.wants(1)) {
    // base^exponent * log(base); zero where base == 0 and exponent >= 0.
    Value logBase;
    FloatAttr constantBase;
    IntegerAttr constantIntBase;
    if (isTensor(base))
      logBase = LogOp::create(v.b, v.loc, base);
    else if (matchPattern(base, m_Constant(&constantBase)))
      logBase = v.scalar(std::log(constantBase.getValueAsDouble()));
    else if (matchPattern(base, m_Constant(&constantIntBase)))
      logBase = v.scalar(std::log(static_cast<double>(constantIntBase.getInt())));
    else
      return op.emitOpError("derivative for the exponent needs a constant scalar base");
    Value d = v.mul(v.mul(g, op.getResult()), logBase);
    if (isTensor(base))
      d = v.where(v.logicalAnd(v.eq(base, v.scalar(0)), v.ge(exponent, v.scalar(0))), v.scalar(0),
                  d);
    v.set(1, op, d);
  }
  return success();
}

/// maximum/minimum: the gradient goes to the larger (smaller) operand; ties split it.
template <typename OpT, bool isMax> LogicalResult extremumVjp(Vjp &v, OpT op) {
  Value a = op.getSelf(), c = op.getOther(), g = v.g();
  Value half = v.mul(g, 0.5);
  Value tie = v.eq(a, c);
  Value aWins = isMax ? v.gt(a, c) : v.lt(a, c);
  Value cWins = isMax ? v.lt(a, c) : v.gt(a, c);
  v.set(0, op, v.where(tie, half, v.keepWhere(aWins, g)));
  v.set(1, op, v.where(tie, half, v.keepWhere(cWins, g)));
  return success();
}

LogicalResult whereVjp(Vjp &v, WhereOp op) {
  v.set(1, op, v.keepWhere(op.getCondition(), v.g()));
  v.set(2, op, v.where(op.getCondition(), v.scalar(0), v.g()));
  return success();
}

LogicalResult maskedFillVjp(Vjp &v, MaskedFillOp op) {
  v.set(0, op, v.where(op.getMask(), v.scalar(0), v.g()));
  if (v.wants(2) && isTensor(op.getValue())) {
    Value picked = v.keepWhere(op.getMask(), v.g());
    v.set(2, op, SumOp::create(v.b, v.loc, picked, DenseI64ArrayAttr(), false, TypeAttr()));
  }
  return success();
}

LogicalResult toDTypeVjp(Vjp &v, ToDTypeOp op) {
  v.set(0, op, v.g());
  return success();
}

LogicalResult clampVjp(Vjp &v, ClampOp op) {
  Value x = op.getSelf();
  Value inside;
  auto bound = [&](Attribute attr, bool lower) {
    Value limit = scalarFromAttr(v.b, v.loc, attr, v.b.getF64Type(), 0);
    Value ok = lower ? v.ge(x, limit) : v.le(x, limit);
    inside = inside ? v.logicalAnd(inside, ok) : ok;
  };
  if (op.getMinAttr())
    bound(op.getMinAttr(), true);
  if (op.getMaxAttr())
    bound(op.getMaxAttr(), false);
  v.set(0, op, inside ? v.keepWhere(inside, v.g()) : v.g());
  return success();
}

//===----------------------------------------------------------------------===//
// Matrix products
//===----------------------------------------------------------------------===//

LogicalResult mmVjp(Vjp &v, MmOp op) {
  if (v.wants(0))
    v.set(0, op,
          MmOp::create(v.b, v.loc, v.g(), TransposeOp::create(v.b, v.loc, op.getMat2(), 0, 1)));
  if (v.wants(1))
    v.set(1, op,
          MmOp::create(v.b, v.loc, TransposeOp::create(v.b, v.loc, op.getSelf(), 0, 1), v.g()));
  return success();
}

LogicalResult bmmVjp(Vjp &v, BmmOp op) {
  if (v.wants(0))
    v.set(0, op,
          BmmOp::create(v.b, v.loc, v.g(), TransposeOp::create(v.b, v.loc, op.getMat2(), 1, 2)));
  if (v.wants(1))
    v.set(1, op,
          BmmOp::create(v.b, v.loc, TransposeOp::create(v.b, v.loc, op.getSelf(), 1, 2), v.g()));
  return success();
}

/// convolution_backward: the input and weight gradients are their own ops (transposed
/// convolution and correlation with the output gradient); the bias gets the sum over
/// every dimension but the channels.
LogicalResult convolutionVjp(Vjp &v, ConvolutionOp op) {
  if (op.getTransposed())
    return op.emitOpError("derivative of a transposed convolution is not supported yet");
  Value g = v.g();
  if (v.wants(0))
    v.set(0, op,
          ConvolutionBackwardInputOp::create(
              v.b, v.loc, g, op.getWeight(),
              ShapeAttr::get(v.ctx(), typeOf(op.getInput()).getSizes()), op.getStrideAttr(),
              op.getPaddingAttr(), op.getDilationAttr(), op.getGroupsAttr()));
  if (v.wants(1))
    v.set(1, op,
          ConvolutionBackwardWeightOp::create(
              v.b, v.loc, g, op.getInput(),
              ShapeAttr::get(v.ctx(), typeOf(op.getWeight()).getSizes()), op.getStrideAttr(),
              op.getPaddingAttr(), op.getDilationAttr(), op.getGroupsAttr()));
  if (op.getBias() && v.wants(2)) {
    SmallVector<int64_t> dims;
    for (int64_t d = 0, rank = typeOf(g).getRank(); d < rank; ++d)
      if (d != 1)
        dims.push_back(d);
    v.set(2, op, SumOp::create(v.b, v.loc, g, v.b.getDenseI64ArrayAttr(dims), false, TypeAttr()));
  }
  return success();
}

/// convolution_backward_input, which is also how a transposed convolution is built: it
/// is linear in both operands; the gradient's gradient is the convolution it is the
/// gradient of, and the weight's the weight gradient of that convolution, with the
/// incoming gradient as its input.
LogicalResult convolutionBackwardInputVjp(Vjp &v, ConvolutionBackwardInputOp op) {
  Value g = v.g();
  if (v.wants(0))
    v.set(0, op,
          ConvolutionOp::create(v.b, v.loc, g, op.getWeight(), Value(), op.getStride(),
                                op.getPadding(), op.getDilation(), false, DenseI64ArrayAttr(),
                                op.getGroups()));
  if (v.wants(1))
    v.set(1, op,
          ConvolutionBackwardWeightOp::create(
              v.b, v.loc, op.getGradOutput(), g,
              ShapeAttr::get(v.ctx(), typeOf(op.getWeight()).getSizes()), op.getStrideAttr(),
              op.getPaddingAttr(), op.getDilationAttr(), op.getGroupsAttr()));
  return success();
}

//===----------------------------------------------------------------------===//
// Pooling, embedding, losses
//===----------------------------------------------------------------------===//

LogicalResult maxPoolVjp(Vjp &v, MaxPool2dOp op) {
  if (!v.g(0))
    return success();
  Value indices;
  if (op.getWithIndices()) {
    indices = op.getResult(1);
  } else {
    // The forward did not keep the argmax: a pooling that does.
    auto withIndices = MaxPool2dOp::create(
        v.b, v.loc, op.getSelf(), op.getKernelSizeAttr(), op.getStrideAttr(), op.getPaddingAttr(),
        op.getDilationAttr(), op.getCeilModeAttr(), v.b.getUnitAttr());
    indices = withIndices.getResult(1);
  }
  v.set(0, op,
        MaxPool2dBackwardOp::create(v.b, v.loc, v.g(0), op.getSelf(), op.getKernelSizeAttr(),
                                    op.getStrideAttr(), op.getPaddingAttr(), op.getDilationAttr(),
                                    op.getCeilModeAttr(), indices));
  return success();
}

/// A fused attention (FlashAttention-2's backward, from the output and the row
/// log-sum-exp; PyTorch's _scaled_dot_product_flash_attention_backward). An attention
/// that does not return its log-sum-exp is replaced in the forward by one that does:
/// the fused kernel computes it anyway.
LogicalResult attentionVjp(Vjp &v, ScaledDotProductAttentionOp op) {
  if (!v.g(0))
    return success();
  if (!op.hasFusedLowering())
    return op.emitOpError("has no fused lowering and should have been decomposed before "
                          "autodiff");
  ScaledDotProductAttentionOp fused = op;
  if (!op.getWithLogsumexp()) {
    OpBuilder b(op);
    fused = ScaledDotProductAttentionOp::create(
        b, op.getLoc(), op.getQuery(), op.getKey(), op.getValue(), op.getAttnMask(),
        op.getDropoutPAttr(), op.getIsCausalAttr(), op.getScaleAttr(), op.getEnableGqaAttr(),
        b.getUnitAttr());
    fused->setDiscardableAttrs(op->getDiscardableAttrDictionary());
    op->getResult(0).replaceAllUsesWith(fused->getResult(0));
  }
  bool maskGrad = op.getAttnMask() && v.wants(3);
  auto backward = ScaledDotProductAttentionBackwardOp::create(
      v.b, v.loc, v.g(0), op.getQuery(), op.getKey(), op.getValue(), fused->getResult(0),
      fused->getResult(1), op.getAttnMask(), op.getIsCausalAttr(),
      v.b.getF64FloatAttr(*op.resolvedScale()), maskGrad ? v.b.getUnitAttr() : UnitAttr());
  for (unsigned i = 0; i < backward->getNumResults(); ++i)
    v.set(i, op, backward->getResult(i));
  return success();
}

LogicalResult avgPoolVjp(Vjp &v, AvgPool2dOp op) {
  v.set(0, op,
        AvgPool2dBackwardOp::create(v.b, v.loc, v.g(), op.getSelf(), op.getKernelSizeAttr(),
                                    op.getStrideAttr(), op.getPaddingAttr(), op.getCeilModeAttr(),
                                    op.getCountIncludePadAttr(), op.getDivisorOverrideAttr()));
  return success();
}

LogicalResult embeddingVjp(Vjp &v, EmbeddingOp op) {
  std::optional<int64_t> rows = getConstantSize(typeOf(op.getWeight()).getSizes()[0]);
  if (!rows)
    return op.emitOpError("derivative needs a static number of embeddings");
  if (op.getScaleGradByFreq())
    return op.emitOpError("derivative with scale_grad_by_freq is not supported yet");
  v.set(0, op,
        EmbeddingBackwardOp::create(v.b, v.loc, v.g(), op.getIndices(),
                                    v.b.getI64IntegerAttr(*rows), op.getPaddingIdxAttr(),
                                    op.getScaleGradByFreqAttr()));
  return success();
}

/// index of leading dimensions: the indexed dimensions flattened into rows of
/// [N, D], the indices into one linear row index, and embedding's gradient (a
/// scatter-add of the gradient rows, summing repeated indices) viewed back.
LogicalResult indexVjp(Vjp &v, IndexOp op) {
  if (!v.wants(0))
    return success();
  if (op.getDimsAttr())
    return op.emitOpError("derivative of an index with dims (run tgc-decompose first)");
  ArrayRef<AffineExpr> sizes = typeOf(op.getSelf()).getSizes();
  int64_t indexed = static_cast<int64_t>(op.getIndices().size());
  SmallVector<int64_t> extents;
  for (AffineExpr size : sizes.take_front(indexed)) {
    std::optional<int64_t> c = getConstantSize(size);
    if (!c)
      return op.emitOpError("derivative needs static sizes of the indexed dimensions");
    extents.push_back(*c);
  }
  auto i64 = [&](int64_t c) -> Value {
    return arith::ConstantOp::create(v.b, v.loc, v.b.getI64IntegerAttr(c));
  };
  Value linear;
  int64_t stride = 1;
  for (int64_t d = indexed - 1; d >= 0; --d) {
    Value i = op.getIndices()[d];
    if (!typeOf(i).getDtype().isInteger(64))
      i = ToDTypeOp::create(v.b, v.loc, i, TypeAttr::get(v.b.getI64Type()));
    // A negative index counts from the end.
    i = v.where(v.lt(i, i64(0)), v.add(i, i64(extents[d])), i);
    Value term = stride == 1 ? i : v.mul(i, i64(stride));
    linear = linear ? v.add(term, linear) : term;
    stride *= extents[d];
  }
  AffineExpr width = getAffineConstantExpr(1, v.ctx());
  for (AffineExpr size : sizes.drop_front(indexed))
    width = width * size;
  SmallVector<AffineExpr> rows(typeOf(linear).getSizes());
  rows.push_back(width);
  Value g = ViewOp::create(v.b, v.loc, v.g(), ShapeAttr::get(v.ctx(), rows));
  Value table = EmbeddingBackwardOp::create(v.b, v.loc, g, linear, v.b.getI64IntegerAttr(stride),
                                            v.b.getI64IntegerAttr(-1), v.b.getBoolAttr(false));
  v.set(0, op, ViewOp::create(v.b, v.loc, table, ShapeAttr::get(v.ctx(), sizes)));
  return success();
}

LogicalResult nllLossVjp(Vjp &v, NllLossOp op) {
  if (!v.g(0))
    return success();
  v.set(0, op,
        NllLossBackwardOp::create(v.b, v.loc, v.g(0), op.getSelf(), op.getTarget(), op.getWeight(),
                                  op.getTotalWeight(), op.getReductionAttr(),
                                  op.getIgnoreIndexAttr()));
  return success();
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

/// The reduced dimensions of a reduction over `x` (all of them when `dims` is empty).
SmallVector<int64_t> reducedDims(DenseI64ArrayAttr dims, int64_t rank) {
  SmallVector<int64_t> out;
  if (!dims || dims.empty()) {
    out.resize(rank);
    std::iota(out.begin(), out.end(), 0);
    return out;
  }
  for (int64_t d : dims.asArrayRef())
    if (rank > 0) // a 0-d tensor's dimension 0 or -1 reduces nothing
      out.push_back(*normalizeDim(d, rank));
  llvm::sort(out);
  return out;
}

/// A reduction's result (or its gradient) with the reduced dimensions back as size 1.
Value restoreReduced(Vjp &v, Value r, ArrayRef<int64_t> dims, bool keepdim, Value x) {
  if (keepdim)
    return r;
  SmallVector<AffineExpr> sizes(typeOf(x).getSizes());
  for (int64_t d : dims)
    sizes[d] = getAffineConstantExpr(1, v.ctx());
  return ViewOp::create(v.b, v.loc, r, ShapeAttr::get(v.ctx(), sizes));
}

Value expandTo(Vjp &v, Value r, Value x) {
  return ExpandOp::create(v.b, v.loc, r, ShapeAttr::get(v.ctx(), typeOf(x).getSizes()));
}

LogicalResult sumVjp(Vjp &v, SumOp op) {
  Value x = op.getSelf();
  SmallVector<int64_t> dims = reducedDims(op.getDimAttr(), typeOf(x).getRank());
  v.set(0, op, expandTo(v, restoreReduced(v, v.g(), dims, op.getKeepdim(), x), x));
  return success();
}

/// cumsum: each input element reaches every output from its position on, so the
/// gradient is the cumulative sum of the output gradient from the other end.
LogicalResult cumsumVjp(Vjp &v, CumsumOp op) {
  auto grad = CumsumOp::create(v.b, v.loc, v.g(), op.getDim(), TypeAttr(), !op.getReverse());
  v.set(0, op, grad);
  return success();
}

/// amax/amin: the gradient is shared evenly by the elements equal to the extremum.
template <typename OpT> LogicalResult extremumReductionVjp(Vjp &v, OpT op) {
  Value x = op.getSelf();
  SmallVector<int64_t> dims = reducedDims(op.getDimAttr(), typeOf(x).getRank());
  Value y = restoreReduced(v, op.getResult(), dims, op.getKeepdim(), x);
  Value g = restoreReduced(v, v.g(), dims, op.getKeepdim(), x);
  Value hit = v.eq(x, y);
  Value count = SumOp::create(v.b, v.loc, hit, v.b.getDenseI64ArrayAttr(dims), true, TypeAttr());
  v.set(0, op, v.keepWhere(hit, v.div(g, count)));
  return success();
}

//===----------------------------------------------------------------------===//
// Views and data movement
//===----------------------------------------------------------------------===//

/// The gradient reshaped to the operand's sizes (view, squeeze, unsqueeze).
template <typename OpT> LogicalResult reshapeVjp(Vjp &v, OpT op) {
  Value x = op->getOperand(0);
  v.set(0, op, ViewOp::create(v.b, v.loc, v.g(), ShapeAttr::get(v.ctx(), typeOf(x).getSizes())));
  return success();
}

template <typename OpT> LogicalResult identityVjp(Vjp &v, OpT op) {
  v.set(0, op, v.g());
  return success();
}

/// detach: no gradient flows back.
LogicalResult detachVjp(Vjp &, DetachOp) { return success(); }

LogicalResult permuteVjp(Vjp &v, PermuteOp op) {
  ArrayRef<int64_t> dims = op.getDims();
  int64_t rank = dims.size();
  SmallVector<int64_t> inverse(rank);
  for (int64_t i = 0; i < rank; ++i)
    inverse[*normalizeDim(dims[i], rank)] = i;
  v.set(0, op, PermuteOp::create(v.b, v.loc, v.g(), v.b.getDenseI64ArrayAttr(inverse)));
  return success();
}

LogicalResult transposeVjp(Vjp &v, TransposeOp op) {
  v.set(0, op, TransposeOp::create(v.b, v.loc, v.g(), op.getDim0(), op.getDim1()));
  return success();
}

LogicalResult tVjp(Vjp &v, TOp op) {
  Value g = v.g();
  if (typeOf(g).getRank() == 2)
    g = TransposeOp::create(v.b, v.loc, g, 0, 1);
  v.set(0, op, g);
  return success();
}

/// expand: sum over the broadcast dimensions (`like` does exactly that).
LogicalResult expandVjp(Vjp &v, ExpandOp op) {
  v.set(0, op, v.g());
  return success();
}

LogicalResult sliceVjp(Vjp &v, SliceOp op) {
  Value zeros = v.zerosLike(op.getSelf());
  v.set(0, op,
        SliceScatterOp::create(v.b, v.loc, zeros, v.g(), op.getDim(), op.getStartAttr(),
                               op.getEndAttr(), op.getStep()));
  return success();
}

LogicalResult selectVjp(Vjp &v, SelectOp op) {
  Value zeros = v.zerosLike(op.getSelf());
  v.set(0, op, SelectScatterOp::create(v.b, v.loc, zeros, v.g(), op.getDim(), op.getIndex()));
  return success();
}

/// index_put of leading dimensions (derivatives.yaml): self's gradient is g with the
/// written positions zeroed (g itself when accumulating), the values' is g at the
/// indices (every write of a repeated position gets it, as in eager).
LogicalResult indexPutVjp(Vjp &v, IndexPutOp op) {
  if (op.getDimsAttr())
    return op.emitOpError("derivative of an index_put with dims (run tgc-decompose first)");
  if (v.wants(0))
    v.set(0, op,
          op.getAccumulate()
              ? v.g()
              : IndexPutOp::create(v.b, v.loc, v.g(), op.getIndices(), v.zerosLike(op.getValues()),
                                   false, DenseI64ArrayAttr())
                    .getResult());
  unsigned values = 1 + op.getIndices().size();
  if (v.wants(values))
    v.set(values, op, IndexOp::create(v.b, v.loc, v.g(), op.getIndices(), DenseI64ArrayAttr()));
  return success();
}

LogicalResult sliceScatterVjp(Vjp &v, SliceScatterOp op) {
  if (v.wants(0))
    v.set(0, op,
          SliceScatterOp::create(v.b, v.loc, v.g(), v.zerosLike(op.getSrc()), op.getDim(),
                                 op.getStartAttr(), op.getEndAttr(), op.getStep()));
  if (v.wants(1))
    v.set(1, op,
          SliceOp::create(v.b, v.loc, v.g(), op.getDim(), op.getStartAttr(), op.getEndAttr(),
                          op.getStep()));
  return success();
}

LogicalResult selectScatterVjp(Vjp &v, SelectScatterOp op) {
  if (v.wants(0))
    v.set(0, op,
          SelectScatterOp::create(v.b, v.loc, v.g(), v.zerosLike(op.getSrc()), op.getDim(),
                                  op.getIndex()));
  if (v.wants(1))
    v.set(1, op, SelectOp::create(v.b, v.loc, v.g(), op.getDim(), op.getIndex()));
  return success();
}

/// cat: each input gets its slice of the gradient.
LogicalResult catVjp(Vjp &v, CatOp op) {
  int64_t rank = typeOf(op.getResult()).getRank();
  int64_t dim = *normalizeDim(op.getDim(), rank);
  AffineExpr offset = getAffineConstantExpr(0, v.ctx());
  for (auto [i, input] : llvm::enumerate(op.getTensors())) {
    if (typeOf(input).getRank() != rank) { // skipped by cat (isSkippedByCat): empty
      if (v.wants(i))
        v.set(i, op, v.zerosLike(input));
      continue;
    }
    AffineExpr size = typeOf(input).getSizes()[dim];
    if (v.wants(i))
      v.set(i, op,
            SliceOp::create(v.b, v.loc, v.g(), dim, ShapeAttr::get(v.ctx(), {offset}),
                            ShapeAttr::get(v.ctx(), {offset + size}), 1));
    offset = offset + size;
  }
  return success();
}

template <typename OpT> LogicalResult triangleVjp(Vjp &v, OpT op) {
  v.set(0, op, OpT::create(v.b, v.loc, v.g(), op.getDiagonal()));
  return success();
}

/// Ops whose result depends on an operand's sizes only (full_like): no gradient.
template <typename OpT> LogicalResult noGradient(Vjp &, OpT) { return success(); }

/// gather along `dim`: each gradient element goes back to the position its index names
/// (scatter-add), built as a one-hot comparison against the positions of `dim`.
LogicalResult gatherVjp(Vjp &v, GatherOp op) {
  Value self = op.getSelf(), index = op.getIndex(), g = v.g();
  ArrayRef<AffineExpr> selfSizes = typeOf(self).getSizes();
  ArrayRef<AffineExpr> indexSizes = typeOf(index).getSizes();
  int64_t rank = selfSizes.size();
  std::optional<int64_t> dim = normalizeDim(op.getDim(), rank);
  if (!dim)
    return op.emitOpError("dim out of range");
  for (int64_t d = 0; d < rank; ++d)
    if (d != *dim && indexSizes[d] != selfSizes[d])
      return op.emitOpError("derivative needs the index to cover `self` outside `dim`");
  std::optional<int64_t> positions = getConstantSize(selfSizes[*dim]);
  if (!positions)
    return op.emitOpError("derivative needs a static size along `dim`");
  MLIRContext *ctx = v.ctx();
  // hit[..., k, ..., c] = index[..., k, ...] == c, for the positions c of `dim`.
  SmallVector<AffineExpr> arangeSizes(rank, getAffineConstantExpr(1, ctx));
  arangeSizes.push_back(selfSizes[*dim]);
  Value arange =
      ArangeOp::create(v.b, v.loc, IntegerAttr(), v.b.getI64IntegerAttr(*positions), IntegerAttr(),
                       TypeAttr::get(typeOf(index).getDtype()), DeviceAttr());
  arange = ViewOp::create(v.b, v.loc, arange, ShapeAttr::get(ctx, arangeSizes));
  Value hit = v.eq(UnsqueezeOp::create(v.b, v.loc, index, rank), arange);
  Value spread = v.keepWhere(hit, UnsqueezeOp::create(v.b, v.loc, g, rank));
  // Sum over the gathered positions k; the positions c then move back to `dim`.
  Value summed =
      SumOp::create(v.b, v.loc, spread, v.b.getDenseI64ArrayAttr({*dim}), false, TypeAttr());
  SmallVector<int64_t> order;
  for (int64_t d = 0; d < rank - 1; ++d) {
    if (d == *dim)
      order.push_back(rank - 1);
    order.push_back(d);
  }
  if (*dim == rank - 1)
    order.push_back(rank - 1);
  v.set(0, op, PermuteOp::create(v.b, v.loc, summed, v.b.getDenseI64ArrayAttr(order)));
  return success();
}

/// scatter_add: `self`'s elements pass their gradient through; each `src` element gets
/// the gradient of the position it was added to (a gather at `index`).
/// scatter (src and value): the written positions take no gradient from `self`
/// (grad.scatter(dim, index, 0)); `src` gets the gradient at the positions it wrote
/// (grad.gather(dim, index)). The scalar value has none.
template <typename OpT> LogicalResult scatterVjp(Vjp &v, OpT op) {
  if (v.wants(0))
    v.set(0, op,
          ScatterValueOp::create(v.b, v.loc, v.g(), op.getDim(), op.getIndex(), v.scalar(0.0)));
  if constexpr (std::is_same_v<OpT, ScatterOp>) {
    if (v.wants(2))
      v.set(2, op, GatherOp::create(v.b, v.loc, v.g(), op.getDim(), op.getIndex(), false));
  }
  return success();
}

LogicalResult scatterAddVjp(Vjp &v, ScatterAddOp op) {
  v.set(0, op, v.g());
  if (!v.wants(2))
    return success();
  if (typeOf(op.getIndex()).getSizes() != typeOf(op.getSrc()).getSizes())
    return op.emitOpError("derivative needs an index of src's sizes");
  v.set(2, op, GatherOp::create(v.b, v.loc, v.g(), op.getDim(), op.getIndex(), false));
  return success();
}

/// scatter_reduce with "sum", "amax" or "amin" (derivatives.yaml's
/// scatter_reduce_backward). For the extrema the gradient of each result element is
/// shared evenly among the elements (of `self` and of `src`) equal to it; without
/// `include_self` the written positions of `self` get none.
LogicalResult scatterReduceVjp(Vjp &v, ScatterReduceOp op) {
  Value self = op.getSelf(), index = op.getIndex(), src = op.getSrc(), g = v.g();
  int64_t dim = op.getDim();
  if (typeOf(index).getSizes() != typeOf(src).getSizes())
    return op.emitOpError("derivative needs an index of src's sizes");
  auto gather = [&](Value x) { return GatherOp::create(v.b, v.loc, x, dim, index, false); };
  Value gradSelf, gradSrc;
  StringRef reduce = op.getReduce();
  if (reduce == "sum") {
    gradSelf = g;
    gradSrc = gather(g);
  } else if (reduce == "amax" || reduce == "amin") {
    Type dtype = typeOf(g).getDtype();
    auto asFloat = [&](Value b) { return ToDTypeOp::create(v.b, v.loc, b, TypeAttr::get(dtype)); };
    Value result = op.getResult();
    Value selfHit = v.eq(self, result), srcHit = v.eq(src, gather(result));
    Value count = ScatterAddOp::create(v.b, v.loc, asFloat(selfHit), dim, index, asFloat(srcHit));
    Value shared = v.div(g, count);
    gradSelf = v.keepWhere(selfHit, shared);
    gradSrc = v.keepWhere(srcHit, gather(shared));
  } else {
    return op.emitOpError("derivative of reduce \"") << reduce << "\" is not supported yet";
  }
  if (!op.getIncludeSelf())
    gradSelf = ScatterValueOp::create(v.b, v.loc, gradSelf, dim, index, v.scalar(0.0));
  v.set(0, op, gradSelf);
  v.set(2, op, gradSrc);
  return success();
}

/// max.dim / min.dim: the gradient of the values goes to the position of each
/// extremum (its index along `dim`), the rest of `self` gets 0.
template <typename OpT> LogicalResult extremumDimVjp(Vjp &v, OpT op) {
  if (!v.g(0) || !v.wants(0))
    return success();
  Value self = op.getSelf();
  ArrayRef<AffineExpr> sizes = typeOf(self).getSizes();
  int64_t rank = sizes.size();
  if (rank == 0) {
    v.set(0, op, v.g(0));
    return success();
  }
  int64_t dim = *normalizeDim(op.getDim(), rank);
  std::optional<int64_t> positions = getConstantSize(sizes[dim]);
  if (!positions)
    return op.emitOpError("derivative needs a static size along `dim`");
  Value index = op.getIndices(), g = v.g(0);
  if (!op.getKeepdim()) {
    index = UnsqueezeOp::create(v.b, v.loc, index, dim);
    g = UnsqueezeOp::create(v.b, v.loc, g, dim);
  }
  // hit[..., c, ...] = index[..., 0, ...] == c, for the positions c of `dim`.
  SmallVector<AffineExpr> arangeSizes(rank, getAffineConstantExpr(1, v.ctx()));
  arangeSizes[dim] = sizes[dim];
  Value arange =
      ArangeOp::create(v.b, v.loc, IntegerAttr(), v.b.getI64IntegerAttr(*positions), IntegerAttr(),
                       TypeAttr::get(typeOf(index).getDtype()), DeviceAttr());
  arange = ViewOp::create(v.b, v.loc, arange, ShapeAttr::get(v.ctx(), arangeSizes));
  v.set(0, op, v.keepWhere(v.eq(index, arange), g));
  return success();
}

/// A gradient hook: the gradient flowing back is `@hook(grad)`.
LogicalResult gradHookVjp(Vjp &v, GradHookOp op) {
  auto hook = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(op, op.getHookAttr());
  if (!hook)
    return op.emitOpError("hook ") << op.getHookAttr() << " is not a function";
  FailureOr<SmallVector<Value>> results = instantiateFunction(v.b, v.loc, hook, {v.g()});
  if (failed(results))
    return failure();
  if (results->size() != 1 || !isTensor(results->front()) ||
      typeOf(results->front()).getSizes() != typeOf(v.g()).getSizes() ||
      typeOf(results->front()).getDtype() != typeOf(v.g()).getDtype())
    return op.emitOpError("hook ")
           << op.getHookAttr() << " must return one tensor of the gradient's sizes and dtype";
  v.set(0, op, results->front());
  return success();
}

/// A custom autograd.Function: `@backward_fn(saved..., output grads...)` gives the
/// gradients of the operands listed in `gradient_of`; an output no gradient reaches gets
/// zeros (PyTorch materializes them the same way).
LogicalResult autogradFunctionVjp(Vjp &v, AutogradFunctionOp op) {
  if (!op.getBackwardFnAttr())
    return op.emitOpError("has no backward function (no input required grad at capture)");
  auto backward = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(op, op.getBackwardFnAttr());
  if (!backward)
    return op.emitOpError("backward ") << op.getBackwardFnAttr() << " is not a function";
  SmallVector<Value> args(op.getSaved());
  for (auto [i, output] : llvm::enumerate(op.getOutputs()))
    args.push_back(v.g(i) ? v.g(i) : v.zerosLike(output));
  FailureOr<SmallVector<Value>> grads = instantiateFunction(v.b, v.loc, backward, args);
  if (failed(grads))
    return failure();
  size_t numGrads = op.getGradientOf().size();
  if (grads->size() != numGrads + op.getBackwardMutates().size())
    return op.emitOpError("backward ")
           << op.getBackwardFnAttr() << " returns " << grads->size() << " values for " << numGrads
           << " gradients and " << op.getBackwardMutates().size() << " writes";
  for (auto [index, written] :
       llvm::zip(op.getBackwardMutates(), ArrayRef(*grads).drop_front(numGrads))) {
    Value operand = op->getOperand(index);
    if (!isTensor(written) || typeOf(written).getSizes() != typeOf(operand).getSizes() ||
        typeOf(written).getDtype() != typeOf(operand).getDtype())
      return op.emitOpError("backward ")
             << op.getBackwardFnAttr() << " writes " << written.getType() << " into operand "
             << index << " of type " << operand.getType();
    v.writes.push_back({static_cast<unsigned>(index), written});
  }
  for (auto [index, grad] : llvm::zip(op.getGradientOf(), *grads)) {
    if (!isTensor(grad) || !isTensor(op->getOperand(index)))
      return op.emitOpError("backward ")
             << op.getBackwardFnAttr() << " must return tensors as gradients";
    if (!v.wants(index))
      continue;
    Value operand = op->getOperand(index);
    Value like = v.like(grad, operand);
    if (typeOf(like).getSizes() != typeOf(operand).getSizes())
      return op.emitOpError("backward ")
             << op.getBackwardFnAttr() << " returns a gradient of sizes " << typeOf(grad)
             << " for operand " << index << " of type " << typeOf(operand);
    v.out[index] = like;
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Registration
//===----------------------------------------------------------------------===//

/// The external model running `Fn` for `OpT`.
template <typename OpT, LogicalResult (*Fn)(Vjp &, OpT)>
struct Formula : DifferentiableOpInterface::ExternalModel<Formula<OpT, Fn>, OpT> {
  LogicalResult buildVjp(Operation *op, OpBuilder &builder, ArrayRef<Value> resultGrads,
                         ArrayRef<bool> needsGrad, SmallVectorImpl<Value> &operandGrads,
                         SmallVectorImpl<std::pair<unsigned, Value>> &operandWrites) const {
    operandGrads.assign(op->getNumOperands(), Value());
    Vjp v{builder, op->getLoc(), resultGrads, needsGrad, operandGrads, operandWrites};
    return Fn(v, llvm::cast<OpT>(op));
  }
};

template <typename OpT, LogicalResult (*Fn)(Vjp &, OpT)> void attach(MLIRContext *ctx) {
  OpT::template attachInterface<Formula<OpT, Fn>>(*ctx);
}

template <typename OpT, Value (*F)(Vjp &, OpT, Value, Value, Value)>
void attachUnary(MLIRContext *ctx) {
  attach<OpT, unary<OpT, F>>(ctx);
}

} // namespace

void tgc::attachDerivatives(MLIRContext *ctx) {
  attachUnary<ReluOp, dRelu>(ctx);
  attachUnary<NegOp, dNeg>(ctx);
  attachUnary<AbsOp, dAbs>(ctx);
  attachUnary<TanhOp, dTanh>(ctx);
  attachUnary<SigmoidOp, dSigmoid>(ctx);
  attachUnary<ExpOp, dExp>(ctx);
  attachUnary<LogOp, dLog>(ctx);
  attachUnary<Log1pOp, dLog1p>(ctx);
  attachUnary<Log2Op, dLog2>(ctx);
  attachUnary<Log10Op, dLog10>(ctx);
  attachUnary<Expm1Op, dExpm1>(ctx);
  attachUnary<TanOp, dTan>(ctx);
  attachUnary<AsinOp, dAsin>(ctx);
  attachUnary<AcosOp, dAcos>(ctx);
  attachUnary<AtanOp, dAtan>(ctx);
  attachUnary<SinhOp, dSinh>(ctx);
  attachUnary<CoshOp, dCosh>(ctx);
  attachUnary<AsinhOp, dAsinh>(ctx);
  attachUnary<AcoshOp, dAcosh>(ctx);
  attachUnary<AtanhOp, dAtanh>(ctx);
  attachUnary<EluOp, dElu>(ctx);
  attachUnary<SqrtOp, dSqrt>(ctx);
  attachUnary<RsqrtOp, dRsqrt>(ctx);
  attachUnary<ErfOp, dErf>(ctx);
  attachUnary<ReciprocalOp, dReciprocal>(ctx);
  attachUnary<SiluOp, dSilu>(ctx);
  attachUnary<SinOp, dSin>(ctx);
  attachUnary<CosOp, dCos>(ctx);
  attachUnary<HardtanhOp, dHardtanh>(ctx);
  attachUnary<HardsigmoidOp, dHardsigmoid>(ctx);
  attachUnary<HardswishOp, dHardswish>(ctx);
  attachUnary<LeakyReluOp, dLeakyRelu>(ctx);
  attachUnary<GeluOp, dGelu>(ctx);

  attach<AddOp, additive<AddOp, false, false>>(ctx);
  attach<SubOp, additive<SubOp, true, false>>(ctx);
  attach<RsubOp, additive<RsubOp, false, true>>(ctx);
  attach<MulOp, mulVjp>(ctx);
  attach<DivOp, divVjp>(ctx);
  attach<PowOp, powVjp>(ctx);
  attach<MaximumOp, extremumVjp<MaximumOp, true>>(ctx);
  attach<MinimumOp, extremumVjp<MinimumOp, false>>(ctx);
  attach<Atan2Op, atan2Vjp>(ctx);
  attach<FmodOp, modVjp<FmodOp, false>>(ctx);
  attach<RemainderOp, modVjp<RemainderOp, true>>(ctx);
  attach<WhereOp, whereVjp>(ctx);
  attach<MaskedFillOp, maskedFillVjp>(ctx);
  attach<ToDTypeOp, toDTypeVjp>(ctx);
  attach<CumsumOp, cumsumVjp>(ctx);
  attach<ClampOp, clampVjp>(ctx);

  attach<MmOp, mmVjp>(ctx);
  attach<ConvolutionOp, convolutionVjp>(ctx);
  attach<ConvolutionBackwardInputOp, convolutionBackwardInputVjp>(ctx);
  attach<MaxPool2dOp, maxPoolVjp>(ctx);
  attach<ScaledDotProductAttentionOp, attentionVjp>(ctx);
  attach<AvgPool2dOp, avgPoolVjp>(ctx);
  attach<EmbeddingOp, embeddingVjp>(ctx);
  attach<IndexOp, indexVjp>(ctx);
  attach<NllLossOp, nllLossVjp>(ctx);
  attach<BmmOp, bmmVjp>(ctx);

  attach<SumOp, sumVjp>(ctx);
  attach<AmaxOp, extremumReductionVjp<AmaxOp>>(ctx);
  attach<AminOp, extremumReductionVjp<AminOp>>(ctx);

  attach<ViewOp, reshapeVjp<ViewOp>>(ctx);
  attach<SqueezeOp, reshapeVjp<SqueezeOp>>(ctx);
  attach<UnsqueezeOp, reshapeVjp<UnsqueezeOp>>(ctx);
  attach<AliasOp, identityVjp<AliasOp>>(ctx);
  attach<CloneOp, identityVjp<CloneOp>>(ctx);
  attach<DetachOp, detachVjp>(ctx);
  attach<PermuteOp, permuteVjp>(ctx);
  attach<TransposeOp, transposeVjp>(ctx);
  attach<TOp, tVjp>(ctx);
  attach<ExpandOp, expandVjp>(ctx);
  attach<SliceOp, sliceVjp>(ctx);
  attach<SelectOp, selectVjp>(ctx);
  attach<SliceScatterOp, sliceScatterVjp>(ctx);
  attach<IndexPutOp, indexPutVjp>(ctx);
  attach<SelectScatterOp, selectScatterVjp>(ctx);
  attach<CatOp, catVjp>(ctx);
  attach<TrilOp, triangleVjp<TrilOp>>(ctx);
  attach<TriuOp, triangleVjp<TriuOp>>(ctx);
  attach<GradHookOp, gradHookVjp>(ctx);
  attach<AutogradFunctionOp, autogradFunctionVjp>(ctx);
  attach<FullLikeOp, noGradient<FullLikeOp>>(ctx);
  // Piecewise constant: a zero gradient, as derivatives.yaml states.
  attach<FloorOp, noGradient<FloorOp>>(ctx);
  attach<CeilOp, noGradient<CeilOp>>(ctx);
  attach<RoundOp, noGradient<RoundOp>>(ctx);
  attach<TruncOp, noGradient<TruncOp>>(ctx);
  attach<SignOp, noGradient<SignOp>>(ctx);
  attach<GatherOp, gatherVjp>(ctx);
  attach<ScatterOp, scatterVjp<ScatterOp>>(ctx);
  attach<ScatterValueOp, scatterVjp<ScatterValueOp>>(ctx);
  attach<ScatterAddOp, scatterAddVjp>(ctx);
  attach<ScatterReduceOp, scatterReduceVjp>(ctx);
  attach<MaxDimOp, extremumDimVjp<MaxDimOp>>(ctx);
  attach<MinDimOp, extremumDimVjp<MinDimOp>>(ctx);
}
