// Lowering of matrix products and convolution to named linalg ops.
#include "tgc/Conversion/TgcToLinalg.h"
#include "tgc/Dialect/ScalarBuilder.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Utils/Utils.h"

using namespace mlir;
using namespace tgc;

namespace {

/// If `v` is a transpose of its two innermost dimensions (what linear's `t(weight)`
/// becomes), the transposed tensor; the product then reads it through its indexing map
/// instead of copying it.
Value transposedSource(Value v) {
  int64_t rank = llvm::cast<BaseTensorType>(v.getType()).getRank();
  if (auto permute = v.getDefiningOp<PermuteOp>()) {
    // permute(x, [0, ..., r-1, r-2])
    ArrayRef<int64_t> dims = permute.getDims();
    for (int64_t i = 0; i < rank; ++i) {
      int64_t expected = i < rank - 2 ? i : (i == rank - 2 ? rank - 1 : rank - 2);
      if (normalizeDim(dims[i], rank) != expected)
        return {};
    }
    return rank >= 2 ? permute.getSelf() : Value();
  }
  auto transpose = v.getDefiningOp<TransposeOp>();
  if (!transpose)
    return {};
  std::optional<int64_t> d0 = normalizeDim(transpose.getDim0(), rank);
  std::optional<int64_t> d1 = normalizeDim(transpose.getDim1(), rank);
  if (rank < 2 || !d0 || !d1 || std::min(*d0, *d1) != rank - 2 || std::max(*d0, *d1) != rank - 1)
    return {};
  return transpose.getSelf();
}

/// mm / bmm as linalg.matmul / batch_matmul over a zero-filled accumulator; operands
/// that are transposes are read transposed (the indexing maps say so, and BLAS takes
/// them with its transpose flags).
template <typename OpTy, typename LinalgOp>
struct MatmulLowering : TgcLoweringPattern<OpTy> {
  using TgcLoweringPattern<OpTy>::TgcLoweringPattern;
  LogicalResult matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    auto resultType = llvm::cast<BaseTensorType>(op.getType());
    FailureOr<Value> init = this->lowering.zeroTensor(rewriter, op, resultType);
    if (failed(init))
      return failure();
    MLIRContext *ctx = rewriter.getContext();
    bool batched = resultType.getRank() == 3;
    unsigned numDims = batched ? 4 : 3;
    // Loop dimensions: [b,] m, n, k.
    auto dim = [&](unsigned i) { return getAffineDimExpr(i + (batched ? 1 : 0), ctx); };
    auto map = [&](AffineExpr r, AffineExpr c) {
      SmallVector<AffineExpr> exprs;
      if (batched)
        exprs.push_back(getAffineDimExpr(0, ctx));
      exprs.append({r, c});
      return AffineMap::get(numDims, 0, exprs, ctx);
    };
    Value lhs = adaptor.getSelf(), rhs = adaptor.getMat2();
    AffineMap lhsMap = map(dim(0), dim(2)), rhsMap = map(dim(2), dim(1));
    bool transposed = false;
    if (Value source = transposedSource(op.getSelf())) {
      lhs = rewriter.getRemappedValue(source);
      lhsMap = map(dim(2), dim(0));
      transposed = true;
    }
    if (Value source = transposedSource(op.getMat2())) {
      rhs = rewriter.getRemappedValue(source);
      rhsMap = map(dim(1), dim(2));
      transposed = true;
    }
    SmallVector<NamedAttribute> attrs;
    if (transposed)
      attrs.push_back(rewriter.getNamedAttr(
          "indexing_maps", rewriter.getAffineMapArrayAttr(
                               {lhsMap, rhsMap, map(dim(0), dim(1))})));
    auto product = LinalgOp::create(rewriter, op.getLoc(), TypeRange{init->getType()},
                                    ValueRange{lhs, rhs}, ValueRange{*init}, attrs);
    rewriter.replaceOp(op, product->getResult(0));
    return success();
  }
};

/// 2-d convolution as linalg.conv_2d_nchw_fchw (or the grouped form) on an input padded
/// with zeros, plus the bias broadcast over the channel dimension.
struct ConvolutionLowering : TgcLoweringPattern<ConvolutionOp> {
  using TgcLoweringPattern::TgcLoweringPattern;
  LogicalResult matchAndRewrite(ConvolutionOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto inputType = llvm::cast<BaseTensorType>(op.getInput().getType());
    auto resultType = llvm::cast<BaseTensorType>(op.getType());
    if (inputType.getRank() != 4 || op.getTransposed())
      return op.emitOpError("only non-transposed 2-d convolution is supported so far");
    auto expand = [](ArrayRef<int64_t> v, int64_t fill) {
      SmallVector<int64_t> out(v);
      if (out.size() == 1)
        out.assign(2, out[0]);
      if (out.empty())
        out.assign(2, fill);
      return out;
    };
    SmallVector<int64_t> stride = expand(op.getStride(), 1);
    SmallVector<int64_t> padding = expand(op.getPadding(), 0);
    SmallVector<int64_t> dilation = expand(op.getDilation(), 1);
    Value input = adaptor.getInput();
    Type element = llvm::cast<RankedTensorType>(input.getType()).getElementType();
    if (padding[0] || padding[1]) {
      SmallVector<OpFoldResult> low = {rewriter.getIndexAttr(0), rewriter.getIndexAttr(0),
                                       rewriter.getIndexAttr(padding[0]),
                                       rewriter.getIndexAttr(padding[1])};
      auto inTy = llvm::cast<RankedTensorType>(input.getType());
      SmallVector<int64_t> paddedShape(inTy.getShape());
      for (int i = 2; i < 4; ++i)
        if (!ShapedType::isDynamic(paddedShape[i]))
          paddedShape[i] += 2 * padding[i - 2];
      Value zero = scalarConstant(rewriter, loc, element, 0);
      input = tensor::PadOp::create(rewriter, loc, RankedTensorType::get(paddedShape, element),
                                    input, low, low, zero)
                  .getResult();
    }
    FailureOr<Value> init = lowering.zeroTensor(rewriter, op, resultType);
    if (failed(init))
      return failure();
    int64_t groups = op.getGroups();
    Value result;
    if (groups == 1) {
      FailureOr<Value> gemm =
          im2colConvolution(rewriter, op, input, adaptor.getWeight(), resultType, stride, dilation);
      if (failed(gemm))
        return failure();
      result = *gemm;
    } else {
      FailureOr<Value> grouped = groupedConvolution(
          rewriter, op, input, adaptor.getWeight(), *init, groups,
          rewriter.getI64TensorAttr(stride), rewriter.getI64TensorAttr(dilation));
      if (failed(grouped))
        return failure();
      result = *grouped;
    }
    if (op.getBias()) {
      // bias [C] viewed as [1, C, 1, 1] and added.
      auto biasType = llvm::cast<BaseTensorType>(op.getBias().getType());
      TensorMeta meta = biasType.getMeta();
      MLIRContext *ctx = rewriter.getContext();
      meta.sizes = {getAffineConstantExpr(1, ctx), meta.sizes[0], getAffineConstantExpr(1, ctx),
                    getAffineConstantExpr(1, ctx)};
      BaseTensorType viewType = biasType.withMeta(meta);
      FailureOr<Value> bias = lowering.reshapeTo(rewriter, op, adaptor.getBias(), viewType);
      if (failed(bias))
        return failure();
      FailureOr<Value> broadcast =
          broadcastTo(rewriter, lowering, op, *bias, viewType, resultType);
      if (failed(broadcast))
        return failure();
      auto add = linalg::AddOp::create(rewriter, loc, TypeRange{init->getType()},
                                       ValueRange{result, *broadcast}, ValueRange{*init});
      result = add->getResult(0);
    }
    rewriter.replaceOp(op, result);
    return success();
  }

  /// Convolution as a batched GEMM: the (padded) input is unfolded into columns
  /// col[n, c*KH*KW, oh*OW + ow] (im2col), the weight [F, C, KH, KW] is flattened to
  /// [F, C*KH*KW] and broadcast over the batch, and their product is reshaped to
  /// [N, F, OH, OW]. The product is a linalg.batch_matmul, which goes to BLAS.
  FailureOr<Value> im2colConvolution(ConversionPatternRewriter &rewriter, ConvolutionOp op,
                                     Value input, Value weight, BaseTensorType resultType,
                                     ArrayRef<int64_t> stride,
                                     ArrayRef<int64_t> dilation) const {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    auto wTy = llvm::cast<RankedTensorType>(weight.getType());
    if (!wTy.hasStaticShape())
      return op.emitOpError("convolution needs a static weight shape");
    Type element = wTy.getElementType();
    int64_t filters = wTy.getDimSize(0), kh = wTy.getDimSize(2), kw = wTy.getDimSize(3);
    int64_t patch = wTy.getDimSize(1) * kh * kw;
    ArrayRef<AffineExpr> outSizes = resultType.getSizes();
    AffineExpr batch = outSizes[0], pixels = outSizes[2] * outSizes[3];
    std::optional<int64_t> outW = getConstantSize(outSizes[3]);
    if (!outW)
      return op.emitOpError("convolution needs static spatial sizes");
    auto typeWith = [&](ArrayRef<AffineExpr> sizes) {
      TensorMeta meta = resultType.getMeta();
      meta.sizes.assign(sizes.begin(), sizes.end());
      return resultType.withMeta(meta);
    };
    AffineExpr p = getAffineConstantExpr(patch, ctx), f = getAffineConstantExpr(filters, ctx);

    // col[n, c, kh, kw, oh, ow] = input[n, c, oh*sh + kh*dh, ow*sw + kw*dw]: an affine
    // copy (vectorizable along ow), collapsed to [N, C*KH*KW, OH*OW].
    int64_t channels = wTy.getDimSize(1);
    std::optional<int64_t> outH = getConstantSize(outSizes[2]);
    AffineExpr kc = getAffineConstantExpr(channels, ctx), khE = getAffineConstantExpr(kh, ctx),
               kwE = getAffineConstantExpr(kw, ctx);
    FailureOr<Value> colInit = lowering.emptyTensor(
        rewriter, op, typeWith({batch, kc, khE, kwE, outSizes[2], outSizes[3]}));
    if (failed(colInit) || !outH)
      return failure();
    AffineExpr n, c, i, j, oh, ow;
    bindDims(ctx, n, c, i, j, oh, ow);
    AffineMap read = AffineMap::get(
        6, 0, {n, c, oh * stride[0] + i * dilation[0], ow * stride[1] + j * dilation[1]}, ctx);
    SmallVector<utils::IteratorType> parallel6(6, utils::IteratorType::parallel);
    auto unfold = linalg::GenericOp::create(
        rewriter, loc, colInit->getType(), input, *colInit,
        {read, AffineMap::getMultiDimIdentityMap(6, ctx)}, parallel6,
        [&](OpBuilder &b, Location l, ValueRange args) { linalg::YieldOp::create(b, l, args[0]); });
    auto colType = llvm::cast<RankedTensorType>(colInit->getType());
    Value col = tensor::CollapseShapeOp::create(
        rewriter, loc,
        RankedTensorType::get({colType.getDimSize(0), patch, *outH * *outW}, element),
        unfold.getResult(0), SmallVector<ReassociationIndices>{{0}, {1, 2, 3}, {4, 5}});

    // The weight as [F, C*KH*KW], broadcast to [N, F, C*KH*KW].
    Value flatWeight = tensor::CollapseShapeOp::create(
        rewriter, loc, RankedTensorType::get({filters, patch}, element), weight,
        SmallVector<ReassociationIndices>{{0}, {1, 2, 3}});
    FailureOr<Value> wInit = lowering.emptyTensor(rewriter, op, typeWith({batch, f, p}));
    if (failed(wInit))
      return failure();
    Value wBatch = linalg::BroadcastOp::create(rewriter, loc, flatWeight, *wInit,
                                               ArrayRef<int64_t>{0})
                       ->getResult(0);

    FailureOr<Value> product = lowering.zeroTensor(rewriter, op, typeWith({batch, f, pixels}));
    if (failed(product))
      return failure();
    Value gemm = linalg::BatchMatmulOp::create(rewriter, loc, TypeRange{product->getType()},
                                               ValueRange{wBatch, col},
                                               ValueRange{*product})
                     ->getResult(0);
    return lowering.reshapeTo(rewriter, op, gemm, resultType);
  }

  /// Grouped convolution through linalg.conv_2d_ngchw_gfchw on reshaped operands.
  FailureOr<Value> groupedConvolution(ConversionPatternRewriter &rewriter, ConvolutionOp op,
                                      Value input, Value weight, Value init, int64_t groups,
                                      DenseIntElementsAttr strides,
                                      DenseIntElementsAttr dilations) const {
    Location loc = op.getLoc();
    auto inTy = llvm::cast<RankedTensorType>(input.getType());
    auto wTy = llvm::cast<RankedTensorType>(weight.getType());
    auto outTy = llvm::cast<RankedTensorType>(init.getType());
    if (!inTy.hasStaticShape() || !wTy.hasStaticShape() || !outTy.hasStaticShape())
      return op.emitOpError("grouped convolution needs static sizes so far");
    auto split = [&](Value v, RankedTensorType t, int64_t dim) {
      SmallVector<int64_t> shape(t.getShape());
      shape[dim] /= groups;
      shape.insert(shape.begin() + dim, groups);
      SmallVector<ReassociationIndices> reassoc;
      for (int64_t i = 0, e = t.getRank(); i < e; ++i)
        reassoc.push_back(i < dim ? ReassociationIndices{i}
                          : i == dim ? ReassociationIndices{i, i + 1}
                                     : ReassociationIndices{i + 1});
      return tensor::ExpandShapeOp::create(
                 rewriter, loc, RankedTensorType::get(shape, t.getElementType()), v, reassoc)
          .getResult();
    };
    Value gInput = split(input, inTy, 1), gWeight = split(weight, wTy, 0);
    Value gInit = split(init, outTy, 1);
    Value conv = linalg::Conv2DNgchwGfchwOp::create(rewriter, loc, gInit.getType(),
                                                    ValueRange{gInput, gWeight},
                                                    ValueRange{gInit}, strides, dilations)
                     .getResult(0);
    SmallVector<ReassociationIndices> collapse = {{0}, {1, 2}, {3}, {4}};
    return tensor::CollapseShapeOp::create(rewriter, loc, outTy, conv, collapse).getResult();
  }
};

} // namespace

void tgc::populateLinearAlgebraPatterns(const LoweringContext &lowering,
                                        RewritePatternSet &patterns) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<MatmulLowering<MmOp, linalg::MatmulOp>,
               MatmulLowering<BmmOp, linalg::BatchMatmulOp>, ConvolutionLowering>(lowering,
                                                                                  ctx);
}
