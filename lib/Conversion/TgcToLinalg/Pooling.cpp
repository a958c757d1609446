// Lowering of 2-d pooling (max, with or without indices, and average) to linalg.generic
// over the padded input.
#include "tgc/Conversion/TgcToLinalg.h"
#include "tgc/Dialect/ScalarBuilder.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <limits>

using namespace mlir;
using namespace tgc;

namespace {

/// The window of a pooling op and the padding its input needs: `padding` on the low
/// side, and on the high side enough for the last (ceil-mode) window.
struct PoolWindow {
  Window window;
  SmallVector<int64_t, 2> input, output, highPad;
};

FailureOr<PoolWindow> poolWindow(Operation *op, BaseTensorType in, BaseTensorType out,
                                 ArrayRef<int64_t> kernel, ArrayRef<int64_t> stride,
                                 ArrayRef<int64_t> padding, ArrayRef<int64_t> dilation) {
  if (in.getRank() != 4)
    return op->emitOpError("pooling lowering supports NCHW (4-d) inputs");
  FailureOr<Window> w = expandWindow(op->getLoc(), kernel, stride, padding, dilation, 2);
  if (failed(w))
    return failure();
  PoolWindow pw{*w, {}, {}, {}};
  for (int i = 0; i < 2; ++i) {
    std::optional<int64_t> h = getConstantSize(in.getSizes()[2 + i]);
    std::optional<int64_t> o = getConstantSize(out.getSizes()[2 + i]);
    if (!h || !o)
      return op->emitOpError("pooling needs static spatial sizes");
    pw.input.push_back(*h);
    pw.output.push_back(*o);
    int64_t needed = (*o - 1) * w->stride[i] + w->dilation[i] * (w->kernel[i] - 1) + 1;
    pw.highPad.push_back(std::max<int64_t>(w->padding[i], needed - *h - w->padding[i]));
  }
  return pw;
}

/// `input` padded with `value`: low = padding, high = highPad.
Value padInput(OpBuilder &b, Location loc, Value input, const PoolWindow &pw, Value value) {
  auto type = llvm::cast<RankedTensorType>(input.getType());
  SmallVector<int64_t> shape(type.getShape());
  SmallVector<OpFoldResult> low(4, b.getIndexAttr(0)), high(4, b.getIndexAttr(0));
  for (int i = 0; i < 2; ++i) {
    low[2 + i] = b.getIndexAttr(pw.window.padding[i]);
    high[2 + i] = b.getIndexAttr(pw.highPad[i]);
    shape[2 + i] += pw.window.padding[i] + pw.highPad[i];
  }
  return tensor::PadOp::create(b, loc, RankedTensorType::get(shape, type.getElementType()), input,
                               low, high, value)
      .getResult();
}

/// Maps of a pooling loop nest (n, c, oh, ow, kh, kw): the padded input read at
/// (oh * s + kh * d, ow * s + kw * d), a [KH, KW] window operand that only gives the
/// window loops their bounds (as linalg's named pooling ops do), and the outputs at
/// (n, c, oh, ow).
SmallVector<AffineMap> poolMaps(MLIRContext *ctx, const Window &w, unsigned numOutputs) {
  AffineExpr n, c, oh, ow, kh, kw;
  bindDims(ctx, n, c, oh, ow, kh, kw);
  AffineMap in = AffineMap::get(
      6, 0, {n, c, oh * w.stride[0] + kh * w.dilation[0], ow * w.stride[1] + kw * w.dilation[1]},
      ctx);
  AffineMap window = AffineMap::get(6, 0, {kh, kw}, ctx);
  AffineMap out = AffineMap::get(6, 0, {n, c, oh, ow}, ctx);
  SmallVector<AffineMap> maps = {in, window};
  maps.append(numOutputs, out);
  return maps;
}

/// The window operand of a pooling generic.
Value windowOperand(OpBuilder &b, Location loc, const Window &w, Type element) {
  return tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{w.kernel[0], w.kernel[1]}, element);
}

SmallVector<utils::IteratorType> poolIterators() {
  SmallVector<utils::IteratorType> it(4, utils::IteratorType::parallel);
  it.append(2, utils::IteratorType::reduction);
  return it;
}

struct MaxPoolLowering : TgcLoweringPattern<MaxPool2dOp> {
  using TgcLoweringPattern::TgcLoweringPattern;
  LogicalResult matchAndRewrite(MaxPool2dOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    BaseTensorType inType = tgcType(op.getSelf()), outType = tgcType(op.getResults()[0]);
    FailureOr<PoolWindow> pw = poolWindow(op, inType, outType, op.getKernelSize(), op.getStride(),
                                          op.getPadding(), op.getDilation());
    if (failed(pw))
      return failure();
    Type element = lowering.convertTensorType(outType).getElementType();
    Value lowest =
        llvm::isa<FloatType>(element)
            ? scalarConstant(rewriter, loc, element, -std::numeric_limits<double>::infinity())
            : arith::ConstantOp::create(
                  rewriter, loc,
                  rewriter.getIntegerAttr(
                      element, APInt::getSignedMinValue(element.getIntOrFloatBitWidth())));
    Value padded = padInput(rewriter, loc, adaptor.getSelf(), *pw, lowest);
    SmallVector<Value> inits;
    FailureOr<Value> values = lowering.filledTensor(rewriter, op, outType, lowest);
    if (failed(values))
      return failure();
    inits.push_back(*values);
    bool withIndices = op.getWithIndices();
    if (withIndices) {
      Value zero = arith::ConstantOp::create(rewriter, loc, rewriter.getI64IntegerAttr(0));
      FailureOr<Value> indices =
          lowering.filledTensor(rewriter, op, tgcType(op.getResults()[1]), zero);
      if (failed(indices))
        return failure();
      inits.push_back(*indices);
    }
    const Window &w = pw->window;
    int64_t width = pw->input[1];
    auto generic = linalg::GenericOp::create(
        rewriter, loc, ValueRange(inits).getTypes(),
        ValueRange{padded, windowOperand(rewriter, loc, w, element)}, inits,
        poolMaps(rewriter.getContext(), w, inits.size()), poolIterators(),
        [&](OpBuilder &b, Location l, ValueRange args) {
          Value x = args[0], best = args[2];
          // Larger, or NaN, replaces the running maximum, as ATen's `val > max ||
          // isnan(val)`: a NaN stays once taken (a later value compares unordered with
          // it, not greater), and the index is the last NaN's.
          Value take;
          if (llvm::isa<FloatType>(element))
            take = arith::OrIOp::create(
                b, l, arith::CmpFOp::create(b, l, arith::CmpFPredicate::OGT, x, best),
                arith::CmpFOp::create(b, l, arith::CmpFPredicate::UNO, x, x));
          else
            take = arith::CmpIOp::create(b, l, arith::CmpIPredicate::sgt, x, best);
          SmallVector<Value> yields = {arith::SelectOp::create(b, l, take, x, best)};
          if (withIndices) {
            auto idx = [&](unsigned d) { return linalg::IndexOp::create(b, l, d).getResult(); };
            auto c = [&](int64_t v) { return arith::ConstantIndexOp::create(b, l, v); };
            auto position = [&](unsigned o, unsigned k, int i) -> Value {
              Value p =
                  arith::AddIOp::create(b, l, arith::MulIOp::create(b, l, idx(o), c(w.stride[i])),
                                        arith::MulIOp::create(b, l, idx(k), c(w.dilation[i])));
              return arith::SubIOp::create(b, l, p, c(w.padding[i]));
            };
            Value flat = arith::AddIOp::create(
                b, l, arith::MulIOp::create(b, l, position(2, 4, 0), c(width)), position(3, 5, 1));
            Value flat64 = arith::IndexCastOp::create(b, l, b.getI64Type(), flat);
            yields.push_back(arith::SelectOp::create(b, l, take, flat64, args[3]));
          }
          linalg::YieldOp::create(b, l, yields);
        });
    rewriter.replaceOp(op, generic.getResults());
    return success();
  }
};

/// The element count average pooling divides output (oh, ow) by, as `element`:
/// `divisorOverride` if given, else the window's extent, which excludes the part past the
/// padded input and, without `countPad`, the padding too (as PyTorch does).
Value windowDivisor(OpBuilder &b, Location l, std::array<Value, 2> out, const PoolWindow &pw,
                    bool countPad, std::optional<uint64_t> divisorOverride, Type element) {
  auto c = [&](int64_t v) { return arith::ConstantIndexOp::create(b, l, v); };
  const Window &w = pw.window;
  Value count = c(divisorOverride ? *divisorOverride : 1);
  for (int i = 0; i < 2 && !divisorOverride; ++i) {
    // start = o * s - p, end = min(start + k, size + p); without count_include_pad
    // both are clipped to [0, size].
    Value start = arith::SubIOp::create(b, l, arith::MulIOp::create(b, l, out[i], c(w.stride[i])),
                                        c(w.padding[i]));
    Value end = arith::MinSIOp::create(b, l, arith::AddIOp::create(b, l, start, c(w.kernel[i])),
                                       c(pw.input[i] + w.padding[i]));
    if (!countPad) {
      start = arith::MaxSIOp::create(b, l, start, c(0));
      end = arith::MinSIOp::create(b, l, end, c(pw.input[i]));
    }
    count = arith::MulIOp::create(b, l, count, arith::SubIOp::create(b, l, end, start));
  }
  Value countInt = arith::IndexCastOp::create(b, l, b.getI64Type(), count);
  return castScalar(b, l, countInt, element);
}

/// Average pooling: the window sum divided by the window's element count, which
/// excludes padding (and always the part past the padded input) as PyTorch does.
struct AvgPoolLowering : TgcLoweringPattern<AvgPool2dOp> {
  using TgcLoweringPattern::TgcLoweringPattern;
  LogicalResult matchAndRewrite(AvgPool2dOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    BaseTensorType inType = tgcType(op.getSelf()), outType = tgcType(op.getResult());
    FailureOr<PoolWindow> pw =
        poolWindow(op, inType, outType, op.getKernelSize(), op.getStride(), op.getPadding(), {1});
    if (failed(pw))
      return failure();
    Type element = lowering.convertTensorType(outType).getElementType();
    if (!llvm::isa<FloatType>(element))
      return op.emitOpError("average pooling needs a floating-point dtype");
    Value zero = scalarConstant(rewriter, loc, element, 0);
    Value padded = padInput(rewriter, loc, adaptor.getSelf(), *pw, zero);
    FailureOr<Value> init = lowering.filledTensor(rewriter, op, outType, zero);
    if (failed(init))
      return failure();
    const Window &w = pw->window;
    auto sum = linalg::GenericOp::create(
        rewriter, loc, init->getType(),
        ValueRange{padded, windowOperand(rewriter, loc, w, element)}, *init,
        poolMaps(rewriter.getContext(), w, 1), poolIterators(),
        [&](OpBuilder &b, Location l, ValueRange args) {
          linalg::YieldOp::create(b, l, addScalars(b, l, args[0], args[2]));
        });

    std::optional<uint64_t> divisorOverride = op.getDivisorOverride();
    bool countPad = op.getCountIncludePad();
    int64_t rank = outType.getRank();
    MLIRContext *ctx = rewriter.getContext();
    auto id = AffineMap::getMultiDimIdentityMap(rank, ctx);
    SmallVector<utils::IteratorType> parallel(rank, utils::IteratorType::parallel);
    auto divide = linalg::GenericOp::create(
        rewriter, loc, init->getType(), sum.getResult(0), *init, {id, id}, parallel,
        [&](OpBuilder &b, Location l, ValueRange args) {
          Value divisor = windowDivisor(
              b, l, {linalg::IndexOp::create(b, l, 2), linalg::IndexOp::create(b, l, 3)}, *pw,
              countPad, divisorOverride, element);
          linalg::YieldOp::create(b, l, arith::DivFOp::create(b, l, args[0], divisor).getResult());
        });
    rewriter.replaceOp(op, divide.getResult(0));
    return success();
  }
};

/// Max pooling's gradient in gather form: each input element sums grad_output over the
/// windows that read it and whose argmax (`indices`, flat h * W + w) it is.
struct MaxPoolBackwardLowering : TgcLoweringPattern<MaxPool2dBackwardOp> {
  using TgcLoweringPattern::TgcLoweringPattern;
  LogicalResult matchAndRewrite(MaxPool2dBackwardOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    FailureOr<PoolWindow> pw =
        poolWindow(op, tgcType(op.getSelf()), tgcType(op.getGradOutput()), op.getKernelSize(),
                   op.getStride(), op.getPadding(), op.getDilation());
    FailureOr<Value> init = lowering.zeroTensor(rewriter, op, tgcType(op.getResult()));
    if (failed(pw) || failed(init))
      return failure();
    Value grad = adaptor.getGradOutput(), indices = adaptor.getIndices();
    int64_t width = pw->input[1];
    Value result = windowGather(
        rewriter, op.getLoc(), *init, pw->window, pw->output,
        [&](OpBuilder &b, Location l, const WindowPosition &pos) -> Value {
          SmallVector<Value, 4> at = {pos.n, pos.c, pos.oh, pos.ow};
          Value argmax = tensor::ExtractOp::create(b, l, indices, at);
          Value flat = arith::AddIOp::create(
              b, l, arith::MulIOp::create(b, l, pos.h, arith::ConstantIndexOp::create(b, l, width)),
              pos.w);
          Value here = arith::IndexCastOp::create(b, l, b.getI64Type(), flat);
          Value hit = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, argmax, here);
          Value g = tensor::ExtractOp::create(b, l, grad, at);
          return arith::SelectOp::create(b, l, hit, g, scalarConstant(b, l, g.getType(), 0));
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// Average pooling's gradient in gather form: each input element sums
/// grad_output / divisor over the windows that read it.
struct AvgPoolBackwardLowering : TgcLoweringPattern<AvgPool2dBackwardOp> {
  using TgcLoweringPattern::TgcLoweringPattern;
  LogicalResult matchAndRewrite(AvgPool2dBackwardOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    FailureOr<PoolWindow> pw = poolWindow(op, tgcType(op.getSelf()), tgcType(op.getGradOutput()),
                                          op.getKernelSize(), op.getStride(), op.getPadding(), {1});
    FailureOr<Value> init = lowering.zeroTensor(rewriter, op, tgcType(op.getResult()));
    if (failed(pw) || failed(init))
      return failure();
    Type element = llvm::cast<RankedTensorType>(init->getType()).getElementType();
    if (!llvm::isa<FloatType>(element))
      return op.emitOpError("average pooling needs a floating-point dtype");
    Value grad = adaptor.getGradOutput();
    bool countPad = op.getCountIncludePad();
    std::optional<uint64_t> divisorOverride = op.getDivisorOverride();
    Value result = windowGather(
        rewriter, op.getLoc(), *init, pw->window, pw->output,
        [&](OpBuilder &b, Location l, const WindowPosition &pos) -> Value {
          Value g = tensor::ExtractOp::create(b, l, grad, ValueRange{pos.n, pos.c, pos.oh, pos.ow});
          Value divisor =
              windowDivisor(b, l, {pos.oh, pos.ow}, *pw, countPad, divisorOverride, element);
          return arith::DivFOp::create(b, l, g, divisor);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void tgc::populatePoolingPatterns(const LoweringContext &lowering, RewritePatternSet &patterns) {
  patterns.add<MaxPoolLowering, AvgPoolLowering, MaxPoolBackwardLowering, AvgPoolBackwardLowering>(
      lowering, patterns.getContext());
}
