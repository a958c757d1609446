// tgc-decompose's patterns for normalization, convolution and pooling: batch, layer
// and group norm (and the backward ops of the last two) in primitive ops, convolutions
// of every rank and direction as the 2-d convolution ops the lowering has, 3-d and
// adaptive pooling as slices, reductions and products.
#include "DecomposeUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

#include <array>
#include <cmath>
#include <limits>
#include <type_traits>

using namespace mlir;
using namespace tgc;
using namespace tgc::decompose;

namespace {

//===----------------------------------------------------------------------===//
// Normalization
//===----------------------------------------------------------------------===//

struct DecomposeLayerNorm : OpRewritePattern<LayerNormOp> {
  DecomposeLayerNorm(MLIRContext *ctx, bool onePass) : OpRewritePattern(ctx), onePass(onePass) {}
  bool onePass;

  LogicalResult matchAndRewrite(LayerNormOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = toComputationDtype(rewriter, loc, op.getInput());
    int64_t rank = typeOf(x).getRank();
    SmallVector<int64_t> dims = trailingDims(rank - op.getNormalizedShape().size(), rank);
    auto [mean, variance] = meanAndVariance(rewriter, loc, x, dims, onePass);
    Value eps = f64(rewriter, loc, op.getEps().convertToDouble());
    Value rstd =
        RsqrtOp::create(rewriter, loc, AddOp::create(rewriter, loc, variance, eps, Attribute()));
    Value out =
        MulOp::create(rewriter, loc, SubOp::create(rewriter, loc, x, mean, Attribute()), rstd);
    if (op.getWeight())
      out = MulOp::create(rewriter, loc, out, op.getWeight());
    if (op.getBias())
      out = AddOp::create(rewriter, loc, out, op.getBias(), Attribute());
    SmallVector<Value> results = {out};
    if (op.getNative()) {
      results.push_back(mean);
      results.push_back(rstd);
    }
    replaceWithCast(rewriter, op, results);
    return success();
  }
};

/// Batch norm: batch statistics in training mode (and, in the functional form, the
/// momentum update of the running statistics with the unbiased variance), running
/// statistics in eval mode.
struct DecomposeBatchNorm : OpRewritePattern<BatchNormOp> {
  DecomposeBatchNorm(MLIRContext *ctx, bool onePass) : OpRewritePattern(ctx), onePass(onePass) {}
  bool onePass;

  LogicalResult matchAndRewrite(BatchNormOp op, PatternRewriter &rewriter) const override {
    if (!op.getMutatedOperandIndices().empty())
      return rewriter.notifyMatchFailure(op, "functionalize first");
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    Value x = toComputationDtype(rewriter, loc, op.getInput());
    int64_t rank = typeOf(x).getRank();
    SmallVector<int64_t> dims = {0};
    for (int64_t d = 2; d < rank; ++d)
      dims.push_back(d);
    Value eps = f64(rewriter, loc, op.getEps().convertToDouble());
    Value mean, variance;
    if (op.getTraining()) {
      std::tie(mean, variance) = meanAndVariance(rewriter, loc, x, dims, onePass);
    } else {
      mean = channelView(rewriter, loc, op.getRunningMean(), rank);
      variance = channelView(rewriter, loc, op.getRunningVar(), rank);
    }
    Value invstd =
        RsqrtOp::create(rewriter, loc, AddOp::create(rewriter, loc, variance, eps, Attribute()));
    Value out =
        MulOp::create(rewriter, loc, SubOp::create(rewriter, loc, x, mean, Attribute()), invstd);
    if (op.getWeight())
      out = MulOp::create(rewriter, loc, out, channelView(rewriter, loc, op.getWeight(), rank));
    if (op.getBias())
      out = AddOp::create(rewriter, loc, out, channelView(rewriter, loc, op.getBias(), rank),
                          Attribute());
    SmallVector<Value> results = {out};
    if (!op.getTraining()) {
      // Eval mode returns empty statistics, as ATen does.
      for (unsigned i = 1; i < 3; ++i)
        results.push_back(FullOp::create(
            rewriter, loc, shapeAttr(ctx, {getAffineConstantExpr(0, ctx)}),
            rewriter.getF64FloatAttr(0), TypeAttr::get(typeOf(x).getDtype()), DeviceAttr()));
      // The functional form returns the running statistics unchanged.
      if (op.getFunctional()) {
        results.push_back(op.getRunningMean());
        results.push_back(op.getRunningVar());
      }
      replaceWithCast(rewriter, op, results);
      return success();
    }
    results.push_back(squeezeDims(rewriter, loc, mean, dims));
    results.push_back(squeezeDims(rewriter, loc, invstd, dims));
    if (op.getFunctional()) {
      double momentum = op.getMomentum().convertToDouble();
      Value n = countElements(rewriter, loc, x, dims);
      Value one = arith::ConstantOp::create(rewriter, loc, rewriter.getI64IntegerAttr(1));
      Value nf = arith::SIToFPOp::create(rewriter, loc, rewriter.getF64Type(), n);
      Value nm1 = arith::SIToFPOp::create(rewriter, loc, rewriter.getF64Type(),
                                          arith::SubIOp::create(rewriter, loc, n, one));
      Value bessel = arith::DivFOp::create(rewriter, loc, nf, nm1);
      Value batchMean = results[1];
      Value batchVar =
          MulOp::create(rewriter, loc, squeezeDims(rewriter, loc, variance, dims), bessel);
      auto update = [&](Value running, Value batch, Value result) -> Value {
        Type dtype = typeOf(result).getDtype();
        Value keep = MulOp::create(rewriter, loc, castTo(rewriter, loc, running, dtype),
                                   f64(rewriter, loc, 1 - momentum));
        Value add = MulOp::create(rewriter, loc, castTo(rewriter, loc, batch, dtype),
                                  f64(rewriter, loc, momentum));
        return AddOp::create(rewriter, loc, keep, add, Attribute());
      };
      results.push_back(update(op.getRunningMean(), batchMean, op->getResult(3)));
      results.push_back(update(op.getRunningVar(), batchVar, op->getResult(4)));
    }
    replaceWithCast(rewriter, op, results);
    return success();
  }
};

/// The sizes [N, G, C/G * spatial...] of an [N, C, spatial...] tensor in `groups` groups.
SmallVector<AffineExpr> groupedSizes(ArrayRef<AffineExpr> sizes, int64_t groups) {
  AffineExpr perGroup = sizes[1].floorDiv(groups);
  for (AffineExpr s : sizes.drop_front(2))
    perGroup = perGroup * s;
  return {sizes[0], getAffineConstantExpr(groups, sizes[0].getContext()), perGroup};
}

/// group_norm: the input viewed as [N, G, C/G * spatial], normalized over its last
/// dimension, viewed back and scaled per channel.
struct DecomposeGroupNorm : OpRewritePattern<GroupNormOp> {
  DecomposeGroupNorm(MLIRContext *ctx, bool onePass) : OpRewritePattern(ctx), onePass(onePass) {}
  bool onePass;

  LogicalResult matchAndRewrite(GroupNormOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    Value x = toComputationDtype(rewriter, loc, op.getInput());
    ArrayRef<AffineExpr> sizes = typeOf(x).getSizes();
    int64_t rank = sizes.size(), groups = op.getGroup();
    Value grouped = ViewOp::create(rewriter, loc, x, shapeAttr(ctx, groupedSizes(sizes, groups)));
    auto [mean, variance] = meanAndVariance(rewriter, loc, grouped, {2}, onePass);
    Value eps = f64(rewriter, loc, op.getEps().convertToDouble());
    Value rstd =
        RsqrtOp::create(rewriter, loc, AddOp::create(rewriter, loc, variance, eps, Attribute()));
    Value normalized = MulOp::create(
        rewriter, loc, SubOp::create(rewriter, loc, grouped, mean, Attribute()), rstd);
    Value out = ViewOp::create(rewriter, loc, normalized, shapeAttr(ctx, sizes));
    if (op.getWeight())
      out = MulOp::create(rewriter, loc, out, channelView(rewriter, loc, op.getWeight(), rank));
    if (op.getBias())
      out = AddOp::create(rewriter, loc, out, channelView(rewriter, loc, op.getBias(), rank),
                          Attribute());
    SmallVector<Value> results = {out};
    if (op.getNative()) {
      results.push_back(squeezeDims(rewriter, loc, mean, {2}));
      results.push_back(squeezeDims(rewriter, loc, rstd, {2}));
    }
    replaceWithCast(rewriter, op, results);
    return success();
  }
};

/// The input gradient of a normalization over `dims` of `x` (shaped like the statistics
/// `mean` and `rstd`, with size-1 `dims`): rstd * (g - mean(g) - xhat * mean(g * xhat))
/// for g = grad_out * weight, xhat = (x - mean) * rstd. Also returns xhat.
std::pair<Value, Value> normInputGradient(OpBuilder &b, Location loc, Value weighted, Value x,
                                          Value mean, Value rstd, ArrayRef<int64_t> dims) {
  auto dimsAttr = b.getDenseI64ArrayAttr(dims);
  Value xhat = MulOp::create(b, loc, SubOp::create(b, loc, x, mean, Attribute()), rstd);
  Value meanG = MeanOp::create(b, loc, weighted, dimsAttr, /*keepdim=*/true, TypeAttr());
  Value meanGX = MeanOp::create(b, loc, MulOp::create(b, loc, weighted, xhat), dimsAttr,
                                /*keepdim=*/true, TypeAttr());
  Value centered = SubOp::create(b, loc, SubOp::create(b, loc, weighted, meanG, Attribute()),
                                 MulOp::create(b, loc, xhat, meanGX), Attribute());
  return {MulOp::create(b, loc, rstd, centered), xhat};
}

/// `v` summed over `dims` (none: `v` itself).
Value sumOver(OpBuilder &b, Location loc, Value v, ArrayRef<int64_t> dims) {
  if (dims.empty())
    return v;
  return SumOp::create(b, loc, v, b.getDenseI64ArrayAttr(dims), /*keepdim=*/false, TypeAttr());
}

struct DecomposeLayerNormBackward : OpRewritePattern<LayerNormBackwardOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(LayerNormBackwardOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto comp = [&](Value v) { return toComputationDtype(rewriter, loc, v); };
    Value x = comp(op.getInput()), grad = comp(op.getGradOut());
    int64_t rank = typeOf(x).getRank(), n = op.getNormalizedShape().size();
    SmallVector<int64_t> dims = trailingDims(rank - n, rank), leading = trailingDims(0, rank - n);
    Value weighted = op.getWeight() ? MulOp::create(rewriter, loc, grad, op.getWeight()) : grad;
    auto [gradInput, xhat] =
        normInputGradient(rewriter, loc, weighted, x, comp(op.getMean()), comp(op.getRstd()), dims);
    Value gradWeight = sumOver(rewriter, loc, MulOp::create(rewriter, loc, grad, xhat), leading);
    replaceWithCast(rewriter, op, {gradInput, gradWeight, sumOver(rewriter, loc, grad, leading)});
    return success();
  }
};

struct DecomposeGroupNormBackward : OpRewritePattern<GroupNormBackwardOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(GroupNormBackwardOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    auto comp = [&](Value v) { return toComputationDtype(rewriter, loc, v); };
    Value x = comp(op.getInput()), grad = comp(op.getGradOut());
    ArrayRef<AffineExpr> sizes = typeOf(x).getSizes();
    int64_t rank = sizes.size();
    SmallVector<AffineExpr> grouped = groupedSizes(sizes, op.getGroup());
    auto toGroups = [&](Value v) -> Value {
      return ViewOp::create(rewriter, loc, v, shapeAttr(ctx, grouped));
    };
    auto statistic = [&](Value v) -> Value {
      return UnsqueezeOp::create(rewriter, loc, comp(v), 2);
    };
    Value weighted =
        op.getWeight()
            ? MulOp::create(rewriter, loc, grad, channelView(rewriter, loc, op.getWeight(), rank))
                  .getResult()
            : grad;
    auto [gradInput, xhat] =
        normInputGradient(rewriter, loc, toGroups(weighted), toGroups(x), statistic(op.getMean()),
                          statistic(op.getRstd()), {2});
    SmallVector<int64_t> notChannels = {0};
    llvm::append_range(notChannels, trailingDims(2, rank));
    Value xhatFull = ViewOp::create(rewriter, loc, xhat, shapeAttr(ctx, sizes));
    replaceWithCast(
        rewriter, op,
        {ViewOp::create(rewriter, loc, gradInput, shapeAttr(ctx, sizes)),
         sumOver(rewriter, loc, MulOp::create(rewriter, loc, grad, xhatFull), notChannels),
         sumOver(rewriter, loc, grad, notChannels)});
    return success();
  }
};

/// _weight_norm: v * (g / sqrt(sum(v^2))) with the sum over every dimension but `dim`
/// (kept as size 1; all of them for dim -1), in f32 for bf16/f16.
struct DecomposeWeightNorm : OpRewritePattern<WeightNormOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(WeightNormOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value v = toComputationDtype(rewriter, loc, op.getV());
    int64_t rank = typeOf(v).getRank();
    int64_t dim = op.getDim();
    std::optional<int64_t> keep = dim == -1 ? std::nullopt : normalizeDim(dim, rank);
    SmallVector<int64_t> dims;
    for (int64_t d = 0; d < rank; ++d)
      if (!keep || d != *keep)
        dims.push_back(d);
    // Without dimensions to sum over (a 1-d v normalized per element), |v|.
    Value norm =
        dims.empty()
            ? AbsOp::create(rewriter, loc, v).getResult()
            : SqrtOp::create(rewriter, loc,
                             SumOp::create(rewriter, loc, MulOp::create(rewriter, loc, v, v),
                                           rewriter.getDenseI64ArrayAttr(dims), true, TypeAttr()))
                  .getResult();
    Value scale = DivOp::create(rewriter, loc, toComputationDtype(rewriter, loc, op.getG()), norm,
                                StringAttr());
    replaceWithCast(rewriter, op, {MulOp::create(rewriter, loc, v, scale)});
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Convolution
//===----------------------------------------------------------------------===//

/// A convolution's parameters, one entry per spatial dimension, with the schema's
/// defaults filled in (stride and dilation 1, padding and output padding 0).
struct ConvParams {
  SmallVector<int64_t> stride, padding, dilation, outputPadding;
};

template <typename OpTy> ConvParams convParams(OpTy op, int64_t spatial) {
  auto expand = [&](ArrayRef<int64_t> given, int64_t dflt) {
    if (given.empty())
      return SmallVector<int64_t>(spatial, dflt);
    if (given.size() == 1)
      return SmallVector<int64_t>(spatial, given[0]);
    return SmallVector<int64_t>(given);
  };
  return {expand(op.getStride(), 1), expand(op.getPadding(), 0), expand(op.getDilation(), 1),
          expand(op.getOutputPadding().value_or(ArrayRef<int64_t>{}), 0)};
}

/// The constant spatial sizes of a weight [F, C/G, K...].
std::optional<SmallVector<int64_t>> kernelSizes(Value weight) {
  SmallVector<int64_t> kernel;
  for (AffineExpr size : typeOf(weight).getSizes().drop_front(2)) {
    std::optional<int64_t> k = getConstantSize(size);
    if (!k)
      return std::nullopt;
    kernel.push_back(*k);
  }
  return kernel;
}

/// `x` + bias [C] broadcast over the channel dimension (no bias: `x`).
Value addChannelBias(OpBuilder &b, Location loc, Value x, Value bias) {
  if (!bias)
    return x;
  return AddOp::create(b, loc, x, channelView(b, loc, bias, typeOf(x).getRank()), Attribute());
}

/// A 1-d convolution (transposed or not) is a 2-d one over a height-1 image.
struct DecomposeConv1d : OpRewritePattern<ConvolutionOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ConvolutionOp op, PatternRewriter &rewriter) const override {
    if (typeOf(op.getInput()).getRank() != 3)
      return rewriter.notifyMatchFailure(op, "not a 1-d convolution");
    Location loc = op.getLoc();
    auto widen = [&](ArrayRef<int64_t> v, int64_t heightValue, int64_t dflt) {
      return SmallVector<int64_t>{heightValue, v.empty() ? dflt : v[0]};
    };
    Value input = UnsqueezeOp::create(rewriter, loc, op.getInput(), 2);
    Value weight = UnsqueezeOp::create(rewriter, loc, op.getWeight(), 2);
    DenseI64ArrayAttr outputPadding;
    if (op.getOutputPadding())
      outputPadding = rewriter.getDenseI64ArrayAttr(widen(*op.getOutputPadding(), 0, 0));
    auto conv = ConvolutionOp::create(rewriter, loc, input, weight, op.getBias(),
                                      widen(op.getStride(), 1, 1), widen(op.getPadding(), 0, 0),
                                      widen(op.getDilation(), 1, 1), op.getTransposed(),
                                      outputPadding, op.getGroups());
    rewriter.replaceOpWithNewOp<SqueezeOp>(op, conv.getResult(),
                                           rewriter.getDenseI64ArrayAttr({2}));
    return success();
  }
};

/// A transposed 2-d convolution is the input gradient of the convolution it transposes:
/// convolution_backward_input of `input` (as the gradient) with the same weight
/// [C_in, C_out/G, KH, KW], onto [N, C_out, OH, OW] with
/// OH = (H - 1) * stride - 2 * padding + dilation * (KH - 1) + output_padding + 1. The
/// rows of output_padding no window reaches get 0 (and the bias).
struct DecomposeTransposedConv2d : OpRewritePattern<ConvolutionOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ConvolutionOp op, PatternRewriter &rewriter) const override {
    if (typeOf(op.getInput()).getRank() != 4 || !op.getTransposed())
      return rewriter.notifyMatchFailure(op, "not a transposed 2-d convolution");
    std::optional<SmallVector<int64_t>> kernel = kernelSizes(op.getWeight());
    if (!kernel)
      return rewriter.notifyMatchFailure(op, "symbolic kernel sizes");
    Location loc = op.getLoc();
    auto [stride, padding, dilation, outputPadding] = convParams(op, 2);
    ArrayRef<AffineExpr> in = typeOf(op.getInput()).getSizes();
    SmallVector<AffineExpr> sizes = {in[0], typeOf(op.getWeight()).getSizes()[1] * op.getGroups()};
    for (int64_t i = 0; i < 2; ++i)
      sizes.push_back((in[2 + i] - 1) * stride[i] - 2 * padding[i] +
                      dilation[i] * ((*kernel)[i] - 1) + outputPadding[i] + 1);
    // output_padding may reach stride (when below dilation): the convolution onto the
    // result then has floor(output_padding / stride) more windows, whose gradient is 0.
    Value x = op.getInput();
    if (outputPadding[0] >= stride[0] || outputPadding[1] >= stride[1])
      x = PadOp::create(rewriter, loc, x,
                        rewriter.getDenseI64ArrayAttr(
                            {0, outputPadding[1] / stride[1], 0, outputPadding[0] / stride[0]}),
                        "constant", FloatAttr());
    Value out = ConvolutionBackwardInputOp::create(
        rewriter, loc, x, op.getWeight(), shapeAttr(rewriter.getContext(), sizes),
        rewriter.getDenseI64ArrayAttr(stride), rewriter.getDenseI64ArrayAttr(padding),
        rewriter.getDenseI64ArrayAttr(dilation), op.getGroupsAttr());
    rewriter.replaceOp(op, addChannelBias(rewriter, loc, out, op.getBias()));
    return success();
  }
};

/// A 3-d convolution is a sum over the kernel's depth of 2-d convolutions: for depth
/// offset kd, the input planes od * stride + kd * dilation (od < OD) as a batch of
/// N * OD images, convolved with the weight's plane kd.
struct DecomposeConv3d : OpRewritePattern<ConvolutionOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ConvolutionOp op, PatternRewriter &rewriter) const override {
    if (typeOf(op.getInput()).getRank() != 5 || op.getTransposed())
      return rewriter.notifyMatchFailure(op, "not a 3-d convolution");
    std::optional<SmallVector<int64_t>> kernel = kernelSizes(op.getWeight());
    if (!kernel)
      return rewriter.notifyMatchFailure(op, "symbolic kernel sizes");
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    auto [stride, padding, dilation, outputPadding] = convParams(op, 3);
    // bf16/f16: the partial convolutions and their sum in f32, rounded once at the end
    // (ATen's kernel accumulates the whole window in f32).
    Value x = toComputationDtype(rewriter, loc, op.getInput());
    Value weight = toComputationDtype(rewriter, loc, op.getWeight());
    if (padding[0] != 0)
      x = PadOp::create(rewriter, loc, x,
                        rewriter.getDenseI64ArrayAttr({0, 0, 0, 0, padding[0], padding[0]}),
                        "constant", FloatAttr());
    ArrayRef<AffineExpr> in = typeOf(x).getSizes();
    AffineExpr depth = (in[2] - dilation[0] * ((*kernel)[0] - 1) - 1).floorDiv(stride[0]) + 1;
    auto bound = [&](AffineExpr e) { return shapeAttr(ctx, {e}); };
    Value sum;
    for (int64_t kd = 0; kd < (*kernel)[0]; ++kd) {
      AffineExpr start = getAffineConstantExpr(kd * dilation[0], ctx);
      Value planes = SliceOp::create(rewriter, loc, x, 2, bound(start),
                                     bound(start + (depth - 1) * stride[0] + 1), stride[0]);
      Value images =
          PermuteOp::create(rewriter, loc, planes, rewriter.getDenseI64ArrayAttr({0, 2, 1, 3, 4}));
      images = ViewOp::create(rewriter, loc, images,
                              shapeAttr(ctx, {in[0] * depth, in[1], in[3], in[4]}));
      Value plane = SelectOp::create(rewriter, loc, weight, 2, kd);
      Value conv = ConvolutionOp::create(
          rewriter, loc, images, plane, Value(), ArrayRef<int64_t>(stride).drop_front(),
          ArrayRef<int64_t>(padding).drop_front(), ArrayRef<int64_t>(dilation).drop_front(), false,
          DenseI64ArrayAttr(), op.getGroups());
      sum = sum ? AddOp::create(rewriter, loc, sum, conv, Attribute()).getResult() : conv;
    }
    ArrayRef<AffineExpr> flat = typeOf(sum).getSizes();
    Value out = ViewOp::create(rewriter, loc, sum,
                               shapeAttr(ctx, {in[0], depth, flat[1], flat[2], flat[3]}));
    out = PermuteOp::create(rewriter, loc, out, rewriter.getDenseI64ArrayAttr({0, 2, 1, 3, 4}));
    replaceWithCast(rewriter, op, {addChannelBias(rewriter, loc, out, op.getBias())});
    return success();
  }
};

/// A transposed 3-d convolution is a convolution (stride 1) of the input with
/// stride - 1 zeros between its elements, padded by dilation * (K - 1) - padding before
/// and that plus output_padding after (a negative amount crops), with the weight's
/// channels swapped within each group and its kernel flipped.
struct DecomposeTransposedConv3d : OpRewritePattern<ConvolutionOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ConvolutionOp op, PatternRewriter &rewriter) const override {
    if (typeOf(op.getInput()).getRank() != 5 || !op.getTransposed())
      return rewriter.notifyMatchFailure(op, "not a transposed 3-d convolution");
    std::optional<SmallVector<int64_t>> kernel = kernelSizes(op.getWeight());
    std::optional<int64_t> inChannels = getConstantSize(typeOf(op.getWeight()).getSizes()[0]);
    if (!kernel || !inChannels)
      return rewriter.notifyMatchFailure(op, "symbolic weight sizes");
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    auto [stride, padding, dilation, outputPadding] = convParams(op, 3);
    Value x = op.getInput();
    for (int64_t i = 0; i < 3; ++i) {
      if (stride[i] == 1)
        continue;
      // [.., L, ..] -> [.., L, 1, ..] padded to [.., L, s, ..] -> [.., L * s, ..], cut
      // to (L - 1) * s + 1.
      int64_t dim = 2 + i;
      Value spread = UnsqueezeOp::create(rewriter, loc, x, dim + 1);
      SmallVector<int64_t> pad(2 * (6 - (dim + 1)), 0);
      pad.back() = stride[i] - 1;
      spread = PadOp::create(rewriter, loc, spread, rewriter.getDenseI64ArrayAttr(pad), "constant",
                             FloatAttr());
      SmallVector<AffineExpr> sizes(typeOf(x).getSizes());
      AffineExpr length = sizes[dim];
      sizes[dim] = length * stride[i];
      spread = ViewOp::create(rewriter, loc, spread, shapeAttr(ctx, sizes));
      x = SliceOp::create(rewriter, loc, spread, dim,
                          shapeAttr(ctx, {getAffineConstantExpr(0, ctx)}),
                          shapeAttr(ctx, {(length - 1) * stride[i] + 1}), 1);
    }
    SmallVector<int64_t> pad;
    for (int64_t i = 2; i >= 0; --i) {
      int64_t before = dilation[i] * ((*kernel)[i] - 1) - padding[i];
      pad.append({before, before + outputPadding[i]});
    }
    x = PadOp::create(rewriter, loc, x, rewriter.getDenseI64ArrayAttr(pad), "constant",
                      FloatAttr());
    // weight [C_in, C_out/G, K...] -> [G, C_in/G, C_out/G, K...] -> [G, C_out/G, C_in/G, K...]
    // -> [C_out, C_in/G, K...], flipped.
    int64_t groups = op.getGroups();
    ArrayRef<AffineExpr> w = typeOf(op.getWeight()).getSizes();
    AffineExpr g = getAffineConstantExpr(groups, ctx);
    AffineExpr inPerGroup = getAffineConstantExpr(*inChannels / groups, ctx);
    Value weight = ViewOp::create(rewriter, loc, op.getWeight(),
                                  shapeAttr(ctx, {g, inPerGroup, w[1], w[2], w[3], w[4]}));
    weight = TransposeOp::create(rewriter, loc, weight, 1, 2);
    weight = ViewOp::create(rewriter, loc, weight,
                            shapeAttr(ctx, {g * w[1], inPerGroup, w[2], w[3], w[4]}));
    weight = FlipOp::create(rewriter, loc, weight, rewriter.getDenseI64ArrayAttr({2, 3, 4}));
    rewriter.replaceOpWithNewOp<ConvolutionOp>(
        op, x, weight, op.getBias(), SmallVector<int64_t>(3, 1), SmallVector<int64_t>(3, 0),
        dilation, false, DenseI64ArrayAttr(), groups);
    return success();
  }
};

/// convolution_backward: a convolution's input gradient is convolution_backward_input,
/// a transposed one's a convolution; the weight gradient is convolution_backward_weight
/// (for a transposed convolution with the roles of input and gradient swapped); the
/// bias's the sum over all but the channels. A 1-d one is a 2-d one over a height-1
/// image.
struct DecomposeConvolutionBackward : OpRewritePattern<ConvolutionBackwardOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ConvolutionBackwardOp op,
                                PatternRewriter &rewriter) const override {
    int64_t rank = typeOf(op.getInput()).getRank();
    if (rank != 3 && rank != 4)
      return op.emitOpError("of a ") << rank - 2 << "-d convolution is not supported yet";
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    Value grad = op.getGradOutput(), input = op.getInput(), weight = op.getWeight();
    auto [stride, padding, dilation, outputPadding] = convParams(op, rank - 2);
    if (rank == 3) {
      grad = UnsqueezeOp::create(rewriter, loc, grad, 2);
      input = UnsqueezeOp::create(rewriter, loc, input, 2);
      weight = UnsqueezeOp::create(rewriter, loc, weight, 2);
      stride.insert(stride.begin(), 1);
      padding.insert(padding.begin(), 0);
      dilation.insert(dilation.begin(), 1);
    }
    auto strideAttr = rewriter.getDenseI64ArrayAttr(stride);
    auto paddingAttr = rewriter.getDenseI64ArrayAttr(padding);
    auto dilationAttr = rewriter.getDenseI64ArrayAttr(dilation);
    auto sizesOf = [&](Value v) { return shapeAttr(ctx, typeOf(v).getSizes()); };
    Value gradInput, gradWeight;
    if (op.getTransposed()) {
      gradInput = ConvolutionOp::create(rewriter, loc, grad, weight, Value(), stride, padding,
                                        dilation, false, DenseI64ArrayAttr(), op.getGroups());
      gradWeight = ConvolutionBackwardWeightOp::create(rewriter, loc, input, grad, sizesOf(weight),
                                                       strideAttr, paddingAttr, dilationAttr,
                                                       op.getGroupsAttr());
    } else {
      gradInput = ConvolutionBackwardInputOp::create(rewriter, loc, grad, weight, sizesOf(input),
                                                     strideAttr, paddingAttr, dilationAttr,
                                                     op.getGroupsAttr());
      gradWeight = ConvolutionBackwardWeightOp::create(rewriter, loc, grad, input, sizesOf(weight),
                                                       strideAttr, paddingAttr, dilationAttr,
                                                       op.getGroupsAttr());
    }
    if (rank == 3) {
      gradInput = SqueezeOp::create(rewriter, loc, gradInput, rewriter.getDenseI64ArrayAttr({2}));
      gradWeight = SqueezeOp::create(rewriter, loc, gradWeight, rewriter.getDenseI64ArrayAttr({2}));
    }
    SmallVector<int64_t> notChannels = {0};
    llvm::append_range(notChannels, trailingDims(2, rank));
    rewriter.replaceOp(
        op, {gradInput, gradWeight, sumOver(rewriter, loc, op.getGradOutput(), notChannels)});
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

/// The averaging matrix of adaptive pooling along a dimension of `in` elements to
/// `out`: [out, in] (`transposed`: [in, out]), row i 1/n over the n elements
/// [floor(i * in / out), ceil((i + 1) * in / out)).
Value averagingMatrix(OpBuilder &b, Location loc, int64_t in, int64_t out, FloatType type,
                      bool transposed) {
  SmallVector<double> values(in * out, 0.0);
  for (int64_t i = 0; i < out; ++i) {
    int64_t start = (i * in) / out, end = ((i + 1) * in + out - 1) / out;
    for (int64_t j = start; j < end; ++j)
      values[transposed ? j * out + i : i * in + j] = 1.0 / static_cast<double>(end - start);
  }
  auto shape = transposed ? SmallVector<int64_t>{in, out} : SmallVector<int64_t>{out, in};
  return floatConstant(b, loc, shape, type, values);
}

/// `x` with its dimension `dim` replaced by `matrix` times it: x moved to the last
/// dimension, multiplied by `matrix` [old, new], and moved back.
Value contractDim(OpBuilder &b, Location loc, Value x, int64_t dim, Value matrix) {
  int64_t last = typeOf(x).getRank() - 1;
  if (dim != last)
    x = TransposeOp::create(b, loc, x, dim, last);
  x = MatmulOp::create(b, loc, x, matrix);
  if (dim != last)
    x = TransposeOp::create(b, loc, x, dim, last);
  return x;
}

/// adaptive_avg_pool and its backward: per dimension whose size pooling changes, a
/// product with the averaging matrix (its transpose for the gradient), in f32 for
/// bf16/f16. A 2-d one whose output sizes divide the input's is avg_pool2d with
/// kernel = stride = in / out.
template <typename OpTy> struct DecomposeAdaptivePool : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;
  static constexpr bool isBackward = std::is_same_v<OpTy, AdaptiveAvgPoolBackwardOp>;

  LogicalResult matchAndRewrite(OpTy op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value source = op->getOperand(0);
    // The pooled (input) and pooled-to (output) sizes, whichever way the op goes.
    ArrayRef<AffineExpr> inSizes = typeOf(isBackward ? op->getOperand(1) : source).getSizes();
    ArrayRef<AffineExpr> outSizes =
        typeOf(isBackward ? op->getOperand(0) : op.getResult()).getSizes();
    int64_t rank = inSizes.size();
    SmallVector<std::array<int64_t, 3>> pooled; // dimension, in, out
    for (int64_t d = 0; d < rank; ++d) {
      if (inSizes[d] == outSizes[d])
        continue;
      std::optional<int64_t> i = getConstantSize(inSizes[d]), o = getConstantSize(outSizes[d]);
      if (!i || !o)
        return rewriter.notifyMatchFailure(op, "symbolic pooled sizes");
      pooled.push_back({d, *i, *o});
    }
    if constexpr (!isBackward) {
      if (op.getOutputSize().size() == 2 &&
          llvm::all_of(pooled, [&](auto p) { return p[0] >= rank - 2 && p[1] % p[2] == 0; })) {
        // kernel = in / out (1 where pooling keeps the size, which may be symbolic).
        SmallVector<int64_t> kernel(2, 1);
        for (auto [dim, in, out] : pooled)
          kernel[dim - (rank - 2)] = in / out;
        rewriter.replaceOpWithNewOp<AvgPool2dOp>(op, source, kernel, kernel, ArrayRef<int64_t>{0},
                                                 false, true, IntegerAttr());
        return success();
      }
    }
    Value x = toComputationDtype(rewriter, loc, source);
    auto type = llvm::cast<FloatType>(typeOf(x).getDtype());
    for (auto [dim, in, out] : pooled)
      x = contractDim(rewriter, loc, x, dim,
                      averagingMatrix(rewriter, loc, in, out, type, /*transposed=*/!isBackward));
    replaceWithCast(rewriter, op, {x});
    return success();
  }
};

/// avg_pool1d: avg_pool2d over a height-1 image (window 1 x k).
struct DecomposeAvgPool1d : OpRewritePattern<AvgPool1dOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AvgPool1dOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    int64_t rank = typeOf(op.getSelf()).getRank();
    auto widen = [](ArrayRef<int64_t> v, int64_t height) {
      SmallVector<int64_t> out = {height};
      out.append(v.begin(), v.end());
      return out;
    };
    ArrayRef<int64_t> stride = op.getStride().empty() ? op.getKernelSize() : op.getStride();
    Value image = UnsqueezeOp::create(rewriter, loc, op.getSelf(), rank - 1);
    Value pooled = AvgPool2dOp::create(rewriter, loc, image, widen(op.getKernelSize(), 1),
                                       widen(stride, 1), widen(op.getPadding(), 0),
                                       op.getCeilMode(), op.getCountIncludePad(), IntegerAttr());
    rewriter.replaceOpWithNewOp<SqueezeOp>(op, pooled, rewriter.getDenseI64ArrayAttr({rank - 1}));
    return success();
  }
};

/// 2-d pooling of an unbatched [C, H, W] input: the same pooling of a batch of one (the
/// lowering takes NCHW), the batch dimension dropped from each result.
template <typename OpT> struct BatchUnbatchedPool2d : OpRewritePattern<OpT> {
  using OpRewritePattern<OpT>::OpRewritePattern;
  LogicalResult matchAndRewrite(OpT op, PatternRewriter &rewriter) const override {
    if (typeOf(op.getSelf()).getRank() != 3)
      return rewriter.notifyMatchFailure(op, "not an unbatched input");
    Location loc = op.getLoc();
    Value image = UnsqueezeOp::create(rewriter, loc, op.getSelf(), 0);
    Operation *pooled = rewriter.clone(*op);
    pooled->setOperand(0, image);
    SmallVector<Type> types;
    auto inferred = llvm::cast<InferTypeOpInterface>(pooled);
    if (failed(inferred.inferReturnTypes(
            rewriter.getContext(), loc, pooled->getOperands(), pooled->getRawDictionaryAttrs(),
            pooled->getPropertiesStorage(), pooled->getRegions(), types)))
      return failure();
    for (auto [result, type] : llvm::zip(pooled->getResults(), types))
      result.setType(type);
    SmallVector<Value> results;
    for (Value result : pooled->getResults())
      results.push_back(
          SqueezeOp::create(rewriter, loc, result, rewriter.getDenseI64ArrayAttr({0})));
    replaceWithCast(rewriter, op, results);
    return success();
  }
};

/// A pooling window over the last three dimensions, as the op states it
/// (tgc::expandWindow), with the pooled input and output sizes.
struct Window3d : Window {
  SmallVector<int64_t> in, out;
};

template <typename OpTy>
FailureOr<Window3d> window3d(OpTy op, ArrayRef<int64_t> dilation, PatternRewriter &rewriter) {
  FailureOr<Window> window =
      expandWindow(op.getLoc(), op.getKernelSize(), op.getStride(), op.getPadding(), dilation, 3);
  if (failed(window))
    return failure();
  Window3d w;
  static_cast<Window &>(w) = *window;
  ArrayRef<AffineExpr> in = typeOf(op.getSelf()).getSizes(),
                       out = typeOf(op->getResult(0)).getSizes();
  for (int64_t d = in.size() - 3; d < static_cast<int64_t>(in.size()); ++d) {
    std::optional<int64_t> i = getConstantSize(in[d]), o = getConstantSize(out[d]);
    if (!i || !o)
      return rewriter.notifyMatchFailure(op, "symbolic pooled sizes");
    w.in.push_back(*i);
    w.out.push_back(*o);
  }
  return w;
}

/// The input padded with `fill` (padding before, and after as far as the last window
/// reaches) and its strided slices, one per window position (row-major over the
/// kernel): slice k holds, at each output position, the element that position k of its
/// window reads.
SmallVector<Value> windowSlices(OpBuilder &b, Location loc, Value x, const Window3d &w,
                                double fill) {
  MLIRContext *ctx = b.getContext();
  SmallVector<int64_t> pad;
  for (int64_t i = 2; i >= 0; --i) {
    int64_t reach = (w.out[i] - 1) * w.stride[i] + w.dilation[i] * (w.kernel[i] - 1) + 1;
    pad.append({w.padding[i], std::max<int64_t>(0, reach - w.in[i] - w.padding[i])});
  }
  if (llvm::any_of(pad, [](int64_t p) { return p != 0; }))
    x = PadOp::create(b, loc, x, b.getDenseI64ArrayAttr(pad), "constant", b.getF64FloatAttr(fill));
  int64_t first = typeOf(x).getRank() - 3;
  SmallVector<Value> slices;
  for (int64_t kd = 0; kd < w.kernel[0]; ++kd)
    for (int64_t kh = 0; kh < w.kernel[1]; ++kh)
      for (int64_t kw = 0; kw < w.kernel[2]; ++kw) {
        Value slice = x;
        int64_t k[3] = {kd, kh, kw};
        for (int64_t i = 0; i < 3; ++i) {
          int64_t start = k[i] * w.dilation[i];
          slice = SliceOp::create(
              b, loc, slice, first + i, shapeAttr(ctx, {getAffineConstantExpr(start, ctx)}),
              shapeAttr(ctx,
                        {getAffineConstantExpr(start + (w.out[i] - 1) * w.stride[i] + 1, ctx)}),
              w.stride[i]);
        }
        slices.push_back(slice);
      }
  return slices;
}

/// A constant [O0, O1, O2] of `type` with element (o0, o1, o2) = f(o0, o1, o2).
template <typename Fn>
Value outputConstant(OpBuilder &b, Location loc, const Window3d &w, Type type, Fn f) {
  SmallVector<int64_t> ints;
  for (int64_t o0 = 0; o0 < w.out[0]; ++o0)
    for (int64_t o1 = 0; o1 < w.out[1]; ++o1)
      for (int64_t o2 = 0; o2 < w.out[2]; ++o2) {
        int64_t o[3] = {o0, o1, o2};
        ints.push_back(f(o));
      }
  if (type.isInteger(64))
    return int64Constant(b, loc, w.out, ints);
  return floatConstant(b, loc, w.out, llvm::cast<FloatType>(type),
                       SmallVector<double>(ints.begin(), ints.end()));
}

/// avg_pool3d: the sum of the window slices of the zero-padded input (f32 for
/// bf16/f16) divided by each window's divisor, as ATen counts it.
struct DecomposeAvgPool3d : OpRewritePattern<AvgPool3dOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AvgPool3dOp op, PatternRewriter &rewriter) const override {
    FailureOr<Window3d> w = window3d(op, {1}, rewriter);
    if (failed(w))
      return failure();
    Location loc = op.getLoc();
    Value x = toComputationDtype(rewriter, loc, op.getSelf());
    Value sum;
    for (Value slice : windowSlices(rewriter, loc, x, *w, 0.0))
      sum = sum ? AddOp::create(rewriter, loc, sum, slice, Attribute()).getResult() : slice;
    std::optional<uint64_t> override = op.getDivisorOverride();
    bool includePad = op.getCountIncludePad();
    Value divisor = outputConstant(rewriter, loc, *w, typeOf(x).getDtype(), [&](int64_t *o) {
      if (override)
        return static_cast<int64_t>(*override);
      int64_t count = 1;
      for (int i = 0; i < 3; ++i) {
        int64_t start = o[i] * w->stride[i] - w->padding[i];
        int64_t end = std::min(start + w->kernel[i], w->in[i] + w->padding[i]);
        if (!includePad) {
          start = std::max<int64_t>(start, 0);
          end = std::min(end, w->in[i]);
        }
        count *= end - start;
      }
      return count;
    });
    replaceWithCast(rewriter, op, {DivOp::create(rewriter, loc, sum, divisor, StringAttr())});
    return success();
  }
};

/// max_pool3d: the maximum over the window slices of the input padded with -inf
/// (stacked along a new last dimension; the first of equal maxima), and with
/// `with_indices` its flat position d * H * W + h * W + w in the input: the window's
/// origin plus the offset of the slice that won.
struct DecomposeMaxPool3d : OpRewritePattern<MaxPool3dOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MaxPool3dOp op, PatternRewriter &rewriter) const override {
    FailureOr<Window3d> w = window3d(op, op.getDilation(), rewriter);
    if (failed(w))
      return failure();
    Location loc = op.getLoc();
    SmallVector<Value> slices =
        windowSlices(rewriter, loc, op.getSelf(), *w, -std::numeric_limits<double>::infinity());
    int64_t rank = typeOf(op.getSelf()).getRank();
    Value stacked = StackOp::create(rewriter, loc, slices, rank);
    auto max = MaxDimOp::create(rewriter, loc, stacked, rank, false);
    SmallVector<Value> results = {max.getValues()};
    if (op.getWithIndices()) {
      int64_t plane = w->in[1] * w->in[2], row = w->in[2];
      Value origin = outputConstant(rewriter, loc, *w, rewriter.getI64Type(), [&](int64_t *o) {
        return (o[0] * w->stride[0] - w->padding[0]) * plane +
               (o[1] * w->stride[1] - w->padding[1]) * row + o[2] * w->stride[2] - w->padding[2];
      });
      SmallVector<int64_t> offsets;
      for (int64_t kd = 0; kd < w->kernel[0]; ++kd)
        for (int64_t kh = 0; kh < w->kernel[1]; ++kh)
          for (int64_t kw = 0; kw < w->kernel[2]; ++kw)
            offsets.push_back(kd * w->dilation[0] * plane + kh * w->dilation[1] * row +
                              kw * w->dilation[2]);
      Value table = int64Constant(rewriter, loc, {static_cast<int64_t>(offsets.size())}, offsets);
      Value offset =
          IndexOp::create(rewriter, loc, table, ValueRange{max.getIndices()}, DenseI64ArrayAttr());
      results.push_back(AddOp::create(rewriter, loc, offset, origin, Attribute()));
    }
    rewriter.replaceOp(op, results);
    return success();
  }
};

/// col2im: a scatter_add of the columns into the flattened image [N, C * H * W + 1]
/// at constant positions (the extra last element takes what falls in the padding),
/// cut and viewed as [N, C, H, W].
struct DecomposeCol2Im : OpRewritePattern<Col2ImOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(Col2ImOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    Value x = op.getSelf();
    bool batched = typeOf(x).getRank() == 3;
    if (!batched)
      x = UnsqueezeOp::create(rewriter, loc, x, 0);
    ArrayRef<AffineExpr> sizes = typeOf(x).getSizes();
    ArrayRef<int64_t> out = op.getOutputSize(), kernel = op.getKernelSize(),
                      dilation = op.getDilation(), padding = op.getPadding(),
                      stride = op.getStride();
    int64_t rows = *getConstantSize(sizes[1]), columns = *getConstantSize(sizes[2]);
    int64_t channels = rows / (kernel[0] * kernel[1]), plane = out[0] * out[1];
    int64_t blocksW = (out[1] + 2 * padding[1] - dilation[1] * (kernel[1] - 1) - 1) / stride[1] + 1;
    SmallVector<int64_t> positions;
    for (int64_t c = 0; c < channels; ++c)
      for (int64_t ki = 0; ki < kernel[0]; ++ki)
        for (int64_t kj = 0; kj < kernel[1]; ++kj)
          for (int64_t l = 0; l < columns; ++l) {
            int64_t h = (l / blocksW) * stride[0] - padding[0] + ki * dilation[0];
            int64_t w = (l % blocksW) * stride[1] - padding[1] + kj * dilation[1];
            bool inside = h >= 0 && h < out[0] && w >= 0 && w < out[1];
            positions.push_back(inside ? c * plane + h * out[1] + w : channels * plane);
          }
    int64_t count = positions.size();
    Value table = int64Constant(rewriter, loc, {1, count}, positions);
    AffineExpr n = sizes[0];
    auto cst = [&](int64_t v) { return getAffineConstantExpr(v, ctx); };
    Value index = ExpandOp::create(rewriter, loc, table, shapeAttr(ctx, {n, cst(count)}));
    Value src = ViewOp::create(rewriter, loc, x, shapeAttr(ctx, {n, cst(count)}));
    Value zeros = FullOp::create(rewriter, loc, shapeAttr(ctx, {n, cst(channels * plane + 1)}),
                                 rewriter.getF64FloatAttr(0.0), TypeAttr::get(typeOf(x).getDtype()),
                                 DeviceAttr());
    Value summed = ScatterAddOp::create(rewriter, loc, zeros, 1, index, src);
    Value image = SliceOp::create(rewriter, loc, summed, 1, shapeAttr(ctx, {cst(0)}),
                                  shapeAttr(ctx, {cst(channels * plane)}), 1);
    image = ViewOp::create(rewriter, loc, image,
                           shapeAttr(ctx, {n, cst(channels), cst(out[0]), cst(out[1])}));
    if (!batched)
      image = SqueezeOp::create(rewriter, loc, image, rewriter.getDenseI64ArrayAttr({0}));
    rewriter.replaceOp(op, image);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Resampling and bags
//===----------------------------------------------------------------------===//

/// Elementwise helpers of the sampling and bag decompositions.
struct Arith {
  OpBuilder &b;
  Location loc;
  Value scalar(double v) { return f64(b, loc, v); }
  Value add(Value x, Value y) { return AddOp::create(b, loc, x, y, Attribute()); }
  Value sub(Value x, Value y) { return SubOp::create(b, loc, x, y, Attribute()); }
  Value mul(Value x, Value y) { return MulOp::create(b, loc, x, y); }
  /// x * a + c.
  Value affine(Value x, double a, double c) { return add(mul(x, scalar(a)), scalar(c)); }
  Value where(Value cond, Value x, Value y) { return WhereOp::create(b, loc, cond, x, y); }
  Value both(Value x, Value y) { return LogicalAndOp::create(b, loc, x, y); }
  Value clamp(Value x, double lo, double hi) {
    return ClampOp::create(b, loc, x, b.getF64FloatAttr(lo), b.getF64FloatAttr(hi));
  }
  Value toI64(Value x) { return castTo(b, loc, x, b.getI64Type()); }
  /// An i64 scalar (integer arithmetic stays integer).
  Value integer(int64_t v) { return arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(v)); }
};

/// grid_sampler_2d, as ATen (and torch's decomposition) computes it. The grid's x and y
/// are unnormalized to pixel coordinates; for bilinear and nearest sampling the padding
/// mode then brings them inside the image (bicubic applies it to each tap). A tap at
/// integral (x, y) reads input[n, :, y, x] through advanced indexing on the image
/// viewed [N, H, W, C], or 0 outside the image; the taps are summed with their weights.
/// bf16 and f16 compute in f32.
struct DecomposeGridSampler2d : OpRewritePattern<GridSampler2dOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(GridSampler2dOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    Arith a{rewriter, loc};
    Value input = toComputationDtype(rewriter, loc, op.getInput());
    Value grid = toComputationDtype(rewriter, loc, op.getGrid());
    ArrayRef<AffineExpr> sizes = typeOf(input).getSizes();
    std::optional<int64_t> height = getConstantSize(sizes[2]), width = getConstantSize(sizes[3]);
    if (!height || !width)
      return op.emitOpError("needs a static image height and width");
    int64_t h = *height, w = *width, padding = op.getPaddingMode();
    bool align = op.getAlignCorners();

    auto unnormalize = [&](Value c, int64_t size) {
      return a.affine(c, align ? size * 0.5 - 0.5 : size * 0.5, size * 0.5 - 0.5);
    };
    // Reflects `c` into [low, high] (given doubled, so that half-integers are exact).
    auto reflect = [&](Value c, int64_t twiceLow, int64_t twiceHigh) -> Value {
      if (twiceLow == twiceHigh)
        return FullLikeOp::create(rewriter, loc, c, rewriter.getF64FloatAttr(0.0), TypeAttr());
      double low = twiceLow / 2.0, span = (twiceHigh - twiceLow) / 2.0;
      Value distance = AbsOp::create(rewriter, loc, a.affine(c, 1.0, -low));
      Value extra = FmodOp::create(rewriter, loc, distance, a.scalar(span));
      Value flips = FloorOp::create(
          rewriter, loc, DivOp::create(rewriter, loc, distance, a.scalar(span), StringAttr()));
      Value even = EqOp::create(
          rewriter, loc, RemainderOp::create(rewriter, loc, flips, a.scalar(2.0)), a.scalar(0.0));
      return a.where(even, a.affine(extra, 1.0, low), a.affine(extra, -1.0, span + low));
    };
    auto pad = [&](Value c, int64_t size) -> Value {
      if (padding == 0)
        return c;
      if (padding == 2)
        c = align ? reflect(c, 0, 2 * (size - 1)) : reflect(c, -1, 2 * size - 1);
      return a.clamp(c, 0.0, static_cast<double>(size - 1));
    };

    // The image [N, H, W, C] and the batch positions [N, 1, 1] that index it.
    AffineExpr n = sizes[0];
    auto one = getAffineConstantExpr(1, ctx);
    Value image =
        PermuteOp::create(rewriter, loc, input, rewriter.getDenseI64ArrayAttr({0, 2, 3, 1}));
    Value batch = ArangeOp::create(rewriter, loc, rewriter.getI64IntegerAttr(0),
                                   shapeAttr(ctx, {n}), rewriter.getI64IntegerAttr(1),
                                   TypeAttr::get(rewriter.getI64Type()), DeviceAttr());
    batch = ViewOp::create(rewriter, loc, batch, shapeAttr(ctx, {n, one, one}));
    // input[n, :, y, x] at integral x, y [N, Ho, Wo] as [N, Ho, Wo, C], times `weight`
    // (null: 1); 0 outside the image.
    auto tap = [&](Value x, Value y, Value weight) -> Value {
      Value inside = a.both(a.both(GeOp::create(rewriter, loc, x, a.scalar(0.0)),
                                   LtOp::create(rewriter, loc, x, a.scalar(w))),
                            a.both(GeOp::create(rewriter, loc, y, a.scalar(0.0)),
                                   LtOp::create(rewriter, loc, y, a.scalar(h))));
      // Positions outside (and NaN) read pixel 0 and are then zeroed.
      Value xi = a.toI64(a.where(inside, x, a.scalar(0.0)));
      Value yi = a.toI64(a.where(inside, y, a.scalar(0.0)));
      Value value =
          IndexOp::create(rewriter, loc, image, ValueRange{batch, yi, xi}, DenseI64ArrayAttr());
      if (weight)
        value = a.mul(value, UnsqueezeOp::create(rewriter, loc, weight, 3));
      return a.where(UnsqueezeOp::create(rewriter, loc, inside, 3), value, a.scalar(0.0));
    };

    Value gx = SelectOp::create(rewriter, loc, grid, 3, 0);
    Value gy = SelectOp::create(rewriter, loc, grid, 3, 1);
    Value out;
    switch (op.getInterpolationMode()) {
    case 0: { // bilinear
      Value ix = pad(unnormalize(gx, w), w), iy = pad(unnormalize(gy, h), h);
      Value x0 = FloorOp::create(rewriter, loc, ix), y0 = FloorOp::create(rewriter, loc, iy);
      Value x1 = a.affine(x0, 1.0, 1.0), y1 = a.affine(y0, 1.0, 1.0);
      Value east = a.sub(ix, x0), west = a.sub(x1, ix);
      Value south = a.sub(iy, y0), north = a.sub(y1, iy);
      out = a.add(a.add(a.add(tap(x0, y0, a.mul(west, north)), tap(x1, y0, a.mul(east, north))),
                        tap(x0, y1, a.mul(west, south))),
                  tap(x1, y1, a.mul(east, south)));
      break;
    }
    case 1: { // nearest, ties to even
      Value ix = pad(unnormalize(gx, w), w), iy = pad(unnormalize(gy, h), h);
      out = tap(RoundOp::create(rewriter, loc, ix), RoundOp::create(rewriter, loc, iy), Value());
      break;
    }
    default: { // bicubic
      Value ix = unnormalize(gx, w), iy = unnormalize(gy, h);
      Value x0 = FloorOp::create(rewriter, loc, ix), y0 = FloorOp::create(rewriter, loc, iy);
      auto coefficients = [&](Value t) {
        // Cubic convolution (A = -0.75) at distances t + 1, t, 1 - t, 2 - t.
        const double k = -0.75;
        auto near = [&](Value d) { // |d| <= 1
          return a.affine(a.mul(a.mul(a.affine(d, k + 2, -(k + 3)), d), d), 1.0, 1.0);
        };
        auto far = [&](Value d) { // 1 < |d| < 2
          return a.affine(a.mul(a.affine(a.mul(a.affine(d, k, -5 * k), d), 1.0, 8 * k), d), 1.0,
                          -4 * k);
        };
        return std::array<Value, 4>{far(a.affine(t, 1.0, 1.0)), near(t),
                                    near(a.affine(t, -1.0, 1.0)), far(a.affine(t, -1.0, 2.0))};
      };
      std::array<Value, 4> cx = coefficients(a.sub(ix, x0)), cy = coefficients(a.sub(iy, y0));
      for (int i = 0; i < 4; ++i) {
        Value y = pad(a.affine(y0, 1.0, i - 1), h);
        Value row;
        for (int j = 0; j < 4; ++j) {
          Value term = tap(pad(a.affine(x0, 1.0, j - 1), w), y, cx[j]);
          row = row ? a.add(row, term) : term;
        }
        Value term = a.mul(row, UnsqueezeOp::create(rewriter, loc, cy[i], 3));
        out = out ? a.add(out, term) : term;
      }
      break;
    }
    }
    out = PermuteOp::create(rewriter, loc, out, rewriter.getDenseI64ArrayAttr({0, 3, 1, 2}));
    replaceWithCast(rewriter, op, {out});
    return success();
  }
};

/// affine_grid_generator: the constant base grid [P, k + 1] of (x, y[, z], 1) per output
/// position, times theta transposed [N, k + 1, k], as [N, spatial..., k].
struct DecomposeAffineGrid : OpRewritePattern<AffineGridOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AffineGridOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    Value theta = toComputationDtype(rewriter, loc, op.getTheta());
    ArrayRef<int64_t> spatial = op.getSize().drop_front(2);
    int64_t k = spatial.size(), positions = 1;
    for (int64_t s : spatial)
      positions *= s;
    // The coordinates along one dimension of n positions.
    auto steps = [&](int64_t n) {
      SmallVector<double> v(n, 0.0);
      for (int64_t i = 0; n > 1 && i < n; ++i) {
        v[i] = -1.0 + 2.0 * static_cast<double>(i) / static_cast<double>(n - 1);
        if (!op.getAlignCorners())
          v[i] *= static_cast<double>(n - 1) / static_cast<double>(n);
      }
      return v;
    };
    SmallVector<double> base;
    base.reserve(positions * (k + 1));
    for (int64_t p = 0; p < positions; ++p) {
      // Row-major position p: its index along each spatial dimension, x the last one.
      SmallVector<double> coordinates;
      int64_t rest = p;
      for (int64_t d = k - 1; d >= 0; --d) {
        coordinates.push_back(steps(spatial[d])[rest % spatial[d]]);
        rest /= spatial[d];
      }
      llvm::append_range(base, coordinates);
      base.push_back(1.0);
    }
    Value grid = floatConstant(rewriter, loc, {1, positions, k + 1},
                               llvm::cast<FloatType>(typeOf(theta).getDtype()), base);
    auto cst = [&](int64_t v) { return getAffineConstantExpr(v, ctx); };
    int64_t n = op.getSize()[0];
    grid =
        ExpandOp::create(rewriter, loc, grid, shapeAttr(ctx, {cst(n), cst(positions), cst(k + 1)}));
    Value mapped =
        BmmOp::create(rewriter, loc, grid, TransposeOp::create(rewriter, loc, theta, 1, 2));
    SmallVector<AffineExpr> sizes = {cst(n)};
    for (int64_t s : spatial)
      sizes.push_back(cst(s));
    sizes.push_back(cst(k));
    replaceWithCast(rewriter, op, {ViewOp::create(rewriter, loc, mapped, shapeAttr(ctx, sizes))});
    return success();
  }
};

/// _embedding_bag: each index's bag is the running count of the offsets at or before
/// its position, minus one (ones scatter-added at the offsets, then a cumsum). Padding
/// entries, and those past the last bag when `include_last_offset` ends it early, go to
/// an extra bag B that is cut off at the end. The rows of `weight` at the indices are
/// scatter-added (amax-reduced for max) into the B + 1 bags.
struct DecomposeEmbeddingBag : OpRewritePattern<EmbeddingBagOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(EmbeddingBagOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    Arith a{rewriter, loc};
    if (op.getScaleGradByFreq())
      return op.emitOpError("scale_grad_by_freq is not supported");
    Type i64 = rewriter.getI64Type();
    auto cst = [&](int64_t v) { return getAffineConstantExpr(v, ctx); };
    Value indices = castTo(rewriter, loc, op.getIndices(), i64);
    Value offsets = castTo(rewriter, loc, op.getOffsets(), i64);
    BaseTensorType resultType = typeOf(op.getResult());
    AffineExpr entries = typeOf(indices).getSizes()[0], bags = resultType.getSizes()[0],
               features = resultType.getSizes()[1];
    std::optional<int64_t> numBags = getConstantSize(bags);
    if (!numBags)
      return op.emitOpError("needs a static number of bags");
    auto full = [&](ArrayRef<AffineExpr> sizes, int64_t value, Type dtype) -> Value {
      return FullOp::create(rewriter, loc, shapeAttr(ctx, sizes), rewriter.getI64IntegerAttr(value),
                            TypeAttr::get(dtype), DeviceAttr());
    };
    auto head = [&](Value x, AffineExpr size) -> Value { // x[0:size] along dimension 0
      return SliceOp::create(rewriter, loc, x, 0, shapeAttr(ctx, {cst(0)}), shapeAttr(ctx, {size}),
                             1);
    };
    auto perRow = [&](Value v) { // [L] -> [L, D]
      return ExpandOp::create(rewriter, loc, UnsqueezeOp::create(rewriter, loc, v, 1),
                              shapeAttr(ctx, {entries, features}));
    };

    // bag[i] = #{k : offsets[k] <= i} - 1.
    AffineExpr offsetCount = typeOf(offsets).getSizes()[0];
    Value starts = ScatterAddOp::create(rewriter, loc, full({entries + 1}, 0, i64), 0, offsets,
                                        full({offsetCount}, 1, i64));
    Value counted = CumsumOp::create(rewriter, loc, starts, 0, TypeAttr::get(i64));
    Value offset2bag = a.sub(head(counted, entries), a.integer(1));
    Value kept = LtOp::create(rewriter, loc, offset2bag, a.integer(*numBags));
    if (op.getPaddingIdx() >= 0)
      kept = a.both(kept, NeOp::create(rewriter, loc, indices, a.integer(op.getPaddingIdx())));
    Value bag = a.where(kept, offset2bag, a.integer(*numBags));

    Value rows = EmbeddingOp::create(rewriter, loc, op.getWeight(), indices, op.getPaddingIdx(),
                                     false, false);
    if (Value scale = op.getPerSampleWeights())
      rows = a.mul(rows, UnsqueezeOp::create(rewriter, loc, scale, 1));
    Type dtype = typeOf(rows).getDtype();
    Value rowBag = perRow(bag);
    Value bagSize = head(ScatterAddOp::create(rewriter, loc, full({bags + 1}, 0, i64), 0, bag,
                                              full({entries}, 1, i64)),
                         bags);
    Value result, maxIndices;
    if (op.getMode() == 2) {
      Value reduced = ScatterReduceOp::create(rewriter, loc, full({bags + 1, features}, 0, dtype),
                                              0, rowBag, rows, "amax", false);
      result = head(reduced, bags);
      // Per bag and feature, the first entry that holds the maximum, and its row.
      Value won = EqOp::create(rewriter, loc, rows,
                               GatherOp::create(rewriter, loc, reduced, 0, rowBag, false));
      Value position =
          ArangeOp::create(rewriter, loc, rewriter.getI64IntegerAttr(0), shapeAttr(ctx, {entries}),
                           rewriter.getI64IntegerAttr(1), TypeAttr::get(i64), DeviceAttr());
      Value candidate = a.where(won, perRow(position), a.integer(0));
      Value first = ScatterReduceOp::create(rewriter, loc, full({bags + 1, features}, 0, i64), 0,
                                            a.where(won, rowBag, a.integer(*numBags)), candidate,
                                            "amin", false);
      Value row = IndexOp::create(rewriter, loc, indices, ValueRange{head(first, bags)},
                                  DenseI64ArrayAttr());
      Value filled =
          GtOp::create(rewriter, loc, UnsqueezeOp::create(rewriter, loc, bagSize, 1), a.integer(0));
      maxIndices = a.where(filled, row, a.integer(0));
    } else {
      Value summed = ScatterAddOp::create(rewriter, loc, full({bags + 1, features}, 0, dtype), 0,
                                          rowBag, rows);
      result = head(summed, bags);
      if (op.getMode() == 1) {
        Value divisor = castTo(
            rewriter, loc,
            ClampOp::create(rewriter, loc, bagSize, rewriter.getI64IntegerAttr(1), IntegerAttr()),
            dtype);
        result = DivOp::create(rewriter, loc, result,
                               UnsqueezeOp::create(rewriter, loc, divisor, 1), StringAttr());
      }
      maxIndices = full({bags}, 0, i64);
    }
    if (getConstantSize(typeOf(op.getOffset2bag()).getSizes()[0]) == 0)
      offset2bag = full({cst(0)}, 0, i64);
    replaceWithCast(rewriter, op, {result, offset2bag, bagSize, maxIndices});
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Distances
//===----------------------------------------------------------------------===//

/// The p-norm of `x` over `dims` (all when null): p = 0 counts the non-zero elements,
/// p = inf takes the largest magnitude, -inf the smallest. The root of a sum is taken
/// as where(s == 0, 0, root(where(s == 0, 1, s))): the same value, and a gradient of 0 at
/// an all-zero slice (ATen's norm backward masks it) instead of 0 * inf = NaN.
Value pNorm(OpBuilder &b, Location loc, Value x, double p, DenseI64ArrayAttr dims, bool keepdim) {
  auto scalar = [&](double v) { return f64(b, loc, v); };
  if (p == 0) {
    Value nonzero = NeOp::create(b, loc, x, scalar(0.0));
    return SumOp::create(b, loc, nonzero, dims, keepdim, TypeAttr::get(typeOf(x).getDtype()));
  }
  Value magnitude = AbsOp::create(b, loc, x);
  if (std::isinf(p))
    return p > 0 ? AmaxOp::create(b, loc, magnitude, dims, keepdim, TypeAttr()).getResult()
                 : AminOp::create(b, loc, magnitude, dims, keepdim, TypeAttr()).getResult();
  if (p == 1)
    return SumOp::create(b, loc, magnitude, dims, keepdim, TypeAttr());
  Value powered = p == 2 ? MulOp::create(b, loc, x, x).getResult()
                         : PowOp::create(b, loc, magnitude, scalar(p)).getResult();
  Value sum = SumOp::create(b, loc, powered, dims, keepdim, TypeAttr());
  Value zero = EqOp::create(b, loc, sum, scalar(0.0));
  Value safe = WhereOp::create(b, loc, zero, scalar(1.0), sum);
  Value root = p == 2 ? SqrtOp::create(b, loc, safe).getResult()
                      : PowOp::create(b, loc, safe, scalar(1.0 / p)).getResult();
  return WhereOp::create(b, loc, zero, scalar(0.0), root);
}

/// The p-norm of `diff` over its last dimension.
Value lastDimNorm(OpBuilder &b, Location loc, Value diff, double p) {
  return pNorm(b, loc, diff, p, b.getDenseI64ArrayAttr({typeOf(diff).getRank() - 1}),
               /*keepdim=*/false);
}

/// linalg_vector_norm: pNorm over its dims, in `dtype` when given.
struct DecomposeVectorNorm : OpRewritePattern<VectorNormOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(VectorNormOp op, PatternRewriter &rewriter) const override {
    Value x = op.getSelf();
    if (TypeAttr dtype = op.getDtypeAttr(); dtype && dtype.getValue() != typeOf(x).getDtype())
      x = ToDTypeOp::create(rewriter, op.getLoc(), x, dtype);
    DenseI64ArrayAttr dims = op.getDimAttr();
    if (dims && dims.empty())
      dims = DenseI64ArrayAttr();
    rewriter.replaceOp(
        op, pNorm(rewriter, op.getLoc(), x, op.getOrd().convertToDouble(), dims, op.getKeepdim()));
    return success();
  }
};

/// cdist: the norm over the last dimension of x1[.., P, 1, M] - x2[.., 1, R, M].
struct DecomposeCdist : OpRewritePattern<CdistOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(CdistOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    int64_t rank = typeOf(op.getX1()).getRank();
    Value a = UnsqueezeOp::create(rewriter, loc, op.getX1(), rank - 1);
    Value b = UnsqueezeOp::create(rewriter, loc, op.getX2(), rank - 2);
    Value diff = SubOp::create(rewriter, loc, a, b, Attribute());
    rewriter.replaceOp(op, lastDimNorm(rewriter, loc, diff, op.getP().convertToDouble()));
    return success();
  }
};

/// pdist: the rows i and j of each pair i < j (constant index lists, row-major over the
/// upper triangle) subtracted, and their norm.
struct DecomposePdist : OpRewritePattern<PdistOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(PdistOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    int64_t n = *getConstantSize(typeOf(op.getSelf()).getSizes()[0]);
    SmallVector<int64_t> first, second;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = i + 1; j < n; ++j) {
        first.push_back(i);
        second.push_back(j);
      }
    auto rows = [&](ArrayRef<int64_t> picks) -> Value {
      Value list = int64Constant(rewriter, loc, {static_cast<int64_t>(picks.size())}, picks);
      return IndexOp::create(rewriter, loc, op.getSelf(), ValueRange{list}, DenseI64ArrayAttr());
    };
    Value diff = SubOp::create(rewriter, loc, rows(first), rows(second), Attribute());
    rewriter.replaceOp(op, lastDimNorm(rewriter, loc, diff, op.getP().convertToDouble()));
    return success();
  }
};

} // namespace

void tgc::populateDecomposeNNPatterns(RewritePatternSet &patterns, bool onePass) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<DecomposeLayerNorm, DecomposeBatchNorm, DecomposeGroupNorm>(ctx, onePass);
  patterns.add<BatchUnbatchedPool2d<MaxPool2dOp>, BatchUnbatchedPool2d<AvgPool2dOp>>(ctx);
  patterns.add<DecomposeLayerNormBackward, DecomposeGroupNormBackward, DecomposeConv1d,
               DecomposeTransposedConv2d, DecomposeConv3d, DecomposeTransposedConv3d,
               DecomposeConvolutionBackward, DecomposeAdaptivePool<AdaptiveAvgPoolOp>,
               DecomposeAdaptivePool<AdaptiveAvgPoolBackwardOp>, DecomposeAvgPool3d,
               DecomposeMaxPool3d, DecomposeAvgPool1d, DecomposeCol2Im, DecomposeCdist,
               DecomposePdist, DecomposeGridSampler2d, DecomposeEmbeddingBag, DecomposeAffineGrid,
               DecomposeWeightNorm, DecomposeVectorNorm>(ctx);
}
