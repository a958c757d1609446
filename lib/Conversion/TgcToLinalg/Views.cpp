// Lowering of views on value tensors: reshapes, transposes, broadcasts and slices
// (copies or tensor slices; aliasing is gone after functionalization).
#include "tgc/Conversion/TgcToLinalg.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace tgc;

namespace {

/// view/reshape, squeeze and unsqueeze: the same elements with new sizes.
template <typename OpTy> struct ReshapeLowering : TgcLoweringPattern<OpTy> {
  using TgcLoweringPattern<OpTy>::TgcLoweringPattern;
  LogicalResult matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    FailureOr<Value> result =
        this->lowering.reshapeTo(rewriter, op, adaptor.getSelf(), tgcType(op.getResult()));
    if (failed(result))
      return failure();
    rewriter.replaceOp(op, *result);
    return success();
  }
};

/// alias, detach, clone, grad_hook: on values, the operand itself.
template <typename OpTy> struct IdentityLowering : TgcLoweringPattern<OpTy> {
  using TgcLoweringPattern<OpTy>::TgcLoweringPattern;
  LogicalResult matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, adaptor.getSelf());
    return success();
  }
};

LogicalResult lowerTranspose(ConversionPatternRewriter &rewriter, const LoweringContext &lowering,
                             Operation *op, Value input, ArrayRef<int64_t> permutation) {
  // The identity (of a 0-d tensor too, whose empty linalg.transpose the verifier rejects).
  if (llvm::equal(permutation, llvm::seq<int64_t>(0, permutation.size()))) {
    rewriter.replaceOp(op, input);
    return success();
  }
  FailureOr<Value> init = lowering.emptyTensor(rewriter, op, tgcType(op->getResult(0)));
  if (failed(init))
    return failure();
  auto transpose = linalg::TransposeOp::create(rewriter, op->getLoc(), input, *init, permutation);
  rewriter.replaceOp(op, transpose->getResult(0));
  return success();
}

struct PermuteLowering : TgcLoweringPattern<PermuteOp> {
  using TgcLoweringPattern::TgcLoweringPattern;
  LogicalResult matchAndRewrite(PermuteOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    int64_t rank = op.getDims().size();
    SmallVector<int64_t> perm;
    for (int64_t d : op.getDims())
      perm.push_back(*normalizeDim(d, rank));
    return lowerTranspose(rewriter, lowering, op, adaptor.getSelf(), perm);
  }
};

struct TransposeLowering : TgcLoweringPattern<TransposeOp> {
  using TgcLoweringPattern::TgcLoweringPattern;
  LogicalResult matchAndRewrite(TransposeOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    int64_t rank = tgcType(op.getSelf()).getRank();
    if (rank < 2) {
      rewriter.replaceOp(op, adaptor.getSelf());
      return success();
    }
    SmallVector<int64_t> perm;
    for (int64_t i = 0; i < rank; ++i)
      perm.push_back(i);
    std::swap(perm[*normalizeDim(op.getDim0(), rank)], perm[*normalizeDim(op.getDim1(), rank)]);
    return lowerTranspose(rewriter, lowering, op, adaptor.getSelf(), perm);
  }
};

struct ExpandLowering : TgcLoweringPattern<ExpandOp> {
  using TgcLoweringPattern::TgcLoweringPattern;
  LogicalResult matchAndRewrite(ExpandOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    FailureOr<Value> result = broadcastTo(rewriter, lowering, op, adaptor.getSelf(),
                                          tgcType(op.getSelf()), tgcType(op.getResult()));
    if (failed(result))
      return failure();
    rewriter.replaceOp(op, *result);
    return success();
  }
};

/// Offsets, sizes and strides of the region `slice` (or `select`) covers in `source`.
struct SliceRegion {
  SmallVector<OpFoldResult> offsets, sizes, strides;
};

FailureOr<SliceRegion> sliceRegion(ConversionPatternRewriter &rewriter,
                                   const LoweringContext &lowering, Operation *op,
                                   BaseTensorType sourceType, int64_t dim, AffineExpr start,
                                   AffineExpr length, int64_t step) {
  TensorMeta meta = sourceType.getMeta();
  meta.sizes[dim] = length;
  FailureOr<SmallVector<OpFoldResult>> sizes =
      lowering.mixedSizes(rewriter, op, sourceType.withMeta(meta));
  if (failed(sizes))
    return failure();
  OpFoldResult offset;
  if (std::optional<int64_t> c = getConstantSize(start)) {
    offset = rewriter.getIndexAttr(*c);
  } else {
    FailureOr<Value> v = lowering.materializeSize(rewriter, op, start);
    if (failed(v))
      return failure();
    offset = *v;
  }
  SliceRegion region;
  region.sizes = *sizes;
  region.offsets.assign(sourceType.getRank(), rewriter.getIndexAttr(0));
  region.strides.assign(sourceType.getRank(), rewriter.getIndexAttr(1));
  region.offsets[dim] = offset;
  region.strides[dim] = rewriter.getIndexAttr(step);
  return region;
}

/// The region of a `slice` op (`dim`, `start`, `end`, `step` attributes).
template <typename OpTy>
FailureOr<SliceRegion> sliceOpRegion(ConversionPatternRewriter &rewriter,
                                     const LoweringContext &lowering, OpTy op) {
  BaseTensorType source = tgcType(op.getSelf());
  int64_t dim = *normalizeDim(op.getDim(), source.getRank());
  MLIRContext *ctx = rewriter.getContext();
  AffineExpr size = source.getSizes()[dim];
  AffineExpr lo = resolveSliceBound(op.getStartAttr(), size, false, ctx);
  AffineExpr hi = resolveSliceBound(op.getEndAttr(), size, true, ctx);
  AffineExpr length = (hi - lo).ceilDiv(op.getStep());
  if (auto c = getConstantSize(length); c && *c < 0)
    length = getAffineConstantExpr(0, ctx);
  return sliceRegion(rewriter, lowering, op, source, dim, lo, length, op.getStep());
}

/// The region of a `select` op: one index of `dim`.
template <typename OpTy>
FailureOr<SliceRegion> selectOpRegion(ConversionPatternRewriter &rewriter,
                                      const LoweringContext &lowering, OpTy op) {
  BaseTensorType source = tgcType(op.getSelf());
  int64_t dim = *normalizeDim(op.getDim(), source.getRank());
  MLIRContext *ctx = rewriter.getContext();
  int64_t index = op.getIndex();
  AffineExpr start = index < 0 ? source.getSizes()[dim] + index : getAffineConstantExpr(index, ctx);
  return sliceRegion(rewriter, lowering, op, source, dim, start, getAffineConstantExpr(1, ctx), 1);
}

/// The region a slice or select op covers.
template <typename OpTy, bool isSelect>
FailureOr<SliceRegion> regionOf(ConversionPatternRewriter &rewriter,
                                const LoweringContext &lowering, OpTy op) {
  if constexpr (isSelect)
    return selectOpRegion(rewriter, lowering, op);
  else
    return sliceOpRegion(rewriter, lowering, op);
}

/// slice and select: a (rank-reducing, for select) tensor.extract_slice.
template <typename OpTy, bool isSelect> struct ExtractLowering : TgcLoweringPattern<OpTy> {
  using TgcLoweringPattern<OpTy>::TgcLoweringPattern;
  LogicalResult matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    FailureOr<SliceRegion> region = regionOf<OpTy, isSelect>(rewriter, this->lowering, op);
    if (failed(region))
      return failure();
    rewriter.replaceOpWithNewOp<tensor::ExtractSliceOp>(
        op, this->lowering.convertTensorType(op.getType()), adaptor.getSelf(), region->offsets,
        region->sizes, region->strides);
    return success();
  }
};

template <typename OpTy, bool isSelect> struct ScatterLowering : TgcLoweringPattern<OpTy> {
  using TgcLoweringPattern<OpTy>::TgcLoweringPattern;
  LogicalResult matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    // An empty source writes nothing: self (its region may start at the end, which
    // insert_slice rejects).
    if (llvm::any_of(tgcType(op.getSrc()).getSizes(),
                     [](AffineExpr s) { return getConstantSize(s) == 0; })) {
      rewriter.replaceOp(op, adaptor.getSelf());
      return success();
    }
    // An empty source writes nothing: self (its region may start at the end, which
    // insert_slice rejects).
    if (llvm::any_of(tgcType(op.getSrc()).getSizes(),
                     [](AffineExpr s) { return getConstantSize(s) == 0; })) {
      rewriter.replaceOp(op, adaptor.getSelf());
      return success();
    }
    FailureOr<SliceRegion> region = regionOf<OpTy, isSelect>(rewriter, this->lowering, op);
    if (failed(region))
      return failure();
    rewriter.replaceOpWithNewOp<tensor::InsertSliceOp>(
        op, adaptor.getSrc(), adaptor.getSelf(), region->offsets, region->sizes, region->strides);
    return success();
  }
};

/// cat: each operand inserted into an empty result at its running offset along dim.
struct CatLowering : TgcLoweringPattern<CatOp> {
  using TgcLoweringPattern::TgcLoweringPattern;
  LogicalResult matchAndRewrite(CatOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    BaseTensorType resultType = tgcType(op.getResult());
    FailureOr<Value> result = lowering.emptyTensor(rewriter, op, resultType);
    if (failed(result))
      return failure();
    int64_t rank = resultType.getRank();
    int64_t dim = *normalizeDim(op.getDim(), rank);
    Type element = lowering.convertTensorType(resultType).getElementType();
    AffineExpr offset = getAffineConstantExpr(0, rewriter.getContext());
    for (auto [operand, converted] : llvm::zip(op.getTensors(), adaptor.getTensors())) {
      BaseTensorType type = tgcType(operand);
      // An empty piece adds nothing (and its offset may be the end of the result, which
      // insert_slice rejects); nor does one that cat skips (isSkippedByCat).
      if (type.getRank() != rank || getConstantSize(type.getSizes()[dim]) == 0)
        continue;
      Value piece = converted;
      if (llvm::cast<RankedTensorType>(piece.getType()).getElementType() != element) {
        FailureOr<Value> cast = broadcastTo(rewriter, lowering, op, piece, type, type, element);
        if (failed(cast))
          return failure();
        piece = *cast;
      }
      FailureOr<SliceRegion> region =
          sliceRegion(rewriter, lowering, op, resultType, dim, offset, type.getSizes()[dim], 1);
      if (failed(region))
        return failure();
      *result = tensor::InsertSliceOp::create(rewriter, op.getLoc(), piece, *result,
                                              region->offsets, region->sizes, region->strides)
                    .getResult();
      offset = offset + type.getSizes()[dim];
    }
    rewriter.replaceOp(op, *result);
    return success();
  }
};

} // namespace

void tgc::populateViewPatterns(const LoweringContext &lowering, RewritePatternSet &patterns) {
  patterns.add<ReshapeLowering<ViewOp>, ReshapeLowering<SqueezeOp>, ReshapeLowering<UnsqueezeOp>,
               IdentityLowering<AliasOp>, IdentityLowering<DetachOp>, IdentityLowering<CloneOp>,
               IdentityLowering<GradHookOp>, PermuteLowering, TransposeLowering, ExpandLowering,
               ExtractLowering<SliceOp, false>, ExtractLowering<SelectOp, true>,
               ScatterLowering<SliceScatterOp, false>, ScatterLowering<SelectScatterOp, true>,
               CatLowering>(lowering, patterns.getContext());
}
