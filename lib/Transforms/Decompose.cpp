// Decomposition of compound tgc ops (linear, matmul, norms, softmax, ...) into the
// primitive ops that lowering handles.
#include "DecomposeUtils.h"
#include "tgc/Dialect/Einsum.h"
#include "tgc/Dialect/ScalarBuilder.h"
#include "tgc/Transforms/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

namespace tgc {
#define GEN_PASS_DEF_DECOMPOSEPASS
#include "tgc/Transforms/Passes.h.inc"
} // namespace tgc

using namespace mlir;
using namespace tgc;
using namespace tgc::decompose;

namespace {

//===----------------------------------------------------------------------===//
// Linear algebra
//===----------------------------------------------------------------------===//

/// A bf16/f16 product plus a bias rounds once, as ATen's kernels add the bias to the f32
/// accumulator: the operands are widened to f32 (tgc-widen-accumulators folds the
/// widening into the product, which reads the narrow operands) and the sum is rounded.
static bool roundsOnceWithBias(Value result) {
  Type dtype = typeOf(result).getDtype();
  return dtype.isBF16() || dtype.isF16();
}

struct DecomposeLinear : OpRewritePattern<LinearOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(LinearOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = op.getInput(), weight = op.getWeight(), bias = op.getBias();
    bool wide = bias && roundsOnceWithBias(op.getResult());
    if (wide) {
      input = castTo(rewriter, loc, input, rewriter.getF32Type());
      weight = castTo(rewriter, loc, weight, rewriter.getF32Type());
      bias = castTo(rewriter, loc, bias, rewriter.getF32Type());
    }
    Value weightT = TOp::create(rewriter, loc, weight);
    Value result = MatmulOp::create(rewriter, loc, input, weightT);
    if (bias)
      result = AddOp::create(rewriter, loc, result, bias, Attribute());
    if (wide)
      result = castTo(rewriter, loc, result, typeOf(op.getResult()).getDtype());
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// addmm / baddbmm: beta * self + alpha * the (batched) product.
template <typename OpT, typename ProductT> struct DecomposeAddmm : OpRewritePattern<OpT> {
  using OpRewritePattern<OpT>::OpRewritePattern;
  LogicalResult matchAndRewrite(OpT op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value a = op->getOperand(1), b = op->getOperand(2), self = op.getSelf();
    bool wide = roundsOnceWithBias(op.getResult());
    if (wide) {
      a = castTo(rewriter, loc, a, rewriter.getF32Type());
      b = castTo(rewriter, loc, b, rewriter.getF32Type());
      self = castTo(rewriter, loc, self, rewriter.getF32Type());
    }
    Value product = ProductT::create(rewriter, loc, a, b).getResult();
    if (Attribute alpha = op.getAlphaAttr())
      product = MulOp::create(rewriter, loc, product,
                              scalarFromAttr(rewriter, loc, alpha, rewriter.getF64Type(), 1));
    if (Attribute beta = op.getBetaAttr())
      self = MulOp::create(rewriter, loc, self,
                           scalarFromAttr(rewriter, loc, beta, rewriter.getF64Type(), 1));
    Value result = AddOp::create(rewriter, loc, product, self, Attribute());
    if (wide)
      result = castTo(rewriter, loc, result, typeOf(op.getResult()).getDtype());
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// repeat_interleave by a constant count: each element repeated along a new dimension
/// after `dim` (expand), merged into `dim` (view); without `dim`, of the flattened input.
struct DecomposeRepeatInterleave : OpRewritePattern<RepeatInterleaveOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(RepeatInterleaveOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    Value x = op.getSelf();
    int64_t dim = 0;
    if (op.getDimAttr()) {
      if (typeOf(x).getRank() == 0)
        x = ViewOp::create(rewriter, loc, x, shapeAttr(ctx, {getAffineConstantExpr(1, ctx)}));
      dim = *normalizeDim(*op.getDim(), typeOf(x).getRank());
    } else {
      x = ViewOp::create(rewriter, loc, x, shapeAttr(ctx, {typeOf(x).getMeta().numel(ctx)}));
    }
    SmallVector<AffineExpr> sizes(typeOf(x).getSizes());
    sizes.insert(sizes.begin() + dim + 1, getAffineConstantExpr(op.getRepeats(), ctx));
    Value spread = ExpandOp::create(rewriter, loc, UnsqueezeOp::create(rewriter, loc, x, dim + 1),
                                    shapeAttr(ctx, sizes));
    rewriter.replaceOpWithNewOp<ViewOp>(op, spread,
                                        shapeAttr(ctx, typeOf(op.getResult()).getSizes()));
    return success();
  }
};

/// torch.matmul on ranks >= 2 becomes mm or bmm on views: batch dimensions are
/// broadcast, flattened into one, and restored afterwards. 1-d operands are
/// unsqueezed to matrices first and the extra dimension dropped at the end.
struct DecomposeMatmul : OpRewritePattern<MatmulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MatmulOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    Value a = op.getSelf(), b = op.getOther();
    bool aVector = typeOf(a).getRank() == 1, bVector = typeOf(b).getRank() == 1;
    if (aVector)
      a = UnsqueezeOp::create(rewriter, loc, a, 0);
    if (bVector)
      b = UnsqueezeOp::create(rewriter, loc, b, 1);
    ArrayRef<AffineExpr> sa = typeOf(a).getSizes(), sb = typeOf(b).getSizes();
    Value result;
    if (sa.size() == 2 && sb.size() == 2) {
      result = MmOp::create(rewriter, loc, a, b);
    } else if (sb.size() == 2) {
      // [..., n, k] @ [k, m]: fold the batch into the rows.
      AffineExpr rows = getAffineConstantExpr(1, ctx);
      for (AffineExpr s : sa.drop_back())
        rows = rows * s;
      Value flat = ViewOp::create(rewriter, loc, a, shapeAttr(ctx, {rows, sa.back()}));
      Value mm = MmOp::create(rewriter, loc, flat, b);
      SmallVector<AffineExpr> sizes(sa.drop_back());
      sizes.push_back(sb.back());
      result = ViewOp::create(rewriter, loc, mm, shapeAttr(ctx, sizes));
    } else {
      FailureOr<SmallVector<AffineExpr>> batch =
          broadcastSizes(sa.size() > 2 ? sa.drop_back(2) : ArrayRef<AffineExpr>{}, sb.drop_back(2));
      if (failed(batch))
        return rewriter.notifyMatchFailure(op, "batch sizes do not broadcast");
      AffineExpr flatBatch = getAffineConstantExpr(1, ctx);
      for (AffineExpr s : *batch)
        flatBatch = flatBatch * s;
      auto toBatched = [&](Value v, ArrayRef<AffineExpr> sizes) -> Value {
        SmallVector<AffineExpr> full(*batch);
        full.append(sizes.end() - 2, sizes.end());
        if (SmallVector<AffineExpr>(sizes) != full)
          v = ExpandOp::create(rewriter, loc, v, shapeAttr(ctx, full));
        return ViewOp::create(rewriter, loc, v,
                              shapeAttr(ctx, {flatBatch, sizes[sizes.size() - 2], sizes.back()}));
      };
      Value bmm = BmmOp::create(rewriter, loc, toBatched(a, sa), toBatched(b, sb));
      SmallVector<AffineExpr> sizes(*batch);
      sizes.push_back(sa[sa.size() - 2]);
      sizes.push_back(sb.back());
      result = ViewOp::create(rewriter, loc, bmm, shapeAttr(ctx, sizes));
    }
    int64_t rank = typeOf(result).getRank();
    if (bVector)
      result = SqueezeOp::create(rewriter, loc, result, rewriter.getDenseI64ArrayAttr({rank - 1}));
    if (aVector)
      result = SqueezeOp::create(rewriter, loc, result,
                                 rewriter.getDenseI64ArrayAttr({typeOf(result).getRank() - 2}));
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct DecomposeT : OpRewritePattern<TOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TOp op, PatternRewriter &rewriter) const override {
    if (typeOf(op.getSelf()).getRank() < 2) {
      rewriter.replaceOp(op, op.getSelf());
      return success();
    }
    rewriter.replaceOpWithNewOp<TransposeOp>(op, op.getSelf(), 0, 1);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Normalization and softmax
//===----------------------------------------------------------------------===//

template <typename SoftmaxLike, bool isLog>
struct DecomposeSoftmax : OpRewritePattern<SoftmaxLike> {
  using OpRewritePattern<SoftmaxLike>::OpRewritePattern;
  LogicalResult matchAndRewrite(SoftmaxLike op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = op.getSelf();
    if (TypeAttr dtype = op.getDtypeAttr())
      x = ToDTypeOp::create(rewriter, loc, x, dtype);
    int64_t dim = *normalizeDim(op.getDim(), typeOf(x).getRank());
    auto dims = rewriter.getDenseI64ArrayAttr({dim});
    Value max = AmaxOp::create(rewriter, loc, x, dims, /*keepdim=*/true, TypeAttr());
    Value shifted = SubOp::create(rewriter, loc, x, max, Attribute());
    Value exp = ExpOp::create(rewriter, loc, shifted);
    Value sum = SumOp::create(rewriter, loc, exp, dims, /*keepdim=*/true, TypeAttr());
    if (isLog)
      rewriter.replaceOpWithNewOp<SubOp>(op, shifted, LogOp::create(rewriter, loc, sum),
                                         Attribute());
    else
      rewriter.replaceOpWithNewOp<DivOp>(op, exp, sum, StringAttr());
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Reductions and splits
//===----------------------------------------------------------------------===//

SmallVector<int64_t> reductionDims(DenseI64ArrayAttr dims, int64_t rank) {
  if (!dims || dims.empty())
    return trailingDims(0, rank);
  SmallVector<int64_t> out;
  for (int64_t d : dims.asArrayRef())
    if (rank > 0) // a 0-d tensor's dimension 0 or -1 reduces nothing
      out.push_back(*normalizeDim(d, rank));
  return out;
}

/// mean = sum / count, with the count symbolic when the reduced sizes are.
struct DecomposeMean : OpRewritePattern<MeanOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MeanOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = op.getSelf();
    if (TypeAttr dtype = op.getDtypeAttr())
      x = ToDTypeOp::create(rewriter, loc, x, dtype);
    SmallVector<int64_t> dims = reductionDims(op.getDimAttr(), typeOf(x).getRank());
    Value sum = SumOp::create(rewriter, loc, x, op.getDimAttr(), op.getKeepdim(), TypeAttr());
    Value count = countElements(rewriter, loc, x, dims);
    rewriter.replaceOpWithNewOp<DivOp>(op, sum, count, StringAttr());
    return success();
  }
};

/// var = sum((x - mean)^2) / (count - correction).
struct DecomposeVar : OpRewritePattern<VarOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(VarOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = op.getSelf();
    SmallVector<int64_t> dims = reductionDims(op.getDimAttr(), typeOf(x).getRank());
    auto dimsAttr = rewriter.getDenseI64ArrayAttr(dims);
    Value mean = MeanOp::create(rewriter, loc, x, dimsAttr, /*keepdim=*/true, TypeAttr());
    Value centered = SubOp::create(rewriter, loc, x, mean, Attribute());
    Value squares = SumOp::create(rewriter, loc, MulOp::create(rewriter, loc, centered, centered),
                                  dimsAttr, op.getKeepdim(), TypeAttr());
    Value count = countElements(rewriter, loc, x, dims);
    Value correction =
        scalarFromAttr(rewriter, loc, op.getCorrectionAttr(), rewriter.getF64Type(), 1);
    // max(N - correction, 0), as ATen: an empty or too-short reduction gives NaN or inf.
    Value divisor = arith::MaximumFOp::create(
        rewriter, loc,
        arith::SubFOp::create(rewriter, loc,
                              arith::SIToFPOp::create(rewriter, loc, rewriter.getF64Type(), count),
                              correction),
        arith::ConstantOp::create(rewriter, loc, rewriter.getF64FloatAttr(0.0)));
    rewriter.replaceOpWithNewOp<DivOp>(op, squares, divisor, StringAttr());
    return success();
  }
};

/// diff: slices of cat([prepend, self, append]) subtracted (`!=` for bool), n times.
struct DecomposeDiff : OpRewritePattern<DiffOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(DiffOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    int64_t rank = typeOf(op.getSelf()).getRank();
    int64_t dim = *normalizeDim(op.getDim(), rank);
    SmallVector<Value> parts;
    for (Value part : {op.getPrepend(), op.getSelf(), op.getAppend()})
      if (part)
        parts.push_back(part);
    Value x = parts.size() == 1 ? parts[0] : CatOp::create(rewriter, loc, parts, dim).getResult();
    bool isBool = typeOf(x).getDtype().isInteger(1);
    for (int64_t i = 0; i < static_cast<int64_t>(op.getN()); ++i) {
      AffineExpr length = typeOf(x).getSizes()[dim];
      auto bound = [&](AffineExpr e) { return shapeAttr(ctx, {e}); };
      AffineExpr zero = getAffineConstantExpr(0, ctx), one = getAffineConstantExpr(1, ctx);
      Value later = SliceOp::create(rewriter, loc, x, dim, bound(one), bound(length), 1);
      Value earlier = SliceOp::create(rewriter, loc, x, dim, bound(zero), bound(length - 1), 1);
      x = isBool ? NeOp::create(rewriter, loc, later, earlier).getResult()
                 : SubOp::create(rewriter, loc, later, earlier, Attribute()).getResult();
    }
    rewriter.replaceOp(op, x);
    return success();
  }
};

/// pad: per padded dimension, slices of the input (reflect, replicate, circular; a
/// negative amount crops first, in every mode) and tensors of the fill value, concatenated. Their
/// derivatives (slice and cat) are the pad's.
struct DecomposePad : OpRewritePattern<PadOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(PadOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    StringRef mode = op.getMode();
    ArrayRef<int64_t> pad = op.getPad();
    Value x = op.getSelf();
    int64_t rank = typeOf(x).getRank();
    auto bound = [&](AffineExpr e) { return shapeAttr(ctx, {e}); };
    auto c = [&](int64_t v) { return getAffineConstantExpr(v, ctx); };
    auto slice = [&](Value t, int64_t d, AffineExpr lo, AffineExpr hi) -> Value {
      return SliceOp::create(rewriter, loc, t, d, bound(lo), bound(hi), 1);
    };
    for (size_t i = 0; i < pad.size() / 2; ++i) {
      int64_t d = rank - 1 - static_cast<int64_t>(i);
      int64_t before = pad[2 * i], after = pad[2 * i + 1];
      if (before == 0 && after == 0)
        continue;
      if (before < 0) {
        x = slice(x, d, c(-before), typeOf(x).getSizes()[d]);
        before = 0;
      }
      if (after < 0) {
        x = slice(x, d, c(0), typeOf(x).getSizes()[d] + after);
        after = 0;
      }
      BaseTensorType type = typeOf(x);
      AffineExpr size = type.getSizes()[d];
      SmallVector<Value> left, right;
      if (mode == "constant") {
        auto filled = [&](int64_t width) -> Value {
          SmallVector<AffineExpr> sizes(type.getSizes());
          sizes[d] = c(width);
          Type dtype = type.getDtype();
          double value = op.getValue() ? op.getValue()->convertToDouble() : 0.0;
          Attribute fill = dtype.isInteger(1) ? Attribute(rewriter.getBoolAttr(value != 0))
                           : llvm::isa<IntegerType>(dtype)
                               ? Attribute(rewriter.getI64IntegerAttr(static_cast<int64_t>(value)))
                               : Attribute(rewriter.getF64FloatAttr(value));
          return FullOp::create(rewriter, loc, shapeAttr(ctx, sizes), fill, TypeAttr::get(dtype),
                                DeviceAttr());
        };
        if (before > 0)
          left.push_back(filled(before));
        if (after > 0)
          right.push_back(filled(after));
      } else if (mode == "reflect") {
        for (int64_t j = before; j >= 1; --j)
          left.push_back(slice(x, d, c(j), c(j + 1)));
        for (int64_t j = 1; j <= after; ++j)
          right.push_back(slice(x, d, size - 1 - j, size - j));
      } else if (mode == "replicate") {
        if (before > 0)
          left.assign(before, slice(x, d, c(0), c(1)));
        if (after > 0)
          right.assign(after, slice(x, d, size - 1, size));
      } else {
        if (before > 0)
          left.push_back(slice(x, d, size - before, size));
        if (after > 0)
          right.push_back(slice(x, d, c(0), c(after)));
      }
      if (left.empty() && right.empty())
        continue;
      SmallVector<Value> parts(left);
      parts.push_back(x);
      parts.append(right);
      x = CatOp::create(rewriter, loc, parts, d);
    }
    if (x == op.getSelf())
      x = CloneOp::create(rewriter, loc, x);
    rewriter.replaceOp(op, x);
    return success();
  }
};

/// index with `dims` (ATen's `None` entries): the indexed dimensions permuted to the
/// front, an index of leading dimensions, and (adjacent dimensions after the first) the
/// broadcast dimensions permuted back to where the indexed ones were.
struct DecomposeIndexDims : OpRewritePattern<IndexOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(IndexOp op, PatternRewriter &rewriter) const override {
    if (!op.getDimsAttr())
      return failure();
    Location loc = op.getLoc();
    ArrayRef<int64_t> dims = *op.getDims();
    int64_t rank = typeOf(op.getSelf()).getRank();
    SmallVector<int64_t> order(dims);
    for (int64_t d = 0; d < rank; ++d)
      if (!llvm::is_contained(dims, d))
        order.push_back(d);
    Value self = PermuteOp::create(rewriter, loc, op.getSelf(), order);
    Value result = IndexOp::create(rewriter, loc, self, op.getIndices(), DenseI64ArrayAttr());
    bool adjacent = dims.back() - dims.front() + 1 == static_cast<int64_t>(dims.size());
    int64_t before = adjacent ? dims.front() : 0;
    if (before > 0) {
      int64_t resultRank = typeOf(result).getRank();
      int64_t broadcast = resultRank - (rank - static_cast<int64_t>(dims.size()));
      SmallVector<int64_t> back;
      for (int64_t d = 0; d < before; ++d)
        back.push_back(broadcast + d);
      for (int64_t d = 0; d < broadcast; ++d)
        back.push_back(d);
      for (int64_t d = broadcast + before; d < resultRank; ++d)
        back.push_back(d);
      result = PermuteOp::create(rewriter, loc, result, back);
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// repeat: each dimension viewed as [1, size], expanded to [repeats, size] and
/// flattened (after leading size-1 dimensions for extra repeats).
struct DecomposeRepeat : OpRewritePattern<RepeatOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(RepeatOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    ArrayRef<int64_t> repeats = op.getRepeats();
    ArrayRef<AffineExpr> in = typeOf(op.getSelf()).getSizes();
    int64_t lead = static_cast<int64_t>(repeats.size()) - static_cast<int64_t>(in.size());
    SmallVector<AffineExpr> split, expanded, flat;
    for (auto [d, r] : llvm::enumerate(repeats)) {
      int64_t i = static_cast<int64_t>(d) - lead;
      AffineExpr size = i < 0 ? getAffineConstantExpr(1, ctx) : in[i];
      AffineExpr times = getAffineConstantExpr(r, ctx);
      split.append({getAffineConstantExpr(1, ctx), size});
      expanded.append({times, size});
      flat.push_back(size * r);
    }
    Value x = ViewOp::create(rewriter, loc, op.getSelf(), shapeAttr(ctx, split));
    x = ExpandOp::create(rewriter, loc, x, shapeAttr(ctx, expanded));
    x = CloneOp::create(rewriter, loc, x);
    rewriter.replaceOpWithNewOp<ViewOp>(op, x, shapeAttr(ctx, flat));
    return success();
  }
};

/// copy (functional copy_): `src` expanded and converted to `self`'s sizes and dtype.
struct DecomposeCopy : OpRewritePattern<CopyOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(CopyOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    BaseTensorType target = typeOf(op.getSelf());
    Value x = op.getSrc();
    if (typeOf(x).getSizes() != target.getSizes())
      x = ExpandOp::create(rewriter, loc, x, shapeAttr(rewriter.getContext(), target.getSizes()));
    if (typeOf(x).getDtype() != target.getDtype())
      x = ToDTypeOp::create(rewriter, loc, x, TypeAttr::get(target.getDtype()));
    rewriter.replaceOpWithNewOp<CloneOp>(op, x);
    return success();
  }
};

/// as_strided that only changes strides (torch restoring a memory format): a copy.
struct DecomposeAsStridedRestride : OpRewritePattern<AsStridedOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AsStridedOp op, PatternRewriter &rewriter) const override {
    if (!op.isRestride())
      return failure();
    rewriter.replaceOpWithNewOp<CloneOp>(op, op.getSelf());
    return success();
  }
};

/// The int64 positions start, start + step, ... before end (a 1-d tgc.arange).
Value int64Range(OpBuilder &b, Location loc, int64_t start, int64_t end, int64_t step = 1) {
  return ArangeOp::create(b, loc, b.getI64IntegerAttr(start), b.getI64IntegerAttr(end),
                          b.getI64IntegerAttr(step), TypeAttr::get(b.getI64Type()), DeviceAttr());
}

/// index_put: the indexed dimensions moved to the front (as for index), the indices
/// expanded to their broadcast shape B and the values to B + the other sizes, in the
/// order the leading form reads them; the result permuted back.
struct DecomposeIndexPut : OpRewritePattern<IndexPutOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(IndexPutOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    Value self = op.getSelf();
    int64_t rank = typeOf(self).getRank();
    int64_t k = static_cast<int64_t>(op.getIndices().size());
    if (llvm::any_of(op.getIndices(), [](Value i) { return typeOf(i).getDtype().isInteger(1); }))
      return putByMask(op, rewriter);
    SmallVector<int64_t> dims;
    if (op.getDimsAttr())
      dims.assign(op.getDims()->begin(), op.getDims()->end());
    else
      for (int64_t d = 0; d < k; ++d)
        dims.push_back(d);
    // B: the broadcast of the index shapes.
    SmallVector<AffineExpr> b;
    for (Value index : op.getIndices()) {
      FailureOr<SmallVector<AffineExpr>> joined = broadcastSizes(b, typeOf(index).getSizes());
      if (failed(joined))
        return op.emitOpError("index shapes do not broadcast");
      b = *joined;
    }
    SmallVector<int64_t> order(dims);
    for (int64_t d = 0; d < rank; ++d)
      if (!llvm::is_contained(dims, d))
        order.push_back(d);
    ArrayRef<AffineExpr> sizes = typeOf(self).getSizes();
    SmallVector<AffineExpr> leading(b);
    for (int64_t d : ArrayRef<int64_t>(order).drop_front(k))
      leading.push_back(sizes[d]);
    bool isLeading =
        !op.getDimsAttr() && typeOf(op.getValues()).getSizes() == ArrayRef(leading) &&
        llvm::all_of(op.getIndices(), [&](Value i) { return typeOf(i).getSizes() == ArrayRef(b); });
    if (isLeading)
      return failure();
    // The values as self[indices] is shaped: B in place of adjacent indexed dimensions
    // after others, else B first.
    bool adjacent = dims.back() - dims.front() + 1 == k;
    int64_t before = adjacent ? dims.front() : 0;
    SmallVector<AffineExpr> target(sizes.begin(), sizes.begin() + before);
    llvm::append_range(target, b);
    for (int64_t d : ArrayRef<int64_t>(order).drop_front(k))
      if (d >= before)
        target.push_back(sizes[d]);
    Value values = ExpandOp::create(rewriter, loc, op.getValues(), shapeAttr(ctx, target));
    if (before > 0) { // [pre, B, post] -> [B, pre, post]
      int64_t nb = static_cast<int64_t>(b.size());
      SmallVector<int64_t> perm;
      for (int64_t d = 0; d < nb; ++d)
        perm.push_back(before + d);
      for (int64_t d = 0; d < before; ++d)
        perm.push_back(d);
      for (int64_t d = before + nb; d < static_cast<int64_t>(target.size()); ++d)
        perm.push_back(d);
      values = PermuteOp::create(rewriter, loc, values, perm);
    }
    SmallVector<Value> indices;
    for (Value index : op.getIndices())
      indices.push_back(ExpandOp::create(rewriter, loc, index, shapeAttr(ctx, b)));
    Value permuted = PermuteOp::create(rewriter, loc, self, order);
    Value put = IndexPutOp::create(rewriter, loc, permuted, indices, values, op.getAccumulate(),
                                   DenseI64ArrayAttr());
    SmallVector<int64_t> inverse(rank);
    for (int64_t i = 0; i < rank; ++i)
      inverse[order[i]] = i;
    rewriter.replaceOpWithNewOp<PermuteOp>(op, put, inverse);
    return success();
  }

  /// self[mask] = values (a bool mask over the leading dimensions): where(mask, v,
  /// self) with v the values broadcast over the rest, or, when values has one row per
  /// true element, its row numbered by the running count of true elements.
  LogicalResult putByMask(IndexPutOp op, PatternRewriter &rewriter) const {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    Value self = op.getSelf(), mask = op.getIndices()[0];
    BaseTensorType selfType = typeOf(self), maskType = typeOf(mask);
    int64_t maskRank = maskType.getRank(), restRank = selfType.getRank() - maskRank;
    if (op.getIndices().size() != 1 || op.getDimsAttr() ||
        selfType.getSizes().take_front(maskRank) != maskType.getSizes())
      return op.emitOpError("a boolean mask must be the only index and cover the leading "
                            "dimensions of self exactly");
    auto c = [&](int64_t v) { return getAffineConstantExpr(v, ctx); };
    SmallVector<AffineExpr> condSizes(maskType.getSizes());
    condSizes.append(restRank, c(1));
    Value cond = ViewOp::create(rewriter, loc, mask, shapeAttr(ctx, condSizes));
    Value values = op.getValues();
    BaseTensorType valuesType = typeOf(values);
    Value rows;
    if (valuesType.getRank() <= restRank || getConstantSize(valuesType.getSizes()[0]) == 1) {
      rows = values; // broadcasts over the mask's dimensions
    } else {
      std::optional<int64_t> numel = 1;
      for (AffineExpr s : maskType.getSizes())
        numel = getConstantSize(s) && numel ? std::optional<int64_t>(*numel * *getConstantSize(s))
                                            : std::nullopt;
      if (!numel)
        return op.emitOpError("a boolean mask with symbolic sizes is not supported");
      auto i64 = TypeAttr::get(rewriter.getI64Type());
      Value flat = ViewOp::create(rewriter, loc, mask, shapeAttr(ctx, {c(*numel)}));
      Value count = CumsumOp::create(rewriter, loc, flat, 0, i64);
      Value one = arith::ConstantOp::create(rewriter, loc, rewriter.getI64IntegerAttr(1));
      Value position =
          ClampOp::create(rewriter, loc, SubOp::create(rewriter, loc, count, one, Attribute()),
                          rewriter.getI64IntegerAttr(0), Attribute());
      SmallVector<AffineExpr> rowSizes(maskType.getSizes());
      llvm::append_range(rowSizes, valuesType.getSizes().drop_front(1));
      rows = IndexSelectOp::create(rewriter, loc, values, 0, position);
      rows = ViewOp::create(rewriter, loc, rows, shapeAttr(ctx, rowSizes));
    }
    if (op.getAccumulate())
      rows = AddOp::create(rewriter, loc, self, rows, Attribute());
    Value result = WhereOp::create(rewriter, loc, cond, rows, self);
    if (typeOf(result).getDtype() != selfType.getDtype())
      result = ToDTypeOp::create(rewriter, loc, result, TypeAttr::get(selfType.getDtype()));
    if (typeOf(result).getSizes() != selfType.getSizes())
      result = ExpandOp::create(rewriter, loc, result, shapeAttr(ctx, selfType.getSizes()));
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// masked_scatter: on the flattened tensors, position i takes source[c(i) - 1] where
/// the mask is true, c the running count of true positions (a cumsum), else self[i].
struct DecomposeMaskedScatter : OpRewritePattern<MaskedScatterOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MaskedScatterOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    ArrayRef<AffineExpr> sizes = typeOf(op.getResult()).getSizes();
    auto flat = [&](Value v) -> Value {
      AffineExpr numel = getAffineConstantExpr(1, ctx);
      for (AffineExpr size : typeOf(v).getSizes())
        numel = numel * size;
      return ViewOp::create(rewriter, loc, v, shapeAttr(ctx, {numel}));
    };
    auto broadcast = [&](Value v) -> Value {
      if (typeOf(v).getSizes() == sizes)
        return v;
      return ExpandOp::create(rewriter, loc, v, shapeAttr(ctx, sizes));
    };
    Value flatMask = flat(broadcast(op.getMask()));
    Value count = CumsumOp::create(rewriter, loc, flatMask, rewriter.getI64IntegerAttr(0),
                                   TypeAttr::get(rewriter.getI64Type()), UnitAttr());
    Value one = arith::ConstantOp::create(rewriter, loc, rewriter.getI64IntegerAttr(1));
    Value position = SubOp::create(rewriter, loc, count, one, Attribute());
    Value picked = IndexOp::create(rewriter, loc, flat(op.getSource()), ValueRange{position},
                                   DenseI64ArrayAttr());
    Value merged = WhereOp::create(rewriter, loc, flatMask, picked, flat(broadcast(op.getSelf())));
    rewriter.replaceOpWithNewOp<ViewOp>(op, merged, shapeAttr(ctx, sizes));
    return success();
  }
};

/// sort: each element's rank along `dim` counts the elements that go before it (all
/// pairs compared: smaller, or larger when descending; NaN above every number; equal
/// values by position, so the sort is stable); the index of rank k is the position
/// whose rank is k; the values are gathered at the indices (the derivative is
/// gather's).
struct DecomposeSort : OpRewritePattern<SortOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SortOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    Value x = op.getSelf();
    int64_t rank = typeOf(x).getRank();
    if (rank == 0) {
      Value zero = FullLikeOp::create(rewriter, loc, x, rewriter.getI64IntegerAttr(0),
                                      TypeAttr::get(rewriter.getI64Type()));
      rewriter.replaceOp(op, {CloneOp::create(rewriter, loc, x).getResult(), zero});
      return success();
    }
    int64_t d = *normalizeDim(op.getDim(), rank);
    int64_t n = *getConstantSize(typeOf(x).getSizes()[d]);
    auto i64 = TypeAttr::get(rewriter.getI64Type());
    // Positions 0..n-1 along dimension `at` of a rank + 1 tensor (size 1 elsewhere,
    // counted from dimension d).
    auto positions = [&](int64_t at) -> Value {
      Value a = int64Range(rewriter, loc, 0, n);
      SmallVector<AffineExpr> sizes(rank + 1 - d, getAffineConstantExpr(1, ctx));
      sizes[at - d] = getAffineConstantExpr(n, ctx);
      return ViewOp::create(rewriter, loc, a, shapeAttr(ctx, sizes));
    };
    // Dimension d + 1 indexes the element ranked (i), dimension d the other (j).
    Value xi = UnsqueezeOp::create(rewriter, loc, x, d);
    Value xj = UnsqueezeOp::create(rewriter, loc, x, d + 1);
    Value pi = positions(d + 1), pj = positions(d);
    Value nanI = IsnanOp::create(rewriter, loc, xi), nanJ = IsnanOp::create(rewriter, loc, xj);
    auto land = [&](Value a, Value b) -> Value {
      return LogicalAndOp::create(rewriter, loc, a, b);
    };
    auto lor = [&](Value a, Value b) -> Value { return LogicalOrOp::create(rewriter, loc, a, b); };
    auto lnot = [&](Value a) -> Value { return LogicalNotOp::create(rewriter, loc, a); };
    Value ordered = op.getDescending() ? GtOp::create(rewriter, loc, xj, xi).getResult()
                                       : LtOp::create(rewriter, loc, xj, xi).getResult();
    Value nanOrder = op.getDescending() ? land(nanJ, lnot(nanI)) : land(nanI, lnot(nanJ));
    Value same = lor(EqOp::create(rewriter, loc, xj, xi), land(nanI, nanJ));
    Value before = lor(lor(ordered, nanOrder), land(same, LtOp::create(rewriter, loc, pj, pi)));
    auto dims = rewriter.getDenseI64ArrayAttr({d});
    Value ranks = SumOp::create(rewriter, loc, before, dims, /*keepdim=*/false, i64);
    // indices[k] = sum over i of (rank_i == k ? i : 0): dimension d is k, d + 1 is i.
    Value hit =
        EqOp::create(rewriter, loc, UnsqueezeOp::create(rewriter, loc, ranks, d), positions(d));
    Value zero = arith::ConstantOp::create(rewriter, loc, rewriter.getI64IntegerAttr(0));
    Value picked = WhereOp::create(rewriter, loc, hit, positions(d + 1), zero);
    Value indices = SumOp::create(rewriter, loc, picked, rewriter.getDenseI64ArrayAttr({d + 1}),
                                  /*keepdim=*/false, i64);
    Value values = GatherOp::create(rewriter, loc, x, d, indices, false);
    rewriter.replaceOp(op, {values, indices});
    return success();
  }
};

/// topk: the first k of a sort (descending for the largest).
struct DecomposeTopk : OpRewritePattern<TopkOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TopkOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    int64_t rank = typeOf(op.getSelf()).getRank();
    auto sort =
        SortOp::create(rewriter, loc, op.getSelf(), op.getDim(), op.getLargest(), BoolAttr());
    if (rank == 0) {
      rewriter.replaceOp(op, sort.getResults());
      return success();
    }
    int64_t d = *normalizeDim(op.getDim(), rank);
    auto bound = [&](int64_t v) { return shapeAttr(ctx, {getAffineConstantExpr(v, ctx)}); };
    SmallVector<Value> firsts;
    for (Value r : sort.getResults())
      firsts.push_back(SliceOp::create(rewriter, loc, r, d, bound(0), bound(op.getK()), 1));
    rewriter.replaceOp(op, firsts);
    return success();
  }
};

/// histc over a given range: each element's bin, floor((x - min) * bins / (max - min)) in
/// x's dtype (x == max in the last bin), compared with every bin and summed over the
/// elements in range (NaN is in none).
struct DecomposeHistc : OpRewritePattern<HistcOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(HistcOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    Value x = op.getSelf();
    BaseTensorType type = typeOf(x);
    Type dtype = type.getDtype();
    int64_t bins = op.getBins();
    double lo = op.getMin().convertToDouble(), hi = op.getMax().convertToDouble();
    x = ViewOp::create(rewriter, loc, x, shapeAttr(ctx, {type.getMeta().numel(ctx)}));
    Value shifted = SubOp::create(rewriter, loc, x, f64(rewriter, loc, lo), Attribute());
    Value scaled =
        MulOp::create(rewriter, loc, shifted, f64(rewriter, loc, static_cast<double>(bins)));
    scaled = DivOp::create(rewriter, loc, scaled, f64(rewriter, loc, hi - lo), StringAttr());
    auto i64 = rewriter.getI64Type();
    Value bin = castTo(rewriter, loc, FloorOp::create(rewriter, loc, scaled), i64);
    Value last = arith::ConstantOp::create(rewriter, loc, rewriter.getI64IntegerAttr(bins - 1));
    bin = WhereOp::create(rewriter, loc, EqOp::create(rewriter, loc, x, f64(rewriter, loc, hi)),
                          last, bin);
    Value inRange =
        LogicalAndOp::create(rewriter, loc, GeOp::create(rewriter, loc, x, f64(rewriter, loc, lo)),
                             LeOp::create(rewriter, loc, x, f64(rewriter, loc, hi)));
    // [elements, bins]: element i is in bin b.
    Value hit = EqOp::create(rewriter, loc, UnsqueezeOp::create(rewriter, loc, bin, 1),
                             int64Range(rewriter, loc, 0, bins));
    hit = LogicalAndOp::create(rewriter, loc, hit, UnsqueezeOp::create(rewriter, loc, inRange, 1));
    rewriter.replaceOp(op, SumOp::create(rewriter, loc, hit, rewriter.getDenseI64ArrayAttr({0}),
                                         /*keepdim=*/false, TypeAttr::get(dtype)));
    return success();
  }
};

/// grouped_mm as one GEMM over every group (see its description): row s of input, in the
/// block of its group g(s) = #{e : offs[e] <= s} of [S, E, K] and zero in the others (no
/// block for rows at or after offs[E - 1]), viewed [S, E * K], times weight viewed
/// [E * K, N].
struct DecomposeGroupedMm : OpRewritePattern<GroupedMmOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(GroupedMmOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    Type dtype = typeOf(op.getResult()).getDtype();
    Value a = castTo(rewriter, loc, op.getInput(), dtype);
    Value w = castTo(rewriter, loc, op.getWeight(), dtype);
    ArrayRef<AffineExpr> ws = typeOf(w).getSizes();
    int64_t groups = *getConstantSize(ws[0]), k = *getConstantSize(ws[1]);
    auto i64 = rewriter.getI64Type();
    // Rows counted from 1 (S may be symbolic: a running count of ones); group e ends at
    // or before row s when offs[e] < s + 1.
    Value ones = FullLikeOp::create(rewriter, loc, SelectOp::create(rewriter, loc, a, 1, 0),
                                    rewriter.getI64IntegerAttr(1), TypeAttr::get(i64));
    Value counted = CumsumOp::create(rewriter, loc, ones, 0, TypeAttr::get(i64));
    Value ends = castTo(rewriter, loc, op.getOffs(), i64);
    Value done = LtOp::create(rewriter, loc, UnsqueezeOp::create(rewriter, loc, ends, 0),
                              UnsqueezeOp::create(rewriter, loc, counted, 1));
    Value group = SumOp::create(rewriter, loc, done, rewriter.getDenseI64ArrayAttr({1}),
                                /*keepdim=*/false, TypeAttr::get(i64));
    Value member = EqOp::create(rewriter, loc, UnsqueezeOp::create(rewriter, loc, group, 1),
                                int64Range(rewriter, loc, 0, groups));
    Value mask = UnsqueezeOp::create(rewriter, loc, castTo(rewriter, loc, member, dtype), 2);
    Value spread = MulOp::create(rewriter, loc, UnsqueezeOp::create(rewriter, loc, a, 1), mask);
    AffineExpr s = typeOf(a).getSizes()[0];
    Value flat = ViewOp::create(rewriter, loc, spread,
                                shapeAttr(ctx, {s, getAffineConstantExpr(groups * k, ctx)}));
    Value stacked = ViewOp::create(rewriter, loc, w,
                                   shapeAttr(ctx, {getAffineConstantExpr(groups * k, ctx), ws[2]}));
    rewriter.replaceOp(op, MmOp::create(rewriter, loc, flat, stacked).getResult());
    return success();
  }
};

/// flip: per dimension, index_select by the reversed positions (its derivative is the
/// index's).
struct DecomposeFlip : OpRewritePattern<FlipOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(FlipOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = op.getSelf();
    int64_t rank = typeOf(x).getRank();
    for (int64_t d : op.getDims()) {
      if (rank == 0)
        break;
      int64_t dim = *normalizeDim(d, rank);
      int64_t size = *getConstantSize(typeOf(x).getSizes()[dim]);
      if (size <= 1)
        continue;
      x = IndexSelectOp::create(rewriter, loc, x, dim, int64Range(rewriter, loc, size - 1, -1, -1));
    }
    if (x == op.getSelf())
      x = CloneOp::create(rewriter, loc, x);
    rewriter.replaceOp(op, x);
    return success();
  }
};

/// diagonal: dim1 and dim2 moved to the front, indexed by two aranges (i + max(-offset,
/// 0), i + max(offset, 0)), the diagonal moved last.
struct DecomposeDiagonal : OpRewritePattern<DiagonalOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(DiagonalOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = op.getSelf();
    int64_t rank = typeOf(x).getRank();
    int64_t d1 = *normalizeDim(op.getDim1(), rank), d2 = *normalizeDim(op.getDim2(), rank);
    int64_t length = *getConstantSize(typeOf(op.getResult()).getSizes().back());
    int64_t offset = op.getOffset();
    SmallVector<int64_t> order = {d1, d2};
    for (int64_t d = 0; d < rank; ++d)
      if (d != d1 && d != d2)
        order.push_back(d);
    Value front = PermuteOp::create(rewriter, loc, x, order);
    auto positions = [&](int64_t start) {
      return int64Range(rewriter, loc, start, start + length);
    };
    Value diag = IndexOp::create(rewriter, loc, front,
                                 ValueRange{positions(std::max<int64_t>(-offset, 0)),
                                            positions(std::max<int64_t>(offset, 0))},
                                 DenseI64ArrayAttr());
    SmallVector<int64_t> back;
    for (int64_t d = 1; d < rank - 1; ++d)
      back.push_back(d);
    back.push_back(0);
    rewriter.replaceOpWithNewOp<PermuteOp>(op, diag, back);
    return success();
  }
};

/// roll: per dimension, the last `shift` elements (mod size) concatenated before the
/// others; without dims, the same on the flattened tensor, viewed back.
struct DecomposeRoll : OpRewritePattern<RollOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(RollOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    auto c = [&](int64_t v) { return getAffineConstantExpr(v, ctx); };
    ArrayRef<AffineExpr> sizes = typeOf(op.getSelf()).getSizes();
    Value x = op.getSelf();
    SmallVector<int64_t> dims(op.getDims());
    if (dims.empty()) {
      int64_t numel = 1;
      for (AffineExpr s : sizes)
        numel *= *getConstantSize(s);
      x = ViewOp::create(rewriter, loc, x, shapeAttr(ctx, {c(numel)}));
      dims.push_back(0);
    }
    for (auto [shift, d] : llvm::zip(op.getShifts(), dims)) {
      int64_t dim = *normalizeDim(d, typeOf(x).getRank());
      int64_t size = *getConstantSize(typeOf(x).getSizes()[dim]);
      int64_t s = size ? ((shift % size) + size) % size : 0;
      if (s == 0)
        continue;
      Value tail = SliceOp::create(rewriter, loc, x, dim, shapeAttr(ctx, {c(size - s)}),
                                   shapeAttr(ctx, {c(size)}), 1);
      Value head = SliceOp::create(rewriter, loc, x, dim, shapeAttr(ctx, {c(0)}),
                                   shapeAttr(ctx, {c(size - s)}), 1);
      x = CatOp::create(rewriter, loc, ValueRange{tail, head}, dim);
    }
    if (op.getDims().empty())
      x = ViewOp::create(rewriter, loc, x, shapeAttr(ctx, sizes));
    if (x == op.getSelf())
      x = CloneOp::create(rewriter, loc, x);
    rewriter.replaceOp(op, x);
    return success();
  }
};

/// index_select: an index of one dimension by the 1-d index.
struct DecomposeIndexSelect : OpRewritePattern<IndexSelectOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(IndexSelectOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    if (typeOf(op.getSelf()).getRank() == 0) { // its only index is 0
      rewriter.replaceOpWithNewOp<CloneOp>(op, op.getSelf());
      return success();
    }
    int64_t dim = *normalizeDim(op.getDim(), typeOf(op.getSelf()).getRank());
    Value index = op.getIndex();
    if (typeOf(index).getRank() == 0)
      index = ViewOp::create(rewriter, loc, index, shapeAttr(ctx, {getAffineConstantExpr(1, ctx)}));
    DenseI64ArrayAttr dims = dim == 0 ? DenseI64ArrayAttr() : rewriter.getDenseI64ArrayAttr({dim});
    rewriter.replaceOpWithNewOp<IndexOp>(op, op.getSelf(), ValueRange{index}, dims);
    return success();
  }
};

/// upsample: per resampled dimension, a product with a constant [out, in] matrix of
/// interpolation weights (ATen's source positions), the last dimension as `x W^T`, an
/// earlier one as `W x` on the input viewed as [..., in, rest]. Its derivative is the
/// products'.
struct DecomposeUpsample : OpRewritePattern<UpsampleOp> {
  using OpRewritePattern::OpRewritePattern;

  /// ATen's cubic convolution coefficients (A = -0.75) of the taps at floor(src) - 1 ..
  /// floor(src) + 2 for a fraction t of the way from floor(src) to the next input.
  static std::array<double, 4> cubicCoefficients(double t) {
    constexpr double a = -0.75;
    auto near = [&](double x) { return ((a + 2) * x - (a + 3)) * x * x + 1; };
    auto far = [&](double x) { return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a; };
    return {far(t + 1), near(t), near(1 - t), far(2 - t)};
  }

  /// Row o: the weights of input positions for output position o.
  static SmallVector<float> weights(StringRef mode, bool alignCorners, int64_t in, int64_t out,
                                    std::optional<double> scale) {
    SmallVector<double> w(out * in, 0.0);
    bool interpolates = mode == "linear" || mode == "cubic";
    // ATen's area_pixel_compute_scale: 1 / scale when given, else in / out.
    double ratio = scale && *scale > 0 ? 1.0 / *scale : static_cast<double>(in) / out;
    if (interpolates && alignCorners)
      ratio = out > 1 ? static_cast<double>(in - 1) / (out - 1) : 0.0;
    for (int64_t o = 0; o < out; ++o) {
      if (!interpolates) {
        double src = mode == "nearest" ? o * ratio : (o + 0.5) * ratio;
        int64_t i = std::min(static_cast<int64_t>(std::floor(src)), in - 1);
        w[o * in + i] = 1.0;
        continue;
      }
      // area_pixel_compute_source_index: cubic positions are not clamped at 0.
      double src = alignCorners ? o * ratio : ratio * (o + 0.5) - 0.5;
      if (mode == "cubic") {
        double floorSrc = std::floor(src);
        std::array<double, 4> c = cubicCoefficients(src - floorSrc);
        for (int64_t k = 0; k < 4; ++k) {
          int64_t i = std::clamp(static_cast<int64_t>(floorSrc) - 1 + k, int64_t{0}, in - 1);
          w[o * in + i] += c[k];
        }
        continue;
      }
      src = std::max(src, 0.0);
      int64_t i0 = std::min(static_cast<int64_t>(std::floor(src)), in - 1);
      int64_t i1 = std::min(i0 + 1, in - 1);
      double lambda = std::min(src - static_cast<double>(i0), 1.0);
      w[o * in + i0] += 1.0 - lambda;
      w[o * in + i1] += lambda;
    }
    return SmallVector<float>(w.begin(), w.end());
  }

  LogicalResult matchAndRewrite(UpsampleOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    BaseTensorType inType = typeOf(op.getInput()), outType = typeOf(op.getResult());
    int64_t rank = inType.getRank();
    int64_t spatial = rank - 2;
    Type dtype = inType.getDtype();
    Value x = op.getInput();
    for (int64_t i = spatial - 1; i >= 0; --i) {
      int64_t d = rank - spatial + i;
      int64_t in = *getConstantSize(inType.getSizes()[d]);
      int64_t out = *getConstantSize(outType.getSizes()[d]);
      std::optional<double> scale;
      if (op.getScaleFactors())
        scale = (*op.getScaleFactors())[i];
      SmallVector<float> w = weights(op.getMode(), op.getAlignCorners(), in, out, scale);
      bool last = d == rank - 1;
      // The last dimension takes W^T [in, out] from the right, the others W [out, in] from
      // the left.
      SmallVector<int64_t> shape =
          last ? SmallVector<int64_t>{in, out} : SmallVector<int64_t>{out, in};
      SmallVector<float> data(w);
      if (last)
        for (int64_t o = 0; o < out; ++o)
          for (int64_t j = 0; j < in; ++j)
            data[j * out + o] = w[o * in + j];
      auto attr = DenseElementsAttr::get(RankedTensorType::get(shape, rewriter.getF32Type()),
                                         ArrayRef<float>(data));
      Value matrix = ConstantOp::create(rewriter, loc, attr);
      if (dtype != rewriter.getF32Type())
        matrix = ToDTypeOp::create(rewriter, loc, matrix, TypeAttr::get(dtype));
      if (last) {
        x = MatmulOp::create(rewriter, loc, x, matrix).getResult();
        continue;
      }
      // [..., in, later dimensions] as [..., in, rest] (the later dimensions are already
      // resampled, static), multiplied from the left and viewed back.
      SmallVector<AffineExpr> sizes(typeOf(x).getSizes());
      if (d != rank - 2) {
        int64_t rest = 1;
        for (int64_t e = d + 1; e < rank; ++e)
          rest *= *getConstantSize(sizes[e]);
        SmallVector<AffineExpr> viewed(sizes.begin(), sizes.begin() + d + 1);
        viewed.push_back(getAffineConstantExpr(rest, ctx));
        x = ViewOp::create(rewriter, loc, x, shapeAttr(ctx, viewed));
      }
      x = MatmulOp::create(rewriter, loc, matrix, x).getResult();
      if (d != rank - 2) {
        sizes[d] = getAffineConstantExpr(out, ctx);
        x = ViewOp::create(rewriter, loc, x, shapeAttr(ctx, sizes));
      }
    }
    rewriter.replaceOp(op, x);
    return success();
  }
};

/// einsum: the operands contracted pairwise, left to right. Labels an operand alone has
/// and nothing later (nor the output) needs are summed first; then for a pair, labels
/// both have and something later needs are batch dimensions, labels both have and
/// nothing needs are contracted, and the rest belong to one side: the pair is
/// permuted to [batch, own, contracted] and [batch, contracted, own], viewed as matrices
/// and multiplied (tgc.matmul broadcasts batch dimensions of size 1), and the product is
/// viewed back. The last result is summed and permuted to the output's labels.
struct DecomposeEinsum : OpRewritePattern<EinsumOp> {
  using OpRewritePattern::OpRewritePattern;

  struct Term {
    Value value;
    SmallVector<int, 6> labels;
  };

  /// Sums the labels of `term` that `needed` rejects.
  static void sumUnneeded(PatternRewriter &rewriter, Location loc, Term &term,
                          llvm::function_ref<bool(int)> needed) {
    SmallVector<int64_t> dims;
    SmallVector<int, 6> kept;
    for (auto [i, label] : llvm::enumerate(term.labels)) {
      if (needed(label))
        kept.push_back(label);
      else
        dims.push_back(static_cast<int64_t>(i));
    }
    if (dims.empty())
      return;
    term.value = SumOp::create(rewriter, loc, term.value, rewriter.getDenseI64ArrayAttr(dims),
                               false, TypeAttr());
    term.labels = kept;
  }

  /// `term` with its labels in `order` (a permutation of them).
  static Value permuted(PatternRewriter &rewriter, Location loc, const Term &term,
                        ArrayRef<int> order) {
    SmallVector<int64_t> dims;
    for (int label : order)
      dims.push_back(llvm::find(term.labels, label) - term.labels.begin());
    if (llvm::equal(dims, llvm::seq<int64_t>(0, dims.size())))
      return term.value;
    return PermuteOp::create(rewriter, loc, term.value, dims);
  }

  /// `value` viewed with `sizes`, unless it has them.
  static Value viewed(PatternRewriter &rewriter, Location loc, Value value,
                      ArrayRef<AffineExpr> sizes) {
    if (llvm::equal(typeOf(value).getSizes(), sizes))
      return value;
    return ViewOp::create(rewriter, loc, value, shapeAttr(rewriter.getContext(), sizes));
  }

  LogicalResult matchAndRewrite(EinsumOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    SmallVector<int64_t> ranks;
    for (Value t : op.getTensors())
      ranks.push_back(typeOf(t).getRank());
    EinsumSpec spec;
    std::string error;
    if (!parseEinsum(op.getEquation(), ranks, spec, error))
      return op.emitOpError(error);
    SmallVector<Term> terms;
    for (auto [value, labels] : llvm::zip(op.getTensors(), spec.inputs)) {
      // A label repeated within the operand: its diagonal of the two dimensions, which
      // tgc.diagonal moves last, until each label is there once.
      Term term{value, labels};
      for (size_t k = 1; k < term.labels.size(); ++k) {
        auto first = llvm::find(ArrayRef<int>(term.labels).take_front(k), term.labels[k]);
        if (first == term.labels.begin() + k)
          continue;
        int64_t dim1 = first - term.labels.begin(), dim2 = k;
        int label = term.labels[k];
        term.value = DiagonalOp::create(rewriter, loc, term.value, 0, dim1, dim2);
        term.labels.erase(term.labels.begin() + dim2);
        term.labels.erase(term.labels.begin() + dim1);
        term.labels.push_back(label);
        k = 0; // (scan the new order from the start)
      }
      terms.push_back(term);
    }
    // Whether a label is needed by the output or by terms[from...].
    auto neededFrom = [&](size_t from) {
      return [&, from](int label) {
        if (llvm::is_contained(spec.output, label))
          return true;
        for (size_t k = from; k < terms.size(); ++k)
          if (llvm::is_contained(terms[k].labels, label))
            return true;
        return false;
      };
    };
    auto sizeOf = [&](const Term &t, int label) {
      return typeOf(t.value).getSizes()[llvm::find(t.labels, label) - t.labels.begin()];
    };
    auto product = [&](const Term &t, ArrayRef<int> labels) {
      AffineExpr p = getAffineConstantExpr(1, ctx);
      for (int label : labels)
        p = p * sizeOf(t, label);
      return p;
    };

    Term acc = terms[0];
    sumUnneeded(rewriter, loc, acc, neededFrom(1));
    for (size_t j = 1; j < terms.size(); ++j) {
      Term other = terms[j];
      auto laterOrOutput = neededFrom(j + 1);
      sumUnneeded(rewriter, loc, other, [&](int label) {
        return laterOrOutput(label) || llvm::is_contained(acc.labels, label);
      });
      SmallVector<int, 6> batch, contracted, own, otherOwn;
      for (int label : acc.labels) {
        if (!llvm::is_contained(other.labels, label))
          own.push_back(label);
        else if (laterOrOutput(label))
          batch.push_back(label);
        else
          contracted.push_back(label);
      }
      for (int label : other.labels)
        if (!llvm::is_contained(acc.labels, label))
          otherOwn.push_back(label);
      for (int label : contracted)
        if (sizeOf(acc, label) != sizeOf(other, label))
          return op.emitOpError("einsum: a summed label has sizes that differ (broadcasting "
                                "it is not supported)");
      SmallVector<int, 6> leftOrder(batch), rightOrder(batch);
      leftOrder.append(own.begin(), own.end());
      leftOrder.append(contracted.begin(), contracted.end());
      rightOrder.append(contracted.begin(), contracted.end());
      rightOrder.append(otherOwn.begin(), otherOwn.end());
      SmallVector<AffineExpr> leftSizes, rightSizes;
      for (int label : batch) {
        leftSizes.push_back(sizeOf(acc, label));
        rightSizes.push_back(sizeOf(other, label));
      }
      leftSizes.append({product(acc, own), product(acc, contracted)});
      rightSizes.append({product(other, contracted), product(other, otherOwn)});
      Value left = viewed(rewriter, loc, permuted(rewriter, loc, acc, leftOrder), leftSizes);
      Value right = viewed(rewriter, loc, permuted(rewriter, loc, other, rightOrder), rightSizes);
      Value result = MatmulOp::create(rewriter, loc, left, right);
      SmallVector<AffineExpr> sizes(typeOf(result).getSizes().take_front(batch.size()));
      for (int label : own)
        sizes.push_back(sizeOf(acc, label));
      for (int label : otherOwn)
        sizes.push_back(sizeOf(other, label));
      SmallVector<int, 6> labels(batch);
      labels.append(own.begin(), own.end());
      labels.append(otherOwn.begin(), otherOwn.end());
      acc = {viewed(rewriter, loc, result, sizes), labels};
    }
    sumUnneeded(rewriter, loc, acc,
                [&](int label) { return llvm::is_contained(spec.output, label); });
    Value result = permuted(rewriter, loc, acc, spec.output);
    if (result == op.getTensors().front())
      result = CloneOp::create(rewriter, loc, result);
    if (typeOf(result).getDtype() != typeOf(op.getResult()).getDtype())
      result = ToDTypeOp::create(rewriter, loc, result,
                                 TypeAttr::get(typeOf(op.getResult()).getDtype()));
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// unbind: select(self, dim, i) for each i.
struct DecomposeUnbind : OpRewritePattern<UnbindOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(UnbindOp op, PatternRewriter &rewriter) const override {
    SmallVector<Value> results;
    for (int64_t i = 0, e = op.getNumResults(); i < e; ++i)
      results.push_back(SelectOp::create(rewriter, op.getLoc(), op.getSelf(), op.getDim(), i));
    rewriter.replaceOp(op, results);
    return success();
  }
};

struct DecomposeSplit : OpRewritePattern<SplitOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SplitOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    SmallVector<Value> results;
    int64_t start = 0;
    for (int64_t size : op.getSplitSizes()) {
      auto bound = [&](int64_t v) { return shapeAttr(ctx, {getAffineConstantExpr(v, ctx)}); };
      results.push_back(SliceOp::create(rewriter, loc, op.getSelf(), op.getDim(), bound(start),
                                        bound(start + size), 1));
      start += size;
    }
    rewriter.replaceOp(op, results);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Stacking, dropout, attention, adaptive pooling
//===----------------------------------------------------------------------===//

struct DecomposeStack : OpRewritePattern<StackOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(StackOp op, PatternRewriter &rewriter) const override {
    int64_t rank = typeOf(op.getTensors()[0]).getRank();
    int64_t dim = *normalizeDim(op.getDim(), rank + 1);
    SmallVector<Value> expanded;
    for (Value t : op.getTensors())
      expanded.push_back(UnsqueezeOp::create(rewriter, op.getLoc(), t, dim));
    rewriter.replaceOpWithNewOp<CatOp>(op, expanded, dim);
    return success();
  }
};

/// Dropout that drops nothing (eval mode, or p = 0) is the identity.
struct DecomposeDropout : OpRewritePattern<DropoutOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(DropoutOp op, PatternRewriter &rewriter) const override {
    if (op.getTrain() && !op.getP().isZero())
      return rewriter.notifyMatchFailure(op, "random dropout needs the RNG state");
    rewriter.replaceOp(op, op.getInput());
    return success();
  }
};

/// native_dropout that drops nothing: the input and a mask of ones.
struct DecomposeNativeDropout : OpRewritePattern<NativeDropoutOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(NativeDropoutOp op, PatternRewriter &rewriter) const override {
    if (op.getTrain().value_or(true) && !op.getP().isZero())
      return rewriter.notifyMatchFailure(op, "random dropout needs the RNG state");
    Value ones =
        FullLikeOp::create(rewriter, op.getLoc(), op.getInput(), rewriter.getBoolAttr(true),
                           TypeAttr::get(rewriter.getI1Type()));
    rewriter.replaceOp(op, {op.getInput(), ones});
    return success();
  }
};

/// Grouped-query attention (enable_gqa): each of the Hkv key/value heads serves Hq / Hkv
/// consecutive query heads, so key and value are repeated to Hq heads (repeat_interleave
/// over the head dimension, as transformers' repeat_kv) and the attention is an
/// ordinary one, which may stay fused.
struct ExpandGroupedQueryAttention : OpRewritePattern<ScaledDotProductAttentionOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ScaledDotProductAttentionOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.getEnableGqa())
      return failure();
    BaseTensorType q = typeOf(op.getQuery()), k = typeOf(op.getKey());
    int64_t rank = q.getRank();
    if (rank < 3 || typeOf(op.getValue()).getRank() != rank)
      return rewriter.notifyMatchFailure(op, "grouped-query attention needs a head dimension");
    std::optional<int64_t> queryHeads = getConstantSize(q.getSizes()[rank - 3]);
    std::optional<int64_t> keyHeads = getConstantSize(k.getSizes()[rank - 3]);
    if (!queryHeads || !keyHeads || *keyHeads == 0 || *queryHeads % *keyHeads != 0)
      return rewriter.notifyMatchFailure(op, "query heads must be a multiple of key heads");
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    int64_t group = *queryHeads / *keyHeads;
    auto repeat = [&](Value x) -> Value {
      if (group == 1)
        return x;
      SmallVector<AffineExpr> sizes(typeOf(x).getSizes());
      Value unsqueezed = UnsqueezeOp::create(rewriter, loc, x, rank - 2);
      SmallVector<AffineExpr> expanded(sizes);
      expanded.insert(expanded.begin() + (rank - 2), getAffineConstantExpr(group, ctx));
      Value broadcast = ExpandOp::create(rewriter, loc, unsqueezed, shapeAttr(ctx, expanded));
      sizes[rank - 3] = getAffineConstantExpr(*queryHeads, ctx);
      return ViewOp::create(rewriter, loc, broadcast, shapeAttr(ctx, sizes));
    };
    auto attention = ScaledDotProductAttentionOp::create(
        rewriter, loc, op.getQuery(), repeat(op.getKey()), repeat(op.getValue()), op.getAttnMask(),
        op.getDropoutPAttr(), op.getIsCausalAttr(), op.getScaleAttr(), rewriter.getBoolAttr(false),
        op.getWithLogsumexpAttr());
    rewriter.replaceOp(op, attention->getResults());
    return success();
  }
};

/// softmax(q @ k^T * scale, masked) @ v, with the causal mask as a lower triangle.
/// With `keepFused`, an attention the lowering takes as a fused kernel
/// (hasFusedLowering) stays (inference; autodiff differentiates the decomposition).
struct DecomposeAttention : OpRewritePattern<ScaledDotProductAttentionOp> {
  DecomposeAttention(MLIRContext *ctx, bool keepFused)
      : OpRewritePattern(ctx), keepFused(keepFused) {}
  bool keepFused;

  LogicalResult matchAndRewrite(ScaledDotProductAttentionOp op,
                                PatternRewriter &rewriter) const override {
    if (keepFused && op.hasFusedLowering())
      return rewriter.notifyMatchFailure(op, "lowered as a fused kernel");
    if (!op.getDropoutP().isZero() || op.getEnableGqa())
      return rewriter.notifyMatchFailure(op, "attention dropout is not supported; GQA is "
                                             "expanded first");
    Location loc = op.getLoc();
    Value scores = op.buildScores(rewriter);
    if (!scores)
      return rewriter.notifyMatchFailure(op, "default scale of a symbolic embedding size");
    int64_t rank = typeOf(op.getQuery()).getRank();
    if (!op.getWithLogsumexp()) {
      Value probs = SoftmaxOp::create(rewriter, loc, scores, rank - 1, TypeAttr(), false);
      rewriter.replaceOpWithNewOp<MatmulOp>(op, probs, op.getValue());
      return success();
    }
    // The row log-sum-exp too: probabilities = exp(scores - lse).
    auto last = rewriter.getDenseI64ArrayAttr({rank - 1});
    Value max = AmaxOp::create(rewriter, loc, scores, last, /*keepdim=*/true, TypeAttr());
    Value exp =
        ExpOp::create(rewriter, loc, SubOp::create(rewriter, loc, scores, max, Attribute()));
    Value sum = SumOp::create(rewriter, loc, exp, last, /*keepdim=*/true, TypeAttr());
    Value lse = AddOp::create(rewriter, loc, LogOp::create(rewriter, loc, sum), max, Attribute());
    Value probs =
        ExpOp::create(rewriter, loc, SubOp::create(rewriter, loc, scores, lse, Attribute()));
    Value out = MatmulOp::create(rewriter, loc, probs, op.getValue());
    rewriter.replaceOp(op, {out, SqueezeOp::create(rewriter, loc, lse, last).getResult()});
    return success();
  }
};

/// A loss's elements reduced as ATen's `reduction` says: 0 none, 1 mean, 2 sum.
static Value reduceLoss(OpBuilder &b, Location loc, Value loss, int64_t reduction) {
  if (reduction == 1)
    return MeanOp::create(b, loc, loss, DenseI64ArrayAttr(), false, TypeAttr());
  if (reduction == 2)
    return SumOp::create(b, loc, loss, DenseI64ArrayAttr(), false, TypeAttr());
  return loss;
}

/// cross_entropy = nll_loss(log_softmax(self, class dim), target, weight) for class
/// indices; with class probabilities, -sum(weight * target * log_softmax) over the
/// class dimension, then the reduction (mean divides by the number of samples). Label
/// smoothing eps, as ATen's cross_entropy_loss_label_smoothing: for class indices,
/// (1 - eps) nll + eps / C times the smooth loss, -sum(weight * log_softmax) over the
/// classes (0 where the target is ignored) reduced like nll (mean: by nll's total
/// weight); probabilities become target (1 - eps) + eps / C.
struct DecomposeCrossEntropy : OpRewritePattern<CrossEntropyLossOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(CrossEntropyLossOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    int64_t rank = typeOf(op.getSelf()).getRank(), classDim = rank == 1 ? 0 : 1;
    double eps = op.getLabelSmoothing().convertToDouble();
    std::optional<int64_t> classes = getConstantSize(typeOf(op.getSelf()).getSizes()[classDim]);
    if (eps != 0 && !classes)
      return rewriter.notifyMatchFailure(op, "label smoothing needs a static class count");
    Value weight = op.getWeight();
    if (weight && rank > 1)
      weight = channelView(rewriter, loc, weight, rank);
    auto classSum = [&](Value v) -> Value {
      return SumOp::create(rewriter, loc, v, rewriter.getDenseI64ArrayAttr({classDim}), false,
                           TypeAttr());
    };
    Value logProbs = LogSoftmaxOp::create(rewriter, loc, op.getSelf(), classDim, TypeAttr());
    if (getCategory(typeOf(op.getTarget()).getDtype()) != DTypeCategory::Floating) {
      auto nll = NllLossOp::create(rewriter, loc, logProbs, op.getTarget(), op.getWeight(),
                                   op.getReduction(), op.getIgnoreIndex());
      if (eps == 0) {
        rewriter.replaceOp(op, nll.getOutput());
        return success();
      }
      Value smooth = NegOp::create(
          rewriter, loc,
          classSum(weight ? MulOp::create(rewriter, loc, logProbs, weight) : logProbs));
      Value ignored = EqOp::create(rewriter, loc, op.getTarget(),
                                   f64(rewriter, loc, double(int64_t(op.getIgnoreIndex()))));
      smooth = WhereOp::create(rewriter, loc, ignored, f64(rewriter, loc, 0), smooth);
      if (op.getReduction() != 0)
        smooth = SumOp::create(rewriter, loc, smooth, DenseI64ArrayAttr(), false, TypeAttr());
      if (op.getReduction() == 1)
        smooth = DivOp::create(rewriter, loc, smooth, nll.getTotalWeight(), StringAttr());
      Value loss = AddOp::create(
          rewriter, loc, MulOp::create(rewriter, loc, nll.getOutput(), f64(rewriter, loc, 1 - eps)),
          MulOp::create(rewriter, loc, smooth, f64(rewriter, loc, eps / double(*classes))),
          Attribute());
      rewriter.replaceOp(op, loss);
      return success();
    }
    Value target = op.getTarget();
    if (eps != 0)
      target = AddOp::create(rewriter, loc,
                             MulOp::create(rewriter, loc, target, f64(rewriter, loc, 1 - eps)),
                             f64(rewriter, loc, eps / double(*classes)), Attribute());
    Value weighted = MulOp::create(rewriter, loc, logProbs, target);
    if (weight)
      weighted = MulOp::create(rewriter, loc, weighted, weight);
    Value loss = NegOp::create(rewriter, loc, classSum(weighted));
    rewriter.replaceOp(op, reduceLoss(rewriter, loc, loss, op.getReduction()));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Pointwise losses
//===----------------------------------------------------------------------===//

/// |self - target|.
static Value absDifference(OpBuilder &b, Location loc, Value self, Value target) {
  return AbsOp::create(b, loc, SubOp::create(b, loc, self, target, Attribute()));
}

static Value elementLoss(OpBuilder &b, Location loc, MseLossOp op) {
  Value d = SubOp::create(b, loc, op.getSelf(), op.getTarget(), Attribute());
  return MulOp::create(b, loc, d, d);
}

static Value elementLoss(OpBuilder &b, Location loc, L1LossOp op) {
  return absDifference(b, loc, op.getSelf(), op.getTarget());
}

/// 0.5 d^2 * quadScale where d < limit, else (d - 0.5 limit) * linearScale: smooth_l1
/// (limit beta, quadScale 1/beta, linearScale 1) and huber (limit delta, 1, delta).
static Value piecewiseLoss(OpBuilder &b, Location loc, Value self, Value target, double limit,
                           double quadScale, double linearScale) {
  Value d = absDifference(b, loc, self, target);
  Value quadratic =
      MulOp::create(b, loc, MulOp::create(b, loc, d, d), f64(b, loc, 0.5 * quadScale));
  Value linear = SubOp::create(b, loc, d, f64(b, loc, 0.5 * limit), Attribute());
  if (linearScale != 1)
    linear = MulOp::create(b, loc, linear, f64(b, loc, linearScale));
  return WhereOp::create(b, loc, LtOp::create(b, loc, d, f64(b, loc, limit)), quadratic, linear);
}

static Value elementLoss(OpBuilder &b, Location loc, SmoothL1LossOp op) {
  double beta = op.getBeta().convertToDouble();
  if (beta == 0) // ATen: an l1 loss
    return absDifference(b, loc, op.getSelf(), op.getTarget());
  return piecewiseLoss(b, loc, op.getSelf(), op.getTarget(), beta, 1 / beta, 1);
}

static Value elementLoss(OpBuilder &b, Location loc, HuberLossOp op) {
  double delta = op.getDelta().convertToDouble();
  return piecewiseLoss(b, loc, op.getSelf(), op.getTarget(), delta, 1, delta);
}

/// (target - 1) max(log(1 - self), -100) - target max(log(self), -100), times weight.
static Value elementLoss(OpBuilder &b, Location loc, BinaryCrossEntropyOp op) {
  Value x = op.getSelf(), t = op.getTarget();
  auto clampedLog = [&](Value v) {
    return MaximumOp::create(b, loc, LogOp::create(b, loc, v), f64(b, loc, -100)).getResult();
  };
  Value oneMinusX = SubOp::create(b, loc, f64(b, loc, 1), x, Attribute());
  Value negatives = MulOp::create(b, loc, SubOp::create(b, loc, t, f64(b, loc, 1), Attribute()),
                                  clampedLog(oneMinusX));
  Value loss =
      SubOp::create(b, loc, negatives, MulOp::create(b, loc, t, clampedLog(x)), Attribute());
  if (Value weight = op.getWeight())
    loss = MulOp::create(b, loc, loss, weight);
  return loss;
}

/// ATen's form: (1 - target) self - log_sigmoid(self) (1 + (pos_weight - 1) target), with
/// log_sigmoid(x) = -(max(-x, 0) + log1p(exp(-|x|))); times weight.
static Value elementLoss(OpBuilder &b, Location loc, BinaryCrossEntropyWithLogitsOp op) {
  Value x = op.getSelf(), t = op.getTarget();
  Value m = MaximumOp::create(b, loc, NegOp::create(b, loc, x), f64(b, loc, 0));
  Value softplusNeg = AddOp::create(
      b, loc, m,
      Log1pOp::create(b, loc,
                      ExpOp::create(b, loc, NegOp::create(b, loc, AbsOp::create(b, loc, x)))),
      Attribute()); // -log_sigmoid(x)
  if (Value posWeight = op.getPosWeight()) {
    Value logWeight = AddOp::create(
        b, loc,
        MulOp::create(b, loc, SubOp::create(b, loc, posWeight, f64(b, loc, 1), Attribute()), t),
        f64(b, loc, 1), Attribute());
    softplusNeg = MulOp::create(b, loc, softplusNeg, logWeight);
  }
  Value oneMinusT = SubOp::create(b, loc, f64(b, loc, 1), t, Attribute());
  Value loss = AddOp::create(b, loc, MulOp::create(b, loc, oneMinusT, x), softplusNeg, Attribute());
  if (Value weight = op.getWeight())
    loss = MulOp::create(b, loc, loss, weight);
  return loss;
}

/// A pointwise loss: its elements (elementLoss), then the reduction.
template <typename OpT> struct DecomposePointwiseLoss : OpRewritePattern<OpT> {
  using OpRewritePattern<OpT>::OpRewritePattern;
  LogicalResult matchAndRewrite(OpT op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value loss = reduceLoss(rewriter, loc, elementLoss(rewriter, loc, op), op.getReduction());
    replaceWithCast(rewriter, op, {loss});
    return success();
  }
};

/// Ops that no pattern could decompose and that lowering cannot take either.
LogicalResult reportUndecomposed(Operation *root, bool keepAttention) {
  WalkResult walk = root->walk([&](Operation *op) {
    if (llvm::isa<DropoutOp, NativeDropoutOp>(op))
      return op->emitOpError("with p > 0 in training mode needs the RNG state: run "
                             "tgc-materialize-rng first"),
             WalkResult::interrupt();
    if (auto attention = llvm::dyn_cast<ScaledDotProductAttentionOp>(op);
        attention && !(keepAttention && attention.hasFusedLowering()))
      return attention.emitOpError("with dropout, grouped-query attention whose query heads "
                                   "are not a multiple of its key heads, or a symbolic "
                                   "embedding size and no scale is not supported yet"),
             WalkResult::interrupt();
    if (auto loss = llvm::dyn_cast<CrossEntropyLossOp>(op))
      return loss.emitOpError("with label smoothing needs a static number of classes"),
             WalkResult::interrupt();
    return WalkResult::advance();
  });
  return failure(walk.wasInterrupted());
}

/// The constant range [lo, hi) of `dim` (normalized) that a step-1 slice_scatter writes.
std::optional<std::array<int64_t, 3>> scatterRange(SliceScatterOp op) {
  BaseTensorType type = typeOf(op.getSelf());
  std::optional<int64_t> dim = normalizeDim(op.getDim(), type.getRank());
  if (!dim || op.getStep() != 1)
    return std::nullopt;
  MLIRContext *ctx = op.getContext();
  AffineExpr size = type.getSizes()[*dim];
  auto lo =
      llvm::dyn_cast<AffineConstantExpr>(resolveSliceBound(op.getStartAttr(), size, false, ctx));
  auto hi = llvm::dyn_cast<AffineConstantExpr>(resolveSliceBound(op.getEndAttr(), size, true, ctx));
  if (!lo || !hi)
    return std::nullopt;
  return std::array<int64_t, 3>{*dim, lo.getValue(), hi.getValue()};
}

/// Whether `value` is a tgc.full or tgc.full_like of zero.
bool isZeros(Value value) {
  Attribute fill;
  if (auto full = value.getDefiningOp<FullOp>())
    fill = full.getFillValue();
  else if (auto like = value.getDefiningOp<FullLikeOp>())
    fill = like.getFillValue();
  else
    return false;
  if (auto f = llvm::dyn_cast<FloatAttr>(fill))
    return f.getValue().isZero();
  if (auto i = llvm::dyn_cast<IntegerAttr>(fill))
    return i.getValue().isZero();
  return false;
}

/// Whether `value` is zero on [lo, hi) of `dim`: zeros, or slice_scatters into zeros of
/// ranges of `dim` disjoint from it.
bool isZeroOn(Value value, int64_t dim, int64_t lo, int64_t hi) {
  while (auto scatter = value.getDefiningOp<SliceScatterOp>()) {
    std::optional<std::array<int64_t, 3>> range = scatterRange(scatter);
    if (!range || (*range)[0] != dim || ((*range)[1] < hi && lo < (*range)[2]))
      return false;
    value = scatter.getSelf();
  }
  return isZeros(value);
}

/// add(x, slice_scatter(zeros, g, lo:hi)) where x is zero on lo:hi: slice_scatter(x, g,
/// lo:hi). The gradient of a tensor used through several slices (q, k and v split from
/// one projection) is a sum of zero tensors each with one slice's gradient inserted;
/// this inserts the slices' gradients into one tensor instead, so neither the zero
/// tensors nor their sum exist (on the SDPA GPT's training step, 24 zero-filled 3 MB
/// copies and 8 sums of them). Where x is -0.0 the sum would have been +0.0.
struct InsertSliceGradients : OpRewritePattern<AddOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AddOp op, PatternRewriter &rewriter) const override {
    Value lhs = op.getSelf(), rhs = op.getOther();
    if (op.getAlphaAttr() || lhs.getType() != op.getType() || rhs.getType() != op.getType())
      return rewriter.notifyMatchFailure(op, "not a plain sum of two tensors of its type");
    for (auto [scattered, other] : {std::pair(rhs, lhs), std::pair(lhs, rhs)}) {
      auto scatter = scattered.getDefiningOp<SliceScatterOp>();
      if (!scatter || !isZeros(scatter.getSelf()))
        continue;
      std::optional<std::array<int64_t, 3>> range = scatterRange(scatter);
      if (!range || !isZeroOn(other, (*range)[0], (*range)[1], (*range)[2]))
        continue;
      rewriter.replaceOpWithNewOp<SliceScatterOp>(op, op.getType(), other, scatter.getSrc(),
                                                  scatter.getDimAttr(), scatter.getStartAttr(),
                                                  scatter.getEndAttr(), scatter.getStepAttr());
      return success();
    }
    return rewriter.notifyMatchFailure(op, "no slice written into zeros where the other is zero");
  }
};

/// slice_scatters into zeros whose disjoint ranges cover their dimension:
/// cat(sources in range order). (The sliced tensor's gradient once
/// InsertSliceGradients has gathered the slices' gradients: no zero tensor is filled
/// only to be overwritten.)
struct ConcatenateCoveringSlices : OpRewritePattern<SliceScatterOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SliceScatterOp op, PatternRewriter &rewriter) const override {
    SmallVector<std::pair<std::array<int64_t, 3>, Value>> parts; // (dim, lo, hi), source
    Value base = op.getResult();
    while (auto scatter = base.getDefiningOp<SliceScatterOp>()) {
      std::optional<std::array<int64_t, 3>> range = scatterRange(scatter);
      if (!range || (!parts.empty() && (*range)[0] != parts.front().first[0]))
        return rewriter.notifyMatchFailure(op, "not constant step-1 ranges of one dimension");
      parts.push_back({*range, scatter.getSrc()});
      base = scatter.getSelf();
    }
    if (parts.size() < 2 || !isZeros(base))
      return rewriter.notifyMatchFailure(op, "not several slices written into zeros");
    int64_t dim = parts.front().first[0];
    std::optional<int64_t> size = getConstantSize(typeOf(base).getSizes()[dim]);
    if (!size)
      return rewriter.notifyMatchFailure(op, "symbolic size");
    llvm::sort(parts, [](const auto &a, const auto &b) { return a.first[1] < b.first[1]; });
    int64_t covered = 0;
    SmallVector<Value> sources;
    for (auto &[range, source] : parts) {
      if (range[1] != covered)
        return rewriter.notifyMatchFailure(op, "the slices overlap or leave a gap");
      covered = range[2];
      sources.push_back(source);
    }
    if (covered != *size)
      return rewriter.notifyMatchFailure(op, "the slices do not cover the dimension");
    rewriter.replaceOpWithNewOp<CatOp>(op, op.getType(), sources, rewriter.getI64IntegerAttr(dim));
    return success();
  }
};

/// Gives the ops a decomposition creates the saved-tensor hooks scope of the op it
/// decomposes (`tgc.saved_hooks_scope`), so that the hooks still apply to what they
/// save (docs/training.md).
struct PropagateSavedHooksScope : RewriterBase::Listener {
  void notifyPatternBegin(const Pattern &, Operation *op) override {
    scope = op->getAttr(SavedTensorsHooksOp::getScopeTagName());
  }
  void notifyPatternEnd(const Pattern &, LogicalResult) override { scope = {}; }
  void notifyOperationInserted(Operation *op, OpBuilder::InsertPoint) override {
    if (scope && !op->hasAttr(SavedTensorsHooksOp::getScopeTagName()))
      op->setAttr(SavedTensorsHooksOp::getScopeTagName(), scope);
  }
  Attribute scope;
};

struct DecomposePass : public tgc::impl::DecomposePassBase<DecomposePass> {
  using DecomposePassBase::DecomposePassBase;
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<
        DecomposeLinear, DecomposeAddmm<AddmmOp, MmOp>, DecomposeAddmm<BaddbmmOp, BmmOp>,
        DecomposeRepeatInterleave, DecomposeMatmul, DecomposeT, DecomposeSoftmax<SoftmaxOp, false>,
        DecomposeSoftmax<LogSoftmaxOp, true>, DecomposeMean, DecomposeVar, DecomposeSplit,
        DecomposeUnbind, DecomposeEinsum, DecomposeDiff, DecomposePad, DecomposeIndexDims,
        DecomposeRepeat, DecomposeCopy, DecomposeRoll, DecomposeFlip, DecomposeDiagonal,
        DecomposeSort, DecomposeTopk, DecomposeIndexPut, DecomposeIndexSelect, DecomposeUpsample,
        DecomposeAsStridedRestride, DecomposeHistc, DecomposeGroupedMm, DecomposeStack,
        DecomposeDropout, DecomposeCrossEntropy, DecomposeMaskedScatter, DecomposeNativeDropout,
        InsertSliceGradients, ConcatenateCoveringSlices, DecomposePointwiseLoss<MseLossOp>,
        DecomposePointwiseLoss<L1LossOp>, DecomposePointwiseLoss<SmoothL1LossOp>,
        DecomposePointwiseLoss<HuberLossOp>, DecomposePointwiseLoss<BinaryCrossEntropyOp>,
        DecomposePointwiseLoss<BinaryCrossEntropyWithLogitsOp>>(&getContext());
    patterns.add<DecomposeAttention>(&getContext(), keepAttention);
    patterns.add<ExpandGroupedQueryAttention>(&getContext());
    populateDecomposeNNPatterns(patterns, onePassStatistics);
    PropagateSavedHooksScope propagateScope;
    GreedyRewriteConfig config;
    config.setListener(&propagateScope);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns), config))) {
      getOperation()->emitError() << getArgument() << ": the rewriting did not converge";
      return signalPassFailure();
    }
    if (failed(reportUndecomposed(getOperation(), keepAttention)))
      return signalPassFailure();
    // Decompositions may refine result metadata (requires_grad of running statistics
    // computed from batch statistics); function results follow what is returned.
    getOperation()->walk([](func::FuncOp func) {
      if (func.isExternal())
        return;
      auto ret = llvm::cast<func::ReturnOp>(func.getBody().back().getTerminator());
      func.setFunctionType(
          FunctionType::get(func.getContext(), func.getArgumentTypes(), ret.getOperandTypes()));
    });
  }
};

} // namespace
