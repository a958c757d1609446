// Lowering of matrix products and convolution to named linalg ops.
#include "tgc/Conversion/TgcToLinalg.h"
#include "tgc/Dialect/ScalarBuilder.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
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
template <typename OpTy, typename LinalgOp> struct MatmulLowering : TgcLoweringPattern<OpTy> {
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
          "indexing_maps", rewriter.getAffineMapArrayAttr({lhsMap, rhsMap, map(dim(0), dim(1))})));
    auto product = LinalgOp::create(rewriter, op.getLoc(), TypeRange{init->getType()},
                                    ValueRange{lhs, rhs}, ValueRange{*init}, attrs);
    rewriter.replaceOp(op, product->getResult(0));
    return success();
  }
};

/// A 2-d convolution parameter with one entry per spatial dimension (a single value
/// applies to both, an empty list means `fill`).
SmallVector<int64_t> expandParam(ArrayRef<int64_t> v, int64_t fill) {
  SmallVector<int64_t> out(v);
  if (out.size() == 1)
    out.assign(2, out[0]);
  if (out.empty())
    out.assign(2, fill);
  return out;
}

/// `input` [N, C, H, W] with `padding` zeros before and after H and W.
Value padSpatial(OpBuilder &b, Location loc, Value input, ArrayRef<int64_t> low,
                 ArrayRef<int64_t> high) {
  if (!low[0] && !low[1] && !high[0] && !high[1])
    return input;
  auto inTy = llvm::cast<RankedTensorType>(input.getType());
  Type element = inTy.getElementType();
  auto amounts = [&](ArrayRef<int64_t> pad) {
    return SmallVector<OpFoldResult>{b.getIndexAttr(0), b.getIndexAttr(0), b.getIndexAttr(pad[0]),
                                     b.getIndexAttr(pad[1])};
  };
  SmallVector<int64_t> paddedShape(inTy.getShape());
  for (int i = 2; i < 4; ++i)
    if (!ShapedType::isDynamic(paddedShape[i]))
      paddedShape[i] += low[i - 2] + high[i - 2];
  Value zero = scalarConstant(b, loc, element, 0);
  return tensor::PadOp::create(b, loc, RankedTensorType::get(paddedShape, element), input,
                               amounts(low), amounts(high), zero)
      .getResult();
}

Value padSpatial(OpBuilder &b, Location loc, Value input, ArrayRef<int64_t> padding) {
  return padSpatial(b, loc, input, padding, padding);
}

/// Taps of a kernel larger than this are not unrolled (convnext's 7x7 has 49).
constexpr int64_t kMaxDirectTaps = 64;

/// Whether a convolution is depthwise (one input and one output channel per group) with
/// a kernel small enough to compute directly: as a sum of its taps (`tapSum`) instead of
/// a GEMM per image and channel.
bool isDirectDepthwise(int64_t channels, int64_t filters, int64_t groups, int64_t kernelH,
                       int64_t kernelW) {
  return groups > 1 && channels == groups && filters == groups &&
         kernelH * kernelW <= kMaxDirectTaps;
}

/// `padded` [N, C, H, W] (W a multiple of s) as its s column phases [N, C, H, s, W / s]:
/// column s * w + p at [p, w]. A window with column stride s then reads a row of one
/// phase with unit stride, so it vectorizes like a stride-1 window. One transpose.
Value splitColumnPhases(OpBuilder &b, Location loc, Value padded, int64_t s) {
  auto type = llvm::cast<RankedTensorType>(padded.getType());
  SmallVector<int64_t> shape(type.getShape());
  if (s == 1) {
    // One phase: a view.
    shape.insert(shape.begin() + 3, 1);
    return tensor::ExpandShapeOp::create(
        b, loc, RankedTensorType::get(shape, type.getElementType()), padded,
        SmallVector<ReassociationIndices>{{0}, {1}, {2}, {3, 4}});
  }
  shape[3] /= s;
  shape.push_back(s);
  Value expanded = tensor::ExpandShapeOp::create(
      b, loc, RankedTensorType::get(shape, type.getElementType()), padded,
      SmallVector<ReassociationIndices>{{0}, {1}, {2}, {3, 4}});
  SmallVector<OpFoldResult> sizes = {tensor::getMixedSize(b, loc, padded, 0),
                                     b.getIndexAttr(shape[1]), b.getIndexAttr(shape[2]),
                                     b.getIndexAttr(s), b.getIndexAttr(shape[3])};
  Value init = tensor::EmptyOp::create(b, loc, sizes, type.getElementType());
  return linalg::TransposeOp::create(b, loc, expanded, init, ArrayRef<int64_t>{0, 1, 2, 4, 3})
      ->getResult(0);
}

/// `input` [N, C, H, W] padded with zeros (the right padding rounded up to a multiple of
/// the column stride) and split into its column phases (`splitColumnPhases`): what the
/// taps of a depthwise convolution read (`tapWindow`).
Value paddedColumnPhases(OpBuilder &b, Location loc, Value input, ArrayRef<int64_t> padding,
                         ArrayRef<int64_t> stride) {
  int64_t width = llvm::cast<RankedTensorType>(input.getType()).getDimSize(3) + 2 * padding[1];
  int64_t roundUp = (stride[1] - width % stride[1]) % stride[1];
  Value padded =
      padSpatial(b, loc, input, padding, SmallVector<int64_t>{padding[0], padding[1] + roundUp});
  return splitColumnPhases(b, loc, padded, stride[1]);
}

/// The window of the column phases `phases` [N, C, H', s, W'] that tap (kh, kw) of a
/// convolution reads, as [N, C, rows, cols]: rows from kh * dilation with the row stride,
/// columns from column kw * dilation with stride s (`splitColumnPhases`), so unit stride.
Value tapWindow(OpBuilder &b, Location loc, Value phases, int64_t kh, int64_t kw, int64_t rows,
                int64_t cols, ArrayRef<int64_t> stride, ArrayRef<int64_t> dilation) {
  auto type = llvm::cast<RankedTensorType>(phases.getType());
  int64_t column = kw * dilation[1];
  SmallVector<OpFoldResult> offsets = {
      b.getIndexAttr(0), b.getIndexAttr(0), b.getIndexAttr(kh * dilation[0]),
      b.getIndexAttr(column % stride[1]), b.getIndexAttr(column / stride[1])};
  SmallVector<OpFoldResult> sizes = {tensor::getMixedSize(b, loc, phases, 0),
                                     b.getIndexAttr(type.getDimSize(1)), b.getIndexAttr(rows),
                                     b.getIndexAttr(1), b.getIndexAttr(cols)};
  SmallVector<OpFoldResult> strides = {b.getIndexAttr(1), b.getIndexAttr(1),
                                       b.getIndexAttr(stride[0]), b.getIndexAttr(1),
                                       b.getIndexAttr(1)};
  auto tapType = RankedTensorType::get({type.getDimSize(0), type.getDimSize(1), rows, cols},
                                       type.getElementType());
  return tensor::ExtractSliceOp::create(b, loc, tapType, phases, offsets, sizes, strides)
      .getResult();
}

/// Tap (kh, kw) of a depthwise weight [C, 1, KH, KW]: its [C] coefficients.
Value tapWeight(OpBuilder &b, Location loc, Value weight, int64_t kh, int64_t kw) {
  auto type = llvm::cast<RankedTensorType>(weight.getType());
  SmallVector<OpFoldResult> offsets = {b.getIndexAttr(0), b.getIndexAttr(0), b.getIndexAttr(kh),
                                       b.getIndexAttr(kw)};
  SmallVector<OpFoldResult> sizes = {b.getIndexAttr(type.getDimSize(0)), b.getIndexAttr(1),
                                     b.getIndexAttr(1), b.getIndexAttr(1)};
  SmallVector<OpFoldResult> strides(4, b.getIndexAttr(1));
  auto tapType = RankedTensorType::get({type.getDimSize(0)}, type.getElementType());
  return tensor::ExtractSliceOp::create(b, loc, tapType, weight, offsets, sizes, strides)
      .getResult();
}

/// The arithmetic type of a depthwise sum: f32 for narrower floats (bf16, f16).
Type accumulatorType(Type element) {
  if (auto f = llvm::dyn_cast<FloatType>(element); f && f.getWidth() < 32)
    return Float32Type::get(element.getContext());
  return element;
}

/// out[n, c, h, w] = sum over t of taps[t][n, c, h, w] * weights[t][c], one elementwise
/// linalg.generic into `init` [N, C, H, W], summed in the order of the taps. Each tap is
/// a window of the (padded) input read as a tensor of the output's shape, so the sum is
/// elementwise: it vectorizes along w (a unit stride reads contiguous vectors) and fuses
/// with its producers and consumers like any elementwise op (a depthwise convolution's
/// batch norm and activation).
Value tapSum(OpBuilder &b, Location loc, ArrayRef<Value> taps, ArrayRef<Value> weights,
             Value init) {
  MLIRContext *ctx = b.getContext();
  AffineExpr n, c, h, w;
  bindDims(ctx, n, c, h, w);
  AffineMap identity = AffineMap::getMultiDimIdentityMap(4, ctx);
  AffineMap perChannel = AffineMap::get(4, 0, {c}, ctx);
  SmallVector<Value> inputs(taps);
  inputs.append(weights.begin(), weights.end());
  SmallVector<AffineMap> maps(taps.size(), identity);
  maps.append(weights.size(), perChannel);
  maps.push_back(identity);
  Type element = llvm::cast<RankedTensorType>(init.getType()).getElementType();
  Type accumulator = accumulatorType(element);
  size_t count = taps.size();
  return linalg::GenericOp::create(
             b, loc, init.getType(), inputs, init, maps,
             SmallVector<utils::IteratorType>(4, utils::IteratorType::parallel),
             [&](OpBuilder &nb, Location l, ValueRange args) {
               Value sum;
               for (size_t t = 0; t < count; ++t) {
                 Value term = mulScalars(nb, l, castScalar(nb, l, args[t], accumulator),
                                         castScalar(nb, l, args[count + t], accumulator));
                 sum = sum ? addScalars(nb, l, sum, term) : term;
               }
               linalg::YieldOp::create(nb, l, castScalar(nb, l, sum, element));
             })
      .getResult(0);
}

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
    SmallVector<int64_t> stride = expandParam(op.getStride(), 1);
    SmallVector<int64_t> padding = expandParam(op.getPadding(), 0);
    SmallVector<int64_t> dilation = expandParam(op.getDilation(), 1);
    int64_t groups = op.getGroups();
    Value result;
    if (groups != 1) {
      FailureOr<Value> direct =
          directDepthwise(rewriter, op, adaptor.getInput(), adaptor.getWeight(), resultType, groups,
                          stride, padding, dilation);
      if (failed(direct))
        return failure();
      result = *direct;
    }
    Value input = result ? Value() : padSpatial(rewriter, loc, adaptor.getInput(), padding);
    FailureOr<Value> init = lowering.zeroTensor(rewriter, op, resultType);
    if (failed(init))
      return failure();
    if (groups == 1) {
      FailureOr<Value> gemm =
          im2colConvolution(rewriter, op, input, adaptor.getWeight(), resultType, stride, dilation);
      if (failed(gemm))
        return failure();
      result = *gemm;
    } else if (!result) {
      FailureOr<Value> grouped = groupedConvolution(rewriter, op, input, adaptor.getWeight(), *init,
                                                    groups, rewriter.getI64TensorAttr(stride),
                                                    rewriter.getI64TensorAttr(dilation));
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
      FailureOr<Value> broadcast = broadcastTo(rewriter, lowering, op, *bias, viewType, resultType);
      if (failed(broadcast))
        return failure();
      auto add = linalg::AddOp::create(rewriter, loc, TypeRange{init->getType()},
                                       ValueRange{result, *broadcast}, ValueRange{*init});
      result = add->getResult(0);
    }
    rewriter.replaceOp(op, result);
    return success();
  }

  /// Convolution as one GEMM over the whole batch: the (padded) input is unfolded into
  /// columns col[c*KH*KW, n*OH*OW + oh*OW + ow] (im2col), the weight [F, C, KH, KW] is
  /// flattened to [F, C*KH*KW], and their product [F, N*OH*OW] is viewed as
  /// [F, N, OH, OW] and transposed to [N, F, OH, OW]. One product packs the weight once
  /// and has N times the columns a product per image has (resnet's last stage has 2x2
  /// pixels per image); the transpose is elementwise and fuses into the convolution's
  /// consumer (tgc-form-kernels). The product is a linalg.matmul, which goes to BLAS.
  FailureOr<Value> im2colConvolution(ConversionPatternRewriter &rewriter, ConvolutionOp op,
                                     Value input, Value weight, BaseTensorType resultType,
                                     ArrayRef<int64_t> stride, ArrayRef<int64_t> dilation) const {
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
    std::optional<int64_t> outH = getConstantSize(outSizes[2]);
    std::optional<int64_t> outW = getConstantSize(outSizes[3]);
    if (!outH || !outW)
      return op.emitOpError("convolution needs static spatial sizes");
    auto typeWith = [&](ArrayRef<AffineExpr> sizes) {
      TensorMeta meta = resultType.getMeta();
      meta.sizes.assign(sizes.begin(), sizes.end());
      return resultType.withMeta(meta);
    };
    AffineExpr f = getAffineConstantExpr(filters, ctx);

    // The product [F, N*OH*OW]: in chunks of its columns (images, or rows of an image)
    // when they are large, else one GEMM with the columns of the whole batch.
    Value gemm;
    std::optional<int64_t> images = getConstantSize(batch);
    ColumnChunk chunk =
        images && llvm::cast<RankedTensorType>(input.getType()).hasStaticShape()
            ? columnChunk(*images, patch, *outH, *outW, element.getIntOrFloatBitWidth() / 8)
            : ColumnChunk{0, 0};
    if (images && (chunk.images < *images || chunk.rows < *outH)) {
      gemm = chunkedProduct(rewriter, loc, input, flattenWeight(rewriter, loc, weight), wTy, chunk,
                            *outH, *outW, stride, dilation);
    } else {
      int64_t channels = wTy.getDimSize(1);
      AffineExpr kc = getAffineConstantExpr(channels, ctx), khE = getAffineConstantExpr(kh, ctx),
                 kwE = getAffineConstantExpr(kw, ctx);
      FailureOr<Value> colInit = lowering.emptyTensor(
          rewriter, op, typeWith({kc, khE, kwE, batch, outSizes[2], outSizes[3]}));
      if (failed(colInit))
        return failure();
      auto colType = llvm::cast<RankedTensorType>(colInit->getType());
      int64_t columns =
          colType.isDynamicDim(3) ? ShapedType::kDynamic : colType.getDimSize(3) * *outH * *outW;
      Value col = unfoldColumns(rewriter, loc, input, *colInit, patch, columns, stride, dilation);
      Value flatWeight = flattenWeight(rewriter, loc, weight);
      FailureOr<Value> product = lowering.zeroTensor(rewriter, op, typeWith({f, batch * pixels}));
      if (failed(product))
        return failure();
      gemm = linalg::MatmulOp::create(rewriter, loc, TypeRange{product->getType()},
                                      ValueRange{flatWeight, col}, ValueRange{*product})
                 ->getResult(0);
    }
    FailureOr<Value> perFilter =
        lowering.reshapeTo(rewriter, op, gemm, typeWith({f, batch, outSizes[2], outSizes[3]}));
    FailureOr<Value> out = lowering.emptyTensor(rewriter, op, resultType);
    if (failed(perFilter) || failed(out))
      return failure();
    return linalg::TransposeOp::create(rewriter, loc, *perFilter, *out,
                                       ArrayRef<int64_t>{1, 0, 2, 3})
        ->getResult(0);
  }

  /// The weight [F, C, KH, KW] as the GEMM's [F, C*KH*KW].
  static Value flattenWeight(OpBuilder &b, Location loc, Value weight) {
    auto wTy = llvm::cast<RankedTensorType>(weight.getType());
    int64_t patch = wTy.getDimSize(1) * wTy.getDimSize(2) * wTy.getDimSize(3);
    return tensor::CollapseShapeOp::create(
        b, loc, RankedTensorType::get({wTy.getDimSize(0), patch}, wTy.getElementType()), weight,
        SmallVector<ReassociationIndices>{{0}, {1, 2, 3}});
  }

  /// im2col: col[c, kh, kw, n, oh, ow] = x[n, c, oh*sh + kh*dh, ow*sw + kw*dw] into
  /// `colInit`, an affine copy (vectorizable along ow), collapsed to [patch, columns].
  static Value unfoldColumns(OpBuilder &b, Location loc, Value x, Value colInit, int64_t patch,
                             int64_t columns, ArrayRef<int64_t> stride,
                             ArrayRef<int64_t> dilation) {
    MLIRContext *ctx = b.getContext();
    AffineExpr c, i, j, n, oh, ow;
    bindDims(ctx, c, i, j, n, oh, ow);
    // A 1-wide kernel dimension reads at offset 0: the map stays a projected permutation
    // for a 1x1 convolution, also once its producer (a depthwise convolution's sum of
    // taps, its batch norm) is fused into the unfold, so that still vectorizes.
    auto colType = llvm::cast<RankedTensorType>(colInit.getType());
    AffineExpr rowTap =
        colType.getDimSize(1) == 1 ? getAffineConstantExpr(0, ctx) : i * dilation[0];
    AffineExpr colTap =
        colType.getDimSize(2) == 1 ? getAffineConstantExpr(0, ctx) : j * dilation[1];
    AffineMap read =
        AffineMap::get(6, 0, {n, c, oh * stride[0] + rowTap, ow * stride[1] + colTap}, ctx);
    auto unfold = linalg::GenericOp::create(
        b, loc, colInit.getType(), x, colInit, {read, AffineMap::getMultiDimIdentityMap(6, ctx)},
        SmallVector<utils::IteratorType>(6, utils::IteratorType::parallel),
        [&](OpBuilder &nb, Location l, ValueRange args) {
          linalg::YieldOp::create(nb, l, args[0]);
        });
    Type element = llvm::cast<RankedTensorType>(colInit.getType()).getElementType();
    return tensor::CollapseShapeOp::create(b, loc, RankedTensorType::get({patch, columns}, element),
                                           unfold.getResult(0),
                                           SmallVector<ReassociationIndices>{{0, 1, 2}, {3, 4, 5}});
  }

  /// Bytes of im2col columns a chunk of the batch may take: about the second-level
  /// cache of a core. Columns written and read back while they are in the cache cost a
  /// fraction of columns that go to memory and back (17.7 MB for a 3x3 stride-2
  /// convolution of 32 channels at 64x64, batch 16).
  static constexpr int64_t kColumnChunkBytes = 1 << 20;
  /// Columns a product should have at the least: below, the packing of the weight (once
  /// per product) and the library call start to count.
  static constexpr int64_t kMinChunkColumns = 256;

  /// A chunk of the product's columns: `images` whole images, or `rows` output rows of
  /// one image (`images` is 1 then).
  struct ColumnChunk {
    int64_t images;
    int64_t rows;
  };

  /// The largest divisor of `extent` whose `unitBytes` each fit kColumnChunkBytes, but
  /// one with at least kMinChunkColumns columns (`unitColumns` each).
  static int64_t chunkDivisor(int64_t extent, int64_t unitBytes, int64_t unitColumns) {
    int64_t fitting = 1, enough = extent;
    for (int64_t d = extent; d >= 1; --d) {
      if (extent % d != 0)
        continue;
      if (d * unitBytes <= kColumnChunkBytes)
        fitting = std::max(fitting, d);
      if (d * unitColumns >= kMinChunkColumns)
        enough = d;
    }
    return std::max(fitting, enough);
  }

  /// The chunks of the product of a [F, patch] weight with the columns of `images`
  /// images of outH x outW pixels: whole images (a divisor of the batch) while one
  /// image's columns fit kColumnChunkBytes, else rows of an image (a divisor of outH),
  /// so that a chunk's columns stay in the cache also at 224x224 (resnet's first stage
  /// has 7 MB of columns per image). The whole batch is one chunk when it fits.
  static ColumnChunk columnChunk(int64_t images, int64_t patch, int64_t outH, int64_t outW,
                                 int64_t elementBytes) {
    int64_t rowBytes = patch * outW * elementBytes;
    if (rowBytes * outH <= kColumnChunkBytes || outH == 1)
      return {chunkDivisor(images, rowBytes * outH, outH * outW), outH};
    return {1, chunkDivisor(outH, rowBytes, outW)};
  }

  /// The product [F, N*OH*OW] of the flattened weight with the im2col columns, one
  /// chunk at a time: an scf.forall over the chunks unfolds a chunk's columns (from its
  /// images' input rows) and multiplies them into its slice of the product, the chunk's
  /// consecutive columns. Chunks are independent, so they run on the threads, each with
  /// its columns in its own core's cache between the unfold and the product (every shape
  /// static).
  static Value chunkedProduct(OpBuilder &b, Location loc, Value input, Value flatWeight,
                              RankedTensorType wTy, ColumnChunk chunk, int64_t outH, int64_t outW,
                              ArrayRef<int64_t> stride, ArrayRef<int64_t> dilation) {
    auto inTy = llvm::cast<RankedTensorType>(input.getType());
    Type element = wTy.getElementType();
    int64_t images = inTy.getDimSize(0), channels = inTy.getDimSize(1);
    int64_t filters = wTy.getDimSize(0), kh = wTy.getDimSize(2), kw = wTy.getDimSize(3);
    int64_t patch = channels * kh * kw, pixels = outH * outW;
    int64_t blocks = outH / chunk.rows; // row blocks per image
    int64_t columns = chunk.images * chunk.rows * outW;
    // The input rows a block of output rows reads (all of them for whole images).
    int64_t inRows = blocks == 1 ? inTy.getDimSize(2)
                                 : (chunk.rows - 1) * stride[0] + (kh - 1) * dilation[0] + 1;
    Value product =
        tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{filters, images * pixels}, element);
    auto forall = scf::ForallOp::create(
        b, loc, ArrayRef<OpFoldResult>{b.getIndexAttr(images / chunk.images * blocks)},
        ValueRange{product}, std::nullopt);
    OpBuilder body = OpBuilder::atBlockTerminator(forall.getBody());
    Value index = forall.getInductionVars()[0];
    AffineExpr i = body.getAffineDimExpr(0);
    auto apply = [&](AffineExpr e) -> OpFoldResult {
      return affine::AffineApplyOp::create(body, loc, AffineMap::get(1, 0, e), index).getResult();
    };
    OpFoldResult image = apply(i.floorDiv(blocks) * chunk.images);
    OpFoldResult row = blocks == 1 ? OpFoldResult(body.getIndexAttr(0))
                                   : apply((i % blocks) * (chunk.rows * stride[0]));
    SmallVector<OpFoldResult> inOffsets = {image, body.getIndexAttr(0), row, body.getIndexAttr(0)};
    SmallVector<OpFoldResult> inSizes = {body.getIndexAttr(chunk.images),
                                         body.getIndexAttr(channels), body.getIndexAttr(inRows),
                                         body.getIndexAttr(inTy.getDimSize(3))};
    SmallVector<OpFoldResult> ones(4, body.getIndexAttr(1));
    Value x = tensor::ExtractSliceOp::create(
        body, loc,
        RankedTensorType::get({chunk.images, channels, inRows, inTy.getDimSize(3)}, element), input,
        inOffsets, inSizes, ones);
    Value colInit = tensor::EmptyOp::create(
        body, loc, ArrayRef<int64_t>{channels, kh, kw, chunk.images, chunk.rows, outW}, element);
    Value col = unfoldColumns(body, loc, x, colInit, patch, columns, stride, dilation);
    SmallVector<OpFoldResult> offsets = {body.getIndexAttr(0), apply(i * columns)};
    SmallVector<OpFoldResult> sizes = {body.getIndexAttr(filters), body.getIndexAttr(columns)};
    SmallVector<OpFoldResult> unit(2, body.getIndexAttr(1));
    auto sliceType = RankedTensorType::get({filters, columns}, element);
    Value slice = tensor::ExtractSliceOp::create(
        body, loc, sliceType, forall.getRegionIterArgs()[0], offsets, sizes, unit);
    Value zero = arith::ConstantOp::create(body, loc, body.getZeroAttr(element));
    Value filled = linalg::FillOp::create(body, loc, zero, slice).getResult(0);
    Value gemm = linalg::MatmulOp::create(body, loc, TypeRange{sliceType},
                                          ValueRange{flatWeight, col}, ValueRange{filled})
                     ->getResult(0);
    body.setInsertionPointToStart(forall.getTerminator().getBody());
    tensor::ParallelInsertSliceOp::create(body, loc, gemm, forall.getRegionIterArgs()[0], offsets,
                                          sizes, unit);
    return forall.getResult(0);
  }

  /// A depthwise convolution as the sum of its taps (`tapSum`) over the input padded
  /// with zeros and split into column phases (`splitColumnPhases`; its right padding
  /// rounded up to a multiple of the column stride), or a null value when it is not one
  /// that `isDirectDepthwise` takes or its spatial sizes are dynamic.
  FailureOr<Value> directDepthwise(ConversionPatternRewriter &rewriter, ConvolutionOp op,
                                   Value input, Value weight, BaseTensorType resultType,
                                   int64_t groups, ArrayRef<int64_t> stride,
                                   ArrayRef<int64_t> padding, ArrayRef<int64_t> dilation) const {
    auto inTy = llvm::cast<RankedTensorType>(input.getType());
    auto wTy = llvm::cast<RankedTensorType>(weight.getType());
    std::optional<int64_t> outH = getConstantSize(resultType.getSizes()[2]);
    std::optional<int64_t> outW = getConstantSize(resultType.getSizes()[3]);
    if (!wTy.hasStaticShape() || inTy.isDynamicDim(1) || inTy.isDynamicDim(3) || !outH || !outW ||
        !isDirectDepthwise(inTy.getDimSize(1), wTy.getDimSize(0), groups, wTy.getDimSize(2),
                           wTy.getDimSize(3)))
      return Value();
    FailureOr<Value> init = lowering.emptyTensor(rewriter, op, resultType);
    if (failed(init))
      return failure();
    Location loc = op.getLoc();
    Value phases = paddedColumnPhases(rewriter, loc, input, padding, stride);
    SmallVector<Value> taps, weights;
    for (int64_t kh = 0; kh < wTy.getDimSize(2); ++kh)
      for (int64_t kw = 0; kw < wTy.getDimSize(3); ++kw) {
        taps.push_back(tapWindow(rewriter, loc, phases, kh, kw, *outH, *outW, stride, dilation));
        weights.push_back(tapWeight(rewriter, loc, weight, kh, kw));
      }
    return tapSum(rewriter, loc, taps, weights, *init);
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
        reassoc.push_back(i < dim    ? ReassociationIndices{i}
                          : i == dim ? ReassociationIndices{i, i + 1}
                                     : ReassociationIndices{i + 1});
      return tensor::ExpandShapeOp::create(
                 rewriter, loc, RankedTensorType::get(shape, t.getElementType()), v, reassoc)
          .getResult();
    };
    Value gInput = split(input, inTy, 1), gWeight = split(weight, wTy, 0);
    Value gInit = split(init, outTy, 1);
    Value conv = linalg::Conv2DNgchwGfchwOp::create(rewriter, loc, gInit.getType(),
                                                    ValueRange{gInput, gWeight}, ValueRange{gInit},
                                                    strides, dilations)
                     .getResult(0);
    SmallVector<ReassociationIndices> collapse = {{0}, {1, 2}, {3}, {4}};
    return tensor::CollapseShapeOp::create(rewriter, loc, outTy, conv, collapse).getResult();
  }
};

/// The static sizes a 2-d convolution backward needs: everything but the batch.
struct ConvBackwardShape {
  int64_t filters, channels, kernelH, kernelW, outH, outW, groups;
  SmallVector<int64_t> stride, padding, dilation;
};

/// Reads the sizes of input [N, C, H, W], weight [F, C/groups, KH, KW] and grad_output
/// [N, F, OH, OW]; fails unless all but N are static.
template <typename OpTy>
FailureOr<ConvBackwardShape> convBackwardShape(OpTy op, ArrayRef<AffineExpr> input,
                                               ArrayRef<AffineExpr> weight,
                                               ArrayRef<AffineExpr> gradOutput) {
  if (input.size() != 4)
    return op.emitOpError("only 2-d (NCHW) convolution backward is supported so far");
  SmallVector<int64_t> sizes;
  for (AffineExpr e : {input[1], weight[0], weight[2], weight[3], gradOutput[2], gradOutput[3]}) {
    std::optional<int64_t> c = getConstantSize(e);
    if (!c)
      return op.emitOpError("convolution backward needs static channel, kernel and spatial "
                            "sizes");
    sizes.push_back(*c);
  }
  return ConvBackwardShape{sizes[1],
                           sizes[0],
                           sizes[2],
                           sizes[3],
                           sizes[4],
                           sizes[5],
                           static_cast<int64_t>(op.getGroups()),
                           expandParam(op.getStride(), 1),
                           expandParam(op.getPadding(), 0),
                           expandParam(op.getDilation(), 1)};
}

/// grad_output [N, F, OH, OW] as [N, G, F/G, OH, OW].
Value splitFilterGroups(OpBuilder &b, Location loc, Value gradOutput, int64_t groups) {
  auto type = llvm::cast<RankedTensorType>(gradOutput.getType());
  SmallVector<int64_t> shape(type.getShape());
  shape[1] /= groups;
  shape.insert(shape.begin() + 1, groups);
  return tensor::ExpandShapeOp::create(b, loc, RankedTensorType::get(shape, type.getElementType()),
                                       gradOutput,
                                       SmallVector<ReassociationIndices>{{0}, {1, 2}, {3}, {4}});
}

/// grad_input of a depthwise convolution (`isDirectDepthwise`) as the sum of the taps of
/// a stride-1 convolution with the flipped kernel: grad_output is spread with the
/// convolution's stride into zeros, z[n, c, q + oh * s, ...] = grad_output[n, c, oh, ...],
/// q = (K - 1) * dilation - padding before it; then grad_input[i] = sum over k of
/// z[i + k * dilation] * weight[K - 1 - k]. A null value when q < 0 (padding wider than
/// the dilated kernel) or the input's spatial sizes are dynamic.
Value depthwiseGradInput(OpBuilder &b, Location loc, Value gradOutput, Value weight, Value init,
                         const ConvBackwardShape &shape) {
  auto initType = llvm::cast<RankedTensorType>(init.getType());
  int64_t kernel[2] = {shape.kernelH, shape.kernelW};
  int64_t before[2], extent[2];
  for (int i = 0; i < 2; ++i) {
    before[i] = (kernel[i] - 1) * shape.dilation[i] - shape.padding[i];
    if (before[i] < 0 || initType.isDynamicDim(2 + i))
      return {};
    extent[i] = initType.getDimSize(2 + i) + (kernel[i] - 1) * shape.dilation[i];
  }
  Type element = initType.getElementType();
  OpFoldResult batch = tensor::getMixedSize(b, loc, gradOutput, 0);
  SmallVector<OpFoldResult> spreadSizes = {batch, b.getIndexAttr(shape.channels),
                                           b.getIndexAttr(extent[0]), b.getIndexAttr(extent[1])};
  Value zeros =
      linalg::FillOp::create(b, loc, scalarConstant(b, loc, element, 0),
                             tensor::EmptyOp::create(b, loc, spreadSizes, element).getResult())
          .getResult(0);
  SmallVector<OpFoldResult> offsets = {b.getIndexAttr(0), b.getIndexAttr(0),
                                       b.getIndexAttr(before[0]), b.getIndexAttr(before[1])};
  SmallVector<OpFoldResult> sizes = {batch, b.getIndexAttr(shape.channels),
                                     b.getIndexAttr(shape.outH), b.getIndexAttr(shape.outW)};
  SmallVector<OpFoldResult> strides = {b.getIndexAttr(1), b.getIndexAttr(1),
                                       b.getIndexAttr(shape.stride[0]),
                                       b.getIndexAttr(shape.stride[1])};
  Value spread =
      tensor::InsertSliceOp::create(b, loc, gradOutput, zeros, offsets, sizes, strides).getResult();
  Value phases = splitColumnPhases(b, loc, spread, 1);
  SmallVector<int64_t> unit = {1, 1};
  SmallVector<Value> taps, weights;
  for (int64_t kh = 0; kh < shape.kernelH; ++kh)
    for (int64_t kw = 0; kw < shape.kernelW; ++kw) {
      taps.push_back(tapWindow(b, loc, phases, kh, kw, initType.getDimSize(2),
                               initType.getDimSize(3), unit, shape.dilation));
      weights.push_back(tapWeight(b, loc, weight, shape.kernelH - 1 - kh, shape.kernelW - 1 - kw));
    }
  return tapSum(b, loc, taps, weights, init);
}

/// grad_weight of a depthwise convolution (`isDirectDepthwise`): for each tap, the sum
/// over n, oh, ow of grad_output times the input window the tap reads (`tapWindow` on
/// the padded input's column phases), as one reduction with an output per tap (one pass
/// over grad_output and the input), then the [C] results placed in [C, 1, KH, KW]. A
/// null value when the input's width is dynamic.
Value depthwiseGradWeight(OpBuilder &b, Location loc, Value gradOutput, Value input,
                          RankedTensorType resultType, const ConvBackwardShape &shape) {
  auto inputType = llvm::cast<RankedTensorType>(input.getType());
  if (inputType.isDynamicDim(3))
    return {};
  MLIRContext *ctx = b.getContext();
  Type element = resultType.getElementType();
  // bf16/f16 sums accumulate in f32 (as the GEMM path's, tgc-widen-accumulators) and are
  // rounded once at the end.
  Type accumulator = accumulatorType(element);
  Value phases = paddedColumnPhases(b, loc, input, shape.padding, shape.stride);
  SmallVector<Value> inputs = {gradOutput}, inits;
  Value zero = scalarConstant(b, loc, accumulator, 0);
  for (int64_t kh = 0; kh < shape.kernelH; ++kh)
    for (int64_t kw = 0; kw < shape.kernelW; ++kw) {
      inputs.push_back(
          tapWindow(b, loc, phases, kh, kw, shape.outH, shape.outW, shape.stride, shape.dilation));
      Value empty = tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{shape.channels}, accumulator)
                        .getResult();
      inits.push_back(linalg::FillOp::create(b, loc, zero, empty).getResult(0));
    }
  // Loops (c, n, oh, ow): c parallel, the others summed, ow innermost (contiguous).
  AffineExpr c, n, oh, ow;
  bindDims(ctx, c, n, oh, ow);
  AffineMap read = AffineMap::get(4, 0, {n, c, oh, ow}, ctx);
  SmallVector<AffineMap> maps(inputs.size(), read);
  maps.append(inits.size(), AffineMap::get(4, 0, {c}, ctx));
  SmallVector<utils::IteratorType> iterators = {
      utils::IteratorType::parallel, utils::IteratorType::reduction, utils::IteratorType::reduction,
      utils::IteratorType::reduction};
  size_t count = inits.size();
  auto sums = linalg::GenericOp::create(
      b, loc, ValueRange(inits).getTypes(), inputs, inits, maps, iterators,
      [&](OpBuilder &nb, Location l, ValueRange args) {
        SmallVector<Value> next;
        Value dy = castScalar(nb, l, args[0], accumulator);
        for (size_t t = 0; t < count; ++t)
          next.push_back(
              addScalars(nb, l, args[1 + count + t],
                         mulScalars(nb, l, dy, castScalar(nb, l, args[1 + t], accumulator))));
        linalg::YieldOp::create(nb, l, next);
      });
  Value result = tensor::EmptyOp::create(b, loc, resultType.getShape(), accumulator).getResult();
  SmallVector<OpFoldResult> sizes = {b.getIndexAttr(shape.channels), b.getIndexAttr(1),
                                     b.getIndexAttr(1), b.getIndexAttr(1)};
  SmallVector<OpFoldResult> strides(4, b.getIndexAttr(1));
  for (int64_t kh = 0, t = 0; kh < shape.kernelH; ++kh)
    for (int64_t kw = 0; kw < shape.kernelW; ++kw, ++t) {
      SmallVector<OpFoldResult> offsets = {b.getIndexAttr(0), b.getIndexAttr(0), b.getIndexAttr(kh),
                                           b.getIndexAttr(kw)};
      result =
          tensor::InsertSliceOp::create(b, loc, sums.getResult(t), result, offsets, sizes, strides)
              .getResult();
    }
  if (accumulator == element)
    return result;
  AffineMap identity = AffineMap::getMultiDimIdentityMap(4, ctx);
  Value narrow = tensor::EmptyOp::create(b, loc, resultType.getShape(), element).getResult();
  return linalg::GenericOp::create(
             b, loc, resultType, result, narrow, {identity, identity},
             SmallVector<utils::IteratorType>(4, utils::IteratorType::parallel),
             [&](OpBuilder &nb, Location l, ValueRange args) {
               linalg::YieldOp::create(nb, l, castScalar(nb, l, args[0], element));
             })
      .getResult(0);
}

/// grad_weight as one batched GEMM over the groups: with the (padded) input unfolded
/// into cols[g, n*OH*OW, c*KH*KW] (im2col in the GEMM's layout) and grad_output
/// rearranged to [g, F/G, n*OH*OW], grad_weight[g] = grad_output[g] @ cols[g], which
/// goes to BLAS; [G, F/G, C/G*KH*KW] is then the weight's [F, C/G, KH, KW].
struct ConvolutionBackwardWeightLowering : TgcLoweringPattern<ConvolutionBackwardWeightOp> {
  using TgcLoweringPattern::TgcLoweringPattern;
  LogicalResult matchAndRewrite(ConvolutionBackwardWeightOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    BaseTensorType resultType = tgcType(op.getResult());
    FailureOr<ConvBackwardShape> shape =
        convBackwardShape(op, tgcType(op.getInput()).getSizes(), resultType.getSizes(),
                          tgcType(op.getGradOutput()).getSizes());
    if (failed(shape))
      return failure();
    int64_t groups = shape->groups, perGroup = shape->channels / groups;
    int64_t filtersPerGroup = shape->filters / groups;
    int64_t patch = perGroup * shape->kernelH * shape->kernelW;
    if (isDirectDepthwise(shape->channels, shape->filters, groups, shape->kernelH,
                          shape->kernelW)) {
      auto type = llvm::cast<RankedTensorType>(lowering.convertTensorType(resultType));
      if (Value direct = depthwiseGradWeight(rewriter, loc, adaptor.getGradOutput(),
                                             adaptor.getInput(), type, *shape)) {
        rewriter.replaceOp(op, direct);
        return success();
      }
    }
    Value input = padSpatial(rewriter, loc, adaptor.getInput(), shape->padding);
    Type element = llvm::cast<RankedTensorType>(input.getType()).getElementType();
    OpFoldResult batch = tensor::getMixedSize(rewriter, loc, input, 0);
    auto idx = [&](int64_t v) -> OpFoldResult { return rewriter.getIndexAttr(v); };

    // cols[g, n, oh, ow, c, kh, kw] = input[n, g*C/G + c, oh*sh + kh*dh, ow*sw + kw*dw].
    Value colsInit =
        tensor::EmptyOp::create(rewriter, loc,
                                {idx(groups), batch, idx(shape->outH), idx(shape->outW),
                                 idx(perGroup), idx(shape->kernelH), idx(shape->kernelW)},
                                element);
    AffineExpr g, n, oh, ow, c, kh, kw;
    bindDims(ctx, g, n, oh, ow, c, kh, kw);
    const ConvBackwardShape &p = *shape;
    AffineMap read = AffineMap::get(7, 0,
                                    {n, g * perGroup + c, oh * p.stride[0] + kh * p.dilation[0],
                                     ow * p.stride[1] + kw * p.dilation[1]},
                                    ctx);
    auto unfold = linalg::GenericOp::create(
        rewriter, loc, colsInit.getType(), input, colsInit,
        {read, AffineMap::getMultiDimIdentityMap(7, ctx)},
        SmallVector<utils::IteratorType>(7, utils::IteratorType::parallel),
        [&](OpBuilder &b, Location l, ValueRange args) { linalg::YieldOp::create(b, l, args[0]); });
    Value cols = tensor::CollapseShapeOp::create(
        rewriter, loc, unfold.getResult(0),
        SmallVector<ReassociationIndices>{{0}, {1, 2, 3}, {4, 5, 6}});

    // grad_output as [G, F/G, N*OH*OW].
    Value grouped = splitFilterGroups(rewriter, loc, adaptor.getGradOutput(), groups);
    Value transposedInit = tensor::EmptyOp::create(
        rewriter, loc,
        {idx(groups), idx(filtersPerGroup), batch, idx(shape->outH), idx(shape->outW)}, element);
    Value transposed = linalg::TransposeOp::create(rewriter, loc, grouped, transposedInit,
                                                   ArrayRef<int64_t>{1, 2, 0, 3, 4})
                           ->getResult(0);
    Value gradRows = tensor::CollapseShapeOp::create(
        rewriter, loc, transposed, SmallVector<ReassociationIndices>{{0}, {1}, {2, 3, 4}});

    auto productType = RankedTensorType::get({groups, filtersPerGroup, patch}, element);
    Value zero = scalarConstant(rewriter, loc, element, 0);
    Value productInit =
        linalg::FillOp::create(
            rewriter, loc, zero,
            tensor::EmptyOp::create(rewriter, loc, productType.getShape(), element).getResult())
            .getResult(0);
    Value product =
        linalg::BatchMatmulOp::create(rewriter, loc, TypeRange{productType},
                                      ValueRange{gradRows, cols}, ValueRange{productInit})
            ->getResult(0);
    Value flat = tensor::CollapseShapeOp::create(rewriter, loc, product,
                                                 SmallVector<ReassociationIndices>{{0, 1}, {2}});
    rewriter.replaceOpWithNewOp<tensor::ExpandShapeOp>(
        op, lowering.convertTensorType(resultType), flat,
        SmallVector<ReassociationIndices>{{0}, {1, 2, 3}});
    return success();
  }
};

/// grad_input as a GEMM and a gather: colsGrad[c*KH*KW, n*OH*OW] = weight^T @
/// grad_output (one GEMM over the batch; grouped: one per batch element and group),
/// then each input element sums the columns of the windows that read it (col2im in
/// gather form, `windowGather`), so no element is written twice.
struct ConvolutionBackwardInputLowering : TgcLoweringPattern<ConvolutionBackwardInputOp> {
  using TgcLoweringPattern::TgcLoweringPattern;
  LogicalResult matchAndRewrite(ConvolutionBackwardInputOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    BaseTensorType resultType = tgcType(op.getResult());
    FailureOr<ConvBackwardShape> shape =
        convBackwardShape(op, resultType.getSizes(), tgcType(op.getWeight()).getSizes(),
                          tgcType(op.getGradOutput()).getSizes());
    if (failed(shape))
      return failure();
    int64_t groups = shape->groups, perGroup = shape->channels / groups;
    int64_t filtersPerGroup = shape->filters / groups;
    int64_t patch = perGroup * shape->kernelH * shape->kernelW;
    Value gradOutput = adaptor.getGradOutput();
    if (isDirectDepthwise(shape->channels, shape->filters, groups, shape->kernelH,
                          shape->kernelW)) {
      FailureOr<Value> init = lowering.emptyTensor(rewriter, op, resultType);
      if (failed(init))
        return failure();
      if (Value direct =
              depthwiseGradInput(rewriter, loc, gradOutput, adaptor.getWeight(), *init, *shape)) {
        rewriter.replaceOp(op, direct);
        return success();
      }
    }
    Type element = llvm::cast<RankedTensorType>(gradOutput.getType()).getElementType();
    OpFoldResult batch = tensor::getMixedSize(rewriter, loc, gradOutput, 0);
    auto idx = [&](int64_t v) -> OpFoldResult { return rewriter.getIndexAttr(v); };

    // The weight as [G, F/G, C/G*KH*KW]. One group: transposed to [C*KH*KW, F] (folded
    // into the GEMM by tgc-form-kernels); several: copied per image as
    // [N*G, F/G, C/G*KH*KW].
    Value flatWeight = tensor::CollapseShapeOp::create(
        rewriter, loc, adaptor.getWeight(), SmallVector<ReassociationIndices>{{0}, {1, 2, 3}});
    Value weights;
    if (groups == 1) {
      Value transposedInit =
          tensor::EmptyOp::create(rewriter, loc, {idx(patch), idx(shape->filters)}, element);
      weights = linalg::TransposeOp::create(rewriter, loc, flatWeight, transposedInit,
                                            ArrayRef<int64_t>{1, 0})
                    ->getResult(0);
    } else {
      Value groupedWeight = tensor::ExpandShapeOp::create(
          rewriter, loc, RankedTensorType::get({groups, filtersPerGroup, patch}, element),
          flatWeight, SmallVector<ReassociationIndices>{{0, 1}, {2}});
      Value broadcastInit = tensor::EmptyOp::create(
          rewriter, loc, {batch, idx(groups), idx(filtersPerGroup), idx(patch)}, element);
      Value broadcast = linalg::BroadcastOp::create(rewriter, loc, groupedWeight, broadcastInit,
                                                    ArrayRef<int64_t>{0})
                            ->getResult(0);
      weights = tensor::CollapseShapeOp::create(
          rewriter, loc, broadcast, SmallVector<ReassociationIndices>{{0, 1}, {2}, {3}});
    }
    Value zero = scalarConstant(rewriter, loc, element, 0);
    Value cols;
    if (groups == 1) {
      // One GEMM over the whole batch, as in the forward: grad_output transposed to
      // [F, N*OH*OW], colsGrad[C*KH*KW, N*OH*OW] = weight^T @ it, viewed as
      // [C, KH, KW, N, OH, OW]. The weight is packed once, not once per image.
      Value transposedInit = tensor::EmptyOp::create(
          rewriter, loc, {idx(shape->filters), batch, idx(shape->outH), idx(shape->outW)}, element);
      Value transposed = linalg::TransposeOp::create(rewriter, loc, gradOutput, transposedInit,
                                                     ArrayRef<int64_t>{1, 0, 2, 3})
                             ->getResult(0);
      Value gradColumns = tensor::CollapseShapeOp::create(
          rewriter, loc, transposed, SmallVector<ReassociationIndices>{{0}, {1, 2, 3}});
      OpFoldResult columns = tensor::getMixedSize(rewriter, loc, gradColumns, 1);
      Value colsInit =
          linalg::FillOp::create(
              rewriter, loc, zero,
              tensor::EmptyOp::create(rewriter, loc, {idx(patch), columns}, element).getResult())
              .getResult(0);
      Value colsGrad =
          linalg::MatmulOp::create(rewriter, loc, TypeRange{colsInit.getType()},
                                   ValueRange{weights, gradColumns}, ValueRange{colsInit})
              ->getResult(0);
      auto batchType = llvm::cast<RankedTensorType>(gradOutput.getType());
      cols = tensor::ExpandShapeOp::create(
          rewriter, loc,
          RankedTensorType::get({perGroup, shape->kernelH, shape->kernelW, batchType.getDimSize(0),
                                 shape->outH, shape->outW},
                                element),
          colsGrad, SmallVector<ReassociationIndices>{{0, 1, 2}, {3, 4, 5}});
    } else {
      // grad_output as [N*G, F/G, OH*OW].
      Value gradRows = tensor::CollapseShapeOp::create(
          rewriter, loc, splitFilterGroups(rewriter, loc, gradOutput, groups),
          SmallVector<ReassociationIndices>{{0, 1}, {2}, {3, 4}});
      OpFoldResult batches = tensor::getMixedSize(rewriter, loc, gradRows, 0);
      Value colsInit =
          linalg::FillOp::create(
              rewriter, loc, zero,
              tensor::EmptyOp::create(
                  rewriter, loc, {batches, idx(patch), idx(shape->outH * shape->outW)}, element)
                  .getResult())
              .getResult(0);
      // colsGrad[b, m, n] += weights[b, k, m] * gradRows[b, k, n]: the weight transposed.
      AffineExpr b, m, nn, k;
      bindDims(ctx, b, m, nn, k);
      auto maps = rewriter.getAffineMapArrayAttr({AffineMap::get(4, 0, {b, k, m}, ctx),
                                                  AffineMap::get(4, 0, {b, k, nn}, ctx),
                                                  AffineMap::get(4, 0, {b, m, nn}, ctx)});
      Value colsGrad =
          linalg::BatchMatmulOp::create(rewriter, loc, TypeRange{colsInit.getType()},
                                        ValueRange{weights, gradRows}, ValueRange{colsInit},
                                        {rewriter.getNamedAttr("indexing_maps", maps)})
              ->getResult(0);
      auto colsType = llvm::cast<RankedTensorType>(colsGrad.getType());
      cols = tensor::ExpandShapeOp::create(
          rewriter, loc,
          RankedTensorType::get({colsType.getDimSize(0), perGroup, shape->kernelH, shape->kernelW,
                                 shape->outH, shape->outW},
                                element),
          colsGrad, SmallVector<ReassociationIndices>{{0}, {1, 2, 3}, {4, 5}});
    }

    FailureOr<Value> init = lowering.zeroTensor(rewriter, op, resultType);
    if (failed(init))
      return failure();
    Window window;
    window.kernel = {shape->kernelH, shape->kernelW};
    window.stride.assign(shape->stride.begin(), shape->stride.end());
    window.padding.assign(shape->padding.begin(), shape->padding.end());
    window.dilation.assign(shape->dilation.begin(), shape->dilation.end());
    Value result = windowGather(
        rewriter, loc, *init, window, {shape->outH, shape->outW},
        [&](OpBuilder &nb, Location l, const WindowPosition &pos) -> Value {
          if (groups == 1)
            return tensor::ExtractOp::create(
                nb, l, cols, ValueRange{pos.c, pos.kh, pos.kw, pos.n, pos.oh, pos.ow});
          Value sample = pos.n, channel = pos.c;
          {
            // Input channel c belongs to group c / (C/G), batch row n * G + group.
            Value per = arith::ConstantIndexOp::create(nb, l, perGroup);
            Value group = arith::DivUIOp::create(nb, l, pos.c, per);
            sample = arith::AddIOp::create(
                nb, l,
                arith::MulIOp::create(nb, l, pos.n, arith::ConstantIndexOp::create(nb, l, groups)),
                group);
            channel = arith::RemUIOp::create(nb, l, pos.c, per);
          }
          return tensor::ExtractOp::create(
              nb, l, cols, ValueRange{sample, channel, pos.kh, pos.kw, pos.oh, pos.ow});
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void tgc::populateLinearAlgebraPatterns(const LoweringContext &lowering,
                                        RewritePatternSet &patterns) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<MatmulLowering<MmOp, linalg::MatmulOp>, MatmulLowering<BmmOp, linalg::BatchMatmulOp>,
               ConvolutionLowering, ConvolutionBackwardInputLowering,
               ConvolutionBackwardWeightLowering>(lowering, ctx);
}
